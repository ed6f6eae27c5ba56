"""The BPF congestion controls on this machine's kernel: each program passes
the verifier, registers as longfat_<name>, carries a loopback TCP transfer
(the socket really uses it and its window moves), loads idempotently and
unloads without a trace.

The tests that touch the kernel need root, BTF and BPF struct_ops; where one
is missing they are skipped with the reason, never passed.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import threading
import time
import warnings
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


#: Where longfat pins an algorithm's link (`longfat_<algo>` at PIN_DIR/<algo>).
PIN_DIR = Path("/sys/fs/bpf/longfat")


def registered_once_settled(match, timeout_s: float = 120.0) -> list[str]:
    """The registered congestion controls ``match`` selects, once those
    already unloaded have gone: an unloaded program (its pin removed) stays
    in the kernel's list until the last socket that used it is freed, which
    an earlier test's connections can delay by a minute. A pinned one is
    loaded (by a test, a user or another tool) and is returned at once."""
    deadline = time.monotonic() + timeout_s
    while True:
        loaded = [c for c in registered() if match(c)]
        lingering = [c for c in loaded if c.startswith("longfat_") and not (PIN_DIR / c.removeprefix("longfat_")).exists()]
        if not lingering or time.monotonic() >= deadline:
            return loaded
        time.sleep(0.5)


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


def transfer(ca_name: str, nbytes: int) -> tuple[str, list[int], dict | None]:
    """Sends nbytes over loopback with the sender on ca_name; returns the CC
    the socket reported, its cwnd sampled during the transfer and the glue's
    state at the end."""
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
        state = kernel.socket_state(ca_name, s) if used == ca_name else None
    srv.close()
    assert received[0] == sent, f"received {received[0]} of {sent} bytes"
    return used, cwnds, state


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
    """A child that dropped root to nobody gets the one-line refusal, and
    registers nothing."""
    before = set(registered())
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
    assert set(registered()) == before


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

    used, cwnds, state = transfer(ca, 64 * MB)
    assert used == ca
    # Every echoed timestamp is on the sender's clock, none after its ACK.
    assert state is not None and state["acks_gathered"] > 0, state
    assert state["ts_echoes_ahead"] == 0 and state["ts_echoes_before_init"] == 0, state
    # That the window grows is checked on a path with a real RTT
    # (test_window_grows_on_a_path_with_a_real_rtt): on loopback, RTT ~0.4 ms,
    # TCP-GT's rules grow it by ~1e-5 packets in this transfer (docs/kernel.md).

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
@pytest.mark.parametrize("algo,ca", ALGOS, ids=[a for a, _ in ALGOS])
def test_window_grows_on_a_path_with_a_real_rtt(algo, ca, loaded_cleanup, tmp_path):
    """On the testbed's 100 Mbit/s x 50 ms path (its delay line; this kernel
    has no netem) the socket's window grows above where it started within
    2 s. Every algorithm's rules grow it there; on loopback TCP-GT's do not
    (its increase scales with (srtt / 50 ms)^2, sect. III-E; docs/kernel.md)."""
    import pyarrow.parquet as pq

    from longfat import testbed
    from longfat.runner import prepare
    from test_testbed import _WHY, scenario

    if _WHY is not None:
        pytest.skip(f"testbed unavailable: {_WHY}")
    kernel.load([algo])
    spec = scenario(duration="2s")
    spec["run"]["measure_from"] = "0s"
    spec["flows"] = [{"cc": algo}]
    prepare(spec)
    r = testbed.run(spec, tmp_path / "out", plot=False)
    assert r.summary["flows"][0]["kernel_cc"] == ca
    cwnds = pq.read_table(tmp_path / "out" / "flows.parquet").to_pydict()["cwnd_pkts"]
    assert len(cwnds) >= 10, cwnds
    assert max(cwnds) > cwnds[0], f"cwnd never grew above {cwnds[0]}: {cwnds}"


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


# ---- what longfat loaded (issue 27 item 12) ------------------------------------------
#
# "longfat did not load it" means: no longfat record names the program's
# current pin (/sys/fs/bpf/longfat/<algo>, by inode and creation time). A
# program registered by another tool, pinned at longfat's path by another
# tool (here: the bare loader, which records nothing), or loaded by an
# older longfat, is used but never unloaded by longfat.


@pytest.fixture
def ltcp_unloaded():
    """longfat_ltcp is not registered before the test, and is not after it."""
    from longfat._native import kernel_unload

    if registered_once_settled(lambda c: c == "longfat_ltcp"):
        pytest.skip(f"longfat_ltcp is loaded here already (another user's?): {registered()}")
    yield
    kernel_unload(["ltcp"])  # by its pin, whatever the test left


@needs_kernel
def test_kernel_unload_all_never_unloads_a_program_longfat_did_not_load(ltcp_unloaded):
    from longfat._native import kernel_load

    kernel_load(["ltcp"], str(kernel.default_log_dir()))  # pinned where longfat pins, with no record: another tool's
    cli = longfat_cli()
    p = subprocess.run([*cli, "kernel", "unload", "all"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "longfat_ltcp" in registered(), p.stdout
    assert "longfat_ltcp: left loaded: not loaded by longfat" in p.stdout, p.stdout
    # a load uses it as it is, and does not make it longfat's
    p = subprocess.run([*cli, "kernel", "load", "ltcp"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and "longfat_ltcp: already loaded, not by longfat" in p.stdout, p.stdout + p.stderr
    assert kernel.unload(["ltcp"]) == [("longfat_ltcp", "left loaded: not loaded by longfat")]


@needs_kernel
def test_kernel_unload_all_leaves_another_users_programs(ltcp_unloaded, monkeypatch):
    monkeypatch.setattr(kernel, "_login_uid", lambda: 4242)
    assert kernel.load(["ltcp"]) == [("longfat_ltcp", "loaded")]
    monkeypatch.setattr(kernel, "_login_uid", lambda: 4343)
    (ca, what), = [x for x in kernel.unload(["all"]) if x[0] == "longfat_ltcp"]
    assert what == "left loaded: in use by `longfat kernel load` by uid 4242", what
    assert "longfat_ltcp" in registered()
    monkeypatch.setattr(kernel, "_login_uid", lambda: 4242)
    assert kernel.unload(["ltcp"]) == [("longfat_ltcp", "unloaded")]
    assert "longfat_ltcp" not in registered()


def _dead_owner_record(since_ns: int) -> Path:
    """The record a command leaves when SIGKILLed after it recorded that it
    is loading ltcp, before the pin's identity (see kernel._adopt_pending)."""
    child = subprocess.Popen(["true"])
    child.wait()  # a pid that names no process
    path = kernel.RECORD_DIR / f"pid{child.pid}-test.json"
    rec = {"owner": path.stem, "command": "a killed test", "pid": child.pid, "start": 1, "programs": {"longfat_ltcp": {"algo": "ltcp", "pin": None, "since_ns": since_ns}}}
    kernel.RECORD_DIR.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(rec))
    return path


