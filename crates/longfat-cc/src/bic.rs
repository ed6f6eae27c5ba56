//! BIC-TCP, binary increase congestion control (Xu, Harfoush, Rhee,
//! "Binary Increase Congestion Control for Fast, Long Distance Networks",
//! Infocom 2004).
//!
//! After a loss the window binary-searches towards the window where the loss
//! happened (W_max): each RTT it moves half the remaining distance, but never
//! more than S_max (additive increase) nor less than S_min. Past W_max it
//! probes for a new maximum with increments that double from S_min ("max
//! probing"). At or below the low window it is Reno.
//!
//! Linux's `tcp_bic.c` (2.6.x) uses different constants: decrease to 0.8
//! (beta = 819/1024), a search divisor B = 4, max increment 16, low window 14,
//! and a smoothed max-probing phase.

use crate::error::{CcError, CcParams};
use crate::helpers::{additive_increase, grow, reduce, timeout};
use crate::params::ParamReader;
use crate::{AckEvent, CongestionControl, InitialWindow, LossEvent, RtoEvent};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BicConfig {
    /// Fraction of the window given up at a loss (paper: 0.125).
    pub beta: f64,
    /// Largest and smallest increment per RTT, packets (paper: 32 and 0.01).
    pub s_max_pkts: f64,
    pub s_min_pkts: f64,
    /// Reno at or below this window (paper: 14 packets).
    pub low_window_pkts: f64,
    /// Lower W_max further when a loss comes before reaching it.
    pub fast_convergence: bool,
}

