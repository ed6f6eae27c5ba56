"""Statistics over seeds that the verdicts use: Student's t intervals of a
mean, of a geometric mean, and Welch's of a difference (no dependency on
the rest of the reproduction package: criteria.py and measure.py both
import it)."""

from __future__ import annotations

import contextlib
import contextvars
import math
from typing import Iterable, Iterator

import numpy as np


# ---- 95 % confidence intervals over seeds -----------------------------------

#: Student's t quantiles by degrees of freedom 1..30, then for the first df
#: of each wider bucket (31-40, 41-60, 61-120, 121 and up: the bucket's
#: largest quantile, so an interval is never narrower than its level), for
#: the two levels the verdicts use: 0.975 (a two-sided 95 % interval) and
#: 0.99375 (95 % shared by 4 fixed looks at the seeds, 1 - 0.05 / (2 x 4):
#: the sequential seeds' Bonferroni level). Values from scipy.stats.t.ppf,
#: rounded to 3 decimals; tests/test_reproduce.py integrates the t density
#: to check each one.
T_QUANTILES = {
    0.975: (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
            2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042),
    0.99375: (50.923, 8.860, 5.392, 4.315, 3.810, 3.521, 3.335, 3.206, 3.111, 3.038, 2.981, 2.934, 2.896, 2.864, 2.837,
              2.813, 2.793, 2.775, 2.759, 2.744, 2.732, 2.720, 2.710, 2.700, 2.692, 2.684, 2.676, 2.669, 2.663, 2.657),
}
#: (first df of the bucket, quantile at that df) beyond 30, per level.
T_TAILS = {
    0.975: ((31, 2.040), (41, 2.020), (61, 2.000), (121, 1.980)),
    0.99375: ((31, 2.652), (41, 2.613), (61, 2.574), (121, 2.536)),
}
#: The buckets' upper ends (their df ranges: 31-40, 41-60, 61-120, 121-).
_TAIL_ENDS = (40, 60, 120, math.inf)


def t_quantile(df: float, level: float = 0.975) -> float:
    """Student's t quantile at ``level`` (0.975 or 0.99375: T_QUANTILES); a
    fractional df (Welch) is rounded down and beyond 30 each bucket takes its
    first df's quantile, both of which widen the interval."""
    if level not in T_QUANTILES:
        raise ValueError(f"level must be one of {', '.join(map(str, T_QUANTILES))}, not {level!r}")
    if not df >= 1:
        return float("nan")
    d = int(math.floor(df))
    if d <= 30:
        return T_QUANTILES[level][d - 1]
    for end, (_, q) in zip(_TAIL_ENDS, T_TAILS[level]):
        if d <= end:
            return q
    raise AssertionError("unreachable")


def t975(df: float) -> float:
    """Student's t 0.975 quantile (``t_quantile`` at 0.975)."""
    return t_quantile(df, 0.975)


#: The two-sided intervals' t quantile level: 0.975 (95 %) unless an
#: analysis runs under ``at_level`` (a sequential experiment's 0.99375).
_LEVEL: contextvars.ContextVar[float] = contextvars.ContextVar("longfat_ci_level", default=0.975)


@contextlib.contextmanager
def at_level(level: float) -> Iterator[None]:
    """Every interval (ci95, log_ci95, diff_ci95) computed inside takes the
    t quantile at ``level`` (one of T_QUANTILES)."""
    if level not in T_QUANTILES:
        raise ValueError(f"level must be one of {', '.join(map(str, T_QUANTILES))}, not {level!r}")
    token = _LEVEL.set(level)
    try:
        yield
    finally:
        _LEVEL.reset(token)


def level() -> float:
    """The t quantile level intervals take here (0.975 outside ``at_level``)."""
    return _LEVEL.get()


def level_words(q: float | None = None) -> str:
    """The confidence of a two-sided interval at quantile ``q`` (default: the
    current level), as a report names it."""
    q = level() if q is None else q
    if q == 0.975:
        return "95 %"
    return f"{100 * (2 * q - 1):g} % (95 % over up to {round(0.05 / (2 * (1 - q)))} looks at the seeds)"


