"""The namespace testbed: a scenario's dumbbell on real Linux TCP.

``longfat testbed run SCENARIO --out DIR`` builds the scenario's dumbbell
from network namespaces and veth pairs on this machine, runs its flows on
the kernel's TCP (the kernel's own reno and cubic, or longfat's BPF
congestion controls ``longfat_<name>``), samples them, and writes the same
result files as ``longfat run`` (flows.parquet, links.parquet,
summary.json, scenario.json, plot.png) plus the raw measurements in
``testbed/``. docs/testbed.md has the picture, the measured ceiling and
the reasons for every refusal.

::

    sender ns lf<pid>-s<g>            router ns lf<pid>-r                   receiver ns lf<pid>-d
    (one per flow group)
    s<g> 10.77.g.1 ── veth ── r<g> 10.77.g.2          rd 10.78.0.2 ── veth ── d0 10.78.0.1
                                 │   htb+pfifo/bfifo ▲ │ (the bottleneck: rate, queue)
         data ──────────────────►├───────────────────┘ │
                                 │                     │
         ACKs ◄── main table ◄── dlb ◄─ delay line ◄── dla ◄── rule "iif rd" ◄── ACKs
                                 (python -m longfat.testbed.delayline, one FIFO per group's RTT)

With ``delay_direction = "data"`` the rule is ``iif r<g>`` instead and the
data is delayed before the bottleneck. Everything is created under the
prefix ``lf<pid>-`` and removed on success, on error, on SIGINT and on
SIGTERM; namespaces left by a killed run (its pid gone), and the BPF
programs it loaded (recorded as its own, see longfat.kernel), are removed
by the next run or by ``longfat testbed clean``.

The package, by concern: ``planning`` (what a scenario becomes here,
and every refusal), ``namespaces`` (building and removing the dumbbell),
``agent`` and ``delayline`` (the processes it starts), ``samples`` (the
agents' samples as the simulator's tables and summary), ``runs`` (one run,
start to end), ``standing`` (``testbed up`` / ``down``) and ``agree``
(``testbed agree``). Its public names are gathered here.
"""

from longfat.testbed.namespaces import Testbed, check_environment, clean_stale, list_namespaces, stale_message, sweep_stale
from longfat.testbed.planning import NS_PATTERN, Plan, available_congestion_controls, dscp, ensure_congestion_controls, kernel_cc, plan
from longfat.testbed.samples import faithfulness, machine_meta, results
from longfat.testbed.runs import execute, prepare_run, run
from longfat.testbed.standing import UP_DIR, UP_LOCK, UP_PREFIX, down, up

__all__ = [
    "NS_PATTERN", "Plan", "Testbed", "UP_DIR", "UP_LOCK", "UP_PREFIX", "available_congestion_controls", "check_environment",
    "clean_stale", "down", "dscp", "ensure_congestion_controls", "execute", "faithfulness", "kernel_cc", "list_namespaces",
    "machine_meta", "plan", "prepare_run", "results", "run", "stale_message", "sweep_stale", "up",
]
