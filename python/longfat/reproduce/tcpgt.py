"""TCP-GT (tcp-gt.md) section IV: convergence (Figs. 4-7, Table 1),
robustness to a sudden change in load (Fig. 8), comparison with SACK,
HSTCP, FAST and CUBIC (Figs. 9-12) and the limits of sect. IV-F.

Every check is a criterion stated in the experiment's scenario file
([reproduce.criteria], with the paper's section or figure beside it) before
any run; every row over several flows is a mean over five seeds with
randomized start times and per-flow RTTs (and, while a claim it decides is
not separable, of 10, 20 and at most 30: sequential seeds), reported with
its t-interval at 98.75 % (95 % over the looks).
Where the paper states a property of TCP-GT that loss-based TCP lacks (no
drop, a small queue, fairness, the shape of the rise), the same check on
Reno (SACK) is a negative control paired with the claim: the claim counts
only if Reno fails it."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from longfat.reproduce import figs
from longfat.reproduce.coverage import Cover
from longfat.reproduce.core import NONE, Row, Section, evaluate, scenario_comment, setup_text
from longfat.reproduce.criteria import AGREES, DIFFERS, NOT_SEPARABLE, criterion
from longfat.reproduce.measure import Runs, bottleneck, ci95, convergence_time, flow_series, fmt_ci, fmt_median, jain, mean_goodput, mean_sd, median_ci
from longfat.units import rate_bps as _rate_bps
from longfat.units import seconds as _secs

TITLE = "TCP-GT: A New Approach to Congestion Control Based on Goodput and Throughput"
AUTHORS = "Hyungsoo Jung, Shin-Gyu Kim, Heon Young Yeom, and Sooyong Kang"
CITATION = "Jung, Kim, Yeom, Kang: TCP-GT (tcp-gt.md), section IV: ns-2 simulations on a dumbbell with DropTail queues of one BDP"
NOTES = (
    "The paper's figures are plots without tables, except Table 1; most rows test a stated claim (no drop, the smallest "
    "queue, utilization above 90 %, convergence in about 60 s), with the criterion stated in the scenario file. Runs with "
    "several flows use five seeds (randomized start times, per-flow RTTs up to 2 ms longer), a point going on to 10, 20 "
    "and at most 30 seeds while a claim it decides is not separable (sequential seeds, fixed in the scenario files before the runs; "
    "each row's seeds are in its \"seeds\" column), and report the mean with its "
    "t-interval at 98.75 % (95 % shared by the up to four looks); a comparison with another protocol is judged on Welch's interval of the difference at the same level (on logarithms for ratios); an exact tie contradicts a strict claim; \"never drops\" is judged seed by seed. Where a claim is a property "
    "TCP-GT has and loss-based TCP lacks, a negative control applies the same check to Reno (SACK): the claim counts only "
    "if the control fails it. Figs. 9-12 are run at six points of each sweep (the paper's "
    "range in a 1-2-5 series; its figures give no point list), five protocols x five or more seeds each, for 60 s with the "
    "metrics' second half shown against the whole window. No public implementation of TCP-GT exists; longfat's follows the "
    "paper's equations and Algorithm 1, with the choices it leaves open listed in docs/algorithms.md."
)

NAMES = {"tcpgt": "TCP-GT", "reno": "SACK", "highspeed": "HSTCP", "fast": "FAST", "cubic": "CUBIC", "tcpgt_literal": "TCP-GT (literal eq. 15)"}
#: The protocols TCP-GT is compared with (the literal variant is TCP-GT under another reading, not a competitor).
#: What of the paper this report reproduces (coverage.py). Sect. IV-F's
#: limits and its TCP-unfriendliness have no figure; they have sections of
#: their own (sect4f_limits, sect4f_friendly).
COVERAGE = {
    "Fig. 1": Cover("n-a", why="how goodput and throughput are measured per epoch: a timing diagram"),
    "Fig. 2": Cover("n-a", why="the window-RTT plane with its equi-throughput line: a concept drawing"),
    "Fig. 3": Cover("n-a", why="the IIMD trajectory of two users in the Chiu-Jain plane, analytic; its claim (faster than AIMD) is judged in Fig. 5's rows"),
    "Fig. 4": Cover("full", ("fig4",)),
    "Fig. 5": Cover("full", ("fig5",)),
    "Table 1": Cover("full", ("fig7_table1",)),
    "Fig. 6": Cover("full", ("fig6",)),
    "Fig. 7": Cover("full", ("fig7_table1",)),
    "Fig. 8": Cover("full", ("fig8",)),
    "Fig. 9": Cover("full", ("fig9_capacity",)),
    "Fig. 10": Cover("full", ("fig10_rtt",)),
    "Fig. 11": Cover("full", ("fig11_flows",)),
    "Fig. 12": Cover("full", ("fig12_web",), why="a web session is read as one user; the paper's \"10 users\" could mean ten a session (fig12_web.toml)"),
}

COMPETITORS = ("reno", "highspeed", "fast", "cubic")
#: Where a max_increase at or above this runs: eq. (15) unbounded, the literal reading.
LITERAL_MAX_INCREASE = 1e6
#: The variant every section runs, and the one its "literal" rows run (docs/algorithms.md, TCP-GT).
VARIANTS = ("TCP-GT rows run longfat's reading: the II rule's increase capped at one packet per packet delivered "
            "(max_increase = 1) and no slow start, adopted because the literal eq. (15) dropped packets where the paper "
            "reports none (docs/algorithms.md). Rows marked \"literal eq. 15\" run the same points with the increase "
            "unbounded (max_increase = 1e9) and are counted apart, as sensitivity rows.")
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


def _cc(p, i: int = 0) -> str:
    """The run's protocol; TCP-GT with eq. (15) unbounded is "tcpgt_literal"."""
    f = p.scenario["flows"][i]
    if f["cc"] == "tcpgt" and float((f.get("params") or {}).get("max_increase", 1)) >= LITERAL_MAX_INCREASE:
        return "tcpgt_literal"
    return f["cc"]


def _setup(exp) -> str:
    """The section's setup line, with the variant of TCP-GT its rows ran."""
    return setup_text(exp) + " " + VARIANTS


def _literal(exp, cid: str, item: str, xs, *, group: str = "", digits: int = 4, measured: str | None = None) -> Row:
    """The sensitivity row of criterion ``cid`` (``cid``_literal, stated in the
    scenario file): the same check on the literal eq. (15)."""
    return _ci_row(exp, cid + "_literal", "TCP-GT, literal eq. (15): " + item, "the same claim, eq. (15) unbounded", xs,
                   group=group, digits=digits, measured=measured)


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


def _by_seed(runs: Runs, key) -> dict:
    """{key(p): [(seed, p, r), ...]} with each list in seed order."""
    out: dict = {}
    for p, r in runs.pairs:
        out.setdefault(key(p), []).append((p.seed, p, r))
    for v in out.values():
        v.sort(key=lambda x: x[0])
    return out


