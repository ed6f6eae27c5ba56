#!/usr/bin/env bash
# Sets up everything longfat needs in this clone: checks the Rust toolchain,
# makes .venv, and builds and installs the Python package (Rust core included).
set -euo pipefail
cd "$(dirname "$0")/.."

export PATH="$HOME/.cargo/bin:$PATH"
if ! command -v cargo >/dev/null 2>&1; then
    echo "setup: cargo not found; installing Debian's Rust toolchain" >&2
    apt-get update -qq && apt-get install -y -qq cargo rustc >/dev/null
fi
PY=${PYTHON:-python3}
if ! "$PY" -c 'import sys; assert sys.version_info >= (3, 11)' 2>/dev/null; then
    echo "setup: longfat needs Python >= 3.11 (found: $("$PY" --version 2>&1))" >&2
    exit 1
fi
if [ ! -x .venv/bin/python ]; then
    if ! "$PY" -m venv .venv 2>/dev/null; then
        echo "setup: installing python3-venv" >&2
        apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null
        "$PY" -m venv .venv
    fi
fi
# The kernel path (crates/longfat-kernel): clang-19 and bpftool build the BPF
# congestion controls against this kernel's BTF, iperf3 and iproute2 drive the
# testbed. Without them longfat still builds, only without the BPF programs.
if command -v dpkg-query >/dev/null 2>&1; then
    missing=""
    for p in clang-19 llvm-19 libbpf-dev bpftool libelf-dev zlib1g-dev pkg-config iperf3 iproute2 iputils-ping; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
    done
    if [ -n "$missing" ]; then
        if [ "$(id -u)" = 0 ]; then
            echo "setup: installing the kernel path's packages:$missing" >&2
            apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
        else
            echo "setup: not root, so not installing$missing (the BPF programs will not be built)" >&2
        fi
    fi
fi
# notebook: pandas and the Jupyter kernel the notebook tests execute docs/notebooks with;
# gym: gymnasium for longfat.gym's tests.
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[test,notebook,gym]'
