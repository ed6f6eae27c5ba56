//! Python bindings: build a simulation from a scenario (as JSON), run it in
//! slices so Python can draw progress and honour Ctrl-C, and hand results
//! back as numpy columns plus a JSON summary.

use numpy::IntoPyArray;
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The allocator of everything the engine allocates: mimalloc, with 2 MiB
/// pages asked for once a scenario is large (`Scenario::wants_huge_pages`,
/// in `Simulation::new`). A run with 100,000 flows holds about a gigabyte
/// of flow, link and packet state that its events touch at random; 2 MiB
/// pages spare most of its TLB misses (docs/performance.md, "Session 45").
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod driver;
mod gym;
mod kernel;
mod pycc;
mod testbed;

/// Python objects for the summary with every dict key interned, as
/// `json.loads` shares its keys: a summary of 100,000 flows has 500,000
/// rows of about ten keys each, and a fresh string per key took 235 MB
/// more (`docs/performance.md`, "Session 46: the summary into Python").
struct InternedKeys;

impl pythonize::PythonizeTypes for InternedKeys {
    type Map = InternedDict;
    type NamedMap = pythonize::PythonizeUnnamedMappingAdapter<InternedDict>;
    type List = pyo3::types::PyList;
}

struct InternedDict;

impl pythonize::PythonizeMappingType for InternedDict {
    type Builder<'py> = Bound<'py, PyDict>;

    fn builder<'py>(py: Python<'py>, _len: Option<usize>) -> PyResult<Self::Builder<'py>> {
        Ok(PyDict::new(py))
    }

    fn push_item<'py>(
        builder: &mut Self::Builder<'py>,
        key: Bound<'py, PyAny>,
        value: Bound<'py, PyAny>,
    ) -> PyResult<()> {
        let key = pyo3::types::PyString::intern(
            builder.py(),
            key.cast::<pyo3::types::PyString>()?.to_str()?,
        );
        builder.set_item(key, value)
    }

    fn finish<'py>(builder: Self::Builder<'py>) -> PyResult<Bound<'py, pyo3::types::PyMapping>> {
        Ok(builder.into_mapping())
    }
}

create_exception!(
    _native,
    ScenarioError,
    PyValueError,
    "A scenario field is missing, malformed or out of range."
);

#[pyclass(unsendable, module = "longfat._native")]
struct Simulation {
    inner: longfat_sim::Simulation,
    /// Set when the scenario runs controllers written in Python: their
    /// first exception (pycc.rs).
    python_failure: Option<std::sync::Arc<pycc::FailureSlot>>,
}

fn scenario_error(e: longfat_sim::ScenarioError) -> PyErr {
    ScenarioError::new_err((e.to_string(), e.field))
}

/// Per captured flow its name and pcapng bytes, and the tap's name.
type Captures<'py> = (
    Vec<(String, Bound<'py, pyo3::types::PyBytes>)>,
    Option<&'static str>,
);

/// Events run between two checks for Ctrl-C / SIGTERM (about 50 ms of work).
const EVENTS_PER_SIGNAL_CHECK: u64 = 1_000_000;

/// Events run between two checks for a Python controller's exception
/// (a few ms of work with Python in the loop): the run stops soon after.
const EVENTS_PER_CONTROLLER_CHECK: u64 = 10_000;

impl Simulation {
    /// What `run_events` returns for the engine's status.
    fn status(&self, status: longfat_sim::sim::RunStatus) -> PyResult<bool> {
        use longfat_sim::sim::RunStatus;
        match status {
            RunStatus::Reached => Ok(true),
            RunStatus::EventLimit => Ok(false),
            RunStatus::OverBudget => {
                let sim = &self.inner;
                let held = longfat_sim::budget::human(
                    sim.peak_packets_held()
                        .saturating_mul(longfat_sim::budget::PACKET_BYTES),
                );
                Err(ScenarioError::new_err((
                    format!(
                        "memory budget: the run stopped at {:.3} s simulated: its links held {} packets (about {held}), more than the memory budget allows; use smaller queues or windows (tcp.rwnd), or raise the budget (--memory-budget, LONGFAT_MEMORY_BUDGET)",
                        sim.now_ns() as f64 / 1e9,
                        sim.peak_packets_held(),
                    ),
                    "memory budget",
                )))
            }
        }
    }
}