@needs_kernel
def test_a_command_killed_between_its_load_and_its_record_still_owns_the_pin(ltcp_unloaded):
    from longfat._native import kernel_load

    record = _dead_owner_record(time.time_ns())
    kernel_load(["ltcp"], str(kernel.default_log_dir()))  # the load the killed command made
    assert [(ca, o.command) for ca, o in kernel.reap()] == [("longfat_ltcp", "a killed test")]
    assert "longfat_ltcp" not in registered() and not record.exists()


@needs_kernel
def test_a_pin_older_than_a_killed_commands_claim_is_not_adopted(ltcp_unloaded):
    from longfat._native import kernel_load

    kernel_load(["ltcp"], str(kernel.default_log_dir()))  # another tool's, before the claim
    record = _dead_owner_record(time.time_ns() + 10 * kernel._CLOCK_SLACK_NS)
    assert kernel.reap() == []
    assert "longfat_ltcp" in registered() and not record.exists()


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


@needs_kernel
@pytest.mark.skipif(shutil.which("iperf3") is None, reason="iperf3 is not installed")
def test_iperf3_over_the_standing_testbed(loaded_cleanup):
    """Issue 15's done-when, as a user types it: `longfat kernel load
    longfat_ltcp`, `longfat testbed up` (100 Mbit/s x 50 ms, 1 BDP), then
    `iperf3 -C longfat_ltcp` from the sender's namespace; `longfat testbed
    down` leaves no namespace, process or state behind (and the program
    loaded by the user stays loaded)."""
    import json

    from longfat import testbed
    from test_testbed import _WHY

    if _WHY is not None:
        pytest.skip(f"testbed unavailable: {_WHY}")
    cli = longfat_cli()
    p = subprocess.run([*cli, "kernel", "load", "longfat_ltcp"], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    up = [*cli, "testbed", "up", "--set", "network.bottleneck.delay=25ms"]
    p = subprocess.run(up, capture_output=True, text=True, timeout=120)
    try:
        assert p.returncode == 0, p.stderr
        assert "iperf3 server on port 5201" in p.stdout, p.stdout
        again = subprocess.run(up, capture_output=True, text=True, timeout=120)
        assert again.returncode != 0 and "already up" in again.stderr and len(again.stderr.strip().splitlines()) == 1, again.stderr
        st = json.loads((testbed.UP_DIR / "state.json").read_text())
        s0 = st["senders"]["0"]["namespace"]
        c = subprocess.run(["ip", "netns", "exec", s0, "iperf3", "-c", "10.78.0.1", "-C", "longfat_ltcp", "-t", "5", "-O", "2", "-J"], capture_output=True, text=True, timeout=60)
        result = json.loads(c.stdout)
        assert "error" not in result, result.get("error")
        end = result["end"]
        assert end["sender_tcp_congestion"] == "longfat_ltcp"
        # It crossed the delay line (the smoothed RTT includes the queue) and
        # the bottleneck: the receiver got at most the payload share of
        # 100 Mbit/s (1448 of 1500 bytes) and, after slow start, most of it
        # (iperf3 -O 2 leaves the first 2 s out of its sums: slow start, its
        # overshoot and the recovery after it; with them in, one CI run read
        # 66.8 Mbit/s over 5 s).
        rtt_us = end["streams"][0]["sender"]["mean_rtt"]
        assert 50_000 <= rtt_us <= 50_000 + 2 * 50_000, rtt_us
        got = end["sum_received"]["bits_per_second"]
        assert 0.7 * 100e6 <= got <= 1.01 * 100e6 * 1448 / 1500, got
        q = subprocess.run(["ip", "netns", "exec", st["router"], "tc", "-s", "-j", "qdisc", "show", "dev", "rd"], capture_output=True, text=True, check=True)
        sent = max(x.get("bytes", 0) for x in json.loads(q.stdout))
        assert sent >= end["sum_received"]["bytes"], (sent, end["sum_received"]["bytes"])
    finally:
        d = subprocess.run([*cli, "testbed", "down"], capture_output=True, text=True, timeout=60)
    assert d.returncode == 0 and "removed" in d.stdout, d.stderr
    assert not [n for n in testbed.list_namespaces() if n.startswith(testbed.UP_PREFIX + "-")]
    assert not testbed.UP_DIR.exists()
    assert "longfat_ltcp" in registered()  # the user's load, not the testbed's
    d = subprocess.run([*cli, "testbed", "down"], capture_output=True, text=True, timeout=60)
    assert d.returncode == 0 and "no standing testbed" in d.stdout


# The glue's events against the kernel's own counts, over a lossy path:
# sender namespace S -- router M (tbf bottleneck, a short queue) -- receiver R.
# From 0.1 s to 0.3 s the queue shrinks to 4 full packets (about 1 more in
# flight), below the initial window of 10, so every algorithm meets fast
# recoveries, a delay-based one too: TCP-GT on this sub-millisecond path
# barely grows (docs/kernel.md) and never fills the 27-packet queue.

CLONE_NEWNET = 0x40000000
BOTTLENECK = ("tbf", "rate", "100mbit", "burst", "20kb", "limit", "40kb")
SHORT_QUEUE = ("tbf", "rate", "100mbit", "burst", "3kb", "limit", "6kb")


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True, timeout=30)


