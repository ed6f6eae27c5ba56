//! What every profile's sender shares: the scoreboard, the RTT estimator,
//! the controller, the one transmission timer, the send loop and the ACK
//! and timeout sequences. The steps where the profiles differ are the hooks
//! of [`LossRecovery`], which `rfc6675.rs`, `ns2.rs` and `linux.rs`
//! implement; the sequences here are generic over it, so each profile's
//! sender is compiled on its own (no branch on the profile per packet).

use std::sync::Arc;

use longfat_cc::{AckEvent, AckTimestamps, CongestionControl, LossEvent, RtoEvent};

use crate::event::TimerKind;
use crate::outbox::Outbox;
use crate::packet::{Dir, Ecn, Packet, PacketKind};
use crate::tcp::pacing::Pacer;
use crate::tcp::rate::RateEstimator;
use crate::tcp::rtt::RttEstimator;
use crate::tcp::scoreboard::Scoreboard;
use crate::tcp::{Profile, TcpConfig};

/// Loss-recovery state (Linux's Open / Recovery / Loss).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recovery {
    Open,
    /// Fast recovery until the cumulative ACK reaches `point` (RFC 6675 RecoveryPoint).
    Fast {
        point: u64,
    },
    /// After an RTO, until everything outstanding at the timeout is acknowledged.
    Timeout {
        point: u64,
    },
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SenderCounters {
    pub sent_pkts: u64,
    pub sent_bytes: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub fast_recoveries: u64,
    pub acks_received: u64,
    /// Tail loss probes sent (`linux`).
    pub loss_probes: u64,
    /// Reductions undone as spurious (`linux`, timestamps: Eifel).
    pub undos: u64,
    /// ACKs that carried ECE (`tcp.ecn`).
    pub ece_acks: u64,
    /// ECN reductions: congestion responses to ECE (Linux's CWR episodes).
    pub ecn_reductions: u64,
}

/// The sender's RFC 3168 state (`TcpConfig::ecn`).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct EcnSender {
    /// The next data packet that may carry CWR does (Linux
    /// `TCP_ECN_QUEUE_CWR`, ns-2 `cong_action_`): set by every reduction.
    pub(super) queue_cwr: bool,
    /// The ECN reduction in force (Linux TCP_CA_CWR's `high_seq`, ns-2's
    /// `recover_` after `ecn()`): the first packet number sent after it. It
    /// ends once the cumulative ACK passes that packet, which carried CWR
    /// (Linux `tcp_fastretrans_alert`: "CWR is to be held something
    /// *above* high_seq is ACKed for CWR bit to reach receiver").
    pub(super) point: Option<u64>,
    /// Packets below this number have left once: a packet at or above it
    /// is new data (Linux `tcp_ecn_send`: `!before(seq, snd_nxt)`).
    sent_upto: u64,
}

/// What the one transmission timer is waiting for (Linux keeps one
/// `icsk_pending` slot for all three).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum XmitTimer {
    Rto,
    /// Tail loss probe (RFC 8985 §7).
    Probe,
    /// RACK's reordering window (RFC 8985 §6.3).
    Reorder,
}

/// How an ACK's SACK blocks are read (see [`LossRecovery::read_sacks`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct SackReading {
    /// The blocks go to the scoreboard.
    pub(super) read: bool,
    /// A duplicate ACK the profile counts although the scoreboard did not
    /// change (ns-2's timeout recovery).
    pub(super) dupack: bool,
}

/// What one ACK did, for the hooks that react to its outcome.
#[derive(Clone, Copy, Debug)]
pub(super) struct AckOutcome {
    /// Packets the cumulative ACK moved past.
    pub(super) advanced_pkts: u64,
    /// Packets newly delivered (SACKed or cumulatively acknowledged).
    pub(super) delivered_pkts: u64,
    /// SACKed packets before this ACK.
    pub(super) sacked_before_pkts: u64,
    /// Pipe before this ACK.
    pub(super) in_flight_before_pkts: u64,
    /// The RTT estimator took this ACK's sample.
    pub(super) rtt_updated: bool,
}

/// The loss-recovery and timer behaviour of one transport profile: the
/// steps of the shared sequences in [`SenderCore`] where RFC 6675, ns-2
/// Sack1 and Linux differ. A hook a profile does not need keeps its default
/// body, which is RFC 6675's behaviour (or nothing).
pub(super) trait LossRecovery {
    /// The RTT sample the estimator takes from this ACK, if any: by
    /// default `ts_sample_ns`, the ACK's timestamp echo; `new_ack`: it is a
    /// new ACK in ns-2's sense (`newack()`); `delivered_pkts`: packets it
    /// newly acknowledged or SACKed.
    fn rtt_sample_ns(
        &self,
        _new_ack: bool,
        _delivered_pkts: u64,
        ts_sample_ns: u64,
    ) -> Option<u64> {
        Some(ts_sample_ns)
    }

    /// After the RTT sample: whether this ACK ended a timed segment whose
    /// acknowledgement also ends the timeout backoff (ns-2).
    fn on_timed_ack(
        &mut self,
        _s: &mut SenderCore,
        _now_ns: u64,
        _ack_seq: u64,
        _new_ack: bool,
    ) -> bool {
        false
    }

    /// Whether the ACK's SACK blocks are read, before they are.
    fn read_sacks(
        &mut self,
        _s: &mut SenderCore,
        _ack: &Packet,
        _in_fast: bool,
        _una_before: u64,
    ) -> SackReading {
        SackReading {
            read: true,
            dupack: false,
        }
    }

    /// Every ACK, after the scoreboard took it (`s.sb.delivered()`:
    /// the packets it delivered, SACKed then cumulatively acknowledged, as
    /// (send time, number, ever retransmitted); empty unless the scoreboard
    /// keeps send times): how far the cumulative point moved, and the
    /// highest packet SACKed before this ACK.
    fn on_delivered(
        &mut self,
        _s: &SenderCore,
        _now_ns: u64,
        _ack: &Packet,
        _advanced_pkts: u64,
        _prior_highest_sacked: Option<u64>,
    ) {
    }

    /// Whether progress of the cumulative ACK ends the timeout backoff.
    fn progress_ends_backoff(&self, _in_fast: bool, _timed_acked: bool) -> bool {
        true
    }

    /// The duplicate-ACK counter: reset by `advanced`, else counts `dupack`.
    fn count_dupacks(&mut self, _advanced: bool, _dupack: bool) {}

    /// After the scoreboard took the ACK, before loss detection (undo,
    /// F-RTO, the tail loss probe's outcome).
    fn on_ack_outcome(
        &mut self,
        _s: &mut SenderCore,
        _now_ns: u64,
        _ack: &Packet,
        _o: &AckOutcome,
    ) {
    }

    /// Marks losses by the profile's rule; returns how many were newly
    /// marked and, for RACK, when to look again.
    fn detect_losses(&mut self, s: &mut SenderCore, now_ns: u64, force: bool)
        -> (u64, Option<u64>);

