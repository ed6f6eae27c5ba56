"""``longfat testbed agree``: one scenario on the testbed and in the
simulator, once per algorithm, and how far they agree.

Per algorithm it reports goodput, the bottleneck's loss rate, the senders'
retransmission rate and the mean queue of both, their relative differences
against the targets of issue 15 (goodput within 10 %, loss rate within a
factor 2), and a figure overlaying the two cwnd trajectories. The
simulator runs the Linux transport profile (whose receiver delays ACKs as
the kernel's does) with 52-byte headers (``SIM_TRANSPORT``); what still differs between the two
transports is listed in the report (``TRANSPORT_DIFFERENCES``).
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Callable

import numpy as np

from longfat import testbed
from longfat.catalogue import catalogue
from longfat.compare import with_algorithm
from longfat.outdir import atomic_dir, check_output_dir, write_marker
from longfat.runner import RunResult, execute, prepare

#: The simulator's transport for the comparison.
SIM_TRANSPORT = {"profile": "linux", "header_size": "52B"}
def kernel_program_params(algo: str) -> dict[str, float]:
    """The parameters that make the simulator's controller the BPF
    program's. The programs implement the controllers' own defaults
    (kernel/algo/<name>.h, ``*_default_cfg``), but the ``linux`` profile
    turns some controllers into the Linux modules' variants through their
    parameters' ``linux`` defaults (the catalogue, crates/longfat-cc):
    HighSpeed into tcp_highspeed.c's table, added once per ACK whatever it
    acknowledges (half the growth per packet under delayed ACKs), H-TCP into
    tcp_htcp.c's RTT scaling, bandwidth switch, beta_max 102/128 and RTTmax
    from raw samples, Scalable into tcp_scalable.c's (linux_rules, no legacy
    window). This sets every parameter whose ``linux`` default differs back
    to the controller's own (the ``rfc`` profile's, the paper's)."""
    params = next((a["params"] for a in catalogue() if a["name"] == algo), [])
    out = {}
    for p in params:
        own, linux = p["profile_defaults"]["rfc"], p["profile_defaults"]["linux"]
        if own is not None and linux != own:
            out[p["name"]] = own
    return out


#: Issue 15's targets.
GOODPUT_TOLERANCE = 0.10
LOSS_FACTOR = 2.0

#: What still differs between the simulator (profile "linux") and the kernel.
TRANSPORT_DIFFERENCES = [
    "Delay: the testbed holds every ACK for the whole RTT in the delay line (data crosses the bottleneck at once); the simulator splits the propagation delay between both directions. The window dynamics see the same RTT; the queue is sampled at a different point of the same round trip.",
    "Delayed ACKs: the kernel's receiver ACKs every second segment with quick-ACK mode at the start and after reordering, and a delayed-ACK timer from its RTT estimate (40-200 ms); the simulator ACKs every second packet with a fixed 40 ms timer.",
    "Segments: the kernel sends 1448-byte segments (TCP timestamps) one per skb (GSO off on the senders); the simulator's packets carry 1448 payload bytes in 1500 (header_size 52B). The bottleneck shapes Ethernet frames, scaled so that 1500-byte IP packets leave at the scenario's rate.",
    "Receive window: the kernel autotunes it (tcp_rmem up to 128 MB on the testbed); the simulator's is unlimited.",
    "Pacing: only BBR paces, in both (the kernel's internal pacing, as there is no fq qdisc on the senders; the simulator's `tcp.pacing` model of it, which a controller that sets a rate turns on); the other algorithms are ACK-clocked in both, and the kernel's TSQ and socket buffers can still shape bursts the simulator sends back to back.",
    "Loss recovery: both run RACK-TLP, PRR and undo, but the simulator's is a model of Linux 6.x, not the code; SACK compression, TSO deferral and the kernel's ACK-frequency heuristics are not modelled.",
    "Measurement: the testbed samples TCP_INFO (smoothed RTT, not the latest sample) and the qdisc's backlog from userspace at the sampling instants; the simulator records exact values.",
    "Timing: the delay line releases packets up to tens of microseconds late (the report gives its percentiles); the simulator is exact.",
]


