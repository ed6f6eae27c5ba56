"""Running a scenario and holding its results."""

from __future__ import annotations

import json
import os
import re
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Mapping

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from longfat._native import DEFAULT_MEMORY_BUDGET_BYTES, ScenarioError, Simulation, parse_memory_budget as _parse_memory_budget
from longfat.controller import check_controller, registry
from longfat.outdir import atomic_dir
from longfat.scenario import apply_overrides, load_scenario, seed_of, set_path

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
    #: Packet captures (``run.pcap``): flow name -> pcapng bytes, in the
    #: order ``run.pcap`` lists them; saved as ``pcap/<flow>.pcapng``.
    captures: dict[str, bytes] = field(default_factory=dict)
    #: Where the captures' tap was (``run.pcap_tap``: "sender" or
    #: "bottleneck"); None without captures.
    capture_tap: str | None = None

    def capture_paths(self) -> dict[str, Path]:
        """Flow name -> the capture's path relative to the run's directory."""
        return capture_paths(list(self.captures))

    def __repr__(self) -> str:
        """A few lines: scenario, duration, each flow's algorithm and goodput
        (see ``longfat.display.result_repr``); never the tables."""
        from longfat.display import result_repr

        return result_repr(self.summary, self.scenario, self._transfer_rows())

    def _repr_html_(self) -> str:
        """Jupyter's view: a table per flow with units and a small plot of
        cwnd and goodput (see ``longfat.display.result_html``)."""
        from longfat.display import result_html

        return result_html(self.summary, self.scenario, self.flows, self._transfer_rows())

    def _transfer_rows(self) -> int:
        return 0 if self.transfers is None else self.transfers.num_rows

    def flows_df(self):
        """The flows table as a pandas DataFrame: one row per flow and
        sample, the table's column names (units in them: ``time_s``,
        ``rtt_ns``, ``goodput_bps``, ``cwnd_pkts``). Numeric columns are
        zero-copy views of the table (see ``longfat.display.to_pandas``).
        Needs pandas: ``pip install 'longfat[notebook]'``."""
        from longfat.display import to_pandas

        return to_pandas(self.flows, "RunResult.flows_df()")

    def links_df(self):
        """The links table as a pandas DataFrame (as ``flows_df``)."""
        from longfat.display import to_pandas

        return to_pandas(self.links, "RunResult.links_df()")

    def transfers_df(self):
        """The generated transfers (short flows, web objects) as a pandas
        DataFrame (as ``flows_df``); ValueError for a run without any."""
        from longfat.display import to_pandas

        if not self._transfer_rows():
            raise ValueError("this run has no transfers: only a scenario with generated traffic (short flows, web objects) makes them")
        return to_pandas(self.transfers, "RunResult.transfers_df()")

    def save(self, out_dir: str | Path, force: bool = False, draw: Callable[[Path], object] | None = None) -> Path:
        """Writes flows.parquet, links.parquet, summary.json and scenario.json
        into ``out_dir`` atomically: the directory appears complete or not
        at all. ``draw(directory)``, if given, adds figures to the directory
        before it appears (saving does not draw by itself; the command line
        passes ``longfat.plot.plot_into(result)``, which draws plot.png).
        ``out_dir`` must be missing or empty, or with ``force`` an earlier
        longfat result, which is then replaced; anything else is refused
        with ScenarioError (see longfat.outdir)."""
        with atomic_dir(out_dir, force=force, kind="run") as tmp:
            self.write_into(tmp)
            if draw is not None:
                draw(tmp)
        return Path(out_dir)

    def write_into(self, directory: Path) -> None:
        """Writes the result files into an existing directory. The same
        result always gives the same bytes."""
        pq.write_table(self.flows, directory / "flows.parquet")
        pq.write_table(self.links, directory / "links.parquet")
        if self.transfers is not None and self.transfers.num_rows:
            pq.write_table(self.transfers, directory / "transfers.parquet")
        (directory / "summary.json").write_text(json.dumps(self.summary, indent=2) + "\n")
        (directory / "scenario.json").write_text(json.dumps(self.scenario, indent=2) + "\n")
        if self.captures:
            (directory / CAPTURE_DIR).mkdir()
            for name, rel in self.capture_paths().items():
                (directory / rel).write_bytes(self.captures[name])


#: Where a run's directory keeps its packet captures.
CAPTURE_DIR = "pcap"
_UNSAFE = re.compile(r"[^A-Za-z0-9._#+=@-]")


def capture_paths(names: list[str]) -> dict[str, Path]:
    """Each flow name's capture file, relative to the run's directory:
    ``pcap/<name>.pcapng``, with characters a file name should not hold
    replaced by ``_`` (a flow name may hold any printable character) and a
    leading dot by ``_``; names that then collide get ``-<k>``."""
    out: dict[str, Path] = {}
    taken: set[str] = set()
    for name in names:
        stem = _UNSAFE.sub("_", name)
        if stem.startswith("."):
            stem = "_" + stem[1:]
        base, k = stem, 1
        while stem in taken:
            stem = f"{base}-{k}"
            k += 1
        taken.add(stem)
        out[name] = Path(CAPTURE_DIR) / f"{stem}.pcapng"
    return out


