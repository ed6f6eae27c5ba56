#!/usr/bin/env bash
# Sets everything up, then runs the headline comparison: Reno, LTCP and H-TCP
# each alone on a 1 Gbit/s, 70 ms dumbbell with a BDP buffer (300 s simulated
# each). Prints their utilization side by side and writes
# results/headline-compare/ (comparison.png: cwnd, goodput and queue over time).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# --force: a second run replaces the first one's results/headline-compare/
# (a longfat result; anything else there would be refused).
.venv/bin/longfat compare scenarios/headline.toml --cc reno,ltcp,htcp --force "$@"
