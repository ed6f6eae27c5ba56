//! Every scenario field, declared once: its table, name, kind, unit,
//! allowed range, default and meaning. Validation takes its ranges from
//! here ([`Range`]); `docs/scenarios.md`'s field tables are generated from
//! here ([`markdown_table`], test `tests/sim/scenario_fields.rs`); both fuzzers
//! read it (the Rust one directly, `scripts/fuzz_py.py` through [`json`],
//! exported by the Python bindings). The serde structs (module `schema`)
//! hold the same names: `tests/sim/scenario_fields.rs` checks each table's
//! names against serde's own field list, both ways.

use std::fmt;

use serde_json::{json, Value};

use crate::units::NS_PER_SEC;

/// The ranges every field is checked against: values a physical network and
/// a run on one machine can have, with headroom in the engine's integers
/// (time is u64 nanoseconds: 1.8e19 ns; the largest time any run can reach
/// is below 1e15 ns).
pub mod limits {
    use crate::units::NS_PER_SEC;

    /// `run.duration`, and the start, stop and mean times inside a run.
    pub const MAX_RUN_NS: u64 = 100_000 * NS_PER_SEC;
    /// Propagation delays, delay jitter, BDP RTTs, RTO bounds, delayed-ACK timeout.
    pub const MAX_DELAY_NS: u64 = 600 * NS_PER_SEC;
    /// Host clock offsets.
    pub const MAX_CLOCK_OFFSET_NS: u64 = 1_000_000 * NS_PER_SEC;
    /// The smallest sampling interval.
    pub const MIN_SAMPLE_INTERVAL_NS: u64 = 1_000;
    /// The smallest ceiling and initial value of the RTO.
    pub const MIN_RTO_CEILING_NS: u64 = 1_000_000;
    pub const MIN_RATE_BPS: u64 = 1_000;
    pub const MAX_RATE_BPS: u64 = 10_000_000_000_000;
    pub const MAX_QUEUE_PKTS: u64 = 1_000_000_000;
    pub const MAX_QUEUE_BYTES: u64 = 1_000_000_000_000;
    pub const MAX_BDP_FRACTION: f64 = 1000.0;
    /// The largest TCP window: RFC 7323's 65535 << 14 bytes.
    pub const MAX_WINDOW_BYTES: u64 = 65_535 << 14;
    pub const MAX_INITIAL_CWND_PKTS: f64 = 1e6;
    /// `tcp.max_burst`: packets back to back.
    pub const MAX_BURST_PKTS: u64 = 1_000_000;
    /// GRO merges into one skb below `gro_max_size` bytes (default
    /// GRO_LEGACY_MAX_SIZE, 65,536: net/core/gro.c `skb_gro_receive`) ...
    pub const GRO_MAX_SIZE_BYTES: u64 = 65_536;
    /// ... and at most 64 segments (tcp_offload.c `tcp_gro_receive`'s
    /// fraglist limit, `NAPI_GRO_CB(p)->count >= 64`).
    pub const MAX_GRO_SEGMENTS: u64 = 64;
    /// A fixed-size transfer or a mean transfer size.
    pub const MAX_TRANSFER_BYTES: u64 = 1_000_000_000_000_000;
    pub const MAX_CLASSES: u32 = 8;
    pub const MAX_FLOWS: u64 = 1_000_000;
    pub const MAX_GENERATED: u64 = 300_000;
    /// A host's queue when `network.access.queue` is not given: Linux's
    /// default `txqueuelen`.
    pub const DEFAULT_HOST_QUEUE_PKTS: u64 = 1000;
    /// Longest scenario or flow name, in bytes.
    pub const MAX_NAME_BYTES: usize = 200;
}

use limits::*;

/// The tables of a scenario file, one per serde struct.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Table {
    Root,
    Network,
    Link,
    Aqm,
    Access,
    Flow,
    Tcp,
    Udp,
    Short,
    Web,
    Plt,
    Run,
}

/// Every table, in the order `docs/scenarios.md` gives them.
pub const TABLES: &[Table] = &[
    Table::Root,
    Table::Network,
    Table::Link,
    Table::Aqm,
    Table::Access,
    Table::Flow,
    Table::Tcp,
    Table::Plt,
    Table::Udp,
    Table::Short,
    Table::Web,
    Table::Run,
];

/// What a field holds.
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
    /// A controller name (`longfat algorithms`), or "plt" where the field
    /// says so.
    Cc,
    /// An array of size strings.
    SizeList,
    /// An array of flow names.
    NameList,
    /// A table of named f64 parameters.
    Params,
    /// A nested table.
    Table(Table),
    /// An array of tables.
    Tables(Table),
}

/// The values a field allows. Bounds are inclusive unless `*_open`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Range {
    /// Any value of its kind (text, words, booleans, tables).
    Any,
    DurationNs {
        lo: u64,
        hi: u64,
    },
    RateBps {
        lo: u64,
        hi: u64,
    },
    Bytes {
        lo: u64,
        hi: u64,
    },
    Whole {
        lo: u64,
        hi: u64,
    },
    Real {
        lo: f64,
        hi: f64,
        lo_open: bool,
        hi_open: bool,
    },
    /// Bounds that depend on other fields or on the unit given, in words;
    /// the check is in the validation code that names this field.
    Described(&'static str),
}

impl Range {
    /// (lo, hi) of a `DurationNs` range.
    pub const fn duration_ns(self) -> (u64, u64) {
        match self {
            Range::DurationNs { lo, hi } => (lo, hi),
            _ => panic!("not a duration range"),
        }
    }

    /// (lo, hi) of a `Whole`, `Bytes` or `RateBps` range.
    pub const fn whole(self) -> (u64, u64) {
        match self {
            Range::Whole { lo, hi } | Range::Bytes { lo, hi } | Range::RateBps { lo, hi } => {
                (lo, hi)
            }
            _ => panic!("not an integer range"),
        }
    }

    /// (lo, hi) of a `Real` range.
    pub const fn real(self) -> (f64, f64) {
        match self {
            Range::Real { lo, hi, .. } => (lo, hi),
            _ => panic!("not a real range"),
        }
    }

    /// Whether a finite `v` lies in a `Real` range (NaN and infinities
    /// never do).
    pub fn contains_real(self, v: f64) -> bool {
        match self {
            Range::Real {
                lo,
                hi,
                lo_open,
                hi_open,
            } => {
                v.is_finite()
                    && if lo_open { v > lo } else { v >= lo }
                    && if hi_open { v < hi } else { v <= hi }
            }
            _ => panic!("not a real range"),
        }
    }
}

/// `1500000000ns` -> `"1.5s"`: a duration as a user would write it.
pub fn fmt_ns(ns: u64) -> String {
    let (v, unit) = if ns >= 60 * NS_PER_SEC && ns.is_multiple_of(60 * NS_PER_SEC) {
        (ns as f64 / 60e9, "min")
    } else if ns >= NS_PER_SEC {
        (ns as f64 / 1e9, "s")
    } else if ns >= 1_000_000 {
        (ns as f64 / 1e6, "ms")
    } else if ns >= 1_000 {
        (ns as f64 / 1e3, "us")
    } else {
        (ns as f64, "ns")
    };
    format!("{v}{unit}")
}

/// `1000` -> `"1Kbps"`: a rate as a user would write it.
pub fn fmt_bps(bps: u64) -> String {
    let units = [
        (1_000_000_000_000, "Tbps"),
        (1_000_000_000, "Gbps"),
        (1_000_000, "Mbps"),
        (1_000, "Kbps"),
    ];
    match units
        .iter()
        .find(|(scale, _)| bps >= *scale && bps.is_multiple_of(*scale))
    {
        Some((scale, unit)) => format!("{}{unit}", bps / scale),
        None => format!("{bps}bps"),
    }
}

