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
the values it set, which the paper modules use to find their data. The
points of one key, over the seeds, are a *cell*.

Sequential seeds: ``looks = [5, 10, 20, 30]`` (at most MAX_LOOKS, rising,
the first equal to the number of listed seeds) lets the cells of undecided
claims run to more seeds (``reproduce.sequential``); the seeds after the
listed ones are the whole numbers after the largest listed. A case may
state its own (``"reproduce.looks" = [5, 40, 250, 1000]`` in its table), so
that cheap points go to more seeds than costly ones in one file. Every
interval of such a file is at the level LOOKS_LEVEL at every look.
``--quick`` ignores looks unless ``reproduce.quick`` sets them.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import itertools
import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from longfat._native import DEFAULT_SEED, ScenarioError, Simulation
from longfat.reproduce.criteria import AGREES, DIFFERS, NOT_SEPARABLE, NO_NUMBER, check_criteria, ends, finite_or_none
from longfat.reproduce.stats import level_words
from longfat.runner import memory_budget, run
from longfat.scenario import check_document, check_key, key_path, kind_of, load_scenario, set_path, shipped_dir
from longfat.units import rate_bps, seconds

#: The papers' scenario files: ``<paper>/*.toml`` in the shipped scenarios.
SCENARIO_ROOT = shipped_dir()


@dataclass
class Point:
    experiment: str
    key: dict
    seed: int
    scenario: dict
    cost: float  # estimated bottleneck packets, to schedule long runs first
    looks: tuple[int, ...] = ()  # its case's own "reproduce.looks" (() = the file's)

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
    criteria: dict = field(default_factory=dict)  # [reproduce.criteria], checked (criteria.py)
    seeds: list[int] = field(default_factory=list)  # reproduce.seeds: the first look
    looks: list[int] = field(default_factory=list)  # reproduce.looks: seeds per cell at each look ([] = no later looks)

    @property
    def level(self) -> float:
        """The t quantile level of this file's intervals: LOOKS_LEVEL when
        it has later looks (every look's interval at the corrected level),
        else 0.975 (95 %)."""
        return LOOKS_LEVEL if self.looks or any(pt.looks for pt in self.points) else 0.975

    def looks_of(self, pt: Point) -> list[int]:
        """The looks of a point's cell: its case's, else the file's."""
        return list(pt.looks or self.looks)

    @property
    def most_looks(self) -> int:
        """The most looks any cell of the file has (0: none)."""
        return max([len(self.looks)] + [len(pt.looks) for pt in self.points])

    def cells(self) -> dict[str, list[Point]]:
        """The points by cell (their key, whatever the seed), in order."""
        out: dict[str, list[Point]] = {}
        for pt in self.points:
            out.setdefault(cell_of(pt), []).append(pt)
        return out

    def seed_sequence(self, n: int) -> list[int]:
        """The first ``n`` seeds of a cell: the listed ones, then the whole
        numbers after the largest of them."""
        extra = max(self.seeds) + 1
        return (self.seeds + list(range(extra, extra + max(n - len(self.seeds), 0))))[:n]

    def extend(self, cells: set[str], look: int) -> list[Point]:
        """Runs ``cells`` to the seeds of their look number ``look`` (0 is
        the listed seeds) each: the new points (appended to ``points`` too);
        a cell with fewer looks stays. A point of another seed differs from
        its cell's first only in run.seed, so it is that point's scenario
        with the seed set (the cell was validated when the file was loaded)."""
        new = []
        for c, pts in self.cells().items():
            looks = self.looks_of(pts[0])
            if c not in cells or len(looks) <= look:
                continue
            n = looks[look]
            have = {pt.seed for pt in pts}
            for seed in self.seed_sequence(n):
                if seed in have:
                    continue
                spec = copy.deepcopy(pts[0].scenario)
                spec["run"]["seed"] = seed
                new.append(Point(self.name, dict(pts[0].key), seed, spec, pts[0].cost, pts[0].looks))
        self.points.extend(new)
        return new


def cell_of(pt: Point) -> str:
    """A point's cell: its key, as text (the same for every seed)."""
    return json.dumps(pt.key, sort_keys=True, default=str)


