//! The simulation: event loop, forwarding along precomputed routes, and the
//! glue between links, endpoints and measurements. No global state: each
//! `Simulation` is self-contained, so many run in one process.

use crate::budget::Estimate;
use crate::capture::Captures;
use crate::event::{Event, EventQueue, TimerKind, TIMER_KINDS};
use crate::flow::Flow;
use crate::link::{AqmService, Cut, Enqueued, Link, LinkSpec, TxDoneBy, PREFETCH_AHEAD};
use crate::metrics::Metrics;
use crate::outbox::Outbox;
use crate::packet::{Dir, PacketId, PacketKind, PacketPool};
use crate::rng::{component_rng, RNG_LINK};
use crate::topology::Topology;

/// Every flow's two routes in one flat table, so forwarding a packet reads
/// a few bytes that stay in the cache instead of the flow's own record.
/// Every route takes the same number of entries (`stride`: the longest
/// route and its `END`), so a hop is found with one load, not a load of
/// the route's start and then of the hop; a dumbbell's routes (3 links)
/// take a flow 32 bytes, half a cache line.
struct RouteTable {
    /// Flow f's forward route at `2 f stride`, its backward route at
    /// `(2 f + 1) stride`, each followed by `END` (and padded with it).
    links: Vec<u32>,
    stride: usize,
}

impl RouteTable {
    const END: u32 = u32::MAX;

    fn new(flows: &[Flow]) -> Self {
        let longest = flows
            .iter()
            .map(|f| f.fwd.len().max(f.bwd.len()))
            .max()
            .unwrap_or(0);
        let stride = longest + 1;
        let mut links = Vec::with_capacity(2 * stride * flows.len());
        for f in flows {
            for route in [&f.fwd, &f.bwd] {
                links.extend_from_slice(route);
                links.resize(links.len() + stride - route.len(), Self::END);
            }
        }
        Self { links, stride }
    }

    #[inline]
    fn at(&self, flow: u32, dir: Dir, hop: usize) -> u32 {
        let route = 2 * flow as usize + usize::from(dir == Dir::Backward);
        self.links[route * self.stride + hop]
    }
}

/// Everything a run needs, already validated.
pub struct SimSetup {
    pub topology: Topology,
    pub flows: Vec<Flow>,
    pub duration_ns: u64,
    pub measure_from_ns: u64,
    pub sample_interval_ns: u64,
    pub seed: u64,
    /// Links whose queue and utilization are sampled over time.
    pub monitored_links: Vec<usize>,
    /// Names of the traffic generators that drew the `generated` flows.
    pub generators: Vec<String>,
    /// What the run was estimated to cost when it was built.
    pub estimate: Estimate,
    /// The most packets links may hold at once (the memory budget left after
    /// series and flows): a run that passes it stops, see `RunStatus`.
    pub packet_limit: u64,
    /// Packet captures (`run.pcap`), if any.
    pub capture: Option<Box<Captures>>,
    /// Hand packets ahead to links that only one link feeds and that never
    /// queue (`budget::cut_through`): one event per packet fewer on a
    /// dumbbell. Off only to compare (`BuildOptions::cut_through`).
    pub cut_through: bool,
    /// Load flows' state into the cache ahead of their events when the run
    /// is large enough to use a radix heap (`Simulation::takes_cache_hints`).
    /// Off only to compare (`BuildOptions::cache_hints`).
    pub cache_hints: bool,
}

/// How a call to [`Simulation::run_until_limited`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunStatus {
    /// Every event up to the requested time ran.
    Reached,
    /// `max_events` ran first; call again to go on.
    EventLimit,
    /// The links held more packets than the memory budget allows; the run
    /// cannot go on.
    OverBudget,
}

