//! The engine side of `longfat.gym.CongestionEnv`: a controller whose
//! window or pacing rate an agent sets from outside (`AgentControl`,
//! registered through the simulator's hook for controllers the embedder
//! supplies), and `AgentRun`, which keeps one validated scenario, builds a
//! fresh simulation from it on every reset, and advances it one agent step
//! at a time, returning the step's observation as one numpy row.
//!
//! The agent's value lives in shared cells (`Arc` of atomics, f64 bit-cast
//! into `AtomicU64`): the run is single-threaded, so Relaxed loads and
//! stores are exact and the run stays a function of its seed and actions.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use longfat_cc::{AckEvent, CongestionControl, LossEvent, RtoEvent};
use longfat_sim::scenario::{ControllerFactory, ControllerRequest};
use longfat_sim::sim::RunStatus;
use longfat_sim::{BuildOptions, Scenario, Simulation};
use numpy::{IntoPyArray, PyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::{scenario_error, ScenarioError};

/// The name the controlled flow's entry runs under while the agent drives
/// it (results label the flow with it).
pub const AGENT_CC: &str = "agent";

/// What the agent sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// The congestion window, in packets; the flow is not paced.
    Cwnd,
    /// The pacing rate, in bits per second of payload; the window is
    /// `max(4, 2 x rate x min RTT / MSS)` packets (BBR's cwnd gain of 2),
    /// the initial window before the first RTT sample.
    PacingRate,
}

/// Cells shared by the agent (through `AgentRun`) and the controller.
#[derive(Debug, Default)]
struct Shared {
    /// The agent's value (f64 bits): cwnd in packets or rate in bytes/s.
    value: AtomicU64,
    /// Totals since the run started, counted by the controller's events.
    acks: AtomicU64,
    rtt_samples: AtomicU64,
    rtt_sum_ns: AtomicU64,
    rtt_latest_ns: AtomicU64,
    rtt_min_ns: AtomicU64,
    rtt_smoothed_ns: AtomicU64,
    loss_events: AtomicU64,
    ecn_events: AtomicU64,
}

impl Shared {
    fn clear(&self, value: f64) {
        self.value.store(value.to_bits(), Relaxed);
        for c in [
            &self.acks,
            &self.rtt_samples,
            &self.rtt_sum_ns,
            &self.rtt_latest_ns,
            &self.rtt_min_ns,
            &self.rtt_smoothed_ns,
            &self.loss_events,
            &self.ecn_events,
        ] {
            c.store(0, Relaxed);
        }
    }
    fn value(&self) -> f64 {
        f64::from_bits(self.value.load(Relaxed))
    }
}

/// The controller the agent drives. It never changes the value itself: it
/// holds it through fast recovery and after a timeout
/// (`controls_recovery_window`: the transport runs no PRR and no slow
/// start from one packet; the agent sees the loss and decides), and
/// reports an infinite ssthresh (Linux BBR's `TCP_INFINITE_SSTHRESH`: it
/// has none).
#[derive(Clone, Debug)]
struct AgentControl {
    shared: Arc<Shared>,
    mode: Mode,
    initial_cwnd_pkts: f64,
    min_rtt_ns: u64,
    mss_bytes: u32,
}

impl AgentControl {
    fn rate_bytes_per_sec(&self) -> f64 {
        self.shared.value()
    }
}

impl CongestionControl for AgentControl {
    fn name(&self) -> &'static str {
        AGENT_CC
    }

    fn cwnd(&self) -> f64 {
        match self.mode {
            Mode::Cwnd => self.shared.value(),
            Mode::PacingRate if self.min_rtt_ns == 0 || self.mss_bytes == 0 => {
                self.initial_cwnd_pkts
            }
            Mode::PacingRate => (2.0 * self.rate_bytes_per_sec() * self.min_rtt_ns as f64
                / 1e9
                / f64::from(self.mss_bytes))
            .max(4.0),
        }
    }

    fn ssthresh(&self) -> f64 {
        f64::INFINITY
    }

    fn on_ack(&mut self, ack: &AckEvent) {
        let s = &*self.shared;
        s.acks.fetch_add(1, Relaxed);
        if ack.rtt_updated {
            s.rtt_samples.fetch_add(1, Relaxed);
            s.rtt_sum_ns.fetch_add(ack.rtt.latest_ns, Relaxed);
        }
        s.rtt_latest_ns.store(ack.rtt.latest_ns, Relaxed);
        s.rtt_min_ns.store(ack.rtt.min_ns, Relaxed);
        s.rtt_smoothed_ns.store(ack.rtt.smoothed_ns, Relaxed);
        self.min_rtt_ns = ack.rtt.min_ns;
        self.mss_bytes = ack.mss_bytes;
    }

    fn on_congestion_event(&mut self, loss: &LossEvent) {
        if loss.ecn {
            self.shared.ecn_events.fetch_add(1, Relaxed);
        } else {
            self.shared.loss_events.fetch_add(1, Relaxed);
        }
    }

    fn on_rto(&mut self, _rto: &RtoEvent) {}

    fn pacing_rate_bytes_per_sec(&self, _mss_bytes: u32) -> Option<u64> {
        match self.mode {
            Mode::Cwnd => None,
            // At least one byte per second: a zero rate would stall the pacer.
            Mode::PacingRate => Some((self.rate_bytes_per_sec() as u64).max(1)),
        }
    }

    fn controls_recovery_window(&self) -> bool {
        true
    }
}

