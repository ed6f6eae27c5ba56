//! The `linux` profile's loss recovery: RACK-TLP (RFC 8985, Linux
//! `tcp_recovery.c`) for loss detection, PRR (RFC 6937, `tcp_cwnd_reduction`)
//! for the window in fast recovery, the tail loss probe and RACK's
//! reordering timer on the one transmission timer, F-RTO (RFC 5682,
//! `tcp_process_loss`) and timestamp undo (Eifel, RFC 3522,
//! `tcp_try_undo_loss`) after a timeout.

use longfat_cc::CongestionControl;

use crate::outbox::Outbox;
use crate::packet::Packet;
use crate::tcp::rack::Rack;
use crate::tcp::sender::shared::{AckOutcome, LossRecovery, Recovery, SenderCore, XmitTimer};

/// Linux `TCP_TIMEOUT_MIN`: 2 jiffies (HZ = 1000).
const LINUX_TIMEOUT_MIN_NS: u64 = 2_000_000;

/// `net.ipv4.tcp_reordering` and `tcp_max_reordering`: the reordering
/// degree a connection starts with, and its ceiling, in packets.
const TCP_REORDERING_PKTS: u64 = 3;
const TCP_MAX_REORDERING_PKTS: u64 = 300;

/// Proportional rate reduction (RFC 6937; Linux `tcp_cwnd_reduction`).
#[derive(Clone, Copy, Debug, Default)]
struct Prr {
    ssthresh_pkts: u64,
    prior_cwnd_pkts: u64,
    delivered: u64,
    out: u64,
    /// The window PRR allows during recovery.
    cwnd_pkts: u64,
}

pub(super) struct Linux {
    prr: Prr,
    rack: Rack,
    /// Highest packet sent when the outstanding tail loss probe left (`tlp_high_seq`).
    tlp_high_seq: Option<u64>,
    tlp_retransmitted: bool,
    /// The controller before the reduction in progress, for undo.
    undo: Option<Box<dyn CongestionControl>>,
    /// The sender's timestamp on the first retransmission of the episode
    /// (Linux `retrans_stamp`, for the Eifel check).
    retrans_stamp: Option<u64>,
    /// F-RTO (RFC 5682, Linux `tcp_process_loss`) is watching this timeout
    /// recovery; `frto_high` is its `high_seq`; `frto_new_only`: this ACK
    /// sends new data instead of retransmissions (step 2b).
    frto: bool,
    frto_high: u64,
    frto_new_only: bool,
    /// `tp->reordering`: how far out of order deliveries have been seen to
    /// arrive, in packets (`tcp_check_sack_reordering`); and whether any
    /// have (`tp->reord_seen`).
    reordering_pkts: u64,
    reord_seen: bool,
    /// The RTT sample of the ACK being processed (see `rtt_sample_ns`).
    rtt_sample_ns: Option<u64>,
}

impl Default for Linux {
    fn default() -> Self {
        Self {
            prr: Prr::default(),
            rack: Rack::default(),
            tlp_high_seq: None,
            tlp_retransmitted: false,
            undo: None,
            retrans_stamp: None,
            frto: false,
            frto_high: 0,
            frto_new_only: false,
            reordering_pkts: TCP_REORDERING_PKTS,
            reord_seen: false,
            rtt_sample_ns: None,
        }
    }
}

impl Linux {
    /// `tp->reordering`, in packets.
    pub(super) fn reordering_pkts(&self) -> u64 {
        self.reordering_pkts
    }

    /// Linux `tcp_undo_cwnd_reduction`: the controller as it was before the
    /// reduction, nothing marked lost, back to Open.
    fn undo_reduction(&mut self, s: &mut SenderCore) {
        if let Some(prior) = self.undo.take() {
            s.cc = prior;
        }
        s.sb.unmark_lost();
        s.recovery = Recovery::Open;
        self.retrans_stamp = None;
        self.frto = false;
        self.frto_new_only = false;
        s.sb.set_orig_limit(0);
        s.counters.undos += 1;
    }