def _drops_text(ds) -> str:
    return fmt_ci(ci95(ds), digits=6) + " (per seed: " + ", ".join(str(int(d)) for d in ds) + ")"


def _group(exp, group: str) -> str:
    """A row's group, prefixed with its experiment: criteria.settle pairs a
    claim with its control by (criterion id, group) over the whole report,
    and several experiments use the same ids (no_drop, no_drop_reno)."""
    return f"{exp.name} {group}".strip()


def _ci_row(exp, cid: str, item: str, paper: str, xs, *, group: str = "", digits: int = 4, unit: str = "",
            scale: float = 1.0, note: str = "", measured: str | None = None) -> Row:
    """A row checked by the ci criterion ``cid`` on the per-seed values ``xs``."""
    st = ci95(xs)
    text = measured if measured is not None else fmt_ci(st, scale=scale, digits=digits, unit=unit)
    return Row(item, paper, text, st[0], criterion(exp, cid, ci=st, group=_group(exp, group)), note)


def _sep_row(exp, cid: str, item: str, paper: str, a, b, what: tuple[str, str], *, group: str = "",
             digits: int = 4, note: str = "", extra: str = "") -> Row:
    """A row checked by the separate criterion ``cid``: per-seed values ``a`` against ``b``."""
    ca, cb = ci95(a), ci95(b)
    text = f"{what[0]} {fmt_ci(ca, digits=digits)}; {what[1]} {fmt_ci(cb, digits=digits)}" + extra
    return Row(item, paper, text, ca[0] - cb[0], criterion(exp, cid, a=ca, b=cb, what=what, group=_group(exp, group)), note)


def _no_drop_rows(exp, cid: str, ctl: str | None, tcpgt_drops, reno_drops, paper: str, *, group: str = "",
                  where: str = "", literal_drops=None) -> list[Row]:
    rows = [_ci_row(exp, cid, f"TCP-GT: packets dropped at the bottleneck over a run{where}", paper, tcpgt_drops,
                    group=group, measured=_drops_text(tcpgt_drops))]
    if literal_drops:
        rows.append(_literal(exp, cid, f"packets dropped at the bottleneck over a run{where}", literal_drops, group=group,
                             measured=_drops_text(literal_drops)))
    if ctl and reno_drops:
        rows.append(_ci_row(exp, ctl, f"control, SACK (Reno): packets dropped over a run{where}",
                            "loss-based TCP drops (sect. IV-E: the competitors \"drop thousands of packets\")", reno_drops,
                            group=group, measured=_drops_text(reno_drops)))
    return rows


# ---- Fig. 4 -------------------------------------------------------------------


def fig4(runs: Runs, out: Path, exp) -> Section:
    rows = []
    fig, ax = figs.new(2, 1, h=3.0)
    m: dict[str, dict[str, list]] = {}
    for k, (cc, items) in enumerate(sorted(_by_seed(runs, _cc).items(), key=lambda kv: list(NAMES).index(kv[0]))):
        d = m.setdefault(cc, {"b": [], "rises": [], "jain": [], "drops": []})
        for seed, p, r in items:
            t0, t1 = _window(p)
            start2 = _secs(p.scenario["flows"][1]["start"])
            t, _, w = flow_series(r, 0)
            b = _rise_exponents(t, w, start2)
            d["b"].append(float(np.median(b)) if b else float("nan"))
            d["rises"].append(len(b))
            d["jain"].append(jain([mean_goodput(r, f, t0, t1) for f in (0, 1)]))
            d["drops"].append(_drops(r))
            if seed == items[0][0] and k < 2:
                for f in (0, 1):
                    tt, _, ww = flow_series(r, f)
                    ax[k][0].plot(tt, ww, lw=0.8, label=f"flow {f + 1}")
                ax[k][0].set_title(f"{NAMES[cc]}: cwnd of two flows, 100 Mbit/s, 40 ms (second from {start2:g} s; seed {seed})")
                ax[k][0].set_ylabel("cwnd (packets)")
                ax[k][0].legend(fontsize=8)
    ax[-1][0].set_xlabel("time (s)")
    p0 = runs.pairs[0][0]
    t0, t1 = _window(p0)
    g, c, lit = m.get("tcpgt"), m.get("reno"), m.get("tcpgt_literal")
    if g:
        rows.append(_ci_row(exp, "rise_exponent", "TCP-GT: exponent b of a rise of the window, w - w0 ∝ (t - t0)^b (median over a run's rises)",
                            "cwnd shows a quadratic behavior in an increasing phase (window splitting): b about 2", g["b"], digits=3,
                            measured=fmt_ci(ci95(g["b"]), digits=3) + f" ({sum(g['rises'])} rises in all)",
                            note="eqs. (14)-(15) put b between 1.5 (a window growing from zero) and 3 (a per-epoch increase quadratic in time while cwnd barely moves)."))
    if c:
        rows.append(_ci_row(exp, "rise_exponent_reno", "control, SACK (Reno): the same exponent b", "AIMD rises linearly (b = 1; sect. III-D, Fig. 3)",
                            c["b"], digits=3, measured=fmt_ci(ci95(c["b"]), digits=3) + f" ({sum(c['rises'])} rises in all)"))
    if g:
        rows.append(_ci_row(exp, "jain_two", f"TCP-GT: Jain's index of the two flows over {t0:.0f}-{t1:.0f} s", "the flows converge to fairness (Fig. 4)", g["jain"]))
    if c:
        rows.append(_ci_row(exp, "jain_two_reno", f"control, SACK (Reno): Jain's index over {t0:.0f}-{t1:.0f} s",
                            "AIMD converges only in its decreasing phases (sect. III-D, Fig. 3)", c["jain"]))
    if g:
        rows += _no_drop_rows(exp, "no_drop", "no_drop_reno" if c else None, g["drops"], c["drops"] if c else [],
                              "none (sect. I: TCP-GT never dropped a packet in the paper's simulations)",
                              literal_drops=lit["drops"] if lit else None)
    return Section("fig4", exp.title, _setup(exp), rows, [figs.save(fig, out, "tcpgt_fig4.png")], scenario_comment(exp))


# ---- Fig. 5 -------------------------------------------------------------------


def _rtt_ms(p) -> int:
    """The run's base RTT (ms): the bottleneck's and both access links' one-way delays, twice."""
    net = p.scenario["network"]
    d = _secs(net["bottleneck"]["delay"]) + 2 * _secs(net["access"]["delay"])
    return int(round(2000 * d))


