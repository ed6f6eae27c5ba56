//! Building a simulation from a scenario: the run, the network, then every
//! entry placed on it, the bottleneck queues sized, and the memory budget
//! checked.

use crate::budget::{self, RunShape, DEFAULT_MEMORY_BUDGET_BYTES};
use crate::sim::{SimSetup, Simulation};

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
}

impl Default for BuildOptions {
    fn default() -> Self {
        Self {
            memory_budget_bytes: DEFAULT_MEMORY_BUDGET_BYTES,
            controllers: ExternalControllers::default(),
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
    let total: u64 = s
        .flows
        .iter()
        .map(|f| u64::from(f.count.unwrap_or(1)))
        .sum::<u64>()
        + s.udp
            .iter()
            .map(|u| u64::from(u.count.unwrap_or(1)))
            .sum::<u64>();
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
    let estimate = budget::estimate(&RunShape {
        links: &net.topo.links,
        flows: &flows,
        duration_ns: run.duration_ns,
        sample_interval_ns: run.sample_interval_ns,
        monitored_links: &monitored_links,
        bottleneck_links: &monitored_links,
    });
    budget::check(&estimate, opts.memory_budget_bytes)
        .map_err(|(field, message)| ScenarioError { field, message })?;
    let packet_limit = opts
        .memory_budget_bytes
        .saturating_sub(estimate.series_bytes + estimate.flows_bytes)
        / budget::PACKET_BYTES;
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
    }))
}