pub struct Simulation {
    now_ns: u64,
    pub end_ns: u64,
    pub seed: u64,
    events: EventQueue,
    pub links: Vec<Link>,
    /// Each link's spec (name, rate, delay, queue), by the same index as
    /// `links`: only the set-up and the metrics read it, so it stays out of
    /// the links' hot cache lines.
    pub link_specs: Vec<LinkSpec>,
    pub flows: Vec<Flow>,
    /// Earliest pending heap entry per flow and timer kind (u64::MAX: none).
    timer_at: Vec<[u64; TIMER_KINDS]>,
    out: Outbox,
    /// The packets links hold, by handle.
    packets: PacketPool,
    routes: RouteTable,
    /// For a link that delivers to a host, the flow and which end (`2 f + 1`
    /// its sender, `2 f` its receiver; `u32::MAX` otherwise), so that the
    /// engine can load the endpoint before the event (`prefetch_ahead`).
    /// Only runs with a radix heap (100,000 pending events and more) have it.
    link_endpoint: Vec<u32>,
    /// `prefetch_ahead`'s second step (a link and its host's first link)
    /// and third (a link whose head packet to load).
    hint_slots: Option<(u32, u32)>,
    hint_body: Option<u32>,
    pub metrics: Metrics,
    events_processed: u64,
    /// Packets held by links now (queued, in service or propagating), and
    /// the most ever held: the memory the run's packets take.
    packets_held: u64,
    peak_packets_held: u64,
    packet_limit: u64,
    /// Events `run_until_limited` may still take: its `max_events`, cut to
    /// 0 by the packet that passes the packet limit (`new_peak`), so the
    /// event loop tests one number per event instead of the limit and the
    /// budget apart.
    events_left: u64,
    pub estimate: Estimate,
    /// Packet captures (`run.pcap`): None costs one predictable branch per
    /// packet-hop and nothing else.
    pub capture: Option<Box<Captures>>,
}

impl Simulation {
    pub fn new(setup: SimSetup) -> Self {
        let SimSetup {
            topology,
            duration_ns,
            measure_from_ns,
            sample_interval_ns,
            seed,
            monitored_links,
            generators,
            estimate,
            packet_limit,
            mut flows,
            capture,
            cut_through,
            cache_hints,
        } = setup;
        // Flows are large (a TCP flow holds its sender in place): no spare
        // capacity left over from building.
        flows.shrink_to_fit();
        let mut link_specs = topology.links;
        // Built by pushes: no spare capacity kept for the run.
        link_specs.shrink_to_fit();
        let mut links: Vec<Link> = link_specs
            .iter()
            .enumerate()
            .map(|(i, spec)| Link::new(spec, component_rng(seed, RNG_LINK, i as u64)))
            .collect();
        if cut_through {
            for (link, cut) in links
                .iter_mut()
                .zip(crate::budget::cut_through(&link_specs, &flows))
            {
                link.set_cut(cut);
            }
        }
        // Pending events: about one per link with packets on its wire and
        // one per flow timer.
        let mut events = EventQueue::for_pending(links.len() + flows.len());
        for (i, f) in flows.iter().enumerate() {
            events.schedule(f.start_ns, Event::Timer(i as u32, TimerKind::Start));
            if let Some(stop) = f.stop_ns {
                events.schedule(stop, Event::Timer(i as u32, TimerKind::Stop));
            }
        }
        events.schedule(measure_from_ns, Event::MeasureStart);
        events.schedule(sample_interval_ns.min(duration_ns), Event::Sample);
        let metrics = Metrics::new(
            sample_interval_ns,
            measure_from_ns,
            monitored_links,
            flows.len(),
            flows
                .iter()
                .enumerate()
                .filter(|(_, f)| f.generated.is_none())
                .map(|(i, _)| i as u32)
                .collect(),
            generators,
        );
        let timer_at = vec![[u64::MAX; TIMER_KINDS]; flows.len()];
        let routes = RouteTable::new(&flows);
        let link_endpoint = if cache_hints && events.gives_hints() {
            let mut e = vec![u32::MAX; links.len()];
            for (i, f) in flows.iter().enumerate() {
                if let Some(&l) = f.fwd.last() {
                    e[l as usize] = 2 * i as u32;
                }
                if let Some(&l) = f.bwd.last() {
                    e[l as usize] = 2 * i as u32 + 1;
                }
            }
            e
        } else {
            Vec::new()
        };
        Self {
            now_ns: 0,
            end_ns: duration_ns,
            seed,
            events,
            links,
            link_specs,
            flows,
            timer_at,
            out: Outbox::default(),
            packets: PacketPool::default(),
            routes,
            link_endpoint,
            hint_slots: None,
            hint_body: None,
            metrics,
            events_processed: 0,
            packets_held: 0,
            peak_packets_held: 0,
            packet_limit,
            events_left: 0,
            estimate,
            capture,
        }
    }

