"""PLT, the priority-layered transport (plt.md), section 4: goodput against
random loss with large and small buffers (Figs. 3 and 6), the two modules'
windows (Figs. 4-5, 7-8), short-flow completion times (Fig. 9), two
bottlenecks in series (Fig. 10); then the paper's central promise
(non-interference with TCP) and two open questions of section 5 (fairness
among PLT flows, the choice of the HCM).

Every criterion is stated in the scenario files' [reproduce.criteria]
before the full runs and applied here through ``criterion``. The rows give
the mean over five seeds (or more: sequential seeds, up to 30, while a
claim is not separable) with its t-interval at 98.75 % (95 % over the
looks), and the verdict comes from the interval: inside the claimed band agrees, wholly outside differs,
across a bound "not separable"; a comparison (PLT above TCP) is judged
on Welch's interval of the difference. A claim about PLT (or TCP) is paired, by
its group, with the same check on the algorithm or condition the paper says
differs (its negative control)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from longfat.reproduce import figs
from longfat.reproduce.coverage import Cover
from longfat.reproduce.core import NONE, Row, Section, scenario_comment, setup_text
from longfat.reproduce.criteria import criterion
from longfat.reproduce.measure import Interval, Runs, ci95, diff_ci95, fmt_ci, jain
from longfat.units import rate_bps as _rate_bps
from longfat.units import seconds as _secs

TITLE = "A priority-layered approach to transport for high bandwidth-delay product networks"
AUTHORS = "Vidhyashankar Venkataraman, Paul Francis, Saikat Guha, Murali. S. Kodialam, T. V. Lakshman, Manpreet Singh"
CITATION = (
    "PLT (plt.md), section 4: ns-2 simulations at 250 Mbit/s, RTT 80 ms, buffers of one BDP or 10 % of it, 1200 s runs, "
    "TCP-Reno as the HCM (sect. 4.1); and the open questions of section 5"
)
NOTES = (
    "The paper gives plots and claims, no tables; each row tests a stated claim under a criterion stated in the scenario "
    "file before the runs ([reproduce.criteria], its id in brackets). Every outcome here is random (random loss, Poisson "
    "arrivals, start times and RTTs drawn from the seed), so every judged row gives the mean over five seeds or more "
    "(sequential seeds: a point goes on to 10, 20 and at most 30 while a claim it decides is not separable; each row's seeds are "
    "in its \"seeds\" column) and its t-interval at 98.75 % (95 % shared by the up to four looks), \"m [lo, hi] (n=k)\", and the verdict is computed from the interval: inside the claimed band agrees, "
    "wholly outside differs, across a bound not separable; a comparison such as \"PLT above TCP\" is "
    "judged on Welch's interval of the difference at the same level (on logarithms for ratios); an exact tie contradicts a strict claim; a universal claim (\"never\") is judged seed by seed. Where a row claims a property of PLT (or of TCP), the same check is applied to the "
    "algorithm or condition the paper says differs (a negative control, paired by its group); a claim whose control "
    "passes too is \"not evidence\". Runs shorter than the paper's 1200 s (to fit the run budget) show their metric over "
    "the second half of the measurement window beside the whole: the steady-state check. Goodput is the connection's "
    "in-order goodput; "
    "with 1000-byte packets (40 bytes of headers) a 250 Mbit/s link carries at most 240 Mbit/s of it. longfat's PLT "
    "runs the HCM as its ordinary TCP sender and the LCM in the next lower strict-priority class; the bottleneck "
    "keeps one tail-drop buffer shared by the classes, from which a class-0 arrival pushes out the newest LCM packet. "
    "Its LCM stops below one packet and starts again, with the window the HCM gave up, when the HCM cuts back (the paper "
    "does not say with which window: the sensitivity rows of Figs. 3 and 6-8 run it restarting at one packet). The HCM "
    "resends every loss of the LCM before new data; where the LCM loses packets faster than the HCM can resend them, "
    "holes wait and hold up in-order delivery (the connection's window, 3 BDP, bounds how far), so the rows give the "
    "data first delivered by either module beside the goodput."
)

SPREAD = "mean over seeds with its t-interval (98.75 %: sequential seeds), m [lo, hi] (n=k), where there are several; an interval of a fraction is cut to the values it can take"

#: The sensitivity runs of Figs. 3 and 6-8: PLT under another reading of the
#: paper (scope = "sensitivity" rows, counted apart): the reading, the
#: suffix of its criteria, and which reading the paper supports.
SENSITIVITY = {
    "restart at one packet": ("_one", "Sensitivity: the LCM restarting at one packet (plt.lcm_restart = \"one\") instead of with the window the HCM "
                              "gave up. Sect. 4.2 does not say with which window a stopped LCM starts again, so the paper supports neither "
                              "reading over the other."),
    "3-BDP connection buffer": ("_3bdp", "Sensitivity: the connection's receive buffer at 3 BDP (plt.receive_buffer = 7500 packets) instead of "
                                "unbounded reassembly (each module's window is 3 BDP in both). Sect. 4.1's \"Max. Receiver Window 3 BW RTT\" "
                                "read as the connection's buffer: the paper's literal setting, so this row is the paper's reading and the "
                                "adopted row longfat's."),
}


def _variant(p) -> str:
    """Which sensitivity run a point is (a key of SENSITIVITY), or "" for the adopted reading."""
    cfg = p.scenario["flows"][0].get("plt") or {}
    if cfg.get("lcm_restart") == "one":
        return "restart at one packet"
    if "receive_buffer" in cfg:
        return "3-BDP connection buffer"
    return ""

#: What of the paper this report reproduces (coverage.py). The extra
#: sections (non-interference, fairness, HCM variants) test the design's
#: statements and have no figure.
COVERAGE = {
    "Fig. 1": Cover("n-a", why="PLT's modules drawn: a schematic"),
    "Fig. 2": Cover("n-a", why="the multiple-bottleneck topology, drawn (not in our copy); fig10_multi_bottleneck.toml states the parking lot built for it"),
    "Fig. 3": Cover("full", ("fig3_loss",)),
    "Fig. 4": Cover("full", ("fig3_loss",)),
    "Fig. 5": Cover("full", ("fig3_loss",)),
    "Fig. 6": Cover("full", ("fig6_8_small_buffer",)),
    "Fig. 7": Cover("full", ("fig6_8_small_buffer",)),
    "Fig. 8": Cover("full", ("fig6_8_small_buffer",)),
    "Fig. 9": Cover("partly", ("fig9_short_flows",), why="60 s runs, not the paper's 1200 s (1250 arrivals a second: some 75,000 "
                    "flows a run; each row shows the second half of the run against the whole)"),
    "Fig. 10": Cover("full", ("fig10_multi_bottleneck",), why="the topology is a stated choice: the paper's Fig. 2 is not in our copy"),
}

ORDER = ["fig3_loss", "fig6_8_small_buffer", "fig9_short_flows", "fig10_multi_bottleneck",
         "noninterference", "fairness", "hcm_variants"]

NAMES = {"plt": "PLT", "reno": "TCP (Reno)", "scalable": "Scalable TCP"}


# ---- scenario and result access -------------------------------------------------


def _bn(p) -> dict:
    return p.scenario["network"]["bottleneck"]


def _rate(p) -> float:
    return _rate_bps(_bn(p)["rate"])


def _loss(p) -> float:
    return float(_bn(p).get("loss", 0.0))


def _cc(p, i: int = 0) -> str:
    return p.scenario["flows"][i]["cc"]


def _bytes(text: str, default: int) -> int:
    t = str(text).strip()
    try:
        return int(float(t[:-1])) if t.endswith("B") and t[:-1].replace(".", "", 1).isdigit() else default
    except ValueError:
        return default


def _packet(p, key: str = "flows") -> tuple[int, int]:
    """(packet size, header size) in bytes of the first entry of ``key``."""
    tcp = p.scenario[key][0].get("tcp", {})
    return _bytes(tcp.get("packet_size", "1500B"), 1500), _bytes(tcp.get("header_size", "40B"), 40)


def _max_goodput(p, key: str = "flows") -> float:
    """The most goodput the bottleneck can carry (bit/s): its rate times the payload share of a packet."""
    size, hdr = _packet(p, key)
    return _rate(p) * (size - hdr) / size


def _series(res, flow: int) -> dict[str, np.ndarray]:
    """One flow's time series (the per-module columns are NaN for TCP flows)."""
    cache = res.__dict__.setdefault("_plt_series", {})
    if "all" not in cache:
        cols = ["time_s", "flow", "goodput_bps", "cwnd_pkts", "hcm_cwnd_pkts", "lcm_cwnd_pkts", "hcm_goodput_bps", "lcm_goodput_bps"]
        have = [c for c in cols if c in res.flows.column_names]
        d = res.flows.select(have).to_pydict()
        n = len(d["time_s"])
        cache["all"] = {k: np.asarray(d[k], dtype=float) if k in d else np.full(n, np.nan) for k in cols}
    a = cache["all"]
    if flow not in cache:
        m = a["flow"] == flow
        cache[flow] = {k: v[m] for k, v in a.items()}
    return cache[flow]


def _link(res, name: str) -> dict[str, np.ndarray]:
    cache = res.__dict__.setdefault("_plt_links", {})
    if name not in cache:
        d = res.links.select(["time_s", "link_name", "utilization", "queue_pkts"]).to_pydict()
        m = np.asarray(d["link_name"]) == name
        cache[name] = {k: np.asarray(d[k], dtype=float)[m] for k in ("time_s", "utilization", "queue_pkts")}
    return cache[name]


def _lcm_share(f: dict) -> float:
    h, lo = f.get("hcm_goodput_bps"), f.get("lcm_goodput_bps")
    if h is None or lo is None or h + lo <= 0:
        return float("nan")
    return lo / (h + lo)


