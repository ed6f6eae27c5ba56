"""longfat installed as a user installs it: a wheel built from this clone,
installed into a fresh virtual environment, run from a directory outside
the clone. bench, run and reproduce must find the scenario files shipped
inside the package, not beside a source tree.

Slow: building the wheel reuses the clone's compiled crates (cargo's
target directory, CARGO_TARGET_DIR if set, as for the clone's own builds)
and installing it fetches numpy, pyarrow, matplotlib and rich, as for a
user; about a minute with a warm target directory and pip cache."""

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT

SHIPPED = ROOT / "python" / "longfat" / "scenarios"


def _env() -> dict:
    """The environment without anything pointing at the clone's sources."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    return {**env, "COLUMNS": "200", "PIP_NO_INPUT": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}


def _run(cmd: list, cwd: Path, timeout: int) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=_env())


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict:
    """Builds the wheel (release, as the package is configured), installs it
    into a new venv; returns the wheel, the venv's bin directory and an
    empty working directory outside the clone. All of it inside a git
    repository of the user's own (as a project's .venv often is)."""
    base = tmp_path_factory.mktemp("wheel")
    for git in (["init", "-q"], ["-c", "user.name=u", "-c", "user.email=u@example.org", "commit", "-q", "--allow-empty", "-m", "the user's project"]):
        assert _run(["git", "-C", base, *git], cwd=base, timeout=60).returncode == 0
    wheels = base / "wheels"
    r = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", wheels, ROOT], cwd=ROOT, timeout=1800)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    [wheel] = wheels.glob("longfat-*.whl")
    venv = base / "venv"
    r = _run([sys.executable, "-m", "venv", venv], cwd=base, timeout=300)
    assert r.returncode == 0, r.stderr
    r = _run([venv / "bin" / "python", "-m", "pip", "install", "-q", wheel], cwd=base, timeout=1200)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    work = base / "work"
    work.mkdir()
    return {"wheel": wheel, "bin": venv / "bin", "venv": venv, "work": work}


def test_wheel_ships_every_scenario_file(installed):
    names = set(zipfile.ZipFile(installed["wheel"]).namelist())
    expected = {f"longfat/scenarios/{p.relative_to(SHIPPED).as_posix()}" for p in SHIPPED.rglob("*.toml")}
    assert len(expected) >= 40 and "longfat/scenarios/canonical.toml" in expected
    assert expected <= names, sorted(expected - names)
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]


def test_installed_package_is_the_wheels_not_the_clones(installed):
    r = _run([installed["bin"] / "python", "-c", "import longfat, longfat.scenario as s; print(longfat.__file__); print(s.shipped_dir())"], cwd=installed["work"], timeout=60)
    assert r.returncode == 0, r.stderr
    module, shipped = r.stdout.splitlines()
    for p in (module, shipped):
        assert Path(p).is_relative_to(installed["venv"]), r.stdout
    assert (Path(shipped) / "ltcp" / "fig5.toml").is_file()
    r = _run([installed["bin"] / "longfat", "scenarios"], cwd=installed["work"], timeout=60)
    assert r.returncode == 0 and shipped in r.stdout and "ltcp/fig5" in r.stdout, r.stdout + r.stderr


def test_installed_conformance_runs_the_shipped_suite(installed):
    names = set(zipfile.ZipFile(installed["wheel"]).namelist())
    suite = ROOT / "python" / "longfat" / "packetdrill"
    expected = {f"longfat/packetdrill/{p.relative_to(suite).as_posix()}" for p in suite.rglob("*.pkt")}
    assert len(expected) >= 60 and expected <= names, sorted(expected - names)
    from longfat import conformance

    # The same counts as the clone's suite gives, from the wheel's copy.
    want = conformance.summary([conformance.run_script(p) for p in conformance.collect([str(suite)])])
    r = _run([installed["bin"] / "longfat", "conformance"], cwd=installed["work"], timeout=300)
    last = r.stdout.strip().splitlines()[-1]
    assert last == f"{want} (profile linux)", r.stdout[-2000:] + r.stderr
    # The scripts run are the wheel's own copy.
    r = _run([installed["bin"] / "python", "-c", "from longfat import conformance; print(conformance.shipped_dir())"], cwd=installed["work"], timeout=60)
    assert Path(r.stdout.strip()).is_relative_to(installed["venv"]), r.stdout + r.stderr


def test_installed_bench_and_run_work_outside_the_clone(installed):
    work = installed["work"]
    r = _run([installed["bin"] / "longfat", "bench", "--repeat", "1", "--set", 'run.duration="2s"'], cwd=work, timeout=300)
    assert r.returncode == 0, r.stderr
    for label in ("simulated time", "2 s", "events per wall-second"):
        assert label in r.stdout, r.stdout
    r = _run([installed["bin"] / "longfat", "run", "canonical", "--set", 'run.duration="2s"', "-q", "--no-plot"], cwd=work, timeout=300)
    assert r.returncode == 0, r.stderr
    summary = json.loads((work / "results" / "canonical" / "summary.json").read_text())
    assert summary["scenario"] == "canonical" and summary["end_s"] == 2


def test_installed_reproduce_finds_the_papers_scenarios(installed, tmp_path):
    out = tmp_path / "rep"
    r = _run([installed["bin"] / "longfat", "reproduce", "ltcp", "--quick", "--jobs", "1", "--out", out, "-q"], cwd=installed["work"], timeout=900)
    assert r.returncode == 0, r.stderr
    d = out / "ltcp"
    assert sorted(p.name for p in out.iterdir()) == ["ltcp"]
    doc = json.loads((d / "results.json").read_text())
    assert doc["meta"]["mode"] == "quick" and doc["meta"]["runs"] > 0
    # Not the commit of the repository the venv sits in: an installed package has none.
    assert doc["meta"]["commit"] == "unknown"
    md = (d / "report.md").read_text()
    # Every scenario file of the paper ran, named as in the clone.
    for f in sorted((SHIPPED / "ltcp").glob("*.toml")):
        assert f"Scenario `scenarios/ltcp/{f.name}`" in md, f.name
    assert (d / "report.html").read_text().count("data:image/png;base64,") == sum(len(s["figures"]) for s in doc["sections"]) > 0


def test_installed_sweep_query_and_suite_work_outside_the_clone(installed, tmp_path):
    """The Dask executor and the store from the wheel's environment: a
    sweep of a shipped scenario on 2 local workers, SQL over its study, and
    the quick suite's card."""
    work, longfat = installed["work"], installed["bin"] / "longfat"
    study = tmp_path / "study"
    r = _run([longfat, "sweep", "dumbbell_reno", "--grid", 'network.bottleneck.rate=["10Mbps","20Mbps"]', "--cc", "reno,cubic", "--set", 'run.duration="20s"', "--set", 'run.measure_from="1s"', "--workers", "2", "--out", study, "-q"], cwd=work, timeout=600)
    assert r.returncode == 0, r.stderr
    assert "4 runs in the grid: 4 ran now" in " ".join(r.stdout.split()), r.stdout
    r = _run([longfat, "query", study, "SELECT cc, count(*) FROM runs GROUP BY cc ORDER BY cc", "--format", "csv"], cwd=work, timeout=120)
    assert r.returncode == 0 and r.stdout.splitlines() == ["cc,count_star()", "cubic,2", "reno,2"], r.stdout + r.stderr
    r = _run([longfat, "suite", "--cc", "reno", "--quick", "--seeds", "1", "--workers", "1", "--out", tmp_path / "card", "--study", tmp_path / "suite-study", "-q"], cwd=work, timeout=600)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "card" / "card.html").stat().st_size > 10_000