def simulator_spec(spec: dict, algo: str) -> dict:
    """The scenario (every flow running ``algo``) as the simulator runs it
    for the comparison: the Linux transport profile with the kernel's
    delayed ACKs and headers, and the controller the kernel runs (for a
    BPF program, its defaults; for reno and cubic, the Linux modules')."""
    out = copy.deepcopy(spec)
    for f in out.get("flows", []):
        f.setdefault("tcp", {}).update(SIM_TRANSPORT)
        params = kernel_program_params(algo)
        if params and testbed.kernel_cc(algo).startswith("longfat_"):
            f["params"] = params
    return out


def _bottleneck(summary: dict) -> dict:
    links = [l for l in summary["links"] if l.get("monitored") and not l["name"].endswith(".reverse")]
    return links[0] if links else {}


def metrics(result: RunResult) -> dict:
    s = result.summary
    bn = _bottleneck(s)
    sent = sum(f["sent_pkts"] for f in s["flows"])
    rtx = sum(f["retransmits"] for f in s["flows"])
    recs = [f.get("fast_recoveries") for f in s["flows"]]
    recs = None if any(r is None for r in recs) else sum(recs)
    drops = (bn.get("drops_overflow") or 0) + (bn.get("drops_random") or 0) if bn else None
    return {
        "goodput_bps": s["tcp_goodput_bps"],
        "loss_rate": bn.get("loss_rate"),
        # The loss rate split into how often the flows met a loss episode
        # and how many packets each episode cost.
        "drops": drops,
        "fast_recoveries": recs,
        "timeouts": sum(f.get("timeouts") or 0 for f in s["flows"]),
        "drops_per_episode": (drops / recs) if drops is not None and recs else None,
        "retransmit_rate": rtx / sent if sent else 0.0,
        "mean_queue_pkts": bn.get("mean_queue_pkts"),
        "utilization": bn.get("utilization"),
    }


def relative(tb: float | None, sim: float | None) -> float | None:
    if tb is None or sim is None or sim == 0:
        return None
    return (tb - sim) / sim


def factor(tb: float | None, sim: float | None) -> float | None:
    """max(tb/sim, sim/tb); 1 when both are 0; inf when only one is."""
    if tb is None or sim is None:
        return None
    if tb == 0 and sim == 0:
        return 1.0
    if tb == 0 or sim == 0:
        return math.inf
    return max(tb / sim, sim / tb)


def compare_row(algo: str, sim: RunResult, tb: RunResult) -> dict:
    ms, mt = metrics(sim), metrics(tb)
    g = relative(mt["goodput_bps"], ms["goodput_bps"])
    lf = factor(mt["loss_rate"], ms["loss_rate"])
    return {
        "algorithm": algo,
        "kernel_cc": testbed.kernel_cc(algo),
        "simulator": ms,
        "testbed": mt,
        "goodput_rel_diff": g,
        "loss_rate_factor": lf,
        "retransmit_rate_factor": factor(mt["retransmit_rate"], ms["retransmit_rate"]),
        "mean_queue_rel_diff": relative(mt["mean_queue_pkts"], ms["mean_queue_pkts"]),
        "goodput_within_target": g is not None and abs(g) <= GOODPUT_TOLERANCE,
        "loss_within_target": lf is not None and lf <= LOSS_FACTOR,
        "testbed_faithful": tb.summary["testbed"].get("faithful"),
    }


