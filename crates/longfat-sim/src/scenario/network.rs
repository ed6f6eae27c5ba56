//! The run's settings and the network: `[run]` and `[network]` checked,
//! the router chain built, and (once every flow is placed) the bottleneck
//! queues sized.

use crate::aqm::codel::CodelParams;
use crate::aqm::fq_codel::FqCodelParams;
use crate::aqm::pie::PieParams;
use crate::aqm::red::{RedParams, RED_MEAN_PKT_BYTES};
use crate::flow::{Endpoints, Flow, Generated};
use crate::link::{Aqm, QueueDiscipline, QueueLimit};
use crate::topology::{attach_host, router_chain, HalfLink, Host, RouterRoutes, Topology};
use crate::units::Bandwidth;

use super::error::{err, ScenarioError};
use super::fields;
use super::fields::limits::*;
use super::parse::{
    delay, duration_in, duration_within, opt_or, probability, queue_size, rate, run_time, QueueSize,
};
use super::schema::{AqmCfg, LinkCfg, Network, Run};

/// `[run]`, checked.
pub(super) struct RunSettings {
    pub(super) duration_ns: u64,
    pub(super) measure_from_ns: u64,
    pub(super) sample_interval_ns: u64,
    pub(super) seed: u64,
}

pub(super) fn run_settings(run: &Run) -> Result<RunSettings, ScenarioError> {
    let duration_ns = duration_within("run.duration", &run.duration, fields::DURATION.range)?;
    let measure_from_ns = opt_or("run.measure_from", &run.measure_from, 0, run_time)?;
    if measure_from_ns >= duration_ns {
        return err(
            "run.measure_from",
            format!(
                "{:?} must be before run.duration ({})",
                run.measure_from.as_deref().unwrap_or(""),
                run.duration
            ),
        );
    }
    let sample_interval_ns = match &run.sample_interval {
        Some(v) => duration_in(
            "run.sample_interval",
            v,
            MIN_SAMPLE_INTERVAL_NS,
            duration_ns,
        )?,
        None => (duration_ns / 1000).max(1_000_000).min(duration_ns),
    };
    Ok(RunSettings {
        duration_ns,
        measure_from_ns,
        sample_interval_ns,
        seed: run.seed.unwrap_or(crate::rng::DEFAULT_SEED),
    })
}

pub(super) enum Discipline {
    DropTail(QueueSize),
    Priority(Vec<QueueSize>),
    /// One buffer of this size for all the classes, with push-out.
    PriorityShared(QueueSize, usize),
    /// An AQM over a buffer of this size; `ecn`: it marks.
    Aqm(QueueSize, Aqm, bool),
}

