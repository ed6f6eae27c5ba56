//! The event queue, ordered by (time, sequence number), so that
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
    /// The receiver's GRO batch is handed to TCP (`TcpConfig::gro_segments`).
    GroFlush = 6,
    /// The TCP sender's pacing timer: its next departure is due
    /// (`tcp::pacing`, Linux `tp->pacing_timer`).
    Pace = 7,
}

pub const TIMER_KINDS: usize = 8;

impl Event {
    /// The event as one word: kind in the low byte, link or flow above it,
    /// timer kind in the top byte. Stored and loaded as a whole `u64`.
    #[inline(always)]
    fn pack(self) -> u64 {
        match self {
            Event::LinkArrival(l) => u64::from(l) << 8, // kind 0
            Event::LinkTxDone(l) => (u64::from(l) << 8) | 1,
            Event::Timer(f, k) => ((k as u64) << 56) | (u64::from(f) << 8) | 2,
            Event::Sample => 3,
            Event::MeasureStart => 4,
        }
    }

    #[inline(always)]
    fn unpack(w: u64) -> Self {
        let id = (w >> 8) as u32;
        match w & 0xff {
            0 => Event::LinkArrival(id),
            1 => Event::LinkTxDone(id),
            2 => Event::Timer(
                id,
                match w >> 56 {
                    0 => TimerKind::Start,
                    1 => TimerKind::Stop,
                    2 => TimerKind::Rto,
                    3 => TimerKind::DelayedAck,
                    4 => TimerKind::UdpSend,
                    5 => TimerKind::HostReady,
                    6 => TimerKind::GroFlush,
                    _ => TimerKind::Pace,
                },
            ),
            3 => Event::Sample,
            _ => Event::MeasureStart,
        }
    }
}

/// An event as the queue stores it (see `Event::pack`).
#[derive(Clone, Copy, Debug)]
pub struct PackedEvent(u64);

impl PackedEvent {
    /// The link of a `LinkArrival`, nearly every event: one test of the
    /// low byte instead of decoding the whole event and matching it again.
    #[inline(always)]
    pub fn link_arrival(self) -> Option<u32> {
        (self.0 & 0xff == 0).then_some((self.0 >> 8) as u32)
    }

    #[inline(always)]
    pub fn unpack(self) -> Event {
        Event::unpack(self.0)
    }
}

/// The heap's order key: (time, sequence) as one 128-bit number, so
/// comparing two is a single comparison.
#[inline(always)]
fn key(time_ns: u64, seq: u64) -> u128 {
    (u128::from(time_ns) << 64) | u128::from(seq)
}

#[inline(always)]
fn key_time(k: u128) -> u64 {
    (k >> 64) as u64
}

/// Events held back at once at most (`EventQueue::defer`); one more is
/// scheduled at once. One: `schedule` compares every new event's time with
/// each slot's, and a second slot cost the FQ-CoDel runs 1.2 M instructions
/// in 5 s (`benches/cost_fqcodel_*` cut to 5 s, callgrind) without holding
/// back one more tx-done there (docs/performance.md, round four).
const DEFER_SLOTS: usize = 1;

/// `EventQueue::deferred_ns` of a free slot.
const NO_DEFER: u64 = u64::MAX;

/// How many entries a new event passes at least before `insert_deep`
/// takes it (out of line), so that the near end's walk stays short.
const NEAR_WALK: usize = 12;

/// How far beyond the next event a new one may lie and still enter the
/// near list by `EventQueue::insert_deep`; a later one (a flow's
/// retransmission timer, a sample) goes to the heap and does not sit at
/// the list's far end, where `insert_deep` would pass it.
const NEAR_HORIZON_NS: u64 = 20_000_000;

/// Most entries the near list holds (see `EventQueue`).
const NEAR_CAP: usize = 64;

/// How many pending events a new one may have to pass to enter the near
/// list; one that would go deeper goes to the heap. At most `NEAR_CAP / 2`
/// (a spill leaves at most that many, see `EventQueue::spill`).
const NEAR_DEPTH: usize = 32;

