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

use crate::error::{CcError, CcParams};
use crate::helpers::{grow, reduce, timeout, RoundCounter, MIN_SSTHRESH_PKTS};
use crate::params::ParamReader;
use crate::{AckEvent, CongestionControl, InitialWindow, LossEvent, RtoEvent};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VegasConfig {
    /// Packets queued below which the window grows (2).
    pub alpha_pkts: f64,
    /// Packets queued above which the window shrinks (4).
    pub beta_pkts: f64,
    /// Packets queued at which slow start ends (1).
    pub gamma_pkts: f64,
}

impl Default for VegasConfig {
    fn default() -> Self {
        Self {
            alpha_pkts: 2.0,
            beta_pkts: 4.0,
            gamma_pkts: 1.0,
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
        }
    }

    pub fn from_params(params: &CcParams, init: InitialWindow) -> Result<Self, CcError> {
        let d = VegasConfig::default();
        let mut r = ParamReader::new("vegas", params);
        let cfg = VegasConfig {
            alpha_pkts: r.real("alpha", d.alpha_pkts, 0.0, 1e9)?,
            beta_pkts: r.real("beta", d.beta_pkts, 0.0, 1e9)?,
            gamma_pkts: r.real("gamma", d.gamma_pkts, 0.0, 1e9)?,
        };
        r.finish()?;
        if cfg.alpha_pkts > cfg.beta_pkts {
            return Err(CcError {
                field: "params.alpha".into(),
                message: format!("{} exceeds beta = {}", cfg.alpha_pkts, cfg.beta_pkts),
            });
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

    /// The once-per-round decision, as Linux `tcp_vegas_cong_avoid`.
    fn end_of_round(&mut self, rtt_ns: u64) {
        let diff = Self::diff_pkts(self.cwnd, self.base_rtt_ns, rtt_ns);
        if self.cwnd < self.ssthresh {
            if diff > self.cfg.gamma_pkts {
                // Leave slow start. The paper does not say where the window
                // goes; as Linux, down to the expected window plus one.
                let expected = self.cwnd * self.base_rtt_ns as f64 / rtt_ns as f64;
                self.cwnd = self.cwnd.min(expected + 1.0);
                self.lower_ssthresh_to_cwnd();
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
        }
        // Slow start every other round; congestion avoidance moves once per round.
        if self.cwnd < self.ssthresh && self.rounds.round() & 1 == 0 {
            let mut cwnd = self.cwnd;
            grow(&mut cwnd, self.ssthresh, ack, |_, _| {});
            self.cwnd = cwnd;
        }
        if self.rounds.on_ack(ack) {
            let rtt = std::mem::take(&mut self.round_min_rtt_ns);
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
    }

    fn on_rto(&mut self, rto: &RtoEvent) {
        rto.cap(&mut self.cwnd);
        timeout(self.cwnd / 2.0, rto, &mut self.cwnd, &mut self.ssthresh);
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
