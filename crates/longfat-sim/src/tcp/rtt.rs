//! RTT estimation and the retransmission timeout (RFC 6298).

use longfat_cc::RttStats;

#[derive(Clone, Debug)]
pub struct RttEstimator {
    srtt_ns: u64,
    rttvar_ns: u64,
    min_ns: u64,
    latest_ns: u64,
    has_sample: bool,
    initial_rto_ns: u64,
    min_rto_ns: u64,
    max_rto_ns: u64,
}

impl RttEstimator {
    pub fn new(initial_rto_ns: u64, min_rto_ns: u64, max_rto_ns: u64) -> Self {
        Self {
            srtt_ns: 0,
            rttvar_ns: 0,
            min_ns: 0,
            latest_ns: 0,
            has_sample: false,
            initial_rto_ns,
            min_rto_ns,
            max_rto_ns,
        }
    }

    /// RFC 6298 §2.2 (first sample) and §2.3 (alpha = 1/8, beta = 1/4).
    pub fn on_sample(&mut self, rtt_ns: u64) {
        self.latest_ns = rtt_ns;
        if !self.has_sample {
            self.has_sample = true;
            self.srtt_ns = rtt_ns;
            self.rttvar_ns = rtt_ns / 2;
            self.min_ns = rtt_ns;
            return;
        }
        self.min_ns = self.min_ns.min(rtt_ns);
        let err = self.srtt_ns.abs_diff(rtt_ns);
        self.rttvar_ns = (3 * self.rttvar_ns + err) / 4;
        self.srtt_ns = (7 * self.srtt_ns + rtt_ns) / 8;
    }

    /// RTO = SRTT + max(4 RTTVAR, min_rto), clamped to max_rto; the initial
    /// value before any sample (RFC 6298 §2.1).
    ///
    /// RFC 6298 §2.4 floors the whole RTO at min_rto; Linux (`tcp_rtt_estimator`,
    /// `__tcp_set_rto`) floors the variance term instead, so RTO >= SRTT +
    /// min_rto. We take Linux's rule: with an RTT sample on every ACK RTTVAR
    /// collapses to almost nothing, and RFC 6298's rule then fires spurious
    /// timeouts whenever a fast retransmission needs a little over one RTT.
    pub fn rto_ns(&self) -> u64 {
        if !self.has_sample {
            return self.initial_rto_ns.clamp(self.min_rto_ns, self.max_rto_ns);
        }
        (self.srtt_ns + (4 * self.rttvar_ns).max(self.min_rto_ns)).min(self.max_rto_ns)
    }

    /// The timeout after `backoff` consecutive expiries (§5.5: doubled each time).
    pub fn backed_off_rto_ns(&self, backoff: u32) -> u64 {
        let base = self.rto_ns();
        base.checked_shl(backoff.min(32))
            .unwrap_or(u64::MAX)
            .min(self.max_rto_ns)
            .max(base.min(self.max_rto_ns))
    }

    pub fn stats(&self) -> RttStats {
        RttStats {
            latest_ns: self.latest_ns,
            min_ns: self.min_ns,
            smoothed_ns: self.srtt_ns,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn rfc6298_first_and_later_samples() {
        let mut e = RttEstimator::new(1000 * MS, 200 * MS, 60_000 * MS);
        assert_eq!(e.rto_ns(), 1000 * MS);
        e.on_sample(100 * MS);
        // SRTT = 100, RTTVAR = 50, RTO = 100 + 200 = 300 ms
        assert_eq!(e.rto_ns(), 300 * MS);
        e.on_sample(120 * MS);
        // RTTVAR = 3/4*50 + 1/4*20 = 42.5; SRTT = 7/8*100 + 1/8*120 = 102.5;
        // 4 RTTVAR = 170 ms is below the 200 ms floor.
        assert_eq!(e.stats().smoothed_ns, 102_500_000);
        assert_eq!(e.rto_ns(), 102_500_000 + 200 * MS);
        for _ in 0..3 {
            e.on_sample(300 * MS);
        }
        // Large deviations: 4 RTTVAR above the floor is used as is.
        let (srtt, var) = {
            let (mut srtt, mut var) = (102_500_000u64, 42_500_000u64);
            for _ in 0..3 {
                var = (3 * var + srtt.abs_diff(300 * MS)) / 4;
                srtt = (7 * srtt + 300 * MS) / 8;
            }
            (srtt, var)
        };
        assert!(4 * var > 200 * MS);
        assert_eq!(e.rto_ns(), srtt + 4 * var);
        assert_eq!(e.stats().min_ns, 100 * MS);
    }

    #[test]
    fn min_rto_floor_and_backoff_doubling_with_ceiling() {
        let mut e = RttEstimator::new(1000 * MS, 200 * MS, 60_000 * MS);
        for _ in 0..50 {
            e.on_sample(10 * MS);
        }
        assert_eq!(e.rto_ns(), 210 * MS);
        assert_eq!(e.backed_off_rto_ns(1), 420 * MS);
        assert_eq!(e.backed_off_rto_ns(3), 1680 * MS);
        assert_eq!(e.backed_off_rto_ns(12), 60_000 * MS);
        assert_eq!(e.backed_off_rto_ns(100), 60_000 * MS);
    }
}