    /// The congestion event of a fast recovery starting now: the window is
    /// reduced, and the first retransmission goes out as the profile says.
    fn start_fast_recovery(
        &mut self,
        s: &mut SenderCore,
        now_ns: u64,
        prior_cwnd_pkts: u64,
        out: &mut Outbox,
    );

    /// Whether the send loop runs on the ACK that started fast recovery.
    fn sends_on_entering(&self) -> bool {
        true
    }

    /// An ACK during fast recovery that neither started nor ended it.
    fn on_ack_in_recovery(&mut self, _advanced: bool) {}

    /// The window for this ACK while in fast recovery (PRR).
    fn update_window(
        &mut self,
        _s: &SenderCore,
        _delivered_pkts: u64,
        _newly_lost_pkts: u64,
        _advanced: bool,
    ) {
    }

    /// Whether an ACK that only SACKs new data may grow the window (Linux
    /// `tcp_may_raise_cwnd` once the reordering degree passes its default);
    /// RFC 5681 grows on cumulative progress only.
    fn grows_on_sacks(&self) -> bool {
        false
    }

    /// Whether the ACK that ends a recovery grows the window after the exit
    /// (Linux: `tcp_fastretrans_alert` returns to Open before
    /// `tcp_cong_control` runs) rather than counting as one in recovery.
    fn grows_on_recovery_exit(&self) -> bool {
        false
    }

    /// The cumulative ACK passed the recovery point of `was`; the state is
    /// already Open.
    fn on_recovery_exit(&mut self, s: &mut SenderCore, now_ns: u64, was: Recovery) {
        if let Recovery::Fast { .. } = was {
            s.cc.on_recovery_exit(now_ns);
        }
    }

    /// Timers to arm once the ACK has been processed (RACK, tail loss probe).
    fn arm_after_ack(
        &mut self,
        _s: &mut SenderCore,
        _now_ns: u64,
        _reo_wait_ns: Option<u64>,
        _advanced: bool,
        _out: &mut Outbox,
    ) {
    }

    /// The retransmission timer expired (the backoff and the counter are
    /// already up): mark losses and call the controller's `on_rto`.
    fn on_timeout(&mut self, s: &mut SenderCore, now_ns: u64);

    /// The transmission timer fired for something other than the RTO.
    fn on_other_timer(
        &mut self,
        _s: &mut SenderCore,
        _kind: XmitTimer,
        _now_ns: u64,
        _out: &mut Outbox,
    ) {
    }

    /// How many packets the sender may have in flight now (the window).
    fn allowance(&self, s: &SenderCore) -> u64 {
        s.cwnd_pkts()
    }

    /// What counts against the window (RFC 6675 pipe).
    fn in_use(&self, s: &SenderCore) -> u64 {
        s.sb.pipe()
    }

    /// The send loop sends new data only, no retransmission (F-RTO).
    fn new_data_only(&self) -> bool {
        false
    }

    /// Whether a window full after the send loop counts as window-limited
    /// even with nothing left to send (Linux `tcp_write_xmit`:
    /// `is_cwnd_limited |= tcp_packets_in_flight >= snd_cwnd`); RFC 7661
    /// counts only a window that held data back.
    fn full_window_is_limited(&self) -> bool {
        false
    }

    /// After the send loop, which sent `sent_pkts`: true when it must run
    /// again with retransmissions (F-RTO gave up).
    fn after_send_loop(&mut self, _sent_pkts: u64) -> bool {
        false
    }

    /// After the send loop sent `sent_pkts` (the tail loss probe's timer).
    fn after_sending(
        &mut self,
        _s: &mut SenderCore,
        _now_ns: u64,
        _sent_pkts: u64,
        _out: &mut Outbox,
    ) {
    }

    /// ECT(0) and CWR go on retransmissions too (ns-2 `output()` sets ECT
    /// on every packet, and CWR with `SetCWRonRetransmit_`, true by
    /// default); RFC 3168 §6.1.5 and Linux `tcp_ecn_send`: new data only.
    fn ecn_on_retransmissions(&self) -> bool {
        false
    }

    /// Whether the profile answers ECE in this recovery state (RFC 3168
    /// §6.1.2: once per window of data, so not during a loss recovery;
    /// Linux `tcp_try_to_open` -> `tcp_enter_cwr`: Open and Disorder only).
    fn ecn_reacts_in(&self, recovery: Recovery) -> bool {
        recovery == Recovery::Open
    }

    /// ECE is answered before the ACK's losses are looked for (ns-2's
    /// `recv` calls `ecn()` first); otherwise after, and an ACK that starts
    /// a fast recovery is that recovery's only reduction (Linux
    /// `tcp_fastretrans_alert`: `tcp_enter_recovery` before
    /// `tcp_try_to_open`).
    fn ecn_before_losses(&self) -> bool {
        false
    }

    /// An ACK with ECE may grow the window (RFC 3168 §6.1.2: "SHOULD NOT
    /// increase the congestion window in response to the receipt of an
    /// ECN-Echo ACK packet"). Called once per ECE ACK.
    fn ece_ack_grows(&mut self) -> bool {
        false
    }

    /// The window stays reduced by the profile's recovery machinery for the
    /// whole ECN reduction (Linux TCP_CA_CWR: PRR, no growth), instead of
    /// only at the reduction itself.
    fn ecn_holds_window(&self) -> bool {
        false
    }

    /// An ECN reduction has just reduced the controller (`prior_cwnd_pkts`:
    /// the window before it).
    fn on_ecn_reduction(&mut self, _s: &mut SenderCore, _prior_cwnd_pkts: u64) {}

    /// The cumulative ACK passed the ECN reduction's point.
    fn on_ecn_reduction_end(&mut self, _s: &mut SenderCore, _now_ns: u64) {}

    /// Packet `seq` leaves with timestamp `ts_val`; `fast`: in fast recovery.
    fn on_transmit(
        &mut self,
        _now_ns: u64,
        _seq: u64,
        _retransmit: bool,
        _ts_val: u64,
        _fast: bool,
    ) {
    }

    /// The retransmission forced out regardless of the window just left in
    /// fast recovery.
    fn on_forced_retransmit(&mut self) {}

    /// The controller's window cap and halving rule for a reduction
    /// (ns-2's `slowdown()`); none by default.
    fn reduction_rules(&self, _s: &SenderCore) -> (Option<f64>, bool) {
        (None, false)
    }
}