impl Discipline {
    fn classes(&self) -> u32 {
        match self {
            Discipline::DropTail(_) | Discipline::Aqm(..) => 1,
            Discipline::Priority(v) => v.len() as u32,
            Discipline::PriorityShared(_, n) => *n as u32,
        }
    }
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

/// `network.topology` and `network.hops`: the number of bottlenecks.
fn hops(net: &Network) -> Result<usize, ScenarioError> {
    let (lo, hi) = fields::HOPS.range.whole();
    match (net.topology.as_str(), net.hops) {
        ("dumbbell", None | Some(1)) => Ok(1),
        ("dumbbell", Some(h)) => err(
            "network.hops",
            format!(
                "{h}: a dumbbell has exactly 1 bottleneck; use topology = \"parking_lot\" for more"
            ),
        ),
        ("parking_lot", Some(h)) if (lo..=hi).contains(&u64::from(h)) => Ok(h as usize),
        ("parking_lot", Some(h)) => err(
            "network.hops",
            format!("{h} is out of range; a parking lot has {lo}..={hi} bottlenecks"),
        ),
        ("parking_lot", None) => err(
            "network.hops",
            format!("required for a parking lot ({lo}..={hi})"),
        ),
        (t, _) => err(
            "network.topology",
            format!("unknown topology {t:?}; allowed: \"dumbbell\", \"parking_lot\""),
        ),
    }
}

/// A whole-number field of `[network.bottleneck.aqm]` in its declared range.
fn aqm_whole(decl: &fields::Field, v: Option<u32>, default: u32) -> Result<u32, ScenarioError> {
    let (lo, hi) = decl.range.whole();
    match v {
        None => Ok(default),
        Some(n) if (lo..=hi).contains(&u64::from(n)) => Ok(n),
        Some(n) => err(
            format!("network.bottleneck.aqm.{}", decl.name),
            format!("{n} is out of range; allowed {lo}..={hi}"),
        ),
    }
}

/// A real-valued field of `[network.bottleneck.aqm]` in its declared range.
fn aqm_real(decl: &fields::Field, v: Option<f64>, default: f64) -> Result<f64, ScenarioError> {
    match v {
        None => Ok(default),
        Some(x) if decl.range.contains_real(x) => Ok(x),
        Some(x) => err(
            format!("network.bottleneck.aqm.{}", decl.name),
            format!("{x} is out of range; allowed {}", decl.range),
        ),
    }
}

/// A duration field of `[network.bottleneck.aqm]` in its declared range.
fn aqm_duration(
    decl: &fields::Field,
    v: &Option<String>,
    default: u64,
) -> Result<u64, ScenarioError> {
    match v {
        None => Ok(default),
        Some(s) => duration_within(
            &format!("network.bottleneck.aqm.{}", decl.name),
            s,
            decl.range,
        ),
    }
}

/// The fields of `a` that are set, by name (as `fields::AQM_OWNERS` lists
/// them).
fn aqm_set_fields(a: &AqmCfg) -> [(&'static str, bool); 21] {
    [
        ("target", a.target.is_some()),
        ("interval", a.interval.is_some()),
        ("ecn", a.ecn.is_some()),
        ("flows", a.flows.is_some()),
        ("quantum", a.quantum.is_some()),
        ("drop_batch", a.drop_batch.is_some()),
        ("min_th", a.min_th.is_some()),
        ("max_th", a.max_th.is_some()),
        ("max_p", a.max_p.is_some()),
        ("weight", a.weight.is_some()),
        ("gentle", a.gentle.is_some()),
        ("wait", a.wait.is_some()),
        ("adaptive", a.adaptive.is_some()),
        ("target_delay", a.target_delay.is_some()),
        ("ared_interval", a.ared_interval.is_some()),
        ("mean_pkt_size", a.mean_pkt_size.is_some()),
        ("t_update", a.t_update.is_some()),
        ("alpha", a.alpha.is_some()),
        ("beta", a.beta.is_some()),
        ("max_burst", a.max_burst.is_some()),
        ("mark_ecn_threshold", a.mark_ecn_threshold.is_some()),
    ]
}

/// `"a"`, `"a" or "b"`, `"a", "b" or "c"`.
fn quoted_alternatives(words: &[&str]) -> String {
    let q: Vec<String> = words.iter().map(|w| format!("\"{w}\"")).collect();
    match q.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        Some((last, _)) => last.clone(),
        None => String::new(),
    }
}

/// `[network.bottleneck.aqm]` for discipline `d` (an AQM): its parameters
/// with the RFC's, Linux's or ns-3's defaults, and whether it marks. A
/// field of another discipline is refused by name.
fn aqm(d: &str, a: &AqmCfg) -> Result<(Aqm, bool), ScenarioError> {
    for (name, set) in aqm_set_fields(a) {
        let owners = fields::AQM_OWNERS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, o)| *o)
            .expect("every aqm field has owners");
        if set && !owners.contains(&d) {
            return err(
                format!("network.bottleneck.aqm.{name}"),
                format!("only for discipline = {}", quoted_alternatives(owners)),
            );
        }
    }
    match d {
        "codel" | "fq_codel" => {
            let codel_default = CodelParams::default();
            let target_ns = aqm_duration(&fields::AQM_TARGET, &a.target, codel_default.target_ns)?;
            let interval_ns = aqm_duration(
                &fields::AQM_INTERVAL,
                &a.interval,
                codel_default.interval_ns,
            )?;
            if target_ns >= interval_ns {
                return err(
                    "network.bottleneck.aqm.target",
                    format!(
                        "{} must be less than interval ({}); RFC 8289 §4.4 sets it at 5-10 % of interval",
                        fields::fmt_ns(target_ns),
                        fields::fmt_ns(interval_ns)
                    ),
                );
            }
            let codel = CodelParams {
                target_ns,
                interval_ns,
            };
            if d == "codel" {
                // Linux sch_codel: ECN off unless asked.
                return Ok((Aqm::Codel(codel), a.ecn.unwrap_or(false)));
            }
            let def = FqCodelParams::default();
            let p = FqCodelParams {
                flows: aqm_whole(&fields::AQM_FLOWS, a.flows, def.flows)?,
                quantum_bytes: aqm_whole(&fields::AQM_QUANTUM, a.quantum, def.quantum_bytes)?,
                drop_batch_pkts: aqm_whole(
                    &fields::AQM_DROP_BATCH,
                    a.drop_batch,
                    def.drop_batch_pkts,
                )?,
                codel,
            };
            // Linux sch_fq_codel: ECN on.
            Ok((Aqm::FqCodel(p), a.ecn.unwrap_or(true)))
        }
        "red" => {
            let def = RedParams::default();
            let auto_params = a.target_delay.is_some();
            if auto_params {
                if let Some((f, _)) = [
                    ("min_th", a.min_th.is_some()),
                    ("max_th", a.max_th.is_some()),
                    ("weight", a.weight.is_some()),
                ]
                .iter()
                .find(|(_, set)| *set)
                {
                    return err(
                        format!("network.bottleneck.aqm.{f}"),
                        "not with target_delay, which sets min_th, max_th and weight itself (ARED §5); give one or the other",
                    );
                }
            }
            let adaptive = a.adaptive.unwrap_or(def.adaptive);
            if a.ared_interval.is_some() && !adaptive {
                return err(
                    "network.bottleneck.aqm.ared_interval",
                    "only with adaptive = true (it is Adaptive RED's update period)",
                );
            }
            let min_th_pkts = aqm_real(&fields::AQM_MIN_TH, a.min_th, def.min_th_pkts)?;
            let max_th_pkts = aqm_real(&fields::AQM_MAX_TH, a.max_th, def.max_th_pkts)?;
            if min_th_pkts >= max_th_pkts {
                return err(
                    "network.bottleneck.aqm.min_th",
                    format!(
                        "{min_th_pkts} must be less than max_th ({max_th_pkts}{})",
                        if a.max_th.is_none() {
                            ", the default"
                        } else {
                            ""
                        }
                    ),
                );
            }
            let p = RedParams {
                min_th_pkts,
                max_th_pkts,
                max_p: aqm_real(&fields::AQM_MAX_P, a.max_p, def.max_p)?,
                weight: aqm_real(&fields::AQM_WEIGHT, a.weight, def.weight)?,
                gentle: a.gentle.unwrap_or(def.gentle),
                wait: a.wait.unwrap_or(def.wait),
                adaptive,
                auto_params,
                target_delay_ns: aqm_duration(
                    &fields::AQM_TARGET_DELAY,
                    &a.target_delay,
                    def.target_delay_ns,
                )?,
                ared_interval_ns: aqm_duration(
                    &fields::AQM_ARED_INTERVAL,
                    &a.ared_interval,
                    def.ared_interval_ns,
                )?,
                ..def
            };
            let mean_pkt_bytes = aqm_whole(
                &fields::AQM_MEAN_PKT_SIZE,
                a.mean_pkt_size,
                RED_MEAN_PKT_BYTES,
            )?;
            // ns-3 RedQueueDisc `UseEcn`, Linux sch_red: ECN off unless asked.
            Ok((
                Aqm::Red {
                    params: p,
                    mean_pkt_bytes,
                },
                a.ecn.unwrap_or(false),
            ))
        }
        "pie" => {
            let def = PieParams::default();
            let p = PieParams {
                target_ns: aqm_duration(&fields::AQM_TARGET, &a.target, def.target_ns)?,
                t_update_ns: aqm_duration(&fields::AQM_T_UPDATE, &a.t_update, def.t_update_ns)?,
                alpha: aqm_real(&fields::AQM_ALPHA, a.alpha, def.alpha)?,
                beta: aqm_real(&fields::AQM_BETA, a.beta, def.beta)?,
                max_burst_ns: aqm_duration(&fields::AQM_MAX_BURST, &a.max_burst, def.max_burst_ns)?,
                mark_ecn_threshold: aqm_real(
                    &fields::AQM_MARK_ECN_THRESHOLD,
                    a.mark_ecn_threshold,
                    def.mark_ecn_threshold,
                )?,
                mean_pkt_bytes: aqm_whole(
                    &fields::AQM_MEAN_PKT_SIZE,
                    a.mean_pkt_size,
                    def.mean_pkt_bytes,
                )?,
                ..def
            };
            // ns-3 PieQueueDisc `UseEcn`, Linux sch_pie: ECN off unless asked.
            Ok((Aqm::Pie(p), a.ecn.unwrap_or(false)))
        }
        _ => unreachable!("not an AQM discipline: {d:?}"),
    }
}

