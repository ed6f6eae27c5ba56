"""Executes the example notebooks of docs/notebooks in a fresh kernel and
writes them back with their outputs (what tests/test_notebooks.py checks
the committed outputs against)::

    PYTHONPATH=python .venv/bin/python scripts/execute_notebooks.py

Each notebook runs in a kernel of this Python (``python3``: the venv's
ipykernel), in a new temporary directory that is also its HOME, TMPDIR and
Jupyter/IPython/matplotlib directories, so nothing it writes lands
elsewhere; the directory is removed after.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

NOTEBOOKS = Path(__file__).resolve().parents[1] / "docs" / "notebooks"
#: Seconds one cell may take before the execution fails.
CELL_TIMEOUT_S = 120


def sandbox_env(root: Path) -> dict[str, str]:
    """Environment variables that put everything a kernel writes (its
    connection file, IPython's history, matplotlib's font cache, the
    notebook's own temporary files) under ``root``."""
    dirs = {
        "HOME": "home",
        "TMPDIR": "tmp",
        "IPYTHONDIR": "ipython",
        "JUPYTER_RUNTIME_DIR": "runtime",
        "JUPYTER_DATA_DIR": "data",
        "JUPYTER_CONFIG_DIR": "config",
        "MPLCONFIGDIR": "mpl",
    }
    env = {}
    for var, name in dirs.items():
        (root / name).mkdir(parents=True, exist_ok=True)
        env[var] = str(root / name)
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # no __pycache__ beside longfat's sources
    return env


def execute(nb, cwd: Path) -> None:
    """Runs every cell of ``nb`` (nbformat) in a new ``python3`` kernel
    started in ``cwd``; raises nbclient's CellExecutionError on the first
    cell that raises. The caller sets the environment (``sandbox_env``)."""
    from nbclient import NotebookClient

    client = NotebookClient(nb, timeout=CELL_TIMEOUT_S, kernel_name="python3", resources={"metadata": {"path": str(cwd)}}, record_timing=False)
    client.execute()


def main() -> int:
    import nbformat

    names = sys.argv[1:] or sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))
    saved = dict(os.environ)
    for name in names:
        path = NOTEBOOKS / name
        nb = nbformat.read(path, as_version=4)
        with tempfile.TemporaryDirectory(prefix="longfat-notebook-") as tmp:
            root = Path(tmp)
            os.environ.update(sandbox_env(root))
            try:
                (root / "work").mkdir()
                execute(nb, root / "work")
            finally:
                os.environ.clear()
                os.environ.update(saved)
        nbformat.write(nb, path)
        print(f"{path}: executed, {path.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
