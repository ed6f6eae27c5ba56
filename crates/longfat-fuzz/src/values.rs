//! Random choices and the "interesting" values the generators draw from.

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde_json::{json, Value};

use crate::schema::Kind;

/// A seeded random source with the helpers the generators need.
pub struct G {
    pub rng: Xoshiro256PlusPlus,
    /// Raw JSON/TOML tokens that a serde `Value` cannot hold (1e400, nan),
    /// spliced into the text after serialization (see [`G::raw`]).
    pub raw: Vec<String>,
}

/// SplitMix64 finalizer: well-mixed seeds for neighbouring indices.
pub fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl G {
    pub fn new(seed: u64, index: u64) -> Self {
        Self {
            rng: Xoshiro256PlusPlus::seed_from_u64(mix(seed ^ mix(index))),
            raw: vec![],
        }
    }
    pub fn u64(&mut self) -> u64 {
        self.rng.next_u64()
    }
    /// Uniform in 0..n (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.rng.next_u64()) * u128::from(n)) >> 64) as u64
    }
    pub fn range(&mut self, lo: u64, hi_incl: u64) -> u64 {
        lo + self.below(hi_incl - lo + 1)
    }
    pub fn unit(&mut self) -> f64 {
        (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }
    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len() as u64) as usize]
    }
    /// Picks by weight.
    pub fn weighted<'a, T>(&mut self, xs: &'a [(u32, T)]) -> &'a T {
        let total: u64 = xs.iter().map(|(w, _)| u64::from(*w)).sum();
        let mut r = self.below(total);
        for (w, x) in xs {
            if r < u64::from(*w) {
                return x;
            }
            r -= u64::from(*w);
        }
        &xs[xs.len() - 1].1
    }
    /// Log-uniform in [lo, hi].
    pub fn log_uniform(&mut self, lo: f64, hi: f64) -> f64 {
        (lo.ln() + self.unit() * (hi.ln() - lo.ln())).exp()
    }
    /// A placeholder for a raw token (`1e400`, `nan`, `-0`) that serde
    /// values cannot hold; [`splice_raw`] puts the token in the text.
    pub fn raw(&mut self, token: &str) -> Value {
        self.raw.push(token.to_string());
        Value::String(format!("@@RAW{}@@", self.raw.len() - 1))
    }
}

/// Replaces the placeholders made by [`G::raw`] in serialized text.
pub fn splice_raw(text: &str, raw: &[String]) -> String {
    let mut out = text.to_string();
    for (i, tok) in raw.iter().enumerate() {
        let key = format!("@@RAW{i}@@");
        out = out
            .replace(&format!("\"{key}\""), tok)
            .replace(&format!("'{key}'"), tok);
    }
    out
}

// ---- formatting valid values ------------------------------------------------

/// A duration in a random unit that parses back to (about) `ns`.
pub fn fmt_duration(g: &mut G, ns: u64) -> String {
    let units: &[(&str, f64)] = &[
        ("ns", 1.0),
        ("us", 1e3),
        ("ms", 1e6),
        ("s", 1e9),
        ("min", 60e9),
    ];
    // Prefer units that keep the number readable.
    let fitting: Vec<&(&str, f64)> = units
        .iter()
        .filter(|(_, s)| ns == 0 || (ns as f64 / s) >= 1e-3)
        .collect();
    let (u, s) = if fitting.is_empty() {
        &units[0]
    } else {
        *g.pick(&fitting)
    };
    if *u == "ns" {
        format!("{ns}ns")
    } else {
        let v = ns as f64 / s;
        if g.chance(0.1) {
            format!("{v:e}{u}")
        } else {
            format!("{v}{u}")
        }
    }
}

pub fn fmt_rate(g: &mut G, bps: f64) -> String {
    let units: &[(&str, f64)] = &[
        ("bps", 1.0),
        ("Kbps", 1e3),
        ("kbps", 1e3),
        ("Mbps", 1e6),
        ("Gbps", 1e9),
        ("Tbps", 1e12),
    ];
    let fitting: Vec<&(&str, f64)> = units
        .iter()
        .filter(|(_, s)| bps / s >= 1e-3 && bps / s < 1e9)
        .collect();
    let (u, s) = if fitting.is_empty() {
        &units[0]
    } else {
        *g.pick(&fitting)
    };
    format!("{}{u}", bps / s)
}

