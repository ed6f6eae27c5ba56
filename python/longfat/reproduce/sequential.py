"""Sequential seeds: which cells of an experiment run to its next look.

A scenario file with ``looks = [5, 10, 20, 30]`` (core.py) runs every
point at the first look's seeds. After each look its analysis runs again
for its verdicts only (no figures written), at the file's corrected level
(core.LOOKS_LEVEL, the same at every look, so that a row's intervals at all
the looks it may stop at hold together with 95 %). A row goes on to the
next look when it is:

- a claim that is "not separable", or
- a negative control that is not separable beside a claim whose own check
  agrees (the claim is "not evidence" until its control is decided).

Its *cells* (the points of one key, over seeds) then run to the next
look's number of seeds; every other cell stays. The stopping rule is fixed
before the runs (the scenario file states the looks) and does not depend on
which way a row leans.

Which cells a row draws on is found, not declared: the analysis runs again
with each cell left out, and a row depends on the cells whose absence
changes its value or its check (a left-out cell that makes the analysis
fail counts as drawn on by every row). A cell that changes none of a row's
numbers when left out (one that is not the extreme of a maximum, say) does
not go on for that row.
"""

from __future__ import annotations

import json
import tempfile
import warnings
from pathlib import Path
from typing import Any, Callable

import numpy as np

from longfat.reproduce import figs
from longfat.reproduce.core import Experiment, Point, cell_of
from longfat.reproduce.criteria import AGREES, CONTROL_UNCLEAR, NOT_SEPARABLE, settle
from longfat.reproduce.measure import Runs
from longfat.reproduce.stats import at_level

Analysis = Callable[[Runs, Path, Experiment], Any]


def _rows(analyse: Analysis, pairs: list[tuple[Point, Any]], out: Path, exp: Experiment) -> dict[tuple, tuple[Any, str]]:
    """The analysis's rows, settled with their controls, by identity (item,
    criterion, group), each with a signature of what it measured."""
    section = analyse(Runs(pairs), out, exp)
    settle(section.rows)
    rows: dict[tuple, tuple[Any, str]] = {}
    for r in section.rows:
        c = r.check or {}
        key: tuple = (r.item, c.get("id", ""), c.get("group", ""))
        while key in rows:
            key += ("again",)
        rows[key] = (r, json.dumps({"value": r.value, "check": c}, sort_keys=True, default=str))
    return rows


def undecided(rows: dict[tuple, tuple[Any, str]]) -> list[tuple]:
    """The rows that a later look may decide: claims not separable, and
    controls not separable beside a claim whose own check agrees."""
    def scope(r) -> str:
        return (r.check or {}).get("scope") or "claim"

    waiting = {((r.check or {}).get("control"), (r.check or {}).get("group", "")) for r, _ in rows.values()
               if scope(r) == "claim" and (r.check or {}).get("control") and r.raw_verdict == AGREES}
    out = []
    for key, (r, _) in rows.items():
        c = r.check or {}
        if scope(r) != "claim":
            continue
        if c.get("role") == "control":
            if r.verdict == CONTROL_UNCLEAR and (c.get("id"), c.get("group", "")) in waiting:
                out.append(key)
        elif r.verdict == NOT_SEPARABLE:
            out.append(key)
    return out


def pending_cells(analyse: Analysis, exp: Experiment, pairs: list[tuple[Point, Any]]) -> set[str]:
    """The cells (core.cell_of) of ``exp`` that its undecided rows draw on,
    from its runs so far (``pairs``)."""
    with tempfile.TemporaryDirectory() as tmp, at_level(exp.level), figs.drafting(), warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        out = Path(tmp)
        full = _rows(analyse, pairs, out, exp)
        todo = undecided(full)
        if not todo:
            return set()
        cells = list(dict.fromkeys(cell_of(p) for p, _ in pairs))
        if len(cells) == 1:
            return set(cells)
        drawn: set[str] = set()
        for cell in cells:
            rest = [(p, r) for p, r in pairs if cell_of(p) != cell]
            try:
                rows = _rows(analyse, rest, out, exp)
            except Exception:  # the analysis cannot go without this cell: every row draws on it
                drawn.add(cell)
                continue
            if any(rows.get(k, (None, None))[1] != full[k][1] for k in todo):
                drawn.add(cell)
        return drawn
