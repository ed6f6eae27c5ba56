"""The ``longfat`` command line."""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import signal
import sys
import tempfile
import time
import traceback
from contextlib import contextmanager
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from longfat import outdir
from longfat._native import ControllerError, ScenarioError, algorithms
from longfat.progress import Progress

err_console = Console(stderr=True, soft_wrap=True)


class _Stdout(Console):
    def on_broken_pipe(self) -> None:
        raise BrokenPipeError  # main() ends the command as a closed pipe ends any tool


console = _Stdout()


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


def cmd_run(args) -> int:
    from longfat.runner import execute, prepare, wall_time_note
    from longfat.scenario import find_scenario

    spec, sim = prepare(
        find_scenario(args.scenario),
        seed=args.seed,
        overrides=args.set or (),
        memory_budget_bytes=args.memory_budget_bytes,
        pcap=args.pcap,
        pcap_tap=args.pcap_tap,
        pcap_field="--pcap",
    )
    note = wall_time_note(sim)
    if note and not args.quiet:
        err_console.print(note, highlight=False, markup=False)
    # Where the results go is settled before the simulation runs.
    out = Path(args.out) if args.out else outdir.default_output(spec["name"] if "name" in spec else Path(args.scenario).stem)
    outdir.check_output_dir(out, args.force)
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TextColumn("{task.completed:.1f}/{task.total:.1f} s simulated"),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
        disable=args.quiet,
    ) as bar:
        task = bar.add_task(Path(args.scenario).stem, total=1.0)

        def progress(done: float, total: float) -> None:
            bar.update(task, completed=done, total=total)

        result = execute(spec, sim, progress)
    del sim  # the engine's own copy of the series is not needed to save and plot
    if args.no_plot:
        result.save(out, force=args.force)
    else:
        from longfat.plot import plot_into

        result.save(out, force=args.force, draw=plot_into(result))
    if not args.quiet:
        print_summary(result.summary)
    pcaps = "".join(f", {p}" for p in result.capture_paths().values())
    console.print(f"results in {out}/ (flows.parquet, links.parquet, summary.json{'' if args.no_plot else ', plot.png'}{pcaps})")
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
    # What each algorithm does differently, one line each, below the table
    # (a column would wrap into a tall table on a narrow terminal).
    width = max(len(r["algorithm"]) for r in rows) if rows else 0
    for r in rows:
        if r.get("what"):
            console.print(f"  [bold]{r['algorithm']:<{width}}[/bold]  {r['what']}", highlight=False)


def _per_algorithm_setup(args, suffix: str):
    """The algorithms, scenario, name and output directory of a command that
    runs one scenario once per algorithm (compare, testbed agree)."""
    from longfat.compare import parse_algorithms
    from longfat.scenario import apply_overrides, find_scenario, load_scenario

    algos = parse_algorithms(args.cc)
    base = apply_overrides(load_scenario(find_scenario(args.scenario)), args.set or ())
    name = base["name"] if "name" in base else Path(args.scenario).stem
    out = Path(args.out) if args.out else outdir.default_output(name, suffix)
    return algos, base, name, out


@contextmanager
def _per_algorithm_progress(args, title: str, algos: list[str], unit: str):
    """A progress bar over the algorithms; yields progress(algo, done, total)."""
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TextColumn("{task.fields[algo]}"),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
        disable=args.quiet,
    ) as bar:
        task = bar.add_task(title, total=float(len(algos)), algo="")
        order = {a: i for i, a in enumerate(algos)}

        def progress(algo: str, done: float, total: float) -> None:
            bar.update(task, completed=order[algo] + min(done / total, 1.0), algo=f"{algo}: {done:.0f}/{total:.0f} {unit}")

        yield progress


def cmd_compare(args) -> int:
    from longfat.compare import compare, save_comparison, summary_rows

    algos, base, name, out = _per_algorithm_setup(args, "-compare")
    with _per_algorithm_progress(args, Path(args.scenario).stem, algos, "s simulated") as progress:
        # The output is checked once every algorithm's scenario is valid,
        # before the first one runs.
        results = compare(
            base, algos, seed=args.seed, progress=progress, before_run=lambda: outdir.check_output_dir(out, args.force),
            memory_budget_bytes=args.memory_budget_bytes,
        )
    save_comparison(results, out, plot=not args.no_plot, force=args.force)
    rows = summary_rows(results)
    r0 = rows[0]
    print_comparison(rows, f"{name}: each algorithm alone, measured {r0['measure_from_s']:g}-{r0['end_s']:g} s")
    md = "comparison.md (the table)" if args.no_plot else "comparison.md (the table, led by comparison_summary.png), comparison.png"
    console.print(f"results in {out}/ ({md}, comparison.json, one directory per algorithm)")
    return 0


def cmd_plot(args) -> int:
    from longfat.plot import plot_dir

    out = plot_dir(args.dir, args.out, force=args.force)
    console.print(f"wrote {out}")
    return 0


def cmd_bench(args) -> int:
    import json

    from longfat._native import Simulation
    from longfat.runner import prepare
    from longfat.scenario import find_scenario

    scenario = find_scenario(args.scenario)
    spec, sim = prepare(scenario, overrides=args.set or (), memory_budget_bytes=args.memory_budget_bytes)
    rss_before_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    rows = []
    for i in range(args.repeat):
        if i > 0:
            sim = Simulation(json.dumps(spec), args.memory_budget_bytes)
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
    only = [x.strip() for x in args.only.split(",")] if args.only else None
    if only is not None and args.paper == "all":
        raise ScenarioError("--only: names experiments of one paper; give PAPER, not all", "--only")
    if args.plan:
        return _reproduce_plan(papers, args.quick, jobs, only, args.memory_budget_bytes)
    out = Path(args.out)
    command = ("longfat reproduce " + args.paper + (" --quick" if args.quick else "") + (f" --only {args.only}" if only else "")
               + f" --jobs {jobs} --out {args.out}" + (" --force" if args.force else ""))
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

        written = reproduce(papers, quick=args.quick, jobs=jobs, out=out, command=command, progress=progress, force=args.force, scheduler=args.scheduler, only=only,
                            memory_budget_bytes=args.memory_budget_bytes)
    for p, d in written.items():
        console.print(f"{p}: {d / 'report.md'} (also report.html, results.json, figures)")
    return 0


