//! Scenario files: the serde schema (every field documented in
//! docs/scenarios.md), validation that names the offending field and the
//! allowed range, and construction of a [`Simulation`].

use std::collections::BTreeMap;
use std::fmt;

use serde::Deserialize;

use longfat_cc::{CcParams, InitialWindow};

use crate::link::{QueueDiscipline, QueueLimit};
use rand_core::RngCore;
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::budget::{self, RunShape, DEFAULT_MEMORY_BUDGET_BYTES};
use crate::flow::{Endpoints, Flow, Generated};
use crate::plt::{PltConfig, PltReceiver, PltSender};
use longfat_cc::plt::LcmConfig;
use crate::rng::{component_rng, RNG_JITTER, RNG_TRAFFIC, RNG_UDP};
use crate::sim::{SimSetup, Simulation};
use crate::tcp::receiver::{TcpReceiver, TCP_DELACK_MAX_NS};
use crate::tcp::sender::TcpSender;
use crate::tcp::profile::{Profile, PROFILES};
use crate::tcp::TcpConfig;
use crate::topology::{attach_host, router_chain, HalfLink, Host, RouterRoutes, Topology};
use crate::traffic::{self, WebModel};
use crate::udp::{PeriodDist, UdpConfig, UdpFlow, UdpPattern};
use crate::units::{
    parse_bandwidth, parse_duration_ns, parse_size, Bandwidth, SizeSpec, NS_PER_SEC,
};

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

fn err<T>(field: impl Into<String>, message: impl Into<String>) -> Result<T, ScenarioError> {
    Err(ScenarioError {
        field: field.into(),
        message: message.into(),
    })
}

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub name: Option<String>,
    pub description: Option<String>,
    pub network: Network,
    #[serde(default)]
    pub flows: Vec<FlowSpec>,
    #[serde(default)]
    pub udp: Vec<UdpSpec>,
    #[serde(default)]
    pub short_flows: Vec<ShortFlowSpec>,
    #[serde(default)]
    pub web: Vec<WebSpec>,
    pub run: Run,
}

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Network {
    pub topology: String,
    pub hops: Option<u32>,
    pub bdp_rtt: Option<String>,
    pub bottleneck: LinkCfg,
    pub access: Option<AccessCfg>,
}

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LinkCfg {
    pub rate: String,
    pub delay: String,
    pub queue: String,
    pub discipline: Option<String>,
    pub classes: Option<u32>,
    pub class_queues: Option<Vec<String>>,
    /// Priority links: "per_class" (a buffer per class) or "shared".
    pub buffer: Option<String>,
    pub loss: Option<f64>,
    pub reverse_loss: Option<f64>,
}

#[derive(Clone, Debug, Deserialize, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct AccessCfg {
    pub rate: Option<String>,
    pub delay: Option<String>,
    pub queue: Option<String>,
}

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    pub name: Option<String>,
    pub cc: String,
    /// `"tcp"` (default) or `"plt"`, whose HCM runs `cc` (see `tcp_setup`).
    pub transport: Option<String>,
    pub count: Option<u32>,
    pub start: Option<String>,
    pub start_spacing: Option<String>,
    pub stop: Option<String>,
    pub size: Option<String>,
    pub from: Option<u32>,
    pub to: Option<u32>,
    pub access_delay: Option<String>,
    /// Each instance starts up to this much later (uniform, from the seed).
    pub start_jitter: Option<String>,
    /// Each instance's source access link gets up to this much more one-way
    /// delay (uniform, from the seed): randomized per-flow RTTs.
    pub access_delay_jitter: Option<String>,
    #[serde(default)]
    pub params: BTreeMap<String, f64>,
    #[serde(default)]
    pub tcp: TcpCfg,
    /// PLT's settings (only with `transport = "plt"` or `cc = "plt"`).
    pub plt: Option<PltCfg>,
}

/// Finite TCP transfers with Poisson arrivals and Pareto sizes.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ShortFlowSpec {
    pub name: Option<String>,
    pub cc: String,
    /// `"tcp"` (default) or `"plt"`, whose HCM runs `cc` (see `tcp_setup`).
    pub transport: Option<String>,
    /// Mean arrivals per second.
    pub arrival_rate: f64,
    pub size_mean: String,
    pub size_shape: Option<f64>,
    pub start: Option<String>,
    pub stop: Option<String>,
    pub from: Option<u32>,
    pub to: Option<u32>,
    /// Host pairs the transfers are spread over (round robin).
    pub hosts: Option<u32>,
    pub access_delay: Option<String>,
    pub access_delay_jitter: Option<String>,
    #[serde(default)]
    pub params: BTreeMap<String, f64>,
    #[serde(default)]
    pub tcp: TcpCfg,
    /// PLT's settings (only with `transport = "plt"` or `cc = "plt"`).
    pub plt: Option<PltCfg>,
}

/// ns-2 WebTraf-style web sessions (see `traffic::WebModel`).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct WebSpec {
    pub name: Option<String>,
    pub cc: String,
    /// `"tcp"` (default) or `"plt"`, whose HCM runs `cc` (see `tcp_setup`).
    pub transport: Option<String>,
    pub sessions: u32,
    pub start: Option<String>,
    pub session_spread: Option<String>,
    pub stop: Option<String>,
    pub pages_per_session: u32,
    pub inter_page: String,
    pub objects_per_page: Option<f64>,
    pub inter_object: Option<String>,
    pub object_size_mean: String,
    pub object_size_shape: Option<f64>,
    pub from: Option<u32>,
    pub to: Option<u32>,
    pub access_delay: Option<String>,
    pub access_delay_jitter: Option<String>,
    #[serde(default)]
    pub params: BTreeMap<String, f64>,
    #[serde(default)]
    pub tcp: TcpCfg,
    /// PLT's settings (only with `transport = "plt"` or `cc = "plt"`).
    pub plt: Option<PltCfg>,
}

/// A PLT connection's settings (`[flows.plt]`); `params` stay the HCM
/// controller's parameters.
#[derive(Clone, Debug, Deserialize, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct PltCfg {
    /// The high-priority module's controller (default "reno").
    pub hcm: Option<String>,
    pub alpha: Option<f64>,
    pub beta: Option<f64>,
    pub gamma: Option<f64>,
    /// Target loss rate, a fraction (0.005 = 0.5 %).
    pub mu: Option<f64>,
    pub ema_weight: Option<f64>,
    pub epoch: Option<String>,
    /// "1bdp" (default: the path's bandwidth-delay product) or "N pkt".
    pub lcm_initial_window: Option<String>,
    pub lcm_ack_every: Option<u32>,
    /// "low" (default: the LCM's class) or "high" (the HCM's).
    pub lcm_ack_class: Option<String>,
    /// The receiver's reassembly buffer for the connection ("unlimited":
    /// the largest TCP window).
    pub receive_buffer: Option<String>,
    /// Footnote 2: the LCM resends its losses when the retransmit buffer
    /// holds more than this many times the HCM's window (absent: never).
    pub lcm_resend: Option<f64>,
}

#[derive(Clone, Debug, Deserialize, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct TcpCfg {
    pub packet_size: Option<String>,
    pub header_size: Option<String>,
    pub ack_size: Option<String>,
    pub delayed_ack: Option<bool>,
    pub delayed_ack_timeout: Option<String>,
    pub rwnd: Option<String>,
    pub min_rto: Option<String>,
    pub initial_rto: Option<String>,
    pub max_rto: Option<String>,
    pub initial_cwnd: Option<f64>,
    pub initial_ssthresh: Option<f64>,
    pub sender_clock_offset: Option<String>,
    pub receiver_clock_offset: Option<String>,
    pub priority_class: Option<u32>,
    /// Transport profile: "rfc" (default), "ns2" or "linux".
    pub profile: Option<String>,
    /// ns-2 `maxburst_`: at most this many packets back to back.
    pub max_burst: Option<u64>,
    /// "tuned" (default: unlimited buffers) or "default" (Linux's default
    /// tcp_rmem/tcp_wmem with autotuning; `linux` only).
    pub host: Option<String>,
    /// The retransmission timer's RTT samples: true, every ACK's timestamp
    /// echo; false (`ns2` only, its default as ns-2.35's `timestamps_`),
    /// one timed segment per round trip with Karn's rule.
    pub timestamps: Option<bool>,
    /// GRO at the receiver: most segments merged into one (1 = off;
    /// `linux` only).
    pub gro_segments: Option<u64>,
}

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct UdpSpec {
    pub name: Option<String>,
    pub pattern: String,
    pub rate: String,
    pub count: Option<u32>,
    pub packet_size: Option<String>,
    pub start: Option<String>,
    pub stop: Option<String>,
    pub from: Option<u32>,
    pub to: Option<u32>,
    pub access_delay: Option<String>,
    pub on_mean: Option<String>,
    pub off_mean: Option<String>,
    pub distribution: Option<String>,
    pub shape: Option<f64>,
    pub priority_class: Option<u32>,
    pub start_jitter: Option<String>,
}

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Run {
    pub duration: String,
    pub seed: Option<u64>,
    pub measure_from: Option<String>,
    pub sample_interval: Option<String>,
}

