"""H-TCP (htcp.md) sections II-VII: convergence (Figs. 1-4), the congestion
epoch of the increase function (Fig. 5, Table I), adaptive backoff (Figs. 6,
7), and the testbed screening tests (Figs. 8-12)."""

from __future__ import annotations

from pathlib import Path

import math

import numpy as np

from longfat._native import epoch_growth
from longfat.reproduce import figs
from longfat.reproduce.coverage import Cover
from longfat.reproduce.core import NONE, Row, Section, scenario_comment, setup_text
from longfat.reproduce.criteria import criterion
from longfat.reproduce.measure import (Runs, bottleneck, ci95, convergence_time, flow_series, fmt_ci, fmt_median, fmt_spread, link_series, mean_goodput,
                                       median_ci)
from longfat.units import rate_bps as _rate_bps
from longfat.units import seconds as _secs

TITLE = "H-TCP: A framework for congestion control in high-speed and long-distance networks"
AUTHORS = "D.J. Leith, R.N. Shorten, Y. Lee"
CITATION = "Leith, Shorten, Lee: H-TCP (htcp.md), sections II-VII: ns simulations (Figs. 1-7), Table I, Linux testbed (Figs. 8-12)"
NOTES = (
    "Figs. 1-7 were ns simulations in the paper and are simulated here with longfat's `ns2` transport profile "
    "(ns-2.35 TCP/Sack1); Fig. 5 and Table I are computed, as the paper's are, by driving longfat's H-TCP and Reno "
    "controllers alone on a fake clock, with one simulated point. Figs. 8-12 were measured on a Linux/DummyNet "
    "testbed and are simulated here with the testbed's settings (1500-byte packets, delayed ACKs, 20 % BDP queues). "
    "Where the outcome depends on start times and RTTs (two or more flows), each point runs with several seeds that "
    "draw the start times and each flow's RTT (up to 4 ms above the nominal one), and a row gives the mean over "
    "seeds with its t-interval, m [lo, hi] (n=k). Where a file states looks at the seeds (sequential seeds: 5, 10, 20, 30, "
    "or 10, 20, 30), a point goes on to the next look while a claim it decides is not separable, and every interval of "
    "that file is at 98.75 % (95 % shared by the looks); each row's seeds are in its \"seeds\" column. The verdict comes "
    "from the interval (inside the paper's band agrees, wholly outside differs, across a bound not separable; a comparison is "
    "judged on Welch's interval of the difference (on logarithms for ratios); an exact tie contradicts a strict claim; a universal "
    "claim is judged seed by seed; a time to converge is judged on its median, a run that never converged ranking after every "
    "run that did). Where a row claims a property of an algorithm, a negative control applies the same check to the "
    "algorithm the paper says behaves differently; the claim counts only if the control's verdict differs."
)

#: What of the paper this report reproduces (coverage.py).
COVERAGE = {
    "Fig. 1": Cover("full", ("fig1_2_4",)),
    "Fig. 2": Cover("full", ("fig1_2_4",)),
    "Fig. 3": Cover("full", ("fig3",)),
    "Fig. 4": Cover("full", ("fig1_2_4",)),
    "Table 1": Cover("full", ("fig5",)),
    "Fig. 5": Cover("full", ("fig5",)),
    "Fig. 6": Cover("full", ("fig6", "fig6_utilization")),
    "Fig. 7": Cover("full", ("fig7", "fig7_rfc")),
    "Fig. 8": Cover("full", ("fig8_10",), why="16, 82 and 162 ms at both rates: the ends and the middle of the paper's 16-162 ms"),
    "Fig. 9": Cover("partly", ("fig9",), why="240 s runs, not the paper's 10 minutes, and queues of 2, 10, 40 and 100 % of the BDP: the "
                    "region below 3 % where the paper's efficiency falls has one point, and the NS curve of standard TCP is not run"),
    "Fig. 10": Cover("full", ("fig8_10",), why="16, 82 and 162 ms at both rates"),
    "Fig. 11": Cover("full", ("fig11",), why="the second flow at 16 and 82 ms at both rates (162 ms is Fig. 8's equal-RTT case)"),
    "Fig. 12": Cover("full", ("fig12",), why="16, 82 and 162 ms at both rates"),
}

NAMES = {"reno": "standard TCP", "highspeed": "HS-TCP", "scalable": "Scalable", "bic": "BIC", "fast": "FAST", "htcp": "H-TCP"}


def _cc(p, i: int = 0) -> str:
    return p.scenario["flows"][i]["cc"]


def _rtt_ms(p, flow: int = 0) -> float:
    net = p.scenario["network"]
    acc = _secs(p.scenario["flows"][flow].get("access_delay", net.get("access", {}).get("delay", "0s")))
    acc_dst = _secs(net.get("access", {}).get("delay", "0s"))
    return round(2 * (acc + acc_dst + _secs(net["bottleneck"]["delay"])) * 1000)


# ---- Figs. 1-7 (sections II-V) ------------------------------------------------
# Every check below is a criterion stated in the figure's scenario file
# ([reproduce.criteria]); rows over several seeds give the mean and its
# t-interval (95 %, or 98.75 % in a file with looks at the seeds).



#: Two samples of a window count as one congestion event when they are this
#: close (10 RTTs at 100 ms: a fast recovery, or the two flows' losses at one
#: overflow of the queue).
EVENT_GAP_S = 1.0


def _drops(t, w, t_from: float) -> list[float]:
    """Times of the samples at which the window fell by more than 5 % (a backoff)."""
    return [float(t[i]) for i in range(1, len(w)) if t[i] > t_from and w[i] < 0.95 * w[i - 1]]


def _congestion_events(r, t_from: float) -> list[tuple[float, float, float]]:
    """Congestion events of a two-flow run after ``t_from``: (time, flow 1's
    window, flow 2's window), each window its peak just before the event
    (sect. III: w_i(k) is the window "immediately before backoff"); an
    event is a backoff of either flow, backoffs within EVENT_GAP_S of each
    other being one event."""
    series = [flow_series(r, f) for f in (0, 1)]
    times = sorted(set(_drops(series[0][0], series[0][2], t_from)) | set(_drops(series[1][0], series[1][2], t_from)))
    clusters: list[list[float]] = []
    for x in times:
        if clusters and x - clusters[-1][-1] <= EVENT_GAP_S:
            clusters[-1].append(x)
        else:
            clusters.append([x])
    events = []
    for c in clusters:
        pre = []
        for t, _, w in series:
            m = (t > c[0] - EVENT_GAP_S) & (t <= c[-1])
            pre.append(float(w[m].max()) if m.any() else float("nan"))
        events.append((c[0], pre[0], pre[1]))
    return events


def _epochs_to_level(r, level: float) -> tuple[float, bool, int]:
    """Congestion epochs until the two windows' difference falls below
    ``level`` x its value at the start (eq. (3): |w_1 - w_2| shrinks by beta
    per synchronised epoch, so 0.2 takes ln 0.2 / ln beta epochs). The
    count starts (k = 0) at the first congestion event after flow 2's slow
    start ended (its first backoff), and is interpolated in log difference
    between the two events around the crossing. Returns (epochs, censored,
    events seen): censored when the run ended first, epochs then being the
    number of events seen (a lower bound)."""
    t2, _, w2 = flow_series(r, 1)
    first = _drops(t2, w2, -1.0)
    if not first:
        return float("nan"), True, 0
    ev = _congestion_events(r, first[0] + EVENT_GAP_S)
    if len(ev) < 2:
        return float(max(len(ev) - 1, 0)), True, len(ev)
    d = [abs(a - b) for _, a, b in ev]
    target = level * d[0]
    for k in range(1, len(d)):
        if d[k] <= target:
            prev = d[k - 1]
            if d[k] <= 0 or prev <= d[k]:
                return float(k), False, len(ev)
            return (k - 1) + math.log(prev / target) / math.log(prev / d[k]), False, len(ev)
    return float(len(d) - 1), True, len(ev)


