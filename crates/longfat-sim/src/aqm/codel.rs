//! CoDel, "Controlled Delay Active Queue Management" (RFC 8289), as the
//! decision machine a link consults for each packet it takes off its queue.
//!
//! The RFC's §5 pseudocode dequeues in a loop: while it is time to drop, it
//! drops the head and dequeues the next. Here the link owns the queue and
//! runs that loop: it pops a packet, asks [`Codel::on_dequeue`], and on
//! [`Verdict::Drop`] frees the packet and asks again about the next one;
//! on [`Verdict::Pass`] or [`Verdict::Congested`] (a CE mark: the packet
//! goes on) it sends the packet; on an empty queue it calls
//! [`Codel::on_empty`] (the pseudocode's `r.p == NULL`). The machine keeps
//! which branch of the pseudocode's `dequeue` the next packet continues
//! (`Step`), so the sequence of decisions is the pseudocode's, packet for
//! packet.
//!
//! ECN follows Linux `codel_dequeue` (include/net/codel_impl.h): when the
//! discipline marks and the packet is ECN-capable, a packet that would be
//! dropped is CE-marked and sent instead, and the dequeue ends there (the
//! count still grows and the next drop time still advances).
//!
//! Choices where the RFC leaves room (docs/scenarios.md, "AQM"):
//! - `MAXPACKET` (§5.3: "SHOULD use interface MTU") is the largest packet
//!   this CoDel has seen, as Linux's `stats->maxpacket`; a queue holding at
//!   most that many bytes after the dequeue is never dropped from.
//! - The control law is the RFC's `t + interval / sqrt(count)` in f64 (a
//!   correctly rounded square root, so deterministic), not Linux's
//!   Newton-step fixed-point inverse square root (which differs by under
//!   0.1 % once converged).

use super::Verdict;

/// CoDel's parameters (RFC 8289 §4.2, §4.3).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CodelParams {
    /// Acceptable standing queue delay: 5 ms (RFC 8289 §4.4).
    pub target_ns: u64,
    /// Sliding window for the minimum sojourn: 100 ms (§4.3).
    pub interval_ns: u64,
}

impl Default for CodelParams {
    fn default() -> Self {
        Self {
            target_ns: 5_000_000,
            interval_ns: 100_000_000,
        }
    }
}

/// Where the next `on_dequeue` continues the pseudocode's `dequeue`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// A fresh call of `dequeue`.
    Start,
    /// Inside `while (now >= drop_next && dropping)`, after a drop.
    DropLoop,
    /// After the drop that entered the dropping state: this packet is
    /// returned whatever it is (its `dodequeue` only updates
    /// `first_above_time`).
    AfterFirstDrop,
}

/// One CoDel instance: a link's (CoDel) or one bucket's (FQ-CoDel).
#[derive(Clone, Debug)]
pub struct Codel {
    p: CodelParams,
    /// 0: sojourn not above target (or below MAXPACKET) since the last check.
    first_above_time_ns: u64,
    drop_next_ns: u64,
    count: u32,
    lastcount: u32,
    dropping: bool,
    step: Step,
    /// The largest packet seen (`MAXPACKET`).
    maxpacket_bytes: u32,
}

impl Codel {
    pub fn new(p: CodelParams) -> Self {
        Self {
            p,
            first_above_time_ns: 0,
            drop_next_ns: 0,
            count: 0,
            lastcount: 0,
            dropping: false,
            step: Step::Start,
            maxpacket_bytes: 0,
        }
    }

    /// Whether it is in the dropping state (RFC 8289 §5.5).
    pub fn dropping(&self) -> bool {
        self.dropping
    }

    /// The drop count of the current (or last) dropping state.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// When the next drop is due in the dropping state.
    pub fn drop_next_ns(&self) -> u64 {
        self.drop_next_ns
    }

    /// RFC 8289 §5.5 `control_law`: `t + interval / sqrt(count)`.
    fn control_law(&self, t_ns: u64, count: u32) -> u64 {
        t_ns + (self.p.interval_ns as f64 / f64::from(count.max(1)).sqrt()) as u64
    }