pub fn fmt_bytes(g: &mut G, b: u64) -> String {
    let units: &[(&str, f64)] = &[
        ("B", 1.0),
        ("KB", 1e3),
        ("kB", 1e3),
        ("MB", 1e6),
        ("GB", 1e9),
    ];
    let (u, s) = g.pick(units);
    if *u == "B" {
        format!("{b}B")
    } else {
        format!("{}{u}", b as f64 / s)
    }
}

// ---- interesting values -----------------------------------------------------

pub const DURATIONS_EDGE: &[&str] = &[
    "0ns",
    "0s",
    "-0s",
    "1ns",
    "2ns",
    "0.5ns",
    "0.4ns",
    "0.49999999ns",
    "1e-9s",
    "1e-10s",
    "1us",
    "1µs",
    "999999999ns",
    "1s",
    "4294967295ns",
    "4294967296ns",
    "2147483647ms",
    "9007199254740992ns",
    "9007199254740993ns",
    "1e15ns",
    "1e17ns",
    "999999999999999999ns",
    "1000000000000000000ns",
    "1e18ns",
    "1e9s",
    "1000000000s",
    "16666666min",
    "16666666.66min",
    "1e18ns ",
    " 1e18ns",
    "3e8s",
    "1e8s",
    "1e7s",
    "20000s",
    "86400s",
    "1e6s",
    "31536000s",
    // The engine's limits (`scenario::limits`) and one step past them.
    "100000s",
    "100000000000001ns",
    "600s",
    "10min",
    "600000000001ns",
    "1000000s",
    "1000000000000001ns",
    "999ns",
    "1000ns",
    "999999ns",
    "1000000ns",
];
pub const DURATIONS_BAD: &[&str] = &[
    "1000000000000000001ns",
    "1.0000000000000001e18ns",
    "2e18ns",
    "1.8446744073709552e19ns",
    "18446744073709551615ns",
    "1e19ns",
    "1e300s",
    "5e-324s",
    "-1s",
    "-1e-9s",
    "NaNs",
    "nans",
    "infs",
    "inf",
    "-infs",
    "1e400s",
    "",
    " ",
    "70",
    "ms",
    "70 ms",
    "70MS",
    "70msec",
    "1,5s",
    "0x10ns",
    "+5s",
    "1e",
    "e5s",
    "..s",
    "1e18ms",
    "1e16min",
    "1s1s",
    "one second",
    "70ms\u{0}",
    "７０ms",
    "1_000ns",
];
pub const RATES_EDGE: &[&str] = &[
    "1bps",
    "0.5bps",
    "1.4bps",
    "8bps",
    "100bps",
    "1Kbps",
    "1kbps",
    "64kbps",
    "1Mbps",
    "10Mbps",
    "100Mbps",
    "622Mbps",
    "1Gbps",
    "2.5Gbps",
    "10Gbps",
    "40Gbps",
    "100Gbps",
    "1Tbps",
    "10Tbps",
    "100Tbps",
    "1000Tbps",
    "1e15bps",
    "999999999999999bps",
    "1GBPS",
    "1gbps",
    "1 Gbps",
    "999bps",
    "1000bps",
    "10000000000000bps",
    "10000000000001bps",
];
pub const RATES_BAD: &[&str] = &[
    "0.4bps",
    "0bps",
    "-1Gbps",
    "1.0000001e15bps",
    "1001Tbps",
    "18446744073709551615bps",
    "1e300bps",
    "NaNbps",
    "infbps",
    "1Gb",
    "1Gbit",
    "1G",
    "",
    "fast",
    "1e400Gbps",
    "5e-324bps",
    "1Pbps",
];
pub const SIZES_EDGE: &[&str] = &[
    "1pkt",
    "2pkt",
    "3pkt",
    "10pkt",
    "100pkt",
    "65535pkt",
    "65536pkt",
    "4294967295pkt",
    "4294967296pkt",
    "1e9pkt",
    "1e15pkt",
    "1e18pkt",
    "9007199254740993pkt",
    "18446744073709551615pkt",
    "1e19pkt",
    "1e20pkt",
    "1e300pkt",
    "1pkts",
    "1packets",
    "1B",
    "19B",
    "20B",
    "40B",
    "41B",
    "63B",
    "64B",
    "65B",
    "1000B",
    "1040B",
    "1500B",
    "9000B",
    "65535B",
    "65536B",
    "1KB",
    "64KB",
    "1kB",
    "1.5MB",
    "1GB",
    "1e15B",
    "1000000GB",
    "0.2bdp",
    "1bdp",
    "1BDP",
    "0.001bdp",
    "1e-9bdp",
    "1e-300bdp",
    "5e-324bdp",
    "1e6bdp",
    "1e18bdp",
    "1e300bdp",
    "unlimited",
    "1000000000pkt",
    "1000000001pkt",
    "1000000000000B",
    "1000000000001B",
    "1000bdp",
    "1000.0001bdp",
    "1073725440B",
    "1073725441B",
    "1000000000000000B",
    "1000000000000001B",
];
pub const SIZES_BAD: &[&str] = &[
    "0pkt",
    "0B",
    "0bdp",
    "-0.1bdp",
    "-1pkt",
    "0.5pkt",
    "1.5pkt",
    "1e15.5B",
    "1e16B",
    "1000001GB",
    "NaNbdp",
    "nanpkt",
    "infpkt",
    "infbdp",
    "Unlimited",
    "unlimited ",
    "1kb",
    "1Mb",
    "1",
    "pkt",
    "",
    "1e400pkt",
];
pub const FLOATS: &[f64] = &[
    0.0,
    -0.0,
    5e-324,
    1e-300,
    1e-9,
    1e-6,
    0.001,
    0.01,
    0.1,
    0.5,
    0.9,
    0.999999999,
    1.0,
    1.0000001,
    1.2,
    1.5,
    2.0,
    10.0,
    100.0,
    1e4,
    1e6,
    1e6 + 1.0,
    1e9,
    1e9 + 1.0,
    4294967295.0,
    4294967296.0,
    9007199254740992.0,
    9007199254740994.0,
    1e12,
    1e15,
    1e18,
    1.8446744073709552e19,
    1e300,
    f64::MAX,
    -1.0,
    -1e-300,
    -1e300,
    f64::MIN,
    999999.0,
    1000001.0,
];
pub const INTS: &[i128] = &[0, 1, 2, 3, 7, 8, 9, 32, 33, 63, 64, 65, 100, 255, 256, -1];
/// Big values, drawn less often: counts in the thousands make `build` slow
/// (one finding), and a campaign should not spend its time on them.
pub const INTS_BIG: &[i128] = &[
    1000,
    9999,
    10000,
    10001,
    65535,
    65536,
    99999,
    100000,
    100001,
    1_000_000,
    1_000_001,
    2147483647,
    2147483648,
    4294967295,
    4294967296,
    9007199254740993,
    18446744073709551615,
    18446744073709551616,
    -2147483648,
];
pub const TEXTS: &[&str] = &[
    "", "a", "flow", "a.b", "x[0]", "#1", "流", "\u{0}", "\n", "reno", "udp0", " ", "../x", "a/b",
    "CON",
];
pub const ALGO_BAD: &[&str] = &[
    "", "RENO", "Reno", "cubicc", " reno", "reno ", "udp", "bbr", "new reno", "\u{0}",
];

