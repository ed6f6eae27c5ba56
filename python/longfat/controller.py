"""Controllers written in Python.

Subclass :class:`Controller`, register the class under a name, and every way
of running a scenario (``longfat.run``, ``compare``, ``sweep`` on local or
remote Dask workers, ``suite``, the command line's ``--register``) can name
it in a flow's ``cc``::

    import longfat

    class Aimd(longfat.Controller):
        PARAMS = {"beta": 0.5}          # parameters and their defaults

        def on_ack(self, ack):
            if not ack.in_recovery and ack.growth_pkts:
                self.cwnd += ack.growth_pkts / self.cwnd

        def on_congestion_event(self, loss):
            self.ssthresh = self.cwnd = max(self.cwnd * self.beta, 2.0)

        def on_rto(self, rto):
            self.ssthresh, self.cwnd = max(self.cwnd * self.beta, 2.0), 1.0

    longfat.register("aimd", Aimd)
    longfat.run("scenarios/canonical.toml", overrides=['flows[0].cc="aimd"'])

The events are the Rust trait's (crates/longfat-cc/src/lib.rs), with the
same fields and units; docs/python-controllers.md lists them, their call
order and what a Python controller costs per ACK.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import hashlib
import importlib
import importlib.util
import inspect
import os
import sys
from pathlib import Path
from typing import ClassVar, Iterable, Iterator, Mapping

from longfat._native import (
    AckEvent,
    ControllerError,
    ControllerSetup,
    LossEvent,
    RtoEvent,
    ScenarioError,
    algorithms,
    controller_name_error,
)

__all__ = [
    "AckEvent",
    "Controller",
    "ControllerError",
    "ControllerSetup",
    "LossEvent",
    "RtoEvent",
    "known_algorithms",
    "register",
    "registered",
    "registry",
    "unregister",
]

#: The environment variable the command line reads controllers from:
#: ``NAME=FILE.py:CLASS`` or ``NAME=MODULE:CLASS``, comma-separated.
CONTROLLERS_ENV = "LONGFAT_CONTROLLERS"


class Controller:
    """A congestion controller written in Python.

    The simulator's TCP sender calls the methods below, with the same events
    as a built-in controller gets, and reads ``self.cwnd`` and
    ``self.ssthresh`` (packets, floats) after each call. ``on_ack``,
    ``on_congestion_event`` and ``on_rto`` must be defined; the others do
    nothing unless overridden (``on_send``, ``on_tx_start`` and ``seed`` are
    not even called then, so they cost nothing).

    Class attributes:

    - ``PARAMS``: the parameters a scenario's ``params`` may set, with their
      defaults (None: no default; the constructor gets None when unset);
      each reaches the constructor as a keyword argument (and the default
      constructor sets it as an attribute). An unknown name is refused
      naming ``flows[i].params.<name>``; the constructor checks values
      (an exception it raises is reported on the flow's ``cc``).
    - ``PACES``: the controller sets ``self.pacing_rate_bytes_per_sec``
      (None: no rate), read after each call.
    - ``CONTROLS_RECOVERY_WINDOW``: the controller sets the window in fast
      recovery and after a timeout (BBR-like); default False (the
      transport's recovery governs it).
    - ``WANTS_RATE_SAMPLES``: ``ack.rate`` carries delivery-rate samples.
    """

    PARAMS: ClassVar[Mapping[str, float]] = {}
    PACES: ClassVar[bool] = False
    CONTROLS_RECOVERY_WINDOW: ClassVar[bool] = False
    WANTS_RATE_SAMPLES: ClassVar[bool] = False

    #: Congestion window, packets (the sender sends while pipe < floor(cwnd)).
    cwnd: float
    #: Slow-start threshold, packets (``math.inf`` before the first loss).
    ssthresh: float
    #: With ``PACES = True``: the pacing rate in bytes of payload per second.
    pacing_rate_bytes_per_sec: float | None = None

    def __init__(self, setup: ControllerSetup, **params: float) -> None:
        """``setup``: the initial window (``cwnd_pkts``, ``ssthresh_pkts``),
        the flow's transport ``profile`` ("rfc", "ns2", "linux") and its
        ``flow`` index (None for the check made while the scenario is
        validated); ``params``: every declared parameter, the scenario's
        value or the default."""
        self.cwnd = setup.cwnd_pkts
        self.ssthresh = setup.ssthresh_pkts
        self.profile = setup.profile
        self.flow = setup.flow
        for name, value in params.items():
            setattr(self, name, value)

    def on_ack(self, ack: AckEvent) -> None:
        """An ACK arrived (after the scoreboard was updated)."""
        raise NotImplementedError(f"{type(self).__qualname__} must define on_ack(self, ack)")

    def on_congestion_event(self, loss: LossEvent) -> None:
        """A loss episode (fast retransmit) or an ECN response starts: set
        ssthresh and cwnd for recovery. Called before the ``on_ack`` of the
        ACK that revealed it."""
        raise NotImplementedError(f"{type(self).__qualname__} must define on_congestion_event(self, loss)")

    def on_rto(self, rto: RtoEvent) -> None:
        """The retransmission timer fired (every expiry, backed-off ones too)."""
        raise NotImplementedError(f"{type(self).__qualname__} must define on_rto(self, rto)")

    def on_recovery_exit(self, now_ns: int) -> None:
        """The cumulative ACK passed the recovery point of a fast recovery
        (after that ACK's ``on_ack``)."""

    def on_timeout_recovery_exit(self, now_ns: int) -> None:
        """The cumulative ACK passed everything outstanding at the last
        timeout (the ``linux`` profile only)."""

    def on_send(self, now_ns: int, seq: int, bytes: int, retransmit: bool) -> int:
        """A data packet leaves; the returned tag (0..2**32) comes back in
        ``ack.ts.echoed_tag``. Called per packet only when overridden."""
        return 0

    def on_tx_start(self, now_ns: int, app_limited: bool) -> None:
        """New data is sent with nothing in flight (only when overridden)."""

    def seed(self, seed: int) -> None:
        """The connection's seed for the controller's own randomness, once,
        when the run is built (only when overridden)."""

    def snapshot(self) -> "Controller":
        """A copy of the whole state, which the sender keeps at a reduction
        and restores if the reduction proves spurious (an undo). Default:
        ``copy.deepcopy(self)``."""
        return copy.deepcopy(self)


_REGISTRY: dict[str, type[Controller]] = {}


def check_controller(name: str, cls: object, field: str) -> None:
    """Refuses (ScenarioError naming ``field``) a name registration would
    refuse, a class that is not a Controller or lacks a required event, and
    a malformed PARAMS."""
    if not isinstance(name, str):
        raise ScenarioError(f"{field}: the name must be a string, not {type(name).__name__}", field)
    problem = controller_name_error(name)
    if problem is not None:
        raise ScenarioError(f"{field}: {problem}", field)
    if not (isinstance(cls, type) and issubclass(cls, Controller)):
        raise ScenarioError(f"{field}: {cls!r} is not a subclass of longfat.Controller", field)
    missing = [m for m in ("on_ack", "on_congestion_event", "on_rto") if getattr(cls, m) is getattr(Controller, m)]
    if missing:
        raise ScenarioError(f"{field}: {cls.__qualname__} must define {', '.join(missing)} (docs/python-controllers.md)", field)
    params = getattr(cls, "PARAMS", None)
    if not isinstance(params, Mapping) or not all(isinstance(k, str) and (v is None or (isinstance(v, (int, float)) and not isinstance(v, bool))) for k, v in params.items()):
        raise ScenarioError(f"{field}: {cls.__qualname__}.PARAMS must map parameter names to numbers (their defaults) or None (no default)", field)


def register(name: str, cls: type[Controller]) -> None:
    """Makes ``name`` a value of ``cc`` that runs ``cls``. A built-in
    algorithm's name is refused; registering a name again replaces its class
    (a notebook cell run twice)."""
    check_controller(name, cls, "longfat.register")
    _REGISTRY[name] = cls


def unregister(name: str) -> None:
    """Forgets ``name``; ScenarioError if it is not registered."""
    if name not in _REGISTRY:
        raise ScenarioError(f"longfat.unregister: {name!r} is not registered (registered: {', '.join(_REGISTRY) or 'none'})", "longfat.unregister")
    del _REGISTRY[name]


@contextlib.contextmanager
def registered(name: str, cls: type[Controller]) -> Iterator[None]:
    """``with registered("mycc", MyCC): ...``: registered inside the block,
    and afterwards as before it."""
    before = _REGISTRY.get(name)
    register(name, cls)
    try:
        yield
    finally:
        if before is None:
            _REGISTRY.pop(name, None)
        else:
            _REGISTRY[name] = before


def registry() -> dict[str, type[Controller]]:
    """The registered controllers, name -> class (a copy)."""
    return dict(_REGISTRY)


def known_algorithms(controllers: Mapping[str, type[Controller]] | None = None) -> list[str]:
    """Every name ``cc`` accepts here: the built-in algorithms, then the
    registered controllers (or ``controllers``)."""
    return [*algorithms(), *(registry() if controllers is None else controllers)]


def _load_file(path: Path, field: str):
    """The module in ``path``, loaded once under a name of its own (the
    file's absolute path hashed), and pickled by value: a Dask worker
    elsewhere gets its code with the task, not a name it cannot import."""
    path = path.resolve()
    source = path.read_bytes()
    # Named by the path and the content: the same file again is the same
    # module, an edited one a new module with the new code.
    digest = hashlib.sha256(str(path).encode() + b"\0" + source).hexdigest()[:12]
    name = f"longfat_user_{path.stem}_{digest}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ScenarioError(f"{field}: cannot load {str(path)!r} as Python", field)
    module = importlib.util.module_from_spec(spec)
    # The bytes the module runs, for code_fingerprint (the file may change after).
    module.__longfat_source__ = source
    sys.modules[name] = module
    try:
        exec(compile(source, str(path), "exec"), module.__dict__)
    except BaseException:
        del sys.modules[name]
        raise
    import cloudpickle

    cloudpickle.register_pickle_by_value(module)
    return module


def load_spec(text: str, field: str = "--register") -> tuple[str, type[Controller]]:
    """``NAME=FILE.py:CLASS`` or ``NAME=MODULE:CLASS`` -> (name, class)."""
    name, eq, target = text.partition("=")
    where, colon, attr = target.rpartition(":")
    if not (eq and colon and name.strip() and where and attr):
        raise ScenarioError(f"{field}: {text!r} is not NAME=FILE.py:CLASS or NAME=MODULE:CLASS (e.g. mycc=ctl/mycc.py:MyCC)", field)
    name = name.strip()
    if where.endswith(".py"):
        path = Path(where).expanduser()
        if not path.is_file():
            raise ScenarioError(f"{field}: {where!r}: no such file", field)
        module = _load_file(path, field)
    else:
        try:
            module = importlib.import_module(where)
        except ImportError as e:
            raise ScenarioError(f"{field}: cannot import {where!r}: {e}", field) from None
    cls = getattr(module, attr, None)
    if cls is None:
        raise ScenarioError(f"{field}: {where!r} has no {attr!r}", field)
    check_controller(name, cls, field)
    return name, cls


def register_specs(specs: Iterable[str], *, env: bool = True) -> None:
    """Registers each ``NAME=FILE.py:CLASS`` of ``specs`` (the command
    line's ``--register``), after those of LONGFAT_CONTROLLERS when ``env``."""
    if env:
        for text in filter(None, (s.strip() for s in os.environ.get(CONTROLLERS_ENV, "").split(","))):
            register(*load_spec(text, CONTROLLERS_ENV))
    for text in specs:
        register(*load_spec(text))


def pack(controllers: Mapping[str, type[Controller]] | None = None) -> bytes | None:
    """The registered controllers (or ``controllers``) as bytes a task
    carries to a Dask worker (cloudpickle: a class defined in ``__main__``
    or a notebook travels by value); None when there are none."""
    controllers = registry() if controllers is None else dict(controllers)
    if not controllers:
        return None
    import cloudpickle

    return cloudpickle.dumps(controllers)


def unpack(blob: bytes | None) -> dict[str, type[Controller]]:
    """What ``pack`` packed ({} for None)."""
    if blob is None:
        return {}
    import cloudpickle

    return cloudpickle.loads(blob)


@functools.lru_cache(maxsize=None)
def _class_code(cls: type) -> bytes:
    """The code a registered class runs, as bytes to hash: for each class in
    its MRO above :class:`Controller`, the whole source of the module that
    defines it (helpers beside the class count; for a file loaded by
    ``--register``, the bytes it was run from), else the class's own source
    (a notebook cell), else its cloudpickle (a class with no source to read,
    whose bytes may differ from one process to the next: a rerun then runs
    again rather than reuse a stale result)."""
    parts = []
    for k in cls.__mro__:
        if k in (Controller, object):
            continue
        module = sys.modules.get(k.__module__)
        loaded = getattr(module, "__longfat_source__", None)
        if loaded is not None:  # a --register file: the bytes it was run from
            parts.append(f"{k.__module__}.{k.__qualname__}\n".encode() + loaded)
            continue
        try:
            src = inspect.getsource(module) if module is not None and k.__module__ != "__main__" else inspect.getsource(k)
        except (OSError, TypeError):
            try:
                src = inspect.getsource(k)
            except (OSError, TypeError):
                import cloudpickle

                parts.append(cloudpickle.dumps(k))
                continue
        parts.append(f"{k.__module__}.{k.__qualname__}\n{src}".encode())
    return b"\0".join(parts)


def code_fingerprint(scenario: Mapping, controllers: Mapping[str, type[Controller]] | None = None) -> dict[str, str]:
    """For each registered controller a resolved scenario names (a flow's
    ``cc`` or PLT's ``plt.hcm``): SHA-256 of its code (``_class_code``). A
    study keys a run by its scenario and this, so a sweep rerun after a
    class was edited runs it again instead of reusing the old class's
    results; {} for a scenario of built-in controllers only, whose keys stay
    what they were."""
    controllers = registry() if controllers is None else controllers
    names = set()
    for flow in scenario.get("flows", []) or []:
        if isinstance(flow, Mapping):
            names.add(flow.get("cc"))
            plt = flow.get("plt")
            if isinstance(plt, Mapping):
                names.add(plt.get("hcm"))
    return {n: hashlib.sha256(_class_code(controllers[n])).hexdigest()[:20] for n in sorted(x for x in names if isinstance(x, str) and x in controllers)}
