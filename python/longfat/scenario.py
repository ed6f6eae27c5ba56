"""Loading scenario files (TOML) and applying ``--set key=value`` overrides.

Everything here refuses malformed input with a ``ScenarioError(message,
field)`` whose message starts with the field's path (``run: must be a
table``); what passes is a plain JSON-able document that the Rust validator
(serde with unknown fields denied, then range checks) names fields for. So
nothing reaching ``json.dumps`` can make it fail: no TOML dates or times, no
NaN or infinite floats (``json.dumps`` would write ``NaN``, which is not
JSON), no nesting deeper than ``MAX_DEPTH``, no Python-only values.
"""

from __future__ import annotations

import copy
import datetime
import importlib.resources
import json
import math
import os
import re
import tomllib
from pathlib import Path
from typing import Any, Iterable

from longfat._native import DEFAULT_SEED, ScenarioError

#: Deepest nesting of tables and arrays a scenario may have (a real one has 4).
MAX_DEPTH = 32
#: Most values (strings, numbers, ...) in one document, so that a shared
#: sub-table (a dict passed from Python) cannot explode into billions.
MAX_VALUES = 1_000_000

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_KEY_PART = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)((?:\[[0-9]+\])*)\Z")
_INDEX = re.compile(r"\[([0-9]+)\]")
_DIGITS = re.compile(r"[0-9]+\Z")
_MAX_INDEX_DIGITS = 9

#: Top-level entries that must be tables, and those that must be arrays of tables.
_TABLES = ("network", "run")
_ARRAYS_OF_TABLES = ("flows", "udp", "short_flows", "web")

_DATE_MSG = 'a TOML date/time is not allowed; quote it with a unit, e.g. "10s"'


# ---- paths and how values are named ------------------------------------------


def _quote(text: str, limit: int = 80) -> str:
    """``text`` in double quotes, escaped so that it stays on one line, shortened."""
    short = text[:limit]
    q = json.dumps(short, ensure_ascii=not short.isprintable())
    return q + ("..." if len(text) > limit else "")


def display(text: str, limit: int = 80) -> str:
    """``text`` as it can appear in a one-line message: itself if short and
    printable, else a quoted, shortened form."""
    if text and len(text) <= limit and text.isprintable() and text.strip() == text:
        return text
    return _quote(text, limit)


def key_path(prefix: str, key: str) -> str:
    """The path of table entry ``key`` under ``prefix``: ``flows[0].tcp``, or
    with a quoted key when it is not a plain name: ``reproduce.vary."flows[0].cc"``."""
    k = key if _IDENT.match(key) else _quote(key)
    return f"{prefix}.{k}" if prefix else k


def kind_of(v: Any) -> str:
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, (int, float)):
        return "a number"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, dict):
        return "a table"
    if isinstance(v, (list, tuple)):
        return "an array"
    if isinstance(v, (datetime.date, datetime.time)):
        return "a date/time"
    if v is None:
        return "null"
    return f"a {type(v).__name__}"


def seed_of(doc: dict) -> Any:
    """The scenario's ``run.seed``, or the engine's default (DEFAULT_SEED)
    when it sets none (unchecked: the engine or the caller checks it)."""
    run = doc.get("run")
    return run.get("seed", DEFAULT_SEED) if isinstance(run, dict) else DEFAULT_SEED


def _err(field: str, what: str, prefix: str = "") -> ScenarioError:
    head = f"{field}: " if field else ""
    return ScenarioError(f"{prefix}{head}{what}", field)


# ---- checking a document ---------------------------------------------------------