def fig5(runs: Runs, out: Path, exp) -> Section:
    # (cc, rtt) -> seed -> time to converge after the second flow starts (s); +inf: never within the run
    conv: dict[tuple[str, int], dict[int, float]] = {}
    fig, ax = figs.new(1, 2, w=12, h=3.4)
    plotted = set()
    all_rtts = sorted({_rtt_ms(q) for q, _ in runs.pairs})
    for p, r in runs.pairs:
        cc, rtt = _cc(p), _rtt_ms(p)
        start2 = _secs(p.scenario["flows"][1]["start"])
        c = convergence_time(r, 0, 1, start2, level=0.9, window_s=5.0)
        # Never within the run: later than any run that converged (ranks last in the median), not the time it had left.
        conv.setdefault((cc, rtt), {})[p.seed] = math.inf if math.isnan(c) else c
        if cc == "tcpgt" and rtt not in plotted and len(all_rtts) <= 2:
            plotted.add(rtt)
            k = all_rtts.index(rtt)
            for f in (0, 1):
                t, g, _ = flow_series(r, f)
                ax[0][k].plot(t, g / 1e6, lw=0.8, label=f"flow {f + 1}")
            ax[0][k].set_title(f"TCP-GT, {rtt} ms (seed {p.seed})")
            ax[0][k].set_xlabel("time (s)")
            ax[0][k].set_ylabel("goodput (Mbit/s)")
            ax[0][k].legend(fontsize=8)

    def vals(key) -> list[float]:
        return [conv[key][s] for s in sorted(conv[key])]

    def shown(xs: list[float], unit: str = " s", digits: int = 3) -> str:
        never = sum(math.isinf(x) for x in xs)
        return fmt_median(median_ci(xs), digits=digits, unit=unit) + (f"; converged in {len(xs) - never} of {len(xs)} runs" if unit else "")

    def median_row(cid: str, item: str, paper: str, xs: list[float], group: str, note: str = "", unit: str = " s") -> Row:
        st = median_ci(xs)
        return Row(item, paper, shown(xs, unit), st[0], criterion(exp, cid, ci=st, group=_group(exp, group)), note)

    rows = []
    for rtt in all_rtts:
        grp = f"{rtt} ms"
        if ("tcpgt", rtt) in conv:
            rows.append(median_row("conv_time", f"TCP-GT: time to converge at {rtt} ms (trailing 5 s goodputs within 10 %)",
                                   "about 60 s (sect. IV-A)", vals(("tcpgt", rtt)), grp))
        if ("reno", rtt) in conv:
            rows.append(median_row("conv_time_reno", f"control, SACK (Reno): time to converge at {rtt} ms",
                                   "AIMD converges only in its decreasing phases, far slower (sect. III-D, Fig. 3)", vals(("reno", rtt)), grp))
    if len(all_rtts) == 2:
        lo_rtt, hi_rtt = all_rtts
        for cc, cid, item, paper in (
            ("tcpgt", "conv_same", f"TCP-GT: convergence time at {hi_rtt} ms / at {lo_rtt} ms (per seed)", "almost the same (the RTT compensation factor f, sect. IV-A)"),
            ("reno", "conv_same_reno", f"control, SACK (Reno): convergence time at {hi_rtt} ms / at {lo_rtt} ms",
             "AIMD gains one packet per RTT: about twice as long at twice the RTT"),
        ):
            a, b = conv.get((cc, hi_rtt), {}), conv.get((cc, lo_rtt), {})
            seeds = sorted(set(a) & set(b))
            # A seed where one run never converged ranks at an end (inf, or 0); one where neither did has no ratio and is left out.
            ratios = [a[s] / b[s] if math.isfinite(b[s]) and b[s] > 0 else (0.0 if math.isinf(b[s]) and math.isfinite(a[s]) else math.inf)
                      for s in seeds if not (math.isinf(a[s]) and math.isinf(b[s]))]
            left = len(seeds) - len(ratios)
            # With every seed left out there is no ratio: the median is NaN, which differs (neither run converged at either RTT).
            rows.append(median_row(cid, item, paper, ratios, "", unit="",
                                   note=f"{left} seed(s) in which neither run converged left out." if left else ""))
    for rtt in all_rtts:
        if ("tcpgt", rtt) in conv and ("reno", rtt) in conv:
            a, b = vals(("tcpgt", rtt)), vals(("reno", rtt))
            ma, mb = median_ci(a), median_ci(b)
            rows.append(Row(f"time to converge at {rtt} ms: TCP-GT against SACK (Reno)", "IIMD converges faster than AIMD (sect. III-D, Fig. 3)",
                            f"TCP-GT {shown(a)}; SACK {shown(b)}", ma[0] - mb[0] if math.isfinite(ma[0] - mb[0]) else None,
                            criterion(exp, "faster_than_aimd", a=ma, b=mb, what=("TCP-GT", "SACK"), group=_group(exp, f"{rtt} ms"))))
    return Section("fig5", exp.title, _setup(exp), rows, [figs.save(fig, out, "tcpgt_fig5.png")], scenario_comment(exp))


# ---- Fig. 6 -------------------------------------------------------------------


def fig6(runs: Runs, out: Path, exp) -> Section:
    m: dict[str, dict[str, list[float]]] = {}
    fig, ax = figs.new(3, 1, h=2.6)
    for cc, items in sorted(_by_seed(runs, _cc).items(), key=lambda kv: list(NAMES).index(kv[0])):
        d = m.setdefault(cc, {"drops": [], "jain": [], "util": [], "queue": [], "queue_h2": []})
        for seed, p, r in items:
            t0, t1 = _window(p)
            flows = r.summary["flows"]
            g = [mean_goodput(r, f["flow"], t0, t1) for f in flows]
            d["drops"].append(_drops(r))
            d["jain"].append(jain(g))
            d["util"].append(_window_mean(r, "utilization", 10.0, t1))
            buf = _buffer_pkts(r)
            d["queue"].append(_window_mean(r, "queue_pkts", t0, t1) / buf)
            d["queue_h2"].append(_window_mean(r, "queue_pkts", (t0 + t1) / 2, t1) / buf)
            if seed == items[0][0]:
                if cc == "tcpgt":
                    for f in flows:
                        t, gg, _ = flow_series(r, f["flow"])
                        ax[0][0].plot(t, gg / 1e6, lw=0.8)
                    ax[0][0].set_ylabel("goodput (Mbit/s)")
                    ax[0][0].set_title(f"TCP-GT: five flows starting 20 s apart, 500 Mbit/s, 80 ms (seed {seed})")
                s = _link(r)
                ax[1][0].plot(s["time_s"], s["utilization"], lw=0.8, label=NAMES[cc])
                ax[2][0].plot(s["time_s"], s["queue_pkts"], lw=0.8, label=NAMES[cc])
    ax[1][0].set_ylabel("utilization")
    ax[1][0].legend(fontsize=8)
    ax[2][0].set_ylabel("queue (packets)")
    ax[2][0].set_xlabel("time (s)")
    ax[2][0].legend(fontsize=8)
    rows = []
    t0, t1 = _window(runs.pairs[0][0])
    g, c, lit = m.get("tcpgt"), m.get("reno"), m.get("tcpgt_literal")
    if g:
        rows += _no_drop_rows(exp, "no_drop", "no_drop_reno" if c else None, g["drops"], c["drops"] if c else [],
                              "none (\"we observed no packet drop\", sect. IV-B)", literal_drops=lit["drops"] if lit else None)
        rows.append(_ci_row(exp, "jain5", f"TCP-GT: Jain's index of the five flows over {t0:.0f}-{t1:.0f} s", "old and new flows converge to fairness (Fig. 6(a))", g["jain"]))
    if c:
        rows.append(_ci_row(exp, "jain5_reno", f"control, SACK (Reno): Jain's index over {t0:.0f}-{t1:.0f} s",
                            "AIMD converges only in its decreasing phases (sect. III-D)", c["jain"]))
    if g:
        rows.append(_ci_row(exp, "util", f"TCP-GT: utilization over 10-{t1:.0f} s", "all flows utilize the bottleneck link efficiently (Fig. 6(b))", g["util"]))
        rows.append(_ci_row(exp, "queue_small", f"TCP-GT: mean queue over {t0:.0f}-{t1:.0f} s, as a fraction of the buffer", "low persistent queue size (sect. IV-B)",
                            g["queue"], digits=3, measured=fmt_ci(ci95(g["queue"]), digits=3) + f" (second half of the window: {fmt_ci(ci95(g['queue_h2']), digits=3)})"))
    if c:
        rows.append(_ci_row(exp, "queue_small_reno", "control, SACK (Reno): mean queue as a fraction of the buffer", "loss-based TCP fills the buffer (sect. IV-E.1)",
                            c["queue"], digits=3))
    if lit:
        rows.append(_literal(exp, "util", f"utilization over 10-{t1:.0f} s", lit["util"]))
        rows.append(_literal(exp, "queue_small", f"mean queue over {t0:.0f}-{t1:.0f} s, as a fraction of the buffer", lit["queue"], digits=3))
    return Section("fig6", exp.title, _setup(exp), rows, [figs.save(fig, out, "tcpgt_fig6.png")], scenario_comment(exp))


