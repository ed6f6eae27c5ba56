//! Links: a queue, a serializer of fixed rate and a pipe of fixed propagation
//! delay, in one direction.
//!
//! A DropTail FIFO link knows, when a packet is enqueued, exactly when it
//! will finish serializing (`max(now, previous tx_end) + size/rate`) and reach
//! the far end (`+ delay`). It therefore keeps every packet it holds, queued,
//! in service or propagating, in one ring in FIFO order and schedules only the
//! head's arrival: one event per packet per hop, and one pending event per
//! link. Queue occupancy at `now` is the count of entries whose `tx_end` is
//! still ahead, found by a pointer that only moves forward.
//!
//! Cut-through (`Cut`): a FIFO link that hands every packet on to a link
//! only it feeds and that never queues (a receiver's down link after the
//! bottleneck, proved in `budget::FedGroups`) also knows, at enqueue, when
//! the packet enters that link, leaves it and reaches its far end. It
//! hands the packet over then (`Enqueued::Feed`, `Link::feed`) and takes
//! no arrival event of its own: one event per packet fewer on a dumbbell.
//! Its ring keeps the slot until the packet reaches its far end, popped
//! lazily (`advance`), and the fed link counts the packet as offered only
//! once it has entered; readers (metrics) call `advance` first, so they
//! see the same counters at any time as without the cut.
//!
//! A strict-priority link cannot know departure times in advance (a later
//! high-priority arrival overtakes queued low-priority packets), so it
//! schedules each packet's end of serialization as an event, as htsim's
//! queues do, then hands the packet to the same kind of pipe ring.
//!
//! An AQM link (CoDel, FQ-CoDel, RED, PIE; module `aqm`) is served the same
//! way: its discipline decides at dequeue (CoDel's drops, FQ-CoDel's
//! scheduling, PIE's delay samples, RED's idle time), so departures are
//! events too. Each waiting packet carries its enqueue
//! time; the link turns the AQM's verdicts into CE marks or drops, which
//! needs the packets themselves (`enqueue_aqm`, `tx_done_aqm` take the
//! engine's pool and free what they drop). On an FQ-CoDel link a packet that
//! enters service with nothing queued behind it goes into the pipe at once,
//! as on a FIFO link, and its tx-done is held back by the event queue
//! (`EventQueue::defer`) until something needs its place: the link
//! remembers when the service ends, and the next arrival or reading
//! catches up (`AqmQueue::lazy_end_ns`, `settle`). The order of events
//! stays exactly the eager one.

use std::collections::VecDeque;

use rand_core::RngCore;
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::aqm::codel::{Codel, CodelParams};
use crate::aqm::fq_codel::{FqCodel, FqCodelParams};
use crate::aqm::pie::{Pie, PieParams};
use crate::aqm::red::{Red, RedParams};
use crate::aqm::{Queued, Verdict};
use crate::packet::{Dir, Ecn, Packet, PacketId, PacketPool};
use crate::prefetch::prefetch;
use crate::units::Bandwidth;

/// A queue limit, in whichever unit the scenario used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueLimit {
    Packets(u64),
    Bytes(u64),
}

impl QueueLimit {
    fn admits(self, queued_pkts: u64, queued_bytes: u64, size_bytes: u64) -> bool {
        match self {
            QueueLimit::Packets(n) => queued_pkts < n,
            QueueLimit::Bytes(b) => queued_bytes + size_bytes <= b,
        }
    }

    /// A queue holding this much is past the limit.
    fn exceeded_by(self, queued_pkts: u64, queued_bytes: u64) -> bool {
        match self {
            QueueLimit::Packets(n) => queued_pkts > n,
            QueueLimit::Bytes(b) => queued_bytes > b,
        }
    }
}

/// An active queue management discipline and its parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Aqm {
    /// CoDel (RFC 8289) on one FIFO.
    Codel(CodelParams),
    /// FQ-CoDel (RFC 8290).
    FqCodel(FqCodelParams),
    /// RED (gentle, adaptive) on one FIFO, packet mode; `mean_pkt_bytes`
    /// turns the link rate into packets per second (ns-3 `MeanPktSize`).
    Red {
        params: RedParams,
        mean_pkt_bytes: u32,
    },
    /// PIE (RFC 8033) on one FIFO.
    Pie(PieParams),
}

#[derive(Clone, Debug, PartialEq)]
pub enum QueueDiscipline {
    /// FIFO with tail drop. The limit counts packets waiting, not the one
    /// being serialized (ns-2 DropTail's `limit_`).
    DropTail(QueueLimit),
    /// Strict priority, class 0 first; each class its own tail-drop limit.
    /// Packets whose class is past the last one use the last class.
    Priority(Vec<QueueLimit>),
    /// Strict priority over `classes` classes sharing one buffer of `limit`.
    /// When it is full, an arrival pushes out the newest packet of the
    /// lowest-priority class below its own (a router's shared memory with
    /// push-out), else it is dropped: lower classes never take buffer from
    /// higher ones.
    PriorityShared { limit: QueueLimit, classes: usize },
    /// An AQM over a buffer of `limit` (packets waiting, not counting the
    /// one being serialized; over it, CoDel drops the arrival, FQ-CoDel
    /// drops from its fattest flow). `ecn`: CE-mark ECN-capable packets
    /// instead of dropping them when the AQM signals congestion. Boxed:
    /// every link keeps its spec, and RED's and PIE's parameters would
    /// otherwise grow each host's access links, so each flow.
    Aqm {
        aqm: Box<Aqm>,
        limit: QueueLimit,
        ecn: bool,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct LinkSpec {
    pub from: usize,
    pub to: usize,
    pub rate: Bandwidth,
    pub delay_ns: u64,
    pub queue: QueueDiscipline,
    /// Bernoulli probability that a packet is corrupted on the wire: it uses
    /// its serialization time and is discarded at the far end.
    pub loss_prob: f64,
    pub name: String,
}

/// Counters since the start of the run. In C order: the ones every packet
/// moves come first (see `Link`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct LinkCounters {
    pub offered_pkts: u64,
    pub offered_bytes: u64,
    pub departed_pkts: u64,
    pub departed_bytes: u64,
    pub drops_overflow: u64,
    pub drops_random: u64,
    /// Packets an AQM dropped (at enqueue or dequeue), not for a full
    /// buffer: those are `drops_overflow`.
    pub drops_aqm: u64,
    /// Packets an AQM marked CE instead of dropping them.
    pub ce_marks: u64,
}

/// Bytes one packet held by a link takes: its slot here, its body in the
/// engine's packet pool and the pool's free-list entry, twice over for the
/// doubling growth of vectors and rings (they never shrink).
pub const BYTES_PER_HELD_PACKET: u64 = 2
    * (std::mem::size_of::<Slot>()
        + std::mem::size_of::<Packet>()
        + std::mem::size_of::<PacketId>()) as u64;

/// A packet a link holds: its handle in the engine's packet pool, and what
/// the departure pointer and the arrival event read. 24 bytes, so walking a
/// queue does not drag whole packets through the cache.
#[derive(Clone, Copy, Debug)]
struct Slot {
    tx_end_ns: u64,
    arrive_ns: u64,
    id: PacketId,
    size_bytes: u16,
    corrupted: bool,
}

/// The slots a link holds, first in first out: a ring whose capacity is a
/// power of two, so a position is `(head + i) & mask` with no wrap-around
/// test (`VecDeque` tests for the wrap on every access; about ten accesses
/// per packet-hop). Grows by doubling, as `VecDeque` does, and never shrinks.
#[derive(Debug, Default)]
struct SlotRing {
    /// Every element is a slot (live or stale); the length is the capacity.
    buf: Vec<Slot>,
    head: usize,
    len: usize,
}

impl SlotRing {
    #[inline(always)]
    fn len(&self) -> usize {
        self.len
    }

    #[inline(always)]
    fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline(always)]
    fn pos(&self, i: usize) -> usize {
        (self.head + i) & self.buf.len().wrapping_sub(1)
    }

    /// The slot `i` places behind the head.
    #[inline(always)]
    fn get(&self, i: usize) -> Option<&Slot> {
        if i < self.len {
            Some(&self.buf[self.pos(i)])
        } else {
            None
        }
    }

    #[inline(always)]
    fn front(&self) -> Option<&Slot> {
        self.get(0)
    }

    /// Hints the cache to load the place `i` behind the head, whether or
    /// not it holds a live slot (a stale one costs nothing).
    #[inline(always)]
    fn prefetch(&self, i: usize) {
        prefetch(self.buf.get(self.pos(i)));
    }

    #[inline(always)]
    fn push_back(&mut self, s: Slot) {
        if self.len == self.buf.len() {
            self.grow(s);
        }
        let i = self.pos(self.len);
        self.buf[i] = s;
        self.len += 1;
    }

    #[inline(always)]
    fn pop_front(&mut self) -> Option<Slot> {
        if self.len == 0 {
            return None;
        }
        let s = self.buf[self.head];
        self.head = self.pos(1);
        self.len -= 1;
        Some(s)
    }

    /// Forgets the first `n` slots (at most `len`) without reading them.
    #[inline(always)]
    fn drop_front(&mut self, n: usize) {
        debug_assert!(n <= self.len);
        self.head = self.pos(n);
        self.len -= n;
    }

    /// Doubles the capacity (at least 4), the slots in order from 0.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, filler: Slot) {
        let cap = (2 * self.buf.len()).max(4);
        let mut buf = Vec::with_capacity(cap);
        buf.extend((0..self.len).map(|i| self.buf[self.pos(i)]));
        buf.resize(cap, filler);
        self.buf = buf;
        self.head = 0;
    }
}

impl std::ops::Index<usize> for SlotRing {
    type Output = Slot;

    #[inline(always)]
    fn index(&self, i: usize) -> &Slot {
        debug_assert!(i < self.len, "a live slot");
        &self.buf[self.pos(i)]
    }
}

/// A packet waiting in a strict-priority class or in service.
#[derive(Clone, Copy, Debug)]
struct Waiting {
    id: PacketId,
    size_bytes: u16,
    corrupted: bool,
}

/// How far ahead of a ring's read position to prefetch slots, and the
/// packet bodies of slots half as far ahead (their handles were prefetched
/// with their slots by then). A link's packets are read in ring order, but a
/// busy bottleneck's ring is megabytes long and was written one round trip
/// ago, so without a hint each read misses the cache. (Without the body
/// prefetch the 100,000-flow cut ran 25-30 % slower in wall time, which
/// cachegrind, modelling no prefetch, does not show: docs/performance.md,
/// session 43.)
pub const PREFETCH_AHEAD: usize = 16;

