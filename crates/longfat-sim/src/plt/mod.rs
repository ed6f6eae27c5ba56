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

use std::collections::VecDeque;

use longfat_cc::plt::{LcmConfig, LcmRule};
use longfat_cc::CongestionControl;

use crate::event::TimerKind;
use crate::outbox::Outbox;
use crate::packet::{Dir, Packet, PacketKind, MODULE_HCM, MODULE_LCM};
use crate::tcp::receiver::{ReceiverCounters, TcpReceiver};
use crate::tcp::sender::TcpSender;
use crate::tcp::TcpConfig;

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

/// Where a connection-level packet is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum DataState {
    /// Last sent by the HCM (which retransmits it until acknowledged).
    Hcm,
    /// Sent by the LCM, not yet acknowledged or lost.
    Lcm,
    /// Lost by the LCM, waiting in the retransmit buffer for the HCM.
    Queued,
    Acked,
}

/// Sect. 3.2's packet manager: the connection's data, the retransmit
/// buffer of LCM losses, and which data each HCM packet carries.
#[derive(Debug)]
pub struct PacketManager {
    total_pkts: Option<u64>,
    /// The connection's window: at most this many packets between the
    /// oldest unacknowledged and the next unsent (the receiver's buffer for
    /// reassembly; each module's own window is `tcp.rwnd`).
    window_pkts: u64,
    /// The application stopped: no new data.
    stopped: bool,
    /// Every packet below `una` is acknowledged; `state[i]` is packet `una + i`.
    una: u64,
    /// The next packet never sent.
    nxt: u64,
    state: VecDeque<DataState>,
    /// LCM losses for the HCM, oldest first. Entries acknowledged meanwhile
    /// (a late LCM ACK) are skipped when reached.
    rtx: VecDeque<u64>,
    /// Entries of `rtx` still `Queued`.
    rtx_live: u64,
    /// `hcm_map[i]`: the data of HCM packet `hcm_base + i`.
    hcm_map: VecDeque<u64>,
    hcm_base: u64,
    /// LCM losses the HCM has sent.
    pub lcm_losses_resent: u64,
    /// LCM losses the LCM sent again itself (footnote 2).
    pub lcm_losses_resent_by_lcm: u64,
}

impl PacketManager {
    pub fn new(total_pkts: Option<u64>, window_pkts: u64) -> Self {
        Self {
            total_pkts,
            window_pkts,
            stopped: false,
            una: 0,
            nxt: 0,
            state: VecDeque::new(),
            rtx: VecDeque::new(),
            rtx_live: 0,
            hcm_map: VecDeque::new(),
            hcm_base: 0,
            lcm_losses_resent: 0,
            lcm_losses_resent_by_lcm: 0,
        }
    }

    /// Every packet below this one is acknowledged.
    pub fn data_una(&self) -> u64 {
        self.una
    }
    /// New packets the modules may take now: what the application has
    /// left, within the connection's window.
    pub fn unsent(&self) -> u64 {
        if self.stopped {
            return 0;
        }
        let left = self.total_pkts.map_or(u64::MAX, |t| t - self.nxt);
        left.min(self.window_pkts.saturating_sub(self.nxt - self.una))
    }

    /// The application stops producing data; what was sent still completes.
    pub fn stop(&mut self) {
        self.stopped = true;
    }

    /// The connection's window (`PltConfig::receive_buffer_pkts`).
    pub fn window_pkts(&self) -> u64 {
        self.window_pkts
    }

    /// The next packet never sent (packets below it were all sent).
    pub fn sent(&self) -> u64 {
        self.nxt
    }

    /// Packets sent and not yet acknowledged, in the connection's window.
    pub fn outstanding(&self) -> u64 {
        self.nxt - self.una
    }
    /// LCM losses waiting for the HCM.
    pub fn queued(&self) -> u64 {
        self.rtx_live
    }
    /// The whole transfer is acknowledged.
    pub fn is_complete(&self) -> bool {
        self.total_pkts.is_some_and(|t| self.una >= t)
    }

    fn state_mut(&mut self, d: u64) -> Option<&mut DataState> {
        if d < self.una {
            None
        } else {
            self.state.get_mut((d - self.una) as usize)
        }
    }

    fn take_unsent(&mut self, as_state: DataState) -> Option<u64> {
        if self.unsent() == 0 {
            return None;
        }
        let d = self.nxt;
        self.nxt += 1;
        self.state.push_back(as_state);
        Some(d)
    }

