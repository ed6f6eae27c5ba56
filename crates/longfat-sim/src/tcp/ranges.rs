//! A set of packet numbers as disjoint, non-adjacent [start, end) ranges,
//! sorted, in two rings split at the last edit: the receiver's
//! out-of-order data and the sender's SACKed packets.
//!
//! Both sets change at their ends almost always: new ranges appear or grow
//! at the top (data above every hole arrives in order) and leave at the
//! bottom (the cumulative ACK). The exception is a loss episode whose
//! retransmissions are lost too: the bottom holes then stay open until
//! they are detected again, while the holes above them fill one after the
//! other, so edits walk slowly upwards through the middle of a set that can
//! hold tens of thousands of ranges (10 Reno flows overshooting a 10 Gbit/s
//! path: removals at index ~3,000 of ~6,000, each moving 3,000 ranges,
//! 5 % of the run). Keeping the ranges below the last edit in `lo` and the
//! rest in `hi` makes an edit cost the distance from the previous one,
//! not from the nearer end. A lookup is a binary search over contiguous
//! memory in the half that holds the key, where a `BTreeMap` paid a search
//! from the root at both bounds of a range query (several hundred
//! instructions each).

use std::collections::VecDeque;

#[derive(Clone, Debug, Default)]
pub struct RangeSet {
    /// The lower ranges, sorted by start; every range here lies below every
    /// range of `hi`. Together: disjoint and non-adjacent.
    lo: VecDeque<(u64, u64)>,
    hi: VecDeque<(u64, u64)>,
}

impl RangeSet {
    pub fn new() -> Self {
        Self::default()
    }
    #[inline]
    pub fn len(&self) -> usize {
        self.lo.len() + self.hi.len()
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.lo.is_empty() && self.hi.is_empty()
    }
    #[inline]
    pub fn first(&self) -> Option<(u64, u64)> {
        self.lo.front().or(self.hi.front()).copied()
    }
    #[inline]
    pub fn last(&self) -> Option<(u64, u64)> {
        self.hi.back().or(self.lo.back()).copied()
    }
    /// The `i`-th range from the bottom.
    #[inline]
    pub fn get(&self, i: usize) -> (u64, u64) {
        match i.checked_sub(self.lo.len()) {
            None => self.lo[i],
            Some(j) => self.hi[j],
        }
    }
    /// Replaces the `i`-th range; the caller keeps the order.
    #[inline]
    pub fn set(&mut self, i: usize, r: (u64, u64)) {
        match i.checked_sub(self.lo.len()) {
            None => self.lo[i] = r,
            Some(j) => self.hi[j] = r,
        }
    }
    #[inline]
    pub fn pop_first(&mut self) -> Option<(u64, u64)> {
        let r = match self.lo.pop_front() {
            Some(r) => Some(r),
            None => self.hi.pop_front(),
        };
        if self.is_empty() {
            self.release();
        }
        r
    }
    /// Moves the split so that `lo` holds exactly the first `i` ranges.
    #[inline]
    fn split_at(&mut self, i: usize) {
        while self.lo.len() > i {
            let r = self.lo.pop_back().expect("lo is longer than i");
            self.hi.push_front(r);
        }
        while self.lo.len() < i {
            let r = self.hi.pop_front().expect("i is at most len");
            self.lo.push_back(r);
        }
    }
    /// Inserts `r` as the `i`-th range; the caller keeps the order.
    #[inline]
    pub fn insert(&mut self, i: usize, r: (u64, u64)) {
        if i == self.len() {
            // At the top, the common case: leave the split where it is.
            if self.hi.is_empty() {
                self.lo.push_back(r);
            } else {
                self.hi.push_back(r);
            }
            return;
        }
        self.split_at(i);
        self.hi.push_front(r);
    }
    /// Removes the ranges with indices in `from..to`.
    #[inline]
    pub fn remove(&mut self, from: usize, to: usize) {
        if to <= from {
            return;
        }
        self.split_at(from);
        if to - from == 1 {
            self.hi.pop_front();
        } else {
            self.hi.drain(..to - from);
        }
    }
    pub fn clear(&mut self) {
        self.release();
    }

