"""Controllers written in Python (longfat.Controller, longfat.register):
the shipped Python Reno is bit-identical to the built-in reno under every
transport profile, on the canonical scenario and on a lossy multi-flow one;
parameters, names and errors are checked; a controller that raises stops
the run with its traceback and the simulated time, and nothing is
written; the command line's --register and LONGFAT_CONTROLLERS, compare,
and sweep on a LocalCluster of worker processes all run it."""

from __future__ import annotations

import copy
import json
import math
import os
import textwrap

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import longfat
from longfat._native import ScenarioError
from longfat.controller import Controller, ControllerError, known_algorithms, pack, registered, registry, unpack
from longfat.examples.reno import Reno, linux_pkts, linux_slow_start
from longfat.runner import run
from longfat.scenario import find_scenario, load_scenario

from conftest import ROOT, run_cli

PROFILES = ("rfc", "ns2", "linux")


def canonical(cc: str, profile: str) -> dict:
    """The README's canonical scenario (scenarios/canonical.toml: one flow,
    1 Gbit/s x 70 ms, 6000-packet DropTail), its first 3 s: slow start,
    the overshoot that drops about 11,800 packets, and its SACK recovery."""
    spec = load_scenario(find_scenario("canonical"))
    spec["run"]["duration"] = "3s"
    spec["flows"][0].update(cc=cc, name="f", tcp={"profile": profile})
    return spec


def lossy(cc: str, profile: str) -> dict:
    """Four flows on 50 Mbit/s x 24 ms behind CoDel with ECN, 0.05 % random
    loss, and a 60 Mbit/s UDP burst from 2 to 2.5 s: fast recoveries,
    timeouts under every profile, an ECN+ABE flow's ECN reductions, and a
    flow limited by a 20-packet receive window (ns-2 caps its reductions
    there)."""
    return {
        "name": "lossy",
        "network": {
            "topology": "dumbbell",
            "bottleneck": {"rate": "50Mbps", "delay": "10ms", "queue": "1bdp", "loss": 0.0005, "discipline": "codel", "aqm": {"ecn": True}},
            "access": {"rate": "1Gbps", "delay": "1ms"},
        },
        "flows": [
            {"name": "a", "cc": cc, "count": 2, "start_spacing": "300ms", "tcp": {"profile": profile}},
            {"name": "e", "cc": cc, "tcp": {"profile": profile, "ecn": True, "abe": True}},
            {"name": "w", "cc": cc, "tcp": {"profile": profile, "rwnd": "20pkt"}},
        ],
        "udp": [{"pattern": "cbr", "rate": "60Mbps", "start": "2s", "stop": "2.5s"}],
        "run": {"duration": "4s", "sample_interval": "50ms", "seed": 3},
    }


def _decoded(t: pa.Table) -> pa.Table:
    return pa.table({n: (pa.chunked_array([c.dictionary_decode() for c in t[n].chunks]) if pa.types.is_dictionary(t[n].type) else t[n]) for n in t.column_names})


def assert_same_tables(a: pa.Table, b: pa.Table) -> None:
    """Same columns, same nulls, and every value the same bits (floats
    compared as their bit patterns, so NaN equals NaN and 0.0 is not -0.0)."""
    assert a.column_names == b.column_names
    for name in a.column_names:
        ca, cb = a[name].combine_chunks(), b[name].combine_chunks()
        assert ca.type == cb.type, name
        assert ca.is_null().to_pylist() == cb.is_null().to_pylist(), name
        if pa.types.is_floating(ca.type):
            va, vb = (np.asarray(c.fill_null(0.0).to_numpy(zero_copy_only=False), dtype=np.float64).view(np.uint64) for c in (ca, cb))
            assert np.array_equal(va, vb), name
        else:
            assert ca.to_pylist() == cb.to_pylist(), name


