"""TCP-GT (tcp-gt.md) section IV: convergence (Figs. 4-7, Table 1),
robustness to a sudden change in load (Fig. 8), comparison with SACK,
HSTCP, FAST and CUBIC (Figs. 9-12) and the limits of sect. IV-F.

Every criterion is fixed here and in the scenario files before any run;
where the paper states a property of TCP-GT that loss-based TCP lacks, the
same measurement on Reno is reported as a control row with the paper's claim
about it."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from longfat.reproduce import figs
from longfat.reproduce.core import NONE, Row, Section, _rate_bps, _secs, between, rel, scenario_comment, setup_text
from longfat.reproduce.measure import Runs, bottleneck, convergence_time, flow_series, fmt_spread, jain, mean_goodput, mean_sd

TITLE = "TCP-GT: A New Approach to Congestion Control Based on Goodput and Throughput"
CITATION = "Jung, Kim, Yeom, Kang: TCP-GT (tcp-gt.md), section IV: ns-2 simulations on a dumbbell with DropTail queues of one BDP"
NOTES = (
    "The paper's figures are plots without tables, except Table 1; most rows test a stated claim (no drop, the smallest "
    "queue, utilization above 90 %, convergence in about 60 s). Where a claim is a property TCP-GT has and loss-based TCP "
    "lacks, a control row runs the same measurement on Reno (SACK) and tests the paper's claim about it, so that each "
    "TCP-GT check is shown able to fail. No public implementation of TCP-GT exists; longfat's follows the paper's "
    "equations and Algorithm 1, with the choices it leaves open listed in docs/algorithms.md."
)

NAMES = {"tcpgt": "TCP-GT", "reno": "SACK", "highspeed": "HSTCP", "fast": "FAST", "cubic": "CUBIC"}
PKT_BITS = 1040 * 8


# ---- measurements -------------------------------------------------------------


def _link(res, name: str = "bottleneck") -> dict[str, np.ndarray]:
    """The bottleneck's series: time_s, utilization, queue_pkts, drops_overflow (per sample)."""
    cache = res.__dict__.setdefault("_tcpgt_links", {})
    if name not in cache:
        d = res.links.select(["time_s", "link_name", "utilization", "queue_pkts", "drops_overflow"]).to_pydict()
        m = np.asarray(d["link_name"]) == name
        cache[name] = {k: np.asarray(d[k])[m] for k in ("time_s", "utilization", "queue_pkts", "drops_overflow")}
    return cache[name]


def _drops(res) -> int:
    """Overflow drops at the bottleneck over the whole run, start-ups included."""
    return int(_link(res)["drops_overflow"].sum())


def _window_mean(res, key: str, t0: float, t1: float) -> float:
    s = _link(res)
    m = (s["time_s"] > t0 + 1e-9) & (s["time_s"] <= t1 + 1e-9)
    return float(s[key][m].mean()) if m.any() else float("nan")


def _window(p) -> tuple[float, float]:
    return _secs(p.scenario["run"]["measure_from"]), _secs(p.scenario["run"]["duration"])


def _buffer_pkts(res) -> float:
    """The bottleneck buffer in packets: one BDP at the longest base RTT crossing it."""
    rate = bottleneck(res)["rate_bps"]
    rtt = max(f["base_rtt_ms"] for f in res.summary["flows"]) / 1000
    return rate * rtt / PKT_BITS


def _util_hi(p) -> float:
    """The highest utilization a window of samples can show: 1, plus one
    packet per sample interval (a sample counts the transmissions that end
    in it, so one that began in the previous interval can push it past 1)."""
    rate = _rate_bps(p.scenario["network"]["bottleneck"]["rate"])
    return 1.0 + PKT_BITS / (rate * _secs(p.scenario["run"]["sample_interval"]))


def _cc(p, i: int = 0) -> str:
    return p.scenario["flows"][i]["cc"]


def _mean(xs) -> float:
    return mean_sd(xs)[0]


def _rise_exponents(t: np.ndarray, w: np.ndarray, t_from: float) -> list[float]:
    """The exponent b of w - w0 = a (t - t0)^b fitted (least squares in
    log-log) to every rise of the window after ``t_from``: a maximal run of
    non-decreasing samples at least 10 samples long that gains at least 5 %."""
    out = []
    i = int(np.searchsorted(t, t_from))
    n = len(w)
    while i < n - 1:
        j = i
        while j + 1 < n and w[j + 1] >= w[j]:
            j += 1
        if j - i >= 10 and w[j] >= 1.05 * w[i]:
            dt = t[i + 1 : j + 1] - t[i]
            dw = w[i + 1 : j + 1] - w[i]
            ok = dw > 0
            if ok.sum() >= 5:
                b, _ = np.polyfit(np.log(dt[ok]), np.log(dw[ok]), 1)
                out.append(float(b))
        i = j + 1
    return out


