//! The serde schema of a scenario file: what each table may hold. Every
//! field's unit, range, default and meaning is declared once, in
//! [`super::fields`]; `docs/scenarios.md`'s tables are generated from there.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::error::{error_field, printable, ScenarioError};

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
    /// An AQM discipline's parameters.
    pub aqm: Option<AqmCfg>,
}

#[derive(Clone, Debug, Deserialize, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct AqmCfg {
    pub target: Option<String>,
    pub interval: Option<String>,
    pub ecn: Option<bool>,
    pub flows: Option<u32>,
    pub quantum: Option<u32>,
    pub drop_batch: Option<u32>,
    pub min_th: Option<f64>,
    pub max_th: Option<f64>,
    pub max_p: Option<f64>,
    pub weight: Option<f64>,
    pub gentle: Option<bool>,
    pub wait: Option<bool>,
    pub adaptive: Option<bool>,
    pub target_delay: Option<String>,
    pub ared_interval: Option<String>,
    pub mean_pkt_size: Option<u32>,
    pub t_update: Option<String>,
    pub alpha: Option<f64>,
    pub beta: Option<f64>,
    pub max_burst: Option<String>,
    pub mark_ecn_threshold: Option<f64>,
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
    /// `"tcp"` (default) or `"plt"`, whose HCM runs `cc` (see `transport::tcp_setup`).
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
    /// `"tcp"` (default) or `"plt"`, whose HCM runs `cc` (see `transport::tcp_setup`).
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
    /// `"tcp"` (default) or `"plt"`, whose HCM runs `cc` (see `transport::tcp_setup`).
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
    /// "freed" (default: the window the HCM gave up) or "one".
    pub lcm_restart: Option<String>,
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
    /// Pace the data as Linux does internally (default false).
    pub pacing: Option<bool>,
    /// Linux's `tcp_pacing_ss_ratio` and `tcp_pacing_ca_ratio`, percent.
    pub pacing_ss_ratio: Option<u64>,
    pub pacing_ca_ratio: Option<u64>,
    /// ECN (RFC 3168) at both ends.
    pub ecn: Option<bool>,
    /// RFC 8511 Alternative Backoff with ECN (needs `ecn`).
    pub abe: Option<bool>,
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
    pub pcap: Option<Vec<String>>,
    pub pcap_tap: Option<String>,
}

/// Flows from which a run asks for 2 MiB pages (`Scenario::wants_huge_pages`).
pub const HUGE_PAGES_FROM_FLOWS: u64 = 20_000;

impl Scenario {
    /// Parses JSON (the Python front end converts TOML to JSON).
    pub fn from_json(text: &str) -> Result<Self, ScenarioError> {
        from_json(text)
    }

    /// The long-lived flows it declares: every `[[flows]]` and `[[udp]]`
    /// entry's `count` (1 if absent).
    pub fn flow_count(&self) -> u64 {
        let tcp: u64 = self
            .flows
            .iter()
            .map(|f| u64::from(f.count.unwrap_or(1)))
            .sum();
        let udp: u64 = self
            .udp
            .iter()
            .map(|u| u64::from(u.count.unwrap_or(1)))
            .sum();
        tcp + udp
    }

    /// Whether a run of this scenario is large enough that its state fits no
    /// cache and its binaries should ask for 2 MiB pages (the Python
    /// extension and `run_scenario` allocate with mimalloc and then set its
    /// `large_os_pages` option). From 20,000 flows, where a dumbbell's
    /// pending events reach `event::RADIX_PENDING` and the engine loads
    /// state ahead of its events too. Below that the pages cost more than
    /// they save: the kernel may have to compact memory for each one (up to
    /// 0.2 s of system time in a 1-second 1,000-flow run on this machine),
    /// while the TLB already holds what such a run touches
    /// (docs/performance.md, "Session 45").
    pub fn wants_huge_pages(&self) -> bool {
        self.flow_count() >= HUGE_PAGES_FROM_FLOWS
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

/// A scenario table from JSON, an error naming the field it is in.
fn from_json<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, ScenarioError> {
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

impl FlowSpec {
    /// One `[[flows]]` entry alone, as JSON (the conformance driver's
    /// connection: `cc`, `params`, `tcp`).
    pub fn from_json(text: &str) -> Result<Self, ScenarioError> {
        from_json(text)
    }
}

/// The transport fields every TCP entry kind (`[[flows]]`,
/// `[[short_flows]]`, `[[web]]`) has, borrowed: what
/// the `transport` module checks.
#[derive(Clone, Copy, Debug)]
pub struct TransportFields<'a> {
    pub cc: &'a str,
    pub transport: Option<&'a str>,
    pub params: &'a BTreeMap<String, f64>,
    pub tcp: &'a TcpCfg,
    pub plt: &'a Option<PltCfg>,
}

macro_rules! transport_fields {
    ($($spec:ty),*) => {$(
        impl $spec {
            pub fn transport(&self) -> TransportFields<'_> {
                TransportFields {
                    cc: &self.cc,
                    transport: self.transport.as_deref(),
                    params: &self.params,
                    tcp: &self.tcp,
                    plt: &self.plt,
                }
            }
        }
    )*};
}

transport_fields!(FlowSpec, ShortFlowSpec, WebSpec);
