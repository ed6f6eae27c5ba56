//! The TCP sender driven by hand-made ACKs, with exact expectations.

use longfat_cc::{InitialWindow, Reno};
use longfat_sim::event::TimerKind;
use longfat_sim::outbox::Outbox;
use longfat_sim::packet::{Dir, Packet, PacketKind};
use longfat_sim::tcp::sender::{Recovery, TcpSender};
use longfat_sim::tcp::TcpConfig;

const MS: u64 = 1_000_000;

fn sender(cwnd: f64) -> TcpSender {
    let cfg = TcpConfig {
        initial_window: InitialWindow {
            cwnd_pkts: cwnd,
            ssthresh_pkts: f64::INFINITY,
        },
        ..TcpConfig::default()
    };
    TcpSender::new(
        0,
        cfg.clone(),
        Box::new(Reno::new(cfg.initial_window)),
        None,
    )
}

fn ack(cum: u64, sacks: &[(u64, u64)], ts_ecr: u64) -> Packet {
    let mut a = Packet::new(0, PacketKind::Ack, Dir::Backward, 40);
    a.seq = cum;
    a.ts_ecr = ts_ecr;
    for (i, &b) in sacks.iter().enumerate() {
        a.sack[i] = b;
    }
    a.n_sack = sacks.len() as u8;
    a
}

fn seqs(out: &mut Outbox) -> Vec<u64> {
    out.packets.drain(..).map(|p| p.seq).collect()
}

#[test]
fn fast_retransmit_on_third_sack_then_recovery_exit() {
    let mut s = sender(10.0);
    let mut out = Outbox::default();
    s.start(0, &mut out);
    assert_eq!(seqs(&mut out), (0..10).collect::<Vec<_>>());
    // Packet 0 lost. SACKs for 1 and 2 arrive: no loss declared yet.
    s.on_ack(100 * MS, &ack(0, &[(1, 2)], 0), &mut out);
    s.on_ack(100 * MS, &ack(0, &[(1, 3)], 0), &mut out);
    assert_eq!(s.recovery(), Recovery::Open);
    // SACK-only duplicate ACKs do not grow the window (RFC 5681 §3.1);
    // pipe = 10 - 2 SACKed = 8, so 2 new packets go out.
    assert_eq!(s.cc().cwnd(), 10.0);
    assert_eq!(seqs(&mut out), vec![10, 11]);
    s.on_ack(100 * MS, &ack(0, &[(1, 4)], 0), &mut out);
    // Third SACKed packet above the hole: loss of 0 declared (RFC 6675
    // DupThresh). Reno halves cwnd 10 -> 5; RecoveryPoint = SND.NXT = 12;
    // packet 0 goes out at once, although pipe = 12 - 3 - 1 + 1 = 9 > 5.
    assert_eq!(s.recovery(), Recovery::Fast { point: 12 });
    assert_eq!((s.cc().cwnd(), s.cc().ssthresh()), (5.0, 5.0));
    assert_eq!(seqs(&mut out), vec![0]);
    assert_eq!(s.counters.retransmits, 1);
    // SACKs up to 9: pipe = 12 - 9 - 1 + 1 = 3 < 5, two new packets.
    for top in 5..11 {
        s.on_ack(110 * MS, &ack(0, &[(1, top)], 0), &mut out);
    }
    assert_eq!(s.cc().cwnd(), 5.0, "no growth in recovery");
    assert_eq!(seqs(&mut out), vec![12, 13]);
    // Everything up to the recovery point arrives: recovery ends with
    // cwnd = ssthresh = 5; pipe is 2 (packets 12, 13), so 3 new packets.
    s.on_ack(200 * MS, &ack(12, &[], 0), &mut out);
    assert_eq!(s.recovery(), Recovery::Open);
    assert_eq!(s.cc().cwnd(), 5.0);
    assert_eq!(seqs(&mut out), vec![14, 15, 16]);
    assert_eq!(s.counters.fast_recoveries, 1);
}

/// Defect 3 of the review: two SACK-only duplicate ACKs grew cwnd 10 -> 12.
#[test]
fn sack_only_duplicate_acks_do_not_grow_cwnd() {
    let mut s = sender(10.0);
    let mut out = Outbox::default();
    s.start(0, &mut out);
    s.on_ack(100 * MS, &ack(0, &[(1, 2)], 0), &mut out);
    s.on_ack(100 * MS, &ack(0, &[(1, 3)], 0), &mut out);
    assert_eq!(s.cc().cwnd(), 10.0);
    // An ACK that advances the cumulative point grows by what it delivered
    // (packet 0, plus 1 and 2 that were SACKed before count once: 1).
    s.on_ack(101 * MS, &ack(3, &[], 0), &mut out);
    assert_eq!(s.cc().cwnd(), 11.0);
}

