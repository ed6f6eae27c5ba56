"""The command line as a user meets it: clear errors, results, plots, bench."""

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import longfat
from conftest import ROOT, longfat_cli, run_cli, signals_as_from_a_terminal, small_scenario


def test_run_prints_summary_and_writes_results(scenario_file, tmp_path):
    out = tmp_path / "res"
    r = run_cli("run", str(scenario_file), "--out", str(out), "--seed", "3")
    assert r.returncode == 0, r.stderr
    assert "Jain's fairness index" in r.stdout and "bottleneck" in r.stdout
    # stderr is a pipe here: the progress bar's start and end as plain lines (longfat.progress).
    lines = [x for x in r.stderr.splitlines() if "s simulated" in x]
    assert lines and lines[-1].startswith(scenario_file.stem) and "100 %" in lines[-1], r.stderr
    assert (out / "plot.png").is_file()
    r = run_cli("plot", str(out), "--out", str(tmp_path / "again.png"))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "again.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize(
    "override, field, phrase",
    [
        ('network.bottleneck.rate="-1Gbps"', "network.bottleneck.rate", "must be > 0"),
        ('network.bottleneck.rate="1Gbit"', "network.bottleneck.rate", "malformed rate"),
        ('network.bottleneck.queue="0pkt"', "network.bottleneck.queue", "at least one packet"),
        ('network.bottleneck.delay="70"', "network.bottleneck.delay", "malformed duration"),
        ('flows[0].start="30s"', "flows[0].start", "after the end of the run"),
        ('flows[0].cc="cubicz"', "flows[0].cc", "unknown algorithm"),
        ("flows[0].params.beta=0.5", "flows[0].params.beta", "unknown parameter"),
        ("network.colour=1", "network.colour", "unknown field"),
        ("run.seed=-1", "run.seed", "whole number"),
        ('run.measure_from="25s"', "run.measure_from", "before run.duration"),
        ("network.bottleneck.loss=1", "network.bottleneck.loss", "[0, 1)"),
        ('network.topology="ring"', "network.topology", "unknown topology"),
        ('flows[0].tcp.min_rto="90s"', "flows[0].tcp.min_rto", "must be <= max_rto"),
        ("flows[0].to=5", "flows[0].to", "does not exist"),
    ],
)
def test_bad_input_is_refused_with_the_field_named(scenario_file, tmp_path, override, field, phrase):
    out = tmp_path / "never"
    r = run_cli("run", str(scenario_file), "--set", override, "--out", str(out))
    assert r.returncode == 2
    assert "Traceback" not in r.stderr and "panicked" not in r.stderr
    assert r.stderr.startswith(f"error: {field}:"), r.stderr
    assert phrase in r.stderr, r.stderr
    assert not out.exists()


@pytest.mark.parametrize(
    ("budget", "phrase"),
    [("8 gib", "malformed size"), ("1e9", "malformed size"), ("512KiB", "allowed 1MiB..=1024TiB")],
)
def test_a_bad_memory_budget_is_refused_with_the_option_named(scenario_file, tmp_path, monkeypatch, budget, phrase):
    """The engine's one parser of budgets (budget::parse_memory_budget)
    answers for the option and for LONGFAT_MEMORY_BUDGET alike."""
    out = tmp_path / "never"
    r = run_cli("run", str(scenario_file), "--memory-budget", budget, "--out", str(out))
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.startswith("error: --memory-budget:") and phrase in r.stderr, r.stderr
    monkeypatch.setenv("LONGFAT_MEMORY_BUDGET", budget)
    r = run_cli("run", str(scenario_file), "--out", str(out))
    assert r.returncode == 2 and r.stderr.startswith("error: LONGFAT_MEMORY_BUDGET:") and phrase in r.stderr, r.stderr
    assert not out.exists()


def test_missing_and_broken_files(tmp_path):
    r = run_cli("run", str(tmp_path / "nope.toml"))
    assert r.returncode == 2 and r.stderr.strip() == f"error: scenario file '{tmp_path / 'nope.toml'}' does not exist", r.stderr
    bad = tmp_path / "bad.toml"
    bad.write_text("[network\n")
    r = run_cli("run", str(bad))
    assert r.returncode == 2 and "TOML syntax error" in r.stderr and "Traceback" not in r.stderr


@settings(max_examples=80, deadline=None, derandomize=True)
@given(
    st.sampled_from(["rate", "delay", "queue"]),
    st.one_of(st.text(max_size=12), st.integers(), st.floats(allow_nan=False), st.sampled_from(["1pkt", "3bdp", "10Mbps", "5ms", "0s", "1KB"])),
)
def test_any_link_value_is_accepted_or_refused_by_name(field, value):
    """Derandomized (the same examples every run). The rest of the scenario is
    valid whatever the field's value (its second flow starts within the 1 s
    run; its queue is in packets, not BDPs), so a value the link accepts
    builds, and any refusal names the field."""
    sc = small_scenario(duration="1s", measure_from="0s")
    sc["flows"][0]["start_spacing"] = "0.1s"
    sc["network"]["bottleneck"]["queue"] = "100pkt"  # not in BDPs: valid whatever the rate and delay
    longfat._native.Simulation(json.dumps(sc))  # the base scenario is valid
    sc["network"]["bottleneck"][field] = value
    try:
        longfat._native.Simulation(json.dumps(sc))
    except longfat.ScenarioError as e:
        assert str(e.args[0]).startswith(f"network.bottleneck.{field}:"), e.args[0]