    pub fn now_ns(&self) -> u64 {
        self.now_ns
    }
    /// The index (in `links` and `link_specs`) of the link named `name`.
    pub fn link_index(&self, name: &str) -> Option<usize> {
        self.link_specs.iter().position(|s| s.name == name)
    }
    pub fn events_processed(&self) -> u64 {
        self.events_processed
    }
    pub fn is_done(&self) -> bool {
        self.now_ns >= self.end_ns
    }
    /// Packets the links hold now, and the most they ever held.
    pub fn packets_held(&self) -> u64 {
        self.packets_held
    }
    pub fn peak_packets_held(&self) -> u64 {
        self.peak_packets_held
    }

    /// The packet limit was passed: the run cannot go on.
    pub fn over_budget(&self) -> bool {
        self.peak_packets_held > self.packet_limit
    }

    /// Runs every event up to and including `until_ns` (capped at the end),
    /// unless the run passes its packet limit first.
    pub fn run_until(&mut self, until_ns: u64) -> RunStatus {
        self.run_until_limited(until_ns, u64::MAX)
    }

    /// Runs events up to and including `until_ns` (capped at the end), but at
    /// most `max_events` of them. Front ends call it in chunks so they can
    /// honour Ctrl-C and show progress however dense the events are.
    pub fn run_until_limited(&mut self, until_ns: u64, max_events: u64) -> RunStatus {
        let until = until_ns.min(self.end_ns);
        self.events_left = if self.over_budget() { 0 } else { max_events };
        let stopped = if self.prefetching() {
            self.run_events::<true>(until)
        } else {
            self.run_events::<false>(until)
        };
        if let Some(status) = stopped {
            return status;
        }
        self.now_ns = self.now_ns.max(until);
        if let Some(c) = self.capture.as_deref_mut() {
            c.run_until(self.now_ns);
        }
        if self.now_ns >= self.end_ns && !self.metrics.finished() {
            self.metrics
                .finish(self.end_ns, &mut self.links, &self.link_specs, &self.flows);
        }
        RunStatus::Reached
    }

    /// The event loop of `run_until_limited`, one copy with the cache hints
    /// of very many flows (`prefetching`) and one without, so that smaller
    /// runs do not test for them on every event. Some: stopped by the event
    /// budget or the packet limit with events due.
    fn run_events<const PREFETCH: bool>(&mut self, until: u64) -> Option<RunStatus> {
        loop {
            // Checked before the next event is taken, so a stop leaves it
            // pending.
            if self.events_left == 0 {
                let status = if self.over_budget() {
                    RunStatus::OverBudget
                } else {
                    RunStatus::EventLimit
                };
                if self.events.peek_time().is_some_and(|t| t <= until) {
                    if let Some(c) = self.capture.as_deref_mut() {
                        c.run_until(self.now_ns);
                    }
                    return Some(status);
                }
                return None;
            }
            let (t, ev) = self.events.pop_due(until)?;
            self.events_left -= 1;
            self.now_ns = t;
            self.events_processed += 1;
            if PREFETCH {
                self.prefetch_ahead();
            }
            match ev.link_arrival() {
                Some(l) => self.on_link_arrival::<PREFETCH>(l),
                None => self.dispatch(ev.unpack()),
            }
        }
    }

    pub fn run(&mut self) -> RunStatus {
        self.run_until(self.end_ns)
    }

