"""The namespace testbed: a scenario's dumbbell on real Linux TCP.

``longfat testbed run SCENARIO --out DIR`` builds the scenario's dumbbell
from network namespaces and veth pairs on this machine, runs its flows on
the kernel's TCP (the kernel's own reno and cubic, or longfat's BPF
congestion controls ``longfat_<name>``), samples them, and writes the same
result files as ``longfat run`` (flows.parquet, links.parquet,
summary.json, scenario.json, plot.png) plus the raw measurements in
``testbed/``. docs/testbed.md has the picture, the measured ceiling and
the reasons for every refusal.

::

    sender ns lf<pid>-s<g>            router ns lf<pid>-r                   receiver ns lf<pid>-d
    (one per flow group)
    s<g> 10.77.g.1 ── veth ── r<g> 10.77.g.2          rd 10.78.0.2 ── veth ── d0 10.78.0.1
                                 │   htb+pfifo/bfifo ▲ │ (the bottleneck: rate, queue)
         data ──────────────────►├───────────────────┘ │
                                 │                     │
         ACKs ◄── main table ◄── dlb ◄─ delay line ◄── dla ◄── rule "iif rd" ◄── ACKs
                                 (python -m longfat.testbed_delayline, one FIFO per group's RTT)

With ``delay_direction = "data"`` the rule is ``iif r<g>`` instead and the
data is delayed before the bottleneck. Everything is created under the
prefix ``lf<pid>-`` and removed on success, on error, on SIGINT and on
SIGTERM; namespaces left by a killed run (its pid gone), and the BPF
programs it loaded (recorded as its own, see longfat.kernel), are removed
by the next run or by ``longfat testbed clean``.
"""

from __future__ import annotations

import fcntl
import json
import math
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator

import numpy as np

from longfat._native import ScenarioError, parse_duration_ns, parse_rate_bps, parse_size
from longfat import kernel
from longfat.outdir import _pid_alive, atomic_dir, deferred_signals

# ---- limits, each measured or argued in docs/testbed.md ------------------------

#: Highest bottleneck rate the testbed emulates faithfully on this kind of
#: machine (2 vCPUs): see docs/testbed.md, "Ceiling", for the measurement.
#: LONGFAT_TESTBED_CEILING_MBPS overrides it, to measure another machine's.
CEILING_BPS = 300_000_000
if os.environ.get("LONGFAT_TESTBED_CEILING_MBPS", "").isdigit():
    CEILING_BPS = int(os.environ["LONGFAT_TESTBED_CEILING_MBPS"]) * 1_000_000
#: Shortest and longest RTT (the delay line's own latency is ~0.1 ms; a
#: delay line holds a BDP of packets in memory).
MIN_RTT_NS = 2_000_000
MAX_RTT_NS = 1_000_000_000
#: The agents sample TCP_INFO from Python threads: not faster than this.
MIN_SAMPLE_INTERVAL_NS = 10_000_000
#: The testbed runs in real time.
MAX_DURATION_NS = 3600 * 1_000_000_000
MAX_FLOWS = 64
MAX_GROUPS = 64
#: Largest queue (packets, or bytes / 1500).
MAX_QUEUE_PKTS = 100_000
#: The ping check: the measured RTT (median of PING_COUNT pings) must be
#: within max(RTT_TOLERANCE_NS, RTT_TOLERANCE_FRAC * RTT) of the scenario's.
RTT_TOLERANCE_NS = 1_000_000
RTT_TOLERANCE_FRAC = 0.03
PING_COUNT = 6
#: Ethernet header on a veth: qdiscs count it, the simulator's 1500-byte
#: packets do not; rates and byte limits are scaled by (1500 + 14) / 1500.
L2_HEADER = 14
PACKET = 1500
#: RTAX_FEATURE_TCP_USEC_TS (include/uapi/linux/rtnetlink.h): microsecond
#: TCP timestamps on a route.
RTAX_FEATURE_TCP_USEC_TS = 0x10
#: Congestion controls of the simulator that are the kernel's own.
KERNEL_BUILTIN = {"reno": "reno", "newreno": "reno", "cubic": "cubic"}
#: Namespaces made by a testbed run: lf<pid>-<role>.
NS_PATTERN = re.compile(r"^lf(?P<pid>[0-9]+)-(?P<role>r|d|s[0-9]+)$")
PORT = 5001
#: How long the agents may take to start.
AGENT_START_S = 30.0
#: How long the delay line may take to open its TUN devices.
DELAY_LINE_START_S = 30.0
AGENT = Path(__file__).with_name("testbed_agent.py")
DELAY_DIRECTIONS = ("ack", "data")
#: Packets the TUN device in front of the delay line may hold.
TUN_QUEUE_PKTS = 100_000
#: The delay line runs under SCHED_FIFO at this priority (0: not).
DELAY_LINE_RT_PRIORITY = 50
if os.environ.get("LONGFAT_TESTBED_RT_PRIORITY", "").isdigit():
    DELAY_LINE_RT_PRIORITY = int(os.environ["LONGFAT_TESTBED_RT_PRIORITY"])


