//! eHSTCP, HighSpeed TCP refined with the effective RTT (Sasirekha,
//! Chandrasekar; `ehstcp.md` §3).
//!
//! * Effective RTT (eqs. (1)-(2)): the RTT minus the backward queuing delay,
//!   which TCP timestamps reveal as the backward one-way delay above its
//!   minimum; smoothed with gain 1/8.
//! * Increase: the backlog N_ = (Expected - Actual_) · RTTmin (eqs. (4)-(5))
//!   is binary feedback. Below N* the path is not yet full and the window
//!   grows by HighSpeed's a(w) per RTT; at or above N* by Reno's one packet.
//! * Decrease: by min(beta_eHSTCP, b(w)) with 1 - beta_eHSTCP = RTTmin / eRTT
//!   (eqs. (8)-(9)); with an empty queue beta_eHSTCP = 0 and the loss leaves
//!   the window as it is. For a safety-check phase of 5 RTTmax after a
//!   decrease, a further loss takes HighSpeed's full b(w) (held at 0.1 above
//!   High_Window). The profile's `halve` hint (ns-2) halves instead.
//!
//! The paper is terse; docs/algorithms.md lists what it leaves open and
//! what we chose.

use crate::error::{CcError, CcParams};
use crate::helpers::{grow, reduce, timeout};
use crate::highspeed::{HsResponse, RESPONSE_CONSTRAINTS, RESPONSE_PARAMS};
use crate::params::{Algorithm, Param, ParamReader, Range, Rules};
use crate::{AckEvent, CongestionControl, InitialWindow, LossEvent, RtoEvent};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EhstcpConfig {
    pub resp: HsResponse,
    /// N*: the backlog (packets) at which the increase falls back to Reno's (§4: 10).
    pub n_star_pkts: f64,
    /// The safety-check phase, in RTTmax (§4: 5).
    pub safety_rtts: f64,
    /// EWMA gain for the effective RTT (§3.1: 1/8).
    pub ertt_gain: f64,
}

pub const N_STAR: Param = Param::real(
    "n_star",
    "packets",
    10.0,
    Range::Closed(0.0, 1e9),
    "N*, the backlog at which the increase falls back to Reno's",
    "ehstcp.md §4",
);
pub const SAFETY_RTTS: Param = Param::real(
    "safety_rtts",
    "RTTmax",
    5.0,
    Range::Closed(0.0, 1e6),
    "length of the safety-check phase",
    "ehstcp.md §4",
);
pub const ERTT_GAIN: Param = Param::real(
    "ertt_gain",
    "fraction",
    0.125,
    Range::Closed(1e-6, 1.0),
    "EWMA gain of the effective RTT",
    "ehstcp.md §3.1",
);

pub const ALGORITHM: Algorithm = Algorithm {
    name: "ehstcp",
    what: "HighSpeed TCP scaled down by the one-way queueing delay",
    paper: "Sasirekha, Chandrasekar, eHSTCP: HighSpeed TCP with the effective RTT (ehstcp.md)",
    params: &[
        RESPONSE_PARAMS[0],
        RESPONSE_PARAMS[1],
        RESPONSE_PARAMS[2],
        RESPONSE_PARAMS[3],
        N_STAR,
        SAFETY_RTTS,
        ERTT_GAIN,
    ],
    // Checked in `HsResponse::from_reader`.
    constraints: &RESPONSE_CONSTRAINTS,
    build: Some(|params, rules, init| {
        Ok(Box::new(Ehstcp::new(
            EhstcpConfig::from_params(params, rules)?,
            init,
        )))
    }),
};

impl Default for EhstcpConfig {
    fn default() -> Self {
        Self::from_reader(&ParamReader::defaults(Rules::Rfc)).expect("the defaults fit")
    }
}

impl EhstcpConfig {
    fn from_reader(r: &ParamReader) -> Result<Self, CcError> {
        Ok(Self {
            resp: HsResponse::from_reader(r)?,
            n_star_pkts: r.real(&N_STAR),
            safety_rtts: r.real(&SAFETY_RTTS),
            ertt_gain: r.real(&ERTT_GAIN),
        })
    }

