//! H-TCP (Leith, Shorten, Lee; `htcp.md` §VI).
//!
//! AIMD whose increase grows with the time Delta since the last congestion
//! event (eq. (20)), scaled by 2(1 - beta) for fairness (eq. (16)), and whose
//! backoff adapts to the path's buffering: beta = RTTmin/RTTmax clamped to
//! [0.5, 0.8] (eq. (18)). Where the paper is silent the choices follow Linux's
//! `tcp_htcp.c` (cited per function); the parameters that turn this into
//! Linux's module are listed in docs/algorithms.md.

use crate::error::{CcError, CcParams};
use crate::helpers::{grow, reduce, timeout};
use crate::params::{error, Algorithm, Param, ParamReader, Range, Rules};
use crate::{AckEvent, CongestionControl, InitialWindow, LossEvent, RtoEvent};

const NS_PER_S: f64 = 1e9;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HtcpConfig {
    /// Delta^L: time after a backoff during which the increase is Reno's (eq. (20): 1 s).
    pub delta_l_s: f64,
    /// The clamp on the adaptive backoff factor (eq. (18), §V-B: [0.5, 0.8]).
    pub beta_min: f64,
    pub beta_max: f64,
    /// a in the fading memory of RTTmax (eq. (15): 7/8; Linux 95/100).
    pub rtt_max_fade: f64,
    /// Where RTTmax comes from: the raw per-ACK RTT samples (Linux 6.x
    /// `measure_rtt(sample->rtt_us)`) or the smoothed RTT (the paper's own
    /// Linux 2.6 implementation, `tp->srtt`, and FreeBSD `cc_htcp.c`). The
    /// paper does not say; smoothed by default.
    pub rtt_max_from_samples: bool,
    /// Adaptive backoff only when RTTmin exceeds this; below it beta stays
    /// beta_min (Linux `htcp_beta_update`: `minRTT > msecs_to_jiffies(10)`).
    /// Not in the paper: 0 by default.
    pub adaptive_min_rtt_s: f64,
    /// §IV (iv): multiply alpha-bar by RTTmin / rtt_ref, the ratio clamped to
    /// [scale_min, scale_max] (footnote 4: [0.5, 10]), the product never
    /// below 1 (Linux, FreeBSD). Off by default (§VI: "optionally").
    pub rtt_scaling: bool,
    pub rtt_ref_s: f64,
    pub scale_min: f64,
    pub scale_max: f64,
    /// Linux `use_bandwidth_switch`: back off by beta_min when the achieved
    /// throughput changed by more than 20 % since the last congestion event.
    /// Not in the paper; off by default.
    pub bandwidth_switch: bool,
}

/// Delta^L (eq. (20)).
pub const DELTA_L: Param = Param::real(
    "delta_l",
    "s",
    1.0,
    Range::Closed(0.0, 3600.0),
    "Delta_L: time after a backoff during which the increase is Reno's",
    "htcp.md eq. (20)",
);
/// The clamp on the adaptive backoff (eq. (18)).
pub const BETA_MIN: Param = Param::real(
    "beta_min",
    "fraction",
    0.5,
    Range::Open(0.0, 1.0),
    "lower clamp on the backoff factor RTTmin/RTTmax",
    "htcp.md eq. (18), §V-B",
);
pub const BETA_MAX: Param = Param::real(
    "beta_max",
    "fraction",
    0.8,
    Range::Open(0.0, 1.0),
    "upper clamp on the backoff factor RTTmin/RTTmax",
    "htcp.md eq. (18), §V-B; Linux BETA_MAX 102/128",
)
.under(&[(Rules::Linux, 102.0 / 128.0)]);
pub const RTT_MAX_FADE: Param = Param::real(
    "rtt_max_fade",
    "fraction",
    7.0 / 8.0,
    Range::Closed(0.0, 1.0),
    "a, the fading memory of RTTmax",
    "htcp.md eq. (15); Linux 95/100",
)
.under(&[(Rules::Linux, 0.95)]);
pub const RTT_MAX_FROM_SAMPLES: Param = Param::switch(
    "rtt_max_from_samples",
    false,
    "RTTmax from raw per-ACK RTT samples (1) or from the smoothed RTT (0)",
    "Linux 6.x tcp_htcp.c measure_rtt(sample->rtt_us); the paper's Linux 2.6 code: tp->srtt",
)
.under(&[(Rules::Linux, 1.0)]);
pub const ADAPTIVE_MIN_RTT: Param = Param::real(
    "adaptive_min_rtt",
    "s",
    0.0,
    Range::Closed(0.0, 3600.0),
    "adaptive backoff only when RTTmin exceeds this; below, beta = beta_min",
    "Linux tcp_htcp.c htcp_beta_update: minRTT > 10 ms",
)
.under(&[(Rules::Linux, 0.01)]);
pub const RTT_SCALING: Param = Param::switch(
    "rtt_scaling",
    false,
    "scale alpha by RTTmin / rtt_ref",
    "htcp.md §IV (iv); Linux use_rtt_scaling",
)
.under(&[(Rules::Linux, 1.0)]);
pub const RTT_REF: Param = Param::real(
    "rtt_ref",
    "s",
    0.1,
    Range::Open(0.0, 3600.0),
    "reference RTT of the scaling",
    "htcp.md §IV (iv)",
);
pub const SCALE_MIN: Param = Param::real(
    "scale_min",
    "factor",
    0.5,
    Range::Open(0.0, 1e6),
    "lower clamp on RTTmin / rtt_ref",
    "htcp.md footnote 4 (0.5); Linux 0.1 (tcp_htcp.c clamps 100 ms / minRTT to [0.5, 10]: a multiplier in [0.1, 2])",
)
.under(&[(Rules::Linux, 0.1)]);
pub const SCALE_MAX: Param = Param::real(
    "scale_max",
    "factor",
    10.0,
    Range::Open(0.0, 1e6),
    "upper clamp on RTTmin / rtt_ref",
    "htcp.md footnote 4 (10); Linux 2",
)
.under(&[(Rules::Linux, 2.0)]);
pub const BANDWIDTH_SWITCH: Param = Param::switch(
    "bandwidth_switch",
    false,
    "back off by beta_min when throughput changed by more than 20 % since the last congestion event",
    "Linux tcp_htcp.c use_bandwidth_switch",
)
.under(&[(Rules::Linux, 1.0)]);

