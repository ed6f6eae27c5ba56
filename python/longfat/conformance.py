"""packetdrill scripts on longfat's TCP sender: ``longfat conformance``.

A script plays the peer of one longfat TCP sender (``_native.SenderDriver``:
the sender the simulator runs, with the network replaced by the script):
it injects ACKs at stated times, lets the application ``write``, expects
the data segments the sender emits within packetdrill's timing tolerance,
and asserts ``tcpi_*`` state in ``%{ ... }%`` blocks. The subset of
packetdrill's syntax run here is the part about congestion control and loss
recovery (docs/conformance.md lists it); any other line makes the script
UNSUPPORTED with that line named, never a silent pass.

Sequence numbers: packetdrill counts bytes from the ISN, longfat packets of
one MSS; every write, ACK and SACK edge must fall on an MSS boundary.
"""

from __future__ import annotations

import json
import math
import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

from longfat import _native

#: packetdrill's default ``--tolerance_usecs`` and ``--tolerance_percent``
#: (packetdrill config.c).
TOLERANCE_NS = 4_000_000
TOLERANCE_FRACTION = 0.125

#: Linux's TCP_INFINITE_SSTHRESH, what tcpi_snd_ssthresh reads before the
#: first reduction.
INFINITE_SSTHRESH = 0x7FFFFFFF

#: Bytes of the timestamp option in every segment once negotiated (Linux
#: ``tcp_current_mss`` takes them off the MSS).
TS_OPTION_BYTES = 12

#: Header bytes of a data packet on the wire (IPv4 + TCP, no options).
HEADER_BYTES = 40

CA_STATES = {"TCP_CA_Open": 0, "TCP_CA_Disorder": 1, "TCP_CA_CWR": 2, "TCP_CA_Recovery": 3, "TCP_CA_Loss": 4}

#: Backtick commands accepted: what longfat's ``linux`` sender already is
#: (Google's ``defaults.sh``), and sysctls with no effect on it.
ACCEPTED_COMMANDS = (
    re.compile(r"^(\.\./)*(common/)?defaults\.sh$"),
    # longfat never defers sending to build TSO frames (tcp_tso_should_defer).
    re.compile(r"^sysctl -q net\.ipv4\.tcp_tso_win_divisor=\d+$"),
    re.compile(r"^sysctl -q net\.ipv4\.tcp_min_tso_segs=\d+$"),
)

#: CUBIC's module parameters (``/sys/module/tcp_cubic/parameters/NAME``)
#: as longfat's cubic parameters: name, and the factor from Linux's unit.
CUBIC_MODULE_PARAMS = {
    "hystart": ("hystart", 1.0),
    "hystart_detect": ("hystart_detect", 1.0),
    "hystart_low_window": ("hystart_low_window", 1.0),
    "hystart_ack_delta_us": ("hystart_ack_delta_us", 1.0),
    "fast_convergence": ("fast_convergence", 1.0),
    "tcp_friendliness": ("reno_friendly", 1.0),
    # BETA_SCALE: Linux's beta is in 1/1024ths.
    "beta": ("beta", 1 / 1024),
}
_MODULE_PARAM = re.compile(r"^echo (\d+) > /sys/module/tcp_cubic/parameters/(\w+)$")

#: The header lines a script of the suite carries.
HEADER_KEYS = ("category", "source", "kernel", "verified")

PROFILES = ("linux", "rfc", "ns2")


class Unsupported(Exception):
    """A line outside the subset."""


class Failed(Exception):
    """The sender did not do what the script expects."""


@dataclass
class Event:
    line: int
    kind: str  # "syscall", "in", "out", "code", "command"
    text: str
    # time: (type, a, b): type "abs", "rel", "any", "abs_range", "rel_range"
    time: tuple