    fn dispatch(&mut self, ev: Event) {
        match ev {
            Event::LinkArrival(l) => self.on_link_arrival::<false>(l),
            Event::LinkTxDone(l) if self.links[l as usize].is_aqm() => {
                let s = self.links[l as usize].tx_done_aqm(self.now_ns, &mut self.packets);
                self.aqm_service(l, s);
            }
            Event::LinkTxDone(l) => {
                let (next_tx, arrival) = self.links[l as usize].tx_done(self.now_ns);
                if let Some(t) = next_tx {
                    self.events.schedule(t, Event::LinkTxDone(l));
                }
                if let Some(t) = arrival {
                    self.events.schedule(t, Event::LinkArrival(l));
                }
            }
            Event::Timer(f, kind) => self.on_timer(f as usize, kind),
            Event::Sample => {
                self.metrics
                    .sample(self.now_ns, &mut self.links, &self.link_specs, &self.flows);
                let next = self.now_ns + self.metrics.interval_ns();
                if next <= self.end_ns {
                    self.events.schedule(next, Event::Sample);
                }
            }
            Event::MeasureStart => {
                self.metrics
                    .start_window(self.now_ns, &mut self.links, &self.flows)
            }
        }
    }

    /// The packet at the head of link `l`'s pipe reaches the far end.
    #[inline(always)]
    fn on_link_arrival<const PREFETCH: bool>(&mut self, l: u32) {
        let a = self.links[l as usize].pop_arrival(self.now_ns);
        if let Some(soon) = a.upcoming {
            self.packets.prefetch(soon);
        }
        if PREFETCH {
            self.prefetch_behind(l, a.upcoming.is_none());
        }
        if let Some(t) = a.next_arrival_ns {
            self.events.schedule(t, Event::LinkArrival(l));
        }
        self.packets_held -= 1;
        if a.intact {
            self.forward(a.id);
        } else {
            self.packets.remove(a.id);
        }
    }

    /// Whether the run loads flows' state ahead of its events: only runs
    /// with a radix heap (100,000 pending events and more, about 20,000
    /// dumbbell flows), whose state fits no cache; below that the hints
    /// would cost instructions and save nothing.
    #[inline(always)]
    fn prefetching(&self) -> bool {
        !self.link_endpoint.is_empty()
    }

    /// Whether this run loads state ahead of its events (`prefetching`).
    pub fn takes_cache_hints(&self) -> bool {
        self.prefetching()
    }

    /// At very many flows, what the packets behind link `l`'s new head will
    /// need: the next hop of the one 4 places behind (its body loaded by
    /// now), the ring slots of the one 2 places behind, and on a short pipe
    /// (`short`: `pop_arrival` gave no body to load) the new head's body.
    #[cold]
    #[inline(never)]
    fn prefetch_behind(&self, l: u32, short: bool) {
        let link = &self.links[l as usize];
        if let Some(s) = link.packet_behind_head(PREFETCH_AHEAD / 4) {
            self.prefetch_next_hop(s);
        }
        if let Some(s) = link.packet_behind_head(PREFETCH_AHEAD / 8) {
            self.prefetch_next_slots(s);
        }
        if short {
            if let Some(n) = link.head_packet() {
                self.packets.prefetch(n);
            }
        }
    }

    /// The link packet `id` goes to next (None: it is delivered next) and,
    /// for data whose next link is its last, its flow and the link its ACK
    /// will take.
    #[inline(always)]
    fn next_links(&self, id: PacketId) -> Option<(u32, Option<(u32, u32)>)> {
        let p = self.packets.get(id);
        let l = self.routes.at(p.flow, p.dir, usize::from(p.hop) + 1);
        if l == RouteTable::END {
            return None;
        }
        let last = (p.kind == PacketKind::Data
            && self.routes.at(p.flow, p.dir, usize::from(p.hop) + 2) == RouteTable::END)
            .then(|| (p.flow, self.routes.at(p.flow, Dir::Backward, 0)));
        Some((l, last))
    }

    /// Starts loading the link packet `id` goes to next (it is a few places
    /// behind the head of a pipe): at very many flows that link is a
    /// different flow's each time, and not in the cache. Data about to reach
    /// its receiver: the receiver and the link its ACK will take too.
    #[inline(always)]
    fn prefetch_next_hop(&self, id: PacketId) {
        let Some((l, last)) = self.next_links(id) else {
            return;
        };
        let link_bytes = std::mem::size_of::<Link>();
        crate::prefetch::prefetch_bytes(&self.links[l as usize], link_bytes);
        if let Some((f, back)) = last {
            self.flows[f as usize].endpoints.prefetch_receiver();
            crate::prefetch::prefetch_bytes(&self.links[back as usize], link_bytes);
        }
    }

