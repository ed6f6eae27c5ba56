//! Packet captures (`run.pcap`): the packets of chosen TCP flows as a tap
//! on their path sees them, kept as compact records during the run and
//! written afterwards as pcapng with real Ethernet/IPv4/TCP headers
//! (headers only: the captured length is the headers, the original length
//! the packet's size), nanosecond timestamps (`if_tsresol` = 9).
//!
//! A tap is a point on the flow's two routes: a packet is recorded as it
//! is handed to hop `h` of its route (`h` = the route's length: delivered
//! to its endpoint). The sender's tap records data as the sender hands it
//! to its access link (hop 0) and ACKs as they reach the sender; the
//! bottleneck's records data as it comes off the flow's first bottleneck
//! link and ACKs as they are handed to that hop's reverse link, both at the
//! bottleneck's receiver-side router. A packet dropped before the tap is
//! not seen; one dropped after it is.
//!
//! What is modelled and what is synthesised is in docs/scenarios.md
//! ("Packet captures").

use std::borrow::Cow;
use std::io::Write;
use std::time::Duration;

use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketBlock;
use pcap_file::pcapng::blocks::interface_description::{
    InterfaceDescriptionBlock, InterfaceDescriptionOption,
};
use pcap_file::pcapng::blocks::section_header::{SectionHeaderBlock, SectionHeaderOption};
use pcap_file::pcapng::PcapNgWriter;
use pcap_file::DataLink;

use crate::packet::{Dir, Packet, PacketKind, MAX_SACK_BLOCKS};

/// Where a capture's tap is (`run.pcap_tap`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tap {
    /// The sender's host, on its access link.
    Sender,
    /// The flow's first bottleneck link, at its receiver-side router.
    Bottleneck,
}

pub const TAPS: &[&str] = &["sender", "bottleneck"];

impl Tap {
    pub fn name(self) -> &'static str {
        match self {
            Tap::Sender => "sender",
            Tap::Bottleneck => "bottleneck",
        }
    }
}

/// Bytes each recorded packet takes in memory ([`Record`]).
pub const RECORD_BYTES: u64 = std::mem::size_of::<Record>() as u64;
/// Most bytes a record takes in the pcapng file: an Enhanced Packet Block
/// (32 bytes with its lengths and timestamp) around 14 + 20 + 60 header
/// bytes (a TCP header with timestamps and three SACK blocks).
pub const FILE_BYTES_PER_PACKET: u64 = 32 + 14 + 20 + 60;
/// The file's fixed blocks (section and interface headers) and the
/// synthesised handshake, with room.
pub const FILE_HEADER_BYTES: u64 = 512;

/// What one recorded packet needs for its headers: 64 bytes.
#[derive(Clone, Copy, Debug)]
struct Record {
    t_ns: u64,
    /// Data: packet number; ACK: cumulative ACK (next packet expected).
    seq: u64,
    ts_val: u64,
    ts_ecr: u64,
    /// SACK blocks as offsets from `seq` (as `Packet` holds them).
    sack: [(u32, u32); MAX_SACK_BLOCKS],
    /// An ACK: the window the receiver advertises, in packets (saturated).
    window_pkts: u32,
    /// Bit 0: an ACK; bits 1-2: the SACK blocks; bits 3-4: the ECN
    /// codepoint; bit 5: ECE; bit 6: CWR.
    bits: u8,
}

const _: () = assert!(std::mem::size_of::<Record>() == 64);

const ACK_BIT: u8 = 1;
const SACK_SHIFT: u8 = 1;
const ECN_SHIFT: u8 = 3;
const ECE_BIT: u8 = 1 << 5;
const CWR_BIT: u8 = 1 << 6;