/// `1e6` for large numbers, else as Rust writes them (`0.5`, `10000`).
pub fn fmt_real(v: f64) -> String {
    if v.abs() >= 1e5 {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

impl fmt::Display for Range {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Range::Any => Ok(()),
            Range::DurationNs { lo, hi } => write!(f, "{}..={}", fmt_ns(lo), fmt_ns(hi)),
            Range::RateBps { lo, hi } => write!(f, "{}..={}", fmt_bps(lo), fmt_bps(hi)),
            Range::Bytes { lo, hi } => write!(f, "{lo}..={hi} B"),
            Range::Whole { lo, hi } => write!(f, "{lo}..={hi}"),
            Range::Real {
                lo,
                hi,
                lo_open,
                hi_open,
            } => write!(
                f,
                "{}{}, {}{}",
                if lo_open { "(" } else { "[" },
                fmt_real(lo),
                fmt_real(hi),
                if hi_open { ")" } else { "]" }
            ),
            Range::Described(text) => write!(f, "{text}"),
        }
    }
}

/// One field of one table.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Field {
    pub name: &'static str,
    pub kind: Kind,
    pub required: bool,
    /// The unit a number or string is in ("" for words, text and tables).
    pub unit: &'static str,
    pub range: Range,
    /// The value an absent field takes, in words ("" when required).
    pub default: &'static str,
    /// One line: what the field does.
    pub meaning: &'static str,
}

const fn opt(
    name: &'static str,
    kind: Kind,
    unit: &'static str,
    range: Range,
    default: &'static str,
    meaning: &'static str,
) -> Field {
    Field {
        name,
        kind,
        required: false,
        unit,
        range,
        default,
        meaning,
    }
}

const fn required(
    name: &'static str,
    kind: Kind,
    unit: &'static str,
    range: Range,
    meaning: &'static str,
) -> Field {
    Field {
        name,
        kind,
        required: true,
        unit,
        range,
        default: "",
        meaning,
    }
}

const fn real(lo: f64, hi: f64, lo_open: bool, hi_open: bool) -> Range {
    Range::Real {
        lo,
        hi,
        lo_open,
        hi_open,
    }
}

pub const DELAY: Range = Range::DurationNs {
    lo: 0,
    hi: MAX_DELAY_NS,
};
pub const RUN_TIME: Range = Range::DurationNs {
    lo: 0,
    hi: MAX_RUN_NS,
};
pub const RATE: Range = Range::RateBps {
    lo: MIN_RATE_BPS,
    hi: MAX_RATE_BPS,
};
pub const PROBABILITY: Range = real(0.0, 1.0, false, true);
/// A Pareto shape with a finite mean.
pub const PARETO_SHAPE: Range = real(1.0, 100.0, true, false);
const RTO_BOUND: Range = Range::DurationNs {
    lo: MIN_RTO_CEILING_NS,
    hi: MAX_DELAY_NS,
};
const CLOCK_OFFSET: Range = Range::DurationNs {
    lo: 0,
    hi: MAX_CLOCK_OFFSET_NS,
};

// ---- the top level -------------------------------------------------------------

pub const SCENARIO_NAME: Field = opt("name", Kind::Text, "", Range::Described("a plain file name (no `/` or `\\`, no control characters, not starting with `.`), at most 200 bytes"), "file stem", "names the result directory (`results/<name>`) and plot");
pub const DESCRIPTION: Field = opt("description", Kind::Text, "", Range::Any, "", "free text");
pub const NETWORK: Field = required(
    "network",
    Kind::Table(Table::Network),
    "",
    Range::Any,
    "the topology, below",
);
pub const FLOWS: Field = opt(
    "flows",
    Kind::Tables(Table::Flow),
    "",
    Range::Any,
    "none",
    "TCP flows, below",
);
pub const UDP: Field = opt(
    "udp",
    Kind::Tables(Table::Udp),
    "",
    Range::Any,
    "none",
    "UDP sources, below",
);
pub const SHORT_FLOWS: Field = opt(
    "short_flows",
    Kind::Tables(Table::Short),
    "",
    Range::Any,
    "none",
    "Poisson arrivals of finite TCP transfers, below",
);
pub const WEB: Field = opt(
    "web",
    Kind::Tables(Table::Web),
    "",
    Range::Any,
    "none",
    "web sessions, below",
);
pub const RUN: Field = required(
    "run",
    Kind::Table(Table::Run),
    "",
    Range::Any,
    "duration, seed, measurement",
);

// ---- [network] ------------------------------------------------------------------

pub const TOPOLOGY: Field = required("topology", Kind::Word(&["dumbbell", "parking_lot"]), "", Range::Any, "`\"dumbbell\"`: routers r0 - r1 joined by one bottleneck; `\"parking_lot\"`: routers r0 - r1 - ... - rH joined by H bottlenecks in series");
pub const HOPS: Field = opt(
    "hops",
    Kind::U32,
    "bottlenecks",
    Range::Whole { lo: 2, hi: 64 },
    "1",
    "number of bottlenecks of a parking lot (a dumbbell has 1)",
);
pub const BDP_RTT: Field = opt(
    "bdp_rtt",
    Kind::Duration,
    "time",
    Range::DurationNs {
        lo: 1,
        hi: MAX_DELAY_NS,
    },
    "the largest base RTT of the TCP flows crossing that link",
    "RTT used to turn `\"...bdp\"` queue sizes into bytes",
);
pub const BOTTLENECK: Field = required(
    "bottleneck",
    Kind::Table(Table::Link),
    "",
    Range::Any,
    "every bottleneck link, both directions",
);
pub const ACCESS: Field = opt(
    "access",
    Kind::Table(Table::Access),
    "",
    Range::Any,
    "",
    "every host's access link",
);

// ---- [network.bottleneck] ------------------------------------------------------------

pub const LINK_RATE: Field = required("rate", Kind::Rate, "bit/s", RATE, "link rate");
pub const LINK_DELAY: Field = required(
    "delay",
    Kind::Duration,
    "time",
    DELAY,
    "one-way propagation delay",
);
pub const LINK_QUEUE: Field = required("queue", Kind::Size, "packets, bytes or BDP", Range::Described("1..=1e9 packets, up to 1TB, (0, 1000] bdp, or \"unlimited\""), "buffer per direction: packets waiting, not counting the one being sent (ns-2 DropTail `limit_`). `\"Npkt\"`, bytes, `\"Xbdp\"` (X x rate x RTT bytes) or `\"unlimited\"`");
pub const DISCIPLINE: Field = opt(
    "discipline",
    Kind::Word(&["droptail", "priority", "codel", "fq_codel", "red", "pie"]),
    "",
    Range::Any,
    "`\"droptail\"`",
    "`\"droptail\"` FIFO; `\"priority\"`: strict priority, class 0 first; `\"codel\"` (RFC 8289), `\"fq_codel\"` (RFC 8290), `\"red\"`, `\"pie\"` (RFC 8033): active queue management over a buffer of `queue`, set up in `aqm` below",
);
pub const AQM: Field = opt(
    "aqm",
    Kind::Table(Table::Aqm),
    "",
    Range::Any,
    "the discipline's defaults",
    "the AQM's parameters (only with an AQM `discipline`), below",
);
pub const CLASSES: Field = opt(
    "classes",
    Kind::U32,
    "classes",
    Range::Whole {
        lo: 1,
        hi: MAX_CLASSES as u64,
    },
    "2",
    "priority classes (`discipline = \"priority\"`)",
);
pub const CLASS_QUEUES: Field = opt(
    "class_queues",
    Kind::SizeList,
    "packets, bytes or BDP",
    Range::Described("`classes` entries, each as `queue`"),
    "`queue` for each",
    "one buffer size per class",
);
pub const BUFFER: Field = opt("buffer", Kind::Word(&["per_class", "shared"]), "", Range::Any, "`\"per_class\"`", "priority links: `\"per_class\"` (each class its own tail-drop buffer) or `\"shared\"` (one buffer of `queue` for all classes; an arrival to a full buffer pushes out the newest packet of the lowest class below its own, else it is dropped; not with `class_queues`)");
pub const LOSS: Field = opt("loss", Kind::Float, "probability", PROBABILITY, "0", "Bernoulli probability that a packet is corrupted on the forward wire (it uses its transmission time, then is discarded)");
pub const REVERSE_LOSS: Field = opt(
    "reverse_loss",
    Kind::Float,
    "probability",
    PROBABILITY,
    "0",
    "the same for the reverse direction (ACKs of forward flows)",
);