    /// The second step of `prefetch_next_hop`, two packets later: the slot
    /// of the next link's ring that packet `id` will take (and its ACK's
    /// link's), read from the link's lines loaded by then.
    #[inline(always)]
    fn prefetch_next_slots(&self, id: PacketId) {
        let Some((l, last)) = self.next_links(id) else {
            return;
        };
        self.links[l as usize].prefetch_ends();
        if let Some((_, back)) = last {
            self.links[back as usize].prefetch_ends();
        }
    }

    /// Loads into the cache, in three steps an event apart, what the event
    /// queue's next far event will touch (`EventQueue::take_hint`, about
    /// fifteen events ahead at 100,000 flows): first the link's lines and,
    /// where its far end is a host, the endpoint and the host's first link;
    /// then the ring's head slot and the first link's tail slot (their
    /// addresses read from the lines loaded); then the head packet's body.
    /// Only runs with a radix heap do this: their state does not fit any
    /// cache. Hints only: nothing here changes a result.
    #[inline(never)]
    fn prefetch_ahead(&mut self) {
        use crate::prefetch::{prefetch, prefetch_bytes};
        let link_bytes = std::mem::size_of::<Link>();
        if let Some(l) = self.hint_body.take() {
            if let Some(id) = self.links[l as usize].head_packet() {
                self.packets.prefetch(id);
            }
        }
        if let Some((l, up)) = self.hint_slots.take() {
            let e = self.link_endpoint[l as usize];
            if e != u32::MAX && e & 1 == 1 {
                self.flows[(e >> 1) as usize]
                    .endpoints
                    .prefetch_sender_heap();
            }
            self.links[l as usize].prefetch_ends();
            if up != u32::MAX {
                self.links[up as usize].prefetch_ends();
            }
            self.hint_body = Some(l);
        }
        let Some(ev) = self.events.take_hint() else {
            return;
        };
        match ev.link_arrival() {
            Some(l) => {
                prefetch_bytes(&self.links[l as usize], link_bytes);
                let e = self.link_endpoint[l as usize];
                let mut up = u32::MAX;
                if e != u32::MAX {
                    let f = e >> 1;
                    self.flows[f as usize].endpoints.prefetch(e & 1 == 1);
                    up = self.routes.at(
                        f,
                        if e & 1 == 1 {
                            Dir::Forward
                        } else {
                            Dir::Backward
                        },
                        0,
                    );
                    prefetch_bytes(&self.links[up as usize], link_bytes);
                }
                self.hint_slots = Some((l, up));
            }
            None => {
                if let Event::Timer(f, _) = ev.unpack() {
                    prefetch(self.timer_at.get(f as usize));
                }
            }
        }
    }

    fn on_timer(&mut self, f: usize, kind: TimerKind) {
        let k = kind as usize;
        if matches!(
            kind,
            TimerKind::Rto
                | TimerKind::DelayedAck
                | TimerKind::UdpSend
                | TimerKind::HostReady
                | TimerKind::GroFlush
                | TimerKind::Pace
        ) {
            if self.timer_at[f][k] != self.now_ns {
                return; // superseded by an earlier entry that already fired
            }
            self.timer_at[f][k] = u64::MAX;
        }
        let now = self.now_ns;
        if matches!(
            kind,
            TimerKind::Start | TimerKind::Rto | TimerKind::HostReady | TimerKind::Pace
        ) {
            self.out.host_room_pkts = self.host_room_pkts(f);
        }
        let out = &mut self.out;
        self.flows[f].endpoints.on_timer(kind, now, out);
        self.flush(f);
    }

    /// Packet `id` reached the end of a link: on to its next hop, or to its
    /// endpoint. Inlined into the event loop, its one caller: the call's
    /// prologue and epilogue saved and restored every callee-saved register
    /// on every packet-hop (callgrind: 2 % fewer instructions).
    #[inline(always)]
    fn forward(&mut self, id: PacketId) {
        let p = self.packets.get_mut(id);
        let next = usize::from(p.hop) + 1;
        let l = self.routes.at(p.flow, p.dir, next);
        if l != RouteTable::END {
            p.hop = next as u8;
            let (size, class) = (p.size_bytes, p.class);
            if self.capture.is_some() {
                self.tap(id, next);
            }
            self.enqueue(l as usize, id, size, class);
        } else {
            if self.capture.is_some() {
                self.tap(id, next);
            }
            self.deliver(id);
        }
    }

