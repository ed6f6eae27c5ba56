//! The TCP receiver: cumulative ACKs with SACK blocks (RFC 2018), optional
//! delayed ACKs, and RFC 7323-style timestamps whose TSecr echoes the data
//! packet that triggered the ACK (so every ACK yields an exact RTT sample).

use crate::event::TimerKind;
use crate::outbox::Outbox;
use crate::packet::{Dir, Packet, PacketKind, MAX_SACK_BLOCKS};
use crate::tcp::ranges::RangeSet;
use crate::tcp::TcpConfig;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReceiverCounters {
    pub received_pkts: u64,
    pub duplicate_pkts: u64,
    /// Packets delivered in order to the application.
    pub delivered_pkts: u64,
    pub delivered_bytes: u64,
    pub acks_sent: u64,
}

#[derive(Debug)]
pub struct TcpReceiver {
    flow: u32,
    cfg: TcpConfig,
    rcv_nxt: u64,
    /// Out-of-order packets above rcv_nxt as disjoint, non-adjacent ranges.
    ooo: RangeSet,
    /// The blocks of the most recent out-of-order arrivals, newest first
    /// (RFC 2018 §4). A block stays exact until a later arrival merges it
    /// into a larger one (then that one replaces it at the front) or the
    /// cumulative ACK passes it (then it lies below `rcv_nxt` and is not
    /// reported), so the list needs no lookups to keep up to date.
    recent: [(u64, u64); MAX_SACK_BLOCKS],
    n_recent: usize,
    /// In-order packets not yet acknowledged (delayed ACK).
    unacked: u32,
    delack_deadline_ns: Option<u64>,
    /// What the next ACK echoes.
    echo_ts: u64,
    echo_tag: u32,
    echo_class: u8,
    pub counters: ReceiverCounters,
}

