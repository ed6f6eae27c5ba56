#!/usr/bin/env python3
"""Assembles docs/kernel/agreement.md from the `longfat testbed agree`
directories that scripts/kernel_agreement.sh writes (one per rate and
buffer): one table over every algorithm and path, the cwnd overlays, and
each run's faithfulness."""

from __future__ import annotations

import json
import platform
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

from longfat.runner import execute, prepare
from longfat.testbed.agree import GOODPUT_TOLERANCE, LOSS_FACTOR, TRANSPORT_DIFFERENCES, factor, metrics, relative


def fmt(x, scale=1.0, spec=".1f", suffix=""):
    if x is None or isinstance(x, str):
        return "-" if x is None else x
    return f"{x * scale:{spec}}{suffix}"


#: Why a row missed a target, from the measurements behind it (this
#: session's investigation; docs/testbed.md "Timing noise"). Keyed by
#: (path, algorithm); a missed row without an entry is reported as not
#: explained. Mechanisms shared by several rows are in MECHANISMS.
MECHANISMS = {
    "stalls": (
        "**Host timing noise.** The testbed's hosts share 2 CPUs. At 250 Mbit/s their packet processing keeps CPU 0 over "
        "80 % busy and the sender's ACK clock stalls for over 1 ms 22-76 times a second (up to 4-17 ms), after which the "
        "sender releases up to 81-304 packets at once; at 100 Mbit/s 7 stalls a second, none over 5 ms, at most 13 packets "
        "at once (docs/testbed.md \"Timing noise\", `scripts/testbed_ack_timing.py`). The simulator's ACK clock is exact."
    ),
    "bursts": (
        "**Bursts.** The loss episodes come about as often in the kernel as in the simulator (the fast recoveries of each "
        "row), but each costs more packets: the simulator's ACK clock overflows the full buffer by the window's last "
        "increase, about the same number of packets every episode, while a burst after an ACK stall (see *stalls*) "
        "overflows it by up to the burst. At 100 Mbit/s most episodes cost the kernel what they cost the simulator and a "
        "few cost many times more; at 250 Mbit/s most cost more."
    ),
    "tcpgt": (
        "**TCP-GT's margin.** TCP-GT decides each epoch from its duration at the receiver (TR) against the 10-epoch minimum RTT: an epoch counts "
        "as congested when TR exceeds that minimum by t rtt_base / rtt = 3.6 % (2.5 ms on 70 ms). Logged from the kernel "
        "program's own state on an idle machine (250 Mbit/s, 1 BDP, 25 s): it followed the simulator's cycle for 12 s "
        "(peaks of 1,539 and 1,518 packets at 6.0 and 9.3 s; the simulator's about 1,530 at 6 and 9.4 s), then took 14 "
        "decreases more than the simulator, in epochs whose receiver-side duration exceeded the sender-side one (equal in "
        "the simulator) by 1.4-2.2 ms, and ended at 951 packets. Under more load (the runs above) it leaves the "
        "simulator's path earlier. The difference is the host's timing, not the program: the differential tests hold "
        "its rules to the Rust controller's (docs/kernel.md)."
    ),
    "reno-slowstart": (
        "**Reno's slow start.** One event decides the whole window: both runs leave slow start with one loss episode (none follows in 30 s), "
        "the simulator with ssthresh 611 packets, the kernel with 939, and Reno then grows by one packet per RTT, so the "
        "1,750-packet path stays unfilled and the 5-30 s goodput follows that single value. The overshoot's size depends "
        "on the burst structure of slow start (the kernel's quick-ACK start, its ACK timing) that neither run repeats."
    ),
    "cubic-second-cut": (
        "**CUBIC's second cut.** The kernel cut twice on leaving slow start (ssthresh 836, then 591 at 0.9 s), the simulator once (856); CUBIC "
        "then grows from the lower W_max and both runs meet again at 21.5 s (peaks of 1,756 and 1,758 packets), so the "
        "goodput over 5-30 s differs by the first 16 s."
    ),
}
_BURSTS = ["bursts", "stalls"]
WHY: dict[tuple[str, str], list[str]] = {
    **{(p, "tcpgt"): ["tcpgt", "stalls"] for p in ("r100-q0.2", "r100-q1", "r250-q0.2", "r250-q1")},
    **{k: _BURSTS for k in (
        ("r100-q0.2", "cubic"), ("r100-q0.2", "ltcp"), ("r100-q0.2", "ehstcp"), ("r100-q0.2", "highspeed"), ("r100-q0.2", "scalable"),
        ("r100-q1", "cubic"),
        ("r250-q0.2", "ltcp"), ("r250-q0.2", "htcp"), ("r250-q0.2", "ehstcp"), ("r250-q0.2", "scalable"),
        ("r250-q1", "cubic"), ("r250-q1", "ltcp"), ("r250-q1", "htcp"),
        # fe58a8d's runs: as many loss episodes in both, more drops in a few
        # of the kernel's (ltcp: 5 and 5, one of 298 packets; highspeed: 6
        # and 5, medians 11 and 19; 4 and 4, medians 15 and 30)
        ("r100-q1", "ltcp"), ("r250-q0.2", "highspeed"), ("r250-q1", "highspeed"),
    )},
    ("r250-q0.2", "reno"): ["reno-slowstart"],
    ("r250-q0.2", "cubic"): ["cubic-second-cut", "bursts", "stalls"],
}


