//! The low-priority control module (sect. 3.1): its own packet numbers,
//! loss detection and timer, and the loss-rate MIMD window of
//! `longfat_cc::plt`.

use std::collections::VecDeque;

use longfat_cc::plt::LcmRule;

use crate::outbox::Outbox;
use crate::packet::{Dir, Packet, PacketKind, MODULE_LCM};
use crate::plt::manager::PacketManager;
use crate::plt::PltConfig;
use crate::tcp::TcpConfig;

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
    pub(super) rule: LcmRule,
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
    pub(super) cwnd_limited: bool,
    max_burst_pkts: u64,
    /// Extra wait before a timeout when the receiver delays LCM ACKs.
    ack_delay_ns: u64,
    resend_ratio: Option<f64>,
    /// When the oldest packet in flight is given up on.
    pub(super) timer_ns: Option<u64>,
    pub counters: LcmCounters,
}

impl Lcm {
    pub(super) fn new(flow: u32, tcp: &TcpConfig, plt: &PltConfig) -> Self {
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
            ack_delay_ns: if plt.lcm_ack_every_pkts > 1 {
                plt.lcm_ack_timeout_ns
            } else {
                0
            },
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
    pub(super) fn send(
        &mut self,
        now_ns: u64,
        rto_ns: u64,
        hcm_cwnd: f64,
        pm: &mut PacketManager,
        out: &mut Outbox,
    ) {
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
            let resend = self
                .resend_ratio
                .is_some_and(|r| pm.queued() as f64 > r * hcm_cwnd);
            let next = if resend {
                pm.lcm_resend().or_else(|| pm.lcm_data())
            } else {
                pm.lcm_data()
            };
            let Some(d) = next else { break };
            let seq = self.nxt();
            self.entries.push_back(LcmEntry {
                data_seq: d,
                state: LcmState::InFlight,
            });
            self.in_flight += 1;
            let mut p = Packet::new(
                self.flow,
                PacketKind::Data,
                Dir::Forward,
                self.packet_size_bytes,
            );
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
        let Some(e) = self.entry_mut(seq) else {
            return 0;
        };
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

    pub(super) fn on_ack(
        &mut self,
        now_ns: u64,
        rto_ns: u64,
        ack: &Packet,
        pm: &mut PacketManager,
    ) {
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
            if state == Some(LcmState::InFlight)
                || (state == Some(LcmState::Lost) && self.una >= skip_point)
            {
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
    pub(super) fn on_timeout(&mut self, pm: &mut PacketManager) {
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
