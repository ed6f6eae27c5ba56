"""Small plotting helpers for the reproduction figures (matplotlib, Agg)."""

from __future__ import annotations

import contextlib
import contextvars
from pathlib import Path
from typing import Iterator

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def new(nrows: int = 1, ncols: int = 1, w: float = 9.0, h: float = 3.6):
    fig, axes = plt.subplots(nrows, ncols, figsize=(w, h * nrows), squeeze=False)
    return fig, axes


#: True while an analysis runs for its verdicts only (a look at the seeds):
#: figures are drawn but not laid out or written.
_DRAFT: contextvars.ContextVar[bool] = contextvars.ContextVar("longfat_figs_draft", default=False)


@contextlib.contextmanager
def drafting() -> Iterator[None]:
    """Inside, ``save`` closes each figure without writing it."""
    token = _DRAFT.set(True)
    try:
        yield
    finally:
        _DRAFT.reset(token)


def save(fig, outdir: Path, name: str) -> str:
    if not _DRAFT.get():
        fig.tight_layout()
        fig.savefig(outdir / name, dpi=90)
    plt.close(fig)
    return name


def bars(ax, groups: list[str], series: dict[str, list[float]], ylabel: str, title: str = "") -> None:
    """Grouped bars: one group per entry of ``groups``, one bar per series."""
    n = max(len(series), 1)
    width = 0.8 / n
    for k, (label, vals) in enumerate(series.items()):
        xs = [i + (k - (n - 1) / 2) * width for i in range(len(groups))]
        ax.bar(xs, vals, width=width, label=label)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