def _reproduce_plan(papers: list[str], quick: bool, jobs: int, only: list[str] | None, memory_budget_bytes: int) -> int:
    """`reproduce --plan`: the runs and their estimated cost, without running."""
    from longfat.reproduce import PACKETS_PER_WORKER_S, load_papers

    t = Table(title=f"reproduce {'--quick ' if quick else ''}plan")
    for c in ("paper", "experiment", "runs", "bottleneck packets", "looks (seeds)", "runs at most", "packets at most"):
        t.add_column(c, justify="left" if c in ("paper", "experiment") else "right")
    total_runs, total_cost, longest, most_runs, most_cost = 0, 0.0, 0.0, 0, 0.0
    for p, exps in load_papers(papers, quick, only, memory_budget_bytes=memory_budget_bytes).items():
        for e in exps:
            cost = sum(pt.cost for pt in e.points)
            longest = max([longest] + [pt.cost for pt in e.points])
            # Sequential seeds: every cell run to its last look, if no claim were decided before it.
            grow = [e.looks_of(pt)[-1] / len(e.seeds) if e.looks_of(pt) else 1.0 for pt in e.points]
            runs_most = round(sum(grow))
            cost_most = sum(g * pt.cost for g, pt in zip(grow, e.points))
            total_runs += len(e.points)
            total_cost += cost
            most_runs += runs_most
            most_cost += cost_most
            looks = sorted({tuple(e.looks_of(pt)) for pt in e.points if e.looks_of(pt)})
            t.add_row(p, e.name, str(len(e.points)), f"{cost / 1e6:,.0f} M", "; ".join(", ".join(map(str, lk)) for lk in looks) or "-",
                      str(runs_most), f"{cost_most / 1e6:,.0f} M")
    t.add_row("all", "", str(total_runs), f"{total_cost / 1e6:,.0f} M", "", str(most_runs), f"{most_cost / 1e6:,.0f} M")
    console.print(t)

    def minutes(cost: float, runs: int) -> float:
        return max(cost / (PACKETS_PER_WORKER_S * min(jobs, max(runs, 1))), longest / PACKETS_PER_WORKER_S) / 60

    console.print(f"about {minutes(total_cost, total_runs):.0f} min for the first look"
                  + (f", at most {minutes(most_cost, most_runs):.0f} min if every point ran to its last look" if most_runs > total_runs else "")
                  + f" (the longest run alone: {longest / PACKETS_PER_WORKER_S / 60:.1f} min) with {jobs} worker(s) at {PACKETS_PER_WORKER_S / 1e6:.2g} M bottleneck packets per second each "
                  "(measured on a 2-core machine; a run that leaves the link idle costs less than its estimate)")
    return 0


def _sweep_progress(title: str, quiet: bool):
    """A progress bar for runs on the executor: runs done, running and
    failed, and the time left (runs are weighted by their estimated cost)."""
    from rich.progress import TimeRemainingColumn

    bar = Progress(
        TextColumn(f"[bold]{title}"),
        BarColumn(),
        TextColumn("{task.fields[done]}/{task.fields[runs]} runs done, {task.fields[running]} running, {task.fields[failed]} failed"),
        TimeElapsedColumn(),
        TextColumn("left"),
        TimeRemainingColumn(),
        console=err_console,
        transient=False,
        disable=quiet,
    )
    return bar


def _status_updater(bar, task):
    def update(status, _key) -> None:
        frac = status.done_cost / status.total_cost if status.total_cost else (status.done + status.failed) / max(status.total, 1)
        bar.update(task, completed=frac, done=status.done, runs=status.total, running=status.running, failed=status.failed)

    return update


def cmd_sweep(args) -> int:
    from longfat import store
    from longfat.sweep import base_seed, expand, grid_from_args, load_sweep, run_cells

    from longfat.scenario import find_scenario

    base, file_grid = load_sweep(find_scenario(args.scenario), args.set or ())
    grid = grid_from_args(args.grid, args.cc, args.seeds, base_seed(base), file_grid)
    name = base["name"] if "name" in base else Path(args.scenario).stem
    out = Path(args.out) if args.out else outdir.default_output(name, "-sweep")
    outdir.check_not_nested(out, "--out")
    if out.exists() and not out.is_symlink() and out.is_dir() and any(out.iterdir()):
        store.open_study(out, "--out", create=False)  # an earlier study (resumed), nothing else
    with Progress(TextColumn("[bold]checking cells"), BarColumn(), TextColumn("{task.completed:.0f}/{task.total:.0f}"), console=err_console, transient=True, disable=args.quiet) as bar:
        task = bar.add_task("", total=1)
        cells = expand(base, grid, memory_budget_bytes=args.memory_budget_bytes, on_cell=lambda i, n: bar.update(task, completed=i, total=n))
    command = "longfat " + " ".join(args.argv)
    bar = _sweep_progress(f"sweep {name}", args.quiet)
    try:
        with bar:
            task = bar.add_task("", total=1.0, done=0, runs=len(cells), running=0, failed=0)
            outcome = run_cells(cells, out, scheduler=args.scheduler, workers=args.workers, on_status=_status_updater(bar, task), command=command,
                                memory_budget_bytes=args.memory_budget_bytes)
    except KeyboardInterrupt as e:
        n = len(store.done_runs(out)) if out.exists() else 0
        err_console.print(f"interrupted: {n} runs stored in {out}; run the same command again to resume", style="yellow", highlight=False, markup=False)
        return 128 + getattr(e, "signum", signal.SIGINT)
    console.print(
        f"{outcome.total} runs in the grid: {outcome.ran} ran now, {outcome.skipped} were already in the study, {len(outcome.failed)} failed "
        f"({outcome.wall_s:.1f} s); study in {out}/ ({store.size_bytes(out) / 1e6:.1f} MB)",
        highlight=False,
    )
    _study_warnings(outcome)
    note = store.builds_note(outcome.other_builds, store.build_id())
    if note:
        err_console.print(store.printable(note), style="yellow", highlight=False, markup=False)
    if outcome.failed:
        for cell, error in outcome.failed[:5]:
            err_console.print(f"failed: {cell.describe()}: {error}", style="red", highlight=False, markup=False)
        err_console.print(f"{len(outcome.failed)} runs failed; details in {out}/failed/", style="red", highlight=False, markup=False)
        return 1
    console.print(f'query it: longfat query {shlex.quote(str(out))} "SELECT cc, avg(utilization) FROM runs GROUP BY cc"', highlight=False, markup=False)
    return 0