    /// A capture records packet `id` if its tap is where the packet is
    /// handed to hop `hop` of its route.
    #[cold]
    #[inline(never)]
    fn tap(&mut self, id: PacketId, hop: usize) {
        self.tap_at(id, hop, self.now_ns);
    }

    /// The same, for a packet handed to hop `hop` at `at_ns` (a fed link's
    /// entry, recorded ahead of time; the capture is written in time order).
    #[cold]
    #[inline(never)]
    fn tap_at(&mut self, id: PacketId, hop: usize, at_ns: u64) {
        let Some(c) = self.capture.as_deref_mut() else {
            return;
        };
        tap_one(c, &self.flows, at_ns, self.packets.get(id), hop);
    }

    /// The same for the outbox's packet `i`, handed to its route's first hop.
    #[cold]
    #[inline(never)]
    fn tap_sent(&mut self, i: usize) {
        let Some(c) = self.capture.as_deref_mut() else {
            return;
        };
        tap_one(c, &self.flows, self.now_ns, &self.out.packets[i], 0);
    }

    /// Offers packet `id` to link `l`. The caller passes the packet's size
    /// and class, which it has at hand, rather than reading them back.
    /// Inlined into its two callers (`forward`, `flush`): the call saved
    /// its prologue, epilogue and argument moves, about 20 instructions a
    /// packet-hop (callgrind: 3.9 % fewer instructions on the canonical run).
    #[inline(always)]
    fn enqueue(&mut self, l: usize, id: PacketId, size_bytes: u16, class: u8) {
        let accepted = match self.links[l].enqueue(self.now_ns, id, size_bytes, class) {
            Enqueued::ScheduleArrival(t) => {
                self.events.schedule(t, Event::LinkArrival(l as u32));
                true
            }
            Enqueued::ScheduleTxDone(t) => {
                self.events.schedule(t, Event::LinkTxDone(l as u32));
                true
            }
            Enqueued::Queued => true,
            Enqueued::Dropped => {
                self.packets.remove(id);
                false
            }
            Enqueued::QueuedPushingOut => self.free_pushed_out(l, id, true),
            Enqueued::DroppedPushingOut => self.free_pushed_out(l, id, false),
            Enqueued::Aqm => {
                self.enqueue_aqm(l, id);
                false
            }
            Enqueued::Feed {
                enter_ns,
                corrupted,
            } => {
                if corrupted {
                    // Discarded at the far end: nothing reads it before.
                    self.packets.remove(id);
                    false
                } else {
                    self.feed(id, size_bytes, enter_ns);
                    true
                }
            }
        };
        if accepted {
            self.packets_held += 1;
            if self.packets_held > self.peak_packets_held {
                self.new_peak();
            }
        }
    }

    /// Packet `id`, just taken by a feeding link (`Cut::Feeder`), goes on
    /// to its next hop now, to enter it at `enter_ns`: what `forward` does
    /// at the feeder's far end, one event earlier. It stays held, by the
    /// fed link now, until it arrives there.
    #[inline(always)]
    fn feed(&mut self, id: PacketId, size_bytes: u16, enter_ns: u64) {
        let p = self.packets.get_mut(id);
        let next = usize::from(p.hop) + 1;
        let l = self.routes.at(p.flow, p.dir, next);
        debug_assert_ne!(l, RouteTable::END, "a feeder's packets go on");
        p.hop = next as u8;
        if self.capture.is_some() {
            self.tap_at(id, next, enter_ns);
        }
        if let Some(t) = self.links[l as usize].feed(enter_ns, id, size_bytes) {
            self.events.schedule(t, Event::LinkArrival(l));
        }
    }

