"""Criteria stated before the measurement, in the scenario file.

Each paper experiment's scenario file lists the criteria its report applies,
in a ``[reproduce.criteria]`` table, one entry per claim:

    [reproduce.criteria]
    # mean goodput over seeds within 5 % of the paper's 866.75 Mbit/s
    tcp_goodput_1g = { kind = "ci", paper = 866.75, tol = 0.05 }
    # the paper: LTCP is fairer than TCP (a lower standard deviation)
    sd_ltcp_below_tcp = { kind = "separate", claim = "<", control = "sd_tcp_below_tcp" }

Kinds (every number finite):

- ``ci``: the 95 % interval of a mean over seeds inside a band, either
  ``paper`` with ``tol`` (the band paper x (1 -/+ tol), symmetric by
  construction; 0 < tol <= 0.5) or ``lo`` and ``hi``; inside agrees, wholly
  outside differs, across a bound is not separable. Two optional forms,
  stated here before the runs:
  ``judge = "every_seed"`` for a universal claim ("never drops", "always
  above"): it agrees only if every seed's value lies in the band and
  differs as soon as one seed's does not (never judged on a mean);
  ``stat = "log"`` for a ratio (heavy-tailed: one seed's 86 outweighs four
  near 1): the interval is the geometric mean's (a t interval of the
  logarithms, mapped back), so the band needs lo > 0;
  ``stat = "median"`` for a time until something happens (to converge):
  the median with its distribution-free order-statistic interval
  (``stats.median_ci``), where a run in which it never happened ranks
  after every run in which it did (+inf), not as the time it had left; an
  end of the interval may be unbounded, and the verdict reads it so (a
  median judged on an interval alone: the value shown is the median).
- ``separate``: a comparison ("A > B", ``claim`` one of ``">"``, ``"<"``,
  and the non-strict ``">="``, ``"<="``), judged on Welch's 95 % interval
  of the difference of the two means (``measure.diff_ci95``; with ``stat =
  "log"``, of the means of the logarithms, for ratios; with ``stat =
  "median"``, the differences the two medians' intervals allow,
  [a_lo - b_hi, a_hi - b_lo]): wholly on the
  claimed side agrees, wholly on the other side differs, across zero is not
  separable. An exact tie (the difference is exactly zero in every seed,
  such as 0 drops against 0 drops) contradicts a strict claim and meets a
  non-strict one. A strict claim may state a ``margin``: the largest
  difference A - B that counts as none (on the logarithms with ``stat =
  "log"``, at most log 1.1; otherwise in the quantity's units, with
  ``span = [min, max]`` the values it can take and the margin at most a
  tenth of that). An interval of the difference wholly inside (-margin,
  margin) then differs: it rules out any difference the paper would call
  one. Without a margin a near-tie stays "not separable" whatever the seeds;
  the margin must come from the paper (its own resolution, such as
  "within 5 %"), stated before the runs it judges.
- ``rel``: one deterministic value within ``tol`` (0 < tol <= 0.5) of ``paper``.
- ``factor``: one value within a factor ``factor`` of ``paper`` (1 < factor < 2).
- ``range``: one value in [lo, hi]; both bounds, unless the paper's claim
  is one-sided, which ``one_sided = "<the claim, quoted>"`` must say (at
  least MIN_QUOTE_WORDS words; tests/test_reproduce.py finds every quote in
  the paper's text).

Width: a band must be able to fail. With a non-zero ``paper`` value it must
be narrower than twice that value; without one (or with paper = 0) the
criterion states ``span = [min, max]``, the values the quantity can take
(a fraction: [0, 1]; a time: [0, the run's length]), and the band must lie
inside the span and cover at most half of it.

Any criterion may say what it counts as (``scope``): ``"claim"`` (the
default), ``"consistency"`` (an agreement that cannot tell algorithms
apart, such as the implementation's own equation, or a utilization any
loss-based sender reaches with a BDP of buffer), ``"beyond"`` (a check of
something the paper does not claim) or ``"sensitivity"`` (the claim again
under another reading of the paper, shown beside the adopted one). Only
claims count in a paper's
verdicts; the others are counted and shown apart.

Any criterion may name a ``control``: another criterion in the same file
that applies the same check to an algorithm the paper says differs (a
negative control). The control must mirror the claim: the same kind, band
and form. The claim then counts as shown only if the control's verdict
differs; a check the control passes too is reported as "not evidence". A
criterion is either a claim or a control, not both.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from longfat._native import ScenarioError
from longfat.reproduce.stats import ci95, diff_ci95, level, log_ci95, median_ci
from longfat.scenario import key_path, kind_of

#: Factor bands must be narrower than [paper / 2, 2 x paper] (which passes twice the paper's value).
MAX_FACTOR = 2.0
#: The widest relative tolerance: paper x (1 -/+ 0.5).
MAX_TOL = 0.5
#: The fewest words a one-sided criterion's quote of the paper may have.
MIN_QUOTE_WORDS = 6
#: Comparisons a separate criterion may claim.
CLAIMS = (">", "<", ">=", "<=")
#: A separate criterion's margin is at most this part of its span (the
#: values the compared quantity can take): a wider one would call real
#: differences none.
MAX_MARGIN_OF_SPAN = 0.1
#: With stat = "log", a margin on the logarithms is at most log(1.1): ratios
#: within 10 % of each other.
MAX_LOG_MARGIN = math.log(1.1)
#: Statistics a ci or separate criterion may state (the default: the mean).
STATS = ("log", "median")

#: Fields each kind takes (beyond kind, control, why).
KIND_FIELDS = {
    "ci": {"paper", "tol", "lo", "hi", "span", "judge", "stat"},
    "separate": {"claim", "stat", "margin", "span"},
    "rel": {"paper", "tol"},
    "factor": {"paper", "factor"},
    "range": {"lo", "hi", "one_sided", "paper", "span"},
}
#: The fields a control must share with its claim (all but these).
NOT_MIRRORED = {"control", "why", "role", "scope"}
COMMON = {"kind", "control", "why", "scope"}
#: What a row counts as: a claim of the paper (the default), a consistency
#: check (an agreement that cannot tell algorithms apart: the implementation's
#: own equation, a level any loss-based sender reaches), a check of
#: something the paper does not claim, or a sensitivity row (a claim
#: checked again under another reading of the paper, beside the row of the
#: reading the reproduction adopts). Only claims enter a paper's verdict
#: counts; the others are counted apart.
SCOPES = ("claim", "consistency", "beyond", "sensitivity")

# Verdicts of a row (core.evaluate gives them).
AGREES = "agrees"
DIFFERS = "differs"
NO_NUMBER = "not compared"
NOT_SEPARABLE = "not separable"
# Verdicts of a control row (the same check, applied to the control algorithm).
CONTROL_DIFFERS = "control differs"
CONTROL_PASSES = "control passes too"
CONTROL_UNCLEAR = "control not separable"
#: A claim whose negative control passes the same check (or is missing, or unclear).
NOT_EVIDENCE = "not evidence"


def finite_or_none(x) -> float | None:
    """A float for a check, None for NaN or infinity (which never pass)."""
    try:
        x = float(x)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def _num(path: Path, field: str, v: Any, *, what: str = "a finite number") -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(float(v)):
        raise ScenarioError(f"{path}: {field}: must be {what}, not {v!r}", field)
    return float(v)


def check_criteria(path: Path, table: Any) -> dict[str, dict]:
    """The ``[reproduce.criteria]`` table, checked field by field; returns
    {id: spec} with numbers as floats. Refuses every criterion that could
    not fail (see the module's text) with the field and the allowed range."""
    base = "reproduce.criteria"
    if not isinstance(table, dict):
        raise ScenarioError(f"{path}: {base}: must be a table of criteria, not {kind_of(table)}", base)
    out: dict[str, dict] = {}
    for cid, spec in table.items():
        f = key_path(base, cid)
        if not (isinstance(cid, str) and cid.isidentifier() and cid.isascii()):
            raise ScenarioError(f"{path}: {f}: a criterion's name must be a plain name (letters, digits, _)", f)
        if not isinstance(spec, dict):
            raise ScenarioError(f"{path}: {f}: must be a table such as {{ kind = \"ci\", paper = 1.0, tol = 0.1 }}, not {kind_of(spec)}", f)
        out[cid] = _check_one(path, f, spec)
    for cid, s in out.items():
        c = s.get("control")
        if c is None:
            continue
        f = key_path(base, cid) + ".control"
        if c not in out:
            raise ScenarioError(f"{path}: {f}: no criterion {c!r} in this file", f)
        if c == cid or "control" in out[c]:
            raise ScenarioError(f"{path}: {f}: {c!r} must be a control, not itself a claim with a control", f)
        if out[c]["kind"] != s["kind"]:
            raise ScenarioError(f"{path}: {f}: the control {c!r} must apply the same kind of check ({s['kind']}), not {out[c]['kind']}", f)
        mine = {k: v for k, v in s.items() if k not in NOT_MIRRORED}
        theirs = {k: v for k, v in out[c].items() if k not in NOT_MIRRORED}
        if mine != theirs:
            diff = sorted(k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k))
            raise ScenarioError(f"{path}: {f}: the control {c!r} must mirror the claim's check; they differ in {', '.join(diff)}", f)
    controls = {s["control"] for s in out.values() if "control" in s}
    for cid in controls:
        out[cid]["role"] = "control"
    return out