#[pymethods]
impl Simulation {
    /// Validates the scenario (a JSON object) and builds the simulation,
    /// refusing one whose estimated memory is above `memory_budget_bytes`
    /// (default 4 GiB). Ctrl-C and other Python signal handlers are honoured
    /// while a large scenario is set up. `controllers`: {name: class} of
    /// controllers written in Python (subclasses of longfat.Controller)
    /// that `cc` may name besides the built-in ones.
    #[new]
    #[pyo3(signature = (scenario_json, memory_budget_bytes = None, controllers = None))]
    fn new(
        py: Python<'_>,
        scenario_json: &str,
        memory_budget_bytes: Option<u64>,
        controllers: Option<Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let scenario = longfat_sim::Scenario::from_json(scenario_json).map_err(scenario_error)?;
        if scenario.wants_huge_pages() {
            // SAFETY: sets an allocator option before the simulation is
            // built; later allocations of this process may use 2 MiB pages.
            unsafe {
                libmimalloc_sys::mi_option_set(libmimalloc_sys::mi_option_large_os_pages, 1);
            }
        }
        let mut opts = longfat_sim::BuildOptions {
            python_summary: true,
            ..Default::default()
        };
        if let Some(b) = memory_budget_bytes {
            opts.memory_budget_bytes = b;
        }
        let mut python_failure = None;
        if let Some(c) = controllers.filter(|c| !c.is_empty()) {
            let slot = std::sync::Arc::new(pycc::FailureSlot::default());
            opts.controllers = pycc::registry(&c, &slot)?;
            python_failure = Some(slot);
        }
        let mut signal: Option<PyErr> = None;
        let built = longfat_sim::build_with(&scenario, &opts, &mut || match py.check_signals() {
            Ok(()) => false,
            Err(e) => {
                signal = Some(e);
                true
            }
        });
        if let Some(e) = signal {
            return Err(e);
        }
        Ok(Self {
            inner: built.map_err(scenario_error)?,
            python_failure,
        })
    }

