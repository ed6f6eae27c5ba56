"""Results as a notebook shows them: a short text repr, an HTML summary with
a small plot, and pandas DataFrames of the tables.

pandas is optional (``pip install 'longfat[notebook]'``) and imported only
when a DataFrame is asked for; the text and HTML reprs need only what the
base install has (numpy, pyarrow, matplotlib). Nothing here runs a
simulation or writes a file: ``RunResult`` and the study object call in.
"""

from __future__ import annotations

import base64
import html
import io
from typing import Any, Iterable

import numpy as np
import pyarrow as pa

#: What to install when pandas is missing.
NOTEBOOK_EXTRA = "pip install 'longfat[notebook]'"
#: The text repr lists each flow up to this many flows, then one line per
#: algorithm.
REPR_FLOWS = 5
#: The HTML summary's table shows at most this many flows (and says so).
HTML_FLOWS = 20
#: The HTML plot draws at most this many flows (and says so).
PLOT_FLOWS = 6


# ---- pandas ---------------------------------------------------------------------


def pandas(what: str):
    """The pandas module, or ImportError naming ``what`` needed it and the
    extra that installs it."""
    try:
        import pandas as pd
    except ImportError:
        raise ImportError(f"{what} needs pandas, which the base install of longfat leaves out: {NOTEBOOK_EXTRA}", name="pandas") from None
    return pd


def to_pandas(table: pa.Table, what: str):
    """``table`` as a DataFrame with the same column names (each already
    carries its unit: ``time_s``, ``rtt_ns``, ``goodput_bps``, ``cwnd_pkts``;
    counters such as ``retransmits`` are counts) and a RangeIndex.

    pyarrow's conversion with ``split_blocks`` keeps every column its own
    block, so a numeric column without nulls is a zero-copy view of the
    table's buffer (read-only, as pandas' copy-on-write has it). Copied:
    dictionary columns (``flow_name``, ``algorithm``, ``link_name``: pandas
    Categoricals, whose codes pandas allocates), columns with nulls (a
    float's nulls become NaN; an integer's make the column float64), and
    a column the table holds in several chunks."""
    pandas(what)
    return table.to_pandas(split_blocks=True, self_destruct=False)


# ---- numbers as text ---------------------------------------------------------------


def rate(bps: float | None) -> str:
    """A bit rate with three significant digits in the unit that keeps it
    at least 1: ``9547232.0`` -> ``"9.55 Mbit/s"``."""
    if bps is None or not np.isfinite(bps):
        return "n/a"
    for unit, size in (("Gbit/s", 1e9), ("Mbit/s", 1e6), ("kbit/s", 1e3)):
        if abs(bps) >= size:
            return f"{bps / size:.3g} {unit}"
    return f"{bps:.3g} bit/s"


def seconds(s: float | None) -> str:
    """``20.0`` -> ``"20 s"``, ``0.5`` -> ``"0.5 s"``."""
    return "n/a" if s is None else f"{s:g} s"


def _cell(v: Any, fmt: str = "{:,.2f}") -> str:
    if v is None or (isinstance(v, float) and not np.isfinite(v)):
        return "n/a"
    if isinstance(v, float):
        return fmt.format(v)
    return html.escape(str(v))


def _bottlenecks(summary: dict) -> list[dict]:
    """The monitored forward links (the bottlenecks a summary reports)."""
    return [l for l in summary.get("links", []) if l.get("monitored") and not str(l.get("name", "")).endswith(".reverse")]


def _headline(summary: dict, scenario: dict) -> str:
    name = summary.get("scenario") or scenario.get("name") or "run"
    flows = summary.get("flows", [])
    return (
        f"{name}: {seconds(summary.get('end_s'))} simulated (measured from {seconds(summary.get('measure_from_s'))}), "
        f"seed {summary.get('seed')}, {len(flows)} flow{'' if len(flows) == 1 else 's'}"
    )


# ---- the text repr ------------------------------------------------------------------


def result_repr(summary: dict, scenario: dict, transfers: int = 0) -> str:
    """A few lines: the scenario's name, its duration and seed, each flow's
    algorithm and goodput (one line per algorithm beyond REPR_FLOWS flows),
    the bottleneck's utilization and loss; never the tables' contents."""
    flows = summary.get("flows", [])
    lines = [f"<RunResult {_headline(summary, scenario)}"]
    if len(flows) <= REPR_FLOWS:
        width = max((len(str(f.get("name", ""))) for f in flows), default=0)
        for f in flows:
            lines.append(f"  {str(f.get('name', '')):<{width}}  {f.get('algorithm')}: goodput {rate(f.get('goodput_bps'))}")
    else:
        by_algo: dict[str, list[float]] = {}
        for f in flows:
            by_algo.setdefault(str(f.get("algorithm")), []).append(float(f.get("goodput_bps") or 0.0))
        for algo, g in by_algo.items():
            lines.append(f"  {algo} x{len(g)}: goodput {rate(sum(g))} in all, {rate(sum(g) / len(g))} mean per flow")
    for l in _bottlenecks(summary)[:2]:
        lines.append(
            f"  {l.get('name')} {rate(l.get('rate_bps'))}: utilization {100 * l.get('utilization', 0.0):.2f} %, loss {100 * l.get('loss_rate', 0.0):.3g} %"
        )
    if transfers:
        lines.append(f"  {transfers:,} transfers (transfers_df())")
    lines[-1] += ">"
    return "\n".join(lines)


