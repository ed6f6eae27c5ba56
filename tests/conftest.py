import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Modules whose tests need the machine to themselves. test_kernel,
#: test_testbed, test_testbed_algorithms: real TCP through the kernel and the
#: namespace testbed (its delay line is a userspace process), throughput held
#: to the simulator's or to Reno's, and runs the testbed finds unfaithful
#: retried and at last skipped when the machine is too busy to emulate the
#: path. test_corpus_py, test_fuzz_py: the fuzz harness (scripts/fuzz_py.py)
#: calls an input that takes longer than its time limit a HANG, on two worker
#: processes of its own. scripts/test.sh runs every other test on two
#: pytest-xdist workers (`-m "not exclusive" -n 2 --dist loadfile`: a module's
#: tests on one worker, in order, so a module-scoped fixture such as the
#: wheel's build and install is made once), then these alone (`-m exclusive`),
#: so no other test competes with them for the CPU. A plain `pytest` runs
#: everything in one process, as before.
EXCLUSIVE_MODULES = ("test_kernel.py", "test_testbed.py", "test_testbed_algorithms.py", "test_corpus_py.py", "test_fuzz_py.py")


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "exclusive: needs the machine to itself (real-time TCP in the kernel and on the namespace testbed, "
        "the fuzz harness's time limit per input); scripts/test.sh runs these after the others, never beside another test",
    )


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.path.name in EXCLUSIVE_MODULES:
            item.add_marker(pytest.mark.exclusive)


def small_scenario(**run) -> dict:
    """Two Reno flows on a 20 Mbit/s, 40 ms dumbbell: runs in a fraction of a second."""
    return {
        "name": "small",
        "network": {
            "topology": "dumbbell",
            "bottleneck": {"rate": "20Mbps", "delay": "20ms", "queue": "1bdp"},
        },
        "flows": [{"cc": "reno", "count": 2, "start_spacing": "1s"}],
        "run": {"duration": "20s", "measure_from": "5s", "sample_interval": "100ms", "seed": 1, **run},
    }


def signals_as_from_a_terminal() -> None:
    """preexec_fn for a child the test will interrupt: SIGINT and SIGHUP at
    their defaults, as a command started from a terminal has them. (A test
    run started in the background or under nohup would otherwise pass its
    ignored SIGINT/SIGHUP on, and longfat rightly keeps an ignored signal
    ignored.)"""
    import signal

    for s in (signal.SIGINT, signal.SIGHUP):
        signal.signal(s, signal.SIG_DFL)


@pytest.fixture
def signals_as_in_a_terminal():
    """signals_as_from_a_terminal for this process, for a test that runs a
    command in-process and signals itself: SIGINT as Python installs it when
    started from a terminal (default_int_handler) and SIGHUP at its default,
    for the test's duration; then back. A test run started in the background
    (`cmd &` in a script: the shell ignores SIGINT) or under nohup has them
    ignored, the command keeps an ignored signal ignored, and its signal
    would be discarded unseen."""
    import signal

    previous = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGHUP)}
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h if h is not None else signal.SIG_DFL)


@pytest.fixture
def signals_ignored():
    """SIGINT and SIGHUP ignored in this process for the test's duration, as
    in a command started in the background or under nohup; then back."""
    import signal

    previous = {s: signal.signal(s, signal.SIG_IGN) for s in (signal.SIGINT, signal.SIGHUP)}
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h if h is not None else signal.SIG_DFL)


def longfat_cli() -> list[str]:
    exe = shutil.which("longfat", path=str(Path(sys.executable).parent)) or shutil.which("longfat")
    return [exe] if exe else [sys.executable, "-m", "longfat.cli"]


def run_cli(*args, cwd=ROOT, timeout=300, **kw) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run(longfat_cli() + list(args), cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env, **kw)


@pytest.fixture
def scenario_file(tmp_path):
    import tomllib  # noqa: F401  (scenario written by hand below)

    path = tmp_path / "small.toml"
    path.write_text(
        """
name = "small"
[network]
topology = "dumbbell"
[network.bottleneck]
rate = "20Mbps"
delay = "20ms"
queue = "1bdp"
[[flows]]
cc = "reno"
count = 2
start_spacing = "1s"
[run]
duration = "20s"
measure_from = "5s"
sample_interval = "100ms"
"""
    )
    return path
