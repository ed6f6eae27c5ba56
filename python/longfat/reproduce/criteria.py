"""Criteria stated before the measurement, in the scenario file.

Each paper experiment's scenario file lists the criteria its report applies,
in a ``[reproduce.criteria]`` table, one entry per claim:

    [reproduce.criteria]
    # mean goodput over seeds within 5 % of the paper's 866.75 Mbit/s
    tcp_goodput_1g = { kind = "ci", paper = 866.75, tol = 0.05 }
    # the paper: LTCP is fairer than TCP (a lower standard deviation)
    sd_ltcp_below_tcp = { kind = "separate", claim = "<", control = "sd_tcp_below_tcp" }

Kinds (every number finite; the band never as wide as twice the paper's
value, which would pass a measurement of zero or of double it):

- ``ci``: the 95 % interval of a mean over seeds inside a band, either
  ``paper`` with ``tol`` (the band paper x (1 -/+ tol), symmetric by
  construction; 0 < tol < 1) or ``lo`` and ``hi``; inside agrees, wholly
  outside differs, across a bound is not separable.
- ``separate``: a comparison ("A > B", ``claim = ">"`` or ``"<"``): the two
  95 % intervals apart in the claimed direction agree, apart the other way
  differ, overlapping are not separable.
- ``rel``: one deterministic value within ``tol`` (0 < tol < 1) of ``paper``.
- ``factor``: one value within a factor ``factor`` of ``paper``
  (1 < factor <= 1 + sqrt 2, so the band is narrower than twice the paper's value).
- ``range``: one value in [lo, hi]; both bounds, unless the paper's claim
  is one-sided, which ``one_sided = "<the claim, quoted>"`` must say.

Any criterion may name a ``control``: another criterion in the same file
that applies the same check to an algorithm the paper says differs (a
negative control). The claim then counts as shown only if the control's
verdict differs; a check the control passes too is reported as "not
evidence". A criterion is either a claim or a control, not both.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from longfat._native import ScenarioError
from longfat.scenario import key_path, kind_of

#: The widest factor band whose width, paper x (f - 1/f), stays below twice the paper's value.
MAX_FACTOR = 1 + math.sqrt(2)

#: Fields each kind takes (beyond kind, control, why).
KIND_FIELDS = {
    "ci": {"paper", "tol", "lo", "hi"},
    "separate": {"claim"},
    "rel": {"paper", "tol"},
    "factor": {"paper", "factor"},
    "range": {"lo", "hi", "one_sided", "paper"},
}
COMMON = {"kind", "control", "why"}

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
    {id: spec} with numbers as floats."""
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
        kind = spec.get("kind")
        if kind not in KIND_FIELDS:
            raise ScenarioError(f"{path}: {f}.kind: must be one of {', '.join(sorted(KIND_FIELDS))}, not {kind!r}", f"{f}.kind")
        allowed = KIND_FIELDS[kind] | COMMON
        for k in spec:
            if k not in allowed:
                raise ScenarioError(f"{path}: {f}.{k}: unknown field for kind {kind!r}; allowed: {', '.join(sorted(allowed))}", f"{f}.{k}")
        s: dict[str, Any] = {"kind": kind}
        for k in ("why", "control", "one_sided"):
            if k in spec:
                if not (isinstance(spec[k], str) and spec[k].strip()):
                    raise ScenarioError(f"{path}: {f}.{k}: must be a non-empty string", f"{f}.{k}")
                s[k] = spec[k]
        nums = {k: _num(path, f"{f}.{k}", spec[k]) for k in ("paper", "tol", "lo", "hi", "factor") if k in spec}
        s.update(nums)
        if "tol" in nums and not 0 < nums["tol"] < 1:
            raise ScenarioError(f"{path}: {f}.tol: must be in (0, 1) (a relative tolerance; 1 would pass 0 and twice the paper), not {nums['tol']:g}", f"{f}.tol")
        if kind == "ci":
            has_band = "lo" in nums and "hi" in nums
            if "tol" in nums and "paper" in nums and not ("lo" in nums or "hi" in nums):
                p, t = nums["paper"], nums["tol"]
                s["lo"], s["hi"] = sorted((p * (1 - t), p * (1 + t)))
            elif not has_band or "tol" in nums:
                raise ScenarioError(f"{path}: {f}: a ci criterion takes either paper and tol, or lo and hi (and optionally paper)", f)
        if kind in ("rel",) and not ("paper" in nums and "tol" in nums):
            raise ScenarioError(f"{path}: {f}: a rel criterion needs paper and tol", f)
        if kind == "factor":
            if not ("paper" in nums and "factor" in nums):
                raise ScenarioError(f"{path}: {f}: a factor criterion needs paper and factor", f)
            if not 1 < nums["factor"] <= MAX_FACTOR:
                raise ScenarioError(f"{path}: {f}.factor: must be in (1, {MAX_FACTOR:.3f}] (a wider band is more than twice the paper's value wide), not {nums['factor']:g}", f"{f}.factor")
            if nums["paper"] <= 0:
                raise ScenarioError(f"{path}: {f}.paper: must be above 0 for a factor criterion, not {nums['paper']:g}", f"{f}.paper")
        if kind == "range":
            lo, hi = nums.get("lo"), nums.get("hi")
            if "one_sided" in s:
                if (lo is None) == (hi is None):
                    raise ScenarioError(f"{path}: {f}: a one-sided range takes exactly one of lo and hi", f)
            elif lo is None or hi is None:
                raise ScenarioError(
                    f"{path}: {f}: a range needs both lo and hi (a one-sided bound passes absurd values); "
                    "if the paper's claim is one-sided, quote it in one_sided", f)
        if kind == "separate" and spec.get("claim") not in (">", "<"):
            raise ScenarioError(f"{path}: {f}.claim: must be \">\" or \"<\", not {spec.get('claim')!r}", f"{f}.claim")
        if kind == "separate":
            s["claim"] = spec["claim"]
        lo, hi = s.get("lo"), s.get("hi")
        if lo is not None and hi is not None:
            if not lo < hi:
                raise ScenarioError(f"{path}: {f}: lo ({lo:g}) must be below hi ({hi:g})", f)
            p = s.get("paper")
            if p is not None and not lo <= p <= hi:
                raise ScenarioError(f"{path}: {f}: the paper's value {p:g} must lie in [lo, hi] = [{lo:g}, {hi:g}]", f)
            if p is not None and p != 0 and hi - lo >= 2 * abs(p):
                raise ScenarioError(f"{path}: {f}: the band [{lo:g}, {hi:g}] is at least twice the paper's value ({p:g}) wide", f)
        out[cid] = s
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
    controls = {s["control"] for s in out.values() if "control" in s}
    for cid in controls:
        out[cid]["role"] = "control"
    return out