# ---- the HTML summary ----------------------------------------------------------------

_STYLE = "border-collapse:collapse;font-size:90%;margin:0.3em 0"


def html_table(header: Iterable[str], rows: Iterable[Iterable[str]]) -> str:
    """A plain HTML table; the cells must already be escaped."""
    head = "".join(f"<th style='text-align:right;padding:2px 8px'>{h}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td style='text-align:right;padding:2px 8px'>{c}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table style='{_STYLE}'><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def result_html(summary: dict, scenario: dict, flows: pa.Table, transfers: int = 0) -> str:
    """The run's headline, a table per flow (units in the headers), the
    bottleneck's, and a PNG of cwnd and goodput over time as a data URI
    (a few tens of kB)."""
    fl = summary.get("flows", [])
    rows = [
        [
            _cell(f.get("name")),
            _cell(f.get("algorithm")),
            _cell(None if f.get("goodput_bps") is None else f["goodput_bps"] / 1e6),
            _cell(None if f.get("throughput_bps") is None else f["throughput_bps"] / 1e6),
            _cell(f.get("base_rtt_ms"), "{:,.1f}"),
            _cell(f.get("retransmits")),
            _cell(f.get("timeouts")),
            _cell(f.get("final_cwnd_pkts"), "{:,.1f}"),
        ]
        for f in fl[:HTML_FLOWS]
    ]
    parts = [
        "<div class='longfat-result'>",
        f"<p style='margin:0.2em 0'><b>RunResult</b> {html.escape(_headline(summary, scenario))}, {summary.get('events', 0):,} events</p>",
        html_table(
            ["flow", "algorithm", "goodput (Mbit/s)", "throughput (Mbit/s)", "base RTT (ms)", "retransmits (pkts)", "timeouts", "final cwnd (pkts)"], rows
        ),
    ]
    if len(fl) > HTML_FLOWS:
        parts.append(f"<p style='margin:0.2em 0'>the first {HTML_FLOWS} of {len(fl):,} flows; flows_df() has them all</p>")
    links = _bottlenecks(summary)
    if links:
        parts.append(
            html_table(
                ["link", "rate (Mbit/s)", "utilization (%)", "loss (%)", "mean queue (pkts)"],
                [
                    [
                        _cell(l.get("name")),
                        _cell(l["rate_bps"] / 1e6 if l.get("rate_bps") is not None else None),
                        _cell(100 * l["utilization"] if l.get("utilization") is not None else None),
                        _cell(100 * l["loss_rate"] if l.get("loss_rate") is not None else None, "{:,.3f}"),
                        _cell(l.get("mean_queue_pkts"), "{:,.1f}"),
                    ]
                    for l in links
                ],
            )
        )
    if summary.get("jain_fairness") is not None:
        parts.append(f"<p style='margin:0.2em 0'>Jain fairness {summary['jain_fairness']:.4f}</p>")
    if transfers:
        parts.append(f"<p style='margin:0.2em 0'>{transfers:,} transfers: transfers_df()</p>")
    png = plot_png(flows)
    if png is not None:
        uri = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
        parts.append(f"<img src='{uri}' alt='cwnd and goodput per flow over time'/>")
    parts.append("</div>")
    return "".join(parts)


def plot_png(flows: pa.Table) -> bytes | None:
    """cwnd (packets) and goodput (Mbit/s) over time for the first
    PLOT_FLOWS flows, side by side, as PNG bytes (no pyplot state, no
    timestamp in the file: the same table gives the same bytes). None for
    a table without rows."""
    if flows is None or flows.num_rows == 0:
        return None
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    t = flows["time_s"].to_numpy()
    fidx = flows["flow"].to_numpy()
    ids = np.unique(fidx)
    shown = ids[:PLOT_FLOWS]
    names = flows["flow_name"].combine_chunks()
    # Fixed margins: constrained layout took two thirds of the drawing time.
    fig = Figure(figsize=(7.2, 2.6))
    fig.subplots_adjust(left=0.1, right=0.99, bottom=0.17, top=0.92, wspace=0.3)
    FigureCanvasAgg(fig)
    ax_c, ax_g = fig.subplots(1, 2, sharex=True)
    cwnd = flows["cwnd_pkts"].to_numpy(zero_copy_only=False).astype(float)
    goodput = flows["goodput_bps"].to_numpy(zero_copy_only=False) / 1e6
    for i in shown:
        sel = np.flatnonzero(fidx == i)
        label = names[int(sel[0])].as_py()
        ax_c.plot(t[sel], cwnd[sel], lw=1, label=label)
        ax_g.plot(t[sel], goodput[sel], lw=1, label=label)
    ax_c.set_ylabel("cwnd (packets)")
    ax_g.set_ylabel("goodput (Mbit/s)")
    for ax in (ax_c, ax_g):
        ax.set_xlabel("time (s)")
        ax.grid(alpha=0.3)
        ax.tick_params(labelsize=8)
    ax_g.legend(fontsize=7, loc="lower right")
    if len(ids) > len(shown):
        fig.suptitle(f"the first {len(shown)} of {len(ids):,} flows", fontsize=8)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=72, metadata={"Software": None})
    return buf.getvalue()
