"""The results store: one directory per study, Parquet files per run, and a
DuckDB database over them.

Layout of a study directory::

    STUDY/
      .longfat-result        marker: {"kind": "study", ...}
      study.json             what made it (longfat version, commands)
      runs/<run_id>.parquet       one row: the run's labels, parameters, metrics
      flows/<run_id>.parquet      the run's flow series (as flows.parquet of a run)
      links/<run_id>.parquet      the run's link series
      transfers/<run_id>.parquet  the run's generated transfers (if it had any)
      failed/<run_id>.json        a run that raised an error (removed on success)
      study.duckdb           views over the Parquet files (refreshed by longfat)

How it stays consistent with many writers and crashes at any moment:

- Every file is written under a hidden temporary name in its final
  directory and renamed into place (``os.replace``, atomic on POSIX). A
  reader never sees a partial file; globs ``*.parquet`` never match the
  temporary names.
- A run's series files are written first and its ``runs/`` row last: the
  row is the commit. Views show series only of committed runs, so a crash
  between the two leaves orphans nobody sees, overwritten when the run is
  redone.
- A run's files are named by its key (``run_id``: a hash of the resolved
  scenario, seed included, and the longfat build), and the same key always
  gives the same simulation. Two writers of the same run (a task retried
  while its first worker was still alive, two sweeps over one study) write
  the same content under the same name: the run is stored once.
- ``study.duckdb`` is rebuilt in a temporary file and renamed into place;
  the Parquet files stay the truth, so a lost or stale database is rebuilt
  by the next ``longfat sweep`` or ``longfat query``.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import secrets
import shutil
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

import pyarrow as pa
import pyarrow.parquet as pq

from longfat._native import ScenarioError
from longfat.outdir import MARKER, _check_parent, _normalize, check_not_nested, clean_stale, deferred_signals

#: The tables of a study, each a directory of one Parquet file per run.
TABLES = ("runs", "flows", "links", "transfers")
STUDY_KIND = "study"
DATABASE = "study.duckdb"
_RUN_ID = re.compile(r"^[0-9a-f]{20}$")
#: The runs table's own columns; a label whose column would take one of
#: these names is stored as ``grid_<name>``.
RESERVED_COLUMNS = frozenset(
    ("run_id", "build", "cc", "seed", "algorithms", "flows", "bottleneck_rate_bps", "min_base_rtt_ms", "max_base_rtt_ms", "utilization", "goodput_bps", "loss_rate")
    + ("mean_queue_pkts", "jain_fairness", "retransmits", "timeouts", "measure_from_s", "end_s", "events", "wall_s", "scenario_json", "summary_json")
)


# ---- identity -------------------------------------------------------------------


@lru_cache(maxsize=1)
def build_id() -> str:
    """The longfat build a run was made with: the package version and a hash
    of the compiled engine, so that a changed simulator never reuses the
    runs of another (``0.1.0+3f2a9c1b7d4e``)."""
    from longfat import _native
    from longfat.outdir import _version

    h = hashlib.sha256()
    with open(_native.__file__, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return f"{_version()}+{h.hexdigest()[:12]}"


def run_id(scenario: dict, build: str | None = None) -> str:
    """The key of a run: 20 hex digits of SHA-256 over the resolved scenario
    (canonical JSON, keys sorted; the seed is in it) and the build."""
    text = json.dumps({"scenario": scenario, "build": build or build_id()}, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def column_name(key: str) -> str:
    """A grid key as a column name: ``network.bottleneck.rate`` ->
    ``network_bottleneck_rate``, ``flows[0].rtt`` -> ``flows_0_rtt``."""
    return re.sub(r"_+", "_", re.sub(r"[^0-9A-Za-z_]", "_", key)).strip("_") or "key"


# ---- writing --------------------------------------------------------------------


def open_study(path: str | Path, field: str = "--out", *, create: bool = True, command: str | None = None) -> Path:
    """Checks (and with ``create`` makes) a study directory: missing, empty,
    or an earlier study (resumed); anything else is refused with a
    ScenarioError naming ``field``. Returns the absolute path."""
    p = _normalize(path, field)
    if p.is_symlink():
        raise ScenarioError(f"{field}: {path} is a symbolic link; longfat does not write through links, choose another directory", field)
    if p.exists():
        if not p.is_dir():
            raise ScenarioError(f"{field}: {path} exists and is not a directory; choose another path", field)
        if any(p.iterdir()) and not is_study(p):
            raise ScenarioError(
                f"{field}: {path} is not empty and not a longfat study (no {MARKER} marker of kind study); "
                "choose a new directory, or an earlier study to add to or resume",
                field,
            )
    elif not create:
        raise ScenarioError(f"{field}: {path} does not exist", field)
    else:
        _check_parent(p, path, field)
    check_not_nested(p, field)
    if not create:
        if not is_study(p):
            raise ScenarioError(f"{field}: {path} is not a longfat study (no {MARKER} marker of kind study)", field)
        return p
    if not p.exists() or not any(p.iterdir()):
        _create_study(p)
    if not is_study(p):  # something else appeared there meanwhile
        raise ScenarioError(f"{field}: {path} is not empty and not a longfat study (no {MARKER} marker of kind study); choose a new directory", field)
    for t in (*TABLES, "failed"):
        (p / t).mkdir(exist_ok=True)
        clean_stale(p / t)
    meta_path = p / "study.json"
    meta = json.loads(meta_path.read_text()) if meta_path.exists() else {"created_with": build_id(), "commands": []}
    if command and command not in meta["commands"]:
        meta["commands"].append(command)
        _write_atomic(meta_path, (json.dumps(meta, indent=2) + "\n").encode())
    elif not meta_path.exists():
        _write_atomic(meta_path, (json.dumps(meta, indent=2) + "\n").encode())
    return p


def _create_study(p: Path) -> None:
    """Makes the study's skeleton (marker, table directories) in a hidden
    temporary directory beside ``p`` and renames it into place, so that a
    second process opening the same new study at the same moment sees
    either nothing (or an empty directory) or a whole study; if the other
    process won the rename, its study is used."""
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.parent / f".{p.name[:180]}.longfat-tmp-{os.getpid()}-{secrets.token_hex(4)}"
    os.mkdir(tmp)
    try:
        for t in (*TABLES, "failed"):
            (tmp / t).mkdir()
        _write_atomic(tmp / MARKER, (json.dumps({"kind": STUDY_KIND, "longfat": build_id()}, sort_keys=True) + "\n").encode())
        with deferred_signals():
            os.rename(tmp, p)  # onto nothing, or onto an empty directory
    except OSError as e:
        if e.errno not in (errno.ENOTEMPTY, errno.EEXIST):
            raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def is_study(path: str | Path) -> bool:
    m = Path(path) / MARKER
    if m.is_symlink() or not m.is_file():
        return False
    try:
        return json.loads(m.read_text()).get("kind") == STUDY_KIND
    except (OSError, ValueError, AttributeError):
        return False


def _write_atomic(path: Path, data: bytes) -> None:
    """Writes ``data`` to a hidden temporary file beside ``path``, flushes it
    to disk and renames it into place."""
    tmp = path.parent / f".{path.name[:180]}.longfat-tmp-{os.getpid()}-{secrets.token_hex(4)}"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        with open(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        with deferred_signals():
            os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def parquet_bytes(table: pa.Table, statistics: bool = True) -> bytes:
    """``table`` as Parquet (zstd). ``statistics=False`` for one-row files,
    where min/max would repeat every value (the JSON columns twice over)."""
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd", write_statistics=statistics)
    return sink.getvalue().to_pybytes()


def with_run_id(table: pa.Table, rid: str) -> pa.Table:
    return table.add_column(0, "run_id", pa.array([rid] * table.num_rows, type=pa.string()))


def write_run(study: Path, rid: str, files: dict[str, bytes]) -> None:
    """Stores one run's Parquet files (``files``: table name -> bytes; must
    hold "runs"). Series first, the runs row last (the commit)."""
    if not _RUN_ID.match(rid):
        raise ValueError(f"bad run id {rid!r}")
    for table in ("flows", "links", "transfers"):
        if table in files:
            _write_atomic(study / table / f"{rid}.parquet", files[table])
    _write_atomic(study / "runs" / f"{rid}.parquet", files["runs"])
    (study / "failed" / f"{rid}.json").unlink(missing_ok=True)


def write_failure(study: Path, rid: str, labels: dict, error: str) -> None:
    _write_atomic(study / "failed" / f"{rid}.json", (json.dumps({"run_id": rid, "labels": labels, "error": error}, indent=2) + "\n").encode())


def done_runs(study: Path) -> set[str]:
    """The keys of the runs committed in the study."""
    d = Path(study) / "runs"
    if not d.is_dir():
        return set()
    return {f.name[: -len(".parquet")] for f in d.iterdir() if f.name.endswith(".parquet") and _RUN_ID.match(f.name[: -len(".parquet")])}


# ---- reading --------------------------------------------------------------------


def _glob(study: Path, table: str) -> str | None:
    d = study / table
    if not d.is_dir() or not any(f.name.endswith(".parquet") for f in d.iterdir()):
        return None
    return str(d / "*.parquet").replace("'", "''")


def view_sql(study: Path) -> list[str]:
    """The statements that define the study's views: ``runs`` over every
    committed run; ``flows``, ``links`` and ``transfers`` over the series of
    committed runs only."""
    study = Path(study).resolve()
    runs = _glob(study, "runs")
    if runs is None:
        return []
    stmts = [f"CREATE OR REPLACE VIEW runs AS SELECT * FROM read_parquet('{runs}', union_by_name = true)"]
    for t in ("flows", "links", "transfers"):
        g = _glob(study, t)
        if g is not None:
            stmts.append(f"CREATE OR REPLACE VIEW {t} AS SELECT * FROM read_parquet('{g}', union_by_name = true) WHERE run_id IN (SELECT run_id FROM runs)")
    return stmts


def connect(study: str | Path, field: str = "STUDY"):
    """An in-memory DuckDB connection with the study's views."""
    import duckdb

    p = open_study(study, field, create=False)
    con = duckdb.connect()
    for s in view_sql(p):
        con.execute(s)
    return con


