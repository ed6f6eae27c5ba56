"""scripts/validation/ns3_bbr_aqm.py without ns-3: the scenario files it
writes are the committed ones, its TOML reads back as what it meant, its
pass/fail arithmetic holds at the targets' edges, and a comparison longfat
cannot run is reported as such."""

import importlib.util
import math
import tomllib

import pytest

from conftest import ROOT

SCRIPT = ROOT / "scripts" / "validation" / "ns3_bbr_aqm.py"


@pytest.fixture(scope="module")
def v():
    spec = importlib.util.spec_from_file_location("ns3_bbr_aqm", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_committed_scenarios_are_what_the_script_writes(v):
    # Field names live in the script (LONGFAT_FIELDS); a hand edit of a file, or a
    # script change without rerunning it, leaves the two apart.
    for case in v.CASES:
        path = ROOT / "scenarios" / "validation" / f"ns3_{case['name']}.toml"
        doc = tomllib.loads(path.read_text())
        assert doc == v.longfat_scenario(case), path.name


def test_toml_reads_back_as_written(v):
    for case in v.CASES:
        doc = v.longfat_scenario(case)
        assert tomllib.loads(v.to_toml(doc)) == doc
    odd = {"a": 'q"uote\\', "t": {"x": 1.5, "y": False, "in": {"k": "v"}}, "arr": [{"n": 1}, {"n": 2}]}
    assert tomllib.loads(v.to_toml(odd)) == odd


def test_scenarios_match_the_ns3_side(v):
    for case in v.CASES:
        doc = v.longfat_scenario(case)
        bn = doc["network"]["bottleneck"]
        assert (bn["rate"], bn["delay"], bn["queue"]) == ("100Mbps", "35ms", f"{case['discipline']['limit_pkts']}pkt")
        assert len(doc["flows"]) == case["flows"]
        for f in doc["flows"]:
            assert f["tcp"]["profile"] == "linux"
            # 1448 bytes of payload, as ns-3's SegmentSize.
            assert int(f["tcp"]["packet_size"][:-1]) - int(f["tcp"]["header_size"][:-1]) == 1448
            assert f["tcp"].get(v.LONGFAT_FIELDS["ecn"], False) == case["ecn"]
        assert (v.LONGFAT_FIELDS["discipline"] in bn) == (case["discipline"]["kind"] != "fifo")


def test_goodput_target_edges(v):
    assert v.goodput_pass(100e6, 95.01e6) and v.goodput_pass(100e6, 104.99e6)
    assert not v.goodput_pass(100e6, 94.99e6) and not v.goodput_pass(100e6, 105.01e6)
    assert not v.goodput_pass(0.0, 0.0) and not v.goodput_pass(100e6, math.nan)


def test_delay_target_edges(v):
    # 10 % of 50 ms is 5 ms; below 10 ms the 1 ms floor rules.
    assert v.delay_pass(50.0, 54.99) and v.delay_pass(50.0, 45.01)
    assert not v.delay_pass(50.0, 55.01) and not v.delay_pass(50.0, 44.99)
    assert v.delay_pass(2.0, 2.99) and v.delay_pass(2.0, 1.01)
    assert not v.delay_pass(2.0, 3.01) and not v.delay_pass(2.0, 0.99)
    assert not v.delay_pass(2.0, math.nan)


def _ns3(flows, sojourn=10.0, backlog=9.0):
    return {
        "flows": [{"goodput_bps": g} for g in flows],
        "mean_sojourn_ms": sojourn,
        "mean_backlog_delay_ms": backlog,
        "max_sojourn_ms": 20.0,
        "mean_backlog_pkts": 75.0,
        "qdisc_drops_total": 0,
        "qdisc_marks_total": 0,
        "qdisc_classes": 2,
        "wall_s": 1.0,
        "cpu_s": 1.0,
    }


def test_comparison_rows_and_failures(v):
    cases = [{"name": "a", "flows": 2}, {"name": "b", "flows": 1}, {"name": "c", "flows": 1}]
    ns3 = {"a": _ns3([48e6, 48e6]), "b": _ns3([96e6]), "c": _ns3([96e6])}
    lf = {
        # goodputs pass, sojourn 10 vs 10.9 passes (the floor is 1 ms)
        "a": {"flows": [{"goodput_bps": 47e6}, {"goodput_bps": 49e6}], "mean_sojourn_ms": 10.9, "mean_backlog_delay_ms": 0.0},
        # no sojourn column: backlog 9 vs 12 fails
        "b": {"flows": [{"goodput_bps": 96e6}], "mean_backlog_delay_ms": 12.0},
        "c": {"error": "network.bottleneck.aqm: unknown field `aqm`"},
    }
    rows, failing = v.compare(cases, ns3, lf)
    assert failing == ["b"]
    a = [r for r in rows if r[0] == "a"]
    assert [r[1] for r in a] == ["0", "1", "all"]
    assert a[-1][6:] == ["10.00 (sojourn)", "10.90", "+0.90", "pass"] and a[0][6:] == ["", "", "", ""]
    (b,) = [r for r in rows if r[0] == "b"]
    assert b[5:] == ["pass", "9.00 (backlog)", "12.00", "+3.00", "FAIL"]
    (c,) = [r for r in rows if r[0] == "c"]
    assert c[3] == "not yet runnable" and c[7] == "not yet runnable"
    # A goodput 6 % off fails the case too.
    lf["a"]["flows"][0]["goodput_bps"] = 45e6
    assert v.compare(cases, ns3, lf)[1] == ["a", "b"]


def test_report_says_not_yet_runnable_with_the_error(v):
    cases = [c for c in v.CASES]
    ns3 = {c["name"]: _ns3([96e6] * c["flows"]) for c in cases}
    lf = {c["name"]: {"error": f"flows[0].cc: unknown algorithm {c['name']}"} for c in cases}
    md = v.report(cases, ns3, lf)
    for c in cases:
        assert f"`{c['name']}`: longfat: not yet runnable: flows[0].cc: unknown algorithm {c['name']}" in md
    assert "None judged yet" in md


def test_trace_summary_arithmetic(v):
    # Two flows, 4 samples from t = 10 s: queue 0, 10, 20, 30 packets;
    # both in PROBE_BW in samples 0-2, phases equal in 0 and 2; flow 1 in
    # PROBE_RTT in sample 3. A sample before t_from is ignored.
    t = [9.99, 10.0, 10.01, 10.02, 10.03]
    q = [999, 0, 10, 20, 30]
    f0 = {"state": [0, 2, 2, 2, 2], "cycle_index": [0, 1, 2, 3, 4], "bw_bps": [0, 50e6, 50e6, 60e6, 60e6],
          "cwnd": [1, 600, 600, 700, 700], "min_rtt_s": [1, 0.070, 0.070, 0.0701, 0.0701]}
    f1 = {"state": [0, 2, 2, 2, 3], "cycle_index": [0, 1, 5, 3, 4], "bw_bps": [0, 46e6, 46e6, 46e6, 46e6],
          "cwnd": [1, 500, 500, 4, 4], "min_rtt_s": [1, 0.0702, 0.0702, 0.0702, 0.0702]}
    s = v.trace_summary(t, q, [f0, f1], 10.0, 1.0)
    assert s["samples"] == 4 and s["mean_queue_pkts"] == 15.0
    assert s["mean_queue_ms"] == pytest.approx(15 * 1502 * 8 / 100e6 * 1e3)
    assert s["probe_rtt_share"] == [0.0, 0.25]
    assert s["same_phase_share"] == pytest.approx(2 / 3)
    assert s["bw_sum_mbps"] == pytest.approx(101.0)
    assert s["mean_cwnd_pkts"] == [650.0, 252.0]
    assert s["min_rtt_ms"] == pytest.approx([70.0, 70.2])
    # flow 0's phases 1-4 once each (phase 4's sample has flow 0 in PROBE_BW)
    assert s["queue_by_phase_pkts"] == [None, 0.0, 10.0, 20.0, 30.0, None, None, None]


def _committed():
    import json

    return json.loads((ROOT / "docs" / "validation" / "ns3-bbr-aqm.json").read_text())


def test_committed_report_is_the_json_s(v):
    # The report is a function of the JSON (ns-3's numbers, longfat's as
    # reported, the BBR experiments): a hand edit, or numbers changed without
    # rewriting the report, shows here.
    data = _committed()
    md = v.report(v.CASES, data, data["_longfat"])
    assert md == (ROOT / "docs" / "validation" / "ns3-bbr-aqm.md").read_text()


def test_every_missed_target_is_explained(v):
    # A comparison that misses a target has its explanation, and the
    # explanation's numbers were all measured (no experiment left unrun).
    data = _committed()
    _, failing = v.compare(v.CASES, data, data["_longfat"])
    assert set(failing) <= set(v.GAPS), failing
    for name in failing:
        text = v.GAPS[name](data, data["_longfat"])
        assert "(not run)" not in text and "Not yet explained" not in text, name
    assert all("error" not in data["_longfat"][c["name"]] for c in v.CASES)


def test_longfat_today_gives_the_reported_numbers(v):
    # longfat is deterministic: this build must reproduce the numbers the
    # report shows, else the report is stale (rerun the script). The BBR
    # and RED cases are the ones a controller or AQM change would move.
    pytest.importorskip("longfat._native")
    data = _committed()
    for case in v.CASES:
        path = ROOT / "scenarios" / "validation" / f"ns3_{case['name']}.toml"
        got, want = v.run_longfat(path), data["_longfat"][case["name"]]
        assert "error" not in got, got
        assert [f["goodput_bps"] for f in got["flows"]] == [f["goodput_bps"] for f in want["flows"]], case["name"]
        assert got["mean_backlog_delay_ms"] == want["mean_backlog_delay_ms"], case["name"]
        assert got.get("mean_sojourn_ms") == want.get("mean_sojourn_ms"), case["name"]