def episodes(run: Path, from_s: float) -> list[int]:
    """Bottleneck drops per loss episode over the measurement window: runs of
    samples with drops, apart by at most 0.5 s (both sides sample every
    100 ms; an episode lasts about one RTT)."""
    import pyarrow.parquet as pq

    l = pq.read_table(run / "links.parquet").to_pydict()
    names = l["link_name"]
    lid = l["link"][names.index("bottleneck")]
    out: list[list[float]] = []
    for t, link, d in zip(l["time_s"], l["link"], l["drops_overflow"]):
        if link != lid or t <= from_s + 1e-9 or d <= 0:
            continue
        if out and t - out[-1][0] <= 0.5:
            out[-1][0] = t
            out[-1][1] += d
        else:
            out.append([t, d])
    return [int(d) for _, d in out]


def decomposition(d: Path, r: dict) -> str:
    """The loss rate split into episodes and drops per episode, both sides."""
    from_s = json.loads((d / "sim" / r["algorithm"] / "summary.json").read_text())["measure_from_s"]

    def one(side: str, m: dict) -> str:
        e = episodes(d / side / r["algorithm"], from_s)
        rec = m.get("fast_recoveries")
        if not e:
            return f"no drops, {rec} fast recoveries"
        return f"{sum(e)} drops in {len(e)} episodes ({rec} fast recoveries), per episode median {statistics.median(e):g}, max {max(e)}"

    return f"simulator {one('sim', r['simulator'])}; kernel {one('testbed', r['testbed'])}"


def resimulate(d: Path, r: dict) -> None:
    """The row's simulator side from its stored scenario, with this
    simulator (deterministic: the same numbers unless the simulator's
    outputs changed since the runs, e.g. a summary key)."""
    spec = json.loads((d / "sim" / r["algorithm"] / "scenario.json").read_text())
    m = metrics(execute(*prepare(spec)))
    t = r["testbed"]
    r["simulator"] = m
    r["goodput_rel_diff"] = g = relative(t["goodput_bps"], m["goodput_bps"])
    r["loss_rate_factor"] = lf = factor(t["loss_rate"], m["loss_rate"])
    r["goodput_within_target"] = g is not None and abs(g) <= GOODPUT_TOLERANCE
    r["loss_within_target"] = lf is not None and lf <= LOSS_FACTOR


