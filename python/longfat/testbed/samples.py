"""A testbed run's results: the agents' samples turned into the
simulator's tables and summary, and whether the run was faithful."""

from __future__ import annotations

import json
import math
import os
import platform
from pathlib import Path

import numpy as np

from longfat._native import jain_index
from longfat.scenario import seed_of
from longfat.testbed.planning import CEILING_BPS, L2_HEADER, Plan

def _load(path: Path) -> dict:
    doc = json.loads(path.read_text())
    if doc.get("errors"):
        raise RuntimeError(f"testbed: {path.name}: {'; '.join(doc['errors'][:3])}")
    return doc


class _Samples:
    """The agents' samples on one time axis: the receiver's byte counts
    (``rbytes``, ticks x flows), each flow's TCP_INFO (``info``; a missed
    sample carries the last one forward) and the bottleneck's leaf qdiscs
    (``qs``, per tick; ``base``, at tick 0), and the measurement window
    (samples after ``measure_from``, from index ``j0``, over ``span_s``)."""

    def __init__(self, plan: Plan, recv: dict, sends: dict[int, dict], qd: dict):
        nf = len(plan.flows)
        self.nf = nf
        self.ticks = sorted({k for k, _ in recv["samples"]})
        K = len(self.ticks)
        if K == 0:
            raise RuntimeError("testbed: no samples were taken")
        self.K = K
        kidx = {k: j for j, k in enumerate(self.ticks)}
        self.rbytes = np.zeros((K, nf))
        for k, counts in recv["samples"]:
            self.rbytes[kidx[k]] = counts
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
        self.info = info
        self.t_ns = np.array(self.ticks, dtype=np.uint64) * np.uint64(plan.interval_ns)
        self.dt = plan.interval_ns / 1e9
        # the bottleneck: the leaf qdiscs (pfifo/bfifo: one, or one per
        # priority class) hold the queue and count the drops
        self.qs = {k: _leaves(row) for k, row in qd["samples"]}
        self.base = self.qs.get(0, {})
        t_s = self.t_ns.astype(float) / 1e9
        self.win = t_s > plan.measure_from_ns / 1e9 + 1e-9
        self.span_s = plan.duration_ns / 1e9 - plan.measure_from_ns / 1e9
        self.j0 = int(np.argmax(self.win)) if self.win.any() else K - 1

    def col(self, name: str, default=0) -> np.ndarray:
        """A TCP_INFO field, ticks x flows (``default`` where missing)."""
        info, nf = self.info, self.nf
        return np.array([[default if info[j][i] is None or info[j][i].get(name) is None else info[j][i][name] for i in range(nf)] for j in range(self.K)], dtype=float)

    def qcol(self, name: str) -> np.ndarray:
        return np.array([float(self.qs.get(k, {}).get(name, 0)) for k in self.ticks])

    def qdelta(self, name: str) -> np.ndarray:
        v = np.concatenate([[float(self.base.get(name, 0))], self.qcol(name)])
        return np.diff(v)

    def at_start(self, a: np.ndarray) -> np.ndarray:
        """``a`` at the sample before the window (zeros if none)."""
        return a[self.j0 - 1] if self.j0 > 0 else np.zeros(a.shape[1:])


def _leaves(row: dict) -> dict:
    out = {"bytes": 0, "packets": 0, "qlen": 0, "backlog": 0, "drops": 0}
    for q in row.values():
        if q.get("kind") in ("pfifo", "bfifo"):
            for k in out:
                out[k] += q.get(k, 0)
    return out