def cmd_suite(args) -> int:
    from longfat import store, suite
    from longfat.compare import parse_algorithms
    from longfat.reproduce.report import git_commit, machine
    from longfat.sweep import cells_of, run_cells

    ccs = parse_algorithms(args.cc) if args.cc else list(algorithms())
    try:
        planned = suite.cells(ccs, quick=args.quick, seeds=args.seeds)
    except ValueError as e:
        raise ScenarioError(f"--seeds: {e}", "--seeds") from None
    out = Path(args.out)
    study = Path(args.study) if args.study else outdir.RESULTS / ("suite-quick-study" if args.quick else "suite-study")
    # Where the card and the runs go is settled before anything runs: the
    # card's --force must never reach the runs (--study inside --out).
    outdir.check_apart(out, "--out", study, "--study")
    outdir.check_output_dir(out, args.force)
    outdir.check_not_nested(study, "--study")
    if study.exists() and not study.is_symlink() and study.is_dir() and any(study.iterdir()):
        store.open_study(study, "--study", create=False)
    with Progress(TextColumn("[bold]checking cells"), BarColumn(), TextColumn("{task.completed:.0f}/{task.total:.0f}"), console=err_console, transient=True, disable=args.quiet) as bar:
        task = bar.add_task("", total=len(planned))
        cells = cells_of(((c.labels, c.scenario) for c in planned), memory_budget_bytes=args.memory_budget_bytes)
        bar.update(task, completed=len(planned))
    command = "longfat " + " ".join(args.argv)
    bar = _sweep_progress("suite", args.quiet)
    started = time.perf_counter()
    try:
        with bar:
            task = bar.add_task("", total=1.0, done=0, runs=len(cells), running=0, failed=0)
            outcome = run_cells(cells, study, scheduler=args.scheduler, workers=args.workers, on_status=_status_updater(bar, task), command=command, field="--study",
                                memory_budget_bytes=args.memory_budget_bytes)
    except KeyboardInterrupt as e:
        n = len(store.done_runs(study)) if study.exists() else 0
        err_console.print(f"interrupted: {n} runs stored in {study}; run the same command again to resume (no card written)", style="yellow", highlight=False, markup=False)
        return 128 + getattr(e, "signum", signal.SIGINT)
    _study_warnings(outcome)
    if outcome.failed:
        for cell, error in outcome.failed[:5]:
            err_console.print(f"failed: {cell.describe()}: {error}", style="red", highlight=False, markup=False)
        err_console.print(f"{len(outcome.failed)} runs failed (details in {study}/failed/); no card written", style="red", highlight=False, markup=False)
        return 1
    pairs = [(c.labels, store.load_result(outcome.study, c.run_id)) for c in cells]
    card = suite.analyse(pairs)
    meta = {
        "command": command,
        "mode": "quick (a smoke test, not a screening)" if args.quick else "full",
        "runs_stored_in": str(study),
        "executor": "this process" if (args.scheduler is None and (args.workers or os.cpu_count() or 1) <= 1) else (f"the Dask cluster at {args.scheduler}" if args.scheduler else f"local Dask cluster, {args.workers or os.cpu_count() or 1} workers"),
        "wall_time_s": time.perf_counter() - started,
        "runs_made_now": outcome.ran,
        "runs_reused_from_the_study": outcome.skipped,
        "commit": git_commit(),
        "machine": machine(),
    }
    with outdir.atomic_dir(out, force=args.force, kind="suite") as tmp:
        suite.write_card(card, tmp, meta)
    console.print(f"report card: {out / 'card.html'} (also card.md, card.json, figures); {outcome.total} runs, {outcome.ran} made now, {outcome.skipped} from {study}", highlight=False)
    return 0


def _study_warnings(outcome) -> None:
    """Warns of stored runs whose damaged files made them run again, and of
    a study.duckdb that could not be rebuilt."""
    from longfat import store

    redone = store.damaged_note(outcome.redone, "so their runs were run again")
    if redone:
        err_console.print("warning: " + store.printable(redone), style="yellow", highlight=False, markup=False)
    if outcome.database_error:
        err_console.print(
            f"warning: {outcome.study}/study.duckdb not rebuilt ({outcome.database_error}); the runs are stored, and the next sweep rebuilds it",
            style="yellow", highlight=False, markup=False,
        )


#: The table format shows at most this many rows (csv and json stream them all).
TABLE_ROWS = 1000


