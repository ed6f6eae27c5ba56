//! What a run will cost before it starts: an upper bound on the memory it
//! can take and an estimate of its events, so that a scenario that would
//! exhaust the machine is refused with numbers instead of being killed.
//!
//! Memory has three parts:
//! - **packets held by links.** A link holds at most its queue limit plus
//!   one packet in service plus what fits on the wire (rate x delay / the
//!   smallest packet). It also holds at most what its sources can put there:
//!   a TCP flow has at most one receive window of data plus as many ACKs in
//!   the network; a UDP source at most every packet it sends in the run. A
//!   link's bound is the smaller of the two, so an unlimited queue is
//!   affordable when the windows feeding it are. Links that one link feeds
//!   and that never queue (a receiver's down link after the bottleneck)
//!   are bounded together by what that link delivers over their delays
//!   (`FedGroups`, proved there), and the links that carry only the ACKs
//!   of such a group's flows by the data it delivers over their ACKs'
//!   longest stay (`AckGroups`, proved there).
//! - **time series**: one row per sampled flow and per monitored link per
//!   sample, with the copies the Python front end makes to write them.
//! - **flows**: endpoints, controllers, routes and host links per flow.
//! - **summary**: the end-of-run summary, a row per flow and per link with
//!   copies of their names, and the measurement window it is built from
//!   (`metrics::summary_bytes`).

use crate::flow::{Endpoints, Flow};
use crate::link::{Cut, LinkSpec, QueueDiscipline, QueueLimit, BYTES_PER_HELD_PACKET};
use crate::units::NS_PER_SEC;

/// Default memory budget: 4 GiB.
pub const DEFAULT_MEMORY_BUDGET_BYTES: u64 = 4 << 30;

/// Bytes per time-series row, as stored (`metrics.rs`), times the copies
/// the Python front end makes (numpy arrays, Arrow tables, Parquet pages).
const FLOW_ROW_BYTES: u64 = 76 * 4;
const LINK_ROW_BYTES: u64 = 52 * 4;
/// Per flow: sender with scoreboard and controller, receiver, routes, names,
/// two hosts and their four access-link directions (measured by
/// `tests/memory.rs`: 3,048 bytes per idle CUBIC flow on 2026-11-28 after
/// issue 33's session 43 (one shared `TcpConfig` per entry, the `linux`
/// profile's state and RACK's send times boxed), 3,456 paced under `linux`;
/// 3,640 and 3,720 before it, 4,379 and 4,459 before issue 33). 3,712 is the
/// paced figure plus 7 %. A paced flow adds its `Pacer` (under 100 bytes,
/// one per flow whatever its window: the pacing timer is one slot of the
/// engine's per-flow timer array, not a timer per packet).
pub const FLOW_BYTES: u64 = 3712;
/// Per PLT connection: the same plus the LCM and packet manager and a
/// second receiver (measured by `tests/memory.rs`: 5,084 bytes per idle
/// PLT flow on 2026-11-28 after session 43, 6,228 before, 4,413 before
/// issue 33; 5,504 is that plus 8 %).
pub const PLT_FLOW_BYTES: u64 = 5504;
/// Per packet of a PLT connection's window: its state in the packet
/// manager (1 byte, 8 more while queued for the HCM), the LCM's record (16)
/// and the receiver's reassembly (1), with room for vector doubling.
const PLT_WINDOW_BYTES_PER_PKT: u64 = 64;
/// Per flow row of a run with PLT flows: the eight per-module columns,
/// which the front end spreads over every flow row (`metrics::ModuleSeries`).
const MODULE_ROW_BYTES: u64 = 64 * 4;
/// Per packet held: the link's ring entry plus the SACK scoreboard's and the
/// receiver's per-hole entries (at most one per packet in flight).
pub const PACKET_BYTES: u64 = BYTES_PER_HELD_PACKET + 96;

/// Events per bottleneck packet measured on dumbbells (3 hops for the data
/// packet, 3 for its ACK), and a conservative events-per-second figure for
/// one core (`longfat bench` measures about 23 M/s; 100,000 flows about 4 M/s).
const EVENTS_PER_BOTTLENECK_PACKET: f64 = 6.0;
pub const EVENTS_PER_WALL_SECOND: f64 = 10e6;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Estimate {
    /// Upper bound on packets all links hold at one time.
    pub max_packets_held: u64,
    pub packets_bytes: u64,
    pub series_rows: u64,
    pub series_bytes: u64,
    pub flows_bytes: u64,
    /// The end-of-run summary at its peak (`metrics::summary_bytes`), with
    /// its Python objects when a Python front end builds them.
    pub summary_bytes: u64,
    /// Of `summary_bytes`, the summary as Python objects
    /// (`metrics::python_summary_bytes`; 0 unless `BuildOptions::python_summary`).
    pub python_summary_bytes: u64,
    /// Packet captures (`run.pcap`): their records and files.
    pub capture_bytes: u64,
    /// Upper bound on the run's memory: the sum of the parts.
    pub memory_bytes: u64,
    /// Data packets the bottleneck links carry if they stay busy.
    pub bottleneck_packets: f64,
    /// Events the run will take, about.
    pub events: f64,
    /// The scenario field that the largest part depends on most.
    pub dominant_field: String,
}

impl Estimate {
    /// Adds the packet captures' memory; they become the dominant part if
    /// they are the largest.
    pub fn add_capture(&mut self, bytes: u64) {
        self.capture_bytes = bytes;
        self.memory_bytes = self.memory_bytes.saturating_add(bytes);
        if bytes
            > self
                .packets_bytes
                .max(self.series_bytes)
                .max(self.flows_bytes)
                .max(self.summary_bytes)
        {
            self.dominant_field = "run.pcap".into();
        }
    }