    /// The highest HCM packet number the HCM may send new, given its next
    /// one: one per queued loss and unsent packet.
    pub fn hcm_send_limit(&self, hcm_snd_nxt: u64) -> u64 {
        hcm_snd_nxt.saturating_add(self.rtx_live).saturating_add(self.unsent())
    }

    /// The data HCM packet `seq` carries: the same as before for a
    /// retransmission; for a new packet the oldest queued LCM loss, else
    /// the next unsent packet (sect. 3.2.1: losses before new data).
    pub fn hcm_data(&mut self, seq: u64) -> u64 {
        let end = self.hcm_base + self.hcm_map.len() as u64;
        if seq < end {
            return self.hcm_map[(seq - self.hcm_base) as usize];
        }
        debug_assert_eq!(seq, end, "the HCM sends its packets in order");
        let mut d = None;
        while let Some(q) = self.rtx.pop_front() {
            if let Some(s) = self.state_mut(q) {
                if *s == DataState::Queued {
                    *s = DataState::Hcm;
                    self.rtx_live -= 1;
                    self.lcm_losses_resent += 1;
                    d = Some(q);
                    break;
                }
            }
        }
        let d = d.or_else(|| self.take_unsent(DataState::Hcm)).expect("the HCM sends within its limit");
        self.hcm_map.push_back(d);
        d
    }

    /// The HCM's cumulative ACK reached `hcm_una`: the data of every HCM
    /// packet below it is acknowledged.
    pub fn hcm_acked_below(&mut self, hcm_una: u64) {
        while self.hcm_base < hcm_una {
            let Some(d) = self.hcm_map.pop_front() else { break };
            self.hcm_base += 1;
            self.acked(d);
        }
    }

    /// The next packet for the LCM: unsent data only (sect. 3.2.1).
    pub fn lcm_data(&mut self) -> Option<u64> {
        self.take_unsent(DataState::Lcm)
    }

    /// The oldest queued LCM loss, taken back by the LCM (footnote 2).
    pub fn lcm_resend(&mut self) -> Option<u64> {
        while let Some(q) = self.rtx.pop_front() {
            if let Some(s) = self.state_mut(q) {
                if *s == DataState::Queued {
                    *s = DataState::Lcm;
                    self.rtx_live -= 1;
                    self.lcm_losses_resent_by_lcm += 1;
                    return Some(q);
                }
            }
        }
        None
    }

    /// The LCM lost packet `d`: into the retransmit buffer, unless it was
    /// acknowledged meanwhile.
    pub fn lcm_lost(&mut self, d: u64) {
        if let Some(s) = self.state_mut(d) {
            if *s == DataState::Lcm {
                *s = DataState::Queued;
                self.rtx.push_back(d);
                self.rtx_live += 1;
            }
        }
    }

    /// Packet `d` is acknowledged (by either module).
    pub fn acked(&mut self, d: u64) {
        if let Some(s) = self.state_mut(d) {
            let was_queued = *s == DataState::Queued;
            *s = DataState::Acked;
            if was_queued {
                self.rtx_live -= 1;
            }
        }
        while self.state.front() == Some(&DataState::Acked) {
            self.state.pop_front();
            self.una += 1;
        }
    }
}

/// Where an LCM packet is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LcmState {
    InFlight,
    Acked,
    /// Given up on: its data went to the retransmit buffer.
    Lost,
}

#[derive(Clone, Copy, Debug)]
struct LcmEntry {
    data_seq: u64,
    state: LcmState,
}

/// Packets the LCM counts as lost once this many later ones are
/// acknowledged (TCP's DupThresh, RFC 6675).
const LCM_DUPTHRESH: u64 = 3;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LcmCounters {
    pub sent_pkts: u64,
    pub acked_pkts: u64,
    pub lost_pkts: u64,
    /// Packets found lost that were acknowledged afterwards.
    pub late_acked_pkts: u64,
    pub timeouts: u64,
    pub epochs: u64,
    /// Times a stopped LCM started again after an HCM cutback.
    pub restarts: u64,
}