impl Default for BicConfig {
    fn default() -> Self {
        Self {
            beta: 0.125,
            s_max_pkts: 32.0,
            s_min_pkts: 0.01,
            low_window_pkts: 14.0,
            fast_convergence: true,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Bic {
    cfg: BicConfig,
    cwnd: f64,
    ssthresh: f64,
    /// W_max: the window at the last loss (infinite before the first).
    w_max: f64,
}

impl Bic {
    pub fn new(cfg: BicConfig, init: InitialWindow) -> Self {
        Self {
            cfg,
            cwnd: init.cwnd_pkts,
            ssthresh: init.ssthresh_pkts,
            w_max: f64::INFINITY,
        }
    }

    pub fn from_params(params: &CcParams, init: InitialWindow) -> Result<Self, CcError> {
        let d = BicConfig::default();
        let mut r = ParamReader::new("bic", params);
        let cfg = BicConfig {
            beta: r.real_open("beta", d.beta, 0.0, 1.0)?,
            s_max_pkts: r.real_open("s_max", d.s_max_pkts, 0.0, 1e9)?,
            s_min_pkts: r.real_open("s_min", d.s_min_pkts, 0.0, 1e9)?,
            low_window_pkts: r.real("low_window", d.low_window_pkts, 0.0, 1e9)?,
            fast_convergence: r.flag("fast_convergence", d.fast_convergence)?,
        };
        r.finish()?;
        if cfg.s_min_pkts > cfg.s_max_pkts {
            return Err(CcError {
                field: "params.s_min".into(),
                message: format!("{} exceeds s_max = {}", cfg.s_min_pkts, cfg.s_max_pkts),
            });
        }
        Ok(Self::new(cfg, init))
    }

    pub fn w_max(&self) -> f64 {
        self.w_max
    }

    /// The increment per RTT at window `cwnd` (binary search below W_max,
    /// max probing above, clamped to [S_min, S_max]).
    pub fn increment_per_rtt(&self, cwnd: f64) -> f64 {
        let inc = if cwnd < self.w_max {
            (self.w_max - cwnd) / 2.0
        } else {
            cwnd - self.w_max
        };
        inc.clamp(self.cfg.s_min_pkts, self.cfg.s_max_pkts)
    }

    fn reduced_window(&mut self) -> f64 {
        if self.cwnd <= self.cfg.low_window_pkts {
            self.w_max = self.cwnd;
            return self.cwnd / 2.0;
        }
        self.w_max =
            if self.cfg.fast_convergence && self.w_max.is_finite() && self.cwnd < self.w_max {
                self.cwnd * (2.0 - self.cfg.beta) / 2.0
            } else {
                self.cwnd
            };
        self.cwnd * (1.0 - self.cfg.beta)
    }
}

impl CongestionControl for Bic {
    fn name(&self) -> &'static str {
        "bic"
    }
    fn cwnd(&self) -> f64 {
        self.cwnd
    }
    fn ssthresh(&self) -> f64 {
        self.ssthresh
    }

    fn on_ack(&mut self, ack: &AckEvent) {
        let this = &*self;
        let low = this.cfg.low_window_pkts;
        let mut cwnd = this.cwnd;
        grow(&mut cwnd, this.ssthresh, ack, |cwnd, delivered| {
            if *cwnd <= low {
                additive_increase(cwnd, 1.0, delivered);
            } else {
                let inc = this.increment_per_rtt(*cwnd);
                additive_increase(cwnd, inc, delivered);
            }
        });
        self.cwnd = cwnd;
    }

    fn on_congestion_event(&mut self, loss: &LossEvent) {
        loss.cap(&mut self.cwnd);
        let reduced = self.reduced_window();
        reduce(reduced, &mut self.cwnd, &mut self.ssthresh);
    }

    fn on_recovery_exit(&mut self, _now_ns: u64) {
        self.cwnd = self.ssthresh;
    }

    fn on_rto(&mut self, rto: &RtoEvent) {
        rto.cap(&mut self.cwnd);
        let reduced = if rto.reduce {
            self.reduced_window()
        } else {
            self.ssthresh
        };
        timeout(reduced, rto, &mut self.cwnd, &mut self.ssthresh);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bic(cwnd: f64, w_max: f64) -> Bic {
        let mut b = Bic::new(
            BicConfig::default(),
            InitialWindow {
                cwnd_pkts: cwnd,
                ssthresh_pkts: 1.0,
            },
        );
        b.w_max = w_max;
        b
    }

    fn one_ack(b: &mut Bic) {
        b.on_ack(&AckEvent {
            delivered_pkts: 1,
            growth_pkts: 1,
            ..Default::default()
        });
    }

    #[test]
    fn binary_search_increment_is_half_the_distance_clamped() {
        let b = bic(800.0, 1000.0);
        assert_eq!(
            b.increment_per_rtt(800.0),
            32.0,
            "distance 200: half is 100, clamped to S_max"
        );
        assert_eq!(
            b.increment_per_rtt(990.0),
            5.0,
            "binary search: (1000 - 990) / 2"
        );
        assert_eq!(
            b.increment_per_rtt(999.99),
            0.01,
            "clamped to S_min just below W_max"
        );
        assert_eq!(
            b.increment_per_rtt(1000.0),
            0.01,
            "max probing starts at S_min"
        );
        assert_eq!(
            b.increment_per_rtt(1004.0),
            4.0,
            "max probing: distance above W_max"
        );
        assert_eq!(b.increment_per_rtt(1100.0), 32.0);
    }

    #[test]
    fn per_ack_growth_is_increment_over_cwnd() {
        let mut b = bic(990.0, 1000.0);
        one_ack(&mut b);
        assert!((b.cwnd() - (990.0 + 5.0 / 990.0)).abs() < 1e-12);
    }

    #[test]
    fn binary_search_reaches_w_max_in_logarithmic_rtts() {
        // From 875 (after a loss at 1000): 32, 32, 30.5, 15.25, ... per RTT.
        let mut b = bic(875.0, 1000.0);
        let mut rtts = 0;
        while b.cwnd() < 999.0 {
            let acks = b.cwnd() as u32;
            for _ in 0..acks {
                one_ack(&mut b);
            }
            rtts += 1;
        }
        // S_max = 32 per RTT while the distance exceeds 64 (125 -> 64: ~2
        // RTTs); then, applied per ACK, "half the distance per RTT" decays the
        // distance as 64 e^(-t/2): down to 1 packet after 2 ln 64 = 8.3 RTTs.
        assert!((10..=12).contains(&rtts), "{rtts} RTTs");
    }

    #[test]
    fn loss_sets_w_max_with_fast_convergence() {
        let mut b = bic(1000.0, f64::INFINITY);
        b.on_congestion_event(&LossEvent::default());
        assert_eq!((b.w_max(), b.cwnd()), (1000.0, 875.0));
        // Loss again at 900 < W_max: W_max = 900 (2 - 0.125) / 2 = 843.75.
        b.cwnd = 900.0;
        b.on_congestion_event(&LossEvent::default());
        assert_eq!((b.w_max(), b.cwnd()), (843.75, 787.5));
    }

    #[test]
    fn low_window_is_reno() {
        let mut b = bic(10.0, f64::INFINITY);
        b.on_congestion_event(&LossEvent::default());
        assert_eq!(b.cwnd(), 5.0);
    }
}