// ---- [network.bottleneck.aqm] --------------------------------------------------------------

pub const AQM_TARGET: Field = opt(
    "target",
    Kind::Duration,
    "time",
    Range::DurationNs {
        lo: 1_000,
        hi: 10 * NS_PER_SEC,
    },
    "`\"5ms\"` for `codel` and `fq_codel` (RFC 8289 §4.4), `\"15ms\"` for `pie` (RFC 8033 §4.2 QDELAY_REF)",
    "CoDel / FQ-CoDel: the acceptable standing queue delay (RFC 8289 §4.4), less than `interval`; PIE: the queue delay its controller steers to (QDELAY_REF, RFC 8033 §4.2; ns-3 `QueueDelayReference`)",
);
pub const AQM_INTERVAL: Field = opt(
    "interval",
    Kind::Duration,
    "time",
    Range::DurationNs {
        lo: 1_000_000,
        hi: 100 * NS_PER_SEC,
    },
    "`\"100ms\"`",
    "CoDel / FQ-CoDel: the window over which the sojourn must stay above `target` before a drop, and the control law's base (RFC 8289 §4.3)",
);
pub const AQM_ECN: Field = opt("ecn", Kind::Bool, "", Range::Any, "`true` for `fq_codel`, else `false` (Linux; ns-3 `UseEcn`)", "CE-mark ECN-capable packets instead of dropping them when the AQM signals congestion (packets that are not ECN-capable are dropped)");
pub const AQM_FLOWS: Field = opt(
    "flows",
    Kind::U32,
    "buckets",
    Range::Whole { lo: 1, hi: 65_536 },
    "1024",
    "FQ-CoDel: buckets packets are hashed into (RFC 8290 §4.1.1; Linux `flows`)",
);
pub const AQM_QUANTUM: Field = opt(
    "quantum",
    Kind::U32,
    "bytes",
    Range::Whole {
        lo: 64,
        hi: 1_048_576,
    },
    "1514",
    "FQ-CoDel: bytes a bucket may send per deficit-round-robin turn (RFC 8290 §4.2; Linux `quantum`)",
);
pub const AQM_DROP_BATCH: Field = opt(
    "drop_batch",
    Kind::U32,
    "packets",
    Range::Whole { lo: 1, hi: 65_536 },
    "64",
    "FQ-CoDel: most packets dropped from the fattest bucket when the buffer overflows (Linux `drop_batch`)",
);

// RED (discipline = "red"): ns-3 3.44 `RedQueueDisc`'s names and defaults
// (aqm/red.rs `RedParams`).
pub const AQM_MIN_TH: Field = opt(
    "min_th",
    Kind::Float,
    "packets",
    real(0.0, 1e6, false, false),
    "5",
    "RED: the average queue (packets waiting) at which early marking starts (Floyd & Jacobson §4; ns-3 `MinTh`); less than `max_th`",
);
pub const AQM_MAX_TH: Field = opt(
    "max_th",
    Kind::Float,
    "packets",
    real(0.0, 1e6, true, false),
    "15",
    "RED: the average queue at which the marking probability reaches `max_p`; above it (2 `max_th` when `gentle`) every arrival is dropped (ns-3 `MaxTh`, `UseHardDrop`)",
);
pub const AQM_MAX_P: Field = opt(
    "max_p",
    Kind::Float,
    "probability",
    real(0.0, 1.0, true, false),
    "0.02",
    "RED: the marking probability at `max_th` (ns-3 `LInterm` 50 = 1/0.02); adaptive RED's starting value",
);
pub const AQM_WEIGHT: Field = opt(
    "weight",
    Kind::Float,
    "",
    real(0.0, 1.0, true, false),
    "0.002",
    "RED: w_q, the weight of the average queue's moving average (Floyd & Jacobson §6; ns-3 `QW`)",
);
pub const AQM_GENTLE: Field = opt(
    "gentle",
    Kind::Bool,
    "",
    Range::Any,
    "`true`",
    "RED: between `max_th` and 2 `max_th` the probability rises from `max_p` to 1 instead of jumping to 1 (Floyd 2000; ns-3 `Gentle`)",
);
pub const AQM_WAIT: Field = opt(
    "wait",
    Kind::Bool,
    "",
    Range::Any,
    "`true`",
    "RED: ns-2/ns-3's `Wait`: no early mark until count p_b >= 1, then p_a = p_b / (2 - count p_b), which spaces marks uniformly between 1/p_b and 2/p_b arrivals; `false`: Floyd & Jacobson's p_a = p_b / (1 - count p_b) (§7), marks between 1 and 1/p_b arrivals apart, as Linux's `red_mark_probability`",
);
pub const AQM_ADAPTIVE: Field = opt(
    "adaptive",
    Kind::Bool,
    "",
    Range::Any,
    "`false`",
    "RED: Adaptive RED, `max_p` adapted every `ared_interval` to keep the average queue between min_th + 0.4 and + 0.6 (max_th - min_th) (Floyd, Gummadi & Shenker 2001, Fig. 5; ns-3 `AdaptMaxP`, Linux `adaptive`)",
);
pub const AQM_TARGET_DELAY: Field = opt(
    "target_delay",
    Kind::Duration,
    "time",
    Range::DurationNs {
        lo: 1_000,
        hi: 10 * NS_PER_SEC,
    },
    "unset: `min_th`, `max_th`, `weight` as given",
    "RED: Adaptive RED's automatic parameters (ARED §5, ns-3 `ARED`'s `TargetDelay`): with C the link's rate in `mean_pkt_size` packets per second, min_th = max(5, target_delay x C / 2), max_th = 3 min_th, weight = 1 - exp(-1/C); not with `min_th`, `max_th` or `weight`",
);
pub const AQM_ARED_INTERVAL: Field = opt(
    "ared_interval",
    Kind::Duration,
    "time",
    Range::DurationNs {
        lo: 1_000_000,
        hi: 100 * NS_PER_SEC,
    },
    "`\"500ms\"`",
    "RED: Adaptive RED's update period (ARED paper, ns-3 `Interval`); only with `adaptive = true`",
);
pub const AQM_MEAN_PKT_SIZE: Field = opt(
    "mean_pkt_size",
    Kind::U32,
    "bytes",
    Range::Whole { lo: 1, hi: 65_535 },
    "500 for `red` (ns-3 `MeanPktSize`), 1500 for `pie`",
    "RED: the packet size that turns the link rate into C packets per second (idle decay, `target_delay`); PIE: MEAN_PKTSIZE, no random drop while at most 2 such packets wait (RFC 8033 §4.1)",
);
// PIE (discipline = "pie"): RFC 8033's names and defaults, ns-3 3.44
// `PieQueueDisc`'s (aqm/pie.rs `PieParams`); `target` is above.
pub const AQM_T_UPDATE: Field = opt(
    "t_update",
    Kind::Duration,
    "time",
    Range::DurationNs {
        lo: 100_000,
        hi: 10 * NS_PER_SEC,
    },
    "`\"15ms\"`",
    "PIE: the period of the drop-probability update (T_UPDATE, RFC 8033 §4.2; ns-3 `Tupdate`)",
);
pub const AQM_ALPHA: Field = opt(
    "alpha",
    Kind::Float,
    "1/s",
    real(0.0, 100.0, false, false),
    "0.125",
    "PIE: the gain on the delay's distance from `target` (RFC 8033 §4.2; ns-3 `A`)",
);
pub const AQM_BETA: Field = opt(
    "beta",
    Kind::Float,
    "1/s",
    real(0.0, 100.0, false, false),
    "1.25",
    "PIE: the gain on the delay's change since the last update (RFC 8033 §4.2; ns-3 `B`)",
);
pub const AQM_MAX_BURST: Field = opt(
    "max_burst",
    Kind::Duration,
    "time",
    Range::DurationNs {
        lo: 0,
        hi: 100 * NS_PER_SEC,
    },
    "`\"150ms\"`",
    "PIE: the burst allowance, during which nothing is dropped early, restored once the queue has drained (MAX_BURST, RFC 8033 §4.4; ns-3 `MaxBurstAllowance`)",
);
pub const AQM_MARK_ECN_THRESHOLD: Field = opt(
    "mark_ecn_threshold",
    Kind::Float,
    "probability",
    real(0.0, 1.0, false, false),
    "0.1",
    "PIE: with `ecn`, ECN-capable packets are marked while the drop probability is at most this, dropped above it (RFC 8033 §5.1 mark_ecnth; ns-3 `MarkEcnThreshold`)",
);

