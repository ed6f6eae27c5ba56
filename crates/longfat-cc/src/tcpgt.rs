//! TCP-GT, congestion control from goodput and throughput (Jung, Kim, Yeom,
//! Kang; `tcp-gt.md`).
//!
//! * Epochs (sect. III-B, Fig. 1): every data packet carries the sender's
//!   current epoch number (the `on_send` tag); the receiver echoes it. When
//!   an ACK echoes the current number, the epoch ends: the sender notes its
//!   own clock and the receiver's timestamp (TSval) and starts the next
//!   epoch. TS and TR are differences of one clock each, so the hosts'
//!   clock offsets cancel.
//! * Goodput G = N / TR (eq. 1) and throughput T = N / rtt_min (eq. 4, which
//!   replaces TS in eq. 2), with N the packets delivered in the epoch and
//!   rtt_min the smallest RTT of the last 10 epochs (eq. 5, sect. IV-F);
//!   phi = G - T (eq. 3). Rates are in packets per second here, so the MTU
//!   of eqs. (6)-(10) and (15)-(17) cancels.
//! * Algorithm 1 with the RTT compensation f = rtt / rtt_base (sect. III-E):
//!   while phi >= t T / f (eq. 16, t = -0.05) the splitting count grows,
//!   s += f (eq. 14), and every delivered packet adds
//!   p = f^2 s^2 / (G rtt_base cwnd) (eq. 15); otherwise s = 1 and every
//!   delivered packet adds n = f phi rtt_base / cwnd < 0 (eq. 17).
//!
//! What the paper leaves open (slow start and its end, losses, timeouts,
//! the first epochs, per-ACK application) is chosen below and listed with
//! reasons in docs/algorithms.md.

use std::collections::VecDeque;

use crate::error::{CcError, CcParams};
use crate::helpers::{grow, reduce, timeout, MIN_SSTHRESH_PKTS};
use crate::params::{Algorithm, Param, ParamReader, Range, Rules};
use crate::{AckEvent, CongestionControl, InitialWindow, LossEvent, RtoEvent};

const NS_PER_S: f64 = 1e9;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TcpgtConfig {
    /// rtt_base of the compensation factor f = rtt / rtt_base (sect. III-E: 50 ms).
    pub rtt_base_ns: u64,
    /// t of eq. (16): the II phase goes on while phi >= t T / f (footnote 5: -0.05).
    pub threshold: f64,
    /// Epochs over which the local minimum RTT is taken (eq. (5), sect. IV-F: 10).
    pub rtt_min_epochs: usize,
    /// Start with standard slow start, left at the first congested epoch.
    /// Off (the default): the II phase from the initial window, as sect.
    /// III-C describes a new flow walking from x_0 to x_1 (Fig. 2) and as
    /// the paper's loss-free starts require (see docs/algorithms.md).
    pub slow_start: bool,
    /// The most the II rule adds per packet delivered (our choice: 1, the
    /// pace of slow start, which no Linux controller exceeds). Eq. (15)
    /// alone is unbounded when G is tiny and f large.
    pub max_increase_pkts: f64,
}

pub const RTT_BASE_MS: Param = Param::real(
    "rtt_base_ms",
    "ms",
    50.0,
    Range::Open(0.0, 1e6),
    "rtt_base of the compensation factor f = rtt / rtt_base",
    "tcp-gt.md §III-E",
);
pub const THRESHOLD: Param = Param::real(
    "threshold",
    "fraction of T",
    -0.05,
    Range::Closed(-0.5, 0.0),
    "t of eq. (16): the II phase goes on while phi >= t T / f",
    "tcp-gt.md eq. (16), footnote 5",
);
pub const RTT_MIN_EPOCHS: Param = Param::real(
    "rtt_min_epochs",
    "epochs",
    10.0,
    Range::Whole(1.0, 1000.0),
    "window of the local minimum RTT",
    "tcp-gt.md eq. (5), §IV-F",
);
pub const SLOW_START: Param = Param::switch(
    "slow_start",
    false,
    "slow start before IIMD, left at the first congested epoch",
    "our addition (docs/algorithms.md)",
);
pub const MAX_INCREASE: Param = Param::real(
    "max_increase",
    "packets per packet",
    1.0,
    Range::Closed(0.001, 1e9),
    "cap on the II rule's increase per packet delivered (1e9: eq. (15) unbounded)",
    "our addition: the pace of slow start",
);

pub const ALGORITHM: Algorithm = Algorithm {
    name: "tcpgt",
    what: "grows while goodput keeps up with throughput per epoch, cuts when it falls behind",
    paper:
        "Jung, Kim, Yeom, Kang, TCP-GT: congestion control from goodput and throughput (tcp-gt.md)",
    params: &[
        RTT_BASE_MS,
        THRESHOLD,
        RTT_MIN_EPOCHS,
        SLOW_START,
        MAX_INCREASE,
    ],
    constraints: &[],
    build: Some(|params, rules, init| Ok(Box::new(Tcpgt::from_params(params, rules, init)?))),
};

impl Default for TcpgtConfig {
    fn default() -> Self {
        Self::read(&ParamReader::defaults(Rules::Rfc))
    }
}

impl TcpgtConfig {
    fn read(r: &ParamReader) -> Self {
        Self {
            rtt_base_ns: (r.real(&RTT_BASE_MS) * 1e6).round().max(1.0) as u64,
            threshold: r.real(&THRESHOLD),
            rtt_min_epochs: r.real(&RTT_MIN_EPOCHS) as usize,
            slow_start: r.flag(&SLOW_START),
            max_increase_pkts: r.real(&MAX_INCREASE),
        }
    }

