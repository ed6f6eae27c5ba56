"""The ``longfat`` command line."""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from longfat._native import ScenarioError, algorithms

err_console = Console(stderr=True, soft_wrap=True)
console = Console()


def _fmt_rate(bps: float) -> str:
    return f"{bps / 1e6:,.1f}"


def print_summary(summary: dict) -> None:
    t = Table(title=f"{summary.get('scenario') or 'run'}: flows, measured {summary['measure_from_s']:g}-{summary['end_s']:g} s")
    for col in ("flow", "cc", "RTT ms", "Mbit/s", "rtx", "RTOs", "done s"):
        t.add_column(col, justify="right" if col not in ("flow", "cc") else "left")
    for f in summary["flows"]:
        ct = f.get("completion_time_s")
        t.add_row(
            f["name"],
            f["algorithm"],
            f"{f['base_rtt_ms']:g}",
            _fmt_rate(f["goodput_bps"]),
            str(f["retransmits"]),
            str(f["timeouts"]),
            "-" if ct is None else f"{ct:.3f}",
        )
    console.print(t)
    lt = Table(title="bottleneck links (queue: mean packets waiting; drops in the window)")
    for col in ("link", "Mbit/s", "util", "queue", "overflow", "random", "loss"):
        lt.add_column(col, justify="left" if col == "link" else "right")
    for l in summary["links"]:
        if not l["monitored"] or (l["name"].endswith(".reverse") and l["offered_pkts"] == 0):
            continue
        lt.add_row(
            l["name"],
            f"{l['rate_bps'] / 1e6:g}",
            f"{100 * l['utilization']:.2f} %",
            f"{l.get('mean_queue_pkts', 0):.1f}",
            str(l["drops_overflow"]),
            str(l["drops_random"]),
            f"{l['loss_rate']:.2e}",
        )
    console.print(lt)
    jain = summary.get("jain_fairness")
    console.print(
        f"TCP goodput {_fmt_rate(summary['tcp_goodput_bps'])} Mbit/s in all; "
        f"Jain's fairness index {'-' if jain is None else f'{jain:.4f}'}; {summary['events']:,} events"
    )


def _run_with_progress(args, scenario_path: str):
    from longfat.runner import execute, prepare

    spec, sim = prepare(scenario_path, seed=args.seed, overrides=args.set or ())
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TextColumn("{task.completed:.1f}/{task.total:.1f} s simulated"),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
        disable=args.quiet,
    ) as bar:
        task = bar.add_task(Path(scenario_path).stem, total=1.0)

        def progress(done: float, total: float) -> None:
            bar.update(task, completed=done, total=total)

        return execute(spec, sim, progress)


def cmd_run(args) -> int:
    result = _run_with_progress(args, args.scenario)
    out = Path(args.out) if args.out else Path("results") / (result.scenario.get("name") or Path(args.scenario).stem)
    result.save(out, plot=not args.no_plot)
    if not args.quiet:
        print_summary(result.summary)
    console.print(f"results in {out}/ (flows.parquet, links.parquet, summary.json{'' if args.no_plot else ', plot.png'})")
    return 0


def print_comparison(rows: list[dict], title: str) -> None:
    t = Table(title=title)
    for col in ("algorithm", "utilization", "goodput Mbit/s", "loss rate", "mean queue pkts", "rtx", "RTOs"):
        t.add_column(col, justify="left" if col == "algorithm" else "right")
    for r in rows:
        util = "-" if r["utilization"] is None else f"{100 * r['utilization']:.2f} %"
        loss = "-" if r["loss_rate"] is None else f"{r['loss_rate']:.2e}"
        q = "-" if r["mean_queue_pkts"] is None else f"{r['mean_queue_pkts']:.0f}"
        t.add_row(r["algorithm"], util, _fmt_rate(r["goodput_bps"]), loss, q, str(r["retransmits"]), str(r["timeouts"]))
    console.print(t)