def cmd_query(args) -> int:
    """SQL over a study, read-only (see ``store.session``). CSV and JSON are
    streamed batch by batch; the table shows the first TABLE_ROWS rows and
    counts the rest. Study data is printed with its control characters
    escaped in the table, and in CSV when stdout is a terminal."""
    from rich.text import Text

    from longfat import store

    with store.session(args.study, all_builds=args.all_builds) as q:
        damaged = store.damaged_note(q.scan.damaged_files(), "their runs left out of the views (the next sweep or suite that holds them runs them again)")
        if damaged:
            err_console.print("warning: " + store.printable(damaged), style="yellow", highlight=False, markup=False)
        note = None if args.all_builds else store.builds_note(q.scan.other_builds(), q.scan.build)
        if note:
            err_console.print(store.printable(note), style="yellow", highlight=False, markup=False)
        cols, batches = q.execute(args.sql)
        if args.format == "csv":
            store.write_csv(cols, batches, sys.stdout, escape=sys.stdout.isatty())
        elif args.format == "json":
            store.write_json(cols, batches, sys.stdout)
        else:
            t = Table(show_lines=False)
            for c in cols:
                t.add_column(Text(store.printable(c)), overflow="fold")
            n = 0
            for b in batches:
                if n < TABLE_ROWS:
                    for r in store.rows(b.slice(0, TABLE_ROWS - n)):
                        t.add_row(*(Text("NULL" if v is None else f"{v:.6g}" if isinstance(v, float) else store.printable(str(v))) for v in r))
                n += b.num_rows
            console.print(t)
            more = f"; the first {TABLE_ROWS:,} shown: --format csv or json prints them all, or narrow the query (WHERE, LIMIT)" if n > TABLE_ROWS else ""
            console.print(f"{n} rows{more}", highlight=False)
    return 0


def cmd_scenarios(_args) -> int:
    from longfat.scenario import shipped_dir, shipped_scenarios

    console.print(f"scenario files shipped with longfat, in {shipped_dir()}/ (run, compare and bench take a name, e.g. ltcp/fig5):", highlight=False, soft_wrap=True)
    for name in shipped_scenarios():
        console.print(f"  {name.removesuffix('.toml')}", highlight=False)
    return 0


def cmd_testbed_run(args) -> int:
    from longfat import testbed
    from longfat.runner import prepare
    from longfat.scenario import find_scenario

    # Valid for the simulator first (the same errors as longfat run), then
    # for the testbed (its refusals name the field and the allowed range).
    spec, sim = prepare(find_scenario(args.scenario), overrides=args.set or ())
    del sim
    out = Path(args.out) if args.out else outdir.default_output((spec["name"] if "name" in spec else Path(args.scenario).stem) + "-testbed")
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TextColumn("{task.completed:.1f}/{task.total:.1f} s"),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
        disable=args.quiet,
    ) as bar:
        task = bar.add_task(f"testbed {Path(args.scenario).stem}", total=1.0)

        def progress(done: float, total: float) -> None:
            bar.update(task, completed=min(done, total), total=total)

        def log(text: str) -> None:
            err_console.print(text, highlight=False, markup=False)

        result = testbed.run(spec, out, force=args.force, plot=not args.no_plot, delay_direction=args.delay_direction, rps=not args.no_rps, progress=progress, log=log)
    if not args.quiet:
        _print_testbed_summary(result.summary)
    console.print(f"results in {out}/ (flows.parquet, links.parquet, summary.json{'' if args.no_plot else ', plot.png'}, testbed/)")
    return 0


def _print_testbed_summary(summary: dict) -> None:
    t = Table(title=f"{summary.get('scenario') or 'run'} on the testbed (Linux {summary['testbed']['kernel']}): measured {summary['measure_from_s']:g}-{summary['end_s']:g} s")
    for col in ("flow", "cc", "kernel cc", "RTT ms", "Mbit/s", "rtx", "RTOs"):
        t.add_column(col, justify="right" if col not in ("flow", "cc", "kernel cc") else "left")
    for f in summary["flows"]:
        t.add_row(f["name"], f["algorithm"], f["kernel_cc"], f"{f['base_rtt_ms']:g}", _fmt_rate(f["goodput_bps"]), str(f["retransmits"]), str(f["timeouts"]))
    console.print(t)
    l = summary["links"][0]
    tb = summary["testbed"]
    dl = (tb.get("delay_line") or {}).get("report") or {}
    pings = ", ".join(f"{v['measured_median_ms']:.2f}" for v in (tb.get("ping") or {}).values())
    console.print(
        f"bottleneck {l['rate_bps'] / 1e6:g} Mbit/s: utilization {100 * l['utilization']:.2f} %, mean queue {l['mean_queue_pkts']:.1f} packets, "
        f"loss {l['loss_rate']:.2e}; ping RTT {pings} ms; delay line: {dl.get('forwarded', '?')} packets, "
        f"late p50/p99/p99.9 {dl.get('lateness_p50_us', '?')}/{dl.get('lateness_p99_us', '?')}/{dl.get('lateness_p999_us', '?')} us, "
        f"{dl.get('late_over_1ms', '?')} over 1 ms",
        highlight=False,
    )


