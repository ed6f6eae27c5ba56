#!/usr/bin/env python3
"""A fuzz campaign against longfat's Python input layer.

Every input must end in a result or in one ScenarioError whose message
starts with the field it names (or is a known whole-file error): never
another exception, a hang or an out-of-memory kill. Inputs come from four
sources:

* ``schema``: random scenarios over the scenario field catalogue
  (crates/longfat-sim/src/scenario/fields.rs, read through
  ``longfat._native.scenario_fields()``): random subsets of every field, values
  mostly plausible, some from sets of interesting ones (0, negative, huge,
  fractional, NaN, wrong types, TOML dates, odd units, deep nesting);
  a tenth are given as Python dicts (with Python-only values) rather than
  TOML files;
* ``mutate``: mutated copies of every scenario file under scenarios/
  (values dropped, duplicated, retyped, replaced, nested deeply, dates;
  [reproduce] tables included; sometimes the TOML text itself);
* ``reproduce``: scenario files with mutated [reproduce] tables, through
  ``load_experiment`` (quick or not);
* ``override``: ``--set`` strings and ``--seed`` values through
  ``apply_overrides``;
* ``sweep``: scenario files with mutated [sweep] tables and mutated
  ``--grid``/``--cc``/``--seeds`` arguments through ``load_sweep``,
  ``grid_from_args`` and ``expand`` (at most SWEEP_CELL_BUDGET cells
  validated; a few cheap grids run through ``run_cells``), checking that a
  grid past MAX_CELLS is refused before any cell is expanded (fast, small)
  and that every cell's labels are what its scenario holds.

Each input runs in a worker process (spawned; ``--jobs`` of them, each under
an RLIMIT_AS of 2 GiB beyond the address space it holds once its modules
are imported) through the command line's path: ``prepare`` (load,
overrides, validation), then a bounded run (``run_until`` in growing steps
of simulated time until 200,000 events or the end) and, for runs that
finished, the result tables as ``runner.execute`` builds them. Outcomes:
``accepted``, ``refused`` (a well-formed ScenarioError), ``BUG`` (any other
exception, a pyo3 PanicException, a refusal that names no field, a worker
killed by a signal other than for memory), ``HANG`` (more than ``--timeout``
seconds: the worker is killed and replaced) and ``MEMORY`` (MemoryError, or
a worker that died allocating). BUG/HANG/MEMORY inputs are written to the
findings directory, one TOML file each (JSON when TOML cannot hold them),
with the traceback.

``--cli N`` also runs N inputs through the real command line
(``longfat run FILE --out DIR -q --no-plot [--seed S] [--set=K=V]``) and
checks the exit status is 0 or 2 and stderr is at most one line, with no
traceback, panic or "internal error".

``--sweep-cli N`` runs N sweep inputs through ``longfat sweep FILE ARGS
--workers 1 --out TMP/study -q`` (exit 0, 1 or 2; one ``error: FIELD: ...``
line on 2, matching the API's refusal; nothing written outside the study;
no study directory left by a refusal).

    .venv/bin/python scripts/fuzz_py.py --seed 1 --inputs 20000 --jobs 2 --cli 300
    .venv/bin/python scripts/fuzz_py.py --seed 2 --inputs 3000 --jobs 2 --sources sweep --sweep-cli 200

Input i of seed S is a function of (S, i) only: ``--only I`` reruns it.
"""

from __future__ import annotations

import argparse
import copy
import datetime
import functools
import json
import math
import multiprocessing as mp
import multiprocessing.connection
import os
import random
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
import traceback
from collections import Counter, defaultdict, deque
from pathlib import Path
from typing import Any, Callable, Iterable

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "scenarios"
DEFAULT_FINDINGS = Path("/tmp/longfat-fuzz-findings/py")

TIME_LIMIT = 10.0
#: A "reproduce" input validates a whole paper's sweep (it builds every
#: case's simulation: tcpgt/fig12_web.toml's web sessions take about 12 s on
#: a loaded 2-core machine), so it gets this many times the limit.
SWEEP_TIME_FACTOR = 4
#: Address space a worker may add to what its imports hold (see _worker_main).
MEM_LIMIT = 2 << 30
EVENT_BUDGET = 200_000

ACCEPTED, REFUSED, BUG, HANG, MEMORY = "accepted", "refused", "BUG", "HANG", "MEMORY"
OUTCOMES = (ACCEPTED, REFUSED, BUG, HANG, MEMORY)
FAILURES = (BUG, HANG, MEMORY)
SOURCES = ("schema", "mutate", "reproduce", "override", "sweep")
WEIGHTS = (0.30, 0.25, 0.13, 0.17, 0.15)


# =============================================================================
# The schema
# =============================================================================

@functools.cache
def scenario_schema() -> dict[str, list[tuple[str, dict]]]:
    """The scenario field catalogue (crates/longfat-sim/src/scenario/fields.rs,
    through the bindings): serde struct name -> [(field, declaration)], each
    declaration a dict with ``kind`` (duration, rate, size, float, u32, u64,
    bool, text, word, cc, size_list, name_list, params, table, tables), ``required``,
    and ``words`` or ``table`` where the kind has them."""
    from longfat._native import scenario_fields

    return {t["struct"]: [(f["name"], f) for f in t["fields"]] for t in json.loads(scenario_fields())["tables"]}


def _algorithms() -> list[str]:
    from longfat._native import algorithms

    return list(algorithms())


def _param_values() -> dict[str, list[float]]:
    """Every controller parameter the catalogue declares (crates/longfat-cc,
    ``longfat algorithms --format json``), with values to try: its defaults
    under each profile, its range's ends and middle, and just outside it."""
    from longfat.catalogue import catalogue

    out: dict[str, set[float]] = {}
    for a in catalogue():
        for p in a["params"]:
            lo, hi = p["range"]["lo"], p["range"]["hi"]
            values = out.setdefault(p["name"], set())
            values.update(v for v in p["profile_defaults"].values() if v is not None)
            values.update([lo, hi, (lo + hi) / 2, lo - 1.0, hi * 2.0 + 1.0])
    return {name: sorted(values) for name, values in sorted(out.items())}


PARAM_VALUES = _param_values()
PARAM_NAMES = list(PARAM_VALUES)


def random_params(rng: random.Random) -> dict[str, float]:
    """A flow's ``params``: up to two declared parameters (of any
    algorithm), each with one of its values or a plain number."""
    out = {}
    for _ in range(rng.choice([0, 1, 1, 2])):
        name = rng.choice(PARAM_NAMES)
        out[name] = rng.choice(PARAM_VALUES[name] + [0.1, 0.5, 0.8, 1.0, 2.0, 10.0])
    return out


#: Field names by kind, from the catalogue (a name has one kind in every table).
DURATION_FIELDS = {n for fs in scenario_schema().values() for n, f in fs if f["kind"] == "duration"}
SIZE_FIELDS = {n for fs in scenario_schema().values() for n, f in fs if f["kind"] in ("size", "size_list")}

GOOD_STRINGS: dict[str, list[str]] = {
    "duration": ["0.2s", "0.5s", "1s", "2s", "3s"],
    "measure_from": ["0s", "0.1s", "0.5s"],
    "sample_interval": ["1ms", "10ms", "50ms", "100ms"],
    "delay": ["0s", "1ms", "5ms", "10ms", "35ms"],
    "access_delay": ["0s", "0.5ms", "2ms"],
    "bdp_rtt": ["10ms", "70ms", "100ms"],
    "start": ["0s", "0.1s", "0.3s"],
    "stop": ["0.5s", "1.5s", "5s"],
    "start_spacing": ["0s", "10ms", "100ms"],
    "start_jitter": ["0s", "10ms", "50ms"],
    "access_delay_jitter": ["0s", "1ms", "10ms"],
    "on_mean": ["10ms", "100ms", "1s"],
    "off_mean": ["0s", "10ms", "100ms"],
    "inter_page": ["10ms", "100ms", "1s"],
    "inter_object": ["0s", "1ms", "10ms"],
    "session_spread": ["0s", "100ms"],
    "delayed_ack_timeout": ["40ms", "200ms", "1ms"],
    "min_rto": ["200ms", "1ms", "1s"],
    "initial_rto": ["1s", "3s", "100ms"],
    "max_rto": ["60s", "10s", "1s"],
    "sender_clock_offset": ["0s", "1ms", "1s"],
    "receiver_clock_offset": ["0s", "1ms", "1s"],
    "rate": ["1Mbps", "10Mbps", "20Mbps", "100Mbps", "1Gbps"],
    "queue": ["10pkt", "100pkt", "0.2bdp", "1bdp", "64KB", "unlimited"],
    "size": ["10pkt", "100KB", "1MB"],
    "packet_size": ["1500B", "576B", "9000B", "64B"],
    "header_size": ["40B", "52B", "0B"],
    "ack_size": ["40B", "64B", "20B"],
    "rwnd": ["64pkt", "1000pkt", "unlimited", "1MB"],
    "size_mean": ["10KB", "20pkt", "100KB"],
    "object_size_mean": ["10KB", "20pkt", "100KB"],
    "class_queues": ["10pkt", "100pkt", "0.5bdp"],
    "topology": ["dumbbell", "parking_lot"],
    "discipline": ["droptail", "priority", "codel", "fq_codel"],
    "target": ["5ms", "1ms", "20ms", "1us"],
    "interval": ["100ms", "30ms", "1s"],
    "profile": ["rfc", "ns2", "linux"],
    "host": ["tuned", "default"],
    "pattern": ["cbr", "onoff"],
    "distribution": ["exponential", "pareto"],
    "name": ["a", "flow", "x.y", "long-name_1", "é"],
    "description": ["", "a test", "ünïcode"],
}
GOOD_NUMBERS: dict[str, list[Any]] = {
    "hops": [2, 3, 4],
    "classes": [1, 2, 3],
    "count": [1, 2, 3, 5],
    "from": [0, 1],
    "to": [1, 2],
    "priority_class": [0, 1],
    "max_burst": [1, 4, 64],
    "gro_segments": [1, 4, 44],
    "sessions": [1, 2, 5],
    "pages_per_session": [1, 3, 10],
    "hosts": [1, 2, 4],
    "seed": [0, 1, 2, 12345, 2**64 - 1],
    "loss": [0.0, 0.001, 0.01],
    "reverse_loss": [0.0, 0.001],
    "initial_cwnd": [1, 2, 10, 1.5],
    "initial_ssthresh": [2, 64, 1000.0],
    "shape": [1.2, 1.5, 2.0],
    "arrival_rate": [1.0, 10.0, 50.0],
    "size_shape": [1.2, 1.5, 2.5],
    "objects_per_page": [1.0, 2.0, 3.5],
    "object_size_shape": [1.2, 2.0],
    "flows": [1, 16, 1024],
    "quantum": [64, 300, 1514],
    "drop_batch": [1, 64],
}

NAN, INF = float("nan"), float("inf")
DATES: list[Any] = [
    datetime.date(1979, 5, 27),
    datetime.time(7, 32),
    datetime.time(0, 0, 0, 999999),
    datetime.datetime(1979, 5, 27, 7, 32),
    datetime.datetime(1979, 5, 27, 7, 32, tzinfo=datetime.timezone.utc),
    datetime.datetime(2026, 1, 1, 0, 0, tzinfo=datetime.timezone(datetime.timedelta(hours=-7))),
]
WILD_NUMBERS: list[Any] = [
    0, -1, 1, 2, 2**31 - 1, 2**31, 2**32, 2**53 + 1, 2**63 - 1, -(2**63), 2**64 - 1, 10**18, -(10**18),
    0.0, -0.0, 0.5, -0.5, 1.5, 1e-9, 5e-324, 1e-300, 1e18, 1e300, -1e300, 1.7976931348623157e308, NAN, INF, -INF, True, False,
]
WILD_STRINGS: list[str] = [
    "", " ", "nan", "NaN", "inf", "-inf", "Infinity", "null", "none", "true", "0", "-1", "1e400", "\n", "\t", "\x7f", "\u2028",
    "é", "🚀", "\x1b[2J", "a" * 300, "x" * 10_000, "${HOME}", "../..", "/", ".", "..", "a/b", "%s%n", '"', "\\",
]
WILD_DURATIONS = [
    "0s", "0ns", "1ns", "-1ns", "-1s", "1e18ns", "1e19ns", "18446744073709551615ns", "18446744073709551616ns", "1e400s",
    "1e-400s", "0.1ns", "1.5ns", "nans", "infs", "-0s", "1e19s", "1e10s", "300000000000s", "20000s", "1min", "1e15min", "1h", "1d",
    "1 s", " 1s", "1s ", "1S", "1Ms", "1µs", "１s", "1e3", "1e3ms", "0x10s", "1_000ms", "+5s", "--5s", "5ss", "s", "ms",
    "1.s", ".5s", "5.s", "1e+3s", "1E3s", "1e-9s", "5us", "1fortnight",
]
WILD_RATES = [
    "0bps", "1bps", "0.001bps", "1Kbps", "1Tbps", "1e3Tbps", "1e30bps", "18446744073709551616bps", "1e400Gbps", "-1Mbps",
    "1Gbit", "1gbps", "1GBPS", "1 Gbps", "nanGbps", "infGbps", "1e-30Gbps", "1Pbps", "1e12Gbps", "Gbps", "1.5.5Mbps",
]
WILD_SIZES = [
    "0pkt", "1pkt", "1e20pkt", "18446744073709551616pkt", "-1pkt", "0.5pkt", "1.5pkt", "0B", "1B", "63B", "64B", "65535B",
    "65536B", "1e19B", "1e400B", "1GB", "1TB", "1e9GB", "0bdp", "1e-9bdp", "1e9bdp", "1e400bdp", "nanbdp", "-1bdp",
    "unlimited", "Unlimited", "infinite", "1KiB", "1kb", "pkt", "B", "1e6pkt", "4294967296pkt",
]