/// The disciplines each `[network.bottleneck.aqm]` field belongs to; any
/// other discipline refuses it, naming the field.
pub const AQM_OWNERS: &[(&str, &[&str])] = &[
    ("target", &["codel", "fq_codel", "pie"]),
    ("interval", &["codel", "fq_codel"]),
    ("ecn", &["codel", "fq_codel", "red", "pie"]),
    ("flows", &["fq_codel"]),
    ("quantum", &["fq_codel"]),
    ("drop_batch", &["fq_codel"]),
    ("min_th", &["red"]),
    ("max_th", &["red"]),
    ("max_p", &["red"]),
    ("weight", &["red"]),
    ("gentle", &["red"]),
    ("wait", &["red"]),
    ("adaptive", &["red"]),
    ("target_delay", &["red"]),
    ("ared_interval", &["red"]),
    ("mean_pkt_size", &["red", "pie"]),
    ("t_update", &["pie"]),
    ("alpha", &["pie"]),
    ("beta", &["pie"]),
    ("max_burst", &["pie"]),
    ("mark_ecn_threshold", &["pie"]),
];

// ---- [network.access] -------------------------------------------------------------------

pub const ACCESS_RATE: Field = opt(
    "rate",
    Kind::Rate,
    "bit/s",
    RATE,
    "10 x bottleneck rate",
    "access rate",
);
pub const ACCESS_LINK_DELAY: Field = opt(
    "delay",
    Kind::Duration,
    "time",
    DELAY,
    "0",
    "one-way delay of each access link",
);
pub const ACCESS_QUEUE: Field = opt(
    "queue",
    Kind::Size,
    "packets or bytes",
    Range::Described("as for the bottleneck, no `bdp`"),
    "`\"1000pkt\"` (Linux's default `txqueuelen`)",
    "buffer of every host and of the routers' links to hosts",
);

// ---- what [[flows]], [[udp]], [[short_flows]] and [[web]] share ------------------------------

pub const LABEL: Field = opt("name", Kind::Text, "", Range::Described("at most 200 bytes, no control characters"), "`<cc><index>` (`udp<index>`, `short<i>`, `web<i>`)", "entry name; with `count > 1` the flows are `name.0`, `name.1`, ...; a generator's transfers are `name#k`");
pub const CC: Field = required("cc", Kind::Cc, "", Range::Described("a `longfat algorithms` name, or `\"plt\"`"), "congestion control (with `transport = \"plt\"`: the HCM's); `\"plt\"` is the alias of `transport = \"plt\"` (the HCM's controller then in `plt.hcm`)");
pub const COUNT: Field = opt(
    "count",
    Kind::U32,
    "flows",
    Range::Described(">= 1"),
    "1",
    "identical flows from this entry",
);
pub const START: Field = opt(
    "start",
    Kind::Duration,
    "time",
    Range::Described("before `run.duration`"),
    "`\"0s\"`",
    "when the application starts sending (generators: the start of the arrival window)",
);
pub const STOP: Field = opt("stop", Kind::Duration, "time", Range::Described("after `start`"), "never (generators: the end of the run)", "the application stops producing new data (outstanding data still completes); generators: nothing arrives after it");
pub const FROM: Field = opt(
    "from",
    Kind::U32,
    "router",
    Range::Described("0..=hops, not `to`"),
    "0",
    "router the flow enters by; `from > to` is reverse-direction traffic",
);
pub const TO: Field = opt(
    "to",
    Kind::U32,
    "router",
    Range::Described("0..=hops, not `from`"),
    "hops",
    "router the flow leaves by",
);
pub const ACCESS_DELAY: Field = opt(
    "access_delay",
    Kind::Duration,
    "time",
    DELAY,
    "`network.access.delay`",
    "one-way delay of the sender's access link (the receiver side uses `network.access.delay`)",
);
pub const START_JITTER: Field = opt("start_jitter", Kind::Duration, "time", Range::Described("the last start before the end of the run"), "`\"0s\"`", "each instance starts up to this much later, uniform, drawn from the seed (randomized start times)");
pub const ACCESS_DELAY_JITTER: Field = opt("access_delay_jitter", Kind::Duration, "time", DELAY, "`\"0s\"`", "each sender access link gets up to this much more one-way delay, uniform, from the seed (randomized per-flow RTTs; the RTT grows by up to twice this)");
pub const PARAMS: Field = opt(
    "params",
    Kind::Params,
    "",
    Range::Described("per algorithm (`longfat algorithms`)"),
    "none",
    "algorithm parameters, e.g. `params = { beta = 0.8 }`",
);
pub const TCP: Field = opt(
    "tcp",
    Kind::Table(Table::Tcp),
    "",
    Range::Any,
    "",
    "transport settings, below",
);
pub const TRANSPORT: Field = opt("transport", Kind::Word(&["tcp", "plt"]), "", Range::Any, "`\"tcp\"`", "`\"tcp\"`: one TCP connection whose window `cc` runs; `\"plt\"`: the priority-layered transport (PLT), whose HCM runs `cc` and whose LCM is set up in `plt` below. `cc = \"plt\"` is the older spelling of `transport = \"plt\"` with the HCM's controller in `plt.hcm`");
pub const PLT: Field = opt(
    "plt",
    Kind::Table(Table::Plt),
    "",
    Range::Any,
    "",
    "PLT's settings (only with `transport = \"plt\"` or its alias `cc = \"plt\"`), below",
);

// ---- [[flows]] --------------------------------------------------------------------------------

pub const START_SPACING: Field = opt(
    "start_spacing",
    Kind::Duration,
    "time",
    Range::Described("the last start (with `start_jitter`) before the end of the run"),
    "`\"0s\"`",
    "flow k of `count` starts at `start + k x start_spacing`",
);
pub const SIZE: Field = opt("size", Kind::Size, "bytes or packets", Range::Described("> 0, at most 1PB"), "bulk (infinite)", "fixed-size transfer (`\"10MB\"` of payload, or `\"1000pkt\"`); the summary gives its completion time");

