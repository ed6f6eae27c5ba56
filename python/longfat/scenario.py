"""Loading scenario files (TOML) and applying ``--set key=value`` overrides."""

from __future__ import annotations

import copy
import re
import tomllib
from pathlib import Path
from typing import Any, Iterable

from longfat._native import ScenarioError

_KEY_PART = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)((?:\[\d+\])*)$")


def load_scenario(source: str | Path | dict, *, keep_reproduce: bool = False) -> dict:
    """Reads a scenario: a path to a TOML file, or an already-parsed dict.
    A ``[reproduce]`` table (the sweep ``longfat reproduce`` runs) is dropped
    unless ``keep_reproduce``: the rest is the experiment's base point."""
    if isinstance(source, dict):
        doc = copy.deepcopy(source)
    else:
        doc = _read_toml(Path(source))
    if not keep_reproduce:
        doc.pop("reproduce", None)
    return doc


def _read_toml(path: Path) -> dict:
    if not path.is_file():
        raise ScenarioError(f"scenario file {str(path)!r} does not exist", "")
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(f"{path}: TOML syntax error: {e}", "") from None
    except UnicodeDecodeError:
        raise ScenarioError(f"{path}: not a UTF-8 text file", "") from None


def _parse_value(text: str) -> Any:
    """A TOML literal (number, bool, quoted string, array, inline table) or a bare string."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def _split_key(key: str) -> list[str | int]:
    """``flows[0].tcp.min_rto`` or ``flows.0.tcp.min_rto`` -> ['flows', 0, 'tcp', 'min_rto']."""
    parts: list[str | int] = []
    for piece in key.split("."):
        if piece.isdigit():
            parts.append(int(piece))
            continue
        m = _KEY_PART.match(piece)
        if not m:
            raise ScenarioError(f"--set {key}: malformed key part {piece!r}; write e.g. flows[0].cc", key)
        parts.append(m.group(1))
        parts.extend(int(i) for i in re.findall(r"\[(\d+)\]", m.group(2)))
    return parts


def apply_overrides(scenario: dict, overrides: Iterable[str]) -> dict:
    """Applies ``key=value`` assignments; unknown keys are left for validation to name."""
    out = copy.deepcopy(scenario)
    for item in overrides:
        if "=" not in item:
            raise ScenarioError(f"--set {item!r}: expected key=value (e.g. run.duration=\"10s\")", item)
        key, text = item.split("=", 1)
        set_path(out, key.strip(), _parse_value(text.strip()))
    return out


def set_path(doc: dict, key: str, value: Any) -> None:
    """Sets ``flows[0].tcp.min_rto``-style ``key`` in ``doc`` to ``value``,
    creating tables on the way; list indices must exist."""
    parts = _split_key(key)
    node: Any = doc
    for i, part in enumerate(parts[:-1]):
        nxt = parts[i + 1]
        if isinstance(part, int):
            if not isinstance(node, list) or part >= len(node):
                have = len(node) if isinstance(node, list) else 0
                raise ScenarioError(f"--set {key}: index {part} out of range ({have} entries)", key)
            node = node[part]
        else:
            if not isinstance(node, dict):
                raise ScenarioError(f"--set {key}: {part!r} is not inside a table", key)
            node = node.setdefault(part, [] if isinstance(nxt, int) else {})
    last = parts[-1]
    if isinstance(last, int):
        if not isinstance(node, list) or last >= len(node):
            raise ScenarioError(f"--set {key}: index {last} out of range", key)
        node[last] = copy.deepcopy(value)
    else:
        if not isinstance(node, dict):
            raise ScenarioError(f"--set {key}: {last!r} is not inside a table", key)
        node[last] = copy.deepcopy(value)