    pub fn from_params(params: &CcParams, rules: Rules) -> Result<Self, CcError> {
        Ok(Self::read(&ALGORITHM.check(params, rules)?))
    }
}

/// What the last completed epoch measured (all rates in packets per second).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EpochMeasurement {
    /// The sender's epoch duration TS (ns).
    pub ts_ns: u64,
    /// The receiver's epoch duration TR (ns).
    pub tr_ns: u64,
    /// Packets delivered in the epoch (N, eqs. (1)-(2)).
    pub delivered_pkts: u64,
    /// The local minimum RTT of eq. (5) (ns).
    pub rtt_min_ns: u64,
    /// Goodput G = N / TR (eq. 1).
    pub goodput_pps: f64,
    /// Throughput T = N / rtt_min (eq. 4).
    pub throughput_pps: f64,
    /// phi = G - T (eq. 3).
    pub phi_pps: f64,
    /// The compensation factor f = rtt / rtt_base.
    pub f: f64,
}

/// The window rule the last epoch chose for every delivered packet of the next one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Phase {
    /// No epoch measured yet, or the measurement was discarded.
    Hold,
    /// II: + p per packet (eq. 15).
    Increase { p_pkts: f64 },
    /// MD: + n per packet, n < 0 (eq. 17).
    Decrease { n_pkts: f64 },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Tcpgt {
    cfg: TcpgtConfig,
    cwnd: f64,
    ssthresh: f64,
    in_slow_start: bool,
    /// The number stamped on packets sent now.
    epoch: u32,
    /// (sender clock, receiver timestamp) when the current epoch began.
    boundary: Option<(u64, u64)>,
    /// Packets delivered since `boundary`.
    delivered_pkts: u64,
    /// The smallest RTT sample of the current epoch (0: none).
    epoch_min_rtt_ns: u64,
    /// The smallest RTT of each of the last `rtt_min_epochs` epochs.
    epoch_mins: VecDeque<u64>,
    /// The splitting count s (eq. 14).
    s: f64,
    /// The transport let the window grow on some ACK of this epoch (s
    /// counts only epochs in which the II rule could act).
    could_grow: bool,
    phase: Phase,
    last: Option<EpochMeasurement>,
}

impl Tcpgt {
    pub fn new(cfg: TcpgtConfig, init: InitialWindow) -> Self {
        Self {
            cfg,
            cwnd: init.cwnd_pkts,
            ssthresh: if cfg.slow_start {
                init.ssthresh_pkts
            } else {
                init.cwnd_pkts
            },
            in_slow_start: cfg.slow_start,
            epoch: 0,
            boundary: None,
            delivered_pkts: 0,
            epoch_min_rtt_ns: 0,
            epoch_mins: VecDeque::with_capacity(cfg.rtt_min_epochs),
            s: 1.0,
            could_grow: false,
            phase: Phase::Hold,
            last: None,
        }
    }

    pub fn from_params(
        params: &CcParams,
        rules: Rules,
        init: InitialWindow,
    ) -> Result<Self, CcError> {
        Ok(Self::new(TcpgtConfig::from_params(params, rules)?, init))
    }

    pub fn epoch(&self) -> u32 {
        self.epoch
    }
    pub fn splitting(&self) -> f64 {
        self.s
    }
    pub fn phase(&self) -> Phase {
        self.phase
    }
    pub fn in_slow_start(&self) -> bool {
        self.in_slow_start
    }
    pub fn last_epoch(&self) -> Option<EpochMeasurement> {
        self.last
    }

    /// The local minimum RTT: the smallest sample of the last
    /// `rtt_min_epochs` completed epochs (eq. 5); 0 before any.
    pub fn local_min_rtt_ns(&self) -> u64 {
        self.epoch_mins.iter().copied().min().unwrap_or(0)
    }

    /// eq. (15): p = f^2 s^2 / (G rtt_base cwnd), packets per delivered packet.
    pub fn increase_per_packet(
        f: f64,
        s: f64,
        goodput_pps: f64,
        rtt_base_ns: u64,
        cwnd: f64,
    ) -> f64 {
        f * f * s * s / (goodput_pps * (rtt_base_ns as f64 / NS_PER_S) * cwnd)
    }

    /// eq. (17): n = f phi rtt_base / cwnd, packets per delivered packet.
    pub fn decrease_per_packet(f: f64, phi_pps: f64, rtt_base_ns: u64, cwnd: f64) -> f64 {
        f * phi_pps * (rtt_base_ns as f64 / NS_PER_S) / cwnd
    }

    /// eq. (16): the II phase goes on while phi >= t T / f.
    pub fn uncongested(phi_pps: f64, throughput_pps: f64, threshold: f64, f: f64) -> bool {
        phi_pps >= threshold * throughput_pps / f
    }

    /// Forgets the epoch in progress: the next echo of the (new) current
    /// number starts a fresh measurement. Used when a loss, a recovery or a
    /// timeout makes the epoch's rates meaningless.
    fn restart_epochs(&mut self) {
        self.epoch = self.epoch.wrapping_add(1);
        self.boundary = None;
        self.delivered_pkts = 0;
        self.phase = Phase::Hold;
    }

