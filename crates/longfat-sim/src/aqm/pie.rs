//! PIE: Proportional Integral controller Enhanced (RFC 8033).
//!
//! The basic algorithm of RFC 8033 §4 (its pseudocode in §4.1-4.4 and
//! Appendix A) with queue delay from timestamps (§4.3's second method: the
//! sojourn of the packet leaving, as Linux sch_pie and ns-3 `PieQueueDisc`
//! do by default), and three optional elements of §5: ECN marking below a
//! drop-probability threshold (§5.1), derandomization (§5.4, off by default
//! as in ns-3) and the cap on drop-probability increases (§5.5, on by
//! default as in ns-3). Not implemented: the departure-rate estimator
//! (§5.2), active/inactive states (§5.3), byte mode.
//!
//! Defaults are RFC 8033's, which ns-3 3.44 `PieQueueDisc` shares
//! (`QueueDelayReference` 15 ms, `Tupdate` 15 ms, `A` 0.125, `B` 1.25,
//! `MaxBurstAllowance` 150 ms, `MarkEcnThreshold` 0.1). Every difference
//! from ns-3 and from Linux sch_pie is listed in docs/scenarios.md, "AQM
//! disciplines: RED and PIE".
//!
//! The drop probability is updated every `t_update_ns` by a timer in the
//! RFC; here the updates are applied lazily and exactly: at each event, all
//! update instants `k x t_update_ns <= now` not yet applied run in order,
//! each with the state the timer would have seen (between events the queue
//! and the last delay sample are constant), before the event itself. The
//! result does not depend on when packets happen to arrive.

use rand_core::RngCore;

use super::red::uniform01;
use super::Verdict;
use crate::units::Bandwidth;

/// PIE's parameters (RFC 8033 §4, §5; ns-3 attribute names in brackets).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PieParams {
    /// QDELAY_REF, the target queue delay (§4.2: 15 ms) [QueueDelayReference].
    pub target_ns: u64,
    /// T_UPDATE, the period of the drop-probability update (§4.2: 15 ms)
    /// [Tupdate].
    pub t_update_ns: u64,
    /// alpha, 1/s (§4.2: 0.125) [A].
    pub alpha: f64,
    /// beta, 1/s (§4.2: 1.25) [B].
    pub beta: f64,
    /// MAX_BURST, the burst allowance (§4.4: 150 ms) [MaxBurstAllowance].
    pub max_burst_ns: u64,
    /// mark_ecnth (§5.1: 10 %): a congested ECN-capable packet is marked
    /// while drop_prob <= this, dropped above [MarkEcnThreshold].
    pub mark_ecn_threshold: f64,
    /// MEAN_PKTSIZE of §4.1's safeguard: no random drop while the queue holds
    /// at most 2 x this many bytes. Default 1500 (one full-sized packet;
    /// Linux uses the device MTU; ns-3's default packet mode counts 2
    /// packets).
    pub mean_pkt_bytes: u32,
    /// §5.5 cap drop adjustment: once drop_prob >= 10 %, one update raises it
    /// by at most 2 % [UseCapDropAdjustment, default true].
    pub cap_drop_adjustment: bool,
    /// §5.4 derandomization: accumulate drop_prob per arrival; no drop while
    /// the sum < 0.85, always once it reaches 8.5 [UseDerandomization,
    /// default false].
    pub derandomize: bool,
}

impl Default for PieParams {
    fn default() -> Self {
        Self {
            target_ns: 15_000_000,
            t_update_ns: 15_000_000,
            alpha: 0.125,
            beta: 1.25,
            max_burst_ns: 150_000_000,
            mark_ecn_threshold: 0.1,
            mean_pkt_bytes: 1500,
            cap_drop_adjustment: true,
            derandomize: false,
        }
    }
}

