"""Plots of a run: goodput per flow, cwnd per flow, bottleneck queue."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
from matplotlib.backend_bases import FigureCanvasBase  # noqa: E402

from longfat._native import ScenarioError  # noqa: E402
from longfat.catalogue import what_it_does  # noqa: E402
from longfat.outdir import atomic_file, check_output_file, is_result_dir  # noqa: E402

MAX_LEGEND = 10
#: A plot of more than MAX_LEGEND flows draws this many alone (those with the
#: most mean goodput) and the rest as a median and a band between these
#: percentiles across flows, per sample time.
TOP_FLOWS = 5
BAND_PERCENTILES = (10, 50, 90)


def _groups(idx: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """The distinct values of ``idx`` (sorted) and, for each, the rows that
    hold it, in row order: one stable sort instead of one scan of every row
    per value (3,000 flows x 4.5 M rows)."""
    if len(idx) == 0:
        return idx, []
    order = np.argsort(idx, kind="stable")
    starts = np.flatnonzero(np.diff(idx[order])) + 1
    return idx[order[np.r_[0, starts]]], np.split(order, starts)


def _names(column, rows: list[np.ndarray]) -> list[str]:
    """The name column's value at each group's first row: one string per
    group, never one per row."""
    first = np.array([r[0] for r in rows], dtype=np.int64)
    return column.take(pa.array(first)).to_pylist()


def _across_flows(t: np.ndarray, fidx: np.ndarray, ids: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sample times and the BAND_PERCENTILES of ``values`` across the flows
    ``ids`` (sorted) at each (NaN, e.g. a UDP flow's cwnd, is left out;
    times without a value are dropped). Holds one value per flow and
    sample, as the table does."""
    times, ti = np.unique(t, return_inverse=True)
    grid = np.full((len(times), len(ids)), np.nan)
    grid[ti, np.searchsorted(ids, fidx)] = values
    ok = np.isfinite(grid).any(axis=1)
    return times[ok], np.nanpercentile(grid[ok], BAND_PERCENTILES, axis=1)


def _draw(flows, links, title: str, out: Path, fmt: str = "png") -> Path:
    """Goodput and cwnd per flow and the queues, from the tables' numeric
    columns (numpy arrays, nothing per row in Python). Up to MAX_LEGEND
    flows are drawn one line each; more are drawn as their percentiles per
    sample time plus the TOP_FLOWS with the most goodput, and the title says
    so."""
    fig, axes = plt.subplots(3, 1, figsize=(9, 9), sharex=True, constrained_layout=True)
    ax_g, ax_c, ax_q = axes
    t = np.asarray(flows["time_s"])
    fidx = np.asarray(flows["flow"])
    goodput = np.asarray(flows["goodput_bps"]) / 1e6
    cwnd = np.asarray(flows["cwnd_pkts"], dtype=float)
    # PLT connections: each module's window, dotted (HCM) and dashed (LCM),
    # in the flow's colour.
    modules = "lcm_cwnd_pkts" in flows.column_names
    if modules:
        hcm = flows["hcm_cwnd_pkts"].to_numpy(zero_copy_only=False)
        lcm = flows["lcm_cwnd_pkts"].to_numpy(zero_copy_only=False)
    ids, rows = _groups(fidx)
    aggregate = len(ids) > MAX_LEGEND
    drawn = range(len(ids))
    if aggregate:
        mean = np.array([goodput[r].mean() for r in rows])
        drawn = np.argsort(-mean, kind="stable")[:TOP_FLOWS]
    names = _names(flows["flow_name"], [rows[k] for k in drawn])
    for k, label in zip(drawn, names):
        sel = rows[k]
        ax_g.plot(t[sel], goodput[sel], lw=1, label=label)
        if np.isfinite(cwnd[sel]).any():
            (line,) = ax_c.plot(t[sel], cwnd[sel], lw=1, label=label)
            if modules and np.isfinite(lcm[sel]).any():
                c = line.get_color()
                ax_c.plot(t[sel], hcm[sel], lw=1, ls=":", color=c, label=f"{label} HCM")
                ax_c.plot(t[sel], lcm[sel], lw=1, ls="--", color=c, label=f"{label} LCM")
    if aggregate:
        n = f"{len(ids):,} flows"
        band = f"{BAND_PERCENTILES[0]}-{BAND_PERCENTILES[2]} %"
        for ax, values in ((ax_g, goodput), (ax_c, cwnd)):
            times, (lo, mid, hi) = _across_flows(t, fidx, ids, values)
            if len(times) == 0:
                continue
            ax.fill_between(times, lo, hi, color="0.6", alpha=0.35, lw=0, label=f"{band} of {n}")
            ax.plot(times, mid, lw=1.5, color="black", label=f"median of {n}")
        title = f"{title}: {n} as median and {band} band, the {len(drawn)} with most mean goodput alone"
        legend = f"top {len(drawn)} by mean goodput"
        ax_g.legend(loc="lower right", fontsize="small", title=legend, title_fontsize="small")
        ax_c.legend(loc="upper right", fontsize="small", title=legend, title_fontsize="small")
    else:
        if modules:
            ax_c.legend(loc="upper right", fontsize="small")
        ax_g.legend(loc="lower right", fontsize="small")
    ax_g.set_ylabel("goodput (Mbit/s)")
    ax_c.set_ylabel("cwnd (packets)")
    lt = np.asarray(links["time_s"])
    q = np.asarray(links["queue_pkts"])
    _, lrows = _groups(np.asarray(links["link"]))
    for sel, name in zip(lrows, _names(links["link_name"], lrows)):
        if name.endswith(".reverse") and not q[sel].any():
            continue
        ax_q.plot(lt[sel], q[sel], lw=1, label=name)
    ax_q.set_ylabel("queue (packets)")
    ax_q.set_xlabel("time (s)")
    ax_q.legend(loc="upper right", fontsize="small")
    for ax in axes:
        ax.grid(alpha=0.3)
    fig.suptitle(title)
    fig.savefig(out, dpi=110, format=fmt)
    plt.close(fig)
    return out


