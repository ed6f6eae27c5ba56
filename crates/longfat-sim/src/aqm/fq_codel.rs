//! FQ-CoDel, "The Flow Queue CoDel Packet Scheduler and Active Queue
//! Management Algorithm" (RFC 8290), as Linux `net/sched/sch_fq_codel.c`:
//! packets hashed into `flows` buckets, each a FIFO with its own CoDel;
//! deficit round robin with `quantum` bytes between buckets; buckets that
//! just became active (new flows) are served before the others (old
//! flows).
//!
//! Unlike CoDel alone, FQ-CoDel holds its packets itself: which packet
//! leaves next is its decision. The link hands it packets ([`Queued`]) and
//! takes them back from [`FqCodel::dequeue`].
//!
//! Choices (docs/scenarios.md, "AQM"):
//! - Hashing (RFC 8290 §4.1.1 leaves it to the implementation; Linux hashes
//!   the 5-tuple with a random perturbation): the caller gives a key made of
//!   the packet's flow id, direction and PLT module; [`FqCodel::bucket_of`]
//!   mixes it with the link's seed (splitmix64's finalizer) and maps it to
//!   a bucket as Linux's `reciprocal_scale` does. Deterministic: the same
//!   seed gives the same buckets (and collisions).
//! - The buffer limit is checked after the packet is queued, as Linux
//!   `fq_codel_enqueue`; over it, `fq_codel_drop`: from the bucket with
//!   the most bytes, drop packets from its head until half its bytes are
//!   gone or `drop_batch` (64) packets are (the arriving packet may be
//!   among them when it went to that bucket).
//! - CoDel's `bytes() <= MAXPACKET` test reads the whole queue's bytes (all
//!   buckets), as Linux passes `sch->qstats.backlog` to each flow's CoDel.

use std::collections::VecDeque;

use super::codel::{Codel, CodelParams};
use super::{Queued, Verdict};

/// FQ-CoDel's parameters (RFC 8290 §4, §5.2; Linux defaults).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FqCodelParams {
    /// Buckets packets are hashed into: 1024.
    pub flows: u32,
    /// DRR quantum: 1514 bytes (one Ethernet MTU with its header).
    pub quantum_bytes: u32,
    /// At most this many packets dropped per overflow: 64.
    pub drop_batch_pkts: u32,
    pub codel: CodelParams,
}

impl Default for FqCodelParams {
    fn default() -> Self {
        Self {
            flows: 1024,
            quantum_bytes: 1514,
            drop_batch_pkts: 64,
            codel: CodelParams::default(),
        }
    }
}

/// Which list a bucket is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum List {
    None,
    New,
    Old,
}

#[derive(Clone, Debug)]
struct Bucket {
    q: VecDeque<Queued>,
    bytes: u64,
    deficit: i64,
    list: List,
    codel: Codel,
}

/// What [`FqCodel::dequeue`] returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dequeued {
    pub packet: Queued,
    /// CoDel asked to CE-mark it (only for markable packets).
    pub mark: bool,
}

#[derive(Clone, Debug)]
pub struct FqCodel {
    p: FqCodelParams,
    seed: u64,
    buckets: Vec<Bucket>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    pkts: u64,
    bytes: u64,
}

