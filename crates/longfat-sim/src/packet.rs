//! Packets, and the pool that holds those in the network.
//!
//! An endpoint builds a packet by value; the engine stores it once in the
//! pool and links pass its 4-byte handle hop by hop, so a packet is written
//! once and read at each hop, never copied along its route. Freed slots are
//! reused last-in first-out, so new packets land in memory that is still in
//! the cache. No allocation per packet once the pool has grown.

/// Most SACK blocks an ACK carries (RFC 2018 with timestamps: 3).
pub const MAX_SACK_BLOCKS: usize = 3;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacketKind {
    Data,
    Ack,
    Udp,
}

/// The ECN field of a packet's IP header (RFC 3168 §5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ecn {
    /// Not-ECT (00): the transport is not ECN-capable; an AQM drops.
    NotEct = 0,
    /// ECT(1) (01).
    Ect1 = 1,
    /// ECT(0) (10): what an RFC 3168 sender sets on its data.
    Ect0 = 2,
    /// CE (11): congestion experienced, set by an AQM instead of a drop.
    Ce = 3,
}

/// Which of a flow's two routes a packet follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    /// Sender to receiver (data, UDP).
    Forward,
    /// Receiver to sender (ACKs).
    Backward,
}

/// A packet, 64 bytes aligned to 64: exactly one cache line, so reading a
/// packet at a hop costs at most one miss (and one prefetch covers it).
/// Links hold every packet in flight, so its size is most of a run's memory
/// traffic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(align(64))]
pub struct Packet {
    pub flow: u32,
    /// Controller tag (data) or its echo (ACK).
    pub tag: u32,
    /// Data: packet number. ACK: cumulative ACK (next packet expected).
    pub seq: u64,
    /// TSval: the sending host's clock at send time.
    pub ts_val: u64,
    /// TSecr: ACKs echo the TSval of the data packet that triggered them.
    pub ts_ecr: u64,
    /// SACK blocks [seq + start, seq + end), most recent first. Blocks lie
    /// above the cumulative ACK and within one receive window (at most 2^30
    /// bytes, RFC 7323), so 32-bit offsets from `seq` hold them.
    sack: [(u32, u32); MAX_SACK_BLOCKS],
    /// At most 65,535 (the scenario's `packet_size` range).
    pub size_bytes: u16,
    pub kind: PacketKind,
    pub dir: Dir,
    /// Index into the route of the link the packet is on.
    pub hop: u8,
    /// Strict-priority class (0 is served first).
    pub class: u8,
    /// Bits 0-1: SACK blocks carried (0..=3); bits 2-3: the [`Ecn`]
    /// codepoint; bit 4: ECE; bit 5: CWR (RFC 3168 §6.1, TCP header flags).
    bits: u8,
    /// Which control module of a PLT connection sent the packet or the data
    /// packet an ACK answers ([`MODULE_HCM`] for every other TCP packet).
    pub module: u8,
}

/// PLT's high-priority control module, and any TCP connection's only one.
pub const MODULE_HCM: u8 = 0;
/// PLT's low-priority control module.
pub const MODULE_LCM: u8 = 1;

const _: () = assert!(std::mem::size_of::<Packet>() == 64);

/// [`Packet`]'s `bits`.
const SACK_MASK: u8 = 0b11;
const ECN_SHIFT: u8 = 2;
const ECE_BIT: u8 = 1 << 4;
const CWR_BIT: u8 = 1 << 5;
const _: () = assert!(MAX_SACK_BLOCKS as u8 <= SACK_MASK);

impl Packet {
    pub fn new(flow: u32, kind: PacketKind, dir: Dir, size_bytes: u32) -> Self {
        Self {
            flow,
            kind,
            dir,
            hop: 0,
            class: 0,
            size_bytes: u16::try_from(size_bytes)
                .expect("packet sizes are validated to 65535 bytes"),
            seq: 0,
            ts_val: 0,
            ts_ecr: 0,
            tag: 0,
            bits: 0,
            sack: [(0, 0); MAX_SACK_BLOCKS],
            module: MODULE_HCM,
        }
    }

