"""A standing testbed (``longfat testbed up`` / ``down``): a scenario's
dumbbell left up for one's own traffic."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

from longfat._native import ScenarioError
from longfat import kernel
from longfat.outdir import deferred_signals
from longfat.testbed.namespaces import Testbed, check_environment, list_namespaces, remove_namespace, sweep_stale
from longfat.testbed.planning import Plan
from longfat.testbed.runs import prepare_run

UP_PREFIX = "lfup"
UP_DIR = Path("/run/longfat/testbed-up")
IPERF3_PORT = 5201
#: flock()ed by `testbed up` while it builds and by `testbed down`.
UP_LOCK = Path("/run/longfat/testbed-up.lock")
#: The holder of the standing testbed's BPF programs: it has no process
#: (`up` exits and leaves the testbed standing); `down` lets them go.
STANDING = kernel.Owner("testbed-up", "the standing testbed (`longfat testbed down` removes it)")


@contextmanager
def _standing_lock(command: str) -> Iterator[None]:
    """One `testbed up` or `testbed down` at a time: two at once would build
    the same namespaces (each tearing down the other's) or remove a testbed
    being built. Refused at once, in one line naming the holder: waiting
    would only lead to "already up". The lock goes with the process, even
    a SIGKILLed one."""
    UP_LOCK.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(UP_LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode(errors="replace").strip() or "another longfat command"
            raise ScenarioError(f"testbed {command}: {holder} is using the standing testbed (lock {UP_LOCK}); try again when it has finished", "") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"`longfat testbed {command}` (pid {os.getpid()})".encode(), 0)
        yield
    finally:
        os.close(fd)  # closing drops the lock


def _up_state() -> dict | None:
    try:
        return json.loads((UP_DIR / "state.json").read_text())
    except (OSError, ValueError):
        return None


def _up_namespaces() -> list[str]:
    return [ns for ns in list_namespaces() if ns.startswith(UP_PREFIX + "-")]


def up(spec: dict, *, delay_direction: str = "ack", rps: bool = True, iperf3: bool = True, log: Callable[[str], None] = lambda s: None) -> dict:
    """Builds the scenario's dumbbell and leaves it standing (with its delay
    line and, unless told not to, an iperf3 server on the receiver) for
    the user's own traffic; ``down()`` removes it. Returns what was built:
    namespaces, addresses, the ping check and the commands to use it."""
    p = prepare_run(spec, delay_direction)
    if iperf3 and shutil.which("iperf3") is None:
        raise ScenarioError("testbed up: iperf3 is not installed (Debian: apt-get install iperf3); or pass --no-iperf3", "")
    with _standing_lock("up"):
        if _up_namespaces() or _up_state() is not None:
            raise ScenarioError("testbed up: a standing testbed is already up; remove it first with `longfat testbed down`", "")
        sweep_stale(log)
        return _build_standing(p, spec, delay_direction=delay_direction, rps=rps, iperf3=iperf3, log=log)


def _build_standing(p: Plan, spec: dict, *, delay_direction: str, rps: bool, iperf3: bool, log: Callable[[str], None]) -> dict:
    """The build of :func:`up`, under its lock."""
    UP_DIR.mkdir(parents=True, exist_ok=True)
    tb = Testbed(p, UP_DIR, delay_direction=delay_direction, rps=rps, log=log, prefix=UP_PREFIX, owner=STANDING)
    try:
        tb.build()
        tb.ping_check()
        if iperf3:
            tb.spawn(tb.receiver, ["iperf3", "--server", "--forceflush", "--bind", "10.78.0.1", "--port", str(IPERF3_PORT)], "iperf3-server")
            deadline = time.monotonic() + 10.0
            while not tb.sh(tb.receiver, "ss", "-Hltn", f"sport = :{IPERF3_PORT}").stdout.strip():
                if tb.procs[-1].poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"testbed up: the iperf3 server did not start: {' '.join((UP_DIR / 'iperf3-server.log').read_text().split())[-300:]}")
                time.sleep(0.05)
        senders = {str(g.index): {"namespace": tb.sender(g.index), "address": f"10.77.{g.index}.1", "rtt_ms": g.rtt_ns / 1e6} for g in p.groups}
        state = {
            "scenario": spec.get("name"),
            "rate_bps": p.rate_bps,
            "queue": list(p.queue) if p.class_queues is None else [list(q) for q in p.class_queues],
            "namespaces": list(tb.namespaces),
            "router": tb.router,
            "receiver": {"namespace": tb.receiver, "address": "10.78.0.1"},
            "senders": senders,
            "iperf3_port": IPERF3_PORT if iperf3 else None,
            "loaded_programs": list(tb.loaded),
            "delay_line_pid": tb.delayline.pid if tb.delayline else None,
            "bottleneck": tb.meta.get("bottleneck"),
            "ping": tb.meta.get("ping"),
            "tcp_usec_ts": tb.meta.get("tcp_usec_ts"),
        }
        tmp = UP_DIR / "state.json.part"
        tmp.write_text(json.dumps(state, indent=1))
        tmp.rename(UP_DIR / "state.json")
    except BaseException:
        tb.close()
        shutil.rmtree(UP_DIR, ignore_errors=True)
        raise
    # Left standing: the processes run in sessions of their own and outlive
    # this one; down() finds everything from the prefix and the programs
    # from their record (kernel.release(STANDING)).
    return state


def down() -> dict:
    """Removes the standing testbed: its processes, namespaces (with their
    devices and qdiscs) and the BPF programs ``up`` loaded, also when ``up``
    was killed half-way (its programs are recorded as the standing
    testbed's from the moment it loads them); a program that another longfat
    command or user also holds stays loaded. Returns what it removed and
    what it left loaded; removing nothing is not an error."""
    check_environment()
    with _standing_lock("down"):
        removed = []
        with deferred_signals():
            for ns in _up_namespaces():
                remove_namespace(ns)  # kills the delay line, the iperf3 server and any user process in it
                removed.append(ns)
            released = kernel.release(STANDING)
            shutil.rmtree(UP_DIR, ignore_errors=True)
    return {
        "namespaces": removed,
        "unloaded": [ca for ca, what in released if what == "unloaded"],
        "left": [f"{ca}: {what}" for ca, what in released if what.startswith("left")],
    }