    /// What the run was estimated to cost: {"memory_bytes", "packets_bytes",
    /// "series_bytes", "flows_bytes", "summary_bytes" (with "python_summary_bytes",
    /// the summary's Python objects), "capture_bytes", "max_packets_held", "series_rows",
    /// "bottleneck_packets", "events", "wall_s"}.
    fn estimate<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let e = &self.inner.estimate;
        let d = PyDict::new(py);
        d.set_item("memory_bytes", e.memory_bytes)?;
        d.set_item("packets_bytes", e.packets_bytes)?;
        d.set_item("series_bytes", e.series_bytes)?;
        d.set_item("flows_bytes", e.flows_bytes)?;
        d.set_item("summary_bytes", e.summary_bytes)?;
        d.set_item("python_summary_bytes", e.python_summary_bytes)?;
        d.set_item("capture_bytes", e.capture_bytes)?;
        d.set_item("max_packets_held", e.max_packets_held)?;
        d.set_item("series_rows", e.series_rows)?;
        d.set_item("bottleneck_packets", e.bottleneck_packets)?;
        d.set_item("events", e.events)?;
        d.set_item("wall_s", e.wall_s())?;
        Ok(d)
    }

    /// Packets held by links now, and the most held at once so far.
    #[getter]
    fn packets_held(&self) -> u64 {
        self.inner.packets_held()
    }
    #[getter]
    fn peak_packets_held(&self) -> u64 {
        self.inner.peak_packets_held()
    }

    #[getter]
    fn now_ns(&self) -> u64 {
        self.inner.now_ns()
    }
    #[getter]
    fn end_ns(&self) -> u64 {
        self.inner.end_ns
    }
    #[getter]
    fn events_processed(&self) -> u64 {
        self.inner.events_processed()
    }
    #[getter]
    fn done(&self) -> bool {
        self.inner.is_done()
    }

    /// Runs all events up to `until_ns` (simulated nanoseconds), without
    /// holding the GIL (progress bars and other threads keep running). Every
    /// million events it checks for signals, so Ctrl-C or SIGTERM stops even
    /// a dense slice within a fraction of a second.
    fn run_until(&mut self, py: Python<'_>, until_ns: u64) -> PyResult<()> {
        loop {
            if self.run_events(py, until_ns, EVENTS_PER_SIGNAL_CHECK)? {
                return Ok(());
            }
            py.check_signals()?;
        }
    }

    /// Runs at most `max_events` events up to `until_ns`; returns true when
    /// `until_ns` (or the end) was reached. Raises ScenarioError when the
    /// run's packets pass the memory budget.
    fn run_events(&mut self, py: Python<'_>, until_ns: u64, max_events: u64) -> PyResult<bool> {
        use longfat_sim::sim::RunStatus;
        let inner = &mut self.inner;
        let Some(failure) = &self.python_failure else {
            let status = py.detach(|| inner.run_until_limited(until_ns, max_events));
            return self.status(status);
        };
        // Python controllers: short slices, checked for an exception after
        // each (raised as ControllerError naming the controller and time).
        // The slices keep the GIL: each controller call would take it
        // anyway (about 0.2 us each time it is taken afresh), and other
        // threads still get it while the controllers' Python code runs
        // (the interpreter hands it over on its switch interval).
        let mut left = max_events;
        loop {
            let slice = left.min(EVENTS_PER_CONTROLLER_CHECK);
            let status = inner.run_until_limited(until_ns, slice);
            if let Some(e) = failure.error(py) {
                return Err(e);
            }
            left -= slice;
            if status != RunStatus::EventLimit || left == 0 {
                return self.status(status);
            }
        }
    }

    /// Packets that left the monitored (bottleneck) links in the forward direction.
    fn bottleneck_packets(&self) -> u64 {
        let sim = &self.inner;
        sim.metrics
            .monitored_links
            .iter()
            .filter(|&&l| !sim.link_specs[l].name.ends_with(".reverse"))
            .map(|&l| sim.links[l].counters.departed_pkts)
            .sum()
    }

    /// The packet captures (`run.pcap`): [(flow name, pcapng bytes)] in
    /// the order `run.pcap` lists them, and the tap ("sender" or
    /// "bottleneck"); empty without captures.
    fn captures<'py>(&self, py: Python<'py>) -> PyResult<Captures<'py>> {
        let Some(c) = self.inner.capture.as_deref() else {
            return Ok((Vec::new(), None));
        };
        let mut out = Vec::new();
        for (slot, t) in c.flows().enumerate() {
            // Written straight into the bytes object, whose length is known:
            // one copy of the file in memory, not two.
            let len = usize::try_from(c.pcapng_len(slot)).expect("a capture fits in memory");
            let bytes = pyo3::types::PyBytes::new_with(py, len, |buf| {
                let rest = c
                    .write_pcapng(slot, &mut buf[..])
                    .map_err(|e| PyValueError::new_err(e.to_string()))?;
                if rest.is_empty() {
                    Ok(())
                } else {
                    Err(PyValueError::new_err(
                        "a capture came out shorter than computed",
                    ))
                }
            })?;
            out.push((t.name.clone(), bytes));
        }
        Ok((out, Some(c.tap.name())))
    }

    /// Per flow, the ACKs its receiver sent and those its sender received
    /// (TCP flows; 0 for others): what a capture counts as pure ACKs.
    fn ack_counts(&self) -> (Vec<u64>, Vec<u64>) {
        self.inner
            .flows
            .iter()
            .map(|f| match &f.endpoints {
                longfat_sim::flow::Endpoints::Tcp { sender, receiver } => {
                    (receiver.counters.acks_sent, sender.counters.acks_received)
                }
                _ => (0, 0),
            })
            .unzip()
    }

    /// Flow and link names, in index order.
    fn flow_names(&self) -> Vec<String> {
        self.inner.flows.iter().map(|f| f.name.clone()).collect()
    }
    fn flow_algorithms(&self) -> Vec<String> {
        self.inner
            .flows
            .iter()
            .map(|f| f.algorithm.clone())
            .collect()
    }
    fn link_names(&self) -> Vec<String> {
        self.inner
            .link_specs
            .iter()
            .map(|l| l.name.clone())
            .collect()
    }

    /// Names of the traffic generators ([[short_flows]], [[web]]), by index.
    fn generator_names(&self) -> Vec<String> {
        self.inner.metrics.generator_names().to_vec()
    }

    /// One row per generated transfer: {"flow", "generator", "start_s",
    /// "size_bytes", "fct_s"} as ndarrays; fct_s is NaN for a transfer that
    /// had not completed when the run ended.
    fn transfers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let (mut flow, mut generator, mut start_s, mut size, mut fct) =
            (vec![], vec![], vec![], vec![], vec![]);
        for (i, f) in self.inner.flows.iter().enumerate() {
            let Some(g) = f.generated else { continue };
            flow.push(i as u32);
            generator.push(g.generator);
            start_s.push(f.start_ns as f64 / 1e9);
            size.push(g.size_bytes);
            fct.push(f.completion_time_ns().map_or(f64::NAN, |t| t as f64 / 1e9));
        }
        let out = PyDict::new(py);
        out.set_item("flow", flow.into_pyarray(py))?;
        out.set_item("generator", generator.into_pyarray(py))?;
        out.set_item("start_s", start_s.into_pyarray(py))?;
        out.set_item("size_bytes", size.into_pyarray(py))?;
        out.set_item("fct_s", fct.into_pyarray(py))?;
        Ok(out)
    }

    /// The summary as Python objects, as `json.loads(summary_json())`
    /// would give them (keys in the same order, non-finite numbers as
    /// None), without the text: at 100,000 flows that took 2 s
    /// (`docs/performance.md`, "Session 46: the summary into Python").
    /// None until the run reached its end.
    fn summary<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.inner
            .metrics
            .summary_rows()
            .map(|s| pythonize::pythonize_custom::<InternedKeys, _>(py, s).map_err(PyErr::from))
            .transpose()
    }

    /// The summary as a JSON string (None until the run reached its end).
    fn summary_json(&self) -> Option<String> {
        self.inner
            .metrics
            .summary_rows()
            .map(|s| serde_json::to_string(s).expect("a summary serializes"))
    }

    /// Time series as {"flows": {column: ndarray}, "links": {column: ndarray}}.
    fn series<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let m = &self.inner.metrics;
        let flows = PyDict::new(py);
        let f = &m.flows;
        flows.set_item("time_ns", f.time_ns.clone().into_pyarray(py))?;
        flows.set_item("flow", f.flow.clone().into_pyarray(py))?;
        flows.set_item("goodput_bps", f.goodput_bps.clone().into_pyarray(py))?;
        flows.set_item("throughput_bps", f.throughput_bps.clone().into_pyarray(py))?;
        flows.set_item("cwnd_pkts", f.cwnd_pkts.clone().into_pyarray(py))?;
        flows.set_item("ssthresh_pkts", f.ssthresh_pkts.clone().into_pyarray(py))?;
        flows.set_item("srtt_ns", f.srtt_ns.clone().into_pyarray(py))?;
        flows.set_item("rtt_ns", f.rtt_ns.clone().into_pyarray(py))?;
        flows.set_item("retransmits", f.retransmits.clone().into_pyarray(py))?;
        flows.set_item("timeouts", f.timeouts.clone().into_pyarray(py))?;
        // ECN counters (only when the run has a flow with tcp.ecn),
        // cumulative: -1 on the rows of other flows, which the Python side
        // turns into nulls (`runner.NULLABLE_COLUMNS`).
        let rows = f.time_ns.len();
        let es = &m.ecn;
        if !es.row.is_empty() {
            let spread = |v: &[u64]| {
                let mut out = vec![-1i64; rows];
                for (&r, &x) in es.row.iter().zip(v) {
                    out[r as usize] = x as i64;
                }
                out
            };
            flows.set_item("ece_acks", spread(&es.ece_acks).into_pyarray(py))?;
            flows.set_item(
                "ecn_reductions",
                spread(&es.ecn_reductions).into_pyarray(py),
            )?;
            flows.set_item("ce_marks", spread(&es.ce_marks).into_pyarray(py))?;
        }
        // PLT connections' per-module columns (only when the run has PLT
        // flows): NaN (-1 for counts) on the rows of other flows, which the
        // Python side turns into nulls.
        let ms = &m.modules;
        if !ms.row.is_empty() {
            let spread_f = |v: &[f64]| {
                let mut out = vec![f64::NAN; rows];
                for (&r, &x) in ms.row.iter().zip(v) {
                    out[r as usize] = x;
                }
                out
            };
            let spread_u = |v: &[u64]| {
                let mut out = vec![-1i64; rows];
                for (&r, &x) in ms.row.iter().zip(v) {
                    out[r as usize] = x as i64;
                }
                out
            };
            flows.set_item(
                "hcm_cwnd_pkts",
                spread_f(&ms.hcm_cwnd_pkts).into_pyarray(py),
            )?;
            flows.set_item(
                "lcm_cwnd_pkts",
                spread_f(&ms.lcm_cwnd_pkts).into_pyarray(py),
            )?;
            flows.set_item(
                "hcm_sent_pkts",
                spread_u(&ms.hcm_sent_pkts).into_pyarray(py),
            )?;
            flows.set_item(
                "lcm_sent_pkts",
                spread_u(&ms.lcm_sent_pkts).into_pyarray(py),
            )?;
            flows.set_item(
                "hcm_lost_pkts",
                spread_u(&ms.hcm_lost_pkts).into_pyarray(py),
            )?;
            flows.set_item(
                "lcm_lost_pkts",
                spread_u(&ms.lcm_lost_pkts).into_pyarray(py),
            )?;
            flows.set_item(
                "hcm_goodput_bps",
                spread_f(&ms.hcm_goodput_bps).into_pyarray(py),
            )?;
            flows.set_item(
                "lcm_goodput_bps",
                spread_f(&ms.lcm_goodput_bps).into_pyarray(py),
            )?;
        }
        let links = PyDict::new(py);
        let l = &m.links;
        links.set_item("time_ns", l.time_ns.clone().into_pyarray(py))?;
        links.set_item("link", l.link.clone().into_pyarray(py))?;
        links.set_item("queue_pkts", l.queue_pkts.clone().into_pyarray(py))?;
        links.set_item("queue_bytes", l.queue_bytes.clone().into_pyarray(py))?;
        links.set_item("utilization", l.utilization.clone().into_pyarray(py))?;
        links.set_item("drops_overflow", l.drops_overflow.clone().into_pyarray(py))?;
        links.set_item("drops_random", l.drops_random.clone().into_pyarray(py))?;
        links.set_item("drops_aqm", l.drops_aqm.clone().into_pyarray(py))?;
        links.set_item("ce_marks", l.ce_marks.clone().into_pyarray(py))?;
        links.set_item(
            "sojourn_mean_ns",
            l.sojourn_mean_ns.clone().into_pyarray(py),
        )?;
        links.set_item("sojourn_max_ns", l.sojourn_max_ns.clone().into_pyarray(py))?;
        let out = PyDict::new(py);
        out.set_item("flows", flows)?;
        out.set_item("links", links)?;
        Ok(out)
    }
}

