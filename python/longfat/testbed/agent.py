"""The testbed's traffic agents, run inside the namespaces.

The testbed (longfat/testbed/namespaces.py) starts this file as a script (not as
``-m longfat...``, so that it does not import the package, numpy and
pyarrow) with ``ip netns exec NS python agent.py MODE ...``:

- ``recv``: in the receiver namespace; accepts the flows' connections and
  counts the bytes each delivers to the application.
- ``send``: in one sender namespace; opens the flows of one flow group
  (``setsockopt(TCP_CONGESTION)``), each at its start time, sends until its
  stop time or its size, and samples ``TCP_INFO`` of every socket.
- ``qdisc``: in the router namespace; samples the bottleneck qdisc's
  backlog, packets sent and drops (netlink, pyroute2).

All three sample at the same instants: ``t0 + k * interval`` for k = 1, 2,
... on ``CLOCK_MONOTONIC``, which the namespaces share, so their samples
line up. Each creates its ``--ready`` file when it can start, and reads
``t0`` from ``--t0-file``, which the testbed writes once all are ready. Each writes one JSON file (``--out``) when it ends: at ``t0 +
duration``, or at SIGTERM/SIGINT (then with what it has).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import struct
import sys
import threading
import time

#: Offsets in ``struct tcp_info`` (include/uapi/linux/tcp.h, Linux 6.7+).
TCP_INFO_FIELDS = {
    "ca_state": (1, "B"),
    "rto_us": (8, "I"),
    "snd_mss": (16, "I"),
    "rtt_us": (68, "I"),
    "rttvar_us": (72, "I"),
    "snd_ssthresh": (76, "I"),
    "snd_cwnd": (80, "I"),
    "total_retrans": (100, "I"),
    "bytes_acked": (120, "Q"),
    "data_segs_out": (156, "I"),
    "delivered": (192, "I"),
    "busy_time_us": (168, "Q"),
    "rwnd_limited_us": (176, "Q"),
    "sndbuf_limited_us": (184, "Q"),
    "bytes_sent": (200, "Q"),
    "bytes_retrans": (208, "Q"),
    "snd_wnd": (228, "I"),
    "total_rto": (240, "H"),
}
#: Bytes of ``struct tcp_info`` needed for the fields above (tcpi_total_rto
#: appeared in Linux 6.7; older kernels return fewer bytes: then it is null).
TCP_INFO_LEN = 256
TCP_CONGESTION = getattr(socket, "TCP_CONGESTION", 13)
CHUNK = 1 << 20
#: The receiver reads on this long after the end of the run.
DRAIN_NS = 1_000_000_000
HELLO = struct.Struct("!I")  # the sender's first 4 bytes: the flow's index


def tcp_info(sock: socket.socket) -> dict:
    raw = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, TCP_INFO_LEN)
    out = {}
    for name, (off, fmt) in TCP_INFO_FIELDS.items():
        size = struct.calcsize(fmt)
        out[name] = struct.unpack_from("=" + fmt, raw, off)[0] if off + size <= len(raw) else None
    return out


def now_ns() -> int:
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def sleep_until(t_ns: int, stop: threading.Event) -> bool:
    """Sleeps until monotonic ``t_ns``; False if ``stop`` was set first."""
    while True:
        left = t_ns - now_ns()
        if left <= 0:
            return not stop.is_set()
        if stop.wait(min(left / 1e9, 0.05)):
            return False


class Agent:
    def __init__(self, args):
        self.args = args
        self.stop = threading.Event()
        self.samples: list = []
        self.errors: list[str] = []
        for s in (signal.SIGINT, signal.SIGTERM):
            signal.signal(s, lambda *_: self.stop.set())

    def ready_then_wait_for_t0(self) -> bool:
        """Says it is ready (``--ready``), then waits for the testbed to
        fix time 0 (``--t0-file``, written once every agent is ready);
        False if stopped meanwhile."""
        a = self.args
        if a.ready:
            open(a.ready, "w").close()
        while a.t0 is None:
            try:
                a.t0 = int(open(a.t0_file).read())
            except (OSError, ValueError):
                if self.stop.wait(0.01):
                    return False
        return True

    def ticks(self):
        """Yields k at each sampling instant t0 + k * interval until the end."""
        a = self.args
        k = 1
        while a.t0 + k * a.interval <= a.t0 + a.duration:
            if not sleep_until(a.t0 + k * a.interval, self.stop):
                return
            yield k
            k += 1

    def write(self, extra: dict) -> None:
        doc = {"samples": self.samples, "errors": self.errors, **extra}
        tmp = self.args.out + ".part"
        with open(tmp, "w") as fh:
            json.dump(doc, fh)
        os.replace(tmp, self.args.out)


# ---- receiver ---------------------------------------------------------------------


def recv(args) -> int:
    agent = Agent(args)
    n = args.flows
    counts = [0] * n
    done_at: list[int | None] = [None] * n
    lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsock.bind((args.addr, args.port))
    lsock.listen(max(n, 16))
    lsock.settimeout(0.1)

    def serve(conn: socket.socket) -> None:
        conn.settimeout(0.2)
        try:
            head = b""
            while len(head) < HELLO.size and not agent.stop.is_set():
                try:
                    part = conn.recv(HELLO.size - len(head))
                except socket.timeout:
                    continue
                if not part:
                    return
                head += part
            if len(head) < HELLO.size:
                return
            (i,) = HELLO.unpack(head)
            if i >= n:
                agent.errors.append(f"unknown flow index {i}")
                return
            buf = bytearray(CHUNK)
            while not agent.stop.is_set():
                try:
                    got = conn.recv_into(buf)
                except socket.timeout:
                    continue
                if got == 0:
                    done_at[i] = now_ns()
                    return
                counts[i] += got
        except OSError as e:
            agent.errors.append(f"receive: {e}")
        finally:
            conn.close()

    def accept() -> None:
        while not agent.stop.is_set():
            try:
                conn, _ = lsock.accept()
            except socket.timeout:
                continue
            except OSError as e:
                agent.errors.append(f"accept: {e}")
                return
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    if not agent.ready_then_wait_for_t0():
        agent.write({"done_at_ns": done_at})
        return 0
    for k in agent.ticks():
        agent.samples.append([k, list(counts)])
    # Keep draining past the end (uncounted) so the senders, stopping at the
    # same instant, do not run into a closed socket and a reset.
    sleep_until(args.t0 + args.duration + DRAIN_NS, agent.stop)
    agent.stop.set()
    agent.write({"done_at_ns": done_at})
    return 0


# ---- sender ------------------------------------------------------------------------


#: The sender namespace's TcpExt counters sampled with TCP_INFO: fast
#: recoveries are not in TCP_INFO, but the namespace holds only its group's
#: flows (one flow: exactly its counts).
NETSTAT_FIELDS = ("TCPSackRecovery", "TCPRenoRecovery", "TCPLossProbes", "TCPSackRecoveryFail", "TCPLossUndo", "TCPFullUndo", "TCPPartialUndo", "TCPDSACKUndo")


def netstat_counters() -> dict:
    """This namespace's TcpExt counters named in NETSTAT_FIELDS."""
    try:
        lines = open("/proc/net/netstat").read().splitlines()
    except OSError:
        return {}
    for head, vals in zip(lines[::2], lines[1::2]):
        if head.startswith("TcpExt:"):
            d = dict(zip(head.split()[1:], vals.split()[1:]))
            return {k: int(d[k]) for k in NETSTAT_FIELDS if k in d}
    return {}