def test_installed_base_shows_results_and_names_the_notebook_extra(installed, tmp_path):
    """The base install (no extras) has no pandas; a run's and a study's
    reprs work without it, and the DataFrames name the extra."""
    code = f"""
import importlib.util, longfat
from longfat.sweep import Grid, expand, run_cells
assert importlib.util.find_spec("pandas") is None, "the base install pulled pandas in"
spec = {{"name": "w", "network": {{"topology": "dumbbell", "bottleneck": {{"rate": "10Mbps", "delay": "5ms", "queue": "1bdp"}}}},
        "flows": [{{"cc": "reno"}}], "run": {{"duration": "2s", "seed": 1}}}}
r = longfat.run(spec)
print(repr(r).splitlines()[0])
assert "<img src='data:image/png;base64," in r._repr_html_()
run_cells(expand(spec, Grid(ccs=["reno", "cubic"])), {str(tmp_path / "st")!r}, workers=1)
study = longfat.open_study({str(tmp_path / "st")!r})
print(repr(study).split(": ", 1)[1])
for call in (r.flows_df, lambda: study.runs):
    try:
        call()
    except ImportError as e:
        print(e)
"""
    r = _run([installed["bin"] / "python", "-c", code], cwd=installed["work"], timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "<RunResult w: 2 s simulated (measured from 0 s), seed 1, 1 flow",
        "w; axes cc (2), seed (1); 2 runs done, 0 pending>",
        "RunResult.flows_df() needs pandas, which the base install of longfat leaves out: pip install 'longfat[notebook]'",
        "Study.runs needs pandas, which the base install of longfat leaves out: pip install 'longfat[notebook]'",
    ], r.stdout