/// Pending events ordered by (time, sequence).
///
/// Most events are scheduled a moment ahead of now: a link's next arrival
/// one transmission time after the last, a packet's next hop over a short
/// access link. With 10 and 100 flows a new event has on average fewer
/// than 2 pending events before it (traces of `benches/many-10.toml` and
/// `many-100.toml`, 2026-11-25). So the queue keeps a sorted *near list*:
/// an array in descending order, the next event last, where scheduling
/// walks back from the end past the few earlier events, and popping takes
/// the last entry. An event that would pass `NEAR_WALK` entries or more
/// finds its place from the list's far end instead and the earlier entries
/// move up as a block (`insert_deep`: with ten flows through FQ-CoDel, a
/// host link's next arrival lies past most pending events). An event that
/// would have to pass more than `NEAR_DEPTH` entries, or lies
/// `NEAR_HORIZON_NS` beyond the next one (a timer, an arrival over a long
/// pipe), goes to a 4-ary heap instead, and so do the later half of the
/// list when it fills up.
///
/// The near list holds times only, no sequence numbers: a new event's
/// sequence number would be the highest yet, so it goes after every entry
/// at its time, and the list's order among equal times is the order of
/// scheduling. The heap, which takes events out of that order, keys them
/// on (time, sequence). Between the two the queue keeps one rule: **at
/// any time, every heap entry comes before every near-list entry** (in
/// scheduling order). An event bound for the heap takes the near list's
/// entries at its time with it (they were scheduled before it), and a
/// spill moves every entry at the time where the halves meet. The entries
/// moved get fresh sequence numbers in their order, above every one in the
/// heap, which is where that rule puts them. So `pop` takes the near
/// list's next entry only if it is strictly earlier than the heap's root,
/// and the order is exactly (time, scheduling order).
#[derive(Debug)]
pub struct EventQueue {
    /// Descending: the next event is the last.
    near_times: [u64; NEAR_CAP],
    near_events: [u64; NEAR_CAP],
    near_len: usize,
    heap: Far,
    /// The next sequence number a heap entry gets.
    next_seq: u64,
    /// Events held back (`defer`): when each runs (`NO_DEFER`: a free
    /// slot; one in the past is spent), the event, and the order they were
    /// held back in.
    deferred_ns: [u64; DEFER_SLOTS],
    deferred_ev: [u64; DEFER_SLOTS],
    deferred_order: [u64; DEFER_SLOTS],
    next_order: u64,
}

impl Default for EventQueue {
    fn default() -> Self {
        Self {
            near_times: [0; NEAR_CAP],
            near_events: [0; NEAR_CAP],
            near_len: 0,
            heap: Far::Heap(Heap::default()),
            next_seq: 0,
            deferred_ns: [NO_DEFER; DEFER_SLOTS],
            deferred_ev: [0; DEFER_SLOTS],
            deferred_order: [0; DEFER_SLOTS],
            next_order: 0,
        }
    }
}

impl EventQueue {
    pub fn new() -> Self {
        Self::default()
    }

    /// A queue for a run that keeps about `pending` events pending at once
    /// (one per busy link and per flow timer): from `RADIX_PENDING` on, the
    /// events the near list does not take go to a radix heap instead of the
    /// 4-ary heap (see `RadixHeap`). The order is the same either way.
    pub fn for_pending(pending: usize) -> Self {
        let mut q = Self::default();
        if pending >= RADIX_PENDING {
            q.heap = Far::Radix(Box::default());
        }
        q
    }

    #[inline(always)]
    pub fn schedule(&mut self, time_ns: u64, event: Event) {
        if self.deferred_ns.contains(&time_ns) {
            // Events held back at this time were scheduled before this one.
            self.release_at(time_ns, u64::MAX);
        }
        self.insert(time_ns, event.pack());
    }

    /// `schedule` without the look at the held-back events.
    #[inline(always)]
    fn insert(&mut self, time_ns: u64, ev: u64) {
        // Room for one more (`n` is then provably below NEAR_CAP, so the
        // walk below needs no bounds checks).
        let n = if self.near_len < NEAR_CAP {
            self.near_len
        } else {
            self.spill().min(NEAR_CAP / 2)
        };
        // It is the newest event, so it goes after every entry at a later
        // time and before every entry at the same time or earlier: a
        // comparison of times alone places it.
        if n >= NEAR_WALK && self.near_times[n - NEAR_WALK] <= time_ns {
            self.insert_deep(n, time_ns, ev);
            return;
        }
        let mut i = n;
        while i > 0 && self.near_times[i - 1] <= time_ns {
            self.near_times[i] = self.near_times[i - 1];
            self.near_events[i] = self.near_events[i - 1];
            i -= 1;
        }
        self.near_times[i] = time_ns;
        self.near_events[i] = ev;
        self.near_len = n + 1;
    }

    /// `insert` of an event that would pass `NEAR_WALK` entries or more
    /// (`n` of them in the list): to the heap if it would pass
    /// `NEAR_DEPTH` or lies `NEAR_HORIZON_NS` beyond the next event; else
    /// its place is found from the list's far end (the latest entries,
    /// few once the far ones are in the heap) and the entries from there
    /// on move up as a block.
    #[inline(never)]
    fn insert_deep(&mut self, n: usize, time_ns: u64, ev: u64) {
        let n = n.min(NEAR_CAP - 1);
        if (n >= NEAR_DEPTH && self.near_times[n - NEAR_DEPTH] <= time_ns)
            || time_ns - self.near_times[n - 1] >= NEAR_HORIZON_NS
        {
            self.push_deep(time_ns, ev);
            return;
        }
        let mut p = 0;
        while self.near_times[p] > time_ns {
            p += 1;
        }
        self.near_times.copy_within(p..n, p + 1);
        self.near_events.copy_within(p..n, p + 1);
        self.near_times[p] = time_ns;
        self.near_events[p] = ev;
        self.near_len = n + 1;
    }

