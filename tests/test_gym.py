"""longfat.gym.CongestionEnv: the Gymnasium checker, determinism per seed,
the agent's window and pacing rate against hand-derived goodput, the
default reward against its formula, the episode's end, and the errors for
bad arguments and a missing gymnasium."""

from __future__ import annotations

import importlib
import sys
import warnings

import numpy as np
import pytest

# The gym extra, which scripts/setup.sh installs (pip install '.[test,gym]').
import gymnasium
from gymnasium.utils.env_checker import check_env

from longfat.gym import FEATURES, CongestionEnv

#: 100 Mbit/s bottleneck, 10 ms each way, access links 1 Gbit/s and no
#: delay (the default: 10 x the bottleneck): base RTT 20 ms.
RATE_BPS = 100e6
ACCESS_BPS = 1e9
BASE_RTT_NS = 20_000_000
MSS = 1460
PACKET_BYTES, ACK_BYTES = 1500, 40


def path(loss: float = 0.0, duration: str = "3s", **tcp) -> dict:
    return {
        "network": {"topology": "dumbbell", "bottleneck": {"rate": "100Mbps", "delay": "10ms", "queue": "1bdp", "loss": loss}},
        "flows": [{"name": "a", "cc": "reno", "tcp": {"delayed_ack": False, **tcp}}],
        "run": {"duration": duration, "seed": 1},
    }


def feature(obs: np.ndarray, name: str) -> float:
    return float(obs[FEATURES.index(name)])


def unqueued_rtt_ns() -> float:
    """A packet's RTT on an empty path: the propagation RTT plus the data
    packet's serialization on the three forward links (access, bottleneck,
    access) and the ACK's on the three backward ones."""
    per_byte_ns = 8e9 * (2 / ACCESS_BPS + 1 / RATE_BPS)
    return BASE_RTT_NS + (PACKET_BYTES + ACK_BYTES) * per_byte_ns


def test_check_env_passes_for_both_actions():
    scenario = path(loss=0.01, duration="1s")
    for action in ("cwnd", "pacing_rate"):
        env = gymnasium.make("longfat/Congestion-v0", scenario=scenario, flow="a", step="1rtt", action=action).unwrapped
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            check_env(env)
        # The checker's advice, which this environment declines on purpose
        # (docs/gym.md): actions in their units, not scaled to [-1, 1];
        # unbounded features. Nothing else.
        allowed = ("symmetric and normalized", "maximum value is infinity")
        others = [str(w.message) for w in caught if not any(a in str(w.message) for a in allowed)]
        assert not others, others


def test_gymnasium_make_builds_it_by_its_id():
    from longfat.gym import ENV_ID

    env = gymnasium.make(ENV_ID, scenario=path(), flow="a", step="2rtt")
    assert env.spec.id == ENV_ID and isinstance(env.unwrapped, CongestionEnv)
    obs, _ = env.reset(seed=1)
    obs, *_ = env.step(np.array([10.0]))
    assert feature(obs, "cwnd_pkts") == 10


def aimd_episode(env: CongestionEnv, seed: int, steps: int = 60) -> tuple[np.ndarray, np.ndarray]:
    """AIMD on the window, driven only by the observations."""
    obs, _ = env.reset(seed=seed)
    cwnd, rows, rewards = 10.0, [obs], []
    for _ in range(steps):
        if feature(obs, "retransmitted_pkts") > 0:
            cwnd = max(cwnd / 2, 1.0)
        else:
            cwnd += 4.0
        obs, r, terminated, truncated, _ = env.step(np.array([cwnd]))
        rows.append(obs)
        rewards.append(r)
        if terminated or truncated:
            break
    return np.array(rows), np.array(rewards)


def test_same_seed_and_actions_give_identical_sequences_and_other_seeds_differ():
    scenario = path(loss=0.002, duration="2s")
    env = CongestionEnv(scenario, flow="a", step="2rtt")
    a_obs, a_rew = aimd_episode(env, seed=7)
    # Losses happened, so the run's randomness was used.
    assert a_obs[:, FEATURES.index("retransmitted_pkts")].sum() > 0
    # A second episode of the same environment, and a second environment.
    b_obs, b_rew = aimd_episode(env, seed=7)
    c_obs, c_rew = aimd_episode(CongestionEnv(scenario, flow="a", step="2rtt"), seed=7)
    for obs, rew in ((b_obs, b_rew), (c_obs, c_rew)):
        assert np.array_equal(a_obs, obs)
        assert np.array_equal(a_rew, rew)
    d_obs, _ = aimd_episode(env, seed=8)
    assert not np.array_equal(a_obs[: len(d_obs)], d_obs[: len(a_obs)])


