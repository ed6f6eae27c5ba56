//! Invariants every controller keeps over random event sequences: cwnd is
//! finite and at least its floor, and a loss event never raises it.

use longfat_cc::{
    build, AckEvent, AckTimestamps, CcParams, InitialWindow, LossEvent, RtoEvent, RttStats, Rules,
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

/// The ACK of `delivered` packets at `now` on a path of `rtt_us`, with up
/// to `back_us` of backward delay, echoing the newest tag or the one before,
/// stamped by a receiver whose clock runs `offset_ns` ahead.
fn data_ack(
    now: u64,
    delivered: u32,
    rtt_us: u64,
    back_us: u64,
    tag: u32,
    echo_newest: bool,
    offset_ns: u64,
) -> AckEvent {
    let rtt = rtt_us * 1_000;
    AckEvent {
        now_ns: now,
        delivered_pkts: delivered,
        growth_pkts: delivered,
        delivered_bytes: u64::from(delivered) * 1448,
        cum_acked_pkts: delivered,
        rtt: RttStats {
            latest_ns: rtt,
            min_ns: 1_000_000,
            smoothed_ns: rtt,
        },
        rtt_updated: true,
        ts: Some(AckTimestamps {
            echoed_sender_ts_ns: now - rtt,
            receiver_ts_ns: (now - (rtt / 2).min(back_us * 1_000 + 500_000))
                .wrapping_add(offset_ns),
            echoed_tag: if echo_newest {
                tag
            } else {
                tag.wrapping_sub(1)
            },
        }),
        ..Default::default()
    }
}

fn check(name: &str, events: &[Ev], init_cwnd: f64) -> Result<(), TestCaseError> {
    let init = InitialWindow {
        cwnd_pkts: init_cwnd,
        ssthresh_pkts: f64::INFINITY,
    };
    let mut cc = build(name, &CcParams::new(), Rules::Rfc, init).unwrap();
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
                let mut ack = data_ack(now, delivered, rtt_us, back_us, tag, echo_newest, 0);
                ack.in_flight_pkts = cc.cwnd() as u32;
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

/// Runs `events` through TCP-GT with the receiver's clock `offset_ns` ahead
/// of the sender's; returns cwnd after every event.
fn tcpgt_trace(events: &[Ev], offset_ns: u64) -> Vec<f64> {
    use longfat_cc::{CongestionControl, Tcpgt};
    let mut cc =
        Tcpgt::from_params(&CcParams::new(), Rules::Rfc, InitialWindow::default()).unwrap();
    let mut now = 10_000_000_000u64;
    let mut tag = 0;
    let mut out = vec![];
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
                cc.on_ack(&data_ack(
                    now,
                    delivered,
                    rtt_us,
                    back_us,
                    tag,
                    echo_newest,
                    offset_ns,
                ));
            }
            Ev::Loss { gap_us } | Ev::Recovery { gap_us, .. } => {
                now += gap_us * 1_000;
                cc.on_congestion_event(&LossEvent {
                    now_ns: now,
                    ..Default::default()
                });
                cc.on_recovery_exit(now);
            }
            Ev::Rto { gap_us, .. } => {
                now += gap_us * 1_000;
                cc.on_rto(&RtoEvent::first(now));
            }
        }
        let s = cc.splitting();
        assert!(s >= 1.0 && s.is_finite(), "splitting count {s}");
        out.push(cc.cwnd());
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, rng_seed: RngSeed::Fixed(12), ..ProptestConfig::default() })]

    /// TCP-GT's TR is a difference of the receiver's clock: where that
    /// clock stands (including across its wrap) changes nothing.
    #[test]
    fn tcpgt_ignores_the_receivers_clock_offset(
        events in prop::collection::vec(event(), 1..300),
        // The first: the receiver's clock wraps 2 s into the run.
        offset in prop_oneof![Just(u64::MAX - 12_000_000_000), any::<u64>()],
    ) {
        prop_assert_eq!(tcpgt_trace(&events, offset), tcpgt_trace(&events, 0));
    }
}
/// A steady path whose receiver clock wraps 2 s into the run: the epoch
/// that spans the wrap must measure the same TR as without an offset.
#[test]
fn tcpgt_measures_across_the_receivers_clock_wrap() {
    let evs: Vec<Ev> = (0..100)
        .map(|i| Ev::Ack {
            gap_us: 50_000,
            delivered: 10,
            rtt_us: 50_000 + (i % 7) * 1000,
            back_us: 1000,
            echo_newest: true,
        })
        .collect();
    let wrapped = tcpgt_trace(&evs, u64::MAX - 12_000_000_000);
    assert_eq!(wrapped, tcpgt_trace(&evs, 0));
    assert!(
        wrapped[99] > 2.0 * wrapped[0],
        "the window grew: epochs were measured"
    );
}