    /// Wall seconds the run will take at `EVENTS_PER_WALL_SECOND`.
    pub fn wall_s(&self) -> f64 {
        self.events / EVENTS_PER_WALL_SECOND
    }
}

/// What the estimate needs to know about the run.
pub struct RunShape<'a> {
    pub links: &'a [LinkSpec],
    pub flows: &'a [Flow],
    pub duration_ns: u64,
    pub sample_interval_ns: u64,
    pub monitored_links: &'a [usize],
    /// Which links are bottleneck hops, and the field that sizes their queue.
    pub bottleneck_links: &'a [usize],
    /// The end-of-run summary at its peak: `metrics::summary_bytes` (the
    /// caller's, as `metrics` sits beside this module, not below it).
    pub summary_bytes: u64,
}

/// Bytes in the largest binary unit that keeps the number at least 1
/// ("1.5 GiB", "12.0 MiB", "300 B": never "0.0 GiB").
pub fn human(b: u64) -> String {
    const UNITS: [(&str, u64); 4] = [
        ("TiB", 1 << 40),
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
    ];
    for (unit, size) in UNITS {
        if b >= size {
            return format!("{:.1} {unit}", b as f64 / size as f64);
        }
    }
    format!("{b} B")
}

/// The smallest and largest memory budget a user may set.
pub const MEMORY_BUDGET_RANGE_BYTES: (u64, u64) = (1 << 20, 1 << 50);

/// A memory budget as users write it (`--memory-budget`,
/// `LONGFAT_MEMORY_BUDGET`): `"8GiB"`, `"500MB"` or a number of bytes, in
/// `MEMORY_BUDGET_RANGE_BYTES`. Units: B, KB, MB, GB, TB (powers of 1000),
/// KiB, MiB, GiB, TiB (powers of 1024). The one parser of it: the Python
/// front end calls this through its bindings.
pub fn parse_memory_budget(text: &str) -> Result<u64, String> {
    let malformed =
        || format!("malformed size {text:?}; write e.g. 8GiB, 500MB or a number of bytes");
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = (&t[..split], t[split..].trim());
    if !number.starts_with(|c: char| c.is_ascii_digit()) {
        return Err(malformed());
    }
    let value: f64 = number.parse().map_err(|_| malformed())?;
    let scale: f64 = match unit {
        "" | "B" => 1.0,
        "KB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "TB" => 1e12,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => (1u64 << 30) as f64,
        "TiB" => (1u64 << 40) as f64,
        _ => return Err(malformed()),
    };
    let bytes = value * scale;
    let (lo, hi) = MEMORY_BUDGET_RANGE_BYTES;
    if !(lo as f64..=hi as f64).contains(&bytes) {
        return Err(format!("{text:?} is out of range; allowed 1MiB..=1024TiB"));
    }
    Ok(bytes as u64)
}

/// Packets a link can hold given only its own queue and wire.
/// Packets a link that is not a bottleneck holds in its queue, per flow
/// crossing it: a burst of a few packets.
const BURST_PKTS_PER_FLOW: u64 = 8;

/// `arrival_bps`: the bits per second that arrive at the link (its upstream
/// links and sources limit it); the wire holds at most delay x min(own rate,
/// arrival rate) of the smallest packets, and the queue fills only when
/// packets arrive faster than the link sends them.
fn link_capacity(l: &LinkSpec, min_pkt_bytes: u64, arrival_bps: f64, flows_through: u64) -> u64 {
    let limit = |q: &QueueLimit| match *q {
        QueueLimit::Packets(n) => n,
        QueueLimit::Bytes(b) => b / min_pkt_bytes,
    };
    let queued = match &l.queue {
        QueueDiscipline::DropTail(q) => limit(q),
        QueueDiscipline::Priority(qs) => qs.iter().map(limit).fold(0u64, u64::saturating_add),
        QueueDiscipline::PriorityShared { limit: q, .. } => limit(q),
        // An AQM keeps its queue short, but its buffer may fill.
        QueueDiscipline::Aqm { limit: q, .. } => limit(q),
    };
    // On the wire: packets leave at most once per serialization time of the
    // smallest packet, and no faster than they arrive.
    let own_bps = l.rate.bps() as f64;
    let queued = if arrival_bps > own_bps {
        queued
    } else {
        queued.min(BURST_PKTS_PER_FLOW.saturating_mul(flows_through))
    };
    let bits_on_wire = own_bps.min(arrival_bps) * l.delay_ns as f64 / NS_PER_SEC as f64;
    let wire = (bits_on_wire / (8.0 * min_pkt_bytes as f64)).min(u64::MAX as f64 / 2.0) as u64 + 1;
    queued.saturating_add(1).saturating_add(wire)
}