def estimate_cost(spec: dict) -> float:
    """Bottleneck packets the run will carry at most: rate x duration /
    packet on each bottleneck in each direction some source sends through
    (the reverse traffic of a dumbbell, each hop of a parking lot); 1.0 when
    the scenario does not say (never raises)."""
    try:
        rate = rate_bps(spec["network"]["bottleneck"]["rate"])
        dur = seconds(spec["run"]["duration"])
        hops = int(spec["network"].get("hops", 1))
        used = set()
        for kind in ("flows", "short_flows", "web", "udp"):
            for src in spec.get(kind) or []:
                a, b = int(src.get("from", 0)), int(src.get("to", hops))
                used |= {(h, a < b) for h in range(min(a, b), max(a, b))}
        cost = rate * dur / (8 * 1040) * max(len(used), 1)
    except Exception:
        return 1.0
    return cost if math.isfinite(cost) and cost > 0 else 1.0


#: Most runs one scenario file's [reproduce] table may expand to (at its last look).
MAX_RUNS_PER_FILE = 10_000
#: Most entries in reproduce.seeds, and most seeds a look may reach.
MAX_SEEDS = 1000
#: A case's own looks (a key of its table in reproduce.cases): cheap cases
#: may go to more seeds than the file's other cases.
CASE_LOOKS = "reproduce.looks"
#: Most looks at the seeds (reproduce.looks): the intervals' level shares 95 % among them.
MAX_LOOKS = 4
#: The t quantile of every interval of a file with looks: 1 - 0.05 / (2 MAX_LOOKS),
#: so that each row's intervals at all its looks hold together with 95 %
#: (Bonferroni), whichever look stops it.
LOOKS_LEVEL = 1 - 0.05 / (2 * MAX_LOOKS)


def _field_err(path: Path, field: str, what: str) -> ScenarioError:
    return ScenarioError(f"{path}: {field}: {what}", field)


def load_experiment(paper: str, path: Path, quick: bool, memory_budget_bytes: str | int | None = None) -> Experiment:
    """One scenario file's sweep: its [reproduce] table checked field by
    field, the number of runs checked before anything is expanded, then
    every point built (and so validated) by the simulator's own checks
    under the memory budget (as for ``longfat.runner.run``), so that a bad
    point is refused before any run starts. Errors name the file, the field
    and, for a point, its label."""
    budget = memory_budget(memory_budget_bytes)
    path = Path(path)
    doc = load_scenario(path, keep_reproduce=True)
    rep = doc.get("reproduce")
    if rep is None:
        raise ScenarioError(f"{path}: reproduce: missing; a paper's scenario file needs a [reproduce] table", "reproduce")
    if not isinstance(rep, dict):
        raise _field_err(path, "reproduce", f"must be a table ([reproduce]), not {kind_of(rep)}")
    _check_reproduce(path, rep)
    if quick:
        if "looks" in rep and "reproduce.looks" not in rep.get("quick", {}):
            del rep["looks"]  # a smoke test looks once, unless its overrides say otherwise
        for k, v in list(rep.get("quick", {}).items()):
            _set(path, doc, k, v, key_path("reproduce.quick", k))
        rep = doc.get("reproduce")
        if not isinstance(rep, dict):
            raise _field_err(path, "reproduce", f"must be a table, not {kind_of(rep)} (after applying reproduce.quick)")
        check_document(doc, prefix=f"{path}: ")
    cases, vary, seeds = _check_reproduce(path, rep)
    if quick and "reproduce.looks" not in rep.get("quick", {}):
        cases = [{k: v for k, v in c.items() if k != CASE_LOOKS} for c in cases]  # a smoke test looks once
    base = {k: v for k, v in doc.items() if k != "reproduce"}
    exp = Experiment(paper, path.stem, path, rep.get("title", path.stem), doc, seeds=list(seeds), looks=list(rep.get("looks", [])))
    exp.criteria = check_criteria(path, rep.get("criteria", {}))
    keys = list(vary)
    name = f"{paper}-{path.stem}"
    built: set[bytes] = set()
    for ci, case in enumerate(cases):
        for combo in itertools.product(*(vary[k] for k in keys)):
            for seed in seeds:
                spec = copy.deepcopy(base)
                point_key = {}
                for k, v in case.items():
                    if k == CASE_LOOKS:
                        continue
                    _set(path, spec, k, v, key_path(f"reproduce.cases[{ci}]", k))
                    point_key[k] = v
                for k, v in zip(keys, combo):
                    _set(path, spec, k, v, key_path("reproduce.vary", k))
                    point_key[k] = v
                pt = Point(exp.name, point_key, seed, spec, 1.0, tuple(case.get(CASE_LOOKS, ())))
                where = f"{path}: {_one_line(pt.label())}: "
                check_document(spec, prefix=where)
                spec.setdefault("run", {})["seed"] = seed
                spec["name"] = name
                _validate(spec, where, built, budget)
                pt.cost = estimate_cost(spec)
                exp.points.append(pt)
    return exp


