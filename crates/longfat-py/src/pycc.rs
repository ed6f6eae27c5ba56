//! Controllers written in Python: a `CongestionControl` that holds a
//! Python object (a subclass of `longfat.Controller`) and calls its
//! methods, registered with the simulator through its hook for controllers
//! the embedder supplies (`longfat_sim::ExternalControllers`).
//!
//! A simulation with Python controllers runs its slices holding the GIL
//! (each call would otherwise take it afresh: about 0.5 us more per ACK,
//! benches/python_controller.py); other threads get it while the
//! controllers' Python code runs. The controller's `cwnd` and `ssthresh` attributes (and, for a class with
//! `PACES = True`, `pacing_rate_bytes_per_sec`) are read once after each
//! call and cached, so the transport's many reads of the window cost no
//! Python. Hooks the class does not override (`on_send`, `on_tx_start`,
//! `seed`) are not called at all.
//!
//! An exception raised by the controller (or a window that is not a
//! number) is stored, the first one of the run only; from then on every
//! Python controller of the run does nothing (its window stays as it was),
//! and `Simulation.run_events`, which runs such a simulation in short
//! slices, raises `ControllerError` with the simulated time, the
//! exception as its cause.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use longfat_cc::{AckEvent, CcError, CongestionControl, LossEvent, RateSample, RtoEvent, RttStats};
use longfat_sim::{ControllerFactory, ControllerRequest, ExternalControllers};
use pyo3::create_exception;
use pyo3::exceptions::{PyKeyboardInterrupt, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyType};

create_exception!(
    _native,
    ControllerError,
    PyRuntimeError,
    "A controller written in Python raised an exception during a run; its cause is that exception."
);

/// The first failure of a run's Python controllers.
pub struct Failure {
    name: &'static str,
    flow: Option<usize>,
    now_ns: u64,
    err: PyErr,
}

/// Shared by a simulation's Python controllers: set once, at the first
/// failure.
#[derive(Default)]
pub struct FailureSlot {
    failed: AtomicBool,
    first: Mutex<Option<Failure>>,
}

impl FailureSlot {
    fn record(&self, f: Failure) {
        let mut first = self.first.lock().unwrap_or_else(|p| p.into_inner());
        if first.is_none() {
            *first = Some(f);
        }
        self.failed.store(true, Ordering::Release);
    }

    pub fn failed(&self) -> bool {
        self.failed.load(Ordering::Acquire)
    }

    /// The stored failure as the exception `run_events` raises (every
    /// time it is asked): a KeyboardInterrupt raised while Python code ran
    /// is passed on as is.
    pub fn error(&self, py: Python<'_>) -> Option<PyErr> {
        let first = self.first.lock().unwrap_or_else(|p| p.into_inner());
        let f = first.as_ref()?;
        let cause = f.err.clone_ref(py);
        if cause.is_instance_of::<PyKeyboardInterrupt>(py) {
            return Some(cause);
        }
        let flow = f.flow.map_or_else(String::new, |i| format!(" (flow {i})"));
        let e = ControllerError::new_err(format!(
            "controller '{}'{flow} raised at t = {:.6} s: {}",
            f.name,
            f.now_ns as f64 / 1e9,
            describe(py, &cause),
        ));
        e.set_cause(py, Some(cause));
        Some(e)
    }
}

/// `Type: message` (just `Type` when the message is empty).
fn describe(py: Python<'_>, e: &PyErr) -> String {
    let ty = e
        .get_type(py)
        .name()
        .map_or_else(|_| "Exception".to_string(), |n| n.to_string());
    let msg = e
        .value(py)
        .str()
        .map_or_else(|_| String::new(), |s| s.to_string());
    if msg.is_empty() {
        ty
    } else {
        format!("{ty}: {msg}")
    }
}

