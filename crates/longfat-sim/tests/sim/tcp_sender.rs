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
    for &b in sacks {
        assert!(a.push_sack(b), "at most three distinct blocks");
    }
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
    // One ACK for two packets: RFC 5681 §3.1 eq. (2) adds min(N, SMSS) = 1.
    s.on_ack(1_100 * MS, &ack(3, &[], 1_050 * MS), &mut out);
    assert_eq!(s.cc().cwnd(), 3.0);
    assert_eq!(seqs(&mut out), vec![3, 4, 5]);
}

// ---------------------------------------------------------------------------
// Transport profiles ("A faithful TCP"): the same sender under `rfc`, `ns2`
// and `linux`, driven by hand-made ACKs. Every expectation is derived in the
// comments from the RFCs, ns-2.35 (tcp.cc, tcp-sack1.cc) or Linux 6.x
// (tcp_input.c, tcp_output.c, tcp_recovery.c), not read off the code.
// ---------------------------------------------------------------------------

use longfat_sim::tcp::Profile;

/// A Reno sender under `profile` with the profile's initial RTO and the
/// given initial window (ssthresh unlimited), rwnd `rwnd` packets.
fn profiled(profile: Profile, cwnd: f64, rwnd: u64, total: Option<u64>) -> TcpSender {
    let cfg = TcpConfig {
        profile,
        rwnd_pkts: rwnd,
        initial_rto_ns: profile.initial_rto_ns(),
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
        total,
    )
}

/// The deadline of the transmission timer the sender armed last.
fn last_timer(out: &mut Outbox) -> u64 {
    let t = out
        .timers
        .iter()
        .rev()
        .find(|(k, _)| *k == TimerKind::Rto)
        .expect("a transmission timer is armed")
        .1;
    out.timers.clear();
    t
}

/// W = 20 packets in flight, packet 0 lost; SACKs for 1, 2, 3 arrive 101,
/// 102, 103 ms after the window left (each ACK echoes t = 0). Returns the
/// sender in fast recovery with the fast retransmission of 0 sent.
fn fast_recovery_at_w20(profile: Profile) -> (TcpSender, Outbox) {
    let mut s = profiled(profile, 20.0, u64::MAX, None);
    let mut out = Outbox::default();
    s.start(0, &mut out);
    assert_eq!(seqs(&mut out), (0..20).collect::<Vec<_>>());
    for j in 1..=3 {
        s.on_ack((100 + j) * MS, &ack(0, &[(1, j + 1)], 0), &mut out);
    }
    assert!(matches!(s.recovery(), Recovery::Fast { .. }), "{profile}");
    assert!(
        seqs(&mut out).contains(&0),
        "{profile}: fast retransmission of 0"
    );
    (s, out)
}

/// Defect 1 ("double ssthresh cut"). A Reno flow at W = 20 enters fast
/// recovery (ssthresh = cwnd = W/2 = 10); the retransmission of packet 0 is
/// lost too, the SACKs for the rest of the window (4..19) come back, and the
/// retransmission timer fires. Linux `tcp_enter_loss` computes a new
/// ssthresh only from Open/Disorder (or from Loss after progress): in
/// Recovery it keeps the recovery's, so ssthresh stays W/2 = 10 (not
/// W/4 = 5) and cwnd restarts at 1. The rfc profile shares the rule.
#[test]
fn rto_during_fast_recovery_keeps_the_recovery_ssthresh() {
    for profile in [Profile::Rfc, Profile::Linux] {
        let (mut s, mut out) = fast_recovery_at_w20(profile);
        assert_eq!(
            (s.cc().cwnd(), s.cc().ssthresh()),
            (10.0, 10.0),
            "{profile}"
        );
        for j in 4..20 {
            s.on_ack((100 + j) * MS, &ack(0, &[(1, j + 1)], 0), &mut out);
        }
        assert_eq!(
            s.counters.retransmits, 1,
            "{profile}: nothing repairs the lost retransmission"
        );
        out.packets.clear();
        let deadline = last_timer(&mut out);
        s.on_rto_timer(deadline, &mut out);
        assert_eq!(s.counters.timeouts, 1, "{profile}");
        assert_eq!((s.cc().cwnd(), s.cc().ssthresh()), (1.0, 10.0), "{profile}");
        assert_eq!(
            seqs(&mut out),
            vec![0],
            "{profile}: the head goes out again"
        );
    }
}

/// ns-2.35 `TcpAgent::timeout()` cuts on every expiry:
/// `slowdown(CLOSE_SSTHRESH_HALF | CLOSE_CWND_RESTART)` halves
/// `windowd() = min(cwnd_, wnd_)`, which fast recovery has already halved:
/// ssthresh = int(10 / 2) = 5 = W/4, cwnd = 1.
#[test]
fn ns2_rto_during_fast_recovery_cuts_again() {
    let (mut s, mut out) = fast_recovery_at_w20(Profile::Ns2);
    // `dupack_action` -> `slowdown(CLOSE_SSTHRESH_HALF | CLOSE_CWND_HALF)`: W/2.
    assert_eq!((s.cc().cwnd(), s.cc().ssthresh()), (10.0, 10.0));
    for j in 4..20 {
        s.on_ack((100 + j) * MS, &ack(0, &[(1, j + 1)], 0), &mut out);
    }
    assert_eq!(
        s.counters.retransmits, 1,
        "each hole goes out once per episode"
    );
    out.packets.clear();
    let deadline = last_timer(&mut out);
    s.on_rto_timer(deadline, &mut out);
    assert_eq!((s.cc().cwnd(), s.cc().ssthresh()), (1.0, 5.0));
    assert_eq!(seqs(&mut out), vec![0]);
}

/// ns-2 `opencwnd()` runs once per new ACK (`recv_newack_helper`), however
/// many packets the ACK covers: with delayed ACKs (one ACK per two packets)
/// slow start grows by half a window per round (x1.5), not x2. RFC 5681
/// §3.1 eq. (2) does the same in slow start (cwnd += min(N, SMSS)); the
/// Linux sender grows by the packets delivered (2 -> 4).
#[test]
fn ns2_grows_once_per_ack_whatever_it_covers() {
    for (profile, after) in [
        (Profile::Ns2, 3.0),
        (Profile::Rfc, 3.0),
        (Profile::Linux, 4.0),
    ] {
        let mut s = profiled(profile, 2.0, u64::MAX, None);
        let mut out = Outbox::default();
        s.start(0, &mut out);
        assert_eq!(seqs(&mut out), vec![0, 1]);
        // One delayed ACK for both packets.
        s.on_ack(100 * MS, &ack(2, &[], 0), &mut out);
        assert_eq!(s.cc().cwnd(), after, "{profile}");
        assert_eq!(
            seqs(&mut out).len(),
            after as usize,
            "{profile}: the whole window goes out"
        );
    }
    // ns-2, three rounds of delayed ACKs: 2 packets -> 1 ACK -> cwnd 3;
    // 3 packets -> ACKs for 2 and (after the 100 ms timer) 1 -> cwnd 5.
    let mut s = profiled(Profile::Ns2, 2.0, u64::MAX, None);
    let mut out = Outbox::default();
    s.start(0, &mut out);
    assert_eq!(seqs(&mut out), vec![0, 1]);
    s.on_ack(100 * MS, &ack(2, &[], 0), &mut out);
    assert_eq!(seqs(&mut out), vec![2, 3, 4]);
    s.on_ack(200 * MS, &ack(4, &[], 100 * MS), &mut out);
    s.on_ack(300 * MS, &ack(5, &[], 100 * MS), &mut out);
    assert_eq!(s.cc().cwnd(), 5.0);
}

/// Issue 28 item 14: the `rfc` sender slow-starts as RFC 5681 §3.1 eq. (2)
/// says, cwnd += min(N, SMSS) per ACK, so with delayed ACKs (one ACK per
/// two packets, the odd last packet of a round ACKed alone when the
/// delayed-ACK timer fires) a round of w packets brings ceil(w/2) ACKs and
/// cwnd goes w -> w + ceil(w/2): 2, 3, 5, 8, 12, 18, 27, 41, 62 (x1.5). It
/// counted the packets delivered (appropriate byte counting without RFC
/// 3465's L = 2 limit): x2 per round, as the `linux` sender (Linux
/// `tcp_slow_start` adds `acked`) still does: 2, 4, 8, ..., 512.
#[test]
fn rfc_slow_start_with_delayed_acks_grows_x1_5_per_round() {
    let rfc = |w: u64| w + w.div_ceil(2);
    let linux = |w: u64| 2 * w;
    for (profile, next) in [
        (Profile::Rfc, &rfc as &dyn Fn(u64) -> u64),
        (Profile::Linux, &linux),
    ] {
        let mut s = profiled(profile, 2.0, u64::MAX, None);
        let mut out = Outbox::default();
        s.start(0, &mut out);
        let mut round = seqs(&mut out);
        let (mut w, mut now) = (2u64, 0u64);
        let mut trajectory = vec![w];
        for _ in 0..8 {
            assert_eq!(
                round.len() as u64,
                w,
                "{profile}: the whole window goes out"
            );
            now += 100 * MS;
            let (mut acked, end) = (round[0], round[round.len() - 1] + 1);
            let mut next_round = vec![];
            while acked < end {
                acked = (acked + 2).min(end);
                s.on_ack(now, &ack(acked, &[], now - 100 * MS), &mut out);
                next_round.extend(seqs(&mut out));
            }
            w = next(w);
            assert_eq!(s.cc().cwnd(), w as f64, "{profile}");
            trajectory.push(w);
            round = next_round;
        }
        let expected: &[u64] = match profile {
            Profile::Rfc => &[2, 3, 5, 8, 12, 18, 27, 41, 62],
            _ => &[2, 4, 8, 16, 32, 64, 128, 256, 512],
        };
        assert_eq!(trajectory, expected, "{profile}");
    }
}