# ---- Fig. 7 and Table 1 ---------------------------------------------------------

TABLE1 = {10: 0.98, 20: 0.92, 30: 0.88, 40: 0.86}

TABLE1_NOTE = ("the first flow (40 ms, alone for 20 s) keeps several times the four later flows' rate, which share nearly "
               "equally (goodput-by-RTT panel). With RTTs that differ, the flows' decreases fall in different epochs and never "
               "drain the queue together: a standing queue builds, every local minimum RTT (eq. 5) takes it in, and eq. (16) "
               "sees only changes above it, so nothing moves the first flow's share down.")


def _spread_ms(p) -> int:
    """The case's RTT spread: twice the second flow's extra access delay over the first's."""
    base = _secs(p.scenario["network"]["access"]["delay"])
    a0, a1 = (_secs(f["access_delay"]) if "access_delay" in f else base for f in p.scenario["flows"][:2])
    return int(round(2000 * (a1 - a0) / 10.0)) * 10


def fig7_table1(runs: Runs, out: Path, exp) -> Section:
    # (cc, spread) -> per seed: jain, jain over the window's second half, goodputs by RTT order
    by: dict[tuple[str, int], dict[str, list]] = {}
    for p, r in sorted(runs.pairs, key=lambda pr: pr[0].seed):
        t0, t1 = _window(p)
        rtts = sorted((f["base_rtt_ms"], f["flow"]) for f in r.summary["flows"])
        g = [mean_goodput(r, f, t0, t1) for _, f in rtts]
        g2 = [mean_goodput(r, f, (t0 + t1) / 2, t1) for _, f in rtts]
        d = by.setdefault((_cc(p), _spread_ms(p)), {"jain": [], "jain_h2": [], "g": [], "util": [], "queue": [], "window": (t0, t1)})
        d["jain"].append(jain(g))
        d["jain_h2"].append(jain(g2))
        d["g"].append(g)
        d["util"].append(_window_mean(r, "utilization", t0, t1))
        d["queue"].append(_window_mean(r, "queue_pkts", t0, t1) / _buffer_pkts(r))
    rows = []
    # Fig. 7(b) and (c), at the figure's RTTs (40-80 ms, a spread of 10 ms).
    g10, c10, lit10 = by.get(("tcpgt", 10)), by.get(("reno", 10)), by.get(("tcpgt_literal", 10))
    if g10:
        w0, w1 = g10["window"]
        rows.append(_ci_row(exp, "util", f"TCP-GT: utilization over {w0:.0f}-{w1:.0f} s, RTTs 40-80 ms", "high utilization (Fig. 7(b))", g10["util"]))
        rows.append(_ci_row(exp, "queue_small", f"TCP-GT: mean queue over {w0:.0f}-{w1:.0f} s, RTTs 40-80 ms, as a fraction of the buffer",
                            "small queue (Fig. 7(c))", g10["queue"], digits=3,
                            note="if differs: with RTTs that differ a standing queue builds (see the note of the Table 1 rows): "
                                 "the local minimum RTT of eq. (5) takes it in, and eq. (16) sees only changes above it."))
    if c10:
        rows.append(_ci_row(exp, "queue_small_reno", "control, SACK (Reno): mean queue as a fraction of the buffer, RTTs 40-80 ms",
                            "loss-based TCP fills the buffer (sect. IV-E.1)", c10["queue"], digits=3))
    if lit10:
        rows.append(_literal(exp, "util", "utilization, RTTs 40-80 ms", lit10["util"]))
        rows.append(_literal(exp, "queue_small", "mean queue, RTTs 40-80 ms, as a fraction of the buffer", lit10["queue"], digits=3))
    spreads = sorted(s for c, s in by if c == "tcpgt")
    for spread in spreads:
        d = by[("tcpgt", spread)]
        if spread in TABLE1:
            w0, w1 = d["window"]
            rows.append(_ci_row(exp, f"jain_spread{spread}", f"Table 1: Jain's index of the five TCP-GT flows, RTT spread {spread} ms ({w0:.0f}-{w1:.0f} s)",
                                f"{TABLE1[spread]:.2f}", d["jain"], digits=3,
                                measured=fmt_ci(ci95(d["jain"]), digits=3) + f" (second half of the window: {fmt_ci(ci95(d['jain_h2']), digits=3)})",
                                note=TABLE1_NOTE))
    for spread in spreads:
        d = by[("tcpgt", spread)]
        longest, shortest = [g[-1] for g in d["g"]], [g[0] for g in d["g"]]
        item = f"goodput of the {40 + 4 * spread} ms flow against the 40 ms flow (RTT spread {spread} ms), Mbit/s"
        paper = "a longer RTT flow consumes more bandwidth than a shorter RTT flow (sect. IV-C)"
        # Judged at every spread, each with its Reno control (Fig. 7 plots 10 ms).
        rows.append(_sep_row(exp, "longer_rtt_more", "TCP-GT: " + item, paper, [x / 1e6 for x in longest], [x / 1e6 for x in shortest],
                             (f"{40 + 4 * spread} ms", "40 ms"), group=f"spread {spread} ms", digits=3,
                             note="the 40 ms flow is also the first flow; see the Table 1 rows."))
        if ("reno", spread) in by:
            dr = by[("reno", spread)]
            rows.append(_sep_row(exp, "longer_rtt_more_reno", "control, SACK (Reno): " + item,
                                 "\"the traditional RTT unfairness that a flow with a shorter RTT consumes more bandwidth\" (sect. IV-C)",
                                 [g[-1] / 1e6 for g in dr["g"]], [g[0] / 1e6 for g in dr["g"]],
                                 (f"{40 + 4 * spread} ms", "40 ms"), group=f"spread {spread} ms", digits=3))
    fig, ax = figs.new(1, 2, w=12, h=3.4)
    figs.bars(ax[0][0], [f"{s} ms" for s in spreads], {"paper": [TABLE1.get(s, float("nan")) for s in spreads],
                                                        "longfat (mean)": [_mean(by[("tcpgt", s)]["jain"]) for s in spreads]},
              "Jain's index", "Table 1: fairness of five flows vs RTT spread")
    ax[0][0].set_ylim(0.5, 1.02)
    for (cc, s) in sorted(by):
        g = np.mean(by[(cc, s)]["g"], axis=0) / 1e6
        ax[0][1].plot([40 + k * s for k in range(len(g))], g, "o-" if cc == "tcpgt" else "s--", label=f"{NAMES[cc]}, spread {s} ms")
    ax[0][1].set_xlabel("flow RTT (ms)")
    ax[0][1].set_ylabel("goodput (Mbit/s), mean over seeds")
    ax[0][1].set_title("goodput by RTT")
    ax[0][1].legend(fontsize=8)
    return Section("fig7_table1", exp.title, _setup(exp), rows, [figs.save(fig, out, "tcpgt_fig7_table1.png")], scenario_comment(exp))


