//! TCP Vegas (Brakmo, O'Malley, Peterson, SIGCOMM 1994).
//!
//! Once per round trip Vegas compares the expected rate cwnd/BaseRTT with the
//! actual rate cwnd/RTT; diff = (Expected - Actual) · BaseRTT is the number of
//! its packets queued in the network. Below alpha it adds one packet, above
//! beta it removes one, in between it holds: the flow keeps alpha..beta
//! packets queued. Slow start doubles the window only every other round trip
//! and ends when diff exceeds gamma.
//!
//! RTT per round: the smallest sample of the round (as Linux's `tcp_vegas.c`,
//! which filters out delayed-ACK inflation). ssthresh follows the window as
//! in Linux's `tcp_vegas_cong_avoid`: a decrease (or the slow-start exit)
//! lowers it to cwnd, so the flow stays in congestion avoidance, and every
//! decision lifts it to at least 3/4 cwnd. Losses are Reno's.
//!
//! `linux_rules = 1` follows Linux's `tcp_vegas_cong_avoid` (6.x) where it
//! departs from the paper: diff = cwnd (RTT - BaseRTT) / BaseRTT and the
//! expected window cwnd BaseRTT / RTT, both truncated to whole packets as
//! Linux's integers are; slow start grows on every ACK (`tcp_slow_start`)
//! until a round ends with diff > gamma; a round with at most two RTT samples
//! (`cntRTT <= 2`) ends with a Reno step (`tcp_reno_cong_avoid`) instead of
//! a Vegas decision; a return to the Open state starts the sample count
//! afresh (`tcp_vegas_state` -> `vegas_enable`).

use crate::error::{CcError, CcParams};
use crate::helpers::{additive_increase, grow, reduce, timeout, RoundCounter, MIN_SSTHRESH_PKTS};
use crate::params::{error, Algorithm, Param, ParamReader, Range, Rules, LINUX_RULES};
use crate::{AckEvent, CongestionControl, InitialWindow, LossEvent, RtoEvent};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VegasConfig {
    /// Packets queued below which the window grows (2).
    pub alpha_pkts: f64,
    /// Packets queued above which the window shrinks (4).
    pub beta_pkts: f64,
    /// Packets queued at which slow start ends (1).
    pub gamma_pkts: f64,
    /// Linux `tcp_vegas.c`'s rules (see the module doc).
    pub linux_rules: bool,
}

/// Linux `tcp_vegas_cong_avoid`: `if (vegas->cntRTT <= 2)` Reno, "If we
/// only had 2 samples total ... they're almost certainly delayed ACKs".
const LINUX_MIN_SAMPLES: u32 = 3;

pub const ALPHA: Param = Param::real(
    "alpha",
    "packets",
    2.0,
    Range::Closed(0.0, 1e9),
    "packets queued below which the window grows",
    "Brakmo, O'Malley, Peterson 1994",
);
pub const BETA: Param = Param::real(
    "beta",
    "packets",
    4.0,
    Range::Closed(0.0, 1e9),
    "packets queued above which the window shrinks",
    "Brakmo, O'Malley, Peterson 1994",
);
pub const GAMMA: Param = Param::real(
    "gamma",
    "packets",
    1.0,
    Range::Closed(0.0, 1e9),
    "packets queued at which slow start ends",
    "Brakmo, O'Malley, Peterson 1994",
);

pub const ALGORITHM: Algorithm = Algorithm {
    name: "vegas",
    what: "keeps 2-4 packets queued, from RTT over base RTT",
    paper: "Brakmo, O'Malley, Peterson, TCP Vegas: New Techniques for Congestion Detection and Avoidance, SIGCOMM 1994",
    params: &[ALPHA, BETA, GAMMA, LINUX_RULES],
    // Checked in `Vegas::from_params`.
    constraints: &["alpha <= beta"],
    build: Some(|params, rules, init| Ok(Box::new(Vegas::from_params(params, rules, init)?))),
};

impl Default for VegasConfig {
    fn default() -> Self {
        Self::read(&ParamReader::defaults(Rules::Rfc))
    }
}

