//! Pacing as Linux does it inside TCP (`tcp_needs_internal_pacing`, no
//! fq qdisc): earliest departure times (EDT). Each transmission moves the
//! flow's departure clock (`tp->tcp_wstamp_ns`) on by its bytes over the
//! pacing rate (tcp_output.c `tcp_update_skb_after_send`); the send loop
//! stops while that clock is ahead of now and waits for the pacing timer
//! (`tcp_pacing_check`, `tp->pacing_timer`), one per flow. The rate is the
//! controller's (`sk_pacing_rate` as BBR sets it) or Linux's own
//! (tcp_input.c `tcp_update_pacing_rate`): MSS x max(cwnd, packets out) /
//! SRTT x 200 % while cwnd < ssthresh / 2, else x 120 %.
//!
//! Bursts: under the `linux` profile a departure is an skb of
//! `tcp_tso_autosize` segments (about 1 ms of data at the pacing rate,
//! `sk_pacing_shift` = 10, at least `tcp_min_tso_segs` = 2, at most 64 KB
//! of GSO), which leave back to back; the clock moves by the whole skb,
//! less up to half of it as credit for time the flow was idle ("OS
//! jitter"), and the skbs sent before the connection's 10th segment are
//! not paced (`tp->data_segs_out >= 10` in `tcp_update_skb_after_send`,
//! sch_fq's initial quantum). The `rfc` and `ns2`
//! profiles pace every packet on its own, by its bytes over the rate,
//! without credit or exemption (ns-3's `TcpSocketBase` pacing).

use crate::units::NS_PER_SEC;

/// `sk_pacing_shift`: an skb holds about 2^-10 s (1 ms) of data.
const PACING_SHIFT: u32 = 10;
/// `net.ipv4.tcp_min_tso_segs`.
const MIN_TSO_SEGS: u64 = 2;
/// `sk_gso_max_size` (GSO_LEGACY_MAX_SIZE): 64 KB per skb.
const GSO_MAX_BYTES: u64 = 65_536;
/// Segments sent before pacing starts (`tp->data_segs_out >= 10`).
const UNPACED_SEGS: u64 = 10;

/// One flow's pacing state: constant size, whatever the window.
#[derive(Clone, Debug)]
pub struct Pacer {
    /// Linux's bursts, credit and exemption (see the module doc).
    linux: bool,
    /// `sk_pacing_rate`, payload bytes per second (u64::MAX: unpaced).
    rate_bytes_per_sec: u64,
    /// Segments per skb (`tcp_tso_autosize`; 1 outside `linux`).
    tso_segs: u64,
    /// The MSS `tso_segs` was worked out for (at least 1; 0: none yet).
    tso_mss_bytes: u64,
    /// `tp->tcp_wstamp_ns`: the earliest departure of the next skb.
    wstamp_ns: u64,
    /// The skb being sent: its packets and bytes so far, and the idle
    /// credit its start took (`tcp_wstamp_ns - prior_wstamp`).
    skb_pkts: u64,
    skb_bytes: u64,
    skb_credit_ns: u64,
    /// `tp->data_segs_out`.
    segs_out: u64,
    /// When the pacing timer is armed for (None: not armed).
    pub timer_ns: Option<u64>,
}

impl Pacer {
    pub fn new(linux: bool) -> Self {
        Self {
            linux,
            rate_bytes_per_sec: u64::MAX,
            tso_segs: 1,
            tso_mss_bytes: 0,
            wstamp_ns: 0,
            skb_pkts: 0,
            skb_bytes: 0,
            skb_credit_ns: 0,
            segs_out: 0,
            timer_ns: None,
        }
    }

    /// Linux `tcp_update_pacing_rate`: payload bytes per second for an MSS
    /// of `mss_bytes`, `cwnd_pkts`, `packets_out`, the smoothed RTT (0:
    /// no sample, unpaced as Linux, whose rate is then not divided by
    /// anything) and the ratio in percent.
    pub fn linux_rate(
        mss_bytes: u64,
        cwnd_pkts: u64,
        packets_out: u64,
        srtt_ns: u64,
        ratio_pct: u32,
    ) -> u64 {
        if srtt_ns == 0 {
            return u64::MAX;
        }
        // The same integer quotient in 64 bits when the numerator fits
        // (every realistic window: about 1.8e19 / (1448 x 200 % x 1e9) =
        // 6.4 million packets), the u128 division (`__udivti3`) otherwise.
        let num = mss_bytes
            .checked_mul(u64::from(ratio_pct))
            .and_then(|x| x.checked_mul(cwnd_pkts.max(packets_out)))
            .and_then(|x| x.checked_mul(NS_PER_SEC));
        if let (Some(num), Some(den)) = (num, srtt_ns.checked_mul(100)) {
            return num / den;
        }
        let r = u128::from(mss_bytes)
            * u128::from(ratio_pct)
            * u128::from(cwnd_pkts.max(packets_out))
            * u128::from(NS_PER_SEC)
            / (100 * u128::from(srtt_ns));
        r.min(u128::from(u64::MAX)) as u64
    }