    /// The links hold more packets than ever before: the new peak, and past
    /// the packet limit the event loop stops before its next event.
    #[cold]
    #[inline(never)]
    fn new_peak(&mut self) {
        self.peak_packets_held = self.packets_held;
        if self.over_budget() {
            self.events_left = 0;
        }
    }

    /// A shared priority buffer pushed packets out of link `l` to take
    /// (`queued`) or refuse packet `id`: they were held and leave the
    /// network. Returns `queued`.
    #[cold]
    #[inline(never)]
    fn free_pushed_out(&mut self, l: usize, id: PacketId, queued: bool) -> bool {
        let pool = &mut self.packets;
        self.packets_held -= self.links[l].drain_pushed_out(|v| pool.remove(v));
        if !queued {
            self.packets.remove(id);
        }
        queued
    }

    /// Offers packet `id` to AQM link `l`: the packet is held from here
    /// until the link frees it (a drop) or it arrives.
    #[cold]
    #[inline(never)]
    fn enqueue_aqm(&mut self, l: usize, id: PacketId) {
        self.packets_held += 1;
        if self.packets_held > self.peak_packets_held {
            self.new_peak();
        }
        let s = self.links[l].enqueue_aqm(self.now_ns, id, &mut self.packets);
        self.aqm_service_inline(l as u32, s);
    }

    /// Schedules what an AQM link asks for and forgets the packets it freed.
    fn aqm_service(&mut self, l: u32, s: AqmService) {
        self.aqm_service_inline(l, s);
    }

    /// `aqm_service`, forced inline into `enqueue_aqm` (out of the event
    /// loop). The event loop's call is left to the compiler: forcing it
    /// there too, or moving the loop's AQM tx-done into one call, moved
    /// the loop's code and cost DropTail runs 0.2-0.3 % (callgrind).
    #[inline(always)]
    fn aqm_service_inline(&mut self, l: u32, s: AqmService) {
        self.packets_held -= s.freed;
        if let Some(t) = s.tx_done_ns {
            let ev = Event::LinkTxDone(l);
            match s.tx_done_by {
                TxDoneBy::Schedule => self.events.schedule(t, ev),
                TxDoneBy::Defer => self.events.defer(self.now_ns, t, ev),
                TxDoneBy::Release => self.events.release(t, ev),
            }
            // A packet entered service (not `Release`): a feeding AQM link
            // hands it on now.
            if s.tx_done_by != TxDoneBy::Release && self.links[l as usize].cut() == Cut::Feeder {
                let h = self.links[l as usize].hand_over(t);
                self.feed(h.id, h.size_bytes, h.enter_ns);
            }
        }
        if let Some(t) = s.arrival_ns {
            self.events.schedule(t, Event::LinkArrival(l));
        }
    }

    /// Room left in the queue of flow `f`'s sending host (its first link),
    /// in packets of the flow's data size.
    #[inline(always)]
    fn host_room_pkts(&mut self, f: usize) -> u64 {
        let Some(cfg) = self.flows[f].endpoints.tcp_config() else {
            return u64::MAX; // a UDP source does not look at its host queue
        };
        let size = u64::from(cfg.packet_size_bytes);
        // The first link from the route table, not the flow's own `fwd`
        // (another allocation, another cache miss with many flows).
        let first = self.routes.at(f as u32, Dir::Forward, 0) as usize;
        self.links[first].room_pkts(self.now_ns, size)
    }

    /// Packet `id` reached its endpoint. Inlined into the event loop: with
    /// the sender's per-ACK steps inlined the compiler kept it out of line,
    /// and the call cost about 30 instructions a packet (callgrind, issue 33).
    #[inline(always)]
    fn deliver(&mut self, id: PacketId) {
        let (f, kind) = {
            let p = self.packets.get(id);
            (p.flow as usize, p.kind)
        };
        let now = self.now_ns;
        if kind == PacketKind::Ack {
            self.out.host_room_pkts = self.host_room_pkts(f);
        }
        let p = self.packets.get(id);
        let out = &mut self.out;
        self.flows[f].endpoints.on_packet(now, p, out);
        self.packets.remove(id);
        self.flush(f);
    }

