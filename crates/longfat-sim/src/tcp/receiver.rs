//! The TCP receiver: cumulative ACKs with SACK blocks (RFC 2018), optional
//! delayed ACKs, and RFC 7323-style timestamps whose TSecr echoes the data
//! packet that triggered the ACK (so every ACK yields an exact RTT sample).
//! With `TcpConfig::linux_acks`, Linux's receiver decides when to ACK
//! ([`LinuxAcks`]).

use std::sync::Arc;

use crate::event::TimerKind;
use crate::outbox::Outbox;
use crate::packet::{Dir, Ecn, Packet, PacketKind, MAX_SACK_BLOCKS};
use crate::tcp::ranges::RangeSet;
use crate::tcp::{Profile, TcpConfig};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReceiverCounters {
    pub received_pkts: u64,
    pub duplicate_pkts: u64,
    /// Packets delivered in order to the application.
    pub delivered_pkts: u64,
    pub delivered_bytes: u64,
    pub acks_sent: u64,
    /// CE-marked data packets that arrived (`tcp.ecn`).
    pub ce_marks: u64,
}

#[derive(Debug)]
pub struct TcpReceiver {
    flow: u32,
    /// Shared with the sender and the entry's other flows. The settings
    /// the per-packet path reads are copied out of it below (`hot_*`), so
    /// they cost one load, not two.
    cfg: Arc<TcpConfig>,
    /// `cfg.receiver_clock_offset_ns`.
    hot_clock_offset_ns: u64,
    hot_rwnd_pkts: u64,
    hot_delayed_ack_timeout_ns: Option<u64>,
    /// `cfg.payload_bytes()`.
    hot_payload_bytes: u32,
    hot_ack_size_bytes: u32,
    hot_delayed_ack_every_pkts: u32,
    hot_profile: Profile,
    hot_ecn: bool,
    hot_linux_acks: bool,
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
    /// Linux's quick-ACK and `ato` state (`TcpConfig::linux_acks`).
    linux: LinuxAcks,
    /// Receive-buffer autotuning (`TcpConfig::default_host`); boxed: an
    /// idle flow without it stays 48 bytes smaller.
    host: Option<Box<HostBuffers>>,
    /// The segments GRO holds (`TcpConfig::gro_segments`, `with_gro`);
    /// boxed: most flows run without it, and an idle flow stays small.
    gro: Option<Box<Gro>>,
    /// What the next ACK echoes.
    echo_ts: u64,
    echo_tag: u32,
    echo_class: u8,
    /// RFC 3168 §6.1.3 (`TcpConfig::ecn`): a CE mark arrived and no CWR
    /// since, so every ACK carries ECE (Linux `TCP_ECN_DEMAND_CWR`).
    ecn_demand_cwr: bool,
    /// An ECT or CE packet has arrived (Linux `TCP_ECN_SEEN`).
    ecn_seen: bool,
    /// Linux `ICSK_ACK_NOW`: the next in-order data is ACKed at once
    /// (`tcp_ecn_accept_cwr` on data carrying CWR).
    ack_now: bool,
    pub counters: ReceiverCounters,
}

impl TcpReceiver {
    pub fn new(flow: u32, cfg: impl Into<Arc<TcpConfig>>) -> Self {
        let cfg: Arc<TcpConfig> = cfg.into();
        let host = cfg
            .default_host
            .then(|| Box::new(HostBuffers::new(cfg.payload_bytes())));
        Self {
            flow,
            hot_clock_offset_ns: cfg.receiver_clock_offset_ns,
            hot_rwnd_pkts: cfg.rwnd_pkts,
            hot_delayed_ack_timeout_ns: cfg.delayed_ack_timeout_ns,
            hot_payload_bytes: cfg.packet_size_bytes - cfg.header_bytes,
            hot_ack_size_bytes: cfg.ack_size_bytes,
            hot_delayed_ack_every_pkts: cfg.delayed_ack_every_pkts,
            hot_profile: cfg.profile,
            hot_ecn: cfg.ecn,
            hot_linux_acks: cfg.linux_acks,
            cfg,
            rcv_nxt: 0,
            ooo: RangeSet::new(),
            recent: [(0, 0); MAX_SACK_BLOCKS],
            n_recent: 0,
            unacked: 0,
            delack_deadline_ns: None,
            linux: LinuxAcks::default(),
            host,
            gro: None,
            echo_ts: 0,
            echo_tag: 0,
            echo_class: 0,
            ecn_demand_cwr: false,
            ecn_seen: false,
            ack_now: false,
            counters: ReceiverCounters::default(),
        }
    }

    /// The longest a data packet's arrival can precede the ACK charged to
    /// it (`budget::AckGroups` rests on this). Every ACK (`send_ack`) is
    /// charged to a data packet that reached the receiver and had no ACK
    /// charged to it yet, at most this long before:
    /// - on a packet's arrival, `on_segment` and `deliver` send at most
    ///   one ACK, charged to that packet (duplicate, out of order, or in
    ///   order at once);
    /// - GRO (`gro_receive`) sends none for a packet it holds; the batch's
    ///   flush (when a packet that does not continue it arrives, when it
    ///   is full, or at its poll's end by the GRO timer: never later than
    ///   `poll_ns` after its first packet) sends at most one, charged to
    ///   the batch's first packet (the arriving packet that flushed it is
    ///   handled, and charged, on its own after);
    /// - the delayed-ACK deadline is set only by an arrival (or flush)
    ///   that sent no ACK, while no deadline is set; `send_ack` clears it;
    ///   Linux's receiver only ever moves it earlier. The timer fires at
    ///   the deadline (the engine's timer slot keeps the earliest time and
    ///   `on_delack_timer` re-arms a later deadline), and its ACK is
    ///   charged to the packet whose arrival set it: at most the timeout
    ///   later (RFC 1122's `delayed_ack_timeout_ns`; Linux's `ato`, never
    ///   above TCP_DELACK_MAX: `LinuxAcks::delack_timeout_ns`), plus the
    ///   GRO poll when a flush set it.
    ///
    /// No other path sends an ACK, and each packet is charged at most once
    /// (after an ACK nothing earlier is pending).
    pub fn ack_delay_bound_ns(&self) -> u64 {
        let gro = self.gro.as_ref().map_or(0, |g| g.poll_ns);
        let delack = match self.hot_delayed_ack_timeout_ns {
            Some(_) if self.hot_linux_acks => TCP_DELACK_MAX_NS,
            Some(t) => t,
            None => 0,
        };
        gro.saturating_add(delack)
    }

