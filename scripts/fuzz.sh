#!/usr/bin/env bash
# The robustness campaign (docs/robustness.md). Sets up, then feeds
# generated and mutated scenarios to longfat and fails on any panic,
# traceback, hang or memory blow-up:
#   1. Rust, wide:  RUST_INPUTS (default 1,000,000) inputs through the
#      scenario parser, validator, builder and the first 1,000 events of
#      every accepted run, built with overflow checks and debug assertions.
#   2. Rust, deep:  DEEP_INPUTS (default 20,000) inputs, each accepted run
#      taken to 200,000 events.
#   3. Python:      PY_INPUTS (default 50,000) inputs through the front end
#      (load, --set overrides, [reproduce] tables, prepare, a bounded run and
#      the result tables), plus CLI_INPUTS (default 1,000) through the real
#      command line.
# Findings (inputs, with what happened) go to FINDINGS (default
# ./fuzz-findings); add each new one, minimized, to tests/corpus/.
# Usage: scripts/fuzz.sh [SEED]     (JOBS=n to set the worker count)
set -euo pipefail
cd "$(dirname "$0")/.."
SEED=${1:-1}
JOBS=${JOBS:-$(nproc)}
RUST_INPUTS=${RUST_INPUTS:-1000000}
DEEP_INPUTS=${DEEP_INPUTS:-20000}
PY_INPUTS=${PY_INPUTS:-50000}
CLI_INPUTS=${CLI_INPUTS:-1000}
FINDINGS=${FINDINGS:-fuzz-findings}

bash scripts/setup.sh
export PATH="$HOME/.cargo/bin:$PATH"
cargo build -q -p longfat-fuzz --profile fuzz
FUZZ=target/fuzz/longfat-fuzz
start=$(date +%s)
status=0
echo "== 1/3 Rust, wide: $RUST_INPUTS inputs, 1,000 events each"
"$FUZZ" --inputs "$RUST_INPUTS" --seed "$SEED" --jobs "$JOBS" --max-events 1000 --findings "$FINDINGS/rust-wide" --progress 60 || status=1
echo "== 2/3 Rust, deep: $DEEP_INPUTS inputs, 200,000 events each"
"$FUZZ" --inputs "$DEEP_INPUTS" --seed "$((SEED + 1000))" --jobs "$JOBS" --max-events 200000 --findings "$FINDINGS/rust-deep" --progress 60 || status=1
echo "== 3/3 Python front end: $PY_INPUTS inputs, $CLI_INPUTS through the command line"
.venv/bin/python scripts/fuzz_py.py --seed "$SEED" --inputs "$PY_INPUTS" --jobs "$JOBS" --cli "$CLI_INPUTS" --findings "$FINDINGS/py" || status=1
echo "== campaign: $((RUST_INPUTS + DEEP_INPUTS + PY_INPUTS + CLI_INPUTS)) inputs in $(( $(date +%s) - start )) s; $([ $status = 0 ] && echo 'no findings' || echo "FINDINGS in $FINDINGS")"
exit $status