def test_installed_gym_extra_and_example_work_outside_the_clone(installed, tmp_path):
    """The gym extra: without it longfat.gym names it; with it (installed
    as a user would, wheel[gym]) the shipped example runs its scripted
    policy and writes its PNG."""
    assert "longfat/examples/gym_aimd.py" in set(zipfile.ZipFile(installed["wheel"]).namelist())
    py, work = installed["bin"] / "python", installed["work"]
    r = _run([py, "-c", "import gymnasium"], cwd=work, timeout=60)
    if r.returncode != 0:
        r = _run([py, "-c", "import longfat.gym"], cwd=work, timeout=60)
        assert r.returncode != 0 and "pip install 'longfat[gym]'" in r.stderr, r.stderr
    r = _run([py, "-m", "pip", "install", "-q", f"{installed['wheel']}[gym]"], cwd=work, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    out = tmp_path / "aimd.png"
    r = _run([py, "-m", "longfat.examples.gym_aimd", out, "--steps", "100"], cwd=work, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("100 steps:") and out.read_bytes()[:4] == b"\x89PNG", r.stdout


def test_installed_package_runs_a_python_controller_outside_the_clone(installed, tmp_path):
    """The wheel's own example (longfat.examples.reno) and a controller in a
    file of the user's, through --register: the Python Reno gives the
    built-in reno's summary; a sweep on 2 local workers (separate processes)
    runs the user's file's class."""
    work, longfat = installed["work"], installed["bin"] / "longfat"
    summaries = {}
    for cc in ("reno", "pyreno"):
        out = tmp_path / cc
        r = _run([longfat, "run", "canonical", "--register", "pyreno=longfat.examples.reno:Reno", "--set", f'flows[0].cc="{cc}"', "--set", 'flows[0].name="f"',
                  "--set", 'run.duration="2s"', "--out", out, "-q", "--no-plot"], cwd=work, timeout=300)
        assert r.returncode == 0, r.stderr
        summaries[cc] = json.loads((out / "summary.json").read_text())
    assert summaries["pyreno"]["flows"][0].pop("algorithm") == "pyreno"
    assert summaries["reno"]["flows"][0].pop("algorithm") == "reno"
    assert summaries["pyreno"] == summaries["reno"]
    ctl = work / "aimd.py"
    ctl.write_text(
        "import longfat\n"
        "class Aimd(longfat.Controller):\n"
        "    def on_ack(self, ack):\n"
        "        self.cwnd += ack.growth_pkts / self.cwnd\n"
        "    def on_congestion_event(self, loss):\n"
        "        self.ssthresh = self.cwnd = max(self.cwnd / 2, 2.0)\n"
        "    def on_rto(self, rto):\n"
        "        self.cwnd = 1.0\n"
    )
    study = tmp_path / "study"
    r = _run([longfat, "sweep", "dumbbell_reno", "--cc", "aimd", "--seeds", "2", "--register", "aimd=aimd.py:Aimd", "--set", 'flows[0].count=1', "--set", 'run.duration="5s"', "--set", 'run.measure_from="1s"',
              "--workers", "2", "--out", study, "-q"], cwd=work, timeout=600)
    assert r.returncode == 0, r.stderr
    assert "2 runs in the grid: 2 ran now" in " ".join(r.stdout.split()), r.stdout


def test_installed_extras_run_a_capture_a_notebook_and_the_gym_outside_the_clone(installed, tmp_path):
    """Issue 32's four pieces from the wheel, as a user gets them: a packet
    capture that tshark reads with the run's retransmission count, the
    quickstart notebook executed by a kernel of the wheel's venv (with
    longfat[notebook]), the Gymnasium environment (longfat[gym]) through
    gymnasium.make, and a Python controller (the test above). Runs last:
    it installs the extras, which the base-install test must not see."""
    import shutil

    py, longfat, work = installed["bin"] / "python", installed["bin"] / "longfat", installed["work"]
    r = _run([py, "-m", "pip", "install", "-q", f"{installed['wheel']}[notebook,gym]"], cwd=work, timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    # A capture of a lossy flow, read back by tshark.
    out = tmp_path / "cap"
    r = _run([longfat, "run", "dumbbell_reno", "--set", "flows[0].count=1", "--set", 'flows[0].name="f"', "--set", "network.bottleneck.loss=0.002",
              "--set", 'run.duration="3s"', "--set", 'run.measure_from="0s"', "--pcap", "f", "--out", out, "-q", "--no-plot"], cwd=work, timeout=300)
    assert r.returncode == 0, r.stderr
    capture = out / "pcap" / "f.pcapng"
    retransmits = json.loads((out / "summary.json").read_text())["flows"][0]["retransmits"]
    assert capture.stat().st_size > 10_000 and retransmits > 0
    if shutil.which("tshark") or os.environ.get("LONGFAT_REQUIRE_PCAP_TOOLS"):
        t = subprocess.run(["tshark", "-r", str(capture), "-Y", "tcp.analysis.retransmission", "-T", "fields", "-e", "frame.number"], capture_output=True, text=True, timeout=120)
        assert t.returncode == 0, t.stderr
        assert len(t.stdout.split()) == retransmits, (t.stdout, retransmits)
    # The quickstart notebook, executed by the wheel's venv's own kernel.
    nb = work / "quickstart.ipynb"
    shutil.copy(ROOT / "docs" / "notebooks" / "quickstart.ipynb", nb)
    code = (
        "import nbformat, longfat; from nbclient import NotebookClient\n"
        f"nb = nbformat.read({str(nb)!r}, as_version=4)\n"
        f"NotebookClient(nb, timeout=300, kernel_name='python3', resources={{'metadata': {{'path': {str(work)!r}}}}}).execute()\n"
        "print(sum(1 for c in nb.cells if c.cell_type == 'code'), longfat.__file__)\n"
    )
    r = _run([py, "-c", code], cwd=work, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    cells, module = r.stdout.split()
    assert int(cells) >= 4 and Path(module).is_relative_to(installed["venv"]), r.stdout
    # The gym environment, built by gymnasium from its registered id.
    code = (
        "import gymnasium, longfat.gym as g, numpy as np\n"
        "env = gymnasium.make(g.ENV_ID, scenario='canonical', step='10ms')\n"
        "obs, _ = env.reset(seed=3)\n"
        "for _ in range(20): obs, r, term, trunc, info = env.step(np.array([500.0], dtype=np.float32))\n"
        "print(obs.shape[0] > 0, np.isfinite(r))\n"
    )
    r = _run([py, "-c", code], cwd=work, timeout=300)
    assert r.returncode == 0 and r.stdout.split() == ["True", "True"], r.stdout + r.stderr