/// A value of the wrong JSON type (or a raw token serde cannot represent).
pub fn wrong_type(g: &mut G) -> Value {
    match g.below(16) {
        0 => Value::Null,
        1 => json!(true),
        2 => json!(false),
        3 => json!(""),
        4 => json!("x"),
        5 => json!(1),
        6 => json!(1.5),
        7 => json!([]),
        8 => json!([1]),
        9 => json!({}),
        10 => json!({"x": 1}),
        11 => g.raw("1e400"),
        12 => g.raw("-0"),
        13 => json!(-1),
        14 => json!("x".repeat(g.range(100, 20000) as usize)),
        _ => json!([["nested", [[{}]]]]),
    }
}

fn int_value(g: &mut G, v: i128) -> Value {
    if let Ok(u) = u64::try_from(v) {
        json!(u)
    } else if let Ok(i) = i64::try_from(v) {
        json!(i)
    } else {
        g.raw(&v.to_string())
    }
}

/// An interesting value for a field of kind `k`: mostly well-formed
/// values at and past the boundaries, sometimes malformed ones, sometimes a
/// wrong type.
pub fn interesting(g: &mut G, k: Kind) -> Value {
    if g.chance(0.12) {
        return wrong_type(g);
    }
    match k {
        Kind::Duration => {
            if g.chance(0.7) {
                json!(*g.pick(DURATIONS_EDGE))
            } else if g.chance(0.8) {
                json!(*g.pick(DURATIONS_BAD))
            } else {
                // A random magnitude in a random unit.
                let ns = g.log_uniform(1.0, 1e19);
                json!(fmt_duration(g, ns as u64))
            }
        }
        Kind::Rate => {
            if g.chance(0.75) {
                json!(*g.pick(RATES_EDGE))
            } else {
                json!(*g.pick(RATES_BAD))
            }
        }
        Kind::Size => {
            if g.chance(0.75) {
                json!(*g.pick(SIZES_EDGE))
            } else {
                json!(*g.pick(SIZES_BAD))
            }
        }
        Kind::SizeList => {
            let n = *g.pick(&[0u64, 1, 2, 3, 8, 9, 64]);
            Value::Array((0..n).map(|_| interesting(g, Kind::Size)).collect())
        }
        Kind::NameList => {
            let n = *g.pick(&[0u64, 1, 2, 3]);
            Value::Array((0..n).map(|_| interesting(g, Kind::Text)).collect())
        }
        Kind::Float => {
            if g.chance(0.1) {
                let tok = *g.pick(&[
                    "1e400",
                    "-1e400",
                    "-0",
                    "1e-400",
                    "0.0000000000000000000000000001",
                ]);
                g.raw(tok)
            } else if g.chance(0.15) {
                json!(*g.pick(&["NaN", "inf", "-inf", "nan", "1.0"]))
            } else {
                json!(*g.pick(FLOATS))
            }
        }
        Kind::U32 | Kind::U64 => {
            if g.chance(0.1) {
                json!(*g.pick(&[0.5, 1.0, 1e3, -0.0]))
            } else {
                let v = if g.chance(0.15) {
                    *g.pick(INTS_BIG)
                } else {
                    *g.pick(INTS)
                };
                int_value(g, v)
            }
        }
        Kind::Bool => g
            .pick(&[json!(true), json!(false), json!(0), json!(1), json!("true")])
            .clone(),
        Kind::Text => match g.below(8) {
            0 => json!("n".repeat(*g.pick(&[199usize, 200, 201, 100_000]))),
            _ => json!(*g.pick(TEXTS)),
        },
        Kind::Word(words) => {
            if g.chance(0.5) {
                json!(*g.pick(words))
            } else if words.contains(&"reno") {
                json!(*g.pick(ALGO_BAD))
            } else {
                json!(*g.pick(&[
                    "",
                    "ring",
                    "Dumbbell",
                    "parking-lot",
                    "red",
                    "fifo",
                    "poisson",
                    "uniform",
                    "PARETO",
                    "cbr "
                ]))
            }
        }
        Kind::Cc => interesting(g, Kind::Word(crate::schema::CCS)),
        Kind::Params => {
            let mut m = serde_json::Map::new();
            // Every declared parameter name (the catalogue's), an unknown one, an empty one.
            let names: Vec<&str> = longfat_cc::CATALOGUE
                .iter()
                .flat_map(|a| a.params.iter().map(|p| p.name))
                .chain(["unknown", ""])
                .collect();
            for _ in 0..g.range(0, 3) {
                let k = (*g.pick(&names)).to_string();
                let v = interesting(g, Kind::Float);
                m.insert(k, v);
            }
            Value::Object(m)
        }
        Kind::Table(_) | Kind::Tables(_) => wrong_type(g),
    }
}
