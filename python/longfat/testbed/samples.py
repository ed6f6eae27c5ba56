"""A testbed run's results: the agents' samples turned into the
simulator's tables and summary, and whether the run was faithful."""

from __future__ import annotations

import json
import math
import os
import platform
from pathlib import Path

import numpy as np

from longfat.scenario import seed_of
from longfat.testbed.planning import CEILING_BPS, L2_HEADER, Plan

def _load(path: Path) -> dict:
    doc = json.loads(path.read_text())
    if doc.get("errors"):
        raise RuntimeError(f"testbed: {path.name}: {'; '.join(doc['errors'][:3])}")
    return doc


def results(plan: Plan, work: Path, meta: dict):
    """The run's RunResult, from the agents' samples (same tables and
    summary keys as the simulator's; see docs/scenarios.md, Outputs)."""
    from longfat.runner import RunResult, series_table

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
    flows_t = series_table(flow_cols, "flow", {"flow_name": [f.name for f in flows], "algorithm": [f.cc for f in flows]})

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
    links_t = series_table(link_cols, "link", {"link_name": ["bottleneck"]})

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
        "seed": seed_of(plan.spec),
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