/// What the caller must schedule after `enqueue`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Enqueued {
    /// Accepted; schedule an arrival event at this time (pipe was empty).
    ScheduleArrival(u64),
    /// Accepted; schedule a tx-done event at this time (priority link was idle).
    ScheduleTxDone(u64),
    /// Accepted; an event is already pending.
    Queued,
    /// Dropped at the tail.
    Dropped,
    /// Accepted by pushing out lower-priority packets (free them with
    /// `Link::drain_pushed_out`); an event is already pending.
    QueuedPushingOut,
    /// Dropped, after pushing out lower-priority packets that did not make
    /// room (byte limits with larger arrivals).
    DroppedPushingOut,
    /// Nothing done: an AQM link, offer the packet with `enqueue_aqm`.
    Aqm,
    /// Accepted by a feeding link (`Cut::Feeder`): hand the packet to its
    /// next link now with `Link::feed`, to enter it at this time; or, if
    /// `corrupted`, it will be discarded at the far end: free it now.
    Feed { enter_ns: u64, corrupted: bool },
}

/// A link's part in cut-through (see the module's comment).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Cut {
    /// Arrival events as usual.
    None,
    /// A FIFO link whose packets all go on to `Fed` links: it hands them
    /// over at enqueue and takes no arrival events. Or an AQM link that
    /// corrupts nothing: it hands a packet over when it enters service
    /// (`Link::hand_over`), and its tx-done schedules nothing.
    Feeder,
    /// A FIFO link fed only by a `Feeder` link, that never queues: it gets
    /// its packets ahead of time (`Link::feed`), and its own enqueue is
    /// never called.
    Fed,
}

/// What the engine does after an AQM link's `enqueue_aqm` or `tx_done_aqm`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AqmService {
    /// Schedule a tx-done event at this time (a packet entered service),
    /// the way `tx_done_by` says.
    pub tx_done_ns: Option<u64>,
    pub tx_done_by: TxDoneBy,
    /// Schedule an arrival event at this time (the pipe was empty).
    pub arrival_ns: Option<u64>,
    /// Packets the link dropped and freed from the pool: held no more.
    pub freed: u64,
}

/// A packet a feeding AQM link hands to its fed link when it enters
/// service (its departure is fixed then): to enter the fed link at
/// `enter_ns`, its far end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HandOver {
    pub id: PacketId,
    pub size_bytes: u16,
    pub enter_ns: u64,
}

/// How the engine schedules an AQM link's tx-done (`AqmService`): the
/// event queue's `schedule`, `defer` or `release`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TxDoneBy {
    #[default]
    Schedule,
    /// A lazy service (`AqmQueue::lazy_end_ns`): its tx-done is held back
    /// until something needs its place in the queue.
    Defer,
    /// The lazy service's tx-done is needed (a packet arrived behind it):
    /// into the queue, where it was held back, if it is not there yet.
    Release,
}

#[derive(Debug)]
enum Queue {
    Fifo {
        limit: QueueLimit,
        /// Entries at the ring's front that finished serializing.
        n_departed: usize,
        /// Bytes of entries not yet departed.
        sys_bytes: u64,
        /// tx_end of the last packet accepted.
        busy_until_ns: u64,
    },
    /// A FIFO link handed its packets ahead of time (`Cut::Fed`): its ring
    /// holds slots that have not entered yet, in front of which
    /// `n_entered` counts the ones that have. It never queues, so a
    /// slot enters at its `tx_end_ns` less its transmit time.
    Fed {
        /// Entries at the ring's front that have entered the link.
        n_entered: usize,
        /// Entries at the ring's front that finished serializing.
        n_departed: usize,
        /// Bytes of entries entered and not yet departed.
        sys_bytes: u64,
        /// tx_end of the last packet handed over.
        busy_until_ns: u64,
    },
    /// Boxed: strict priority is rare, and the FIFO case keeps the link's
    /// hot fields small.
    Priority(Box<PriorityQueue>),
    /// Boxed, as `Priority`.
    Aqm(Box<AqmQueue>),
}

#[derive(Debug)]
enum AqmState {
    Codel {
        codel: Codel,
        q: VecDeque<Queued>,
        bytes: u64,
    },
    FqCodel(FqCodel),
    /// RED decides at enqueue, with its own random stream (see `Link::new`).
    Red {
        red: Red,
        q: VecDeque<Queued>,
        bytes: u64,
        rng: Xoshiro256PlusPlus,
    },
    /// PIE decides at enqueue, with its own random stream, and learns the
    /// queue delay at dequeue.
    Pie {
        pie: Pie,
        q: VecDeque<Queued>,
        bytes: u64,
        rng: Xoshiro256PlusPlus,
    },
}

/// What becomes of an arrival at a RED or PIE link, from the AQM's
/// verdict, whether the packet can be marked (ECN-capable on a link that
/// marks) and whether it fits the buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Admit {
    Queue { mark: bool },
    DropAqm,
    DropOverflow,
}

fn admit(v: Verdict, markable: bool, fits: bool) -> Admit {
    match v {
        Verdict::Drop => Admit::DropAqm,
        Verdict::Congested if !markable => Admit::DropAqm,
        // A packet the AQM passes or marks still needs room: the limit is
        // that of the FIFO behind the AQM (ns-3's internal queue, Linux's
        // child qdisc or `limit`). A marked packet that does not fit is
        // dropped unmarked and counted as an overflow.
        _ if !fits => Admit::DropOverflow,
        v => Admit::Queue {
            mark: v == Verdict::Congested,
        },
    }
}

#[derive(Debug)]
struct AqmQueue {
    state: AqmState,
    limit: QueueLimit,
    ecn: bool,
    in_service: Option<Queued>,
    /// Sojourn times of the packets dequeued since the last sample, and of
    /// those dequeued before it (`sojourn_total` adds the two: one
    /// accumulator per packet, not two).
    sojourn: SojournStats,
    before: SojournStats,
    /// Handles FQ-CoDel dropped during one dequeue, to free (kept for its
    /// capacity: no allocation per packet).
    dropped: Vec<u32>,
    /// FQ-CoDel's lazy dequeue: the packet in service entered it with
    /// nothing queued behind it, so it went into the pipe at once and its
    /// tx-done at this time was held back (`EventQueue::defer`).
    /// `LAZY_NONE`: not lazy. Held back, the tx-done enters the queue in
    /// its place when an arrival needs it (`TxDoneBy::Release`) or an event
    /// at its time is scheduled (it then finds this set). Never needed, it
    /// is as if it ran after the events at its time (all scheduled before
    /// the service began): an event at this time still finds the link
    /// busy; the first after it ends the service (`settle`).
    lazy_end_ns: u64,
    /// The packet in service is already in the pipe (it went lazily and a
    /// later arrival released its tx-done): the tx-done only counts it.
    in_pipe: bool,
}

/// `AqmQueue::lazy_end_ns` when no service ends lazily.
const LAZY_NONE: u64 = u64::MAX;

impl AqmQueue {
    /// Packets waiting and their bytes (not the one in service).
    fn waiting(&self) -> (u64, u64) {
        match &self.state {
            AqmState::Codel { q, bytes, .. } => (q.len() as u64, *bytes),
            AqmState::FqCodel(f) => f.len(),
            AqmState::Red { q, bytes, .. } | AqmState::Pie { q, bytes, .. } => {
                (q.len() as u64, *bytes)
            }
        }
    }
}

/// The random stream of a RED or PIE link's decisions: the link's own
/// stream jumped 2^128 draws ahead (xoshiro256++'s `jump`), so it never
/// overlaps the corruption draws, and no other stream moves (a DropTail
/// link with the same seed corrupts the same packets).
fn aqm_rng(link_rng: &Xoshiro256PlusPlus) -> Xoshiro256PlusPlus {
    let mut r = link_rng.clone();
    r.jump();
    r
}

/// Sojourn times (enqueue to start of service) of the packets an AQM link
/// dequeued over a sample interval.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SojournStats {
    pub pkts: u64,
    pub sum_ns: u64,
    pub max_ns: u64,
}

impl SojournStats {
    /// The stats of two intervals together.
    fn plus(self, o: Self) -> Self {
        Self {
            pkts: self.pkts + o.pkts,
            sum_ns: self.sum_ns + o.sum_ns,
            max_ns: self.max_ns.max(o.max_ns),
        }
    }
}

#[derive(Debug)]
struct PriorityQueue {
    limits: Vec<QueueLimit>,
    classes: Vec<VecDeque<Waiting>>,
    class_bytes: Vec<u64>,
    in_service: Option<Waiting>,
    /// One buffer for all classes, with push-out (`PriorityShared`).
    shared: Option<QueueLimit>,
    /// Packets pushed out, for the engine to free.
    pushed_out: Vec<PacketId>,
}

/// Random corruption on the wire: the threshold a draw of the link's random
/// stream must fall below. Boxed, and only on links with a loss
/// probability: the stream is 32 bytes that other links never read.
#[derive(Debug)]
struct Corruption {
    threshold: u64,
    rng: Xoshiro256PlusPlus,
}

/// A link's state during the run: three cache lines, in C order. An
/// arrival reads the first two (the ring's header, the queue state and the
/// departed and drop counters), an enqueue those and the third (delay,
/// transmit-time cache, rate, corruption). With many links these lines are
/// most of the engine's cache misses, so what only the set-up and the
/// metrics read, the `LinkSpec` with its name, is kept apart
/// (`Simulation::link_specs`, indexed like `links`).
#[derive(Debug)]
#[repr(C, align(64))]
pub struct Link {
    /// FIFO: every packet held; priority: packets propagating.
    ring: SlotRing,
    queue: Queue,
    pub counters: LinkCounters,
    /// Propagation delay (a copy of the spec's `delay_ns`).
    delay_ns: u64,
    /// The last packet size serialized and its transmission time: packets of
    /// a link nearly all have one or two sizes, and this saves a 128-bit
    /// division per packet.
    tx_time_ns: u64,
    rate: Bandwidth,
    /// None: the link corrupts nothing (no draw).
    corruption: Option<Box<Corruption>>,
    tx_size_bytes: u16,
    cut: Cut,
}

