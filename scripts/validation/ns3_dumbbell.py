#!/usr/bin/env python3
"""One ns-3 (3.44, PyPI wheel `ns3`) run of a dumbbell comparison: prints one
JSON object with per-flow goodput and the bottleneck queue's delay over the
measurement window. Run by `ns3_bbr_aqm.py --rerun-ns3` in the interpreter
that has `ns3` (a validation-time dependency, never a runtime one: the extra
`validation` of pyproject.toml); not imported by longfat.

    /work/ns3venv/bin/python scripts/validation/ns3_dumbbell.py '<case json>'

The case (built by ns3_bbr_aqm.py from its CASES table) gives: `cc` ("bbr" or
"cubic"), `flows`, `ecn`, `discipline` ("fifo", "fq_codel", "red") with its
parameters, `duration_s`, `measure_from_s`, `sample_interval_s`, `seed`;
optionally `trace_interval_s` (adds a time series of each BBR sender's
cwnd, pacing rate, bandwidth filter, min_rtt, mode and gain-cycle phase, and
of the queue: the `trace` key of the output) and `bbr_streams` (sender i's
TcpBbr draws from random stream bbr_streams[i] instead of the default 4),
both for ns3_bbr_aqm.py's `--bbr-experiments`.

The network (what longfat's dumbbell builds, docs/scenarios.md):

    sender_i --access-- r0 ==bottleneck== r1 --access-- receiver_i

Point-to-point links; the bottleneck 100 Mbit/s with 35 ms one-way delay
(base RTT 70 ms), each access link 1 Gbit/s with 0 delay (longfat's default
access: 10 x the bottleneck rate, no delay). Each host's and each router's
access-facing device keeps ns-3's default root queue disc replaced by a
1000-packet pfifo_fast (Linux's txqueuelen, longfat's default access queue).

The queue under test is the traffic-control queue disc on both directions of
the bottleneck. Its device queue (PointToPointNetDevice's DropTailQueue) is
cut to one packet: the traffic-control layer stops the queue disc whenever
the device queue is full (NetDeviceQueueInterface flow control), so packets
wait in the queue disc, where the AQM sees them, and at most one packet waits
in the device behind the one being serialised. longfat's AQM link serves its
discipline directly; the one extra packet is 120 us at 100 Mbit/s.
"""

from __future__ import annotations

import json
import resource
import sys
import time

PKT_PAYLOAD = 1448  # MSS: 1500-byte IP packets with the 12-byte timestamp option
BOTTLENECK_RATE = "100Mbps"
BOTTLENECK_DELAY = "35ms"
ACCESS_RATE = "1Gbps"
ACCESS_DELAY = "0ms"
ACCESS_QUEUE = "1000p"