    /// RFC 8289 §5.4 `dodequeue`'s test for the packet just dequeued:
    /// `ok_to_drop`. `queue_bytes_after` is what the queue holds without it.
    fn ok_to_drop(&mut self, now_ns: u64, sojourn_ns: u64, queue_bytes_after: u64) -> bool {
        if sojourn_ns < self.p.target_ns || queue_bytes_after <= u64::from(self.maxpacket_bytes) {
            // Went below target: stay below for at least an interval.
            self.first_above_time_ns = 0;
            false
        } else if self.first_above_time_ns == 0 {
            // Just went above: if it stays above for an interval, drop.
            self.first_above_time_ns = now_ns + self.p.interval_ns;
            false
        } else {
            now_ns >= self.first_above_time_ns
        }
    }

    /// The queue was found empty (the pseudocode's `r.p == NULL`, in
    /// `dodequeue` and in `dequeue`).
    pub fn on_empty(&mut self) {
        self.first_above_time_ns = 0;
        self.dropping = false;
        self.step = Step::Start;
    }

    /// A packet of `size_bytes` left the queue after `sojourn_ns`, leaving
    /// `queue_bytes_after`; `markable`: the discipline marks and the packet
    /// is ECN-capable. [`Verdict::Drop`]: drop it and ask about the next
    /// packet (or call `on_empty`) at the same `now_ns`;
    /// [`Verdict::Congested`]: CE-mark it and send it; [`Verdict::Pass`]:
    /// send it.
    #[inline(always)]
    pub fn on_dequeue(
        &mut self,
        now_ns: u64,
        sojourn_ns: u64,
        queue_bytes_after: u64,
        size_bytes: u32,
        markable: bool,
    ) -> Verdict {
        self.maxpacket_bytes = self.maxpacket_bytes.max(size_bytes);
        let ok_to_drop = self.ok_to_drop(now_ns, sojourn_ns, queue_bytes_after);
        match self.step {
            Step::AfterFirstDrop => {
                self.step = Step::Start;
                Verdict::Pass
            }
            Step::DropLoop => {
                // The end of the loop body: `if (!r.ok_to_drop) dropping =
                // false; else drop_next = control_law(drop_next, count)`.
                if !ok_to_drop {
                    self.dropping = false;
                } else {
                    self.drop_next_ns = self.control_law(self.drop_next_ns, self.count);
                }
                self.drop_loop(now_ns, markable)
            }
            Step::Start if self.dropping => {
                if !ok_to_drop {
                    // Sojourn went below target: leave the dropping state.
                    self.dropping = false;
                    Verdict::Pass
                } else {
                    self.drop_loop(now_ns, markable)
                }
            }
            Step::Start if ok_to_drop => {
                // Enter the dropping state (§5.5). If it was left recently,
                // start from the drop rate it had reached: count = delta.
                let delta = self.count.wrapping_sub(self.lastcount);
                let since_ns = now_ns as i128 - self.drop_next_ns as i128;
                self.count = if delta > 1 && since_ns < 16 * i128::from(self.p.interval_ns) {
                    delta
                } else {
                    1
                };
                self.lastcount = self.count;
                self.drop_next_ns = self.control_law(now_ns, self.count);
                self.dropping = true;
                if markable {
                    Verdict::Congested
                } else {
                    self.step = Step::AfterFirstDrop;
                    Verdict::Drop
                }
            }
            Step::Start => Verdict::Pass,
        }
    }