def test_a_fixed_window_gives_w_packets_per_round_trip():
    """cwnd = W on an uncongested path: W packets per round trip, the
    round trip being the propagation RTT plus serialization (no queue)."""
    w = 20
    env = CongestionEnv(path(), flow="a", step="10rtt")
    env.reset(seed=1)
    rows = [env.step(np.array([float(w)]))[0] for _ in range(12)]
    rtt = unqueued_rtt_ns()
    # The first step's mean RTT: the first window leaves in one burst, so
    # packet i waits i x (120 - 12) us at the bottleneck (it serializes ten
    # times slower than the access link); every later packet is ACK-clocked
    # and waits nowhere. The mean of all the step's samples lies above the
    # unqueued RTT and below the burst's own mean.
    burst_mean_ns = rtt + (w - 1) / 2 * PACKET_BYTES * 8e9 * (1 / RATE_BPS - 1 / ACCESS_BPS)
    assert rtt < feature(rows[0], "rtt_mean_ns") < burst_mean_ns
    assert feature(rows[0], "rtt_ns") == rtt
    for obs in rows[1:]:
        assert feature(obs, "min_rtt_ns") == rtt
        assert feature(obs, "rtt_mean_ns") == rtt
        assert feature(obs, "cwnd_pkts") == w
        assert feature(obs, "queue_pkts") == 0
    # Goodput over the steps after the first: W x MSS per RTT, within one
    # window's quantisation over the whole span.
    span_s = 11 * env.step_ns / 1e9
    delivered_bits = sum(feature(o, "goodput_bps") * env.step_ns / 1e9 for o in rows[1:])
    expected_bps = w * MSS * 8 / (rtt / 1e9)
    assert abs(delivered_bits / span_s - expected_bps) <= w * MSS * 8 / span_s


def test_a_window_above_the_bdp_shows_its_standing_queue():
    """W = 300 packets on a path whose pipe holds R x C / packet = 167.9:
    the link is saturated, the other 132.1 packets wait at the bottleneck
    (132 or 133 at a given moment), every RTT is W packets' serialization
    at the bottleneck (36 ms), and behind CoDel with ECN every packet's
    sojourn is that RTT less the unqueued one, marked and not dropped."""
    w = 300
    rtt_ns = w * PACKET_BYTES * 8 / RATE_BPS * 1e9
    pipe_pkts = unqueued_rtt_ns() / 1e9 * RATE_BPS / (8 * PACKET_BYTES)
    for aqm in (False, True):
        s = path()
        s["network"]["bottleneck"]["queue"] = "1000pkt"
        if aqm:
            s["network"]["bottleneck"].update({"discipline": "codel", "aqm": {"ecn": True}})
            s["flows"][0]["tcp"]["ecn"] = True
        env = CongestionEnv(s, flow="a", step="10rtt")
        env.reset(seed=1)
        rows = [env.step(np.array([float(w)]))[0] for _ in range(6)]
        for obs in rows[1:]:
            assert feature(obs, "rtt_mean_ns") == rtt_ns
            assert np.floor(w - pipe_pkts) <= feature(obs, "queue_pkts") <= np.ceil(w - pipe_pkts)
            assert feature(obs, "queue_bytes") == feature(obs, "queue_pkts") * PACKET_BYTES
            assert feature(obs, "queue_delay_ns") == pytest.approx(feature(obs, "queue_bytes") * 8 / RATE_BPS * 1e9, rel=1e-12)
            assert feature(obs, "drops_pkts") == 0 and feature(obs, "loss_events") == 0
            if aqm:
                assert feature(obs, "sojourn_mean_ns") == pytest.approx(rtt_ns - unqueued_rtt_ns(), rel=1e-9)
                assert feature(obs, "ece_acks") > 0
            else:
                assert feature(obs, "sojourn_mean_ns") == 0 and feature(obs, "ece_acks") == 0
        # The link is busy: goodput is the payload share of its rate.
        span_s = 5 * env.step_ns / 1e9
        delivered_bits = sum(feature(o, "goodput_bps") * env.step_ns / 1e9 for o in rows[1:])
        assert abs(delivered_bits / span_s - RATE_BPS * MSS / PACKET_BYTES) <= MSS * 8 / span_s