def _err(field: str, message: str) -> ScenarioError:
    return ScenarioError(f"{field}: {message}", field)


def kernel_cc(cc: str) -> str:
    """The kernel's name of a scenario's congestion control."""
    if cc in KERNEL_BUILTIN:
        return KERNEL_BUILTIN[cc]
    # The loader knows each BPF program's kernel name (at most 15
    # characters, TCP_CA_NAME_MAX: highspeed is longfat_hstcp).
    try:
        return kernel.resolve(cc)[1]
    except kernel.KernelError:
        return f"longfat_{cc}"


def available_congestion_controls() -> list[str]:
    try:
        return Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()
    except OSError:
        return []


def ensure_congestion_controls(names: Iterable[str], owner: kernel.Owner) -> list[str]:
    """Makes sure every kernel congestion control in ``names`` is registered,
    loading longfat's BPF programs that are not, and records longfat's
    programs as held by ``owner`` (kernel.load): they stay loaded while it
    holds them, and ``kernel.release(owner)`` at cleanup unloads those that
    nobody else holds. Returns the kernel names it holds. A program another
    tool registered is used as it is and never unloaded."""
    names = list(names)
    have = set(available_congestion_controls())
    ours = {ca for _, ca in kernel.built()}
    for n in names:
        if n not in have and n not in ours:
            reason = kernel.not_built_reason()
            why = f" (this build has no BPF programs: {reason})" if reason else ""
            raise ScenarioError(
                f"testbed: congestion control {n!r} is not registered in this kernel and is not one of longfat's BPF programs{why}"
                f" (available: {', '.join(sorted(have)) or 'none'}; run `longfat kernel load {n}` first if it is one)",
                "flows",
            )
    wanted = [n for n in names if n in ours]
    if not wanted:
        return []
    try:
        return [ca for ca, what in kernel.load(wanted, owner=owner) if what in ("loaded", "already loaded")]
    except kernel.KernelError as e:
        kernel.release(owner)
        raise ScenarioError(f"testbed: {e}", "flows") from None


# ---- the plan: what to build, or why not -----------------------------------------


@dataclass
class FlowPlan:
    index: int
    name: str
    cc: str
    kernel_cc: str
    group: int
    start_ns: int
    stop_ns: int
    size_bytes: int | None
    #: Strict-priority class (0 first): DSCP class selector CS<class>.
    priority_class: int = 0


@dataclass
class GroupPlan:
    index: int
    rtt_ns: int
    flows: list[FlowPlan] = field(default_factory=list)


@dataclass
class Plan:
    spec: dict
    name: str
    rate_bps: int
    bottleneck_delay_ns: int
    #: ("pkt", packets) or ("bytes", bytes), as the simulator resolves it.
    queue: tuple[str, int]
    groups: list[GroupPlan]
    duration_ns: int
    measure_from_ns: int
    interval_ns: int
    initial_cwnd: int | None
    #: Strict priority: one queue per class, class 0 first (None: one FIFO).
    class_queues: list[tuple[str, int]] | None = None

    @property
    def flows(self) -> list[FlowPlan]:
        return sorted((f for g in self.groups for f in g.flows), key=lambda f: f.index)



def dscp(priority_class: int) -> int:
    """The DSCP a flow of a priority class sends with: class selector CS<c>."""
    return 8 * priority_class


def _duration(field: str, text, default: int | None = None) -> int:
    if text is None:
        if default is None:
            raise _err(field, "required")
        return default
    try:
        return parse_duration_ns(str(text))
    except ValueError as e:
        raise _err(field, str(e)) from None


def _is_zero_duration(text) -> bool:
    return text is None or _duration("", text) == 0


#: Flow fields the testbed emulates; every other field present is refused.
_FLOW_FIELDS = {"name", "cc", "transport", "count", "start", "start_spacing", "stop", "size", "access_delay", "tcp", "start_jitter", "access_delay_jitter"}
#: [flows.tcp] fields the testbed honours (profile: the kernel is the
#: transport), and the only values some may take: the kernel's receiver
#: always delays ACKs, and its segments carry 52 bytes of IP and TCP
#: headers with timestamps (MSS 1448 on a 1500-byte MTU).
_TCP_FIELDS = {"profile", "initial_cwnd", "delayed_ack", "header_size", "packet_size", "priority_class"}
_TCP_FIXED = {"delayed_ack": (True, "true"), "header_size": ("52B", '"52B"'), "packet_size": ("1500B", '"1500B"')}