    /// Injects what an endpoint produced and arms its timers. Inlined into
    /// `deliver` (after every packet an endpoint takes) and `on_timer`: the
    /// call cost about 17 instructions (callgrind: 0.8 % fewer at 10 flows).
    #[inline(always)]
    fn flush(&mut self, f: usize) {
        // By index, not by moving the outbox out and back: copying the
        // struct around cost more than the work.
        let capturing = self.capture.is_some();
        for i in 0..self.out.packets.len() {
            if capturing {
                self.tap_sent(i);
            }
            let p = &self.out.packets[i];
            let (dir, size_bytes, class) = (p.dir, p.size_bytes, p.class);
            let id = self.packets.insert_copy(p);
            let l = self.routes.at(f as u32, dir, 0) as usize;
            self.enqueue(l, id, size_bytes, class);
        }
        self.out.packets.clear();
        if self.out.host_blocked {
            // Wake the sender when its host queue frees a slot.
            let first = self.routes.at(f as u32, Dir::Forward, 0) as usize;
            if let Some(t) = self.links[first].next_departure_ns(self.now_ns) {
                self.out.timers.push((TimerKind::HostReady, t));
            }
            self.out.host_blocked = false;
        }
        self.out.host_room_pkts = u64::MAX;
        for i in 0..self.out.timers.len() {
            let (kind, t) = self.out.timers[i];
            let slot = &mut self.timer_at[f][kind as usize];
            if t < *slot {
                *slot = t;
                self.events.schedule(t, Event::Timer(f as u32, kind));
            }
        }
        self.out.timers.clear();
    }
}

/// Records `p` in the capture if its tap is where the packet is handed to
/// hop `hop` of its route; an ACK carries its receiver's advertised window.
fn tap_one(c: &mut Captures, flows: &[Flow], now_ns: u64, p: &crate::packet::Packet, hop: usize) {
    if let Some(slot) = c.wants(p, hop) {
        let window = match p.kind {
            PacketKind::Ack => flows[p.flow as usize].endpoints.advertised_window_pkts(),
            _ => 0,
        };
        c.record(slot, now_ns, p, window);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canonical_for(duration: &str) -> Simulation {
        let text = format!(
            "[network]\ntopology = \"dumbbell\"\n[network.bottleneck]\nrate = \"1Gbps\"\n\
             delay = \"35ms\"\nqueue = \"6000pkt\"\n[[flows]]\ncc = \"reno\"\n\
             [run]\nduration = \"{duration}\"\nseed = 1\n"
        );
        let s = crate::Scenario::from_toml(&text).expect("scenario");
        crate::build(&s).expect("build")
    }

    /// The run stops before the first event after the packet limit is
    /// passed, as if it checked the peak before every event: the same
    /// event count as a run taken one event at a time and checked.
    #[test]
    fn the_packet_limit_stops_the_run_before_the_next_event() {
        const LIMIT: u64 = 2_000;
        let mut stepped = canonical_for("2s");
        let mut steps = 0;
        while stepped.peak_packets_held() <= LIMIT {
            assert_eq!(
                stepped.run_until_limited(u64::MAX, 1),
                RunStatus::EventLimit
            );
            steps += 1;
        }
        let mut limited = canonical_for("2s");
        limited.packet_limit = LIMIT;
        assert_eq!(limited.run(), RunStatus::OverBudget);
        assert_eq!(limited.events_processed(), steps);
        assert_eq!(limited.peak_packets_held(), stepped.peak_packets_held());
        // It stays stopped, and a budget of events is no way around it.
        assert_eq!(
            limited.run_until_limited(u64::MAX, 5),
            RunStatus::OverBudget
        );
        assert_eq!(limited.events_processed(), steps);
    }

    /// A budget of events stops the run after exactly that many.
    #[test]
    fn an_event_budget_takes_exactly_that_many_events() {
        let mut sim = canonical_for("1s");
        assert_eq!(sim.run_until_limited(u64::MAX, 0), RunStatus::EventLimit);
        assert_eq!(sim.events_processed(), 0);
        assert_eq!(
            sim.run_until_limited(u64::MAX, 1_234),
            RunStatus::EventLimit
        );
        assert_eq!(sim.events_processed(), 1_234);
        assert_eq!(sim.run(), RunStatus::Reached);
    }
}
