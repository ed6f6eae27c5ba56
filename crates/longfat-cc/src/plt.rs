//! PLT's low-priority control module (LCM): the loss-rate MIMD window rule
//! of Venkataraman, Francis, Guha, Kodialam, Lakshman, Singh, "A
//! priority-layered approach to transport for high bandwidth-delay product
//! networks" (`plt.md`), sect. 3.1.
//!
//! Time is cut into epochs (100 ms in sect. 4.1). At the end of each the
//! LCM computes the epoch's loss rate p from the packets the receiver's
//! feedback settled in it (acknowledged or found lost), folds it into an
//! exponential moving average P, and sets
//!
//! ```text
//! cwnd = cwnd + alpha * n    if P < mu     (n: packets acknowledged in the epoch)
//! cwnd = beta * cwnd         otherwise
//! ```
//!
//! and `cwnd = gamma * cwnd` on a timeout. Defaults from sect. 4.1: alpha
//! 0.1, beta 0.95, gamma 0.75, mu 0.5 %.
//!
//! What the paper leaves open, chosen here and listed in docs/algorithms.md:
//! p = lost / (acknowledged + lost) (the paper's "packets for which the
//! receiver had responded"); an epoch with no feedback leaves P unchanged;
//! the EMA weight (0.25, so one epoch losing 4 mu or more trips the
//! decrease at once). The window may fall below one packet, and then the
//! LCM sends nothing (sect. 4.2: it "cuts back successively till either the
//! LCM window size goes below one or the bottleneck gets under-utilized
//! again (potentially due to a HCM cutback)"); [`LcmRule::restart`] starts
//! it again, with the window the HCM gave up and P forgotten, when the HCM
//! cuts back.
//!
//! The transport around the rule (epochs on its clock, which packets count,
//! the retransmit buffer) is `longfat_sim::plt`. This type never reads a
//! clock.

use crate::params::Algorithm;

/// PLT in the catalogue: a transport (its settings are `[flows.plt]`'s
/// scenario fields, its `params` the HCM's), not a window rule, so the
/// registry does not build it.
pub const ALGORITHM: Algorithm = Algorithm {
    name: "plt",
    what: "Reno at high priority plus a loss-rate MIMD flow at low priority",
    paper: "Venkataraman, Francis, Guha, Kodialam, Lakshman, Singh, A priority-layered approach to transport for high bandwidth-delay product networks (plt.md)",
    params: &[],
    constraints: &[],
    build: None,
};

/// The window a stopped LCM restarts with when the HCM cuts back. The paper
/// (sect. 4.2) says only that the LCM cuts back "till either the LCM window
/// size goes below one or the bottleneck gets under-utilized again
/// (potentially due to a HCM cutback)"; the window it then starts from is
/// not stated (docs/algorithms.md, PLT).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LcmRestart {
    /// The packets the HCM gave up (at least one): the room the cutback
    /// freed at the bottleneck (longfat's reading, the default).
    #[default]
    Freed,
    /// One packet, growing from there by the sect. 3.1 rule.
    One,
}

/// The LCM's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LcmConfig {
    /// Increase factor alpha: packets added per packet acknowledged in an epoch.
    pub alpha: f64,
    /// Decrease factor beta when the loss rate is at or above mu.
    pub beta: f64,
    /// Decrease factor gamma on a timeout.
    pub gamma: f64,
    /// Target loss rate mu (a fraction: 0.005 is 0.5 %).
    pub mu: f64,
    /// Weight of the newest epoch in the moving average P.
    pub ema_weight: f64,
    /// The window a stopped LCM restarts with.
    pub restart: LcmRestart,
}

impl Default for LcmConfig {
    fn default() -> Self {
        Self {
            alpha: 0.1,
            beta: 0.95,
            gamma: 0.75,
            mu: 0.005,
            ema_weight: 0.25,
            restart: LcmRestart::Freed,
        }
    }
}

/// A parameter outside its range: the parameter's name and what is allowed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LcmParamError {
    pub name: &'static str,
    pub message: String,
}

