//! CUBIC (RFC 9438; Ha, Rhee, Xu, "CUBIC: a new TCP-friendly high-speed TCP
//! variant", 2008).
//!
//! After a loss the window follows W_cubic(t) = C (t - K)^3 + W_max
//! (RFC 9438 eq. (1)), with K = cbrt((W_max - cwnd_epoch) / C) (eq. (2)): it
//! rises quickly, flattens at the previous maximum W_max, then probes beyond
//! it. In the Reno-friendly region, where a Reno flow with the same loss
//! rate would have a larger window W_est (eq. (4)), cwnd follows W_est.
//!
//! Defaults are RFC 9438's: C = 0.4, beta = 0.7 (the window kept at a loss).
//! The 2008 paper and Linux before 2.6.25 kept 0.8; Linux today uses 717/1024
//! and adds HyStart to slow start, which we do not.

use crate::error::{CcError, CcParams};
use crate::helpers::{grow, reduce, timeout};
use crate::params::ParamReader;
use crate::{AckEvent, CongestionControl, InitialWindow, LossEvent, RtoEvent};

const NS_PER_S: f64 = 1e9;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CubicConfig {
    /// C, packets / s^3 (0.4).
    pub c: f64,
    /// beta_cubic: the fraction of the window kept at a loss (0.7).
    pub beta: f64,
    /// RFC 9438 §4.7 fast convergence.
    pub fast_convergence: bool,
    /// RFC 9438 §4.3 Reno-friendly region.
    pub reno_friendly: bool,
}

