"""`longfat suite`: a standard set of experiments for congestion-control
algorithms on long fat networks, and the report card that scores them.

The criteria are the H-TCP paper's (sect. II and VII: efficiency, fairness
between like flows, RTT unfairness, friendliness to legacy TCP,
responsiveness), measured as the IRTF common TCP evaluation suite
(draft-irtf-iccrg-tcpeval) frames them (delay/throughput trade-off against
buffer size, inter-RTT fairness, transients, impact on standard TCP,
convergence). docs/suite-method.md gives every scenario, window and formula;
the card repeats them.

This module only defines the simulations (``cells``), turns their results
into scores (``analyse``) and writes the card (``write_card``); running the
cells (in parallel, with a results store) is the caller's business.
"""

from __future__ import annotations

import base64
import html
import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from longfat import heatmap
from longfat.reproduce.measure import ci95, jain
from longfat.units import rate_bps, seconds

PACKET = 1500  # bytes on the wire (the transport's default packet_size)
PAYLOAD = 1460  # goodput bytes per packet (default header_size 40)


# ---- the design ----------------------------------------------------------------


@dataclass(frozen=True)
class Path_:
    """One bandwidth-delay product: a bottleneck rate and a base RTT."""

    name: str
    rate_bps: float
    rtt_s: float
    # simulated durations (s) and windows, per experiment
    eff_duration: float
    eff_from: float
    pair_join: float  # fairness/convergence: when the second flow starts
    pair_duration: float
    rtt_duration: float  # RTT unfairness and friendliness runs
    rtt_from: float
    step_on: float  # responsiveness: UDP on at step_on, off at step_off
    step_off: float
    step_duration: float
    sample_s: float

    @property
    def bdp_pkts(self) -> float:
        return self.rate_bps * self.rtt_s / (8 * PACKET)

    @property
    def rate(self) -> str:
        r = self.rate_bps
        return f"{r / 1e9:g}Gbps" if r >= 1e9 else f"{r / 1e6:g}Mbps"


FULL_PATHS = (
    Path_("100Mbps-40ms", 100e6, 0.040, eff_duration=120, eff_from=20, pair_join=20, pair_duration=140,
          rtt_duration=120, rtt_from=40, step_on=20, step_off=40, step_duration=80, sample_s=0.1),
    Path_("1Gbps-160ms", 1e9, 0.160, eff_duration=120, eff_from=30, pair_join=30, pair_duration=240,
          rtt_duration=180, rtt_from=60, step_on=30, step_off=60, step_duration=150, sample_s=0.25),
)
QUICK_PATHS = (
    Path_("10Mbps-40ms", 10e6, 0.040, eff_duration=40, eff_from=10, pair_join=10, pair_duration=60,
          rtt_duration=40, rtt_from=15, step_on=10, step_off=20, step_duration=40, sample_s=0.1),
    Path_("20Mbps-80ms", 20e6, 0.080, eff_duration=40, eff_from=10, pair_join=10, pair_duration=60,
          rtt_duration=40, rtt_from=15, step_on=10, step_off=20, step_duration=40, sample_s=0.1),
)
FULL_BUFFERS = (0.01, 0.1, 0.2, 1.0)
QUICK_BUFFERS = (0.05, 0.2, 1.0)
#: The buffer (fraction of the BDP) of every experiment with competing flows
#: and of the responsiveness runs: the H-TCP paper's choice (sect. VII-B).
PAIR_BUFFER = 0.2
RTT_RATIOS = (2, 4)
#: The UDP source of the responsiveness runs takes this fraction of the link.
STEP_LOAD = 0.5
DEFAULT_SEEDS = 3
QUICK_SEEDS = 2
#: Smoothing window of convergence and reclaim times, in base RTTs of the path.
SMOOTH_RTTS = 25
#: Start jitter of every flow, and the extra one-way delay each flow's sender
#: access link may get (uniform, drawn from run.seed): what makes seeds differ.
START_JITTER_S = 1.0
DELAY_JITTER_S = 0.001
#: Responsiveness: the mean utilization is taken over this many RTTs after the step.
STEP_WINDOW_RTTS = 100

#: The AQM case: one flow alone, as in the efficiency runs, behind FQ-CoDel
#: (RFC 8290, the scenario's defaults: target 5 ms, interval 100 ms, 1024
#: buckets, ECN marking on but the suite's flows are not ECN-capable, so it
#: drops) with the efficiency runs' largest buffer as its limit: the buffer
#: where a loss-based flow behind a drop-tail FIFO builds the longest
#: standing queue, so the two columns side by side show what the AQM takes
#: away and whether the link stays full (docs/suite-method.md).
AQM_DISCIPLINE = "fq_codel"
AQM_BUFFER = 1.0

EXPERIMENTS = ("efficiency", "fairness", "rtt_unfairness", "friendliness", "responsiveness", "aqm")


@dataclass(frozen=True)
class SuiteCell:
    """One simulation of the suite."""

    labels: dict  # JSON-scalar values only
    scenario: dict  # fully resolved; includes run.seed
    cost: float  # relative cost (bottleneck packets, both directions), for longest-first ordering


def _ms(s: float) -> str:
    return f"{s * 1e3:.6g}ms"


def _s(s: float) -> str:
    return f"{s:.6g}s"


def _network(p: Path_, buffer_bdp: float, priority: bool, discipline: str | None = None) -> dict:
    bottleneck = {"rate": p.rate, "delay": _ms(p.rtt_s / 8), "queue": f"{buffer_bdp:g}bdp"}
    if discipline is not None:
        bottleneck["discipline"] = discipline
    elif priority:
        # PLT's low-priority module needs a class below its high-priority
        # one; one shared buffer of `queue`, as a router's memory. For flows
        # sending only in class 0 this link gives outputs identical to the
        # drop-tail FIFO (docs/suite-method.md).
        bottleneck.update(discipline="priority", buffer="shared")
    return {"topology": "dumbbell", "bdp_rtt": _ms(p.rtt_s), "bottleneck": bottleneck, "access": {"delay": "0ms"}}


#: Algorithms whose cells run on a strict-priority bottleneck (with one
#: shared buffer); every other algorithm's on a drop-tail FIFO.
NEEDS_PRIORITY = ("plt",)


def _flow(p: Path_, name: str, cc: str, rtt_s: float, start: float = 0.0) -> dict:
    # RTT = 2 x (sender access + bottleneck + receiver access), receiver access 0.
    return {
        "name": name,
        "cc": cc,
        "access_delay": _ms(rtt_s / 2 - p.rtt_s / 8),
        "start": _s(start),
        "start_jitter": _s(START_JITTER_S),
        "access_delay_jitter": _ms(DELAY_JITTER_S),
    }


def _scenario(name: str, p: Path_, buffer_bdp: float, flows: list[dict], duration: float, measure_from: float, seed: int, udp: list | None = None,
              discipline: str | None = None) -> dict:
    priority = any(f["cc"] in NEEDS_PRIORITY for f in flows)
    spec = {
        "name": name,
        "network": _network(p, buffer_bdp, priority, discipline),
        "flows": flows,
        "run": {"duration": _s(duration), "seed": seed, "measure_from": _s(measure_from), "sample_interval": _s(p.sample_s)},
    }
    if udp:
        spec["udp"] = udp
    return spec


def _cost(p: Path_, duration: float, cc: str = "") -> float:
    # data packets forward, ACKs back; a priority link costs about 1/3 more events
    return 2 * p.rate_bps * duration / (8 * PACKET) * (1.3 if cc in NEEDS_PRIORITY else 1.0)


