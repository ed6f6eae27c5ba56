"""Running a scenario and holding its results."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from longfat._native import Simulation
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

    def save(self, out_dir: str | Path, plot: bool = True) -> Path:
        """Writes flows.parquet, links.parquet, summary.json, scenario.json
        (and plot.png) into ``out_dir`` atomically: the directory appears
        complete or not at all, replacing an older one."""
        with atomic_dir(out_dir) as tmp:
            self.write_into(tmp, plot=plot)
        return Path(out_dir)

    def write_into(self, directory: Path, plot: bool = True) -> None:
        pq.write_table(self.flows, directory / "flows.parquet")
        pq.write_table(self.links, directory / "links.parquet")
        if self.transfers is not None and self.transfers.num_rows:
            pq.write_table(self.transfers, directory / "transfers.parquet")
        (directory / "summary.json").write_text(json.dumps(self.summary, indent=2) + "\n")
        (directory / "scenario.json").write_text(json.dumps(self.scenario, indent=2) + "\n")
        if plot:
            from longfat.plot import plot_run

            plot_run(self, directory / "plot.png")


@contextmanager
def atomic_dir(out_dir: str | Path) -> Iterator[Path]:
    """Yields a temporary directory beside ``out_dir``; on success it replaces
    ``out_dir`` in one rename, on any error (or Ctrl-C) it is removed."""
    out = Path(out_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    try:
        yield tmp
        old = None
        if out.exists():
            old = out.parent / f".{out.name}.old-{os.getpid()}"
            out.rename(old)
        tmp.rename(out)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _table(columns: dict, key: str, names: dict[str, list[str]]) -> pa.Table:
    """A long-format table: time in seconds, the index column ``key``, one
    dictionary-encoded name column per entry of ``names``, then the rest."""
    idx = columns[key]
    named = {col: pa.DictionaryArray.from_arrays(idx.astype(np.int32), values) for col, values in names.items()}
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
    gen = pa.DictionaryArray.from_arrays(cols["generator"].astype(np.int32), names)
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
