"""`longfat compare`: one scenario per algorithm, side by side."""

import json
import struct

import pyarrow.parquet as pq
import pytest

from conftest import run_cli, small_scenario
from longfat import algorithms
from longfat.compare import compare, summary_rows, with_algorithm


def test_every_algorithm_is_listed_and_runs_from_a_scenario():
    names = algorithms()
    for a in ["reno", "newreno", "ltcp", "htcp", "ehstcp", "tcpgt", "highspeed", "scalable", "bic", "cubic", "vegas", "fast", "plt"]:
        assert a in names
    sc = small_scenario(duration="8s", measure_from="2s")
    # Strict priority with one shared buffer, so that PLT's low-priority
    # module has its class; every other algorithm sends only in class 0.
    sc["network"]["bottleneck"].update(discipline="priority", buffer="shared")
    results = compare(sc, names)
    for name, r in results.items():
        assert set(r.flows["algorithm"].to_pylist()) == {name}
        # 20 Mbit/s, 40 ms, BDP buffer, two flows: every algorithm keeps the link busy.
        bn = [l for l in r.summary["links"] if l["name"] == "bottleneck"][0]
        assert bn["utilization"] > 0.9, (name, bn["utilization"])


def test_with_algorithm_replaces_cc_and_drops_foreign_params():
    spec = small_scenario()
    spec["flows"][0]["params"] = {"beta": 0.2}
    out = with_algorithm(spec, "htcp")
    assert out["flows"][0]["cc"] == "htcp" and "params" not in out["flows"][0]
    assert spec["flows"][0]["cc"] == "reno", "the input is not modified"


def test_params_reach_the_controller():
    # LTCP with beta = 0.5 gives up half the window at each loss, as Reno:
    # more of the link idles than with the paper's 0.15.
    base = small_scenario(duration="60s", measure_from="10s")
    base["network"]["bottleneck"]["queue"] = "0.1bdp"
    base["flows"][0]["cc"] = "ltcp"
    a = compare(base, ["ltcp"])["ltcp"].summary
    base["flows"][0]["params"] = {"beta": 0.5}
    from longfat import run

    b = run(base).summary
    ua = [l for l in a["links"] if l["name"] == "bottleneck"][0]["utilization"]
    ub = [l for l in b["links"] if l["name"] == "bottleneck"][0]["utilization"]
    assert ub < ua - 0.02, (ua, ub)