/// `name` as a `&'static str` (the trait's `name()`), leaked once per name.
fn static_name(name: &str) -> &'static str {
    static NAMES: OnceLock<Mutex<HashMap<String, &'static str>>> = OnceLock::new();
    let mut names = NAMES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    names
        .entry(name.to_string())
        .or_insert_with(|| Box::leak(name.to_string().into_boxed_str()))
}

// ---- the events, as Python sees them ----------------------------------------

/// What the transport's RTT estimator knows (all 0 before the first sample).
#[pyclass(frozen, module = "longfat._native", name = "RttStats")]
#[derive(Clone)]
pub struct PyRttStats {
    /// The newest sample, ns.
    #[pyo3(get)]
    latest_ns: u64,
    /// The smallest sample on the connection, ns.
    #[pyo3(get)]
    min_ns: u64,
    /// RFC 6298 SRTT, ns.
    #[pyo3(get)]
    smoothed_ns: u64,
}

impl From<RttStats> for PyRttStats {
    fn from(r: RttStats) -> Self {
        Self {
            latest_ns: r.latest_ns,
            min_ns: r.min_ns,
            smoothed_ns: r.smoothed_ns,
        }
    }
}

#[pymethods]
impl PyRttStats {
    fn __repr__(&self) -> String {
        format!(
            "RttStats(latest_ns={}, min_ns={}, smoothed_ns={})",
            self.latest_ns, self.min_ns, self.smoothed_ns
        )
    }
}

/// RFC 7323 timestamps of one ACK, and the tag `on_send` attached.
#[pyclass(frozen, module = "longfat._native", name = "AckTimestamps")]
#[derive(Clone)]
pub struct PyAckTimestamps {
    #[pyo3(get)]
    echoed_sender_ts_ns: u64,
    #[pyo3(get)]
    receiver_ts_ns: u64,
    #[pyo3(get)]
    echoed_tag: u32,
}

/// A delivery-rate sample (only for a class with `WANTS_RATE_SAMPLES = True`).
#[pyclass(frozen, module = "longfat._native", name = "RateSample")]
#[derive(Clone)]
pub struct PyRateSample {
    #[pyo3(get)]
    valid: bool,
    #[pyo3(get)]
    delivered_pkts: u64,
    #[pyo3(get)]
    interval_ns: u64,
    #[pyo3(get)]
    prior_delivered_pkts: u64,
    #[pyo3(get)]
    rtt_ns: u64,
    #[pyo3(get)]
    is_app_limited: bool,
    #[pyo3(get)]
    losses_pkts: u32,
    #[pyo3(get)]
    acked_sacked_pkts: u32,
    #[pyo3(get)]
    prior_in_flight_pkts: u32,
    #[pyo3(get)]
    delivered_total_pkts: u64,
    #[pyo3(get)]
    lost_total_pkts: u64,
    #[pyo3(get)]
    delivered_time_ns: u64,
}

impl From<RateSample> for PyRateSample {
    fn from(r: RateSample) -> Self {
        Self {
            valid: r.valid,
            delivered_pkts: r.delivered_pkts,
            interval_ns: r.interval_ns,
            prior_delivered_pkts: r.prior_delivered_pkts,
            rtt_ns: r.rtt_ns,
            is_app_limited: r.is_app_limited,
            losses_pkts: r.losses_pkts,
            acked_sacked_pkts: r.acked_sacked_pkts,
            prior_in_flight_pkts: r.prior_in_flight_pkts,
            delivered_total_pkts: r.delivered_total_pkts,
            lost_total_pkts: r.lost_total_pkts,
            delivered_time_ns: r.delivered_time_ns,
        }
    }
}

/// One ACK arrival (longfat_cc::AckEvent; docs/python-controllers.md).
#[pyclass(frozen, module = "longfat._native", name = "AckEvent")]
pub struct PyAckEvent(AckEvent);