def assert_identical(a, b, label_b: str) -> None:
    """Every column of the two runs' flows and links tables and every
    summary field equal, the algorithm label aside (``label_b`` for b)."""
    fa, fb = _decoded(a.flows), _decoded(b.flows)
    assert set(fb["algorithm"].to_pylist()) - {"udp"} == {label_b}
    relabelled = pa.array(["reno" if x == label_b else x for x in fb["algorithm"].to_pylist()])
    assert_same_tables(fa, fb.set_column(fb.schema.get_field_index("algorithm"), "algorithm", relabelled))
    assert_same_tables(_decoded(a.links), _decoded(b.links))
    sb = copy.deepcopy(b.summary)
    for f in sb["flows"]:
        if f["algorithm"] != "udp":
            assert f["algorithm"] == label_b
            f["algorithm"] = "reno"
    assert json.dumps(a.summary, sort_keys=True) == json.dumps(sb, sort_keys=True)


@pytest.fixture(scope="module")
def builtin_runs():
    """The built-in reno's runs, each made once for the module."""
    return {(kind, p): run(make("reno", p)) for kind, make in (("canonical", canonical), ("lossy", lossy)) for p in PROFILES}


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("kind", ["canonical", "lossy"])
def test_python_reno_is_bit_identical_to_the_builtin(builtin_runs, kind, profile):
    make = canonical if kind == "canonical" else lossy
    with registered("pyreno", Reno):
        ours = run(make("pyreno", profile))
    theirs = builtin_runs[(kind, profile)]
    flows = [f for f in theirs.summary["flows"] if f["algorithm"] == "reno"]
    # The scenarios exercise what differs by profile: reductions, and in
    # the lossy one timeouts and ECN reductions.
    assert sum(f["fast_recoveries"] for f in flows) > 0
    if kind == "lossy":
        assert sum(f["timeouts"] for f in flows) > 0
        ecn = _decoded(theirs.flows).to_pydict()
        assert max(v for v in ecn["ecn_reductions"] if v is not None) > 0
    assert_identical(theirs, ours, "pyreno")


class _Mutant(Reno):
    """The Python Reno with one small change (``change``)."""

    change = ""

    def halved(self):
        if self.change == "beta":
            return self.cwnd * 0.5000001 if not self.linux_rules else super().halved()
        return super().halved()

    def on_congestion_event(self, loss):
        if self.change == "no-cap":
            reduced = self.abe_reduced() if loss.alternative_backoff() else self.halved()
            self.ssthresh = max(reduced, 2.0)
            self.cwnd = min(self.cwnd, self.ssthresh)
            self.cwnd_cnt = 0
            return
        if self.change == "no-abe":
            self.cwnd = loss.cap(self.cwnd)
            self.ssthresh = max(self.halved(), 2.0)
            self.cwnd = min(self.cwnd, self.ssthresh)
            self.cwnd_cnt = 0
            return
        super().on_congestion_event(loss)

    def on_ack(self, ack):
        if self.change == "linux-ai" and self.linux_rules and not (ack.in_recovery or ack.growth_pkts == 0):
            # Linux's AI with its second test off by one (> for >=).
            w, acked = linux_pkts(self.cwnd), ack.growth_pkts
            if w < linux_pkts(self.ssthresh):
                w, acked = linux_slow_start(w, linux_pkts(self.ssthresh), acked)
            self.cwnd = float(w)
            if acked > 0:
                cwnd, cnt = w, self.cwnd_cnt
                if cnt >= w:
                    cnt, cwnd = 0, cwnd + 1
                cnt += acked
                if cnt > w:
                    delta = cnt // w
                    cnt -= delta * w
                    cwnd += delta
                self.cwnd, self.cwnd_cnt = float(cwnd), cnt
            return
        super().on_ack(ack)

    def on_rto(self, rto):
        if self.change == "rto-always-reduces":
            self.cwnd = rto.cap(self.cwnd)
            self.ssthresh = max(self.halved(), 2.0)
            self.cwnd = float(rto.in_flight_pkts) + 1.0
            self.cwnd_cnt = 0
            return
        super().on_rto(rto)