/// Congestion-avoidance growth of one controller alone, on a fake clock:
/// the window starts at `peak_pkts`, one congestion event at t = 0 backs it
/// off, then every RTT of `rtt_s` delivers one window of ACKs (one per
/// packet) until the window is back at `peak_pkts`. Returns (seconds taken,
/// window just after the backoff). Used for H-TCP's Table I (effective
/// increase per RTT over a congestion epoch).
#[pyfunction]
#[pyo3(signature = (cc, params, peak_pkts, rtt_s, max_s = 3600.0))]
fn epoch_growth(
    cc: &str,
    params: std::collections::BTreeMap<String, f64>,
    peak_pkts: f64,
    rtt_s: f64,
    max_s: f64,
) -> PyResult<(f64, f64)> {
    use longfat_cc::{AckEvent, InitialWindow, LossEvent, RttStats};
    if !(peak_pkts >= 2.0 && rtt_s > 0.0 && max_s > 0.0) {
        return Err(PyValueError::new_err(
            "peak_pkts must be >= 2, rtt_s and max_s > 0",
        ));
    }
    let init = InitialWindow {
        cwnd_pkts: peak_pkts,
        ssthresh_pkts: peak_pkts,
    };
    let mut c = longfat_cc::build(cc, &params, longfat_cc::Rules::Rfc, init)
        .map_err(|e| PyValueError::new_err(format!("{}: {}", e.field, e.message)))?;
    let rtt_ns = (rtt_s * 1e9) as u64;
    let rtt = RttStats {
        latest_ns: rtt_ns,
        min_ns: rtt_ns,
        smoothed_ns: rtt_ns,
    };
    let mut now = 1_000_000_000u64;
    // A first, quiet RTT so delay-based state sees the base RTT.
    let start = now;
    c.on_congestion_event(&LossEvent {
        now_ns: now,
        in_flight_pkts: peak_pkts as u32,
        lost_pkts: 1,
        rtt,
        ..Default::default()
    });
    c.on_recovery_exit(now);
    let after = c.cwnd();
    let end = now + (max_s * 1e9) as u64;
    while c.cwnd() < peak_pkts && now < end {
        let w = c.cwnd().max(1.0);
        let n = w.floor() as u64;
        let step = rtt_ns / n.max(1);
        for _ in 0..n {
            now += step;
            c.on_ack(&AckEvent {
                now_ns: now,
                delivered_pkts: 1,
                growth_pkts: 1,
                delivered_bytes: 1460,
                cum_acked_pkts: 1,
                in_flight_pkts: n as u32,
                in_recovery: false,
                rtt,
                rtt_updated: true,
                ts: None,
                ..Default::default()
            });
        }
    }
    Ok(((now - start) as f64 / 1e9, after))
}