def results(plan: Plan, work: Path, meta: dict):
    """The run's RunResult, from the agents' samples (same tables and
    summary keys as the simulator's; see docs/scenarios.md, Outputs)."""
    from longfat.runner import RunResult

    recv = _load(work / "recv.json")
    qd = _load(work / "qdisc.json")
    sends = {g.index: _load(work / f"send{g.index}.json") for g in plan.groups}
    s = _Samples(plan, recv, sends, qd)
    flow_rows = _flow_rows(plan, s, recv, sends, meta)
    gp = [r["goodput_bps"] for r in flow_rows]
    summary = {
        "end_s": plan.duration_ns / 1e9,
        "flows": flow_rows,
        "jain_fairness": jain_index(gp),
        "links": [_link_row(plan, s)],
        "measure_from_s": plan.measure_from_ns / 1e9,
        "short_flows": [],
        "tcp_goodput_bps": float(sum(gp)),
        "scenario": plan.spec.get("name"),
        "seed": seed_of(plan.spec),
        "testbed": meta,
    }
    return RunResult(plan.spec, summary, _flow_table(plan, s), _link_table(plan, s), {}, None)


def _flow_table(plan: Plan, s: _Samples):
    """The flows' time series, as the simulator's flows.parquet."""
    from longfat.runner import series_table

    nf, dt = s.nf, s.dt
    goodput = np.diff(np.vstack([np.zeros(nf), s.rbytes]), axis=0) * 8 / dt
    throughput = np.diff(np.vstack([np.zeros(nf), s.col("bytes_sent")]), axis=0) * 8 / dt
    ssthresh = s.col("snd_ssthresh", math.nan)
    ssthresh[ssthresh >= 0x7FFFFFFF] = math.inf  # TCP_INFINITE_SSTHRESH
    srtt = s.col("rtt_us") * 1000
    n = s.K * nf
    flow_cols = {
        "time_ns": np.repeat(s.t_ns, nf),
        "flow": np.tile(np.arange(nf, dtype=np.uint32), s.K),
        "goodput_bps": goodput.reshape(n),
        "throughput_bps": throughput.reshape(n),
        "cwnd_pkts": s.col("snd_cwnd", math.nan).reshape(n),
        "ssthresh_pkts": ssthresh.reshape(n),
        "srtt_ns": srtt.reshape(n).astype(np.uint64),
        # TCP_INFO has no latest RTT sample: the smoothed RTT stands in.
        "rtt_ns": srtt.reshape(n).astype(np.uint64),
        "retransmits": s.col("total_retrans").reshape(n).astype(np.uint64),
        "timeouts": s.col("total_rto").reshape(n).astype(np.uint64),
    }
    return series_table(flow_cols, "flow", {"flow_name": [f.name for f in plan.flows], "algorithm": [f.cc for f in plan.flows]})


def _ip_bytes(s: _Samples) -> np.ndarray:
    """IP bytes the bottleneck sent per sample interval (the qdisc counts the Ethernet header)."""
    return s.qdelta("bytes") - L2_HEADER * s.qdelta("packets")


def _link_table(plan: Plan, s: _Samples):
    """The bottleneck's time series, as the simulator's links.parquet."""
    from longfat.runner import series_table

    qlen = s.qcol("qlen")
    backlog = s.qcol("backlog") - L2_HEADER * qlen
    drops = s.qdelta("drops")
    link_cols = {
        "time_ns": s.t_ns,
        "link": np.zeros(s.K, dtype=np.uint32),
        "queue_pkts": qlen.astype(np.uint64),
        "queue_bytes": np.maximum(backlog, 0).astype(np.uint64),
        "utilization": _ip_bytes(s) * 8 / (plan.rate_bps * s.dt),
        "drops_overflow": np.maximum(drops, 0).astype(np.uint64),
        "drops_random": np.zeros(s.K, dtype=np.uint64),
        # the testbed's bottleneck is a tail-drop queue: no AQM
        "drops_aqm": np.zeros(s.K, dtype=np.uint64),
        "ce_marks": np.zeros(s.K, dtype=np.uint64),
        "sojourn_mean_ns": np.full(s.K, np.nan),
        "sojourn_max_ns": np.full(s.K, np.nan),
    }
    return series_table(link_cols, "link", {"link_name": ["bottleneck"]})