/// Issue 28 item 13: ns-2 clears its SACK scoreboard on every new ACK
/// outside fast recovery and reads none of that ACK's SACK blocks
/// (tcp-sack1.cc `recv`: `scb_->ClearScoreBoard()` in the `seqno >
/// last_ack_` branch; `UpdateScoreBoard` only for a duplicate ACK). So a
/// duplicate ACK repeating a block the new ACK carried changes the
/// scoreboard again (`CheckUpdate()`), counts as duplicate ACK 1 and sends
/// one new packet (`send_one`). Timeline: 0..9 out, cwnd 10; a dupACK SACKs
/// 1 (limited transmit: 10); the new ACK for 0..1 (SACK 3) grows cwnd to 11
/// and sends 11, 12 (2..10 out, allowance 11); the dupACK SACKing 3 sends 13.
/// Until this fix the new ACK's block was kept and the dupACK sent nothing.
#[test]
fn ns2_new_ack_clears_the_sack_scoreboard() {
    let mut s = profiled(Profile::Ns2, 10.0, u64::MAX, None);
    let mut out = Outbox::default();
    s.start(0, &mut out);
    assert_eq!(seqs(&mut out), (0..10).collect::<Vec<_>>());
    s.on_ack(100 * MS, &ack(0, &[(1, 2)], 0), &mut out);
    assert_eq!(seqs(&mut out), vec![10]);
    assert_eq!(s.scoreboard().sacked_count(), 1);
    s.on_ack(101 * MS, &ack(2, &[(3, 4)], 0), &mut out);
    assert_eq!(
        s.scoreboard().sacked_count(),
        0,
        "cleared, the new ACK's block unread"
    );
    assert_eq!(s.cc().cwnd(), 11.0);
    assert_eq!(seqs(&mut out), vec![11, 12]);
    s.on_ack(102 * MS, &ack(2, &[(3, 4)], 0), &mut out);
    assert_eq!(s.scoreboard().sacked_count(), 1);
    assert_eq!(
        seqs(&mut out),
        vec![13],
        "duplicate ACK 1: limited transmit"
    );
    assert_eq!(s.recovery(), Recovery::Open);
}

/// ns-2 limited transmit (`singledup_` = 1, `TcpAgent::send_one`): on the
/// first and second duplicate ACK that changes the SACK scoreboard the
/// sender sends one new packet (t_seqno_ <= highest_ack_ + cwnd_ + dupacks_);
/// a duplicate ACK that brings no new SACK information counts for nothing
/// and sends nothing; the third enters fast recovery and sends only the
/// fast retransmission (`dupack_action`: `output(last_ack_ + 1)`, and
/// pipe_ = maxseq_ - highest_ack_ - 3 = 12 - 3 = 9 is not below
/// int(cwnd_) = 5, so `send_much` sends nothing else).
#[test]
fn ns2_limited_transmit_on_the_first_two_sack_changing_dupacks() {
    let mut s = profiled(Profile::Ns2, 10.0, u64::MAX, None);
    let mut out = Outbox::default();
    s.start(0, &mut out);
    assert_eq!(seqs(&mut out), (0..10).collect::<Vec<_>>());
    s.on_ack(100 * MS, &ack(0, &[(1, 2)], 0), &mut out);
    assert_eq!(seqs(&mut out), vec![10]);
    // The same SACK again: not a dupack for ns-2 (CheckUpdate() is false).
    s.on_ack(100 * MS, &ack(0, &[(1, 2)], 0), &mut out);
    assert_eq!(seqs(&mut out), Vec::<u64>::new());
    s.on_ack(101 * MS, &ack(0, &[(1, 3)], 0), &mut out);
    assert_eq!(seqs(&mut out), vec![11]);
    assert_eq!(s.recovery(), Recovery::Open);
    s.on_ack(102 * MS, &ack(0, &[(1, 4)], 0), &mut out);
    assert_eq!(s.recovery(), Recovery::Fast { point: 12 });
    assert_eq!(seqs(&mut out), vec![0]);
    assert_eq!((s.cc().cwnd(), s.cc().ssthresh()), (5.0, 5.0));
    // Each further ACK: --pipe_; a packet goes out once pipe_ < 5.
    // pipe_ 9 -> 8, 7, 6, 5: nothing; -> 4: one new packet (12), pipe_ 5.
    let mut sent = vec![];
    for j in 4..9 {
        s.on_ack((100 + j) * MS, &ack(0, &[(1, j + 1)], 0), &mut out);
        sent.push(seqs(&mut out));
    }
    assert_eq!(sent, vec![vec![], vec![], vec![], vec![], vec![12]]);
}

/// ns-2's scoreboard (scoreboard-rq.cc `GetNextRetran`: the first un-SACKed
/// packet with a SACK block above it) counts every hole below the highest
/// SACKed packet as lost once fast recovery starts. RFC 6675 IsLost() needs
/// DupThresh = 3 SACKed packets above a hole. Holes 0, 2, 4; SACKs for 1,
/// 3, 5 (three SACK-changing dupACKs): ns-2 marks 0, 2 and 4 lost; RFC
/// 6675 only 0 (three SACKed above it), not 2 (two above) or 4 (one).
#[test]
fn ns2_marks_every_hole_below_the_highest_sack_lost() {
    for (profile, lost) in [(Profile::Ns2, vec![0, 2, 4]), (Profile::Rfc, vec![0])] {
        let mut s = profiled(profile, 10.0, u64::MAX, None);
        let mut out = Outbox::default();
        s.start(0, &mut out);
        s.on_ack(100 * MS, &ack(0, &[(1, 2)], 0), &mut out);
        s.on_ack(101 * MS, &ack(0, &[(3, 4), (1, 2)], 0), &mut out);
        s.on_ack(102 * MS, &ack(0, &[(5, 6), (3, 4), (1, 2)], 0), &mut out);
        assert!(matches!(s.recovery(), Recovery::Fast { .. }), "{profile}");
        let marked: Vec<u64> = (0..6).filter(|&q| s.scoreboard().is_lost(q)).collect();
        assert_eq!(marked, lost, "{profile}");
    }
}

/// Proportional rate reduction (RFC 6937; Linux 6.x `tcp_cwnd_reduction`),
/// worked by hand. W = prior_cwnd = 20, packet 0 lost, Reno ssthresh = 10.
/// SACKs for 1 and 2 arrive first (Disorder: each lets one new packet out,
/// 20 and 21, since pipe < cwnd); the SACK for 3 makes RACK mark 0 lost
/// (three SACKed: reo_wnd = 0; 0 was sent an RTT before 3 was delivered)
/// and recovery starts with 22 packets out.
///
/// Per ACK: pipe = outstanding - SACKed - lost + retransmitted, after this
/// ACK's marking; delta = ssthresh - pipe; prr_delivered += 1. While
/// delta < 0, sndcnt = ceil(ssthresh * prr_delivered / prior_cwnd) - prr_out
/// = ceil(d / 2) - prr_out: one packet per two delivered. The d-th ACK of
/// recovery (SACK of packet d + 2) sees pipe = 18 for d = 1, 2, then
/// pipe = 20 + new - d, where new = packets sent in recovery besides the
/// retransmission:
///   d  1: pipe 18, ceil(1/2) - 0 = 1 -> the retransmission of 0
///   d  2: pipe 18, 1 - 1 = 0
///   d  3: pipe 17, 2 - 1 = 1 -> new packet 22
///   ... odd d send one, even d none, up to
///   d 15: pipe 11, 8 - 7 = 1 -> new packet 28 (prr_out 8)
///   d 16: pipe 11, 8 - 8 = 0
///   d 17: pipe 10, delta = 0: min(delta, ...) = 0
///   d 18: pipe  9 (SACK of 20), delta = 1: min(1, max(18 - 8, 1)) = 1 -> 29
///   d 19: pipe  9 (SACK of 21), delta = 1: min(1, max(19 - 9, 1)) = 1 -> 30
/// prr_out ends at 10 = ssthresh. The retransmission's ACK (cum. 22) ends
/// recovery with cwnd = ssthresh = 10 (`tcp_end_cwnd_reduction`); 9 are in
/// flight (22..30), so one more packet (31) goes out.
#[test]
fn prr_sends_one_packet_per_two_delivered_down_to_ssthresh() {
    let mut s = profiled(Profile::Linux, 20.0, u64::MAX, None);
    let mut out = Outbox::default();
    s.start(0, &mut out);
    assert_eq!(seqs(&mut out), (0..20).collect::<Vec<_>>());
    s.on_ack(101 * MS, &ack(0, &[(1, 2)], 0), &mut out);
    s.on_ack(102 * MS, &ack(0, &[(1, 3)], 0), &mut out);
    assert_eq!(s.recovery(), Recovery::Open);
    assert_eq!(seqs(&mut out), vec![20, 21]);
    let mut sent = vec![];
    // d = 1..17: SACKs of the originals 3..19, 1 ms apart.
    for j in 3..20 {
        s.on_ack((100 + j) * MS, &ack(0, &[(1, j + 1)], 0), &mut out);
        sent.push(seqs(&mut out));
        if j == 3 {
            assert_eq!(s.recovery(), Recovery::Fast { point: 22 });
            assert_eq!((s.cc().cwnd(), s.cc().ssthresh()), (10.0, 10.0));
        }
    }
    // d = 18, 19: SACKs of 20 and 21, one RTT after they left.
    s.on_ack(201 * MS, &ack(0, &[(1, 21)], 101 * MS), &mut out);
    sent.push(seqs(&mut out));
    s.on_ack(202 * MS, &ack(0, &[(1, 22)], 102 * MS), &mut out);
    sent.push(seqs(&mut out));
    let e: Vec<u64> = vec![];
    assert_eq!(
        sent,
        vec![
            vec![0],
            e.clone(),
            vec![22],
            e.clone(),
            vec![23],
            e.clone(),
            vec![24],
            e.clone(),
            vec![25],
            e.clone(),
            vec![26],
            e.clone(),
            vec![27],
            e.clone(),
            vec![28],
            e.clone(),
            e.clone(),
            vec![29],
            vec![30],
        ]
    );
    s.on_ack(203 * MS, &ack(22, &[], 103 * MS), &mut out);
    assert_eq!(s.recovery(), Recovery::Open);
    // The exit sets cwnd to ssthresh (`tcp_end_cwnd_reduction`), then the
    // same ACK, now in Open, grows it by its one delivered packet
    // (`tcp_cong_control` runs after `tcp_fastretrans_alert`): 10 + 1/10.
    assert_eq!((s.cc().cwnd(), s.cc().ssthresh()), (10.1, 10.0));
    assert_eq!(seqs(&mut out), vec![31]);
    assert_eq!(s.counters.timeouts, 0);
}