    /// PRR's window for this ACK (Linux 6.x `tcp_cwnd_reduction`).
    fn prr_update(&mut self, s: &SenderCore, delivered: u64, newly_lost: u64, advanced: bool) {
        if delivered == 0 {
            return;
        }
        let in_flight = s.sb.pipe() as i64;
        let p = &mut self.prr;
        let delta = p.ssthresh_pkts as i64 - in_flight;
        p.delivered += delivered;
        let mut sndcnt = if delta < 0 {
            // Proportional part: ceil(ssthresh * prr_delivered / prior_cwnd) - prr_out.
            (p.ssthresh_pkts * p.delivered).div_ceil(p.prior_cwnd_pkts) as i64 - p.out as i64
        } else {
            let mut n = (p.delivered as i64 - p.out as i64).max(delivered as i64);
            if advanced && newly_lost == 0 {
                n += 1;
            }
            n.min(delta)
        };
        sndcnt = sndcnt.max(if p.out > 0 { 0 } else { 1 });
        p.cwnd_pkts = (in_flight + sndcnt).max(0) as u64;
    }

    /// RACK's reordering window (Linux `tcp_rack_reo_wnd`): a quarter of
    /// the minimum RTT, at most the smoothed RTT; until reordering has been
    /// seen, none in recovery or once `reordering` packets are SACKed.
    fn reo_wnd_ns(&self, s: &SenderCore) -> u64 {
        if !self.reord_seen
            && (s.recovery != Recovery::Open || s.sb.sacked_count() >= self.reordering_pkts)
        {
            0
        } else {
            let st = s.rtt.stats();
            (st.min_ns / 4).min(st.smoothed_ns)
        }
    }

    /// Linux `tcp_schedule_loss_probe`: in the Open state with packets out,
    /// the timer waits for a probe timeout (PTO = 2 SRTT, plus the minimum
    /// RTO when a single packet is out, else 2 ms), never past the RTO. Not
    /// in Disorder: Linux probes only in Open and CWR (`icsk_ca_state !=
    /// TCP_CA_Open && != TCP_CA_CWR` returns false); CWR (an ECN
    /// reduction) keeps our state Open, so it probes too.
    fn schedule_probe(
        &self,
        s: &mut SenderCore,
        now_ns: u64,
        out: &mut Outbox,
        rto_from_now: bool,
    ) {
        if s.recovery != Recovery::Open
            || s.sb.disordered()
            || s.sb.outstanding() == 0
            || self.tlp_high_seq.is_some()
        {
            return;
        }
        let srtt = s.rtt.stats().smoothed_ns;
        let pto = if s.rtt.has_sample() {
            let extra = if s.sb.outstanding() == 1 {
                s.cfg.min_rto_ns
            } else {
                LINUX_TIMEOUT_MIN_NS
            };
            2 * srtt + extra
        } else {
            1_000_000_000
        };
        let rto_delta = match (rto_from_now, s.timer_ns) {
            (false, Some(t)) if s.timer == XmitTimer::Rto => t.saturating_sub(now_ns),
            _ => s.rtt.backed_off_rto_ns(s.rto_backoff),
        };
        s.arm(XmitTimer::Probe, now_ns + pto.min(rto_delta), out);
    }

    /// Linux `tcp_send_loss_probe`: one new packet if there is one, else the
    /// highest packet again; then the RTO.
    fn send_loss_probe(&mut self, s: &mut SenderCore, now_ns: u64, out: &mut Outbox) {
        s.timer_ns = None;
        if self.tlp_high_seq.is_none() && out.has_host_room() {
            if s.can_send_new() {
                let seq = s.sb.send_new_at(now_ns);
                s.transmit(self, now_ns, seq, false, out);
                self.tlp_retransmitted = false;
            } else {
                let seq = s.sb.snd_nxt() - 1;
                s.sb.mark_probed(seq, now_ns);
                s.transmit(self, now_ns, seq, false, out);
                self.tlp_retransmitted = true;
            }
            s.counters.loss_probes += 1;
            self.tlp_high_seq = Some(s.sb.snd_nxt());
            if let Some(p) = s.pacer.as_deref_mut() {
                p.end_skb(); // the probe is an skb of its own
            }
        }
        s.arm_rto(now_ns, out);
    }

