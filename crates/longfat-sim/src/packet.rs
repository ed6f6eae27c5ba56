//! Packets travel by value (no heap allocation per packet).

/// Most SACK blocks an ACK carries (RFC 2018 with timestamps: 3).
pub const MAX_SACK_BLOCKS: usize = 3;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacketKind {
    Data,
    Ack,
    Udp,
}

/// Which of a flow's two routes a packet follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    /// Sender to receiver (data, UDP).
    Forward,
    /// Receiver to sender (ACKs).
    Backward,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet {
    pub flow: u32,
    pub kind: PacketKind,
    pub dir: Dir,
    /// Index into the route of the link the packet is on.
    pub hop: u8,
    /// Strict-priority class (0 is served first).
    pub class: u8,
    pub size_bytes: u32,
    /// Data: packet number. ACK: cumulative ACK (next packet expected).
    pub seq: u64,
    /// TSval: the sending host's clock at send time.
    pub ts_val: u64,
    /// TSecr: ACKs echo the TSval of the data packet that triggered them.
    pub ts_ecr: u64,
    /// Controller tag (data) or its echo (ACK).
    pub tag: u32,
    pub n_sack: u8,
    /// SACK blocks [start, end) in packet numbers, most recent first.
    pub sack: [(u64, u64); MAX_SACK_BLOCKS],
}

impl Packet {
    pub fn new(flow: u32, kind: PacketKind, dir: Dir, size_bytes: u32) -> Self {
        Self {
            flow,
            kind,
            dir,
            hop: 0,
            class: 0,
            size_bytes,
            seq: 0,
            ts_val: 0,
            ts_ecr: 0,
            tag: 0,
            n_sack: 0,
            sack: [(0, 0); MAX_SACK_BLOCKS],
        }
    }
    pub fn sack_blocks(&self) -> &[(u64, u64)] {
        &self.sack[..usize::from(self.n_sack)]
    }
}
