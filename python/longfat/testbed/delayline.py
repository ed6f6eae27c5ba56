"""The testbed's delay line as a process: ``python -m longfat.testbed.delayline``.

The testbed starts it inside the router namespace
(``ip netns exec ROUTER python -m longfat.testbed.delayline ...``). It
forwards packets from TUN device ``--input`` to TUN device ``--output``,
each held for its delay, until SIGTERM or SIGINT; then it writes its counts
and lateness percentiles as one JSON object to ``--report`` (and stdout).
The work is done in Rust (longfat_kernel::delayline) with the GIL released.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m longfat.testbed.delayline")
    p.add_argument("--input", required=True, help="TUN device the packets come in from")
    p.add_argument("--output", required=True, help="TUN device the packets go out through")
    p.add_argument("--delay-ns", type=int, required=True, help="delay of packets no --route matches")
    p.add_argument("--route", action="append", default=[], metavar="A.B.C.D/LEN=DELAY_NS", help="a destination prefix with its own delay (repeatable)")
    p.add_argument("--capacity", type=int, default=1_000_000, help="most packets held at once")
    p.add_argument("--spin-us", type=int, default=0, help="busy-wait over the last SPIN_US before each due time")
    p.add_argument("--cpu", type=int, help="pin to this CPU")
    p.add_argument("--rt-priority", type=int, default=0, help="run under SCHED_FIFO at this priority (1-99; 0: the normal scheduler)")
    p.add_argument("--report", help="write the JSON report here too")
    a = p.parse_args(argv)
    if a.delay_ns < 0 or a.capacity < 1 or a.spin_us < 0:
        print("error: --delay-ns and --spin-us must be >= 0, --capacity >= 1", file=sys.stderr)
        return 2
    if a.cpu is not None:
        os.sched_setaffinity(0, {a.cpu})
    if a.rt_priority:
        # A real-time thread preempts compilers and the like the moment its
        # timer fires; it sleeps in ppoll between packets, so it cannot
        # starve the machine (and the kernel's RT throttling would stop it).
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(a.rt_priority))
    from longfat._native import run_delay_line

    # SIGINT and SIGTERM (to whichever thread the kernel picks) write their
    # number into this pipe; the line polls its read end and stops.
    rfd, wfd = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    signal.set_wakeup_fd(wfd, warn_on_full_buffer=False)
    for s in (signal.SIGINT, signal.SIGTERM):
        signal.signal(s, lambda *_: None)
    try:
        stats = run_delay_line(a.input, a.output, a.route, a.delay_ns, rfd, a.capacity, a.spin_us * 1000)
    except (OSError, ValueError) as e:
        print(f"error: delay line: {e}", file=sys.stderr)
        return 1
    try:
        stats["stopped_by_signal"] = os.read(rfd, 1)[0]
    except (BlockingIOError, IndexError):
        stats["stopped_by_signal"] = 0
    text = json.dumps(stats)
    if a.report:
        with open(a.report, "w") as fh:
            fh.write(text + "\n")
    print(text, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