#[pymethods]
impl PyAckEvent {
    #[getter]
    fn now_ns(&self) -> u64 {
        self.0.now_ns
    }
    #[getter]
    fn delivered_pkts(&self) -> u32 {
        self.0.delivered_pkts
    }
    #[getter]
    fn growth_pkts(&self) -> u32 {
        self.0.growth_pkts
    }
    #[getter]
    fn delivered_bytes(&self) -> u64 {
        self.0.delivered_bytes
    }
    #[getter]
    fn cum_acked_pkts(&self) -> u32 {
        self.0.cum_acked_pkts
    }
    #[getter]
    fn in_flight_pkts(&self) -> u32 {
        self.0.in_flight_pkts
    }
    #[getter]
    fn in_recovery(&self) -> bool {
        self.0.in_recovery
    }
    #[getter]
    fn rtt(&self) -> PyRttStats {
        self.0.rtt.into()
    }
    #[getter]
    fn rtt_updated(&self) -> bool {
        self.0.rtt_updated
    }
    #[getter]
    fn ts(&self) -> Option<PyAckTimestamps> {
        self.0.ts.map(|t| PyAckTimestamps {
            echoed_sender_ts_ns: t.echoed_sender_ts_ns,
            receiver_ts_ns: t.receiver_ts_ns,
            echoed_tag: t.echoed_tag,
        })
    }
    #[getter]
    fn rate(&self) -> PyRateSample {
        self.0.rate.into()
    }
    #[getter]
    fn mss_bytes(&self) -> u32 {
        self.0.mss_bytes
    }
    #[getter]
    fn ece(&self) -> bool {
        self.0.ece
    }
    fn __repr__(&self) -> String {
        format!("{:?}", self.0)
    }
}

/// A loss episode starting (longfat_cc::LossEvent).
#[pyclass(frozen, module = "longfat._native", name = "LossEvent")]
pub struct PyLossEvent(LossEvent);

#[pymethods]
impl PyLossEvent {
    #[getter]
    fn now_ns(&self) -> u64 {
        self.0.now_ns
    }
    #[getter]
    fn in_flight_pkts(&self) -> u32 {
        self.0.in_flight_pkts
    }
    #[getter]
    fn lost_pkts(&self) -> u32 {
        self.0.lost_pkts
    }
    #[getter]
    fn rtt(&self) -> PyRttStats {
        self.0.rtt.into()
    }
    #[getter]
    fn window_cap_pkts(&self) -> Option<f64> {
        self.0.window_cap_pkts
    }
    #[getter]
    fn halve(&self) -> bool {
        self.0.halve
    }
    #[getter]
    fn ecn(&self) -> bool {
        self.0.ecn
    }
    #[getter]
    fn abe(&self) -> bool {
        self.0.abe
    }
    /// RFC 8511 §3 applies: an ECN episode on a connection running ABE.
    fn alternative_backoff(&self) -> bool {
        self.0.alternative_backoff()
    }
    /// `cwnd` lowered to the profile's cap (`window_cap_pkts`, at least 1).
    fn cap(&self, cwnd: f64) -> f64 {
        let mut c = cwnd;
        self.0.cap(&mut c);
        c
    }
    fn __repr__(&self) -> String {
        format!("{:?}", self.0)
    }
}

/// A retransmission timeout (longfat_cc::RtoEvent).
#[pyclass(frozen, module = "longfat._native", name = "RtoEvent")]
pub struct PyRtoEvent(RtoEvent);

#[pymethods]
impl PyRtoEvent {
    #[getter]
    fn now_ns(&self) -> u64 {
        self.0.now_ns
    }
    #[getter]
    fn backoff(&self) -> u32 {
        self.0.backoff
    }
    #[getter]
    fn reduce(&self) -> bool {
        self.0.reduce
    }
    #[getter]
    fn window_cap_pkts(&self) -> Option<f64> {
        self.0.window_cap_pkts
    }
    #[getter]
    fn halve(&self) -> bool {
        self.0.halve
    }
    #[getter]
    fn rtt(&self) -> PyRttStats {
        self.0.rtt.into()
    }
    #[getter]
    fn in_flight_pkts(&self) -> u32 {
        self.0.in_flight_pkts
    }
    /// `cwnd` lowered to the profile's cap (`window_cap_pkts`, at least 1).
    fn cap(&self, cwnd: f64) -> f64 {
        let mut c = cwnd;
        self.0.cap(&mut c);
        c
    }
    fn __repr__(&self) -> String {
        format!("{:?}", self.0)
    }
}

