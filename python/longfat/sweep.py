"""``longfat sweep``: a scenario plus a grid, expanded into fully resolved
runs, run on Dask, stored in a study (see ``longfat.store``).

A grid comes from the command line (``--grid KEY=[...]``, ``--cc a,b``,
``--seeds N``) or from a ``[sweep]`` table in the scenario file::

    [sweep]
    cc = ["reno", "cubic"]          # every TCP flow takes each in turn
    seeds = 3                       # run.seed, run.seed + 1, run.seed + 2 (or a list)
    [sweep.grid]
    "network.bottleneck.rate" = ["100Mbps", "1Gbps"]
    "flows[0].rtt" = ["20ms", "80ms"]

The command line's entries replace the file's (a ``--grid`` key replaces
the same key; ``--cc`` and ``--seeds`` replace theirs). The cells are the
product of the grid's keys (in order), the algorithms and the seeds.
"""

from __future__ import annotations

import contextlib
import copy
import itertools
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from longfat._native import ScenarioError, Simulation
from longfat.controller import code_fingerprint, pack, registry, unpack
from longfat.outdir import check_interrupted
from longfat.scenario import apply_overrides, check_document, check_key, display, key_path, kind_of, load_scenario, parse_value, seed_of, set_path, split_key
from longfat.store import result_files, run_id

#: Fields of a ``[sweep]`` table.
SWEEP_FIELDS = ("grid", "cc", "seeds")
#: At most this many cells in one sweep (a typo like seeds = 10000 over a
#: big grid is refused before anything is expanded). Each cell is validated
#: (the engine built) before the first run: about 0.25 ms and 1.4 kB per
#: cell for a one-flow scenario, so the limit costs at most about 25 s and
#: 140 MB up front.
MAX_CELLS = 100_000
#: Seeds the store can hold (its seed column is a signed 64-bit integer).
MAX_SEED = 2**63 - 1


@dataclass(frozen=True)
class Cell:
    """One run of a sweep: its coordinates in the grid and its fully
    resolved scenario (seed included)."""

    labels: dict
    scenario: dict
    cost: float = 1.0
    label_types: dict = field(default_factory=dict)
    #: The code of the Python controllers it names, when the cell was made
    #: (controller.code_fingerprint): part of its key, so that an edited
    #: class runs again; {} for built-in controllers only.
    code: dict = field(default_factory=dict)

    @property
    def run_id(self) -> str:
        return run_id(self.scenario, code=self.code)

    def describe(self) -> str:
        return _describe(self.labels)


@dataclass
class Grid:
    axes: dict[str, list] = field(default_factory=dict)  # scenario key -> values
    ccs: list[str] | None = None
    seeds: list[int] | None = None


# ---- the grid --------------------------------------------------------------------


def _check_values(key: str, values: Any, field_name: str) -> list:
    if not isinstance(values, list) or not values:
        raise ScenarioError(f"{field_name}: must be a non-empty array of values, e.g. [\"100Mbps\", \"1Gbps\"], not {kind_of(values)}", field_name)
    return values


def _seeds(value: Any, base: int, field_name: str) -> list[int]:
    if isinstance(value, bool):
        raise ScenarioError(f"{field_name}: must be a number of seeds (1..10000) or an array of seeds, not a boolean", field_name)
    if isinstance(value, int):
        if not 1 <= value <= 10_000:
            raise ScenarioError(f"{field_name}: {value} is out of range; allowed 1..=10000 seeds", field_name)
        if base + value - 1 > MAX_SEED:
            raise ScenarioError(f"{field_name}: seeds {base}..{base + value - 1} pass 2^63-1, the largest seed the store keeps; lower run.seed", field_name)
        return [base + i for i in range(value)]
    if isinstance(value, list) and value:
        for s in value:
            if isinstance(s, bool) or not isinstance(s, int) or not 0 <= s <= MAX_SEED:
                raise ScenarioError(f"{field_name}: every seed must be an integer in 0..=2^63-1, not {display(repr(s), 40)}", field_name)
        if len(set(value)) != len(value):
            raise ScenarioError(f"{field_name}: a seed is listed twice", field_name)
        return list(value)
    raise ScenarioError(f"{field_name}: must be a number of seeds (1..10000) or a non-empty array of seeds, not {kind_of(value)}", field_name)