@pytest.fixture(scope="module")
def lossy_path():
    if UNAVAILABLE:
        pytest.skip(UNAVAILABLE)
    if shutil.which("ip") is None or shutil.which("tc") is None:
        pytest.skip("iproute2 (ip, tc) is not installed")
    tag = f"lfk{os.getpid() % 100000}"
    s, m, r = f"{tag}s", f"{tag}m", f"{tag}r"
    try:
        for ns in (s, m, r):
            _ip("netns", "add", ns)
        _ip("link", "add", f"{tag}a", "netns", s, "type", "veth", "peer", "name", f"{tag}b", "netns", m)
        _ip("link", "add", f"{tag}c", "netns", m, "type", "veth", "peer", "name", f"{tag}d", "netns", r)
        _ip("-n", s, "addr", "add", "10.201.1.1/24", "dev", f"{tag}a")
        _ip("-n", m, "addr", "add", "10.201.1.2/24", "dev", f"{tag}b")
        _ip("-n", m, "addr", "add", "10.201.2.1/24", "dev", f"{tag}c")
        _ip("-n", r, "addr", "add", "10.201.2.2/24", "dev", f"{tag}d")
        for ns, dev in ((s, "a"), (m, "b"), (m, "c"), (r, "d")):
            _ip("-n", ns, "link", "set", f"{tag}{dev}", "up")
            _ip("-n", ns, "link", "set", "lo", "up")
        _ip("-n", s, "route", "add", "default", "via", "10.201.1.2")
        _ip("-n", r, "route", "add", "default", "via", "10.201.2.1")
        subprocess.run(["ip", "netns", "exec", m, "sysctl", "-qw", "net.ipv4.ip_forward=1"], check=True, timeout=30)
        # 100 Mbit/s, a queue of about 27 full packets: a sawtooth with many losses.
        subprocess.run(["ip", "netns", "exec", m, "tc", "qdisc", "add", "dev", f"{tag}c", "root", *BOTTLENECK], check=True, timeout=30)
    except (subprocess.CalledProcessError, OSError) as e:
        for ns in (s, m, r):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=30)
        pytest.skip(f"cannot build the namespace path: {e}")
    yield s, m, r, f"{tag}c"
    for ns in (s, m, r):
        subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=30)