    /// `tcp_rack_reo_timeout`: mark, recover, retransmit, then the RTO
    /// (`tcp_rearm_rto`), not another reordering timer: what is still in its
    /// window waits for the next ACK's RACK pass.
    fn reorder_timeout(&mut self, s: &mut SenderCore, now_ns: u64, out: &mut Outbox) {
        s.timer_ns = None;
        let (newly, _) = self.detect_losses(s, now_ns, true);
        if newly > 0 && s.recovery == Recovery::Open {
            let pipe = s.sb.pipe();
            s.enter_fast_recovery(self, now_ns, pipe, out);
            self.prr_update(s, 1, newly, false);
        }
        s.send_allowed(self, now_ns, out);
        if s.timer_ns.is_none() || s.timer != XmitTimer::Rto {
            s.arm_rto(now_ns, out);
        }
    }

    /// F-RTO (RFC 5682 with SACK, Linux `tcp_process_loss`).
    fn frto_step(&mut self, s: &mut SenderCore, o: &AckOutcome) {
        let orig_delivered = s.sb.take_orig_delivered();
        if !self.frto {
            return;
        }
        let Recovery::Timeout { point } = s.recovery else {
            self.frto = false;
            return;
        };
        if orig_delivered && self.undo.is_some() {
            // Step 3b: a packet never retransmitted, sent before the
            // timeout, arrived: the timeout was spurious.
            self.undo_reduction(s);
        } else if s.sb.snd_nxt() > self.frto_high {
            // Step 3a: the new data sent in step 2b meets a hole (a SACK or
            // a duplicate ACK): the loss was real.
            if s.sb.sacked_count() > o.sacked_before_pkts || o.advanced_pkts == 0 {
                self.frto = false;
            }
        } else if o.advanced_pkts > 0 && s.sb.snd_una() < point {
            // Step 2b: send new data instead of retransmissions.
            self.frto_high = s.sb.snd_nxt();
            s.sb.set_orig_limit(self.frto_high);
            if s.can_send_new() {
                self.frto_new_only = true;
            } else {
                self.frto = false;
            }
        }
    }

    /// A tail loss probe's outcome (Linux `tcp_process_tlp_ack`).
    fn tlp_outcome(&mut self, s: &mut SenderCore, now_ns: u64, ack: &Packet, o: &AckOutcome) {
        let Some(high) = self.tlp_high_seq else {
            return;
        };
        if ack.seq < high {
            return;
        }
        if !self.tlp_retransmitted {
            self.tlp_high_seq = None;
        } else if ack.seq > high {
            // The probe repaired a loss: reduce at once (CWR, no PRR).
            self.tlp_high_seq = None;
            let loss = s.loss_event(self, now_ns, o.in_flight_before_pkts);
            s.cc.on_congestion_event(&loss);
            s.cc.on_recovery_exit(now_ns);
            // `tcp_init_cwnd_reduction` -> `tcp_ecn_queue_cwr`.
            s.queue_cwr();
        } else if o.advanced_pkts == 0 && o.delivered_pkts == 0 {
            self.tlp_high_seq = None; // a pure duplicate: nothing was lost
        }
    }
}

impl Linux {
    /// `tcp_init_cwnd_reduction` (the controller has just set ssthresh):
    /// PRR starts from the window before the reduction.
    fn init_cwnd_reduction(&mut self, s: &SenderCore, prior_cwnd_pkts: u64) {
        self.tlp_high_seq = None;
        let ssthresh = s.cc.ssthresh();
        self.prr = Prr {
            ssthresh_pkts: if ssthresh.is_finite() {
                ssthresh.max(1.0) as u64
            } else {
                prior_cwnd_pkts
            },
            prior_cwnd_pkts: prior_cwnd_pkts.max(1),
            ..Prr::default()
        };
    }
}