/// The state every profile's sender has.
pub struct SenderCore {
    pub(super) flow: u32,
    /// Shared by every flow of a scenario entry (one allocation, not 128
    /// bytes per sender). The settings the per-packet path reads are
    /// copied out of it below (`hot_*`), so they cost one load, not two.
    pub(super) cfg: Arc<TcpConfig>,
    /// `cfg.sender_clock_offset_ns`.
    hot_clock_offset_ns: u64,
    /// `cfg.max_burst_pkts` (u64::MAX: no limit).
    hot_max_burst_pkts: u64,
    hot_packet_size_bytes: u32,
    /// `cfg.payload_bytes()`.
    hot_payload_bytes: u32,
    hot_class: u8,
    pub(super) hot_profile: Profile,
    pub(super) hot_ecn: bool,
    pub(super) hot_timestamps: bool,
    hot_default_host: bool,
    pub(super) cc: Box<dyn CongestionControl>,
    pub(super) sb: Scoreboard,
    pub(super) rtt: RttEstimator,
    pub(super) recovery: Recovery,
    pub(super) rto_backoff: u32,
    /// When the transmission timer fires, and for what.
    pub(super) timer_ns: Option<u64>,
    pub(super) timer: XmitTimer,
    /// The application has data to send (between start and stop).
    app_active: bool,
    /// Fixed-size transfer: packets to send in all (None: bulk).
    pub(super) total_pkts: Option<u64>,
    /// New packets are sent only below this number: `total_pkts`, or the
    /// data a PLT connection's packet manager has for this module
    /// (u64::MAX: no limit).
    send_limit: u64,
    pub completed_at_ns: Option<u64>,
    pub started_at_ns: Option<u64>,
    /// The retransmission that starts fast recovery (sent regardless of
    /// pipe, RFC 6675 step 4.2) is waiting for room in the host queue.
    forced_retransmit_pending: bool,
    /// RFC 7661 / Linux `tcp_cwnd_validate`: the window limited the sender
    /// during the current round (sticky until `cwnd_usage_seq` is acked),
    /// and the most packets outstanding then.
    cwnd_limited: bool,
    max_packets_out: u64,
    cwnd_usage_seq: u64,
    /// RFC 7323 TS.Recent: the TSval of the latest ACK, echoed in the TSecr
    /// of data (a Linux receiver measures its RTT from it).
    ts_recent: u64,
    /// The receiver's advertised window (`set_peer_window`), and the most
    /// the send buffer lets be in flight (`TcpConfig::default_host`).
    pub(super) peer_window_pkts: u64,
    sndbuf_pkts: u64,
    /// ECN (`TcpConfig::ecn`; untouched when off).
    pub(super) ecn: EcnSender,
    pub counters: SenderCounters,
    /// Delivery-rate estimation (`tcp::rate`), only for a controller that
    /// reads its samples (`CongestionControl::wants_rate_samples`).
    pub(super) rate: Option<Box<RateEstimator>>,
    /// The RTT of the rate sample in progress (`rs->rtt_us`).
    rate_rtt_ns: u64,
    /// Pacing (`tcp::pacing`), only for a flow that paces (`tcp.pacing`, or
    /// a controller that sets a rate).
    pub(super) pacer: Option<Box<Pacer>>,
    /// The controller sets the window in recovery (`controls_recovery_window`,
    /// asked once).
    pub(super) cc_controls_recovery: bool,
    /// The flow uses something beyond plain TCP: ECN, rate samples, pacing
    /// or a controller that sets the recovery window (fixed at `new`). The
    /// ACK and send paths branch on it once per event into a version
    /// compiled with (`X = true`) or without (`X = false`) those features'
    /// code, so a flow without them pays nothing per packet for them.
    extras: bool,
}

impl SenderCore {
    pub(super) fn new(
        flow: u32,
        cfg: Arc<TcpConfig>,
        mut cc: Box<dyn CongestionControl>,
        total_pkts: Option<u64>,
        sb: Scoreboard,
        rtt: RttEstimator,
    ) -> Self {
        let sndbuf_pkts = crate::tcp::receiver::sndbuf_limit_pkts(&cfg);
        let rate = cc
            .wants_rate_samples()
            .then(|| Box::new(RateEstimator::default()));
        let sb = if rate.is_some() { sb.with_rates() } else { sb };
        let mss = cfg.payload_bytes().min(u64::from(u32::MAX)) as u32;
        let paced = cfg.pacing || cc.pacing_rate_bytes_per_sec(mss).is_some();
        let pacer = paced.then(|| Box::new(Pacer::new(cfg.profile == crate::tcp::Profile::Linux)));
        if paced {
            cc.set_paced(true);
        }
        let cc_controls_recovery = cc.controls_recovery_window();
        let extras = cfg.ecn || rate.is_some() || pacer.is_some() || cc_controls_recovery;
        Self {
            flow,
            hot_clock_offset_ns: cfg.sender_clock_offset_ns,
            hot_max_burst_pkts: cfg.max_burst_pkts.map_or(u64::MAX, u64::from),
            hot_packet_size_bytes: cfg.packet_size_bytes,
            hot_payload_bytes: cfg.packet_size_bytes - cfg.header_bytes,
            hot_class: cfg.class,
            hot_profile: cfg.profile,
            hot_ecn: cfg.ecn,
            hot_timestamps: cfg.timestamps,
            hot_default_host: cfg.default_host,
            cfg,
            cc,
            sb,
            rtt,
            recovery: Recovery::Open,
            rto_backoff: 0,
            timer_ns: None,
            timer: XmitTimer::Rto,
            app_active: false,
            total_pkts,
            send_limit: total_pkts.unwrap_or(u64::MAX),
            completed_at_ns: None,
            started_at_ns: None,
            forced_retransmit_pending: false,
            cwnd_limited: false,
            max_packets_out: 0,
            cwnd_usage_seq: 0,
            ts_recent: 0,
            peer_window_pkts: u64::MAX,
            sndbuf_pkts,
            ecn: EcnSender::default(),
            counters: SenderCounters::default(),
            rate,
            rate_rtt_ns: 0,
            pacer,
            cc_controls_recovery,
            extras,
        }
    }

    /// `TcpConfig::default_host`, read on every ACK.
    #[inline(always)]
    pub fn default_host(&self) -> bool {
        self.hot_default_host
    }

    pub(super) fn clock(&self, now_ns: u64) -> u64 {
        now_ns + self.hot_clock_offset_ns
    }

    pub(super) fn start<R: LossRecovery>(&mut self, r: &mut R, now_ns: u64, out: &mut Outbox) {
        if self.rate.is_some() {
            self.check_app_limited();
        }
        self.app_active = true;
        self.started_at_ns = Some(now_ns);
        self.send_allowed(r, now_ns, out);
    }

    pub(super) fn stop(&mut self) {
        self.app_active = false;
    }

    pub(super) fn cwnd_pkts(&self) -> u64 {
        /// 2^63: below it the window converts through i64, one signed
        /// conversion instruction (x86-64 has no unsigned one, so `as u64`
        /// tests and adjusts around two of them on every ACK).
        const TWO_63: f64 = 9_223_372_036_854_775_808.0;
        let c = self.cc.cwnd();
        // Truncation is floor for c >= 1, without the libm call
        // (baseline x86-64 has no rounding instruction).
        if (1.0..TWO_63).contains(&c) {
            c as i64 as u64
        } else if c >= TWO_63 && c.is_finite() {
            c as u64
        } else {
            1 // below 1, NaN or infinite
        }
    }

