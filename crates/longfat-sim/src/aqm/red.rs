//! RED: Random Early Detection (Floyd & Jacobson 1993, "Random Early
//! Detection Gateways for Congestion Avoidance", IEEE/ACM ToN 1(4), §4 and
//! Fig. 2), with gentle mode (Floyd 2000, "Recommendation on using the
//! gentle_ variant of RED") and Adaptive RED (Floyd, Gummadi & Shenker 2001,
//! "Adaptive RED: An Algorithm for Increasing the Robustness of RED's Active
//! Queue Management", Fig. 5 and §5's automatic parameters).
//!
//! Where the papers leave room, this follows ns-3's `RedQueueDisc`
//! (src/traffic-control/model/red-queue-disc.cc, itself ns-2's queue/red.cc),
//! the reference of the ns-3 side-by-side check: its defaults, its `m_old`
//! rule (no early drop for the first arrival after avg crosses min_th), its
//! `Wait` rule (`ModifyP`), its "instantaneous queue of at most one packet is
//! never dropped" rule, and its idle decay `m = idle time x C` with C the
//! link rate in mean-sized packets per second. The decisions, and every
//! difference from ns-3 and from Linux sch_red / include/net/red.h, are
//! listed in docs/scenarios.md, "AQM disciplines: RED and PIE".
//!
//! Packet mode only: the average and the thresholds count packets waiting
//! (ns-3's default, `MaxSize` in packets); byte mode (ns-3 `MaxSize` in bytes,
//! Linux's only mode) is not implemented.
//!
//! The machine has no engine dependency: the link calls [`Red::on_enqueue`]
//! for every arrival, before its buffer limit (ns-3 updates avg for every
//! arrival and its internal queue drops on overflow after RED passes a
//! packet), and [`Red::on_dequeue`] whenever a packet leaves the waiting
//! queue for the transmitter. Adaptive RED's
//! periodic max_p update is a timer in the paper and in Linux
//! (`red_adaptative_timer`); here it is evaluated lazily and exactly: every
//! update instant up to `now` is applied, in order, before the event at
//! `now`, with the state the timer would have seen (between events the
//! queue, and so RED's state, is constant).

use rand_core::RngCore;

use super::Verdict;
use crate::units::Bandwidth;

/// ns-3 `RedQueueDisc`'s `MeanPktSize` default: the packet size that turns
/// the link rate into C, packets per second ([`Red::new`]).
pub const RED_MEAN_PKT_BYTES: u32 = 500;