def _nanmean(xs) -> float:
    """The mean of the finite values (NaN, quietly, if there are none)."""
    a = np.asarray(xs, dtype=float)
    a = a[np.isfinite(a)]
    return float(a.mean()) if len(a) else float("nan")


def _loss_label(x: float) -> str:
    return "0" if x == 0 else f"{x:.0e}".replace("e-0", "e-")


def _mbps(stats) -> str:
    return fmt_ci(stats, 1e-6, digits=4, unit=" Mbit/s")


FRACTION = (0.0, 1.0)
NONNEG = (0.0, math.inf)


def _cut(st: tuple, clip: tuple[float, float] | None) -> tuple:
    """ci95's (mean, lo, hi, n) with the interval cut to the values the
    quantity can take (a fraction's t-interval can reach below 0 or above 1)."""
    m, a, b, n = st
    if clip is None or not math.isfinite(m):
        return st
    return Interval((m, max(a, clip[0]), min(b, clip[1]), n), getattr(st, "values", ()))


def _ci_row(exp, cid: str, item: str, paper: str, xs: list[float], note: str = "", *, group: str = "", scale: float = 1.0,
            unit: str = "", digits: int = 3, extra: str = "", clip: tuple[float, float] | None = None) -> Row:
    """A row judged by the ci criterion ``cid`` of the scenario file on the
    interval of the mean of ``xs`` (one value per seed)."""
    st = _cut(ci95(xs), clip)
    return Row(item, paper, fmt_ci(st, scale, digits=digits, unit=unit) + extra, st[0],
               criterion(exp, cid, ci=st, group=group), note)


def _sep_row(exp, cid: str, item: str, paper: str, a: list[float], b: list[float], what: tuple[str, str], *, group: str = "",
             scale: float = 1e-6, unit: str = " Mbit/s", note: str = "", extra: str = "") -> Row:
    """A row judged by the separate criterion ``cid``; both intervals are cut
    at 0 (the quantities compared are never negative)."""
    sa, sb = _cut(ci95(a), NONNEG), _cut(ci95(b), NONNEG)
    shown = f"{what[0]} {fmt_ci(sa, scale, digits=4, unit=unit)}; {what[1]} {fmt_ci(sb, scale, digits=4, unit=unit)}" + extra
    return Row(item, paper, shown, sa[0] - sb[0], criterion(exp, cid, a=sa, b=sb, what=what, group=group), note)


def _diff_row(exp, cid: str, item: str, paper: str, a: list[float], b: list[float], *, scale: float = 1.0, unit: str = "",
              extra: str = "", note: str = "", group: str = "") -> Row:
    """A row judged by the ci criterion ``cid`` on Welch's interval of
    mean(a) - mean(b) (n: the smaller sample)."""
    d, lo, hi = diff_ci95(a, b)
    st = (d, lo, hi, min(len(a), len(b)))
    shown = f"{d * scale:+.4g} [{lo * scale:+.4g}, {hi * scale:+.4g}]{unit} (n={st[3]})" + extra
    return Row(item, paper, shown, d, criterion(exp, cid, ci=st, group=group), note)


def _halves(p, r, flows: list[int] | None = None) -> tuple[float, float]:
    """(mean goodput over the measurement window, over its second half), in
    bit/s, of the sum of ``flows`` (default: flow 0), from the sampled series."""
    t0 = _secs(p.scenario["run"].get("measure_from", "0s"))
    t1 = _secs(p.scenario["run"]["duration"])
    mid = (t0 + t1) / 2
    tot_all = tot_half = 0.0
    for f in flows or [0]:
        s = _series(r, f)
        t, g = s["time_s"], s["goodput_bps"]
        m_all, m_half = (t > t0) & (t <= t1), (t > mid) & (t <= t1)
        tot_all += float(np.mean(g[m_all])) if m_all.any() else float("nan")
        tot_half += float(np.mean(g[m_half])) if m_half.any() else float("nan")
    return tot_all, tot_half


def _half_text(whole: list[float], half: list[float], scale: float = 1e-6, unit: str = " Mbit/s", digits: int = 4) -> str:
    """The steady-state check shown beside a row: the metric over the
    second half of the window against the whole, with both intervals."""
    return (f"; steady state: over the second half of the window {fmt_ci(ci95(half), scale, digits=digits, unit=unit)}, "
            f"over the whole (sampled) {fmt_ci(ci95(whole), scale, digits=digits, unit=unit)}")


# ---- Figs. 3 and 6: goodput against the loss rate ----------------------------------

MU = 0.005
#: sect. 4.1: "Simulation time limit 1200s".
PAPER_DURATION_S = 1200.0


def _sweep(runs: Runs) -> dict[tuple[str, float], dict[str, list[float]]]:
    """(cc, loss) -> per seed: goodput (bit/s), its fraction of the most the link
    carries, the LCM's share of the goodput and its loss rate (PLT only)."""
    out: dict[tuple[str, float], dict[str, list[float]]] = {}
    for p, r in runs.pairs:
        f = r.summary["flows"][0]
        d = out.setdefault((_cc(p), _loss(p)), {"gbps": [], "frac": [], "lcm_share": [], "lcm_loss": [], "hcm_gbps": [], "lcm_gbps": [], "either": [],
                                               "whole": [], "half": [], "short": False})
        d["gbps"].append(f["goodput_bps"])
        d["frac"].append(f["goodput_bps"] / _max_goodput(p))
        whole, half = _halves(p, r)
        d["whole"].append(whole / _max_goodput(p))
        d["half"].append(half / _max_goodput(p))
        d["short"] = d["short"] or _secs(p.scenario["run"]["duration"]) < PAPER_DURATION_S
        if _cc(p) == "plt":
            d["lcm_share"].append(_lcm_share(f))
            d["hcm_gbps"].append(f["hcm_goodput_bps"])
            d["lcm_gbps"].append(f["lcm_goodput_bps"])
            d["either"].append(f["hcm_goodput_bps"] + f["lcm_goodput_bps"])
            sent = f.get("lcm_sent_pkts") or 0
            d["lcm_loss"].append(f["lcm_lost_pkts"] / sent if sent > 0 else float("nan"))
    return out


def _sweep_plot(table, out: Path, name: str, title: str) -> str:
    losses = sorted({x for _, x in table})
    labels = [_loss_label(x) for x in losses]
    fig, ax = figs.new(1, 3, w=16, h=3.8)
    xs = np.arange(len(losses))
    for k, cc in enumerate(("plt", "reno")):
        m, lo, hi = [], [], []
        for x in losses:
            st = ci95(table[(cc, x)]["gbps"]) if (cc, x) in table else (float("nan"),) * 4
            m.append(st[0] / 1e6)
            lo.append((st[0] - st[1]) / 1e6 if math.isfinite(st[1]) else 0)
            hi.append((st[2] - st[0]) / 1e6 if math.isfinite(st[2]) else 0)
        ax[0][0].bar(xs + (k - 0.5) * 0.4, m, width=0.4, yerr=[lo, hi], capsize=3, label=NAMES[cc])
    ax[0][0].set_xticks(xs)
    ax[0][0].set_xticklabels(labels)
    ax[0][0].set_xlabel("random loss rate")
    ax[0][0].set_ylabel("goodput (Mbit/s)")
    ax[0][0].set_title(title)
    ax[0][0].legend(fontsize=8)
    ax[0][0].grid(axis="y", alpha=0.3)
    h = [np.mean(table[("plt", x)]["hcm_gbps"]) / 1e6 if ("plt", x) in table else 0 for x in losses]
    lw = [np.mean(table[("plt", x)]["lcm_gbps"]) / 1e6 if ("plt", x) in table else 0 for x in losses]
    ax[0][1].bar(xs, h, label="first delivered by the HCM")
    ax[0][1].bar(xs, lw, bottom=h, label="first delivered by the LCM")
    ax[0][1].set_xticks(xs)
    ax[0][1].set_xticklabels(labels)
    ax[0][1].set_xlabel("random loss rate")
    ax[0][1].set_ylabel("PLT goodput by module (Mbit/s)")
    ax[0][1].legend(fontsize=8)
    ll = [_nanmean(table[("plt", x)]["lcm_loss"]) if ("plt", x) in table else float("nan") for x in losses]
    ax[0][2].plot(xs, ll, "o-", label="LCM loss rate (lost / sent)")
    ax[0][2].axhline(MU, color="C3", ls="--", lw=1, label="target mu = 0.5 %")
    ax[0][2].set_yscale("log")
    ax[0][2].set_xticks(xs)
    ax[0][2].set_xticklabels(labels)
    ax[0][2].set_xlabel("random loss rate")
    ax[0][2].legend(fontsize=8)
    return figs.save(fig, out, name)


REPAIR_NOTE = (
    "if differs: the HCM resends every LCM loss (sect. 3.2.1), and here they come faster than it can: the LCM loses "
    "1.5-3 % of its packets (see the LCM loss rate row), hundreds a second, while the HCM, a Reno window of a few tens "
    "of packets at this loss rate, resends a few hundred a second with its own losses to repair too. The retransmit "
    "buffer grows all run and its holes hold up in-order delivery: the data first delivered by either module (given "
    "after the goodput) is near the link's, the in-order goodput lower. The paper's footnote 2 foresees the case (the "
    "LCM may resend when the TCP window is very small against the retransmit buffer); longfat does not implement that "
    "exception."
)


def _either(d) -> str:
    return f"; first delivered by either module {np.mean(d['either']) / 1e6:.1f} Mbit/s" if d.get("either") else ""


def _steady(d, who: str = "") -> str:
    """The steady-state check on the goodput fraction (shown for every run:
    those shorter than the paper's 1200 s rely on it)."""
    return _half_text(d["whole"], d["half"], scale=1.0, unit="", digits=3).replace("; steady state:", f"; steady state{who}, goodput fraction:")


