"""Measurements the paper modules take from runs: interval goodputs, ratios,
convergence times, stability."""

from __future__ import annotations

import math
from typing import Any, Iterable

import numpy as np

from longfat.reproduce.core import Point
from longfat.reproduce.stats import Interval, ci95, diff_ci95, log_ci95, median_ci, t975  # noqa: F401 (the paper modules' names)


class Runs:
    """The (point, result) pairs of one experiment, with lookups by key."""

    def __init__(self, pairs: list[tuple[Point, Any]]):
        self.pairs = pairs

    def where(self, **match: Any) -> list[tuple[Point, Any]]:
        """Pairs whose key has every given value; a keyword names the last
        path part with [i] turned into _i: ``cc_0`` matches ``flows[0].cc``."""

        def norm(path: str) -> str:
            last = path.split(".")[-1]
            idx = path.split(".")[0]
            n = ""
            if "[" in idx:
                n = "_" + idx[idx.index("[") + 1 : idx.index("]")]
            return last + n

        out = []
        for p, r in self.pairs:
            k: dict[str, Any] = {}
            for a, v in p.key.items():
                if norm(a) in k:
                    raise KeyError(f"{norm(a)!r} is ambiguous in {list(p.key)}; use having()")
                k[norm(a)] = v
            if all(k.get(m) == v for m, v in match.items()):
                out.append((p, r))
        return out

    def results(self, **match: Any) -> list[Any]:
        return [r for _, r in self.where(**match)]

    def having(self, values: dict[str, Any]) -> list[Any]:
        """Results whose key has each full path = value."""
        return [r for p, r in self.pairs if all(p.key.get(k) == v for k, v in values.items())]

    def values(self, path: str) -> list:
        seen: list = []
        for p, _ in self.pairs:
            v = p.key.get(path)
            if v not in seen:
                seen.append(v)
        return seen


def flow_series(res, flow: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(time_s, goodput_bps, cwnd_pkts) of one flow."""
    if not hasattr(res, "_cols"):  # convert the table once per run
        t = res.flows.select(["time_s", "flow", "goodput_bps", "cwnd_pkts"]).to_pydict()
        res._cols = {k: np.asarray(v) for k, v in t.items()}
    c = res._cols
    m = c["flow"] == flow
    return c["time_s"][m], c["goodput_bps"][m], c["cwnd_pkts"][m]


def mean_goodput(res, flow: int, t0: float, t1: float) -> float:
    """Mean goodput (bit/s) of ``flow`` over samples ending in (t0, t1]."""
    t, g, _ = flow_series(res, flow)
    m = (t > t0 + 1e-9) & (t <= t1 + 1e-9)
    return float(g[m].mean()) if m.any() else float("nan")


def link_series(res, name: str = "bottleneck") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(time_s, utilization, queue_pkts) of a monitored link."""
    d = res.links.to_pydict()
    names = np.asarray(d["link_name"])
    m = names == name
    return np.asarray(d["time_s"])[m], np.asarray(d["utilization"])[m], np.asarray(d["queue_pkts"])[m]


def bottleneck(res, name: str = "bottleneck") -> dict:
    for row in res.summary["links"]:
        if row["name"] == name:
            return row
    raise KeyError(name)


def flow_row(res, flow: int) -> dict:
    for row in res.summary["flows"]:
        if row["flow"] == flow:
            return row
    raise KeyError(flow)






def convergence_time(res, f1: int, f2: int, t_start: float, level: float = 0.8, window_s: float = 10.0) -> float:
    """Seconds after ``t_start`` until the smaller of the two flows' goodputs
    (averaged over ``window_s``) first reaches ``level`` x the larger; NaN if
    never within the run."""
    t, g1, _ = flow_series(res, f1)
    _, g2, _ = flow_series(res, f2)
    if len(t) < 2:
        return float("nan")
    dt = float(t[1] - t[0])
    n = max(int(round(window_s / dt)), 1)
    # trailing average over the last window
    c1 = np.convolve(g1, np.ones(n) / n)[: len(g1)]
    c2 = np.convolve(g2, np.ones(n) / n)[: len(g2)]
    for i in range(len(t)):
        if t[i] < t_start + window_s:
            continue
        hi = max(c1[i], c2[i])
        if hi > 0 and min(c1[i], c2[i]) >= level * hi:
            return float(t[i] - t_start)
    return float("nan")


def cov(x: Iterable[float]) -> float:
    a = np.asarray(list(x), dtype=float)
    if len(a) < 2 or a.mean() == 0:
        return float("nan")
    return float(a.std(ddof=1) / a.mean())


def jain(xs: Iterable[float]) -> float:
    a = np.asarray(list(xs), dtype=float)
    if len(a) == 0 or (a * a).sum() == 0:
        return float("nan")
    return float(a.sum() ** 2 / (len(a) * (a * a).sum()))


def mean_sd(xs: Iterable[float]) -> tuple[float, float]:
    a = np.asarray([x for x in xs if x is not None and not math.isnan(x)], dtype=float)
    if len(a) == 0:
        return float("nan"), float("nan")
    return float(a.mean()), float(a.std(ddof=1)) if len(a) > 1 else 0.0




def fmt_spread(values: list[float], scale: float = 1.0, digits: int = 4, unit: str = "") -> str:
    m, s = mean_sd([v * scale for v in values])
    if math.isnan(m):
        return "none"
    if len(values) > 1:
        return f"{m:.{digits}g} ± {s:.2g}{unit} (n={len(values)})"
    return f"{m:.{digits}g}{unit}"


# ---- 95 % confidence intervals over seeds: stats.py -------------------------


def fmt_ci(stats: tuple, scale: float = 1.0, digits: int = 4, unit: str = "") -> str:
    """'m [lo, hi] unit (n=k)' from ci95's result."""
    m, lo, hi, n = stats
    if not math.isfinite(m):
        return "none (a run gave no finite value)"
    f = lambda v: f"{v * scale:.{digits}g}"  # noqa: E731
    if n > 1:
        return f"{f(m)} [{f(lo)}, {f(hi)}]{unit} (n={n})"
    return f"{f(m)}{unit} (one run)"


def fmt_median(stats: tuple, digits: int = 4, unit: str = "") -> str:
    """'median m [lo, hi] unit (n=k)' from median_ci's result; an end the
    order statistics leave open (or that runs which never reached make
    infinite) reads "unbounded"."""
    m, lo, hi, n = stats
    if math.isnan(m):
        return "none (a run gave no value)"

    def f(v: float) -> str:
        return ("unbounded" if v > 0 else "-unbounded") if math.isinf(v) else f"{v:.{digits}g}"

    return f"median {f(m)} [{f(lo)}, {f(hi)}]{unit} (n={n})"