impl LossRecovery for Linux {
    /// Linux `tcp_clean_rtx_queue` skips `tcp_rack_advance` for a
    /// retransmitted packet whose ACK echoes a timestamp older than the
    /// retransmission's (`tcp_skb_spurious_retrans`): the original arrived,
    /// so the retransmission's send time orders nothing. Otherwise, after a
    /// spurious timeout, every packet sent before the retransmission would
    /// look lost.
    ///
    /// `tcp_rack_advance` runs on every packet delivered, in the order the
    /// ACK's processing meets them: the RACK point moves to the last sent,
    /// RACK's RTT is the last one met's. A packet never retransmitted that
    /// arrives below the highest SACKed one before this ACK was reordered
    /// (`tcp_sacktag_one` / `tcp_clean_rtx_queue` ->
    /// `tcp_check_sack_reordering`).
    fn on_delivered(
        &mut self,
        s: &SenderCore,
        now_ns: u64,
        ack: &Packet,
        advanced_pkts: u64,
        prior_highest_sacked: Option<u64>,
    ) {
        let (sacked, cumulative) = s.sb.delivered();
        let min_rtt_ns = s.rtt.stats().min_ns;
        let mut lowest_reordered: Option<u64> = None;
        // `tcp_clean_rtx_queue` / `tcp_sacktag_one`: the oldest packet
        // cumulatively acknowledged (`first_ackt`, none if any of them was
        // retransmitted: FLAG_RETRANS_DATA_ACKED, Karn's rule), else the
        // first newly SACKed one never retransmitted (`first_sackt`).
        let mut seq_rtt_ns: Option<u64> = None;
        let mut retrans_acked = false;
        let mut sack_rtt_ns: Option<u64> = None;
        if sacked.is_empty() && cumulative.iter().all(|&(_, _, rtx)| !rtx) {
            // The common ACK: originals cumulatively acknowledged, which
            // left in sequence order, so the last is the last sent and the
            // last met: one `tcp_rack_advance` leaves RACK as one per packet
            // would. The first is the oldest (`first_ackt`).
            if let (Some(&(first_xmit, first_seq, _)), Some(&(last_xmit, last_seq, _))) =
                (cumulative.first(), cumulative.last())
            {
                self.rack
                    .on_delivered(now_ns, last_seq, last_xmit, false, min_rtt_ns);
                seq_rtt_ns = Some(now_ns.saturating_sub(first_xmit));
                if prior_highest_sacked.is_some_and(|h| first_seq < h) {
                    lowest_reordered = Some(first_seq);
                }
            }
        } else {
            for &(xmit, seq, rtx) in sacked.iter().chain(cumulative) {
                // `tcp_skb_spurious_retrans` reads the timestamp echo.
                let spurious = rtx && s.hot_timestamps && ack.ts_ecr < s.clock(xmit);
                if !spurious {
                    self.rack.on_delivered(now_ns, seq, xmit, rtx, min_rtt_ns);
                }
                if seq < ack.seq {
                    retrans_acked |= rtx;
                    seq_rtt_ns = seq_rtt_ns.or(Some(now_ns.saturating_sub(xmit)));
                } else if !rtx {
                    sack_rtt_ns = sack_rtt_ns.or(Some(now_ns.saturating_sub(xmit)));
                }
                if !rtx && prior_highest_sacked.is_some_and(|h| seq < h) {
                    lowest_reordered = Some(lowest_reordered.map_or(seq, |l| l.min(seq)));
                }
            }
        }
        // `tcp_ack_update_rtt`: with timestamps, the echo of any ACK that
        // acknowledges new data (FLAG_ACKED) or SACKs a packet never
        // retransmitted; without them, the send-time samples alone.
        let from_send_times = if retrans_acked { None } else { seq_rtt_ns }.or(sack_rtt_ns);
        self.rtt_sample_ns = if s.hot_timestamps {
            (advanced_pkts > 0 || sack_rtt_ns.is_some())
                .then(|| s.clock(now_ns).saturating_sub(ack.ts_ecr))
        } else {
            from_send_times
        };
        if let Some(low) = lowest_reordered {
            // `tcp_check_sack_reordering`: the degree is the distance from
            // the highest SACKed packet (after this ACK) down to it.
            let fack =
                s.sb.highest_sacked()
                    .map_or(ack.seq, |h| h + 1)
                    .max(ack.seq);
            let metric = fack.saturating_sub(low);
            if metric > self.reordering_pkts {
                self.reordering_pkts = metric.min(TCP_MAX_REORDERING_PKTS);
            }
            self.reord_seen = true;
        }
    }

    /// Linux `tcp_ack_update_rtt`: only an ACK that delivers something
    /// samples the RTT (see `on_delivered`); a duplicate carries none.
    fn rtt_sample_ns(
        &self,
        _new_ack: bool,
        _delivered_pkts: u64,
        _ts_sample_ns: u64,
    ) -> Option<u64> {
        self.rtt_sample_ns
    }

    /// `tcp_ack_update_rtt` ends the backoff (`icsk_backoff = 0`) only with
    /// a valid RTT sample: with timestamps every advancing ACK has one;
    /// without, an ACK of retransmitted data has none (Karn's rule).
    fn progress_ends_backoff(&self, _in_fast: bool, _timed_acked: bool) -> bool {
        self.rtt_sample_ns.is_some()
    }

