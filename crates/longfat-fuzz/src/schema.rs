//! The scenario schema as the fuzzer sees it: every table of
//! `longfat_sim::scenario` and the kind of value each field holds. Keep in
//! step with `crates/longfat-sim/src/scenario.rs` (the `schema_matches_serde`
//! test below fails when a field is added or renamed there).

/// What a field holds, for choosing valid and interesting values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A duration string: "70ms".
    Duration,
    /// A rate string: "1Gbps".
    Rate,
    /// A size string: "6000pkt", "1.5MB", "0.2bdp", "unlimited".
    Size,
    /// A JSON number read as f64.
    Float,
    /// A JSON number read as u32.
    U32,
    /// A JSON number read as u64.
    U64,
    Bool,
    /// Free text (names).
    Text,
    /// One of a fixed set of words.
    Word(&'static [&'static str]),
    /// An array of size strings.
    SizeList,
    /// A table of named f64 parameters.
    Params,
    /// A nested table.
    Table(Table),
    /// An array of tables.
    Tables(Table),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Table {
    Root,
    Network,
    Link,
    Access,
    Flow,
    Tcp,
    Udp,
    Short,
    Web,
    Plt,
    Run,
}

pub const TOPOLOGIES: &[&str] = &["dumbbell", "parking_lot"];
pub const DISCIPLINES: &[&str] = &["droptail", "priority"];
pub const PATTERNS: &[&str] = &["cbr", "onoff"];
pub const PROFILES: &[&str] = longfat_sim::tcp::profile::PROFILES;
/// `tcp.host` (issue 28 item 10).
pub const HOSTS: &[&str] = &["tuned", "default"];
pub const DISTRIBUTIONS: &[&str] = &["exponential", "pareto"];
/// `cc` values: the controllers, then PLT (the catalogue's names).
pub const CCS: &[&str] = longfat_cc::NAMES;
pub const ACK_CLASSES: &[&str] = &["low", "high"];
pub const BUFFERS: &[&str] = &["per_class", "shared"];

/// (field, kind, required)
pub type Field = (&'static str, Kind, bool);

pub fn fields(t: Table) -> &'static [Field] {
    use self::Table as T;
    use Kind::*;
    match t {
        T::Root => &[
            ("name", Text, false),
            ("description", Text, false),
            ("network", Table(self::Table::Network), true),
            ("flows", Tables(self::Table::Flow), false),
            ("udp", Tables(self::Table::Udp), false),
            ("short_flows", Tables(self::Table::Short), false),
            ("web", Tables(self::Table::Web), false),
            ("run", Table(self::Table::Run), true),
        ],
        T::Network => &[
            ("topology", Word(TOPOLOGIES), true),
            ("hops", U32, false),
            ("bdp_rtt", Duration, false),
            ("bottleneck", Table(self::Table::Link), true),
            ("access", Table(self::Table::Access), false),
        ],
        T::Link => &[
            ("rate", Rate, true),
            ("delay", Duration, true),
            ("queue", Size, true),
            ("discipline", Word(DISCIPLINES), false),
            ("classes", U32, false),
            ("class_queues", SizeList, false),
            ("buffer", Word(BUFFERS), false),
            ("loss", Float, false),
            ("reverse_loss", Float, false),
        ],
        T::Access => &[
            ("rate", Rate, false),
            ("delay", Duration, false),
            ("queue", Size, false),
        ],
        T::Flow => &[
            ("name", Text, false),
            ("cc", Word(CCS), true),
            ("count", U32, false),
            ("start", Duration, false),
            ("start_spacing", Duration, false),
            ("stop", Duration, false),
            ("size", Size, false),
            ("from", U32, false),
            ("to", U32, false),
            ("access_delay", Duration, false),
            ("start_jitter", Duration, false),
            ("access_delay_jitter", Duration, false),
            ("params", Params, false),
            ("tcp", Table(self::Table::Tcp), false),
            ("plt", Table(self::Table::Plt), false),
        ],
        T::Tcp => &[
            ("packet_size", Size, false),
            ("header_size", Size, false),
            ("ack_size", Size, false),
            ("delayed_ack", Bool, false),
            ("delayed_ack_timeout", Duration, false),
            ("rwnd", Size, false),
            ("min_rto", Duration, false),
            ("initial_rto", Duration, false),
            ("max_rto", Duration, false),
            ("initial_cwnd", Float, false),
            ("initial_ssthresh", Float, false),
            ("sender_clock_offset", Duration, false),
            ("receiver_clock_offset", Duration, false),
            ("priority_class", U32, false),
            ("profile", Word(PROFILES), false),
            ("max_burst", U32, false),
            ("host", Word(HOSTS), false),
            ("timestamps", Bool, false),
            ("gro_segments", U32, false),
        ],
        T::Udp => &[
            ("name", Text, false),
            ("pattern", Word(PATTERNS), true),
            ("rate", Rate, true),
            ("count", U32, false),
            ("packet_size", Size, false),
            ("start", Duration, false),
            ("stop", Duration, false),
            ("from", U32, false),
            ("to", U32, false),
            ("access_delay", Duration, false),
            ("on_mean", Duration, false),
            ("off_mean", Duration, false),
            ("distribution", Word(DISTRIBUTIONS), false),
            ("shape", Float, false),
            ("priority_class", U32, false),
            ("start_jitter", Duration, false),
        ],
        T::Short => &[
            ("name", Text, false),
            ("cc", Word(CCS), true),
            ("arrival_rate", Float, true),
            ("size_mean", Size, true),
            ("size_shape", Float, false),
            ("start", Duration, false),
            ("stop", Duration, false),
            ("from", U32, false),
            ("to", U32, false),
            ("hosts", U32, false),
            ("access_delay", Duration, false),
            ("access_delay_jitter", Duration, false),
            ("params", Params, false),
            ("tcp", Table(self::Table::Tcp), false),
            ("plt", Table(self::Table::Plt), false),
        ],
        T::Web => &[
            ("name", Text, false),
            ("cc", Word(CCS), true),
            ("sessions", U32, true),
            ("start", Duration, false),
            ("session_spread", Duration, false),
            ("stop", Duration, false),
            ("pages_per_session", U32, true),
            ("inter_page", Duration, true),
            ("objects_per_page", Float, false),
            ("inter_object", Duration, false),
            ("object_size_mean", Size, true),
            ("object_size_shape", Float, false),
            ("from", U32, false),
            ("to", U32, false),
            ("access_delay", Duration, false),
            ("access_delay_jitter", Duration, false),
            ("params", Params, false),
            ("tcp", Table(self::Table::Tcp), false),
            ("plt", Table(self::Table::Plt), false),
        ],
        T::Plt => &[
            ("hcm", Word(longfat_cc::ALGORITHMS), false),
            ("alpha", Float, false),
            ("beta", Float, false),
            ("gamma", Float, false),
            ("mu", Float, false),
            ("ema_weight", Float, false),
            ("epoch", Duration, false),
            ("lcm_initial_window", Size, false),
            ("lcm_ack_every", U32, false),
            ("lcm_ack_class", Word(ACK_CLASSES), false),
            ("receive_buffer", Size, false),
            ("lcm_resend", Float, false),
        ],
        T::Run => &[
            ("duration", Duration, true),
            ("seed", U64, false),
            ("measure_from", Duration, false),
            ("sample_interval", Duration, false),
        ],
    }
}

