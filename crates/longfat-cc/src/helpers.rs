//! Window-growth helpers shared by the algorithms, after Linux's
//! `tcp_slow_start` and `tcp_cong_avoid_ai` (net/ipv4/tcp_cong.c), but on
//! fractional packet windows as in ns-2; the `linux_*` ones are those two in
//! Linux's whole packets, for the controllers' Linux rules.

use crate::{AckEvent, RtoEvent};

/// Smallest window any controller may return after a reduction (RFC 5681 §3.1
/// floor of 2 segments for ssthresh; cwnd itself may be 1 after an RTO).
pub const MIN_SSTHRESH_PKTS: f64 = 2.0;

/// Slow start (RFC 5681 §3.1): cwnd grows by one packet per packet delivered,
/// but not past `ssthresh`. Returns the delivered packets left over once
/// cwnd reached ssthresh, which the caller feeds to congestion avoidance.
pub fn slow_start(cwnd: &mut f64, ssthresh: f64, delivered_pkts: f64) -> f64 {
    let room = (ssthresh - *cwnd).max(0.0);
    let used = delivered_pkts.min(room);
    *cwnd += used;
    delivered_pkts - used
}

/// Additive increase: `a` packets per window of delivered packets, i.e.
/// `cwnd += a * delivered / cwnd` (RFC 5681 eq. (3) with a = 1).
pub fn additive_increase(cwnd: &mut f64, a: f64, delivered_pkts: f64) {
    if *cwnd > 0.0 {
        *cwnd += a * delivered_pkts / *cwnd;
    }
}

/// A window in Linux's whole packets (`u32 snd_cwnd`, `snd_ssthresh`): the
/// whole part of `pkts`, and `u32::MAX` for an unset (infinite) threshold
/// (Linux `TCP_INFINITE_SSTHRESH`, above any window).
pub fn linux_pkts(pkts: f64) -> u32 {
    if pkts >= f64::from(u32::MAX) {
        u32::MAX
    } else {
        pkts.max(0.0) as u32
    }
}

/// Linux `tcp_slow_start` (net/ipv4/tcp_cong.c) in whole packets: cwnd =
/// min(cwnd + acked, ssthresh); returns the ACKed packets left over, which
/// the caller hands to congestion avoidance.
pub fn linux_slow_start(cwnd: &mut u32, ssthresh: u32, acked: u32) -> u32 {
    let grown = cwnd.saturating_add(acked).min(ssthresh).max(*cwnd);
    let left = acked - (grown - *cwnd);
    *cwnd = grown;
    left
}

/// Linux `tcp_cong_avoid_ai(tp, w, acked)` (net/ipv4/tcp_cong.c): one
/// packet per `w` packets ACKed, counted whole in `cwnd_cnt` (Linux
/// `tp->snd_cwnd_cnt`). Credits already at or above `w` (counted while `w`
/// was larger) give one packet and restart the count, then the new credits
/// are counted and every whole `w` of them is a packet.
pub fn linux_cong_avoid_ai(cwnd: &mut u32, cwnd_cnt: &mut u32, w: u32, acked: u32) {
    let w = w.max(1); // Linux's callers never pass 0 (cwnd >= 1, CUBIC cnt >= 2)
                      // "If credits accumulated at a higher w, apply them gently now."
    if *cwnd_cnt >= w {
        *cwnd_cnt = 0;
        *cwnd = cwnd.saturating_add(1);
    }
    *cwnd_cnt = cwnd_cnt.saturating_add(acked);
    if *cwnd_cnt >= w {
        let delta = *cwnd_cnt / w;
        *cwnd_cnt -= delta * w;
        *cwnd = cwnd.saturating_add(delta);
    }
}