def refresh_database(study: Path) -> Path | None:
    """Rebuilds ``study.duckdb`` (views over the Parquet files, by absolute
    path) in a temporary file and renames it into place. None if the study
    has no runs yet."""
    import duckdb

    stmts = view_sql(study)
    if not stmts:
        return None
    final = Path(study) / DATABASE
    tmp = final.parent / f".{final.name}.longfat-tmp-{os.getpid()}-{secrets.token_hex(4)}"
    try:
        con = duckdb.connect(str(tmp))
        try:
            for s in stmts:
                con.execute(s)
            con.execute("CHECKPOINT")
        finally:
            con.close()
        with deferred_signals():
            os.replace(tmp, final)
        Path(str(tmp) + ".wal").unlink(missing_ok=True)
    except BaseException:
        tmp.unlink(missing_ok=True)
        Path(str(tmp) + ".wal").unlink(missing_ok=True)
        raise
    return final


def query(study: str | Path, sql: str) -> tuple[list[str], list[tuple]]:
    """Runs ``sql`` over the study's views; returns column names and rows.
    A SQL error is a ScenarioError naming the query."""
    import duckdb

    con = connect(study)
    try:
        try:
            cur = con.execute(sql)
        except duckdb.Error as e:
            if "runs" not in {r[0] for r in con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()}:
                raise ScenarioError(f"STUDY: {study} holds no finished runs yet", "STUDY") from None
            raise ScenarioError("SQL: " + " ".join(str(e).split()), "SQL") from None
        if cur.description is None:
            return [], []
        cols = [d[0] for d in cur.description]
        return cols, cur.fetchall()
    finally:
        con.close()


