"""The example notebooks of docs/notebooks execute, write only into their
temporary directory, and carry the outputs of an actual execution (issue
32, part 2).

Each notebook runs with nbclient in a fresh kernel of this venv's Python
(its ipykernel), in a temporary working directory that is also the
kernel's HOME, TMPDIR and Jupyter/IPython/matplotlib directories
(scripts/execute_notebooks.py, which also writes the committed outputs).
Runs are deterministic, so the numbers a committed notebook shows must be
the numbers its execution prints now: a change to the simulator or to the
notebook that changes them fails here until the notebook is executed
again (``PYTHONPATH=python .venv/bin/python scripts/execute_notebooks.py``).
"""

from __future__ import annotations

import copy
import importlib.util
import os
import re
import shutil
import sys
from pathlib import Path

import nbformat
import pytest

from conftest import ROOT

NOTEBOOKS = ("quickstart.ipynb", "sweep.ipynb")


def _script():
    spec = importlib.util.spec_from_file_location("execute_notebooks", ROOT / "scripts" / "execute_notebooks.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _tree(root: Path, skip: tuple[str, ...]) -> dict[str, tuple[int, int]]:
    """Every file under ``root`` (but the directories named in ``skip``):
    its size and modification time."""
    out = {}
    for dirpath, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in skip]
        for name in files:
            p = os.path.join(dirpath, name)
            try:
                st = os.lstat(p)
            except FileNotFoundError:
                continue
            out[p] = (st.st_size, st.st_mtime_ns)
    return out


#: Places a kernel or a notebook would write to if it escaped its sandbox.
WATCHED_HOME = (".ipython", ".jupyter", ".local/share/jupyter", ".cache/matplotlib", ".config/matplotlib")


@pytest.fixture(scope="module")
def executed(tmp_path_factory) -> dict:
    """Both notebooks executed once in one sandbox; the clone and the
    user's Jupyter directories listed before and after."""
    import matplotlib

    mod = _script()
    root = tmp_path_factory.mktemp("notebooks")
    env = mod.sandbox_env(root)
    # matplotlib's font list, so that the kernel does not spend seconds
    # rebuilding it in the empty sandbox (read here, copied there).
    for f in Path(matplotlib.get_cachedir()).glob("fontlist-*.json"):
        shutil.copy(f, env["MPLCONFIGDIR"])
    home = Path.home()
    watched = [ROOT] + [home / d for d in WATCHED_HOME]
    before = {str(w): _tree(w, (".git", "target", ".pytest_cache", "__pycache__")) for w in watched}
    saved = dict(os.environ)
    out = {}
    try:
        os.environ.update(env)
        for name in NOTEBOOKS:
            nb = nbformat.read(ROOT / "docs" / "notebooks" / name, as_version=4)
            run = copy.deepcopy(nb)
            # One more cell: which Python and which longfat the kernel ran.
            run.cells.append(nbformat.v4.new_code_cell("import sys, longfat\nprint(sys.executable)\nprint(longfat.__file__)"))
            work = root / "work" / Path(name).stem
            work.mkdir(parents=True)
            mod.execute(run, work)
            out[name] = (nb, run)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    after = {str(w): _tree(w, (".git", "target", ".pytest_cache", "__pycache__")) for w in watched}
    return {"notebooks": out, "root": root, "env": env, "before": before, "after": after}


def test_each_notebook_executes_in_a_kernel_of_this_venv(executed):
    for name, (_, run) in executed["notebooks"].items():
        errors = [o for c in run.cells for o in c.get("outputs", []) if o["output_type"] == "error"]
        assert not errors, (name, errors)
        exe, module = run.cells[-1].outputs[0]["text"].split()
        assert Path(exe).resolve() == Path(sys.executable).resolve(), name
        import longfat

        assert Path(module) == Path(longfat.__file__), name


def test_notebooks_write_only_into_their_temporary_directory(executed):
    for w, files in executed["before"].items():
        changed = {p for p in set(files) | set(executed["after"][w]) if files.get(p) != executed["after"][w].get(p)}
        assert not changed, (w, sorted(changed)[:10])
    # What they wrote is there, under the sandbox's TMPDIR.
    tmp = Path(executed["env"]["TMPDIR"])
    [quick] = tmp.glob("longfat-quickstart-*")
    assert sorted(p.name for p in (quick / "quickstart-run").iterdir()) == [".longfat-result", "flows.parquet", "links.parquet", "scenario.json", "summary.json"]
    [sweep] = tmp.glob("longfat-sweep-*")
    assert len(list((sweep / "study" / "runs").glob("*.parquet"))) == 4
    # Nothing in the working directories.
    assert not [p for p in (executed["root"] / "work").rglob("*") if not p.is_dir()]


_PATH = re.compile(r"[^\s<>'\"]*longfat-(?:quickstart|sweep)-[A-Za-z0-9_]+")
_URI = re.compile(r"data:image/png;base64,[A-Za-z0-9+/=]+")
_NUMBER = re.compile(r"[-+]?(?:\d[\d,]*\.?\d*|\.\d+)(?:e[-+]?\d+)?|inf|nan", re.I)


def shown(cell) -> list[tuple[str, list[str]]]:
    """What a code cell shows, for comparison: per output, its kind and the
    numbers in its text (stream text, text/plain, text/html with images
    left out and the temporary path named as such); images only by kind."""
    out = []
    for o in cell.get("outputs", []):
        if o["output_type"] == "stream":
            out.append((f"stream:{o['name']}", _NUMBER.findall(_PATH.sub("TMP", o["text"]))))
            continue
        data = o.get("data", {})
        for mime in sorted(data):
            text = data[mime] if isinstance(data[mime], str) else "".join(data[mime])
            nums = _NUMBER.findall(_PATH.sub("TMP", _URI.sub("IMG", text))) if mime.startswith("text/") else []
            if mime == "text/plain" and text.startswith("<Figure size"):
                nums = []  # the figure's size in pixels depends on the backend's dpi
            out.append((f"{o['output_type']}:{mime}", nums))
    return out


def test_the_committed_outputs_are_those_of_an_execution(executed):
    for name, (committed, run) in executed["notebooks"].items():
        code = [c for c in committed.cells if c.cell_type == "code"]
        assert code and all(c.get("execution_count") for c in code), f"{name}: not executed (python scripts/execute_notebooks.py)"
        fresh = [c for c in run.cells if c.cell_type == "code"][: len(code)]
        for i, (c, r) in enumerate(zip(code, fresh)):
            assert shown(c) == shown(r), f"{name} cell {i}: the committed outputs differ from an execution's; run scripts/execute_notebooks.py"
        assert sum(len(n) for c in code for _, n in shown(c)) > 50, name  # numbers were compared


def test_the_comparison_sees_a_changed_number(executed):
    committed, _ = executed["notebooks"]["quickstart.ipynb"]
    cell = next(c for c in committed.cells if c.cell_type == "code" and c.outputs)
    tampered = copy.deepcopy(cell)
    data = tampered.outputs[0]["data"]
    m = re.search(r"goodput (\d)", data["text/plain"])  # the first flow's goodput in the run's repr
    digit = str((int(m.group(1)) + 1) % 10)
    data["text/plain"] = data["text/plain"][: m.start(1)] + digit + data["text/plain"][m.end(1) :]
    assert data["text/plain"] != cell.outputs[0]["data"]["text/plain"]
    assert shown(tampered) != shown(cell)


def test_the_notebooks_are_small(executed):
    for name in NOTEBOOKS:
        size = (ROOT / "docs" / "notebooks" / name).stat().st_size
        assert size < 150_000, (name, size)