def criterion(exp, cid: str, *, ci: tuple | None = None, a: tuple | None = None, b: tuple | None = None,
              what: tuple[str, str] | None = None, group: str = "") -> dict:
    """The check of criterion ``cid`` of experiment ``exp`` (stated in its
    scenario file), completed with what was measured: ``ci`` (the 95 %
    interval of the mean) for a ci criterion, ``a`` and ``b`` (the two
    intervals) for a separate one. ``group`` tells apart the rows one
    criterion applies to (a bandwidth, a flow count) and pairs a claim's row
    with its control's row."""
    specs = getattr(exp, "criteria", None) or {}
    if cid not in specs:
        raise KeyError(f"{exp.path}: no criterion {cid!r} in [reproduce.criteria] (has: {', '.join(sorted(specs)) or 'none'})")
    s = dict(specs[cid])
    s["id"] = cid
    s["group"] = group
    def interval(x):
        # ci95's (mean, low, high, n), or (low, high)
        if len(x) == 4:
            return [finite_or_none(x[1]), finite_or_none(x[2])], int(x[3])
        return [finite_or_none(x[0]), finite_or_none(x[1])], None

    if s["kind"] == "ci":
        if ci is None:
            raise ValueError(f"criterion {cid!r} is a ci criterion: give ci=ci95(values) or (low, high)")
        s["ci"], n = interval(ci)
        if n is not None:
            s["n"] = n
    elif s["kind"] == "separate":
        if a is None or b is None:
            raise ValueError(f"criterion {cid!r} is a separate criterion: give a and b, each ci95(values) or (low, high)")
        (s["a"], na), (s["b"], nb) = interval(a), interval(b)
        if na is not None and nb is not None:
            s["n"] = [na, nb]
        s["what"] = list(what or ("A", "B"))
    elif ci is not None or a is not None:
        raise ValueError(f"criterion {cid!r} is a {s['kind']} criterion of one value: it takes no interval")
    return s


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
