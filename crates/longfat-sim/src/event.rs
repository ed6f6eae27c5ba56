//! The event queue: a binary heap ordered by (time, sequence number), so that
//! events at the same nanosecond run in the order they were scheduled.
//! Pending events grow with links and flows, not with packets: a link keeps
//! one event for the head of its pipe, a flow one per timer kind.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

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

#[derive(Debug)]
struct Entry {
    time_ns: u64,
    seq: u64,
    event: Event,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.time_ns == other.time_ns && self.seq == other.seq
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    // BinaryHeap is a max-heap: invert so the earliest (time, seq) is on top.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.time_ns, other.seq).cmp(&(self.time_ns, self.seq))
    }
}

#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    next_seq: u64,
}

impl EventQueue {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn schedule(&mut self, time_ns: u64, event: Event) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry {
            time_ns,
            seq,
            event,
        });
    }
    pub fn peek_time(&self) -> Option<u64> {
        self.heap.peek().map(|e| e.time_ns)
    }
    pub fn pop(&mut self) -> Option<(u64, Event)> {
        self.heap.pop().map(|e| (e.time_ns, e.event))
    }
    pub fn len(&self) -> usize {
        self.heap.len()
    }
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
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