/// The bottleneck's discipline with its queue sizes, before BDP resolution.
fn discipline(b: &LinkCfg, b_queue: QueueSize) -> Result<Discipline, ScenarioError> {
    let d = b.discipline.as_deref().unwrap_or("droptail");
    let is_aqm = matches!(d, "codel" | "fq_codel" | "red" | "pie");
    if b.aqm.is_some() && !is_aqm {
        return err(
            "network.bottleneck.aqm",
            "only with an AQM discipline (\"codel\", \"fq_codel\", \"red\", \"pie\")",
        );
    }
    match d {
        _ if is_aqm => {
            if let Some(f) = [
                ("classes", b.classes.is_some()),
                ("class_queues", b.class_queues.is_some()),
                ("buffer", b.buffer.is_some()),
            ]
            .iter()
            .find_map(|(f, set)| set.then_some(f))
            {
                return err(
                    format!("network.bottleneck.{f}"),
                    "only for discipline = \"priority\"",
                );
            }
            let (a, ecn) = aqm(d, &b.aqm.clone().unwrap_or_default())?;
            Ok(Discipline::Aqm(b_queue, a, ecn))
        }
        "droptail" => {
            if b.classes.is_some() || b.class_queues.is_some() || b.buffer.is_some() {
                let f = if b.classes.is_some() {
                    "classes"
                } else if b.class_queues.is_some() {
                    "class_queues"
                } else {
                    "buffer"
                };
                return err(
                    format!("network.bottleneck.{f}"),
                    "only for discipline = \"priority\"",
                );
            }
            Ok(Discipline::DropTail(b_queue))
        }
        "priority" => {
            let n = b.classes.unwrap_or(2);
            let (lo, hi) = fields::CLASSES.range.whole();
            if !(lo..=hi).contains(&u64::from(n)) {
                return err(
                    "network.bottleneck.classes",
                    format!("{n} is out of range; allowed {lo}..={hi}"),
                );
            }
            let shared = match b.buffer.as_deref() {
                None | Some("per_class") => false,
                Some("shared") => true,
                Some(o) => {
                    return err(
                        "network.bottleneck.buffer",
                        format!("unknown buffer {o:?}; allowed: \"per_class\", \"shared\""),
                    )
                }
            };
            match &b.class_queues {
                _ if shared && b.class_queues.is_some() => err(
                    "network.bottleneck.class_queues",
                    "not with buffer = \"shared\": the classes share `queue`",
                ),
                None if shared => Ok(Discipline::PriorityShared(b_queue, n as usize)),
                None => Ok(Discipline::Priority(vec![b_queue; n as usize])),
                Some(qs) if qs.len() == n as usize => Ok(Discipline::Priority(
                    qs.iter()
                        .enumerate()
                        .map(|(i, q)| {
                            queue_size(&format!("network.bottleneck.class_queues[{i}]"), q)
                        })
                        .collect::<Result<_, _>>()?,
                )),
                Some(qs) => err(
                    "network.bottleneck.class_queues",
                    format!("has {} entries; needs one per class ({n})", qs.len()),
                ),
            }
        }
        d => err(
            "network.bottleneck.discipline",
            format!("unknown discipline {d:?}; allowed: \"droptail\", \"priority\", \"codel\", \"fq_codel\", \"red\", \"pie\""),
        ),
    }
}