def _censored_value(value: float, censored: bool, exp, cid: str) -> float:
    """A censored count (the run ended before the level was reached) is
    known only as "more than value": it is kept when that already lies above
    the criterion's band (so outside it whatever the true count), else NaN
    (unknown, which never passes)."""
    if not censored:
        return value
    hi = exp.criteria[cid].get("hi")
    return value if hi is not None and value > hi else float("nan")


def _fmt_epochs(vals: list[tuple[float, bool, int]]) -> str:
    return ", ".join((">" if c else "") + f"{v:.1f}" for v, c, _ in vals)


def _fairness(r, t0: float, t1: float) -> float:
    """The smaller of the two flows' mean goodputs over (t0, t1] / the larger."""
    g = [mean_goodput(r, f, t0, t1) for f in (0, 1)]
    return min(g) / max(g) if max(g) > 0 else float("nan")


def fig1_2_4(runs: Runs, out: Path, exp) -> Section:
    fig, ax = figs.new(1, 3, w=13, h=3.4)
    fair60: dict[str, list[float]] = {}
    fair_end: dict[str, list[float]] = {}
    epochs: dict[str, list[tuple[float, bool, int]]] = {}
    conv80: dict[str, list[float]] = {}
    order: list[str] = []
    for p, r in runs.pairs:
        cc = _cc(p)
        if cc not in order:
            order.append(cc)
            k = order.index(cc)
            for f in (0, 1):
                t, _, w = flow_series(r, f)
                ax[0][k].plot(t, w, lw=1, label=f"flow {f + 1}")
            ax[0][k].set_title(NAMES[cc] + (" (backoff 0.5)" if cc == "htcp" else "") + f", seed {p.seed}")
            ax[0][k].set_xlabel("time (s)")
            ax[0][k].set_ylabel("cwnd (packets)")
            ax[0][k].legend(fontsize=8)
        start2 = _secs(p.scenario["flows"][1]["start"])
        dur = _secs(p.scenario["run"]["duration"])
        fair60.setdefault(cc, []).append(_fairness(r, start2 + 60, start2 + 120))
        fair_end.setdefault(cc, []).append(_fairness(r, dur - 100, dur))
        epochs.setdefault(cc, []).append(_epochs_to_level(r, 0.05))
        conv80.setdefault(cc, []).append(convergence_time(r, 0, 1, start2, level=0.8, window_s=5.0))
    rows = []

    def c80(cc: str) -> str:
        return "time to 80 % goodput fairness " + ", ".join("never" if x != x else f"{x:.0f} s" for x in conv80[cc])

    if "htcp" in fair60:
        h60, hend = ci95(fair60["htcp"]), ci95(fair_end["htcp"])
        if "highspeed" in fair60:
            hs = ci95(fair60["highspeed"])
            rows.append(Row(
                "HS-TCP vs H-TCP (backoff 0.5): goodput ratio of the two flows (smaller / larger), 60-120 s after flow 2 starts",
                "Fig. 1: HS-TCP's convergence is extremely slow; (7) converges in about 4 epochs (Fig. 4)",
                f"HS-TCP {fmt_ci(hs, digits=3)}; H-TCP {fmt_ci(h60, digits=3)}; HS-TCP {c80('highspeed')}",
                hs[0], criterion(exp, "hs_fairness_below_htcp", a=hs, b=h60, what=("HS-TCP", "H-TCP")),
                "if not: with a 500-packet queue on a 4,200-packet BDP both flows back off at nearly every "
                "congestion event, which helps the smaller window catch up."))
        if "scalable" in fair_end:
            sc = ci95(fair_end["scalable"])
            rows.append(Row(
                "Scalable vs H-TCP (backoff 0.5): goodput ratio of the two flows over the last 100 s",
                "Fig. 2: the Scalable TCP flows do not converge to fairness",
                f"Scalable {fmt_ci(sc, digits=3)}; H-TCP {fmt_ci(hend, digits=3)}; Scalable {c80('scalable')}",
                sc[0], criterion(exp, "scalable_fairness_below_htcp", a=sc, b=hend, what=("Scalable", "H-TCP"))))
    for cc, cid, item, paper in (
        ("htcp", "htcp_epochs_to_5pct", "H-TCP (increase (7), backoff 0.5): congestion epochs until the windows differ by < 5 % of the start",
         "Fig. 4: approximately 4 congestion epochs, as standard TCP (to 5 %, sect. III)"),
        ("highspeed", "hs_epochs_to_5pct", "negative control, HS-TCP: congestion epochs until the windows differ by < 5 % of the start",
         "differs from H-TCP's (asymmetric increase, sect. II-III)"),
    ):
        if cc not in epochs:
            continue
        vals = [_censored_value(v, c, exp, cid) for v, c, _ in epochs[cc]]
        st = ci95(vals)
        rows.append(Row(item, paper, f"{fmt_ci(st, digits=3)}; per seed {_fmt_epochs(epochs[cc])} ('>' = not reached by the end)",
                        st[0], criterion(exp, cid, ci=st),
                        "if differs: an epoch at which only one flow backs off shrinks the difference by less than beta."))
    return Section("fig1_2_4", exp.title, setup_text(exp), rows, [figs.save(fig, out, "htcp_fig1_2_4.png")], scenario_comment(exp))


def _beta_label(p) -> str:
    return "0.8" if _cc(p) == "htcp" else "0.5"


def _rtt_group(p) -> str:
    jit = _secs(p.scenario["flows"][0].get("access_delay_jitter", "0s"))
    return f"RTTs up to {2 * jit * 1000:g} ms apart" if jit > 0 else "equal RTTs"


def fig3(runs: Runs, out: Path, exp) -> Section:
    fig, ax = figs.new(1, 2, w=12)
    counts: dict[tuple[str, str, float], list[tuple[float, bool, int]]] = {}
    drawn: list[str] = []
    groups: list[str] = []
    for p, r in runs.pairs:
        b, g = _beta_label(p), _rtt_group(p)
        if g not in groups:
            groups.append(g)
        if b not in drawn:
            drawn.append(b)
            a = ax[0][len(drawn) - 1]
            for f in (0, 1):
                t, _, w = flow_series(r, f)
                a.plot(t, w, lw=1, label=f"flow {f + 1}")
            a.set_xlabel("time (s)")
            a.set_ylabel("cwnd (packets)")
            a.set_title(f"Fig. 3: backoff {b}" + (" (standard TCP)" if b == "0.5" else " (adaptive AIMD)") + f", seed {p.seed}, {g}")
            a.legend()
        for level in (0.2, 0.05):
            counts.setdefault((g, b, level), []).append(_epochs_to_level(r, level))
    rows = []
    specs = [
        ("0.5", 0.2, "epochs20_beta05", "2.3 (sect. III)"),
        ("0.8", 0.2, "epochs20_beta05_ctl", "differs from 2.3 (sect. V-B: 7)"),
        ("0.5", 0.05, "epochs5_beta05", "approximately 4 (sect. III)"),
        ("0.8", 0.05, "epochs5_beta05_ctl", "differs from 4 (sect. V-B: 12)"),
        ("0.8", 0.2, "epochs20_beta08", "7 (sect. V-B)"),
        ("0.5", 0.2, "epochs20_beta08_ctl", "differs from 7 (sect. III: 2.3)"),
        ("0.8", 0.05, "epochs5_beta08", "12 (sect. V-B)"),
        ("0.5", 0.05, "epochs5_beta08_ctl", "differs from 12 (sect. III: 4)"),
    ]
    for g in groups:
        for b, level, cid, paper in specs:
            if (g, b, level) not in counts:
                continue
            raw = counts[(g, b, level)]
            st = ci95([_censored_value(v, c, exp, cid) for v, c, _ in raw])
            ctl = cid.endswith("_ctl")
            rows.append(Row(
                ("negative control: " if ctl else "") + f"{g}, backoff {b}: congestion epochs until the windows' difference is below {level * 100:g} % of its start",
                paper,
                f"{fmt_ci(st, digits=3)}; per seed {_fmt_epochs(raw)} ('>' = not reached by the end)",
                st[0], criterion(exp, cid, ci=st, group=g),
                "" if ctl else FIG3_NOTE,
            ))
    return Section("fig3", exp.title, setup_text(exp), rows, [figs.save(fig, out, "htcp_fig3.png")], scenario_comment(exp))