@pytest.mark.parametrize(
    "change, kind, profile",
    [
        ("beta", "canonical", "rfc"),
        ("beta", "canonical", "ns2"),
        ("linux-ai", "canonical", "linux"),
        ("no-abe", "lossy", "rfc"),
        ("no-cap", "lossy", "ns2"),
        ("rto-always-reduces", "lossy", "linux"),
    ],
)
def test_the_comparison_catches_a_reno_one_small_change_away(builtin_runs, change, kind, profile):
    """Each comparison above fails for a Python Reno one small change away:
    beta 0.5 -> 0.5000001; Linux's additive increase one ACK late; ABE's
    0.8 ignored for ECN; ns-2's window cap left out; ssthresh cut on every
    timeout (Linux keeps the recovery's during one)."""
    make = canonical if kind == "canonical" else lossy
    mutant = type("Mutant", (_Mutant,), {"change": change})
    with registered("mutant", mutant):
        ours = run(make("mutant", profile))
    with pytest.raises(AssertionError):
        assert_identical(builtin_runs[(kind, profile)], ours, "mutant")


# ---- parameters, names ----------------------------------------------------------------


class Fixed(Controller):
    """A fixed window of ``window`` packets."""

    PARAMS = {"window": 10.0}

    def __init__(self, setup, window):
        super().__init__(setup)
        if not window >= 1:
            raise ValueError(f"window = {window}: must be >= 1 packet")
        self.cwnd = window

    def on_ack(self, ack):
        pass

    def on_congestion_event(self, loss):
        pass

    def on_rto(self, rto):
        pass


def small(cc: str, **flow) -> dict:
    return {
        "network": {"topology": "dumbbell", "bottleneck": {"rate": "100Mbps", "delay": "25ms", "queue": "1bdp"}},
        "flows": [{"cc": cc, **flow}],
        "run": {"duration": "2s", "measure_from": "1s", "sample_interval": "100ms"},
    }


def test_a_parameter_reaches_the_constructor_and_sets_the_window():
    """A fixed window of W packets on an uncongested 50 ms path delivers W
    packets per RTT: W * 1448 * 8 / 50 ms (the window sets the rate)."""
    with registered("fixed", Fixed):
        for w in (10.0, 40.0):
            res = run(small("fixed", params={"window": w}))
            rtt_s = res.summary["flows"][0]["base_rtt_ms"] / 1e3
            assert rtt_s == 0.05
            expected = w * 1448 * 8 / rtt_s
            assert res.summary["flows"][0]["goodput_bps"] == pytest.approx(expected, rel=0.01)


def test_unknown_parameters_names_and_bad_classes_are_refused():
    with registered("fixed", Fixed):
        with pytest.raises(ScenarioError) as e:
            run(small("fixed", params={"windw": 3.0}))
        assert e.value.args == ("flows[0].params.windw: unknown parameter for fixed; known: window", "flows[0].params.windw")
        with pytest.raises(ScenarioError) as e:
            run(small("fixed", params={"window": 0.5}))
        assert e.value.args[1] == "flows[0].cc"
        assert "Fixed(...) raised ValueError: window = 0.5: must be >= 1 packet" in e.value.args[0]
    with pytest.raises(ScenarioError) as e:
        run(small("fixed"))
    assert e.value.args[1] == "flows[0].cc"
    assert e.value.args[0].endswith("known: " + ", ".join(a for a in longfat.algorithms() if a != "plt"))
    with registered("fixed", Fixed), registered("other", Fixed):
        with pytest.raises(ScenarioError) as e:
            run(small("fixd"))
        assert e.value.args[0].endswith("; registered: fixed, other")
        assert known_algorithms()[-2:] == ["fixed", "other"]
    assert "fixed" not in registry()
    for name in ("reno", "cubic", "plt"):
        with pytest.raises(ScenarioError, match=f'"{name}" is a built-in algorithm; a registered controller may not shadow one'):
            longfat.register(name, Fixed)
    with pytest.raises(ScenarioError, match="is not a controller name"):
        longfat.register("my cc", Fixed)
    with pytest.raises(ScenarioError, match="is not a subclass of longfat.Controller"):
        longfat.register("x", dict)
    with pytest.raises(ScenarioError, match="Half must define on_congestion_event, on_rto"):
        longfat.register("x", type("Half", (Controller,), {"on_ack": lambda self, ack: None}))
    with pytest.raises(ScenarioError, match="not registered"):
        longfat.unregister("nothing")


