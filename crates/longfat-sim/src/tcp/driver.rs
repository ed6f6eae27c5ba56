//! One TCP sender driven packet by packet by a peer that is a script, not a
//! receiver: the unit `longfat conformance` runs packetdrill scripts on
//! (docs/conformance.md). The sender is the object the engine runs, called
//! through the engine's own entry points (`start`, `set_send_limit`,
//! `on_host_ready`, `set_peer_window`, `on_ack`, `on_rto_timer`); only the
//! network is gone. Its timer is kept as the engine keeps it (one slot per
//! flow holding the earliest deadline asked for; when it fires, the sender
//! re-arms if its deadline moved later), and the ACKs the script injects
//! echo timestamps and tags as the simulator's receiver would.

use crate::event::TimerKind;
use crate::outbox::Outbox;
use crate::packet::{Dir, Ecn, Packet, PacketKind};
use crate::tcp::sender::{Recovery, TcpSender};

/// A data packet the sender emitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub at_ns: u64,
    /// Packet number (the first is 0).
    pub seq: u64,
    /// Sent before (a retransmission or a probe of old data).
    pub retransmit: bool,
    /// The IP ECN field was ECT(0) (`tcp.ecn`).
    pub ect: bool,
    /// The TCP CWR flag was set.
    pub cwr: bool,
}

/// An ACK from the scripted peer, in packet numbers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PeerAck {
    /// Cumulative ACK: the next packet expected.
    pub cum_pkts: u64,
    /// SACK blocks [start, end), most recent first (at most 3).
    pub sacks: Vec<(u64, u64)>,
    /// The window the peer advertises, in whole packets.
    pub window_pkts: u64,
    /// The peer's TSval (echoed in the sender's next data packets).
    pub ts_val: u64,
    /// The ACK carries ECE (RFC 3168 §6.1.3: the peer saw a CE mark).
    pub ece: bool,
}

/// What Linux's `TCP_INFO` would report of the sender now.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SenderState {
    /// The window in force (`TcpSender::window_pkts`: PRR's in recovery).
    pub cwnd_pkts: u64,
    /// None while unlimited (Linux reports `TCP_INFINITE_SSTHRESH`).
    pub ssthresh_pkts: Option<u64>,
    /// Linux's `icsk_ca_state`: 0 Open, 1 Disorder, 2 CWR (an ECN
    /// reduction; a local drop is not modelled), 3 Recovery, 4 Loss.
    pub ca_state: u8,
    pub rto_backoff: u32,
    pub rto_ns: u64,
    /// `tp->reordering` (`TcpSender::reordering_pkts`).
    pub reordering_pkts: u64,
    pub srtt_ns: u64,
    pub min_rtt_ns: u64,
    pub unacked_pkts: u64,
    pub sacked_pkts: u64,
    pub lost_pkts: u64,
    /// Retransmitted and still outstanding (`retrans_out`).
    pub retrans_pkts: u64,
    pub total_retrans: u64,
    pub timeouts: u64,
    pub fast_recoveries: u64,
    pub loss_probes: u64,
    pub undos: u64,
}

pub struct SenderDriver {
    sender: TcpSender,
    out: Outbox,
    now_ns: u64,
    /// The engine's timer slots for this flow (`Sim::timer_at`): the
    /// transmission timer and the pacing timer.
    timer_ns: Option<u64>,
    pace_ns: Option<u64>,
    emitted: Vec<Segment>,
    /// Per packet number: the TSval and tag of its latest transmission.
    sent: Vec<(u64, u32)>,
    /// Data the application has written, in packets.
    written_pkts: u64,
    started: bool,
    /// What the peer has acknowledged so far (cumulative point and SACKed
    /// packets), to find the packet that triggered each ACK.
    peer_cum_pkts: u64,
    peer_sacked: Vec<bool>,
    /// The TSval and tag the peer echoes (its last trigger's).
    echo: (u64, u32),
    /// Linux's `icsk_ca_state` as last set: Open and Disorder change only
    /// as an ACK is processed (`tcp_fastretrans_alert`), Recovery and Loss
    /// also on a timer (`tcp_rack_reo_timeout`, `tcp_enter_loss`).
    ca_state: u8,
}