def deep_value(rng: random.Random, depth: int | None = None) -> Any:
    depth = depth if depth is not None else rng.choice([33, 34, 40, 64, 200])
    v: Any = rng.choice([1, "1s", []])
    for _ in range(depth):
        v = [v] if rng.random() < 0.5 else {"x": v}
    return v


def wild_value(rng: random.Random, field: str = "") -> Any:
    """An interesting value, leaning on the field's kind."""
    r = rng.random()
    if r < 0.35:
        if field in DURATION_FIELDS:
            return rng.choice(WILD_DURATIONS)
        if field == "rate":
            return rng.choice(WILD_RATES)
        if field in SIZE_FIELDS:
            return rng.choice(WILD_SIZES)
    r = rng.random()
    if r < 0.35:
        return rng.choice(WILD_NUMBERS)
    if r < 0.55:
        return rng.choice(WILD_DURATIONS + WILD_RATES + WILD_SIZES)
    if r < 0.67:
        return rng.choice(WILD_STRINGS)
    if r < 0.77:
        return rng.choice(DATES)
    if r < 0.95:
        return rng.choice([[], [1], ["1s", "2s"], {}, {"a": 1}, {"rate": "1Mbps"}, [[]], ["x"] * 1000, list(range(50))])
    return deep_value(rng)


def good_value(rng: random.Random, field: str, kind: str, algos: list[str], words: list[str] | None = None) -> Any:
    """A plausible value of a field of catalogue kind ``kind``."""
    if kind == "cc":
        return rng.choice(algos)
    if field in GOOD_STRINGS and kind not in ("float", "u32", "u64", "bool", "params"):
        v = rng.choice(GOOD_STRINGS[field])
        return [v] * rng.choice([1, 2, 3]) if kind == "size_list" else v
    if field in GOOD_NUMBERS:
        return rng.choice(GOOD_NUMBERS[field])
    if kind == "word" and words:
        return rng.choice(words)
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "float":
        return rng.choice([0.5, 1.0, 2.0])
    if kind in ("u32", "u64"):
        return rng.choice([0, 1, 2])
    if kind == "params":
        return random_params(rng)
    if kind == "size_list":
        return [rng.choice(["10pkt", "100pkt", "0.5bdp"])] * rng.choice([1, 2, 3])
    if kind == "name_list":
        return []  # flow names: valid whatever the flows are called
    return rng.choice(["x", "1s", "10Mbps"])


# =============================================================================
# TOML text
# =============================================================================

_BARE = re.compile(r"[A-Za-z0-9_-]+\Z")


class NotToml(Exception):
    """The value has no TOML spelling (None, a lone surrogate, ...)."""


def _toml_str(s: str) -> str:
    out = ['"']
    for c in s:
        o = ord(c)
        if c == '"':
            out.append('\\"')
        elif c == "\\":
            out.append("\\\\")
        elif c == "\n":
            out.append("\\n")
        elif c == "\t":
            out.append("\\t")
        elif o < 0x20 or o == 0x7F:
            out.append(f"\\u{o:04X}")
        elif 0xD800 <= o <= 0xDFFF:
            raise NotToml("lone surrogate")
        else:
            out.append(c)
    out.append('"')
    return "".join(out)


def toml_key(k: Any) -> str:
    if not isinstance(k, str):
        raise NotToml(f"key {k!r}")
    return k if _BARE.match(k) else _toml_str(k)


def toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return _toml_str(v)
    if isinstance(v, (datetime.datetime, datetime.date, datetime.time)):
        return v.isoformat()
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{toml_key(k)} = {toml_value(x)}" for k, x in v.items()) + "}"
    raise NotToml(type(v).__name__)


def to_toml(doc: dict) -> str:
    """A TOML document: top-level tables as [headers], arrays of tables as
    [[headers]], everything below inline. Raises NotToml."""
    head, tables, arrays = [], [], []
    for k, v in doc.items():
        if isinstance(v, dict) and v and all(isinstance(x, str) for x in v):
            tables.append((k, v))
        elif isinstance(v, list) and v and all(isinstance(e, dict) and e for e in v):
            arrays.append((k, v))
        else:
            head.append(f"{toml_key(k)} = {toml_value(v)}")
    out = head
    for k, v in tables:
        out.append(f"\n[{toml_key(k)}]")
        out.extend(f"{toml_key(kk)} = {toml_value(vv)}" for kk, vv in v.items())
    for k, v in arrays:
        for e in v:
            out.append(f"\n[[{toml_key(k)}]]")
            out.extend(f"{toml_key(kk)} = {toml_value(vv)}" for kk, vv in e.items())
    return "\n".join(out) + "\n"


# =============================================================================
# Inputs
# =============================================================================


class Corpus:
    """What the generators draw from: the schema, the algorithms, the scenario files."""

    def __init__(self) -> None:
        self.schema = scenario_schema()
        self.algos = _algorithms()
        self.files: list[tuple[str, dict]] = []
        for p in sorted(SCENARIOS.rglob("*.toml")):
            try:
                self.files.append((str(p.relative_to(ROOT)), tomllib.loads(p.read_text(encoding="utf-8"))))
            except (OSError, tomllib.TOMLDecodeError):
                continue
        self.with_reproduce = [(n, d) for n, d in self.files if isinstance(d.get("reproduce"), dict)]


_CORPUS: Corpus | None = None


def corpus() -> Corpus:
    global _CORPUS
    if _CORPUS is None:
        _CORPUS = Corpus()
    return _CORPUS


def make_input(seed: int, i: int, source: str | None = None) -> dict:
    """Input ``i`` of campaign ``seed``: a pure function of (seed, i, source)."""
    rng = random.Random(f"longfat-fuzz/{seed}/{i}/{source or ''}")
    src = source or rng.choices(SOURCES, WEIGHTS)[0]
    c = corpus()
    inp: dict = {"id": f"s{seed}-{source}-{i}" if source else f"s{seed}-{i}", "source": src, "kind": "scenario", "text": None, "doc": None, "path": None, "seed": None, "overrides": [], "quick": False, "origin": ""}
    if src == "schema":
        doc = gen_schema(rng, c)
        if rng.random() < 0.1:
            _pythonize(rng, doc)
            inp["doc"] = doc
        else:
            _set_text(inp, doc, rng)
        if rng.random() < 0.15:
            inp["seed"] = rng.choice([0, 1, 7, 2**63, 2**64 - 1, 2**64, -1])
    elif src == "mutate":
        name, base = rng.choice(c.files)
        inp["origin"] = name
        doc = copy.deepcopy(base)
        if rng.random() < 0.6:
            _shrink(rng, doc)
        for _ in range(rng.choice([1, 1, 1, 2, 2, 3, 5])):
            mutate(rng, doc, c)
        _set_text(inp, doc, rng, text_mutation=rng.random() < 0.1)
    elif src == "reproduce":
        name, base = rng.choice(c.with_reproduce)
        inp["origin"] = name
        inp["kind"] = "reproduce"
        inp["quick"] = rng.random() < 0.5
        doc = copy.deepcopy(base)
        for _ in range(rng.choice([1, 1, 2, 3])):
            mutate_reproduce(rng, doc, c)
        if rng.random() < 0.2:
            mutate(rng, doc, c)
        _set_text(inp, doc, rng)
    elif src == "sweep":
        make_sweep_input(rng, c, inp)
        inp["run_cells"] = rng.random() < 0.15
    else:  # override
        name, base = rng.choice(c.files)
        inp["origin"] = name
        doc = copy.deepcopy(base)
        if rng.random() < 0.7:
            _shrink(rng, doc)
        if rng.random() < 0.04:
            doc["run"] = rng.choice([5, "fast", [], True, DATES[0]])
        _set_text(inp, doc, rng)
        inp["overrides"] = [gen_override(rng, doc, c) for _ in range(rng.choice([1, 1, 2, 3, 4]))]
        if rng.random() < 0.35:
            inp["seed"] = rng.choice([0, 1, 3, 2**32, 2**63, 2**64 - 1, 2**64, 2**70, -1])
    return inp


def _set_text(inp: dict, doc: dict, rng: random.Random, text_mutation: bool = False) -> None:
    try:
        text = to_toml(doc)
    except NotToml:
        inp["doc"] = doc
        return
    if text_mutation:
        text = mutate_text(rng, text)
    inp["text"] = text


def gen_schema(rng: random.Random, c: Corpus) -> dict:
    """A random scenario over the schema: every struct's fields, a random
    subset of the optional ones, mostly plausible values, a few wild ones."""
    wild_p = rng.choice([0.0, 0.0, 0.0, 0.01, 0.03, 0.1])
    schema = c.schema

    def build(struct: str, depth: int = 0) -> dict:
        out: dict = {}
        for field, f in schema.get(struct, []):
            if f["required"]:
                if rng.random() < 0.01:
                    continue
            elif field == "flows":
                if rng.random() < 0.03:
                    continue
            elif rng.random() > 0.3:
                continue
            if rng.random() < wild_p:
                out[field] = wild_value(rng, field)
                continue
            if f["kind"] == "tables":
                n = rng.choice([0, 1, 1, 2, 3]) if field != "flows" else rng.choice([1, 1, 2, 3])
                out[field] = [build(f["table"], depth + 1) for _ in range(n)]
            elif f["kind"] == "table":
                out[field] = build(f["table"], depth + 1)
            else:
                out[field] = good_value(rng, field, f["kind"], c.algos, f.get("words"))
        if rng.random() < wild_p:
            out[rng.choice(["colour", "Rate", "a b", "", "a.b", "\n", "ü", "x" * 300, "flows", "seed"])] = wild_value(rng)
        return out

    doc = build("Scenario")
    net = doc.get("network")
    if isinstance(net, dict):
        if net.get("topology") == "parking_lot" and "hops" not in net and rng.random() < 0.9:
            net["hops"] = rng.choice([2, 3, 4])
        if net.get("topology") == "dumbbell" and rng.random() < 0.8:
            net.pop("hops", None)
        bn = net.get("bottleneck")
        if isinstance(bn, dict) and bn.get("discipline") != "priority" and rng.random() < 0.9:
            bn.pop("classes", None)
            bn.pop("class_queues", None)
        aqm = bn.get("aqm") if isinstance(bn, dict) else None
        if isinstance(aqm, dict) and aqm and rng.random() < 0.9:
            # Mostly a discipline that takes the table's fields: one of the
            # disciplines of a field drawn from it (fields.rs AQM_OWNERS, as
            # "disciplines"), without the other disciplines' fields, which
            # it would refuse.
            decls = dict(schema.get("AqmCfg", []))
            owners = decls.get(rng.choice(sorted(aqm)), {}).get("disciplines")
            if owners:
                bn["discipline"] = rng.choice(owners)
                for field in list(aqm):
                    if bn["discipline"] not in decls.get(field, {}).get("disciplines", [bn["discipline"]]):
                        del aqm[field]
                if "target_delay" in aqm and rng.random() < 0.9:
                    for field in ("min_th", "max_th", "weight"):
                        aqm.pop(field, None)
                if aqm.get("adaptive") is not True and rng.random() < 0.9:
                    aqm.pop("ared_interval", None)
        if isinstance(bn, dict) and bn.get("discipline") not in ("codel", "fq_codel", "red", "pie") and rng.random() < 0.9:
            bn.pop("aqm", None)
    for key in ("flows", "udp", "short_flows", "web"):
        for e in doc.get(key, []) if isinstance(doc.get(key), list) else []:
            if isinstance(e, dict) and rng.random() < 0.8:
                # Mostly coherent entries, so that many scenarios run.
                for f in ("from", "to", "stop", "start_spacing", "start_jitter"):
                    e.pop(f, None)
                if e.get("pattern") != "onoff":
                    for f in ("on_mean", "off_mean", "distribution", "shape"):
                        e.pop(f, None)
                if e.get("distribution") != "pareto":
                    e.pop("shape", None)
                tcp = e.get("tcp")
                if isinstance(tcp, dict) and rng.random() < 0.7:
                    for f in ("min_rto", "max_rto", "priority_class", "header_size"):
                        tcp.pop(f, None)
    run = doc.get("run")
    if isinstance(run, dict) and rng.random() < 0.8:
        run.pop("measure_from", None)
    return doc


def _pythonize(rng: random.Random, doc: dict) -> None:
    """Python-only values for the dict path: None, tuples, sets, bytes,
    non-string keys, lone surrogates, numpy scalars, a cycle."""
    choices = [None, (1, 2), {1, 2}, b"10s", object(), "\ud800", 10**5000, {1: "a"}, {("a",): 1}]
    try:
        import numpy as np

        choices += [np.int64(5), np.float64("nan"), np.float32(1.5), np.array([1, 2])]
    except ImportError:
        pass
    paths = list(_paths(doc))
    if not paths:
        return
    parent, key = rng.choice(paths)
    if rng.random() < 0.1:
        parent[key] = parent  # a cycle
    else:
        parent[key] = rng.choice(choices)


def _paths(node: Any, depth: int = 0) -> Iterable[tuple[Any, Any]]:
    """(container, key) for every value below ``node``."""
    if depth > 40:
        return
    if isinstance(node, dict):
        for k in list(node):
            yield node, k
            yield from _paths(node[k], depth + 1)
    elif isinstance(node, list):
        for i in range(len(node)):
            yield node, i
            yield from _paths(node[i], depth + 1)