impl TcpReceiver {
    pub fn new(flow: u32, cfg: TcpConfig) -> Self {
        Self {
            flow,
            cfg,
            rcv_nxt: 0,
            ooo: RangeSet::new(),
            recent: [(0, 0); MAX_SACK_BLOCKS],
            n_recent: 0,
            unacked: 0,
            delack_deadline_ns: None,
            echo_ts: 0,
            echo_tag: 0,
            echo_class: 0,
            counters: ReceiverCounters::default(),
        }
    }

    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }

    /// Moves the cumulative ACK up to `seq` over packets that will never
    /// come (PLT's LCM gives up on its losses; see
    /// `Packet::settled_below`). Held ranges it reaches are absorbed.
    /// Skipped packets are not counted as delivered.
    pub fn skip_to(&mut self, seq: u64) {
        if seq <= self.rcv_nxt {
            return;
        }
        self.rcv_nxt = seq;
        while let Some((a, b)) = self.ooo.first() {
            if a > self.rcv_nxt {
                break;
            }
            self.ooo.pop_first();
            self.rcv_nxt = self.rcv_nxt.max(b);
        }
    }

    fn is_held(&self, seq: u64) -> bool {
        self.ooo.contains(seq)
    }

    fn insert_ooo(&mut self, seq: u64) {
        let (newest_lo, newest_hi) = self.recent[0];
        if self.n_recent > 0 && newest_lo >= self.rcv_nxt && seq == newest_hi {
            // The common case in recovery: the next packet extends the newest
            // block (which is still a range of `ooo`, see `recent`).
            let i = self.ooo.count_starting_at_or_below(newest_lo) - 1;
            debug_assert_eq!(self.ooo.get(i).0, newest_lo, "the newest block is held");
            let mut hi = seq + 1;
            if i + 1 < self.ooo.len() && self.ooo.get(i + 1).0 == hi {
                hi = self.ooo.get(i + 1).1;
                self.ooo.remove(i + 1, i + 2);
            }
            self.ooo.set(i, (newest_lo, hi));
            self.note_newest(newest_lo, hi);
            return;
        }
        // Merge with the range that ends at `seq` and the one that starts
        // right after it, if any.
        let (mut lo, mut hi) = (seq, seq + 1);
        let p = self.ooo.count_starting_at_or_below(seq);
        let mut at = p; // where the merged range goes
        let mut replaced = 0; // ranges from `at` on it replaces
        if p > 0 {
            let (a, b) = self.ooo.get(p - 1);
            if b >= seq {
                lo = a;
                hi = hi.max(b);
                at = p - 1;
                replaced = 1;
            }
        }
        if p < self.ooo.len() && self.ooo.get(p).0 == hi {
            hi = self.ooo.get(p).1;
            replaced += 1;
        }
        if replaced == 0 {
            self.ooo.insert(at, (lo, hi));
        } else {
            self.ooo.set(at, (lo, hi));
            self.ooo.remove(at + 1, at + replaced);
        }
        self.note_newest(lo, hi);
    }

    fn note_newest(&mut self, lo: u64, hi: u64) {
        // Most-recent-first block order (RFC 2018 §4): the new block, then
        // the older ones it did not swallow.
        let mut list = [(lo, hi); MAX_SACK_BLOCKS];
        let mut n = 1;
        for &(a, b) in &self.recent[..self.n_recent] {
            if n < MAX_SACK_BLOCKS && !(lo <= a && b <= hi) {
                list[n] = (a, b);
                n += 1;
            }
        }
        self.recent = list;
        self.n_recent = n;
    }

    pub fn on_data(&mut self, now_ns: u64, pkt: &Packet, out: &mut Outbox) {
        self.counters.received_pkts += 1;
        let seq = pkt.seq;
        self.echo_ts = pkt.ts_val;
        self.echo_tag = pkt.tag;
        self.echo_class = pkt.class;
        // A packet just above the newest block is not held (blocks never
        // touch), which saves the lookup on the common out-of-order path.
        let extends_newest = self.n_recent > 0
            && self.recent[0].0 >= self.rcv_nxt
            && seq == self.recent[0].1;
        // `rcv_nxt` itself is never held (it is the first missing packet),
        // so the in-order packet, nearly every one, skips the lookup too.
        if seq < self.rcv_nxt
            || (seq != self.rcv_nxt && !extends_newest && self.is_held(seq))
        {
            self.counters.duplicate_pkts += 1;
            self.send_ack(now_ns, out); // RFC 5681 §4.2: duplicate -> ACK at once
            return;
        }
        if seq > self.rcv_nxt {
            self.insert_ooo(seq);
            self.send_ack(now_ns, out); // out of order -> immediate (dup) ACK
            return;
        }
        // In order.
        let mut advance = 1;
        self.rcv_nxt += 1;
        let filled_hole = !self.ooo.is_empty();
        // Every held range lies above the old `rcv_nxt`: one that starts at
        // the new one is the lowest.
        if let Some((a, end)) = self.ooo.first() {
            if a == self.rcv_nxt {
                self.ooo.pop_first();
                advance += end - self.rcv_nxt;
                self.rcv_nxt = end;
            }
        }
        self.counters.delivered_pkts += advance;
        self.counters.delivered_bytes += advance * self.cfg.payload_bytes();
        match self.cfg.delayed_ack_timeout_ns {
            Some(timeout) if !filled_hole => {
                self.unacked += 1;
                if self.unacked >= self.cfg.delayed_ack_every_pkts {
                    self.send_ack(now_ns, out);
                } else if self.delack_deadline_ns.is_none() {
                    let d = now_ns + timeout;
                    self.delack_deadline_ns = Some(d);
                    out.timers.push((TimerKind::DelayedAck, d));
                }
            }
            _ => self.send_ack(now_ns, out),
        }
    }

    pub fn on_delack_timer(&mut self, now_ns: u64, out: &mut Outbox) {
        match self.delack_deadline_ns {
            Some(d) if d <= now_ns => self.send_ack(now_ns, out),
            Some(d) => out.timers.push((TimerKind::DelayedAck, d)),
            None => {}
        }
    }

    fn send_ack(&mut self, now_ns: u64, out: &mut Outbox) {
        self.unacked = 0;
        self.delack_deadline_ns = None;
        let mut ack = Packet::new(
            self.flow,
            PacketKind::Ack,
            Dir::Backward,
            self.cfg.ack_size_bytes,
        );
        ack.seq = self.rcv_nxt;
        ack.ts_val = now_ns + self.cfg.receiver_clock_offset_ns;
        ack.ts_ecr = self.echo_ts;
        ack.tag = self.echo_tag;
        ack.class = self.echo_class;
        for i in 0..self.n_recent {
            let block = self.recent[i];
            if block.0 >= self.rcv_nxt {
                ack.push_sack(block);
            }
        }
        self.counters.acks_sent += 1;
        out.packets.push(ack);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(seq: u64) -> Packet {
        let mut p = Packet::new(0, PacketKind::Data, Dir::Forward, 1500);
        p.seq = seq;
        p.ts_val = 1000 + seq;
        p
    }

    fn feed(r: &mut TcpReceiver, seqs: &[u64]) -> Vec<Packet> {
        let mut out = Outbox::default();
        for &s in seqs {
            r.on_data(0, &data(s), &mut out);
        }
        out.packets
    }

    #[test]
    fn sack_blocks_most_recent_first() {
        let mut r = TcpReceiver::new(0, TcpConfig::default());
        let acks = feed(&mut r, &[0, 2, 3, 5, 7]);
        let last = acks.last().unwrap();
        assert_eq!(last.seq, 1);
        assert_eq!(last.sack_blocks().collect::<Vec<_>>(), [(7, 8), (5, 6), (2, 4)]);
        assert_eq!(last.ts_ecr, 1007);
        // Filling hole 1 delivers 0..4 and drops the (2,4) block.
        let acks = feed(&mut r, &[1]);
        assert_eq!(acks[0].seq, 4);
        assert_eq!(acks[0].sack_blocks().collect::<Vec<_>>(), [(7, 8), (5, 6)]);
        assert_eq!(r.counters.delivered_pkts, 4);
        assert_eq!(r.counters.delivered_bytes, 4 * 1460);
    }

    #[test]
    fn delayed_ack_every_second_packet_and_on_timer() {
        let cfg = TcpConfig {
            delayed_ack_timeout_ns: Some(40_000_000),
            ..TcpConfig::default()
        };
        let mut r = TcpReceiver::new(0, cfg);
        let mut out = Outbox::default();
        r.on_data(0, &data(0), &mut out);
        assert!(out.packets.is_empty());
        assert_eq!(out.timers, vec![(TimerKind::DelayedAck, 40_000_000)]);
        r.on_data(10, &data(1), &mut out);
        assert_eq!(out.packets.len(), 1);
        assert_eq!(out.packets[0].seq, 2);
        r.on_data(20, &data(2), &mut out);
        r.on_delack_timer(40_000_020, &mut out);
        assert_eq!(out.packets.len(), 2);
        assert_eq!(out.packets[1].seq, 3);
        // Out-of-order data is acknowledged at once.
        r.on_data(50_000_000, &data(5), &mut out);
        assert_eq!(out.packets.len(), 3);
    }
}