# ---- Fig. 4 -------------------------------------------------------------------


def fig4(runs: Runs, out: Path, exp) -> Section:
    rows = []
    fig, ax = figs.new(2, 1, h=3.0)
    for k, (p, r) in enumerate(runs.pairs):
        cc = _cc(p)
        t0, t1 = _window(p)
        start2 = _secs(p.scenario["flows"][1]["start"])
        for f in (0, 1):
            t, _, w = flow_series(r, f)
            ax[k][0].plot(t, w, lw=0.8, label=f"flow {f + 1}")
        ax[k][0].set_title(f"{NAMES[cc]}: cwnd of two flows, 100 Mbit/s, 40 ms (the second starts at {start2:g} s)")
        ax[k][0].set_ylabel("cwnd (packets)")
        ax[k][0].legend(fontsize=8)
        t, _, w = flow_series(r, 0)
        b = _rise_exponents(t, w, start2)
        med = float(np.median(b)) if b else float("nan")
        shown = f"{med:.2f} (median of {len(b)} rises; quartiles {np.percentile(b, 25):.2f}..{np.percentile(b, 75):.2f})" if b else "no rise found"
        if cc == "tcpgt":
            rows.append(Row("TCP-GT: exponent b of a rise of the window, w - w0 ∝ (t - t0)^b",
                            "cwnd shows a quadratic behavior in an increasing phase (window splitting): b about 2, at least well above AIMD's 1",
                            shown, med, between(1.5, 3.5),
                            "b = 2 is a window quadratic in time, b = 3 one whose per-epoch increase is quadratic (p ∝ s², eq. (15)); "
                            "the band takes both and excludes AIMD's linear rise."))
            g = [mean_goodput(r, f, t0, t1) for f in (0, 1)]
            jf = jain(g)
            rows.append(Row(f"TCP-GT: Jain's index of the two flows over {t0:.0f}-{t1:.0f} s", "the flows converge to fairness",
                            f"{jf:.4f} ({g[0] / 1e6:.1f} and {g[1] / 1e6:.1f} Mbit/s)", jf, between(0.95, 1.0)))
            d = _drops(r)
            rows.append(Row("TCP-GT: packets dropped at the bottleneck over the run", "none (sect. I: TCP-GT never dropped a packet in the paper's simulations)",
                            str(d), d, between(0, 0)))
        else:
            rows.append(Row("control, SACK (Reno): the same exponent b", "AIMD rises linearly (b = 1; sect. III-D, Fig. 3)",
                            shown, med, between(0.5, 1.5)))
    ax[-1][0].set_xlabel("time (s)")
    return Section("fig4", exp.title, setup_text(exp), rows, [figs.save(fig, out, "tcpgt_fig4.png")], scenario_comment(exp))


# ---- Fig. 5 -------------------------------------------------------------------


def _rtt_ms(p) -> int:
    """The run's base RTT (ms): the bottleneck's and both access links' one-way delays, twice."""
    net = p.scenario["network"]
    d = _secs(net["bottleneck"]["delay"]) + 2 * _secs(net["access"]["delay"])
    return int(round(2000 * d))