# ---- Fig. 8 -------------------------------------------------------------------


def fig8(runs: Runs, out: Path, exp) -> Section:
    m: dict[str, dict[str, list[float]]] = {}
    for cc, items in _by_seed(runs, _cc).items():
        d = m.setdefault(cc, {"growth": [], "qburst": [], "u_in": [], "u_after": [], "drops": []})
        for _, p, r in items:
            before = _window_mean(r, "queue_pkts", 30, 50)
            during = _window_mean(r, "queue_pkts", 70, 100)
            d["growth"].append(during / before if before > 0 else float("inf"))
            d["qburst"].append(during / _buffer_pkts(r))
            d["u_in"].append(_window_mean(r, "utilization", 60, 100))
            d["u_after"].append(_window_mean(r, "utilization", 110, 150))
            d["drops"].append(_drops(r))
    rows = []
    g, c, lit = m.get("tcpgt"), m.get("reno"), m.get("tcpgt_literal")
    if g:
        rows.append(_ci_row(exp, "queue_growth", "TCP-GT: mean queue over 70-100 s / over 30-50 s (10 flows, then 110)",
                            "the bottleneck queue increases less than 10 times (sect. IV-D)", g["growth"], digits=3,
                            note="below 1 the queue shrank: with ten flows a standing queue builds up over the first 50 s (see the figure): "
                                 "each flow's local minimum RTT (eq. 5) takes in the queue that the flows' decreases never drain, so eq. (16) "
                                 "stops seeing it; the 100 new flows' decreases drain it, and it stays lower while they run."))
    if c:
        rows.append(_ci_row(exp, "queue_growth_reno", "control, SACK (Reno): the same ratio", "a loss-based flow fills the buffer with 10 or 110 flows",
                            c["growth"], digits=3))
    if g:
        rows.append(_ci_row(exp, "queue_small_burst", "TCP-GT: mean queue over 70-100 s (110 flows), as a fraction of the buffer",
                            "TCP-GT effectively prevents the bottleneck queue from building up (sect. IV-D)", g["qburst"], digits=3))
    if c:
        rows.append(_ci_row(exp, "queue_small_burst_reno", "control, SACK (Reno): the same fraction", "a loss-based flow fills the buffer",
                            c["qburst"], digits=3))
    if g:
        rows.append(_ci_row(exp, "util_burst", "TCP-GT: utilization over 60-100 s (110 flows)", "TCP-GT adapts quickly to a sudden increase (Fig. 8(b))", g["u_in"]))
        rows.append(_ci_row(exp, "util_after", "TCP-GT: utilization over 110-150 s (back to 10 flows)", "and quickly to a sudden decrease (Fig. 8(b))", g["u_after"]))
        rows += _no_drop_rows(exp, "no_drop", "no_drop_reno" if c else None, g["drops"], c["drops"] if c else [],
                              "none (sect. I: no drop in the paper's simulations)", literal_drops=lit["drops"] if lit else None)
    if lit:
        rows.append(_literal(exp, "queue_growth", "mean queue over 70-100 s / over 30-50 s", lit["growth"], digits=3))
        rows.append(_literal(exp, "queue_small_burst", "mean queue over 70-100 s (110 flows), as a fraction of the buffer", lit["qburst"], digits=3))
        rows.append(_literal(exp, "util_burst", "utilization over 60-100 s (110 flows)", lit["u_in"]))
        rows.append(_literal(exp, "util_after", "utilization over 110-150 s (back to 10 flows)", lit["u_after"]))
    p, r = sorted(((p, r) for p, r in runs.pairs if _cc(p) == "tcpgt"), key=lambda pr: pr[0].seed)[0] if g else runs.pairs[0]
    fig, ax = figs.new(3, 1, h=2.6)
    fl = r.summary["flows"]
    for name, color in (("long", "C0"), ("burst", "C1")):
        ids = [f["flow"] for f in fl if f["name"].startswith(name)]
        t, _, _ = flow_series(r, ids[0])
        tot = sum(np.interp(t, *flow_series(r, i)[:2]) for i in ids)
        ax[0][0].plot(t, tot / len(ids) / 1e6, color=color, lw=0.8, label=f"{name}: mean per flow ({len(ids)} flows)")
    ax[0][0].set_ylabel("goodput (Mbit/s)")
    ax[0][0].legend(fontsize=8)
    ax[0][0].set_title(f"Fig. 8: {NAMES[_cc(p)]}, 10 flows, 100 more from 50 s to 100 s, 500 Mbit/s, 40 ms (seed {p.seed})")
    for cc, items in _by_seed(runs, _cc).items():
        s = _link(items[0][2])
        ax[1][0].plot(s["time_s"], s["utilization"], lw=0.8, label=NAMES[cc])
        ax[2][0].plot(s["time_s"], s["queue_pkts"], lw=0.8, label=NAMES[cc])
    ax[1][0].set_ylabel("utilization")
    ax[1][0].legend(fontsize=8)
    ax[2][0].set_ylabel("queue (packets)")
    ax[2][0].set_xlabel("time (s)")
    return Section("fig8", exp.title, _setup(exp), rows, [figs.save(fig, out, "tcpgt_fig8.png")], scenario_comment(exp))