def _dotted(node: Any, prefix: str = "", depth: int = 0) -> Iterable[str]:
    """``--set`` paths of every value below ``node``."""
    if depth > 8:
        return
    if isinstance(node, dict):
        for k, v in node.items():
            if not isinstance(k, str):
                continue
            p = f"{prefix}.{k}" if prefix else k
            yield p
            yield from _dotted(v, p, depth + 1)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            p = f"{prefix}[{i}]"
            yield p
            yield from _dotted(v, p, depth + 1)


def _shrink(rng: random.Random, doc: dict) -> None:
    """Short runs, so that accepted inputs often run to their end."""
    run = doc.get("run")
    if isinstance(run, dict):
        run["duration"] = rng.choice(["0.2s", "0.5s", "1s", "2s"])
        run.pop("measure_from", None)
        run.pop("sample_interval", None)
    net = doc.get("network")
    if isinstance(net, dict) and isinstance(net.get("bottleneck"), dict) and rng.random() < 0.7:
        net["bottleneck"]["rate"] = rng.choice(["5Mbps", "10Mbps", "20Mbps"])
    for key in ("flows", "udp", "short_flows", "web"):
        for e in doc.get(key, []) if isinstance(doc.get(key), list) else []:
            if isinstance(e, dict):
                for f in ("start", "stop", "start_jitter", "start_spacing", "session_spread"):
                    e.pop(f, None)
                if key == "udp" and isinstance(e.get("count"), int):
                    e["count"] = min(e["count"], 5)


def mutate(rng: random.Random, doc: dict, c: Corpus) -> None:
    """One random change somewhere in ``doc`` ([reproduce] included)."""
    paths = list(_paths(doc))
    if not paths:
        doc[rng.choice(["network", "run", "x"])] = wild_value(rng)
        return
    parent, key = rng.choice(paths)
    op = rng.choice(["drop", "dup", "retype", "wild", "wild", "deep", "date", "unknown", "scale", "swap", "big"])
    v = parent[key]
    field = key if isinstance(key, str) else ""
    if op == "drop":
        del parent[key]
    elif op == "dup":
        if isinstance(parent, list):
            parent.insert(key, copy.deepcopy(v))
        else:
            parent[f"{key}_2" if rng.random() < 0.5 else key.upper()] = copy.deepcopy(v)
    elif op == "retype":
        parent[key] = rng.choice([[v], {"value": v}, str(v)[:50], 1, 1.5, True, [], {}])
    elif op == "wild":
        parent[key] = wild_value(rng, field)
    elif op == "deep":
        parent[key] = deep_value(rng)
    elif op == "date":
        parent[key] = rng.choice(DATES)
    elif op == "unknown":
        target = v if isinstance(v, dict) else parent if isinstance(parent, dict) else doc
        target[rng.choice(["colour", "rate_", "Rate", "a b", "", "a.b", "ü", "\t", "x" * 200, "seed", "flows"])] = wild_value(rng)
    elif op == "scale":
        if isinstance(v, str):
            m = re.match(r"([0-9.]+)(.*)", v)
            if m:
                parent[key] = rng.choice(["0", "-" + m.group(1), m.group(1) + "e18", m.group(1) + "e-12", "1e300", "0.0000001"]) + m.group(2)
            else:
                parent[key] = v + rng.choice(["s", "pkt", "bps", "x"])
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            parent[key] = rng.choice([v * 10**9, -v, v + 0.5, 2**64, 0])
        else:
            parent[key] = wild_value(rng, field)
    elif op == "swap":
        _, other = rng.choice(c.files)
        others = list(_paths(other))
        if others:
            p2, k2 = rng.choice(others)
            parent[key] = copy.deepcopy(p2[k2])
    elif op == "big":
        if isinstance(parent, list):
            parent.extend(copy.deepcopy(v) for _ in range(rng.choice([10, 100, 1000])))
        elif field in ("count", "sessions", "hosts", "pages_per_session", "hops", "classes"):
            parent[key] = rng.choice([33, 64, 65, 1000, 10_000, 100_000, 2**32 - 1])
        else:
            parent[key] = rng.choice([["x"] * 1000, "y" * 100_000, list(range(10_000))])


def mutate_text(rng: random.Random, text: str) -> str:
    lines = text.split("\n")
    op = rng.choice(["del", "dup", "garbage", "truncate", "swapchar", "bom", "crlf", "nul"])
    i = rng.randrange(len(lines))
    if op == "del":
        del lines[i]
    elif op == "dup":
        lines.insert(i, lines[i])
    elif op == "garbage":
        lines.insert(i, rng.choice(["[", "]]", "= 1", "a = ", 'a = """', "a = 1979-05-27T", "[[run]]", "x = [[[[", "\x00", "\ufeff"]))
    elif op == "truncate":
        return text[: rng.randrange(len(text) + 1)]
    elif op == "swapchar" and lines[i]:
        j = rng.randrange(len(lines[i]))
        lines[i] = lines[i][:j] + rng.choice("[]{}=\"'#.,\\") + lines[i][j + 1 :]
    elif op == "bom":
        return "\ufeff" + text
    elif op == "crlf":
        return text.replace("\n", "\r\n")
    elif op == "nul":
        return text.replace("=", "=\x00", 1)
    return "\n".join(lines)


def mutate_reproduce(rng: random.Random, doc: dict, c: Corpus) -> None:
    """One change to the [reproduce] table."""
    rep = doc.get("reproduce")
    if not isinstance(rep, dict):
        doc["reproduce"] = rep = {}
    paths = sorted(_dotted(doc), key=str)
    scenario_paths = [p for p in paths if not p.startswith("reproduce")] or ["run.duration"]
    sp = rng.choice(scenario_paths)
    field = rng.choice(["seeds", "looks", "cases", "vary", "quick", "title", "criteria", "unknown", "whole"])
    if field == "looks":
        n = len(rep["seeds"]) if isinstance(rep.get("seeds"), list) else 1
        rep["looks"] = rng.choice([[n, n + 5], [n, 2 * n + 1, 1000], [n, n], [n + 1, n + 5], [n, n + 1, n + 2, n + 3, n + 4], [n], [],
                                   "5", [n, 1.5], [n, True], [n, 1001], [n, 2**64], [n, -1], [[n]], {"a": n}, [n, 10_000]])
    elif field == "seeds":
        rep["seeds"] = rng.choice([[-1], [2**64], [2**64 - 1], "1", [], [1.5], [True], list(range(1001)), list(range(1000)), [1, 1], [DATES[0]], 5, [[1]], [0, 2**63]])
    elif field == "cases":
        rep["cases"] = rng.choice([
            [1], "x", [{}], [{"a..b": 1}], [{"flows[9].cc": "reno"}], [{"run": 5}], [{"flows[0].cc": wild_value(rng, "cc")}],
            [{sp: wild_value(rng, sp.rsplit(".", 1)[-1])}], [{sp: []}], [{"": 1}], [{"flows[0]": 5}],
            [{"network": "x"}], [{" run.seed ": 1}], [{"flows[²].cc": "reno"}], [{"flows[99999999999999999999].cc": "reno"}],
            [{"run.seed": 2**64}], [{"reproduce.seeds": [1]}], [], {}, [{sp: deep_value(rng, 30)}],
        ] + [[{"flows[0].cc": a} for a in c.algos]])
    elif field == "vary":
        rep["vary"] = rng.choice([
            {sp: []}, {sp: 5}, [], "x", {"a..b": [1]}, {sp: [wild_value(rng, sp.rsplit(".", 1)[-1]), wild_value(rng)]},
            {"flows[0].cc": ["reno"] * 1000, "run.seed": list(range(1000))},
            {"flows[0].cc": ["reno"] * 101, "network.bottleneck.delay": ["1ms"] * 100},
            {"flows[0].cc": list(c.algos), sp: [copy.deepcopy(_get(doc, sp))] * 3},
            {f"x{i}": [1, 2] for i in range(40)}, {"flows[0].count": [1, 2, 3]},
            {sp: [NAN]}, {sp: [DATES[1]]}, {"run": [1, 2]}, {"flows": [[], {}]},
        ])
    elif field == "quick":
        rep["quick"] = rng.choice([
            5, "x", [], {"reproduce": 5}, {"reproduce.seeds": [1, 2]}, {"reproduce.seeds": "x"}, {"reproduce.vary.x": [1]},
            {"reproduce.vary": {"flows[0].cc": ["reno"] * 200, "run.seed": list(range(100))}},
            {"run.duration": wild_value(rng, "duration")}, {"flows[0]": 5}, {"network": "x"}, {"reproduce.quick.x": 1},
            {"reproduce.cases": [{"flows[5].cc": "reno"}]}, {sp: wild_value(rng, sp.rsplit(".", 1)[-1])}, {"a..b": 1},
            {"run": {"duration": "1s"}}, {"reproduce.title": 5}, {"reproduce": {}}, {"description": deep_value(rng, 31)},
            {"reproduce.looks": [1, 2]}, {"reproduce.looks": [5, 3]}, {"reproduce.seeds": [1], "reproduce.looks": [1, 3]},
        ])
    elif field == "criteria":
        # One criterion of the table (an existing one, or a new "q") with one
        # field set to a value the loader must refuse or accept by name
        # (reproduce/criteria.py: spans, forms, scopes, controls).
        crit = rep.get("criteria")
        if not isinstance(crit, dict):
            rep["criteria"] = crit = {}
        names = [k for k in crit if isinstance(crit.get(k), dict)]
        cid = rng.choice(names) if names and rng.random() < 0.7 else "q"
        spec = crit.setdefault(cid, {"kind": "ci", "lo": 0.9, "hi": 1.0, "span": [0, 1]})
        if not isinstance(spec, dict):
            crit[cid] = spec = {"kind": "ci"}
        key, val = rng.choice([
            ("span", rng.choice([[0, 1], [1, 0], [0], "x", [NAN, 1], [0, 1e300], [-1e12, 1e12], []])),
            ("judge", rng.choice(["every_seed", "mean", 5, ""])), ("stat", rng.choice(["log", "median", None, 1])),
            ("scope", rng.choice(["claim", "consistency", "beyond", "sensitivity", "other", 5])),
            ("claim", rng.choice([">", "<", ">=", "<=", "!=", "="])), ("tol", rng.choice([0.5, 0.51, 0.999, 0, -1, NAN])),
            ("factor", rng.choice([1.5, 1.99, 2, 2.414, 1, 0])), ("one_sided", rng.choice(["x", "a b c d e f", "", 5])),
            ("control", rng.choice([cid, "nope", *(names[:2])])), ("kind", rng.choice(["ci", "separate", "rel", "factor", "range", "between"])),
            ("lo", rng.choice([0, -1e12, NAN, 0.99, 2])), ("hi", rng.choice([1, 1e12, NAN, 0.5])), ("paper", rng.choice([0, 1, -1, NAN])),
        ])
        if val is None:
            spec.pop(key, None)
        else:
            spec[key] = val
    elif field == "title":
        rep["title"] = rng.choice([5, DATES[0], [], "", "x" * 10_000, "a\nb", {"a": 1}])
    elif field == "unknown":
        rep[rng.choice(["colour", "seed", "Cases", "", "a b"])] = wild_value(rng)
    else:
        doc["reproduce"] = rng.choice([5, "x", [], [{}], DATES[0], True])


def _get(doc: Any, dotted: str) -> Any:
    node = doc
    for part in re.findall(r"[^.\[\]]+|\[\d+\]", dotted):
        try:
            node = node[int(part[1:-1])] if part.startswith("[") else node[part]
        except (KeyError, IndexError, TypeError, ValueError):
            return None
    return node


def gen_override(rng: random.Random, doc: dict, c: Corpus) -> str:
    """One ``--set`` string: a real path or a malformed one, a plausible
    value, a wild one or raw text."""
    paths = [p for p in _dotted(doc) if not p.startswith("reproduce")] or ["run.duration"]
    p = rng.choice(paths)
    r = rng.random()
    if r < 0.7:
        key = p
    elif r < 0.8:
        key = rng.choice(["run.seed", "run", "flows", "network", "run.duration", "flows[0].cc", "flows[0].tcp.initial_cwnd", "udp[0].rate", "flows[0].params.beta"])
    else:
        key = rng.choice([
            "flows[7].cc", "flows[99999999999999999999].cc", "flows[" + "9" * 5000 + "].cc", "flows[٣].cc", "flows[²].cc",
            "flows.0.cc", "flows[-1].cc", "run[0]", "run.duration.x", "a..b", ".a", "a.", " run.seed ", "flows[0",
            "flows]0[", "flows[0][0]", "run.dur ation", "run.düration", "run.duration\n", "run\x00", "a." * 3000 + "b", "", " ",
            "x" * 10_000, p + ".x", p + "[0]", p.replace(".", ".."), "network.bottleneck[1]", "flows[0].params", "reproduce.x",
        ])
    leaf = re.sub(r"\[\d+\]$", "", p.rsplit(".", 1)[-1])
    r = rng.random()
    try:
        if r < 0.5:
            text = toml_value(good_value(rng, leaf, "text" if leaf in GOOD_STRINGS else "float", c.algos) or "1s")
        elif r < 0.8:
            text = toml_value(wild_value(rng, leaf))
        else:
            raise NotToml
    except NotToml:
        text = rng.choice([
            "reno", "10s", "1979-05-27", "07:32:00", "1979-05-27T07:32:00Z", "nan", "inf", "-inf", "1e400", "9" * 5000,
            "0x7fffffffffffffff", "[" * 2000, "[" * 40 + "]" * 40, "{a=1", "{}", "[]", '"', '"""', "a=b", "1\nx = 2", "true",
            "", " ", "\x00", "{" * 3000 + "}" * 3000, "[" * 500 + "]" * 500, '"10s" # comment', "1_000", "+inf", "[1, 2,]",
        ])
    return f"{key}={text}" if rng.random() > 0.03 else key