impl Link {
    pub fn new(spec: &LinkSpec, rng: Xoshiro256PlusPlus) -> Self {
        let loss_threshold = if spec.loss_prob <= 0.0 {
            0
        } else if spec.loss_prob >= 1.0 {
            u64::MAX
        } else {
            (spec.loss_prob * 2f64.powi(64)) as u64
        };
        let queue = match &spec.queue {
            QueueDiscipline::DropTail(limit) => Queue::Fifo {
                limit: *limit,
                n_departed: 0,
                sys_bytes: 0,
                busy_until_ns: 0,
            },
            QueueDiscipline::Priority(limits) => Queue::Priority(Box::new(PriorityQueue {
                limits: limits.clone(),
                classes: vec![VecDeque::new(); limits.len()],
                class_bytes: vec![0; limits.len()],
                in_service: None,
                shared: None,
                pushed_out: Vec::new(),
            })),
            QueueDiscipline::PriorityShared { limit, classes } => {
                Queue::Priority(Box::new(PriorityQueue {
                    limits: vec![QueueLimit::Packets(u64::MAX); *classes],
                    classes: vec![VecDeque::new(); *classes],
                    class_bytes: vec![0; *classes],
                    in_service: None,
                    shared: Some(*limit),
                    pushed_out: Vec::new(),
                }))
            }
            QueueDiscipline::Aqm { aqm, limit, ecn } => {
                let state = match &**aqm {
                    Aqm::Codel(p) => AqmState::Codel {
                        codel: Codel::new(*p),
                        q: VecDeque::new(),
                        bytes: 0,
                    },
                    // The hash perturbation comes from the link's stream
                    // (before any corruption draw).
                    Aqm::FqCodel(p) => AqmState::FqCodel(FqCodel::new(*p, rng.clone().next_u64())),
                    Aqm::Red {
                        params,
                        mean_pkt_bytes,
                    } => AqmState::Red {
                        red: Red::new(*params, spec.rate, *mean_pkt_bytes),
                        q: VecDeque::new(),
                        bytes: 0,
                        rng: aqm_rng(&rng),
                    },
                    Aqm::Pie(p) => AqmState::Pie {
                        pie: Pie::new(*p, spec.rate),
                        q: VecDeque::new(),
                        bytes: 0,
                        rng: aqm_rng(&rng),
                    },
                };
                Queue::Aqm(Box::new(AqmQueue {
                    state,
                    limit: *limit,
                    ecn: *ecn,
                    in_service: None,
                    sojourn: SojournStats::default(),
                    before: SojournStats::default(),
                    dropped: Vec::new(),
                    lazy_end_ns: LAZY_NONE,
                    in_pipe: false,
                }))
            }
        };
        Self {
            corruption: (loss_threshold != 0).then(|| {
                Box::new(Corruption {
                    threshold: loss_threshold,
                    rng,
                })
            }),
            queue,
            ring: SlotRing::default(),
            tx_size_bytes: 0,
            tx_time_ns: spec.rate.tx_time_ns(0),
            delay_ns: spec.delay_ns,
            rate: spec.rate,
            counters: LinkCounters::default(),
            cut: Cut::None,
        }
    }

    /// Sets the link's part in cut-through, before it carries any packet
    /// (the engine's set-up, from `budget::cut_through`). A fed link must
    /// be a DropTail FIFO link; a feeder too, or an AQM link that corrupts
    /// nothing (it hands a packet over when it enters service).
    pub fn set_cut(&mut self, cut: Cut) {
        if cut == Cut::None {
            return;
        }
        assert!(
            self.ring.is_empty() && self.cut == Cut::None,
            "cut-through set once, on a link not yet used"
        );
        if cut == Cut::Feeder && self.is_aqm() {
            assert!(self.corruption.is_none(), "an AQM feeder corrupts nothing");
            self.cut = cut;
            return;
        }
        let Queue::Fifo { busy_until_ns, .. } = self.queue else {
            panic!("cut-through on a link that is not a FIFO");
        };
        if cut == Cut::Fed {
            self.queue = Queue::Fed {
                n_entered: 0,
                n_departed: 0,
                sys_bytes: 0,
                busy_until_ns,
            };
        }
        self.cut = cut;
    }

    pub fn cut(&self) -> Cut {
        self.cut
    }

    /// Serialization time of `size_bytes` at this link's rate (cached for
    /// the last size).
    #[inline]
    fn tx_time(&mut self, size_bytes: u16) -> u64 {
        if size_bytes != self.tx_size_bytes {
            self.tx_size_bytes = size_bytes;
            self.tx_time_ns = self.rate.tx_time_ns(u64::from(size_bytes));
        }
        self.tx_time_ns
    }

    fn draw_corrupted(&mut self) -> bool {
        match self.corruption.as_deref_mut() {
            Some(c) => c.rng.next_u64() < c.threshold,
            None => false,
        }
    }

    /// Moves the FIFO departure pointer to `now_ns`. A feeder also lets go
    /// of the slots whose packets reached the far end, and a fed link
    /// counts the packets that entered it (see `Cut`); an AQM link ends a
    /// lazy service that finished before then (`settle`; one that ends at
    /// `now_ns` itself is still busy: see `AqmQueue::lazy_end_ns`).
    /// Inlined: every enqueue and every ACK's host-room question calls it.
    #[inline(always)]
    pub fn advance(&mut self, now_ns: u64) {
        if let Queue::Fifo {
            n_departed,
            sys_bytes,
            ..
        } = &mut self.queue
        {
            let entered = self.ring.len();
            depart(
                &self.ring,
                n_departed,
                entered,
                sys_bytes,
                &mut self.counters,
                now_ns,
            );
            if self.cut == Cut::Feeder {
                self.let_go(now_ns);
            }
        } else if let Queue::Fed { .. } = self.queue {
            self.advance_fed(now_ns);
        } else {
            self.advance_not_fifo(now_ns);
        }
    }

    /// A feeder's slots whose packets left it (handed on at enqueue, see
    /// `Cut`) are popped, the departure pointer's work done: at their
    /// departure, or, on a link that corrupts packets, at their arrival,
    /// where `pop_arrival` counts a corrupted one. Called after the
    /// departures.
    #[inline(always)]
    fn let_go(&mut self, now_ns: u64) {
        let Queue::Fifo { n_departed, .. } = &mut self.queue else {
            return;
        };
        if self.corruption.is_none() {
            // The departed slots are the ring's first `n_departed`.
            self.ring.drop_front(*n_departed);
            *n_departed = 0;
            return;
        }
        while let Some(head) = self.ring.front() {
            if head.arrive_ns > now_ns {
                break;
            }
            let corrupted = head.corrupted;
            self.ring.pop_front();
            debug_assert!(*n_departed > 0, "a packet arrived before it departed");
            *n_departed -= 1;
            if corrupted {
                self.counters.drops_random += 1;
            }
        }
    }

    /// A fed link's `advance`: first the packets that entered by `now_ns`
    /// (offered now, as if enqueued at their entry), then the departures.
    /// Only readers call it (metrics, queue lengths): the link's own path
    /// is `feed` and `pop_arrival`.
    #[cold]
    #[inline(never)]
    fn advance_fed(&mut self, now_ns: u64) {
        let Queue::Fed {
            n_entered,
            n_departed,
            sys_bytes,
            ..
        } = &mut self.queue
        else {
            return;
        };
        while *n_entered < self.ring.len() {
            let e = &self.ring[*n_entered];
            // It never queues: it entered one transmit time before its end.
            let b = u64::from(e.size_bytes);
            if e.tx_end_ns - self.rate.tx_time_ns(b) > now_ns {
                break;
            }
            *sys_bytes += b;
            *n_entered += 1;
            self.counters.offered_pkts += 1;
            self.counters.offered_bytes += b;
        }
        depart(
            &self.ring,
            n_departed,
            *n_entered,
            sys_bytes,
            &mut self.counters,
            now_ns,
        );
    }

    /// `advance` on a priority or AQM link: ends a lazy AQM service that
    /// finished before `now_ns` (`settle`). Out of line: the FIFO `advance`
    /// is inlined into every FIFO enqueue and host-queue reading.
    #[cold]
    #[inline(never)]
    fn advance_not_fifo(&mut self, now_ns: u64) {
        if let Queue::Aqm(a) = &self.queue {
            if a.lazy_end_ns < now_ns {
                self.settle();
            }
        }
    }

    /// `advance` at the end of the run, after every event at `end_ns`: a
    /// lazy AQM service ending at `end_ns` itself has ended too.
    pub fn advance_to_end(&mut self, end_ns: u64) {
        self.advance(end_ns);
        if let Queue::Aqm(a) = &self.queue {
            if a.lazy_end_ns == end_ns {
                self.settle();
            }
        }
    }

    /// AQM link: the lazy service (`AqmQueue::lazy_end_ns`) ended; what
    /// its skipped tx-done would have done with nothing queued: count the
    /// departure (the packet is in the pipe already) and go idle.
    #[cold]
    #[inline(never)]
    fn settle(&mut self) {
        self.settle_inline();
    }

    /// `settle`, inlined where an arrival ends a lazy service (every ACK
    /// of a lone flow's reverse direction).
    #[inline(always)]
    fn settle_inline(&mut self) {
        let Queue::Aqm(a) = &mut self.queue else {
            unreachable!("an AQM link")
        };
        let done = a.in_service.take().expect("a lazy service");
        a.lazy_end_ns = LAZY_NONE;
        self.counters.departed_pkts += 1;
        self.counters.departed_bytes += u64::from(done.size_bytes);
        if let AqmState::FqCodel(f) = &mut a.state {
            f.go_idle_from_one();
        }
    }

    /// AQM link: the packet in service, with nothing queued behind it,
    /// serializes until `end_ns`. If the pipe holds a packet that arrives
    /// after `end_ns`, it goes into the pipe at once and its tx-done is
    /// held back (`AqmQueue::lazy_end_ns`): returns true. Otherwise its
    /// tx-done is scheduled as usual: the tx-done would find the pipe empty
    /// and schedule its arrival, and that event's place among those at its
    /// time is the tx-done's to give.
    #[inline(always)]
    fn serve_lazily(&mut self, end_ns: u64) -> bool {
        let Queue::Aqm(a) = &mut self.queue else {
            unreachable!("an AQM link")
        };
        if self.cut == Cut::Feeder {
            // Handed over already (`HandOver`): its tx-done schedules
            // nothing, whatever the pipe holds.
            a.lazy_end_ns = end_ns;
            return true;
        }
        if self.ring.front().is_none_or(|h| h.arrive_ns <= end_ns) {
            return false;
        }
        let Queue::Aqm(a) = &mut self.queue else {
            unreachable!("an AQM link")
        };
        let p = a.in_service.expect("a packet in service");
        a.lazy_end_ns = end_ns;
        let none = self.push_to_pipe(end_ns, p);
        debug_assert!(none.is_none(), "the pipe was not empty");
        true
    }

    /// AQM link: packet `p`, served until `tx_end_ns`, goes into the pipe.
    /// Returns its arrival time if the pipe was empty (the event to
    /// schedule).
    #[inline(always)]
    fn push_to_pipe(&mut self, tx_end_ns: u64, p: Queued) -> Option<u64> {
        let arrive_ns = tx_end_ns + self.delay_ns;
        let was_empty = self.ring.is_empty();
        self.ring.push_back(Slot {
            tx_end_ns,
            arrive_ns,
            id: PacketId(p.handle),
            size_bytes: p.size_bytes,
            corrupted: p.corrupted,
        });
        was_empty.then_some(arrive_ns)
    }