// ---- [flows.tcp] ------------------------------------------------------------------------------

pub const PACKET_SIZE: Field = opt(
    "packet_size",
    Kind::Size,
    "bytes",
    Range::Bytes { lo: 64, hi: 65_535 },
    "`\"1500B\"`",
    "data packet size on the wire, headers included",
);
pub const HEADER_SIZE: Field = opt(
    "header_size",
    Kind::Size,
    "bytes",
    Range::Bytes { lo: 0, hi: 1024 },
    "`\"40B\"`",
    "header bytes within it (goodput counts the rest); less than `packet_size`",
);
pub const ACK_SIZE: Field = opt(
    "ack_size",
    Kind::Size,
    "bytes",
    Range::Bytes { lo: 20, hi: 65_535 },
    "`\"40B\"`",
    "ACK size",
);
pub const DELAYED_ACK: Field = opt("delayed_ack", Kind::Bool, "", Range::Any, "false (`linux`: true)", "ACK every second in-order packet or after `delayed_ack_timeout`; out-of-order data and hole fills are ACKed at once. Under `linux` Linux's receiver (docs/algorithms.md, \"Linux's receiver\"): quick-ACKs at the start and after a retransmission or an idle gap, an ACK once two segments are unacknowledged, the adaptive timeout `ato` in [`delayed_ack_timeout`, 200 ms]; `false` ACKs every packet (Linux with `ip route ... quickack 1`)");
pub const DELAYED_ACK_TIMEOUT: Field = opt(
    "delayed_ack_timeout",
    Kind::Duration,
    "time",
    Range::Described("1ns..=10min (`linux`: 1ns..=200ms)"),
    "`\"40ms\"` (`ns2`: `\"100ms\"`)",
    "the delayed-ACK timeout (`linux`: the least `ato`, TCP_ATO_MIN)",
);
pub const RWND: Field = opt(
    "rwnd",
    Kind::Size,
    "packets or bytes",
    Range::Described(
        "1 packet ..= 65535 x 2^14 bytes (RFC 7323's largest window), or `\"unlimited\"`",
    ),
    "`\"unlimited\"`: that largest window",
    "receiver window: most packets outstanding (`\"Npkt\"`, bytes or `\"unlimited\"`)",
);
pub const MIN_RTO: Field = opt("min_rto", Kind::Duration, "time", Range::Described("0..=max_rto"), "`\"200ms\"`", "floor of the RTO's variance term (RTO = SRTT + max(4 RTTVAR, min_rto), as Linux; under `ns2` the floor of the whole RTO)");
pub const INITIAL_RTO: Field = opt(
    "initial_rto",
    Kind::Duration,
    "time",
    RTO_BOUND,
    "`\"1s\"` (`ns2`: `\"3s\"`)",
    "RTO before the first RTT sample (RFC 6298)",
);
pub const MAX_RTO: Field = opt(
    "max_rto",
    Kind::Duration,
    "time",
    RTO_BOUND,
    "`\"60s\"`; `\"120s\"` under `linux` (`TCP_RTO_MAX`)",
    "ceiling of the backed-off RTO",
);
pub const INITIAL_CWND: Field = opt(
    "initial_cwnd",
    Kind::Float,
    "packets",
    real(1.0, MAX_INITIAL_CWND_PKTS, false, false),
    "2 (`linux`: 10)",
    "initial window",
);
pub const INITIAL_SSTHRESH: Field = opt(
    "initial_ssthresh",
    Kind::Float,
    "packets",
    Range::Described(">= 2"),
    "unlimited; `ns2`: the receiver window `rwnd` (ns-2 `ssthresh_ = window_`)",
    "initial slow-start threshold",
);
pub const SENDER_CLOCK_OFFSET: Field = opt(
    "sender_clock_offset",
    Kind::Duration,
    "time",
    CLOCK_OFFSET,
    "`\"0s\"`",
    "offset of the sender's clock from true time; its timestamps read `now + offset`",
);
pub const RECEIVER_CLOCK_OFFSET: Field = opt(
    "receiver_clock_offset",
    Kind::Duration,
    "time",
    CLOCK_OFFSET,
    "`\"0s\"`",
    "offset of the receiver's clock from true time",
);
pub const PRIORITY_CLASS: Field = opt(
    "priority_class",
    Kind::U32,
    "class",
    Range::Described("< `network.bottleneck.classes`"),
    "0",
    "strict-priority class of the flow's data and ACKs",
);
pub const PROFILE: Field = opt("profile", Kind::Word(crate::tcp::profile::PROFILES), "", Range::Any, "`\"rfc\"`", "the transport: `\"rfc\"` (RFC 5681/6675/6298/7661), `\"ns2\"` (ns-2.35 TCP/Sack1, as the LTCP, PLT, TCP-GT and eHSTCP papers ran it) or `\"linux\"` (Linux 6.x: IW10, PRR, RACK-TLP, undo, the kernel modules' algorithm variants); every difference is tabled in `docs/algorithms.md`");
pub const MAX_BURST: Field = opt(
    "max_burst",
    Kind::U64,
    "packets",
    Range::Whole {
        lo: 1,
        hi: MAX_BURST_PKTS,
    },
    "no limit",
    "at most this many packets back to back on one event (ns-2 `maxburst_`)",
);
pub const HOST: Field = opt("host", Kind::Word(&["tuned", "default"]), "", Range::Any, "`\"tuned\"`", "the end hosts' buffers: `\"tuned\"`: unlimited (the hosts of the papers, below); `\"default\"` (`linux` only, not with cc = `\"plt\"`, whose receiver buffers the connection in `plt.receive_buffer`): an untuned Linux host, Linux's default tcp_rmem (4096 131072 6291456) with receive-buffer autotuning (`tcp_rcv_space_adjust`: once per receiver-measured RTT the buffer grows to 2 x (2 x bytes read + 16 segments), scaled up by the growth, at most tcp_rmem[2]; the window advertised is half the buffer, tcp_adv_win_scale = 1) and tcp_wmem[2] = 4 MiB of data in flight at most (`tcp_sndbuf_expand` keeps the buffer above the window until that cap). A 1 Gbit/s x 100 ms path then carries 3 MiB per RTT, 252 Mbit/s (test `untuned_host_is_receive_window_limited`). The sender reads the window at the ACK's arrival, up to one ACK path delay early; out-of-order data is not charged to the buffer");
pub const TIMESTAMPS: Field = opt("timestamps", Kind::Bool, "", Range::Any, "`ns2`: `false`; `rfc`, `linux`: `true`", "the retransmission timer's RTT samples: `true`, every new ACK's timestamp echo; `false` under `ns2`, ns-2's one timed segment per round trip with Karn's rule, in 10 ms ticks (`timestamps_ false`, ns-2.35's default); `false` under `linux`, Linux with `tcp_timestamps = 0`: samples from the send times of the packets an ACK delivers, none from retransmitted data (Karn's rule; the backoff then stays), no Eifel undo; not with `host = \"default\"`; `rfc` always `true`; eHSTCP and TCP-GT need `true` (docs/algorithms.md, ns-2's RTT sampling)");
pub const GRO_SEGMENTS: Field = opt("gro_segments", Kind::U64, "segments", Range::Described("1..=64, and at most (65,535 - header) / payload segments (GRO's 64 KB: 44 for 1500-byte packets)"), "1 (off)", "GRO at the receiver (`linux` only, not with cc = `\"plt\"`): consecutive segments arriving back to back within one NAPI poll, which lasts `gro_segments` packet times at `network.bottleneck.rate`, merge into one skb, ACKed once: stretch ACKs covering up to this many segments. A segment that does not continue the batch flushes it first (docs/algorithms.md, \"Linux's receiver\")");
pub const PACING: Field = opt("pacing", Kind::Bool, "", Range::Any, "`false`", "pace the flow's data as Linux paces internally (EDT: each departure the previous one's plus its bytes over the pacing rate, one pacing timer per flow): rate = MSS x max(cwnd, packets out) / SRTT x `pacing_ss_ratio` while cwnd < ssthresh / 2, else x `pacing_ca_ratio` (`tcp_update_pacing_rate`), unpaced before the first RTT sample; under `linux` in bursts of `tcp_tso_autosize` segments (1 ms of data, at least 2), the first 10 segments unpaced, idle credit as `tcp_update_skb_after_send`; under `rfc` and `ns2` packet by packet. A controller that sets its own rate (BBR) is paced at it whatever this says. Not with cc = `\"plt\"` (docs/algorithms.md, \"Pacing\")");
pub const PACING_SS_RATIO: Field = opt(
    "pacing_ss_ratio",
    Kind::U64,
    "percent",
    Range::Whole { lo: 0, hi: 1000 },
    "200",
    "the pacing rate in percent of MSS x cwnd / SRTT while cwnd < ssthresh / 2 (Linux `net.ipv4.tcp_pacing_ss_ratio`, same range; 0: unpaced, as Linux's zero rate)",
);
pub const PACING_CA_RATIO: Field = opt(
    "pacing_ca_ratio",
    Kind::U64,
    "percent",
    Range::Whole { lo: 0, hi: 1000 },
    "120",
    "the pacing rate in percent of MSS x cwnd / SRTT once cwnd >= ssthresh / 2 (Linux `net.ipv4.tcp_pacing_ca_ratio`, same range)",
);