    // A data packet carries no SACK blocks; a PLT data packet uses their
    // room for its connection-level sequence number and, from the LCM, the
    // point below which every LCM packet is settled.

    /// PLT data: the connection-level packet number this packet carries.
    pub fn data_seq(&self) -> u64 {
        debug_assert!(self.kind == PacketKind::Data);
        u64::from(self.sack[0].0) | (u64::from(self.sack[0].1) << 32)
    }

    pub fn set_data_seq(&mut self, d: u64) {
        debug_assert!(self.kind == PacketKind::Data);
        self.sack[0] = (d as u32, (d >> 32) as u32);
    }

    /// LCM data: every LCM packet below this number has been acknowledged
    /// or given up on (its data handed to the HCM), so the receiver may
    /// move its LCM cumulative ACK past holes below it (like PR-SCTP's
    /// FORWARD-TSN, RFC 3758). At most `seq`.
    pub fn settled_below(&self) -> u64 {
        debug_assert!(self.kind == PacketKind::Data);
        self.seq - u64::from(self.sack[1].0)
    }

    pub fn set_settled_below(&mut self, s: u64) {
        debug_assert!(self.kind == PacketKind::Data && s <= self.seq);
        self.sack[1].0 =
            u32::try_from(self.seq - s).expect("the settled point lies within one window");
    }

    #[inline(always)]
    fn n_sack(&self) -> u8 {
        self.bits & SACK_MASK
    }

    /// The IP header's ECN codepoint.
    #[inline(always)]
    pub fn ecn(&self) -> Ecn {
        match (self.bits >> ECN_SHIFT) & 3 {
            0 => Ecn::NotEct,
            1 => Ecn::Ect1,
            2 => Ecn::Ect0,
            _ => Ecn::Ce,
        }
    }

    #[inline(always)]
    pub fn set_ecn(&mut self, e: Ecn) {
        self.bits = (self.bits & !(3 << ECN_SHIFT)) | ((e as u8) << ECN_SHIFT);
    }

    /// ECN-capable transport: ECT(0) or ECT(1), which an AQM may mark CE.
    #[inline(always)]
    pub fn is_ect(&self) -> bool {
        matches!(self.ecn(), Ecn::Ect0 | Ecn::Ect1)
    }

    /// TCP's ECE flag (an ACK echoing a CE mark).
    #[inline(always)]
    pub fn ece(&self) -> bool {
        self.bits & ECE_BIT != 0
    }

    #[inline(always)]
    pub fn set_ece(&mut self, on: bool) {
        self.bits = if on {
            self.bits | ECE_BIT
        } else {
            self.bits & !ECE_BIT
        };
    }

    /// TCP's CWR flag (the sender reduced its window for an ECE).
    #[inline(always)]
    pub fn cwr(&self) -> bool {
        self.bits & CWR_BIT != 0
    }

    #[inline(always)]
    pub fn set_cwr(&mut self, on: bool) {
        self.bits = if on {
            self.bits | CWR_BIT
        } else {
            self.bits & !CWR_BIT
        };
    }

    /// The SACK blocks [start, end), in packet numbers, most recent first.
    pub fn sack_blocks(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.sack[..usize::from(self.n_sack())]
            .iter()
            .map(|&(a, b)| (self.seq + u64::from(a), self.seq + u64::from(b)))
    }

    /// Appends a SACK block at or above the cumulative ACK `seq` (set `seq`
    /// first). Returns false if the ACK already carries it or is full.
    pub fn push_sack(&mut self, (start, end): (u64, u64)) -> bool {
        debug_assert!(self.seq <= start && start < end);
        let off =
            |x: u64| u32::try_from(x - self.seq).expect("a SACK block lies within one window");
        let block = (off(start), off(end));
        let n = usize::from(self.n_sack());
        if n == MAX_SACK_BLOCKS || self.sack[..n].contains(&block) {
            return false;
        }
        self.sack[n] = block;
        self.bits += 1;
        true
    }

