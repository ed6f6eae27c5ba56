//! Placing the entries on the network: every `[[flows]]`, `[[udp]]`,
//! `[[short_flows]]` and `[[web]]` entry gets its host pairs through one
//! step, [`Placement::place`], which draws each instance's jitter from the
//! entry's own stream and attaches the pair.

use rand_core::RngCore;
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::flow::{Endpoints, Flow, Generated};
use crate::rng::{cc_seed, component_rng, RNG_JITTER, RNG_TRAFFIC, RNG_UDP};
use crate::traffic::{self, WebModel};
use crate::udp::UdpFlow;

use super::error::{err, interrupted_error, ScenarioError};
use super::external::ExternalControllers;
use super::fields;
use super::fields::limits::*;
use super::network::{Net, PathInfo, RunSettings};
use super::parse::{
    delay, duration_within, opt_or, pareto_shape, run_time, size_mean_bytes, transfer_pkts,
};
use super::schema::{FlowSpec, ShortFlowSpec, UdpSpec, WebSpec};
use super::transport::{tcp_setup, TransportSetup};
use super::validate::{check_label, udp_config};

/// Uniform in [0, max_ns) (0 when max_ns is 0, without a draw).
fn uniform_below(rng: &mut Xoshiro256PlusPlus, max_ns: u64) -> u64 {
    if max_ns == 0 {
        0
    } else {
        rng.next_u64() % max_ns
    }
}

/// `name` for a single flow, `name.k` for the k-th of several, else `<kind><index>`.
fn instance_name(name: &Option<String>, count: u32, k: u32, kind: &str, idx: usize) -> String {
    match (name, count) {
        (Some(n), 1) => n.clone(),
        (Some(n), _) => format!("{n}.{k}"),
        (None, _) => format!("{kind}{idx}"),
    }
}

/// One finite transfer of `size_bytes` (rounded up to whole packets).
#[allow(clippy::too_many_arguments)]
fn generated_flow(
    path: &PathInfo,
    name: String,
    t: &TransportSetup,
    bottleneck: crate::units::Bandwidth,
    idx: usize,
    start_ns: u64,
    size_bytes: f64,
    generator: u32,
    cc_seed: u64,
) -> Result<Flow, ScenarioError> {
    let bytes = size_bytes.ceil().clamp(1.0, MAX_TRANSFER_BYTES as f64) as u64;
    let pkts = bytes.div_ceil(t.cfg.payload_bytes());
    let endpoints = t.endpoints(idx, Some(pkts), path, bottleneck, cc_seed)?;
    Ok(path.flow(
        name,
        t.label.clone(),
        start_ns,
        None,
        endpoints,
        Some(Generated {
            generator,
            size_bytes: bytes,
        }),
    ))
}

/// What every entry kind checks first, in this order: its label, its
/// count (flows and UDP sources), its routers and its time window.
struct Entry {
    src_router: usize,
    dst_router: usize,
    start_ns: u64,
    stop_ns: Option<u64>,
}

/// Where one entry's host pairs go, and the jitter its instances draw.
struct Placement {
    src_router: usize,
    dst_router: usize,
    access_delay_ns: u64,
    delay_jitter_ns: u64,
    start_jitter_ns: u64,
    jitter_rng: Xoshiro256PlusPlus,
}

impl Placement {
    /// The one placement step: draws the instance's start offset, then its
    /// extra sender access delay (each only when its jitter is set), and
    /// attaches its sender and receiver hosts. Returns their path and the
    /// start offset.
    fn place(&mut self, net: &mut Net, src_name: String, dst_name: String) -> (PathInfo, u64) {
        let start_offset_ns = uniform_below(&mut self.jitter_rng, self.start_jitter_ns);
        let extra_ns = uniform_below(&mut self.jitter_rng, self.delay_jitter_ns);
        let path = net.attach_pair(
            (src_name, self.src_router, self.access_delay_ns + extra_ns),
            (dst_name, self.dst_router),
        );
        (path, start_offset_ns)
    }
}

