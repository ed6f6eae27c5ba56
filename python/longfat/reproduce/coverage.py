"""What of a paper a reproduction covers, figure by figure and table by table.

Each paper module states its ``COVERAGE``: for every figure and table the
paper has (``figures_in`` finds them in its text; the tests hold the two
lists equal), whether the report reproduces it in full, in part or not at
all, or whether there is nothing to simulate (a schematic, a topology
drawing), with the experiments (scenario files) that cover it and, for
anything short of full, what is missing and why. The report prints the
table and its score; the README's verdict table carries the score.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: A status and what it counts towards the score (None: not counted).
STATUSES: dict[str, float | None] = {"full": 1.0, "partly": 0.5, "not": 0.0, "n-a": None}


@dataclass(frozen=True)
class Cover:
    status: str  # STATUSES
    experiments: tuple[str, ...] = ()  # the scenario files (experiment names) that cover it
    why: str = ""  # what is missing, or why there is nothing to simulate

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"coverage status {self.status!r}: one of {', '.join(STATUSES)}")
        if self.status in ("full", "partly") and not self.experiments:
            raise ValueError(f"a {self.status!r} figure names the experiments that cover it")
        if self.status != "full" and not self.why:
            raise ValueError(f"a {self.status!r} figure says why")

    def to_json(self, figure: str) -> dict:
        return {"figure": figure, "status": self.status, "experiments": list(self.experiments), "why": self.why}


def score(coverage: dict[str, Cover]) -> float:
    """Full counts 1, partly 1/2, not 0, over the figures with something to
    reproduce (n-a left out); 1.0 when there are none."""
    counted = [STATUSES[c.status] for c in coverage.values() if STATUSES[c.status] is not None]
    return sum(counted) / len(counted) if counted else 1.0


_ROMAN = {"I": 1, "II": 2, "III": 3, "IV": 4, "V": 5, "VI": 6, "VII": 7, "VIII": 8, "IX": 9, "X": 10}
_NUM = r"([0-9]+|[IVX]+)\b"
# A caption: a line that begins with the figure's or table's name and number,
# then "." or ":" ("Fig. 3. ...", "Figure 3: ...", "TABLE I: ...").
_CAPTION = re.compile(r"^\W*(Fig\.|Figure|Table|TABLE)\s*" + _NUM + r"\s*[.:]", re.MULTILINE)
_TABLE = re.compile(r"\b(Table|TABLE|table)\s+" + _NUM)


def figures_in(text: str) -> list[str]:
    """Every figure and table of a paper: each caption ("Fig. 3. ...",
    "Figure 3: ...", "TABLE I: ..."; a figure named in the text only is
    not one: LTCP's text numbers its last figures one above their
    captions), and every table the text names (eHSTCP's tables have no
    captions in the text we have). "Fig. N" and "Table N" (Roman numerals
    as Arabic), each once, in order of first appearance."""
    found: list[tuple[int, str]] = []
    for m in _CAPTION.finditer(text):
        found.append((m.start(), ("Table " if m.group(1).lower() == "table" else "Fig. ") + str(_number(m.group(2)))))
    for m in _TABLE.finditer(text):
        found.append((m.start(), "Table " + str(_number(m.group(2)))))
    seen: list[str] = []
    for _, name in sorted(found):
        if name not in seen:
            seen.append(name)
    return seen


def _number(num: str) -> int:
    return int(num) if num.isdigit() else _ROMAN[num]


def table_rows(coverage: dict[str, Cover]) -> list[tuple[str, str, str, str]]:
    """(figure, status, experiments, why) in the paper's order of figures
    then tables."""
    def order(name: str) -> tuple[int, int]:
        kind, n = name.split(" ")
        return (0 if kind == "Fig." else 1, int(n))

    return [(f, c.status, ", ".join(c.experiments), c.why) for f, c in sorted(coverage.items(), key=lambda kv: order(kv[0]))]
