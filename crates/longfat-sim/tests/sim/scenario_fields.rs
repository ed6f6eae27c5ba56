//! The field catalogue (`longfat_sim::scenario::fields`) is the one
//! declaration of every scenario field: these tests tie it to serde's
//! structs, to `docs/scenarios.md` and to the checks that use its ranges.

use std::path::PathBuf;

use longfat_cc::plt::LcmConfig;
use longfat_sim::scenario::fields::{self, markdown_table, Range, Table, TABLES};
use longfat_sim::scenario::{
    AccessCfg, AqmCfg, FlowSpec, LinkCfg, Network, PltCfg, Run, Scenario, ShortFlowSpec, TcpCfg,
    UdpSpec, WebSpec,
};
use serde::de::{self, DeserializeOwned, Visitor};

/// A deserializer that only records the field list a derived
/// `Deserialize` passes to `deserialize_struct`: serde's own list of a
/// struct's fields.
struct FieldList<'a>(&'a mut Option<&'static [&'static str]>);

impl<'de> de::Deserializer<'de> for FieldList<'_> {
    type Error = de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom("not a struct"))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Self::Error> {
        *self.0 = Some(fields);
        Err(de::Error::custom("recorded"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
    }
}

fn serde_fields<T: DeserializeOwned>() -> &'static [&'static str] {
    let mut list = None;
    let _ = T::deserialize(FieldList(&mut list));
    list.expect("a struct")
}

fn serde_fields_of(t: Table) -> &'static [&'static str] {
    match t {
        Table::Root => serde_fields::<Scenario>(),
        Table::Network => serde_fields::<Network>(),
        Table::Link => serde_fields::<LinkCfg>(),
        Table::Aqm => serde_fields::<AqmCfg>(),
        Table::Access => serde_fields::<AccessCfg>(),
        Table::Flow => serde_fields::<FlowSpec>(),
        Table::Tcp => serde_fields::<TcpCfg>(),
        Table::Udp => serde_fields::<UdpSpec>(),
        Table::Short => serde_fields::<ShortFlowSpec>(),
        Table::Web => serde_fields::<WebSpec>(),
        Table::Plt => serde_fields::<PltCfg>(),
        Table::Run => serde_fields::<Run>(),
    }
}

/// Every serde field is declared, every declaration is a serde field, in
/// the same order, table by table.
#[test]
fn declarations_are_the_serde_fields() {
    for &t in TABLES {
        let declared: Vec<&str> = t.fields().iter().map(|f| f.name).collect();
        assert_eq!(declared, serde_fields_of(t), "{t:?} ({})", t.struct_name());
    }
}

/// The smallest valid scenario, with one entry of each kind.
fn minimal() -> serde_json::Value {
    serde_json::json!({
        "network": {"topology": "dumbbell", "bottleneck": {"rate": "1Gbps", "delay": "1ms", "queue": "10pkt", "aqm": {}}, "access": {}},
        "flows": [{"cc": "reno", "tcp": {}, "plt": {}}],
        "udp": [{"pattern": "cbr", "rate": "1Mbps"}],
        "short_flows": [{"cc": "reno", "arrival_rate": 1.0, "size_mean": "1pkt"}],
        "web": [{"cc": "reno", "sessions": 1, "pages_per_session": 1, "inter_page": "1s", "object_size_mean": "1pkt"}],
        "run": {"duration": "1s"},
    })
}

fn table_in(doc: &mut serde_json::Value, t: Table) -> &mut serde_json::Value {
    match t {
        Table::Root => doc,
        Table::Network => &mut doc["network"],
        Table::Link => &mut doc["network"]["bottleneck"],
        Table::Aqm => &mut doc["network"]["bottleneck"]["aqm"],
        Table::Access => &mut doc["network"]["access"],
        Table::Flow => &mut doc["flows"][0],
        Table::Tcp => &mut doc["flows"][0]["tcp"],
        Table::Udp => &mut doc["udp"][0],
        Table::Short => &mut doc["short_flows"][0],
        Table::Web => &mut doc["web"][0],
        Table::Plt => &mut doc["flows"][0]["plt"],
        Table::Run => &mut doc["run"],
    }
}

/// `required` is what serde requires: leaving out a required field is
/// refused as missing, naming it; an optional one may be left out.
#[test]
fn required_is_what_serde_requires() {
    assert!(Scenario::from_json(&minimal().to_string()).is_ok());
    for &t in TABLES {
        for f in t.fields() {
            let mut doc = minimal();
            let had = table_in(&mut doc, t)
                .as_object_mut()
                .unwrap()
                .remove(f.name)
                .is_some();
            let result = Scenario::from_json(&doc.to_string());
            if f.required {
                assert!(
                    had,
                    "{t:?}.{}: the minimal scenario lacks a required field",
                    f.name
                );
                let e = result.expect_err(f.name);
                assert!(
                    e.message.contains(&format!("missing field `{}`", f.name)),
                    "{t:?}.{}: {e}",
                    f.name
                );
            } else {
                assert!(
                    result.is_ok(),
                    "{t:?}.{} is declared optional: {:?}",
                    f.name,
                    result.err()
                );
            }
        }
    }
}

