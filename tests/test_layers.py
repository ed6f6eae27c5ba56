"""The floor plan of the Python package: which module may import which.

Every module of ``python/longfat`` is parsed (ast: imports at the top and
inside functions alike) and its imports of other longfat modules checked:

- each module imports only modules on lower floors (FLOORS, bottom up), so
  the module graph has no cycle;
- no module imports another module's private names (``from x import _y``
  or ``x._y``); a name another module needs is public where it is defined.

FLOORS is the floor plan docs/architecture.md cites. A new module goes on
the lowest floor above everything it imports.
"""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "python" / "longfat"

#: Bottom up: a module imports only modules on floors below its own.
FLOORS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("the engine: the Rust simulator, kernel loader and delay line (bindings)", ("_native",)),
    (
        "inputs and outputs: units, the controllers' catalogue, controllers written in Python, scenario files, result directories, "
        "results as a notebook shows them, the statistics over seeds that verdicts use, what of a paper a report covers, progress bars",
        ("units", "catalogue", "scenario", "outdir", "controller", "display", "progress", "reproduce.stats", "reproduce.coverage"),
    ),
    (
        "one run and its pieces: running and drawing a scenario, kernel programs, packetdrill scripts on one sender, "
        "the testbed's own processes, "
        "the criteria and figures of reports, rank heat maps",
        ("runner", "plot", "heatmap", "kernel", "conformance", "testbed.agent", "testbed.delayline", "reproduce.criteria", "reproduce.figs", "examples", "examples.reno"),
    ),
    (
        "many runs of one scenario, where runs are kept, what a scenario becomes on the testbed, the Gymnasium environment",
        ("compare", "store", "testbed.planning", "gym"),
    ),
    ("where runs are made: the executor (in this process or on Dask), the testbed's namespaces; its samples read", ("executor", "testbed.namespaces", "testbed.samples")),
    ("sweeps, a paper's scenario files expanded into runs, one testbed run", ("sweep", "reproduce.core", "testbed.runs")),
    ("measures over a paper's runs, a standing testbed", ("reproduce.measure", "testbed.standing")),
    (
        "analyses: each paper's report, the suite's card; the testbed's public names; a study as a notebook opens it",
        ("reproduce.report", "reproduce.sequential", "reproduce.ltcp", "reproduce.htcp", "reproduce.ehstcp", "reproduce.tcpgt", "reproduce.plt", "suite", "testbed", "study", "examples.gym_aimd"),
    ),
    ("commands' libraries: longfat reproduce, the testbed against the simulator", ("reproduce", "testbed.agree")),
    ("the command line", ("cli",)),
    ("its entry point (and the package's lazy names, which import nothing until used)", ("_entry", "")),
)


#: Modules whose bytes a committed report pins (reproduce.inputs_digest
#: hashes each paper's analysis module into its report, and the reports are
#: not regenerated for a refactoring): private names they may import until
#: the reports are next regenerated, then removed from here. None now: the
#: paper modules read units through longfat.units since their last
#: regeneration.
FROZEN: dict[str, dict[str, set[str]]] = {}


def module_files() -> dict[str, Path | None]:
    """Module name relative to the package ("" for longfat itself,
    "reproduce.core", ...) -> its file (None for the compiled bindings,
    which import no Python module of longfat)."""
    out: dict[str, Path | None] = {"_native": None}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _absolute(module: str, path: Path, node: ast.ImportFrom) -> str | None:
    """The absolute module name an ImportFrom names, relative to the package
    ("" for longfat), or None for a module outside longfat."""
    if node.level:
        base = module.split(".") if module else []
        if path.name != "__init__.py":
            base = base[:-1]
        base = base[: len(base) - (node.level - 1)]
        return ".".join(base + ([node.module] if node.module else []))
    name = node.module or ""
    if name == "longfat":
        return ""
    if name.startswith("longfat."):
        return name[len("longfat.") :]
    return None


def _join(a: str, b: str) -> str:
    return f"{a}.{b}" if a else b