    /// `tcp_may_raise_cwnd`: once the reordering degree passes the sysctl's
    /// default, any delivery (FLAG_FORWARD_PROGRESS) may grow the window.
    fn grows_on_sacks(&self) -> bool {
        self.reordering_pkts > TCP_REORDERING_PKTS
    }

    fn grows_on_recovery_exit(&self) -> bool {
        true
    }

    fn on_ack_outcome(&mut self, s: &mut SenderCore, now_ns: u64, ack: &Packet, o: &AckOutcome) {
        // `tcp_try_undo_loss` (Eifel, RFC 3522): the ACK echoes a timestamp
        // older than the first retransmission, so the original arrived and
        // the timeout was spurious.
        if o.advanced_pkts > 0 && matches!(s.recovery, Recovery::Timeout { .. }) {
            if let (Some(stamp), Some(_)) = (self.retrans_stamp, self.undo.as_ref()) {
                // `tcp_packet_delayed` needs the timestamp option.
                if s.hot_timestamps && ack.ts_ecr < stamp {
                    self.undo_reduction(s);
                }
            }
        }
        self.frto_step(s, o);
        self.tlp_outcome(s, now_ns, ack, o);
    }

    fn detect_losses(
        &mut self,
        s: &mut SenderCore,
        now_ns: u64,
        force: bool,
    ) -> (u64, Option<u64>) {
        let reo = self.reo_wnd_ns(s);
        let d = self.rack.detect(&mut s.sb, now_ns, reo, force);
        (d.newly_lost, d.wait_ns)
    }

    /// `tcp_enter_recovery`; PRR sends the retransmission.
    fn start_fast_recovery(
        &mut self,
        s: &mut SenderCore,
        now_ns: u64,
        prior_cwnd_pkts: u64,
        out: &mut Outbox,
    ) {
        // `tcp_enter_recovery`: from CWR (`tcp_in_cwnd_reduction`) the
        // reduction and its PRR go on.
        if !s.ecn_reducing() {
            self.init_cwnd_reduction(s, prior_cwnd_pkts);
        }
        if s.timer != XmitTimer::Rto {
            s.arm_rto(now_ns, out);
        }
    }

    fn update_window(
        &mut self,
        s: &SenderCore,
        delivered_pkts: u64,
        newly_lost_pkts: u64,
        advanced: bool,
    ) {
        self.prr_update(s, delivered_pkts, newly_lost_pkts, advanced);
    }

    /// `tcp_process_loss`: snd_una reached high_seq, Loss -> Open
    /// (`tcp_try_undo_recovery`), which RFC 5681 and ns-2 have no event for;
    /// the undo state ends with the episode, and RACK looks again with the
    /// Open state's reordering window.
    fn on_recovery_exit(&mut self, s: &mut SenderCore, now_ns: u64, was: Recovery) {
        match was {
            Recovery::Fast { .. } => s.cc.on_recovery_exit(now_ns),
            Recovery::Timeout { .. } => s.cc.on_timeout_recovery_exit(now_ns),
            Recovery::Open => {}
        }
        self.retrans_stamp = None;
        self.undo = None;
        self.frto = false;
        s.sb.set_orig_limit(0);
        self.detect_losses(s, now_ns, true);
    }

    fn arm_after_ack(
        &mut self,
        s: &mut SenderCore,
        now_ns: u64,
        reo_wait_ns: Option<u64>,
        advanced: bool,
        out: &mut Outbox,
    ) {
        match reo_wait_ns {
            Some(w) if s.recovery == Recovery::Open || !s.sb.has_lost() => {
                let rto = s.rtt.backed_off_rto_ns(s.rto_backoff);
                s.arm(
                    XmitTimer::Reorder,
                    now_ns + (w + LINUX_TIMEOUT_MIN_NS).min(rto),
                    out,
                );
            }
            _ if advanced => self.schedule_probe(s, now_ns, out, true),
            _ => {}
        }
    }