def test_compare_cli_prints_table_and_writes_each_run(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(
        """
name = "cmp"
[network]
topology = "dumbbell"
[network.bottleneck]
rate = "20Mbps"
delay = "20ms"
queue = "1bdp"
[[flows]]
cc = "reno"
[run]
duration = "10s"
measure_from = "2s"
"""
    )
    out = tmp_path / "out"
    p = run_cli("compare", str(path), "--cc", "reno,ltcp,htcp", "--out", str(out))
    assert p.returncode == 0, p.stderr
    for a in ["reno", "ltcp", "htcp"]:
        assert a in p.stdout
        assert pq.read_table(out / a / "flows.parquet").num_rows > 0
    rows = json.loads((out / "comparison.json").read_text())
    assert [r["algorithm"] for r in rows] == ["reno", "ltcp", "htcp"]
    # Departures are counted whole when they finish inside the window, so a
    # busy link can read a few parts per million above 1.
    assert all(0.9 < r["utilization"] <= 1.0 + 1e-4 for r in rows), rows
    assert (out / "comparison.png").stat().st_size > 10_000
    # comparison.md: the summary figure, then the table it shows, with each column's better direction
    png = (out / "comparison_summary.png").read_bytes()
    w, h = struct.unpack(">II", png[16:24])
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and 500 <= w <= 1400 and 100 <= h <= 600, (w, h)
    md = (out / "comparison.md").read_text()
    assert md.startswith("# cmp: each algorithm alone, measured 2-10 s\n")
    assert md.count("](comparison_summary.png)") == 1 and md.index("](comparison_summary.png)") < md.index("| algorithm |")
    table = [r for r in md.splitlines() if r.startswith("| ")]
    assert table[0] == "| algorithm | utilization (%) ↑ | goodput (Mbit/s) ↑ | loss rate (%) ↓ | mean queue (pkts) ↓ | retransmits ↓ | RTOs ↓ | Jain index ↑ |"
    for r, line in zip(rows, table[1:]):
        assert line.startswith(f"| {r['algorithm']} | {100 * r['utilization']:.4g} | {r['goodput_bps'] / 1e6:.3g} | ")
        assert line.endswith(f" | {r['retransmits']} | {r['timeouts']} | 1 |")  # one flow: Jain's index is 1
    assert "comparison.md" in p.stdout
    # without plots: the table alone
    p = run_cli("compare", str(path), "--cc", "reno,ltcp", "--out", str(tmp_path / "np"), "--no-plot", "-q")
    assert p.returncode == 0, p.stderr
    assert sorted(f.name for f in (tmp_path / "np").glob("comparison*")) == ["comparison.json", "comparison.md"]
    assert "| algorithm |" in (tmp_path / "np" / "comparison.md").read_text() and ".png" not in (tmp_path / "np" / "comparison.md").read_text()


@pytest.mark.parametrize(
    "cc, phrase",
    [("reno,cubicc", "unknown algorithm 'cubicc'"), ("reno,reno", "listed twice"), (",", "at least one")],
)
def test_compare_refuses_bad_algorithm_lists(tmp_path, cc, phrase):
    path = tmp_path / "s.toml"
    path.write_text('[network]\ntopology = "dumbbell"\n[network.bottleneck]\nrate = "20Mbps"\ndelay = "20ms"\n[[flows]]\ncc = "reno"\n[run]\nduration = "1s"\n')
    p = run_cli("compare", str(path), "--cc", cc, "--out", str(tmp_path / "o"))
    assert p.returncode == 2
    assert phrase in p.stderr and "--cc" in p.stderr
    assert "Traceback" not in p.stderr
    assert not (tmp_path / "o").exists()


def test_bad_parameter_is_refused_by_field(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(
        '[network]\ntopology = "dumbbell"\n[network.bottleneck]\nrate = "20Mbps"\ndelay = "20ms"\nqueue = "1bdp"\n'
        '[[flows]]\ncc = "htcp"\nparams = { beta_max = 1.5 }\n[run]\nduration = "1s"\n'
    )
    p = run_cli("run", str(path), "--out", str(tmp_path / "o"))
    assert p.returncode == 2
    assert "flows[0].params.beta_max" in p.stderr and "strictly between 0 and 1" in p.stderr


def test_summary_rows_come_from_the_runs():
    results = compare(small_scenario(duration="6s", measure_from="1s"), ["reno", "vegas"])
    rows = summary_rows(results)
    for row, (name, r) in zip(rows, results.items()):
        assert row["algorithm"] == name
        assert row["goodput_bps"] == r.summary["tcp_goodput_bps"]
        assert row["retransmits"] == sum(f["retransmits"] for f in r.summary["flows"])


def test_every_algorithm_says_what_it_does_differently():
    from longfat.catalogue import what_it_does

    assert all(0 < len(what_it_does(a)) <= 90 for a in algorithms())


MANY_FLOWS = """
name = "many"
[network]
topology = "dumbbell"
[network.bottleneck]
rate = "100Mbps"
delay = "20ms"
queue = "1bdp"
[[flows]]
cc = "reno"
count = 300
start_spacing = "1ms"
[run]
duration = "20s"
sample_interval = "100ms"
"""


def test_compare_is_refused_up_front_when_all_its_results_pass_the_budget(tmp_path):
    """Each run of 300 flows fits 40 MiB on its own (about 23 MiB), but
    compare holds all four results until it writes and draws them: the
    command is refused before anything runs, in one line naming the budget."""
    path = tmp_path / "s.toml"
    path.write_text(MANY_FLOWS)
    out = tmp_path / "out"
    p = run_cli("compare", str(path), "--cc", "reno,cubic,htcp,bic", "--out", str(out), "--memory-budget", "40MiB", "-q")
    assert p.returncode == 2, p.stdout + p.stderr
    line = " ".join(p.stderr.split())
    # 47.2: the largest run's estimate is 20.7 MiB (run_scenario on this
    # scenario: packets 1.1 MiB for up to 4,008 held, flows 1.1 MiB at
    # budget::FLOW_BYTES = 3,712, series 17.5 MiB, summary 290.6 KiB; 19.9
    # MiB, plus 0.81 MiB for the summary as Python objects: 300 flow rows at
    # about 760 bytes and 1,201 link rows at about 510) plus 23.3 MiB for
    # the 241,600 result rows (each rounded apart) and the four results'
    # Python summaries (3.2 MiB). Issue 33's session 46 took it from 44.9
    # (21.4 MiB: packets 2.5 MiB for 9,238, series 17.6 MiB, summary
    # 358.6 KiB): it bounded the ACK path as a group (budget::AckGroups),
    # counted 200 samples, not 201, made the summary's measurement window
    # compact, and counted the Python summaries; 46.2 (22.8 MiB: packets 4.1 MiB, flows
    # 1.2 MiB at FLOW_BYTES = 4,096, no summary) before issue 33's session
    # 43 bounded the receivers' down links as one group fed by the
    # bottleneck, counted the end-of-run summary and cut the bytes per flow;
    # 46.4 with FLOW_BYTES = 4,608.
    assert line.startswith("error: the 4 runs could need 47.2 MiB of memory"), line
    assert "more than the memory budget of 40.0 MiB; compare fewer algorithms" in line
    assert "Traceback" not in p.stderr and not out.exists()
    # Two of them fit.
    p = run_cli("compare", str(path), "--cc", "reno,cubic", "--out", str(out), "--memory-budget", "40MiB", "-q", "--no-plot")
    assert p.returncode == 0, p.stderr


def test_a_comparison_of_many_flows_draws_each_algorithms_median(tmp_path, monkeypatch):
    import longfat.plot

    s = small_scenario(duration="5s", measure_from="0s")
    s["flows"] = [{"cc": "reno", "count": 11, "start_spacing": "10ms"}]
    figures = []
    close = longfat.plot.plt.close
    monkeypatch.setattr(longfat.plot.plt, "close", lambda fig: (figures.append(fig), close(fig)))
    longfat.plot.plot_comparison(compare(s, ["reno", "cubic"]), tmp_path / "c.png")
    ax_c, ax_g, _ = figures[0].axes
    assert [line.get_label() for line in ax_g.get_lines()] == ["reno (median of 11 flows)", "cubic (median of 11 flows)"]
    assert len(ax_c.get_lines()) == 2