    fn has_new_data(&self) -> bool {
        self.app_active && self.sb.snd_nxt() < self.send_limit
    }

    pub(super) fn set_send_limit(&mut self, limit: u64) {
        if self.rate.is_some() && limit > self.send_limit {
            // The application writes more.
            self.check_app_limited();
        }
        self.send_limit = limit.min(self.total_pkts.unwrap_or(u64::MAX));
    }

    pub(super) fn can_send_new(&self) -> bool {
        self.has_new_data()
            && self.sb.outstanding()
                < self
                    .cfg
                    .rwnd_pkts
                    .min(self.peer_window_pkts)
                    .min(self.sndbuf_pkts)
    }

    pub(super) fn transmit<R: LossRecovery>(
        &mut self,
        r: &mut R,
        now_ns: u64,
        seq: u64,
        retransmit: bool,
        out: &mut Outbox,
    ) {
        if self.extras {
            self.transmit_x::<R, true>(r, now_ns, seq, retransmit, out);
        } else {
            self.transmit_x::<R, false>(r, now_ns, seq, retransmit, out);
        }
    }

    /// `transmit` with the optional features' code (`X`, see `extras`).
    /// Inlined into the send loop, which calls it for every packet: its
    /// call cost about 26 instructions a packet (callgrind, issue 33).
    #[inline(always)]
    fn transmit_x<R: LossRecovery, const X: bool>(
        &mut self,
        r: &mut R,
        now_ns: u64,
        seq: u64,
        retransmit: bool,
        out: &mut Outbox,
    ) {
        let size = self.hot_packet_size_bytes;
        let mut p = Packet::new(self.flow, PacketKind::Data, Dir::Forward, size);
        p.seq = seq;
        p.class = self.hot_class;
        p.ts_val = self.clock(now_ns);
        p.ts_ecr = self.ts_recent;
        if self.sb.pipe() == 1 {
            // Nothing was in flight before this packet (it is counted
            // already): Linux `tcp_event_data_sent`, from
            // `__tcp_transmit_skb` for new data and retransmissions alike,
            // raises CA_EVENT_TX_START (`tcp_packets_in_flight(tp) == 0`),
            // with `tp->app_limited` as the rate estimator holds it; under
            // every profile.
            self.restart_from_idle(now_ns);
        }
        p.tag = self.cc.on_send(now_ns, seq, size, retransmit);
        if X && self.hot_ecn {
            self.mark_ecn(r, &mut p);
        }
        self.counters.sent_pkts += 1;
        self.counters.sent_bytes += u64::from(size);
        if retransmit {
            self.counters.retransmits += 1;
        }
        // Linux `tcp_write_xmit`: `prr_out` counts in CWR as in Recovery.
        let fast = matches!(self.recovery, Recovery::Fast { .. })
            || (X && r.ecn_holds_window() && self.ecn_reducing());
        r.on_transmit(now_ns, seq, retransmit, p.ts_val, fast);
        out.packets.push(p);
        if X {
            self.transmit_extras(now_ns, seq, retransmit);
        }
        // RFC 6298 §5.1 arms an idle timer; Linux also re-arms it when it
        // retransmits the head of the queue (`tcp_xmit_retransmit_queue`), so a
        // fast retransmission gets a whole RTO to come back.
        if self.timer_ns.is_none() || (retransmit && seq == self.sb.snd_una()) {
            self.arm(
                XmitTimer::Rto,
                now_ns + self.rtt.backed_off_rto_ns(self.rto_backoff),
                out,
            );
        }
    }

    /// What a packet sent means to the rate estimator and the pacer.
    #[inline]
    fn transmit_extras(&mut self, now_ns: u64, seq: u64, retransmit: bool) {
        if let Some(rate) = self.rate.as_deref_mut() {
            // `tcp_rate_skb_sent`: a new packet with nothing else out
            // (`!tp->packets_out`) opens a new sampling window.
            let nothing_out =
                !retransmit && self.sb.outstanding() == 1 && !self.sb.is_ever_retransmitted(seq);
            let tx = rate.on_sent(now_ns, nothing_out);
            self.sb.set_tx_rate(seq, tx);
        }
        if let Some(pacer) = self.pacer.as_deref_mut() {
            pacer.on_sent(now_ns, u64::from(self.hot_payload_bytes));
        }
    }

    /// CA_EVENT_TX_START: the controller's `on_tx_start`; a rate it sets
    /// in answer (BBR paces at 1.0 x bw after idle in PROBE_BW) applies to
    /// this packet's departure already, as Linux's EDT for the skb is
    /// computed after the event (`tcp_update_skb_after_send`).
    #[cold]
    fn restart_from_idle(&mut self, now_ns: u64) {
        let app_limited = self.rate.as_deref().is_some_and(|r| r.app_limited());
        self.cc.on_tx_start(now_ns, app_limited);
        if let Some(pacer) = self.pacer.as_deref_mut() {
            let mss = u64::from(self.hot_payload_bytes);
            if let Some(rate) = self
                .cc
                .pacing_rate_bytes_per_sec(mss.min(u64::from(u32::MAX)) as u32)
            {
                pacer.set_rate(rate, mss);
            }
        }
    }

    /// RFC 3168 §6.1.1/§6.1.5, Linux `tcp_ecn_send`: new data is ECT(0)
    /// and the first new data packet after a reduction carries CWR;
    /// retransmissions and probes of old data are Not-ECT (unless the
    /// profile marks them: ns-2).
    #[inline]
    fn mark_ecn<R: LossRecovery>(&mut self, r: &R, p: &mut Packet) {
        let new = p.seq >= self.ecn.sent_upto;
        if new {
            self.ecn.sent_upto = p.seq + 1;
        }
        if new || r.ecn_on_retransmissions() {
            p.set_ecn(Ecn::Ect0);
            if self.ecn.queue_cwr {
                self.ecn.queue_cwr = false;
                p.set_cwr(true);
            }
        }
    }

    /// A reduction of any kind: the next new data packet carries CWR
    /// (RFC 3168 §6.1.2: "for any reason", a timeout, a fast retransmit or
    /// ECN; Linux `tcp_ecn_queue_cwr` in `tcp_init_cwnd_reduction` and
    /// `tcp_enter_loss`).
    pub(super) fn queue_cwr(&mut self) {
        self.ecn.queue_cwr = self.hot_ecn;
    }

    /// An ECN reduction is in force and has not reached its point: a
    /// timeout then keeps ssthresh (Linux `tcp_enter_loss`: only if
    /// `!after(high_seq, snd_una)`; ns-2 `timeout()`: "if we are in
    /// recovery from a recent ECN, don't cut down ssthresh_"; RFC 3168
    /// §6.1.2: not again within the window).
    pub(super) fn in_ecn_window(&self) -> bool {
        self.ecn.point.is_some_and(|p| self.sb.snd_una() < p)
    }

    /// An ECN reduction is in force (Linux TCP_CA_CWR).
    pub(super) fn ecn_reducing(&self) -> bool {
        self.ecn.point.is_some()
    }