    /// Sets the pacing rate; under `linux` the skb size follows it
    /// (`tcp_tso_autosize`: rate >> sk_pacing_shift bytes, at most 64 KB,
    /// at least 2 segments).
    /// The same rate and MSS again (a controller's rate, BBR's, changes a
    /// few times a round, and the send loop sets it on every call) change
    /// nothing.
    #[inline]
    pub fn set_rate(&mut self, rate_bytes_per_sec: u64, mss_bytes: u64) {
        let mss_bytes = mss_bytes.max(1);
        if rate_bytes_per_sec == self.rate_bytes_per_sec && mss_bytes == self.tso_mss_bytes {
            return;
        }
        self.rate_bytes_per_sec = rate_bytes_per_sec;
        self.tso_mss_bytes = mss_bytes;
        if self.linux {
            let bytes = (rate_bytes_per_sec >> PACING_SHIFT).min(GSO_MAX_BYTES);
            self.tso_segs = (bytes / mss_bytes).max(MIN_TSO_SEGS);
        }
    }

    pub fn rate_bytes_per_sec(&self) -> u64 {
        self.rate_bytes_per_sec
    }

    pub fn tso_segs(&self) -> u64 {
        self.tso_segs
    }

    /// The earliest departure of the next skb (`tp->tcp_wstamp_ns`).
    pub fn next_departure_ns(&self) -> u64 {
        self.wstamp_ns
    }

    /// `tcp_pacing_check`: may a packet leave at `now_ns`? Within an skb,
    /// always; a new skb only once the clock has caught up. None: yes;
    /// Some(t): not before `t`.
    #[inline]
    pub fn wait_until(&self, now_ns: u64) -> Option<u64> {
        (self.skb_pkts == 0 && self.wstamp_ns > now_ns).then_some(self.wstamp_ns)
    }

    /// A packet of `bytes` payload left at `now_ns`.
    #[inline]
    pub fn on_sent(&mut self, now_ns: u64, bytes: u64) {
        if self.skb_pkts == 0 {
            // `tcp_transmit_skb`: prior_wstamp, then the clock moves to now.
            let prior = self.wstamp_ns;
            self.wstamp_ns = self.wstamp_ns.max(now_ns);
            self.skb_credit_ns = self.wstamp_ns - prior;
        }
        self.skb_pkts += 1;
        self.skb_bytes += bytes;
        self.segs_out += 1;
        if self.skb_pkts >= self.tso_segs {
            self.end_skb();
        }
    }

    /// The skb in progress is complete (full, or the send loop stopped):
    /// `tcp_update_skb_after_send` moves the clock on by its length.
    #[inline]
    pub fn end_skb(&mut self) {
        if self.skb_pkts == 0 {
            return;
        }
        let rate = self.rate_bytes_per_sec;
        if rate != u64::MAX && rate > 0 && (!self.linux || self.segs_out >= UNPACED_SEGS) {
            let mut len_ns = skb_len_ns(self.skb_bytes, rate);
            if self.linux {
                len_ns -= (len_ns / 2).min(self.skb_credit_ns);
            }
            self.wstamp_ns += len_ns;
        }
        self.skb_pkts = 0;
        self.skb_bytes = 0;
        self.skb_credit_ns = 0;
    }
}