impl VegasConfig {
    fn read(r: &ParamReader) -> Self {
        Self {
            alpha_pkts: r.real(&ALPHA),
            beta_pkts: r.real(&BETA),
            gamma_pkts: r.real(&GAMMA),
            linux_rules: r.flag(&LINUX_RULES),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Vegas {
    cfg: VegasConfig,
    cwnd: f64,
    ssthresh: f64,
    rounds: RoundCounter,
    base_rtt_ns: u64,
    round_min_rtt_ns: u64,
    /// RTT samples in the current round (Linux `cntRTT`).
    round_samples: u32,
}

impl Vegas {
    pub fn new(cfg: VegasConfig, init: InitialWindow) -> Self {
        Self {
            cfg,
            cwnd: init.cwnd_pkts,
            ssthresh: init.ssthresh_pkts,
            rounds: RoundCounter::default(),
            base_rtt_ns: 0,
            round_min_rtt_ns: 0,
            round_samples: 0,
        }
    }

    pub fn from_params(
        params: &CcParams,
        rules: Rules,
        init: InitialWindow,
    ) -> Result<Self, CcError> {
        let cfg = VegasConfig::read(&ALGORITHM.check(params, rules)?);
        if cfg.alpha_pkts > cfg.beta_pkts {
            return Err(error(
                ALPHA.name,
                format!("{} exceeds beta = {}", cfg.alpha_pkts, cfg.beta_pkts),
            ));
        }
        Ok(Self::new(cfg, init))
    }

    /// diff = cwnd (RTT - BaseRTT) / RTT, packets queued by this flow.
    pub fn diff_pkts(cwnd: f64, base_rtt_ns: u64, rtt_ns: u64) -> f64 {
        if rtt_ns == 0 {
            return 0.0;
        }
        cwnd * rtt_ns.saturating_sub(base_rtt_ns) as f64 / rtt_ns as f64
    }

    /// Linux `tcp_vegas_cong_avoid`: diff = cwnd (RTT - BaseRTT) / BaseRTT
    /// in integer arithmetic, so whole packets.
    pub fn linux_diff_pkts(cwnd: f64, base_rtt_ns: u64, rtt_ns: u64) -> f64 {
        if base_rtt_ns == 0 {
            return 0.0;
        }
        (cwnd * rtt_ns.saturating_sub(base_rtt_ns) as f64 / base_rtt_ns as f64).floor()
    }

    /// The once-per-round decision, as Linux `tcp_vegas_cong_avoid`. True
    /// when slow start ended here (Linux then does not grow on this ACK).
    fn end_of_round(&mut self, rtt_ns: u64) -> bool {
        let linux = self.cfg.linux_rules;
        let diff = if linux {
            Self::linux_diff_pkts(self.cwnd, self.base_rtt_ns, rtt_ns)
        } else {
            Self::diff_pkts(self.cwnd, self.base_rtt_ns, rtt_ns)
        };
        let mut left_slow_start = false;
        if self.cwnd < self.ssthresh {
            if diff > self.cfg.gamma_pkts {
                // Leave slow start. The paper does not say where the window
                // goes; as Linux, down to the expected window plus one
                // (`target_cwnd`, truncated by `do_div`, + 1).
                let expected = self.cwnd * self.base_rtt_ns as f64 / rtt_ns as f64;
                let expected = if linux { expected.floor() } else { expected };
                self.cwnd = self.cwnd.min(expected + 1.0);
                self.lower_ssthresh_to_cwnd();
                left_slow_start = true;
            }
        } else if diff > self.cfg.beta_pkts {
            self.cwnd -= 1.0;
            // Without this the window sits below ssthresh and the next round
            // takes the slow-start exit above (defect 4).
            self.lower_ssthresh_to_cwnd();
        } else if diff < self.cfg.alpha_pkts {
            self.cwnd += 1.0;
        }
        // Linux: `tp->snd_ssthresh = tcp_current_ssthresh(sk)`, which in the
        // Open state is max(ssthresh, 3/4 cwnd).
        self.ssthresh = self.ssthresh.max(0.75 * self.cwnd);
        left_slow_start
    }

    /// Linux `tcp_vegas_cong_avoid` on one ACK, after `tcp_vegas_pkts_acked`
    /// counted its sample.
    fn linux_on_ack(&mut self, ack: &AckEvent) {
        let round_ended = self.rounds.on_ack(ack);
        let mut grows_in_slow_start = true;
        if round_ended {
            let rtt = std::mem::take(&mut self.round_min_rtt_ns);
            let samples = std::mem::take(&mut self.round_samples);
            if !ack.in_recovery {
                if samples < LINUX_MIN_SAMPLES {
                    // `tcp_reno_cong_avoid`: slow start, or one packet per
                    // window of delivered packets.
                    let mut cwnd = self.cwnd;
                    grow(&mut cwnd, self.ssthresh, ack, |cwnd, delivered| {
                        additive_increase(cwnd, 1.0, delivered)
                    });
                    self.cwnd = cwnd;
                    return;
                }
                grows_in_slow_start = !self.end_of_round(rtt);
            }
        }
        if grows_in_slow_start && self.cwnd < self.ssthresh {
            let mut cwnd = self.cwnd;
            grow(&mut cwnd, self.ssthresh, ack, |_, _| {});
            self.cwnd = cwnd;
        }
    }

    /// Linux `tcp_vegas_state` -> `vegas_enable` on a return to Open (and
    /// `vegas_disable` before it): the round's samples start afresh.
    fn restart_samples(&mut self) {
        self.round_min_rtt_ns = 0;
        self.round_samples = 0;
    }

    /// Linux `snd_ssthresh = tcp_vegas_ssthresh(tp)` = min(ssthresh, cwnd),
    /// after the window's floor of two packets. (Linux clamps cwnd to 2 only
    /// after lowering ssthresh, which can leave ssthresh at 1 when the
    /// window is at its floor; clamping first keeps RFC 5681's floor of 2.)
    fn lower_ssthresh_to_cwnd(&mut self) {
        self.cwnd = self.cwnd.max(MIN_SSTHRESH_PKTS);
        self.ssthresh = self.ssthresh.min(self.cwnd);
    }
}

impl CongestionControl for Vegas {
    fn name(&self) -> &'static str {
        "vegas"
    }
    fn cwnd(&self) -> f64 {
        self.cwnd
    }
    fn ssthresh(&self) -> f64 {
        self.ssthresh
    }

    fn on_send(&mut self, now_ns: u64, _seq: u64, _bytes: u32, _retransmit: bool) -> u32 {
        self.rounds.tag(now_ns)
    }

    fn on_ack(&mut self, ack: &AckEvent) {
        if ack.rtt_updated && ack.rtt.latest_ns > 0 {
            let s = ack.rtt.latest_ns;
            self.base_rtt_ns = if self.base_rtt_ns == 0 {
                s
            } else {
                self.base_rtt_ns.min(s)
            };
            self.round_min_rtt_ns = if self.round_min_rtt_ns == 0 {
                s
            } else {
                self.round_min_rtt_ns.min(s)
            };
            self.round_samples += 1;
        }
        if self.cfg.linux_rules {
            self.linux_on_ack(ack);
            return;
        }
        // Slow start every other round; congestion avoidance moves once per round.
        if self.cwnd < self.ssthresh && self.rounds.round() & 1 == 0 {
            let mut cwnd = self.cwnd;
            grow(&mut cwnd, self.ssthresh, ack, |_, _| {});
            self.cwnd = cwnd;
        }
        if self.rounds.on_ack(ack) {
            let rtt = std::mem::take(&mut self.round_min_rtt_ns);
            self.round_samples = 0;
            if !ack.in_recovery && rtt > 0 {
                self.end_of_round(rtt);
            }
        }
    }

    fn on_congestion_event(&mut self, loss: &LossEvent) {
        loss.cap(&mut self.cwnd);
        reduce(self.cwnd / 2.0, &mut self.cwnd, &mut self.ssthresh);
    }

    fn on_recovery_exit(&mut self, _now_ns: u64) {
        self.cwnd = self.ssthresh;
        if self.cfg.linux_rules {
            self.restart_samples();
        }
    }

    fn on_rto(&mut self, rto: &RtoEvent) {
        rto.cap(&mut self.cwnd);
        timeout(self.cwnd / 2.0, rto, &mut self.cwnd, &mut self.ssthresh);
        if self.cfg.linux_rules {
            self.restart_samples();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AckTimestamps, RttStats};

    const MS: u64 = 1_000_000;

    /// One ACK that closes the current round with an RTT sample.
    fn round_end(v: &mut Vegas, now_ns: u64, rtt_ns: u64) {
        let tag = v.on_send(now_ns, 0, 1500, false);
        v.on_ack(&AckEvent {
            now_ns,
            delivered_pkts: 0,
            growth_pkts: 0,
            rtt: RttStats {
                latest_ns: rtt_ns,
                min_ns: rtt_ns,
                smoothed_ns: rtt_ns,
            },
            rtt_updated: true,
            ts: Some(AckTimestamps {
                echoed_tag: tag,
                ..Default::default()
            }),
            ..Default::default()
        });
    }

    fn ca(cwnd: f64) -> Vegas {
        let mut v = Vegas::new(
            VegasConfig::default(),
            InitialWindow {
                cwnd_pkts: cwnd,
                ssthresh_pkts: 1.0,
            },
        );
        round_end(&mut v, 0, 100 * MS); // BaseRTT = 100 ms, no change (diff 0 < alpha: +1)
        v.cwnd = cwnd;
        v
    }

    /// An ACK of `delivered` packets with an RTT sample; it closes the
    /// current round when `ends_round` (it echoes the round's tag).
    fn sampled_ack(v: &mut Vegas, now_ns: u64, rtt_ns: u64, delivered: u32, ends_round: bool) {
        let tag = v.on_send(now_ns, 0, 1500, false);
        v.on_ack(&AckEvent {
            now_ns,
            delivered_pkts: delivered,
            growth_pkts: delivered,
            rtt: RttStats {
                latest_ns: rtt_ns,
                min_ns: rtt_ns,
                smoothed_ns: rtt_ns,
            },
            rtt_updated: true,
            ts: Some(AckTimestamps {
                echoed_tag: if ends_round { tag } else { u32::MAX },
                ..Default::default()
            }),
            ..Default::default()
        });
    }

    /// A round of `samples` RTT samples of `rtt_ns`, no growth.
    fn linux_round(v: &mut Vegas, now_ns: u64, rtt_ns: u64, samples: u32) {
        for _ in 1..samples {
            sampled_ack(v, now_ns, rtt_ns, 0, false);
        }
        sampled_ack(v, now_ns, rtt_ns, 0, true);
    }

    /// Linux Vegas in congestion avoidance at `cwnd`, BaseRTT 100 ms.
    fn linux_ca(cwnd: f64) -> Vegas {
        let mut v = Vegas::new(
            VegasConfig {
                linux_rules: true,
                ..Default::default()
            },
            InitialWindow {
                cwnd_pkts: cwnd,
                ssthresh_pkts: 1.0,
            },
        );
        linux_round(&mut v, 0, 100 * MS, 1);
        assert_eq!(v.cwnd(), cwnd, "one sample: a Reno step of 0 packets");
        v
    }

    #[test]
    fn linux_diff_is_against_base_rtt_in_whole_packets() {
        // cwnd 100, BaseRTT 100 ms, round minimum 104.5 ms, 3 samples.
        // Linux: diff = 100 * 4.5 / 100 = 4.5, an integer 4, not > beta:
        // hold. The paper: 100 * 4.5 / 104.5 = 4.31 > beta: -1.
        let mut v = linux_ca(100.0);
        linux_round(&mut v, 1, 104_500_000, 3);
        assert_eq!(v.cwnd(), 100.0);
        let mut v = ca(100.0);
        round_end(&mut v, 1, 104_500_000);
        assert_eq!(v.cwnd(), 99.0);
        // 105 ms: Linux 5 > 4: -1; ssthresh min(1, 99) = 1, then
        // tcp_current_ssthresh: max(1, 3/4 * 99) = 74.25.
        let mut v = linux_ca(100.0);
        linux_round(&mut v, 1, 105 * MS, 3);
        assert_eq!((v.cwnd(), v.ssthresh()), (99.0, 74.25));
        assert_eq!(Vegas::linux_diff_pkts(100.0, 100 * MS, 101_999_000), 1.0);
    }

    #[test]
    fn linux_round_with_two_samples_is_a_reno_step() {
        // Round minimum 101 ms: diff 1 < alpha, a Vegas round adds 1. With
        // cntRTT = 2 Linux calls tcp_reno_cong_avoid on the round's last
        // ACK instead: + 1/cwnd for its one packet.
        let mut v = linux_ca(100.0);
        sampled_ack(&mut v, 1, 101 * MS, 0, false);
        sampled_ack(&mut v, 1, 101 * MS, 1, true);
        assert!((v.cwnd() - 100.01).abs() < 1e-12, "{}", v.cwnd());
        let mut v = linux_ca(100.0);
        linux_round(&mut v, 1, 101 * MS, 3);
        assert_eq!(v.cwnd(), 101.0);
        // A return to Open (the end of a recovery) drops the round's count:
        // two samples before it and one after make a Reno round.
        let mut v = linux_ca(100.0);
        v.ssthresh = 100.0;
        sampled_ack(&mut v, 1, 101 * MS, 0, false);
        sampled_ack(&mut v, 1, 101 * MS, 0, false);
        v.on_recovery_exit(1);
        sampled_ack(&mut v, 1, 101 * MS, 1, true);
        assert!((v.cwnd() - 100.01).abs() < 1e-12, "{}", v.cwnd());
    }

    #[test]
    fn linux_slow_start_grows_every_ack_and_exits_on_whole_packets() {
        let mut v = Vegas::new(
            VegasConfig {
                linux_rules: true,
                ..Default::default()
            },
            InitialWindow {
                cwnd_pkts: 4.0,
                ssthresh_pkts: f64::INFINITY,
            },
        );
        let grow = |v: &mut Vegas, delivered| sampled_ack(v, 0, 100 * MS, delivered, false);
        grow(&mut v, 4);
        assert_eq!(v.cwnd(), 8.0);
        linux_round(&mut v, 1, 100 * MS, 1); // round 0 ends (Reno step of 0)
        grow(&mut v, 8); // round 1: Linux grows too (the paper holds)
        assert_eq!(v.cwnd(), 16.0);
        // Round minimum 110 ms with cwnd 16: diff = 16 * 10/100 = 1.6, an
        // integer 1, not > gamma: slow start goes on (the paper: 16 * 10 /
        // 110 = 1.45 > gamma, exit).
        linux_round(&mut v, 2, 110 * MS, 3);
        assert_eq!((v.cwnd(), v.ssthresh()), (16.0, f64::INFINITY));
        // 115 ms: diff = floor(2.4) = 2 > 1: cwnd = min(16, floor(16 * 100 /
        // 115) + 1) = 13 + 1 = 14 and ssthresh = 14.
        linux_round(&mut v, 3, 115 * MS, 3);
        assert_eq!((v.cwnd(), v.ssthresh()), (14.0, 14.0));
    }

    #[test]
    fn diff_thresholds_decide_the_step() {
        // cwnd 100, BaseRTT 100 ms: RTT 101 ms -> diff 0.99 < 2: +1
        let mut v = ca(100.0);
        round_end(&mut v, 1, 101 * MS);
        assert_eq!(v.cwnd(), 101.0);
        // RTT 103 ms -> diff 2.91 in [2, 4]: hold
        let mut v = ca(100.0);
        round_end(&mut v, 1, 103 * MS);
        assert_eq!(v.cwnd(), 100.0);
        // RTT 106 ms -> diff 5.66 > 4: -1
        let mut v = ca(100.0);
        round_end(&mut v, 1, 106 * MS);
        assert_eq!(v.cwnd(), 99.0);
    }

    #[test]
    fn thresholds_pinned_from_both_sides() {
        // diff = alpha exactly (RTT = 100 * 100/98 ms) holds; a hair less grows.
        assert!((Vegas::diff_pkts(100.0, 98 * MS, 100 * MS) - 2.0).abs() < 1e-12);
        let mut v = ca(100.0);
        v.base_rtt_ns = 98 * MS;
        round_end(&mut v, 1, 100 * MS);
        assert_eq!(v.cwnd(), 100.0, "diff == alpha holds");
        let mut v = ca(100.0);
        v.base_rtt_ns = 98 * MS;
        round_end(&mut v, 1, 100 * MS - 1_000);
        assert_eq!(v.cwnd(), 101.0, "diff just below alpha grows");
        // diff = beta exactly holds; just above shrinks.
        let mut v = ca(100.0);
        v.base_rtt_ns = 96 * MS;
        round_end(&mut v, 1, 100 * MS);
        assert_eq!(v.cwnd(), 100.0);
        let mut v = ca(100.0);
        v.base_rtt_ns = 96 * MS;
        round_end(&mut v, 1, 100 * MS + 1_000);
        assert_eq!(v.cwnd(), 99.0);
    }

    /// Defect 4 ("A faithful TCP"): a -1 step in congestion avoidance left
    /// cwnd below ssthresh, so the next round took the slow-start branch and
    /// its gamma exit cut the window to the expected window + 1 (100 -> 99
    /// -> 70.3 here). Linux `tcp_vegas_cong_avoid` lowers ssthresh with cwnd
    /// (`snd_ssthresh = min(snd_ssthresh, cwnd)` after the decrement), so the
    /// flow stays in congestion avoidance and steps down one packet a round.
    #[test]
    fn vegas_decrease_in_avoidance_keeps_cwnd_above_ssthresh() {
        let mut v = Vegas::new(
            VegasConfig::default(),
            InitialWindow {
                cwnd_pkts: 100.0,
                ssthresh_pkts: 100.0,
            },
        );
        // BaseRTT = 70 ms; then, as after a gamma exit, cwnd == ssthresh:
        // congestion avoidance.
        round_end(&mut v, 0, 70 * MS);
        v.cwnd = 100.0;
        v.ssthresh = 100.0;
        // RTT 100 ms over BaseRTT 70 ms: diff = 100 * 30/100 = 30 > beta = 4: -1.
        round_end(&mut v, 1, 100 * MS);
        assert_eq!((v.cwnd(), v.ssthresh()), (99.0, 99.0));
        assert!(v.cwnd() >= v.ssthresh(), "still in congestion avoidance");
        // diff = 99 * 0.3 = 29.7 > 4: -1 again (not the slow-start exit to
        // 99 * 70/100 + 1 = 70.3).
        round_end(&mut v, 2, 100 * MS);
        assert_eq!((v.cwnd(), v.ssthresh()), (98.0, 98.0));
    }

    #[test]
    fn window_floor_is_two_and_ssthresh_keeps_three_quarters_of_cwnd() {
        // beta = 0.5 so that a two-packet window can exceed it: BaseRTT 70 ms,
        // RTT 100 ms, diff = 2 * 0.3 = 0.6 > 0.5: 2 - 1 = 1, clamped to 2
        // (Linux `if (cwnd < 2) cwnd = 2`), ssthresh min(2, 2) = 2.
        let cfg = VegasConfig {
            alpha_pkts: 0.0,
            beta_pkts: 0.5,
            gamma_pkts: 1.0,
            ..Default::default()
        };
        let mut v = Vegas::new(cfg, InitialWindow::default());
        round_end(&mut v, 0, 70 * MS);
        (v.cwnd, v.ssthresh) = (2.0, 2.0);
        round_end(&mut v, 1, 100 * MS);
        assert_eq!((v.cwnd(), v.ssthresh()), (2.0, 2.0));
        // After a loss (ssthresh 50) the window grows in avoidance; Linux's
        // `tcp_current_ssthresh` lifts ssthresh to 3/4 cwnd once that is
        // higher: 101 * 3/4 = 75.75.
        let mut v = ca(100.0);
        v.ssthresh = 50.0;
        round_end(&mut v, 1, 101 * MS); // diff 0.99 < alpha: +1
        assert_eq!((v.cwnd(), v.ssthresh()), (101.0, 75.75));
    }

    #[test]
    fn a_backed_off_timeout_keeps_ssthresh() {
        let mut v = ca(100.0);
        v.ssthresh = 80.0;
        v.on_rto(&RtoEvent::first(1));
        assert_eq!((v.cwnd(), v.ssthresh()), (1.0, 50.0));
        v.on_rto(&RtoEvent::repeat(2, 2));
        assert_eq!((v.cwnd(), v.ssthresh()), (1.0, 50.0));
    }

    #[test]
    fn slow_start_grows_every_other_round_and_ends_past_gamma() {
        let mut v = Vegas::new(
            VegasConfig::default(),
            InitialWindow {
                cwnd_pkts: 4.0,
                ssthresh_pkts: f64::INFINITY,
            },
        );
        let ack = |v: &mut Vegas, delivered| {
            v.on_ack(&AckEvent {
                delivered_pkts: delivered,
                growth_pkts: delivered,
                ts: Some(AckTimestamps {
                    echoed_tag: u32::MAX,
                    ..Default::default()
                }),
                ..Default::default()
            })
        };
        ack(&mut v, 4); // round 0: grows
        assert_eq!(v.cwnd(), 8.0);
        round_end(&mut v, 1, 100 * MS); // -> round 1
        ack(&mut v, 8); // round 1: holds
        assert_eq!(v.cwnd(), 8.0);
        round_end(&mut v, 2, 100 * MS); // -> round 2
        ack(&mut v, 8);
        assert_eq!(v.cwnd(), 16.0);
        // 16 packets at RTT 110 ms over 100 ms: diff 1.45 > gamma: leave slow
        // start at the expected window + 1 = 16 * 100/110 + 1 = 15.545.
        round_end(&mut v, 3, 110 * MS);
        assert!((v.cwnd() - (16.0 * 100.0 / 110.0 + 1.0)).abs() < 1e-9);
        assert_eq!(v.ssthresh(), v.cwnd());
    }
}
