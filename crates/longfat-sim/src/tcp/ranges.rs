//! A set of packet numbers as disjoint, non-adjacent [start, end) ranges in
//! a sorted ring: the receiver's out-of-order data and the sender's SACKed
//! packets.
//!
//! Both sets change at their ends almost always: new ranges appear or grow
//! at the top (data above every hole arrives in order) and leave at the
//! bottom (the cumulative ACK), and a retransmission that fills a hole
//! merges two ranges near the bottom, since holes are repaired in order.
//! A ring does each of those in O(1) (a middle insertion or removal moves
//! the shorter side) and a lookup is a binary search over contiguous
//! memory, where a `BTreeMap` paid a search from the root, at both bounds
//! of a range query, for every one (callgrind: several hundred
//! instructions each).

use std::collections::VecDeque;

#[derive(Clone, Debug, Default)]
pub struct RangeSet {
    /// Sorted by start; disjoint and non-adjacent.
    ranges: VecDeque<(u64, u64)>,
}

impl RangeSet {
    pub fn new() -> Self {
        Self::default()
    }
    #[inline]
    pub fn len(&self) -> usize {
        self.ranges.len()
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }
    #[inline]
    pub fn first(&self) -> Option<(u64, u64)> {
        self.ranges.front().copied()
    }
    #[inline]
    pub fn last(&self) -> Option<(u64, u64)> {
        self.ranges.back().copied()
    }
    /// The `i`-th range from the bottom.
    #[inline]
    pub fn get(&self, i: usize) -> (u64, u64) {
        self.ranges[i]
    }
    /// Replaces the `i`-th range; the caller keeps the order.
    #[inline]
    pub fn set(&mut self, i: usize, r: (u64, u64)) {
        self.ranges[i] = r;
    }
    #[inline]
    pub fn pop_first(&mut self) -> Option<(u64, u64)> {
        let r = self.ranges.pop_front();
        if self.ranges.is_empty() {
            self.release();
        }
        r
    }
    /// Inserts `r` as the `i`-th range; the caller keeps the order.
    #[inline]
    pub fn insert(&mut self, i: usize, r: (u64, u64)) {
        self.ranges.insert(i, r);
    }
    /// Removes the ranges with indices in `from..to`.
    #[inline]
    pub fn remove(&mut self, from: usize, to: usize) {
        match to - from {
            0 => {}
            1 => {
                self.ranges.remove(from);
            }
            _ => {
                self.ranges.drain(from..to);
            }
        }
    }
    pub fn clear(&mut self) {
        self.release();
    }

    /// Frees the ring once the set is empty: a flow holds ranges only
    /// during a loss episode, and a ring that kept its largest size would
    /// let the memory of many flows grow with the run (each flow's worst
    /// episode, not what they hold at once; see `tests/memory.rs`). One
    /// allocation per episode is nothing next to the ACKs it serves.
    #[cold]
    fn release(&mut self) {
        self.ranges = VecDeque::new();
    }
    pub fn iter(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.ranges.iter().copied()
    }

    /// How many ranges start at or below `x`: the range that holds or
    /// precedes `x` is the one before that index. The top range is checked
    /// first, as most queries are about the newest data.
    #[inline]
    pub fn count_starting_at_or_below(&self, x: u64) -> usize {
        match self.ranges.back() {
            None => 0,
            Some(&(a, _)) if a <= x => self.ranges.len(),
            Some(_) => self.ranges.partition_point(|&(a, _)| a <= x),
        }
    }

    /// True when `x` lies in a range.
    #[inline]
    pub fn contains(&self, x: u64) -> bool {
        let p = self.count_starting_at_or_below(x);
        p > 0 && self.ranges[p - 1].1 > x
    }
}