def cmd_compare(args) -> int:
    from longfat.compare import compare, parse_algorithms, save_comparison, summary_rows
    from longfat.scenario import load_scenario

    algos = parse_algorithms(args.cc)
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TextColumn("{task.fields[algo]}"),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
        disable=args.quiet,
    ) as bar:
        task = bar.add_task(Path(args.scenario).stem, total=float(len(algos)), algo="")
        order = {a: i for i, a in enumerate(algos)}

        def progress(algo: str, done: float, total: float) -> None:
            bar.update(task, completed=order[algo] + done / total, algo=f"{algo}: {done:.0f}/{total:.0f} s simulated")

        results = compare(args.scenario, algos, seed=args.seed, overrides=args.set or (), progress=progress)
    name = load_scenario(args.scenario).get("name") or Path(args.scenario).stem
    out = Path(args.out) if args.out else Path("results") / f"{name}-compare"
    save_comparison(results, out, plot=not args.no_plot)
    rows = summary_rows(results)
    r0 = rows[0]
    print_comparison(rows, f"{name}: each algorithm alone, measured {r0['measure_from_s']:g}-{r0['end_s']:g} s")
    console.print(f"results in {out}/ (comparison.json{'' if args.no_plot else ', comparison.png'}, one directory per algorithm)")
    return 0


def cmd_plot(args) -> int:
    from longfat.plot import plot_dir

    out = plot_dir(args.dir, args.out)
    console.print(f"wrote {out}")
    return 0