def _netstat() -> dict[str, int]:
    lines = Path("/proc/net/netstat").read_text().splitlines()
    out = {}
    for names, values in zip(lines[::2], lines[1::2]):
        prefix = names.split(":")[0]
        for k, v in zip(names.split()[1:], values.split()[1:]):
            out[f"{prefix}.{k}"] = int(v)
    return out


CLONE_NEWNS = 0x00020000
MS_REC, MS_PRIVATE = 0x4000, 0x40000
CA_OPEN, CA_DISORDER, CA_CWR, CA_RECOVERY, CA_LOSS = range(5)  # include/uapi/linux/tcp.h, enum tcp_ca_state


def _tracefs_states(tdir: str, port: int):
    """A private tracefs instance recording tcp:tcp_cong_state_set for the
    socket whose destination port is `port`; yields, then returns
    [(task, new state, CLOCK_MONOTONIC in ns)] in order. tracefs is not BPF:
    it records the changes the kernel made without running BPF programs too."""
    inst = Path(tdir) / "instances" / f"longfat{os.getpid()}"
    inst.mkdir()
    ev = inst / "events" / "tcp" / "tcp_cong_state_set"
    try:
        (inst / "trace_clock").write_text("mono")
        (ev / "filter").write_text(f"dport == {port}")
        (ev / "enable").write_text("1")
        yield
        (ev / "enable").write_text("0")
        out = []
        for line in (inst / "trace").read_text().splitlines():
            if "tcp_cong_state_set:" in line:
                task, rest = line.split("[", 1)
                secs = rest.split("tcp_cong_state_set:", 1)[0].split()[-1].rstrip(":")
                whole, frac = secs.split(".")
                out.append((task.strip(), int(line.rsplit("cong_state=", 1)[1]), int(whole) * 10**9 + int(frac.ljust(9, "0"))))
        return out
    finally:
        inst.rmdir()


