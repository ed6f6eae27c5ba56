"""Benchmark of longfat.gym.CongestionEnv on a 1 Gbit/s x 70 ms path (the
canonical scenario: one flow, DropTail 6000 packets): the time of a reset,
and steps per second for each step size, with the agent holding the
window at 90 % of the path's BDP (the link busy: the most events per
simulated second) and, for comparison, an AIMD policy and a one-packet window (the
per-step overhead).

    PYTHONPATH=python .venv/bin/python scripts/bench_gym.py [--seconds 3]

Prints one line per case; docs/gym.md quotes the numbers. A benchmark,
not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

from longfat.gym import FEATURES, CongestionEnv

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "scenarios" / "canonical.toml"
STEPS = ("1ms", "10ms", "1rtt")
RETX = FEATURES.index("retransmitted_pkts")


def bench_reset(n: int = 1000) -> tuple[list[float], list[float]]:
    """Wall and CPU times of ``n`` resets, each after 100 steps of 1 ms
    (so that each reset also frees a run that moved), sorted, in seconds.
    CPU time leaves out the waits of a busy machine's scheduler."""
    env = CongestionEnv(SCENARIO, step="1ms")
    action = np.array([5000.0])
    wall, cpu = [], []
    for i in range(n):
        env.reset(seed=i)
        for _ in range(100):
            env.step(action)
        t, c = time.perf_counter(), time.process_time()
        env.reset(seed=i)
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    return sorted(wall), sorted(cpu)


def bench_steps(step: str, policy: str, seconds: float) -> tuple[float, int, float]:
    """Steps per second, steps taken, simulated seconds per wall second
    (counting every step as whole)."""
    env = CongestionEnv(SCENARIO, step=step)
    bdp_pkts = env.bottleneck_bps * env.base_rtt_ns / 1e9 / 8 / env.mss_bytes
    env.reset(seed=1)
    cwnd = {"fixed": 0.9 * bdp_pkts, "aimd": 10.0, "idle": 1.0}[policy]
    action = np.array([cwnd])
    n = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        obs, _, terminated, truncated, _ = env.step(action)
        n += 1
        if policy == "aimd":
            cwnd = max(cwnd / 2, 1.0) if obs[RETX] > 0 else min(cwnd + 1.0, env.action_space.high[0])
            action = np.array([cwnd])
        if terminated or truncated:
            env.reset()
    wall = time.perf_counter() - t0
    return n / wall, n, n * env.step_ns / 1e9 / wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=3.0, help="wall seconds per case (default 3)")
    args = ap.parse_args()
    n = 300
    for what, times in zip(("wall", "CPU"), bench_reset(n)):
        print(f"reset ({what}): median {statistics.median(times) * 1e3:.3f} ms, 99th percentile {times[int(0.99 * n)] * 1e3:.3f} ms, worst {times[-1] * 1e3:.3f} ms ({n} resets)")
    # "idle": a window of one packet, so the step costs little more than
    # the Python and binding overhead; "fixed": 90 % of the BDP, the link
    # busy; "aimd": +1 packet per step, halved on a retransmission.
    for policy in ("idle", "fixed", "aimd"):
        for step in STEPS:
            rate, n, speed = bench_steps(step, policy, args.seconds)
            print(f"step {step:>5} {policy:>5}: {rate:9,.0f} steps/s ({n} steps, {speed:.2f} simulated s per wall s)")


if __name__ == "__main__":
    main()
