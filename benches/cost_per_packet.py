#!/usr/bin/env python3
"""Cost per bottleneck packet of pacing, BBR and AQM (issue 33, goal 3).

    python3 benches/cost_per_packet.py                    # CPU time, 5 alternating rounds, this tree
    python3 benches/cost_per_packet.py --callgrind        # instructions (valgrind), 20 s runs
    python3 benches/cost_per_packet.py --base HEAD~3      # the same for another commit, side by side
    python3 benches/cost_per_packet.py --base-bin OLD/run_scenario --bin NEW/run_scenario
    python3 benches/cost_per_packet.py --only reno cubic_paced

Runs one `run_scenario` binary on the matched scenarios `benches/cost_*.toml`
(one path, 100 Mbit/s x 20 ms, 1 BDP of buffer, every packet ACKed, so a
data packet and its ACK are two bottleneck packets in every file) and
reports what each costs per bottleneck packet (both directions, as
`run_scenario` counts them), and the ratios the issue sets targets for:

    paced CUBIC (linux profile) / unpaced Reno     <= 1.3
    BBR (linux profile)         / unpaced Reno     <= 1.3
    FQ-CoDel / DropTail, 1 and 10 CUBIC flows      <= 1.2

Unpaced Reno is given under both profiles: `rfc` (the canonical run's) and
`linux` (the profile the CUBIC and BBR rows run; its RACK, TLP and PRR cost
per packet whatever the controller).

CPU time (user + system of the whole process, from wait4) is measured in
rounds; each round runs every scenario once, in an order reversed every
other round, so machine noise falls alike on the two sides of a ratio. A
ratio is the median over rounds of the per-round ratios, with their lowest
and highest. `--callgrind` counts instructions instead (one run each,
exact and load-independent; the run cut to `--duration`). With `--base
REV` the other commit is built as benches/speed.py builds it and both
binaries run in every round, alternately.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from speed import ROOT, build, build_commit, export  # noqa: E402

SCENARIOS = [
    "reno",
    "reno_linux",
    "reno_paced",
    "cubic",
    "cubic_paced",
    "bbr",
    "droptail_1",
    "fqcodel_1",
    "droptail_10",
    "fqcodel_10",
]
# (numerator, denominator, target or None)
RATIOS = [
    ("cubic_paced", "reno", 1.3),
    ("cubic_paced", "reno_linux", 1.3),
    ("bbr", "reno", 1.3),
    ("bbr", "reno_linux", 1.3),
    ("fqcodel_1", "droptail_1", 1.2),
    ("fqcodel_10", "droptail_10", 1.2),
    ("reno_linux", "reno", None),
    ("reno_paced", "reno", None),
    ("cubic", "reno_linux", None),
    ("cubic_paced", "cubic", None),
]
LINE = re.compile(r"wall ([0-9.]+) s, events (\d+) .*bottleneck packets (\d+)")


def scenario_file(name: str, duration: str | None, tmp: Path) -> Path:
    path = ROOT / "benches" / f"cost_{name}.toml"
    if duration is None:
        return path
    text, n = re.subn(r'(?m)^duration = ".*"$', f'duration = "{duration}"', path.read_text())
    if n != 1:
        raise SystemExit(f"{path}: no single duration line to override")
    out = tmp / path.name
    out.write_text(text)
    return out


def parse(out: str, what: str) -> tuple[int, int]:
    m = LINE.search(out.splitlines()[-1] if out else "")
    if not m:
        raise SystemExit(f"{what}: unexpected output {out[-200:]!r}")
    return int(m.group(2)), int(m.group(3))


def run_cpu(binary: Path, scenario: Path) -> tuple[float, int, int]:
    """CPU seconds (user + system) of one whole run, events, bottleneck packets."""
    with tempfile.TemporaryFile() as f:
        proc = subprocess.Popen([str(binary), str(scenario)], stdout=f, stderr=subprocess.DEVNULL)
        _, status, ru = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            raise SystemExit(f"{binary} {scenario}: exit {proc.returncode}")
        f.seek(0)
        events, pkts = parse(f.read().decode(), f"{binary} {scenario}")
    return ru.ru_utime + ru.ru_stime, events, pkts


def run_callgrind(binary: Path, scenario: Path, tmp: Path) -> tuple[int, int, int]:
    """Instructions of one whole run (callgrind), events, bottleneck packets."""
    cg = tmp / f"cg.{scenario.stem}.{os.getpid()}"
    r = subprocess.run(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={cg}", str(binary), str(scenario)],
        capture_output=True,
        text=True,
    )
    if r.returncode != 0:
        raise SystemExit(f"valgrind {binary} {scenario}: exit {r.returncode}\n{r.stderr[-2000:]}")
    events, pkts = parse(r.stdout, f"{binary} {scenario}")
    m = re.search(r"(?m)^summary: (\d+)", cg.read_text())
    cg.unlink()
    if not m:
        raise SystemExit(f"{cg}: no summary line")
    return int(m.group(1)), events, pkts


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5, help="alternating rounds of CPU timing (default: 5)")
    ap.add_argument("--callgrind", action="store_true", help="count instructions with valgrind instead of timing")
    ap.add_argument("--duration", help="cut every run to this simulated duration (default: 60s; 20s with --callgrind)")
    ap.add_argument("--base", help="also measure this commit, side by side")
    ap.add_argument("--bin", type=Path, help="measure this run_scenario binary instead of building this tree")
    ap.add_argument("--base-bin", type=Path, help="also measure this run_scenario binary, side by side (as --base)")
    ap.add_argument("--only", nargs="+", choices=SCENARIOS, help="run only these scenarios")
    args = ap.parse_args()
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")
    duration = args.duration or ("20s" if args.callgrind else None)
    names = args.only or SCENARIOS

    builds: dict[str, Path] = {}
    if args.base and args.base_bin:
        ap.error("--base and --base-bin exclude each other")
    if args.base:
        export(args.base)
    builds["head"] = args.bin or build(ROOT, ROOT / "target")
    if args.base:
        builds["base"] = build_commit(args.base)
    elif args.base_bin:
        builds["base"] = args.base_bin

    # cost[build][scenario] -> list over rounds of cost per packet
    cost: dict[str, dict[str, list[float]]] = {b: {s: [] for s in names} for b in builds}
    counts: dict[str, dict[str, tuple[int, int]]] = {b: {} for b in builds}
    unit = "instructions" if args.callgrind else "ns CPU"
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        files = {s: scenario_file(s, duration, tmp) for s in names}
        rounds = 1 if args.callgrind else args.rounds
        for r in range(rounds):
            order = names if r % 2 == 0 else names[::-1]
            for s in order:
                bs = list(builds.items())
                for bname, binary in bs if (r + names.index(s)) % 2 == 0 else bs[::-1]:
                    if args.callgrind:
                        x, ev, pkts = run_callgrind(binary, files[s], tmp)
                    else:
                        secs, ev, pkts = run_cpu(binary, files[s])
                        x = secs * 1e9
                    if counts[bname].setdefault(s, (ev, pkts)) != (ev, pkts):
                        raise SystemExit(f"{bname} {s}: events/packets changed between rounds")
                    cost[bname][s].append(x / pkts)
                    print(
                        f"  round {r + 1}/{rounds} {bname} {s}: {x / pkts:.1f} {unit} per packet ({pkts} packets)",
                        file=sys.stderr,
                    )
    if "base" in builds and counts["head"] != counts["base"]:
        differ = [s for s in names if counts["head"][s] != counts["base"][s]]
        print(f"warning: events or packets differ between the builds on {differ}", file=sys.stderr)

    what = f"callgrind, {duration} runs" if args.callgrind else f"median of {rounds} alternating rounds, {duration or '60s'} runs"
    print(f"\ncost per bottleneck packet (both directions), {unit}; {what}")
    hdr = f"{'scenario':<13} {'packets':>9} {'events/pkt':>10}" + "".join(f" {b:>10}" for b in builds)
    if "base" in builds:
        hdr += f" {'head/base':>10}"
    print(hdr)
    for s in names:
        ev, pkts = counts["head"][s]
        line = f"{s:<13} {pkts:>9} {ev / pkts:>10.2f}" + "".join(f" {statistics.median(cost[b][s]):>10.1f}" for b in builds)
        if "base" in builds:
            line += f" {statistics.median(cost['head'][s]) / statistics.median(cost['base'][s]):>9.3f}x"
        print(line)

    print("\nratios (per round: median, lowest..highest)")
    for num, den, target in RATIOS:
        if num not in names or den not in names:
            continue
        cells = []
        for b in builds:
            per_round = [n / d for n, d in zip(cost[b][num], cost[b][den])]
            med = statistics.median(per_round)
            ok = "" if target is None else (" ok" if med <= target else " OVER")
            cells.append(f"{b} {med:.3f}x ({min(per_round):.3f}..{max(per_round):.3f}){ok}")
        tgt = f"target <= {target}" if target else "(for reference)"
        print(f"{num + ' / ' + den:<26} {tgt:<16} " + "   ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