def _send_from_namespace(ns: str, ca: str, dest: tuple[str, int], nbytes: int) -> dict:
    """In a forked child that joined namespace ns (its network only: bpffs
    stays visible) and a mount namespace of its own (tracefs mounted there),
    sends nbytes with ca, waits until all is acknowledged and reports the
    glue's state, TCP_INFO, the namespace's TcpExt counters and the socket's
    congestion state changes as tracefs saw them until then ("states":
    [(task, state, ns)]; "read_ns" is that moment, CLOCK_MONOTONIC, before
    the socket closes; "states_after_read" the changes after it)."""
    import ctypes
    import json
    import tempfile

    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        out = {}
        try:
            os.close(r)
            libc = ctypes.CDLL(None, use_errno=True)
            fd = os.open(f"/var/run/netns/{ns}", os.O_RDONLY)
            if libc.setns(fd, CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), "setns")
            if libc.unshare(CLONE_NEWNS) != 0 or libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0:
                raise OSError(ctypes.get_errno(), "a private mount namespace")
            tdir = tempfile.mkdtemp(prefix="longfat-tracefs-")
            if libc.mount(b"nodev", tdir.encode(), b"tracefs", 0, None) != 0:
                raise OSError(ctypes.get_errno(), "mount tracefs")
            tracing = _tracefs_states(tdir, dest[1])
            next(tracing)
            before = _netstat()
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                s.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, ca.encode())
                s.connect(dest)
                chunk = b"\xa5" * (256 * 1024)
                sent = 0
                while sent < nbytes:
                    sent += s.send(chunk)
                deadline = time.monotonic() + 30
                while time.monotonic() < deadline:
                    raw = s.getsockopt(socket.IPPROTO_TCP, TCP_INFO, 256)
                    if struct.unpack_from("=I", raw, 24)[0] == 0 and raw[1] == 0:  # nothing unacked, CA Open
                        break
                    time.sleep(0.01)
                out["state"] = kernel.socket_state(ca, s)
                raw = s.getsockopt(socket.IPPROTO_TCP, TCP_INFO, 256)
                out["ca_state"] = raw[1]
                out["unacked"] = struct.unpack_from("=I", raw, 24)[0]
                out["snd_ssthresh"], out["snd_cwnd"] = struct.unpack_from("=II", raw, 76)
                out["total_retrans"] = struct.unpack_from("=I", raw, 100)[0]
                out["total_rto"] = struct.unpack_from("=H", raw, 240)[0]
                after = _netstat()
                # Everything above was read with the socket idle; closing it
                # sends a FIN, and its ACK may still change the state: when a
                # loss probe of the last data is pending (no DSACK came back
                # for it), the FIN's ACK is past tlp_high_seq, and
                # tcp_process_tlp_ack counts a loss (CWR, then Open). The
                # observers' records are cut here, at the glue's moment.
                out["read_ns"] = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
            try:
                next(tracing)
            except StopIteration as done:
                out["states"] = [x for x in done.value if x[2] <= out["read_ns"]]
                out["states_after_read"] = [x for x in done.value if x[2] > out["read_ns"]]
            out["mib"] = {k: after[k] - before.get(k, 0) for k in after}
        except BaseException as e:  # noqa: BLE001 - reported to the parent
            out = {"error": repr(e)}
        finally:
            os.write(w, json.dumps(out).encode())
            os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as fh:
        data = fh.read()
    os.waitpid(pid, 0)
    return json.loads(data)