impl SenderDriver {
    /// A driver of `sender`, which has not started.
    pub fn new(sender: TcpSender) -> Self {
        Self {
            sender,
            out: Outbox::default(),
            now_ns: 0,
            timer_ns: None,
            pace_ns: None,
            emitted: Vec::new(),
            sent: Vec::new(),
            written_pkts: 0,
            started: false,
            peer_cum_pkts: 0,
            peer_sacked: Vec::new(),
            echo: (0, 0),
            ca_state: 0,
        }
    }

    pub fn sender(&self) -> &TcpSender {
        &self.sender
    }

    pub fn now_ns(&self) -> u64 {
        self.now_ns
    }

    /// Every data packet sent so far, in order.
    pub fn emitted(&self) -> &[Segment] {
        &self.emitted
    }

    /// When the sender's timer fires next.
    pub fn next_timer_ns(&self) -> Option<u64> {
        self.timer_ns
    }

    fn set_now(&mut self, now_ns: u64) {
        assert!(
            now_ns >= self.now_ns,
            "the driver's time runs forward ({now_ns} < {})",
            self.now_ns
        );
        self.now_ns = now_ns;
    }

    /// The handshake's round trip, before any data (`TcpSender::on_handshake_rtt`).
    pub fn handshake(&mut self, rtt_ns: u64) {
        self.sender.on_handshake_rtt(rtt_ns);
    }

    /// The window the peer advertised in the handshake (its SYN or SYN-ACK,
    /// or the ACK that completed it), before any ACK of data.
    pub fn set_peer_window(&mut self, pkts: u64) {
        self.sender.set_peer_window(pkts);
    }

    /// The application writes `pkts` more packets of data at `now_ns`; the
    /// first write starts the connection.
    pub fn write(&mut self, now_ns: u64, pkts: u64) {
        self.run_timers(now_ns, false);
        self.set_now(now_ns);
        self.written_pkts += pkts;
        self.sender.set_send_limit(self.written_pkts);
        if self.started {
            self.sender.on_host_ready(now_ns, &mut self.out);
        } else {
            self.started = true;
            self.sender.start(now_ns, &mut self.out);
        }
        self.flush();
    }

    /// The peer's ACK arrives at `now_ns`.
    pub fn ack(&mut self, now_ns: u64, a: &PeerAck) {
        self.run_timers(now_ns, false);
        self.set_now(now_ns);
        let mut p = Packet::new(
            0,
            PacketKind::Ack,
            Dir::Backward,
            self.sender.config().ack_size_bytes,
        );
        p.seq = a.cum_pkts;
        for &(s, e) in &a.sacks {
            if s >= a.cum_pkts && s < e {
                p.push_sack((s, e));
            }
        }
        self.echo = self.trigger(a).unwrap_or(self.echo);
        p.ts_val = a.ts_val;
        p.ts_ecr = self.echo.0;
        p.tag = self.echo.1;
        p.set_ece(a.ece);
        self.sender.set_peer_window(a.window_pkts);
        self.sender.on_ack(now_ns, &p, &mut self.out);
        self.flush();
        self.ca_state = match self.sender.recovery() {
            Recovery::Fast { .. } => 3,
            Recovery::Timeout { .. } => 4,
            Recovery::Open if self.sender.ecn_reducing() => 2,
            Recovery::Open if self.sender.scoreboard().disordered() => 1,
            Recovery::Open => 0,
        };
    }

