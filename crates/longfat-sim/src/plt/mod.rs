//! PLT, the priority-layered transport (Venkataraman et al., `plt.md`):
//! one connection whose packets leave through two strictly prioritized
//! control modules.
//!
//! * The **HCM** (high-priority control module) is longfat's TCP sender,
//!   unchanged, with any controller (Reno in the paper). It runs over its
//!   own packet numbers; the packet manager maps each HCM packet to the
//!   connection's data.
//! * The **LCM** (low-priority control module, [`Lcm`]) sends in the next
//!   lower strict-priority class with the loss-rate MIMD window of sect. 3.1
//!   (`longfat_cc::plt`). It never retransmits: a packet it finds lost goes
//!   to the packet manager's retransmit buffer, which the HCM sends before
//!   new data (sect. 3.2.1).
//! * The **packet manager** ([`PacketManager`]) hands each module its next
//!   packet from one shared sequence space and knows which data is
//!   acknowledged.
//! * The **receiver** ([`PltReceiver`]) is a SACK receiver per module (the
//!   paper's "individual outstanding windows"), ACKs LCM packets in the
//!   LCM's class (sect. 3.2.2), optionally one ACK per n LCM packets, and
//!   reassembles the connection's data in order.
//!
//! Each module has its own packet numbers, cumulative ACK and SACK blocks,
//! like MPTCP subflows. LCM data packets also carry the point below which
//! the LCM has given up on every packet (`Packet::settled_below`), so the
//! receiver's LCM cumulative ACK moves past losses the LCM never resends.
//! Work per packet is O(1) amortized: every structure is a queue indexed
//! from its lowest live number.
//!
//! Here: the settings, the counters and the sender, which runs the two
//! modules; `manager.rs` the packet manager, `lcm.rs` the LCM,
//! `receiver.rs` the receiver.

mod lcm;
mod manager;
mod receiver;
#[cfg(test)]
mod tests;

use std::sync::Arc;

use longfat_cc::plt::LcmConfig;
use longfat_cc::CongestionControl;

use crate::event::TimerKind;
use crate::outbox::Outbox;
use crate::packet::{Packet, PacketKind, MODULE_HCM, MODULE_LCM};
use crate::tcp::sender::TcpSender;
use crate::tcp::TcpConfig;

pub use lcm::{Lcm, LcmCounters};
pub use manager::PacketManager;
pub use receiver::{PltReceiver, PltReceiverCounters};

/// A PLT connection's settings beyond its TCP ones.
#[derive(Clone, Debug, PartialEq)]
pub struct PltConfig {
    pub lcm: LcmConfig,
    /// Epoch length (sect. 4.1: 100 ms).
    pub epoch_ns: u64,
    /// The LCM's first window, in packets.
    pub lcm_initial_window_pkts: f64,
    /// Strict-priority class of the LCM's packets (the HCM's plus one).
    pub lcm_class: u8,
    /// Class of the ACKs of LCM packets (the LCM's own, or the HCM's).
    pub lcm_ack_class: u8,
    /// The receiver acknowledges every this many in-order LCM packets...
    pub lcm_ack_every_pkts: u32,
    /// ...or when this much time passed since the first unacknowledged one.
    pub lcm_ack_timeout_ns: u64,
    /// The receiver's buffer for the connection's data: at most this many
    /// packets from the oldest one not acknowledged to the next one not
    /// sent, whichever module carries them.
    pub receive_buffer_pkts: u64,
    /// The paper's footnote 2: the LCM resends a lost LCM packet itself when
    /// the retransmit buffer holds more than this many times the HCM's
    /// window (None: never, as in the paper's simulations).
    pub lcm_resend_ratio: Option<f64>,
}

/// A PLT connection's counters, totals since the start, as the reports
/// show them (the receiver's `PltReceiver::counters` give its goodput).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PltCounters {
    /// Data packets sent by both modules.
    pub sent_pkts: u64,
    pub sent_bytes: u64,
    /// The HCM's own retransmissions and the LCM losses either module resent.
    pub retransmits: u64,
    /// The HCM's (the LCM's are `modules.lcm_timeouts`).
    pub timeouts: u64,
    pub fast_recoveries: u64,
    pub modules: ModuleCounters,
}

/// Each module's share of a PLT connection's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ModuleCounters {
    pub hcm_sent_pkts: u64,
    pub lcm_sent_pkts: u64,
    /// HCM: its own retransmissions; LCM: packets it gave up on.
    pub hcm_lost_pkts: u64,
    pub lcm_lost_pkts: u64,
    /// Packets that reached the receiver first through each module.
    pub hcm_new_pkts: u64,
    pub lcm_new_pkts: u64,
    /// LCM losses the HCM resent, and those the LCM resent itself (footnote 2).
    pub lcm_losses_resent: u64,
    pub lcm_losses_resent_by_lcm: u64,
    pub lcm_timeouts: u64,
    /// LCM packets given up on that were acknowledged afterwards.
    pub lcm_late_acked_pkts: u64,
}

