"""The testbed's namespaces on this machine: building a plan's dumbbell
(veths, the bottleneck qdisc, the delay line, the agents), running its
flows, and removing it, and what killed runs left behind."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

from longfat._native import ScenarioError
from longfat import kernel
from longfat.outdir import deferred_signals, pid_alive
from longfat.testbed.planning import AGENT, AGENT_START_S, DELAY_LINE_RT_PRIORITY, DELAY_LINE_START_S, L2_HEADER, NS_PATTERN, PACKET, PING_COUNT, PORT, Plan, RTAX_FEATURE_TCP_USEC_TS, RTT_TOLERANCE_FRAC, RTT_TOLERANCE_NS, TUN_QUEUE_PKTS, dscp, ensure_congestion_controls, field_error

def check_environment() -> None:
    """Refuses (one line) to start where the testbed cannot run."""
    if os.geteuid() != 0:
        raise ScenarioError("testbed: needs root (network namespaces, qdiscs and TUN devices); run it as root", "")
    for tool in ("ip", "tc", "ping"):
        if shutil.which(tool) is None:
            raise ScenarioError(f"testbed: {tool!r} is not installed (Debian: apt-get install iproute2 iputils-ping)", "")
    if not Path("/dev/net/tun").exists():
        raise ScenarioError("testbed: /dev/net/tun is missing (the delay line needs TUN devices)", "")


def _run(argv: list[str], check: bool = True, timeout: float = 20.0) -> subprocess.CompletedProcess:
    p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    if check and p.returncode != 0:
        raise RuntimeError(f"`{' '.join(argv)}` failed: {' '.join((p.stderr or p.stdout).split())}")
    return p


def list_namespaces() -> list[str]:
    try:
        return sorted(os.listdir("/run/netns"))
    except OSError:
        return []


def _ns_pids(ns: str) -> list[int]:
    p = _run(["ip", "netns", "pids", ns], check=False)
    return [int(x) for x in p.stdout.split() if x.isdigit()]


def remove_namespace(ns: str) -> None:
    """Kills every process left in ``ns`` and deletes it."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        pids = _ns_pids(ns)
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 2.0
        while pids and time.monotonic() < deadline and _ns_pids(ns):
            time.sleep(0.05)
    _run(["ip", "netns", "del", ns], check=False)


def clean_stale() -> tuple[list[str], list[tuple[str, kernel.Owner]]]:
    """Removes what testbed runs whose process is gone left: their
    namespaces (with their devices, qdiscs and processes) and the BPF
    programs they held and nobody else holds (kernel.reap). Returns (the
    namespaces, (program, its dead owner) per program unloaded)."""
    removed = []
    for ns in list_namespaces():
        m = NS_PATTERN.match(ns)
        if not m or pid_alive(int(m["pid"])):
            continue
        remove_namespace(ns)
        removed.append(ns)
    return removed, kernel.reap()


def stale_message(stale: tuple[list[str], list[tuple[str, kernel.Owner]]]) -> str:
    """One line on what :func:`clean_stale` removed."""
    namespaces, programs = stale
    msg = f"removed {len(namespaces)} namespaces left by killed testbed runs" + (f": {', '.join(namespaces)}" if namespaces else "")
    if programs:
        msg += "; unloaded " + ", ".join(f"{ca} (held by {o}, which is gone)" for ca, o in programs)
    return msg


def sweep_stale(log: Callable[[str], None]) -> None:
    """:func:`clean_stale` before a run builds, saying what it removed."""
    stale = clean_stale()
    if stale[0] or stale[1]:
        log(stale_message(stale))


# ---- building and running ---------------------------------------------------------