def _goodput_rows(exp, table, *, small: bool) -> list[Row]:
    rows: list[Row] = []
    losses = sorted({x for _, x in table})
    have = lambda cc, x: (cc, x) in table  # noqa: E731
    fig = "Fig. 6" if small else "Fig. 3"
    if have("plt", 0.0):
        d = table[("plt", 0.0)]
        rows.append(_ci_row(exp, "plt_goodput_zero_loss", "PLT, zero loss: goodput as a fraction of the most the link carries",
                            f"high goodput ({fig}): at least 0.9 of the link", d["frac"], group="zero loss",
                            extra=f" = {_mbps(ci95(d['gbps']))}{_either(d)}{_steady(d)}", clip=NONNEG))
    if have("reno", 0.0):
        d = table[("reno", 0.0)]
        if small:
            rows.append(_ci_row(exp, "tcp_goodput_zero_loss_ctl", "TCP, zero loss: goodput as a fraction of the most the link carries",
                                "(the control of PLT's row above: TCP cannot keep a buffer of 10 % of the BDP full)", d["frac"], group="zero loss",
                                extra=f" = {_mbps(ci95(d['gbps']))}{_steady(d)}", clip=NONNEG))
            rows.append(_ci_row(exp, "tcp_below_link_zero_loss", "TCP, zero loss: goodput fraction",
                                "TCP's inability to keep the bottleneck buffer full at times (sect. 4.2): clearly below the link (0.3 to 0.9)",
                                d["frac"], group="zero loss", extra=f" = {_mbps(ci95(d['gbps']))}", clip=NONNEG))
            if have("plt", 0.0):
                p0 = table[("plt", 0.0)]
                rows.append(_ci_row(exp, "plt_below_link_zero_loss_ctl", "PLT, zero loss: goodput fraction",
                                    "(the control of TCP's row above: PLT, which the paper says does better)", p0["frac"], group="zero loss",
                                    extra=f" = {_mbps(ci95(p0['gbps']))}", clip=NONNEG))
        else:
            rows.append(_ci_row(exp, "tcp_goodput_zero_loss", "TCP, zero loss: goodput fraction",
                                "with a buffer of one BDP, Reno keeps the link full (Fig. 3 at zero loss): at least 0.9",
                                d["frac"], group="zero loss", extra=f" = {_mbps(ci95(d['gbps']))}{_steady(d)}", clip=NONNEG))
    if have("plt", 0.0) and have("reno", 0.0):
        if small:
            rows.append(_sep_row(exp, "plt_above_tcp", "PLT against TCP, zero loss", "PLT exhibits much higher goodputs than legacy TCP (Fig. 6)",
                                 table[("plt", 0.0)]["gbps"], table[("reno", 0.0)]["gbps"], ("PLT", "TCP"), group="zero loss"))
            rows.append(_ci_row(exp, "lcm_share_zero_loss", "PLT, zero loss: the LCM's share of the goodput",
                                "the role of the LCM at zero loss is more pronounced, as it exploits TCP's inability to keep the buffer "
                                "full: a sizeable share (0.1 to 0.6)", table[("plt", 0.0)]["lcm_share"], clip=FRACTION))
        else:
            rows.append(_diff_row(exp, "plt_minus_tcp_zero_loss", "PLT minus TCP, zero loss (fractions of the link)",
                                  "about equal: the LCM backs off while the HCM (Reno) fills the queue, and PLT never does worse than "
                                  "TCP (within 0.05 of the link either way)", table[("plt", 0.0)]["frac"], table[("reno", 0.0)]["frac"]))
    if have("reno", 1e-4) and not small:
        d = table[("reno", 1e-4)]
        rows.append(_ci_row(exp, "tcp_poor_at_1e4", "TCP at 0.01 % loss: goodput fraction",
                            "TCP fares very poorly even at a loss rate of 0.01 % (below a quarter of the link)",
                            d["frac"], group="loss 1e-4", extra=f" = {_mbps(ci95(d['gbps']))}{_steady(d)}", clip=NONNEG))
        if have("plt", 1e-4):
            p4 = table[("plt", 1e-4)]
            rows.append(_ci_row(exp, "plt_poor_at_1e4_ctl", "PLT at 0.01 % loss: goodput fraction",
                                "(the control of TCP's row above: PLT, which the paper says yields very high goodput there)",
                                p4["frac"], group="loss 1e-4", extra=f" = {_mbps(ci95(p4['gbps']))}", clip=NONNEG))
    for x in losses:
        if x == 0 or not have("plt", x):
            continue
        d = table[("plt", x)]
        g = f"loss {_loss_label(x)}"
        if x < MU:
            rows.append(_ci_row(exp, "plt_high_goodput_lossy", f"PLT at loss {_loss_label(x)}: goodput fraction",
                                "very high goodputs even at non-zero loss rates (at least 0.9)", d["frac"], group=g,
                                extra=f" = {_mbps(ci95(d['gbps']))}; the LCM's share {np.mean(d['lcm_share']):.3f}{_either(d)}{_steady(d)}",
                                note=REPAIR_NOTE, clip=NONNEG))
            if have("reno", x):
                t = table[("reno", x)]
                rows.append(_ci_row(exp, "tcp_high_goodput_lossy_ctl", f"TCP at loss {_loss_label(x)}: goodput fraction",
                                    "(the control of PLT's row above: TCP, which fares very poorly at non-zero loss)", t["frac"], group=g,
                                    extra=f" = {_mbps(ci95(t['gbps']))}{_steady(t)}", clip=NONNEG))
        elif x >= 2 * MU:
            rows.append(_ci_row(exp, "plt_collapse_above_2mu", f"PLT at loss {_loss_label(x)} (at least twice mu): goodput fraction",
                                "above the target loss rate the LCM cuts back by design (sect. 3.1): PLT's goodput collapses (below 0.1 of the link)",
                                d["frac"], group=g, extra=f" = {_mbps(ci95(d['gbps']))}; the LCM's share {np.mean(d['lcm_share']):.3f}{_steady(d)}",
                                clip=NONNEG))
        if have("reno", x):
            t = table[("reno", x)]
            rows.append(_sep_row(exp, "plt_above_tcp", f"PLT against TCP at loss {_loss_label(x)}",
                                 "PLT's goodput above TCP's (the LCM adds to the HCM, which is TCP)" if not small else
                                 "PLT exhibits much higher goodputs than legacy TCP (Fig. 6)",
                                 d["gbps"], t["gbps"], ("PLT", "TCP"), group=g,
                                 extra="" if small or x < MU else _steady(t, " of TCP")))
    if have("plt", 1e-4) and not small:
        d = table[("plt", 1e-4)]
        rows.append(_ci_row(exp, "lcm_loss_at_most_mu", "PLT at 0.01 % loss: the LCM's own loss rate (lost / sent)",
                            "the LCM limits its loss rate to at most the target mu = 0.5 % (sect. 3.1)",
                            d["lcm_loss"], scale=100, unit=" %", clip=NONNEG,
                            note="if differs: the rule adds 10 % of the window per 100 ms epoch while P < mu, and the losses of an "
                            "overflow reach the sender a round trip (1.5-2 epochs with a full LCM queue) later; the EMA then keeps P above "
                            "mu for several epochs. The rule oscillates about the point where the LCM's buffer overflows, and its "
                            "average loss rate is set by that cycle, not by mu."))
    return rows


def _windows_plot(pairs, out: Path, name: str, title: str) -> str:
    """HCM and LCM windows of the first seed's PLT run at each loss rate."""
    fig, ax = figs.new(len(pairs), 1, w=11, h=3.0)
    for k, (p, r) in enumerate(pairs):
        s = _series(r, 0)
        ax[k][0].plot(s["time_s"], s["hcm_cwnd_pkts"], lw=0.8, label="HCM (Reno) cwnd")
        ax[k][0].plot(s["time_s"], s["lcm_cwnd_pkts"], lw=0.8, label="LCM cwnd")
        ax[k][0].set_ylabel("packets")
        ax[k][0].set_title(f"{title}, loss {_loss_label(_loss(p))} (seed {p.seed})")
        ax[k][0].legend(fontsize=8, loc="upper right")
    ax[-1][0].set_xlabel("time (s)")
    return figs.save(fig, out, name)


def _sensitivity_rows(exp, runs: Runs, table, *, small: bool) -> list[Row]:
    """The goodput claims of Fig. 3 (or 6) again for each sensitivity run
    (SENSITIVITY), against the same TCP runs, as scope = "sensitivity" rows
    under criteria that mirror the claims' (suffixed)."""
    rows: list[Row] = []
    for variant, (suffix, note) in SENSITIVITY.items():
        pairs = [(p, r) for p, r in runs.pairs if _variant(p) == variant]
        if not pairs:
            continue
        vt = _sweep(Runs(pairs))
        for (_, x), d in sorted(vt.items(), key=lambda kv: kv[0][1]):
            g = "zero loss" if x == 0 else f"loss {_loss_label(x)}"
            if x == 0:
                rows.append(_ci_row(exp, "plt_goodput_zero_loss" + suffix, f"PLT ({variant}), zero loss: goodput fraction",
                                    f"high goodput ({'Fig. 6' if small else 'Fig. 3'}): at least 0.9 of the link", d["frac"], group=g,
                                    extra=f" = {_mbps(ci95(d['gbps']))}{_either(d)}", note=note, clip=NONNEG))
                if small:
                    rows.append(_ci_row(exp, "lcm_share_zero_loss" + suffix, f"PLT ({variant}), zero loss: the LCM's share of the goodput",
                                        "a sizeable share (0.1 to 0.6)", d["lcm_share"], group=g, note=note, clip=FRACTION))
            elif x < MU:
                rows.append(_ci_row(exp, "plt_high_goodput_lossy" + suffix, f"PLT ({variant}) at loss {_loss_label(x)}: goodput fraction",
                                    "very high goodputs even at non-zero loss rates (at least 0.9)", d["frac"], group=g,
                                    extra=f" = {_mbps(ci95(d['gbps']))}; the LCM's share {np.mean(d['lcm_share']):.3f}{_either(d)}",
                                    note=note, clip=NONNEG))
            if ("reno", x) in table:
                rows.append(_sep_row(exp, "plt_above_tcp" + suffix, f"PLT ({variant}) against TCP at {g}",
                                     "PLT's goodput above TCP's" if not small else "PLT exhibits much higher goodputs than legacy TCP (Fig. 6)",
                                     d["gbps"], table[("reno", x)]["gbps"], ("PLT", "TCP"), group=g, note=note))
    return rows


