//! Measurements: per-flow and per-link time series sampled at a fixed
//! interval (memory grows with duration / interval, never with packets),
//! and counters captured at the start and end of the measurement window.

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{json, Value};

use crate::flow::{EcnCounters, Flow, FlowCounters};
use crate::link::{Link, LinkSpec};
use crate::plt::ModuleCounters;
use crate::units::NS_PER_SEC;

/// Per-flow rows, one per flow per sample (long format).
#[derive(Clone, Debug, Default)]
pub struct FlowSeries {
    pub time_ns: Vec<u64>,
    pub flow: Vec<u32>,
    /// Payload delivered in order at the receiver over the interval.
    pub goodput_bps: Vec<f64>,
    /// Bytes the sender put on the wire (retransmissions included).
    pub throughput_bps: Vec<f64>,
    pub cwnd_pkts: Vec<f64>,
    pub ssthresh_pkts: Vec<f64>,
    pub srtt_ns: Vec<u64>,
    pub rtt_ns: Vec<u64>,
    pub retransmits: Vec<u64>,
    pub timeouts: Vec<u64>,
}

/// Per-module rows of PLT connections: `row` is the flow row (index into
/// `FlowSeries`) they extend. Counts are over the sample interval.
#[derive(Clone, Debug, Default)]
pub struct ModuleSeries {
    pub row: Vec<u32>,
    pub hcm_cwnd_pkts: Vec<f64>,
    pub lcm_cwnd_pkts: Vec<f64>,
    pub hcm_sent_pkts: Vec<u64>,
    pub lcm_sent_pkts: Vec<u64>,
    /// HCM: its own retransmissions; LCM: packets it gave up on.
    pub hcm_lost_pkts: Vec<u64>,
    pub lcm_lost_pkts: Vec<u64>,
    /// Payload that reached the receiver first through each module.
    pub hcm_goodput_bps: Vec<f64>,
    pub lcm_goodput_bps: Vec<f64>,
}

/// ECN counters of the flows that run ECN (`tcp.ecn`): `row` is the flow
/// row (index into `FlowSeries`) they extend. Cumulative counts.
#[derive(Clone, Debug, Default)]
pub struct EcnSeries {
    pub row: Vec<u32>,
    pub ece_acks: Vec<u64>,
    pub ecn_reductions: Vec<u64>,
    pub ce_marks: Vec<u64>,
}

/// Per-link rows, one per monitored link per sample.
#[derive(Clone, Debug, Default)]
pub struct LinkSeries {
    pub time_ns: Vec<u64>,
    pub link: Vec<u32>,
    pub queue_pkts: Vec<u64>,
    pub queue_bytes: Vec<u64>,
    /// Fraction of capacity used over the interval.
    pub utilization: Vec<f64>,
    pub drops_overflow: Vec<u64>,
    pub drops_random: Vec<u64>,
    /// Packets an AQM dropped over the interval (not for a full buffer).
    pub drops_aqm: Vec<u64>,
    /// Packets an AQM CE-marked over the interval.
    pub ce_marks: Vec<u64>,
    /// Mean and largest sojourn (enqueue to start of service) of the packets
    /// that left an AQM link's queue over the interval; NaN when none left
    /// or the link has no AQM.
    pub sojourn_mean_ns: Vec<f64>,
    pub sojourn_max_ns: Vec<f64>,
}

#[derive(Clone, Copy, Debug, Default)]
struct LinkSnap {
    departed_bytes: u64,
    offered_pkts: u64,
    drops_overflow: u64,
    drops_random: u64,
    drops_aqm: u64,
    ce_marks: u64,
    /// AQM links: packets dequeued and their summed sojourns, so far.
    sojourn_pkts: u64,
    sojourn_sum_ns: u64,
}

fn link_snap(l: &Link) -> LinkSnap {
    let so = l.sojourn_total().unwrap_or_default();
    LinkSnap {
        sojourn_pkts: so.pkts,
        sojourn_sum_ns: so.sum_ns,
        departed_bytes: l.counters.departed_bytes,
        offered_pkts: l.counters.offered_pkts,
        drops_overflow: l.counters.drops_overflow,
        drops_random: l.counters.drops_random,
        drops_aqm: l.counters.drops_aqm,
        ce_marks: l.counters.ce_marks,
    }
}

/// The measurement window's start: the time, every flow's counters and
/// every link's, as `finish` takes differences from them. Compact: with
/// 1,000,000 dumbbell flows and 4,000,002 links a `FlowCounters` (160
/// bytes) and a `LinkSnap` (64) each took 416 bytes a flow; here 48 and
/// 32 (`summary_window_bytes`).
#[derive(Debug)]
struct Window {
    start_ns: u64,
    flows: Vec<WindowFlow>,
    /// Per link: departed bytes, offered packets, overflow and random drops.
    links: Vec<[u64; 4]>,
    /// The links whose other counters (AQM drops, CE marks, AQM sojourns)
    /// are not all zero, in link order, with those counters: only AQM
    /// links count them (`Link::sojourn_total`; the AQM queue's paths).
    aqm_links: Vec<(u32, [u64; 4])>,
}

/// A flow's `FlowCounters` without its ECN and PLT parts, which only the
/// flows that have them keep, in a box.
#[derive(Debug)]
struct WindowFlow {
    delivered_bytes: u64,
    sent_bytes: u64,
    sent_pkts: u64,
    retransmits: u64,
    timeouts: u64,
    fast_recoveries: u64,
    rare: Option<Box<(Option<EcnCounters>, ModuleCounters)>>,
}

