//! Scalable TCP (Kelly, "Scalable TCP: improving performance in highspeed
//! wide area networks", CCR 2003).
//!
//! Multiplicative increase, multiplicative decrease above the legacy window:
//! cwnd += a per ACK (a = 0.01) and cwnd -= b·cwnd at a loss (b = 0.125), so
//! the time to recover from a loss does not grow with the window. At or below
//! the legacy window (16 packets) it is Reno.
//!
//! `linux_rules = 1` follows Linux's `tcp_scalable.c` (6.x) instead:
//! `tcp_scalable_cong_avoid` adds one packet per min(cwnd, 100) packets
//! delivered (`tcp_cong_avoid_ai(tp, min(tcp_snd_cwnd(tp),
//! TCP_SCALABLE_AI_CNT), acked)`), so Reno up to 100 packets, and
//! `tcp_scalable_ssthresh` always takes cwnd >> 3 (the `linux` profile sets
//! `low_window = 0` for that).

use crate::error::{CcError, CcParams};
use crate::helpers::{additive_increase, grow, reduce, timeout};
use crate::params::{Algorithm, Param, ParamReader, Range, Rules, LINUX_RULES};
use crate::{AckEvent, CongestionControl, InitialWindow, LossEvent, RtoEvent};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScalableConfig {
    /// Increase per ACK, packets (0.01).
    pub a: f64,
    /// Fraction of the window given up at a loss (0.125).
    pub b: f64,
    /// Legacy window: Reno at or below it (16 packets).
    pub low_window_pkts: f64,
    /// Above the legacy window, the larger of a and Reno's 1/cwnd per
    /// packet: Linux's `min(cwnd, TCP_SCALABLE_AI_CNT)` with a = 1/100.
    pub linux_rules: bool,
}

pub const A: Param = Param::real(
    "a",
    "packets per ACK",
    0.01,
    Range::Open(0.0, 1.0),
    "increase per ACK above the legacy window",
    "Kelly 2003",
);
pub const B: Param = Param::real(
    "b",
    "fraction",
    0.125,
    Range::Open(0.0, 1.0),
    "fraction of the window given up at a loss",
    "Kelly 2003",
);
pub const LOW_WINDOW: Param = Param::real(
    "low_window",
    "packets",
    16.0,
    Range::Closed(0.0, 1e9),
    "legacy window: Reno at or below it",
    "Kelly 2003; Linux tcp_scalable.c has none (0)",
)
.under(&[(Rules::Linux, 0.0)]);

pub const ALGORITHM: Algorithm = Algorithm {
    name: "scalable",
    what: "MIMD: +1 % per RTT, -12.5 % on loss",
    paper: "Kelly, Scalable TCP: improving performance in highspeed wide area networks, CCR 2003",
    params: &[A, B, LOW_WINDOW, LINUX_RULES],
    constraints: &[],
    build: Some(|params, rules, init| Ok(Box::new(Scalable::from_params(params, rules, init)?))),
};

impl Default for ScalableConfig {
    fn default() -> Self {
        Self::read(&ParamReader::defaults(Rules::Rfc))
    }
}

