//! Building a controller from its name and parameters.

use std::collections::BTreeMap;
use std::fmt;

use crate::{CongestionControl, InitialWindow, Reno};

/// Algorithm parameters as given in a scenario (`[flows.params]`), by name.
pub type CcParams = BTreeMap<String, f64>;

/// Every algorithm `build` knows, in the order the CLI lists them.
pub const ALGORITHMS: &[&str] = &["reno", "newreno"];

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CcError {
    /// The offending input: `cc` or `params.<name>`.
    pub field: String,
    pub message: String,
}

impl fmt::Display for CcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

impl std::error::Error for CcError {}

/// Rejects any parameter not in `allowed`.
fn check_params(algo: &str, params: &CcParams, allowed: &[&str]) -> Result<(), CcError> {
    for name in params.keys() {
        if !allowed.contains(&name.as_str()) {
            let allowed = if allowed.is_empty() { "none".to_string() } else { allowed.join(", ") };
            return Err(CcError {
                field: format!("params.{name}"),
                message: format!("unknown parameter for {algo}; allowed: {allowed}"),
            });
        }
    }
    Ok(())
}

/// Builds the named controller. "newreno" is an alias: the NewReno/SACK
/// recovery lives in the transport, the window rule is Reno's.
pub fn build(
    name: &str,
    params: &CcParams,
    init: InitialWindow,
) -> Result<Box<dyn CongestionControl>, CcError> {
    match name {
        "reno" | "newreno" => {
            check_params(name, params, &[])?;
            Ok(Box::new(Reno::new(init)))
        }
        _ => Err(CcError {
            field: "cc".into(),
            message: format!("unknown algorithm {name:?}; known: {}", ALGORITHMS.join(", ")),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_algorithm_names_field_and_choices() {
        let err = build("cubicc", &CcParams::new(), InitialWindow::default()).err().unwrap();
        assert_eq!(err.field, "cc");
        assert!(err.message.contains("reno"));
    }

    #[test]
    fn unknown_parameter_is_refused() {
        let mut p = CcParams::new();
        p.insert("beta".into(), 0.7);
        let err = build("reno", &p, InitialWindow::default()).err().unwrap();
        assert_eq!(err.field, "params.beta");
    }
}