def runs_table(study: str | Path) -> pa.Table:
    """Every committed run's row (an empty table if none)."""
    files = sorted((Path(study) / "runs").glob("*.parquet"))
    if not files:
        return pa.table({})
    return pa.concat_tables([pq.read_table(f) for f in files], promote_options="permissive")


def read_series(study: str | Path, table: str, rid: str) -> pa.Table | None:
    f = Path(study) / table / f"{rid}.parquet"
    if not f.exists():
        return None
    return pq.read_table(f).drop_columns(["run_id"])


# ---- a run's row ----------------------------------------------------------------


def _scalar(v: Any) -> Any:
    return v if v is None or isinstance(v, (bool, int, float, str)) else json.dumps(v, sort_keys=True)


def run_row(rid: str, labels: dict, scenario: dict, summary: dict, wall_s: float, label_types: dict[str, str] | None = None) -> pa.Table:
    """One run's row of ``runs``: key, build, labels (the cell's grid
    coordinates, one column each), the bottleneck's and the flows' headline
    metrics, and the whole scenario and summary as JSON text."""
    links = [l for l in summary["links"] if l["monitored"] and not l["name"].endswith(".reverse")]
    bn = links[0] if links else None
    flows = summary["flows"]
    rtts = [f["base_rtt_ms"] for f in flows]
    row: dict[str, Any] = {"run_id": rid, "build": build_id()}
    labelled: dict[str, Any] = {}
    for k, v in labels.items():
        v = _scalar(v)
        if label_types and label_types.get(k) == "string" and v is not None:
            v = str(v)
        col = column_name(k)
        if k not in ("cc", "seed") and col in RESERVED_COLUMNS:
            col = "grid_" + col  # a grid key named like a metric (e.g. "flows")
        labelled[col] = v
    row.update(labelled)
    metrics = {
        "seed": (scenario.get("run") or {}).get("seed", 1),
        "algorithms": ",".join(sorted({f["algorithm"] for f in flows})),
        "flows": len(flows),
        "bottleneck_rate_bps": None if bn is None else float(bn["rate_bps"]),
        "min_base_rtt_ms": min(rtts) if rtts else None,
        "max_base_rtt_ms": max(rtts) if rtts else None,
        "utilization": None if bn is None else float(bn["utilization"]),
        "goodput_bps": float(summary["tcp_goodput_bps"]),
        "loss_rate": None if bn is None else float(bn["loss_rate"]),
        "mean_queue_pkts": None if bn is None or bn.get("mean_queue_pkts") is None else float(bn["mean_queue_pkts"]),
        "jain_fairness": None if summary.get("jain_fairness") is None else float(summary["jain_fairness"]),
        "retransmits": int(sum(f["retransmits"] for f in flows)),
        "timeouts": int(sum(f["timeouts"] for f in flows)),
        "measure_from_s": float(summary["measure_from_s"]),
        "end_s": float(summary["end_s"]),
        "events": int(summary.get("events", 0)),
        "wall_s": float(wall_s),
        "scenario_json": json.dumps(scenario, sort_keys=True),
        "summary_json": json.dumps(summary, sort_keys=True),
    }
    for k, v in metrics.items():
        if k in labelled and labelled[k] != v:
            raise ValueError(f"label {k!r} = {labelled[k]!r} collides with the metric column of that name ({v!r})")
        row[k] = v
    return pa.Table.from_pylist([row])


