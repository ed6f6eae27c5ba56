//! A scenario problem: which field, and what is wrong with it; and how a
//! serde error becomes one.

use std::fmt;

/// A scenario problem: which field, and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    pub field: String,
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.field, self.message)
        }
    }
}

impl std::error::Error for ScenarioError {}

pub(super) fn err<T>(
    field: impl Into<String>,
    message: impl Into<String>,
) -> Result<T, ScenarioError> {
    Err(ScenarioError {
        field: field.into(),
        message: message.into(),
    })
}

/// The error `build_with` returns when its `interrupted` callback said so.
pub fn interrupted_error() -> ScenarioError {
    ScenarioError {
        field: String::new(),
        message: "interrupted during set-up".into(),
    }
}

/// `s` with control characters escaped (`\n`, `\u{1b}`).
pub(super) fn printable(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// The field a schema error is about. serde reports a missing field at the
/// table that lacks it, and a whole-document error at no path: name the
/// field itself, or `scenario` for the document.
pub(super) fn error_field(path: &str, message: &str) -> String {
    // serde_path_to_error writes `?` for a position it could not name.
    let path = path.trim_end_matches('?').trim_end_matches('.');
    let quoted = |prefix: &str| {
        message
            .strip_prefix(prefix)
            .and_then(|r| r.split('`').next())
            .map(str::to_string)
    };
    let join = |name: String| {
        if path.is_empty() {
            name
        } else {
            format!("{path}.{name}")
        }
    };
    if let Some(name) = quoted("missing field `") {
        return join(name);
    }
    if path.is_empty() || path.ends_with('.') {
        return match quoted("unknown field `") {
            Some(name) if !name.is_empty() => join(name),
            Some(_) => join("\"\"".into()),
            None => "scenario".into(),
        };
    }
    if path.starts_with('[') {
        return format!("scenario{path}"); // a document given as an array
    }
    path.to_string()
}