/// The kind of a field found by name anywhere in a scenario (for mutating
/// scenario files, where the enclosing table is known only by its key).
pub fn kind_of_key(table: Option<Table>, key: &str) -> Option<Kind> {
    if let Some(t) = table {
        if let Some(&(_, k, _)) = fields(t).iter().find(|(n, _, _)| *n == key) {
            return Some(k);
        }
    }
    // Fall back to any table that has the key.
    for t in ALL_TABLES {
        if let Some(&(_, k, _)) = fields(*t).iter().find(|(n, _, _)| *n == key) {
            return Some(k);
        }
    }
    None
}

pub const ALL_TABLES: &[Table] = &[
    Table::Root,
    Table::Network,
    Table::Link,
    Table::Access,
    Table::Flow,
    Table::Tcp,
    Table::Udp,
    Table::Short,
    Table::Web,
    Table::Plt,
    Table::Run,
];

/// The table a key of `parent` opens (e.g. "bottleneck" in Network -> Link).
pub fn child_table(parent: Table, key: &str) -> Option<Table> {
    fields(parent)
        .iter()
        .find(|(n, _, _)| *n == key)
        .and_then(|(_, k, _)| match k {
            Kind::Table(t) | Kind::Tables(t) => Some(*t),
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

    /// Every field the schema lists is known to serde (an unknown one would
    /// be refused by `deny_unknown_fields`), per table.
    #[test]
    fn schema_fields_are_known_to_serde() {
        for t in ALL_TABLES {
            for (name, _, _) in fields(*t) {
                let mut doc = serde_json::json!({
                    "network": {"topology": "dumbbell", "bottleneck": {"rate": "1Gbps", "delay": "1ms", "queue": "10pkt"}},
                    "flows": [{"cc": "reno"}],
                    "udp": [{"pattern": "cbr", "rate": "1Mbps"}],
                    "short_flows": [{"cc": "reno", "arrival_rate": 1.0, "size_mean": "1pkt"}],
                    "web": [{"cc": "reno", "sessions": 1, "pages_per_session": 1, "inter_page": "1s", "object_size_mean": "1pkt"}],
                    "run": {"duration": "1s"},
                });
                let target = match t {
                    Table::Root => &mut doc,
                    Table::Network => &mut doc["network"],
                    Table::Link => &mut doc["network"]["bottleneck"],
                    Table::Access => {
                        doc["network"]["access"] = serde_json::json!({});
                        &mut doc["network"]["access"]
                    }
                    Table::Flow => &mut doc["flows"][0],
                    Table::Tcp => {
                        doc["flows"][0]["tcp"] = serde_json::json!({});
                        &mut doc["flows"][0]["tcp"]
                    }
                    Table::Udp => &mut doc["udp"][0],
                    Table::Short => &mut doc["short_flows"][0],
                    Table::Web => &mut doc["web"][0],
                    Table::Plt => {
                        doc["flows"][0]["plt"] = serde_json::json!({});
                        &mut doc["flows"][0]["plt"]
                    }
                    Table::Run => &mut doc["run"],
                };
                if target.get(*name).is_none() {
                    // A wrong-typed value: the error must then name the field
                    // itself, not "unknown field".
                    target[*name] = serde_json::json!([[[]]]);
                    let e = longfat_sim::Scenario::from_json(&doc.to_string()).unwrap_err();
                    assert!(!e.message.contains("unknown field"), "{t:?}.{name}: {e}");
                }
            }
        }
    }
}
