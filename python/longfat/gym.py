"""A Gymnasium environment on the simulator: an agent sets one flow's
congestion window or pacing rate every step, in the same process as the
simulation (no sockets, no second process).

    from longfat.gym import CongestionEnv
    env = CongestionEnv("scenarios/headline.toml", flow="flow", step="1rtt")
    obs, info = env.reset(seed=1)
    obs, reward, terminated, truncated, info = env.step([200.0])

Needs the ``gym`` extra (``pip install 'longfat[gym]'``: gymnasium). The
API, spaces, units, reward and step semantics are in docs/gym.md.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

try:
    import gymnasium
    from gymnasium import spaces
except ImportError as e:  # tests/test_gym.py hides gymnasium to check this message
    raise ImportError(
        "longfat.gym needs gymnasium, which the base install leaves out; install the gym extra: pip install 'longfat[gym]'"
    ) from e

from longfat._native import AgentRun, parse_duration_ns
from longfat.runner import memory_budget
from longfat.scenario import apply_overrides, load_scenario, seed_of, set_path

__all__ = ["CongestionEnv", "ENV_ID", "FEATURES", "ACTIONS", "DEFAULT_REWARD_WEIGHTS", "default_reward"]

#: The id ``gymnasium.make`` knows the environment by once longfat.gym is
#: imported: ``gymnasium.make(ENV_ID, scenario=..., flow=..., step=...)``.
ENV_ID = "longfat/Congestion-v0"

#: Every observation feature, in the order of the engine's row (docs/gym.md
#: gives each one's meaning and unit; the unit is in the name).
FEATURES: tuple[str, ...] = tuple(AgentRun.features())
_INDEX = {name: i for i, name in enumerate(FEATURES)}

#: What the agent may set: the window in packets, or the pacing rate in bits
#: per second of payload.
ACTIONS = ("cwnd", "pacing_rate")

#: Weights of the default reward (see ``default_reward``).
DEFAULT_REWARD_WEIGHTS: dict[str, float] = {"throughput": 10.0, "delay": 10.0, "loss": 20.0}

#: How many base RTTs a step may last at most, and its shortest fixed length.
MAX_STEP_RTTS = 1000.0
MIN_STEP_NS = 1_000

_RTTS = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*rtts?\s*$")

_GOODPUT, _RTT_MEAN, _SENT, _RETX = (_INDEX[n] for n in ("goodput_bps", "rtt_mean_ns", "sent_pkts", "retransmitted_pkts"))


def default_reward(row: np.ndarray, bottleneck_bps: float, base_rtt_ns: float, weights: Mapping[str, float] = DEFAULT_REWARD_WEIGHTS) -> float:
    """The default reward of one step, from the step's feature row (all of
    ``FEATURES``): the form of Aurora's (Jay et al., ICML 2019: 10 x
    throughput - 1000 x latency - 2000 x loss), each term made
    dimensionless so that one number means the same on any path:

        reward = w_t * goodput / bottleneck rate
               - w_d * (mean RTT - base RTT) / base RTT   (0 when below)
               - w_l * retransmitted / sent packets       (0 when none sent)

    with weights 10, 10, 20 by default: Aurora's loss weight twice its
    latency weight, and one base RTT of standing queue costing as much as
    the whole link's throughput."""
    x = row[_GOODPUT] / bottleneck_bps
    d = max(row[_RTT_MEAN] - base_rtt_ns, 0.0) / base_rtt_ns
    sent = row[_SENT]
    loss = row[_RETX] / sent if sent > 0 else 0.0
    return float(weights["throughput"] * x - weights["delay"] * d - weights["loss"] * loss)


def parse_step(step: str, base_rtt_ns: int, duration_ns: int) -> int:
    """``step`` -> nanoseconds: ``"Nrtt"`` is N times the flow's base
    (propagation-only) RTT, 0 < N <= 1000; anything else is a duration
    (``"10ms"``) of at least 1 us and at most the run's duration. Raises
    ValueError naming ``step`` and the allowed range."""
    if not isinstance(step, str):
        raise ValueError(f'step: must be a string such as "1rtt" or "10ms", not {type(step).__name__} {step!r}')
    m = _RTTS.match(step)
    if m:
        n = float(m.group(1))
        if not (0 < n <= MAX_STEP_RTTS):
            raise ValueError(f"step: {step!r} is out of range; allowed 0 < N <= {MAX_STEP_RTTS:g} base RTTs (the flow's base RTT is {base_rtt_ns / 1e6:g} ms)")
        ns = round(n * base_rtt_ns)
        if ns < MIN_STEP_NS:
            raise ValueError(f"step: {step!r} is {ns} ns, shorter than the shortest step, 1us")
        return ns
    try:
        ns = parse_duration_ns(step)
    except ValueError as e:
        raise ValueError(f'step: {step!r} is not a step ({e}); write a number of base RTTs ("1rtt", "0.5rtt") or a duration ("10ms")') from None
    if not (MIN_STEP_NS <= ns <= duration_ns):
        raise ValueError(f"step: {step!r} is out of range; allowed 1us..={duration_ns / 1e9:g}s (the run's duration)")
    return ns