impl Record {
    fn of(t_ns: u64, p: &Packet, window_pkts: u64) -> Self {
        let mut sack = [(0, 0); MAX_SACK_BLOCKS];
        let mut n = 0u8;
        if p.kind == PacketKind::Ack {
            for (i, (a, b)) in p.sack_blocks().enumerate() {
                sack[i] = ((a - p.seq) as u32, (b - p.seq) as u32);
                n += 1;
            }
        }
        let bits = u8::from(p.kind == PacketKind::Ack)
            | (n << SACK_SHIFT)
            | ((p.ecn() as u8) << ECN_SHIFT)
            | if p.ece() { ECE_BIT } else { 0 }
            | if p.cwr() { CWR_BIT } else { 0 };
        Self {
            t_ns,
            seq: p.seq,
            ts_val: p.ts_val,
            ts_ecr: p.ts_ecr,
            sack,
            window_pkts: u32::try_from(window_pkts).unwrap_or(u32::MAX),
            bits,
        }
    }

    fn is_ack(&self) -> bool {
        self.bits & ACK_BIT != 0
    }

    fn sack_blocks(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        let n = usize::from((self.bits >> SACK_SHIFT) & 3);
        self.sack[..n]
            .iter()
            .map(|&(a, b)| (self.seq + u64::from(a), self.seq + u64::from(b)))
    }
}

/// One captured flow: who it is and where its tap is.
#[derive(Clone, Debug)]
pub struct FlowTap {
    /// The flow's index in the run (flows.parquet's `flow`).
    pub flow: u32,
    pub name: String,
    /// Data packets are recorded as they are handed to this hop of the
    /// forward route, ACKs as they are handed to this hop of the backward
    /// route (a route's length: delivered).
    pub data_hop: u8,
    pub ack_hop: u8,
    /// Payload bytes per data packet (`packet_size - header_bytes`): the
    /// byte sequence space's step.
    pub payload_bytes: u32,
    /// The window the receiver can advertise at most, in packets
    /// (`tcp.rwnd`), which fixes the window scale.
    pub rwnd_pkts: u64,
    pub start_ns: u64,
    pub base_rtt_ns: u64,
    /// ECN negotiated (`tcp.ecn`): the handshake says so.
    pub ecn: bool,
}

/// The captures of a run: per captured flow, its tap and its records.
pub struct Captures {
    pub tap: Tap,
    /// Per flow of the run, its index in `flows`, or `NONE`.
    slot: Vec<u32>,
    flows: Vec<(FlowTap, Vec<Record>)>,
    /// How far the run has gone: a packet handed to a fed link ahead of
    /// time (`link::Cut`) is recorded with the later time it enters, and
    /// is not in the capture before the run gets there. (Unlimited until
    /// the engine first tells it.)
    until_ns: u64,
}

const NONE: u32 = u32::MAX;

impl Captures {
    pub fn new(tap: Tap, n_flows: usize, taps: Vec<FlowTap>) -> Self {
        let mut slot = vec![NONE; n_flows];
        for (i, t) in taps.iter().enumerate() {
            slot[t.flow as usize] = i as u32;
        }
        Self {
            tap,
            slot,
            flows: taps.into_iter().map(|t| (t, Vec::new())).collect(),
            until_ns: u64::MAX,
        }
    }

    /// The captured flow that records packet `p` as it is handed to hop
    /// `hop` of its route, if any.
    #[inline]
    pub fn wants(&self, p: &Packet, hop: usize) -> Option<usize> {
        let s = self.slot[p.flow as usize];
        if s == NONE {
            return None;
        }
        let t = &self.flows[s as usize].0;
        let at = match p.dir {
            Dir::Forward => t.data_hop,
            Dir::Backward => t.ack_hop,
        };
        (usize::from(at) == hop).then_some(s as usize)
    }

    /// Records `p` at `now_ns` for captured flow `slot`; `window_pkts`: for
    /// an ACK, the window its receiver advertises.
    pub fn record(&mut self, slot: usize, now_ns: u64, p: &Packet, window_pkts: u64) {
        self.flows[slot].1.push(Record::of(now_ns, p, window_pkts));
    }

    pub fn flows(&self) -> impl Iterator<Item = &FlowTap> {
        self.flows.iter().map(|(t, _)| t)
    }

    /// The run has gone up to `now_ns` (the engine tells it after each
    /// stretch it runs).
    pub fn run_until(&mut self, now_ns: u64) {
        self.until_ns = now_ns;
    }