/// RED's parameters. Defaults are ns-3 3.44 `RedQueueDisc`'s (and the
/// papers' where ns-3 has none); see each field.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedParams {
    /// min_th, in packets of average queue (ns-3 `MinTh` 5; Floyd &
    /// Jacobson §4). Ignored when `auto_params`.
    pub min_th_pkts: f64,
    /// max_th, in packets of average queue (ns-3 `MaxTh` 15). Must exceed
    /// `min_th_pkts`. Ignored when `auto_params`.
    pub max_th_pkts: f64,
    /// max_p: the marking probability at avg = max_th (ns-3 `LInterm` 50,
    /// i.e. 1/50 = 0.02). Adaptive RED's starting value.
    pub max_p: f64,
    /// w_q, the EWMA weight of the average queue (ns-3 `QW` 0.002; Floyd &
    /// Jacobson §6 recommend >= 0.001). Ignored when `auto_params`.
    pub weight: f64,
    /// Gentle RED: between max_th and 2 max_th the probability rises
    /// linearly from max_p to 1 instead of jumping to 1 (Floyd 2000; ns-3
    /// `Gentle` true).
    pub gentle: bool,
    /// ns-2/ns-3 `Wait` (default true): the count correction is
    /// `p_b / (2 - count p_b)` once `count p_b >= 1`, 0 before, 1 from
    /// `count p_b >= 2`, which spaces marks uniformly between 1/p_b and
    /// 2/p_b arrivals. False: Floyd & Jacobson's `p_a = p_b / (1 - count
    /// p_b)` (eq. in §7), marks uniformly between 1 and 1/p_b arrivals, as
    /// Linux's `red_mark_probability` does.
    pub wait: bool,
    /// Above the hard threshold (max_th, or 2 max_th when gentle) drop even
    /// ECN-capable packets ([`Verdict::Drop`]; ns-3 `UseHardDrop` true).
    /// False: [`Verdict::Congested`] there too (Linux sch_red without its
    /// `harddrop` flag marks them).
    pub hard_drop: bool,
    /// Adaptive RED: adapt max_p every `ared_interval_ns` toward a target
    /// average (Floyd, Gummadi & Shenker Fig. 5; ns-3 `AdaptMaxP`, Linux
    /// `adaptive`). Default false (ns-3 `ARED` false).
    pub adaptive: bool,
    /// ARED's automatic parameters (§5 of the ARED paper, ns-3 `ARED`):
    /// C = link rate / (8 x mean packet size) packets per second,
    /// min_th = max(5, target_delay x C / 2), max_th = 3 min_th,
    /// w_q = 1 - exp(-1/C). They replace `min_th_pkts`, `max_th_pkts` and
    /// `weight`. Default false.
    pub auto_params: bool,
    /// ARED's target queueing delay for `auto_params` (ns-3 `TargetDelay`
    /// 5 ms).
    pub target_delay_ns: u64,
    /// ARED's update interval (paper: 0.5 s; ns-3 `Interval` 0.5 s; Linux
    /// HZ/2).
    pub ared_interval_ns: u64,
    /// ARED's additive increase cap: max_p += min(alpha, max_p / 4) (paper;
    /// ns-3 `Alpha` 0.01).
    pub ared_alpha: f64,
    /// ARED's multiplicative decrease: max_p *= beta (paper; ns-3 `Beta`
    /// 0.9).
    pub ared_beta: f64,
    /// ARED increases max_p only while max_p <= top (paper 0.5; ns-3 `Top`).
    pub ared_top: f64,
    /// ARED decreases max_p only while max_p >= bottom (paper 0.01; Linux
    /// `MAX_P_MIN`; ns-3's automatic `Bottom` is min(0.01, 1/W)).
    pub ared_bottom: f64,
}

impl Default for RedParams {
    fn default() -> Self {
        Self {
            min_th_pkts: 5.0,
            max_th_pkts: 15.0,
            max_p: 0.02,
            weight: 0.002,
            gentle: true,
            wait: true,
            hard_drop: true,
            adaptive: false,
            auto_params: false,
            target_delay_ns: 5_000_000,
            ared_interval_ns: 500_000_000,
            ared_alpha: 0.01,
            ared_beta: 0.9,
            ared_top: 0.5,
            ared_bottom: 0.01,
        }
    }
}

/// A uniform draw in [0, 1) with 53 random bits.
#[inline]
pub(crate) fn uniform01(rng: &mut impl RngCore) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// One RED queue's state.
#[derive(Clone, Debug)]
pub struct Red {
    min_th: f64,
    max_th: f64,
    w_q: f64,
    gentle: bool,
    wait: bool,
    hard_drop: bool,
    adaptive: bool,
    interval_ns: u64,
    alpha: f64,
    beta: f64,
    top: f64,
    bottom: f64,
    /// C = rate_bps / (8 mean_pkt_bytes) packets/s, kept as its two
    /// integers so the idle count m is exact.
    rate_bps: u64,
    mean_pkt_bytes: u64,
    // State (Floyd & Jacobson Fig. 2 names; ns-3's in comments).
    /// avg (m_qAvg), packets.
    avg: f64,
    /// count (m_count): arrivals since the last early mark.
    count: u64,
    /// ns-3 m_old: avg was already in the marking range at the previous
    /// arrival.
    old: bool,
    /// max_p (m_curMaxP), adapted by ARED.
    cur_max_p: f64,
    /// The waiting queue is empty (m_idle) since `idle_since_ns` (q_time).
    idle: bool,
    idle_since_ns: u64,
    /// ARED's next update instant.
    next_update_ns: u64,
}