def fig5(runs: Runs, out: Path, exp) -> Section:
    conv: dict[tuple[str, int], list[float]] = {}
    censored: dict[tuple[str, int], bool] = {}
    fig, ax = figs.new(1, 2, w=12, h=3.4)
    plotted = set()
    for p, r in runs.pairs:
        cc, rtt = _cc(p), _rtt_ms(p)
        start2 = _secs(p.scenario["flows"][1]["start"])
        end = _secs(p.scenario["run"]["duration"])
        c = convergence_time(r, 0, 1, start2, level=0.9, window_s=5.0)
        if math.isnan(c):
            # Never within the run: the time left is a lower bound.
            c = end - start2
            censored[(cc, rtt)] = True
        conv.setdefault((cc, rtt), []).append(c)
        if cc == "tcpgt" and rtt not in plotted:
            plotted.add(rtt)
            k = sorted({_rtt_ms(q) for q, _ in runs.pairs}).index(rtt)
            for f in (0, 1):
                t, g, _ = flow_series(r, f)
                ax[0][k].plot(t, g / 1e6, lw=0.8, label=f"flow {f + 1}")
            ax[0][k].set_title(f"TCP-GT, {rtt} ms (seed {p.seed})")
            ax[0][k].set_xlabel("time (s)")
            ax[0][k].set_ylabel("goodput (Mbit/s)")
            ax[0][k].legend(fontsize=8)
    rows = []
    rtts = sorted({k[1] for k in conv})

    def shown(key) -> str:
        s = fmt_spread(conv[key], digits=3, unit=" s")
        return s + (" (at least once not converged by the end: the time left counted)" if censored.get(key) else "")

    for rtt in rtts:
        if ("tcpgt", rtt) in conv:
            m = _mean(conv[("tcpgt", rtt)])
            rows.append(Row(f"TCP-GT: time to converge at {rtt} ms (trailing 5 s goodputs within 10 %)", "about 60 s",
                            shown(("tcpgt", rtt)), None if censored.get(("tcpgt", rtt)) else m, between(40, 80),
                            "if differs: the paper's \"about 60 s\" is read off one run's plot; the band is a third of it either side, and the spread over seeds is shown."))
    if len(rtts) == 2 and all(("tcpgt", x) in conv for x in rtts):
        a, b = (_mean(conv[("tcpgt", x)]) for x in rtts)
        ratio = b / a if a > 0 else float("inf")
        rows.append(Row(f"TCP-GT: convergence time at {rtts[1]} ms / at {rtts[0]} ms", "almost the same (the RTT compensation factor f)",
                        f"{ratio:.2f}", ratio, between(0.75, 1.33)))
    for rtt in rtts:
        if ("reno", rtt) in conv and ("tcpgt", rtt) in conv:
            lo = _mean(conv[("reno", rtt)]) / max(_mean(conv[("tcpgt", rtt)]), 1e-9)
            rows.append(Row(f"control, SACK (Reno): convergence time at {rtt} ms / TCP-GT's", "AIMD converges only in its decreasing phases, far slower (sect. III-D, Fig. 3): at least 2",
                            f"{'at least ' if censored.get(('reno', rtt)) else ''}{lo:.2f} (SACK: {shown(('reno', rtt))})", lo, between(lo=2.0),
                            "if differs: with one BDP of DropTail buffer, equal RTTs and losses that hit both flows in the same round trip, "
                            "two Reno flows' windows can meet within a few cycles (see the spread over seeds); the slow AIMD convergence "
                            "of the paper's Fig. 3 shows when losses fall on one flow at a time."))
    return Section("fig5", exp.title, setup_text(exp), rows, [figs.save(fig, out, "tcpgt_fig5.png")], scenario_comment(exp))


# ---- Fig. 6 -------------------------------------------------------------------