    /// Captured flow `slot`'s records up to where the run has gone, in
    /// time order: a packet handed to a fed link ahead of time
    /// (`link::Cut`) is recorded with the time it enters, before packets
    /// the tap sees earlier. A stable sort keeps the order of records at
    /// one nanosecond.
    fn records(&self, slot: usize) -> Cow<'_, [Record]> {
        let records = &self.flows[slot].1;
        let sorted_and_seen = records.is_sorted_by_key(|r| r.t_ns)
            && records.last().is_none_or(|r| r.t_ns <= self.until_ns);
        if sorted_and_seen {
            return Cow::Borrowed(records);
        }
        let mut seen: Vec<Record> = self.seen(slot).copied().collect();
        seen.sort_by_key(|r| r.t_ns);
        Cow::Owned(seen)
    }

    /// Packets recorded for captured flow `slot`.
    pub fn packets(&self, slot: usize) -> usize {
        self.seen(slot).count()
    }

    /// Captured flow `slot`'s records up to where the run has gone, in the
    /// order they were taken (what counting and sizing need; writing needs
    /// `records`).
    fn seen(&self, slot: usize) -> impl Iterator<Item = &Record> {
        let until = self.until_ns;
        self.flows[slot].1.iter().filter(move |r| r.t_ns <= until)
    }

    /// Writes captured flow `slot` as pcapng.
    pub fn write_pcapng<W: Write>(&self, slot: usize, w: W) -> std::io::Result<W> {
        write_pcapng(&self.flows[slot].0, self.tap, &self.records(slot), w)
    }

    /// The length of [`Captures::write_pcapng`]'s file, in bytes, computed
    /// without writing it (so a front end can fill a buffer of exactly that
    /// size instead of growing one and copying it).
    pub fn pcapng_len(&self, slot: usize) -> u64 {
        let t = &self.flows[slot].0;
        let head = write_pcapng(t, self.tap, &[], Vec::new()).map_or(0, |v| v.len() as u64);
        let epb = |header_bytes: u64| 32 + header_bytes.next_multiple_of(4);
        head + self
            .seen(slot)
            .map(|r| {
                let sack = usize::from((r.bits >> SACK_SHIFT) & 3) as u64;
                epb(14 + 20 + 32 + if sack > 0 { 4 + 8 * sack } else { 0 })
            })
            .sum::<u64>()
    }
}

fn io_err(e: pcap_file::PcapError) -> std::io::Error {
    std::io::Error::other(e.to_string())
}

// ---- headers ----------------------------------------------------------------------------------

/// Both ends of a captured flow on the wire: addresses, ports, initial
/// sequence numbers, the window scale.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wire {
    pub sender_mac: [u8; 6],
    pub receiver_mac: [u8; 6],
    pub sender_ip: [u8; 4],
    pub receiver_ip: [u8; 4],
    pub sender_port: u16,
    pub receiver_port: u16,
    pub sender_isn: u32,
    pub receiver_isn: u32,
    /// RFC 7323 window scale both ends announce.
    pub window_scale: u8,
    pub payload_bytes: u32,
}

/// The largest TCP window: RFC 7323's 65535 << 14 bytes.
const MAX_WINDOW_BYTES: u64 = 65_535 << 14;

/// Fixed initial sequence numbers, the same for every flow (the addresses
/// tell flows apart).
pub const SENDER_ISN: u32 = 1_000_000_000;
pub const RECEIVER_ISN: u32 = 2_000_000_000;
/// The receiver's port: iperf3's.
pub const RECEIVER_PORT: u16 = 5201;

impl Wire {
    /// Flow `flow`'s addresses: the sender 10.64.x.y and the receiver
    /// 10.128.x.y (x.y: the flow's index + 1; 10.65 and 10.129 from 65,535 on),
    /// the sender's port 32768 + index mod 28,232 (Linux's ephemeral range);
    /// locally administered MACs 02:00 followed by the IPv4 address.
    pub fn of(t: &FlowTap) -> Self {
        let f = t.flow;
        let h = f + 1;
        let ip = |base: u8| [10, base + (h >> 16) as u8, (h >> 8) as u8, h as u8];
        let mac = |ip: [u8; 4]| [0x02, 0x00, ip[0], ip[1], ip[2], ip[3]];
        let (s, r) = (ip(64), ip(128));
        Self {
            sender_mac: mac(s),
            receiver_mac: mac(r),
            sender_ip: s,
            receiver_ip: r,
            sender_port: 32768 + (f % 28232) as u16,
            receiver_port: RECEIVER_PORT,
            sender_isn: SENDER_ISN,
            receiver_isn: RECEIVER_ISN,
            window_scale: window_scale(t.rwnd_pkts.saturating_mul(u64::from(t.payload_bytes))),
            payload_bytes: t.payload_bytes,
        }
    }
}