/// RACK (RFC 8985 §6.2; Linux `tcp_rack_detect_loss`) finds a lost
/// retransmission as soon as a packet sent after it is delivered and one
/// RACK RTT has passed since it left: no timeout. RFC 6675 and ns-2
/// retransmit each hole once per episode and need the RTO.
///
/// After `fast_recovery_at_w20` (retransmission of 0 at 103 ms, lost) and
/// the SACKs of 4..19, one ACK at 250 ms SACKs everything else. Linux: the
/// newest delivered packet, 28, left at 117 ms (the PRR schedule of
/// `prr_sends_one_packet_per_two_delivered_down_to_ssthresh`), so the RACK
/// RTT is 133 ms and the retransmission (103 ms + 133 ms = 236 ms <= 250 ms)
/// is lost. pipe = 0, delta = ssthresh = 10, sndcnt = min(10, max(26 - 8,
/// 9)) = 10: packet 0 again, then 29..37.
#[test]
fn rack_detects_a_lost_retransmission_without_a_timeout() {
    for profile in [Profile::Linux, Profile::Rfc, Profile::Ns2] {
        let (mut s, mut out) = fast_recovery_at_w20(profile);
        for j in 4..20 {
            s.on_ack((100 + j) * MS, &ack(0, &[(1, j + 1)], 0), &mut out);
        }
        out.packets.clear();
        let nxt = s.scoreboard().snd_nxt();
        s.on_ack(250 * MS, &ack(0, &[(1, nxt)], 110 * MS), &mut out);
        let sent = seqs(&mut out);
        if profile == Profile::Linux {
            assert_eq!(sent, [0].into_iter().chain(29..38).collect::<Vec<_>>());
            assert_eq!((s.counters.retransmits, s.counters.timeouts), (2, 0));
        } else {
            assert!(!sent.contains(&0), "{profile}: {sent:?}");
            assert_eq!(s.counters.retransmits, 1, "{profile}");
            out.packets.clear();
            let deadline = last_timer(&mut out);
            s.on_rto_timer(deadline, &mut out);
            assert_eq!(s.counters.timeouts, 1, "{profile}");
            assert_eq!(seqs(&mut out), vec![0], "{profile}");
        }
    }
}

/// Tail loss probe timeout (RFC 8985 §7.2; Linux `tcp_schedule_loss_probe`):
/// PTO = 2 SRTT + (200 ms if one packet is out, else 2 ms), never past the
/// RTO. With one sample m, Linux's RTO is m + max(2m, 200 ms)
/// (`tcp_rtt_estimator`: rttvar = max(mdev = 2m, rto_min)).
///   m = 100 ms, 11 out:  PTO = 202 ms < RTO 300 ms -> probe at 100 + 202
///   m = 100 ms,  1 out:  PTO = 400 ms > RTO 300 ms -> probe at 100 + 300
///   m = 300 ms,  1 out:  PTO = 800 ms < RTO 900 ms -> probe at 300 + 800
/// The probe is one new packet if there is one (even with cwnd full), else
/// the highest packet again; then the RTO is armed from the probe.
#[test]
fn tlp_probe_timeout_is_two_srtt_plus_delack_allowance_capped_at_rto() {
    // Bulk, 10 out; the ACK for 0 grows cwnd to 11: 10 and 11 go out.
    let mut s = profiled(Profile::Linux, 10.0, u64::MAX, None);
    let mut out = Outbox::default();
    s.start(0, &mut out);
    out.packets.clear();
    out.timers.clear();
    s.on_ack(100 * MS, &ack(1, &[], 0), &mut out);
    assert_eq!(seqs(&mut out), vec![10, 11]);
    assert_eq!(s.rtt().rto_ns(), 300 * MS);
    assert_eq!(last_timer(&mut out), 302 * MS);
    s.on_rto_timer(302 * MS, &mut out);
    assert_eq!(seqs(&mut out), vec![12], "a new packet as the probe");
    assert_eq!((s.counters.loss_probes, s.counters.timeouts), (1, 0));
    assert_eq!(last_timer(&mut out), 602 * MS, "then the RTO");

    for (m, probe_at) in [(100 * MS, 400 * MS), (300 * MS, 1_100 * MS)] {
        // An 11-packet transfer: the ACK for the first 10 leaves one out.
        let mut s = profiled(Profile::Linux, 10.0, u64::MAX, Some(11));
        let mut out = Outbox::default();
        s.start(0, &mut out);
        out.packets.clear();
        out.timers.clear();
        s.on_ack(m, &ack(10, &[], 0), &mut out);
        assert_eq!(seqs(&mut out), vec![10]);
        assert_eq!(last_timer(&mut out), probe_at, "m = {m}");
        s.on_rto_timer(probe_at, &mut out);
        assert_eq!(seqs(&mut out), vec![10], "the last packet again");
        assert_eq!((s.counters.loss_probes, s.counters.timeouts), (1, 0));
        assert_eq!(last_timer(&mut out), probe_at + s.rtt().rto_ns());
    }
}

/// Eifel undo (RFC 3522; Linux `tcp_try_undo_loss` / `tcp_packet_delayed`):
/// a delay spike makes the RTO fire; the first ACK after it echoes the
/// timestamp of the original transmission (older than the first
/// retransmission's), so the timeout was spurious and the reduction is
/// undone: cwnd back to max(cwnd, prior_cwnd) = 20 and ssthresh to its prior
/// value (unlimited), state Open. The same ACK then grows the window in slow
/// start (Linux runs `tcp_cong_control` after the undo): 21.
///
/// Timeline: 10 out at 0; ACK for all at 100 ms (m = 100 ms, RTO 300 ms)
/// -> cwnd 20, 10..29 leave at 100 ms; nothing comes back: the probe (new
/// packet 30) at 100 + 202 ms, the RTO at 302 + 300 = 602 ms: ssthresh 10,
/// cwnd 1, 10 retransmitted with TSval 602 ms. At 750 ms the ACK for the
/// original 10 (TSecr 100 ms < 602 ms) arrives. RACK must not read it as
/// the delivery of the retransmission (sent 148 ms ago, more than the
/// minimum RTT): Linux skips `tcp_rack_advance` for a spurious
/// retransmission (`tcp_skb_spurious_retrans`), else 11..30, sent at
/// 100 ms, would all look lost.
#[test]
fn eifel_undo_restores_the_window_after_a_spurious_timeout() {
    let run = |profile: Profile, echo: u64| {
        let mut s = profiled(profile, 10.0, u64::MAX, None);
        let mut out = Outbox::default();
        s.start(0, &mut out);
        s.on_ack(100 * MS, &ack(10, &[], 0), &mut out);
        // One ACK for 10 packets: Linux adds the 10 delivered; RFC 5681
        // §3.1 eq. (2) adds min(N, SMSS), one packet.
        let w = if profile == Profile::Linux {
            20.0
        } else {
            11.0
        };
        assert_eq!(s.cc().cwnd(), w);
        out.packets.clear();
        let mut t = last_timer(&mut out);
        if profile == Profile::Linux {
            assert_eq!(t, 302 * MS);
            s.on_rto_timer(t, &mut out); // the probe
            t = last_timer(&mut out);
            assert_eq!(t, 602 * MS);
        }
        s.on_rto_timer(t, &mut out);
        assert_eq!(s.counters.timeouts, 1);
        assert_eq!((s.cc().cwnd(), s.cc().ssthresh()), (1.0, w / 2.0));
        s.on_ack(750 * MS, &ack(11, &[], echo), &mut out);
        s
    };
    let s = run(Profile::Linux, 100 * MS);
    assert_eq!(s.counters.undos, 1);
    assert_eq!(s.recovery(), Recovery::Open);
    assert_eq!(s.scoreboard().lost_count(), 0);
    assert_eq!((s.cc().cwnd(), s.cc().ssthresh()), (21.0, f64::INFINITY));
    // The ACK of the retransmission itself (TSecr 602 ms) proves nothing:
    // slow start from 1 -> 2, ssthresh stays 10.
    let s = run(Profile::Linux, 602 * MS);
    assert_eq!(s.counters.undos, 0);
    assert_eq!((s.cc().cwnd(), s.cc().ssthresh()), (2.0, 10.0));
    // The rfc profile does not undo.
    let s = run(Profile::Rfc, 100 * MS);
    assert_eq!(s.counters.undos, 0);
    assert_eq!((s.cc().cwnd(), s.cc().ssthresh()), (2.0, 5.5));
}

