//! LTCP, Layered TCP (Bhandarkar, Jain, Reddy; `ltcp.md`).
//!
//! The window behaves as K virtual Reno flows: in congestion avoidance cwnd
//! grows by K per RTT (K/cwnd per ACK, §III), and a loss takes away a fraction
//! beta of it (eq. (4)). Layers are added as cwnd passes the thresholds
//! W_K = K(K+1)(K-1)/6 · W_T (eq. (10)); K = 1 below W_T, where LTCP is TCP.

use crate::error::{CcError, CcParams};
use crate::helpers::{grow, reduce, timeout};
use crate::params::{Algorithm, Param, ParamReader, Range, Rules};
use crate::{AckEvent, CongestionControl, InitialWindow, LossEvent, RtoEvent};

/// The largest layer count considered; W_K at K = 10,000 is ~8e12 · W_T packets.
const MAX_LAYERS: u32 = 10_000;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LtcpConfig {
    /// W_T: the window (packets) at which layering starts (§III: 50).
    pub w_t_pkts: f64,
    /// beta: the fraction of the window given up at a loss when K >= 2 (§IV: 0.15).
    pub beta: f64,
}

/// W_T (§III).
pub const W_T: Param = Param::real(
    "w_t",
    "packets",
    50.0,
    Range::Closed(1.0, 1e9),
    "W_T, the window where layering starts",
    "ltcp.md §III",
);
/// beta (§IV).
pub const BETA: Param = Param::real(
    "beta",
    "fraction",
    0.15,
    Range::Open(0.0, 1.0),
    "window given up at a loss when K >= 2",
    "ltcp.md §IV, eq. (4)",
);

pub const ALGORITHM: Algorithm = Algorithm {
    name: "ltcp",
    what: "layers: +K packets per RTT at layer K, gentler cuts at large windows",
    paper: "Bhandarkar, Jain, Reddy, LTCP: Layered TCP (ltcp.md)",
    params: &[W_T, BETA],
    constraints: &[],
    build: Some(|params, rules, init| {
        Ok(Box::new(Ltcp::new(
            LtcpConfig::from_params(params, rules)?,
            init,
        )))
    }),
};

impl Default for LtcpConfig {
    fn default() -> Self {
        Self::read(&ParamReader::defaults(Rules::Rfc))
    }
}

impl LtcpConfig {
    fn read(r: &ParamReader) -> Self {
        Self {
            w_t_pkts: r.real(&W_T),
            beta: r.real(&BETA),
        }
    }

    pub fn from_params(params: &CcParams, rules: Rules) -> Result<Self, CcError> {
        Ok(Self::read(&ALGORITHM.check(params, rules)?))
    }

    /// W_K, the window at which layer K begins (eq. (10)); W_1 = 0, W_2 = W_T.
    pub fn layer_start_pkts(&self, k: u32) -> f64 {
        let k = f64::from(k);
        k * (k + 1.0) * (k - 1.0) / 6.0 * self.w_t_pkts
    }

    /// delta_K = W_{K+1} - W_K = K(K+1)/2 · W_T (eq. (11)).
    pub fn step_pkts(&self, k: u32) -> f64 {
        let k = f64::from(k);
        k * (k + 1.0) / 2.0 * self.w_t_pkts
    }

