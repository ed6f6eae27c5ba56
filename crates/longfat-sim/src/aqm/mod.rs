//! Active queue management: the decisions of RED (with gentle mode and
//! adaptive max_p), CoDel (RFC 8289), FQ-CoDel (RFC 8290) and PIE
//! (RFC 8033), each in its own file, with no engine dependency. A link
//! whose discipline is one of them (module `link`) asks its AQM at enqueue
//! and at dequeue, and turns a [`Verdict::Congested`] into a CE mark for an
//! ECN-capable packet when the discipline marks (its `ecn` parameter), else
//! into a drop.
//!
//! Each AQM is deterministic: its random draws come from the link's own
//! seeded stream, passed in as a `u64` draw or an `RngCore`.

/// An AQM's decision on one packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Let it through.
    Pass,
    /// Signal congestion with this packet: CE-mark it if it is ECN-capable
    /// and the discipline marks, else drop it.
    Congested,
    /// Drop it whatever its ECN codepoint (a full buffer, or an AQM rule
    /// that drops even ECN-capable packets, e.g. RED above max_th without
    /// gentle mode, RFC 3168 §7).
    Drop,
}

pub mod codel;
pub mod fq_codel;

/// A packet waiting in an AQM's queue: the link's handle for it, what the
/// link carries with it, and when it was queued (for its sojourn time).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Queued {
    pub handle: u32,
    pub size_bytes: u16,
    /// Corrupted on the wire (drawn at enqueue, as on every link).
    pub corrupted: bool,
    pub enqueue_ns: u64,
}
pub mod pie;
pub mod red;

/// Test helpers the AQM machines share.
#[cfg(test)]
pub(crate) mod testing {
    use rand_core::RngCore;

    /// An RNG whose draws are all the same value u (in [0, 1)).
    pub struct Fixed(u64);
    impl RngCore for Fixed {
        fn next_u32(&mut self) -> u32 {
            (self.0 >> 32) as u32
        }
        fn next_u64(&mut self) -> u64 {
            self.0
        }
        fn fill_bytes(&mut self, dst: &mut [u8]) {
            dst.fill(self.0 as u8);
        }
    }

    /// A `Fixed` whose uniform draw (53 bits, as rand's f64) is `u`.
    pub fn fixed(u: f64) -> Fixed {
        Fixed(((u * (1u64 << 53) as f64) as u64) << 11)
    }
}
