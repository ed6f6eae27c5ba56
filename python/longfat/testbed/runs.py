"""One scenario on the testbed: checked, built, run, removed, saved."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

from longfat.outdir import atomic_dir
from longfat.testbed.namespaces import Testbed, check_environment, sweep_stale
from longfat.testbed.planning import DELAY_DIRECTIONS, Plan, field_error, plan
from longfat.testbed.samples import BUSY_LOAD_PER_CPU, faithfulness, machine_meta, results

def execute(
    p: Plan,
    work: Path,
    *,
    delay_direction: str = "ack",
    rps: bool = True,
    progress: Callable[[float, float], None] | None = None,
    log: Callable[[str], None] = lambda s: None,
):
    """Builds the testbed for a plan, runs it (raw measurements into the
    existing directory ``work``), removes it, and returns the RunResult."""
    meta = machine_meta()
    with Testbed(p, work, delay_direction=delay_direction, rps=rps, log=log) as tb:
        tb.build()
        tb.ping_check()
        meta.update(tb.run_flows(progress))
        meta.update(tb.meta)
    meta["unfaithful_because"] = faithfulness(meta)
    meta["faithful"] = not meta["unfaithful_because"]
    for why in meta["unfaithful_because"]:
        log(f"warning: {why}")
    meta["load_average_at_end"] = os.getloadavg()
    busy = max(meta["load_average_at_start"][0], meta["load_average_at_end"][0]) if meta.get("load_average_at_start") else None
    if busy is not None and busy > BUSY_LOAD_PER_CPU * meta["cpus"]:
        meta["busy_warning"] = (f"the machine was busy (load average {busy:.1f} on {meta['cpus']} CPUs): other work delays the hosts' packet "
                                "processing and bunches ACKs; compare such a run with care (a CUBIC run at load 11 lost 9 x more than at load 5)")
        log(f"warning: {meta['busy_warning']}")
    return results(p, work, meta)


def prepare_run(spec: dict, delay_direction: str = "ack") -> Plan:
    """Everything checked before a run builds anything: the options, the
    scenario (refusals), the machine; and namespaces of killed runs swept."""
    if delay_direction not in DELAY_DIRECTIONS:
        raise field_error("--delay-direction", f"{delay_direction!r}; allowed: {', '.join(DELAY_DIRECTIONS)}")
    p = plan(spec)
    check_environment()
    return p


def run(
    spec: dict,
    out: str | Path,
    *,
    force: bool = False,
    plot: bool = True,
    delay_direction: str = "ack",
    rps: bool = True,
    progress: Callable[[float, float], None] | None = None,
    log: Callable[[str], None] = lambda s: None,
):
    """Runs a (validated) scenario on the testbed and saves its results to
    ``out`` atomically. Raises ScenarioError for a scenario or a machine the
    testbed refuses, before anything is built or written."""
    from longfat.outdir import check_output_dir
    from longfat.plot import plot_run

    p = prepare_run(spec, delay_direction)
    check_output_dir(out, force)
    sweep_stale(log)
    with atomic_dir(out, force=force, kind="run") as tmp:
        work = tmp / "testbed"
        work.mkdir()
        result = execute(p, work, delay_direction=delay_direction, rps=rps, progress=progress, log=log)
        result.write_into(tmp)
        if plot:
            plot_run(result, tmp / "plot.png")
    return result


# ---- a standing testbed (up / down) --------------------------------------------------