/// Jain's fairness index of `xs` as the engine's summary computes it
/// (metrics::jain_index; None for no values or all zero), for summaries
/// made outside the engine (the testbed's).
#[pyfunction]
fn jain_index(xs: Vec<f64>) -> Option<f64> {
    longfat_sim::metrics::jain_index(&xs)
}

/// A memory budget as users write it (`"8GiB"`, `"500MB"`, bytes) in
/// bytes: `budget::parse_memory_budget`; ValueError with its message.
#[pyfunction]
fn parse_memory_budget(text: &str) -> PyResult<u64> {
    longfat_sim::budget::parse_memory_budget(text).map_err(pyo3::exceptions::PyValueError::new_err)
}

/// Names of the congestion-control algorithms this build knows: the window
/// controllers, then PLT (a transport whose HCM runs one of them).
#[pyfunction]
fn algorithms() -> Vec<&'static str> {
    longfat_cc::CATALOGUE.iter().map(|a| a.name).collect()
}

/// The catalogue as plain data (`longfat algorithms --format json`): each
/// algorithm's name, one-liner, paper, kind, checks across parameters, and
/// every parameter's declaration.
#[pyfunction]
fn catalogue(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    use longfat_cc::{Range, Rules};
    longfat_cc::CATALOGUE
        .iter()
        .map(|a| {
            let d = PyDict::new(py);
            d.set_item("name", a.name)?;
            d.set_item(
                "kind",
                if a.build.is_some() {
                    "controller"
                } else {
                    "transport"
                },
            )?;
            d.set_item("what", a.what)?;
            d.set_item("paper", a.paper)?;
            d.set_item("constraints", a.constraints.to_vec())?;
            let params = a
                .params
                .iter()
                .map(|p| {
                    let q = PyDict::new(py);
                    q.set_item("name", p.name)?;
                    q.set_item("unit", p.unit)?;
                    q.set_item("default", p.default)?;
                    let by_profile = PyDict::new(py);
                    for rules in Rules::ALL {
                        by_profile.set_item(rules.name(), p.default_under(rules))?;
                    }
                    q.set_item("profile_defaults", by_profile)?;
                    let (kind, lo, hi) = match p.range {
                        Range::Closed(lo, hi) => ("closed", lo, hi),
                        Range::Open(lo, hi) => ("open", lo, hi),
                        Range::Whole(lo, hi) => ("whole", lo, hi),
                        Range::Switch => ("switch", 0.0, 1.0),
                    };
                    let range = PyDict::new(py);
                    range.set_item("kind", kind)?;
                    range.set_item("lo", lo)?;
                    range.set_item("hi", hi)?;
                    q.set_item("range", range)?;
                    q.set_item("about", p.about)?;
                    q.set_item("source", p.source)?;
                    Ok(q)
                })
                .collect::<PyResult<Vec<_>>>()?;
            d.set_item("params", params)?;
            Ok(d)
        })
        .collect()
}

