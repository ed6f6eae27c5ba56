//! Building a simulation from a scenario: the run, the network, then every
//! entry placed on it, the bottleneck queues sized, and the memory budget
//! checked.

use crate::budget::{self, RunShape, DEFAULT_MEMORY_BUDGET_BYTES};
use crate::capture::{self, Captures, FlowTap, Tap};
use crate::flow::{Endpoints, Flow};
use crate::sim::{SimSetup, Simulation};
use crate::units::NS_PER_SEC;

use super::error::{err, ScenarioError};
use super::external::ExternalControllers;
use super::fields::limits::*;
use super::network::{run_settings, Net};
use super::placement::Placer;
use super::schema::Scenario;
use super::validate::check_name;

/// How a scenario is built, beyond the scenario itself.
#[derive(Clone, Debug)]
pub struct BuildOptions {
    /// Refuse a run whose estimated memory is above this.
    pub memory_budget_bytes: u64,
    /// Controllers the embedder supplies, which `cc` may name besides the
    /// catalogue's (none by default).
    pub controllers: ExternalControllers,
    /// Cut-through (`SimSetup::cut_through`): on unless a comparison turns
    /// it off.
    pub cut_through: bool,
    /// Cache hints at very many flows (`SimSetup::cache_hints`): on unless a
    /// comparison turns them off.
    pub cache_hints: bool,
    /// The front end turns the summary into Python objects, which the
    /// estimate then counts (`metrics::python_summary_bytes`).
    pub python_summary: bool,
}

impl Default for BuildOptions {
    fn default() -> Self {
        Self {
            memory_budget_bytes: DEFAULT_MEMORY_BUDGET_BYTES,
            controllers: ExternalControllers::default(),
            cut_through: true,
            cache_hints: true,
            python_summary: false,
        }
    }
}

/// Validates the scenario and builds a ready-to-run simulation, with the
/// default memory budget.
pub fn build(s: &Scenario) -> Result<Simulation, ScenarioError> {
    build_with(s, &BuildOptions::default(), &mut || false)
}

/// Validates the scenario and builds a ready-to-run simulation.
/// `interrupted` is polled while many flows are set up (a front end uses it
/// to honour Ctrl-C); when it returns true, building stops with
/// [`super::interrupted_error`].
pub fn build_with(
    s: &Scenario,
    opts: &BuildOptions,
    interrupted: &mut dyn FnMut() -> bool,
) -> Result<Simulation, ScenarioError> {
    if let Some(name) = &s.name {
        check_name(name)?;
    }
    let run = run_settings(&s.run)?;
    let net = Net::new(&s.network)?;
    if s.flows.is_empty() && s.udp.is_empty() && s.short_flows.is_empty() && s.web.is_empty() {
        return err("flows", "the scenario has no flows; add at least one [[flows]], [[udp]], [[short_flows]] or [[web]] entry");
    }
    let total = s.flow_count();
    if total > MAX_FLOWS {
        return err(
            "flows",
            format!("{total} flows in all; at most {MAX_FLOWS}"),
        );
    }

    // Each entry has its own random streams, so adding one leaves the
    // others' draws unchanged; the order of entries fixes host ids.
    let mut placer = Placer::new(net, &run, &s.run.duration, &opts.controllers, interrupted);
    for (i, f) in s.flows.iter().enumerate() {
        placer.flows(i, f)?;
    }
    for (i, u) in s.udp.iter().enumerate() {
        placer.udp(i, u)?;
    }
    for (i, g) in s.short_flows.iter().enumerate() {
        placer.short_flows(i, g)?;
    }
    for (i, w) in s.web.iter().enumerate() {
        placer.web(i, w)?;
    }
    let (net, flows, generators) = placer.finish()?;

    let monitored_links = net.monitored_links();
    let capture = captures(&s.run, &flows, &net, run.duration_ns)?;
    let python_summary_bytes = if opts.python_summary {
        crate::metrics::python_summary_bytes(&flows, &net.topo.links, &monitored_links)
    } else {
        0
    };
    let mut estimate = budget::estimate(&RunShape {
        links: &net.topo.links,
        flows: &flows,
        duration_ns: run.duration_ns,
        sample_interval_ns: run.sample_interval_ns,
        monitored_links: &monitored_links,
        bottleneck_links: &monitored_links,
        summary_bytes: crate::metrics::summary_bytes(
            &flows,
            &net.topo.links,
            budget::samples(run.duration_ns, run.sample_interval_ns),
        ) + python_summary_bytes,
    });
    estimate.python_summary_bytes = python_summary_bytes;
    if let Some((_, bytes)) = &capture {
        estimate.add_capture(*bytes);
    }
    budget::check(&estimate, opts.memory_budget_bytes)
        .map_err(|(field, message)| ScenarioError { field, message })?;
    let packet_limit = opts.memory_budget_bytes.saturating_sub(
        estimate.series_bytes
            + estimate.flows_bytes
            + estimate.summary_bytes
            + estimate.capture_bytes,
    ) / budget::PACKET_BYTES;
    Ok(Simulation::new(SimSetup {
        topology: net.topo,
        flows,
        duration_ns: run.duration_ns,
        measure_from_ns: run.measure_from_ns,
        sample_interval_ns: run.sample_interval_ns,
        seed: run.seed,
        monitored_links,
        generators,
        estimate,
        packet_limit,
        capture: capture.map(|(c, _)| Box::new(c)),
        cut_through: opts.cut_through,
        cache_hints: opts.cache_hints,
    }))
}