def grid_from_file(table: Any, base_seed: int) -> Grid:
    """The ``[sweep]`` table of a scenario file."""
    from longfat.compare import parse_algorithms

    if not isinstance(table, dict):
        raise ScenarioError(f"sweep: must be a table, not {kind_of(table)}", "sweep")
    for k in table:
        if k not in SWEEP_FIELDS:
            f = key_path("sweep", k)
            raise ScenarioError(f"{f}: unknown field; allowed: {', '.join(SWEEP_FIELDS)}", f)
    g = Grid()
    axes = table.get("grid", {})
    if not isinstance(axes, dict):
        raise ScenarioError(f"sweep.grid: must be a table of KEY = [values], not {kind_of(axes)}", "sweep.grid")
    for key, values in axes.items():
        f = key_path("sweep.grid", key)
        check_key(key, f, f)
        g.axes[key] = _check_values(key, values, f)
    if "cc" in table:
        cc = table["cc"]
        if not isinstance(cc, list) or not all(isinstance(c, str) for c in cc):
            raise ScenarioError(f"sweep.cc: must be an array of algorithm names, not {kind_of(cc)}", "sweep.cc")
        try:
            g.ccs = parse_algorithms(",".join(cc))
        except ScenarioError as e:
            raise ScenarioError(e.args[0].replace("--cc", "sweep.cc", 1), "sweep.cc") from None
    if "seeds" in table:
        g.seeds = _seeds(table["seeds"], base_seed, "sweep.seeds")
    return g


def grid_from_args(grid: Iterable[str] = (), cc: str | None = None, seeds: int | None = None, base_seed: int = 1, file_grid: Grid | None = None) -> Grid:
    """The command line's ``--grid KEY=[...]`` (repeatable), ``--cc`` and
    ``--seeds`` over the file's grid."""
    from longfat.compare import parse_algorithms

    g = copy.deepcopy(file_grid) if file_grid is not None else Grid()
    for item in grid or ():
        if "=" not in item:
            raise ScenarioError(f"--grid {display(item)}: expected KEY=[values], e.g. --grid 'network.bottleneck.rate=[\"100Mbps\",\"1Gbps\"]'", "--grid")
        key, text = item.split("=", 1)
        key = key.strip()
        f = f"--grid {display(key)}"
        check_key(key, f, "--grid")
        value = parse_value(text.strip(), key, name=f)
        g.axes.pop(key, None)
        g.axes[key] = _check_values(key, value, f)
    if cc is not None:
        g.ccs = parse_algorithms(cc)
    if seeds is not None:
        g.seeds = _seeds(seeds, base_seed, "--seeds")
    return g


def _label_types(axes: dict[str, list]) -> dict[str, str]:
    """A grid key whose values are of mixed types is stored as text (one
    column has one type in every run's file)."""
    out = {}
    for k, vs in axes.items():
        kinds = {type(v).__name__ if not isinstance(v, (int, float)) or isinstance(v, bool) else "number" for v in vs}
        if len(kinds) > 1 or kinds & {"list", "dict"}:
            out[k] = "string"
    return out


def base_seed(base: dict) -> int:
    """The scenario's ``run.seed`` (the engine's default if absent), refused
    unless an integer the store can keep."""
    seed = seed_of(base)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise ScenarioError(f"run.seed: must be an integer in 0..=2^63-1 (the seeds of a sweep count up from it), not {display(repr(seed), 40)}", "run.seed")
    return seed


def _check_axes(grid: Grid) -> None:
    """Refuses axes that would overwrite each other, so that every label
    says what its cell ran: two keys where one is the other or inside it
    (``flows[0].tcp`` and ``flows.0.tcp.header_size``), a key that sets the
    seed (``run.seed``, ``run``: the seeds are their own axis), and with an
    algorithm axis a key that sets a flow's ``cc`` or ``params`` (which the
    algorithm replaces)."""
    parts = {k: split_key(k, f"--grid {display(k)}") for k in grid.axes}
    keys = list(parts)
    for i, k in enumerate(keys):
        p = parts[k]
        for k2 in keys[i + 1 :]:
            q = parts[k2]
            n = min(len(p), len(q))
            if p[:n] == q[:n]:
                raise ScenarioError(f"--grid {display(k2)}: overlaps the grid key {display(k)}; one would overwrite the other in every cell", k2)
        m = min(len(p), 2)  # the key is run, run.seed, or inside run.seed
        if p[:m] == ["run", "seed"][:m]:
            raise ScenarioError(f"--grid {display(k)}: sets run.seed, which the seeds set; give the seeds with --seeds or sweep.seeds", k)
        if grid.ccs is not None and p[0] == "flows" and (len(p) <= 2 or p[2] in ("cc", "params")):
            raise ScenarioError(f"--grid {display(k)}: sets the flows' algorithm or its parameters, which --cc / sweep.cc replace in every cell; drop one of the two", k)


