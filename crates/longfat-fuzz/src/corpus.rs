//! The regression corpus, tests/corpus/: one scenario per file.
//!
//! ```text
//! # source: <where it came from>
//! # expect: ok | error | error <field> [| <field> ...]
//! <the scenario, TOML (.toml) or JSON (.json)>
//! ```
//!
//! The header is the leading comment lines. `# expect: ok` means the
//! scenario must be accepted and run; `# expect: error <field>` that it must
//! be refused with an error naming that field (or a field under it:
//! `flows[0].tcp` matches `flows[0].tcp.max_rto`); alternatives are
//! separated by `|`. With no `# expect:` line any refusal or acceptance
//! passes. In every case a PANIC, HANG, MEMORY, GROWTH or BADERROR fails.
//! `# check: within-estimate` (Rust side only) also fails the case when the
//! run's measured peak memory passes the engine's build-time estimate
//! (UNDERESTIMATE). For JSON files the comment lines are blanked before
//! parsing.

use std::path::{Path, PathBuf};

use crate::harness::{Kind, Outcome};
use crate::input::{Format, Input};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expect {
    /// No `# expect:` line: anything but a failure.
    Any,
    Ok,
    /// Refused with a field matching one of these (empty: any field).
    Error(Vec<String>),
}

#[derive(Clone, Debug)]
pub struct Case {
    pub path: PathBuf,
    pub source: String,
    pub expect: Expect,
    /// `# check: within-estimate`: UNDERESTIMATE fails the case.
    pub within_estimate: bool,
    pub input: Input,
}

impl Case {
    pub fn name(&self) -> String {
        self.path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }
}

/// Parses a corpus file.
pub fn load_case(path: &Path) -> Result<Case, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let format = match path.extension().and_then(|e| e.to_str()) {
        Some("json") => Format::Json,
        Some("toml") => Format::Toml,
        _ => return Err(format!("{}: not a .toml or .json file", path.display())),
    };
    let mut source = String::new();
    let mut expect = Expect::Any;
    let mut within_estimate = false;
    let mut body = Vec::new();
    let mut in_header = true;
    for line in text.lines() {
        let t = line.trim();
        if in_header && (t.starts_with('#') || t.is_empty()) {
            let c = t.trim_start_matches('#').trim();
            if let Some(v) = c.strip_prefix("source:") {
                source = v.trim().to_string();
            } else if let Some(v) = c.strip_prefix("expect:") {
                expect = parse_expect(v).map_err(|e| format!("{}: {e}", path.display()))?;
            } else if let Some(v) = c.strip_prefix("check:") {
                within_estimate |= v.split_whitespace().any(|w| w == "within-estimate");
            }
            // Comment lines stay in TOML; JSON has no comments.
            body.push(if format == Format::Toml { line } else { "" });
        } else {
            in_header = false;
            body.push(line);
        }
    }
    let mut body = body.join("\n");
    body.push('\n');
    Ok(Case {
        path: path.to_path_buf(),
        source: source.clone(),
        expect,
        within_estimate,
        input: Input {
            text: body,
            format,
            source,
        },
    })
}

fn parse_expect(v: &str) -> Result<Expect, String> {
    let v = v.trim();
    if v == "ok" {
        return Ok(Expect::Ok);
    }
    if let Some(rest) = v.strip_prefix("error") {
        let fields: Vec<String> = rest
            .split('|')
            .map(|f| f.trim().to_string())
            .filter(|f| !f.is_empty())
            .collect();
        return Ok(Expect::Error(fields));
    }
    Err(format!(
        "unknown expectation {v:?}; write `ok`, `error` or `error <field>`"
    ))
}

/// Corpus files directly in `dir` (subdirectories belong to other tools), sorted.
pub fn case_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    p.is_file() && p.extension().is_some_and(|e| e == "toml" || e == "json")
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// tests/corpus of this checkout.
pub fn default_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus")
}

fn field_matches(field: &str, want: &str) -> bool {
    field == want
        || field
            .strip_prefix(want)
            .is_some_and(|rest| rest.starts_with('.') || rest.starts_with('['))
}

/// Whether `o` meets the case's expectation; Err explains why not.
pub fn check(case: &Case, o: &Outcome) -> Result<(), String> {
    if o.kind.is_failure()
        || o.kind == Kind::Growth
        || (case.within_estimate && o.kind == Kind::Underestimate)
    {
        return Err(o.describe());
    }
    let expect = &case.expect;
    match expect {
        Expect::Any => Ok(()),
        Expect::Ok if o.kind.was_accepted() => Ok(()),
        Expect::Ok => Err(format!("expected ok, got {}", o.describe())),
        Expect::Error(fields) => match o.kind {
            Kind::Refused
                if fields.is_empty() || fields.iter().any(|f| field_matches(&o.field, f)) =>
            {
                Ok(())
            }
            Kind::Refused => Err(format!(
                "expected an error naming {}, got {}",
                fields.join(" | "),
                o.describe()
            )),
            _ => Err(format!(
                "expected error {}, got {}",
                if fields.is_empty() {
                    "(any field)".to_string()
                } else {
                    fields.join(" | ")
                },
                o.describe()
            )),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_prefixes() {
        assert!(field_matches("flows[0].tcp.max_rto", "flows[0].tcp"));
        assert!(field_matches("flows[0].tcp", "flows[0].tcp"));
        assert!(field_matches("flows[0]", "flows"));
        assert!(!field_matches("flows_x", "flows"));
        assert_eq!(
            parse_expect(" error a.b | c ").unwrap(),
            Expect::Error(vec!["a.b".into(), "c".into()])
        );
        assert_eq!(parse_expect("error").unwrap(), Expect::Error(vec![]));
        assert_eq!(parse_expect("ok").unwrap(), Expect::Ok);
        assert!(parse_expect("fine").is_err());
    }
}
