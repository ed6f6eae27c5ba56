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
pub const BUFFERS: &[&str] = words(catalogue::BUFFER);
pub const HOSTS: &[&str] = words(catalogue::HOST);
/// `cc` values: the controllers, then PLT (checked against the registry below).
pub const CCS: &[&str] = &[
    "reno", "newreno", "ltcp", "htcp", "ehstcp", "tcpgt", "highspeed", "scalable", "bic", "cubic", "vegas", "fast", "plt",
];

/// (field, kind, required)
pub type Field = (&'static str, Kind, bool);

/// Table `t`'s fields, from the catalogue.
pub fn fields(t: Table) -> Vec<Field> {
    t.fields().iter().map(|f| (f.name, f.kind, f.required)).collect()
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

/// Controller parameters: (algorithm, name, lo, hi, open interval, switch).
pub struct Param {
    pub name: &'static str,
    pub lo: f64,
    pub hi: f64,
    pub open: bool,
    pub flag: bool,
}

const fn real(name: &'static str, lo: f64, hi: f64) -> Param {
    Param {
        name,
        lo,
        hi,
        open: false,
        flag: false,
    }
}
const fn open(name: &'static str, lo: f64, hi: f64) -> Param {
    Param {
        name,
        lo,
        hi,
        open: true,
        flag: false,
    }
}
const fn flag(name: &'static str) -> Param {
    Param {
        name,
        lo: 0.0,
        hi: 1.0,
        open: false,
        flag: true,
    }
}

/// The parameters each controller reads (crates/longfat-cc/src/*.rs
/// `ParamReader` calls), with their ranges.
pub fn params_of(cc: &str) -> &'static [Param] {
    const LTCP: &[Param] = &[real("w_t", 1.0, 1e9), open("beta", 0.0, 1.0)];
    const HTCP: &[Param] = &[
        real("delta_l", 0.0, 3600.0),
        open("beta_min", 0.0, 1.0),
        open("beta_max", 0.0, 1.0),
        real("rtt_max_fade", 0.0, 1.0),
        flag("rtt_scaling"),
        open("rtt_ref", 0.0, 3600.0),
        open("scale_min", 0.0, 1e6),
        open("scale_max", 0.0, 1e6),
        flag("bandwidth_switch"),
    ];
    const EHSTCP: &[Param] = &[
        real("n_star", 0.0, 1e9),
        real("safety_rtts", 0.0, 1e6),
        real("ertt_gain", 1e-6, 1.0),
    ];
    const TCPGT: &[Param] = &[
        open("rtt_base_ms", 0.0, 1e6),
        real("threshold", -0.5, 0.0),
        real("rtt_min_epochs", 1.0, 1000.0),
        flag("slow_start"),
        real("max_increase", 0.001, 1e9),
    ];
    const HIGHSPEED: &[Param] = &[
        real("low_window", 1.0, 1e9),
        real("high_window", 1.0, 1e12),
        open("high_decrease", 0.0, 0.5),
    ];
    const SCALABLE: &[Param] = &[
        open("a", 0.0, 1.0),
        open("b", 0.0, 1.0),
        real("low_window", 0.0, 1e9),
    ];
    const BIC: &[Param] = &[
        open("beta", 0.0, 1.0),
        open("s_max", 0.0, 1e9),
        open("s_min", 0.0, 1e9),
        real("low_window", 0.0, 1e9),
        flag("fast_convergence"),
    ];
    const CUBIC: &[Param] = &[
        open("c", 0.0, 1e6),
        open("beta", 0.0, 1.0),
        flag("fast_convergence"),
        flag("reno_friendly"),
    ];
    const VEGAS: &[Param] = &[
        real("alpha", 0.0, 1e9),
        real("beta", 0.0, 1e9),
        real("gamma", 0.0, 1e9),
    ];
    const FAST: &[Param] = &[real("alpha", 0.0, 1e9), real("gamma", 1e-6, 1.0)];
    match cc {
        "ltcp" => LTCP,
        "htcp" => HTCP,
        "ehstcp" => EHSTCP,
        "tcpgt" => TCPGT,
        "highspeed" => HIGHSPEED,
        "scalable" => SCALABLE,
        "bic" => BIC,
        "cubic" => CUBIC,
        "vegas" => VEGAS,
        "fast" => FAST,
        _ => &[],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ccs_are_the_registry_and_plt() {
        let mut all = longfat_cc::ALGORITHMS.to_vec();
        all.push("plt");
        assert_eq!(CCS, &all[..]);
    }

    /// The keys of table `t` present in `v`, recursively, as
    /// "Struct.field".
    fn walk(v: &serde_json::Value, t: Table, seen: &mut std::collections::BTreeSet<String>) {
        let serde_json::Value::Object(m) = v else { return };
        for (k, x) in m {
            let Some(f) = t.field(k) else { continue };
            seen.insert(format!("{}.{}", t.struct_name(), f.name));
            match (f.kind, x) {
                (Kind::Table(c), _) => walk(x, c, seen),
                (Kind::Tables(c), serde_json::Value::Array(a)) => a.iter().for_each(|e| walk(e, c, seen)),
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
            .flat_map(|t| t.fields().iter().map(move |f| format!("{}.{}", t.struct_name(), f.name)))
            .filter(|k| !seen.contains(k))
            .collect();
        assert!(missing.is_empty(), "declared fields the fuzzer never generates: {missing:?}");
    }
}