pub const ALGORITHM: Algorithm = Algorithm {
    name: "htcp",
    what: "increase grows with time since the last backoff; backoff RTTmin/RTTmax",
    paper: "Leith, Shorten, Lee, H-TCP: TCP for high-speed and long-distance networks (htcp.md)",
    params: &[
        DELTA_L,
        BETA_MIN,
        BETA_MAX,
        RTT_MAX_FADE,
        RTT_MAX_FROM_SAMPLES,
        ADAPTIVE_MIN_RTT,
        RTT_SCALING,
        RTT_REF,
        SCALE_MIN,
        SCALE_MAX,
        BANDWIDTH_SWITCH,
    ],
    // Checked in `HtcpConfig::from_params`.
    constraints: &["beta_min <= beta_max", "scale_min <= scale_max"],
    build: Some(|params, rules, init| {
        Ok(Box::new(Htcp::new(
            HtcpConfig::from_params(params, rules)?,
            init,
        )))
    }),
};

impl Default for HtcpConfig {
    fn default() -> Self {
        Self::read(&ParamReader::defaults(Rules::Rfc))
    }
}

impl HtcpConfig {
    fn read(r: &ParamReader) -> Self {
        Self {
            delta_l_s: r.real(&DELTA_L),
            beta_min: r.real(&BETA_MIN),
            beta_max: r.real(&BETA_MAX),
            rtt_max_fade: r.real(&RTT_MAX_FADE),
            rtt_max_from_samples: r.flag(&RTT_MAX_FROM_SAMPLES),
            adaptive_min_rtt_s: r.real(&ADAPTIVE_MIN_RTT),
            rtt_scaling: r.flag(&RTT_SCALING),
            rtt_ref_s: r.real(&RTT_REF),
            scale_min: r.real(&SCALE_MIN),
            scale_max: r.real(&SCALE_MAX),
            bandwidth_switch: r.flag(&BANDWIDTH_SWITCH),
        }
    }

    pub fn from_params(params: &CcParams, rules: Rules) -> Result<Self, CcError> {
        let cfg = Self::read(&ALGORITHM.check(params, rules)?);
        if cfg.beta_min > cfg.beta_max {
            return Err(error(
                BETA_MIN.name,
                format!("{} exceeds beta_max = {}", cfg.beta_min, cfg.beta_max),
            ));
        }
        if cfg.scale_min > cfg.scale_max {
            return Err(error(
                SCALE_MIN.name,
                format!("{} exceeds scale_max = {}", cfg.scale_min, cfg.scale_max),
            ));
        }
        Ok(cfg)
    }

    /// alpha-bar(Delta), the increase in packets per RTT before the fairness
    /// scaling (eq. (20)).
    pub fn alpha_of_delta(&self, delta_s: f64) -> f64 {
        if delta_s <= self.delta_l_s {
            1.0
        } else {
            let d = delta_s - self.delta_l_s;
            1.0 + 10.0 * d + (d / 2.0) * (d / 2.0)
        }
    }

    /// The §IV (iv) RTT scaling ratio RTTmin / rtt_ref, clamped (footnote 4).
    /// (Linux clamps the inverse, 100 ms / RTTmin, to [0.5, 10], i.e. this
    /// ratio to [0.1, 2]; FreeBSD clamps this ratio to [0.1, 2].)
    pub fn rtt_scale(&self, rtt_min_ns: u64) -> f64 {
        if !self.rtt_scaling || rtt_min_ns == 0 {
            return 1.0;
        }
        (rtt_min_ns as f64 / NS_PER_S / self.rtt_ref_s).clamp(self.scale_min, self.scale_max)
    }

    /// The increase factor before the 2(1 - beta) fairness scaling:
    /// alpha-bar(Delta) (eq. (20)) times the RTT scaling, never below 1, so
    /// that the scaling never takes the increase below the standard one
    /// (Linux `htcp_alpha_update`: `factor = (factor << 3) / scale; if
    /// (!factor) factor = 1`; FreeBSD `htcp_recalc_alpha`: `max(1, ...)`).
    pub fn alpha_factor(&self, delta_s: f64, rtt_min_ns: u64) -> f64 {
        let bar = self.alpha_of_delta(delta_s);
        if !self.rtt_scaling || rtt_min_ns == 0 {
            return bar;
        }
        (bar * self.rtt_scale(rtt_min_ns)).max(1.0)
    }
}

/// Linux's achieved-throughput estimate (`measure_achieved_throughput`), used
/// only with `bandwidth_switch`.
#[derive(Clone, Debug, Default, PartialEq)]
struct Throughput {
    packets: f64,
    since_ns: u64,
    smoothed_pps: f64,
    max_pps: f64,
    old_max_pps: f64,
}