/// The smallest RFC 7323 shift (at most 14) that lets 16 bits hold a window
/// of `bytes`.
pub fn window_scale(bytes: u64) -> u8 {
    (0u8..14).find(|&s| bytes >> s <= 0xffff).unwrap_or(14)
}

/// A TCP timestamp on the wire: the host's clock in microseconds, mod 2^32
/// (the simulator's clocks count nanoseconds).
pub fn ts_us(ts_ns: u64) -> u32 {
    (ts_ns / 1000) as u32
}

pub const TCP_FIN: u8 = 0x01;
pub const TCP_SYN: u8 = 0x02;
pub const TCP_PSH: u8 = 0x08;
pub const TCP_ACK: u8 = 0x10;
pub const TCP_ECE: u8 = 0x40;
pub const TCP_CWR: u8 = 0x80;

/// One TCP segment's header fields (the options are built from them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    /// Sender to receiver (true) or back.
    pub forward: bool,
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    /// The raw window field (already scaled down).
    pub window: u16,
    /// The IP header's ECN codepoint.
    pub ecn: u8,
    pub ts_val: u32,
    pub ts_ecr: u32,
    /// SACK blocks, in bytes.
    pub sack: Vec<(u32, u32)>,
    /// A SYN: MSS, SACK-permitted, timestamps, window scale.
    pub syn: bool,
    pub payload_bytes: u32,
    pub ip_id: u16,
}

/// One's-complement sum of big-endian 16-bit words (RFC 1071).
fn sum16(mut acc: u32, bytes: &[u8]) -> u32 {
    let mut chunks = bytes.chunks_exact(2);
    for c in &mut chunks {
        acc += u32::from(u16::from_be_bytes([c[0], c[1]]));
    }
    if let [last] = chunks.remainder() {
        acc += u32::from(*last) << 8;
    }
    acc
}

fn fold(mut acc: u32) -> u16 {
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    !(acc as u16)
}

