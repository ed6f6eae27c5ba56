//! The `ns2` profile's loss recovery: ns-2.35 `Agent/TCP/Sack1`
//! (tcp-sack1.cc, tcp.cc) as the LTCP, PLT, TCP-GT and eHSTCP papers ran
//! it: `pipe_` counted by hand during fast recovery, every hole below the
//! highest SACK lost on the third SACK-changing duplicate ACK, `slowdown()`'s
//! halving rules, the scoreboard cleared by new ACKs and at the end of
//! recovery, go-back-N after a timeout, one timed segment per round trip.

use crate::outbox::Outbox;
use crate::packet::Packet;
use crate::tcp::sender::shared::{LossRecovery, Recovery, SackReading, SenderCore};

/// ns-2's timer granularity (`tcpTick_`).
pub(super) const NS2_TICK_NS: u64 = 10_000_000;

/// ns-2.35 Sack1 bookkeeping (tcp-sack1.cc).
#[derive(Clone, Debug, Default)]
pub(super) struct Ns2Sack1 {
    /// `pipe_` during fast recovery.
    pipe: i64,
    /// SACK-changing duplicate ACKs since the last new ACK (`dupacks_`).
    dupacks: u64,
    /// `first_decrease_`: the connection has not reduced yet.
    reduced: bool,
    /// The timed segment (tcp.cc `rtt_active_`, `rtt_seq_`, `rtt_ts_`, the
    /// last on the sender's clock): `output()` times a new packet (never a
    /// retransmission: Karn's rule) when none is timed; `newack()` ends
    /// the timing when the ACK covers it, which also ends a timeout's
    /// backoff (`t_backoff_ = 1`) and, without timestamps, is the RTT
    /// sample; `reset_rtx_timer()` (a timeout, a fast retransmission)
    /// cancels it.
    rtt_active: bool,
    rtt_seq: u64,
    rtt_ts_ns: u64,
    /// `timeout_`: set by a timeout, cleared by the next new ACK
    /// (tcp-sack1.cc `timeout()`, `recv`); while set, duplicate ACKs are
    /// not read at all.
    timeout: bool,
    /// `recover_` of the last timeout as our packet number (`maxseq_` + 1,
    /// the timeout's recovery point); None once a fast recovery has ended
    /// (`recover_ = 0`). `dupack_action()` starts fast recovery only when
    /// `highest_ack_ > recover_`, i.e. the cumulative ACK is past it
    /// (`bugFix_`, on by default).
    recover: Option<u64>,
    /// ns-2's scoreboard during a timeout recovery: the SACK blocks of the
    /// duplicate ACKs since the last new ACK, merged, sorted. They count
    /// duplicate ACKs (`CheckUpdate()`) and nothing else: `send_much` runs
    /// only with `dupacks_ == 0`, right after a new ACK cleared them, so
    /// go-back-N still resends every packet above the cumulative ACK.
    timeout_sacks: Vec<(u64, u64)>,
    /// tcp.cc `ect_`: an ACK with ECN-Echo has been seen; from then on an
    /// ECE ACK opens no window (`recv_newack_helper`).
    ect_seen: bool,
}

impl Ns2Sack1 {
    /// `UpdateScoreBoard` + `CheckUpdate()` during a timeout recovery:
    /// records the blocks above `cum` and says whether any packet is new.
    fn record_timeout_sacks(&mut self, cum: u64, blocks: impl Iterator<Item = (u64, u64)>) -> bool {
        let mut changed = false;
        for (s, e) in blocks {
            let s = s.max(cum);
            if s >= e {
                continue;
            }
            let v = &mut self.timeout_sacks;
            // Ranges touching [s, e) merge with it.
            let first = v.partition_point(|&(_, b)| b < s);
            let last = v.partition_point(|&(a, _)| a <= e);
            let covered = first < last && v[first].0 <= s && e <= v[first].1;
            if !covered {
                changed = true;
                let lo = if first < last { v[first].0.min(s) } else { s };
                let hi = if first < last {
                    v[last - 1].1.max(e)
                } else {
                    e
                };
                v.splice(first..last, [(lo, hi)]);
            }
        }
        changed
    }
}

impl LossRecovery for Ns2Sack1 {
    /// With timestamps, ns-2 samples on new ACKs only (`newack`), not on
    /// duplicate or partial ACKs.
    fn rtt_sample_ns(&self, new_ack: bool, _delivered_pkts: u64, ts_sample_ns: u64) -> Option<u64> {
        new_ack.then_some(ts_sample_ns)
    }

    /// tcp.cc `newack()`: `rtt_active_ && seqno >= rtt_seq_` (ns-2 ACKs
    /// name the last packet received, ours the next one expected).
    fn on_timed_ack(
        &mut self,
        s: &mut SenderCore,
        now_ns: u64,
        ack_seq: u64,
        new_ack: bool,
    ) -> bool {
        let timed_acked = new_ack && self.rtt_active && ack_seq > self.rtt_seq;
        if timed_acked {
            self.rtt_active = false;
            s.rtt.on_ns2_timed_sample(self.rtt_ts_ns, s.clock(now_ns));
        }
        timed_acked
    }