def cmd_testbed_agree(args) -> int:
    from longfat.testbed import agree as testbed_agree

    algos, base, name, out = _per_algorithm_setup(args, "-agree")
    with _per_algorithm_progress(args, f"agree {Path(args.scenario).stem}", algos, "s on the testbed") as progress:

        def log(text: str) -> None:
            err_console.print(text, highlight=False, markup=False)

        rows = testbed_agree.agree(base, algos, out, force=args.force, delay_direction=args.delay_direction, rps=not args.no_rps, command="longfat " + " ".join(args.argv), progress=progress, log=log)
    t = Table(title=f"{name}: testbed against simulator (profile linux)")
    for col in ("algorithm", "goodput sim/testbed Mbit/s", "diff", "loss sim/testbed", "factor", "queue sim/testbed", "targets"):
        t.add_column(col, justify="left" if col in ("algorithm", "targets") else "right")
    for r in rows:
        s_, t_ = r["simulator"], r["testbed"]
        f = r["loss_rate_factor"]
        t.add_row(
            r["algorithm"],
            f"{s_['goodput_bps'] / 1e6:.1f}/{t_['goodput_bps'] / 1e6:.1f}",
            "-" if r["goodput_rel_diff"] is None else f"{100 * r['goodput_rel_diff']:+.1f} %",
            f"{s_['loss_rate'] or 0:.2e}/{t_['loss_rate'] or 0:.2e}",
            "-" if f is None else f"{f:.2f}",
            f"{s_['mean_queue_pkts'] or 0:.0f}/{t_['mean_queue_pkts'] or 0:.0f}",
            ("goodput ok" if r["goodput_within_target"] else "goodput MISSED") + ", " + ("loss ok" if r["loss_within_target"] else "loss MISSED"),
        )
    console.print(t)
    console.print(f"report in {out}/agreement.md (also agreement.json, one PNG per algorithm, sim/ and testbed/ runs)", highlight=False)
    return 0


def cmd_testbed_up(args) -> int:
    from longfat import testbed
    from longfat.runner import prepare
    from longfat.scenario import find_scenario

    spec, sim = prepare(find_scenario(args.scenario), overrides=args.set or ())
    del sim

    def log(text: str) -> None:
        err_console.print(text, highlight=False, markup=False)

    with err_console.status("building the testbed and checking its RTT with ping"):
        st = testbed.up(spec, delay_direction=args.delay_direction, rps=not args.no_rps, iperf3=not args.no_iperf3, log=log)
    recv = st["receiver"]
    console.print(f"testbed up ({st['scenario'] or args.scenario}): bottleneck {st['rate_bps'] / 1e6:g} Mbit/s, {st['bottleneck']['qdisc']}", highlight=False, soft_wrap=True)
    for g, s in st["senders"].items():
        ping = (st.get("ping") or {}).get(g, {}).get("measured_median_ms")
        console.print(f"  sender   {s['namespace']:<10} {s['address']:<12} RTT {s['rtt_ms']:g} ms (ping {ping:.2f} ms)", highlight=False)
    console.print(f"  receiver {recv['namespace']:<10} {recv['address']:<12}" + (f" iperf3 server on port {st['iperf3_port']}" if st["iperf3_port"] else ""), highlight=False)
    s0 = next(iter(st["senders"].values()))["namespace"]
    if st["iperf3_port"]:
        console.print(f"try:   longfat kernel load ltcp && ip netns exec {s0} iperf3 -c {recv['address']} -C longfat_ltcp -t 20", highlight=False, soft_wrap=True)
    console.print("watch: ip netns exec " + st["router"] + " tc -s qdisc show dev rd", highlight=False)
    console.print("remove it: longfat testbed down", highlight=False)
    return 0


def cmd_testbed_down(_args) -> int:
    from longfat import testbed

    gone = testbed.down()
    if not gone["namespaces"] and not gone["unloaded"]:
        console.print("no standing testbed was up")
    else:
        extra = f"; unloaded {', '.join(gone['unloaded'])}" if gone["unloaded"] else ""
        console.print(f"testbed down: removed {', '.join(gone['namespaces']) or 'no namespaces'}{extra}", highlight=False)
    for line in gone["left"]:
        console.print(line, highlight=False, markup=False)
    return 0


def cmd_testbed_clean(_args) -> int:
    from longfat import testbed

    testbed.check_environment()
    console.print(testbed.stale_message(testbed.clean_stale()), highlight=False, markup=False)
    return 0


def cmd_algorithms(args) -> int:
    from longfat import catalogue

    if args.format == "json":
        print(catalogue.to_json())
    elif args.format == "markdown":
        print(catalogue.to_markdown(), end="")
    else:
        for a in catalogue.catalogue():
            console.print(f"{a['name']:<10} {a['what']}", highlight=False, markup=False)
    return 0


def cmd_conformance(args) -> int:
    from longfat import conformance

    try:
        scripts = conformance.collect(args.scripts)
    except FileNotFoundError as e:
        console.print(f"error: {e}", highlight=False, markup=False)
        return 2
    results = []
    for path in scripts:
        res = conformance.run_script(path, args.profile)
        res.path = conformance.display_path(path)
        results.append(res)
        if args.format == "text":
            console.print(res.text(), highlight=False, markup=False, soft_wrap=True)
            if args.verbose:
                for line in res.printed + res.trace:
                    console.print(f"    {line}", highlight=False, markup=False)
    if args.format == "json":
        print(json.dumps([{"path": r.path, "status": r.status, "line": r.line, "message": r.message, **r.header} for r in results], indent=1))
    else:
        console.print(f"{conformance.summary(results)} (profile {args.profile})", highlight=False)
    return 1 if any(r.status == "FAIL" for r in results) else 0


def _register_argument(p: argparse.ArgumentParser) -> None:
    """--register: controllers written in Python (docs/python-controllers.md)."""
    p.add_argument(
        "--register", action="append", metavar="NAME=FILE.py:CLASS",
        help="make NAME a value of cc that runs the longfat.Controller subclass CLASS of FILE.py (or of an importable MODULE: NAME=MODULE:CLASS); repeatable; also $LONGFAT_CONTROLLERS, comma-separated",
    )