    /// `push_sack` for a block the caller knows the ACK does not carry yet
    /// and has room for (a receiver's recent blocks are distinct and at
    /// most `MAX_SACK_BLOCKS`): no search of the blocks already pushed.
    #[inline]
    pub fn push_distinct_sack(&mut self, (start, end): (u64, u64)) {
        debug_assert!(self.seq <= start && start < end);
        let off =
            |x: u64| u32::try_from(x - self.seq).expect("a SACK block lies within one window");
        let block = (off(start), off(end));
        let n = usize::from(self.n_sack());
        debug_assert!(!self.sack[..n].contains(&block), "a distinct block");
        self.sack[n] = block;
        self.bits += 1;
    }
}

/// A packet's handle in a [`PacketPool`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketId(pub u32);

/// The packets in the network, by handle.
#[derive(Debug, Default)]
pub struct PacketPool {
    packets: Vec<Packet>,
    free: Vec<PacketId>,
}

impl PacketPool {
    pub fn insert(&mut self, p: Packet) -> PacketId {
        self.insert_copy(&p)
    }

    /// `insert` from a reference: the packet is copied once, straight into
    /// its slot, instead of through a (cache-line aligned) stack copy.
    #[inline]
    pub fn insert_copy(&mut self, p: &Packet) -> PacketId {
        match self.free.pop() {
            Some(id) => {
                self.packets[id.0 as usize] = *p;
                id
            }
            None => {
                let id = u32::try_from(self.packets.len()).expect(
                    "fewer than 2^32 packets in the network (the memory budget bounds them)",
                );
                self.packets.push(*p);
                PacketId(id)
            }
        }
    }

    #[inline]
    pub fn get(&self, id: PacketId) -> &Packet {
        &self.packets[id.0 as usize]
    }

    #[inline]
    pub fn get_mut(&mut self, id: PacketId) -> &mut Packet {
        &mut self.packets[id.0 as usize]
    }

    /// Frees `id`'s slot for reuse.
    #[inline]
    pub fn remove(&mut self, id: PacketId) {
        self.free.push(id);
    }

    /// Starts loading `id`'s packet into the cache.
    #[inline]
    pub fn prefetch(&self, id: PacketId) {
        crate::prefetch::prefetch(self.packets.get(id.0 as usize));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ECN codepoint and the ECE/CWR flags share a byte with the SACK
    /// count: setting any of them leaves the others as they were.
    #[test]
    fn ecn_bits_and_sack_blocks_are_independent() {
        let mut p = Packet::new(0, PacketKind::Ack, Dir::Backward, 40);
        p.seq = 100;
        assert_eq!(
            (p.ecn(), p.ece(), p.cwr(), p.is_ect()),
            (Ecn::NotEct, false, false, false)
        );
        for e in [Ecn::Ect1, Ecn::Ect0, Ecn::Ce, Ecn::NotEct, Ecn::Ect0] {
            p.set_ecn(e);
            assert_eq!(p.ecn(), e);
        }
        assert!(p.is_ect());
        assert!(p.push_sack((105, 107)));
        p.set_ece(true);
        assert!(p.push_sack((110, 111)));
        p.set_cwr(true);
        p.set_ecn(Ecn::Ce);
        assert!(p.push_sack((120, 130)));
        assert!(!p.push_sack((140, 150)), "three blocks at most");
        assert_eq!(
            p.sack_blocks().collect::<Vec<_>>(),
            vec![(105, 107), (110, 111), (120, 130)]
        );
        assert_eq!(
            (p.ecn(), p.ece(), p.cwr(), p.is_ect()),
            (Ecn::Ce, true, true, false)
        );
        p.set_ece(false);
        assert_eq!((p.ecn(), p.ece(), p.cwr()), (Ecn::Ce, false, true));
        p.set_cwr(false);
        assert_eq!(
            (p.ecn(), p.ece(), p.cwr(), p.sack_blocks().count()),
            (Ecn::Ce, false, false, 3)
        );
    }
}