/// Writes segment `s`'s Ethernet, IPv4 and TCP headers into `buf` (cleared
/// first); returns the frame's original length (headers and payload). The
/// checksums are valid for a payload of zeros, which adds nothing to the
/// TCP checksum's sum.
pub fn encode(w: &Wire, s: &Segment, buf: &mut Vec<u8>) -> u32 {
    buf.clear();
    let (src_mac, dst_mac, src_ip, dst_ip, sport, dport) = if s.forward {
        (
            w.sender_mac,
            w.receiver_mac,
            w.sender_ip,
            w.receiver_ip,
            w.sender_port,
            w.receiver_port,
        )
    } else {
        (
            w.receiver_mac,
            w.sender_mac,
            w.receiver_ip,
            w.sender_ip,
            w.receiver_port,
            w.sender_port,
        )
    };
    // Ethernet II.
    buf.extend_from_slice(&dst_mac);
    buf.extend_from_slice(&src_mac);
    buf.extend_from_slice(&0x0800u16.to_be_bytes());
    // TCP options, padded to 32-bit words.
    let mut opts = [0u8; 40];
    let mut n = 0;
    let mut put = |bytes: &[u8]| {
        opts[n..n + bytes.len()].copy_from_slice(bytes);
        n += bytes.len();
    };
    let ts = |v: u32, e: u32| {
        let mut o = [8u8, 10, 0, 0, 0, 0, 0, 0, 0, 0];
        o[2..6].copy_from_slice(&v.to_be_bytes());
        o[6..10].copy_from_slice(&e.to_be_bytes());
        o
    };
    if s.syn {
        // Linux's order: MSS, SACK-permitted, timestamps, NOP, window scale.
        let mss = u16::try_from(w.payload_bytes).unwrap_or(u16::MAX);
        put(&[2, 4]);
        put(&mss.to_be_bytes());
        put(&[4, 2]);
        put(&ts(s.ts_val, s.ts_ecr));
        put(&[1, 3, 3, w.window_scale]);
    } else {
        put(&[1, 1]);
        put(&ts(s.ts_val, s.ts_ecr));
        if !s.sack.is_empty() {
            put(&[1, 1, 5, 2 + 8 * s.sack.len() as u8]);
            for &(a, b) in &s.sack {
                put(&a.to_be_bytes());
                put(&b.to_be_bytes());
            }
        }
    }
    debug_assert!(n % 4 == 0 && n <= 40);
    let tcp_hdr = 20 + n;
    let payload = if s.syn { 0 } else { s.payload_bytes as usize };
    let tcp_len = tcp_hdr + payload;
    let ip_total = 20 + tcp_len;
    // IPv4: no options, DF, TTL 64.
    let ip_at = buf.len();
    buf.extend_from_slice(&[0x45, s.ecn & 3]);
    buf.extend_from_slice(&(ip_total as u16).to_be_bytes());
    buf.extend_from_slice(&s.ip_id.to_be_bytes());
    buf.extend_from_slice(&[0x40, 0x00, 64, 6, 0, 0]);
    buf.extend_from_slice(&src_ip);
    buf.extend_from_slice(&dst_ip);
    let ip_sum = fold(sum16(0, &buf[ip_at..ip_at + 20]));
    buf[ip_at + 10..ip_at + 12].copy_from_slice(&ip_sum.to_be_bytes());
    // TCP.
    let tcp_at = buf.len();
    buf.extend_from_slice(&sport.to_be_bytes());
    buf.extend_from_slice(&dport.to_be_bytes());
    buf.extend_from_slice(&s.seq.to_be_bytes());
    buf.extend_from_slice(&s.ack.to_be_bytes());
    buf.extend_from_slice(&[((tcp_hdr / 4) as u8) << 4, s.flags]);
    buf.extend_from_slice(&s.window.to_be_bytes());
    buf.extend_from_slice(&[0, 0, 0, 0]); // checksum, urgent pointer
    buf.extend_from_slice(&opts[..n]);
    // Pseudo-header: addresses, protocol, TCP length.
    let mut acc = sum16(0, &src_ip);
    acc = sum16(acc, &dst_ip);
    acc += 6 + tcp_len as u32;
    let tcp_sum = fold(sum16(acc, &buf[tcp_at..]));
    buf[tcp_at + 16..tcp_at + 18].copy_from_slice(&tcp_sum.to_be_bytes());
    (14 + ip_total) as u32
}

/// A record's segment. `ip_id`: the next IP id of its direction.
fn segment(w: &Wire, r: &Record, ip_id: u16) -> Segment {
    let bytes = |pkt: u64| {
        w.sender_isn
            .wrapping_add(1)
            .wrapping_add((pkt.wrapping_mul(u64::from(w.payload_bytes))) as u32)
    };
    let ecn = (r.bits >> ECN_SHIFT) & 3;
    if r.is_ack() {
        let window = (u64::from(r.window_pkts) * u64::from(w.payload_bytes)).min(MAX_WINDOW_BYTES);
        let flags = TCP_ACK | if r.bits & ECE_BIT != 0 { TCP_ECE } else { 0 };
        Segment {
            forward: false,
            seq: w.receiver_isn.wrapping_add(1),
            ack: bytes(r.seq),
            flags,
            window: (window >> w.window_scale).min(0xffff) as u16,
            ecn,
            ts_val: ts_us(r.ts_val),
            ts_ecr: ts_us(r.ts_ecr),
            sack: r.sack_blocks().map(|(a, b)| (bytes(a), bytes(b))).collect(),
            syn: false,
            payload_bytes: 0,
            ip_id,
        }
    } else {
        let flags = TCP_ACK | TCP_PSH | if r.bits & CWR_BIT != 0 { TCP_CWR } else { 0 };
        Segment {
            forward: true,
            seq: bytes(r.seq),
            ack: w.receiver_isn.wrapping_add(1),
            flags,
            window: 0xffff,
            ecn,
            ts_val: ts_us(r.ts_val),
            ts_ecr: ts_us(r.ts_ecr),
            sack: Vec::new(),
            syn: false,
            payload_bytes: w.payload_bytes,
            ip_id,
        }
    }
}