pub const ECN: Field = opt("ecn", Kind::Bool, "", Range::Any, "`false`", "ECN (RFC 3168), negotiated by both ends (Linux `tcp_ecn = 1`): new data carries ECT(0); a CE-marked packet makes the receiver set ECE on its ACKs until data with CWR arrives; an ECE ACK reduces the window as a loss would, at most once per window of data, with no retransmission, and the next new data packet carries CWR (`ns2`: ECT and CWR on retransmissions too, ns-2's `output()`). Per profile in docs/algorithms.md (\"ECN\"); not with cc = `\"plt\"`");
pub const ABE: Field = opt("abe", Kind::Bool, "", Range::Any, "`false`", "Alternative Backoff with ECN (RFC 8511, needs `ecn = true`): an ECN reduction multiplies the window by beta_ecn instead of the loss factor: Reno/NewReno 0.8, CUBIC 0.85 (RFC 8511 §3); the other controllers reduce as for a loss");

// ---- [flows.plt] ------------------------------------------------------------------------------
// The LCM's alpha, beta, gamma, mu and ema_weight are checked by
// `longfat_cc::plt::LcmConfig::validate`; test `lcm_ranges_match_validate`
// pins these declarations to it from both sides.

pub const HCM: Field = opt(
    "hcm",
    Kind::Cc,
    "",
    Range::Described("any `longfat algorithms` name but `plt`"),
    "`\"reno\"`",
    "the high-priority module's controller",
);
pub const ALPHA: Field = opt(
    "alpha",
    Kind::Float,
    "packets per packet",
    real(0.0, 10.0, true, false),
    "0.1",
    "LCM increase: packets added per packet acknowledged in an epoch, while P < mu",
);
pub const BETA: Field = opt(
    "beta",
    Kind::Float,
    "factor",
    real(0.0, 1.0, true, true),
    "0.95",
    "LCM decrease per epoch while P >= mu",
);
pub const GAMMA: Field = opt(
    "gamma",
    Kind::Float,
    "factor",
    real(0.0, 1.0, true, true),
    "0.75",
    "LCM decrease on its timeout",
);
pub const MU: Field = opt(
    "mu",
    Kind::Float,
    "fraction",
    real(0.0, 1.0, true, true),
    "0.005",
    "target loss rate (0.005 = 0.5 %)",
);
pub const EMA_WEIGHT: Field = opt(
    "ema_weight",
    Kind::Float,
    "weight",
    real(0.0, 1.0, true, false),
    "0.25",
    "weight of an epoch's loss rate in the moving average P",
);
pub const EPOCH: Field = opt(
    "epoch",
    Kind::Duration,
    "time",
    Range::DurationNs {
        lo: 1_000_000,
        hi: 60 * NS_PER_SEC,
    },
    "`\"100ms\"`",
    "epoch length",
);
pub const LCM_INITIAL_WINDOW: Field = opt("lcm_initial_window", Kind::Size, "BDP or packets", Range::Described("(0, 100] bdp or 1..=10000000 packets"), "`\"1bdp\"`", "the LCM's first window: a fraction of the flow's path BDP (`\"1bdp\"`) or packets (`\"2500pkt\"`)");
pub const LCM_ACK_EVERY: Field = opt(
    "lcm_ack_every",
    Kind::U32,
    "packets",
    Range::Whole { lo: 1, hi: 64 },
    "1",
    "the receiver ACKs every n in-order LCM packets",
);
pub const LCM_ACK_CLASS: Field = opt(
    "lcm_ack_class",
    Kind::Word(&["low", "high"]),
    "",
    Range::Any,
    "`\"low\"`",
    "class of the ACKs of LCM packets: the LCM's (`\"low\"`) or the HCM's (`\"high\"`)",
);
pub const LCM_RESTART: Field = opt(
    "lcm_restart",
    Kind::Word(&["freed", "one"]),
    "",
    Range::Any,
    "`\"freed\"`",
    "the window a stopped LCM restarts with when the HCM cuts back (sect. 4.2 does not say): `\"freed\"`, the packets the HCM gave up (at least one), or `\"one\"`, one packet",
);
pub const RECEIVE_BUFFER: Field = opt("receive_buffer", Kind::Size, "packets or bytes", Range::Described("1 packet ..= 65535 x 2^14 bytes, or `\"unlimited\"`"), "`\"unlimited\"`: that largest window", "the receiver's reassembly buffer: at most this much data between the oldest packet not acknowledged and the newest sent, through either module (each module's own window is `tcp.rwnd`)");
pub const LCM_RESEND: Field = opt("lcm_resend", Kind::Float, "times the HCM's window", real(0.0, 1e6, true, false), "never", "the paper's footnote 2: the LCM resends its own oldest loss when the retransmit buffer holds more than this many times the HCM's window");

// ---- [[udp]] ----------------------------------------------------------------------------------

pub const PATTERN: Field = required(
    "pattern",
    Kind::Word(&["cbr", "onoff"]),
    "",
    Range::Any,
    "`\"cbr\"` constant bit rate, or `\"onoff\"`",
);
pub const UDP_RATE: Field = required("rate", Kind::Rate, "bit/s", RATE, "sending rate (while on)");
pub const UDP_PACKET_SIZE: Field = opt(
    "packet_size",
    Kind::Size,
    "bytes",
    Range::Bytes { lo: 20, hi: 65_535 },
    "`\"1500B\"`",
    "datagram size on the wire",
);
pub const ON_MEAN: Field = opt(
    "on_mean",
    Kind::Duration,
    "time",
    Range::DurationNs {
        lo: 1,
        hi: MAX_RUN_NS,
    },
    "`\"1s\"`",
    "mean on period (`onoff`)",
);
pub const OFF_MEAN: Field = opt(
    "off_mean",
    Kind::Duration,
    "time",
    RUN_TIME,
    "`\"1s\"`",
    "mean off period (`onoff`)",
);
pub const DISTRIBUTION: Field = opt(
    "distribution",
    Kind::Word(&["exponential", "pareto"]),
    "",
    Range::Any,
    "`\"exponential\"`",
    "period lengths (`onoff`)",
);
pub const SHAPE: Field = opt("shape", Kind::Float, "", PARETO_SHAPE, "1.5", "Pareto shape (`distribution = \"pareto\"`; the scale is set so the mean is `on_mean`/`off_mean`)");