impl WindowFlow {
    fn of(c: &FlowCounters) -> Self {
        let rare = (c.ecn.is_some() || c.modules != ModuleCounters::default())
            .then(|| Box::new((c.ecn, c.modules)));
        Self {
            delivered_bytes: c.delivered_bytes,
            sent_bytes: c.sent_bytes,
            sent_pkts: c.sent_pkts,
            retransmits: c.retransmits,
            timeouts: c.timeouts,
            fast_recoveries: c.fast_recoveries,
            rare,
        }
    }

    /// The counters it was made from.
    fn counters(&self) -> FlowCounters {
        let (ecn, modules) = self.rare.as_deref().copied().unwrap_or_default();
        FlowCounters {
            delivered_bytes: self.delivered_bytes,
            sent_bytes: self.sent_bytes,
            sent_pkts: self.sent_pkts,
            retransmits: self.retransmits,
            timeouts: self.timeouts,
            fast_recoveries: self.fast_recoveries,
            ecn,
            modules,
        }
    }
}

impl Window {
    fn take(start_ns: u64, links: &[Link], flows: &[Flow]) -> Self {
        let mut aqm_links = vec![];
        let links = links
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let s = link_snap(l);
                let rare = [s.drops_aqm, s.ce_marks, s.sojourn_pkts, s.sojourn_sum_ns];
                if rare != [0; 4] {
                    aqm_links.push((i as u32, rare));
                }
                [
                    s.departed_bytes,
                    s.offered_pkts,
                    s.drops_overflow,
                    s.drops_random,
                ]
            })
            .collect();
        Self {
            start_ns,
            flows: flows
                .iter()
                .map(|f| WindowFlow::of(&f.endpoints.counters()))
                .collect(),
            links,
            aqm_links,
        }
    }

    /// Link `i`'s counters at the start.
    fn link(&self, i: usize) -> LinkSnap {
        let [departed_bytes, offered_pkts, drops_overflow, drops_random] = self.links[i];
        let [drops_aqm, ce_marks, sojourn_pkts, sojourn_sum_ns] = self
            .aqm_links
            .binary_search_by_key(&(i as u32), |a| a.0)
            .map_or([0; 4], |k| self.aqm_links[k].1);
        LinkSnap {
            departed_bytes,
            offered_pkts,
            drops_overflow,
            drops_random,
            drops_aqm,
            ce_marks,
            sojourn_pkts,
            sojourn_sum_ns,
        }
    }
}

/// What a flow's next series row takes differences from.
#[derive(Clone, Copy, Debug, Default)]
struct LastSample {
    delivered_bytes: u64,
    sent_bytes: u64,
}

#[derive(Debug)]
pub struct Metrics {
    interval_ns: u64,
    measure_from_ns: u64,
    pub monitored_links: Vec<usize>,
    pub flows: FlowSeries,
    pub modules: ModuleSeries,
    pub ecn: EcnSeries,
    pub links: LinkSeries,
    /// Each flow's delivered and sent bytes at the last sample: all a
    /// series row takes a difference of (16 bytes a flow, not a whole
    /// `FlowCounters`), and PLT connections' module counters apart
    /// (empty until a PLT connection is sampled).
    last_flow: Vec<LastSample>,
    /// The flows with a time series (all but generated transfers, which
    /// report their completion time), in order: a sample visits these only,
    /// not every flow (PLT's Fig. 9 has 1.5 million transfers: passing over
    /// all of them at each of 12,000 samples grew with the square of the
    /// run's length).
    series_flows: Vec<u32>,
    last_modules: Vec<ModuleCounters>,
    /// The monitored links' counters at the last sample, in the order of
    /// `monitored_links` (not one per link: at 1,000,000 dumbbell flows a
    /// snapshot of every link took 256 MB).
    last_link: Vec<LinkSnap>,
    last_sample_ns: u64,
    window_start: Option<Window>,
    summary: Option<Summary>,
    /// Names of the traffic generators, by `Generated::generator`.
    generators: Vec<String>,
}

impl Metrics {
    pub fn new(
        interval_ns: u64,
        measure_from_ns: u64,
        monitored_links: Vec<usize>,
        n_flows: usize,
        series_flows: Vec<u32>,
        generators: Vec<String>,
    ) -> Self {
        Self {
            interval_ns,
            measure_from_ns,
            monitored_links,
            flows: FlowSeries::default(),
            modules: ModuleSeries::default(),
            ecn: EcnSeries::default(),
            links: LinkSeries::default(),
            last_flow: vec![LastSample::default(); n_flows],
            series_flows,
            last_modules: vec![],
            last_link: vec![],
            last_sample_ns: 0,
            window_start: None,
            summary: None,
            generators,
        }
    }

    pub fn interval_ns(&self) -> u64 {
        self.interval_ns
    }
    pub fn finished(&self) -> bool {
        self.summary.is_some()
    }
    /// The summary as a JSON value (built on each call: front ends that
    /// print it use `summary_rows` and serialize it straight to text).
    pub fn summary(&self) -> Option<Value> {
        self.summary
            .as_ref()
            .map(|s| serde_json::to_value(s).expect("a summary serializes"))
    }
    /// The summary, to serialize (`serde_json::to_writer` and the like give
    /// the text `summary` would).
    pub fn summary_rows(&self) -> Option<&Summary> {
        self.summary.as_ref()
    }