    /// Packets waiting (not counting the one being serialized), and their
    /// bytes. A lazy AQM service ending at `now_ns` itself is still busy: a
    /// reading then was scheduled before the service began, as its held-back
    /// tx-done (see `AqmQueue::lazy_end_ns`).
    pub fn queue_len(&mut self, now_ns: u64) -> (u64, u64) {
        if let Queue::Aqm(a) = &self.queue {
            if a.lazy_end_ns < now_ns {
                self.settle();
            }
        } else {
            self.advance(now_ns);
        }
        match &self.queue {
            Queue::Fifo {
                n_departed,
                sys_bytes,
                ..
            } => {
                let sys = (self.ring.len() - n_departed) as u64;
                if sys == 0 {
                    (0, 0)
                } else {
                    let head = u64::from(self.ring[*n_departed].size_bytes);
                    (sys - 1, sys_bytes - head)
                }
            }
            Queue::Fed {
                n_entered,
                n_departed,
                sys_bytes,
                ..
            } => {
                let sys = (n_entered - n_departed) as u64;
                if sys == 0 {
                    (0, 0)
                } else {
                    let head = u64::from(self.ring[*n_departed].size_bytes);
                    (sys - 1, sys_bytes - head)
                }
            }
            Queue::Priority(pq) => (
                pq.classes.iter().map(|c| c.len() as u64).sum(),
                pq.class_bytes.iter().sum(),
            ),
            Queue::Aqm(a) => a.waiting(),
        }
    }

    /// How many more packets of `size_bytes` this link accepts now without a
    /// tail drop (a packet that finds the link idle goes straight into
    /// service). Priority links report no limit: they are never host queues.
    /// Asked before every ACK a sender handles, so it reads the FIFO state
    /// directly rather than through `queue_len`, and is inlined (its call
    /// cost about 11 instructions an ACK).
    #[inline(always)]
    pub fn room_pkts(&mut self, now_ns: u64, size_bytes: u64) -> u64 {
        self.advance(now_ns);
        let Queue::Fifo {
            limit,
            n_departed,
            sys_bytes,
            ..
        } = &self.queue
        else {
            return u64::MAX;
        };
        let in_system = self.ring.len() - n_departed;
        // Waiting packets and bytes (the head is in service), and one more
        // for the packet an idle link takes straight into service.
        let (queued_pkts, queued_bytes, idle) = if in_system == 0 {
            (0, 0, 1)
        } else {
            let head = u64::from(self.ring[*n_departed].size_bytes);
            (in_system as u64 - 1, sys_bytes - head, 0)
        };
        let waiting_room = match *limit {
            QueueLimit::Packets(n) => n.saturating_sub(queued_pkts),
            QueueLimit::Bytes(b) => b.saturating_sub(queued_bytes) / size_bytes.max(1),
        };
        waiting_room.saturating_add(idle)
    }

    /// When the packet now in service finishes serializing, so a waiting one
    /// moves up and the queue has a free slot (None when the link is idle).
    pub fn next_departure_ns(&mut self, now_ns: u64) -> Option<u64> {
        self.advance(now_ns);
        match &self.queue {
            Queue::Fifo { n_departed, .. } => self.ring.get(*n_departed).map(|e| e.tx_end_ns),
            Queue::Fed {
                n_entered,
                n_departed,
                ..
            } => (n_departed < n_entered).then(|| self.ring[*n_departed].tx_end_ns),
            Queue::Priority(pq) => pq.in_service.as_ref().map(|_| now_ns),
            Queue::Aqm(a) => a.in_service.as_ref().map(|_| now_ns),
        }
    }

    /// Offers packet `id` of `size_bytes` and strict-priority `class`.
    #[inline(always)]
    pub fn enqueue(&mut self, now_ns: u64, id: PacketId, size_bytes: u16, class: u8) -> Enqueued {
        let size = u64::from(size_bytes);
        if !matches!(self.queue, Queue::Fifo { .. }) {
            // Without a call: every packet an AQM link carries asks this.
            if matches!(self.queue, Queue::Aqm(_)) {
                return Enqueued::Aqm;
            }
            return self.enqueue_not_fifo(now_ns, id, size_bytes, class);
        }
        self.counters.offered_pkts += 1;
        self.counters.offered_bytes += size;
        let tx_ns = self.tx_time(size_bytes);
        self.advance(now_ns);
        let Queue::Fifo {
            limit,
            busy_until_ns,
            sys_bytes,
            n_departed,
        } = &mut self.queue
        else {
            unreachable!("a FIFO link")
        };
        // Packets not yet departed; the first of them is in service, the
        // rest wait (the limit counts those, as `queue_len` does).
        let in_system = (self.ring.len() - *n_departed) as u64;
        if in_system > 0 {
            let admitted = match *limit {
                QueueLimit::Packets(n) => in_system - 1 < n,
                QueueLimit::Bytes(b) => {
                    let head = u64::from(self.ring[*n_departed].size_bytes);
                    *sys_bytes - head + size <= b
                }
            };
            if !admitted {
                self.counters.drops_overflow += 1;
                return Enqueued::Dropped;
            }
        }
        let start = now_ns.max(*busy_until_ns);
        let tx_end_ns = start + tx_ns;
        *busy_until_ns = tx_end_ns;
        *sys_bytes += size;
        let (arrive_ns, corrupted, was_empty) = self.put_on_wire(tx_end_ns, id, size_bytes);
        if self.cut == Cut::Feeder {
            Enqueued::Feed {
                enter_ns: arrive_ns,
                corrupted,
            }
        } else if was_empty {
            Enqueued::ScheduleArrival(arrive_ns)
        } else {
            Enqueued::Queued
        }
    }

    /// A fed link (`Cut::Fed`) is handed packet `id` of `size_bytes`, to
    /// enter at `enter_ns` (its feeder's far end): it computes the packet's
    /// transmission and arrival as `enqueue` would at `enter_ns`, with no
    /// tail drop to test (the link never queues, `budget::FedGroups`), and
    /// returns the arrival to schedule if its pipe was empty. Packets are
    /// handed over in the order they enter.
    #[inline(always)]
    pub fn feed(&mut self, enter_ns: u64, id: PacketId, size_bytes: u16) -> Option<u64> {
        let tx_ns = self.tx_time(size_bytes);
        let Queue::Fed { busy_until_ns, .. } = &mut self.queue else {
            unreachable!("feed on a link that is not fed")
        };
        debug_assert!(*busy_until_ns <= enter_ns, "a fed link never queues");
        let tx_end_ns = enter_ns + tx_ns;
        *busy_until_ns = tx_end_ns;
        let (arrive_ns, _, was_empty) = self.put_on_wire(tx_end_ns, id, size_bytes);
        was_empty.then_some(arrive_ns)
    }

    /// A FIFO packet whose transmission ends at `tx_end_ns` goes on the
    /// wire (the ring), drawing whether it is corrupted there: its arrival,
    /// that draw, and whether the ring was empty before.
    #[inline(always)]
    fn put_on_wire(&mut self, tx_end_ns: u64, id: PacketId, size_bytes: u16) -> (u64, bool, bool) {
        let arrive_ns = tx_end_ns + self.delay_ns;
        let corrupted = self.draw_corrupted();
        let was_empty = self.ring.is_empty();
        self.ring.push_back(Slot {
            tx_end_ns,
            arrive_ns,
            id,
            size_bytes,
            corrupted,
        });
        (arrive_ns, corrupted, was_empty)
    }

    #[cold]
    #[inline(never)]
    fn enqueue_not_fifo(
        &mut self,
        now_ns: u64,
        id: PacketId,
        size_bytes: u16,
        class: u8,
    ) -> Enqueued {
        self.counters.offered_pkts += 1;
        self.counters.offered_bytes += u64::from(size_bytes);
        let tx_ns = self.tx_time(size_bytes);
        self.enqueue_priority(now_ns, id, size_bytes, class, tx_ns)
    }

    fn enqueue_priority(
        &mut self,
        now_ns: u64,
        id: PacketId,
        size_bytes: u16,
        class: u8,
        tx_ns: u64,
    ) -> Enqueued {
        let size = u64::from(size_bytes);
        let corrupted = self.draw_corrupted();
        let w = Waiting {
            id,
            size_bytes,
            corrupted,
        };
        let Queue::Priority(pq) = &mut self.queue else {
            unreachable!("enqueue_priority on a FIFO link")
        };
        let PriorityQueue {
            limits,
            classes,
            class_bytes,
            in_service,
            shared,
            pushed_out,
        } = &mut **pq;
        if in_service.is_none() {
            *in_service = Some(w);
            return Enqueued::ScheduleTxDone(now_ns + tx_ns);
        }
        let c = usize::from(class).min(classes.len() - 1);
        if let Some(limit) = shared {
            let waiting =
                |classes: &[VecDeque<Waiting>]| classes.iter().map(|q| q.len() as u64).sum::<u64>();
            let mut bytes: u64 = class_bytes.iter().sum();
            let mut pushed = false;
            while !limit.admits(waiting(classes), bytes, size) {
                // The newest packet of the lowest class below `c`.
                let Some(v) = (c + 1..classes.len())
                    .rev()
                    .find(|&v| !classes[v].is_empty())
                else {
                    break;
                };
                let victim = classes[v].pop_back().expect("non-empty");
                class_bytes[v] -= u64::from(victim.size_bytes);
                bytes -= u64::from(victim.size_bytes);
                pushed_out.push(victim.id);
                self.counters.drops_overflow += 1;
                pushed = true;
            }
            if !limit.admits(waiting(classes), bytes, size) {
                self.counters.drops_overflow += 1;
                return if pushed {
                    Enqueued::DroppedPushingOut
                } else {
                    Enqueued::Dropped
                };
            }
            classes[c].push_back(w);
            class_bytes[c] += size;
            return if pushed {
                Enqueued::QueuedPushingOut
            } else {
                Enqueued::Queued
            };
        }
        if !limits[c].admits(classes[c].len() as u64, class_bytes[c], size) {
            self.counters.drops_overflow += 1;
            return Enqueued::Dropped;
        }
        classes[c].push_back(w);
        class_bytes[c] += size;
        Enqueued::Queued
    }

    /// The packets the last enqueue pushed out (priority links with a
    /// shared buffer), for the engine to free.
    pub fn drain_pushed_out(&mut self, mut free: impl FnMut(PacketId)) -> u64 {
        match &mut self.queue {
            Queue::Priority(pq) => {
                let n = pq.pushed_out.len() as u64;
                pq.pushed_out.drain(..).for_each(&mut free);
                n
            }
            Queue::Fifo { .. } | Queue::Fed { .. } | Queue::Aqm(_) => 0,
        }
    }

