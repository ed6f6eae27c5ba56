//! Delivery-rate estimation (draft-cheng-iccrg-delivery-rate-estimation;
//! Linux net/ipv4/tcp_rate.c): what the connection had delivered when each
//! packet left (`tcp_rate_skb_sent`), the newest-sent packet an ACK
//! delivers (`tcp_rate_skb_delivered`), and from the two a sample per ACK
//! (`tcp_rate_gen`): packets delivered over the longer of the send and the
//! ACK phases. Only a sender whose controller asks for samples
//! (`CongestionControl::wants_rate_samples`) keeps any of this; the
//! per-packet records live in the scoreboard (`Scoreboard::with_rates`).

use longfat_cc::RateSample;

/// The connection's delivery state when a packet was (re)transmitted
/// (Linux `TCP_SKB_CB(skb)->tx`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TxRate {
    /// `tx.delivered`: packets delivered before it left.
    pub delivered_pkts: u64,
    /// `tx.delivered_mstamp`: when that count last moved.
    pub delivered_ns: u64,
    /// `tx.first_tx_mstamp`: the send time of the packet that opened the
    /// sampling window it belongs to.
    pub first_tx_ns: u64,
    /// `tx.is_app_limited`.
    pub app_limited: bool,
}

/// A packet the ACK being processed delivered, as the rate estimator needs
/// it: its last send time, number, whether it was ever retransmitted
/// (Linux `TCPCB_RETRANS`), and its [`TxRate`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Delivered {
    pub xmit_ns: u64,
    pub seq: u64,
    pub retransmitted: bool,
    pub tx: TxRate,
}

/// The connection's side of tcp_rate.c (fields of `struct tcp_sock`) and
/// the sample being built for the ACK in progress (`struct rate_sample`).
#[derive(Clone, Debug, Default)]
pub struct RateEstimator {
    /// `tp->delivered`: packets delivered (SACKed or cumulatively
    /// acknowledged) over the connection.
    delivered_pkts: u64,
    /// `tp->delivered_mstamp`.
    delivered_ns: u64,
    /// `tp->first_tx_mstamp`.
    first_tx_ns: u64,
    /// `tp->app_limited`: 0, or the delivered count at which the
    /// application-limited bubble will have been delivered.
    app_limited_until: u64,
    /// `tp->lost`: packets marked lost over the connection.
    lost_pkts: u64,
    // The sample in progress (`rs`, reset per ACK by `begin_ack`).
    /// `rs->prior_delivered` and `rs->prior_mstamp` (None: no packet with
    /// timing information delivered yet on this ACK).
    prior_delivered_pkts: u64,
    prior_ns: Option<u64>,
    /// `rs->interval_us` as `tcp_rate_skb_delivered` sets it: the send phase.
    send_interval_ns: u64,
    is_app_limited: bool,
    is_retrans: bool,
    /// `rs->last_end_seq`, as a packet number (None: none yet).
    last_seq: Option<u64>,
    /// The last sample taken (`tcp_rate_gen`), for the controller.
    sample: RateSample,
}

impl RateEstimator {
    /// `tcp_rate_skb_sent`: packet `seq` leaves at `now_ns`;
    /// `nothing_out`: no packet was outstanding before it (`!packets_out`),
    /// which restarts the sampling window at its send time.
    #[inline]
    pub fn on_sent(&mut self, now_ns: u64, nothing_out: bool) -> TxRate {
        if nothing_out {
            self.first_tx_ns = now_ns;
            self.delivered_ns = now_ns;
        }
        TxRate {
            delivered_pkts: self.delivered_pkts,
            delivered_ns: self.delivered_ns,
            first_tx_ns: self.first_tx_ns,
            app_limited: self.app_limited_until != 0,
        }
    }

    /// A new ACK: the sample starts empty (`struct rate_sample rs = {
    /// .prior_delivered = 0 }` in `tcp_ack`).
    pub fn begin_ack(&mut self) {
        self.prior_delivered_pkts = 0;
        self.prior_ns = None;
        self.send_interval_ns = 0;
        self.is_app_limited = false;
        self.is_retrans = false;
        self.last_seq = None;
    }

    /// `tcp_rate_skb_delivered`: the ACK delivered `d`. The packet sent
    /// last wins (`tcp_skb_sent_after`: later send time, then higher
    /// sequence), and any packet wins while the winner so far had
    /// delivered nothing before it (`!rs->prior_delivered`, as Linux).
    #[inline]
    pub fn on_delivered(&mut self, d: &Delivered) {
        let after = d.xmit_ns > self.first_tx_ns
            || (d.xmit_ns == self.first_tx_ns && self.last_seq.is_none_or(|l| d.seq > l));
        if self.prior_ns.is_none() || self.prior_delivered_pkts == 0 || after {
            self.prior_delivered_pkts = d.tx.delivered_pkts;
            self.prior_ns = Some(d.tx.delivered_ns);
            self.is_app_limited = d.tx.app_limited;
            self.is_retrans = d.retransmitted;
            self.last_seq = Some(d.seq);
            self.first_tx_ns = d.xmit_ns;
            // The send phase: from the first packet of the window to this one.
            self.send_interval_ns = d.xmit_ns.saturating_sub(d.tx.first_tx_ns);
        }
    }