// ---- [[short_flows]] --------------------------------------------------------------------------

pub const ARRIVAL_RATE: Field = required(
    "arrival_rate",
    Kind::Float,
    "transfers per second",
    real(0.0, 1e6, true, false),
    "mean arrivals per second (exponential inter-arrival times)",
);
pub const SIZE_MEAN: Field = required(
    "size_mean",
    Kind::Size,
    "bytes or packets",
    Range::Described("> 0, at most 1PB"),
    "mean transfer size (`\"30KB\"`, or `\"20pkt\"` of full payloads); rounded up to whole packets",
);
pub const SIZE_SHAPE: Field = opt(
    "size_shape",
    Kind::Float,
    "",
    PARETO_SHAPE,
    "1.2",
    "Pareto shape of the sizes (scale = mean (shape - 1) / shape)",
);
pub const HOSTS: Field = opt("hosts", Kind::U32, "host pairs", Range::Whole { lo: 1, hi: 10_000 }, "1", "sender/receiver host pairs the transfers are spread over, round robin (each with its own jittered RTT)");

// ---- [[web]] ----------------------------------------------------------------------------------

pub const SESSIONS: Field = required(
    "sessions",
    Kind::U32,
    "sessions",
    Range::Whole { lo: 1, hi: 10_000 },
    "sessions, one server/client host pair each",
);
pub const SESSION_SPREAD: Field = opt(
    "session_spread",
    Kind::Duration,
    "time",
    RUN_TIME,
    "`\"0s\"`",
    "sessions start uniformly in `[start, start + session_spread)`",
);
pub const PAGES_PER_SESSION: Field = required(
    "pages_per_session",
    Kind::U32,
    "pages",
    Range::Whole {
        lo: 1,
        hi: 1_000_000,
    },
    "pages each session asks for",
);
pub const INTER_PAGE: Field = required(
    "inter_page",
    Kind::Duration,
    "time",
    Range::DurationNs {
        lo: 1,
        hi: MAX_RUN_NS,
    },
    "mean time between pages (exponential)",
);
pub const OBJECTS_PER_PAGE: Field = opt(
    "objects_per_page",
    Kind::Float,
    "objects",
    real(1.0, 10_000.0, false, false),
    "1",
    "mean objects per page (geometric on 1, 2, ...)",
);
pub const INTER_OBJECT: Field = opt(
    "inter_object",
    Kind::Duration,
    "time",
    RUN_TIME,
    "`\"0s\"`",
    "mean time between a page's objects (exponential)",
);
pub const OBJECT_SIZE_MEAN: Field = required(
    "object_size_mean",
    Kind::Size,
    "bytes or packets",
    Range::Described("> 0, at most 1PB"),
    "mean object size, as `size_mean`",
);
pub const OBJECT_SIZE_SHAPE: Field = opt(
    "object_size_shape",
    Kind::Float,
    "",
    PARETO_SHAPE,
    "1.2",
    "Pareto shape of the object sizes, as `size_shape`",
);

// ---- [run] ------------------------------------------------------------------------------------

pub const DURATION: Field = required(
    "duration",
    Kind::Duration,
    "time",
    Range::DurationNs {
        lo: 1,
        hi: MAX_RUN_NS,
    },
    "simulated time",
);
pub const SEED: Field = opt(
    "seed",
    Kind::U64,
    "",
    Range::Whole {
        lo: 0,
        hi: u64::MAX,
    },
    "1",
    "the one seed behind every random choice",
);
pub const MEASURE_FROM: Field = opt(
    "measure_from",
    Kind::Duration,
    "time",
    Range::Described("before `duration`"),
    "`\"0s\"`",
    "start of the measurement window for the summary",
);
pub const SAMPLE_INTERVAL: Field = opt(
    "sample_interval",
    Kind::Duration,
    "time",
    Range::Described("1us..=duration"),
    "duration / 1000 (at least 1 ms)",
    "spacing of the time series",
);
pub const PCAP: Field = opt(
    "pcap",
    Kind::NameList,
    "",
    Range::Described("names of TCP flows (flows.parquet's `flow_name`), each once"),
    "`[]`",
    "flows whose packets are written as pcapng, one file each (`pcap/<flow>.pcapng` in the run's directory; `longfat run --pcap` overrides). Headers only, nanosecond timestamps, at `pcap_tap`; PLT connections and UDP sources are refused (docs/scenarios.md, \"Packet captures\"). Counts against the memory budget: 190 bytes per packet captured",
);
pub const PCAP_TAP: Field = opt(
    "pcap_tap",
    Kind::Word(crate::capture::TAPS),
    "",
    Range::Any,
    "`\"sender\"`",
    "where the captures see the flow: `\"sender\"`: the sender's host (data as it is handed to the access link, ACKs as they arrive); `\"bottleneck\"`: the flow's first bottleneck link at its receiver-side router (data as it leaves the bottleneck, ACKs as they enter its reverse link)",
);