impl LcmConfig {
    /// Checks every parameter's range.
    pub fn validate(&self) -> Result<(), LcmParamError> {
        let open = |name: &'static str, v: f64, lo: f64, hi: f64| {
            if v.is_finite() && v > lo && v < hi {
                Ok(())
            } else {
                Err(LcmParamError {
                    name,
                    message: format!("{v} is out of range; allowed ({lo}, {hi})"),
                })
            }
        };
        let half_open = |name: &'static str, v: f64, lo: f64, hi: f64| {
            if v.is_finite() && v > lo && v <= hi {
                Ok(())
            } else {
                Err(LcmParamError {
                    name,
                    message: format!("{v} is out of range; allowed ({lo}, {hi}]"),
                })
            }
        };
        half_open("alpha", self.alpha, 0.0, 10.0)?;
        open("beta", self.beta, 0.0, 1.0)?;
        open("gamma", self.gamma, 0.0, 1.0)?;
        open("mu", self.mu, 0.0, 1.0)?;
        half_open("ema_weight", self.ema_weight, 0.0, 1.0)?;
        Ok(())
    }
}

/// What the end of one epoch saw and did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EpochOutcome {
    /// The epoch's loss rate p (None: no feedback in the epoch).
    pub loss_rate: Option<f64>,
    /// The moving average P after the epoch.
    pub loss_ema: f64,
    /// True if the window grew (P < mu), false if it shrank.
    pub increased: bool,
}

/// The LCM's window: the sect. 3.1 rule and its per-epoch counters.
#[derive(Clone, Debug)]
pub struct LcmRule {
    cfg: LcmConfig,
    cwnd_pkts: f64,
    loss_ema: f64,
    acked: u64,
    lost: u64,
}

/// The smallest window an LCM starts or restarts with.
pub const LCM_RESTART_WINDOW_PKTS: f64 = 1.0;

impl LcmRule {
    pub fn new(cfg: LcmConfig, initial_window_pkts: f64) -> Self {
        Self {
            cfg,
            cwnd_pkts: initial_window_pkts.max(LCM_RESTART_WINDOW_PKTS),
            loss_ema: 0.0,
            acked: 0,
            lost: 0,
        }
    }

    pub fn config(&self) -> &LcmConfig {
        &self.cfg
    }
    pub fn cwnd(&self) -> f64 {
        self.cwnd_pkts
    }
    /// The moving average P.
    pub fn loss_ema(&self) -> f64 {
        self.loss_ema
    }

    /// The receiver acknowledged `n` LCM packets.
    pub fn on_acked(&mut self, n: u64) {
        self.acked += n;
    }

    /// `n` LCM packets were found lost.
    pub fn on_lost(&mut self, n: u64) {
        self.lost += n;
    }

    /// The epoch ends: sect. 3.1's update, then the counters restart.
    /// `cwnd_limited`: the window limited sending in the epoch; if not (the
    /// receiver window, the host queue or the application did), the window
    /// does not grow, as TCP's cwnd validation (RFC 7661) keeps a window
    /// that is not used from growing without bound.
    pub fn end_epoch(&mut self, cwnd_limited: bool) -> EpochOutcome {
        let (n, lost) = (self.acked, self.lost);
        self.acked = 0;
        self.lost = 0;
        let settled = n + lost;
        let loss_rate = (settled > 0).then(|| lost as f64 / settled as f64);
        if let Some(p) = loss_rate {
            let w = self.cfg.ema_weight;
            self.loss_ema = (1.0 - w) * self.loss_ema + w * p;
        }
        let increased = self.loss_ema < self.cfg.mu;
        self.cwnd_pkts = if increased {
            if cwnd_limited {
                self.cwnd_pkts + self.cfg.alpha * n as f64
            } else {
                self.cwnd_pkts
            }
        } else {
            Self::cut(self.cwnd_pkts, self.cfg.beta)
        };
        EpochOutcome {
            loss_rate,
            loss_ema: self.loss_ema,
            increased,
        }
    }

