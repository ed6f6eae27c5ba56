//! The TCP sender: ACK clocking, RFC 6675 SACK loss recovery driven by
//! `pipe`, RFC 6298 retransmission timer with exponential backoff, receiver
//! window, and a [`CongestionControl`] that owns cwnd and ssthresh.

use longfat_cc::{AckEvent, AckTimestamps, CongestionControl, LossEvent, RtoEvent};

use crate::event::TimerKind;
use crate::outbox::Outbox;
use crate::packet::{Dir, Packet, PacketKind};
use crate::tcp::rtt::RttEstimator;
use crate::tcp::scoreboard::Scoreboard;
use crate::tcp::TcpConfig;

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
}

pub struct TcpSender {
    flow: u32,
    cfg: TcpConfig,
    cc: Box<dyn CongestionControl>,
    sb: Scoreboard,
    rtt: RttEstimator,
    recovery: Recovery,
    rto_backoff: u32,
    rto_deadline_ns: Option<u64>,
    /// The application has data to send (between start and stop).
    app_active: bool,
    /// Fixed-size transfer: packets to send in all (None: bulk).
    total_pkts: Option<u64>,
    pub completed_at_ns: Option<u64>,
    pub started_at_ns: Option<u64>,
    /// The retransmission that starts fast recovery (sent regardless of
    /// pipe, RFC 6675 step 4.2) is waiting for room in the host queue.
    forced_retransmit_pending: bool,
    pub counters: SenderCounters,
}

impl std::fmt::Debug for TcpSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TcpSender")
            .field("flow", &self.flow)
            .field("cc", &self.cc.name())
            .finish()
    }
}

impl TcpSender {
    pub fn new(
        flow: u32,
        cfg: TcpConfig,
        cc: Box<dyn CongestionControl>,
        total_pkts: Option<u64>,
    ) -> Self {
        let rtt = RttEstimator::new(cfg.initial_rto_ns, cfg.min_rto_ns, cfg.max_rto_ns);
        Self {
            flow,
            cfg,
            cc,
            sb: Scoreboard::new(),
            rtt,
            recovery: Recovery::Open,
            rto_backoff: 0,
            rto_deadline_ns: None,
            app_active: false,
            total_pkts,
            completed_at_ns: None,
            started_at_ns: None,
            forced_retransmit_pending: false,
            counters: SenderCounters::default(),
        }
    }

