"""longfat: congestion control for long fat networks.

A deterministic packet-level simulator (Rust) with a Python front end::

    import longfat
    result = longfat.run("scenarios/dumbbell_reno.toml", seed=2)
    result.summary["flows"][0]["goodput_bps"]
    result.save("results/demo")

The names below are loaded on first use, so that ``import longfat._entry``
(the command line's first step) is instant and can take over Ctrl-C before
the heavy imports start.
"""

from importlib import import_module

__all__ = ["ScenarioError", "RunResult", "algorithms", "load_scenario", "open_study", "run", "Controller", "ControllerError", "register", "registered", "unregister"]

_WHERE = {
    "ScenarioError": "longfat._native",
    "Controller": "longfat.controller",
    "ControllerError": "longfat.controller",
    "register": "longfat.controller",
    "registered": "longfat.controller",
    "unregister": "longfat.controller",
    "algorithms": "longfat._native",
    "RunResult": "longfat.runner",
    "run": "longfat.runner",
    "load_scenario": "longfat.scenario",
    "open_study": "longfat.study",
}


def __getattr__(name: str):
    if name in _WHERE:
        value = getattr(import_module(_WHERE[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'longfat' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