FIG3_NOTE = (
    "if differs: in the seeds marked '>' the two windows never came together: with RTTs a few ms apart the "
    "deterministic drop-tail queue kept dropping the same flow's packets at most congestion events (a phase "
    "effect; sect. III's count assumes both flows back off at every event, 'Unsynchronised drops'), and one flow "
    "kept the larger window to the end of the run."
)


#: Fig. 5's peak windows (packets) and RTT (s; Table I's middle column, at
#: which sect. IV quotes the 10 s epoch).
FIG5_WINDOWS = (10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000)
FIG5_RTT_S = 0.1
HTCP_BACKOFF_05 = {"beta_min": 0.5, "beta_max": 0.5}


def fig5(runs: Runs, out: Path, exp) -> Section:
    """Fig. 5: the congestion epoch of one flow vs its peak window under
    (7) and under standard TCP, computed (``epoch_growth``), with one
    simulated point; and Table I, computed the same way."""
    curve = {cc: [epoch_growth(cc, prm, float(w), FIG5_RTT_S)[0] for w in FIG5_WINDOWS]
             for cc, prm in (("htcp", HTCP_BACKOFF_05), ("reno", {}))}
    t10k = {cc: epoch_growth(cc, prm, 10000.0, FIG5_RTT_S)[0] for cc, prm in (("htcp", HTCP_BACKOFF_05), ("reno", {}))}
    rows = [
        Row("(7), backoff 0.5: congestion epoch at a peak window of 10,000 packets, RTT 100 ms (computed)",
            "around 10 s (sect. IV, Fig. 5)", f"{t10k['htcp']:.2f} s", t10k["htcp"], criterion(exp, "epoch_10k")),
        Row("negative control, standard TCP: congestion epoch at 10,000 packets, RTT 100 ms (computed)",
            "Fig. 5's other curve (w/2 RTTs)", f"{t10k['reno']:.1f} s", t10k["reno"], criterion(exp, "epoch_10k_ctl")),
    ]
    p, r = runs.pairs[0]
    t, _, w = flow_series(r, 0)
    mf = _secs(p.scenario["run"]["measure_from"])
    drops = [i for i in range(1, len(w)) if t[i] > mf and w[i] < 0.95 * w[i - 1]]
    starts = [float(t[i]) for i in drops]
    peaks = [float(w[max(i - 20, 0): i].max()) for i in drops]
    gaps = np.diff(starts)
    if len(gaps):
        ep = float(gaps.mean())
        peak = float(np.mean(peaks[1:])) if len(peaks) > 1 else float(peaks[0])
        comp = epoch_growth("htcp", HTCP_BACKOFF_05, peak, _rtt_ms(p) / 1000)[0]
        measured = (f"{ep:.2f} s (mean of {len(gaps)} epochs from {mf:.0f} s; peak window {peak:.0f} packets, "
                    f"for which the computation gives {comp:.2f} s)")
    else:
        ep, measured = float("nan"), f"fewer than two backoffs after {mf:.0f} s"
    rate = p.scenario["network"]["bottleneck"]["rate"]
    rows.append(Row(f"(7), backoff 0.5: congestion epoch of one simulated flow, {rate}, RTT 100 ms",
                    "around 10 s at a BDP of 10,000 packets (sect. IV)", measured, ep, criterion(exp, "epoch_10k_sim"),
                    "if differs: the run's BDP is not 10,000 packets (--quick) or the window is not back at its peak "
                    "when the queue overflows."))
    rows += table1(exp)
    fig, ax = figs.new(1, 1)
    ax[0][0].plot(curve["htcp"], FIG5_WINDOWS, "o-", label="(7), backoff 0.5")
    ax[0][0].plot(curve["reno"], FIG5_WINDOWS, "s--", label="standard TCP")
    if ep == ep:
        ax[0][0].plot([ep], [peak], "k*", ms=10, label="simulated flow")
    ax[0][0].set_xscale("log")
    ax[0][0].set_yscale("log")
    ax[0][0].set_xlabel("congestion epoch duration (s)")
    ax[0][0].set_ylabel("peak window (packets)")
    ax[0][0].set_title("Fig. 5: peak window vs epoch duration, RTT 100 ms")
    ax[0][0].legend()
    return Section("fig5", exp.title, setup_text(exp), rows, [figs.save(fig, out, "htcp_fig5.png")], scenario_comment(exp))


def fig6(runs: Runs, out: Path, exp) -> Section:
    """Fig. 6: the backoff factors of one adaptive-backoff flow."""
    p, r = runs.pairs[0]
    t, _, w = flow_series(r, 0)
    tq, _, q = link_series(r)
    net = p.scenario["network"]
    rate = _rate_bps(net["bottleneck"]["rate"])
    qpk = float(str(net["bottleneck"]["queue"]).removesuffix("pkt"))
    rtt_min = _rtt_ms(p) / 1000
    beta_expect = rtt_min / (rtt_min + qpk * 1500 * 8 / rate)
    drops = [i for i in range(1, len(w)) if w[i] < 0.95 * w[i - 1]]
    ratios = [w[i] / max(w[i - 3: i]) for i in drops if i >= 3]
    later = ratios[1:]
    rows = [
        Row("first backoff factor", "0.5 (RTTmax not yet known)", f"{ratios[0]:.3f}" if ratios else "none",
            ratios[0] if ratios else None, criterion(exp, "first_backoff")),
        Row("later backoff factors (median)",
            f"RTTmin/RTTmax = 0.769 (eq. (11): 100 ms / (100 ms + 25 packets at 10 Mbit/s); this run's path {beta_expect:.3f})",
            fmt_spread(later, digits=3), float(np.median(later)) if later else None, criterion(exp, "later_backoff")),
    ]
    fig, ax = figs.new(2, 1, h=2.8)
    ax[0][0].plot(t, w)
    ax[0][0].set_ylabel("cwnd (packets)")
    ax[0][0].set_title("Fig. 6: adaptive backoff, 10 Mbit/s, 100 ms, 25-packet queue")
    ax[1][0].plot(tq, q)
    ax[1][0].set_ylabel("queue (packets)")
    ax[1][0].set_xlabel("time (s)")
    return Section("fig6", exp.title, setup_text(exp), rows, [figs.save(fig, out, "htcp_fig6.png")], scenario_comment(exp))