    pub fn sample(&mut self, now_ns: u64, links: &mut [Link], specs: &[LinkSpec], flows: &[Flow]) {
        if self.last_link.is_empty() {
            self.last_link = vec![LinkSnap::default(); self.monitored_links.len()];
        }
        let dt = now_ns - self.last_sample_ns;
        if dt == 0 {
            return;
        }
        let per_sec = NS_PER_SEC as f64 / dt as f64;
        let series_flows = std::mem::take(&mut self.series_flows);
        for &i in &series_flows {
            let (i, f) = (i as usize, &flows[i as usize]);
            debug_assert!(f.generated.is_none()); // generated transfers report their completion time instead
            let s = f.endpoints.counters();
            let prev = self.last_flow[i];
            let fs = &mut self.flows;
            fs.time_ns.push(now_ns);
            fs.flow.push(i as u32);
            fs.goodput_bps
                .push((s.delivered_bytes - prev.delivered_bytes) as f64 * 8.0 * per_sec);
            fs.throughput_bps
                .push((s.sent_bytes - prev.sent_bytes) as f64 * 8.0 * per_sec);
            match (f.endpoints.window_state(), f.endpoints.tcp_config()) {
                (Some(w), Some(cfg)) => {
                    fs.cwnd_pkts.push(w.total_cwnd_pkts());
                    fs.ssthresh_pkts.push(w.ssthresh_pkts);
                    fs.srtt_ns.push(w.srtt_ns);
                    fs.rtt_ns.push(w.rtt_ns);
                    if let Some(lcm_cwnd) = w.lcm_cwnd_pkts {
                        if self.last_modules.is_empty() {
                            self.last_modules = vec![ModuleCounters::default(); flows.len()];
                        }
                        let (m, pm) = (s.modules, self.last_modules[i]);
                        self.last_modules[i] = m;
                        let payload_bits = receiver_payload_bits(cfg);
                        let ms = &mut self.modules;
                        ms.row.push((fs.time_ns.len() - 1) as u32);
                        ms.hcm_cwnd_pkts.push(w.cwnd_pkts);
                        ms.lcm_cwnd_pkts.push(lcm_cwnd);
                        ms.hcm_sent_pkts.push(m.hcm_sent_pkts - pm.hcm_sent_pkts);
                        ms.lcm_sent_pkts.push(m.lcm_sent_pkts - pm.lcm_sent_pkts);
                        ms.hcm_lost_pkts.push(m.hcm_lost_pkts - pm.hcm_lost_pkts);
                        ms.lcm_lost_pkts.push(m.lcm_lost_pkts - pm.lcm_lost_pkts);
                        ms.hcm_goodput_bps.push(
                            (m.hcm_new_pkts - pm.hcm_new_pkts) as f64 * payload_bits * per_sec,
                        );
                        ms.lcm_goodput_bps.push(
                            (m.lcm_new_pkts - pm.lcm_new_pkts) as f64 * payload_bits * per_sec,
                        );
                    }
                }
                _ => {
                    // A UDP source has no window.
                    fs.cwnd_pkts.push(f64::NAN);
                    fs.ssthresh_pkts.push(f64::NAN);
                    fs.srtt_ns.push(0);
                    fs.rtt_ns.push(0);
                }
            }
            fs.retransmits.push(s.retransmits);
            fs.timeouts.push(s.timeouts);
            if let Some(e) = s.ecn {
                let es = &mut self.ecn;
                es.row.push((fs.time_ns.len() - 1) as u32);
                es.ece_acks.push(e.ece_acks);
                es.ecn_reductions.push(e.ecn_reductions);
                es.ce_marks.push(e.ce_marks);
            }
            self.last_flow[i] = LastSample {
                delivered_bytes: s.delivered_bytes,
                sent_bytes: s.sent_bytes,
            };
        }
        self.series_flows = series_flows;
        for (m, &l) in self.monitored_links.iter().enumerate() {
            let link = &mut links[l];
            let (qp, qb) = link.queue_len(now_ns);
            let s = link_snap(link);
            let prev = self.last_link[m];
            let cap = specs[l].rate.bps() as f64 / per_sec;
            let ls = &mut self.links;
            ls.time_ns.push(now_ns);
            ls.link.push(l as u32);
            ls.queue_pkts.push(qp);
            ls.queue_bytes.push(qb);
            ls.utilization
                .push((s.departed_bytes - prev.departed_bytes) as f64 * 8.0 / cap);
            ls.drops_overflow
                .push(s.drops_overflow - prev.drops_overflow);
            ls.drops_random.push(s.drops_random - prev.drops_random);
            ls.drops_aqm.push(s.drops_aqm - prev.drops_aqm);
            ls.ce_marks.push(s.ce_marks - prev.ce_marks);
            let (mean, max) = match link.take_sojourn() {
                Some(j) if j.pkts > 0 => (j.sum_ns as f64 / j.pkts as f64, j.max_ns as f64),
                _ => (f64::NAN, f64::NAN),
            };
            ls.sojourn_mean_ns.push(mean);
            ls.sojourn_max_ns.push(max);
            self.last_link[m] = s;
        }
        self.last_sample_ns = now_ns;
    }

