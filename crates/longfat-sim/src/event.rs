//! The event queue: a 4-ary heap ordered by (time, sequence number), so that
//! events at the same nanosecond run in the order they were scheduled.
//! Pending events grow with links and flows, not with packets: a link keeps
//! one event for the head of its pipe, a flow one per timer kind.

/// What happens when an event fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The packet at the head of link `0`'s pipe reaches the far end.
    LinkArrival(u32),
    /// A priority link finished serializing its current packet.
    LinkTxDone(u32),
    /// A timer of flow `0`.
    Timer(u32, TimerKind),
    /// Periodic measurement sample.
    Sample,
    /// The start of the measurement window.
    MeasureStart,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TimerKind {
    Start = 0,
    Stop = 1,
    Rto = 2,
    DelayedAck = 3,
    UdpSend = 4,
    /// The sending host's queue has room again (see `Outbox::host_room_pkts`).
    HostReady = 5,
}

pub const TIMER_KINDS: usize = 6;

/// One pending event. Its order key is (time, sequence) read as one 128-bit
/// number, so comparing two entries is a single branch-free comparison.
#[derive(Clone, Copy, Debug)]
struct Entry {
    time_ns: u64,
    seq: u64,
    event: Event,
}

impl Entry {
    #[inline(always)]
    fn key(&self) -> u128 {
        (u128::from(self.time_ns) << 64) | u128::from(self.seq)
    }
}

/// Children per heap node: a 4-ary heap is half as deep as a binary one and
/// a node's four children share one or two cache lines.
const ARITY: usize = 4;

/// A 4-ary min-heap on (time, sequence).
///
/// Most events reschedule something at once (a link's next arrival, a
/// sender's next packet), so `pop` leaves its slot at the root as a hole
/// and the next `schedule` drops its entry straight into the hole and sifts
/// it down: one sift instead of a sift-down for the pop and a sift-up for
/// the push. The order of events is exactly (time, sequence) either way.
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: Vec<Entry>,
    next_seq: u64,
    /// The root was popped and not yet refilled.
    hole: bool,
}

impl EventQueue {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn schedule(&mut self, time_ns: u64, event: Event) {
        let e = Entry {
            time_ns,
            seq: self.next_seq,
            event,
        };
        self.next_seq += 1;
        if self.hole {
            self.hole = false;
            self.sift_down(0, e);
        } else {
            self.heap.push(e);
            self.sift_up(self.heap.len() - 1, e);
        }
    }

    /// Closes a hole left by `pop` with the last entry.
    #[inline]
    fn fill_hole(&mut self) {
        if self.hole {
            self.hole = false;
            let last = self.heap.pop().expect("a hole is a slot of the heap");
            if !self.heap.is_empty() {
                self.sift_down(0, last);
            }
        }
    }

    pub fn peek_time(&mut self) -> Option<u64> {
        self.fill_hole();
        self.heap.first().map(|e| e.time_ns)
    }

    pub fn pop(&mut self) -> Option<(u64, Event)> {
        self.fill_hole();
        let top = *self.heap.first()?;
        self.hole = true;
        Some((top.time_ns, top.event))
    }

    pub fn len(&self) -> usize {
        self.heap.len() - usize::from(self.hole)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    // Both sifts take the moving entry by value and treat slot `i` as free:
    // reading back an entry just written would stall on store forwarding.
    fn sift_up(&mut self, mut i: usize, e: Entry) {
        let k = e.key();
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if self.heap[parent].key() <= k {
                break;
            }
            self.heap[i] = self.heap[parent];
            i = parent;
        }
        self.heap[i] = e;
    }

    fn sift_down(&mut self, mut i: usize, e: Entry) {
        let n = self.heap.len();
        let k = e.key();
        loop {
            let first = ARITY * i + 1;
            if first >= n {
                break;
            }
            let last = (first + ARITY).min(n);
            let mut best = first;
            let mut best_key = self.heap[first].key();
            for c in first + 1..last {
                let ck = self.heap[c].key();
                if ck < best_key {
                    best = c;
                    best_key = ck;
                }
            }
            if k <= best_key {
                break;
            }
            self.heap[i] = self.heap[best];
            i = best;
        }
        self.heap[i] = e;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_then_schedule_order() {
        let mut q = EventQueue::new();
        q.schedule(20, Event::Sample);
        q.schedule(10, Event::LinkArrival(1));
        q.schedule(10, Event::LinkArrival(2));
        q.schedule(5, Event::MeasureStart);
        q.schedule(10, Event::LinkArrival(0));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (5, Event::MeasureStart),
                (10, Event::LinkArrival(1)),
                (10, Event::LinkArrival(2)),
                (10, Event::LinkArrival(0)),
                (20, Event::Sample),
            ]
        );
    }
}

#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, rng_seed: proptest::test_runner::RngSeed::Fixed(17), ..ProptestConfig::default() })]

        /// Any interleaving of schedules and pops gives exactly the order of
        /// a sorted map on (time, sequence), hole or no hole.
        #[test]
        fn matches_a_sorted_reference(ops in proptest::collection::vec((0u8..3, 0u64..50), 1..400)) {
            let mut q = EventQueue::new();
            let mut reference: BTreeMap<(u64, u64), u32> = BTreeMap::new();
            let mut seq = 0u64;
            let mut now = 0u64;
            for (op, dt) in ops {
                if op == 2 {
                    prop_assert_eq!(q.peek_time(), reference.keys().next().map(|k| k.0));
                } else if op == 0 {
                    let want = reference.pop_first().map(|((t, _), l)| (t, Event::LinkArrival(l)));
                    prop_assert_eq!(q.pop(), want);
                    if let Some((t, _)) = want { now = t; }
                } else {
                    let t = now + dt;
                    q.schedule(t, Event::LinkArrival(seq as u32));
                    reference.insert((t, seq), seq as u32);
                    seq += 1;
                }
                prop_assert_eq!(q.len(), reference.len());
            }
        }
    }
}
