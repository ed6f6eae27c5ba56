#!/usr/bin/env bash
# Regenerates docs/kernel/agreement.md: `longfat testbed agree` on the
# scenario kernel/agree (one flow, 70 ms) at 100 and 250 Mbit/s with 1 and
# 0.2 BDP of buffer, for the kernel's reno, cubic and bbr and every BPF algorithm.
# As root, on an otherwise idle machine (the testbed flags busy runs); about
# 20 minutes. Runs go to results/kernel-agreement/, the report and its
# figures to docs/kernel/.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${CC:-}" ]; then
    # every BPF algorithm of this build (kernel/<name>.bpf.c), as `longfat kernel list`
    BPF=$(.venv/bin/python -c 'from longfat import kernel; print(",".join(a for a, _ in kernel.built()))')
    [ -n "$BPF" ] || { echo "no BPF programs in this build: see longfat kernel list" >&2; exit 1; }
    CC=reno,cubic,bbr,$BPF
fi
OUT=results/kernel-agreement
mkdir -p "$OUT"
for rate in 100 250; do
    for q in 1 0.2; do
        .venv/bin/longfat testbed agree kernel/agree --cc "$CC" --force \
            --set "network.bottleneck.rate=\"${rate}Mbps\"" --set "network.bottleneck.queue=\"${q}bdp\"" \
            --out "$OUT/r${rate}-q${q}"
    done
done
.venv/bin/python scripts/kernel_agreement_report.py "$OUT" docs/kernel