    pub fn start_window(&mut self, now_ns: u64, links: &mut [Link], flows: &[Flow]) {
        for l in links.iter_mut() {
            l.advance(now_ns);
        }
        self.window_start = Some(Window::take(now_ns, links, flows));
    }

    /// Closes the measurement window and builds the summary.
    pub fn finish(&mut self, end_ns: u64, links: &mut [Link], specs: &[LinkSpec], flows: &[Flow]) {
        // Every event at `end_ns` ran (a window started only now reads the
        // links after them too).
        for l in links.iter_mut() {
            l.advance_to_end(end_ns);
        }
        if self.window_start.is_none() {
            self.start_window(self.measure_from_ns.min(end_ns), links, flows);
        }
        let window = self.window_start.take().expect("window started");
        let t0 = window.start_ns;
        let secs = (end_ns - t0) as f64 / NS_PER_SEC as f64;
        let rate = |bytes: u64| {
            if secs > 0.0 {
                bytes as f64 * 8.0 / secs
            } else {
                0.0
            }
        };

        let mut flow_rows = Vec::with_capacity(flows.len());
        let mut tcp_goodputs = vec![];
        for (i, f) in flows.iter().enumerate() {
            if f.generated.is_some() {
                continue;
            }
            let s = f.endpoints.counters();
            let p = window.flows[i].counters();
            let goodput = rate(s.delivered_bytes - p.delivered_bytes);
            let sent = s.sent_pkts - p.sent_pkts;
            let rtx = s.retransmits - p.retransmits;
            let tcp = match (f.endpoints.window_state(), f.endpoints.tcp_config()) {
                (Some(w), Some(cfg)) => {
                    tcp_goodputs.push(goodput);
                    let ecn = match (s.ecn, p.ecn) {
                        (Some(e), Some(pe)) => Some(EcnCounters {
                            ece_acks: e.ece_acks - pe.ece_acks,
                            ecn_reductions: e.ecn_reductions - pe.ecn_reductions,
                            ce_marks: e.ce_marks - pe.ce_marks,
                        }),
                        _ => None,
                    };
                    let plt = w.lcm_cwnd_pkts.map(|lcm_cwnd| {
                        let (m, pm) = (s.modules, p.modules);
                        let bits = receiver_payload_bits(cfg);
                        Box::new(PltRow {
                            final_lcm_cwnd_pkts: lcm_cwnd,
                            hcm_goodput_bps: rate_of(
                                secs,
                                (m.hcm_new_pkts - pm.hcm_new_pkts) as f64 * bits,
                            ),
                            lcm_goodput_bps: rate_of(
                                secs,
                                (m.lcm_new_pkts - pm.lcm_new_pkts) as f64 * bits,
                            ),
                            hcm_sent_pkts: m.hcm_sent_pkts - pm.hcm_sent_pkts,
                            lcm_sent_pkts: m.lcm_sent_pkts - pm.lcm_sent_pkts,
                            lcm_lost_pkts: m.lcm_lost_pkts - pm.lcm_lost_pkts,
                            lcm_losses_resent: m.lcm_losses_resent - pm.lcm_losses_resent,
                            lcm_timeouts: m.lcm_timeouts - pm.lcm_timeouts,
                            lcm_late_acked_pkts: m.lcm_late_acked_pkts - pm.lcm_late_acked_pkts,
                            lcm_losses_resent_by_lcm: m.lcm_losses_resent_by_lcm
                                - pm.lcm_losses_resent_by_lcm,
                        })
                    });
                    Some(TcpRow {
                        fast_recoveries: s.fast_recoveries - p.fast_recoveries,
                        final_cwnd_pkts: w.cwnd_pkts,
                        completion_time_s: f.completion_time_ns().map(|t| t as f64 / 1e9),
                        ecn,
                        plt,
                    })
                }
                _ => None,
            };
            flow_rows.push(FlowRow {
                flow: i as u64,
                name: f.name.as_str().into(),
                algorithm: f.algorithm.as_str().into(),
                base_rtt_ms: f.base_rtt_ns as f64 / 1e6,
                goodput_bps: goodput,
                throughput_bps: rate(s.sent_bytes - p.sent_bytes),
                sent_pkts: sent,
                retransmits: rtx,
                timeouts: s.timeouts - p.timeouts,
                retransmit_rate: if sent > 0 {
                    rtx as f64 / sent as f64
                } else {
                    0.0
                },
                tcp,
            });
        }
        let mut link_rows = Vec::with_capacity(links.len());
        for (i, (l, spec)) in links.iter().zip(specs).enumerate() {
            let s = link_snap(l);
            let p = window.link(i);
            let offered = s.offered_pkts - p.offered_pkts;
            let drops = (s.drops_overflow - p.drops_overflow)
                + (s.drops_random - p.drops_random)
                + (s.drops_aqm - p.drops_aqm);
            let cap = spec.rate.bps() as f64 * secs;
            // Only AQM links carry these keys, so the summaries of runs
            // without AQM stay as they were.
            let aqm = l.is_aqm().then(|| {
                let n = s.sojourn_pkts - p.sojourn_pkts;
                let sum_ns = s.sojourn_sum_ns - p.sojourn_sum_ns;
                Box::new(AqmRow {
                    drops_aqm: s.drops_aqm - p.drops_aqm,
                    ce_marks: s.ce_marks - p.ce_marks,
                    mean_sojourn_ms: (n > 0).then(|| sum_ns as f64 / n as f64 / 1e6),
                })
            });
            let monitored = self.monitored_links.contains(&i);
            let mean_queue_pkts = monitored.then(|| {
                let qs: Vec<f64> = self
                    .links
                    .time_ns
                    .iter()
                    .zip(&self.links.link)
                    .zip(&self.links.queue_pkts)
                    .filter(|((&t, &li), _)| t > t0 && li as usize == i)
                    .map(|(_, &q)| q as f64)
                    .collect();
                if qs.is_empty() {
                    0.0
                } else {
                    qs.iter().sum::<f64>() / qs.len() as f64
                }
            });
            link_rows.push(LinkRow {
                name: spec.name.as_str().into(),
                rate_bps: spec.rate.bps(),
                delay_ms: spec.delay_ns as f64 / 1e6,
                utilization: if cap > 0.0 {
                    (s.departed_bytes - p.departed_bytes) as f64 * 8.0 / cap
                } else {
                    0.0
                },
                offered_pkts: offered,
                drops_overflow: s.drops_overflow - p.drops_overflow,
                drops_random: s.drops_random - p.drops_random,
                loss_rate: if offered > 0 {
                    drops as f64 / offered as f64
                } else {
                    0.0
                },
                monitored,
                aqm,
                mean_queue_pkts,
            });
        }
        self.summary = Some(Summary {
            measure_from_s: t0 as f64 / 1e9,
            end_s: end_ns as f64 / 1e9,
            flows: flow_rows,
            links: link_rows,
            tcp_goodput_bps: tcp_goodputs.iter().sum::<f64>(),
            jain_fairness: jain_index(&tcp_goodputs),
            short_flows: self.short_flow_summary(t0, flows),
        });
    }