    /// The number of layers for a window: K with W_K <= cwnd < W_{K+1} (eq. (1)).
    pub fn layers_for(&self, cwnd_pkts: f64) -> u32 {
        let mut k = 1;
        while k < MAX_LAYERS && cwnd_pkts >= self.layer_start_pkts(k + 1) {
            k += 1;
        }
        k
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Ltcp {
    cfg: LtcpConfig,
    cwnd: f64,
    ssthresh: f64,
    /// K, the current number of layers.
    layers: u32,
}

impl Ltcp {
    pub fn new(cfg: LtcpConfig, init: InitialWindow) -> Self {
        Self {
            cfg,
            cwnd: init.cwnd_pkts,
            ssthresh: init.ssthresh_pkts,
            layers: 1,
        }
    }

    pub fn layers(&self) -> u32 {
        self.layers
    }

    /// The window after a loss. With one layer LTCP "behaves in all respects
    /// similar to TCP" (§IV-B) and halves; with K >= 2 it keeps 1 - beta (eq. (4)).
    fn reduced_window(&self) -> f64 {
        if self.layers <= 1 {
            self.cwnd / 2.0
        } else {
            self.cwnd * (1.0 - self.cfg.beta)
        }
    }
}

impl CongestionControl for Ltcp {
    fn name(&self) -> &'static str {
        "ltcp"
    }
    fn cwnd(&self) -> f64 {
        self.cwnd
    }
    fn ssthresh(&self) -> f64 {
        self.ssthresh
    }

    fn on_ack(&mut self, ack: &AckEvent) {
        let cfg = self.cfg;
        let layers = &mut self.layers;
        let left_slow_start = grow(&mut self.cwnd, self.ssthresh, ack, |cwnd, delivered| {
            // §III: K/cwnd per ACK, i.e. K packets per RTT.
            *cwnd += f64::from(*layers) * delivered / *cwnd;
            // §IV-B pseudo-code: `if (window() >= W_{K+1}) K++`.
            while *layers < MAX_LAYERS && *cwnd >= cfg.layer_start_pkts(*layers + 1) {
                *layers += 1;
            }
        });
        // §IV-B: "When slowstart is exited, the number of layers K is
        // obtained based on the current cwnd."
        if left_slow_start {
            self.layers = self.layers.max(cfg.layers_for(self.cwnd));
        }
    }

    fn on_congestion_event(&mut self, loss: &LossEvent) {
        loss.cap(&mut self.cwnd);
        // A loss in slow start meets the flow with one layer (K = 1 until slow
        // start is exited, §IV-B), so it halves as TCP; K is then derived
        // from the halved window. (Deriving K first and cutting by beta would
        // leave a 2x slow-start overshoot at 1.7x the path's capacity.)
        let in_slow_start = self.cwnd < self.ssthresh;
        if in_slow_start {
            self.layers = 1;
        }
        reduce(self.reduced_window(), &mut self.cwnd, &mut self.ssthresh);
        if in_slow_start {
            self.layers = self.cfg.layers_for(self.cwnd);
            return;
        }
        // §IV-B pseudo-code: `if (window() < W_K) K--`. We recompute K from
        // the window (eq. (1)) instead of stepping down once: the two agree
        // whenever beta < 3/(K+1) (eq. (13)), and outside that range the
        // recomputed K keeps the definition W_K <= cwnd < W_{K+1} true.
        self.layers = self.cfg.layers_for(self.cwnd).min(self.layers);
    }

    fn on_recovery_exit(&mut self, _now_ns: u64) {
        self.cwnd = self.ssthresh;
    }

    /// Timeouts are TCP's (§IV-B: "the rest of the algorithms ... timer
    /// management ... are not modified"): ssthresh takes LTCP's reduced window,
    /// cwnd restarts at one packet with one layer, and K is derived again when
    /// slow start ends.
    fn on_rto(&mut self, rto: &RtoEvent) {
        rto.cap(&mut self.cwnd);
        let reduced = self.reduced_window();
        timeout(reduced, rto, &mut self.cwnd, &mut self.ssthresh);
        self.layers = 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RttStats;

    fn ack(delivered: u32) -> AckEvent {
        AckEvent {
            now_ns: 0,
            delivered_pkts: delivered,
            growth_pkts: delivered,
            cum_acked_pkts: delivered,
            rtt: RttStats {
                latest_ns: 70_000_000,
                min_ns: 70_000_000,
                smoothed_ns: 70_000_000,
            },
            rtt_updated: true,
            ..Default::default()
        }
    }

    fn loss() -> LossEvent {
        LossEvent::default()
    }

    fn ca(cwnd: f64) -> Ltcp {
        let mut l = Ltcp::new(
            LtcpConfig::default(),
            InitialWindow {
                cwnd_pkts: cwnd,
                ssthresh_pkts: 1.0,
            },
        );
        l.layers = LtcpConfig::default().layers_for(cwnd);
        l
    }

    /// The W_K column of the table in the paper's Fig. 2 (W_T = 50).
    const FIG2_W_K: [f64; 25] = [
        0.0, 50.0, 200.0, 500.0, 1000.0, 1750.0, 2800.0, 4200.0, 6000.0, 8250.0, 11000.0, 14300.0,
        18200.0, 22750.0, 28000.0, 34000.0, 40800.0, 48450.0, 57000.0, 66500.0, 77000.0, 88550.0,
        101200.0, 115000.0, 130000.0,
    ];

    #[test]
    fn layer_thresholds_match_fig2_table() {
        let cfg = LtcpConfig::default();
        for (i, &w) in FIG2_W_K.iter().enumerate() {
            assert_eq!(cfg.layer_start_pkts(i as u32 + 1), w, "W_{}", i + 1);
        }
        // eq. (11): delta_K = W_{K+1} - W_K
        for k in 1..25 {
            assert_eq!(
                cfg.step_pkts(k),
                FIG2_W_K[k as usize] - FIG2_W_K[k as usize - 1]
            );
        }
    }

    #[test]
    fn step_sizes_satisfy_the_convergence_condition_eq2() {
        // delta_K1 / K1 > delta_K2 / K2 for K1 > K2 >= 2
        let cfg = LtcpConfig::default();
        for k2 in 2..40 {
            for k1 in k2 + 1..41 {
                assert!(cfg.step_pkts(k1) / f64::from(k1) > cfg.step_pkts(k2) / f64::from(k2));
            }
        }
    }

    #[test]
    fn beta_bound_of_eq13_is_exactly_where_two_layers_would_drop() {
        // A flow that has just entered layer K (cwnd = W_K) and loses: with
        // beta < 3/(K+1) the window stays at or above W_{K-1} (one layer lost).
        let cfg = LtcpConfig::default();
        for k in 3..=18u32 {
            assert!(cfg.beta < 3.0 / f64::from(k + 1));
            let after = cfg.layer_start_pkts(k) * (1.0 - cfg.beta);
            assert!(after >= cfg.layer_start_pkts(k - 1), "K={k}");
            assert_eq!(cfg.layers_for(after), k - 1, "K={k}");
        }
        // Beyond the bound (K = 20: 3/21 < 0.15) the same loss spans two layers.
        assert!(cfg.beta > 3.0 / 21.0);
        let after = cfg.layer_start_pkts(20) * (1.0 - cfg.beta);
        assert!(after < cfg.layer_start_pkts(19));
        assert_eq!(cfg.layers_for(after), 18);
    }

    #[test]
    fn one_loss_drops_at_most_one_layer_in_the_operating_range() {
        // Every window of layers 2..=18 (the paper's range with beta = 0.15).
        let cfg = LtcpConfig::default();
        let top = cfg.layer_start_pkts(19);
        let mut w = cfg.w_t_pkts;
        while w < top {
            let mut l = ca(w);
            let before = l.layers();
            l.on_congestion_event(&loss());
            assert!(
                before - l.layers() <= 1,
                "cwnd {w}: {before} -> {}",
                l.layers()
            );
            assert_eq!(l.cwnd(), w * 0.85);
            w += 7.3;
        }
    }

    #[test]
    fn layer_added_exactly_when_cwnd_reaches_the_next_threshold() {
        // Layer 2 -> 3 at W_3 = 200: per ACK cwnd += 2/cwnd.
        let mut l = ca(199.995);
        assert_eq!(l.layers(), 2);
        l.on_ack(&ack(1)); // 199.995 + 2/199.995 = 200.005
        assert!((l.cwnd() - (199.995 + 2.0 / 199.995)).abs() < 1e-12);
        assert_eq!(l.layers(), 3);
        // Boundary pair: just below W_3 stays at layer 2.
        let mut l = ca(199.98);
        l.on_ack(&ack(1)); // 199.99
        assert!(l.cwnd() < 200.0);
        assert_eq!(l.layers(), 2);
    }

    #[test]
    fn increase_is_k_per_window_of_acks() {
        for (w, k) in [(100.0, 2.0), (600.0, 4.0), (30000.0, 15.0)] {
            let mut l = ca(w);
            assert_eq!(f64::from(l.layers()), k);
            let mut expected: f64 = w;
            for _ in 0..(w as u32) {
                l.on_ack(&ack(1));
                expected += k / expected;
            }
            assert!((l.cwnd() - expected).abs() < 1e-6, "{w}");
            assert!(
                (l.cwnd() - w - k).abs() < 0.01 * k,
                "{w}: +{}",
                l.cwnd() - w
            );
        }
    }

    #[test]
    fn one_layer_is_exactly_tcp() {
        let mut l = ca(30.0);
        let mut r = crate::Reno::new(InitialWindow {
            cwnd_pkts: 30.0,
            ssthresh_pkts: 1.0,
        });
        for i in 0..200 {
            l.on_ack(&ack(1 + i % 2));
            r.on_ack(&ack(1 + i % 2));
            assert_eq!(l.cwnd(), r.cwnd());
        }
        l.on_congestion_event(&loss());
        r.on_congestion_event(&loss());
        assert_eq!((l.cwnd(), l.ssthresh()), (r.cwnd(), r.ssthresh()));
    }

    #[test]
    fn layers_derived_when_slow_start_ends() {
        // Reaching ssthresh = 600 in slow start: W_4 = 500 <= 600 < 1000.
        let mut l = Ltcp::new(
            LtcpConfig::default(),
            InitialWindow {
                cwnd_pkts: 590.0,
                ssthresh_pkts: 600.0,
            },
        );
        assert_eq!(l.layers(), 1);
        l.on_ack(&ack(10));
        assert_eq!(l.cwnd(), 600.0);
        assert_eq!(l.layers(), 4);
        // A loss in slow start at cwnd 1200 halves (one layer) to 600: layer 4.
        let mut l = Ltcp::new(
            LtcpConfig::default(),
            InitialWindow {
                cwnd_pkts: 1200.0,
                ssthresh_pkts: f64::INFINITY,
            },
        );
        l.on_congestion_event(&loss());
        assert_eq!(l.cwnd(), 600.0);
        assert_eq!(l.layers(), 4);
    }

    #[test]
    fn timeout_restarts_with_one_layer() {
        let mut l = ca(2000.0);
        assert_eq!(l.layers(), 6);
        l.on_rto(&RtoEvent::first(0));
        assert_eq!((l.cwnd(), l.ssthresh(), l.layers()), (1.0, 1700.0, 1));
    }
}