# =============================================================================
# Sweeps: [sweep] tables and longfat sweep's --grid/--cc/--seeds
# =============================================================================

#: python/longfat/sweep.py's MAX_CELLS.
from longfat.sweep import MAX_CELLS  # noqa: E402
#: A sweep input validates at most this many cells (or for SWEEP_EXPAND_S
#: seconds), as a scenario input runs a bounded number of events: a grid the
#: sweep allows may hold a million cells.
SWEEP_CELL_BUDGET = 200
SWEEP_EXPAND_S = 4.0
#: A grid of more than MAX_CELLS cells must be refused within this many
#: seconds of expand() being called, its peak memory growing by at most
#: SWEEP_REFUSE_MB (it is refused before anything is expanded).
SWEEP_REFUSE_S = 1.0
SWEEP_REFUSE_MB = 64
#: What a run of the command line may cost (estimated events over all cells).
SWEEP_CLI_EVENTS = 2_000_000

SWEEP_BAD_KEYS = [
    "a..b", "", " ", ".a", "a.", "flows[99].cc", "flows[0", "flows]0[", "flows[99999999999999999999].cc",
    "flows[" + "9" * 5000 + "].cc", "flows[-1].cc", "flows[٣].cc", "flows[²].cc", "run[0]", "run.duration.x",
    "run.dur ation", "run.düration", "run.duration\n", "run\x00", "\n", "ü", "x" * 10_000, "a." * 3000 + "b",
    "sweep", "sweep.seeds", "sweep.grid.x", "reproduce.x", "network.bottleneck[1]", "flows[0][0]", "colour",
    "network.colour", "flows[0].params", "flows[0].params.nope", "flows.0.cc", " run.seed ", "run.seed", "name",
    "flows", "network", "run", "description", "cc", "seed", "flows[0].cc", "run.seed.x",
]


def _sweep_table(rng: random.Random, doc: dict, c: Corpus) -> dict:
    """A plausible [sweep] table over ``doc``: a few algorithms, seeds, and
    up to three grid keys (real paths of the document) of 1-3 values each."""
    table: dict = {}
    if rng.random() < 0.6:
        table["cc"] = rng.sample(c.algos, rng.choice([1, 1, 2, 3]))
    r = rng.random()
    if r < 0.35:
        table["seeds"] = rng.choice([1, 2, 3])
    elif r < 0.55:
        table["seeds"] = rng.sample([1, 2, 3, 7, 42, 2**32, 2**64 - 1], rng.choice([1, 2, 3]))
    paths = [p for p in _dotted(doc) if not p.startswith(("reproduce", "sweep")) and not isinstance(_get(doc, p), (dict, list))]
    grid: dict = {}
    for _ in range(rng.choice([0, 1, 1, 2, 2, 3])):
        if not paths:
            break
        p = rng.choice(paths)
        leaf = re.sub(r"\[\d+\]$", "", p.rsplit(".", 1)[-1])
        cur = _get(doc, p)
        vals = [cur]
        for _ in range(rng.choice([0, 1, 1, 2])):
            v = good_value(rng, leaf, "text" if leaf in GOOD_STRINGS else "float", c.algos) if rng.random() < 0.9 else wild_value(rng, leaf)
            if v is not None and v not in vals:
                vals.append(v)
        rng.shuffle(vals)
        grid[p] = vals
    if grid or rng.random() < 0.3:
        table["grid"] = grid
    return table


HUGE_SHAPES = ("seeds-x-axes", "two-1001", "file-and-args", "exact", "exact+1", "many-axes", "one-axis")


def _huge_grid(rng: random.Random, doc: dict, c: Corpus, shape: str | None = None) -> tuple[dict, list[str], Any]:
    """A grid at or past MAX_CELLS: (the [sweep] table, --grid arguments,
    --seeds). Values are valid copies, so only the count can refuse it (or,
    at exactly MAX_CELLS, the first cell, made bad on purpose)."""
    delay = ["1ms", "2ms", "3ms", "5ms", "10ms", "20ms", "35ms", "50ms", "70ms", "100ms"]
    shape = shape or rng.choice(HUGE_SHAPES)
    if shape == "seeds-x-axes":
        return {"seeds": 10_000, "grid": {"network.bottleneck.delay": delay, "run.duration": ["0.2s"] * 11}}, [], None
    if shape == "two-1001":
        return {}, [f"network.bottleneck.delay={toml_value(['1ms'] * 1001)}", f"run.duration={toml_value(['0.2s'] * 1001)}"], None
    if shape == "file-and-args":
        return {"cc": c.algos[:10], "grid": {"network.bottleneck.delay": delay}}, [f"run.duration={toml_value(['0.2s'] * 1001)}"], rng.choice([11, 10_000])
    if shape in ("exact", "exact+1"):
        # (MAX_CELLS / 1000) x 1000 = MAX_CELLS: allowed, so its first cell
        # is bad (a refusal at cell 1 shows expansion started; only the
        # count should refuse one more).
        first = ["fast"] + ["1ms"] * (MAX_CELLS // 1000 - 1)
        extra = ["1ms"] if shape == "exact+1" else []
        return {"grid": {"network.bottleneck.delay": first + extra}}, [f"run.duration={toml_value(['0.2s'] * 1000)}"], None
    if shape == "many-axes":
        return {"grid": {f"flows[0].params.{k}": [0.5, 0.6, 0.7] for k in PARAM_NAMES[: rng.choice([13, 20, 31])]}}, [], None
    return {"seeds": 10_000}, [f"run.duration={toml_value(['0.2s'] * rng.choice([101, 201, 1000]))}"], None


def mutate_sweep(rng: random.Random, doc: dict, c: Corpus) -> None:
    """One change to the [sweep] table."""
    sw = doc.get("sweep")
    if not isinstance(sw, dict):
        doc["sweep"] = sw = {}
    paths = [p for p in _dotted(doc) if not p.startswith(("reproduce", "sweep"))] or ["run.duration"]
    sp = rng.choice(paths)
    leaf = re.sub(r"\[\d+\]$", "", sp.rsplit(".", 1)[-1])
    grid = sw.get("grid") if isinstance(sw.get("grid"), dict) else None
    what = rng.choice(["seeds", "seeds", "cc", "cc", "grid", "key", "key", "value", "value", "value", "unknown", "whole", "dup", "nested"])
    if what == "seeds":
        sw["seeds"] = rng.choice([
            0, -1, 1, 10_000, 10_001, 2**63, 2**64, 10**30, 1.5, 3.0, NAN, INF, "3", "", True, False, [], [1, 1], [3, 1, 3],
            [-1], [2**64], [2**64 - 1], [0], [1.5], [True], ["1"], [[1]], [DATES[0]], DATES[0], {"n": 3}, list(range(10_001)),
            list(range(10_000)), [1] * 1000, [NAN], deep_value(rng, 40),
        ])
    elif what == "cc":
        sw["cc"] = rng.choice([
            "reno", [], [1], [""], ["nope"], ["reno", "reno"], ["RENO"], [" reno"], ["reno,cubic"], ["reno", 5], list(c.algos),
            [DATES[1]], [NAN], {"reno": 1}, ["a" * 10_000], ["reno\n"], [[]], deep_value(rng, 35), ["é"], [None] if rng.random() < 0.5 else [True],
        ])
    elif what == "grid":
        sw["grid"] = rng.choice([3, "x", [], [["a", 1]], True, DATES[0], NAN, {}, {"": []}, {sp: []}, deep_value(rng, 36)])
    elif what == "key":
        g = sw.setdefault("grid", {}) if grid is None else grid
        if isinstance(g, dict):
            k = rng.choice(SWEEP_BAD_KEYS + [sp + ".x", sp + "[0]", sp.replace(".", ".."), sp.replace("[", "."), sp.upper(), sp + " "])
            g[k] = [copy.deepcopy(_get(doc, sp))] if rng.random() < 0.5 else [wild_value(rng, leaf)]
    elif what == "value":
        g = sw.setdefault("grid", {}) if grid is None else grid
        if isinstance(g, dict):
            g[sp] = rng.choice([
                [], 5, "1s", {}, [NAN], [INF], [-INF], [DATES[0]], [DATES[3]], [wild_value(rng, leaf)], [wild_value(rng, leaf), wild_value(rng)],
                [deep_value(rng)], [deep_value(rng, 30)], [[]], [{}], [copy.deepcopy(_get(doc, sp))] * 10_000, ["1s", 1, True],
                [10**40], [2**64], [-(2**63) - 1], [1, 1.0, True], ["x" * 100_000], list(range(1000)), [None] if rng.random() < 0.3 else ["null"],
            ])
    elif what == "unknown":
        sw[rng.choice(["Grid", "seed", "vary", "cases", "", "a b", "cc ", "grid.x", "ü", "\n", "x" * 300, "quick"])] = wild_value(rng)
    elif what == "whole":
        doc["sweep"] = rng.choice([5, "x", [], [{}], [{"cc": ["reno"]}], DATES[0], True, NAN, deep_value(rng, 34), {"sweep": {"cc": ["reno"]}}])
    elif what == "dup":
        # The same field twice, spelled two ways; or a path inside another.
        g = sw.get("grid")
        if not isinstance(g, dict):
            g = sw["grid"] = {}
        if True:
            cur = copy.deepcopy(_get(doc, sp))
            alt = rng.choice([re.sub(r"\[(\d+)\]", r".\1", sp), sp.rsplit(".", 1)[0] if "." in sp else sp, sp])
            g[sp] = [cur]
            g[alt] = [copy.deepcopy(_get(doc, alt))] if alt != sp else [cur, cur]
    else:  # nested: keys written bare in TOML make tables, not dotted keys
        g = sw.setdefault("grid", {}) if grid is None else grid
        if isinstance(g, dict):
            node = g
            parts = sp.replace("[", ".").replace("]", "").split(".")
            for part in parts[:-1]:
                node = node.setdefault(part, {}) if isinstance(node.get(part, {}), dict) else node
            node[parts[-1]] = [copy.deepcopy(_get(doc, sp))]


def gen_grid_arg(rng: random.Random, doc: dict, c: Corpus) -> str:
    """One ``--grid KEY=[...]`` argument: a real path or a malformed one,
    values plausible, wild or raw text."""
    paths = [p for p in _dotted(doc) if not p.startswith(("reproduce", "sweep")) and not isinstance(_get(doc, p), (dict, list))] or ["run.duration"]
    p = rng.choice(paths)
    r = rng.random()
    key = p if r < 0.75 else rng.choice(SWEEP_BAD_KEYS + [p + ".x", p + "[0]", p.replace(".", ".."), re.sub(r"\[(\d+)\]", r".\1", p)])
    leaf = re.sub(r"\[\d+\]$", "", p.rsplit(".", 1)[-1])
    r = rng.random()
    try:
        if r < 0.55:
            vals = [copy.deepcopy(_get(doc, p))]
            for _ in range(rng.choice([0, 1, 1, 2])):
                v = good_value(rng, leaf, "text" if leaf in GOOD_STRINGS else "float", c.algos)
                if v is not None:
                    vals.append(v)
            text = toml_value(vals)
        elif r < 0.8:
            text = toml_value(rng.choice([[wild_value(rng, leaf)], [wild_value(rng, leaf), wild_value(rng)], wild_value(rng, leaf), []]))
        else:
            raise NotToml
    except NotToml:
        text = rng.choice([
            "", "[]", "[", "]", "10s", '"10s"', "[1979-05-27]", "[07:32:00]", "[1979-05-27T07:32:00Z]", "[nan]", "[inf, -inf]",
            "[1e400]", "[" + "9" * 5000 + "]", "[" * 2000 + "]" * 2000, "[" * 40 + "]" * 40, "[{}]", "[{a=1}]", '["a", 1]',
            "[1, 2,]", "[1]\nx = 2", "[1] # comment", "[1,\n2]", '["reno"]', "[true]", "[[1, 2]]", "{a = [1]}", "[0x10]",
            "[1_000]", "[+inf]", "[18446744073709551616]", "[-9223372036854775809]", "[" + ", ".join(['"1ms"'] * 20_000) + "]", "\x00",
        ])
    sep = rng.choice(["=", "=", "=", "=", " = ", "==", ":"])
    return f"{key}{sep}{text}" if rng.random() > 0.03 else key


def gen_cc_arg(rng: random.Random, c: Corpus) -> str:
    if rng.random() < 0.6:
        return ",".join(rng.sample(c.algos, rng.choice([1, 1, 2, 3])))
    return rng.choice([
        "", ",", " ", "reno,,cubic", "RENO", " reno ", "reno,reno", "nope", "reno,nope", "a" * 10_000, "reno\n", ",".join(c.algos),
        ",".join(c.algos * 2), "reno;cubic", "reno cubic", "é", "\x00", "reno,", ",reno", ",".join(["reno"] * 5000),
    ])


def gen_seeds_arg(rng: random.Random, cli_only: bool = False) -> Any:
    """``--seeds``: an int (as argparse gives it) or, for the command line
    only, raw text argparse must refuse."""
    if cli_only and rng.random() < 0.25:
        return rng.choice(["abc", "1.5", "", "1e3", "0x10", " 3", "３", "--", "nan", "-", "2" * 5000])
    return rng.choice([1, 1, 2, 3, 0, -1, 10_000, 10_001, 2**63, 2**64, 10**30, -(10**30)])


def make_sweep_input(rng: random.Random, c: Corpus, inp: dict) -> None:
    """A scenario file with a [sweep] table (usually) and the command line's
    grid arguments over it; kind "sweep"."""
    name, base = rng.choice(c.files)
    inp["origin"] = name
    inp["kind"] = "sweep"
    doc = copy.deepcopy(base)
    doc.pop("reproduce", None) if rng.random() < 0.8 else None
    _shrink(rng, doc)
    run = doc.get("run")
    if isinstance(run, dict) and rng.random() < 0.95:
        run["duration"] = "0.2s"  # inputs that run stay cheap
    args: dict = {"grid": [], "cc": None, "seeds": None}
    if rng.random() < 0.06:
        table, grid_args, seeds = _huge_grid(rng, doc, c)
        if table:
            doc["sweep"] = table
        args.update(grid=grid_args, seeds=seeds)
    else:
        if rng.random() < 0.8:
            doc["sweep"] = _sweep_table(rng, doc, c)
        for _ in range(rng.choice([0, 0, 1, 1, 2, 3, 4])):
            mutate_sweep(rng, doc, c)
        if rng.random() < 0.1:
            mutate(rng, doc, c)
        if rng.random() < 0.4:
            args["grid"] = [gen_grid_arg(rng, doc, c) for _ in range(rng.choice([1, 1, 2, 3]))]
        if rng.random() < 0.3:
            args["cc"] = gen_cc_arg(rng, c)
        if rng.random() < 0.25:
            args["seeds"] = gen_seeds_arg(rng)
    inp["sweep"] = args
    if rng.random() < 0.2:
        inp["overrides"] = [gen_override(rng, doc, c) for _ in range(rng.choice([1, 1, 2]))]
    if rng.random() < 0.08:
        _pythonize(rng, doc.get("sweep") if isinstance(doc.get("sweep"), dict) and doc["sweep"] else doc)
        inp["doc"] = doc
        return
    _set_text(inp, doc, rng, text_mutation=rng.random() < 0.04)


class _StopExpand(Exception):
    """Raised from expand's on_cell: enough cells were validated."""


def _sweep_keys(key: str) -> list | None:
    try:
        from longfat.scenario import split_key

        return split_key(key, "fuzz")
    except Exception:
        return None


def _get_parts(doc: Any, parts: list) -> Any:
    node = doc
    for part in parts:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return _MISSING
    return node


_MISSING = object()


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))


