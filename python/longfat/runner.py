"""Running a scenario and holding its results."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from longfat._native import Simulation
from longfat.outdir import atomic_dir
from longfat.scenario import apply_overrides, load_scenario

NS = 1_000_000_000


@dataclass
class RunResult:
    """What one run produced: the scenario as run, a summary and two tables."""

    scenario: dict
    summary: dict
    flows: pa.Table
    links: pa.Table
    stats: dict = field(default_factory=dict)
    #: One row per generated transfer (short flows, web objects), if any.
    transfers: pa.Table | None = None

    def save(self, out_dir: str | Path, plot: bool = True, force: bool = False) -> Path:
        """Writes flows.parquet, links.parquet, summary.json, scenario.json
        (and plot.png) into ``out_dir`` atomically: the directory appears
        complete or not at all. ``out_dir`` must be missing or empty, or with
        ``force`` an earlier longfat result, which is then replaced; anything
        else is refused with ScenarioError (see longfat.outdir)."""
        with atomic_dir(out_dir, force=force, kind="run") as tmp:
            self.write_into(tmp, plot=plot)
        return Path(out_dir)

    def write_into(self, directory: Path, plot: bool = True) -> None:
        """Writes the result files into an existing directory. The same
        result always gives the same bytes (plot.png included)."""
        pq.write_table(self.flows, directory / "flows.parquet")
        pq.write_table(self.links, directory / "links.parquet")
        if self.transfers is not None and self.transfers.num_rows:
            pq.write_table(self.transfers, directory / "transfers.parquet")
        (directory / "summary.json").write_text(json.dumps(self.summary, indent=2) + "\n")
        (directory / "scenario.json").write_text(json.dumps(self.scenario, indent=2) + "\n")
        if plot:
            from longfat.plot import plot_run

            plot_run(self, directory / "plot.png")


def _dictionary(idx: np.ndarray, values: list[str]) -> pa.DictionaryArray:
    """``values[idx]`` as a dictionary array whose dictionary has no repeated
    entries. (The simulator names each flow's algorithm, so "reno" can appear
    once per flow; pyarrow's Parquet writer, given a dictionary with repeats,
    writes a dictionary page sized for all of them but fills only the unique
    ones, leaving uninitialised bytes in the file: two saves of the same
    result then differed.)"""
    unique: dict[str, int] = {}
    remap = np.array([unique.setdefault(v, len(unique)) for v in values], dtype=np.int32)
    indices = remap[idx.astype(np.int64)] if len(values) else idx.astype(np.int32)
    return pa.DictionaryArray.from_arrays(pa.array(indices, type=pa.int32()), pa.array(list(unique), type=pa.string()))


def _table(columns: dict, key: str, names: dict[str, list[str]]) -> pa.Table:
    """A long-format table: time in seconds, the index column ``key``, one
    dictionary-encoded name column per entry of ``names``, then the rest."""
    idx = columns[key]
    named = {col: _dictionary(idx, values) for col, values in names.items()}
    rest = {k: v for k, v in columns.items() if k != key}
    return pa.table({"time_s": columns["time_ns"] / NS, key: idx, **named, **rest})


def _tables(sim: Simulation) -> tuple[pa.Table, pa.Table]:
    series = sim.series()
    flows = _table(series["flows"], "flow", {"flow_name": sim.flow_names(), "algorithm": sim.flow_algorithms()})
    links = _table(series["links"], "link", {"link_name": sim.link_names()})
    return flows, links


def _transfers(sim: Simulation) -> pa.Table | None:
    cols = sim.transfers()
    if len(cols["flow"]) == 0:
        return None
    names = sim.generator_names()
    gen = _dictionary(cols["generator"], names)
    return pa.table({"flow": cols["flow"], "generator": gen, "start_s": cols["start_s"], "size_bytes": cols["size_bytes"], "fct_s": cols["fct_s"]})


def prepare(scenario: str | Path | dict, *, seed: int | None = None, overrides: Iterable[str] = ()) -> tuple[dict, Simulation]:
    """Loads, overrides and validates a scenario; returns it with a ready simulation.
    Raises ScenarioError naming the offending field."""
    spec = apply_overrides(load_scenario(scenario), overrides)
    if seed is not None:
        spec.setdefault("run", {})["seed"] = seed
    return spec, Simulation(json.dumps(spec))


def execute(spec: dict, sim: Simulation, progress: Callable[[float, float], None] | None = None, slices: int = 200) -> RunResult:
    """Runs a prepared simulation to its end, in slices of simulated time;
    ``progress(sim_seconds_done, sim_seconds_total)`` is called between slices
    (KeyboardInterrupt is honoured there)."""
    end = sim.end_ns
    step = max(end // slices, 1)
    t = 0
    while not sim.done:
        t = min(t + step, end)
        sim.run_until(t)
        if progress is not None:
            progress(sim.now_ns / NS, end / NS)
    summary = json.loads(sim.summary_json())
    summary["scenario"] = spec.get("name")
    summary["seed"] = spec.get("run", {}).get("seed", 1)
    summary["events"] = sim.events_processed
    flows, links = _tables(sim)
    return RunResult(spec, summary, flows, links, {"bottleneck_packets": sim.bottleneck_packets()}, _transfers(sim))


def run(
    scenario: str | Path | dict,
    *,
    seed: int | None = None,
    overrides: Iterable[str] = (),
    progress: Callable[[float, float], None] | None = None,
) -> RunResult:
    """Runs a scenario (TOML path or dict) to its end and returns its results."""
    spec, sim = prepare(scenario, seed=seed, overrides=overrides)
    return execute(spec, sim, progress)
