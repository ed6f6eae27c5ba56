"""longfat: congestion control for long fat networks.

A deterministic packet-level simulator (Rust) with a Python front end::

    import longfat
    result = longfat.run("scenarios/dumbbell_reno.toml", seed=2)
    result.summary["flows"][0]["goodput_bps"]
    result.save("results/demo")
"""

from longfat._native import ScenarioError, algorithms
from longfat.runner import RunResult, run
from longfat.scenario import load_scenario

__all__ = ["ScenarioError", "RunResult", "algorithms", "load_scenario", "run"]
