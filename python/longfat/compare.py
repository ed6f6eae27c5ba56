"""Running one scenario once per algorithm and setting the results side by side."""

from __future__ import annotations

import copy
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

from longfat._native import ScenarioError
from longfat import heatmap
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
    so the command needs the largest run's estimate plus every run's tables
    and summary (its Python objects, ``python_summary_bytes``)."""
    held = sum(e["series_bytes"] for e in estimates) * RESULT_SHARE_OF_SERIES + sum(e["python_summary_bytes"] for e in estimates)
    need = max((e["memory_bytes"] for e in estimates), default=0) + held
    if need > budget:
        rows = sum(e["series_rows"] for e in estimates)
        raise ScenarioError(
            f"the {len(estimates)} runs could need {human_bytes(need)} of memory (the largest run's estimate, "
            f"plus {human_bytes(held)} for the {rows} time-series rows and the summaries of all the results, held until they are written), "
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


@dataclass(frozen=True)
class Metric:
    """A column of the comparison's summary (comparison.md and its heat map):
    the summary_rows key, its label and unit, which way is better, and how
    it is shown (times ``scale``, ``digits`` significant digits; 0: a count)."""

    key: str
    label: str
    unit: str
    better: str  # "higher" or "lower" (longfat.heatmap.direction)
    scale: float = 1.0
    digits: int = 3

    def text(self, v: float | int | None) -> str:
        if v is None or (isinstance(v, float) and not math.isfinite(v)):
            return heatmap.NA_TEXT
        if self.digits == 0:
            return f"{int(v)}"
        x = v * self.scale
        if x != 0 and (abs(x) >= 10**self.digits or abs(x) < 10**-self.digits):
            return f"{x:.{self.digits - 1}e}"
        return f"{x:.{self.digits}g}"

    @property
    def header(self) -> str:
        return self.label + (f" ({self.unit})" if self.unit else "")


#: The comparison's summary columns, each with its better direction (declared here only).
SUMMARY_METRICS = (
    Metric("utilization", "utilization", "%", "higher", scale=100.0, digits=4),
    Metric("goodput_bps", "goodput", "Mbit/s", "higher", scale=1e-6),
    Metric("loss_rate", "loss rate", "%", "lower", scale=100.0),
    Metric("mean_queue_pkts", "mean queue", "pkts", "lower"),
    Metric("retransmits", "retransmits", "", "lower", digits=0),
    Metric("timeouts", "RTOs", "", "lower", digits=0),
    Metric("jain_fairness", "Jain index", "", "higher"),
)
#: The summary figure (a heat map of SUMMARY_METRICS), shown above comparison.md's table.
SUMMARY_FIGURE = "comparison_summary.png"


def summary_metrics(rows: list[dict]) -> list[Metric]:
    """SUMMARY_METRICS without the columns every row lacks (a single flow has no Jain index)."""
    return [m for m in SUMMARY_METRICS if any(r.get(m.key) is not None for r in rows)]


def summary_panel(rows: list[dict]) -> tuple[list[heatmap.Column], heatmap.Panel]:
    """The heat map's columns and its one panel: a row per algorithm, each
    cell's value as comparison.md shows it."""
    metrics = summary_metrics(rows)
    cols = [heatmap.Column(m.header.replace(" (", "\n("), m.better) for m in metrics]  # the unit on a second line
    texts = [[m.text(r.get(m.key)) for m in metrics] for r in rows]
    values = [[None if t == heatmap.NA_TEXT else float(t) for t in row] for row in texts]
    return cols, heatmap.Panel("", [r["algorithm"] for r in rows], values, texts)


def draw_summary(rows: list[dict], out: Path) -> Path:
    """The comparison's summary heat map (one row per algorithm, each cell
    coloured by its rank in its column) as a PNG at ``out``."""
    cols, panel = summary_panel(rows)
    fig = heatmap.draw(cols, [panel], cell_w_in=0.95, cell_h_in=0.26, font_pt=8, label_w_in=0.9, header_rotation=0)
    fig.savefig(out, dpi=110)
    return out


def comparison_markdown(rows: list[dict], title: str, figure: str | None) -> str:
    """comparison.md: the summary figure (when drawn), then the table it
    shows, then what each algorithm does."""
    metrics = summary_metrics(rows)
    L = [f"# {title}", ""]
    if figure:
        L += [f"![summary: each algorithm's metrics, coloured by rank per column]({figure})", "",
              "*Each cell coloured by the algorithm's rank in its column (blue: best, red: worst; hatched: n/a); the arrow in each "
              "header says which way is better (↑ higher, ↓ lower). The table below holds the same values.*", ""]
    head = ["algorithm"] + [f"{m.header} {heatmap.arrow(m.better)}" for m in metrics]
    L.append("| " + " | ".join(head) + " |")
    L.append("|" + "---|" * len(head))
    for r in rows:
        L.append("| " + " | ".join([r["algorithm"]] + [m.text(r.get(m.key)) for m in metrics]) + " |")
    L.append("")
    for r in rows:
        if r.get("what"):
            L.append(f"- **{r['algorithm']}**: {r['what']}")
    return "\n".join(L).rstrip() + "\n"


def save_comparison(results: dict[str, RunResult], out_dir: str | Path, plot: bool = True, force: bool = False) -> Path:
    """Writes ``comparison.json``, ``comparison.md`` (the summary table, led
    by the figure ``comparison_summary.png``), ``comparison.png`` and one
    result directory per algorithm, atomically, under the same rules as
    RunResult.save (``out_dir`` missing or empty, or with ``force`` an
    earlier longfat result); with ``plot`` False, no PNGs."""
    rows = summary_rows(results)
    name = "comparison"
    for algo, r in results.items():  # the scenario's name, without the algorithm with_algorithm added
        name = str(r.scenario.get("name") or "run")
        name = name[: -len(algo) - 1] if name.endswith(f"-{algo}") else name
        break
    title = f"{name}: each algorithm alone" + (f", measured {rows[0]['measure_from_s']:g}-{rows[0]['end_s']:g} s" if rows else "")
    with atomic_dir(out_dir, force=force, kind="compare") as tmp:
        for algo, r in results.items():
            (tmp / algo).mkdir()
            r.write_into(tmp / algo)
            write_marker(tmp / algo, "run")  # each is a result directory of its own
        (tmp / "comparison.json").write_text(json.dumps(rows, indent=2) + "\n")
        if plot:
            from longfat.plot import plot_comparison  # matplotlib only when drawing

            plot_comparison(results, tmp / "comparison.png")
            draw_summary(rows, tmp / SUMMARY_FIGURE)
        (tmp / "comparison.md").write_text(comparison_markdown(rows, title, SUMMARY_FIGURE if plot else None), encoding="utf-8")
    return Path(out_dir)