def _flows_label(spec: dict) -> str:
    flows = spec.get("flows", [])
    ccs = {f.get("cc", "reno") for f in flows if isinstance(f, dict)} if isinstance(flows, list) else set()
    return ",".join(sorted(c for c in ccs if isinstance(c, str)))


def expand(base: dict, grid: Grid, *, memory_budget_bytes: int | None = None, on_cell: Callable[[int, int], None] | None = None) -> list[Cell]:
    """Every cell of the grid as a fully resolved scenario, each validated
    (the engine builds it) before anything runs: a bad value in one cell is
    refused with a ScenarioError naming the cell and the field. Cells are
    costed by their estimated events (longest first)."""
    from longfat.compare import with_algorithm
    from longfat.runner import memory_budget

    budget = memory_budget(memory_budget_bytes)
    axes = list(grid.axes.items())
    n = len(grid.seeds or [None]) * len(grid.ccs or [None])
    for _, vs in axes:
        n *= len(vs)
    if n > MAX_CELLS:
        raise ScenarioError(f"sweep: the grid has {n:,} cells; at most {MAX_CELLS:,} are allowed in one sweep", "sweep")
    seeds = grid.seeds or [base_seed(base)]
    _check_axes(grid)
    types = _label_types(grid.axes)
    cells = []
    combos = itertools.product(*(vs for _, vs in axes), grid.ccs or [None], seeds)
    for i, combo in enumerate(combos):
        values, cc, seed = combo[: len(axes)], combo[-2], combo[-1]
        spec = copy.deepcopy(base)
        labels: dict[str, Any] = {}
        where = f"cell {i + 1} of {n}"
        try:
            for (key, _), v in zip(axes, values):
                labels[key] = v
                set_path(spec, key, v, name=f"--grid {display(key)}")
            check_document(spec)  # before anything copies or walks it
            if cc is not None:
                labels["cc"] = cc
                name = spec.get("name")
                spec = with_algorithm(spec, cc)
                if name is None:
                    spec.pop("name", None)
                else:
                    spec["name"] = name
            labels["seed"] = seed
            set_path(spec, "run.seed", seed, name="--seeds")
            spec = apply_overrides(spec, ())  # the document checks
        except ScenarioError as e:
            raise ScenarioError(f"{where} ({_describe(labels)}): {e.args[0]}", e.args[1]) from None
        cost = validate(labels, spec, where, budget)
        if cc is None:  # the flows' own algorithms, known valid now
            labels = {**{k: v for k, v in labels.items() if k != "seed"}, "cc": _flows_label(spec), "seed": seed}
        cells.append(Cell(labels, spec, cost, types, code_fingerprint(spec)))
        if on_cell:
            on_cell(i + 1, n)
    return cells


def validate(labels: dict, spec: dict, where: str, budget: int) -> float:
    """Builds the engine for one resolved scenario (the whole validation);
    returns its estimated events. A refusal is re-raised naming ``where``
    and the cell's labels."""
    try:
        sim = Simulation(json.dumps(spec), budget, registry())
    except ScenarioError as e:
        raise ScenarioError(f"{where} ({_describe(labels)}): {e.args[0]}", e.args[1]) from None
    cost = float(sim.estimate()["events"])
    del sim
    return cost


def cells_of(pairs: Iterable[tuple[dict, dict]], *, memory_budget_bytes: int | None = None) -> list[Cell]:
    """Cells from (labels, resolved scenario) pairs built elsewhere (the
    suite's experiments), each validated as ``expand`` validates its own."""
    from longfat.runner import memory_budget

    budget = memory_budget(memory_budget_bytes)
    pairs = list(pairs)
    return [Cell(dict(labels), spec, validate(labels, spec, f"cell {i + 1} of {len(pairs)}", budget), code=code_fingerprint(spec)) for i, (labels, spec) in enumerate(pairs)]


def _describe(labels: dict) -> str:
    return ", ".join(f"{display(k, 40)}={display(json.dumps(v, default=str), 40)}" for k, v in labels.items()) or "the base scenario"