def _one_line(label: str, limit: int = 200) -> str:
    """A point label as it can appear in a one-line message."""
    if not label.isprintable():
        label = json.dumps(label)[1:-1]
    return label if len(label) <= limit else label[:limit] + "..."


def _set(path: Path, doc: dict, key: str, value: Any, field: str) -> None:
    try:
        set_path(doc, key, value, name=field)
    except ScenarioError as e:
        raise ScenarioError(f"{path}: {e.args[0]}", field) from None


def _validate(spec: dict, where: str, seen: set[bytes], budget: int) -> None:
    """Builds the point's simulation (and drops it): the simulator's checks,
    with the error prefixed by the file and the point's label. ``seen``
    holds digests of the points already built, without their seeds: the
    seed only changes random draws (start times, jitter, transfers), which
    the checks do not depend on, so a sweep over many seeds is built once
    per point, not once per run. (A seed-specific refusal, such as a web
    generator drawing more transfers than allowed, would still stop the
    run that meets it.)"""
    text = json.dumps(spec)
    unseeded = copy.deepcopy(spec)
    if isinstance(unseeded.get("run"), dict):
        unseeded["run"].pop("seed", None)
    digest = hashlib.sha256(json.dumps(unseeded, sort_keys=True).encode()).digest()
    if digest in seen:
        return
    try:
        sim = Simulation(text, budget)
    except ScenarioError as e:
        field = e.args[1] if len(e.args) > 1 else ""
        raise ScenarioError(where + str(e.args[0]), field) from None
    del sim
    seen.add(digest)


def _check_reproduce(path: Path, rep: dict) -> tuple[list[dict], dict, list[int]]:
    """The sweep of a [reproduce] table, refusing malformed fields by name;
    also refuses a sweep of more than MAX_RUNS_PER_FILE runs (counted, not
    expanded)."""

    def bad(field: str, what: str):
        raise _field_err(path, f"reproduce.{field}", what)

    known = {"title", "seeds", "looks", "cases", "vary", "quick", "criteria"}
    for k in rep:
        if k not in known:
            raise _field_err(path, key_path("reproduce", k), f"unknown field; allowed: {', '.join(sorted(known))}")
    if "title" in rep and not isinstance(rep["title"], str):
        bad("title", f"must be a string, not {kind_of(rep['title'])}")
    seeds = rep.get("seeds", [DEFAULT_SEED])
    if not (isinstance(seeds, list) and seeds and all(isinstance(x, int) and not isinstance(x, bool) and 0 <= x < 2**64 for x in seeds)):
        bad("seeds", "must be a non-empty list of whole numbers in 0..2^64")
    if len(seeds) > MAX_SEEDS:
        bad("seeds", f"{len(seeds)} seeds; at most {MAX_SEEDS}")
    if len(set(seeds)) != len(seeds):
        bad("seeds", "a seed is listed twice")
    cases = rep.get("cases", [])
    if not (isinstance(cases, list) and all(isinstance(c, dict) for c in cases)):
        bad("cases", 'must be a list of tables, e.g. [{ "flows[0].cc" = "reno" }]')
    cases = cases or [{}]
    for i, c in enumerate(cases):
        for k in c:
            if k == CASE_LOOKS:
                _check_looks(path, c[k], seeds, key_path(f"reproduce.cases[{i}]", k))
                continue
            check_key(k, key_path(f"{path}: reproduce.cases[{i}]", k), field=key_path(f"reproduce.cases[{i}]", k))
    vary = rep.get("vary", {})
    if not isinstance(vary, dict):
        bad("vary", 'must be a table of non-empty lists, e.g. { "flows[0].cc" = ["reno", "ltcp"] }')
    for k, v in vary.items():
        check_key(k, key_path(f"{path}: reproduce.vary", k), field=key_path("reproduce.vary", k))
        if not (isinstance(v, list) and v):
            raise _field_err(path, key_path("reproduce.vary", k), f"must be a non-empty list of values, not {'an empty list' if isinstance(v, list) else kind_of(v)}")
    quick = rep.get("quick", {})
    if not isinstance(quick, dict):
        bad("quick", f"must be a table of path = value overrides, not {kind_of(quick)}")
    for k in quick:
        check_key(k, key_path(f"{path}: reproduce.quick", k), field=key_path("reproduce.quick", k))
    looks = rep.get("looks")
    if looks is not None:
        _check_looks(path, looks, seeds, "reproduce.looks")
    sizes = [len(v) for v in vary.values()]
    # At the last look, each case at its own looks' last (or the file's).
    last = [c.get(CASE_LOOKS, looks or [len(seeds)])[-1] for c in cases]
    runs = math.prod(sizes) * sum(last)
    if runs > MAX_RUNS_PER_FILE:
        shown = f"{runs:,}" if runs < 10**18 else "more than 10^18"
        grid = " x ".join(map(str, sizes)) if len(sizes) <= 6 else f"{len(sizes)} lists of {min(sizes)}..{max(sizes)}"
        per_cell = max(last)
        later = looks or any(CASE_LOOKS in c for c in cases)
        how = f"{len(cases)} case(s) x {grid or '1'} values x {'up to ' if len(set(last)) > 1 else ''}{per_cell} seed(s)" + (" at the last look" if later else "")
        field = "looks" if looks else "vary" if vary else "cases" if len(cases) > 1 else "seeds"
        bad(field, f"{shown} runs ({how}); at most {MAX_RUNS_PER_FILE:,} per file")
    return cases, vary, seeds