/// The sending side of a PLT connection.
pub struct PltSender {
    hcm: TcpSender,
    lcm: Lcm,
    pm: PacketManager,
    epoch_ns: u64,
    next_epoch_ns: Option<u64>,
    /// The HCM's reductions so far (fast recoveries and timeouts), and its
    /// window before the call in progress.
    hcm_cutbacks: u64,
    hcm_cwnd_before: f64,
    app_active: bool,
    pub started_at_ns: Option<u64>,
    pub completed_at_ns: Option<u64>,
    pub lcm_ack_class: u8,
}

impl std::fmt::Debug for PltSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PltSender")
            .field("hcm", &self.hcm)
            .field("lcm", &self.lcm.counters)
            .finish()
    }
}

impl PltSender {
    /// `hcm` is the high-priority module: a TCP sender over its own packet
    /// numbers (its size limit is the packet manager's, not its own).
    pub fn new(
        flow: u32,
        tcp: impl Into<Arc<TcpConfig>>,
        plt: &PltConfig,
        hcm_cc: Box<dyn CongestionControl>,
        total_pkts: Option<u64>,
    ) -> Self {
        let tcp: Arc<TcpConfig> = tcp.into();
        let lcm = Lcm::new(flow, &tcp, plt);
        let window = plt.receive_buffer_pkts;
        let mut hcm = TcpSender::new(flow, tcp, hcm_cc, None);
        hcm.set_send_limit(0);
        Self {
            hcm,
            lcm,
            pm: PacketManager::new(total_pkts, window),
            epoch_ns: plt.epoch_ns,
            next_epoch_ns: None,
            hcm_cutbacks: 0,
            hcm_cwnd_before: 0.0,
            app_active: false,
            started_at_ns: None,
            completed_at_ns: None,
            lcm_ack_class: plt.lcm_ack_class,
        }
    }

    pub fn hcm(&self) -> &TcpSender {
        &self.hcm
    }
    pub fn lcm(&self) -> &Lcm {
        &self.lcm
    }
    pub fn manager(&self) -> &PacketManager {
        &self.pm
    }
    pub fn packet_size_bytes(&self) -> u32 {
        self.hcm.packet_size_bytes()
    }
    pub fn config(&self) -> &TcpConfig {
        self.hcm.config()
    }
    pub fn total_pkts(&self) -> Option<u64> {
        self.pm.total_pkts
    }
    /// Both modules' windows.
    pub fn cwnd(&self) -> f64 {
        self.hcm.cc().cwnd() + self.lcm.cwnd()
    }
    /// The LCM's window.
    pub fn lcm_cwnd_pkts(&self) -> f64 {
        self.lcm.cwnd()
    }
    /// The connection's counters; `rx`: its receiver, which counts the
    /// packets each module delivered first.
    pub fn counters(&self, rx: &PltReceiver) -> PltCounters {
        let (h, l, pm) = (&self.hcm.counters, &self.lcm.counters, &self.pm);
        PltCounters {
            sent_pkts: h.sent_pkts + l.sent_pkts,
            sent_bytes: h.sent_bytes + l.sent_pkts * u64::from(self.packet_size_bytes()),
            retransmits: h.retransmits + pm.lcm_losses_resent + pm.lcm_losses_resent_by_lcm,
            timeouts: h.timeouts,
            fast_recoveries: h.fast_recoveries,
            modules: ModuleCounters {
                hcm_sent_pkts: h.sent_pkts,
                lcm_sent_pkts: l.sent_pkts,
                hcm_lost_pkts: h.retransmits,
                lcm_lost_pkts: l.lost_pkts,
                hcm_new_pkts: rx.plt.hcm_new_pkts,
                lcm_new_pkts: rx.plt.lcm_new_pkts,
                lcm_losses_resent: pm.lcm_losses_resent,
                lcm_losses_resent_by_lcm: pm.lcm_losses_resent_by_lcm,
                lcm_timeouts: l.timeouts,
                lcm_late_acked_pkts: l.late_acked_pkts,
            },
        }
    }

    /// The LCM's timeout: the connection's RTO as the HCM measures it
    /// (RFC 6298), never backed off (see docs/algorithms.md, PLT).
    fn rto_ns(&self) -> u64 {
        self.hcm.rtt().rto_ns()
    }

    fn hcm_grant(&mut self) {
        let limit = self.pm.hcm_send_limit(self.hcm.scoreboard().snd_nxt());
        self.hcm.set_send_limit(limit);
        self.hcm_cwnd_before = self.hcm.cc().cwnd();
    }