impl Red {
    /// `mean_pkt_bytes` sets C, the packets per second the link drains, for
    /// the idle decay and `auto_params` (ns-3 `MeanPktSize`, 500 by default).
    pub fn new(p: RedParams, link_rate: Bandwidth, mean_pkt_bytes: u32) -> Self {
        let rate_bps = link_rate.bps().max(1);
        let mean = u64::from(mean_pkt_bytes.max(1));
        // C, packets/s (ns-3 m_ptc).
        let ptc = rate_bps as f64 / (8.0 * mean as f64);
        let (min_th, max_th, w_q) = if p.auto_params {
            // ARED §5 / ns-3 InitializeParams: min_th = max(5, target/2),
            // max_th = 3 min_th, w_q = 1 - exp(-1/C).
            let target_q = p.target_delay_ns as f64 * 1e-9 * ptc;
            let min_th = (target_q / 2.0).max(5.0);
            (min_th, 3.0 * min_th, 1.0 - (-1.0 / ptc).exp())
        } else {
            (p.min_th_pkts, p.max_th_pkts, p.weight)
        };
        Self {
            min_th,
            max_th,
            w_q,
            gentle: p.gentle,
            wait: p.wait,
            hard_drop: p.hard_drop,
            adaptive: p.adaptive,
            interval_ns: p.ared_interval_ns.max(1),
            alpha: p.ared_alpha,
            beta: p.ared_beta,
            top: p.ared_top,
            bottom: p.ared_bottom,
            rate_bps,
            mean_pkt_bytes: mean,
            avg: 0.0,
            count: 0,
            old: false,
            cur_max_p: p.max_p,
            // ns-3 InitializeParams: idle since time 0.
            idle: true,
            idle_since_ns: 0,
            next_update_ns: p.ared_interval_ns.max(1),
        }
    }

    /// The average queue, packets (as of the last arrival).
    pub fn avg_pkts(&self) -> f64 {
        self.avg
    }
    /// The current max_p (moves only under ARED).
    pub fn max_p(&self) -> f64 {
        self.cur_max_p
    }
    /// Arrivals counted since the last early mark (ns-3 m_count).
    pub fn count(&self) -> u64 {
        self.count
    }
    /// The thresholds and weight in use (after `auto_params`).
    pub fn thresholds(&self) -> (f64, f64, f64) {
        (self.min_th, self.max_th, self.w_q)
    }

    /// m: the mean-sized packets the link could have sent while idle for
    /// `idle_ns` (Floyd & Jacobson Fig. 2, `m <- f(time - q_time)`; ns-3
    /// `uint32_t(m_ptc * idle seconds)`, here exact in integers).
    fn idle_packets(&self, idle_ns: u64) -> u64 {
        let m = u128::from(idle_ns) * u128::from(self.rate_bps)
            / (8 * 1_000_000_000 * u128::from(self.mean_pkt_bytes));
        m.min(u128::from(u64::MAX)) as u64
    }

    /// (1 - w_q)^m; m = 1 (no idle time, the per-packet case) without powf.
    fn decay(&self, m: u64) -> f64 {
        if m == 1 {
            1.0 - self.w_q
        } else {
            (1.0 - self.w_q).powf(m as f64)
        }
    }