    pub fn generator_names(&self) -> &[String] {
        &self.generators
    }

    /// Per generator: transfers that started in the measurement window, how
    /// many completed by the end, and their completion-time distribution.
    fn short_flow_summary(&self, t0: u64, flows: &[Flow]) -> Value {
        let mut rows = vec![];
        for (g, name) in self.generators.iter().enumerate() {
            let mut started = 0u64;
            let mut fct_s = vec![];
            let mut bytes = 0u64;
            for f in flows {
                let Some(gen) = f.generated else { continue };
                if gen.generator as usize != g || f.start_ns < t0 {
                    continue;
                }
                started += 1;
                bytes += gen.size_bytes;
                if let Some(fct) = f.completion_time_ns() {
                    fct_s.push(fct as f64 / 1e9);
                }
            }
            fct_s.sort_by(f64::total_cmp);
            let q = |p: f64| -> Value {
                if fct_s.is_empty() {
                    Value::Null
                } else {
                    json!(fct_s[((fct_s.len() - 1) as f64 * p).round() as usize])
                }
            };
            rows.push(json!({
                "generator": g,
                "name": name,
                "started": started,
                "completed": fct_s.len(),
                "offered_bytes": bytes,
                "mean_fct_s": if fct_s.is_empty() { Value::Null } else { json!(fct_s.iter().sum::<f64>() / fct_s.len() as f64) },
                "p50_fct_s": q(0.5),
                "p95_fct_s": q(0.95),
                "p99_fct_s": q(0.99),
            }));
        }
        Value::Array(rows)
    }
}

/// Bytes `malloc` takes for a request of `n` (glibc on 64 bits: an 8-byte
/// header, 16-byte granules, 32 bytes at least; nothing for `n = 0`, which
/// Rust does not allocate).
fn malloc_chunk(n: u64) -> u64 {
    if n == 0 {
        0
    } else {
        ((n + 8 + 15) & !15).max(32)
    }
}

/// The measurement window's part of `summary_bytes`: the counters of
/// every flow and link when the window opened (`Window::take`): a
/// `WindowFlow` per flow, and a box for each that runs ECN or PLT (the
/// only ones with those counters); four counters per link, and the AQM
/// links' other four (only AQM links count those), in a vector that may
/// have doubled.
pub fn summary_window_bytes(flows: &[Flow], links: &[LinkSpec]) -> u64 {
    let rare = flows
        .iter()
        .filter(|f| f.endpoints.counters().ecn.is_some() || f.endpoints.plt_window_pkts().is_some())
        .count() as u64;
    let aqm = links
        .iter()
        .filter(|l| matches!(l.queue, crate::link::QueueDiscipline::Aqm { .. }))
        .count() as u64;
    malloc_chunk((flows.len() * std::mem::size_of::<WindowFlow>()) as u64)
        + rare * malloc_chunk(std::mem::size_of::<(Option<EcnCounters>, ModuleCounters)>() as u64)
        + malloc_chunk((links.len() * std::mem::size_of::<[u64; 4]>()) as u64)
        + malloc_chunk(2 * aqm * std::mem::size_of::<(u32, [u64; 4])>() as u64)
}