/// Per flow, the most bits per second the TCP flows sharing its forward
/// links can leave it: on each link, the link's rate over the number of TCP
/// flows that surely cross the link through the middle half of the flow's
/// life (long-lived flows that start by its first quarter and stop after
/// its third, the flow itself included), and the least of that over its
/// links. Counting every flow that ever crosses a link instead would make
/// early flows look slow when many others only start late, and hide the
/// queues they build while alone (a fuzz finding:
/// `tests/corpus/estimate-late-flows-share.toml`: alone for 50 of 60 s).
/// Requiring cover of the whole life instead would call a flow alone
/// whenever starts are staggered at all (100,000 flows started over 1 s of
/// a 10 s run would each look alone at their start), and refuse runs that
/// fit: the first and last quarter of a life are taken as transients.
///
/// Per link, a sweep in time with a Fenwick tree over stop times counts the
/// covering flows: O(n log n) in the flows crossing the link.
fn tcp_share_bps(flows: &[Flow], links: &[LinkSpec], duration_ns: u64) -> Vec<f64> {
    let mut on_link: Vec<Vec<u32>> = vec![Vec::new(); links.len()];
    for (i, f) in flows.iter().enumerate() {
        if f.is_tcp() {
            for &l in f.fwd.iter() {
                on_link[l as usize].push(i as u32);
            }
        }
    }
    let end = |f: &Flow| {
        f.stop_ns
            .unwrap_or(duration_ns)
            .min(duration_ns)
            .max(f.start_ns)
    };
    // The middle half of a flow's life: [start + L/4, end - L/4].
    let middle = |f: &Flow| {
        let quarter = (end(f) - f.start_ns) / 4;
        (f.start_ns + quarter, end(f) - quarter)
    };
    // A generated transfer's end is unknown before the run: it may finish
    // at once, so it covers no one (but is covered like any flow).
    let covers = |f: &Flow| f.generated.is_none();
    let mut share = vec![f64::INFINITY; flows.len()];
    for (l, members) in on_link.iter().enumerate() {
        if members.is_empty() {
            continue;
        }
        let rate = links[l].rate.bps() as f64;
        let mut coverers: Vec<(u64, u64)> = members
            .iter()
            .map(|&i| &flows[i as usize])
            .filter(|f| covers(f))
            .map(|f| (f.start_ns, end(f)))
            .collect();
        coverers.sort_unstable();
        let mut ends: Vec<u64> = coverers.iter().map(|c| c.1).collect();
        ends.sort_unstable();
        ends.dedup();
        let mut queries: Vec<(u64, u64, u32)> = members
            .iter()
            .map(|&i| {
                let (from, to) = middle(&flows[i as usize]);
                (from, to, i)
            })
            .collect();
        queries.sort_unstable();
        // Fenwick tree: coverers started so far, by end rank.
        let mut tree = vec![0u32; ends.len() + 1];
        let mut inserted = 0u32;
        let mut next = 0;
        for (from, to, i) in queries {
            while next < coverers.len() && coverers[next].0 <= from {
                let mut r = ends.partition_point(|&e| e < coverers[next].1) + 1;
                while r < tree.len() {
                    tree[r] += 1;
                    r += r & r.wrapping_neg();
                }
                inserted += 1;
                next += 1;
            }
            // Of those, the ones that stop before the middle half ends.
            let mut r = ends.partition_point(|&e| e < to);
            let mut stopping_early = 0;
            while r > 0 {
                stopping_early += tree[r];
                r -= r & r.wrapping_neg();
            }
            let sharers = (inserted - stopping_early).max(1);
            let s = &mut share[i as usize];
            *s = s.min(rate / f64::from(sharers));
        }
    }
    share
}

pub fn estimate(shape: &RunShape) -> Estimate {
    let RunShape {
        links,
        flows,
        duration_ns,
        sample_interval_ns,
        monitored_links,
        bottleneck_links,
        summary_bytes,
    } = *shape;
    let secs = duration_ns as f64 / NS_PER_SEC as f64;
    let loads = LinkLoads::of(links, flows, duration_ns);
    let (max_packets_held, worst_link) = packets_held(links, flows, &loads);
    let packets_bytes = max_packets_held.saturating_mul(PACKET_BYTES);
    let state = state_bytes(
        flows,
        duration_ns,
        sample_interval_ns,
        monitored_links.len() as u64,
    );
    let memory_bytes = packets_bytes
        .saturating_add(state.series_bytes)
        .saturating_add(state.flows_bytes)
        .saturating_add(summary_bytes);
    // The summary grows with the flows and their links: it counts with them.
    let per_flow = StateBytes {
        flows_bytes: state.flows_bytes.saturating_add(summary_bytes),
        ..state
    };
    let dominant_field = dominant_field(packets_bytes, &per_flow, worst_link, bottleneck_links);
    let bottleneck_packets: f64 = bottleneck_links
        .iter()
        .filter(|&&i| loads.min_data_pkt[i] != u64::MAX)
        .map(|&i| {
            (links[i].rate.bps() as f64 * secs / (8.0 * loads.min_data_pkt[i] as f64))
                .min(loads.offered_over_run[i])
        })
        .sum();
    Estimate {
        max_packets_held,
        packets_bytes,
        series_rows: state.series_rows,
        series_bytes: state.series_bytes,
        flows_bytes: state.flows_bytes,
        summary_bytes,
        python_summary_bytes: 0,
        capture_bytes: 0,
        memory_bytes,
        bottleneck_packets,
        events: bottleneck_packets * EVENTS_PER_BOTTLENECK_PACKET,
        dominant_field,
    }
}