    /// ARED (Floyd, Gummadi & Shenker Fig. 5), every interval:
    /// if avg > target_max and max_p <= top: max_p += min(alpha, max_p/4);
    /// elif avg < target_min and max_p >= bottom: max_p *= beta; with the
    /// target range [min_th + 0.4 (max_th - min_th), min_th + 0.6 (...)].
    /// The average seen by the timer is the last one, decayed over the idle
    /// time so far if the queue is idle (Linux `red_adaptative_algo`).
    fn run_updates(&mut self, now_ns: u64) {
        while self.next_update_ns <= now_ns {
            let t = self.next_update_ns;
            let avg = if self.idle && t > self.idle_since_ns {
                self.avg * self.decay(self.idle_packets(t - self.idle_since_ns))
            } else {
                self.avg
            };
            let delta = self.max_th - self.min_th;
            let target_min = self.min_th + 0.4 * delta;
            let target_max = self.min_th + 0.6 * delta;
            if avg > target_max && self.cur_max_p <= self.top {
                self.cur_max_p += self.alpha.min(self.cur_max_p / 4.0);
            } else if avg < target_min && self.cur_max_p >= self.bottom {
                self.cur_max_p *= self.beta;
            }
            self.next_update_ns = t.saturating_add(self.interval_ns);
            if self.next_update_ns == t {
                break;
            }
        }
    }

    /// p_b for the current avg (ns-3 `CalculatePNew`): linear from 0 at
    /// min_th to max_p at max_th (Floyd & Jacobson §4); gentle: linear from
    /// max_p at max_th to 1 at 2 max_th (Floyd 2000); non-gentle above
    /// max_th: 1.
    fn p_b(&self) -> f64 {
        let p = if self.avg >= self.max_th {
            if self.gentle {
                self.cur_max_p + (1.0 - self.cur_max_p) * (self.avg - self.max_th) / self.max_th
            } else {
                1.0
            }
        } else {
            let diff = if self.max_th > self.min_th {
                self.max_th - self.min_th
            } else {
                1.0
            };
            self.cur_max_p * (self.avg - self.min_th) / diff
        };
        p.min(1.0)
    }

    /// p_a from p_b and count (ns-3 `ModifyP`, packet mode).
    fn p_a(&self, p_b: f64) -> f64 {
        let cp = self.count as f64 * p_b;
        let p = if self.wait {
            // ns-2 wait_: no mark until count p_b >= 1, then p_b / (2 - count p_b).
            if cp < 1.0 {
                0.0
            } else if cp < 2.0 {
                p_b / (2.0 - cp)
            } else {
                1.0
            }
        } else if cp < 1.0 {
            // Floyd & Jacobson §7: p_a = p_b / (1 - count p_b).
            p_b / (1.0 - cp)
        } else {
            1.0
        };
        p.min(1.0)
    }

    /// A packet arrives; `queue_pkts` / `queue_bytes` is the queue before it
    /// (waiting packets, not the one in service).
    ///
    /// Returns [`Verdict::Drop`] in the hard region (avg >= max_th, or >= 2
    /// max_th when gentle) when `hard_drop`, [`Verdict::Congested`] for an
    /// early (probabilistic) mark, including gentle's region, else
    /// [`Verdict::Pass`].
    pub fn on_enqueue(
        &mut self,
        now_ns: u64,
        queue_pkts: u64,
        _queue_bytes: u64,
        _size_bytes: u32,
        rng: &mut impl RngCore,
    ) -> Verdict {
        if self.adaptive {
            self.run_updates(now_ns);
        }
        // Floyd & Jacobson Fig. 2: after an idle period, decay avg as if m
        // empty-queue arrivals had happened, then the usual EWMA step
        // (ns-3 `Estimator(nQueued, m + 1, ...)`).
        let mut m = 0;
        if self.idle {
            m = self.idle_packets(now_ns.saturating_sub(self.idle_since_ns));
            self.idle = false;
        }
        self.avg = self.avg * self.decay(m.saturating_add(1)) + self.w_q * queue_pkts as f64;
        self.count += 1;

        // ns-3 DoEnqueue: nothing is marked while the waiting queue holds at
        // most one packet.
        if self.avg >= self.min_th && queue_pkts > 1 {
            let hard_th = if self.gentle {
                2.0 * self.max_th
            } else {
                self.max_th
            };
            if self.avg >= hard_th {
                // DTYPE_FORCED (count is not reset, as in ns-3).
                return if self.hard_drop {
                    Verdict::Drop
                } else {
                    Verdict::Congested
                };
            }
            if !self.old {
                // avg just crossed min_th (or the queue just became
                // non-empty): restart the count, do not mark this one.
                self.count = 1;
                self.old = true;
                return Verdict::Pass;
            }
            let p = self.p_a(self.p_b());
            if uniform01(rng) < p {
                self.count = 0;
                return Verdict::Congested;
            }
            Verdict::Pass
        } else {
            self.old = false;
            Verdict::Pass
        }
    }

