"""Rank heat maps: a table of scores (rows: algorithms; columns: criteria)
drawn as coloured cells, each coloured by its rank within its column so the
best and the worst of every criterion stand out, with the value printed in
the cell and the better direction in the column's header.

The better direction is not declared here: each caller passes its
criteria's own ``better`` text ("higher", "lower", "closer to 1", possibly
followed by a remark in parentheses), and ``direction`` reads its leading
words. Ranking is on the value as shown (the caller rounds it as its table
does), so cells that read the same rank the same. matplotlib is imported
only when drawing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

HIGHER, LOWER, NEAR_ONE = "higher", "lower", "closer to 1"
#: How each direction reads in a column header.
ARROWS = {HIGHER: "↑", LOWER: "↓", NEAR_ONE: "→1"}
#: How far from 1 a value is, for NEAR_ONE columns: "difference" |x - 1|,
#: or "ratio" max(x, 1/x) (for a ratio of two rates, where 1/2 and 2 are
#: equally far from even).
CLOSENESS = ("difference", "ratio")
#: Cell colours: rank fraction 0 (best) is the colour map's top end, 1
#: (worst) its bottom end (RdYlBu: blue best, red worst; readable with the
#: common colour-vision deficiencies).
CMAP = "RdYlBu"
NA_TEXT = "n/a"


def direction(better: str) -> str:
    """HIGHER, LOWER or NEAR_ONE from a criterion's ``better`` text, which
    must begin with one of them ("higher (1 = equal)" is HIGHER)."""
    text = better.strip().lower()
    for d in (NEAR_ONE, HIGHER, LOWER):
        if text == d or text.startswith(d + " "):
            return d
    raise ValueError(f"better: {better!r} does not begin with one of {HIGHER!r}, {LOWER!r}, {NEAR_ONE!r}")


def arrow(better: str) -> str:
    """The header's arrow for a ``better`` text: ↑, ↓ or →1."""
    return ARROWS[direction(better)]


def _badness(v: float, d: str, closeness: str) -> float:
    if d == HIGHER:
        return -v
    if d == LOWER:
        return v
    if closeness == "ratio":
        if v <= 0:
            return math.inf
        return max(v, 1 / v)
    return abs(v - 1)


def rank_fractions(values: Sequence[float | None], better: str, closeness: str = "difference") -> list[float | None]:
    """Each value's rank within ``values`` as a fraction: 0 for the best, 1
    for the worst, the distinct values between them evenly spaced (equal
    values share a rank, so tied best cells all get the best colour and
    tied worst ones the worst); None (and NaN) stays None (n/a). A column
    whose values are all equal gets 0.5 everywhere: no rank to show."""
    if closeness not in CLOSENESS:
        raise ValueError(f"closeness: {closeness!r} is not one of {', '.join(CLOSENESS)}")
    d = direction(better)
    keys = [None if v is None or (isinstance(v, float) and math.isnan(v)) else _badness(float(v), d, closeness) for v in values]
    distinct = sorted({k for k in keys if k is not None})
    if len(distinct) == 1:
        return [None if k is None else 0.5 for k in keys]
    pos = {k: i / (len(distinct) - 1) for i, k in enumerate(distinct)}
    return [None if k is None else pos[k] for k in keys]


@dataclass(frozen=True)
class Column:
    """One column of a heat map: its header (``label``, the arrow is added),
    its ``better`` text, and how 'closer to 1' is measured."""

    label: str
    better: str
    closeness: str = "difference"

    @property
    def header(self) -> str:
        return f"{self.label} {arrow(self.better)}"


@dataclass(frozen=True)
class Panel:
    """One block of rows ranked together (e.g. one path of the suite):
    ``values[i][j]`` is row i's value in column j as the cell shows it (None:
    n/a), ``texts[i][j]`` what the cell prints."""

    title: str
    rows: list[str]
    values: list[list[float | None]]
    texts: list[list[str]]

    def fractions(self, columns: Sequence[Column]) -> list[list[float | None]]:
        """rank_fractions per column, as rows."""
        cols = [rank_fractions([r[j] for r in self.values], c.better, c.closeness) for j, c in enumerate(columns)]
        return [[cols[j][i] for j in range(len(columns))] for i in range(len(self.rows))]