class StateTwin:
    """tests/kernel_state_twin.bpf.c, built with clang-19 against this
    kernel's BTF and loaded through the system's libbpf (ctypes): the
    congestion state changes the kernel handed to BPF programs for one
    socket, as [(state before, state after, icsk_retransmits, whether a
    timeout sets a new ssthresh (tcp_enter_loss's test), CLOCK_MONOTONIC in
    ns)]."""

    def __init__(self, workdir: Path):
        import ctypes
        import ctypes.util

        src = Path(__file__).with_name("kernel_state_twin.bpf.c")
        vmlinux_h = workdir / "vmlinux.h"
        with vmlinux_h.open("w") as fh:
            subprocess.run(["bpftool", "btf", "dump", "file", "/sys/kernel/btf/vmlinux", "format", "c"], stdout=fh, check=True, timeout=60)
        obj = workdir / "twin.bpf.o"
        subprocess.run(["clang-19", "-g", "-O2", "-target", "bpf", "-mcpu=v3", "-D__TARGET_ARCH_x86", f"-I{workdir}", "-c", str(src), "-o", str(obj)], check=True, capture_output=True, timeout=120)
        lib = ctypes.CDLL(ctypes.util.find_library("bpf"), use_errno=True)
        for name in ("bpf_object__open_file", "bpf_object__find_program_by_name", "bpf_object__find_map_by_name", "bpf_program__attach"):
            getattr(lib, name).restype = ctypes.c_void_p
        lib.bpf_object__find_program_by_name.argtypes = lib.bpf_object__find_map_by_name.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
        lib.bpf_object__load.argtypes = lib.bpf_program__attach.argtypes = lib.bpf_link__destroy.argtypes = lib.bpf_object__close.argtypes = [ctypes.c_void_p]
        lib.bpf_map__lookup_elem.argtypes = lib.bpf_map__update_elem.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint64]
        self.lib, self.ct = lib, ctypes
        self.obj = lib.bpf_object__open_file(str(obj).encode(), None)
        if not self.obj or lib.bpf_object__load(self.obj) != 0:
            raise OSError(ctypes.get_errno(), "loading tests/kernel_state_twin.bpf.c")
        self.link = lib.bpf_program__attach(lib.bpf_object__find_program_by_name(self.obj, b"twin_state_set"))
        if not self.link:
            raise OSError(ctypes.get_errno(), "attaching tests/kernel_state_twin.bpf.c")
        self.cfg = lib.bpf_object__find_map_by_name(self.obj, b"cfg")
        self.events_map = lib.bpf_object__find_map_by_name(self.obj, b"events")

    def _set(self, key: int, value: int) -> None:
        k, v = self.ct.c_uint32(key), self.ct.c_uint32(value)
        assert self.lib.bpf_map__update_elem(self.cfg, self.ct.byref(k), 4, self.ct.byref(v), 4, 0) == 0

    def _get(self, m, key: int, size: int) -> bytes:
        k, v = self.ct.c_uint32(key), self.ct.create_string_buffer(size)
        assert self.lib.bpf_map__lookup_elem(m, self.ct.byref(k), 4, v, size, 0) == 0
        return v.raw

    def watch(self, port: int) -> None:
        """From now on, record the socket whose destination port is `port`."""
        self._set(1, 0)
        self._set(0, socket.htons(port))

    def events(self) -> list[tuple[int, int, int, int, int]]:
        n = struct.unpack("=I", self._get(self.cfg, 1, 4))[0]
        assert n <= 8192, f"the twin recorded {n} changes, more than its 8192 slots"
        return [struct.unpack_from("=BBBB", raw, 8) + struct.unpack_from("=Q", raw, 0) for raw in (self._get(self.events_map, i, 16) for i in range(n))]

    def close(self) -> None:
        self.lib.bpf_link__destroy(self.link)
        self.lib.bpf_object__close(self.obj)


@pytest.fixture(scope="module")
def state_twin(tmp_path_factory):
    import ctypes.util

    if UNAVAILABLE:
        pytest.skip(UNAVAILABLE)
    if ctypes.util.find_library("bpf") is None or not Path("/usr/include/bpf/bpf_helpers.h").exists():
        pytest.skip("libbpf and its headers (libbpf-dev) are not installed: the lossy test's second observer needs them")
    if not Path("/proc/filesystems").read_text().count("tracefs"):
        pytest.skip("the kernel has no tracefs: the lossy test reads the socket's state changes from it")
    twin = StateTwin(tmp_path_factory.mktemp("twin"))
    yield twin
    twin.close()


