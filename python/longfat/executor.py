"""Where simulations run: in this process, or on Dask distributed (a local
cluster of one worker process per core, or an existing cluster).

``longfat sweep``, ``longfat suite`` and ``longfat reproduce`` all submit
their runs here. Tasks go longest first. A task that raises is reported as
failed and does not stop the others unless the caller says so.

A task whose worker dies (a killed process, a lost machine) runs again,
but a run that kills its workers (out of memory, a crash) must fail alone.
Dask charges a worker's death to every task the worker holds, queued or
running, and fails a task charged more than its ``allowed-failures``
(KilledWorker): innocent runs queued behind the killer failed with it.
So the executor hands the cluster no more tasks than it has threads (a
worker holds what it runs, and seldom one more: Dask's placement is not
exact), and runs a task whose worker died again itself, after the others
(a local cluster's ``allowed-failures`` is 0; a cluster started elsewhere
retries as it is configured to first). A task that
MAX_WORKER_DEATHS workers died running fails, named as their likely cause;
an innocent task charged fewer times runs again and succeeds. (Runs
that share a worker process with several threads share its fate: start
workers with ``--nthreads 1``.)

A cluster started elsewhere is used with ``scheduler="tcp://HOST:8786"``;
start it with the standard commands::

    dask scheduler                              # prints tcp://HOST:8786
    dask worker tcp://HOST:8786 --nworkers 8 --nthreads 1   # on each machine

Every worker must have the same longfat build installed (checked when the
executor starts: a run's key includes the build, so a worker with another
build would store results under the wrong key).
"""

from __future__ import annotations

import collections
import contextlib
import logging
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

from distributed.diagnostics.plugin import WorkerPlugin

from longfat._native import ScenarioError

_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>
#: How many times a task whose result a dying worker took with it is run
#: again (under a new key) before it counts as failed.
MAX_RESUBMITS = 3
#: A task fails once this many workers died while running it (as many as
#: Dask's default ``allowed-failures`` of 3 tolerates).
MAX_WORKER_DEATHS = 4


class WorkersDied(RuntimeError):
    """A task failed because workers died running it, or holding its result,
    too many times."""


@dataclass
class Task:
    key: str  # unique within one submission; Dask's task key
    fn: Callable[..., Any]
    args: tuple
    cost: float  # larger runs first
    name: str | None = None  # what an error raised for it calls it (default: key)


@dataclass
class Status:
    done: int = 0
    failed: int = 0
    running: int = 0
    total: int = 0
    done_cost: float = 0.0
    total_cost: float = 0.0


def _worker_setup() -> None:
    """Runs in each local worker process before any task: one BLAS thread
    (numpy's threads would only compete with the simulations), and the
    worker dies with its parent however the parent dies."""
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    if sys.platform.startswith("linux"):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


@contextlib.contextmanager
def _signals_held():
    """Holds SIGINT, SIGTERM and SIGHUP while the block starts a local
    cluster, then hands the first that came to the handler it was meant for
    (raising KeyboardInterrupt, as a rule). Interrupted inside, Dask left a
    half-started cluster that the process could not close: its close at
    exit printed tracebacks after the "interrupted" line. A signal ignored
    on entry stays ignored; outside the main thread nothing is held
    (signals reach only the main thread)."""
    came: list[int] = []
    previous = {}
    if threading.current_thread() is threading.main_thread():
        for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            if signal.getsignal(s) != signal.SIG_IGN:
                previous[s] = signal.signal(s, lambda signum, frame: came.append(signum))
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h if h is not None else signal.SIG_DFL)
        if came:
            handler = previous[came[0]]
            if callable(handler):
                handler(came[0], None)
            else:  # the default action (the process ends; its workers with it)
                os.kill(os.getpid(), came[0])


class _LocalWorkerSetup(WorkerPlugin):
    """``_worker_setup`` on every worker of a local cluster, restarted ones
    included."""

    def setup(self, worker) -> None:
        _worker_setup()


def _worker_build() -> str:
    from longfat.store import build_id

    return build_id()


def _local(exc: BaseException) -> BaseException:
    """A run's error as this process knows it. The engine's ScenarioError
    comes back from a Dask worker as a copy of its class (the extension
    module cannot be imported under the name it pickles with), which the
    command line's ``except ScenarioError`` would not catch: a refusal
    would be reported as a crash."""
    if type(exc).__name__ == "ScenarioError" and not isinstance(exc, ScenarioError):
        return ScenarioError(*exc.args)
    return exc


def error_text(exc: BaseException) -> str:
    """A failed run's error in one line: a refusal's own message (it names
    its field), anything else as ``Type: message``. (A ScenarioError's str()
    is the tuple of its message and its field.)"""
    exc = _local(exc)
    if isinstance(exc, ScenarioError) and exc.args:
        return " ".join(str(exc.args[0]).split())
    return f"{type(exc).__name__}: {' '.join(str(exc).split())}"


