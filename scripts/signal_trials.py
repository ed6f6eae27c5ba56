#!/usr/bin/env python3
"""Signal trials: a real command line, a signal at a random moment, and what
is left. Prints one row per command and signal: trials, how many signals
landed while the command ran, how many of those still ended in exit status 0
(a swallowed signal), and how many left a temporary entry or a card/result
behind.

    .venv/bin/python scripts/signal_trials.py --trials 20 --seed 1

Every trial runs in a fresh directory; the delay is drawn uniformly over
the command's own undisturbed wall time (measured first), so the signals
land everywhere in it: set-up, runs, the study's database rebuild, the
card's figures, the final renames.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from fuzz_files import SCENARIO as _TEMPLATE  # noqa: E402

SCENARIO = _TEMPLATE.format(duration="4s")


def longfat() -> list[str]:
    """The command line of the longfat this Python imports (PYTHONPATH may
    name another source tree, e.g. an older one for a before/after count)."""
    import importlib.util

    if importlib.util.find_spec("longfat._entry") is None:  # before the entry point existed
        return [sys.executable, "-m", "longfat.cli"]
    return [sys.executable, "-m", "longfat._entry"]


COMMANDS = {
    "sweep": lambda d: ["sweep", str(d / "tiny.toml"), "--cc", "reno,cubic,htcp", "--seeds", "2", "--workers", "1", "-q", "--out", str(d / "study")],
    "suite": lambda d: ["suite", "--quick", "--cc", "reno", "--seeds", "1", "--workers", "1", "-q", "--out", str(d / "card"), "--study", str(d / "st")],
    "run --force": lambda d: ["run", str(d / "tiny.toml"), "-q", "--out", str(d / "res"), "--force"],
}
#: What each command writes last: a signal sent after it was renamed into
#: place came after the command's work was done (the process was exiting),
#: so it does not count as landing while the command ran.
COMMITTED_LAST = {"sweep": "study/study.duckdb", "suite": "card", "run --force": "res"}
#: What a command leaves when it ends early: nothing but its inputs (a
#: sweep's or suite's study keeps the runs it finished, by design).
KEEP = {"tiny.toml", "study", "st", "res"}


def trial(cmd: str, sig: int, delay: float) -> dict:
    with tempfile.TemporaryDirectory(prefix="signal-trial-") as tmp:
        d = Path(tmp)
        (d / "tiny.toml").write_text(SCENARIO)
        if cmd == "run --force":  # an earlier result to replace
            subprocess.run(longfat() + ["run", str(d / "tiny.toml"), "-q", "--no-plot", "--out", str(d / "res")], check=True, capture_output=True)
        started_ns = time.time_ns()
        p = subprocess.Popen(longfat() + COMMANDS[cmd](d), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=lambda: [signal.signal(s, signal.SIG_DFL) for s in (signal.SIGINT, signal.SIGHUP)])
        time.sleep(delay)
        landed = p.poll() is None
        sent_ns = time.time_ns()
        if landed:
            p.send_signal(sig)
        out, err = p.communicate(timeout=300)
        try:
            done = os.stat(d / COMMITTED_LAST[cmd]).st_ctime_ns
            landed = landed and not (started_ns < done < sent_ns)
        except FileNotFoundError:
            pass
        left = [q.relative_to(d).as_posix() for q in d.rglob("*") if re.search(r"\.longfat-(tmp|old)-", q.name)]
        extra = sorted({q.name for q in d.iterdir()} - KEEP)
        res_ok = cmd != "run --force" or (d / "res" / "summary.json").is_file()
        return {"landed": landed, "rc": p.returncode, "tracebacks": "Traceback" in err, "left": left, "extra": extra, "result_kept": res_ok, "err": err[-300:]}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--commands", default=",".join(COMMANDS))
    a = ap.parse_args()
    rng = random.Random(a.seed)
    print("| command | signal | trials | landed while running | exit 0 after a signal | tracebacks | temporaries left | other entries left | earlier result lost |")
    print("|---|---|---|---|---|---|---|---|---|")
    bad = 0
    for cmd in a.commands.split(","):
        with tempfile.TemporaryDirectory() as tmp:  # the undisturbed wall time
            d = Path(tmp)
            (d / "tiny.toml").write_text(SCENARIO)
            t0 = time.monotonic()
            subprocess.run(longfat() + COMMANDS[cmd](d), capture_output=True)
            wall = time.monotonic() - t0
        for sig in (signal.SIGINT, signal.SIGTERM):
            rows = [trial(cmd, sig, rng.uniform(0.3, wall)) for _ in range(a.trials)]
            landed = [r for r in rows if r["landed"]]
            zero = sum(r["rc"] == 0 for r in landed)
            tb = sum(r["tracebacks"] for r in landed)
            left = sum(bool(r["left"]) for r in rows)
            extra = sum(bool(r["extra"]) for r in landed)  # a command that finished first wrote its output
            lost = sum(not r["result_kept"] for r in rows)
            bad += zero + tb + left + extra + lost
            print(f"| {cmd} | {signal.Signals(sig).name} | {len(rows)} | {len(landed)} | {zero} | {tb} | {left} | {extra} | {lost} |", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