def fig6_utilization(runs: Runs, out: Path, exp) -> Section:
    """Fig. 6: link utilization with adaptive backoff, and with the backoff
    held at 0.5 (the negative control)."""
    rows = []
    fig, ax = figs.new(2, 1, h=2.8)
    for p, r in runs.pairs:
        adaptive = not p.key.get("flows[0].params")
        t, _, w = flow_series(r, 0)
        tq, _, q = link_series(r)
        label = "adaptive backoff" if adaptive else "backoff held at 0.5"
        m, mq = t <= 30, tq <= 30
        ax[0][0].plot(t[m], w[m], lw=1, label=label)
        ax[1][0].plot(tq[mq], q[mq], lw=1, label=label)
        mf = _secs(p.scenario["run"]["measure_from"])
        u = bottleneck(r)["utilization"]
        if adaptive:
            rows.append(Row(f"adaptive backoff: link utilization ({mf:.0f} s to the end)", "the link continues to operate at capacity",
                            f"{u:.4f}", u, criterion(exp, "utilization_at_capacity")))
        else:
            rows.append(Row(f"negative control, backoff held at 0.5: link utilization ({mf:.0f} s to the end)",
                            "the queue empties for a substantial period after each backoff, reducing utilisation",
                            f"{u:.4f}", u, criterion(exp, "utilization_at_capacity_ctl")))
    ax[0][0].set_ylabel("cwnd (packets)")
    ax[0][0].set_title("Fig. 6: adaptive backoff vs backoff 0.5 (first 30 s)")
    ax[0][0].legend(fontsize=8)
    ax[1][0].set_ylabel("queue (packets)")
    ax[1][0].set_xlabel("time (s)")
    return Section("fig6_utilization", exp.title, setup_text(exp), rows, [figs.save(fig, out, "htcp_fig6_utilization.png")], scenario_comment(exp))


def _profile(p) -> str:
    return (p.scenario["flows"][0].get("tcp") or {}).get("profile", "rfc")


def fig7(runs: Runs, out: Path, exp) -> Section:
    peak: dict[tuple[str, int], list[float]] = {}
    good: dict[tuple[str, int], list[float]] = {}
    ev: dict[tuple[str, int], list[float]] = {}
    for p, r in runs.pairs:
        key = (_profile(p), int(p.scenario["flows"][0]["count"]))
        t0 = _secs(p.scenario["run"]["measure_from"])
        peaks = {"htcp": [], "reno": []}
        goods = {"htcp": [], "reno": []}
        events = {"htcp": [], "reno": []}
        for f in r.summary["flows"]:
            events[f["algorithm"]].append(f["fast_recoveries"])
            t, g, w = flow_series(r, f["flow"])
            m = t > t0
            peaks[f["algorithm"]].append(np.percentile(w[m], 95))
            goods[f["algorithm"]].append(f["goodput_bps"])
        peak.setdefault(key, []).append(float(np.mean(peaks["reno"]) / np.mean(peaks["htcp"])))
        good.setdefault(key, []).append(float(np.mean(goods["reno"]) / np.mean(goods["htcp"])))
        ev.setdefault(key, []).append(float(np.mean(events["reno"]) / max(np.mean(events["htcp"]), 1e-9)))
    rows = []
    keys = sorted(peak, key=lambda k: (k[0] != "ns2", k[0], k[1]))
    for prof, n in keys:
        st = ci95(peak[(prof, n)])
        rows.append(Row(
            f"{prof} sender, {n} adaptive, {25 - n} standard: mean peak cwnd standard / adaptive",
            "close to unity",
            f"{fmt_ci(st, digits=3)}; goodput ratio {fmt_ci(ci95(good[(prof, n)]), digits=3)}; "
            f"loss events per flow standard / adaptive {fmt_ci(ci95(ev[(prof, n)]), digits=3)}",
            st[0], criterion(exp, "peak_cwnd_ratio", ci=st, group=f"{prof}, n={n}"),
            FIG7_NOTE,
        ))
    fig, ax = figs.new(1, 1)
    for prof, mk in (("ns2", "o-"), ("rfc", "s--")):
        ns = [k[1] for k in keys if k[0] == prof]
        if ns:
            ax[0][0].errorbar(ns, [ci95(peak[(prof, n)])[0] for n in ns],
                              yerr=[[ci95(peak[(prof, n)])[0] - ci95(peak[(prof, n)])[1] for n in ns],
                                    [ci95(peak[(prof, n)])[2] - ci95(peak[(prof, n)])[0] for n in ns]],
                              fmt=mk, capsize=3, label=f"peak cwnd ratio, {prof} sender")
    ax[0][0].axhline(1.0, color="grey", lw=0.8)
    ax[0][0].set_ylim(0, 2)
    ax[0][0].set_xlabel("adaptive flows (of 25)")
    ax[0][0].set_ylabel("standard / adaptive")
    ax[0][0].set_title("Fig. 7: adaptive backoff vs standard TCP (98.75 % CI over seeds)")
    ax[0][0].legend()
    return Section(exp.name, exp.title, setup_text(exp), rows, [figs.save(fig, out, f"htcp_{exp.name}.png")], scenario_comment(exp))


FIG7_NOTE = (
    "The ratio of one run swings widely from seed to seed (about 0.4 to 2.2 in the 10-seed runs first traced): in many "
    "runs a few flows (of either kind) hold windows of 150-630 packets where the others peak at 40-120, and which kind "
    "they are decides the ratio, so its interval narrows slowly with seeds (the file's looks run an undecided point "
    "to 30). The earlier reproduction's 0.45-0.59 (rfc sender, 2 seeds) had equal RTTs "
    "(start times drawn, RTTs not); with RTTs up to 4 ms apart the rfc sender gives means near 1 as ns2 does "
    "(fig7_rfc). Traced: both kinds behave as designed (adaptive flows cut to 0.80 and grow 0.4 packets per RTT, "
    "standard flows 0.5 and 1); alpha = 2(1 - beta) equalises flows only when they lose equally often (sect. III "
    "assumes synchronised drops)."
)


# ---- Figs. 8-12: the testbed screening tests of section VII --------------------
# Every check below is a criterion stated in the figure's scenario file
# ([reproduce.criteria]), applied to the mean over seeds and its interval
# (98.75 % in a file with looks at the seeds).


#: The payload share of a 1500-byte packet with 40 bytes of headers: the most goodput a link can carry.
MAX_EFF = 1460 / 1500


def _alg(p, i: int = 0) -> str:
    """The algorithm of flow ``i`` of a run."""
    return p.scenario["flows"][i]["cc"]


def _path_rtt_ms(p, flow: int = 0) -> int:
    """Nominal round-trip propagation delay (ms) of ``flow``: its sender access
    link, the receiver's access link and the bottleneck, both ways (without
    the seed's RTT jitter)."""
    net = p.scenario["network"]
    acc_dst = _secs(net.get("access", {}).get("delay", "0s"))
    acc = _secs(p.scenario["flows"][flow].get("access_delay", net.get("access", {}).get("delay", "0s")))
    return int(round(2 * (acc + acc_dst + _secs(net["bottleneck"]["delay"])) * 1000))


def _goodput_bps(r, flow: int) -> float:
    return next(f["goodput_bps"] for f in r.summary["flows"] if f["flow"] == flow)


def _ratio(r, a: int, b: int) -> float:
    """Goodput of flow ``a`` / flow ``b`` over the measurement window (inf if b got none)."""
    ga, gb = _goodput_bps(r, a), _goodput_bps(r, b)
    return ga / gb if gb > 0 else float("inf")


def _ratio_second_half(r, a: int, b: int) -> float:
    """The same ratio over the second half of the measurement window (the steady-state check)."""
    t0, t1 = float(r.summary["measure_from_s"]), float(r.summary["end_s"])
    mid = (t0 + t1) / 2
    ga, gb = mean_goodput(r, a, mid, t1), mean_goodput(r, b, mid, t1)
    return ga / gb if gb > 0 else float("inf")


def _point(p, flow: int = 0) -> tuple[float, str, int]:
    """(rate bit/s, rate as written, nominal RTT ms of ``flow``) of a run."""
    rate = p.scenario["network"]["bottleneck"]["rate"]
    return _rate_bps(rate), rate, _path_rtt_ms(p, flow)


def _group(rate: str, rtt_ms: int) -> str:
    return f"{rate}, {rtt_ms} ms"


def _start_s(r, flow: int, nominal_s: float) -> float:
    """When ``flow`` started (its configured start plus the seed's jitter): the
    sample before its first goodput."""
    t, g, _ = flow_series(r, flow)
    dt = float(t[1] - t[0]) if len(t) > 1 else 0.0
    sent = np.nonzero(g > 0)[0]
    return max(nominal_s, float(t[sent[0]]) - dt) if len(sent) else nominal_s