def main(runs: Path, out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    lines = ["# The kernel against the simulator", ""]
    lines.append(
        f"`scripts/kernel_agreement.sh` (commit {commit}; Linux {platform.release()}, {subprocess.run(['nproc'], capture_output=True, text=True).stdout.strip()} cores): "
        "`longfat testbed agree` on `kernel/agree` (one flow alone, 70 ms RTT, 30 s, measured from 5 s) for each path. "
        f"Targets (issue 15): goodput within {GOODPUT_TOLERANCE:.0%}, bottleneck loss rate within a factor {LOSS_FACTOR:g}. "
        'The simulator runs `tcp.profile = "linux"` with delayed ACKs and 52-byte headers, and for each BPF program the controller '
        "the program implements (its defaults, `kernel_program_params` in `testbed/agree.py`: every parameter whose `linux` default differs set to the controller's own; not the profile's tcp_highspeed and "
        "tcp_htcp variants); the testbed, the kernel's TCP with longfat's BPF programs (and the kernel's own reno, cubic and bbr)."
    )
    lines.append("")
    lines.append("| path | algorithm | goodput sim / kernel (Mbit/s) | diff | loss rate sim / kernel | factor | drops sim / kernel | fast recoveries sim / kernel | mean queue sim / kernel (pkts) | targets | testbed faithful |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|")
    met = total = faithful = met_faithful = 0
    figures = []
    misses = []
    for d in sorted(p for p in runs.iterdir() if (p / "agreement.json").exists()):
        data = json.loads((d / "agreement.json").read_text())
        for r in data["rows"]:
            if isinstance(r.get("loss_rate_factor"), str):  # "inf" in JSON
                r["loss_rate_factor"] = float(r["loss_rate_factor"])
            resimulate(d, r)
            s, t = r["simulator"], r["testbed"]
            ok = r["goodput_within_target"] and r["loss_within_target"]
            met += ok
            total += 1
            tm = r.get("testbed_meta") or {}
            faithful += tm.get("faithful", True)
            met_faithful += ok and tm.get("faithful", True)
            why = "" if tm.get("faithful", True) else " (" + "; ".join(tm.get("unfaithful_because") or []) + ")"
            lines.append(
                f"| {d.name} | {r['algorithm']} | {fmt(s['goodput_bps'], 1e-6)} / {fmt(t['goodput_bps'], 1e-6)} | {fmt(r['goodput_rel_diff'], 100, '+.1f', ' %')} "
                f"| {fmt(s['loss_rate'], 1, '.2e')} / {fmt(t['loss_rate'], 1, '.2e')} | {fmt(r['loss_rate_factor'], 1, '.2f')} "
                f"| {fmt(s.get('drops'), 1, 'd')} / {fmt(t.get('drops'), 1, 'd')} | {fmt(s.get('fast_recoveries'), 1, 'd')} / {fmt(t.get('fast_recoveries'), 1, 'd')} "
                f"| {fmt(s['mean_queue_pkts'], 1, '.0f')} / {fmt(t['mean_queue_pkts'], 1, '.0f')} "
                f"| {'met' if ok else ('goodput ' if not r['goodput_within_target'] else '') + ('loss ' if not r['loss_within_target'] else '') + 'missed'} "
                f"| {'yes' if tm.get('faithful', True) else 'no'}{why} |"
            )
            if not ok:
                misses.append((d.name, r))
            png = d / f"{r['algorithm']}.png"
            if png.exists():
                name = f"{d.name}-{r['algorithm']}.png"
                shutil.copyfile(png, out / name)
                figures.append((d.name, r["algorithm"], name))
    checked = (
        "every testbed run passed the testbed's own checks (delay line on time, no drops in front of it)"
        if faithful == total
        else f"{met_faithful} of the {faithful} rows whose testbed run passed the testbed's own checks; "
        f"the testbed flagged the other {total - faithful} runs (delay line late: the machine was busy; or drops in front "
        "of the delay line), whose kernel numbers carry that host noise (last column)"
    )
    lines.insert(4, f"Both targets met in {met} of {total} rows ({checked}).")
    lines.insert(5, "")
    lines.append("")
    lines.append("Paths: `r<rate in Mbit/s>-q<buffer in BDP>`. Loss rate: bottleneck drops / packets offered over the measurement window. "
                 "A row whose testbed run was not faithful (the delay line late, drops in front of it, a busy machine) says so.")
    lines.append("")
    lines.append("## Why each miss")
    lines.append("")
    used = [k for k in MECHANISMS if any(k in (WHY.get((p, r["algorithm"])) or []) for p, r in misses)]
    if used:
        lines.append("The mechanisms, then each missed row with its numbers and the mechanisms behind it:")
        lines.append("")
        for k in used:
            lines.append(f"- *{k}*: {MECHANISMS[k]}")
        lines.append("")
    unexplained = 0
    for path, r in misses:
        s_, t_ = r["simulator"], r["testbed"]
        keys = WHY.get((path, r["algorithm"]))
        what = []
        if not r["goodput_within_target"]:
            what.append(f"goodput {fmt(r['goodput_rel_diff'], 100, '+.1f', ' %')}")
        if not r["loss_within_target"]:
            what.append(f"loss rate factor {fmt(r['loss_rate_factor'], 1, '.2f')}")
        lines.append(f"- **{path} {r['algorithm']}** ({', '.join(what)}; {decomposition(runs / path, r)}): "
                     + (", ".join(f"*{k}*" for k in keys) if keys else "**not explained.**"))
        unexplained += not keys
    if not misses:
        lines.append("No row missed a target.")
    lines.append("")
    lines.append("## Transport differences that remain")
    lines.append("")
    lines.extend(f"- {x}" for x in TRANSPORT_DIFFERENCES)
    lines.append("")
    lines.append("## Window trajectories (simulator and kernel)")
    lines.append("")
    for path, algo, name in figures:
        lines.append(f"![{path} {algo}]({name})")
    (out / "agreement.md").write_text("\n".join(lines) + "\n")
    print(f"wrote {out / 'agreement.md'}: targets met in {met} of {total} rows" + (f"; {unexplained} missed rows not explained" if unexplained else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))