/// One PIE queue's state (RFC 8033 names, without the trailing `_`).
#[derive(Clone, Debug)]
pub struct Pie {
    p: PieParams,
    /// drop_prob.
    drop_prob: f64,
    /// current_qdelay: the sojourn of the last packet to leave, 0 once the
    /// queue is empty.
    qdelay_ns: u64,
    /// qdelay_old: current_qdelay at the previous update.
    qdelay_old_ns: u64,
    /// burst_allow.
    burst_allow_ns: u64,
    /// accu_prob (§5.4).
    accu_prob: f64,
    /// The next update instant.
    next_update_ns: u64,
}

impl Pie {
    /// `link_rate` is not used by the timestamp method (the §5.2
    /// departure-rate estimator, which would use it, is not implemented).
    pub fn new(p: PieParams, _link_rate: Bandwidth) -> Self {
        let t_update = p.t_update_ns.max(1);
        Self {
            drop_prob: 0.0,
            qdelay_ns: 0,
            qdelay_old_ns: 0,
            // §4.4: burst_allow starts at MAX_BURST.
            burst_allow_ns: p.max_burst_ns,
            accu_prob: 0.0,
            // The timer starts with the queue and first fires one period
            // later.
            next_update_ns: t_update,
            p: PieParams {
                t_update_ns: t_update,
                ..p
            },
        }
    }

    /// The current drop probability.
    pub fn drop_prob(&self) -> f64 {
        self.drop_prob
    }
    /// The burst allowance left, ns.
    pub fn burst_allowance_ns(&self) -> u64 {
        self.burst_allow_ns
    }
    /// current_qdelay, ns.
    pub fn qdelay_ns(&self) -> u64 {
        self.qdelay_ns
    }

    /// calculate_drop_prob (RFC 8033 §4.2, with §5.5 and §4.4's decrement),
    /// once.
    fn update(&mut self) {
        let qdelay = self.qdelay_ns as f64 * 1e-9;
        let qdelay_old = self.qdelay_old_ns as f64 * 1e-9;
        let target = self.p.target_ns as f64 * 1e-9;
        let mut p = self.p.alpha * (qdelay - target) + self.p.beta * (qdelay - qdelay_old);
        // §4.2: scale the step by the magnitude of drop_prob ("auto-tuning").
        let d = self.drop_prob;
        if d < 0.000_001 {
            p /= 2048.0;
        } else if d < 0.000_01 {
            p /= 512.0;
        } else if d < 0.000_1 {
            p /= 128.0;
        } else if d < 0.001 {
            p /= 32.0;
        } else if d < 0.01 {
            p /= 8.0;
        } else if d < 0.1 {
            p /= 2.0;
        }
        // §5.5: at most +2 % per update once drop_prob >= 10 %.
        if self.p.cap_drop_adjustment && d >= 0.1 && p > 0.02 {
            p = 0.02;
        }
        let mut drop_prob = d + p;
        // §4.2: decay exponentially while the delay is, and was, below half
        // the target.
        let half = self.p.target_ns / 2;
        if self.qdelay_ns < half && self.qdelay_old_ns < half {
            drop_prob *= 0.98;
        }
        self.drop_prob = drop_prob.clamp(0.0, 1.0);
        self.qdelay_old_ns = self.qdelay_ns;
        // §4.4: burst_allow = max(0, burst_allow - T_UPDATE).
        self.burst_allow_ns = self.burst_allow_ns.saturating_sub(self.p.t_update_ns);
    }