    /// The loop `while (now >= drop_next && dropping) { drop; ++count; ... }`
    /// for the packet at hand: drop (or mark) it if the loop runs, else
    /// send it.
    fn drop_loop(&mut self, now_ns: u64, markable: bool) -> Verdict {
        if self.dropping && now_ns >= self.drop_next_ns {
            self.count = self.count.wrapping_add(1);
            if markable {
                // Linux codel_dequeue: mark, schedule the next signal, and
                // send this packet.
                self.drop_next_ns = self.control_law(self.drop_next_ns, self.count);
                self.step = Step::Start;
                Verdict::Congested
            } else {
                self.step = Step::DropLoop;
                Verdict::Drop
            }
        } else {
            self.step = Step::Start;
            Verdict::Pass
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;
    const PKT: u32 = 1500;

    /// A queue whose every packet has waited `sojourn_ns` and that always
    /// holds `backlog_bytes` behind the one dequeued, served one packet
    /// every `gap_ns` from `t0` to `t1`; returns the times of the drops.
    fn drops_under_constant_queue(
        c: &mut Codel,
        t0: u64,
        t1: u64,
        gap_ns: u64,
        sojourn_ns: u64,
        backlog_bytes: u64,
    ) -> Vec<u64> {
        let mut drops = vec![];
        let mut t = t0;
        while t < t1 {
            // One `dequeue` call: drops until a packet is sent.
            while c.on_dequeue(t, sojourn_ns, backlog_bytes, PKT, false) == Verdict::Drop {
                drops.push(t);
            }
            t += gap_ns;
        }
        drops
    }

    /// RFC 8289 §5: the sojourn stays at 10 ms (above the 5 ms target)
    /// from t = 0, served by a dequeue every 1 ms. The first packet sets
    /// first_above_time = 0 + interval = 100 ms; the first drop is at the
    /// first dequeue at or after it, entering the dropping state with count
    /// = 1 and drop_next = control_law(100, 1) = 200 ms. Each later drop
    /// increments count and sets drop_next = control_law(drop_next, count):
    /// 200 + 100/sqrt(2) = 270.71 ms, + 100/sqrt(3) = 328.45 ms, + 100/sqrt(4)
    /// = 378.45 ms; each drop happens at the next whole millisecond.
    #[test]
    fn drop_times_follow_the_control_law() {
        let mut c = Codel::new(CodelParams::default());
        let drops = drops_under_constant_queue(&mut c, 0, 330 * MS, MS, 10 * MS, 30_000);
        assert_eq!(drops, vec![100 * MS, 200 * MS, 271 * MS, 329 * MS]);
        assert!(c.dropping());
        assert_eq!(c.count(), 4);
        let want_next = 200.0e6 + 100.0e6 / 2f64.sqrt() + 100.0e6 / 3f64.sqrt() + 100.0e6 / 2.0;
        assert!((c.drop_next_ns() as f64 - want_next).abs() <= 2.0);
    }

    /// The drop loop: when several drops are overdue at one dequeue (the
    /// link was idle or slow), each drop is followed by a dequeue of the
    /// next packet and another drop if still due, as the RFC's while loop.
    #[test]
    fn overdue_drops_are_taken_in_one_dequeue() {
        let mut c = Codel::new(CodelParams::default());
        assert_eq!(c.on_dequeue(0, 10 * MS, 30_000, PKT, false), Verdict::Pass);
        assert_eq!(
            c.on_dequeue(100 * MS, 10 * MS, 30_000, PKT, false),
            Verdict::Drop
        );
        // The packet after the entering drop is sent whatever it is.
        assert_eq!(
            c.on_dequeue(100 * MS, 10 * MS, 30_000, PKT, false),
            Verdict::Pass
        );
        // Next dequeue at 300 ms: drop_next = 200 ms is overdue; count 2
        // -> drop_next = 200 + 70.71 = 270.71, still <= 300: drop again;
        // count 3 -> 328.45 > 300: send.
        assert_eq!(
            c.on_dequeue(300 * MS, 10 * MS, 30_000, PKT, false),
            Verdict::Drop
        );
        assert_eq!(
            c.on_dequeue(300 * MS, 10 * MS, 30_000, PKT, false),
            Verdict::Drop
        );
        assert_eq!(
            c.on_dequeue(300 * MS, 10 * MS, 30_000, PKT, false),
            Verdict::Pass
        );
        assert_eq!(c.count(), 3);
    }

    /// Leaving the dropping state: a packet whose sojourn is below target
    /// ends it, and a new excursion above target must last a full interval
    /// again before a drop.
    #[test]
    fn exits_when_sojourn_goes_below_target() {
        let mut c = Codel::new(CodelParams::default());
        let d = drops_under_constant_queue(&mut c, 0, 201 * MS, MS, 10 * MS, 30_000);
        assert_eq!(d, vec![100 * MS, 200 * MS]);
        assert!(c.dropping());
        assert_eq!(
            c.on_dequeue(201 * MS, 4 * MS, 30_000, PKT, false),
            Verdict::Pass
        );
        assert!(!c.dropping());
        // Above target again from 202 ms: no drop before 302 ms.
        let d = drops_under_constant_queue(&mut c, 202 * MS, 302 * MS, MS, 10 * MS, 30_000);
        assert!(d.is_empty(), "{d:?}");
        // Boundary pair: the sojourn exactly at target counts as above.
        let mut c = Codel::new(CodelParams::default());
        let d = drops_under_constant_queue(&mut c, 0, 101 * MS, MS, 5 * MS, 30_000);
        assert_eq!(d, vec![100 * MS]);
        let mut c = Codel::new(CodelParams::default());
        let d = drops_under_constant_queue(&mut c, 0, 300 * MS, MS, 5 * MS - 1, 30_000);
        assert!(d.is_empty());
    }

    /// RFC 8289 §5.5: re-entering the dropping state less than 16
    /// intervals after the last drop_next starts from count = count -
    /// lastcount (the drops of the last dropping state) when that exceeds
    /// 1; 16 intervals or more after, from 1. A boundary pair around the
    /// 16 intervals.
    #[test]
    fn count_carries_over_when_reentering_soon() {
        let mut c = Codel::new(CodelParams::default());
        // First state: enter at 100 ms (count 1, lastcount 1), drops at
        // 200, 271, 329, 379 ms (378.45 ms): count 5, drop_next = 378.45 +
        // 100/sqrt(5) = 423.17 ms.
        let d = drops_under_constant_queue(&mut c, 0, 380 * MS, MS, 10 * MS, 30_000);
        assert_eq!(d, vec![100 * MS, 200 * MS, 271 * MS, 329 * MS, 379 * MS]);
        assert_eq!(c.count(), 5);
        // Below target: leave; delta = count - lastcount = 5 - 1 = 4.
        assert_eq!(
            c.on_dequeue(380 * MS, MS, 30_000, PKT, false),
            Verdict::Pass
        );
        assert!(!c.dropping());
        let left = c.clone();
        // Above again from 381 ms: the first drop at 481 ms re-enters with
        // count = 4, drop_next = 481 + 100/sqrt(4) = 531 ms.
        let d = drops_under_constant_queue(&mut c, 381 * MS, 482 * MS, MS, 10 * MS, 30_000);
        assert_eq!(d, vec![481 * MS]);
        assert_eq!(c.count(), 4);
        assert_eq!(c.drop_next_ns(), 531 * MS);
        // Re-entering at 2022 ms: 2022 - 423.17 = 1598.8 ms < 16 x 100 ms.
        let mut c = left.clone();
        let d = drops_under_constant_queue(&mut c, 1922 * MS, 2023 * MS, MS, 10 * MS, 30_000);
        assert_eq!(d, vec![2022 * MS]);
        assert_eq!(c.count(), 4);
        // At 2024 ms: 1600.8 ms >= 16 intervals: count restarts at 1.
        let mut c = left;
        let d = drops_under_constant_queue(&mut c, 1924 * MS, 2025 * MS, MS, 10 * MS, 30_000);
        assert_eq!(d, vec![2024 * MS]);
        assert_eq!(c.count(), 1);
        assert_eq!(c.drop_next_ns(), 2124 * MS);
    }

    /// RFC 8289 §5.4: no drop while the queue holds at most one MTU
    /// (`bytes() <= maxpacket`), however long the sojourn.
    #[test]
    fn never_drops_with_at_most_one_packet_queued() {
        let mut c = Codel::new(CodelParams::default());
        let d = drops_under_constant_queue(&mut c, 0, 500 * MS, MS, 50 * MS, 1500);
        assert!(d.is_empty());
        let d = drops_under_constant_queue(&mut c, 500 * MS, 601 * MS, MS, 50 * MS, 1501);
        assert_eq!(d, vec![600 * MS]);
    }

    /// An empty queue resets first_above_time and leaves the dropping state.
    #[test]
    fn empty_queue_resets() {
        let mut c = Codel::new(CodelParams::default());
        let d = drops_under_constant_queue(&mut c, 0, 150 * MS, MS, 10 * MS, 30_000);
        assert_eq!(d, vec![100 * MS]);
        c.on_empty();
        assert!(!c.dropping());
        let d = drops_under_constant_queue(&mut c, 150 * MS, 250 * MS, MS, 10 * MS, 30_000);
        assert!(d.is_empty());
    }

    /// ECN (Linux codel_dequeue): a markable packet due for a drop is
    /// marked and sent, and the schedule advances as for a drop.
    #[test]
    fn marks_instead_of_dropping() {
        let mut c = Codel::new(CodelParams::default());
        let mut marks = vec![];
        let mut t = 0;
        while t < 330 * MS {
            match c.on_dequeue(t, 10 * MS, 30_000, PKT, true) {
                Verdict::Congested => marks.push(t),
                Verdict::Pass => {}
                Verdict::Drop => panic!("a markable packet dropped at {t}"),
            }
            t += MS;
        }
        assert_eq!(marks, vec![100 * MS, 200 * MS, 271 * MS, 329 * MS]);
    }
}