#[test]
fn rto_backs_off_exponentially_and_resets_on_progress() {
    let mut s = sender(4.0);
    let mut out = Outbox::default();
    s.start(0, &mut out);
    assert_eq!(seqs(&mut out), vec![0, 1, 2, 3]);
    // No RTT sample yet: initial RTO 1 s.
    assert_eq!(
        out.timers.drain(..).collect::<Vec<_>>(),
        vec![(TimerKind::Rto, 1_000 * MS)]
    );
    let mut now = 1_000 * MS;
    let mut expected = vec![];
    for k in 1..=4u32 {
        s.on_rto_timer(now, &mut out);
        assert_eq!(s.counters.timeouts, u64::from(k));
        // One retransmission of the head each time, cwnd = 1.
        assert_eq!(seqs(&mut out), vec![0]);
        assert_eq!(s.cc().cwnd(), 1.0);
        let timer = *out.timers.last().unwrap();
        out.timers.clear();
        let gap = (1_000 * MS) << k;
        assert_eq!(timer, (TimerKind::Rto, now + gap));
        expected.push(gap);
        now += gap;
    }
    assert_eq!(
        expected,
        vec![2_000 * MS, 4_000 * MS, 8_000 * MS, 16_000 * MS]
    );
    // ssthresh was halved once (4 -> 2), not on every expiry.
    assert_eq!(s.cc().ssthresh(), 2.0);
    // The head's ACK arrives (RTT sample 50 ms): backoff clears, the timer
    // restarts at SRTT + max(4 RTTVAR, 200 ms) = 50 + 200 ms... 4*25 = 100 < 200.
    s.on_ack(now + 50 * MS, &ack(1, &[], now), &mut out);
    let timers: Vec<_> = out.timers.drain(..).collect();
    assert_eq!(
        timers.last().unwrap(),
        &(TimerKind::Rto, now + 50 * MS + 250 * MS)
    );
    assert_eq!(s.recovery(), Recovery::Timeout { point: 4 });
}

#[test]
fn receiver_window_caps_outstanding_packets() {
    let cfg = TcpConfig {
        rwnd_pkts: 3,
        initial_window: InitialWindow {
            cwnd_pkts: 10.0,
            ssthresh_pkts: f64::INFINITY,
        },
        ..TcpConfig::default()
    };
    let mut s = TcpSender::new(
        0,
        cfg.clone(),
        Box::new(Reno::new(cfg.initial_window)),
        None,
    );
    let mut out = Outbox::default();
    s.start(0, &mut out);
    assert_eq!(seqs(&mut out), vec![0, 1, 2]);
    s.on_ack(10 * MS, &ack(2, &[], 0), &mut out);
    assert_eq!(seqs(&mut out), vec![3, 4]);
}

#[test]
fn fixed_size_transfer_stops_and_records_completion() {
    let cfg = TcpConfig::default();
    let mut s = TcpSender::new(
        0,
        cfg.clone(),
        Box::new(Reno::new(cfg.initial_window)),
        Some(3),
    );
    let mut out = Outbox::default();
    s.start(5 * MS, &mut out);
    assert_eq!(seqs(&mut out), vec![0, 1]);
    s.on_ack(20 * MS, &ack(2, &[], 0), &mut out);
    assert_eq!(seqs(&mut out), vec![2]);
    assert_eq!(s.completed_at_ns, None);
    s.on_ack(30 * MS, &ack(3, &[], 0), &mut out);
    assert!(seqs(&mut out).is_empty());
    assert_eq!(s.completed_at_ns, Some(30 * MS));
}

#[test]
fn window_slow_starts_during_timeout_recovery() {
    // Regression: ACKs during RTO recovery were flagged as "in recovery" and
    // the window stayed at one packet until every lost packet had been
    // resent, one per RTT.
    let mut s = sender(8.0);
    let mut out = Outbox::default();
    s.start(0, &mut out);
    assert_eq!(seqs(&mut out).len(), 8);
    s.on_rto_timer(1_000 * MS, &mut out);
    assert_eq!(seqs(&mut out), vec![0]);
    assert_eq!(s.cc().cwnd(), 1.0);
    // The retransmitted head is ACKed: slow start doubles, two more go out.
    s.on_ack(1_050 * MS, &ack(1, &[], 1_000 * MS), &mut out);
    assert!(matches!(s.recovery(), Recovery::Timeout { .. }));
    assert_eq!(s.cc().cwnd(), 2.0);
    assert_eq!(seqs(&mut out), vec![1, 2]);
    s.on_ack(1_100 * MS, &ack(3, &[], 1_050 * MS), &mut out);
    assert_eq!(s.cc().cwnd(), 4.0);
    assert_eq!(seqs(&mut out), vec![3, 4, 5, 6]);
}
