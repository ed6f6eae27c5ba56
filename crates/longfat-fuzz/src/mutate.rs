//! Mutations of the scenario files under scenarios/ (recursively).
//!
//! Each file is parsed once (TOML -> JSON value, the `[reproduce]` table
//! dropped: it belongs to the Python front end), then each input applies one
//! to four mutations: replace a value with an interesting one for its field,
//! delete a key, duplicate an array entry, change a value's type, scale the
//! number in a unit string by 1e-9..1e18, add a schema field or an unknown
//! key.

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use crate::schema::{self, Kind, Table};
use crate::values::{interesting, wrong_type, FLOATS, G};

/// A scenario file parsed for mutation.
#[derive(Clone, Debug)]
pub struct Seed {
    /// Path relative to the scenarios directory, e.g. "htcp/fig11.toml".
    pub name: String,
    pub value: Value,
}

/// Every *.toml and *.json under `dir`, sorted by path, `[reproduce]` removed.
pub fn load_seeds(dir: &Path) -> Result<Vec<Seed>, String> {
    let mut files = vec![];
    walk(dir, &mut files).map_err(|e| format!("{}: {e}", dir.display()))?;
    files.sort();
    let mut seeds = vec![];
    for f in files {
        let text = std::fs::read_to_string(&f).map_err(|e| format!("{}: {e}", f.display()))?;
        let mut value: Value = if f.extension().is_some_and(|e| e == "json") {
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", f.display()))?
        } else {
            let t: toml::Value =
                toml::from_str(&text).map_err(|e| format!("{}: {e}", f.display()))?;
            serde_json::to_value(t).map_err(|e| format!("{}: {e}", f.display()))?
        };
        if let Some(m) = value.as_object_mut() {
            m.remove("reproduce");
        }
        let name = f
            .strip_prefix(dir)
            .unwrap_or(&f)
            .to_string_lossy()
            .replace('\\', "/");
        seeds.push(Seed { name, value });
    }
    Ok(seeds)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for e in std::fs::read_dir(dir)? {
        let p = e?.path();
        if p.is_dir() {
            walk(&p, out)?;
        } else if p.extension().is_some_and(|e| e == "toml" || e == "json") {
            out.push(p);
        }
    }
    Ok(())
}

/// A location in the document: keys and indices from the root.
#[derive(Clone, Debug)]
enum Step {
    Key(String),
    Index(usize),
}

fn paths(v: &Value, prefix: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    out.push(prefix.clone());
    match v {
        Value::Object(m) => {
            for (k, c) in m {
                prefix.push(Step::Key(k.clone()));
                paths(c, prefix, out);
                prefix.pop();
            }
        }
        Value::Array(a) => {
            for (i, c) in a.iter().enumerate() {
                prefix.push(Step::Index(i));
                paths(c, prefix, out);
                prefix.pop();
            }
        }
        _ => {}
    }
}

fn get_mut<'a>(v: &'a mut Value, path: &[Step]) -> Option<&'a mut Value> {
    let mut cur = v;
    for s in path {
        cur = match s {
            Step::Key(k) => cur.get_mut(k.as_str())?,
            Step::Index(i) => cur.get_mut(*i)?,
        };
    }
    Some(cur)
}

fn get<'a>(v: &'a Value, path: &[Step]) -> Option<&'a Value> {
    let mut cur = v;
    for s in path {
        cur = match s {
            Step::Key(k) => cur.get(k.as_str())?,
            Step::Index(i) => cur.get(*i)?,
        };
    }
    Some(cur)
}

/// The schema table at `path` (following keys from the root), if known.
fn table_at(path: &[Step]) -> Option<Table> {
    let mut t = Table::Root;
    for s in path {
        match s {
            Step::Key(k) => t = schema::child_table(t, k)?,
            Step::Index(_) => {}
        }
    }
    Some(t)
}

/// The kind of the value at `path`: by its key within its table.
fn kind_at(path: &[Step]) -> Option<Kind> {
    let (last, parent) = path.split_last()?;
    match last {
        Step::Key(k) => {
            if matches!(parent.last(), Some(Step::Key(p)) if p == "params") {
                return Some(Kind::Float);
            }
            schema::kind_of_key(table_at(parent), k)
        }
        Step::Index(_) => match parent.last() {
            Some(Step::Key(k)) if k == "class_queues" => Some(Kind::Size),
            _ => None,
        },
    }
}

/// Multiplies the number at the front of a unit string ("35ms") by `f`.
fn scale_unit_string(s: &str, f: f64, exp_fmt: bool) -> Option<String> {
    let s = s.trim();
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == 'e' || c == '-' || c == '+'))
        .unwrap_or(s.len());
    let (mut num, mut unit) = (&s[..end], &s[end..]);
    // "e" may start a unit; back off until the number parses.
    let mut e = end;
    while e > 0 && num.parse::<f64>().is_err() {
        e -= 1;
        num = &s[..e];
        unit = &s[e..];
    }
    let v: f64 = num.parse().ok()?;
    let w = v * f;
    Some(if exp_fmt {
        format!("{w:e}{unit}")
    } else {
        format!("{w}{unit}")
    })
}