impl ScalableConfig {
    fn read(r: &ParamReader) -> Self {
        Self {
            a: r.real(&A),
            b: r.real(&B),
            low_window_pkts: r.real(&LOW_WINDOW),
            linux_rules: r.flag(&LINUX_RULES),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Scalable {
    cfg: ScalableConfig,
    cwnd: f64,
    ssthresh: f64,
}

impl Scalable {
    pub fn new(cfg: ScalableConfig, init: InitialWindow) -> Self {
        Self {
            cfg,
            cwnd: init.cwnd_pkts,
            ssthresh: init.ssthresh_pkts,
        }
    }

    pub fn from_params(
        params: &CcParams,
        rules: Rules,
        init: InitialWindow,
    ) -> Result<Self, CcError> {
        Ok(Self::new(
            ScalableConfig::read(&ALGORITHM.check(params, rules)?),
            init,
        ))
    }

    fn reduced_window(&self) -> f64 {
        if self.cwnd <= self.cfg.low_window_pkts {
            self.cwnd / 2.0
        } else {
            self.cwnd * (1.0 - self.cfg.b)
        }
    }
}

impl CongestionControl for Scalable {
    fn name(&self) -> &'static str {
        "scalable"
    }
    fn cwnd(&self) -> f64 {
        self.cwnd
    }
    fn ssthresh(&self) -> f64 {
        self.ssthresh
    }

    fn on_ack(&mut self, ack: &AckEvent) {
        let cfg = self.cfg;
        grow(&mut self.cwnd, self.ssthresh, ack, |cwnd, delivered| {
            if *cwnd <= cfg.low_window_pkts {
                additive_increase(cwnd, 1.0, delivered);
            } else if cfg.linux_rules {
                // One packet per min(cwnd, 1/a) delivered.
                *cwnd += cfg.a.max(1.0 / *cwnd) * delivered;
            } else {
                *cwnd += cfg.a * delivered;
            }
        });
    }

    fn on_congestion_event(&mut self, loss: &LossEvent) {
        loss.cap(&mut self.cwnd);
        reduce(self.reduced_window(), &mut self.cwnd, &mut self.ssthresh);
    }

    fn on_recovery_exit(&mut self, _now_ns: u64) {
        self.cwnd = self.ssthresh;
    }

    fn on_rto(&mut self, rto: &RtoEvent) {
        rto.cap(&mut self.cwnd);
        let reduced = self.reduced_window();
        timeout(reduced, rto, &mut self.cwnd, &mut self.ssthresh);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ca(cwnd: f64) -> Scalable {
        Scalable::new(
            ScalableConfig::default(),
            InitialWindow {
                cwnd_pkts: cwnd,
                ssthresh_pkts: 1.0,
            },
        )
    }

    #[test]
    fn window_grows_by_one_percent_per_rtt_above_legacy_window() {
        // One window of ACKs: cwnd * (1.01) approximately; exactly, sum of 0.01 per ACK.
        let mut s = ca(1000.0);
        let ack = AckEvent {
            delivered_pkts: 1,
            growth_pkts: 1,
            ..Default::default()
        };
        for _ in 0..1000 {
            s.on_ack(&ack);
        }
        assert!((s.cwnd() - 1010.0).abs() < 1e-9);
    }

    #[test]
    fn loss_takes_one_eighth_above_legacy_window_and_half_below() {
        let mut s = ca(1000.0);
        s.on_congestion_event(&LossEvent::default());
        assert_eq!(s.cwnd(), 875.0);
        let mut s = ca(16.0);
        s.on_congestion_event(&LossEvent::default());
        assert_eq!(s.cwnd(), 8.0);
    }

    #[test]
    fn linux_rules_follow_tcp_scalable() {
        // The `linux` profile's Scalable: linux_rules, low_window 0.
        let p: CcParams = [("linux_rules", 1.0), ("low_window", 0.0)]
            .iter()
            .map(|(k, v)| (k.to_string(), *v))
            .collect();
        let linux = |cwnd| {
            Scalable::from_params(
                &p,
                Rules::Rfc,
                InitialWindow {
                    cwnd_pkts: cwnd,
                    ssthresh_pkts: 1.0,
                },
            )
            .unwrap()
        };
        let one = AckEvent {
            delivered_pkts: 1,
            growth_pkts: 1,
            ..Default::default()
        };
        // tcp_cong_avoid_ai(tp, min(cwnd, 100), 1): at 50 packets one
        // packet per 50 delivered (+0.02), where the paper adds a = 0.01
        // above its legacy window of 16; at 500 both add 1/100.
        for (cwnd, linux_inc, paper_inc) in [(50.0, 1.0 / 50.0, 0.01), (500.0, 0.01, 0.01)] {
            let mut s = linux(cwnd);
            s.on_ack(&one);
            assert!(
                (s.cwnd() - (cwnd + linux_inc)).abs() < 1e-12,
                "{}",
                s.cwnd()
            );
            let mut s = ca(cwnd);
            s.on_ack(&one);
            assert!(
                (s.cwnd() - (cwnd + paper_inc)).abs() < 1e-12,
                "{}",
                s.cwnd()
            );
        }
        // tcp_scalable_ssthresh at 16 packets: 16 - (16 >> 3) = 14, where the
        // paper halves at or below its legacy window (8).
        let mut s = linux(16.0);
        s.on_congestion_event(&LossEvent::default());
        assert_eq!(s.cwnd(), 14.0);
        let mut s = ca(16.0);
        s.on_congestion_event(&LossEvent::default());
        assert_eq!(s.cwnd(), 8.0);
    }

    #[test]
    fn recovery_time_is_independent_of_window() {
        // Packets (ACKs) to regain the loss: ln(1/(1-b)) / a windows... in
        // round trips: after a loss the window needs log(8/7)/log(1.01) = 13.4 RTTs.
        for w in [1000.0, 10_000.0, 100_000.0] {
            let mut s = ca(w);
            s.on_congestion_event(&LossEvent::default());
            let mut rtts = 0;
            while s.cwnd() < w {
                let acks = s.cwnd() as u32;
                s.on_ack(&AckEvent {
                    delivered_pkts: acks,
                    growth_pkts: acks,
                    ..Default::default()
                });
                rtts += 1;
            }
            assert!((13..=15).contains(&rtts), "w = {w}: {rtts} RTTs");
        }
    }
}
