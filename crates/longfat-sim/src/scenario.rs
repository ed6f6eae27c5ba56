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

use crate::sim::{component_rng, Endpoints, Flow, Generated, SimSetup, Simulation, RNG_JITTER, RNG_TRAFFIC, RNG_UDP};
use crate::traffic::{self, WebModel};
use crate::tcp::receiver::TcpReceiver;
use crate::tcp::sender::TcpSender;
use crate::tcp::TcpConfig;
use crate::topology::{attach_host, router_chain, HalfLink, Topology};
use crate::udp::{PeriodDist, UdpConfig, UdpFlow, UdpPattern};
use crate::units::{parse_bandwidth, parse_duration_ns, parse_size, Bandwidth, SizeSpec};

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
    Err(ScenarioError { field: field.into(), message: message.into() })
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
}

/// Finite TCP transfers with Poisson arrivals and Pareto sizes.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ShortFlowSpec {
    pub name: Option<String>,
    pub cc: String,
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
}

/// ns-2 WebTraf-style web sessions (see `traffic::WebModel`).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct WebSpec {
    pub name: Option<String>,
    pub cc: String,
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
            let mut message = e.inner().to_string().split(" at line").next().unwrap_or_default().to_string();
            if message.ends_with("expected a string") {
                message.push_str(" (quote the value and give its unit, e.g. \"70ms\", \"1Gbps\", \"6000pkt\")");
            } else if message.ends_with("expected u64") || message.ends_with("expected u32") {
                message.push_str(" (a whole number >= 0)");
            }
            ScenarioError { field: e.path().to_string().trim_start_matches('.').to_string(), message }
        })
    }

    pub fn from_toml(text: &str) -> Result<Self, ScenarioError> {
        let value: toml::Value = toml::from_str(text)
            .map_err(|e| ScenarioError { field: String::new(), message: format!("TOML syntax: {e}") })?;
        let json = serde_json::to_string(&value).expect("TOML values convert to JSON");
        Self::from_json(&json)
    }
}

// ---- field parsers that attach the field name -------------------------------

fn duration(field: &str, s: &str) -> Result<u64, ScenarioError> {
    parse_duration_ns(s).or_else(|m| err(field, m))
}

fn rate(field: &str, s: &str) -> Result<Bandwidth, ScenarioError> {
    parse_bandwidth(s).or_else(|m| err(field, m))
}

/// A size in bytes (packets not allowed): packet and ACK sizes.
fn bytes(field: &str, s: &str, min: u64, max: u64) -> Result<u64, ScenarioError> {
    match parse_size(s).or_else(|m| err(field, m))? {
        SizeSpec::Bytes(b) if (min..=max).contains(&b) => Ok(b),
        SizeSpec::Bytes(b) => err(field, format!("{b} bytes is out of range; allowed {min}..={max} bytes")),
        _ => err(field, format!("{s:?}: give a size in bytes (e.g. \"1500B\")")),
    }
}

fn probability(field: &str, p: Option<f64>) -> Result<f64, ScenarioError> {
    let p = p.unwrap_or(0.0);
    if !(0.0..1.0).contains(&p) {
        return err(field, format!("{p} is out of range; a loss probability must be in [0, 1)"));
    }
    Ok(p)
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
        SizeSpec::Bdp(f) if f <= 0.0 => err(field, format!("{s:?}: a BDP fraction must be > 0")),
        SizeSpec::Packets(n) => Ok(QueueSize::Limit(QueueLimit::Packets(n))),
        SizeSpec::Bytes(b) => Ok(QueueSize::Limit(QueueLimit::Bytes(b))),
        SizeSpec::Bdp(f) => Ok(QueueSize::Bdp(f)),
    }
}

enum Discipline {
    DropTail(QueueSize),
    Priority(Vec<QueueSize>),
}