/// ns-2 enters fast recovery on the third duplicate ACK that changes the
/// scoreboard (`if (++dupacks_ == numdupacks(cwnd_)) dupack_action()`,
/// tcp-sack1.cc `recv`), not when three packets are SACKed: if the ACKs
/// for 1 and 2 are lost on the way back, the first duplicate ACK to
/// arrive SACKs 1..3 at once, and it is dupACK number 1 (limited transmit:
/// one new packet). Two more SACK-changing dupACKs are needed.
#[test]
fn ns2_counts_duplicate_acks_not_sacked_packets() {
    let mut s = profiled(Profile::Ns2, 10.0, u64::MAX, None);
    let mut out = Outbox::default();
    s.start(0, &mut out);
    out.packets.clear();
    s.on_ack(103 * MS, &ack(0, &[(1, 4)], 0), &mut out);
    assert_eq!(s.recovery(), Recovery::Open);
    assert_eq!(seqs(&mut out), vec![10]);
    s.on_ack(104 * MS, &ack(0, &[(1, 5)], 0), &mut out);
    assert_eq!(s.recovery(), Recovery::Open);
    assert_eq!(seqs(&mut out), vec![11]);
    s.on_ack(105 * MS, &ack(0, &[(1, 6)], 0), &mut out);
    assert_eq!(s.recovery(), Recovery::Fast { point: 12 });
    assert_eq!(seqs(&mut out), vec![0]);
}

/// ns-2 forgets the scoreboard when fast recovery ends (`recv`, exit
/// branch: `scb_->ClearScoreBoard()`) and enters fast recovery again only on
/// three new SACK-changing duplicate ACKs (`recover_` is reset to 0). A
/// packet sent during recovery (12) and lost is retransmitted within the same
/// episode (every hole below the highest SACK is lost), so when the ACK of
/// the first retransmission ends recovery there is nothing to do; the
/// retransmission of 12 then arrives as an ordinary new ACK. One reduction
/// only: ssthresh stays W/2 = 5.
///
/// pipe_ bookkeeping (tcp-sack1.cc): entry at the 3rd dupACK, pipe_ =
/// maxseq_ - highest_ack_ - 3 = 12 - 3 = 9 (0..11 out, 10 and 11 by limited
/// transmit); --pipe_ per ACK; a packet goes out while pipe_ < 5, pipe_++.
///   SACK up to 4..7: pipe_ 8, 7, 6, 5; up to 8: 4 -> 12 (5); up to 9: 4 -> 13;
///   SACK of 10: 4 -> 14; of 11: 4 -> 15; of 13 (hole 12): 4 -> 12 again;
///   of 14: 4 -> 16; of 15: 4 -> 17.
#[test]
fn ns2_recovery_exit_forgets_the_scoreboard() {
    let mut s = profiled(Profile::Ns2, 10.0, u64::MAX, None);
    let mut out = Outbox::default();
    s.start(0, &mut out);
    out.packets.clear();
    for j in 1..=3 {
        s.on_ack((100 + j) * MS, &ack(0, &[(1, j + 1)], 0), &mut out);
    }
    assert_eq!(seqs(&mut out), vec![10, 11, 0]);
    let mut sent = vec![];
    for j in 4..12 {
        s.on_ack((100 + j) * MS, &ack(0, &[(1, j + 1)], 0), &mut out);
        sent.extend(seqs(&mut out));
    }
    assert_eq!(sent, vec![12, 13, 14, 15]);
    // 12 is lost: SACKs of 13, 14, 15.
    s.on_ack(210 * MS, &ack(0, &[(13, 14), (1, 12)], 0), &mut out);
    assert_eq!(seqs(&mut out), vec![12]);
    s.on_ack(211 * MS, &ack(0, &[(13, 15), (1, 12)], 0), &mut out);
    s.on_ack(212 * MS, &ack(0, &[(13, 16), (1, 12)], 0), &mut out);
    assert_eq!(seqs(&mut out), vec![16, 17]);
    assert_eq!(s.counters.retransmits, 2);
    // The retransmission of 0 arrives: cumulative ACK 12 = recover_ + 1.
    s.on_ack(213 * MS, &ack(12, &[(13, 16)], 103 * MS), &mut out);
    assert_eq!(s.recovery(), Recovery::Open);
    assert_eq!(
        s.counters.fast_recoveries, 1,
        "no second reduction at the exit"
    );
    assert_eq!((s.cc().cwnd(), s.cc().ssthresh()), (5.0, 5.0));
    // The retransmission of 12 arrives: a new ACK, opencwnd(): 5 + 1/5.
    s.on_ack(320 * MS, &ack(16, &[], 210 * MS), &mut out);
    assert_eq!(s.counters.fast_recoveries, 1);
    assert_eq!(s.counters.retransmits, 2);
    assert!((s.cc().cwnd() - 5.2).abs() < 1e-9, "{}", s.cc().cwnd());
}

/// ns-2 keeps the doubled timeout after an RTO until an ACK covers a
/// packet first sent after it (tcp.cc `newack`: `t_backoff_ = 1` only when
/// `seqno >= rtt_seq_`, the packet timed by `output()`, never a
/// retransmission, and `reset_rtx_timer` cancels the timing at the RTO), so
/// the go-back-N ACKs restart the timer with the backed-off value
/// (`set_rtx_timer` -> `rtt_timeout()` = rtxcur x t_backoff_). The rfc and
/// linux senders clear it with the first new RTT sample (RFC 6298 §5.7;
/// Linux `tcp_ack_update_rtt`), and with timestamps the retransmission's
/// own ACK is one.
///
/// ns-2 ticks (10 ms): sample 100 ms -> t_srtt_ = 80, t_rttvar_ = 20,
/// rtxcur = (20 x 8 + 80) >> 3 = 30 ticks = 300 ms; a second 100 ms sample
/// -> t_rttvar_ = 20 + (0 - 5) = 15, rtxcur = (120 + 80) >> 3 = 25 ticks.
#[test]
fn ns2_timeout_backoff_lasts_until_new_data_is_acknowledged() {
    let mut s = profiled(Profile::Ns2, 4.0, u64::MAX, None);
    let mut out = Outbox::default();
    s.start(0, &mut out);
    s.on_ack(100 * MS, &ack(1, &[], 0), &mut out); // cwnd 5: 4, 5 leave
    assert_eq!(seqs(&mut out), vec![0, 1, 2, 3, 4, 5]);
    assert_eq!(last_timer(&mut out), 400 * MS);
    s.on_rto_timer(400 * MS, &mut out);
    assert_eq!(seqs(&mut out), vec![1]);
    assert_eq!(last_timer(&mut out), 1_000 * MS, "doubled: 2 x 300 ms");
    // The retransmission's ACK: still backed off, 2 x 250 ms.
    s.on_ack(500 * MS, &ack(2, &[], 400 * MS), &mut out);
    assert_eq!(s.rtt().rto_ns(), 250 * MS);
    assert_eq!(seqs(&mut out), vec![2, 3], "go-back-N, cwnd 2");
    assert_eq!(last_timer(&mut out), 1_000 * MS);
    // ssthresh = 5 / 2 = 2.5; one `opencwnd()` per ACK: 1 -> 2 -> 2.7.
    s.on_ack(600 * MS, &ack(4, &[], 500 * MS), &mut out);
    assert_eq!(seqs(&mut out), vec![4, 5]);
    // Third 100 ms sample: t_rttvar_ = 15 + (0 - 3) = 12, rtxcur =
    // (96 + 80) >> 3 = 22 ticks; still doubled.
    assert_eq!(s.rtt().rto_ns(), 220 * MS);
    assert_eq!(last_timer(&mut out), 600 * MS + 440 * MS);
    // Go-back-N reaches new data: 6 is the first packet sent after the RTO.
    s.on_ack(700 * MS, &ack(6, &[], 600 * MS), &mut out);
    assert_eq!(seqs(&mut out), vec![6, 7, 8]);
    // Fourth sample: t_rttvar_ 12 -> 9, rtxcur = (72 + 80) >> 3 = 19 ticks,
    // below minrto_: 200 ms.
    assert_eq!(s.rtt().rto_ns(), 200 * MS);
    assert_eq!(
        last_timer(&mut out),
        700 * MS + 400 * MS,
        "4 and 5 were retransmissions"
    );
    s.on_ack(800 * MS, &ack(7, &[], 700 * MS), &mut out);
    let rto = s.rtt().rto_ns();
    seqs(&mut out);
    // t_rttvar_ 9 -> 7: rtxcur 17 ticks, below minrto_: 200 ms, not doubled.
    assert_eq!(rto, 200 * MS);
    assert_eq!(last_timer(&mut out), 800 * MS + rto, "backoff cleared");
    // rfc: the retransmission's ACK clears it.
    let mut s = profiled(Profile::Rfc, 4.0, u64::MAX, None);
    let mut out = Outbox::default();
    s.start(0, &mut out);
    s.on_ack(100 * MS, &ack(1, &[], 0), &mut out);
    let t = last_timer(&mut out);
    s.on_rto_timer(t, &mut out);
    s.on_ack(t + 100 * MS, &ack(2, &[], t), &mut out);
    assert_eq!(last_timer(&mut out), t + 100 * MS + s.rtt().rto_ns());
}

