"""longfat.open_study: a study's runs and SQL as pandas DataFrames, read
only (issue 32, part 2; the data-safety rules of issue 27 item 2)."""

from __future__ import annotations

import hashlib
import json
import os
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import duckdb
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import longfat
from conftest import small_scenario
from longfat import store
from longfat._native import ScenarioError
from longfat.sweep import Grid, expand, run_cells

RATES = ["10Mbps", "20Mbps"]
CCS = ["reno", "cubic"]


def _cells(seeds=(1,)):
    base = small_scenario(duration="4s", measure_from="1s")
    base["name"] = "rates"
    return expand(base, Grid(axes={"network.bottleneck.rate": RATES}, ccs=CCS, seeds=list(seeds)))


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("study") / "st"
    out = run_cells(_cells(), path, workers=1)
    assert out.ran == 4 and not out.failed
    return path


def _files(path: Path) -> dict[str, tuple[int, str]]:
    """Every file under ``path``: its mode and SHA-256."""
    out = {}
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            p = Path(root) / name
            st = p.lstat()
            out[str(p.relative_to(path))] = (st.st_mode, hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "")
    return out


def _run_files(path: Path) -> list[Path]:
    return sorted((path / "runs").glob("*.parquet"))


def test_runs_has_one_row_per_stored_run_with_its_labels_and_metrics(study):
    runs = longfat.open_study(study).runs
    files = _run_files(study)
    assert len(runs) == len(files) == len(store.scan(study).chosen()) == 4
    assert sorted(runs["run_id"]) == sorted(f.stem for f in files)
    # Labels first in the order, then the metrics; no JSON text columns.
    assert list(runs[["network_bottleneck_rate", "cc", "seed"]].itertuples(index=False, name=None)) == [
        ("10Mbps", "cubic", 1), ("10Mbps", "reno", 1), ("20Mbps", "cubic", 1), ("20Mbps", "reno", 1)
    ]
    assert "scenario_json" not in runs.columns and "summary_json" not in runs.columns
    for f in files:
        row = pq.read_table(f).to_pylist()[0]
        mine = runs[runs["run_id"] == f.stem].iloc[0]
        for c in ("goodput_bps", "utilization", "loss_rate", "retransmits", "events", "cc", "network_bottleneck_rate"):
            assert mine[c] == row[c], (c, mine[c], row[c])
        assert json.loads(row["summary_json"])["tcp_goodput_bps"] == mine["goodput_bps"]


QUERIES = [
    "SELECT cc, network_bottleneck_rate, avg(goodput_bps) AS goodput_bps, sum(retransmits) AS retransmits FROM runs GROUP BY ALL ORDER BY ALL",
    "SELECT r.cc, f.flow, max(f.cwnd_pkts) AS cwnd_pkts, count(*) AS samples FROM flows f JOIN runs r USING (run_id) GROUP BY ALL ORDER BY ALL",
    "SELECT link_name, avg(queue_pkts) AS queue_pkts FROM links WHERE link_name = 'bottleneck' GROUP BY ALL",
]


@pytest.mark.parametrize("sql", QUERIES)
def test_query_equals_duckdb_over_the_files(study, sql):
    got = longfat.open_study(study).query(sql)
    con = duckdb.connect()
    for t in ("runs", "flows", "links"):
        files = ", ".join(f"'{f}'" for f in sorted((study / t).glob("*.parquet")))
        con.execute(f"CREATE VIEW {t} AS SELECT * FROM read_parquet([{files}], union_by_name = true)")
    expected = con.sql(sql).to_arrow_table().to_pandas()
    assert len(got) > 0
    pd.testing.assert_frame_equal(got.astype({c: expected[c].dtype for c in got.columns}), expected, check_exact=True)


WRITES = [
    "CREATE TABLE t AS SELECT * FROM runs",
    "CREATE VIEW v AS SELECT 1",
    "DROP VIEW runs",
    "INSERT INTO runs SELECT * FROM runs",
    "DELETE FROM runs",
    "UPDATE runs SET cc = 'x'",
    "COPY runs TO '{study}/runs/export.parquet' (FORMAT parquet)",
    "COPY (SELECT * FROM runs) TO '{study}/runs' (FORMAT parquet, PARTITION_BY cc, OVERWRITE)",
    "EXPORT DATABASE '{study}/export'",
    "ATTACH '{study}/other.duckdb' AS o",
    "SET enable_external_access = true",
    "INSTALL httpfs",
    "PRAGMA enable_profiling",
    "SELECT 1; DROP VIEW runs",
    "CHECKPOINT",
]


def test_a_write_is_refused_and_the_study_stays_byte_identical(study):
    st = longfat.open_study(study)
    before = _files(study)
    for sql in WRITES:
        with pytest.raises(ScenarioError) as e:
            st.query(sql.format(study=study))
        msg, field = e.value.args
        assert field == "SQL" and msg.startswith("SQL: "), msg
        assert "read-only" in msg or "one query at a time" in msg, msg
    assert _files(study) == before
    assert len(st.query("SELECT * FROM runs")) == 4
    with pytest.raises(ScenarioError, match="2 statements; Study.query\\(\\) runs one query at a time"):
        st.query("SELECT 1; SELECT 2")