class Paced(Fixed):
    """A wide window, paced at ``rate_bytes_per_sec``."""

    PARAMS = {"window": 1000.0, "rate_bytes_per_sec": 1_250_000.0}
    PACES = True

    def __init__(self, setup, window, rate_bytes_per_sec):
        super().__init__(setup, window)
        self.pacing_rate_bytes_per_sec = rate_bytes_per_sec


def test_a_pacing_rate_below_the_bottleneck_sets_the_goodput():
    """Paced at R bytes of payload per second with a window that never
    binds, on a 100 Mbit/s path, a flow's goodput is 8 R bit/s."""
    with registered("paced", Paced):
        for rate in (1_250_000.0, 5_000_000.0):  # 10 and 40 Mbit/s
            res = run(small("paced", params={"rate_bytes_per_sec": rate}))
            assert res.summary["flows"][0]["goodput_bps"] == pytest.approx(8 * rate, rel=0.01)


class Sampler(Fixed):
    """Counts its ACKs and those whose delivery-rate sample is valid, in
    ``COUNTS`` (the instance the run uses is not reachable from outside)."""

    COUNTS: dict = {}

    def on_ack(self, ack):
        if self.flow is None:
            return
        c = self.COUNTS.setdefault(type(self).__name__, [0, 0])
        c[0] += 1
        if ack.rate.valid:
            assert ack.rate.delivered_pkts > 0 and ack.rate.interval_ns > 0, ack.rate
            c[1] += 1


def test_rate_samples_reach_a_class_that_asks_for_them_only():
    for wants in (False, True):
        cls = type(f"Wants{wants}", (Sampler,), {"WANTS_RATE_SAMPLES": wants})
        with registered("sampler", cls):
            run(small("sampler"))
    (acks_off, valid_off), (acks_on, valid_on) = Sampler.COUNTS["WantsFalse"], Sampler.COUNTS["WantsTrue"]
    assert acks_off == acks_on > 300  # 10 packets per 50 ms RTT for 2 s
    assert valid_off == 0 and valid_on > 0.9 * acks_on


# ---- errors --------------------------------------------------------------------------


class RaisesLate(Fixed):
    """Raises on the first ACK at or after 0.5 s."""

    def on_ack(self, ack):
        if ack.now_ns >= 500_000_000:
            self.boom(ack)

    def boom(self, ack):
        return 1 / 0


def test_an_exception_stops_the_run_with_its_traceback_flow_and_time():
    with registered("late", RaisesLate):
        with pytest.raises(ControllerError) as e:
            run(small("late", count=2))
    msg = str(e.value)
    assert msg.startswith("controller 'late' (flow 0) raised at t = 0.5"), msg
    t = float(msg.split("t = ")[1].split(" s")[0])
    assert 0.5 <= t < 0.5 + 0.05  # the first ACK after 0.5 s, within one RTT
    assert msg.endswith("ZeroDivisionError: division by zero")
    cause = e.value.__cause__
    assert isinstance(cause, ZeroDivisionError)
    frames = [f.name for f in __import__("traceback").extract_tb(cause.__traceback__)]
    assert frames[-2:] == ["on_ack", "boom"]


class BadWindow(Fixed):
    def on_congestion_event(self, loss):
        self.cwnd = math.nan

    def on_ack(self, ack):
        if ack.now_ns > 300_000_000:
            self.on_congestion_event(None)


def test_a_window_that_is_not_a_number_stops_the_run():
    with registered("bad", BadWindow):
        with pytest.raises(ControllerError, match=r"raised at t = 0\.3\d* s: ValueError: self.cwnd = NaN is not a window"):
            run(small("bad"))