/// A controller that records what the transport told it on each ACK.
#[derive(Clone, Default)]
struct Recorder {
    rtt_updated: std::sync::Arc<std::sync::Mutex<Vec<bool>>>,
}

impl longfat_cc::CongestionControl for Recorder {
    fn name(&self) -> &'static str {
        "recorder"
    }
    fn cwnd(&self) -> f64 {
        10.0
    }
    fn ssthresh(&self) -> f64 {
        f64::INFINITY
    }
    fn on_ack(&mut self, ack: &longfat_cc::AckEvent) {
        self.rtt_updated.lock().unwrap().push(ack.rtt_updated);
    }
    fn on_congestion_event(&mut self, _loss: &longfat_cc::LossEvent) {}
    fn on_rto(&mut self, _rto: &longfat_cc::RtoEvent) {}
}

/// ns-2 takes an RTT sample only in `newack()`: on ACKs that advance the
/// cumulative point outside fast recovery and on the one that ends it,
/// never on duplicate or partial ACKs (tcp-sack1.cc `recv`). The
/// controller must not see a stale sample as a fresh one (eHSTCP, H-TCP,
/// Vegas and FAST count samples): `rtt_updated` is false on those ACKs.
/// (The other profiles sample every ACK from its timestamp echo.)
#[test]
fn ns2_tells_the_controller_which_acks_carry_an_rtt_sample() {
    let rec = Recorder::default();
    let flags = rec.rtt_updated.clone();
    let cfg = TcpConfig {
        profile: Profile::Ns2,
        ..TcpConfig::default()
    };
    let mut s = TcpSender::new(0, cfg, Box::new(rec), None);
    let mut out = Outbox::default();
    s.start(0, &mut out); // cwnd 10: 0..9
    s.on_ack(100 * MS, &ack(1, &[], 0), &mut out); // new ACK
    for top in 3..6 {
        s.on_ack(100 * MS, &ack(1, &[(2, top)], 0), &mut out); // dupACKs
    }
    // 10 went out on the new ACK, 11 and 12 by limited transmit.
    assert_eq!(s.recovery(), Recovery::Fast { point: 13 });
    s.on_ack(101 * MS, &ack(1, &[(2, 6)], 0), &mut out); // dupACK
    s.on_ack(150 * MS, &ack(6, &[], 100 * MS), &mut out); // partial ACK
    s.on_ack(160 * MS, &ack(13, &[], 100 * MS), &mut out); // recovery ends
    assert_eq!(s.recovery(), Recovery::Open);
    let got = flags.lock().unwrap().clone();
    assert_eq!(got, vec![true, false, false, false, false, false, true]);
}

/// ns-2 sends only the fast retransmission on the duplicate ACK that starts
/// fast recovery (`dupack_action` -> `output(last_ack_ + 1)`; `recv` calls
/// `send_much` only when `dupacks_ == 0`), even when pipe_ is below cwnd_.
/// A 6-packet transfer, cwnd 10, packets 0 and 1 lost: the third dupACK
/// (SACKs of 2..4) gives cwnd_ = 5, pipe_ = 6 - 3 = 3, and sends 0 only;
/// the next ACK (SACK of 5) sets pipe_ = 2 and `send_much` retransmits
/// hole 1 (below the highest SACK).
#[test]
fn ns2_sends_only_the_fast_retransmission_on_the_entry_ack() {
    let mut s = profiled(Profile::Ns2, 10.0, u64::MAX, Some(6));
    let mut out = Outbox::default();
    s.start(0, &mut out);
    assert_eq!(seqs(&mut out), (0..6).collect::<Vec<_>>());
    for j in 3..6 {
        s.on_ack((100 + j) * MS, &ack(0, &[(2, j)], 0), &mut out);
    }
    assert_eq!(s.recovery(), Recovery::Fast { point: 6 });
    assert_eq!(seqs(&mut out), vec![0]);
    s.on_ack(106 * MS, &ack(0, &[(2, 6)], 0), &mut out);
    assert_eq!(seqs(&mut out), vec![1]);
}

/// Linux's RTO estimator (`tcp_rtt_estimator`) decays rttvar towards the
/// round trip's largest mean deviation once per round trip, when snd_una
/// passes `rtt_seq` (snd_nxt when the round began) — snd_una as updated by
/// the ACK being processed (`tcp_ack` calls `tcp_snd_una_update` before
/// `tcp_clean_rtx_queue` samples).
///
/// Every sample is m = 400 ms. IW 2; each ACK covers one packet.
///   ACK 1: srtt = 400, mdev = 800, rttvar = mdev_max = 800, rtt_seq = 2.
///   ACK 2: mdev = 600 (snd_una 2, not past 2).
///   ACK 3: mdev = 450; snd_una 3 > 2: round ends, mdev_max (800) is not
///          below rttvar: no decay; rtt_seq = snd_nxt = 6, mdev_max = 200.
///   ACK 4: mdev = 337.5 -> mdev_max = 337.5. ACKs 5, 6: mdev falls.
///   ACK 7: snd_una 7 > 6: rttvar -= (800 - 337.5) / 4 -> 684.375.
/// RTO = 400 + 684.375 ms. (With snd_una taken before the ACK, the rounds
/// end an ACK later, at 4 and 10, and the RTO would still be 1.2 s.)
#[test]
fn linux_rto_estimator_ends_its_round_on_the_ack_that_passes_rtt_seq() {
    let mut s = profiled(Profile::Linux, 2.0, u64::MAX, None);
    let mut out = Outbox::default();
    s.start(0, &mut out);
    for k in 1..=7 {
        let now = (400 + k) * MS;
        s.on_ack(now, &ack(k, &[], now - 400 * MS), &mut out);
        if k == 1 {
            assert_eq!(s.rtt().rto_ns(), 1_200 * MS);
        }
    }
    assert_eq!(s.rtt().rto_ns(), 1_084_375_000);
}

/// RACK needs no duplicate-ACK threshold (RFC 8985 §6.2; Linux
/// `tcp_rack_detect_loss` and `tcp_rack_reo_timeout`): one SACK above a
/// hole is enough once the reordering window has passed. 10 packets leave
/// at 0, packet 0 is lost, the SACK for 1 comes back at 100 ms (RTT
/// 100 ms). With fewer than 3 packets SACKed and no reordering seen,
/// reo_wnd = min_rtt / 4 = 25 ms, so 0 is lost at 0 + 100 + 25 = 125 ms:
/// the reordering timer fires 25 + 2 ms (TCP_TIMEOUT_MIN) after the SACK,
/// at 127 ms, marks 0 lost and starts recovery; PRR (`tcp_cwnd_reduction(1,
/// ...)`: pipe = 11 - 1 SACKed - 1 lost = 9 > ssthresh 5, sndcnt =
/// ceil(5 x 1 / 10) = 1) sends the retransmission. RFC 6675 waits for two
/// more SACKs.
#[test]
fn rack_marks_a_lone_hole_lost_after_the_reordering_window() {
    let mut s = profiled(Profile::Linux, 10.0, u64::MAX, None);
    let mut out = Outbox::default();
    s.start(0, &mut out);
    out.packets.clear();
    out.timers.clear();
    s.on_ack(100 * MS, &ack(0, &[(1, 2)], 0), &mut out);
    assert_eq!(seqs(&mut out), vec![10], "pipe 9 < cwnd 10");
    assert_eq!(s.recovery(), Recovery::Open);
    assert_eq!(last_timer(&mut out), 127 * MS);
    s.on_rto_timer(127 * MS, &mut out);
    assert_eq!(s.recovery(), Recovery::Fast { point: 11 });
    assert_eq!((s.cc().cwnd(), s.cc().ssthresh()), (5.0, 5.0));
    assert_eq!(seqs(&mut out), vec![0]);
    assert_eq!(s.counters.timeouts, 0);

    let mut s = profiled(Profile::Rfc, 10.0, u64::MAX, None);
    let mut out = Outbox::default();
    s.start(0, &mut out);
    out.timers.clear();
    s.on_ack(100 * MS, &ack(0, &[(1, 2)], 0), &mut out);
    assert_eq!(s.recovery(), Recovery::Open);
    assert!(
        out.timers.is_empty(),
        "no timer but the RTO armed at the start"
    );
}

