//! FAST TCP (Jin, Wei, Low, "FAST TCP: motivation, architecture, algorithms,
//! performance", Infocom 2004), as the ns-2 module the papers compared
//! against runs it (tcp-fast.cc, Cui and Andrew, v1.1.3: an add-on to
//! ns-2.35 from CUBIN, not part of the release; docs/algorithms.md).
//!
//! Every other round trip the window moves towards the equilibrium where the
//! flow keeps alpha packets queued:
//!
//!   w <- min{ 2w, (1 - gamma) w + gamma (baseRTT/avgRTT · w + alpha) }
//!
//! (the paper's eq. (1)). avgRTT is ns-2's `avgRTT_`: an EWMA updated on
//! every ACK with gain 1/256, or 3/w when more than 768 packets are in
//! flight (`fast_est_update_avgrtt`). The fixed point is w = baseRTT/avgRTT
//! · w + alpha. An increase is spread over the following round's ACKs; a
//! decrease applies at once.
//!
//! Multiplicative increase ("MI", ns-2's `FAST_ALLOW_MI`): on every ACK whose
//! smoothed queueing delay avgRTT - baseRTT is below `mi_threshold`, the
//! window grows by the packets acknowledged (doubling per round trip)
//! instead: at the start, after a loss and after a timeout alike, whatever
//! ssthresh says. Losses halve (ns-2's `slowdown()`).

use crate::error::{CcError, CcParams};
use crate::helpers::{reduce, timeout, RoundCounter, MIN_SSTHRESH_PKTS};
use crate::params::{Algorithm, Param, ParamReader, Range, Rules};
use crate::{AckEvent, CongestionControl, InitialWindow, LossEvent, RtoEvent};

/// ns-2 `fast_est_update_avgrtt`: with `scale` = packets in flight / 3, the
/// gain is 1/scale when scale > 256, else 1/256.
const AVG_RTT_MIN_SCALE: f64 = 256.0;