/// What the controller's constructor gets besides its parameters.
#[pyclass(frozen, module = "longfat._native", name = "ControllerSetup")]
pub struct PySetup {
    /// The initial window and slow-start threshold (packets; the threshold
    /// `inf` when unset).
    #[pyo3(get)]
    cwnd_pkts: f64,
    #[pyo3(get)]
    ssthresh_pkts: f64,
    /// The flow's transport profile: "rfc", "ns2" or "linux".
    #[pyo3(get)]
    profile: &'static str,
    /// The flow's index among the run's flows (None: the check made while
    /// the scenario is validated).
    #[pyo3(get)]
    flow: Option<usize>,
}

#[pymethods]
impl PySetup {
    fn __repr__(&self) -> String {
        format!(
            "ControllerSetup(cwnd_pkts={}, ssthresh_pkts={}, profile={:?}, flow={:?})",
            self.cwnd_pkts, self.ssthresh_pkts, self.profile, self.flow
        )
    }
}

// ---- the bridge ------------------------------------------------------------------

/// Which optional hooks the class overrides (asked once, at construction).
#[derive(Clone, Copy)]
struct Hooks {
    on_send: bool,
    on_tx_start: bool,
    seed: bool,
    paces: bool,
    controls_recovery_window: bool,
    wants_rate_samples: bool,
}

/// A controller written in Python.
pub struct PyController {
    obj: Py<PyAny>,
    name: &'static str,
    flow: Option<usize>,
    cwnd: f64,
    ssthresh: f64,
    pacing_bytes_per_sec: Option<u64>,
    hooks: Hooks,
    last_now_ns: u64,
    failure: Arc<FailureSlot>,
}

/// The window attributes, checked: numbers, cwnd finite and positive,
/// ssthresh positive (infinite allowed).
fn read_window(obj: &Bound<'_, PyAny>) -> PyResult<(f64, f64)> {
    let py = obj.py();
    let number = |attr: &Bound<'_, PyString>| -> PyResult<f64> {
        let v = obj.getattr(attr)?;
        v.extract::<f64>().map_err(|_| {
            PyTypeError::new_err(format!(
                "self.{attr} must be a number of packets, not {}",
                v.get_type()
                    .name()
                    .map_or_else(|_| "?".to_string(), |n| n.to_string())
            ))
        })
    };
    let cwnd = number(intern!(py, "cwnd"))?;
    let ssthresh = number(intern!(py, "ssthresh"))?;
    if !(cwnd.is_finite() && cwnd > 0.0) {
        return Err(PyValueError::new_err(format!(
            "self.cwnd = {cwnd} is not a window; must be a finite number of packets > 0"
        )));
    }
    if ssthresh.is_nan() || ssthresh <= 0.0 {
        return Err(PyValueError::new_err(format!(
            "self.ssthresh = {ssthresh} is not a threshold; must be a number of packets > 0 (inf: unset)"
        )));
    }
    Ok((cwnd, ssthresh))
}

fn read_pacing(obj: &Bound<'_, PyAny>) -> PyResult<Option<u64>> {
    let v = obj.getattr(intern!(obj.py(), "pacing_rate_bytes_per_sec"))?;
    if v.is_none() {
        return Ok(None);
    }
    let rate = v.extract::<f64>().map_err(|_| {
        PyTypeError::new_err(
            "self.pacing_rate_bytes_per_sec must be a number of bytes per second or None",
        )
    })?;
    if !(rate.is_finite() && rate >= 1.0) {
        return Err(PyValueError::new_err(format!(
            "self.pacing_rate_bytes_per_sec = {rate} is not a rate; must be a finite number >= 1 byte/s, or None"
        )));
    }
    Ok(Some(rate as u64))
}

