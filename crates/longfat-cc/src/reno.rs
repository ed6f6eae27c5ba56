//! TCP Reno / NewReno window rules (RFC 5681, with recovery per RFC 6582 /
//! RFC 6675 done by the transport). Congestion avoidance adds one packet per
//! window; a loss episode halves the window; an RTO restarts from one packet.
//!
//! `linux_rules = 1` (the `linux` profile's default) counts as Linux's
//! `reno` module does, in whole packets: `tcp_reno_cong_avoid` is
//! `tcp_slow_start` then `tcp_cong_avoid_ai(tp, snd_cwnd, acked)`, +1 once
//! `snd_cwnd_cnt` reaches cwnd ACKed packets (at cwnd 5, on the 5th, not
//! 5 + 1/5 + ... as the fractional rule grows), and `tcp_reno_ssthresh` is
//! max(cwnd >> 1, 2).

use crate::helpers::{
    additive_increase, grow, linux_cong_avoid_ai, linux_grow, linux_pkts, reduce, timeout,
};
use crate::params::{Algorithm, ParamReader, LINUX_RULES};
use crate::{AckEvent, CongestionControl, InitialWindow, LossEvent, RtoEvent};

pub const ALGORITHM: Algorithm = Algorithm {
    name: "reno",
    what: "AIMD: +1 packet per RTT, halve on loss",
    paper: "Allman, Paxson, Blanton, TCP Congestion Control, RFC 5681",
    params: &[LINUX_RULES],
    constraints: &[],
    build: Some(|params, rules, init| {
        let r = ALGORITHM.check(params, rules)?;
        Ok(Box::new(Reno::read(&r, init)))
    }),
};

/// An alias: the NewReno/SACK recovery lives in the transport, the window
/// rule is Reno's. It shares `linux_rules`: Linux has no `newreno` module;
/// its NewReno/SACK recovery is tcp_input.c's, under the `reno` module's
/// window rule, so the `linux` profile's newreno counts as `reno` does.
pub const NEWRENO: Algorithm = Algorithm {
    name: "newreno",
    what: "Reno's window rule (NewReno/SACK recovery is the transport's)",
    paper: "RFC 5681's window rule; recovery RFC 6582 / RFC 6675, in the transport",
    build: Some(|params, rules, init| {
        let r = NEWRENO.check(params, rules)?;
        Ok(Box::new(Reno::read(&r, init)))
    }),
    ..ALGORITHM
};

/// RFC 8511 §3: beta_ecn for Reno, as a percentage (FreeBSD
/// `CC_NEWRENO_BETA_ECN`).
pub const ABE_BETA_ECN_PCT: u32 = 80;

#[derive(Clone, Debug, PartialEq)]
pub struct Reno {
    cwnd: f64,
    ssthresh: f64,
    /// Linux's whole-packet rules (module doc).
    linux_rules: bool,
    /// Linux `tp->snd_cwnd_cnt`: packets ACKed towards the next +1 (only
    /// under `linux_rules`).
    cwnd_cnt: u32,
}

impl Reno {
    /// The RFC 5681 rule on fractional windows.
    pub fn new(init: InitialWindow) -> Self {
        Self {
            cwnd: init.cwnd_pkts,
            ssthresh: init.ssthresh_pkts,
            linux_rules: false,
            cwnd_cnt: 0,
        }
    }

    /// Linux's `reno` module in whole packets.
    pub fn linux(init: InitialWindow) -> Self {
        Self {
            cwnd: f64::from(linux_pkts(init.cwnd_pkts)),
            ssthresh: init.ssthresh_pkts,
            linux_rules: true,
            ..Self::new(init)
        }
    }

    fn read(r: &ParamReader, init: InitialWindow) -> Self {
        if r.flag(&LINUX_RULES) {
            Self::linux(init)
        } else {
            Self::new(init)
        }
    }

    /// RFC 8511 §3 (ABE): the reduced window for an ECN mark,
    /// beta_ecn x cwnd with the recommended beta_ecn = 0.8 (FreeBSD
    /// cc_newreno `beta_ecn` 80, applied as cwnd x 80 / 100 when
    /// net.inet.tcp.cc.abe = 1). Under `linux_rules` in whole packets,
    /// truncated as `tcp_reno_ssthresh`'s shift truncates (Linux itself has
    /// no ABE).
    fn abe_reduced(&self) -> f64 {
        if self.linux_rules {
            f64::from(linux_pkts(self.cwnd) * ABE_BETA_ECN_PCT / 100)
        } else {
            self.cwnd * f64::from(ABE_BETA_ECN_PCT) / 100.0
        }
    }