    /// The congestion response to an ACK with ECE (RFC 3168 §6.1.2; Linux
    /// `tcp_enter_cwr`, ns-2 `ecn()`): at most once per window of data
    /// (not while an ECN reduction is in force, nor in a recovery the
    /// profile does not answer ECE in), as the controller's response to a
    /// loss (`LossEvent::ecn`, with `abe` under RFC 8511), no
    /// retransmission, CWR on the next new data packet.
    fn ecn_respond<R: LossRecovery>(&mut self, r: &mut R, now_ns: u64, in_flight: u64) {
        if self.ecn.point.is_some() || !r.ecn_reacts_in(self.recovery) {
            return;
        }
        self.ecn.point = Some(self.sb.snd_nxt());
        self.counters.ecn_reductions += 1;
        let prior_cwnd = self.cwnd_pkts();
        let mut ev = self.loss_event(r, now_ns, in_flight);
        ev.ecn = true;
        ev.abe = self.cfg.abe;
        self.cc.on_congestion_event(&ev);
        self.queue_cwr();
        r.on_ecn_reduction(self, prior_cwnd);
    }

    pub(super) fn arm(&mut self, kind: XmitTimer, at_ns: u64, out: &mut Outbox) {
        self.timer = kind;
        self.timer_ns = Some(at_ns);
        out.timers.push((TimerKind::Rto, at_ns));
    }

    pub(super) fn arm_rto(&mut self, now_ns: u64, out: &mut Outbox) {
        let d = now_ns + self.rtt.backed_off_rto_ns(self.rto_backoff);
        self.arm(XmitTimer::Rto, d, out);
    }

    /// Retransmits the first lost packet regardless of pipe, as soon as the
    /// host queue takes it.
    pub(super) fn send_forced_retransmit<R: LossRecovery>(
        &mut self,
        r: &mut R,
        now_ns: u64,
        out: &mut Outbox,
    ) {
        if !out.has_host_room() {
            self.forced_retransmit_pending = true;
            out.host_blocked = true;
            return;
        }
        self.forced_retransmit_pending = false;
        if let Some(seq) = self.sb.next_retransmit() {
            self.sb.mark_retransmitted_at(seq, now_ns);
            self.transmit(r, now_ns, seq, true, out);
            if let Some(p) = self.pacer.as_deref_mut() {
                p.end_skb(); // leaves unpaced, as an skb of its own
            }
            if matches!(self.recovery, Recovery::Fast { .. }) {
                r.on_forced_retransmit();
            }
        }
    }

    /// Sends while the profile's window allows: lost packets first, then new
    /// data; never more than the host queue takes (`Outbox::host_room_pkts`)
    /// or `max_burst` at once.
    pub(super) fn send_allowed<R: LossRecovery>(
        &mut self,
        r: &mut R,
        now_ns: u64,
        out: &mut Outbox,
    ) {
        if self.extras {
            self.send_allowed_x::<R, true>(r, now_ns, out);
        } else {
            self.send_allowed_x::<R, false>(r, now_ns, out);
        }
    }

    /// `send_allowed` with the optional features' code (`X`, see `extras`).
    /// Inlined into its callers (every ACK runs it): its call cost about
    /// 25 instructions an ACK (callgrind, issue 33).
    #[inline(always)]
    fn send_allowed_x<R: LossRecovery, const X: bool>(
        &mut self,
        r: &mut R,
        now_ns: u64,
        out: &mut Outbox,
    ) {
        if self.forced_retransmit_pending {
            self.send_forced_retransmit(r, now_ns, out);
        }
        let burst = self.hot_max_burst_pkts;
        // Without `extras` the controller leaves the window to the profile.
        let allowed = if X { self.window(r) } else { r.allowance(self) };
        if X && self.pacer.is_some() {
            self.update_pacing_rate(allowed);
        }
        let mut sent = 0u64;
        let mut window_limited = false;
        loop {
            if r.in_use(self) >= allowed {
                window_limited = self.sb.next_retransmit().is_some() || self.can_send_new();
                break;
            }
            if sent >= burst {
                break;
            }
            if !out.has_host_room() {
                if self.sb.next_retransmit().is_some() || self.can_send_new() {
                    out.host_blocked = true;
                }
                break;
            }
            if let Some(t) = self
                .pacer
                .as_deref()
                .filter(|_| X)
                .and_then(|p| p.wait_until(now_ns))
            {
                // `tcp_pacing_check`: the next departure is not due yet.
                if self.sb.next_retransmit().is_some() || self.can_send_new() {
                    self.arm_pacing(t, out);
                }
                break;
            }
            let rtx = if r.new_data_only() {
                None
            } else {
                self.sb.next_retransmit()
            };
            if let Some(seq) = rtx {
                self.sb.mark_retransmitted_at(seq, now_ns);
                self.transmit_x::<R, X>(r, now_ns, seq, true, out);
            } else if self.can_send_new() {
                let seq = self.sb.send_new_at(now_ns);
                self.transmit_x::<R, X>(r, now_ns, seq, false, out);
            } else {
                break;
            }
            sent += 1;
        }
        if let Some(p) = self.pacer.as_deref_mut().filter(|_| X) {
            // The skb ends where the loop stopped (Linux sizes it to the
            // window's quota and the data at hand).
            p.end_skb();
        }
        if r.after_send_loop(sent) {
            self.send_allowed(r, now_ns, out);
            return;
        }
        if r.full_window_is_limited() && r.in_use(self) >= allowed {
            window_limited = true;
        }
        if sent > 0 || window_limited {
            self.validate_cwnd(window_limited);
        }
        r.after_sending(self, now_ns, sent, out);
    }

    /// The window in force: the profile's (PRR in `linux` fast recovery,
    /// ns-2's limited transmit), or the controller's own cwnd in fast
    /// recovery and after a timeout when it controls the window there
    /// (Linux `tcp_cong_control` with a `cong_control` module: no PRR).
    #[inline]
    pub(super) fn window<R: LossRecovery>(&self, r: &R) -> u64 {
        if self.cc_controls_recovery && self.recovery != Recovery::Open {
            self.cwnd_pkts()
        } else {
            r.allowance(self)
        }
    }

    /// `tcp_rate_check_app_limited`, which Linux runs when the application
    /// writes (`tcp_sendmsg_locked`), before its data joins the queue:
    /// less than a packet was left to send, the window was not full
    /// (`tcp_packets_in_flight < snd_cwnd`), and every lost packet was
    /// retransmitted (`lost_out <= retrans_out`): the flight now is an
    /// application-limited bubble, and so is every connection's first
    /// write. (Linux also asks that nothing wait in the host's qdisc or
    /// NIC; the simulator's host queue is the access link, which this does
    /// not look at.)
    fn check_app_limited(&mut self) {
        let pipe = self.sb.pipe();
        let lost_waiting = self.sb.lost_count() > self.sb.retransmitted_count();
        if !self.has_new_data() && pipe < self.cwnd_pkts() && !lost_waiting {
            if let Some(rate) = self.rate.as_deref_mut() {
                rate.mark_app_limited(pipe);
            }
        }
    }