class Testbed:
    """The namespaces, devices and processes of one run; ``close()``
    removes them all (and is called on leaving a ``with`` block, whatever
    the reason)."""

    def __init__(self, plan: Plan, work: Path, *, delay_direction: str = "ack", rps: bool = True, rt_priority: int = DELAY_LINE_RT_PRIORITY, log: Callable[[str], None] = lambda s: None, prefix: str | None = None, owner: kernel.Owner | None = None):
        self.plan = plan
        #: Who holds the BPF programs it uses (default: this process, so
        #: that a SIGKILLed run's are unloaded by the next clean_stale).
        self.owner = owner or kernel.process_owner("longfat testbed run")
        self.rt_priority = rt_priority
        self.work = work
        self.prefix = prefix or f"lf{os.getpid()}"
        self.delay_direction = delay_direction
        self.rps = rps
        self.log = log
        self.namespaces: list[str] = []
        self.procs: list[subprocess.Popen] = []
        self.delayline: subprocess.Popen | None = None
        #: The BPF programs it holds (kernel names).
        self.loaded: list[str] = []
        self.meta: dict = {}

    # names
    @property
    def router(self) -> str:
        return f"{self.prefix}-r"

    @property
    def receiver(self) -> str:
        return f"{self.prefix}-d"

    def sender(self, g: int) -> str:
        return f"{self.prefix}-s{g}"

    def __enter__(self) -> "Testbed":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Stops every process and removes every namespace this run made;
        SIGINT/SIGTERM arriving meanwhile are held back until it is done."""
        with deferred_signals():
            for p in self.procs:
                if p.poll() is None:
                    p.terminate()
            deadline = time.monotonic() + 3.0
            for p in self.procs:
                try:
                    p.wait(timeout=max(0.0, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
            for ns in reversed(self.namespaces):
                remove_namespace(ns)
            self.namespaces.clear()
            kernel.release(self.owner)
            self.loaded.clear()

    # helpers
    def _add_ns(self, ns: str) -> None:
        with deferred_signals():  # never a namespace made and not recorded
            _run(["ip", "netns", "add", ns])
            self.namespaces.append(ns)

    def ip(self, ns: str, *args: str) -> None:
        _run(["ip", "-n", ns, *args])

    def sh(self, ns: str, *argv: str, check: bool = True) -> subprocess.CompletedProcess:
        return _run(["ip", "netns", "exec", ns, *argv], check=check)

    def spawn(self, ns: str, argv: list[str], log_name: str) -> subprocess.Popen:
        with deferred_signals():
            out = open(self.work / f"{log_name}.log", "w")
            # A session of its own: a Ctrl-C at the terminal reaches this
            # process only, which then stops the children in order.
            p = subprocess.Popen(["ip", "netns", "exec", ns, *argv], stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
            out.close()
            self.procs.append(p)
        return p

    # the build
    def build(self) -> None:
        plan = self.plan
        self.loaded = ensure_congestion_controls(sorted({f.kernel_cc for f in plan.flows}), self.owner)
        # Namespaces under this prefix that exist before the build are a
        # dead process's (this pid, reused): not ours, and in the way.
        for ns in list_namespaces():
            if ns.startswith(self.prefix + "-"):
                remove_namespace(ns)
        R, D = self.router, self.receiver
        self._add_ns(R)
        self._add_ns(D)
        for g in plan.groups:
            self._add_ns(self.sender(g.index))
        # Large socket buffers: the window must never be limited by them
        # (1 BDP of 300 Mbit/s x 1 s is 37.5 MB).
        big = "4096 131072 134217728"
        for ns in self.namespaces:
            self.ip(ns, "link", "set", "lo", "up")
            self.sh(ns, "sysctl", "-q", "-w", f"net.ipv4.tcp_rmem={big}", f"net.ipv4.tcp_wmem={big}", "net.ipv4.tcp_no_metrics_save=1")
        self.sh(R, "sysctl", "-q", "-w", "net.ipv4.ip_forward=1", "net.ipv4.conf.all.rp_filter=0", "net.ipv4.conf.default.rp_filter=0")
        # receiver side: the bottleneck is the router's egress towards it
        _run(["ip", "link", "add", "d0", "netns", D, "type", "veth", "peer", "name", "rd", "netns", R])
        self.ip(D, "addr", "add", "10.78.0.1/24", "dev", "d0")
        self.ip(R, "addr", "add", "10.78.0.2/24", "dev", "rd")
        self.ip(D, "link", "set", "d0", "up")
        self.ip(R, "link", "set", "rd", "up")
        self.ip(D, "route", "add", "default", "via", "10.78.0.2")
        for g in plan.groups:
            S, i = self.sender(g.index), g.index
            _run(["ip", "link", "add", f"s{i}", "netns", S, "type", "veth", "peer", "name", f"r{i}", "netns", R])
            # One packet per skb: the bottleneck queue counts packets as the
            # simulator does (TSO/GSO would hand it 64 KB super-packets).
            self.ip(S, "link", "set", f"s{i}", "gso_max_segs", "1")
            self.ip(S, "addr", "add", f"10.77.{i}.1/24", "dev", f"s{i}")
            self.ip(R, "addr", "add", f"10.77.{i}.2/24", "dev", f"r{i}")
            self.ip(S, "link", "set", f"s{i}", "up")
            self.ip(R, "link", "set", f"r{i}", "up")
            route = ["route", "add", "default", "via", f"10.77.{i}.2"]
            if plan.initial_cwnd is not None:
                route += ["initcwnd", str(plan.initial_cwnd)]
            self.ip(S, *route)
        self._bottleneck()
        self._delay_line()
        self.meta["tcp_usec_ts"] = self._usec_ts()
        if self.rps:
            self._rps()

    def _bottleneck(self) -> None:
        plan, R = self.plan, self.router
        # htb shapes frames (IP packet + 14-byte Ethernet header): scaled so
        # that full-size IP packets leave at the scenario's rate.
        frame_rate = math.ceil(plan.rate_bps * (PACKET + L2_HEADER) / PACKET)
        default = "1" if plan.class_queues is None else "10"  # unclassified traffic: the only class, or class 0
        _run(["ip", "netns", "exec", R, "tc", "qdisc", "add", "dev", "rd", "root", "handle", "1:", "htb", "default", default])
        _run(["ip", "netns", "exec", R, "tc", "class", "add", "dev", "rd", "parent", "1:", "classid", "1:1", "htb", "rate", f"{frame_rate}bit", "ceil", f"{frame_rate}bit", "quantum", str(PACKET + L2_HEADER)])
        def fifo(q: tuple[str, int]) -> list[str]:
            kind, n = q
            if kind == "pkt":
                return ["pfifo", "limit", str(n)]
            return ["bfifo", "limit", str(math.floor(n * (PACKET + L2_HEADER) / PACKET))]  # IP bytes -> frame bytes

        tc = ["ip", "netns", "exec", R, "tc"]
        if plan.class_queues is None:
            leaf = fifo(plan.queue)
            _run([*tc, "qdisc", "add", "dev", "rd", "parent", "1:1", "handle", "10:", *leaf])
            self.meta["bottleneck"] = {"qdisc": f"htb rate {frame_rate}bit (frames) + {' '.join(leaf)}", "device": f"{R}/rd"}
            return
        # Strict priority (this kernel has no prio qdisc): one htb class per
        # priority class under the rate-limited parent, each guaranteed
        # next to nothing (8 bit/s) and borrowing up to the whole rate, at
        # htb priority c: the parent's rate goes to the lowest-numbered
        # class with a backlog first. Each class has its own FIFO; a u32
        # filter on the DSCP steers a packet to its class (others: class 0).
        leaves = []
        for c, q in enumerate(plan.class_queues):
            leaf = fifo(q)
            leaves.append(" ".join(leaf))
            minor = f"{0x10 + c:x}"
            _run([*tc, "class", "add", "dev", "rd", "parent", "1:1", "classid", f"1:{minor}", "htb", "rate", "8bit", "ceil", f"{frame_rate}bit", "prio", str(c), "quantum", str(PACKET + L2_HEADER)])
            _run([*tc, "qdisc", "add", "dev", "rd", "parent", f"1:{minor}", "handle", f"{0x20 + c:x}:", *leaf])
            _run([*tc, "filter", "add", "dev", "rd", "parent", "1:", "protocol", "ip", "prio", "1", "u32", "match", "ip", "dsfield", hex(dscp(c) << 2), "0xfc", "flowid", f"1:{minor}"])
        self.meta["bottleneck"] = {"qdisc": f"htb rate {frame_rate}bit (frames), strict priority: class c (DSCP CS<c>) -> htb class 1:{{10+c}} prio c: {'; '.join(leaves)}", "device": f"{R}/rd"}

    def _delay_line(self) -> None:
        plan, R = self.plan, self.router
        for dev in ("dla", "dlb"):
            self.ip(R, "tuntap", "add", "mode", "tun", "name", dev)
            self.sh(R, "sysctl", "-q", "-w", f"net.ipv4.conf.{dev}.rp_filter=0", f"net.ipv4.conf.{dev}.forwarding=1")
            # The queue in front of the line (the TUN device's) must never
            # overflow while the line is briefly descheduled: 500 packets by
            # default, a few ms at 300 Mbit/s.
            self.ip(R, "link", "set", dev, "txqueuelen", str(TUN_QUEUE_PKTS), "up")
        self.ip(R, "route", "add", "default", "dev", "dla", "table", "100")
        if self.delay_direction == "ack":
            self.ip(R, "rule", "add", "iif", "rd", "lookup", "100", "pref", "100")
            routes = [f"10.77.{g.index}.0/24={g.rtt_ns}" for g in plan.groups]
            default = plan.groups[0].rtt_ns
        else:
            for g in plan.groups:
                self.ip(R, "rule", "add", "iif", f"r{g.index}", "lookup", "100", "pref", "100")
            if len({g.rtt_ns for g in plan.groups}) > 1:
                raise field_error("flows", "per-group RTTs need delay_direction \"ack\" (the data of all groups shares one destination)")
            routes = []
            default = plan.groups[0].rtt_ns
        argv = [sys.executable, "-m", "longfat.testbed.delayline", "--input", "dla", "--output", "dlb", "--delay-ns", str(default), "--report", str(self.work / "delayline.json")]
        for r in routes:
            argv += ["--route", r]
        cpus = sorted(os.sched_getaffinity(0))
        if self.rps and len(cpus) > 1:
            argv += ["--cpu", str(cpus[-1])]
        if self.rt_priority:
            argv += ["--rt-priority", str(self.rt_priority)]
        self.delayline = self.spawn(R, argv, "delayline")
        self._wait_for_carrier(("dla", "dlb"))
        self.meta["delay_line"] = {"direction": self.delay_direction, "routes": routes, "default_delay_ns": default, "cpu": cpus[-1] if self.rps and len(cpus) > 1 else None, "sched_fifo_priority": self.rt_priority or None}

    def _wait_for_carrier(self, devs: tuple[str, ...]) -> None:
        """Waits until the delay line has opened its TUN devices (a TUN
        device without a reader has no carrier and drops what it is sent)."""
        deadline = time.monotonic() + DELAY_LINE_START_S
        while True:
            p = _run(["ip", "-n", self.router, "-j", "link", "show"], check=False)
            try:
                up = {d["ifname"] for d in json.loads(p.stdout) if "LOWER_UP" in d.get("flags", [])}
            except ValueError:
                up = set()
            if all(d in up for d in devs):
                return
            if self.delayline is not None and self.delayline.poll() is not None:
                log = (self.work / "delayline.log").read_text()[-500:]
                raise RuntimeError(f"testbed: the delay line stopped at its start (exit {self.delayline.returncode}): {' '.join(log.split())}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"testbed: the delay line did not open its TUN devices within {DELAY_LINE_START_S:g} s")
            time.sleep(0.02)

    def _usec_ts(self) -> bool:
        """Sets RTAX_FEATURE_TCP_USEC_TS on the hosts' routes (pyroute2);
        False where that is not possible (then timestamps tick in ms)."""
        code = (
            "import sys\n"
            "from pyroute2 import IPRoute\n"
            "with IPRoute() as ip:\n"
            "    for r in ip.get_routes(family=2, table=254):\n"
            "        if r.get_attr('RTA_GATEWAY') is None: continue\n"
            "        ip.route('replace', dst='0.0.0.0/0', gateway=r.get_attr('RTA_GATEWAY'), oif=r.get_attr('RTA_OIF'), metrics={'RTAX_FEATURES': %d, **({'RTAX_INITCWND': int(sys.argv[1])} if sys.argv[1] != '0' else {})})\n"
            "    print(sum(1 for r in ip.get_routes(family=2, table=254) if (r.get_nested('RTA_METRICS', 'RTAX_FEATURES') or 0) & %d))\n"
        ) % (RTAX_FEATURE_TCP_USEC_TS, RTAX_FEATURE_TCP_USEC_TS)
        ok = True
        for ns in [self.receiver] + [self.sender(g.index) for g in self.plan.groups]:
            p = self.sh(ns, sys.executable, "-c", code, str(self.plan.initial_cwnd or 0), check=False)
            ok = ok and p.returncode == 0 and p.stdout.strip() not in ("", "0")
        return ok

    def _rps(self) -> None:
        """Receive packet steering: the veths' receive work goes to the CPUs
        other than the delay line's (issue 15: needed on 2 vCPUs)."""
        cpus = sorted(os.sched_getaffinity(0))
        if len(cpus) < 2:
            return
        mask = sum(1 << c for c in cpus[:-1])
        devs = [(self.router, "rd"), (self.receiver, "d0")] + [(self.router, f"r{g.index}") for g in self.plan.groups] + [(self.sender(g.index), f"s{g.index}") for g in self.plan.groups]
        for ns, dev in devs:
            self.sh(ns, "sh", "-c", f"echo {mask:x} > /sys/class/net/{dev}/queues/rx-0/rps_cpus", check=False)
        self.meta["rps_cpus_mask"] = f"{mask:x}"

    def ping_check(self) -> dict:
        """Measures each group's RTT with ping; refuses the run if one is
        off by more than the tolerance."""
        out = {}
        for g in self.plan.groups:
            p = self.sh(self.sender(g.index), "ping", "-n", "-c", str(PING_COUNT), "-i", "0.2", "-W", "3", "10.78.0.1", check=False)
            times = [float(x) for x in re.findall(r"time=([0-9.]+) ms", p.stdout)]
            want = g.rtt_ns / 1e6
            tol = max(RTT_TOLERANCE_NS, RTT_TOLERANCE_FRAC * g.rtt_ns) / 1e6
            if len(times) < PING_COUNT // 2:
                raise RuntimeError(f"testbed: the emulated path of flow group {g.index} does not answer ping ({len(times)}/{PING_COUNT} replies)")
            got = statistics.median(times)
            out[str(g.index)] = {"planned_ms": want, "measured_median_ms": got, "measured_ms": times}
            if abs(got - want) > tol:
                raise ScenarioError(f"testbed: the emulated RTT of flow group {g.index} is {got:.2f} ms, not {want:g} ms (tolerance {tol:g} ms); the machine may be too busy", "")
        self.meta["ping"] = out
        return out

    def run_flows(self, progress: Callable[[float, float], None] | None = None) -> dict:
        plan, w = self.plan, self.work
        py = sys.executable
        dur = plan.duration_ns
        # Every agent starts, says it is ready (the receiver listening), and
        # waits for time 0, fixed only then: a busy machine may take seconds
        # to start a Python process.
        t0_file = w / "t0"
        common = ["--t0-file", str(t0_file), "--interval", str(plan.interval_ns), "--duration", str(dur)]
        agents, names = [], ["recv", "qdisc"] + [f"send{g.index}" for g in plan.groups]
        agents.append(self.spawn(self.receiver, [py, str(AGENT), "recv", *common, "--ready", str(w / "recv.ready"), "--out", str(w / "recv.json"), "--addr", "10.78.0.1", "--port", str(PORT), "--flows", str(len(plan.flows))], "recv"))
        agents.append(self.spawn(self.router, [py, str(AGENT), "qdisc", *common, "--ready", str(w / "qdisc.ready"), "--out", str(w / "qdisc.json"), "--dev", "rd"], "qdisc"))
        for g in plan.groups:
            flows = [{"index": f.index, "cc": f.kernel_cc, "start_ns": f.start_ns, "stop_ns": f.stop_ns, "size_bytes": f.size_bytes, "tos": dscp(f.priority_class) << 2} for f in g.flows]
            agents.append(self.spawn(self.sender(g.index), [py, str(AGENT), "send", *common, "--ready", str(w / f"send{g.index}.ready"), "--out", str(w / f"send{g.index}.json"), "--dst", "10.78.0.1", "--port", str(PORT), "--flows", json.dumps(flows)], f"send{g.index}"))
        deadline = time.monotonic() + AGENT_START_S
        while not all((w / f"{n}.ready").exists() for n in names):
            for a, n in zip(agents, names):
                if a.poll() is not None:
                    log = (w / f"{n}.log").read_text()[-500:]
                    raise RuntimeError(f"testbed: agent {n} stopped before the start (exit {a.returncode}): {' '.join(log.split())}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"testbed: the traffic agents were not ready after {AGENT_START_S:g} s")
            time.sleep(0.02)
        t0 = time.clock_gettime_ns(time.CLOCK_MONOTONIC) + 200_000_000
        tmp = w / "t0.part"
        tmp.write_text(str(t0))
        tmp.rename(t0_file)
        end = t0 + dur
        while any(a.poll() is None for a in agents):
            now = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
            if progress is not None:
                progress(max(0, now - t0) / 1e9, dur / 1e9)
            if now > end + 15_000_000_000:
                raise RuntimeError("testbed: the traffic agents did not finish 15 s after the end of the run")
            if self.delayline is not None and self.delayline.poll() is not None:
                raise RuntimeError(f"testbed: the delay line stopped (exit {self.delayline.returncode}); see its log")
            time.sleep(0.1)
        for a, name in zip(agents, names):
            if a.returncode != 0:
                log = (w / f"{name}.log").read_text()[-500:]
                raise RuntimeError(f"testbed: agent {name} failed (exit {a.returncode}): {' '.join(log.split())}")
        self.meta["delay_line"]["report"] = self.stop_delay_line()
        self.meta["delay_line"]["tun_input_drops"] = self.tun_drops()
        return {"t0_ns": t0}

    def tun_drops(self) -> int | None:
        """Packets the TUN device in front of the line dropped (its queue full)."""
        p = _run(["ip", "-n", self.router, "-s", "-j", "link", "show", "dla"], check=False)
        try:
            return int(json.loads(p.stdout)[0]["stats64"]["tx"]["dropped"])
        except (ValueError, KeyError, IndexError, TypeError):
            return None

    def stop_delay_line(self) -> dict | None:
        p = self.delayline
        if p is None:
            return None
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        try:
            return json.loads((self.work / "delayline.json").read_text())
        except (OSError, ValueError):
            return None


# ---- results ------------------------------------------------------------------------