# ---- Figs. 9-12 ---------------------------------------------------------------


def _sweep_table(runs: Runs, xof) -> dict[tuple[str, float], dict[str, list[float]]]:
    """(cc, x) -> per seed (in seed order): utilization and mean queue
    (packets) over the window and over its second half, drops over the run."""
    acc: dict[tuple[str, float], dict[str, list[float]]] = {}
    for p, r in sorted(runs.pairs, key=lambda pr: pr[0].seed):
        t0, t1 = _window(p)
        mid = (t0 + t1) / 2
        d = acc.setdefault((_cc(p), xof(p)), {"util": [], "queue": [], "drops": [], "util_h2": [], "queue_h2": []})
        d["util"].append(_window_mean(r, "utilization", t0, t1))
        d["util_h2"].append(_window_mean(r, "utilization", mid, t1))
        d["queue"].append(_window_mean(r, "queue_pkts", t0, t1))
        d["queue_h2"].append(_window_mean(r, "queue_pkts", mid, t1))
        d["drops"].append(_drops(r))
    return acc


def _sweep_plot(table, xs, out: Path, name: str, title: str, xlabel: str, logx: bool = True) -> str:
    fig, ax = figs.new(1, 3, w=15, h=3.4)
    ccs = [c for c in NAMES if any((c, x) in table for x in xs)]
    for j, (m, label) in enumerate((("util", "utilization"), ("queue", "mean queue (packets)"), ("drops", "drops (whole run)"))):
        for c in ccs:
            pts = [(x, ci95(table[(c, x)][m])) for x in xs if (c, x) in table]
            ax[0][j].errorbar([x for x, _ in pts], [v[0] for _, v in pts],
                              yerr=[[v[0] - v[1] for _, v in pts], [v[2] - v[0] for _, v in pts]], fmt="o-", label=NAMES[c], lw=1, capsize=3)
        ax[0][j].set_xlabel(xlabel)
        ax[0][j].set_ylabel(label + " (mean, 98.75 % CI)")
        if logx:
            ax[0][j].set_xscale("log")
        if m == "drops":
            ax[0][j].set_yscale("symlog", linthresh=1)
            ax[0][j].set_ylim(bottom=0)
    ax[0][0].set_title(title)
    ax[0][0].legend(fontsize=8)
    return figs.save(fig, out, name)


UTIL_NOTE = ("with one BDP of buffer the loss-based protocols never let the queue empty and keep the link at 100 %; "
             "TCP-GT's decrease (eq. 17) removes the whole excess it measured, and flows that measure the same queue in the "
             "same epoch take it together, which briefly empties the queue (as in Fig. 6's utilization panel).")


def _vs_others(exp, cid: str, table, x: float, metric: str, claim: str, item: str, paper: str, *, group: str,
               digits: int = 4, note: str = "", me: str = "tcpgt") -> Row | None:
    """TCP-GT (``me``) against every competitor at ``x``, as one row: the
    claim ("smaller than all the others") holds only if it holds against
    each, so the row shows the competitor whose comparison is weakest (a
    difference before a "not separable" before an agreement; among equals,
    the Welch interval nearest the wrong side), and lists the other means."""
    if (me, x) not in table:
        return None
    others = [c for c in COMPETITORS if (c, x) in table]
    if not others:
        return None
    rank = {DIFFERS: 0, NOT_SEPARABLE: 1, AGREES: 2}

    def weakness(c: str) -> tuple:
        check = criterion(exp, cid, a=ci95(table[(me, x)][metric]), b=ci95(table[(c, x)][metric]), what=(NAMES[me], NAMES[c]))
        v = evaluate(check, 0.0)
        lo, hi = check["diff"]
        margin = (-hi if claim[0] == "<" else lo) if lo is not None and hi is not None else -math.inf
        return (rank.get(v, 0), margin)

    c = min(others, key=weakness)
    rest = ", ".join(f"{NAMES[o]} {ci95(table[(o, x)][metric])[0]:.{digits}g}" for o in others if o != c)
    return _sep_row(exp, cid, item, paper, table[(me, x)][metric], table[(c, x)][metric], (NAMES[me], NAMES[c]),
                    group=group, digits=digits, note=note, extra=f" (the weakest comparison; other means: {rest})" if rest else "")


def _steady_row(table, xs, fmtx) -> Row:
    """Not a check: each protocol's metrics over the window's second half
    against the whole window (the run is in a steady state if the two agree:
    either mean inside the other's interval, or the two within 1 %, for the
    zero-width intervals of a link held at 100 %)."""
    parts, unsteady, total = [], [], 0
    for c in NAMES:
        for x in xs:
            if (c, x) not in table:
                continue
            d = table[(c, x)]
            for m in ("util", "queue"):
                w, h = ci95(d[m]), ci95(d[m + "_h2"])
                total += 1
                ok = math.isfinite(w[0]) and math.isfinite(h[0]) and (w[1] <= h[0] <= w[2] or h[1] <= w[0] <= h[2] or abs(w[0] - h[0]) <= 0.01 * abs(w[0]))
                if not ok:
                    unsteady.append(f"{NAMES[c]} {fmtx(x)} {m}: {w[0]:.4g} vs {h[0]:.4g}")
                if c == "tcpgt":
                    parts.append(f"{fmtx(x)} {m}: {w[0]:.4g} vs {h[0]:.4g}")
    return Row("steady state: mean over the window's second half against the whole window",
               "(not a claim: the check that the runs are long enough)",
               f"{total - len(unsteady)}/{total} protocol-point metrics agree (each mean inside the other's interval, or within 1 %)"
               + (f" (not: {'; '.join(unsteady)})" if unsteady else "") + "; TCP-GT whole vs second half: " + "; ".join(parts),
               None, NONE)


def _sweep_common(exp, table, xs, fmtx, *, queue_cid: str, paper_queue: str, drops_upto: float | None = None,
                  no_drop_cid: str = "no_drop", fewer_cid: str | None = None) -> list[Row]:
    rows = []
    for x in xs:
        for me, suffix in (("tcpgt", ""), ("tcpgt_literal", "_literal")):
            r = _vs_others(exp, queue_cid + suffix, table, x, "queue", "<", f"mean queue (packets) at {fmtx(x)}: {NAMES[me]} against the others",
                           paper_queue, group=fmtx(x), digits=4, me=me)
            if r:
                rows.append(r)
    for x in xs:
        if ("tcpgt", x) not in table or (drops_upto is not None and x > drops_upto):
            continue
        ctl = no_drop_cid + "_reno"
        rows += _no_drop_rows(exp, no_drop_cid, ctl, table[("tcpgt", x)]["drops"], table.get(("reno", x), {}).get("drops", []),
                              "TCP-GT never drops any packets", group=fmtx(x), where=f" at {fmtx(x)}",
                              literal_drops=table.get(("tcpgt_literal", x), {}).get("drops"))
    if fewer_cid:
        for x in xs:
            for me, suffix in (("tcpgt", ""), ("tcpgt_literal", "_literal")):
                r = _vs_others(exp, fewer_cid + suffix, table, x, "drops", "<", f"packets dropped over a run at {fmtx(x)}: {NAMES[me]} against the others",
                               "TCP-GT never drops, \"whereas other TCP implementations drop thousands of packets\"", group=fmtx(x), digits=6, me=me)
                if r:
                    rows.append(r)
    return rows