    /// The ACKs carry ECE (RFC 3168 §6.1.3): a CE mark has not been
    /// answered by CWR yet.
    pub fn echoes_ce(&self) -> bool {
        self.ecn_demand_cwr
    }

    /// Linux `tcp_ecn_accept_cwr`, which 6.x runs from `tcp_ack` on every
    /// segment before its data is queued (since 2570284060b4, "tcp: don't
    /// ignore ECN CWR on pure ACK"): CWR ends the echo, and data carrying
    /// it is ACKed at once (`ICSK_ACK_NOW`: the sender's window may be
    /// small). RFC 3168 §6.1.3 and ns-2's `TCPSink::ack` clear the echo
    /// the same way.
    fn ecn_accept_cwr(&mut self, pkt: &Packet) {
        if pkt.cwr() {
            self.ecn_demand_cwr = false;
            self.ack_now = self.hot_linux_acks;
        }
    }

    /// Linux `__tcp_ecn_check_ce` (from `tcp_event_data_recv` and
    /// `tcp_data_queue_ofo`): the first CE since the last CWR sets the echo
    /// and, "better not delay acks, sender can have a very low cwnd",
    /// quick-ACK mode for at most 2 ACKs (`tcp_enter_quickack_mode(sk,
    /// 2)`); a Not-ECT segment after ECT ones is "probably a retransmit":
    /// quick-ACK mode too. RFC 3168 §6.1.3 (and ns-2's `TCPSink`): CE
    /// sets the echo, nothing else.
    fn ecn_check_ce(&mut self, pkt: &Packet) {
        let quickack = match pkt.ecn() {
            Ecn::NotEct => self.ecn_seen,
            Ecn::Ce => {
                let first = !self.ecn_demand_cwr;
                self.ecn_demand_cwr = true;
                self.ecn_seen = true;
                first
            }
            Ecn::Ect0 | Ecn::Ect1 => {
                self.ecn_seen = true;
                false
            }
        };
        if quickack && self.linux_delack().is_some() {
            self.linux
                .enter_quickack_max(self.window_pkts(), self.ato_min_ns(), 2);
        }
    }

    /// Turns GRO on when `TcpConfig::gro_segments` > 1, with NAPI polls of
    /// `poll_ns` (the time the batch takes at the bottleneck).
    pub fn with_gro(mut self, poll_ns: u64) -> Self {
        if self.cfg.gro_segments > 1 {
            self.gro = Some(Box::new(Gro {
                max_segs: self.cfg.gro_segments,
                poll_ns,
                first: 0,
                held: 0,
                flush_ns: 0,
                last: Packet::new(self.flow, PacketKind::Data, Dir::Forward, 0),
            }));
        }
        self
    }

    /// The window the receiver advertises, in packets: `tcp.rwnd`, and with
    /// an untuned host what its receive buffer allows.
    pub fn window_pkts(&self) -> u64 {
        let buffer = self
            .host
            .as_ref()
            .map_or(u64::MAX, |h| h.window_pkts(u64::from(self.hot_payload_bytes)));
        self.hot_rwnd_pkts.min(buffer)
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
        if self.hot_ecn && pkt.ecn() == Ecn::Ce {
            self.counters.ce_marks += 1;
        }
        if self.gro.is_some() && self.gro_receive(now_ns, pkt, out) {
            return;
        }
        // Branch once on ECN: a flow without it runs the segment's path
        // compiled without the ECN checks.
        if self.hot_ecn {
            self.on_segment::<true>(now_ns, pkt, out);
        } else {
            self.on_segment::<false>(now_ns, pkt, out);
        }
    }

    /// One segment (or GRO's merged skb, `pkt` standing for it) reaches TCP.
    /// `E`: compiled with the ECN code (only `false` when `tcp.ecn` is off).
    fn on_segment<const E: bool>(&mut self, now_ns: u64, pkt: &Packet, out: &mut Outbox) {
        if E && self.hot_ecn {
            self.ecn_accept_cwr(pkt);
        }
        self.counters.received_pkts += 1;
        let seq = pkt.seq;
        self.echo_ts = pkt.ts_val;
        self.echo_tag = pkt.tag;
        self.echo_class = pkt.class;
        // A packet just above the newest block is not held (blocks never
        // touch), which saves the lookup on the common out-of-order path.
        let extends_newest =
            self.n_recent > 0 && self.recent[0].0 >= self.rcv_nxt && seq == self.recent[0].1;
        // `rcv_nxt` itself is never held (it is the first missing packet),
        // so the in-order packet, nearly every one, skips the lookup too.
        if seq < self.rcv_nxt || (seq != self.rcv_nxt && !extends_newest && self.is_held(seq)) {
            self.counters.duplicate_pkts += 1;
            // Linux drops a duplicate (`tcp_data_queue`: out_of_window)
            // before any CE check; ns-2's `TCPSink` and RFC 3168 §6.1.3
            // read the mark of every packet.
            if E && self.hot_ecn && self.hot_profile != Profile::Linux {
                self.ecn_check_ce(pkt);
            }
            if self.linux_delack().is_some() && seq < self.rcv_nxt {
                // tcp_data_queue: a retransmission below rcv_nxt ->
                // tcp_enter_quickack_mode(sk, TCP_MAX_QUICKACKS).
                self.linux
                    .enter_quickack(self.window_pkts(), self.ato_min_ns());
            }
            self.send_ack(now_ns, out); // RFC 5681 §4.2: duplicate -> ACK at once
            return;
        }
        if seq > self.rcv_nxt {
            self.insert_ooo(seq);
            if E && self.hot_ecn {
                self.ecn_check_ce(pkt);
            }
            self.send_ack(now_ns, out); // out of order -> immediate (dup) ACK
            return;
        }
        // In order.
        self.deliver::<E>(now_ns, pkt, 1, out);
    }