def result_files(rid: str, labels: dict, result, wall_s: float, label_types: dict[str, str] | None = None) -> dict[str, bytes]:
    """A RunResult as the Parquet files the store keeps for it."""
    files = {
        "flows": parquet_bytes(with_run_id(result.flows, rid)),
        "links": parquet_bytes(with_run_id(result.links, rid)),
        "runs": parquet_bytes(run_row(rid, labels, result.scenario, result.summary, wall_s, label_types), statistics=False),
    }
    if result.transfers is not None and result.transfers.num_rows:
        files["transfers"] = parquet_bytes(with_run_id(result.transfers, rid))
    return files


def load_result(study: str | Path, rid: str):
    """A stored run back as a RunResult."""
    from longfat.runner import RunResult

    study = Path(study)
    row = pq.read_table(study / "runs" / f"{rid}.parquet").to_pylist()[0]
    return RunResult(
        json.loads(row["scenario_json"]),
        json.loads(row["summary_json"]),
        read_series(study, "flows", rid),
        read_series(study, "links", rid),
        {},
        read_series(study, "transfers", rid),
    )


def size_bytes(study: str | Path, tables: Iterable[str] = TABLES) -> int:
    return sum(f.stat().st_size for t in tables for f in (Path(study) / t).glob("*.parquet"))