def fig6(runs: Runs, out: Path, exp) -> Section:
    m: dict[str, dict[str, list[float]]] = {}
    fig, ax = figs.new(3, 1, h=2.6)
    shown_cc = set()
    for p, r in runs.pairs:
        cc = _cc(p)
        t0, t1 = _window(p)
        flows = r.summary["flows"]
        g = [mean_goodput(r, f["flow"], t0, t1) for f in flows]
        d = m.setdefault(cc, {"drops": [], "jain": [], "util": [], "queue": []})
        d["drops"].append(_drops(r))
        d["jain"].append(jain(g))
        d["util"].append(_window_mean(r, "utilization", 10.0, t1))
        d["queue"].append(bottleneck(r)["mean_queue_pkts"] / _buffer_pkts(r))
        if cc not in shown_cc:
            shown_cc.add(cc)
            if cc == "tcpgt":
                for f in flows:
                    t, gg, _ = flow_series(r, f["flow"])
                    ax[0][0].plot(t, gg / 1e6, lw=0.8)
                ax[0][0].set_ylabel("goodput (Mbit/s)")
                ax[0][0].set_title(f"TCP-GT: five flows starting 20 s apart, 500 Mbit/s, 80 ms (seed {p.seed})")
            s = _link(r)
            ax[1][0].plot(s["time_s"], s["utilization"], lw=0.8, label=NAMES[cc])
            ax[2][0].plot(s["time_s"], s["queue_pkts"], lw=0.8, label=NAMES[cc])
    ax[1][0].set_ylabel("utilization")
    ax[1][0].legend(fontsize=8)
    ax[2][0].set_ylabel("queue (packets)")
    ax[2][0].set_xlabel("time (s)")
    ax[2][0].legend(fontsize=8)
    rows = []
    p0 = runs.pairs[0][0]
    t0, t1 = _window(p0)
    if "tcpgt" in m:
        d = m["tcpgt"]
        rows.append(Row("TCP-GT: packets dropped at the bottleneck over the run (most over the seeds)", "none (\"we observed no packet drop\")",
                        f"{max(d['drops'])} (per seed: {', '.join(map(str, d['drops']))})", max(d["drops"]), between(0, 0)))
        rows.append(Row(f"TCP-GT: Jain's index of the five flows over {t0:.0f}-{t1:.0f} s", "old and new flows converge to fairness",
                        fmt_spread(d["jain"]), _mean(d["jain"]), between(0.95, 1.0)))
        rows.append(Row(f"TCP-GT: utilization over 10-{t1:.0f} s", "all flows utilize the bottleneck link efficiently (Fig. 6(b)); at least 0.9",
                        fmt_spread(d["util"]), _mean(d["util"]), between(0.9, _util_hi(p0))))
        rows.append(Row(f"TCP-GT: mean queue over {t0:.0f}-{t1:.0f} s, as a fraction of the buffer", "low persistent queue size: under a tenth of the buffer",
                        fmt_spread(d["queue"], digits=3), _mean(d["queue"]), between(0, 0.1)))
    if "reno" in m:
        d = m["reno"]
        rows.append(Row("control, SACK (Reno): packets dropped over the run (fewest over the seeds)", "loss-based TCP drops (sect. IV-E: the competitors drop thousands)",
                        f"{min(d['drops'])}", min(d["drops"]), between(lo=1)))
        rows.append(Row("control, SACK (Reno): mean queue as a fraction of the buffer", "loss-based TCP fills the buffer: more than a tenth",
                        fmt_spread(d["queue"], digits=3), _mean(d["queue"]), between(0.1, 1.0)))
    return Section("fig6", exp.title, setup_text(exp), rows, [figs.save(fig, out, "tcpgt_fig6.png")], scenario_comment(exp))


# ---- Fig. 7 and Table 1 ---------------------------------------------------------

TABLE1 = {10: 0.98, 20: 0.92, 30: 0.88, 40: 0.86}


def fig7_table1(runs: Runs, out: Path, exp) -> Section:
    by_spread: dict[int, list[tuple[float, list[float]]]] = {}
    for p, r in runs.pairs:
        t0, t1 = _window(p)
        rtts = sorted((f["base_rtt_ms"], f["flow"]) for f in r.summary["flows"])
        spread = int(round((rtts[1][0] - rtts[0][0]) / 10.0)) * 10
        g = [mean_goodput(r, f, t0, t1) for _, f in rtts]
        by_spread.setdefault(spread, []).append((jain(g), g))
    rows = []
    for spread in sorted(by_spread):
        js = [j for j, _ in by_spread[spread]]
        if spread in TABLE1:
            rows.append(Row(f"Table 1: Jain's index, RTT spread {spread} ms", f"{TABLE1[spread]:.2f}", fmt_spread(js, digits=3),
                            _mean(js), rel(TABLE1[spread], 0.05),
                            "if differs: the first flow (40 ms, alone for 20 s) keeps several times the four later flows' rate, which "
                            "share nearly equally (goodput-by-RTT panel). With RTTs that differ, the flows' decreases fall in different "
                            "epochs and never drain the queue together: a standing queue builds, every local minimum RTT (eq. 5) takes "
                            "it in, and eq. (16) sees only changes above it, so nothing moves the first flow's share down."))
    if 10 in by_spread:
        ratios = [g[-1] / g[0] if g[0] > 0 else float("inf") for _, g in by_spread[10]]
        rows.append(Row("Fig. 7 (spread 10 ms): goodput of the 80 ms flow / the 40 ms flow",
                        "the longer-RTT flow consumes more bandwidth (sect. IV-C), within a fair share (Jain 0.98): between 1 and 2",
                        fmt_spread(ratios, digits=3), _mean(ratios), between(1.0, 2.0),
                        "if differs: the 40 ms flow is also the first flow; see the Table 1 rows."))
    fig, ax = figs.new(1, 2, w=12, h=3.4)
    sp = sorted(by_spread)
    figs.bars(ax[0][0], [f"{s} ms" for s in sp], {"paper": [TABLE1.get(s, float("nan")) for s in sp],
                                                   "longfat (mean)": [_mean([j for j, _ in by_spread[s]]) for s in sp]},
              "Jain's index", "Table 1: fairness of five flows vs RTT spread")
    ax[0][0].set_ylim(0.5, 1.02)
    for s in sp:
        g = np.mean([gg for _, gg in by_spread[s]], axis=0) / 1e6
        ax[0][1].plot([40 + k * s for k in range(len(g))], g, "o-", label=f"spread {s} ms")
    ax[0][1].set_xlabel("flow RTT (ms)")
    ax[0][1].set_ylabel("goodput (Mbit/s), mean over seeds")
    ax[0][1].set_title("goodput by RTT")
    ax[0][1].legend(fontsize=8)
    return Section("fig7_table1", exp.title, setup_text(exp), rows, [figs.save(fig, out, "tcpgt_fig7_table1.png")], scenario_comment(exp))