    /// A packet left the waiting queue, or a dequeue found it empty;
    /// `queue_pkts` / `queue_bytes` is what is left waiting. RED's idle time
    /// starts when it is 0 (ns-3 `DoDequeue` finding the queue empty, Linux
    /// `red_start_of_idle_period`): the link calls this with 0 only when
    /// its transmitter, free, finds nothing waiting.
    pub fn on_dequeue(&mut self, now_ns: u64, queue_pkts: u64, _queue_bytes: u64) {
        if self.adaptive {
            self.run_updates(now_ns);
        }
        if queue_pkts == 0 {
            if !self.idle {
                self.idle = true;
                self.idle_since_ns = now_ns;
            }
        } else {
            self.idle = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::testing::fixed;
    use rand_core::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    const MBPS_100: Bandwidth = Bandwidth::from_bps(100_000_000);

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() <= 1e-12 * b.abs().max(1.0), "{a} != {b}");
    }

    #[test]
    fn avg_after_n_arrivals_at_constant_queue() {
        // avg_n = q (1 - (1 - w)^n) for a constant queue q, starting at 0,
        // with no idle time (a packet leaves before each arrival, queue
        // stays non-empty).
        let mut red = Red::new(RedParams::default(), MBPS_100, 500);
        let mut rng = fixed(0.999);
        let q = 3u64; // below min_th: never marked
        for i in 0..200u64 {
            red.on_enqueue(i * 1000, q, 0, 1500, &mut rng);
            red.on_dequeue(i * 1000 + 1, q, 0);
        }
        let want = 3.0 * (1.0 - (1.0 - 0.002f64).powi(200));
        close(red.avg_pkts(), want);
    }

    #[test]
    fn idle_decay_counts_mean_sized_packets() {
        // 100 Mbit/s, 500-byte mean packets: C = 25,000 packets/s, so 4 ms
        // idle is m = 100 packets; the next arrival multiplies avg by
        // (1 - w)^(m + 1) before adding w q.
        let p = RedParams {
            weight: 0.01,
            ..RedParams::default()
        };
        let mut red = Red::new(p, MBPS_100, 500);
        let mut rng = fixed(0.999);
        // Build avg with a queue of 4 (below min_th 5) for 50 arrivals.
        for i in 0..50u64 {
            red.on_enqueue(i * 10, 4, 0, 500, &mut rng);
            red.on_dequeue(i * 10 + 1, 4, 0);
        }
        let before = red.avg_pkts();
        // The first arrival at time 0 found the queue idle since 0: m = 0.
        close(before, 4.0 * (1.0 - 0.99f64.powi(50)));
        red.on_dequeue(1_000, 0, 0); // idle from t = 1 us
        red.on_enqueue(1_000 + 4_000_000, 0, 0, 500, &mut rng);
        close(red.avg_pkts(), before * 0.99f64.powi(101));
        // One packet time is 40 us: 4,039,999 ns is 1 ns short of 101
        // packets and still counts 100 (floor).
        red.on_dequeue(10_000_000, 0, 0);
        red.on_enqueue(10_000_000 + 4_039_999, 0, 0, 500, &mut rng);
        close(
            red.avg_pkts(),
            before * 0.99f64.powi(101) * 0.99f64.powi(101),
        );
    }

    /// A RED whose avg sits at exactly `avg` (w_q = 1: avg = the queue).
    fn at_avg(p: RedParams, avg: u64) -> Red {
        let mut red = Red::new(RedParams { weight: 1.0, ..p }, MBPS_100, 500);
        let mut rng = fixed(0.999_999);
        // First arrival in range sets `old` and count = 1 without marking.
        assert_eq!(red.on_enqueue(0, avg, 0, 1500, &mut rng), Verdict::Pass);
        assert_eq!(red.count(), 1);
        red
    }

