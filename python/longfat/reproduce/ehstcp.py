"""eHSTCP (ehstcp.md) section 4: utilization, fairness and stability
(Table 2, section 4.1), RTT fairness (Table 3, section 4.2), TCP
friendliness (section 4.3) and the dynamic scenario (Tables 4 and 5,
section 4.4). The paper's tables are not in its text, only its claims;
every compared row tests one claim, with the criterion stated beforehand in
the scenario file's [reproduce.criteria] (section cited beside it).

Every point runs on 5 seeds first (start times, RTTs, web arrivals and
sizes drawn from the seed) and, while a claim it decides is not separable,
on to 10, 20 and at most 30 (sequential seeds: reproduce/sequential.py);
rows give the mean over seeds and its t-interval at 98.75 % (95 % over the
looks), and a comparison between two protocols is judged on Welch's
interval of the difference at the same level (criteria.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from longfat.reproduce import figs
from longfat.reproduce.core import NONE, Row, Section, scenario_comment, setup_text
from longfat.reproduce.coverage import Cover
from longfat.reproduce.criteria import criterion
from longfat.reproduce.measure import Interval, Runs, bottleneck, ci95, cov, flow_series, fmt_ci, jain, link_series
from longfat.units import rate_bps as _rate_bps
from longfat.units import seconds as _secs

TITLE = "TCP - Congestion Control Algorithm for Enhancing High-Speed Networks"
AUTHORS = "V. Sasirekha, C. Chandrasekar"
CITATION = (
    "Sasirekha, Chandrasekar (ehstcp.md), section 4: simulations (the paper names no simulator) of eHSTCP against HSTCP, STCP and BIC "
    "at 2.5 Gbit/s (Tables 2, 4, 5) and 1 Gbit/s (Table 3), RTTs around 40 ms, background traffic in both directions"
)
NOTES = (
    "The paper's Tables 2-5 give numbers that are not in its text; it states claims about them (which protocol "
    "has the lowest loss rate, the best stability, the best RTT fairness, and so on). Each compared row turns one "
    "claim into a test stated in the scenario file before the runs. Every point runs on 5 seeds (randomized start "
    "times, per-flow RTTs, web arrivals and sizes) and, while a claim it decides is not separable, on to 10, 20 and at most 30 "
    "seeds (sequential seeds, fixed in the scenario file before the runs; each row's seeds are in its \"seeds\" column); a row gives the mean over seeds and its t-interval at 98.75 % "
    "(95 % shared by the up to four looks at the seeds), "
    "\"m [lo, hi] (n=k)\" (the low end cut at 0, below which no quantity here can go). A comparison between two protocols (lower loss, fairer, friendlier) is "
    "judged on Welch's interval of the difference, at the same level (on logarithms for ratios); an exact tie contradicts a strict claim; an interval across zero is \"not separable\". Where a row claims a property of "
    "eHSTCP that another protocol is said to lack (Jain's index about 1; the friendliest), the same check is run "
    "on that protocol (STCP) as a negative control, and the claim counts only if the control's verdict differs. "
    "The paper says only that these are simulations; it names no simulator. Standard TCP here is Reno under "
    "longfat's ns2 transport profile (ns-2.35's TCP/Sack1), our choice for a paper of its time and kind. The paper's web traffic is of "
    "unstated size; it is sized here to offer about 10 % of the bottleneck in each direction."
)

NAMES = {"highspeed": "HSTCP", "scalable": "STCP", "bic": "BIC", "ehstcp": "eHSTCP"}
CCS = ["highspeed", "scalable", "bic", "ehstcp"]

#: What of the paper this report reproduces (coverage.py): the paper names
#: its Tables 2-5 in the text (Table 1 is not in it); section 4.3's
#: friendliness has no table of its own and is judged in Table 2's section.
COVERAGE = {
    "Fig. 1": Cover("n-a", why="the topology, drawn; its settings are in every scenario file"),
    "Table 2": Cover("full", ("table2_friendliness",)),
    "Table 3": Cover("full", ("table3_rtt_fairness",)),
    "Table 4": Cover("full", ("tables4_5_dynamic",)),
    "Table 5": Cover("full", ("tables4_5_dynamic",)),
}

OTHERS = ["highspeed", "scalable", "bic"]


# ---- access to runs -----------------------------------------------------------


def _cc(p) -> str:
    return p.scenario["flows"][0]["cc"]


def _rate(p) -> float:
    return _rate_bps(p.scenario["network"]["bottleneck"]["rate"])


def _rate_label(bps: float) -> str:
    return f"{bps / 1e9:g} Gbit/s" if bps >= 1e9 else f"{bps / 1e6:g} Mbit/s"


def _window(p) -> tuple[float, float]:
    return _secs(p.scenario["run"]["measure_from"]), _secs(p.scenario["run"]["duration"])


def _group(r, base: str) -> list[dict]:
    return [f for f in r.summary["flows"] if f["name"] == base or f["name"].startswith(base + ".")]


def _goodput(r, base: str, t0: float, t1: float | None = None) -> float:
    """Summed goodput (bit/s) of the flows of entry ``base`` over samples
    ending in (t0, t1]; the whole window when t1 is None (the summary)."""
    flows = _group(r, base)
    if t1 is None:
        return float(sum(f["goodput_bps"] for f in flows))
    tot = 0.0
    for f in flows:
        t, g, _ = flow_series(r, f["flow"])
        m = (t > t0) & (t <= t1)
        tot += float(np.mean(g[m])) if m.any() else float("nan")
    return tot


def _util_halves(r, t0: float, t1: float) -> tuple[float, float]:
    """The bottleneck's mean utilization over the window's samples, and over
    its second half (steady state)."""
    t, u, _ = link_series(r)
    tm = (t0 + t1) / 2
    whole, second = (t > t0) & (t <= t1), (t > tm) & (t <= t1)
    return (float(np.mean(u[whole])) if whole.any() else float("nan"),
            float(np.mean(u[second])) if second.any() else float("nan"))


def _stability(r, flows: list[dict], t0: float) -> float:
    """Section 4.1's stability: the sample standard deviation of a flow's
    throughput (1 s samples in the window) over its mean, averaged over the
    high-speed flows."""
    vals = []
    for f in flows:
        t, g, _ = flow_series(r, f["flow"])
        vals.append(cov(g[t > t0]))
    return float(np.mean(vals)) if vals else float("nan")


def _ci(xs) -> tuple:
    """ci95 with the low end cut at 0: every quantity here (ratios, shares,
    rates, indices) is non-negative, and a t-interval of a skewed one (a
    throughput ratio) can reach below 0. Cutting at 0 changes no verdict:
    a separation needs one interval wholly above the other, which a bound
    raised to 0 cannot create."""
    xs = list(xs)
    m, lo, hi, n = ci95(xs)
    return Interval((m, max(lo, 0.0) if lo == lo else lo, hi, n), xs)


def _fmt(xs, digits: int = 4, scale: float = 1.0, unit: str = "") -> str:
    return fmt_ci(_ci(xs), scale, digits=digits, unit=unit)


def _by_seed(d: dict, cc: str) -> dict[int, float]:
    return d.get(cc, {})


def _paired_ratio(a: dict[int, float], b: dict[int, float]) -> list[float]:
    """Per-seed ratios a / b (the same seed: the same background draws)."""
    return [a[s] / b[s] if b[s] != 0 else float("inf") for s in sorted(a) if s in b]


def _sep_row(exp, cid: str, item: str, paper: str, a: list[float], b: list[float], what: tuple[str, str],
             group: str, digits: int = 4, note: str = "", scale: float = 1.0) -> Row:
    sa, sb = _ci(a), _ci(b)
    shown = f"{what[0]} {fmt_ci(sa, scale, digits=digits)}; {what[1]} {fmt_ci(sb, scale, digits=digits)}"
    return Row(item, paper, shown, sa[0] - sb[0], criterion(exp, cid, a=sa, b=sb, what=what, group=group), note)


def _ci_row(exp, cid: str, item: str, paper: str, xs: list[float], group: str, digits: int = 4, note: str = "",
            extra: str = "") -> Row:
    st = _ci(xs)
    return Row(item, paper, fmt_ci(st, digits=digits) + extra, st[0], criterion(exp, cid, ci=st, group=group), note)


def _half_row(what: str, whole: list[float], second: list[float], digits: int = 4) -> Row:
    """Steady state: a metric over the second half of the window against the whole."""
    return Row(f"steady state: {what}, second half of the window vs the whole", "(no claim: run-length check)",
               f"second half {_fmt(second, digits)}; whole {_fmt(whole, digits)}", None, NONE)


# ---- Table 2 and section 4.3 ----------------------------------------------------


def _metrics_t2(p, r) -> dict:
    t0, t1 = _window(p)
    hs = _group(r, "hs")
    b = bottleneck(r)
    hs_g = _goodput(r, "hs", t0)
    tcp_g = _goodput(r, "tcp_long_fwd", t0)
    tm = (t0 + t1) / 2
    hs2, tcp2 = _goodput(r, "hs", tm, t1), _goodput(r, "tcp_long_fwd", tm, t1)
    return {
        "util": b["utilization"],
        "loss": b["loss_rate"],
        "jain": jain(f["goodput_bps"] for f in hs),
        "cov": _stability(r, hs, t0),
        "timeouts": float(np.mean([f["timeouts"] for f in hs])) if hs else float("nan"),
        "share": tcp_g / (tcp_g + hs_g) if tcp_g + hs_g > 0 else float("nan"),
        "share2": tcp2 / (tcp2 + hs2) if tcp2 + hs2 > 0 else float("nan"),
        **dict(zip(("util_s", "util2"), _util_halves(r, t0, t1))),
    }


def table2_friendliness(runs: Runs, out: Path, exp) -> Section:
    # m[rate][metric][cc] = {seed: value}
    m: dict[float, dict[str, dict[str, dict[int, float]]]] = {}
    for p, r in runs.pairs:
        for k, v in _metrics_t2(p, r).items():
            m.setdefault(_rate(p), {}).setdefault(k, {}).setdefault(_cc(p), {})[p.seed] = v
    rates = sorted(m, reverse=True)
    top = rates[0]  # Table 2's 2.5 Gbit/s (the fastest point; 100 Mbit/s in quick mode)
    rows: list[Row] = []
    g2 = _rate_label(top)
    t = m[top]

    def vals(metric: str, cc: str, rate: float = top) -> list[float]:
        d = m[rate][metric].get(cc, {})
        return [d[s] for s in sorted(d)]

    # Table 2 (section 4.1), at the fastest rate.
    rows.append(Row(f"Table 2 at {g2}: link utilization per protocol", "(Table 2's values are not in the text)",
                    "; ".join(f"{NAMES[c]} {_fmt(vals('util', c))}" for c in CCS if c in t["util"]), None, NONE))
    rows.append(Row(f"at {g2}: retransmission timeouts per high-speed flow in the run (context for the utilization)", "(not in the paper)",
                    "; ".join(f"{NAMES[c]} {_fmt(vals('timeouts', c), 3)}" for c in CCS if c in t["timeouts"]), None, NONE))
    if {"ehstcp", "scalable"} <= t["util"].keys():
        rows.append(_ci_row(exp, "util_comparable_stcp", f"utilization at {g2}: eHSTCP / STCP (per seed)",
                            "link utilization of eHSTCP is relatively comparable to that of STCP (4.1)",
                            _paired_ratio(t["util"]["ehstcp"], t["util"]["scalable"]), g2))
    for c in OTHERS:
        if {"ehstcp", c} <= t["loss"].keys():
            rows.append(_sep_row(exp, "lowest_loss", f"loss rate at {g2}: eHSTCP vs {NAMES[c]}",
                                 "eHSTCP shows the best performance among all protocols under packet loss rate (4.1)",
                                 vals("loss", "ehstcp"), vals("loss", c), ("eHSTCP", NAMES[c]), f"vs {NAMES[c]}", digits=3))
    for c in ("highspeed", "bic", "ehstcp"):
        if c in t["jain"]:
            rows.append(_ci_row(exp, "jain_about_1", f"{NAMES[c]}: Jain's index among the 4 high-speed flows at {g2}",
                                "for HSTCP, BIC, and eHSTCP, the fairness index is approximately equal to 1 (4.1)",
                                vals("jain", c), "", note="the index over a 30 s window of flows that started up to 5 s apart"))
    if "scalable" in t["jain"]:
        rows.append(_ci_row(exp, "jain_about_1_stcp", f"STCP: Jain's index among the 4 high-speed flows at {g2}",
                            "STCP has some fairness issues (4.1)", vals("jain", "scalable"), ""))
        for c in ("highspeed", "bic", "ehstcp"):
            if c in t["jain"]:
                rows.append(_sep_row(exp, "stcp_less_fair", f"Jain's index at {g2}: STCP vs {NAMES[c]}", "STCP has some fairness issues (4.1)",
                                     vals("jain", "scalable"), vals("jain", c), ("STCP", NAMES[c]), f"vs {NAMES[c]}"))
    for c in OTHERS:
        if {"ehstcp", c} <= t["cov"].keys():
            rows.append(_sep_row(exp, "best_stability", f"stability (throughput sd / mean) at {g2}: eHSTCP vs {NAMES[c]}",
                                 "eHSTCP shows the best stability (4.1)", vals("cov", "ehstcp"), vals("cov", c),
                                 ("eHSTCP", NAMES[c]), f"vs {NAMES[c]}", digits=3))

    # Section 4.3 (and 4.4's friendliness claims) at every rate.
    holds = 0
    for rate in rates:
        g = _rate_label(rate)
        s = m[rate]["share"]
        rows.append(Row(f"standard TCP's share of the long-lived forward goodput at {g}", "(no number in the paper)",
                        "; ".join(f"{NAMES[c]} {_fmt(vals('share', c, rate), 3)}" for c in CCS if c in s), None, NONE))
        ok = 0
        if {"scalable", "bic"} <= s.keys():
            r1 = _sep_row(exp, "stcp_below_bic", f"standard TCP's share at {g}: under STCP vs under BIC",
                          "STCP shows the worst TCP friendliness followed by BIC and HSTCP in most cases (4.3)",
                          vals("share", "scalable", rate), vals("share", "bic", rate), ("STCP", "BIC"), g, digits=3)
            rows.append(r1)
            ok += r1.verdict == "agrees"
        if {"bic", "highspeed"} <= s.keys():
            r2 = _sep_row(exp, "bic_below_hstcp", f"standard TCP's share at {g}: under BIC vs under HSTCP",
                          "STCP shows the worst TCP friendliness followed by BIC and HSTCP in most cases (4.3)",
                          vals("share", "bic", rate), vals("share", "highspeed", rate), ("BIC", "HSTCP"), g, digits=3)
            rows.append(r2)
            ok += r2.verdict == "agrees"
        holds += ok == 2
        if {"ehstcp", "highspeed"} <= m[rate]["util"].keys():
            rows.append(_ci_row(exp, "util_as_hstcp", f"utilization at {g}: eHSTCP / HSTCP (per seed)",
                                "eHSTCP utilizes the link bandwidth as efficiently as HSTCP (4.3)",
                                _paired_ratio(m[rate]["util"]["ehstcp"], m[rate]["util"]["highspeed"]), g))
        for c in ("highspeed", "bic"):
            if {"ehstcp", "scalable", c} <= s.keys():
                rows.append(_sep_row(exp, "friendliest", f"standard TCP's share at {g}: under eHSTCP vs under {NAMES[c]}",
                                     "eHSTCP is the friendliest of the high-speed protocols; good TCP friendliness for all bandwidths (4.4)",
                                     vals("share", "ehstcp", rate), vals("share", c, rate), ("eHSTCP", NAMES[c]), f"{g} vs {NAMES[c]}", digits=3))
                rows.append(_sep_row(exp, "friendliest_stcp", f"control: standard TCP's share at {g}: under STCP vs under {NAMES[c]}",
                                     "STCP shows the worst TCP friendliness (4.3)",
                                     vals("share", "scalable", rate), vals("share", c, rate), ("STCP", NAMES[c]), f"{g} vs {NAMES[c]}", digits=3))
        if {"ehstcp", "scalable"} <= s.keys():
            rows.append(_sep_row(exp, "friendlier_than_stcp", f"standard TCP's share at {g}: under eHSTCP vs under STCP",
                                 "eHSTCP is the friendliest of the high-speed protocols (4.4)",
                                 vals("share", "ehstcp", rate), vals("share", "scalable", rate), ("eHSTCP", "STCP"), g, digits=3))
    rows.append(Row("bandwidths at which both separations STCP < BIC < HSTCP hold (of " + str(len(rates)) + ")",
                    "STCP shows the worst TCP friendliness followed by BIC and HSTCP in most cases (4.3)",
                    f"{holds} of {len(rates)} ({', '.join(_rate_label(x) for x in rates)})", holds, criterion(exp, "ordering_most_cases")))
    # Steady state: the friendliness share over the second half against the whole window.
    for rate in rates:
        for c in CCS:
            if c in m[rate]["share"]:
                rows.append(_half_row(f"standard TCP's share under {NAMES[c]} at {_rate_label(rate)}",
                                      vals("share", c, rate), vals("share2", c, rate), 3))
    for c in CCS:
        if c in t["util_s"]:
            rows.append(_half_row(f"utilization under {NAMES[c]} at {g2} (1 s samples)", vals("util_s", c), vals("util2", c)))

    fig, ax = figs.new(1, 5, w=18, h=3.4)
    for j, (k, label) in enumerate((("util", "utilization"), ("loss", "loss rate"), ("jain", "Jain index"), ("cov", "throughput sd/mean"))):
        xs = [c for c in CCS if c in t[k]]
        st = [_ci(vals(k, c)) for c in xs]
        ax[0][j].bar([NAMES[c] for c in xs], [s[0] for s in st], yerr=[[s[0] - s[1] for s in st], [s[2] - s[0] for s in st]], color="C0", capsize=3)
        ax[0][j].set_title(f"Table 2 ({g2}): {label}", fontsize=9)
        ax[0][j].tick_params(axis="x", labelsize=8)
    a = ax[0][4]
    for i, c in enumerate(CCS):
        pts = [(rate, _ci(vals("share", c, rate))) for rate in sorted(rates) if c in m[rate]["share"]]
        if pts:
            a.errorbar([x / 1e9 * (1 + 0.03 * (i - 1.5)) for x, _ in pts], [s[0] for _, s in pts],
                       yerr=[[s[0] - s[1] for _, s in pts], [s[2] - s[0] for _, s in pts]], marker="o", capsize=3, label=NAMES[c])
    a.set_xscale("log")
    a.set_xlabel("bottleneck (Gbit/s)")
    a.set_ylabel("standard TCP share")
    a.set_title("Section 4.3: TCP friendliness", fontsize=9)
    a.legend(fontsize=7)
    return Section("table2_friendliness", exp.title, setup_text(exp), rows, [figs.save(fig, out, "ehstcp_table2_friendliness.png")], scenario_comment(exp))


# ---- Table 3 ----------------------------------------------------------------------


def table3_rtt_fairness(runs: Runs, out: Path, exp) -> Section:
    # ratio[(cc, rtt2_ms)][seed], and the same over the second half of the window
    ratio: dict[tuple[str, int], dict[int, float]] = {}
    ratio2: dict[tuple[str, int], dict[int, float]] = {}
    for p, r in runs.pairs:
        t0, t1 = _window(p)
        f1, f2 = r.summary["flows"][0], r.summary["flows"][1]
        # the nominal RTT of flow 2 (its access delay sets it; the jitter adds up to 4 ms)
        rtt2 = int(round(2 * (18 + 1 + _secs(p.scenario["flows"][1]["access_delay"]) * 1e3)))
        key = (_cc(p), rtt2)
        ratio.setdefault(key, {})[p.seed] = f1["goodput_bps"] / f2["goodput_bps"] if f2["goodput_bps"] > 0 else float("inf")
        tm = (t0 + t1) / 2
        a, b = _goodput(r, "short_rtt", tm, t1), _goodput(r, "long_rtt", tm, t1)
        ratio2.setdefault(key, {})[p.seed] = a / b if b > 0 else float("inf")
    rows: list[Row] = []
    rtts = sorted({k[1] for k in ratio})

    def vals(cc, rtt, d=ratio):
        x = d.get((cc, rtt), {})
        return [x[s] for s in sorted(x)]

    for rtt in rtts:
        g = f"{rtt} ms"
        rows.append(Row(f"throughput ratio flow 1 (40 ms) / flow 2 ({rtt} ms) per protocol", "(Table 3's values are not in the text)",
                        "; ".join(f"{NAMES[c]} {_fmt(vals(c, rtt), 3)}" for c in CCS if (c, rtt) in ratio), None, NONE))
        for c in OTHERS:
            if ("ehstcp", rtt) in ratio and (c, rtt) in ratio:
                rows.append(_sep_row(exp, "rtt_fairer", f"flow 2 at {rtt} ms: throughput ratio, eHSTCP vs {NAMES[c]}",
                                     "eHSTCP's RTT fairness outperforms HSTCP, STCP and BIC (4.2)",
                                     vals("ehstcp", rtt), vals(c, rtt), ("eHSTCP", NAMES[c]), f"{g} vs {NAMES[c]}", digits=3))
        for c in ("highspeed", "scalable"):
            if (c, rtt) in ratio and ("bic", rtt) in ratio:
                rows.append(_sep_row(exp, "starve_vs_bic", f"flow 2 at {rtt} ms: throughput ratio, {NAMES[c]} vs BIC",
                                     "serious fairness problem with different RTTs for HSTCP and STCP, as predicted in [5] (BIC's paper) (4.2)",
                                     vals(c, rtt), vals("bic", rtt), (NAMES[c], "BIC"), f"{g} {NAMES[c]}", digits=3))
    for rtt in rtts:
        for c in CCS:
            if (c, rtt) in ratio:
                rows.append(_half_row(f"throughput ratio under {NAMES[c]}, flow 2 at {rtt} ms", vals(c, rtt), vals(c, rtt, ratio2), 3))

    fig, ax = figs.new(1, 1)
    for i, c in enumerate(CCS):
        pts = [(x, _ci(vals(c, x))) for x in rtts if (c, x) in ratio]
        if pts:
            ax[0][0].errorbar([x + 3 * (i - 1.5) for x, _ in pts], [s[0] for _, s in pts],
                              yerr=[[s[0] - s[1] for _, s in pts], [s[2] - s[0] for _, s in pts]], marker="o", capsize=3, label=NAMES[c])
    ax[0][0].set_yscale("log")
    ax[0][0].set_xlabel("flow 2 RTT (ms)")
    ax[0][0].set_ylabel("throughput flow 1 (40 ms) / flow 2")
    ax[0][0].set_title("Table 3: RTT fairness (mean and 98.75 % CI over seeds)")
    ax[0][0].legend()
    return Section("table3_rtt_fairness", exp.title, setup_text(exp), rows, [figs.save(fig, out, "ehstcp_table3.png")], scenario_comment(exp))


# ---- Tables 4 and 5 -----------------------------------------------------------------


def tables4_5_dynamic(runs: Runs, out: Path, exp) -> Section:
    m: dict[str, dict[str, dict[int, float]]] = {}

    def put(k, cc, seed, v):
        m.setdefault(k, {}).setdefault(cc, {})[seed] = v

    for p, r in runs.pairs:
        cc, s = _cc(p), p.seed
        t0, t1 = _window(p)
        cap = _rate(p)
        web = sum(g["offered_bytes"] for g in r.summary["short_flows"] if g["name"] == "web_fwd") * 8 / (t1 - t0)
        tcp = _goodput(r, "tcp_long_fwd", t0) + _goodput(r, "tcp_small_fwd", t0)
        put("hs", cc, s, _goodput(r, "hs", t0) / cap)
        put("tcp", cc, s, tcp / cap)
        put("web", cc, s, web / cap)
        put("udp", cc, s, _goodput(r, "udp", t0) / cap)
        tm = (t0 + t1) / 2
        put("tcp2", cc, s, (_goodput(r, "tcp_long_fwd", tm, t1) + _goodput(r, "tcp_small_fwd", tm, t1)) / cap)
        b = bottleneck(r)
        put("util", cc, s, b["utilization"])
        put("loss", cc, s, b["loss_rate"])
        put("cov", cc, s, _stability(r, _group(r, "hs"), t0))
        put("timeouts", cc, s, float(np.mean([f["timeouts"] for f in _group(r, "hs")])))
        u, u2 = _util_halves(r, t0, t1)
        put("util_s", cc, s, u)
        put("util2", cc, s, u2)

    def vals(k, cc):
        d = m.get(k, {}).get(cc, {})
        return [d[x] for x in sorted(d)]

    ccs = [c for c in CCS if c in m.get("util", {})]
    rows: list[Row] = []
    for c in ccs:
        rows.append(Row(f"Table 4 under {NAMES[c]}: share of the link per flow type", "(Table 4's values are not in the text)",
                        "; ".join(f"{lab} {_fmt(vals(k, c), 3)}" for k, lab in (("hs", "high-speed"), ("tcp", "standard TCP"), ("web", "web (offered)"), ("udp", "UDP"))),
                        None, NONE))
    for c in ccs:
        rows.append(Row(f"Table 5 under {NAMES[c]}: loss rate; stability (sd / mean of each high-speed flow's throughput)",
                        "(Table 5's values are not in the text; the claims on it are the conclusion's, below)",
                        f"loss {_fmt(vals('loss', c), 3)}; stability {_fmt(vals('cov', c), 3)}", None, NONE))
    # Table 5 under the conclusion's claims, which cover every simulation of the paper.
    for c in OTHERS:
        if {"ehstcp", c} <= set(ccs):
            rows.append(_sep_row(exp, "dyn_lower_loss", f"Table 5: loss rate, eHSTCP vs {NAMES[c]}",
                                 "the additive increase provides reduced packet loss rate (5, conclusion)",
                                 vals("loss", "ehstcp"), vals("loss", c), ("eHSTCP", NAMES[c]), f"loss vs {NAMES[c]}", digits=3))
            rows.append(_sep_row(exp, "dyn_best_stability", f"Table 5: stability (throughput sd / mean), eHSTCP vs {NAMES[c]}",
                                 "outperforms other high-speed TCPs in terms of ... stability (5, conclusion)",
                                 vals("cov", "ehstcp"), vals("cov", c), ("eHSTCP", NAMES[c]), f"stability vs {NAMES[c]}", digits=3))
    rows.append(Row("retransmission timeouts per high-speed flow in the run (context for the utilization)", "(not in the paper)",
                    "; ".join(f"{NAMES[c]} {_fmt(vals('timeouts', c), 3)}" for c in ccs), None, NONE))
    for c in ("highspeed", "scalable", "ehstcp"):
        if {"bic", c} <= set(ccs):
            rows.append(_sep_row(exp, "bic_unused", f"utilization: BIC vs {NAMES[c]}", "unused bandwidth increases in BIC scenario (4.4)",
                                 vals("util", "bic"), vals("util", c), ("BIC", NAMES[c]), f"vs {NAMES[c]}"))
    if {"ehstcp", "scalable"} <= set(ccs):
        rows.append(_ci_row(exp, "scal_comparable_stcp", "utilization: eHSTCP / STCP (per seed)",
                            "the bandwidth scalability of eHSTCP is comparable to that of STCP (4.4)",
                            _paired_ratio(m["util"]["ehstcp"], m["util"]["scalable"]), ""))
    for c in ("highspeed", "bic"):
        if {"ehstcp", "scalable", c} <= set(ccs):
            rows.append(_sep_row(exp, "friendliest", f"standard TCP's share of the link: under eHSTCP vs under {NAMES[c]}",
                                 "eHSTCP is the friendliest protocol of all the high-speed TCP protocols (4.4)",
                                 vals("tcp", "ehstcp"), vals("tcp", c), ("eHSTCP", NAMES[c]), f"vs {NAMES[c]}", digits=3))
            rows.append(_sep_row(exp, "friendliest_stcp", f"control: standard TCP's share of the link: under STCP vs under {NAMES[c]}",
                                 "STCP shows the worst TCP friendliness (4.3)",
                                 vals("tcp", "scalable"), vals("tcp", c), ("STCP", NAMES[c]), f"vs {NAMES[c]}", digits=3))
    if {"ehstcp", "scalable"} <= set(ccs):
        rows.append(_sep_row(exp, "friendlier_than_stcp", "standard TCP's share of the link: under eHSTCP vs under STCP",
                             "eHSTCP is the friendliest protocol of all the high-speed TCP protocols (4.4)",
                             vals("tcp", "ehstcp"), vals("tcp", "scalable"), ("eHSTCP", "STCP"), "", digits=3))
    for c in ccs:
        rows.append(_half_row(f"standard TCP's share of the link under {NAMES[c]}", vals("tcp", c), vals("tcp2", c), 3))
    for c in ccs:
        rows.append(_half_row(f"utilization under {NAMES[c]} (1 s samples)", vals("util_s", c), vals("util2", c)))

    fig, ax = figs.new(1, 2, w=12, h=3.6)
    bottom = np.zeros(len(ccs))
    for k, lab in (("hs", "high-speed"), ("tcp", "standard TCP"), ("web", "web (offered)"), ("udp", "UDP")):
        v = np.array([np.mean(vals(k, c)) for c in ccs])
        ax[0][0].bar([NAMES[c] for c in ccs], v, bottom=bottom, label=lab)
        bottom += v
    ax[0][0].set_ylabel("share of the link (mean over seeds)")
    ax[0][0].set_title("Table 4: share per flow type", fontsize=9)
    ax[0][0].legend(fontsize=7)
    st = [_ci(vals("cov", c)) for c in ccs]
    ax[0][1].bar([NAMES[c] for c in ccs], [s[0] for s in st], yerr=[[s[0] - s[1] for s in st], [s[2] - s[0] for s in st]], capsize=3)
    ax[0][1].set_title("Table 5: stability (throughput sd / mean)", fontsize=9)
    return Section("tables4_5_dynamic", exp.title, setup_text(exp), rows, [figs.save(fig, out, "ehstcp_tables4_5.png")], scenario_comment(exp))


ANALYSES = {
    "table2_friendliness": table2_friendliness,
    "table3_rtt_fairness": table3_rtt_fairness,
    "tables4_5_dynamic": tables4_5_dynamic,
}