def pcap_names(pcap: str | Iterable[str], field: str = "pcap") -> list[str]:
    """``"a,b"`` or ``["a", "b"]`` -> the flow names to capture."""
    if isinstance(pcap, str):
        return [n for n in pcap.split(",") if n]
    names = list(pcap)
    bad = [n for n in names if not isinstance(n, str)]
    if bad:
        raise ScenarioError(f"{field}: {bad[0]!r} is not a flow name; give the names as in flows.parquet's flow_name (strings)", field)
    return names


def _dictionary(idx: np.ndarray, values: list[str]) -> pa.DictionaryArray:
    """``values[idx]`` as a dictionary array whose dictionary has no repeated
    entries. (The simulator names each flow's algorithm, so "reno" can appear
    once per flow; pyarrow's Parquet writer, given a dictionary with repeats,
    writes a dictionary page sized for all of them but fills only the unique
    ones, leaving uninitialised bytes in the file: two saves of the same
    result then differed.)"""
    # Arrow's hash encoding: the distinct values in order of first
    # appearance, and each value's place among them.
    encoded = pa.array(values, type=pa.string()).dictionary_encode()
    remap = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int32, copy=False)
    indices = remap[idx.astype(np.int64)] if len(values) else idx.astype(np.int32)
    return pa.DictionaryArray.from_arrays(pa.array(indices, type=pa.int32()), encoded.dictionary)


#: Per-module columns of PLT flows; other flows' rows hold null.
MODULE_COLUMNS = ("hcm_", "lcm_")
#: Columns that only some rows fill (PLT's modules, ECN's counters, the
#: sojourn times that only AQM links keep): null elsewhere.
NULLABLE_COLUMNS = (*MODULE_COLUMNS, "ece_acks", "ecn_reductions", "ce_marks", "sojourn_")


def _module_column(v: np.ndarray) -> pa.Array:
    """NaN (floats) or -1 (counts) marks a row without the column: null."""
    mask = np.isnan(v) if v.dtype.kind == "f" else v < 0
    return pa.array(v, mask=mask)


def series_table(columns: dict, key: str, names: dict[str, list[str]]) -> pa.Table:
    """A long-format table: time in seconds, the index column ``key``, one
    dictionary-encoded name column per entry of ``names``, then the rest."""
    idx = columns[key]
    named = {col: _dictionary(idx, values) for col, values in names.items()}
    rest = {k: (_module_column(v) if k.startswith(NULLABLE_COLUMNS) else v) for k, v in columns.items() if k != key}
    return pa.table({"time_s": columns["time_ns"] / NS, key: idx, **named, **rest})


def _tables(sim: Simulation) -> tuple[pa.Table, pa.Table]:
    series = sim.series()
    flows = series_table(series["flows"], "flow", {"flow_name": sim.flow_names(), "algorithm": sim.flow_algorithms()})
    links = series_table(series["links"], "link", {"link_name": sim.link_names()})
    return flows, links


def _transfers(sim: Simulation) -> pa.Table | None:
    cols = sim.transfers()
    if len(cols["flow"]) == 0:
        return None
    names = sim.generator_names()
    gen = _dictionary(cols["generator"], names)
    return pa.table({"flow": cols["flow"], "generator": gen, "start_s": cols["start_s"], "size_bytes": cols["size_bytes"], "fct_s": cols["fct_s"]})


#: Environment variable holding the memory budget of a run (e.g. "8GiB").
BUDGET_ENV = "LONGFAT_MEMORY_BUDGET"

def parse_memory_budget(text: str | int, field: str = "--memory-budget") -> int:
    """``"8GiB"``, ``"500MB"`` or a number of bytes -> bytes (1 MiB to
    1024 TiB): the engine's parser (``budget::parse_memory_budget``)."""
    try:
        return _parse_memory_budget(str(text))
    except ValueError as e:
        raise ScenarioError(f"{field}: {e}", field) from None


def human_bytes(b: float) -> str:
    """Bytes in the largest binary unit that keeps the number at least 1,
    as the engine's budget messages write them."""
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if b >= size:
            return f"{b / size:.1f} {unit}"
    return f"{int(b)} B"


#: What a finished run's RunResult keeps, as a share of the series bytes in
#: the engine's estimate. That estimate counts four copies of each
#: time-series row (budget.rs FLOW_ROW_BYTES: the engine's, the tables', and
#: two for writing and plotting); the tables alone are one copy plus the
#: time in seconds and the name indices: about a third.
RESULT_SHARE_OF_SERIES = 1 / 3


def memory_budget(budget: str | int | None = None) -> int:
    """The memory budget of a run: ``budget`` if given, else the
    LONGFAT_MEMORY_BUDGET environment variable, else the engine's default
    (4 GiB)."""
    if budget is not None:
        return parse_memory_budget(budget)
    env = os.environ.get(BUDGET_ENV)
    if env:
        return parse_memory_budget(env, BUDGET_ENV)
    return DEFAULT_MEMORY_BUDGET_BYTES