def load_sweep(path: str | Path, overrides: Iterable[str] = ()) -> tuple[dict, Grid]:
    """The base scenario (``--set`` applied) and the file's grid."""
    doc = load_scenario(path, keep_sweep=True)
    table = doc.pop("sweep", None)
    base = apply_overrides(doc, overrides)
    return base, (grid_from_file(table, base_seed(base)) if table is not None else Grid())


# ---- running ---------------------------------------------------------------------


def run_cell(scenario_json: str, rid: str, labels: dict, label_types: dict, memory_budget_bytes: int, controllers: bytes | None = None) -> dict[str, bytes]:
    """Worker: one run under the command's memory budget, returned as the
    Parquet files the store keeps. The budget travels with the task: a
    worker started elsewhere does not share the command's environment; so
    do the controllers written in Python the command registered
    (``longfat.controller.pack``), which the run gets without touching the
    worker's own registry."""
    from longfat.runner import run

    t0 = time.perf_counter()
    res = run(json.loads(scenario_json), memory_budget_bytes=memory_budget_bytes, controllers=unpack(controllers))
    return result_files(rid, labels, res, time.perf_counter() - t0, label_types)


@dataclass
class SweepOutcome:
    study: Path
    total: int
    skipped: int  # already in the study
    ran: int
    failed: list[tuple[Cell, str]]
    wall_s: float
    database_error: str | None = None  # study.duckdb could not be rebuilt (the runs are stored)
    redone: list[tuple[Path, str]] = field(default_factory=list)  # damaged files of stored runs run again, with why
    other_builds: dict[str, int] = field(default_factory=dict)  # runs of other longfat builds in the study, per build


def run_cells(
    cells: list[Cell],
    study: str | Path,
    *,
    scheduler: str | None = None,
    workers: int | None = None,
    on_status=None,
    command: str | None = None,
    field: str = "--out",
    memory_budget_bytes: str | int | None = None,
) -> SweepOutcome:
    """Runs the cells not yet in ``study`` on the executor, each under the
    memory budget (see ``longfat.runner.memory_budget``, resolved here), and
    stores each as it finishes; then refreshes the study's database. Failed
    runs are recorded under ``failed/`` and returned; the others are kept. A
    stored run with a missing or unreadable file counts as not done: it runs
    again and its damaged files are returned in ``redone``."""
    from longfat.executor import Executor, Task
    from longfat.runner import memory_budget
    from longfat.store import open_study, refresh_database, scan, write_failure, write_run

    from longfat.outdir import normalize_path

    t0 = time.perf_counter()
    budget = memory_budget(memory_budget_bytes)
    by_id: dict[str, Cell] = {}
    for c in cells:
        by_id.setdefault(c.run_id, c)  # identical cells are one run
    path = normalize_path(study, field)
    stored = scan(path) if path.is_dir() else None
    done = set(stored.runs) if stored else set()
    todo = [c for rid, c in by_id.items() if rid not in done]
    redone = stored.damaged_files(by_id) if stored else []
    failed: list[tuple[Cell, str]] = []
    ran = 0
    # The executor (a cluster reached, workers started) before the study is
    # made: an unreachable scheduler leaves nothing behind.
    with Executor(scheduler, workers) if todo else contextlib.nullcontext() as ex:
        study = open_study(study, field, command=command, planned=by_id)
        if todo:
            controllers = pack()  # once: every task carries the same bytes
            tasks = [Task(c.run_id, run_cell, (json.dumps(c.scenario), c.run_id, c.labels, c.label_types, budget, controllers), c.cost) for c in todo]
            for rid, ok, value in ex.run(tasks, on_status):
                if ok:
                    write_run(study, rid, value)
                    ran += 1
                else:
                    write_failure(study, rid, by_id[rid].labels, value)
                    failed.append((by_id[rid], value))
    # The database is derived from the Parquet files (its views list the
    # files found whole): a failure to rebuild it (DuckDB out of memory,
    # say) loses nothing, and the next sweep rebuilds it.
    database_error = None
    try:
        refresh_database(study)
    except Exception as e:  # duckdb.Error and MemoryError alike
        database_error = f"{type(e).__name__}: {' '.join(str(e).split())[:300]}"
    # DuckDB turns a signal that lands in the rebuild into its own
    # exception: that is an interruption, not a database error.
    check_interrupted()
    return SweepOutcome(study, len(by_id), len(by_id) - len(todo), ran, failed, time.perf_counter() - t0, database_error, redone, stored.other_builds() if stored else {})