    /// Priority link: the packet in service finished serializing. Returns
    /// (next tx-done time, arrival time to schedule if the pipe was empty).
    pub fn tx_done(&mut self, now_ns: u64) -> (Option<u64>, Option<u64>) {
        let Queue::Priority(pq) = &mut self.queue else {
            unreachable!("tx_done on a FIFO link")
        };
        let PriorityQueue {
            classes,
            class_bytes,
            in_service,
            ..
        } = &mut **pq;
        let done = in_service.take().expect("tx_done with nothing in service");
        let size = u64::from(done.size_bytes);
        self.counters.departed_pkts += 1;
        self.counters.departed_bytes += size;
        let arrive_ns = now_ns + self.delay_ns;
        let was_empty = self.ring.is_empty();
        self.ring.push_back(Slot {
            tx_end_ns: now_ns,
            arrive_ns,
            id: done.id,
            size_bytes: done.size_bytes,
            corrupted: done.corrupted,
        });
        let mut next_size = None;
        for (c, q) in classes.iter_mut().enumerate() {
            if let Some(w) = q.pop_front() {
                class_bytes[c] -= u64::from(w.size_bytes);
                next_size = Some(w.size_bytes);
                *in_service = Some(w);
                break;
            }
        }
        let next = next_size.map(|b| now_ns + self.tx_time(b));
        (next, was_empty.then_some(arrive_ns))
    }

    /// Whether this is an AQM link (served by `enqueue_aqm`/`tx_done_aqm`).
    pub fn is_aqm(&self) -> bool {
        matches!(self.queue, Queue::Aqm(_))
    }

    /// The sojourn times of the packets dequeued since the last call (AQM
    /// links; None for others), and starts a new interval.
    pub fn take_sojourn(&mut self) -> Option<SojournStats> {
        match &mut self.queue {
            Queue::Aqm(a) => {
                let s = std::mem::take(&mut a.sojourn);
                a.before = a.before.plus(s);
                Some(s)
            }
            _ => None,
        }
    }

    /// The sojourn times of every packet dequeued so far (AQM links).
    pub fn sojourn_total(&self) -> Option<SojournStats> {
        match &self.queue {
            Queue::Aqm(a) => Some(a.before.plus(a.sojourn)),
            _ => None,
        }
    }

    /// AQM link: offers packet `id` (in `pool`). The buffer's limit and the
    /// AQM decide; what is dropped is freed from `pool` and counted in
    /// `freed` (the arrival too, if it is dropped). A packet that finds the
    /// link idle is dequeued at once (sojourn 0), as a qdisc's.
    #[inline]
    pub fn enqueue_aqm(&mut self, now_ns: u64, id: PacketId, pool: &mut PacketPool) -> AqmService {
        if matches!(&self.queue, Queue::Aqm(a) if matches!(a.state, AqmState::FqCodel(_))) {
            self.enqueue_fq_codel(now_ns, id, pool)
        } else {
            self.enqueue_fifo_aqm(now_ns, id, pool)
        }
    }

    /// A packet offered to an AQM link: counted, its corruption drawn (in
    /// arrival order, as on every link), and wrapped for the discipline.
    #[inline(always)]
    fn offer_queued(&mut self, now_ns: u64, id: PacketId, size_bytes: u16) -> Queued {
        self.counters.offered_pkts += 1;
        self.counters.offered_bytes += u64::from(size_bytes);
        Queued {
            handle: id.0,
            size_bytes,
            corrupted: self.draw_corrupted(),
            enqueue_ns: now_ns,
        }
    }

    /// `enqueue_aqm` on a CoDel, RED or PIE link (one FIFO).
    #[inline(never)]
    fn enqueue_fifo_aqm(&mut self, now_ns: u64, id: PacketId, pool: &mut PacketPool) -> AqmService {
        let size_bytes = pool.get(id).size_bytes;
        let queued = self.offer_queued(now_ns, id, size_bytes);
        let Queue::Aqm(a) = &mut self.queue else {
            unreachable!("enqueue_aqm on a link without AQM")
        };
        let mut out = AqmService::default();
        match &mut a.state {
            AqmState::Codel { q, bytes, .. } => {
                // Linux codel_qdisc_enqueue: tail drop at the limit.
                if a.limit
                    .admits(q.len() as u64, *bytes, u64::from(size_bytes))
                {
                    q.push_back(queued);
                    *bytes += u64::from(size_bytes);
                } else {
                    self.counters.drops_overflow += 1;
                    pool.remove(id);
                    out.freed += 1;
                }
            }
            AqmState::FqCodel(_) => unreachable!("FQ-CoDel: enqueue_fq_codel"),
            AqmState::Red { red, q, bytes, rng } => {
                // aqm/red.rs: RED sees every arrival, before the buffer's
                // limit (ns-3 RedQueueDisc::DoEnqueue, then its internal
                // queue; Linux red_enqueue, then the child qdisc).
                let v = red.on_enqueue(now_ns, q.len() as u64, *bytes, u32::from(size_bytes), rng);
                let markable = a.ecn && pool.get(id).is_ect();
                let fits = a
                    .limit
                    .admits(q.len() as u64, *bytes, u64::from(size_bytes));
                let to = admit(v, markable, fits);
                Self::admit_fifo(to, queued, q, bytes, id, pool, &mut self.counters, &mut out);
            }
            AqmState::Pie { pie, q, bytes, rng } => {
                // RFC 8033 Appendix B, ns-3 PieQueueDisc::DoEnqueue, Linux
                // pie_qdisc_enqueue: the buffer's limit first, then PIE.
                let fits = a
                    .limit
                    .admits(q.len() as u64, *bytes, u64::from(size_bytes));
                let to = if fits {
                    let ect = pool.get(id).is_ect();
                    let v = pie.on_enqueue(
                        now_ns,
                        q.len() as u64,
                        *bytes,
                        u32::from(size_bytes),
                        ect,
                        rng,
                    );
                    admit(v, a.ecn && ect, true)
                } else {
                    Admit::DropOverflow
                };
                Self::admit_fifo(to, queued, q, bytes, id, pool, &mut self.counters, &mut out);
            }
        }
        if a.in_service.is_none() {
            out.tx_done_ns = self.start_service(now_ns, pool, &mut out.freed);
        }
        out
    }

    /// `enqueue_aqm` on an FQ-CoDel link, apart from the other
    /// disciplines' arms (the path every packet takes: hash, bucket,
    /// limit; or, on an idle link, `serve_idle` and `begin_service`) and
    /// inlined, with them, into the engine's out-of-line `enqueue_aqm`.
    #[inline(always)]
    fn enqueue_fq_codel(&mut self, now_ns: u64, id: PacketId, pool: &mut PacketPool) -> AqmService {
        let p = pool.get(id);
        let size_bytes = p.size_bytes;
        // FQ-CoDel's flow key: flow id, direction and PLT module.
        let key = (u64::from(p.flow) << 16)
            | (u64::from(p.dir == Dir::Backward) << 8)
            | u64::from(p.module);
        let ect = p.is_ect();
        let queued = self.offer_queued(now_ns, id, size_bytes);
        let mut out = AqmService::default();
        if let Queue::Aqm(a) = &mut self.queue {
            if a.lazy_end_ns != LAZY_NONE {
                if a.lazy_end_ns < now_ns {
                    self.settle_inline();
                } else {
                    // The link is busy until then (at `lazy_end_ns` itself
                    // this arrival was scheduled before the service began,
                    // as eagerly it ran first): the held-back tx-done is
                    // needed, to dequeue this arrival.
                    out.tx_done_ns = Some(a.lazy_end_ns);
                    out.tx_done_by = TxDoneBy::Release;
                    a.lazy_end_ns = LAZY_NONE;
                    a.in_pipe = true;
                }
            }
        }
        let Queue::Aqm(a) = &mut self.queue else {
            unreachable!("an AQM link")
        };
        let AqmState::FqCodel(f) = &mut a.state else {
            unreachable!("an FQ-CoDel link")
        };
        let b = f.bucket_of(key);
        if a.in_service.is_none() && f.is_idle() && !a.limit.exceeded_by(1, u64::from(size_bytes)) {
            // An idle link: `enqueue` and `start_service`'s dequeue in one
            // (`FqCodel::serve_idle`).
            let markable = a.ecn && ect;
            let counters = &mut self.counters;
            let d = f.serve_idle(now_ns, b, queued, markable, |v| {
                counters.drops_aqm += 1;
                pool.remove(PacketId(v.handle));
                out.freed += 1;
            });
            if let Some(d) = d {
                let end_ns = self.begin_service(now_ns, d.packet, d.mark, pool);
                out.tx_done_ns = Some(end_ns);
                if self.serve_lazily(end_ns) {
                    out.tx_done_by = TxDoneBy::Defer;
                }
            }
            return out;
        }
        f.enqueue(b, queued);
        let (n, bytes) = f.len();
        if a.limit.exceeded_by(n, bytes) {
            let counters = &mut self.counters;
            f.drop_from_fattest(|v| {
                counters.drops_overflow += 1;
                pool.remove(PacketId(v.handle));
                out.freed += 1;
            });
        }
        if a.in_service.is_none() {
            out.tx_done_ns = self.start_service(now_ns, pool, &mut out.freed);
        }
        out
    }

    /// RED or PIE link: carries out `to` for the arrival `queued` (packet
    /// `id`) at the FIFO `q` holding `bytes`.
    #[allow(clippy::too_many_arguments)]
    fn admit_fifo(
        to: Admit,
        queued: Queued,
        q: &mut VecDeque<Queued>,
        bytes: &mut u64,
        id: PacketId,
        pool: &mut PacketPool,
        counters: &mut LinkCounters,
        out: &mut AqmService,
    ) {
        match to {
            Admit::Queue { mark } => {
                if mark {
                    pool.get_mut(id).set_ecn(Ecn::Ce);
                    counters.ce_marks += 1;
                }
                q.push_back(queued);
                *bytes += u64::from(queued.size_bytes);
            }
            Admit::DropAqm | Admit::DropOverflow => {
                if to == Admit::DropAqm {
                    counters.drops_aqm += 1;
                } else {
                    counters.drops_overflow += 1;
                }
                pool.remove(id);
                out.freed += 1;
            }
        }
    }