def _check_one(path: Path, f: str, spec: dict) -> dict:
    """One criterion, checked (``f``: its field name)."""
    def bad(field: str, what: str):
        raise ScenarioError(f"{path}: {field}: {what}", field)

    kind = spec.get("kind")
    if kind not in KIND_FIELDS:
        bad(f"{f}.kind", f"must be one of {', '.join(sorted(KIND_FIELDS))}, not {kind!r}")
    allowed = KIND_FIELDS[kind] | COMMON
    for k in spec:
        if k not in allowed:
            bad(f"{f}.{k}", f"unknown field for kind {kind!r}; allowed: {', '.join(sorted(allowed))}")
    s: dict[str, Any] = {"kind": kind}
    for k in ("why", "control", "one_sided"):
        if k in spec:
            if not (isinstance(spec[k], str) and spec[k].strip()):
                bad(f"{f}.{k}", "must be a non-empty string")
            s[k] = spec[k]
    if "scope" in spec:
        if spec["scope"] not in SCOPES:
            bad(f"{f}.scope", f"must be one of {', '.join(repr(x) for x in SCOPES)}, not {spec['scope']!r}")
        if spec["scope"] != "claim":
            s["scope"] = spec["scope"]
    nums = {k: _num(path, f"{f}.{k}", spec[k]) for k in ("paper", "tol", "lo", "hi", "factor") if k in spec}
    s.update(nums)
    if "stat" in spec:
        if spec["stat"] not in STATS:
            bad(f"{f}.stat", f"must be one of {', '.join(repr(x) for x in STATS)}, not {spec['stat']!r}")
        s["stat"] = spec["stat"]
    if "tol" in nums and not 0 < nums["tol"] <= MAX_TOL:
        bad(f"{f}.tol", f"must be in (0, {MAX_TOL:g}] (a relative tolerance; a wider one passes values far from the paper's), not {nums['tol']:g}")
    if kind == "ci":
        has_band = "lo" in nums and "hi" in nums
        if "tol" in nums and "paper" in nums and not ("lo" in nums or "hi" in nums):
            p, t = nums["paper"], nums["tol"]
            s["lo"], s["hi"] = sorted((p * (1 - t), p * (1 + t)))
        elif not has_band or "tol" in nums:
            bad(f, "a ci criterion takes either paper and tol, or lo and hi (and optionally paper)")
        if "judge" in spec:
            if spec["judge"] != "every_seed":
                bad(f"{f}.judge", f"must be 'every_seed', not {spec['judge']!r}")
            s["judge"] = spec["judge"]
        if "judge" in s and "stat" in s:
            bad(f"{f}.stat", "a criterion judged on every seed has no statistic over seeds; give judge or stat, not both")
        if s.get("stat") == "log" and not s["lo"] > 0:
            bad(f"{f}.lo", f"must be above 0 for stat = \"log\" (a ratio's band), not {s['lo']:g}")
    if kind == "rel" and not ("paper" in nums and "tol" in nums):
        bad(f, "a rel criterion needs paper and tol")
    if kind == "factor":
        if not ("paper" in nums and "factor" in nums):
            bad(f, "a factor criterion needs paper and factor")
        if not 1 < nums["factor"] < MAX_FACTOR:
            bad(f"{f}.factor", f"must be in (1, {MAX_FACTOR:g}) (a band of factor 2 passes twice the paper's value), not {nums['factor']:g}")
        if nums["paper"] <= 0:
            bad(f"{f}.paper", f"must be above 0 for a factor criterion, not {nums['paper']:g}")
    if kind == "range":
        lo, hi = nums.get("lo"), nums.get("hi")
        if "one_sided" in s:
            if (lo is None) == (hi is None):
                bad(f, "a one-sided range takes exactly one of lo and hi")
            if len(s["one_sided"].split()) < MIN_QUOTE_WORDS:
                bad(f"{f}.one_sided", f"must quote the paper's one-sided claim (at least {MIN_QUOTE_WORDS} words), not {s['one_sided']!r}")
        elif lo is None or hi is None:
            bad(f, "a range needs both lo and hi (a one-sided bound passes absurd values); if the paper's claim is one-sided, quote it in one_sided")
    if kind == "separate":
        if spec.get("claim") not in CLAIMS:
            bad(f"{f}.claim", f"must be one of {', '.join(repr(c) for c in CLAIMS)}, not {spec.get('claim')!r}")
        s["claim"] = spec["claim"]
        if "span" in spec and "margin" not in spec:
            bad(f"{f}.span", "a separate criterion takes a span only to bound its margin")
        if "margin" in spec:
            m = s["margin"] = _num(path, f"{f}.margin", spec["margin"], what="a number above 0 (the largest difference that counts as none)")
            if s["claim"] not in (">", "<"):
                bad(f"{f}.margin", f"applies to a strict claim ('>' or '<'): a tie already meets {s['claim']!r}")
            if s.get("stat") == "log":
                if "span" in spec:
                    bad(f"{f}.span", "a margin on logarithms (stat = \"log\") is bounded by MAX_LOG_MARGIN, not a span")
                if not 0 < m <= MAX_LOG_MARGIN:
                    bad(f"{f}.margin", f"must be in (0, {MAX_LOG_MARGIN:.4f}] (log 1.1: ratios within 10 % of each other), not {m:g}")
            elif "span" not in spec:
                bad(f"{f}.span", "missing: a margin needs span = [min, max], the values the compared quantity can take")
    if "span" in spec:
        sp = spec["span"]
        if not (isinstance(sp, list) and len(sp) == 2):
            bad(f"{f}.span", f"must be [min, max], the values the quantity can take, not {sp!r}")
        s["span"] = [_num(path, f"{f}.span[{i}]", v) for i, v in enumerate(sp)]
        if not s["span"][0] < s["span"][1]:
            bad(f"{f}.span", f"min ({s['span'][0]:g}) must be below max ({s['span'][1]:g})")
    lo, hi = s.get("lo"), s.get("hi")
    if lo is not None and hi is not None:
        if not lo < hi:
            bad(f, f"lo ({lo:g}) must be below hi ({hi:g})")
        p = s.get("paper")
        if p is not None and not lo <= p <= hi:
            bad(f, f"the paper's value {p:g} must lie in [lo, hi] = [{lo:g}, {hi:g}]")
        if p is not None and p != 0:
            if hi - lo >= 2 * abs(p):
                bad(f, f"the band [{lo:g}, {hi:g}] is at least twice the paper's value ({p:g}) wide")
        elif "span" not in s:
            bad(f"{f}.span", f"missing: the band [{lo:g}, {hi:g}] has no non-zero paper value to be narrower than; "
                "give span = [min, max], the values the quantity can take, and a band covering at most half of it")
    if "span" in s:
        a, b = s["span"]
        if "margin" in s and not 0 < s["margin"] <= MAX_MARGIN_OF_SPAN * (b - a):
            bad(f"{f}.margin", f"must be in (0, {MAX_MARGIN_OF_SPAN * (b - a):g}] (at most {MAX_MARGIN_OF_SPAN:g} of the span "
                f"[{a:g}, {b:g}]: a wider margin calls real differences none), not {s['margin']:g}")
        if kind in ("ci", "range") and lo is not None and hi is not None:
            if not (a <= lo and hi <= b):
                bad(f"{f}.span", f"the band [{lo:g}, {hi:g}] must lie inside the span [{a:g}, {b:g}]")
            if hi - lo > (b - a) / 2:
                bad(f, f"the band [{lo:g}, {hi:g}] covers more than half of the span [{a:g}, {b:g}]: it could hardly fail")
    return s