    /// The LCM's retransmission timer expired: cwnd = gamma * cwnd.
    pub fn on_timeout(&mut self) {
        self.cwnd_pkts = Self::cut(self.cwnd_pkts, self.cfg.gamma);
    }

    /// `cwnd * factor`; below one packet the LCM stops, with window 0 (the
    /// fraction below one would never be sent, and a restart begins at one).
    fn cut(cwnd: f64, factor: f64) -> f64 {
        let c = cwnd * factor;
        if c < 1.0 {
            0.0
        } else {
            c
        }
    }

    /// Below one packet the LCM sends nothing.
    pub fn is_stopped(&self) -> bool {
        self.cwnd_pkts < 1.0
    }

    /// The HCM cut back by `freed_pkts`, so the bottleneck has about that
    /// much room again: a stopped LCM starts over with that window (at
    /// least one packet; with `LcmRestart::One`, one packet) and no loss
    /// history (a P left from the starved epochs would stop it again before
    /// any feedback). A running LCM is left alone.
    pub fn restart(&mut self, freed_pkts: f64) {
        if self.is_stopped() {
            self.cwnd_pkts = match self.cfg.restart {
                LcmRestart::Freed => freed_pkts.max(LCM_RESTART_WINDOW_PKTS),
                LcmRestart::One => LCM_RESTART_WINDOW_PKTS,
            };
            self.loss_ema = 0.0;
            self.acked = 0;
            self.lost = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-9, "{a} != {b}");
    }

    #[test]
    fn defaults_are_the_papers_table() {
        let c = LcmConfig::default();
        assert_eq!((c.alpha, c.beta, c.gamma, c.mu), (0.1, 0.95, 0.75, 0.005));
        c.validate().unwrap();
    }

    #[test]
    fn hand_derived_epochs() {
        // Window 100. Epoch 1: 100 acked, 0 lost: p = 0, P = 0 < mu,
        // cwnd = 100 + 0.1 * 100 = 110.
        let mut r = LcmRule::new(LcmConfig::default(), 100.0);
        r.on_acked(100);
        let o = r.end_epoch(true);
        assert_eq!(o.loss_rate, Some(0.0));
        assert!(o.increased);
        close(r.cwnd(), 110.0);
        // Epoch 2: 108 acked, 2 lost: p = 2/110, P = 0.25 * 2/110 = 0.004545 < 0.005:
        // still an increase, by alpha * n = 10.8.
        r.on_acked(108);
        r.on_lost(2);
        let o = r.end_epoch(true);
        close(o.loss_rate.unwrap(), 2.0 / 110.0);
        close(o.loss_ema, 0.25 * 2.0 / 110.0);
        assert!(o.increased);
        close(r.cwnd(), 120.8);
        // Epoch 3: 119 acked, 1 lost: p = 1/120, P = 0.75 * 0.0045454 + 0.25 / 120
        // = 0.0054924 >= mu: cwnd = 0.95 * 120.8 = 114.76.
        r.on_acked(119);
        r.on_lost(1);
        let o = r.end_epoch(true);
        close(o.loss_ema, 0.75 * (0.25 * 2.0 / 110.0) + 0.25 / 120.0);
        assert!(!o.increased);
        close(r.cwnd(), 0.95 * 120.8);
        // Epoch 4: no feedback: P stays (>= mu), so the window shrinks again.
        let p_before = r.loss_ema();
        let o = r.end_epoch(true);
        assert_eq!(o.loss_rate, None);
        assert_eq!(o.loss_ema, p_before);
        close(r.cwnd(), 0.95 * 0.95 * 120.8);
    }

    #[test]
    fn an_unused_window_does_not_grow() {
        let mut r = LcmRule::new(LcmConfig::default(), 100.0);
        r.on_acked(50);
        assert!(r.end_epoch(false).increased);
        close(r.cwnd(), 100.0);
        r.on_acked(50);
        r.end_epoch(true);
        close(r.cwnd(), 105.0);
    }

