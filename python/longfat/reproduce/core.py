"""Expanding a paper's scenario files into runs, running them in parallel
processes, and the verdict arithmetic the reports share.

A scenario file under ``scenarios/<paper>/`` is an ordinary scenario (its
base point runs with ``longfat run``) plus a ``[reproduce]`` table:

    [reproduce]
    title = "Fig. 6: ..."
    seeds = [1, 2]                      # run.seed of each repetition
    cases = [{ "network.bottleneck.rate" = "10Mbps" }, ...]   # explicit points
    [reproduce.vary]                    # crossed with every case
    "flows[0].cc" = ["reno", "ltcp"]
    [reproduce.quick]                   # overrides for --quick (any path,
    "run.duration" = "30s"              # reproduce.* included)

Every point is (case, vary combination, seed); its ``key`` is the dict of
the values it set, which the paper modules use to find their data.
"""

from __future__ import annotations

import copy
import itertools
import math
import os
import re
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from longfat._native import ScenarioError
from longfat.scenario import load_scenario, set_path

SCENARIO_ROOT = Path(__file__).resolve().parents[3] / "scenarios"


@dataclass
class Point:
    experiment: str
    key: dict
    seed: int
    scenario: dict
    cost: float  # estimated bottleneck packets, to schedule long runs first

    def label(self) -> str:
        parts = [f"{k.split('.')[-1]}={v}" for k, v in self.key.items()]
        return f"{self.experiment} " + " ".join(parts) + f" seed={self.seed}"


@dataclass
class Experiment:
    paper: str
    name: str
    path: Path
    title: str
    doc: dict  # the scenario file as loaded, [reproduce] included
    points: list[Point] = field(default_factory=list)


def _rate_bps(text: str) -> float:
    units = {"gbps": 1e9, "mbps": 1e6, "kbps": 1e3, "bps": 1.0}
    t = str(text).strip().lower()
    for u, mult in units.items():
        if t.endswith(u):
            return float(t[: -len(u)]) * mult
    return float(t)