/// The frame of Linux's `cong_avoid` hooks (`tcp_reno_cong_avoid`,
/// `cubictcp_cong_avoid`) in whole packets: nothing when the transport
/// gives no growth (recovery, no forward progress, not cwnd-limited:
/// `tcp_is_cwnd_limited`), `tcp_slow_start` below ssthresh. Returns the
/// whole window and the ACKed packets left for congestion avoidance (0:
/// none); `cwnd` is set to the whole window.
pub fn linux_grow(cwnd: &mut f64, ssthresh: f64, ack: &AckEvent) -> (u32, u32) {
    let mut w = linux_pkts(*cwnd);
    if ack.in_recovery || ack.growth_pkts == 0 {
        return (w, 0);
    }
    let mut acked = ack.growth_pkts;
    if w < linux_pkts(ssthresh) {
        // `tcp_in_slow_start`
        acked = linux_slow_start(&mut w, linux_pkts(ssthresh), acked);
    }
    *cwnd = f64::from(w);
    (w, acked)
}

/// True while the window is below the slow-start threshold.
pub fn in_slow_start(cwnd: f64, ssthresh: f64) -> bool {
    cwnd < ssthresh
}

/// The window part of an ACK that every loss-based algorithm shares: growth
/// by the transport's `growth_pkts` (none during recovery, on an ACK that does
/// not advance the cumulative point, or while not cwnd-limited); slow start
/// below ssthresh; then `avoid(cwnd, delivered)` with the packets left over.
/// Returns true when this ACK ended slow start (cwnd reached ssthresh).
pub fn grow(
    cwnd: &mut f64,
    ssthresh: f64,
    ack: &AckEvent,
    avoid: impl FnOnce(&mut f64, f64),
) -> bool {
    if ack.in_recovery || ack.growth_pkts == 0 {
        return false;
    }
    let mut delivered = f64::from(ack.growth_pkts);
    let mut left_slow_start = false;
    if *cwnd < ssthresh {
        delivered = slow_start(cwnd, ssthresh, delivered);
        left_slow_start = *cwnd >= ssthresh;
    }
    if delivered > 0.0 {
        avoid(cwnd, delivered);
    }
    left_slow_start
}

/// A multiplicative decrease at the start of a loss episode: ssthresh
/// becomes `reduced_pkts`, floored at two packets (RFC 5681 eq. (4)), and
/// cwnd drops to it (never rises: after a timeout cwnd may be below the floor).
pub fn reduce(reduced_pkts: f64, cwnd: &mut f64, ssthresh: &mut f64) {
    *ssthresh = reduced_pkts.max(MIN_SSTHRESH_PKTS);
    *cwnd = cwnd.min(*ssthresh);
}

/// A retransmission timeout (RFC 5681 §3.1): ssthresh becomes the
/// algorithm's reduced window when the transport's profile says this expiry
/// reduces (`rto.reduce`; see [`RtoEvent`]); every expiry restarts from one
/// packet more than the timeout left in flight (`rto.in_flight_pkts`: 0,
/// so one packet, unless Linux spared recently sent ones).
pub fn timeout(reduced_pkts: f64, rto: &RtoEvent, cwnd: &mut f64, ssthresh: &mut f64) {
    if rto.reduce {
        *ssthresh = reduced_pkts.max(MIN_SSTHRESH_PKTS);
    }
    *cwnd = f64::from(rto.in_flight_pkts) + 1.0;
}

/// Counts round trips the way Linux's Vegas does with `beg_snd_nxt`: every
/// packet carries the number of the round it was sent in (the tag returned
/// by `on_send`), and a round ends when a packet sent during it is
/// acknowledged, i.e. one RTT after it began. Without timestamps (no echoed
/// tag) a round ends after one smoothed RTT.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RoundCounter {
    round: u32,
    round_start_ns: Option<u64>,
}

impl RoundCounter {
    /// The tag for a packet sent now.
    pub fn tag(&mut self, now_ns: u64) -> u32 {
        self.round_start_ns.get_or_insert(now_ns);
        self.round
    }

    /// The current round number (0 for the first).
    pub fn round(&self) -> u32 {
        self.round
    }