class CongestionEnv(gymnasium.Env):
    """One flow of a scenario driven by an agent.

    scenario: a TOML path or a dict, as ``longfat.run`` takes, with
        ``overrides`` (``["network.bottleneck.loss=0.001"]``) and ``seed``
        (the first episode's run seed when ``reset`` is given none).
    flow: the controlled flow, by name or by index among the run's flows
        (the order of the results' flows table); a TCP flow of a [[flows]]
        entry. The other flows keep their own controllers.
    step: how long the agent's value holds: ``"Nrtt"`` (N times the flow's
        base RTT) or a duration (``"10ms"``).
    observation: the features the observation holds, in that order
        (default: all of ``FEATURES``).
    reward: None for ``default_reward``; a mapping of its weights
        (``{"throughput": 10, "delay": 10, "loss": 20}``); or a callable
        ``reward(obs_before, obs_after, info) -> float``.
    action: ``"cwnd"`` (packets) or ``"pacing_rate"`` (bits/s of payload).
    action_bounds: (low, high) of the action space; default for cwnd
        1..max(1000, 10 BDPs of the bottleneck) packets, for pacing_rate
        one packet per base RTT..2 x the bottleneck's rate.
    """

    metadata = {"render_modes": []}

    def __init__(
        self,
        scenario: str | Path | dict,
        *,
        flow: int | str = 0,
        step: str = "1rtt",
        observation: Sequence[str] | None = None,
        reward: Callable[[np.ndarray, np.ndarray, dict], float] | Mapping[str, float] | None = None,
        action: str = "cwnd",
        action_bounds: tuple[float, float] | None = None,
        seed: int | None = None,
        overrides: Iterable[str] = (),
        memory_budget_bytes: str | int | None = None,
    ) -> None:
        super().__init__()
        if action not in ACTIONS:
            raise ValueError(f"action: {action!r} is not an action; allowed: 'cwnd' (packets) or 'pacing_rate' (bits/s of payload)")
        spec = apply_overrides(load_scenario(scenario), overrides)
        if seed is not None:
            set_path(spec, "run.seed", seed, name="seed")
        if isinstance(flow, bool) or not isinstance(flow, (int, str)):
            raise ValueError(f"flow: must be a flow's name or index, not {type(flow).__name__} {flow!r}")
        if isinstance(flow, int) and flow < 0:
            raise ValueError(f"flow: index {flow} is out of range; an index is 0 or more")
        #: The scenario as run (overrides and seed applied).
        self.scenario = spec
        self._run = AgentRun(
            json.dumps(spec),
            action,
            memory_budget(memory_budget_bytes),
            flow_index=flow if isinstance(flow, int) else None,
            flow_name=flow if isinstance(flow, str) else None,
        )
        #: The controlled flow's name, index, bottleneck rate (bits/s), base RTT (ns) and MSS (payload bytes).
        self.flow_name: str = self._run.flow_name
        self.flow_index: int = self._run.flow_index
        self.bottleneck_bps: float = float(self._run.bottleneck_bps)
        self.base_rtt_ns: float = float(self._run.base_rtt_ns)
        self.mss_bytes: int = self._run.mss_bytes
        self.action_kind = action
        self._scenario_seed = int(seed_of(spec))
        self._seeded = False
        duration_ns = parse_duration_ns(spec["run"]["duration"])
        self.step_ns: int = parse_step(step, self._run.base_rtt_ns, duration_ns)

        # Observation: the selected features.
        if observation is None:
            names = FEATURES
        else:
            if isinstance(observation, str) or not all(isinstance(n, str) for n in observation):
                raise ValueError("observation: must be a list of feature names")
            names = tuple(observation)
            unknown = [n for n in names if n not in _INDEX]
            if unknown:
                raise ValueError(f"observation: unknown feature {unknown[0]!r}; allowed: {', '.join(FEATURES)}")
            if not names:
                raise ValueError("observation: select at least one feature")
            if len(set(names)) != len(names):
                raise ValueError(f"observation: {next(n for n in names if names.count(n) > 1)!r} is named twice")
        self.features: tuple[str, ...] = names
        self._select = None if names == FEATURES else np.array([_INDEX[n] for n in names], dtype=np.intp)
        self.observation_space = spaces.Box(low=0.0, high=np.inf, shape=(len(names),), dtype=np.float64)

        # Action.
        bdp_pkts = self.bottleneck_bps * self.base_rtt_ns / 1e9 / 8 / self.mss_bytes
        if action_bounds is None:
            if action == "cwnd":
                action_bounds = (1.0, float(max(1000, math.ceil(10 * bdp_pkts))))
            else:
                action_bounds = (8.0 * self.mss_bytes / (self.base_rtt_ns / 1e9), 2.0 * self.bottleneck_bps)
        lo, hi = (float(b) for b in action_bounds)
        floor = 1.0 if action == "cwnd" else 8.0
        if not (math.isfinite(lo) and math.isfinite(hi) and floor <= lo <= hi):
            unit = "packets, at least 1" if action == "cwnd" else "bits/s, at least 8 (one byte per second)"
            raise ValueError(f"action_bounds: {action_bounds!r} is not a range; give (low, high) with low <= high, finite ({unit})")
        self._lo, self._hi = lo, hi
        self.action_space = spaces.Box(low=lo, high=hi, shape=(1,), dtype=np.float64)
        self._initial_value = float(min(max(self._run.initial_cwnd_pkts, lo), hi)) if action == "cwnd" else hi / 2

        # Reward.
        if reward is None or isinstance(reward, Mapping):
            w = dict(DEFAULT_REWARD_WEIGHTS)
            if reward is not None:
                bad = [k for k in reward if k not in w]
                if bad:
                    raise ValueError(f"reward: unknown weight {bad[0]!r}; allowed: {', '.join(w)}")
                for k, v in reward.items():
                    if not (isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)):
                        raise ValueError(f"reward: weight {k!r} must be a finite number, not {v!r}")
                    w[k] = float(v)
            self.reward_weights: dict[str, float] | None = w
            self._reward_fn = None
        elif callable(reward):
            self.reward_weights = None
            self._reward_fn = reward
        else:
            raise ValueError(f"reward: must be None, a mapping of weights or a callable, not {type(reward).__name__}")
        self._obs: np.ndarray | None = None
        self._row: np.ndarray | None = None
        self._ended = False

    # ---- the Gymnasium API ------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        """Builds a fresh simulation. The episode's run seed is ``seed`` when
        given; else, for the first episode, the scenario's seed; else a draw
        from the environment's generator (seeded by the first of those), so a
        sequence of resets is a function of the first seed."""
        if seed is not None:
            if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not (0 <= seed < 2**64):
                raise ValueError(f"seed: {seed!r} is not a run seed; allowed an integer 0..={2**64 - 1}")
            super().reset(seed=int(seed))
            run_seed = int(seed)
            self._seeded = True
        elif not self._seeded:
            super().reset(seed=self._scenario_seed)
            run_seed = self._scenario_seed
            self._seeded = True
        else:
            super().reset()
            run_seed = int(self.np_random.integers(0, 2**63 - 1))
        row = self._run.reset(run_seed, self._initial_value)
        self._row = row
        self._obs = row if self._select is None else row[self._select]
        self._ended = False
        return self._obs, {"time_ns": self._run.now_ns, "run_seed": run_seed}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        if self._row is None:
            raise RuntimeError("call reset() before step()")
        if self._ended:
            raise RuntimeError("the episode has ended; call reset()")
        value = self._action_value(action)
        row, truncated, terminated = self._run.step(value, self.step_ns)
        obs = row if self._select is None else row[self._select]
        info = {"time_ns": self._run.now_ns, "features": row}
        if self._reward_fn is None:
            r = default_reward(row, self.bottleneck_bps, self.base_rtt_ns, self.reward_weights)
        else:
            r = float(self._reward_fn(self._obs, obs, info))
        self._row, self._obs = row, obs
        self._ended = truncated or terminated
        return obs, r, terminated, truncated and not terminated, info

    # ---- helpers --------------------------------------------------------------------

    def _action_value(self, action: Any) -> float:
        """The action as one float within the bounds, or ValueError naming it."""
        if type(action) is np.ndarray and action.shape == (1,):
            v = float(action[0])
        else:
            try:
                a = None if isinstance(action, (str, bytes)) else np.asarray(action, dtype=np.float64)
            except (TypeError, ValueError):
                a = None
            if a is None or a.shape not in ((1,), ()):
                shape = getattr(a, "shape", None)
                raise ValueError(f"action: expected one number (shape (1,)), got {action!r}" + (f" of shape {shape}" if shape is not None else ""))
            v = float(a.reshape(-1)[0])
        if not (self._lo <= v <= self._hi):  # also refuses NaN
            unit = "packets" if self.action_kind == "cwnd" else "bits/s"
            raise ValueError(f"action: {v!r} is out of bounds; allowed {self._lo:g}..={self._hi:g} ({self.action_kind}, {unit})")
        return v

    def feature(self, name: str, obs: np.ndarray) -> float:
        """One feature's value from an observation of this environment."""
        return float(obs[self.features.index(name)])


if ENV_ID not in gymnasium.registry:
    gymnasium.register(id=ENV_ID, entry_point="longfat.gym:CongestionEnv")
