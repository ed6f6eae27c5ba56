//! One flow entry's transport, checked: TCP settings, the controller and
//! its parameters, PLT's settings; and the endpoints built from them.

use std::sync::Arc;

use longfat_cc::plt::{LcmConfig, LcmRestart};
use longfat_cc::{CcParams, InitialWindow};

use crate::flow::Endpoints;
use crate::plt::{PltConfig, PltReceiver, PltSender};
use crate::tcp::profile::{Profile, PROFILES};
use crate::tcp::receiver::{TcpReceiver, TCP_DELACK_MAX_NS};
use crate::tcp::sender::TcpSender;
use crate::tcp::TcpConfig;
use crate::units::{parse_duration_ns, parse_size, Bandwidth, SizeSpec};

use super::error::{err, ScenarioError};
use super::external::{ControllerRequest, ControllerSource, ExternalControllers};
use super::fields::limits::*;
use super::fields::{self, fmt_ns, fmt_real};
use super::network::PathInfo;
use super::parse::{bytes, delay, duration_in, duration_within, opt_or};
use super::schema::{PltCfg, TcpCfg, TransportFields};
use super::validate::class;

/// One flow entry's checked transport: TCP settings, the controller to
/// build (the HCM's, for PLT) with its parameters, the label results carry,
/// and PLT's settings.
#[derive(Clone, Debug)]
pub(super) struct TransportSetup {
    /// Shared by the entry's flows' senders and receivers.
    pub(super) cfg: Arc<TcpConfig>,
    cc: String,
    /// Where `cc` comes from: the catalogue, or the embedder's registry.
    source: ControllerSource,
    /// The entry (`flows[0]`), and the field that names its controller
    /// (`flows[0].cc`, `flows[0].plt.hcm`).
    entry: String,
    cc_field: String,
    params: CcParams,
    pub(super) label: String,
    plt: Option<PltSetup>,
}

#[derive(Clone, Debug)]
pub(super) struct PltSetup {
    cfg: PltConfig,
    /// The LCM's first window: a fraction of the path's BDP, or packets.
    initial: InitialLcmWindow,
}

#[derive(Clone, Copy, Debug)]
pub(super) enum InitialLcmWindow {
    Bdp(f64),
    Packets(u64),
}

impl TransportSetup {
    /// Whether the entry runs PLT (`transport = "plt"` or its alias `cc = "plt"`).
    pub(super) fn is_plt(&self) -> bool {
        self.plt.is_some()
    }

    /// The controller for flow `idx` (None: the check `tcp_setup` makes).
    /// A built-in one was checked in `tcp_setup`; a registered factory may
    /// still refuse (its code is the embedder's), with the entry's field.
    fn controller(
        &self,
        idx: Option<usize>,
    ) -> Result<Box<dyn longfat_cc::CongestionControl>, ScenarioError> {
        let rules = self.cfg.profile.cc_rules();
        let init = self.cfg.initial_window;
        match &self.source {
            ControllerSource::Builtin => Ok(longfat_cc::build(&self.cc, &self.params, rules, init)
                .expect("checked in tcp_setup")),
            ControllerSource::External(factory) => factory(&ControllerRequest {
                params: &self.params,
                rules,
                init,
                flow: idx,
            })
            .map_err(|e| ScenarioError {
                field: self.cc_error_field(&e),
                message: e.message,
            }),
        }
    }

    /// The scenario field a controller's error names: the entry's `cc`
    /// field for `cc`, `<entry>.params.<name>` for a parameter.
    fn cc_error_field(&self, e: &longfat_cc::CcError) -> String {
        if e.field == "cc" {
            self.cc_field.clone()
        } else {
            format!("{}.{}", self.entry, e.field)
        }
    }