    pub fn from_params(params: &CcParams, rules: Rules) -> Result<Self, CcError> {
        Self::from_reader(&ALGORITHM.check(params, rules)?)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Ehstcp {
    cfg: EhstcpConfig,
    cwnd: f64,
    ssthresh: f64,
    /// min(d_b) of eq. (2) on the raw (offset) clock difference.
    min_backward_raw_ns: Option<i128>,
    /// Smoothed effective RTT (ns); 0 before the first sample.
    ertt_ns: f64,
    rtt_min_ns: u64,
    rtt_max_ns: u64,
    /// Until when a further loss gets HighSpeed's full decrease.
    safety_until_ns: Option<u64>,
}

impl Ehstcp {
    pub fn new(cfg: EhstcpConfig, init: InitialWindow) -> Self {
        Self {
            cfg,
            cwnd: init.cwnd_pkts,
            ssthresh: init.ssthresh_pkts,
            min_backward_raw_ns: None,
            ertt_ns: 0.0,
            rtt_min_ns: 0,
            rtt_max_ns: 0,
            safety_until_ns: None,
        }
    }

    pub fn effective_rtt_ns(&self) -> f64 {
        self.ertt_ns
    }

    /// N_ of eq. (5): (cwnd/RTTmin - cwnd/eRTT) · RTTmin = cwnd (eRTT - RTTmin) / eRTT.
    pub fn backlog_pkts(&self) -> f64 {
        if self.ertt_ns <= 0.0 || self.rtt_min_ns == 0 {
            return 0.0;
        }
        (self.cwnd * (self.ertt_ns - self.rtt_min_ns as f64) / self.ertt_ns).max(0.0)
    }

    /// beta_eHSTCP of eq. (8): 1 - RTTmin / eRTT, in [0, 1].
    pub fn delay_decrease(&self) -> f64 {
        if self.ertt_ns <= 0.0 || self.rtt_min_ns == 0 {
            return 1.0; // no delay information: defer to HighSpeed's b(w)
        }
        (1.0 - self.rtt_min_ns as f64 / self.ertt_ns).clamp(0.0, 1.0)
    }

    /// The fraction a loss takes: eq. (9)'s min(beta_eHSTCP, b(w)), or
    /// HighSpeed's b(w) inside the safety-check phase. With no queue
    /// beta_eHSTCP is 0 and the window stays (the paper read literally; see
    /// docs/algorithms.md). b(w) is held at High_Decrease above High_Window.
    fn decrease_factor(&self, now_ns: u64) -> f64 {
        let b = self.cfg.resp.b(self.cwnd);
        if self.safety_until_ns.is_some_and(|t| now_ns < t) {
            b
        } else {
            // eq. (9)
            self.delay_decrease().min(b)
        }
    }

    fn measure(&mut self, ack: &AckEvent) {
        let rtt = ack.rtt.latest_ns;
        if !ack.rtt_updated || rtt == 0 {
            return;
        }
        self.rtt_min_ns = if self.rtt_min_ns == 0 {
            rtt
        } else {
            self.rtt_min_ns.min(rtt)
        };
        self.rtt_max_ns = self.rtt_max_ns.max(rtt);
        // eqs. (1)-(2): the backward delay is our clock minus the receiver's
        // timestamp; the unknown clock offset cancels in d_b - min(d_b).
        let sample = match ack.ts {
            Some(ts) => {
                let d_b = i128::from(ack.now_ns) - i128::from(ts.receiver_ts_ns);
                let min = *self.min_backward_raw_ns.get_or_insert(d_b);
                let min = min.min(d_b);
                self.min_backward_raw_ns = Some(min);
                let d_bq = (d_b - min) as u64;
                rtt.saturating_sub(d_bq).max(self.rtt_min_ns) as f64
            }
            None => rtt as f64, // no timestamps: eRTT is the RTT
        };
        self.ertt_ns = if self.ertt_ns == 0.0 {
            sample
        } else {
            self.ertt_ns + self.cfg.ertt_gain * (sample - self.ertt_ns)
        };
    }
}

impl CongestionControl for Ehstcp {
    fn name(&self) -> &'static str {
        "ehstcp"
    }
    fn cwnd(&self) -> f64 {
        self.cwnd
    }
    fn ssthresh(&self) -> f64 {
        self.ssthresh
    }

    fn on_ack(&mut self, ack: &AckEvent) {
        self.measure(ack);
        // §3.2: the backlog is binary feedback on whether the path is full.
        let backlogged = self.backlog_pkts() >= self.cfg.n_star_pkts;
        let resp = self.cfg.resp;
        grow(&mut self.cwnd, self.ssthresh, ack, |cwnd, delivered| {
            let a = if backlogged { 1.0 } else { resp.a(*cwnd) };
            *cwnd += a * delivered / *cwnd;
        });
    }

    /// Eq. (9), or ns-2's plain halving when the profile asks for it (a
    /// connection's first reduction, one in slow start: `slowdown()` halves
    /// there before HighSpeed's decrease applies). Either way the
    /// safety-check phase starts.
    fn on_congestion_event(&mut self, loss: &LossEvent) {
        loss.cap(&mut self.cwnd);
        let beta = if loss.halve {
            0.5
        } else {
            self.decrease_factor(loss.now_ns)
        };
        reduce(self.cwnd * (1.0 - beta), &mut self.cwnd, &mut self.ssthresh);
        let phase = (self.cfg.safety_rtts * self.rtt_max_ns as f64).round() as u64;
        self.safety_until_ns = Some(loss.now_ns.saturating_add(phase));
    }

    fn on_recovery_exit(&mut self, _now_ns: u64) {
        self.cwnd = self.ssthresh;
    }

    /// A timeout is HighSpeed's: ssthresh = (1 - b(w)) w (w/2 when the
    /// profile asks for ns-2's halving), cwnd = 1.
    fn on_rto(&mut self, rto: &RtoEvent) {
        rto.cap(&mut self.cwnd);
        let b = if rto.halve {
            0.5
        } else {
            self.cfg.resp.b(self.cwnd)
        };
        let reduced = self.cwnd * (1.0 - b);
        timeout(reduced, rto, &mut self.cwnd, &mut self.ssthresh);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AckTimestamps, RttStats};

    const MS: u64 = 1_000_000;

    /// An ACK on a path with 40 ms base RTT (20 ms each way), `fq` ms of
    /// forward queueing and `bq` ms of backward queueing; the receiver's
    /// clock runs 5 s ahead of ours.
    fn ack(now_ns: u64, fq: u64, bq: u64) -> AckEvent {
        let send = now_ns - (40 + fq + bq) * MS;
        let offset = 5_000 * MS;
        let recv_ts = send + (20 + fq) * MS + offset;
        AckEvent {
            now_ns,
            delivered_pkts: 1,
            growth_pkts: 1,
            cum_acked_pkts: 1,
            rtt: RttStats {
                latest_ns: (40 + fq + bq) * MS,
                min_ns: 40 * MS,
                smoothed_ns: 40 * MS,
            },
            rtt_updated: true,
            ts: Some(AckTimestamps {
                echoed_sender_ts_ns: send,
                receiver_ts_ns: recv_ts,
                echoed_tag: 0,
            }),
            ..Default::default()
        }
    }

    fn ca(cwnd: f64) -> Ehstcp {
        Ehstcp::new(
            EhstcpConfig::default(),
            InitialWindow {
                cwnd_pkts: cwnd,
                ssthresh_pkts: 1.0,
            },
        )
    }

    #[test]
    fn backward_queueing_is_removed_from_the_effective_rtt() {
        let mut e = ca(1000.0);
        e.on_ack(&ack(1_000 * MS, 0, 0));
        assert_eq!(e.effective_rtt_ns(), 40e6);
        // 30 ms of backward queueing: the RTT is 70 ms, the effective RTT 40 ms.
        for i in 0..50 {
            e.on_ack(&ack(2_000 * MS + i, 0, 30));
        }
        assert!(
            (e.effective_rtt_ns() - 40e6).abs() < 1.0,
            "{}",
            e.effective_rtt_ns()
        );
        assert_eq!(e.backlog_pkts(), 0.0);
    }

    #[test]
    fn forward_queueing_is_smoothed_with_gain_one_eighth() {
        let mut e = ca(1000.0);
        e.on_ack(&ack(1_000 * MS, 0, 0));
        e.on_ack(&ack(2_000 * MS, 8, 0)); // sample 48 ms: 40 + (48 - 40)/8 = 41 ms
        assert!((e.effective_rtt_ns() - 41e6).abs() < 1e-6);
        // N_ = cwnd (eRTT - RTTmin) / eRTT, with cwnd grown by one a(w)/w step
        let expected = e.cwnd() * 1.0 / 41.0;
        assert!((e.backlog_pkts() - expected).abs() < 1e-9);
    }

    #[test]
    fn increase_is_highspeed_below_n_star_and_reno_above() {
        let r = HsResponse::default();
        // No queue: HighSpeed's a(w)/w per ACK.
        let mut e = ca(5000.0);
        e.on_ack(&ack(1_000 * MS, 0, 0));
        assert!((e.cwnd() - (5000.0 + r.a(5000.0) / 5000.0)).abs() < 1e-9);
        // A 4 ms forward queue at 5000 packets: N_ ~ 5000 * 4/44 = 455 >= 10: 1/w per ACK.
        let mut e = ca(5000.0);
        e.on_ack(&ack(1_000 * MS, 0, 0));
        e.ertt_ns = 44e6;
        let before = e.cwnd();
        e.on_ack(&ack(1_001 * MS, 4, 0));
        assert!(e.backlog_pkts() >= 10.0);
        assert!((e.cwnd() - (before + 1.0 / before)).abs() < 1e-9);
    }

    #[test]
    fn decrease_is_the_smaller_of_delay_and_highspeed_factors() {
        let r = HsResponse::default();
        // eRTT = 50 ms, RTTmin = 40 ms: beta_e = 0.2; b(10000) = 0.21: take 0.2.
        let mut e = ca(10_000.0);
        e.on_ack(&ack(1_000 * MS, 0, 0));
        e.ertt_ns = 50e6;
        e.cwnd = 10_000.0;
        e.on_congestion_event(&LossEvent {
            now_ns: 2_000 * MS,
            ..Default::default()
        });
        assert!((e.cwnd() - 8000.0).abs() < 1e-9);
        // A second loss inside the safety-check phase (5 RTTmax = 200 ms) takes b(w).
        let w = e.cwnd();
        e.on_congestion_event(&LossEvent {
            now_ns: 2_100 * MS,
            ..Default::default()
        });
        assert!((e.cwnd() - w * (1.0 - r.b(w))).abs() < 1e-9);
        // After the phase (boundary pair: 200 ms after the last loss), delay again.
        let mut e2 = e.clone();
        e2.on_congestion_event(&LossEvent {
            now_ns: 2_299 * MS,
            ..Default::default()
        });
        assert!((e2.cwnd() - e.cwnd() * (1.0 - r.b(e.cwnd()))).abs() < 1e-9);
        let w = e.cwnd();
        e.on_congestion_event(&LossEvent {
            now_ns: 2_300 * MS,
            ..Default::default()
        });
        assert!((e.cwnd() - w * 0.8).abs() < 1e-9);
    }

    /// RFC 3649's b(w) by hand: the log line from (38, 0.5) to (83000, 0.1).
    fn b_by_hand(w: f64) -> f64 {
        0.5 - 0.4 * (w / 38.0).ln() / (83_000f64 / 38.0).ln()
    }

    /// A flow whose every sample saw no queue: eRTT = RTTmin = RTTmax = 40 ms.
    fn empty_queue(cwnd: f64) -> Ehstcp {
        let mut e = ca(cwnd);
        for i in 0..10 {
            e.on_ack(&ack(1_000 * MS + i, 0, 0));
        }
        e.cwnd = cwnd;
        assert_eq!(e.effective_rtt_ns(), 40e6);
        e
    }

    /// Defect 6: eq. (9) takes min(beta_eHSTCP, b(w)), and b(w) went negative
    /// above w = 567,000 (a loss at 700,000 packets raised the window to
    /// 707,650). b is clamped at High_Decrease above High_Window. With a queue
    /// of one RTTmin (eRTT = 80 ms, RTTmin = 40 ms) beta_eHSTCP = 1 - 40/80 =
    /// 0.5, so b(w) = 0.1 decides: cwnd after the loss = w (1 - 0.1).
    #[test]
    fn ehstcp_decrease_is_clamped_above_the_table() {
        for (w, after) in [(700_000.0, 630_000.0), (583_000.0, 524_700.0)] {
            let mut e = ca(w);
            e.on_ack(&ack(1_000 * MS, 0, 0));
            e.ertt_ns = 80e6;
            e.cwnd = w;
            e.on_congestion_event(&LossEvent {
                now_ns: 2_000 * MS,
                ..Default::default()
            });
            e.on_recovery_exit(2_001 * MS);
            assert!(
                (e.ssthresh() - after).abs() < 1e-6 && (e.cwnd() - after).abs() < 1e-6,
                "w = {w}: ssthresh {}, cwnd {}",
                e.ssthresh(),
                e.cwnd()
            );
            // A smaller delay factor still wins below the clamp: eRTT = 40/0.95
            // ms gives beta_eHSTCP = 0.05 < 0.1.
            let mut e = ca(w);
            e.on_ack(&ack(1_000 * MS, 0, 0));
            e.ertt_ns = 40e6 / 0.95;
            e.cwnd = w;
            e.on_congestion_event(&LossEvent {
                now_ns: 2_000 * MS,
                ..Default::default()
            });
            assert!((e.cwnd() - w * 0.95).abs() < 1e-6, "{}", e.cwnd());
        }
    }

    /// Eq. (8)-(9) read literally (§3.2): with no queue eRTT = RTTmin, so
    /// 1 - beta_eHSTCP = RTTmin/eRTT = 1, beta_eHSTCP = 0 and
    /// w <- w - w min(0, b(w)) = w: the loss does not shrink the window.
    #[test]
    fn ehstcp_loss_with_empty_queue_does_not_decrease() {
        let mut e = empty_queue(10_000.0);
        assert_eq!(e.delay_decrease(), 0.0);
        e.on_congestion_event(&LossEvent {
            now_ns: 2_000 * MS,
            ..Default::default()
        });
        assert_eq!((e.cwnd(), e.ssthresh()), (10_000.0, 10_000.0));
        e.on_recovery_exit(2_001 * MS);
        assert_eq!(e.cwnd(), 10_000.0);
    }

    /// The safety-check phase (§4: 5 RTTmax = 5 x 40 ms = 200 ms) follows
    /// every decrease, the zero one included; a second loss inside it takes
    /// HighSpeed's full b(w): 10000 (1 - 0.2101) = 7899.1. A loss after the
    /// phase with the queue still empty again keeps the window.
    #[test]
    fn ehstcp_second_loss_within_safety_phase_decreases() {
        let mut e = empty_queue(10_000.0);
        e.on_congestion_event(&LossEvent {
            now_ns: 2_000 * MS,
            ..Default::default()
        });
        assert_eq!(e.cwnd(), 10_000.0);
        e.on_recovery_exit(2_050 * MS);
        e.on_congestion_event(&LossEvent {
            now_ns: 2_100 * MS,
            ..Default::default()
        });
        let expected = 10_000.0 * (1.0 - b_by_hand(10_000.0));
        assert!((e.cwnd() - expected).abs() < 1e-9, "{}", e.cwnd());
        assert!((e.cwnd() - 7_899.1).abs() < 0.1);
        // The phase restarted at 2100 ms: it ends at 2300 ms.
        e.on_recovery_exit(2_150 * MS);
        let w = e.cwnd();
        e.on_congestion_event(&LossEvent {
            now_ns: 2_300 * MS,
            ..Default::default()
        });
        assert_eq!(e.cwnd(), w);
    }

    #[test]
    fn ehstcp_halves_when_the_profile_asks() {
        let mut e = empty_queue(10_000.0);
        e.on_congestion_event(&LossEvent {
            now_ns: 2_000 * MS,
            halve: true,
            ..Default::default()
        });
        assert_eq!((e.cwnd(), e.ssthresh()), (5_000.0, 5_000.0));
        let mut e = empty_queue(10_000.0);
        e.on_rto(&RtoEvent {
            halve: true,
            ..RtoEvent::first(2_000 * MS)
        });
        assert_eq!((e.cwnd(), e.ssthresh()), (1.0, 5_000.0));
        // Without the hint a timeout is HighSpeed's; a backed-off one keeps it.
        let mut e = empty_queue(10_000.0);
        e.on_rto(&RtoEvent::first(2_000 * MS));
        let expected = 10_000.0 * (1.0 - b_by_hand(10_000.0));
        assert!((e.ssthresh() - expected).abs() < 1e-9);
        e.on_rto(&RtoEvent::repeat(2_100 * MS, 2));
        assert!((e.ssthresh() - expected).abs() < 1e-9);
    }

    #[test]
    fn large_queue_gives_highspeed_decrease() {
        // eRTT = 2 RTTmin: beta_e = 0.5 > b(w): HighSpeed's b(w).
        let r = HsResponse::default();
        let mut e = ca(10_000.0);
        e.on_ack(&ack(1_000 * MS, 0, 0));
        e.ertt_ns = 80e6;
        e.cwnd = 10_000.0;
        e.on_congestion_event(&LossEvent {
            now_ns: 2_000 * MS,
            ..Default::default()
        });
        assert!((e.cwnd() - 10_000.0 * (1.0 - r.b(10_000.0))).abs() < 1e-9);
    }
}