def _check_looks(path: Path, looks: Any, seeds: list[int], field: str) -> None:
    """A ``looks`` list (the file's, or one case's "reproduce.looks"), refused by ``field``."""
    def bad(what: str):
        raise _field_err(path, field, what)

    if not (isinstance(looks, list) and looks and all(isinstance(x, int) and not isinstance(x, bool) for x in looks)):
        bad(f"must be a list of whole numbers (the seeds per cell at each look, e.g. [5, 10, 20, 30]), not {looks!r}")
    if not 2 <= len(looks) <= MAX_LOOKS:
        bad(f"{len(looks)} looks; give 2 to {MAX_LOOKS} (the first is the listed seeds)")
    if looks[0] != len(seeds):
        bad(f"the first look ({looks[0]}) must be the number of listed seeds ({len(seeds)})")
    if any(b <= a for a, b in zip(looks, looks[1:])):
        bad(f"must rise from look to look, not {looks}")
    if looks[-1] > MAX_SEEDS:
        bad(f"the last look ({looks[-1]} seeds) is above {MAX_SEEDS}")
    if max(seeds) + looks[-1] - len(seeds) >= 2**64:
        bad("the seeds after the listed ones would pass 2^64")


def _natural(stem: str) -> list:
    """Sort key: fig2 before fig10."""
    return [(0, int(t), "") if t.isdigit() and t.isascii() and len(t) < 30 else (1, 0, t) for t in re.split(r"([0-9]+)", stem)]


def load_paper(paper: str, quick: bool, root: Path = SCENARIO_ROOT, memory_budget_bytes: str | int | None = None) -> list[Experiment]:
    d = Path(root) / paper
    files = sorted(d.glob("*.toml"), key=lambda f: _natural(f.stem)) if d.is_dir() else []
    if not files:
        raise ScenarioError(f"no scenario files in {d}", "PAPER")
    budget = memory_budget(memory_budget_bytes)
    return [load_experiment(paper, f, quick, budget) for f in files]


# ---- running ----------------------------------------------------------------


def run_point(spec: dict, memory_budget_bytes: int) -> Any:
    """Worker: one simulation under the command's memory budget (carried
    with the task: a worker started elsewhere does not share the command's
    environment), results returned by value (pickled)."""
    return run(spec, memory_budget_bytes=memory_budget_bytes)