impl PyController {
    /// Calls `f` on the object with the GIL, then reads the window; a
    /// failure (of this controller or an earlier one of the run) makes it
    /// a no-op.
    fn call<R: Default>(
        &mut self,
        now_ns: u64,
        f: impl FnOnce(&Bound<'_, PyAny>) -> PyResult<R>,
    ) -> R {
        self.last_now_ns = now_ns;
        if self.failure.failed() {
            return R::default();
        }
        Python::attach(|py| {
            let obj = self.obj.bind(py);
            let out = f(obj).and_then(|r| {
                let (cwnd, ssthresh) = read_window(obj)?;
                if self.hooks.paces {
                    self.pacing_bytes_per_sec = read_pacing(obj)?;
                }
                self.cwnd = cwnd;
                self.ssthresh = ssthresh;
                Ok(r)
            });
            out.unwrap_or_else(|err| {
                self.failure.record(Failure {
                    name: self.name,
                    flow: self.flow,
                    now_ns,
                    err,
                });
                R::default()
            })
        })
    }
}

impl Clone for PyController {
    /// The undo snapshot: the object's `snapshot()` (by default
    /// `copy.deepcopy(self)`).
    fn clone(&self) -> Self {
        Python::attach(|py| {
            let obj = self.obj.bind(py);
            let copy = if self.failure.failed() {
                Ok(obj.clone())
            } else {
                obj.call_method0(intern!(py, "snapshot"))
            };
            let copy = copy.unwrap_or_else(|err| {
                self.failure.record(Failure {
                    name: self.name,
                    flow: self.flow,
                    now_ns: self.last_now_ns,
                    err,
                });
                obj.clone()
            });
            Self {
                obj: copy.unbind(),
                failure: self.failure.clone(),
                ..*self
            }
        })
    }
}

impl CongestionControl for PyController {
    fn name(&self) -> &'static str {
        self.name
    }
    fn cwnd(&self) -> f64 {
        self.cwnd
    }
    fn ssthresh(&self) -> f64 {
        self.ssthresh
    }

    fn on_send(&mut self, now_ns: u64, seq: u64, bytes: u32, retransmit: bool) -> u32 {
        if !self.hooks.on_send {
            return 0;
        }
        self.call(now_ns, |o| {
            let tag =
                o.call_method1(intern!(o.py(), "on_send"), (now_ns, seq, bytes, retransmit))?;
            if tag.is_none() {
                Ok(0)
            } else {
                tag.extract::<u32>()
            }
        })
    }

    fn on_ack(&mut self, ack: &AckEvent) {
        self.call(ack.now_ns, |o| {
            let ev = Bound::new(o.py(), PyAckEvent(*ack))?;
            o.call_method1(intern!(o.py(), "on_ack"), (ev,)).map(drop)
        })
    }

    fn on_congestion_event(&mut self, loss: &LossEvent) {
        self.call(loss.now_ns, |o| {
            let ev = Bound::new(o.py(), PyLossEvent(*loss))?;
            o.call_method1(intern!(o.py(), "on_congestion_event"), (ev,))
                .map(drop)
        })
    }

    fn on_recovery_exit(&mut self, now_ns: u64) {
        self.call(now_ns, |o| {
            o.call_method1(intern!(o.py(), "on_recovery_exit"), (now_ns,))
                .map(drop)
        })
    }

    fn on_timeout_recovery_exit(&mut self, now_ns: u64) {
        self.call(now_ns, |o| {
            o.call_method1(intern!(o.py(), "on_timeout_recovery_exit"), (now_ns,))
                .map(drop)
        })
    }