    #[test]
    fn probability_with_count_wait_and_paper() {
        // avg 10 in [5, 15), max_p 0.02: p_b = 0.02 x 5/10 = 0.01.
        // Paper (wait = false): the crossing arrival sets count = 1, the k-th
        // arrival (k >= 2) has count = k and p_a = 0.01 / (1 - k 0.01). A
        // draw of u marks iff u < p_a. With u = 0.0126: p_a > u iff
        // 1 - k/100 < 0.01/0.0126 = 0.7937, k > 20.63.
        let p = RedParams {
            wait: false,
            ..RedParams::default()
        };
        let mut red = at_avg(p, 10);
        let mut rng = fixed(0.0126);
        let mut marked_at = None;
        for k in 2..=40u64 {
            let v = red.on_enqueue(k, 10, 0, 1500, &mut rng);
            if v == Verdict::Congested {
                marked_at = Some(k);
                break;
            }
        }
        // count 21: p_a = 0.01 / 0.79 = 0.012658 > 0.0126; count 20:
        // 0.01 / 0.8 = 0.0125 < 0.0126.
        assert_eq!(marked_at, Some(21));
        assert_eq!(red.count(), 0);

        // ns-2 wait (default): p_a = 0 until count p_b >= 1 (count 100),
        // then p_b / (2 - count p_b): count 100 gives 0.01, count 150 gives
        // 0.02, count 199 gives 0.01 / 0.01 = 1. With u = 0.015: p_a > u iff
        // 2 - count/100 < 2/3, count > 133.33, so the mark is at count 134.
        let mut red = at_avg(RedParams::default(), 10);
        let mut rng = fixed(0.015);
        let mut marked_count = None;
        for _ in 0..300 {
            let c = red.count() + 1;
            if red.on_enqueue(5, 10, 0, 1500, &mut rng) == Verdict::Congested {
                marked_count = Some(c);
                break;
            }
        }
        assert_eq!(marked_count, Some(134));
    }

    #[test]
    fn gentle_slope_and_hard_region() {
        // Gentle: at avg 22.5 = 1.5 max_th, p_b = 0.02 + 0.98 x 0.5 = 0.51.
        let red = at_avg(RedParams::default(), 22);
        close(red.p_b(), 0.02 + 0.98 * 7.0 / 15.0);
        let mut red = at_avg(
            RedParams {
                wait: false,
                ..RedParams::default()
            },
            15,
        );
        close(red.p_b(), 0.02);
        // Just below the hard threshold 2 max_th = 30: Congested, not Drop.
        let mut rng = fixed(0.0);
        assert_eq!(red.on_enqueue(1, 29, 0, 1500, &mut rng), Verdict::Congested);
        close(red.p_b(), 0.02 + 0.98 * 14.0 / 15.0);
        // At 2 max_th: Drop whatever the draw.
        let mut rng = fixed(0.999_999);
        assert_eq!(red.on_enqueue(2, 30, 0, 1500, &mut rng), Verdict::Drop);
        // Without hard_drop: Congested there.
        let mut soft = at_avg(
            RedParams {
                hard_drop: false,
                ..RedParams::default()
            },
            10,
        );
        assert_eq!(
            soft.on_enqueue(1, 30, 0, 1500, &mut rng),
            Verdict::Congested
        );
        // Not gentle: avg = max_th is already the hard region.
        let mut hard = at_avg(
            RedParams {
                gentle: false,
                ..RedParams::default()
            },
            10,
        );
        assert_eq!(hard.on_enqueue(1, 15, 0, 1500, &mut rng), Verdict::Drop);
        assert_eq!(hard.on_enqueue(2, 14, 0, 1500, &mut rng), Verdict::Pass);
    }