class SpilledResults:
    """Run results kept on disk until asked for (``results[i]`` unpickles run
    i), so that a paper-length reproduction holds one experiment's runs in
    memory at a time, not every run's time series. They go to one
    temporary file in ``directory`` that is unlinked as it is created, so
    it never shows there and a killed process leaves nothing behind."""

    def __init__(self, directory: Path):
        import tempfile

        self.file = tempfile.TemporaryFile(dir=directory)
        self.offset: dict[int, int] = {}

    def __enter__(self) -> "SpilledResults":
        return self

    def __exit__(self, *exc) -> None:
        self.file.close()

    def put(self, i: int, value: Any) -> None:
        import pickle

        self.file.seek(0, os.SEEK_END)
        self.offset[i] = self.file.tell()
        pickle.dump(value, self.file, protocol=pickle.HIGHEST_PROTOCOL)

    def __getitem__(self, i: int) -> Any:
        import pickle

        self.file.seek(self.offset[i])  # KeyError for a run not stored
        return pickle.load(self.file)

    def __contains__(self, i: object) -> bool:
        return i in self.offset

    def __len__(self) -> int:
        return len(self.offset)


def run_points(points: list[Point], jobs: int, on_done: Callable[[Point], None] | None = None, scheduler: str | None = None,
               spill: SpilledResults | None = None, memory_budget_bytes: str | int | None = None, *, executor=None,
               first: int = 0, positions: list[int] | None = None) -> dict[int, Any] | SpilledResults:
    """Runs every point (longest first) on the executor (``longfat.executor``:
    this process if ``jobs`` is 1, else a local Dask cluster of ``jobs``
    worker processes, or the Dask cluster at ``scheduler``); returns results
    by position in ``points`` (in ``spill``, on disk, if given). A failed
    run, an interruption (Ctrl-C, SIGTERM) cancels the rest and stops the
    local workers; local workers also die with this process if it is
    killed. Each run has the memory budget ``memory_budget_bytes`` (as for
    ``longfat.runner.run``), carried in its task. An open ``executor``
    (``longfat.executor.Executor``) serves instead of a new one (the looks
    of sequential seeds share one); the runs are then stored at positions
    ``first``, ``first + 1``, ... (after the earlier looks' runs), or at
    ``positions`` (one per point) if given."""
    from longfat.executor import Executor, Task  # Dask only when runs are made

    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    budget = memory_budget(memory_budget_bytes)
    at = positions if positions is not None else [first + i for i in range(len(points))]
    tasks = [Task(f"point-{at[i]}-{os.getpid()}", run_point, (pt.scenario, budget), pt.cost, pt.label()) for i, pt in enumerate(points)]
    index = {t.key: i for i, t in enumerate(tasks)}
    results: dict[int, Any] = {}
    with contextlib.nullcontext(executor) if executor is not None else Executor(scheduler, jobs, field="--scheduler") as ex:
        for key, _ok, value in ex.run(tasks, stop_on_failure=True):
            i = index[key]
            if spill is not None:
                spill.put(at[i], value)
                del value
            else:
                results[at[i]] = value
            if on_done:
                on_done(points[i])
    return spill if spill is not None else results


# ---- verdicts (the words: criteria.py) --------------------------------------------


def _finite(*xs) -> bool:
    try:
        return all(x is not None and math.isfinite(float(x)) for x in xs)
    except (TypeError, ValueError):
        return False


