//! The error every parameter check and the registry return, and the
//! parameter map they read. Kept apart so that the algorithms and the
//! registry both import it from below.

use std::collections::BTreeMap;
use std::fmt;

/// Algorithm parameters as given in a scenario (`[flows.params]`), by name.
pub type CcParams = BTreeMap<String, f64>;

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