# ---- Fig. 8 -------------------------------------------------------------------


def fig8(runs: Runs, out: Path, exp) -> Section:
    growth, u_in, u_after, drops = [], [], [], []
    for p, r in runs.pairs:
        before = _window_mean(r, "queue_pkts", 30, 50)
        during = _window_mean(r, "queue_pkts", 70, 100)
        growth.append(during / before if before > 0 else float("inf"))
        u_in.append(_window_mean(r, "utilization", 60, 100))
        u_after.append(_window_mean(r, "utilization", 110, 150))
        drops.append(_drops(r))
    rows = [
        Row("queue over 70-100 s / over 30-50 s (10 flows, then 110)", "the bottleneck queue increases less than 10 times (between 1 and 10)",
            fmt_spread(growth, digits=3), _mean(growth), between(1.0, 10.0),
            "if differs below 1: the queue shrank. With ten flows a standing queue builds up over the first 50 s (see the figure): "
            "each flow's local minimum RTT (eq. 5) takes in the queue that the flows' decreases never drain, so eq. (16) stops "
            "seeing it; the 100 new flows' decreases drain it, and it stays lower while they run."),
        Row("utilization over 60-100 s (110 flows)", "TCP-GT adapts quickly to a sudden increase: at least 0.9", fmt_spread(u_in), _mean(u_in), between(0.9, _util_hi(runs.pairs[0][0]))),
        Row("utilization over 110-150 s (back to 10 flows)", "and quickly to a sudden decrease: at least 0.9", fmt_spread(u_after), _mean(u_after), between(0.9, _util_hi(runs.pairs[0][0]))),
        Row("packets dropped at the bottleneck over the run (most over the seeds)", "none (sect. I: no drop in the paper's simulations)",
            f"{max(drops)} (per seed: {', '.join(map(str, drops))})", max(drops), between(0, 0)),
    ]
    p, r = runs.pairs[0]
    fig, ax = figs.new(3, 1, h=2.6)
    fl = r.summary["flows"]
    for name, color in (("long", "C0"), ("burst", "C1")):
        ids = [f["flow"] for f in fl if f["name"].startswith(name)]
        t, _, _ = flow_series(r, ids[0])
        tot = sum(np.interp(t, *flow_series(r, i)[:2]) for i in ids)
        ax[0][0].plot(t, tot / len(ids) / 1e6, color=color, lw=0.8, label=f"{name}: mean per flow ({len(ids)} flows)")
    ax[0][0].set_ylabel("goodput (Mbit/s)")
    ax[0][0].legend(fontsize=8)
    ax[0][0].set_title(f"Fig. 8: 10 flows, 100 more from 50 s to 100 s, 500 Mbit/s, 40 ms (seed {p.seed})")
    s = _link(r)
    ax[1][0].plot(s["time_s"], s["utilization"], lw=0.8)
    ax[1][0].set_ylabel("utilization")
    ax[2][0].plot(s["time_s"], s["queue_pkts"], lw=0.8)
    ax[2][0].set_ylabel("queue (packets)")
    ax[2][0].set_xlabel("time (s)")
    return Section("fig8", exp.title, setup_text(exp), rows, [figs.save(fig, out, "tcpgt_fig8.png")], scenario_comment(exp))


# ---- Figs. 9-12 ---------------------------------------------------------------


def _sweep_table(runs: Runs, xof) -> dict[tuple[str, float], dict[str, float]]:
    """(cc, x) -> mean over seeds of utilization, mean queue (packets), drops."""
    acc: dict[tuple[str, float], dict[str, list[float]]] = {}
    for p, r in runs.pairs:
        b = bottleneck(r)
        d = acc.setdefault((_cc(p), xof(p)), {"util": [], "queue": [], "drops": [], "util_hi": []})
        d["util"].append(b["utilization"])
        t0, t1 = _window(p)
        # The window's utilization can pass 1 by the one packet whose
        # transmission began before the window.
        d["util_hi"].append(1.0 + PKT_BITS / (_rate_bps(p.scenario["network"]["bottleneck"]["rate"]) * (t1 - t0)))
        d["queue"].append(b["mean_queue_pkts"])
        d["drops"].append(_drops(r))
    return {k: {m: _mean(v) for m, v in d.items()} for k, d in acc.items()}