/// The observation's features, in the order of `AgentRun.step`'s row.
/// "In the step": counted between the previous observation and this one.
pub const FEATURES: &[&str] = &[
    "goodput_bps",        // payload delivered in order at the receiver in the step, bits/s
    "send_rate_bps",      // bytes put on the wire in the step (retransmissions included), bits/s
    "rtt_ns",             // the newest RTT sample
    "rtt_mean_ns",        // mean of the RTT samples taken in the step (the newest if none)
    "srtt_ns",            // RFC 6298 SRTT
    "min_rtt_ns",         // the smallest RTT sample of the connection
    "sent_pkts",          // packets sent in the step
    "retransmitted_pkts", // packets retransmitted in the step
    "loss_events",        // loss episodes (fast retransmit) starting in the step
    "timeouts",           // retransmission timeouts in the step
    "ece_acks",           // ACKs carrying ECE in the step (0 without tcp.ecn)
    "queue_pkts",         // packets waiting at the flow's bottleneck at the end of the step
    "queue_bytes",        // their bytes
    "queue_delay_ns",     // queue_bytes at the bottleneck's rate
    "drops_pkts",         // packets the bottleneck dropped in the step (every flow's)
    "sojourn_mean_ns", // mean sojourn of packets an AQM bottleneck dequeued in the step (0 otherwise)
    "cwnd_pkts",       // the window in force now
    "pacing_rate_bps", // the pacing rate the agent set (0 in cwnd mode)
];

/// Totals at the previous observation.
#[derive(Clone, Copy, Debug, Default)]
struct Totals {
    t_ns: u64,
    delivered_bytes: u64,
    sent_bytes: u64,
    sent_pkts: u64,
    retransmits: u64,
    timeouts: u64,
    ece_acks: u64,
    rtt_samples: u64,
    rtt_sum_ns: u64,
    loss_events: u64,
    drops: u64,
    sojourn_pkts: u64,
    sojourn_sum_ns: u64,
}

/// One scenario with one flow driven by an agent. Built once (the scenario
/// parsed and validated); `reset(seed)` builds a fresh simulation from it.
#[pyclass(unsendable, module = "longfat._native")]
pub struct AgentRun {
    scenario: Scenario,
    opts: BuildOptions,
    shared: Arc<Shared>,
    mode: Mode,
    flow: usize,
    sim: Option<Simulation>,
    prev: Totals,
    /// Facts of the controlled flow's path, from the first build.
    bottleneck_link: usize,
    bottleneck_bps: u64,
    base_rtt_ns: u64,
    mss_bytes: u64,
    start_ns: u64,
    initial_cwnd_pkts: f64,
    flow_name: String,
    flow_names: Vec<String>,
}

fn total_drops(sim: &Simulation, link: usize) -> u64 {
    let c = &sim.links[link].counters;
    c.drops_overflow + c.drops_random + c.drops_aqm
}

impl AgentRun {
    fn sim(&mut self) -> PyResult<&mut Simulation> {
        self.sim
            .as_mut()
            .ok_or_else(|| PyValueError::new_err("call reset() before step()"))
    }

