//! FAST TCP (Jin, Wei, Low, "FAST TCP: motivation, architecture, algorithms,
//! performance", Infocom 2004).
//!
//! Once per round trip the window moves towards the equilibrium where the
//! flow keeps alpha packets queued:
//!
//!   w <- min{ 2w, (1 - gamma) w + gamma (baseRTT/RTT · w + alpha) }
//!
//! (the paper's eq. (1)) with RTT the mean of the round's samples. The
//! fixed point is w = baseRTT/RTT · w + alpha. An increase is spread over the
//! following round's ACKs rather than sent as one burst; a decrease applies
//! at once. Losses are Reno's (halve).
//!
//! Start-up: the update alone adds only gamma·alpha per round while there is
//! no queue, so, like the Caltech implementation, FAST begins in Reno slow
//! start and leaves it at the end of the first round in which its own
//! backlog w (1 - baseRTT/RTT) reaches alpha.

use crate::error::{CcError, CcParams};
use crate::helpers::{grow, reduce, timeout, RoundCounter, MIN_SSTHRESH_PKTS};
use crate::params::ParamReader;
use crate::{AckEvent, CongestionControl, InitialWindow, LossEvent, RtoEvent};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FastConfig {
    /// alpha: packets the flow aims to keep queued (200; set it per path).
    pub alpha_pkts: f64,
    /// gamma: the step towards the target per round trip, in (0, 1] (0.5).
    pub gamma: f64,
}