    fn on_rto(&mut self, rto: &RtoEvent) {
        self.call(rto.now_ns, |o| {
            let ev = Bound::new(o.py(), PyRtoEvent(*rto))?;
            o.call_method1(intern!(o.py(), "on_rto"), (ev,)).map(drop)
        })
    }

    fn pacing_rate_bytes_per_sec(&self, _mss_bytes: u32) -> Option<u64> {
        self.pacing_bytes_per_sec
    }

    fn controls_recovery_window(&self) -> bool {
        self.hooks.controls_recovery_window
    }

    fn wants_rate_samples(&self) -> bool {
        self.hooks.wants_rate_samples
    }

    fn seed(&mut self, seed: u64) {
        if self.hooks.seed {
            let now = self.last_now_ns;
            self.call(now, |o| {
                o.call_method1(intern!(o.py(), "seed"), (seed,)).map(drop)
            })
        }
    }

    fn on_tx_start(&mut self, now_ns: u64, app_limited: bool) {
        if self.hooks.on_tx_start {
            self.call(now_ns, |o| {
                o.call_method1(intern!(o.py(), "on_tx_start"), (now_ns, app_limited))
                    .map(drop)
            })
        }
    }
}

/// Whether `cls` overrides `method` of `longfat.Controller`.
fn overrides(cls: &Bound<'_, PyType>, base: &Bound<'_, PyType>, method: &str) -> PyResult<bool> {
    Ok(!cls.getattr(method)?.is(&base.getattr(method)?))
}

fn flag(cls: &Bound<'_, PyType>, attr: &str) -> PyResult<bool> {
    match cls.getattr(attr) {
        Ok(v) => v.is_truthy(),
        Err(_) => Ok(false),
    }
}

fn cc_error(field: &str, message: String) -> CcError {
    CcError {
        field: field.into(),
        message,
    }
}