def test_interrupted_run_leaves_no_result_directory(tmp_path):
    out = tmp_path / "partial"
    proc = subprocess.Popen(
        # 1200 s simulated (about 20 s of CPU): still running when the signal comes, however fast the
        # machine (at its own 120 s the run took 1.97 s on an idle machine, and raced the signal at 2 s).
        longfat_cli() + ["run", str(ROOT / "scenarios" / "dumbbell_reno.toml"), "--set", 'run.duration="1200s"', "--out", str(out), "-q"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=signals_as_from_a_terminal,
    )
    time.sleep(2.0)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "no results written" in err
    assert list(tmp_path.iterdir()) == []


def test_bench_reports_rates():
    r = run_cli("bench", "--repeat", "1", "--set", 'run.duration="3s"')
    assert r.returncode == 0, r.stderr
    for label in ("bottleneck packets per wall-second", "events per wall-second", "peak RSS"):
        assert label in r.stdout


def test_shipped_scenarios_are_found_by_name(tmp_path):
    from longfat.scenario import find_scenario, shipped_dir, shipped_scenarios

    names = shipped_scenarios()
    # Every scenario file of the clone (scenarios/ links to the package's copy) is listed.
    assert (ROOT / "scenarios").resolve() == shipped_dir().resolve()
    assert sorted(names) == sorted(p.relative_to(shipped_dir()).as_posix() for p in shipped_dir().rglob("*.toml"))
    assert {"canonical.toml", "dumbbell_reno.toml", "ltcp/fig5.toml", "plt/fig3_loss.toml"} <= set(names)
    for arg in ("canonical", "canonical.toml", "scenarios/canonical.toml", "ltcp/fig5"):
        assert find_scenario(arg).is_file() and find_scenario(arg).parent.resolve().is_relative_to(shipped_dir().resolve()), arg
    # An existing file is taken as it is; anything else is left for the usual error, never looked up outside.
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "canonical").write_text("name = 'mine'\n")
    assert find_scenario(mine / "canonical") == mine / "canonical"
    # The Python API reads names as the command line does (longfat.run("canonical")).
    from longfat.scenario import load_scenario

    assert load_scenario("canonical") == load_scenario(shipped_dir() / "canonical.toml")
    assert load_scenario(mine / "canonical")["name"] == "mine"
    for arg in ("nope", "../canonical", "ltcp/../canonical", "/etc/passwd.toml", "ltcp", "x" * 5000, "cano\0nical"):
        assert find_scenario(arg) == Path(arg), arg
    r = run_cli("scenarios")
    assert r.returncode == 0 and str(shipped_dir()) in r.stdout, r.stderr
    assert [line.strip() + ".toml" for line in r.stdout.splitlines()[1:]] == names
    r = run_cli("run", "canonical", "--set", 'run.duration="3s"', "--set", 'run.measure_from="1s"', "--out", str(tmp_path / "o"), "-q", "--no-plot", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / "o" / "summary.json").read_text())["scenario"] == "canonical"
    r = run_cli("run", "no_such_scenario", cwd=tmp_path)
    assert r.returncode == 2 and "'no_such_scenario' does not exist" in r.stderr, r.stderr
    # A file of that name in the working directory comes first.
    r = run_cli("run", "canonical", "--out", str(tmp_path / "o2"), "-q", cwd=mine)
    assert r.returncode == 2 and "missing field `network`" in r.stderr, r.stderr


def test_progress_off_a_terminal_logs_plain_lines():
    """Off a terminal a progress bar writes its task's line as plain text
    at most once a minute while it moves (a fake clock), and when it stops
    if it moved; a task that never moved (a command refused after its bar
    appeared) writes nothing; on a terminal it writes no such lines."""
    import io

    from rich.console import Console
    from rich.progress import BarColumn, TextColumn

    from longfat.progress import LOG_EVERY_S, Progress

    now = [0.0]
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=False, width=100)
    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[runs]}"), console=console, get_time=lambda: now[0]) as bar:
        t = bar.add_task("reproduce", total=10, runs="0/10 runs")
        for i in range(1, 10):
            now[0] += 25.0
            bar.update(t, completed=i, runs=f"{i}/10 runs")
        bar.update(t, completed=10, runs="10/10 runs")
    assert LOG_EVERY_S == 60.0
    # Started at 0 s; updates every 25 s: lines at 75 s (3 runs), 150 s (6 runs) and 225 s (9); the end.
    assert buf.getvalue().splitlines() == ["reproduce   30 %  3/10 runs", "reproduce   60 %  6/10 runs",
                                           "reproduce   90 %  9/10 runs", "reproduce  100 %  10/10 runs"]
    # A task that never moved writes nothing, even when its bar stops on an error.
    buf = io.StringIO()
    with pytest.raises(RuntimeError):
        with Progress(TextColumn("{task.description}"), BarColumn(), console=Console(file=buf, force_terminal=False), get_time=lambda: now[0]) as bar:
            bar.add_task("testbed", total=1.0)
            now[0] += 120.0
            raise RuntimeError("refused")
    assert buf.getvalue() == ""
    # Quiet: nothing. On a terminal: rich's own bar, not these lines.
    buf = io.StringIO()
    with Progress(TextColumn("{task.description}"), console=Console(file=buf, force_terminal=False), disable=True) as bar:
        bar.update(bar.add_task("x", total=1), completed=1)
    assert buf.getvalue() == ""
    assert not Progress(console=Console(file=io.StringIO(), force_terminal=True))._plain
