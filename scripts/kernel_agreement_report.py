#!/usr/bin/env python3
"""Assembles docs/kernel/agreement.md from the `longfat testbed agree`
directories that scripts/kernel_agreement.sh writes (one per rate and
buffer): one table over every algorithm and path, the cwnd overlays, and
each run's faithfulness."""

from __future__ import annotations

import json
import platform
import shutil
import subprocess
import sys
from pathlib import Path

from longfat.testbed_agree import GOODPUT_TOLERANCE, LOSS_FACTOR, TRANSPORT_DIFFERENCES


def fmt(x, scale=1.0, spec=".1f", suffix=""):
    if x is None or isinstance(x, str):
        return "-" if x is None else x
    return f"{x * scale:{spec}}{suffix}"


def main(runs: Path, out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    lines = ["# The kernel against the simulator", ""]
    lines.append(
        f"`scripts/kernel_agreement.sh` (commit {commit}; Linux {platform.release()}, {subprocess.run(['nproc'], capture_output=True, text=True).stdout.strip()} cores): "
        "`longfat testbed agree` on `kernel/agree` (one flow alone, 70 ms RTT, 30 s, measured from 5 s) for each path. "
        f"Targets (issue 15): goodput within {GOODPUT_TOLERANCE:.0%}, bottleneck loss rate within a factor {LOSS_FACTOR:g}. "
        'The simulator runs `tcp.profile = "linux"` with delayed ACKs and 52-byte headers; the testbed, the kernel\'s TCP with '
        "longfat's BPF programs (and the kernel's own reno and cubic)."
    )
    lines.append("")
    lines.append("| path | algorithm | goodput sim / kernel (Mbit/s) | diff | loss rate sim / kernel | factor | drops sim / kernel | fast recoveries sim / kernel | mean queue sim / kernel (pkts) | targets | testbed faithful |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|")
    met = total = 0
    figures = []
    for d in sorted(p for p in runs.iterdir() if (p / "agreement.json").exists()):
        data = json.loads((d / "agreement.json").read_text())
        for r in data["rows"]:
            s, t = r["simulator"], r["testbed"]
            ok = r["goodput_within_target"] and r["loss_within_target"]
            met += ok
            total += 1
            tm = r.get("testbed_meta") or {}
            why = "" if tm.get("faithful", True) else " (" + "; ".join(tm.get("unfaithful_because") or []) + ")"
            lines.append(
                f"| {d.name} | {r['algorithm']} | {fmt(s['goodput_bps'], 1e-6)} / {fmt(t['goodput_bps'], 1e-6)} | {fmt(r['goodput_rel_diff'], 100, '+.1f', ' %')} "
                f"| {fmt(s['loss_rate'], 1, '.2e')} / {fmt(t['loss_rate'], 1, '.2e')} | {fmt(r['loss_rate_factor'], 1, '.2f')} "
                f"| {fmt(s.get('drops'), 1, 'd')} / {fmt(t.get('drops'), 1, 'd')} | {fmt(s.get('fast_recoveries'), 1, 'd')} / {fmt(t.get('fast_recoveries'), 1, 'd')} "
                f"| {fmt(s['mean_queue_pkts'], 1, '.0f')} / {fmt(t['mean_queue_pkts'], 1, '.0f')} "
                f"| {'met' if ok else ('goodput ' if not r['goodput_within_target'] else '') + ('loss ' if not r['loss_within_target'] else '') + 'missed'} "
                f"| {'yes' if tm.get('faithful', True) else 'no'}{why} |"
            )
            png = d / f"{r['algorithm']}.png"
            if png.exists():
                name = f"{d.name}-{r['algorithm']}.png"
                shutil.copyfile(png, out / name)
                figures.append((d.name, r["algorithm"], name))
    lines.insert(4, f"Both targets met in {met} of {total} rows.")
    lines.insert(5, "")
    lines.append("")
    lines.append("Paths: `r<rate in Mbit/s>-q<buffer in BDP>`. Loss rate: bottleneck drops / packets offered over the measurement window. "
                 "A row whose testbed run was not faithful (the delay line late, drops in front of it, a busy machine) says so.")
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
    print(f"wrote {out / 'agreement.md'}: targets met in {met} of {total} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))