    /// tcp-sack1.cc `recv`, outside fast recovery: a new ACK clears the
    /// scoreboard (`scb_->ClearScoreBoard()`) and `timeout_`, and its
    /// SACK blocks are not read (only a duplicate ACK calls
    /// `UpdateScoreBoard`, and only while `timeout_` is clear). After a
    /// timeout, ns-2's duplicate ACKs count again from the first new ACK
    /// on; they never steer the go-back-N retransmissions (see
    /// `timeout_sacks`), so our scoreboard stays without them until the
    /// timeout's recovery point passes.
    fn read_sacks(
        &mut self,
        s: &mut SenderCore,
        ack: &Packet,
        in_fast: bool,
        una_before: u64,
    ) -> SackReading {
        let new_ack = !in_fast && ack.seq > una_before;
        if new_ack {
            if s.sb.sacked_count() > 0 {
                s.sb.forget_sacks();
            }
            self.timeout = false;
            self.timeout_sacks.clear();
        }
        let timeout_recovery = matches!(s.recovery, Recovery::Timeout { .. });
        let dupack = timeout_recovery
            && !new_ack
            && !self.timeout
            && ack.seq == una_before
            && self.record_timeout_sacks(ack.seq, ack.sack_blocks());
        SackReading {
            read: !(new_ack || timeout_recovery),
            dupack,
        }
    }

    /// tcp.cc `newack` clears `t_backoff_` only when the ACK covers the
    /// packet it timed, never a retransmission: after a timeout, the first
    /// packet sent after it; tcp-sack1.cc also on a partial ACK in fast
    /// recovery.
    fn progress_ends_backoff(&self, in_fast: bool, timed_acked: bool) -> bool {
        in_fast || timed_acked
    }

    fn count_dupacks(&mut self, advanced: bool, dupack: bool) {
        if advanced {
            self.dupacks = 0;
        } else if dupack {
            self.dupacks += 1;
        }
    }

    /// Every hole below the highest SACK is lost once fast recovery runs or
    /// on the third duplicate ACK that changed the scoreboard (tcp-sack1.cc
    /// `recv`: `++dupacks_ == numdupacks(cwnd_)`), however many packets
    /// those ACKs SACKed. `dupack_action()` with `bugFix_`: not before the
    /// cumulative ACK is past the last timeout's `recover_`.
    fn detect_losses(
        &mut self,
        s: &mut SenderCore,
        _now_ns: u64,
        _force: bool,
    ) -> (u64, Option<u64>) {
        let recovered = self.recover.is_none_or(|point| s.sb.snd_una() > point);
        let go = matches!(s.recovery, Recovery::Fast { .. }) || (self.dupacks >= 3 && recovered);
        match (go, s.sb.highest_sacked()) {
            (true, Some(h)) => (s.sb.mark_lost_below(h), None),
            _ => (0, None),
        }
    }

    fn start_fast_recovery(
        &mut self,
        s: &mut SenderCore,
        now_ns: u64,
        _prior_cwnd_pkts: u64,
        out: &mut Outbox,
    ) {
        self.reduced = true;
        // `dupack_action`: pipe_ = maxseq_ - highest_ack_ - numdupacks.
        self.pipe = s.sb.outstanding() as i64 - 3;
        // `reset_rtx_timer(1, 0)`: `rtt_active_ = 0`.
        self.rtt_active = false;
        s.arm_rto(now_ns, out);
        s.send_forced_retransmit(self, now_ns, out);
    }

    /// `dupack_action` sends only the fast retransmission; `send_much`
    /// waits for the next ACK (tcp-sack1.cc `recv`: `if (dupacks_ == 0)`).
    fn sends_on_entering(&self) -> bool {
        false
    }

    /// `--pipe_` for every ACK in recovery, again for a partial ACK.
    fn on_ack_in_recovery(&mut self, advanced: bool) {
        self.pipe -= 1 + i64::from(advanced);
    }

    /// tcp-sack1.cc `recv`, exit branch: `scb_->ClearScoreBoard()` and
    /// `recover_ = 0`. Holes found during recovery (packets sent in it and
    /// lost) were retransmitted in it; they are no new episode. Another
    /// reduction needs three new SACK-changing duplicate ACKs, and the SACKs
    /// above the recovery point are forgotten too: the next duplicate ACK's
    /// blocks rebuild them. `timeout()`'s recovery (`recover_`) has no exit
    /// event.
    fn on_recovery_exit(&mut self, s: &mut SenderCore, now_ns: u64, was: Recovery) {
        if let Recovery::Fast { .. } = was {
            s.cc.on_recovery_exit(now_ns);
            self.recover = None;
        }
        s.sb.unmark_lost();
        if s.sb.sacked_count() > 0 {
            s.sb.forget_sacks();
        }
    }