impl Scenario {
    /// Parses JSON (the Python front end converts TOML to JSON).
    pub fn from_json(text: &str) -> Result<Self, ScenarioError> {
        let de = &mut serde_json::Deserializer::from_str(text);
        serde_path_to_error::deserialize(de).map_err(|e| {
            let mut message = e
                .inner()
                .to_string()
                .split(" at line")
                .next()
                .unwrap_or_default()
                .to_string();
            if message.ends_with("expected a string") {
                message.push_str(
                    " (quote the value and give its unit, e.g. \"70ms\", \"1Gbps\", \"6000pkt\")",
                );
            } else if message.ends_with("expected u64") || message.ends_with("expected u32") {
                message.push_str(" (a whole number >= 0)");
            }
            let path = e.path().to_string().trim_start_matches('.').to_string();
            let field = error_field(&path, &message);
            // Keys come from the user: show control characters escaped, so
            // an error stays one line and cannot drive the terminal.
            ScenarioError {
                field: printable(&field),
                message: printable(&message),
            }
        })
    }

    pub fn from_toml(text: &str) -> Result<Self, ScenarioError> {
        let value: toml::Value = toml::from_str(text).map_err(|e| ScenarioError {
            field: String::new(),
            message: format!("TOML syntax: {e}"),
        })?;
        let json = serde_json::to_string(&value).map_err(|e| ScenarioError {
            field: String::new(),
            message: format!("TOML value not representable: {e}"),
        })?;
        Self::from_json(&json)
    }
}

