"""AQM links in results: links.parquet's sojourn series and AQM counters."""

import json

import numpy as np
import pyarrow.parquet as pq

import longfat
from conftest import small_scenario

AQM_COLUMNS = ["drops_aqm", "ce_marks", "sojourn_mean_ns", "sojourn_max_ns"]


def _run(tmp_path, discipline):
    spec = small_scenario()
    spec["network"]["bottleneck"].update(discipline=discipline, queue="8bdp")
    out = longfat.run(spec).save(tmp_path / discipline)
    links = pq.read_table(out / "links.parquet").to_pydict()
    summary = json.loads((out / "summary.json").read_text())
    return links, summary


def test_codel_sojourn_series_agrees_with_the_queue_by_littles_law(tmp_path):
    """On the bottleneck's forward direction, the mean sojourn of departing
    packets over the window equals the mean backlog over the rate (Little's
    law, L = lambda W, with lambda = the link rate while it is busy); both
    are sampled every 100 ms, so they agree within 10 % (3.30 against 3.36 ms here). The series' AQM
    drops add up to the summary's, and every interval's largest sojourn is
    at least its mean."""
    links, summary = _run(tmp_path, "codel")
    assert list(links)[-4:] == AQM_COLUMNS
    row = next(r for r in summary["links"] if r["name"] == "bottleneck")
    sel = [i for i, (n, t) in enumerate(zip(links["link_name"], links["time_s"])) if n == "bottleneck" and t > 5.0]
    mean = np.array([links["sojourn_mean_ns"][i] for i in sel])
    mx = np.array([links["sojourn_max_ns"][i] for i in sel])
    assert np.isfinite(mean).all() and (mx >= mean).all()
    assert sum(links["drops_aqm"][i] for i in sel) == row["drops_aqm"] > 0
    assert sum(links["ce_marks"][i] for i in sel) == row["ce_marks"] == 0  # Reno here is not ECN-capable
    queue_s = np.mean([links["queue_bytes"][i] for i in sel]) * 8 / 20e6
    util = np.mean([links["utilization"][i] for i in sel])
    little_ms = queue_s / util * 1e3
    assert 0.0 < row["mean_sojourn_ms"] <= 10.0
    assert abs(row["mean_sojourn_ms"] - little_ms) <= 0.10 * little_ms, (row["mean_sojourn_ms"], little_ms)


def test_droptail_has_the_columns_but_no_aqm_values(tmp_path):
    links, summary = _run(tmp_path, "droptail")
    assert list(links)[-4:] == AQM_COLUMNS
    # DropTail keeps no enqueue times: null (not NaN) in every row.
    assert links["sojourn_mean_ns"] == [None] * len(links["time_s"]) == links["sojourn_max_ns"]
    assert not any(links["drops_aqm"]) and not any(links["ce_marks"])
    assert all("drops_aqm" not in r and "mean_sojourn_ms" not in r for r in summary["links"])
