#!/usr/bin/env bash
# Sets everything up, then runs every test: Rust (unit, property, whole-run)
# and Python (API, CLI, files).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="$HOME/.cargo/bin:$PATH"
cargo test --workspace --release
# Debug too: overflow checks and debug assertions on (a validated scenario
# must never trip one).
cargo test --workspace
.venv/bin/python -m pytest -q