def fig9_capacity(runs: Runs, out: Path, exp) -> Section:
    xof = lambda p: _rate_bps(p.scenario["network"]["bottleneck"]["rate"]) / 1e6  # noqa: E731
    fmtx = lambda x: f"{x:g} Mbit/s"  # noqa: E731
    table = _sweep_table(runs, xof)
    xs = sorted({x for _, x in table})
    rows = []
    for c in NAMES:
        for x in xs:
            if (c, x) in table:
                cid = {"tcpgt": "util_all", "tcpgt_literal": "util_all_literal"}.get(c, "util_all_others")
                rows.append(_ci_row(exp, cid, f"{NAMES[c]}: utilization at {fmtx(x)}", "higher than 90 % in all participants (Fig. 9(a))",
                                    table[(c, x)]["util"], group=f"{NAMES[c]} {fmtx(x)}", note=UTIL_NOTE if c == "tcpgt" else ""))
    rows += _sweep_common(exp, table, xs, fmtx, queue_cid="queue_smaller",
                          paper_queue="TCP-GT's bottleneck queue size is significantly smaller than others (Fig. 9(b))", fewer_cid="drops_fewer")
    rows.append(_steady_row(table, xs, fmtx))
    png = _sweep_plot(table, xs, out, "tcpgt_fig9.png", "Fig. 9: 50 flows, 80 ms", "capacity (Mbit/s)")
    return Section("fig9_capacity", exp.title, _setup(exp), rows, [png], scenario_comment(exp))


def fig10_rtt(runs: Runs, out: Path, exp) -> Section:
    table = _sweep_table(runs, lambda p: float(_rtt_ms(p)))
    fmtx = lambda x: f"{x:g} ms"  # noqa: E731
    xs = sorted({x for _, x in table})
    rows = []
    for x in xs:
        for me, suffix in (("tcpgt", ""), ("tcpgt_literal", "_literal")):
            r = _vs_others(exp, "util_higher" + suffix, table, x, "util", ">", f"utilization at {fmtx(x)}: {NAMES[me]} against the others",
                           "TCP-GT achieves a higher utilization than other TCP implementations (sect. IV-E.2)", group=fmtx(x),
                           note=UTIL_NOTE if me == "tcpgt" else "", me=me)
            if r:
                rows.append(r)
    if len(xs) >= 2:
        for c in NAMES:
            if (c, xs[0]) in table and (c, xs[-1]) in table:
                rows.append(_sep_row(exp, "util_falls_literal" if c == "tcpgt_literal" else "util_falls", f"{NAMES[c]}: utilization at {fmtx(xs[0])} against at {fmtx(xs[-1])}",
                                     "as the RTT increases, the utilization decreases in all TCP implementations including TCP-GT",
                                     table[(c, xs[0])]["util"], table[(c, xs[-1])]["util"], (fmtx(xs[0]), fmtx(xs[-1])), group=NAMES[c]))
    rows += _sweep_common(exp, table, xs, fmtx, queue_cid="queue_smaller",
                          paper_queue="TCP-GT's bottleneck queue size remains at a low level (Fig. 10(b))")
    rows.append(_steady_row(table, xs, fmtx))
    png = _sweep_plot(table, xs, out, "tcpgt_fig10.png", "Fig. 10: 50 flows, 500 Mbit/s", "RTT (ms)")
    return Section("fig10_rtt", exp.title, _setup(exp), rows, [png], scenario_comment(exp))


def fig11_flows(runs: Runs, out: Path, exp) -> Section:
    table = _sweep_table(runs, lambda p: float(p.scenario["flows"][0].get("count", 1)))
    fmtx = lambda x: f"{x:g} flows"  # noqa: E731
    xs = sorted({x for _, x in table})
    rows = []
    for me, suffix in (("tcpgt", ""), ("tcpgt_literal", "_literal")):
        r = _vs_others(exp, "util_best_few" + suffix, table, xs[0], "util", ">", f"utilization with {fmtx(xs[0])}: {NAMES[me]} against the others",
                       "with small number of flows, TCP-GT shows best utilization (Fig. 11)", group=fmtx(xs[0]),
                       note=UTIL_NOTE if me == "tcpgt" else "", me=me)
        if r:
            rows.append(r)
    for x in xs:
        if ("tcpgt", x) in table:
            rows.append(_ci_row(exp, "util_high", f"TCP-GT: utilization with {fmtx(x)}", "overall, TCP-GT exhibits high utilization (Fig. 11(a))",
                                table[("tcpgt", x)]["util"], group=fmtx(x), note=UTIL_NOTE))
        if ("tcpgt_literal", x) in table:
            rows.append(_literal(exp, "util_high", f"utilization with {fmtx(x)}", table[("tcpgt_literal", x)]["util"], group=fmtx(x)))
    rows += _sweep_common(exp, table, xs, fmtx, queue_cid="queue_smaller", paper_queue="small queue size (Fig. 11(b))")
    rows.append(_steady_row(table, xs, fmtx))
    png = _sweep_plot(table, xs, out, "tcpgt_fig11.png", "Fig. 11: 300 Mbit/s, 80 ms", "number of flows")
    return Section("fig11_flows", exp.title, _setup(exp), rows, [png], scenario_comment(exp))