    /// `segs` in-order packets from rcv_nxt on, the last `pkt` (one, or a
    /// GRO batch): rcv_nxt passes them and any held range they reach, the
    /// application reads them, and the receiver ACKs or arms its
    /// delayed-ACK timer.
    /// `E` as in `on_segment`.
    fn deliver<const E: bool>(&mut self, now_ns: u64, pkt: &Packet, segs: u64, out: &mut Outbox) {
        let mut advance = segs;
        self.rcv_nxt += segs;
        let filled_hole = !self.ooo.is_empty();
        // Every held range lies above the old `rcv_nxt` (and none within
        // the segments: GRO merges none that is held): one that starts at
        // the new one is the lowest.
        if let Some((a, end)) = self.ooo.first() {
            if a == self.rcv_nxt {
                self.ooo.pop_first();
                advance += end - self.rcv_nxt;
                self.rcv_nxt = end;
            }
        }
        self.counters.delivered_pkts += advance;
        self.counters.delivered_bytes += advance * u64::from(self.hot_payload_bytes);
        if let Some(h) = self.host.as_mut() {
            let clock_ns = now_ns + self.hot_clock_offset_ns;
            h.rcv_rtt_measure(clock_ns, pkt.ts_ecr);
            h.rcv_space_adjust(
                clock_ns,
                self.counters.delivered_bytes,
                u64::from(self.hot_payload_bytes),
            );
        }
        let window_pkts = self.window_pkts();
        if let Some(ato_min_ns) = self.linux_delack() {
            self.linux
                .sample_rtt(now_ns + self.hot_clock_offset_ns, pkt.ts_ecr);
            self.linux.data_recv(now_ns, ato_min_ns, window_pkts);
            if E && self.hot_ecn {
                self.ecn_check_ce(pkt);
            }
            self.unacked += advance as u32;
            // __tcp_ack_snd_check: more than one full segment unacknowledged
            // (every segment here is full-sized), quick-ACK mode, or a hole
            // filled (tcp_data_queue: ICSK_ACK_NOW once the out-of-order
            // queue empties; while it is not, the SACK path sends at once).
            // (`ack_now` is only ever set with ECN.)
            if filled_hole || self.unacked > 1 || self.linux.quick > 0 || (E && self.ack_now) {
                self.send_ack(now_ns, out);
            } else {
                self.linux_send_delayed_ack(now_ns, ato_min_ns, out);
            }
            return;
        }
        if E && self.hot_ecn {
            self.ecn_check_ce(pkt);
        }
        match self.hot_delayed_ack_timeout_ns {
            Some(timeout) if !filled_hole => {
                self.unacked += 1;
                if self.unacked >= self.hot_delayed_ack_every_pkts {
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

    /// GRO (net/core/gro.c `dev_gro_receive`, net/ipv4/tcp_offload.c
    /// `tcp_gro_receive`): true if `pkt` joined the held batch or opened
    /// one. A segment that does not continue the batch (another sequence
    /// number, one already held, or after the poll ended) flushes it
    /// first (`flush |= (th2->seq + skb_gro_len(p)) ^ th->seq`). A
    /// duplicate reaches TCP alone (docs/algorithms.md, "Linux's receiver").
    fn gro_receive(&mut self, now_ns: u64, pkt: &Packet, out: &mut Outbox) -> bool {
        let seq = pkt.seq;
        let Some(g) = self.gro.as_mut() else {
            return false;
        };
        if g.held > 0 {
            // inet_gro_receive / tcp_gro_receive: a segment whose IP TOS
            // (the ECN field) differs, or that carries CWR, flushes the
            // batch instead of joining it; the batch keeps its opener's CWR.
            if seq == g.first + u64::from(g.held)
                && now_ns < g.flush_ns
                && !self.ooo.contains(seq)
                && pkt.ecn() == g.last.ecn()
                && !pkt.cwr()
            {
                g.held += 1;
                let cwr = g.last.cwr();
                g.last = *pkt;
                g.last.set_cwr(cwr);
                self.counters.received_pkts += 1;
                if g.held == g.max_segs {
                    self.gro_flush(now_ns, out);
                }
                return true;
            }
            self.gro_flush(now_ns, out);
        }
        if seq < self.rcv_nxt || self.ooo.contains(seq) {
            return false;
        }
        let g = self.gro.as_mut().expect("checked above");
        g.first = seq;
        g.held = 1;
        g.last = *pkt;
        g.flush_ns = now_ns + g.poll_ns;
        self.counters.received_pkts += 1;
        out.timers.push((TimerKind::GroFlush, g.flush_ns));
        true
    }

    /// `napi_gro_complete` -> TCP: the held batch arrives as one skb. Its
    /// last segment stands for it (echoed in the ACK, as the segment that
    /// triggers an ACK always is here). In order it is delivered; above a
    /// hole it is queued and SACKed at once (`tcp_data_queue_ofo`), one
    /// ACK for the skb.
    fn gro_flush(&mut self, now_ns: u64, out: &mut Outbox) {
        let Some(g) = self.gro.as_mut() else { return };
        let (first, held, last) = (g.first, u64::from(g.held), g.last);
        if held == 0 {
            return;
        }
        g.held = 0;
        self.echo_ts = last.ts_val;
        self.echo_tag = last.tag;
        self.echo_class = last.class;
        if self.hot_ecn {
            self.ecn_accept_cwr(&last);
        }
        if first == self.rcv_nxt {
            self.deliver::<true>(now_ns, &last, held, out);
        } else {
            for seq in first..first + held {
                self.insert_ooo(seq);
            }
            if self.hot_ecn {
                self.ecn_check_ce(&last);
            }
            self.send_ack(now_ns, out);
        }
    }

    /// The NAPI poll ended (`napi_complete_done` with gro_flush_timeout 0
    /// flushes what GRO holds).
    pub fn on_gro_timer(&mut self, now_ns: u64, out: &mut Outbox) {
        match self.gro.as_ref().filter(|g| g.held > 0).map(|g| g.flush_ns) {
            Some(t) if t <= now_ns => self.gro_flush(now_ns, out),
            Some(t) => out.timers.push((TimerKind::GroFlush, t)),
            None => {}
        }
    }

    /// TCP_ATO_MIN when Linux's receiver is on.
    fn linux_delack(&self) -> Option<u64> {
        self.cfg
            .delayed_ack_timeout_ns
            .filter(|_| self.hot_linux_acks)
    }

    fn ato_min_ns(&self) -> u64 {
        self.hot_delayed_ack_timeout_ns.unwrap_or(TCP_ATO_MIN_NS)
    }

    /// tcp_output.c `tcp_send_delayed_ack`.
    fn linux_send_delayed_ack(&mut self, now_ns: u64, ato_min_ns: u64, out: &mut Outbox) {
        let ato = self.linux.delack_timeout_ns(ato_min_ns);
        let mut deadline = now_ns + ato;
        if let Some(d) = self.delack_deadline_ns {
            // "If delack timer is about to expire, send ACK now."
            if d <= now_ns + ato / 4 {
                self.send_ack(now_ns, out);
                return;
            }
            // "Use new timeout only if there wasn't a older one earlier."
            deadline = deadline.min(d);
        }
        self.delack_deadline_ns = Some(deadline);
        out.timers.push((TimerKind::DelayedAck, deadline));
    }

    pub fn on_delack_timer(&mut self, now_ns: u64, out: &mut Outbox) {
        match self.delack_deadline_ns {
            Some(d) if d <= now_ns => {
                if self.linux_delack().is_some() {
                    // tcp_delack_timer_handler: "Delayed ACK missed: inflate
                    // ATO" (doubled, at most the RTO).
                    self.linux.ato_ns = (2 * self.linux.ato_ns).min(self.linux.rto_ns());
                }
                self.send_ack(now_ns, out)
            }
            Some(d) => out.timers.push((TimerKind::DelayedAck, d)),
            None => {}
        }
    }

    fn send_ack(&mut self, now_ns: u64, out: &mut Outbox) {
        self.unacked = 0;
        self.ack_now = false;
        self.delack_deadline_ns = None;
        if self.hot_linux_acks {
            self.linux.dec_quickack(self.ato_min_ns());
        }
        let mut ack = Packet::new(
            self.flow,
            PacketKind::Ack,
            Dir::Backward,
            self.hot_ack_size_bytes,
        );
        ack.seq = self.rcv_nxt;
        ack.ts_val = now_ns + self.hot_clock_offset_ns;
        ack.ts_ecr = self.echo_ts;
        ack.tag = self.echo_tag;
        ack.class = self.echo_class;
        // RFC 3168 §6.1.3 / Linux `tcp_ecn_send`: ECE on every ACK while
        // TCP_ECN_DEMAND_CWR; ACKs are Not-ECT.
        ack.set_ece(self.ecn_demand_cwr);
        for i in 0..self.n_recent {
            let block = self.recent[i];
            if block.0 >= self.rcv_nxt {
                ack.push_distinct_sack(block);
            }
        }
        self.counters.acks_sent += 1;
        out.packets.push(ack);
    }
}

/// GRO's held skb of one flow (`TcpConfig::gro_segments`).
#[derive(Clone, Copy, Debug)]
struct Gro {
    /// Most segments merged into one skb.
    max_segs: u32,
    /// How long a NAPI poll lasts from the batch's first segment.
    poll_ns: u64,
    /// The first segment held, and how many from it on (0: none).
    first: u64,
    held: u32,
    /// When the poll that opened the batch ends.
    flush_ns: u64,
    /// The newest segment held.
    last: Packet,
}

/// Linux's TCP_ATO_MIN and TCP_DELACK_MIN (include/net/tcp.h: HZ / 25).
pub const TCP_ATO_MIN_NS: u64 = 40_000_000;
/// include/net/tcp.h TCP_DELACK_MAX (HZ / 5): no delayed ACK waits longer.
pub const TCP_DELACK_MAX_NS: u64 = 200_000_000;
/// include/net/tcp.h TCP_MAX_QUICKACKS.
const TCP_MAX_QUICKACKS: u32 = 16;
/// The window the receiver advertises first, in segments
/// (tcp_output.c `tcp_select_initial_window`: TCP_DEFAULT_INIT_RCVWND).
const TCP_INIT_RCVWND_PKTS: u64 = 10;
/// include/net/tcp.h TCP_TIMEOUT_INIT (the RTO before any RTT sample) and
/// TCP_RTO_MIN.
const TCP_TIMEOUT_INIT_NS: u64 = 1_000_000_000;
const TCP_RTO_MIN_NS: u64 = 200_000_000;

/// Linux's delayed-ACK engine of a receiver that sends no data (so never in
/// pingpong mode): net/ipv4/tcp_input.c `tcp_event_data_recv`,
/// `tcp_incr_quickack`, `__tcp_ack_snd_check`; tcp_output.c
/// `tcp_send_delayed_ack`; tcp_timer.c `tcp_delack_timer_handler`.
#[derive(Clone, Copy, Debug, Default)]
struct LinuxAcks {
    /// `icsk_ack.quick`: ACKs still to send at once.
    quick: u32,
    /// `icsk_ack.ato` (0 until the first data segment).
    ato_ns: u64,
    /// `icsk_ack.lrcvtime`: the last in-order data arrival.
    lrcv_ns: u64,
    /// The receiver's smoothed RTT. A receiver that sends no data samples
    /// the RTT once, in the handshake; longfat has none, so the first
    /// timestamp sample of the data (the TSecr of a data packet echoes an
    /// ACK's TSval, RFC 7323) stands in for it and is kept.
    srtt_ns: Option<u64>,
}

impl LinuxAcks {
    /// The RTO the receiver's one sample gives (tcp_rtt_estimator's first
    /// sample: srtt = m, rttvar = max(m / 2 x 4, TCP_RTO_MIN); tcp_set_rto:
    /// srtt + rttvar), TCP_TIMEOUT_INIT before it.
    fn rto_ns(&self) -> u64 {
        self.srtt_ns
            .map_or(TCP_TIMEOUT_INIT_NS, |m| m + (2 * m).max(TCP_RTO_MIN_NS))
    }

    fn sample_rtt(&mut self, now_clock_ns: u64, ts_ecr: u64) {
        if self.srtt_ns.is_none() && ts_ecr != 0 {
            self.srtt_ns = Some(now_clock_ns.saturating_sub(ts_ecr));
        }
    }

    /// `tcp_incr_quickack`: rcv_wnd / (2 rcv_mss) quick ACKs (2 if that is
    /// 0), at most `max`, never fewer than already pending. The window is
    /// the first one advertised on the first segment, the receiver's
    /// window (`tcp.rwnd`) later (Linux's rcv_ssthresh grows by two
    /// segments per segment received, so it has left 32 segments behind
    /// before quick-ACKs are re-armed).
    fn incr_quickack(&mut self, rcv_wnd_pkts: u64) {
        self.incr_quickack_max(rcv_wnd_pkts, TCP_MAX_QUICKACKS);
    }

    /// `tcp_incr_quickack(sk, max_quickacks)`: 2 if the window gives 0
    /// (before the cap), then at most `max_quickacks`.
    fn incr_quickack_max(&mut self, rcv_wnd_pkts: u64, max_quickacks: u32) {
        let q = match rcv_wnd_pkts / 2 {
            0 => 2,
            q => q.min(u64::from(TCP_MAX_QUICKACKS)) as u32,
        }
        .min(max_quickacks);
        self.quick = self.quick.max(q);
    }

    /// `tcp_enter_quickack_mode(sk, TCP_MAX_QUICKACKS)`.
    fn enter_quickack(&mut self, rwnd_pkts: u64, ato_min_ns: u64) {
        self.enter_quickack_max(rwnd_pkts, ato_min_ns, TCP_MAX_QUICKACKS);
    }

    /// `tcp_enter_quickack_mode(sk, max_quickacks)`.
    fn enter_quickack_max(&mut self, rwnd_pkts: u64, ato_min_ns: u64, max_quickacks: u32) {
        self.incr_quickack_max(rwnd_pkts, max_quickacks);
        self.ato_ns = ato_min_ns;
    }

    /// `tcp_event_data_recv`: the inter-arrival time m steers `ato`.
    fn data_recv(&mut self, now_ns: u64, ato_min_ns: u64, rwnd_pkts: u64) {
        if self.ato_ns == 0 {
            // "The _first_ data packet received, initialize delayed ACK engine."
            self.incr_quickack(TCP_INIT_RCVWND_PKTS.min(rwnd_pkts));
            self.ato_ns = ato_min_ns;
        } else {
            let m = now_ns - self.lrcv_ns;
            if m <= ato_min_ns / 2 {
                self.ato_ns = self.ato_ns / 2 + ato_min_ns / 2;
            } else if m < self.ato_ns {
                self.ato_ns = (self.ato_ns / 2 + m).min(self.rto_ns());
            } else if m > self.rto_ns() {
                // "Too long gap. Apparently sender failed to restart window."
                self.incr_quickack(rwnd_pkts);
            }
        }
        self.lrcv_ns = now_ns;
    }

    /// `tcp_send_delayed_ack`'s timeout: `ato`, when above TCP_DELACK_MIN
    /// at most HZ / 2 and the RTT (but not below TCP_DELACK_MIN), never
    /// above TCP_DELACK_MAX (`icsk_delack_max`).
    fn delack_timeout_ns(&self, ato_min_ns: u64) -> u64 {
        let mut ato = self.ato_ns;
        if ato > ato_min_ns {
            let mut max_ato = 500_000_000;
            if let Some(srtt) = self.srtt_ns {
                max_ato = max_ato.min(srtt.max(ato_min_ns));
            }
            ato = ato.min(max_ato);
        }
        ato.min(TCP_DELACK_MAX_NS)
    }

    /// `tcp_dec_quickack_mode` (from `tcp_event_ack_sent`): one quick-ACK
    /// used per ACK; leaving quick-ACK mode deflates `ato`.
    fn dec_quickack(&mut self, ato_min_ns: u64) {
        if self.quick > 0 {
            self.quick -= 1;
            if self.quick == 0 {
                self.ato_ns = ato_min_ns;
            }
        }
    }
}

/// Linux's default net.ipv4.tcp_rmem and tcp_wmem (min, default, max bytes;
/// Documentation/networking/ip-sysctl.rst).
pub const TCP_RMEM_BYTES: [u64; 3] = [4096, 131_072, 6_291_456];
pub const TCP_WMEM_BYTES: [u64; 3] = [4096, 16_384, 4_194_304];

/// What the send buffer lets be in flight, in packets: tcp_sndbuf_expand
/// keeps sk_sndbuf at 2 x max(cwnd, 10) x 4,352 bytes (a 1500-byte MTU's
/// worst-case skb) or more, above the window's data until tcp_wmem[2]
/// caps it; data is charged about its own size (GSO skbs of page
/// fragments), so only the cap binds: tcp_wmem[2] of data in flight.
pub fn sndbuf_limit_pkts(cfg: &TcpConfig) -> u64 {
    if cfg.default_host {
        TCP_WMEM_BYTES[2] / cfg.payload_bytes()
    } else {
        u64::MAX
    }
}

/// Receive-buffer autotuning of an untuned Linux host (net/ipv4/tcp_input.c
/// `tcp_rcv_space_adjust`, `tcp_rcv_rtt_measure_ts`, `tcp_rcv_rtt_update`),
/// with an application that reads every byte as it arrives.
#[derive(Clone, Copy, Debug)]
pub struct HostBuffers {
    /// sk_rcvbuf: tcp_rmem[1] at first, grown up to tcp_rmem[2].
    pub rcvbuf_bytes: u64,
    /// rcvq_space: bytes read in the last measured RTT (first: 10
    /// segments, `tcp_init_buffer_space`).
    space_bytes: u64,
    /// Bytes read and the time when the current measurement began.
    mark_bytes: u64,
    mark_ns: u64,
    /// rcv_rtt_est: an EWMA (gain 1/8) of the timestamp samples, one per
    /// new TSecr.
    rcv_rtt_ns: u64,
    last_ecr: u64,
}

impl HostBuffers {
    fn new(payload_bytes: u64) -> Self {
        Self {
            rcvbuf_bytes: TCP_RMEM_BYTES[1],
            space_bytes: 10 * payload_bytes,
            mark_bytes: 0,
            mark_ns: 0,
            rcv_rtt_ns: 0,
            last_ecr: 0,
        }
    }

    /// tcp_win_from_space with tcp_adv_win_scale = 1: half the buffer
    /// (6.x's scaling_ratio starts at the same 1/2,
    /// TCP_DEFAULT_SCALING_RATIO, and then follows the driver's
    /// payload-to-truesize ratio, which longfat does not model).
    fn window_pkts(&self, payload_bytes: u64) -> u64 {
        (self.rcvbuf_bytes / 2 / payload_bytes).max(1)
    }

    fn rcv_rtt_measure(&mut self, clock_ns: u64, ts_ecr: u64) {
        if ts_ecr == 0 || ts_ecr == self.last_ecr {
            return;
        }
        self.last_ecr = ts_ecr;
        let m = clock_ns.saturating_sub(ts_ecr).max(1);
        self.rcv_rtt_ns = if self.rcv_rtt_ns == 0 {
            m
        } else {
            self.rcv_rtt_ns - self.rcv_rtt_ns / 8 + m / 8
        };
    }

    /// Once per measured RTT: if more was read than in the last one, the
    /// buffer grows to hold 2 x (2 copied + 16 segments) scaled up by the
    /// growth (slow start), at most tcp_rmem[2]; it never shrinks.
    fn rcv_space_adjust(&mut self, clock_ns: u64, read_bytes: u64, payload_bytes: u64) {
        if self.rcv_rtt_ns == 0 || clock_ns - self.mark_ns < self.rcv_rtt_ns {
            return;
        }
        let copied = read_bytes - self.mark_bytes;
        if copied > self.space_bytes {
            let mut rcvwin = 2 * copied + 16 * payload_bytes;
            let grow = u128::from(rcvwin) * u128::from(copied - self.space_bytes)
                / u128::from(self.space_bytes);
            rcvwin = rcvwin.saturating_add(u64::try_from(2 * grow).unwrap_or(u64::MAX));
            // tcp_space_from_win: twice the window with tcp_adv_win_scale = 1.
            let rcvbuf = rcvwin.saturating_mul(2).min(TCP_RMEM_BYTES[2]);
            self.rcvbuf_bytes = self.rcvbuf_bytes.max(rcvbuf);
            self.space_bytes = copied;
        }
        self.mark_bytes = read_bytes;
        self.mark_ns = clock_ns;
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
        assert_eq!(
            last.sack_blocks().collect::<Vec<_>>(),
            [(7, 8), (5, 6), (2, 4)]
        );
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

    fn linux_cfg() -> TcpConfig {
        TcpConfig {
            delayed_ack_timeout_ns: Some(TCP_ATO_MIN_NS),
            linux_acks: true,
            ..TcpConfig::default()
        }
    }

    /// Feeds segment `seq` at `now_ns` (TSecr `ts_ecr`); returns the ACK sent
    /// at once, if any, and the delayed-ACK deadline armed, if any.
    fn arrive(
        r: &mut TcpReceiver,
        now_ns: u64,
        seq: u64,
        ts_ecr: u64,
    ) -> (Option<u64>, Option<u64>) {
        let mut out = Outbox::default();
        let mut p = data(seq);
        p.ts_ecr = ts_ecr;
        r.on_data(now_ns, &p, &mut out);
        assert!(out.packets.len() <= 1);
        (
            out.packets.first().map(|a| a.seq),
            out.timers.first().map(|t| t.1),
        )
    }

    /// A short transfer, segments 100 us apart. tcp_event_data_recv on the
    /// first segment: quick = rcv_wnd / (2 rcv_mss) with the first window
    /// TCP_DEFAULT_INIT_RCVWND = 10 segments: 5 quick ACKs (segments 0-4).
    /// Then __tcp_ack_snd_check ACKs once rcv_nxt - rcv_wup exceeds one
    /// segment: after segments 6, 8, ..., 18 (7 ACKs). Segment 19 is left
    /// alone: ato stays TCP_ATO_MIN (m = 100 us <= ato_min / 2 gives
    /// ato / 2 + 20 ms = 40 ms), so its ACK leaves 40 ms after it.
    #[test]
    fn linux_quick_acks_then_every_second_segment_then_the_timer() {
        let mut r = TcpReceiver::new(0, linux_cfg());
        let mut acks = Vec::new();
        let mut deadline = None;
        for seq in 0..20 {
            let (ack, timer) = arrive(&mut r, seq * 100_000, seq, 0);
            acks.extend(ack);
            deadline = timer.or(deadline.filter(|_| ack.is_none()));
        }
        assert_eq!(acks, [1, 2, 3, 4, 5, 7, 9, 11, 13, 15, 17, 19]);
        assert_eq!(deadline, Some(1_900_000 + 40_000_000));
        let mut out = Outbox::default();
        r.on_delack_timer(41_900_000, &mut out);
        assert_eq!(out.packets.iter().map(|a| a.seq).collect::<Vec<_>>(), [20]);
        assert_eq!(r.counters.acks_sent, 13);
    }

    /// Isolated segments 250 ms apart after the quick-ACK phase: each ACK
    /// comes from the timer, which doubles ato (tcp_delack_timer_handler,
    /// at most the RTO); tcp_send_delayed_ack bounds the wait by the RTT
    /// (not below 40 ms) and by TCP_DELACK_MAX = 200 ms. The receiver's
    /// RTO after its one sample m is m + max(2 m, 200 ms).
    /// srtt 100 ms (RTO 300 ms): ato 40 -> timeout 40; ato 80 -> 80;
    /// ato 160 -> 100 (RTT bound); ato min(320, 300) = 300, then m = 250 <
    /// ato gives 300 / 2 + 250 = 400, capped at the RTO 300 -> 100. A gap of
    /// 400 ms > RTO re-arms quick-ACKs: ACK at once.
    /// srtt 300 ms (RTO 900 ms): 40, 80, 160; ato 320 -> 320 / 2 + 250 =
    /// 410 -> min(410, 300, 200) = 200 (TCP_DELACK_MAX); ato 820 -> 410 +
    /// 250 = 660 -> 200.
    #[test]
    fn linux_delayed_ack_timeout_adapts_within_the_rtt_and_delack_max() {
        const MS: u64 = 1_000_000;
        for (srtt_ms, expected_ms) in [
            (100, &[40, 80, 100, 100][..]),
            (300, &[40, 80, 160, 200, 200]),
        ] {
            let mut r = TcpReceiver::new(0, linux_cfg());
            let t0 = 1_000 * MS;
            for seq in 0..5 {
                let (ack, _) = arrive(&mut r, t0 + seq, seq, t0 - srtt_ms * MS);
                assert_eq!(ack, Some(seq + 1), "quick ACK");
            }
            let mut now = t0;
            for (i, &want) in expected_ms.iter().enumerate() {
                now += 250 * MS;
                let seq = 5 + i as u64;
                let (ack, timer) = arrive(&mut r, now, seq, 0);
                assert_eq!(
                    (ack, timer),
                    (None, Some(now + want * MS)),
                    "srtt {srtt_ms} ms, segment {seq}"
                );
                let mut out = Outbox::default();
                r.on_delack_timer(now + want * MS, &mut out);
                assert_eq!(out.packets.len(), 1);
            }
            if srtt_ms == 100 {
                now += 400 * MS;
                let seq = 5 + expected_ms.len() as u64;
                assert_eq!(
                    arrive(&mut r, now, seq, 0).0,
                    Some(seq + 1),
                    "gap above the RTO"
                );
            }
        }
    }

    /// Feeds `arrivals` ((time, seq), in time order) to `r`, firing the GRO
    /// and delayed-ACK timers it arms when they come due (until `end_ns`);
    /// returns each ACK as (time, cumulative ACK, SACK blocks).
    /// An ACK seen by the tests: (time, cumulative ACK, SACK blocks).
    type SeenAck = (u64, u64, Vec<(u64, u64)>);
    /// Timers a receiver armed: (kind, due time).
    type Armed = Vec<(TimerKind, u64)>;

    fn run_gro(r: &mut TcpReceiver, arrivals: &[(u64, u64)], end_ns: u64) -> Vec<SeenAck> {
        let mut acks = Vec::new();
        let mut timers: Vec<(TimerKind, u64)> = Vec::new();
        let mut take = |now: u64, out: Outbox, timers: &mut Vec<(TimerKind, u64)>| {
            acks.extend(
                out.packets
                    .iter()
                    .map(|a| (now, a.seq, a.sack_blocks().collect::<Vec<_>>())),
            );
            timers.extend(out.timers);
        };
        let fire_until = |r: &mut TcpReceiver,
                          until: u64,
                          timers: &mut Vec<(TimerKind, u64)>,
                          take: &mut dyn FnMut(u64, Outbox, &mut Armed)| {
            while let Some(i) = (0..timers.len())
                .filter(|&i| timers[i].1 <= until)
                .min_by_key(|&i| timers[i].1)
            {
                let (kind, t) = timers.swap_remove(i);
                let mut out = Outbox::default();
                match kind {
                    TimerKind::GroFlush => r.on_gro_timer(t, &mut out),
                    _ => r.on_delack_timer(t, &mut out),
                }
                take(t, out, timers);
            }
        };
        for &(now, seq) in arrivals {
            fire_until(r, now.saturating_sub(1), &mut timers, &mut take);
            let mut out = Outbox::default();
            r.on_data(now, &data(seq), &mut out);
            take(now, out, &mut timers);
        }
        fire_until(r, end_ns, &mut timers, &mut take);
        acks
    }

    fn gro_receiver(segments: u32, poll_ns: u64) -> TcpReceiver {
        TcpReceiver::new(
            0,
            TcpConfig {
                gro_segments: segments,
                ..linux_cfg()
            },
        )
        .with_gro(poll_ns)
    }

    /// GRO with 4 segments per skb and polls of 4 x 12 us (1500-byte
    /// packets at 1 Gbit/s). 22 segments back to back, 12 us apart: the
    /// 4th, 8th, ... arrival completes a batch (flushed at once, t = 36,
    /// 84, 132, 180, 228 us); segments 20 and 21 open a batch at 240 us that
    /// the poll's end flushes at 288 us. Each skb of 2 or more segments is
    /// "more than one full frame" (`__tcp_ack_snd_check`): 6 ACKs, each
    /// covering its batch, where Linux without GRO sends 5 quick ACKs, 8
    /// pairs and a delayed one (14). Then two lone segments 1 ms apart:
    /// each poll holds one, so Linux's pairing is back (the quick ACKs are
    /// spent: 5 armed, 6 sent): the first waits, the second's flush, 48 us
    /// after it arrives, ACKs both.
    #[test]
    fn gro_acks_once_per_merged_batch() {
        const US: u64 = 1_000;
        let mut r = gro_receiver(4, 48 * US);
        let mut arrivals: Vec<(u64, u64)> = (0..22).map(|seq| (seq * 12 * US, seq)).collect();
        arrivals.extend([(1_000 * US, 22), (2_000 * US, 23)]);
        let acks: Vec<(u64, u64)> = run_gro(&mut r, &arrivals, 3_000 * US)
            .into_iter()
            .map(|(t, a, _)| (t, a))
            .collect();
        assert_eq!(
            acks,
            [
                (36 * US, 4),
                (84 * US, 8),
                (132 * US, 12),
                (180 * US, 16),
                (228 * US, 20),
                (288 * US, 22),
                (2_048 * US, 24)
            ]
        );
        assert_eq!(
            (r.counters.received_pkts, r.counters.delivered_pkts),
            (24, 24)
        );
    }

    /// A segment that does not continue the batch flushes it
    /// (`tcp_gro_receive`: the sequence check), and segments above a hole
    /// merge too (GRO does not know rcv_nxt): 0 and 1 are held; 3 (2 is
    /// lost) flushes them (ACK 2) and opens a batch that 4 joins; the
    /// poll ends at 24 + 48 us and the skb 3-4 is queued out of order and
    /// SACKed once (`tcp_data_queue_ofo`). The retransmitted 2 opens a
    /// batch that 5 (not its successor) flushes 12 us later: it fills the
    /// hole, rcv_nxt passes the held 3-4 (ACK 5 at once); 5 then sits
    /// alone until its poll ends 48 us later and is ACKed at once (the
    /// fourth quick ACK of five).
    #[test]
    fn gro_flushes_on_a_gap_and_merges_above_a_hole() {
        const US: u64 = 1_000;
        let mut r = gro_receiver(4, 48 * US);
        let arrivals = [
            (0, 0),
            (12 * US, 1),
            (24 * US, 3),
            (36 * US, 4),
            (1_000 * US, 2),
            (1_012 * US, 5),
        ];
        let acks = run_gro(&mut r, &arrivals, 2_000 * US);
        assert_eq!(
            acks,
            [
                (24 * US, 2, vec![]),
                (72 * US, 2, vec![(3, 5)]),
                (1_012 * US, 5, vec![]),
                (1_060 * US, 6, vec![]),
            ]
        );
    }

    fn marked(seq: u64, ecn: Ecn, cwr: bool) -> Packet {
        let mut p = data(seq);
        p.set_ecn(ecn);
        p.set_cwr(cwr);
        p
    }

    /// RFC 3168 §6.1.3: no ECE before a CE mark; from the CE-marked packet
    /// on, every ACK (in order, out of order, duplicate) carries ECE until
    /// a packet with CWR arrives; a CE on the CWR packet itself keeps the
    /// echo on. Without `tcp.ecn` a CE mark is not echoed.
    #[test]
    fn ce_sets_ece_on_every_ack_until_cwr() {
        for ecn_on in [true, false] {
            let cfg = TcpConfig {
                ecn: ecn_on,
                ..TcpConfig::default()
            };
            let mut r = TcpReceiver::new(0, cfg);
            let mut out = Outbox::default();
            let arrivals = [
                (0, Ecn::Ect0, false, false),
                (1, Ecn::Ect0, false, false),
                (2, Ecn::Ce, false, true),
                (3, Ecn::Ect0, false, true),
                (5, Ecn::Ect0, false, true),   // out of order
                (1, Ecn::NotEct, false, true), // duplicate
                (4, Ecn::Ect0, false, true),
                (6, Ecn::Ect0, true, false), // CWR ends the echo
                (7, Ecn::Ect0, false, false),
                (8, Ecn::Ce, true, true), // CWR and CE together: CE wins
                (9, Ecn::Ect0, false, true),
            ];
            for (i, &(seq, ecn, cwr, ece)) in arrivals.iter().enumerate() {
                r.on_data(0, &marked(seq, ecn, cwr), &mut out);
                assert_eq!(out.packets.len(), i + 1, "one ACK per packet");
                let ack = out.packets[i];
                assert_eq!(
                    ack.ece(),
                    ece && ecn_on,
                    "ACK {i} (packet {seq}), ecn {ecn_on}"
                );
                assert_eq!((ack.ecn(), ack.cwr()), (Ecn::NotEct, false));
            }
            assert_eq!(r.counters.ce_marks, if ecn_on { 2 } else { 0 });
        }
    }

    /// Linux `__tcp_ecn_check_ce`: the first CE since the last CWR puts the
    /// receiver in quick-ACK mode for 2 ACKs; `tcp_ecn_accept_cwr` ACKs
    /// data with CWR at once. Segments 0-19 as in
    /// `linux_quick_acks_then_every_second_segment_then_the_timer` (19
    /// waits for the timer, 41.9 ms). Then, 250 ms apart, each alone: 20
    /// (CE) and 21 are ACKed at once (the 2 quick ACKs, with ECE), 22
    /// waits for the delayed-ACK timer (ECE still), 23 carries CWR and is
    /// ACKed at once, without ECE; 24 waits again. Without the CE mark 20
    /// and 21 wait too.
    #[test]
    fn linux_quick_acks_on_the_first_ce_and_acks_cwr_at_once() {
        for ce in [true, false] {
            let mut r = TcpReceiver::new(
                0,
                TcpConfig {
                    ecn: true,
                    profile: Profile::Linux,
                    ..linux_cfg()
                },
            );
            let ect = |seq| marked(seq, Ecn::Ect0, false);
            let mut out = Outbox::default();
            for seq in 0..20 {
                r.on_data(seq * 100_000, &ect(seq), &mut out);
            }
            r.on_delack_timer(41_900_000, &mut out);
            assert_eq!(out.packets.len(), 13);
            assert!(out.packets.iter().all(|a| !a.ece()));
            let mut immediate = Vec::new();
            let mut t = 100_000_000;
            for seq in 20..25 {
                let pkt = match seq {
                    20 if ce => marked(seq, Ecn::Ce, false),
                    23 => marked(seq, Ecn::Ect0, true),
                    _ => ect(seq),
                };
                let before = out.packets.len();
                r.on_data(t, &pkt, &mut out);
                if out.packets.len() > before {
                    let a = out.packets.last().unwrap();
                    immediate.push((seq, a.seq, a.ece()));
                } else {
                    // Fire the delayed ACK before the next segment.
                    r.on_delack_timer(t + TCP_DELACK_MAX_NS, &mut out);
                    assert_eq!(out.packets.len(), before + 1, "segment {seq}");
                    let a = out.packets.last().unwrap();
                    assert_eq!((a.seq, a.ece()), (seq + 1, ce && seq < 23));
                }
                t += 250_000_000;
            }
            let want: &[(u64, u64, bool)] = if ce {
                &[(20, 21, true), (21, 22, true), (23, 24, false)]
            } else {
                &[(23, 24, false)]
            };
            assert_eq!(immediate, want, "ce {ce}");
        }
    }
}