def _errbar(ax, xs, stats, label: str, fmt: str = "o-") -> None:
    """Centres (means or medians) with their intervals (cut at a tenth of the centre below, for log axes)."""
    m = np.array([s[0] for s in stats])
    lo = np.maximum(np.array([s[1] for s in stats]), m / 10)
    hi = np.array([s[2] for s in stats])
    ax.errorbar(xs, m, yerr=[m - lo, hi - m], fmt=fmt, capsize=3, label=label)


def fig8_10(runs: Runs, out: Path, exp) -> Section:
    """Fig. 8 (goodput ratio of two same-RTT flows) and Fig. 10 (time to 80 %
    convergence after the second flow starts), per point over seeds."""
    fair: dict[tuple, dict[str, list[float]]] = {}
    conv: dict[tuple, dict[str, list[float]]] = {}  # +inf: never converged within the run
    done: dict[tuple, dict[str, list[float]]] = {}  # 1 if converged within the run
    late: dict[tuple, dict[str, list[float]]] = {}  # smaller / larger goodput over the last 100 s
    for p, r in runs.pairs:
        cc = _alg(p)
        key = _point(p)
        start2 = _start_s(r, 1, _secs(p.scenario["flows"][1]["start"]))
        fair.setdefault(key, {}).setdefault(cc, []).append(min(_ratio(r, 0, 1), _ratio(r, 1, 0)))
        ct = convergence_time(r, 0, 1, start2, level=0.8, window_s=10.0)
        conv.setdefault(key, {}).setdefault(cc, []).append(ct if ct == ct else math.inf)
        done.setdefault(key, {}).setdefault(cc, []).append(1.0 if ct == ct else 0.0)
        end = float(r.summary["end_s"])
        g0, g1 = mean_goodput(r, 0, end - 100, end), mean_goodput(r, 1, end - 100, end)
        late.setdefault(key, {}).setdefault(cc, []).append(min(g0, g1) / max(g0, g1) if max(g0, g1) > 0 else float("nan"))
    rows = []
    keys = sorted(fair)
    for key in keys:
        _, rate, rtt = key
        grp = _group(rate, rtt)
        f = {cc: ci95(v) for cc, v in fair[key].items()}
        for cc, cid in (("reno", "reno_fair"), ("htcp", "htcp_fair"), ("scalable", "scalable_fair_ctl")):
            if cc in f:
                rows.append(Row(
                    f"{grp}: {NAMES[cc]}, goodput ratio of the two flows (smaller / larger; Fig. 8)"
                    + (" [control]" if cid.endswith("_ctl") else ""),
                    "fair to within 5 % (sect. VII-B)" if cc != "scalable" else "very large variations in fairness (sect. VII-B)",
                    fmt_ci(f[cc], digits=3), f[cc][0], criterion(exp, cid, ci=f[cc], group=grp),
                    _fig8_note(rate, rtt),
                ))
        if "reno" in f:
            for cc in ("highspeed", "bic", "fast", "scalable"):
                if cc in f:
                    rows.append(Row(
                        f"{grp}: {NAMES[cc]}'s goodput ratio below standard TCP's (Fig. 8)",
                        "substantial unfairness, unlike standard TCP (sect. VII-B)",
                        f"{NAMES[cc]} {fmt_ci(f[cc], digits=3)}; standard TCP {fmt_ci(f['reno'], digits=3)}",
                        f[cc][0], criterion(exp, f"{cc}_less_fair", a=f[cc], b=f["reno"], what=(NAMES[cc], "standard TCP"), group=grp),
                        _fig8_note(rate, rtt),
                    ))
        if rtt > 40:
            # Times to converge: medians, a run that never converged ranking last (stat = "median").
            c = {cc: median_ci(v) for cc, v in conv[key].items()}
            if "htcp" in c:
                rows.append(Row(
                    f"{grp}: H-TCP, 80 % convergence time (s; Fig. 10)",
                    "essentially constant at 25 s for RTTs above 40 ms (sect. VII-B)",
                    fmt_median(c["htcp"], digits=3, unit=" s") + f"; converged in {int(sum(done[key]['htcp']))} of {len(done[key]['htcp'])} runs",
                    c["htcp"][0], criterion(exp, "htcp_conv_25s", ci=c["htcp"], group=grp),
                    "if differs: longfat's H-TCP scales its increase by RTT/RTT_ref with RTT_ref 100 ms (docs/algorithms.md); "
                    "the time to 80 % also depends on how often the two flows lose at the same congestion event.",
                ))
                for cc in ("highspeed", "bic", "scalable"):
                    if cc in c:
                        rows.append(Row(
                            f"{grp}: {NAMES[cc]}'s 80 % convergence time above H-TCP's (s; Fig. 10)",
                            "slow convergence (sect. VII-B)",
                            f"{NAMES[cc]} {fmt_median(c[cc], digits=3, unit=' s')}, converged in {int(sum(done[key][cc]))} of {len(done[key][cc])} runs; "
                            f"H-TCP {fmt_median(c['htcp'], digits=3, unit=' s')}",
                            c[cc][0] - c["htcp"][0] if math.isfinite(c[cc][0] - c["htcp"][0]) else None, criterion(exp, f"{cc}_slower", a=c[cc], b=c["htcp"], what=(NAMES[cc], "H-TCP"), group=grp),
                            "if differs: at 10 Mbit/s the windows (at most 160 packets) stay near or below the thresholds where "
                            "HS-TCP (38), Scalable (16) and BIC (14) leave Reno's rules." if _rate_bps(rate) < 50e6 else "",
                        ))
            if _rate_bps(rate) >= 100e6 and rtt >= 150:
                d = {cc: ci95(v) for cc, v in done[key].items()}
                for cc, cid in (("scalable", "scalable_never_converges"), ("reno", "reno_never_converges"), ("htcp", "htcp_converges_ctl")):
                    if cc in d:
                        rows.append(Row(
                            f"{grp}: {NAMES[cc]}, share of runs converging to 80 % within the run (Fig. 10)"
                            + (" [control]" if cid.endswith("_ctl") else ""),
                            "Scalable and standard TCP do not converge within 10 minutes at 250 Mbit/s, long delays (Fig. 10 caption)"
                            if cc != "htcp" else "H-TCP converges in about 25 s (Fig. 10)",
                            fmt_ci(d[cc], digits=2) + f"; time to it {fmt_median(median_ci(conv[key][cc]), digits=3, unit=' s')}; "
                            f"goodput ratio (smaller / larger) over the last 100 s {fmt_ci(ci95(late[key][cc]), digits=2)}",
                            d[cc][0], criterion(exp, cid, ci=d[cc], group=grp),
                            "if differs: the test (as for every algorithm here) is the first time the two flows' 10 s goodput "
                            "averages come within 80 %; the second standard TCP flow's slow start overshoots and passes that "
                            "within seconds; afterwards the shares swing with epochs of about 160 s (the last 100 s shown). The paper's Linux 2.6.6 senders "
                            "may have started from a cached ssthresh (route metrics), which has no counterpart here." if cc == "reno" else "",
                        ))
    # Fig. 10: "Convergence times are faster for smaller RTT's owing to the
    # [0.5,10] clamp on RTT scaling": at each rate, the shortest RTT against the longest.
    for rate in sorted({k[1] for k in keys}, key=_rate_bps):
        ends = sorted((k for k in keys if k[1] == rate and "htcp" in conv[k]), key=lambda k: k[2])
        if len(ends) >= 2 and ends[0][2] < 40 <= ends[-1][2]:
            lo, hi = ends[0], ends[-1]
            a, b = median_ci(conv[lo]["htcp"]), median_ci(conv[hi]["htcp"])
            rows.append(Row(
                f"{rate}: H-TCP's 80 % convergence time at {lo[2]} ms below that at {hi[2]} ms (s; Fig. 10)",
                "convergence times are faster for smaller RTTs owing to the [0.5, 10] clamp on RTT scaling (sect. VII-B)",
                f"{lo[2]} ms {fmt_median(a, digits=3, unit=' s')}, converged in {int(sum(done[lo]['htcp']))} of {len(done[lo]['htcp'])} runs; "
                f"{hi[2]} ms {fmt_median(b, digits=3, unit=' s')}, converged in {int(sum(done[hi]['htcp']))} of {len(done[hi]['htcp'])} runs",
                a[0] - b[0] if math.isfinite(a[0] - b[0]) else None,
                criterion(exp, "htcp_faster_small_rtt", a=a, b=b, what=(f"{lo[2]} ms", f"{hi[2]} ms"), group=rate),
                "if differs: with the clamp, the increase at 16 ms is scaled by 0.5 (not 0.16) of its 100 ms value, so a "
                "flow at 16 ms gains per second 3 times what RTT scaling alone gives; at 10 Mbit/s the windows are too "
                "small for the increase function to leave Reno's rules within the first seconds.",
            ))
    fig, ax = figs.new(2, 2, w=12, h=3.4)
    rates = sorted({k[:2] for k in keys})
    for j, (_, rate) in enumerate(rates):
        for cc in NAMES:
            pts = [k for k in keys if k[1] == rate and cc in fair[k]]
            if pts:
                _errbar(ax[0][j], [k[2] for k in pts], [ci95(fair[k][cc]) for k in pts], NAMES[cc])
                # Medians; a median (or an end) beyond the run (never converged) is drawn at the run's 540 s.
                _errbar(ax[1][j], [k[2] for k in pts], [tuple(min(x, 540.0) for x in median_ci(conv[k][cc])[:3]) + (len(conv[k][cc]),) for k in pts], NAMES[cc])
        ax[0][j].set_title(f"Fig. 8: {rate}, queue 20 % BDP")
        ax[0][j].set_ylabel("goodput ratio (smaller / larger)")
        ax[0][j].set_ylim(0, 1.1)
        ax[1][j].set_title(f"Fig. 10: {rate} (median; never converged: drawn at 540 s)")
        ax[1][j].set_ylabel("80 % convergence time (s)")
        ax[1][j].set_yscale("log")
        for i in (0, 1):
            ax[i][j].set_xlabel("RTT (ms)")
            ax[i][j].legend(fontsize=7)
    return Section("fig8_10", exp.title, setup_text(exp), rows, [figs.save(fig, out, "htcp_fig8_10.png")], scenario_comment(exp))