def send(args) -> int:
    agent = Agent(args)
    flows = json.loads(args.flows)  # [{"index", "cc", "start_ns", "stop_ns", "size_bytes"}]
    socks: dict[int, socket.socket] = {}
    finished: dict[int, int] = {}
    payload = bytes(CHUNK)

    def run_flow(f: dict) -> None:
        i = f["index"]
        if not sleep_until(args.t0 + f["start_ns"], agent.stop):
            return
        try:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                s.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, f["cc"].encode())
            except OSError as e:
                agent.errors.append(f"flow {i}: congestion control {f['cc']!r} cannot be set ({e.strerror}); is it registered (longfat kernel load {f['cc']})?")
                return
            if f.get("tos"):
                s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, f["tos"])  # DSCP: the bottleneck's priority class
            s.connect((args.dst, args.port))
            s.sendall(HELLO.pack(i))
            socks[i] = s
            s.settimeout(0.05)
            stop_at = args.t0 + f["stop_ns"]
            left = f.get("size_bytes")
            while not agent.stop.is_set() and now_ns() < stop_at and (left is None or left > 0):
                chunk = payload if left is None or left >= CHUNK else payload[:left]
                try:
                    sent = s.send(chunk)
                except socket.timeout:
                    continue
                if left is not None:
                    left -= sent
            if left is not None and left <= 0:
                finished[i] = now_ns()
            s.shutdown(socket.SHUT_WR)
        except (BrokenPipeError, ConnectionResetError) as e:
            if now_ns() < args.t0 + min(f["stop_ns"], args.duration):
                agent.errors.append(f"flow {i} ({f['cc']}): {e}")
        except OSError as e:
            agent.errors.append(f"flow {i} ({f['cc']}): {e}")

    if not agent.ready_then_wait_for_t0():
        agent.write({"finished_ns": finished})
        return 0
    threads = [threading.Thread(target=run_flow, args=(f,), daemon=True) for f in flows]
    for t in threads:
        t.start()
    counters: list = [[0, netstat_counters()]]
    for k in agent.ticks():
        row = {}
        for i, s in list(socks.items()):
            try:
                row[i] = tcp_info(s)
            except OSError:
                pass
        agent.samples.append([k, row])
        counters.append([k, netstat_counters()])
    agent.stop.set()
    for t in threads:
        t.join(timeout=1.0)
    agent.write({"finished_ns": finished, "netstat": counters})
    for s in socks.values():
        s.close()
    return 0


