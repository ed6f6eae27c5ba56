#!/usr/bin/env python3
"""Runs per minute of the same sweep on 2 local Dask workers (``longfat
sweep``'s executor) and on the process pool ``longfat reproduce`` used
before (concurrent.futures, 2 spawned processes), alternately, each into a
fresh study; and the store's size per run.

    .venv/bin/python benches/executor.py [--rounds 2] [--duration 20s]

The grid: 3 bottleneck rates x 3 algorithms x 2 seeds of two flows on a
dumbbell (18 runs). Both executors do the same work per run (simulate, turn
the result into the store's Parquet files, write them); they differ in how
runs are dispatched and results returned.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import shutil
import statistics
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from longfat import store
from longfat.sweep import Grid, expand, run_cell, run_cells

BASE = {
    "name": "bench-sweep",
    "network": {"topology": "dumbbell", "bottleneck": {"rate": "100Mbps", "delay": "20ms", "queue": "1bdp"}},
    "flows": [{"cc": "reno", "count": 2, "start_spacing": "1s"}],
    "run": {"duration": "20s", "sample_interval": "100ms", "seed": 1},
}


def with_pool(cells, study: Path, workers: int) -> float:
    study = store.open_study(study)
    t0 = time.perf_counter()
    with ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("spawn")) as pool:
        futs = [pool.submit(run_cell, json.dumps(c.scenario), c.run_id, c.labels, c.label_types) for c in sorted(cells, key=lambda c: -c.cost)]
        ids = {f: c.run_id for f, c in zip(futs, sorted(cells, key=lambda c: -c.cost))}
        for f in as_completed(futs):
            store.write_run(study, ids[f], f.result())
    store.refresh_database(study)
    return time.perf_counter() - t0


def with_dask(cells, study: Path, workers: int) -> float:
    t0 = time.perf_counter()
    out = run_cells(cells, study, workers=workers)
    assert out.ran == len(cells) and not out.failed
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--duration", default="20s")
    args = ap.parse_args()
    base = json.loads(json.dumps(BASE))
    base["run"]["duration"] = args.duration
    cells = expand(base, Grid(axes={"network.bottleneck.rate": ["50Mbps", "100Mbps", "200Mbps"]}, ccs=["reno", "cubic", "htcp"], seeds=[1, 2]))
    n = len(cells)
    times = {"pool": [], "dask": []}
    tmp = Path(tempfile.mkdtemp(prefix="longfat-bench-"))
    size = 0
    try:
        for r in range(args.rounds):
            for kind in (("pool", "dask") if r % 2 == 0 else ("dask", "pool")):
                d = tmp / f"{kind}-{r}"
                t = (with_pool if kind == "pool" else with_dask)(cells, d, args.workers)
                times[kind].append(t)
                size = store.size_bytes(d)
                print(f"round {r + 1} {kind}: {n} runs in {t:.2f} s = {60 * n / t:.1f} runs/min", file=sys.stderr)
                shutil.rmtree(d)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    pool, dask = statistics.median(times["pool"]), statistics.median(times["dask"])
    print(f"{n} runs of {args.duration} on {args.workers} workers, median of {args.rounds} rounds:")
    print(f"  process pool : {60 * n / pool:6.1f} runs/min ({pool:.2f} s)")
    print(f"  Dask (local) : {60 * n / dask:6.1f} runs/min ({dask:.2f} s)")
    print(f"  Dask / pool  : {pool / dask:.2f}x")
    print(f"  store size   : {size / n / 1e3:.0f} kB per run (Parquet, zstd; {args.duration} at 100 ms samples, 2 flows)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