/// The low-priority control module: its packet numbers, loss detection,
/// retransmission timer and sect. 3.1 window.
#[derive(Debug)]
pub struct Lcm {
    flow: u32,
    rule: LcmRule,
    class: u8,
    packet_size_bytes: u32,
    rwnd_pkts: u64,
    clock_offset_ns: u64,
    /// `entries[i]` is LCM packet `una + i`.
    una: u64,
    entries: VecDeque<LcmEntry>,
    in_flight: u64,
    /// Every packet below is acknowledged or lost.
    settled: u64,
    /// Every packet below is acknowledged, lost, or was checked for loss.
    loss_scan: u64,
    /// The highest SACK block end seen.
    sack_mark: u64,

    /// The window limited sending during this epoch (the rule grows the
    /// window only then, see docs/algorithms.md).
    cwnd_limited: bool,
    max_burst_pkts: u64,
    /// Extra wait before a timeout when the receiver delays LCM ACKs.
    ack_delay_ns: u64,
    resend_ratio: Option<f64>,
    /// When the oldest packet in flight is given up on.
    timer_ns: Option<u64>,
    pub counters: LcmCounters,
}

impl Lcm {
    fn new(flow: u32, tcp: &TcpConfig, plt: &PltConfig) -> Self {
        Self {
            flow,
            rule: LcmRule::new(plt.lcm, plt.lcm_initial_window_pkts),
            class: plt.lcm_class,
            packet_size_bytes: tcp.packet_size_bytes,
            rwnd_pkts: tcp.rwnd_pkts,
            clock_offset_ns: tcp.sender_clock_offset_ns,
            una: 0,
            entries: VecDeque::new(),
            in_flight: 0,
            settled: 0,
            loss_scan: 0,
            sack_mark: 0,
            cwnd_limited: false,
            max_burst_pkts: tcp.max_burst_pkts.map_or(u64::MAX, u64::from),
            ack_delay_ns: if plt.lcm_ack_every_pkts > 1 { plt.lcm_ack_timeout_ns } else { 0 },
            resend_ratio: plt.lcm_resend_ratio,
            timer_ns: None,
            counters: LcmCounters::default(),
        }
    }

    pub fn cwnd(&self) -> f64 {
        self.rule.cwnd()
    }
    pub fn rule(&self) -> &LcmRule {
        &self.rule
    }
    pub fn in_flight(&self) -> u64 {
        self.in_flight
    }
    fn nxt(&self) -> u64 {
        self.una + self.entries.len() as u64
    }

    /// Sends new data while the window, the receiver window and the host
    /// queue allow. `rto_ns`: the connection's retransmission timeout.
    fn send(&mut self, now_ns: u64, rto_ns: u64, hcm_cwnd: f64, pm: &mut PacketManager, out: &mut Outbox) {
        let cwnd = self.rule.cwnd().floor() as u64;
        let mut sent = 0u64;
        loop {
            if self.in_flight >= cwnd {
                self.cwnd_limited |= cwnd > 0 && pm.unsent() > 0;
                break;
            }
            // The receiver's LCM window holds what is not yet settled: each
            // new packet tells it how far it may skip (`settled_below`).
            if self.nxt() - self.settled >= self.rwnd_pkts || sent >= self.max_burst_pkts {
                break;
            }
            if !out.has_host_room() {
                if pm.unsent() > 0 {
                    out.host_blocked = true;
                }
                break;
            }
            // Footnote 2: with a retransmit buffer much larger than the HCM's
            // window, the LCM takes the oldest loss back itself.
            let resend = self.resend_ratio.is_some_and(|r| pm.queued() as f64 > r * hcm_cwnd);
            let next = if resend { pm.lcm_resend().or_else(|| pm.lcm_data()) } else { pm.lcm_data() };
            let Some(d) = next else { break };
            let seq = self.nxt();
            self.entries.push_back(LcmEntry { data_seq: d, state: LcmState::InFlight });
            self.in_flight += 1;
            let mut p = Packet::new(self.flow, PacketKind::Data, Dir::Forward, self.packet_size_bytes);
            p.seq = seq;
            p.class = self.class;
            p.module = MODULE_LCM;
            p.ts_val = now_ns + self.clock_offset_ns;
            p.set_data_seq(d);
            p.set_settled_below(self.settled);
            out.packets.push(p);
            self.counters.sent_pkts += 1;
            sent += 1;
            if self.timer_ns.is_none() {
                self.timer_ns = Some(now_ns + rto_ns + self.ack_delay_ns);
            }
        }
    }

