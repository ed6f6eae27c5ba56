"""What a controller written in Python costs per ACK: the same scenario with
the built-in reno and with the shipped Python Reno (longfat.examples.reno,
bit-identical to it), run alternately, best wall time of each.

    PYTHONPATH=python .venv/bin/python benches/python_controller.py [--duration 60s] [--rounds 3]

ACKs are the packets the bottleneck's reverse link carried (every one of
them reaches the sender and is one on_ack call). Prints one line per
controller and the difference in ns per ACK.
"""

from __future__ import annotations

import argparse
import time

import longfat
from longfat.examples.reno import Reno
from longfat.runner import execute, prepare
from longfat.scenario import find_scenario


def once(cc: str, duration: str) -> tuple[float, dict]:
    spec, sim = prepare(find_scenario("canonical"), overrides=[f'flows[0].cc="{cc}"', f'run.duration="{duration}"', 'flows[0].name="f"'])
    t0 = time.perf_counter()
    result = execute(spec, sim)
    return time.perf_counter() - t0, result.summary


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", default="60s", help="simulated time of the canonical scenario (default 60s, as longfat bench)")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    longfat.register("pyreno", Reno)
    best: dict[str, float] = {}
    summaries: dict[str, dict] = {}
    for _ in range(args.rounds):
        for cc in ("reno", "pyreno"):
            wall, summary = once(cc, args.duration)
            best[cc] = min(best.get(cc, wall), wall)
            summaries[cc] = summary
    reverse = next(link for link in summaries["reno"]["links"] if link["name"] == "bottleneck.reverse")
    acks = reverse["offered_pkts"]
    events = {cc: s["events"] for cc, s in summaries.items()}
    assert events["reno"] == events["pyreno"], events
    print(f"canonical scenario, {args.duration} simulated: {acks:,} ACKs, {events['reno']:,} events; best of {args.rounds} alternating rounds")
    for cc in ("reno", "pyreno"):
        print(f"  {cc:<7} {best[cc]:7.3f} s wall  {best[cc] / acks * 1e9:8.1f} ns per ACK (whole run)")
    print(f"  Python controller: +{(best['pyreno'] - best['reno']) / acks * 1e9:.0f} ns per ACK, {best['pyreno'] / best['reno']:.1f}x the wall time")


if __name__ == "__main__":
    main()