def plot_run(result, out: str | Path) -> Path:
    """Draws a RunResult to a PNG."""
    name = result.scenario.get("name") or "run"
    return _draw(result.flows, result.links, f"{name} (seed {result.summary.get('seed')})", Path(out))


def plot_into(result) -> Callable[[Path], Path]:
    """The ``draw`` of ``RunResult.save`` that draws the run's plot.png into
    the result directory as it is saved: ``result.save(out, draw=plot_into(result))``."""
    return lambda directory: plot_run(result, Path(directory) / "plot.png")


#: The columns _draw reads (the PLT module columns only where present).
FLOW_COLUMNS = ("time_s", "flow", "flow_name", "goodput_bps", "cwnd_pkts", "hcm_cwnd_pkts", "lcm_cwnd_pkts")
LINK_COLUMNS = ("time_s", "link", "link_name", "queue_pkts")


def _read_columns(path: Path, columns: tuple[str, ...]):
    """The file's table with only those of ``columns`` it has: a saved run's
    other columns would take memory the plot never uses."""
    present = set(pq.read_schema(path).names)
    return pq.read_table(path, columns=[c for c in columns if c in present])


def plot_dir(run_dir: str | Path, out: str | Path | None = None, force: bool = False) -> Path:
    """Draws a saved result directory (flows.parquet, links.parquet,
    summary.json) to ``out`` (default ``run_dir/plot.png``). An existing
    ``out`` is replaced only with ``force``, or when it is the default
    plot.png of a longfat result directory; the image is written to a
    temporary file first and renamed into place."""
    d = Path(run_dir)
    for f in ("flows.parquet", "links.parquet", "summary.json"):
        if not (d / f).is_file():
            raise FileNotFoundError(f"{d} is not a longfat result directory (missing {f})")
    target = Path(out) if out is not None else d / "plot.png"
    fmt = target.suffix[1:].lower() or "png"
    formats = FigureCanvasBase.get_supported_filetypes()
    if fmt not in formats:
        raise ScenarioError(f"--out: cannot draw a {fmt!r} image; end the name with .png (or one of: {', '.join(sorted(formats))})", "--out")
    check_output_file(target, force, replaceable=out is None and is_result_dir(d))
    summary = json.loads((d / "summary.json").read_text())
    title = f"{summary.get('scenario') or d.name} (seed {summary.get('seed')})"
    flows, links = _read_columns(d / "flows.parquet", FLOW_COLUMNS), _read_columns(d / "links.parquet", LINK_COLUMNS)
    with atomic_file(target) as tmp:
        _draw(flows, links, title, tmp, fmt)
    return target