    /// The endpoints of flow `idx` on `path` (whose links run at `bottleneck`);
    /// `cc_seed`: the controller's seed (`rng::cc_seed`).
    pub(super) fn endpoints(
        &self,
        idx: usize,
        total_pkts: Option<u64>,
        path: &PathInfo,
        bottleneck: Bandwidth,
        cc_seed: u64,
    ) -> Result<Endpoints, ScenarioError> {
        let mut cc = self.controller(Some(idx))?;
        cc.seed(cc_seed);
        let flow = idx as u32;
        Ok(match &self.plt {
            None => Endpoints::Tcp {
                sender: TcpSender::new(flow, self.cfg.clone(), cc, total_pkts),
                // One NAPI poll lasts as long as `gro_segments` packets take
                // at the bottleneck (docs/algorithms.md, "Linux's receiver").
                receiver: TcpReceiver::new(flow, self.cfg.clone()).with_gro(bottleneck.tx_time_ns(
                    u64::from(self.cfg.gro_segments) * u64::from(self.cfg.packet_size_bytes),
                )),
            },
            Some(p) => {
                let mut plt = p.cfg.clone();
                plt.lcm_initial_window_pkts = match p.initial {
                    InitialLcmWindow::Packets(n) => n as f64,
                    InitialLcmWindow::Bdp(f) => {
                        let bdp = bottleneck.bytes_in(path.base_rtt_ns) as f64
                            / f64::from(self.cfg.packet_size_bytes);
                        (bdp * f).round().max(1.0)
                    }
                };
                Endpoints::Plt {
                    sender: Box::new(PltSender::new(flow, self.cfg.clone(), &plt, cc, total_pkts)),
                    receiver: Box::new(PltReceiver::new(flow, self.cfg.clone(), &plt)),
                }
            }
        })
    }
}

/// The TCP settings, checked controller parameters and PLT settings of one
/// flow entry. `controllers`: the names `cc` may take besides the
/// catalogue's.
pub(super) fn tcp_setup(
    field: &str,
    t: TransportFields<'_>,
    n_classes: u32,
    controllers: &ExternalControllers,
) -> Result<TransportSetup, ScenarioError> {
    let TransportFields {
        cc,
        transport,
        params,
        tcp,
        plt,
    } = t;
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
            if cfg.pacing {
                return err(format!("{field}.tcp.pacing"), "pacing is not modelled for PLT (transport = \"plt\" or cc = \"plt\"; its two modules share one connection); allowed: false");
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
        return err(
            format!("{field}.plt.hcm"),
            "the HCM runs a window controller (reno, cubic, ...), not \"plt\"",
        );
    }
    let cc_field = if plt.is_some() {
        format!("{field}.plt.hcm")
    } else {
        format!("{field}.cc")
    };
    let cc = controller.as_str();
    // eHSTCP's one-way delays (ehstcp.md §3: "By using the TCP timestamp
    // option") and TCP-GT's RTTM (tcp-gt.md §III) are defined on the
    // timestamp option.
    // PLT's receiver (plt/receiver.rs) echoes no ECN marks.
    if cfg.ecn && plt.is_some() {
        return err(
            format!("{field}.tcp.ecn"),
            "true is not modelled with PLT (its receiver echoes no CE marks); allowed: false",
        );
    }
    if !cfg.timestamps && matches!(cc, "ehstcp" | "tcpgt") {
        return err(format!("{field}.tcp.timestamps"), format!("false does not fit cc = {cc:?}, which measures delay with the TCP timestamp option; set timestamps = true"));
    }
    let params: CcParams = params.clone();
    for (k, v) in &params {
        if !v.is_finite() {
            return err(format!("{field}.params.{k}"), "must be a finite number");
        }
    }
    // Check the algorithm and its parameters once, with the field names. The
    // profile's rules give the parameters of its variant of the algorithm
    // (Linux's modules) their defaults; an error names those the scenario
    // did not set itself.
    let rules = cfg.profile.cc_rules();
    let source = match controllers.get(cc) {
        Some(factory) => ControllerSource::External(factory.clone()),
        None if longfat_cc::algorithm(cc).is_some_and(|a| a.build.is_some()) => {
            ControllerSource::Builtin
        }
        None => {
            return err(
                &cc_field,
                format!("unknown algorithm {cc:?}; known: {}", controllers.known()),
            )
        }
    };
    let label = match &plt {
        None => cc.to_string(),
        Some(_) if cc == "reno" => "plt".to_string(),
        Some(_) => format!("plt-{cc}"),
    };
    let setup = TransportSetup {
        cfg: Arc::new(cfg),
        cc: cc.to_string(),
        source,
        entry: field.to_string(),
        cc_field,
        params,
        label,
        plt,
    };
    if let ControllerSource::External(_) = setup.source {
        setup.controller(None)?;
        return Ok(setup);
    }
    let (cfg, params, cc_field) = (&setup.cfg, &setup.params, &setup.cc_field);
    longfat_cc::build(cc, params, rules, cfg.initial_window).map_err(|e| {
        let implied: Vec<String> = longfat_cc::algorithm(cc)
            .map(|a| a.implied(rules, params))
            .unwrap_or_default()
            .iter()
            .map(|(k, v)| format!("{k} = {v}"))
            .collect();
        ScenarioError {
            field: if e.field == "cc" {
                cc_field.clone()
            } else {
                format!("{field}.{}", e.field)
            },
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
        }
    })?;
    Ok(setup)
}