SMALL_TOML = """
name = "small"
[network]
topology = "dumbbell"
[network.bottleneck]
rate = "100Mbps"
delay = "25ms"
queue = "1bdp"
[[flows]]
name = "f"
cc = "reno"
[run]
duration = "2s"
sample_interval = "100ms"
"""


def test_the_cli_shows_the_traceback_and_time_and_writes_nothing(tmp_path):
    ctl = tmp_path / "ctl.py"
    ctl.write_text(textwrap.dedent("""
        import longfat

        class Late(longfat.Controller):
            def on_ack(self, ack):
                if ack.now_ns >= 200_000_000:
                    raise RuntimeError("my controller gave up")
            def on_congestion_event(self, loss):
                pass
            def on_rto(self, rto):
                pass
    """))
    scenario = tmp_path / "small.toml"
    scenario.write_text(SMALL_TOML)
    out = tmp_path / "out"
    p = run_cli("run", str(scenario), "--register", f"late={ctl}:Late", "--set", 'flows[0].cc="late"', "--out", str(out), "-q")
    assert p.returncode == 1, p.stderr
    assert "Traceback (most recent call last)" in p.stderr and 'raise RuntimeError("my controller gave up")' in p.stderr
    assert "error: controller 'late' (flow 0) raised at t = 0.2" in p.stderr
    assert "RuntimeError: my controller gave up" in p.stderr
    assert "panicked" not in p.stderr
    assert not out.exists()
    assert sorted(x.name for x in tmp_path.iterdir() if x.name != "__pycache__") == ["ctl.py", "small.toml"]


def test_cli_register_and_environment_run_and_compare_a_python_controller(tmp_path):
    """--register NAME=MODULE:CLASS and LONGFAT_CONTROLLERS: run and
    compare name the shipped Python Reno, bit-identical to reno."""
    scenario = tmp_path / "small.toml"
    scenario.write_text(SMALL_TOML)
    out = tmp_path / "cmp"
    p = run_cli("compare", str(scenario), "--cc", "reno,pyreno", "--register", "pyreno=longfat.examples.reno:Reno", "--out", str(out), "--no-plot", "-q")
    assert p.returncode == 0, p.stderr
    a, b = (json.loads((out / d / "summary.json").read_text()) for d in ("reno", "pyreno"))
    for f in b["flows"]:
        assert f["algorithm"] == "pyreno"
        f["algorithm"] = "reno"
    assert b.pop("scenario").endswith("-pyreno") and a.pop("scenario").endswith("-reno")
    assert a == b
    for table in ("flows", "links"):
        ta, tb = (_decoded(pq.read_table(out / d / f"{table}.parquet")) for d in ("reno", "pyreno"))
        if table == "flows":
            ta, tb = ta.drop(["algorithm"]), tb.drop(["algorithm"])
        assert ta.equals(tb)
    os.environ["LONGFAT_CONTROLLERS"] = "pyreno=longfat.examples.reno:Reno"
    try:
        p = run_cli("run", str(scenario), "--set", 'flows[0].cc="pyreno"', "--out", str(tmp_path / "r"), "--no-plot", "-q")
    finally:
        del os.environ["LONGFAT_CONTROLLERS"]
    assert p.returncode == 0, p.stderr
    assert json.loads((tmp_path / "r" / "summary.json").read_text())["flows"][0]["algorithm"] == "pyreno"
    p = run_cli("run", str(scenario), "--register", "x=nowhere.py:X", "-q")
    assert p.returncode == 2 and "error: --register: 'nowhere.py': no such file" in p.stderr


# ---- sweeps on Dask workers ------------------------------------------------------------