/// Applies one random mutation in place.
pub fn mutate_once(g: &mut G, doc: &mut Value) {
    let mut all = vec![];
    paths(doc, &mut vec![], &mut all);
    let path = all[g.below(all.len() as u64) as usize].clone();
    let kind = kind_at(&path);
    match g.below(100) {
        // Replace with an interesting value for the field.
        0..=29 => {
            let v = match kind {
                Some(Kind::Table(_) | Kind::Tables(_)) | None => wrong_type(g),
                Some(k) => interesting(g, k),
            };
            if let Some(slot) = get_mut(doc, &path) {
                if !path.is_empty() {
                    *slot = v;
                }
            }
        }
        // Scale the number inside a unit string, or a bare number.
        30..=49 => {
            let k = g.range(0, 27) as i32 - 9;
            let f = 10f64.powi(k)
                * if g.chance(0.3) {
                    1.0 + g.unit() * 9.0
                } else {
                    1.0
                };
            let exp_fmt = g.chance(0.3);
            if let Some(slot) = get_mut(doc, &path) {
                match slot {
                    Value::String(s) => {
                        if let Some(n) = scale_unit_string(s, f, exp_fmt) {
                            *slot = json!(n);
                        }
                    }
                    Value::Number(n) => {
                        if let Some(x) = n.as_f64() {
                            let y = x * f;
                            *slot = if n.is_u64() && (0.0..1.8e19).contains(&y) {
                                json!(y.round() as u64)
                            } else {
                                json!(y)
                            };
                        }
                    }
                    _ => {}
                }
            }
        }
        // Delete a key (or an array entry).
        50..=61 => {
            if let Some((last, parent)) = path.split_last() {
                if let Some(p) = get_mut(doc, parent) {
                    match (p, last) {
                        (Value::Object(m), Step::Key(k)) => {
                            m.remove(k);
                        }
                        (Value::Array(a), Step::Index(i)) => {
                            a.remove(*i);
                        }
                        _ => {}
                    }
                }
            }
        }
        // Duplicate an array entry (sometimes many times).
        62..=71 => {
            let arrays: Vec<&Vec<Step>> = all
                .iter()
                .filter(|p| matches!(p.last(), Some(Step::Index(_))))
                .collect();
            if !arrays.is_empty() {
                let p = arrays[g.below(arrays.len() as u64) as usize].clone();
                let (last, parent) = p.split_last().unwrap();
                let times = *g.weighted(&[(70, 1usize), (20, 3), (9, 30), (1, 100)]);
                if let (Some(Value::Array(a)), Step::Index(i)) = (get_mut(doc, parent), last) {
                    let e = a[*i].clone();
                    for _ in 0..times {
                        a.insert(*i, e.clone());
                    }
                }
            }
        }
        // Change the type.
        72..=79 => {
            if !path.is_empty() {
                let v = wrong_type(g);
                if let Some(slot) = get_mut(doc, &path) {
                    *slot = v;
                }
            }
        }
        // Add a schema field (or a controller parameter) with an interesting
        // or plain value to a table.
        80..=93 => {
            let tables: Vec<&Vec<Step>> = all.iter().filter(|p| table_at(p).is_some()).collect();
            let p = tables[g.below(tables.len() as u64) as usize].clone();
            let t = table_at(&p).unwrap();
            let fields = schema::fields(t);
            let (name, k, _) = fields[g.below(fields.len() as u64) as usize];
            let v = match k {
                Kind::Table(_) => json!({}),
                Kind::Tables(_) => json!([]),
                Kind::Params => {
                    let mut m = Map::new();
                    let cc = get_mut(doc, &p)
                        .and_then(|v| v.get("cc"))
                        .and_then(Value::as_str)
                        .unwrap_or("reno")
                        .to_string();
                    let list = schema::params_of(&cc);
                    let pname = if list.is_empty() {
                        "beta"
                    } else {
                        list[g.below(list.len() as u64) as usize].name
                    };
                    m.insert(pname.to_string(), json!(*g.pick(FLOATS)));
                    Value::Object(m)
                }
                k => interesting(g, k),
            };
            if let Some(Value::Object(m)) = get_mut(doc, &p) {
                m.insert(name.to_string(), v);
            }
        }
        // An unknown key.
        _ => {
            let objs: Vec<&Vec<Step>> = all
                .iter()
                .filter(|p| matches!(get(doc, p), Some(Value::Object(_))))
                .collect();
            if !objs.is_empty() {
                let p = objs[g.below(objs.len() as u64) as usize].clone();
                let k = *g.pick(&["unknown", "reproduce", "Rate", "rate ", "", "flows", "x.y"]);
                let v = wrong_type(g);
                if let Some(Value::Object(m)) = get_mut(doc, &p) {
                    m.insert(k.to_string(), v);
                }
            }
        }
    }
}

/// Replaces a random leaf (or an empty table) of `doc` with `v`.
pub fn replace_random_leaf(g: &mut G, doc: &mut Value, v: Value) {
    let mut all = vec![];
    paths(doc, &mut vec![], &mut all);
    let leaves: Vec<&Vec<Step>> = all
        .iter()
        .filter(|p| {
            !p.is_empty() && !matches!(get(doc, p), Some(Value::Object(_) | Value::Array(_)))
        })
        .collect();
    if leaves.is_empty() {
        return;
    }
    let p = leaves[g.below(leaves.len() as u64) as usize].clone();
    if let Some(slot) = get_mut(doc, &p) {
        *slot = v;
    }
}

/// A mutated copy of `seed`.
pub fn mutated(g: &mut G, seed: &Seed) -> Value {
    let mut doc = seed.value.clone();
    let n = *g.weighted(&[(55, 1u32), (25, 2), (12, 3), (8, 4)]);
    for _ in 0..n {
        mutate_once(g, &mut doc);
    }
    doc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scales_unit_strings() {
        assert_eq!(scale_unit_string("35ms", 1e3, false).unwrap(), "35000ms");
        assert_eq!(
            scale_unit_string("1e9bps", 10.0, false).unwrap(),
            "10000000000bps"
        );
        assert_eq!(scale_unit_string("0.5bdp", 1e-9, true).unwrap(), "5e-10bdp");
        assert!(scale_unit_string("unlimited", 10.0, false).is_none());
    }
}