/// The TCP sender a flow entry with these fields gets (the same checks,
/// defaults and controller), alone: for the conformance driver
/// (`tcp::driver`), which plays its peer. PLT, two modules over one
/// connection, is not one sender. `seed`: the run's seed (`run.seed`); the
/// controller is seeded as flow 0 of a run with that seed is
/// (`rng::cc_seed`), so a controller with randomness (BBR's PROBE_BW
/// phase) runs the same in the driver as in the simulator.
pub fn tcp_sender(
    field: &str,
    t: TransportFields<'_>,
    seed: u64,
) -> Result<TcpSender, ScenarioError> {
    tcp_sender_with(field, t, seed, &ExternalControllers::default())
}

/// [`tcp_sender`], `cc` also naming one of `controllers`.
pub fn tcp_sender_with(
    field: &str,
    t: TransportFields<'_>,
    seed: u64,
    controllers: &ExternalControllers,
) -> Result<TcpSender, ScenarioError> {
    let setup = tcp_setup(field, t, 1, controllers)?;
    if setup.is_plt() {
        return err(format!("{field}.transport"), "PLT is two senders over one connection; the driver runs one TCP sender: allowed \"tcp\"");
    }
    let mut cc = setup.controller(Some(0))?;
    cc.seed(crate::rng::cc_seed(seed, 0));
    Ok(TcpSender::new(0, setup.cfg, cc, None))
}

