"""Runs through the Python API: results, files, determinism."""

import json

import numpy as np
import pyarrow.parquet as pq
import pytest

import longfat
from conftest import small_scenario


def test_results_are_complete_and_consistent(tmp_path):
    res = longfat.run(small_scenario())
    out = res.save(tmp_path / "run")
    names = sorted(p.name for p in out.iterdir())
    assert names == [".longfat-result", "flows.parquet", "links.parquet", "plot.png", "scenario.json", "summary.json"]
    assert (out / "plot.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")], "no temporary directories left"

    flows = pq.read_table(out / "flows.parquet")
    summary = json.loads((out / "summary.json").read_text())
    # 20 s / 100 ms = 200 samples for each of 2 flows.
    assert flows.num_rows == 400
    # The summary's goodput (counters at the window edges) equals the mean of
    # the sampled series over the same window (sums of interval deltas).
    t = np.asarray(flows["time_s"])
    for f in summary["flows"]:
        sel = (np.asarray(flows["flow"]) == f["flow"]) & (t > 5.0 + 1e-9)
        assert np.asarray(flows["goodput_bps"])[sel].mean() == pytest.approx(f["goodput_bps"], rel=1e-9)
    # Two Reno flows keep a BDP-buffered link full: payload share of 20 Mbit/s.
    assert summary["tcp_goodput_bps"] == pytest.approx(20e6 * 1460 / 1500, rel=0.01)
    links = pq.read_table(out / "links.parquet")
    util = np.asarray(links["utilization"])[np.asarray(links["link_name"].to_pylist()) == "bottleneck"]
    assert util[-50:].mean() > 0.99


def test_same_seed_is_identical_and_seed_matters_with_random_loss():
    sc = small_scenario()
    sc["network"]["bottleneck"]["loss"] = 1e-3
    a = longfat.run(sc, seed=4)
    b = longfat.run(sc, seed=4)
    c = longfat.run(sc, seed=5)
    assert a.summary == b.summary
    assert a.flows.equals(b.flows)
    assert a.summary["links"][0]["drops_random"] != c.summary["links"][0]["drops_random"]


def test_overrides_reach_the_simulation():
    res = longfat.run(small_scenario(), overrides=['flows[0].count=3', 'network.bottleneck.rate="10Mbps"'])
    assert len(res.summary["flows"]) == 3
    bottleneck = next(l for l in res.summary["links"] if l["name"] == "bottleneck")
    assert bottleneck["rate_bps"] == 10_000_000


def test_save_replaces_an_older_result_only_when_forced(tmp_path):
    out = tmp_path / "run"
    longfat.run(small_scenario(duration="6s")).save(out, plot=False)
    (out / "stale.txt").write_text("old")
    newer = longfat.run(small_scenario(duration="7s"))
    with pytest.raises(longfat.ScenarioError, match="is not empty"):
        newer.save(out, plot=False)
    assert (out / "stale.txt").read_text() == "old"
    assert json.loads((out / "summary.json").read_text())["end_s"] == 6.0
    # Not even with force while it holds a file longfat did not write...
    with pytest.raises(longfat.ScenarioError, match="did not write there: stale.txt"):
        newer.save(out, plot=False, force=True)
    assert (out / "stale.txt").read_text() == "old"
    # ... but an earlier longfat result holding only its own files is replaced.
    (out / "stale.txt").unlink()
    newer.save(out, plot=False, force=True)
    assert json.loads((out / "summary.json").read_text())["end_s"] == 7.0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


def test_summary_counts_fast_recoveries_over_the_measurement_window_only():
    """Like every per-flow total in summary.json: one Reno flow on 100 Mbit/s
    x 70 ms with a 0.2 BDP buffer meets its one fast recovery when slow start
    overshoots (before 2 s) and no other for 20 s, so a window from 5 s
    counts none; the same run measured from 0 counts it."""
    from longfat.runner import execute, prepare

    spec = {
        "network": {"topology": "dumbbell", "bottleneck": {"rate": "100Mbps", "delay": "35ms", "queue": "0.2bdp"}},
        "flows": [{"cc": "reno"}],
        "run": {"duration": "20s", "measure_from": "0s"},
    }
    whole = execute(*prepare(spec)).summary["flows"][0]
    assert whole["fast_recoveries"] >= 1 and whole["retransmits"] > 0
    spec["run"]["measure_from"] = "5s"
    late = execute(*prepare(spec)).summary["flows"][0]
    assert late["retransmits"] == 0 and late["fast_recoveries"] == 0
