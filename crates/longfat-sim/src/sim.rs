//! The simulation: event loop, forwarding along precomputed routes, and the
//! glue between links, endpoints and measurements. No global state: each
//! `Simulation` is self-contained, so many run in one process.

use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::event::{Event, EventQueue, TimerKind, TIMER_KINDS};
use crate::link::{Enqueued, Link};
use crate::metrics::Metrics;
use crate::packet::{Dir, Packet, PacketKind};
use crate::tcp::receiver::TcpReceiver;
use crate::tcp::sender::TcpSender;
use crate::topology::Topology;
use crate::udp::UdpFlow;

/// What an endpoint wants done after handling an event: packets to inject at
/// the first hop of their route, and timers to (re)arm. Reused, never freed.
#[derive(Debug, Default)]
pub struct Outbox {
    pub packets: Vec<Packet>,
    pub timers: Vec<(TimerKind, u64)>,
}

pub enum Endpoints {
    Tcp { sender: Box<TcpSender>, receiver: TcpReceiver },
    Udp(UdpFlow),
}

pub struct Flow {
    pub name: String,
    /// The congestion controller's name, or "udp".
    pub algorithm: String,
    pub start_ns: u64,
    pub stop_ns: Option<u64>,
    pub fwd: Box<[u32]>,
    pub bwd: Box<[u32]>,
    /// Propagation-only round-trip time of the flow's path.
    pub base_rtt_ns: u64,
    pub endpoints: Endpoints,
    /// Set for finite transfers drawn by a traffic generator (short flows,
    /// web objects): they are reported by completion time, not as series.
    pub generated: Option<Generated>,
}

/// Which generator drew a transfer, and its size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Generated {
    pub generator: u32,
    pub size_bytes: u64,
}

impl Flow {
    pub fn is_tcp(&self) -> bool {
        matches!(self.endpoints, Endpoints::Tcp { .. })
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
}

/// An independent random stream for one component, derived from the run's seed.
pub fn component_rng(seed: u64, kind: u64, index: u64) -> Xoshiro256PlusPlus {
    // SplitMix64-style mixing keeps streams of neighbouring components apart.
    let mut z = seed ^ kind.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ index.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    Xoshiro256PlusPlus::seed_from_u64(z ^ (z >> 31))
}

pub const RNG_LINK: u64 = 1;
pub const RNG_UDP: u64 = 2;
pub const RNG_JITTER: u64 = 3;
pub const RNG_TRAFFIC: u64 = 4;

pub struct Simulation {
    now_ns: u64,
    pub end_ns: u64,
    pub seed: u64,
    events: EventQueue,
    pub links: Vec<Link>,
    pub flows: Vec<Flow>,
    /// Earliest pending heap entry per flow and timer kind (u64::MAX: none).
    timer_at: Vec<[u64; TIMER_KINDS]>,
    out: Outbox,
    pub metrics: Metrics,
    events_processed: u64,
}

impl Simulation {
    pub fn new(setup: SimSetup) -> Self {
        let SimSetup {
            topology,
            flows,
            duration_ns,
            measure_from_ns,
            sample_interval_ns,
            seed,
            monitored_links,
            generators,
        } = setup;
        let links: Vec<Link> = topology
            .links
            .into_iter()
            .enumerate()
            .map(|(i, spec)| Link::new(spec, component_rng(seed, RNG_LINK, i as u64)))
            .collect();
        let mut events = EventQueue::new();
        for (i, f) in flows.iter().enumerate() {
            events.schedule(f.start_ns, Event::Timer(i as u32, TimerKind::Start));
            if let Some(stop) = f.stop_ns {
                events.schedule(stop, Event::Timer(i as u32, TimerKind::Stop));
            }
        }
        events.schedule(measure_from_ns, Event::MeasureStart);
        events.schedule(sample_interval_ns.min(duration_ns), Event::Sample);
        let metrics = Metrics::new(sample_interval_ns, measure_from_ns, monitored_links, flows.len(), generators);
        let timer_at = vec![[u64::MAX; TIMER_KINDS]; flows.len()];
        Self {
            now_ns: 0,
            end_ns: duration_ns,
            seed,
            events,
            links,
            flows,
            timer_at,
            out: Outbox::default(),
            metrics,
            events_processed: 0,
        }
    }

    pub fn now_ns(&self) -> u64 {
        self.now_ns
    }
    pub fn events_processed(&self) -> u64 {
        self.events_processed
    }
    pub fn is_done(&self) -> bool {
        self.now_ns >= self.end_ns
    }