    /// Schedules `event` at `time_ns` as of now (`now_ns`) but holds it
    /// back: it enters the queue, in the place it has now, only when an
    /// event at the same time is scheduled (it comes first) or when its
    /// owner asks for it (`release`). An event never asked for is as if it
    /// ran after every event at its time scheduled before it, and no other
    /// is: an owner whose event does nothing observable unless something
    /// touches it then (a link's tx-done with nothing queued behind the
    /// packet) keeps it out of the queue while the order of every event is
    /// exactly what `schedule` would give. With every slot taken, it is
    /// scheduled at once.
    #[inline(always)]
    pub fn defer(&mut self, now_ns: u64, time_ns: u64, event: Event) {
        // A slot whose time has passed is spent (nothing is scheduled in
        // the past, so nothing can need its event any more).
        for i in 0..DEFER_SLOTS {
            let t = self.deferred_ns[i];
            if t == NO_DEFER || t < now_ns {
                self.deferred_ns[i] = time_ns;
                self.deferred_ev[i] = event.pack();
                self.deferred_order[i] = self.next_order;
                self.next_order += 1;
                return;
            }
        }
        self.schedule(time_ns, event);
    }

    /// The owner of `event`, held back at `time_ns` (`defer`), needs it:
    /// it enters the queue in its place (after the events held back before
    /// it at that time). Nothing if it entered already (or was scheduled
    /// at once).
    #[inline]
    pub fn release(&mut self, time_ns: u64, event: Event) {
        let ev = event.pack();
        for i in 0..DEFER_SLOTS {
            if self.deferred_ns[i] == time_ns && self.deferred_ev[i] == ev {
                self.release_at(time_ns, self.deferred_order[i]);
                return;
            }
        }
    }

    /// Puts the events held back at `time_ns`, up to the one held back as
    /// `upto` (every one: `u64::MAX`), into the queue in the order they
    /// were held back.
    #[cold]
    #[inline(never)]
    fn release_at(&mut self, time_ns: u64, upto: u64) {
        if time_ns == NO_DEFER {
            return; // free slots, not events
        }
        loop {
            let next = (0..DEFER_SLOTS)
                .filter(|&i| self.deferred_ns[i] == time_ns && self.deferred_order[i] <= upto)
                .min_by_key(|&i| self.deferred_order[i]);
            let Some(i) = next else {
                return;
            };
            self.deferred_ns[i] = NO_DEFER;
            self.insert(time_ns, self.deferred_ev[i]);
        }
    }

    /// Gives the near list's entries `lo..hi` to the heap in their
    /// scheduling order (the list is descending: from `hi - 1` down to
    /// `lo`), with fresh sequence numbers; the caller closes the gap.
    fn move_to_heap(&mut self, lo: usize, hi: usize) {
        for i in (lo..hi).rev() {
            self.heap
                .push(key(self.near_times[i], self.next_seq), self.near_events[i]);
            self.next_seq += 1;
        }
    }

    /// Puts a new event at `time_ns` in the heap (it would pass too many
    /// near entries), after the near list's entries at that time, which
    /// were scheduled before it and go first.
    #[cold]
    #[inline(never)]
    fn push_deep(&mut self, time_ns: u64, ev: u64) {
        let n = self.near_len;
        let lo = self.near_times[..n].partition_point(|&t| t > time_ns);
        let hi = self.near_times[..n].partition_point(|&t| t >= time_ns);
        if hi > lo {
            self.move_to_heap(lo, hi);
            self.near_times.copy_within(hi..n, lo);
            self.near_events.copy_within(hi..n, lo);
            self.near_len = n - (hi - lo);
        }
        self.heap.push(key(time_ns, self.next_seq), ev);
        self.next_seq += 1;
    }

    /// Moves the later half of the full near list to the heap, with every
    /// entry at the time where the halves meet (so that none at that time
    /// stays behind in the list). Returns the list's new length, at most
    /// `NEAR_CAP / 2`.
    #[cold]
    #[inline(never)]
    fn spill(&mut self) -> usize {
        const HALF: usize = NEAR_CAP / 2;
        let meet = self.near_times[HALF - 1];
        let upto = self.near_times.partition_point(|&t| t >= meet);
        self.move_to_heap(0, upto);
        self.near_times.copy_within(upto..NEAR_CAP, 0);
        self.near_events.copy_within(upto..NEAR_CAP, 0);
        self.near_len = NEAR_CAP - upto;
        self.near_len
    }

    /// Whether the next event is the near list's (else the heap's; the
    /// list is then empty, or its next entry no earlier than the heap's
    /// root, which at an equal time goes first).
    #[inline(always)]
    fn next_is_near(&self) -> bool {
        self.near_len > 0
            && self
                .heap
                .min_key()
                .is_none_or(|m| self.near_times[self.near_len - 1] < key_time(m))
    }

    #[inline]
    pub fn peek_time(&mut self) -> Option<u64> {
        if self.next_is_near() {
            Some(self.near_times[self.near_len - 1])
        } else {
            self.heap.min_key().map(key_time)
        }
    }