def _secs(text: str) -> float:
    t = str(text).strip().lower()
    for u, mult in (("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9), ("s", 1.0)):
        if t.endswith(u):
            return float(t[: -len(u)]) * mult
    return float(t)


def estimate_cost(spec: dict) -> float:
    """Bottleneck packets the run will carry at most (rate x duration / packet)."""
    try:
        rate = _rate_bps(spec["network"]["bottleneck"]["rate"])
        dur = _secs(spec["run"]["duration"])
    except (KeyError, ValueError):
        return 1.0
    return rate * dur / (8 * 1040)


def load_experiment(paper: str, path: Path, quick: bool) -> Experiment:
    doc = load_scenario(path, keep_reproduce=True)
    rep = doc.get("reproduce")
    if not isinstance(rep, dict):
        raise ScenarioError(f"{path}: no [reproduce] table", "reproduce")
    if quick:
        for k, v in rep.get("quick", {}).items():
            set_path(doc, k, v)
        rep = doc["reproduce"]
    base = {k: v for k, v in doc.items() if k != "reproduce"}
    exp = Experiment(paper, path.stem, path, rep.get("title", path.stem), doc)
    cases, vary, seeds = _check_reproduce(path, rep)
    keys = list(vary)
    for case in cases:
        for combo in itertools.product(*(vary[k] for k in keys)):
            for seed in seeds:
                spec = copy.deepcopy(base)
                point_key = {}
                for k, v in list(case.items()) + list(zip(keys, combo)):
                    set_path(spec, k, v)
                    point_key[k] = v
                spec.setdefault("run", {})["seed"] = seed
                spec["name"] = f"{paper}-{path.stem}"
                exp.points.append(Point(exp.name, point_key, seed, spec, estimate_cost(spec)))
    return exp


def _check_reproduce(path: Path, rep: dict) -> tuple[list[dict], dict, list[int]]:
    """The sweep of a [reproduce] table, refusing malformed fields by name."""

    def bad(field: str, what: str):
        raise ScenarioError(f"{path}: reproduce.{field}: {what}", f"reproduce.{field}")

    known = {"title", "seeds", "cases", "vary", "quick"}
    for k in rep:
        if k not in known:
            bad(k, f"unknown field; allowed: {', '.join(sorted(known))}")
    seeds = rep.get("seeds", [1])
    if not (isinstance(seeds, list) and seeds and all(isinstance(x, int) and not isinstance(x, bool) and 0 <= x < 2**64 for x in seeds)):
        bad("seeds", "must be a non-empty list of whole numbers in 0..2^64")
    cases = rep.get("cases") or [{}]
    if not (isinstance(cases, list) and all(isinstance(c, dict) for c in cases)):
        bad("cases", 'must be a list of tables, e.g. [{ "flows[0].cc" = "reno" }]')
    vary = rep.get("vary", {})
    if not (isinstance(vary, dict) and all(isinstance(v, list) and v for v in vary.values())):
        bad("vary", 'must be a table of non-empty lists, e.g. { "flows[0].cc" = ["reno", "ltcp"] }')
    if not isinstance(rep.get("quick", {}), dict):
        bad("quick", "must be a table of path = value overrides")
    return cases, vary, seeds


def load_paper(paper: str, quick: bool, root: Path = SCENARIO_ROOT) -> list[Experiment]:
    d = root / paper
    # Natural order: fig2 before fig10.
    files = sorted(d.glob("*.toml"), key=lambda f: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", f.stem)])
    if not files:
        raise ScenarioError(f"no scenario files in {d}", "PAPER")
    return [load_experiment(paper, f, quick) for f in files]


# ---- running ----------------------------------------------------------------


def run_point(spec: dict) -> Any:
    """Worker: one simulation, results returned by value (pickled)."""
    from longfat.runner import run

    return run(spec)


def _init_worker() -> None:
    # numpy's BLAS threads would only compete with the simulations.
    os.environ["OPENBLAS_NUM_THREADS"] = "1"


def run_points(points: list[Point], jobs: int, on_done: Callable[[Point], None] | None = None) -> dict[int, Any]:
    """Runs every point (longest first) in ``jobs`` processes; returns
    results by position in ``points``. Ctrl-C cancels the rest."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    order = sorted(range(len(points)), key=lambda i: -points[i].cost)
    results: dict[int, Any] = {}
    if jobs <= 1:
        for i in order:
            results[i] = run_point(points[i].scenario)
            if on_done:
                on_done(points[i])
        return results
    import multiprocessing as mp

    with ProcessPoolExecutor(max_workers=jobs, mp_context=mp.get_context("spawn"), initializer=_init_worker) as pool:
        pending: dict[Future, int] = {}
        try:
            for i in order:
                pending[pool.submit(run_point, points[i].scenario)] = i
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    i = pending.pop(fut)
                    results[i] = fut.result()
                    if on_done:
                        on_done(points[i])
        except BaseException:
            for fut in pending:
                fut.cancel()
            pool.shutdown(wait=False, cancel_futures=True)
            raise
    return results


# ---- verdicts -----------------------------------------------------------------

AGREES = "agrees"
DIFFERS = "differs"
NO_NUMBER = "not compared"


def evaluate(check: dict, value: float | None) -> str:
    """The verdict of one measured value under one check. Kinds:
    rel (|v - paper| <= tol |paper|), factor (paper/f <= v <= paper*f),
    range (lo <= v <= hi; either bound may be None), none (nothing to compare)."""
    kind = check["kind"]
    if kind == "none":
        return NO_NUMBER
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return DIFFERS
    v = float(value)
    if kind == "rel":
        return AGREES if abs(v - check["paper"]) <= check["tol"] * abs(check["paper"]) else DIFFERS
    if kind == "factor":
        p, f = check["paper"], check["factor"]
        return AGREES if p / f <= v <= p * f else DIFFERS
    if kind == "range":
        lo, hi = check.get("lo"), check.get("hi")
        ok = (lo is None or v >= lo) and (hi is None or v <= hi)
        return AGREES if ok else DIFFERS
    raise ValueError(f"unknown check kind {kind!r}")


def describe(check: dict) -> str:
    kind = check["kind"]
    if kind == "rel":
        return f"within {check['tol'] * 100:g} % of the paper"
    if kind == "factor":
        return f"within a factor {check['factor']:g} of the paper"
    if kind == "range":
        lo, hi = check.get("lo"), check.get("hi")
        if lo is not None and hi is not None:
            return f"between {lo:g} and {hi:g}"
        return f">= {lo:g}" if lo is not None else f"<= {hi:g}"
    return "paper gives no number"


@dataclass
class Row:
    """One line of a report: what the paper said, what we measured, verdict."""

    item: str
    paper: str
    measured: str
    value: float | None
    check: dict
    note: str = ""  # why it likely differs (shown when it does) or context
    verdict: str = ""

    def __post_init__(self) -> None:
        if self.value is not None:
            self.value = float(self.value)
        self.verdict = evaluate(self.check, self.value)

    def to_json(self) -> dict:
        v = self.value
        return {
            "item": self.item,
            "paper": self.paper,
            "measured": self.measured,
            "value": None if v is None or math.isnan(v) else v,
            "check": self.check,
            "criterion": describe(self.check),
            "verdict": self.verdict,
            "note": self.note,
        }


def rel(paper: float, tol: float) -> dict:
    return {"kind": "rel", "paper": float(paper), "tol": float(tol)}


def factor(paper: float, f: float) -> dict:
    return {"kind": "factor", "paper": float(paper), "factor": float(f)}


def between(lo: float | None = None, hi: float | None = None) -> dict:
    return {"kind": "range", "lo": lo, "hi": hi}


NONE = {"kind": "none"}


@dataclass
class Section:
    """One figure or table of a paper, as reproduced."""

    experiment: str
    title: str
    setup: str
    rows: list[Row]
    figures: list[str] = field(default_factory=list)  # PNG file names
    deviations: str = ""


def setup_text(exp) -> str:
    base = exp.points[0].scenario
    n = len(exp.points)
    seeds = sorted({p.seed for p in exp.points})
    return (
        f"Scenario `{exp.path.relative_to(exp.path.parents[2])}`: {n} runs (seeds {', '.join(map(str, seeds))}); "
        f"base: {base['network']['bottleneck']['rate']} bottleneck, {base['run']['duration']} per run."
    )


def scenario_comment(exp) -> str:
    """The scenario file's header comment: the paper's setting and our choices."""
    lines = []
    for line in exp.path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        lines.append(line.lstrip("# ").rstrip())
    return " ".join(x for x in lines if x)
