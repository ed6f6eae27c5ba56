//! The kernel path's loader (`longfat_kernel::programs`) for Python:
//! `longfat kernel list | load | unload | status` (python/longfat/kernel.py).

use std::path::Path;

use longfat_kernel::programs;
use pyo3::create_exception;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

create_exception!(
    _native,
    KernelError,
    PyRuntimeError,
    "A BPF congestion control could not be listed, loaded or unloaded (one line)."
);

fn kernel_error(e: programs::Error) -> PyErr {
    KernelError::new_err(e.0)
}

/// The BPF algorithms built into this library: (algorithm, kernel name) pairs.
#[pyfunction]
fn kernel_built() -> Vec<(&'static str, &'static str)> {
    programs::built()
        .iter()
        .map(|b| (b.algo, b.ca_name))
        .collect()
}

/// Why no BPF program was built (None when they were).
#[pyfunction]
fn kernel_not_built_reason() -> Option<&'static str> {
    programs::not_built_reason()
}

/// (algorithm, kernel name) of a user's name: `ltcp`, `longfat_ltcp`, ...
#[pyfunction]
fn kernel_resolve(name: &str) -> PyResult<(&'static str, &'static str)> {
    programs::resolve(name)
        .map(|b| (b.algo, b.ca_name))
        .map_err(kernel_error)
}

/// Registers the named algorithms (idempotent); returns (kernel name, outcome) pairs.
#[pyfunction]
fn kernel_load(
    py: Python<'_>,
    names: Vec<String>,
    log_dir: &str,
) -> PyResult<Vec<(&'static str, &'static str)>> {
    let done = py
        .detach(|| programs::load(&names, Path::new(log_dir)))
        .map_err(kernel_error)?;
    Ok(done.into_iter().map(|(n, o)| (n, o.as_str())).collect())
}

/// Unregisters the named algorithms; returns (kernel name, outcome) pairs.
#[pyfunction]
fn kernel_unload(
    py: Python<'_>,
    names: Vec<String>,
) -> PyResult<Vec<(&'static str, &'static str)>> {
    let done = py
        .detach(|| programs::unload(&names))
        .map_err(kernel_error)?;
    Ok(done.into_iter().map(|(n, o)| (n, o.as_str())).collect())
}

/// {"algos": [{"algo", "ca_name", "registered", "pinned"}], "available": [...], "not_built": str | None}
#[pyfunction]
fn kernel_status(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let s = programs::status().map_err(kernel_error)?;
    let d = PyDict::new(py);
    let mut algos = Vec::new();
    for a in &s.algos {
        let x = PyDict::new(py);
        x.set_item("algo", a.algo)?;
        x.set_item("ca_name", a.ca_name)?;
        x.set_item("registered", a.registered)?;
        x.set_item("pinned", a.pinned)?;
        algos.push(x);
    }
    d.set_item("algos", algos)?;
    d.set_item("available", s.available)?;
    d.set_item("not_built", s.not_built)?;
    d.set_item("pin_dir", programs::PIN_DIR)?;
    Ok(d)
}

/// The glue's counters and window for this process's TCP socket `fd` using
/// the loaded algorithm `name` (None when the socket has no such state).
#[pyfunction]
fn kernel_socket_state<'py>(
    py: Python<'py>,
    name: &str,
    fd: i32,
) -> PyResult<Option<Bound<'py, PyDict>>> {
    let Some(s) = programs::socket_state(name, fd).map_err(kernel_error)? else {
        return Ok(None);
    };
    let d = PyDict::new(py);
    for (k, v) in s.fields() {
        d.set_item(k, v)?;
    }
    Ok(Some(d))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(kernel_built, m)?)?;
    m.add_function(wrap_pyfunction!(kernel_not_built_reason, m)?)?;
    m.add_function(wrap_pyfunction!(kernel_resolve, m)?)?;
    m.add_function(wrap_pyfunction!(kernel_load, m)?)?;
    m.add_function(wrap_pyfunction!(kernel_unload, m)?)?;
    m.add_function(wrap_pyfunction!(kernel_status, m)?)?;
    m.add_function(wrap_pyfunction!(kernel_socket_state, m)?)?;
    m.add("KernelError", m.py().get_type::<KernelError>())?;
    Ok(())
}