/// F-RTO (RFC 5682 §3 with SACK, Linux `tcp_process_loss`): after a timeout
/// the first ACK that advances the cumulative point sends new data instead
/// of retransmissions (step 2b); an ACK that then SACKs that new data shows
/// the loss was real (step 3a), and retransmission resumes.
#[test]
fn frto_sends_new_data_after_a_timeout_then_retransmits_on_a_sack() {
    let run = |profile: Profile| {
        let mut s = profiled(profile, 10.0, u64::MAX, None);
        let mut out = Outbox::default();
        s.start(0, &mut out);
        s.on_ack(100 * MS, &ack(10, &[], 0), &mut out); // cwnd 20: 10..29 out
        out.packets.clear();
        let mut t = last_timer(&mut out);
        if profile == Profile::Linux {
            s.on_rto_timer(t, &mut out); // tail loss probe: new packet 30
            assert_eq!(seqs(&mut out), vec![30]);
            t = last_timer(&mut out);
        }
        s.on_rto_timer(t, &mut out);
        assert_eq!(seqs(&mut out), vec![10], "the timeout retransmits the head");
        // The head's retransmission is acknowledged (TSecr = its own stamp,
        // so the timestamp check proves nothing). Slow start: cwnd 1 -> 2.
        s.on_ack(t + 150 * MS, &ack(11, &[], t), &mut out);
        let after_first = seqs(&mut out);
        let next = s.scoreboard().snd_nxt();
        // A duplicate ACK SACKing the highest packet sent.
        s.on_ack(
            t + 160 * MS,
            &ack(11, &[(next - 1, next)], t + 150 * MS),
            &mut out,
        );
        (after_first, seqs(&mut out), s.cc().ssthresh())
    };
    // linux: step 2b sends new packets 31 and 32 (pipe 0, cwnd 2); step 3a:
    // the SACK of 32 ends F-RTO, and RACK marks 31 lost (sent before 32,
    // which arrived); pipe = 22 outstanding - 1 SACKed - 21 lost = 0 <
    // cwnd 2: two retransmissions, 11 and 12.
    let (first, second, ssthresh) = run(Profile::Linux);
    assert_eq!(first, vec![31, 32]);
    assert_eq!(second, vec![11, 12]);
    assert_eq!(ssthresh, 10.0, "the reduction stands");
    // rfc retransmits at once (no F-RTO): 11 and 12.
    let (first, _, _) = run(Profile::Rfc);
    assert_eq!(first, vec![11, 12]);
}

/// ns-2 reads duplicate ACKs again from the first new ACK after a timeout
/// (tcp-sack1.cc `recv`: `timeout_ = FALSE` in the new-ACK branch; a
/// duplicate ACK calls `UpdateScoreBoard` only while `timeout_` is clear),
/// not from the end of the timeout's recovery. Such a duplicate ACK that
/// changes the scoreboard counts (`++dupacks_`), and the first two send one
/// packet each (`send_one`: `t_seqno_ <= highest_ack_ + cwnd_ + dupacks_`),
/// the next of the go-back-N sequence; the third starts no fast recovery
/// (`dupack_action()`, `bugFix_`: `highest_ack_ > recover_` fails).
///
/// cwnd 4: 0..3 leave and are all lost. RTO (3 s, no sample yet): cwnd_ 1,
/// ssthresh_ 2, `recover_` = maxseq_ = 3, 0 again. ACK 1 (a new ACK):
/// cwnd_ 2, 1 and 2 go out again; the retransmitted 1 is lost. A duplicate
/// ACK SACKing 2: dupacks_ 1, t_seqno_ 3 <= 0 + 2 + 1: 3 goes out. One
/// SACKing 2..3: dupacks_ 2, 4 <= 0 + 2 + 2: 4 (new data). One SACKing
/// 2..4: dupacks_ 3, still in the timeout's recovery: nothing.
/// Before the fix these duplicate ACKs were ignored until the ACK passed 4.
#[test]
fn ns2_reads_duplicate_acks_from_the_first_new_ack_after_a_timeout() {
    let mut s = profiled(Profile::Ns2, 4.0, u64::MAX, None);
    let mut out = Outbox::default();
    s.start(0, &mut out);
    assert_eq!(seqs(&mut out), vec![0, 1, 2, 3]);
    s.on_rto_timer(3_000 * MS, &mut out);
    assert_eq!(seqs(&mut out), vec![0]);
    assert_eq!(s.recovery(), Recovery::Timeout { point: 4 });
    // A duplicate ACK before any new ACK: `timeout_` is set, not read.
    s.on_ack(3_050 * MS, &ack(0, &[(2, 3)], 0), &mut out);
    assert_eq!(seqs(&mut out), Vec::<u64>::new());
    s.on_ack(3_100 * MS, &ack(1, &[], 3_000 * MS), &mut out);
    assert_eq!(s.cc().cwnd(), 2.0);
    assert_eq!(seqs(&mut out), vec![1, 2]);
    s.on_ack(3_200 * MS, &ack(1, &[(2, 3)], 3_100 * MS), &mut out);
    assert_eq!(seqs(&mut out), vec![3], "duplicate ACK 1: send_one");
    s.on_ack(3_201 * MS, &ack(1, &[(2, 4)], 3_101 * MS), &mut out);
    assert_eq!(seqs(&mut out), vec![4], "duplicate ACK 2: send_one");
    // The same block again changes nothing: not a duplicate ACK.
    s.on_ack(3_202 * MS, &ack(1, &[(2, 4)], 3_101 * MS), &mut out);
    assert_eq!(seqs(&mut out), Vec::<u64>::new());
    s.on_ack(3_203 * MS, &ack(1, &[(2, 5)], 3_102 * MS), &mut out);
    assert_eq!(
        seqs(&mut out),
        Vec::<u64>::new(),
        "duplicate ACK 3: no send"
    );
    assert_eq!(s.recovery(), Recovery::Timeout { point: 4 });
    assert_eq!(s.counters.fast_recoveries, 0);
}

/// After a timeout ns-2 starts no fast recovery while the cumulative ACK
/// is at `recover_` (the last packet sent before the timeout) or below
/// (tcp-sack1.cc `dupack_action()`: `recovered = highest_ack_ > recover_`;
/// with `bugFix_` set, the default, it returns). So a loss of the first
/// packet sent after the timeout's recovery point waits for the next
/// timeout; a loss one packet later, when the ACK has passed `recover_`,
/// starts fast recovery on the third duplicate ACK.
///
/// cwnd 4: 0..3 lost, RTO at 3 s (`recover_` = 3), 0 again; ACK 1: cwnd_
/// 1 -> 2, 1 and 2 go; ACK 3: cwnd_ 2.5 (ssthresh_ 2), 3 and 4 go; ACK 4,
/// the recovery point: cwnd_ 2.9, 5 goes.
///   4 lost: duplicate ACKs SACK 5, 5..6, 5..7; the first two send 6 and 7
///   (`send_one`, 6 <= 3 + 2.9 + 1), the third finds highest_ack_ 3 =
///   recover_: no fast recovery.
///   5 lost: ACK 5: cwnd_ 3.24, 6 and 7 go; duplicate ACKs SACK 6, 6..7,
///   6..8 send 8, 9, then highest_ack_ 4 > 3: fast retransmission of 5.
#[test]
fn ns2_starts_no_fast_recovery_until_the_ack_passes_the_timeouts_recover() {
    for (lost, fast) in [(4u64, false), (5, true)] {
        let mut s = profiled(Profile::Ns2, 4.0, u64::MAX, None);
        let mut out = Outbox::default();
        s.start(0, &mut out);
        out.packets.clear();
        s.on_rto_timer(3_000 * MS, &mut out);
        s.on_ack(3_100 * MS, &ack(1, &[], 3_000 * MS), &mut out);
        s.on_ack(3_200 * MS, &ack(3, &[], 3_100 * MS), &mut out);
        s.on_ack(3_201 * MS, &ack(4, &[], 3_100 * MS), &mut out);
        assert_eq!(s.recovery(), Recovery::Open);
        assert_eq!(seqs(&mut out), vec![0, 1, 2, 3, 4, 5]);
        let mut next = 6;
        if lost == 5 {
            s.on_ack(3_300 * MS, &ack(5, &[], 3_200 * MS), &mut out);
            assert_eq!(seqs(&mut out), vec![6, 7]);
            next = 8;
        }
        for k in 1..=2 {
            s.on_ack(
                3_400 * MS,
                &ack(lost, &[(lost + 1, lost + 1 + k)], 3_300 * MS),
                &mut out,
            );
            assert_eq!(seqs(&mut out), vec![next], "lost {lost}: limited transmit");
            next += 1;
        }
        s.on_ack(
            3_400 * MS,
            &ack(lost, &[(lost + 1, lost + 4)], 3_300 * MS),
            &mut out,
        );
        assert_eq!(s.counters.fast_recoveries, u64::from(fast), "lost {lost}");
        let want: Vec<u64> = if fast { vec![lost] } else { vec![] };
        assert_eq!(seqs(&mut out), want, "lost {lost}");
    }
}