def _sweep_plot(table, xs, out: Path, name: str, title: str, xlabel: str, logx: bool = True) -> str:
    fig, ax = figs.new(1, 3, w=15, h=3.4)
    ccs = [c for c in NAMES if any((c, x) in table for x in xs)]
    for j, (m, label) in enumerate((("util", "utilization"), ("queue", "mean queue (packets)"), ("drops", "drops (whole run)"))):
        for c in ccs:
            pts = [(x, table[(c, x)][m]) for x in xs if (c, x) in table]
            ax[0][j].plot([x for x, _ in pts], [v for _, v in pts], "o-", label=NAMES[c], lw=1)
        ax[0][j].set_xlabel(xlabel)
        ax[0][j].set_ylabel(label)
        if logx:
            ax[0][j].set_xscale("log")
        if m == "drops":
            ax[0][j].set_yscale("symlog", linthresh=1)
    ax[0][0].set_title(title)
    ax[0][0].legend(fontsize=8)
    return figs.save(fig, out, name)


UTIL_NOTE = ("if differs: with one BDP of buffer the loss-based protocols never let the queue empty and keep the link at 100 %; "
                 "TCP-GT's decrease (eq. 17) removes the whole excess it measured, and flows that measure the same queue in the "
                 "same epoch take it together, which briefly empties the queue (as in Fig. 6's utilization panel).")

LONG_RTT_NOTE = ("if differs at the longest RTTs: there f = rtt / 50 ms is 6.4 and 20, and the paper itself warns that \"f^2 becomes huge "
                 "enough to make our algorithm work unreliably due to the increased sensitivity of the large compensation factor\" "
                 "(end of sect. IV-C); each epoch also lasts a whole RTT, so 300 s are only 300 epochs.")


def _hi(table) -> float:
    return max(v["util_hi"] for v in table.values())


def _sweep_rows(table, xs, xname: str, *, util_lo: float | None, drop_free_upto: float | None = None) -> list[Row]:
    rows: list[Row] = []
    ccs = [c for c in NAMES if any((c, x) in table for x in xs)]
    others = [c for c in ccs if c != "tcpgt"]
    pts = [x for x in xs if ("tcpgt", x) in table]
    if util_lo is not None:
        for c in ccs:
            us = [table[(c, x)]["util"] for x in xs if (c, x) in table]
            rows.append(Row(f"{NAMES[c]}: lowest utilization over the {xname}s", f"utilization above {util_lo:g} for all",
                            f"{min(us):.4f} (" + ", ".join(f"{u:.3f}" for u in us) + ")", min(us), between(util_lo, _hi(table)),
                            UTIL_NOTE if c == "tcpgt" else ""))
    if others and pts:
        smallest = [x for x in pts if all(table[("tcpgt", x)]["queue"] < table[(c, x)]["queue"] for c in others if (c, x) in table)]
        frac = len(smallest) / len(pts)
        detail = "; ".join(f"{x:g}: " + ", ".join(f"{NAMES[c]} {table[(c, x)]['queue']:.0f}" for c in ccs if (c, x) in table) for x in pts)
        rows.append(Row(f"fraction of {xname}s where TCP-GT's mean queue is the smallest", "TCP-GT's queue is significantly smaller than the others' (all points)",
                        f"{len(smallest)}/{len(pts)} (mean queue, packets: {detail})", frac, between(1.0, 1.0), LONG_RTT_NOTE if xname == "RTT" else ""))
        upto = [x for x in pts if drop_free_upto is None or x <= drop_free_upto]
        worst = max(table[("tcpgt", x)]["drops"] for x in upto)
        where = "" if drop_free_upto is None else f" up to {drop_free_upto:g} {xname}s"
        rows.append(Row(f"TCP-GT: most packets dropped at one {xname}{where} (mean over seeds)", "TCP-GT never drops any packets",
                        f"{worst:g} (" + ", ".join(f"{x:g}: {table[('tcpgt', x)]['drops']:g}" for x in pts) + ")", worst, between(0, 0),
                        LONG_RTT_NOTE if xname == "RTT" else ""))
        for c in others:
            ds = [table[(c, x)]["drops"] for x in pts if (c, x) in table]
            if ds:
                note = ""
                if c == "fast":
                    note = ("if differs: FAST here keeps its alpha packets per flow queued, sized to hold in the buffer (see the "
                            "scenario file); a FAST whose alpha exceeds the buffer's share drops like the loss-based protocols.")
                rows.append(Row(f"{NAMES[c]}: packets dropped at the {xname} with the most (mean over seeds)", "other TCP implementations drop thousands of packets",
                                f"{max(ds):g}", max(ds), between(lo=1000), note))
    return rows