def cells(ccs: list[str], *, quick: bool = False, seeds: int | None = None) -> list[SuiteCell]:
    """Every simulation of the suite for the algorithms ``ccs``: per
    algorithm, bandwidth-delay product and seed, 4 efficiency runs (one per
    buffer size; 3 in quick mode), one fairness/convergence run, one RTT
    unfairness run per RTT ratio, one friendliness run, one
    responsiveness run and one run behind FQ-CoDel (none for the
    algorithms of NEEDS_PRIORITY: an AQM link has no priority classes)."""
    if not ccs:
        raise ValueError("cells: give at least one algorithm")
    if len(set(ccs)) != len(ccs):
        raise ValueError(f"cells: an algorithm is listed twice in {ccs}")
    n = seeds if seeds is not None else (QUICK_SEEDS if quick else DEFAULT_SEEDS)
    if not (isinstance(n, int) and n >= 1):
        raise ValueError(f"cells: seeds must be a whole number >= 1, not {n!r}")
    paths = QUICK_PATHS if quick else FULL_PATHS
    buffers = QUICK_BUFFERS if quick else FULL_BUFFERS
    out: list[SuiteCell] = []
    for cc in ccs:
        for p in paths:
            for seed in range(1, n + 1):
                base = {"cc": cc, "bdp": p.name, "seed": seed}

                def add(experiment: str, spec: dict, duration: float, **extra: Any) -> None:
                    labels = {"experiment": experiment, **base, **extra}
                    out.append(SuiteCell(labels, spec, _cost(p, duration, cc)))

                for b in buffers:
                    spec = _scenario(f"suite-eff-{p.name}-{cc}-b{b:g}", p, b, [_flow(p, "flow", cc, p.rtt_s)], p.eff_duration, p.eff_from, seed)
                    add("efficiency", spec, p.eff_duration, buffer_bdp=b)
                flows = [_flow(p, "first", cc, p.rtt_s), _flow(p, "second", cc, p.rtt_s, start=p.pair_join)]
                half = p.pair_join + (p.pair_duration - p.pair_join) / 2
                spec = _scenario(f"suite-fair-{p.name}-{cc}", p, PAIR_BUFFER, flows, p.pair_duration, half, seed)
                add("fairness", spec, p.pair_duration, buffer_bdp=PAIR_BUFFER)
                for k in RTT_RATIOS:
                    flows = [_flow(p, "long", cc, p.rtt_s), _flow(p, "short", cc, p.rtt_s / k)]
                    spec = _scenario(f"suite-rtt-{p.name}-{cc}-k{k}", p, PAIR_BUFFER, flows, p.rtt_duration, p.rtt_from, seed)
                    add("rtt_unfairness", spec, p.rtt_duration, buffer_bdp=PAIR_BUFFER, rtt_ratio=k)
                flows = [_flow(p, "tested", cc, p.rtt_s), _flow(p, "reno", "reno", p.rtt_s)]
                spec = _scenario(f"suite-friend-{p.name}-{cc}", p, PAIR_BUFFER, flows, p.rtt_duration, p.rtt_from, seed)
                add("friendliness", spec, p.rtt_duration, buffer_bdp=PAIR_BUFFER)
                udp = [{"name": "udp", "pattern": "cbr", "rate": f"{p.rate_bps * STEP_LOAD / 1e6:g}Mbps", "start": _s(p.step_on), "stop": _s(p.step_off)}]
                spec = _scenario(f"suite-step-{p.name}-{cc}", p, PAIR_BUFFER, [_flow(p, "flow", cc, p.rtt_s)], p.step_duration, p.step_off, seed, udp)
                add("responsiveness", spec, p.step_duration, buffer_bdp=PAIR_BUFFER)
                if cc not in NEEDS_PRIORITY:
                    spec = _scenario(f"suite-aqm-{p.name}-{cc}", p, AQM_BUFFER, [_flow(p, "flow", cc, p.rtt_s)], p.eff_duration, p.eff_from, seed,
                                     discipline=AQM_DISCIPLINE)
                    add("aqm", spec, p.eff_duration, buffer_bdp=AQM_BUFFER, discipline=AQM_DISCIPLINE)
    return out


# ---- measurements -------------------------------------------------------------------


@dataclass
class Obs:
    """One run's value of a metric. ``censored``: the event had not happened
    by the end of the run, and ``value`` is the time observed so far (the
    true value is larger)."""

    value: float
    censored: bool = False


def smooth(x: np.ndarray, n: int) -> np.ndarray:
    """Trailing mean over the last ``n`` samples (fewer at the start)."""
    x = np.asarray(x, dtype=float)
    if n <= 1 or len(x) == 0:
        return x.copy()
    c = np.cumsum(np.insert(x, 0, 0.0))
    i = np.arange(1, len(x) + 1)
    lo = np.maximum(i - n, 0)
    return (c[i] - c[lo]) / (i - lo)


def time_to_hold(t: np.ndarray, ok: np.ndarray, t0: float, hold_s: float) -> Obs:
    """Seconds from ``t0`` to the first sample time ``t_i >= t0`` from which
    ``ok`` holds at every sample through ``t_i + hold_s``; censored (the
    time from ``t0`` to the last sample) if there is none, including when
    a stretch that starts in time is cut off by the end of the run."""
    t = np.asarray(t, dtype=float)
    ok = np.asarray(ok, dtype=bool)
    if len(t) == 0:
        return Obs(0.0, True)
    end = float(t[-1])
    n = len(t)
    # run[i]: index one past the end of the stretch of True starting at i
    nxt = np.empty(n + 1, dtype=np.int64)
    nxt[n] = n
    for i in range(n - 1, -1, -1):
        nxt[i] = nxt[i + 1] if ok[i] else i
    for i in range(n):
        if t[i] < t0 - 1e-9 or not ok[i]:
            continue
        stop = nxt[i]  # first False at or after i (n if none)
        last_ok = t[stop - 1]
        if last_ok >= t[i] + hold_s - 1e-9 and (stop < n or t[i] + hold_s <= end + 1e-9):
            return Obs(float(t[i] - t0))
    return Obs(max(end - t0, 0.0), True)


def convergence_time(t: np.ndarray, g_new: np.ndarray, g_old: np.ndarray, t_join: float, level: float, smooth_s: float, hold_s: float) -> Obs:
    """Time after ``t_join`` until the newcomer holds ``level`` of its fair
    share: with both goodputs smoothed by a trailing mean over ``smooth_s``,
    the first time from which smooth(g_new) >= level x (smooth(g_new) +
    smooth(g_old)) / 2 holds for ``hold_s``; censored if never."""
    t = np.asarray(t, dtype=float)
    if len(t) < 2:
        return Obs(0.0, True)
    dt = float(np.median(np.diff(t)))
    n = max(int(round(smooth_s / dt)), 1)
    a, b = smooth(g_new, n), smooth(g_old, n)
    fair = (a + b) / 2
    ok = (fair > 0) & (a >= level * fair)
    return time_to_hold(t, ok, t_join, hold_s)


@dataclass
class Score:
    """A metric over seeds: mean with its 95 % t interval, or, when some
    runs were censored, a lower bound on the mean (censored runs counted at
    the time they had reached)."""

    mean: float | None
    lo: float | None
    hi: float | None
    n: int
    censored: int = 0
    values: list = field(default_factory=list)  # per seed: [value, censored]

    def text(self, digits: int = 3, scale: float = 1.0, seeds: int | None = None, censored_means: str = "not reached") -> str:
        """'mean [lo, hi]', '> mean (k/n not reached)', 'mean (1 run)' or
        'n/a'; with ``seeds``, a score from fewer runs says how many."""
        if self.n == 0 or self.mean is None:
            return "n/a"
        f = lambda v: _fmt(v * scale, digits)  # noqa: E731
        if self.censored:
            return f"> {f(self.mean)} ({self.censored}/{self.n} {censored_means})"
        if self.n == 1:
            return f"{f(self.mean)} (1 run)"
        few = f" (n={self.n})" if seeds is not None and self.n < seeds else ""
        return f"{f(self.mean)} [{f(self.lo)}, {f(self.hi)}]{few}"


def _fmt(v: float, digits: int) -> str:
    if not math.isfinite(v):
        return "inf" if v > 0 else "nan"
    if v != 0 and (abs(v) >= 10**digits or abs(v) < 10 ** -(digits)):
        return f"{v:.{digits - 1}e}"
    out = f"{v:.{digits}g}"
    return out


