"""The algorithm catalogue, read from the declarations in ``crates/longfat-cc``
(each algorithm's one-liner and paper, each parameter's unit, default,
per-profile defaults, range, description and source), and written out as
text, JSON or the Markdown tables of docs/algorithms.md."""

from __future__ import annotations

import json
import re
from functools import cache

from longfat._native import catalogue as _declarations

PROFILES = ("rfc", "ns2", "linux")

#: The generated parts of docs/algorithms.md sit between these markers;
#: ``NAME`` is an algorithm's name, or ``profiles`` for the table of the
#: parameters each transport profile sets.
BEGIN = "<!-- catalogue {name}: generated from crates/longfat-cc by scripts/algorithm_tables.py; do not edit -->"
END = "<!-- catalogue {name} end -->"
_BLOCK = re.compile(r"<!-- catalogue (\S+): generated.*?-->\n.*?<!-- catalogue \1 end -->", re.S)


@cache
def catalogue() -> tuple[dict, ...]:
    """Every algorithm as ``crates/longfat-cc`` declares it (see
    ``longfat algorithms --format json``)."""
    return tuple(_declarations())


def what_it_does(algorithm: str) -> str:
    """The algorithm's one-line summary ('' for a name not in the catalogue)."""
    return next((a["what"] for a in catalogue() if a["name"] == algorithm), "")


def number(v: float) -> str:
    """A declared number as the docs write it: 50, 0.125, 1e9, 1e-7."""
    if v == int(v) and abs(v) < 1e6:
        return str(int(v))
    short = f"{v:.0e}"
    if (abs(v) >= 1e6 or abs(v) < 1e-4) and float(short) == v:
        mantissa, exponent = short.split("e")
        return f"{mantissa}e{int(exponent)}"
    return repr(v)


def range_text(r: dict) -> str:
    lo, hi = number(r["lo"]), number(r["hi"])
    return {
        "closed": f"[{lo}, {hi}]",
        "open": f"({lo}, {hi})",
        "whole": f"integer in [{lo}, {hi}]",
        "switch": "0 or 1",
    }[r["kind"]]


def default_text(p: dict) -> str:
    """The default, and where a profile's differs, that one: ``0 (linux: 1)``."""
    text = "unset" if p["default"] is None else number(p["default"])
    others = [
        f"`{profile}`: {number(v)}" for profile, v in p["profile_defaults"].items() if v is not None and v != p["default"]
    ]
    return f"{text} ({', '.join(others)})" if others else text


def params_table(a: dict) -> str:
    """One algorithm's parameter table (Markdown), with its checks across
    parameters below it."""
    if a["kind"] == "transport":
        return "A transport: its settings are scenario fields, its `params` those of the controller it runs.\n"
    if not a["params"]:
        return "No parameters (`params` must be empty).\n"
    rows = ["| param | default | unit | range | meaning | source |", "|---|---|---|---|---|---|"]
    for p in a["params"]:
        rows.append(
            f"| `{p['name']}` | {default_text(p)} | {p['unit']} | {range_text(p['range'])} | {p['about']} | {p['source']} |"
        )
    text = "\n".join(rows) + "\n"
    if a["constraints"]:
        text += "\nAcross parameters: " + "; ".join(f"`{c}`" for c in a["constraints"]) + ".\n"
    return text


def profiles_table() -> str:
    """The parameters each transport profile sets unless the scenario does."""
    rows = ["| algorithm | profile | parameters it sets |", "|---|---|---|"]
    for a in catalogue():
        for profile in PROFILES[1:]:
            set_ = [
                f"`{p['name']} = {number(p['profile_defaults'][profile])}`"
                for p in a["params"]
                if p["profile_defaults"][profile] is not None and p["profile_defaults"][profile] != p["default"]
            ]
            if set_:
                rows.append(f"| `{a['name']}` | `{profile}` | {', '.join(set_)} |")
    return "\n".join(rows) + "\n"


def generated(name: str) -> str:
    """The generated block ``name`` (an algorithm, or ``profiles``), markers included."""
    if name == "profiles":
        body = profiles_table()
    else:
        body = params_table(next(a for a in catalogue() if a["name"] == name))
    return f"{BEGIN.format(name=name)}\n{body}{END.format(name=name)}"


def with_generated_blocks(text: str) -> str:
    """``text`` (docs/algorithms.md) with every generated block regenerated."""
    return _BLOCK.sub(lambda m: generated(m.group(1)), text)


def to_json() -> str:
    return json.dumps(list(catalogue()), indent=2)


def to_markdown() -> str:
    """Every algorithm's table, for reading outside the docs."""
    parts = [f"## `{a['name']}`: {a['what']}\n\n{a['paper']}\n\n{params_table(a)}" for a in catalogue()]
    return "\n".join(parts) + f"\n## Transport profiles\n\n{profiles_table()}"
