"""Ctrl-C (any Python signal handler) is honoured inside the Rust core: while
a large scenario is set up, and inside a dense slice of a run."""

import json
import signal
import time

import pytest

from longfat._native import Simulation


def many_flows(n: int) -> dict:
    return {
        "network": {"topology": "dumbbell", "bottleneck": {"rate": "10Gbps", "delay": "10ms", "queue": "1bdp"}},
        "flows": [{"cc": "reno", "count": n}],
        "run": {"duration": "10s", "sample_interval": "1s"},
    }


@pytest.fixture
def alarm():
    """Raises KeyboardInterrupt from a SIGALRM after the given seconds."""

    def raise_interrupt(signum, frame):
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGALRM, raise_interrupt)
    yield lambda seconds: signal.setitimer(signal.ITIMER_REAL, seconds)
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, old)


def test_set_up_of_many_flows_stops_on_a_signal(alarm):
    # Regression: a 20,000-flow set-up ignored Ctrl-C (it had to be SIGKILLed).
    t = time.perf_counter()
    Simulation(json.dumps(many_flows(100_000)))
    full = time.perf_counter() - t
    alarm(full / 10)
    t = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        Simulation(json.dumps(many_flows(100_000)))
    assert time.perf_counter() - t < full


def test_a_dense_slice_of_a_run_stops_on_a_signal(alarm):
    spec = many_flows(1)
    spec["run"]["duration"] = "600s"
    sim = Simulation(json.dumps(spec))
    alarm(0.3)
    t = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        sim.run_until(sim.end_ns)  # one call for the whole run: minutes of work
    assert time.perf_counter() - t < 3.0
    assert 0 < sim.now_ns < sim.end_ns