fn resolve(q: QueueSize, bdp_bytes: Option<u64>, field: &str, min_bytes: u64) -> Result<QueueLimit, ScenarioError> {
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

const MAX_CLASSES: u32 = 8;
const MAX_FLOWS: u64 = 100_000;
const MAX_SAMPLES: u64 = 20_000_000;
const MAX_GENERATED: u64 = 300_000;

/// Validates the scenario and builds a ready-to-run simulation. `seed`
/// overrides `run.seed`.
pub fn build(s: &Scenario) -> Result<Simulation, ScenarioError> {
    // ---- run ----
    let duration_ns = duration("run.duration", &s.run.duration)?;
    if duration_ns == 0 {
        return err("run.duration", "must be > 0");
    }
    let measure_from_ns = match &s.run.measure_from {
        Some(m) => duration("run.measure_from", m)?,
        None => 0,
    };
    if measure_from_ns >= duration_ns {
        return err("run.measure_from", format!("{:?} must be before run.duration ({})", s.run.measure_from.as_deref().unwrap_or(""), s.run.duration));
    }
    let sample_interval_ns = match &s.run.sample_interval {
        Some(v) => duration("run.sample_interval", v)?,
        None => (duration_ns / 1000).max(1_000_000).min(duration_ns),
    };
    if sample_interval_ns == 0 || sample_interval_ns > duration_ns {
        return err("run.sample_interval", format!("must be > 0 and at most run.duration ({})", s.run.duration));
    }
    let seed = s.run.seed.unwrap_or(1);

    // ---- network ----
    let net = &s.network;
    let hops = match (net.topology.as_str(), net.hops) {
        ("dumbbell", None | Some(1)) => 1usize,
        ("dumbbell", Some(h)) => return err("network.hops", format!("{h}: a dumbbell has exactly 1 bottleneck; use topology = \"parking_lot\" for more")),
        ("parking_lot", Some(h)) if (2..=64).contains(&h) => h as usize,
        ("parking_lot", Some(h)) => return err("network.hops", format!("{h} is out of range; a parking lot has 2..=64 bottlenecks")),
        ("parking_lot", None) => return err("network.hops", "required for a parking lot (2..=64)"),
        (t, _) => return err("network.topology", format!("unknown topology {t:?}; allowed: \"dumbbell\", \"parking_lot\"")),
    };
    let b = &net.bottleneck;
    let b_rate = rate("network.bottleneck.rate", &b.rate)?;
    let b_delay = duration("network.bottleneck.delay", &b.delay)?;
    let b_queue = queue_size("network.bottleneck.queue", &b.queue)?;
    let discipline = match b.discipline.as_deref().unwrap_or("droptail") {
        "droptail" => {
            if b.classes.is_some() || b.class_queues.is_some() {
                return err("network.bottleneck.classes", "only for discipline = \"priority\"");
            }
            Discipline::DropTail(b_queue)
        }
        "priority" => {
            let n = b.classes.unwrap_or(2);
            if !(1..=MAX_CLASSES).contains(&n) {
                return err("network.bottleneck.classes", format!("{n} is out of range; allowed 1..={MAX_CLASSES}"));
            }
            match &b.class_queues {
                None => Discipline::Priority(vec![b_queue; n as usize]),
                Some(qs) if qs.len() == n as usize => Discipline::Priority(
                    qs.iter()
                        .enumerate()
                        .map(|(i, q)| queue_size(&format!("network.bottleneck.class_queues[{i}]"), q))
                        .collect::<Result<_, _>>()?,
                ),
                Some(qs) => return err("network.bottleneck.class_queues", format!("has {} entries; needs one per class ({n})", qs.len())),
            }
        }
        d => return err("network.bottleneck.discipline", format!("unknown discipline {d:?}; allowed: \"droptail\", \"priority\"")),
    };
    let n_classes = match &discipline {
        Discipline::DropTail(_) => 1,
        Discipline::Priority(v) => v.len() as u32,
    };
    let loss_fwd = probability("network.bottleneck.loss", b.loss)?;
    let loss_rev = probability("network.bottleneck.reverse_loss", b.reverse_loss)?;
    let access = net.access.clone().unwrap_or_default();
    let a_rate = match &access.rate {
        Some(r) => rate("network.access.rate", r)?,
        None => Bandwidth::from_bps(b_rate.bps().saturating_mul(10)),
    };
    let a_delay = match &access.delay {
        Some(d) => duration("network.access.delay", d)?,
        None => 0,
    };
    let a_queue = match &access.queue {
        Some(q) => match queue_size("network.access.queue", q)? {
            QueueSize::Limit(l) => l,
            QueueSize::Bdp(_) => return err("network.access.queue", "\"bdp\" sizes apply to bottleneck links only"),
        },
        None => QueueLimit::Packets(u64::MAX),
    };
    let bdp_rtt_ns = match &net.bdp_rtt {
        Some(r) => match duration("network.bdp_rtt", r)? {
            0 => return err("network.bdp_rtt", "must be > 0"),
            v => Some(v),
        },
        None => None,
    };

    let mut topo = Topology::new();
    let placeholder = QueueDiscipline::DropTail(QueueLimit::Packets(1));
    let half = |loss: f64| HalfLink { rate: b_rate, delay_ns: b_delay, queue: placeholder.clone(), loss_prob: loss };
    let (routers, hop_links) = router_chain(&mut topo, hops, &half(loss_fwd), &half(loss_rev));
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
    let total: u64 = s.flows.iter().map(|f| u64::from(f.count.unwrap_or(1))).sum::<u64>()
        + s.udp.iter().map(|u| u64::from(u.count.unwrap_or(1))).sum::<u64>();
    if total > MAX_FLOWS {
        return err("flows", format!("{total} flows in all; at most {MAX_FLOWS}"));
    }
    if duration_ns / sample_interval_ns * total.max(1) > MAX_SAMPLES {
        return err("run.sample_interval", format!("too fine for {total} flows over {}: more than {MAX_SAMPLES} samples; use a longer interval", s.run.duration));
    }

    struct Pending {
        flow: Flow,
        crosses_tcp: bool,
    }
    let mut pending: Vec<Pending> = vec![];
    let endpoints_of = |field: &str, from: Option<u32>, to: Option<u32>| -> Result<(usize, usize), ScenarioError> {
        let from = from.unwrap_or(0);
        let to = to.unwrap_or(hops as u32);
        for (name, v) in [("from", from), ("to", to)] {
            if v as usize > hops {
                return err(format!("{field}.{name}"), format!("router {v} does not exist; routers are 0..={hops}"));
            }
        }
        if from == to {
            return err(format!("{field}.to"), format!("same router as from ({from}); a flow must cross at least one bottleneck"));
        }
        Ok((routers[from as usize], routers[to as usize]))
    };
    let start_stop = |field: &str, start: &Option<String>, stop: &Option<String>| -> Result<(u64, Option<u64>), ScenarioError> {
        let start_ns = match start {
            Some(v) => duration(&format!("{field}.start"), v)?,
            None => 0,
        };
        if start_ns >= duration_ns {
            return err(format!("{field}.start"), format!("{:?} is at or after the end of the run (run.duration = {}); must be earlier", start.as_deref().unwrap_or(""), s.run.duration));
        }
        let stop_ns = match stop {
            Some(v) => {
                let t = duration(&format!("{field}.stop"), v)?;
                if t <= start_ns {
                    return err(format!("{field}.stop"), "must be after start");
                }
                Some(t)
            }
            None => None,
        };
        Ok((start_ns, stop_ns))
    };

    for (i, f) in s.flows.iter().enumerate() {
        let field = format!("flows[{i}]");
        let count = f.count.unwrap_or(1);
        if count == 0 {
            return err(format!("{field}.count"), "must be >= 1");
        }
        let (src_router, dst_router) = endpoints_of(&field, f.from, f.to)?;
        let (start_ns, stop_ns) = start_stop(&field, &f.start, &f.stop)?;
        let spacing = match &f.start_spacing {
            Some(v) => duration(&format!("{field}.start_spacing"), v)?,
            None => 0,
        };
        let start_jitter = optional_duration(&format!("{field}.start_jitter"), &f.start_jitter)?;
        let last_start = start_ns + spacing * u64::from(count - 1) + start_jitter;
        if last_start >= duration_ns {
            return err(
                format!("{field}.{}", if start_jitter > 0 { "start_jitter" } else { "start_spacing" }),
                format!("the last of {count} flows could start at {:.3}s, at or after the end of the run", last_start as f64 / 1e9),
            );
        }
        let (cfg, params) = tcp_setup(&field, &f.cc, &f.params, &f.tcp, n_classes)?;
        let total_pkts = match &f.size {
            None => None,
            Some(sz) => Some(match parse_size(sz).or_else(|m| err(format!("{field}.size"), m))? {
                SizeSpec::Packets(n) if n > 0 => n,
                SizeSpec::Bytes(b) if b > 0 => b.div_ceil(cfg.payload_bytes()),
                _ => return err(format!("{field}.size"), format!("{sz:?}: give a positive size in bytes or packets (e.g. \"10MB\", \"1000pkt\")")),
            }),
        };
        let access_delay = duration_or(&format!("{field}.access_delay"), &f.access_delay, a_delay)?;
        let delay_jitter = optional_duration(&format!("{field}.access_delay_jitter"), &f.access_delay_jitter)?;
        let mut jitter_rng = component_rng(seed, RNG_JITTER, i as u64);
        for k in 0..count {
            let idx = pending.len();
            let name = instance_name(&f.name, count, k, &f.cc, idx);
            let start = start_ns + spacing * u64::from(k) + uniform_below(&mut jitter_rng, start_jitter);
            let extra = uniform_below(&mut jitter_rng, delay_jitter);
            let src = attach_host(&mut topo, format!("{name}.src"), src_router, &access_half(access_delay + extra));
            let dst = attach_host(&mut topo, format!("{name}.dst"), dst_router, &access_half(a_delay));
            let path = route_between(&topo, src, dst)?;
            let cc = longfat_cc::build(&f.cc, &params, cfg.initial_window).expect("checked in tcp_setup");
            let sender = TcpSender::new(idx as u32, cfg.clone(), cc, total_pkts);
            let receiver = TcpReceiver::new(idx as u32, cfg.clone());
            let flow = path.flow(name, f.cc.clone(), start, stop_ns, Endpoints::Tcp { sender: Box::new(sender), receiver }, None);
            pending.push(Pending { flow, crosses_tcp: true });
        }
    }

    for (i, u) in s.udp.iter().enumerate() {
        let field = format!("udp[{i}]");
        let count = u.count.unwrap_or(1);
        if count == 0 {
            return err(format!("{field}.count"), "must be >= 1");
        }
        let (src_router, dst_router) = endpoints_of(&field, u.from, u.to)?;
        let (start_ns, stop_ns) = start_stop(&field, &u.start, &u.stop)?;
        let start_jitter = optional_duration(&format!("{field}.start_jitter"), &u.start_jitter)?;
        if start_ns + start_jitter >= duration_ns {
            return err(format!("{field}.start_jitter"), "sources could start at or after the end of the run");
        }
        let cfg = udp_config(&field, u, n_classes)?;
        let access_delay = duration_or(&format!("{field}.access_delay"), &u.access_delay, a_delay)?;
        let mut jitter_rng = component_rng(seed, RNG_JITTER, 1_000_000 + i as u64);
        for k in 0..count {
            let idx = pending.len();
            let name = instance_name(&u.name, count, k, "udp", idx);
            let src = attach_host(&mut topo, format!("{name}.src"), src_router, &access_half(access_delay));
            let dst = attach_host(&mut topo, format!("{name}.dst"), dst_router, &access_half(a_delay));
            let rng = component_rng(seed, RNG_UDP, idx as u64);
            let start = start_ns + uniform_below(&mut jitter_rng, start_jitter);
            let path = route_between(&topo, src, dst)?;
            let flow = path.flow(name, "udp".into(), start, stop_ns, Endpoints::Udp(UdpFlow::new(idx as u32, cfg.clone(), rng)), None);
            pending.push(Pending { flow, crosses_tcp: false });
        }
    }

    // ---- traffic generators: finite transfers drawn from the seed ----
    // Each generator has its own random streams, so adding one leaves the
    // others' draws unchanged.
    let mut generators: Vec<String> = vec![];
    let mut generated_total = 0u64;
    for (i, g) in s.short_flows.iter().enumerate() {
        let field = format!("short_flows[{i}]");
        let (src_router, dst_router) = endpoints_of(&field, g.from, g.to)?;
        let (start_ns, stop_ns) = start_stop(&field, &g.start, &g.stop)?;
        let arrivals_end = stop_ns.unwrap_or(duration_ns).min(duration_ns);
        if !(g.arrival_rate.is_finite() && g.arrival_rate > 0.0 && g.arrival_rate <= 1e6) {
            return err(format!("{field}.arrival_rate"), format!("{} is out of range; allowed (0, 1e6] transfers per second", g.arrival_rate));
        }
        let expected = g.arrival_rate * (arrivals_end - start_ns) as f64 / 1e9;
        if generated_total as f64 + expected > MAX_GENERATED as f64 {
            return err(format!("{field}.arrival_rate"), format!("about {expected:.0} transfers; at most {MAX_GENERATED} generated transfers in all; lower the rate or shorten the window"));
        }
        let (cfg, params) = tcp_setup(&field, &g.cc, &g.params, &g.tcp, n_classes)?;
        let mean = size_mean_bytes(&format!("{field}.size_mean"), &g.size_mean, cfg.payload_bytes())?;
        let shape = pareto_shape(&format!("{field}.size_shape"), g.size_shape)?;
        let hosts = g.hosts.unwrap_or(1);
        if !(1..=10_000).contains(&hosts) {
            return err(format!("{field}.hosts"), format!("{hosts} is out of range; allowed 1..=10000"));
        }
        let access_delay = duration_or(&format!("{field}.access_delay"), &g.access_delay, a_delay)?;
        let delay_jitter = optional_duration(&format!("{field}.access_delay_jitter"), &g.access_delay_jitter)?;
        let name = g.name.clone().unwrap_or_else(|| format!("short{i}"));
        let gen_id = generators.len() as u32;
        let mut jitter_rng = component_rng(seed, RNG_JITTER, 2_000_000 + i as u64);
        let paths: Vec<PathInfo> = (0..hosts)
            .map(|h| {
                let extra = uniform_below(&mut jitter_rng, delay_jitter);
                let src = attach_host(&mut topo, format!("{name}.h{h}.src"), src_router, &access_half(access_delay + extra));
                let dst = attach_host(&mut topo, format!("{name}.h{h}.dst"), dst_router, &access_half(a_delay));
                route_between(&topo, src, dst)
            })
            .collect::<Result<_, _>>()?;
        let mut rng = component_rng(seed, RNG_TRAFFIC, i as u64);
        let arrivals = traffic::poisson_arrivals(&mut rng, g.arrival_rate, start_ns, arrivals_end);
        for (k, &t) in arrivals.iter().enumerate() {
            let size = traffic::pareto_with_mean(&mut rng, mean, shape);
            let flow = generated_flow(&paths[k % paths.len()], format!("{name}#{k}"), &g.cc, &params, &cfg, pending.len(), t, size, gen_id);
            pending.push(Pending { flow, crosses_tcp: false });
        }
        generated_total += arrivals.len() as u64;
        generators.push(name);
    }

    for (i, w) in s.web.iter().enumerate() {
        let field = format!("web[{i}]");
        let (src_router, dst_router) = endpoints_of(&field, w.from, w.to)?;
        let (start_ns, stop_ns) = start_stop(&field, &w.start, &w.stop)?;
        let (cfg, params) = tcp_setup(&field, &w.cc, &w.params, &w.tcp, n_classes)?;
        if !(1..=10_000).contains(&w.sessions) {
            return err(format!("{field}.sessions"), format!("{} is out of range; allowed 1..=10000", w.sessions));
        }
        if !(1..=1_000_000).contains(&w.pages_per_session) {
            return err(format!("{field}.pages_per_session"), format!("{} is out of range; allowed 1..=1000000", w.pages_per_session));
        }
        let objects_per_page = w.objects_per_page.unwrap_or(1.0);
        if !(objects_per_page.is_finite() && (1.0..=10_000.0).contains(&objects_per_page)) {
            return err(format!("{field}.objects_per_page"), format!("{objects_per_page} is out of range; allowed 1..=10000 (a mean)"));
        }
        let inter_page = duration(&format!("{field}.inter_page"), &w.inter_page)?;
        if inter_page == 0 {
            return err(format!("{field}.inter_page"), "must be > 0");
        }
        let model = WebModel {
            sessions: w.sessions,
            start_ns,
            spread_ns: optional_duration(&format!("{field}.session_spread"), &w.session_spread)?,
            pages_per_session: w.pages_per_session,
            inter_page_mean_ns: inter_page as f64,
            objects_per_page_mean: objects_per_page,
            inter_object_mean_ns: optional_duration(&format!("{field}.inter_object"), &w.inter_object)? as f64,
            object_size_mean_bytes: size_mean_bytes(&format!("{field}.object_size_mean"), &w.object_size_mean, cfg.payload_bytes())?,
            object_size_shape: pareto_shape(&format!("{field}.object_size_shape"), w.object_size_shape)?,
        };
        let end = stop_ns.unwrap_or(duration_ns).min(duration_ns);
        let expected = f64::from(w.sessions) * objects_per_page * (f64::from(w.pages_per_session)).min((end - start_ns) as f64 / inter_page as f64 + 1.0);
        if generated_total as f64 + expected > MAX_GENERATED as f64 {
            return err(format!("{field}.sessions"), format!("about {expected:.0} objects; at most {MAX_GENERATED} generated transfers in all; use fewer sessions or pages"));
        }
        let access_delay = duration_or(&format!("{field}.access_delay"), &w.access_delay, a_delay)?;
        let delay_jitter = optional_duration(&format!("{field}.access_delay_jitter"), &w.access_delay_jitter)?;
        let name = w.name.clone().unwrap_or_else(|| format!("web{i}"));
        let gen_id = generators.len() as u32;
        let mut jitter_rng = component_rng(seed, RNG_JITTER, 3_000_000 + i as u64);
        // One server/client host pair per session, each with its own RTT.
        let paths: Vec<PathInfo> = (0..w.sessions)
            .map(|h| {
                let extra = uniform_below(&mut jitter_rng, delay_jitter);
                let src = attach_host(&mut topo, format!("{name}.s{h}.server"), src_router, &access_half(access_delay + extra));
                let dst = attach_host(&mut topo, format!("{name}.s{h}.client"), dst_router, &access_half(a_delay));
                route_between(&topo, src, dst)
            })
            .collect::<Result<_, _>>()?;
        let mut rng = component_rng(seed, RNG_TRAFFIC, 1_000_000 + i as u64);
        let objects = traffic::web_objects(&mut rng, &model, end);
        for (k, o) in objects.iter().enumerate() {
            let flow = generated_flow(&paths[o.session as usize], format!("{name}#{k}"), &w.cc, &params, &cfg, pending.len(), o.start_ns, o.size_bytes, gen_id);
            pending.push(Pending { flow, crosses_tcp: false });
        }
        generated_total += objects.len() as u64;
        generators.push(name);
    }
    if generated_total > MAX_GENERATED {
        return err("web", format!("{generated_total} generated transfers; at most {MAX_GENERATED}"));
    }

    // ---- bottleneck queues, now that RTTs are known ----
    // A BDP-sized queue must hold at least one full-size packet.
    let min_pkt = 1500u64;
    for &(f, r) in &hop_links {
        for l in [f, r] {
            let rtt = bdp_rtt_ns.or_else(|| {
                pending
                    .iter()
                    .filter(|p| p.crosses_tcp && (p.flow.fwd.contains(&(l as u32)) || p.flow.bwd.contains(&(l as u32))))
                    .map(|p| p.flow.base_rtt_ns)
                    .max()
            });
            let bdp = rtt.map(|r| b_rate.bytes_in(r));
            let q = match &discipline {
                Discipline::DropTail(q) => QueueDiscipline::DropTail(resolve(*q, bdp, "network.bottleneck.queue", min_pkt)?),
                Discipline::Priority(qs) => QueueDiscipline::Priority(
                    qs.iter()
                        .map(|q| resolve(*q, bdp, "network.bottleneck.class_queues", min_pkt))
                        .collect::<Result<_, _>>()?,
                ),
            };
            topo.links[l].queue = q;
        }
    }

    let monitored_links = hop_links.iter().flat_map(|&(f, r)| [f, r]).collect();
    Ok(Simulation::new(SimSetup {
        topology: topo,
        flows: pending.into_iter().map(|p| p.flow).collect(),
        duration_ns,
        measure_from_ns,
        sample_interval_ns,
        seed,
        monitored_links,
        generators,
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
    fn flow(&self, name: String, algorithm: String, start_ns: u64, stop_ns: Option<u64>, endpoints: Endpoints, generated: Option<Generated>) -> Flow {
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

fn route_between(topo: &Topology, src: usize, dst: usize) -> Result<PathInfo, ScenarioError> {
    let fwd = topo.route(src, dst).expect("chain topologies are connected");
    let bwd = topo.route(dst, src).expect("chain topologies are connected");
    if fwd.len() > 255 || bwd.len() > 255 {
        return err("network.hops", "routes longer than 255 links are not supported");
    }
    let base_rtt_ns = topo.route_delay_ns(&fwd) + topo.route_delay_ns(&bwd);
    Ok(PathInfo { fwd: fwd.into(), bwd: bwd.into(), base_rtt_ns })
}

/// One finite transfer of `size_bytes` (rounded up to whole packets).
#[allow(clippy::too_many_arguments)]
fn generated_flow(
    path: &PathInfo,
    name: String,
    cc: &str,
    params: &CcParams,
    cfg: &TcpConfig,
    idx: usize,
    start_ns: u64,
    size_bytes: f64,
    generator: u32,
) -> Flow {
    let bytes = size_bytes.ceil().clamp(1.0, 1e15) as u64;
    let pkts = bytes.div_ceil(cfg.payload_bytes());
    let cc_box = longfat_cc::build(cc, params, cfg.initial_window).expect("checked in tcp_setup");
    let sender = TcpSender::new(idx as u32, cfg.clone(), cc_box, Some(pkts));
    let receiver = TcpReceiver::new(idx as u32, cfg.clone());
    path.flow(
        name,
        cc.to_string(),
        start_ns,
        None,
        Endpoints::Tcp { sender: Box::new(sender), receiver },
        Some(Generated { generator, size_bytes: bytes }),
    )
}

/// The TCP settings and checked controller parameters of one flow entry.
fn tcp_setup(
    field: &str,
    cc: &str,
    params: &BTreeMap<String, f64>,
    tcp: &TcpCfg,
    n_classes: u32,
) -> Result<(TcpConfig, CcParams), ScenarioError> {
    let cfg = tcp_config(&format!("{field}.tcp"), tcp, n_classes)?;
    let params: CcParams = params.clone();
    for (k, v) in &params {
        if !v.is_finite() {
            return err(format!("{field}.params.{k}"), "must be a finite number");
        }
    }
    // Check the algorithm and its parameters once, with the field names.
    longfat_cc::build(cc, &params, cfg.initial_window)
        .map_err(|e| ScenarioError { field: format!("{field}.{}", e.field), message: e.message })?;
    Ok((cfg, params))
}

fn optional_duration(field: &str, v: &Option<String>) -> Result<u64, ScenarioError> {
    duration_or(field, v, 0)
}

fn duration_or(field: &str, v: &Option<String>, default_ns: u64) -> Result<u64, ScenarioError> {
    match v {
        Some(v) => duration(field, v),
        None => Ok(default_ns),
    }
}

/// Uniform in [0, max_ns) (0 when max_ns is 0).
fn uniform_below(rng: &mut Xoshiro256PlusPlus, max_ns: u64) -> u64 {
    if max_ns == 0 {
        0
    } else {
        rng.next_u64() % max_ns
    }
}

/// A mean transfer size in bytes ("30KB", or "20pkt" of full payloads).
fn size_mean_bytes(field: &str, s: &str, payload: u64) -> Result<f64, ScenarioError> {
    match parse_size(s).or_else(|m| err(field, m))? {
        SizeSpec::Bytes(b) if b > 0 => Ok(b as f64),
        SizeSpec::Packets(n) if n > 0 => Ok((n * payload) as f64),
        _ => err(field, format!("{s:?}: give a positive mean size in bytes or packets (e.g. \"3000B\", \"12pkt\")")),
    }
}

fn pareto_shape(field: &str, v: Option<f64>) -> Result<f64, ScenarioError> {
    let shape = v.unwrap_or(1.2);
    if !(shape.is_finite() && shape > 1.0 && shape <= 100.0) {
        return err(field, format!("{shape} is out of range; a Pareto shape must be in (1, 100] (finite mean)"));
    }
    Ok(shape)
}

fn class(field: &str, c: Option<u32>, n_classes: u32) -> Result<u8, ScenarioError> {
    let c = c.unwrap_or(0);
    if c >= n_classes.max(1) && !(n_classes == 1 && c == 0) {
        return err(field, format!("class {c} does not exist; the bottleneck has classes 0..={}", n_classes - 1));
    }
    Ok(c as u8)
}

fn tcp_config(field: &str, t: &TcpCfg, n_classes: u32) -> Result<TcpConfig, ScenarioError> {
    let d = TcpConfig::default();
    let f = |name: &str| format!("{field}.{name}");
    let packet = match &t.packet_size {
        Some(v) => bytes(&f("packet_size"), v, 64, 65_535)?,
        None => u64::from(d.packet_size_bytes),
    };
    let header = match &t.header_size {
        Some(v) => bytes(&f("header_size"), v, 0, 1024)?,
        None => u64::from(d.header_bytes),
    };
    if header >= packet {
        return err(f("header_size"), format!("{header} bytes leaves no payload in a {packet}-byte packet; must be < packet_size"));
    }
    let ack = match &t.ack_size {
        Some(v) => bytes(&f("ack_size"), v, 20, 65_535)?,
        None => u64::from(d.ack_size_bytes),
    };
    let delack_timeout = match &t.delayed_ack_timeout {
        Some(v) => duration(&f("delayed_ack_timeout"), v)?,
        None => 40_000_000,
    };
    if t.delayed_ack_timeout.is_some() && delack_timeout == 0 {
        return err(f("delayed_ack_timeout"), "must be > 0");
    }
    let rwnd = match t.rwnd.as_deref() {
        None | Some("unlimited") => u64::MAX,
        Some(v) => match parse_size(v).or_else(|m| err(f("rwnd"), m))? {
            SizeSpec::Packets(n) if n >= 1 => n,
            SizeSpec::Bytes(b) if b >= packet => b / (packet - header),
            _ => return err(f("rwnd"), format!("{v:?}: give at least one packet, in packets or bytes (e.g. \"20000pkt\"), or \"unlimited\"")),
        },
    };
    let min_rto = match &t.min_rto {
        Some(v) => duration(&f("min_rto"), v)?,
        None => d.min_rto_ns,
    };
    let max_rto = match &t.max_rto {
        Some(v) => duration(&f("max_rto"), v)?,
        None => d.max_rto_ns,
    };
    let initial_rto = match &t.initial_rto {
        Some(v) => duration(&f("initial_rto"), v)?,
        None => d.initial_rto_ns,
    };
    if max_rto == 0 {
        return err(f("max_rto"), "must be > 0");
    }
    if min_rto > max_rto {
        return err(f("min_rto"), format!("{:.3}s is above max_rto ({:.3}s); must be <= max_rto", min_rto as f64 / 1e9, max_rto as f64 / 1e9));
    }
    if initial_rto == 0 {
        return err(f("initial_rto"), "must be > 0");
    }
    let cwnd = t.initial_cwnd.unwrap_or(d.initial_window.cwnd_pkts);
    if !(cwnd.is_finite() && (1.0..=1e9).contains(&cwnd)) {
        return err(f("initial_cwnd"), format!("{cwnd} is out of range; allowed 1..=1e9 packets"));
    }
    let ssthresh = t.initial_ssthresh.unwrap_or(f64::INFINITY);
    if ssthresh.is_nan() || ssthresh < 2.0 {
        return err(f("initial_ssthresh"), format!("{ssthresh} is out of range; must be >= 2 packets (omit for unlimited)"));
    }
    let offset = |name: &str, v: &Option<String>| match v {
        Some(v) => duration(&f(name), v),
        None => Ok(0),
    };
    Ok(TcpConfig {
        packet_size_bytes: packet as u32,
        header_bytes: header as u32,
        ack_size_bytes: ack as u32,
        delayed_ack_timeout_ns: t.delayed_ack.unwrap_or(false).then_some(delack_timeout),
        rwnd_pkts: rwnd,
        initial_rto_ns: initial_rto,
        min_rto_ns: min_rto,
        max_rto_ns: max_rto,
        initial_window: InitialWindow { cwnd_pkts: cwnd, ssthresh_pkts: ssthresh },
        sender_clock_offset_ns: offset("sender_clock_offset", &t.sender_clock_offset)?,
        receiver_clock_offset_ns: offset("receiver_clock_offset", &t.receiver_clock_offset)?,
        class: class(&f("priority_class"), t.priority_class, n_classes)?,
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
            for (name, set) in [("on_mean", u.on_mean.is_some()), ("off_mean", u.off_mean.is_some()), ("distribution", u.distribution.is_some()), ("shape", u.shape.is_some())] {
                if set {
                    return err(f(name), "only for pattern = \"onoff\"");
                }
            }
            UdpPattern::Cbr
        }
        "onoff" => {
            let on = duration(&f("on_mean"), u.on_mean.as_deref().unwrap_or("1s"))?;
            let off = duration(&f("off_mean"), u.off_mean.as_deref().unwrap_or("1s"))?;
            if on == 0 {
                return err(f("on_mean"), "must be > 0");
            }
            let dist = match u.distribution.as_deref().unwrap_or("exponential") {
                "exponential" => {
                    if u.shape.is_some() {
                        return err(f("shape"), "only for distribution = \"pareto\"");
                    }
                    PeriodDist::Exponential
                }
                "pareto" => {
                    let shape = u.shape.unwrap_or(1.5);
                    if !(shape.is_finite() && shape > 1.0) {
                        return err(f("shape"), format!("{shape} is out of range; a Pareto shape must be > 1 (finite mean)"));
                    }
                    PeriodDist::Pareto { shape }
                }
                d => return err(f("distribution"), format!("unknown distribution {d:?}; allowed: \"exponential\", \"pareto\"")),
            };
            UdpPattern::OnOff { on_mean_ns: on, off_mean_ns: off, dist }
        }
        p => return err(f("pattern"), format!("unknown pattern {p:?}; allowed: \"cbr\", \"onoff\"")),
    };
    Ok(UdpConfig { rate: r, packet_size_bytes: size as u32, pattern, class: class(&f("priority_class"), u.priority_class, n_classes)? })
}
