//! The receiving side of a PLT connection: a SACK receiver per module and
//! the connection's reassembly.

use std::collections::VecDeque;
use std::sync::Arc;

use crate::outbox::Outbox;
use crate::packet::{Packet, MODULE_LCM};
use crate::plt::PltConfig;
use crate::tcp::receiver::{ReceiverCounters, TcpReceiver};
use crate::tcp::TcpConfig;

/// Connection-level reassembly: which packets arrived, and how far the
/// data is complete in order.
#[derive(Debug, Default)]
pub(super) struct Reassembly {
    pub(super) nxt: u64,
    /// `held[i]`: packet `nxt + i` arrived (so `held[0]` is false).
    pub(super) held: VecDeque<bool>,
}

impl Reassembly {
    /// Packet `d` arrived. Returns (first arrival, packets now in order).
    pub(super) fn receive(&mut self, d: u64) -> (bool, u64) {
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
    pub fn new(flow: u32, tcp: impl Into<Arc<TcpConfig>>, plt: &PltConfig) -> Self {
        let tcp: Arc<TcpConfig> = tcp.into();
        let lcm_cfg = TcpConfig {
            delayed_ack_timeout_ns: (plt.lcm_ack_every_pkts > 1).then_some(plt.lcm_ack_timeout_ns),
            delayed_ack_every_pkts: plt.lcm_ack_every_pkts,
            // The LCM acknowledges by its own rule (sect. 3.2.2), not Linux's.
            linux_acks: false,
            ..TcpConfig::clone(&tcp)
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