    /// The current totals of the controlled flow and its bottleneck.
    fn totals(&mut self) -> Totals {
        let link = self.bottleneck_link;
        let flow = self.flow;
        let s = &*self.shared;
        let sim = self.sim.as_mut().expect("built");
        // Counters move lazily (departures, and a cut-through feeder's
        // corrupted packets): bring the link up to now first.
        let now_ns = sim.now_ns();
        sim.links[link].advance(now_ns);
        let c = sim.flows[flow].endpoints.counters();
        let soj = sim.links[link].sojourn_total().unwrap_or_default();
        Totals {
            t_ns: sim.now_ns(),
            delivered_bytes: c.delivered_bytes,
            sent_bytes: c.sent_bytes,
            sent_pkts: c.sent_pkts,
            retransmits: c.retransmits,
            timeouts: c.timeouts,
            ece_acks: c.ecn.map_or(0, |e| e.ece_acks),
            rtt_samples: s.rtt_samples.load(Relaxed),
            rtt_sum_ns: s.rtt_sum_ns.load(Relaxed),
            loss_events: s.loss_events.load(Relaxed),
            drops: total_drops(sim, link),
            sojourn_pkts: soj.pkts,
            sojourn_sum_ns: soj.sum_ns,
        }
    }

    /// The observation row for the step from `self.prev` to now.
    fn observe<'py>(&mut self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        let now = self.totals();
        let p = self.prev;
        let s = &*self.shared;
        let dt_s = (now.t_ns - p.t_ns) as f64 / 1e9;
        let per_s = |bytes: u64| {
            if dt_s > 0.0 {
                bytes as f64 * 8.0 / dt_s
            } else {
                0.0
            }
        };
        let latest = s.rtt_latest_ns.load(Relaxed) as f64;
        let samples = now.rtt_samples - p.rtt_samples;
        let rtt_mean = if samples > 0 {
            (now.rtt_sum_ns - p.rtt_sum_ns) as f64 / samples as f64
        } else {
            latest
        };
        let link = self.bottleneck_link;
        let bps = self.bottleneck_bps as f64;
        let sim = self.sim.as_mut().expect("built");
        let t = sim.now_ns();
        let (q_pkts, q_bytes) = sim.links[link].queue_len(t);
        let soj_pkts = now.sojourn_pkts - p.sojourn_pkts;
        let sojourn = if soj_pkts > 0 {
            (now.sojourn_sum_ns - p.sojourn_sum_ns) as f64 / soj_pkts as f64
        } else {
            0.0
        };
        let cwnd = sim.flows[self.flow]
            .endpoints
            .window_state()
            .map_or(0.0, |w| w.cwnd_pkts);
        let rate_bps = match self.mode {
            Mode::Cwnd => 0.0,
            Mode::PacingRate => s.value() * 8.0,
        };
        let row = vec![
            per_s(now.delivered_bytes - p.delivered_bytes),
            per_s(now.sent_bytes - p.sent_bytes),
            latest,
            rtt_mean,
            s.rtt_smoothed_ns.load(Relaxed) as f64,
            s.rtt_min_ns.load(Relaxed) as f64,
            (now.sent_pkts - p.sent_pkts) as f64,
            (now.retransmits - p.retransmits) as f64,
            (now.loss_events - p.loss_events) as f64,
            (now.timeouts - p.timeouts) as f64,
            (now.ece_acks - p.ece_acks) as f64,
            q_pkts as f64,
            q_bytes as f64,
            q_bytes as f64 * 8.0 / bps * 1e9,
            (now.drops - p.drops) as f64,
            sojourn,
            cwnd,
            rate_bps,
        ];
        debug_assert_eq!(row.len(), FEATURES.len());
        self.prev = now;
        row.into_pyarray(py)
    }

    /// Runs to `until_ns`, checking for Ctrl-C every million events.
    fn run_to(&mut self, py: Python<'_>, until_ns: u64) -> PyResult<()> {
        let sim = self.sim()?;
        loop {
            match py.detach(|| sim.run_until_limited(until_ns, 1_000_000)) {
                RunStatus::Reached => return Ok(()),
                RunStatus::EventLimit => py.check_signals()?,
                RunStatus::OverBudget => {
                    return Err(ScenarioError::new_err((
                        format!(
                            "memory budget: the run stopped at {:.3} s simulated: its links held {} packets, more than the memory budget allows; lower the agent's window or rate, or raise memory_budget_bytes",
                            sim.now_ns() as f64 / 1e9,
                            sim.peak_packets_held()
                        ),
                        "memory budget",
                    )))
                }
            }
        }
    }

    fn build(&self) -> PyResult<Simulation> {
        longfat_sim::build_with(&self.scenario, &self.opts, &mut || false).map_err(scenario_error)
    }
}