    #[test]
    fn the_boundary_p_equal_mu_decreases() {
        // P == mu is "otherwise": the decrease. 1 lost of 200 with weight 1.
        let cfg = LcmConfig {
            ema_weight: 1.0,
            ..LcmConfig::default()
        };
        let mut r = LcmRule::new(cfg, 50.0);
        r.on_acked(199);
        r.on_lost(1);
        assert!(!r.end_epoch(true).increased);
        close(r.cwnd(), 47.5);
        // Just below mu: 1 of 201.
        r.on_acked(200);
        r.on_lost(1);
        assert!(r.end_epoch(true).increased);
        close(r.cwnd(), 47.5 + 20.0);
    }

    #[test]
    fn timeouts_cut_by_gamma_until_the_lcm_stops_and_a_restart_starts_it_fresh() {
        let mut r = LcmRule::new(LcmConfig::default(), 64.0);
        r.on_timeout();
        close(r.cwnd(), 48.0);
        r.restart(10.0);
        close(r.cwnd(), 48.0); // running: left alone
                               // 48 * 0.75^k < 1 from k = 14.
        for _ in 0..13 {
            r.on_timeout();
        }
        assert!(!r.is_stopped(), "{}", r.cwnd());
        r.on_timeout();
        assert!(r.is_stopped(), "{}", r.cwnd());
        assert_eq!(
            r.cwnd(),
            0.0,
            "48 x 0.75^14 = {} is below one packet",
            48.0 * 0.75f64.powi(14)
        );
        // A lossy history would keep it down: P = 0.25 after this epoch.
        r.on_lost(1);
        r.end_epoch(true);
        assert!(r.loss_ema() > 0.2);
        r.restart(0.3);
        close(r.cwnd(), 1.0); // at least one packet
        assert_eq!(r.loss_ema(), 0.0);
        r.on_acked(1);
        assert!(r.end_epoch(true).increased);
        close(r.cwnd(), 1.1);
        for _ in 0..20 {
            r.on_timeout();
        }
        r.restart(250.0); // the HCM gave up 250 packets
        close(r.cwnd(), 250.0);
    }

    #[test]
    fn a_restart_at_one_packet_ignores_what_the_hcm_freed() {
        let cfg = LcmConfig {
            restart: LcmRestart::One,
            ..LcmConfig::default()
        };
        let mut r = LcmRule::new(cfg, 64.0);
        r.restart(250.0);
        close(r.cwnd(), 64.0); // running: left alone, as with the default
        for _ in 0..15 {
            r.on_timeout();
        }
        assert!(r.is_stopped());
        r.on_lost(1);
        r.end_epoch(true);
        r.restart(250.0); // the HCM gave up 250 packets: the LCM starts at one all the same
        close(r.cwnd(), 1.0);
        assert_eq!(r.loss_ema(), 0.0);
        // Then the sect. 3.1 rule: one epoch with no loss adds alpha per packet acknowledged.
        r.on_acked(1);
        assert!(r.end_epoch(true).increased);
        close(r.cwnd(), 1.1);
    }

    #[test]
    fn ranges_name_the_parameter() {
        for (cfg, name) in [
            (
                LcmConfig {
                    alpha: 0.0,
                    ..LcmConfig::default()
                },
                "alpha",
            ),
            (
                LcmConfig {
                    beta: 1.0,
                    ..LcmConfig::default()
                },
                "beta",
            ),
            (
                LcmConfig {
                    gamma: f64::NAN,
                    ..LcmConfig::default()
                },
                "gamma",
            ),
            (
                LcmConfig {
                    mu: 0.0,
                    ..LcmConfig::default()
                },
                "mu",
            ),
            (
                LcmConfig {
                    ema_weight: 1.5,
                    ..LcmConfig::default()
                },
                "ema_weight",
            ),
        ] {
            let e = cfg.validate().unwrap_err();
            assert_eq!(e.name, name);
            assert!(e.message.contains("allowed"), "{}", e.message);
        }
    }
}