def check_document(doc: Any, *, scenario: bool = True, root: str = "", prefix: str = "") -> None:
    """Refuses what cannot reach the Rust validator intact, naming the path:
    TOML dates and times, NaN and infinite numbers, nesting deeper than
    ``MAX_DEPTH``, table keys that are not strings, values that are not TOML
    (or JSON null, for documents given as dicts), integers far beyond 64
    bits. With ``scenario``, ``doc`` must be a table whose ``network`` and
    ``run`` are tables and ``flows``/``udp``/``short_flows``/``web`` arrays
    of tables (Python code relies on that before Rust sees the document).
    ``root`` is the path of ``doc`` itself; ``prefix`` starts every message
    (e.g. the file name).
    Iterative: any depth of input is safe."""
    if scenario and not isinstance(doc, dict):
        raise _err(root or "scenario", f"must be a table, not {kind_of(doc)}", prefix)
    stack: list[tuple[Any, str, int]] = [(doc, root, 0)]
    seen = 0
    while stack:
        v, path, depth = stack.pop()
        seen += 1
        if seen > MAX_VALUES:
            raise _err(path, f"more than {MAX_VALUES:,} values in the document; a scenario has far fewer", prefix)
        if depth > MAX_DEPTH:
            raise _err(path, f"nested deeper than {MAX_DEPTH} levels of tables and arrays", prefix)
        if isinstance(v, dict):
            items = []
            for k, x in v.items():
                if not isinstance(k, str):
                    raise _err(path or "scenario", f"table keys must be strings, not {kind_of(k)}", prefix)
                if not _is_unicode(k):
                    raise _err(key_path(path, k), "the key is not valid Unicode text", prefix)
                items.append((x, key_path(path, k), depth + 1))
            stack.extend(reversed(items))
        elif isinstance(v, (list, tuple)):
            stack.extend(reversed([(x, f"{path}[{i}]", depth + 1) for i, x in enumerate(v)]))
        elif isinstance(v, str):
            if not _is_unicode(v):
                raise _err(path, "not valid Unicode text (lone surrogate)", prefix)
        elif isinstance(v, bool) or v is None:
            pass
        elif isinstance(v, int):
            if v.bit_length() > 128:
                raise _err(path, f"a whole number of {v.bit_length()} bits is out of range for any field", prefix)
        elif isinstance(v, float):
            if not math.isfinite(v):
                raise _err(path, f"{v!r} is not allowed; give a finite number", prefix)
        elif isinstance(v, (datetime.date, datetime.time)):
            raise _err(path, _DATE_MSG, prefix)
        else:
            raise _err(path, f"{type(v).__name__} is not a TOML value (string, number, boolean, array or table)", prefix)
    if scenario:
        _check_structure(doc, root, prefix)


def _is_unicode(s: str) -> bool:
    if s.isascii():
        return True
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _check_structure(doc: dict, root: str, prefix: str) -> None:
    """The shapes Python relies on: ``run`` a table (``--seed`` sets
    ``run.seed``), flow entries tables (``compare`` sets their ``cc``)."""
    for k in _TABLES:
        if k in doc and not isinstance(doc[k], dict):
            raise _err(key_path(root, k), f"must be a table ([{k}]), not {kind_of(doc[k])}", prefix)
    for k in _ARRAYS_OF_TABLES:
        if k not in doc:
            continue
        v = doc[k]
        if not isinstance(v, list):
            raise _err(key_path(root, k), f"must be an array of tables ([[{k}]] entries), not {kind_of(v)}", prefix)
        for i, e in enumerate(v):
            if not isinstance(e, dict):
                raise _err(f"{key_path(root, k)}[{i}]", f"must be a table, not {kind_of(e)}", prefix)


# ---- the scenario files shipped with longfat ------------------------------------


def shipped_dir() -> Path:
    """The directory of the scenario files shipped with longfat (package data,
    ``longfat/scenarios/``; in a clone, ``scenarios/`` at the top links to
    it): ``canonical.toml`` and the others, and one directory per paper for
    ``longfat reproduce``. Found with importlib.resources, so an installed
    wheel finds its own copy wherever the command runs."""
    # longfat holds a compiled extension, so it is always a real directory
    # (never imported from a zip file): the resource is a plain path.
    return Path(os.fspath(importlib.resources.files("longfat") / "scenarios"))


def _natural_key(name: str) -> list:
    """Sort key: fig2 before fig10."""
    return [(0, int(t), "") if t.isdigit() and t.isascii() and len(t) < 30 else (1, 0, t) for t in re.split(r"([0-9]+)", name)]


def shipped_scenarios() -> list[str]:
    """Every shipped scenario file, as its path under ``shipped_dir()``
    (``canonical.toml``, ``ltcp/fig5.toml``, ...): top-level files first."""
    root = shipped_dir()
    names = [p.relative_to(root).as_posix() for p in root.rglob("*.toml") if p.is_file()]
    return sorted(names, key=lambda n: (n.count("/"), _natural_key(n)))


def find_scenario(arg: str | os.PathLike) -> Path:
    """The scenario file a command-line argument names: an existing file as
    it is; otherwise a shipped scenario by its name (``canonical``,
    ``ltcp/fig5``, with or without ``.toml``, or ``scenarios/...`` as the
    README writes it); otherwise ``arg`` unchanged, so that reading it fails
    with the usual error. Only names in ``shipped_scenarios()`` are looked
    up, so no argument reaches outside ``shipped_dir()``."""
    path = Path(arg)
    try:
        if path.exists():
            return path
    except (OSError, ValueError):  # a name too long, a NUL byte: reading it says so
        return path
    name = path.as_posix().removeprefix("scenarios/")
    if not name.endswith(".toml"):
        name += ".toml"
    if name in shipped_scenarios():
        return shipped_dir() / name
    return path


# ---- reading files -------------------------------------------------------------