def _executor_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of the commands that run on the executor (sweep, suite)."""
    p.add_argument("--scheduler", metavar="ADDRESS", help="run on an existing Dask cluster (tcp://HOST:8786) instead of a local one")
    p.add_argument("--workers", type=int, help="local worker processes (default: number of cores; 1 runs in this process)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.add_argument("--memory-budget", metavar="SIZE", help="refuse a run estimated to need more memory, and stop one whose packets pass it (default $LONGFAT_MEMORY_BUDGET or 4GiB)")
    _register_argument(p)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="longfat", description="Congestion control for long fat networks.")
    sub = p.add_subparsers(dest="command", required=True)

    r = sub.add_parser("run", help="run a scenario file; write results, a plot and print a summary")
    r.add_argument("scenario", help="scenario TOML file, or the name of a shipped one (see longfat scenarios)")
    r.add_argument("--set", action="append", metavar="KEY=VALUE", help='override a field, e.g. --set run.duration=\\"10s\\" or --set flows[0].count=4')
    r.add_argument("--seed", type=int, help="random seed (overrides run.seed)")
    r.add_argument("--out", help="result directory (default results/<scenario name>)")
    r.add_argument("--force", action="store_true", help="replace the output directory if it holds an earlier longfat result (never anything else)")
    r.add_argument("--no-plot", action="store_true", help="skip plot.png")
    r.add_argument("-q", "--quiet", action="store_true", help="no progress bar or summary table")
    r.add_argument("--memory-budget", metavar="SIZE", help="refuse a run estimated to need more memory, and stop one whose packets pass it (e.g. 8GiB; default $LONGFAT_MEMORY_BUDGET or 4GiB)")
    _register_argument(r)
    r.add_argument("--pcap", metavar="FLOW[,FLOW...]", help="write these TCP flows' packets (names as in flows.parquet's flow_name) to pcap/<flow>.pcapng, headers only (overrides run.pcap)")
    r.add_argument("--pcap-tap", choices=("sender", "bottleneck"), help="where the captures see the flow: the sender's host (default) or the flow's bottleneck link (overrides run.pcap_tap)")
    r.set_defaults(func=cmd_run)

    c = sub.add_parser("compare", help="run a scenario once per algorithm; print and plot them side by side")
    c.add_argument("scenario", help="scenario TOML file (or a shipped one's name); every TCP flow takes each algorithm in turn")
    c.add_argument("--cc", required=True, help="comma-separated algorithms, e.g. reno,ltcp,htcp")
    c.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a scenario field (as for run)")
    c.add_argument("--seed", type=int, help="random seed (overrides run.seed)")
    c.add_argument("--out", help="result directory (default results/<scenario name>-compare)")
    c.add_argument("--force", action="store_true", help="replace the output directory if it holds an earlier longfat result (never anything else)")
    c.add_argument("--no-plot", action="store_true", help="skip comparison.png and comparison_summary.png")
    c.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    c.add_argument("--memory-budget", metavar="SIZE", help="refuse a run estimated to need more memory, and stop one whose packets pass it (e.g. 8GiB; default $LONGFAT_MEMORY_BUDGET or 4GiB)")
    _register_argument(c)
    c.set_defaults(func=cmd_compare)

    pl = sub.add_parser("plot", help="draw goodput, cwnd and queue of a result directory")
    pl.add_argument("dir")
    pl.add_argument("--out", help="PNG path (default DIR/plot.png)")
    pl.add_argument("--force", action="store_true", help="replace an existing file at --out")
    pl.set_defaults(func=cmd_plot)

    b = sub.add_parser("bench", help="measure simulator speed on the canonical scenario")
    b.add_argument("--scenario", default="canonical", help="scenario TOML file, or the name of a shipped one (default canonical)")
    b.add_argument("--set", action="append", metavar="KEY=VALUE")
    b.add_argument("--repeat", type=int, default=3)
    b.add_argument("--memory-budget", metavar="SIZE", help="refuse a run estimated to need more memory, and stop one whose packets pass it (e.g. 8GiB; default $LONGFAT_MEMORY_BUDGET or 4GiB)")
    b.set_defaults(func=cmd_bench)

    rp = sub.add_parser("reproduce", help="rerun a paper's experiments and report paper vs longfat")
    rp.add_argument("paper", metavar="PAPER", help="ltcp, htcp, ehstcp, tcpgt, plt or all")
    rp.add_argument("--quick", action="store_true", help="scaled-down runs for smoke tests (not a reproduction)")
    rp.add_argument("--only", metavar="EXPERIMENT[,...]", help="only these experiments of PAPER (scenario file names without .toml, e.g. fig6,fig7)")
    rp.add_argument("--plan", action="store_true", help="list the runs and their estimated cost and wall time; run nothing")
    rp.add_argument("--jobs", type=int, help="local worker processes (default: number of cores; 1 runs in this process)")
    rp.add_argument("--scheduler", metavar="ADDRESS", help="run on an existing Dask cluster (tcp://HOST:8786) instead of local workers")
    rp.add_argument("--out", default="reproductions", help="output directory; each paper gets OUT/<paper>/ (default reproductions)")
    rp.add_argument("--force", action="store_true", help="replace OUT/<paper> if it holds an earlier longfat result (never anything else)")
    rp.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    rp.add_argument("--memory-budget", metavar="SIZE", help="refuse a run estimated to need more memory, and stop one whose packets pass it (e.g. 8GiB; default $LONGFAT_MEMORY_BUDGET or 4GiB)")
    rp.set_defaults(func=cmd_reproduce)

    sw = sub.add_parser("sweep", help="run a scenario over a grid of fields, algorithms and seeds on Dask; store the runs in a study")
    sw.add_argument("scenario", help="scenario TOML file (its [sweep] table, if any, gives the grid)")
    sw.add_argument("--grid", action="append", metavar="KEY=[...]", help='a field and its values, e.g. --grid \'network.bottleneck.rate=["100Mbps","1Gbps"]\' (repeatable)')
    sw.add_argument("--cc", help="comma-separated algorithms; every TCP flow takes each in turn")
    sw.add_argument("--seeds", type=int, help="number of seeds: run.seed, run.seed+1, ...")
    sw.add_argument("--set", action="append", metavar="KEY=VALUE", help="fix a field for every cell (as for run)")
    sw.add_argument("--out", help="study directory (default results/<scenario name>-sweep); an earlier study there is resumed")
    _executor_arguments(sw)
    sw.set_defaults(func=cmd_sweep)

    su = sub.add_parser("suite", help="the screening suite: standard experiments per algorithm, scored on a report card (HTML and Markdown)")
    su.add_argument("--cc", help="comma-separated algorithms (default: all)")
    su.add_argument("--quick", action="store_true", help="a small version for smoke tests (not a screening)")
    su.add_argument("--seeds", type=int, help="seeds per experiment (default 3; 2 with --quick)")
    su.add_argument("--out", default="results/suite", help="directory for the card (default results/suite)")
    su.add_argument("--study", help="study that keeps the runs (default results/suite-study); runs already there are reused")
    su.add_argument("--force", action="store_true", help="replace the card directory if it holds an earlier longfat result (never anything else)")
    _executor_arguments(su)
    su.set_defaults(func=cmd_suite)

    q = sub.add_parser("query", help="run SQL over a study's results (tables runs, flows, links, transfers)")
    q.add_argument("study", help="study directory written by longfat sweep or longfat suite")
    q.add_argument("sql", help='e.g. "SELECT cc, avg(utilization) FROM runs GROUP BY cc"')
    q.add_argument("--format", choices=("table", "csv", "json"), default="table", help=f"table (the first {TABLE_ROWS:,} rows), csv or json (every row, streamed)")
    q.add_argument("--all-builds", action="store_true", help="runs, flows, links and transfers over the runs of every longfat build in the study (default: this build's)")
    q.set_defaults(func=cmd_query)

    a = sub.add_parser("algorithms", help="list the congestion-control algorithms (json: with every parameter's unit, defaults and range)")
    a.add_argument("--format", choices=("text", "json", "markdown"), default="text", help="text (default): names and one-liners")
    a.set_defaults(func=cmd_algorithms)

    cf = sub.add_parser("conformance", help="run packetdrill scripts on longfat's TCP sender (docs/conformance.md); no SCRIPT: the shipped suite")
    cf.add_argument("scripts", nargs="*", metavar="SCRIPT", help="a .pkt script, or a directory of them")
    cf.add_argument("--profile", choices=("linux", "rfc", "ns2"), default="linux", help="the sender's transport profile (default linux)")
    cf.add_argument("--format", choices=("text", "json"), default="text", help="text (default): one line per script and a count; json: one object per script with its header")
    cf.add_argument("-v", "--verbose", action="store_true", help="also show what the scripts print()")
    cf.set_defaults(func=cmd_conformance)

    tb = sub.add_parser("testbed", help="run a scenario on real Linux TCP in network namespaces (root); see docs/testbed.md")
    tbs = tb.add_subparsers(dest="testbed_command", required=True)
    tr = tbs.add_parser("run", help="build the scenario's dumbbell from namespaces, run its flows on the kernel's TCP, write results like longfat run")
    tr.add_argument("scenario", help="scenario TOML file, or the name of a shipped one")
    tr.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a scenario field (as for run)")
    tr.add_argument("--out", help="result directory (default results/<scenario name>-testbed)")
    tr.add_argument("--force", action="store_true", help="replace the output directory if it holds an earlier longfat result (never anything else)")
    tr.add_argument("--no-plot", action="store_true", help="skip plot.png")
    tr.add_argument("--delay-direction", choices=("ack", "data"), default="ack", help="which direction the delay line delays by the whole RTT (default ack: the faithful set-up on 2 vCPUs)")
    tr.add_argument("--no-rps", action="store_true", help="do not pin the delay line to one CPU and steer the veths' receive work to the others")
    tr.add_argument("-q", "--quiet", action="store_true", help="no progress bar or summary table")
    tr.set_defaults(func=cmd_testbed_run)
    ta = tbs.add_parser("agree", help="run a scenario on the testbed and in the simulator per algorithm; report how far they agree")
    ta.add_argument("scenario", help="scenario TOML file, or the name of a shipped one")
    ta.add_argument("--cc", required=True, help="comma-separated algorithms, e.g. reno,cubic; every TCP flow takes each in turn")
    ta.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a scenario field (as for run)")
    ta.add_argument("--out", help="report directory (default results/<scenario name>-agree)")
    ta.add_argument("--force", action="store_true", help="replace the output directory if it holds an earlier longfat result (never anything else)")
    ta.add_argument("--delay-direction", choices=("ack", "data"), default="ack", help="as for testbed run")
    ta.add_argument("--no-rps", action="store_true", help="as for testbed run")
    ta.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    ta.set_defaults(func=cmd_testbed_agree)
    tu = tbs.add_parser("up", help="build a scenario's dumbbell and leave it standing (with an iperf3 server) for your own traffic")
    tu.add_argument("scenario", nargs="?", default="kernel/agree", help="scenario TOML file, or the name of a shipped one (default kernel/agree: 100 Mbit/s x 70 ms, 1 BDP); only its network and flow groups are used")
    tu.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a scenario field (as for run)")
    tu.add_argument("--delay-direction", choices=("ack", "data"), default="ack", help="as for testbed run")
    tu.add_argument("--no-rps", action="store_true", help="as for testbed run")
    tu.add_argument("--no-iperf3", action="store_true", help="do not start an iperf3 server on the receiver")
    tu.set_defaults(func=cmd_testbed_up)
    td = tbs.add_parser("down", help="remove the standing testbed (namespaces, delay line, iperf3 server, programs it loaded)")
    td.set_defaults(func=cmd_testbed_down)
    tc = tbs.add_parser("clean", help="remove namespaces, devices, processes and BPF programs left by killed testbed runs")
    tc.set_defaults(func=cmd_testbed_clean)

    sc = sub.add_parser("scenarios", help="list the scenario files shipped with longfat, and where they are")
    sc.set_defaults(func=cmd_scenarios)

    from longfat.kernel import add_parser as add_kernel_parser

    add_kernel_parser(sub)
    return p


Interrupted = outdir.Interrupted


@contextmanager
def _terminating_signals_interrupt():
    """SIGINT, SIGTERM and SIGHUP all raise Interrupted while a command runs
    (a signal ignored on entry, as under nohup, stays ignored)."""
    previous = {}
    try:
        for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            if signal.getsignal(s) != signal.SIG_IGN:
                previous[s] = signal.signal(s, outdir.on_terminating_signal)
    except ValueError:  # not the main thread: leave signals alone
        pass
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h if h is not None else signal.SIG_DFL)


def _interrupted_message(written: list[Path]) -> str:
    if not written:
        return "interrupted: no results written"
    return f"interrupted: wrote only {', '.join(str(p) for p in written)}; nothing else written"


def _crash_log() -> tuple[Path, int]:
    """A new log file in the temporary directory, created exclusively (never
    through an existing file or link); returns its path and descriptor."""
    base = Path(tempfile.gettempdir()) / f"longfat-crash-{os.getpid()}-{time.strftime('%Y%m%d-%H%M%S')}"
    for n in range(100):
        path = base.with_name(base.name + (f"-{n}" if n else "") + ".log")
        try:
            return path, os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        except FileExistsError:
            continue
    raise FileExistsError(f"{base}.log")


def _report_crash(command: str, argv: list[str], exc: BaseException) -> None:
    """One line on stderr naming the operation and the exception, with the
    traceback in a log file (a bug, not bad input)."""
    try:
        log, fd = _crash_log()
        with open(fd, "w", encoding="utf-8") as fh:
            fh.write(f"longfat {outdir.longfat_version()}, Python {sys.version.split()[0]}\n")
            fh.write(f"command: longfat {' '.join(argv)}\n\n")
            traceback.print_exception(exc, file=fh)
        where = f"traceback in {log}"
    except OSError as e:
        where = f"no traceback: cannot write a log in {tempfile.gettempdir()}: {e.strerror or e}"
    message = " ".join(str(exc).split())  # one line, whatever the exception says
    what = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    err_console.print(f"error: {command} failed: {what} ({where})", style="red", highlight=False, markup=False)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    args.argv = argv
    if getattr(args, "seed", None) is not None and args.seed < 0:
        err_console.print("[red]error:[/red] --seed: must be >= 0")
        return 2
    if getattr(args, "seeds", None) is not None and args.seeds < 1:
        err_console.print("[red]error:[/red] --seeds: must be >= 1")
        return 2
    if getattr(args, "workers", None) is not None and args.workers < 1:
        err_console.print("[red]error:[/red] --workers: must be >= 1")
        return 2
    if getattr(args, "repeat", 1) < 1:
        err_console.print("[red]error:[/red] --repeat: must be >= 1")
        return 2
    for name in ("out", "study"):
        # An empty path is a mistake (an unset shell variable), not "the default".
        if getattr(args, name, None) == "":
            err_console.print(f"error: --{name}: must not be empty; give a directory, or leave --{name} out for the default", style="red", highlight=False, markup=False)
            return 2
    already_written = len(outdir.COMMITTED)
    outdir.reset_interrupted()
    try:
        with _terminating_signals_interrupt():
            if hasattr(args, "memory_budget"):
                from longfat.runner import memory_budget

                # Settled once, here (--memory-budget, else LONGFAT_MEMORY_BUDGET
                # in this environment, else the engine's default), and passed as
                # an argument to every part of the command, down to the tasks
                # sent to Dask workers, whose environment is not ours.
                args.memory_budget_bytes = memory_budget(args.memory_budget)
            if hasattr(args, "register"):
                from longfat.controller import register_specs

                register_specs(args.register or ())
            code = args.func(args)
            if code < 128:  # 128 + N: the command reported its interruption itself
                outdir.check_interrupted()  # a signal swallowed on the way is no success
            return code
    except ScenarioError as e:
        err_console.print("error: " + str(e.args[0]), style="red", highlight=False, markup=False)
        return 2
    except ControllerError as e:
        # A controller written in Python raised: its own traceback, then
        # which controller, flow and simulated time (nothing was written).
        cause = e.__cause__ or e
        sys.stderr.write("".join(traceback.format_exception(type(cause), cause, cause.__traceback__)))
        err_console.print("error: " + str(e), style="red", highlight=False, markup=False)
        return 1
    except BrokenPipeError:
        # The reader went away (`longfat query ... | head`): end quietly, as
        # a tool killed by SIGPIPE does, and keep the final flush of stdout
        # from failing again at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return 128 + signal.SIGPIPE
    except OSError as e:  # missing files, permissions, a full disk: the environment, not a bug
        err_console.print("error: " + " ".join(str(e).split()), style="red", highlight=False, markup=False)
        return 2
    except KeyboardInterrupt as e:
        err_console.print(_interrupted_message(outdir.COMMITTED[already_written:]), style="yellow", highlight=False, markup=False)
        return 128 + getattr(e, "signum", signal.SIGINT)
    except Exception as e:  # a bug: say so in one line, keep the traceback
        if os.environ.get("LONGFAT_DEBUG"):
            raise
        _report_crash(args.command, argv, e)
        return 1
    finally:
        # The signal was this command's: library calls that follow in the
        # same process (a notebook, a test) must not see it.
        outdir.reset_interrupted()


if __name__ == "__main__":
    sys.exit(main())