    /// `tcp_enter_loss`: the controller kept for undo when it reduces;
    /// `tcp_timeout_mark_lost`: packets sent less than RACK's RTT ago are
    /// not lost yet; F-RTO for a timeout from the Open state or a recurring
    /// one, not for the first timeout during fast recovery.
    fn on_timeout(&mut self, s: &mut SenderCore, now_ns: u64) {
        // `tcp_enter_loss`: a timeout in Open or Disorder after many
        // duplicates means the reordering degree was overestimated.
        if s.recovery == Recovery::Open && s.sb.sacked_count() >= TCP_REORDERING_PKTS {
            self.reordering_pkts = self.reordering_pkts.min(TCP_REORDERING_PKTS);
        }
        let reduce = s.timeout_reduces();
        if reduce {
            self.undo = Some(s.cc.snapshot());
        }
        s.sb.timeout_mark_lost(now_ns, self.rack.rtt_ns());
        s.notify_rto(now_ns, reduce, None, false);
        self.tlp_high_seq = None;
        if matches!(s.recovery, Recovery::Open | Recovery::Fast { .. }) {
            self.retrans_stamp = None;
        }
        self.frto = s.recovery == Recovery::Open || s.rto_backoff > 1;
        self.frto_high = s.sb.snd_nxt();
        s.sb.set_orig_limit(if self.frto { self.frto_high } else { 0 });
    }

    fn on_other_timer(
        &mut self,
        s: &mut SenderCore,
        kind: XmitTimer,
        now_ns: u64,
        out: &mut Outbox,
    ) {
        match kind {
            XmitTimer::Probe => self.send_loss_probe(s, now_ns, out),
            XmitTimer::Reorder => self.reorder_timeout(s, now_ns, out),
            XmitTimer::Rto => unreachable!("the RTO is the shared sequence's"),
        }
    }

    fn allowance(&self, s: &SenderCore) -> u64 {
        match s.recovery {
            Recovery::Fast { .. } => self.prr.cwnd_pkts,
            Recovery::Open if s.ecn_reducing() => self.prr.cwnd_pkts,
            Recovery::Open | Recovery::Timeout { .. } => s.cwnd_pkts(),
        }
    }

    /// `tcp_may_raise_cwnd` does not look at ECE: the state does (an ECE
    /// ACK in Open enters CWR first; in Loss it may grow).
    fn ece_ack_grows(&mut self) -> bool {
        true
    }

    /// TCP_CA_CWR is `tcp_in_cwnd_reduction`: `tcp_cong_control` runs
    /// `tcp_cwnd_reduction` (PRR) instead of `tcp_cong_avoid`.
    fn ecn_holds_window(&self) -> bool {
        true
    }

    /// `tcp_enter_cwr` -> `tcp_init_cwnd_reduction`.
    fn on_ecn_reduction(&mut self, s: &mut SenderCore, prior_cwnd_pkts: u64) {
        self.init_cwnd_reduction(s, prior_cwnd_pkts);
    }

    /// CWR -> Open: `tcp_end_cwnd_reduction`, snd_cwnd = ssthresh.
    fn on_ecn_reduction_end(&mut self, s: &mut SenderCore, now_ns: u64) {
        s.cc.on_recovery_exit(now_ns);
    }

    fn new_data_only(&self) -> bool {
        self.frto_new_only
    }

    /// `tcp_write_xmit`: `is_cwnd_limited |= (tcp_packets_in_flight(tp) >=
    /// tcp_snd_cwnd(tp))`, so a flight that fills the window exactly may
    /// grow it although nothing waits to be sent.
    fn full_window_is_limited(&self) -> bool {
        true
    }

    /// `tcp_xmit_recovery`: if no new data went out, F-RTO ends and the
    /// lost packets are retransmitted.
    fn after_send_loop(&mut self, sent_pkts: u64) -> bool {
        if !self.frto_new_only {
            return false;
        }
        self.frto_new_only = false;
        if sent_pkts == 0 {
            self.frto = false;
        }
        sent_pkts == 0
    }

    fn after_sending(&mut self, s: &mut SenderCore, now_ns: u64, sent_pkts: u64, out: &mut Outbox) {
        if sent_pkts > 0 && s.timer == XmitTimer::Rto {
            self.schedule_probe(s, now_ns, out, false);
        }
    }

    fn on_transmit(&mut self, now_ns: u64, seq: u64, retransmit: bool, ts_val: u64, fast: bool) {
        if retransmit {
            self.retrans_stamp.get_or_insert(ts_val);
        }
        if fast {
            self.prr.out += 1;
        }
        self.rack.on_transmit(seq, now_ns);
    }
}