/// ns-2's RTT sampling without timestamps (`timestamps_ false`, ns-2.35's
/// default; issue 28 item 13), hand-derived from tcp.cc line by line:
/// `output()` times one new packet when none is timed (`rtt_active_`,
/// `rtt_seq_`, `rtt_ts_`), never a retransmission; `newack()` samples it
/// when the ACK covers it; `reset_rtx_timer()` (a timeout) cancels it
/// (Karn's rule), so only a new packet sent after the timeout is timed
/// again, and the backoff lasts until its ACK. `rtt_update()` counts
/// 10 ms ticks of the sender's clock (offset 0 here: `boot_time_` 0),
/// floor(ack / tick) - floor(sent / tick), at least 1; then t_srtt_ (8 x
/// srtt) and t_rttvar_ (4 x rttvar) in ticks; RTO = ((t_rttvar_ << 3) +
/// t_srtt_) >> 3 ticks, at least minrto_ 200 ms (`rtt_timeout()`).
///
///   t=0: 0, 1 out; 0 timed.
///   ACK 1 at 123 ms: 12 ticks: t_srtt_ 96, t_rttvar_ 24, RTO 36 ticks
///     = 360 ms. cwnd 3: 2, 3 out; 2 timed (sent at 123 ms).
///   ACK 2 at 240 ms: 2 not covered: no sample, RTO 360 ms.
///   ACK 3 at 258 ms: 25 - 12 = 13 ticks (the 135 ms would round to 14):
///     delta 13 - 12 = 1, t_srtt_ 97; |1| - (24 >> 2) = -5, t_rttvar_ 19;
///     RTO (152 + 97) >> 3 = 31 ticks = 310 ms. 6, 7 out: 6 timed.
///   RTO at 568 ms: the timing of 6 is dropped; 3 goes again, backoff 2.
///   ACK 8 at 700 ms (only 3 had been lost): covers 3..7, none timed: no
///     sample, still backed off: timer 700 + 620 ms. 8, 9 out: 8 timed.
///   ACK 9 at 811 ms: 81 - 70 = 11 ticks: delta -1, t_srtt_ 96; 1 - 4 =
///     -3, t_rttvar_ 16; RTO (128 + 96) >> 3 = 28 ticks = 280 ms, backoff
///     ended: timer 811 + 280 ms.
/// With timestamps every new ACK is a sample (`rtt_update(now -
/// ts_echo)`, rounded): ACK 2's 240 ms is 24 ticks: delta 12, t_srtt_ 108;
/// 12 - 6 = 6, t_rttvar_ 30: RTO (240 + 108) >> 3 = 43 ticks = 430 ms.
#[test]
fn ns2_without_timestamps_times_one_segment_per_rtt_with_karn() {
    let run = |timestamps: bool| {
        let cfg = TcpConfig {
            profile: Profile::Ns2,
            initial_rto_ns: Profile::Ns2.initial_rto_ns(),
            initial_window: InitialWindow {
                cwnd_pkts: 2.0,
                ssthresh_pkts: f64::INFINITY,
            },
            timestamps,
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
        assert_eq!(seqs(&mut out), vec![0, 1]);
        s.on_ack(123 * MS, &ack(1, &[], 0), &mut out);
        assert_eq!(s.rtt().rto_ns(), 360 * MS);
        assert_eq!(seqs(&mut out), vec![2, 3]);
        s.on_ack(240 * MS, &ack(2, &[], 0), &mut out);
        let rto_after_ack2 = s.rtt().rto_ns();
        seqs(&mut out);
        (s, out, rto_after_ack2)
    };
    assert_eq!(run(true).2, 430 * MS, "timestamps: ACK 2 is a sample");
    let (mut s, mut out, rto) = run(false);
    assert_eq!(rto, 360 * MS, "ACK 2 carries no sample");
    s.on_ack(258 * MS, &ack(3, &[], 0), &mut out);
    assert_eq!(s.rtt().rto_ns(), 310 * MS);
    let sent = seqs(&mut out);
    assert_eq!(sent.first(), Some(&6));
    assert_eq!(last_timer(&mut out), 568 * MS);
    s.on_rto_timer(568 * MS, &mut out);
    assert_eq!(seqs(&mut out), vec![3]);
    assert_eq!(last_timer(&mut out), 568 * MS + 620 * MS);
    s.on_ack(700 * MS, &ack(8, &[], 0), &mut out);
    assert_eq!(s.rtt().rto_ns(), 310 * MS, "Karn: no sample from 3..7");
    assert_eq!(seqs(&mut out), vec![8, 9]);
    assert_eq!(
        last_timer(&mut out),
        700 * MS + 620 * MS,
        "still backed off"
    );
    s.on_ack(811 * MS, &ack(9, &[], 0), &mut out);
    assert_eq!(s.rtt().rto_ns(), 280 * MS);
    assert_eq!(last_timer(&mut out), 811 * MS + 280 * MS, "backoff ended");
}

/// A controller shared with the test, so that the test can read the state
/// of the very controller the sender drives (H-TCP's alpha).
#[derive(Clone)]
struct Shared<C>(std::sync::Arc<std::sync::Mutex<C>>);

impl<C: longfat_cc::CongestionControl + Clone + 'static> longfat_cc::CongestionControl
    for Shared<C>
{
    fn name(&self) -> &'static str {
        self.0.lock().unwrap().name()
    }
    fn cwnd(&self) -> f64 {
        self.0.lock().unwrap().cwnd()
    }
    fn ssthresh(&self) -> f64 {
        self.0.lock().unwrap().ssthresh()
    }
    fn on_send(&mut self, now_ns: u64, seq: u64, bytes: u32, retransmit: bool) -> u32 {
        self.0
            .lock()
            .unwrap()
            .on_send(now_ns, seq, bytes, retransmit)
    }
    fn on_ack(&mut self, ack: &longfat_cc::AckEvent) {
        self.0.lock().unwrap().on_ack(ack)
    }
    fn on_congestion_event(&mut self, loss: &longfat_cc::LossEvent) {
        self.0.lock().unwrap().on_congestion_event(loss)
    }
    fn on_recovery_exit(&mut self, now_ns: u64) {
        self.0.lock().unwrap().on_recovery_exit(now_ns)
    }
    fn on_timeout_recovery_exit(&mut self, now_ns: u64) {
        self.0.lock().unwrap().on_timeout_recovery_exit(now_ns)
    }
    fn on_rto(&mut self, rto: &longfat_cc::RtoEvent) {
        self.0.lock().unwrap().on_rto(rto)
    }
}

/// Issue 28 item 7: Linux restarts H-TCP's Delta when a timeout recovery
/// ends (`tcp_process_loss`: snd_una reaches high_seq, `tcp_set_ca_state(sk,
/// TCP_CA_Open)`, whose `htcp_state` sets `last_cong = jiffies`), not only
/// after fast recovery.
///
/// A 20-packet transfer under `linux` on a 375 ms path, H-TCP with the
/// paper's constants (no RTT scaling). 0..9 leave at 0; their ACK at 375 ms
/// (one sample m = 375 ms: RTO = m + max(2m, 200 ms) = 1125 ms) grows cwnd
/// to 20 and 10..19 leave; everything after is lost. The tail loss probe
/// (PTO = 2 x 375 + 2 = 752 ms) resends 19 at 1127 ms, the RTO fires 1125 ms
/// later, at T = 2252 ms: first congestion event, beta = 0.5, ssthresh 10,
/// cwnd 1, and 10 goes out again; the recovery point is 20. Slow start
/// repairs 10..19 in four round trips of 375 ms: 10; 11, 12; 13..16; 17..19
/// (F-RTO ends on the first ACK: there is no new data to send), and the ACK
/// of 19 at T + 1.5 s ends the timeout recovery.
///
/// H-TCP: alpha = 2 (1 - beta) alpha-bar(Delta) = alpha-bar(Delta), with
/// alpha-bar = 1 for Delta <= 1 s, else 1 + 10 (Delta - 1) + ((Delta - 1)/2)^2.
/// Counting from the end of the recovery (Linux), Delta = 0 at the exit:
/// alpha = 1, still 1 a second later, and 1 + 10 + 0.25 = 11.25 two seconds
/// later. Counting from the expiry (the code before), Delta = 1.5 s at the
/// exit: alpha = 1 + 5 + 0.0625 = 6.0625.
#[test]
fn htcp_delta_restarts_when_a_linux_timeout_recovery_ends() {
    use longfat_cc::htcp::{Htcp, HtcpConfig};
    let rtt = 375 * MS;
    let cfg = TcpConfig {
        profile: Profile::Linux,
        initial_rto_ns: Profile::Linux.initial_rto_ns(),
        initial_window: InitialWindow {
            cwnd_pkts: 10.0,
            ssthresh_pkts: f64::INFINITY,
        },
        ..TcpConfig::default()
    };
    let h = Shared(std::sync::Arc::new(std::sync::Mutex::new(Htcp::new(
        HtcpConfig::default(),
        cfg.initial_window,
    ))));
    let mut s = TcpSender::new(0, cfg, Box::new(h.clone()), Some(20));
    let mut out = Outbox::default();
    s.start(0, &mut out);
    assert_eq!(seqs(&mut out), (0..10).collect::<Vec<_>>());
    out.timers.clear();
    s.on_ack(rtt, &ack(10, &[], 0), &mut out);
    assert_eq!(seqs(&mut out), (10..20).collect::<Vec<_>>());
    assert_eq!(s.rtt().rto_ns(), 1_125 * MS);
    assert_eq!(last_timer(&mut out), 1_127 * MS, "the probe");
    s.on_rto_timer(1_127 * MS, &mut out);
    assert_eq!(seqs(&mut out), vec![19]);
    let t = last_timer(&mut out);
    assert_eq!(t, 2_252 * MS);
    s.on_rto_timer(t, &mut out);
    assert_eq!(s.counters.timeouts, 1);
    assert_eq!(s.recovery(), Recovery::Timeout { point: 20 });
    assert_eq!((s.cc().cwnd(), s.cc().ssthresh()), (1.0, 10.0));
    assert_eq!(seqs(&mut out), vec![10]);
    let rounds: [(u64, Vec<u64>); 4] = [
        (11, vec![11, 12]),
        (13, (13..17).collect()),
        (17, vec![17, 18, 19]),
        (20, vec![]),
    ];
    for (k, (cum, sent)) in rounds.into_iter().enumerate() {
        let now = t + (k as u64 + 1) * rtt;
        s.on_ack(now, &ack(cum, &[], now - rtt), &mut out);
        assert_eq!(seqs(&mut out), sent, "round {}", k + 1);
    }
    let exit = t + 1_500 * MS;
    assert_eq!(s.recovery(), Recovery::Open);
    assert_eq!(s.completed_at_ns, Some(exit));
    assert_eq!(s.counters.undos, 0);
    let htcp = h.0.lock().unwrap();
    assert_eq!(htcp.beta(), 0.5);
    assert_eq!(
        htcp.alpha(exit),
        1.0,
        "Delta restarts at the exit (6.0625 counting from the RTO)"
    );
    assert_eq!(htcp.alpha(exit + 1_000 * MS), 1.0);
    assert!((htcp.alpha(exit + 2_000 * MS) - 11.25).abs() < 1e-12);
}