def evaluate(check: dict, value: float | None) -> str:
    """The verdict of one measured value under one check. Kinds:
    rel (|v - paper| <= tol |paper|), factor (paper/f <= v <= paper*f),
    range (lo <= v <= hi; either bound may be None), none (nothing to compare),
    and two over seeds (criteria.py states their forms):
    ci (the 95 % interval inside [lo, hi]: agrees; wholly outside: differs;
    across a bound: not separable; with judge = "every_seed", every seed's
    value inside agrees and one outside differs) and separate (Welch's
    interval of the difference A - B, ``diff``, wholly on the claimed side
    of zero agrees, wholly on the other side differs, across zero is not
    separable; an exact tie at zero differs from a strict claim and meets a
    non-strict one). For ci and separate, a value, interval or bound that
    is missing, NaN or infinite differs. A median (stat = "median") is
    judged on its interval alone, whose ends may be unbounded (a run that
    never reached ranks last); a missing or NaN end differs."""
    kind = check["kind"]
    if kind == "none":
        return NO_NUMBER
    if check.get("stat") == "median" and kind in ("ci", "separate"):
        return _evaluate_median(check)
    if not _finite(value):
        return DIFFERS  # a missing, NaN or infinite measurement never passes
    v = float(value)
    if kind == "ci":
        lo, hi = check.get("lo"), check.get("hi")
        if check.get("judge") == "every_seed":
            vals = check.get("values") or []
            if not (vals and _finite(lo, hi, *vals)):
                return DIFFERS
            return AGREES if all(lo <= x <= hi for x in vals) else DIFFERS
        ci = check.get("ci") or [None, None]
        if not (_finite(v, lo, hi, *ci) and len(ci) == 2 and ci[0] <= ci[1]):
            return DIFFERS
        if ci[0] >= lo and ci[1] <= hi:
            return AGREES
        if ci[1] < lo or ci[0] > hi:
            return DIFFERS
        return NOT_SEPARABLE
    if kind == "separate":
        d, claim = check.get("diff") or [None, None], check.get("claim")
        if not (_finite(v, *d) and len(d) == 2 and d[0] <= d[1] and claim in (">", "<", ">=", "<=")):
            return DIFFERS
        return _side(d[0], d[1], claim, check.get("margin"))
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


def _evaluate_median(check: dict) -> str:
    """A median's verdict from its order-statistic interval (ci) or the
    differences two such intervals allow (separate), unbounded ends
    included."""
    def known(*xs) -> bool:
        return all(x is not None and not math.isnan(x) for x in xs)

    if check["kind"] == "ci":
        (a, b), lo, hi = ends(check, "ci"), check.get("lo"), check.get("hi")
        if not (known(a, b) and _finite(lo, hi) and a <= b):
            return DIFFERS
        if a >= lo and b <= hi:
            return AGREES
        if b < lo or a > hi:
            return DIFFERS
        return NOT_SEPARABLE
    (a, b), claim = ends(check, "diff"), check.get("claim")
    if not (known(a, b) and a <= b and claim in (">", "<", ">=", "<=")):
        return DIFFERS
    return _side(a, b, claim, check.get("margin"))


def _side(a: float, b: float, claim: str, margin: float | None) -> str:
    """The verdict of an interval [a, b] of A - B under a claim A ``claim``
    B: wholly on the claimed side of 0 agrees, wholly on the other side
    differs, across 0 is not separable; with a ``margin`` (criteria.py), a
    strict claim also differs when the interval lies inside (-margin,
    margin): it rules out any difference the paper would call one."""
    lo, hi = (a, b) if claim[0] == ">" else (-b, -a)  # as a claim that A - B is above 0
    if claim in (">", "<"):
        if lo > 0:
            return AGREES
        if hi <= 0 or (margin and -margin < lo and hi < margin):
            return DIFFERS
        return NOT_SEPARABLE
    return AGREES if lo >= 0 else DIFFERS if hi < 0 else NOT_SEPARABLE


def describe(check: dict) -> str:
    text = _describe(check)
    if check.get("scope") == "consistency":
        text = "consistency check (cannot tell algorithms apart; not counted as a claim): " + text
    elif check.get("scope") == "beyond":
        text = "beyond the paper (a check of something the paper does not claim; not counted): " + text
    elif check.get("scope") == "sensitivity":
        text = "sensitivity (the claim under another reading of the paper; counted apart): " + text
    if check.get("role") == "control":
        text = "negative control, the same check: " + text
    elif "control" in check:
        text += f"; shown only if its negative control ({check['control']}) differs"
    if check.get("id"):
        text += f" [{check['id']}]"
    return text


