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
  reader never sees a partial file; the views list only files named like a
  run (``<run_id>.parquet``), never the temporary names or anything else.
- A run's series files are written first and its ``runs/`` row last: the
  row is the commit. Views show series only of committed runs, so a crash
  between the two leaves orphans nobody sees, overwritten when the run is
  redone.
- A run's files are named by its key (``run_id``: a hash of the resolved
  scenario, seed included, and the longfat build), and the same key always
  gives the same simulation. Two writers of the same run (a task retried
  while its first worker was still alive, two sweeps over one study) write
  the same content under the same name: the run is stored once.
- A file damaged all the same (a full disk, a user's hand) is found by
  ``scan``, which reads every run file's Parquet footer: the views leave
  that run out and name the file, and the next sweep or suite redoes it.
- The views show the runs of this longfat build (``all_runs``, and
  ``longfat query --all-builds``, every build's), so a sweep resumed after
  a rebuild does not average two simulators together.
- ``study.duckdb`` is rebuilt in a temporary file and renamed into place;
  its views list the files by absolute path, so it holds the runs stored
  when it was rebuilt. The Parquet files stay the truth: a lost or stale
  database is rebuilt by the next ``longfat sweep`` or ``longfat query``.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import secrets
import shutil
import tempfile
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Iterator

import pyarrow as pa
import pyarrow.parquet as pq

from longfat._native import ScenarioError
from longfat.outdir import MARKER, check_not_nested, check_parent_writable, clean_stale, deferred_signals, normalize_path
from longfat.scenario import seed_of

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
    from longfat.outdir import longfat_version

    h = hashlib.sha256()
    with open(_native.__file__, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return f"{longfat_version()}+{h.hexdigest()[:12]}"


def run_id(scenario: dict, build: str | None = None, code: dict[str, str] | None = None) -> str:
    """The key of a run: 20 hex digits of SHA-256 over the resolved scenario
    (canonical JSON, keys sorted; the seed is in it) and the build, and
    ``code``, the fingerprints of the Python controllers it names
    (``longfat.controller.code_fingerprint``; none for built-in ones, whose
    keys are unchanged by it)."""
    doc = {"scenario": scenario, "build": build or build_id()}
    if code:
        doc["code"] = code
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def column_name(key: str) -> str:
    """A grid key as a column name: ``network.bottleneck.rate`` ->
    ``network_bottleneck_rate``, ``flows[0].rtt`` -> ``flows_0_rtt``."""
    return re.sub(r"_+", "_", re.sub(r"[^0-9A-Za-z_]", "_", key)).strip("_") or "key"


# ---- writing --------------------------------------------------------------------


def open_study(path: str | Path, field: str = "--out", *, create: bool = True, command: str | None = None, planned: Iterable[str] = ()) -> Path:
    """Checks (and with ``create`` makes) a study directory: missing, empty,
    or an earlier study (resumed); anything else is refused with a
    ScenarioError naming ``field``. Returns the absolute path. ``planned``
    (run ids) are recorded in ``study.json`` under this build (``planned``:
    build -> sorted run ids), so that a reader can tell the runs a sweep
    meant to make from those it stored (``longfat.open_study``)."""
    p = normalize_path(path, field)
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
        check_parent_writable(p, path, field)
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
    meta = _read_meta(meta_path, field)
    changed = False
    if command and command not in meta["commands"]:
        meta["commands"].append(command)
        changed = True
    plan = meta.get("planned") if isinstance(meta.get("planned"), dict) else {}
    mine = set(plan.get(build_id(), [])) if isinstance(plan.get(build_id()), list) else set()
    if not set(planned) <= mine:
        meta["planned"] = {**plan, build_id(): sorted(mine | set(planned))}
        changed = True
    if changed:
        _write_atomic(meta_path, (json.dumps(meta, indent=2) + "\n").encode())
    elif not meta_path.exists():
        _write_atomic(meta_path, (json.dumps(meta, indent=2) + "\n").encode())
    return p


def _read_meta(path: Path, field: str) -> dict:
    """The study's ``study.json`` (a new one if absent). A link or anything
    but longfat's JSON there is refused naming it: longfat would replace it
    when it records the command, and replaces only what it wrote."""
    if path.is_symlink() or (path.exists() and not path.is_file()):
        raise ScenarioError(f"{field}: {path} is a symbolic link or not a regular file; longfat does not write through links or replace what it did not write: move it aside", field)
    if not path.exists():
        return {"created_with": build_id(), "commands": []}
    try:
        meta = json.loads(path.read_text())
    except ValueError:
        meta = None
    if not isinstance(meta, dict) or not isinstance(meta.get("commands"), list):
        raise ScenarioError(f"{field}: {path} is not the study description longfat writes (a JSON object with a commands list): move it aside and longfat writes a new one", field)
    return meta


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
    """The keys of the runs stored whole in the study (see ``scan``)."""
    return set(scan(study).runs) if Path(study).is_dir() else set()


# ---- reading --------------------------------------------------------------------

#: The files a stored run must have, each present and readable, to count as
#: done; ``transfers`` exists only for runs that generated transfers.
REQUIRED_TABLES = ("runs", "flows", "links")
#: Rows per batch when a query's answer is streamed.
BATCH_ROWS = 2048


@dataclass
class Scan:
    """What a study holds, checked file by file: the runs stored whole (every
    required file present and its Parquet footer readable) with the build
    that made each, their files per table, and the damaged files of the
    others. Only files named like a run (``<run_id>.parquet``, regular files,
    not links) are ever looked at, so nothing else put into the table
    directories reaches the views."""

    study: Path
    build: str  # this longfat's build: the views show its runs by default
    runs: dict[str, str] = field(default_factory=dict)  # run_id -> build
    files: dict[str, dict[str, Path]] = field(default_factory=dict)  # table -> run_id -> file
    schemas: dict[str, pa.Schema] = field(default_factory=dict)  # table -> its files' schemas unified
    damaged: dict[str, list[tuple[Path, str]]] = field(default_factory=dict)  # run_id -> [(file, why)]

    def chosen(self, all_builds: bool = False) -> set[str]:
        """The runs the views show: this build's, or with ``all_builds`` every run."""
        return set(self.runs) if all_builds else {r for r, b in self.runs.items() if b == self.build}

    def other_builds(self) -> dict[str, int]:
        """Runs per build other than this one."""
        return dict(Counter(b for b in self.runs.values() if b != self.build))

    def damaged_files(self, rids: Iterable[str] | None = None) -> list[tuple[Path, str]]:
        """The damaged files (of ``rids`` only, if given), with why."""
        return [d for rid in sorted(self.damaged if rids is None else set(rids) & set(self.damaged)) for d in self.damaged[rid]]


def _run_files(directory: Path) -> dict[str, os.DirEntry]:
    """The entries of ``directory`` named like a run's file, by run id."""
    try:
        with os.scandir(directory) as it:
            return {e.name[: -len(".parquet")]: e for e in it if e.name.endswith(".parquet") and _RUN_ID.match(e.name[: -len(".parquet")])}
    except (FileNotFoundError, NotADirectoryError):
        return {}


def _read_footer(entry: os.DirEntry, with_build: bool) -> tuple[pa.Schema, str | None]:
    """The file's schema from its Parquet footer (and ``with_build``, its one
    row's build); raises ValueError saying why the file is unusable."""
    if entry.is_symlink() or not entry.is_file():
        raise ValueError("not a regular file")
    try:
        with pq.ParquetFile(entry.path) as pf:
            schema = pf.schema_arrow
            if not with_build:
                return schema, None
            if pf.metadata.num_rows != 1 or "build" not in schema.names:
                raise ValueError("not a run's row (one row with a build column)")
            return schema, pf.read(columns=["build"]).column(0)[0].as_py()
    except (OSError, pa.ArrowException) as e:
        raise ValueError(" ".join(str(e).split())[:200] or type(e).__name__) from None


def _unify(schemas: list[pa.Schema]) -> pa.Schema:
    """One schema over the files of a table (columns by name, as DuckDB's
    ``union_by_name``); a column whose types cannot be reconciled (a label
    that is text in one sweep and a number in another) becomes text."""
    try:
        return pa.unify_schemas(schemas, promote_options="permissive")
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        types: dict[str, list[pa.DataType]] = {}
        for sch in schemas:
            for f in sch:
                types.setdefault(f.name, []).append(f.type)
        fields = []
        for name, ts in types.items():
            try:
                fields.append(pa.unify_schemas([pa.schema([(name, t)]) for t in ts], promote_options="permissive").field(0))
            except (pa.ArrowInvalid, pa.ArrowTypeError):
                fields.append(pa.field(name, pa.string()))
        return pa.schema(fields)


def scan(study: str | Path) -> Scan:
    """Checks every run-named file of the study (the Parquet footers only:
    cheap) and sorts the runs into whole ones and damaged ones. A run with a
    missing or unreadable runs, flows or links file, or an unreadable
    transfers file, is damaged: the views leave it out and the next sweep or
    suite redoes it."""
    study = Path(study).resolve()
    out = Scan(study, build_id(), files={t: {} for t in TABLES})
    # runs/ listed first: a run's row is its commit, written after its
    # series, so a run committed while this lists is either unseen or whole.
    entries = {t: _run_files(study / t) for t in TABLES}
    schemas: dict[str, list[pa.Schema]] = {t: [] for t in TABLES}
    for rid in sorted(entries["runs"]):
        found: dict[str, tuple[Path, pa.Schema]] = {}
        bad: list[tuple[Path, str]] = []
        run_build = None
        for t in TABLES:
            entry = entries[t].get(rid)
            if entry is None:
                if t in REQUIRED_TABLES:
                    bad.append((study / t / f"{rid}.parquet", "missing"))
                continue
            try:
                schema, b = _read_footer(entry, with_build=t == "runs")
            except ValueError as e:
                bad.append((Path(entry.path), str(e)))
                continue
            run_build = b if t == "runs" else run_build
            found[t] = (Path(entry.path), schema)
        if bad:
            out.damaged[rid] = bad
            continue
        out.runs[rid] = run_build
        for t, (path, schema) in found.items():
            out.files[t][rid] = path
            schemas[t].append(schema)
    out.schemas = {t: _unify(sch) for t, sch in schemas.items() if sch}
    return out


def _sql_path(path: Path) -> str:
    """A file path as a DuckDB string literal that matches only that file:
    DuckDB reads ``*``, ``?`` and ``[`` in any path given to ``read_parquet``
    as a glob (a list too), so each becomes a one-character class (``[[]``)."""
    return "'" + re.sub(r"([*?\[])", r"[\1]", str(path)).replace("'", "''") + "'"


def _sql_files(paths: Iterable[Path]) -> str:
    return "[" + ", ".join(_sql_path(p) for p in paths) + "]"


def view_sql(s: Scan) -> list[str]:
    """The statements that define ``study.duckdb``'s views, over exactly the
    files of ``s`` (a list, never a glob): ``all_runs`` over every whole run,
    ``runs`` over this build's, and ``flows``, ``links`` and ``transfers``
    over the series of this build's runs: the views ``longfat query`` makes
    (``session``)."""
    if not s.runs:
        return []
    stmts = [
        f"CREATE OR REPLACE VIEW all_runs AS SELECT * FROM read_parquet({_sql_files(s.files['runs'].values())}, union_by_name = true)",
        "CREATE OR REPLACE VIEW runs AS SELECT * FROM all_runs WHERE build = '" + s.build.replace("'", "''") + "'",
    ]
    mine = s.chosen()
    for t in TABLES[1:]:
        if not s.files[t]:
            continue
        files = [f for rid, f in s.files[t].items() if rid in mine]
        # Without a run of this build the view keeps the table's columns, no rows.
        source = f"read_parquet({_sql_files(files or s.files[t].values())}, union_by_name = true)" + ("" if files else " WHERE false")
        stmts.append(f"CREATE OR REPLACE VIEW {t} AS SELECT * FROM {source}")
    return stmts


class Session:
    """A read-only DuckDB connection over a study (see ``session``)."""

    def __init__(self, con, s: Scan, views: set[str]):
        self.con, self.scan, self.views = con, s, views

    def execute(self, sql: str, batch_rows: int = BATCH_ROWS) -> tuple[list[str], Iterator[pa.RecordBatch]]:
        """Runs ``sql``; returns the answer's column names and its rows as
        Arrow batches, produced as they are read (the answer is never held
        whole). A SQL error, an empty statement or a study without runs is
        a ScenarioError naming it."""
        import duckdb

        rel = self._relation(sql)
        return list(rel.columns), self._batches(rel, batch_rows)

    def table(self, sql: str) -> pa.Table:
        """Runs ``sql``; its whole answer as one Arrow table (errors as
        ``execute``'s)."""
        import duckdb

        rel = self._relation(sql)
        try:
            return rel.to_arrow_table() if hasattr(rel, "to_arrow_table") else rel.fetch_arrow_table()
        except duckdb.Error as e:
            raise ScenarioError("SQL: " + " ".join(str(e).split()), "SQL") from None
        except (OSError, pa.ArrowException) as e:
            raise ScenarioError(f"STUDY: reading {self.scan.study} failed: " + " ".join(str(e).split()), "STUDY") from None

    def _relation(self, sql: str):
        import duckdb

        if not sql.strip():
            raise ScenarioError('SQL: empty; give a query, e.g. "SELECT cc, avg(utilization) FROM runs GROUP BY cc"', "SQL")
        try:
            rel = self.con.sql(sql)  # lazy: a query runs as its answer is read
        except duckdb.Error as e:
            if "runs" not in self.views:
                damaged = " (its damaged runs are left out)" if self.scan.damaged else ""
                raise ScenarioError(f"STUDY: {self.scan.study} holds no finished runs yet{damaged}", "STUDY") from None
            raise ScenarioError("SQL: " + " ".join(str(e).split()), "SQL") from None
        if rel is None:  # only comments or semicolons
            raise ScenarioError('SQL: no statement (only comments or semicolons); give a query, e.g. "SELECT count(*) FROM runs"', "SQL")
        return rel

    def _batches(self, rel, batch_rows: int) -> Iterator[pa.RecordBatch]:
        import duckdb

        try:
            yield from (rel.to_arrow_reader(batch_rows) if hasattr(rel, "to_arrow_reader") else rel.fetch_arrow_reader(batch_rows))  # duckdb 2 renamed it
        except duckdb.Error as e:
            raise ScenarioError("SQL: " + " ".join(str(e).split()), "SQL") from None
        except (OSError, pa.ArrowException) as e:
            raise ScenarioError(f"STUDY: reading {self.scan.study} failed: " + " ".join(str(e).split()), "STUDY") from None


@contextmanager
def session(study: str | Path, *, all_builds: bool = False, field_name: str = "STUDY") -> Iterator[Session]:
    """An in-memory DuckDB connection whose tables are the study's views:
    ``runs``, ``flows``, ``links``, ``transfers`` (this build's runs, or with
    ``all_builds`` every build's) and ``all_runs`` (every build's), each an
    Arrow dataset over exactly the files ``scan`` found whole.

    The connection cannot write anything, nor read anything else: external
    access is off (COPY, ATTACH, EXPORT, INSTALL/LOAD, read_csv/read_parquet
    of any path are refused; DuckDB's ``allowed_paths`` is not used, as it
    lets SQL overwrite the paths it allows), Python replacement scans are
    off, and the configuration is locked, so SQL cannot turn any of it back
    on. DuckDB spills big sorts into a private temporary directory (not the
    working directory), removed after."""
    import duckdb
    import pyarrow.dataset as ds
    import pyarrow.fs

    p = open_study(study, field_name, create=False)
    s = scan(p)
    tmp = tempfile.mkdtemp(prefix="longfat-query-")
    try:
        con = duckdb.connect(config={
            "enable_external_access": False,
            "autoinstall_known_extensions": False,
            "autoload_known_extensions": False,
            "python_enable_replacements": False,
            "temp_directory": tmp,
            "lock_configuration": True,
        })
        try:
            local = pyarrow.fs.LocalFileSystem()
            chosen = s.chosen(all_builds)
            views = set()
            for name, t, rids in [("all_runs", "runs", set(s.runs))] + [(t, t, chosen) for t in TABLES]:
                if t in s.schemas:
                    files = [str(f) for rid, f in sorted(s.files[t].items()) if rid in rids]
                    con.register(name, ds.dataset(files, schema=s.schemas[t], format="parquet", filesystem=local))
                    views.add(name)
            yield Session(con, s, views)
        finally:
            con.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def refresh_database(study: Path, s: Scan | None = None) -> Path | None:
    """Rebuilds ``study.duckdb`` (``view_sql`` over the files ``scan`` found,
    by absolute path; ``s`` if the caller has just scanned) in a temporary
    file and renames it into place. None if the study has no whole runs.
    Only longfat's own statements run here, never a user's."""
    import duckdb

    final = Path(study) / DATABASE
    if "?" in str(final):
        raise ValueError(f"DuckDB cannot write a database whose path has a '?' ({final}); longfat query reads the study all the same")
    stmts = view_sql(s if s is not None else scan(study))
    if not stmts:
        return None
    tmp = final.parent / f".{final.name}.longfat-tmp-{os.getpid()}-{secrets.token_hex(4)}"
    try:
        con = duckdb.connect(str(tmp))
        try:
            for stmt in stmts:
                con.execute(stmt)
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


def rows(batch: pa.RecordBatch) -> list[tuple]:
    """A batch's rows as tuples of Python values (columns of one name kept apart)."""
    return list(zip(*(c.to_pylist() for c in batch.columns)))


def query(study: str | Path, sql: str, *, all_builds: bool = False) -> tuple[list[str], list[tuple]]:
    """Runs ``sql`` over the study's views (see ``session``); returns column
    names and all rows. A SQL error is a ScenarioError naming the query."""
    with session(study, all_builds=all_builds) as q:
        cols, batches = q.execute(sql)
        return cols, [r for b in batches for r in rows(b)]


def runs_table(study: str | Path) -> pa.Table:
    """Every whole run's row, of every build (an empty table if none)."""
    files = [f for _, f in sorted(scan(study).files["runs"].items())]
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
        "seed": seed_of(scenario),
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


# ---- a query's answer as text ------------------------------------------------------

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """``text`` with its control characters (C0, DEL, C1: terminal escape
    sequences among them) written as ``\\xNN``, for a terminal."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def write_csv(cols: list[str], batches: Iterable[pa.RecordBatch], out, escape: bool) -> int:
    """Streams the answer to ``out`` as CSV, batch by batch; returns the rows
    written. Values are exact (a CSV reader gets back what the study holds,
    newlines quoted), unless ``escape`` (the caller passes it when ``out``
    is a terminal): then control characters are escaped as by ``printable``,
    so study data cannot send escape sequences to the terminal."""
    import csv

    w = csv.writer(out)
    w.writerow([printable(c) for c in cols] if escape else cols)
    n = 0
    for b in batches:
        rs = rows(b)
        if escape:
            rs = [[printable(v) if isinstance(v, str) else v for v in r] for r in rs]
        w.writerows(rs)
        n += len(rs)
    return n


def _finite(batch: pa.RecordBatch) -> pa.RecordBatch:
    """``batch`` with its infinite and NaN floats null: JSON has no number
    for them (a flow's ssthresh is infinite until its first loss), and a
    strict reader refuses Python's ``Infinity``."""
    import pyarrow.compute as pc

    cols = [pc.if_else(pc.is_finite(c), c, pa.scalar(None, c.type)) if pa.types.is_floating(c.type) else c for c in batch.columns]
    return pa.RecordBatch.from_arrays(cols, names=batch.schema.names)


def write_json(cols: list[str], batches: Iterable[pa.RecordBatch], out) -> int:
    """Streams the answer to ``out`` as one JSON array of row objects, one
    object per line, batch by batch; returns the rows written. Control
    characters (and all non-ASCII) are JSON escapes; values JSON lacks are
    their text (dates, decimals) or null (infinite and NaN floats)."""
    n = 0
    for b in batches:
        for r in rows(_finite(b)):
            out.write(("[\n" if n == 0 else ",\n") + json.dumps(dict(zip(cols, r)), default=str))
            n += 1
    out.write("\n]\n" if n else "[]\n")
    return n


def builds_note(other: dict[str, int], build: str) -> str | None:
    """One line saying the study holds runs of other longfat builds, which
    the views leave out; None if it holds none."""
    if not other:
        return None
    which = ", ".join(f"{n} of {b}" for b, n in sorted(other.items()))
    return (f"note: the study also holds {sum(other.values())} runs of other longfat builds ({which}); "
            f"the views (runs, flows, ...) show this build's ({build}) only; longfat query --all-builds shows every build, all_runs has every run")


def damaged_note(files: list[tuple[Path, str]], what: str) -> str | None:
    """One line naming damaged files (the first three) and ``what`` becomes
    of their runs; None if there are none."""
    if not files:
        return None
    shown = "; ".join(f"{f} ({why})" for f, why in files[:3]) + (f"; and {len(files) - 3} more" if len(files) > 3 else "")
    return f"{len(files)} missing or unreadable run file(s), {what}: {shown}"
