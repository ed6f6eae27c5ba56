//! The scenario schema as the fuzzer sees it: the field catalogue of
//! `longfat_sim::scenario::fields` (every table, every field's kind), read,
//! not copied. Test `every_declared_field_is_generated` fails when a
//! declared field exists that the generator never writes.

use longfat_sim::scenario::fields as catalogue;
pub use longfat_sim::scenario::fields::{Kind, Table, TABLES as ALL_TABLES};

/// The words a `Kind::Word` declaration allows.
const fn words(f: catalogue::Field) -> &'static [&'static str] {
    match f.kind {
        Kind::Word(w) => w,
        _ => panic!("not a word field"),
    }
}

pub const TOPOLOGIES: &[&str] = words(catalogue::TOPOLOGY);
pub const DISCIPLINES: &[&str] = words(catalogue::DISCIPLINE);
pub const PATTERNS: &[&str] = words(catalogue::PATTERN);
pub const PROFILES: &[&str] = words(catalogue::PROFILE);
pub const DISTRIBUTIONS: &[&str] = words(catalogue::DISTRIBUTION);
pub const ACK_CLASSES: &[&str] = words(catalogue::LCM_ACK_CLASS);
pub const LCM_RESTARTS: &[&str] = words(catalogue::LCM_RESTART);
pub const BUFFERS: &[&str] = words(catalogue::BUFFER);
pub const HOSTS: &[&str] = words(catalogue::HOST);
pub const TRANSPORTS: &[&str] = words(catalogue::TRANSPORT);
pub const TAPS: &[&str] = words(catalogue::PCAP_TAP);
/// `cc` values: the controllers, then PLT (the catalogue's names).
pub const CCS: &[&str] = longfat_cc::NAMES;

/// (field, kind, required)
pub type Field = (&'static str, Kind, bool);

/// Table `t`'s fields, from the catalogue.
pub fn fields(t: Table) -> Vec<Field> {
    t.fields()
        .iter()
        .map(|f| (f.name, f.kind, f.required))
        .collect()
}

/// The kind of a field found by name anywhere in a scenario (for mutating
/// scenario files, where the enclosing table is known only by its key).
pub fn kind_of_key(table: Option<Table>, key: &str) -> Option<Kind> {
    if let Some(f) = table.and_then(|t| t.field(key)) {
        return Some(f.kind);
    }
    // Fall back to any table that has the key.
    ALL_TABLES.iter().find_map(|t| t.field(key)).map(|f| f.kind)
}

/// The table a key of `parent` opens (e.g. "bottleneck" in Network -> Link).
pub fn child_table(parent: Table, key: &str) -> Option<Table> {
    parent.field(key).and_then(|f| match f.kind {
        Kind::Table(t) | Kind::Tables(t) => Some(t),
        _ => None,
    })
}

/// The parameters `cc` declares in the catalogue (crates/longfat-cc), with
/// their ranges; none for PLT and unknown names.
pub fn params_of(cc: &str) -> &'static [longfat_cc::Param] {
    longfat_cc::algorithm(cc).map_or(&[], |a| a.params)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The keys of table `t` present in `v`, recursively, as
    /// "Struct.field".
    fn walk(v: &serde_json::Value, t: Table, seen: &mut std::collections::BTreeSet<String>) {
        let serde_json::Value::Object(m) = v else {
            return;
        };
        for (k, x) in m {
            let Some(f) = t.field(k) else { continue };
            seen.insert(format!("{}.{}", t.struct_name(), f.name));
            match (f.kind, x) {
                (Kind::Table(c), _) => walk(x, c, seen),
                (Kind::Tables(c), serde_json::Value::Array(a)) => {
                    a.iter().for_each(|e| walk(e, c, seen))
                }
                _ => {}
            }
        }
    }

    /// A declared field the structured generator never writes is never
    /// fuzzed: every one must appear, in its own table, within a few
    /// thousand inputs.
    #[test]
    fn every_declared_field_is_generated() {
        let mut seen = std::collections::BTreeSet::new();
        for i in 0..2000 {
            let v = crate::gen::structured(&mut crate::values::G::new(29, i));
            walk(&v, Table::Root, &mut seen);
        }
        let missing: Vec<String> = ALL_TABLES
            .iter()
            .flat_map(|t| {
                t.fields()
                    .iter()
                    .map(move |f| format!("{}.{}", t.struct_name(), f.name))
            })
            .filter(|k| !seen.contains(k))
            .collect();
        assert!(
            missing.is_empty(),
            "declared fields the fuzzer never generates: {missing:?}"
        );
    }
}