/// One flow's most packets in the network at once, the packets it can
/// offer over the run, and its data and ACK sizes.
fn flow_most(f: &Flow, duration_ns: u64) -> (u64, f64, u32, u32) {
    // Per module, one window of data (or the whole transfer, if smaller)
    // plus at most one ACK per data packet.
    let windows = |c: &crate::tcp::TcpConfig, total: Option<u64>, modules: u64| {
        let window = c.rwnd_pkts.min(total.unwrap_or(u64::MAX));
        (
            window.saturating_mul(2 * modules),
            f64::INFINITY,
            c.packet_size_bytes,
            c.ack_size_bytes,
        )
    };
    match &f.endpoints {
        Endpoints::Tcp { sender, .. } => windows(sender.config(), sender.total_pkts(), 1),
        // PLT: the HCM and the LCM each have up to a receiver window out.
        Endpoints::Plt { sender, .. } => windows(sender.config(), sender.total_pkts(), 2),
        Endpoints::Udp(u) => {
            let c = u.config();
            let secs = duration_ns as f64 / NS_PER_SEC as f64;
            let active_ns = f
                .stop_ns
                .unwrap_or(duration_ns)
                .min(duration_ns)
                .saturating_sub(f.start_ns);
            let bits = c.rate.bps() as u128 * active_ns as u128 / NS_PER_SEC as u128;
            let size = u128::from(c.packet_size_bytes.max(1));
            let pkts = (bits / (8 * size)).min(u128::from(u64::MAX - 1)) as u64 + 1;
            (
                pkts,
                c.rate.bps() as f64 * secs / (8.0 * size as f64),
                c.packet_size_bytes,
                c.packet_size_bytes,
            )
        }
    }
}

/// Where a link's packets come from.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Feeder {
    /// No route crosses the link.
    Nothing,
    /// Every route that crosses the link comes to it from this link.
    Link(u32),
    /// A route starts at the link (a host hands it the packets), or routes
    /// come to it from different links.
    Several,
}

/// What the flows can put on each link (indexed by link), and each flow's
/// most packets in the network at once.
struct LinkLoads {
    /// What hands each link its packets, and their sizes.
    feeds: LinkFeeds,
    /// The smallest data packet that crosses it forward.
    min_data_pkt: Vec<u64>,
    /// The most packets the flows crossing it can have in the network at once.
    feed: Vec<u64>,
    /// What they could offer over the whole run (unbounded with TCP, which
    /// fills what it gets; the rate with UDP).
    offered_over_run: Vec<f64>,
    /// Bits per second that can arrive at the link.
    arrival_bps: Vec<f64>,
    flows_through: Vec<u64>,
    /// Per flow: its most packets in the network at once.
    flow_most: Vec<u64>,
}

impl LinkLoads {
    fn of(links: &[LinkSpec], flows: &[Flow], duration_ns: u64) -> Self {
        let n = links.len();
        let mut loads = Self {
            feeds: LinkFeeds::of(n, flows),
            min_data_pkt: vec![u64::MAX; n],
            feed: vec![0u64; n],
            offered_over_run: vec![0f64; n],
            arrival_bps: vec![0f64; n],
            flows_through: vec![0u64; n],
            flow_most: Vec::with_capacity(flows.len()),
        };
        // Bits per second that can arrive at each link: per flow, the
        // slowest link before it on the route, and for ACKs also the data
        // packets that trigger them. At the sending host: a UDP source's
        // rate; a TCP sender is clocked by its ACKs, so about its share of
        // its path's slowest link, at most twice that in slow start. (That
        // makes the estimate realistic rather than a strict bound: a window
        // far above the path's capacity could burst more. The engine's own
        // guard stops such a run cleanly when its packets pass the budget.)
        let rate = |l: u32| links[l as usize].rate.bps() as f64;
        let tcp_share = tcp_share_bps(flows, links, duration_ns);
        for f in flows {
            for &l in f.fwd.iter().chain(f.bwd.iter()) {
                loads.flows_through[l as usize] += 1;
            }
        }
        for (fi, f) in flows.iter().enumerate() {
            let (most, offered, data_size, ack_size) = flow_most(f, duration_ns);
            loads.flow_most.push(most);
            for &l in f.fwd.iter() {
                loads.min_data_pkt[l as usize] =
                    loads.min_data_pkt[l as usize].min(u64::from(data_size.max(1)));
            }
            let mut upstream = match &f.endpoints {
                Endpoints::Tcp { .. } | Endpoints::Plt { .. } => 2.0 * tcp_share[fi],
                Endpoints::Udp(u) => u.config().rate.bps() as f64,
            };
            for &l in f.fwd.iter() {
                loads.arrival_bps[l as usize] += upstream;
                upstream = upstream.min(rate(l));
            }
            if f.is_tcp() {
                // One ACK per data packet at most: the data path's slowest
                // link clocks them.
                let mut acks = upstream * f64::from(ack_size) / f64::from(data_size.max(1));
                for &l in f.bwd.iter() {
                    loads.arrival_bps[l as usize] += acks;
                    acks = acks.min(rate(l));
                }
            }
            for route in [&f.fwd, &f.bwd] {
                for &l in route.iter() {
                    let l = l as usize;
                    loads.feed[l] = loads.feed[l].saturating_add(most);
                    loads.offered_over_run[l] += offered;
                }
            }
        }
        loads
    }
}