def prepare(
    scenario: str | Path | dict,
    *,
    seed: int | None = None,
    overrides: Iterable[str] = (),
    memory_budget_bytes: str | int | None = None,
    controllers: Mapping[str, type] | None = None,
    pcap: str | Iterable[str] | None = None,
    pcap_tap: str | None = None,
    pcap_field: str = "pcap",
) -> tuple[dict, Simulation]:
    """Loads, overrides and validates a scenario; returns it with a ready
    simulation. Raises ScenarioError naming the offending field, or the
    estimated memory and the budget (see ``memory_budget``) when the run
    would need more. ``controllers``: {name: class} of controllers written
    in Python that ``cc`` may name (default: those registered with
    ``longfat.register``). ``pcap`` and ``pcap_tap`` override ``run.pcap``
    and ``run.pcap_tap`` (their errors name ``pcap_field`` and
    ``pcap_field``'s ``_tap`` spelling)."""
    spec = apply_overrides(load_scenario(scenario), overrides)
    if seed is not None:
        set_path(spec, "run.seed", seed, name="--seed")
    if pcap is not None:
        set_path(spec, "run.pcap", pcap_names(pcap, pcap_field), name=pcap_field)
    if pcap_tap is not None:
        set_path(spec, "run.pcap_tap", pcap_tap, name=f"{pcap_field}-tap" if pcap_field.startswith("--") else f"{pcap_field}_tap")
    if controllers is None:
        controllers = registry()
    else:
        for name, cls in controllers.items():
            check_controller(name, cls, "controllers")
    return spec, Simulation(json.dumps(spec), memory_budget(memory_budget_bytes), dict(controllers))


def execute(spec: dict, sim: Simulation, progress: Callable[[float, float], None] | None = None, slices: int = 200) -> RunResult:
    """Runs a prepared simulation to its end, in slices of simulated time;
    ``progress(sim_seconds_done, sim_seconds_total)`` is called between slices
    (KeyboardInterrupt is honoured there).

    The engine must be freed by the thread that made it: PyO3 refuses to
    drop it on another thread and leaks it. On a Dask worker the run's
    frame outlives the run (a sampling profiler holds it; an exception's
    traceback holds it until Dask drops the error on its event-loop
    thread), so whatever happens the engine leaves this frame, and the
    frames below it, before the return or the exception does. A caller on
    a worker passes the engine without keeping a reference of its own (as
    ``run`` does)."""
    try:
        end = sim.end_ns
        step = max(end // slices, 1)
        t = 0
        while not sim.done:
            t = min(t + step, end)
            sim.run_until(t)
            if progress is not None:
                progress(sim.now_ns / NS, end / NS)
        summary = sim.summary()
        summary["scenario"] = spec.get("name")
        summary["seed"] = seed_of(spec)
        summary["events"] = sim.events_processed
        flows, links = _tables(sim)
        captures, tap = sim.captures()
        return RunResult(spec, summary, flows, links, {"bottleneck_packets": sim.bottleneck_packets(), **dict(zip(("acks_sent", "acks_received"), sim.ack_counts()))}, _transfers(sim), dict(captures), tap)
    except BaseException as e:
        # The frames below this one are done: their locals (the engine
        # among them) go; the traceback keeps their lines.
        traceback.clear_frames(e.__traceback__.tb_next)
        raise
    finally:
        del sim


def run(
    scenario: str | Path | dict,
    *,
    seed: int | None = None,
    overrides: Iterable[str] = (),
    progress: Callable[[float, float], None] | None = None,
    memory_budget_bytes: str | int | None = None,
    controllers: Mapping[str, type] | None = None,
    pcap: str | Iterable[str] | None = None,
    pcap_tap: str | None = None,
) -> RunResult:
    """Runs a scenario (TOML path or dict) to its end and returns its results.
    ``memory_budget_bytes`` (e.g. "8GiB"; default LONGFAT_MEMORY_BUDGET or
    4 GiB) refuses a run estimated to need more, and stops one whose packets
    pass it. ``controllers``: as for ``prepare``. A controller written in
    Python that raises stops the run with ControllerError (the simulated
    time in its message, the controller's exception as its cause).
    ``pcap`` (flow names, a list or "a,b") captures those flows' packets at
    ``pcap_tap`` ("sender", the default, or "bottleneck"), overriding
    ``run.pcap``/``run.pcap_tap``: ``result.captures`` holds the pcapng
    bytes, which ``save`` writes to ``pcap/<flow>.pcapng``."""
    return execute(*prepare(scenario, seed=seed, overrides=overrides, memory_budget_bytes=memory_budget_bytes, controllers=controllers, pcap=pcap, pcap_tap=pcap_tap), progress)


def wall_time_note(sim: Simulation, threshold_s: float = 180.0) -> str | None:
    """A one-line note when the run's estimated events imply more than
    ``threshold_s`` of wall time, else None."""
    e = sim.estimate()
    if e["wall_s"] <= threshold_s:
        return None
    return (
        f"note: about {e['events']:.2g} events ({e['bottleneck_packets']:.2g} bottleneck packets): "
        f"expect about {e['wall_s'] / 60:.0f} min of wall time on one core"
    )