    /// Pops the next event if it is due at or before `until_ns`: one look
    /// at the two structures instead of `peek_time` and then `pop_packed`.
    #[inline(always)]
    pub fn pop_due(&mut self, until_ns: u64) -> Option<(u64, PackedEvent)> {
        let near = self.next_is_near();
        let t = if near {
            self.near_times[self.near_len - 1]
        } else {
            key_time(self.heap.min_key()?)
        };
        if t > until_ns {
            return None;
        }
        let ev = if near {
            self.near_len -= 1;
            self.near_events[self.near_len]
        } else {
            self.heap.pop().expect("peeked").1
        };
        Some((t, PackedEvent(ev)))
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(u64, Event)> {
        self.pop_packed().map(|(t, w)| (t, w.unpack()))
    }

    /// `pop` with the event still packed, for the engine's fast path on
    /// link arrivals (`PackedEvent::link_arrival`).
    #[inline]
    pub fn pop_packed(&mut self) -> Option<(u64, PackedEvent)> {
        let (t, ev) = if self.next_is_near() {
            self.near_len -= 1;
            (
                self.near_times[self.near_len],
                self.near_events[self.near_len],
            )
        } else {
            let (k, ev) = self.heap.pop()?;
            (key_time(k), ev)
        };
        Some((t, PackedEvent(ev)))
    }

    /// Whether the queue gives hints (`take_hint`).
    pub fn gives_hints(&self) -> bool {
        matches!(self.heap, Far::Radix(_))
    }

    /// The far event that will come next, once after each far event popped
    /// (radix heap only): at 100,000 flows about fifteen events ahead, time
    /// enough to load its state into the cache. A hint: the order of events
    /// is unchanged.
    #[inline(always)]
    pub fn take_hint(&mut self) -> Option<PackedEvent> {
        match &mut self.heap {
            Far::Radix(r) => r.hint.take().map(PackedEvent),
            Far::Heap(_) => None,
        }
    }

    /// Events pending (not counting those held back, `defer`).
    pub fn len(&self) -> usize {
        self.near_len + self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// From this many pending events on (`EventQueue::for_pending`), the far
/// events go to a radix heap: about 20,000 flows on a dumbbell (four
/// access-link directions each).
pub const RADIX_PENDING: usize = 100_000;

/// Where the events the near list does not take wait: a 4-ary heap, or
/// with very many pending (`EventQueue::for_pending`) a radix heap. One
/// predictable branch per operation.
#[derive(Debug)]
enum Far {
    Heap(Heap),
    Radix(Box<RadixHeap>),
}

impl Far {
    #[inline(always)]
    fn push(&mut self, k: u128, ev: u64) {
        match self {
            Far::Heap(h) => h.push(k, ev),
            Far::Radix(r) => r.push(k, ev),
        }
    }

    #[inline(always)]
    fn min_key(&self) -> Option<u128> {
        match self {
            Far::Heap(h) => h.min_key(),
            Far::Radix(r) => r.min_key(),
        }
    }

    #[inline(always)]
    fn pop(&mut self) -> Option<(u128, u64)> {
        match self {
            Far::Heap(h) => h.pop(),
            Far::Radix(r) => r.pop(),
        }
    }

    fn len(&self) -> usize {
        match self {
            Far::Heap(h) => h.len(),
            Far::Radix(r) => r.len,
        }
    }
}

/// The largest bucket allocation the radix heap keeps once it empties.
const RADIX_KEEP_ENTRIES: usize = 1024;

/// An entry of the radix heap: its (time, sequence) key and the event, in
/// 24 bytes (a `u128` field would align the entry to 32: with 500,000
/// pending events and vectors that grow by doubling, 8 MB more at the peak).
#[derive(Clone, Copy, Debug)]
struct RadixEntry {
    time_ns: u64,
    seq: u64,
    ev: u64,
}

impl RadixEntry {
    #[inline(always)]
    fn key(&self) -> u128 {
        key(self.time_ns, self.seq)
    }
}

/// A radix heap on (time, sequence) keys (Ahuja, Mehlhorn, Orlin and
/// Tarjan, 1990), for runs with hundreds of thousands of pending events.
///
/// A 4-ary heap of 300,000 entries is nine levels deep and every pop walks
/// all nine, at random places in 7 MB of keys that the flows' state keeps
/// evicting from the cache. A radix heap only appends to and scans
/// vectors: bucket `b` holds the keys whose highest bit that differs from
/// the last key popped is bit `b`, so every key in a bucket is below every
/// key in the buckets above it. Popping takes the least key of the lowest
/// bucket; the rest of that bucket then moves to lower buckets (they differ
/// from the new last key only below bit `b`). A key moves down at most once
/// per bit of the distance between it and the key popped before it was
/// scheduled, and every move is a sequential read and an append.
///
/// It needs every key pushed to be above the last key popped. That holds
/// here: the queue pops in (time, sequence) order, a new event is scheduled
/// no earlier than now with the highest sequence number yet, and an entry
/// the near list spills was pending, so above everything popped before.
#[derive(Debug)]
struct RadixHeap {
    buckets: Vec<Vec<RadixEntry>>,
    /// Bit `b` set: bucket `b` is not empty.
    occupied: u128,
    /// The last key popped (0 before the first).
    last: u128,
    /// The least key held, and where it is (valid while `len > 0`).
    min: u128,
    min_bucket: usize,
    min_pos: usize,
    len: usize,
    /// The event of the least key after the last pop, until the engine
    /// takes it (`EventQueue::take_hint`).
    hint: Option<u64>,
}

impl Default for RadixHeap {
    fn default() -> Self {
        Self {
            buckets: (0..128).map(|_| Vec::new()).collect(),
            occupied: 0,
            last: 0,
            min: u128::MAX,
            min_bucket: 0,
            min_pos: 0,
            len: 0,
            hint: None,
        }
    }
}

impl RadixHeap {
    /// The bucket of key `k` (above `last`): its highest bit that differs
    /// (0 for the first key if it is 0, the initial `last`).
    #[inline(always)]
    fn bucket(last: u128, k: u128) -> usize {
        127u32.saturating_sub((k ^ last).leading_zeros()) as usize
    }

    #[inline]
    fn push(&mut self, k: u128, ev: u64) {
        debug_assert!(k > self.last || k == 0);
        let b = Self::bucket(self.last, k);
        let bucket = &mut self.buckets[b];
        bucket.push(RadixEntry {
            time_ns: (k >> 64) as u64,
            seq: k as u64,
            ev,
        });
        self.occupied |= 1 << b;
        if k < self.min {
            (self.min, self.min_bucket, self.min_pos) = (k, b, bucket.len() - 1);
        }
        self.len += 1;
    }

    #[inline(always)]
    fn min_key(&self) -> Option<u128> {
        (self.len > 0).then_some(self.min)
    }

    #[inline]
    fn pop(&mut self) -> Option<(u128, u64)> {
        if self.len == 0 {
            return None;
        }
        let (k, b) = (self.min, self.min_bucket);
        let ev = self.buckets[b].swap_remove(self.min_pos).ev;
        self.last = k;
        self.len -= 1;
        // Bucket 0's other key (if any) differs from `k` only in bit 0: it
        // stays.
        if b > 0 && !self.buckets[b].is_empty() {
            self.redistribute(b);
        }
        if self.buckets[b].is_empty() {
            self.occupied &= !(1 << b);
        }
        self.find_min();
        if self.len > 0 {
            self.hint = Some(self.buckets[self.min_bucket][self.min_pos].ev);
        }
        Some((k, ev))
    }

    /// Moves bucket `b`'s keys to the lower buckets they belong in now that
    /// the last key popped is one of bucket `b`'s.
    #[inline(never)]
    fn redistribute(&mut self, b: usize) {
        let mut moving = std::mem::take(&mut self.buckets[b]);
        for e in moving.drain(..) {
            let to = Self::bucket(self.last, e.key());
            debug_assert!(to < b);
            self.buckets[to].push(e);
            self.occupied |= 1 << to;
        }
        // Keep a small allocation for the bucket's next keys; give a large
        // one back, or every bucket would keep the most it ever held (the
        // keys move from the high buckets to the low ones and back), which
        // raised the peak memory of a 100,000-flow run by 17 MB.
        if moving.capacity() <= RADIX_KEEP_ENTRIES {
            self.buckets[b] = moving;
        }
    }

    /// Finds the least key: in the lowest non-empty bucket.
    #[inline]
    fn find_min(&mut self) {
        if self.occupied == 0 {
            self.min = u128::MAX;
            return;
        }
        let b = self.occupied.trailing_zeros() as usize;
        let bucket = &self.buckets[b];
        let (mut pos, mut min) = (0, bucket[0].key());
        for (i, e) in bucket.iter().enumerate().skip(1) {
            if e.key() < min {
                (pos, min) = (i, e.key());
            }
        }
        (self.min, self.min_bucket, self.min_pos) = (min, b, pos);
    }
}

/// Children per heap node: a 4-ary heap is half as deep as a binary one and
/// a node's four children's keys share one or two cache lines.
const ARITY: usize = 4;

/// A 4-ary min-heap on (time, sequence), for the events that the near list
/// does not take.
///
/// Keys and events live in two arrays of plain integers (struct of arrays):
/// a sift compares keys only, and every entry is written and read back with
/// the same access width, so loads never wait on a partly matching store
/// (store-to-load forwarding fails when a wide load spans narrower stores,
/// and that stall was the largest cost of an array of structs here).
#[derive(Debug, Default)]
struct Heap {
    keys: Vec<u128>,
    events: Vec<u64>,
}

impl Heap {
    #[inline]
    fn push(&mut self, k: u128, ev: u64) {
        self.keys.push(k);
        self.events.push(ev);
        self.sift_up(self.keys.len() - 1, k, ev);
    }

    #[inline(always)]
    fn min_key(&self) -> Option<u128> {
        self.keys.first().copied()
    }

    #[inline]
    fn pop(&mut self) -> Option<(u128, u64)> {
        let k = *self.keys.first()?;
        let ev = self.events[0];
        let last_k = self.keys.pop().expect("non-empty");
        let last_ev = self.events.pop().expect("one event per key");
        if !self.keys.is_empty() {
            self.sift_down(0, last_k, last_ev);
        }
        Some((k, ev))
    }

    fn len(&self) -> usize {
        self.keys.len()
    }

    /// Moves entry (`k`, `ev`) up from free slot `i`.
    #[inline]
    fn sift_up(&mut self, mut i: usize, k: u128, ev: u64) {
        while i > 0 {
            let parent = (i - 1) / ARITY;
            let pk = self.keys[parent];
            if pk <= k {
                break;
            }
            self.keys[i] = pk;
            self.events[i] = self.events[parent];
            i = parent;
        }
        self.keys[i] = k;
        self.events[i] = ev;
    }

    /// Moves entry (`k`, `ev`) down from free slot `i`.
    #[inline(never)]
    fn sift_down(&mut self, mut i: usize, k: u128, ev: u64) {
        let n = self.keys.len();
        let keys = &mut self.keys[..n];
        let events = &mut self.events[..n];
        loop {
            let first = ARITY * i + 1;
            let (best, best_key) = if first + ARITY <= n {
                // All four children present (every level but the last):
                // one bounds check for the four, the compares unrolled.
                let c: &[u128; ARITY] = keys[first..first + ARITY]
                    .try_into()
                    .expect("four children");
                let (mut b, mut bk) = (0, c[0]);
                if c[1] < bk {
                    (b, bk) = (1, c[1]);
                }
                if c[2] < bk {
                    (b, bk) = (2, c[2]);
                }
                if c[3] < bk {
                    (b, bk) = (3, c[3]);
                }
                (first + b, bk)
            } else if first < n {
                let mut b = first;
                let mut bk = keys[first];
                for (c, &k) in keys.iter().enumerate().take(n).skip(first + 1) {
                    if k < bk {
                        b = c;
                        bk = k;
                    }
                }
                (b, bk)
            } else {
                break;
            };
            if k <= best_key {
                break;
            }
            keys[i] = best_key;
            events[i] = events[best];
            i = best;
        }
        keys[i] = k;
        events[i] = ev;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_survives_packing() {
        let kinds = [
            TimerKind::Start,
            TimerKind::Stop,
            TimerKind::Rto,
            TimerKind::DelayedAck,
            TimerKind::UdpSend,
            TimerKind::HostReady,
            TimerKind::GroFlush,
            TimerKind::Pace,
        ];
        for id in [0, 1, 255, 256, 65_535, 1 << 24, u32::MAX] {
            let mut all = vec![Event::LinkArrival(id), Event::LinkTxDone(id)];
            all.extend(kinds.iter().map(|&k| Event::Timer(id, k)));
            all.extend([Event::Sample, Event::MeasureStart]);
            for e in all {
                assert_eq!(Event::unpack(e.pack()), e);
            }
        }
    }

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

    #[test]
    fn ties_between_the_near_list_and_the_heap_keep_schedule_order() {
        // 100 events at one time: past NEAR_DEPTH of them, each new one
        // would pass too many to enter the list and goes to the heap. They
        // pop in the order scheduled, from either.
        let mut q = EventQueue::new();
        for i in 0..100 {
            q.schedule(7, Event::LinkArrival(i));
        }
        q.schedule(3, Event::Sample);
        assert!(q.heap.len() > 0, "some went to the heap");
        assert_eq!(q.pop(), Some((3, Event::Sample)));
        for i in 0..100 {
            assert_eq!(q.pop(), Some((7, Event::LinkArrival(i))));
        }
        assert!(q.is_empty());
    }

    /// A held-back event enters in the place it had when held back: before
    /// a later event at its time, on release after those scheduled before
    /// it; never needed, it never runs. With the slot taken another is
    /// scheduled at once (after the held-back one, at the same time), and
    /// a spent slot is free again.
    #[test]
    fn a_held_back_event_keeps_its_place() {
        let a = Event::LinkTxDone;
        let mut q = EventQueue::new();
        q.schedule(10, Event::LinkArrival(0));
        q.defer(0, 10, a(1));
        q.schedule(5, Event::LinkArrival(1));
        q.schedule(10, Event::LinkArrival(2)); // puts tx-done 1 first
        q.release(10, a(1)); // in already: nothing
        q.defer(0, 20, a(2));
        q.defer(0, 25, a(3)); // the slot is taken: scheduled at once
        q.release(20, a(2));
        q.defer(0, 30, a(4));
        q.defer(0, 30, a(5)); // at once, after tx-done 4
        q.defer(0, 35, a(6)); // never needed
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            [
                (5, Event::LinkArrival(1)),
                (10, Event::LinkArrival(0)),
                (10, a(1)),
                (10, Event::LinkArrival(2)),
                (20, a(2)),
                (25, a(3)),
                (30, a(4)),
                (30, a(5)),
            ]
        );
        // Tx-done 6's slot (35) is spent once the time is past it.
        q.defer(36, 40, a(7));
        q.schedule(40, Event::Sample);
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, [(40, a(7)), (40, Event::Sample)]);
    }

    /// Deep inserts (`insert_deep`: a block move after a search from the
    /// far end) and events past the horizon (to the heap) keep the order
    /// of a sorted reference, with many equal times near and far.
    #[test]
    fn deep_and_far_inserts_keep_time_then_schedule_order() {
        for radix in [false, true] {
            let mut q = if radix {
                EventQueue::for_pending(RADIX_PENDING)
            } else {
                EventQueue::new()
            };
            let mut want = std::collections::BTreeMap::new();
            let (mut seq, mut now, mut x) = (0u32, 0u64, 99u64);
            let mut deep = 0;
            for round in 0..20_000u32 {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                if round % 3 == 2 {
                    let got = q.pop();
                    let w = want
                        .pop_first()
                        .map(|((t, _), id)| (t, Event::LinkArrival(id)));
                    assert_eq!(got, w, "pop {round}");
                    if let Some((t, _)) = w {
                        now = t;
                    }
                    continue;
                }
                // Mostly near (few distinct times, so many ties), sometimes
                // about the horizon away, at or just short of it.
                let near = (x >> 33) % 24;
                let t = match (x >> 20) % 8 {
                    0 => now + NEAR_HORIZON_NS - 1 + (x >> 40) % 3,
                    1 => now + 2 * NEAR_HORIZON_NS,
                    _ => now + near,
                };
                if q.near_len >= NEAR_WALK && q.near_times[q.near_len - NEAR_WALK] <= t {
                    deep += 1;
                }
                q.schedule(t, Event::LinkArrival(seq));
                want.insert((t, seq), seq);
                seq += 1;
                assert_eq!(q.len(), want.len());
            }
            assert!(deep > 1000, "deep inserts: {deep}");
            while let Some(((t, _), id)) = want.pop_first() {
                assert_eq!(q.pop(), Some((t, Event::LinkArrival(id))));
            }
            assert!(q.is_empty());
        }
    }

    #[test]
    fn the_radix_heap_pops_in_key_order() {
        // Keys from 0 up, with runs of equal times, pushed out of order
        // between pops, as the queue does: every key above the last popped.
        let mut r = RadixHeap::default();
        let mut want = std::collections::BTreeSet::new();
        let mut seq = 0u64;
        let mut last = 0u128;
        let mut x = 12345u64;
        for round in 0..2000u64 {
            for _ in 0..(round % 7) {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let t = (last >> 64) as u64 + (x >> 40) % 5_000 * (x & 3);
                let k = key(t, seq);
                seq += 1;
                r.push(k, seq);
                want.insert((k, seq));
            }
            for _ in 0..(round % 5) {
                let got = r.pop();
                let w = want.pop_first();
                assert_eq!(got, w);
                if let Some((k, _)) = w {
                    last = k;
                }
            }
            assert_eq!(r.len, want.len());
            assert_eq!(r.min_key(), want.first().map(|e| e.0));
        }
        while let Some(w) = want.pop_first() {
            assert_eq!(r.pop(), Some(w));
        }
        assert_eq!(r.pop(), None);
    }

    #[test]
    fn a_queue_for_many_pending_events_uses_the_radix_heap() {
        assert!(matches!(EventQueue::new().heap, Far::Heap(_)));
        assert!(matches!(
            EventQueue::for_pending(RADIX_PENDING - 1).heap,
            Far::Heap(_)
        ));
        let mut q = EventQueue::for_pending(RADIX_PENDING);
        assert!(matches!(q.heap, Far::Radix(_)));
        q.schedule(0, Event::Sample);
        for i in 0..100 {
            q.schedule(7, Event::LinkArrival(i));
        }
        assert_eq!(q.pop(), Some((0, Event::Sample)));
        for i in 0..100 {
            assert_eq!(q.pop(), Some((7, Event::LinkArrival(i))));
        }
        assert!(q.is_empty());
    }

    #[test]
    fn a_full_near_list_spills_to_the_heap() {
        // Each event earlier than all before it enters the list at its end;
        // past NEAR_CAP the later half moves to the heap.
        let mut q = EventQueue::new();
        for i in 0..100u32 {
            q.schedule(1000 - u64::from(i), Event::LinkArrival(i));
        }
        assert!(q.heap.len() > 0, "the list spilled");
        for i in (0..100u32).rev() {
            assert_eq!(q.pop(), Some((1000 - u64::from(i), Event::LinkArrival(i))));
        }
        assert!(q.is_empty());
    }

    #[test]
    fn a_spill_takes_every_entry_at_the_time_where_the_halves_meet() {
        // A full list: 20 events at 9, 20 at 7, 24 at 5 (each group goes
        // at the list's end). Its halves meet inside the run at 7, so the
        // next schedule spills the 9s and every 7 (spilling exactly half
        // would leave the 8 earliest 7s in the list, behind the heap's
        // later ones). 7s scheduled after the spill come after them all.
        let mut q = EventQueue::new();
        for (time, ids) in [(9, 0..20), (7, 20..40), (5, 40..64)] {
            for i in ids {
                q.schedule(time, Event::LinkArrival(i));
            }
        }
        assert_eq!(q.heap.len(), 0, "all 64 in the list");
        for i in 64..70 {
            q.schedule(7, Event::LinkArrival(i));
        }
        assert_eq!(q.heap.len(), 40, "the spill took the 9s and the 7s");
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        let want: Vec<_> = (40..64)
            .map(|i| (5, Event::LinkArrival(i)))
            .chain((20..40).chain(64..70).map(|i| (7, Event::LinkArrival(i))))
            .chain((0..20).map(|i| (9, Event::LinkArrival(i))))
            .collect();
        assert_eq!(order, want);
    }
}

#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, rng_seed: proptest::test_runner::RngSeed::Fixed(17), ..ProptestConfig::default() })]

        /// Any interleaving of schedules and pops gives exactly the order of
        /// a sorted map on (time, sequence). `fill` sets how often an
        /// operation is a schedule (in eighths), so some runs keep a few
        /// events pending (near list only) and others hundreds (events too
        /// deep for the list, spills of a full list, pops that alternate
        /// between list and heap), with either far structure.
        #[test]
        fn matches_a_sorted_reference(
            radix in proptest::bool::ANY,
            fill in 2u8..8,
            ops in proptest::collection::vec((0u8..8, 0u8..3, 0u64..50), 1..600),
        ) {
            let mut q = if radix { EventQueue::for_pending(RADIX_PENDING) } else { EventQueue::new() };
            let mut reference: BTreeMap<(u64, u64), u32> = BTreeMap::new();
            let mut seq = 0u64;
            let mut now = 0u64;
            for (roll, other, dt) in ops {
                let op = if roll < fill { 1 } else if other == 0 { 2 } else { 0 };
                if op == 2 {
                    prop_assert_eq!(q.peek_time(), reference.keys().next().map(|k| k.0));
                } else if op == 0 && other == 2 {
                    // `pop_due` with a limit that the next event may pass.
                    let until = now + dt / 4;
                    let due = reference.keys().next().is_some_and(|k| k.0 <= until);
                    let want = if due {
                        reference.pop_first().map(|((t, _), l)| (t, Event::LinkArrival(l)))
                    } else {
                        None
                    };
                    prop_assert_eq!(q.pop_due(until).map(|(t, e)| (t, e.unpack())), want);
                    if let Some((t, _)) = want { now = t; }
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

        /// Held-back events (`defer`, `release`) give exactly the order of
        /// the sorted reference with each held back event in its place,
        /// less those never needed: at most `DEFER_SLOTS` held back at once
        /// (another is scheduled at once), one entering when an event at
        /// its time is scheduled or when it is released.
        #[test]
        fn held_back_events_match_a_sorted_reference(
            radix in proptest::bool::ANY,
            ops in proptest::collection::vec((0u8..10, 0u64..40, 0usize..4), 1..500),
        ) {
            let mut q = if radix { EventQueue::for_pending(RADIX_PENDING) } else { EventQueue::new() };
            // (time, sequence) -> id; ids of events held back and not in.
            let mut reference: BTreeMap<(u64, u64), u32> = BTreeMap::new();
            let mut held: Vec<(u64, u32)> = Vec::new();
            let mut seq = 0u64;
            let mut now = 0u64;
            for (roll, dt, pick) in ops {
                // A slot whose time has passed is spent.
                held.retain(|&(t, _)| t >= now);
                if roll < 4 {
                    let t = now + dt;
                    q.schedule(t, Event::LinkArrival(seq as u32));
                    held.retain(|&(ht, _)| ht != t);
                    reference.insert((t, seq), seq as u32);
                    seq += 1;
                } else if roll < 6 {
                    let t = now + dt / 8;
                    q.defer(now, t, Event::LinkArrival(seq as u32));
                    if held.len() < DEFER_SLOTS {
                        held.push((t, seq as u32));
                    } else {
                        held.retain(|&(ht, _)| ht != t);
                    }
                    reference.insert((t, seq), seq as u32);
                    seq += 1;
                } else if roll < 7 {
                    if !held.is_empty() {
                        let (t, id) = held[pick % held.len()];
                        q.release(t, Event::LinkArrival(id));
                        // It and those at its time held back before it.
                        held.retain(|&(ht, hid)| ht != t || hid > id);
                    }
                } else {
                    // The next event not held back; those held back before
                    // it were never needed (until then one may still be).
                    let next = reference
                        .iter()
                        .find(|&(&(t, s), _)| !held.contains(&(t, s as u32)))
                        .map(|(&k, &id)| (k, id));
                    let want = next.map(|((t, _), id)| (t, Event::LinkArrival(id)));
                    if let Some((k, _)) = next {
                        while reference.pop_first().is_some_and(|(k0, _)| k0 != k) {}
                        now = k.0;
                    }
                    prop_assert_eq!(q.pop(), want);
                }
            }
        }
    }
}