def _fig8_note(rate: str, rtt: int) -> str:
    if _rate_bps(rate) < 50e6 and rtt < 40:
        return ("if differs: at 10 Mbit/s and 16 ms the BDP is 13 packets and the 20 % queue 2 packets: which flow's "
                "packet meets a full queue is a matter of phase (the simulator has no per-packet randomness, the "
                "testbed's hosts had), and every algorithm runs on Reno's rules at these windows; standard TCP itself "
                "is unfair here, so no algorithm can be shown less fair than it.")
    if _rate_bps(rate) < 50e6:
        return ("if differs: at 10 Mbit/s the windows are at most about 80 packets, near or below the thresholds where "
                "HS-TCP (38), Scalable (16) and BIC (14) leave Reno's rules; five runs per point leave wide intervals.")
    return ("if differs: the second flow starts 60 s into the 10-minute run; here a standard TCP congestion epoch lasts "
            "about 160 s (a window of about 2,000 packets halves and regrows 1 packet per 162 ms RTT), so the late flow "
            "cannot catch up within the run, which is what Fig. 10's caption says of standard TCP at long delays at "
            "250 Mbit/s; the paper's 'within 5 %' for standard TCP sits uneasily with that caption.")


_FAST_MI_NOTE = (
    "if differs: the paper saw FAST's efficiency fall only below about 8 % BDP. Here FAST loses packets at "
    "every queue up to 10 % BDP: after each loss its smoothed queueing delay drops under mi_threshold_ms (1.5 ms, "
    "the ns-2 module's setting) and multiplicative increase doubles the window per round trip into a buffer of "
    "1.6-8 ms, and the next loss repeats it. The rows keep the module's setting; the paper's "
    "Linux beta release is not available to compare."
)