    /// Frees the rings once the set is empty: a flow holds ranges only
    /// during a loss episode, and a ring that kept its largest size would
    /// let the memory of many flows grow with the run (each flow's worst
    /// episode, not what they hold at once; see `tests/memory.rs`). One
    /// allocation per episode is nothing next to the ACKs it serves.
    #[cold]
    fn release(&mut self) {
        self.lo = VecDeque::new();
        self.hi = VecDeque::new();
    }
    pub fn iter(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.lo.iter().chain(self.hi.iter()).copied()
    }

    /// How many ranges start at or below `x`: the range that holds or
    /// precedes `x` is the one before that index. The top range is checked
    /// first, as most queries are about the newest data.
    #[inline]
    pub fn count_starting_at_or_below(&self, x: u64) -> usize {
        let n = self.len();
        match self.last() {
            None => 0,
            Some((a, _)) if a <= x => n,
            Some(_) => match self.hi.front() {
                Some(&(a, _)) if a <= x => {
                    self.lo.len() + self.hi.partition_point(|&(a, _)| a <= x)
                }
                _ => self.lo.partition_point(|&(a, _)| a <= x),
            },
        }
    }

    /// True when `x` lies in a range.
    #[inline]
    pub fn contains(&self, x: u64) -> bool {
        let p = self.count_starting_at_or_below(x);
        p > 0 && self.get(p - 1).1 > x
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    /// Rebuilds the ranges of a set of numbers, for comparison.
    fn ranges_of(model: &BTreeSet<u64>) -> Vec<(u64, u64)> {
        let mut out: Vec<(u64, u64)> = Vec::new();
        for &x in model {
            match out.last_mut() {
                Some(r) if r.1 == x => r.1 = x + 1,
                _ => out.push((x, x + 1)),
            }
        }
        out
    }

    /// Adds [lo, hi) the way the receiver and the scoreboard do: find the
    /// ranges it touches with `count_starting_at_or_below`, widen, insert
    /// the union, remove the ranges it swallowed.
    fn add(set: &mut RangeSet, lo: u64, hi: u64) {
        let mut at = set.count_starting_at_or_below(lo);
        let (mut a, mut b) = (lo, hi);
        if at > 0 && set.get(at - 1).1 >= lo {
            at -= 1;
            a = a.min(set.get(at).0);
        }
        let mut next = at;
        while next < set.len() && set.get(next).0 <= b {
            b = b.max(set.get(next).1);
            next += 1;
        }
        if next > at {
            set.set(at, (a, b));
            set.remove(at + 1, next);
        } else {
            set.insert(at, (a, b));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 256,
            rng_seed: proptest::test_runner::RngSeed::Fixed(11),
            ..ProptestConfig::default()
        })]
        /// Any sequence of additions and bottom removals gives the same
        /// ranges, lookups and iteration as a plain set of numbers, wherever
        /// the split happens to be.
        #[test]
        fn agrees_with_a_set_of_numbers(ops in prop::collection::vec((0u64..400, 1u64..6, 0u8..8), 1..300)) {
            let mut set = RangeSet::new();
            let mut model = BTreeSet::new();
            for (start, width, kind) in ops {
                if kind == 0 {
                    prop_assert_eq!(set.pop_first(), ranges_of(&model).first().copied());
                    if let Some(&(a, b)) = ranges_of(&model).first() {
                        for x in a..b { model.remove(&x); }
                    }
                } else {
                    add(&mut set, start, start + width);
                    model.extend(start..start + width);
                }
                let expect = ranges_of(&model);
                prop_assert_eq!(set.iter().collect::<Vec<_>>(), expect.clone());
                prop_assert_eq!(set.len(), expect.len());
                prop_assert_eq!(set.first(), expect.first().copied());
                prop_assert_eq!(set.last(), expect.last().copied());
                for x in 0..410 {
                    prop_assert_eq!(set.contains(x), model.contains(&x), "x = {}", x);
                    prop_assert_eq!(set.count_starting_at_or_below(x), expect.partition_point(|&(a, _)| a <= x));
                }
            }
        }
    }
}