/// An upper bound on the heap the end-of-run summary takes at its peak
/// (inside `Metrics::finish`), from the sizes of its parts:
/// - the measurement window it is built from (`start_window`: a
///   `WindowFlow` per flow and four counters per link, freed at the end of
///   `finish`);
/// - the rows it keeps: the flow rows' vector (sized for every flow), and
///   per flow in the summary its name and algorithm copies (and a PLT
///   connection's `PltRow`); per link its row, its name copy (and an AQM
///   link's `AqmRow`);
/// - what `finish` holds for a moment: the TCP goodputs (at most twice
///   their number, as the vector doubles), one monitored link's queue
///   samples (the same), and one generator's completion times (at most
///   every generated transfer, twice), with 1 KiB for the generators' rows.
///
/// Each allocation is counted as `malloc` takes it (`malloc_chunk`).
/// `tests/memory.rs` measures the peak of `finish` against this.
pub fn summary_bytes(flows: &[Flow], links: &[LinkSpec], samples: u64) -> u64 {
    let size = |n: usize| n as u64;
    let window = summary_window_bytes(flows, links);
    let flow_rows = malloc_chunk(size(flows.len() * std::mem::size_of::<FlowRow>()));
    let (mut per_flow, mut tcp, mut generated) = (0u64, 0u64, 0u64);
    for f in flows {
        if f.generated.is_some() {
            generated += 1;
            continue;
        }
        per_flow += malloc_chunk(size(f.name.len())) + malloc_chunk(size(f.algorithm.len()));
        if f.is_tcp() {
            tcp += 1;
        }
        if f.endpoints.plt_window_pkts().is_some() {
            per_flow += malloc_chunk(size(std::mem::size_of::<PltRow>()));
        }
    }
    let link_rows = malloc_chunk(size(links.len() * std::mem::size_of::<LinkRow>()));
    let per_link: u64 = links
        .iter()
        .map(|l| {
            let aqm = matches!(l.queue, crate::link::QueueDiscipline::Aqm { .. });
            malloc_chunk(size(l.name.len()))
                + if aqm {
                    malloc_chunk(size(std::mem::size_of::<AqmRow>()))
                } else {
                    0
                }
        })
        .sum();
    let moment = malloc_chunk(16 * tcp.max(4))
        + malloc_chunk(16 * samples.max(4))
        + malloc_chunk(16 * generated.max(4))
        + 1024;
    window + flow_rows + per_flow + link_rows + per_link + moment
}

/// Bytes of the summary as Python objects, per row (a dict with its values
/// and the row's list slot; its keys are interned and shared), not counting
/// the name strings' characters, which are added per row. Measured by
/// `tests/test_run.py` (`tracemalloc`, 2026-11-28: 654 for a TCP flow's
/// row, 1,069 for a PLT flow's, 449 for a link's, 693 for a monitored
/// link's, 773 for a monitored AQM link's), with a float's 24 bytes more
/// for a flow's completion time and about 10 % room.
const PY_FLOW_ROW_BYTES: u64 = 750;
const PY_PLT_FLOW_ROW_BYTES: u64 = 1_200;
const PY_LINK_ROW_BYTES: u64 = 500;
const PY_MONITORED_LINK_ROW_BYTES: u64 = 770;
const PY_AQM_LINK_ROW_BYTES: u64 = 860;

/// The summary as Python objects (`Simulation.summary` in the bindings):
/// at 100,000 dumbbell flows about 260 MB, three times the Rust rows
/// that `summary_bytes` counts, and held together with them until the
/// run's result is made.
pub fn python_summary_bytes(flows: &[Flow], links: &[LinkSpec], monitored_links: &[usize]) -> u64 {
    let flow_rows: u64 = flows
        .iter()
        .filter(|f| f.generated.is_none())
        .map(|f| {
            let row = if f.endpoints.plt_window_pkts().is_some() {
                PY_PLT_FLOW_ROW_BYTES
            } else {
                PY_FLOW_ROW_BYTES
            };
            row + (f.name.len() + f.algorithm.len()) as u64
        })
        .sum();
    let link_rows: u64 = links
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let row = if matches!(l.queue, crate::link::QueueDiscipline::Aqm { .. }) {
                PY_AQM_LINK_ROW_BYTES
            } else if monitored_links.contains(&i) {
                PY_MONITORED_LINK_ROW_BYTES
            } else {
                PY_LINK_ROW_BYTES
            };
            row + l.name.len() as u64
        })
        .sum();
    flow_rows + link_rows
}

/// The end-of-run summary: one typed row per flow and per link (a
/// `serde_json` map each took about 1 KB and 85,000 instructions per flow
/// to build, print and free; these rows take about 200 bytes of heap per
/// flow and per link). Serialized as the map was: every object's keys in
/// sorted order (serde_json's `Map` is a `BTreeMap`), optional keys left
/// out as there, non-finite numbers as `null`, so the text is the same to
/// the byte.
#[derive(Clone, Debug)]
pub struct Summary {
    measure_from_s: f64,
    end_s: f64,
    flows: Vec<FlowRow>,
    links: Vec<LinkRow>,
    tcp_goodput_bps: f64,
    jain_fairness: Option<f64>,
    /// One row per traffic generator: a few, so a JSON value.
    short_flows: Value,
}

#[derive(Clone, Debug)]
struct FlowRow {
    flow: u64,
    name: Box<str>,
    algorithm: Box<str>,
    base_rtt_ms: f64,
    goodput_bps: f64,
    throughput_bps: f64,
    sent_pkts: u64,
    retransmits: u64,
    timeouts: u64,
    retransmit_rate: f64,
    /// Window-controlled (TCP, PLT) flows only.
    tcp: Option<TcpRow>,
}