    /// The packet whose arrival made the peer send `a`: of those `a` newly
    /// acknowledges or SACKs, the one sent last (the simulator's receiver
    /// echoes the TSval of the packet that triggered its ACK), but not a copy
    /// sent at this very instant, which cannot have arrived. Its TSval and tag.
    fn trigger(&mut self, a: &PeerAck) -> Option<(u64, u32)> {
        let now_clock = self.now_ns + self.sender.config().sender_clock_offset_ns;
        let mut newly = Vec::new();
        let top = (self.sent.len() as u64).min(a.cum_pkts);
        newly.extend(self.peer_cum_pkts..top.max(self.peer_cum_pkts));
        for &(s, e) in &a.sacks {
            for q in s.max(a.cum_pkts)..e.min(self.sent.len() as u64) {
                if !self.peer_sacked.get(q as usize).copied().unwrap_or(false) {
                    newly.push(q);
                }
            }
        }
        self.peer_cum_pkts = self.peer_cum_pkts.max(a.cum_pkts);
        if self.peer_sacked.len() < self.sent.len() {
            self.peer_sacked.resize(self.sent.len(), false);
        }
        for &(s, e) in &a.sacks {
            for q in s..e.min(self.sent.len() as u64) {
                self.peer_sacked[q as usize] = true;
            }
        }
        newly
            .iter()
            .map(|&q| (self.sent[q as usize], q))
            .filter(|&((ts, _), _)| ts < now_clock)
            .max_by_key(|&((ts, _), q)| (ts, q))
            .map(|(x, _)| x)
    }

    /// Fires the sender's timer while it is due at or before `until_ns`, in
    /// time order; with `stop_on_emit`, stops after the first firing that
    /// sent something. Time moves to each firing (not to `until_ns`).
    pub fn run_timers(&mut self, until_ns: u64, stop_on_emit: bool) {
        loop {
            // The earlier slot first; at the same instant the transmission
            // timer.
            let pace = self.pace_ns.filter(|&t| t <= until_ns);
            let xmit = self.timer_ns.filter(|&t| t <= until_ns);
            let (t, is_pace) = match (xmit, pace) {
                (Some(x), Some(p)) if p < x => (p, true),
                (Some(x), _) => (x, false),
                (None, Some(p)) => (p, true),
                (None, None) => break,
            };
            self.set_now(t.max(self.now_ns));
            let before = self.emitted.len();
            if is_pace {
                self.pace_ns = None;
                self.sender.on_pace_timer(self.now_ns, &mut self.out);
            } else {
                self.timer_ns = None;
                self.sender.on_rto_timer(self.now_ns, &mut self.out);
            }
            self.flush();
            match self.sender.recovery() {
                Recovery::Fast { .. } => self.ca_state = 3,
                Recovery::Timeout { .. } => self.ca_state = 4,
                Recovery::Open => {}
            }
            if stop_on_emit && self.emitted.len() > before {
                break;
            }
        }
    }

    /// Takes what the sender handed back, as the engine's `flush` does.
    fn flush(&mut self) {
        for p in self.out.packets.drain(..) {
            debug_assert_eq!(p.kind, PacketKind::Data);
            let seq = p.seq;
            let retransmit = (seq as usize) < self.sent.len();
            if !retransmit {
                self.sent.resize(seq as usize + 1, (0, 0));
            }
            self.sent[seq as usize] = (p.ts_val, p.tag);
            self.emitted.push(Segment {
                at_ns: self.now_ns,
                seq,
                retransmit,
                ect: p.ecn() == Ecn::Ect0,
                cwr: p.cwr(),
            });
        }
        // The host queue always has room (`Outbox::host_room_pkts`): the
        // script reads the wire, not a bottleneck.
        self.out.host_blocked = false;
        for (kind, t) in self.out.timers.drain(..) {
            let slot = match kind {
                TimerKind::Rto => &mut self.timer_ns,
                TimerKind::Pace => &mut self.pace_ns,
                k => unreachable!("a sender arms no {k:?} timer"),
            };
            if slot.is_none_or(|s| t < s) {
                *slot = Some(t);
            }
        }
    }