impl Default for CubicConfig {
    fn default() -> Self {
        Self {
            c: 0.4,
            beta: 0.7,
            fast_convergence: true,
            reno_friendly: true,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
struct Epoch {
    start_ns: u64,
    /// K in seconds.
    k_s: f64,
    /// The plateau of the cubic: W_max, or cwnd when starting above it.
    origin_pkts: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Cubic {
    cfg: CubicConfig,
    cwnd: f64,
    ssthresh: f64,
    w_max: f64,
    /// cwnd just before the last reduction (RFC 9438 cwnd_prior).
    cwnd_prior: f64,
    w_est: f64,
    epoch: Option<Epoch>,
}

impl Cubic {
    pub fn new(cfg: CubicConfig, init: InitialWindow) -> Self {
        Self {
            cfg,
            cwnd: init.cwnd_pkts,
            ssthresh: init.ssthresh_pkts,
            w_max: 0.0,
            cwnd_prior: 0.0,
            w_est: 0.0,
            epoch: None,
        }
    }

    pub fn from_params(params: &CcParams, init: InitialWindow) -> Result<Self, CcError> {
        let d = CubicConfig::default();
        let mut r = ParamReader::new("cubic", params);
        let cfg = CubicConfig {
            c: r.real_open("c", d.c, 0.0, 1e6)?,
            beta: r.real_open("beta", d.beta, 0.0, 1.0)?,
            fast_convergence: r.flag("fast_convergence", d.fast_convergence)?,
            reno_friendly: r.flag("reno_friendly", d.reno_friendly)?,
        };
        r.finish()?;
        Ok(Self::new(cfg, init))
    }

    /// K of RFC 9438 eq. (2), seconds.
    pub fn k_s(&self, w_max: f64, cwnd_epoch: f64) -> f64 {
        ((w_max - cwnd_epoch).max(0.0) / self.cfg.c).cbrt()
    }

    /// W_cubic(t) of eq. (1), `t_s` seconds into the epoch.
    fn w_cubic(&self, e: &Epoch, t_s: f64) -> f64 {
        self.cfg.c * (t_s - e.k_s).powi(3) + e.origin_pkts
    }

    pub fn w_max(&self) -> f64 {
        self.w_max
    }

    fn avoid(&mut self, ack: &AckEvent, delivered: f64) {
        let epoch = match &self.epoch {
            Some(e) => e.clone(),
            None => {
                // §4.2: a new congestion-avoidance stage starts here.
                let (k_s, origin) = if self.w_max > self.cwnd {
                    (self.k_s(self.w_max, self.cwnd), self.w_max)
                } else {
                    (0.0, self.cwnd)
                };
                self.w_est = self.cwnd;
                let e = Epoch {
                    start_ns: ack.now_ns,
                    k_s,
                    origin_pkts: origin,
                };
                self.epoch = Some(e.clone());
                e
            }
        };
        let t_s = ack.now_ns.saturating_sub(epoch.start_ns) as f64 / NS_PER_S;
        let rtt_s = ack.rtt.smoothed_ns as f64 / NS_PER_S;
        // §4.3, eq. (4): W_est grows by alpha_cubic per RTT; alpha is
        // 3(1 - beta)/(1 + beta) until W_est reaches cwnd_prior, then 1.
        let beta = self.cfg.beta;
        let alpha = if self.w_est >= self.cwnd_prior {
            1.0
        } else {
            3.0 * (1.0 - beta) / (1.0 + beta)
        };
        self.w_est += alpha * delivered / self.cwnd;
        let cubic_now = self.w_cubic(&epoch, t_s);
        if self.cfg.reno_friendly && cubic_now < self.w_est {
            self.cwnd = self.w_est;
            return;
        }
        // §4.4-4.5: aim at W_cubic one RTT ahead, within [cwnd, 1.5 cwnd].
        let target = self
            .w_cubic(&epoch, t_s + rtt_s)
            .clamp(self.cwnd, 1.5 * self.cwnd);
        self.cwnd += (target - self.cwnd) / self.cwnd * delivered;
    }

    fn on_reduction(&mut self) -> f64 {
        // §4.7 fast convergence, then §4.6 multiplicative decrease.
        self.w_max = if self.cfg.fast_convergence && self.cwnd < self.w_max {
            self.cwnd * (1.0 + self.cfg.beta) / 2.0
        } else {
            self.cwnd
        };
        self.cwnd_prior = self.cwnd;
        self.epoch = None;
        self.cwnd * self.cfg.beta
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }
    fn cwnd(&self) -> f64 {
        self.cwnd
    }
    fn ssthresh(&self) -> f64 {
        self.ssthresh
    }

    fn on_ack(&mut self, ack: &AckEvent) {
        let mut cwnd = self.cwnd;
        let mut leftover = 0.0;
        grow(&mut cwnd, self.ssthresh, ack, |_, delivered| {
            leftover = delivered
        });
        self.cwnd = cwnd;
        if leftover > 0.0 {
            self.avoid(ack, leftover);
        }
    }

    fn on_congestion_event(&mut self, loss: &LossEvent) {
        loss.cap(&mut self.cwnd);
        let reduced = self.on_reduction();
        reduce(reduced, &mut self.cwnd, &mut self.ssthresh);
    }

    fn on_recovery_exit(&mut self, _now_ns: u64) {
        self.cwnd = self.ssthresh;
    }

    fn on_rto(&mut self, rto: &RtoEvent) {
        rto.cap(&mut self.cwnd);
        let reduced = if rto.reduce {
            self.on_reduction()
        } else {
            self.ssthresh
        };
        timeout(reduced, rto, &mut self.cwnd, &mut self.ssthresh);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RttStats;

    const MS: u64 = 1_000_000;

    fn ack(now_ns: u64, delivered: u32, rtt_ns: u64) -> AckEvent {
        AckEvent {
            now_ns,
            delivered_pkts: delivered,
            growth_pkts: delivered,
            rtt: RttStats {
                latest_ns: rtt_ns,
                min_ns: rtt_ns,
                smoothed_ns: rtt_ns,
            },
            rtt_updated: true,
            ..Default::default()
        }
    }

    #[test]
    fn k_is_the_cube_root_of_the_reduction_over_c() {
        let c = Cubic::new(CubicConfig::default(), InitialWindow::default());
        // W_max = 1000, cwnd = 700: K = cbrt(300 / 0.4) = cbrt(750) = 9.0856 s
        assert!((c.k_s(1000.0, 700.0) - 9.085_602_964).abs() < 1e-8);
    }

    #[test]
    fn window_follows_the_cubic_and_plateaus_at_w_max() {
        let mut c = Cubic::new(
            CubicConfig {
                reno_friendly: false,
                ..Default::default()
            },
            InitialWindow {
                cwnd_pkts: 1000.0,
                ssthresh_pkts: 1.0,
            },
        );
        c.on_congestion_event(&LossEvent::default());
        assert_eq!((c.cwnd(), c.w_max()), (700.0, 1000.0));
        let rtt = 100 * MS;
        // One window of ACKs per RTT for 20 s.
        let mut now = 0;
        let mut at = Vec::new();
        for _ in 0..200 {
            let acks = c.cwnd() as u32;
            c.on_ack(&ack(now, acks, rtt));
            now += rtt;
            at.push((now, c.cwnd()));
        }
        let k = c.k_s(1000.0, 700.0);
        let w = |t: f64| 0.4 * (t - k).powi(3) + 1000.0;
        for &(t_ns, cwnd) in &at {
            let t = t_ns as f64 / 1e9;
            // After an update at t - RTT aiming at W(t), cwnd = W(t).
            assert!(
                (cwnd - w(t)).abs() < 0.5 + 0.01 * w(t),
                "t = {t}: {cwnd} vs {}",
                w(t)
            );
        }
        // Plateau: near K the window is within 1 % of W_max.
        let near_k = at.iter().find(|(t, _)| *t as f64 / 1e9 >= k).unwrap().1;
        assert!((near_k - 1000.0).abs() < 10.0, "{near_k}");
    }

    #[test]
    fn fast_convergence_lowers_w_max() {
        let mut c = Cubic::new(
            CubicConfig::default(),
            InitialWindow {
                cwnd_pkts: 1000.0,
                ssthresh_pkts: 1.0,
            },
        );
        c.on_congestion_event(&LossEvent::default());
        c.cwnd = 900.0;
        c.on_congestion_event(&LossEvent::default());
        assert_eq!(c.w_max(), 900.0 * 1.7 / 2.0);
        assert_eq!(c.cwnd(), 630.0);
    }

    #[test]
    fn reno_friendly_region_grows_like_aimd_with_alpha_cubic() {
        // Small window, short RTT: the cubic is far slower than Reno.
        let mut c = Cubic::new(
            CubicConfig::default(),
            InitialWindow {
                cwnd_pkts: 100.0,
                ssthresh_pkts: 1.0,
            },
        );
        c.on_congestion_event(&LossEvent::default()); // cwnd 70, W_max 100
        let rtt = 10 * MS;
        let mut now = 0;
        for _ in 0..100 {
            let acks = c.cwnd().round() as u32;
            c.on_ack(&ack(now, acks, rtt));
            now += rtt;
        }
        // alpha = 0.9/1.7 per RTT until W_est reaches 100 (57 RTTs), then 1 per
        // RTT for the other 43: 70 + 57 * 0.5294 + 43 = 143.2.
        assert!((c.cwnd() - 143.2).abs() < 1.5, "{}", c.cwnd());
    }
}
