"""TCP Reno written in Python: crates/longfat-cc/src/reno.rs and the helpers
it calls (crates/longfat-cc/src/helpers.rs), line by line, with the same
f64 arithmetic in the same order, so that a run with it is bit-identical to
one with the built-in ``reno`` (tests/test_python_controllers.py holds them
equal under the rfc, ns2 and linux profiles)::

    import longfat
    from longfat.examples.reno import Reno
    from longfat.scenario import find_scenario

    longfat.register("pyreno", Reno)
    result = longfat.run(find_scenario("canonical"), overrides=['flows[0].cc="pyreno"'])

Congestion avoidance adds one packet per window (RFC 5681 eq. (3)); a loss
episode halves the window (eq. (4)); a timeout restarts from one packet
more than the timeout left in flight. ``linux_rules`` (default: on under
the ``linux`` profile, as the built-in's) counts in Linux's whole packets,
as the kernel's ``reno`` module does (``tcp_reno_cong_avoid``,
``tcp_reno_ssthresh``).
"""

from __future__ import annotations

from longfat.controller import AckEvent, Controller, ControllerSetup, LossEvent, RtoEvent

#: helpers.rs MIN_SSTHRESH_PKTS: RFC 5681 §3.1's floor of 2 segments.
MIN_SSTHRESH_PKTS = 2.0
#: reno.rs ABE_BETA_ECN_PCT: RFC 8511 §3 beta_ecn, percent.
ABE_BETA_ECN_PCT = 80
#: Rust's u32::MAX: Linux's TCP_INFINITE_SSTHRESH as the helpers write it.
U32_MAX = 2**32 - 1


def _sat(n: int) -> int:
    """u32::saturating_add's clamp."""
    return min(n, U32_MAX)


def linux_pkts(pkts: float) -> int:
    """helpers.rs ``linux_pkts``: the whole part; u32::MAX for an unset
    (infinite) threshold."""
    if pkts >= float(U32_MAX):
        return U32_MAX
    return int(max(pkts, 0.0))


def linux_slow_start(cwnd: int, ssthresh: int, acked: int) -> tuple[int, int]:
    """helpers.rs ``linux_slow_start`` (Linux ``tcp_slow_start``): (cwnd,
    ACKed packets left over)."""
    grown = max(min(_sat(cwnd + acked), ssthresh), cwnd)
    left = acked - (grown - cwnd)
    return grown, left


def linux_cong_avoid_ai(cwnd: int, cwnd_cnt: int, w: int, acked: int) -> tuple[int, int]:
    """helpers.rs ``linux_cong_avoid_ai`` (Linux ``tcp_cong_avoid_ai``):
    (cwnd, cwnd_cnt)."""
    w = max(w, 1)
    if cwnd_cnt >= w:
        cwnd_cnt = 0
        cwnd = _sat(cwnd + 1)
    cwnd_cnt = _sat(cwnd_cnt + acked)
    if cwnd_cnt >= w:
        delta = cwnd_cnt // w
        cwnd_cnt -= delta * w
        cwnd = _sat(cwnd + delta)
    return cwnd, cwnd_cnt


class Reno(Controller):
    """reno.rs ``Reno``."""

    #: linux_rules: None (unset) takes the profile's default, as the
    #: built-in's LINUX_RULES does: 1 under linux, else 0.
    PARAMS = {"linux_rules": None}

    def __init__(self, setup: ControllerSetup, linux_rules: float | None = None) -> None:
        super().__init__(setup)
        if linux_rules not in (None, 0.0, 1.0):
            raise ValueError(f"linux_rules = {linux_rules} is not a switch; must be 0 (off) or 1 (on)")
        self.linux_rules = setup.profile == "linux" if linux_rules is None else linux_rules == 1.0
        # `Reno::linux`: the initial window in whole packets.
        if self.linux_rules:
            self.cwnd = float(linux_pkts(setup.cwnd_pkts))
        self.cwnd_cnt = 0

    def abe_reduced(self) -> float:
        """RFC 8511 §3: beta_ecn x cwnd."""
        if self.linux_rules:
            return float(linux_pkts(self.cwnd) * ABE_BETA_ECN_PCT // 100)
        return self.cwnd * float(ABE_BETA_ECN_PCT) / 100.0

    def halved(self) -> float:
        """RFC 5681 eq. (4) on cwnd, or Linux ``tcp_reno_ssthresh``."""
        if self.linux_rules:
            return float(linux_pkts(self.cwnd) >> 1)
        return self.cwnd / 2.0

    def on_ack(self, ack: AckEvent) -> None:
        if self.linux_rules:
            # `tcp_reno_cong_avoid`: helpers.rs `linux_grow`, then the AI.
            w = linux_pkts(self.cwnd)
            if ack.in_recovery or ack.growth_pkts == 0:
                return
            acked = ack.growth_pkts
            if w < linux_pkts(self.ssthresh):
                w, acked = linux_slow_start(w, linux_pkts(self.ssthresh), acked)
            self.cwnd = float(w)
            if acked > 0:
                cwnd, self.cwnd_cnt = linux_cong_avoid_ai(w, self.cwnd_cnt, w, acked)
                self.cwnd = float(cwnd)
            return
        # helpers.rs `grow` with `additive_increase(cwnd, 1.0, delivered)`.
        if ack.in_recovery or ack.growth_pkts == 0:
            return
        delivered = float(ack.growth_pkts)
        if self.cwnd < self.ssthresh:
            # `slow_start`
            room = max(self.ssthresh - self.cwnd, 0.0)
            used = min(delivered, room)
            self.cwnd += used
            delivered = delivered - used
        if delivered > 0.0 and self.cwnd > 0.0:
            self.cwnd += 1.0 * delivered / self.cwnd

    def on_congestion_event(self, loss: LossEvent) -> None:
        self.cwnd = loss.cap(self.cwnd)
        reduced = self.abe_reduced() if loss.alternative_backoff() else self.halved()
        # helpers.rs `reduce`
        self.ssthresh = max(reduced, MIN_SSTHRESH_PKTS)
        self.cwnd = min(self.cwnd, self.ssthresh)
        self.cwnd_cnt = 0

    def on_recovery_exit(self, now_ns: int) -> None:
        self.cwnd = self.ssthresh

    def on_rto(self, rto: RtoEvent) -> None:
        self.cwnd = rto.cap(self.cwnd)
        # helpers.rs `timeout`
        reduced = self.halved()
        if rto.reduce:
            self.ssthresh = max(reduced, MIN_SSTHRESH_PKTS)
        self.cwnd = float(rto.in_flight_pkts) + 1.0
        self.cwnd_cnt = 0