@dataclass
class Result:
    path: str
    status: str  # "PASS", "FAIL", "UNSUPPORTED"
    line: int | None = None
    message: str = ""
    header: dict = field(default_factory=dict)
    printed: list = field(default_factory=list)
    #: On a failure: the sender's last packets and its state (``-v``).
    trace: list = field(default_factory=list)

    def text(self) -> str:
        where = f":{self.line}" if self.line else ""
        tail = f": {self.message}" if self.message else ""
        return f"{self.status:<11} {self.path}{where}{tail}"


_TIME = re.compile(
    r"^(?:(?P<any>\*)|(?P<rel>\+)?(?P<a>\d*\.?\d+)(?:~(?P<rel2>\+)?(?P<b>\d*\.?\d+))?)(?=\s|%|$)"
)


def _parse_time(tok: str, line: int) -> tuple:
    m = _TIME.match(tok)
    if not m or m.end() != len(tok):
        raise Unsupported(f"line {line}: no time at the start ({tok!r})")
    if m["any"]:
        return ("any", 0, 0)
    a = round(float(m["a"]) * 1e9)
    if m["b"] is None:
        return ("rel" if m["rel"] else "abs", a, a)
    b = round(float(m["b"]) * 1e9)
    if bool(m["rel"]) != bool(m["rel2"]):
        raise Unsupported(f"line {line}: a time range mixes relative and absolute ends")
    return ("rel_range" if m["rel"] else "abs_range", a, b)


def header(text: str) -> dict:
    """The suite's header lines (``// category: ...``) and the first comment line."""
    out: dict = {}
    for raw in text.splitlines():
        s = raw.strip()
        if not s:
            if out:
                break
            continue
        if not s.startswith("//"):
            break
        body = s[2:].strip()
        m = re.match(r"^(\w+):\s*(.*)$", body)
        if m and m[1] in HEADER_KEYS:
            out[m[1]] = m[2]
        elif "title" not in out:
            out["title"] = body
    return out


def parse(text: str) -> list[Event]:
    """The script's events, in order; Unsupported for syntax outside the subset."""
    events: list[Event] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        raw = lines[i]
        no = i + 1
        s = re.sub(r"//.*$", "", raw).strip() if "%{" not in raw else raw.strip()
        i += 1
        if not s:
            continue
        opt = re.match(r"^--tolerance_usecs=(\d+)$", s)
        if opt:
            if events:
                raise Unsupported(f"line {no}: options come before the first event")
            events.append(Event(no, "option", opt[1], ("any", 0, 0)))
            continue
        if s.startswith("/*"):
            raise Unsupported(f"line {no}: /* */ comments are not in the subset; use //")
        if s.startswith("`"):
            body = s[1:]
            while not body.rstrip().endswith("`"):
                if i >= len(lines):
                    raise Unsupported(f"line {no}: unterminated ` command")
                body += "\n" + lines[i]
                i += 1
            events.append(Event(no, "command", body.rstrip()[:-1], ("any", 0, 0)))
            continue
        tok, _, rest = s.partition(" ")
        if tok.endswith("%{"):
            tok, rest = tok[:-2], "%{" + rest
        when = _parse_time(tok, no)
        rest = rest.strip()
        if rest.startswith("%{"):
            code = rest[2:]
            while "}%" not in code:
                if i >= len(lines):
                    raise Unsupported(f"line {no}: unterminated %{{ block")
                code += "\n" + lines[i]
                i += 1
            body, _, after = code.partition("}%")
            if re.sub(r"//.*$", "", after).strip():
                raise Unsupported(f"line {no}: text after }}%")
            events.append(Event(no, "code", textwrap.dedent(body.strip("\n") if "\n" in body.strip() else body.strip()), when))
        elif rest.startswith("<"):
            events.append(Event(no, "in", rest[1:].strip(), when))
        elif rest.startswith(">"):
            events.append(Event(no, "out", rest[1:].strip(), when))
        elif re.match(r"^[a-z_]+\(", rest):
            events.append(Event(no, "syscall", rest, when))
        else:
            raise Unsupported(f"line {no}: not an event of the subset: {rest!r}")
    for e in events:
        _check_syntax(e)
    return events