    /// AQM link: the packet in service finished serializing; it goes into
    /// the pipe and the AQM picks the next (dropping or marking on the way).
    pub fn tx_done_aqm(&mut self, now_ns: u64, pool: &mut PacketPool) -> AqmService {
        let Queue::Aqm(a) = &mut self.queue else {
            unreachable!("tx_done_aqm on a link without AQM")
        };
        let done = a
            .in_service
            .take()
            .expect("tx_done with nothing in service");
        self.counters.departed_pkts += 1;
        self.counters.departed_bytes += u64::from(done.size_bytes);
        let mut out = AqmService::default();
        if a.in_pipe || a.lazy_end_ns != LAZY_NONE {
            // It went into the pipe when it entered service (`serve_lazily`);
            // this tx-done was held back and then needed, by an arrival
            // (`in_pipe`) or by an event scheduled at its time.
            debug_assert!(a.lazy_end_ns == LAZY_NONE || a.lazy_end_ns == now_ns);
            a.in_pipe = false;
            a.lazy_end_ns = LAZY_NONE;
        } else if self.cut != Cut::Feeder {
            // (A feeder handed it over when it entered service.)
            out.arrival_ns = self.push_to_pipe(now_ns, done);
        }
        if let Queue::Aqm(a) = &mut self.queue {
            if let AqmState::FqCodel(f) = &mut a.state {
                if f.is_empty() {
                    // What `start_service`'s dequeue does with nothing
                    // queued, and all it does: the buckets leave the
                    // lists, and the link goes idle.
                    f.go_idle();
                } else if let Some(end_ns) =
                    self.start_fq_codel_service(now_ns, pool, &mut out.freed)
                {
                    out.tx_done_ns = Some(end_ns);
                    // Nothing behind it: the tx-done held back
                    // (`serve_lazily`).
                    if self.fq_codel_is_empty() && self.serve_lazily(end_ns) {
                        out.tx_done_by = TxDoneBy::Defer;
                    }
                }
                return out;
            }
        }
        out.tx_done_ns = self.start_service(now_ns, pool, &mut out.freed);
        out
    }

    /// A feeding AQM link (`Cut::Feeder`): the packet that just entered
    /// service, serialized until `end_ns`, to hand to its fed link now
    /// (the engine's `feed`, as for a DropTail feeder's `Enqueued::Feed`).
    #[inline(always)]
    pub fn hand_over(&self, end_ns: u64) -> HandOver {
        let Queue::Aqm(a) = &self.queue else {
            unreachable!("an AQM link")
        };
        let p = a.in_service.as_ref().expect("a packet in service");
        HandOver {
            id: PacketId(p.handle),
            size_bytes: p.size_bytes,
            enter_ns: end_ns + self.delay_ns,
        }
    }

    /// Nothing waits in this FQ-CoDel link's buckets.
    #[inline(always)]
    fn fq_codel_is_empty(&self) -> bool {
        matches!(&self.queue, Queue::Aqm(a) if matches!(&a.state, AqmState::FqCodel(f) if f.is_empty()))
    }

    /// `start_service` on an FQ-CoDel link, inlined into `tx_done_aqm`
    /// (where every FQ-CoDel packet with others queued behind it enters
    /// service) without `start_service`'s match.
    #[inline(always)]
    fn start_fq_codel_service(
        &mut self,
        now_ns: u64,
        pool: &mut PacketPool,
        freed: &mut u64,
    ) -> Option<u64> {
        let Queue::Aqm(a) = &mut self.queue else {
            unreachable!("an AQM link")
        };
        let AqmState::FqCodel(f) = &mut a.state else {
            unreachable!("an FQ-CoDel link")
        };
        let ecn = a.ecn;
        let pool_ro: &PacketPool = pool;
        let dropped = &mut a.dropped;
        let d = f.dequeue(
            now_ns,
            |p| ecn && pool_ro.get(PacketId(p.handle)).is_ect(),
            |p| dropped.push(p.handle),
        );
        if !dropped.is_empty() {
            for h in dropped.drain(..) {
                self.counters.drops_aqm += 1;
                pool.remove(PacketId(h));
                *freed += 1;
            }
        }
        let d = d?;
        Some(self.begin_service(now_ns, d.packet, d.mark, pool))
    }

    /// Dequeues the next packet into service, if any; returns when it
    /// finishes serializing.
    fn start_service(
        &mut self,
        now_ns: u64,
        pool: &mut PacketPool,
        freed: &mut u64,
    ) -> Option<u64> {
        let Queue::Aqm(a) = &mut self.queue else {
            unreachable!("an AQM link")
        };
        let ecn = a.ecn;
        let counters = &mut self.counters;
        let markable = |pool: &PacketPool, h: u32| ecn && pool.get(PacketId(h)).is_ect();
        let next = match &mut a.state {
            AqmState::Codel { codel, q, bytes } => loop {
                let Some(p) = q.pop_front() else {
                    codel.on_empty();
                    break None;
                };
                *bytes -= u64::from(p.size_bytes);
                let m = markable(pool, p.handle);
                let sojourn = now_ns - p.enqueue_ns;
                match codel.on_dequeue(now_ns, sojourn, *bytes, u32::from(p.size_bytes), m) {
                    Verdict::Pass => break Some((p, false)),
                    Verdict::Congested if m => break Some((p, true)),
                    Verdict::Congested | Verdict::Drop => {
                        counters.drops_aqm += 1;
                        pool.remove(PacketId(p.handle));
                        *freed += 1;
                    }
                }
            },
            AqmState::FqCodel(f) => {
                let pool_ro: &PacketPool = pool;
                let dropped = &mut a.dropped;
                let d = f.dequeue(
                    now_ns,
                    |p| markable(pool_ro, p.handle),
                    |p| dropped.push(p.handle),
                );
                if !dropped.is_empty() {
                    for h in dropped.drain(..) {
                        counters.drops_aqm += 1;
                        pool.remove(PacketId(h));
                        *freed += 1;
                    }
                }
                d.map(|d| (d.packet, d.mark))
            }
            AqmState::Red { red, q, bytes, .. } => match q.pop_front() {
                Some(p) => {
                    *bytes -= u64::from(p.size_bytes);
                    if !q.is_empty() {
                        red.on_dequeue(now_ns, q.len() as u64, *bytes);
                    }
                    Some((p, false))
                }
                None => {
                    // The transmitter is free and nothing waits: RED's idle
                    // time starts now (ns-3 RedQueueDisc::DoDequeue finding
                    // the queue empty; Linux red_dequeue's
                    // red_start_of_idle_period), not when the last packet
                    // entered service.
                    red.on_dequeue(now_ns, 0, 0);
                    None
                }
            },
            AqmState::Pie { pie, q, bytes, .. } => q.pop_front().map(|p| {
                *bytes -= u64::from(p.size_bytes);
                let sojourn = now_ns - p.enqueue_ns;
                pie.on_dequeue(
                    now_ns,
                    sojourn,
                    q.len() as u64,
                    *bytes,
                    u32::from(p.size_bytes),
                );
                (p, false)
            }),
        };
        let (p, mark) = next?;
        Some(self.begin_service(now_ns, p, mark, pool))
    }

    /// AQM link: `p`, just dequeued (`mark`: CE-mark it), enters service;
    /// returns when it finishes serializing.
    #[inline(always)]
    fn begin_service(&mut self, now_ns: u64, p: Queued, mark: bool, pool: &mut PacketPool) -> u64 {
        let Queue::Aqm(a) = &mut self.queue else {
            unreachable!("an AQM link")
        };
        if mark {
            pool.get_mut(PacketId(p.handle)).set_ecn(Ecn::Ce);
            self.counters.ce_marks += 1;
        }
        let sojourn = now_ns - p.enqueue_ns;
        let s = &mut a.sojourn;
        s.pkts += 1;
        s.sum_ns += sojourn;
        s.max_ns = s.max_ns.max(sojourn);
        a.in_service = Some(p);
        now_ns + self.tx_time(p.size_bytes)
    }

    /// The head of the pipe reached the far end: what it carried, and what
    /// the engine does next on this link (the next arrival to schedule and
    /// the packet body to start loading), read from the ring in one go.
    #[inline(always)]
    pub fn pop_arrival(&mut self, now_ns: u64) -> Arrival {
        let head = self
            .ring
            .pop_front()
            .expect("arrival event with an empty pipe");
        self.ring.prefetch(PREFETCH_AHEAD);
        debug_assert_eq!(head.arrive_ns, now_ns);
        match &mut self.queue {
            Queue::Fifo {
                n_departed,
                sys_bytes,
                ..
            } => pop_departed(n_departed, sys_bytes, &mut self.counters, head.size_bytes),
            Queue::Fed {
                n_entered,
                n_departed,
                sys_bytes,
                ..
            } => {
                // The same for its entry, counted lazily too (`advance_fed`).
                if *n_entered > 0 {
                    *n_entered -= 1;
                } else {
                    let b = u64::from(head.size_bytes);
                    *sys_bytes += b;
                    self.counters.offered_pkts += 1;
                    self.counters.offered_bytes += b;
                }
                pop_departed(n_departed, sys_bytes, &mut self.counters, head.size_bytes);
            }
            _ => {}
        }
        if head.corrupted {
            self.counters.drops_random += 1;
        }
        let len = self.ring.len();
        Arrival {
            id: head.id,
            intact: !head.corrupted,
            next_arrival_ns: (len > 0).then(|| self.ring[0].arrive_ns),
            upcoming: (len > PREFETCH_AHEAD / 2).then(|| self.ring[PREFETCH_AHEAD / 2].id),
        }
    }

    /// Hints the cache to load the slot at the head of the pipe and the one
    /// after the tail (where the next packet offered goes).
    #[inline(always)]
    pub fn prefetch_ends(&self) {
        self.ring.prefetch(0);
        self.ring.prefetch(self.ring.len);
    }

    /// The packet at the head of the pipe (None: pipe empty).
    #[inline(always)]
    pub fn head_packet(&self) -> Option<PacketId> {
        self.packet_behind_head(0)
    }

    /// The packet `i` places behind the head of the pipe (None: fewer held).
    #[inline(always)]
    pub fn packet_behind_head(&self, i: usize) -> Option<PacketId> {
        self.ring.get(i).map(|s| s.id)
    }

    /// When the head of the pipe reaches the far end (None: pipe empty).
    pub fn next_arrival_ns(&self) -> Option<u64> {
        self.ring.front().map(|e| e.arrive_ns)
    }
}

/// Moves a FIFO's departure pointer over the first `entered` slots to
/// `now_ns`: those whose transmission ended by then are counted departed.
#[inline(always)]
fn depart(
    ring: &SlotRing,
    n_departed: &mut usize,
    entered: usize,
    sys_bytes: &mut u64,
    counters: &mut LinkCounters,
    now_ns: u64,
) {
    while *n_departed < entered {
        ring.prefetch(*n_departed + PREFETCH_AHEAD);
        let e = &ring[*n_departed];
        if e.tx_end_ns > now_ns {
            break;
        }
        let b = u64::from(e.size_bytes);
        *sys_bytes -= b;
        *n_departed += 1;
        counters.departed_pkts += 1;
        counters.departed_bytes += b;
    }
}

/// The ring's head leaves a FIFO: past the departure pointer, or, if the
/// pointer (which moves lazily, see `Link::advance`) has not reached it,
/// counted departed here; the rest catch up when someone next looks.
#[inline(always)]
fn pop_departed(
    n_departed: &mut usize,
    sys_bytes: &mut u64,
    counters: &mut LinkCounters,
    size_bytes: u16,
) {
    if *n_departed > 0 {
        *n_departed -= 1;
    } else {
        let b = u64::from(size_bytes);
        *sys_bytes -= b;
        counters.departed_pkts += 1;
        counters.departed_bytes += b;
    }
}

