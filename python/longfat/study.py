"""A study as a notebook opens it: ``longfat.open_study(PATH)``.

::

    study = longfat.open_study("results/rate-sweep")
    study                       # in Jupyter: scenario, axes, runs done and pending
    study.runs                  # pandas: one row per run, its labels and metrics
    study.query("SELECT cc, avg(utilization) AS u FROM runs GROUP BY cc")

Reading only: the SQL runs on ``longfat query``'s read-only connection
(``longfat.store.session``: external access off, configuration locked),
and a statement that is not a query (CREATE, INSERT, COPY, ATTACH, SET,
...) is refused before DuckDB sees it, so the study's files stay byte for
byte as they were. The views are the ones ``longfat query`` has: ``runs``,
``flows``, ``links``, ``transfers`` (this build's runs) and ``all_runs``.
"""

from __future__ import annotations

import html
import json
from pathlib import Path

import pyarrow as pa

from longfat._native import ScenarioError
from longfat.display import html_table, to_pandas
from longfat.store import RESERVED_COLUMNS, open_study as check_study, scan, session

#: Statements ``query`` runs: reading only (SELECT covers WITH, VALUES,
#: FROM-first queries, DESCRIBE, SHOW and SUMMARIZE).
READ_STATEMENTS = ("SELECT", "EXPLAIN")
#: ``runs`` leaves out these columns (the whole scenario and summary as JSON
#: text; ``query`` reads them).
JSON_COLUMNS = ("scenario_json", "summary_json")
#: The HTML view shows this many runs.
HTML_RUNS = 10
#: Metric columns the HTML view's table shows beside the labels.
HTML_METRICS = (("goodput_bps", "goodput (Mbit/s)", 1e-6), ("utilization", "utilization (%)", 100.0), ("loss_rate", "loss (%)", 100.0), ("mean_queue_pkts", "mean queue (pkts)", 1.0))


def open_study(path: str | Path) -> "Study":
    """The study at ``path`` (made by ``longfat sweep`` or ``longfat
    suite``), for reading. A path that does not exist or is not a study is
    a ScenarioError naming it."""
    return Study(path)