_PACKET = re.compile(
    r"^(?P<flags>[SFRP.EWC]+)\s+(?P<a>\d+):(?P<b>\d+)\((?P<len>\d+)\)"
    r"(?:\s+ack\s+(?P<ack>\d+))?(?:\s+win\s+(?P<win>\d+))?\s*(?:<(?P<opts>[^>]*)>)?\s*$"
)
_SYSCALL = re.compile(r"^(?P<name>[a-z_]+)\((?P<args>.*)\)\s*=\s*(?P<ret>-?\d+)(?P<errno>\s+\w+.*)?$")
_SUPPORTED_CALLS = {"socket", "setsockopt", "bind", "listen", "accept", "connect", "write"}


def _check_syntax(e: Event) -> None:
    if e.kind in ("in", "out"):
        m = _PACKET.match(e.text)
        if not m:
            raise Unsupported(f"line {e.line}: packet syntax outside the subset: {e.text!r}")
        flags = m["flags"]
        if any(f in flags for f in "FREWC"):
            raise Unsupported(f"line {e.line}: flags {flags!r}: FIN, RST and ECN are not modelled")
        if e.kind == "in" and flags not in ("S", "S.", ".", "P."):
            raise Unsupported(f"line {e.line}: inbound flags {flags!r} are not in the subset")
        if e.kind == "in" and int(m["len"]) > 0:
            raise Unsupported(f"line {e.line}: the peer sends no data in longfat's model (one-way bulk transfer)")
        try:
            opts = _options(m["opts"])
        except Unsupported as err:
            raise Unsupported(f"line {e.line}: {err}") from None
        for opt in opts:
            if opt[0] not in ("mss", "sackOK", "nop", "wscale", "TS", "sack", "eol"):
                raise Unsupported(f"line {e.line}: TCP option {opt[0]!r} is not in the subset")
    elif e.kind == "syscall":
        m = _SYSCALL.match(e.text)
        if not m:
            raise Unsupported(f"line {e.line}: system call syntax outside the subset: {e.text!r}")
        if m["name"] not in _SUPPORTED_CALLS:
            raise Unsupported(f"line {e.line}: system call {m['name']}() is not in the subset")
        if m["name"] == "setsockopt":
            args = [a.strip() for a in m["args"].split(",")]
            opt = args[2] if len(args) > 2 else ""
            if opt not in ("SO_REUSEADDR", "SO_SNDBUF", "TCP_NODELAY", "TCP_CONGESTION"):
                raise Unsupported(f"line {e.line}: socket option {opt} is not in the subset")
    elif e.kind == "command":
        for cmd in (c.strip() for c in e.text.splitlines()):
            m = _MODULE_PARAM.match(cmd)
            if m and m[2] not in CUBIC_MODULE_PARAMS:
                raise Unsupported(f"line {e.line}: tcp_cubic parameter {m[2]} has no longfat counterpart")
            if cmd and not m and not any(p.match(cmd) for p in ACCEPTED_COMMANDS):
                raise Unsupported(f"line {e.line}: command {cmd!r} is not in the subset")


def _options(text: str | None) -> list[tuple]:
    """TCP options as (name, values...)."""
    out = []
    for part in (p.strip() for p in (text or "").split(",")):
        if not part:
            continue
        words = part.split()
        if words[0] == "TS":
            m = re.match(r"^TS val (\d+) ecr (\d+)$", part)
            if not m:
                raise Unsupported(f"timestamp option {part!r}")
            out.append(("TS", int(m[1]), int(m[2])))
        elif words[0] == "sack":
            blocks = []
            for w in words[1:]:
                a, _, b = w.partition(":")
                blocks.append((int(a), int(b)))
            out.append(("sack", blocks))
        else:
            out.append((words[0], *words[1:]))
    return out