struct Pending {
    flow: Flow,
    crosses_tcp: bool,
}

/// The flows placed so far, on the network being built.
pub(super) struct Placer<'a> {
    pub(super) net: Net,
    run: &'a RunSettings,
    /// `run.duration` as written, for messages.
    run_duration: &'a str,
    pending: Vec<Pending>,
    pub(super) generators: Vec<String>,
    generated_total: u64,
    /// The names `cc` may take besides the catalogue's.
    controllers: &'a ExternalControllers,
    interrupted: &'a mut dyn FnMut() -> bool,
}

impl<'a> Placer<'a> {
    pub(super) fn new(
        net: Net,
        run: &'a RunSettings,
        run_duration: &'a str,
        controllers: &'a ExternalControllers,
        interrupted: &'a mut dyn FnMut() -> bool,
    ) -> Self {
        Placer {
            net,
            run,
            run_duration,
            pending: vec![],
            generators: vec![],
            generated_total: 0,
            controllers,
            interrupted,
        }
    }

    /// Polls `interrupted` every 256 flows set up.
    fn poll(&mut self, n: usize) -> Result<(), ScenarioError> {
        if n % 256 == 255 && (self.interrupted)() {
            return Err(interrupted_error());
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn entry(
        &self,
        field: &str,
        name: &Option<String>,
        count: Option<u32>,
        from: Option<u32>,
        to: Option<u32>,
        start: &Option<String>,
        stop: &Option<String>,
    ) -> Result<Entry, ScenarioError> {
        check_label(&format!("{field}.name"), name)?;
        if count == Some(0) {
            return err(format!("{field}.count"), "must be >= 1");
        }
        let (src_router, dst_router) = self.net.endpoints_of(field, from, to)?;
        let start_ns = opt_or(&format!("{field}.start"), start, 0, run_time)?;
        if start_ns >= self.run.duration_ns {
            return err(
                format!("{field}.start"),
                format!(
                    "{:?} is at or after the end of the run (run.duration = {}); must be earlier",
                    start.as_deref().unwrap_or(""),
                    self.run_duration
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
        Ok(Entry {
            src_router,
            dst_router,
            start_ns,
            stop_ns,
        })
    }

    /// Checks the entry's access delays and opens its jitter stream
    /// (`RNG_JITTER`, `stream`).
    fn placement(
        &self,
        field: &str,
        e: &Entry,
        (access_delay, access_delay_jitter): (&Option<String>, &Option<String>),
        start_jitter_ns: u64,
        stream: u64,
    ) -> Result<Placement, ScenarioError> {
        Ok(Placement {
            src_router: e.src_router,
            dst_router: e.dst_router,
            access_delay_ns: opt_or(
                &format!("{field}.access_delay"),
                access_delay,
                self.net.access_delay_ns,
                delay,
            )?,
            delay_jitter_ns: opt_or(
                &format!("{field}.access_delay_jitter"),
                access_delay_jitter,
                0,
                delay,
            )?,
            start_jitter_ns,
            jitter_rng: component_rng(self.run.seed, RNG_JITTER, stream),
        })
    }

    /// A generator's host pairs (`names(h)`: the sender's and receiver's).
    fn host_pairs(
        &mut self,
        place: &mut Placement,
        n: u32,
        names: impl Fn(u32) -> (String, String),
    ) -> Result<Vec<PathInfo>, ScenarioError> {
        let mut paths = Vec::with_capacity(n as usize);
        for h in 0..n {
            self.poll(h as usize)?;
            let (src, dst) = names(h);
            paths.push(place.place(&mut self.net, src, dst).0);
        }
        Ok(paths)
    }

    fn push(&mut self, flow: Flow, crosses_tcp: bool) {
        self.pending.push(Pending { flow, crosses_tcp });
    }

    /// `[[flows]]` entry `i`: `count` long-running or fixed-size TCP flows.
    pub(super) fn flows(&mut self, i: usize, f: &FlowSpec) -> Result<(), ScenarioError> {
        let field = format!("flows[{i}]");
        let count = f.count.unwrap_or(1);
        let e = self.entry(
            &field,
            &f.name,
            Some(count),
            f.from,
            f.to,
            &f.start,
            &f.stop,
        )?;
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
            .and_then(|x| x.checked_add(e.start_ns))
            .and_then(|x| x.checked_add(start_jitter))
            .filter(|&t| t < self.run.duration_ns);
        let Some(_) = last_start else {
            let latest =
                (e.start_ns as f64 + spacing as f64 * f64::from(count - 1) + start_jitter as f64)
                    / 1e9;
            return err(
                format!("{field}.{}", if start_jitter > 0 && spacing == 0 { "start_jitter" } else { "start_spacing" }),
                format!("the last of {count} flows could start at {latest:.3}s, at or after the end of the run ({})", self.run_duration),
            );
        };
        let tr = tcp_setup(&field, f.transport(), self.net.n_classes, self.controllers)?;
        let total_pkts = match &f.size {
            None => None,
            Some(sz) => Some(transfer_pkts(
                &format!("{field}.size"),
                sz,
                tr.cfg.payload_bytes(),
            )?),
        };
        let access = (&f.access_delay, &f.access_delay_jitter);
        let mut place = self.placement(&field, &e, access, start_jitter, i as u64)?;
        for k in 0..count {
            let idx = self.pending.len();
            self.poll(idx)?;
            let name = instance_name(
                &f.name,
                count,
                k,
                if tr.is_plt() { "plt" } else { f.cc.as_str() },
                idx,
            );
            let (path, jitter_ns) =
                place.place(&mut self.net, format!("{name}.src"), format!("{name}.dst"));
            let start = e.start_ns + spacing * u64::from(k) + jitter_ns;
            let endpoints = tr.endpoints(
                idx,
                total_pkts,
                &path,
                self.net.bottleneck_rate,
                cc_seed(self.run.seed, idx as u64),
            )?;
            let flow = path.flow(name, tr.label.clone(), start, e.stop_ns, endpoints, None);
            self.push(flow, true);
        }
        Ok(())
    }

    /// `[[udp]]` entry `i`: `count` UDP sources.
    pub(super) fn udp(&mut self, i: usize, u: &UdpSpec) -> Result<(), ScenarioError> {
        let field = format!("udp[{i}]");
        let count = u.count.unwrap_or(1);
        let e = self.entry(
            &field,
            &u.name,
            Some(count),
            u.from,
            u.to,
            &u.start,
            &u.stop,
        )?;
        let start_jitter = opt_or(
            &format!("{field}.start_jitter"),
            &u.start_jitter,
            0,
            run_time,
        )?;
        if e.start_ns + start_jitter >= self.run.duration_ns {
            return err(
                format!("{field}.start_jitter"),
                "sources could start at or after the end of the run",
            );
        }
        let cfg = udp_config(&field, u, self.net.n_classes)?;
        let access = (&u.access_delay, &None);
        let mut place = self.placement(&field, &e, access, start_jitter, 1_000_000 + i as u64)?;
        for k in 0..count {
            let idx = self.pending.len();
            self.poll(idx)?;
            let name = instance_name(&u.name, count, k, "udp", idx);
            let (path, jitter_ns) =
                place.place(&mut self.net, format!("{name}.src"), format!("{name}.dst"));
            let rng = component_rng(self.run.seed, RNG_UDP, idx as u64);
            let endpoints = Endpoints::Udp(UdpFlow::new(idx as u32, cfg.clone(), rng));
            let flow = path.flow(
                name,
                "udp".into(),
                e.start_ns + jitter_ns,
                e.stop_ns,
                endpoints,
                None,
            );
            self.push(flow, false);
        }
        Ok(())
    }

    /// Generator `name`'s transfers: (host pair, start, size) each.
    fn push_generated(
        &mut self,
        name: &str,
        tr: &TransportSetup,
        paths: &[PathInfo],
        transfers: impl Iterator<Item = (usize, u64, f64)>,
    ) -> Result<(), ScenarioError> {
        let gen_id = self.generators.len() as u32;
        let mut n = 0u64;
        for (k, (pair, start_ns, size_bytes)) in transfers.enumerate() {
            self.poll(k)?;
            let b_rate = self.net.bottleneck_rate;
            let idx = self.pending.len();
            let flow = generated_flow(
                &paths[pair],
                format!("{name}#{k}"),
                tr,
                b_rate,
                idx,
                start_ns,
                size_bytes,
                gen_id,
                cc_seed(self.run.seed, idx as u64),
            )?;
            self.push(flow, false);
            n += 1;
        }
        self.generated_total += n;
        self.generators.push(name.to_string());
        Ok(())
    }

    /// `[[short_flows]]` entry `i`: Poisson arrivals of Pareto-sized
    /// transfers, from the generator's own random streams.
    pub(super) fn short_flows(&mut self, i: usize, g: &ShortFlowSpec) -> Result<(), ScenarioError> {
        let field = format!("short_flows[{i}]");
        let e = self.entry(&field, &g.name, None, g.from, g.to, &g.start, &g.stop)?;
        let arrivals_end = e
            .stop_ns
            .unwrap_or(self.run.duration_ns)
            .min(self.run.duration_ns);
        let rate_range = fields::ARRIVAL_RATE.range;
        if !rate_range.contains_real(g.arrival_rate) {
            return err(
                format!("{field}.arrival_rate"),
                format!(
                    "{} is out of range; allowed {rate_range} transfers per second",
                    g.arrival_rate
                ),
            );
        }
        let expected = g.arrival_rate * (arrivals_end - e.start_ns) as f64 / 1e9;
        if self.generated_total as f64 + expected > MAX_GENERATED as f64 {
            return err(format!("{field}.arrival_rate"), format!("about {expected:.0} transfers; at most {MAX_GENERATED} generated transfers in all; lower the rate or shorten the window"));
        }
        let tr = tcp_setup(&field, g.transport(), self.net.n_classes, self.controllers)?;
        let mean = size_mean_bytes(
            &format!("{field}.size_mean"),
            &g.size_mean,
            tr.cfg.payload_bytes(),
        )?;
        let shape = pareto_shape(&format!("{field}.size_shape"), g.size_shape)?;
        let hosts = g.hosts.unwrap_or(1);
        let (lo, hi) = fields::HOSTS.range.whole();
        if !(lo..=hi).contains(&u64::from(hosts)) {
            return err(
                format!("{field}.hosts"),
                format!("{hosts} is out of range; allowed {lo}..={hi}"),
            );
        }
        let access = (&g.access_delay, &g.access_delay_jitter);
        let mut place = self.placement(&field, &e, access, 0, 2_000_000 + i as u64)?;
        let name = g.name.clone().unwrap_or_else(|| format!("short{i}"));
        let paths = self.host_pairs(&mut place, hosts, |h| {
            (format!("{name}.h{h}.src"), format!("{name}.h{h}.dst"))
        })?;
        let mut rng = component_rng(self.run.seed, RNG_TRAFFIC, i as u64);
        let arrivals =
            traffic::poisson_arrivals(&mut rng, g.arrival_rate, e.start_ns, arrivals_end);
        let transfers = arrivals.iter().enumerate().map(|(k, &t)| {
            (
                k % paths.len(),
                t,
                traffic::pareto_with_mean(&mut rng, mean, shape),
            )
        });
        self.push_generated(&name, &tr, &paths, transfers)
    }

    /// `[[web]]` entry `i`: web sessions, one host pair each.
    pub(super) fn web(&mut self, i: usize, w: &WebSpec) -> Result<(), ScenarioError> {
        let field = format!("web[{i}]");
        let e = self.entry(&field, &w.name, None, w.from, w.to, &w.start, &w.stop)?;
        let tr = tcp_setup(&field, w.transport(), self.net.n_classes, self.controllers)?;
        let model = self.web_model(&field, w, &e, &tr)?;
        let end = e
            .stop_ns
            .unwrap_or(self.run.duration_ns)
            .min(self.run.duration_ns);
        let expected = f64::from(w.sessions)
            * model.objects_per_page_mean
            * (f64::from(w.pages_per_session))
                .min((end - e.start_ns) as f64 / model.inter_page_mean_ns + 1.0);
        if self.generated_total as f64 + expected > MAX_GENERATED as f64 {
            return err(format!("{field}.sessions"), format!("about {expected:.0} objects; at most {MAX_GENERATED} generated transfers in all; use fewer sessions or pages"));
        }
        let access = (&w.access_delay, &w.access_delay_jitter);
        let mut place = self.placement(&field, &e, access, 0, 3_000_000 + i as u64)?;
        let name = w.name.clone().unwrap_or_else(|| format!("web{i}"));
        // One server/client host pair per session, each with its own RTT.
        let paths = self.host_pairs(&mut place, w.sessions, |h| {
            (format!("{name}.s{h}.server"), format!("{name}.s{h}.client"))
        })?;
        let mut rng = component_rng(self.run.seed, RNG_TRAFFIC, 1_000_000 + i as u64);
        let objects = traffic::web_objects(&mut rng, &model, end);
        if self.generated_total + objects.len() as u64 > MAX_GENERATED {
            return err(format!("{field}.sessions"), format!("{} objects drawn; at most {MAX_GENERATED} generated transfers in all; use fewer sessions or pages", objects.len()));
        }
        let transfers = objects
            .iter()
            .map(|o| (o.session as usize, o.start_ns, o.size_bytes));
        self.push_generated(&name, &tr, &paths, transfers)
    }

    /// A `[[web]]` entry's session model, each field checked.
    fn web_model(
        &self,
        field: &str,
        w: &WebSpec,
        e: &Entry,
        tr: &TransportSetup,
    ) -> Result<WebModel, ScenarioError> {
        for (decl, v) in [
            (fields::SESSIONS, w.sessions),
            (fields::PAGES_PER_SESSION, w.pages_per_session),
        ] {
            let (lo, hi) = decl.range.whole();
            if !(lo..=hi).contains(&u64::from(v)) {
                return err(
                    format!("{field}.{}", decl.name),
                    format!("{v} is out of range; allowed {lo}..={hi}"),
                );
            }
        }
        let objects_per_page = w.objects_per_page.unwrap_or(1.0);
        let objects_range = fields::OBJECTS_PER_PAGE.range;
        if !objects_range.contains_real(objects_per_page) {
            let (lo, hi) = objects_range.real();
            return err(
                format!("{field}.objects_per_page"),
                format!("{objects_per_page} is out of range; allowed {lo}..={hi} (a mean)"),
            );
        }
        let inter_page = duration_within(
            &format!("{field}.inter_page"),
            &w.inter_page,
            fields::INTER_PAGE.range,
        )?;
        Ok(WebModel {
            sessions: w.sessions,
            start_ns: e.start_ns,
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
                tr.cfg.payload_bytes(),
            )?,
            object_size_shape: pareto_shape(
                &format!("{field}.object_size_shape"),
                w.object_size_shape,
            )?,
        })
    }

    /// The placed flows, with the bottleneck queues sized.
    pub(super) fn finish(mut self) -> Result<(Net, Vec<Flow>, Vec<String>), ScenarioError> {
        let tcp_paths = self
            .pending
            .iter()
            .filter(|p| p.crosses_tcp)
            .map(|p| (&*p.flow.fwd, &*p.flow.bwd, p.flow.base_rtt_ns));
        self.net.size_queues(tcp_paths)?;
        let flows = self.pending.into_iter().map(|p| p.flow).collect();
        Ok((self.net, flows, self.generators))
    }
}
