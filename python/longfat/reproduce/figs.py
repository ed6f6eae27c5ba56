"""Small plotting helpers for the reproduction figures (matplotlib, Agg)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def new(nrows: int = 1, ncols: int = 1, w: float = 9.0, h: float = 3.6):
    fig, axes = plt.subplots(nrows, ncols, figsize=(w, h * nrows), squeeze=False)
    return fig, axes


def save(fig, outdir: Path, name: str) -> str:
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