def criterion(exp, cid: str, *, ci: tuple | None = None, a: tuple | None = None, b: tuple | None = None,
              what: tuple[str, str] | None = None, group: str = "") -> dict:
    """The check of criterion ``cid`` of experiment ``exp`` (stated in its
    scenario file), completed with what was measured: ``ci`` for a ci
    criterion, ``a`` and ``b`` for a separate one, each the result of
    ``measure.ci95`` over the seeds' values (which carries the values; a
    bare (low, high) pair serves a plain ci criterion only). The form the
    criterion states decides the statistic: every seed's value for
    ``judge = "every_seed"``, the geometric mean's interval for ``stat =
    "log"``, Welch's interval of the difference for a separate criterion.
    ``group`` tells apart the rows one criterion applies to (a bandwidth, a
    flow count) and pairs a claim's row with its control's row."""
    specs = getattr(exp, "criteria", None) or {}
    if cid not in specs:
        raise KeyError(f"{exp.path}: no criterion {cid!r} in [reproduce.criteria] (has: {', '.join(sorted(specs)) or 'none'})")
    s = dict(specs[cid])
    s["id"] = cid
    s["group"] = group
    if level() != 0.975:
        s["level"] = level()  # a sequential file's intervals (stats.at_level)

    def values(x, why: str) -> list[float]:
        v = getattr(x, "values", None)
        if v is None:
            raise ValueError(f"criterion {cid!r}: {why} needs the seeds' values: give measure.ci95(values), not a bare interval")
        return [float(y) for y in v]

    def interval(x):
        # ci95's (mean, low, high, n), or (low, high)
        if len(x) == 4:
            return [finite_or_none(x[1]), finite_or_none(x[2])], int(x[3])
        return [finite_or_none(x[0]), finite_or_none(x[1])], None

    if s["kind"] == "ci":
        if ci is None:
            raise ValueError(f"criterion {cid!r} is a ci criterion: give ci=ci95(values) or (low, high)")
        if s.get("judge") == "every_seed":
            v = values(ci, "judge = \"every_seed\"")
            s["values"] = [finite_or_none(x) for x in v]
            ci = ci95(v)
        elif s.get("stat") == "log":
            ci = log_ci95(values(ci, "stat = \"log\""))
        elif s.get("stat") == "median":
            ci = median_ci(values(ci, "stat = \"median\""))
            s["infinite"] = [_sign_if_infinite(ci[1]), _sign_if_infinite(ci[2])]
        s["ci"], n = interval(ci)
        if n is not None:
            s["n"] = n
        # The mean of values inside the span lies inside it: the interval is
        # cut to it (a Jain index of 0.99 +/- 0.02 is at most 1).
        vals = getattr(ci, "values", None)
        if "span" in s and None not in s["ci"] and vals is not None and all(s["span"][0] <= v <= s["span"][1] for v in vals):
            s["ci"] = [max(s["ci"][0], s["span"][0]), min(s["ci"][1], s["span"][1])]
    elif s["kind"] == "separate":
        if a is None or b is None:
            raise ValueError(f"criterion {cid!r} is a separate criterion: give a and b, each ci95(values)")
        va, vb = values(a, "a comparison"), values(b, "a comparison")
        if s.get("stat") == "log":
            # Ratios: the geometric means' intervals, and Welch's on the
            # logarithms (a ratio of 0 or below has none: NaN, which differs).
            (s["a"], na), (s["b"], nb) = interval(log_ci95(va)), interval(log_ci95(vb))
            va, vb = [_log(x) for x in va], [_log(x) for x in vb]
        elif s.get("stat") == "median":
            ma, mb = median_ci(va), median_ci(vb)
            (s["a"], na), (s["b"], nb) = interval(ma), interval(mb)
            s["a_infinite"] = [_sign_if_infinite(ma[1]), _sign_if_infinite(ma[2])]
            s["b_infinite"] = [_sign_if_infinite(mb[1]), _sign_if_infinite(mb[2])]
        else:
            (s["a"], na), (s["b"], nb) = interval(ci95(va)), interval(ci95(vb))
        s["n"] = [na, nb]
        if s.get("stat") == "median":
            # Every seed of both the same finite value: an exact tie (as for means), whatever the seeds' number.
            tie = va and vb and len(set(va) | set(vb)) == 1 and math.isfinite(va[0])
            lo, hi = (0.0, 0.0) if tie else _median_diff(ma, mb)
            s["infinite"] = [_sign_if_infinite(lo), _sign_if_infinite(hi)]
        else:
            _, lo, hi = diff_ci95(va, vb)
        s["diff"] = [finite_or_none(lo), finite_or_none(hi)]
        s["what"] = list(what or ("A", "B"))
    elif ci is not None or a is not None:
        raise ValueError(f"criterion {cid!r} is a {s['kind']} criterion of one value: it takes no interval")
    return s