class Executor:
    """``with Executor(scheduler, workers) as ex: for key, ok, value in
    ex.run(tasks): ...``. ``workers == 1`` without a scheduler runs the
    tasks in this process, one after the other, in the same order."""

    def __init__(self, scheduler: str | None = None, workers: int | None = None, field: str = "--scheduler"):
        if workers is not None and workers < 1:
            raise ScenarioError("--workers: must be >= 1", "--workers")
        self.scheduler = scheduler
        self.workers = workers if workers is not None else (os.cpu_count() or 1)
        self.field = field
        self.client = None
        self.cluster = None

    @property
    def inline(self) -> bool:
        return self.scheduler is None and self.workers <= 1

    def describe(self) -> str:
        if self.scheduler:
            return f"Dask cluster at {self.scheduler}"
        if self.inline:
            return "this process"
        return f"local Dask cluster, {self.workers} worker processes"

    def __enter__(self) -> "Executor":
        if self.inline:
            return self
        try:
            self._start()
        except BaseException:  # __exit__ is not called: what started stops here
            self.close()
            raise
        return self

    def _start(self) -> None:
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError as e:  # pragma: no cover - a declared dependency
            raise ScenarioError(f"{self.field}: Dask distributed is not installed ({e})", self.field) from None
        for name in ("distributed", "distributed.nanny", "distributed.scheduler", "distributed.worker", "distributed.core", "distributed.comm"):
            logging.getLogger(name).setLevel(logging.CRITICAL)
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
        if self.scheduler:
            try:
                self.client = Client(self.scheduler, timeout="10s")
            except (OSError, TimeoutError, ValueError) as e:
                raise ScenarioError(f"{self.field}: cannot reach the Dask scheduler at {self.scheduler}: {' '.join(str(e).split())}", self.field) from None
            self._check_builds()
        else:
            import dask

            dask.config.set(
                {
                    "distributed.worker.daemon": True,
                    "distributed.worker.profile.enabled": False,
                    "distributed.admin.tick.limit": "1h",
                    "logging.distributed": "critical",
                    "distributed.scheduler.allowed-failures": 0,  # the executor runs them again
                }
            )
            import warnings

            with warnings.catch_warnings(), _signals_held():
                # "Port 8787 is already in use": the scheduler's HTTP
                # endpoint moves to a free port; nothing to tell the user.
                warnings.simplefilter("ignore", UserWarning)
                self.cluster = LocalCluster(
                    n_workers=self.workers,
                    threads_per_worker=1,
                    processes=True,
                    memory_limit=0,  # runs carry their own memory budget
                    dashboard_address=None,
                    silence_logs=logging.CRITICAL,
                )
                self.client = Client(self.cluster)
                self.client.register_plugin(_LocalWorkerSetup(), name="longfat-setup")

    def _check_builds(self) -> None:
        from longfat.store import build_id

        mine = build_id()
        try:
            theirs = self.client.run(_worker_build)
        except Exception as e:
            raise ScenarioError(f"{self.field}: the workers at {self.scheduler} cannot import longfat: {' '.join(str(e).split())}", self.field) from None
        if not theirs:
            raise ScenarioError(f"{self.field}: the Dask cluster at {self.scheduler} has no workers", self.field)
        bad = {w: b for w, b in theirs.items() if b != mine}
        if bad:
            w, b = next(iter(bad.items()))
            raise ScenarioError(f"{self.field}: worker {w} runs longfat {b}, this is {mine}; install the same build on every worker", self.field)

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        client, cluster = self.client, self.cluster
        self.client = self.cluster = None
        if client is not None:
            try:
                client.close(timeout=10)
            except Exception:
                pass
        if cluster is not None:
            try:
                cluster.close(timeout=10)
            except Exception:
                pass

    def worker_pids(self) -> dict[str, int]:
        """Worker address -> process id (for tests and diagnostics)."""
        return {} if self.client is None else self.client.run(os.getpid)

    def run(
        self,
        tasks: Sequence[Task],
        on_status: Callable[[Status, str | None], None] | None = None,
        stop_on_failure: bool = False,
        poll_s: float = 0.25,
    ) -> Iterator[tuple[str, bool, Any]]:
        """Runs the tasks, longest first; yields ``(key, True, value)`` or
        ``(key, False, error_text)`` as each finishes. ``on_status(status,
        finished_key_or_None)`` is called after each and at least every
        ``poll_s``. With ``stop_on_failure`` the first failure cancels the
        rest and raises it."""
        order = sorted(tasks, key=lambda t: -t.cost)
        status = Status(total=len(order), total_cost=sum(t.cost for t in order))
        if self.inline:
            for t in order:
                status.running = 1
                if on_status:
                    on_status(status, None)
                try:
                    ok, value = True, t.fn(*t.args)
                except (KeyboardInterrupt, SystemExit):
                    raise
                except Exception as e:
                    if stop_on_failure:
                        raise
                    ok, value = False, error_text(e)
                status.done += ok
                status.failed += not ok
                status.running = 0
                status.done_cost += t.cost
                if on_status:
                    on_status(status, t.key)
                yield t.key, ok, value
            return
        yield from self._run_dask(order, status, on_status, stop_on_failure, poll_s)

    def _run_dask(self, order, status, on_status, stop_on_failure, poll_s):
        from dask.distributed import KilledWorker, as_completed

        client = self.client
        task = {t.key: t for t in order}
        cost = {t.key: t.cost for t in order}
        # (task, Dask key) not yet handed to the cluster, next first; the
        # cluster holds at most as many as it has threads (see the module's
        # docstring).
        waiting = collections.deque((t, t.key) for t in order)
        futures = {}  # future -> its task's key
        pending = set()
        resubmitted: dict[str, int] = {}  # task key -> times run again
        deaths: dict[str, int] = {}  # task key -> workers that died running it
        threads = 0
        # One as_completed over the whole run, polled: a wait(pending,
        # timeout, FIRST_COMPLETED) per poll left a waiter behind on every
        # pending future each time it timed out, and a paper-length
        # reproduction (1,000 runs, an hour) grew by gigabytes.
        finished = as_completed()
        last_poll = -float("inf")
        try:
            while pending or waiting:
                done = [f for f in finished.next_batch(block=False) if f in pending]
                now = time.monotonic()
                polled = now - last_poll >= poll_s or bool(done)
                if polled:
                    last_poll = now
                    try:
                        threads = sum(client.nthreads().values())
                        processing = client.processing()
                        keys = {futures[f] for f in pending}
                        status.running = sum(1 for ks in processing.values() for k in ks if k in keys)
                    except Exception:
                        pass
                if not done and polled and on_status:
                    on_status(status, None)
                for f in done:
                    pending.discard(f)
                    key = futures.pop(f)
                    t = task[key]
                    exc = _local(f.exception()) if f.status == "error" else None
                    if isinstance(exc, KilledWorker):
                        deaths[key] = deaths.get(key, 0) + exc.allowed_failures + 1
                    # Neither a result nor an error: its result was lost with
                    # a worker that died holding it (or the worker died
                    # mid-run and the scheduler gave the key up). Or its
                    # worker died running it, fewer times than a run that
                    # kills its workers would. Run it again under a new key,
                    # after the others: when workers die of something else
                    # (another process's memory), the deaths fall on many
                    # runs, not on the one run that would go next each time.
                    lost = f.status != "finished" and f.status != "error" and resubmitted.get(key, 0) < MAX_RESUBMITS
                    if lost or (isinstance(exc, KilledWorker) and deaths[key] < MAX_WORKER_DEATHS):
                        n = resubmitted[key] = resubmitted.get(key, 0) + 1
                        f.release()
                        waiting.append((t, f"{t.key}-again{n}"))
                        continue
                    status.done_cost += cost[key]
                    if f.status == "finished":
                        value = f.result()
                        f.release()
                        status.done += 1
                        status.running = max(status.running - 1, 0)
                        if on_status:
                            on_status(status, key)
                        yield key, True, value
                    else:
                        if exc is None:
                            exc = WorkersDied(f"its result was lost {resubmitted.get(key, 0) + 1} times (status {f.status!r}: workers died holding it)")
                        elif isinstance(exc, KilledWorker):
                            exc = WorkersDied(
                                f"its worker died each of the {deaths[key]} times it ran (the last one {exc.last_worker.address}): "
                                "the run itself is the likely cause (out of memory? a crash?)"
                            )
                        f.release()
                        if stop_on_failure:
                            if isinstance(exc, WorkersDied):  # the task's own errors name what they can
                                raise WorkersDied(f"{t.name or key}: {exc}")
                            raise exc
                        status.failed += 1
                        status.running = max(status.running - 1, 0)
                        if on_status:
                            on_status(status, key)
                        yield key, False, error_text(exc)
                while waiting and len(pending) < max(threads, 1):
                    t, k = waiting.popleft()
                    f = client.submit(t.fn, *t.args, key=k, priority=t.cost, retries=0, pure=False)
                    futures[f] = t.key
                    pending.add(f)
                    finished.add(f)
                if not done:
                    # Quick to hand a freed thread its next task: runs can
                    # last milliseconds.
                    time.sleep(min(poll_s, 0.005 if waiting else 0.05))
        finally:
            finished.clear()
            if pending:
                client.cancel(list(pending), force=True)