def _recoveries(plan: Plan, s: _Samples, sends: dict[int, dict]) -> dict[int, int]:
    """Fast recoveries over the window from the sender namespace's TcpExt
    counters, for a group of one flow (a namespace's counters mix its flows)."""
    out: dict[int, int] = {}
    j0, ticks = s.j0, s.ticks
    for g in plan.groups:
        ns = {k: c for k, c in sends[g.index].get("netstat", [])}
        if len(g.flows) != 1 or not ns:
            continue
        before = max((k for k in ns if k <= ticks[j0 - 1]), default=None) if j0 > 0 else 0
        last = max(ns)
        if before is None or before not in ns:
            continue
        rec = lambda c: c.get("TCPSackRecovery", 0) + c.get("TCPRenoRecovery", 0)
        out[g.flows[0].index] = rec(ns[last]) - rec(ns[before])
    return out


def _flow_rows(plan: Plan, s: _Samples, recv: dict, sends: dict[int, dict], meta: dict) -> list[dict]:
    """The summary's flows: totals over the measurement window, as the simulator's summary."""
    span = s.span_s
    g_bytes = s.rbytes[-1] - s.at_start(s.rbytes)
    sent_b = s.col("bytes_sent")
    s_bytes = sent_b[-1] - s.at_start(sent_b)
    segs = s.col("data_segs_out")
    retrans = s.col("total_retrans")
    rtos = s.col("total_rto")
    done = recv.get("done_at_ns") or [None] * s.nf
    t0 = meta["t0_ns"]
    recoveries = _recoveries(plan, s, sends)

    def limited_frac(name: str, i: int) -> float | None:
        v = s.col(name, math.nan)[:, i]
        if not np.isfinite(v[-1]):
            return None
        v0 = s.at_start(np.nan_to_num(s.col(name)))[i]
        return float((v[-1] - v0) / 1e6 / span)

    flow_rows = []
    for f in plan.flows:
        i = f.index
        last = s.info[-1][i] or {}
        ct = None
        if f.size_bytes is not None and done[i] is not None:
            ct = (done[i] - (t0 + f.start_ns)) / 1e9
        sent_pkts = int(segs[-1, i] - s.at_start(segs)[i])
        rtx = int(retrans[-1, i] - s.at_start(retrans)[i])
        flow_rows.append({
            "algorithm": f.cc,
            "base_rtt_ms": plan.groups[f.group].rtt_ns / 1e6,
            "completion_time_s": ct,
            "fast_recoveries": recoveries.get(i),  # None: the flow shares its namespace's counters
            "final_cwnd_pkts": last.get("snd_cwnd"),
            "flow": i,
            "goodput_bps": g_bytes[i] * 8 / span,
            "name": f.name,
            "retransmit_rate": rtx / sent_pkts if sent_pkts else 0.0,
            "retransmits": rtx,
            "sent_pkts": sent_pkts,
            "throughput_bps": s_bytes[i] * 8 / span,
            "timeouts": int(rtos[-1, i] - s.at_start(rtos)[i]),
            "kernel_cc": f.kernel_cc,
            # Shares of the window the kernel says the flow was limited by
            # the receiver's window or its send buffer (the sending
            # application), not by cwnd (tcpi_rwnd_limited, tcpi_sndbuf_limited).
            "rwnd_limited_frac": limited_frac("rwnd_limited_us", i),
            "sndbuf_limited_frac": limited_frac("sndbuf_limited_us", i),
        })
    return flow_rows


def _link_row(plan: Plan, s: _Samples) -> dict:
    """The summary's bottleneck over the measurement window."""
    sel = s.win
    qlen = s.qcol("qlen")
    drops = s.qdelta("drops")
    w_drops = float(drops[sel].sum())
    w_sent = float(s.qdelta("packets")[sel].sum())
    offered = w_sent + w_drops
    return {
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
        "utilization": float(_ip_bytes(s)[sel].sum() * 8 / (plan.rate_bps * s.span_s)) if sel.any() else 0.0,
    }


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
