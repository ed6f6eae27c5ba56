"""A scripted policy on longfat.gym.CongestionEnv: no learning, AIMD on
the window (+4 packets per step, halved after a step with
retransmissions), for 1,000 steps of one base RTT on a 100 Mbit/s, 40 ms
path with a one-BDP tail-drop buffer; plots the window, the goodput and
the RTT per step into one PNG.

    python -m longfat.examples.gym_aimd [OUT.png] [--steps 1000] [--force]

Needs the gym extra (pip install 'longfat[gym]'). Writes only OUT.png
(default gym_aimd.png), atomically.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from longfat.gym import FEATURES, CongestionEnv

SCENARIO = {
    "name": "gym-aimd",
    "network": {"topology": "dumbbell", "bottleneck": {"rate": "100Mbps", "delay": "20ms", "queue": "1bdp"}},
    "flows": [{"name": "agent", "cc": "reno"}],
    "run": {"duration": "60s", "seed": 1},
}


def aimd(steps: int = 1000, seed: int = 1) -> dict[str, np.ndarray]:
    """Runs the policy; returns per-step columns: time_s, cwnd_pkts,
    goodput_bps, rtt_mean_ns and reward."""
    env = CongestionEnv(SCENARIO, flow="agent", step="1rtt")
    obs, info = env.reset(seed=seed)
    retx = FEATURES.index("retransmitted_pkts")
    high = float(env.action_space.high[0])
    cwnd = 10.0
    rows, times, rewards = [], [], []
    for _ in range(steps):
        cwnd = max(cwnd / 2, 1.0) if obs[retx] > 0 else min(cwnd + 4.0, high)
        obs, reward, terminated, truncated, info = env.step(np.array([cwnd]))
        rows.append(obs)
        times.append(info["time_ns"] / 1e9)
        rewards.append(reward)
        if terminated or truncated:
            break
    table = np.array(rows)
    out = {name: table[:, FEATURES.index(name)] for name in ("cwnd_pkts", "goodput_bps", "rtt_mean_ns")}
    return {"time_s": np.array(times), **out, "reward": np.array(rewards)}


def plot(cols: dict[str, np.ndarray], out: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from longfat.outdir import atomic_file

    fig, axes = plt.subplots(3, 1, figsize=(8, 7), sharex=True)
    step = np.arange(1, len(cols["time_s"]) + 1)
    axes[0].plot(step, cols["cwnd_pkts"], lw=0.8)
    axes[0].set_ylabel("cwnd (packets)")
    axes[1].plot(step, cols["goodput_bps"] / 1e6, lw=0.8)
    axes[1].set_ylabel("goodput (Mbit/s)")
    axes[2].plot(step, cols["rtt_mean_ns"] / 1e6, lw=0.8)
    axes[2].set_ylabel("mean RTT (ms)")
    axes[2].set_xlabel("step (one base RTT, 40 ms)")
    fig.suptitle("AIMD on longfat.gym.CongestionEnv: 100 Mbit/s, 40 ms, 1-BDP buffer")
    fig.tight_layout()
    with atomic_file(out) as tmp:
        fig.savefig(tmp, dpi=100, format="png")
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m longfat.examples.gym_aimd", description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?", default="gym_aimd.png", help="the PNG to write (default gym_aimd.png)")
    ap.add_argument("--steps", type=int, default=1000, help="steps to run (default 1000)")
    ap.add_argument("--force", action="store_true", help="replace OUT if it exists")
    args = ap.parse_args(argv)
    from longfat.outdir import check_output_file

    if not 1 <= args.steps <= 1500:
        ap.error(f"--steps: {args.steps} is out of range; allowed 1..=1500 (the run lasts 1500 steps)")
    try:
        check_output_file(args.out, args.force, field="OUT")
    except ValueError as e:
        ap.error(str(e.args[0]) if e.args else str(e))
    cols = aimd(args.steps)
    plot(cols, args.out)
    print(f"{len(cols['time_s'])} steps: mean goodput {cols['goodput_bps'].mean() / 1e6:.1f} Mbit/s, mean reward {cols['reward'].mean():.2f}; wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