def test_query_errors_are_one_line_scenario_errors(study):
    st = longfat.open_study(study)
    with pytest.raises(ScenarioError, match="SQL: empty"):
        st.query("  ")
    with pytest.raises(ScenarioError, match=r"SQL: .*nosuch"):
        st.query("SELECT * FROM nosuch")


def test_a_path_that_is_not_a_study_is_named(tmp_path, study):
    with pytest.raises(ScenarioError, match=f"PATH: {tmp_path / 'missing'} does not exist"):
        longfat.open_study(tmp_path / "missing")
    (tmp_path / "file").write_text("x")
    with pytest.raises(ScenarioError, match="exists and is not a directory"):
        longfat.open_study(tmp_path / "file")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ScenarioError, match="is not a longfat study"):
        longfat.open_study(tmp_path / "empty")
    run = longfat.run(small_scenario(duration="2s", measure_from="0s")).save(tmp_path / "run")
    with pytest.raises(ScenarioError, match="is not empty and not a longfat study"):
        longfat.open_study(run)
    with pytest.raises(ScenarioError, match="is not empty and not a longfat study"):
        longfat.open_study(study / "runs")


def test_html_says_what_the_study_is(study, tmp_path):
    st = longfat.open_study(study)
    text = st._repr_html_()
    root = ET.fromstring(text)
    assert "scenario rates; 4 runs done, 0 pending" in "".join(root.find("p").itertext())
    tables = list(root.iter("table"))
    axes = {tr[0].text: tr[1].text for tr in tables[0].find("tbody")}
    assert axes == {"network_bottleneck_rate": "10Mbps, 20Mbps", "cc": "cubic, reno", "seed": "1"}
    head = [th.text for th in tables[1].iter("th")]
    assert head == ["network_bottleneck_rate", "cc", "seed", "goodput (Mbit/s)", "utilization (%)", "loss (%)", "mean queue (pkts)"]
    rows = [[td.text for td in tr] for tr in tables[1].find("tbody")]
    runs = st.runs
    assert len(rows) == 4
    for row, (_, r) in zip(rows, runs.iterrows()):
        assert row[:3] == [r["network_bottleneck_rate"], r["cc"], str(r["seed"])]
        assert row[3] == f"{r['goodput_bps'] / 1e6:,.2f}"
    assert repr(st) == f"<Study {study}: rates; axes network_bottleneck_rate (2), cc (2), seed (1); 4 runs done, 0 pending>"


def test_pending_counts_the_runs_a_sweep_planned_and_did_not_store(tmp_path, study):
    # A copy of the study whose sweep planned a second seed too: the four
    # runs of seed 2 are pending until a sweep stores them.
    import shutil

    copy = tmp_path / "st"
    shutil.copytree(study, copy)
    more = [c.run_id for c in _cells(seeds=(1, 2))]
    store.open_study(copy, planned=more)
    d = longfat.open_study(copy).describe()
    assert (d["done"], d["pending"], d["failed"], d["other_builds"]) == (4, 4, 0, 0)
    # A run of another longfat build: in all_runs, not in runs, .runs or
    # the counts of this build's.
    first = _run_files(copy)[0]
    other = "f" * 20
    row = pq.read_table(first)
    row = row.set_column(row.schema.get_field_index("build"), "build", pa.array(["0.0.0+otherbuild"]))
    row = row.set_column(row.schema.get_field_index("run_id"), "run_id", pa.array([other]))
    pq.write_table(row, copy / "runs" / f"{other}.parquet")
    for t in ("flows", "links"):
        shutil.copy(copy / t / first.name, copy / t / f"{other}.parquet")
    st = longfat.open_study(copy)
    assert len(st.runs) == 4 and other not in set(st.runs["run_id"])
    assert st.query("SELECT count(*) AS n FROM runs")["n"][0] == 4
    assert st.query("SELECT count(*) AS n FROM all_runs")["n"][0] == 5
    d = st.describe()
    assert (d["done"], d["pending"], d["other_builds"]) == (4, 4, 1)
    assert "4 runs done, 4 pending, 1 of other longfat builds (all_runs)" in repr(st)
    # Without a recorded plan (a study of an older longfat): unknown.
    meta = json.loads((copy / "study.json").read_text())
    del meta["planned"]
    (copy / "study.json").write_text(json.dumps(meta))
    st = longfat.open_study(copy)
    assert st.describe()["pending"] is None
    assert "4 runs done, pending unknown" in repr(st)


def test_a_study_without_runs_yet(tmp_path):
    store.open_study(tmp_path / "new")
    st = longfat.open_study(tmp_path / "new")
    assert st.runs.empty
    assert "0 runs done" in st._repr_html_()
    with pytest.raises(ScenarioError, match="holds no finished runs yet"):
        st.query("SELECT * FROM runs")


def test_query_without_pandas_names_the_extra(study, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match=r"pip install 'longfat\[notebook\]'"):
        longfat.open_study(study).query("SELECT 1")