impl Table {
    /// The fields, in the serde struct's order.
    pub const fn fields(self) -> &'static [Field] {
        match self {
            Table::Root => &[
                SCENARIO_NAME,
                DESCRIPTION,
                NETWORK,
                FLOWS,
                UDP,
                SHORT_FLOWS,
                WEB,
                RUN,
            ],
            Table::Network => &[TOPOLOGY, HOPS, BDP_RTT, BOTTLENECK, ACCESS],
            Table::Link => &[
                LINK_RATE,
                LINK_DELAY,
                LINK_QUEUE,
                DISCIPLINE,
                CLASSES,
                CLASS_QUEUES,
                BUFFER,
                LOSS,
                REVERSE_LOSS,
                AQM,
            ],
            Table::Aqm => &[
                AQM_TARGET,
                AQM_INTERVAL,
                AQM_ECN,
                AQM_FLOWS,
                AQM_QUANTUM,
                AQM_DROP_BATCH,
                AQM_MIN_TH,
                AQM_MAX_TH,
                AQM_MAX_P,
                AQM_WEIGHT,
                AQM_GENTLE,
                AQM_WAIT,
                AQM_ADAPTIVE,
                AQM_TARGET_DELAY,
                AQM_ARED_INTERVAL,
                AQM_MEAN_PKT_SIZE,
                AQM_T_UPDATE,
                AQM_ALPHA,
                AQM_BETA,
                AQM_MAX_BURST,
                AQM_MARK_ECN_THRESHOLD,
            ],
            Table::Access => &[ACCESS_RATE, ACCESS_LINK_DELAY, ACCESS_QUEUE],
            Table::Flow => &[
                LABEL,
                CC,
                TRANSPORT,
                COUNT,
                START,
                START_SPACING,
                STOP,
                SIZE,
                FROM,
                TO,
                ACCESS_DELAY,
                START_JITTER,
                ACCESS_DELAY_JITTER,
                PARAMS,
                TCP,
                PLT,
            ],
            Table::Tcp => &[
                PACKET_SIZE,
                HEADER_SIZE,
                ACK_SIZE,
                DELAYED_ACK,
                DELAYED_ACK_TIMEOUT,
                RWND,
                MIN_RTO,
                INITIAL_RTO,
                MAX_RTO,
                INITIAL_CWND,
                INITIAL_SSTHRESH,
                SENDER_CLOCK_OFFSET,
                RECEIVER_CLOCK_OFFSET,
                PRIORITY_CLASS,
                PROFILE,
                MAX_BURST,
                HOST,
                TIMESTAMPS,
                GRO_SEGMENTS,
                PACING,
                PACING_SS_RATIO,
                PACING_CA_RATIO,
                ECN,
                ABE,
            ],
            Table::Udp => &[
                LABEL,
                PATTERN,
                UDP_RATE,
                COUNT,
                UDP_PACKET_SIZE,
                START,
                STOP,
                FROM,
                TO,
                ACCESS_DELAY,
                ON_MEAN,
                OFF_MEAN,
                DISTRIBUTION,
                SHAPE,
                PRIORITY_CLASS,
                START_JITTER,
            ],
            Table::Short => &[
                LABEL,
                CC,
                TRANSPORT,
                ARRIVAL_RATE,
                SIZE_MEAN,
                SIZE_SHAPE,
                START,
                STOP,
                FROM,
                TO,
                HOSTS,
                ACCESS_DELAY,
                ACCESS_DELAY_JITTER,
                PARAMS,
                TCP,
                PLT,
            ],
            Table::Web => &[
                LABEL,
                CC,
                TRANSPORT,
                SESSIONS,
                START,
                SESSION_SPREAD,
                STOP,
                PAGES_PER_SESSION,
                INTER_PAGE,
                OBJECTS_PER_PAGE,
                INTER_OBJECT,
                OBJECT_SIZE_MEAN,
                OBJECT_SIZE_SHAPE,
                FROM,
                TO,
                ACCESS_DELAY,
                ACCESS_DELAY_JITTER,
                PARAMS,
                TCP,
                PLT,
            ],
            Table::Plt => &[
                HCM,
                ALPHA,
                BETA,
                GAMMA,
                MU,
                EMA_WEIGHT,
                EPOCH,
                LCM_INITIAL_WINDOW,
                LCM_ACK_EVERY,
                LCM_ACK_CLASS,
                LCM_RESTART,
                RECEIVE_BUFFER,
                LCM_RESEND,
            ],
            Table::Run => &[
                DURATION,
                SEED,
                MEASURE_FROM,
                SAMPLE_INTERVAL,
                PCAP,
                PCAP_TAP,
            ],
        }
    }

    /// The serde struct that reads this table.
    pub const fn struct_name(self) -> &'static str {
        match self {
            Table::Root => "Scenario",
            Table::Network => "Network",
            Table::Link => "LinkCfg",
            Table::Aqm => "AqmCfg",
            Table::Access => "AccessCfg",
            Table::Flow => "FlowSpec",
            Table::Tcp => "TcpCfg",
            Table::Udp => "UdpSpec",
            Table::Short => "ShortFlowSpec",
            Table::Web => "WebSpec",
            Table::Plt => "PltCfg",
            Table::Run => "Run",
        }
    }

    /// The table as a scenario file writes it (`docs/scenarios.md`'s
    /// markers name tables by this).
    pub const fn path(self) -> &'static str {
        match self {
            Table::Root => "",
            Table::Network => "network",
            Table::Link => "network.bottleneck",
            Table::Aqm => "network.bottleneck.aqm",
            Table::Access => "network.access",
            Table::Flow => "flows",
            Table::Tcp => "flows.tcp",
            Table::Udp => "udp",
            Table::Short => "short_flows",
            Table::Web => "web",
            Table::Plt => "flows.plt",
            Table::Run => "run",
        }
    }

    /// The field of `self` named `name`.
    pub fn field(self, name: &str) -> Option<&'static Field> {
        self.fields().iter().find(|f| f.name == name)
    }
}

/// How a kind is written in the docs and the JSON export.
fn kind_name(k: Kind) -> String {
    match k {
        Kind::Duration => "duration".into(),
        Kind::Rate => "rate".into(),
        Kind::Size => "size".into(),
        Kind::Float => "number".into(),
        Kind::U32 | Kind::U64 => "whole number".into(),
        Kind::Bool => "bool".into(),
        Kind::Text => "text".into(),
        Kind::Word(words) => words
            .iter()
            .map(|w| format!("`\"{w}\"`"))
            .collect::<Vec<_>>()
            .join(", "),
        Kind::Cc => "controller".into(),
        Kind::SizeList => "list of sizes".into(),
        Kind::NameList => "list of flow names".into(),
        Kind::Params => "table of numbers".into(),
        Kind::Table(t) => format!("table `[{}]`", t.path()),
        Kind::Tables(t) => format!("array of tables `[[{}]]`", t.path()),
    }
}

/// `table`'s fields as a Markdown table (`docs/scenarios.md`).
pub fn markdown_table(table: Table) -> String {
    let mut out = String::from(
        "| field | meaning | kind (unit) | allowed | default |\n|---|---|---|---|---|\n",
    );
    for f in table.fields() {
        let kind = if f.unit.is_empty() {
            kind_name(f.kind)
        } else {
            format!("{} ({})", kind_name(f.kind), f.unit)
        };
        let default = if f.required { "required" } else { f.default };
        out.push_str(&format!(
            "| `{}` | {} | {kind} | {} | {default} |\n",
            f.name, f.meaning, f.range
        ));
    }
    out
}

/// Every table and field as JSON, for tools outside Rust (the Python fuzzer
/// reads it through `longfat._native.scenario_fields()`): `{"tables":
/// [{"table", "struct", "fields": [{"name", "kind", "words"?, "table"?,
/// "required", "unit", "range", "default", "meaning"}]}]}`; `kind` is one of
/// duration, rate, size, float, u32, u64, bool, text, word, cc, size_list,
/// params, table, tables.
pub fn json() -> Value {
    let tables: Vec<Value> = TABLES
        .iter()
        .map(|t| {
            let fields: Vec<Value> = t
                .fields()
                .iter()
                .map(|f| {
                    let (kind, extra) = match f.kind {
                        Kind::Duration => ("duration", Value::Null),
                        Kind::Rate => ("rate", Value::Null),
                        Kind::Size => ("size", Value::Null),
                        Kind::Float => ("float", Value::Null),
                        Kind::U32 => ("u32", Value::Null),
                        Kind::U64 => ("u64", Value::Null),
                        Kind::Bool => ("bool", Value::Null),
                        Kind::Text => ("text", Value::Null),
                        Kind::Word(words) => ("word", json!({ "words": words })),
                        Kind::Cc => ("cc", Value::Null),
                        Kind::SizeList => ("size_list", Value::Null),
                        Kind::NameList => ("name_list", Value::Null),
                        Kind::Params => ("params", Value::Null),
                        Kind::Table(t) => ("table", json!({ "table": t.struct_name() })),
                        Kind::Tables(t) => ("tables", json!({ "table": t.struct_name() })),
                    };
                    let mut v = json!({
                        "name": f.name,
                        "kind": kind,
                        "required": f.required,
                        "unit": f.unit,
                        "range": f.range.to_string(),
                        "default": f.default,
                        "meaning": f.meaning,
                    });
                    if let (Value::Object(m), Value::Object(e)) = (&mut v, extra) {
                        m.extend(e);
                    }
                    // The disciplines that take an aqm field (AQM_OWNERS).
                    if *t == Table::Aqm {
                        if let Some((_, owners)) = AQM_OWNERS.iter().find(|(n, _)| *n == f.name) {
                            v["disciplines"] = json!(owners);
                        }
                    }
                    v
                })
                .collect();
            json!({ "table": t.path(), "struct": t.struct_name(), "fields": fields })
        })
        .collect();
    json!({ "tables": tables })
}