    #[test]
    fn no_mark_below_min_th_or_with_one_packet_waiting() {
        let mut red = at_avg(
            RedParams {
                wait: false,
                ..RedParams::default()
            },
            10,
        );
        let mut rng = fixed(0.0);
        assert_eq!(red.on_enqueue(1, 10, 0, 1500, &mut rng), Verdict::Congested);
        // avg 4.99... < 5: never, even with u = 0.
        let mut red = Red::new(
            RedParams {
                weight: 1.0,
                ..RedParams::default()
            },
            MBPS_100,
            500,
        );
        for t in 0..10 {
            assert_eq!(red.on_enqueue(t, 4, 0, 1500, &mut rng), Verdict::Pass);
        }
        // avg far above 2 max_th but the waiting queue holds one packet: the
        // ns-3 rule passes it (w_q made small so avg stays high).
        let mut red = Red::new(
            RedParams {
                weight: 1.0,
                ..RedParams::default()
            },
            MBPS_100,
            500,
        );
        assert_eq!(red.on_enqueue(0, 40, 0, 1500, &mut rng), Verdict::Drop);
        red.w_q = 0.001;
        assert_eq!(red.on_enqueue(1, 1, 0, 1500, &mut rng), Verdict::Pass);
        assert_eq!(red.on_enqueue(2, 2, 0, 1500, &mut rng), Verdict::Drop);
    }

    #[test]
    fn ared_max_p_after_k_intervals() {
        // avg held at 14 > target_max = 5 + 0.6 x 10 = 11: every 0.5 s,
        // max_p += min(0.01, max_p / 4): 0.02 -> 0.025 -> 0.03125 ->
        // 0.0390625 -> 0.048828125 -> 0.058828125 (alpha cap 0.01 from here).
        let p = RedParams {
            adaptive: true,
            weight: 1.0,
            ..RedParams::default()
        };
        let mut red = Red::new(p, MBPS_100, 500);
        let mut rng = fixed(0.999_999);
        red.on_enqueue(1, 14, 0, 1500, &mut rng);
        // One event at 2.6 s runs the five updates at 0.5, 1.0, ..., 2.5 s.
        red.on_dequeue(2_600_000_000, 14, 0);
        let mut want = 0.02;
        for _ in 0..5 {
            want += f64::min(0.01, want / 4.0);
        }
        close(red.max_p(), want);
        close(want, 0.058828125);
        // The same events, but also one per ms: the same max_p (lazy updates
        // are exact).
        let mut red2 = Red::new(p, MBPS_100, 500);
        red2.on_enqueue(1, 14, 0, 1500, &mut rng);
        for t in 1..2600u64 {
            red2.on_dequeue(t * 1_000_000, 14, 0);
        }
        close(red2.max_p(), red.max_p());

        // avg 6 < target_min 9: max_p *= 0.9 per interval while >= 0.01:
        // 0.02 x 0.9^7 = 0.00956 < 0.01 stops it after 7 updates.
        let mut red = Red::new(p, MBPS_100, 500);
        red.on_enqueue(1, 6, 0, 1500, &mut rng);
        red.on_dequeue(10_000_000_000, 6, 0);
        close(red.max_p(), 0.02 * 0.9f64.powi(7));
        // avg 10 in the target band: unchanged.
        let mut red = Red::new(p, MBPS_100, 500);
        red.on_enqueue(1, 10, 0, 1500, &mut rng);
        red.on_dequeue(10_000_000_000, 10, 0);
        close(red.max_p(), 0.02);
        // Increase stops once max_p > top 0.5: the last step from <= 0.5.
        let mut red = Red::new(p, MBPS_100, 500);
        red.on_enqueue(1, 14, 0, 1500, &mut rng);
        red.on_dequeue(100_000_000_000, 14, 0);
        let mut want = 0.02;
        while want <= 0.5 {
            want += f64::min(0.01, want / 4.0);
        }
        close(red.max_p(), want);

        // Idle: the timer sees avg decayed over the idle time. avg 14, idle
        // from 0.1 s; at 0.5 s, m = 0.4 s x 25,000 = 10,000 packets, and with
        // w_q = 1 the decayed avg is 0 < target_min: decrease.
        let mut red = Red::new(p, MBPS_100, 500);
        red.on_enqueue(1, 14, 0, 1500, &mut rng);
        red.on_dequeue(100_000_000, 0, 0);
        red.on_enqueue(600_000_000, 0, 0, 1500, &mut rng);
        close(red.max_p(), 0.02 * 0.9);
    }