    /// Applies every update instant <= `now_ns` not yet applied, in order.
    fn run_updates(&mut self, now_ns: u64) {
        let t = self.p.t_update_ns;
        while self.next_update_ns <= now_ns {
            self.update();
            self.next_update_ns = self.next_update_ns.saturating_add(t);
            // A fixed point: with drop_prob 0 and a delay sample that stays
            // at most the target, every further update leaves drop_prob at 0
            // (its step is <= 0) and qdelay_old unchanged, and only spends
            // burst allowance. Jump over them (a long idle period costs one
            // step, not one per T_UPDATE).
            if self.drop_prob == 0.0
                && self.qdelay_ns == self.qdelay_old_ns
                && self.qdelay_ns <= self.p.target_ns
                && self.next_update_ns <= now_ns
            {
                let n = (now_ns - self.next_update_ns) / t + 1;
                self.burst_allow_ns = self.burst_allow_ns.saturating_sub(n.saturating_mul(t));
                self.next_update_ns = self.next_update_ns.saturating_add(n.saturating_mul(t));
            }
        }
    }

    /// A packet arrives and fits the buffer (the link checks its limit
    /// first, as RFC 8033 Appendix B, ns-3 and Linux do); `queue_pkts` /
    /// `queue_bytes` is the queue before it (waiting packets, not the one in
    /// service).
    ///
    /// Returns [`Verdict::Congested`] for a random early drop while
    /// drop_prob <= `mark_ecn_threshold` (the link marks it if it is
    /// ECN-capable and the discipline marks, §5.1), [`Verdict::Drop`] for
    /// one above the threshold (dropped even if ECN-capable), else
    /// [`Verdict::Pass`]. `ecn_capable` does not change the decision: a
    /// non-ECT packet given `Congested` is dropped by the link.
    pub fn on_enqueue(
        &mut self,
        now_ns: u64,
        _queue_pkts: u64,
        queue_bytes: u64,
        _size_bytes: u32,
        ecn_capable: bool,
        rng: &mut impl RngCore,
    ) -> Verdict {
        let _ = ecn_capable;
        self.run_updates(now_ns);
        let half = self.p.target_ns / 2;
        // §4.4 / Appendix A enque(): congestion is gone, re-arm the burst
        // allowance.
        if self.drop_prob == 0.0 && self.qdelay_ns < half && self.qdelay_old_ns < half {
            self.burst_allow_ns = self.p.max_burst_ns;
        }
        if self.burst_allow_ns > 0 {
            return Verdict::Pass;
        }
        // §4.1 drop_early(): safeguards that keep PIE work-conserving.
        if (self.qdelay_old_ns < half && self.drop_prob < 0.2)
            || queue_bytes <= 2 * u64::from(self.p.mean_pkt_bytes)
        {
            return Verdict::Pass;
        }
        if self.p.derandomize {
            // §5.4.
            if self.drop_prob == 0.0 {
                self.accu_prob = 0.0;
            }
            self.accu_prob += self.drop_prob;
            if self.accu_prob < 0.85 {
                return Verdict::Pass;
            }
            if self.accu_prob < 8.5 && uniform01(rng) >= self.drop_prob {
                return Verdict::Pass;
            }
        } else if uniform01(rng) >= self.drop_prob {
            return Verdict::Pass;
        }
        // A congestion signal, marked or dropped, restarts the accumulation.
        self.accu_prob = 0.0;
        if self.drop_prob <= self.p.mark_ecn_threshold {
            Verdict::Congested
        } else {
            Verdict::Drop
        }
    }