#[derive(Clone, Debug)]
struct TcpRow {
    fast_recoveries: u64,
    final_cwnd_pkts: f64,
    completion_time_s: Option<f64>,
    ecn: Option<EcnCounters>,
    plt: Option<Box<PltRow>>,
}

#[derive(Clone, Debug)]
struct PltRow {
    final_lcm_cwnd_pkts: f64,
    hcm_goodput_bps: f64,
    lcm_goodput_bps: f64,
    hcm_sent_pkts: u64,
    lcm_sent_pkts: u64,
    lcm_lost_pkts: u64,
    lcm_losses_resent: u64,
    lcm_timeouts: u64,
    lcm_late_acked_pkts: u64,
    lcm_losses_resent_by_lcm: u64,
}

/// Link `i`'s row is `links[i]` (its `"link"` key).
#[derive(Clone, Debug)]
struct LinkRow {
    name: Box<str>,
    rate_bps: u64,
    delay_ms: f64,
    utilization: f64,
    offered_pkts: u64,
    drops_overflow: u64,
    drops_random: u64,
    loss_rate: f64,
    monitored: bool,
    aqm: Option<Box<AqmRow>>,
    /// Monitored links only.
    mean_queue_pkts: Option<f64>,
}

#[derive(Clone, Debug)]
struct AqmRow {
    drops_aqm: u64,
    ce_marks: u64,
    mean_sojourn_ms: Option<f64>,
}