def load_scenario(source: str | Path | dict, *, keep_reproduce: bool = False, keep_sweep: bool = False) -> dict:
    """Reads a scenario: a path to a TOML file, a shipped scenario's name
    (``canonical``, ``scenarios/ltcp/fig5.toml``: ``find_scenario``, as the
    command line resolves them, so the README's examples work from any
    directory), or an already-parsed dict.
    A ``[reproduce]`` table (the sweep ``longfat reproduce`` runs) is dropped
    unless ``keep_reproduce``, and a ``[sweep]`` table (the grid of
    ``longfat sweep``) unless ``keep_sweep``: the rest is the base point.
    Raises ScenarioError naming the field for anything that cannot be
    handed to the validator (see ``check_document``)."""
    if isinstance(source, dict):
        doc = dict(source)
        if not keep_reproduce:
            doc.pop("reproduce", None)
        if not keep_sweep:
            doc.pop("sweep", None)
        check_document(doc)  # before deepcopy, which would recurse without limit
        return copy.deepcopy(doc)
    if not isinstance(source, (str, os.PathLike)):
        raise ScenarioError(f"scenario: expected a TOML file path or a dict, not {kind_of(source)}", "")
    path = find_scenario(source)
    doc = _read_toml(path)
    if not keep_reproduce:
        doc.pop("reproduce", None)
    if not keep_sweep:
        doc.pop("sweep", None)
    check_document(doc, prefix=f"{display(str(path), 300)}: " if keep_reproduce else "")
    return doc


def _read_toml(path: Path) -> dict:
    try:
        if not path.exists():
            raise ScenarioError(f"scenario file {str(path)!r} does not exist", "")
        if not path.is_file():
            raise ScenarioError(f"scenario file {str(path)!r} is not a file", "")
        text = path.read_text(encoding="utf-8")
    except ScenarioError:  # a ValueError: not to be wrapped below
        raise
    except UnicodeDecodeError:
        raise ScenarioError(f"{display(str(path), 300)}: not a UTF-8 text file", "") from None
    except (OSError, ValueError) as e:
        raise ScenarioError(f"scenario file {str(path)!r}: cannot read it: {getattr(e, 'strerror', None) or e}", "") from None
    return parse_toml(text, display(str(path), 300))


def parse_toml(text: str, where: str) -> dict:
    """``tomllib.loads`` with every failure a ScenarioError starting with ``where``."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(f"{where}: TOML syntax error: {_one_line(str(e))}", "") from None
    except RecursionError:
        field, line = _deep_spot(text)
        if field:
            raise ScenarioError(f"{field}: nested deeper than {MAX_DEPTH} levels of tables and arrays (line {line} of {where})", field) from None
        raise ScenarioError(f"{where}: tables and arrays nested deeper than {MAX_DEPTH} levels", "") from None
    except ValueError as e:  # e.g. an integer of more than 4300 digits
        raise ScenarioError(f"{where}: TOML value error: {_one_line(str(e))}", "") from None


def _one_line(s: str) -> str:
    return " ".join(s.split())


def _deep_spot(text: str) -> tuple[str, int]:
    """Where a TOML text nests arrays/inline tables deeper than MAX_DEPTH:
    (``table.key``, line number), or ("", 0). A rough scan: it skips strings
    and comments and is only used to name the spot in the message."""
    header = ""
    key = ""
    arrays: dict[str, int] = {}
    depth = 0
    line = 1
    i = 0
    n = len(text)
    line_start = True
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            line_start = True
            i += 1
            continue
        if line_start and depth == 0:
            stripped_end = text.find("\n", i)
            row = text[i : n if stripped_end < 0 else stripped_end].strip()
            if row.startswith("[["):
                name = row.split("]]", 1)[0].strip("[ ")
                arrays[name] = arrays.get(name, -1) + 1
                header = f"{name}[{arrays[name]}]"
                i = n if stripped_end < 0 else stripped_end
                continue
            if row.startswith("["):
                header = row.split("]", 1)[0].strip("[ ")
                i = n if stripped_end < 0 else stripped_end
                continue
            if "=" in row:
                key = row.split("=", 1)[0].strip()
        line_start = False
        if c == "#":
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if c in "\"'":
            q3 = text[i : i + 3]
            if q3 in ('"""', "'''"):
                j = text.find(q3, i + 3)
                line += text.count("\n", i, n if j < 0 else j)
                i = n if j < 0 else j + 3
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if (c == '"' and text[j] == "\\") else 1
            i = j + 1
            continue
        if c in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                full = f"{header}.{key}" if header and key else key or header
                return full, line
        elif c in "]}":
            depth = max(depth - 1, 0)
        i += 1
    return "", 0


# ---- --set -----------------------------------------------------------------------