/// Issue 28 item 9(a): Linux schedules a tail loss probe only in Open or
/// CWR (`tcp_schedule_loss_probe`: `icsk_ca_state != TCP_CA_Open &&
/// icsk_ca_state != TCP_CA_CWR` returns false), never in Disorder (packets
/// SACKed or lost, or a retransmission done: `tcp_try_keep_open`).
///
/// The timeline of `eifel_undo_restores_the_window_after_a_spurious_timeout`
/// up to the RTO at 602 ms (10 goes out again; the RTO is re-armed, backed
/// off, for 602 + 2 x 300 = 1202 ms). At 750 ms a duplicate ACK SACKs the
/// original 11 (sent at 100 ms, never retransmitted): F-RTO step 3b undoes
/// the timeout (`tcp_process_loss`, FLAG_ORIG_SACK_ACKED) and the state is
/// Open again, but with a packet SACKed and the head retransmitted it is
/// Disorder for Linux. The SACK of 12 at 751 ms frees one packet of the
/// window (21 out, 2 SACKed, cwnd 20): 31 goes out. RACK has nothing to wait
/// for (the hole, 10, was last sent at 602 ms, after 12), so no timer is
/// re-armed: the RTO at 1202 ms stands and fires as a timeout. (Probing in
/// Disorder re-armed the timer as a probe and sent a loss probe at 1202 ms.)
#[test]
fn linux_does_not_schedule_a_loss_probe_in_disorder() {
    let mut s = profiled(Profile::Linux, 10.0, u64::MAX, None);
    let mut out = Outbox::default();
    s.start(0, &mut out);
    s.on_ack(100 * MS, &ack(10, &[], 0), &mut out);
    out.packets.clear();
    assert_eq!(last_timer(&mut out), 302 * MS);
    s.on_rto_timer(302 * MS, &mut out);
    assert_eq!(seqs(&mut out), vec![30], "the probe");
    assert_eq!(last_timer(&mut out), 602 * MS);
    s.on_rto_timer(602 * MS, &mut out);
    assert_eq!((s.counters.timeouts, s.counters.loss_probes), (1, 1));
    assert_eq!(seqs(&mut out), vec![10]);
    assert_eq!(last_timer(&mut out), 1_202 * MS);
    s.on_ack(750 * MS, &ack(10, &[(11, 12)], 100 * MS), &mut out);
    assert_eq!(s.counters.undos, 1);
    assert_eq!(s.recovery(), Recovery::Open);
    assert_eq!(seqs(&mut out), Vec::<u64>::new());
    s.on_ack(751 * MS, &ack(10, &[(11, 13)], 100 * MS), &mut out);
    assert_eq!(seqs(&mut out), vec![31]);
    assert!(
        out.timers.is_empty(),
        "no probe in Disorder: {:?}",
        out.timers
    );
    s.on_rto_timer(1_202 * MS, &mut out);
    assert_eq!((s.counters.timeouts, s.counters.loss_probes), (2, 1));
}

/// Issue 28 item 9(b): RACK's reordering timer waits for the *last* packet
/// still inside its window, not the first (Linux `tcp_rack_detect_loss`:
/// `*reo_timeout = max_t(u32, *reo_timeout, remaining)`, armed by
/// `tcp_rack_mark_lost` as `usecs_to_jiffies(timeout) + TCP_TIMEOUT_MIN`).
///
/// 0..9 leave at 0 and are ACKed one by one from 100 ms, 10 ms apart (the
/// bottleneck's spacing; min RTT 100 ms): each ACK grows cwnd by one and
/// releases two packets, 10 and 11 at 100 ms, 12 and 13 at 110 ms, ..., 28
/// and 29 at 190 ms. At 220 ms an ACK SACKs 14 (sent at 120 ms: RACK RTT
/// 100 ms) while 10..13 are still missing. One packet SACKed, no reordering
/// seen: reo_wnd = min RTT / 4 = 25 ms. 10 and 11 are lost at 100 + 100 + 25
/// = 225 ms, 12 and 13 at 110 + 125 = 235 ms: Linux arms the timer for the
/// later, 220 + 15 + 2 = 237 ms (not 227 ms), and when it fires all four are
/// lost at once and fast recovery starts (point 31: 30 left at 220 ms).
#[test]
fn rack_reordering_timer_waits_for_the_last_packet_in_its_window() {
    let mut s = profiled(Profile::Linux, 10.0, u64::MAX, None);
    let mut out = Outbox::default();
    s.start(0, &mut out);
    assert_eq!(seqs(&mut out), (0..10).collect::<Vec<_>>());
    for k in 1..=10u64 {
        s.on_ack((90 + 10 * k) * MS, &ack(k, &[], 0), &mut out);
        assert_eq!(seqs(&mut out), vec![8 + 2 * k, 9 + 2 * k], "ACK {k}");
    }
    out.timers.clear();
    s.on_ack(220 * MS, &ack(10, &[(14, 15)], 120 * MS), &mut out);
    assert_eq!(seqs(&mut out), vec![30], "pipe 19 < cwnd 20");
    assert_eq!(s.recovery(), Recovery::Open);
    assert_eq!(last_timer(&mut out), 237 * MS);
    s.on_rto_timer(237 * MS, &mut out);
    assert_eq!(s.recovery(), Recovery::Fast { point: 31 });
    assert_eq!(s.scoreboard().lost_count(), 4);
    assert_eq!(s.counters.timeouts, 0);
}

/// Issue 28 item 9(c): a Linux timeout marks lost only the head and the
/// packets sent at least RACK's RTT ago (`tcp_timeout_mark_lost`: the others
/// have `tcp_rack_skb_timeout(tp, skb, 0) > 0`), and restarts the window at
/// what is still in flight plus one (`tcp_enter_loss`: snd_cwnd =
/// `tcp_packets_in_flight(tp) + 1`), not at one packet.
///
/// `fast_recovery_at_w20`: 0..19 leave at 0, 20 and 21 at 101 and 102 ms,
/// the fast retransmission of 0 at 103 ms, which re-arms the RTO for
/// T = 103 ms + RTO = 406.36 ms. The retransmission is lost. The SACKs of
/// 4..19 arrive late, at 284..299 ms; PRR sends one new packet per two
/// delivered, 22..28 at 285, 287, ..., 297 ms (the schedule of
/// `prr_sends_one_packet_per_two_delivered_down_to_ssthresh`). Nothing
/// delivered was sent after 0's retransmission, so RACK marks nothing and the
/// RTO fires; RACK's RTT is that of 19, 299 ms. Packets sent at or before
/// T - 299 ms = 107.36 ms are lost: the head 0, 20 and 21; 22..28 are
/// spared. In flight: 29 out - 19 SACKed - 3 lost = 7, so cwnd = 8 (Reno
/// keeps the recovery's ssthresh, 10: an RTO in fast recovery does not
/// reduce again). Only the head goes out again: pipe 7 + 1 = cwnd 8.
#[test]
fn linux_timeout_spares_packets_sent_within_the_rack_rtt() {
    let (mut s, mut out) = fast_recovery_at_w20(Profile::Linux);
    let t = last_timer(&mut out);
    out.packets.clear();
    let mut sent = vec![];
    for j in 4..20 {
        s.on_ack((280 + j) * MS, &ack(0, &[(1, j + 1)], 0), &mut out);
        sent.extend(out.packets.drain(..).map(|p| (p.seq, (280 + j) * MS)));
    }
    let prr: Vec<(u64, u64)> = (0..7).map(|i| (22 + i, (285 + 2 * i) * MS)).collect();
    assert_eq!(sent, prr);
    assert!(out.timers.is_empty(), "the RTO armed at 103 ms stands");
    // Linux `tcp_rtt_estimator` on the samples 101, 102, 103 ms: srtt =
    // 101.359375 ms; rttvar = max(2 x 101, 200) = 202 ms (mdev falls after
    // the first sample and no round trip ends); T = 103 + 303.359375 ms.
    assert_eq!(t, 406_359_375);
    s.on_rto_timer(t, &mut out);
    assert_eq!(s.counters.timeouts, 1);
    assert_eq!(s.scoreboard().lost_count(), 3);
    assert_eq!((s.cc().cwnd(), s.cc().ssthresh()), (8.0, 10.0));
    assert_eq!(seqs(&mut out), vec![0]);
    assert_eq!(s.scoreboard().pipe(), 8);
}
