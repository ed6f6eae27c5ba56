"""The BPF congestion controls on this machine's kernel: each program passes
the verifier, registers as longfat_<name>, carries a loopback TCP transfer
(the socket really uses it and its window moves), loads idempotently and
unloads without a trace.

The tests that touch the kernel need root, BTF and BPF struct_ops; where one
is missing they are skipped with the reason, never passed.
"""

from __future__ import annotations

import os
import shutil
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from longfat import kernel
from tests.conftest import longfat_cli

AVAILABLE = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")
TCP_CONGESTION = getattr(socket, "TCP_CONGESTION", 13)
TCP_INFO = getattr(socket, "TCP_INFO", 11)
MB = 1 << 20


def _kernel_unavailable() -> str | None:
    """Why the kernel tests cannot run here, or None."""
    reason = kernel.not_built_reason()
    if reason:
        return f"BPF programs not built: {reason}"
    if os.geteuid() != 0:
        return "not root: loading BPF struct_ops needs root"
    if not Path("/sys/kernel/btf/vmlinux").exists():
        return "no kernel BTF (/sys/kernel/btf/vmlinux)"
    try:
        probe = subprocess.run(["bpftool", "feature", "probe", "kernel"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"cannot probe BPF features with bpftool: {e}"
    if "map_type struct_ops is available" not in probe.stdout:
        return "the kernel has no BPF struct_ops map type"
    return None


UNAVAILABLE = _kernel_unavailable()
needs_kernel = pytest.mark.skipif(UNAVAILABLE is not None, reason=UNAVAILABLE or "")
ALGOS = kernel.built() or [("none", "none")]


def registered() -> list[str]:
    return AVAILABLE.read_text().split()


@pytest.fixture
def loaded_cleanup():
    """Unloads every longfat program after the test, whatever happened."""
    yield
    if kernel.built():
        try:
            kernel.unload(["all"])
        except kernel.KernelError:
            pass


def tcp_info_cwnd(sock: socket.socket) -> tuple[int, int]:
    """(snd_cwnd, snd_ssthresh) from TCP_INFO (struct tcp_info: offsets 80 and 76)."""
    raw = sock.getsockopt(socket.IPPROTO_TCP, TCP_INFO, 104)
    ssthresh, cwnd = struct.unpack_from("=II", raw, 76)
    return cwnd, ssthresh


def transfer(ca_name: str, nbytes: int) -> tuple[str, list[int]]:
    """Sends nbytes over loopback with the sender on ca_name; returns the CC
    the socket reported and its cwnd sampled during the transfer."""
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    received = [0]

    def sink():
        conn, _ = srv.accept()
        with conn:
            while True:
                b = conn.recv(4 * MB)
                if not b:
                    break
                received[0] += len(b)

    t = threading.Thread(target=sink, daemon=True)
    t.start()
    cwnds: list[int] = []
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, ca_name.encode())
        s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 256 * 1024)
        s.connect(srv.getsockname())
        used = s.getsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, 16).split(b"\0")[0].decode()
        chunk = b"\x5a" * (256 * 1024)
        sent = 0
        while sent < nbytes:
            sent += s.send(chunk)
            cwnds.append(tcp_info_cwnd(s)[0])
        s.shutdown(socket.SHUT_WR)
        t.join(timeout=30)
    srv.close()
    assert received[0] == sent, f"received {received[0]} of {sent} bytes"
    return used, cwnds


def test_bad_name_is_one_line_naming_the_allowed_names():
    with pytest.raises(kernel.KernelError) as e:
        kernel.load(["no_such_cc"])
    msg = str(e.value)
    assert "\n" not in msg
    if kernel.built():
        assert msg.startswith('unknown algorithm "no_such_cc": allowed are ')
        for algo, ca in kernel.built():
            assert algo in msg and ca in msg, msg
    else:
        assert kernel.not_built_reason() in msg


