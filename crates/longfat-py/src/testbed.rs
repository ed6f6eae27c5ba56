//! What the namespace testbed (python/longfat/testbed.py) needs from Rust:
//! the delay line (`longfat_kernel::delayline`), which runs inside the
//! wheel, launched by the testbed as
//! `ip netns exec ROUTER python -m longfat.testbed_delayline ...`; and the
//! simulator's own parsers of rates, durations and sizes, so a scenario
//! means the same on the testbed as in the simulator.

use longfat_kernel::delayline::{self, Classifier, Config};
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Runs the delay line from TUN device `input` to TUN device `output`,
/// with the GIL released, until file descriptor `stop_fd` becomes readable
/// (the testbed's process passes the read end of the pipe it gave
/// `signal.set_wakeup_fd`, so SIGINT or SIGTERM to any thread stops the
/// line between two packets). `routes` are `A.B.C.D/LEN=DELAY_NS` (longest
/// prefix of the destination wins); other packets take `default_delay_ns`.
/// Returns the counts and the lateness percentiles (microseconds, bucket
/// upper edges).
#[pyfunction]
#[pyo3(signature = (input, output, routes, default_delay_ns, stop_fd, capacity = 1_000_000, spin_ns = 0))]
#[allow(clippy::too_many_arguments)]
fn run_delay_line<'py>(
    py: Python<'py>,
    input: String,
    output: String,
    routes: Vec<String>,
    default_delay_ns: u64,
    stop_fd: i32,
    capacity: usize,
    spin_ns: u64,
) -> PyResult<Bound<'py, PyDict>> {
    let routes = routes
        .iter()
        .map(|r| delayline::parse_route(r))
        .collect::<Result<Vec<_>, _>>()
        .map_err(PyValueError::new_err)?;
    if capacity == 0 {
        return Err(PyValueError::new_err("capacity: must be >= 1"));
    }
    let cfg = Config {
        input,
        output,
        classifier: Classifier::new(routes, default_delay_ns),
        capacity,
        spin_ns,
    };
    let result = py.detach(|| delayline::run(&cfg, Some(stop_fd)));
    let stats = result.map_err(|e| PyOSError::new_err(e.to_string()))?;
    let d = PyDict::new(py);
    d.set_item("received", stats.received)?;
    d.set_item("forwarded", stats.forwarded)?;
    d.set_item("dropped_full", stats.dropped_full)?;
    d.set_item("write_errors", stats.write_errors)?;
    d.set_item("left_held", stats.left_held)?;
    d.set_item("peak_held", stats.peak_held)?;
    let l = &stats.lateness;
    d.set_item("lateness_p50_us", l.quantile_us(0.5))?;
    d.set_item("lateness_p99_us", l.quantile_us(0.99))?;
    d.set_item("lateness_p999_us", l.quantile_us(0.999))?;
    d.set_item("lateness_max_us", l.max_ns() as f64 / 1e3)?;
    d.set_item("lateness_mean_us", l.mean_ns() / 1e3)?;
    d.set_item("late_over_1ms", l.later_than_us(1_000))?;
    d.set_item("summary", stats.to_string())?;
    Ok(d)
}

/// `"100Mbps"` -> 100000000 (the simulator's parser; ValueError with its message).
#[pyfunction]
fn parse_rate_bps(s: &str) -> PyResult<u64> {
    longfat_sim::units::parse_bandwidth(s)
        .map(|b| b.bps())
        .map_err(PyValueError::new_err)
}

/// `"35ms"` -> 35000000 (the simulator's parser).
#[pyfunction]
fn parse_duration_ns(s: &str) -> PyResult<u64> {
    longfat_sim::units::parse_duration_ns(s).map_err(PyValueError::new_err)
}

/// `"1000pkt"` -> ("pkt", 1000.0), `"64KB"` -> ("bytes", 64000.0),
/// `"0.2bdp"` -> ("bdp", 0.2) (the simulator's parser).
#[pyfunction]
fn parse_size(s: &str) -> PyResult<(&'static str, f64)> {
    use longfat_sim::units::SizeSpec;
    match longfat_sim::units::parse_size(s).map_err(PyValueError::new_err)? {
        SizeSpec::Packets(n) => Ok(("pkt", n as f64)),
        SizeSpec::Bytes(b) => Ok(("bytes", b as f64)),
        SizeSpec::Bdp(f) => Ok(("bdp", f)),
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run_delay_line, m)?)?;
    m.add_function(wrap_pyfunction!(parse_rate_bps, m)?)?;
    m.add_function(wrap_pyfunction!(parse_duration_ns, m)?)?;
    m.add_function(wrap_pyfunction!(parse_size, m)?)?;
    Ok(())
}