/// What `Link::pop_arrival` hands the engine.
#[derive(Clone, Copy, Debug)]
pub struct Arrival {
    pub id: PacketId,
    /// False: corrupted on the wire, to be discarded.
    pub intact: bool,
    /// When the new head of the pipe arrives (None: pipe empty).
    pub next_arrival_ns: Option<u64>,
    /// The packet `PREFETCH_AHEAD / 2` places behind the new head, whose
    /// body the engine should start loading.
    pub upcoming: Option<PacketId>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::SeedableRng;

    #[test]
    fn slot_ring_is_first_in_first_out_across_wraps_and_growth() {
        let slot = |i: u64| Slot {
            tx_end_ns: i,
            arrive_ns: i,
            id: PacketId(i as u32),
            size_bytes: 0,
            corrupted: false,
        };
        let mut ring = SlotRing::default();
        let mut model = VecDeque::new();
        let (mut pushed, mut popped) = (0u64, 0u64);
        // Push runs of growing length between pops, so the ring grows while
        // its live part wraps around the end of the buffer.
        for round in 0..40u64 {
            for _ in 0..(round % 7 + 1) {
                ring.push_back(slot(pushed));
                model.push_back(pushed);
                pushed += 1;
            }
            for _ in 0..(round % 5) {
                let want = model.pop_front();
                assert_eq!(ring.pop_front().map(|s| s.arrive_ns), want);
                popped += u64::from(want.is_some());
            }
            assert_eq!(ring.len(), model.len());
            for (i, &v) in model.iter().enumerate() {
                assert_eq!(ring[i].arrive_ns, v);
                assert_eq!(ring.get(i).map(|s| s.arrive_ns), Some(v));
            }
            assert!(ring.get(model.len()).is_none());
            assert_eq!(ring.front().map(|s| s.arrive_ns), model.front().copied());
        }
        assert!(popped > 0 && ring.buf.len().is_power_of_two());
    }

    #[test]
    fn a_link_is_three_cache_lines_its_arrival_fields_in_the_first_two() {
        use std::mem::offset_of;
        assert_eq!(std::mem::size_of::<Link>(), 192);
        // What `pop_arrival` reads or writes: the ring's header, the FIFO
        // state, the departed counters and `drops_random`.
        let counters = offset_of!(Link, counters);
        assert!(offset_of!(Link, queue) + std::mem::size_of::<Queue>() <= 128);
        assert!(counters + offset_of!(LinkCounters, drops_random) + 8 <= 128);
    }

    fn link(queue: QueueDiscipline, loss_prob: f64) -> Link {
        Link::new(
            &LinkSpec {
                from: 0,
                to: 1,
                rate: Bandwidth::from_bps(1_000_000_000),
                delay_ns: 1_000_000,
                queue,
                loss_prob,
                name: "l".into(),
            },
            Xoshiro256PlusPlus::seed_from_u64(1),
        )
    }

    /// Offers a 1500-byte packet whose handle is its sequence number.
    fn offer(l: &mut Link, now_ns: u64, seq: u32, class: u8) -> Enqueued {
        l.enqueue(now_ns, PacketId(seq), 1500, class)
    }

    /// The head's arrival: (its sequence number if intact, next arrival).
    fn arrive(l: &mut Link, now_ns: u64) -> (Option<u32>, Option<u64>) {
        let a = l.pop_arrival(now_ns);
        assert_eq!(
            a.next_arrival_ns,
            l.next_arrival_ns(),
            "the new head's arrival"
        );
        (a.intact.then_some(a.id.0), a.next_arrival_ns)
    }

    #[test]
    fn fifo_timing_to_the_nanosecond() {
        let mut l = link(QueueDiscipline::DropTail(QueueLimit::Packets(10)), 0.0);
        // Two back-to-back packets at t=0, one at t=100us (link idle again).
        assert_eq!(
            offer(&mut l, 0, 0, 0),
            Enqueued::ScheduleArrival(12_000 + 1_000_000)
        );
        assert_eq!(offer(&mut l, 0, 1, 0), Enqueued::Queued);
        assert_eq!(offer(&mut l, 100_000, 2, 0), Enqueued::Queued);
        let (p, next) = arrive(&mut l, 1_012_000);
        assert_eq!((p.unwrap(), next), (0, Some(1_024_000)));
        let (p, next) = arrive(&mut l, 1_024_000);
        assert_eq!((p.unwrap(), next), (1, Some(1_112_000)));
        let (p, next) = arrive(&mut l, 1_112_000);
        assert_eq!((p.unwrap(), next), (2, None));
        assert_eq!(l.counters.departed_pkts, 3);
    }

    /// A feeder and its fed link give each packet the times, and the links
    /// the counters, of two plain FIFO links in series (the second one
    /// enqueued at the first one's arrivals), both corrupting packets.
    #[test]
    fn a_feeder_and_its_fed_link_are_two_fifo_links_in_series() {
        let queue = || QueueDiscipline::DropTail(QueueLimit::Packets(3));
        let (mut p, mut q) = (link(queue(), 0.2), link(queue(), 0.2));
        let (mut feeder, mut fed) = (link(queue(), 0.2), link(queue(), 0.2));
        feeder.set_cut(Cut::Feeder);
        fed.set_cut(Cut::Fed);
        // Offers at uneven times, some bursts that fill the first queue.
        let offers: Vec<u64> = (0..400u64)
            .map(|i| i * 9_000 + (i % 7) * 4_000 - (i % 3) * 6_000)
            .collect();
        let mut fed_arrivals = Vec::new();
        let mut q_arrivals = Vec::new();
        for (i, &t) in offers.iter().enumerate() {
            // The plain pair: first link's arrivals up to t go on.
            while let Some(a) = p.next_arrival_ns().filter(|&a| a <= t) {
                let got = p.pop_arrival(a);
                if got.intact {
                    q.enqueue(a, got.id, 1500, 0);
                }
            }
            while let Some(a) = q.next_arrival_ns().filter(|&a| a <= t) {
                let got = q.pop_arrival(a);
                q_arrivals.push((a, got.id.0, got.intact));
            }
            while let Some(a) = fed.next_arrival_ns().filter(|&a| a <= t) {
                let got = fed.pop_arrival(a);
                fed_arrivals.push((a, got.id.0, got.intact));
            }
            let plain = p.enqueue(t, PacketId(i as u32), 1500, 0);
            match feeder.enqueue(t, PacketId(i as u32), 1500, 0) {
                Enqueued::Feed {
                    enter_ns,
                    corrupted,
                } => {
                    assert!(!matches!(plain, Enqueued::Dropped));
                    if !corrupted {
                        fed.feed(enter_ns, PacketId(i as u32), 1500);
                    }
                }
                Enqueued::Dropped => assert_eq!(plain, Enqueued::Dropped),
                other => panic!("a feeder answered {other:?}"),
            }
            for (a, b) in [(&mut feeder, &mut p), (&mut fed, &mut q)] {
                a.advance(t);
                b.advance(t);
                assert_eq!(a.queue_len(t), b.queue_len(t), "at {t} ns");
                assert_eq!(a.counters, b.counters, "at {t} ns");
            }
        }
        // The rest, after the last offer.
        while let Some(a) = p.next_arrival_ns() {
            let got = p.pop_arrival(a);
            if got.intact {
                q.enqueue(a, got.id, 1500, 0);
            }
        }
        while let Some(a) = q.next_arrival_ns() {
            let got = q.pop_arrival(a);
            q_arrivals.push((a, got.id.0, got.intact));
        }
        while let Some(a) = fed.next_arrival_ns() {
            let got = fed.pop_arrival(a);
            fed_arrivals.push((a, got.id.0, got.intact));
        }
        for l in [&mut feeder, &mut p, &mut fed, &mut q] {
            l.advance(u64::MAX / 4);
        }
        assert_eq!((fed.counters, feeder.counters), (q.counters, p.counters));
        assert_eq!(fed_arrivals, q_arrivals);
        assert!(p.counters.drops_overflow > 10 && p.counters.drops_random > 10);
        let arrived = fed_arrivals.iter().filter(|a| a.2).count();
        assert!(
            q.counters.drops_random > 10 && arrived > 120,
            "{:?}, {arrived}",
            q.counters
        );
    }

    #[test]
    fn droptail_limit_counts_waiting_packets_only() {
        let mut l = link(QueueDiscipline::DropTail(QueueLimit::Packets(2)), 0.0);
        // 1 in service + 2 waiting fit; the 4th is dropped.
        for s in 0..3 {
            assert_ne!(offer(&mut l, 0, s, 0), Enqueued::Dropped);
        }
        assert_eq!(offer(&mut l, 0, 3, 0), Enqueued::Dropped);
        assert_eq!(l.queue_len(0), (2, 3000));
        // After the first packet is serialized, one slot frees.
        assert_eq!(l.queue_len(12_000), (1, 1500));
        assert_ne!(offer(&mut l, 12_000, 4, 0), Enqueued::Dropped);
        assert_eq!(offer(&mut l, 12_000, 5, 0), Enqueued::Dropped);
        assert_eq!(l.counters.drops_overflow, 2);
    }

    #[test]
    fn byte_limit() {
        let mut l = link(QueueDiscipline::DropTail(QueueLimit::Bytes(3000)), 0.0);
        for s in 0..3 {
            assert_ne!(offer(&mut l, 0, s, 0), Enqueued::Dropped);
        }
        assert_eq!(offer(&mut l, 0, 3, 0), Enqueued::Dropped);
    }

    #[test]
    fn shared_priority_buffer_pushes_out_the_lowest_class() {
        let q = QueueDiscipline::PriorityShared {
            limit: QueueLimit::Packets(3),
            classes: 3,
        };
        let mut l = link(q, 0.0);
        let mut freed = vec![];
        assert_eq!(offer(&mut l, 0, 0, 2), Enqueued::ScheduleTxDone(12_000)); // in service
        assert_eq!(offer(&mut l, 1, 1, 2), Enqueued::Queued);
        assert_eq!(offer(&mut l, 2, 2, 1), Enqueued::Queued);
        assert_eq!(offer(&mut l, 3, 3, 2), Enqueued::Queued); // full: 1 (c2), 2 (c1), 3 (c2)
                                                              // A class-2 arrival cannot push anyone out.
        assert_eq!(offer(&mut l, 4, 4, 2), Enqueued::Dropped);
        // Class 0 pushes out the newest packet of the lowest class: 3.
        assert_eq!(offer(&mut l, 5, 5, 0), Enqueued::QueuedPushingOut);
        assert_eq!(l.drain_pushed_out(|id| freed.push(id.0)), 1);
        // Class 1 pushes out class 2's packet 1.
        assert_eq!(offer(&mut l, 6, 6, 1), Enqueued::QueuedPushingOut);
        assert_eq!(l.drain_pushed_out(|id| freed.push(id.0)), 1);
        assert_eq!(freed, vec![3, 1]);
        // Now 2 (c1), 5 (c0), 6 (c1): class 0 pushes out 6; class 1 finds
        // nothing below it and is dropped.
        assert_eq!(offer(&mut l, 7, 7, 1), Enqueued::Dropped);
        assert_eq!(offer(&mut l, 8, 8, 0), Enqueued::QueuedPushingOut);
        assert_eq!(l.drain_pushed_out(|id| freed.push(id.0)), 1);
        assert_eq!(freed, vec![3, 1, 6]);
        assert_eq!(l.counters.drops_overflow, 5);
        // Service: 0 (in service), then class 0 (5, 8), then class 1 (2).
        let mut t = 12_000;
        while let (Some(next), _) = l.tx_done(t) {
            t = next;
        }
        let order: Vec<u32> = [1_012_000, 1_024_000, 1_036_000, 1_048_000]
            .iter()
            .map(|&t| arrive(&mut l, t).0.unwrap())
            .collect();
        assert_eq!(order, vec![0, 5, 8, 2]);
    }