def test_cli_bad_name_exits_2_with_one_line():
    p = subprocess.run([*longfat_cli(), "kernel", "load", "no_such_cc"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), p.stderr
    assert "Traceback" not in p.stderr


def test_names_resolve_in_every_spelling():
    if not kernel.built():
        pytest.skip(f"BPF programs not built: {kernel.not_built_reason()}")
    for algo, ca in kernel.built():
        assert kernel.resolve(algo) == (algo, ca)
        assert kernel.resolve(ca) == (algo, ca)
        assert kernel.resolve(f"longfat_{algo}") == (algo, ca)


@needs_kernel
def test_not_root_is_refused_in_one_line():
    """A child that dropped root to nobody gets the one-line refusal."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report and leave at once, whatever happens
        msg = "no answer"
        try:
            os.close(r)
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            kernel.load(["all"])
            msg = "loaded"
        except kernel.KernelError as e:
            msg = str(e)
        except BaseException as e:  # noqa: BLE001 - reported to the parent
            msg = f"unexpected {e!r}"
        finally:
            os.write(w, msg.encode())
            os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as fh:
        msg = fh.read().decode()
    os.waitpid(pid, 0)
    assert msg.startswith("loading BPF congestion controls needs root"), msg
    assert "\n" not in msg
    assert not any(ca in registered() for _, ca in kernel.built())


@needs_kernel
@pytest.mark.parametrize("algo,ca", ALGOS, ids=[a for a, _ in ALGOS])
def test_program_loads_carries_a_transfer_and_unloads(algo, ca, loaded_cleanup):
    pin = Path("/sys/fs/bpf/longfat") / algo
    if ca in registered():
        kernel.unload([algo])
    assert ca not in registered()

    assert kernel.load([algo]) == [(ca, "loaded")]  # the verifier passed it
    assert ca in registered()
    assert pin.exists()
    # Idempotent, whichever name is used.
    assert kernel.load([ca]) == [(ca, "already loaded")]
    assert kernel.load([f"longfat_{algo}"]) == [(ca, "already loaded")]
    st = {a["algo"]: a for a in kernel.status()["algos"]}
    assert st[algo]["registered"] and st[algo]["pinned"]

    used, cwnds = transfer(ca, 64 * MB)
    assert used == ca
    # The window moved: it grew from the initial window at least once.
    assert len(set(cwnds)) > 1, f"cwnd never changed: {cwnds[:10]}"
    assert max(cwnds) > cwnds[0], f"cwnd never grew above {cwnds[0]}"

    assert kernel.unload([algo]) == [(ca, "unloaded")]
    assert ca not in registered()
    assert not pin.exists()
    assert kernel.unload([algo]) == [(ca, "not loaded")]
    with pytest.raises(OSError):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            s.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, ca.encode())
        finally:
            s.close()


@needs_kernel
def test_cli_load_status_unload_all(loaded_cleanup):
    cli = longfat_cli()
    p = subprocess.run([*cli, "kernel", "load", "all"], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    for _, ca in kernel.built():
        assert ca in p.stdout and ca in registered()
    p = subprocess.run([*cli, "kernel", "load", "all"], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and p.stdout.count("already loaded") == len(kernel.built()), p.stdout
    p = subprocess.run([*cli, "kernel", "status"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert all(ca in p.stdout for _, ca in kernel.built())
    p = subprocess.run([*cli, "kernel", "unload", "all"], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    left = [ca for _, ca in kernel.built() if ca in registered()]
    assert not left, f"still registered after unload all: {left}"
    pins = list(Path("/sys/fs/bpf/longfat").iterdir()) if Path("/sys/fs/bpf/longfat").exists() else []
    assert not pins, f"still pinned: {pins}"


@needs_kernel
@pytest.mark.skipif(shutil.which("iperf3") is None, reason="iperf3 is not installed")
def test_iperf3_selects_a_loaded_program(loaded_cleanup, tmp_path):
    import json

    algo, ca = kernel.built()[0]
    kernel.load([algo])
    pidfile = tmp_path / "iperf3.pid"
    port = 5201 + os.getpid() % 1000
    subprocess.run(["iperf3", "-s", "-D", "-1", "-B", "127.0.0.1", "-p", str(port), "-I", str(pidfile)], check=True, timeout=30)
    try:
        time.sleep(0.3)
        p = subprocess.run(
            ["iperf3", "-c", "127.0.0.1", "-p", str(port), "-C", ca, "-t", "2", "-J"], capture_output=True, text=True, timeout=60
        )
        result = json.loads(p.stdout)
        assert "error" not in result, result.get("error")
        assert result["end"]["sender_tcp_congestion"] == ca
        assert result["end"]["sum_sent"]["bytes"] > 10 * MB
    finally:
        if pidfile.exists():
            try:
                os.kill(int(pidfile.read_text().strip().rstrip("\0")), 15)
            except (ProcessLookupError, ValueError):
                pass