def _adopted(runs: Runs) -> Runs:
    """The runs of the adopted reading (no sensitivity runs)."""
    return Runs([(p, r) for p, r in runs.pairs if not _variant(p)])


def fig3_loss(runs: Runs, out: Path, exp) -> Section:
    """Figs. 3-5: the goodput sweep, then the two modules' windows (the PLT
    runs at zero loss and 1e-4, sampled every 100 ms); then the sensitivity
    rows."""
    everything, runs = runs, _adopted(runs)
    table = _sweep(runs)
    png = _sweep_plot(table, out, "plt_fig3.png", "Fig. 3: one flow, buffers of one BDP")
    rows = _goodput_rows(exp, table, small=False)
    wrows, wpng = _window_rows(exp, runs, out)
    rows += wrows + _sensitivity_rows(exp, everything, table, small=False)
    return Section("fig3_loss", exp.title, setup_text(exp), rows, [png] + ([wpng] if wpng else []), scenario_comment(exp))


def _one_bdp(p) -> bool:
    """The small-buffer file's reference run: Figs. 4-5's buffer of one BDP."""
    return str(_bn(p).get("queue")) == "1bdp"


def _window_measures(p, r) -> dict[str, float]:
    """What the window rows of Figs. 4-5 and 7-8 read from one PLT run, over
    its measurement window: the HCM's mean window and the fraction of the
    time it is below the BDP (the queue holds none of its packets), both
    per BDP; the LCM's share of the goodput; the fraction of the HCM's
    halvings followed within 30 s by an LCM window above 10 packets."""
    s = _series(r, 0)
    t0 = _secs(p.scenario["run"]["measure_from"])
    m = s["time_s"] > t0
    bdp = _bdp_pkts(p, r)
    n, k = _rises_after_halvings(s, t0)
    return {"hcm_w": float(np.nanmean(s["hcm_cwnd_pkts"][m])) / bdp, "below_bdp": float(np.mean(s["hcm_cwnd_pkts"][m] < bdp)),
            "lcm_share": _lcm_share(r.summary["flows"][0]), "rises": k / n if n else float("nan"), "halvings": float(n)}


def _small_window_rows(exp, runs: Runs) -> list[Row]:
    """Figs. 7-8: PLT's windows with the small buffer against the one-BDP
    reference at zero loss (the paper: the LCM's role "more pronounced"),
    and at 1e-4 as Figs. 4-5 (the HCM small, the LCM's share large), each
    with zero loss as its control."""
    by: dict[str, dict[str, list[float]]] = {}
    for p, r in sorted(runs.pairs, key=lambda q: q[0].seed):
        if _cc(p) != "plt" or _variant(p) or _loss(p) not in (0.0, 1e-4):
            continue
        key = "large" if _one_bdp(p) else ("zero" if _loss(p) == 0.0 else "1e-4")
        d = by.setdefault(key, {})
        for name, v in _window_measures(p, r).items():
            d.setdefault(name, []).append(v)
    rows: list[Row] = []
    z, big, l4 = by.get("zero"), by.get("large"), by.get("1e-4")
    if z and big:
        for cid, name, item, paper in (
            ("hcm_gaps_small_buffer", "below_bdp", "Fig. 7, zero loss: fraction of the time the HCM's window is below the BDP (none of its packets queued)",
             "TCP's inability to keep the bottleneck buffer full at times (sect. 4.2): more with 10 % of the BDP than with one BDP"),
            ("lcm_more_pronounced", "lcm_share", "Fig. 8, zero loss: the LCM's share of the goodput",
             "the role of LCM at zero loss rate is more pronounced (sect. 4.2): larger with 10 % of the BDP than with one BDP"),
            ("lcm_exploits_gaps", "rises", "Fig. 8, zero loss: fraction of HCM halvings followed within 30 s by an LCM window above 10 packets",
             "the LCM exploits TCP's inability to keep the buffer full (sect. 4.2): more often with 10 % of the BDP than with one BDP"),
        ):
            extra = f" (halvings per run: {np.mean(z['halvings']):.1f} and {np.mean(big['halvings']):.1f})" if name == "rises" else ""
            note = ""
            if name == "rises":
                note = (f"if differs: the count says whether the LCM's window passes 10 packets after a halving, not for how long; "
                        f"its share of the goodput over the run is {np.mean(z['lcm_share']):.3g} with 0.1 BDP against "
                        f"{np.mean(big['lcm_share']):.3g} with one BDP (the row above).")
            rows.append(_sep_row(exp, cid, item, paper, z[name], big[name], ("0.1 BDP", "1 BDP"), group="zero loss", extra=extra,
                                 scale=1.0, unit="", note=note))
    if l4:
        rows.append(_ci_row(exp, "hcm_small_lossy", "Fig. 7, loss 1e-4: the HCM's mean window as a fraction of the BDP",
                            "with non-zero loss rates the HCM never fills the queue: far below the BDP (at most 0.2)", l4["hcm_w"], clip=NONNEG))
        if z:
            rows.append(_ci_row(exp, "hcm_small_lossy_ctl", "Fig. 7, zero loss: the HCM's mean window as a fraction of the BDP",
                                "(the control of the row above: at zero loss the HCM fills what the buffer lets it)", z["hcm_w"], clip=NONNEG))
        rows.append(_ci_row(exp, "lcm_share_lossy", "Fig. 8, loss 1e-4: the LCM's share of the goodput",
                            "the LCM kicks in and utilizes the available capacity: at least 0.8", l4["lcm_share"], clip=FRACTION))
        if z:
            rows.append(_ci_row(exp, "lcm_share_lossy_ctl", "Fig. 8, zero loss: the LCM's share of the goodput",
                                "(the control of the row above: at zero loss the HCM carries most)", z["lcm_share"], clip=FRACTION))
    return rows


def fig6_8_small_buffer(runs: Runs, out: Path, exp) -> Section:
    everything = runs
    runs = Runs([(p, r) for p, r in _adopted(runs).pairs if not _one_bdp(p)])
    table = _sweep(runs)
    png = _sweep_plot(table, out, "plt_fig6.png", "Fig. 6: one flow, buffers of 10 % of the BDP")
    sens = Runs([(p, r) for p, r in everything.pairs if not _one_bdp(p)])
    rows = _goodput_rows(exp, table, small=True) + _small_window_rows(exp, everything) + _sensitivity_rows(exp, sens, table, small=True)
    first = sorted(((p, r) for p, r in runs.pairs if _cc(p) == "plt" and _loss(p) in (0.0, 1e-4)), key=lambda q: (_loss(q[0]), q[0].seed))
    pairs = []
    for x in (0.0, 1e-4):
        pairs += [q for q in first if _loss(q[0]) == x][:1]
    figures = [png]
    if pairs:
        figures.append(_windows_plot(pairs, out, "plt_fig7_8.png", "Figs. 7-8: HCM and LCM windows, buffers of 10 % of the BDP"))
    return Section("fig6_8_small_buffer", exp.title, setup_text(exp), rows, figures, scenario_comment(exp))


# ---- Figs. 4-5: the windows with large buffers --------------------------------------


def _bdp_pkts(p, res) -> float:
    size, _ = _packet(p)
    rtt = max(f["base_rtt_ms"] for f in res.summary["flows"]) / 1000
    return _rate(p) * rtt / (8 * size)


def _rises_after_halvings(s: dict[str, np.ndarray], t_from: float, level: float = 10.0, within_s: float = 30.0) -> tuple[int, int]:
    """(halvings of the HCM window after ``t_from``, those followed within
    ``within_s`` by an LCM window above ``level`` packets)."""
    t, h, lw = s["time_s"], s["hcm_cwnd_pkts"], s["lcm_cwnd_pkts"]
    n = rises = 0
    i = 1
    while i < len(t):
        if t[i] > t_from and h[i - 1] > 0 and h[i] < 0.7 * h[i - 1]:
            n += 1
            m = (t > t[i]) & (t <= t[i] + within_s)
            if m.any() and np.nanmax(lw[m]) > level:
                rises += 1
            i = int(np.searchsorted(t, t[i] + within_s))  # one halving per recovery
            continue
        i += 1
    return n, rises


def _longest_stall(s: dict[str, np.ndarray], t_from: float) -> float:
    """The longest run of samples after ``t_from`` in which the connection
    delivered nothing in order while its modules delivered data (seconds)."""
    t = s["time_s"]
    m = t > t_from
    stalled = (s["goodput_bps"][m] <= 0) & ((s["hcm_goodput_bps"][m] + s["lcm_goodput_bps"][m]) > 0)
    tt = t[m]
    if len(tt) < 2:
        return float("nan")
    dt = float(tt[1] - tt[0])
    best = run = 0
    for v in stalled:
        run = run + 1 if v else 0
        best = max(best, run)
    return best * dt


