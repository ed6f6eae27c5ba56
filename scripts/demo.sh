#!/usr/bin/env bash
# Sets everything up, then runs the headline comparison: the five papers'
# algorithms (LTCP, H-TCP, eHSTCP, TCP-GT, PLT) with Reno, CUBIC and BBR, each alone
# on a 1 Gbit/s, 70 ms dumbbell with a BDP buffer (300 s simulated each), then
# the same with 0.01 % random loss, where they differ most. Prints each
# comparison's table (with one line on what each algorithm does differently)
# and writes results/headline-compare/ and results/headline-lossy-compare/
# (comparison.png: cwnd, goodput and queue over time).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
ALGOS=reno,cubic,bbr,ltcp,htcp,ehstcp,tcpgt,plt
# --force: a second run replaces the first one's results (longfat results;
# anything else there would be refused).
.venv/bin/longfat compare scenarios/headline.toml --cc "$ALGOS" --force "$@"
.venv/bin/longfat compare scenarios/headline.toml --cc "$ALGOS" --force \
    --set network.bottleneck.loss=0.0001 --out results/headline-lossy-compare "$@"