def _sign_if_infinite(x: float) -> int:
    """+1 or -1 for an infinite interval end (stored as None beside it), 0 otherwise."""
    return int(math.copysign(1, x)) if math.isinf(x) else 0


def _median_diff(a: tuple, b: tuple) -> tuple[float, float]:
    """The differences A - B that the medians' intervals allow: [a_lo - b_hi,
    a_hi - b_lo], an end unbounded where an interval's end is (NaN if
    either interval is)."""
    (_, alo, ahi, _), (_, blo, bhi, _) = a, b
    if any(math.isnan(x) for x in (alo, ahi, blo, bhi)):
        return float("nan"), float("nan")
    lo = -math.inf if (bhi == math.inf or alo == -math.inf) else alo - bhi
    hi = math.inf if (ahi == math.inf or blo == -math.inf) else ahi - blo
    return lo, hi


def ends(check: dict, key: str = "ci") -> list:
    """A check's interval ``key`` ("ci", "diff", "a", "b") with its stored
    infinite ends (``infinite``: the signs of the ends a median's interval
    leaves unbounded, stored as None) as floats; other None ends stay None."""
    v = list(check.get(key) or [None, None])
    signs = check.get({"ci": "infinite", "diff": "infinite"}.get(key, f"{key}_infinite")) or [0, 0]
    return [math.copysign(math.inf, sg) if sg and x is None else x for x, sg in zip(v, signs)]