/// A value in a summary object, as `json!` would have made it.
#[derive(Clone, Copy)]
enum Field<'a> {
    U64(u64),
    /// `null` if not finite (as `json!(f64)`).
    F64(f64),
    OptF64(Option<f64>),
    Bool(bool),
    Str(&'a str),
    Json(&'a Value),
    Flows(&'a [FlowRow]),
    Links(&'a [LinkRow]),
    Link(u64, &'a LinkRow),
}

impl Serialize for Field<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match *self {
            Field::U64(v) => s.serialize_u64(v),
            // Non-finite as `null` here, not left to the serializer:
            // serde_json writes `null` for them anyway, and a serializer
            // into Python objects (the bindings' `summary`) would give NaN.
            Field::F64(v) | Field::OptF64(Some(v)) if v.is_finite() => s.serialize_f64(v),
            Field::F64(_) | Field::OptF64(_) => s.serialize_unit(),
            Field::Bool(v) => s.serialize_bool(v),
            Field::Str(v) => s.serialize_str(v),
            Field::Json(v) => v.serialize(s),
            Field::Flows(rows) => s.collect_seq(rows),
            Field::Links(rows) => s.collect_seq(
                rows.iter()
                    .enumerate()
                    .map(|(i, r)| Field::Link(i as u64, r)),
            ),
            Field::Link(i, r) => r.serialize_as(i, s),
        }
    }
}

/// Serializes `fields` as an object with its keys sorted, as a
/// `serde_json::Map` holds them.
fn sorted_object<S: Serializer>(s: S, fields: &mut [(&str, Field<'_>)]) -> Result<S::Ok, S::Error> {
    fields.sort_unstable_by(|a, b| a.0.cmp(b.0));
    let mut m = s.serialize_map(Some(fields.len()))?;
    for (k, v) in fields.iter() {
        m.serialize_entry(k, v)?;
    }
    m.end()
}

impl Serialize for Summary {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        sorted_object(
            s,
            &mut [
                ("measure_from_s", Field::F64(self.measure_from_s)),
                ("end_s", Field::F64(self.end_s)),
                ("flows", Field::Flows(&self.flows)),
                ("links", Field::Links(&self.links)),
                ("tcp_goodput_bps", Field::F64(self.tcp_goodput_bps)),
                ("jain_fairness", Field::OptF64(self.jain_fairness)),
                ("short_flows", Field::Json(&self.short_flows)),
            ],
        )
    }
}

impl Serialize for FlowRow {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut f: Vec<(&str, Field)> = Vec::with_capacity(26);
        f.extend([
            ("flow", Field::U64(self.flow)),
            ("name", Field::Str(&self.name)),
            ("algorithm", Field::Str(&self.algorithm)),
            ("base_rtt_ms", Field::F64(self.base_rtt_ms)),
            ("goodput_bps", Field::F64(self.goodput_bps)),
            ("throughput_bps", Field::F64(self.throughput_bps)),
            ("sent_pkts", Field::U64(self.sent_pkts)),
            ("retransmits", Field::U64(self.retransmits)),
            ("timeouts", Field::U64(self.timeouts)),
            ("retransmit_rate", Field::F64(self.retransmit_rate)),
        ]);
        if let Some(t) = &self.tcp {
            f.push(("fast_recoveries", Field::U64(t.fast_recoveries)));
            if let Some(e) = t.ecn {
                f.extend([
                    ("ece_acks", Field::U64(e.ece_acks)),
                    ("ecn_reductions", Field::U64(e.ecn_reductions)),
                    ("ce_marks", Field::U64(e.ce_marks)),
                ]);
            }
            f.push(("final_cwnd_pkts", Field::F64(t.final_cwnd_pkts)));
            if let Some(m) = &t.plt {
                f.extend([
                    ("final_lcm_cwnd_pkts", Field::F64(m.final_lcm_cwnd_pkts)),
                    ("hcm_goodput_bps", Field::F64(m.hcm_goodput_bps)),
                    ("lcm_goodput_bps", Field::F64(m.lcm_goodput_bps)),
                    ("hcm_sent_pkts", Field::U64(m.hcm_sent_pkts)),
                    ("lcm_sent_pkts", Field::U64(m.lcm_sent_pkts)),
                    ("lcm_lost_pkts", Field::U64(m.lcm_lost_pkts)),
                    ("lcm_losses_resent", Field::U64(m.lcm_losses_resent)),
                    ("lcm_timeouts", Field::U64(m.lcm_timeouts)),
                    ("lcm_late_acked_pkts", Field::U64(m.lcm_late_acked_pkts)),
                    (
                        "lcm_losses_resent_by_lcm",
                        Field::U64(m.lcm_losses_resent_by_lcm),
                    ),
                ]);
            }
            f.push(("completion_time_s", Field::OptF64(t.completion_time_s)));
        }
        sorted_object(s, &mut f)
    }
}

impl LinkRow {
    fn serialize_as<S: Serializer>(&self, link: u64, s: S) -> Result<S::Ok, S::Error> {
        let mut f: Vec<(&str, Field)> = Vec::with_capacity(15);
        f.extend([
            ("link", Field::U64(link)),
            ("name", Field::Str(&self.name)),
            ("rate_bps", Field::U64(self.rate_bps)),
            ("delay_ms", Field::F64(self.delay_ms)),
            ("utilization", Field::F64(self.utilization)),
            ("offered_pkts", Field::U64(self.offered_pkts)),
            ("drops_overflow", Field::U64(self.drops_overflow)),
            ("drops_random", Field::U64(self.drops_random)),
            ("loss_rate", Field::F64(self.loss_rate)),
            ("monitored", Field::Bool(self.monitored)),
        ]);
        if let Some(a) = &self.aqm {
            f.extend([
                ("drops_aqm", Field::U64(a.drops_aqm)),
                ("ce_marks", Field::U64(a.ce_marks)),
                ("mean_sojourn_ms", Field::OptF64(a.mean_sojourn_ms)),
            ]);
        }
        if let Some(q) = self.mean_queue_pkts {
            f.push(("mean_queue_pkts", Field::F64(q)));
        }
        sorted_object(s, &mut f)
    }
}

/// Bits of payload per data packet.
fn receiver_payload_bits(cfg: &crate::tcp::TcpConfig) -> f64 {
    cfg.payload_bytes() as f64 * 8.0
}

fn rate_of(secs: f64, bits: f64) -> f64 {
    if secs > 0.0 {
        bits / secs
    } else {
        0.0
    }
}

/// Jain's fairness index (Σx)² / (n Σx²): 1 when all equal, 1/n when one takes all.
pub fn jain_index(xs: &[f64]) -> Option<f64> {
    let sum: f64 = xs.iter().sum();
    let sq: f64 = xs.iter().map(|x| x * x).sum();
    if xs.is_empty() || sq == 0.0 {
        None
    } else {
        Some(sum * sum / (xs.len() as f64 * sq))
    }
}

#[cfg(test)]
mod tests {
    use super::jain_index;

    /// Non-finite numbers are `null` whatever the serializer (the
    /// bindings build the summary into Python objects, where NaN would
    /// stay NaN), and finite ones are themselves.
    #[test]
    fn non_finite_numbers_serialize_as_null() {
        use super::Field;
        let text = |f: Field<'_>| serde_json::to_string(&f).unwrap();
        assert_eq!(text(Field::F64(f64::NAN)), "null");
        assert_eq!(text(Field::F64(f64::INFINITY)), "null");
        assert_eq!(text(Field::OptF64(Some(f64::NEG_INFINITY))), "null");
        assert_eq!(text(Field::OptF64(None)), "null");
        assert_eq!(text(Field::F64(1.5)), "1.5");
        assert_eq!(text(Field::OptF64(Some(-0.25))), "-0.25");
        // serde_json writes `null` for NaN by itself; toml keeps a NaN as
        // a float and has no unit, so it shows what the serializer is told.
        assert!(toml::Value::try_from(Field::F64(f64::NAN)).is_err());
        assert!(toml::Value::try_from(Field::OptF64(Some(f64::INFINITY))).is_err());
        assert_eq!(
            toml::Value::try_from(Field::F64(1.5)).unwrap(),
            toml::Value::Float(1.5)
        );
        assert!(toml::Value::try_from(f64::NAN).is_ok(), "toml keeps NaN");
    }

    #[test]
    fn jain_extremes() {
        assert_eq!(jain_index(&[5.0, 5.0, 5.0, 5.0]), Some(1.0));
        assert_eq!(jain_index(&[8.0, 0.0, 0.0, 0.0]), Some(0.25));
        assert!((jain_index(&[1.0, 2.0]).unwrap() - 0.9).abs() < 1e-12);
        assert_eq!(jain_index(&[]), None);
    }
}

#[cfg(test)]
mod summary_size {
    /// A dumbbell flow's share of the summary: its row and four link rows
    /// (584 bytes), and the heap copies of six names.
    #[test]
    fn summary_rows_stay_small() {
        assert!(std::mem::size_of::<super::FlowRow>() <= 168);
        assert!(std::mem::size_of::<super::LinkRow>() <= 104);
    }
}
