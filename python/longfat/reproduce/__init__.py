"""``longfat reproduce``: rerun a paper's evaluation and report, figure by
figure, how longfat's numbers compare with the published ones."""

from __future__ import annotations

import contextlib
import importlib
import os
import pickle
import time
from pathlib import Path
from typing import Callable

from longfat._native import ScenarioError
from longfat.reproduce.coverage import score as coverage_score
from longfat.reproduce.core import MAX_LOOKS, Point, SpilledResults, load_paper, run_points
from longfat.reproduce.criteria import settle
from longfat.reproduce.sequential import pending_cells
from longfat.reproduce.stats import at_level
from longfat.reproduce.measure import Runs
from longfat.reproduce.report import LAYOUT, git_commit, machine, write_html, write_json, write_markdown
from longfat.outdir import atomic_dir, check_container, check_output_dir, made_dirs
from longfat.runner import memory_budget

PAPERS = ("ltcp", "htcp", "ehstcp", "tcpgt", "plt")

#: Bottleneck packets one worker simulates per second, for ``--plan``'s
#: estimate; measured on the 2-core machine of docs/performance.md
#: (2026-11-26, 2 workers): LTCP Fig. 5 (one flow, 192 M packets) 3.7 M/s,
#: H-TCP Figs. 8-10 (two flows, 337 M) 7 M/s; the lower one, rounded down.
PACKETS_PER_WORKER_S = 3.5e6


#: LONGFAT_REPRODUCE_CACHE's file layout: a pickled header {"format", "keys"
#: (run_key of each run), "wall_s", "costs"}, then each run's result as an
#: 8-byte little-endian length and its pickle, in the keys' order. It is
#: written and read one run at a time, so that the cache, like the runs
#: themselves (SpilledResults), never holds more than one result in memory
#: (format 2, one pickled dict of every result, took 16,000 runs' results into
#: memory at once and ran the machine out of it).
CACHE_FORMAT = 3


def write_cache(path: str | Path, keys: list[str], results, wall_s: float, costs: list[float]) -> None:
    """Writes LONGFAT_REPRODUCE_CACHE's file (``results[i]``: the run of
    ``keys[i]``, fetched one at a time) beside ``path`` and renames it into
    place: an interrupted write leaves the old file whole."""
    partial = f"{path}.partial"
    with open(partial, "wb") as fh:
        pickle.dump({"format": CACHE_FORMAT, "keys": list(keys), "wall_s": float(wall_s), "costs": list(costs)}, fh)
        for i in range(len(keys)):
            blob = pickle.dumps(results[i], protocol=pickle.HIGHEST_PROTOCOL)
            fh.write(len(blob).to_bytes(8, "little"))
            fh.write(blob)
    os.replace(partial, path)


