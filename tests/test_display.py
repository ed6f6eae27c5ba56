"""RunResult in a notebook: its short repr, its HTML summary with a plot,
and its tables as pandas DataFrames (issue 32, part 2)."""

from __future__ import annotations

import base64
import re
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pyarrow as pa
import pytest

import longfat
from conftest import ROOT, small_scenario
from longfat.display import rate

EXTRA = "pip install 'longfat[notebook]'"


def _mixed(**run) -> dict:
    """A Reno and a CUBIC flow on the small dumbbell, 10 s."""
    spec = small_scenario(duration="10s", measure_from="2s", **run)
    spec["flows"] = [{"cc": "reno"}, {"cc": "cubic", "start": "1s"}]
    return spec


@pytest.fixture(scope="module")
def result():
    return longfat.run(_mixed())


@pytest.fixture(scope="module")
def many():
    """30 flows: more than the repr lists one by one and the HTML table shows."""
    spec = small_scenario(duration="4s", measure_from="1s")
    spec["flows"] = [{"cc": "reno", "count": 20, "start_spacing": "10ms"}, {"cc": "cubic", "count": 10, "start_spacing": "10ms"}]
    return longfat.run(spec)


def test_rates_are_written_with_three_significant_digits_in_their_unit():
    # Hand-derived: 9,547,232 bit/s is 9.547232 Mbit/s, three digits 9.55.
    assert rate(9547232.0) == "9.55 Mbit/s"
    assert rate(19462773.3) == "19.5 Mbit/s"
    assert rate(1_234_567_890.0) == "1.23 Gbit/s"
    assert rate(954_321.0) == "954 kbit/s"
    assert rate(999.0) == "999 bit/s"
    assert rate(0.0) == "0 bit/s"
    assert rate(None) == rate(float("nan")) == "n/a"


def test_repr_is_a_few_lines_with_each_flows_algorithm_and_goodput(result):
    text = repr(result)
    lines = text.splitlines()
    assert 3 <= len(lines) <= 6 and len(text) < 500, text
    assert lines[0] == "<RunResult small: 10 s simulated (measured from 2 s), seed 1, 2 flows", text
    flows = result.summary["flows"]
    for f, line in zip(flows, lines[1:3]):
        m = re.fullmatch(r"\s+(\S+)\s+(\S+): goodput ([0-9.]+) Mbit/s", line)
        assert m, line
        assert (m.group(1), m.group(2)) == (f["name"], f["algorithm"])
        # Three significant digits of the summary's goodput, read back.
        assert abs(float(m.group(3)) * 1e6 - f["goodput_bps"]) <= 0.05e6, (line, f["goodput_bps"])
    assert {f["algorithm"] for f in flows} == {"reno", "cubic"}
    bn = result.summary["links"][0]
    assert lines[-1] == f"  bottleneck 20 Mbit/s: utilization {100 * bn['utilization']:.2f} %, loss {100 * bn['loss_rate']:.3g} %>"
    # Never the tables: no column names, no sample values.
    assert "time_ns" not in text and "pyarrow" not in text and "cwnd" not in text
    assert str(result) == text


def test_repr_of_many_flows_stays_short_with_a_line_per_algorithm(many):
    text = repr(many)
    lines = text.splitlines()
    assert len(lines) == 4 and len(text) < 400, text
    by_algo = {}
    for f in many.summary["flows"]:
        by_algo.setdefault(f["algorithm"], []).append(f["goodput_bps"])
    for algo, line in zip(("reno", "cubic"), lines[1:3]):
        g = by_algo[algo]
        assert line == f"  {algo} x{len(g)}: goodput {rate(sum(g))} in all, {rate(sum(g) / len(g))} mean per flow", line


def _html(result) -> ET.Element:
    """The HTML summary parsed as XML: it must be well-formed."""
    return ET.fromstring(result._repr_html_())


def _table(root: ET.Element, first_header: str) -> tuple[list[str], list[list[str]]]:
    for t in root.iter("table"):
        head = [th.text or "" for th in t.iter("th")]
        if head and head[0] == first_header:
            rows = [[td.text or "" for td in tr.iter("td")] for tr in t.find("tbody")]
            return head, rows
    raise AssertionError(f"no table headed {first_header!r}")


def _png_size(uri: str) -> tuple[int, int, int]:
    """(width, height, bytes) of a PNG data URI, from its IHDR chunk."""
    assert uri.startswith("data:image/png;base64,"), uri[:40]
    data = base64.b64decode(uri.split(",", 1)[1], validate=True)
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    w, h = struct.unpack(">II", data[16:24])
    return w, h, len(data)


def test_html_has_a_table_per_flow_with_units_and_a_plot(result):
    text = result._repr_html_()
    assert len(text) < 100_000
    root = ET.fromstring(text)
    head, rows = _table(root, "flow")
    assert head == ["flow", "algorithm", "goodput (Mbit/s)", "throughput (Mbit/s)", "base RTT (ms)", "retransmits (pkts)", "timeouts", "final cwnd (pkts)"]
    flows = result.summary["flows"]
    assert len(rows) == len(flows) == 2
    for f, row in zip(flows, rows):
        assert row[0] == f["name"] and row[1] == f["algorithm"]
        assert row[2] == f"{f['goodput_bps'] / 1e6:,.2f}" and abs(float(row[2]) * 1e6 - f["goodput_bps"]) <= 5e3
        assert row[4] == "40.0" and row[5] == str(f["retransmits"])
    head, [bn] = _table(root, "link")
    assert bn[0] == "bottleneck" and bn[1] == "20.00"
    [img] = list(root.iter("img"))
    w, h, n = _png_size(img.get("src"))
    assert 300 <= w <= 800 and 100 <= h <= 400 and 5_000 < n < 70_000, (w, h, n)


