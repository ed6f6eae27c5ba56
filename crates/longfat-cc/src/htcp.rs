//! H-TCP (Leith, Shorten, Lee; `htcp.md` §VI).
//!
//! AIMD whose increase grows with the time Delta since the last congestion
//! event (eq. (20)), scaled by 2(1 - beta) for fairness (eq. (16)), and whose
//! backoff adapts to the path's buffering: beta = RTTmin/RTTmax clamped to
//! [0.5, 0.8] (eq. (18)).

use crate::error::{CcError, CcParams};
use crate::helpers::{grow, reduce, timeout};
use crate::params::ParamReader;
use crate::{AckEvent, CongestionControl, InitialWindow, LossEvent, RtoEvent};

const NS_PER_S: f64 = 1e9;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HtcpConfig {
    /// Delta^L: time after a backoff during which the increase is Reno's (eq. (20): 1 s).
    pub delta_l_s: f64,
    /// The clamp on the adaptive backoff factor (eq. (18), §V-B: [0.5, 0.8]).
    pub beta_min: f64,
    pub beta_max: f64,
    /// a in the fading memory of RTTmax (eq. (15): 7/8).
    pub rtt_max_fade: f64,
    /// §IV (iv): multiply alpha by RTTmin / rtt_ref, clamped to [scale_min, scale_max]. Off by default.
    pub rtt_scaling: bool,
    pub rtt_ref_s: f64,
    pub scale_min: f64,
    pub scale_max: f64,
    /// Linux `use_bandwidth_switch`: back off by beta_min when the achieved
    /// throughput changed by more than 20 % since the last congestion event.
    /// Not in the paper; off by default.
    pub bandwidth_switch: bool,
}

impl Default for HtcpConfig {
    fn default() -> Self {
        Self {
            delta_l_s: 1.0,
            beta_min: 0.5,
            beta_max: 0.8,
            rtt_max_fade: 7.0 / 8.0,
            rtt_scaling: false,
            rtt_ref_s: 0.1,
            scale_min: 0.5,
            scale_max: 10.0,
            bandwidth_switch: false,
        }
    }
}