def test_the_agents_window_holds_through_loss_recovery():
    """Under the linux profile PRR would shrink the window in fast recovery;
    the agent's window holds there (the controller controls the recovery
    window), so with 1 % random loss the flow still sends W packets per
    round trip, retransmissions included."""
    w = 40
    env = CongestionEnv(path(loss=0.01, profile="linux"), flow="a", step="10rtt")
    env.reset(seed=1)
    rows = [env.step(np.array([float(w)]))[0] for _ in range(10)]
    assert sum(feature(o, "loss_events") for o in rows) >= 10
    span_ns = 9 * env.step_ns
    sent = sum(feature(o, "sent_pkts") for o in rows[1:])
    assert abs(sent - w * span_ns / unqueued_rtt_ns()) <= w


def test_a_pacing_rate_below_the_bottleneck_gives_that_goodput():
    rate = 20e6
    env = CongestionEnv(path(), flow="a", step="10rtt", action="pacing_rate")
    env.reset(seed=1)
    rows = [env.step(np.array([rate]))[0] for _ in range(12)]
    for obs in rows[1:]:
        assert feature(obs, "pacing_rate_bps") == rate
        assert feature(obs, "queue_pkts") == 0
        # BBR's gain of 2 over the rate's BDP at the min RTT.
        assert feature(obs, "cwnd_pkts") == pytest.approx(2 * rate / 8 * unqueued_rtt_ns() / 1e9 / MSS, rel=1e-12)
    span_s = 11 * env.step_ns / 1e9
    delivered_bits = sum(feature(o, "goodput_bps") * env.step_ns / 1e9 for o in rows[1:])
    assert abs(delivered_bits / span_s - rate) <= MSS * 8 / span_s


def test_the_default_reward_follows_its_formula_and_a_callable_replaces_it():
    env = CongestionEnv(path(loss=0.01), flow="a", step="5rtt")
    env.reset(seed=3)
    seen = 0
    for _ in range(20):
        obs, r, *_ = env.step(np.array([60.0]))
        x = feature(obs, "goodput_bps") / RATE_BPS
        d = (feature(obs, "rtt_mean_ns") - BASE_RTT_NS) / BASE_RTT_NS
        sent = feature(obs, "sent_pkts")
        loss = feature(obs, "retransmitted_pkts") / sent
        seen += loss > 0
        assert r == pytest.approx(10 * x - 10 * d - 20 * loss, rel=1e-12, abs=1e-12)
    assert seen > 0
    calls = []

    def mine(before, after, info):
        calls.append((before, after, info["time_ns"]))
        return float(after[0] - before[0])

    env = CongestionEnv(path(), flow="a", step="5rtt", observation=["goodput_bps", "rtt_ns"], reward=mine)
    obs0, _ = env.reset(seed=1)
    obs1, r1, *_ = env.step(np.array([10.0]))
    obs2, r2, *_ = env.step(np.array([10.0]))
    assert obs1.shape == (2,) and env.observation_space.shape == (2,)
    assert calls[0][0] is obs0 and calls[1][0] is obs1 and calls[1][1] is obs2
    assert (r1, r2) == (obs1[0] - obs0[0], obs2[0] - obs1[0])
    assert calls[1][2] - calls[0][2] == env.step_ns


def test_the_episode_ends_when_the_run_does_or_the_transfer_completes():
    env = CongestionEnv(path(duration="1s"), flow="a", step="100ms")
    env.reset(seed=1)
    ends = [env.step(np.array([50.0]))[2:4] for _ in range(10)]
    assert ends == [(False, False)] * 9 + [(False, True)]
    with pytest.raises(RuntimeError, match="reset"):
        env.step(np.array([50.0]))
    sized = path(duration="2s")
    sized["flows"][0]["size"] = "146KB"  # 100 packets
    env = CongestionEnv(sized, flow="a", step="1rtt")
    env.reset(seed=1)
    ends = [env.step(np.array([25.0]))[2:4] for _ in range(5)]
    # 25 packets per round trip: the 100th packet's ACK lands in the fifth.
    assert ends == [(False, False)] * 4 + [(True, False)]