    /// The pacing rate for this send: the controller's, else Linux's
    /// `tcp_update_pacing_rate` with `tcp.pacing`, else none.
    fn update_pacing_rate(&mut self, window_pkts: u64) {
        let mss = u64::from(self.hot_payload_bytes);
        let rate = match self
            .cc
            .pacing_rate_bytes_per_sec(mss.min(u64::from(u32::MAX)) as u32)
        {
            Some(r) => r,
            None if self.cfg.pacing => {
                let ssthresh = self.cc.ssthresh();
                let ssthresh_pkts = if ssthresh.is_finite() {
                    ssthresh.max(0.0) as u64
                } else {
                    u64::MAX
                };
                let ratio = if window_pkts < ssthresh_pkts / 2 {
                    self.cfg.pacing_ss_ratio_pct
                } else {
                    self.cfg.pacing_ca_ratio_pct
                };
                Pacer::linux_rate(
                    mss,
                    window_pkts,
                    self.sb.outstanding(),
                    self.rtt.stats().smoothed_ns,
                    ratio,
                )
            }
            None => u64::MAX,
        };
        if let Some(p) = self.pacer.as_deref_mut() {
            p.set_rate(rate, mss);
        }
    }

    /// Arms the pacing timer for `at_ns` unless it fires earlier already
    /// (then the firing looks again).
    fn arm_pacing(&mut self, at_ns: u64, out: &mut Outbox) {
        if let Some(p) = self.pacer.as_deref_mut() {
            if p.timer_ns.is_none_or(|t| t > at_ns) {
                p.timer_ns = Some(at_ns);
                out.timers.push((TimerKind::Pace, at_ns));
            }
        }
    }

    /// The pacing timer fired: send what is due.
    pub(super) fn on_pace_timer<R: LossRecovery>(
        &mut self,
        r: &mut R,
        now_ns: u64,
        out: &mut Outbox,
    ) {
        match self.pacer.as_deref_mut() {
            Some(p) if p.timer_ns == Some(now_ns) => p.timer_ns = None,
            _ => return, // superseded, or not a paced flow
        }
        self.send_allowed(r, now_ns, out);
    }

    /// Linux `tcp_cwnd_validate`: the flag holds for a round trip, so one
    /// application-limited moment does not stop growth.
    fn validate_cwnd(&mut self, limited: bool) {
        let out = self.sb.outstanding();
        if self.sb.snd_una() >= self.cwnd_usage_seq
            || limited
            || (!self.cwnd_limited && out > self.max_packets_out)
        {
            self.cwnd_limited = limited;
            self.max_packets_out = out;
            self.cwnd_usage_seq = self.sb.snd_nxt();
        }
    }

    /// Linux `tcp_is_cwnd_limited`: cwnd-limited this round, or in slow start
    /// below twice the most packets that were out (`cwnd`, `ssthresh`: the
    /// controller's, read once by the caller).
    fn is_cwnd_limited(&self, cwnd: f64, ssthresh: f64) -> bool {
        self.cwnd_limited || (cwnd < ssthresh && cwnd < 2.0 * self.max_packets_out as f64)
    }

    pub(super) fn loss_event<R: LossRecovery>(
        &self,
        r: &R,
        now_ns: u64,
        in_flight: u64,
    ) -> LossEvent {
        let (window_cap_pkts, halve) = r.reduction_rules(self);
        LossEvent {
            now_ns,
            in_flight_pkts: in_flight.min(u64::from(u32::MAX)) as u32,
            lost_pkts: self.sb.lost_count().min(u64::from(u32::MAX)) as u32,
            rtt: self.rtt.stats(),
            window_cap_pkts,
            halve,
            ..Default::default()
        }
    }

    /// The controller's `on_rto` for the expiry just counted.
    pub(super) fn notify_rto(
        &mut self,
        now_ns: u64,
        reduce: bool,
        window_cap_pkts: Option<f64>,
        halve: bool,
    ) {
        self.cc.on_rto(&RtoEvent {
            now_ns,
            backoff: self.rto_backoff,
            reduce,
            window_cap_pkts,
            halve,
            rtt: self.rtt.stats(),
            // Linux `tcp_enter_loss`: snd_cwnd = tcp_packets_in_flight + 1
            // (0 + 1 where everything was marked lost).
            in_flight_pkts: self.sb.pipe().min(u64::from(u32::MAX)) as u32,
        });
    }

    /// Linux `tcp_enter_loss` (and RFC 5681): a new ssthresh only when not
    /// already in fast recovery, nor in a timeout recovery without progress
    /// since.
    pub(super) fn timeout_reduces(&self) -> bool {
        match self.recovery {
            Recovery::Open => !self.in_ecn_window(),
            Recovery::Fast { .. } => false,
            Recovery::Timeout { .. } => self.rto_backoff <= 1,
        }
    }

    pub(super) fn enter_fast_recovery<R: LossRecovery>(
        &mut self,
        r: &mut R,
        now_ns: u64,
        in_flight: u64,
        out: &mut Outbox,
    ) {
        // A loss found during an ECN reduction is no new episode: the
        // window was reduced for this window of data already (RFC 3168
        // §6.1.2), and the recovery ends where the ECN reduction would
        // have (Linux `tcp_enter_recovery` keeps `high_seq` and PRR when
        // `tcp_in_cwnd_reduction`; ns-2 `dupack_action()`'s ECN branch
        // keeps `recover_` and does not slow down).
        let ecn_point = self.ecn.point;
        self.recovery = Recovery::Fast {
            point: ecn_point.unwrap_or(self.sb.snd_nxt()),
        };
        self.counters.fast_recoveries += 1;
        let prior_cwnd = self.cwnd_pkts();
        if ecn_point.is_none() {
            let loss = self.loss_event(r, now_ns, in_flight);
            self.cc.on_congestion_event(&loss);
            self.queue_cwr();
        }
        r.start_fast_recovery(self, now_ns, prior_cwnd, out);
        self.ecn.point = None;
    }

    fn recovery_exits_at(&self, ack_seq: u64) -> bool {
        match self.recovery {
            Recovery::Fast { point } | Recovery::Timeout { point } => ack_seq >= point,
            Recovery::Open => false,
        }
    }