# Accumulators read from Python: compiled once by cppyy (C++ trace sinks cost
# nothing per packet compared with a Python callback).
_PROBE_CPP = r"""
#include "ns3/core-module.h"
#include "ns3/network-module.h"
#include "ns3/traffic-control-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/internet-module.h"
#include <vector>
namespace lfval {
struct Probe {
    ns3::Ptr<ns3::QueueDisc> qd;
    ns3::Ptr<ns3::Queue<ns3::Packet>> devq;
    double t0{0}, t1{0}, interval{0.01}, rate_bps{0};
    // Per packet leaving the queue disc in [t0, t1): its sojourn (SojournTime).
    double soj_sum{0}, soj_max{0};
    uint64_t soj_n{0};
    // Sampled every `interval` in [t0, t1): queue disc + device queue backlog.
    // Wire bytes: the queue disc holds IP packets, the device queue adds PPP's 2 bytes.
    double backlog_wire_bytes_sum{0}, backlog_pkts_sum{0};
    uint64_t samples{0};
    void Sojourn(ns3::Time t) {
        double now = ns3::Simulator::Now().GetSeconds();
        if (now >= t0 && now < t1) {
            double s = t.GetSeconds();
            soj_sum += s; soj_n++;
            if (s > soj_max) soj_max = s;
        }
    }
    void Sample() {
        double now = ns3::Simulator::Now().GetSeconds();
        if (now >= t0 && now < t1) {
            backlog_wire_bytes_sum += qd->GetNBytes() + 2.0 * qd->GetNPackets() + devq->GetNBytes();
            backlog_pkts_sum += qd->GetNPackets() + devq->GetNPackets();
            samples++;
        }
        if (now + interval < t1 + 1e-12)
            ns3::Simulator::Schedule(ns3::Seconds(interval), &Probe::Sample, this);
    }
};
// A flow's cwnd at or below `floor_bytes` (BBR's PROBE_RTT holds it at 4
// segments, bbr_cwnd_min_target): how often it got there in [t0, t1) and for how long.
struct CwndWatch {
    double t0{0}, t1{0};
    uint32_t floor_bytes{0};
    uint64_t entries{0};
    bool below{false};
    double since{0}, time_below{0};
    uint64_t calls{0};
    uint32_t min_cwnd{~0U};
    void Cwnd(uint32_t, uint32_t cwnd) {
        double now = ns3::Simulator::Now().GetSeconds();
        calls++;
        if (now >= t0 && now < t1 && cwnd < min_cwnd) min_cwnd = cwnd;
        bool b = cwnd <= floor_bytes;
        if (b && !below) {
            since = now;
            if (now >= t0 && now < t1) entries++;
        }
        if (!b && below) time_below += overlap(since, now);
        below = b;
    }
    double overlap(double a, double b) const {
        double lo = a > t0 ? a : t0, hi = b < t1 ? b : t1;
        return hi > lo ? hi - lo : 0;
    }
    double total_below() const { return time_below + (below ? overlap(since, t1) : 0); }
};
CwndWatch* watch_cwnd(uint32_t node, double at, double t0, double t1, uint32_t floor_bytes) {
    auto* w = new CwndWatch();
    w->t0 = t0; w->t1 = t1; w->floor_bytes = floor_bytes;
    std::string path = "/NodeList/" + std::to_string(node) + "/$ns3::TcpL4Protocol/SocketList/0/CongestionWindow";
    ns3::Simulator::Schedule(ns3::Seconds(at), [w, path]() {
        ns3::Config::ConnectWithoutContext(path, ns3::MakeCallback(&CwndWatch::Cwnd, w));
    });
    return w;
}
Probe* attach(ns3::Ptr<ns3::QueueDisc> qd, ns3::Ptr<ns3::NetDevice> dev, double t0, double t1, double interval) {
    auto* p = new Probe();
    p->qd = qd;
    p->devq = ns3::DynamicCast<ns3::PointToPointNetDevice>(dev)->GetQueue();
    p->t0 = t0; p->t1 = t1; p->interval = interval;
    qd->TraceConnectWithoutContext("SojournTime", ns3::MakeCallback(&Probe::Sojourn, p));
    ns3::Simulator::Schedule(ns3::Seconds(t0), &Probe::Sample, p);
    return p;
}
// Optional (case key `trace_interval_s`): a time series of each BBR sender's
// state, read every `interval` from the socket and its TcpBbr. The members
// are protected/private; their pointers-to-member are taken through explicit
// template instantiation (which ignores access), for this diagnostic only.
template <typename Tag, typename Tag::type M> struct Rob {
    friend typename Tag::type get(Tag) { return M; }
};
struct RobTcb { typedef ns3::Ptr<ns3::TcpSocketState> ns3::TcpSocketBase::*type; friend type get(RobTcb); };
struct RobCc { typedef ns3::Ptr<ns3::TcpCongestionOps> ns3::TcpSocketBase::*type; friend type get(RobCc); };
struct RobBw { typedef ns3::TcpBbr::MaxBandwidthFilter_t ns3::TcpBbr::*type; friend type get(RobBw); };
struct RobMinRtt { typedef ns3::TracedValue<ns3::Time> ns3::TcpBbr::*type; friend type get(RobMinRtt); };
struct RobCycle { typedef uint32_t ns3::TcpBbr::*type; friend type get(RobCycle); };
struct RobGain { typedef ns3::TracedValue<double> ns3::TcpBbr::*type; friend type get(RobGain); };
struct RobStamp { typedef ns3::Time ns3::TcpBbr::*type; friend type get(RobStamp); };
template struct Rob<RobTcb, &ns3::TcpSocketBase::m_tcb>;
template struct Rob<RobCc, &ns3::TcpSocketBase::m_congestionControl>;
template struct Rob<RobBw, &ns3::TcpBbr::m_maxBwFilter>;
template struct Rob<RobMinRtt, &ns3::TcpBbr::m_minRtt>;
template struct Rob<RobCycle, &ns3::TcpBbr::m_cycleIndex>;
template struct Rob<RobGain, &ns3::TcpBbr::m_pacingGain>;
template struct Rob<RobStamp, &ns3::TcpBbr::m_minRttStamp>;
struct Tracer {
    std::vector<ns3::Ptr<ns3::Node>> nodes;
    ns3::Ptr<ns3::QueueDisc> qd;
    double interval{0.01}, t1{0};
    // one row per sample: t, queue pkts, then per flow: cwnd, inflight, pacing
    // bps, bw bps, min_rtt s, last rtt s, state, cycle index, pacing gain, min_rtt stamp s
    std::vector<double> rows;
    size_t width() const { return 2 + 10 * nodes.size(); }
    void Sample() {
        double now = ns3::Simulator::Now().GetSeconds();
        rows.push_back(now);
        rows.push_back(qd->GetNPackets());
        for (auto& n : nodes) {
            auto l4 = n->GetObject<ns3::TcpL4Protocol>();
            ns3::ObjectVectorValue socks;
            l4->GetAttribute("SocketList", socks);
            ns3::Ptr<ns3::TcpSocketBase> s = socks.GetN() ? ns3::DynamicCast<ns3::TcpSocketBase>(socks.Get(0)) : nullptr;
            if (!s) { for (int k = 0; k < 10; k++) rows.push_back(-1); continue; }
            auto tcb = (*s).*get(RobTcb());
            auto bbr = ns3::DynamicCast<ns3::TcpBbr>((*s).*get(RobCc()));
            rows.push_back(tcb->m_cWnd.Get());
            rows.push_back(tcb->m_bytesInFlight.Get());
            rows.push_back(tcb->m_pacingRate.Get().GetBitRate());
            if (bbr) {
                rows.push_back(((*bbr).*get(RobBw())).GetBest().GetBitRate());
                rows.push_back(((*bbr).*get(RobMinRtt())).Get().GetSeconds());
                rows.push_back(tcb->m_lastRtt.Get().GetSeconds());
                rows.push_back(bbr->GetBbrState());
                rows.push_back((*bbr).*get(RobCycle()));
                rows.push_back(((*bbr).*get(RobGain())).Get());
                rows.push_back(((*bbr).*get(RobStamp())).GetSeconds());
            } else {
                for (int k = 0; k < 7; k++) rows.push_back(-1);
            }
        }
        if (now + interval < t1 + 1e-12)
            ns3::Simulator::Schedule(ns3::Seconds(interval), &Tracer::Sample, this);
    }
};
// Give sender `node`'s TcpBbr its own random stream (case key
// `bbr_streams`): every TcpBbr's `Stream` attribute defaults to 4, so with
// one run number all flows draw the same PROBE_BW starting phase.
void set_bbr_stream(uint32_t node, double at, uint32_t stream) {
    ns3::Simulator::Schedule(ns3::Seconds(at), [node, stream]() {
        auto l4 = ns3::NodeList::GetNode(node)->GetObject<ns3::TcpL4Protocol>();
        ns3::ObjectVectorValue socks;
        l4->GetAttribute("SocketList", socks);
        auto s = ns3::DynamicCast<ns3::TcpSocketBase>(socks.Get(0));
        auto bbr = ns3::DynamicCast<ns3::TcpBbr>((*s).*get(RobCc()));
        bbr->SetStream(stream);
    });
}
Tracer* trace(ns3::Ptr<ns3::QueueDisc> qd, ns3::NodeContainer senders, double t0, double t1, double interval) {
    auto* t = new Tracer();
    t->qd = qd; t->t1 = t1; t->interval = interval;
    for (uint32_t i = 0; i < senders.GetN(); i++) t->nodes.push_back(senders.Get(i));
    ns3::Simulator::Schedule(ns3::Seconds(t0), &Tracer::Sample, t);
    return t;
}
}
"""