def test_sweep_on_worker_processes_runs_a_class_defined_here(tmp_path):
    """A class defined inside this function (no module a worker could import
    it from) travels by value with each task to a LocalCluster of separate
    worker processes, and gives the runs a local sweep gives."""
    from dask.distributed import LocalCluster

    from longfat import store
    from longfat.sweep import Grid, expand, run_cells

    class Halver(Reno):
        """Reno, by another name and class."""

    base = small("reno", name="f", count=2, start_spacing="300ms")
    base["run"].update(duration="1s", measure_from="0s")
    base["name"] = "sw"
    with registered("halver", Halver):
        cells = expand(base, Grid(ccs=["reno", "halver"]))
        assert pack() is not None and set(unpack(pack())) == {"halver"}
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, memory_limit=0)
        try:
            remote = run_cells(cells, tmp_path / "remote", scheduler=cluster.scheduler_address)
        finally:
            cluster.close()
        local = run_cells(cells, tmp_path / "local", workers=1)
    assert (remote.ran, remote.failed, local.ran, local.failed) == (2, [], 2, [])
    r_reno, r_halver = (store.load_result(tmp_path / "remote", c.run_id) for c in cells)
    l_halver = store.load_result(tmp_path / "local", cells[1].run_id)
    assert r_halver.summary["flows"][0]["algorithm"] == "halver"
    assert r_halver.summary == l_halver.summary
    for f in r_halver.summary["flows"]:
        f["algorithm"] = "reno"
    assert r_halver.summary["flows"] == r_reno.summary["flows"]


def test_the_suite_plans_and_validates_a_registered_controller():
    """The suite's cells for a registered controller are the built-in's,
    and they validate only while it is registered (the whole quick suite
    with the Python Reno, 18 runs, takes about 10 s: not run here)."""
    from longfat import suite
    from longfat.sweep import cells_of

    planned = suite.cells(["pyreno"], quick=True, seeds=1)
    assert len(planned) == len(suite.cells(["reno"], quick=True, seeds=1)) > 10
    assert {c.labels["cc"] for c in planned} == {"pyreno"}
    with registered("pyreno", Reno):
        cells = cells_of((c.labels, c.scenario) for c in planned)
    assert len(cells) == len(planned)
    with pytest.raises(ScenarioError, match='unknown algorithm "pyreno"'):
        cells_of((c.labels, c.scenario) for c in planned)


def test_a_study_keys_a_python_controllers_runs_by_its_code(tmp_path):
    """Rerunning a sweep reuses a Python controller's runs only while its
    code is unchanged: the same file again is skipped, an edited file (one
    constant) under the same name runs again and gives other results, and
    the built-in controller's keys are those of a study without it."""
    from longfat import store
    from longfat.controller import code_fingerprint, load_spec
    from longfat.sweep import Grid, expand, run_cells

    src = tmp_path / "ctl.py"
    text = textwrap.dedent(
        """
        from longfat.examples.reno import Reno

        class Mine(Reno):
            FACTOR = 1.0

            def on_congestion_event(self, loss):
                super().on_congestion_event(loss)
                self.ssthresh = self.cwnd = max(2.0, self.cwnd * self.FACTOR)
        """
    )
    base = small("reno")
    base["name"] = "code"
    study = tmp_path / "study"
    outcomes = []
    for factor in ("1.0", "1.0", "0.9"):
        src.write_text(text.replace("FACTOR = 1.0", f"FACTOR = {factor}"))
        name, cls = load_spec(f"mine={src}:Mine")
        with registered(name, cls):
            cells = expand(base, Grid(ccs=["reno", "mine"]))
            prints = [c.code for c in cells]
            assert prints == [code_fingerprint(c.scenario) for c in cells]
            outcomes.append((run_cells(cells, study, workers=1), [c.run_id for c in cells], prints))
    (first, ids1, fp1), (again, ids2, _), (edited, ids3, fp3) = outcomes
    assert (first.ran, again.ran, again.skipped, edited.ran, edited.skipped) == (2, 0, 2, 1, 1)
    assert fp1[0] == fp3[0] == {} and set(fp1[1]) == {"mine"} and fp1[1] != fp3[1]
    assert ids1 == ids2 and ids3[0] == ids1[0] == store.run_id(cells[0].scenario) and ids3[1] != ids1[1]
    old, new = (store.load_result(study, i).flows.column("cwnd_pkts").to_pylist() for i in (ids1[1], ids3[1]))
    assert old != new
