"""Running one scenario once per algorithm and setting the results side by side."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Callable, Iterable

from longfat._native import ScenarioError
from longfat.catalogue import what_it_does
from longfat.controller import known_algorithms
from longfat.outdir import atomic_dir, write_marker
from longfat.runner import RESULT_SHARE_OF_SERIES, RunResult, execute, human_bytes, memory_budget, prepare
from longfat.scenario import apply_overrides, load_scenario

NS = 1_000_000_000


def with_algorithm(spec: dict, algorithm: str) -> dict:
    """The scenario with every TCP flow switched to ``algorithm`` (its
    parameters dropped: they belonged to the algorithm being replaced)."""
    out = copy.deepcopy(spec)
    for flow in out.get("flows", []):
        flow["cc"] = algorithm
        flow.pop("params", None)
    out["name"] = f"{spec.get('name') or 'run'}-{algorithm}"
    return out


def parse_algorithms(text: str) -> list[str]:
    """``"reno,ltcp"`` -> ["reno", "ltcp"]; refuses unknown or repeated names
    (known: the built-in algorithms, then the registered controllers)."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise ScenarioError("--cc: give at least one algorithm, e.g. --cc reno,ltcp,htcp", "--cc")
    known = known_algorithms()
    for n in names:
        if n not in known:
            raise ScenarioError(f"--cc: unknown algorithm {n!r}; known: {', '.join(known)}", "--cc")
    if len(set(names)) != len(names):
        raise ScenarioError(f"--cc: an algorithm is listed twice in {text!r}", "--cc")
    return names


def compare(
    scenario: str | Path | dict,
    algorithms_to_run: Iterable[str],
    *,
    seed: int | None = None,
    overrides: Iterable[str] = (),
    progress: Callable[[str, float, float], None] | None = None,
    before_run: Callable[[], None] | None = None,
    memory_budget_bytes: str | int | None = None,
) -> dict[str, RunResult]:
    """Runs the scenario once per algorithm; ``progress(algorithm, done_s, total_s)``.
    Every algorithm's scenario is validated first, and the memory all the
    results will hold (see ``check_held_results``; the budget as for
    ``longfat.runner.run``); then ``before_run()`` is called (the command
    line checks its output directory there), then the runs, each engine
    freed as soon as its run is done."""
    budget = memory_budget(memory_budget_bytes)
    base = apply_overrides(load_scenario(scenario), overrides)
    prepared = [(a, *prepare(with_algorithm(base, a), seed=seed, memory_budget_bytes=budget)) for a in algorithms_to_run]  # validate all first
    check_held_results([sim.estimate() for _, _, sim in prepared], budget)
    if before_run is not None:
        before_run()
    results = {}
    while prepared:
        algo, spec, sim = prepared.pop(0)
        cb = None if progress is None else (lambda done, total, a=algo: progress(a, done, total))
        results[algo] = execute(spec, sim, cb)
        del sim
    return results


def check_held_results(estimates: list[dict], budget: int) -> None:
    """Refuses, before anything runs, runs whose results together would pass
    the memory budget: each run fits on its own (the engine checked), but
    the results of all of them are held until they are written and drawn,
    so the command needs the largest run's estimate plus every run's tables."""
    held = sum(e["series_bytes"] for e in estimates) * RESULT_SHARE_OF_SERIES
    need = max((e["memory_bytes"] for e in estimates), default=0) + held
    if need > budget:
        rows = sum(e["series_rows"] for e in estimates)
        raise ScenarioError(
            f"the {len(estimates)} runs could need {human_bytes(need)} of memory (the largest run's estimate, "
            f"plus {human_bytes(held)} for the {rows} time-series rows of all the results, held until they are written), "
            f"more than the memory budget of {human_bytes(budget)}; compare fewer algorithms, use a longer "
            "run.sample_interval or a shorter run, or raise the budget (--memory-budget, LONGFAT_MEMORY_BUDGET)",
            "run.sample_interval",
        )


def summary_rows(results: dict[str, RunResult]) -> list[dict]:
    """One row per algorithm: the bottleneck's utilization, loss rate and
    queue, and the TCP flows' goodput, retransmissions and timeouts."""
    rows = []
    for algo, r in results.items():
        s = r.summary
        links = [l for l in s["links"] if l["monitored"] and not l["name"].endswith(".reverse")]
        bn = links[0] if links else None
        rows.append(
            {
                "algorithm": algo,
                "what": what_it_does(algo),
                "utilization": None if bn is None else bn["utilization"],
                "goodput_bps": s["tcp_goodput_bps"],
                "loss_rate": None if bn is None else bn["loss_rate"],
                "mean_queue_pkts": None if bn is None else bn.get("mean_queue_pkts"),
                "retransmits": sum(f["retransmits"] for f in s["flows"]),
                "timeouts": sum(f["timeouts"] for f in s["flows"]),
                "jain_fairness": s.get("jain_fairness"),
                "measure_from_s": s["measure_from_s"],
                "end_s": s["end_s"],
            }
        )
    return rows


def save_comparison(results: dict[str, RunResult], out_dir: str | Path, plot: bool = True, force: bool = False) -> Path:
    """Writes ``comparison.json``, ``comparison.png`` and one result directory
    per algorithm, atomically, under the same rules as RunResult.save
    (``out_dir`` missing or empty, or with ``force`` an earlier longfat result)."""
    with atomic_dir(out_dir, force=force, kind="compare") as tmp:
        for algo, r in results.items():
            (tmp / algo).mkdir()
            r.write_into(tmp / algo)
            write_marker(tmp / algo, "run")  # each is a result directory of its own
        (tmp / "comparison.json").write_text(json.dumps(summary_rows(results), indent=2) + "\n")
        if plot:
            from longfat.plot import plot_comparison  # matplotlib only when drawing

            plot_comparison(results, tmp / "comparison.png")
    return Path(out_dir)