    /// The epoch just ended at (`now_ns`, `receiver_ts_ns`): measure it and
    /// choose the next epoch's rule (Algorithm 1).
    fn end_epoch(&mut self, ack: &AckEvent, receiver_ts_ns: u64) {
        let could_grow = std::mem::take(&mut self.could_grow);
        if self.epoch_min_rtt_ns > 0 {
            if self.epoch_mins.len() == self.cfg.rtt_min_epochs {
                self.epoch_mins.pop_front();
            }
            self.epoch_mins.push_back(self.epoch_min_rtt_ns);
        }
        self.epoch_min_rtt_ns = 0;
        let start = self.boundary.replace((ack.now_ns, receiver_ts_ns));
        let n = std::mem::take(&mut self.delivered_pkts);
        self.epoch = self.epoch.wrapping_add(1);
        let Some((s0, r0)) = start else {
            return; // the first boundary: nothing to measure yet
        };
        // Differences of one clock each: the receiver's offset cancels.
        let ts_ns = ack.now_ns.saturating_sub(s0);
        let tr_ns = receiver_ts_ns.wrapping_sub(r0) as i64;
        let rtt_min_ns = self.local_min_rtt_ns();
        if ack.in_recovery || n == 0 || tr_ns <= 0 || rtt_min_ns == 0 {
            self.phase = Phase::Hold;
            return;
        }
        let tr_ns = tr_ns as u64;
        let goodput = n as f64 / (tr_ns as f64 / NS_PER_S);
        let throughput = n as f64 / (rtt_min_ns as f64 / NS_PER_S);
        let phi = goodput - throughput;
        // f = rtt / rtt_base with the flow's average (smoothed) RTT (sect. III-D/E).
        let rtt_ns = if ack.rtt.smoothed_ns > 0 {
            ack.rtt.smoothed_ns
        } else {
            rtt_min_ns
        };
        let f = rtt_ns as f64 / self.cfg.rtt_base_ns as f64;
        self.last = Some(EpochMeasurement {
            ts_ns,
            tr_ns,
            delivered_pkts: n,
            rtt_min_ns,
            goodput_pps: goodput,
            throughput_pps: throughput,
            phi_pps: phi,
            f,
        });
        if Self::uncongested(phi, throughput, self.cfg.threshold, f) {
            if self.in_slow_start {
                return; // slow start goes on; s counts II epochs only
            }
            // eq. (14), Algorithm 1 line 4; an epoch in which the transport
            // allowed no growth (not cwnd-limited) took no increase step.
            if could_grow || self.phase == Phase::Hold {
                self.s += f;
            }
            let p = Self::increase_per_packet(f, self.s, goodput, self.cfg.rtt_base_ns, self.cwnd)
                .min(self.cfg.max_increase_pkts);
            self.phase = Phase::Increase { p_pkts: p };
        } else {
            self.s = 1.0; // Algorithm 1 line 6
            if self.in_slow_start {
                // The first congested epoch ends slow start (our choice).
                self.in_slow_start = false;
            }
            let n = Self::decrease_per_packet(f, phi, self.cfg.rtt_base_ns, self.cwnd);
            self.phase = Phase::Decrease { n_pkts: n };
        }
    }
}