    #[test]
    fn ared_target_band_boundaries() {
        // min_th 5, max_th 15: the band is [9, 11]. Boundary pairs on both
        // edges, avg set directly, one update at 0.5 s.
        let p = RedParams {
            adaptive: true,
            ..RedParams::default()
        };
        for (avg, want) in [
            (8.9, 0.02 * 0.9),
            (9.1, 0.02),
            (10.9, 0.02),
            (11.1, 0.02 + 0.005),
        ] {
            let mut red = Red::new(p, MBPS_100, 500);
            red.idle = false;
            red.avg = avg;
            red.on_dequeue(500_000_000, 20, 0);
            close(red.max_p(), want);
        }
    }

    #[test]
    fn ared_auto_params() {
        // 100 Mbit/s, 500 B: C = 25,000 pkt/s; target 5 ms is 125 packets,
        // so min_th = 62.5, max_th = 187.5, w_q = 1 - exp(-1/25000).
        let p = RedParams {
            auto_params: true,
            ..RedParams::default()
        };
        let red = Red::new(p, MBPS_100, 500);
        let (lo, hi, w) = red.thresholds();
        close(lo, 62.5);
        close(hi, 187.5);
        close(w, 1.0 - (-1.0f64 / 25_000.0).exp());
        // 1 Mbit/s: target queue 0.625 packets; min_th floor 5.
        let red = Red::new(p, Bandwidth::from_bps(1_000_000), 1000);
        let (lo, hi, _) = red.thresholds();
        close(lo, 5.0);
        close(hi, 15.0);
    }

    #[test]
    fn invariants_under_random_events() {
        // Probability in [0, 1], avg within [0, the largest queue seen],
        // count reset on every early mark; many seeds, every option.
        for seed in 0..64u64 {
            let mut draw = Xoshiro256PlusPlus::seed_from_u64(seed);
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed ^ 0xabcdef);
            let p = RedParams {
                gentle: seed & 1 == 0,
                wait: seed & 2 == 0,
                adaptive: seed & 4 == 0,
                hard_drop: seed & 8 == 0,
                weight: [0.002, 0.05, 0.5, 1.0][(seed as usize >> 4) & 3],
                ..RedParams::default()
            };
            let mut red = Red::new(p, MBPS_100, 1500);
            let mut now = 0u64;
            let mut q = 0u64;
            let mut max_q = 0u64;
            for _ in 0..5000 {
                now += draw.next_u64() % 2_000_000;
                if draw.next_u64() % 2 == 0 {
                    let v = red.on_enqueue(now, q, q * 1500, 1500, &mut rng);
                    // p_b is used only from min_th up.
                    if red.avg_pkts() >= red.min_th {
                        assert!((0.0..=1.0).contains(&red.p_b()));
                        assert!((0.0..=1.0).contains(&red.p_a(red.p_b())));
                    }
                    let hard_th = if red.gentle {
                        2.0 * red.max_th
                    } else {
                        red.max_th
                    };
                    if v == Verdict::Congested && red.avg_pkts() < hard_th {
                        assert_eq!(red.count(), 0);
                    }
                    if v == Verdict::Pass {
                        q = (q + 1).min(60);
                    }
                    max_q = max_q.max(q);
                } else if q > 0 {
                    q -= 1;
                    red.on_dequeue(now, q, q * 1500);
                }
                assert!(red.avg_pkts() >= 0.0 && red.avg_pkts() <= max_q as f64 + 1e-9);
                assert!(red.max_p() > 0.0 && red.max_p() <= 0.5 + 0.01);
            }
        }
    }
}
