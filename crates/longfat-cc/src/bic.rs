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
//! `linux_rules = 1` follows Linux's `tcp_bic.c` (6.x) instead: its
//! `bictcp_update` steps towards W_max by a quarter of the distance
//! (`BICTCP_B` 4), by `smooth_part` (20) ACK-windows per packet close to
//! W_max, forgets W_max at a timeout (`bictcp_state` -> `bictcp_reset`) and
//! scales the step by its estimate of packets per ACK (`bictcp_acked`). The
//! `linux` profile also sets its constants `beta` = 1 - 819/1024 and
//! `s_max` = 16 (`max_increment`).

use crate::error::{CcError, CcParams};
use crate::helpers::{additive_increase, grow, reduce, timeout};
use crate::params::{error, Algorithm, Param, ParamReader, Range, Rules, LINUX_RULES};
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
    /// Linux `tcp_bic.c`'s increase rules (see the module doc).
    pub linux_rules: bool,
}

/// Linux `tcp_bic.c` `BICTCP_B`: the binary search goes a quarter of the way.
const LINUX_SEARCH_DIVISOR: f64 = 4.0;
/// Linux `tcp_bic.c` `smooth_part`: within B packets of W_max the window
/// grows B / smooth_part packets per RTT.
const LINUX_SMOOTH_PART: f64 = 20.0;
/// Linux `bictcp_update`: `if (ca->last_max_cwnd == 0 && ca->cnt > 20)
/// ca->cnt = 20`, at least 5 % per RTT while W_max is unknown.
const LINUX_UNKNOWN_W_MAX_CNT: f64 = 20.0;
/// Linux `ACK_RATIO_SHIFT`: `delayed_ack` holds packets per ACK times 16.
const ACK_RATIO_SHIFT: u32 = 4;
/// Linux `bictcp_reset`: `delayed_ack = 2 << ACK_RATIO_SHIFT`.
const INITIAL_DELAYED_ACK: u32 = 2 << ACK_RATIO_SHIFT;

pub const BETA: Param = Param::real(
    "beta",
    "fraction",
    0.125,
    Range::Open(0.0, 1.0),
    "fraction of the window given up at a loss",
    "the BIC paper; Linux keeps BICTCP_BETA_SCALE 819/1024",
)
.under(&[(Rules::Linux, 205.0 / 1024.0)]);
pub const S_MAX: Param = Param::real(
    "s_max",
    "packets per RTT",
    32.0,
    Range::Open(0.0, 1e9),
    "S_max, the largest increase per RTT",
    "the BIC paper; Linux max_increment 16",
)
.under(&[(Rules::Linux, 16.0)]);
pub const S_MIN: Param = Param::real(
    "s_min",
    "packets per RTT",
    0.01,
    Range::Open(0.0, 1e9),
    "S_min, the least increase per RTT",
    "the BIC paper",
);
pub const LOW_WINDOW: Param = Param::real(
    "low_window",
    "packets",
    14.0,
    Range::Closed(0.0, 1e9),
    "Reno at or below this window",
    "the BIC paper; Linux low_window 14",
);
pub const FAST_CONVERGENCE: Param = Param::switch(
    "fast_convergence",
    true,
    "after a loss below the last W_max, aim lower to free bandwidth for new flows",
    "the BIC paper",
);

pub const ALGORITHM: Algorithm = Algorithm {
    name: "bic",
    what: "binary search towards the last window at which it lost",
    paper: "Xu, Harfoush, Rhee, Binary Increase Congestion Control for Fast, Long Distance Networks, Infocom 2004",
    params: &[BETA, S_MAX, S_MIN, LOW_WINDOW, FAST_CONVERGENCE, LINUX_RULES],
    // Checked in `Bic::from_params`.
    constraints: &["s_min <= s_max", "linux_rules = 1 refuses s_min"],
    build: Some(|params, rules, init| Ok(Box::new(Bic::from_params(params, rules, init)?))),
};

