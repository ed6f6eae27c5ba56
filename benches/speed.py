#!/usr/bin/env python3
"""Side-by-side engine speed: this tree against another commit.

    python3 benches/speed.py                 # against 8bb8af4, 5 rounds
    python3 benches/speed.py --base HEAD~3 --rounds 9 benches/many-1000.toml
    python3 benches/speed.py --base A --head B     # two commits, this tree untouched

Builds the `run_scenario` example of both trees (the other commit is
exported with `git archive` into target/bench/, never checked out over this
one), then runs the two binaries alternately on each scenario, so machine
noise hits both alike. Reports forward+reverse bottleneck packets per
wall-second (the medians over rounds) and their ratio, with the lowest and
highest ratio of the paired rounds. Exits non-zero if a build or run fails.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SCENARIOS = [
    "scenarios/canonical.toml",
    "benches/many-10.toml",
    "benches/many-100.toml",
    "benches/many-1000.toml",
]
LINE = re.compile(r"wall ([0-9.]+) s, events (\d+) .*bottleneck packets (\d+)")


def build(tree: Path, target: Path) -> Path:
    env = dict(os.environ, CARGO_TARGET_DIR=str(target))
    subprocess.run(
        ["cargo", "build", "--quiet", "--release", "-p", "longfat-sim", "--example", "run_scenario"],
        cwd=tree,
        env=env,
        check=True,
    )
    return target / "release" / "examples" / "run_scenario"


def export(rev: str) -> Path:
    r = subprocess.run(
        ["git", "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"], cwd=ROOT, capture_output=True, text=True
    )
    if r.returncode != 0:
        raise SystemExit(f"error: --base/--head: {rev!r} is not a commit of this repository")
    sha = r.stdout.strip()
    dest = ROOT / "target" / "bench" / f"tree-{sha[:12]}"
    if not (dest / "Cargo.toml").exists():
        dest.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "archive", sha], cwd=ROOT, check=True, capture_output=True).stdout
        # -m: files get the extraction time, not the commit's, so cargo never
        # takes a stale build for fresh.
        subprocess.run(["tar", "-x", "-m", "-C", str(dest)], input=archive, check=True)
    return dest


def build_commit(rev: str) -> Path:
    """Builds `rev` in its own target directory (one per commit, so builds
    of different commits never mix)."""
    tree = export(rev)
    return build(tree, tree.parent / f"target-{tree.name.removeprefix('tree-')}")


def run(binary: Path, scenario: Path) -> tuple[float, int, int]:
    out = subprocess.run([str(binary), str(scenario)], check=True, capture_output=True, text=True).stdout
    m = LINE.search(out.splitlines()[-1])
    if not m:
        raise SystemExit(f"{binary}: unexpected output {out.splitlines()[-1]!r}")
    return float(m.group(1)), int(m.group(2)), int(m.group(3))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scenarios", nargs="*", default=DEFAULT_SCENARIOS)
    ap.add_argument("--base", default="8bb8af4", help="commit to compare against (default: 8bb8af4)")
    ap.add_argument("--head", help="commit to measure instead of this working tree")
    ap.add_argument("--rounds", type=int, default=5, help="alternating runs of each build per scenario (default: 5)")
    args = ap.parse_args()
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")

    print(f"building {args.head or 'this tree'} and {args.base} ...", file=sys.stderr)
    for rev in filter(None, (args.base, args.head)):
        export(rev)  # refuses a bad revision before anything is built
    head = build_commit(args.head) if args.head else build(ROOT, ROOT / "target")
    base = build_commit(args.base)

    rows = []
    for scen in args.scenarios:
        path = (ROOT / scen) if not Path(scen).is_absolute() else Path(scen)
        rates = {"base": [], "head": []}
        events = {}
        for r in range(args.rounds):
            for name, binary in (("base", base), ("head", head)) if r % 2 == 0 else (("head", head), ("base", base)):
                t0 = time.perf_counter()
                wall, ev, pkts = run(binary, path)
                rates[name].append(pkts / wall)
                events[name] = (ev, pkts)
                print(
                    f"  {Path(scen).stem} round {r + 1}/{args.rounds} {name}: {pkts / wall / 1e6:.2f} M pkt/s"
                    f" ({time.perf_counter() - t0:.1f} s)",
                    file=sys.stderr,
                )
        pair = [h / b for h, b in zip(rates["head"], rates["base"])]
        rows.append(
            (
                Path(scen).stem,
                statistics.median(rates["base"]),
                statistics.median(rates["head"]),
                statistics.median(rates["head"]) / statistics.median(rates["base"]),
                min(pair),
                max(pair),
                events["head"][0] / events["head"][1],
            )
        )

    print(f"\nbottleneck packets per wall-second (both directions), median of {args.rounds} alternating rounds")
    print(f"{'scenario':<14} {'base ' + args.base:>16} {(args.head or 'this tree'):>12} {'ratio':>7} {'min..max':>13} {'events/pkt':>11}")
    for name, b, h, ratio, lo, hi, epp in rows:
        print(f"{name:<14} {b / 1e6:>14.2f} M {h / 1e6:>10.2f} M {ratio:>6.2f}x {lo:>5.2f}..{hi:<5.2f}x {epp:>11.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