/// Two upper bounds on the packets held at once; the run's is the smaller.
/// By link: no link holds more than its queue and wire, nor more than its
/// flows can send. By flow: no flow has more than its most in the network,
/// nor more than the links on its routes can hold. Also the link that holds
/// the most.
fn packets_held(links: &[LinkSpec], flows: &[Flow], loads: &LinkLoads) -> (u64, Option<usize>) {
    let capacity: Vec<u64> = links
        .iter()
        .enumerate()
        .map(|(i, l)| {
            if loads.feeds.min_pkt[i] == u64::MAX {
                0
            } else {
                link_capacity(
                    l,
                    loads.feeds.min_pkt[i],
                    loads.arrival_bps[i],
                    loads.flows_through[i],
                )
            }
        })
        .collect();
    let fed = FedGroups::of(links, loads);
    let acks = AckGroups::of(links, flows, loads, &fed);
    let mut by_link = 0u64;
    // Per group: what it holds by the links' own bounds.
    let mut group_held = vec![0u64; fed.groups.len()];
    let mut ack_held = vec![0u64; acks.most_held.len()];
    let (mut worst_link, mut worst_held) = (None, 0u64);
    for (i, (&cap, &feed)) in capacity.iter().zip(&loads.feed).enumerate() {
        let held = cap.min(feed);
        // A link in both kinds of group counts in its ACK group; the fed
        // group's bound holds for what is left of it all the more.
        match (acks.group_of[i], fed.group_of[i]) {
            (Some(a), _) => ack_held[a] = ack_held[a].saturating_add(held),
            (None, Some(g)) => group_held[g] = group_held[g].saturating_add(held),
            (None, None) => by_link = by_link.saturating_add(held),
        }
        if held > worst_held {
            (worst_link, worst_held) = (Some(i), held);
        }
    }
    for (held, g) in group_held.iter().zip(&fed.groups) {
        by_link = by_link.saturating_add((*held).min(g.most_held()));
    }
    for (held, most) in ack_held.iter().zip(&acks.most_held) {
        by_link = by_link.saturating_add((*held).min(*most));
    }
    let by_flow = flows
        .iter()
        .zip(&loads.flow_most)
        .fold(0u64, |acc, (f, &most)| {
            let route_capacity = f
                .fwd
                .iter()
                .chain(f.bwd.iter())
                .fold(0u64, |c, &l| c.saturating_add(capacity[l as usize]));
            acc.saturating_add(most.min(route_capacity))
        });
    (by_link.min(by_flow), worst_link)
}

/// The links fed by one link that never queue, grouped by that link.
///
/// A link M qualifies if it is a FIFO (drop-tail) link, no route starts at
/// it, every route that crosses it comes to it from the same link L, all
/// its packets have one size s, and it sends s at least as fast as L
/// (`tx_M(s) <= tx_L(s)`, the engine's own rounded transmit times). In a
/// dumbbell: each receiver's down link (fed by the bottleneck) and each
/// sender's down link (fed by the reverse bottleneck). Then:
///
/// 1. Packets leave L's far end at least `tx_L` of the later one apart:
///    L (FIFO, priority or AQM alike) serializes one packet at a time, a
///    packet's transmission ends no earlier than the previous one's end
///    plus its own transmit time, and every packet then travels L's one
///    delay. Packets L drops or corrupts only leave gaps. So packets
///    entering M (a subsequence, handed on at the instant they arrive) are
///    at least `tx_L(s)` apart.
/// 2. No packet waits at M. By induction on M's arrivals: if packet k
///    started service on arrival, it ends at `a_k + tx_M(s) <= a_k +
///    tx_L(s) <= a_{k+1}`, so packet k+1 finds M idle (the engine takes a
///    transmission that ends at the arrival instant as done: `advance`).
///    So M holds packet k exactly over `[a_k, a_k + tx_M(s) + d_M]`.
/// 3. Every packet the group of L holds at time t entered its link in
///    `[t - T, t]`, `T` the largest `tx_M(s) + d_M` of the group, and such
///    entries are at least `g` apart, `g` the smallest `tx_L(s)` of the
///    group: at most `T / g + 1` packets in all, however many links
///    the group has.
///
/// That is a bound whatever the flows do (windows, bursts, timers), where
/// a link's own bound (its queue, a burst per flow, a wire at its arrival
/// rate) rests on how fast the senders go; a group takes the smaller of
/// the two. Links that do not qualify (a host's own link, a link several
/// links feed, a priority or AQM link, mixed packet sizes, a slower link
/// after a faster one) keep their own bound.
struct FedGroups {
    /// Per link: its group, if it qualifies.
    group_of: Vec<Option<usize>>,
    groups: Vec<FedGroup>,
}

struct FedGroup {
    /// The longest `tx_M(s) + d_M` of the group's links.
    longest_hold_ns: u64,
    /// The smallest `tx_L(s)` of the group's packet sizes: the least
    /// spacing of packets entering the group.
    least_gap_ns: u64,
}

impl FedGroup {
    fn most_held(&self) -> u64 {
        (self.longest_hold_ns / self.least_gap_ns.max(1)).saturating_add(1)
    }
}

impl FedGroups {
    fn of(links: &[LinkSpec], loads: &LinkLoads) -> Self {
        let mut group_of = vec![None; links.len()];
        let mut groups: Vec<FedGroup> = Vec::new();
        let mut group_by_feeder: Vec<Option<usize>> = vec![None; links.len()];
        for (m, spec) in links.iter().enumerate() {
            let Some(l) = loads.feeds.never_queues(links, m) else {
                continue;
            };
            let s = loads.feeds.min_pkt[m];
            let tx_m = spec.rate.tx_time_ns(s);
            let tx_l = links[l as usize].rate.tx_time_ns(s);
            let hold = tx_m.saturating_add(spec.delay_ns);
            let g = *group_by_feeder[l as usize].get_or_insert_with(|| {
                groups.push(FedGroup {
                    longest_hold_ns: 0,
                    least_gap_ns: u64::MAX,
                });
                groups.len() - 1
            });
            let group = &mut groups[g];
            group.longest_hold_ns = group.longest_hold_ns.max(hold);
            group.least_gap_ns = group.least_gap_ns.min(tx_l);
            group_of[m] = Some(g);
        }
        Self { group_of, groups }
    }
}