class Interval(tuple):
    """ci95's (mean, low, high, n), which also carries the values it was
    computed from (``.values``), so that a criterion can judge them in the
    form it states (every seed, logarithms, a difference)."""

    values: tuple

    def __new__(cls, stats: tuple, values: Iterable[float]) -> "Interval":
        self = super().__new__(cls, stats)
        self.values = tuple(values)
        return self

    def __reduce__(self):
        return (Interval, (tuple(self), self.values))


def ci95(xs: Iterable[float]) -> Interval:
    """(mean, low, high, n): the t interval of the mean (at the current
    ``level``: 95 % unless under ``at_level``). One value gives a
    zero-width interval (nothing to estimate a spread from; the reports
    show n); any NaN or infinite value makes all three NaN, so no check
    can pass on it. The result carries the values (``.values``)."""
    vals = [float(x) for x in xs]
    a = np.asarray(vals, dtype=float)
    n = len(a)
    if n == 0 or not np.all(np.isfinite(a)):
        return Interval((float("nan"), float("nan"), float("nan"), n), vals)
    m = float(a.mean())
    if n == 1:
        return Interval((m, m, m, 1), vals)
    h = t_quantile(n - 1, level()) * float(a.std(ddof=1)) / math.sqrt(n)
    return Interval((m, m - h, m + h, n), vals)


def log_ci95(xs: Iterable[float]) -> Interval:
    """(geometric mean, low, high, n): the t interval of the mean of the
    logarithms, mapped back; for ratios, whose arithmetic mean one large
    seed dominates. A value that is not above 0 (or not finite) makes all
    three NaN, so no check can pass on it."""
    vals = [float(x) for x in xs]
    if not vals or not all(math.isfinite(v) and v > 0 for v in vals):
        return Interval((float("nan"), float("nan"), float("nan"), len(vals)), vals)
    m, lo, hi, n = ci95([math.log(v) for v in vals])
    return Interval((math.exp(m), math.exp(lo), math.exp(hi), n), vals)


def diff_ci95(a: Iterable[float], b: Iterable[float]) -> tuple[float, float, float]:
    """(mean(a) - mean(b), low, high): Welch's interval of the difference of
    two independent means (a group of one counts with no spread)."""
    x = np.asarray([float(v) for v in a], dtype=float)
    y = np.asarray([float(v) for v in b], dtype=float)
    if len(x) == 0 or len(y) == 0 or not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        return float("nan"), float("nan"), float("nan")
    d = float(x.mean() - y.mean())
    vx = float(x.var(ddof=1)) / len(x) if len(x) > 1 else 0.0
    vy = float(y.var(ddof=1)) / len(y) if len(y) > 1 else 0.0
    se2 = vx + vy
    if se2 == 0:
        return d, d, d
    terms = [v * v / (len(g) - 1) for v, g in ((vx, x), (vy, y)) if len(g) > 1]
    df = se2 * se2 / sum(terms)
    h = t_quantile(df, level()) * math.sqrt(se2)
    return d, d - h, d + h


def median_ci(xs: Iterable[float]) -> Interval:
    """(median, low, high, n): the distribution-free interval of the median
    from order statistics, [X_(l), X_(n-l+1)] with l the largest whole
    number such that P(Bin(n, 1/2) <= l - 1) <= 1 - level (the current
    ``level``: each tail at most 2.5 % for a 95 % interval). For times
    until something happens: a run in which it never happened is +inf and
    ranks after every run in which it did, so it counts as "later than any"
    instead of as the time the run had left. When no l >= 1 qualifies (5
    values at 95 %: 2 x 1/32 > 5 %) both ends are unbounded; an end can also
    be +inf because of runs that never reached. A NaN or -inf value makes
    all three NaN."""
    vals = [float(x) for x in xs]
    n = len(vals)
    if n == 0 or any(math.isnan(v) or v == -math.inf for v in vals):
        return Interval((float("nan"), float("nan"), float("nan"), n), vals)
    s = sorted(vals)
    med = s[(n - 1) // 2] if s[(n - 1) // 2] == s[n // 2] else (s[(n - 1) // 2] + s[n // 2]) / 2
    tail = 1 - level()
    l, below = 0, 0.0
    for k in range(n):
        below += math.comb(n, k) / 2.0**n  # P(Bin(n, 1/2) <= k)
        if below > tail + 1e-15:
            break
        l = k + 1
    lo, hi = (s[l - 1], s[n - l]) if l >= 1 else (-math.inf, math.inf)
    return Interval((med, lo, hi, n), vals)