fn docs_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/scenarios.md")
}

/// `docs/scenarios.md` with every generated table replaced by what the
/// catalogue generates now. A table sits between `<!-- fields STRUCT -->`
/// and `<!-- /fields -->`.
fn regenerated(docs: &str) -> String {
    let mut out = docs.to_string();
    for &t in TABLES {
        let start = format!("<!-- fields {} -->\n", t.struct_name());
        let Some(a) = out.find(&start) else {
            panic!("docs/scenarios.md has no {start:?} marker for {t:?}");
        };
        let a = a + start.len();
        let b = a + out[a..].find("<!-- /fields -->").expect("an end marker");
        out.replace_range(a..b, &markdown_table(t));
    }
    out
}

/// The committed field tables are the generated ones. To rewrite them:
/// `LONGFAT_WRITE_DOCS=1 cargo test --release -p longfat-sim --test sim scenario_fields::`.
#[test]
fn docs_tables_are_generated() {
    let path = docs_path();
    let docs = std::fs::read_to_string(&path).unwrap();
    let want = regenerated(&docs);
    if std::env::var_os("LONGFAT_WRITE_DOCS").is_some() {
        std::fs::write(&path, &want).unwrap();
        return;
    }
    assert!(
        docs == want,
        "docs/scenarios.md's field tables differ from crates/longfat-sim/src/scenario/fields.rs; \
         rewrite them with LONGFAT_WRITE_DOCS=1 cargo test --release -p longfat-sim --test sim scenario_fields::"
    );
}

/// PLT's LCM parameters are checked by `LcmConfig::validate` in
/// longfat-cc; their declarations here say the same ranges, pinned from
/// both sides of every bound.
#[test]
fn lcm_ranges_match_validate() {
    let decls = [
        fields::ALPHA,
        fields::BETA,
        fields::GAMMA,
        fields::MU,
        fields::EMA_WEIGHT,
    ];
    for decl in decls {
        let Range::Real { lo, hi, .. } = decl.range else {
            panic!("{}", decl.name)
        };
        for v in [lo, hi, lo - 1e-9, hi + 1e-9, (lo + hi) / 2.0] {
            let mut c = LcmConfig::default();
            match decl.name {
                "alpha" => c.alpha = v,
                "beta" => c.beta = v,
                "gamma" => c.gamma = v,
                "mu" => c.mu = v,
                _ => c.ema_weight = v,
            }
            assert_eq!(
                c.validate().is_ok(),
                decl.range.contains_real(v),
                "plt.{} = {v}: declared {}",
                decl.name,
                decl.range
            );
        }
    }
}

/// Refusals take their bounds from the declarations: the values at each
/// end of a declared range pass, the values just outside are refused
/// naming the field and the declared range.
#[test]
fn checks_use_the_declared_ranges() {
    let build = |set: &dyn Fn(&mut serde_json::Value)| {
        let mut doc = serde_json::json!({
            "network": {"topology": "parking_lot", "hops": 2, "bottleneck": {"rate": "1Gbps", "delay": "1ms", "queue": "10pkt"}},
            "short_flows": [{"cc": "reno", "arrival_rate": 1.0, "size_mean": "1pkt"}],
            "run": {"duration": "1s"},
        });
        set(&mut doc);
        longfat_sim::build(&Scenario::from_json(&doc.to_string()).unwrap()).map(|_| ())
    };
    let (lo, hi) = fields::HOPS.range.whole();
    for (hops, ok) in [(lo, true), (hi, true), (lo - 1, false), (hi + 1, false)] {
        let r = build(&|d| d["network"]["hops"] = hops.into());
        assert_eq!(r.is_ok(), ok, "hops = {hops}: {r:?}");
        if let Err(e) = r {
            assert_eq!(e.field, "network.hops");
            assert!(e.message.contains(&format!("{lo}..={hi}")), "{e}");
        }
    }
    let range = fields::ARRIVAL_RATE.range;
    let Range::Real { lo, hi, .. } = range else {
        panic!()
    };
    for (rate, ok) in [(lo, false), (hi, true), (hi * 1.000001, false)] {
        let r = build(&|d| d["short_flows"][0]["arrival_rate"] = rate.into());
        // The highest rate passes the range but is then refused as too many
        // transfers for a 1 s run (a different message).
        let in_range = !matches!(&r, Err(e) if e.message.contains("out of range"));
        assert_eq!(in_range, ok, "arrival_rate = {rate}: {r:?}");
        match &r {
            Err(e) if !ok => assert!(e.message.contains(&format!("allowed {range}")), "{e}"),
            _ => {}
        }
    }
    let (lo, hi) = fields::PACKET_SIZE.range.whole();
    for (size, ok) in [(lo, true), (hi, true), (lo - 1, false), (hi + 1, false)] {
        let r = build(&|d| {
            d["short_flows"][0]["tcp"] = serde_json::json!({"packet_size": format!("{size}B")})
        });
        assert_eq!(r.is_ok(), ok, "packet_size = {size}: {r:?}");
    }
}