def fig9(runs: Runs, out: Path, exp) -> Section:
    """Fig. 9: aggregate goodput / link rate (a) and retransmitted share of
    sent packets (b) of two same-algorithm flows vs the queue size."""
    eff: dict[str, dict[float, list[float]]] = {}
    eff2: dict[str, dict[float, list[float]]] = {}
    rtx: dict[str, dict[float, list[float]]] = {}
    for p, r in runs.pairs:
        cc = _alg(p)
        q = float(str(p.scenario["network"]["bottleneck"]["queue"]).removesuffix("bdp"))
        rate = _rate_bps(p.scenario["network"]["bottleneck"]["rate"])
        flows = r.summary["flows"]
        eff.setdefault(cc, {}).setdefault(q, []).append(sum(f["goodput_bps"] for f in flows) / rate)
        t0, t1 = float(r.summary["measure_from_s"]), float(r.summary["end_s"])
        eff2.setdefault(cc, {}).setdefault(q, []).append(sum(mean_goodput(r, f["flow"], (t0 + t1) / 2, t1) for f in flows) / rate)
        sent = sum(f["sent_pkts"] for f in flows)
        rtx.setdefault(cc, {}).setdefault(q, []).append(100 * sum(f["retransmits"] for f in flows) / max(sent, 1))
    qs = sorted({q for v in eff.values() for q in v})
    E = {cc: {q: ci95(v) for q, v in d.items()} for cc, d in eff.items()}
    E2 = {cc: {q: ci95(v) for q, v in d.items()} for cc, d in eff2.items()}
    X = {cc: {q: ci95(v) for q, v in d.items()} for cc, d in rtx.items()}
    rows = []

    def eff_text(cc, q):
        return f"{fmt_ci(E[cc][q], digits=3)} (second half {fmt_ci(E2[cc][q], digits=3)})"

    if "reno" in E and len(qs) > 1:
        rows.append(Row(
            f"standard TCP: goodput / link rate at {qs[-1]:g} BDP above at {qs[0]:g} BDP (Fig. 9a)",
            "for standard TCP the throughput efficiency falls as the queue size is reduced (sect. VII-B)",
            f"{qs[-1]:g} BDP: {eff_text('reno', qs[-1])}; {qs[0]:g} BDP: {eff_text('reno', qs[0])}",
            E["reno"][qs[-1]][0], criterion(exp, "reno_eff_falls", a=E["reno"][qs[-1]], b=E["reno"][qs[0]], what=(f"{qs[-1]:g} BDP", f"{qs[0]:g} BDP")),
        ))
        for q in qs:
            if q >= 1:
                continue
            for cc in ("highspeed", "scalable", "bic", "fast", "htcp"):
                if cc in E:
                    rows.append(Row(
                        f"{q:g} BDP: {NAMES[cc]}'s goodput / link rate above standard TCP's (Fig. 9a)",
                        "all of the protocols proposed for high-speed networks achieve greater throughput efficiency than standard TCP (sect. VII-B)",
                        f"{NAMES[cc]} {eff_text(cc, q)}; standard TCP {eff_text('reno', q)}",
                        E[cc][q][0], criterion(exp, f"{cc}_more_efficient", a=E[cc][q], b=E["reno"][q], what=(NAMES[cc], "standard TCP"), group=f"{q:g} BDP"),
                        _FAST_MI_NOTE if cc == "fast" else "",
                    ))
    for q in qs:
        if q < 0.25:
            continue
        for cc, cid in (("htcp", "htcp_max_eff"), ("reno", "reno_max_eff_ctl")):
            if cc in E:
                s = tuple(x / MAX_EFF for x in E[cc][q][:3]) + (E[cc][q][3],)
                rows.append(Row(
                    f"{q:g} BDP: {NAMES[cc]}'s goodput / the maximum achievable (1460/1500 of the link; Fig. 9a)" + (" [control]" if cc == "reno" else ""),
                    "H-TCP attains the maximum achievable throughput for queues above 25 % BDP (sect. VII-B)",
                    fmt_ci(s, digits=3) + f"; second half {fmt_ci(tuple(x / MAX_EFF for x in E2[cc][q][:3]) + (E2[cc][q][3],), digits=3)}",
                    s[0], criterion(exp, cid, ci=s, group=f"{q:g} BDP"),
                ))
    if "reno" in X:
        for q in qs:
            for cc in ("highspeed", "scalable", "bic", "htcp"):
                if cc in X:
                    rows.append(Row(
                        f"{q:g} BDP: {NAMES[cc]}'s retransmitted share of sent packets (%) above standard TCP's (Fig. 9b)",
                        "the new protocols uniformly carry a greater overhead than standard TCP (sect. VII-B)",
                        f"{NAMES[cc]} {fmt_ci(X[cc][q], digits=3, unit=' %')}; standard TCP {fmt_ci(X['reno'][q], digits=3, unit=' %')}",
                        X[cc][q][0], criterion(exp, f"{cc}_more_overhead", a=X[cc][q], b=X["reno"][q], what=(NAMES[cc], "standard TCP"), group=f"{q:g} BDP"),
                    ))
    if "fast" in X and len(qs) > 1:
        for q, cid, word in ((qs[0], "fast_largest_overhead_small_q", "above"), (qs[-1], "fast_smallest_overhead_large_q", "below")):
            for cc in NAMES:
                if cc == "fast" or cc not in X:
                    continue
                rows.append(Row(
                    f"{q:g} BDP: FAST's retransmitted share (%) {word} {NAMES[cc]}'s (Fig. 9b)",
                    "with small queues FAST has the largest overhead, for large queues the smallest (sect. VII-B)",
                    f"FAST {fmt_ci(X['fast'][q], digits=3, unit=' %')}; {NAMES[cc]} {fmt_ci(X[cc][q], digits=3, unit=' %')}",
                    X["fast"][q][0], criterion(exp, cid, a=X["fast"][q], b=X[cc][q], what=("FAST", NAMES[cc]), group=f"{q:g} BDP vs {NAMES[cc]}"),
                    "if differs: FAST's overhead depends on its alpha against the buffer; here alpha is a quarter of the "
                    "buffer (the scenario file), the paper ran a 2004 beta release with its own settings.",
                ))
    fig, ax = figs.new(1, 2, w=12)
    for cc in eff:
        _errbar(ax[0][0], qs, [E[cc][q] for q in qs], NAMES[cc])
        _errbar(ax[0][1], qs, [X[cc][q] for q in qs], NAMES[cc])
    ax[0][0].axhline(MAX_EFF, color="grey", lw=0.8, ls=":")
    for a, yl in ((ax[0][0], "goodput / link rate"), (ax[0][1], "retransmitted packets (%)")):
        a.set_xscale("log")
        a.set_xlabel("queue (fraction of BDP)")
        a.set_ylabel(yl)
        a.legend(fontsize=7)
    ax[0][0].set_title("Fig. 9a: throughput vs queue")
    ax[0][1].set_title("Fig. 9b: retransmission overhead")
    return Section("fig9", exp.title, setup_text(exp), rows, [figs.save(fig, out, "htcp_fig9.png")], scenario_comment(exp))


def _eq21_ratio(p, r) -> float:
    """Eq. (21), u_i = alpha / (lambda_i T_i (1 - beta)): the goodput ratio
    flow 2 / flow 1 it predicts, lambda_1 T_1 / (lambda_2 T_2). lambda_i, the
    share of congestion events at which flow i backs off, is n_i / N with n_i
    its backoffs (fast recoveries and timeouts), so N cancels; T_i is its
    mean smoothed RTT over the measurement window (base RTT plus queueing).
    Also the ratio with T_i squared, lambda_1 T_1^2 / (lambda_2 T_2^2): a window
    that grows alpha per RTT (alpha / T_i per second) and is sent once per RTT.
    Returns (as printed, with T_i squared)."""
    t0 = float(r.summary["measure_from_s"])
    n, T = {}, {}
    for f in r.summary["flows"]:
        n[f["flow"]] = f["fast_recoveries"] + f["timeouts"]
    c = r.flows.select(["time_s", "flow", "srtt_ns"]).to_pydict()
    ts, fl, srtt = (np.asarray(c[k]) for k in ("time_s", "flow", "srtt_ns"))
    for i in (0, 1):
        m = (fl == i) & (ts > t0) & (srtt > 0)
        T[i] = float(srtt[m].mean()) / 1e9 if m.any() else float("nan")
    if n[1] == 0 or not T[1] > 0:
        return float("inf"), float("inf")
    return (n[0] * T[0]) / (n[1] * T[1]), (n[0] * T[0] ** 2) / (n[1] * T[1] ** 2)


def fig11(runs: Runs, out: Path, exp) -> Section:
    """Fig. 11: goodput ratio flow 2 (RTT varied) / flow 1 (162 ms) per
    algorithm, and standard TCP's measured ratio against eq. (21)."""
    ratio: dict[tuple, dict[str, list[float]]] = {}
    half: dict[tuple, dict[str, list[float]]] = {}
    eq21: dict[tuple, list[float]] = {}
    eq21sq: dict[tuple, list[float]] = {}
    for p, r in runs.pairs:
        cc = _alg(p)
        key = _point(p, 1)
        ratio.setdefault(key, {}).setdefault(cc, []).append(_ratio(r, 1, 0))
        half.setdefault(key, {}).setdefault(cc, []).append(_ratio_second_half(r, 1, 0))
        if cc == "reno":
            pred, pred_sq = _eq21_ratio(p, r)
            eq21.setdefault(key, []).append(_ratio(r, 1, 0) / pred)
            eq21sq.setdefault(key, []).append(_ratio(r, 1, 0) / pred_sq)
    rows = []
    keys = sorted(ratio)
    for key in keys:
        _, rate, rtt = key
        grp = _group(rate, rtt)
        R = {cc: ci95(v) for cc, v in ratio[key].items()}
        H = {cc: ci95(v) for cc, v in half[key].items()}
        if "reno" not in R:
            continue
        for cc in ("highspeed", "scalable", "bic", "fast", "htcp"):
            if cc not in R:
                continue
            less = cc == "htcp"
            rows.append(Row(
                f"{grp}: {NAMES[cc]}'s goodput ratio (flow 2 at {rtt} ms / flow 1 at 162 ms) {'below' if less else 'above'} standard TCP's",
                "H-TCP (RTT scaling): RTT unfairness somewhat less than standard TCP's (sect. VII-C)" if less
                else "significantly greater RTT unfairness than standard TCP (sect. VII-C)",
                f"{NAMES[cc]} {fmt_ci(R[cc], digits=3)}; standard TCP {fmt_ci(R['reno'], digits=3)}; "
                f"second half: {NAMES[cc]} {fmt_ci(H[cc], digits=3)}, standard TCP {fmt_ci(H['reno'], digits=3)}",
                R[cc][0],
                criterion(exp, "htcp_less_rtt_unfair" if less else f"{cc}_more_rtt_unfair", a=R[cc], b=R["reno"], what=(NAMES[cc], "standard TCP"), group=grp),
                _fig11_note(cc, rate),
            ))
        if key in eq21:
            e = ci95(eq21[key])
            rows.append(Row(
                f"{grp}: standard TCP's goodput ratio / the ratio eq. (21) predicts, lambda_1 T_1 / (lambda_2 T_2)",
                "experimental and theoretical throughputs in good agreement (sect. VII-C, eq. (21))",
                fmt_ci(e, digits=3) + f"; with T_i squared in (21): {fmt_ci(ci95(eq21sq[key]), digits=3)}",
                e[0], criterion(exp, "eq21_agreement", ci=e, group=grp),
                "lambda_i from each flow's backoffs (fast recoveries and timeouts over the whole run), T_i its mean smoothed "
                "RTT. If differs: (21) as printed has T_i once. In the AIMD model a window that grows alpha per RTT "
                "(alpha / T_i per second) averages alpha / (lambda_i T_i (1 - beta)) times the mean time between "
                "congestion events, and is sent once per RTT, so the throughput goes as 1 / (lambda_i T_i^2): "
                "(21) read as the mean window. That ratio is shown beside the criterion's (it is not the criterion).",
            ))
    fig = _ratio_panels({(cc, k[1], k[2]): ci95(v) for k, d in ratio.items() for cc, v in d.items()},
                        sorted({k[:2] for k in keys}), "Fig. 11: {rate}, flow 1 at 162 ms", "flow 2 RTT (ms)", "goodput flow 2 / flow 1")
    return Section("fig11", exp.title, setup_text(exp), rows, [figs.save(fig, out, "htcp_fig11.png")], scenario_comment(exp))