# ---- bottleneck qdisc --------------------------------------------------------------


def qdisc(args) -> int:
    from pyroute2 import IPRoute

    agent = Agent(args)
    with IPRoute() as ipr:
        idx = ipr.link_lookup(ifname=args.dev)
        if not idx:
            agent.errors.append(f"no device {args.dev}")
            agent.write({})
            return 1

        def read() -> dict:
            # The leaf qdisc holding the queue (pfifo/bfifo under htb) and
            # the root (htb): its counters see every packet offered.
            out = {}
            for q in ipr.get_qdiscs(index=idx[0]):
                handle = q["handle"] >> 16
                st = q.get_attr("TCA_STATS2")
                if st is None:
                    continue
                basic = st.get_attr("TCA_STATS_BASIC") or {}
                queue = st.get_attr("TCA_STATS_QUEUE") or {}
                out[f"{handle:x}"] = {
                    "kind": q.get_attr("TCA_KIND"),
                    "bytes": basic.get("bytes", 0),
                    "packets": basic.get("packets", 0),
                    "qlen": queue.get("qlen", 0),
                    "backlog": queue.get("backlog", 0),
                    "drops": queue.get("drops", 0),
                }
            return out

        agent.samples.append([0, read()])
        if not agent.ready_then_wait_for_t0():
            agent.write({})
            return 0
        for k in agent.ticks():
            agent.samples.append([k, read()])
    agent.write({})
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="agent.py")
    sub = p.add_subparsers(dest="mode", required=True)
    for name in ("recv", "send", "qdisc"):
        s = sub.add_parser(name)
        s.add_argument("--t0", type=int, help="CLOCK_MONOTONIC ns of time 0")
        s.add_argument("--t0-file", help="...or the file it will be written to once every agent is ready")
        s.add_argument("--interval", type=int, required=True, help="sampling interval, ns")
        s.add_argument("--duration", type=int, required=True, help="run length, ns")
        s.add_argument("--out", required=True, help="JSON file written at the end")
        s.add_argument("--ready", help="file created once listening/ready")
    r = sub.choices["recv"]
    r.add_argument("--addr", required=True)
    r.add_argument("--port", type=int, required=True)
    r.add_argument("--flows", type=int, required=True)
    s = sub.choices["send"]
    s.add_argument("--dst", required=True)
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--flows", required=True, help="JSON list of this group's flows")
    q = sub.choices["qdisc"]
    q.add_argument("--dev", required=True)
    args = p.parse_args(argv)
    if args.t0 is None and args.t0_file is None:
        p.error("give --t0 or --t0-file")
    return {"recv": recv, "send": send, "qdisc": qdisc}[args.mode](args)


if __name__ == "__main__":
    sys.exit(main())