    /// True when this ACK closes the current round; the next one begins.
    pub fn on_ack(&mut self, ack: &AckEvent) -> bool {
        let start = *self.round_start_ns.get_or_insert(ack.now_ns);
        let ended = match ack.ts {
            Some(ts) => ts.echoed_tag == self.round,
            None => {
                ack.rtt.smoothed_ns > 0 && ack.now_ns.saturating_sub(start) >= ack.rtt.smoothed_ns
            }
        };
        if ended {
            self.round = self.round.wrapping_add(1);
            self.round_start_ns = Some(ack.now_ns);
        }
        ended
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_start_stops_at_ssthresh_and_returns_leftover() {
        let mut cwnd = 10.0;
        assert_eq!(slow_start(&mut cwnd, 12.0, 5.0), 3.0);
        assert_eq!(cwnd, 12.0);
        assert_eq!(slow_start(&mut cwnd, 12.0, 2.0), 2.0);
        assert_eq!(cwnd, 12.0);
    }

    #[test]
    fn additive_increase_adds_one_packet_per_window() {
        let mut cwnd = 4.0;
        for _ in 0..4 {
            additive_increase(&mut cwnd, 1.0, 1.0);
        }
        // 4 + 1/4 + 1/4.25 + 1/4.4853 + 1/4.7082 (per-ACK growth as in ns-2)
        let expected = {
            let mut c: f64 = 4.0;
            for _ in 0..4 {
                c += 1.0 / c;
            }
            c
        };
        assert!((cwnd - expected).abs() < 1e-12);
        assert!(cwnd > 4.9 && cwnd < 5.0);
    }

    #[test]
    fn a_round_ends_when_a_packet_sent_in_it_is_acked() {
        use crate::{AckEvent, AckTimestamps};
        let ack = |now_ns, tag| AckEvent {
            now_ns,
            ts: Some(AckTimestamps {
                echoed_tag: tag,
                ..Default::default()
            }),
            ..Default::default()
        };
        let mut r = RoundCounter::default();
        assert_eq!(r.tag(0), 0);
        assert!(r.on_ack(&ack(100, 0)), "first packet back: round 0 over");
        assert_eq!(r.tag(100), 1);
        assert!(
            !r.on_ack(&ack(101, 0)),
            "a packet of round 0 does not end round 1"
        );
        assert!(r.on_ack(&ack(200, 1)));
        assert_eq!(r.round(), 2);
    }

    #[test]
    fn without_timestamps_a_round_lasts_one_srtt() {
        use crate::{AckEvent, RttStats};
        let ack = |now_ns| AckEvent {
            now_ns,
            rtt: RttStats {
                smoothed_ns: 100,
                ..Default::default()
            },
            ..Default::default()
        };
        let mut r = RoundCounter::default();
        r.tag(0);
        assert!(!r.on_ack(&ack(99)));
        assert!(r.on_ack(&ack(100)));
        assert!(!r.on_ack(&ack(150)));
        assert!(r.on_ack(&ack(200)));
    }

    #[test]
    fn linux_cong_avoid_ai_applies_credits_counted_at_a_higher_w_first() {
        // tcp_cong_avoid_ai: 15 credits counted towards w = 20, then w = 7
        // (CUBIC's cnt drops): the 15 give one packet and the count restarts
        // at this ACK's 1 (not 15 + 1 = 16 = 2 * 7 + 2: two packets).
        let (mut cwnd, mut cnt) = (7, 15);
        linux_cong_avoid_ai(&mut cwnd, &mut cnt, 7, 1);
        assert_eq!((cwnd, cnt), (8, 1));
        // Below w the credits only count; at w one packet; 2 w + 1 at once
        // is two packets with 1 left.
        let (mut cwnd, mut cnt) = (10, 0);
        linux_cong_avoid_ai(&mut cwnd, &mut cnt, 10, 9);
        assert_eq!((cwnd, cnt), (10, 9));
        linux_cong_avoid_ai(&mut cwnd, &mut cnt, 10, 1);
        assert_eq!((cwnd, cnt), (11, 0));
        linux_cong_avoid_ai(&mut cwnd, &mut cnt, 10, 21);
        assert_eq!((cwnd, cnt), (13, 1));
    }

    #[test]
    fn linux_slow_start_returns_the_whole_leftover() {
        let mut cwnd = 8;
        assert_eq!(linux_slow_start(&mut cwnd, 10, 5), 3);
        assert_eq!(cwnd, 10);
        assert_eq!(linux_slow_start(&mut cwnd, u32::MAX, 4), 0);
        assert_eq!(cwnd, 14);
        assert_eq!(linux_pkts(f64::INFINITY), u32::MAX);
        assert_eq!(linux_pkts(7.9), 7);
    }
}