    /// tcp-sack1.cc `timeout()`: a cut on every expiry, `slowdown()`
    /// halving from `min(cwnd, rwnd)`, go-back-N over a forgotten
    /// scoreboard.
    fn on_timeout(&mut self, s: &mut SenderCore, now_ns: u64) {
        s.sb.forget_sacks();
        // `reset_rtx_timer(0, 1)`: `rtt_active_ = 0`; the next packet
        // timed is the first new one.
        self.rtt_active = false;
        // `timeout_ = TRUE`, `recover_ = maxseq_`.
        self.timeout = true;
        self.recover = Some(s.sb.snd_nxt());
        self.timeout_sacks.clear();
        s.sb.mark_all_lost();
        // tcp.cc `timeout()`: "if we are in recovery from a recent ECN,
        // don't cut down ssthresh_" (`slowdown(CLOSE_CWND_ONE)`).
        let reduce = !s.in_ecn_window();
        s.notify_rto(now_ns, reduce, Some(s.cfg.rwnd_pkts as f64), true);
        self.reduced = true;
        self.dupacks = 0;
    }

    /// `send_much` outside recovery: `t_seqno_ <= highest_ack_ + window()`,
    /// plus one packet for each of the first two duplicate ACKs (`send_one`,
    /// limited transmit). The same after a timeout (tcp-sack1.cc `recv`
    /// calls `send_one` whenever `timeout_` is clear and not in fast
    /// recovery).
    fn allowance(&self, s: &SenderCore) -> u64 {
        match s.recovery {
            Recovery::Fast { .. } => s.cwnd_pkts(),
            Recovery::Open | Recovery::Timeout { .. } => s.cwnd_pkts() + self.dupacks.min(2),
        }
    }

    /// `pipe_` in fast recovery, the packets outstanding in the Open state,
    /// RFC 6675 pipe after a timeout.
    fn in_use(&self, s: &SenderCore) -> u64 {
        match s.recovery {
            Recovery::Fast { .. } => self.pipe.max(0) as u64,
            Recovery::Open => s.sb.outstanding(),
            Recovery::Timeout { .. } => s.sb.pipe(),
        }
    }

    /// tcp.cc `output()`: times the first new packet when none is timed;
    /// every packet sent in fast recovery adds to `pipe_`.
    fn on_transmit(&mut self, _now_ns: u64, seq: u64, retransmit: bool, ts_val: u64, fast: bool) {
        if fast {
            self.pipe += 1;
        }
        if !retransmit && !self.rtt_active {
            self.rtt_active = true;
            self.rtt_seq = seq;
            self.rtt_ts_ns = ts_val;
        }
    }

    /// ns-2 does not count the fast retransmission in `pipe_`.
    fn on_forced_retransmit(&mut self) {
        self.pipe -= 1;
    }

    /// tcp.cc `output()`: `if (ecn_) hf->ect() = 1` on every packet, and
    /// CWR (`cong_action_`) on the next one, retransmission or not
    /// (`SetCWRonRetransmit_ true`, ns-default.tcl).
    fn ecn_on_retransmissions(&self) -> bool {
        true
    }

    /// tcp.cc `ecn()`: `seqno > recover_ || last_cwnd_action_ ==
    /// CWND_ACTION_TIMEOUT`: after a timeout ECE is answered at once, also
    /// during its go-back-N; during fast recovery (`recover_ = maxseq_`)
    /// not.
    fn ecn_reacts_in(&self, recovery: Recovery) -> bool {
        !matches!(recovery, Recovery::Fast { .. })
    }

    /// tcp-sack1.cc `recv`: `if (ecnecho && ecn_) ecn(tcph->seqno())`
    /// before the ACK is processed.
    fn ecn_before_losses(&self) -> bool {
        true
    }

    /// `recv_newack_helper`: `opencwnd()` unless `ect_ && ecnecho`; `ect_`
    /// is set after, by the first ECE ACK (so that one still opens).
    fn ece_ack_grows(&mut self) -> bool {
        let grows = !self.ect_seen;
        self.ect_seen = true;
        grows
    }

    /// `ecn()`: `recover_ = maxseq_`, `last_cwnd_action_ =
    /// CWND_ACTION_ECN`, `slowdown()` (the first decrease done); a
    /// following `dupack_action()` within it takes the ECN branch (fast
    /// recovery without a second slowdown), which the shared sequence does
    /// for a loss inside an ECN reduction; the last timeout's `recover_`
    /// no longer holds fast recovery back.
    fn on_ecn_reduction(&mut self, _s: &mut SenderCore, _prior_cwnd_pkts: u64) {
        self.reduced = true;
        self.recover = None;
    }

    /// Reductions from `min(cwnd, rwnd)`; `slowdown()`: the first reduction
    /// and one in slow start halve.
    fn reduction_rules(&self, s: &SenderCore) -> (Option<f64>, bool) {
        let halve = !self.reduced || s.cc.cwnd() < s.cc.ssthresh();
        (Some(s.cfg.rwnd_pkts as f64), halve)
    }
}