impl Default for FastConfig {
    fn default() -> Self {
        Self {
            alpha_pkts: 200.0,
            gamma: 0.5,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Fast {
    cfg: FastConfig,
    cwnd: f64,
    ssthresh: f64,
    rounds: RoundCounter,
    base_rtt_ns: u64,
    round_rtt_sum_ns: u128,
    round_rtt_count: u64,
    /// The window the current round is growing towards, and the step per
    /// delivered packet that gets there in one round of ACKs.
    target_pkts: f64,
    step_per_pkt: f64,
    /// In Reno slow start (at the start and after a timeout, below ssthresh).
    slow_start: bool,
}

impl Fast {
    pub fn new(cfg: FastConfig, init: InitialWindow) -> Self {
        Self {
            cfg,
            cwnd: init.cwnd_pkts,
            ssthresh: init.ssthresh_pkts,
            rounds: RoundCounter::default(),
            base_rtt_ns: 0,
            round_rtt_sum_ns: 0,
            round_rtt_count: 0,
            target_pkts: init.cwnd_pkts,
            step_per_pkt: 0.0,
            slow_start: true,
        }
    }

    pub fn from_params(params: &CcParams, init: InitialWindow) -> Result<Self, CcError> {
        let d = FastConfig::default();
        let mut r = ParamReader::new("fast", params);
        let cfg = FastConfig {
            alpha_pkts: r.real("alpha", d.alpha_pkts, 0.0, 1e9)?,
            gamma: r.real("gamma", d.gamma, 1e-6, 1.0)?,
        };
        r.finish()?;
        Ok(Self::new(cfg, init))
    }

    fn in_slow_start(&self) -> bool {
        self.slow_start && self.cwnd < self.ssthresh
    }

    /// The paper's window update for one round with mean RTT `rtt_ns`.
    pub fn update(&self, w: f64, base_rtt_ns: u64, rtt_ns: u64) -> f64 {
        let ratio = base_rtt_ns as f64 / rtt_ns as f64;
        let g = self.cfg.gamma;
        (2.0 * w).min((1.0 - g) * w + g * (ratio * w + self.cfg.alpha_pkts))
    }

    fn end_of_round(&mut self, rtt_ns: u64) {
        if self.in_slow_start() {
            let backlog = self.cwnd * (1.0 - self.base_rtt_ns as f64 / rtt_ns as f64);
            if backlog < self.cfg.alpha_pkts {
                return;
            }
            self.ssthresh = self.cwnd;
        }
        self.slow_start = false;
        let next = self
            .update(self.cwnd, self.base_rtt_ns, rtt_ns)
            .max(MIN_SSTHRESH_PKTS);
        if next <= self.cwnd {
            self.cwnd = next;
            self.target_pkts = next;
            self.step_per_pkt = 0.0;
        } else {
            self.target_pkts = next;
            self.step_per_pkt = (next - self.cwnd) / self.cwnd;
        }
    }
}

impl CongestionControl for Fast {
    fn name(&self) -> &'static str {
        "fast"
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
            self.round_rtt_sum_ns += u128::from(s);
            self.round_rtt_count += 1;
        }
        if self.in_slow_start() {
            let mut cwnd = self.cwnd;
            grow(&mut cwnd, self.ssthresh, ack, |_, _| {});
            self.cwnd = cwnd;
            self.target_pkts = cwnd;
        } else if ack.growth_pkts > 0 && self.cwnd < self.target_pkts {
            let grown = self.cwnd + self.step_per_pkt * f64::from(ack.growth_pkts);
            self.cwnd = grown.min(self.target_pkts);
        }
        if self.rounds.on_ack(ack) {
            let (sum, n) = (
                std::mem::take(&mut self.round_rtt_sum_ns),
                std::mem::take(&mut self.round_rtt_count),
            );
            if !ack.in_recovery && n > 0 {
                self.end_of_round((sum / u128::from(n)) as u64);
            }
        }
    }

    fn on_congestion_event(&mut self, loss: &LossEvent) {
        loss.cap(&mut self.cwnd);
        reduce(self.cwnd / 2.0, &mut self.cwnd, &mut self.ssthresh);
        self.target_pkts = self.cwnd;
        self.step_per_pkt = 0.0;
        self.slow_start = false;
    }

    fn on_recovery_exit(&mut self, _now_ns: u64) {
        self.cwnd = self.ssthresh;
    }

    fn on_rto(&mut self, rto: &RtoEvent) {
        rto.cap(&mut self.cwnd);
        timeout(self.cwnd / 2.0, rto, &mut self.cwnd, &mut self.ssthresh);
        self.target_pkts = self.cwnd;
        self.step_per_pkt = 0.0;
        self.slow_start = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AckTimestamps, RttStats};

    const MS: u64 = 1_000_000;

    #[test]
    fn update_matches_the_paper_formula() {
        let f = Fast::new(FastConfig::default(), InitialWindow::default());
        // w = 1000, baseRTT/RTT = 100/120: 0.5 * 1000 + 0.5 * (833.33 + 200) = 1016.67
        assert!(
            (f.update(1000.0, 100 * MS, 120 * MS)
                - (500.0 + 0.5 * (1000.0 * 100.0 / 120.0 + 200.0)))
                .abs()
                < 1e-9
        );
        // No queue: the 2w cap binds for small windows.
        assert_eq!(f.update(10.0, 100 * MS, 100 * MS), 20.0);
    }

    /// One bottleneck of `capacity` packets per base RTT: the RTT grows
    /// with the queue w - capacity.
    fn converge(alpha: f64, capacity: f64) -> f64 {
        let mut f = Fast::new(
            FastConfig {
                alpha_pkts: alpha,
                gamma: 0.5,
            },
            InitialWindow::default(),
        );
        let base = 100 * MS;
        let mut now = 0;
        for _ in 0..200 {
            let w = f.cwnd();
            let rtt = (base as f64 * (w / capacity).max(1.0)) as u64;
            now += rtt;
            let tag = f.on_send(now, 0, 1500, false);
            f.on_ack(&AckEvent {
                now_ns: now,
                delivered_pkts: w.floor() as u32,
                growth_pkts: w.floor() as u32,
                rtt: RttStats {
                    latest_ns: rtt,
                    min_ns: base,
                    smoothed_ns: rtt,
                },
                rtt_updated: true,
                ts: Some(AckTimestamps {
                    echoed_tag: tag,
                    ..Default::default()
                }),
                ..Default::default()
            });
        }
        f.cwnd()
    }

    #[test]
    fn window_converges_to_the_fixed_point_capacity_plus_alpha() {
        // w* = baseRTT/RTT w* + alpha with RTT = base w*/C gives w* = C + alpha.
        for (alpha, c) in [(200.0, 1000.0), (50.0, 8000.0), (20.0, 100.0)] {
            let w = converge(alpha, c);
            assert!(
                (w - (c + alpha)).abs() < 0.01 * (c + alpha),
                "alpha {alpha}, C {c}: w = {w}"
            );
        }
    }
}
