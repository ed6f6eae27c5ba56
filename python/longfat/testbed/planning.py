"""What a scenario becomes on the testbed: the limits (each measured or
argued in docs/testbed.md), the kernel's names of the congestion controls,
and the plan of namespaces, flow groups and flows, with every refusal
naming the field and the allowed range."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from longfat._native import ScenarioError, parse_duration_ns, parse_rate_bps, parse_size
from longfat import kernel

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
KERNEL_BUILTIN = {"reno": "reno", "newreno": "reno", "cubic": "cubic", "bbr": "bbr"}
#: Namespaces made by a testbed run: lf<pid>-<role>.
NS_PATTERN = re.compile(r"^lf(?P<pid>[0-9]+)-(?P<role>r|d|s[0-9]+)$")
PORT = 5001
#: How long the agents may take to start.
AGENT_START_S = 30.0
#: How long the delay line may take to open its TUN devices.
DELAY_LINE_START_S = 30.0
AGENT = Path(__file__).with_name("agent.py")
DELAY_DIRECTIONS = ("ack", "data")
#: Packets the TUN device in front of the delay line may hold.
TUN_QUEUE_PKTS = 100_000
#: The delay line runs under SCHED_FIFO at this priority (0: not).
DELAY_LINE_RT_PRIORITY = 50
if os.environ.get("LONGFAT_TESTBED_RT_PRIORITY", "").isdigit():
    DELAY_LINE_RT_PRIORITY = int(os.environ["LONGFAT_TESTBED_RT_PRIORITY"])


def field_error(field: str, message: str) -> ScenarioError:
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
            raise field_error(field, "required")
        return default
    try:
        return parse_duration_ns(str(text))
    except ValueError as e:
        raise field_error(field, str(e)) from None


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
        raise field_error("network.topology", f"{topo!r} cannot be emulated by the testbed; allowed: \"dumbbell\"")
    b = net.get("bottleneck", {})
    disc = b.get("discipline", "droptail")
    n_classes = int(b.get("classes", 2)) if disc == "priority" else 1
    if disc == "priority" and b.get("buffer", "per_class") != "per_class":
        raise field_error("network.bottleneck.buffer", f"{b['buffer']!r}: a shared buffer with push-out has no qdisc here; allowed: \"per_class\"")
    for k in ("loss", "reverse_loss"):
        if b.get(k):
            raise field_error(f"network.bottleneck.{k}", f"{b[k]} (random loss) cannot be emulated by the testbed (no netem on this kernel); allowed: 0")
    rate = parse_rate_bps(b["rate"])
    if rate > CEILING_BPS:
        raise field_error("network.bottleneck.rate", f"{b['rate']} is above the testbed's ceiling on this machine; allowed: up to {CEILING_BPS // 1_000_000}Mbps (measured, see docs/testbed.md)")
    b_delay = _duration("network.bottleneck.delay", b["delay"])
    access = net.get("access", {}) or {}
    a_delay = _duration("network.access.delay", access.get("delay"), 0)
    if "rate" in access and parse_rate_bps(access["rate"]) < 10 * rate:
        raise field_error("network.access.rate", f"{access['rate']}: the testbed's access links are veths without a rate limit, faithful only for access rates of at least 10 x the bottleneck's ({rate * 10 / 1e6:g}Mbps)")
    for k in ("udp", "short_flows", "web"):
        if spec.get(k):
            raise field_error(k, "the testbed runs long-lived TCP flows only; UDP sources, short flows and web traffic are not emulated (remove them)")
    run = spec.get("run", {})
    duration = _duration("run.duration", run.get("duration"))
    if duration > MAX_DURATION_NS:
        raise field_error("run.duration", f"{run['duration']}: the testbed runs in real time; allowed up to 1h")
    measure_from = _duration("run.measure_from", run.get("measure_from"), 0)
    interval = _duration("run.sample_interval", run.get("sample_interval"), min(max(duration // 1000, MIN_SAMPLE_INTERVAL_NS), duration))
    if interval < MIN_SAMPLE_INTERVAL_NS:
        raise field_error("run.sample_interval", f"{run['sample_interval']} is below the testbed's 10ms (TCP_INFO is sampled from Python); allowed 10ms..=run.duration")

    groups: dict[int, GroupPlan] = {}
    flows: list[FlowPlan] = []
    initial_cwnd = None
    specs = spec.get("flows", [])
    if not specs:
        raise field_error("flows", "the testbed needs at least one TCP flow")
    for i, f in enumerate(specs):
        fld = f"flows[{i}]"
        for k in f:
            if k not in _FLOW_FIELDS:
                raise field_error(f"{fld}.{k}", "not emulated by the testbed (remove it, or run the simulator)")
        for k in ("start_jitter", "access_delay_jitter"):
            if not _is_zero_duration(f.get(k)):
                raise field_error(f"{fld}.{k}", f"{f[k]}: random jitter is not emulated by the testbed; allowed: \"0s\"")
        tcp = f.get("tcp", {}) or {}
        for k in tcp:
            if k not in _TCP_FIELDS:
                raise field_error(f"{fld}.tcp.{k}", f"not emulated by the testbed (the kernel's TCP runs with its defaults); allowed fields: {', '.join(sorted(_TCP_FIELDS))}")
        for k, (value, shown) in _TCP_FIXED.items():
            if k in tcp and tcp[k] != value:
                raise field_error(f"{fld}.tcp.{k}", f"{json.dumps(tcp[k])}: the kernel's TCP cannot do that here; allowed: {shown}")
        if "initial_cwnd" in tcp:
            iw = tcp["initial_cwnd"]
            if iw != int(iw) or not (1 <= iw <= 1000):
                raise field_error(f"{fld}.tcp.initial_cwnd", f"{iw}: the kernel takes a whole number of packets (route initcwnd); allowed 1..=1000")
            if initial_cwnd is not None and initial_cwnd != int(iw):
                raise field_error(f"{fld}.tcp.initial_cwnd", "differs between flow groups; the testbed sets one initcwnd for all")
            initial_cwnd = int(iw)
        cc = f["cc"]
        # PLT in either spelling: transport = "plt", or its alias cc = "plt".
        if cc == "plt":
            raise field_error(f"{fld}.cc", "\"plt\" (two connections with priority classes) is not emulated by the testbed")
        if f.get("transport", "tcp") != "tcp":
            raise field_error(f"{fld}.transport", f"{json.dumps(f['transport'])} (PLT: two connections with priority classes) is not emulated by the testbed; allowed: \"tcp\"")
        count = int(f.get("count", 1))
        start = _duration(f"{fld}.start", f.get("start"), 0)
        spacing = _duration(f"{fld}.start_spacing", f.get("start_spacing"), 0)
        stop = _duration(f"{fld}.stop", f.get("stop"), duration)
        size = None
        if "size" in f:
            kind, n = parse_size(str(f["size"]))
            size = int(n * (PACKET - 40)) if kind == "pkt" else int(n)
            if kind == "bdp":
                raise field_error(f"{fld}.size", "give bytes or packets")
        access_delay = _duration(f"{fld}.access_delay", f.get("access_delay"), a_delay)
        # The simulator's path: sender access link, bottleneck, receiver
        # access link, each way (docs/scenarios.md, [[flows]] access_delay).
        rtt = 2 * (access_delay + b_delay + a_delay)
        if not (MIN_RTT_NS <= rtt <= MAX_RTT_NS):
            raise field_error(f"{fld}.access_delay" if "access_delay" in f else "network.bottleneck.delay", f"the path's RTT {rtt / 1e6:g}ms is outside the testbed's range; allowed {MIN_RTT_NS / 1e6:g}ms..={MAX_RTT_NS / 1e6:g}ms")
        g = groups.setdefault(rtt, GroupPlan(len(groups), rtt))
        for k in range(count):
            name = (f["name"] if count == 1 else f"{f['name']}.{k}") if "name" in f else f"{cc}{len(flows)}"
            fp = FlowPlan(len(flows), name, cc, kernel_cc(cc), g.index, start + spacing * k, stop, size, int(tcp.get("priority_class", 0)))
            flows.append(fp)
            g.flows.append(fp)
    if len(flows) > MAX_FLOWS:
        raise field_error("flows", f"{len(flows)} flows; the testbed runs at most {MAX_FLOWS}")
    if len(groups) > MAX_GROUPS:
        raise field_error("flows", f"{len(groups)} different RTTs; the testbed emulates at most {MAX_GROUPS}")

    q = str(b["queue"])
    bdp_rtt = _duration("network.bdp_rtt", net.get("bdp_rtt"), max(g.rtt_ns for g in groups.values()))

    def resolve(fld: str, text: str) -> tuple[str, int]:
        if text == "unlimited":
            raise field_error(fld, "\"unlimited\" cannot be emulated; give packets, bytes or a BDP fraction")
        kind, n = parse_size(text)
        if kind == "bdp":
            out = ("bytes", round(rate * bdp_rtt / 8e9 * n))
        else:
            out = ("pkt" if kind == "pkt" else "bytes", int(n))
        pkts = out[1] if out[0] == "pkt" else out[1] / PACKET
        if pkts > MAX_QUEUE_PKTS:
            raise field_error(fld, f"{text} is {pkts:.0f} packets; the testbed allows up to {MAX_QUEUE_PKTS}")
        return out

    queue = resolve("network.bottleneck.queue", q)
    class_queues = None
    if disc == "priority":
        given = b.get("class_queues")
        class_queues = [resolve(f"network.bottleneck.class_queues[{c}]", str(given[c])) for c in range(n_classes)] if given else [queue] * n_classes
    return Plan(spec, spec.get("name") or "run", rate, b_delay, queue, sorted(groups.values(), key=lambda g: g.index), duration, measure_from, interval, initial_cwnd, class_queues)


# ---- the environment --------------------------------------------------------------