/// The handshake the simulator does not model, synthesised so that
/// Wireshark and tcptrace learn the window scale, SACK and timestamps: the
/// SYN 1 ns before the flow starts, the SYN-ACK at its start, each with
/// the ECN setup when `tcp.ecn` is on; the first data segment acknowledges
/// the SYN-ACK. Times are the simulator's (the file adds
/// [`EPOCH_NS`]). The handshake's 1 ns round trip is Wireshark's iRTT,
/// the threshold below which it calls a segment under the highest one sent
/// out of order rather than retransmitted (with no handshake, 3 ms): at 1
/// ns only a retransmission sent in the very nanosecond of new data could
/// be taken for reordering.
fn handshake(t: &FlowTap, w: &Wire) -> [(u64, Segment); 2] {
    let syn_ns = EPOCH_NS + t.start_ns - 1;
    let syn_ts = ts_us(t.start_ns.saturating_sub(1));
    let synack_ts = ts_us(t.start_ns);
    let max_window =
        (u64::from(w.payload_bytes) * t.rwnd_pkts.min(u64::from(u32::MAX))).min(MAX_WINDOW_BYTES);
    // A SYN's window is never scaled (RFC 7323 §2.2).
    let syn_window = max_window.min(0xffff) as u16;
    let base = Segment {
        forward: true,
        seq: w.sender_isn,
        ack: 0,
        flags: TCP_SYN,
        window: syn_window,
        ecn: 0,
        ts_val: syn_ts,
        ts_ecr: 0,
        sack: Vec::new(),
        syn: true,
        payload_bytes: 0,
        ip_id: 0,
    };
    let syn = Segment {
        flags: TCP_SYN | if t.ecn { TCP_ECE | TCP_CWR } else { 0 },
        ..base.clone()
    };
    let synack = Segment {
        forward: false,
        seq: w.receiver_isn,
        ack: w.sender_isn.wrapping_add(1),
        flags: TCP_SYN | TCP_ACK | if t.ecn { TCP_ECE } else { 0 },
        ts_val: synack_ts,
        ts_ecr: syn_ts,
        ..base
    };
    [(syn_ns, syn), (EPOCH_NS + t.start_ns, synack)]
}

/// The files' clock reads the simulated time plus this (1970-01-01
/// 00:00:01 is the simulation's start), so that the handshake fits before a
/// flow that starts at 0.
pub const EPOCH_NS: u64 = 1_000_000_000;