/// The network being built: the router chain, the checked access settings
/// every host gets, and the bottleneck discipline to size at the end.
pub(super) struct Net {
    pub(super) topo: Topology,
    pub(super) hops: usize,
    routers: Vec<usize>,
    router_routes: RouterRoutes,
    /// Per hop, the (forward, reverse) bottleneck link ids.
    pub(super) hop_links: Vec<(usize, usize)>,
    discipline: Discipline,
    pub(super) n_classes: u32,
    pub(super) bottleneck_rate: Bandwidth,
    access_rate: Bandwidth,
    pub(super) access_delay_ns: u64,
    access_queue: QueueLimit,
    bdp_rtt_ns: Option<u64>,
}

/// A host pair's routes and propagation RTT.
pub(super) struct PathInfo {
    pub(super) fwd: Box<[u32]>,
    pub(super) bwd: Box<[u32]>,
    pub(super) base_rtt_ns: u64,
}

impl PathInfo {
    pub(super) fn flow(
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

impl Net {
    /// Checks `[network]` and builds its router chain (queues placeholders
    /// until [`Net::size_queues`]).
    pub(super) fn new(net: &Network) -> Result<Net, ScenarioError> {
        let hops = hops(net)?;
        let b = &net.bottleneck;
        let b_rate = rate("network.bottleneck.rate", &b.rate)?;
        let b_delay = delay("network.bottleneck.delay", &b.delay)?;
        let b_queue = queue_size("network.bottleneck.queue", &b.queue)?;
        let discipline = discipline(b, b_queue)?;
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
            Some(r) => Some(duration_within(
                "network.bdp_rtt",
                r,
                fields::BDP_RTT.range,
            )?),
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
        Ok(Net {
            topo,
            hops,
            routers,
            router_routes,
            hop_links,
            n_classes: discipline.classes(),
            discipline,
            bottleneck_rate: b_rate,
            access_rate: a_rate,
            access_delay_ns: a_delay,
            access_queue: a_queue,
            bdp_rtt_ns,
        })
    }

    /// The routers an entry enters and leaves by (`field.from`, `field.to`).
    pub(super) fn endpoints_of(
        &self,
        field: &str,
        from: Option<u32>,
        to: Option<u32>,
    ) -> Result<(usize, usize), ScenarioError> {
        let hops = self.hops;
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
        Ok((self.routers[from as usize], self.routers[to as usize]))
    }

    /// Attaches a sender host (its access link `src_delay_ns` one way) and a
    /// receiver host (the network's access delay); returns their path.
    pub(super) fn attach_pair(
        &mut self,
        (src_name, src_router, src_delay_ns): (String, usize, u64),
        (dst_name, dst_router): (String, usize),
    ) -> PathInfo {
        let (src_half, dst_half) = (
            self.access_half(src_delay_ns),
            self.access_half(self.access_delay_ns),
        );
        let src = attach_host(&mut self.topo, src_name, src_router, &src_half);
        let dst = attach_host(&mut self.topo, dst_name, dst_router, &dst_half);
        self.path_between(&src, &dst)
    }

    fn access_half(&self, delay_ns: u64) -> HalfLink {
        HalfLink {
            rate: self.access_rate,
            delay_ns,
            queue: QueueDiscipline::DropTail(self.access_queue),
            loss_prob: 0.0,
        }
    }

    fn path_between(&self, src: &Host, dst: &Host) -> PathInfo {
        let fwd = self
            .router_routes
            .host_route(src, dst)
            .expect("chain topologies are connected");
        let bwd = self
            .router_routes
            .host_route(dst, src)
            .expect("chain topologies are connected");
        let base_rtt_ns = self.topo.route_delay_ns(&fwd) + self.topo.route_delay_ns(&bwd);
        PathInfo {
            fwd: fwd.into(),
            bwd: bwd.into(),
            base_rtt_ns,
        }
    }

    /// Sizes every bottleneck queue, now that RTTs are known: a BDP size
    /// uses `network.bdp_rtt`, else the largest base RTT of the TCP flows
    /// (`tcp_paths`: each one's links and base RTT) crossing the link.
    pub(super) fn size_queues<'a>(
        &mut self,
        tcp_paths: impl Iterator<Item = (&'a [u32], &'a [u32], u64)> + Clone,
    ) -> Result<(), ScenarioError> {
        // A BDP-sized queue must hold at least one full-size packet.
        let min_pkt = 1500u64;
        for &(f, r) in &self.hop_links {
            for l in [f, r] {
                let rtt = self.bdp_rtt_ns.or_else(|| {
                    tcp_paths
                        .clone()
                        .filter(|(fwd, bwd, _)| {
                            fwd.contains(&(l as u32)) || bwd.contains(&(l as u32))
                        })
                        .map(|(_, _, rtt)| rtt)
                        .max()
                });
                let bdp = rtt.map(|r| self.bottleneck_rate.bytes_in(r));
                let q = match &self.discipline {
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
                    Discipline::Aqm(q, aqm, ecn) => QueueDiscipline::Aqm {
                        aqm: Box::new(*aqm),
                        limit: resolve(*q, bdp, "network.bottleneck.queue", min_pkt)?,
                        ecn: *ecn,
                    },
                };
                self.topo.links[l].queue = q;
            }
        }
        Ok(())
    }

    /// Both directions of every bottleneck link.
    pub(super) fn monitored_links(&self) -> Vec<usize> {
        self.hop_links.iter().flat_map(|&(f, r)| [f, r]).collect()
    }
}