/// The links that carry nothing but the ACKs of flows whose data reaches
/// their receivers through one fed group (`FedGroups`), grouped by that
/// group's feeding link L.
///
/// A flow belongs to L's ACK group if it is a TCP connection (not PLT,
/// not UDP), its forward route ends with L and then a link M of L's fed
/// group, and every link of its backward route is a drop-tail FIFO. A
/// link qualifies if only such flows' backward routes cross it. Then, at
/// any time t, those links together hold at most
/// `(H + D + C) / g + 1` packets, where g is the group's `least_gap_ns`,
/// C its `longest_hold_ns`, D the longest `ack_delay_bound_ns` of the
/// flows' receivers and H the longest an ACK can take over a flow's
/// backward route (`residence_ns`):
///
/// 1. Only these flows' ACKs are on these links. An ACK held at t was
///    sent at some e in `[t - H, t]`: the receiver hands it to the first
///    link at once (`Simulation::flush`) and each link holds it at most
///    its `residence_ns`.
/// 2. Each ACK is charged to a distinct data packet that reached its
///    receiver in `[e - D, e]` (`TcpReceiver::ack_delay_bound_ns`).
/// 3. Each such packet entered its M at most C before it reached the
///    receiver (M never queues: `FedGroups`, step 2), so in
///    `[t - H - D - C, t]`; and packets entering the group are at least g
///    apart (`FedGroups`, step 1). At most `(H + D + C) / g + 1` of them.
///
/// In a dumbbell the ACK path of every flow (its receiver's up link, the
/// reverse bottleneck, its sender's down link) is one such group: ACKs
/// come no faster than the bottleneck delivers data, where each link's own
/// bound allows a burst per flow.
struct AckGroups {
    /// Per link: its ACK group, if it qualifies.
    group_of: Vec<Option<usize>>,
    /// Per ACK group: the most packets its links hold at once.
    most_held: Vec<u64>,
}

impl AckGroups {
    fn of(links: &[LinkSpec], flows: &[Flow], loads: &LinkLoads, fed: &FedGroups) -> Self {
        let feeds = &loads.feeds;
        // Per flow: the fed group its data reaches the receiver through,
        // if the flow belongs to that group's ACK group.
        let member: Vec<Option<usize>> = flows
            .iter()
            .map(|f| {
                let Endpoints::Tcp { .. } = f.endpoints else {
                    return None;
                };
                let [.., l, m] = *f.fwd else { return None };
                let g = fed.group_of[m as usize]?;
                let fifo =
                    |&x: &u32| matches!(links[x as usize].queue, QueueDiscipline::DropTail(_));
                (feeds.feeder[m as usize] == Feeder::Link(l) && f.bwd.iter().all(fifo)).then_some(g)
            })
            .collect();
        // Per link: the one ACK group whose flows' backward routes alone
        // cross it (Some(None): another route crosses it too).
        let mut carried: Vec<Option<Option<usize>>> = vec![None; links.len()];
        for (f, &g) in flows.iter().zip(&member) {
            for (route, on_bwd) in [(&f.fwd, false), (&f.bwd, true)] {
                for &x in route.iter() {
                    let c = &mut carried[x as usize];
                    *c = match (*c, g.filter(|_| on_bwd)) {
                        (None, Some(g)) => Some(Some(g)),
                        (Some(Some(a)), Some(g)) if a == g => Some(Some(a)),
                        _ => Some(None),
                    };
                }
            }
        }
        // Per fed group: the longest ACK residence and receiver delay.
        let mut worst = vec![(0u64, 0u64); fed.groups.len()];
        for (f, g) in flows.iter().zip(&member) {
            let (Some(g), Endpoints::Tcp { receiver, .. }) = (g, &f.endpoints) else {
                continue;
            };
            let h = f.bwd.iter().fold(0u64, |acc, &x| {
                acc.saturating_add(residence_ns(&links[x as usize], feeds, x as usize))
            });
            let w = &mut worst[*g];
            *w = (w.0.max(h), w.1.max(receiver.ack_delay_bound_ns()));
        }
        let most_held = worst
            .iter()
            .zip(&fed.groups)
            .map(|(&(h, d), g)| {
                let span = h.saturating_add(d).saturating_add(g.longest_hold_ns);
                (span / g.least_gap_ns.max(1)).saturating_add(1)
            })
            .collect();
        let group_of = carried.into_iter().map(Option::flatten).collect();
        Self {
            group_of,
            most_held,
        }
    }
}

/// The longest a packet can stay on drop-tail link x (queued, in service
/// and on the wire), from the engine's admission test (`Link::enqueue`):
/// a packet is admitted with at most n packets in the system ahead of it
/// (n the packet limit), or with at most b bytes waiting behind the one in
/// service (b the byte limit: at most b / smallest packet of them, each
/// transmit time rounded up by under 1 ns); then its own transmission and
/// the delay.
fn residence_ns(l: &LinkSpec, feeds: &LinkFeeds, x: usize) -> u64 {
    let (min, max) = (feeds.min_pkt[x].max(1), feeds.max_pkt[x]);
    let tx_max = l.rate.tx_time_ns(max);
    let wait = match l.queue {
        QueueDiscipline::DropTail(QueueLimit::Packets(n)) => n.saturating_mul(tx_max),
        QueueDiscipline::DropTail(QueueLimit::Bytes(b)) => tx_max
            .saturating_add(l.rate.tx_time_ns(b))
            .saturating_add(b / min),
        _ => u64::MAX,
    };
    wait.saturating_add(tx_max).saturating_add(l.delay_ns)
}