/// The captures `run.pcap` asks for, at `run.pcap_tap`, with the memory
/// they can take: per captured flow, the data packets its slowest link
/// carries over the flow's life, 10 % more for packets dropped and sent
/// again, and 1,024 more for a first window; at most as many ACKs (a
/// receiver ACKs at most every packet); each held as a record
/// ([`capture::RECORD_BYTES`]) and then as its bytes in the file
/// ([`capture::FILE_BYTES_PER_PACKET`]).
fn captures(
    run: &super::schema::Run,
    flows: &[Flow],
    net: &Net,
    duration_ns: u64,
) -> Result<Option<(Captures, u64)>, ScenarioError> {
    let names = match &run.pcap {
        Some(n) if !n.is_empty() => n,
        _ => return Ok(None),
    };
    let tap = match run.pcap_tap.as_deref() {
        None | Some("sender") => Tap::Sender,
        Some("bottleneck") => Tap::Bottleneck,
        Some(other) => {
            return err(
                "run.pcap_tap",
                format!("{other:?} is not a tap; allowed: \"sender\", \"bottleneck\""),
            )
        }
    };
    let mut taps: Vec<FlowTap> = Vec::with_capacity(names.len());
    let mut bytes = 0u64;
    for (k, name) in names.iter().enumerate() {
        let field = format!("run.pcap[{k}]");
        let Some(i) = flows.iter().position(|f| &f.name == name) else {
            let some: Vec<&str> = flows.iter().take(5).map(|f| f.name.as_str()).collect();
            return err(
                &field,
                format!(
                    "no flow is named {name:?}; the flows are named as in flows.parquet's flow_name ({}{})",
                    some.join(", "),
                    if flows.len() > 5 { ", ..." } else { "" }
                ),
            );
        };
        if taps.iter().any(|t| t.flow == i as u32) {
            return err(&field, format!("flow {name:?} is listed twice"));
        }
        let f = &flows[i];
        let cfg = match &f.endpoints {
            Endpoints::Tcp { sender, .. } => sender.config(),
            Endpoints::Plt { .. } => {
                return err(&field, format!("flow {name:?} is a PLT connection; captures cover TCP flows only (a PLT connection's two modules share one sequence space that no TCP dissector reads)"))
            }
            Endpoints::Udp(_) => {
                return err(&field, format!("flow {name:?} is a UDP source; captures cover TCP flows only"))
            }
        };
        let (data_hop, ack_hop) = match tap {
            Tap::Sender => (0, f.bwd.len()),
            Tap::Bottleneck => {
                let hop = f.fwd.iter().enumerate().find_map(|(h, &l)| {
                    net.hop_links
                        .iter()
                        .find(|&&(fl, _)| fl == l as usize)
                        .map(|&(_, rl)| (h, rl))
                });
                let back = hop.and_then(|(h, rl)| {
                    f.bwd
                        .iter()
                        .position(|&l| l as usize == rl)
                        .map(|b| (h + 1, b))
                });
                match back {
                    Some(hb) => hb,
                    None => return err(&field, format!("flow {name:?} crosses no bottleneck link in both directions; use pcap_tap = \"sender\"")),
                }
            }
        };
        let active_ns = f
            .stop_ns
            .unwrap_or(duration_ns)
            .min(duration_ns)
            .saturating_sub(f.start_ns);
        let rate = f
            .fwd
            .iter()
            .map(|&l| net.topo.links[l as usize].rate.bps())
            .min()
            .unwrap_or(0) as f64;
        let data_pkts = 1.1 * rate * active_ns as f64
            / (8.0 * NS_PER_SEC as f64 * f64::from(cfg.packet_size_bytes))
            + 1024.0;
        let per_pkt = capture::RECORD_BYTES + capture::FILE_BYTES_PER_PACKET;
        let b = (2.0 * data_pkts * per_pkt as f64).min(u64::MAX as f64 / 4.0) as u64
            + capture::FILE_HEADER_BYTES;
        bytes = bytes.saturating_add(b);
        taps.push(FlowTap {
            flow: i as u32,
            name: name.clone(),
            data_hop: u8::try_from(data_hop).expect("routes are short"),
            ack_hop: u8::try_from(ack_hop).expect("routes are short"),
            payload_bytes: u32::try_from(cfg.payload_bytes()).expect("packet sizes are u16"),
            rwnd_pkts: cfg.rwnd_pkts,
            start_ns: f.start_ns,
            base_rtt_ns: f.base_rtt_ns,
            ecn: cfg.ecn,
        });
    }
    Ok(Some((Captures::new(tap, flows.len(), taps), bytes)))
}