def fig9_capacity(runs: Runs, out: Path, exp) -> Section:
    xof = lambda p: _rate_bps(p.scenario["network"]["bottleneck"]["rate"]) / 1e6  # noqa: E731
    table = _sweep_table(runs, xof)
    xs = sorted({x for _, x in table})
    rows = _sweep_rows(table, xs, "capacity", util_lo=0.9)
    png = _sweep_plot(table, xs, out, "tcpgt_fig9.png", "Fig. 9: 50 flows, 80 ms", "capacity (Mbit/s)")
    return Section("fig9_capacity", exp.title, setup_text(exp), rows, [png], scenario_comment(exp))


def fig10_rtt(runs: Runs, out: Path, exp) -> Section:
    table = _sweep_table(runs, lambda p: float(_rtt_ms(p)))
    xs = sorted({x for _, x in table})
    rows = _sweep_rows(table, xs, "RTT", util_lo=None)
    if "tcpgt" in {c for c, _ in table}:
        pts = [x for x in xs if ("tcpgt", x) in table]
        best = [x for x in pts if all(table[("tcpgt", x)]["util"] >= table[(c, x)]["util"] for c, xx in table if xx == x)]
        detail = "; ".join(f"{x:g}: " + ", ".join(f"{NAMES[c]} {table[(c, x)]['util']:.3f}" for c in NAMES if (c, x) in table) for x in pts)
        rows.insert(0, Row("fraction of RTTs where TCP-GT's utilization is the highest", "TCP-GT achieves a higher utilization than other TCP implementations",
                           f"{len(best)}/{len(pts)} ({detail})", len(best) / len(pts), between(1.0, 1.0), UTIL_NOTE))
        u = [table[("tcpgt", x)]["util"] for x in pts]
        falls = float(u[-1] < u[0]) if len(u) > 1 else float("nan")
        rows.insert(1, Row(f"TCP-GT: utilization at {pts[-1]:g} ms below that at {pts[0]:g} ms (1 = yes)", "as the RTT increases, the utilization decreases in all TCP implementations including TCP-GT",
                           f"{int(falls) if not math.isnan(falls) else 'n/a'} ({u[0]:.3f} -> {u[-1]:.3f})", falls, between(1, 1)))
    png = _sweep_plot(table, xs, out, "tcpgt_fig10.png", "Fig. 10: 50 flows, 500 Mbit/s", "RTT (ms)")
    return Section("fig10_rtt", exp.title, setup_text(exp), rows, [png], scenario_comment(exp))


def fig11_flows(runs: Runs, out: Path, exp) -> Section:
    table = _sweep_table(runs, lambda p: float(p.scenario["flows"][0].get("count", 1)))
    xs = sorted({x for _, x in table})
    rows = _sweep_rows(table, xs, "flow count", util_lo=None)
    if ("tcpgt", xs[0]) in table:
        x = xs[0]
        u = table[("tcpgt", x)]["util"]
        best = max(v["util"] for (c, xx), v in table.items() if xx == x)
        rows.insert(0, Row(f"TCP-GT's utilization with {x:g} flows minus the best", "with a small number of flows, TCP-GT shows the best utilization",
                           f"{u - best:+.4f} (TCP-GT {u:.4f})", u - best, between(0.0, 0.0), UTIL_NOTE))
        us = [table[("tcpgt", x)]["util"] for x in xs if ("tcpgt", x) in table]
        rows.insert(1, Row("TCP-GT: lowest utilization over the flow counts", "overall, TCP-GT exhibits high utilization: at least 0.9",
                           f"{min(us):.4f} (" + ", ".join(f"{v:.3f}" for v in us) + ")", min(us), between(0.9, _hi(table)), UTIL_NOTE))
    png = _sweep_plot(table, xs, out, "tcpgt_fig11.png", "Fig. 11: 300 Mbit/s, 80 ms", "number of flows")
    return Section("fig11_flows", exp.title, setup_text(exp), rows, [png], scenario_comment(exp))