def _ratio_panels(table: dict, rates: list[tuple], title: str, xlabel: str, ylabel: str):
    """One log-scale panel per link rate: a goodput ratio (mean and its interval) vs RTT, one line per algorithm."""
    fig, ax = figs.new(1, len(rates), w=12)
    for j, (_, rate) in enumerate(rates):
        for cc in NAMES:
            pts = sorted((k[2], v) for k, v in table.items() if k[0] == cc and k[1] == rate)
            if pts:
                _errbar(ax[0][j], [x for x, _ in pts], [v for _, v in pts], NAMES[cc])
        ax[0][j].set_yscale("log")
        ax[0][j].set_title(title.format(rate=rate))
        ax[0][j].set_xlabel(xlabel)
        ax[0][j].set_ylabel(ylabel)
        ax[0][j].legend(fontsize=7)
    return fig


def _fig11_note(cc: str, rate: str) -> str:
    if cc == "fast":
        return ("if differs: FAST's equilibrium puts alpha packets per flow in the queue whatever the RTT, so the two "
                "flows' rates tend to equal; the paper measured a 2004 beta release of FAST.")
    if _rate_bps(rate) < 50e6:
        return ("if differs: at 10 Mbit/s the windows are small (the 162 ms path's BDP is 135 packets), below the "
                "thresholds where HS-TCP (38), Scalable (16) and BIC (14) leave Reno's rules, so they cannot be "
                "much more RTT-unfair than Reno here.")
    return "if differs: the long-RTT flow's share depends on whether the two flows lose at the same congestion events."


def fig12(runs: Runs, out: Path, exp) -> Section:
    """Fig. 12: goodput of the new algorithm's flow / the standard TCP flow's,
    same RTT; degree of unfairness |ln ratio|."""
    ratio: dict[tuple, dict[str, list[float]]] = {}
    half: dict[tuple, dict[str, list[float]]] = {}
    for p, r in runs.pairs:
        key = _point(p)
        ratio.setdefault(key, {}).setdefault(_alg(p, 1), []).append(_ratio(r, 1, 0))
        half.setdefault(key, {}).setdefault(_alg(p, 1), []).append(_ratio_second_half(r, 1, 0))
    rows = []
    keys = sorted(ratio)
    for key in keys:
        _, rate, rtt = key
        grp = _group(rate, rtt)
        R = {cc: ci95(v) for cc, v in ratio[key].items()}
        D = {cc: ci95([abs(np.log(x)) for x in v]) for cc, v in ratio[key].items()}
        if "htcp" in R:
            rows.append(Row(
                f"{grp}: H-TCP's goodput / standard TCP's (Fig. 12)",
                "plotted, not stated (sect. VII-D)",
                f"{fmt_ci(R['htcp'], digits=3)}; second half {fmt_ci(ci95(half[key]['htcp']), digits=3)}",
                R["htcp"][0], NONE,
            ))
        for cc in ("scalable", "fast"):
            if cc not in D:
                continue
            for other in ("highspeed", "bic", "htcp"):
                if other not in D:
                    continue
                rows.append(Row(
                    f"{grp}: {NAMES[cc]}'s degree of unfairness |ln(new / standard)| above {NAMES[other]}'s (Fig. 12)",
                    "Scalable and FAST exhibit the greatest degree of unfairness in both low and high-speed conditions (sect. VII-D)",
                    f"{NAMES[cc]} {fmt_ci(D[cc], digits=3)} (ratio {fmt_ci(R[cc], digits=3)}); {NAMES[other]} {fmt_ci(D[other], digits=3)} "
                    f"(ratio {fmt_ci(R[other], digits=3)}); second-half ratios {fmt_ci(ci95(half[key][cc]), digits=3)}, "
                    f"{fmt_ci(ci95(half[key][other]), digits=3)}",
                    D[cc][0],
                    criterion(exp, f"{cc}_most_unfriendly", a=D[cc], b=D[other], what=(NAMES[cc], NAMES[other]), group=f"{grp} vs {NAMES[other]}"),
                    "if differs: FAST's share depends on its alpha against the buffer (here a quarter of it) and on the "
                    "standard flow's queue occupancy." if cc == "fast" else "",
                ))
    fig = _ratio_panels({(cc, k[1], k[2]): ci95(v) for k, d in ratio.items() for cc, v in d.items()},
                        sorted({k[:2] for k in keys}), "Fig. 12: {rate}", "RTT (ms)", "goodput new / standard TCP")
    return Section("fig12", exp.title, setup_text(exp), rows, [figs.save(fig, out, "htcp_fig12.png")], scenario_comment(exp))


TABLE1 = {
    10: (1, 1, 1),
    100: (1, 2, 5),
    1000: (3, 12, 22),
    2000: (4, 19, 32),
    5000: (8, 33, 55),
    10000: (12, 49, 82),
    20000: (19, 72, 123),
    50000: (32, 122, 208),
}


def table1(exp) -> list[Row]:
    """Table I rows (reported with Fig. 5; criteria table1_w<w>_rtt<ms> in
    fig5.toml): the effective increase per RTT over one congestion epoch of
    the increase function (7), sect. IV (ii): the window climbs from w/2
    back to w; (w/2) / (epoch / RTT)."""
    rows = []
    for w, paper in TABLE1.items():
        for rtt, pv in zip((0.01, 0.1, 0.25), paper):
            secs, after = epoch_growth("htcp", {"beta_min": 0.5, "beta_max": 0.5}, float(w), rtt)
            eff = (w - after) / (secs / rtt)
            rows.append(Row(f"Table I: window {w}, RTT {rtt * 1000:g} ms: effective packets per RTT (computed)", f"{pv}", f"{eff:.1f}", eff,
                            criterion(exp, f"table1_w{w}_rtt{rtt * 1000:g}"),
                            "if differs: the paper rounds to whole packets and integrates (7) continuously; here the window grows per ACK, one window of ACKs per RTT."))
    return rows

ANALYSES = {"fig1_2_4": fig1_2_4, "fig3": fig3, "fig6": fig6, "fig7": fig7, "fig8_10": fig8_10, "fig9": fig9, "fig11": fig11, "fig12": fig12}
EXTRA = [table1]

# Figs. 1-7 (part A): Fig. 5 is new; Table I is reported in its section
# (criteria in fig5.toml), no longer as an extra one.
ANALYSES["fig5"] = fig5
ANALYSES["fig6_utilization"] = fig6_utilization
ANALYSES["fig7_rfc"] = fig7
EXTRA = []
