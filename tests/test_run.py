"""Runs through the Python API: results, files, determinism."""

import json

import numpy as np
import pyarrow.parquet as pq
import pytest

import longfat
from conftest import small_scenario


def test_results_are_complete_and_consistent(tmp_path):
    from longfat.plot import plot_into

    res = longfat.run(small_scenario())
    out = res.save(tmp_path / "run", draw=plot_into(res))
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


@pytest.mark.parametrize("discipline, extra", [("fq_codel", {"cc": "cubic", "start": "5.9999999s"}), ("priority", {"cc": "plt", "start": "1s"})])
def test_the_summary_as_objects_is_the_summary_as_text(discipline, extra):
    """``Simulation.summary`` builds the summary straight into Python objects;
    it must be what parsing ``summary_json`` gives, key order included: an
    AQM bottleneck with UDP and a flow that never sends, and PLT."""
    from longfat import runner

    spec = small_scenario(duration="6s")
    spec["network"]["bottleneck"]["discipline"] = discipline
    spec["flows"].append(extra)
    spec["udp"] = [{"pattern": "cbr", "rate": "1Mbps", "packet_size": "1000B"}]
    _, sim = runner.prepare(spec)
    sim.run_until(sim.end_ns)
    objects, text = sim.summary(), json.loads(sim.summary_json())
    assert objects == text
    assert json.dumps(objects) == json.dumps(text), "same keys in the same order"
    assert len(objects["flows"]) == 4


@pytest.mark.parametrize("kind", ["reno", "ecn_fq_codel", "plt"])
def test_the_estimate_counts_the_summary_as_python_objects(kind):
    """The budget's estimate holds the summary's Python objects (about
    2,600 bytes a dumbbell flow, three times the Rust rows): what
    ``Simulation.summary`` allocates, by tracemalloc, is at most the
    estimate's ``python_summary_bytes`` and at least half of it."""
    import tracemalloc

    from longfat import runner

    spec = small_scenario(duration="3s", measure_from="1s")
    flows = spec["flows"][0]
    flows.update(count=1000, start_spacing="1ms")
    if kind == "ecn_fq_codel":
        flows.update(cc="cubic", tcp={"ecn": True})
        spec["network"]["bottleneck"]["discipline"] = "fq_codel"
    elif kind == "plt":
        flows.update(cc="plt", count=100, plt={"receive_buffer": "1MB"})
        spec["network"]["bottleneck"]["discipline"] = "priority"
    _, sim = runner.prepare(spec)
    sim.run_until(sim.end_ns)
    estimated = sim.estimate()["python_summary_bytes"]
    tracemalloc.start()
    try:
        summary = sim.summary()
        traced, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(summary["flows"]) == flows["count"]
    assert traced <= estimated <= 2 * traced, (traced, estimated)


def test_name_columns_encode_each_name_once_in_order_of_appearance():
    from longfat.runner import _dictionary

    arr = _dictionary(np.array([2, 0, 2, 1], dtype=np.uint32), ["b", "a", "b"])
    assert arr.to_pylist() == ["b", "b", "b", "a"]
    assert arr.dictionary.to_pylist() == ["b", "a"]
    assert arr.indices.to_pylist() == [0, 0, 0, 1]
    assert _dictionary(np.array([], dtype=np.uint32), []).to_pylist() == []


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
    longfat.run(small_scenario(duration="6s")).save(out)
    (out / "stale.txt").write_text("old")
    newer = longfat.run(small_scenario(duration="7s"))
    with pytest.raises(longfat.ScenarioError, match="is not empty"):
        newer.save(out)
    assert (out / "stale.txt").read_text() == "old"
    assert json.loads((out / "summary.json").read_text())["end_s"] == 6.0
    # Not even with force while it holds a file longfat did not write...
    with pytest.raises(longfat.ScenarioError, match="did not write there: stale.txt"):
        newer.save(out, force=True)
    assert (out / "stale.txt").read_text() == "old"
    # ... but an earlier longfat result holding only its own files is replaced.
    (out / "stale.txt").unlink()
    newer.save(out, force=True)
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


def _drawn_figure(monkeypatch, result, out):
    """Draws ``result`` to ``out`` and returns the figure (kept from plt.close)."""
    import longfat.plot

    figures = []
    close = longfat.plot.plt.close
    monkeypatch.setattr(longfat.plot.plt, "close", lambda fig: (figures.append(fig), close(fig)))
    longfat.plot.plot_run(result, out)
    return figures[0]


def test_a_plot_of_many_flows_draws_aggregates_in_bounded_memory(tmp_path, monkeypatch):
    """1,000 flows: the plot draws the 5 with most goodput and the median and
    10-90 % band across flows, says so, and needs less than half what the
    estimate allows for the series (the engine's copy and the tables take the
    rest): no Python object per row, no line per flow."""
    import tracemalloc

    import longfat.plot  # noqa: F401  (imported before memory is traced)
    from longfat.runner import execute, prepare

    s = small_scenario(duration="10s", measure_from="0s")
    s["network"]["bottleneck"]["rate"] = "100Mbps"
    s["flows"] = [{"cc": "reno", "count": 1000, "start_spacing": "1ms"}]
    spec, sim = prepare(s)
    series_bytes = sim.estimate()["series_bytes"]
    result = execute(spec, sim)
    assert result.flows.num_rows == 100_000
    tracemalloc.start()
    try:
        fig = _drawn_figure(monkeypatch, result, tmp_path / "plot.png")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < series_bytes / 2, (peak, series_bytes)
    assert "1,000 flows" in fig._suptitle.get_text()
    ax_g, ax_c, _ = fig.axes
    for ax in (ax_g, ax_c):
        labels = [t.get_text() for t in ax.get_legend().get_texts()]
        assert labels[-2:] == ["10-90 % of 1,000 flows", "median of 1,000 flows"]
        assert ax.get_legend().get_title().get_text() == "top 5 by mean goodput"
        assert len(ax.get_lines()) == 6  # the top 5 and the median
    top = labels[:5]
    mean = {f["name"]: g for f, g in zip(result.summary["flows"], _mean_goodput(result.flows))}
    assert min(mean[n] for n in top) >= max(g for n, g in mean.items() if n not in top)


def _mean_goodput(flows) -> np.ndarray:
    """Each flow's mean sampled goodput, in flow order."""
    f = np.asarray(flows["flow"])
    return np.bincount(f, weights=np.asarray(flows["goodput_bps"])) / np.bincount(f)


def test_a_plot_of_few_flows_names_every_flow(tmp_path, monkeypatch):
    fig = _drawn_figure(monkeypatch, longfat.run(small_scenario()), tmp_path / "plot.png")
    ax_g, ax_c, _ = fig.axes
    assert [t.get_text() for t in ax_g.get_legend().get_texts()] == ["reno0", "reno1"]
    assert len(ax_g.get_lines()) == 2 and fig._suptitle.get_text() == "small (seed 1)"