fn ms_to_ns(ms: f64) -> u64 {
    (ms * 1e6).round() as u64
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FastConfig {
    /// alpha: packets the flow aims to keep queued (200; set it per path).
    pub alpha_pkts: f64,
    /// gamma: the step towards the target per update, in (0, 1] (0.5).
    pub gamma: f64,
    /// MI while avgRTT - baseRTT is below this (ns-2 `mi_threshold_`; 1.5 ms
    /// as the Caltech FAST group's high-BDP ns-2 test script sets it, since
    /// ns-2.35 ships no Tcl default; 0 turns MI off).
    pub mi_threshold_ns: u64,
}

pub const ALPHA: Param = Param::real(
    "alpha",
    "packets",
    200.0,
    Range::Closed(0.0, 1e9),
    "packets the flow aims to keep queued (set it per path)",
    "Jin, Wei, Low; ns-2 tcp-fast.cc alpha_",
);
pub const GAMMA: Param = Param::real(
    "gamma",
    "fraction",
    0.5,
    Range::Closed(1e-6, 1.0),
    "the step towards the target window per update",
    "Jin, Wei, Low; ns-2 tcp-fast.cc gamma_",
);
pub const MI_THRESHOLD_MS: Param = Param::real(
    "mi_threshold_ms",
    "ms",
    1.5,
    Range::Closed(0.0, 1e6),
    "multiplicative increase while avgRTT - baseRTT is below this; 0 turns MI off",
    "ns-2 tcp-fast.cc mi_threshold_, as the Caltech FAST group's high-BDP script sets it",
);

pub const ALGORITHM: Algorithm = Algorithm {
    name: "fast",
    what: "keeps alpha packets queued, updating the window from the RTT each RTT",
    paper:
        "Jin, Wei, Low, FAST TCP: motivation, architecture, algorithms, performance, Infocom 2004",
    params: &[ALPHA, GAMMA, MI_THRESHOLD_MS],
    constraints: &[],
    build: Some(|params, rules, init| Ok(Box::new(Fast::from_params(params, rules, init)?))),
};

impl Default for FastConfig {
    fn default() -> Self {
        Self::read(&ParamReader::defaults(Rules::Rfc))
    }
}

impl FastConfig {
    fn read(r: &ParamReader) -> Self {
        Self {
            alpha_pkts: r.real(&ALPHA),
            gamma: r.real(&GAMMA),
            mi_threshold_ns: ms_to_ns(r.real(&MI_THRESHOLD_MS)),
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
    /// ns-2 `avgRTT_` (ns); 0 before the first sample.
    avg_rtt_ns: f64,
    /// The window the last update is growing towards, and the step per
    /// delivered packet that gets there in one round of ACKs.
    target_pkts: f64,
    step_per_pkt: f64,
}

impl Fast {
    pub fn new(cfg: FastConfig, init: InitialWindow) -> Self {
        Self {
            cfg,
            cwnd: init.cwnd_pkts,
            ssthresh: init.ssthresh_pkts,
            rounds: RoundCounter::default(),
            base_rtt_ns: 0,
            avg_rtt_ns: 0.0,
            target_pkts: init.cwnd_pkts,
            step_per_pkt: 0.0,
        }
    }

    pub fn from_params(
        params: &CcParams,
        rules: Rules,
        init: InitialWindow,
    ) -> Result<Self, CcError> {
        let cfg = FastConfig::read(&ALGORITHM.check(params, rules)?);
        Ok(Self::new(cfg, init))
    }

    /// ns-2 `avgRTT_`, in ns (0 before the first sample).
    pub fn avg_rtt_ns(&self) -> f64 {
        self.avg_rtt_ns
    }

    /// The paper's window update with smoothed RTT `avg_rtt_ns`.
    pub fn update(&self, w: f64, base_rtt_ns: u64, avg_rtt_ns: f64) -> f64 {
        let ratio = base_rtt_ns as f64 / avg_rtt_ns;
        let g = self.cfg.gamma;
        (2.0 * w).min((1.0 - g) * w + g * (ratio * w + self.cfg.alpha_pkts))
    }

    /// ns-2 `fast_est`: baseRTT is the smallest sample, avgRTT an EWMA of
    /// all of them with gain 1/max(256, in-flight/3).
    fn measure(&mut self, ack: &AckEvent) {
        let s = ack.rtt.latest_ns;
        if !ack.rtt_updated || s == 0 {
            return;
        }
        self.base_rtt_ns = if self.base_rtt_ns == 0 {
            s
        } else {
            self.base_rtt_ns.min(s)
        };
        if self.avg_rtt_ns == 0.0 {
            self.avg_rtt_ns = s as f64;
        } else {
            let scale = (f64::from(ack.in_flight_pkts) / 3.0).max(AVG_RTT_MIN_SCALE);
            self.avg_rtt_ns += (s as f64 - self.avg_rtt_ns) / scale;
        }
    }

    /// ns-2 `fast_cc`'s MI test: the smoothed queueing delay is small. Before
    /// the first sample there is no queue to see (ns-2 starts with avgRTT_ =
    /// baseRTT_).
    fn in_mi(&self) -> bool {
        self.avg_rtt_ns == 0.0
            || self.avg_rtt_ns - (self.base_rtt_ns as f64) < self.cfg.mi_threshold_ns as f64
    }

    /// The every-other-round update (ns-2 `fast_calc_cwnd`, floored at two
    /// packets as there): a decrease at once, an increase spread over the
    /// next round.
    fn update_window(&mut self) {
        if self.avg_rtt_ns == 0.0 || self.base_rtt_ns == 0 {
            return; // ns-2 `fast_calc_cwnd` keeps the window without samples
        }
        let next = self
            .update(self.cwnd, self.base_rtt_ns, self.avg_rtt_ns)
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

    /// After a reduction nothing is pending.
    fn settle(&mut self) {
        self.target_pkts = self.cwnd;
        self.step_per_pkt = 0.0;
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
        let round_ended = self.rounds.on_ack(ack);
        // ns-2 neither measures nor moves the window in fast recovery.
        if ack.in_recovery {
            return;
        }
        self.measure(ack);
        let grown = f64::from(ack.growth_pkts);
        if self.in_mi() {
            // ns-2 `fast_cc`: cwnd_++ per ACK, and no update on this ACK.
            self.cwnd += grown;
            return;
        }
        if grown > 0.0 && self.cwnd < self.target_pkts {
            self.cwnd = (self.cwnd + self.step_per_pkt * grown).min(self.target_pkts);
        }
        // Rounds 1, 3, 5, ... end with an update; the others only measure
        // (ns-2 `on_first_rtt_`, UPDATE_CWND_EVERY_OTHER_RTT).
        if round_ended && self.rounds.round().is_multiple_of(2) {
            self.update_window();
        }
    }

    /// ns-2 `dupack_action` -> `slowdown(CLOSE_SSTHRESH_HALF|CLOSE_CWND_HALF)`.
    fn on_congestion_event(&mut self, loss: &LossEvent) {
        loss.cap(&mut self.cwnd);
        reduce(self.cwnd / 2.0, &mut self.cwnd, &mut self.ssthresh);
        self.settle();
    }

    fn on_recovery_exit(&mut self, _now_ns: u64) {
        self.cwnd = self.ssthresh;
        self.settle();
    }

    /// ns-2 `timeout()`: ssthresh halves; cwnd restarts from one packet (ns-2
    /// then sets `slowstart_` = 2; the interface restarts every algorithm
    /// from one, and MI's first ACK makes it two).
    fn on_rto(&mut self, rto: &RtoEvent) {
        rto.cap(&mut self.cwnd);
        timeout(self.cwnd / 2.0, rto, &mut self.cwnd, &mut self.ssthresh);
        self.settle();
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
            (f.update(1000.0, 100 * MS, 120e6) - (500.0 + 0.5 * (1000.0 * 100.0 / 120.0 + 200.0)))
                .abs()
                < 1e-9
        );
        // No queue: the 2w cap binds for small windows.
        assert_eq!(f.update(10.0, 100 * MS, 100e6), 20.0);
    }

    /// One ACK of `growth` packets carrying an RTT sample of `rtt_ns`;
    /// it closes the current round when `ends_round`.
    fn ack(f: &mut Fast, now_ns: u64, rtt_ns: u64, ends_round: bool, growth: u32, flight: u32) {
        let tag = f.on_send(now_ns, 0, 1500, false);
        f.on_ack(&AckEvent {
            now_ns,
            delivered_pkts: growth,
            growth_pkts: growth,
            cum_acked_pkts: growth,
            in_flight_pkts: flight,
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

    fn at(cwnd: f64) -> Fast {
        Fast::new(
            FastConfig::default(),
            InitialWindow {
                cwnd_pkts: cwnd,
                ssthresh_pkts: 1.0,
            },
        )
    }

    /// Defect 9 ("A faithful TCP"): the update used the mean RTT of the round
    /// just ended and ran every round. ns-2's FAST (tcp-fast.cc, Cui and
    /// Andrew for the FAST authors) keeps avgRTT, an EWMA updated on every
    /// ACK with gain 1/256 (3/w above 768 packets in flight), and updates the
    /// window every other RTT (UPDATE_CWND_EVERY_OTHER_RTT).
    #[test]
    fn fast_uses_smoothed_rtt_and_updates_every_other_rtt() {
        let mut f = at(1000.0);
        // baseRTT = avgRTT = 100 ms (first sample).
        ack(&mut f, 1, 100 * MS, false, 0, 600);
        // avgRTT = 100 + (612 - 100)/256 = 102 ms. Round 0 ends: no update
        // (the old per-round mean, 356 ms, cut the window to 740).
        ack(&mut f, 2, 612 * MS, true, 0, 600);
        assert_eq!(f.cwnd(), 1000.0);
        // avgRTT stays 102 ms; 2 ms of queueing is above the 1.5 ms MI
        // threshold. Round 1 ends: update with avgRTT = 102 ms:
        // 0.5 * 1000 + 0.5 * (1000 * 100/102 + 200) = 1090.196, an increase,
        // spread over the next round's packets.
        ack(&mut f, 3, 102 * MS, true, 0, 600);
        assert_eq!(f.cwnd(), 1000.0);
        let w1: f64 = 0.5 * 1000.0 + 0.5 * (1000.0 * 100.0 / 102.0 + 200.0);
        assert!((w1 - 1090.196).abs() < 1e-3);
        ack(&mut f, 4, 102 * MS, false, 500, 600);
        assert!((f.cwnd() - (1000.0 + (w1 - 1000.0) / 2.0)).abs() < 1e-9);
        ack(&mut f, 5, 102 * MS, false, 500, 600);
        assert!((f.cwnd() - w1).abs() < 1e-9);
        // Round 2 ends: no update.
        ack(&mut f, 6, 102 * MS, true, 0, 600);
        assert!((f.cwnd() - w1).abs() < 1e-9);
        // Round 3 ends: 0.5 w1 + 0.5 (w1 * 100/102 + 200) = 1179.508.
        ack(&mut f, 7, 102 * MS, true, 0, 600);
        let w2: f64 = 0.5 * w1 + 0.5 * (w1 * 100.0 / 102.0 + 200.0);
        assert!((w2 - 1179.508).abs() < 1e-3);
        ack(&mut f, 8, 102 * MS, false, 1100, 600);
        assert!((f.cwnd() - w2).abs() < 1e-9, "{}", f.cwnd());
    }

    /// ns-2's FAST has no slow-start phase that ends once: every ACK whose
    /// smoothed queueing delay avgRTT - baseRTT is below mi_threshold_ adds
    /// one packet (multiplicative increase, "MI"), at the start, after a
    /// loss and after a timeout, whatever ssthresh says.
    #[test]
    fn fast_reenters_multiplicative_increase_after_a_loss() {
        let mut f = at(1000.0);
        ack(&mut f, 1, 100 * MS, false, 0, 600);
        f.on_congestion_event(&LossEvent::default());
        f.on_recovery_exit(2);
        assert_eq!((f.cwnd(), f.ssthresh()), (500.0, 500.0));
        // avgRTT = 100 + 0.5/256 ms: 0.002 ms of queueing < 1.5 ms: +1 per packet.
        ack(&mut f, 3, 100 * MS + MS / 2, false, 1, 600);
        assert_eq!(f.cwnd(), 501.0);
        ack(&mut f, 4, 100 * MS, false, 3, 600);
        assert_eq!(f.cwnd(), 504.0);
        // Boundary pair: avgRTT = 100 + (484 - 100)/256 = 101.5 ms, exactly
        // the 1.5 ms threshold: no MI; a sample 1 us less: MI.
        let mut f = at(500.0);
        ack(&mut f, 1, 100 * MS, false, 0, 600);
        ack(&mut f, 2, 484 * MS, false, 0, 600);
        ack(&mut f, 3, 101_500_000, false, 1, 600);
        assert_eq!(f.cwnd(), 500.0);
        let mut f = at(500.0);
        ack(&mut f, 1, 100 * MS, false, 0, 600);
        ack(&mut f, 2, 484 * MS - 1_000, false, 0, 600);
        ack(&mut f, 3, 101_500_000, false, 1, 600);
        assert_eq!(f.cwnd(), 501.0);
    }

    /// After a timeout: ssthresh halves (on an expiry that reduces), cwnd
    /// restarts from one packet, and MI grows it past ssthresh while the
    /// smoothed queue is small; with a standing queue it does not (the
    /// window then moves only by the every-other-RTT update).
    #[test]
    fn fast_reenters_multiplicative_increase_after_a_timeout() {
        let mut f = at(10.0);
        ack(&mut f, 1, 100 * MS, false, 0, 10);
        f.on_rto(&RtoEvent::first(2));
        assert_eq!((f.cwnd(), f.ssthresh()), (1.0, 5.0));
        f.on_rto(&RtoEvent::repeat(3, 2));
        assert_eq!((f.cwnd(), f.ssthresh()), (1.0, 5.0));
        ack(&mut f, 4, 100 * MS, false, 8, 1);
        assert_eq!(f.cwnd(), 9.0, "MI is not bounded by ssthresh");
        // A standing queue: avgRTT = 100 + (612 - 100)/256 = 102 ms.
        let mut f = at(10.0);
        ack(&mut f, 1, 100 * MS, false, 0, 10);
        ack(&mut f, 2, 612 * MS, false, 0, 10);
        f.on_rto(&RtoEvent::first(3));
        ack(&mut f, 4, 102 * MS, false, 8, 1);
        assert_eq!(f.cwnd(), 1.0);
    }

    /// The smoothing gain is 1/256 up to 768 packets in flight and 3/flight
    /// above (ns-2 `fast_est_update_avgrtt`, scale = flight/3).
    #[test]
    fn avg_rtt_gain_is_one_in_256_or_three_per_window() {
        let mut f = at(1000.0);
        ack(&mut f, 1, 100 * MS, false, 0, 768);
        assert_eq!(f.avg_rtt_ns(), 100e6);
        // 768 in flight: scale 256: 100 + (356 - 100)/256 = 101 ms.
        ack(&mut f, 2, 356 * MS, false, 0, 768);
        assert!((f.avg_rtt_ns() - 101e6).abs() < 1e-6);
        // 1500 in flight: scale 500: 101 + (601 - 101)/500 = 102 ms.
        ack(&mut f, 3, 601 * MS, false, 0, 1500);
        assert!((f.avg_rtt_ns() - 102e6).abs() < 1e-6);
        // Samples in fast recovery are not taken (ns-2 skips fast_est there).
        f.on_ack(&AckEvent {
            in_recovery: true,
            rtt: RttStats {
                latest_ns: 900 * MS,
                ..Default::default()
            },
            rtt_updated: true,
            ..Default::default()
        });
        assert!((f.avg_rtt_ns() - 102e6).abs() < 1e-6);
    }

    #[test]
    fn mi_threshold_is_a_parameter_in_ms() {
        let p: CcParams = [("mi_threshold_ms".to_string(), 0.75)]
            .into_iter()
            .collect();
        let f = Fast::from_params(&p, Rules::Rfc, InitialWindow::default()).unwrap();
        assert_eq!(f.cfg.mi_threshold_ns, 750_000);
        let p: CcParams = [("mi_threshold_ms".to_string(), -1.0)]
            .into_iter()
            .collect();
        let e = Fast::from_params(&p, Rules::Rfc, InitialWindow::default()).unwrap_err();
        assert_eq!(e.field, "params.mi_threshold_ms");
        // 0 turns MI off: from an empty queue only the update moves the window.
        let mut f = Fast::new(
            FastConfig {
                mi_threshold_ns: 0,
                ..FastConfig::default()
            },
            InitialWindow {
                cwnd_pkts: 10.0,
                ssthresh_pkts: f64::INFINITY,
            },
        );
        ack(&mut f, 1, 100 * MS, false, 4, 10);
        assert_eq!(f.cwnd(), 10.0);
    }

    /// One bottleneck of `capacity` packets per base RTT of 100 ms: the RTT
    /// of a round grows with the queue w - capacity. Every packet is ACKed
    /// on its own; the last ACK of a round closes it.
    fn converge(alpha: f64, capacity: f64) -> f64 {
        let mut f = Fast::new(
            FastConfig {
                alpha_pkts: alpha,
                ..FastConfig::default()
            },
            InitialWindow::default(),
        );
        let base = 100 * MS;
        let mut now = 0;
        for _ in 0..300 {
            let w = f.cwnd();
            let rtt = (base as f64 * (w / capacity).max(1.0)) as u64;
            now += rtt;
            let n = (w.floor() as u32).max(1);
            for i in 0..n {
                ack(&mut f, now, rtt, i + 1 == n, 1, n);
            }
        }
        f.cwnd()
    }

    #[test]
    fn window_converges_to_the_fixed_point_capacity_plus_alpha() {
        // w* = baseRTT/RTT w* + alpha with RTT = base w*/C gives w* = C + alpha.
        // Its queueing delay alpha/C x 100 ms (20, 5 and 20 ms) is above the
        // 1.5 ms MI threshold, so MI ends before the equilibrium.
        for (alpha, c) in [(200.0, 1000.0), (400.0, 8000.0), (20.0, 100.0)] {
            let w = converge(alpha, c);
            assert!(
                (w - (c + alpha)).abs() < 0.01 * (c + alpha),
                "alpha {alpha}, C {c}: w = {w}"
            );
        }
    }
}
