//! Invariants every controller keeps over random event sequences: cwnd is
//! finite and at least its floor, and a loss event never raises it.

use longfat_cc::{
    build, AckEvent, AckTimestamps, CcParams, InitialWindow, LossEvent, RtoEvent, RttStats,
    ALGORITHMS,
};
use proptest::prelude::*;
use proptest::test_runner::RngSeed;

#[derive(Clone, Debug)]
enum Ev {
    /// Gap since the previous event (µs), packets delivered, RTT (µs),
    /// backward-delay jitter (µs), whether the ACK echoes the newest tag.
    Ack {
        gap_us: u64,
        delivered: u32,
        rtt_us: u64,
        back_us: u64,
        echo_newest: bool,
    },
    Loss {
        gap_us: u64,
    },
    /// A whole recovery: loss, ACKs in recovery, exit.
    Recovery {
        gap_us: u64,
        acks: u8,
    },
    Rto {
        gap_us: u64,
        backoffs: u8,
    },
}

fn event() -> impl Strategy<Value = Ev> {
    prop_oneof![
        8 => (1u64..200_000, 0u32..64, 1_000u64..2_000_000, 0u64..50_000, any::<bool>())
            .prop_map(|(gap_us, delivered, rtt_us, back_us, echo_newest)| Ev::Ack { gap_us, delivered, rtt_us, back_us, echo_newest }),
        1 => (1u64..2_000_000).prop_map(|gap_us| Ev::Loss { gap_us }),
        1 => (1u64..2_000_000, 0u8..20).prop_map(|(gap_us, acks)| Ev::Recovery { gap_us, acks }),
        1 => (1u64..5_000_000, 1u8..4).prop_map(|(gap_us, backoffs)| Ev::Rto { gap_us, backoffs }),
    ]
}

fn check(name: &str, events: &[Ev], init_cwnd: f64) -> Result<(), TestCaseError> {
    let init = InitialWindow {
        cwnd_pkts: init_cwnd,
        ssthresh_pkts: f64::INFINITY,
    };
    let mut cc = build(name, &CcParams::new(), init).unwrap();
    // Start later than the largest RTT a case can draw (2 s), so the echoed
    // send time `now - rtt` never goes below zero.
    let mut now = 10_000_000_000u64;
    let mut tag = 0;
    let floor_ok = |c: f64| c.is_finite() && c >= 1.0;
    for ev in events {
        match *ev {
            Ev::Ack {
                gap_us,
                delivered,
                rtt_us,
                back_us,
                echo_newest,
            } => {
                now += gap_us * 1_000;
                for _ in 0..delivered.max(1) {
                    tag = cc.on_send(now, 0, 1500, false);
                }
                let rtt = rtt_us * 1_000;
                let ack = AckEvent {
                    now_ns: now,
                    delivered_pkts: delivered,
                    growth_pkts: delivered,
                    delivered_bytes: u64::from(delivered) * 1448,
                    cum_acked_pkts: delivered,
                    in_flight_pkts: cc.cwnd() as u32,
                    in_recovery: false,
                    rtt: RttStats {
                        latest_ns: rtt,
                        min_ns: 1_000_000,
                        smoothed_ns: rtt,
                    },
                    rtt_updated: true,
                    ts: Some(AckTimestamps {
                        echoed_sender_ts_ns: now - rtt,
                        receiver_ts_ns: now - (rtt / 2).min(back_us * 1_000 + 500_000),
                        echoed_tag: if echo_newest {
                            tag
                        } else {
                            tag.wrapping_sub(1)
                        },
                    }),
                };
                cc.on_ack(&ack);
            }
            Ev::Loss { gap_us } => {
                now += gap_us * 1_000;
                let before = cc.cwnd();
                cc.on_congestion_event(&LossEvent {
                    now_ns: now,
                    in_flight_pkts: before as u32,
                    lost_pkts: 1,
                    rtt: RttStats::default(),
                    ..Default::default()
                });
                prop_assert!(
                    cc.cwnd() <= before,
                    "{name}: loss raised cwnd {before} -> {}",
                    cc.cwnd()
                );
            }
            Ev::Recovery { gap_us, acks } => {
                now += gap_us * 1_000;
                let before = cc.cwnd();
                cc.on_congestion_event(&LossEvent {
                    now_ns: now,
                    in_flight_pkts: before as u32,
                    lost_pkts: 2,
                    rtt: RttStats::default(),
                    ..Default::default()
                });
                prop_assert!(
                    cc.cwnd() <= before,
                    "{name}: loss raised cwnd {before} -> {}",
                    cc.cwnd()
                );
                for i in 0..acks {
                    now += 1_000_000;
                    cc.on_ack(&AckEvent {
                        now_ns: now,
                        delivered_pkts: 1,
                        growth_pkts: 1,
                        in_recovery: true,
                        rtt: RttStats {
                            latest_ns: 50_000_000,
                            min_ns: 1_000_000,
                            smoothed_ns: 50_000_000,
                        },
                        rtt_updated: i % 2 == 0,
                        ..Default::default()
                    });
                    prop_assert!(floor_ok(cc.cwnd()));
                }
                cc.on_recovery_exit(now);
                // Recovery ends at ssthresh, which RFC 5681 floors at 2 packets.
                prop_assert!(
                    cc.cwnd() <= before.max(2.0),
                    "{name}: recovery ended above the pre-loss window"
                );
            }
            Ev::Rto { gap_us, backoffs } => {
                for b in 1..=u32::from(backoffs) {
                    now += gap_us * 1_000;
                    cc.on_rto(&RtoEvent {
                        now_ns: now,
                        backoff: b,
                        reduce: b <= 1,
                        ..Default::default()
                    });
                    prop_assert_eq!(cc.cwnd(), 1.0, "{}: RTO leaves cwnd at one packet", name);
                }
            }
        }
        let (c, s) = (cc.cwnd(), cc.ssthresh());
        prop_assert!(floor_ok(c), "{name}: cwnd {c} after {ev:?}");
        prop_assert!(!s.is_nan() && s >= 2.0, "{name}: ssthresh {s} after {ev:?}");
    }
    Ok(())
}

proptest! {
    // A fixed seed: every `cargo test` runs the same cases.
    #![proptest_config(ProptestConfig { cases: 96, rng_seed: RngSeed::Fixed(9), ..ProptestConfig::default() })]

    #[test]
    fn every_controller_keeps_cwnd_finite_above_floor_and_never_raises_it_on_loss(
        events in prop::collection::vec(event(), 1..300),
        init_cwnd in prop_oneof![Just(2.0), 1.0f64..100_000.0],
    ) {
        for &name in ALGORITHMS {
            check(name, &events, init_cwnd)?;
        }
    }
}