    #[test]
    fn priority_serves_class_zero_first() {
        let q = QueueDiscipline::Priority(vec![QueueLimit::Packets(10), QueueLimit::Packets(10)]);
        let mut l = link(q, 0.0);
        assert_eq!(offer(&mut l, 0, 0, 1), Enqueued::ScheduleTxDone(12_000));
        assert_eq!(offer(&mut l, 1, 1, 1), Enqueued::Queued);
        assert_eq!(offer(&mut l, 2, 2, 0), Enqueued::Queued);
        // Low-priority packet 0 is already in service; then class 0 overtakes packet 1.
        assert_eq!(l.tx_done(12_000), (Some(24_000), Some(1_012_000)));
        assert_eq!(l.tx_done(24_000), (Some(36_000), None));
        assert_eq!(l.tx_done(36_000), (None, None));
        let order: Vec<u32> = [1_012_000, 1_024_000, 1_036_000]
            .iter()
            .map(|&t| arrive(&mut l, t).0.unwrap())
            .collect();
        assert_eq!(order, vec![0, 2, 1]);
    }

    #[test]
    fn priority_classes_have_their_own_limits() {
        let q = QueueDiscipline::Priority(vec![QueueLimit::Packets(1), QueueLimit::Packets(3)]);
        let mut l = link(q, 0.0);
        offer(&mut l, 0, 0, 0); // in service
        assert_eq!(offer(&mut l, 0, 1, 0), Enqueued::Queued);
        assert_eq!(offer(&mut l, 0, 2, 0), Enqueued::Dropped);
        for s in 3..6 {
            assert_eq!(offer(&mut l, 0, s, 1), Enqueued::Queued);
        }
        assert_eq!(offer(&mut l, 0, 6, 1), Enqueued::Dropped);
        assert_eq!(l.queue_len(0), (4, 6000));
    }

    /// A CoDel link fed 10,000 packets at t = 0 at 1 Gbit/s: packet k
    /// enters service at 12k us after waiting 12k us. Its sojourn first
    /// reaches the 5 ms target at k = 417 (5.004 ms), so first_above_time =
    /// 105.004 ms, and the first dequeue at or after it, k = 8751 (105.012
    /// ms), is dropped (or marked); the next signal is due 100 ms later,
    /// after the queue has drained (120 ms). Checks the drop frees the
    /// packet, the mark sets CE, and the counters.
    #[test]
    fn codel_link_drops_or_marks_the_packet_rfc_8289_picks() {
        use crate::packet::{PacketKind, PacketPool};
        for ecn in [false, true] {
            let q = QueueDiscipline::Aqm {
                aqm: Box::new(Aqm::Codel(CodelParams::default())),
                limit: QueueLimit::Packets(100_000),
                ecn,
            };
            let mut l = link(q, 0.0);
            let mut pool = PacketPool::default();
            let mut freed = 0;
            let mut tx_done = None;
            for _ in 0..10_000 {
                let mut p = Packet::new(0, PacketKind::Data, Dir::Forward, 1500);
                p.set_ecn(Ecn::Ect0);
                let id = pool.insert(p);
                let s = l.enqueue_aqm(0, id, &mut pool);
                freed += s.freed;
                tx_done = tx_done.or(s.tx_done_ns);
            }
            assert_eq!(tx_done, Some(12_000));
            let mut t = tx_done;
            while let Some(now) = t {
                let s = l.tx_done_aqm(now, &mut pool);
                freed += s.freed;
                t = s.tx_done_ns;
            }
            let mut sent = vec![];
            while let Some(a) = l.next_arrival_ns() {
                sent.push(l.pop_arrival(a).id.0);
            }
            if ecn {
                assert_eq!(
                    (l.counters.ce_marks, l.counters.drops_aqm, freed),
                    (1, 0, 0)
                );
                assert_eq!(sent.len(), 10_000);
                assert_eq!(pool.get(PacketId(8751)).ecn(), Ecn::Ce);
                assert_eq!(pool.get(PacketId(8750)).ecn(), Ecn::Ect0);
            } else {
                assert_eq!(
                    (l.counters.ce_marks, l.counters.drops_aqm, freed),
                    (0, 1, 1)
                );
                assert_eq!(sent.len(), 9_999);
                assert!(!sent.contains(&8751) && sent.contains(&8750) && sent.contains(&8752));
            }
            let s = l.take_sojourn().unwrap();
            assert_eq!(s.pkts, sent.len() as u64);
            assert_eq!(s.max_ns, 12_000 * (sent.len() as u64 - 1));
        }
    }

    /// FQ-CoDel's lazy dequeue at 1 Gbit/s (12 us per packet), 1 ms of
    /// delay: a packet with nothing behind it, and a packet in the pipe
    /// arriving after its service ends, goes into the pipe when it enters
    /// service and its tx-done is held back (`TxDoneBy::Defer`); an
    /// arrival during its service, or at its end (scheduled before the
    /// service began), releases it; the first touch after the end ends the
    /// service. Departures count when the service ends, as the tx-done
    /// counted them.
    #[test]
    fn fq_codel_serves_a_packet_with_nothing_behind_it_lazily() {
        use crate::packet::{PacketKind, PacketPool};
        let q = QueueDiscipline::Aqm {
            aqm: Box::new(Aqm::FqCodel(FqCodelParams::default())),
            limit: QueueLimit::Packets(100),
            ecn: false,
        };
        let mut l = link(q, 0.0);
        let mut pool = PacketPool::default();
        let offer = |l: &mut Link, now_ns: u64, pool: &mut PacketPool| {
            let id = pool.insert(Packet::new(0, PacketKind::Data, Dir::Forward, 1500));
            l.enqueue_aqm(now_ns, id, pool)
        };
        let service = |tx_done_ns, tx_done_by, arrival_ns| AqmService {
            tx_done_ns,
            tx_done_by,
            arrival_ns,
            freed: 0,
        };
        let (now, defer, release) = (TxDoneBy::Schedule, TxDoneBy::Defer, TxDoneBy::Release);
        // Idle with an empty pipe: not lazy (the tx-done schedules the
        // arrival, in its place among the events at that time).
        assert_eq!(
            offer(&mut l, 0, &mut pool),
            service(Some(12_000), now, None)
        );
        assert_eq!(
            l.tx_done_aqm(12_000, &mut pool),
            service(None, now, Some(1_012_000))
        );
        // Idle, the pipe's head arriving later: into the pipe at once.
        assert_eq!(
            offer(&mut l, 20_000, &mut pool),
            service(Some(32_000), defer, None)
        );
        // A reading or `advance` at the service's end finds it busy (an
        // event at that time not releasing the tx-done was scheduled before
        // it); the first after it ends it.
        assert_eq!(l.queue_len(32_000), (0, 0));
        assert_eq!(l.next_departure_ns(32_000), Some(32_000));
        assert_eq!(l.counters.departed_pkts, 1);
        l.advance(32_001);
        assert_eq!(l.counters.departed_pkts, 2);
        assert_eq!(l.next_departure_ns(32_001), None);
        // During the service: its tx-done is released.
        assert_eq!(
            offer(&mut l, 40_000, &mut pool),
            service(Some(52_000), defer, None)
        );
        assert_eq!(
            offer(&mut l, 45_000, &mut pool),
            service(Some(52_000), release, None)
        );
        assert_eq!(l.queue_len(45_000), (1, 1500));
        // The tx-done counts packet 2 (already in the pipe) and serves
        // packet 3 lazily: nothing is queued behind it.
        assert_eq!(
            l.tx_done_aqm(52_000, &mut pool),
            service(Some(64_000), defer, None)
        );
        assert_eq!(l.counters.departed_pkts, 3);
        // An arrival at the lazy end itself finds the link busy.
        assert_eq!(
            offer(&mut l, 64_000, &mut pool),
            service(Some(64_000), release, None)
        );
        assert_eq!(
            l.tx_done_aqm(64_000, &mut pool),
            service(Some(76_000), defer, None)
        );
        // A held-back tx-done that an event at its time put in the queue.
        assert_eq!(l.tx_done_aqm(76_000, &mut pool), AqmService::default());
        assert_eq!(l.counters.departed_pkts, 5);
        // The end of the run ends a service ending then.
        assert_eq!(
            offer(&mut l, 80_000, &mut pool),
            service(Some(92_000), defer, None)
        );
        l.advance_to_end(92_000);
        assert_eq!(l.counters.departed_pkts, 6);
        let mut pipe = vec![];
        while let Some(a) = l.next_arrival_ns() {
            pipe.push((l.pop_arrival(a).id.0, a));
        }
        assert_eq!(
            pipe,
            [
                (0, 1_012_000),
                (1, 1_032_000),
                (2, 1_052_000),
                (3, 1_064_000),
                (4, 1_076_000),
                (5, 1_092_000)
            ]
        );
        let s = l.take_sojourn().unwrap();
        assert_eq!((s.pkts, s.sum_ns, s.max_ns), (6, 7_000, 7_000));
    }

    #[test]
    fn random_loss_rate_matches_probability() {
        let mut l = link(
            QueueDiscipline::DropTail(QueueLimit::Packets(1_000_000)),
            0.01,
        );
        let n = 200_000u64;
        for s in 0..n {
            offer(&mut l, s * 12_000, s as u32, 0);
        }
        let mut t = 0;
        let mut lost = 0;
        while let Some(next) = l.ring.front().map(|e| e.arrive_ns) {
            t = t.max(next);
            if arrive(&mut l, next).0.is_none() {
                lost += 1;
            }
        }
        assert!(t > 0);
        // Binomial(200000, 0.01): mean 2000, sd 44.5; 5 sd either side.
        assert!((1778..=2222).contains(&lost), "lost {lost}");
        assert_eq!(l.counters.drops_random, lost);
    }
}