/// Each link's part in the engine's cut-through (`link::Cut`): a link that
/// never queues and that one link feeds (`LinkFeeds::never_queues`) is
/// handed its packets ahead of time if that feeder is a DropTail FIFO link
/// (or an AQM link that corrupts nothing, handing a packet over when it
/// enters service) whose packets all go on to it (none ends its route at the feeder, none
/// goes elsewhere): two links in series, as a one-flow dumbbell's
/// bottleneck and its receiver's link. A link that never queues is not
/// itself a feeder, so a packet is handed ahead one hop at most.
///
/// Only in series: a feeder with many fed links (a bottleneck shared by
/// many flows) would hand each packet to a link it then leaves alone for a
/// whole delay, which at 100,000 flows cost a cache miss per packet more
/// than it saved (scale-100k 88.2 s against 79.0 s, docs/performance.md).
pub fn cut_through(links: &[LinkSpec], flows: &[Flow]) -> Vec<Cut> {
    let feeds = LinkFeeds::of(links.len(), flows);
    let fed_by: Vec<Option<u32>> = (0..links.len())
        .map(|m| feeds.never_queues(links, m))
        .collect();
    let mut feeder: Vec<bool> = links
        .iter()
        .zip(&fed_by)
        .zip(&feeds.feeder)
        .map(|((l, f), by)| {
            let queue_ok = match l.queue {
                QueueDiscipline::DropTail(_) => true,
                // An AQM link hands a packet over when it enters service
                // (`link::HandOver`); a corrupted packet would have to be
                // counted at the far end, so only one that corrupts none.
                QueueDiscipline::Aqm { .. } => l.loss_prob <= 0.0,
                _ => false,
            };
            queue_ok && f.is_none() && *by != Feeder::Nothing
        })
        .collect();
    // The one link each link's packets go on to.
    let mut next: Vec<Option<u32>> = vec![None; links.len()];
    for f in flows {
        for route in [&f.fwd, &f.bwd] {
            for (i, &l) in route.iter().enumerate() {
                let l = l as usize;
                match route.get(i + 1) {
                    Some(&m)
                        if next[l].is_none_or(|n| n == m)
                            && fed_by[m as usize] == Some(l as u32) =>
                    {
                        next[l] = Some(m);
                    }
                    _ => feeder[l] = false,
                }
            }
        }
    }
    fed_by
        .iter()
        .zip(&feeder)
        .map(|(fed, &is_feeder)| match fed {
            Some(l) if feeder[*l as usize] => Cut::Fed,
            _ if is_feeder => Cut::Feeder,
            _ => Cut::None,
        })
        .collect()
}

/// What hands each link its packets, and the sizes of those packets
/// (indexed by link): what `FedGroups` and the engine's cut-through
/// (`cut_through`) rest on.
struct LinkFeeds {
    /// What hands the link its packets: the one link before it on every
    /// route that crosses it, or several links or a host.
    feeder: Vec<Feeder>,
    /// The smallest packet that crosses the link (data forward, ACKs back).
    min_pkt: Vec<u64>,
    /// The largest packet that crosses the link.
    max_pkt: Vec<u64>,
}

impl LinkFeeds {
    fn of(n_links: usize, flows: &[Flow]) -> Self {
        let mut feeds = Self {
            feeder: vec![Feeder::Nothing; n_links],
            min_pkt: vec![u64::MAX; n_links],
            max_pkt: vec![0; n_links],
        };
        for f in flows {
            let (data_size, ack_size) = f.endpoints.packet_sizes_bytes();
            for (route, size) in [(&f.fwd, data_size), (&f.bwd, ack_size)] {
                let size = u64::from(size.max(1));
                let mut before = None;
                for &l in route.iter() {
                    let fed = &mut feeds.feeder[l as usize];
                    *fed = match (*fed, before) {
                        (Feeder::Nothing, Some(b)) => Feeder::Link(b),
                        (Feeder::Link(a), Some(b)) if a == b => Feeder::Link(a),
                        _ => Feeder::Several,
                    };
                    before = Some(l);
                    let l = l as usize;
                    feeds.min_pkt[l] = feeds.min_pkt[l].min(size);
                    feeds.max_pkt[l] = feeds.max_pkt[l].max(size);
                }
            }
        }
        feeds
    }

    /// Link m's feeder, if m never queues (the conditions and the proof
    /// are `FedGroups`'s): a FIFO link that one link L feeds, all its
    /// packets one size s, and `tx_m(s) <= tx_L(s)`.
    fn never_queues(&self, links: &[LinkSpec], m: usize) -> Option<u32> {
        let Feeder::Link(l) = self.feeder[m] else {
            return None;
        };
        let s = self.min_pkt[m];
        if s != self.max_pkt[m] || !matches!(links[m].queue, QueueDiscipline::DropTail(_)) {
            return None;
        }
        (links[m].rate.tx_time_ns(s) <= links[l as usize].rate.tx_time_ns(s)).then_some(l)
    }
}

/// The most samples a run takes (rows per sampled flow and per monitored
/// link). The engine schedules the first `Event::Sample` at
/// `min(interval, duration)` and each one the next `interval` later if that
/// is no later than the end (`Simulation::new`, `Event::Sample` in
/// `sim.rs`), and the end-of-run summary takes none: samples fall at
/// `min(I, D) + k I <= D`, which is `floor(D / I)` of them if `I <= D` and
/// one if not (a sample at time 0 adds no row: `Metrics::sample` skips an
/// empty interval).
pub fn samples(duration_ns: u64, sample_interval_ns: u64) -> u64 {
    (duration_ns / sample_interval_ns.max(1)).max(1)
}