/// splitmix64's output function: a bijective 64-bit mix.
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl FqCodel {
    pub fn new(p: FqCodelParams, seed: u64) -> Self {
        let bucket = Bucket {
            q: VecDeque::new(),
            bytes: 0,
            deficit: 0,
            list: List::None,
            codel: Codel::new(p.codel),
        };
        Self {
            p,
            seed,
            buckets: vec![bucket; p.flows as usize],
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            pkts: 0,
            bytes: 0,
        }
    }

    /// Packets and bytes queued (all buckets).
    pub fn len(&self) -> (u64, u64) {
        (self.pkts, self.bytes)
    }

    pub fn is_empty(&self) -> bool {
        self.pkts == 0
    }

    /// The bucket of a packet whose flow key is `key` (flow id, direction
    /// and module packed by the caller), perturbed by the link's seed:
    /// Linux `fq_codel_hash`'s `reciprocal_scale(hash, flows_cnt)`.
    pub fn bucket_of(&self, key: u64) -> u32 {
        let h = (mix64(key ^ self.seed) >> 32) as u32;
        ((u64::from(h) * u64::from(self.p.flows)) >> 32) as u32
    }

    /// Queues `packet` in bucket `b` (RFC 8290 §4.1: a bucket not on
    /// either list joins the new-flows list with a full quantum).
    #[inline(always)]
    pub fn enqueue(&mut self, b: u32, packet: Queued) {
        let bk = &mut self.buckets[b as usize];
        bk.q.push_back(packet);
        bk.bytes += u64::from(packet.size_bytes);
        if bk.list == List::None {
            bk.list = List::New;
            bk.deficit = i64::from(self.p.quantum_bytes);
            self.new_flows.push_back(b);
        }
        self.pkts += 1;
        self.bytes += u64::from(packet.size_bytes);
    }

    /// Linux `fq_codel_drop`: drops from the head of the bucket with the
    /// most bytes until half of them are gone or `drop_batch` packets are;
    /// each dropped packet goes to `dropped`. Returns the bucket.
    pub fn drop_from_fattest(&mut self, mut dropped: impl FnMut(Queued)) -> u32 {
        // The first bucket with the most bytes (Linux scans in index order
        // and keeps the first maximum).
        let mut fat = 0usize;
        for (i, bk) in self.buckets.iter().enumerate() {
            if bk.bytes > self.buckets[fat].bytes {
                fat = i;
            }
        }
        let threshold = self.buckets[fat].bytes / 2;
        let mut len = 0u64;
        let mut n = 0u32;
        let bk = &mut self.buckets[fat];
        while let Some(p) = bk.q.pop_front() {
            let size = u64::from(p.size_bytes);
            bk.bytes -= size;
            self.bytes -= size;
            self.pkts -= 1;
            len += size;
            n += 1;
            dropped(p);
            if n >= self.p.drop_batch_pkts || len >= threshold {
                break;
            }
        }
        fat as u32
    }

    /// RFC 8290 §4.2 / Linux `fq_codel_dequeue`: the next packet to send
    /// at `now_ns`, or None when every bucket is empty. `markable(p)`:
    /// the discipline marks and `p` is ECN-capable; CoDel's drops go to
    /// `dropped`.
    pub fn dequeue(
        &mut self,
        now_ns: u64,
        mut markable: impl FnMut(&Queued) -> bool,
        mut dropped: impl FnMut(Queued),
    ) -> Option<Dequeued> {
        if self.pkts == 0 {
            self.go_idle();
            return None;
        }
        loop {
            let from_new = !self.new_flows.is_empty();
            let b = *if from_new {
                self.new_flows.front()
            } else {
                self.old_flows.front()
            }?;
            let bk = &mut self.buckets[b as usize];
            if bk.deficit <= 0 {
                // DRR: a new quantum, and to the back of the old flows.
                bk.deficit += i64::from(self.p.quantum_bytes);
                bk.list = List::Old;
                // To the back of the old flows; when it is the only old
                // flow (one flow, the common case) it is there already.
                if from_new || self.old_flows.len() > 1 {
                    self.pop_head(from_new);
                    self.old_flows.push_back(b);
                }
                continue;
            }
            match self.serve_bucket(b, now_ns, &mut markable, &mut dropped) {
                Some(d) => return Some(d),
                None => self.retire_empty(b, from_new),
            }
        }
    }

    /// `dequeue` before its shortcuts (`go_idle`, the lone old flow's
    /// new quantum), for the test that they change nothing.
    #[cfg(test)]
    fn dequeue_by_loop(
        &mut self,
        now_ns: u64,
        mut markable: impl FnMut(&Queued) -> bool,
        mut dropped: impl FnMut(Queued),
    ) -> Option<Dequeued> {
        loop {
            let from_new = !self.new_flows.is_empty();
            let b = *if from_new {
                self.new_flows.front()
            } else {
                self.old_flows.front()
            }?;
            let bk = &mut self.buckets[b as usize];
            if bk.deficit <= 0 {
                // DRR: a new quantum, and to the back of the old flows.
                bk.deficit += i64::from(self.p.quantum_bytes);
                bk.list = List::Old;
                self.pop_head(from_new);
                self.old_flows.push_back(b);
                continue;
            }
            match self.serve_bucket(b, now_ns, &mut markable, &mut dropped) {
                Some(d) => return Some(d),
                None => self.retire_empty(b, from_new),
            }
        }
    }

    /// `dequeue` with nothing queued (`is_empty`), in one pass: the loop would visit
    /// every listed bucket, find it empty and take it off the lists (a new
    /// flow by way of the old list, a bucket short of deficit after one or
    /// more new quanta), calling its CoDel's `on_empty` on the way. The end
    /// state is the same: both lists empty, every bucket off them, each
    /// visited CoDel emptied. Only the deficits of the buckets left off the
    /// lists differ, and a bucket's deficit is read only while it is on a
    /// list (`enqueue` sets it afresh when the bucket joins one).
    pub fn go_idle(&mut self) {
        while let Some(b) = self.new_flows.pop_front() {
            let bk = &mut self.buckets[b as usize];
            bk.codel.on_empty();
            bk.list = List::None;
        }
        while let Some(b) = self.old_flows.pop_front() {
            let bk = &mut self.buckets[b as usize];
            bk.codel.on_empty();
            bk.list = List::None;
        }
    }

    /// `go_idle` where the lists hold one new flow and no old one (a lazy
    /// service begun by `serve_idle`), inlined; else `go_idle`.
    #[inline(always)]
    pub fn go_idle_from_one(&mut self) {
        if self.old_flows.is_empty() && self.new_flows.len() == 1 {
            let b = self.new_flows[0];
            self.new_flows.clear();
            let bk = &mut self.buckets[b as usize];
            bk.codel.on_empty();
            bk.list = List::None;
        } else {
            self.go_idle();
        }
    }

    /// Nothing is queued and no bucket is on a list (so the link is idle:
    /// the last `dequeue` found nothing).
    #[inline]
    pub fn is_idle(&self) -> bool {
        self.pkts == 0 && self.new_flows.is_empty() && self.old_flows.is_empty()
    }

    /// `enqueue(b, packet)` then `dequeue(now_ns, ..)` on an idle FQ-CoDel
    /// (`is_idle`), without the packet passing through the bucket's queue:
    /// the bucket joins the new flows with a full quantum, its CoDel
    /// decides on the packet with a sojourn of `now_ns - enqueue_ns` and
    /// nothing left behind it, and the packet is sent (less its size from
    /// the deficit) or dropped (then the bucket, empty, leaves the lists:
    /// there are no old flows). The same calls in the same order as the
    /// two calls make.
    #[inline(always)]
    pub fn serve_idle(
        &mut self,
        now_ns: u64,
        b: u32,
        packet: Queued,
        markable: bool,
        mut dropped: impl FnMut(Queued),
    ) -> Option<Dequeued> {
        debug_assert!(self.is_idle());
        let quantum = i64::from(self.p.quantum_bytes);
        let bk = &mut self.buckets[b as usize];
        // `dequeue` on a bucket with a full quantum (`quantum_bytes` >= 1):
        // no new quantum before its packet.
        let sojourn = now_ns.saturating_sub(packet.enqueue_ns);
        let v = bk
            .codel
            .on_dequeue(now_ns, sojourn, 0, u32::from(packet.size_bytes), markable);
        let mark = match v {
            Verdict::Pass => false,
            Verdict::Congested if markable => true,
            Verdict::Congested | Verdict::Drop => {
                dropped(packet);
                bk.codel.on_empty();
                return None;
            }
        };
        bk.list = List::New;
        bk.deficit = quantum - i64::from(packet.size_bytes);
        self.new_flows.push_back(b);
        Some(Dequeued { packet, mark })
    }

    /// Bucket `b`'s CoDel decides on its head packets one by one (RFC 8290
    /// §4.2, Linux `codel_dequeue` inside `fq_codel_dequeue`): the first it
    /// passes or marks, its size charged to the deficit; None when the
    /// bucket empties first. Drops go to `dropped`.
    #[inline(always)]
    fn serve_bucket(
        &mut self,
        b: u32,
        now_ns: u64,
        markable: &mut impl FnMut(&Queued) -> bool,
        dropped: &mut impl FnMut(Queued),
    ) -> Option<Dequeued> {
        let bk = &mut self.buckets[b as usize];
        loop {
            let Some(p) = bk.q.pop_front() else {
                bk.codel.on_empty();
                return None;
            };
            let size = u64::from(p.size_bytes);
            bk.bytes -= size;
            self.bytes -= size;
            self.pkts -= 1;
            let sojourn = now_ns.saturating_sub(p.enqueue_ns);
            let m = markable(&p);
            let mark =
                match bk
                    .codel
                    .on_dequeue(now_ns, sojourn, self.bytes, u32::from(p.size_bytes), m)
                {
                    Verdict::Pass => false,
                    Verdict::Congested if m => true,
                    Verdict::Congested | Verdict::Drop => {
                        dropped(p);
                        continue;
                    }
                };
            bk.deficit -= i64::from(p.size_bytes);
            return Some(Dequeued { packet: p, mark });
        }
    }

    /// Bucket `b`, at the head of its list, emptied: a new flow goes to
    /// the old list if there is one (so it cannot starve the old flows by
    /// emptying and re-entering as new, RFC 8290 §4.2), else it leaves.
    #[inline(always)]
    fn retire_empty(&mut self, b: u32, from_new: bool) {
        let to_old = from_new && !self.old_flows.is_empty();
        self.buckets[b as usize].list = if to_old { List::Old } else { List::None };
        self.pop_head(from_new);
        if to_old {
            self.old_flows.push_back(b);
        }
    }

    fn pop_head(&mut self, from_new: bool) {
        if from_new {
            self.new_flows.pop_front();
        } else {
            self.old_flows.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(handle: u32, size: u16, t: u64) -> Queued {
        Queued {
            handle,
            size_bytes: size,
            corrupted: false,
            enqueue_ns: t,
        }
    }

    fn fq() -> FqCodel {
        FqCodel::new(FqCodelParams::default(), 7)
    }

    fn deq(f: &mut FqCodel, now: u64) -> Option<Queued> {
        f.dequeue(now, |_| false, |p| panic!("dropped {p:?}"))
            .map(|d| d.packet)
    }

    /// DRR shares bytes, not packets: two always-backlogged buckets, one
    /// of 1500-byte packets and one of 500-byte packets, get the same bytes
    /// over many rounds (within one quantum each), so the small-packet
    /// bucket sends three times the packets.
    #[test]
    fn drr_shares_bytes_between_packet_sizes() {
        let mut f = fq();
        for i in 0..3000 {
            f.enqueue(1, pkt(i, 1500, 0));
            f.enqueue(2, pkt(100_000 + i, 500, 0));
        }
        let (mut big, mut small) = (0u64, 0u64);
        for _ in 0..2000 {
            let p = deq(&mut f, 0).unwrap();
            if p.handle >= 100_000 {
                small += u64::from(p.size_bytes);
            } else {
                big += u64::from(p.size_bytes);
            }
        }
        assert!(big.abs_diff(small) <= 2 * 1514, "{big} {small}");
        assert!(big > 500_000);
        // (Round robin by packet would give 3:1 in bytes.)
    }

    /// A sparse flow's packet leaves before a backlogged flow's: it
    /// arrives into an empty bucket, joins the new-flows list and is served
    /// before the old flows (RFC 8290 §1.3, §4.2).
    #[test]
    fn a_new_flow_goes_first() {
        let mut f = fq();
        for i in 0..100 {
            f.enqueue(3, pkt(i, 1500, 0));
        }
        // The backlogged bucket spends its first quantum and moves to old.
        assert_eq!(deq(&mut f, 0).unwrap().handle, 0);
        assert_eq!(deq(&mut f, 0).unwrap().handle, 1);
        f.enqueue(9, pkt(1000, 100, 0));
        assert_eq!(deq(&mut f, 0).unwrap().handle, 1000);
        assert_eq!(deq(&mut f, 0).unwrap().handle, 2);
        // The sparse bucket emptied while an old flow exists: it went to
        // the old list, behind bucket 3 (§4.2), so its next packet does
        // not make it a new flow again.
        assert_eq!(f.buckets[9].list, List::Old);
        assert_eq!(Vec::from(f.old_flows.clone()), vec![3, 9]);
        f.enqueue(9, pkt(1001, 100, 0));
        assert!(f.new_flows.is_empty());
        // Bucket 3 has spent its quantum (deficit -1472 after packet 2):
        // a new quantum sends it behind 9, whose deficit (1414) sends 1001;
        // 9 is then empty and leaves; 3 goes on.
        let order: Vec<u32> = (0..3).map(|_| deq(&mut f, 0).unwrap().handle).collect();
        assert_eq!(order, vec![1001, 3, 4]);
        assert_eq!(f.buckets[9].list, List::None);
    }

    /// A new flow that empties with no old flows leaves both lists, so its
    /// next packet makes it new again (served first).
    #[test]
    fn an_emptied_flow_without_old_flows_leaves_the_lists() {
        let mut f = fq();
        f.enqueue(5, pkt(1, 100, 0));
        assert_eq!(deq(&mut f, 0).unwrap().handle, 1);
        assert!(deq(&mut f, 0).is_none());
        assert!(f.new_flows.is_empty() && f.old_flows.is_empty());
        assert_eq!(f.buckets[5].list, List::None);
    }

    /// Overflow drops from the fattest bucket's head (Linux
    /// fq_codel_drop): half its bytes, at most drop_batch packets.
    #[test]
    fn overflow_drops_from_the_fattest_flow() {
        let mut f = fq();
        for i in 0..15 {
            f.enqueue(1, pkt(i, 1500, 0)); // 22,500 bytes: fattest
        }
        for i in 0..20 {
            f.enqueue(2, pkt(100 + i, 1000, 0)); // 20,000 bytes, more packets
        }
        f.enqueue(3, pkt(200, 1500, 0));
        let mut dropped = vec![];
        assert_eq!(f.drop_from_fattest(|p| dropped.push(p.handle)), 1);
        // Half of 22,500 bytes is 11,250: 8 packets of 1500 from the head.
        assert_eq!(dropped, (0..8).collect::<Vec<_>>());
        assert_eq!(f.len(), (7 + 20 + 1, 10_500 + 20_000 + 1500));
        // The batch limit: 200 small packets, half is 100 > 64.
        let mut f = FqCodel::new(FqCodelParams::default(), 7);
        for i in 0..200 {
            f.enqueue(4, pkt(i, 100, 0));
        }
        let mut n = 0;
        f.drop_from_fattest(|_| n += 1);
        assert_eq!(n, 64);
    }

    /// Everything `dequeue` leaves that can matter later: the lists in
    /// order, and each bucket's list, packets and CoDel, and its deficit
    /// while it is on a list (`go_idle`'s doc).
    fn observable(f: &FqCodel) -> String {
        let buckets: Vec<String> = f
            .buckets
            .iter()
            .map(|b| {
                let deficit = (b.list != List::None).then_some(b.deficit);
                format!(
                    "{:?} {:?} {} {:?} {:?}",
                    b.list, deficit, b.bytes, b.q, b.codel
                )
            })
            .collect();
        format!(
            "{:?} {:?} {} {} {buckets:?}",
            f.new_flows, f.old_flows, f.pkts, f.bytes
        )
    }

    /// `dequeue`'s shortcuts and `serve_idle` change nothing: random
    /// arrivals (1 to 4 buckets of 8, sizes across the quantum, sojourns
    /// around CoDel's target), dequeues, overflow drops and arrivals at an
    /// idle queue served at once, each applied to two copies, one through
    /// `dequeue` and `serve_idle` and one through `enqueue` and the loop
    /// without shortcuts, give the same packets, drops and state after
    /// every step.
    #[test]
    fn dequeue_shortcuts_match_the_plain_loop() {
        const MS: u64 = 1_000_000;
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        let mut draw = |n: u64| {
            rng = mix64(rng.wrapping_add(0x9e37_79b9_7f4a_7c15));
            rng % n
        };
        let mut served_idle = 0;
        for case in 0..40 {
            let p = FqCodelParams {
                flows: 8,
                ..FqCodelParams::default()
            };
            let mut a = FqCodel::new(p, case);
            let mut b = a.clone();
            let active = 1 + draw(4) as u32;
            let mut t = 0u64;
            let mut next = 0u32;
            let mut shortcuts = 0;
            for _ in 0..2000 {
                t += draw(3 * MS);
                match draw(10) {
                    0..=4 => {
                        let bucket = draw(u64::from(active)) as u32;
                        let size = [54, 100, 1000, 1500, 1514, 1515, 3000][draw(7) as usize];
                        let enq = t.saturating_sub(draw(40 * MS));
                        for f in [&mut a, &mut b] {
                            f.enqueue(bucket, pkt(next, size, enq));
                        }
                        next += 1;
                    }
                    5 => {
                        let (mut da, mut db) = (vec![], vec![]);
                        if a.pkts > 0 {
                            a.drop_from_fattest(|p| da.push(p));
                            b.drop_from_fattest(|p| db.push(p));
                        }
                        assert_eq!(da, db);
                    }
                    6 if a.is_idle() => {
                        // An arrival at an idle link, served at once.
                        let bucket = draw(u64::from(active)) as u32;
                        let size = [54, 1500, 1514, 1515, 3000][draw(5) as usize];
                        let p = pkt(next, size, t.saturating_sub(draw(2 * MS)));
                        next += 1;
                        let m = p.handle.is_multiple_of(3);
                        let (mut da, mut db) = (vec![], vec![]);
                        let ra = a.serve_idle(t, bucket, p, m, |p| da.push(p));
                        b.enqueue(bucket, p);
                        let rb = b.dequeue_by_loop(t, |_| m, |p| db.push(p));
                        assert_eq!((ra, &da), (rb, &db), "case {case}");
                        served_idle += 1;
                    }
                    _ => {
                        let (mut da, mut db) = (vec![], vec![]);
                        if a.pkts == 0 || a.old_flows.len() == 1 {
                            shortcuts += 1;
                        }
                        let ra = a.dequeue(t, |p| p.handle.is_multiple_of(3), |p| da.push(p));
                        let rb =
                            b.dequeue_by_loop(t, |p| p.handle.is_multiple_of(3), |p| db.push(p));
                        assert_eq!((ra, &da), (rb, &db), "case {case}");
                    }
                }
                assert_eq!(observable(&a), observable(&b), "case {case}");
            }
            assert!(shortcuts > 100, "case {case}: {shortcuts} shortcuts");
        }
        assert!(served_idle > 300, "{served_idle} idle arrivals");
    }

    /// Each bucket has its own CoDel: a standing queue in one bucket is
    /// dropped from, a sparse bucket's packets pass.
    #[test]
    fn codel_per_bucket() {
        const MS: u64 = 1_000_000;
        let mut f = fq();
        let mut drops = vec![];
        let mut t = 0;
        let mut next = 0u32;
        while t < 300 * MS {
            // Bucket 1 holds 20 packets enqueued 20 ms ago, refilled.
            while f.buckets[1].q.len() < 20 {
                f.enqueue(1, pkt(next, 1500, t.saturating_sub(20 * MS)));
                next += 1;
            }
            if t % (10 * MS) == 0 {
                f.enqueue(2, pkt(1_000_000 + next, 100, t));
            }
            if let Some(d) = f.dequeue(t, |_| false, |p| drops.push(p.handle)) {
                assert!(!d.mark);
            }
            t += MS;
        }
        assert!(!drops.is_empty());
        assert!(drops.iter().all(|&h| h < 1_000_000), "{drops:?}");
    }

    /// The hash spreads keys over the buckets and depends on the seed.
    #[test]
    fn hashing_is_seeded_and_spreads() {
        let a = FqCodel::new(FqCodelParams::default(), 1);
        let b = FqCodel::new(FqCodelParams::default(), 2);
        let mut hit = vec![0u32; 1024];
        let mut same = 0;
        for k in 0..10_240u64 {
            hit[a.bucket_of(k) as usize] += 1;
            same += u32::from(a.bucket_of(k) == b.bucket_of(k));
        }
        // Poisson(10) per bucket: none empty, none above 35.
        assert!(hit.iter().all(|&h| (1..=35).contains(&h)), "{hit:?}");
        assert!(same < 100, "{same}");
    }
}