def cell_colour(fraction: float, cmap):
    """The RGBA colour of a cell of rank ``fraction`` (0 best)."""
    return cmap(1.0 - fraction)


def draw(columns: Sequence[Column], panels: Sequence[Panel], *, cell_w_in: float = 0.55, cell_h_in: float = 0.22, font_pt: float = 6.5,
         label_w_in: float = 0.85, header_rotation: float = 90):
    """A matplotlib Figure: one heat map per panel, stacked, sharing the
    column headers (at the top, upright, or with ``header_rotation`` 0
    level, for headers as narrow as a cell). Its size follows from the cells
    (``cell_w_in`` x ``cell_h_in`` inches each) and the longest header.
    Returns the figure (not pyplot's: drawing changes no backend or pyplot
    state, so a notebook's plots are left alone); the caller saves it."""
    for p in panels:
        if len(p.values) != len(p.rows) or len(p.texts) != len(p.rows) or any(len(r) != len(columns) for r in list(p.values) + list(p.texts)):
            raise ValueError(f"panel {p.title!r}: values and texts must be {len(p.rows)} rows of {len(columns)} columns")
    # Lay out the headers alone with a guess at their height, measure them,
    # then lay out the whole figure.
    args = (cell_w_in, cell_h_in, font_pt, label_w_in, header_rotation)
    fig, header = _layout(columns, panels[:1], 1.5, *args, cells=False)
    fig.canvas.draw()
    need = max((t.get_window_extent().height / fig.dpi for t in header), default=0.0) + 0.08
    fig, _ = _layout(columns, panels, need, *args)
    return fig


def _layout(columns, panels, header_h_in, cell_w_in, cell_h_in, font_pt, label_w_in, rotation, cells=True):
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle

    cmap = matplotlib.colormaps[CMAP]
    ncol = len(columns)
    width = label_w_in + cell_w_in * ncol + 0.05
    title_h = [0.25 if p.title else 0.04 for p in panels]  # room for each panel's title above it
    height = header_h_in + sum(title_h) + sum(cell_h_in * len(p.rows) for p in panels) + 0.05
    fig = Figure(figsize=(width, height))
    FigureCanvasAgg(fig)
    top = height - header_h_in
    header = []
    for k, p in enumerate(panels):
        h = cell_h_in * len(p.rows)
        bottom = top - title_h[k] - h
        ax = fig.add_axes((label_w_in / width, bottom / height, cell_w_in * ncol / width, h / height))
        ax.set_xlim(0, ncol)
        ax.set_ylim(len(p.rows), 0)
        fr = p.fractions(columns)
        for i in range(len(p.rows) if cells else 0):
            for j in range(ncol):
                f = fr[i][j]
                if f is None:
                    ax.add_patch(Rectangle((j, i), 1, 1, facecolor="white", edgecolor="0.7", hatch="////", lw=0))
                    ax.text(j + 0.5, i + 0.5, p.texts[i][j] or NA_TEXT, ha="center", va="center", fontsize=font_pt, color="0.35",
                            bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.5})
                    continue
                rgba = cell_colour(f, cmap)
                ax.add_patch(Rectangle((j, i), 1, 1, facecolor=rgba, edgecolor="white", lw=0.6))
                lum = 0.299 * rgba[0] + 0.587 * rgba[1] + 0.114 * rgba[2]
                ax.text(j + 0.5, i + 0.5, p.texts[i][j], ha="center", va="center", fontsize=font_pt, color="white" if lum < 0.45 else "black")
        ax.set_yticks([i + 0.5 for i in range(len(p.rows))])
        ax.set_yticklabels(p.rows, fontsize=font_pt + 1)
        ax.tick_params(length=0)
        for s in ax.spines.values():
            s.set_visible(False)
        if k == 0:
            ax.xaxis.tick_top()
            ax.set_xticks([j + 0.5 for j in range(ncol)])
            header = ax.set_xticklabels([c.header for c in columns], rotation=rotation, ha="center", va="bottom", fontsize=font_pt + 0.5)
        else:
            ax.set_xticks([])
        # the panel's title above its first row, in the row labels' column
        if p.title:
            fig.text(0.005, (bottom + h + 0.03) / height, p.title, ha="left", va="bottom", fontsize=font_pt + 1, fontweight="bold")
        top = bottom
    return fig, header