def run_sweep_input(inp: dict, src: Any, res: dict, workdir: Path) -> None:
    """``load_sweep`` (with --set), ``grid_from_args`` (--grid, --cc,
    --seeds) and ``expand`` (every cell validated, up to a budget of cells),
    as ``longfat sweep`` does, plus checks of their promises: a grid of more
    than MAX_CELLS cells is refused before any cell is expanded (fast, in
    little memory); every cell's labels are what its scenario holds; and,
    for a few cheap grids, the first cells run into a study (run_cells),
    none failing. Problems are BUG results; ScenarioErrors propagate."""
    import resource

    import longfat.sweep as sweep_mod

    limit = getattr(sweep_mod, "MAX_CELLS", MAX_CELLS)
    args = inp.get("sweep") or {}
    base, file_grid = sweep_mod.load_sweep(src, inp.get("overrides") or ())
    base_seed = (base.get("run") or {}).get("seed", 1)
    try:
        grid = sweep_mod.grid_from_args(args.get("grid") or [], args.get("cc"), args.get("seeds"), base_seed if isinstance(base_seed, int) else 1, file_grid)
    except Exception as e:
        msg = e.args[0] if e.args else ""
        if isinstance(msg, str) and msg.startswith("--set"):
            # grid_from_args reads --grid, --cc and --seeds, never --set.
            raise _SweepBug(f"a --grid/--cc/--seeds refusal says --set: {msg[:200]}") from None
        raise
    n = len(grid.seeds or [None]) * len(grid.ccs or [None])
    for vs in grid.axes.values():
        n *= len(vs)
    res["cells"] = n
    t0 = time.perf_counter()
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    seen = [0]

    def on_cell(i: int, total: int) -> None:
        seen[0] = i
        if total > limit:
            raise _StopExpand(f"expanded cell {i} of a grid of {total:,} cells (more than {limit:,})")
        if i >= SWEEP_CELL_BUDGET or time.perf_counter() - t0 > SWEEP_EXPAND_S:
            raise _StopExpand("")

    def refused_late(e: BaseException) -> None:
        """A grid past the limit must be refused before any expansion, fast and small."""
        if n <= limit:
            return
        dt = time.perf_counter() - t0
        grew = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0) / 1024
        msg = e.args[0] if e.args else ""
        if isinstance(msg, str) and msg.startswith("cell "):
            raise _SweepBug(f"a grid of {n:,} cells (more than {limit:,}) was expanded before it was refused: {msg[:200]}")
        if dt > SWEEP_REFUSE_S:
            raise _SweepBug(f"a grid of {n:,} cells took {dt:.1f} s to refuse (more than {SWEEP_REFUSE_S:g} s)")
        if grew > SWEEP_REFUSE_MB:
            raise _SweepBug(f"refusing a grid of {n:,} cells grew the peak memory by {grew:.0f} MB")

    try:
        cells = sweep_mod.expand(base, grid, on_cell=on_cell)
    except _StopExpand as e:
        if e.args[0]:
            raise _SweepBug(e.args[0]) from None
        res["detail"] = f"{seen[0]} of {n} cells validated (budget)"
        return
    except Exception as e:
        from longfat._native import ScenarioError

        if isinstance(e, ScenarioError):
            refused_late(e)
        raise
    if n > limit:
        raise _SweepBug(f"a grid of {n:,} cells (more than {limit:,}) was accepted")
    raw_seed = (base.get("run") or {}).get("seed", 1)
    if not grid.seeds and (isinstance(raw_seed, bool) or not isinstance(raw_seed, int)) and cells:
        raise _SweepBug(f"run.seed = {raw_seed!r} (not an integer) was accepted: every cell runs with seed {cells[0].labels.get('seed')!r}")
    res["finished"] = True
    res["detail"] = f"{len(cells)} cells"
    res["cost"] = sum(cell.cost for cell in cells)
    if len(cells) != n:
        raise _SweepBug(f"expand gave {len(cells)} cells for a grid of {n}")
    for cell in cells:
        sc = cell.scenario
        for key in grid.axes:
            parts = _sweep_keys(key)
            if parts is None or key not in cell.labels:
                raise _SweepBug(f"cell {cell.describe()[:200]}: no label for grid key {key!r}")
            got = _get_parts(sc, parts)
            want = cell.labels[key]
            if parts == ["run"] and isinstance(got, dict) and isinstance(want, dict) and "seed" not in want:
                got = {k: v for k, v in got.items() if k != "seed"}  # the cell's seed goes into the table
            if got is _MISSING or not _same(got, want):
                others = [_sweep_keys(k) for k in grid.axes if k != key]
                if any(o is not None and (o[: len(parts)] == parts or parts[: len(o)] == o) for o in others):
                    why = "overlapping grid keys"
                elif parts[:2] == ["run", "seed"] or parts == ["run"]:
                    why = "the seeds override it"
                elif grid.ccs and len(parts) >= 3 and parts[0] == "flows" and parts[2] in ("cc", "params") or grid.ccs and parts[0] == "flows" and len(parts) <= 2:
                    why = "--cc/sweep.cc overrides it"
                else:
                    why = "?"
                shown = "missing" if got is _MISSING else json.dumps(got, default=repr)[:60]
                raise _SweepBug(f"label mismatch ({why}): grid key {key[:60]!r} labelled {json.dumps(cell.labels[key], default=repr)[:60]} but the cell's scenario has {shown}")
        if cell.labels.get("seed") != (sc.get("run") or {}).get("seed"):
            raise _SweepBug(f"label mismatch: seed labelled {cell.labels.get('seed')!r}, the scenario has {(sc.get('run') or {}).get('seed')!r}")
    # A few cheap grids: their first cells through the store.
    k = min(len(cells), 2)
    cost = sum(cell.cost for cell in cells[:k])
    if inp.get("run_cells") and k and cost < SWEEP_CLI_EVENTS / 4:
        study = workdir / "study"
        shutil.rmtree(study, ignore_errors=True)
        try:
            out = sweep_mod.run_cells(cells[:k], study, workers=1)
        finally:
            shutil.rmtree(study, ignore_errors=True)
        if out.failed:
            cell, err = out.failed[0]
            raise _SweepBug(f"a validated cell failed when run: {' '.join(str(err).split())[:300]}")
        res["detail"] += f"; {out.ran} ran"


class _SweepBug(Exception):
    """A broken promise of the sweep (not an exception it raised)."""


# =============================================================================
# Running one input (in a worker)
# =============================================================================

_KNOWN_WHOLE_FILE = (
    "scenario file ", ": TOML syntax error", ": not a UTF-8 text file", ": TOML value error", "nested deeper than",
    ": no [reproduce] table", "scenario: expected",
)


def refusal_problem(msg: Any, field: Any) -> str | None:
    """Why a ScenarioError's (message, field) is not a well-formed refusal
    (None if it is): one line, naming a field it starts with (after the
    file name and point label reproduce errors carry), or a known
    whole-file error."""
    if not isinstance(msg, str) or not msg.strip():
        return "empty message"
    if msg.splitlines() != [msg]:
        return "message spans several lines"
    if any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in msg):
        return "message holds control characters (raw on the terminal)"
    for bad in ("Traceback", "panicked", "internal error"):
        if bad in msg:
            return f"message contains {bad!r}"
    if not isinstance(field, str):
        return f"field is {type(field).__name__}, not a string"
    if msg.startswith(("--set", "--seed", "--grid", "--cc")):
        return None
    if field:
        if msg.startswith(field + ":") or f": {field}:" in msg:
            return None
        return f"message does not start with its field {field!r}"
    if any(k in msg for k in _KNOWN_WHOLE_FILE):
        return None
    return "refusal names no field"