impl Default for BicConfig {
    fn default() -> Self {
        Self::read(&ParamReader::defaults(Rules::Rfc))
    }
}

impl BicConfig {
    fn read(r: &ParamReader) -> Self {
        Self {
            beta: r.real(&BETA),
            s_max_pkts: r.real(&S_MAX),
            s_min_pkts: r.real(&S_MIN),
            low_window_pkts: r.real(&LOW_WINDOW),
            fast_convergence: r.flag(&FAST_CONVERGENCE),
            linux_rules: r.flag(&LINUX_RULES),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Bic {
    cfg: BicConfig,
    cwnd: f64,
    ssthresh: f64,
    /// W_max: the window at the last loss (infinite before the first;
    /// under `linux_rules` also after a timeout).
    w_max: f64,
    /// Linux `delayed_ack`: packets per ACK << 4, an integer moving average
    /// (`linux_rules` only).
    delayed_ack: u32,
}

impl Bic {
    pub fn new(cfg: BicConfig, init: InitialWindow) -> Self {
        Self {
            cfg,
            cwnd: init.cwnd_pkts,
            ssthresh: init.ssthresh_pkts,
            w_max: f64::INFINITY,
            delayed_ack: INITIAL_DELAYED_ACK,
        }
    }

    pub fn from_params(
        params: &CcParams,
        rules: Rules,
        init: InitialWindow,
    ) -> Result<Self, CcError> {
        let r = ALGORITHM.check(params, rules)?;
        let cfg = BicConfig::read(&r);
        if cfg.linux_rules && r.given(&S_MIN) {
            return Err(error(
                S_MIN.name,
                format!(
                    "has no effect with {} = 1 (Linux's smooth_part sets the least step)",
                    LINUX_RULES.name
                ),
            ));
        }
        if cfg.s_min_pkts > cfg.s_max_pkts {
            return Err(error(
                S_MIN.name,
                format!("{} exceeds s_max = {}", cfg.s_min_pkts, cfg.s_max_pkts),
            ));
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

    /// Linux `bictcp_update` above the low window: `cnt`, the delivered
    /// packets per one-packet increase, before the packets-per-ACK scaling.
    /// W_max unknown is Linux's `last_max_cwnd == 0`.
    fn linux_cnt(&self, cwnd: f64) -> f64 {
        let b = LINUX_SEARCH_DIVISOR;
        let max_increment = self.cfg.s_max_pkts;
        let w_max = if self.w_max.is_finite() {
            self.w_max
        } else {
            0.0
        };
        let cnt = if cwnd < w_max {
            // binary increase
            let dist = (w_max - cwnd) / b;
            if dist > max_increment {
                cwnd / max_increment
            } else if dist <= 1.0 {
                cwnd * LINUX_SMOOTH_PART / b
            } else {
                cwnd / dist
            }
        } else if cwnd < w_max + b {
            // "slow start AMD linear increase"
            cwnd * LINUX_SMOOTH_PART / b
        } else if cwnd < w_max + max_increment * (b - 1.0) {
            cwnd * (b - 1.0) / (cwnd - w_max)
        } else {
            cwnd / max_increment
        };
        if w_max == 0.0 {
            cnt.min(LINUX_UNKNOWN_W_MAX_CNT)
        } else {
            cnt
        }
    }

    /// Linux `bictcp_update`'s last step: `cnt = (cnt << ACK_RATIO_SHIFT) /
    /// delayed_ack`, at least 1. `tcp_cong_avoid_ai` counts packets, not
    /// ACKs, so a ratio above one packet per ACK speeds the growth up.
    fn linux_increase_per_pkt(&self, cwnd: f64) -> f64 {
        let cnt =
            self.linux_cnt(cwnd) * f64::from(1u32 << ACK_RATIO_SHIFT) / f64::from(self.delayed_ack);
        1.0 / cnt.max(1.0)
    }

    /// Linux `bictcp_acked` (Open state only): `delayed_ack +=
    /// pkts_acked - (delayed_ack >> ACK_RATIO_SHIFT)`, in integers. With one
    /// packet per ACK it settles at 31 from its initial 32, not at 16.
    fn linux_count_ack(&mut self, ack: &AckEvent) {
        if ack.in_recovery || ack.cum_acked_pkts == 0 {
            return;
        }
        self.delayed_ack = (self.delayed_ack + ack.cum_acked_pkts)
            .saturating_sub(self.delayed_ack >> ACK_RATIO_SHIFT);
    }

    pub fn delayed_ack(&self) -> u32 {
        self.delayed_ack
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
        if self.cfg.linux_rules {
            // Linux calls `pkts_acked` before `cong_avoid` for an ACK.
            self.linux_count_ack(ack);
        }
        let this = &*self;
        let low = this.cfg.low_window_pkts;
        let mut cwnd = this.cwnd;
        grow(&mut cwnd, this.ssthresh, ack, |cwnd, delivered| {
            if *cwnd <= low {
                // Linux `bictcp_update`: `cnt = cwnd`, unscaled.
                additive_increase(cwnd, 1.0, delivered);
            } else if this.cfg.linux_rules {
                *cwnd += this.linux_increase_per_pkt(*cwnd) * delivered;
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
        if self.cfg.linux_rules {
            // Linux `bictcp_state(TCP_CA_Loss)` -> `bictcp_reset`, after
            // `tcp_enter_loss` took ssthresh: W_max unknown, ratio 2.
            self.w_max = f64::INFINITY;
            self.delayed_ack = INITIAL_DELAYED_ACK;
        }
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

    /// The `linux` profile's BIC: `linux_rules`, beta 1 - 819/1024, s_max
    /// (`max_increment`) 16.
    fn linux_bic(cwnd: f64) -> Bic {
        let p: CcParams = [
            ("linux_rules", 1.0),
            ("beta", 205.0 / 1024.0),
            ("s_max", 16.0),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), *v))
        .collect();
        Bic::from_params(
            &p,
            Rules::Rfc,
            InitialWindow {
                cwnd_pkts: cwnd,
                ssthresh_pkts: 1.0,
            },
        )
        .unwrap()
    }

    fn acks(b: &mut Bic, n: usize, pkts: u32) {
        for _ in 0..n {
            b.on_ack(&AckEvent {
                delivered_pkts: pkts,
                growth_pkts: pkts,
                cum_acked_pkts: pkts,
                ..Default::default()
            });
        }
    }

    #[test]
    fn linux_rules_follow_tcp_bic() {
        // bictcp_recalc_ssthresh at cwnd 1000: W_max = 1000 (first loss),
        // ssthresh = cwnd * 819/1024 = 799.8046875 (Linux truncates to
        // 799); the paper keeps 1 - 0.125: 875.
        let mut b = linux_bic(1000.0);
        b.on_congestion_event(&LossEvent::default());
        assert_eq!((b.w_max(), b.cwnd()), (1000.0, 819_000.0 / 1024.0));
        let mut paper = bic(1000.0, f64::INFINITY);
        paper.on_congestion_event(&LossEvent::default());
        assert_eq!(paper.cwnd(), 875.0);
        // One ACK of one packet. bictcp_acked first: delayed_ack = 32 + 1 -
        // (32 >> 4) = 31. bictcp_update: dist = (1000 - 799.8) / 4 = 50.05
        // > max_increment 16, so cnt = cwnd / 16, scaled by 16 / 31:
        // the window grows 31 / cwnd (the paper: S_max / cwnd = 32 / 875).
        let w = b.cwnd();
        acks(&mut b, 1, 1);
        assert_eq!(b.delayed_ack(), 31);
        assert!((b.cwnd() - (w + 31.0 / w)).abs() < 1e-12, "{}", b.cwnd());
        // One packet per ACK keeps delayed_ack at 31 (31 + 1 - 1); two per
        // ACK raise it to 32 and keep it there (31 + 2 - 1, 32 + 2 - 2).
        acks(&mut b, 50, 1);
        assert_eq!(b.delayed_ack(), 31);
        acks(&mut b, 1, 2);
        assert_eq!(b.delayed_ack(), 32);
        acks(&mut b, 50, 2);
        assert_eq!(b.delayed_ack(), 32);
        // Within B = 4 packets of W_max: dist = (1000 - 998) / 4 <= 1, cnt =
        // 998 * smooth_part / B = 4990, scaled by 16/32: + 2 * 2 / 4990 for
        // an ACK of two packets (paper: half the distance, 1 per RTT).
        let mut b = linux_bic(998.0);
        b.w_max = 1000.0;
        acks(&mut b, 1, 2);
        assert!((b.cwnd() - (998.0 + 2.0 * 2.0 / 4990.0)).abs() < 1e-12);
        // Max probing 10 packets above W_max (below W_max + 16 * 3): cnt =
        // 1010 * 3 / 10 = 303 (paper: 10 per RTT, cnt = 101).
        let mut b = linux_bic(1010.0);
        b.w_max = 1000.0;
        acks(&mut b, 1, 2);
        assert!((b.cwnd() - (1010.0 + 2.0 * 2.0 / 303.0)).abs() < 1e-12);
        // 100 packets above W_max: linear, cnt = 1100 / 16.
        let mut b = linux_bic(1100.0);
        b.w_max = 1000.0;
        acks(&mut b, 1, 2);
        assert!((b.cwnd() - (1100.0 + 2.0 * 2.0 * 16.0 / 1100.0)).abs() < 1e-12);
    }

    #[test]
    fn linux_rules_timeout_forgets_w_max_and_the_ack_ratio() {
        // bictcp_state(TCP_CA_Loss) -> bictcp_reset: last_max_cwnd = 0,
        // delayed_ack = 32, after ssthresh = 800 * 819/1024 = 639.84375.
        let mut b = linux_bic(800.0);
        b.w_max = 1000.0;
        acks(&mut b, 1, 1);
        assert_eq!(b.delayed_ack(), 31);
        b.cwnd = 800.0;
        b.on_rto(&RtoEvent::first(1));
        assert_eq!((b.cwnd(), b.ssthresh()), (1.0, 639.84375));
        assert_eq!((b.w_max(), b.delayed_ack()), (f64::INFINITY, 32));
        // W_max unknown at cwnd 640 (ssthresh reached): cnt = 640 / 16 = 40,
        // capped at 20 (5 % per RTT); an ACK of two packets keeps the ratio
        // at 32: + 2 * 2 / 20.
        b.cwnd = 640.0;
        acks(&mut b, 1, 2);
        assert!((b.cwnd() - (640.0 + 2.0 * 2.0 / 20.0)).abs() < 1e-12);
        // Below the low window (14), Reno, unscaled: + 2 / 10.
        let mut b = linux_bic(10.0);
        acks(&mut b, 1, 2);
        assert!((b.cwnd() - 10.2).abs() < 1e-12);
    }

    #[test]
    fn linux_rules_refuse_s_min() {
        let p: CcParams = [("linux_rules", 1.0), ("s_min", 0.1)]
            .iter()
            .map(|(k, v)| (k.to_string(), *v))
            .collect();
        let e = Bic::from_params(&p, Rules::Rfc, InitialWindow::default()).unwrap_err();
        assert_eq!(e.field, "params.s_min");
        let p: CcParams = [("linux_rules", 2.0)]
            .iter()
            .map(|(k, v)| (k.to_string(), *v))
            .collect();
        let e = Bic::from_params(&p, Rules::Rfc, InitialWindow::default()).unwrap_err();
        assert_eq!(e.field, "params.linux_rules");
    }

    #[test]
    fn low_window_is_reno() {
        let mut b = bic(10.0, f64::INFINITY);
        b.on_congestion_event(&LossEvent::default());
        assert_eq!(b.cwnd(), 5.0);
    }
}