/// Every scenario field's declaration (table, name, kind, unit, range,
/// default, meaning) as JSON: `longfat_sim::scenario::fields::json`.
#[pyfunction]
fn scenario_fields() -> String {
    longfat_sim::scenario::fields::json().to_string()
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Simulation>()?;
    m.add_function(wrap_pyfunction!(algorithms, m)?)?;
    m.add_function(wrap_pyfunction!(catalogue, m)?)?;
    m.add_function(wrap_pyfunction!(scenario_fields, m)?)?;
    m.add_function(wrap_pyfunction!(epoch_growth, m)?)?;
    m.add_function(wrap_pyfunction!(jain_index, m)?)?;
    m.add_function(wrap_pyfunction!(parse_memory_budget, m)?)?;
    testbed::register(m)?;
    pycc::register(m)?;
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    kernel::register(m)?;
    driver::register(m)?;
    gym::register(m)?;
    m.add(
        "DEFAULT_MEMORY_BUDGET_BYTES",
        longfat_sim::budget::DEFAULT_MEMORY_BUDGET_BYTES,
    )?;
    m.add(
        "EVENTS_PER_WALL_SECOND",
        longfat_sim::budget::EVENTS_PER_WALL_SECOND,
    )?;
    m.add("DEFAULT_SEED", longfat_sim::rng::DEFAULT_SEED)?;
    Ok(())
}
