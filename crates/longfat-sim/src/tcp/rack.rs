//! RACK (RFC 8985, Linux `tcp_recovery.c`): time-based loss detection. A
//! packet is lost when a packet sent after it has been delivered and more
//! than one RTT plus a reordering window has passed since it was sent. This
//! also finds lost retransmissions, which the RFC 6675 scoreboard cannot.
//!
//! Linux keeps its packets on a list in transmission order
//! (`tsorted_sent_queue`). Ours is a queue of (packet, send time) with one
//! entry per transmission; an entry whose packet has since been delivered or
//! sent again is stale and is dropped when it reaches the front. Each entry
//! is pushed once and popped once: O(1) amortized per packet.

use std::collections::VecDeque;

use crate::tcp::scoreboard::Scoreboard;

#[derive(Clone, Debug, Default)]
pub struct Rack {
    /// Transmissions in the order they happened.
    sent: VecDeque<(u64, u64)>,
    /// `rack.mstamp` / `rack.end_seq`: the last-sent packet known delivered.
    newest_xmit_ns: u64,
    newest_seq: u64,
    /// `rack.rtt_us`: the RTT of that packet.
    rtt_ns: u64,
    /// Set when a delivery moved the RACK point (`rack.advanced`).
    advanced: bool,
}

/// What one detection pass found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Detection {
    /// Packets newly marked lost (originals and retransmissions).
    pub newly_lost: u64,
    /// Time until every packet sent before the RACK point and not yet lost
    /// may be declared lost (`tcp_rack_detect_loss`'s `reo_timeout`).
    pub wait_ns: Option<u64>,
}

impl Rack {
    /// A packet went out (new, retransmitted, or probed again).
    pub fn on_transmit(&mut self, seq: u64, now_ns: u64) {
        self.sent.push_back((seq, now_ns));
    }

    /// `tcp_rack_advance` for the last-sent packet an ACK delivered. A
    /// retransmission acknowledged faster than the minimum RTT is ambiguous
    /// (the ACK may be for the original) and is ignored.
    pub fn on_delivered(
        &mut self,
        now_ns: u64,
        seq: u64,
        xmit_ns: u64,
        retransmitted: bool,
        min_rtt_ns: u64,
    ) {
        let rtt = now_ns.saturating_sub(xmit_ns);
        if retransmitted && rtt < min_rtt_ns {
            return;
        }
        self.advanced = true;
        self.rtt_ns = rtt;
        if xmit_ns > self.newest_xmit_ns
            || (xmit_ns == self.newest_xmit_ns && seq > self.newest_seq)
        {
            self.newest_xmit_ns = xmit_ns;
            self.newest_seq = seq;
        }
    }

    /// RFC 8985 §6.2 / `tcp_rack_detect_loss`: walks the transmissions sent
    /// before the RACK point, oldest first, and marks lost those sent more
    /// than `rtt + reo_wnd_ns` ago. `force` runs it without a new delivery
    /// (the reordering timer).
    pub fn detect(
        &mut self,
        sb: &mut Scoreboard,
        now_ns: u64,
        reo_wnd_ns: u64,
        force: bool,
    ) -> Detection {
        let mut d = Detection::default();
        if !self.advanced && !force {
            self.drop_stale(sb);
            return d;
        }
        self.advanced = false;
        while let Some(&(seq, xmit)) = self.sent.front() {
            if !sb.is_pending_copy(seq, xmit) {
                self.sent.pop_front();
                continue;
            }
            if !self.sent_before(seq, xmit) {
                break;
            }
            let deadline = xmit.saturating_add(self.rtt_ns).saturating_add(reo_wnd_ns);
            if deadline > now_ns {
                // Linux waits for the last of the packets still in their
                // window (`*reo_timeout = max_t(u32, *reo_timeout,
                // remaining)`), not the first. Deadlines grow with the send
                // time, so that is the last pending one sent before the
                // RACK point; none of them is lost yet. (Linux also skips
                // packets marked lost and not yet retransmitted; the sender
                // uses the wait only while none is marked, so no filter.)
                let last_xmit = self
                    .sent
                    .iter()
                    .take_while(|&&(q, t)| self.sent_before(q, t))
                    .filter(|&&(q, t)| sb.is_pending_copy(q, t))
                    .last()
                    .map_or(xmit, |&(_, t)| t);
                d.wait_ns = Some(
                    last_xmit
                        .saturating_add(self.rtt_ns)
                        .saturating_add(reo_wnd_ns)
                        - now_ns,
                );
                break;
            }
            self.sent.pop_front();
            if sb.is_retransmitted(seq) {
                sb.mark_retransmission_lost(seq);
                d.newly_lost += 1;
            } else if !sb.is_lost(seq) {
                d.newly_lost += sb.mark_lost_through(seq);
            }
        }
        d
    }

    /// `tcp_rack_sent_after(rack.mstamp, xmit, rack.end_seq, seq)`: the
    /// transmission left before the last-sent packet known delivered.
    fn sent_before(&self, seq: u64, xmit_ns: u64) -> bool {
        xmit_ns < self.newest_xmit_ns || (xmit_ns == self.newest_xmit_ns && seq < self.newest_seq)
    }

    /// Pops entries already delivered or superseded, so the queue stays
    /// within the packets actually in flight.
    fn drop_stale(&mut self, sb: &Scoreboard) {
        while let Some(&(seq, xmit)) = self.sent.front() {
            if sb.is_pending_copy(seq, xmit) {
                break;
            }
            self.sent.pop_front();
        }
    }

    pub fn rtt_ns(&self) -> u64 {
        self.rtt_ns
    }
}