fn write_pcapng<W: Write>(t: &FlowTap, tap: Tap, records: &[Record], w: W) -> std::io::Result<W> {
    let wire = Wire::of(t);
    let section = SectionHeaderBlock {
        options: vec![SectionHeaderOption::UserApplication(Cow::Borrowed(
            "longfat",
        ))],
        ..SectionHeaderBlock::default()
    };
    let mut out = PcapNgWriter::with_section_header(w, section).map_err(io_err)?;
    out.write_pcapng_block(InterfaceDescriptionBlock {
        linktype: DataLink::ETHERNET,
        snaplen: (14 + 20 + 60) as u32,
        options: vec![
            InterfaceDescriptionOption::IfName(Cow::Owned(format!(
                "{} at the {}",
                t.name,
                tap.name()
            ))),
            InterfaceDescriptionOption::IfTsResol(9),
        ],
    })
    .map_err(io_err)?;
    let mut buf = Vec::with_capacity(128);
    let mut emit = |out: &mut PcapNgWriter<W>, t_ns: u64, s: &Segment| {
        let original_len = encode(&wire, s, &mut buf);
        out.write_pcapng_block(EnhancedPacketBlock {
            interface_id: 0,
            timestamp: Duration::from_nanos(t_ns),
            original_len,
            data: Cow::Borrowed(&buf),
            options: Vec::new(),
        })
        .map(|_| ())
        .map_err(io_err)
    };
    for (t_ns, s) in handshake(t, &wire) {
        emit(&mut out, t_ns, &s)?;
    }
    // IP ids count up per direction (the SYN and SYN-ACK took 0).
    let mut ids = [1u16, 1u16];
    for r in records {
        let id = &mut ids[usize::from(r.is_ack())];
        let s = segment(&wire, r, *id);
        *id = id.wrapping_add(1);
        emit(&mut out, EPOCH_NS + r.t_ns, &s)?;
    }
    Ok(out.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Ecn;

    fn tap() -> FlowTap {
        FlowTap {
            flow: 3,
            name: "bulk".into(),
            data_hop: 0,
            ack_hop: 3,
            payload_bytes: 1460,
            rwnd_pkts: u64::MAX,
            start_ns: 1_000_000,
            base_rtt_ns: 70_000_000,
            ecn: true,
        }
    }

    /// RFC 1071: a header with its checksum in place sums to 0xffff.
    fn sums_to_ones(acc: u32, bytes: &[u8]) -> bool {
        fold(sum16(acc, bytes)) == 0
    }

    /// Every field of an ACK with SACK blocks, ECE and a scaled window, and
    /// of a data segment with CE and CWR, at its offset: the numbers are
    /// worked out by hand from the simulator's packet.
    #[test]
    fn headers_carry_the_packets_fields_with_valid_checksums() {
        let t = tap();
        let w = Wire::of(&t);
        assert_eq!(w.window_scale, 14);
        assert_eq!(
            (w.sender_ip, w.receiver_ip),
            ([10, 64, 0, 4], [10, 128, 0, 4])
        );
        let mut caps = Captures::new(Tap::Sender, 5, vec![t.clone()]);
        let mut ack = Packet::new(3, PacketKind::Ack, Dir::Backward, 40);
        ack.seq = 10;
        ack.ts_val = 5_000_123_456;
        ack.ts_ecr = 4_930_000_999;
        ack.push_sack((12, 15));
        ack.push_sack((17, 18));
        ack.set_ece(true);
        let mut data = Packet::new(3, PacketKind::Data, Dir::Forward, 1500);
        data.seq = 7;
        data.ts_val = 4_930_000_999;
        data.set_ecn(Ecn::Ce);
        data.set_cwr(true);
        assert_eq!(caps.wants(&ack, 3), Some(0));
        assert_eq!(caps.wants(&ack, 2), None);
        assert_eq!(caps.wants(&data, 0), Some(0));
        caps.record(0, 5_000_000_000, &ack, 1000);
        caps.record(0, 5_000_000_001, &data, 0);
        let (tp, recs) = &caps.flows[0];
        let mut buf = Vec::new();

        let s = segment(&w, &recs[0], 1);
        let orig = encode(&w, &s, &mut buf);
        // 14 + 20 + 20 + 12 (NOP NOP TS) + 4 + 16 (NOP NOP SACK, two blocks).
        assert_eq!((buf.len(), orig), (86, 86));
        assert_eq!(&buf[0..6], &w.sender_mac);
        let ip = &buf[14..34];
        assert_eq!(ip[1], 0, "ACKs are Not-ECT");
        assert_eq!(u16::from_be_bytes([ip[2], ip[3]]), 72);
        assert!(sums_to_ones(0, ip));
        let tcp = &buf[34..];
        assert_eq!(u16::from_be_bytes([tcp[0], tcp[1]]), 5201);
        let be32 = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
        assert_eq!(be32(&tcp[4..]), RECEIVER_ISN + 1);
        assert_eq!(be32(&tcp[8..]), SENDER_ISN + 1 + 10 * 1460);
        assert_eq!(tcp[12] >> 4, 13, "52-byte TCP header");
        assert_eq!(tcp[13], TCP_ACK | TCP_ECE);
        // 1000 packets x 1460 bytes >> 14.
        assert_eq!(u16::from_be_bytes([tcp[14], tcp[15]]), 89);
        assert_eq!(&tcp[20..24], &[1, 1, 8, 10]);
        assert_eq!(be32(&tcp[24..]), 5_000_123);
        assert_eq!(be32(&tcp[28..]), 4_930_000);
        assert_eq!(&tcp[32..36], &[1, 1, 5, 18]);
        assert_eq!(be32(&tcp[36..]), SENDER_ISN + 1 + 12 * 1460);
        assert_eq!(be32(&tcp[40..]), SENDER_ISN + 1 + 15 * 1460);
        assert_eq!(be32(&tcp[44..]), SENDER_ISN + 1 + 17 * 1460);
        assert_eq!(be32(&tcp[48..]), SENDER_ISN + 1 + 18 * 1460);
        let pseudo = |tcp_len: u32| sum16(sum16(0, &w.receiver_ip), &w.sender_ip) + 6 + tcp_len;
        assert!(sums_to_ones(pseudo(52), tcp));

        let s = segment(&w, &recs[1], 1);
        let orig = encode(&w, &s, &mut buf);
        assert_eq!(buf.len(), 14 + 20 + 32);
        assert_eq!(orig, 14 + 20 + 32 + 1460);
        let ip = &buf[14..34];
        assert_eq!(ip[1], Ecn::Ce as u8);
        assert_eq!(u16::from_be_bytes([ip[2], ip[3]]), 20 + 32 + 1460);
        assert!(sums_to_ones(0, ip));
        let tcp = &buf[34..];
        assert_eq!(be32(&tcp[4..]), SENDER_ISN + 1 + 7 * 1460);
        assert_eq!(tcp[13], TCP_ACK | TCP_PSH | TCP_CWR);
        // A zero payload adds nothing: the header alone checks with the
        // full TCP length in the pseudo-header.
        let pseudo = sum16(sum16(0, &w.sender_ip), &w.receiver_ip) + 6 + 32 + 1460;
        assert!(sums_to_ones(pseudo, tcp));

        let [(syn_ns, syn), (synack_ns, synack)] = handshake(tp, &w);
        assert_eq!(
            (syn_ns, synack_ns),
            (EPOCH_NS + 999_999, EPOCH_NS + 1_000_000)
        );
        encode(&w, &syn, &mut buf);
        let tcp = &buf[34..];
        assert_eq!(tcp[13], TCP_SYN | TCP_ECE | TCP_CWR);
        assert_eq!(&tcp[20..24], &[2, 4, 0x05, 0xb4], "MSS 1460");
        assert_eq!(&tcp[36..40], &[1, 3, 3, 14]);
        encode(&w, &synack, &mut buf);
        assert_eq!(buf[34 + 13], TCP_SYN | TCP_ACK | TCP_ECE);
    }

    #[test]
    fn the_window_scale_is_the_smallest_that_fits() {
        assert_eq!(window_scale(65_535), 0);
        assert_eq!(window_scale(65_536), 1);
        assert_eq!(window_scale(1000 * 1460), 5);
        assert_eq!(window_scale(u64::MAX), 14);
    }

    /// The file starts with a section header block and records every
    /// packet: the handshake, then one block per record.
    #[test]
    fn a_capture_is_a_pcapng_file() {
        let t = tap();
        let mut caps = Captures::new(Tap::Sender, 4, vec![t]);
        let mut data = Packet::new(3, PacketKind::Data, Dir::Forward, 1500);
        for k in 0..3 {
            data.seq = k;
            caps.record(0, 1_000_000 + k, &data, 0);
        }
        let mut ack = Packet::new(3, PacketKind::Ack, Dir::Backward, 40);
        ack.seq = 1;
        ack.push_sack((2, 3));
        caps.record(0, 1_000_010, &ack, 10);
        let bytes = caps.write_pcapng(0, Vec::new()).unwrap();
        assert_eq!(bytes.len() as u64, caps.pcapng_len(0));
        assert_eq!(&bytes[0..4], &[0x0a, 0x0d, 0x0d, 0x0a]);
        let mut reader = pcap_file::pcapng::PcapNgReader::new(&bytes[..]).unwrap();
        let mut n = 0;
        while let Some(b) = reader.next_block() {
            if let pcap_file::pcapng::Block::EnhancedPacket(p) = b.unwrap() {
                n += 1;
                assert!(p.original_len as usize >= p.data.len());
            }
        }
        assert_eq!(n, 2 + 3 + 1);
    }
}