def cmd_bench(args) -> int:
    import json

    from longfat._native import Simulation
    from longfat.runner import prepare

    spec, sim = prepare(args.scenario, overrides=args.set or ())
    rss_before_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    rows = []
    for i in range(args.repeat):
        if i > 0:
            sim = Simulation(json.dumps(spec))
        t0 = time.perf_counter()
        with Progress(TextColumn(f"bench run {i + 1}/{args.repeat}"), BarColumn(), console=err_console, transient=True) as bar:
            task = bar.add_task("", total=sim.end_ns)
            step = max(sim.end_ns // 50, 1)
            t = 0
            while not sim.done:
                t = min(t + step, sim.end_ns)
                sim.run_until(t)
                bar.update(task, completed=sim.now_ns)
        wall = time.perf_counter() - t0
        rows.append((wall, sim.bottleneck_packets(), sim.events_processed, sim.end_ns / 1e9))
        del sim
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    best = min(rows)
    wall, pkts, events, sim_s = best
    t = Table(title=f"longfat bench: {args.scenario} (best of {args.repeat})")
    t.add_column("measure")
    t.add_column("value", justify="right")
    t.add_row("simulated time", f"{sim_s:g} s")
    t.add_row("wall time", f"{wall:.3f} s")
    t.add_row("simulated / wall", f"{sim_s / wall:.1f}x")
    t.add_row("bottleneck packets (forward)", f"{pkts:,}")
    t.add_row("bottleneck packets per wall-second", f"{pkts / wall / 1e6:.2f} M/s")
    t.add_row("events", f"{events:,}")
    t.add_row("events per wall-second", f"{events / wall / 1e6:.2f} M/s")
    t.add_row("peak RSS (whole process)", f"{peak_kib / 1024:.1f} MiB")
    t.add_row("peak RSS growth during runs", f"{(peak_kib - rss_before_kib) / 1024:.1f} MiB")
    console.print(t)
    return 0


def cmd_reproduce(args) -> int:
    from longfat.reproduce import PAPERS, reproduce

    papers = list(PAPERS) if args.paper == "all" else [args.paper]
    if args.paper != "all" and args.paper not in PAPERS:
        raise ScenarioError(f"PAPER: unknown paper {args.paper!r}; allowed: {', '.join(PAPERS)}, all", "PAPER")
    jobs = args.jobs if args.jobs is not None else (os.cpu_count() or 1)
    if jobs < 1:
        raise ScenarioError("--jobs: must be >= 1", "--jobs")
    out = Path(args.out)
    command = "longfat reproduce " + args.paper + (" --quick" if args.quick else "") + f" --jobs {jobs} --out {args.out}"
    with Progress(
        TextColumn("[bold]reproduce {task.fields[papers]}"),
        BarColumn(),
        TextColumn("{task.fields[runs]}"),
        TimeElapsedColumn(),
        TextColumn("{task.fields[last]}"),
        console=err_console,
        transient=False,
        disable=args.quiet,
    ) as bar:
        task = bar.add_task("", total=1.0, papers=args.paper, runs="", last="")

        def progress(n: int, total: int, cost: float, total_cost: float, label: str) -> None:
            bar.update(task, completed=cost / total_cost if total_cost else n / total, runs=f"{n}/{total} runs", last=label)

        written = reproduce(papers, quick=args.quick, jobs=jobs, out=out, command=command, progress=progress)
    for p, d in written.items():
        console.print(f"{p}: {d / 'report.md'} (also report.html, results.json, figures)")
    return 0


def cmd_algorithms(_args) -> int:
    for a in algorithms():
        console.print(a)
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="longfat", description="Congestion control for long fat networks.")
    sub = p.add_subparsers(dest="command", required=True)

    r = sub.add_parser("run", help="run a scenario file; write results, a plot and print a summary")
    r.add_argument("scenario", help="scenario TOML file")
    r.add_argument("--set", action="append", metavar="KEY=VALUE", help='override a field, e.g. --set run.duration=\\"10s\\" or --set flows[0].count=4')
    r.add_argument("--seed", type=int, help="random seed (overrides run.seed)")
    r.add_argument("--out", help="result directory (default results/<scenario name>)")
    r.add_argument("--no-plot", action="store_true", help="skip plot.png")
    r.add_argument("-q", "--quiet", action="store_true", help="no progress bar or summary table")
    r.set_defaults(func=cmd_run)

    c = sub.add_parser("compare", help="run a scenario once per algorithm; print and plot them side by side")
    c.add_argument("scenario", help="scenario TOML file; every TCP flow takes each algorithm in turn")
    c.add_argument("--cc", required=True, help="comma-separated algorithms, e.g. reno,ltcp,htcp")
    c.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a scenario field (as for run)")
    c.add_argument("--seed", type=int, help="random seed (overrides run.seed)")
    c.add_argument("--out", help="result directory (default results/<scenario name>-compare)")
    c.add_argument("--no-plot", action="store_true", help="skip comparison.png")
    c.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    c.set_defaults(func=cmd_compare)

    pl = sub.add_parser("plot", help="draw goodput, cwnd and queue of a result directory")
    pl.add_argument("dir")
    pl.add_argument("--out", help="PNG path (default DIR/plot.png)")
    pl.set_defaults(func=cmd_plot)

    b = sub.add_parser("bench", help="measure simulator speed on the canonical scenario")
    b.add_argument("--scenario", default=str(Path(__file__).resolve().parents[2] / "scenarios" / "canonical.toml"))
    b.add_argument("--set", action="append", metavar="KEY=VALUE")
    b.add_argument("--repeat", type=int, default=3)
    b.set_defaults(func=cmd_bench)

    rp = sub.add_parser("reproduce", help="rerun a paper's experiments and report paper vs longfat")
    rp.add_argument("paper", metavar="PAPER", help="ltcp, htcp, ehstcp or all")
    rp.add_argument("--quick", action="store_true", help="scaled-down runs for smoke tests (not a reproduction)")
    rp.add_argument("--jobs", type=int, help="parallel simulations (default: number of cores)")
    rp.add_argument("--out", default="reproductions", help="output directory; each paper gets OUT/<paper>/ (default reproductions)")
    rp.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    rp.set_defaults(func=cmd_reproduce)

    a = sub.add_parser("algorithms", help="list the congestion-control algorithms")
    a.set_defaults(func=cmd_algorithms)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if getattr(args, "seed", None) is not None and args.seed < 0:
        err_console.print("[red]error:[/red] --seed: must be >= 0")
        return 2
    if getattr(args, "repeat", 1) < 1:
        err_console.print("[red]error:[/red] --repeat: must be >= 1")
        return 2
    try:
        return args.func(args)
    except ScenarioError as e:
        err_console.print("error: " + str(e.args[0]), style="red", highlight=False, markup=False)
        return 2
    except (FileNotFoundError, PermissionError, IsADirectoryError, NotADirectoryError) as e:
        err_console.print("error: " + str(e), style="red", highlight=False, markup=False)
        return 2
    except KeyboardInterrupt:
        err_console.print("interrupted: no results written", style="yellow")
        return 130
    except Exception as e:  # a bug, not bad input: say so briefly
        if os.environ.get("LONGFAT_DEBUG"):
            raise
        err_console.print(f"internal error: {type(e).__name__}: {e} (set LONGFAT_DEBUG=1 for a traceback)", style="red", highlight=False, markup=False)
        return 1


if __name__ == "__main__":
    sys.exit(main())