def fig12_web(runs: Runs, out: Path, exp) -> Section:
    table = _sweep_table(runs, lambda p: float(p.scenario["web"][0]["sessions"]))
    xs = sorted({x for _, x in table})
    rows = _sweep_rows(table, xs, "session count", util_lo=0.95, drop_free_upto=600)
    if "tcpgt" in {c for c, _ in table}:
        pts = [x for x in xs if ("tcpgt", x) in table]
        fewer = [x for x in pts if all(table[("tcpgt", x)]["drops"] < table[(c, x)]["drops"] for c, xx in table if xx == x and c != "tcpgt")]
        rows.append(Row("fraction of session counts where TCP-GT drops fewer packets than every other", "TCP-GT always drops fewer packets than other protocols do",
                        f"{len(fewer)}/{len(pts)}", len(fewer) / len(pts), between(1.0, 1.0)))
    png = _sweep_plot(table, xs, out, "tcpgt_fig12.png", "Fig. 12: 50 flows + web sessions, 500 Mbit/s, 40 ms", "web sessions")
    return Section("fig12_web", exp.title, setup_text(exp), rows, [png], scenario_comment(exp))


# ---- Sect. IV-F -----------------------------------------------------------------


def sect4f_limits(runs: Runs, out: Path, exp) -> Section:
    by: dict[tuple[bool, float, int], list[int]] = {}
    for p, r in runs.pairs:
        literal = float(p.scenario["flows"][0].get("params", {}).get("max_increase", 1.0)) > 1.0
        key = (literal, _rate_bps(p.scenario["network"]["bottleneck"]["rate"]) / 1e6, _rtt_ms(p))
        by.setdefault(key, []).append(_drops(r))
    rows = []
    keys = sorted(by, key=lambda k: (k[0], -k[1], -k[2]))
    for literal in (False, True):
        mine = [k for k in keys if k[0] == literal]
        if not mine:
            continue
        ref = max(mine, key=lambda k: (k[1], k[2]))
        variant = "eq. (15) unbounded" if literal else "longfat's TCP-GT (increase capped at 1 packet per packet)"
        for k in mine:
            d = by[k]
            label = f"{variant}, {k[1]:g} Mbit/s x {k[2]} ms"
            per_seed = ", ".join(map(str, d))
            if k == ref:
                rows.append(Row(f"{label} (reference): most packets dropped over a run", "stable: no drop", f"{max(d)} (per seed: {per_seed})", max(d), between(0, 0)))
            else:
                why = "below 50 Mbit/s" if k[1] < 50 else "below 20 ms"
                note = ""
                if not literal and k[1] < 50:
                    note = ("if differs: the cap bounds the per-packet feedback of eq. (15), which sect. IV-F names as the cause; "
                            "the unbounded rows show the instability the paper describes.")
                rows.append(Row(f"{label}: fewest packets dropped over a run", f"unstable {why}: TCP-GT overshoots and drops many packets (at least 100 in every run)",
                                f"{min(d)} (per seed: {per_seed})", min(d), between(lo=100), note))
    fig, ax = figs.new(1, 1, w=11)
    for j, k in enumerate(keys):
        ax[0][0].bar(j, _mean(by[k]), yerr=mean_sd(by[k])[1], color="C1" if k[0] else "C0")
    ax[0][0].set_xticks(range(len(keys)))
    ax[0][0].set_xticklabels([f"{k[1]:g} Mbit/s\n{k[2]} ms\n{'unbounded' if k[0] else 'capped'}" for k in keys], fontsize=8)
    ax[0][0].set_ylabel("packets dropped (mean over seeds)")
    ax[0][0].set_yscale("symlog", linthresh=1)
    ax[0][0].set_title("Sect. IV-F: ten TCP-GT flows at the limits (blue: longfat's default, orange: eq. (15) unbounded)")
    return Section("sect4f_limits", exp.title, setup_text(exp), rows, [figs.save(fig, out, "tcpgt_sect4f.png")], scenario_comment(exp))


ANALYSES = {
    "fig4": fig4,
    "fig5": fig5,
    "fig6": fig6,
    "fig7_table1": fig7_table1,
    "fig8": fig8,
    "fig9_capacity": fig9_capacity,
    "fig10_rtt": fig10_rtt,
    "fig11_flows": fig11_flows,
    "fig12_web": fig12_web,
    "sect4f_limits": sect4f_limits,
}

__all__ = ["ANALYSES", "CITATION", "NOTES", "TITLE", "NONE"]