def configure_tcp(ns, case: dict) -> None:
    """TCP as longfat's `linux` profile is configured (docs/algorithms.md):
    SACK, timestamps, window scaling, MSS 1448, IW10, delayed ACK every 2
    segments with a 40 ms timeout (Linux's TCP_ATO_MIN, the least `ato`),
    RTO floor 200 ms (TCP_RTO_MIN), buffers of 64 MiB (never limiting: the
    BDP is 0.875 MB), Nagle off, PRR recovery (ns-3's default), pacing only
    for BBR (which turns it on itself, as Linux's BBR sets sk_pacing_status)."""
    C = ns.Config.SetDefault
    tcp = {"bbr": "ns3::TcpBbr", "cubic": "ns3::TcpCubic"}[case["cc"]]
    C("ns3::TcpL4Protocol::SocketType", ns.TypeIdValue(ns.TypeId.LookupByName(tcp)))
    C("ns3::TcpL4Protocol::RecoveryType", ns.TypeIdValue(ns.TypeId.LookupByName("ns3::TcpPrrRecovery")))
    C("ns3::TcpSocket::SegmentSize", ns.UintegerValue(PKT_PAYLOAD))
    C("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(10))
    C("ns3::TcpSocket::DelAckCount", ns.UintegerValue(2))
    C("ns3::TcpSocket::DelAckTimeout", ns.TimeValue(ns.MilliSeconds(40)))
    C("ns3::TcpSocket::SndBufSize", ns.UintegerValue(64 << 20))
    C("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(64 << 20))
    C("ns3::TcpSocket::TcpNoDelay", ns.BooleanValue(True))
    C("ns3::TcpSocketBase::Sack", ns.BooleanValue(True))
    C("ns3::TcpSocketBase::Timestamp", ns.BooleanValue(True))
    C("ns3::TcpSocketBase::WindowScaling", ns.BooleanValue(True))
    C("ns3::TcpSocketBase::MinRto", ns.TimeValue(ns.MilliSeconds(200)))
    C("ns3::TcpSocketBase::ClockGranularity", ns.TimeValue(ns.MilliSeconds(1)))
    C("ns3::TcpSocketBase::UseEcn", ns.StringValue("On" if case["ecn"] else "Off"))
    C("ns3::TcpSocketState::EnablePacing", ns.BooleanValue(case["cc"] == "bbr"))


def bottleneck_qdisc(ns, case: dict):
    """The TrafficControlHelper for the bottleneck's two directions."""
    d = case["discipline"]
    tch = ns.TrafficControlHelper()
    if d["kind"] == "fifo":
        tch.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", ns.QueueSizeValue(ns.QueueSize(f"{d['limit_pkts']}p")))
    elif d["kind"] == "fq_codel":
        tch.SetRootQueueDisc(
            "ns3::FqCoDelQueueDisc",
            "MaxSize", ns.QueueSizeValue(ns.QueueSize(f"{d['limit_pkts']}p")),
            "Target", ns.StringValue(f"{d['target_ms']}ms"),
            "Interval", ns.StringValue(f"{d['interval_ms']}ms"),
            "Flows", ns.UintegerValue(d["flows"]),
            "DropBatchSize", ns.UintegerValue(d["drop_batch"]),
            "UseEcn", ns.BooleanValue(d["ecn"]),
        )
    elif d["kind"] == "red":
        tch.SetRootQueueDisc(
            "ns3::RedQueueDisc",
            "MaxSize", ns.QueueSizeValue(ns.QueueSize(f"{d['limit_pkts']}p")),
            "MinTh", ns.DoubleValue(d["min_th_pkts"]),
            "MaxTh", ns.DoubleValue(d["max_th_pkts"]),
            "QW", ns.DoubleValue(d["weight"]),
            "LInterm", ns.DoubleValue(1.0 / d["max_p"]),
            "Gentle", ns.BooleanValue(d["gentle"]),
            "Wait", ns.BooleanValue(d["wait"]),
            "MeanPktSize", ns.UintegerValue(d["mean_pkt_bytes"]),
            "LinkBandwidth", ns.DataRateValue(ns.DataRate(BOTTLENECK_RATE)),
            "LinkDelay", ns.TimeValue(ns.Time(BOTTLENECK_DELAY)),
            "UseEcn", ns.BooleanValue(d["ecn"]),
            "UseHardDrop", ns.BooleanValue(True),
        )
    else:
        raise ValueError(f"discipline {d['kind']!r}")
    return tch


def run(case: dict) -> dict:
    from ns import ns

    ns.cppyy.cppdef(_PROBE_CPP)
    lf = ns.cppyy.gbl.lfval

    ns.RngSeedManager.SetSeed(1)
    ns.RngSeedManager.SetRun(case["seed"])
    configure_tcp(ns, case)

    n = case["flows"]
    senders, receivers, routers = ns.NodeContainer(), ns.NodeContainer(), ns.NodeContainer()
    senders.Create(n)
    receivers.Create(n)
    routers.Create(2)
    stack = ns.InternetStackHelper()
    stack.Install(senders)
    stack.Install(receivers)
    stack.Install(routers)

    def p2p(rate, delay, devq="100p"):
        h = ns.PointToPointHelper()
        h.SetDeviceAttribute("DataRate", ns.StringValue(rate))
        h.SetChannelAttribute("Delay", ns.StringValue(delay))
        h.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", ns.QueueSizeValue(ns.QueueSize(devq)))
        return h

    access_tch = ns.TrafficControlHelper()
    access_tch.SetRootQueueDisc("ns3::PfifoFastQueueDisc", "MaxSize", ns.QueueSizeValue(ns.QueueSize(ACCESS_QUEUE)))
    addr = ns.Ipv4AddressHelper()

    bn = p2p(BOTTLENECK_RATE, BOTTLENECK_DELAY, "1p").Install(routers.Get(0), routers.Get(1))
    qdiscs = bottleneck_qdisc(ns, case).Install(bn)
    addr.SetBase(ns.Ipv4Address("10.0.0.0"), ns.Ipv4Mask("255.255.255.0"))
    addr.Assign(bn)

    recv_ifaces = []
    for i in range(n):
        a = p2p(ACCESS_RATE, ACCESS_DELAY).Install(senders.Get(i), routers.Get(0))
        b = p2p(ACCESS_RATE, ACCESS_DELAY).Install(routers.Get(1), receivers.Get(i))
        access_tch.Install(a)
        access_tch.Install(b)
        addr.SetBase(ns.Ipv4Address(f"10.1.{i}.0"), ns.Ipv4Mask("255.255.255.0"))
        addr.Assign(a)
        addr.SetBase(ns.Ipv4Address(f"10.2.{i}.0"), ns.Ipv4Mask("255.255.255.0"))
        recv_ifaces.append(addr.Assign(b))
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()

    port = 5000
    sinks = []
    dur, t0 = case["duration_s"], case["measure_from_s"]
    for i in range(n):
        dst = ns.InetSocketAddress(recv_ifaces[i].GetAddress(1), port + i).ConvertTo()
        sink_helper = ns.PacketSinkHelper("ns3::TcpSocketFactory", ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port + i).ConvertTo())
        sapp = sink_helper.Install(receivers.Get(i))
        sapp.Start(ns.Seconds(0))
        sinks.append(sapp.Get(0).GetObject[ns.PacketSink]())
        bulk = ns.BulkSendHelper("ns3::TcpSocketFactory", dst)
        bulk.SetAttribute("MaxBytes", ns.UintegerValue(0))
        bulk.SetAttribute("SendSize", ns.UintegerValue(PKT_PAYLOAD))
        capp = bulk.Install(senders.Get(i))
        capp.Start(ns.Seconds(case["starts_s"][i]))

    probe = lf.attach(qdiscs.Get(0), bn.Get(0), float(t0), float(dur), float(case["sample_interval_s"]))
    # Each sender's socket exists once its BulkSend starts.
    watches = [
        lf.watch_cwnd(senders.Get(i).GetId(), case["starts_s"][i] + 0.001, float(t0), float(dur), 4 * PKT_PAYLOAD)
        for i in range(n)
    ]

    for i, stream in enumerate(case.get("bbr_streams") or []):
        lf.set_bbr_stream(senders.Get(i).GetId(), case["starts_s"][i] + 0.001, int(stream))
    tracer = None
    if case.get("trace_interval_s"):
        tracer = lf.trace(qdiscs.Get(0), senders, 0.05, float(dur), float(case["trace_interval_s"]))

    wall0, cpu0 = time.perf_counter(), time.process_time()
    ns.Simulator.Stop(ns.Seconds(t0))
    ns.Simulator.Run()
    rx0 = [s.GetTotalRx() for s in sinks]
    ns.Simulator.Stop(ns.Seconds(dur - t0))
    ns.Simulator.Run()
    rx1 = [s.GetTotalRx() for s in sinks]
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0

    window = dur - t0
    stats = qdiscs.Get(0).GetStats()
    rate_bps = 100e6
    out = {
        "case": case["name"],
        "ns3_version": ns.Version().ShortVersion() if hasattr(ns, "Version") else "3.44",
        "flows": [
            {
                "flow": i,
                "goodput_bps": (rx1[i] - rx0[i]) * 8.0 / window,
                "payload_bytes": int(rx1[i] - rx0[i]),
                # cwnd down to 4 segments: BBR's PROBE_RTT (for CUBIC, a timeout)
                "cwnd_floor_entries": int(watches[i].entries),
                "cwnd_floor_s": watches[i].total_below(),
                "cwnd_min_pkts": watches[i].min_cwnd / PKT_PAYLOAD if watches[i].calls else None,
                "cwnd_changes": int(watches[i].calls),
            }
            for i in range(n)
        ],
        "mean_sojourn_ms": probe.soj_sum / probe.soj_n * 1e3 if probe.soj_n else 0.0,
        "max_sojourn_ms": probe.soj_max * 1e3,
        "sojourn_packets": int(probe.soj_n),
        # Time average of the backlog (queue disc + device queue) over the
        # window, as a delay: its bytes on the wire / the bottleneck rate.
        "mean_backlog_pkts": probe.backlog_pkts_sum / probe.samples if probe.samples else 0.0,
        "mean_backlog_delay_ms": probe.backlog_wire_bytes_sum / probe.samples * 8 / rate_bps * 1e3 if probe.samples else 0.0,
        "samples": int(probe.samples),
        "qdisc_drops_total": int(stats.nTotalDroppedPackets),
        "qdisc_marks_total": int(stats.nTotalMarkedPackets),
        "qdisc_classes": int(qdiscs.Get(0).GetNQueueDiscClasses()),
        "wall_s": wall,
        "cpu_s": cpu,
        "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }
    if tracer is not None:
        w = int(tracer.width())
        flat = list(tracer.rows)
        names = ["cwnd_bytes", "inflight_bytes", "pacing_bps", "bw_bps", "min_rtt_s", "last_rtt_s", "state", "cycle_index", "pacing_gain", "min_rtt_stamp_s"]
        out["trace"] = {
            "t_s": flat[0::w],
            "queue_pkts": flat[1::w],
            "flows": [{k: flat[2 + 10 * i + j :: w] for j, k in enumerate(names)} for i in range(n)],
        }
    ns.Simulator.Destroy()
    return out


if __name__ == "__main__":
    print(json.dumps(run(json.loads(sys.argv[1]))))