def test_html_of_many_flows_is_capped_and_says_so(many):
    text = many._repr_html_()
    assert len(text) < 100_000
    root = ET.fromstring(text)
    _, rows = _table(root, "flow")
    assert len(rows) == 20
    assert "the first 20 of 30 flows; flows_df() has them all" in text


def test_html_escapes_names(tmp_path):
    spec = small_scenario(duration="2s", measure_from="0s")
    spec["name"] = "<b onclick=x>&y"
    text = longfat.run(spec)._repr_html_()
    assert "<b onclick" not in text and "&lt;b onclick=x&gt;&amp;y" in text
    ET.fromstring(text)


def _check_frame(df, table: pa.Table):
    """Columns, dtypes and values equal the table's; numeric columns without
    nulls are zero-copy views of its buffers."""
    assert list(df.columns) == table.column_names
    assert len(df) == table.num_rows
    for name in table.column_names:
        col, typ = table[name], table.schema.field(name).type
        if pa.types.is_dictionary(typ):
            assert str(df[name].dtype) == "category", name
            assert df[name].astype(str).tolist() == col.cast(pa.string()).to_pylist(), name
            continue
        values = df[name].to_numpy()
        expected = col.to_numpy(zero_copy_only=False)
        if col.null_count:
            assert df[name].dtype == np.float64, name
            assert np.array_equal(np.isnan(values), col.is_null().to_numpy(zero_copy_only=False)), name
        else:
            assert df[name].dtype == typ.to_pandas_dtype(), (name, df[name].dtype, typ)
            [chunk] = col.chunks
            data = np.frombuffer(chunk.buffers()[1], dtype=np.uint8)
            assert np.shares_memory(values, data), f"{name} was copied"
        assert np.array_equal(values, expected, equal_nan=values.dtype.kind == "f"), name


def test_flows_df_and_links_df_are_the_tables(result):
    flows = result.flows_df()
    _check_frame(flows, result.flows)
    for c in ("time_s", "time_ns", "goodput_bps", "cwnd_pkts", "rtt_ns", "srtt_ns"):
        assert c in flows.columns
    assert set(flows["algorithm"].astype(str)) == {"reno", "cubic"}
    links = result.links_df()
    _check_frame(links, result.links)
    assert links["sojourn_mean_ns"].isna().all()  # DropTail keeps no sojourn times: null, NaN here
    assert "queue_pkts" in links.columns and "queue_bytes" in links.columns


def test_transfers_df(tmp_path, result):
    with pytest.raises(ValueError, match="this run has no transfers"):
        result.transfers_df()
    spec = small_scenario(duration="3s", measure_from="0s")
    spec["short_flows"] = [{"cc": "reno", "arrival_rate": 50.0, "size_mean": "10pkt", "size_shape": 1.2, "stop": "2s"}]
    r = longfat.run(spec)
    assert r.transfers is not None and r.transfers.num_rows > 20
    df = r.transfers_df()
    _check_frame(df, r.transfers)
    assert list(df.columns) == ["flow", "generator", "start_s", "size_bytes", "fct_s"]
    assert f"{r.transfers.num_rows:,} transfers (transfers_df())" in repr(r)


def test_without_pandas_the_dataframes_name_the_extra(result, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas now raises ImportError
    for call in (result.flows_df, result.links_df):
        with pytest.raises(ImportError) as e:
            call()
        assert EXTRA in str(e.value) and "needs pandas" in str(e.value)
    # The reprs need no pandas.
    assert repr(result).startswith("<RunResult")
    assert "<img" in result._repr_html_()


def test_the_base_install_runs_and_shows_results_without_the_notebook_extra():
    """Without pandas, nbclient, nbformat and ipykernel (made unimportable
    in a fresh interpreter), a run and its reprs work; only the DataFrames
    ask for the extra. And the extra's packages
    are not base dependencies."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    base = " ".join(project["dependencies"])
    for pkg in ("pandas", "nbclient", "nbformat", "ipykernel"):
        assert pkg not in base and any(d.startswith(pkg) for d in project["optional-dependencies"]["notebook"]), pkg
    code = (
        "import sys\n"
        "class Absent:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('pandas', 'nbclient', 'nbformat', 'ipykernel'):\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
        "sys.meta_path.insert(0, Absent())\n"
        "import longfat\n"
        "r = longfat.run({'network': {'topology': 'dumbbell', 'bottleneck': {'rate': '10Mbps', 'delay': '5ms', 'queue': '1bdp'}},"
        " 'flows': [{'cc': 'reno'}], 'run': {'duration': '1s', 'seed': 1}})\n"
        "assert repr(r).startswith('<RunResult') and '<img' in r._repr_html_()\n"
        "try:\n    r.flows_df()\nexcept ImportError as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"RunResult.flows_df() needs pandas, which the base install of longfat leaves out: {EXTRA}", out.stdout