    /// Runs every event up to and including `until_ns` (capped at the end).
    pub fn run_until(&mut self, until_ns: u64) {
        let until = until_ns.min(self.end_ns);
        while let Some(t) = self.events.peek_time() {
            if t > until {
                break;
            }
            let (t, ev) = self.events.pop().expect("peeked");
            self.now_ns = t;
            self.events_processed += 1;
            self.dispatch(ev);
        }
        self.now_ns = self.now_ns.max(until);
        if self.now_ns >= self.end_ns && !self.metrics.finished() {
            self.metrics.finish(self.end_ns, &mut self.links, &self.flows);
        }
    }

    pub fn run(&mut self) {
        self.run_until(self.end_ns);
    }

    fn dispatch(&mut self, ev: Event) {
        match ev {
            Event::LinkArrival(l) => {
                let (pkt, next) = self.links[l as usize].pop_arrival(self.now_ns);
                if let Some(t) = next {
                    self.events.schedule(t, Event::LinkArrival(l));
                }
                if let Some(p) = pkt {
                    self.forward(p);
                }
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
                self.metrics.sample(self.now_ns, &mut self.links, &self.flows);
                let next = self.now_ns + self.metrics.interval_ns();
                if next <= self.end_ns {
                    self.events.schedule(next, Event::Sample);
                }
            }
            Event::MeasureStart => self.metrics.start_window(self.now_ns, &mut self.links, &self.flows),
        }
    }

    fn on_timer(&mut self, f: usize, kind: TimerKind) {
        let k = kind as usize;
        if matches!(kind, TimerKind::Rto | TimerKind::DelayedAck | TimerKind::UdpSend) {
            if self.timer_at[f][k] != self.now_ns {
                return; // superseded by an earlier entry that already fired
            }
            self.timer_at[f][k] = u64::MAX;
        }
        let now = self.now_ns;
        let out = &mut self.out;
        match (&mut self.flows[f].endpoints, kind) {
            (Endpoints::Tcp { sender, .. }, TimerKind::Start) => sender.start(now, out),
            (Endpoints::Tcp { sender, .. }, TimerKind::Stop) => sender.stop(),
            (Endpoints::Tcp { sender, .. }, TimerKind::Rto) => sender.on_rto_timer(now, out),
            (Endpoints::Tcp { receiver, .. }, TimerKind::DelayedAck) => receiver.on_delack_timer(now, out),
            (Endpoints::Udp(u), TimerKind::Start) => u.start(now, out),
            (Endpoints::Udp(u), TimerKind::Stop) => u.stop(),
            (Endpoints::Udp(u), TimerKind::UdpSend) => u.on_timer(now, out),
            _ => {}
        }
        self.flush(f);
    }

    fn forward(&mut self, mut p: Packet) {
        let flow = &self.flows[p.flow as usize];
        let route = match p.dir {
            Dir::Forward => &flow.fwd,
            Dir::Backward => &flow.bwd,
        };
        let next = usize::from(p.hop) + 1;
        if next < route.len() {
            p.hop = next as u8;
            let l = route[next] as usize;
            self.enqueue(l, p);
        } else {
            self.deliver(p);
        }
    }

    fn enqueue(&mut self, l: usize, p: Packet) {
        match self.links[l].enqueue(self.now_ns, p) {
            Enqueued::ScheduleArrival(t) => self.events.schedule(t, Event::LinkArrival(l as u32)),
            Enqueued::ScheduleTxDone(t) => self.events.schedule(t, Event::LinkTxDone(l as u32)),
            Enqueued::Queued | Enqueued::Dropped => {}
        }
    }

    fn deliver(&mut self, p: Packet) {
        let f = p.flow as usize;
        let now = self.now_ns;
        let out = &mut self.out;
        match (&mut self.flows[f].endpoints, p.kind) {
            (Endpoints::Tcp { receiver, .. }, PacketKind::Data) => receiver.on_data(now, &p, out),
            (Endpoints::Tcp { sender, .. }, PacketKind::Ack) => sender.on_ack(now, &p, out),
            (Endpoints::Udp(u), PacketKind::Udp) => u.on_receive(&p),
            _ => unreachable!("packet kind does not match its flow"),
        }
        self.flush(f);
    }

    /// Injects what an endpoint produced and arms its timers.
    fn flush(&mut self, f: usize) {
        let mut out = std::mem::take(&mut self.out);
        for p in out.packets.drain(..) {
            let route = match p.dir {
                Dir::Forward => &self.flows[f].fwd,
                Dir::Backward => &self.flows[f].bwd,
            };
            let l = route[0] as usize;
            self.enqueue(l, p);
        }
        for (kind, t) in out.timers.drain(..) {
            let slot = &mut self.timer_at[f][kind as usize];
            if t < *slot {
                *slot = t;
                self.events.schedule(t, Event::Timer(f as u32, kind));
            }
        }
        self.out = out;
    }
}