def fig12_web(runs: Runs, out: Path, exp) -> Section:
    table = _sweep_table(runs, lambda p: float(p.scenario["web"][0]["sessions"]))
    fmtx = lambda x: f"{x:g} sessions"  # noqa: E731
    xs = sorted({x for _, x in table})
    rows = []
    for c in NAMES:
        for x in xs:
            if (c, x) in table:
                cid = {"tcpgt": "util_near_full", "tcpgt_literal": "util_near_full_literal"}.get(c, "util_near_full_others")
                rows.append(_ci_row(exp, cid, f"{NAMES[c]}: utilization with {fmtx(x)}",
                                    "near 100 % for TCP-GT and all other participants (Fig. 12(a))", table[(c, x)]["util"],
                                    group=f"{NAMES[c]} {fmtx(x)}", note=UTIL_NOTE if c == "tcpgt" else ""))
    rows += _sweep_common(exp, table, xs, fmtx, queue_cid="queue_lowest",
                          paper_queue="its queue size is at lowest level among all competitors (Fig. 12(b))",
                          drops_upto=600, no_drop_cid="no_drop_upto600", fewer_cid="drops_fewer")
    below = [x for x in xs if x <= 600]
    above = [x for x in xs if x > 600]
    for me, suffix in (("tcpgt", ""), ("tcpgt_literal", "_literal")):
        if below and above and (me, below[-1]) in table and (me, above[-1]) in table:
            hi_drops = table[(me, above[-1])]["drops"]
            rows.append(_sep_row(exp, "starts_dropping" + suffix, f"{NAMES[me]}: packets dropped with {fmtx(above[-1])} against with {fmtx(below[-1])}",
                                 "as the number of sessions exceeds 600, TCP-GT starts to drop packets (Fig. 12(c))",
                                 hi_drops, table[(me, below[-1])]["drops"], (fmtx(above[-1]), fmtx(below[-1])), digits=6,
                                 note=(f"no drop with either load in any of the {len(hi_drops)} seeds: the drops the paper reports beyond "
                                       "600 sessions do not happen here, which contradicts the claim" if not any(hi_drops) else "")))
    rows.append(_steady_row(table, xs, fmtx))
    png = _sweep_plot(table, xs, out, "tcpgt_fig12.png", "Fig. 12: 50 flows + web sessions, 500 Mbit/s, 40 ms", "web sessions")
    return Section("fig12_web", exp.title, _setup(exp), rows, [png], scenario_comment(exp))


# ---- Sect. IV-F -----------------------------------------------------------------


def sect4f_limits(runs: Runs, out: Path, exp) -> Section:
    by: dict[tuple[bool, float, int], list[int]] = {}
    for p, r in sorted(runs.pairs, key=lambda pr: pr[0].seed):
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
        group = "unbounded" if literal else "capped"
        for k in mine:
            if k == ref or not (k[1] < 50 or k[2] < 20):
                continue
            low_rate = k[1] < 50
            note = ""
            if not literal and low_rate:
                note = ("the cap bounds the per-packet feedback of eq. (15), which sect. IV-F names as the cause; "
                        "the unbounded rows show the instability the paper describes.")
            rows.append(_sep_row(exp, "unstable_low_rate" if low_rate else "unstable_short_rtt",
                                 f"{variant}: packets dropped over a run at {k[1]:g} Mbit/s x {k[2]} ms against at {ref[1]:g} Mbit/s x {ref[2]} ms",
                                 f"unstable {'below 50 Mbit/s' if low_rate else 'below 20 ms'}: TCP-GT overshoots and drops many packets (sect. IV-F)",
                                 by[k], by[ref], (f"{k[1]:g} Mbit/s x {k[2]} ms", f"{ref[1]:g} Mbit/s x {ref[2]} ms"), group=group, note=note, digits=6,
                                 extra=f" (per seed: {', '.join(map(str, by[k]))} against {', '.join(map(str, by[ref]))})"))
    fig, ax = figs.new(1, 1, w=11)
    for j, k in enumerate(keys):
        ax[0][0].bar(j, _mean(by[k]), yerr=mean_sd(by[k])[1], color="C1" if k[0] else "C0")
    ax[0][0].set_xticks(range(len(keys)))
    ax[0][0].set_xticklabels([f"{k[1]:g} Mbit/s\n{k[2]} ms\n{'unbounded' if k[0] else 'capped'}" for k in keys], fontsize=8)
    ax[0][0].set_ylabel("packets dropped (mean over seeds)")
    ax[0][0].set_yscale("symlog", linthresh=1)
    ax[0][0].set_title("Sect. IV-F: ten TCP-GT flows at the limits (blue: longfat's default, orange: eq. (15) unbounded)")
    return Section("sect4f_limits", exp.title, _setup(exp), rows, [figs.save(fig, out, "tcpgt_sect4f.png")], scenario_comment(exp))


def sect4f_friendly(runs: Runs, out: Path, exp) -> Section:
    by: dict[str, dict[str, list[float]]] = {}
    for p, r in sorted(runs.pairs, key=lambda pr: pr[0].seed):
        t0, t1 = _window(p)
        a, b = mean_goodput(r, 0, t0, t1), mean_goodput(r, 1, t0, t1)
        d = by.setdefault(_cc(p), {"share": [], "a": [], "b": []})
        d["share"].append(a / (a + b) if a + b > 0 else float("nan"))
        d["a"].append(a / 1e6)
        d["b"].append(b / 1e6)
    t0, t1 = _window(runs.pairs[0][0])
    rows = []

    def goodputs(d) -> str:
        return f"; goodputs {fmt_ci(ci95(d['a']), digits=3)} and SACK {fmt_ci(ci95(d['b']), digits=3)} Mbit/s"

    paper = "TCP-GT is not compatible with packet loss-based protocols: it keeps decreasing its window (sect. IV-F)"
    if "tcpgt" in by:
        d = by["tcpgt"]
        rows.append(_ci_row(exp, "unfriendly", f"TCP-GT beside a SACK flow: TCP-GT's share of their goodput over {t0:.0f}-{t1:.0f} s", paper,
                            d["share"], digits=3, measured=fmt_ci(ci95(d["share"]), digits=3) + goodputs(d)))
    if "highspeed" in by:
        d = by["highspeed"]
        rows.append(_ci_row(exp, "unfriendly_hstcp", "control, HSTCP beside a SACK flow: HSTCP's share of their goodput",
                            "a loss-based sender more aggressive than SACK takes more than half", d["share"], digits=3,
                            measured=fmt_ci(ci95(d["share"]), digits=3) + goodputs(d)))
    if "tcpgt_literal" in by:
        d = by["tcpgt_literal"]
        rows.append(_literal(exp, "unfriendly", "share of the goodput beside a SACK flow", d["share"], digits=3,
                             measured=fmt_ci(ci95(d["share"]), digits=3) + goodputs(d)))
    fig, ax = figs.new(1, 1)
    for cc, items in sorted(_by_seed(runs, _cc).items(), key=lambda kv: list(NAMES).index(kv[0])):
        seed, p, r = items[0]
        for f, ls in ((0, "-"), (1, ":")):
            t, g, _ = flow_series(r, f)
            ax[0][0].plot(t, g / 1e6, ls, lw=0.8, label=f"{NAMES[cc]} run: {NAMES[cc] if f == 0 else 'SACK'}")
    ax[0][0].set_xlabel("time (s)")
    ax[0][0].set_ylabel("goodput (Mbit/s)")
    ax[0][0].set_title("Sect. IV-F: one flow beside a SACK flow, 100 Mbit/s, 80 ms (first seed)")
    ax[0][0].legend(fontsize=7)
    return Section("sect4f_friendly", exp.title, _setup(exp), rows, [figs.save(fig, out, "tcpgt_sect4f_friendly.png")], scenario_comment(exp))


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
    "sect4f_friendly": sect4f_friendly,
}

__all__ = ["ANALYSES", "AUTHORS", "CITATION", "NOTES", "TITLE", "NONE"]