def _describe(check: dict) -> str:
    kind = check["kind"]
    if kind == "rel":
        return f"within {check['tol'] * 100:g} % of the paper"
    if kind == "factor":
        return f"within a factor {check['factor']:g} of the paper"
    if kind == "range":
        lo, hi = check.get("lo"), check.get("hi")
        if lo is not None and hi is not None:
            return f"between {lo:g} and {hi:g}"
        bound = f">= {lo:g}" if lo is not None else f"<= {hi:g}"
        return bound + (f" (the paper's claim is one-sided: {check['one_sided']})" if check.get("one_sided") else "")
    if kind == "ci":
        if check.get("judge") == "every_seed":
            return f"every seed's value inside [{check['lo']:g}, {check['hi']:g}] (a universal claim); one seed outside: differs"
        ci = f"{level_words(check.get('level', 0.975))} CI"
        if check.get("stat") == "median":
            return (f"the median's {ci} (order statistics; a run that never reached ranks last, an end may be unbounded) inside "
                    f"[{check['lo']:g}, {check['hi']:g}]; wholly outside: differs; across a bound: not separable")
        stat = f"{ci} of the geometric mean" if check.get("stat") == "log" else ci
        return f"{stat} inside [{check['lo']:g}, {check['hi']:g}]; wholly outside: differs; across a bound: not separable"
    if kind == "separate":
        text = _describe_separate(check)
        if check.get("margin"):
            text += f"; wholly inside +/-{check['margin']:g} (no difference the paper would call one): differs"
        return text
    return "paper gives no number"


def _describe_separate(check: dict) -> str:
    what = check.get("what") or ("A", "B")
    tie = "meets" if check["claim"] in (">=", "<=") else "contradicts"
    ci = f"{level_words(check.get('level', 0.975))} CI"
    if check.get("stat") == "median":
        return (f"the differences {what[0]} - {what[1]} that the two medians' {ci}s allow (order statistics; a run that never reached ranks last) "
                f"on the side of {what[0]} {check['claim']} {what[1]}; on the other side: differs; across 0: not separable; an exact tie {tie} the claim")
    if check.get("stat") == "log":
        return (f"Welch {ci} of log {what[0]} - log {what[1]} (ratios: geometric means) on the side of {what[0]} {check['claim']} {what[1]}; "
                f"on the other side: differs; across 0: not separable; an exact tie {tie} the claim")
    return (f"Welch {ci} of {what[0]} - {what[1]} on the side of {what[0]} {check['claim']} {what[1]}; "
            f"on the other side: differs; across 0: not separable; an exact tie {tie} the claim")


def _g(x) -> str:
    if x is None:
        return "none"
    return ("unbounded" if x > 0 else "-unbounded") if math.isinf(x) else f"{x:.4g}"


def deciding(check: dict, value: float | None) -> str:
    """The numbers of this run that decided a row's verdict, in words (shown
    beside a difference, so that every "differs" says by how much)."""
    kind = check.get("kind")
    if kind in (None, "none"):
        return ""
    if check.get("stat") == "median" and kind in ("ci", "separate"):
        lv = level_words(check.get("level", 0.975)).split(" (")[0]
        if kind == "ci":
            a, b = ends(check, "ci")
            return f"the median's {lv} CI [{_g(a)}, {_g(b)}] against the band [{check['lo']:g}, {check['hi']:g}]"
        what = check.get("what") or ("A", "B")
        a, b = ends(check, "diff")
        return (f"{what[0]}'s median in [{', '.join(map(_g, ends(check, 'a')))}], {what[1]}'s in [{', '.join(map(_g, ends(check, 'b')))}] ({lv}): "
                f"{what[0]} - {what[1]} in [{_g(a)}, {_g(b)}] (claim: {what[0]} {check.get('claim')} {what[1]}{_margin_words(check)})")
    if not _finite(value):
        return "no finite measurement"
    if kind == "ci":
        lo, hi = check.get("lo"), check.get("hi")
        if check.get("judge") == "every_seed":
            vals = check.get("values") or []
            out = [v for v in vals if v is None or not (lo <= v <= hi)]
            return (f"{len(out)} of {len(vals)} seeds outside [{lo:g}, {hi:g}]"
                    + (f": {', '.join(_g(v) for v in out[:8])}" + (" ..." if len(out) > 8 else "") if out else ""))
        ci = check.get("ci") or [None, None]
        lv = level_words(check.get("level", 0.975)).split(" (")[0]
        stat = f"geometric mean's {lv} CI" if check.get("stat") == "log" else f"{lv} CI"
        return f"{stat} [{_g(ci[0])}, {_g(ci[1])}] against the band [{lo:g}, {hi:g}]"
    if kind == "separate":
        d = check.get("diff") or [None, None]
        what = check.get("what") or ("A", "B")
        logs = "log " if check.get("stat") == "log" else ""
        lv = level_words(check.get("level", 0.975)).split(" (")[0]
        return (f"Welch {lv} CI of {logs}{what[0]} - {logs}{what[1]}: [{_g(d[0])}, {_g(d[1])}] "
                f"(claim: {what[0]} {check.get('claim')} {what[1]}{_margin_words(check)})")
    if kind == "rel":
        return f"{_g(float(value))} against {check['paper']:g} +/- {check['tol'] * 100:g} %"
    if kind == "factor":
        return f"{_g(float(value))} against [{check['paper'] / check['factor']:.4g}, {check['paper'] * check['factor']:.4g}]"
    if kind == "range":
        return f"{_g(float(value))} against [{_g(check.get('lo'))}, {_g(check.get('hi'))}]"
    return ""