def _window_rows(exp, runs: Runs, out: Path) -> tuple[list[Row], str | None]:
    """Figs. 4-5: the rows on the HCM's and the LCM's windows, from the PLT
    runs at zero loss and at 1e-4; each claim paired with the same check at
    the other loss rate (the condition the paper says differs)."""
    by: dict[float, dict[str, list[float]]] = {}
    detail: dict[float, list[str]] = {}
    for p, r in runs.pairs:
        x = _loss(p)
        if _cc(p) != "plt" or x not in (0.0, 1e-4):
            continue
        f = r.summary["flows"][0]
        s = _series(r, 0)
        t0 = _secs(p.scenario["run"]["measure_from"])
        m = s["time_s"] > t0
        bdp = _bdp_pkts(p, r)
        q = _link(r, "bottleneck")
        d = by.setdefault(x, {"lcm_share": [], "queue": [], "low": [], "rises": [], "hcm_w": [], "floor": [], "stall": []})
        d["stall"].append(_longest_stall(s, t0))
        d["lcm_share"].append(_lcm_share(f))
        # links.parquet has the queue of both classes together. The HCM's
        # standing queue is what its window holds beyond the path's BDP
        # (its ACK clock keeps a BDP in flight); the rest is low priority.
        own = np.maximum(s["hcm_cwnd_pkts"][m] - bdp, 0.0)
        tq = np.interp(s["time_s"][m], q["time_s"], q["queue_pkts"])
        d["queue"].append(float(own.mean()) / bdp)
        d["low"].append(float(np.maximum(tq - own, 0.0).mean()) / bdp)
        d["hcm_w"].append(float(np.nanmean(s["hcm_cwnd_pkts"][m])) / bdp)
        d["floor"].append(float(np.mean(s["lcm_cwnd_pkts"][m] <= 2.0)))
        n, k = _rises_after_halvings(s, t0)
        d["rises"].append(k / n if n else float("nan"))
        detail.setdefault(x, []).append(f"seed {p.seed}: {k} of {n}")
    rows: list[Row] = []
    z, l4 = by.get(0.0), by.get(1e-4)
    if z is not None:
        rows.append(_ci_row(exp, "lcm_share_zero_loss", "Fig. 5, zero loss: the LCM's share of the goodput",
                            "the LCM backs off while the HCM fills the queue: at most 5 %", z["lcm_share"], clip=FRACTION))
        if l4 is not None:
            rows.append(_ci_row(exp, "lcm_share_zero_loss_ctl", "Fig. 5, loss 1e-4: the LCM's share of the goodput",
                                "(the control of the row above: at 1e-4 the paper says the LCM kicks in)", l4["lcm_share"], clip=FRACTION))
        rows.append(_ci_row(exp, "hcm_fills_queue_zero_loss",
                            "Fig. 4, zero loss: the HCM's standing queue (its window beyond the BDP), mean, as a fraction of its buffer (one BDP)",
                            "the HCM (Reno) fills the bottleneck queue: at least a quarter on average", z["queue"], clip=NONNEG))
        if l4 is not None:
            rows.append(_ci_row(exp, "hcm_fills_queue_zero_loss_ctl", "Fig. 4, loss 1e-4: the HCM's standing queue, as a fraction of its buffer",
                                "(the control of the row above: with loss the HCM never fills the queue)", l4["queue"], clip=NONNEG))
        m_low = ci95(z["low"])
        rows.append(Row("Fig. 5, zero loss: packets waiting in the low-priority buffer (the queue of both classes less the HCM's), mean, as a "
                        "fraction of that buffer (one BDP)", "LCM packets cannot make it to the receiver while the HCM fills the queue",
                        fmt_ci(m_low, digits=3), m_low[0], NONE,
                        "The LCM's first window (one BDP, sent at the start) waits in the low-priority buffer, which is served only when "
                        "class 0 is empty: Reno's queue empties only for moments after its halvings, so most of the first window stays "
                        "there all run (the HCM resent it after the LCM's timeout), the buffer stays full, and later LCM probes are "
                        "dropped on arrival."))
        rows.append(_ci_row(exp, "lcm_rises_after_halvings", "Fig. 5, zero loss: fraction of HCM halvings followed within 30 s by an LCM window above 10 packets",
                            "the LCM window increases during those times when the HCM is not filling the queue (after a cutback): "
                            "at least half of them", z["rises"], extra=" (" + "; ".join(detail[0.0]) + ")", clip=FRACTION,
                            note="if differs: with a buffer of one BDP, Reno's halving from 2 BDP to 1 BDP leaves the link just full, so "
                            "little capacity is ever spare; what low-priority time there is goes first to the stale packets of the "
                            "LCM's first window still in its buffer (previous row); and the starved LCM, at its floor of one packet, "
                            "has its retransmission timer backed off (up to max_rto, 60 s), so it is rarely probing when a gap opens."))
        rows.append(_ci_row(exp, "lcm_at_floor_zero_loss", "Fig. 5, zero loss: fraction of the time the LCM window is at most 2 packets",
                            "the LCM cuts back successively till its window goes below one: most of the time (at least 0.8)",
                            z["floor"], clip=FRACTION))
        if l4 is not None:
            rows.append(_ci_row(exp, "lcm_at_floor_zero_loss_ctl", "Fig. 5, loss 1e-4: fraction of the time the LCM window is at most 2 packets",
                                "(the control of the row above: with loss the LCM kicks in)", l4["floor"], clip=FRACTION))
    for x in sorted(by):
        lab = "zero loss" if x == 0 else "loss " + _loss_label(x)
        rows.append(_ci_row(exp, "plt_stall_at_most_1s", f"{lab}: longest stall of PLT's in-order delivery "
                            "(samples of 100 ms with no in-order goodput while the modules deliver data)",
                            "PLT never does worse than TCP (sect. 1), whose in-order delivery stops only for a fast "
                            "recovery or an RTO: at most 1 s", by[x]["stall"], group=lab, unit=" s", clip=NONNEG,
                            note="if differs: the LCM's losses reach the HCM only when the LCM finds them. A packet the LCM sends at its "
                            "floor of one into a full low-priority buffer is dropped with nothing after it to reveal the loss, so "
                            "only its retransmission timer does, backed off up to max_rto (60 s); the connection's in-order "
                            "delivery waits that long for the hole while the HCM's data piles up behind it."))
    if l4 is not None:
        rows.append(_ci_row(exp, "hcm_small_lossy", "Fig. 4, loss 1e-4: the HCM's mean window as a fraction of the BDP",
                            "with non-zero loss rates the HCM never fills the queue: far below the BDP (at most 0.2)", l4["hcm_w"], clip=NONNEG))
        if z is not None:
            rows.append(_ci_row(exp, "hcm_small_lossy_ctl", "Fig. 4, zero loss: the HCM's mean window as a fraction of the BDP",
                                "(the control of the row above: at zero loss the HCM fills the queue)", z["hcm_w"], clip=NONNEG))
        rows.append(_ci_row(exp, "lcm_share_lossy", "Fig. 5, loss 1e-4: the LCM's share of the goodput",
                            "the LCM kicks in and utilizes the available capacity: at least 0.8", l4["lcm_share"], clip=FRACTION))
        if z is not None:
            rows.append(_ci_row(exp, "lcm_share_lossy_ctl", "Fig. 5, zero loss: the LCM's share of the goodput",
                                "(the control of the row above: at zero loss the LCM backs off)", z["lcm_share"], clip=FRACTION))
    pairs = []
    for x in sorted(by):
        pairs += sorted(((p, r) for p, r in runs.pairs if _cc(p) == "plt" and _loss(p) == x), key=lambda q: q[0].seed)[:1]
    png = _windows_plot(pairs, out, "plt_fig4_5.png", "Figs. 4-5: HCM and LCM windows, buffers of one BDP") if pairs else None
    return rows, png


# ---- Fig. 9: short flows ---------------------------------------------------------


def _rtt_s(p) -> float:
    net = p.scenario["network"]
    acc = _secs(net.get("access", {}).get("delay", "0s"))
    return 2 * (_secs(net["bottleneck"]["delay"]) + 2 * acc)


def _normalized_fct(p, r) -> tuple[np.ndarray, np.ndarray, int, np.ndarray]:
    """(per transfer: (completion time - size on the wire / bottleneck rate) / RTT,
    with inf for one not completed; sizes in packets; transfers counted; their start times)."""
    sf = p.scenario["short_flows"][0]
    t0 = _secs(p.scenario["run"]["measure_from"])
    t1 = _secs(sf.get("stop", p.scenario["run"]["duration"]))
    d = r.transfers.select(["start_s", "size_bytes", "fct_s"]).to_pydict()
    st = np.asarray(d["start_s"], dtype=float)
    sz = np.asarray(d["size_bytes"], dtype=float)
    fct = np.asarray(d["fct_s"], dtype=float)
    m = (st >= t0) & (st < t1)
    size, hdr = _packet(p, "short_flows")
    pkts = np.ceil(sz[m] / (size - hdr))
    tx = pkts * size * 8 / _rate(p)
    x = (fct[m] - tx) / _rtt_s(p)
    x[~np.isfinite(x)] = np.inf
    return x, pkts, int(m.sum()), st[m]