    /// A packet left the waiting queue after `sojourn_ns` in it;
    /// `queue_pkts` / `queue_bytes` is what is left waiting. current_qdelay
    /// becomes its sojourn (§4.3, timestamps), or 0 when the queue is now
    /// empty (Linux `pie_process_dequeue`, ns-3 `DoDequeue`).
    pub fn on_dequeue(
        &mut self,
        now_ns: u64,
        sojourn_ns: u64,
        _queue_pkts: u64,
        queue_bytes: u64,
        _size_bytes: u32,
    ) {
        self.run_updates(now_ns);
        self.qdelay_ns = if queue_bytes == 0 { 0 } else { sojourn_ns };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::testing::fixed;
    use rand_core::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    const RATE: Bandwidth = Bandwidth::from_bps(100_000_000);
    const MS: u64 = 1_000_000;
    const BIG_Q: u64 = 100 * 1500;

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() <= 1e-12 * b.abs().max(1e-9), "{a} != {b}");
    }

    #[test]
    fn drop_prob_after_k_updates_at_constant_delay() {
        // Delay 30 ms from t = 1 ns on (the queue never empties).
        let mut pie = Pie::new(PieParams::default(), RATE);
        pie.on_dequeue(1, 30 * MS, 20, BIG_Q, 1500);
        // Update 1 (15 ms): p = 0.125 (0.030 - 0.015) + 1.25 (0.030 - 0)
        // = 0.039375; drop_prob 0 < 1e-6: /2048.
        pie.on_dequeue(15 * MS, 30 * MS, 20, BIG_Q, 1500);
        let d1 = 0.039375 / 2048.0;
        close(pie.drop_prob(), d1);
        // Update 2: p = 0.125 x 0.015 = 0.001875 (qdelay_old = qdelay);
        // d1 = 1.92e-5 in [1e-5, 1e-4): /128.
        pie.on_dequeue(30 * MS, 30 * MS, 20, BIG_Q, 1500);
        let d2 = d1 + 0.001875 / 128.0;
        close(pie.drop_prob(), d2);
        // Updates 3..k by the same rule, computed by the table.
        let scale = |d: f64| match d {
            d if d < 1e-6 => 2048.0,
            d if d < 1e-5 => 512.0,
            d if d < 1e-4 => 128.0,
            d if d < 1e-3 => 32.0,
            d if d < 1e-2 => 8.0,
            d if d < 1e-1 => 2.0,
            _ => 1.0,
        };
        let mut d = d2;
        for _ in 3..=400 {
            let step = 0.001875 / scale(d);
            // §5.5 never binds here: 0.001875 < 0.02.
            d = (d + step).min(1.0);
        }
        // One event at 6 s runs updates 3..400.
        pie.on_dequeue(400 * 15 * MS, 30 * MS, 20, BIG_Q, 1500);
        close(pie.drop_prob(), d);
        assert!(d > 0.5 && d < 1.0, "{d}");
        // Third value by hand: d2 = 3.3875e-5 < 1e-4, so /128 again.
        close(d2, 0.039375 / 2048.0 + 0.001875 / 128.0);
        assert!((d2 - 3.3875e-5).abs() < 1e-9);
    }

    #[test]
    fn burst_allowance_blocks_drops_for_150_ms() {
        // A standing 100 ms delay and a large queue from t = 1 ns; with u = 0
        // every arrival that reaches the random test is dropped.
        let mut pie = Pie::new(PieParams::default(), RATE);
        let mut rng = fixed(0.0);
        pie.on_dequeue(1, 100 * MS, 50, BIG_Q, 1500);
        for t in (2..150 * MS).step_by(MS as usize / 4) {
            assert_eq!(
                pie.on_enqueue(t, 50, BIG_Q, 1500, false, &mut rng),
                Verdict::Pass,
                "t = {t}"
            );
        }
        assert_eq!(pie.burst_allowance_ns(), 15 * MS);
        assert!(pie.drop_prob() > 0.0);
        // The 10th update, at 150 ms, spends the last 15 ms.
        assert_eq!(
            pie.on_enqueue(150 * MS, 50, BIG_Q, 1500, false, &mut rng),
            Verdict::Congested
        );
        assert_eq!(pie.burst_allowance_ns(), 0);
    }

    #[test]
    fn burst_allowance_rearms_when_congestion_is_gone() {
        let mut pie = Pie::new(PieParams::default(), RATE);
        pie.burst_allow_ns = 0;
        pie.drop_prob = 0.0;
        pie.qdelay_ns = 7 * MS; // < 7.5 ms
        pie.qdelay_old_ns = 7 * MS;
        let mut rng = fixed(0.0);
        assert_eq!(
            pie.on_enqueue(1, 50, BIG_Q, 1500, false, &mut rng),
            Verdict::Pass
        );
        assert_eq!(pie.burst_allowance_ns(), 150 * MS);
        // Not re-armed at 7.5 ms.
        let mut pie = Pie::new(PieParams::default(), RATE);
        pie.burst_allow_ns = 0;
        pie.qdelay_ns = 7_500_000;
        pie.qdelay_old_ns = 7 * MS;
        pie.on_enqueue(1, 50, BIG_Q, 1500, false, &mut rng);
        assert_eq!(pie.burst_allowance_ns(), 0);
    }

    fn armed(drop_prob: f64, qdelay_old_ns: u64) -> Pie {
        let mut pie = Pie::new(PieParams::default(), RATE);
        pie.burst_allow_ns = 0;
        pie.drop_prob = drop_prob;
        pie.qdelay_ns = 20 * MS;
        pie.qdelay_old_ns = qdelay_old_ns;
        pie
    }

    #[test]
    fn safeguards() {
        let mut rng = fixed(0.0);
        // qdelay_old < target/2 and drop_prob < 0.2: no drop, even u = 0.
        let mut pie = armed(0.19, 7 * MS);
        assert_eq!(
            pie.on_enqueue(1, 50, BIG_Q, 1500, false, &mut rng),
            Verdict::Pass
        );
        // Boundary pairs: qdelay_old = 7.5 ms is not below half the target.
        let mut pie = armed(0.05, 7_500_000);
        assert_eq!(
            pie.on_enqueue(1, 50, BIG_Q, 1500, false, &mut rng),
            Verdict::Congested
        );
        // drop_prob = 0.2 is not below 0.2 (and above the ECN threshold).
        let mut pie = armed(0.2, 7 * MS);
        assert_eq!(
            pie.on_enqueue(1, 50, BIG_Q, 1500, false, &mut rng),
            Verdict::Drop
        );
        // At most 2 x 1500 bytes queued: no drop; one byte more: drop.
        let mut pie = armed(0.5, 20 * MS);
        assert_eq!(
            pie.on_enqueue(1, 2, 3000, 1500, false, &mut rng),
            Verdict::Pass
        );
        assert_eq!(
            pie.on_enqueue(2, 3, 3001, 1500, false, &mut rng),
            Verdict::Drop
        );
    }

    #[test]
    fn ecn_threshold() {
        let mut rng = fixed(0.0);
        let mut pie = armed(0.1, 20 * MS);
        assert_eq!(
            pie.on_enqueue(1, 50, BIG_Q, 1500, true, &mut rng),
            Verdict::Congested
        );
        let mut pie = armed(0.100_000_1, 20 * MS);
        assert_eq!(
            pie.on_enqueue(1, 50, BIG_Q, 1500, true, &mut rng),
            Verdict::Drop
        );
        // The draw: u just below drop_prob drops, at drop_prob passes.
        let mut pie = armed(0.05, 20 * MS);
        assert_eq!(
            pie.on_enqueue(1, 50, BIG_Q, 1500, true, &mut fixed(0.049)),
            Verdict::Congested
        );
        assert_eq!(
            pie.on_enqueue(2, 50, BIG_Q, 1500, true, &mut fixed(0.050_000_1)),
            Verdict::Pass
        );
    }

    #[test]
    fn decay_when_delay_is_and_was_small() {
        // drop_prob 0.5, the queue empties (current_qdelay 0); qdelay_old
        // 20 ms. Update 1: p = 0.125 (0 - 0.015) + 1.25 (0 - 0.020)
        // = -0.026875, unscaled (>= 0.1); no decay (qdelay_old >= 7.5 ms):
        // 0.473125. Update 2: p = -0.001875; both delays 0: x 0.98.
        let mut pie = armed(0.5, 20 * MS);
        pie.next_update_ns = 15 * MS;
        pie.on_dequeue(1, 5 * MS, 0, 0, 1500);
        assert_eq!(pie.qdelay_ns(), 0);
        pie.on_dequeue(15 * MS, 0, 0, 0, 1500);
        close(pie.drop_prob(), 0.473125);
        pie.on_dequeue(30 * MS, 0, 0, 0, 1500);
        close(pie.drop_prob(), (0.473125 - 0.001875) * 0.98);
        // Delay samples at 8 ms (not below 7.5 ms): no decay, only the step
        // 0.125 (0.008 - 0.015) + 1.25 (0.008 - 0) = 0.009125 ... then
        // 0.125 x (-0.007) = -0.000875.
        let mut pie = armed(0.5, 0);
        pie.qdelay_ns = 0;
        pie.next_update_ns = 15 * MS;
        pie.on_dequeue(1, 8 * MS, 10, BIG_Q, 1500);
        pie.on_dequeue(30 * MS, 8 * MS, 10, BIG_Q, 1500);
        close(pie.drop_prob(), 0.5 + 0.009125 - 0.000875);
    }

    #[test]
    fn decay_below_half_target_not_only_at_zero() {
        // RFC 8033 §4.2 decays while both delays are below target/2, not
        // only when they are 0 (ns-3, Linux): delays of 5 ms, p = 0.125
        // (0.005 - 0.015) = -0.00125, then x 0.98.
        let mut pie = armed(0.5, 5 * MS);
        pie.qdelay_ns = 5 * MS;
        pie.on_dequeue(15 * MS, 5 * MS, 10, BIG_Q, 1500);
        close(pie.drop_prob(), (0.5 - 0.00125) * 0.98);
    }

    #[test]
    fn cap_drop_adjustment() {
        // drop_prob 0.15, delay jumps 20 -> 200 ms: p = 0.125 x 0.185 +
        // 1.25 x 0.18 = 0.248125, capped to 0.02 (§5.5).
        let mut pie = armed(0.15, 20 * MS);
        pie.next_update_ns = 15 * MS;
        pie.on_dequeue(1, 200 * MS, 50, BIG_Q, 1500);
        pie.on_dequeue(15 * MS, 200 * MS, 50, BIG_Q, 1500);
        close(pie.drop_prob(), 0.17);
        let mut pie = armed(0.15, 20 * MS);
        pie.p.cap_drop_adjustment = false;
        pie.next_update_ns = 15 * MS;
        pie.on_dequeue(1, 200 * MS, 50, BIG_Q, 1500);
        pie.on_dequeue(15 * MS, 200 * MS, 50, BIG_Q, 1500);
        close(pie.drop_prob(), 0.15 + 0.248125);
        // Below 10 % no cap: 0.05 + 0.248125 / 2.
        let mut pie = armed(0.05, 20 * MS);
        pie.next_update_ns = 15 * MS;
        pie.on_dequeue(1, 200 * MS, 50, BIG_Q, 1500);
        pie.on_dequeue(15 * MS, 200 * MS, 50, BIG_Q, 1500);
        close(pie.drop_prob(), 0.05 + 0.248125 / 2.0);
    }

    #[test]
    fn derandomization() {
        // drop_prob 0.25 held (no update before 15 ms). u = 0.999 never wins
        // the draw: the sum reaches 8.5 at the 34th arrival, which is
        // dropped; the sum restarts.
        let p = PieParams {
            derandomize: true,
            ..PieParams::default()
        };
        let mut pie = Pie::new(p, RATE);
        pie.burst_allow_ns = 0;
        pie.drop_prob = 0.25;
        pie.qdelay_ns = 20 * MS;
        pie.qdelay_old_ns = 20 * MS;
        let mut rng = fixed(0.999);
        for i in 1..=33 {
            assert_eq!(
                pie.on_enqueue(i, 50, BIG_Q, 1500, false, &mut rng),
                Verdict::Pass,
                "{i}"
            );
        }
        assert_eq!(
            pie.on_enqueue(34, 50, BIG_Q, 1500, false, &mut rng),
            Verdict::Drop
        );
        assert_eq!(pie.accu_prob, 0.0);
        // u = 0: no drop until the sum reaches 0.85 (4th arrival: 1.0).
        let mut rng = fixed(0.0);
        for i in 1..=3 {
            assert_eq!(
                pie.on_enqueue(100 + i, 50, BIG_Q, 1500, false, &mut rng),
                Verdict::Pass
            );
        }
        assert_eq!(
            pie.on_enqueue(104, 50, BIG_Q, 1500, false, &mut rng),
            Verdict::Drop
        );
    }

    /// Drives a PIE through a random trace; `extra` adds state-preserving
    /// events (a dequeue repeating the last sample) between the others.
    fn trace(seed: u64, extra: bool) -> Vec<(u64, f64, u64)> {
        let mut draw = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x5eed);
        let p = PieParams {
            derandomize: seed & 1 == 1,
            ..PieParams::default()
        };
        let mut pie = Pie::new(p, RATE);
        let mut now = 0u64;
        let mut q = 0u64;
        let mut sojourn = 0u64;
        let mut out = Vec::new();
        for _ in 0..3000 {
            let gap = draw.next_u64()
                % (if draw.next_u64() % 50 == 0 {
                    2000 * MS
                } else {
                    3 * MS
                });
            if extra {
                for k in 1..4 {
                    let t = now + gap * k / 4;
                    // Repeats the last dequeue's inputs: no state change.
                    pie.on_dequeue(
                        t,
                        sojourn,
                        q,
                        if pie.qdelay_ns == 0 { 0 } else { q * 1500 + 1 },
                        1500,
                    );
                }
            }
            now += gap;
            if draw.next_u64() % 2 == 0 {
                let v = pie.on_enqueue(now, q, q * 1500, 1500, draw.next_u64() % 2 == 0, &mut rng);
                if v == Verdict::Pass {
                    q = (q + 1).min(400);
                }
            } else if q > 0 {
                q -= 1;
                sojourn = (draw.next_u64() % 400) * MS;
                pie.on_dequeue(now, sojourn, q, q * 1500, 1500);
            } else {
                // No event: nothing to compare.
                continue;
            }
            assert!((0.0..=1.0).contains(&pie.drop_prob()));
            assert!(pie.burst_allowance_ns() <= 150 * MS);
            out.push((now, pie.drop_prob(), pie.burst_allowance_ns()));
        }
        out
    }

    #[test]
    fn updates_do_not_depend_on_event_times() {
        // Invariants, and the same trajectory with or without extra events
        // between the trace's own (lazy updates, and the idle-period jump,
        // equal the timer's).
        for seed in 0..24 {
            let (a, b) = (trace(seed, false), trace(seed, true));
            if let Some(i) = (0..a.len()).find(|&i| a[i] != b[i]) {
                panic!(
                    "seed {seed}: event {i}: {:?} != {:?} (before: {:?})",
                    a[i],
                    b[i],
                    &a[i.saturating_sub(3)..i]
                );
            }
        }
    }

    #[test]
    fn idle_jump_equals_single_steps() {
        // drop_prob 0, qdelay 0: the jump over 10 s of updates leaves burst
        // and the next update instant where 666 single updates leave them.
        let mut a = Pie::new(PieParams::default(), RATE);
        a.burst_allow_ns = 100 * MS;
        let mut b = a.clone();
        a.run_updates(10_000 * MS);
        for k in 1..=666 {
            b.run_updates(k * 15 * MS);
        }
        b.run_updates(10_000 * MS);
        assert_eq!(a.burst_allow_ns, b.burst_allow_ns);
        assert_eq!(a.next_update_ns, b.next_update_ns);
        assert_eq!(a.next_update_ns, 667 * 15 * MS);
        assert_eq!(a.drop_prob, 0.0);
    }
}