def glue_counts_from(changes: list[tuple[int, int, int, int, int]]) -> dict[str, int]:
    """What the glue counts when its callbacks run for exactly these changes
    (state before, after, icsk_retransmits, whether a timeout reduces, time),
    from a socket that began Open: its episodes, its timeouts that reduce
    (tcp_enter_loss called ssthresh and CA_EVENT_LOSS, in the same call as
    set_state(Loss), so BPF is given all or none) and that keep ssthresh,
    and a gap wherever the state before is not the one its last call moved
    to, or timeouts in a row skip icsk_retransmits values."""
    c = dict.fromkeys(("recoveries", "recoveries_in_reduction", "cwrs", "rtos_reduce", "rtos_keep", "missed_callbacks"), 0)
    seen, rto_count = CA_OPEN, 0
    for old, new, retransmits, reduces, _ in changes:
        if old != seen:
            c["missed_callbacks"] += 1
        if new == CA_LOSS:
            if old == CA_LOSS and seen == CA_LOSS and retransmits > rto_count + 1:
                c["missed_callbacks"] += retransmits - rto_count - 1
            rto_count = retransmits
            c["rtos_reduce" if reduces else "rtos_keep"] += 1
        if new == CA_RECOVERY:
            c["recoveries"] += 1
            c["recoveries_in_reduction"] += old in (CA_CWR, CA_RECOVERY)
        if new == CA_CWR and old != CA_CWR:
            c["cwrs"] += 1
        seen = new
    return c


def unseen_by_bpf(kernel_states: list[tuple[str, int, int]], bpf_states: list[tuple[int, int, int, int, int]]) -> list[tuple[str, int]] | None:
    """The changes tracefs recorded that BPF was not given, as (task, new
    state). In one tcp_set_ca_state call the tracepoint runs the BPF observer
    (attached first) before tracefs's probe, so each change BPF was given is
    the first tracefs record, in order, not stamped before it (both
    CLOCK_MONOTONIC; tracefs prints whole µs, so a record is before only when
    its µs ends at or before the BPF stamp); the records passed over on the
    way are the changes BPF was not given. None when a change BPF was given has no such record of
    the same state (BPF saw a change the kernel did not make)."""
    missing, j = [], 0
    for _, new, _, _, bpf_ns in bpf_states:
        while j < len(kernel_states) and kernel_states[j][2] + 1000 <= bpf_ns:
            missing.append(kernel_states[j][:2])
            j += 1
        if j == len(kernel_states) or kernel_states[j][1] != new:
            return None
        j += 1
    return missing + [k[:2] for k in kernel_states[j:]]