/// `s` with control characters escaped (`\n`, `\u{1b}`).
fn printable(s: &str) -> String {
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
fn error_field(path: &str, message: &str) -> String {
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

// ---- ranges ------------------------------------------------------------------

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
    pub const MAX_FLOWS: u64 = 100_000;
    pub const MAX_GENERATED: u64 = 300_000;
    /// A host's queue when `network.access.queue` is not given: Linux's
    /// default `txqueuelen`.
    pub const DEFAULT_HOST_QUEUE_PKTS: u64 = 1000;
    /// Longest scenario or flow name, in bytes.
    pub const MAX_NAME_BYTES: usize = 200;
}

use limits::*;

/// `1500000000ns` -> `"1.5s"`: a duration as a user would write it.
fn fmt_ns(ns: u64) -> String {
    let (v, unit) = if ns >= 60 * NS_PER_SEC && ns % (60 * NS_PER_SEC) == 0 {
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

// ---- field parsers that attach the field name and check the range ------------

fn duration_in(field: &str, s: &str, lo: u64, hi: u64) -> Result<u64, ScenarioError> {
    let v = parse_duration_ns(s).or_else(|m| err(field, m))?;
    if !(lo..=hi).contains(&v) {
        return err(
            field,
            format!(
                "{s:?} is out of range; allowed {}..={}",
                fmt_ns(lo),
                fmt_ns(hi)
            ),
        );
    }
    Ok(v)
}

/// A delay-like duration: 0..=10 min.
fn delay(field: &str, s: &str) -> Result<u64, ScenarioError> {
    duration_in(field, s, 0, MAX_DELAY_NS)
}

/// A time within a run: 0..=`MAX_RUN_NS`.
fn run_time(field: &str, s: &str) -> Result<u64, ScenarioError> {
    duration_in(field, s, 0, MAX_RUN_NS)
}

fn opt_or(
    field: &str,
    v: &Option<String>,
    default_ns: u64,
    parse: fn(&str, &str) -> Result<u64, ScenarioError>,
) -> Result<u64, ScenarioError> {
    match v {
        Some(v) => parse(field, v),
        None => Ok(default_ns),
    }
}

fn rate(field: &str, s: &str) -> Result<Bandwidth, ScenarioError> {
    let r = parse_bandwidth(s).or_else(|m| err(field, m))?;
    if !(MIN_RATE_BPS..=MAX_RATE_BPS).contains(&r.bps()) {
        return err(
            field,
            format!("{s:?} is out of range; allowed 1Kbps..=10Tbps"),
        );
    }
    Ok(r)
}

/// A size in bytes (packets not allowed): packet and ACK sizes.
fn bytes(field: &str, s: &str, min: u64, max: u64) -> Result<u64, ScenarioError> {
    match parse_size(s).or_else(|m| err(field, m))? {
        SizeSpec::Bytes(b) if (min..=max).contains(&b) => Ok(b),
        SizeSpec::Bytes(b) => err(
            field,
            format!("{b} bytes is out of range; allowed {min}..={max} bytes"),
        ),
        _ => err(
            field,
            format!("{s:?}: give a size in bytes (e.g. \"1500B\")"),
        ),
    }
}

fn probability(field: &str, p: Option<f64>) -> Result<f64, ScenarioError> {
    let p = p.unwrap_or(0.0);
    if !(0.0..1.0).contains(&p) {
        return err(
            field,
            format!("{p} is out of range; a loss probability must be in [0, 1)"),
        );
    }
    Ok(p)
}

/// A scenario's `name`: it names the result directory, so it must be a
/// plain file name that cannot point anywhere else.
fn check_name(name: &str) -> Result<(), ScenarioError> {
    let field = "name";
    if name.is_empty() || name.trim().is_empty() {
        return err(field, "must not be empty");
    }
    if name == "." || name == ".." {
        return err(
            field,
            format!("{name:?} is not allowed; the name becomes a directory name (results/<name>)"),
        );
    }
    if name.starts_with('.') {
        return err(field, format!("{name:?} must not start with '.' (hidden names are reserved for longfat's temporary directories)"));
    }
    if let Some(c) = name
        .chars()
        .find(|&c| c == '/' || c == '\\' || c.is_control())
    {
        return err(field, format!("{name:?} contains {c:?}; a name is a plain file name (no path separators or control characters)"));
    }
    if name.len() > MAX_NAME_BYTES {
        return err(
            field,
            format!("is {} bytes long; at most {MAX_NAME_BYTES}", name.len()),
        );
    }
    Ok(())
}

/// A flow's or generator's `name`: a label in tables and plots, at most
/// `MAX_NAME_BYTES`, without control characters (it reaches the terminal).
fn check_label(field: &str, name: &Option<String>) -> Result<(), ScenarioError> {
    let Some(name) = name else { return Ok(()) };
    if name.len() > MAX_NAME_BYTES {
        return err(
            field,
            format!("is {} bytes long; at most {MAX_NAME_BYTES}", name.len()),
        );
    }
    if let Some(c) = name.chars().find(|c| c.is_control()) {
        return err(
            field,
            format!("{name:?} contains the control character {c:?}"),
        );
    }
    Ok(())
}

/// A queue size before BDP resolution.
#[derive(Clone, Copy, Debug)]
enum QueueSize {
    Limit(QueueLimit),
    Bdp(f64),
}

fn queue_size(field: &str, s: &str) -> Result<QueueSize, ScenarioError> {
    if s == "unlimited" {
        return Ok(QueueSize::Limit(QueueLimit::Packets(u64::MAX)));
    }
    match parse_size(s).or_else(|m| err(field, m))? {
        SizeSpec::Packets(0) | SizeSpec::Bytes(0) => {
            err(field, format!("{s:?}: a queue must hold at least one packet (> 0)"))
        }
        SizeSpec::Bdp(f) if !(f > 0.0 && f <= MAX_BDP_FRACTION) => {
            err(field, format!("{s:?} is out of range; a BDP fraction must be in (0, {MAX_BDP_FRACTION}]"))
        }
        SizeSpec::Packets(n) if n > MAX_QUEUE_PKTS => {
            err(field, format!("{s:?} is out of range; allowed 1..={MAX_QUEUE_PKTS} packets, or \"unlimited\""))
        }
        SizeSpec::Bytes(b) if b > MAX_QUEUE_BYTES => {
            err(field, format!("{s:?} is out of range; allowed up to {MAX_QUEUE_BYTES} bytes (1TB), or \"unlimited\""))
        }
        SizeSpec::Packets(n) => Ok(QueueSize::Limit(QueueLimit::Packets(n))),
        SizeSpec::Bytes(b) => Ok(QueueSize::Limit(QueueLimit::Bytes(b))),
        SizeSpec::Bdp(f) => Ok(QueueSize::Bdp(f)),
    }
}

enum Discipline {
    DropTail(QueueSize),
    Priority(Vec<QueueSize>),
    /// One buffer of this size for all the classes, with push-out.
    PriorityShared(QueueSize, usize),
}

fn resolve(
    q: QueueSize,
    bdp_bytes: Option<u64>,
    field: &str,
    min_bytes: u64,
) -> Result<QueueLimit, ScenarioError> {
    match q {
        QueueSize::Limit(l) => Ok(l),
        QueueSize::Bdp(f) => {
            let Some(bdp) = bdp_bytes else {
                return err(field, "a \"bdp\" size needs an RTT: no TCP flow crosses this link; set network.bdp_rtt");
            };
            let b = (bdp as f64 * f).round() as u64;
            if b < min_bytes {
                return err(field, format!("{f}bdp is {b} bytes, less than one packet ({min_bytes} bytes); use a larger fraction"));
            }
            Ok(QueueLimit::Bytes(b))
        }
    }
}

/// How a scenario is built, beyond the scenario itself.
#[derive(Clone, Debug)]
pub struct BuildOptions {
    /// Refuse a run whose estimated memory is above this.
    pub memory_budget_bytes: u64,
}

impl Default for BuildOptions {
    fn default() -> Self {
        Self {
            memory_budget_bytes: DEFAULT_MEMORY_BUDGET_BYTES,
        }
    }
}

/// The error `build_with` returns when its `interrupted` callback said so.
pub fn interrupted_error() -> ScenarioError {
    ScenarioError {
        field: String::new(),
        message: "interrupted during set-up".into(),
    }
}

/// Validates the scenario and builds a ready-to-run simulation, with the
/// default memory budget.
pub fn build(s: &Scenario) -> Result<Simulation, ScenarioError> {
    build_with(s, &BuildOptions::default(), &mut || false)
}

/// Validates the scenario and builds a ready-to-run simulation.
/// `interrupted` is polled while many flows are set up (a front end uses it
/// to honour Ctrl-C); when it returns true, building stops with
/// [`interrupted_error`].
pub fn build_with(
    s: &Scenario,
    opts: &BuildOptions,
    interrupted: &mut dyn FnMut() -> bool,
) -> Result<Simulation, ScenarioError> {
    if let Some(name) = &s.name {
        check_name(name)?;
    }
    // ---- run ----
    let duration_ns = duration_in("run.duration", &s.run.duration, 1, MAX_RUN_NS)?;
    let measure_from_ns = opt_or("run.measure_from", &s.run.measure_from, 0, run_time)?;
    if measure_from_ns >= duration_ns {
        return err(
            "run.measure_from",
            format!(
                "{:?} must be before run.duration ({})",
                s.run.measure_from.as_deref().unwrap_or(""),
                s.run.duration
            ),
        );
    }
    let sample_interval_ns = match &s.run.sample_interval {
        Some(v) => duration_in(
            "run.sample_interval",
            v,
            MIN_SAMPLE_INTERVAL_NS,
            duration_ns,
        )?,
        None => (duration_ns / 1000).max(1_000_000).min(duration_ns),
    };
    let seed = s.run.seed.unwrap_or(1);

    // ---- network ----
    let net = &s.network;
    let hops = match (net.topology.as_str(), net.hops) {
        ("dumbbell", None | Some(1)) => 1usize,
        ("dumbbell", Some(h)) => return err(
            "network.hops",
            format!(
                "{h}: a dumbbell has exactly 1 bottleneck; use topology = \"parking_lot\" for more"
            ),
        ),
        ("parking_lot", Some(h)) if (2..=64).contains(&h) => h as usize,
        ("parking_lot", Some(h)) => {
            return err(
                "network.hops",
                format!("{h} is out of range; a parking lot has 2..=64 bottlenecks"),
            )
        }
        ("parking_lot", None) => return err("network.hops", "required for a parking lot (2..=64)"),
        (t, _) => {
            return err(
                "network.topology",
                format!("unknown topology {t:?}; allowed: \"dumbbell\", \"parking_lot\""),
            )
        }
    };
    let b = &net.bottleneck;
    let b_rate = rate("network.bottleneck.rate", &b.rate)?;
    let b_delay = delay("network.bottleneck.delay", &b.delay)?;
    let b_queue = queue_size("network.bottleneck.queue", &b.queue)?;
    let discipline = match b.discipline.as_deref().unwrap_or("droptail") {
        "droptail" => {
            if b.classes.is_some() || b.class_queues.is_some() || b.buffer.is_some() {
                let f = if b.classes.is_some() { "classes" } else if b.class_queues.is_some() { "class_queues" } else { "buffer" };
                return err(
                    format!("network.bottleneck.{f}"),
                    "only for discipline = \"priority\"",
                );
            }
            Discipline::DropTail(b_queue)
        }
        "priority" => {
            let n = b.classes.unwrap_or(2);
            if !(1..=MAX_CLASSES).contains(&n) {
                return err(
                    "network.bottleneck.classes",
                    format!("{n} is out of range; allowed 1..={MAX_CLASSES}"),
                );
            }
            let shared = match b.buffer.as_deref() {
                None | Some("per_class") => false,
                Some("shared") => true,
                Some(o) => return err("network.bottleneck.buffer", format!("unknown buffer {o:?}; allowed: \"per_class\", \"shared\"")),
            };
            match &b.class_queues {
                _ if shared && b.class_queues.is_some() => {
                    return err("network.bottleneck.class_queues", "not with buffer = \"shared\": the classes share `queue`")
                }
                None if shared => Discipline::PriorityShared(b_queue, n as usize),
                None => Discipline::Priority(vec![b_queue; n as usize]),
                Some(qs) if qs.len() == n as usize => Discipline::Priority(
                    qs.iter()
                        .enumerate()
                        .map(|(i, q)| {
                            queue_size(&format!("network.bottleneck.class_queues[{i}]"), q)
                        })
                        .collect::<Result<_, _>>()?,
                ),
                Some(qs) => {
                    return err(
                        "network.bottleneck.class_queues",
                        format!("has {} entries; needs one per class ({n})", qs.len()),
                    )
                }
            }
        }
        d => {
            return err(
                "network.bottleneck.discipline",
                format!("unknown discipline {d:?}; allowed: \"droptail\", \"priority\""),
            )
        }
    };
    let n_classes = match &discipline {
        Discipline::DropTail(_) => 1,
        Discipline::Priority(v) => v.len() as u32,
        Discipline::PriorityShared(_, n) => *n as u32,
    };
    let loss_fwd = probability("network.bottleneck.loss", b.loss)?;
    let loss_rev = probability("network.bottleneck.reverse_loss", b.reverse_loss)?;
    let access = net.access.clone().unwrap_or_default();
    let a_rate = match &access.rate {
        Some(r) => rate("network.access.rate", r)?,
        None => Bandwidth::from_bps(b_rate.bps().saturating_mul(10).min(MAX_RATE_BPS)),
    };
    let a_delay = opt_or("network.access.delay", &access.delay, 0, delay)?;
    let a_queue = match &access.queue {
        Some(q) => match queue_size("network.access.queue", q)? {
            QueueSize::Limit(l) => l,
            QueueSize::Bdp(_) => {
                return err(
                    "network.access.queue",
                    "\"bdp\" sizes apply to bottleneck links only",
                )
            }
        },
        None => QueueLimit::Packets(DEFAULT_HOST_QUEUE_PKTS),
    };
    let bdp_rtt_ns = match &net.bdp_rtt {
        Some(r) => Some(duration_in("network.bdp_rtt", r, 1, MAX_DELAY_NS)?),
        None => None,
    };

    let mut topo = Topology::new();
    let placeholder = QueueDiscipline::DropTail(QueueLimit::Packets(1));
    let half = |loss: f64| HalfLink {
        rate: b_rate,
        delay_ns: b_delay,
        queue: placeholder.clone(),
        loss_prob: loss,
    };
    let (routers, hop_links) = router_chain(&mut topo, hops, &half(loss_fwd), &half(loss_rev));
    let router_routes = RouterRoutes::new(&topo, &routers);
    let access_half = |delay_ns: u64| HalfLink {
        rate: a_rate,
        delay_ns,
        queue: QueueDiscipline::DropTail(a_queue),
        loss_prob: 0.0,
    };

    // ---- flows ----
    if s.flows.is_empty() && s.udp.is_empty() && s.short_flows.is_empty() && s.web.is_empty() {
        return err("flows", "the scenario has no flows; add at least one [[flows]], [[udp]], [[short_flows]] or [[web]] entry");
    }
    let total: u64 = s
        .flows
        .iter()
        .map(|f| u64::from(f.count.unwrap_or(1)))
        .sum::<u64>()
        + s.udp
            .iter()
            .map(|u| u64::from(u.count.unwrap_or(1)))
            .sum::<u64>();
    if total > MAX_FLOWS {
        return err(
            "flows",
            format!("{total} flows in all; at most {MAX_FLOWS}"),
        );
    }

    struct Pending {
        flow: Flow,
        crosses_tcp: bool,
    }
    let mut pending: Vec<Pending> = vec![];
    // Polls `interrupted` every 256 flows set up.
    let mut poll = |n: usize| -> Result<(), ScenarioError> {
        if n % 256 == 255 && interrupted() {
            return Err(interrupted_error());
        }
        Ok(())
    };
    let endpoints_of = |field: &str,
                        from: Option<u32>,
                        to: Option<u32>|
     -> Result<(usize, usize), ScenarioError> {
        let from = from.unwrap_or(0);
        let to = to.unwrap_or(hops as u32);
        for (name, v) in [("from", from), ("to", to)] {
            if v as usize > hops {
                return err(
                    format!("{field}.{name}"),
                    format!("router {v} does not exist; routers are 0..={hops}"),
                );
            }
        }
        if from == to {
            return err(
                format!("{field}.to"),
                format!("same router as from ({from}); a flow must cross at least one bottleneck"),
            );
        }
        Ok((routers[from as usize], routers[to as usize]))
    };
    let start_stop = |field: &str,
                      start: &Option<String>,
                      stop: &Option<String>|
     -> Result<(u64, Option<u64>), ScenarioError> {
        let start_ns = opt_or(&format!("{field}.start"), start, 0, run_time)?;
        if start_ns >= duration_ns {
            return err(
                format!("{field}.start"),
                format!(
                    "{:?} is at or after the end of the run (run.duration = {}); must be earlier",
                    start.as_deref().unwrap_or(""),
                    s.run.duration
                ),
            );
        }
        let stop_ns = match stop {
            Some(v) => {
                let t = run_time(&format!("{field}.stop"), v)?;
                if t <= start_ns {
                    return err(format!("{field}.stop"), "must be after start");
                }
                Some(t)
            }
            None => None,
        };
        Ok((start_ns, stop_ns))
    };
    let path_between = |src: &Host, dst: &Host, topo: &Topology| -> PathInfo {
        let fwd = router_routes
            .host_route(src, dst)
            .expect("chain topologies are connected");
        let bwd = router_routes
            .host_route(dst, src)
            .expect("chain topologies are connected");
        let base_rtt_ns = topo.route_delay_ns(&fwd) + topo.route_delay_ns(&bwd);
        PathInfo {
            fwd: fwd.into(),
            bwd: bwd.into(),
            base_rtt_ns,
        }
    };

    for (i, f) in s.flows.iter().enumerate() {
        let field = format!("flows[{i}]");
        check_label(&format!("{field}.name"), &f.name)?;
        let count = f.count.unwrap_or(1);
        if count == 0 {
            return err(format!("{field}.count"), "must be >= 1");
        }
        let (src_router, dst_router) = endpoints_of(&field, f.from, f.to)?;
        let (start_ns, stop_ns) = start_stop(&field, &f.start, &f.stop)?;
        let spacing = opt_or(
            &format!("{field}.start_spacing"),
            &f.start_spacing,
            0,
            run_time,
        )?;
        let start_jitter = opt_or(
            &format!("{field}.start_jitter"),
            &f.start_jitter,
            0,
            run_time,
        )?;
        let last_start = spacing
            .checked_mul(u64::from(count - 1))
            .and_then(|x| x.checked_add(start_ns))
            .and_then(|x| x.checked_add(start_jitter))
            .filter(|&t| t < duration_ns);
        let Some(_) = last_start else {
            let latest =
                (start_ns as f64 + spacing as f64 * f64::from(count - 1) + start_jitter as f64)
                    / 1e9;
            return err(
                format!("{field}.{}", if start_jitter > 0 && spacing == 0 { "start_jitter" } else { "start_spacing" }),
                format!("the last of {count} flows could start at {latest:.3}s, at or after the end of the run ({})", s.run.duration),
            );
        };
        let tr = tcp_setup(&field, &f.cc, f.transport.as_deref(), &f.params, &f.tcp, &f.plt, n_classes)?;
        let cfg = &tr.cfg;
        let total_pkts = match &f.size {
            None => None,
            Some(sz) => Some(transfer_pkts(
                &format!("{field}.size"),
                sz,
                cfg.payload_bytes(),
            )?),
        };
        let access_delay = opt_or(
            &format!("{field}.access_delay"),
            &f.access_delay,
            a_delay,
            delay,
        )?;
        let delay_jitter = opt_or(
            &format!("{field}.access_delay_jitter"),
            &f.access_delay_jitter,
            0,
            delay,
        )?;
        let mut jitter_rng = component_rng(seed, RNG_JITTER, i as u64);
        for k in 0..count {
            let idx = pending.len();
            poll(idx)?;
            let name = instance_name(&f.name, count, k, if tr.plt.is_some() { "plt" } else { f.cc.as_str() }, idx);
            let start =
                start_ns + spacing * u64::from(k) + uniform_below(&mut jitter_rng, start_jitter);
            let extra = uniform_below(&mut jitter_rng, delay_jitter);
            let src = attach_host(
                &mut topo,
                format!("{name}.src"),
                src_router,
                &access_half(access_delay + extra),
            );
            let dst = attach_host(
                &mut topo,
                format!("{name}.dst"),
                dst_router,
                &access_half(a_delay),
            );
            let path = path_between(&src, &dst, &topo);
            let endpoints = tr.endpoints(idx, total_pkts, &path, b_rate);
            let flow = path.flow(name, tr.label.clone(), start, stop_ns, endpoints, None);
            pending.push(Pending {
                flow,
                crosses_tcp: true,
            });
        }
    }

    for (i, u) in s.udp.iter().enumerate() {
        let field = format!("udp[{i}]");
        check_label(&format!("{field}.name"), &u.name)?;
        let count = u.count.unwrap_or(1);
        if count == 0 {
            return err(format!("{field}.count"), "must be >= 1");
        }
        let (src_router, dst_router) = endpoints_of(&field, u.from, u.to)?;
        let (start_ns, stop_ns) = start_stop(&field, &u.start, &u.stop)?;
        let start_jitter = opt_or(
            &format!("{field}.start_jitter"),
            &u.start_jitter,
            0,
            run_time,
        )?;
        if start_ns + start_jitter >= duration_ns {
            return err(
                format!("{field}.start_jitter"),
                "sources could start at or after the end of the run",
            );
        }
        let cfg = udp_config(&field, u, n_classes)?;
        let access_delay = opt_or(
            &format!("{field}.access_delay"),
            &u.access_delay,
            a_delay,
            delay,
        )?;
        let mut jitter_rng = component_rng(seed, RNG_JITTER, 1_000_000 + i as u64);
        for k in 0..count {
            let idx = pending.len();
            poll(idx)?;
            let name = instance_name(&u.name, count, k, "udp", idx);
            let src = attach_host(
                &mut topo,
                format!("{name}.src"),
                src_router,
                &access_half(access_delay),
            );
            let dst = attach_host(
                &mut topo,
                format!("{name}.dst"),
                dst_router,
                &access_half(a_delay),
            );
            let rng = component_rng(seed, RNG_UDP, idx as u64);
            let start = start_ns + uniform_below(&mut jitter_rng, start_jitter);
            let path = path_between(&src, &dst, &topo);
            let flow = path.flow(
                name,
                "udp".into(),
                start,
                stop_ns,
                Endpoints::Udp(UdpFlow::new(idx as u32, cfg.clone(), rng)),
                None,
            );
            pending.push(Pending {
                flow,
                crosses_tcp: false,
            });
        }
    }

    // ---- traffic generators: finite transfers drawn from the seed ----
    // Each generator has its own random streams, so adding one leaves the
    // others' draws unchanged.
    let mut generators: Vec<String> = vec![];
    let mut generated_total = 0u64;
    for (i, g) in s.short_flows.iter().enumerate() {
        let field = format!("short_flows[{i}]");
        check_label(&format!("{field}.name"), &g.name)?;
        let (src_router, dst_router) = endpoints_of(&field, g.from, g.to)?;
        let (start_ns, stop_ns) = start_stop(&field, &g.start, &g.stop)?;
        let arrivals_end = stop_ns.unwrap_or(duration_ns).min(duration_ns);
        if !(g.arrival_rate.is_finite() && g.arrival_rate > 0.0 && g.arrival_rate <= 1e6) {
            return err(
                format!("{field}.arrival_rate"),
                format!(
                    "{} is out of range; allowed (0, 1e6] transfers per second",
                    g.arrival_rate
                ),
            );
        }
        let expected = g.arrival_rate * (arrivals_end - start_ns) as f64 / 1e9;
        if generated_total as f64 + expected > MAX_GENERATED as f64 {
            return err(format!("{field}.arrival_rate"), format!("about {expected:.0} transfers; at most {MAX_GENERATED} generated transfers in all; lower the rate or shorten the window"));
        }
        let tr = tcp_setup(&field, &g.cc, g.transport.as_deref(), &g.params, &g.tcp, &g.plt, n_classes)?;
        let cfg = &tr.cfg;
        let mean = size_mean_bytes(
            &format!("{field}.size_mean"),
            &g.size_mean,
            cfg.payload_bytes(),
        )?;
        let shape = pareto_shape(&format!("{field}.size_shape"), g.size_shape)?;
        let hosts = g.hosts.unwrap_or(1);
        if !(1..=10_000).contains(&hosts) {
            return err(
                format!("{field}.hosts"),
                format!("{hosts} is out of range; allowed 1..=10000"),
            );
        }
        let access_delay = opt_or(
            &format!("{field}.access_delay"),
            &g.access_delay,
            a_delay,
            delay,
        )?;
        let delay_jitter = opt_or(
            &format!("{field}.access_delay_jitter"),
            &g.access_delay_jitter,
            0,
            delay,
        )?;
        let name = g.name.clone().unwrap_or_else(|| format!("short{i}"));
        let gen_id = generators.len() as u32;
        let mut jitter_rng = component_rng(seed, RNG_JITTER, 2_000_000 + i as u64);
        let mut paths = Vec::with_capacity(hosts as usize);
        for h in 0..hosts {
            poll(h as usize)?;
            let extra = uniform_below(&mut jitter_rng, delay_jitter);
            let src = attach_host(
                &mut topo,
                format!("{name}.h{h}.src"),
                src_router,
                &access_half(access_delay + extra),
            );
            let dst = attach_host(
                &mut topo,
                format!("{name}.h{h}.dst"),
                dst_router,
                &access_half(a_delay),
            );
            paths.push(path_between(&src, &dst, &topo));
        }
        let mut rng = component_rng(seed, RNG_TRAFFIC, i as u64);
        let arrivals = traffic::poisson_arrivals(&mut rng, g.arrival_rate, start_ns, arrivals_end);
        for (k, &t) in arrivals.iter().enumerate() {
            poll(k)?;
            let size = traffic::pareto_with_mean(&mut rng, mean, shape);
            let flow = generated_flow(
                &paths[k % paths.len()],
                format!("{name}#{k}"),
                &tr,
                b_rate,
                pending.len(),
                t,
                size,
                gen_id,
            );
            pending.push(Pending {
                flow,
                crosses_tcp: false,
            });
        }
        generated_total += arrivals.len() as u64;
        generators.push(name);
    }

    for (i, w) in s.web.iter().enumerate() {
        let field = format!("web[{i}]");
        check_label(&format!("{field}.name"), &w.name)?;
        let (src_router, dst_router) = endpoints_of(&field, w.from, w.to)?;
        let (start_ns, stop_ns) = start_stop(&field, &w.start, &w.stop)?;
        let tr = tcp_setup(&field, &w.cc, w.transport.as_deref(), &w.params, &w.tcp, &w.plt, n_classes)?;
        let cfg = &tr.cfg;
        if !(1..=10_000).contains(&w.sessions) {
            return err(
                format!("{field}.sessions"),
                format!("{} is out of range; allowed 1..=10000", w.sessions),
            );
        }
        if !(1..=1_000_000).contains(&w.pages_per_session) {
            return err(
                format!("{field}.pages_per_session"),
                format!(
                    "{} is out of range; allowed 1..=1000000",
                    w.pages_per_session
                ),
            );
        }
        let objects_per_page = w.objects_per_page.unwrap_or(1.0);
        if !(objects_per_page.is_finite() && (1.0..=10_000.0).contains(&objects_per_page)) {
            return err(
                format!("{field}.objects_per_page"),
                format!("{objects_per_page} is out of range; allowed 1..=10000 (a mean)"),
            );
        }
        let inter_page = duration_in(&format!("{field}.inter_page"), &w.inter_page, 1, MAX_RUN_NS)?;
        let model = WebModel {
            sessions: w.sessions,
            start_ns,
            spread_ns: opt_or(
                &format!("{field}.session_spread"),
                &w.session_spread,
                0,
                run_time,
            )?,
            pages_per_session: w.pages_per_session,
            inter_page_mean_ns: inter_page as f64,
            objects_per_page_mean: objects_per_page,
            inter_object_mean_ns: opt_or(
                &format!("{field}.inter_object"),
                &w.inter_object,
                0,
                run_time,
            )? as f64,
            object_size_mean_bytes: size_mean_bytes(
                &format!("{field}.object_size_mean"),
                &w.object_size_mean,
                cfg.payload_bytes(),
            )?,
            object_size_shape: pareto_shape(
                &format!("{field}.object_size_shape"),
                w.object_size_shape,
            )?,
        };
        let end = stop_ns.unwrap_or(duration_ns).min(duration_ns);
        let expected = f64::from(w.sessions)
            * objects_per_page
            * (f64::from(w.pages_per_session))
                .min((end - start_ns) as f64 / inter_page as f64 + 1.0);
        if generated_total as f64 + expected > MAX_GENERATED as f64 {
            return err(format!("{field}.sessions"), format!("about {expected:.0} objects; at most {MAX_GENERATED} generated transfers in all; use fewer sessions or pages"));
        }
        let access_delay = opt_or(
            &format!("{field}.access_delay"),
            &w.access_delay,
            a_delay,
            delay,
        )?;
        let delay_jitter = opt_or(
            &format!("{field}.access_delay_jitter"),
            &w.access_delay_jitter,
            0,
            delay,
        )?;
        let name = w.name.clone().unwrap_or_else(|| format!("web{i}"));
        let gen_id = generators.len() as u32;
        let mut jitter_rng = component_rng(seed, RNG_JITTER, 3_000_000 + i as u64);
        // One server/client host pair per session, each with its own RTT.
        let mut paths = Vec::with_capacity(w.sessions as usize);
        for h in 0..w.sessions {
            poll(h as usize)?;
            let extra = uniform_below(&mut jitter_rng, delay_jitter);
            let src = attach_host(
                &mut topo,
                format!("{name}.s{h}.server"),
                src_router,
                &access_half(access_delay + extra),
            );
            let dst = attach_host(
                &mut topo,
                format!("{name}.s{h}.client"),
                dst_router,
                &access_half(a_delay),
            );
            paths.push(path_between(&src, &dst, &topo));
        }
        let mut rng = component_rng(seed, RNG_TRAFFIC, 1_000_000 + i as u64);
        let objects = traffic::web_objects(&mut rng, &model, end);
        if generated_total + objects.len() as u64 > MAX_GENERATED {
            return err(format!("{field}.sessions"), format!("{} objects drawn; at most {MAX_GENERATED} generated transfers in all; use fewer sessions or pages", objects.len()));
        }
        for (k, o) in objects.iter().enumerate() {
            poll(k)?;
            let flow = generated_flow(
                &paths[o.session as usize],
                format!("{name}#{k}"),
                &tr,
                b_rate,
                pending.len(),
                o.start_ns,
                o.size_bytes,
                gen_id,
            );
            pending.push(Pending {
                flow,
                crosses_tcp: false,
            });
        }
        generated_total += objects.len() as u64;
        generators.push(name);
    }

    // ---- bottleneck queues, now that RTTs are known ----
    // A BDP-sized queue must hold at least one full-size packet.
    let min_pkt = 1500u64;
    for &(f, r) in &hop_links {
        for l in [f, r] {
            let rtt = bdp_rtt_ns.or_else(|| {
                pending
                    .iter()
                    .filter(|p| {
                        p.crosses_tcp
                            && (p.flow.fwd.contains(&(l as u32))
                                || p.flow.bwd.contains(&(l as u32)))
                    })
                    .map(|p| p.flow.base_rtt_ns)
                    .max()
            });
            let bdp = rtt.map(|r| b_rate.bytes_in(r));
            let q = match &discipline {
                Discipline::DropTail(q) => QueueDiscipline::DropTail(resolve(
                    *q,
                    bdp,
                    "network.bottleneck.queue",
                    min_pkt,
                )?),
                Discipline::Priority(qs) => QueueDiscipline::Priority(
                    qs.iter()
                        .map(|q| resolve(*q, bdp, "network.bottleneck.class_queues", min_pkt))
                        .collect::<Result<_, _>>()?,
                ),
                Discipline::PriorityShared(q, classes) => QueueDiscipline::PriorityShared {
                    limit: resolve(*q, bdp, "network.bottleneck.queue", min_pkt)?,
                    classes: *classes,
                },
            };
            topo.links[l].queue = q;
        }
    }

    let monitored_links: Vec<usize> = hop_links.iter().flat_map(|&(f, r)| [f, r]).collect();
    let flows: Vec<Flow> = pending.into_iter().map(|p| p.flow).collect();
    let estimate = budget::estimate(&RunShape {
        links: &topo.links,
        flows: &flows,
        duration_ns,
        sample_interval_ns,
        monitored_links: &monitored_links,
        bottleneck_links: &monitored_links,
    });
    budget::check(&estimate, opts.memory_budget_bytes)
        .map_err(|(field, message)| ScenarioError { field, message })?;
    let packet_limit = opts
        .memory_budget_bytes
        .saturating_sub(estimate.series_bytes + estimate.flows_bytes)
        / budget::PACKET_BYTES;
    Ok(Simulation::new(SimSetup {
        topology: topo,
        flows,
        duration_ns,
        measure_from_ns,
        sample_interval_ns,
        seed,
        monitored_links,
        generators,
        estimate,
        packet_limit,
    }))
}

/// `name` for a single flow, `name.k` for the k-th of several, else `<kind><index>`.
fn instance_name(name: &Option<String>, count: u32, k: u32, kind: &str, idx: usize) -> String {
    match (name, count) {
        (Some(n), 1) => n.clone(),
        (Some(n), _) => format!("{n}.{k}"),
        (None, _) => format!("{kind}{idx}"),
    }
}

/// A host pair's routes and propagation RTT.
struct PathInfo {
    fwd: Box<[u32]>,
    bwd: Box<[u32]>,
    base_rtt_ns: u64,
}

impl PathInfo {
    fn flow(
        &self,
        name: String,
        algorithm: String,
        start_ns: u64,
        stop_ns: Option<u64>,
        endpoints: Endpoints,
        generated: Option<Generated>,
    ) -> Flow {
        Flow {
            name,
            algorithm,
            start_ns,
            stop_ns,
            fwd: self.fwd.clone(),
            bwd: self.bwd.clone(),
            base_rtt_ns: self.base_rtt_ns,
            endpoints,
            generated,
        }
    }
}

/// One finite transfer of `size_bytes` (rounded up to whole packets).
#[allow(clippy::too_many_arguments)]
fn generated_flow(
    path: &PathInfo,
    name: String,
    t: &TransportSetup,
    bottleneck: Bandwidth,
    idx: usize,
    start_ns: u64,
    size_bytes: f64,
    generator: u32,
) -> Flow {
    let bytes = size_bytes.ceil().clamp(1.0, MAX_TRANSFER_BYTES as f64) as u64;
    let pkts = bytes.div_ceil(t.cfg.payload_bytes());
    let endpoints = t.endpoints(idx, Some(pkts), path, bottleneck);
    path.flow(
        name,
        t.label.clone(),
        start_ns,
        None,
        endpoints,
        Some(Generated {
            generator,
            size_bytes: bytes,
        }),
    )
}

/// One flow entry's checked transport: TCP settings, the controller to
/// build (the HCM's, for PLT) with its parameters, the label results carry,
/// and PLT's settings.
#[derive(Clone, Debug)]
struct TransportSetup {
    cfg: TcpConfig,
    cc: String,
    params: CcParams,
    label: String,
    plt: Option<PltSetup>,
}

#[derive(Clone, Debug)]
struct PltSetup {
    cfg: PltConfig,
    /// The LCM's first window: a fraction of the path's BDP, or packets.
    initial: InitialLcmWindow,
}

#[derive(Clone, Copy, Debug)]
enum InitialLcmWindow {
    Bdp(f64),
    Packets(u64),
}

impl TransportSetup {
    /// The endpoints of flow `idx` on `path` (whose links run at `bottleneck`).
    fn endpoints(&self, idx: usize, total_pkts: Option<u64>, path: &PathInfo, bottleneck: Bandwidth) -> Endpoints {
        let cc = longfat_cc::build(&self.cc, &self.params, self.cfg.initial_window).expect("checked in tcp_setup");
        let flow = idx as u32;
        match &self.plt {
            None => Endpoints::Tcp {
                sender: Box::new(TcpSender::new(flow, self.cfg.clone(), cc, total_pkts)),
                // One NAPI poll lasts as long as `gro_segments` packets take
                // at the bottleneck (docs/algorithms.md, "Linux's receiver").
                receiver: TcpReceiver::new(flow, self.cfg.clone()).with_gro(
                    bottleneck.tx_time_ns(u64::from(self.cfg.gro_segments) * u64::from(self.cfg.packet_size_bytes)),
                ),
            },
            Some(p) => {
                let mut plt = p.cfg.clone();
                plt.lcm_initial_window_pkts = match p.initial {
                    InitialLcmWindow::Packets(n) => n as f64,
                    InitialLcmWindow::Bdp(f) => {
                        let bdp = bottleneck.bytes_in(path.base_rtt_ns) as f64 / f64::from(self.cfg.packet_size_bytes);
                        (bdp * f).round().max(1.0)
                    }
                };
                Endpoints::Plt {
                    sender: Box::new(PltSender::new(flow, self.cfg.clone(), &plt, cc, total_pkts)),
                    receiver: Box::new(PltReceiver::new(flow, self.cfg.clone(), &plt)),
                }
            }
        }
    }
}

/// The TCP settings, checked controller parameters and PLT settings of one
/// flow entry.
fn tcp_setup(
    field: &str,
    cc: &str,
    transport: Option<&str>,
    params: &BTreeMap<String, f64>,
    tcp: &TcpCfg,
    plt: &Option<PltCfg>,
    n_classes: u32,
) -> Result<TransportSetup, ScenarioError> {
    let cfg = tcp_config(&format!("{field}.tcp"), tcp, n_classes)?;
    // PLT is a transport: `transport = "plt"` runs `cc` as the HCM's
    // controller. `cc = "plt"` is its older spelling and means exactly
    // `transport = "plt"` with the HCM's controller in `plt.hcm` (default
    // "reno"); results label both "plt" (Reno HCM) or "plt-<hcm>".
    let is_plt = match transport {
        None => cc == "plt",
        Some("plt") => true,
        Some("tcp") if cc == "plt" => return err(format!("{field}.cc"), "\"plt\" is the alias of transport = \"plt\", which contradicts transport = \"tcp\"; allowed with \"tcp\": a window controller (`longfat algorithms`)"),
        Some("tcp") => false,
        Some(t) => return err(format!("{field}.transport"), format!("{t:?} is not a transport; allowed: \"tcp\", \"plt\"")),
    };
    let (plt, controller) = match (is_plt, plt) {
        (true, p) => {
            // PLT's connection buffers its two modules' data in
            // `plt.receive_buffer`; an untuned Linux host's autotuned
            // buffers are not modelled for it (never accept and ignore).
            if cfg.default_host {
                return err(format!("{field}.tcp.host"), "\"default\" (Linux's default tcp_rmem/tcp_wmem) is not modelled for PLT (transport = \"plt\" or cc = \"plt\"), whose receiver's buffer is plt.receive_buffer; allowed: \"tuned\"");
            }
            if cfg.gro_segments > 1 {
                return err(format!("{field}.tcp.gro_segments"), "GRO is not modelled for PLT (transport = \"plt\" or cc = \"plt\"; its receiver reassembles two modules' packets); allowed: 1 (off)");
            }
            let p = p.clone().unwrap_or_default();
            let selector = format!("{field}.{}", if transport.is_some() { "transport" } else { "cc" });
            let setup = plt_setup(&format!("{field}.plt"), &selector, &p, tcp, &cfg, n_classes)?;
            let hcm = match (cc, p.hcm) {
                ("plt", hcm) => hcm.unwrap_or_else(|| "reno".to_string()),
                (_, Some(_)) => return err(format!("{field}.plt.hcm"), format!("with transport = \"plt\" the HCM runs cc ({cc:?}); plt.hcm goes with the alias cc = \"plt\" only")),
                (_, None) => cc.to_string(),
            };
            (Some(setup), hcm)
        }
        (false, Some(_)) => return err(format!("{field}.plt"), format!("only with transport = \"plt\" (or its alias cc = \"plt\"); this entry has cc = {cc:?}")),
        (false, None) => (None, cc.to_string()),
    };
    if plt.is_some() && controller == "plt" {
        return err(format!("{field}.plt.hcm"), "the HCM runs a window controller (reno, cubic, ...), not \"plt\"");
    }
    let cc_field = if plt.is_some() { format!("{field}.plt.hcm") } else { format!("{field}.cc") };
    let cc = controller.as_str();
    // eHSTCP's one-way delays (ehstcp.md §3: "By using the TCP timestamp
    // option") and TCP-GT's RTTM (tcp-gt.md §III) are defined on the
    // timestamp option.
    if !cfg.timestamps && matches!(cc, "ehstcp" | "tcpgt") {
        return err(format!("{field}.tcp.timestamps"), format!("false does not fit cc = {cc:?}, which measures delay with the TCP timestamp option; set timestamps = true"));
    }
    let mut params: CcParams = params.clone();
    // The profile's variant of the algorithm (Linux's modules), unless the
    // scenario sets the parameter itself.
    let mut implied = Vec::new();
    for &(k, v) in cfg.profile.cc_defaults(cc) {
        if !params.contains_key(k) {
            params.insert(k.to_string(), v);
            implied.push(format!("{k} = {v}"));
        }
    }
    for (k, v) in &params {
        if !v.is_finite() {
            return err(format!("{field}.params.{k}"), "must be a finite number");
        }
    }
    // Check the algorithm and its parameters once, with the field names.
    longfat_cc::build(cc, &params, cfg.initial_window).map_err(|e| ScenarioError {
        field: if e.field == "cc" { cc_field.clone() } else { format!("{field}.{}", e.field) },
        message: if implied.is_empty() {
            e.message
        } else {
            format!(
                "{} (tcp.profile = \"{}\" implies {}; set them in params to override)",
                e.message,
                cfg.profile,
                implied.join(", ")
            )
        },
    })?;
    let label = match &plt {
        None => cc.to_string(),
        Some(_) if cc == "reno" => "plt".to_string(),
        Some(_) => format!("plt-{cc}"),
    };
    Ok(TransportSetup {
        cfg,
        cc: cc.to_string(),
        params,
        label,
        plt,
    })
}

/// PLT's settings, each checked with its field name. The LCM sends in the
/// class below the HCM's, so the bottleneck must be strict priority: on a
/// FIFO one the LCM would compete with TCP as an equal, which is not PLT.
/// `selector`: the field that chose PLT (`transport`, or its alias `cc`).
fn plt_setup(field: &str, selector: &str, p: &PltCfg, tcp: &TcpCfg, cfg: &TcpConfig, n_classes: u32) -> Result<PltSetup, ScenarioError> {
    let lcm_class = u32::from(cfg.class) + 1;
    if n_classes < 2 {
        return err(
            selector,
            "PLT (transport = \"plt\" or cc = \"plt\") sends its LCM packets at a lower priority; it needs network.bottleneck.discipline = \"priority\" (a FIFO bottleneck would let them compete with TCP as equals)",
        );
    }
    if lcm_class >= n_classes {
        return err(
            field.trim_end_matches(".plt").to_string() + ".tcp.priority_class",
            format!("the LCM sends in the class below the HCM's ({lcm_class}), which does not exist; the bottleneck has classes 0..={}", n_classes - 1),
        );
    }
    let d = LcmConfig::default();
    let lcm = LcmConfig {
        alpha: p.alpha.unwrap_or(d.alpha),
        beta: p.beta.unwrap_or(d.beta),
        gamma: p.gamma.unwrap_or(d.gamma),
        mu: p.mu.unwrap_or(d.mu),
        ema_weight: p.ema_weight.unwrap_or(d.ema_weight),
    };
    lcm.validate().or_else(|e| err(format!("{field}.{}", e.name), e.message))?;
    let epoch_ns = match &p.epoch {
        Some(e) => duration_in(&format!("{field}.epoch"), e, 1_000_000, 60_000_000_000)?,
        None => 100_000_000,
    };
    let init_field = format!("{field}.lcm_initial_window");
    let initial = match &p.lcm_initial_window {
        None => InitialLcmWindow::Bdp(1.0),
        Some(w) => match parse_size(w).or_else(|m| err(&init_field, m))? {
            SizeSpec::Bdp(f) if f > 0.0 && f <= 100.0 => InitialLcmWindow::Bdp(f),
            SizeSpec::Packets(n) if (1..=10_000_000).contains(&n) => InitialLcmWindow::Packets(n),
            _ => return err(&init_field, format!("{w:?} is out of range; allowed a BDP fraction in (0, 100] (\"1bdp\") or 1..=10000000 packets (\"100pkt\")")),
        },
    };
    let ack_every = p.lcm_ack_every.unwrap_or(1);
    if !(1..=64).contains(&ack_every) {
        return err(format!("{field}.lcm_ack_every"), format!("{ack_every} is out of range; allowed 1..=64"));
    }
    let lcm_ack_class = match p.lcm_ack_class.as_deref() {
        None | Some("low") => lcm_class as u8,
        Some("high") => cfg.class,
        Some(o) => return err(format!("{field}.lcm_ack_class"), format!("unknown class {o:?}; allowed: \"low\", \"high\"")),
    };
    // The receiver's buffer for the connection's data, in packets.
    let payload = cfg.payload_bytes();
    let largest = MAX_WINDOW_BYTES / payload;
    let buf_field = format!("{field}.receive_buffer");
    let receive_buffer_pkts = match p.receive_buffer.as_deref() {
        None | Some("unlimited") => largest,
        Some(v) => match parse_size(v).or_else(|m| err(&buf_field, m))? {
            SizeSpec::Packets(n) if (1..=largest).contains(&n) => n,
            SizeSpec::Bytes(b) if (payload..=MAX_WINDOW_BYTES).contains(&b) => b / payload,
            _ => return err(&buf_field, format!("{v:?} is out of range; allowed 1 packet ..= {MAX_WINDOW_BYTES} bytes (RFC 7323's largest window), or \"unlimited\"")),
        },
    };
    let lcm_resend_ratio = match p.lcm_resend {
        None => None,
        Some(r) if r.is_finite() && r > 0.0 && r <= 1e6 => Some(r),
        Some(r) => return err(format!("{field}.lcm_resend"), format!("{r} is out of range; allowed (0, 1e6] (times the HCM's window), or leave it out: never")),
    };
    Ok(PltSetup {
        cfg: PltConfig {
            lcm,
            epoch_ns,
            lcm_initial_window_pkts: 0.0,
            lcm_class: lcm_class as u8,
            lcm_ack_class,
            lcm_ack_every_pkts: ack_every,
            // `tcp.delayed_ack_timeout` (checked in `tcp_config`) or the
            // profile's, whether or not the HCM's receiver delays its ACKs.
            lcm_ack_timeout_ns: match &tcp.delayed_ack_timeout {
                Some(v) => parse_duration_ns(v).expect("checked in tcp_config"),
                None => cfg.profile.delayed_ack_timeout_ns(),
            },
            receive_buffer_pkts,
            lcm_resend_ratio,
        },
        initial,
    })
}

/// Uniform in [0, max_ns) (0 when max_ns is 0).
fn uniform_below(rng: &mut Xoshiro256PlusPlus, max_ns: u64) -> u64 {
    if max_ns == 0 {
        0
    } else {
        rng.next_u64() % max_ns
    }
}

/// A transfer size in whole packets of `payload` bytes ("10MB", "1000pkt").
fn transfer_pkts(field: &str, s: &str, payload: u64) -> Result<u64, ScenarioError> {
    let bytes =
        match parse_size(s).or_else(|m| err(field, m))? {
            SizeSpec::Packets(n) if n > 0 => n.checked_mul(payload),
            SizeSpec::Bytes(b) if b > 0 => Some(b),
            _ => return err(
                field,
                format!(
                    "{s:?}: give a positive size in bytes or packets (e.g. \"10MB\", \"1000pkt\")"
                ),
            ),
        };
    match bytes {
        Some(b) if b <= MAX_TRANSFER_BYTES => Ok(b.div_ceil(payload)),
        _ => err(
            field,
            format!("{s:?} is out of range; at most {MAX_TRANSFER_BYTES} bytes (1PB)"),
        ),
    }
}

/// A mean transfer size in bytes ("30KB", or "20pkt" of full payloads).
fn size_mean_bytes(field: &str, s: &str, payload: u64) -> Result<f64, ScenarioError> {
    transfer_pkts(field, s, 1).map_err(|_| ScenarioError {
        field: field.into(),
        message: format!("{s:?}: give a positive mean size in bytes or packets (e.g. \"3000B\", \"12pkt\"), at most {MAX_TRANSFER_BYTES} bytes"),
    })?;
    let bytes = match parse_size(s).or_else(|m| err(field, m))? {
        SizeSpec::Bytes(b) => b as f64,
        SizeSpec::Packets(n) => n as f64 * payload as f64,
        SizeSpec::Bdp(_) => unreachable!("refused by transfer_pkts"),
    };
    if bytes > MAX_TRANSFER_BYTES as f64 {
        return err(
            field,
            format!("{s:?} is out of range; at most {MAX_TRANSFER_BYTES} bytes (1PB)"),
        );
    }
    Ok(bytes)
}

fn pareto_shape(field: &str, v: Option<f64>) -> Result<f64, ScenarioError> {
    let shape = v.unwrap_or(1.2);
    if !(shape.is_finite() && shape > 1.0 && shape <= 100.0) {
        return err(
            field,
            format!("{shape} is out of range; a Pareto shape must be in (1, 100] (finite mean)"),
        );
    }
    Ok(shape)
}

fn class(field: &str, c: Option<u32>, n_classes: u32) -> Result<u8, ScenarioError> {
    let c = c.unwrap_or(0);
    if c >= n_classes.max(1) && !(n_classes == 1 && c == 0) {
        return err(
            field,
            format!(
                "class {c} does not exist; the bottleneck has classes 0..={}",
                n_classes - 1
            ),
        );
    }
    Ok(c as u8)
}

fn tcp_config(field: &str, t: &TcpCfg, n_classes: u32) -> Result<TcpConfig, ScenarioError> {
    let d = TcpConfig::default();
    let f = |name: &str| format!("{field}.{name}");
    let profile = match t.profile.as_deref() {
        None => Profile::default(),
        Some(name) => Profile::parse(name).ok_or_else(|| ScenarioError {
            field: f("profile"),
            message: format!("{name:?} is not a transport profile; known: {}", PROFILES.join(", ")),
        })?,
    };
    let default_host = match t.host.as_deref() {
        None | Some("tuned") => false,
        Some("default") if profile == Profile::Linux => true,
        Some("default") => return err(f("host"), format!("\"default\" (Linux's default tcp_rmem/tcp_wmem) needs profile = \"linux\" (this flow runs \"{profile}\"); allowed: \"tuned\"")),
        Some(h) => return err(f("host"), format!("{h:?} is not a host; allowed: \"tuned\" (unlimited buffers), \"default\" (Linux's default tcp_rmem/tcp_wmem, profile = \"linux\")")),
    };
    // ns-2.35 `ns-default.tcl`: `Agent/TCP set timestamps_ false`.
    let timestamps = match (t.timestamps, profile) {
        (Some(false), Profile::Rfc | Profile::Linux) => return err(f("timestamps"), format!("false (ns-2's one timed segment per round trip) needs profile = \"ns2\" (this flow runs \"{profile}\", which always samples timestamps); allowed: true")),
        (Some(v), _) => v,
        (None, p) => p != Profile::Ns2,
    };
    let max_burst = match t.max_burst {
        None => None,
        Some(n) if (1..=MAX_BURST_PKTS).contains(&n) => Some(n as u32),
        Some(n) => return err(f("max_burst"), format!("{n} is out of range; allowed 1..={MAX_BURST_PKTS} packets (omit for no limit)")),
    };
    let packet = match &t.packet_size {
        Some(v) => bytes(&f("packet_size"), v, 64, 65_535)?,
        None => u64::from(d.packet_size_bytes),
    };
    let header = match &t.header_size {
        Some(v) => bytes(&f("header_size"), v, 0, 1024)?,
        None => u64::from(d.header_bytes),
    };
    if header >= packet {
        return err(
            f("header_size"),
            format!(
                "{header} bytes leaves no payload in a {packet}-byte packet; must be < packet_size"
            ),
        );
    }
    let payload = packet - header;
    let ack = match &t.ack_size {
        Some(v) => bytes(&f("ack_size"), v, 20, 65_535)?,
        None => u64::from(d.ack_size_bytes),
    };
    // Linux's `ato` lies between TCP_ATO_MIN (this) and TCP_DELACK_MAX.
    let max_delack_ns = match profile {
        Profile::Linux => TCP_DELACK_MAX_NS,
        _ => MAX_DELAY_NS,
    };
    let delack_timeout = match &t.delayed_ack_timeout {
        Some(v) => duration_in(&f("delayed_ack_timeout"), v, 1, max_delack_ns)?,
        None => profile.delayed_ack_timeout_ns(),
    };
    // The largest window TCP can advertise (RFC 7323), in packets.
    let max_window_pkts = MAX_WINDOW_BYTES / payload;
    let rwnd = match t.rwnd.as_deref() {
        None | Some("unlimited") => max_window_pkts,
        Some(v) => match parse_size(v).or_else(|m| err(f("rwnd"), m))? {
            SizeSpec::Packets(n) if (1..=max_window_pkts).contains(&n) => n,
            SizeSpec::Bytes(b) if (packet..=MAX_WINDOW_BYTES).contains(&b) => b / payload,
            _ => {
                return err(
                    f("rwnd"),
                    format!("{v:?} is out of range; give 1..={max_window_pkts} packets (\"20000pkt\"), {packet}..={MAX_WINDOW_BYTES} bytes (TCP's largest window, RFC 7323), or \"unlimited\" (that largest window)"),
                )
            }
        },
    };
    // GRO merges while the merged skb stays below gro_max_size (64 KB:
    // net/core/gro.c `skb_gro_receive`, `p->len + len >= gro_max_size`
    // refuses; headers counted once) and 64 segments (tcp_offload.c).
    let max_gro = ((GRO_MAX_SIZE_BYTES - 1 - header) / payload).clamp(1, MAX_GRO_SEGMENTS);
    let gro_segments = match t.gro_segments {
        None | Some(1) => 1,
        Some(_) if profile != Profile::Linux => {
            return err(f("gro_segments"), format!("GRO's stretch ACKs model Linux's receiver; needs profile = \"linux\" (this flow runs \"{profile}\"); allowed here: 1 (off)"))
        }
        Some(n) if (1..=max_gro).contains(&n) => n as u32,
        Some(n) => return err(f("gro_segments"), format!("{n} is out of range; allowed 1..={max_gro} segments ({payload}-byte payloads within GRO's 64 KB, at most {MAX_GRO_SEGMENTS})")),
    };
    let min_rto = opt_or(&f("min_rto"), &t.min_rto, d.min_rto_ns, delay)?;
    let max_rto = match &t.max_rto {
        Some(v) => duration_in(&f("max_rto"), v, MIN_RTO_CEILING_NS, MAX_DELAY_NS)?,
        None => profile.max_rto_ns(),
    };
    let initial_rto = match &t.initial_rto {
        Some(v) => duration_in(&f("initial_rto"), v, MIN_RTO_CEILING_NS, MAX_DELAY_NS)?,
        None => profile.initial_rto_ns(),
    };
    if min_rto > max_rto {
        return err(
            f("min_rto"),
            format!(
                "{} is above max_rto ({}); must be <= max_rto",
                fmt_ns(min_rto),
                fmt_ns(max_rto)
            ),
        );
    }
    let cwnd = t.initial_cwnd.unwrap_or(profile.initial_cwnd_pkts());
    if !(cwnd.is_finite() && (1.0..=MAX_INITIAL_CWND_PKTS).contains(&cwnd)) {
        return err(
            f("initial_cwnd"),
            format!("{cwnd} is out of range; allowed 1..=1e6 packets"),
        );
    }
    if let Some(v) = t.initial_ssthresh {
        if v.is_nan() || v < 2.0 {
            return err(
                f("initial_ssthresh"),
                format!("{v} is out of range; must be >= 2 packets (omit for the profile's: unlimited, ns2 rwnd)"),
            );
        }
    }
    let ssthresh = t.initial_ssthresh.unwrap_or(profile.initial_ssthresh_pkts(rwnd));
    let offset = |name: &str, v: &Option<String>| match v {
        Some(v) => duration_in(&f(name), v, 0, MAX_CLOCK_OFFSET_NS),
        None => Ok(0),
    };
    Ok(TcpConfig {
        packet_size_bytes: packet as u32,
        header_bytes: header as u32,
        ack_size_bytes: ack as u32,
        delayed_ack_timeout_ns: t
            .delayed_ack
            .unwrap_or(profile.delays_acks())
            .then_some(delack_timeout),
        delayed_ack_every_pkts: 2,
        linux_acks: profile == Profile::Linux,
        default_host,
        gro_segments,
        rwnd_pkts: rwnd,
        initial_rto_ns: initial_rto,
        min_rto_ns: min_rto,
        max_rto_ns: max_rto,
        initial_window: InitialWindow {
            cwnd_pkts: cwnd,
            ssthresh_pkts: ssthresh,
        },
        sender_clock_offset_ns: offset("sender_clock_offset", &t.sender_clock_offset)?,
        receiver_clock_offset_ns: offset("receiver_clock_offset", &t.receiver_clock_offset)?,
        class: class(&f("priority_class"), t.priority_class, n_classes)?,
        profile,
        max_burst_pkts: max_burst,
        timestamps,
    })
}

fn udp_config(field: &str, u: &UdpSpec, n_classes: u32) -> Result<UdpConfig, ScenarioError> {
    let f = |name: &str| format!("{field}.{name}");
    let r = rate(&f("rate"), &u.rate)?;
    let size = match &u.packet_size {
        Some(v) => bytes(&f("packet_size"), v, 20, 65_535)?,
        None => 1500,
    };
    let pattern = match u.pattern.as_str() {
        "cbr" => {
            for (name, set) in [
                ("on_mean", u.on_mean.is_some()),
                ("off_mean", u.off_mean.is_some()),
                ("distribution", u.distribution.is_some()),
                ("shape", u.shape.is_some()),
            ] {
                if set {
                    return err(f(name), "only for pattern = \"onoff\"");
                }
            }
            UdpPattern::Cbr
        }
        "onoff" => {
            let on = duration_in(
                &f("on_mean"),
                u.on_mean.as_deref().unwrap_or("1s"),
                1,
                MAX_RUN_NS,
            )?;
            let off = run_time(&f("off_mean"), u.off_mean.as_deref().unwrap_or("1s"))?;
            let dist = match u.distribution.as_deref().unwrap_or("exponential") {
                "exponential" => {
                    if u.shape.is_some() {
                        return err(f("shape"), "only for distribution = \"pareto\"");
                    }
                    PeriodDist::Exponential
                }
                "pareto" => {
                    let shape = u.shape.unwrap_or(1.5);
                    if !(shape.is_finite() && shape > 1.0 && shape <= 100.0) {
                        return err(f("shape"), format!("{shape} is out of range; a Pareto shape must be in (1, 100] (finite mean)"));
                    }
                    PeriodDist::Pareto { shape }
                }
                d => {
                    return err(
                        f("distribution"),
                        format!("unknown distribution {d:?}; allowed: \"exponential\", \"pareto\""),
                    )
                }
            };
            UdpPattern::OnOff {
                on_mean_ns: on,
                off_mean_ns: off,
                dist,
            }
        }
        p => {
            return err(
                f("pattern"),
                format!("unknown pattern {p:?}; allowed: \"cbr\", \"onoff\""),
            )
        }
    };
    Ok(UdpConfig {
        rate: r,
        packet_size_bytes: size as u32,
        pattern,
        class: class(&f("priority_class"), u.priority_class, n_classes)?,
    })
}