/// The congestion episode whose end restarts Delta (Linux: `htcp_reset` saved
/// `undo_last_cong`, which `htcp_state(TCP_CA_Open)` then consumes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Episode {
    /// None pending.
    Open,
    /// A fast recovery: its end sets cwnd = ssthresh and restarts Delta.
    FastRecovery,
    /// A timeout recovery (TCP_CA_Loss): its end, if the transport reports
    /// it, restarts Delta and leaves the slow-starting cwnd alone.
    TimeoutRecovery,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Htcp {
    cfg: HtcpConfig,
    cwnd: f64,
    ssthresh: f64,
    /// The backoff factor of the last congestion event (beta_min before the first).
    beta: f64,
    /// Linux `modeswitch`: adaptive backoff is allowed (false until the first
    /// congestion event and after a bandwidth switch).
    modeswitch: bool,
    rtt_min_ns: u64,
    rtt_max_ns: u64,
    /// Where Delta counts from: the end of the last congestion episode (its
    /// start while it lasts), or the connection's first packet.
    last_congestion_ns: Option<u64>,
    episode: Episode,
    congestion_events: u64,
    tput: Throughput,
}

impl Htcp {
    pub fn new(cfg: HtcpConfig, init: InitialWindow) -> Self {
        Self {
            cfg,
            cwnd: init.cwnd_pkts,
            ssthresh: init.ssthresh_pkts,
            beta: cfg.beta_min,
            modeswitch: false,
            rtt_min_ns: 0,
            rtt_max_ns: 0,
            last_congestion_ns: None,
            episode: Episode::Open,
            congestion_events: 0,
            tput: Throughput::default(),
        }
    }

    pub fn beta(&self) -> f64 {
        self.beta
    }
    pub fn rtt_max_ns(&self) -> u64 {
        self.rtt_max_ns
    }
    /// Congestion events counted so far (reductions, not repeated expiries).
    pub fn congestion_events(&self) -> u64 {
        self.congestion_events
    }
    /// Where Delta counts from (None before the first packet).
    pub fn last_congestion_ns(&self) -> Option<u64> {
        self.last_congestion_ns
    }

    /// The increase in packets per RTT at time `now_ns`: eq. (16) with (20),
    /// with the optional RTT scaling inside the factor (see
    /// [`HtcpConfig::alpha_factor`]); Linux `alpha = 2 * factor * ((1 << 7) - beta)`.
    pub fn alpha(&self, now_ns: u64) -> f64 {
        let since = self
            .last_congestion_ns
            .map_or(0, |t| now_ns.saturating_sub(t));
        let delta_s = since as f64 / NS_PER_S;
        2.0 * (1.0 - self.beta) * self.cfg.alpha_factor(delta_s, self.rtt_min_ns)
    }

    /// RTTmin from every sample; RTTmax outside recovery, from the raw sample
    /// or the smoothed RTT, raised by at most 20 ms at a time (Linux
    /// `measure_rtt`), so that one ACK held by the receiver's delayed-ACK
    /// timer does not set beta for the next event.
    fn measure_rtt(&mut self, ack: &AckEvent) {
        let sample = ack.rtt.latest_ns;
        self.rtt_min_ns = if self.rtt_min_ns == 0 {
            sample
        } else {
            self.rtt_min_ns.min(sample)
        };
        if ack.in_recovery {
            return;
        }
        self.rtt_max_ns = self.rtt_max_ns.max(self.rtt_min_ns);
        let rtt = if self.cfg.rtt_max_from_samples {
            sample
        } else {
            ack.rtt.smoothed_ns
        };
        if rtt > self.rtt_max_ns && rtt <= self.rtt_max_ns + RTT_MAX_STEP_NS {
            self.rtt_max_ns = rtt;
        }
    }

    fn measure_throughput(&mut self, ack: &AckEvent) {
        let t = &mut self.tput;
        if ack.in_recovery {
            t.packets = 0.0;
            t.since_ns = ack.now_ns;
            return;
        }
        t.packets += f64::from(ack.delivered_pkts);
        let elapsed = ack.now_ns.saturating_sub(t.since_ns);
        if self.rtt_min_ns > 0 && elapsed >= self.rtt_min_ns && t.packets >= self.cwnd - 1.0 {
            let pps = t.packets * NS_PER_S / elapsed as f64;
            let since_cong = self
                .last_congestion_ns
                .map_or(u64::MAX, |c| ack.now_ns.saturating_sub(c));
            if since_cong <= 3 * self.rtt_min_ns {
                t.smoothed_pps = pps;
                t.max_pps = pps;
            } else {
                t.smoothed_pps = (3.0 * t.smoothed_pps + pps) / 4.0;
                t.max_pps = t.max_pps.max(t.smoothed_pps);
            }
            t.packets = 0.0;
            t.since_ns = ack.now_ns;
        }
    }

    /// The backoff factor for the congestion event now starting (eq. (18);
    /// Linux `htcp_beta_update`).
    fn next_beta(&mut self) -> f64 {
        if self.cfg.bandwidth_switch {
            let (max, old) = (self.tput.max_pps, self.tput.old_max_pps);
            self.tput.old_max_pps = max;
            // Linux: `!between(5 * maxB, 4 * old_maxB, 6 * old_maxB)`.
            if !(4.0 * old <= 5.0 * max && 5.0 * max <= 6.0 * old) {
                self.modeswitch = false;
                return self.cfg.beta_min;
            }
        }
        // The first backoff (and the first after a bandwidth switch) uses
        // beta_min: RTTmax has not yet been seen with a full queue. The
        // paper's Fig. 6 shows the first backoff by 0.5; Linux `modeswitch`.
        let rtt_min_s = self.rtt_min_ns as f64 / NS_PER_S;
        if self.modeswitch && rtt_min_s > self.cfg.adaptive_min_rtt_s && self.rtt_max_ns > 0 {
            (self.rtt_min_ns as f64 / self.rtt_max_ns as f64)
                .clamp(self.cfg.beta_min, self.cfg.beta_max)
        } else {
            self.modeswitch = true;
            self.cfg.beta_min
        }
    }

