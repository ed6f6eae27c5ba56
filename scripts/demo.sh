#!/usr/bin/env bash
# Sets everything up, then runs the headline scenario: four Reno flows on a
# 1 Gbit/s, 70 ms dumbbell. Writes results/dumbbell_reno/ (Parquet, summary
# JSON, plot.png) and prints the summary table.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/longfat run scenarios/dumbbell_reno.toml "$@"