/// The run's memory besides the packets: the time series and the flows.
struct StateBytes {
    series_rows: u64,
    series_bytes: u64,
    flows_bytes: u64,
    /// The part of `flows_bytes` PLT's per-packet state takes.
    plt_window_bytes: u64,
}

fn state_bytes(
    flows: &[Flow],
    duration_ns: u64,
    sample_interval_ns: u64,
    monitored_links: u64,
) -> StateBytes {
    let samples = samples(duration_ns, sample_interval_ns);
    let series_flows = flows.iter().filter(|f| f.generated.is_none()).count() as u64;
    let flow_rows = samples.saturating_mul(series_flows);
    let link_rows = samples.saturating_mul(monitored_links);
    let plt_flows = flows
        .iter()
        .filter(|f| f.endpoints.plt_window_pkts().is_some())
        .count() as u64;
    let row_bytes = FLOW_ROW_BYTES + if plt_flows > 0 { MODULE_ROW_BYTES } else { 0 };
    let series_bytes = flow_rows
        .saturating_mul(row_bytes)
        .saturating_add(link_rows.saturating_mul(LINK_ROW_BYTES));
    // A PLT connection also keeps state per packet of its window (the
    // packet manager, the LCM's packets, the receiver's reassembly), in
    // the network or not.
    let plt_window_bytes = flows
        .iter()
        .fold(0u64, |acc, f| match f.endpoints.plt_window_pkts() {
            Some(window) => {
                let w = window.min(f.endpoints.total_pkts().unwrap_or(u64::MAX));
                acc.saturating_add(w.saturating_mul(PLT_WINDOW_BYTES_PER_PKT))
            }
            None => acc,
        });
    let flows_bytes = (flows.len() as u64 - plt_flows)
        .saturating_mul(FLOW_BYTES)
        .saturating_add(plt_flows.saturating_mul(PLT_FLOW_BYTES))
        .saturating_add(plt_window_bytes);
    StateBytes {
        series_rows: flow_rows.saturating_add(link_rows),
        series_bytes,
        flows_bytes,
        plt_window_bytes,
    }
}

/// The scenario field the largest part of the memory depends on most.
fn dominant_field(
    packets_bytes: u64,
    state: &StateBytes,
    worst_link: Option<usize>,
    bottleneck_links: &[usize],
) -> String {
    let StateBytes {
        series_bytes,
        flows_bytes,
        plt_window_bytes,
        ..
    } = *state;
    if packets_bytes >= series_bytes && packets_bytes >= flows_bytes {
        match worst_link {
            Some(i) if bottleneck_links.contains(&i) => "network.bottleneck.queue",
            _ => "network.access.queue",
        }
    } else if series_bytes >= flows_bytes {
        "run.sample_interval"
    } else if plt_window_bytes >= flows_bytes / 2 {
        "plt.receive_buffer"
    } else {
        "flows"
    }
    .to_string()
}

/// Refuses an estimate over `budget_bytes`, with the numbers and what to change.
pub fn check(e: &Estimate, budget_bytes: u64) -> Result<(), (String, String)> {
    if e.memory_bytes <= budget_bytes {
        return Ok(());
    }
    let hint = match e.dominant_field.as_str() {
        "run.sample_interval" => "use a longer run.sample_interval or a shorter run",
        "flows" => "use fewer flows",
        "run.pcap" => "capture fewer flows (run.pcap, --pcap) or a shorter run",
        "plt.receive_buffer" => "give the PLT flows a smaller plt.receive_buffer (each may hold that many packets out of order) or use fewer of them",
        _ => "use smaller queues, shorter delays or smaller tcp.rwnd windows",
    };
    let capture = if e.capture_bytes > 0 {
        format!("; packet captures: {}", human(e.capture_bytes))
    } else {
        String::new()
    };
    Err((
        e.dominant_field.clone(),
        format!(
            "the run could need {} of memory (packets in queues and on the wire: {}, up to {} packets; time series: {}, {} rows; flows: {}; summary: {}{capture}), more than the memory budget of {}; {hint}, or raise the budget (--memory-budget, LONGFAT_MEMORY_BUDGET)",
            human(e.memory_bytes),
            human(e.packets_bytes),
            e.max_packets_held,
            human(e.series_bytes),
            e.series_rows,
            human(e.flows_bytes),
            human(e.summary_bytes),
            human(budget_bytes),
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_budget_units_and_range() {
        assert_eq!(parse_memory_budget("8GiB"), Ok(8 << 30));
        assert_eq!(parse_memory_budget(" 1.5 MiB "), Ok(3 << 19));
        assert_eq!(parse_memory_budget("500MB"), Ok(500_000_000));
        assert_eq!(parse_memory_budget("2TB"), Ok(2_000_000_000_000));
        assert_eq!(parse_memory_budget("1048576"), Ok(1 << 20));
        assert_eq!(parse_memory_budget("1048576B"), Ok(1 << 20));
        assert_eq!(parse_memory_budget("1024TiB"), Ok(1 << 50));
        for bad in [
            "", "GiB", "-1GiB", "8 gib", "1e9", "1.2.3MB", "8GiBs", "+4GiB",
        ] {
            let e = parse_memory_budget(bad).unwrap_err();
            assert!(e.starts_with("malformed size"), "{bad:?}: {e}");
        }
        for out in ["1048575", "0", "1025TiB"] {
            let e = parse_memory_budget(out).unwrap_err();
            assert!(e.ends_with("allowed 1MiB..=1024TiB"), "{out:?}: {e}");
        }
    }
}