    /// The RTT sample of an ACK, the ACK's SACK blocks and cumulative point
    /// on the scoreboard, and the timeout backoff.
    fn take_ack<R: LossRecovery, const X: bool>(
        &mut self,
        r: &mut R,
        now_ns: u64,
        ack: &Packet,
        in_fast: bool,
        out: &mut Outbox,
    ) -> AckOutcome {
        let in_flight_before = self.sb.pipe();
        let una_before = self.sb.snd_una();
        // Every ACK echoes the TSval of the packet that triggered it: an exact
        // RTT sample even for retransmissions (RFC 7323 §4, no Karn ambiguity).
        let sample = self.clock(now_ns).saturating_sub(ack.ts_ecr);
        // A new ACK in ns-2's sense (`newack`): not a duplicate, nor a
        // partial ACK in fast recovery.
        let new_ack = ack.seq > una_before && (!in_fast || self.recovery_exits_at(ack.seq));
        let timed_acked = r.on_timed_ack(self, now_ns, ack.seq, new_ack);
        let sacks = r.read_sacks(self, ack, in_fast, una_before);
        let sacked_before = self.sb.sacked_count();
        let prior_highest_sacked = self.sb.highest_sacked();
        let mut delivered = 0;
        if sacks.read {
            for (s, e) in ack.sack_blocks() {
                delivered += self.sb.sack_block(s, e);
            }
        }
        let (advanced, fresh) = self.sb.cum_ack(ack.seq);
        delivered += fresh;
        self.sb.sort_delivered();
        r.on_delivered(self, now_ns, ack, advanced, prior_highest_sacked);
        if X && self.rate.is_some() {
            self.rate_on_delivered(now_ns, ack, advanced);
        }
        self.sb.clear_delivered();
        // As Linux: RACK has seen the deliveries (`tcp_sacktag_one`,
        // `tcp_clean_rtx_queue`) before the estimator takes the ACK's
        // sample at the end of `tcp_clean_rtx_queue`.
        let rtt_sample = r.rtt_sample_ns(new_ack, delivered, sample);
        let rtt_updated = rtt_sample.is_some();
        if let Some(sample) = rtt_sample {
            // Linux `tcp_ack` moves snd_una (`tcp_snd_una_update`) before
            // `tcp_clean_rtx_queue` takes the sample, so `tcp_rtt_estimator`
            // ends its round trip on the ACK that passes `rtt_seq`.
            let una_after = ack.seq.clamp(una_before, self.sb.snd_nxt());
            self.rtt.on_sample_at(sample, una_after, self.sb.snd_nxt());
        }
        if advanced > 0 {
            // RFC 6298 §5.3 restart; backoff is cleared by progress (ns-2: see
            // `progress_ends_backoff`).
            if r.progress_ends_backoff(in_fast, timed_acked) {
                self.rto_backoff = 0;
            }
            if self.sb.outstanding() == 0 {
                self.timer_ns = None;
            } else {
                self.arm_rto(now_ns, out);
            }
        }
        r.count_dupacks(
            advanced > 0,
            self.sb.sacked_count() > sacked_before || sacks.dupack,
        );
        AckOutcome {
            advanced_pkts: advanced,
            delivered_pkts: delivered,
            sacked_before_pkts: sacked_before,
            in_flight_before_pkts: in_flight_before,
            rtt_updated,
        }
    }

    /// `tcp_rate_skb_delivered` for every packet this ACK delivered, and
    /// the sample's RTT (`rs->rtt_us`, tcp_clean_rtx_queue's `ca_rtt_us`):
    /// from the last packet SACKed that was never retransmitted, else the
    /// last cumulatively acknowledged when none of those was (Karn), else
    /// the timestamp echo of an ACK that acknowledged data; 0: none.
    #[cold]
    #[inline(never)]
    fn rate_on_delivered(&mut self, now_ns: u64, ack: &Packet, advanced_pkts: u64) {
        let Some(rate) = self.rate.as_deref_mut() else {
            return;
        };
        rate.begin_ack();
        let (mut sack_xmit, mut cum_xmit, mut cum_rtx) = (None, None, false);
        self.sb.take_rate_delivered(|d| {
            rate.on_delivered(d);
            if d.seq < ack.seq {
                cum_xmit = Some(d.xmit_ns);
                cum_rtx |= d.retransmitted;
            } else if !d.retransmitted {
                sack_xmit = Some(d.xmit_ns);
            }
        });
        let from_send = sack_xmit.or(if cum_rtx { None } else { cum_xmit });
        self.rate_rtt_ns = match from_send {
            Some(x) => now_ns.saturating_sub(x),
            None if self.hot_timestamps && advanced_pkts > 0 => {
                (now_ns + self.hot_clock_offset_ns).saturating_sub(ack.ts_ecr)
            }
            None => 0,
        };
    }

    /// `tcp_rate_gen` once the ACK's losses are marked.
    #[cold]
    #[inline(never)]
    fn rate_generate(&mut self, now_ns: u64, o: &AckOutcome, newly_lost_pkts: u64) {
        let min_rtt = self.rtt.has_sample().then(|| self.rtt.stats().min_ns);
        if let Some(rate) = self.rate.as_deref_mut() {
            rate.on_lost(newly_lost_pkts);
            rate.generate(
                now_ns,
                o.delivered_pkts,
                newly_lost_pkts,
                min_rtt,
                self.rate_rtt_ns,
                o.in_flight_before_pkts,
            );
        }
    }

    pub(super) fn on_ack<R: LossRecovery>(
        &mut self,
        r: &mut R,
        now_ns: u64,
        ack: &Packet,
        out: &mut Outbox,
    ) {
        if self.extras {
            self.on_ack_x::<R, true>(r, now_ns, ack, out);
        } else {
            self.on_ack_x::<R, false>(r, now_ns, ack, out);
        }
    }