    /// The reduced window: RFC 5681 eq. (4) on cwnd, or Linux
    /// `tcp_reno_ssthresh`, max(snd_cwnd >> 1, 2) (the floor is `reduce`'s).
    fn halved(&self) -> f64 {
        if self.linux_rules {
            f64::from(linux_pkts(self.cwnd) >> 1)
        } else {
            self.cwnd / 2.0
        }
    }
}

impl CongestionControl for Reno {
    fn name(&self) -> &'static str {
        "reno"
    }
    fn cwnd(&self) -> f64 {
        self.cwnd
    }
    fn ssthresh(&self) -> f64 {
        self.ssthresh
    }

    fn on_ack(&mut self, ack: &AckEvent) {
        if self.linux_rules {
            // `tcp_reno_cong_avoid`
            let (mut cwnd, acked) = linux_grow(&mut self.cwnd, self.ssthresh, ack);
            if acked > 0 {
                let w = cwnd;
                linux_cong_avoid_ai(&mut cwnd, &mut self.cwnd_cnt, w, acked);
                self.cwnd = f64::from(cwnd);
            }
            return;
        }
        grow(&mut self.cwnd, self.ssthresh, ack, |cwnd, delivered| {
            additive_increase(cwnd, 1.0, delivered)
        });
    }

    /// RFC 5681 eq. (4) with ns-2's and Linux's choice of cwnd (not
    /// FlightSize) as the quantity halved. `loss.halve` (ns-2's plain
    /// halving) needs no branch: Reno's decrease is that halving.
    /// Linux: `tcp_init_cwnd_reduction` restarts `snd_cwnd_cnt`.
    /// An ECN episode (`loss.ecn`) reduces the same way (RFC 3168 §6.1.2),
    /// unless the connection runs ABE (RFC 8511 §3: beta_ecn = 0.8).
    fn on_congestion_event(&mut self, loss: &LossEvent) {
        loss.cap(&mut self.cwnd);
        let reduced = if loss.alternative_backoff() {
            self.abe_reduced()
        } else {
            self.halved()
        };
        reduce(reduced, &mut self.cwnd, &mut self.ssthresh);
        self.cwnd_cnt = 0;
    }

    fn on_recovery_exit(&mut self, _now_ns: u64) {
        self.cwnd = self.ssthresh;
    }

    /// RFC 5681 §3.1: ssthresh halves when the profile says the expiry
    /// reduces (with or without `rto.halve`); every expiry restarts from
    /// one packet. Linux: `tcp_enter_loss` restarts `snd_cwnd_cnt`.
    fn on_rto(&mut self, rto: &RtoEvent) {
        rto.cap(&mut self.cwnd);
        timeout(self.halved(), rto, &mut self.cwnd, &mut self.ssthresh);
        self.cwnd_cnt = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RttStats;

    fn ack(now_ns: u64, delivered: u32, in_recovery: bool) -> AckEvent {
        AckEvent {
            now_ns,
            delivered_pkts: delivered,
            growth_pkts: delivered,
            delivered_bytes: u64::from(delivered) * 1500,
            cum_acked_pkts: delivered,
            in_flight_pkts: 10,
            in_recovery,
            rtt: RttStats {
                latest_ns: 100_000_000,
                min_ns: 100_000_000,
                smoothed_ns: 100_000_000,
            },
            rtt_updated: true,
            ts: None,
            ..Default::default()
        }
    }

    fn loss(now_ns: u64) -> LossEvent {
        LossEvent {
            now_ns,
            in_flight_pkts: 10,
            lost_pkts: 1,
            ..Default::default()
        }
    }

    #[test]
    fn slow_start_doubles_per_round() {
        let mut r = Reno::new(InitialWindow {
            cwnd_pkts: 2.0,
            ssthresh_pkts: f64::INFINITY,
        });
        // Round 1: 2 ACKs; round 2: 4 ACKs; round 3: 8 ACKs.
        let mut now = 0;
        for round in 0..3 {
            let acks = r.cwnd() as u32;
            for _ in 0..acks {
                now += 1_000;
                r.on_ack(&ack(now, 1, false));
            }
            assert_eq!(r.cwnd(), 2.0 * f64::from(2u32.pow(round + 1)));
        }
    }

    #[test]
    fn slow_start_hands_leftover_to_congestion_avoidance() {
        let mut r = Reno::new(InitialWindow {
            cwnd_pkts: 8.0,
            ssthresh_pkts: 10.0,
        });
        r.on_ack(&ack(1, 4, false)); // 2 packets reach ssthresh, 2 go to AI
        assert!((r.cwnd() - (10.0 + 1.0 / 10.0 * 2.0)).abs() < 1e-12);
    }

    #[test]
    fn congestion_avoidance_adds_one_per_window() {
        let mut r = Reno::new(InitialWindow {
            cwnd_pkts: 100.0,
            ssthresh_pkts: 50.0,
        });
        let mut expected: f64 = 100.0;
        for i in 0..100 {
            r.on_ack(&ack(i, 1, false));
            expected += 1.0 / expected;
        }
        assert!((r.cwnd() - expected).abs() < 1e-9);
        assert!((r.cwnd() - 101.0).abs() < 0.01);
    }

    #[test]
    fn loss_halves_and_recovery_holds_window() {
        let mut r = Reno::new(InitialWindow {
            cwnd_pkts: 100.0,
            ssthresh_pkts: 50.0,
        });
        r.on_congestion_event(&loss(5));
        assert_eq!((r.cwnd(), r.ssthresh()), (50.0, 50.0));
        r.on_ack(&ack(6, 3, true));
        assert_eq!(r.cwnd(), 50.0, "no growth during recovery");
        r.on_recovery_exit(7);
        assert_eq!(r.cwnd(), 50.0);
    }

    /// RFC 8511 §3: an ECN mark on an ABE connection keeps beta_ecn = 0.8
    /// of the window (100 -> 80); without ABE, or for a loss, Reno halves
    /// (RFC 3168 §6.1.2: an ECN mark is answered as a loss). Linux's whole
    /// packets at 101: ABE 101 * 80 / 100 = 80.8 -> 80, halving 101 >> 1 = 50.
    #[test]
    fn abe_keeps_beta_ecn_of_the_window_for_an_ecn_mark_only() {
        let ev = |ecn, abe| LossEvent {
            ecn,
            abe,
            ..loss(5)
        };
        let init = |cwnd_pkts| InitialWindow {
            cwnd_pkts,
            ssthresh_pkts: 50.0,
        };
        for (event, rfc, linux) in [
            (ev(true, true), 80.0, 80.0),
            (ev(true, false), 50.0, 50.0),
            (ev(false, true), 50.0, 50.0),
        ] {
            let mut r = Reno::new(init(100.0));
            r.on_congestion_event(&event);
            assert_eq!((r.cwnd(), r.ssthresh()), (rfc, rfc), "{event:?}");
            let mut r = Reno::linux(init(101.0));
            r.on_congestion_event(&event);
            assert_eq!((r.cwnd(), r.ssthresh()), (linux, linux), "{event:?}");
        }
    }

    #[test]
    fn loss_floor_is_two_packets() {
        let mut r = Reno::new(InitialWindow {
            cwnd_pkts: 3.0,
            ssthresh_pkts: 2.0,
        });
        r.on_congestion_event(&loss(1));
        assert_eq!(r.ssthresh(), 2.0);
    }

    #[test]
    fn the_halve_hint_changes_nothing_for_reno() {
        for halve in [false, true] {
            let mut r = Reno::new(InitialWindow {
                cwnd_pkts: 100.0,
                ssthresh_pkts: 50.0,
            });
            r.on_congestion_event(&LossEvent { halve, ..loss(5) });
            assert_eq!((r.cwnd(), r.ssthresh()), (50.0, 50.0));
            r.on_rto(&RtoEvent {
                halve,
                ..RtoEvent::first(6)
            });
            assert_eq!((r.cwnd(), r.ssthresh()), (1.0, 25.0));
        }
    }

    #[test]
    fn rto_halves_ssthresh_once_and_resets_cwnd() {
        let mut r = Reno::new(InitialWindow {
            cwnd_pkts: 64.0,
            ssthresh_pkts: 1000.0,
        });
        r.on_rto(&RtoEvent::first(10));
        assert_eq!((r.cwnd(), r.ssthresh()), (1.0, 32.0));
        r.on_rto(&RtoEvent {
            now_ns: 20,
            backoff: 2,
            reduce: false,
            ..Default::default()
        }); // backed-off expiry: ssthresh kept
        assert_eq!((r.cwnd(), r.ssthresh()), (1.0, 32.0));
    }

    /// Reno under the `linux` profile (its `linux_rules` default), built
    /// as the simulator builds it.
    fn linux(name: &str, cwnd: f64, ssthresh: f64) -> Box<dyn CongestionControl> {
        crate::build(
            name,
            &crate::CcParams::new(),
            crate::Rules::Linux,
            InitialWindow {
                cwnd_pkts: cwnd,
                ssthresh_pkts: ssthresh,
            },
        )
        .unwrap()
    }

    #[test]
    fn linux_rules_add_one_on_the_cwnd_th_ack_of_a_round_not_before() {
        // tcp_reno_cong_avoid -> tcp_cong_avoid_ai(tp, cwnd, acked): at cwnd
        // 5, snd_cwnd_cnt counts 1, 2, 3, 4 and reaches 5 on the 5th ACK:
        // cwnd 6, count 0; at 6 the 6th ACK after that gives 7. The
        // fractional rule had 5.2 after one ACK and 6 only after the 5th's
        // 5 + 1/5 + 1/5.2 + ... = 5.91, the 6th.
        for name in ["reno", "newreno"] {
            let mut r = linux(name, 5.0, 5.0);
            for n in 1..=11 {
                r.on_ack(&ack(n, 1, false));
                let expected = match n {
                    1..=4 => 5.0,
                    5..=10 => 6.0,
                    _ => 7.0,
                };
                assert_eq!(r.cwnd(), expected, "{name}, ACK {n}");
            }
        }
    }

    #[test]
    fn linux_rules_slow_start_leftover_counts_whole() {
        // tcp_slow_start: from 8 towards ssthresh 10 an ACK of 4 takes 2 and
        // leaves 2 credits at cwnd 10; 8 more single ACKs make the count 10:
        // cwnd 11 on the 8th, not before. An ACK of 25 at 11: 25 credits are
        // two windows (22) with 3 over: 13.
        let mut r = linux("reno", 8.0, 10.0);
        r.on_ack(&ack(1, 4, false));
        assert_eq!(r.cwnd(), 10.0);
        for n in 1..=8 {
            r.on_ack(&ack(1 + n, 1, false));
            assert_eq!(r.cwnd(), if n < 8 { 10.0 } else { 11.0 }, "ACK {n}");
        }
        r.on_ack(&ack(20, 25, false));
        assert_eq!(r.cwnd(), 13.0);
        // 3 credits kept: 10 more ACKs (13 in all) give 14.
        for n in 1..=10 {
            r.on_ack(&ack(20 + n, 1, false));
            assert_eq!(r.cwnd(), if n < 10 { 13.0 } else { 14.0 }, "ACK {n} at 13");
        }
    }

    #[test]
    fn linux_rules_halve_to_a_whole_window_and_restart_the_count() {
        // tcp_reno_ssthresh: max(cwnd >> 1, 2): 7 -> 3 (not 3.5). The loss
        // (tcp_init_cwnd_reduction) and the timeout (tcp_enter_loss) set
        // snd_cwnd_cnt = 0: 9 credits at cwnd 10 are not carried into cwnd 5,
        // which then needs 5 ACKs, not 1.
        let mut r = linux("reno", 7.0, 7.0);
        r.on_congestion_event(&loss(1));
        assert_eq!((r.cwnd(), r.ssthresh()), (3.0, 3.0));
        for (event, at) in [("loss", 0), ("timeout", 1)] {
            let mut r = linux("reno", 10.0, 10.0);
            for n in 1..=9 {
                r.on_ack(&ack(n, 1, false));
            }
            assert_eq!(r.cwnd(), 10.0);
            if at == 0 {
                r.on_congestion_event(&loss(10));
                r.on_recovery_exit(11);
            } else {
                r.on_rto(&RtoEvent::first(10));
                r.on_ack(&ack(11, 4, false)); // slow start 1 -> 5 = ssthresh
            }
            assert_eq!((r.cwnd(), r.ssthresh()), (5.0, 5.0), "{event}");
            for n in 1..=5 {
                r.on_ack(&ack(20 + n, 1, false));
                assert_eq!(r.cwnd(), if n < 5 { 5.0 } else { 6.0 }, "{event}: ACK {n}");
            }
        }
    }

    #[test]
    fn rfc_and_ns2_rules_keep_the_fractional_rule() {
        for rules in [crate::Rules::Rfc, crate::Rules::Ns2] {
            let mut r = crate::build(
                "reno",
                &crate::CcParams::new(),
                rules,
                InitialWindow {
                    cwnd_pkts: 5.0,
                    ssthresh_pkts: 5.0,
                },
            )
            .unwrap();
            r.on_ack(&ack(1, 1, false));
            assert_eq!(r.cwnd(), 5.2);
        }
    }
}