    fn entry_mut(&mut self, seq: u64) -> Option<&mut LcmEntry> {
        if seq < self.una {
            None
        } else {
            self.entries.get_mut((seq - self.una) as usize)
        }
    }

    /// Packet `seq` reached the receiver. Returns 1 if it was in flight
    /// (a packet given up on that arrives after all was already counted as
    /// lost: its data is acknowledged, but it is not counted twice).
    fn deliver(&mut self, seq: u64, pm: &mut PacketManager) -> u64 {
        let Some(e) = self.entry_mut(seq) else { return 0 };
        let (d, was) = (e.data_seq, e.state);
        e.state = LcmState::Acked;
        let fresh = match was {
            LcmState::Acked => return 0,
            LcmState::InFlight => {
                self.in_flight -= 1;
                1
            }
            LcmState::Lost => {
                self.counters.late_acked_pkts += 1;
                0
            }
        };
        pm.acked(d);
        fresh
    }

    /// Gives up on packet `seq` (in flight): its data goes to the HCM.
    fn lose(&mut self, seq: u64, pm: &mut PacketManager) {
        let Some(e) = self.entry_mut(seq) else { return };
        if e.state != LcmState::InFlight {
            return;
        }
        e.state = LcmState::Lost;
        let d = e.data_seq;
        self.in_flight -= 1;
        self.counters.lost_pkts += 1;
        self.rule.on_lost(1);
        pm.lcm_lost(d);
    }

    fn advance_settled(&mut self) {
        let nxt = self.nxt();
        while self.settled < nxt {
            match self.entry_mut(self.settled) {
                Some(e) if e.state == LcmState::InFlight => break,
                _ => self.settled += 1,
            }
        }
    }

    fn on_ack(&mut self, now_ns: u64, rto_ns: u64, ack: &Packet, pm: &mut PacketManager) {
        let nxt = self.nxt();
        let mut newly = 0;
        // SACK blocks: packets of one class arrive in order, so only the
        // part of a block above the highest end seen can be news; what an
        // ACK loss hid there the cumulative ACK or a later block reports.
        for (s, e) in ack.sack_blocks() {
            let from = s.max(self.sack_mark).max(self.una);
            for seq in from..e.min(nxt) {
                newly += self.deliver(seq, pm);
            }
            self.sack_mark = self.sack_mark.max(e);
        }
        // The cumulative ACK passes packets the receiver skipped (below its
        // skip point, see `Packet::settled_below`; each LCM ACK carries it in
        // `tag`, as the distance below its cumulative ACK) and packets it
        // received: those at or above the skip point arrived, even if given
        // up on meanwhile.
        let cum = ack.seq.min(nxt);
        let skip_point = ack.seq.saturating_sub(u64::from(ack.tag));
        while self.una < cum {
            let state = self.entries.front().map(|e| e.state);
            if state == Some(LcmState::InFlight) || (state == Some(LcmState::Lost) && self.una >= skip_point) {
                newly += self.deliver(self.una, pm);
            }
            self.entries.pop_front();
            self.una += 1;
        }
        // Everything DupThresh below the highest packet acknowledged is lost.
        let highest = self.sack_mark.max(cum);
        self.loss_scan = self.loss_scan.max(self.una);
        while self.loss_scan + LCM_DUPTHRESH < highest {
            self.lose(self.loss_scan, pm);
            self.loss_scan += 1;
        }
        self.settled = self.settled.max(self.una);
        self.advance_settled();
        if newly > 0 {
            self.counters.acked_pkts += newly;
            self.rule.on_acked(newly);
            // RFC 6298 (5.3): restart the timer on new data acknowledged.
            self.timer_ns = (self.in_flight > 0).then(|| now_ns + rto_ns + self.ack_delay_ns);
        } else if self.in_flight == 0 {
            self.timer_ns = None;
        }
    }