def fig9_short_flows(runs: Runs, out: Path, exp) -> Section:
    by: dict[str, dict[str, list[float]]] = {}
    first: dict[str, tuple] = {}
    for p, r in sorted(runs.pairs, key=lambda q: q[0].seed):
        cc = p.scenario["short_flows"][0]["cc"]
        x, pkts, n, st = _normalized_fct(p, r)
        sf = p.scenario["short_flows"][0]
        t0 = _secs(p.scenario["run"]["measure_from"])
        mid = (t0 + _secs(sf.get("stop", p.scenario["run"]["duration"]))) / 2
        late = st >= mid
        d = by.setdefault(cc, {"one": [], "two": [], "median": [], "open": [], "n": [], "one_half": [], "two_half": []})
        d["one"].append(float(np.mean(x <= 1.1)) if n else float("nan"))
        d["two"].append(float(np.mean(x >= 2.0)) if n else float("nan"))
        d["one_half"].append(float(np.mean(x[late] <= 1.1)) if late.any() else float("nan"))
        d["two_half"].append(float(np.mean(x[late] >= 2.0)) if late.any() else float("nan"))
        d["median"].append(float(np.median(x)) if n else float("nan"))
        d["open"].append(float(np.mean(~np.isfinite(x))) if n else float("nan"))
        d["n"].append(n)
        first.setdefault(cc, (x, pkts, p.seed))
    rows: list[Row] = []

    def tail(cc: str, key: str) -> str:
        d = by[cc]
        return (f" ({int(np.mean(d['n']))} transfers a run; not completed by the end: {np.mean(d['open']) * 100:.2f} %)"
                + _half_text(d[key], d[key + "_half"], scale=1.0, unit="", digits=3).replace("second half of the window", "transfers started in the second half").replace(" (sampled)", ""))

    if "plt" in by:
        rows.append(_ci_row(exp, "plt_one_rtt", "PLT: fraction of transfers done within one RTT (+ their own transfer time, + 10 %)",
                            "more than 90 % of the PLT flows complete within a single RTT", by["plt"]["one"], extra=tail("plt", "one"), clip=FRACTION,
                            note="if differs: the LCM's first window (one BDP) lets a single large transfer fill the low-priority "
                            "buffer, and the short transfers' LCM packets behind it are lost; each such loss waits for the LCM to find it "
                            "and the HCM to resend it, one or more further RTTs. When the lost packets are a transfer's last, nothing "
                            "after them reveals the loss, and the LCM's timer, with no RTT sample yet in so short a transfer, runs the "
                            "initial RTO (3 s under the ns2 profile, about 40 RTTs: the step in the distribution)."))
        if "reno" in by:
            rows.append(_ci_row(exp, "tcp_one_rtt_ctl", "TCP: fraction of transfers done within one RTT (+ their own transfer time, + 10 %)",
                                "(the control of PLT's row above: TCP takes two or more RTTs)", by["reno"]["one"], clip=FRACTION))
    if "reno" in by:
        rows.append(_ci_row(exp, "tcp_two_rtts", "TCP: fraction of transfers needing at least two RTTs (+ their transfer time)",
                            "TCP takes two or more RTTs to complete flows with similar sizes (at least 90 %)", by["reno"]["two"],
                            extra=tail("reno", "two"), clip=FRACTION))
        if "plt" in by:
            rows.append(_ci_row(exp, "plt_two_rtts_ctl", "PLT: fraction of transfers needing at least two RTTs (+ their transfer time)",
                                "(the control of TCP's row above: PLT's flows complete within one RTT)", by["plt"]["two"], clip=FRACTION))
    if "plt" in by and "reno" in by:
        rows.append(_sep_row(exp, "plt_faster_than_tcp", "median completion time in RTTs (less transfer time), PLT against TCP",
                             "PLT's short flows complete faster than TCP's", by["plt"]["median"], by["reno"]["median"], ("PLT", "TCP"),
                             scale=1.0, unit=" RTT"))
    fig, ax = figs.new(1, 2, w=14, h=3.8)
    for cc, (x, pkts, seed) in first.items():
        xs = np.sort(np.where(np.isfinite(x), x, np.nan))
        xs = xs[np.isfinite(xs)]
        ax[0][0].plot(xs, np.arange(1, len(xs) + 1) / len(x), lw=1, label=f"{NAMES[cc]} (seed {seed})")
        order = np.argsort(pkts, kind="stable")
        step = max(len(order) // 4000, 1)
        sel = order[::step]
        ax[0][1].scatter(np.arange(len(order))[::step], np.minimum(x[sel], 100), s=2, alpha=0.5, label=NAMES[cc])
    for v in (1.1, 2.0):
        ax[0][0].axvline(v, color="gray", lw=0.8, ls="--")
    ax[0][0].set_xscale("log")
    ax[0][0].set_xlabel("(completion time - transfer time) / RTT")
    ax[0][0].set_ylabel("fraction of transfers")
    ax[0][0].set_title("Fig. 9: completion times, 1250 transfers/s, Pareto sizes of mean 25 packets")
    ax[0][0].legend(fontsize=8)
    ax[0][1].set_yscale("log")
    ax[0][1].set_xlabel("transfers in increasing order of size")
    ax[0][1].set_ylabel("(completion - transfer time) / RTT (100: not done)")
    ax[0][1].legend(fontsize=8, markerscale=4)
    png = figs.save(fig, out, "plt_fig9.png")
    return Section("fig9_short_flows", exp.title, setup_text(exp), rows, [png], scenario_comment(exp))


# ---- Fig. 10: two bottlenecks ----------------------------------------------------


def _udp_mbps(p) -> float:
    return _rate_bps(p.scenario["udp"][0]["rate"]) / 1e6


def _udp_label(v: float) -> str:
    return "0" if v < 0.01 else f"{v:g}"


def _hops(p) -> dict[str, tuple[int, int]]:
    """Flow name prefix -> (from, to) routers."""
    hops = p.scenario["network"].get("hops", 1)
    return {f.get("name", f["cc"]): (f.get("from", 0), f.get("to", hops)) for f in p.scenario["flows"]}


def fig10_multi_bottleneck(runs: Runs, out: Path, exp) -> Section:
    by: dict[tuple[str, float], dict[str, list[float]]] = {}
    for p, r in runs.pairs:
        cc, u = _cc(p), _udp_mbps(p)
        paths = _hops(p)
        # lcm_losses_resent counts over the whole run: against the whole run's capacity.
        size, _ = _packet(p)
        cap_pkts = _rate(p) * _secs(p.scenario["run"]["duration"]) / (8 * size)
        d = by.setdefault((cc, u), {"u1": [], "u2": [], "umin": [], "umean": [], "resent": [], "gbps": [], "umin_all": [], "umin_half": []})
        # Each hop's utilization over the measurement window, and over its
        # second half (the steady-state check), from the sampled series.
        t0, t1 = _secs(p.scenario["run"].get("measure_from", "0s")), _secs(p.scenario["run"]["duration"])
        win = []
        for a_, b_ in ((t0, t1), ((t0 + t1) / 2, t1)):
            us = []
            for hop in ("hop1", "hop2"):
                ls = _link(r, hop)
                m = (ls["time_s"] > a_) & (ls["time_s"] <= b_)
                us.append(float(np.mean(ls["utilization"][m])) if m.any() else float("nan"))
            win.append(us)
        u1, u2 = win[0]
        d["u1"].append(u1)
        d["u2"].append(u2)
        d["umin"].append(min(u1, u2))
        d["umean"].append((u1 + u2) / 2)
        d["umin_all"].append(min(u1, u2))
        d["umin_half"].append(min(win[1]))
        resent = {1: 0, 2: 0}
        gp = 0.0
        for f in r.summary["flows"]:
            prefix = f["name"].split(".")[0]
            if prefix not in paths:
                continue  # the UDP source
            gp += f["goodput_bps"]
            a, b = paths[prefix]
            for h in (1, 2):
                if a < h <= b:
                    resent[h] += f.get("lcm_losses_resent") or 0
        d["resent"].append(max(resent.values()) / cap_pkts)
        d["gbps"].append(gp)
    rates = sorted({u for _, u in by})
    rows: list[Row] = []
    for u in rates:
        g = f"UDP {_udp_label(u)} Mbit/s"
        if ("plt", u) in by:
            d = by[("plt", u)]
            rows.append(_ci_row(exp, "plt_util_both_hops", f"PLT, UDP {_udp_label(u)} Mbit/s: utilization of the less used hop",
                                "PLT yields about 90 % average utilization in both bottleneck links even at high UDP rates (at least 0.85)",
                                d["umin"], group=g, clip=(0.0, 1.001),
                                extra=f" (hop 1 {np.mean(d['u1']):.3f}, hop 2 {np.mean(d['u2']):.3f})"
                                + _half_text(d["umin_all"], d["umin_half"], scale=1.0, unit="", digits=3).replace(" (sampled)", "")))
        if ("reno", u) in by:
            d = by[("reno", u)]
            rows.append(_ci_row(exp, "tcp_util_both_hops_ctl", f"TCP, UDP {_udp_label(u)} Mbit/s: utilization of the less used hop",
                                "(the control of PLT's row above: TCP's cutbacks lower the utilization)", d["umin"], group=g, clip=(0.0, 1.001),
                                extra=f" (hop 1 {np.mean(d['u1']):.3f}, hop 2 {np.mean(d['u2']):.3f})"
                                + _half_text(d["umin_all"], d["umin_half"], scale=1.0, unit="", digits=3).replace(" (sampled)", "")))
    u50 = [u for u in rates if abs(u - 50) < 1e-9]
    for u in u50:
        if ("plt", u) in by and ("reno", u) in by:
            a, b = by[("plt", u)]["umean"], by[("reno", u)]["umean"]
            rows.append(_diff_row(exp, "util_gain_udp50", "UDP 50 Mbit/s: PLT's utilization minus TCP's (mean of the two hops)",
                                  "a 20 % utilization increase with PLT (0.2 +- 50 %)", a, b,
                                  extra=f" (PLT {np.mean(a):.3f}, TCP {np.mean(b):.3f})"))
            rows.append(_sep_row(exp, "plt_util_above_tcp", "UDP 50 Mbit/s: PLT's utilization against TCP's (mean of the two hops)",
                                 "PLT above TCP", a, b, ("PLT", "TCP"), scale=1.0, unit=""))
    for u in rates:
        if ("plt", u) in by:
            rows.append(_ci_row(exp, "resent_below_1pct",
                                f"PLT, UDP {_udp_label(u)} Mbit/s: LCM losses the HCM resent, as a fraction of a hop's capacity in packets (the hop with more)",
                                "the retransmissions of LCM packets at the HCM account for less than 1 % of the bottleneck bandwidth",
                                by[("plt", u)]["resent"], group=f"UDP {_udp_label(u)} Mbit/s", scale=100, unit=" %", clip=NONNEG,
                                note="if differs: with 250 packets of low-priority buffer per hop the LCM's window, growing 10 % an epoch "
                                "until the loss average passes mu, overflows it by more than mu on average (see the LCM loss rate "
                                "row of Fig. 3), and every LCM loss is resent by the HCM."))
    fig, ax = figs.new(1, 2, w=14, h=3.8)
    xs = np.arange(len(rates))
    for k, (cc, hop) in enumerate((("plt", "u1"), ("plt", "u2"), ("reno", "u1"), ("reno", "u2"))):
        m, e = [], []
        for u in rates:
            st = ci95(by[(cc, u)][hop]) if (cc, u) in by else (float("nan"),) * 4
            m.append(st[0])
            e.append(st[2] - st[0] if math.isfinite(st[2]) else 0)
        ax[0][0].bar(xs + (k - 1.5) * 0.2, m, width=0.2, yerr=e, capsize=2, label=f"{NAMES[cc]}, hop {hop[1]}")
    ax[0][0].axhline(0.9, color="gray", ls="--", lw=0.8)
    ax[0][0].set_xticks(xs)
    ax[0][0].set_xticklabels([_udp_label(u) for u in rates])
    ax[0][0].set_xlabel("UDP rate on hop 2 (Mbit/s)")
    ax[0][0].set_ylabel("utilization over the window")
    ax[0][0].set_ylim(0, 1.05)
    ax[0][0].set_title("Fig. 10: nine transfers over two hops in series")
    ax[0][0].legend(fontsize=7, loc="lower left")
    ax[0][1].bar(xs, [np.mean(by[("plt", u)]["resent"]) * 100 if ("plt", u) in by else 0 for u in rates])
    ax[0][1].axhline(1.0, color="C3", ls="--", lw=1, label="1 % (the paper)")
    ax[0][1].set_xticks(xs)
    ax[0][1].set_xticklabels([_udp_label(u) for u in rates])
    ax[0][1].set_xlabel("UDP rate on hop 2 (Mbit/s)")
    ax[0][1].set_ylabel("LCM losses resent by the HCM (% of a hop)")
    ax[0][1].legend(fontsize=8)
    png = figs.save(fig, out, "plt_fig10.png")
    return Section("fig10_multi_bottleneck", exp.title, setup_text(exp), rows, [png], scenario_comment(exp))


# ---- non-interference ------------------------------------------------------------


def _ni_case(p) -> str:
    extra = p.scenario["flows"][1]
    udp = _rate_bps(p.scenario["udp"][0]["rate"])
    if udp > 1e6:
        return "cbr"
    if "size" in extra:
        return "none"
    return extra["cc"]


CASE_NAMES = {"none": "no extra flow", "reno": "a Reno flow", "plt": "a PLT flow", "scalable": "a Scalable TCP flow (class 0)",
              "cbr": "constant-rate UDP of 200 Mbit/s (class 0)"}


def noninterference(runs: Runs, out: Path, exp) -> Section:
    sums: dict[tuple[float, str], dict[int, float]] = {}
    sums_all: dict[tuple[float, str], dict[int, float]] = {}
    sums_half: dict[tuple[float, str], dict[int, float]] = {}
    extra: dict[tuple[float, str], list[tuple[float, float]]] = {}
    n_tcp = 0
    for p, r in runs.pairs:
        key = (_loss(p), _ni_case(p))
        idx = [i for i, f in enumerate(r.summary["flows"]) if f["name"].startswith("tcp")]
        tcp = [r.summary["flows"][i]["goodput_bps"] for i in idx]
        n_tcp = len(tcp)
        sums.setdefault(key, {})[p.seed] = float(sum(tcp))
        whole, half = _halves(p, r, idx)
        sums_all.setdefault(key, {})[p.seed] = whole
        sums_half.setdefault(key, {})[p.seed] = half
        e = [f for f in r.summary["flows"] if f["name"].startswith("extra")][0]
        extra.setdefault(key, []).append((e["goodput_bps"], _lcm_share(e)))

    def ratio(loss: float, case: str, base: str, src: dict = sums) -> list[float]:
        a, b = src.get((loss, case), {}), src.get((loss, base), {})
        return [a[s] / b[s] if b[s] > 0 else float("inf") for s in sorted(set(a) & set(b))]

    def ctx(loss: float, case: str, base: str) -> str:
        a, b = sums[(loss, case)], sums[(loss, base)]
        s = f"; the {n_tcp} Reno flows: {_mbps(ci95(list(a.values())))} with {CASE_NAMES[case]}, {_mbps(ci95(list(b.values())))} with {CASE_NAMES[base]}"
        if case == "plt":
            g = [x for x, _ in extra[(loss, case)]]
            sh = [y for _, y in extra[(loss, case)]]
            s += f"; the PLT flow itself {np.mean(g) / 1e6:.1f} Mbit/s, {_nanmean(sh) * 100:.0f} % of it through the LCM"
        return s + _half_text(ratio(loss, case, base, sums_all), ratio(loss, case, base, sums_half), scale=1.0, unit="", digits=4)

    rows: list[Row] = []
    noisy = ("The ratio is taken seed by seed: the same seed gives the Reno flows the same start times and RTTs in both runs, but "
             "once the extra flow's packets share the random draws (losses) the runs part ways, and at zero loss which Reno flow "
             "gets ahead of which varies; the interval is over the seeds.")
    for loss in sorted({k[0] for k in sums}):
        lab = "zero loss" if loss == 0 else f"loss {_loss_label(loss)}"
        if (loss, "plt") in sums and (loss, "reno") in sums:
            rows.append(_ci_row(exp, "ni_plt_vs_reno", f"{lab}: the {n_tcp} Reno flows' goodput with a PLT flow / with a Reno flow in its place (per seed)",
                                "the low-priority flow never interferes with TCP: PLT is no worse for TCP than a TCP flow (within 5 %)",
                                ratio(loss, "plt", "reno"), group=lab, digits=4, extra=ctx(loss, "plt", "reno"), note=noisy, clip=NONNEG))
        neg = "scalable" if (loss, "scalable") in sums else "cbr"
        if (loss, neg) in sums and (loss, "reno") in sums:
            rows.append(_ci_row(exp, "ni_aggressive_vs_reno_ctl",
                                f"{lab}: the {n_tcp} Reno flows' goodput with {CASE_NAMES[neg]} / with a Reno flow in its place",
                                "(the control of the row above: an aggressive flow at TCP's own priority does interfere)",
                                ratio(loss, neg, "reno"), group=lab, digits=4, extra=ctx(loss, neg, "reno"), clip=NONNEG))
        if (loss, "plt") in sums and (loss, "none") in sums:
            rows.append(_ci_row(exp, "ni_plt_vs_none", f"{lab}: the {n_tcp} Reno flows' goodput with a PLT flow / without it (per seed)",
                                "with loss-limited TCP the link has room for the HCM, and the LCM uses only what TCP leaves: within 5 %",
                                ratio(loss, "plt", "none"), group=lab, digits=4, extra=ctx(loss, "plt", "none"), note=noisy, clip=NONNEG))
        if (loss, "cbr") in sums and (loss, "none") in sums:
            rows.append(_ci_row(exp, "ni_udp_vs_none_ctl", f"{lab}: the {n_tcp} Reno flows' goodput with {CASE_NAMES['cbr']} / without it",
                                "(the control of the row above: a constant-rate flow at TCP's own priority does interfere)",
                                ratio(loss, "cbr", "none"), group=lab, digits=4, extra=ctx(loss, "cbr", "none"), clip=NONNEG))
        if (loss, "reno") in sums and (loss, "none") in sums:
            rows.append(_ci_row(exp, "ni_reno_vs_none", f"{lab}: the {n_tcp} Reno flows' goodput with one more Reno flow / without it",
                                "the baseline's premise: loss-limited TCP flows leave the link mostly idle, so one more does not "
                                "interfere (within 5 %)", ratio(loss, "reno", "none"), group=lab, digits=4, extra=ctx(loss, "reno", "none"),
                                note=noisy, clip=NONNEG))
    fig, ax = figs.new(1, 2, w=14, h=3.8)
    order = ["none", "reno", "plt", "scalable", "cbr"]
    losses = sorted({k[0] for k in sums})
    for j, loss in enumerate(losses):
        cases = [c for c in order if (loss, c) in sums]
        st = [ci95(list(sums[(loss, c)].values())) for c in cases]
        ax[0][j].bar(range(len(cases)), [s[0] / 1e6 for s in st], yerr=[[(s[0] - s[1]) / 1e6 for s in st], [(s[2] - s[0]) / 1e6 for s in st]], capsize=3)
        ax[0][j].set_xticks(range(len(cases)))
        ax[0][j].set_xticklabels([{"none": "none", "reno": "+Reno", "plt": "+PLT", "scalable": "+Scalable", "cbr": "+UDP 200M"}[c] for c in cases])
        ax[0][j].set_ylabel(f"goodput of the {n_tcp} Reno flows (Mbit/s)")
        ax[0][j].set_title(f"Non-interference, {'zero loss' if loss == 0 else 'loss ' + _loss_label(loss)} (98.75 % intervals)")
        ax[0][j].grid(axis="y", alpha=0.3)
    png = figs.save(fig, out, "plt_noninterference.png")
    return Section("noninterference", exp.title, setup_text(exp), rows, [png], scenario_comment(exp))


# ---- open questions ----------------------------------------------------------------


def _either_half(p, r, flows: list[int]) -> list[float]:
    """Each flow's data first delivered by either module (bit/s; a TCP
    flow's goodput) over the second half of the measurement window, from
    the sampled series."""
    t0 = _secs(p.scenario["run"].get("measure_from", "0s"))
    t1 = _secs(p.scenario["run"]["duration"])
    mid = (t0 + t1) / 2
    out = []
    for f in flows:
        s = _series(r, f)
        m = (s["time_s"] > mid) & (s["time_s"] <= t1)
        v = s["hcm_goodput_bps"][m] + s["lcm_goodput_bps"][m] if _cc(p) == "plt" else s["goodput_bps"][m]
        out.append(float(np.mean(v)) if m.any() else float("nan"))
    return out


def _delivered(p, f: dict) -> float:
    """A flow's data first delivered by either module (bit/s); a TCP flow's goodput."""
    return f["hcm_goodput_bps"] + f["lcm_goodput_bps"] if _cc(p) == "plt" else f["goodput_bps"]


def fairness(runs: Runs, out: Path, exp) -> Section:
    rows: list[Row] = []
    by: dict[tuple[float, int, str], dict[str, list]] = {}
    for p, r in sorted(runs.pairs, key=lambda q: q[0].seed):
        fl = r.summary["flows"]
        # The data each flow got through the network: what either module
        # delivered first. The in-order goodput over a window also moves
        # with stalls of in-order delivery (an LCM loss found only by a
        # backed-off timeout) and the catch-up after them, so it is shown
        # but not judged.
        g = [_delivered(p, f) for f in fl]
        d = by.setdefault((_loss(p), len(fl), _cc(p)), {"jain": [], "jain_inorder": [], "jain_half": [], "shares": [], "first": None})
        d["jain"].append(jain(g))
        d["jain_inorder"].append(jain([f["goodput_bps"] for f in fl]))
        d["jain_half"].append(jain(_either_half(p, r, list(range(len(fl))))))
        d["shares"].append([_lcm_share(f) if _cc(p) == "plt" else float("nan") for f in fl])
        if d["first"] is None:
            if _cc(p) == "plt":
                parts = ([f["hcm_goodput_bps"] / 1e6 for f in fl], [f["lcm_goodput_bps"] / 1e6 for f in fl])
            else:
                parts = ([f["goodput_bps"] / 1e6 for f in fl], [0.0] * len(fl))
            d["first"] = (p.seed, parts[0], parts[1], g)
    keys = sorted(by, key=lambda k: (k[0], k[1], k[2] != "plt"))
    fig, ax = figs.new(1, len(keys), w=4 * len(keys), h=3.6)
    for k, key in enumerate(keys):
        loss, n, cc = key
        d = by[key]
        lab = f"{n} {'PLT' if cc == 'plt' else NAMES.get(cc, cc)} flows, {'zero loss' if loss == 0 else 'loss ' + _loss_label(loss)}"
        group = f"{n} flows, {'zero loss' if loss == 0 else 'loss ' + _loss_label(loss)}"
        seed, h, lw, g = d["first"]
        shares = "" if cc != "plt" else ", LCM shares " + ", ".join(f"{x:.2f}" for x in d["shares"][0])
        shown = (f" (seed {seed}: " + ", ".join(f"{x / 1e6:.1f}" for x in g) + " Mbit/s" + shares
                 + f"; Jain of the in-order goodputs over the seeds {fmt_ci(ci95(d['jain_inorder']), digits=3)})"
                 + _half_text(d["jain"], d["jain_half"], scale=1.0, unit="", digits=3).replace("over the whole (sampled)", "over the whole"))
        if cc != "plt":
            rows.append(_ci_row(exp, "scalable_fair_ctl", f"{lab}: Jain's index of their goodputs",
                                "(the control of the row above: MIMD at TCP's priority, which keeps its flows' window ratio)",
                                d["jain"], group=group, extra=shown, clip=FRACTION))
        else:
            rows.append(_ci_row(exp, "plt_fair_zero_loss" if loss == 0 else "plt_fair_lossy",
                                f"{lab}: Jain's index of the data each got through (first delivered by either module)",
                                "PLT remains fair (sect. 1; open question in sect. 5): at least 0.9", d["jain"], group=group, extra=shown,
                                clip=FRACTION,
                                note="if differs: the LCM's rule is multiplicative both ways (+10 % an epoch, x0.95), and flows that see the same "
                                "losses scale their windows by the same factors, which keeps their ratio; a later flow starts from the LCM's "
                                "initial window of one BDP, not from its fair share." if loss > 0 else
                                "if differs: at zero loss the LCMs starve and PLT is its HCM, Reno, whose flows with a tail-drop buffer of one "
                                "BDP and losses in the same round trip converge slowly."))
        ax[0][k].bar(range(len(h)), h, label="HCM" if cc == "plt" else NAMES.get(cc, cc))
        if cc == "plt":
            ax[0][k].bar(range(len(h)), lw, bottom=h, label="LCM")
        ax[0][k].set_title(f"{lab} (seed {seed})", fontsize=9)
        ax[0][k].set_xlabel("flow (in order of arrival)")
        ax[0][k].set_ylabel("goodput first delivered (Mbit/s)")
        ax[0][k].legend(fontsize=7)
    png = figs.save(fig, out, "plt_fairness.png")
    return Section("fairness", exp.title, setup_text(exp), rows, [png], scenario_comment(exp))


def hcm_variants(runs: Runs, out: Path, exp) -> Section:
    rows: list[Row] = []
    table: dict[tuple[str, str], dict[str, list]] = {}
    for p, r in runs.pairs:
        cond = "zero loss, buffers of 10 % of the BDP" if _loss(p) == 0 else f"loss {_loss_label(_loss(p))}, buffers of one BDP"
        f = r.summary["flows"][0]
        d = table.setdefault((cond, p.scenario["flows"][0]["plt"]["hcm"]),
                             {"frac": [], "gbps": [], "hcm": [], "lcm": [], "share": [], "fr": [], "whole": [], "half": []})
        d["frac"].append(f["goodput_bps"] / _max_goodput(p))
        d["gbps"].append(f["goodput_bps"])
        d["hcm"].append(f["hcm_goodput_bps"])
        d["lcm"].append(f["lcm_goodput_bps"])
        d["share"].append(_lcm_share(f))
        d["fr"].append(f.get("fast_recoveries") or 0)
        whole, half = _halves(p, r)
        d["whole"].append(whole / _max_goodput(p))
        d["half"].append(half / _max_goodput(p))
    conds = sorted({c for c, _ in table})
    hcms = [h for h in ("reno", "cubic", "fast") if any((c, h) in table for c in conds)]
    for c in conds:
        ref = table.get((c, "reno"))
        for h in hcms:
            if (c, h) not in table:
                continue
            d = table[(c, h)]
            shown = (f" = {_mbps(ci95(d['gbps']))}, {(1 - _nanmean(d['share'])) * 100:.0f} % of it through the HCM; "
                     f"the HCM's fast recoveries over a run: {np.mean(d['fr']):.0f} on average")
            if ref is not None and h != "reno":
                shown += f" (PLT-Reno: {np.mean(ref['gbps']) / 1e6:.1f} Mbit/s, {(1 - _nanmean(ref['share'])) * 100:.0f} % through the HCM)"
            shown += _half_text(d["whole"], d["half"], scale=1.0, unit="", digits=3)
            note = ""
            if h == "fast":
                note = ("if differs: FAST aims to keep alpha packets queued (here half the buffer, which it shares with the LCM's "
                        "packets until it pushes them out); its bursts can overflow it (the fast recoveries), each cutting the HCM's "
                        "window, and the LCM's losses, which the HCM must resend first, add to its load.")
            rows.append(_ci_row(exp, "plt_high_goodput_any_hcm", f"{c}: PLT with HCM {h}, goodput fraction",
                                "PLT's high goodput whatever the HCM (open question, sect. 5): at least 0.9", d["frac"],
                                group=f"{c}, {h}", extra=shown, note=note, clip=NONNEG))
    fig, ax = figs.new(1, len(conds), w=6 * max(len(conds), 1), h=3.6)
    for k, c in enumerate(conds):
        hs = [h for h in hcms if (c, h) in table]
        hv = [np.mean(table[(c, h)]["hcm"]) / 1e6 for h in hs]
        ax[0][k].bar(range(len(hs)), hv, label="HCM")
        ax[0][k].bar(range(len(hs)), [np.mean(table[(c, h)]["lcm"]) / 1e6 for h in hs], bottom=hv, label="LCM")
        ax[0][k].set_xticks(range(len(hs)))
        ax[0][k].set_xticklabels([f"HCM {h}" for h in hs])
        ax[0][k].set_ylabel("goodput first delivered (Mbit/s), mean over seeds")
        ax[0][k].set_title(c, fontsize=9)
        ax[0][k].legend(fontsize=8)
    png = figs.save(fig, out, "plt_hcm_variants.png")
    return Section("hcm_variants", exp.title, setup_text(exp), rows, [png], scenario_comment(exp))


ANALYSES = {
    "fig3_loss": fig3_loss,
    "fig6_8_small_buffer": fig6_8_small_buffer,
    "fig9_short_flows": fig9_short_flows,
    "fig10_multi_bottleneck": fig10_multi_bottleneck,
    "noninterference": noninterference,
    "fairness": fairness,
    "hcm_variants": hcm_variants,
}

__all__ = ["ANALYSES", "AUTHORS", "CITATION", "NOTES", "ORDER", "TITLE"]
