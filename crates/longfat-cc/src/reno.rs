//! TCP Reno / NewReno window rules (RFC 5681, with recovery per RFC 6582 /
//! RFC 6675 done by the transport). Congestion avoidance adds one packet per
//! window; a loss episode halves the window; an RTO restarts from one packet.

use crate::helpers::{additive_increase, grow, reduce, timeout};
use crate::params::Algorithm;
use crate::{AckEvent, CongestionControl, InitialWindow, LossEvent, RtoEvent};

pub const ALGORITHM: Algorithm = Algorithm {
    name: "reno",
    what: "AIMD: +1 packet per RTT, halve on loss",
    paper: "Allman, Paxson, Blanton, TCP Congestion Control, RFC 5681",
    params: &[],
    constraints: &[],
    build: Some(|params, rules, init| {
        ALGORITHM.check(params, rules)?;
        Ok(Box::new(Reno::new(init)))
    }),
};

/// An alias: the NewReno/SACK recovery lives in the transport, the window
/// rule is Reno's.
pub const NEWRENO: Algorithm = Algorithm {
    name: "newreno",
    what: "Reno's window rule (NewReno/SACK recovery is the transport's)",
    paper: "RFC 5681's window rule; recovery RFC 6582 / RFC 6675, in the transport",
    build: Some(|params, rules, init| {
        NEWRENO.check(params, rules)?;
        Ok(Box::new(Reno::new(init)))
    }),
    ..ALGORITHM
};

#[derive(Clone, Debug, PartialEq)]
pub struct Reno {
    cwnd: f64,
    ssthresh: f64,
}

impl Reno {
    pub fn new(init: InitialWindow) -> Self {
        Self {
            cwnd: init.cwnd_pkts,
            ssthresh: init.ssthresh_pkts,
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
        grow(&mut self.cwnd, self.ssthresh, ack, |cwnd, delivered| {
            additive_increase(cwnd, 1.0, delivered)
        });
    }

    /// RFC 5681 eq. (4) with ns-2's and Linux's choice of cwnd (not
    /// FlightSize) as the quantity halved. `loss.halve` (ns-2's plain
    /// halving) needs no branch: Reno's decrease is that halving.
    fn on_congestion_event(&mut self, loss: &LossEvent) {
        loss.cap(&mut self.cwnd);
        reduce(self.cwnd / 2.0, &mut self.cwnd, &mut self.ssthresh);
    }

    fn on_recovery_exit(&mut self, _now_ns: u64) {
        self.cwnd = self.ssthresh;
    }

    /// RFC 5681 §3.1: ssthresh halves when the profile says the expiry
    /// reduces (with or without `rto.halve`); every expiry restarts from
    /// one packet.
    fn on_rto(&mut self, rto: &RtoEvent) {
        rto.cap(&mut self.cwnd);
        timeout(self.cwnd / 2.0, rto, &mut self.cwnd, &mut self.ssthresh);
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
}
