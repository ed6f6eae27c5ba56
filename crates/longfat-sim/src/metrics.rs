//! Measurements: per-flow and per-link time series sampled at a fixed
//! interval (memory grows with duration / interval, never with packets),
//! and counters captured at the start and end of the measurement window.

use serde_json::{json, Value};

use crate::flow::{Flow, FlowCounters};
use crate::link::{Link, LinkSpec};
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

#[derive(Debug)]
pub struct Metrics {
    interval_ns: u64,
    measure_from_ns: u64,
    pub monitored_links: Vec<usize>,
    pub flows: FlowSeries,
    pub modules: ModuleSeries,
    pub ecn: EcnSeries,
    pub links: LinkSeries,
    last_flow: Vec<FlowCounters>,
    last_link: Vec<LinkSnap>,
    last_sample_ns: u64,
    window_start: Option<(u64, Vec<FlowCounters>, Vec<LinkSnap>)>,
    summary: Option<Value>,
    /// Names of the traffic generators, by `Generated::generator`.
    generators: Vec<String>,
}

impl Metrics {
    pub fn new(
        interval_ns: u64,
        measure_from_ns: u64,
        monitored_links: Vec<usize>,
        n_flows: usize,
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
            last_flow: vec![FlowCounters::default(); n_flows],
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
    pub fn summary(&self) -> Option<&Value> {
        self.summary.as_ref()
    }

    pub fn sample(&mut self, now_ns: u64, links: &mut [Link], specs: &[LinkSpec], flows: &[Flow]) {
        if self.last_link.is_empty() {
            self.last_link = vec![LinkSnap::default(); links.len()];
        }
        let dt = now_ns - self.last_sample_ns;
        if dt == 0 {
            return;
        }
        let per_sec = NS_PER_SEC as f64 / dt as f64;
        for (i, f) in flows.iter().enumerate() {
            if f.generated.is_some() {
                continue; // reported by completion time instead
            }
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
                        let (m, pm) = (s.modules, prev.modules);
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
            self.last_flow[i] = s;
        }
        for &l in &self.monitored_links {
            let link = &mut links[l];
            let (qp, qb) = link.queue_len(now_ns);
            let s = link_snap(link);
            let prev = self.last_link[l];
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
            self.last_link[l] = s;
        }
        self.last_sample_ns = now_ns;
    }

    pub fn start_window(&mut self, now_ns: u64, links: &mut [Link], flows: &[Flow]) {
        for l in links.iter_mut() {
            l.advance(now_ns);
        }
        self.window_start = Some((
            now_ns,
            flows.iter().map(|f| f.endpoints.counters()).collect(),
            links.iter().map(link_snap).collect(),
        ));
    }

    /// Closes the measurement window and builds the summary.
    pub fn finish(&mut self, end_ns: u64, links: &mut [Link], specs: &[LinkSpec], flows: &[Flow]) {
        if self.window_start.is_none() {
            self.start_window(self.measure_from_ns.min(end_ns), links, flows);
        }
        for l in links.iter_mut() {
            l.advance(end_ns);
        }
        let (t0, f0, l0) = self.window_start.take().expect("window started");
        let secs = (end_ns - t0) as f64 / NS_PER_SEC as f64;
        let rate = |bytes: u64| {
            if secs > 0.0 {
                bytes as f64 * 8.0 / secs
            } else {
                0.0
            }
        };

        let mut flow_rows = vec![];
        let mut tcp_goodputs = vec![];
        for (i, f) in flows.iter().enumerate() {
            if f.generated.is_some() {
                continue;
            }
            let s = f.endpoints.counters();
            let p = f0[i];
            let goodput = rate(s.delivered_bytes - p.delivered_bytes);
            let sent = s.sent_pkts - p.sent_pkts;
            let rtx = s.retransmits - p.retransmits;
            let mut row = json!({
                "flow": i,
                "name": f.name,
                "algorithm": f.algorithm,
                "base_rtt_ms": f.base_rtt_ns as f64 / 1e6,
                "goodput_bps": goodput,
                "throughput_bps": rate(s.sent_bytes - p.sent_bytes),
                "sent_pkts": sent,
                "retransmits": rtx,
                "timeouts": s.timeouts - p.timeouts,
                "retransmit_rate": if sent > 0 { rtx as f64 / sent as f64 } else { 0.0 },
            });
            if let (Some(w), Some(cfg)) = (f.endpoints.window_state(), f.endpoints.tcp_config()) {
                tcp_goodputs.push(goodput);
                row["fast_recoveries"] = json!(s.fast_recoveries - p.fast_recoveries);
                if let (Some(e), Some(pe)) = (s.ecn, p.ecn) {
                    row["ece_acks"] = json!(e.ece_acks - pe.ece_acks);
                    row["ecn_reductions"] = json!(e.ecn_reductions - pe.ecn_reductions);
                    row["ce_marks"] = json!(e.ce_marks - pe.ce_marks);
                }
                row["final_cwnd_pkts"] = json!(finite_or_null(w.cwnd_pkts));
                if let Some(lcm_cwnd) = w.lcm_cwnd_pkts {
                    let (m, pm) = (s.modules, p.modules);
                    let bits = receiver_payload_bits(cfg);
                    row["final_lcm_cwnd_pkts"] = json!(lcm_cwnd);
                    row["hcm_goodput_bps"] = json!(rate_of(
                        secs,
                        (m.hcm_new_pkts - pm.hcm_new_pkts) as f64 * bits
                    ));
                    row["lcm_goodput_bps"] = json!(rate_of(
                        secs,
                        (m.lcm_new_pkts - pm.lcm_new_pkts) as f64 * bits
                    ));
                    row["hcm_sent_pkts"] = json!(m.hcm_sent_pkts - pm.hcm_sent_pkts);
                    row["lcm_sent_pkts"] = json!(m.lcm_sent_pkts - pm.lcm_sent_pkts);
                    row["lcm_lost_pkts"] = json!(m.lcm_lost_pkts - pm.lcm_lost_pkts);
                    row["lcm_losses_resent"] = json!(m.lcm_losses_resent - pm.lcm_losses_resent);
                    row["lcm_timeouts"] = json!(m.lcm_timeouts - pm.lcm_timeouts);
                    row["lcm_late_acked_pkts"] =
                        json!(m.lcm_late_acked_pkts - pm.lcm_late_acked_pkts);
                    row["lcm_losses_resent_by_lcm"] =
                        json!(m.lcm_losses_resent_by_lcm - pm.lcm_losses_resent_by_lcm);
                }
                row["completion_time_s"] = f
                    .completion_time_ns()
                    .map_or(Value::Null, |t| json!(t as f64 / 1e9));
            }
            flow_rows.push(row);
        }
        let mut link_rows = vec![];
        for (i, (l, spec)) in links.iter().zip(specs).enumerate() {
            let s = link_snap(l);
            let p = l0[i];
            let offered = s.offered_pkts - p.offered_pkts;
            let drops = (s.drops_overflow - p.drops_overflow)
                + (s.drops_random - p.drops_random)
                + (s.drops_aqm - p.drops_aqm);
            let cap = spec.rate.bps() as f64 * secs;
            let mut row = json!({
                "link": i,
                "name": spec.name,
                "rate_bps": spec.rate.bps(),
                "delay_ms": spec.delay_ns as f64 / 1e6,
                "utilization": if cap > 0.0 { (s.departed_bytes - p.departed_bytes) as f64 * 8.0 / cap } else { 0.0 },
                "offered_pkts": offered,
                "drops_overflow": s.drops_overflow - p.drops_overflow,
                "drops_random": s.drops_random - p.drops_random,
                "loss_rate": if offered > 0 { drops as f64 / offered as f64 } else { 0.0 },
                "monitored": self.monitored_links.contains(&i),
            });
            if l.is_aqm() {
                // Only AQM links carry these keys, so the summaries of
                // runs without AQM stay as they were.
                row["drops_aqm"] = json!(s.drops_aqm - p.drops_aqm);
                row["ce_marks"] = json!(s.ce_marks - p.ce_marks);
                let n = s.sojourn_pkts - p.sojourn_pkts;
                let sum_ns = s.sojourn_sum_ns - p.sojourn_sum_ns;
                row["mean_sojourn_ms"] = if n > 0 {
                    json!(sum_ns as f64 / n as f64 / 1e6)
                } else {
                    Value::Null
                };
            }
            if self.monitored_links.contains(&i) {
                let qs: Vec<f64> = self
                    .links
                    .time_ns
                    .iter()
                    .zip(&self.links.link)
                    .zip(&self.links.queue_pkts)
                    .filter(|((&t, &li), _)| t > t0 && li as usize == i)
                    .map(|(_, &q)| q as f64)
                    .collect();
                row["mean_queue_pkts"] = json!(if qs.is_empty() {
                    0.0
                } else {
                    qs.iter().sum::<f64>() / qs.len() as f64
                });
            }
            link_rows.push(row);
        }
        self.summary = Some(json!({
            "measure_from_s": t0 as f64 / 1e9,
            "end_s": end_ns as f64 / 1e9,
            "flows": flow_rows,
            "links": link_rows,
            "tcp_goodput_bps": tcp_goodputs.iter().sum::<f64>(),
            "jain_fairness": jain_index(&tcp_goodputs),
            "short_flows": self.short_flow_summary(t0, flows),
        }));
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

fn finite_or_null(x: f64) -> Value {
    if x.is_finite() {
        json!(x)
    } else {
        Value::Null
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

    #[test]
    fn jain_extremes() {
        assert_eq!(jain_index(&[5.0, 5.0, 5.0, 5.0]), Some(1.0));
        assert_eq!(jain_index(&[8.0, 0.0, 0.0, 0.0]), Some(0.25));
        assert!((jain_index(&[1.0, 2.0]).unwrap() - 0.9).abs() < 1e-12);
        assert_eq!(jain_index(&[]), None);
    }
}
