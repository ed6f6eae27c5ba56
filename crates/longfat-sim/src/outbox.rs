//! What an endpoint hands back to the engine after handling an event.
//!
//! Endpoints (TCP sender and receiver, UDP sources) import this module; the
//! engine (`sim.rs`) imports the endpoints. Nothing here knows about either,
//! so the dependency runs one way.

use crate::event::TimerKind;
use crate::packet::Packet;

/// Packets to inject at the first hop of their route and timers to
/// (re)arm, plus the room the sending host's own queue has left. Reused,
/// never freed.
#[derive(Debug)]
pub struct Outbox {
    pub packets: Vec<Packet>,
    pub timers: Vec<(TimerKind, u64)>,
    /// Packets the sending host's queue (its access link) accepts now; set by
    /// the engine before it calls a TCP sender. A sender never pushes more
    /// data packets than this in one call: like Linux's qdisc back-pressure
    /// and TCP small queues, a host does not drop its own TCP packets, it
    /// waits until the queue has room.
    pub host_room_pkts: u64,
    /// Set by a sender that stopped because `host_room_pkts` ran out while it
    /// still had packets to send: the engine wakes it (`TimerKind::HostReady`)
    /// when the host queue next frees a slot.
    pub host_blocked: bool,
}

impl Default for Outbox {
    fn default() -> Self {
        Self {
            packets: Vec::new(),
            timers: Vec::new(),
            host_room_pkts: u64::MAX,
            host_blocked: false,
        }
    }
}

impl Outbox {
    /// True while a sender may push one more data packet.
    pub fn has_host_room(&self) -> bool {
        (self.packets.len() as u64) < self.host_room_pkts
    }
}