#: The comparison figure's goodput is a running mean over this many seconds:
#: per-sample in-order goodput jumps when a hole fills (PLT's LCM losses wait
#: for the HCM), which would hide the other curves.
GOODPUT_MEAN_S = 2.0


def samples_in(t: np.ndarray, seconds: float) -> int:
    """Samples of the series ``t`` that span ``seconds`` (at least 1)."""
    if len(t) < 2:
        return 1
    dt = float(np.median(np.diff(t)))
    return max(1, int(round(seconds / dt))) if dt > 0 else 1


def running_mean(x: np.ndarray, n: int) -> np.ndarray:
    """Trailing mean over the last ``n`` samples (fewer at the start)."""
    if n <= 1 or len(x) == 0:
        return x
    c = np.cumsum(np.insert(np.asarray(x, dtype=float), 0, 0.0))
    idx = np.arange(1, len(x) + 1)
    lo = np.maximum(idx - n, 0)
    return (c[idx] - c[lo]) / (idx - lo)


def plot_comparison(results: dict, out: str | Path) -> Path:
    """cwnd and goodput over time, one colour per algorithm (every TCP flow
    of that algorithm's run, or with more than MAX_LEGEND flows their median,
    so labelled), with the bottleneck queue below."""
    fig, (ax_c, ax_g, ax_q) = plt.subplots(3, 1, figsize=(15, 9), sharex=True, constrained_layout=True)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    title = None
    for i, (algo, r) in enumerate(results.items()):
        colour = colours[i % len(colours)]
        flows, links = r.flows, r.links
        t = np.asarray(flows["time_s"])
        fidx = np.asarray(flows["flow"])
        cwnd = np.asarray(flows["cwnd_pkts"], dtype=float)
        goodput = np.asarray(flows["goodput_bps"]) / 1e6
        what = what_it_does(algo)
        long_label = f"{algo}: {what}" if what else algo
        ids, rows = _groups(fidx)
        if len(ids) > MAX_LEGEND:
            # One line per algorithm and panel: the median across its flows.
            median = f" (median of {len(ids):,} flows)"
            times, (_, c, _) = _across_flows(t, fidx, ids, cwnd)
            ax_c.plot(times, c, lw=1, color=colour, label=long_label + median)
            times, (_, g, _) = _across_flows(t, fidx, ids, goodput)
            ax_g.plot(times, running_mean(g, samples_in(times, GOODPUT_MEAN_S)), lw=1, color=colour, label=algo + median)
        else:
            for k, sel in enumerate(rows):
                ax_c.plot(t[sel], cwnd[sel], lw=1, color=colour, label=long_label if k == 0 else None)
                ts, g = t[sel], goodput[sel]
                ax_g.plot(ts, running_mean(g, samples_in(ts, GOODPUT_MEAN_S)), lw=1, color=colour, label=algo if k == 0 else None)
        lt = np.asarray(links["time_s"])
        lidx = np.asarray(links["link"])
        q = np.asarray(links["queue_pkts"])
        sel = lidx == np.unique(lidx)[0]
        ax_q.plot(lt[sel], q[sel], lw=1, color=colour, label=algo)
        title = title or (r.scenario.get("description") or r.scenario.get("name"))
    # Windows span decades between algorithms (PLT's two modules against a
    # Reno window under loss): a log scale shows them all.
    ax_c.set_yscale("log")
    ax_c.set_ylabel("cwnd (packets, log)")
    ax_g.set_ylabel(f"goodput (Mbit/s, {GOODPUT_MEAN_S:g} s mean)")
    ax_q.set_ylabel("bottleneck queue (packets)")
    ax_q.set_xlabel("time (s)")
    for ax in (ax_c, ax_g, ax_q):
        ax.grid(alpha=0.3)
    # The cwnd panel says what each algorithm does; the others only name it.
    ax_c.legend(loc="upper left", fontsize="x-small", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    ax_g.legend(loc="upper left", fontsize="small", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    ax_q.legend(loc="upper left", fontsize="small", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    fig.suptitle(title or "comparison")
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return Path(out)