/// Builds one controller of class `cls` for `req`: the scenario's
/// `params` checked against the class's `PARAMS` (name -> default, None
/// for a parameter without one), then `cls(setup, **params)`.
fn construct(
    py: Python<'_>,
    name: &'static str,
    cls: &Bound<'_, PyType>,
    req: &ControllerRequest<'_>,
    failure: &Arc<FailureSlot>,
) -> Result<Box<dyn CongestionControl>, CcError> {
    let describe = |e: PyErr| describe(py, &e);
    let class_name = cls
        .qualname()
        .map_or_else(|_| name.to_string(), |n| n.to_string());
    let declared: Vec<(String, Option<f64>)> = cls
        .getattr("PARAMS")
        .and_then(|p| p.extract::<HashMap<String, Option<f64>>>())
        .map(|m| {
            let mut v: Vec<_> = m.into_iter().collect();
            v.sort_by(|a, b| a.0.cmp(&b.0));
            v
        })
        .map_err(|e| {
            cc_error(
                "cc",
                format!(
                    "{class_name}.PARAMS must map parameter names to numbers or None ({})",
                    describe(e)
                ),
            )
        })?;
    for k in req.params.keys() {
        if !declared.iter().any(|(d, _)| d == k) {
            let known = if declared.is_empty() {
                format!("{name} declares no parameters ({class_name}.PARAMS)")
            } else {
                format!(
                    "known: {}",
                    declared
                        .iter()
                        .map(|(d, _)| d.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            return Err(cc_error(
                &format!("params.{k}"),
                format!("unknown parameter for {name}; {known}"),
            ));
        }
    }
    let kwargs = PyDict::new(py);
    for (k, default) in &declared {
        kwargs
            .set_item(k, req.params.get(k).copied().or(*default))
            .map_err(|e| cc_error("cc", describe(e)))?;
    }
    let setup = PySetup {
        cwnd_pkts: req.init.cwnd_pkts,
        ssthresh_pkts: req.init.ssthresh_pkts,
        profile: req.rules.name(),
        flow: req.flow,
    };
    let obj = cls
        .call((setup,), Some(&kwargs))
        .map_err(|e| cc_error("cc", format!("{class_name}(...) raised {}", describe(e))))?;
    let base = py
        .import("longfat.controller")
        .and_then(|m| m.getattr("Controller"))
        .and_then(|b| b.cast_into::<PyType>().map_err(PyErr::from))
        .map_err(|e| cc_error("cc", describe(e)))?;
    if !obj.is_instance(&base).unwrap_or(false) {
        return Err(cc_error(
            "cc",
            format!("{class_name} is not a subclass of longfat.Controller"),
        ));
    }
    let (cwnd, ssthresh) = read_window(&obj)
        .map_err(|e| cc_error("cc", format!("{class_name}(...): {}", describe(e))))?;
    let check = |m: &str| overrides(cls, &base, m).map_err(|e| cc_error("cc", describe(e)));
    let hooks = Hooks {
        on_send: check("on_send")?,
        on_tx_start: check("on_tx_start")?,
        seed: check("seed")?,
        paces: flag(cls, "PACES").map_err(|e| cc_error("cc", describe(e)))?,
        controls_recovery_window: flag(cls, "CONTROLS_RECOVERY_WINDOW")
            .map_err(|e| cc_error("cc", describe(e)))?,
        wants_rate_samples: flag(cls, "WANTS_RATE_SAMPLES")
            .map_err(|e| cc_error("cc", describe(e)))?,
    };
    let pacing_bytes_per_sec = if hooks.paces {
        read_pacing(&obj)
            .map_err(|e| cc_error("cc", format!("{class_name}(...): {}", describe(e))))?
    } else {
        None
    };
    Ok(Box::new(PyController {
        obj: obj.unbind(),
        name,
        flow: req.flow,
        cwnd,
        ssthresh,
        pacing_bytes_per_sec,
        hooks,
        last_now_ns: 0,
        failure: failure.clone(),
    }))
}

/// The registry a simulation is built with: every (name, class) pair of
/// `controllers` (a dict), each a factory of its Python controllers. An
/// invalid name is refused as ScenarioError on field `controllers`.
pub fn registry(
    controllers: &Bound<'_, PyDict>,
    failure: &Arc<FailureSlot>,
) -> PyResult<ExternalControllers> {
    let mut reg = ExternalControllers::new();
    for (k, v) in controllers.iter() {
        let name: String = k.extract()?;
        let cls = v.cast_into::<PyType>().map_err(|_| {
            PyTypeError::new_err(format!(
                "controllers[{name:?}] must be a subclass of longfat.Controller"
            ))
        })?;
        let stat = static_name(&name);
        let cls: Py<PyType> = cls.unbind();
        let failure = failure.clone();
        let factory: ControllerFactory = Arc::new(move |req: &ControllerRequest<'_>| {
            Python::attach(|py| construct(py, stat, cls.bind(py), req, &failure))
        });
        reg.register(&name, factory).map_err(|e| {
            crate::ScenarioError::new_err((format!("controllers: {}", e.message), "controllers"))
        })?;
    }
    Ok(reg)
}

/// Checks a controller name as registration does (None: allowed).
#[pyfunction]
pub fn controller_name_error(name: &str) -> Option<String> {
    let mut reg = ExternalControllers::new();
    reg.register(name, Arc::new(|_: &ControllerRequest<'_>| unreachable!()))
        .err()
        .map(|e| e.message)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyRttStats>()?;
    m.add_class::<PyAckTimestamps>()?;
    m.add_class::<PyRateSample>()?;
    m.add_class::<PyAckEvent>()?;
    m.add_class::<PyLossEvent>()?;
    m.add_class::<PyRtoEvent>()?;
    m.add_class::<PySetup>()?;
    m.add_function(wrap_pyfunction!(controller_name_error, m)?)?;
    m.add("ControllerError", m.py().get_type::<ControllerError>())?;
    Ok(())
}