class Study:
    """A study's runs as pandas DataFrames; read-only (see the module)."""

    def __init__(self, path: str | Path):
        self.path = check_study(path, "PATH", create=False)

    # ---- reading ---------------------------------------------------------------------

    def query(self, sql: str):
        """The answer to one SQL query over the study's views as a pandas
        DataFrame. Anything but a query is refused with a ScenarioError
        naming the statement; nothing is written, anywhere."""
        _check_read_only(sql)
        with session(self.path) as q:
            return to_pandas(q.table(sql), "Study.query()")

    @property
    def runs(self):
        """One row per run of this build: its labels (the grid's axes,
        ``cc``, ``seed``) and its metrics (the ``runs`` view without the
        scenario and summary JSON, which ``query`` reads), in label order.
        An empty DataFrame for a study without runs yet."""
        table = self._runs_table()
        return to_pandas(table if table is not None else pa.table({}), "Study.runs")

    def _runs_table(self) -> pa.Table | None:
        s = scan(self.path)
        if not s.chosen():
            return None
        with session(self.path) as q:
            cols = [c for c in q.table("SELECT * FROM runs LIMIT 0").column_names if c not in JSON_COLUMNS]
            order = [*self._axes_of(cols), "run_id"]
            return q.table(f"SELECT {', '.join(_ident(c) for c in cols)} FROM runs ORDER BY {', '.join(_ident(c) for c in order)}")

    @staticmethod
    def _axes_of(columns: list[str]) -> list[str]:
        """The label columns: the grid's keys, then cc and seed."""
        return [c for c in columns if c not in RESERVED_COLUMNS] + [c for c in ("cc", "seed") if c in columns]

    # ---- what it is ------------------------------------------------------------------

    def describe(self) -> dict:
        """What the study is: its scenarios, its axes and their values, and
        how many runs are done (this build's, whole), pending (planned by a
        sweep of this build and not stored), failed, damaged, or of other
        builds."""
        return self._describe(self._runs_table())

    def _describe(self, runs: pa.Table | None) -> dict:
        s = scan(self.path)
        meta = _meta(self.path)
        planned = meta.get("planned", {}).get(s.build) if isinstance(meta.get("planned"), dict) else None
        done = s.chosen()
        failed = {p.stem for p in (self.path / "failed").glob("*.json")} - set(s.runs)
        axes: dict[str, list] = {}
        scenarios: list[str] = []
        if runs is not None:
            for c in self._axes_of(runs.column_names):
                axes[c] = sorted({v for v in runs[c].to_pylist()}, key=lambda v: (v is None, str(type(v)), v if v is not None else 0))
        if done:
            with session(self.path) as q:
                names = q.table("SELECT DISTINCT json_extract_string(scenario_json, '$.name') AS n FROM runs ORDER BY n")
            scenarios = [n for n in names["n"].to_pylist() if n is not None]
        return {
            "path": str(self.path),
            "build": s.build,
            "scenarios": scenarios,
            "axes": axes,
            "done": len(done),
            "pending": None if not isinstance(planned, list) else len(set(planned) - done),
            "failed": len(failed),
            "damaged": len(s.damaged),
            "other_builds": sum(s.other_builds().values()),
            "commands": [c for c in meta.get("commands", []) if isinstance(c, str)],
        }

    def __repr__(self) -> str:
        d = self.describe()
        axes = ", ".join(f"{k} ({len(v)})" for k, v in d["axes"].items()) or "none"
        return f"<Study {d['path']}: {', '.join(d['scenarios']) or 'no runs yet'}; axes {axes}; {_counts(d)}>"

    def _repr_html_(self) -> str:
        runs = self._runs_table()
        d = self._describe(runs)
        parts = [
            "<div class='longfat-study'>",
            f"<p style='margin:0.2em 0'><b>Study</b> <code>{html.escape(d['path'])}</code>: "
            f"scenario {html.escape(', '.join(d['scenarios']) or 'none yet')}; {html.escape(_counts(d))}</p>",
        ]
        if d["axes"]:
            parts.append(html_table(["axis", "values"], [[html.escape(k), html.escape(_values(v))] for k, v in d["axes"].items()]))
        if runs is not None:
            labels = self._axes_of(runs.column_names)
            metrics = [(c, h, k) for c, h, k in HTML_METRICS if c in runs.column_names]
            head = runs.slice(0, HTML_RUNS)
            rows = []
            for r in head.to_pylist():
                rows.append([html.escape(str(r[c])) for c in labels] + [_num(r[c], k) for c, _, k in metrics])
            parts.append(html_table([html.escape(c) for c in labels] + [h for _, h, _ in metrics], rows))
            if runs.num_rows > HTML_RUNS:
                parts.append(f"<p style='margin:0.2em 0'>the first {HTML_RUNS} of {runs.num_rows:,} runs; .runs has them all</p>")
        parts.append("</div>")
        return "".join(parts)


def _check_read_only(sql: str) -> None:
    """Refuses anything but exactly one query, before DuckDB runs it."""
    import duckdb

    if not isinstance(sql, str):
        raise ScenarioError(f"SQL: must be a string, not {type(sql).__name__}", "SQL")
    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as e:
        raise ScenarioError("SQL: " + " ".join(str(e).split()), "SQL") from None
    if len(statements) > 1:
        raise ScenarioError(f"SQL: {len(statements)} statements; Study.query() runs one query at a time", "SQL")
    for st in statements:
        kind = st.type.name
        if kind not in READ_STATEMENTS:
            raise ScenarioError(
                f"SQL: a {kind} statement is refused: Study.query() is read-only and runs only queries (SELECT, WITH ..., DESCRIBE, EXPLAIN); the study is unchanged",
                "SQL",
            )


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _meta(path: Path) -> dict:
    """``study.json`` as read (an empty description if unreadable: reading
    a study never depends on it)."""
    try:
        meta = json.loads((path / "study.json").read_text())
    except (OSError, ValueError):
        return {}
    return meta if isinstance(meta, dict) else {}


def _counts(d: dict) -> str:
    pending = "pending unknown (no sweep of this build recorded its plan)" if d["pending"] is None else f"{d['pending']} pending"
    out = f"{d['done']} runs done, {pending}"
    for key, what in (("failed", "failed (run again by the next sweep)"), ("damaged", "damaged (run again by the next sweep)"), ("other_builds", "of other longfat builds (all_runs)")):
        if d[key]:
            out += f", {d[key]} {what}"
    return out


def _values(values: list, limit: int = 8) -> str:
    shown = ", ".join(str(v) for v in values[:limit])
    return shown + (f", ... ({len(values)} values)" if len(values) > limit else "")


def _num(v, scale: float) -> str:
    return "n/a" if v is None else f"{v * scale:,.2f}"