    /// After the HCM ran: the data its new packets carry, and what its
    /// cumulative ACK acknowledged. If it cut back (fast recovery or a
    /// timeout), a stopped LCM starts again (sect. 4.2) with the window the
    /// HCM gave up.
    fn after_hcm(&mut self, first: usize, out: &mut Outbox) {
        for p in &mut out.packets[first..] {
            if p.kind == PacketKind::Data && p.module == MODULE_HCM {
                p.set_data_seq(self.pm.hcm_data(p.seq));
            }
        }
        self.pm.hcm_acked_below(self.hcm.scoreboard().snd_una());
        let c = &self.hcm.counters;
        let cutbacks = c.fast_recoveries + c.timeouts;
        if cutbacks != self.hcm_cutbacks {
            self.hcm_cutbacks = cutbacks;
            if self.lcm.rule.is_stopped() {
                let freed = self.hcm_cwnd_before - self.hcm.cc().cwnd();
                self.lcm
                    .rule
                    .restart(if freed.is_finite() { freed } else { 0.0 });
                self.lcm.counters.restarts += 1;
            }
        }
    }

    /// Lets the HCM send what the packet manager has for it (queued LCM
    /// losses first), then the LCM; checks completion; arms the LCM's timer.
    fn pump(&mut self, now_ns: u64, kick_hcm: bool, out: &mut Outbox) {
        if kick_hcm {
            self.hcm_grant();
            let first = out.packets.len();
            self.hcm.on_host_ready(now_ns, out);
            self.after_hcm(first, out);
        }
        if self.app_active {
            let rto = self.rto_ns();
            let hcm_cwnd = self.hcm.cc().cwnd();
            self.lcm.send(now_ns, rto, hcm_cwnd, &mut self.pm, out);
        }
        if self.completed_at_ns.is_none() && self.pm.is_complete() {
            self.completed_at_ns = Some(now_ns);
            self.next_epoch_ns = None;
        }
        if !self.app_active && self.pm.outstanding() == 0 {
            self.next_epoch_ns = None; // stopped, and everything delivered
        }
        if let Some(t) = self.lcm_deadline() {
            out.timers.push((TimerKind::Rto, t));
        }
    }

    fn lcm_deadline(&self) -> Option<u64> {
        match (self.lcm.timer_ns, self.next_epoch_ns) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    pub fn start(&mut self, now_ns: u64, out: &mut Outbox) {
        self.app_active = true;
        self.started_at_ns = Some(now_ns);
        self.next_epoch_ns = Some(now_ns + self.epoch_ns);
        self.hcm_grant();
        let first = out.packets.len();
        self.hcm.start(now_ns, out);
        self.after_hcm(first, out);
        self.pump(now_ns, false, out);
    }

    /// The application stops producing data; what is outstanding completes
    /// (the HCM stays active: it still resends the LCM's losses).
    pub fn stop(&mut self) {
        self.app_active = false;
        self.pm.stop();
    }

    pub fn on_ack(&mut self, now_ns: u64, ack: &Packet, out: &mut Outbox) {
        if ack.module == MODULE_LCM {
            let rto = self.rto_ns();
            self.lcm.on_ack(now_ns, rto, ack, &mut self.pm);
            let kick = self.pm.queued() > 0;
            self.pump(now_ns, kick, out);
        } else {
            self.hcm_grant();
            let first = out.packets.len();
            self.hcm.on_ack(now_ns, ack, out);
            self.after_hcm(first, out);
            self.pump(now_ns, false, out);
        }
    }

    /// The connection's timer (the HCM's transmission timer, the LCM's
    /// retransmission timer and its epochs share the flow's `Rto` slot;
    /// each re-arms its own deadline).
    pub fn on_rto_timer(&mut self, now_ns: u64, out: &mut Outbox) {
        self.hcm_grant();
        let first = out.packets.len();
        self.hcm.on_rto_timer(now_ns, out);
        self.after_hcm(first, out);
        if self.next_epoch_ns.is_some_and(|t| t <= now_ns) {
            self.lcm.rule.end_epoch(self.lcm.cwnd_limited);
            self.lcm.cwnd_limited = false;
            self.lcm.counters.epochs += 1;
            self.next_epoch_ns = Some(now_ns + self.epoch_ns);
        }
        if self.lcm.timer_ns.is_some_and(|t| t <= now_ns) {
            self.lcm.on_timeout(&mut self.pm);
        }
        let kick = self.pm.queued() > 0;
        self.pump(now_ns, kick, out);
    }

    pub fn on_host_ready(&mut self, now_ns: u64, out: &mut Outbox) {
        self.pump(now_ns, true, out);
    }

    /// The HCM's pacing timer (a controller that sets a pacing rate;
    /// `tcp.pacing` itself is refused with PLT).
    pub fn on_pace_timer(&mut self, now_ns: u64, out: &mut Outbox) {
        self.hcm_grant();
        let first = out.packets.len();
        self.hcm.on_pace_timer(now_ns, out);
        self.after_hcm(first, out);
    }
}
