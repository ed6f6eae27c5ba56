//! Inputs: the text handed to the scenario parser, and where it came from.
//! Input `index` of campaign `seed` is a pure function of (seed, index, the
//! scenario files), so any input can be regenerated from its index alone.

use std::path::Path;

use serde_json::Value;

use crate::mutate::{self, Seed};
use crate::values::{splice_raw, G};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `Scenario::from_json` (what the Python front end passes).
    Json,
    /// `Scenario::from_toml`.
    Toml,
}

impl Format {
    pub fn ext(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::Toml => "toml",
        }
    }
}

#[derive(Clone, Debug)]
pub struct Input {
    pub text: String,
    pub format: Format,
    /// "structured", "mutation-of-<file>", "deep-nesting", or a file path.
    pub source: String,
}

/// Produces the inputs of a campaign.
pub struct Generator {
    pub seeds: Vec<Seed>,
}

/// TOML-only tokens a JSON value cannot hold.
const TOML_RAW: &[&str] = &[
    "nan",
    "+nan",
    "-nan",
    "inf",
    "-inf",
    "+inf",
    "1979-05-27T07:32:00Z",
    "1979-05-27",
    "07:32:00",
    "0x10",
    "0o777",
    "0b1",
    "1_000",
    "9223372036854775807",
    "-9223372036854775808",
    "1e400",
    "-0.0",
    "'''multi\nline'''",
    "\"\\u0000\"",
];

impl Generator {
    pub fn new(scenarios_dir: &Path) -> Result<Self, String> {
        Ok(Self {
            seeds: mutate::load_seeds(scenarios_dir)?,
        })
    }

    /// Scenarios directory of this checkout (crates/longfat-fuzz/../../scenarios).
    pub fn default_scenarios_dir() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios")
    }

    pub fn input(&self, seed: u64, index: u64) -> Input {
        let mut g = G::new(seed, index);
        // Structured 50 %, mutations 49.8 %, deep nesting 0.2 %.
        let r = g.below(1000);
        if r < 2 {
            return deep_nesting(&mut g);
        }
        let (mut doc, source) = if r < 500 || self.seeds.is_empty() {
            (crate::gen::structured(&mut g), "structured".to_string())
        } else {
            let s = &self.seeds[g.below(self.seeds.len() as u64) as usize];
            (
                mutate::mutated(&mut g, s),
                format!("mutation-of-{}", s.name),
            )
        };
        // 10 % go through the TOML parser instead.
        if g.chance(0.1) && doc.is_object() {
            if g.chance(0.3) {
                let tok = *g.pick(TOML_RAW);
                let v = g.raw(tok);
                mutate::replace_random_leaf(&mut g, &mut doc, v);
            }
            if let Some(text) = to_toml(&doc) {
                return Input {
                    text: splice_raw(&text, &g.raw),
                    format: Format::Toml,
                    source,
                };
            }
        }
        let text = serde_json::to_string_pretty(&doc).expect("JSON values serialize");
        Input {
            text: splice_raw(&text, &g.raw),
            format: Format::Json,
            source,
        }
    }
}

/// TOML text for a JSON document, when TOML can express it (no nulls).
fn to_toml(v: &Value) -> Option<String> {
    fn has_null(v: &Value) -> bool {
        match v {
            Value::Null => true,
            Value::Array(a) => a.iter().any(has_null),
            Value::Object(m) => m.values().any(has_null),
            _ => false,
        }
    }
    if has_null(v) {
        return None;
    }
    toml::to_string(v).ok()
}

/// Deeply nested arrays or tables: parser and converter recursion.
fn deep_nesting(g: &mut G) -> Input {
    let depth = *g.pick(&[64usize, 127, 128, 129, 1000, 10_000, 100_000]);
    let (text, format) = match g.below(4) {
        0 => (
            format!("x = {}{}", "[".repeat(depth), "]".repeat(depth)),
            Format::Toml,
        ),
        1 => (
            format!("x = {}1{}", "{a = ".repeat(depth), "}".repeat(depth)),
            Format::Toml,
        ),
        2 => (
            format!("{{\"run\": {}{}}}", "[".repeat(depth), "]".repeat(depth)),
            Format::Json,
        ),
        _ => (
            format!("[{}a]\nx = 1\n", "a.".repeat(depth.min(20_000))),
            Format::Toml,
        ),
    };
    Input {
        text,
        format,
        source: "deep-nesting".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_are_a_function_of_seed_and_index() {
        let g = Generator::new(&Generator::default_scenarios_dir()).unwrap();
        assert!(!g.seeds.is_empty());
        for i in 0..200 {
            let (a, b) = (g.input(7, i), g.input(7, i));
            assert_eq!((a.text, a.source, a.format), (b.text, b.source, b.format));
        }
        assert_ne!(g.input(7, 1).text, g.input(8, 1).text);
    }
}