fn factory(shared: Arc<Shared>, mode: Mode, flow: usize, original: String) -> ControllerFactory {
    Arc::new(move |req: &ControllerRequest<'_>| {
        if req.flow == Some(flow) {
            Ok(Box::new(AgentControl {
                shared: shared.clone(),
                mode,
                initial_cwnd_pkts: req.init.cwnd_pkts,
                min_rtt_ns: 0,
                mss_bytes: 0,
            }) as Box<dyn CongestionControl>)
        } else {
            // The entry's other instances (and the check made while the
            // scenario is validated) keep the entry's own controller.
            longfat_cc::build(&original, req.params, req.rules, req.init)
        }
    })
}

#[pymethods]
impl AgentRun {
    /// `scenario_json`: the scenario as run (overrides applied); the
    /// controlled flow by `flow_index` (among the run's flows, the order of
    /// the results' flows table) or `flow_name`; `mode`: "cwnd" or
    /// "pacing_rate". Validates the scenario, builds it once to learn the
    /// flow's path, and refuses a flow that is not a [[flows]] entry's TCP
    /// connection (ValueError naming `flow`).
    #[new]
    #[pyo3(signature = (scenario_json, mode, memory_budget_bytes, flow_index = None, flow_name = None))]
    fn new(
        scenario_json: &str,
        mode: &str,
        memory_budget_bytes: u64,
        flow_index: Option<usize>,
        flow_name: Option<&str>,
    ) -> PyResult<Self> {
        let mode = match mode {
            "cwnd" => Mode::Cwnd,
            "pacing_rate" => Mode::PacingRate,
            other => {
                return Err(PyValueError::new_err(format!(
                    "action: {other:?} is not an action; allowed: \"cwnd\" (packets) or \"pacing_rate\" (bits/s of payload)"
                )))
            }
        };
        let mut scenario = Scenario::from_json(scenario_json).map_err(scenario_error)?;
        let opts = BuildOptions {
            memory_budget_bytes,
            ..BuildOptions::default()
        };
        let probe =
            longfat_sim::build_with(&scenario, &opts, &mut || false).map_err(scenario_error)?;
        let names: Vec<String> = probe.flows.iter().map(|f| f.name.clone()).collect();
        let idx = match (flow_index, flow_name) {
            (Some(i), _) if i < names.len() => i,
            (Some(i), _) => {
                return Err(PyValueError::new_err(format!(
                    "flow: index {i} is out of range; the scenario has {} flows (0..={})",
                    names.len(),
                    names.len().saturating_sub(1)
                )))
            }
            (None, None) => 0,
            (None, Some(flow)) => names.iter().position(|n| n == flow).ok_or_else(|| {
                let shown: Vec<&str> = names.iter().take(20).map(String::as_str).collect();
                PyValueError::new_err(format!(
                    "flow: no flow is named {flow:?}; the scenario's flows: {}{}",
                    shown.join(", "),
                    if names.len() > 20 { ", ..." } else { "" }
                ))
            })?,
        };
        // The [[flows]] entry the flow belongs to: the run's flows are the
        // entries' instances in order, then UDP sources and generated ones.
        let mut first = 0usize;
        let mut entry = None;
        for (e, f) in scenario.flows.iter().enumerate() {
            let n = f.count.unwrap_or(1) as usize;
            if idx < first + n {
                entry = Some(e);
                break;
            }
            first += n;
        }
        let f = &probe.flows[idx];
        let tcp = matches!(f.endpoints, longfat_sim::flow::Endpoints::Tcp { .. });
        let Some(entry) = entry.filter(|_| tcp) else {
            return Err(PyValueError::new_err(format!(
                "flow: {:?} is not a TCP flow of a [[flows]] entry (it runs {}); the agent drives a TCP connection's window or rate",
                f.name, f.algorithm
            )));
        };
        let cfg = f.endpoints.tcp_config().expect("tcp").clone();
        // The bottleneck: the slowest link of the flow's forward route
        // (the first of equals).
        let bottleneck_link = f
            .fwd
            .iter()
            .map(|&l| l as usize)
            .min_by_key(|&l| probe.link_specs[l].rate.bps())
            .expect("a route has links");
        let original = std::mem::replace(&mut scenario.flows[entry].cc, AGENT_CC.to_string());
        let shared = Arc::new(Shared::default());
        let mut opts = opts;
        opts.controllers
            .register(AGENT_CC, factory(shared.clone(), mode, idx, original))
            .map_err(scenario_error)?;
        Ok(Self {
            bottleneck_bps: probe.link_specs[bottleneck_link].rate.bps(),
            base_rtt_ns: f.base_rtt_ns,
            mss_bytes: cfg.payload_bytes(),
            start_ns: f.start_ns,
            initial_cwnd_pkts: cfg.initial_window.cwnd_pkts,
            flow_name: f.name.clone(),
            flow_names: names,
            bottleneck_link,
            scenario,
            opts,
            shared,
            mode,
            flow: idx,
            sim: None,
            prev: Totals::default(),
        })
    }