    /// The sender's state as `TCP_INFO` reports it.
    pub fn state(&self) -> SenderState {
        let s = &self.sender;
        let sb = s.scoreboard();
        let ssthresh = s.cc().ssthresh();
        let rtt = s.rtt().stats();
        SenderState {
            cwnd_pkts: s.window_pkts(),
            ssthresh_pkts: ssthresh.is_finite().then(|| ssthresh.max(0.0) as u64),
            ca_state: self.ca_state,
            rto_backoff: s.rto_backoff(),
            rto_ns: s.rtt().backed_off_rto_ns(s.rto_backoff()),
            reordering_pkts: s.reordering_pkts(),
            srtt_ns: rtt.smoothed_ns,
            min_rtt_ns: rtt.min_ns,
            unacked_pkts: sb.outstanding(),
            sacked_pkts: sb.sacked_count(),
            lost_pkts: sb.lost_count(),
            retrans_pkts: sb.retransmitted_count(),
            total_retrans: s.counters.retransmits,
            timeouts: s.counters.timeouts,
            fast_recoveries: s.counters.fast_recoveries,
            loss_probes: s.counters.loss_probes,
            undos: s.counters.undos,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::{Profile, TcpConfig};
    use longfat_cc::InitialWindow;

    const MS: u64 = 1_000_000;

    fn linux_reno() -> SenderDriver {
        let cfg = TcpConfig {
            profile: Profile::Linux,
            initial_window: InitialWindow {
                cwnd_pkts: 10.0,
                ssthresh_pkts: f64::INFINITY,
            },
            ..TcpConfig::default()
        };
        let cc = longfat_cc::build(
            "reno",
            &Default::default(),
            Profile::Linux.cc_rules(),
            cfg.initial_window,
        )
        .unwrap();
        SenderDriver::new(TcpSender::new(0, cfg, cc, None))
    }

    fn ack(cum: u64) -> PeerAck {
        PeerAck {
            cum_pkts: cum,
            window_pkts: 1000,
            ..PeerAck::default()
        }
    }

    #[test]
    fn initial_window_then_slow_start_per_ack() {
        let mut d = linux_reno();
        d.handshake(100 * MS);
        d.write(0, 30);
        assert_eq!(d.emitted().len(), 10, "IW10");
        assert!(d.emitted().iter().all(|s| s.at_ns == 0 && !s.retransmit));
        // An ACK per two packets: each delivers 2, cwnd grows by 2, 4 leave.
        d.ack(100 * MS, &ack(2));
        assert_eq!(d.emitted().len(), 14);
        assert_eq!(d.state().cwnd_pkts, 12);
        assert_eq!(d.state().ssthresh_pkts, None);
        assert_eq!(d.state().ca_state, 0);
    }

    #[test]
    fn the_timer_fires_as_the_engines_slot_does() {
        let mut d = linux_reno();
        d.handshake(100 * MS);
        d.write(0, 1);
        // Linux (tcp_schedule_loss_probe): one packet out in Open arms the
        // tail loss probe for 2 srtt + TCP_DELACK_MAX = 400 ms, cut to the
        // RTO, srtt + max(4 x mdev, rto_min) = 100 + 200 ms; the RTO then
        // follows the probe by another 300 ms (packetdrill's
        // cubic-rto-ss-ca-cwnd-bump.pkt: two resends 300 ms apart).
        let first = d.next_timer_ns().expect("armed");
        assert_eq!(first, 300 * MS);
        d.run_timers(10_000 * MS, true);
        assert_eq!(d.emitted().len(), 2);
        assert!(
            d.emitted()[1].retransmit,
            "the probe resends the only packet"
        );
        assert_eq!(d.emitted()[1].at_ns, first);
        d.run_timers(10_000 * MS, true);
        let third = d.emitted()[2];
        assert!(
            third.retransmit && third.at_ns == 600 * MS,
            "then the RTO: {third:?}"
        );
        assert_eq!(d.state().ca_state, 4);
        assert_eq!(d.state().rto_backoff, 1);
    }

    #[test]
    fn ack_echo_is_the_newest_packet_it_covers() {
        let mut d = linux_reno();
        d.handshake(100 * MS);
        d.write(0, 10);
        d.ack(
            100 * MS,
            &PeerAck {
                cum_pkts: 0,
                sacks: vec![(1, 3)],
                window_pkts: 1000,
                ts_val: 7,
                ece: false,
            },
        );
        assert_eq!(d.echo.0, d.sent[2].0);
        // A duplicate that covers nothing new echoes the last trigger again.
        let before = d.echo;
        d.ack(
            101 * MS,
            &PeerAck {
                cum_pkts: 0,
                sacks: vec![(1, 3)],
                window_pkts: 1000,
                ts_val: 8,
                ece: false,
            },
        );
        assert_eq!(d.echo, before);
    }

    fn reno_ecn(profile: Profile) -> SenderDriver {
        let cfg = TcpConfig {
            profile,
            initial_window: InitialWindow {
                cwnd_pkts: 10.0,
                ssthresh_pkts: f64::INFINITY,
            },
            ecn: true,
            ..TcpConfig::default()
        };
        let cc = longfat_cc::build(
            "reno",
            &Default::default(),
            profile.cc_rules(),
            cfg.initial_window,
        )
        .unwrap();
        SenderDriver::new(TcpSender::new(0, cfg, cc, None))
    }

    fn ece_ack(cum: u64, ece: bool) -> PeerAck {
        PeerAck { ece, ..ack(cum) }
    }

    /// (seq, retransmit, ect, cwr) of the segments sent from `from` on.
    fn sent_since(d: &SenderDriver, from: usize) -> Vec<(u64, bool, bool, bool)> {
        d.emitted()[from..]
            .iter()
            .map(|s| (s.seq, s.retransmit, s.ect, s.cwr))
            .collect()
    }

    /// Linux `tcp_enter_cwr` with the `reno` module, hand-derived from
    /// tcp_input.c 6.x. IW10 (0-9); ACK 2 -> cwnd 12, 10-13 out. ACK 4
    /// with ECE (in Open): CWR with prior_cwnd 12, ssthresh = 12 >> 1 = 6,
    /// high_seq = 14; `tcp_cong_control` then runs `tcp_cwnd_reduction` on
    /// the same ACK: 2 delivered, in flight 10 (4-13), delta = 6 - 10 < 0:
    /// sndcnt = ceil(6 x 2 / 12) - 0 = 1, cwnd = 10 + 1 = 11: packet 14,
    /// with CWR. ACK 6 (ECE again, no new reduction): prr_delivered 4, in
    /// flight 9, ceil(24 / 12) - 1 = 1, cwnd 10: 15. ACK 8: 6, in flight 8,
    /// 3 - 2 = 1, cwnd 9: 16. ACK 10: 8, in flight 7, 4 - 3 = 1, cwnd 8:
    /// 17. ACK 12: 10, in flight 6, delta 0: min(0, max(10 - 4, 2) + 1) =
    /// 0, cwnd 6: nothing. ACK 14: 12, in flight 4, delta 2: min(2, 9) =
    /// 2, cwnd 6: 18, 19. ACK 15 passes high_seq 14 (the CWR packet):
    /// `tcp_end_cwnd_reduction`, cwnd = ssthresh = 6, Open; reno's
    /// congestion avoidance leaves 6 (1 of 6 counted); 5 in flight: 20.
    /// A new ECE after that (ACK 17) reduces again: 6 >> 1 = 3.
    #[test]
    fn linux_ece_enters_cwr_once_per_window_with_prr() {
        let mut d = reno_ecn(Profile::Linux);
        d.handshake(100 * MS);
        d.write(0, 100);
        assert_eq!(
            sent_since(&d, 0),
            (0..10).map(|q| (q, false, true, false)).collect::<Vec<_>>()
        );
        d.ack(100 * MS, &ack(2));
        assert_eq!(d.emitted().len(), 14);
        // (cumulative ACK, ECE, window after it, packets sent and their CWR)
        type Step = (u64, bool, u64, &'static [(u64, bool)]);
        let steps: &[Step] = &[
            (4, true, 11, &[(14, true)]),
            (6, true, 10, &[(15, false)]),
            (8, false, 9, &[(16, false)]),
            (10, false, 8, &[(17, false)]),
            (12, false, 6, &[]),
            (14, false, 6, &[(18, false), (19, false)]),
        ];
        for (i, &(cum, ece, window, sent)) in steps.iter().enumerate() {
            let from = d.emitted().len();
            d.ack((101 + i as u64) * MS, &ece_ack(cum, ece));
            let st = d.state();
            assert_eq!(
                (st.cwnd_pkts, st.ssthresh_pkts, st.ca_state),
                (window, Some(6), 2),
                "ACK {cum}"
            );
            let want: Vec<_> = sent.iter().map(|&(q, cwr)| (q, false, true, cwr)).collect();
            assert_eq!(sent_since(&d, from), want, "ACK {cum}");
        }
        let from = d.emitted().len();
        d.ack(110 * MS, &ack(15));
        let st = d.state();
        assert_eq!(
            (st.cwnd_pkts, st.ssthresh_pkts, st.ca_state),
            (6, Some(6), 0)
        );
        assert_eq!(sent_since(&d, from), [(20, false, true, false)]);
        let c = d.sender().counters;
        assert_eq!((c.ece_acks, c.ecn_reductions, c.retransmits), (2, 1, 0));
        d.ack(111 * MS, &ece_ack(17, true));
        let st = d.state();
        assert_eq!((st.ssthresh_pkts, st.ca_state), (Some(3), 2));
        assert_eq!(d.sender().counters.ecn_reductions, 2);
    }

    /// RFC 3168 §6.1.2 under `rfc`: an ECE ACK halves cwnd at once (11 ->
    /// 5.5 after one slow-start ACK from 10), retransmits nothing, does
    /// not grow; ECE ACKs until the cumulative ACK passes the first packet
    /// sent after the reduction (13, the one carrying CWR) reduce nothing
    /// more; the next ECE does.
    #[test]
    fn rfc_ece_halves_once_per_window_and_cwr_goes_on_the_next_new_packet() {
        let mut d = reno_ecn(Profile::Rfc);
        d.handshake(100 * MS);
        d.write(0, 100);
        d.ack(100 * MS, &ack(2)); // cwnd 11 (RFC 5681: +1 per ACK), 10-12 out
        assert_eq!(d.emitted().len(), 13);
        d.ack(101 * MS, &ece_ack(4, true));
        assert_eq!(d.sender().cc().cwnd(), 5.5);
        assert_eq!(d.state().ssthresh_pkts, Some(5));
        assert_eq!(d.emitted().len(), 13, "pipe 9 > 5.5: nothing sent");
        d.ack(102 * MS, &ece_ack(6, true));
        assert_eq!(d.sender().cc().cwnd(), 5.5, "no reduction, no growth");
        let from = d.emitted().len();
        for (i, cum) in [8, 10, 12].into_iter().enumerate() {
            d.ack((103 + i as u64) * MS, &ack(cum));
        }
        let sent = sent_since(&d, from);
        assert_eq!(
            sent[0],
            (13, false, true, true),
            "CWR on the first new packet"
        );
        assert!(sent[1..]
            .iter()
            .all(|&(_, rtx, ect, cwr)| !rtx && ect && !cwr));
        let c = d.sender().counters;
        assert_eq!((c.ece_acks, c.ecn_reductions, c.retransmits), (2, 1, 0));
        let ssthresh = d.state().ssthresh_pkts;
        d.ack(110 * MS, &ece_ack(13, true)); // 13 not yet acknowledged
        assert_eq!(d.sender().counters.ecn_reductions, 1);
        assert_eq!(d.state().ssthresh_pkts, ssthresh);
        let cwnd = d.sender().cc().cwnd();
        d.ack(111 * MS, &ece_ack(14, true));
        assert_eq!(d.sender().counters.ecn_reductions, 2);
        assert_eq!(d.sender().cc().cwnd(), cwnd / 2.0);
    }

    /// A fast retransmission is Not-ECT under `rfc` and `linux` (RFC 3168
    /// §6.1.5, Linux `tcp_ecn_send`: only `!before(seq, snd_nxt)`), and the
    /// first new packet after the reduction carries CWR; ns-2's `output()`
    /// marks every packet ECT and puts CWR on the very next one, the
    /// retransmission (`SetCWRonRetransmit_ true`). An ECE during the fast
    /// recovery changes nothing: no second reduction, the same ssthresh.
    #[test]
    fn retransmissions_are_not_ect_and_ece_in_recovery_does_nothing() {
        for profile in [Profile::Rfc, Profile::Linux, Profile::Ns2] {
            let mut d = reno_ecn(profile);
            d.handshake(100 * MS);
            d.write(0, 100);
            let from = d.emitted().len();
            // Packet 0 lost; 1, 2, 3 arrive (three SACK-changing duplicates
            // for ns-2, DupThresh SACKed for RFC 6675, RACK for Linux).
            for (i, hi) in [2, 3, 4].into_iter().enumerate() {
                let a = PeerAck {
                    sacks: vec![(1, hi)],
                    ..ack(0)
                };
                d.ack((100 + i as u64) * MS, &a);
            }
            assert!(
                matches!(d.sender().recovery(), Recovery::Fast { .. }),
                "{profile}"
            );
            let sent = sent_since(&d, from);
            let rtx = sent.iter().find(|s| s.1).copied();
            let ns2 = profile == Profile::Ns2;
            assert_eq!(rtx, Some((0, true, ns2, ns2)), "{profile}: {sent:?}");
            let ssthresh = d.state().ssthresh_pkts;
            let a = PeerAck {
                sacks: vec![(1, 5)],
                ece: true,
                ..ack(0)
            };
            d.ack(110 * MS, &a);
            assert_eq!(d.state().ssthresh_pkts, ssthresh, "{profile}");
            let c = d.sender().counters;
            assert_eq!(
                (c.ece_acks, c.ecn_reductions, c.fast_recoveries),
                (1, 0, 1),
                "{profile}"
            );
            // More deliveries above the hole, until new data goes out.
            for hi in 6..10 {
                let a = PeerAck {
                    sacks: vec![(1, hi)],
                    ..ack(0)
                };
                d.ack((111 + hi) * MS, &a);
            }
            // Limited transmit may send new data before the loss is found;
            // the first new packet after the retransmission carries CWR.
            let sent = sent_since(&d, from);
            let at = sent.iter().position(|s| s.1).unwrap();
            let first_new_cwr = sent[at..].iter().find(|s| !s.1).map(|s| s.3);
            assert_eq!(first_new_cwr, Some(!ns2), "{profile}: {sent:?}");
            assert!(sent.iter().filter(|s| !s.1).all(|s| s.2), "new data is ECT");
            assert_eq!(sent.iter().filter(|s| s.3).count(), 1, "one CWR");
        }
    }

    /// Without `tcp.ecn` nothing is ECT and an ECE flag (which a receiver
    /// without ECN never sets) is ignored.
    #[test]
    fn without_ecn_no_ect_and_ece_is_ignored() {
        let mut d = linux_reno();
        d.handshake(100 * MS);
        d.write(0, 30);
        d.ack(100 * MS, &ece_ack(2, true));
        assert_eq!(d.state().ssthresh_pkts, None);
        assert!(d.emitted().iter().all(|s| !s.ect && !s.cwr));
        assert_eq!(d.sender().counters.ece_acks, 0);
    }
}
