"""eHSTCP (ehstcp.md) section 4: utilization, fairness and stability
(Table 2), RTT fairness (Table 3), TCP friendliness (4.3) and the dynamic
scenario (Tables 4 and 5). The paper's tables are not in its text, only its
claims; every row here tests a claim."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from longfat.reproduce import figs
from longfat.reproduce.core import Row, Section, _rate_bps, _secs, between, scenario_comment, setup_text
from longfat.reproduce.measure import Runs, bottleneck, cov, flow_series, jain

TITLE = "eHSTCP: Enhanced Congestion Control Algorithm of TCP for high-speed networks"
CITATION = "eHSTCP (ehstcp.md), section 4: ns-2 simulations against HSTCP, STCP and BIC"
NOTES = (
    "The paper's Tables 2-5 give numbers that are not in its text; it states claims about them (which protocol "
    "has the lowest loss rate, the best stability, the best RTT fairness, and so on). Each row below turns one "
    "claim into a measurable test on longfat's runs."
)

NAMES = {"highspeed": "HSTCP", "scalable": "STCP", "bic": "BIC", "ehstcp": "eHSTCP"}


def _group(r, base: str) -> list[dict]:
    return [f for f in r.summary["flows"] if f["name"] == base or f["name"].startswith(base + ".")]


def _window(p) -> tuple[float, float]:
    return _secs(p.scenario["run"]["measure_from"]), _secs(p.scenario["run"]["duration"])


def _stability(r, flows: list[dict], t0: float) -> float:
    """Mean over flows of (sd / mean) of 1 s goodput samples in the window."""
    vals = []
    for f in flows:
        t, g, _ = flow_series(r, f["flow"])
        vals.append(cov(g[t > t0]))
    return float(np.nanmean(vals))


def _rank_low(d: dict[str, float], key: str) -> int:
    return sorted(d, key=lambda k: d[k]).index(key) + 1


def table2_utilization(runs: Runs, out: Path, exp) -> Section:
    m: dict[str, dict[str, float]] = {}
    for p, r in runs.pairs:
        cc = p.scenario["flows"][0]["cc"]
        t0, _ = _window(p)
        hs = _group(r, "hs")
        b = bottleneck(r)
        m[cc] = {
            "util": b["utilization"],
            "loss": b["loss_rate"],
            "jain": jain(f["goodput_bps"] for f in hs),
            "cov": _stability(r, hs, t0),
        }
    rows = []
    if {"ehstcp", "scalable"} <= m.keys():
        d = m["ehstcp"]["util"] - m["scalable"]["util"]
        rows.append(Row("utilization: eHSTCP minus STCP", "eHSTCP's utilization is comparable to STCP's",
                        f"{d:+.4f} (eHSTCP {m['ehstcp']['util']:.4f}, STCP {m['scalable']['util']:.4f})", d, between(lo=-0.03)))
    if "ehstcp" in m:
        others = {k: v["loss"] for k, v in m.items() if k != "ehstcp"}
        ratio = m["ehstcp"]["loss"] / min(others.values()) if others and min(others.values()) > 0 else float("nan")
        rows.append(Row("loss rate: eHSTCP / the lowest of the others", "eHSTCP has the lowest packet loss rate",
                        f"{ratio:.2f} (" + ", ".join(f"{NAMES[k]} {v['loss']:.2e}" for k, v in m.items()) + ")", ratio, between(hi=1.0),
                        "if differs: the loss rate is dominated by the background flows' slow starts and the web traffic, the same for every protocol."))
    for cc in ("highspeed", "bic", "ehstcp"):
        if cc in m:
            rows.append(Row(f"{NAMES[cc]}: Jain's index among the 4 high-speed flows", "approximately 1", f"{m[cc]['jain']:.4f}", m[cc]["jain"], between(lo=0.95),
                            "if differs: 90 s of measurement is short for flows that started up to 10 s apart to converge."))
    if "scalable" in m:
        others = [m[c]["jain"] for c in m if c != "scalable"]
        d = m["scalable"]["jain"] - min(others) if others else float("nan")
        rows.append(Row("STCP's Jain index minus the lowest of the others", "STCP has some fairness issues", f"{d:+.4f} (STCP {m['scalable']['jain']:.4f})", d, between(hi=0.0),
                        "if differs: STCP's MIMD does not converge, but from near-equal starts the flows may stay near-equal."))
    if "ehstcp" in m:
        others = {k: v["cov"] for k, v in m.items() if k != "ehstcp"}
        ratio = m["ehstcp"]["cov"] / min(others.values()) if others else float("nan")
        rows.append(Row("stability (throughput sd / mean): eHSTCP / the best of the others", "eHSTCP shows the best stability",
                        f"{ratio:.2f} (" + ", ".join(f"{NAMES[k]} {v['cov']:.3f}" for k, v in m.items()) + ")", ratio, between(hi=1.0)))
    fig, ax = figs.new(1, 4, w=14, h=3.2)
    ccs = list(m)
    for j, (k, label) in enumerate((("util", "utilization"), ("loss", "loss rate"), ("jain", "Jain index"), ("cov", "throughput CoV"))):
        ax[0][j].bar([NAMES[c] for c in ccs], [m[c][k] for c in ccs], color="C0")
        ax[0][j].set_title(label)
        ax[0][j].tick_params(axis="x", labelsize=8)
    return Section("table2_utilization", exp.title, setup_text(exp), rows, [figs.save(fig, out, "ehstcp_table2.png")], scenario_comment(exp))


def table3_rtt_fairness(runs: Runs, out: Path, exp) -> Section:
    table: dict[tuple[str, int], float] = {}
    for p, r in runs.pairs:
        cc = p.scenario["flows"][0]["cc"]
        f1 = r.summary["flows"][0]
        f2 = r.summary["flows"][1]
        rtt2 = round(f2["base_rtt_ms"])
        table[(cc, rtt2)] = f1["goodput_bps"] / max(f2["goodput_bps"], 1.0)
    rows = []
    rtts = sorted({k[1] for k in table})
    for rtt in rtts:
        vals = {cc: v for (cc, x), v in table.items() if x == rtt}
        detail = ", ".join(f"{NAMES[c]} {v:.2f}" for c, v in vals.items())
        if "ehstcp" in vals:
            others = [v for c, v in vals.items() if c != "ehstcp"]
            ratio = vals["ehstcp"] / min(others) if others else float("nan")
            rows.append(Row(f"flow 2 at {rtt} ms: eHSTCP's throughput ratio / the best of the others", "eHSTCP's RTT fairness outperforms HSTCP, STCP and BIC",
                            f"{ratio:.2f} ({detail})", ratio, between(hi=1.0),
                            "if differs: eHSTCP inherits HSTCP's window-based increase, whose RTT bias the effective-RTT rule does not remove."))
        for cc in ("highspeed", "scalable"):
            if cc in vals and rtt == max(rtts):
                rows.append(Row(f"flow 2 at {rtt} ms: {NAMES[cc]} throughput ratio flow 1 / flow 2", "HSTCP and STCP tend to starve long-RTT flows",
                                f"{vals[cc]:.2f}", vals[cc], between(lo=3.0)))
    fig, ax = figs.new(1, 1)
    for cc in NAMES:
        pts = sorted((x, v) for (c, x), v in table.items() if c == cc)
        if pts:
            ax[0][0].plot([x for x, _ in pts], [v for _, v in pts], "o-", label=NAMES[cc])
    ax[0][0].set_yscale("log")
    ax[0][0].set_xlabel("flow 2 RTT (ms)")
    ax[0][0].set_ylabel("throughput flow 1 (40 ms) / flow 2")
    ax[0][0].set_title("Table 3: RTT fairness")
    ax[0][0].legend()
    return Section("table3_rtt_fairness", exp.title, setup_text(exp), rows, [figs.save(fig, out, "ehstcp_table3.png")], scenario_comment(exp))


def friendliness(runs: Runs, out: Path, exp) -> Section:
    share, util = {}, {}
    for p, r in runs.pairs:
        cc = p.scenario["flows"][0]["cc"]
        hs = sum(f["goodput_bps"] for f in _group(r, "hs"))
        tcp = sum(f["goodput_bps"] for f in _group(r, "tcp"))
        share[cc] = tcp / (tcp + hs)
        util[cc] = bottleneck(r)["utilization"]
    rows = []
    detail = ", ".join(f"{NAMES[c]} {v:.3f}" for c, v in share.items())
    if "scalable" in share:
        rows.append(Row("rank of the standard-TCP share under STCP (1 = smallest)", "STCP shows the worst TCP friendliness", f"{_rank_low(share, 'scalable')} ({detail})",
                        _rank_low(share, "scalable"), between(hi=1)))
    if {"scalable", "bic", "highspeed"} <= share.keys():
        ok = share["scalable"] <= share["bic"] <= share["highspeed"]
        rows.append(Row("order of the standard-TCP share: STCP <= BIC <= HSTCP (1 = yes)", "STCP worst, followed by BIC and HSTCP", f"{int(ok)} ({detail})", int(ok), between(lo=1)))
    if {"ehstcp", "highspeed"} <= util.keys():
        d = util["ehstcp"] - util["highspeed"]
        rows.append(Row("utilization: eHSTCP minus HSTCP", "eHSTCP utilizes the link as efficiently as HSTCP", f"{d:+.4f}", d, between(lo=-0.02)))
    if "ehstcp" in share:
        rk = sorted(share, key=lambda k: -share[k]).index("ehstcp") + 1
        rows.append(Row("rank of the standard-TCP share under eHSTCP (1 = largest)", "eHSTCP is the friendliest high-speed protocol (section 4.4)", f"{rk} ({detail})", rk, between(hi=1)))
    fig, ax = figs.new(1, 1)
    ax[0][0].bar([NAMES[c] for c in share], [share[c] for c in share])
    ax[0][0].set_ylabel("standard TCP share of long-flow goodput")
    ax[0][0].set_title("Section 4.3: TCP friendliness (2 high-speed + 2 TCP flows)")
    return Section("friendliness", exp.title, setup_text(exp), rows, [figs.save(fig, out, "ehstcp_friendliness.png")], scenario_comment(exp))


def tables4_5_dynamic(runs: Runs, out: Path, exp) -> Section:
    shares: dict[str, dict[str, float]] = {}
    util, loss, stab = {}, {}, {}
    for p, r in runs.pairs:
        cc = p.scenario["flows"][0]["cc"]
        t0, t1 = _window(p)
        cap = _rate_bps(p.scenario["network"]["bottleneck"]["rate"])
        fwd = lambda base: sum(f["goodput_bps"] for f in _group(r, base))  # noqa: E731
        web = sum(g["offered_bytes"] for g in r.summary["short_flows"] if g["name"] == "web_fwd") * 8 / (t1 - t0)
        shares[cc] = {
            "high-speed": fwd("hs") / cap,
            "TCP": (fwd("tcp_long_fwd") + fwd("tcp_small_fwd")) / cap,
            "web": web / cap,
            "UDP": fwd("udp") / cap,
        }
        b = bottleneck(r)
        util[cc], loss[cc] = b["utilization"], b["loss_rate"]
        stab[cc] = _stability(r, _group(r, "hs"), t0)
    rows = []
    if "bic" in util:
        rk = _rank_low(util, "bic")
        rows.append(Row("rank of BIC's utilization (1 = lowest)", "unused bandwidth increases with BIC",
                        f"{rk} (" + ", ".join(f"{NAMES[c]} {u:.4f}" for c, u in util.items()) + ")", rk, between(hi=1),
                        "if differs: with four background TCP flows, web traffic and 150 UDP sources keeping the "
                        "queue busy, every protocol leaves under 4 % of the link idle; BIC's binary search (which "
                        "the paper says goes stale) does not stand out over 90 s here."))
    if {"ehstcp", "scalable"} <= util.keys():
        d = util["ehstcp"] - util["scalable"]
        rows.append(Row("utilization: eHSTCP minus STCP", "eHSTCP's bandwidth scalability is comparable to STCP's", f"{d:+.4f}", d, between(lo=-0.03)))
    if "ehstcp" in shares:
        t = {c: s["TCP"] for c, s in shares.items()}
        rk = sorted(t, key=lambda k: -t[k]).index("ehstcp") + 1
        rows.append(Row("rank of the standard-TCP share of the link under eHSTCP (1 = largest)", "eHSTCP is the friendliest of the high-speed protocols",
                        f"{rk} (" + ", ".join(f"{NAMES[c]} {v:.3f}" for c, v in t.items()) + ")", rk, between(hi=1)))
        lr = loss["ehstcp"] / min(v for c, v in loss.items() if c != "ehstcp") if len(loss) > 1 else float("nan")
        rows.append(Row("loss rate: eHSTCP / the lowest of the others (Table 5)", "eHSTCP keeps the lowest loss rate (as in Table 2)",
                        f"{lr:.2f} (" + ", ".join(f"{NAMES[c]} {v:.2e}" for c, v in loss.items()) + ")", lr, between(hi=1.0)))
    fig, ax = figs.new(1, 1)
    ccs = list(shares)
    bottom = np.zeros(len(ccs))
    for kind in ("high-speed", "TCP", "web", "UDP"):
        vals = np.array([shares[c][kind] for c in ccs])
        ax[0][0].bar([NAMES[c] for c in ccs], vals, bottom=bottom, label=kind)
        bottom += vals
    ax[0][0].set_ylabel("share of the link")
    ax[0][0].set_title("Table 4: bandwidth share per flow type, with 150 on/off UDP sources")
    ax[0][0].legend(fontsize=8)
    return Section("tables4_5_dynamic", exp.title, setup_text(exp), rows, [figs.save(fig, out, "ehstcp_tables4_5.png")], scenario_comment(exp))


ANALYSES = {
    "table2_utilization": table2_utilization,
    "table3_rtt_fairness": table3_rtt_fairness,
    "friendliness": friendliness,
    "tables4_5_dynamic": tables4_5_dynamic,
}