def _log(x: float) -> float:
    return math.log(x) if math.isfinite(x) and x > 0 else float("nan")


def settle(rows: list) -> None:
    """Pairs each claim with its negative control (rows of one report, as
    Row objects or results.json dicts): a control row's verdict says
    whether the control passes the claim's check; a claim that agrees
    stays agreeing only if its control differs, else it is not evidence."""
    def get(r, k, default=None):
        return r.get(k, default) if isinstance(r, dict) else getattr(r, k, default)

    def put(r, k, v):
        if isinstance(r, dict):
            r[k] = v
        else:
            setattr(r, k, v)

    controls = {}
    for r in rows:
        c = get(r, "check") or {}
        if c.get("role") == "control":
            raw = get(r, "raw_verdict") or get(r, "verdict")
            put(r, "raw_verdict", raw)
            v = {AGREES: CONTROL_PASSES, DIFFERS: CONTROL_DIFFERS, NOT_SEPARABLE: CONTROL_UNCLEAR}.get(raw, CONTROL_UNCLEAR)
            put(r, "verdict", v)
            controls[(c["id"], c.get("group", ""))] = v
    for r in rows:
        c = get(r, "check") or {}
        if "control" not in c or c.get("role") == "control":
            continue
        raw = get(r, "raw_verdict") or get(r, "verdict")
        put(r, "raw_verdict", raw)
        ctl = controls.get((c["control"], c.get("group", "")))
        put(r, "control_verdict", ctl or "missing")
        if raw == AGREES and ctl != CONTROL_DIFFERS:
            put(r, "verdict", NOT_EVIDENCE)
        else:
            put(r, "verdict", raw)
