"""longfat sweep, the results store and longfat query: the grid, validation
up front, exactly-once storage, resuming, a worker killed mid-sweep, and SQL
over the study."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import longfat
from longfat._native import ScenarioError
from longfat import store
from longfat.sweep import Grid, expand, grid_from_args, load_sweep, run_cells

from conftest import ROOT, longfat_cli, run_cli, small_scenario

GRID_TOML = """
name = "grid"
[network]
topology = "dumbbell"
[network.bottleneck]
rate = "20Mbps"
delay = "10ms"
queue = "1bdp"
[[flows]]
cc = "reno"
count = 2
start_spacing = "0.5s"
[run]
duration = "{duration}"
sample_interval = "100ms"
seed = 5

[sweep]
cc = ["reno", "cubic", "htcp"]
seeds = 2
[sweep.grid]
"network.bottleneck.rate" = ["10Mbps", "20Mbps", "40Mbps"]
"""


def grid_file(tmp_path, duration="3s") -> Path:
    p = tmp_path / "grid.toml"
    p.write_text(GRID_TOML.replace("{duration}", duration))
    return p


# ---- the grid ----------------------------------------------------------------------


def test_file_grid_expands_to_every_cell_with_labels(tmp_path):
    base, grid = load_sweep(grid_file(tmp_path))
    assert "sweep" not in base
    cells = expand(base, grid)
    assert len(cells) == 3 * 3 * 2
    combos = {(c.labels["network.bottleneck.rate"], c.labels["cc"], c.labels["seed"]) for c in cells}
    assert combos == {(r, a, s) for r in ("10Mbps", "20Mbps", "40Mbps") for a in ("reno", "cubic", "htcp") for s in (5, 6)}
    for c in cells:
        assert c.scenario["network"]["bottleneck"]["rate"] == c.labels["network.bottleneck.rate"]
        assert all(f["cc"] == c.labels["cc"] for f in c.scenario["flows"])
        assert c.scenario["run"]["seed"] == c.labels["seed"]
        assert c.cost > 0
    # Keys are stable, distinct, and change with any field or the seed.
    ids = [c.run_id for c in cells]
    assert len(set(ids)) == len(ids) and ids == [c.run_id for c in expand(base, grid)]
    # Faster links carry more packets: the cost estimate orders them.
    cost = {c.labels["network.bottleneck.rate"]: c.cost for c in cells if c.labels["cc"] == "reno" and c.labels["seed"] == 5}
    assert cost["10Mbps"] < cost["20Mbps"] < cost["40Mbps"]


def test_command_line_replaces_the_files_entries(tmp_path):
    base, file_grid = load_sweep(grid_file(tmp_path), ["run.duration=\"2s\""])
    assert base["run"]["duration"] == "2s"
    g = grid_from_args(['network.bottleneck.rate=["15Mbps"]', 'flows[0].count=[1, 3]'], "bic", 3, 5, file_grid)
    cells = expand(base, g)
    assert len(cells) == 1 * 2 * 1 * 3
    assert {c.labels["flows[0].count"] for c in cells} == {1, 3}
    assert {c.labels["cc"] for c in cells} == {"bic"} and {c.labels["seed"] for c in cells} == {5, 6, 7}


def test_a_bad_value_in_one_cell_is_refused_up_front_naming_cell_and_field(tmp_path):
    out = tmp_path / "study"
    r = run_cli("sweep", str(grid_file(tmp_path)), "--grid", 'network.bottleneck.rate=["10Mbps", "fast"]', "--out", str(out), "-q")
    assert r.returncode == 2, r.stderr
    assert "cell 7 of 12" in r.stderr and 'network.bottleneck.rate="fast"' in r.stderr and "network.bottleneck.rate" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr
    assert not out.exists()  # refused before anything was written


@pytest.mark.parametrize(
    "args, message",
    [
        (["--grid", "network.bottleneck.rate=10Mbps"], "must be a non-empty array"),
        (["--grid", "network.bottleneck.rate=[]"], "must be a non-empty array"),
        (["--grid", "nokey"], "expected KEY=[values]"),
        (["--cc", "reno,nope"], "unknown algorithm 'nope'"),
        (["--seeds", "0"], "--seeds: must be >= 1"),
        (["--workers", "0"], "--workers: must be >= 1"),
    ],
)
def test_bad_grid_arguments_are_named(tmp_path, args, message):
    r = run_cli("sweep", str(grid_file(tmp_path)), *args, "--out", str(tmp_path / "s"), "-q")
    assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert not (tmp_path / "s").exists()


@pytest.mark.parametrize(
    "table, message",
    [
        ('[sweep]\nseeds = 0\n', "sweep.seeds: 0 is out of range"),
        ('[sweep]\nfoo = 1\n', "sweep.foo: unknown field"),
        ('[sweep]\ngrid = 3\n', "sweep.grid: must be a table"),
        ('[sweep]\ncc = "reno"\n', "sweep.cc: must be an array"),
        ('[sweep]\nseeds = [1, 1]\n', "sweep.seeds: a seed is listed twice"),
    ],
)
def test_bad_sweep_tables_are_named(tmp_path, table, message):
    p = tmp_path / "s.toml"
    p.write_text(GRID_TOML.replace("{duration}", "1s").split("[sweep]")[0] + table)
    with pytest.raises(ScenarioError, match=message.replace("[", r"\[")):
        load_sweep(p)


def test_an_existing_directory_that_is_not_a_study_is_refused(tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "thesis.tex").write_text("precious")
    r = run_cli("sweep", str(grid_file(tmp_path)), "--out", str(out), "-q")
    assert r.returncode == 2 and "not a longfat study" in r.stderr, r.stderr
    assert os.listdir(out) == ["thesis.tex"]


# ---- the store ----------------------------------------------------------------------


def test_store_holds_each_run_once_with_its_series_and_resumes(tmp_path):
    base, grid = load_sweep(grid_file(tmp_path, "2s"))
    grid.ccs = ["reno", "cubic"]
    cells = expand(base, grid)
    assert len(cells) == 12
    study = tmp_path / "study"
    first = run_cells(cells[:5], study, workers=1)
    assert (first.ran, first.skipped, first.failed) == (5, 0, [])
    again = run_cells(cells, study, workers=1)
    assert (again.ran, again.skipped) == (7, 5)
    assert store.done_runs(study) == {c.run_id for c in cells}
    runs = store.runs_table(study)
    assert runs.num_rows == 12 and len(set(runs.column("run_id").to_pylist())) == 12
    # Each stored run equals the same run made directly.
    c = cells[3]
    direct = longfat.run(c.scenario)
    row = [r for r in runs.to_pylist() if r["run_id"] == c.run_id][0]
    assert row["goodput_bps"] == direct.summary["tcp_goodput_bps"]
    assert row["cc"] == c.labels["cc"] and row["network_bottleneck_rate"] == c.labels["network.bottleneck.rate"] and row["seed"] == c.labels["seed"]
    back = store.load_result(study, c.run_id)
    assert back.flows.equals(direct.flows) and back.links.equals(direct.links)
    assert json.loads(row["scenario_json"]) == c.scenario
    # SQL over the study.
    cols, rows = store.query(study, "SELECT cc, count(*) AS n, avg(utilization) AS u FROM runs GROUP BY cc ORDER BY cc")
    assert cols == ["cc", "n", "u"] and [(r[0], r[1]) for r in rows] == [("cubic", 6), ("reno", 6)]
    assert all(0.3 < r[2] <= 1.0 for r in rows)
    n_flow_rows = sum(store.read_series(study, "flows", c.run_id).num_rows for c in cells)
    assert store.query(study, "SELECT count(*) FROM flows")[1] == [(n_flow_rows,)]


def test_the_store_stays_consistent_after_a_crash_at_any_point(tmp_path):
    base, grid = load_sweep(grid_file(tmp_path, "1s"))
    grid.ccs, grid.seeds, grid.axes = ["reno"], [1, 2], {}
    cells = expand(base, grid)
    study = tmp_path / "study"
    run_cells(cells[:1], study, workers=1)
    # A crash after the series were written but before the runs row (the
    # commit), and a crash in the middle of writing a file (its temporary
    # name): neither is seen.
    other = cells[1]
    files = longfat.sweep.run_cell(json.dumps(other.scenario), other.run_id, other.labels, {}, longfat.runner.memory_budget())
    (study / "flows" / f"{other.run_id}.parquet").write_bytes(files["flows"])
    (study / "runs" / f".{other.run_id}.parquet.longfat-tmp-999999-0badc0de").write_bytes(files["runs"][:100])
    store.refresh_database(study)
    assert store.query(study, "SELECT count(*) FROM runs")[1] == [(1,)]
    assert store.query(study, "SELECT count(DISTINCT run_id) FROM flows")[1] == [(1,)]
    # The same with an outside reader of study.duckdb.
    import duckdb

    con = duckdb.connect(str(study / "study.duckdb"), read_only=True)
    assert con.execute("SELECT count(*) FROM runs").fetchall() == [(1,)]
    assert con.execute("SELECT count(DISTINCT run_id) FROM flows").fetchall() == [(1,)]
    con.close()
    # Resuming redoes the uncommitted run, removes the dead writer's
    # temporary file, and stores each run once.
    out = run_cells(cells, study, workers=1)
    assert (out.ran, out.skipped) == (1, 1)
    assert not [f for f in (study / "runs").iterdir() if f.name.startswith(".")]
    assert store.query(study, "SELECT count(*), count(DISTINCT run_id) FROM runs")[1] == [(2, 2)]


def test_query_cli_prints_a_table_and_names_sql_errors(tmp_path):
    study = tmp_path / "study"
    r = run_cli("sweep", str(grid_file(tmp_path, "1s")), "--cc", "reno,cubic", "--seeds", "1", "--grid", 'network.bottleneck.rate=["10Mbps"]', "--out", str(study), "--workers", "1", "-q")
    assert r.returncode == 0, r.stderr
    assert "2 runs in the grid: 2 ran now, 0 were already in the study, 0 failed" in r.stdout
    r = run_cli("query", str(study), "SELECT cc, avg(utilization) AS u FROM runs GROUP BY cc ORDER BY cc")
    assert r.returncode == 0, r.stderr
    lines = [l for l in r.stdout.splitlines() if "cubic" in l or "reno" in l]
    assert len(lines) == 2 and "2 rows" in r.stdout
    r = run_cli("query", str(study), "SELECT cc, count(*) FROM runs GROUP BY cc ORDER BY cc", "--format", "csv")
    assert r.stdout.splitlines() == ["cc,count_star()", "cubic,1", "reno,1"]
    r = run_cli("query", str(study), "SELECT nonsense FROM runs")
    assert r.returncode == 2 and r.stderr.startswith("error: SQL:") and "nonsense" in r.stderr and "Traceback" not in r.stderr
    r = run_cli("query", str(tmp_path / "nowhere"), "SELECT 1")
    assert r.returncode == 2 and "does not exist" in r.stderr


# ---- on Dask ----------------------------------------------------------------------------


def _wait_for(cond, timeout, what):
    deadline = time.time() + timeout
    while not cond():
        assert time.time() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_a_worker_killed_mid_sweep_loses_nothing_and_stores_nothing_twice(tmp_path):
    """A real local Dask cluster; the sweep runs against it as a separate
    process; one worker process is killed (SIGKILL) while it runs a
    simulation. The scheduler reschedules its task; the study ends with
    exactly one row per cell."""
    from dask.distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, memory_limit=0)
    client = Client(cluster)
    study = tmp_path / "study"
    try:
        # 12 runs of about a second each on this machine.
        args = ["sweep", str(grid_file(tmp_path, "30s")), "--cc", "reno,cubic", "--out", str(study), "--scheduler", cluster.scheduler_address, "-q"]
        proc = subprocess.Popen(longfat_cli() + args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # Wait until both workers are simulating, then kill one of them.
        _wait_for(lambda: sum(len(v) > 0 for v in client.processing().values()) == 2 or proc.poll() is not None, 60, "both workers busy")
        assert proc.poll() is None, proc.communicate()
        busy = [w for w, keys in client.processing().items() if keys]
        pids = client.run(os.getpid)
        victim = busy[0]
        stored_before = len(store.done_runs(study))
        os.kill(pids[victim], signal.SIGKILL)
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        assert stored_before < 12  # the kill happened mid-sweep
        assert "12 runs in the grid: 12 ran now" in out, out
        # The nanny restarted the killed worker: a new process.
        _wait_for(lambda: len(client.run(os.getpid)) == 2, 60, "the restarted worker")
        assert pids[victim] not in client.run(os.getpid).values()
    finally:
        client.close()
        cluster.close()
    base, grid = load_sweep(grid_file(tmp_path, "30s"))
    grid.ccs = ["reno", "cubic"]
    expected = {c.run_id for c in expand(base, grid)}
    runs = store.runs_table(study)
    assert sorted(runs.column("run_id").to_pylist()) == sorted(expected)
    assert store.query(study, "SELECT count(*), count(DISTINCT run_id) FROM runs")[1] == [(12, 12)]
    for rid in expected:
        flows = store.read_series(study, "flows", rid)
        assert flows is not None and flows.num_rows == 2 * 300  # 2 flows x 30 s / 100 ms
    assert not list((study / "failed").iterdir())


def test_interrupted_sweep_resumes_where_it_stopped(tmp_path):
    study = tmp_path / "study"
    args = ["sweep", str(grid_file(tmp_path, "20s")), "--out", str(study), "--workers", "2", "-q"]
    proc = subprocess.Popen(longfat_cli() + args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _wait_for(lambda: len(store.done_runs(study)) >= 2 or proc.poll() is not None, 120, "two stored runs")
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, (out, err)
    n = len(store.done_runs(study))
    assert 2 <= n < 18 and f"interrupted: {n} runs stored in {study}" in err, err
    r = run_cli("sweep", *args[1:], timeout=600)
    assert r.returncode == 0, r.stderr
    assert f"18 runs in the grid: {18 - n} ran now, {n} were already in the study, 0 failed" in r.stdout, r.stdout
    assert store.query(study, "SELECT count(*), count(DISTINCT run_id) FROM runs")[1] == [(18, 18)]


def test_sweep_and_reproduce_on_a_cluster_started_with_the_dask_commands(tmp_path):
    """The documented set-up: `dask scheduler` and `dask worker` processes
    (as on a real cluster), then longfat sweep and longfat reproduce with
    --scheduler."""
    dask = str(Path(sys.executable).parent / "dask")
    sched_file = tmp_path / "scheduler.json"
    env = {**os.environ, "DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED": "False"}
    procs = [subprocess.Popen([dask, "scheduler", "--port", "0", "--dashboard-address", ":0", "--scheduler-file", str(sched_file)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        _wait_for(sched_file.exists, 60, "the scheduler file")
        _wait_for(lambda: "address" in sched_file.read_text(), 10, "the scheduler address")
        address = json.loads(sched_file.read_text())["address"]
        procs.append(subprocess.Popen([dask, "worker", address, "--nworkers", "2", "--nthreads", "1", "--no-dashboard"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        from dask.distributed import Client

        with Client(address) as client:
            client.wait_for_workers(2, timeout=60)
        study = tmp_path / "study"
        r = run_cli("sweep", str(grid_file(tmp_path, "2s")), "--cc", "reno", "--out", str(study), "--scheduler", address, "-q", timeout=300)
        assert r.returncode == 0, r.stderr
        assert "6 runs in the grid: 6 ran now" in r.stdout
        assert store.query(study, "SELECT count(DISTINCT run_id) FROM runs")[1] == [(6,)]
        out = tmp_path / "rep"
        r = run_cli("reproduce", "ltcp", "--quick", "--scheduler", address, "--out", str(out), "-q", timeout=600)
        assert r.returncode == 0, r.stderr
        report = (out / "ltcp" / "report.md").read_text()
        assert f"the workers of the Dask cluster at {address}" in report
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()


def test_an_unreachable_scheduler_is_one_line(tmp_path):
    r = run_cli("sweep", str(grid_file(tmp_path, "1s")), "--out", str(tmp_path / "s"), "--scheduler", "tcp://127.0.0.1:9", "-q", timeout=120)
    assert r.returncode == 2 and "--scheduler: cannot reach the Dask scheduler at tcp://127.0.0.1:9" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert not (tmp_path / "s").exists()


def test_two_sweeps_writing_one_study_at_once_store_each_run_once(tmp_path):
    """Concurrent writers: two longfat sweep processes over overlapping
    grids on the same study at the same time."""
    study = tmp_path / "study"
    f = grid_file(tmp_path, "3s")
    common = ["--out", str(study), "--workers", "1", "-q", "--seeds", "1"]
    a = subprocess.Popen(longfat_cli() + ["sweep", str(f), "--cc", "reno,cubic", *common], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    b = subprocess.Popen(longfat_cli() + ["sweep", str(f), "--cc", "cubic,htcp", *common], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for p in (a, b):
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    base, grid = load_sweep(f)
    grid.ccs, grid.seeds = ["reno", "cubic", "htcp"], [5]
    expected = {c.run_id for c in expand(base, grid)}
    assert len(expected) == 9
    assert store.done_runs(study) == expected
    assert store.query(study, "SELECT count(*), count(DISTINCT run_id) FROM runs")[1] == [(9, 9)]
    assert store.query(study, "SELECT count(DISTINCT run_id) FROM flows")[1] == [(9,)]
    leftovers = [p for t in ("runs", "flows", "links") for p in (study / t).iterdir() if not p.name.endswith(".parquet")]
    assert leftovers == []


def test_a_database_that_cannot_be_rebuilt_loses_no_runs(tmp_path, monkeypatch):
    """study.duckdb is derived from the Parquet files: DuckDB failing (out of
    memory, say) is a warning, the runs are stored, and the next sweep rebuilds it."""
    import duckdb

    def broken(_study):
        raise duckdb.OutOfMemoryException("Out of Memory Error: Failed to allocate block of 8 bytes")

    base, grid = load_sweep(grid_file(tmp_path, "1s"))
    grid.ccs, grid.seeds, grid.axes = ["reno"], [1], {}
    cells = expand(base, grid)
    study = tmp_path / "study"
    monkeypatch.setattr(store, "refresh_database", broken)
    out = run_cells(cells, study, workers=1)
    assert out.ran == 1 and out.failed == [] and "OutOfMemoryException" in out.database_error
    assert store.done_runs(study) == {cells[0].run_id} and not (study / "study.duckdb").exists()
    monkeypatch.undo()
    r = run_cli("query", str(study), "SELECT count(*) FROM runs", "--format", "csv")
    assert r.returncode == 0 and r.stdout.splitlines()[1] == "1", r.stdout + r.stderr
    assert not (study / "study.duckdb").exists()  # query writes nothing ...
    again = run_cells(cells, study, workers=1)  # ... the next sweep rebuilds it
    assert again.ran == 0 and again.database_error is None and (study / "study.duckdb").exists()


@pytest.mark.parametrize(
    "grid, cc, message",
    [
        (['flows[0].tcp=[{profile="ns2"}]', 'flows.0.tcp.header_size=["40B"]'], None, "--grid flows.0.tcp.header_size: overlaps the grid key flows[0].tcp"),
        (["run.seed=[5, 6]"], None, "--grid run.seed: sets run.seed, which the seeds set"),
        (['run=[{duration="1s"}]'], None, "--grid run: sets run.seed, which the seeds set"),
        (['flows[0].cc=["bic"]'], "reno", "--grid flows[0].cc: sets the flows' algorithm or its parameters"),
        (["flows[0].params.beta=[0.5]"], "reno", "--grid flows[0].params.beta: sets the flows' algorithm or its parameters"),
    ],
)
def test_axes_that_would_overwrite_each_other_are_refused(tmp_path, grid, cc, message):
    """Every cell's labels must say what it ran: an axis another axis (or
    the seeds, or --cc) would overwrite is refused by name."""
    base, file_grid = load_sweep(grid_file(tmp_path, "1s"))
    file_grid.axes, file_grid.ccs = {}, None
    g = grid_from_args(grid, cc, None, 5, file_grid)
    with pytest.raises(ScenarioError, match=message.replace("[", r"\[").replace("]", r"\]").replace(".", r"\.")):
        expand(base, g)
    # Without the conflicting partner the same axis is accepted.
    if len(grid) == 2:
        expand(base, grid_from_args(grid[:1], cc, None, 5, Grid()))


class _FakeFuture:
    def __init__(self, key, status, value=None, exc=None):
        self.key, self.status, self._value, self._exc = key, status, value, exc
        self.released = False

    def result(self):
        return self._value

    def exception(self):
        return self._exc

    def release(self):
        self.released = True


class _FakeClient:
    """A Dask client whose futures end as scripted, by the number of times
    a task was submitted: 'lost' (neither finished nor erred: its result
    died with a worker), 'finished' or 'error'."""

    def __init__(self, script):
        self.script = script  # task key -> list of outcomes, one per submission
        self.submitted = []
        self.cancelled = []

    def submit(self, fn, *args, key, **kw):
        base = key.split("-again")[0]
        outcome = self.script[base][sum(1 for k in self.submitted if k.split("-again")[0] == base)]
        self.submitted.append(key)
        if outcome == "finished":
            return _FakeFuture(key, "finished", value=fn(*args))
        if outcome == "error":
            return _FakeFuture(key, "error", exc=ValueError(f"{base} failed"))
        if outcome == "killed":  # its worker died running it (allowed-failures 0)
            from types import SimpleNamespace

            from distributed import KilledWorker

            return _FakeFuture(key, "error", exc=KilledWorker(key, SimpleNamespace(address="tcp://127.0.0.1:1"), 0))
        return _FakeFuture(key, "lost")

    def nthreads(self):
        return {"tcp://127.0.0.1:1": 4}

    def processing(self):
        return {}

    def cancel(self, futures, force=False):
        self.cancelled += [f.key for f in futures]


def _fake_executor(monkeypatch, script):
    import dask.distributed

    from longfat.executor import Executor

    class AsCompleted:  # every future is complete as soon as it is submitted
        def __init__(self, fs=()):
            self.ready = list(fs)

        def add(self, f):
            self.ready.append(f)

        def next_batch(self, block=True):
            batch, self.ready = self.ready, []
            return batch

        def clear(self):
            self.ready = []

    monkeypatch.setattr(dask.distributed, "as_completed", AsCompleted)
    ex = Executor(scheduler="tcp://fake:8786")
    ex.client = _FakeClient(script)
    return ex


def test_a_result_lost_with_a_worker_runs_again_under_a_new_key(monkeypatch):
    """The executor's lost-result path, deterministically: a task whose
    future ends neither finished nor erred is submitted again under a new
    key and yielded once under its own key; after MAX_RESUBMITS losses it
    fails saying so; a real error is not retried."""
    from longfat.executor import MAX_RESUBMITS, Task

    square = lambda x: x * x  # noqa: E731
    script = {
        "a": ["lost", "finished"],
        "b": ["finished"],
        "c": ["lost"] * (MAX_RESUBMITS + 1),
        "d": ["error"],
    }
    ex = _fake_executor(monkeypatch, script)
    tasks = [Task(k, square, (i + 2,), 1.0) for i, k in enumerate("abcd")]
    out = {k: (ok, v) for k, ok, v in ex.run(tasks, poll_s=0.0)}
    assert out["a"] == (True, 4) and out["b"] == (True, 9)
    assert out["c"][0] is False and f"its result was lost {MAX_RESUBMITS + 1} times" in out["c"][1]
    assert out["d"] == (False, "ValueError: d failed")
    subs = ex.client.submitted
    assert subs.count("a") == 1 and "a-again1" in subs and "a-again2" not in subs
    assert [k for k in subs if k.startswith("c")] == ["c"] + [f"c-again{n}" for n in range(1, MAX_RESUBMITS + 1)]
    assert [k for k in subs if k.startswith("d")] == ["d"]  # an error is the task's own: not run again
    # With stop_on_failure the lost task's error is raised, and the rest cancelled.
    ex = _fake_executor(monkeypatch, {"c": ["lost"] * (MAX_RESUBMITS + 1), "b": ["finished"]})
    with pytest.raises(RuntimeError, match="its result was lost"):
        list(ex.run([Task("c", square, (1,), 2.0), Task("b", square, (3,), 1.0)], stop_on_failure=True, poll_s=0.0))


# ---- a study under attack: read-only SQL, exact file lists, builds, damaged files -----------


def _small_study(tmp_path, ccs=("reno", "cubic", "htcp"), name="study") -> tuple[Path, list]:
    """A study of one 1 s run per algorithm, made in this process (the runs
    of ``sweep grid.toml --cc ... --seeds 1 --grid 'network.bottleneck.rate=["20Mbps"]'``)."""
    base, grid = load_sweep(grid_file(tmp_path, "1s"))
    grid.ccs, grid.seeds, grid.axes = list(ccs), [5], {}
    cells = expand(base, grid)
    study = tmp_path / name
    assert run_cells(cells, study, workers=1).ran == len(cells)
    return study, cells


def _snapshot(directory: Path) -> dict:
    return {str(p.relative_to(directory)): (p.read_bytes() if p.is_file() else None) for p in sorted(directory.rglob("*"))}


@pytest.mark.parametrize(
    "sql",
    [
        "COPY (SELECT * FROM runs) TO '{study}/runs' (FORMAT parquet, PARTITION_BY cc, OVERWRITE)",
        "COPY (SELECT * FROM runs) TO '{study}/runs/export.parquet'",
        "COPY (SELECT * FROM runs LIMIT 0) TO '{run_file}' (FORMAT parquet, USE_TMP_FILE false)",
        "COPY (SELECT 1 AS x) TO 'here.csv'",
        "EXPORT DATABASE '{study}/export'",
        "ATTACH '{study}/other.duckdb' AS o",
        "INSTALL httpfs",
        "LOAD httpfs",
        "SELECT * FROM read_csv('/etc/passwd')",
        "SELECT * FROM read_parquet('{run_file}')",
        "SELECT * FROM glob('{study}/*')",
        "SET enable_external_access = true",
        "RESET lock_configuration",
        "SET temp_directory = '{study}'",
        "PRAGMA enable_profiling = 'json'",
    ],
)
def test_query_cannot_write_or_read_anything_but_the_views(tmp_path, sql):
    """Issue 27 item 2: the SQL of longfat query runs on a connection that
    refuses every write and every other file, whatever it says, with one
    line; the study, the working directory and the views are untouched."""
    study, cells = _small_study(tmp_path, ccs=("reno",))
    before = _snapshot(study)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    r = run_cli("query", str(study), sql.format(study=study, run_file=study / "runs" / f"{cells[0].run_id}.parquet"), "--format", "csv", cwd=cwd)
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr.startswith("error: SQL:") and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr, r.stderr
    after = _snapshot(study)
    assert after == before and list(cwd.iterdir()) == []  # study.duckdb included: query writes nothing
    assert store.query(study, "SELECT count(*) FROM runs")[1] == [(1,)]


def test_the_views_read_only_files_named_like_a_run(tmp_path):
    """Issue 27 item 2: a Parquet file put into runs/ or flows/ under another
    name (an export, a copy) is not a run: it is not counted twice."""
    study, cells = _small_study(tmp_path, ccs=("reno",))
    rid = cells[0].run_id
    for t in ("runs", "flows"):
        (study / t / "export.parquet").write_bytes((study / t / f"{rid}.parquet").read_bytes())
        (study / t / f"{rid}.parquet.bak.parquet").write_bytes((study / t / f"{rid}.parquet").read_bytes())
    n_flows = store.read_series(study, "flows", rid).num_rows
    assert store.query(study, "SELECT count(*) FROM runs")[1] == [(1,)]
    assert store.query(study, "SELECT count(*) FROM flows")[1] == [(n_flows,)]
    store.refresh_database(study)
    import duckdb

    con = duckdb.connect(str(study / "study.duckdb"), read_only=True)
    assert con.execute("SELECT count(*) FROM runs").fetchall() == [(1,)]
    assert con.execute("SELECT count(*) FROM flows").fetchall() == [(n_flows,)]
    con.close()


def test_glob_characters_in_a_study_path_read_that_study_only(tmp_path):
    """Issue 27 item 3: the views list the study's files, so a study named
    grid[1], study* or exp[2024] reads itself, not grid1 or a union of
    studies; study.duckdb the same."""
    import duckdb

    made, cells = _small_study(tmp_path, ccs=("reno", "cubic"), name="made")
    by_cc = {c.labels["cc"]: c.run_id for c in cells}

    def study_of(name, cc):  # a copy of the study holding only cc's run
        d = tmp_path / name
        shutil.copytree(made, d)
        for other, rid in by_cc.items():
            if other != cc:
                for t in ("runs", "flows", "links"):
                    (d / t / f"{rid}.parquet").unlink()
        (d / "study.duckdb").unlink(missing_ok=True)
        return d

    study_of("grid1", "reno")
    study_of("study-x", "reno")
    for name in ("grid[1]", "study*", "exp[2024]", "q?"):
        d = study_of(name, "cubic")
        r = run_cli("query", str(d), "SELECT cc, count(*) FROM runs GROUP BY cc", "--format", "csv")
        assert r.returncode == 0 and r.stdout.splitlines() == ["cc,count_star()", "cubic,1"], (name, r.stdout, r.stderr)
        if "?" in name:  # DuckDB cannot open a database file there (it puts ".wal" before the "?")
            with pytest.raises(ValueError, match="cannot write a database"):
                store.refresh_database(d)
            assert not (d / "study.duckdb").exists()
            continue
        store.refresh_database(d)  # as the sweep that made it does
        con = duckdb.connect(str(d / "study.duckdb"), read_only=True)
        assert con.execute("SELECT cc, count(*) FROM runs GROUP BY cc").fetchall() == [("cubic", 1)], name
        assert con.execute("SELECT DISTINCT run_id FROM flows").fetchall() == [(by_cc["cubic"],)], name
        con.close()


def _as_other_build(study: Path, rid: str, build: str = "0.0.9+0123456789ab") -> str:
    """Copies a stored run as if another longfat build had made it (its
    files under a new key, its build column changed); returns the key."""
    import hashlib

    new = hashlib.sha256((rid + build).encode()).hexdigest()[:20]
    for t in ("runs", "flows", "links"):
        table = pq.read_table(study / t / f"{rid}.parquet")
        table = table.set_column(0, "run_id", __import__("pyarrow").array([new] * table.num_rows))
        if t == "runs":
            table = table.set_column(table.schema.get_field_index("build"), "build", __import__("pyarrow").array([build]))
        pq.write_table(table, study / t / f"{new}.parquet")
    return new


def test_a_study_holding_two_builds_shows_this_builds_runs_and_says_so(tmp_path):
    """Issue 27 item 4: runs of another build (a sweep resumed after a
    rebuild) are left out of runs/flows/... by default and named in one
    line by query and sweep; --all-builds and all_runs include them."""
    import duckdb

    study, cells = _small_study(tmp_path, ccs=("reno", "cubic"))
    others = [_as_other_build(study, c.run_id) for c in cells]
    mine_flows = sum(store.read_series(study, "flows", c.run_id).num_rows for c in cells)
    r = run_cli("query", str(study), "SELECT count(*) FROM runs", "--format", "csv")
    assert r.returncode == 0 and r.stdout.splitlines()[1] == "2", r.stdout + r.stderr
    assert "2 runs of other longfat builds (2 of 0.0.9+0123456789ab)" in r.stderr and "--all-builds" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    r = run_cli("query", str(study), "SELECT count(*) FROM runs", "--format", "csv", "--all-builds")
    assert r.returncode == 0 and r.stdout.splitlines()[1] == "4" and r.stderr == ""
    assert store.query(study, "SELECT count(*) FROM flows")[1] == [(mine_flows,)]
    assert store.query(study, "SELECT count(*) FROM flows", all_builds=True)[1] == [(2 * mine_flows,)]
    assert store.query(study, "SELECT count(*) FROM all_runs WHERE run_id IN ?".replace("?", str(tuple(others))))[1] == [(2,)]
    store.refresh_database(study)  # as the next sweep does
    con = duckdb.connect(str(study / "study.duckdb"), read_only=True)
    assert con.execute("SELECT count(*), count(DISTINCT build) FROM runs").fetchall() == [(2, 1)]
    assert con.execute("SELECT count(*) FROM all_runs").fetchall() == [(4,)]
    assert con.execute("SELECT count(*) FROM flows").fetchall() == [(mine_flows,)]
    con.close()
    # The sweep over the study says so next to the query it prints.
    r = run_cli("sweep", str(grid_file(tmp_path, "1s")), "--cc", "reno,cubic", "--seeds", "1", "--grid", 'network.bottleneck.rate=["20Mbps"]', "--out", str(study), "--workers", "1", "-q")
    assert r.returncode == 0, r.stderr
    assert "0 ran now, 2 were already in the study" in r.stdout
    assert "note: the study also holds 2 runs of other longfat builds" in r.stderr


def test_damaged_run_files_are_named_left_out_and_redone(tmp_path):
    """Issue 27 item 5: a truncated runs file, a zero-byte flows file and a
    missing links file: query names them in one line and answers over the
    whole run; the next sweep redoes the damaged runs (saying so) and the
    study is whole again."""
    study, cells = _small_study(tmp_path)
    a, b, c = (x.run_id for x in cells)
    damaged = [study / "runs" / f"{a}.parquet", study / "flows" / f"{b}.parquet", study / "links" / f"{b}.parquet"]
    damaged[0].write_bytes(damaged[0].read_bytes()[:-30])
    damaged[1].write_bytes(b"")
    damaged[2].unlink()
    r = run_cli("query", str(study), "SELECT run_id FROM runs", "--format", "csv")
    assert r.returncode == 0 and r.stdout.splitlines() == ["run_id", c], r.stdout + r.stderr
    warning = r.stderr.strip()
    assert len(warning.splitlines()) == 1 and warning.startswith("warning: 3 missing or unreadable run file(s)")
    assert all(str(f) in warning for f in damaged)
    assert store.done_runs(study) == {c}
    assert store.query(study, "SELECT DISTINCT run_id FROM flows")[1] == [(c,)]
    # A sweep on the study redoes them, saying so in one line.
    r = run_cli("sweep", str(grid_file(tmp_path, "1s")), "--cc", "reno,cubic,htcp", "--seeds", "1", "--grid", 'network.bottleneck.rate=["20Mbps"]', "--out", str(study), "--workers", "1", "-q")
    assert r.returncode == 0, r.stderr
    assert "2 ran now, 1 were already in the study" in r.stdout
    assert "warning: 3 missing or unreadable run file(s), so their runs were run again" in r.stderr
    assert store.done_runs(study) == {a, b, c}
    assert store.query(study, "SELECT count(*) FROM runs")[1] == [(3,)]
    for x in cells:  # the suite reads runs back like this
        assert store.load_result(study, x.run_id).flows.num_rows > 0


def test_run_cells_redoes_a_run_with_a_damaged_file(tmp_path):
    """Issue 27 item 5, the suite's path (run_cells, then load_result): a
    stored run whose flows file is truncated is not done; it runs again."""
    study, cells = _small_study(tmp_path, ccs=("reno",))
    f = study / "flows" / f"{cells[0].run_id}.parquet"
    f.write_bytes(f.read_bytes()[: len(f.read_bytes()) // 2])
    out = run_cells(cells, study, workers=1)
    assert (out.ran, out.skipped) == (1, 0) and [p for p, _ in out.redone] == [f]
    assert store.load_result(study, cells[0].run_id).flows.equals(longfat.run(cells[0].scenario).flows)


def test_query_streams_csv_and_json_and_caps_the_table(tmp_path):
    """Issue 27 item 6: csv and json are written batch by batch (a 300 MB
    answer, or 600,000 rows, in about the memory of a one-row answer), json
    as one strict JSON array (no Infinity or NaN); the table shows the first 1,000 rows and says how many
    there are."""
    study, _ = _small_study(tmp_path, ccs=("reno",))
    r = run_cli("query", str(study), "SELECT range AS i FROM range(1500)")
    assert r.returncode == 0
    assert "1500 rows; the first 1,000 shown" in r.stdout and " 999 " in r.stdout and " 1000 " not in r.stdout
    r = run_cli("query", str(study), "SELECT range AS i, 'x' AS s FROM range(25000)", "--format", "json")
    assert r.returncode == 0 and json.loads(r.stdout) == [{"i": i, "s": "x"} for i in range(25000)]
    r = run_cli("query", str(study), "SELECT 'inf'::DOUBLE AS a, '-inf'::FLOAT AS b, 'nan'::DOUBLE AS c, 1.5::DOUBLE AS d", "--format", "json")
    assert json.loads(r.stdout, parse_constant=lambda c: pytest.fail(f"{c} is not JSON")) == [{"a": None, "b": None, "c": None, "d": 1.5}]
    r = run_cli("query", str(study), "SELECT range AS i FROM range(25000)", "--format", "csv")
    assert r.returncode == 0 and r.stdout.splitlines() == ["i"] + [str(i) for i in range(25000)]
    # Peak memory of a 300 MB answer: about that of a one-row one.
    def peak(sql, fmt):  # MB, measured by a fresh parent that runs only this query
        measure = "import resource, subprocess, sys; subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
        p = subprocess.run([sys.executable, "-c", measure, *longfat_cli(), "query", str(study), sql, "--format", fmt], capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr
        return int(p.stdout) / 1024
    floor = peak("SELECT 1", "json")
    json_used = peak("SELECT range AS i, repeat('x', 3000) AS s FROM range(100000)", "json")  # 300 MB
    csv_used = peak("SELECT range AS i, range * 0.5 AS x, 'abcdefgh' AS s FROM range(600000)", "csv")  # 600,000 rows
    assert json_used < floor + 100 and csv_used < floor + 100, (floor, json_used, csv_used)


def test_empty_sql_a_linked_study_json_and_escape_sequences(tmp_path):
    """Issue 27 item 13: empty SQL is one line; a study.json that is a link
    is refused naming it (and kept); study data with terminal escape
    sequences is escaped in the table (and in CSV to a terminal), exact in
    CSV to a pipe or file, JSON-escaped in JSON."""
    import pyarrow as pa

    study, cells = _small_study(tmp_path, ccs=("reno",))
    for sql, message in (("", "SQL: empty"), ("  -- nothing\n;", "SQL: no statement")):
        r = run_cli("query", str(study), sql)
        assert r.returncode == 2 and r.stderr.startswith("error: " + message) and len(r.stderr.strip().splitlines()) == 1, r.stderr
    # Escape sequences in the study's data.
    f = study / "runs" / f"{cells[0].run_id}.parquet"
    table = pq.read_table(f)
    evil = "\x1b]0;pwned\x07\x1b[31mred\x1b[0m[bold]x[/bold]"
    pq.write_table(table.set_column(table.schema.get_field_index("cc"), "cc", pa.array([evil])), f)
    r = run_cli("query", str(study), "SELECT cc FROM runs")
    assert r.returncode == 0 and "\x1b" not in r.stdout and "\x07" not in r.stdout
    assert "\\x1b]0;pwned\\x07\\x1b[31mred\\x1b[0m[bold]x[/bold]" in r.stdout  # shown as text, markup too
    r = run_cli("query", str(study), "SELECT cc FROM runs", "--format", "csv")
    assert r.stdout.splitlines()[1] == evil  # exact for a program reading the CSV
    r = run_cli("query", str(study), "SELECT cc FROM runs", "--format", "json")
    assert "\x1b" not in r.stdout and json.loads(r.stdout) == [{"cc": evil}]
    import io

    out = io.StringIO()
    store.write_csv(["cc\x1b"], [pa.record_batch({"cc": [evil]})], out, escape=True)  # stdout a terminal
    assert "\x1b" not in out.getvalue() and out.getvalue().splitlines()[1] == store.printable(evil)
    # study.json as a link: refused in one line, the link and its target kept.
    target = tmp_path / "elsewhere.txt"
    target.write_text("not longfat's")
    (study / "study.json").unlink()
    (study / "study.json").symlink_to(target)
    r = run_cli("sweep", str(grid_file(tmp_path, "1s")), "--cc", "cubic", "--seeds", "1", "--grid", 'network.bottleneck.rate=["20Mbps"]', "--out", str(study), "--workers", "1", "-q")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "study.json is a symbolic link" in r.stderr, r.stderr
    assert (study / "study.json").is_symlink() and target.read_text() == "not longfat's"
    # A study.json that is not longfat's JSON: refused naming it, kept.
    (study / "study.json").unlink()
    (study / "study.json").write_text("[1, 2]")
    r = run_cli("sweep", str(grid_file(tmp_path, "1s")), "--cc", "cubic", "--seeds", "1", "--grid", 'network.bottleneck.rate=["20Mbps"]', "--out", str(study), "--workers", "1", "-q")
    assert r.returncode == 2 and "study.json is not the study description longfat writes" in r.stderr, r.stderr
    assert (study / "study.json").read_text() == "[1, 2]"


def test_a_task_whose_worker_died_runs_again_and_a_killer_fails_named(monkeypatch):
    """The executor's worker-death path, deterministically: a task whose
    worker died running it (KilledWorker) runs again under a new key;
    one whose workers died MAX_WORKER_DEATHS times fails, and with
    stop_on_failure the error names it."""
    from longfat.executor import MAX_WORKER_DEATHS, Task

    square = lambda x: x * x  # noqa: E731
    script = {"a": ["killed", "finished"], "k": ["killed"] * MAX_WORKER_DEATHS, "b": ["finished"]}
    ex = _fake_executor(monkeypatch, script)
    out = {k: (ok, v) for k, ok, v in ex.run([Task(k, square, (3,), 1.0) for k in "akb"], poll_s=0.0)}
    assert out["a"] == (True, 9) and out["b"] == (True, 9)
    assert out["k"] == (False, f"WorkersDied: its worker died each of the {MAX_WORKER_DEATHS} times it ran (the last one tcp://127.0.0.1:1): the run itself is the likely cause (out of memory? a crash?)")
    assert ex.client.submitted == ["a", "k", "b", "a-again1"] + [f"k-again{n}" for n in range(1, MAX_WORKER_DEATHS)]
    ex = _fake_executor(monkeypatch, {"k": ["killed"] * MAX_WORKER_DEATHS, "b": ["finished"]})
    with pytest.raises(RuntimeError, match=f"^reproduce point x=1: its worker died each of the {MAX_WORKER_DEATHS} times it ran"):
        list(ex.run([Task("k", square, (1,), 2.0, name="reproduce point x=1"), Task("b", square, (3,), 1.0)], stop_on_failure=True, poll_s=0.0))


def test_a_run_that_kills_its_workers_fails_alone(tmp_path):
    """A run that kills the worker process running it (out of memory, a
    crash in the engine), beside 16 innocent runs (each records its
    worker's pid), on a local cluster of 2 workers. Dask charges a worker's
    death to every task the worker holds, so innocent runs queued on the
    killer's worker failed with it (KilledWorker). Now every innocent run
    succeeds, and the killer fails after MAX_WORKER_DEATHS attempts, saying
    so."""
    import hashlib

    from longfat.executor import MAX_WORKER_DEATHS, Executor, Task

    def innocent():
        time.sleep(0.2)
        return os.getpid()

    def killer():
        os._exit(1)

    keys = [hashlib.sha256(str(i).encode()).hexdigest()[:20] for i in range(16)]  # like run ids
    tasks = [Task("killer", killer, (), 100.0)] + [Task(k, innocent, (), 1.0) for k in keys]
    with Executor(workers=2) as ex:
        out = {key: (ok, value) for key, ok, value in ex.run(tasks)}
    assert {k: out[k] for k in keys if not out[k][0]} == {}
    assert os.getpid() not in {out[k][1] for k in keys}  # they ran on the workers
    ok, text = out["killer"]
    assert not ok and f"its worker died each of the {MAX_WORKER_DEATHS} times it ran" in text, text
    assert "the run itself is the likely cause" in text


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
def test_query_into_a_closed_pipe_ends_quietly(tmp_path, fmt):
    """`longfat query ... | head` printed "error: [Errno 32] Broken pipe"
    (exit status 2); it ends as a tool killed by SIGPIPE does: nothing on
    stderr, status 128 + 13."""
    import signal

    study, _ = _small_study(tmp_path, ccs=("reno",))
    p = subprocess.Popen([*longfat_cli(), "query", str(study), "SELECT * FROM flows, range(50)", "--format", fmt], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.readline()
    p.stdout.close()  # the reader goes away after one line
    err = p.stderr.read().decode()
    assert p.wait(timeout=60) == 128 + signal.SIGPIPE and err == "", err