    /// `on_ack` with the optional features' code (`X`, see `extras`).
    fn on_ack_x<R: LossRecovery, const X: bool>(
        &mut self,
        r: &mut R,
        now_ns: u64,
        ack: &Packet,
        out: &mut Outbox,
    ) {
        self.counters.acks_received += 1;
        self.ts_recent = ack.ts_val;
        let in_fast = matches!(self.recovery, Recovery::Fast { .. });
        let o = self.take_ack::<R, X>(r, now_ns, ack, in_fast, out);
        let (advanced, delivered) = (o.advanced_pkts, o.delivered_pkts);
        r.on_ack_outcome(self, now_ns, ack, &o);
        let ece = X && self.hot_ecn && ack.ece();
        let mut ece_blocks_growth = false;
        if X && self.hot_ecn {
            // Linux `tcp_fastretrans_alert` (D): the CWR state ends before
            // this ACK's ECE is looked at.
            if self.ecn.point.is_some_and(|p| self.sb.snd_una() > p) {
                self.ecn.point = None;
                r.on_ecn_reduction_end(self, now_ns);
            }
            if ece {
                self.counters.ece_acks += 1;
                ece_blocks_growth = !r.ece_ack_grows();
                if r.ecn_before_losses() {
                    self.ecn_respond(r, now_ns, o.in_flight_before_pkts);
                }
            }
        }

        let (newly_lost, reo_wait) = r.detect_losses(self, now_ns, false);
        if X && self.rate.is_some() {
            self.rate_generate(now_ns, &o, newly_lost);
        }

        let exiting = self.recovery_exits_at(self.sb.snd_una());
        let mut entered_quietly = false;
        if self.recovery == Recovery::Open && self.sb.has_lost() {
            self.enter_fast_recovery(r, now_ns, o.in_flight_before_pkts, out);
            entered_quietly = !r.sends_on_entering();
        } else if in_fast && !exiting {
            r.on_ack_in_recovery(advanced > 0);
        }
        if ece && !r.ecn_before_losses() {
            self.ecn_respond(r, now_ns, o.in_flight_before_pkts);
        }
        // Linux `tcp_in_cwnd_reduction`: Recovery or CWR, PRR's window.
        let in_fast_recovery = matches!(self.recovery, Recovery::Fast { .. })
            || (X && r.ecn_holds_window() && self.ecn_reducing());
        if in_fast_recovery {
            r.update_window(self, delivered, newly_lost, advanced > 0);
        }
        let progress =
            (advanced > 0 || (delivered > 0 && r.grows_on_sacks())) && !ece_blocks_growth;
        let grow_after_exit = exiting && r.grows_on_recovery_exit();
        if !grow_after_exit {
            self.grow::<X>(now_ns, ack, &o, progress, in_fast_recovery);
        }
        if exiting {
            let was = self.recovery;
            self.recovery = Recovery::Open;
            r.on_recovery_exit(self, now_ns, was);
            if self.sb.has_lost() {
                let pipe = self.sb.pipe();
                self.enter_fast_recovery(r, now_ns, pipe, out);
                r.update_window(self, delivered, newly_lost, advanced > 0);
            }
        }
        if grow_after_exit {
            let in_fast = matches!(self.recovery, Recovery::Fast { .. });
            self.grow::<X>(now_ns, ack, &o, progress, in_fast);
        }
        if !entered_quietly {
            self.send_allowed_x::<R, X>(r, now_ns, out);
        }
        if self.sb.outstanding() > 0 {
            r.arm_after_ack(self, now_ns, reo_wait, advanced > 0, out);
        }
        if let Some(t) = self.total_pkts {
            if self.completed_at_ns.is_none() && self.sb.snd_una() >= t {
                self.completed_at_ns = Some(now_ns);
                self.timer_ns = None;
            }
        }
    }

    /// The controller's `on_ack`, with the growth the profile allows;
    /// `progress`: the ACK may raise the window (see `LossRecovery::grows_on_sacks`).
    /// Inlined: once per ACK, and its call cost about 33 instructions
    /// (callgrind, issue 33).
    #[inline(always)]
    fn grow<const X: bool>(
        &mut self,
        now_ns: u64,
        ack: &Packet,
        o: &AckOutcome,
        progress: bool,
        in_fast_recovery: bool,
    ) {
        let (advanced, delivered) = (o.advanced_pkts, o.delivered_pkts);
        let payload = u64::from(self.hot_payload_bytes);
        // RFC 5681 §3.1 / Linux `tcp_may_raise_cwnd`: only an ACK that
        // advances the cumulative point may grow the window; RFC 7661 / Linux
        // `tcp_is_cwnd_limited`: only while the window limits the sender.
        // The controller's window and threshold, read once (two calls
        // through its vtable, not four).
        let growth = if progress && !in_fast_recovery {
            let (cwnd, ssthresh) = (self.cc.cwnd(), self.cc.ssthresh());
            if !self.hot_profile.validates_cwnd() || self.is_cwnd_limited(cwnd, ssthresh) {
                self.hot_profile.growth_pkts(delivered, cwnd < ssthresh)
            } else {
                0
            }
        } else {
            0
        };
        let mut ev = AckEvent {
            now_ns,
            delivered_pkts: delivered.min(u64::from(u32::MAX)) as u32,
            growth_pkts: growth.min(u64::from(u32::MAX)) as u32,
            delivered_bytes: delivered * payload,
            cum_acked_pkts: advanced.min(u64::from(u32::MAX)) as u32,
            in_flight_pkts: o.in_flight_before_pkts.min(u64::from(u32::MAX)) as u32,
            // Only fast recovery holds the window; after a timeout the
            // window slow-starts while the lost packets go out again (RFC 5681 §3.1).
            in_recovery: in_fast_recovery,
            rtt: self.rtt.stats(),
            rtt_updated: o.rtt_updated,
            ts: Some(AckTimestamps {
                echoed_sender_ts_ns: ack.ts_ecr,
                receiver_ts_ns: ack.ts_val,
                echoed_tag: ack.tag,
            }),
            mss_bytes: payload.min(u64::from(u32::MAX)) as u32,
            ..Default::default()
        };
        if X {
            ev.ece = self.hot_ecn && ack.ece();
            if let Some(rate) = self.rate.as_deref() {
                ev.rate = rate.sample();
            }
        }
        self.cc.on_ack(&ev);
        // A controller that reads rate samples may mark the flight
        // app-limited itself (BBR in PROBE_RTT, `tp->app_limited`).
        if let Some(rate) = self.rate.as_deref_mut().filter(|_| X) {
            if let Some(until) = self.cc.app_limited_until() {
                rate.set_app_limited_until(until);
            }
        }
    }

    pub(super) fn on_rto_timer<R: LossRecovery>(
        &mut self,
        r: &mut R,
        now_ns: u64,
        out: &mut Outbox,
    ) {
        let Some(deadline) = self.timer_ns else {
            return;
        };
        if deadline > now_ns {
            out.timers.push((TimerKind::Rto, deadline)); // restarted since: wait on
            return;
        }
        if self.sb.outstanding() == 0 {
            self.timer_ns = None;
            return;
        }
        match self.timer {
            XmitTimer::Rto => self.retransmission_timeout(r, now_ns, out),
            kind => r.on_other_timer(self, kind, now_ns, out),
        }
    }

    fn retransmission_timeout<R: LossRecovery>(
        &mut self,
        r: &mut R,
        now_ns: u64,
        out: &mut Outbox,
    ) {
        self.rto_backoff += 1;
        self.counters.timeouts += 1;
        let (lost_before, rtx_before) = (self.sb.lost_count(), self.sb.retransmitted_count());
        r.on_timeout(self, now_ns);
        if let Some(rate) = self.rate.as_deref_mut() {
            // `tcp_timeout_mark_lost`: each packet newly marked lost, and each
            // retransmission lost again, counts in `tp->lost`.
            let newly = self.sb.lost_count().saturating_sub(lost_before)
                + rtx_before.saturating_sub(self.sb.retransmitted_count());
            rate.on_lost(newly);
        }
        // Linux `tcp_enter_loss`: TCP_CA_Loss replaces CWR, and CWR is
        // queued (`tcp_ecn_queue_cwr`); ns-2 `slowdown()` sets
        // `cong_action_` for every timeout.
        self.ecn.point = None;
        self.queue_cwr();
        self.recovery = Recovery::Timeout {
            point: self.sb.snd_nxt(),
        };
        self.arm_rto(now_ns, out); // backed off (RFC 6298 §5.5-5.6)
                                   // RFC 6298 §5.4: retransmit the earliest unacknowledged packet.
        self.send_forced_retransmit(r, now_ns, out);
        self.send_allowed(r, now_ns, out);
    }
}
