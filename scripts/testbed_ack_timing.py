#!/usr/bin/env python3
"""The timing of a testbed sender's ACK clock, from a packet capture on its
veth: how often the ACKs stall and how many data packets leave between two
ACKs (docs/testbed.md, "Timing noise"). A diagnostic, not part of the
package; it needs tcpdump and dpkt (`apt-get install tcpdump`,
`pip install dpkt`).

    longfat testbed up --set 'network.bottleneck.rate="250Mbps"'
    longfat kernel load ehstcp
    ip netns exec lfup-s0 iperf3 -c 10.78.0.1 -C longfat_ehstcp -t 12 &
    sleep 4; ip netns exec lfup-s0 timeout 4 tcpdump -i s0 -s 96 -w /tmp/s0.pcap --time-stamp-precision=nano
    python3 scripts/testbed_ack_timing.py /tmp/s0.pcap

The sender is 10.77.0.1 (group 0); data packets are the TCP segments it sends
with a payload, ACKs the segments it receives.
"""

from __future__ import annotations

import argparse
import bisect
import socket
import sys


def quantile(xs: list[float], q: float) -> float:
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pcap")
    ap.add_argument("--sender", default="10.77.0.1")
    ap.add_argument("--stall-ms", type=float, default=1.0, help="an ACK gap longer than this is a stall (default 1 ms)")
    a = ap.parse_args(argv)
    try:
        import dpkt
    except ImportError:
        print("needs dpkt: pip install dpkt", file=sys.stderr)
        return 2
    sender = socket.inet_aton(a.sender)
    data, acks = [], []
    with open(a.pcap, "rb") as fh:
        for ts, buf in dpkt.pcap.UniversalReader(fh):
            eth = dpkt.ethernet.Ethernet(buf)
            ip = eth.data
            if not isinstance(ip, dpkt.ip.IP) or not isinstance(ip.data, dpkt.tcp.TCP):
                continue
            t_us = float(ts) * 1e6
            if ip.src == sender and len(ip.data.data) > 0:
                data.append(t_us)
            elif ip.dst == sender:
                acks.append(t_us)
    if len(acks) < 100 or len(data) < 100:
        print(f"too few packets: {len(data)} data, {len(acks)} ACKs", file=sys.stderr)
        return 1
    span_s = (max(data[-1], acks[-1]) - min(data[0], acks[0])) / 1e6
    gaps = sorted(b - x for x, b in zip(acks, acks[1:]))
    stalls = [g for g in gaps if g > a.stall_ms * 1000]
    per_ack = sorted(bisect.bisect_left(data, b) - bisect.bisect_left(data, x) for x, b in zip(acks, acks[1:]))
    print(f"{len(data)} data packets ({len(data) * 1500 * 8 / span_s / 1e6:.0f} Mbit/s at 1500 B), {len(acks)} ACKs in {span_s:.2f} s")
    print(f"ACK gaps (us): median {quantile(gaps, .5):.0f}, p99 {quantile(gaps, .99):.0f}, max {gaps[-1]:.0f}")
    print(f"ACK stalls over {a.stall_ms:g} ms: {len(stalls) / span_s:.1f} per s, {sum(g > 5000 for g in gaps) / span_s:.2f} per s over 5 ms, "
          f"{100 * sum(stalls) / 1e6 / span_s:.1f} % of the time")
    print(f"data packets sent between two ACKs: median {quantile(per_ack, .5)}, p99 {quantile(per_ack, .99)}, p99.9 {quantile(per_ack, .999)}, max {per_ack[-1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