def aggregate(obs: list[Obs], bounds: tuple = (-math.inf, math.inf)) -> Score:
    """The Score of one metric's per-seed observations (any order): the
    mean with its 95 % Student-t interval (longfat.reproduce.measure.ci95),
    the interval clipped to the metric's range ``bounds``; with censored
    observations, a lower bound on the mean and no interval; a NaN or
    infinite observation gives no number (mean None)."""
    vals = [[float(o.value), bool(o.censored)] for o in obs]
    if not obs:
        return Score(None, None, None, 0)
    xs = [o.value for o in obs]
    if not all(math.isfinite(x) for x in xs):
        return Score(None, None, None, len(obs), values=vals)
    k = sum(o.censored for o in obs)
    if k:
        return Score(float(np.mean(xs)), None, None, len(obs), k, vals)
    m, lo, hi, n = ci95(xs)
    return Score(m, max(lo, bounds[0]), min(hi, bounds[1]), n, 0, vals)


# ---- per-run metrics ----------------------------------------------------------------


class _Run:
    """Columns of one result, converted once."""

    def __init__(self, res):
        self.res = res
        self.spec = res.scenario
        f = res.flows.select(["time_s", "flow", "flow_name", "goodput_bps", "throughput_bps"]).to_pydict()
        self.t = np.asarray(f["time_s"], dtype=float)
        self.fid = np.asarray(f["flow"])
        self.fname = np.asarray([str(x) for x in f["flow_name"]])
        self.good = np.asarray(f["goodput_bps"], dtype=float)
        self.thr = np.asarray(f["throughput_bps"], dtype=float)
        ln = res.links.select(["time_s", "link_name", "utilization", "queue_pkts"]).to_pydict()
        m = np.asarray([str(x) for x in ln["link_name"]]) == "bottleneck"
        self.lt = np.asarray(ln["time_s"], dtype=float)[m]
        self.lutil = np.asarray(ln["utilization"], dtype=float)[m]
        self.lq = np.asarray(ln["queue_pkts"], dtype=float)[m]
        self.rate = rate_bps(self.spec["network"]["bottleneck"]["rate"])
        self.rtt = seconds(self.spec["network"]["bdp_rtt"])

    def series(self, name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        m = self.fname == name
        return self.t[m], self.good[m], self.thr[m]

    def start_time(self, name: str) -> float:
        """When the flow started: the start of the first sample interval in
        which it sent anything."""
        t, _, thr = self.series(name)
        on = np.nonzero(thr > 0)[0]
        if len(on) == 0:
            return float("nan")
        dt = float(np.median(np.diff(t))) if len(t) > 1 else 0.0
        return max(float(t[on[0]]) - dt, 0.0)

    def mean_goodput(self, name: str, t0: float, t1: float | None = None) -> float:
        t, g, _ = self.series(name)
        m = t > t0 + 1e-9
        if t1 is not None:
            m &= t <= t1 + 1e-9
        return float(g[m].mean()) if m.any() else float("nan")

    def link(self) -> dict:
        for row in self.res.summary["links"]:
            if row["name"] == "bottleneck":
                return row
        raise KeyError("bottleneck")


def _smooth_s(rtt: float) -> float:
    return SMOOTH_RTTS * rtt


def run_metrics(labels: dict, res) -> dict[str, Obs]:
    """The metrics one run contributes, by metric key."""
    r = _Run(res)
    exp = labels["experiment"]
    out: dict[str, Obs] = {}
    if exp in ("efficiency", "aqm"):
        bn = r.link()
        out["utilization"] = Obs(float(bn["utilization"]))
        out["loss_rate"] = Obs(float(bn["loss_rate"]))
        q = bn.get("mean_queue_pkts")
        out["queue_delay_ms"] = Obs(float("nan") if q is None else float(q) * PACKET * 8 / r.rate * 1e3)
        if exp == "aqm":
            out = {f"aqm_{k}": out[k] for k in ("utilization", "queue_delay_ms")}
    elif exp == "fairness":
        t0 = seconds(r.spec["run"]["measure_from"])
        g = [r.mean_goodput("first", t0), r.mean_goodput("second", t0)]
        out["jain"] = Obs(jain(g))
        t, g_new, _ = r.series("second")
        _, g_old, _ = r.series("first")
        join = r.start_time("second")
        if not math.isfinite(join):
            join = seconds(r.spec["flows"][1]["start"])
        for level in (0.8, 0.95):
            out[f"conv{int(level * 100)}"] = convergence_time(t, g_new, g_old, join, level, _smooth_s(r.rtt), _smooth_s(r.rtt))
    elif exp == "rtt_unfairness":
        t0 = seconds(r.spec["run"]["measure_from"])
        short, long_ = r.mean_goodput("short", t0), r.mean_goodput("long", t0)
        if long_ > 0:
            out["rtt_ratio"] = Obs(short / long_)
        else:
            # the long flow delivered nothing in the window: less than one
            # packet, so the ratio is at least this (a censored value)
            span = seconds(r.spec["run"]["duration"]) - t0
            out["rtt_ratio"] = Obs(short / (PAYLOAD * 8 / span), True)
    elif exp == "friendliness":
        t0 = seconds(r.spec["run"]["measure_from"])
        reno, other = r.mean_goodput("reno", t0), r.mean_goodput("tested", t0)
        tot = reno + other
        out["reno_share"] = Obs(2 * reno / tot if tot > 0 else float("nan"))
    elif exp == "responsiveness":
        udp = r.spec["udp"][0]
        off = seconds(udp["stop"])
        win = STEP_WINDOW_RTTS * r.rtt
        m = (r.lt > off + 1e-9) & (r.lt <= off + win + 1e-9)
        out["step_util"] = Obs(float(r.lutil[m].mean()) if m.any() else float("nan"))
        dt = float(np.median(np.diff(r.lt))) if len(r.lt) > 1 else 1.0
        u = smooth(r.lutil, max(int(round(_smooth_s(r.rtt) / dt)), 1))
        # the trailing mean must not reach back before the step
        after = r.lt >= off + _smooth_s(r.rtt) - 1e-9
        for level in (0.8, 0.95):
            out[f"reclaim{int(level * 100)}"] = time_to_hold(r.lt, (u >= level) & after, off, _smooth_s(r.rtt))
    return out


# ---- the card -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Criterion:
    key: str  # metric key from run_metrics
    experiment: str
    title: str
    short: str  # column heading
    unit: str
    better: str  # "higher", "lower", "closer to 1"
    how: str
    subcase: str | None = None  # label holding the sub-case (buffer_bdp, rtt_ratio), besides the BDP
    headline: tuple = ()  # sub-case values shown in the summary table (all if empty)
    scale: float = 1.0
    digits: int = 3
    bounds: tuple = (0.0, math.inf)  # the metric's range; intervals are clipped to it
    censored_means: str = "not reached"  # what a censored run means, for the table
    #: For "closer to 1": how far from 1 a value is, for the summary heat
    #: map's ranks (longfat.heatmap.CLOSENESS): "difference" |x - 1|, or
    #: "ratio" max(x, 1/x) for a ratio of two goodputs.
    closeness: str = "difference"


def _per_path(paths, f) -> str:
    return "; ".join(f"{p.name}: {f(p)}" for p in paths)


def _criteria(paths=FULL_PATHS) -> list[Criterion]:
    """The criteria; their descriptions quote the windows of ``paths``."""
    sm = f"{SMOOTH_RTTS} base RTTs"
    buffers = ", ".join(f"{b * 100:g} %" for b in (QUICK_BUFFERS if paths == QUICK_PATHS else FULL_BUFFERS))
    eff_win = _per_path(paths, lambda p: f"{p.eff_from:g}-{p.eff_duration:g} s")
    join = _per_path(paths, lambda p: f"{p.pair_join:g} s")
    fair_win = _per_path(paths, lambda p: f"{p.pair_join + (p.pair_duration - p.pair_join) / 2:g}-{p.pair_duration:g} s")
    conv_left = _per_path(paths, lambda p: f"at most {p.pair_duration - p.pair_join:g} s")
    rtt_win = _per_path(paths, lambda p: f"{p.rtt_from:g}-{p.rtt_duration:g} s")
    step = _per_path(paths, lambda p: f"on {p.step_on:g}-{p.step_off:g} s, {STEP_WINDOW_RTTS} RTTs = {STEP_WINDOW_RTTS * p.rtt_s:g} s, "
                     f"at most {p.step_duration - p.step_off:g} s left after the stop")
    return [
        Criterion("utilization", "efficiency", "Efficiency", "utilization", "fraction of the link", "higher",
                  f"One flow alone; bottleneck buffer = {buffers} of the BDP (per buffer a column). "
                  "Score: the bottleneck's utilization (fraction of time busy sending, headers and retransmissions included) "
                  f"over [measure_from, end] ({eff_win}).",
                  subcase="buffer_bdp",
                  bounds=(0.0, 1.0)),
        Criterion("loss_rate", "efficiency", "Loss rate", "loss rate", "%", "lower",
                  "The efficiency runs: packets dropped at the bottleneck / packets offered to it, over the same window.",
                  subcase="buffer_bdp", headline=(0.2, 1.0), scale=100.0),
        Criterion("queue_delay_ms", "efficiency", "Queueing delay", "queueing delay", "ms", "lower",
                  "The efficiency runs: mean bottleneck queue (packets, sampled every sample interval) x 1500 B x 8 / link rate, "
                  "over the same window.",
                  subcase="buffer_bdp", headline=(0.2, 1.0)),
        Criterion("aqm_utilization", "aqm", "Behind FQ-CoDel: efficiency", "utilization", "fraction of the link", "higher",
                  f"One flow alone, as in the efficiency runs (same windows), but the bottleneck is FQ-CoDel (RFC 8290; target 5 ms, "
                  f"interval 100 ms, 1024 buckets) with a limit of {AQM_BUFFER * 100:g} % of the BDP; the flow is not ECN-capable, so "
                  "the AQM drops. Score: the bottleneck's utilization, as for efficiency; compare with the "
                  f"{AQM_BUFFER * 100:g} % BDP drop-tail column. PLT has no such run (its low-priority module needs a strict-priority "
                  "bottleneck): n/a.",
                  bounds=(0.0, 1.0)),
        Criterion("aqm_queue_delay_ms", "aqm", "Behind FQ-CoDel: queueing delay", "queueing delay", "ms", "lower",
                  "The FQ-CoDel runs: mean bottleneck queue (packets, sampled every sample interval) x 1500 B x 8 / link rate, "
                  f"over the same window: the queueing delay column's measure, so the two compare at {AQM_BUFFER * 100:g} % BDP. "
                  "CoDel's target (5 ms) bounds the standing queue's sojourn, not this mean, which slow start's overshoot "
                  "and the drop law's lag also count."),
        Criterion("jain", "fairness", "Same-RTT fairness", "Jain index", "", "higher (1 = equal)",
                  f"Two flows of the algorithm, same RTT, buffer {PAIR_BUFFER:g} BDP; the second starts "
                  f"at ({join}), each start jittered. Score: Jain's index (x1+x2)^2 / (2 (x1^2+x2^2)) "
                  f"of their mean goodputs over the second half of the time both run ({fair_win}).",
                  bounds=(0.5, 1.0)),
        Criterion("conv80", "fairness", "Convergence to 80 %", "80 % of fair share", "s", "lower",
                  "The fairness runs: seconds from the second flow's start (the start of the first sample interval in which it sent) "
                  f"until its goodput holds at least 80 % of its fair share, where both flows' goodputs are trailing means over "
                  f"{sm}, the fair share is their mean, and 'holds' means at every sample for a further {sm}. "
                  "'> T (k/n not reached)': k of n seeds never got there; T is then a lower bound on the mean (unreached seeds "
                  f"counted at the time the run lasted after the start: {conv_left})."),
        Criterion("conv95", "fairness", "Convergence to 95 %", "95 % of fair share", "s", "lower",
                  "As for 80 %, with 95 % of the fair share."),
        Criterion("rtt_ratio", "rtt_unfairness", "RTT unfairness", "goodput ratio", "short/long", "closer to 1",
                  f"Two flows of the algorithm with base RTTs R (the path's) and R/k, k = 2 and 4 (per k a column), starting "
                  f"together (each jittered by up to {START_JITTER_S:g} s), buffer {PAIR_BUFFER:g} BDP of R. Score: mean goodput of the "
                  f"short-RTT flow / that of the long-RTT flow over [measure_from, end] ({rtt_win}). "
                  "Reno's textbook range is k (synchronised losses) to k^2. If the long-RTT flow delivered nothing in the window, "
                  "the run counts as a lower bound (its goodput taken as one packet in the window): '> m (k/n long flow starved)'.",
                  subcase="rtt_ratio", censored_means="long flow starved", closeness="ratio"),
        Criterion("reno_share", "friendliness", "Friendliness to Reno", "Reno's share / fair share", "", "closer to 1 (below 1: Reno loses)",
                  f"One flow of the algorithm and one Reno flow, same RTT, starting together, buffer {PAIR_BUFFER:g} BDP. "
                  "Score: 2 g_reno / (g_reno + g_alg), mean goodputs over [measure_from, end] (as for RTT unfairness); "
                  "1 = Reno gets its fair half, 0 = starved. The reno row is Reno against Reno.",
                  bounds=(0.0, 2.0)),
        Criterion("step_util", "responsiveness", "Responsiveness: utilization after the step", "utilization, 100 RTTs after", "", "higher",
                  f"One flow of the algorithm, buffer {PAIR_BUFFER:g} BDP; a constant-rate UDP source takes {STEP_LOAD:.0%} of the link "
                  "for a while, then stops. Score: mean bottleneck utilization over the "
                  f"{STEP_WINDOW_RTTS} base RTTs after the UDP stops ({step}).",
                  bounds=(0.0, 1.0)),
        Criterion("reclaim80", "responsiveness", "Responsiveness: time to reclaim 80 %", "time to 80 % utilization", "s", "lower",
                  f"The responsiveness runs: seconds from the UDP's stop until the bottleneck utilization, a trailing mean over {sm} "
                  f"taken only from samples after the stop, holds at least 80 % for a further {sm}; censored as for convergence "
                  "(the time left after the stop is given under utilization after the step)."),
        Criterion("reclaim95", "responsiveness", "Responsiveness: time to reclaim 95 %", "time to 95 % utilization", "s", "lower",
                  "As for 80 %, with 95 % utilization."),
    ]


@dataclass
class Card:
    algorithms: list[str]
    paths: list[str]
    criteria: list[Criterion]
    #: criterion key -> algorithm -> path -> sub-case (str) -> Score
    scores: dict
    subcases: dict  # criterion key -> list of sub-case values (as labels give them), [None] if none
    runs: int
    seeds: list
    quick: bool
    examples: dict  # "fairness"/"responsiveness" -> algorithm -> path -> {t: [...], ...}
    notes: list = field(default_factory=list)


def _sub(v) -> str:
    return "-" if v is None else f"{v:g}" if isinstance(v, float) else str(v)


def _example(exp: str, r: _Run) -> dict:
    """A small time series for the card's figures (at most ~400 points)."""
    if exp == "fairness":
        t, a, _ = r.series("first")
        _, b, _ = r.series("second")
        step = max(len(t) // 400, 1)
        return {"t": t[::step].round(3).tolist(), "first": (a[::step] / 1e6).round(3).tolist(), "second": (b[::step] / 1e6).round(3).tolist(),
                "join": r.start_time("second"), "rate_mbps": r.rate / 1e6}
    udp = r.spec["udp"][0]
    step = max(len(r.lt) // 400, 1)
    return {"t": r.lt[::step].round(3).tolist(), "util": r.lutil[::step].round(4).tolist(), "on": seconds(udp["start"]), "off": seconds(udp["stop"])}


def analyse(results: Iterable[tuple[dict, Any]]) -> Card:
    """Scores from (labels, RunResult) pairs, in any order. Cells may be
    missing (a failed run): their criteria then have fewer seeds, or n/a."""
    obs: dict = {}  # (key, cc, path, sub) -> list[Obs]
    algorithms: list[str] = []
    paths: list[str] = []
    seeds: set = set()
    examples: dict = {"fairness": {}, "responsiveness": {}}
    runs = 0
    quick = False
    subvals: dict = {}
    for labels, res in results:
        runs += 1
        cc, path, seed = labels["cc"], labels["bdp"], labels["seed"]
        if cc not in algorithms:
            algorithms.append(cc)
        if path not in paths:
            paths.append(path)
        seeds.add(seed)
        if any(path == q.name for q in QUICK_PATHS):
            quick = True
        exp = labels["experiment"]
        for key, o in run_metrics(labels, res).items():
            crit = _CRIT_BY_KEY[key]
            sub = labels.get(crit.subcase) if crit.subcase else None
            subvals.setdefault(key, set()).add(sub)
            obs.setdefault((key, cc, path, sub), []).append((seed, o))
        if exp in examples:
            cur = examples[exp].setdefault(cc, {})
            if path not in cur or seed < cur[path]["seed"]:
                cur[path] = {"seed": seed, **_example(exp, _Run(res))}
    order = {name: i for i, name in enumerate(p.name for p in FULL_PATHS + QUICK_PATHS)}
    paths.sort(key=lambda x: order.get(x, 99))
    from longfat._native import algorithms as known

    rank = {name: i for i, name in enumerate(known())}
    algorithms.sort(key=lambda a: (rank.get(a, len(rank)), a))  # the order `longfat algorithms` lists them
    crits = _criteria(QUICK_PATHS if quick else FULL_PATHS)
    subcases = {c.key: sorted(subvals.get(c.key, {None}), key=lambda v: (v is None, v if v is not None else 0)) for c in crits}
    scores: dict = {}
    for c in crits:
        for cc in algorithms:
            for path in paths:
                for sub in subcases[c.key]:
                    got = sorted(obs.get((c.key, cc, path, sub), []), key=lambda x: x[0])
                    scores.setdefault(c.key, {}).setdefault(cc, {}).setdefault(path, {})[_sub(sub)] = aggregate([o for _, o in got], c.bounds)
    return Card(algorithms, paths, crits, scores, {k: [_sub(v) for v in vs] for k, vs in subcases.items()}, runs, sorted(seeds), quick, examples)


_CRIT_BY_KEY = {c.key: c for c in _criteria()}


# ---- writing the card --------------------------------------------------------------


def _headline_subs(card: Card, c: Criterion) -> list[str]:
    subs = card.subcases[c.key]
    if c.headline:
        want = [_sub(v) for v in c.headline]
        chosen = [s for s in subs if s in want]
        return chosen or subs
    return subs


def _sub_label(c: Criterion, sub: str) -> str:
    if c.subcase == "buffer_bdp":
        return f"buffer {float(sub) * 100:g} % BDP"
    if c.subcase == "rtt_ratio":
        return f"RTT ratio {sub}"
    return ""


def _score_cell(card: Card, c: Criterion, cc: str, path: str, sub: str) -> str:
    s = card.scores.get(c.key, {}).get(cc, {}).get(path, {}).get(sub)
    return "n/a" if s is None else s.text(c.digits, c.scale, len(card.seeds), c.censored_means)


def _legend_rows(card: Card) -> list[tuple[str, str, str]]:
    return [(c.title + (f" ({c.unit})" if c.unit else ""), c.better, c.how) for c in card.criteria]


def _design_text(card: Card) -> list[str]:
    paths = QUICK_PATHS if card.quick else FULL_PATHS
    lines = [
        "Every run: a dumbbell whose bottleneck (rate and base RTT below, one-way delay RTT/8, access links 10x the bottleneck "
        "rate) is a drop-tail FIFO (except in the FQ-CoDel runs, below), its buffer sized in packets from the BDP of the path's base RTT. PLT's cells (and only "
        "theirs) run on a strict-priority bottleneck with one shared buffer of the same size, which PLT's low-priority module "
        "needs. For flows that all send in class 0 the two links are the same: the efficiency, fairness and friendliness runs "
        "gave bit-identical summaries and time series on both (checked with CUBIC and H-TCP on the 100 Mbit/s path). In the responsiveness runs (TCP plus a constant-rate UDP source) "
        "the two links break ties between packets arriving in the same nanosecond differently, so those runs diverge once the UDP "
        "source starts: a different sample of the same behaviour, as a different seed is.",
        f"The FQ-CoDel columns: each algorithm's {AQM_BUFFER * 100:g} % BDP efficiency run again with the bottleneck (both "
        "directions) FQ-CoDel at the scenario's defaults (RFC 8290; target 5 ms, interval 100 ms, 1024 buckets) and the buffer as "
        "its limit; the flows are not ECN-capable, so it drops. The runs differ from the drop-tail ones in the discipline "
        "alone. PLT has none (an AQM link has no priority classes): n/a.",
        f"TCP senders: the default `rfc` transport, 1500-byte packets, no delayed ACKs. Each flow starts up to {START_JITTER_S:g} s late "
        f"and its sender access link gets up to {DELAY_JITTER_S * 1e3:g} ms more one-way delay, both uniform from run.seed, so that seeds differ.",
        "Paths: " + "; ".join(f"{p.name} (BDP {p.bdp_pkts:,.0f} packets)" for p in paths) + ".",
        f"Seeds: {', '.join(map(str, card.seeds))}; scores are the mean over seeds with the 95 % Student-t interval of the mean [lo, hi] "
        "(one seed: no interval).",
    ]
    if card.quick:
        lines.insert(0, "QUICK MODE: rates, durations and windows are scaled down for smoke tests; the numbers are not the suite's "
                        "and the windows quoted per criterion are the full suite's.")
    return lines


def _md_cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _summary_columns(card: Card) -> list[tuple[Criterion, str]]:
    return [(c, s) for c in card.criteria for s in _headline_subs(card, c)]


def _detail_columns(card: Card, c: Criterion) -> list[str]:
    return card.subcases[c.key]


def write_card(card: Card, out_dir: Path, meta: dict) -> None:
    """Writes card.html (self-contained), card.md with its PNG figures, and
    card.json into ``out_dir`` (created if missing)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    figures = draw_figures(card, out_dir)
    (out_dir / "card.json").write_text(json.dumps(_finite_json(card_json(card, meta, figures)), indent=1, allow_nan=False) + "\n", encoding="utf-8")
    _write_md(card, out_dir / "card.md", meta, figures)
    _write_html(card, out_dir / "card.html", out_dir, meta, figures)


def _finite_json(x: Any) -> Any:
    """``x`` with NaN and infinite floats as None (JSON has neither), tuples as lists."""
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {str(k): _finite_json(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_finite_json(v) for v in x]
    if isinstance(x, (str, int, bool)) or x is None:
        return x
    return str(x)


def card_json(card: Card, meta: dict, figures: list[tuple[str, str]]) -> dict:
    def score(s: Score) -> dict:
        return {"mean": s.mean, "lo": s.lo, "hi": s.hi, "n": s.n, "censored": s.censored, "values": s.values}

    return {
        "meta": meta,
        "quick": card.quick,
        "algorithms": card.algorithms,
        "paths": card.paths,
        "seeds": card.seeds,
        "runs": card.runs,
        "criteria": [asdict(c) for c in card.criteria],
        "subcases": card.subcases,
        "scores": {k: {cc: {p: {s: score(v) for s, v in subs.items()} for p, subs in per.items()} for cc, per in algos.items()} for k, algos in card.scores.items()},
        "figures": [{"file": f, "caption": cap} for f, cap in figures],
        "notes": card.notes,
    }


def _meta_lines(card: Card, meta: dict) -> list[tuple[str, str]]:
    rows = [("Algorithms", ", ".join(card.algorithms)), ("Runs", f"{card.runs} simulations")]
    for k, v in meta.items():
        if isinstance(v, float):
            v = f"{v:.1f}"
        rows.append((str(k).replace("_", " "), str(v)))
    return rows


def _write_md(card: Card, path: Path, meta: dict, figures: list[tuple[str, str]]) -> None:
    L = ["# longfat suite: report card", ""]
    for k, v in _meta_lines(card, meta):
        L.append(f"- {k}: {_md_cell(v)}")
    L += [""] + [x + "\n" for x in _design_text(card)]
    cols = _summary_columns(card)
    L += ["## Summary", "", "Each cell: mean over seeds [95 % confidence interval]. Per path a row; per sub-case (buffer size, RTT ratio) a column. "
          "The loss rate and queueing delay columns show the 20 % and 100 % BDP buffers; every buffer is in the detail tables below. "
          "The FQ-CoDel columns compare with the 100 % BDP drop-tail ones.", ""]
    for f, cap in figures:
        if f == HEATMAP_FILE:
            L += [f"![{_md_cell(cap)}]({f})", "", f"*{cap}*", ""]
    head = ["algorithm", "path"] + [f"{c.title}" + (f": {_sub_label(c, s)}" if c.subcase else "") + (f" ({c.unit})" if c.unit else "") for c, s in cols]
    L.append("| " + " | ".join(_md_cell(h) for h in head) + " |")
    L.append("|" + "---|" * len(head))
    for cc in card.algorithms:
        for p in card.paths:
            L.append("| " + " | ".join([cc, p] + [_md_cell(_score_cell(card, c, cc, p, s)) for c, s in cols]) + " |")
    L += ["", "## Legend: what each criterion measures and what is better", "", "| criterion | better | how it is measured |", "|---|---|---|"]
    for name, better, how in _legend_rows(card):
        L.append(f"| {_md_cell(name)} | {_md_cell(better)} | {_md_cell(how)} |")
    L += ["", "## Detail tables", ""]
    for c in card.criteria:
        subs = _detail_columns(card, c)
        L += [f"### {c.title}" + (f" ({c.unit})" if c.unit else ""), "", f"Better: {c.better}.", ""]
        head = ["algorithm"] + [f"{p}" + (f", {_sub_label(c, s)}" if c.subcase else "") for p in card.paths for s in subs]
        L.append("| " + " | ".join(head) + " |")
        L.append("|" + "---|" * len(head))
        for cc in card.algorithms:
            L.append("| " + " | ".join([cc] + [_md_cell(_score_cell(card, c, cc, p, s)) for p in card.paths for s in subs]) + " |")
        L.append("")
    L += ["## Figures", ""]
    for f, cap in [x for x in figures if x[0] != HEATMAP_FILE]:
        L += [f"![{_md_cell(cap)}]({f})", "", f"*{cap}*", ""]
    if card.notes:
        L += ["## Notes", ""] + [f"- {n}" for n in card.notes] + [""]
    path.write_text("\n".join(L) + "\n", encoding="utf-8")


_CSS = (
    "body{font-family:system-ui,sans-serif;max-width:1400px;margin:2em auto;padding:0 1em;color:#222}"
    "table{border-collapse:collapse;margin:1em 0;font-size:13px}td,th{border:1px solid #ccc;padding:3px 6px;vertical-align:top}"
    "th{background:#f3f3f3}td.v{white-space:nowrap;text-align:right}td.p{white-space:nowrap}td.cens{color:#8a5a00}td.na{color:#999}"
    ".wide{overflow-x:auto}img{max-width:100%}figure#heatmap{margin:1em 0}code{background:#f3f3f3;padding:1px 4px}.ci{color:#666;font-size:11px}"
    "p.note{background:#fff8e0;padding:.5em}"
)


def _html_score(card: Card, c: Criterion, cc: str, p: str, sub: str) -> str:
    e = html.escape
    s = card.scores.get(c.key, {}).get(cc, {}).get(p, {}).get(sub)
    if s is None or s.n == 0 or s.mean is None:
        return "<td class='v na'>n/a</td>"
    f = lambda v: _fmt(v * c.scale, c.digits)  # noqa: E731
    if s.censored:
        return f"<td class='v cens'>&gt; {e(f(s.mean))}<br><span class='ci'>{s.censored}/{s.n} {e(c.censored_means)}</span></td>"
    if s.n == 1:
        return f"<td class='v'>{e(f(s.mean))}<br><span class='ci'>1 run</span></td>"
    few = f" n={s.n}" if s.n < len(card.seeds) else ""
    return f"<td class='v'>{e(f(s.mean))}<br><span class='ci'>[{e(f(s.lo))}, {e(f(s.hi))}]{few}</span></td>"


def _html_figure(png: Path, caption: str, ident: str | None = None) -> str:
    """A figure with its PNG inlined (the page stands alone)."""
    e = html.escape
    data = base64.b64encode(png.read_bytes()).decode("ascii")
    at = f" id='{e(ident)}'" if ident else ""
    return f"<figure{at}><img alt='{e(caption)}' src='data:image/png;base64,{data}'><figcaption>{e(caption)}</figcaption></figure>"


def _write_html(card: Card, path: Path, fig_dir: Path, meta: dict, figures: list[tuple[str, str]]) -> None:
    e = html.escape
    o = ["<!DOCTYPE html>", "<html lang='en'><head><meta charset='utf-8'>", "<title>longfat suite: report card</title>",
         f"<style>{_CSS}</style></head><body>", "<h1>longfat suite: report card</h1>", "<ul>"]
    for k, v in _meta_lines(card, meta):
        o.append(f"<li>{e(k)}: {e(v)}</li>")
    o.append("</ul>")
    for i, x in enumerate(_design_text(card)):
        cls = " class='note'" if card.quick and i == 0 else ""
        o.append(f"<p{cls}>{e(x.replace('`', ''))}</p>")
    cols = _summary_columns(card)
    o += ["<h2>Summary</h2>", "<p>Each cell: mean over seeds, and below it the 95 % confidence interval [lo, hi]; "
          "&gt; T: a lower bound, some seeds did not get there within the run. Per path a row; per sub-case a column. "
          "The loss rate and queueing delay columns show the 20 % and 100 % BDP buffers; every buffer is in the detail tables. "
          "The FQ-CoDel columns compare with the 100 % BDP drop-tail ones.</p>"]
    for f, cap in figures:
        if f == HEATMAP_FILE:
            o.append(_html_figure(fig_dir / f, cap, "heatmap"))
    o.append("<div class='wide'><table id='summary'>")
    # two header rows: criterion (colspan), then sub-case
    groups: list[tuple[Criterion, int]] = []
    for c, _ in cols:
        if groups and groups[-1][0].key == c.key:
            groups[-1] = (c, groups[-1][1] + 1)
        else:
            groups.append((c, 1))
    o.append("<thead><tr><th rowspan='2'>algorithm</th><th rowspan='2'>path</th>" + "".join(
        f"<th colspan='{n}' data-criterion='{e(c.key)}'>{e(c.title)}<br><span class='ci'>{e(c.unit + '; ' if c.unit else '')}better: {e(c.better)}</span></th>"
        for c, n in groups) + "</tr>")
    o.append("<tr>" + "".join(f"<th>{e(_sub_label(c, s) or c.short)}</th>" for c, s in cols) + "</tr></thead><tbody>")
    for cc in card.algorithms:
        for i, p in enumerate(card.paths):
            first = f"<td rowspan='{len(card.paths)}'><b>{e(cc)}</b></td>" if i == 0 else ""
            o.append(f"<tr data-algorithm='{e(cc)}'>{first}<td class='p'>{e(p)}</td>" + "".join(_html_score(card, c, cc, p, s) for c, s in cols) + "</tr>")
    o.append("</tbody></table></div>")
    o += ["<h2>Legend: what each criterion measures and what is better</h2>", "<table><thead><tr><th>criterion</th><th>better</th><th>how it is measured</th></tr></thead><tbody>"]
    for name, better, how in _legend_rows(card):
        o.append(f"<tr><td>{e(name)}</td><td>{e(better)}</td><td>{e(how)}</td></tr>")
    o.append("</tbody></table>")
    o.append("<h2>Figures</h2>")
    for f, cap in figures:
        if f != HEATMAP_FILE:
            o.append(_html_figure(fig_dir / f, cap))
    o.append("<h2>Detail tables</h2>")
    for c in card.criteria:
        subs = _detail_columns(card, c)
        o.append(f"<h3>{e(c.title)}" + (f" ({e(c.unit)})" if c.unit else "") + f"</h3><p>Better: {e(c.better)}. {e(c.how)}</p>")
        o.append("<div class='wide'><table><thead><tr><th>algorithm</th>" + "".join(
            f"<th>{e(p)}" + (f"<br>{e(_sub_label(c, s))}" if c.subcase else "") + "</th>" for p in card.paths for s in subs) + "</tr></thead><tbody>")
        for cc in card.algorithms:
            o.append(f"<tr><td>{e(cc)}</td>" + "".join(_html_score(card, c, cc, p, s) for p in card.paths for s in subs) + "</tr>")
        o.append("</tbody></table></div>")
    if card.notes:
        o.append("<h2>Notes</h2><ul>" + "".join(f"<li>{e(n)}</li>" for n in card.notes) + "</ul>")
    o.append("</body></html>")
    path.write_text("\n".join(o) + "\n", encoding="utf-8")


# ---- figures ------------------------------------------------------------------------


def _errbar(s: Score | None, scale: float = 1.0) -> tuple[float, float, float, bool]:
    """(mean, minus, plus, censored) for an error bar; NaN when no data."""
    if s is None or s.mean is None:
        return float("nan"), 0.0, 0.0, False
    m = s.mean * scale
    if s.censored or s.lo is None:
        return m, 0.0, 0.0, bool(s.censored)
    return m, max(m - s.lo * scale, 0.0), max(s.hi * scale - m, 0.0), False


class _Figures:
    """What every figure of the card shares: the card, the algorithms'
    colours, and where and how a figure is saved (the files and captions
    saved so far in ``saved``)."""

    def __init__(self, card: Card, out_dir: Path, plt):
        self.card, self.out_dir, self.plt = card, out_dir, plt
        self.algos, self.paths = card.algorithms, card.paths
        cmap = plt.get_cmap("tab10" if len(self.algos) <= 10 else "tab20")
        self.colors = {cc: cmap(i % cmap.N) for i, cc in enumerate(self.algos)}
        self.npth = max(len(self.paths), 1)
        self.saved: list[tuple[str, str]] = []

    def save(self, fig, name: str, caption: str, at: int = 100) -> None:
        import io

        from PIL import Image

        buf = io.BytesIO()
        fig.savefig(buf, dpi=at, format="png")
        self.plt.close(fig)
        # an adaptive 256-colour palette: a third of the bytes, the same plot
        buf.seek(0)
        with Image.open(buf) as im:
            im.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(self.out_dir / name, format="PNG", optimize=True)
        self.saved.append((name, caption))

    def score(self, key, cc, p, sub):
        return self.card.scores.get(key, {}).get(cc, {}).get(p, {}).get(sub)


def draw_figures(card: Card, out_dir: Path) -> list[tuple[str, str]]:
    """Draws the card's figures as PNGs into ``out_dir``; returns (file,
    caption), the summary's heat map (HEATMAP_FILE) first."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    f = _Figures(card, out_dir, plt)
    _draw_heatmap(f)
    _draw_efficiency(f)
    _draw_fairness(f)
    _draw_rtt_unfairness(f)
    _draw_examples(f, "fairness", "convergence_examples.png", "Convergence examples (lowest seed): goodput of the first flow (solid) and of the second "
                   "(dashed), which starts at the dotted line, as a fraction of the link rate.")
    _draw_examples(f, "responsiveness", "responsiveness_examples.png", "Responsiveness examples (lowest seed): bottleneck utilization; a constant-rate UDP "
                   "source takes half of the link between the dotted lines.")
    return f.saved


#: The summary's heat map: shown above the summary table, not among the figures.
HEATMAP_FILE = "summary_heatmap.png"
#: Units longer than this stay out of the heat map's headers (the table has them).
HEATMAP_UNIT_CHARS = 10


def heatmap_columns(card: Card) -> list[tuple[Criterion, str, heatmap.Column]]:
    """The summary table's columns (criterion, sub-case) as heat map columns:
    the criterion's title, the sub-case, a short unit, and the criterion's
    own better direction (its arrow in the header)."""
    out = []
    for c, sub in _summary_columns(card):
        label = c.title + (f", {_sub_label(c, sub)}" if c.subcase else "")
        if c.unit and len(c.unit) <= HEATMAP_UNIT_CHARS:
            label += f" ({c.unit})"
        out.append((c, sub, heatmap.Column(label, c.better, c.closeness)))
    return out


def heatmap_cell(card: Card, c: Criterion, cc: str, path: str, sub: str) -> tuple[float | None, str]:
    """(the value the cell ranks by, what it prints): the mean as the table
    formats it ('> ' before a lower bound), or (None, 'n/a')."""
    s = card.scores.get(c.key, {}).get(cc, {}).get(path, {}).get(sub)
    if s is None or s.n == 0 or s.mean is None:
        return None, heatmap.NA_TEXT
    text = _fmt(s.mean * c.scale, c.digits)
    return float(text), ("> " if s.censored else "") + text


def heatmap_panels(card: Card) -> list[heatmap.Panel]:
    """One panel per path: a row per algorithm, ranked among the algorithms on that path."""
    cols = heatmap_columns(card)
    panels = []
    for p in card.paths:
        cells = [[heatmap_cell(card, c, cc, p, sub) for c, sub, _ in cols] for cc in card.algorithms]
        panels.append(heatmap.Panel(p, list(card.algorithms), [[v for v, _ in r] for r in cells], [[t for _, t in r] for r in cells]))
    return panels


def _draw_heatmap(f: _Figures) -> None:
    """The summary table's means as a heat map, coloured by rank per column and path."""
    # 0.545 in cells at 110 dpi: 1243 px for the full card's 19 columns,
    # shown unscaled on a 1280 px wide window (figure#heatmap has no side margins)
    fig = heatmap.draw([col for _, _, col in heatmap_columns(f.card)], heatmap_panels(f.card), cell_w_in=0.545, label_w_in=0.9, font_pt=7.0)
    f.save(fig, HEATMAP_FILE, "The summary table's means, one panel per path: each cell coloured by its rank among the algorithms "
           "on that path in its column (blue: best, red: worst; equal values as shown share a colour; hatched: n/a); the arrow "
           "in each header says which way is better (↑ higher, ↓ lower, →1 closer to 1); '>' marks a lower bound (some seeds "
           "never got there), ranked at its value. The intervals are in the table below.", at=110)


def _draw_efficiency(f: _Figures) -> None:
    """Efficiency, loss and queueing delay against the buffer."""
    card, algos, paths, npth, colors, score = f.card, f.algos, f.paths, f.npth, f.colors, f.score
    keys = [("utilization", "utilization", 1.0, False), ("loss_rate", "loss rate (%)", 100.0, True), ("queue_delay_ms", "mean queueing delay (ms)", 1.0, False)]
    behind_aqm = {"utilization": "aqm_utilization", "queue_delay_ms": "aqm_queue_delay_ms"}
    fig, axes = f.plt.subplots(len(keys), npth, figsize=(5.2 * npth, 3.0 * len(keys)), squeeze=False, constrained_layout=True)
    for r, (key, ylabel, scale, logy) in enumerate(keys):
        subs = card.subcases.get(key, [])
        xs = [float(s) * 100 for s in subs if s != "-"]
        for j, p in enumerate(paths):
            ax = axes[r][j]
            for cc in algos:
                pts = [_errbar(score(key, cc, p, s), scale) for s in subs if s != "-"]
                if not pts:
                    continue
                ys = [q[0] for q in pts]
                ax.errorbar(xs, ys, yerr=[[q[1] for q in pts], [q[2] for q in pts]], marker="o", ms=3, lw=1, capsize=2, color=colors[cc], label=cc)
                if key in behind_aqm:  # the FQ-CoDel run at its limit's buffer: an open square
                    m, lo, hi, _ = _errbar(score(behind_aqm[key], cc, p, "-"), scale)
                    if math.isfinite(m):
                        ax.errorbar([AQM_BUFFER * 100], [m], yerr=[[lo], [hi]], marker="s", ms=6, mfc="none", ls="none", capsize=2, color=colors[cc])
            ax.set_xscale("log")
            ax.set_xticks(xs)
            ax.set_xticklabels([f"{x:g}" for x in xs])
            ax.minorticks_off()
            if logy:
                ax.set_yscale("symlog", linthresh=1e-4)
                ax.set_ylim(bottom=0)
            ax.set_xlabel("buffer (% of BDP)")
            ax.set_ylabel(ylabel)
            ax.set_title(p, fontsize=10)
            ax.grid(alpha=0.3)
    axes[0][-1].legend(fontsize=7, ncol=2, loc="best")
    f.save(fig, "efficiency.png", "One flow alone: bottleneck utilization, loss rate and mean queueing delay against the buffer size "
           f"(mean over seeds, bars: 95 % CI); open squares: the same flow behind FQ-CoDel with a {AQM_BUFFER * 100:g} % BDP limit.")


def _draw_fairness(f: _Figures) -> None:
    """Fairness, friendliness, convergence: bars per algorithm."""
    from matplotlib.patches import Patch

    algos, paths, npth, colors, score = f.algos, f.paths, f.npth, f.colors, f.score
    bar_keys = [("jain", "Jain index (2 flows, same RTT)", None), ("reno_share", "Reno's share / fair share", 1.0),
                ("conv80", "time to 80 % of fair share (s)", None), ("conv95", "time to 95 % of fair share (s)", None)]
    fig, axes = f.plt.subplots(len(bar_keys), 1, figsize=(max(7.0, 0.75 * len(algos) * npth + 2), 2.7 * len(bar_keys)), squeeze=False, constrained_layout=True)
    width = 0.8 / npth
    hatches = ["", "//", "..", "xx"]
    for r, (key, ylabel, ref) in enumerate(bar_keys):
        ax = axes[r][0]
        for j, p in enumerate(paths):
            pts = [_errbar(score(key, cc, p, "-")) for cc in algos]
            xs = [i + (j - (npth - 1) / 2) * width for i in range(len(algos))]
            ax.bar(xs, [q[0] for q in pts], width=width, yerr=[[q[1] for q in pts], [q[2] for q in pts]], capsize=2,
                   color=[colors[cc] for cc in algos], hatch=hatches[j % len(hatches)], edgecolor="k", lw=0.5, label=p)
            for x, q in zip(xs, pts):
                if q[3]:  # censored: a lower bound
                    ax.annotate(">", (x, q[0]), ha="center", va="bottom", fontsize=9, color="#8a5a00")
        if ref is not None:
            ax.axhline(ref, color="k", lw=0.8, ls="--")
        ax.set_xticks(range(len(algos)))
        ax.set_xticklabels(algos, fontsize=8)
        ax.set_ylabel(ylabel, fontsize=9)
        ax.grid(axis="y", alpha=0.3)
        ax.legend(handles=[Patch(facecolor="white", edgecolor="k", hatch=hatches[j % len(hatches)], label=p) for j, p in enumerate(paths)], fontsize=7)
    f.save(fig, "fairness.png", "Two flows: Jain index (same RTT), Reno's share beside the algorithm (1 = fair, dashed), and time for a "
           "second flow to reach 80 % and 95 % of its fair share (hatch: path; '>' marks a lower bound, some seeds never got there).")


def _draw_rtt_unfairness(f: _Figures) -> None:
    """RTT unfairness: goodput ratio against RTT ratio."""
    card, algos, paths, npth, colors, score = f.card, f.algos, f.paths, f.npth, f.colors, f.score
    subs = [s for s in card.subcases.get("rtt_ratio", []) if s != "-"]
    fig, axes = f.plt.subplots(1, npth, figsize=(5.2 * npth, 3.8), squeeze=False, constrained_layout=True)
    ks = [float(s) for s in subs]
    for j, p in enumerate(paths):
        ax = axes[0][j]
        if ks:
            kk = np.array([1.0] + ks)
            ax.plot(kk, kk, "k--", lw=0.8, label="k")
            ax.plot(kk, kk**2, "k:", lw=0.8, label="k²")
            ax.plot(kk, np.ones_like(kk), color="0.6", lw=0.8)
        for cc in algos:
            pts = [_errbar(score("rtt_ratio", cc, p, s)) for s in subs]
            ys = [q[0] for q in pts]
            ax.errorbar(ks, ys, yerr=[[q[1] for q in pts], [q[2] for q in pts]], marker="o", ms=3, lw=1, capsize=2, color=colors[cc], label=cc)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks([1.0] + ks)
        ax.set_xticklabels([f"{k:g}" for k in [1.0] + ks])
        ax.minorticks_off()
        ax.set_xlabel("RTT ratio k (long / short)")
        ax.set_ylabel("goodput ratio short / long")
        ax.set_title(p, fontsize=10)
        ax.grid(alpha=0.3, which="both")
    axes[0][-1].legend(fontsize=7, ncol=2)
    f.save(fig, "rtt_unfairness.png", "RTT unfairness: goodput of the short-RTT flow over that of the long-RTT flow against the RTT ratio "
           "(dashed: k, dotted: k², grey: 1 = RTT-fair).")


def _draw_examples(f: _Figures, exp: str, name: str, caption: str) -> None:
    """Time series of one experiment's examples (convergence: goodput of
    both flows; responsiveness: utilization), one panel per algorithm and
    path; nothing when the card has none."""
    algos, paths, npth, colors = f.algos, f.paths, f.npth, f.colors
    ex = f.card.examples.get(exp, {})
    rows = [cc for cc in algos if cc in ex]
    if not rows:
        return
    fig, axes = f.plt.subplots(len(rows), npth, figsize=(4.6 * npth, 1.35 * len(rows) + 0.6), squeeze=False, sharey=True, constrained_layout=True)
    for i, cc in enumerate(rows):
        for j, p in enumerate(paths):
            ax = axes[i][j]
            d = ex[cc].get(p)
            if d:
                t = np.asarray(d["t"])
                if exp == "fairness":
                    rate = d["rate_mbps"]
                    ax.plot(t, np.asarray(d["first"]) / rate, lw=0.8, color=colors[cc])
                    ax.plot(t, np.asarray(d["second"]) / rate, lw=0.8, ls="--", color="k")
                    if d.get("join") is not None and math.isfinite(d["join"]):
                        ax.axvline(d["join"], color="0.5", ls=":", lw=0.8)
                else:
                    ax.plot(t, d["util"], lw=0.8, color=colors[cc])
                    ax.axvline(d["on"], color="0.5", ls=":", lw=0.8)
                    ax.axvline(d["off"], color="0.5", ls=":", lw=0.8)
            ax.set_ylim(0, 1.05)
            ax.tick_params(labelsize=7)
            ax.grid(alpha=0.3)
            if i == 0:
                ax.set_title(p, fontsize=9)
            if j == 0:
                ax.set_ylabel(cc, fontsize=8)
            if i == len(rows) - 1:
                ax.set_xlabel("time (s)", fontsize=8)
    f.save(fig, name, caption, at=85)