def _margin_words(check: dict) -> str:
    m = check.get("margin")
    return f"; no difference: inside +/-{m:g}" if m else ""


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
    raw_verdict: str = ""  # the check's own verdict, before pairing with a negative control (criteria.settle)
    control_verdict: str = ""  # a claim's: its control's verdict

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
            "value": None if v is None or not math.isfinite(v) else v,
            "check": self.check,
            "criterion": describe(self.check),
            "verdict": self.verdict,
            "decided_by": deciding(self.check, v),
            **({"raw_verdict": self.raw_verdict} if self.raw_verdict else {}),
            **({"control_verdict": self.control_verdict} if self.control_verdict else {}),
            "note": self.note,
        }


def rel(paper: float, tol: float) -> dict:
    return {"kind": "rel", "paper": float(paper), "tol": float(tol)}


def factor(paper: float, f: float) -> dict:
    return {"kind": "factor", "paper": float(paper), "factor": float(f)}


def between(lo: float | None = None, hi: float | None = None) -> dict:
    return {"kind": "range", "lo": lo, "hi": hi}


NONE = {"kind": "none"}


def within(ci: tuple[float, float], lo: float, hi: float) -> dict:
    """A ci check: the 95 % interval ``ci`` of a mean against the band [lo, hi]."""
    return {"kind": "ci", "ci": [finite_or_none(ci[0]), finite_or_none(ci[1])], "lo": float(lo), "hi": float(hi)}


def separate(diff: tuple[float, float], claim: str, what: tuple[str, str] = ("A", "B")) -> dict:
    """A separate check: the paper claims mean A ``claim`` ('>', '<', '>='
    or '<=') mean B; ``diff`` is the 95 % interval of A - B (Welch's,
    ``measure.diff_ci95``)."""
    if claim not in (">", "<", ">=", "<="):
        raise ValueError(f"claim must be one of '>', '<', '>=', '<=', not {claim!r}")
    return {"kind": "separate", "diff": [finite_or_none(diff[0]), finite_or_none(diff[1])], "claim": claim, "what": list(what)}


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
    looks = getattr(exp, "looks", None)
    own = sorted({tuple(pt.looks) for pt in exp.points if pt.looks})
    if looks or own:
        by_n: dict[int, int] = {}
        for pts in exp.cells().values():
            by_n[len(pts)] = by_n.get(len(pts), 0) + 1
        ran = ", ".join(f"{by_n[k]} to {k}" for k in sorted(by_n))
        which = (f"seeds {', '.join(map(str, exp.seeds))}, then the next whole numbers as the looks need" if len(seeds) > len(exp.seeds)
                 else f"seeds {', '.join(map(str, seeds))}")
        return (
            f"Scenario `{exp.path.relative_to(exp.path.parents[2])}`: {n} runs ({which}); "
            f"sequential seeds: looks at {', '.join(map(str, looks or own[0]))} seeds per point"
            + "".join(f" (at {', '.join(map(str, lk))} for the cases that state them)" for lk in own if list(lk) != list(looks or own[0]))
            + ", a point going on while a claim it decides is not separable "
            f"(points by seeds: {ran}); every interval is at {level_words(exp.level)}; "
            f"base: {base['network']['bottleneck']['rate']} bottleneck, {base['run']['duration']} per run."
        )
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
