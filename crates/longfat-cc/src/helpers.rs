//! Window-growth helpers shared by the algorithms, after Linux's
//! `tcp_slow_start` and `tcp_cong_avoid_ai` (net/ipv4/tcp_cong.c), but on
//! fractional packet windows as in ns-2.

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

/// True while the window is below the slow-start threshold.
pub fn in_slow_start(cwnd: f64, ssthresh: f64) -> bool {
    cwnd < ssthresh
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
}