def bounded_run(sim: Any, budget: int = EVENT_BUDGET) -> bool:
    """Runs ``sim`` in growing steps of simulated time until ``budget``
    events or its end; True if it finished."""
    end = sim.end_ns
    step = 1_000  # 1 us of simulated time, doubled while steps are cheap
    t = sim.now_ns
    while not sim.done and sim.events_processed < budget:
        before = sim.events_processed
        t = min(t + step, end)
        sim.run_until(t)
        n = sim.events_processed - before
        if n < budget // 50:
            step = min(step * 2, max(end, 1))
        elif n > budget // 8:
            step = max(step // 4, 1)
        if t >= end and not sim.done:
            break
    return bool(sim.done)


def run_input(inp: dict, workdir: Path) -> dict:
    """One input through the command line's path; never raises."""
    t0 = time.perf_counter()
    res = {"outcome": ACCEPTED, "detail": "", "field": "", "message": "", "traceback": "", "finished": False, "events": 0}
    try:
        from longfat._native import ScenarioError

        _self_test(inp.get("doc"))
        src: Any
        if inp.get("path"):
            src = inp["path"]
        elif inp.get("text") is not None:
            src = workdir / f"{_safe(inp['id'])}.toml"
            src.write_text(inp["text"], encoding="utf-8", errors="surrogatepass")
        else:
            src = inp["doc"]
        try:
            if inp.get("kind") == "sweep":
                run_sweep_input(inp, src, res, workdir)
            elif inp.get("kind") == "reproduce":
                from longfat.reproduce.core import load_experiment

                if not isinstance(src, (str, Path)):
                    raise TypeError("a [reproduce] input must be a TOML file (fuzz_py generated one it cannot write)")
                exp = load_experiment("fuzz", Path(src), bool(inp.get("quick")))
                res["detail"] = f"{len(exp.points)} points"
            else:
                from longfat.runner import execute, prepare

                spec, sim = prepare(src, seed=inp.get("seed"), overrides=inp.get("overrides") or ())
                res["finished"] = bounded_run(sim, int(inp.get("budget") or EVENT_BUDGET))
                res["events"] = int(sim.events_processed)
                if res["finished"]:
                    result = execute(spec, sim)
                    res["detail"] = f"{result.flows.num_rows} flow rows"
                del sim
        except ScenarioError as e:
            msg = e.args[0] if e.args else ""
            field = e.args[1] if len(e.args) > 1 else ""
            res.update(message=str(msg), field=str(field), raised_in=_raised_in(e))
            problem = refusal_problem(msg, field)
            if problem is None:
                res["outcome"] = REFUSED
            else:
                res.update(outcome=BUG, detail=f"badly formed refusal: {problem}: {str(msg)[:300]!r}")
    except _SweepBug as e:
        res.update(outcome=BUG, detail=f"sweep: {e.args[0]}", traceback="")
    except MemoryError:
        res.update(outcome=MEMORY, detail="MemoryError", traceback=traceback.format_exc(limit=20))
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:  # pyo3's PanicException is a BaseException
        res.update(outcome=BUG, detail=f"{type(e).__name__}: {str(e)[:300]}", traceback=traceback.format_exc(limit=30))
    res["seconds"] = time.perf_counter() - t0
    return res


def _self_test(doc: Any) -> None:
    """Inputs that check the pool's own limits (tests/test_fuzz_py.py)."""
    what = doc.get("__fuzz_test__") if isinstance(doc, dict) else None
    if what == "hang":
        while True:
            time.sleep(0.01)
    elif what == "memory":
        blob = bytearray(8 << 30)
        del blob
    elif what == "abort":
        os.abort()
    elif what in ("tls-once", "tls-always"):
        # glibc's exit when malloc fails giving a thread its TLS (dl-tls.c);
        # "tls-once" dies on its first attempt only (a file the test names
        # records the attempt), "tls-always" on every attempt.
        marker = Path(doc["__marker__"])
        if what == "tls-always" or not marker.exists():
            marker.touch()
            sys.stderr.write("cannot allocate memory for thread-local data: ABORT\n")
            sys.stderr.flush()
            os._exit(127)


#: Where Python hands a scenario to the Rust validator: a ScenarioError
#: raised on these lines came from Rust.
RUST_CALLS = ("runner.py:prepare", "core.py:_validate", "compare.py:compare")


def _raised_in(e: BaseException) -> str:
    """``file:function`` of the innermost Python frame of ``e``'s traceback."""
    tb = e.__traceback__
    last = None
    while tb is not None:
        last = tb
        tb = tb.tb_next
    if last is None:
        return ""
    return f"{Path(last.tb_frame.f_code.co_filename).name}:{last.tb_frame.f_code.co_name}"


def rust_side(res: dict) -> bool:
    """Whether a BUG lies in the Rust core: a panic, a badly formed refusal
    raised by the Rust validator, a worker killed in native code. (HANG and
    MEMORY need a look: Python or Rust.)"""
    if "PanicException" in res.get("detail", "") or "panicked" in (res.get("stderr") or ""):
        return True
    if res.get("raised_in") in RUST_CALLS:
        return True
    return res.get("detail", "").startswith("worker died")


def _safe(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", s)[:80] or "input"


def _address_space_bytes() -> int:
    """This process's address space (VmSize), in bytes."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmSize in /proc/self/status")


def _worker_main(conn: Any, mem_limit: int, err_path: str) -> None:
    import resource

    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    fd = os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 2)
    os.close(fd)
    for attempt in range(60):  # the extension may be being rebuilt
        try:
            import longfat.reproduce.core  # noqa: F401
            import longfat.runner  # noqa: F401

            break
        except ImportError:
            time.sleep(2)
    else:
        raise SystemExit(3)
    if mem_limit:
        # The limit is on top of what the imports reserved: the extension's
        # allocator (mimalloc) reserves a 1 GiB arena of address space when
        # the module loads, and the libraries map hundreds of MiB more
        # (1.39 GB in all, before any input). A limit of 2 GiB counted
        # from zero left about 0.6 GiB, which the threads of a sweep's
        # store (DuckDB, the executor) sometimes exhausted: glibc then
        # aborts giving a thread its TLS, and the input was a MEMORY
        # (CI of 4842e2c, a 10-flow 0.2 s sweep cell).
        held = _address_space_bytes()
        resource.setrlimit(resource.RLIMIT_AS, (held + mem_limit, held + mem_limit))
    workdir = Path(tempfile.mkdtemp(prefix="longfat-fuzz-"))
    conn.send(("ready", os.getpid()))
    try:
        while True:
            try:
                inp = conn.recv()
            except EOFError:
                break
            if inp is None:
                break
            os.ftruncate(2, 0)
            os.lseek(2, 0, os.SEEK_SET)
            res = run_input(inp, workdir)
            for f in workdir.iterdir():
                try:
                    f.unlink()
                except OSError:
                    pass
            conn.send(("result", res))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


# =============================================================================
# The pool: workers with a time limit and a memory limit
# =============================================================================


class _Worker:
    def __init__(self, ctx: Any, n: int, mem_limit: int, errdir: Path) -> None:
        self.err_path = errdir / f"worker{n}-{time.monotonic_ns()}.stderr"
        parent, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker_main, args=(child, mem_limit, str(self.err_path)), daemon=True)
        self.proc.start()
        child.close()
        self.conn = parent
        self.ready = False
        self.born = time.monotonic()
        self.job: dict | None = None
        self.started = 0.0

    def stop(self, kill: bool = False) -> None:
        try:
            if kill:
                self.proc.kill()
            else:
                self.conn.send(None)
        except (OSError, ValueError):
            pass
        self.proc.join(2 if not kill else 10)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join(10)
        self.conn.close()
        try:
            self.err_path.unlink()
        except OSError:
            pass

    def stderr_tail(self) -> str:
        try:
            return self.err_path.read_text(errors="replace")[-3000:]
        except OSError:
            return ""


def run_inputs(
    inputs: Iterable[dict],
    jobs: int = 2,
    timeout: float = TIME_LIMIT,
    mem_limit: int = MEM_LIMIT,
    on_result: Callable[[dict, dict], None] | None = None,
) -> list[tuple[dict, dict]]:
    """Runs every input in a pool of ``jobs`` spawned workers; an input that
    takes more than ``timeout`` seconds is a HANG (its worker is killed and
    replaced), one whose worker dies allocating is MEMORY. Returns
    (input, result) pairs in completion order."""
    ctx = mp.get_context("spawn")
    errdir = Path(tempfile.mkdtemp(prefix="longfat-fuzz-err-"))
    queue = deque(inputs)
    workers = [_Worker(ctx, n, mem_limit, errdir) for n in range(max(jobs, 1))]
    out: list[tuple[dict, dict]] = []
    deaths_before_ready = 0

    def finish(w: _Worker, res: dict) -> None:
        job = w.job
        w.job = None
        if job is not None:
            out.append((job, res))
            if on_result:
                on_result(job, res)

    try:
        while queue or any(w.job for w in workers):
            for w in workers:
                if w.ready and w.job is None and queue:
                    w.job = queue.popleft()
                    w.started = time.monotonic()
                    try:
                        w.conn.send(w.job)
                    except (OSError, ValueError) as e:
                        finish(w, {"outcome": BUG, "detail": f"input could not be sent: {e}", "traceback": "", "seconds": 0.0})
            ready = mp.connection.wait([w.conn for w in workers], timeout=0.05)
            for conn in ready:
                idx = next(k for k, w in enumerate(workers) if w.conn is conn)
                w = workers[idx]
                try:
                    kind, payload = conn.recv()
                except (EOFError, OSError):
                    w.proc.join(5)
                    code = w.proc.exitcode
                    tail = w.stderr_tail()
                    if w.job is not None:
                        res = _death(code, tail, time.monotonic() - w.started)
                        if res["outcome"] == MEMORY and not w.job.get("retried"):
                            # Once more, in a fresh worker: a run is
                            # deterministic, so an input that blows the
                            # limit dies again and is reported; one that
                            # died because the machine was short of memory
                            # (mmap refused under host pressure: glibc's
                            # TLS allocator exits 127) does not.
                            queue.appendleft({**w.job, "retried": True})
                            w.job = None
                        else:
                            finish(w, res)
                    elif not w.ready:
                        deaths_before_ready += 1
                        if deaths_before_ready > 20:
                            raise RuntimeError(f"fuzz workers keep failing to start (exit {code}): {tail[-1000:]}")
                        time.sleep(1)
                    w.stop(kill=True)
                    workers[idx] = _Worker(ctx, idx, mem_limit, errdir)
                    continue
                if kind == "ready":
                    w.ready = True
                else:
                    payload.setdefault("stderr", w.stderr_tail() if payload.get("outcome") in FAILURES else "")
                    finish(w, payload)
            now = time.monotonic()
            for idx, w in enumerate(workers):
                limit = timeout * (SWEEP_TIME_FACTOR if w.job is not None and w.job.get("source") in ("reproduce", "sweep") else 1)
                if w.job is not None and now - w.started > limit:
                    tail = w.stderr_tail()
                    finish(w, {"outcome": HANG, "detail": f"no answer after {limit:g} s", "traceback": "", "stderr": tail, "seconds": now - w.started})
                    w.stop(kill=True)
                    workers[idx] = _Worker(ctx, idx, mem_limit, errdir)
                elif not w.ready and now - w.born > 300:
                    raise RuntimeError("a fuzz worker did not start within 300 s")
    finally:
        for w in workers:
            w.stop(kill=w.job is not None)
        shutil.rmtree(errdir, ignore_errors=True)
    return out


def _death(code: int | None, stderr: str, seconds: float) -> dict:
    """The outcome of a worker that died on an input."""
    # "cannot allocate memory for thread-local data: ABORT" is glibc's
    # (dl-tls.c) when malloc fails giving a thread its TLS: exit 127.
    memoryish = "memory allocation of" in stderr or "MemoryError" in stderr or "out of memory" in stderr.lower() or "cannot allocate memory" in stderr.lower()
    if code == -9 or memoryish:
        return {"outcome": MEMORY, "detail": f"worker died (exit {code}) allocating", "traceback": "", "stderr": stderr, "seconds": seconds}
    return {"outcome": BUG, "detail": f"worker died (exit {code})", "traceback": "", "stderr": stderr, "seconds": seconds}


# =============================================================================
# Findings
# =============================================================================


def cli_args(inp: dict) -> list[str]:
    args = []
    if inp.get("kind") == "sweep":
        return sweep_cli_args(inp)
    if inp.get("seed") is not None:
        args += ["--seed", str(inp["seed"])]
    for o in inp.get("overrides") or []:
        args.append(f"--set={o}")
    if inp.get("quick"):
        args.append("--quick")
    return args


def write_finding(findings: Path, inp: dict, res: dict) -> Path:
    """The input as a file one can replay (``longfat run FILE ARGS``), with
    what happened in leading comments; JSON when TOML cannot hold it."""
    findings.mkdir(parents=True, exist_ok=True)
    stem = f"{res['outcome'].lower()}-{inp['source']}-{_safe(inp['id'])}"
    args = cli_args(inp)
    arg_line = " ".join(shlex.quote(a) for a in args)
    notes = [
        f"source: scripts/fuzz_py.py input {inp['id']} ({inp['source']}{', from ' + inp['origin'] if inp.get('origin') else ''})",
        f"outcome: {res['outcome']}: {res.get('detail', '')}",
    ]
    if inp.get("kind") == "reproduce":
        notes.append(f"replay: load_experiment(\"fuzz\", FILE, quick={bool(inp.get('quick'))})")
    if inp.get("kind") == "sweep":
        notes.append("replay: longfat sweep FILE ARGS --workers 1 --out STUDY -q (or load_sweep, grid_from_args, expand)")
        if inp.get("cli"):
            notes.append(f"command line: {json.dumps(inp['cli'], default=repr)}")
    tb = (res.get("traceback") or "") + ("\nstderr:\n" + res["stderr"] if res.get("stderr") else "")
    text = inp.get("text")
    one_line = all("\n" not in a and "\r" not in a and "\x00" not in a for a in args)
    if text is not None and one_line and "\x00" not in text:
        head = [f"# {n}" for n in notes]
        if args:
            head.append(f"# args: {arg_line}")
        head += ["# traceback:"] + [f"#   {line}" for line in tb.splitlines()]
        path = findings / f"{stem}.toml"
        path.write_text("\n".join(_comment_safe(h) for h in head) + "\n" + text, encoding="utf-8", errors="surrogatepass")
    else:
        path = findings / f"{stem}.json"
        body = {"notes": notes, "args": args, "text": text, "doc": _jsonable(inp.get("doc")), "traceback": tb}
        path.write_text(json.dumps(body, indent=1, default=repr) + "\n")
    return path


def _comment_safe(line: str) -> str:
    return "".join(c if c.isprintable() or c == "\t" else "?" for c in line)


def _jsonable(v: Any, depth: int = 0) -> Any:
    if depth > 50:
        return "<deeper>"
    if isinstance(v, dict):
        return {str(k) if isinstance(k, str) else repr(k): _jsonable(x, depth + 1) for k, x in v.items()}
    if isinstance(v, list):
        return [_jsonable(x, depth + 1) for x in v]
    if isinstance(v, float) and not math.isfinite(v):
        return repr(v)
    if v is None or isinstance(v, (bool, int, float, str)):
        if isinstance(v, str):
            return v.encode("utf-8", "backslashreplace").decode()
        if isinstance(v, int) and v.bit_length() > 1000:
            return f"<int of {v.bit_length()} bits>"
        return v
    return repr(v)


def signature(res: dict) -> str:
    """Groups findings: outcome and the gist of the error."""
    d = res.get("detail", "")
    d = re.sub(r"/tmp/[^:]*: ", "", d)
    d = re.sub(r"^(sweep: label mismatch \([^)]*\): grid key '[^']*').*", r"\1", d)
    d = re.sub(r"0x[0-9a-f]+|[0-9]+", "N", d)
    tb = res.get("traceback") or res.get("stderr") or ""
    where = re.findall(r'File "([^"]+)", line \d+, in (\w+)', tb)
    panic = re.search(r"panicked at ([^\n]+)", res.get("stderr") or "")
    loc = panic.group(1) if panic else (f"{Path(where[-1][0]).name}:{where[-1][1]}" if where else "")
    side = "" if res["outcome"] != BUG else " (rust)" if rust_side(res) else " (python)"
    return f"{res['outcome']}{side}: {d[:140]} @ {loc or res.get('raised_in', '')}"


# =============================================================================
# The campaign
# =============================================================================


def campaign(
    seed: int = 1,
    inputs: int = 1000,
    jobs: int = 2,
    timeout: float = TIME_LIMIT,
    mem_limit: int = MEM_LIMIT,
    findings: Path | None = DEFAULT_FINDINGS,
    sources: Iterable[str] = SOURCES,
    only: Iterable[int] | None = None,
    progress: bool = False,
    budget: int = EVENT_BUDGET,
) -> dict:
    """Runs ``inputs`` generated inputs; returns counts per outcome and per
    source, the failures (input, result) and timings."""
    srcs = tuple(sources)
    idx = list(only) if only is not None else range(inputs)
    todo = []
    for i in idx:
        # One source alone: every input is drawn from it (ids s<seed>-<source>-<i>).
        inp = make_input(seed, i, source=srcs[0] if len(srcs) == 1 else None)
        if inp["source"] in srcs:
            inp["budget"] = budget
            todo.append(inp)
    counts: Counter = Counter()
    by_source: dict[str, Counter] = defaultdict(Counter)
    failures: list[tuple[dict, dict]] = []
    reasons: Counter = Counter()
    busy = [0.0]
    finished = [0]
    t0 = time.perf_counter()

    def on_result(inp: dict, res: dict) -> None:
        counts[res["outcome"]] += 1
        by_source[inp["source"]][res["outcome"]] += 1
        busy[0] += res.get("seconds", 0.0)
        finished[0] += bool(res.get("finished"))
        if res["outcome"] == REFUSED:
            reasons[f"{inp['source']}: " + re.sub(r"\[\d+\]", "[i]", res.get("field") or res.get("message", "")[:40])] += 1
        if res["outcome"] in FAILURES:
            failures.append((inp, res))
            if findings is not None:
                res["file"] = str(write_finding(Path(findings), inp, res))
        if progress:
            n = sum(counts.values())
            if n % 500 == 0 or res["outcome"] in FAILURES:
                line = f"[{n}/{len(todo)} {time.perf_counter() - t0:.0f}s] " + " ".join(f"{k}={counts[k]}" for k in OUTCOMES)
                if res["outcome"] in FAILURES:
                    line += f"  {inp['id']}: {signature(res)}"
                print(line, file=sys.stderr, flush=True)

    run_inputs(todo, jobs=jobs, timeout=timeout, mem_limit=mem_limit, on_result=on_result)
    wall = time.perf_counter() - t0
    return {
        "seed": seed,
        "inputs": len(todo),
        "jobs": jobs,
        "seconds": wall,
        "counts": dict(counts),
        "by_source": {k: dict(v) for k, v in by_source.items()},
        "finished_runs": finished[0],
        "worker_busy_seconds": busy[0],
        "failures": failures,
        "refusals": reasons,
    }


def report(summary: dict) -> str:
    lines = [
        f"{summary['inputs']} inputs, seed {summary['seed']}, {summary['jobs']} workers, {summary['seconds']:.1f} s "
        f"({summary['inputs'] / max(summary['seconds'], 1e-9):.0f} inputs/s; "
        f"{summary['inputs'] / max(summary['worker_busy_seconds'], 1e-9):.0f} inputs/s per busy worker); "
        f"{summary['finished_runs']} runs finished within the event budget",
        "outcome   " + " ".join(f"{o:>9}" for o in OUTCOMES),
        "all       " + " ".join(f"{summary['counts'].get(o, 0):>9}" for o in OUTCOMES),
    ]
    for s in SOURCES:
        c = summary["by_source"].get(s, {})
        if c:
            lines.append(f"{s:<10}" + " ".join(f"{c.get(o, 0):>9}" for o in OUTCOMES))
    groups: dict[str, list] = defaultdict(list)
    for inp, res in summary["failures"]:
        groups[signature(res)].append((inp, res))
    if groups:
        lines.append(f"{len(groups)} distinct failures:")
        for sig, items in sorted(groups.items(), key=lambda kv: -len(kv[1])):
            inp, res = items[0]
            lines.append(f"  {len(items):>5} x {sig}   e.g. {inp['id']} {res.get('file', '')}")
    return "\n".join(lines)


# =============================================================================
# The command line sample
# =============================================================================


def longfat_exe() -> list[str]:
    exe = Path(sys.executable).parent / "longfat"
    if exe.exists():
        return [str(exe)]
    found = shutil.which("longfat")
    return [found] if found else [sys.executable, "-m", "longfat.cli"]


def cli_problem(rc: int, stderr: str) -> str | None:
    """Why a command line outcome is wrong (None if fine)."""
    for bad in ("Traceback", "panicked", "internal error"):
        if bad in stderr:
            return f"stderr contains {bad!r}"
    if rc not in (0, 2):
        return f"exit status {rc}"
    lines = stderr.strip("\n").splitlines()
    if rc == 2 and (len(lines) != 1 or not lines[0].startswith("error: ")):
        return f"stderr is {len(lines)} lines, not one 'error: ...' line"
    if any(ord(c) < 0x20 and c != "\n" or 0x7F <= ord(c) < 0xA0 for c in stderr):
        return "stderr holds control characters"
    if rc == 0 and stderr.strip():
        return "stderr not empty on success"
    return None


def run_cli_input(inp: dict, workdir: Path, timeout: float = 120.0) -> dict:
    d = Path(tempfile.mkdtemp(prefix="cli-", dir=workdir))
    try:
        if inp.get("path"):
            f = Path(inp["path"])
        else:
            f = d / "scenario.toml"
            f.write_text(inp["text"], encoding="utf-8", errors="surrogatepass")
        cmd = longfat_exe() + ["run", str(f), "--out", str(d / "x"), "-q", "--no-plot"] + cli_args(inp)
        env = {**os.environ, "COLUMNS": "200", "OPENBLAS_NUM_THREADS": "1"}
        env.pop("LONGFAT_DEBUG", None)
        t0 = time.perf_counter()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, errors="replace")
        except subprocess.TimeoutExpired:
            return {"outcome": HANG, "detail": f"longfat run took more than {timeout:g} s", "stderr": "", "seconds": timeout}
        problem = cli_problem(p.returncode, p.stderr)
        outcome = BUG if problem else (ACCEPTED if p.returncode == 0 else REFUSED)
        return {"outcome": outcome, "detail": problem or "", "stderr": p.stderr[-3000:], "rc": p.returncode, "seconds": time.perf_counter() - t0, "traceback": ""}
    finally:
        shutil.rmtree(d, ignore_errors=True)


def cli_sample(seed: int, n: int, jobs: int = 2, findings: Path | None = DEFAULT_FINDINGS, timeout: float = TIME_LIMIT) -> dict:
    """``n`` inputs through ``longfat run``. Inputs are drawn from the
    schema, mutate and override sources (as TOML files); those the API path
    accepts but cannot finish within its event budget are skipped (a full
    run could take hours), so that each command finishes quickly."""
    from concurrent.futures import ThreadPoolExecutor

    cands: list[dict] = []
    i = 0
    while len(cands) < n * 3 and i < n * 50:
        inp = make_input(seed, 10_000_000 + i, source=("schema", "mutate", "override")[i % 3])
        inp["id"] = f"cli-s{seed}-{i}"
        i += 1
        if inp["text"] is None or "\x00" in inp["text"] or any("\x00" in a for a in cli_args(inp)):
            continue
        cands.append(inp)
    api = {inp["id"]: res for inp, res in run_inputs(cands, jobs=jobs, timeout=timeout)}
    chosen = [c for c in cands if not (api[c["id"]]["outcome"] == ACCEPTED and not api[c["id"]].get("finished"))][:n]
    workdir = Path(tempfile.mkdtemp(prefix="longfat-fuzz-cli-"))
    counts: Counter = Counter()
    failures = []
    t0 = time.perf_counter()
    try:
        with ThreadPoolExecutor(max_workers=max(jobs, 1)) as pool:
            for inp, res in zip(chosen, pool.map(lambda x: run_cli_input(x, workdir), chosen)):
                counts[res["outcome"]] += 1
                if res["outcome"] in FAILURES:
                    res["traceback"] = res.get("stderr", "")
                    failures.append((inp, res))
                    if findings is not None:
                        inp = {**inp, "source": "cli"}
                        res["file"] = str(write_finding(Path(findings), inp, res))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return {"inputs": len(chosen), "seconds": time.perf_counter() - t0, "counts": dict(counts), "failures": failures}


def sweep_cli_args(inp: dict) -> list[str]:
    """A sweep input's ``--grid``, ``--cc``, ``--seeds`` and ``--set``, as
    ``longfat sweep`` takes them (``--opt=VALUE``, so that a value starting
    with '-' stays a value)."""
    a = inp.get("sweep") or {}
    out = [f"--grid={g}" for g in a.get("grid") or []]
    if a.get("cc") is not None:
        out.append(f"--cc={a['cc']}")
    cli = inp.get("cli") or {}
    if "seeds_text" in cli:
        out.append(f"--seeds={cli['seeds_text']}")
    elif a.get("seeds") is not None:
        out.append(f"--seeds={a['seeds']}")
    out += [f"--set={o}" for o in inp.get("overrides") or []]
    if cli:
        out.append(f"--workers={cli.get('workers', 1)}")
        if cli.get("scheduler") is not None:
            out.append(f"--scheduler={cli['scheduler']}")
    return out


SWEEP_SCHEDULERS = ["nonsense", "tcp://127.0.0.1:1", "", "tcp://[::1", "tls://127.0.0.1:1", "inproc://x", "tcp://" + "a" * 300 + ":1"]


def _sweep_cli_variant(seed: int, i: int) -> dict:
    """How input i of a command line sample is run: where --out points (new,
    a non-study directory, a file, an empty directory, two levels down), the
    workers, sometimes a bad --scheduler or --seeds text."""
    rng = random.Random(f"longfat-fuzz-sweep-cli/{seed}/{i}")
    v: dict = {"out": rng.choices(["new", "nonstudy", "file", "empty", "nested"], [80, 7, 4, 4, 5])[0], "workers": 1}
    if rng.random() < 0.03:
        v["workers"] = rng.choice([0, -1])
    if rng.random() < 0.03:
        v["scheduler"] = rng.choice(SWEEP_SCHEDULERS)
    if rng.random() < 0.04:
        v["seeds_text"] = gen_seeds_arg(rng, cli_only=True)
    return v


def _tree(root: Path, skip: Path | None = None) -> dict[str, bytes | None]:
    """Every entry below ``root`` (but ``skip``): relative path -> content (files) or None."""
    out: dict[str, bytes | None] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dp = Path(dirpath)
        if skip is not None and (dp == skip or skip in dp.parents):
            dirnames[:] = []
            continue
        for name in dirnames:
            if skip is None or dp / name != skip:
                out[str((dp / name).relative_to(root)) + "/"] = None
        for name in filenames:
            p = dp / name
            if skip is not None and p == skip:
                continue
            try:
                out[str(p.relative_to(root))] = p.read_bytes() if p.stat().st_size < 1 << 20 else b"<big>"
            except OSError:
                out[str(p.relative_to(root))] = b"<unreadable>"
    return out


_PATHS = re.compile(r"(?:/[^\s:'\"]+)+\.toml")


def sweep_cli_problem(inp: dict, api: dict | None, rc: int, stdout: str, stderr: str, out: Path, out_before: dict, outside_new: list[str], scenario_changed: bool) -> tuple[str | None, str]:
    """What is wrong with one ``longfat sweep`` (None if nothing) and a
    note (``argparse`` for argparse's own usage errors)."""
    for bad in ("Traceback", "panicked", "internal error"):
        if bad in stderr or bad in stdout:
            return f"output contains {bad!r}", ""
    if rc not in (0, 1, 2):
        return f"exit status {rc}", ""
    if any(ord(c) < 0x20 and c != "\n" or 0x7F <= ord(c) < 0xA0 for c in stderr):
        return "stderr holds control characters", ""
    if outside_new:
        return f"wrote outside the study directory: {', '.join(outside_new[:5])}", ""
    if scenario_changed:
        return "the scenario file changed", ""
    cli = inp.get("cli") or {}
    kind = cli.get("out", "new")
    lines = stderr.strip("\n").splitlines()
    note = ""
    if rc == 2:
        if len(lines) >= 2 and lines[0].startswith("usage: ") and lines[-1].startswith("longfat sweep: error: argument "):
            note = "argparse"
        elif len(lines) != 1 or not lines[0].startswith("error: ") or ":" not in lines[0][len("error: "):]:
            return f"stderr is {len(lines)} lines, not one 'error: FIELD: ...' line", ""
        if kind in ("new", "nested") and (out.exists() or out.is_symlink()):
            return f"refused ({lines[-1][:150]}) but the study directory was created", note
        if kind in ("nonstudy", "file", "empty") and (_tree(out) if out.is_dir() else {"": out.read_bytes() if out.exists() else None}) != out_before:
            return f"refused ({lines[-1][:150]}) but the existing {kind} --out was changed", note
    elif rc == 1:
        if "failed:" in stderr and "traceback in" in stderr:
            return f"crashed: {lines[0][:300] if lines else ''}", ""
        return f"exit status 1: {' | '.join(lines)[:300]}", ""
    else:
        if stderr.strip():
            return "stderr not empty on success", ""
        if kind in ("nonstudy", "file"):
            return f"accepted an existing {kind} as the study directory", ""
        marker = out / ".longfat-result"
        if not marker.is_file():
            return "exit status 0 but no study marker", ""
        m = re.search(r"(\d+) runs in the grid", stdout)
        runs = len(list((out / "runs").glob("*.parquet"))) if (out / "runs").is_dir() else 0
        if not m or int(m.group(1)) != runs:
            return f"the study holds {runs} runs, the summary says {m.group(1) if m else '?'}", ""
    # The command line against the API path (the same functions).
    plain = kind in ("new", "nested") and cli.get("workers", 1) == 1 and "scheduler" not in cli and "seeds_text" not in cli
    seeds = (inp.get("sweep") or {}).get("seeds")
    if plain and api is not None and (seeds is None or seeds >= 1) and api.get("outcome") in (ACCEPTED, REFUSED):
        if api["outcome"] == REFUSED:
            want = "error: " + _PATHS.sub("FILE", api.get("message", ""))
            got = _PATHS.sub("FILE", lines[-1]) if lines else ""
            if rc != 2:
                return f"the API refused ({want[:150]}) but the command line exited {rc}", note
            if got != want:
                return f"the command line says {got[:150]!r}, the API {want[:150]!r}", note
        elif api.get("finished") and rc != 0:
            return f"the API accepted every cell but the command line exited {rc}: {(lines[-1] if lines else '')[:200]}", note
    return None, note


def run_sweep_cli_input(inp: dict, api: dict | None, workdir: Path, timeout: float = 120.0) -> dict:
    """One input through ``longfat sweep FILE ARGS --workers 1 --out TMP/study
    -q`` with TMPDIR, HOME and the working directory inside TMP: nothing may
    appear in TMP but the study (the scenario file unchanged)."""
    d = Path(tempfile.mkdtemp(prefix="sweep-", dir=workdir))
    try:
        for sub in ("in", "cwd", "tmp", "home"):
            (d / sub).mkdir()
        f = d / "in" / "scenario.toml"
        f.write_text(inp["text"], encoding="utf-8", errors="surrogatepass")
        cli = inp.get("cli") or {}
        kind = cli.get("out", "new")
        out = d / "a" / "b" / "study" if kind == "nested" else d / "study"
        if kind == "nonstudy":
            out.mkdir()
            (out / "precious.txt").write_text("precious")
        elif kind == "file":
            out.write_text("precious")
        elif kind == "empty":
            out.mkdir()
        out_before = _tree(out) if out.is_dir() else {"": out.read_bytes() if out.exists() else None}
        before = _tree(d, skip=out)
        args = sweep_cli_args(inp) + ["--out", str(out), "-q"]
        cmd = longfat_exe() + ["sweep", str(f)] + args
        env = {**os.environ, "COLUMNS": "200", "OPENBLAS_NUM_THREADS": "1", "TMPDIR": str(d / "tmp"), "HOME": str(d / "home")}
        env.pop("LONGFAT_DEBUG", None)
        t0 = time.perf_counter()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=d / "cwd", errors="replace")
        except subprocess.TimeoutExpired:
            return {"outcome": HANG, "detail": f"longfat sweep took more than {timeout:g} s", "stderr": "", "seconds": timeout, "traceback": ""}
        after = _tree(d, skip=out)
        outside_new = sorted(k for k in after if k not in before or (after[k] != before[k] and not k.endswith("/")))
        if p.returncode == 0:  # a new study's parent directories are made with it
            parents = {str(q.relative_to(d)) + "/" for q in out.parents if d in q.parents}
            outside_new = [k for k in outside_new if k not in parents]
        problem, note = sweep_cli_problem(inp, api, p.returncode, p.stdout, p.stderr, out, out_before, outside_new, f.read_bytes() != inp["text"].encode("utf-8", errors="surrogatepass"))  # bytes: read_text would turn \r into \n
        outcome = BUG if problem else (ACCEPTED if p.returncode == 0 else REFUSED)
        return {"outcome": outcome, "detail": problem or "", "note": note, "stderr": p.stderr[-3000:], "stdout": p.stdout[-1000:], "rc": p.returncode, "seconds": time.perf_counter() - t0, "traceback": ""}
    finally:
        shutil.rmtree(d, ignore_errors=True)


def sweep_cli_candidates(seed: int, n: int, jobs: int = 2, timeout: float = TIME_LIMIT) -> list[tuple[dict, dict]]:
    """``n`` sweep inputs fit for the command line, each with its API result:
    TOML text, arguments a process can take; those the API refused, found a
    bug in, or accepted as a small grid of cheap cells (it runs them all)."""
    cands: list[dict] = []
    i = 0
    while len(cands) < n * 3 and i < n * 50:
        inp = make_input(seed, 20_000_000 + i, source="sweep")
        inp["id"] = f"sweep-cli-s{seed}-{i}"
        inp["run_cells"] = False
        inp["cli"] = _sweep_cli_variant(seed, i)
        i += 1
        args = sweep_cli_args(inp)
        if inp["text"] is None or "\x00" in inp["text"] or any("\x00" in a or len(a) > 100_000 for a in args):
            continue
        cands.append(inp)
    api = {inp["id"]: res for inp, res in run_inputs(cands, jobs=jobs, timeout=timeout)}
    chosen = []
    for c in cands:
        r = api[c["id"]]
        if r["outcome"] == ACCEPTED and not (r.get("finished") and r.get("cells", 99) <= 12 and r.get("cost", 1e18) <= SWEEP_CLI_EVENTS):
            continue
        if r["outcome"] in (HANG, MEMORY):
            continue
        chosen.append((c, r))
    return chosen[:n]


def sweep_cli_sample(seed: int, n: int, jobs: int = 2, findings: Path | None = DEFAULT_FINDINGS, timeout: float = TIME_LIMIT) -> dict:
    """``n`` sweep inputs through ``longfat sweep`` (see run_sweep_cli_input)."""
    from concurrent.futures import ThreadPoolExecutor

    chosen = sweep_cli_candidates(seed, n, jobs=jobs, timeout=timeout)
    workdir = Path(tempfile.mkdtemp(prefix="longfat-fuzz-sweep-cli-"))
    counts: Counter = Counter()
    notes: Counter = Counter()
    failures = []
    t0 = time.perf_counter()
    try:
        with ThreadPoolExecutor(max_workers=max(jobs, 1)) as pool:
            for (inp, api), res in zip(chosen, pool.map(lambda x: run_sweep_cli_input(x[0], x[1], workdir), chosen)):
                counts[res["outcome"]] += 1
                if res.get("note"):
                    notes[res["note"]] += 1
                if res["outcome"] in FAILURES:
                    res["traceback"] = res.get("stderr", "")
                    res["api_detail"] = f"{api.get('outcome')}: {api.get('detail') or api.get('message', '')}"
                    failures.append((inp, res))
                    if findings is not None:
                        res["file"] = str(write_finding(Path(findings), {**inp, "source": "sweep-cli"}, res))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return {"inputs": len(chosen), "seconds": time.perf_counter() - t0, "counts": dict(counts), "notes": dict(notes), "failures": failures}


# =============================================================================
# Corpus files (tests/corpus)
# =============================================================================


def read_corpus_file(path: Path) -> dict:
    """A corpus file as an input. The format is shared with the Rust harness
    (crates/longfat-fuzz/src/corpus.rs): the header is the leading comment
    and blank lines, with ``# source: ...``, optionally ``# expect: ok``,
    ``# expect: error`` or ``# expect: error FIELD [| FIELD ...]`` and, for
    Python-only cases, ``# args: --seed N --set K=V --quick``; the rest is
    the scenario, TOML (.toml) or JSON (.json). Files under a ``reproduce``
    directory are [reproduce] cases (``load_experiment``)."""
    raw = path.read_text(encoding="utf-8", errors="surrogatepass")
    meta: dict[str, str] = {}
    body_lines = []
    in_head = True
    for line in raw.splitlines(keepends=True):
        t = line.strip()
        if in_head and (t.startswith("#") or not t):
            m = re.match(r"#\s*(source|expect|args)\s*:\s*(.*?)\s*$", t)
            if m:
                meta.setdefault(m.group(1), m.group(2))
            body_lines.append("\n")
            continue
        in_head = False
        body_lines.append(line)
    args = shlex.split(meta.get("args", ""))
    seed, overrides, quick = None, [], False
    k = 0
    while k < len(args):
        a = args[k]
        if a == "--seed":
            seed = int(args[k + 1])
            k += 2
        elif a == "--set":
            overrides.append(args[k + 1])
            k += 2
        elif a.startswith("--set="):
            overrides.append(a[len("--set="):])
            k += 1
        elif a == "--quick":
            quick = True
            k += 1
        else:
            raise ValueError(f"{path}: unknown argument {a!r} in '# args:'")
    inp = {
        "id": path.stem, "source": "corpus", "origin": str(path), "kind": "reproduce" if path.parent.name == "reproduce" else "scenario",
        "text": None, "doc": None, "path": None, "seed": seed, "overrides": overrides, "quick": quick,
        "expect": meta.get("expect", ""), "corpus_source": meta.get("source", ""),
    }
    if path.suffix == ".json":
        inp["doc"] = json.loads("".join(body_lines))
    else:
        inp["path"] = str(path)
    return inp


def _field_matches(field: str, want: str) -> bool:
    """``flows[0].tcp`` matches itself and ``flows[0].tcp.max_rto`` (as the Rust harness)."""
    return field == want or (field.startswith(want) and field[len(want) : len(want) + 1] in (".", "["))


def expectation_problem(expect: str, res: dict) -> str | None:
    """Whether a result meets a ``# expect:`` line (None if it does, or if
    there is none); failures (BUG/HANG/MEMORY) are judged elsewhere."""
    expect = expect.strip()
    if not expect:
        return None
    if expect == "ok":
        return None if res["outcome"] == ACCEPTED else f"expected ok, got {res['outcome']}: {res.get('message') or res.get('detail')}"
    if not expect.startswith("error"):
        return f"malformed expect line {expect!r}"
    wants = [f.strip() for f in expect[len("error") :].split("|") if f.strip()]
    shown = " | ".join(wants) or "any field"
    if res["outcome"] != REFUSED:
        return f"expected a refusal naming {shown}, got {res['outcome']} {res.get('detail', '')}".rstrip()
    if wants and not any(_field_matches(res.get("field", ""), w) for w in wants):
        return f"expected a refusal naming {shown}, got field {res.get('field')!r}: {res.get('message')}"
    return None


def corpus_files(root: Path = ROOT / "tests" / "corpus") -> list[Path]:
    files: list[Path] = []
    for d in (root, root / "python", root / "reproduce"):
        if d.is_dir():
            files += sorted(p for p in d.iterdir() if p.suffix in (".toml", ".json") and p.is_file())
    return files


# =============================================================================
# main
# =============================================================================


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--inputs", type=int, default=1000)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--timeout", type=float, default=TIME_LIMIT, help="seconds per input before it is a HANG (default 10)")
    ap.add_argument("--mem", type=float, default=2.0, help="GiB of address space per worker (default 2)")
    ap.add_argument("--findings", default=str(DEFAULT_FINDINGS))
    ap.add_argument("--sources", default=",".join(SOURCES), help="comma-separated; with one source, every input is drawn from it")
    ap.add_argument("--only", type=int, action="append", help="run only input I of the seed (repeatable)")
    ap.add_argument("--show", type=int, help="print input I of the seed and exit")
    ap.add_argument("--cli", type=int, default=0, help="also run N inputs through the real command line")
    ap.add_argument("--sweep-cli", type=int, default=0, help="also run N sweep inputs through longfat sweep (--workers 1, a tiny study)")
    ap.add_argument("--corpus", action="store_true", help="replay tests/corpus instead")
    ap.add_argument("--reasons", type=int, default=0, help="also print the N most common refused fields")
    ap.add_argument("--budget", type=int, default=EVENT_BUDGET, help="events per accepted run (default 200,000)")
    args = ap.parse_args(argv)
    findings = Path(args.findings)
    if args.show is not None:
        one = [x.strip() for x in args.sources.split(",") if x.strip()]
        inp = make_input(args.seed, args.show, source=one[0] if len(one) == 1 else None)
        print(json.dumps({k: v for k, v in inp.items() if k != "text"}, default=repr, indent=1))
        print(inp["text"] if inp["text"] is not None else "")
        return 0
    if args.corpus:
        inputs = [read_corpus_file(p) for p in corpus_files()]
        bad = 0
        for inp, res in sorted(run_inputs(inputs, jobs=args.jobs, timeout=args.timeout), key=lambda x: x[0]["origin"]):
            problem = expectation_problem(inp["expect"], res)
            status = "FAIL" if res["outcome"] in FAILURES or problem else "ok"
            bad += status == "FAIL"
            print(f"{status:4} {inp['origin']}: {res['outcome']} {res.get('field', '')} {problem or ''}".rstrip())
        return 1 if bad else 0
    summary = campaign(
        seed=args.seed, inputs=args.inputs, jobs=args.jobs, timeout=args.timeout, mem_limit=int(args.mem * (1 << 30)),
        findings=findings, sources=[s.strip() for s in args.sources.split(",") if s.strip()], only=args.only, progress=True,
        budget=args.budget,
    )
    print(f"command: {' '.join(shlex.quote(a) for a in [sys.argv[0]] + (argv if argv is not None else sys.argv[1:]))}")
    print(report(summary))
    for r, k in summary["refusals"].most_common(args.reasons):
        print(f"  refused {k:>6} x {r}")
    rc = 1 if summary["failures"] else 0
    if args.cli:
        cli = cli_sample(args.seed, args.cli, jobs=args.jobs, findings=findings, timeout=args.timeout)
        print(f"command line: {cli['inputs']} inputs in {cli['seconds']:.1f} s: " + " ".join(f"{k}={cli['counts'].get(k, 0)}" for k in OUTCOMES))
        for inp, res in cli["failures"]:
            print(f"  {inp['id']}: {res['outcome']} {res['detail']} {res.get('file', '')}")
        rc = rc or (1 if cli["failures"] else 0)
    if args.sweep_cli:
        sc = sweep_cli_sample(args.seed, args.sweep_cli, jobs=args.jobs, findings=findings, timeout=args.timeout)
        print(f"longfat sweep: {sc['inputs']} inputs in {sc['seconds']:.1f} s: " + " ".join(f"{k}={sc['counts'].get(k, 0)}" for k in OUTCOMES)
              + "".join(f" ({v} {k} usage errors)" for k, v in sc["notes"].items()))
        for inp, res in sc["failures"]:
            print(f"  {inp['id']}: {res['outcome']} {res['detail']} {res.get('file', '')}")
        rc = rc or (1 if sc["failures"] else 0)
    print(f"findings in {findings}/" if summary["failures"] else "no findings")
    return rc


if __name__ == "__main__":
    sys.exit(main())