impl CongestionControl for Tcpgt {
    fn name(&self) -> &'static str {
        "tcpgt"
    }
    fn cwnd(&self) -> f64 {
        self.cwnd
    }
    fn ssthresh(&self) -> f64 {
        self.ssthresh
    }

    /// Every data packet, retransmissions included, carries the current epoch.
    fn on_send(&mut self, _now_ns: u64, _seq: u64, _bytes: u32, _retransmit: bool) -> u32 {
        self.epoch
    }

    fn on_ack(&mut self, ack: &AckEvent) {
        if ack.rtt_updated && ack.rtt.latest_ns > 0 {
            let r = ack.rtt.latest_ns;
            self.epoch_min_rtt_ns = if self.epoch_min_rtt_ns == 0 {
                r
            } else {
                self.epoch_min_rtt_ns.min(r)
            };
        }
        self.delivered_pkts += u64::from(ack.delivered_pkts);
        self.could_grow |= ack.growth_pkts > 0;
        if !ack.in_recovery {
            if self.in_slow_start {
                let (mut cwnd, ssthresh) = (self.cwnd, self.ssthresh);
                grow(&mut cwnd, ssthresh, ack, |_, _| {});
                self.cwnd = cwnd;
                if self.cwnd >= self.ssthresh {
                    self.in_slow_start = false; // after a timeout: back to IIMD at ssthresh
                }
            } else {
                match self.phase {
                    Phase::Hold => {}
                    // p per packet delivered, where the transport allows
                    // growth at all (its `growth_pkts` verdict: not in
                    // recovery, cwnd-limited); the count is the packets, so
                    // that delayed or stretch ACKs do not shrink an epoch's sum.
                    Phase::Increase { p_pkts } => {
                        if ack.growth_pkts > 0 {
                            self.cwnd += p_pkts * f64::from(ack.delivered_pkts);
                        }
                    }
                    Phase::Decrease { n_pkts } => {
                        let floor = MIN_SSTHRESH_PKTS.min(self.cwnd);
                        self.cwnd = (self.cwnd + n_pkts * f64::from(ack.delivered_pkts)).max(floor);
                        // The transport reads cwnd < ssthresh as slow start.
                        self.ssthresh = self.ssthresh.min(self.cwnd.max(MIN_SSTHRESH_PKTS));
                    }
                }
            }
        }
        // An epoch shorter than half the smallest RTT is not a round trip:
        // an echo of the current number can come that early only from a
        // packet sent before the epoch began (after an undo restored an
        // older epoch number); it ends nothing.
        let too_soon = |b: Option<(u64, u64)>| {
            b.is_some_and(|(s0, _)| ack.now_ns.saturating_sub(s0) < ack.rtt.min_ns / 2)
        };
        match ack.ts {
            Some(ts) => {
                if ts.echoed_tag == self.epoch && !too_soon(self.boundary) {
                    self.end_epoch(ack, ts.receiver_ts_ns);
                }
            }
            None => {
                // No timestamps: no echo and no receiver clock. An epoch
                // ends after one smoothed RTT, and the ACK clock stands in
                // for the receiver's (TR = TS).
                let due = match self.boundary {
                    None => true,
                    Some((s0, _)) => {
                        ack.rtt.smoothed_ns > 0
                            && ack.now_ns.saturating_sub(s0) >= ack.rtt.smoothed_ns
                    }
                };
                if due {
                    self.end_epoch(ack, ack.now_ns);
                }
            }
        }
    }

    /// A loss (the paper's TCP-GT never meets one in its own runs) is the
    /// host TCP's: halve, and measure afresh after recovery.
    fn on_congestion_event(&mut self, loss: &LossEvent) {
        loss.cap(&mut self.cwnd);
        reduce(self.cwnd / 2.0, &mut self.cwnd, &mut self.ssthresh);
        self.in_slow_start = false;
        self.s = 1.0;
        self.restart_epochs();
    }

    fn on_recovery_exit(&mut self, _now_ns: u64) {
        self.cwnd = self.ssthresh;
        self.restart_epochs();
    }

    /// RFC 5681: ssthresh = cwnd / 2, cwnd = 1, slow start up to ssthresh,
    /// then IIMD.
    fn on_rto(&mut self, rto: &RtoEvent) {
        rto.cap(&mut self.cwnd);
        timeout(self.cwnd / 2.0, rto, &mut self.cwnd, &mut self.ssthresh);
        self.in_slow_start = self.cwnd < self.ssthresh;
        self.s = 1.0;
        self.restart_epochs();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AckTimestamps, RttStats};

    const MS: u64 = 1_000_000;

    /// A controller in the II/MD phase from a window of `cwnd` packets.
    fn gt(cwnd: f64) -> Tcpgt {
        Tcpgt::new(
            TcpgtConfig::default(),
            InitialWindow {
                cwnd_pkts: cwnd,
                ssthresh_pkts: f64::INFINITY,
            },
        )
    }

    /// An ACK at `now_ms` delivering `pkts`, echoing `tag`, stamped by a
    /// receiver whose clock reads `rx_ms` (plus `offset_ns`), with an RTT
    /// sample `rtt_ms` (smoothed RTT `srtt_ms`).
    struct Ack {
        now_ms: u64,
        rx_ms: u64,
        tag: u32,
        pkts: u32,
        rtt_ms: u64,
        srtt_ms: u64,
    }

    fn ack_ev(a: &Ack, offset_ns: u64) -> AckEvent {
        AckEvent {
            now_ns: a.now_ms * MS,
            delivered_pkts: a.pkts,
            growth_pkts: a.pkts,
            delivered_bytes: u64::from(a.pkts) * 1000,
            cum_acked_pkts: a.pkts,
            rtt: RttStats {
                latest_ns: a.rtt_ms * MS,
                min_ns: a.rtt_ms * MS,
                smoothed_ns: a.srtt_ms * MS,
            },
            rtt_updated: a.rtt_ms > 0,
            ts: Some(AckTimestamps {
                echoed_sender_ts_ns: 0,
                receiver_ts_ns: (a.rx_ms * MS).wrapping_add(offset_ns),
                echoed_tag: a.tag,
            }),
            ..Default::default()
        }
    }

    /// An ACK at `now_ms` echoing the current epoch, stamped by a receiver
    /// whose clock reads the same, on a path of `rtt_ms` (sample and SRTT).
    fn echo_now(g: &mut Tcpgt, now_ms: u64, pkts: u32, rtt_ms: u64) {
        g.on_ack(&ack_ev(
            &Ack {
                now_ms,
                rx_ms: now_ms,
                tag: g.epoch(),
                pkts,
                rtt_ms,
                srtt_ms: rtt_ms,
            },
            0,
        ));
    }

    /// A boundary at 100 ms (receiver clock 0), then an epoch of `pkts`
    /// packets on a 100 ms path (SRTT `srtt_ms`) that the receiver saw last
    /// `tr_ms` after its first: TS = 100 ms, TR = `tr_ms`, N = `pkts`.
    fn one_epoch(pkts: u64, srtt_ms: u64, tr_ms: u64) -> Vec<Ack> {
        let ack = |now_ms, rx_ms, tag| Ack {
            now_ms,
            rx_ms,
            tag,
            pkts: 1,
            rtt_ms: 100,
            srtt_ms,
        };
        let mut v = vec![ack(100, 0, 0)];
        v.extend((0..pkts - 1).map(|i| ack(101 + i, 1 + i, 0)));
        v.push(ack(200, tr_ms, 1));
        v
    }

    fn feed(g: &mut Tcpgt, acks: &[Ack], offset_ns: u64) -> Vec<f64> {
        acks.iter()
            .map(|a| {
                g.on_ack(&ack_ev(a, offset_ns));
                g.cwnd()
            })
            .collect()
    }

    /// Two epochs on a 100 ms path: epoch 0 closes at 100 ms (receiver
    /// clock 1060 ms), epoch 1 at 200 ms after 10 packets (receiver clock
    /// 1170 ms: 10 ms more queueing than before).
    fn two_epochs() -> Vec<Ack> {
        let mut v = vec![Ack {
            now_ms: 100,
            rx_ms: 1060,
            tag: 0,
            pkts: 1,
            rtt_ms: 100,
            srtt_ms: 100,
        }];
        for i in 0..9 {
            v.push(Ack {
                now_ms: 120 + i,
                rx_ms: 1080 + i,
                tag: 0,
                pkts: 1,
                rtt_ms: 100 + i,
                srtt_ms: 100,
            });
        }
        v.push(Ack {
            now_ms: 200,
            rx_ms: 1170,
            tag: 1,
            pkts: 1,
            rtt_ms: 110,
            srtt_ms: 100,
        });
        v
    }

    #[test]
    fn an_epoch_ends_when_its_own_number_comes_back() {
        let mut g = gt(10.0);
        assert_eq!(g.on_send(0, 0, 1000, false), 0);
        // An ACK echoing an older number (reordered, or a packet from before
        // a restart) closes nothing.
        g.on_ack(&ack_ev(
            &Ack {
                now_ms: 90,
                rx_ms: 1050,
                tag: u32::MAX,
                pkts: 1,
                rtt_ms: 90,
                srtt_ms: 90,
            },
            0,
        ));
        assert_eq!(g.epoch(), 0);
        feed(&mut g, &two_epochs(), 0);
        assert_eq!(g.epoch(), 2);
        assert_eq!(g.on_send(0, 0, 1000, false), 2, "packets now carry epoch 2");
        let m = g.last_epoch().expect("epoch 1 measured");
        // Hand-derived: TS = 200 - 100 ms; TR = 1170 - 1060 ms; N = 10 packets
        // (the nine ACKs after the boundary and the closing one); the local
        // minimum RTT is 90 ms (the stray ACK's sample, in epoch 0).
        assert_eq!(
            (m.ts_ns, m.tr_ns, m.delivered_pkts, m.rtt_min_ns),
            (100 * MS, 110 * MS, 10, 90 * MS)
        );
        assert!((m.goodput_pps - 10.0 / 0.110).abs() < 1e-9);
        assert!((m.throughput_pps - 10.0 / 0.090).abs() < 1e-9);
        assert!((m.phi_pps - (10.0 / 0.110 - 10.0 / 0.090)).abs() < 1e-9);
        assert_eq!(m.f, 2.0, "srtt 100 ms / rtt_base 50 ms");
    }

    #[test]
    fn a_lost_first_packet_lets_a_later_one_of_the_same_epoch_close_it() {
        let mut g = gt(10.0);
        let mut acks = two_epochs();
        // The first packet of epoch 1 is lost: its echo never comes; the
        // next packet of the epoch, 5 ms later, closes it.
        let last = acks.pop().unwrap();
        acks.push(Ack {
            now_ms: 205,
            rx_ms: 1175,
            ..last
        });
        feed(&mut g, &acks, 0);
        let m = g.last_epoch().unwrap();
        assert_eq!((m.ts_ns, m.tr_ns), (105 * MS, 115 * MS));
    }

    #[test]
    fn clock_offsets_change_nothing() {
        let run = |offset: u64| {
            let mut g = gt(50.0);
            let mut acks = two_epochs();
            // Five more epochs of 50 packets each, 100 ms apart, receiver
            // epochs 100 ms + 2 ms per epoch.
            for e in 0..5u64 {
                for i in 0..50u64 {
                    let t = 200 + e * 100 + 1 + i;
                    acks.push(Ack {
                        now_ms: t,
                        rx_ms: t + 970 + 2 * e,
                        tag: 2 + e as u32 - 1,
                        pkts: 1,
                        rtt_ms: 100 + e,
                        srtt_ms: 100,
                    });
                }
                let t = 300 + e * 100;
                acks.push(Ack {
                    now_ms: t,
                    rx_ms: t + 972 + 2 * e,
                    tag: 2 + e as u32,
                    pkts: 1,
                    rtt_ms: 101 + e,
                    srtt_ms: 100,
                });
            }
            let w = feed(&mut g, &acks, offset);
            (w, g.last_epoch(), g.splitting(), g.phase())
        };
        let base = run(0);
        assert!(base.1.is_some());
        for offset in [5_000 * MS, u64::MAX - 150 * MS, 1 << 63] {
            assert_eq!(run(offset), base, "receiver clock offset {offset} ns");
        }
    }

    #[test]
    fn increase_per_packet_matches_eq_15_by_hand() {
        // f = 80/50 = 1.6, s = 1 + 1.6 = 2.6, G = 12,500 pkt/s (100 Mbit/s of
        // 1000-byte packets), rtt_base = 0.05 s, cwnd = 1000:
        // p = 2.56 * 6.76 / (12,500 * 0.05 * 1000) = 17.3056 / 625,000.
        let p = Tcpgt::increase_per_packet(1.6, 2.6, 12_500.0, 50 * MS, 1000.0);
        assert!((p - 2.768_896e-5).abs() < 1e-14, "{p}");
        // With f = 1 and s = 1 this is eq. (7) with rtt = rtt_base:
        // 1 / (G rtt cwnd) = 1 / (1000 * 0.05 * 200).
        let p = Tcpgt::increase_per_packet(1.0, 1.0, 1000.0, 50 * MS, 200.0);
        assert!((p - 1e-4).abs() < 1e-16, "{p}");
    }

    #[test]
    fn decrease_per_packet_matches_eq_17_by_hand() {
        // f = 2, phi = -1000 pkt/s, rtt_base = 0.05 s, cwnd = 500:
        // n = 2 * (-1000) * 0.05 / 500 = -0.2 packets per packet; over one
        // window that removes phi * rtt = 1000 * 0.1 = 100 packets (eq. 6).
        let n = Tcpgt::decrease_per_packet(2.0, -1000.0, 50 * MS, 500.0);
        assert!((n + 0.2).abs() < 1e-15, "{n}");
        assert!((n * 500.0 + 100.0).abs() < 1e-12);
    }

    #[test]
    fn threshold_boundary_pairs() {
        // eq. (16): uncongested iff phi >= t T / f. T = 80, t = -0.05:
        // the boundary is -4 at f = 1, -2 at f = 2, -8 at f = 0.5.
        for (f, edge) in [(1.0, -4.0), (2.0, -2.0), (0.5, -8.0)] {
            assert!(
                Tcpgt::uncongested(edge, 80.0, -0.05, f),
                "f = {f}: at the boundary the II phase goes on"
            );
            assert!(
                !Tcpgt::uncongested(edge - 1e-9, 80.0, -0.05, f),
                "f = {f}: just below it is MD"
            );
        }
        assert!(Tcpgt::uncongested(0.0, 80.0, -0.05, 1.0));
        assert!(
            Tcpgt::uncongested(5.0, 80.0, -0.05, 1.0),
            "phi > 0 (case III) increases"
        );
    }

    #[test]
    fn epochs_either_side_of_the_threshold_choose_ii_or_md() {
        // rtt_min 100 ms, srtt 50 ms (f = 1), 20 packets per epoch: T = 200
        // pkt/s; the boundary phi = -10 is G = 190, i.e. TR = 20/190 s =
        // 105.26 ms. TR = 105 ms is on the II side, 106 ms on the MD side.
        for (tr_ms, increase) in [(105, true), (106, false)] {
            let mut g = gt(100.0);
            let acks = one_epoch(20, 50, tr_ms);
            feed(&mut g, &acks, 0);
            let m = g.last_epoch().unwrap();
            assert_eq!(m.throughput_pps, 200.0);
            match g.phase() {
                Phase::Increase { p_pkts } => {
                    assert!(increase, "TR {tr_ms} ms");
                    assert_eq!(g.splitting(), 2.0, "s = 1 + f");
                    let want = Tcpgt::increase_per_packet(1.0, 2.0, m.goodput_pps, 50 * MS, 100.0);
                    assert!((p_pkts - want).abs() < 1e-15);
                }
                Phase::Decrease { n_pkts } => {
                    assert!(!increase, "TR {tr_ms} ms");
                    assert_eq!(g.splitting(), 1.0);
                    let want = Tcpgt::decrease_per_packet(1.0, m.phi_pps, 50 * MS, 100.0);
                    assert!((n_pkts - want).abs() < 1e-15 && n_pkts < 0.0);
                }
                Phase::Hold => panic!("no decision"),
            }
        }
    }

    /// `k` epochs of `cwnd` packets each on an uncongested 50 ms path
    /// (f = 1): TR = TS = rtt_min, so phi = 0 every epoch.
    fn uncongested_epochs(g: &mut Tcpgt, k: u64) -> Vec<(f64, f64)> {
        let mut out = vec![];
        let mut t = 50u64;
        echo_now(g, t, 1, 50);
        for _ in 0..k {
            let before = g.cwnd();
            let n = g.cwnd().floor() as u64;
            for i in 1..n {
                g.on_ack(&ack_ev(
                    &Ack {
                        now_ms: t + i * 50 / n,
                        rx_ms: t + i * 50 / n,
                        tag: g.epoch().wrapping_sub(1),
                        pkts: 1,
                        rtt_ms: 50,
                        srtt_ms: 50,
                    },
                    0,
                ));
            }
            t += 50;
            echo_now(g, t, 1, 50);
            out.push((g.splitting(), g.cwnd() - before));
        }
        out
    }

    #[test]
    fn window_splitting_makes_the_increase_quadratic() {
        let mut g = gt(100.0);
        let steps = uncongested_epochs(&mut g, 12);
        // s = 1 + k f after k measured II epochs (eq. 14, f = 1); the
        // first step measures the first epoch, so s is 2 there.
        for (k, &(s, _)) in steps.iter().enumerate() {
            assert_eq!(s, 2.0 + k as f64, "step {k}");
        }
        // Per epoch the window grows by about f^2 s^2 / (G rtt_base) = s^2 /
        // cwnd (cwnd packets at p each, G rtt_base = cwnd at f = 1): the
        // growth of epoch k+1 over epoch k's follows (s_k / s_{k-1})^2.
        for k in 3..12 {
            let (s0, d0) = steps[k - 1];
            let (s1, d1) = steps[k];
            // The window moved a little between the two epochs: allow for it.
            let ratio = (d1 / d0) / ((s0 / (s0 - 1.0)).powi(2));
            assert!(
                (ratio - 1.0).abs() < 0.05,
                "epoch {k}: growth {d0} -> {d1} with s {s0} -> {s1}"
            );
        }
    }

    #[test]
    fn the_splitting_count_grows_by_f_per_epoch() {
        // srtt 80 ms: f = 1.6; uncongested epochs (TR = rtt_min = 80 ms).
        let mut g = gt(100.0);
        let mut t = 0;
        let mut seen = vec![];
        for _ in 0..4 {
            t += 80;
            echo_now(&mut g, t, 1, 80);
            seen.push(g.splitting());
        }
        // The first echo sets the boundary; then s = 1 + 1.6, 1 + 3.2, 1 + 4.8 (eq. 14).
        let want = [1.0, 2.6, 4.2, 5.8];
        for (s, w) in seen.iter().zip(want) {
            assert!((s - w).abs() < 1e-12, "{seen:?}");
        }
    }

    #[test]
    fn the_local_minimum_rtt_forgets_after_ten_epochs() {
        let mut g = gt(10.0);
        let mut t = 0;
        for e in 0..15u64 {
            // Epoch e's samples: 200 ms, except epoch 2's minimum of 60 ms.
            let rtt = if e == 2 { 60 } else { 200 };
            t += 100;
            g.on_ack(&ack_ev(
                &Ack {
                    now_ms: t,
                    rx_ms: t,
                    tag: g.epoch(),
                    pkts: 1,
                    rtt_ms: rtt,
                    srtt_ms: 200,
                },
                0,
            ));
            let want = if (2..12).contains(&e) { 60 } else { 200 };
            assert_eq!(g.local_min_rtt_ns(), want * MS, "after epoch {e}");
        }
    }

    #[test]
    fn md_removes_phi_times_rtt_over_one_window() {
        let mut g = gt(1000.0);
        // 100 packets in the epoch, TR 125 ms against rtt_min 100 ms:
        // G = 800, T = 1000, phi = -200 pkt/s; f = 2.
        let acks = one_epoch(100, 100, 125);
        feed(&mut g, &acks, 0);
        let Phase::Decrease { n_pkts } = g.phase() else {
            panic!("{:?}", g.phase())
        };
        // n = f phi rtt_base / cwnd = 2 * -200 * 0.05 / 1000 = -0.02.
        assert!((n_pkts + 0.02).abs() < 1e-12, "{n_pkts}");
        // 1000 more ACKs of one packet each (a window) take phi * rtt = 20 packets.
        let before = g.cwnd();
        for i in 0..1000 {
            g.on_ack(&ack_ev(
                &Ack {
                    now_ms: 201 + i / 10,
                    rx_ms: 126,
                    tag: 1,
                    pkts: 1,
                    rtt_ms: 100,
                    srtt_ms: 100,
                },
                0,
            ));
        }
        assert!(
            (before - g.cwnd() - 20.0).abs() < 1e-9,
            "{} -> {}",
            before,
            g.cwnd()
        );
        assert!(g.ssthresh() <= g.cwnd());
    }

    #[test]
    fn nothing_moves_before_the_first_measured_epoch() {
        let mut g = gt(10.0);
        feed(&mut g, &two_epochs()[..10], 0);
        assert_eq!((g.cwnd(), g.phase()), (10.0, Phase::Hold));
    }

    #[test]
    fn slow_start_when_asked_ends_at_the_first_congested_epoch() {
        let mut p = CcParams::new();
        p.insert("slow_start".into(), 1.0);
        let mut g = Tcpgt::from_params(&p, Rules::Rfc, InitialWindow::default()).unwrap();
        let acks = two_epochs(); // 10 ms of added queueing in epoch 1: congested
        let w = feed(&mut g, &acks[..10], 0);
        assert_eq!(w.last(), Some(&12.0), "slow start: +1 per packet delivered");
        assert!(g.in_slow_start());
        feed(&mut g, &acks[10..], 0);
        assert!(!g.in_slow_start());
        assert!(matches!(g.phase(), Phase::Decrease { .. }));
    }

    #[test]
    fn a_loss_halves_and_restarts_the_measurement() {
        let mut g = gt(100.0);
        feed(&mut g, &two_epochs(), 0);
        g.on_congestion_event(&LossEvent {
            now_ns: 300 * MS,
            ..Default::default()
        });
        assert_eq!(
            (g.cwnd(), g.ssthresh(), g.splitting(), g.phase()),
            (50.0, 50.0, 1.0, Phase::Hold)
        );
        g.on_recovery_exit(400 * MS);
        let e = g.epoch();
        // The next echo of the current number only sets a boundary.
        g.on_ack(&ack_ev(
            &Ack {
                now_ms: 500,
                rx_ms: 1500,
                tag: e,
                pkts: 1,
                rtt_ms: 100,
                srtt_ms: 100,
            },
            0,
        ));
        assert_eq!(g.phase(), Phase::Hold);
        assert_eq!(g.epoch(), e.wrapping_add(1));
    }

    #[test]
    fn a_timeout_slow_starts_back_to_half_the_window() {
        let mut g = gt(100.0);
        g.on_rto(&RtoEvent::first(0));
        assert_eq!((g.cwnd(), g.ssthresh()), (1.0, 50.0));
        assert!(g.in_slow_start());
        for i in 0..49 {
            g.on_ack(&ack_ev(
                &Ack {
                    now_ms: 1 + i,
                    rx_ms: 1,
                    tag: u32::MAX,
                    pkts: 1,
                    rtt_ms: 0,
                    srtt_ms: 0,
                },
                0,
            ));
        }
        assert_eq!(g.cwnd(), 50.0);
        assert!(!g.in_slow_start(), "IIMD again at ssthresh");
    }

    #[test]
    fn epochs_without_room_to_grow_do_not_split_the_window_further() {
        // Uncongested epochs in which the transport allowed no growth (not
        // cwnd-limited: growth_pkts = 0) leave s where it was.
        let mut g = gt(100.0);
        let mut t = 0;
        for k in 0..6u64 {
            t += 50;
            let mut a = ack_ev(
                &Ack {
                    now_ms: t,
                    rx_ms: t,
                    tag: g.epoch(),
                    pkts: 1,
                    rtt_ms: 50,
                    srtt_ms: 50,
                },
                0,
            );
            if k >= 3 {
                a.growth_pkts = 0;
            }
            g.on_ack(&a);
        }
        // Boundary (k = 0), then s = 2, 3 (k = 1, 2); the epochs ending at
        // k = 3, 4, 5 allowed no growth on any of their ACKs.
        assert_eq!(g.splitting(), 3.0);
    }

    #[test]
    fn the_increase_counts_packets_not_acks() {
        let mut g = gt(100.0);
        let mut t = 0;
        for _ in 0..3 {
            t += 50;
            echo_now(&mut g, t, 1, 50);
        }
        let Phase::Increase { p_pkts } = g.phase() else {
            panic!("{:?}", g.phase())
        };
        let before = g.cwnd();
        // A delayed ACK: two packets, growth allowed.
        let mut a = ack_ev(
            &Ack {
                now_ms: t + 1,
                rx_ms: t + 1,
                tag: g.epoch().wrapping_sub(1),
                pkts: 2,
                rtt_ms: 50,
                srtt_ms: 50,
            },
            0,
        );
        a.growth_pkts = 1;
        g.on_ack(&a);
        assert!((g.cwnd() - before - 2.0 * p_pkts).abs() < 1e-12);
    }

    #[test]
    fn an_echo_of_the_current_number_within_half_an_rtt_ends_nothing() {
        let mut g = gt(10.0);
        feed(&mut g, &two_epochs(), 0); // epoch 2 began at 200 ms
        let mut a = ack_ev(
            &Ack {
                now_ms: 230,
                rx_ms: 1200,
                tag: 2,
                pkts: 1,
                rtt_ms: 100,
                srtt_ms: 100,
            },
            0,
        );
        a.rtt.min_ns = 90 * MS; // 30 ms < 45 ms: a packet from before the epoch
        g.on_ack(&a);
        assert_eq!(g.epoch(), 2);
        a.now_ns = 300 * MS;
        g.on_ack(&a);
        assert_eq!(g.epoch(), 3);
    }

    #[test]
    fn without_timestamps_an_epoch_is_one_smoothed_rtt_of_the_ack_clock() {
        let mut g = gt(10.0);
        for i in 0..=25u64 {
            let mut a = ack_ev(
                &Ack {
                    now_ms: 10 * i,
                    rx_ms: 0,
                    tag: 0,
                    pkts: 1,
                    rtt_ms: 50,
                    srtt_ms: 50,
                },
                0,
            );
            a.ts = None;
            g.on_ack(&a);
        }
        // Boundaries at 0, 50, ..., 250 ms: five measured epochs; TR = TS =
        // rtt_min = 50 ms, so phi = 0 and the II phase runs.
        assert_eq!(g.epoch(), 6);
        let m = g.last_epoch().unwrap();
        assert_eq!((m.ts_ns, m.tr_ns, m.phi_pps), (50 * MS, 50 * MS, 0.0));
        assert!(matches!(g.phase(), Phase::Increase { .. }));
    }

    #[test]
    fn the_increase_is_capped_at_one_packet_per_packet_unless_asked() {
        // 1000 ms path (f = 20), two packets per epoch: eq. (15) gives
        // p = 400 * 21^2 / (2 * 0.05 * 2) = 882,000 in the first measured epoch.
        let epochs = |g: &mut Tcpgt| {
            for k in 1..=2u64 {
                echo_now(g, 1000 * k, 2, 1000);
            }
            g.phase()
        };
        let mut g = gt(2.0);
        assert_eq!(epochs(&mut g), Phase::Increase { p_pkts: 1.0 });
        let mut p = CcParams::new();
        p.insert("max_increase".into(), 1e9);
        let mut g = Tcpgt::from_params(&p, Rules::Rfc, InitialWindow::default()).unwrap();
        let Phase::Increase { p_pkts } = epochs(&mut g) else {
            panic!()
        };
        assert!((p_pkts - 882_000.0).abs() < 1e-6, "{p_pkts}");
    }

    #[test]
    fn parameters_have_the_papers_defaults_and_named_ranges() {
        let d = TcpgtConfig::from_params(&CcParams::new(), Rules::Rfc).unwrap();
        assert_eq!(
            d,
            TcpgtConfig {
                rtt_base_ns: 50 * MS,
                threshold: -0.05,
                rtt_min_epochs: 10,
                slow_start: false,
                max_increase_pkts: 1.0
            }
        );
        for (k, v, says) in [
            ("threshold", 0.05, "in [-0.5, 0]"),
            ("threshold", -0.6, "in [-0.5, 0]"),
            ("rtt_base_ms", 0.0, "strictly between 0"),
            ("rtt_min_epochs", 2.5, "integer"),
            ("rtt_min_epochs", 0.0, "in [1, 1000]"),
            ("slow_start", 2.0, "0 (off) or 1 (on)"),
        ] {
            let mut p = CcParams::new();
            p.insert(k.into(), v);
            let e = TcpgtConfig::from_params(&p, Rules::Rfc).unwrap_err();
            assert_eq!(e.field, format!("params.{k}"));
            assert!(e.message.contains(says), "{k} = {v}: {}", e.message);
        }
        let mut p = CcParams::new();
        p.insert("rtt_base_ms".into(), 80.0);
        assert_eq!(
            TcpgtConfig::from_params(&p, Rules::Rfc)
                .unwrap()
                .rtt_base_ns,
            80 * MS
        );
    }
}
