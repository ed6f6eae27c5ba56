#!/usr/bin/env bash
# Sets everything up, then runs every test: Rust (unit, property, whole-run)
# and Python (API, CLI, files).
set -euo pipefail
cd "$(dirname "$0")/.."
# Each stage's wall time, printed last (also on failure) so that CI's tail
# shows where the 30 minutes went.
STAGES=""
stage_start=$SECONDS
stage() { STAGES="$STAGES $1 $((SECONDS - stage_start))s,"; stage_start=$SECONDS; }
trap 'echo "test: stage times:${STAGES%,} (total ${SECONDS}s)" >&2' EXIT
bash scripts/setup.sh
stage setup
# maturin (setup.sh's editable install; tests/test_wheel.py's wheel) gives
# pyo3 the interpreter's configuration in a file, PYO3_CONFIG_FILE, and
# pyo3's build script reruns whenever that variable changes: cargo without
# it and maturin with it rebuilt pyo3-ffi, pyo3, numpy and longfat-py in
# release by turns (in cargo-release, then in the wheel's build). cargo gets
# the file maturin wrote, for the venv's Python.
target_dir="${CARGO_TARGET_DIR:-target}"
case "$target_dir" in /*) ;; *) target_dir="$PWD/$target_dir" ;; esac
py_version="$(.venv/bin/python -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
for f in "$target_dir"/maturin/pyo3-config-*-"$py_version"-abi3.txt; do
    if [ -f "$f" ]; then export PYO3_CONFIG_FILE="$f"; fi
done
# The browser checks (tests/browser.py) need headless Chromium: Debian's
# package, never Playwright's own download. LONGFAT_REQUIRE_BROWSER (on
# unless set empty) makes a missing browser fail them instead of skipping.
export LONGFAT_REQUIRE_BROWSER="${LONGFAT_REQUIRE_BROWSER-1}"
if [ ! -x /usr/bin/chromium ] && [ -z "${LONGFAT_CHROMIUM:-}" ]; then
    if [ "$(id -u)" = 0 ]; then
        echo "test: installing chromium for the browser checks" >&2
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    elif [ -n "$LONGFAT_REQUIRE_BROWSER" ]; then
        echo "test: the browser checks need /usr/bin/chromium: run 'apt-get install chromium' as root," \
            "set LONGFAT_CHROMIUM to a Chromium binary, or LONGFAT_REQUIRE_BROWSER= to skip them" >&2
        exit 1
    else
        echo "test: no chromium; the browser checks will be skipped" >&2
    fi
fi
stage browser-install
# The packet-capture checks (tests/test_pcap.py) read the captures with
# Debian's tshark and tcptrace. LONGFAT_REQUIRE_PCAP_TOOLS (on unless set
# empty) makes missing tools fail them instead of skipping. tshark's
# package asks whether non-root users may capture: answered "no" up front.
export LONGFAT_REQUIRE_PCAP_TOOLS="${LONGFAT_REQUIRE_PCAP_TOOLS-1}"
if ! command -v tshark >/dev/null || ! command -v tcptrace >/dev/null; then
    if [ "$(id -u)" = 0 ]; then
        echo "test: installing tshark and tcptrace for the packet-capture checks" >&2
        echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tshark tcptrace >/dev/null
    elif [ -n "$LONGFAT_REQUIRE_PCAP_TOOLS" ]; then
        echo "test: the packet-capture checks need tshark and tcptrace: run 'apt-get install tshark tcptrace'" \
            "as root, or set LONGFAT_REQUIRE_PCAP_TOOLS= to skip them" >&2
        exit 1
    else
        echo "test: no tshark or tcptrace; the packet-capture checks will be skipped" >&2
    fi
fi
stage pcap-tools-install
export PATH="$HOME/.cargo/bin:$PATH"
cargo test --workspace --release
stage "cargo-release"
# Debug too: overflow checks and debug assertions on (a validated scenario
# must never trip one).
cargo test --workspace
stage "cargo-debug"
# The kernel's own check that each BPF program computes what the userspace
# build of the same C computes (needs root to run BPF programs; skipped
# with its reason otherwise). --workspace, not -p longfat-kernel: the test
# binary is then the one cargo-release built (with -p, features resolve for
# longfat-kernel alone and longfat-cc and longfat-kernel compile again, ~60 s).
if [ "$(id -u)" = 0 ]; then
    cargo test --workspace --release --test kernel -- --ignored bpf_equals_userspace::
else
    echo "test: not root: skipping bpf_equals_userspace (runs the BPF programs in the kernel)" >&2
fi
stage bpf
# The BPF programs inside Debian's LTS kernels (6.1, 6.12) under QEMU
# (scripts/lts-kernels.sh; it prints SKIPPED and why where QEMU or the
# kernel download cannot run). Debian's QEMU without recommends (SeaBIOS
# and the PVH option ROM are dependencies), xz for the kernels' modules
# and 6.1's kernel, zstd for 6.12's (else its bzImage boots, 6-7 s slower);
# busybox-static is downloaded, not installed, and the guest's tc comes
# from iproute2 (setup.sh). A failed install leaves the check to skip.
if [ "$(id -u)" = 0 ]; then
    missing=
    for p in qemu-system-x86_64:qemu-system-x86 xz:xz-utils zstd:zstd; do
        command -v "${p%%:*}" >/dev/null || missing="$missing ${p#*:}"
    done
    if [ -n "$missing" ]; then
        echo "test: installing$missing for the LTS kernel checks" >&2
        if ! (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null); then
            echo "test: could not install$missing: the LTS kernel checks may skip" >&2
        fi
    fi
    cargo test --workspace --release --test kernel -- --ignored lts_kernels:: --nocapture
else
    echo "test: not root: skipping lts_kernels (boots Debian's LTS kernels under QEMU)" >&2
fi
stage lts-kernels
# pytest in two parts (tests/conftest.py): first every test not marked
# exclusive, on two pytest-xdist workers, a module's tests on one worker in
# their order (--dist loadfile: module-scoped fixtures such as the wheel's
# build are made once; --dist loadgroup would not do: pytest 9.2 ignores
# the nodeid pytest-xdist 3.8 rewrites for its groups); then the exclusive
# ones (real-time TCP in the kernel and on the namespace testbed, held to the
# simulator's throughput; the fuzz harness's time limits) on their own, so
# that nothing competes with them for the CPU. Both parts always run; the
# stage fails if either did.
pytest_status=0
.venv/bin/python -m pytest -q -rs --durations=12 -n 2 --dist loadfile -m "not exclusive" || pytest_status=$?
stage pytest-parallel
.venv/bin/python -m pytest -q -rs --durations=12 -m exclusive || pytest_status=$?
stage pytest-exclusive
[ "$pytest_status" = 0 ] || exit "$pytest_status"
# The packetdrill suite's counts per profile, for CI's tail. pytest
# (tests/test_conformance.py) is what holds them to docs/conformance.md;
# rfc and ns2 are not expected to pass (exit status 1), so only the counts.
for profile in linux rfc ns2; do
    (.venv/bin/longfat conformance --profile "$profile" || true) | tail -n 1
done
stage conformance