/// `bytes` x 1e9 / `rate` (floor), in 64 bits when the product fits (an
/// skb is at most 64 KB, so always in practice), else in 128; the same
/// quotient either way.
#[inline]
fn skb_len_ns(bytes: u64, rate_bytes_per_sec: u64) -> u64 {
    match bytes.checked_mul(NS_PER_SEC) {
        Some(num) => num / rate_bytes_per_sec,
        None => {
            (u128::from(bytes) * u128::from(NS_PER_SEC) / u128::from(rate_bytes_per_sec)) as u64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 64-bit paths give the u128 quotient: at the edges where the
    /// products stop fitting and on a spread of values.
    #[test]
    fn narrow_divisions_match_u128() {
        let wide_len =
            |b: u64, r: u64| (u128::from(b) * u128::from(NS_PER_SEC) / u128::from(r)) as u64;
        let edge = u64::MAX / NS_PER_SEC;
        for b in [
            0,
            1,
            1448,
            65_536,
            edge - 1,
            edge,
            edge + 1,
            u64::MAX / 2,
            u64::MAX,
        ] {
            for r in [1, 7, 1_000_000, 12_500_000, 1_250_000_000, u64::MAX - 1] {
                assert_eq!(skb_len_ns(b, r), wide_len(b, r), "{b} {r}");
            }
        }
        let wide_rate = |m: u64, c: u64, o: u64, s: u64, p: u32| {
            (u128::from(m) * u128::from(p) * u128::from(c.max(o)) * u128::from(NS_PER_SEC)
                / (100 * u128::from(s)))
            .min(u128::from(u64::MAX)) as u64
        };
        let mut x = 1u64;
        for _ in 0..100_000 {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let m = 1 + (x >> 48) % 9000;
            let c = 1 + (x >> 20) % [10, 10_000, 10_000_000, 1 << 40][(x % 4) as usize];
            let o = (x >> 8) % 20_000;
            let s = 1
                + (x >> 30) % [1_000, 100_000_000, 1 << 62, u64::MAX - 1][((x >> 2) % 4) as usize];
            let p = [0u32, 1, 120, 200, 1000][((x >> 4) % 5) as usize];
            assert_eq!(
                Pacer::linux_rate(m, c, o, s, p),
                wide_rate(m, c, o, s, p),
                "{m} {c} {o} {s} {p}"
            );
            let b = (x >> 3) % [1_500, 65_536, edge + 10, u64::MAX][((x >> 6) % 4) as usize];
            let r = 1 + (x >> 11) % [1_000, 1 << 40, u64::MAX - 1][((x >> 9) % 3) as usize];
            assert_eq!(skb_len_ns(b, r), wide_len(b, r), "{b} {r}");
        }
    }

    /// Linux's formula with hand-derived numbers: MSS 1448, cwnd 10, SRTT
    /// 100 ms: 144,800 bytes per second at 100 %.
    #[test]
    fn linux_rate_by_hand() {
        assert_eq!(Pacer::linux_rate(1448, 10, 0, 100_000_000, 200), 289_600);
        assert_eq!(Pacer::linux_rate(1448, 10, 0, 100_000_000, 120), 173_760);
        // max(cwnd, packets_out)
        assert_eq!(Pacer::linux_rate(1448, 10, 20, 100_000_000, 100), 289_600);
        assert_eq!(Pacer::linux_rate(1448, 10, 0, 0, 200), u64::MAX);
    }

    /// `tcp_tso_autosize`: 1 ms of data, at least 2, at most 64 KB.
    #[test]
    fn tso_autosize() {
        let mut p = Pacer::new(true);
        p.set_rate(12_500_000, 1448); // 100 Mbit/s: 12207 bytes per 1/1024 s
        assert_eq!(p.tso_segs(), 12_207 / 1448);
        p.set_rate(100_000, 1448);
        assert_eq!(p.tso_segs(), 2);
        p.set_rate(1_250_000_000, 1448); // 10 Gbit/s: capped at 64 KB
        assert_eq!(p.tso_segs(), 65_536 / 1448);
        // The same rate with another MSS is worked out again.
        p.set_rate(1_250_000_000, 1000);
        assert_eq!(p.tso_segs(), 65);
        // The first rate set is worked out, even if it is the initial one.
        let mut p = Pacer::new(true);
        p.set_rate(u64::MAX, 1448);
        assert_eq!(p.tso_segs(), 65_536 / 1448);
    }

    /// Per-packet spacing (`rfc`, `ns2`): bytes / rate, to the nanosecond.
    #[test]
    fn per_packet_spacing() {
        let mut p = Pacer::new(false);
        p.set_rate(1_000_000, 1000);
        assert_eq!(p.wait_until(0), None);
        p.on_sent(0, 1000);
        assert_eq!(p.wait_until(0), Some(1_000_000));
        assert_eq!(p.wait_until(1_000_000), None);
        p.on_sent(1_000_000, 333);
        assert_eq!(p.next_departure_ns(), 1_333_000);
    }

    /// Linux's credit: after idling, the next skb's spacing shrinks by the
    /// idle time, at most by half.
    #[test]
    fn linux_credit_and_exemption() {
        let mut p = Pacer::new(true);
        p.set_rate(1_000_000, 1000); // tso_segs 2
                                     // `tp->data_segs_out` counts the skb being sent: the skbs that end
                                     // below 10 segments are not paced, the one that reaches 10 is.
        for i in 0..8 {
            p.on_sent(0, 1000);
            assert_eq!(p.next_departure_ns(), 0, "packet {i} is exempt");
        }
        p.on_sent(0, 1000);
        p.on_sent(0, 1000); // data_segs_out 10: paced, 2 ms
        assert_eq!(p.next_departure_ns(), 2_000_000);
        // Idle 10 ms beyond the clock: credit 10 ms, capped at half of 2 ms.
        p.on_sent(12_000_000, 1000);
        p.on_sent(12_000_000, 1000);
        assert_eq!(p.next_departure_ns(), 13_000_000);
    }
}