    /// A congestion event's parameter update, at a fast retransmit or at a
    /// timeout that reduces (Linux `htcp_param_update`, called by the
    /// ssthresh op): beta from the RTTmax measured up to now (eq. (18)),
    /// then RTTmax fades towards RTTmin (eq. (15)).
    fn congestion_event(&mut self) {
        self.beta = self.next_beta();
        if self.rtt_min_ns > 0 && self.rtt_max_ns > self.rtt_min_ns {
            let span = (self.rtt_max_ns - self.rtt_min_ns) as f64;
            self.rtt_max_ns = self.rtt_min_ns + (self.cfg.rtt_max_fade * span).round() as u64;
        }
        self.congestion_events += 1;
    }

    /// An episode begins: Delta restarts now and again at its end (Linux
    /// `htcp_reset` from `htcp_state(TCP_CA_Recovery | TCP_CA_Loss)`).
    fn begin_episode(&mut self, now_ns: u64, episode: Episode) {
        self.last_congestion_ns = Some(now_ns);
        self.episode = episode;
    }
}

/// Largest rise of RTTmax per sample (Linux `measure_rtt`: 20 ms).
const RTT_MAX_STEP_NS: u64 = 20_000_000;

impl CongestionControl for Htcp {
    fn name(&self) -> &'static str {
        "htcp"
    }
    fn cwnd(&self) -> f64 {
        self.cwnd
    }
    fn ssthresh(&self) -> f64 {
        self.ssthresh
    }

    fn on_send(&mut self, now_ns: u64, _seq: u64, _bytes: u32, _retransmit: bool) -> u32 {
        self.last_congestion_ns.get_or_insert(now_ns);
        0
    }

    fn on_ack(&mut self, ack: &AckEvent) {
        self.last_congestion_ns.get_or_insert(ack.now_ns);
        if ack.rtt_updated && ack.rtt.latest_ns > 0 {
            self.measure_rtt(ack);
        }
        if self.cfg.bandwidth_switch {
            self.measure_throughput(ack);
        }
        let alpha = self.alpha(ack.now_ns);
        // eq. (17): cwnd += alpha / cwnd per ACK.
        grow(&mut self.cwnd, self.ssthresh, ack, |cwnd, delivered| {
            *cwnd += alpha * delivered / *cwnd
        });
    }

    fn on_congestion_event(&mut self, loss: &LossEvent) {
        loss.cap(&mut self.cwnd);
        self.congestion_event();
        // eq. (19)
        reduce(self.beta * self.cwnd, &mut self.cwnd, &mut self.ssthresh);
        self.begin_episode(loss.now_ns, Episode::FastRecovery);
    }

    /// Delta counts from the end of the episode (Linux `htcp_state(TCP_CA_Open)`:
    /// `last_cong = jiffies` when an episode was pending).
    fn on_recovery_exit(&mut self, now_ns: u64) {
        match self.episode {
            Episode::FastRecovery => {
                self.cwnd = self.ssthresh;
                self.last_congestion_ns = Some(now_ns);
            }
            // Leaving TCP_CA_Loss does not touch cwnd in Linux.
            Episode::TimeoutRecovery => self.last_congestion_ns = Some(now_ns),
            Episode::Open => self.cwnd = self.ssthresh,
        }
        self.episode = Episode::Open;
    }

    /// Linux `htcp_state(TCP_CA_Open)` on leaving TCP_CA_Loss: Delta
    /// restarts when the timeout recovery ends; cwnd is left alone.
    fn on_timeout_recovery_exit(&mut self, now_ns: u64) {
        if self.episode == Episode::TimeoutRecovery {
            self.on_recovery_exit(now_ns);
        }
    }

    /// Linux `tcp_enter_loss`: the ssthresh op (`htcp_recalc_ssthresh`: beta,
    /// RTTmax fade) only when the expiry reduces (`rto.reduce`); then on every
    /// expiry `htcp_state(TCP_CA_Loss)` restarts Delta. cwnd restarts at one
    /// packet.
    fn on_rto(&mut self, rto: &RtoEvent) {
        rto.cap(&mut self.cwnd);
        if rto.reduce {
            self.congestion_event();
        }
        let reduced = self.beta * self.cwnd;
        timeout(reduced, rto, &mut self.cwnd, &mut self.ssthresh);
        self.begin_episode(rto.now_ns, Episode::TimeoutRecovery);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CcClone, RttStats};

    const MS: u64 = 1_000_000;
    const S: u64 = 1_000_000_000;

    /// An RTT sample that delivers nothing (no window growth).
    fn ack(now_ns: u64, rtt_ns: u64, in_recovery: bool) -> AckEvent {
        AckEvent {
            now_ns,
            in_recovery,
            rtt: RttStats {
                latest_ns: rtt_ns,
                min_ns: rtt_ns,
                smoothed_ns: rtt_ns,
            },
            rtt_updated: true,
            ..Default::default()
        }
    }

    fn loss(now_ns: u64) -> LossEvent {
        LossEvent {
            now_ns,
            ..Default::default()
        }
    }

    fn ca(cwnd: f64) -> Htcp {
        Htcp::new(
            HtcpConfig::default(),
            InitialWindow {
                cwnd_pkts: cwnd,
                ssthresh_pkts: 1.0,
            },
        )
    }

    #[test]
    fn alpha_of_delta_follows_eq20() {
        let c = HtcpConfig::default();
        assert_eq!(c.alpha_of_delta(0.0), 1.0);
        assert_eq!(
            c.alpha_of_delta(1.0),
            1.0,
            "Delta = Delta^L is still legacy"
        );
        // Delta = 2 s: 1 + 10 * 1 + (1/2)^2 = 11.25
        assert_eq!(c.alpha_of_delta(2.0), 11.25);
        // Delta = 5 s: 1 + 40 + 4 = 45
        assert_eq!(c.alpha_of_delta(5.0), 45.0);
        // Delta = 11 s: 1 + 100 + 25 = 126
        assert_eq!(c.alpha_of_delta(11.0), 126.0);
        // Boundary pair around Delta^L: continuous at 1 from the right.
        assert!((c.alpha_of_delta(1.0 + 1e-9) - 1.0).abs() < 1e-7);
    }

    #[test]
    fn alpha_is_scaled_by_two_one_minus_beta() {
        let mut h = ca(100.0);
        h.on_ack(&ack(0, 100 * MS, false)); // Delta counted from here
        h.beta = 0.8;
        // Delta = 3 s: alpha-bar = 1 + 20 + 1 = 22, times 2 * 0.2
        assert!((h.alpha(3 * S) - 22.0 * 0.4).abs() < 1e-12);
        h.beta = 0.5;
        assert!((h.alpha(3 * S) - 22.0).abs() < 1e-12);
    }

    #[test]
    fn first_backoff_halves_then_adapts_to_rtt_ratio() {
        let mut h = ca(1000.0);
        climb(&mut h, 100, 150); // RTTmax = 150 ms
        h.on_congestion_event(&loss(2));
        assert_eq!((h.beta(), h.cwnd()), (0.5, 500.0));
        // RTTmax faded by eq. (15): 100 + 7/8 * 50 = 143.75 ms
        assert_eq!(h.rtt_max_ns(), 143_750_000);
        h.on_congestion_event(&loss(3));
        assert!((h.beta() - 100.0 / 143.75).abs() < 1e-12);
        assert!((h.cwnd() - 500.0 * 100.0 / 143.75).abs() < 1e-9);
    }

    #[test]
    fn beta_is_clamped_at_both_ends() {
        // RTTmin/RTTmax = 0.3 -> 0.5
        let mut h = ca(1000.0);
        climb(&mut h, 30, 100);
        h.on_congestion_event(&loss(2));
        climb(&mut h, 30, 100);
        h.on_congestion_event(&loss(4));
        assert_eq!(h.beta(), 0.5);
        // RTTmin/RTTmax = 0.95 -> 0.8
        let mut h = ca(1000.0);
        h.on_ack(&ack(0, 95 * MS, false));
        h.on_ack(&ack(1, 100 * MS, false));
        h.on_congestion_event(&loss(2));
        h.on_congestion_event(&loss(3));
        assert_eq!(h.beta(), 0.8);
        assert_eq!(h.cwnd(), 1000.0 * 0.5 * 0.8);
    }

    #[test]
    fn rtt_max_fades_geometrically_towards_rtt_min() {
        let mut h = ca(1000.0);
        climb(&mut h, 100, 200);
        for n in 1..=5u32 {
            h.on_congestion_event(&loss(u64::from(n)));
            let expected = 100.0 + 100.0 * (7.0f64 / 8.0).powi(n as i32);
            assert!(
                (h.rtt_max_ns() as f64 / MS as f64 - expected).abs() < 1e-5,
                "event {n}"
            );
        }
    }

    /// Feeds smoothed-RTT samples from `from_ms` up to `to_ms` in 20 ms steps
    /// (the most RTTmax rises per sample).
    fn climb(h: &mut Htcp, from_ms: u64, to_ms: u64) {
        let mut r = from_ms;
        loop {
            h.on_ack(&ack(0, r * MS, false));
            if r == to_ms {
                return;
            }
            r = (r + 20).min(to_ms);
        }
    }

    #[test]
    fn rtt_max_ignores_a_jump_of_more_than_20_ms() {
        let mut h = ca(100.0);
        h.on_ack(&ack(0, 100 * MS, false));
        // One ACK held 40 ms by a delayed-ACK timer: not a queue.
        h.on_ack(&ack(1, 140 * MS, false));
        assert_eq!(h.rtt_max_ns(), 100 * MS);
        h.on_ack(&ack(2, 120 * MS, false));
        assert_eq!(h.rtt_max_ns(), 120 * MS);
        h.on_ack(&ack(3, 140 * MS, false));
        assert_eq!(h.rtt_max_ns(), 140 * MS);
    }

    #[test]
    fn rtt_max_ignores_samples_taken_in_recovery() {
        let mut h = ca(100.0);
        h.on_ack(&ack(0, 100 * MS, false));
        h.on_ack(&ack(1, 300 * MS, true));
        assert_eq!(h.rtt_max_ns(), 100 * MS);
    }

    #[test]
    fn increase_per_rtt_equals_alpha() {
        // Delta = 4 s after a congestion event, beta = 0.5: alpha = 1 + 30 + 2.25 = 33.25.
        let mut h = ca(2000.0);
        h.on_ack(&ack(0, 100 * MS, false));
        h.on_congestion_event(&loss(0)); // beta 0.5, cwnd 1000
        h.on_recovery_exit(0);
        let start = h.cwnd();
        // One window of ACKs spread over 1 ms around Delta = 4 s.
        let n = start as u64;
        for i in 0..n {
            h.on_ack(&AckEvent {
                delivered_pkts: 1,
                growth_pkts: 1,
                ..ack(4 * S + i * 1_000, 100 * MS, false)
            });
        }
        let alpha = HtcpConfig::default().alpha_of_delta(4.0);
        assert!((alpha - 33.25).abs() < 1e-12);
        let gained = h.cwnd() - start;
        assert!(
            (gained - alpha).abs() < 0.02 * alpha,
            "gained {gained}, alpha {alpha}"
        );
    }

    #[test]
    fn rtt_scaling_multiplies_alpha_within_the_clamp() {
        let cfg = HtcpConfig {
            rtt_scaling: true,
            ..Default::default()
        };
        assert_eq!(cfg.rtt_scale(200 * MS), 2.0);
        assert_eq!(cfg.rtt_scale(20 * MS), 0.5, "clamped below");
        assert_eq!(cfg.rtt_scale(5 * S), 10.0, "clamped above");
        assert_eq!(
            HtcpConfig::default().rtt_scale(200 * MS),
            1.0,
            "off by default"
        );
    }

    #[test]
    fn bandwidth_switch_backs_off_by_half_after_a_throughput_change() {
        let cfg = HtcpConfig {
            bandwidth_switch: true,
            ..Default::default()
        };
        let mut h = Htcp::new(
            cfg,
            InitialWindow {
                cwnd_pkts: 100.0,
                ssthresh_pkts: 1.0,
            },
        );
        h.on_ack(&ack(0, 100 * MS, false));
        h.on_ack(&ack(1, 125 * MS, false));
        h.tput.max_pps = 1000.0;
        h.tput.old_max_pps = 1000.0;
        h.modeswitch = true;
        assert_eq!(h.next_beta(), 0.8, "steady throughput: adaptive beta");
        h.tput.max_pps = 1500.0; // +50 %
        assert_eq!(h.next_beta(), 0.5);
    }

    // ---- Regression tests for the issue "A faithful TCP", defect 7 ----

    /// An RTT sample whose smoothed value differs from the sample.
    fn ack_srtt(now_ns: u64, latest_ns: u64, smoothed_ns: u64) -> AckEvent {
        AckEvent {
            rtt: RttStats {
                latest_ns,
                min_ns: latest_ns,
                smoothed_ns,
            },
            ..ack(now_ns, latest_ns, false)
        }
    }

    /// One ACK per packet of the window, `growth_pkts` = 1, all at `now_ns`:
    /// the window's gain over one RTT.
    fn one_rtt_of_acks(h: &mut Htcp, now_ns: u64, rtt_ns: u64) -> f64 {
        let start = h.cwnd();
        for _ in 0..start as u64 {
            h.on_ack(&AckEvent {
                delivered_pkts: 1,
                growth_pkts: 1,
                ..ack(now_ns, rtt_ns, false)
            });
        }
        h.cwnd() - start
    }

    #[test]
    fn htcp_rtt_scaling_never_drops_below_reno_increase() {
        let scaled = |scale_min, scale_max| {
            let cfg = HtcpConfig {
                rtt_scaling: true,
                scale_min,
                scale_max,
                ..Default::default()
            };
            let mut h = Htcp::new(
                cfg,
                InitialWindow {
                    cwnd_pkts: 100.0,
                    ssthresh_pkts: 1.0,
                },
            );
            // RTTmin 16 ms, RTTmax 20 ms. First event: beta 0.5 (cwnd 50),
            // RTTmax fades to 16 + 7/8 * 4 = 19.5 ms; second event: beta =
            // 16/19.5 = 0.82 -> clamped to 0.8 (cwnd 40).
            h.on_ack(&ack(0, 16 * MS, false));
            h.on_ack(&ack(0, 20 * MS, false));
            h.on_congestion_event(&loss(S));
            h.on_recovery_exit(S);
            h.on_congestion_event(&loss(2 * S));
            h.on_recovery_exit(2 * S);
            assert_eq!((h.beta(), h.cwnd()), (0.8, 40.0));
            h
        };
        // The paper's clamp [0.5, 10]: scale = clamp(16/100) = 0.5.
        let mut h = scaled(0.5, 10.0);
        // Delta = 0.5 s (low-speed mode): alpha-bar = 1, 1 * 0.5 < 1 so the
        // factor stays 1 (Linux `if (!factor) factor = 1`): alpha =
        // 2 (1 - 0.8) * 1 = 0.4 packets per RTT, Reno's fair share. (The
        // unfixed code gave 0.4 * 0.5 = 0.2.)
        assert!((h.alpha(2 * S + S / 2) - 0.4).abs() < 1e-12);
        // Delta = 2 s: alpha-bar = 1 + 10 + 1/4 = 11.25, * 0.5 = 5.625 > 1:
        // alpha = 0.4 * 5.625 = 2.25 (the floor does not bind).
        assert!((h.alpha(4 * S) - 2.25).abs() < 1e-12);
        // Measured: one window of 40 ACKs at Delta = 0.5 s grows cwnd by
        // 0.4 * sum 1/cwnd_i ~= 0.4 (cwnd moves from 40 to 40.4).
        let gained = one_rtt_of_acks(&mut h, 2 * S + S / 2, 16 * MS);
        assert!((gained - 0.4).abs() < 0.01 * 0.4, "gained {gained}");

        // Linux's clamp (scale = 100 ms/RTTmin in [0.5, 10], i.e. RTTmin/100 ms
        // in [0.1, 2]): at 16 ms the multiplier is 0.16.
        let h = scaled(0.1, 2.0);
        // Delta = 1.1 s: alpha-bar = 1 + 1 + 0.05^2 = 2.0025, * 0.16 = 0.3204
        // -> floored to 1: alpha = 0.4.
        assert!((h.alpha(2 * S + 1_100 * MS) - 0.4).abs() < 1e-12);
        // Delta = 2 s: 11.25 * 0.16 = 1.8: alpha = 0.4 * 1.8 = 0.72.
        assert!((h.alpha(4 * S) - 0.72).abs() < 1e-12);
    }

    #[test]
    fn htcp_delta_counts_from_end_of_recovery() {
        let mut h = ca(1000.0);
        h.on_ack(&ack(0, 100 * MS, false));
        // Loss detected at 10 s, recovery over at 10.5 s (Linux: htcp_reset
        // at entering Recovery, then `last_cong = jiffies` again in
        // htcp_state(TCP_CA_Open)).
        h.on_congestion_event(&loss(10 * S));
        h.on_recovery_exit(10 * S + 500 * MS);
        assert_eq!(h.beta(), 0.5);
        // At 11.5 s Delta = 1 s <= Delta_L: alpha = 2 (1 - 0.5) * 1 = 1.
        // (Counting from the loss, Delta = 1.5 s: 1 + 5 + 0.0625 = 6.0625.)
        assert_eq!(h.alpha(11 * S + 500 * MS), 1.0);
        // At 12.5 s Delta = 2 s: alpha = 1 * (1 + 10 + 0.25) = 11.25.
        assert!((h.alpha(12 * S + 500 * MS) - 11.25).abs() < 1e-9);
    }

    #[test]
    fn htcp_timeout_recovery_end_restarts_delta_and_keeps_cwnd() {
        let mut h = ca(1000.0);
        h.on_ack(&ack(0, 100 * MS, false));
        h.on_rto(&RtoEvent::first(10 * S));
        // First event: beta 0.5, ssthresh 500, cwnd 1.
        assert_eq!((h.beta(), h.ssthresh(), h.cwnd()), (0.5, 500.0, 1.0));
        // Without a report of the timeout recovery's end Delta counts from
        // the expiry (Linux htcp_state(TCP_CA_Loss)): at 11.5 s Delta = 1.5 s,
        // alpha = 1 * (1 + 5 + 0.0625).
        assert!((h.alpha(11 * S + 500 * MS) - 6.0625).abs() < 1e-9);
        // The transport reports the end of the timeout recovery at 11 s
        // (Linux: Loss -> Open restarts last_cong and leaves cwnd alone).
        h.on_recovery_exit(11 * S);
        assert_eq!(h.cwnd(), 1.0, "a timeout recovery's end keeps cwnd");
        assert_eq!(h.alpha(11 * S + 500 * MS), 1.0);
        assert!((h.alpha(13 * S) - 11.25).abs() < 1e-9);
    }

    #[test]
    fn htcp_rtt_max_fades_on_rto() {
        let mut h = ca(1000.0);
        climb(&mut h, 100, 200);
        assert_eq!(h.rtt_max_ns(), 200 * MS);
        h.on_rto(&RtoEvent::first(S));
        // eq. (15) at the timeout (Linux htcp_param_update via the ssthresh
        // op): 100 + 7/8 * 100 = 187.5 ms.
        assert_eq!(h.rtt_max_ns(), 187_500_000);
        assert_eq!(h.ssthresh(), 500.0);
        // A backed-off expiry without progress is not a congestion event.
        h.on_rto(&RtoEvent::repeat(2 * S, 2));
        assert_eq!(h.rtt_max_ns(), 187_500_000);
    }

    #[test]
    fn htcp_rto_during_recovery_is_not_a_second_congestion_event() {
        let mut h = ca(1000.0);
        climb(&mut h, 100, 150);
        // First event: beta 0.5, cwnd = ssthresh = 500, RTTmax faded to
        // 100 + 7/8 * 50 = 143.75 ms.
        h.on_congestion_event(&loss(S));
        assert_eq!((h.beta(), h.ssthresh()), (0.5, 500.0));
        // The RTO fires during that fast recovery: it keeps ssthresh
        // (rto.reduce == false; Linux tcp_enter_loss skips the ssthresh op).
        h.on_rto(&RtoEvent {
            now_ns: 2 * S,
            backoff: 1,
            reduce: false,
            ..Default::default()
        });
        assert_eq!((h.beta(), h.ssthresh(), h.cwnd()), (0.5, 500.0, 1.0));
        assert_eq!(h.rtt_max_ns(), 143_750_000, "no second fade");
        // Delta restarts at the expiry (htcp_reset on TCP_CA_Loss): at 3.5 s
        // Delta = 1.5 s, alpha = 2 (1 - 0.5) * 6.0625.
        assert!((h.alpha(3 * S + 500 * MS) - 6.0625).abs() < 1e-9);
        // The next loss is the second congestion event: adaptive backoff with
        // the once-faded RTTmax, beta = 100 / 143.75.
        h.cwnd = 1000.0;
        h.on_congestion_event(&loss(4 * S));
        assert!((h.beta() - 100.0 / 143.75).abs() < 1e-12);
    }

    #[test]
    fn htcp_bandwidth_switch_delays_adaptive_backoff_one_event() {
        let cfg = HtcpConfig {
            bandwidth_switch: true,
            ..Default::default()
        };
        let mut h = Htcp::new(
            cfg,
            InitialWindow {
                cwnd_pkts: 1000.0,
                ssthresh_pkts: 1.0,
            },
        );
        // RTTmin/RTTmax = 100/125 = 0.8.
        climb(&mut h, 100, 125);
        // Event 1: maxB = old_maxB = 0, no switch; first event: 0.5.
        h.on_congestion_event(&loss(S));
        assert_eq!(h.beta(), 0.5);
        // Event 2: maxB 1000 against old_maxB 0: switch, 0.5, and Linux's
        // `modeswitch = 0` delays the adaptive backoff one more event.
        h.tput.max_pps = 1000.0;
        h.on_congestion_event(&loss(2 * S));
        assert_eq!(h.beta(), 0.5);
        // Event 3: throughput steady (5 * 1000 in [4, 6] * 1000), but
        // modeswitch is off: 0.5 again, modeswitch back on.
        h.on_congestion_event(&loss(3 * S));
        assert_eq!(h.beta(), 0.5);
        // Event 4: adaptive. RTTmax faded three times: 100 + 25 (7/8)^3 =
        // 116.75 ms, 100/116.75 = 0.857 -> clamped to 0.8.
        h.on_congestion_event(&loss(4 * S));
        assert_eq!(h.beta(), 0.8);
    }

    #[test]
    fn htcp_rtt_max_from_smoothed_rtt_by_default() {
        let mut h = ca(100.0);
        h.on_ack(&ack(0, 100 * MS, false));
        // Raw sample 130 ms, SRTT 110 ms: RTTmax follows SRTT.
        h.on_ack(&ack_srtt(1, 130 * MS, 110 * MS));
        assert_eq!(h.rtt_max_ns(), 110 * MS);
        // RTTmin is the smallest raw sample either way.
        h.on_ack(&ack_srtt(2, 90 * MS, 108 * MS));
        assert_eq!(h.rtt_min_ns, 90 * MS);
        assert_eq!(h.rtt_max_ns(), 110 * MS);
    }

    #[test]
    fn htcp_rtt_max_from_raw_samples_like_linux() {
        let cfg = HtcpConfig {
            rtt_max_from_samples: true,
            ..Default::default()
        };
        let mut h = Htcp::new(cfg, InitialWindow::default());
        h.on_ack(&ack(0, 100 * MS, false));
        // Raw sample 115 ms, SRTT 102 ms: RTTmax follows the sample.
        h.on_ack(&ack_srtt(1, 115 * MS, 102 * MS));
        assert_eq!(h.rtt_max_ns(), 115 * MS);
        // The 20 ms step filter applies to raw samples too: 140 > 115 + 20.
        h.on_ack(&ack_srtt(2, 140 * MS, 105 * MS));
        assert_eq!(h.rtt_max_ns(), 115 * MS);
        h.on_ack(&ack_srtt(3, 135 * MS, 108 * MS));
        assert_eq!(h.rtt_max_ns(), 135 * MS);
    }

    #[test]
    fn htcp_no_adaptive_backoff_below_adaptive_min_rtt() {
        // Linux: beta = RTTmin/RTTmax only when RTTmin > 10 ms.
        let cfg = HtcpConfig {
            adaptive_min_rtt_s: 0.01,
            ..Default::default()
        };
        let run = |rtt_min_ms: u64| {
            let mut h = Htcp::new(
                cfg,
                InitialWindow {
                    cwnd_pkts: 1000.0,
                    ssthresh_pkts: 1.0,
                },
            );
            // RTTmax = RTTmin + 2 ms: ratio >= 0.83 -> 0.8 when adaptive.
            h.on_ack(&ack(0, rtt_min_ms * MS, false));
            h.on_ack(&ack(0, (rtt_min_ms + 2) * MS, false));
            h.on_congestion_event(&loss(S));
            h.on_congestion_event(&loss(2 * S));
            h.beta()
        };
        assert_eq!(run(10), 0.5, "10 ms is not above 10 ms");
        assert_eq!(run(11), 0.8);
        // Default (the paper): no such floor.
        let mut h = ca(1000.0);
        h.on_ack(&ack(0, 5 * MS, false));
        h.on_ack(&ack(0, 6 * MS, false));
        h.on_congestion_event(&loss(S));
        h.on_congestion_event(&loss(2 * S));
        assert_eq!(h.beta(), 0.8);
    }

    #[test]
    fn htcp_undo_snapshot_restores_delta_and_rtt_max() {
        // Linux htcp_cwnd_undo restores last_cong, maxRTT and old_maxB; the
        // transport's undo restores the whole controller from the snapshot
        // taken before the reduction (`CcClone::snapshot`).
        let mut h = ca(1000.0);
        climb(&mut h, 100, 200);
        // First event at 1 s, over at once: beta 0.5, cwnd 500, RTTmax
        // 100 + 7/8 * 100 = 187.5 ms, Delta from 1 s.
        h.on_congestion_event(&loss(S));
        h.on_recovery_exit(S);
        let mut restored = h.snapshot();
        // A spurious fast retransmit at 5 s fades RTTmax and restarts Delta.
        h.on_congestion_event(&loss(5 * S));
        assert_eq!(h.rtt_max_ns(), 176_562_500);
        // The undone controller: at 6 s Delta = 5 s from 1 s, alpha-bar =
        // 1 + 40 + 4 = 45, alpha = 2 (1 - 0.5) * 45 = 45: one ACK adds 45/500.
        restored.on_ack(&AckEvent {
            delivered_pkts: 1,
            growth_pkts: 1,
            ..ack(6 * S, 100 * MS, false)
        });
        let cwnd = 500.0 + 45.0 / 500.0;
        assert!((restored.cwnd() - cwnd).abs() < 1e-9);
        // Its next event backs off by RTTmin / the un-faded RTTmax = 100/187.5.
        restored.on_congestion_event(&loss(6 * S));
        assert!((restored.cwnd() - cwnd * 100.0 / 187.5).abs() < 1e-9);
    }

    #[test]
    fn params_parse_new_options_and_refuse_bad_values() {
        let p: CcParams = [
            ("rtt_max_from_samples".to_string(), 1.0),
            ("adaptive_min_rtt".to_string(), 0.01),
        ]
        .into_iter()
        .collect();
        let c = HtcpConfig::from_params(&p, Rules::Rfc).unwrap();
        assert!(c.rtt_max_from_samples);
        assert_eq!(c.adaptive_min_rtt_s, 0.01);
        let bad: CcParams = [("rtt_max_from_samples".to_string(), 2.0)]
            .into_iter()
            .collect();
        let e = HtcpConfig::from_params(&bad, Rules::Rfc).unwrap_err();
        assert_eq!(e.field, "params.rtt_max_from_samples");
        let bad: CcParams = [("adaptive_min_rtt".to_string(), -1.0)]
            .into_iter()
            .collect();
        let e = HtcpConfig::from_params(&bad, Rules::Rfc).unwrap_err();
        assert_eq!(e.field, "params.adaptive_min_rtt");
    }
}