def imports(module: str, path: Path, modules: dict[str, Path]) -> tuple[set[str], list[str]]:
    """The longfat modules ``module`` imports, and its imports of other
    modules' private names (as "line N: what")."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    edges: set[str] = set()
    private: list[str] = []
    bound: dict[str, str] = {}  # local name -> longfat module it is bound to
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "longfat" or alias.name.startswith("longfat."):
                    target = alias.name[len("longfat.") :] if alias.name != "longfat" else ""
                    edges.add(target)
                    bound[alias.asname or alias.name.split(".")[0]] = target if alias.asname else ""
        elif isinstance(node, ast.ImportFrom):
            target = _absolute(module, path, node)
            if target is None:
                continue
            for alias in node.names:
                sub = _join(target, alias.name)
                if sub in modules:  # a module: `from longfat import outdir`
                    edges.add(sub)
                    bound[alias.asname or alias.name] = sub
                    continue
                edges.add(target)
                frozen = alias.name in FROZEN.get(module, {}).get(target, ())
                if alias.name.startswith("_") and not alias.name.startswith("__") and target != module and not frozen:
                    private.append(f"line {node.lineno}: from longfat{'.' if target else ''}{target} import {alias.name}")
    for node in ast.walk(tree):
        # `outdir._version()`: a private name reached through a module.
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in bound:
            target = bound[node.value.id]
            if node.attr.startswith("_") and not node.attr.startswith("__") and target != module and _join(target, node.attr) not in modules:
                private.append(f"line {node.lineno}: {node.value.id}.{node.attr}")
    edges.discard(module)
    return edges, private


@lru_cache(maxsize=1)
def graph() -> tuple[dict[str, set[str]], dict[str, list[str]]]:
    """Every module's imports of longfat modules, and its imports of other
    modules' private names (parsed once for all the tests here)."""
    modules = module_files()
    edges, private = {}, {}
    for m, path in modules.items():
        edges[m], private[m] = imports(m, path, modules) if path is not None else (set(), [])
    return edges, private


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def floor_of() -> dict[str, int]:
    return {m: i for i, (_, ms) in enumerate(FLOORS) for m in ms}


def test_no_module_imports_in_a_circle():
    edges, _ = graph()
    found = cycles(edges)
    assert not found, "import circles (each group imports itself through the others): " + "; ".join(" <-> ".join(c) for c in found)


def test_no_module_imports_another_modules_private_names():
    _, private = graph()
    bad = [f"longfat.{m or '__init__'}: {p}" for m, ps in private.items() for p in ps]
    assert not bad, "private names imported across modules (make them public where they are defined): " + "; ".join(bad)


def test_every_module_imports_only_modules_on_lower_floors():
    edges, _ = graph()
    floor = floor_of()
    missing = sorted(set(edges) - set(floor))
    assert not missing, f"modules on no floor of FLOORS (tests/test_layers.py): {', '.join(missing)}"
    gone = sorted(set(floor) - set(edges))
    assert not gone, f"FLOORS names modules that do not exist: {', '.join(gone)}"
    upward = [f"longfat.{m} (floor {floor[m]}) imports longfat.{t} (floor {floor[t]})" for m in sorted(edges) for t in sorted(edges[m]) if floor[t] >= floor[m]]
    assert not upward, "imports that do not go down the floors: " + "; ".join(upward)


def test_the_checks_see_imports_inside_functions_and_private_names(tmp_path):
    """The parser finds what the checks above rely on: an import inside a
    function, a relative import, a private name imported or reached
    through a module; and a circle is found."""
    f = tmp_path / "m.py"
    f.write_text(
        "from longfat.runner import run\n"
        "def draw():\n"
        "    from longfat.plot import plot_run, _samples_in\n"
        "    from longfat import outdir\n"
        "    return outdir._normalize\n"
        "from . import store\n"
    )
    modules = {"runner": f, "plot": f, "outdir": f, "store": f, "m": f}
    edges, private = imports("m", f, modules)
    assert edges == {"runner", "plot", "outdir", "store"}
    assert private == ["line 3: from longfat.plot import _samples_in", "line 5: outdir._normalize"]
    assert cycles({"runner": {"plot"}, "plot": {"compare"}, "compare": {"runner"}, "scenario": set()}) == [["compare", "plot", "runner"]]