class Run:
    """One script on one profile."""

    def __init__(self, events: list[Event], profile: str):
        self.events = events
        self.profile = profile
        self.cc = "cubic"
        self.mss = None  # the data MSS, bytes
        self.peer_mss = None
        self.wscale = 0
        self.timestamps = False
        self.sack = False
        self.syn_ns = None
        self.synack_ns = None
        self.rtt_ns = None
        self.window_pkts = None
        self.established = False
        self.driver = None
        self.cursor = 0
        self.now_ns = 0
        self.prev: Event | None = None
        self.prev_script_ns = 0
        self.printed: list[str] = []
        self.tolerance_ns = TOLERANCE_NS
        self.cc_params: dict = {}

    # --- time ---------------------------------------------------------

    def window(self, e: Event) -> tuple[int, int, int]:
        """The event's expected time range [lo, hi] and its tolerance."""
        kind, a, b = e.time
        if kind == "any":
            return self.now_ns, math.inf, 0
        if kind in ("rel", "rel_range"):
            anchored = self.prev is not None and self.prev.kind == "in" and e.kind == "in"
            base = self.prev_script_ns if anchored else self.now_ns
            lo, hi = base + a, base + b
        else:
            lo, hi = a, b
        tol = max(self.tolerance_ns, TOLERANCE_FRACTION * (lo - self.prev_script_ns))
        return lo, hi, tol

    # --- the connection ------------------------------------------------

    def connection(self, e: Event):
        if self.driver is None:
            if not self.established:
                raise Unsupported(f"line {e.line}: data before the handshake")
            if self.cc_params and self.cc != "cubic":
                raise Unsupported(f"line {e.line}: tcp_cubic parameters set, but the connection runs {self.cc}")
            flow = {
                "cc": self.cc,
                "params": self.cc_params,
                "tcp": {
                    "profile": self.profile,
                    # Linux without the timestamp option (tcp_timestamps = 0)
                    # when the peer offers none; rfc always has it, ns2 keeps
                    # its own default.
                    **({"timestamps": self.timestamps} if self.profile == "linux" else {}),
                    "packet_size": f"{self.mss + HEADER_BYTES + (TS_OPTION_BYTES if self.timestamps else 0)}B",
                    "header_size": f"{HEADER_BYTES + (TS_OPTION_BYTES if self.timestamps else 0)}B",
                },
            }
            if not self.sack:
                raise Unsupported(f"line {e.line}: the peer did not offer SACK; longfat's TCP always runs with SACK (RFC 2018)")
            try:
                self.driver = _native.SenderDriver(json.dumps(flow))
            except _native.ScenarioError as err:
                raise Unsupported(f"line {e.line}: {err.args[0]}") from None
            if self.rtt_ns is not None:
                self.driver.handshake(self.rtt_ns)
            if self.window_pkts is not None:
                self.driver.set_peer_window(self.window_pkts)
        return self.driver

    def pkts(self, nbytes: int, what: str, e: Event) -> int:
        if nbytes % self.mss:
            raise Unsupported(f"line {e.line}: {what} {nbytes} bytes is not a whole number of {self.mss}-byte segments")
        return nbytes // self.mss

    def seq_pkts(self, byte_seq: int, what: str, e: Event) -> int:
        """Packet number of relative byte sequence number ``byte_seq`` (data starts at 1)."""
        return self.pkts(byte_seq - 1, what, e)

    # --- events --------------------------------------------------------

    def run(self) -> None:
        for e in self.events:
            lo, hi, tol = self.window(e)
            if e.kind == "out":
                actual = self.outbound(e, lo, hi, tol)
                self.now_ns = actual
            else:
                if e.kind not in ("command", "option") and e.time[0] != "any":
                    t = lo
                    if t < self.now_ns:
                        raise Failed(f"line {e.line}: the script's time {t / 1e9:.6f} s is before the previous event ({self.now_ns / 1e9:.6f} s)")
                    self.now_ns = t
                {"syscall": self.syscall, "in": self.inbound, "code": self.code, "command": self.command, "option": self.option}[e.kind](e)
            self.prev = e
            self.prev_script_ns = lo if lo != math.inf else self.now_ns

    def command(self, e: Event) -> None:
        for cmd in (c.strip() for c in e.text.splitlines()):
            m = _MODULE_PARAM.match(cmd)
            if m:
                if self.driver is not None:
                    raise Unsupported(f"line {e.line}: a tcp_cubic parameter set after the connection started")
                name, factor = CUBIC_MODULE_PARAMS[m[2]]
                self.cc_params[name] = int(m[1]) * factor

    def option(self, e: Event) -> None:
        self.tolerance_ns = int(e.text) * 1000

    def syscall(self, e: Event) -> None:
        m = _SYSCALL.match(e.text)
        name, args = m["name"], [a.strip() for a in m["args"].split(",")]
        if name == "setsockopt" and args[2] == "TCP_CONGESTION":
            cc = args[3].strip('"')
            if self.driver is not None:
                raise Unsupported(f"line {e.line}: TCP_CONGESTION after the first write")
            known = {a["name"] for a in _native.catalogue()}
            if cc not in known:
                raise Unsupported(f"line {e.line}: congestion control {cc!r} is not a longfat algorithm")
            self.cc = cc
        elif name == "connect":
            self.syn_ns = self.now_ns
        elif name == "write":
            n = int(args[2])
            if int(m["ret"]) != n:
                raise Unsupported(f"line {e.line}: a short write is not modelled")
            self.connection(e).write(self.now_ns, self.pkts(n, "a write of", e))

    def _take_syn_options(self, opts, e: Event) -> None:
        names = {o[0]: o for o in opts}
        if "mss" not in names:
            raise Unsupported(f"line {e.line}: the SYN has no mss option")
        self.peer_mss = int(names["mss"][1])
        self.sack = "sackOK" in names
        self.timestamps = "TS" in names
        self.wscale = int(names["wscale"][1]) if "wscale" in names else 0
        self.mss = self.peer_mss - (TS_OPTION_BYTES if self.timestamps else 0)

    def _in_fields(self, e: Event):
        m = _PACKET.match(e.text)
        return m, _options(m["opts"])

    def handshake_done(self) -> None:
        self.established = True

    def ack_of(self, m, opts, e: Event) -> None:
        """An inbound ACK on the established connection."""
        ack = int(m["ack"]) if m["ack"] else None
        if ack is None:
            raise Unsupported(f"line {e.line}: an inbound segment without ack")
        win_bytes = int(m["win"] or 0) << self.wscale
        sacks, ts_val = [], 0
        for o in opts:
            if o[0] == "sack":
                for a, b in o[1]:
                    sacks.append((self.seq_pkts(a, "a SACK edge at", e), self.seq_pkts(b, "a SACK edge at", e)))
            elif o[0] == "TS":
                ts_val = o[1]
        if len(sacks) > 3:
            raise Unsupported(f"line {e.line}: more than 3 SACK blocks")
        cum = self.seq_pkts(ack, "an ACK of", e)
        if sacks and (sacks[0][0] < cum or any(o != sacks[0] and o[0] <= sacks[0][0] and sacks[0][1] <= o[1] for o in sacks[1:])):
            # RFC 2883: a first block below the cumulative ACK or inside a
            # later block reports a duplicate.
            raise Unsupported(f"line {e.line}: a D-SACK block (RFC 2883): longfat's sender does not read duplicate SACKs (no DSACK undo, no RACK window growth)")
        d = self.connection(e)
        d.run_timers(self.now_ns)
        sent = d.emitted(0)
        snd_nxt = max((seq for _, seq, _ in sent), default=-1) + 1
        if cum > snd_nxt or any(b > snd_nxt for _, b in sacks):
            # Linux drops an ACK of data never sent (`tcp_ack`: after
            # snd_nxt) and ignores such SACK blocks; longfat's scoreboard
            # would clamp them instead.
            raise Unsupported(f"line {e.line}: acknowledges data never sent (up to byte {snd_nxt * self.mss + 1})")
        d.ack(self.now_ns, cum, sacks, win_bytes // self.mss, ts_val)

    def inbound(self, e: Event) -> None:
        m, opts = self._in_fields(e)
        flags = m["flags"]
        if flags == "S":
            if self.established or self.syn_ns is not None:
                raise Unsupported(f"line {e.line}: a second SYN")
            self._take_syn_options(opts, e)
            self.syn_ns = self.now_ns
        elif flags == "S.":
            if self.syn_ns is None or self.established:
                raise Unsupported(f"line {e.line}: a SYN-ACK without connect()")
            self._take_syn_options(opts, e)
            self.rtt_ns = self.now_ns - self.syn_ns
            self.synack_ns = self.now_ns
            # A SYN's window is never scaled (RFC 7323 §2.2).
            self.window_pkts = int(m["win"] or 0) // self.mss
        elif not self.established:
            if self.synack_ns is None:
                raise Unsupported(f"line {e.line}: an ACK before the handshake")
            self.rtt_ns = self.now_ns - self.synack_ns
            self.window_pkts = (int(m["win"] or 0) << self.wscale) // self.mss
            self.handshake_done()
            if int(m["ack"] or 0) != 1:
                raise Unsupported(f"line {e.line}: the handshake's ACK acknowledges data")
        else:
            self.ack_of(m, opts, e)

    def outbound(self, e: Event, lo, hi, tol) -> int:
        m = _PACKET.match(e.text)
        flags = m["flags"]
        if flags == "S.":
            # The SYN-ACK leaves as the SYN arrives.
            self.synack_ns = self.syn_ns
            self.check_time(e, self.syn_ns, lo, hi, tol, "SYN-ACK")
            return self.syn_ns
        if flags == "S":
            self.check_time(e, self.syn_ns, lo, hi, tol, "SYN")
            return self.syn_ns
        a, b, n = int(m["a"]), int(m["b"]), int(m["len"])
        if n == 0:
            if not self.established and self.synack_ns is not None:
                # The active opener's ACK of the SYN-ACK, sent at once.
                self.handshake_done()
                self.check_time(e, self.synack_ns, lo, hi, tol, "handshake ACK")
                return self.synack_ns
            raise Unsupported(f"line {e.line}: pure ACKs from the sender (the peer sends no data)")
        if b - a != n:
            raise Unsupported(f"line {e.line}: {a}:{b}({n}) is not a consistent range")
        d = self.connection(e)
        first, count = self.seq_pkts(a, "a segment starting at", e), self.pkts(n, "a segment of", e)
        limit = hi + tol
        while self.cursor >= len(d.emitted(0)):
            before = len(d.emitted(0))
            nxt = d.next_timer_ns
            if nxt is None or nxt > limit:
                raise Failed(f"line {e.line}: expected {a}:{b}({n}) but the sender sent nothing (up to {min(limit, 1e12) / 1e9:.6f} s)")
            d.run_timers(nxt, True)
            if len(d.emitted(0)) == before and d.next_timer_ns == nxt:
                raise Failed(f"line {e.line}: the sender's timer does not move")
        sent = d.emitted(self.cursor)
        at, seq, _ = sent[0]
        got = [s for s in sent if s[0] == at]
        run = 1
        while run < len(got) and got[run][1] == seq + run:
            run += 1
        if seq != first or run < count:
            desc = self._bytes(seq, min(run, count) if seq == first else run)
            raise Failed(f"line {e.line}: expected {a}:{b}({n}) but the sender sent {desc} at {at / 1e9:.6f} s")
        self.check_time(e, at, lo, hi, tol, f"{a}:{b}({n})")
        self.cursor += count
        return at

    def trace(self) -> list[str]:
        """The last packets sent and the sender's state, for a failure's report."""
        if self.driver is None:
            return []
        sent = self.driver.emitted(0)
        out = [f"sent {'(resent) ' if rtx else ''}{self._bytes(seq, 1)} at {at / 1e9:.6f} s" for at, seq, rtx in sent[-8:]]
        out.append("state: " + ", ".join(f"{k} {v}" for k, v in self.driver.state().items()))
        return out

    def _bytes(self, seq: int, count: int) -> str:
        a = seq * self.mss + 1
        return f"{a}:{a + count * self.mss}({count * self.mss})"

    def check_time(self, e: Event, actual, lo, hi, tol, what: str) -> None:
        if actual < lo - tol or actual > hi + tol:
            want = f"{lo / 1e9:.6f} s" if lo == hi else f"{lo / 1e9:.6f}~{hi / 1e9:.6f} s"
            raise Failed(f"line {e.line}: expected {what} at {want} but it left at {actual / 1e9:.6f} s (tolerance {tol / 1e6:.1f} ms)")

    def code(self, e: Event) -> None:
        d = self.connection(e)
        # Timers due by now fire before the state is read.
        d.run_timers(self.now_ns)
        s = d.state()
        ssthresh = s["ssthresh_pkts"]
        ns: dict = {
            "tcpi_snd_cwnd": s["cwnd_pkts"],
            "tcpi_snd_ssthresh": INFINITE_SSTHRESH if ssthresh is None else ssthresh,
            "tcpi_ca_state": s["ca_state"],
            "tcpi_retransmits": s["rto_backoff"],
            "tcpi_backoff": s["rto_backoff"],
            # icsk_rto in jiffies (HZ 1000, rounded up) as microseconds.
            "tcpi_rto": -(-s["rto_ns"] // 1_000_000) * 1000,
            "tcpi_rtt": s["srtt_ns"] // 1000,
            "tcpi_min_rtt": s["min_rtt_ns"] // 1000,
            "tcpi_unacked": s["unacked_pkts"],
            "tcpi_sacked": s["sacked_pkts"],
            "tcpi_lost": s["lost_pkts"],
            "tcpi_retrans": s["retrans_pkts"],
            "tcpi_total_retrans": s["total_retrans"],
            "tcpi_snd_mss": self.mss,
            "tcpi_reordering": s["reordering_pkts"],
            "TCP_INFINITE_SSTHRESH": INFINITE_SSTHRESH,
            **CA_STATES,
        }
        printed = self.printed
        ns["print"] = lambda *a: printed.append(" ".join(str(x) for x in a))
        try:
            exec(compile(e.text, f"<line {e.line}>", "exec"), {"__builtins__": {"print": ns["print"], "abs": abs, "min": min, "max": max, "range": range, "len": len}}, ns)
        except AssertionError as err:
            raise Failed(f"line {e.line}: assert failed: {_assert_text(e.text, err)}") from None
        except NameError as err:
            raise Unsupported(f"line {e.line}: {err}: not a tcp_info field longfat reports") from None
        except SyntaxError as err:
            raise Unsupported(f"line {e.line}: Python syntax: {err.msg}") from None
        except Exception as err:  # the script's own code failed: it cannot be judged
            raise Unsupported(f"line {e.line}: the %{{ }}% code raised {type(err).__name__}: {err}") from None


def _assert_text(code: str, err: AssertionError) -> str:
    """The failing assert's condition and its message (the value it printed)."""
    tb = err.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    lines = code.splitlines()
    cond = ""
    if tb is not None and 1 <= tb.tb_lineno <= len(lines):
        cond = lines[tb.tb_lineno - 1].strip()
        cond = re.sub(r"^assert\s+", "", cond).split(",")[0].strip()
    value = f" (it is {err.args[0]})" if err.args else ""
    return f"{cond}{value}"


def run_script(path: Path | str, profile: str = "linux", text: str | None = None) -> Result:
    """Runs one script on ``profile``'s sender."""
    if profile not in PROFILES:
        raise ValueError(f"profile {profile!r}; allowed: {', '.join(PROFILES)}")
    path = Path(path)
    if text is None:
        try:
            text = path.read_text()
        except (OSError, UnicodeDecodeError) as err:
            return Result(str(path), "UNSUPPORTED", message=f"cannot read the script: {err}")
    res = Result(str(path), "PASS", header=header(text))
    try:
        r = Run(parse(text), profile)
        try:
            r.run()
        finally:
            res.printed = r.printed
    except Unsupported as err:
        res.status, res.message = "UNSUPPORTED", str(err)
    except Failed as err:
        res.status, res.message = "FAIL", str(err)
        res.trace = r.trace()
    m = re.match(r"^line (\d+): (.*)$", res.message, re.S)
    if m:
        res.line, res.message = int(m[1]), m[2]
    return res


def shipped_dir() -> Path:
    """The suite shipped with longfat (``tests/conformance`` in a clone links to it)."""
    import importlib.resources
    import os

    return Path(os.fspath(importlib.resources.files("longfat") / "packetdrill"))


def collect(paths: list[str]) -> list[Path]:
    """Scripts named, and every ``*.pkt`` under the directories named, sorted."""
    out: list[Path] = []
    for p in map(Path, paths or [shipped_dir()]):
        if p.is_dir():
            out.extend(sorted(p.rglob("*.pkt")))
        elif p.is_file():
            out.append(p)
        else:
            raise FileNotFoundError(f"{p}: no such script or directory")
    return out


def display_path(path: Path) -> str:
    """A script's path as the user named it: relative to the working
    directory when under it, else ``packetdrill/...`` for the shipped suite."""
    path = Path(path).absolute()
    for base, prefix in ((Path.cwd(), ""), (shipped_dir().parent, "")):
        try:
            return prefix + str(path.relative_to(base))
        except ValueError:
            continue
    return str(path)


def summary(results: list[Result]) -> str:
    n = {s: sum(r.status == s for r in results) for s in ("PASS", "FAIL", "UNSUPPORTED")}
    return f"{n['PASS']} passed, {n['FAIL']} failed, {n['UNSUPPORTED']} unsupported"


def markdown_table(suite: Path, results: dict) -> str:
    """docs/conformance.md's tables: per category, each script with its
    source, what it pins and its result on each profile; ``results`` maps
    profile -> {script path relative to ``suite``: Result}."""
    names = sorted(results["linux"])
    out = []
    by_cat: dict = {}
    for name in names:
        by_cat.setdefault(results["linux"][name].header.get("category", "?"), []).append(name)
    for cat in sorted(by_cat):
        out.append(f"### {cat}\n")
        out.append("| script | pins | source | " + " | ".join(PROFILES) + " |")
        out.append("|---|---|---|" + "---|" * len(PROFILES))
        for name in by_cat[cat]:
            h = results["linux"][name].header
            src = h.get("source", "").split()
            if len(src) >= 2 and src[0] in ("google/packetdrill", "torvalds/linux"):
                cite = f"{src[0]} `{src[1]}`"
            else:
                cite = h.get("source", "").replace("|", "/")
            if h.get("verified") == "unverified":
                cite += " (unverified)"
            cells = [_cell(results[p][name]) for p in PROFILES]
            out.append(f"| `{name}` | {h.get('title', '')} | {cite} | " + " | ".join(cells) + " |")
        out.append("")
    out.append("### Counts per category\n")
    out.append("passed / failed / unsupported\n")
    out.append("| category | scripts | " + " | ".join(PROFILES) + " |")
    out.append("|---|---|" + "---|" * len(PROFILES))
    for cat in sorted(by_cat) + ["all"]:
        names_in = names if cat == "all" else by_cat[cat]
        cells = []
        for p in PROFILES:
            rs = [results[p][n] for n in names_in]
            cells.append(" / ".join(str(sum(r.status == st for r in rs)) for st in ("PASS", "FAIL", "UNSUPPORTED")))
        label = "**all**" if cat == "all" else cat
        out.append(f"| {label} | {len(names_in)} | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def _cell(r: Result) -> str:
    if r.status == "PASS":
        return "pass"
    where = f" (line {r.line})" if r.line else ""
    return ("FAIL" if r.status == "FAIL" else "unsupported") + where