@needs_kernel
@pytest.mark.parametrize("algo,ca", ALGOS, ids=[a for a, _ in ALGOS])
def test_glue_events_match_the_kernels_counts_on_a_lossy_path(algo, ca, lossy_path, loaded_cleanup, state_twin):
    s_ns, m_ns, r_ns, m_dev = lossy_path
    kernel.load([algo])

    def tc(*args):
        subprocess.run(["ip", "netns", "exec", m_ns, "tc", "qdisc", "replace", "dev", m_dev, "root", *args], check=True, timeout=30)

    def outage():
        # From 0.1 s to 0.3 s a 4-packet queue: fast recoveries for any window.
        time.sleep(0.1)
        tc(*SHORT_QUEUE)
        time.sleep(0.2)
        tc(*BOTTLENECK)
        # From 0.4 s to 1.3 s the router drops everything: timeouts, backed off.
        time.sleep(0.1)
        tc("pfifo", "limit", "0")
        time.sleep(0.9)
        tc(*BOTTLENECK)

    port = 6000 + os.getpid() % 1000

    def one_transfer() -> dict:
        sink = subprocess.Popen(
            [
                "ip", "netns", "exec", r_ns, sys.executable, "-c",
                "import socket\n"
                "l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
                f"l.bind(('10.201.2.2', {port})); l.listen(1); print('ready', flush=True)\n"
                "c, _ = l.accept()\n"
                "while c.recv(1 << 20): pass\n",
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert sink.stdout.readline().strip() == "ready"
            state_twin.watch(port)
            cut = threading.Thread(target=outage)
            cut.start()
            out = _send_from_namespace(s_ns, ca, ("10.201.2.2", port), 24 * MB)
            cut.join()
        finally:
            sink.kill()
            sink.wait(timeout=10)
        assert "error" not in out, out.get("error")
        assert out["state"] is not None, "the socket has no glue state"
        return out

    # Three observers of the socket's congestion states: tracefs (every change
    # the kernel made: tcp_set_ca_state's tracepoint), a second BPF program on
    # that tracepoint (the changes the kernel handed to BPF programs) and the
    # glue. The kernel does not run BPF programs in some contexts (on this
    # machine: interrupts that arrive while a thread of the VM's PID 1 is
    # current; docs/kernel.md, "Callbacks the kernel did not run"), so the
    # glue must equal the BPF observer exactly, tracefs the kernel's own
    # counters exactly, and the BPF observer be tracefs less those changes.
    out = one_transfer()
    st, mib = out["state"], out["mib"]
    twin_all = state_twin.events()
    twin = [e for e in twin_all if e[4] <= out["read_ns"]]
    print("after the read:", out["states_after_read"], twin_all[len(twin):])
    print(algo, st, {k: out[k] for k in ("snd_cwnd", "snd_ssthresh", "total_retrans", "total_rto")}, "TCPSackRecovery", mib["TcpExt.TCPSackRecovery"])
    assert out["unacked"] == 0 and out["ca_state"] == 0, out
    assert out["total_retrans"] > 0, "the path lost nothing: the test needs losses"
    assert out["total_rto"] >= 2, "the outage caused no backed-off timeout: the test needs them"
    # Every ACK the glue gathered became exactly one on_ack.
    assert st["acks_delivered"] + st["ack_pending"] == st["acks_gathered"], st
    assert st["acks_grown"] > 0, st
    assert st["ts_echoes_ahead"] == 0 and st["ts_echoes_before_init"] == 0, st
    # tracefs against the kernel's counters: every fast recovery
    # (tcp_enter_recovery counts TCPSackRecovery, this socket is the
    # namespace's only one) and every timeout (tcp_retransmit_timer:
    # tcp_enter_loss, then tcp_update_rto_stats counts tcpi_total_rto).
    kernel_states = [tuple(x) for x in out["states"]]
    assert sum(new == CA_RECOVERY for _, new, _ in kernel_states) == mib["TcpExt.TCPSackRecovery"], (kernel_states, mib["TcpExt.TCPSackRecovery"])
    assert sum(new == CA_LOSS for _, new, _ in kernel_states) == out["total_rto"], (kernel_states, out["total_rto"])
    # The glue against what BPF was given: the same episodes, the same
    # timeouts that reduce and that keep ssthresh (each as tcp_enter_loss
    # decided it; both may reduce when an ACK made progress between them),
    # and a gap counted exactly where a change was not given to BPF.
    want = glue_counts_from(twin)
    got = {k: st[k] for k in want}
    assert got == want, (got, want, twin)
    # What BPF was not given is what tracefs saw and BPF did not.
    unseen = unseen_by_bpf(kernel_states, twin)
    assert unseen is not None, ("BPF was given a change tracefs did not record", kernel_states, twin)
    assert len(kernel_states) - len(twin) == len(unseen), (kernel_states, twin)
    if unseen:
        warnings.warn(f"{algo}: the kernel ran no BPF program for {len(unseen)} of the socket's {len(kernel_states)} state changes (in {sorted({t for t, _ in unseen})}); the glue counted them as it must (docs/kernel.md)", stacklevel=1)
    # Each on_loss not taken back by a timeout opened a Recovery or a CWR,
    # and each taken back was a reducing timeout: ssthresh and its
    # set_state, CA_EVENT_LOSS and its set_state(Loss), run in one call of
    # tcp_enter_recovery / tcp_init_cwnd_reduction / tcp_enter_loss, so the
    # kernel gives BPF both or neither.
    opened = st["recoveries"] - st["recoveries_in_reduction"] + st["cwrs"]
    assert st["losses"] - st["losses_taken_back"] == opened, st
    assert st["losses_taken_back"] == st["rtos_reduce"], st
    # Episodes end: the last one has ended (all acknowledged, state Open).
    assert st["recovery_exits"] + st["undos"] >= opened - st["rtos_keep"], st
    assert st["recovery_exits"] > 0, st
    # The kernel's window and threshold are the algorithm's.
    assert out["snd_cwnd"] == max(st["cwnd_fp"] >> 16, 1), (out["snd_cwnd"], st["cwnd_fp"] / 65536)
    if st["ssthresh_fp"] < (1 << 64) - 1:
        assert out["snd_ssthresh"] == max(st["ssthresh_fp"] >> 16, 2), (out["snd_ssthresh"], st["ssthresh_fp"] / 65536)