def plan(spec: dict) -> Plan:
    """Checks that the testbed can emulate the scenario faithfully and says
    how; raises ScenarioError naming the first field it cannot (the
    scenario must already be valid for the simulator: ``runner.prepare``)."""
    net = spec.get("network", {})
    topo = net.get("topology")
    if topo != "dumbbell":
        raise _err("network.topology", f"{topo!r} cannot be emulated by the testbed; allowed: \"dumbbell\"")
    b = net.get("bottleneck", {})
    disc = b.get("discipline", "droptail")
    n_classes = int(b.get("classes", 2)) if disc == "priority" else 1
    if disc == "priority" and b.get("buffer", "per_class") != "per_class":
        raise _err("network.bottleneck.buffer", f"{b['buffer']!r}: a shared buffer with push-out has no qdisc here; allowed: \"per_class\"")
    for k in ("loss", "reverse_loss"):
        if b.get(k):
            raise _err(f"network.bottleneck.{k}", f"{b[k]} (random loss) cannot be emulated by the testbed (no netem on this kernel); allowed: 0")
    rate = parse_rate_bps(b["rate"])
    if rate > CEILING_BPS:
        raise _err("network.bottleneck.rate", f"{b['rate']} is above the testbed's ceiling on this machine; allowed: up to {CEILING_BPS // 1_000_000}Mbps (measured, see docs/testbed.md)")
    b_delay = _duration("network.bottleneck.delay", b["delay"])
    access = net.get("access", {}) or {}
    a_delay = _duration("network.access.delay", access.get("delay"), 0)
    if "rate" in access and parse_rate_bps(access["rate"]) < 10 * rate:
        raise _err("network.access.rate", f"{access['rate']}: the testbed's access links are veths without a rate limit, faithful only for access rates of at least 10 x the bottleneck's ({rate * 10 / 1e6:g}Mbps)")
    for k in ("udp", "short_flows", "web"):
        if spec.get(k):
            raise _err(k, "the testbed runs long-lived TCP flows only; UDP sources, short flows and web traffic are not emulated (remove them)")
    run = spec.get("run", {})
    duration = _duration("run.duration", run.get("duration"))
    if duration > MAX_DURATION_NS:
        raise _err("run.duration", f"{run['duration']}: the testbed runs in real time; allowed up to 1h")
    measure_from = _duration("run.measure_from", run.get("measure_from"), 0)
    interval = _duration("run.sample_interval", run.get("sample_interval"), min(max(duration // 1000, MIN_SAMPLE_INTERVAL_NS), duration))
    if interval < MIN_SAMPLE_INTERVAL_NS:
        raise _err("run.sample_interval", f"{run['sample_interval']} is below the testbed's 10ms (TCP_INFO is sampled from Python); allowed 10ms..=run.duration")

    groups: dict[int, GroupPlan] = {}
    flows: list[FlowPlan] = []
    initial_cwnd = None
    specs = spec.get("flows", [])
    if not specs:
        raise _err("flows", "the testbed needs at least one TCP flow")
    for i, f in enumerate(specs):
        fld = f"flows[{i}]"
        for k in f:
            if k not in _FLOW_FIELDS:
                raise _err(f"{fld}.{k}", "not emulated by the testbed (remove it, or run the simulator)")
        for k in ("start_jitter", "access_delay_jitter"):
            if not _is_zero_duration(f.get(k)):
                raise _err(f"{fld}.{k}", f"{f[k]}: random jitter is not emulated by the testbed; allowed: \"0s\"")
        tcp = f.get("tcp", {}) or {}
        for k in tcp:
            if k not in _TCP_FIELDS:
                raise _err(f"{fld}.tcp.{k}", f"not emulated by the testbed (the kernel's TCP runs with its defaults); allowed fields: {', '.join(sorted(_TCP_FIELDS))}")
        for k, (value, shown) in _TCP_FIXED.items():
            if k in tcp and tcp[k] != value:
                raise _err(f"{fld}.tcp.{k}", f"{json.dumps(tcp[k])}: the kernel's TCP cannot do that here; allowed: {shown}")
        if "initial_cwnd" in tcp:
            iw = tcp["initial_cwnd"]
            if iw != int(iw) or not (1 <= iw <= 1000):
                raise _err(f"{fld}.tcp.initial_cwnd", f"{iw}: the kernel takes a whole number of packets (route initcwnd); allowed 1..=1000")
            if initial_cwnd is not None and initial_cwnd != int(iw):
                raise _err(f"{fld}.tcp.initial_cwnd", "differs between flow groups; the testbed sets one initcwnd for all")
            initial_cwnd = int(iw)
        cc = f["cc"]
        # PLT in either spelling: transport = "plt", or its alias cc = "plt".
        if cc == "plt":
            raise _err(f"{fld}.cc", "\"plt\" (two connections with priority classes) is not emulated by the testbed")
        if f.get("transport", "tcp") != "tcp":
            raise _err(f"{fld}.transport", f"{json.dumps(f['transport'])} (PLT: two connections with priority classes) is not emulated by the testbed; allowed: \"tcp\"")
        count = int(f.get("count", 1))
        start = _duration(f"{fld}.start", f.get("start"), 0)
        spacing = _duration(f"{fld}.start_spacing", f.get("start_spacing"), 0)
        stop = _duration(f"{fld}.stop", f.get("stop"), duration)
        size = None
        if "size" in f:
            kind, n = parse_size(str(f["size"]))
            size = int(n * (PACKET - 40)) if kind == "pkt" else int(n)
            if kind == "bdp":
                raise _err(f"{fld}.size", "give bytes or packets")
        access_delay = _duration(f"{fld}.access_delay", f.get("access_delay"), a_delay)
        # The simulator's path: sender access link, bottleneck, receiver
        # access link, each way (docs/scenarios.md, [[flows]] access_delay).
        rtt = 2 * (access_delay + b_delay + a_delay)
        if not (MIN_RTT_NS <= rtt <= MAX_RTT_NS):
            raise _err(f"{fld}.access_delay" if "access_delay" in f else "network.bottleneck.delay", f"the path's RTT {rtt / 1e6:g}ms is outside the testbed's range; allowed {MIN_RTT_NS / 1e6:g}ms..={MAX_RTT_NS / 1e6:g}ms")
        g = groups.setdefault(rtt, GroupPlan(len(groups), rtt))
        for k in range(count):
            name = (f["name"] if count == 1 else f"{f['name']}.{k}") if "name" in f else f"{cc}{len(flows)}"
            fp = FlowPlan(len(flows), name, cc, kernel_cc(cc), g.index, start + spacing * k, stop, size, int(tcp.get("priority_class", 0)))
            flows.append(fp)
            g.flows.append(fp)
    if len(flows) > MAX_FLOWS:
        raise _err("flows", f"{len(flows)} flows; the testbed runs at most {MAX_FLOWS}")
    if len(groups) > MAX_GROUPS:
        raise _err("flows", f"{len(groups)} different RTTs; the testbed emulates at most {MAX_GROUPS}")

    q = str(b["queue"])
    bdp_rtt = _duration("network.bdp_rtt", net.get("bdp_rtt"), max(g.rtt_ns for g in groups.values()))

    def resolve(fld: str, text: str) -> tuple[str, int]:
        if text == "unlimited":
            raise _err(fld, "\"unlimited\" cannot be emulated; give packets, bytes or a BDP fraction")
        kind, n = parse_size(text)
        if kind == "bdp":
            out = ("bytes", round(rate * bdp_rtt / 8e9 * n))
        else:
            out = ("pkt" if kind == "pkt" else "bytes", int(n))
        pkts = out[1] if out[0] == "pkt" else out[1] / PACKET
        if pkts > MAX_QUEUE_PKTS:
            raise _err(fld, f"{text} is {pkts:.0f} packets; the testbed allows up to {MAX_QUEUE_PKTS}")
        return out

    queue = resolve("network.bottleneck.queue", q)
    class_queues = None
    if disc == "priority":
        given = b.get("class_queues")
        class_queues = [resolve(f"network.bottleneck.class_queues[{c}]", str(given[c])) for c in range(n_classes)] if given else [queue] * n_classes
    return Plan(spec, spec.get("name") or "run", rate, b_delay, queue, sorted(groups.values(), key=lambda g: g.index), duration, measure_from, interval, initial_cwnd, class_queues)


# ---- the environment --------------------------------------------------------------


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


def _remove_namespace(ns: str) -> None:
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
        if not m or _pid_alive(int(m["pid"])):
            continue
        _remove_namespace(ns)
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
                _remove_namespace(ns)
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
                _remove_namespace(ns)
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
                raise _err("flows", "per-group RTTs need delay_direction \"ack\" (the data of all groups shares one destination)")
            routes = []
            default = plan.groups[0].rtt_ns
        argv = [sys.executable, "-m", "longfat.testbed_delayline", "--input", "dla", "--output", "dlb", "--delay-ns", str(default), "--report", str(self.work / "delayline.json")]
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


def _load(path: Path) -> dict:
    doc = json.loads(path.read_text())
    if doc.get("errors"):
        raise RuntimeError(f"testbed: {path.name}: {'; '.join(doc['errors'][:3])}")
    return doc


def results(plan: Plan, work: Path, meta: dict):
    """The run's RunResult, from the agents' samples (same tables and
    summary keys as the simulator's; see docs/scenarios.md, Outputs)."""
    from longfat.runner import RunResult, _table

    interval = plan.interval_ns
    recv = _load(work / "recv.json")
    qd = _load(work / "qdisc.json")
    sends = {g.index: _load(work / f"send{g.index}.json") for g in plan.groups}
    flows = plan.flows
    nf = len(flows)
    ticks = sorted({k for k, _ in recv["samples"]})
    K = len(ticks)
    if K == 0:
        raise RuntimeError("testbed: no samples were taken")
    kidx = {k: j for j, k in enumerate(ticks)}
    rbytes = np.zeros((K, nf))
    for k, counts in recv["samples"]:
        rbytes[kidx[k]] = counts
    info: list[list[dict | None]] = [[None] * nf for _ in range(K)]
    for g in plan.groups:
        for k, row in sends[g.index]["samples"]:
            if k in kidx:
                for i, d in row.items():
                    info[kidx[k]][int(i)] = d
    # carry a flow's last TCP_INFO forward over a missed sample
    for i in range(nf):
        last = None
        for j in range(K):
            if info[j][i] is None:
                info[j][i] = last
            last = info[j][i]

    def col(name: str, default=0):
        return np.array([[default if info[j][i] is None or info[j][i].get(name) is None else info[j][i][name] for i in range(nf)] for j in range(K)], dtype=float)

    t_ns = np.array(ticks, dtype=np.uint64) * np.uint64(interval)
    dt = interval / 1e9
    goodput = np.diff(np.vstack([np.zeros(nf), rbytes]), axis=0) * 8 / dt
    sent_b = col("bytes_sent")
    throughput = np.diff(np.vstack([np.zeros(nf), sent_b]), axis=0) * 8 / dt
    cwnd = col("snd_cwnd", math.nan)
    ssthresh = col("snd_ssthresh", math.nan)
    ssthresh[ssthresh >= 0x7FFFFFFF] = math.inf  # TCP_INFINITE_SSTHRESH
    srtt = col("rtt_us") * 1000
    retrans = col("total_retrans")
    rtos = col("total_rto")
    n = K * nf
    flow_cols = {
        "time_ns": np.repeat(t_ns, nf),
        "flow": np.tile(np.arange(nf, dtype=np.uint32), K),
        "goodput_bps": goodput.reshape(n),
        "throughput_bps": throughput.reshape(n),
        "cwnd_pkts": cwnd.reshape(n),
        "ssthresh_pkts": ssthresh.reshape(n),
        "srtt_ns": srtt.reshape(n).astype(np.uint64),
        # TCP_INFO has no latest RTT sample: the smoothed RTT stands in.
        "rtt_ns": srtt.reshape(n).astype(np.uint64),
        "retransmits": retrans.reshape(n).astype(np.uint64),
        "timeouts": rtos.reshape(n).astype(np.uint64),
    }
    flows_t = _table(flow_cols, "flow", {"flow_name": [f.name for f in flows], "algorithm": [f.cc for f in flows]})

    # the bottleneck: the leaf qdiscs (pfifo/bfifo: one, or one per
    # priority class) hold the queue and count the drops
    def leaves(row: dict) -> dict:
        out = {"bytes": 0, "packets": 0, "qlen": 0, "backlog": 0, "drops": 0}
        for q in row.values():
            if q.get("kind") in ("pfifo", "bfifo"):
                for k in out:
                    out[k] += q.get(k, 0)
        return out

    qs = {k: leaves(row) for k, row in qd["samples"]}
    base = qs.get(0, {})

    def qcol(name: str) -> np.ndarray:
        return np.array([float(qs.get(k, {}).get(name, 0)) for k in ticks])

    def qdelta(name: str) -> np.ndarray:
        v = np.concatenate([[float(base.get(name, 0))], qcol(name)])
        return np.diff(v)

    qlen = qcol("qlen")
    backlog = qcol("backlog") - L2_HEADER * qlen
    ip_bytes = qdelta("bytes") - L2_HEADER * qdelta("packets")
    util = ip_bytes * 8 / (plan.rate_bps * dt)
    drops = qdelta("drops")
    link_cols = {
        "time_ns": t_ns,
        "link": np.zeros(K, dtype=np.uint32),
        "queue_pkts": qlen.astype(np.uint64),
        "queue_bytes": np.maximum(backlog, 0).astype(np.uint64),
        "utilization": util,
        "drops_overflow": np.maximum(drops, 0).astype(np.uint64),
        "drops_random": np.zeros(K, dtype=np.uint64),
    }
    links_t = _table(link_cols, "link", {"link_name": ["bottleneck"]})

    # the summary over [measure_from, duration]
    t_s = t_ns.astype(float) / 1e9
    win = t_s > plan.measure_from_ns / 1e9 + 1e-9
    span = plan.duration_ns / 1e9 - plan.measure_from_ns / 1e9
    j0 = int(np.argmax(win)) if win.any() else K - 1

    def at_start(a: np.ndarray) -> np.ndarray:
        return a[j0 - 1] if j0 > 0 else np.zeros(a.shape[1:])

    g_bytes = rbytes[-1] - at_start(rbytes)
    s_bytes = sent_b[-1] - at_start(sent_b)
    segs = col("data_segs_out")
    done = recv.get("done_at_ns") or [None] * nf
    t0 = meta["t0_ns"]
    # Fast recoveries: the sender namespace's TcpExt counters over the window,
    # for a group of one flow (a namespace's counters mix its flows).
    recoveries: dict[int, int] = {}
    for g in plan.groups:
        ns = {k: c for k, c in sends[g.index].get("netstat", [])}
        if len(g.flows) != 1 or not ns:
            continue
        before = max((k for k in ns if k <= ticks[j0 - 1]), default=None) if j0 > 0 else 0
        last = max(ns)
        if before is None or before not in ns:
            continue
        rec = lambda c: c.get("TCPSackRecovery", 0) + c.get("TCPRenoRecovery", 0)
        recoveries[g.flows[0].index] = rec(ns[last]) - rec(ns[before])
    def limited_frac(name: str, i: int) -> float | None:
        v = col(name, math.nan)[:, i]
        if not np.isfinite(v[-1]):
            return None
        v0 = at_start(np.nan_to_num(col(name)))[i]
        return float((v[-1] - v0) / 1e6 / span)

    flow_rows = []
    for f in flows:
        i = f.index
        goodput_i = g_bytes[i] * 8 / span
        last = info[-1][i] or {}
        ct = None
        if f.size_bytes is not None and done[i] is not None:
            ct = (done[i] - (t0 + f.start_ns)) / 1e9
        # totals over the measurement window, as the simulator's summary
        sent_pkts = int(segs[-1, i] - at_start(segs)[i])
        rtx = int(retrans[-1, i] - at_start(retrans)[i])
        flow_rows.append({
            "algorithm": f.cc,
            "base_rtt_ms": plan.groups[f.group].rtt_ns / 1e6,
            "completion_time_s": ct,
            "fast_recoveries": recoveries.get(i),  # None: the flow shares its namespace's counters
            "final_cwnd_pkts": last.get("snd_cwnd"),
            "flow": i,
            "goodput_bps": goodput_i,
            "name": f.name,
            "retransmit_rate": rtx / sent_pkts if sent_pkts else 0.0,
            "retransmits": rtx,
            "sent_pkts": sent_pkts,
            "throughput_bps": s_bytes[i] * 8 / span,
            "timeouts": int(rtos[-1, i] - at_start(rtos)[i]),
            "kernel_cc": f.kernel_cc,
            # Shares of the window the kernel says the flow was limited by
            # the receiver's window or its send buffer (the sending
            # application), not by cwnd (tcpi_rwnd_limited, tcpi_sndbuf_limited).
            "rwnd_limited_frac": limited_frac("rwnd_limited_us", i),
            "sndbuf_limited_frac": limited_frac("sndbuf_limited_us", i),
        })
    sel = win
    w_drops = float(drops[sel].sum())
    w_sent = float(qdelta("packets")[sel].sum())
    offered = w_sent + w_drops
    link_row = {
        "delay_ms": plan.bottleneck_delay_ns / 1e6,
        "drops_overflow": int(w_drops),
        "drops_random": 0,
        "link": 0,
        "loss_rate": w_drops / offered if offered else 0.0,
        "mean_queue_pkts": float(qlen[sel].mean()) if sel.any() else 0.0,
        "monitored": True,
        "name": "bottleneck",
        "offered_pkts": int(offered),
        "rate_bps": plan.rate_bps,
        "utilization": float(ip_bytes[sel].sum() * 8 / (plan.rate_bps * span)) if sel.any() else 0.0,
    }
    gp = [r["goodput_bps"] for r in flow_rows]
    sq = sum(x * x for x in gp)
    summary = {
        "end_s": plan.duration_ns / 1e9,
        "flows": flow_rows,
        "jain_fairness": (sum(gp) ** 2 / (len(gp) * sq)) if sq > 0 else None,
        "links": [link_row],
        "measure_from_s": plan.measure_from_ns / 1e9,
        "short_flows": [],
        "tcp_goodput_bps": float(sum(gp)),
        "scenario": plan.spec.get("name"),
        "seed": plan.spec.get("run", {}).get("seed", 1),
        "testbed": meta,
    }
    return RunResult(plan.spec, summary, flows_t, links_t, {}, None)


#: Above this 1-minute load average per CPU a run gets a warning.
BUSY_LOAD_PER_CPU = 4.0
#: A run is marked unfaithful when more than this fraction of the delay
#: line's packets left more than 1 ms late (the issue's measurement: < 0.15 %).
MAX_LATE_FRACTION = 0.005


def faithfulness(meta: dict) -> list[str]:
    """Why the run may not be faithful (empty: no reason found)."""
    why = []
    dl = (meta.get("delay_line") or {}).get("report")
    if not dl:
        why.append("the delay line gave no report")
        return why
    fwd = max(dl.get("forwarded", 0), 1)
    late = dl.get("late_over_1ms", 0) / fwd
    if late > MAX_LATE_FRACTION:
        why.append(f"the delay line released {100 * late:.2f} % of its packets more than 1 ms late (allowed {100 * MAX_LATE_FRACTION:g} %): the machine was too busy")
    tun = (meta.get("delay_line") or {}).get("tun_input_drops")
    if tun:
        why.append(f"the TUN device in front of the delay line dropped {tun} packets")
    if dl.get("dropped_full") or dl.get("write_errors"):
        why.append(f"the delay line dropped {dl.get('dropped_full', 0)} packets (full) and failed {dl.get('write_errors', 0)} writes")
    return why


def machine_meta() -> dict:
    try:
        load = os.getloadavg()
    except OSError:
        load = None
    return {
        "kernel": platform.release(),
        "cpus": len(os.sched_getaffinity(0)),
        "load_average_at_start": load,
        "ceiling_bps": CEILING_BPS,
        "note": "a run on real Linux TCP in network namespaces (longfat testbed), not a simulation; not seeded, not deterministic",
    }


def execute(
    p: Plan,
    work: Path,
    *,
    delay_direction: str = "ack",
    rps: bool = True,
    progress: Callable[[float, float], None] | None = None,
    log: Callable[[str], None] = lambda s: None,
):
    """Builds the testbed for a plan, runs it (raw measurements into the
    existing directory ``work``), removes it, and returns the RunResult."""
    meta = machine_meta()
    with Testbed(p, work, delay_direction=delay_direction, rps=rps, log=log) as tb:
        tb.build()
        tb.ping_check()
        meta.update(tb.run_flows(progress))
        meta.update(tb.meta)
    meta["unfaithful_because"] = faithfulness(meta)
    meta["faithful"] = not meta["unfaithful_because"]
    for why in meta["unfaithful_because"]:
        log(f"warning: {why}")
    meta["load_average_at_end"] = os.getloadavg()
    busy = max(meta["load_average_at_start"][0], meta["load_average_at_end"][0]) if meta.get("load_average_at_start") else None
    if busy is not None and busy > BUSY_LOAD_PER_CPU * meta["cpus"]:
        meta["busy_warning"] = (f"the machine was busy (load average {busy:.1f} on {meta['cpus']} CPUs): other work delays the hosts' packet "
                                "processing and bunches ACKs; compare such a run with care (a CUBIC run at load 11 lost 9 x more than at load 5)")
        log(f"warning: {meta['busy_warning']}")
    return results(p, work, meta)


def prepare_run(spec: dict, delay_direction: str = "ack") -> Plan:
    """Everything checked before a run builds anything: the options, the
    scenario (refusals), the machine; and namespaces of killed runs swept."""
    if delay_direction not in DELAY_DIRECTIONS:
        raise _err("--delay-direction", f"{delay_direction!r}; allowed: {', '.join(DELAY_DIRECTIONS)}")
    p = plan(spec)
    check_environment()
    return p


def run(
    spec: dict,
    out: str | Path,
    *,
    force: bool = False,
    plot: bool = True,
    delay_direction: str = "ack",
    rps: bool = True,
    progress: Callable[[float, float], None] | None = None,
    log: Callable[[str], None] = lambda s: None,
):
    """Runs a (validated) scenario on the testbed and saves its results to
    ``out`` atomically. Raises ScenarioError for a scenario or a machine the
    testbed refuses, before anything is built or written."""
    from longfat.outdir import check_output_dir
    from longfat.plot import plot_run

    p = prepare_run(spec, delay_direction)
    check_output_dir(out, force)
    sweep_stale(log)
    with atomic_dir(out, force=force, kind="run") as tmp:
        work = tmp / "testbed"
        work.mkdir()
        result = execute(p, work, delay_direction=delay_direction, rps=rps, progress=progress, log=log)
        result.write_into(tmp, plot=False)
        if plot:
            plot_run(result, tmp / "plot.png")
    return result


# ---- a standing testbed (up / down) --------------------------------------------------

UP_PREFIX = "lfup"
UP_DIR = Path("/run/longfat/testbed-up")
IPERF3_PORT = 5201
#: flock()ed by `testbed up` while it builds and by `testbed down`.
UP_LOCK = Path("/run/longfat/testbed-up.lock")
#: The holder of the standing testbed's BPF programs: it has no process
#: (`up` exits and leaves the testbed standing); `down` lets them go.
STANDING = kernel.Owner("testbed-up", "the standing testbed (`longfat testbed down` removes it)")


@contextmanager
def _standing_lock(command: str) -> Iterator[None]:
    """One `testbed up` or `testbed down` at a time: two at once would build
    the same namespaces (each tearing down the other's) or remove a testbed
    being built. Refused at once, in one line naming the holder: waiting
    would only lead to "already up". The lock goes with the process, even
    a SIGKILLed one."""
    UP_LOCK.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(UP_LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode(errors="replace").strip() or "another longfat command"
            raise ScenarioError(f"testbed {command}: {holder} is using the standing testbed (lock {UP_LOCK}); try again when it has finished", "") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"`longfat testbed {command}` (pid {os.getpid()})".encode(), 0)
        yield
    finally:
        os.close(fd)  # closing drops the lock


def _up_state() -> dict | None:
    try:
        return json.loads((UP_DIR / "state.json").read_text())
    except (OSError, ValueError):
        return None


def _up_namespaces() -> list[str]:
    return [ns for ns in list_namespaces() if ns.startswith(UP_PREFIX + "-")]


def up(spec: dict, *, delay_direction: str = "ack", rps: bool = True, iperf3: bool = True, log: Callable[[str], None] = lambda s: None) -> dict:
    """Builds the scenario's dumbbell and leaves it standing (with its delay
    line and, unless told not to, an iperf3 server on the receiver) for
    the user's own traffic; ``down()`` removes it. Returns what was built:
    namespaces, addresses, the ping check and the commands to use it."""
    p = prepare_run(spec, delay_direction)
    if iperf3 and shutil.which("iperf3") is None:
        raise ScenarioError("testbed up: iperf3 is not installed (Debian: apt-get install iperf3); or pass --no-iperf3", "")
    with _standing_lock("up"):
        if _up_namespaces() or _up_state() is not None:
            raise ScenarioError("testbed up: a standing testbed is already up; remove it first with `longfat testbed down`", "")
        sweep_stale(log)
        return _build_standing(p, spec, delay_direction=delay_direction, rps=rps, iperf3=iperf3, log=log)


def _build_standing(p: Plan, spec: dict, *, delay_direction: str, rps: bool, iperf3: bool, log: Callable[[str], None]) -> dict:
    """The build of :func:`up`, under its lock."""
    UP_DIR.mkdir(parents=True, exist_ok=True)
    tb = Testbed(p, UP_DIR, delay_direction=delay_direction, rps=rps, log=log, prefix=UP_PREFIX, owner=STANDING)
    try:
        tb.build()
        tb.ping_check()
        if iperf3:
            tb.spawn(tb.receiver, ["iperf3", "--server", "--forceflush", "--bind", "10.78.0.1", "--port", str(IPERF3_PORT)], "iperf3-server")
            deadline = time.monotonic() + 10.0
            while not tb.sh(tb.receiver, "ss", "-Hltn", f"sport = :{IPERF3_PORT}").stdout.strip():
                if tb.procs[-1].poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"testbed up: the iperf3 server did not start: {' '.join((UP_DIR / 'iperf3-server.log').read_text().split())[-300:]}")
                time.sleep(0.05)
        senders = {str(g.index): {"namespace": tb.sender(g.index), "address": f"10.77.{g.index}.1", "rtt_ms": g.rtt_ns / 1e6} for g in p.groups}
        state = {
            "scenario": spec.get("name"),
            "rate_bps": p.rate_bps,
            "queue": list(p.queue) if p.class_queues is None else [list(q) for q in p.class_queues],
            "namespaces": list(tb.namespaces),
            "router": tb.router,
            "receiver": {"namespace": tb.receiver, "address": "10.78.0.1"},
            "senders": senders,
            "iperf3_port": IPERF3_PORT if iperf3 else None,
            "loaded_programs": list(tb.loaded),
            "delay_line_pid": tb.delayline.pid if tb.delayline else None,
            "bottleneck": tb.meta.get("bottleneck"),
            "ping": tb.meta.get("ping"),
            "tcp_usec_ts": tb.meta.get("tcp_usec_ts"),
        }
        tmp = UP_DIR / "state.json.part"
        tmp.write_text(json.dumps(state, indent=1))
        tmp.rename(UP_DIR / "state.json")
    except BaseException:
        tb.close()
        shutil.rmtree(UP_DIR, ignore_errors=True)
        raise
    # Left standing: the processes run in sessions of their own and outlive
    # this one; down() finds everything from the prefix and the programs
    # from their record (kernel.release(STANDING)).
    return state


def down() -> dict:
    """Removes the standing testbed: its processes, namespaces (with their
    devices and qdiscs) and the BPF programs ``up`` loaded, also when ``up``
    was killed half-way (its programs are recorded as the standing
    testbed's from the moment it loads them); a program that another longfat
    command or user also holds stays loaded. Returns what it removed and
    what it left loaded; removing nothing is not an error."""
    check_environment()
    with _standing_lock("down"):
        removed = []
        with deferred_signals():
            for ns in _up_namespaces():
                _remove_namespace(ns)  # kills the delay line, the iperf3 server and any user process in it
                removed.append(ns)
            released = kernel.release(STANDING)
            shutil.rmtree(UP_DIR, ignore_errors=True)
    return {
        "namespaces": removed,
        "unloaded": [ca for ca, what in released if what == "unloaded"],
        "left": [f"{ca}: {what}" for ca, what in released if what.startswith("left")],
    }