    /// Packets newly marked lost (`tcp_mark_skb_lost` ->
    /// `tcp_notify_skb_loss_event`: `tp->lost += pcount`).
    #[inline]
    pub fn on_lost(&mut self, pkts: u64) {
        self.lost_pkts += pkts;
    }

    /// `tcp_rate_gen`: the ACK at `now_ns` delivered `delivered_pkts` and
    /// marked `lost_pkts` lost; `min_rtt_ns`: the connection's minimum RTT
    /// (None before the first sample: Linux's `tcp_min_rtt` is then ~0U,
    /// which rejects every interval). `rtt_ns`, `prior_in_flight_pkts`:
    /// carried into the sample as `tcp_ack` sets them.
    pub fn generate(
        &mut self,
        now_ns: u64,
        delivered_pkts: u64,
        lost_pkts: u64,
        min_rtt_ns: Option<u64>,
        rtt_ns: u64,
        prior_in_flight_pkts: u64,
    ) -> &RateSample {
        self.delivered_pkts += delivered_pkts;
        // Clear app-limited once the bubble is delivered and gone.
        if self.app_limited_until != 0 && self.delivered_pkts > self.app_limited_until {
            self.app_limited_until = 0;
        }
        if delivered_pkts > 0 {
            self.delivered_ns = now_ns;
        }
        let clamp32 = |v: u64| v.min(u64::from(u32::MAX)) as u32;
        // Built where it is kept (not on the stack and copied: 96 bytes).
        let rs = &mut self.sample;
        *rs = RateSample {
            valid: false,
            delivered_pkts: 0,
            interval_ns: 0,
            prior_delivered_pkts: self.prior_delivered_pkts,
            rtt_ns,
            is_app_limited: self.is_app_limited,
            losses_pkts: clamp32(lost_pkts),
            acked_sacked_pkts: clamp32(delivered_pkts),
            prior_in_flight_pkts: clamp32(prior_in_flight_pkts),
            delivered_total_pkts: self.delivered_pkts,
            lost_total_pkts: self.lost_pkts,
            delivered_time_ns: self.delivered_ns,
        };
        // No timing information: nothing delivered with a send record.
        if let Some(prior_ns) = self.prior_ns {
            rs.delivered_pkts = self.delivered_pkts - self.prior_delivered_pkts;
            // Sending and ACKing a window are two pipeline phases; with ACK
            // compression the send phase can be the longer: take the longer.
            let ack_interval_ns = now_ns.saturating_sub(prior_ns);
            let interval_ns = self.send_interval_ns.max(ack_interval_ns);
            // An interval below the minimum RTT is not physical (Linux:
            // `rs->interval_us = -1`).
            if min_rtt_ns.is_some_and(|m| interval_ns >= m) {
                rs.interval_ns = interval_ns;
                rs.valid = interval_ns > 0;
            }
        }
        rs
    }

    /// `tcp_rate_check_app_limited`, called where the sender found nothing
    /// to send although the window had room and no lost packet waits: the
    /// data in flight now is a bubble, and samples until it is delivered
    /// are application-limited.
    #[inline]
    pub fn mark_app_limited(&mut self, in_flight_pkts: u64) {
        self.app_limited_until = (self.delivered_pkts + in_flight_pkts).max(1);
    }

    /// The controller's own mark (`CongestionControl::app_limited_until`:
    /// BBR writes `tp->app_limited` in PROBE_RTT): samples are
    /// application-limited until the delivered count passes `until`.
    #[inline]
    pub fn set_app_limited_until(&mut self, until: u64) {
        self.app_limited_until = until.max(1);
    }

    /// The last sample taken.
    pub fn sample(&self) -> RateSample {
        self.sample
    }

    pub fn app_limited(&self) -> bool {
        self.app_limited_until != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn deliver(r: &mut RateEstimator, txs: &[(u64, u64, TxRate)], now: u64) -> RateSample {
        r.begin_ack();
        for &(xmit, seq, tx) in txs {
            r.on_delivered(&Delivered {
                xmit_ns: xmit,
                seq,
                retransmitted: false,
                tx,
            });
        }
        *r.generate(now, txs.len() as u64, 0, Some(10 * MS), 0, 0)
    }

    /// The newest-sent packet's record wins over an older one delivered
    /// by the same ACK, whatever the order they are met in.
    #[test]
    fn the_newest_sent_packet_sets_the_sample() {
        let mut r = RateEstimator::default();
        let a = r.on_sent(0, true);
        r.delivered_pkts = 5; // as if five were delivered in between
        let b = r.on_sent(MS, false);
        let s = deliver(&mut r, &[(MS, 1, b), (0, 0, a)], 20 * MS);
        assert_eq!(s.prior_delivered_pkts, 5);
        assert_eq!(s.delivered_pkts, 2);
        // send phase: 1 ms - 0; ACK phase: 20 ms - 0 (b's delivered time is
        // the window's start, 0): 20 ms.
        assert_eq!(s.interval_ns, 20 * MS);
        assert!(s.valid);
    }
}