    pub fn cc(&self) -> &dyn CongestionControl {
        self.cc.as_ref()
    }
    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }
    pub fn scoreboard(&self) -> &Scoreboard {
        &self.sb
    }
    pub fn recovery(&self) -> Recovery {
        self.recovery
    }
    /// Packets of a fixed-size transfer (None: bulk).
    pub fn total_pkts(&self) -> Option<u64> {
        self.total_pkts
    }
    pub fn config(&self) -> &TcpConfig {
        &self.cfg
    }
    pub fn packet_size_bytes(&self) -> u32 {
        self.cfg.packet_size_bytes
    }
    fn clock(&self, now_ns: u64) -> u64 {
        now_ns + self.cfg.sender_clock_offset_ns
    }

    pub fn start(&mut self, now_ns: u64, out: &mut Outbox) {
        self.app_active = true;
        self.started_at_ns = Some(now_ns);
        self.send_allowed(now_ns, out);
    }

    /// The application stops producing data; what is outstanding still completes.
    pub fn stop(&mut self) {
        self.app_active = false;
    }

    fn cwnd_pkts(&self) -> u64 {
        let c = self.cc.cwnd();
        if c.is_finite() && c >= 1.0 {
            c.floor() as u64
        } else {
            1
        }
    }

    fn can_send_new(&self) -> bool {
        self.app_active
            && self.total_pkts.is_none_or(|t| self.sb.snd_nxt() < t)
            && self.sb.outstanding() < self.cfg.rwnd_pkts
    }

    fn transmit(&mut self, now_ns: u64, seq: u64, retransmit: bool, out: &mut Outbox) {
        let size = self.cfg.packet_size_bytes;
        let mut p = Packet::new(self.flow, PacketKind::Data, Dir::Forward, size);
        p.seq = seq;
        p.class = self.cfg.class;
        p.ts_val = self.clock(now_ns);
        p.tag = self.cc.on_send(now_ns, seq, size, retransmit);
        self.counters.sent_pkts += 1;
        self.counters.sent_bytes += u64::from(size);
        if retransmit {
            self.counters.retransmits += 1;
        }
        out.packets.push(p);
        // RFC 6298 §5.1 arms an idle timer; Linux also re-arms it when it
        // retransmits the head of the queue (`tcp_xmit_retransmit_queue`), so a
        // fast retransmission gets a whole RTO to come back.
        if self.rto_deadline_ns.is_none() || (retransmit && seq == self.sb.snd_una()) {
            self.arm_rto(now_ns, out);
        }
    }

    fn arm_rto(&mut self, now_ns: u64, out: &mut Outbox) {
        let d = now_ns + self.rtt.backed_off_rto_ns(self.rto_backoff);
        self.rto_deadline_ns = Some(d);
        out.timers.push((TimerKind::Rto, d));
    }

    /// The host queue has room again.
    pub fn on_host_ready(&mut self, now_ns: u64, out: &mut Outbox) {
        self.send_allowed(now_ns, out);
    }

    /// Retransmits the first lost packet regardless of pipe, as soon as the
    /// host queue takes it.
    fn send_forced_retransmit(&mut self, now_ns: u64, out: &mut Outbox) {
        if !out.has_host_room() {
            self.forced_retransmit_pending = true;
            out.host_blocked = true;
            return;
        }
        self.forced_retransmit_pending = false;
        if let Some(seq) = self.sb.next_retransmit() {
            self.sb.mark_retransmitted(seq);
            self.transmit(now_ns, seq, true, out);
        }
    }

    /// Sends while RFC 6675 pipe is below cwnd: lost packets first, then new
    /// data; never more than the host queue takes (`Outbox::host_room_pkts`).
    fn send_allowed(&mut self, now_ns: u64, out: &mut Outbox) {
        if self.forced_retransmit_pending {
            self.send_forced_retransmit(now_ns, out);
        }
        let cwnd = self.cwnd_pkts();
        while self.sb.pipe() < cwnd {
            if !out.has_host_room() {
                if self.sb.next_retransmit().is_some() || self.can_send_new() {
                    out.host_blocked = true;
                }
                break;
            }
            if let Some(seq) = self.sb.next_retransmit() {
                self.sb.mark_retransmitted(seq);
                self.transmit(now_ns, seq, true, out);
            } else if self.can_send_new() {
                let seq = self.sb.send_new();
                self.transmit(now_ns, seq, false, out);
            } else {
                break;
            }
        }
    }

    fn enter_fast_recovery(&mut self, now_ns: u64, in_flight: u64, out: &mut Outbox) {
        self.recovery = Recovery::Fast {
            point: self.sb.snd_nxt(),
        };
        self.counters.fast_recoveries += 1;
        self.cc.on_congestion_event(&LossEvent {
            now_ns,
            in_flight_pkts: in_flight.min(u64::from(u32::MAX)) as u32,
            lost_pkts: self.sb.lost_count().min(u64::from(u32::MAX)) as u32,
            rtt: self.rtt.stats(),
            ..Default::default()
        });
        // RFC 6675 §5 step (4.2): the first lost packet goes out regardless of pipe.
        self.send_forced_retransmit(now_ns, out);
    }

    pub fn on_ack(&mut self, now_ns: u64, ack: &Packet, out: &mut Outbox) {
        self.counters.acks_received += 1;
        let in_flight_before = self.sb.pipe();
        // Every ACK echoes the TSval of the packet that triggered it: an exact
        // RTT sample even for retransmissions (RFC 7323 §4, no Karn ambiguity).
        let sample = self.clock(now_ns).saturating_sub(ack.ts_ecr);
        self.rtt.on_sample(sample);

        let mut delivered = 0;
        for &(s, e) in ack.sack_blocks() {
            delivered += self.sb.sack_block(s, e);
        }
        let (advanced, fresh) = self.sb.cum_ack(ack.seq);
        delivered += fresh;
        self.sb.update_lost();

        if advanced > 0 {
            // RFC 6298 §5.3 restart; backoff is cleared by progress.
            self.rto_backoff = 0;
            if self.sb.outstanding() == 0 {
                self.rto_deadline_ns = None;
            } else {
                self.arm_rto(now_ns, out);
            }
        }

        let exiting = match self.recovery {
            Recovery::Fast { point } | Recovery::Timeout { point } => self.sb.snd_una() >= point,
            Recovery::Open => false,
        };
        if self.recovery == Recovery::Open && self.sb.has_lost() {
            self.enter_fast_recovery(now_ns, in_flight_before, out);
        }
        let payload = self.cfg.payload_bytes();
        let in_fast_recovery = matches!(self.recovery, Recovery::Fast { .. });
        // RFC 5681 §3.1 / Linux `tcp_may_raise_cwnd`: only an ACK that
        // advances the cumulative point may grow the window.
        let growth = if advanced > 0 && !in_fast_recovery {
            delivered
        } else {
            0
        };
        self.cc.on_ack(&AckEvent {
            now_ns,
            delivered_pkts: delivered.min(u64::from(u32::MAX)) as u32,
            growth_pkts: growth.min(u64::from(u32::MAX)) as u32,
            delivered_bytes: delivered * payload,
            cum_acked_pkts: advanced.min(u64::from(u32::MAX)) as u32,
            in_flight_pkts: in_flight_before.min(u64::from(u32::MAX)) as u32,
            // Only fast recovery holds the window; after a timeout the
            // window slow-starts while the lost packets go out again (RFC 5681 §3.1).
            in_recovery: in_fast_recovery,
            rtt: self.rtt.stats(),
            rtt_updated: true,
            ts: Some(AckTimestamps {
                echoed_sender_ts_ns: ack.ts_ecr,
                receiver_ts_ns: ack.ts_val,
                echoed_tag: ack.tag,
            }),
        });
        if exiting {
            if matches!(self.recovery, Recovery::Fast { .. }) {
                self.cc.on_recovery_exit(now_ns);
            }
            self.recovery = Recovery::Open;
            if self.sb.has_lost() {
                let pipe = self.sb.pipe();
                self.enter_fast_recovery(now_ns, pipe, out);
            }
        }
        self.send_allowed(now_ns, out);
        if let Some(t) = self.total_pkts {
            if self.completed_at_ns.is_none() && self.sb.snd_una() >= t {
                self.completed_at_ns = Some(now_ns);
                self.rto_deadline_ns = None;
            }
        }
    }

    pub fn on_rto_timer(&mut self, now_ns: u64, out: &mut Outbox) {
        let Some(deadline) = self.rto_deadline_ns else {
            return;
        };
        if deadline > now_ns {
            out.timers.push((TimerKind::Rto, deadline)); // restarted since: wait on
            return;
        }
        if self.sb.outstanding() == 0 {
            self.rto_deadline_ns = None;
            return;
        }
        self.rto_backoff += 1;
        self.counters.timeouts += 1;
        // Linux `tcp_enter_loss`: a new ssthresh only when not already in
        // fast recovery, nor in a timeout recovery without progress since.
        let reduce = match self.recovery {
            Recovery::Open => true,
            Recovery::Fast { .. } => false,
            Recovery::Timeout { .. } => self.rto_backoff <= 1,
        };
        self.cc.on_rto(&RtoEvent {
            now_ns,
            backoff: self.rto_backoff,
            reduce,
            rtt: self.rtt.stats(),
            ..Default::default()
        });
        self.sb.mark_all_lost();
        self.recovery = Recovery::Timeout {
            point: self.sb.snd_nxt(),
        };
        self.arm_rto(now_ns, out); // backed off (RFC 6298 §5.5-5.6)
                                   // RFC 6298 §5.4: retransmit the earliest unacknowledged packet.
        self.send_forced_retransmit(now_ns, out);
        self.send_allowed(now_ns, out);
    }
}