def parse_value(text: str, key: str = "", name: str | None = None) -> Any:
    """A TOML literal (number, bool, quoted string, array, inline table) or a
    bare string (anything that is not exactly one TOML value). Errors start
    with ``name`` (default ``--set KEY``)."""
    name = name if name is not None else f"--set {display(key)}"
    try:
        doc = tomllib.loads(f"v = {text}")
    except tomllib.TOMLDecodeError:
        return text
    except RecursionError:
        raise ScenarioError(f"{name}: the value is nested deeper than {MAX_DEPTH} levels", key) from None
    except ValueError as e:
        raise ScenarioError(f"{name}: {_one_line(str(e))}", key) from None
    if list(doc) != ["v"]:
        return text
    return doc["v"]


def split_key(key: str, name: str | None = None) -> list[str | int]:
    """``flows[0].tcp.min_rto`` or ``flows.0.tcp.min_rto`` -> ['flows', 0, 'tcp', 'min_rto']."""
    name = name if name is not None else f"--set {display(key)}"
    if not isinstance(key, str):
        raise ScenarioError(f"{name}: a key must be a string, not {kind_of(key)}", str(key))
    if not key:
        raise ScenarioError(f"{name}: empty key; write e.g. flows[0].cc", "--set")
    parts: list[str | int] = []
    for piece in key.split("."):
        if _DIGITS.match(piece):
            parts.append(_index(piece, key, name))
            continue
        m = _KEY_PART.match(piece)
        if not m:
            raise ScenarioError(f"{name}: malformed key part {_quote(piece, 40)}; write e.g. flows[0].cc", key)
        parts.append(m.group(1))
        parts.extend(_index(i, key, name) for i in _INDEX.findall(m.group(2)))
        if len(parts) > MAX_DEPTH:
            raise ScenarioError(f"{name}: a key of more than {MAX_DEPTH} parts names no scenario field", key)
    return parts


def _index(digits: str, key: str, name: str) -> int:
    if len(digits) > _MAX_INDEX_DIGITS:
        raise ScenarioError(f"{name}: index {digits[:12]}{'...' if len(digits) > 12 else ''} is out of range", key)
    return int(digits)


def check_key(key: Any, name: str, field: str | None = None) -> None:
    """Refuses a malformed ``--set``-style path: the message starts with
    ``name``, the error's field is ``field`` (default: the key)."""
    try:
        split_key(key, name)
    except ScenarioError as e:
        raise ScenarioError(e.args[0], field if field is not None else e.args[1]) from None


def apply_overrides(scenario: dict, overrides: Iterable[str]) -> dict:
    """Applies ``key=value`` assignments; unknown keys are left for validation to name."""
    check_document(scenario)  # before deepcopy, which would recurse without limit
    out = copy.deepcopy(scenario)
    if isinstance(overrides, str):
        overrides = [overrides]
    for item in overrides:
        if not isinstance(item, str):
            raise ScenarioError(f"--set: expected a key=value string, not {kind_of(item)}", "--set")
        if "=" not in item:
            raise ScenarioError(f"--set {display(item)}: expected key=value (e.g. run.duration=\"10s\")", item)
        key, text = item.split("=", 1)
        key = key.strip()
        set_path(out, key, parse_value(text.strip(), key))
    check_document(out)
    return out


def set_path(doc: dict, key: str, value: Any, *, name: str | None = None) -> None:
    """Sets ``flows[0].tcp.min_rto``-style ``key`` in ``doc`` to ``value``,
    creating tables on the way; list indices must exist. Errors start with
    ``name`` (default ``--set KEY``) and carry it as their field (default
    ``key``)."""
    field = name if name is not None else key if isinstance(key, str) else ""
    if name is None:
        name = f"--set {display(key)}" if isinstance(key, str) else "--set"
    parts = split_key(key, name)
    node: Any = doc
    walked = ""
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        here = walked or "the scenario"
        if isinstance(part, int):
            if not isinstance(node, list):
                raise ScenarioError(f"{name}: {here} is {kind_of(node)}, not an array; [{part}] does not exist", field)
            if part >= len(node):
                raise ScenarioError(f"{name}: index {part} out of range ({here} has {len(node)} entries)", field)
            if last:
                node[part] = copy.deepcopy(value)
            else:
                node = node[part]
            walked = f"{walked}[{part}]"
        else:
            if not isinstance(node, dict):
                raise ScenarioError(f"{name}: {here} is {kind_of(node)}, not a table; it has no field {part!r}", field)
            if last:
                node[part] = copy.deepcopy(value)
            elif part in node:
                node = node[part]
            elif isinstance(parts[i + 1], int):
                raise ScenarioError(f"{name}: {key_path(walked, part)} does not exist; index {parts[i + 1]} out of range (0 entries)", field)
            else:
                node = node.setdefault(part, {})
            walked = key_path(walked, part)