/// PLT's settings, each checked with its field name. The LCM sends in the
/// class below the HCM's, so the bottleneck must be strict priority: on a
/// FIFO one the LCM would compete with TCP as an equal, which is not PLT.
/// `selector`: the field that chose PLT (`transport`, or its alias `cc`).
pub(super) fn plt_setup(
    field: &str,
    selector: &str,
    p: &PltCfg,
    tcp: &TcpCfg,
    cfg: &TcpConfig,
    n_classes: u32,
) -> Result<PltSetup, ScenarioError> {
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
        restart: match p.lcm_restart.as_deref() {
            None | Some("freed") => LcmRestart::Freed,
            Some("one") => LcmRestart::One,
            Some(o) => {
                return err(
                    format!("{field}.lcm_restart"),
                    format!("unknown restart {o:?}; allowed: \"freed\", \"one\""),
                )
            }
        },
    };
    lcm.validate()
        .or_else(|e| err(format!("{field}.{}", e.name), e.message))?;
    let epoch_ns = match &p.epoch {
        Some(e) => duration_within(&format!("{field}.epoch"), e, fields::EPOCH.range)?,
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
    let (lo, hi) = fields::LCM_ACK_EVERY.range.whole();
    if !(lo..=hi).contains(&u64::from(ack_every)) {
        return err(
            format!("{field}.lcm_ack_every"),
            format!("{ack_every} is out of range; allowed {lo}..={hi}"),
        );
    }
    let lcm_ack_class = match p.lcm_ack_class.as_deref() {
        None | Some("low") => lcm_class as u8,
        Some("high") => cfg.class,
        Some(o) => {
            return err(
                format!("{field}.lcm_ack_class"),
                format!("unknown class {o:?}; allowed: \"low\", \"high\""),
            )
        }
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
        Some(r) if fields::LCM_RESEND.range.contains_real(r) => Some(r),
        Some(r) => {
            return err(
                format!("{field}.lcm_resend"),
                format!(
                "{r} is out of range; allowed {} (times the HCM's window), or leave it out: never",
                fields::LCM_RESEND.range
            ),
            )
        }
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

pub(super) fn tcp_config(
    field: &str,
    t: &TcpCfg,
    n_classes: u32,
) -> Result<TcpConfig, ScenarioError> {
    let d = TcpConfig::default();
    let f = |name: &str| format!("{field}.{name}");
    let profile = match t.profile.as_deref() {
        None => Profile::default(),
        Some(name) => Profile::parse(name).ok_or_else(|| ScenarioError {
            field: f("profile"),
            message: format!(
                "{name:?} is not a transport profile; known: {}",
                PROFILES.join(", ")
            ),
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
        (Some(false), Profile::Rfc) => return err(f("timestamps"), "false needs profile = \"ns2\" (ns-2's one timed segment per round trip) or \"linux\" (tcp_timestamps = 0); \"rfc\" always samples timestamps: allowed true"),
        // Linux's autotuning measures the receiver's RTT with timestamps
        // (`tcp_rcv_rtt_measure_ts`); its timestamp-less measure is not modelled.
        (Some(false), Profile::Linux) if default_host => return err(f("timestamps"), "false with host = \"default\" is not modelled (the autotuned receive buffer measures its RTT with timestamps); allowed: true, or host = \"tuned\""),
        (Some(v), _) => v,
        (None, p) => p != Profile::Ns2,
    };
    let ecn = t.ecn.unwrap_or(false);
    let abe = t.abe.unwrap_or(false);
    if abe && !ecn {
        return err(f("abe"), "true needs ecn = true (RFC 8511 changes the response to ECN marks); allowed here: false, or set ecn = true");
    }
    let (burst_lo, burst_hi) = fields::MAX_BURST.range.whole();
    let max_burst = match t.max_burst {
        None => None,
        Some(n) if (burst_lo..=burst_hi).contains(&n) => Some(n as u32),
        Some(n) => {
            return err(
                f("max_burst"),
                format!(
                "{n} is out of range; allowed {burst_lo}..={burst_hi} packets (omit for no limit)"
            ),
            )
        }
    };
    let ratio = |decl: fields::Field, v: Option<u64>, default: u32| {
        let (lo, hi) = decl.range.whole();
        match v {
            None => Ok(default),
            Some(n) if (lo..=hi).contains(&n) => Ok(n as u32),
            Some(n) => err(
                f(decl.name),
                format!("{n} is out of range; allowed {lo}..={hi} percent (Linux's sysctl range)"),
            ),
        }
    };
    let pacing_ss_ratio_pct = ratio(
        fields::PACING_SS_RATIO,
        t.pacing_ss_ratio,
        d.pacing_ss_ratio_pct,
    )?;
    let pacing_ca_ratio_pct = ratio(
        fields::PACING_CA_RATIO,
        t.pacing_ca_ratio,
        d.pacing_ca_ratio_pct,
    )?;
    let packet = match &t.packet_size {
        Some(v) => bytes(&f("packet_size"), v, fields::PACKET_SIZE.range)?,
        None => u64::from(d.packet_size_bytes),
    };
    let header = match &t.header_size {
        Some(v) => bytes(&f("header_size"), v, fields::HEADER_SIZE.range)?,
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
        Some(v) => bytes(&f("ack_size"), v, fields::ACK_SIZE.range)?,
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
    let (min_rto, max_rto, initial_rto) = rto_bounds(field, t, profile, d.min_rto_ns)?;
    let cwnd = t.initial_cwnd.unwrap_or(profile.initial_cwnd_pkts());
    let cwnd_range = fields::INITIAL_CWND.range;
    if !cwnd_range.contains_real(cwnd) {
        let (lo, hi) = cwnd_range.real();
        return err(
            f("initial_cwnd"),
            format!(
                "{cwnd} is out of range; allowed {}..={} packets",
                fmt_real(lo),
                fmt_real(hi)
            ),
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
    let ssthresh = t
        .initial_ssthresh
        .unwrap_or(profile.initial_ssthresh_pkts(rwnd));
    let offset = |decl: fields::Field, v: &Option<String>| match v {
        Some(v) => duration_within(&f(decl.name), v, decl.range),
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
        sender_clock_offset_ns: offset(fields::SENDER_CLOCK_OFFSET, &t.sender_clock_offset)?,
        receiver_clock_offset_ns: offset(fields::RECEIVER_CLOCK_OFFSET, &t.receiver_clock_offset)?,
        class: class(&f("priority_class"), t.priority_class, n_classes)?,
        profile,
        max_burst_pkts: max_burst,
        timestamps,
        pacing: t.pacing.unwrap_or(d.pacing),
        pacing_ss_ratio_pct,
        pacing_ca_ratio_pct,
        ecn,
        abe,
    })
}

/// `tcp.min_rto`, `tcp.max_rto` and `tcp.initial_rto`, in that order:
/// (min, max, initial) in ns.
fn rto_bounds(
    field: &str,
    t: &TcpCfg,
    profile: Profile,
    default_min_rto_ns: u64,
) -> Result<(u64, u64, u64), ScenarioError> {
    let f = |name: &str| format!("{field}.{name}");
    let min_rto = opt_or(&f("min_rto"), &t.min_rto, default_min_rto_ns, delay)?;
    let max_rto = match &t.max_rto {
        Some(v) => duration_within(&f("max_rto"), v, fields::MAX_RTO.range)?,
        None => profile.max_rto_ns(),
    };
    let initial_rto = match &t.initial_rto {
        Some(v) => duration_within(&f("initial_rto"), v, fields::INITIAL_RTO.range)?,
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
    Ok((min_rto, max_rto, initial_rto))
}