    /// Builds a fresh simulation with run seed `seed`, sets the agent's
    /// value to `value` (cwnd in packets, or rate in bits/s), and runs it
    /// to just before the controlled flow starts. Returns the first
    /// observation row. (A start time that depends on the seed, through
    /// `start_jitter`, is read from the new build.)
    fn reset<'py>(
        &mut self,
        py: Python<'py>,
        seed: u64,
        value: f64,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        self.sim = None;
        self.scenario.run.seed = Some(seed);
        self.shared.clear(self.to_cell(value));
        let sim = self.build()?;
        self.start_ns = sim.flows[self.flow].start_ns;
        self.sim = Some(sim);
        self.prev = Totals::default();
        if self.start_ns > 0 {
            self.run_to(py, self.start_ns - 1)?;
        }
        self.prev = self.totals();
        Ok(self.observe(py))
    }

    /// Sets the agent's value, runs `step_ns` more (capped at the run's
    /// end), and returns (observation row, run ended, transfer completed).
    fn step<'py>(
        &mut self,
        py: Python<'py>,
        value: f64,
        step_ns: u64,
    ) -> PyResult<(Bound<'py, PyArray1<f64>>, bool, bool)> {
        let cell = self.to_cell(value);
        let now = self.sim()?.now_ns();
        self.shared.value.store(cell.to_bits(), Relaxed);
        self.run_to(py, now.saturating_add(step_ns))?;
        let obs = self.observe(py);
        let sim = self.sim.as_ref().expect("built");
        let done = sim.is_done();
        let completed = sim.flows[self.flow]
            .endpoints
            .transfer_times_ns()
            .1
            .is_some();
        Ok((obs, done, completed))
    }

    /// Each flow's controller in the current simulation, by index (the
    /// agent's flow runs `AGENT_CC`; a UDP source has none: "").
    fn controllers(&self) -> Vec<&'static str> {
        self.sim.as_ref().map_or_else(Vec::new, |s| {
            s.flows
                .iter()
                .map(|f| match &f.endpoints {
                    longfat_sim::flow::Endpoints::Tcp { sender, .. } => sender.cc().name(),
                    _ => "",
                })
                .collect()
        })
    }

    /// Feature names, in the order of the rows.
    #[staticmethod]
    fn features() -> Vec<&'static str> {
        FEATURES.to_vec()
    }

    #[getter]
    fn flow_index(&self) -> usize {
        self.flow
    }
    #[getter]
    fn flow_name(&self) -> String {
        self.flow_name.clone()
    }
    fn flow_names(&self) -> Vec<String> {
        self.flow_names.clone()
    }
    /// The bottleneck (the slowest link of the flow's forward route).
    #[getter]
    fn bottleneck_bps(&self) -> u64 {
        self.bottleneck_bps
    }
    #[getter]
    fn bottleneck_link(&self) -> String {
        self.sim
            .as_ref()
            .map(|s| s.link_specs[self.bottleneck_link].name.clone())
            .unwrap_or_default()
    }
    /// The flow's propagation-only round-trip time.
    #[getter]
    fn base_rtt_ns(&self) -> u64 {
        self.base_rtt_ns
    }
    #[getter]
    fn mss_bytes(&self) -> u64 {
        self.mss_bytes
    }
    #[getter]
    fn initial_cwnd_pkts(&self) -> f64 {
        self.initial_cwnd_pkts
    }
    #[getter]
    fn start_ns(&self) -> u64 {
        self.start_ns
    }
    #[getter]
    fn now_ns(&self) -> u64 {
        self.sim.as_ref().map_or(0, |s| s.now_ns())
    }
    #[getter]
    fn end_ns(&self) -> u64 {
        self.sim.as_ref().map_or(0, |s| s.end_ns)
    }
    #[getter]
    fn events_processed(&self) -> u64 {
        self.sim.as_ref().map_or(0, |s| s.events_processed())
    }
}

impl AgentRun {
    /// The cell's value for an agent's value: packets, or bits/s -> bytes/s.
    fn to_cell(&self, value: f64) -> f64 {
        match self.mode {
            Mode::Cwnd => value,
            Mode::PacingRate => value / 8.0,
        }
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<AgentRun>()?;
    m.add("AGENT_CC", AGENT_CC)?;
    Ok(())
}
