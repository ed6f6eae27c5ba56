//! `longfat._native.SenderDriver`: one TCP sender driven packet by packet
//! (`longfat_sim::tcp::driver`), for `longfat conformance`.

use pyo3::prelude::*;
use pyo3::types::PyDict;

use longfat_sim::scenario::{tcp_sender, FlowSpec};
use longfat_sim::tcp::driver::{PeerAck, SenderDriver as Driver};

use crate::scenario_error;

#[pyclass(unsendable, module = "longfat._native")]
struct SenderDriver {
    inner: Driver,
}

#[pymethods]
impl SenderDriver {
    /// The sender of a `[[flows]]` entry given as JSON (`cc`, `params`,
    /// `tcp`), checked as a scenario's (ScenarioError names the field).
    /// `seed`: the run's seed (`run.seed`, default 1): the controller is
    /// seeded as flow 0 of a simulated run with it (`CongestionControl::seed`).
    #[new]
    #[pyo3(signature = (flow_json, seed = 1))]
    fn new(flow_json: &str, seed: u64) -> PyResult<Self> {
        let flow = FlowSpec::from_json(flow_json).map_err(scenario_error)?;
        let sender = tcp_sender("flow", flow.transport(), seed).map_err(scenario_error)?;
        Ok(Self {
            inner: Driver::new(sender),
        })
    }

    /// The handshake's round trip, before any data.
    fn handshake(&mut self, rtt_ns: u64) {
        self.inner.handshake(rtt_ns);
    }

    /// The window the peer advertised before any ACK of data (the handshake's).
    fn set_peer_window(&mut self, pkts: u64) {
        self.inner.set_peer_window(pkts);
    }

    /// The application writes `pkts` packets of data at `now_ns`.
    fn write(&mut self, now_ns: u64, pkts: u64) -> PyResult<()> {
        self.check_time(now_ns)?;
        self.inner.write(now_ns, pkts);
        Ok(())
    }

    /// The peer's ACK at `now_ns` (packet numbers; SACK blocks [start, end)).
    #[pyo3(signature = (now_ns, cum_pkts, sacks, window_pkts, ts_val = 0))]
    fn ack(
        &mut self,
        now_ns: u64,
        cum_pkts: u64,
        sacks: Vec<(u64, u64)>,
        window_pkts: u64,
        ts_val: u64,
    ) -> PyResult<()> {
        self.check_time(now_ns)?;
        self.inner.ack(
            now_ns,
            &PeerAck {
                cum_pkts,
                sacks,
                window_pkts,
                ts_val,
                ece: false,
            },
        );
        Ok(())
    }

    /// Fires the sender's timer while due by `until_ns`; with `stop_on_emit`,
    /// stops after the first firing that sends.
    #[pyo3(signature = (until_ns, stop_on_emit = false))]
    fn run_timers(&mut self, until_ns: u64, stop_on_emit: bool) {
        self.inner.run_timers(until_ns, stop_on_emit);
    }

    #[getter]
    fn now_ns(&self) -> u64 {
        self.inner.now_ns()
    }

    #[getter]
    fn next_timer_ns(&self) -> Option<u64> {
        self.inner.next_timer_ns()
    }

    /// Packets sent from index `start` on: (time ns, packet number, retransmission).
    #[pyo3(signature = (start = 0))]
    fn emitted(&self, start: usize) -> Vec<(u64, u64, bool)> {
        let all = self.inner.emitted();
        all[start.min(all.len())..]
            .iter()
            .map(|s| (s.at_ns, s.seq, s.retransmit))
            .collect()
    }

    /// The sender's state, as TCP_INFO reports it (see `SenderState`).
    fn state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.inner.state();
        let d = PyDict::new(py);
        d.set_item("cwnd_pkts", s.cwnd_pkts)?;
        d.set_item("ssthresh_pkts", s.ssthresh_pkts)?;
        d.set_item("ca_state", s.ca_state)?;
        d.set_item("rto_backoff", s.rto_backoff)?;
        d.set_item("rto_ns", s.rto_ns)?;
        d.set_item("reordering_pkts", s.reordering_pkts)?;
        d.set_item("srtt_ns", s.srtt_ns)?;
        d.set_item("min_rtt_ns", s.min_rtt_ns)?;
        d.set_item("unacked_pkts", s.unacked_pkts)?;
        d.set_item("sacked_pkts", s.sacked_pkts)?;
        d.set_item("lost_pkts", s.lost_pkts)?;
        d.set_item("retrans_pkts", s.retrans_pkts)?;
        d.set_item("total_retrans", s.total_retrans)?;
        d.set_item("timeouts", s.timeouts)?;
        d.set_item("fast_recoveries", s.fast_recoveries)?;
        d.set_item("loss_probes", s.loss_probes)?;
        d.set_item("undos", s.undos)?;
        Ok(d)
    }
}

impl SenderDriver {
    fn check_time(&self, now_ns: u64) -> PyResult<()> {
        if now_ns < self.inner.now_ns() {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "time runs forward: {now_ns} ns is before the driver's {} ns",
                self.inner.now_ns()
            )));
        }
        Ok(())
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<SenderDriver>()
}