    /// The retransmission timer expired: everything in flight is lost and
    /// cwnd = gamma * cwnd (sect. 3.1).
    fn on_timeout(&mut self, pm: &mut PacketManager) {
        self.counters.timeouts += 1;
        for seq in self.settled..self.nxt() {
            self.lose(seq, pm);
        }
        self.loss_scan = self.nxt();
        self.advance_settled();
        self.rule.on_timeout();
        self.timer_ns = None;
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PltCounters {
    /// Data packets sent by both modules.
    pub sent_pkts: u64,
    pub sent_bytes: u64,
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
        f.debug_struct("PltSender").field("hcm", &self.hcm).field("lcm", &self.lcm.counters).finish()
    }
}

impl PltSender {
    /// `hcm` is the high-priority module: a TCP sender over its own packet
    /// numbers (its size limit is the packet manager's, not its own).
    pub fn new(
        flow: u32,
        tcp: TcpConfig,
        plt: &PltConfig,
        hcm_cc: Box<dyn CongestionControl>,
        total_pkts: Option<u64>,
    ) -> Self {
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
    pub fn counters(&self) -> PltCounters {
        let h = &self.hcm.counters;
        let lcm_sent = self.lcm.counters.sent_pkts;
        PltCounters {
            sent_pkts: h.sent_pkts + lcm_sent,
            sent_bytes: h.sent_bytes + lcm_sent * u64::from(self.packet_size_bytes()),
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
                self.lcm.rule.restart(if freed.is_finite() { freed } else { 0.0 });
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
}

/// Connection-level reassembly: which packets arrived, and how far the
/// data is complete in order.
#[derive(Debug, Default)]
struct Reassembly {
    nxt: u64,
    /// `held[i]`: packet `nxt + i` arrived (so `held[0]` is false).
    held: VecDeque<bool>,
}

impl Reassembly {
    /// Packet `d` arrived. Returns (first arrival, packets now in order).
    fn receive(&mut self, d: u64) -> (bool, u64) {
        if d < self.nxt {
            return (false, 0);
        }
        let i = (d - self.nxt) as usize;
        if i >= self.held.len() {
            self.held.resize(i + 1, false);
        }
        if self.held[i] {
            return (false, 0);
        }
        self.held[i] = true;
        let mut n = 0;
        while self.held.front() == Some(&true) {
            self.held.pop_front();
            self.nxt += 1;
            n += 1;
        }
        (true, n)
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PltReceiverCounters {
    /// Packets that arrived first through each module (goodput contributed).
    pub hcm_new_pkts: u64,
    pub lcm_new_pkts: u64,
    /// Copies of data that had already arrived.
    pub duplicate_pkts: u64,
}

/// The receiving side of a PLT connection.
#[derive(Debug)]
pub struct PltReceiver {
    hcm: TcpReceiver,
    lcm: TcpReceiver,
    data: Reassembly,
    payload_bytes: u64,
    lcm_ack_class: u8,
    /// The highest LCM packet number the receiver skipped to: below it,
    /// packets may not have arrived; at or above it, every one passed did.
    lcm_skip_point: u64,
    /// Connection-level: packets delivered in order to the application.
    pub counters: ReceiverCounters,
    pub plt: PltReceiverCounters,
}

impl PltReceiver {
    pub fn new(flow: u32, tcp: TcpConfig, plt: &PltConfig) -> Self {
        let lcm_cfg = TcpConfig {
            delayed_ack_timeout_ns: (plt.lcm_ack_every_pkts > 1).then_some(plt.lcm_ack_timeout_ns),
            delayed_ack_every_pkts: plt.lcm_ack_every_pkts,
            // The LCM acknowledges by its own rule (sect. 3.2.2), not Linux's.
            linux_acks: false,
            ..tcp.clone()
        };
        Self {
            payload_bytes: tcp.payload_bytes(),
            hcm: TcpReceiver::new(flow, tcp),
            lcm: TcpReceiver::new(flow, lcm_cfg),
            data: Reassembly::default(),
            lcm_ack_class: plt.lcm_ack_class,
            lcm_skip_point: 0,
            counters: ReceiverCounters::default(),
            plt: PltReceiverCounters::default(),
        }
    }

    /// The connection's next in-order packet.
    pub fn data_nxt(&self) -> u64 {
        self.data.nxt
    }

    /// LCM ACKs: the LCM's module and ACK class, and in `tag` how far below
    /// the cumulative ACK the receiver last skipped (u32::MAX: further).
    fn mark_lcm_acks(&self, first: usize, out: &mut Outbox) {
        for a in &mut out.packets[first..] {
            a.module = MODULE_LCM;
            a.class = self.lcm_ack_class;
            a.tag = u32::try_from(a.seq - self.lcm_skip_point).unwrap_or(u32::MAX);
        }
    }

    pub fn on_data(&mut self, now_ns: u64, pkt: &Packet, out: &mut Outbox) {
        self.counters.received_pkts += 1;
        let first = out.packets.len();
        if pkt.module == MODULE_LCM {
            let to = pkt.settled_below();
            if to > self.lcm.rcv_nxt() {
                self.lcm.skip_to(to);
                self.lcm_skip_point = to;
            }
            self.lcm.on_data(now_ns, pkt, out);
            self.mark_lcm_acks(first, out);
        } else {
            self.hcm.on_data(now_ns, pkt, out);
        }
        self.counters.acks_sent += (out.packets.len() - first) as u64;
        let (new, in_order) = self.data.receive(pkt.data_seq());
        if !new {
            self.counters.duplicate_pkts += 1;
        } else if pkt.module == MODULE_LCM {
            self.plt.lcm_new_pkts += 1;
        } else {
            self.plt.hcm_new_pkts += 1;
        }
        self.counters.delivered_pkts += in_order;
        self.counters.delivered_bytes += in_order * self.payload_bytes;
    }

    pub fn on_delack_timer(&mut self, now_ns: u64, out: &mut Outbox) {
        let first = out.packets.len();
        self.hcm.on_delack_timer(now_ns, out);
        let lcm_first = out.packets.len();
        self.lcm.on_delack_timer(now_ns, out);
        self.mark_lcm_acks(lcm_first, out);
        self.counters.acks_sent += (out.packets.len() - first) as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plt_config() -> PltConfig {
        PltConfig {
            lcm: LcmConfig::default(),
            epoch_ns: 100_000_000,
            lcm_initial_window_pkts: 4.0,
            lcm_class: 1,
            lcm_ack_class: 1,
            lcm_ack_every_pkts: 1,
            lcm_ack_timeout_ns: 40_000_000,
            receive_buffer_pkts: u64::MAX,
            lcm_resend_ratio: None,
        }
    }

    #[test]
    fn an_lcm_loss_goes_to_the_hcm_exactly_once_before_new_data() {
        let mut pm = PacketManager::new(Some(6), u64::MAX);
        let (a, b, c) = (pm.lcm_data().unwrap(), pm.lcm_data().unwrap(), pm.lcm_data().unwrap());
        assert_eq!((a, b, c), (0, 1, 2));
        pm.lcm_lost(b);
        pm.lcm_lost(b); // reported twice: queued once
        assert_eq!(pm.queued(), 1);
        // Limit: HCM's next number + 1 queued + 3 unsent.
        assert_eq!(pm.hcm_send_limit(0), 4);
        assert_eq!(pm.hcm_data(0), b, "the loss before new data");
        assert_eq!(pm.lcm_losses_resent, 1);
        assert_eq!(pm.hcm_data(1), 3, "then new data");
        assert_eq!(pm.hcm_data(0), b, "an HCM retransmission carries the same data");
        pm.lcm_lost(b); // the LCM cannot lose it again: the HCM owns it
        assert_eq!(pm.queued(), 0);
        assert_eq!(pm.lcm_losses_resent, 1);
        // Acknowledgments: a (LCM), then the HCM's first two packets (b, 3).
        pm.acked(a);
        assert_eq!(pm.data_una(), 1);
        pm.hcm_acked_below(2);
        assert_eq!(pm.data_una(), 2, "c (2) is still out");
        pm.acked(c);
        assert_eq!(pm.data_una(), 4);
        assert!(!pm.is_complete());
        assert_eq!((pm.hcm_data(2), pm.hcm_data(3)), (4, 5));
        pm.hcm_acked_below(4);
        assert!(pm.is_complete());
    }

    #[test]
    fn a_queued_loss_acknowledged_late_is_not_resent() {
        let mut pm = PacketManager::new(None, u64::MAX);
        let (a, b) = (pm.lcm_data().unwrap(), pm.lcm_data().unwrap());
        pm.lcm_lost(a);
        pm.lcm_lost(b);
        assert_eq!(pm.queued(), 2);
        pm.acked(a); // the LCM's ACK came after all
        assert_eq!(pm.queued(), 1);
        assert_eq!(pm.hcm_data(0), b, "a is skipped");
        assert_eq!(pm.lcm_losses_resent, 1);
        assert_eq!(pm.queued(), 0);
    }

    #[test]
    fn packets_given_up_on_at_a_timeout_that_arrived_are_credited() {
        let mut s = sender(None);
        let mut out = Outbox::default();
        s.start(0, &mut out);
        let lcm: Vec<Packet> = out.packets.iter().copied().filter(|p| p.module == MODULE_LCM).collect();
        // The LCM's timer fires before any ACK: all four are given up on.
        let t = s.lcm().timer_ns.unwrap();
        let mut out = Outbox::default();
        s.on_rto_timer(t, &mut out);
        assert_eq!(s.lcm().counters.timeouts, 1);
        assert_eq!(s.manager().queued() + s.manager().lcm_losses_resent, 4);
        // They had all arrived: the receiver was never told to skip them,
        // so its cumulative ACK of 4 proves it.
        let tcp = TcpConfig { packet_size_bytes: 1000, ..TcpConfig::default() };
        let mut r = PltReceiver::new(7, tcp, &plt_config());
        let mut acks = Outbox::default();
        for p in &lcm {
            r.on_data(1, p, &mut acks);
        }
        let last = *acks.packets.last().unwrap();
        assert_eq!(last.seq, 4);
        s.on_ack(t + 1, &last, &mut out);
        assert_eq!(s.lcm().counters.late_acked_pkts, 4);
        assert_eq!(s.manager().queued(), 0, "nothing left to resend");
    }

    #[test]
    fn reassembly_delivers_exactly_in_order() {
        let mut r = Reassembly::default();
        assert_eq!(r.receive(2), (true, 0));
        assert_eq!(r.receive(0), (true, 1));
        assert_eq!(r.receive(2), (false, 0), "a duplicate");
        assert_eq!(r.receive(1), (true, 2));
        assert_eq!(r.receive(0), (false, 0));
        assert_eq!(r.nxt, 3);
        assert!(r.held.is_empty());
    }

    fn sender(total: Option<u64>) -> PltSender {
        let tcp = TcpConfig { packet_size_bytes: 1000, ..TcpConfig::default() };
        let cc = longfat_cc::build("reno", &Default::default(), tcp.initial_window).unwrap();
        PltSender::new(7, tcp, &plt_config(), cc, total)
    }

    #[test]
    fn modules_mark_their_packets_and_share_one_sequence_space() {
        let mut s = sender(None);
        let mut out = Outbox::default();
        s.start(0, &mut out);
        let hcm: Vec<&Packet> = out.packets.iter().filter(|p| p.module == MODULE_HCM).collect();
        let lcm: Vec<&Packet> = out.packets.iter().filter(|p| p.module == MODULE_LCM).collect();
        let iw = TcpConfig::default().initial_window.cwnd_pkts as usize;
        assert_eq!(hcm.len(), iw);
        assert_eq!(lcm.len(), 4, "the LCM's initial window");
        assert!(hcm.iter().all(|p| p.class == 0 && p.kind == PacketKind::Data));
        assert!(lcm.iter().all(|p| p.class == 1 && p.settled_below() == 0));
        let mut data: Vec<u64> = out.packets.iter().map(|p| p.data_seq()).collect();
        data.sort_unstable();
        assert_eq!(data, (0..(iw + 4) as u64).collect::<Vec<_>>(), "every data packet once");
        // Each module numbers its own packets from 0.
        assert_eq!(hcm.iter().map(|p| p.seq).collect::<Vec<_>>(), (0..iw as u64).collect::<Vec<_>>());
        assert_eq!(lcm.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![0, 1, 2, 3]);
    }

    #[test]
    fn receiver_acks_each_module_in_its_class_and_skips_settled_lcm_losses() {
        let tcp = TcpConfig { packet_size_bytes: 1000, ..TcpConfig::default() };
        let mut r = PltReceiver::new(7, tcp.clone(), &plt_config());
        let mut s = sender(None);
        let mut out = Outbox::default();
        s.start(0, &mut out);
        let pkts = std::mem::take(&mut out.packets);
        let lcm: Vec<Packet> = pkts.iter().copied().filter(|p| p.module == MODULE_LCM).collect();
        let hcm: Vec<Packet> = pkts.iter().copied().filter(|p| p.module == MODULE_HCM).collect();
        let mut acks = Outbox::default();
        r.on_data(1, &hcm[0], &mut acks);
        r.on_data(1, &lcm[1], &mut acks); // LCM packet 0 is lost
        assert_eq!(acks.packets.len(), 2);
        let (ha, la) = (acks.packets[0], acks.packets[1]);
        assert_eq!((ha.module, ha.class, ha.seq), (MODULE_HCM, 0, 1));
        assert_eq!((la.module, la.class, la.seq), (MODULE_LCM, 1, 0));
        assert_eq!(la.sack_blocks().collect::<Vec<_>>(), vec![(1, 2)]);
        // The sender gives up on LCM 0; a later LCM packet says so and the
        // receiver's LCM cumulative ACK moves past it.
        let mut late = lcm[3];
        late.set_settled_below(1);
        r.on_data(2, &late, &mut acks);
        assert_eq!(acks.packets[2].seq, 2, "0 skipped, 1 held; 2 is the next expected");
        // With lcm_ack_class = high, LCM ACKs go out in the HCM's class.
        let cfg = PltConfig { lcm_ack_class: 0, ..plt_config() };
        let mut r = PltReceiver::new(7, tcp, &cfg);
        let mut acks = Outbox::default();
        r.on_data(1, &lcm[0], &mut acks);
        assert_eq!((acks.packets[0].module, acks.packets[0].class), (MODULE_LCM, 0));
    }

    #[test]
    fn lcm_acks_every_n_packets_when_asked() {
        let tcp = TcpConfig { packet_size_bytes: 1000, ..TcpConfig::default() };
        let cfg = PltConfig { lcm_ack_every_pkts: 3, lcm_initial_window_pkts: 6.0, ..plt_config() };
        let mut r = PltReceiver::new(7, tcp.clone(), &cfg);
        let cc = longfat_cc::build("reno", &Default::default(), tcp.initial_window).unwrap();
        let mut s = PltSender::new(7, tcp, &cfg, cc, None);
        let mut out = Outbox::default();
        s.start(0, &mut out);
        let mut acks = Outbox::default();
        for p in out.packets.iter().filter(|p| p.module == MODULE_LCM) {
            r.on_data(1, p, &mut acks);
        }
        let lcm_acks: Vec<u64> = acks.packets.iter().filter(|a| a.module == MODULE_LCM).map(|a| a.seq).collect();
        assert_eq!(lcm_acks, vec![3, 6]);
    }

    #[test]
    fn lcm_finds_losses_three_packets_back_and_hands_them_to_the_hcm() {
        let mut s = sender(None);
        let mut out = Outbox::default();
        s.start(0, &mut out);
        let sent = std::mem::take(&mut out.packets);
        let lcm: Vec<Packet> = sent.iter().copied().filter(|p| p.module == MODULE_LCM).collect();
        let hcm: Vec<Packet> = sent.iter().copied().filter(|p| p.module == MODULE_HCM).collect();
        let tcp = TcpConfig { packet_size_bytes: 1000, ..TcpConfig::default() };
        let mut r = PltReceiver::new(7, tcp, &plt_config());
        let mut acks = Outbox::default();
        for p in &lcm[1..3] {
            r.on_data(10_000_000, p, &mut acks); // LCM packet 0 lost
        }
        for a in std::mem::take(&mut acks.packets) {
            s.on_ack(20_000_000, &a, &mut out);
        }
        assert_eq!(s.lcm().counters.lost_pkts, 0, "two later packets are not enough");
        r.on_data(10_000_000, &lcm[3], &mut acks);
        for a in std::mem::take(&mut acks.packets) {
            s.on_ack(20_000_000, &a, &mut out);
        }
        assert_eq!(s.lcm().counters.lost_pkts, 1, "three later packets acknowledged");
        assert_eq!(s.manager().queued(), 1);
        // The HCM's window is full; its first ACK lets it send the loss
        // before any new data.
        assert!(out.packets.iter().all(|p| p.module == MODULE_LCM));
        r.on_data(10_000_000, &hcm[0], &mut acks);
        out.packets.clear();
        for a in std::mem::take(&mut acks.packets) {
            s.on_ack(20_000_000, &a, &mut out);
        }
        let first_hcm = out.packets.iter().find(|p| p.module == MODULE_HCM).expect("the HCM sent");
        assert_eq!(first_hcm.data_seq(), lcm[0].data_seq());
        assert_eq!(s.manager().lcm_losses_resent, 1);
        assert_eq!(s.manager().queued(), 0);
    }
}