def test_only_the_chosen_flow_is_driven_by_the_agent():
    two = path()
    two["flows"] = [{"name": "bulk", "cc": "cubic", "count": 2}, {"name": "other", "cc": "reno"}]
    env = CongestionEnv(two, flow=1, step="1rtt")
    env.reset(seed=1)
    assert env.flow_index == 1
    assert env._run.controllers() == ["cubic", "agent", "reno"]
    # A flow that starts later: reset runs the others up to just before it.
    two["flows"][1]["start"] = "500ms"
    env = CongestionEnv(two, flow="other", step="1rtt")
    obs, info = env.reset(seed=1)
    assert env._run.controllers() == ["cubic", "cubic", "agent"]
    assert info["time_ns"] == 500_000_000 - 1
    assert feature(obs, "sent_pkts") == 0 and feature(obs, "queue_pkts") > 0
    obs, *_ = env.step(np.array([7.0]))
    assert feature(obs, "sent_pkts") == 7


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"flow": "nope"}, r"flow: no flow is named \"nope\"; the scenario's flows: a"),
        ({"flow": 3}, r"flow: index 3 is out of range; the scenario has 1 flows \(0..=0\)"),
        ({"flow": True}, r"flow: must be a flow's name or index"),
        ({"step": "abc"}, r"step: 'abc' is not a step"),
        ({"step": "0rtt"}, r"step: '0rtt' is out of range; allowed 0 < N <= 1000 base RTTs"),
        ({"step": "5000rtt"}, r"step: '5000rtt' is out of range"),
        ({"step": "10s"}, r"step: '10s' is out of range; allowed 1us..=3s \(the run's duration\)"),
        ({"step": 0.01}, r"step: must be a string"),
        ({"action": "window"}, r"action: 'window' is not an action; allowed: 'cwnd' \(packets\) or 'pacing_rate' \(bits/s of payload\)"),
        ({"observation": ["goodput_bps", "speed"]}, r"observation: unknown feature 'speed'; allowed: goodput_bps, send_rate_bps"),
        ({"observation": ["rtt_ns", "rtt_ns"]}, r"observation: 'rtt_ns' is named twice"),
        ({"reward": {"latency": 1}}, r"reward: unknown weight 'latency'; allowed: throughput, delay, loss"),
        ({"action_bounds": (0, 10)}, r"action_bounds: \(0, 10\) is not a range"),
    ],
)
def test_bad_arguments_are_refused_naming_the_argument(kwargs, message):
    with pytest.raises(ValueError, match=message):
        CongestionEnv(path(), **kwargs)


def test_a_udp_flow_cannot_be_driven():
    s = path()
    s["udp"] = [{"name": "cbr", "pattern": "cbr", "rate": "1Mbps"}]
    with pytest.raises(ValueError, match=r'flow: "cbr" is not a TCP flow of a \[\[flows\]\] entry'):
        CongestionEnv(s, flow="cbr")


@pytest.mark.parametrize(
    ("action", "message"),
    [
        (np.array([1.0, 2.0]), r"action: expected one number \(shape \(1,\)\), got .* of shape \(2,\)"),
        ("ten", r"action: expected one number"),
        (np.array([0.5]), r"action: 0.5 is out of bounds; allowed 1..=1713 \(cwnd, packets\)"),
        (np.array([1e6]), r"action: 1000000.0 is out of bounds"),
        (np.array([np.nan]), r"action: nan is out of bounds"),
    ],
)
def test_bad_actions_are_refused_with_the_bounds(action, message):
    env = CongestionEnv(path(), flow="a")
    env.reset(seed=1)
    with pytest.raises(ValueError, match=message):
        env.step(action)
    # A good action still works: nothing was half applied.
    assert env.step(np.array([10.0]))[0].shape == (len(FEATURES),)


def test_the_example_writes_only_its_png(tmp_path):
    from longfat.examples import gym_aimd

    out = tmp_path / "aimd.png"
    assert gym_aimd.main([str(out), "--steps", "40"]) == 0
    assert [p.name for p in tmp_path.iterdir()] == ["aimd.png"]
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    cols = gym_aimd.aimd(steps=40)
    # +4 packets per step from 10 until the first loss (none in 40 steps).
    assert list(cols["cwnd_pkts"]) == [10.0 + 4 * (i + 1) for i in range(40)]


def test_without_gymnasium_the_error_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "gymnasium", None)
    monkeypatch.delitem(sys.modules, "longfat.gym")
    with pytest.raises(ImportError, match=r"longfat.gym needs gymnasium.*pip install 'longfat\[gym\]'"):
        importlib.import_module("longfat.gym")