impl HtcpConfig {
    pub fn from_params(params: &CcParams) -> Result<Self, CcError> {
        let d = Self::default();
        let mut r = ParamReader::new("htcp", params);
        let cfg = Self {
            delta_l_s: r.real("delta_l", d.delta_l_s, 0.0, 3600.0)?,
            beta_min: r.real_open("beta_min", d.beta_min, 0.0, 1.0)?,
            beta_max: r.real_open("beta_max", d.beta_max, 0.0, 1.0)?,
            rtt_max_fade: r.real("rtt_max_fade", d.rtt_max_fade, 0.0, 1.0)?,
            rtt_scaling: r.flag("rtt_scaling", d.rtt_scaling)?,
            rtt_ref_s: r.real_open("rtt_ref", d.rtt_ref_s, 0.0, 3600.0)?,
            scale_min: r.real_open("scale_min", d.scale_min, 0.0, 1e6)?,
            scale_max: r.real_open("scale_max", d.scale_max, 0.0, 1e6)?,
            bandwidth_switch: r.flag("bandwidth_switch", d.bandwidth_switch)?,
        };
        r.finish()?;
        if cfg.beta_min > cfg.beta_max {
            return Err(CcError {
                field: "params.beta_min".into(),
                message: format!("{} exceeds beta_max = {}", cfg.beta_min, cfg.beta_max),
            });
        }
        if cfg.scale_min > cfg.scale_max {
            return Err(CcError {
                field: "params.scale_min".into(),
                message: format!("{} exceeds scale_max = {}", cfg.scale_min, cfg.scale_max),
            });
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

    /// The §IV (iv) RTT scaling factor RTTmin / rtt_ref, clamped (footnote 4).
    pub fn rtt_scale(&self, rtt_min_ns: u64) -> f64 {
        if !self.rtt_scaling || rtt_min_ns == 0 {
            return 1.0;
        }
        (rtt_min_ns as f64 / NS_PER_S / self.rtt_ref_s).clamp(self.scale_min, self.scale_max)
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

#[derive(Clone, Debug, PartialEq)]
pub struct Htcp {
    cfg: HtcpConfig,
    cwnd: f64,
    ssthresh: f64,
    /// The backoff factor of the last congestion event (0.5 before the first).
    beta: f64,
    rtt_min_ns: u64,
    rtt_max_ns: u64,
    /// When the last congestion event began (or the connection, before one).
    last_congestion_ns: Option<u64>,
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
            rtt_min_ns: 0,
            rtt_max_ns: 0,
            last_congestion_ns: None,
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

    /// The increase in packets per RTT at time `now_ns`: eq. (16) with (20),
    /// times the optional RTT scaling.
    pub fn alpha(&self, now_ns: u64) -> f64 {
        let since = self
            .last_congestion_ns
            .map_or(0, |t| now_ns.saturating_sub(t));
        let delta_s = since as f64 / NS_PER_S;
        2.0 * (1.0 - self.beta)
            * self.cfg.alpha_of_delta(delta_s)
            * self.cfg.rtt_scale(self.rtt_min_ns)
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

    /// The backoff factor for the congestion event now starting (eq. (18)).
    fn next_beta(&mut self) -> f64 {
        if self.cfg.bandwidth_switch {
            let (max, old) = (self.tput.max_pps, self.tput.old_max_pps);
            self.tput.old_max_pps = max;
            // Linux: `!between(5 * maxB, 4 * old_maxB, 6 * old_maxB)`.
            if !(4.0 * old <= 5.0 * max && 5.0 * max <= 6.0 * old) {
                return self.cfg.beta_min;
            }
        }
        // The first backoff uses 0.5: before a congestion event RTTmax has not
        // been seen with a full queue (the paper's Fig. 6 shows the first
        // backoff by 0.5; Linux waits one event too, `modeswitch`).
        if self.congestion_events == 0 || self.rtt_max_ns == 0 {
            return self.cfg.beta_min;
        }
        (self.rtt_min_ns as f64 / self.rtt_max_ns as f64)
            .clamp(self.cfg.beta_min, self.cfg.beta_max)
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
            self.rtt_min_ns = if self.rtt_min_ns == 0 {
                ack.rtt.latest_ns
            } else {
                self.rtt_min_ns.min(ack.rtt.latest_ns)
            };
            // RTTmax as Linux's `measure_rtt`: from the smoothed RTT, outside
            // recovery (the pipe is being refilled then), raised by at most
            // 20 ms at a time, so that one ACK held by the receiver's
            // delayed-ACK timer does not set beta for the next event.
            self.rtt_max_ns = self.rtt_max_ns.max(self.rtt_min_ns);
            let srtt = ack.rtt.smoothed_ns;
            if !ack.in_recovery
                && srtt > self.rtt_max_ns
                && srtt <= self.rtt_max_ns + RTT_MAX_STEP_NS
            {
                self.rtt_max_ns = srtt;
            }
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
        self.beta = self.next_beta();
        // eq. (19)
        reduce(self.beta * self.cwnd, &mut self.cwnd, &mut self.ssthresh);
        // eq. (15): RTTmax = RTTmin + a (RTTmax - RTTmin) at each congestion event.
        if self.rtt_max_ns > self.rtt_min_ns {
            let span = (self.rtt_max_ns - self.rtt_min_ns) as f64;
            self.rtt_max_ns = self.rtt_min_ns + (self.cfg.rtt_max_fade * span).round() as u64;
        }
        self.last_congestion_ns = Some(loss.now_ns);
        self.congestion_events += 1;
    }

    fn on_recovery_exit(&mut self, _now_ns: u64) {
        self.cwnd = self.ssthresh;
    }

    /// Linux `htcp_state(TCP_CA_Loss)` and `htcp_recalc_ssthresh`: a timeout
    /// is a congestion event for beta and Delta; cwnd restarts at one packet.
    fn on_rto(&mut self, rto: &RtoEvent) {
        rto.cap(&mut self.cwnd);
        let now_ns = rto.now_ns;
        if rto.reduce {
            self.beta = self.next_beta();
            self.congestion_events += 1;
        }
        let reduced = self.beta * self.cwnd;
        timeout(reduced, rto, &mut self.cwnd, &mut self.ssthresh);
        self.last_congestion_ns = Some(now_ns);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RttStats;

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
        h.congestion_events = 1;
        assert_eq!(h.next_beta(), 0.8, "steady throughput: adaptive beta");
        h.tput.max_pps = 1500.0; // +50 %
        assert_eq!(h.next_beta(), 0.5);
    }
}