class CacheReader:
    """LONGFAT_REPRODUCE_CACHE's file, open: its header, and each run's result
    read when asked for (``get``). Anything else (a file of the user's, an
    older layout, a file cut short) is refused by name, and left as it is."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self.fh = open(path, "rb")
        try:
            head = pickle.load(self.fh)
        except Exception as e:  # noqa: BLE001 - any file that is not a cache is refused, never overwritten
            self.fh.close()
            raise self._refused(f"not a file longfat reproduce wrote ({type(e).__name__}); name another path") from None
        if not (isinstance(head, dict) and head.get("format") == CACHE_FORMAT):
            self.fh.close()
            raise self._refused("written by an older longfat (its runs are not matched by their scenarios, or not one at a time); remove it")
        self.keys, self.wall_s, self.costs = list(head["keys"]), float(head["wall_s"]), list(head["costs"])
        size = os.fstat(self.fh.fileno()).st_size
        self.where: dict[str, tuple[int, int, int]] = {}
        for i, key in enumerate(self.keys):
            n = int.from_bytes(self.fh.read(8), "little")
            start = self.fh.tell()
            if start + n > size or n == 0:
                self.fh.close()
                raise self._refused(f"cut short at run {i + 1} of {len(self.keys)}; remove it")
            self.where[key] = (start, n, i)
            self.fh.seek(n, os.SEEK_CUR)

    def _refused(self, what: str) -> ScenarioError:
        return ScenarioError(f"LONGFAT_REPRODUCE_CACHE={self.path}: {what}", "LONGFAT_REPRODUCE_CACHE")

    def get(self, key: str) -> tuple[object, float] | None:
        """The result of the run ``key`` (run_key) and its cost, or None."""
        hit = self.where.get(key)
        if hit is None:
            return None
        start, n, i = hit
        self.fh.seek(start)
        return pickle.loads(self.fh.read(n)), self.costs[i]

    def close(self) -> None:
        self.fh.close()


def run_key(pt: Point) -> str:
    """What identifies a run in LONGFAT_REPRODUCE_CACHE: its label and a
    digest of its whole scenario (a changed base file, not only a changed
    case, makes a new run)."""
    import hashlib
    import json

    body = json.dumps(pt.scenario, sort_keys=True, default=str).encode()
    return f"{pt.label()} {hashlib.sha256(body).hexdigest()[:16]}"


def inputs_digest(paper: str) -> str:
    """SHA-256 over what decides a paper's report besides the simulator: its
    scenario files and its analysis module (so a committed report can be
    checked to come from the current ones)."""
    import hashlib

    from longfat.reproduce.core import SCENARIO_ROOT

    h = hashlib.sha256()
    files = sorted((Path(SCENARIO_ROOT) / paper).glob("*.toml")) + [Path(paper_module(paper).__file__)]
    for f in files:
        h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def load_papers(papers: list[str], quick: bool, only: list[str] | None = None, *, memory_budget_bytes: str | int | None = None) -> dict:
    """Each paper's experiments, or with ``only`` the named ones of the one
    paper (an unknown name is refused, listing the allowed ones); every
    point validated under the memory budget (as for ``longfat.runner.run``)."""
    budget = memory_budget(memory_budget_bytes)
    experiments = {p: load_paper(p, quick, memory_budget_bytes=budget) for p in papers}
    if only is not None:
        (p, exps), = experiments.items()
        names = [e.name for e in exps]
        for n in only:
            if n not in names:
                raise ScenarioError(f"--only: {p} has no experiment {n!r}; allowed: {', '.join(names)}", "--only")
        experiments[p] = [e for e in exps if e.name in only]
    return experiments


def paper_module(paper: str):
    return importlib.import_module(f"longfat.reproduce.{paper}")


def reproduce(
    papers: list[str],
    *,
    quick: bool,
    jobs: int,
    out: Path,
    command: str,
    progress: Callable[[int, int, float, float, str], None] | None = None,
    force: bool = False,
    scheduler: str | None = None,
    only: list[str] | None = None,
    memory_budget_bytes: str | int | None = None,
) -> dict[str, Path]:
    """Runs every experiment of ``papers`` on the executor (``jobs`` local
    Dask workers, or the Dask cluster at ``scheduler``), then writes
    ``out/<paper>/`` (report.md, report.html, results.json, figures), each
    directory atomically. ``out`` is a container: each ``out/<paper>`` must
    be missing or empty, or with ``force`` an earlier longfat result; all of
    them are checked before the first run. ``progress(done_runs, total_runs,
    done_cost, total_cost, label)`` is called after each run. Every run has
    the memory budget ``memory_budget_bytes`` (as for ``longfat.runner.run``,
    settled here once and carried in each run's task)."""
    budget = memory_budget(memory_budget_bytes)
    experiments = load_papers(papers, quick, only, memory_budget_bytes=budget)
    check_container(out)
    for p in papers:
        check_output_dir(out / p, force)
    points: list[Point] = []
    owner: list[tuple[str, str]] = []
    for p, exps in experiments.items():
        for e in exps:
            for pt in e.points:
                points.append(pt)
                owner.append((p, e.name))
    state = {"n": 0, "cost": 0.0, "total": len(points), "total_cost": sum(pt.cost for pt in points)}
    started = time.perf_counter()

    def on_done(pt: Point) -> None:
        state["n"] += 1
        state["cost"] += pt.cost
        if progress:
            progress(state["n"], state["total"], state["cost"], state["total_cost"], pt.label())

    cache = os.environ.get("LONGFAT_REPRODUCE_CACHE")
    with contextlib.ExitStack() as stack:
        # Developer aid (LONGFAT_REPRODUCE_CACHE): the runs of an earlier
        # invocation are replayed, matched by their whole scenario (run_key),
        # the others run, and the file then holds them all. Replayed runs
        # count at the wall time they took when they ran (their share of that
        # invocation's, by cost).
        reader: CacheReader | None = None
        cached_wall, cached_cost = 0.0, 0.0
        if cache and Path(cache).is_file():
            reader = stack.enter_context(contextlib.closing(CacheReader(cache)))
            cached_wall, cached_cost = reader.wall_s, sum(reader.costs)
        # The runs wait on disk (an unlinked file in --out) for their analysis:
        # a paper-length reproduction's time series do not fit in memory.
        results = stack.enter_context(SpilledResults(stack.enter_context(made_dirs(out))))
        executor = None
        walls = {"ran": 0.0, "replayed_cost": 0.0, "replayed": 0}

        def run_batch(batch: list[Point], first: int) -> None:
            nonlocal executor
            fresh = []
            for i, pt in enumerate(batch):
                hit = reader.get(run_key(pt)) if reader else None
                if hit is None:
                    fresh.append(i)
                    continue
                results.put(first + i, hit[0])
                walls["replayed"] += 1
                walls["replayed_cost"] += hit[1] or 0.0
                on_done(pt)
            if not fresh:
                return
            if executor is None and (jobs > 1 or scheduler):
                from longfat.executor import Executor

                executor = stack.enter_context(Executor(scheduler, jobs, field="--scheduler"))
            t0 = time.perf_counter()
            run_points([batch[i] for i in fresh], jobs, on_done, scheduler=scheduler, spill=results, memory_budget_bytes=budget,
                       executor=executor, positions=[first + i for i in fresh])
            walls["ran"] += time.perf_counter() - t0

        run_batch(points, 0)
        # Sequential seeds (reproduce.sequential): after each look, the cells
        # of undecided claims of files with later looks run to the next one.
        closed: set[tuple[str, str]] = set()
        for look in range(1, MAX_LOOKS):
            batch: list[Point] = []
            batch_owner: list[tuple[str, str]] = []
            for p, exps in experiments.items():
                for e in exps:
                    if e.most_looks <= look or (p, e.name) in closed:
                        continue
                    pairs = [(points[i], results[i]) for i in range(len(points)) if owner[i] == (p, e.name)]
                    cells = pending_cells(paper_module(p).ANALYSES[e.name], e, pairs)
                    del pairs
                    new = e.extend(cells, look) if cells else []
                    if not new:
                        closed.add((p, e.name))
                    batch += new
                    batch_owner += [(p, e.name)] * len(new)
            if not batch:
                break
            first = len(points)
            points += batch
            owner += batch_owner
            state["total"] += len(batch)
            state["total_cost"] += sum(pt.cost for pt in batch)
            run_batch(batch, first)
        total_wall = time.perf_counter() - started
        if walls["replayed"]:
            share = walls["replayed_cost"] / cached_cost if cached_cost > 0 else 1.0
            total_wall = walls["ran"] + cached_wall * min(share, 1.0)
        if cache and walls["replayed"] < len(points):
            write_cache(cache, [run_key(pt) for pt in points], results, total_wall, [pt.cost for pt in points])
        return _write_reports(experiments, points, owner, results, total_wall, state["total_cost"], papers, out, force, quick, command, jobs, scheduler, only)


def _write_reports(experiments, points, owner, results, total_wall, total_cost, papers, out, force, quick, command, jobs, scheduler, only):
    """Each paper's analysis and report, one experiment's runs in memory at a time."""
    wall_by_paper: dict[str, float] = {p: 0.0 for p in papers}
    for i, pt in enumerate(points):
        # Each paper's share of the wall time, in proportion to its work.
        wall_by_paper[owner[i][0]] += total_wall * (pt.cost / total_cost if total_cost else 1 / len(points))

    written = {}
    for p, exps in experiments.items():
        mod = paper_module(p)
        with atomic_dir(out / p, force=force, kind="reproduction") as tmp:
            sections = []
            # A paper module may list its experiments in report order
            # (ORDER); otherwise the scenario files' order.
            order = getattr(mod, "ORDER", None)
            if order:
                exps = sorted(exps, key=lambda e: order.index(e.name) if e.name in order else len(order))
            for e in exps:
                pairs = [(points[i], results[i]) for i in range(len(points)) if owner[i] == (p, e.name)]
                analyse = mod.ANALYSES[e.name]
                with at_level(e.level):
                    sections.append(analyse(Runs(pairs), tmp, e))
                del pairs  # this experiment's runs leave memory before the next one's are loaded
            for extra in ([] if only else getattr(mod, "EXTRA", [])):  # --only: just the named experiments
                sections.append(extra(tmp))
            for s in sections:  # a claim and its control are criteria of one scenario file: one section
                settle(s.rows)
            meta = {
                "paper": p,
                "title": mod.TITLE,
                "authors": getattr(mod, "AUTHORS", ""),
                "citation": mod.CITATION,
                "notes": getattr(mod, "NOTES", ""),
                **({"spread": mod.SPREAD} if hasattr(mod, "SPREAD") else {}),
                "mode": "quick" if quick else "full",
                **({"only": only} if only else {}),
                "command": command,
                "runs": sum(len(e.points) for e in exps),
                "later_looks": sum(len(e.points) - len(e.cells()) * len(e.seeds) for e in exps),
                "wall_s": wall_by_paper[p],
                "total_wall_s": total_wall,
                "jobs": jobs,
                "executor": f"{jobs} parallel jobs" if scheduler is None else f"the workers of the Dask cluster at {scheduler}",
                "machine": machine(),
                "commit": git_commit(),
                "inputs": inputs_digest(p),
                "layout": LAYOUT,
            }
            if hasattr(mod, "COVERAGE"):
                meta["coverage"] = [c.to_json(f) for f, c in mod.COVERAGE.items()]
                meta["coverage_score"] = coverage_score(mod.COVERAGE)
            write_markdown(tmp / "report.md", meta, sections)
            write_html(tmp / "report.html", tmp, meta, sections)
            write_json(tmp / "results.json", meta, sections)
        written[p] = out / p
    return written