def plot_overlay(algo: str, sim: RunResult, tb: RunResult, out: Path) -> None:
    """cwnd, goodput (running mean) and queue of both runs, one figure."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from longfat.plot import running_mean, samples_in

    fig, (ax_c, ax_g, ax_q) = plt.subplots(3, 1, figsize=(10, 9), sharex=True, constrained_layout=True)
    for label, r, colour in (("simulator", sim, "tab:blue"), ("testbed", tb, "tab:red")):
        t = np.asarray(r.flows["time_s"])
        fidx = np.asarray(r.flows["flow"])
        cwnd = np.asarray(r.flows["cwnd_pkts"], dtype=float)
        gp = np.asarray(r.flows["goodput_bps"]) / 1e6
        for k, f in enumerate(np.unique(fidx)):
            sel = fidx == f
            style = "-" if k == 0 else ":"
            ax_c.plot(t[sel], cwnd[sel], style, lw=1, color=colour, label=label if k == 0 else None)
            ax_g.plot(t[sel], running_mean(gp[sel], samples_in(t[sel], 1.0)), style, lw=1, color=colour, label=label if k == 0 else None)
        lt = np.asarray(r.links["time_s"])
        names = r.links["link_name"].to_pylist()
        lidx = np.asarray(r.links["link"])
        first = [i for i, n in enumerate(names) if n == "bottleneck"]
        if first:
            sel = lidx == lidx[first[0]]
            ax_q.plot(lt[sel], np.asarray(r.links["queue_pkts"])[sel], lw=1, color=colour, label=label)
    ax_c.set_ylabel("cwnd (packets)")
    ax_g.set_ylabel("goodput (Mbit/s, 1 s mean)")
    ax_q.set_ylabel("bottleneck queue (packets)")
    ax_q.set_xlabel("time (s)")
    for ax in (ax_c, ax_g, ax_q):
        ax.grid(alpha=0.3)
        ax.legend(loc="upper right", fontsize="small")
    fig.suptitle(f"{algo}: simulator (profile linux) vs testbed (kernel {testbed.kernel_cc(algo)})")
    fig.savefig(out, dpi=100)
    plt.close(fig)


def _fmt(x, scale=1.0, spec=".1f", suffix="") -> str:
    if x is None:
        return "-"
    if isinstance(x, float) and math.isinf(x):
        return "inf"
    return f"{x * scale:{spec}}{suffix}"


def report_markdown(name: str, rows: list[dict], meta: dict, command: str) -> str:
    lines = [f"# Agreement: {name}, testbed against simulator", ""]
    lines.append(f"`{command}`")
    lines.append("")
    lines.append(f"Targets (issue 15): goodput within {GOODPUT_TOLERANCE:.0%}, loss rate within a factor {LOSS_FACTOR:g}. "
                 f"The simulator runs `tcp.profile = \"linux\"` with delayed ACKs and 52-byte headers; the testbed runs the kernel's TCP (Linux {meta['kernel']}).")
    lines.append("")
    lines.append("| algorithm | goodput sim / testbed (Mbit/s) | diff | loss rate sim / testbed | factor | drops sim / testbed | fast recoveries sim / testbed | retransmit rate sim / testbed | mean queue sim / testbed (pkts) | targets met | testbed faithful |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        s, t = r["simulator"], r["testbed"]
        met = ("goodput" if r["goodput_within_target"] else "~~goodput~~") + ", " + ("loss" if r["loss_within_target"] else "~~loss~~")
        lines.append(
            f"| {r['algorithm']} (`{r['kernel_cc']}`) | {_fmt(s['goodput_bps'], 1e-6)} / {_fmt(t['goodput_bps'], 1e-6)} | {_fmt(r['goodput_rel_diff'], 100, '+.1f', ' %')} "
            f"| {_fmt(s['loss_rate'], 1, '.2e')} / {_fmt(t['loss_rate'], 1, '.2e')} | {_fmt(r['loss_rate_factor'], 1, '.2f')} "
            f"| {_fmt(s.get('drops'), 1, 'd')} / {_fmt(t.get('drops'), 1, 'd')} | {_fmt(s.get('fast_recoveries'), 1, 'd')} / {_fmt(t.get('fast_recoveries'), 1, 'd')} "
            f"| {_fmt(s['retransmit_rate'], 1, '.2e')} / {_fmt(t['retransmit_rate'], 1, '.2e')} "
            f"| {_fmt(s['mean_queue_pkts'], 1, '.0f')} / {_fmt(t['mean_queue_pkts'], 1, '.0f')} | {met} | {'yes' if r['testbed_faithful'] else 'no'} |"
        )
    lines.append("")
    lines.append("Loss rate: bottleneck drops / packets offered, over the measurement window. Retransmit rate: the senders' retransmissions / data packets sent. ")
    lines.append("A struck-out target was missed; the cwnd overlays (`<algorithm>.png`) show where the runs part.")
    lines.append("")
    for r in rows:
        lines.append(f"![{r['algorithm']}]({r['algorithm']}.png)")
    lines.append("")
    lines.append("## Transport differences that remain")
    lines.append("")
    for d in TRANSPORT_DIFFERENCES:
        lines.append(f"- {d}")
    lines.append("")
    lines.append("## The testbed runs")
    lines.append("")
    for r in rows:
        tm = r["testbed_meta"]
        dl = (tm.get("delay_line") or {}).get("report") or {}
        ping = ", ".join(f"{v['measured_median_ms']:.2f}" for v in (tm.get("ping") or {}).values())
        lines.append(
            f"- {r['algorithm']}: load average at start {', '.join(f'{x:.2f}' for x in (tm.get('load_average_at_start') or []))}, at the end {', '.join(f'{x:.2f}' for x in (tm.get('load_average_at_end') or []))}; "
            f"ping RTT {ping} ms; delay line {dl.get('forwarded')} packets, late p50/p99/p99.9 {dl.get('lateness_p50_us')}/{dl.get('lateness_p99_us')}/{dl.get('lateness_p999_us')} us, "
            f"{dl.get('late_over_1ms')} more than 1 ms late"
            + "".join(f"; flow {f['name']} limited by the receive window {_fmt(f.get('rwnd_limited_frac'), 100, '.1f', ' %')}, by the send buffer {_fmt(f.get('sndbuf_limited_frac'), 100, '.1f', ' %')} of the time" for f in r.get("testbed_flows", []))
            + ("" if tm.get("faithful") else f"; NOT faithful: {'; '.join(tm.get('unfaithful_because') or [])}")
            + (f"; warning: {tm['busy_warning']}" if tm.get("busy_warning") else "")
        )
    lines.append("")
    lines.append("Each algorithm's runs are in `sim/<algorithm>/` and `testbed/<algorithm>/` (longfat result directories: `longfat plot` draws them).")
    return "\n".join(lines) + "\n"


def _jsonable(x):
    if isinstance(x, float) and not math.isfinite(x):
        return "inf" if x > 0 else None
    if isinstance(x, dict):
        return {k: _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    return x


def agree(
    base: dict,
    algos: list[str],
    out: str | Path,
    *,
    force: bool = False,
    delay_direction: str = "ack",
    rps: bool = True,
    command: str = "",
    progress: Callable[[str, float, float], None] | None = None,
    log: Callable[[str], None] = lambda s: None,
) -> list[dict]:
    # Everything is checked before anything runs: each algorithm's scenario
    # for the simulator and for the testbed, the machine, the output.
    runs = []
    for a in algos:
        spec = with_algorithm(base, a)
        sim_spec, sim = prepare(simulator_spec(spec, a))
        plan = testbed.prepare_run(spec, delay_direction)
        runs.append((a, sim_spec, sim, plan))
    check_output_dir(out, force)
    testbed.sweep_stale(log)
    rows = []
    meta = testbed.machine_meta()
    with atomic_dir(out, force=force, kind="compare") as tmp:
        for a, sim_spec, sim, plan in runs:
            if progress:
                progress(a, 0.0, plan.duration_ns / 1e9)
            sim_result = execute(sim_spec, sim)
            del sim
            d = tmp / "sim" / a
            d.mkdir(parents=True)
            sim_result.write_into(d)
            write_marker(d, "run")
            d = tmp / "testbed" / a
            (d / "testbed").mkdir(parents=True)
            cb = None if progress is None else (lambda done, total, a=a: progress(a, done, total))
            tb_result = testbed.execute(plan, d / "testbed", delay_direction=delay_direction, rps=rps, progress=cb, log=log)
            tb_result.write_into(d)
            write_marker(d, "run")
            row = compare_row(a, sim_result, tb_result)
            row["testbed_meta"] = tb_result.summary["testbed"]
            row["testbed_flows"] = [{k: f.get(k) for k in ("name", "rwnd_limited_frac", "sndbuf_limited_frac")} for f in tb_result.summary["flows"]]
            rows.append(row)
            plot_overlay(a, sim_result, tb_result, tmp / f"{a}.png")
        name = base.get("name") or "scenario"
        (tmp / "agreement.json").write_text(json.dumps(_jsonable({"scenario": name, "command": command, "sim_transport": SIM_TRANSPORT, "rows": rows}), indent=2, default=str) + "\n")
        (tmp / "agreement.md").write_text(report_markdown(name, rows, meta, command))
    return rows
