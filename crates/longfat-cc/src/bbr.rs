//! BBR v1 (Cardwell, Cheng, Gunn, Hassas Yeganeh, Jacobson, "BBR:
//! Congestion-Based Congestion Control", ACM Queue 14(5), 2016) as Linux
//! 6.x runs it: net/ipv4/tcp_bbr.c (read at v6.6: `tcp_snd_cwnd()`,
//! `get_random_u32_below`, `GSO_LEGACY_MAX_SIZE`; the rules are those of
//! 4.20 onwards, with `extra_acked`), and its windowed max filter,
//! lib/win_minmax.c.
//!
//! A model-based controller: on every ACK (`bbr_main`, a `cong_control`
//! module) it updates its model of the path (the bottleneck bandwidth as a
//! windowed max of delivery-rate samples over 10 packet-timed rounds, the
//! two-way propagation delay as a 10 s windowed min of RTT samples), then
//! sets the pacing rate to pacing_gain x bw and cwnd to cwnd_gain x BDP,
//! gains chosen by its mode: STARTUP (2/ln 2), DRAIN (its inverse),
//! PROBE_BW (the gain cycle 5/4, 3/4, 1 x 6, cwnd gain 2), PROBE_RTT (cwnd
//! 4 for 200 ms and a round). Losses do not reduce the model; in recovery
//! the window follows packet conservation for a round, and a token-bucket
//! policer is detected by the long-term ("lt") sampling.
//!
//! Every quantity is Linux's integer: bandwidth in packets per µs << 24
//! (`BW_SCALE`), gains in 1/256 (`BBR_SCALE`), times in µs
//! (`tp->delivered_mstamp`) or jiffies at HZ = 1000 (`tcp_jiffies32`), with
//! Linux's truncations and bitfield widths, so the kernel's numbers come out.
//! Each function below names its counterpart in tcp_bbr.c.
//!
//! What the transport hands in is `struct rate_sample` ([`RateSample`]) and
//! the connection's counters (`tp->delivered`, `tp->lost`,
//! `tp->delivered_mstamp`) in [`AckEvent::rate`]; the choices where our
//! interface differs from the kernel's (packets in flight after the ACK,
//! the earliest departure time, `tp->app_limited`, CA_EVENT_TX_START) are
//! listed in docs/algorithms.md, "BBR".

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::error::{CcError, CcParams};
use crate::params::{Algorithm, Param, ParamReader, Range, Rules};
use crate::{AckEvent, CongestionControl, InitialWindow, LossEvent, RateSample, RtoEvent};

/// `BW_SCALE`: bandwidth in packets per µs, scaled by 2^24.
pub const BW_SCALE: u32 = 24;
pub const BW_UNIT: u64 = 1 << BW_SCALE;
/// `BBR_SCALE`: gains and fractions in 1/256.
pub const BBR_SCALE: u32 = 8;
pub const BBR_UNIT: u32 = 1 << BBR_SCALE;

/// `CYCLE_LEN`: phases in the PROBE_BW pacing-gain cycle.
const CYCLE_LEN: u32 = 8;
/// `bbr_pacing_gain[]`: probe (5/4), drain (3/4), cruise (1) x 6.
pub const PACING_GAIN_CYCLE: [u32; CYCLE_LEN as usize] = [
    BBR_UNIT * 5 / 4,
    BBR_UNIT * 3 / 4,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
];
/// `bbr_cycle_rand`: PROBE_BW starts at a random one of 7 phases.
const CYCLE_RAND: u32 = 7;
/// `bbr_min_tso_rate` (bits/s): below it, TSO bursts of one segment.
const MIN_TSO_RATE_BPS: u64 = 1_200_000;
/// `bbr_cwnd_min_target`: packets kept in flight at least (and in PROBE_RTT).
pub const CWND_MIN_TARGET: u32 = 4;
/// `bbr_full_bw_thresh`: bw must grow by 25 % per round in STARTUP...
const FULL_BW_THRESH: u32 = BBR_UNIT * 5 / 4;
/// `bbr_full_bw_cnt`: ... or after 3 rounds without it the pipe is full.
const FULL_BW_CNT: u32 = 3;
/// `bbr_lt_intvl_min_rtts`: the least rounds of an lt sampling interval.
const LT_INTVL_MIN_RTTS: u32 = 4;
/// `bbr_lt_loss_thresh`: lost/delivered >= 50/256 (~20 %) is "lossy".
const LT_LOSS_THRESH: u32 = 50;
/// `bbr_lt_bw_ratio`: two intervals' bw within 1/8 are consistent...
const LT_BW_RATIO: u32 = BBR_UNIT / 8;
/// `bbr_lt_bw_diff`: ... or within 4 kbit/s (in bytes/s).
const LT_BW_DIFF_BYTES_PER_SEC: u64 = 4000 / 8;
/// `bbr_lt_bw_max_rtts`: a policed rate is used for 48 rounds.
pub const LT_BW_MAX_RTTS: u32 = 48;
/// `bbr_extra_acked_win_rtts`: the extra_acked filter's half-window.
const EXTRA_ACKED_WIN_RTTS: u32 = 5;
/// `bbr_ack_epoch_acked_reset_thresh`.
const ACK_EPOCH_ACKED_RESET_THRESH: u32 = 1 << 20;
/// `bbr_extra_acked_max_us`: extra_acked is at most 100 ms of bw.
const EXTRA_ACKED_MAX_US: u64 = 100 * 1000;
/// `TCP_INIT_CWND`: bbr_bdp's value before any RTT sample.
const TCP_INIT_CWND: u32 = 10;
/// `TCP_INFINITE_SSTHRESH`.
const TCP_INFINITE_SSTHRESH: u32 = 0x7fff_ffff;
/// `sk_pacing_shift` default (tcp_init_sock: 10): ~1 ms of data per skb.
const PACING_SHIFT: u32 = 10;
/// `GSO_LEGACY_MAX_SIZE - 1 - MAX_TCP_HEADER`: 65536 - 1 - 320, where
/// MAX_TCP_HEADER = L1_CACHE_ALIGN(128 + MAX_HEADER) = 320 for an x86-64
/// distribution kernel (LL_MAX_HEADER 128 + 48 for tunnels).
const TSO_MAX_BYTES: u64 = 65_536 - 1 - 320;
/// HZ = 1000: a jiffy is 1 ms.
const NS_PER_JIFFY: u64 = 1_000_000;
const USEC_PER_SEC: u64 = 1_000_000;
const USEC_PER_MSEC: u64 = 1_000;

pub const HIGH_GAIN: Param = Param::real(
    "high_gain",
    "1/256",
    739.0,
    Range::Whole(257.0, 1023.0),
    "STARTUP's pacing and cwnd gain (739/256 = 2/ln 2, rounded up)",
    "Linux tcp_bbr.c bbr_high_gain = BBR_UNIT * 2885 / 1000 + 1 (10-bit field)",
);
pub const DRAIN_GAIN: Param = Param::real(
    "drain_gain",
    "1/256",
    88.0,
    Range::Whole(1.0, 255.0),
    "DRAIN's pacing gain (88/256 = ln 2 / 2)",
    "Linux tcp_bbr.c bbr_drain_gain = BBR_UNIT * 1000 / 2885",
);
pub const CWND_GAIN: Param = Param::real(
    "cwnd_gain",
    "1/256",
    512.0,
    Range::Whole(256.0, 1023.0),
    "PROBE_BW's cwnd gain over the BDP",
    "Linux tcp_bbr.c bbr_cwnd_gain = BBR_UNIT * 2 (10-bit field)",
);
pub const BW_RTTS: Param = Param::real(
    "bw_rtts",
    "rounds",
    10.0,
    Range::Whole(1.0, 1000.0),
    "window of the max-bandwidth filter, in packet-timed rounds",
    "Linux tcp_bbr.c bbr_bw_rtts = CYCLE_LEN + 2",
);
pub const MIN_RTT_WIN_SEC: Param = Param::real(
    "min_rtt_win_sec",
    "s",
    10.0,
    Range::Whole(1.0, 3600.0),
    "window of the min-RTT filter; PROBE_RTT when it expires",
    "Linux tcp_bbr.c bbr_min_rtt_win_sec",
);
pub const PROBE_RTT_MODE_MS: Param = Param::real(
    "probe_rtt_mode_ms",
    "ms",
    200.0,
    Range::Whole(0.0, 60000.0),
    "least time in PROBE_RTT at cwnd 4 (0: no PROBE_RTT)",
    "Linux tcp_bbr.c bbr_probe_rtt_mode_ms",
);
pub const PACING_MARGIN_PERCENT: Param = Param::real(
    "pacing_margin_percent",
    "%",
    1.0,
    Range::Whole(0.0, 99.0),
    "pace this much below pacing_gain x bw",
    "Linux tcp_bbr.c bbr_pacing_margin_percent",
);
pub const EXTRA_ACKED_GAIN: Param = Param::real(
    "extra_acked_gain",
    "1/256",
    256.0,
    Range::Whole(0.0, 1023.0),
    "gain on the ACK-aggregation allowance added to cwnd (0: none)",
    "Linux tcp_bbr.c bbr_extra_acked_gain = BBR_UNIT",
);
pub const LT_BW: Param = Param::switch(
    "lt_bw",
    true,
    "long-term bandwidth sampling: detect a token-bucket policer and pace at its rate",
    "Linux tcp_bbr.c bbr_lt_bw_sampling (always on in Linux)",
);

pub const ALGORITHM: Algorithm = Algorithm {
    name: "bbr",
    what: "model-based: pace at the max delivery rate, cwnd 2 BDP; loss is not a signal",
    paper: "Cardwell, Cheng, Gunn, Hassas Yeganeh, Jacobson, BBR: Congestion-Based Congestion Control, ACM Queue 2016; Linux net/ipv4/tcp_bbr.c",
    params: &[
        HIGH_GAIN,
        DRAIN_GAIN,
        CWND_GAIN,
        BW_RTTS,
        MIN_RTT_WIN_SEC,
        PROBE_RTT_MODE_MS,
        PACING_MARGIN_PERCENT,
        EXTRA_ACKED_GAIN,
        LT_BW,
    ],
    constraints: &[],
    build: Some(|params, rules, init| Ok(Box::new(Bbr::from_params(params, rules, init)?))),
};

/// The tunables (Linux's `static const`s).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BbrConfig {
    pub high_gain: u32,
    pub drain_gain: u32,
    pub cwnd_gain: u32,
    pub bw_rtts: u32,
    pub min_rtt_win_sec: u32,
    pub probe_rtt_mode_ms: u32,
    pub pacing_margin_percent: u32,
    pub extra_acked_gain: u32,
    pub lt_bw: bool,
}

impl Default for BbrConfig {
    fn default() -> Self {
        Self::read(&ParamReader::defaults(Rules::Rfc))
    }
}

impl BbrConfig {
    fn read(r: &ParamReader) -> Self {
        let u = |p: &Param| r.real(p) as u32;
        Self {
            high_gain: u(&HIGH_GAIN),
            drain_gain: u(&DRAIN_GAIN),
            cwnd_gain: u(&CWND_GAIN),
            bw_rtts: u(&BW_RTTS),
            min_rtt_win_sec: u(&MIN_RTT_WIN_SEC),
            probe_rtt_mode_ms: u(&PROBE_RTT_MODE_MS),
            pacing_margin_percent: u(&PACING_MARGIN_PERCENT),
            extra_acked_gain: u(&EXTRA_ACKED_GAIN),
            lt_bw: r.flag(&LT_BW),
        }
    }
}

/// `enum bbr_mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

/// `enum tcp_ca_state`, in its order (BBR compares `< TCP_CA_Recovery`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaState {
    Open,
    Disorder,
    Cwr,
    Recovery,
    Loss,
}

/// lib/win_minmax.c's `struct minmax`: the best, 2nd and 3rd best samples
/// (value, time) of a windowed max (Kathleen Nichols' algorithm).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MinMax {
    s: [(u32, u32); 3],
}

impl MinMax {
    /// `minmax_get`.
    pub fn get(&self) -> u32 {
        self.s[0].1
    }

    /// `minmax_reset`: all three choices become (t, meas).
    pub fn reset(&mut self, t: u32, meas: u32) -> u32 {
        self.s = [(t, meas); 3];
        meas
    }

    /// `minmax_subwin_update`: as time advances, age the choices.
    fn subwin_update(&mut self, win: u32, val: (u32, u32)) -> u32 {
        let dt = val.0.wrapping_sub(self.s[0].0);
        if dt > win {
            // The whole window passed without a new max: promote the 2nd
            // and 3rd choices, maybe twice.
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = val;
            if val.0.wrapping_sub(self.s[0].0) > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = val;
            }
        } else if self.s[1].0 == self.s[0].0 && dt > win / 4 {
            // A quarter of the window without a new max: a 2nd choice from
            // the 2nd quarter.
            self.s[1] = val;
            self.s[2] = val;
        } else if self.s[2].0 == self.s[1].0 && dt > win / 2 {
            // Half the window: a 3rd choice from the last half.
            self.s[2] = val;
        }
        self.s[0].1
    }

    /// `minmax_running_max(m, win, t, meas)`.
    pub fn running_max(&mut self, win: u32, t: u32, meas: u32) -> u32 {
        let val = (t, meas);
        if meas >= self.s[0].1 || t.wrapping_sub(self.s[2].0) > win {
            return self.reset(t, meas);
        }
        if meas >= self.s[1].1 {
            self.s[1] = val;
            self.s[2] = val;
        } else if meas >= self.s[2].1 {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }
}

/// The parts of Linux's `struct rate_sample` BBR reads, in its units
/// (`delivered` and `interval_us` < 0: no sample; `rtt_us` < 0: none).
#[derive(Clone, Copy, Debug)]
struct Rs {
    delivered: i64,
    interval_us: i64,
    prior_delivered: u32,
    rtt_us: i64,
    is_app_limited: bool,
    losses: u32,
    acked_sacked: u32,
    prior_in_flight: u32,
}

impl Rs {
    fn from(r: &RateSample) -> Self {
        let valid = r.valid && r.interval_ns >= 1_000;
        Self {
            // tcp_rate_gen leaves rs->delivered set when it rejects the
            // interval (shorter than min_rtt): bbr_update_min_rtt's
            // idle_restart reads it.
            delivered: if valid || r.delivered_pkts > 0 {
                r.delivered_pkts as i64
            } else {
                -1
            },
            interval_us: if valid {
                (r.interval_ns / 1_000) as i64
            } else {
                -1
            },
            prior_delivered: r.prior_delivered_pkts as u32,
            rtt_us: if r.rtt_ns > 0 {
                (r.rtt_ns / 1_000) as i64
            } else {
                -1
            },
            is_app_limited: r.is_app_limited,
            losses: r.losses_pkts,
            acked_sacked: r.acked_sacked_pkts,
            prior_in_flight: r.prior_in_flight_pkts,
        }
    }

    /// bbr_set_state's `struct rate_sample rs = { .losses = 1 }`.
    fn one_loss() -> Self {
        Self {
            delivered: 0,
            interval_us: 0,
            prior_delivered: 0,
            rtt_us: 0,
            is_app_limited: false,
            losses: 1,
            acked_sacked: 0,
            prior_in_flight: 0,
        }
    }
}

/// `after(a, b)` (include/net/tcp.h / jiffies): a is later than b, mod 2^32.
fn after(a: u32, b: u32) -> bool {
    (b.wrapping_sub(a) as i32) < 0
}

/// `before(a, b)`.
fn before(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

#[derive(Clone, Debug)]
pub struct Bbr {
    cfg: BbrConfig,
    /// `get_random_u32_below`'s source, seeded by the transport ([`CongestionControl::seed`]).
    rng: Xoshiro256PlusPlus,

    // The tcp_sock fields BBR reads and writes.
    /// `tp->snd_cwnd`.
    snd_cwnd: u32,
    /// `tp->snd_ssthresh`.
    snd_ssthresh: u32,
    /// `tp->mss_cache` (from [`AckEvent::mss_bytes`]; 0 before the first ACK).
    mss: u32,
    /// `tp->srtt_us` is nonzero.
    has_srtt: bool,
    /// `tp->srtt_us >> 3`, µs.
    srtt_us: u32,
    /// `icsk_ca_state`, from the transport's callbacks.
    ca_state: CaState,
    /// `tp->delivered`, `tp->lost`, `tp->delivered_mstamp` (µs), after this ACK.
    delivered: u32,
    lost: u32,
    delivered_mstamp_us: u64,
    /// `tcp_packets_in_flight(tp)` after this ACK.
    inflight: u32,
    /// `tcp_jiffies32`.
    jiffies: u32,
    /// `sk->sk_pacing_rate` as the (bw, gain) it was computed from: Linux's
    /// value is `bbr_bw_to_pacing_rate(bw, gain)` with the connection's
    /// MSS, which the transport's [`CongestionControl::pacing_rate_bytes_per_sec`]
    /// passes in.
    pacing_bw: u32,
    pacing_gain_set: u32,
    /// `sk->sk_pacing_rate` with `mss` and `bbr_tso_segs_goal`, worked out
    /// again only when `pacing_bw`, `pacing_gain_set` or `mss` change
    /// ([`Bbr::refresh_pacing`]): an ACK reads them up to six times, and
    /// they change a few times a round.
    pacing_rate_now: u64,
    tso_segs_goal_now: u32,
    /// BBR asked the transport to mark the flight app-limited (PROBE_RTT:
    /// `tp->app_limited = (tp->delivered + tcp_packets_in_flight(tp)) ? : 1`).
    app_limited_mark: Option<u32>,
    /// `bbr_init`'s clock readings were taken ([`Bbr::start`]).
    started: bool,

    // struct bbr.
    min_rtt_us: u32,
    min_rtt_stamp: u32,
    probe_rtt_done_stamp: u32,
    bw: MinMax,
    rtt_cnt: u32,
    next_rtt_delivered: u32,
    cycle_mstamp: u64,
    mode: Mode,
    prev_ca_state: CaState,
    packet_conservation: bool,
    round_start: bool,
    idle_restart: bool,
    probe_rtt_round_done: bool,
    lt_is_sampling: bool,
    /// 7 bits in Linux; never above 4 * bbr_lt_intvl_min_rtts + 1 or 48.
    lt_rtt_cnt: u32,
    lt_use_bw: bool,
    lt_bw: u32,
    lt_last_delivered: u32,
    /// ms.
    lt_last_stamp: u32,
    lt_last_lost: u32,
    pacing_gain: u32,
    cwnd_gain: u32,
    full_bw_reached: bool,
    /// 2 bits in Linux: at most 3.
    full_bw_cnt: u32,
    /// 3 bits.
    cycle_idx: u32,
    has_seen_rtt: bool,
    prior_cwnd: u32,
    full_bw: u32,
    ack_epoch_mstamp: u64,
    extra_acked: [u16; 2],
    /// 20 bits.
    ack_epoch_acked: u32,
    /// 5 bits.
    extra_acked_win_rtts: u32,
    extra_acked_win_idx: usize,
}

impl Bbr {
    pub fn from_params(
        params: &CcParams,
        rules: Rules,
        init: InitialWindow,
    ) -> Result<Self, CcError> {
        let r = ALGORITHM.check(params, rules)?;
        Ok(Self::new(BbrConfig::read(&r), init))
    }

    /// `bbr_init`, at time 0 before any RTT sample (the simulator creates
    /// controllers before the connection's first packet; Linux's init runs
    /// after the handshake, whose RTT then seeds min_rtt and the pacing rate:
    /// here the first ACK with an SRTT does, through `has_seen_rtt`).
    pub fn new(cfg: BbrConfig, init: InitialWindow) -> Self {
        let snd_cwnd = init.cwnd_pkts.clamp(1.0, f64::from(u32::MAX)) as u32;
        let mut b = Self {
            cfg,
            rng: Xoshiro256PlusPlus::seed_from_u64(0),
            snd_cwnd,
            snd_ssthresh: TCP_INFINITE_SSTHRESH,
            mss: 0,
            has_srtt: false,
            srtt_us: 0,
            ca_state: CaState::Open,
            delivered: 0,
            lost: 0,
            delivered_mstamp_us: 0,
            inflight: 0,
            jiffies: 0,
            pacing_bw: 0,
            pacing_gain_set: 0,
            pacing_rate_now: 0,
            tso_segs_goal_now: 0,
            app_limited_mark: None,
            started: false,
            prior_cwnd: 0,
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            prev_ca_state: CaState::Open,
            packet_conservation: false,
            probe_rtt_done_stamp: 0,
            probe_rtt_round_done: false,
            // tcp_min_rtt(tp) = ~0U: no sample yet.
            min_rtt_us: u32::MAX,
            min_rtt_stamp: 0,
            bw: MinMax::default(),
            has_seen_rtt: false,
            round_start: false,
            idle_restart: false,
            full_bw_reached: false,
            full_bw: 0,
            full_bw_cnt: 0,
            cycle_mstamp: 0,
            cycle_idx: 0,
            lt_is_sampling: false,
            lt_rtt_cnt: 0,
            lt_use_bw: false,
            lt_bw: 0,
            lt_last_delivered: 0,
            lt_last_stamp: 0,
            lt_last_lost: 0,
            mode: Mode::Startup,
            pacing_gain: 0,
            cwnd_gain: 0,
            ack_epoch_mstamp: 0,
            ack_epoch_acked: 0,
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
            extra_acked: [0; 2],
        };
        b.bw.reset(b.rtt_cnt, 0);
        b.init_pacing_rate_from_rtt();
        b.reset_lt_bw_sampling();
        b.reset_startup_mode();
        // Linux leaves pacing_gain/cwnd_gain 0 until the first bbr_main's
        // bbr_update_gains; STARTUP's are what that sets.
        b
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }
    pub fn pacing_gain(&self) -> u32 {
        self.pacing_gain
    }
    pub fn cwnd_gain(&self) -> u32 {
        self.cwnd_gain
    }
    /// `bbr_max_bw`, packets/µs << 24.
    pub fn max_bw(&self) -> u32 {
        self.bw.get()
    }
    /// `bbr_bw`: lt_bw when policed, else the max filter.
    pub fn bw(&self) -> u32 {
        if self.lt_use_bw {
            self.lt_bw
        } else {
            self.max_bw()
        }
    }
    pub fn min_rtt_us(&self) -> u32 {
        self.min_rtt_us
    }
    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }
    pub fn cycle_idx(&self) -> u32 {
        self.cycle_idx
    }
    pub fn rtt_cnt(&self) -> u32 {
        self.rtt_cnt
    }
    pub fn lt_use_bw(&self) -> bool {
        self.lt_use_bw
    }
    pub fn lt_bw(&self) -> u32 {
        self.lt_bw
    }
    pub fn prior_cwnd(&self) -> u32 {
        self.prior_cwnd
    }
    pub fn packet_conservation(&self) -> bool {
        self.packet_conservation
    }
    /// `bbr->full_bw`: the max bw at the last round of 25 % growth.
    pub fn full_bw(&self) -> u32 {
        self.full_bw
    }
    /// `bbr->full_bw_cnt`: rounds since then without it.
    pub fn full_bw_cnt(&self) -> u32 {
        self.full_bw_cnt
    }
    /// `bbr->idle_restart`.
    pub fn idle_restart(&self) -> bool {
        self.idle_restart
    }

    /// `bbr_extra_acked`.
    fn extra_acked(&self) -> u32 {
        u32::from(self.extra_acked[0].max(self.extra_acked[1]))
    }

    /// `bbr_rate_bytes_per_sec`: rate (packets/µs << 24) x mss x gain, less
    /// the pacing margin, in bytes per second, in u64 in Linux's order.
    fn rate_bytes_per_sec(&self, rate: u64, gain: u32, mss: u32) -> u64 {
        let mut rate = rate.wrapping_mul(u64::from(mss));
        rate = rate.wrapping_mul(u64::from(gain));
        rate >>= BBR_SCALE;
        rate =
            rate.wrapping_mul(USEC_PER_SEC / 100 * u64::from(100 - self.cfg.pacing_margin_percent));
        rate >> BW_SCALE
    }

    /// `sk->sk_pacing_rate` with the connection's MSS.
    fn sk_pacing_rate(&self) -> u64 {
        debug_assert_eq!(self.pacing_rate_now, self.sk_pacing_rate_formula());
        self.pacing_rate_now
    }

    fn sk_pacing_rate_formula(&self) -> u64 {
        self.rate_bytes_per_sec(u64::from(self.pacing_bw), self.pacing_gain_set, self.mss)
    }

    /// Works out `pacing_rate_now` and `tso_segs_goal_now` again from
    /// `pacing_bw`, `pacing_gain_set` and `mss`.
    fn refresh_pacing(&mut self) {
        self.pacing_rate_now = self.sk_pacing_rate_formula();
        self.tso_segs_goal_now = self.tso_segs_goal_formula();
    }

    /// `bbr_init_pacing_rate_from_rtt`: high_gain x cwnd / SRTT (1 ms
    /// before any sample).
    fn init_pacing_rate_from_rtt(&mut self) {
        let rtt_us = if self.has_srtt {
            self.has_seen_rtt = true;
            self.srtt_us.max(1)
        } else {
            USEC_PER_MSEC as u32
        };
        let bw = u64::from(self.snd_cwnd) * BW_UNIT / u64::from(rtt_us);
        // bbr_bw_to_pacing_rate keeps it in u64 (sk_pacing_rate is unsigned
        // long); the (bw, gain) form keeps it as a u32 bw, which holds up to
        // 256 packets/µs.
        self.pacing_bw = bw.min(u64::from(u32::MAX)) as u32;
        self.pacing_gain_set = self.cfg.high_gain;
        self.refresh_pacing();
    }

    /// `bbr_set_pacing_rate`: pacing only rises before the pipe is full.
    #[inline]
    fn set_pacing_rate(&mut self, bw: u32, gain: u32) {
        if !self.has_seen_rtt && self.has_srtt {
            self.init_pacing_rate_from_rtt();
        }
        if (bw, gain) == (self.pacing_bw, self.pacing_gain_set) {
            return; // the same rate either way
        }
        if self.full_bw_reached || {
            let mss = self.mss.max(1);
            let rate = self.rate_bytes_per_sec(u64::from(bw), gain, mss);
            let current = if self.mss > 0 {
                self.sk_pacing_rate()
            } else {
                self.rate_bytes_per_sec(u64::from(self.pacing_bw), self.pacing_gain_set, mss)
            };
            rate > current
        } {
            self.pacing_bw = bw;
            self.pacing_gain_set = gain;
            self.refresh_pacing();
        }
    }

    /// `bbr_min_tso_segs`.
    fn min_tso_segs(&self) -> u32 {
        if self.sk_pacing_rate_formula() < (MIN_TSO_RATE_BPS >> 3) {
            1
        } else {
            2
        }
    }

    /// `bbr_tso_segs_goal`: about 1 ms of data at the pacing rate
    /// (`sk_pacing_shift` 10), at most 64 KB, in segments.
    fn tso_segs_goal(&self) -> u32 {
        debug_assert_eq!(self.tso_segs_goal_now, self.tso_segs_goal_formula());
        self.tso_segs_goal_now
    }

    fn tso_segs_goal_formula(&self) -> u32 {
        let bytes = (self.sk_pacing_rate_formula() >> PACING_SHIFT).min(TSO_MAX_BYTES) as u32;
        let segs = (bytes / self.mss.max(1)).max(self.min_tso_segs());
        segs.min(0x7F)
    }

    /// `bbr_save_cwnd`: the last good cwnd, to restore after recovery or
    /// PROBE_RTT.
    fn save_cwnd(&mut self) {
        if self.prev_ca_state < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = self.snd_cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(self.snd_cwnd);
        }
    }

    /// `bbr_bdp`: ceil(bw x min_rtt x gain) in packets; TCP_INIT_CWND
    /// before any RTT sample.
    pub fn bdp(&self, bw: u32, gain: u32) -> u32 {
        if self.min_rtt_us == u32::MAX {
            return TCP_INIT_CWND;
        }
        let w = u64::from(bw) * u64::from(self.min_rtt_us);
        (w.wrapping_mul(u64::from(gain)) >> BBR_SCALE).div_ceil(BW_UNIT) as u32
    }

    /// `bbr_quantization_budget`: room for 3 TSO bursts, an even cwnd, and
    /// +2 in the probing phase so that small BDPs probe too.
    fn quantization_budget(&self, cwnd: u32) -> u32 {
        let mut cwnd = cwnd.wrapping_add(3 * self.tso_segs_goal());
        cwnd = cwnd.wrapping_add(1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            cwnd = cwnd.wrapping_add(2);
        }
        cwnd
    }

    /// `bbr_inflight`.
    pub fn inflight(&self, bw: u32, gain: u32) -> u32 {
        self.quantization_budget(self.bdp(bw, gain))
    }

    /// `bbr_packets_in_net_at_edt`, with the earliest departure time = now:
    /// the controller is not told the sender's next departure time
    /// (docs/algorithms.md), so nothing is subtracted for packets that
    /// will leave the network before it.
    fn packets_in_net_at_edt(&self, inflight_now: u32) -> u32 {
        let mut inflight_at_edt = inflight_now;
        if self.pacing_gain > BBR_UNIT {
            inflight_at_edt = inflight_at_edt.saturating_add(self.tso_segs_goal());
        }
        inflight_at_edt
    }

    /// `bbr_ack_aggregation_cwnd`.
    fn ack_aggregation_cwnd(&self) -> u32 {
        if self.cfg.extra_acked_gain == 0 || !self.full_bw_reached {
            return 0;
        }
        let max_aggr_cwnd = (u64::from(self.bw()) * EXTRA_ACKED_MAX_US / BW_UNIT) as u32;
        let aggr_cwnd = (self.cfg.extra_acked_gain * self.extra_acked()) >> BBR_SCALE;
        aggr_cwnd.min(max_aggr_cwnd)
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: packet conservation in the
    /// first round of recovery; the cwnd of before it on the return to Open.
    fn set_cwnd_to_recover_or_restore(&mut self, rs: &Rs, acked: u32) -> (bool, u32) {
        let (prev_state, state) = (self.prev_ca_state, self.ca_state);
        let mut cwnd = self.snd_cwnd;
        if rs.losses > 0 {
            cwnd = (cwnd as i32).wrapping_sub(rs.losses as i32).max(1) as u32;
        }
        if state == CaState::Recovery && prev_state != CaState::Recovery {
            // Starting the 1st round of Recovery: packet conservation.
            self.packet_conservation = true;
            self.next_rtt_delivered = self.delivered;
            cwnd = self.inflight.saturating_add(acked);
        } else if prev_state >= CaState::Recovery && state < CaState::Recovery {
            // Leaving loss recovery: restore the cwnd saved before it.
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            return (true, cwnd.max(self.inflight.saturating_add(acked)));
        }
        (false, cwnd)
    }

    /// `bbr_set_cwnd`: slow-start up to cwnd_gain x BDP (+ the aggregation
    /// allowance, quantised), or snap down to it once the pipe is full.
    fn set_cwnd(&mut self, rs: &Rs, acked: u32, bw: u32, gain: u32) {
        let mut cwnd = self.snd_cwnd;
        if acked != 0 {
            let (conserving, c) = self.set_cwnd_to_recover_or_restore(rs, acked);
            cwnd = c;
            if !conserving {
                let mut target_cwnd = self.bdp(bw, gain);
                target_cwnd += self.ack_aggregation_cwnd();
                target_cwnd = self.quantization_budget(target_cwnd);
                if self.full_bw_reached {
                    cwnd = cwnd.saturating_add(acked).min(target_cwnd);
                } else if cwnd < target_cwnd || self.delivered < TCP_INIT_CWND {
                    cwnd = cwnd.saturating_add(acked);
                }
                cwnd = cwnd.max(CWND_MIN_TARGET);
            }
        }
        // done: snd_cwnd_clamp is not modelled (unbounded).
        self.snd_cwnd = cwnd;
        if self.mode == Mode::ProbeRtt {
            self.snd_cwnd = self.snd_cwnd.min(CWND_MIN_TARGET);
        }
    }

    /// `bbr_is_next_cycle_phase`.
    fn is_next_cycle_phase(&self, rs: &Rs) -> bool {
        let is_full_length =
            self.delivered_mstamp_us.saturating_sub(self.cycle_mstamp) > u64::from(self.min_rtt_us);
        if self.pacing_gain == BBR_UNIT {
            return is_full_length;
        }
        let inflight = self.packets_in_net_at_edt(rs.prior_in_flight);
        let bw = self.max_bw();
        if self.pacing_gain > BBR_UNIT {
            // Probing: at least min_rtt, and until inflight reaches
            // pacing_gain x BDP or packets are lost.
            return is_full_length
                && (rs.losses > 0 || inflight >= self.inflight(bw, self.pacing_gain));
        }
        // Draining: at most min_rtt, less once inflight is down to 1 BDP.
        is_full_length || inflight <= self.inflight(bw, BBR_UNIT)
    }

    /// `bbr_advance_cycle_phase`.
    fn advance_cycle_phase(&mut self) {
        self.cycle_idx = (self.cycle_idx + 1) & (CYCLE_LEN - 1);
        self.cycle_mstamp = self.delivered_mstamp_us;
    }

    /// `bbr_update_cycle_phase`.
    fn update_cycle_phase(&mut self, rs: &Rs) {
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(rs) {
            self.advance_cycle_phase();
        }
    }

    /// `bbr_reset_startup_mode`.
    fn reset_startup_mode(&mut self) {
        self.mode = Mode::Startup;
    }

    /// `bbr_reset_probe_bw_mode`: a random phase other than the drain one
    /// (`CYCLE_LEN - 1 - get_random_u32_below(7)`, then one step).
    fn reset_probe_bw_mode(&mut self) {
        self.mode = Mode::ProbeBw;
        let r = ((u64::from(self.rng.next_u32()) * u64::from(CYCLE_RAND)) >> 32) as u32;
        self.cycle_idx = CYCLE_LEN - 1 - r;
        self.advance_cycle_phase();
    }

    /// `bbr_reset_mode`.
    fn reset_mode(&mut self) {
        if !self.full_bw_reached {
            self.reset_startup_mode();
        } else {
            self.reset_probe_bw_mode();
        }
    }

    /// `bbr_reset_lt_bw_sampling_interval`.
    fn reset_lt_bw_sampling_interval(&mut self) {
        self.lt_last_stamp = (self.delivered_mstamp_us / USEC_PER_MSEC) as u32;
        self.lt_last_delivered = self.delivered;
        self.lt_last_lost = self.lost;
        self.lt_rtt_cnt = 0;
    }

    /// `bbr_reset_lt_bw_sampling`.
    fn reset_lt_bw_sampling(&mut self) {
        self.lt_bw = 0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
        self.reset_lt_bw_sampling_interval();
    }

    /// `bbr_lt_bw_interval_done`: two consistent lossy intervals mean a
    /// policer; pace at their average.
    fn lt_bw_interval_done(&mut self, bw: u32) {
        if self.lt_bw != 0 {
            let diff = bw.abs_diff(self.lt_bw);
            if u64::from(diff) * u64::from(BBR_UNIT)
                <= u64::from(LT_BW_RATIO) * u64::from(self.lt_bw)
                || self.rate_bytes_per_sec(u64::from(diff), BBR_UNIT, self.mss)
                    <= LT_BW_DIFF_BYTES_PER_SEC
            {
                self.lt_bw = ((u64::from(bw) + u64::from(self.lt_bw)) >> 1) as u32;
                self.lt_use_bw = true;
                self.pacing_gain = BBR_UNIT;
                self.lt_rtt_cnt = 0;
                return;
            }
        }
        self.lt_bw = bw;
        self.reset_lt_bw_sampling_interval();
    }

    /// `bbr_lt_bw_sampling`.
    fn lt_bw_sampling(&mut self, rs: &Rs) {
        if !self.cfg.lt_bw {
            return;
        }
        if self.lt_use_bw {
            if self.mode == Mode::ProbeBw && self.round_start {
                self.lt_rtt_cnt += 1;
                if self.lt_rtt_cnt >= LT_BW_MAX_RTTS {
                    self.reset_lt_bw_sampling();
                    self.reset_probe_bw_mode();
                }
            }
            return;
        }
        // Wait for the first loss, so the policer's tokens are exhausted.
        if !self.lt_is_sampling {
            if rs.losses == 0 {
                return;
            }
            self.reset_lt_bw_sampling_interval();
            self.lt_is_sampling = true;
        }
        if rs.is_app_limited {
            self.reset_lt_bw_sampling();
            return;
        }
        if self.round_start {
            self.lt_rtt_cnt += 1;
        }
        if self.lt_rtt_cnt < LT_INTVL_MIN_RTTS {
            return;
        }
        if self.lt_rtt_cnt > 4 * LT_INTVL_MIN_RTTS {
            self.reset_lt_bw_sampling();
            return;
        }
        // End the interval at a loss (tokens exhausted).
        if rs.losses == 0 {
            return;
        }
        let lost = self.lost.wrapping_sub(self.lt_last_lost);
        let delivered = self.delivered.wrapping_sub(self.lt_last_delivered);
        if delivered == 0
            || u64::from(lost) << BBR_SCALE < u64::from(LT_LOSS_THRESH) * u64::from(delivered)
        {
            return;
        }
        let mut t =
            ((self.delivered_mstamp_us / USEC_PER_MSEC) as u32).wrapping_sub(self.lt_last_stamp);
        if (t as i32) < 1 {
            return;
        }
        if t >= u32::MAX / USEC_PER_MSEC as u32 {
            self.reset_lt_bw_sampling();
            return;
        }
        t *= USEC_PER_MSEC as u32;
        let bw = u64::from(delivered) * BW_UNIT / u64::from(t);
        self.lt_bw_interval_done(bw as u32);
    }

    /// `bbr_update_bw`: packet-timed rounds and the max filter.
    fn update_bw(&mut self, rs: &Rs) {
        self.round_start = false;
        if rs.delivered < 0 || rs.interval_us <= 0 {
            return;
        }
        if !before(rs.prior_delivered, self.next_rtt_delivered) {
            self.next_rtt_delivered = self.delivered;
            self.rtt_cnt = self.rtt_cnt.wrapping_add(1);
            self.round_start = true;
            self.packet_conservation = false;
        }
        self.lt_bw_sampling(rs);
        let bw = (rs.delivered as u64).wrapping_mul(BW_UNIT) / rs.interval_us as u64;
        // An app-limited sample enters only if it is no lower than the max.
        if !rs.is_app_limited || bw >= u64::from(self.max_bw()) {
            self.bw
                .running_max(self.cfg.bw_rtts, self.rtt_cnt, bw as u32);
        }
    }

    /// `bbr_update_ack_aggregation`: the windowed max of data ACKed beyond
    /// bw x the epoch's length.
    fn update_ack_aggregation(&mut self, rs: &Rs) {
        if self.cfg.extra_acked_gain == 0
            || rs.acked_sacked == 0
            || rs.delivered < 0
            || rs.interval_us <= 0
        {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(0x1F);
            if self.extra_acked_win_rtts >= EXTRA_ACKED_WIN_RTTS {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        let epoch_us = self
            .delivered_mstamp_us
            .saturating_sub(self.ack_epoch_mstamp) as u32;
        let mut expected_acked = (u64::from(self.bw()) * u64::from(epoch_us) / BW_UNIT) as u32;
        if self.ack_epoch_acked <= expected_acked
            || self.ack_epoch_acked.saturating_add(rs.acked_sacked) >= ACK_EPOCH_ACKED_RESET_THRESH
        {
            self.ack_epoch_acked = 0;
            self.ack_epoch_mstamp = self.delivered_mstamp_us;
            expected_acked = 0;
        }
        self.ack_epoch_acked = self
            .ack_epoch_acked
            .saturating_add(rs.acked_sacked)
            .min(0xFFFFF);
        let extra_acked = self
            .ack_epoch_acked
            .wrapping_sub(expected_acked)
            .min(self.snd_cwnd);
        let idx = self.extra_acked_win_idx;
        if extra_acked > u32::from(self.extra_acked[idx]) {
            // u16 in struct bbr.
            self.extra_acked[idx] = extra_acked as u16;
        }
    }

    /// `bbr_check_full_bw_reached`: 3 rounds in a row (not app-limited)
    /// with less than 25 % growth of the max bw.
    fn check_full_bw_reached(&mut self, rs: &Rs) {
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        let bw_thresh = ((u64::from(self.full_bw) * u64::from(FULL_BW_THRESH)) >> BBR_SCALE) as u32;
        if self.max_bw() >= bw_thresh {
            self.full_bw = self.max_bw();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_CNT;
    }

    /// `bbr_check_drain`: DRAIN once the pipe is full, PROBE_BW once the
    /// flight is down to 1 BDP.
    fn check_drain(&mut self) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            self.snd_ssthresh = self.inflight(self.max_bw(), BBR_UNIT);
        }
        if self.mode == Mode::Drain
            && self.packets_in_net_at_edt(self.inflight) <= self.inflight(self.max_bw(), BBR_UNIT)
        {
            self.reset_probe_bw_mode();
        }
    }

    /// `bbr_check_probe_rtt_done`.
    fn check_probe_rtt_done(&mut self) {
        if !(self.probe_rtt_done_stamp != 0 && after(self.jiffies, self.probe_rtt_done_stamp)) {
            return;
        }
        self.min_rtt_stamp = self.jiffies;
        self.snd_cwnd = self.snd_cwnd.max(self.prior_cwnd);
        self.reset_mode();
    }

    /// `bbr_update_min_rtt`: the 10 s min filter and PROBE_RTT.
    fn update_min_rtt(&mut self, rs: &Rs) {
        let win_jiffies = self.cfg.min_rtt_win_sec.wrapping_mul(1000);
        let filter_expired = after(self.jiffies, self.min_rtt_stamp.wrapping_add(win_jiffies));
        // rs->is_ack_delayed is never set here: every packet is full-sized
        // (Linux's FLAG_ACK_MAYBE_DELAYED needs a runt). Only a strictly
        // lower sample restarts the window (`rs->rtt_us < bbr->min_rtt_us`,
        // since Linux 5.10: upstream commit 1b9e2a8c99a5, "tcp: only
        // postpone PROBE_RTT if RTT is < current min_rtt estimate"; before
        // it `<=`, which ns-3's TcpBbr::UpdateRTprop keeps): a sample equal
        // to the minimum no longer postpones PROBE_RTT.
        if rs.rtt_us >= 0 && (rs.rtt_us < i64::from(self.min_rtt_us) || filter_expired) {
            self.min_rtt_us = rs.rtt_us as u32;
            self.min_rtt_stamp = self.jiffies;
        }
        if self.cfg.probe_rtt_mode_ms > 0
            && filter_expired
            && !self.idle_restart
            && self.mode != Mode::ProbeRtt
        {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd();
            self.probe_rtt_done_stamp = 0;
        }
        if self.mode == Mode::ProbeRtt {
            // Ignore low-rate samples in this mode (the transport marks them).
            let mark = self.delivered.wrapping_add(self.inflight);
            self.app_limited_mark = Some(if mark == 0 { 1 } else { mark });
            if self.probe_rtt_done_stamp == 0 && self.inflight <= CWND_MIN_TARGET {
                self.probe_rtt_done_stamp = self.jiffies.wrapping_add(self.cfg.probe_rtt_mode_ms);
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = self.delivered;
            } else if self.probe_rtt_done_stamp != 0 {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done();
                }
            }
        }
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
    }

    /// `bbr_update_gains`.
    fn update_gains(&mut self) {
        let (p, c) = match self.mode {
            Mode::Startup => (self.cfg.high_gain, self.cfg.high_gain),
            Mode::Drain => (self.cfg.drain_gain, self.cfg.high_gain),
            Mode::ProbeBw => (
                if self.lt_use_bw {
                    BBR_UNIT
                } else {
                    PACING_GAIN_CYCLE[self.cycle_idx as usize]
                },
                self.cfg.cwnd_gain,
            ),
            Mode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
        self.pacing_gain = p;
        self.cwnd_gain = c;
    }

    /// `bbr_update_model`.
    fn update_model(&mut self, rs: &Rs) {
        self.update_bw(rs);
        self.update_ack_aggregation(rs);
        self.update_cycle_phase(rs);
        self.check_full_bw_reached(rs);
        self.check_drain();
        self.update_min_rtt(rs);
        self.update_gains();
    }

    /// `bbr_undo_cwnd`: a spurious reduction resets full-pipe detection
    /// and lt sampling; cwnd stays. (The simulator's `linux` profile undoes
    /// by restoring the controller it kept at the reduction instead: see
    /// docs/algorithms.md, "BBR".)
    pub fn undo_cwnd(&mut self) {
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.reset_lt_bw_sampling();
    }

    /// `bbr_init`'s clock readings (`min_rtt_stamp = tcp_jiffies32`,
    /// `ack_epoch_mstamp = tp->tcp_mstamp`), taken at the connection's
    /// first event: the simulator builds every controller at time 0,
    /// before the flow's start.
    fn start(&mut self, now_ns: u64) {
        if !self.started {
            self.started = true;
            self.min_rtt_stamp = (now_ns / NS_PER_JIFFY) as u32;
            self.ack_epoch_mstamp = now_ns / 1_000;
        }
    }
}

impl CongestionControl for Bbr {
    fn name(&self) -> &'static str {
        "bbr"
    }

    fn cwnd(&self) -> f64 {
        f64::from(self.snd_cwnd)
    }

    fn ssthresh(&self) -> f64 {
        if self.snd_ssthresh >= TCP_INFINITE_SSTHRESH {
            f64::INFINITY
        } else {
            f64::from(self.snd_ssthresh)
        }
    }

    fn seed(&mut self, seed: u64) {
        self.rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    }

    fn on_send(&mut self, now_ns: u64, _seq: u64, _bytes: u32, _retransmit: bool) -> u32 {
        self.start(now_ns);
        0
    }

    /// `bbr_main`.
    fn on_ack(&mut self, ack: &AckEvent) {
        self.start(ack.now_ns);
        let r = &ack.rate;
        self.jiffies = (ack.now_ns / NS_PER_JIFFY) as u32;
        if ack.mss_bytes > 0 && ack.mss_bytes != self.mss {
            self.mss = ack.mss_bytes;
            self.refresh_pacing();
        }
        if ack.rtt.smoothed_ns > 0 {
            self.has_srtt = true;
            self.srtt_us = (ack.rtt.smoothed_ns / 1_000).min(u64::from(u32::MAX)) as u32;
        }
        self.delivered = r.delivered_total_pkts as u32;
        self.lost = r.lost_total_pkts as u32;
        self.delivered_mstamp_us = r.delivered_time_ns / 1_000;
        // tcp_packets_in_flight after the ACK: before it, less what it
        // delivered and what it marked lost.
        self.inflight = r
            .prior_in_flight_pkts
            .saturating_sub(r.acked_sacked_pkts)
            .saturating_sub(r.losses_pkts);
        self.app_limited_mark = None;
        let rs = Rs::from(r);
        self.update_model(&rs);
        let bw = self.bw();
        self.set_pacing_rate(bw, self.pacing_gain);
        self.set_cwnd(&rs, rs.acked_sacked, bw, self.cwnd_gain);
    }

    /// `bbr_ssthresh` (tcp_init_cwnd_reduction, saving the cwnd) and the
    /// entry to TCP_CA_Recovery (or TCP_CA_CWR for an ECN response), which
    /// `bbr_set_state` ignores and the next `bbr_main` acts on. The window
    /// is not touched: a `cong_control` module gets no PRR.
    fn on_congestion_event(&mut self, loss: &LossEvent) {
        self.save_cwnd();
        self.ca_state = if loss.ecn {
            CaState::Cwr
        } else {
            CaState::Recovery
        };
    }

    fn on_recovery_exit(&mut self, _now_ns: u64) {
        self.ca_state = CaState::Open;
    }

    fn on_timeout_recovery_exit(&mut self, _now_ns: u64) {
        self.ca_state = CaState::Open;
    }

    /// tcp_enter_loss: `bbr_ssthresh` when it reduces, cwnd =
    /// in flight + 1, then `bbr_set_state(TCP_CA_Loss)`.
    fn on_rto(&mut self, rto: &RtoEvent) {
        self.jiffies = (rto.now_ns / NS_PER_JIFFY) as u32;
        if rto.reduce {
            self.save_cwnd();
        }
        self.snd_cwnd = rto.in_flight_pkts.saturating_add(1);
        self.ca_state = CaState::Loss;
        // bbr_set_state(sk, TCP_CA_Loss).
        self.prev_ca_state = CaState::Loss;
        self.full_bw = 0;
        self.round_start = true;
        self.lt_bw_sampling(&Rs::one_loss());
    }

    fn pacing_rate_bytes_per_sec(&self, mss_bytes: u32) -> Option<u64> {
        if mss_bytes == self.mss {
            return Some(self.sk_pacing_rate());
        }
        Some(self.rate_bytes_per_sec(u64::from(self.pacing_bw), self.pacing_gain_set, mss_bytes))
    }

    fn controls_recovery_window(&self) -> bool {
        true
    }

    fn wants_rate_samples(&self) -> bool {
        true
    }

    /// `bbr_cwnd_event(CA_EVENT_TX_START)`: the first send after idle while
    /// app-limited restarts the ACK epoch and, in PROBE_BW, paces at 1.0 x bw.
    fn on_tx_start(&mut self, now_ns: u64, app_limited: bool) {
        self.start(now_ns);
        if !app_limited {
            return;
        }
        self.jiffies = (now_ns / NS_PER_JIFFY) as u32;
        self.idle_restart = true;
        // `tp->tcp_mstamp`, µs.
        self.ack_epoch_mstamp = now_ns / 1_000;
        self.ack_epoch_acked = 0;
        if self.mode == Mode::ProbeBw {
            self.set_pacing_rate(self.bw(), BBR_UNIT);
        } else if self.mode == Mode::ProbeRtt {
            self.check_probe_rtt_done();
        }
    }

    fn app_limited_until(&self) -> Option<u64> {
        self.app_limited_mark.map(u64::from)
    }

    fn inspect(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    //! Every number below is worked out by hand from tcp_bbr.c's integer
    //! formulas, on one path: 1000-byte packets, a bottleneck of 1 packet
    //! per ms and a 100 ms propagation delay. Then
    //!
    //! - bw = 100 packets x 2^24 / 100 000 µs = 16 777 (`bbr_update_bw`,
    //!   truncated), so BDP = ceil(16 777 x 100 000 / 2^24) = ceil(99.9997)
    //!   = 100 packets (`bbr_bdp`, gain 256); gain 320: ceil(124.9996) = 125;
    //!   gain 512: 200; gain 739: ceil(1 677 700 000 x 739 >> 8 / 2^24) =
    //!   ceil(288.67) = 289.
    //! - the pacing rate at gain 1 is 16 777 x 1000 x 256 >> 8 x 990 000 >> 24
    //!   = 989 987 B/s (`bbr_rate_bytes_per_sec`, 1 % margin); >> 10 = 966
    //!   bytes, less than one packet, so `bbr_tso_segs_goal` is
    //!   `bbr_min_tso_segs` = 2 (the rate is above 1.2 Mbit/s / 8) and
    //!   `bbr_quantization_budget` adds 3 x 2 = 6, then rounds up to even,
    //!   then +2 in phase 0 of PROBE_BW: inflight(bw, 1.0) = 106,
    //!   inflight(bw, 1.25) in phase 0 = 125 + 6 -> 132 + 2 = 134.
    use super::*;

    const BW: u32 = 16_777;
    const MIN_RTT_US: u64 = 100_000;
    const MSS: u32 = 1000;

    /// A connection's counters and clock driving one `Bbr`.
    struct Drive {
        b: Bbr,
        now_us: u64,
        delivered: u64,
        lost: u64,
    }

    /// One ACK as the transport would report it.
    #[derive(Clone, Copy)]
    struct Ack {
        /// Time since the previous ACK.
        dt_us: u64,
        /// Packets this ACK delivered (`acked_sacked`).
        acked: u32,
        /// The sample: packets over µs (`rs->delivered`, `rs->interval_us`).
        sample: Option<(u64, u64)>,
        rtt_us: u64,
        prior_in_flight: u32,
        losses: u32,
        app_limited: bool,
        /// The sample's packet was sent when the connection had delivered
        /// this many fewer than now before this ACK (0: the newest, which
        /// starts a new round on every ACK).
        prior_lag: u64,
    }

    impl Default for Ack {
        fn default() -> Self {
            Self {
                dt_us: 1_000,
                acked: 1,
                sample: Some((100, MIN_RTT_US)),
                rtt_us: MIN_RTT_US,
                prior_in_flight: 100,
                losses: 0,
                app_limited: false,
                prior_lag: 0,
            }
        }
    }

    impl Drive {
        fn new() -> Self {
            Self::with(BbrConfig::default())
        }

        fn with(cfg: BbrConfig) -> Self {
            let init = InitialWindow {
                cwnd_pkts: 10.0,
                ssthresh_pkts: f64::INFINITY,
            };
            let mut b = Bbr::new(cfg, init);
            b.seed(7);
            // The first packet leaves at 1 s.
            b.on_send(1_000_000_000, 0, MSS, false);
            Self {
                b,
                now_us: 1_000_000,
                delivered: 0,
                lost: 0,
            }
        }

        fn ack(&mut self, a: Ack) {
            self.now_us += a.dt_us;
            let prior_delivered = self.delivered.saturating_sub(a.prior_lag);
            self.delivered += u64::from(a.acked);
            self.lost += u64::from(a.losses);
            let (d, i) = a.sample.unwrap_or((0, 0));
            let rate = RateSample {
                valid: a.sample.is_some(),
                delivered_pkts: d,
                interval_ns: i * 1_000,
                prior_delivered_pkts: prior_delivered,
                rtt_ns: a.rtt_us * 1_000,
                is_app_limited: a.app_limited,
                losses_pkts: a.losses,
                acked_sacked_pkts: a.acked,
                prior_in_flight_pkts: a.prior_in_flight,
                delivered_total_pkts: self.delivered,
                lost_total_pkts: self.lost,
                delivered_time_ns: self.now_us * 1_000,
            };
            self.b.on_ack(&AckEvent {
                now_ns: self.now_us * 1_000,
                delivered_pkts: a.acked,
                in_flight_pkts: a.prior_in_flight,
                in_recovery: false,
                rtt: crate::RttStats {
                    latest_ns: a.rtt_us * 1_000,
                    min_ns: a.rtt_us * 1_000,
                    smoothed_ns: a.rtt_us * 1_000,
                },
                rtt_updated: true,
                rate,
                mss_bytes: MSS,
                ..Default::default()
            });
        }

        /// STARTUP with a flat bw: full pipe on the 4th round (1st sets
        /// full_bw, 3 more below 1.25x), DRAIN, and, with nothing left in
        /// flight after the 4th ACK, PROBE_BW at once.
        fn reach_probe_bw(&mut self) {
            for _ in 0..4 {
                self.ack(Ack {
                    acked: 100,
                    ..Ack::default()
                });
            }
            assert_eq!(self.b.mode(), Mode::ProbeBw);
        }

        /// Puts PROBE_BW in phase `idx`, its phase starting now.
        fn phase(&mut self, idx: u32) {
            self.b.cycle_idx = idx;
            self.b.cycle_mstamp = self.now_us;
            self.b.update_gains();
        }
    }

    #[test]
    fn linux_constants() {
        // bbr_high_gain = BBR_UNIT * 2885 / 1000 + 1 = 738 + 1; bbr_drain_gain
        // = BBR_UNIT * 1000 / 2885 = 88 (256000 / 2885 = 88.7).
        let c = BbrConfig::default();
        assert_eq!((c.high_gain, c.drain_gain, c.cwnd_gain), (739, 88, 512));
        assert_eq!(PACING_GAIN_CYCLE, [320, 192, 256, 256, 256, 256, 256, 256]);
        assert_eq!(
            (c.bw_rtts, c.min_rtt_win_sec, c.probe_rtt_mode_ms),
            (10, 10, 200)
        );
    }

    #[test]
    fn startup_paces_at_high_gain_and_slow_starts_cwnd() {
        let mut d = Drive::new();
        // Before any RTT: bbr_init_pacing_rate_from_rtt with the nominal 1 ms:
        // bw = 10 x 2^24 / 1000 = 167 772; x 1000 x 739 >> 8 = 484 310 578;
        // x 990 000 >> 24 = 28 578 488 B/s.
        assert_eq!(d.b.pacing_rate_bytes_per_sec(MSS), Some(28_578_488));
        d.ack(Ack {
            acked: 2,
            ..Ack::default()
        });
        assert_eq!(d.b.mode(), Mode::Startup);
        assert_eq!((d.b.pacing_gain(), d.b.cwnd_gain()), (739, 739));
        // The first ACK with an SRTT (100 ms) re-inits the rate: bw = 10 x
        // 2^24 / 100 000 = 1677, x 1000 x 739 >> 8 = 4 841 027, x 990 000
        // >> 24 = 285 662 B/s; the sample's rate,
        // 16 777 x 1000 x 739 >> 8 = 48 430 480, x 990 000 >> 24 =
        // 2 857 814 B/s, is higher, so it is taken.
        assert_eq!(d.b.pacing_rate_bytes_per_sec(MSS), Some(2_857_814));
        // Below the target (ceil(289) + 6 -> 296) and before the full
        // pipe, cwnd grows by what was delivered: 10 + 2.
        assert_eq!(d.b.cwnd(), 12.0);
        // STARTUP's cwnd target is high_gain x BDP, quantised: 289 + 6 -> 296.
        assert_eq!(d.b.inflight(BW, 739), 296);
        // A lower sample does not lower the pacing rate before the full pipe.
        d.ack(Ack {
            sample: Some((50, MIN_RTT_US)),
            prior_lag: 1,
            ..Ack::default()
        });
        assert_eq!(d.b.pacing_rate_bytes_per_sec(MSS), Some(2_857_814));
    }

    #[test]
    fn pacing_only_rises_before_the_pipe_is_full() {
        let mut d = Drive::new();
        // An ACK without an RTT sample (no SRTT): the initial 28 578 488 B/s
        // (high_gain x 10 packets per nominal 1 ms) stays, since the
        // sample's 2 857 814 B/s is lower.
        d.ack(Ack {
            rtt_us: 0,
            ..Ack::default()
        });
        assert_eq!(d.b.pacing_rate_bytes_per_sec(MSS), Some(28_578_488));
        assert_eq!(d.b.max_bw(), BW);
        // Once the pipe is full it follows bw x gain down: PROBE_BW at
        // gain 1 (any phase but the first two).
        d.reach_probe_bw();
        d.phase(2);
        d.ack(Ack::default());
        assert_eq!(d.b.pacing_rate_bytes_per_sec(MSS), Some(989_987));
    }

    /// lib/win_minmax.c, by hand, window 10.
    #[test]
    fn max_filter_keeps_three_choices_and_expires_after_the_window() {
        let mut m = MinMax::default();
        assert_eq!(m.reset(1, 100), 100);
        // t 2: within the first quarter (dt 1 <= 10/4): nothing changes.
        assert_eq!(m.running_max(10, 2, 50), 100);
        assert_eq!(m.s, [(1, 100); 3]);
        // t 4: dt 3 > 2 with no 2nd choice yet: 2nd = 3rd = (4, 60).
        assert_eq!(m.running_max(10, 4, 60), 100);
        assert_eq!(m.s, [(1, 100), (4, 60), (4, 60)]);
        // t 7: dt 6 > 5 with no 3rd choice: 3rd = (7, 40).
        assert_eq!(m.running_max(10, 7, 40), 100);
        assert_eq!(m.s, [(1, 100), (4, 60), (7, 40)]);
        // t 11: dt 10 is not > 10: the max of round 1 still counts.
        assert_eq!(m.running_max(10, 11, 30), 100);
        // t 12: it expires; the 2nd choice (60, round 4) is the max.
        assert_eq!(m.running_max(10, 12, 30), 60);
        assert_eq!(m.s, [(4, 60), (7, 40), (12, 30)]);
        // A new max forgets the rest.
        assert_eq!(m.running_max(10, 13, 70), 70);
        assert_eq!(m.s, [(13, 70); 3]);
        // Nothing left in the window (t - 3rd's t > 10): reset to the sample.
        assert_eq!(m.running_max(10, 24, 5), 5);
        assert_eq!(m.s, [(24, 5); 3]);
    }

    /// The bw filter over 10 packet-timed rounds, in BBR: each ACK below
    /// starts a round (its packet was the newest sent).
    #[test]
    fn bw_is_the_max_over_ten_rounds_and_app_limited_samples_do_not_lower_it() {
        let mut d = Drive::new();
        // Round 1: 16 777.
        d.ack(Ack::default());
        assert_eq!((d.b.rtt_cnt(), d.b.max_bw()), (1, BW));
        // Rounds 2..=11, app-limited at half the rate: 8388 < 16 777, left out.
        for _ in 2..=11 {
            d.ack(Ack {
                sample: Some((50, MIN_RTT_US)),
                app_limited: true,
                ..Ack::default()
            });
        }
        assert_eq!((d.b.rtt_cnt(), d.b.max_bw()), (11, BW));
        // Round 12: round 1's max is 11 rounds old; the filter never took
        // the app-limited samples, so it restarts from this one: 25 x 2^24
        // / 100 000 = 4194.
        d.ack(Ack {
            sample: Some((25, MIN_RTT_US)),
            ..Ack::default()
        });
        assert_eq!((d.b.rtt_cnt(), d.b.max_bw()), (12, 4194));
        // An app-limited sample at least as high as the max does enter.
        d.ack(Ack {
            sample: Some((50, MIN_RTT_US)),
            app_limited: true,
            ..Ack::default()
        });
        assert_eq!(d.b.max_bw(), 8388);
        // Not a new round: an ACK for a packet sent before the round began.
        d.ack(Ack {
            prior_lag: 5,
            ..Ack::default()
        });
        assert_eq!(d.b.rtt_cnt(), 13);
    }

    #[test]
    fn full_bw_after_exactly_three_rounds_below_one_and_a_quarter() {
        let mut d = Drive::new();
        // Round 1 sets full_bw = 16 777; the threshold is 16 777 x 320 >> 8 = 20 971.
        d.ack(Ack {
            prior_in_flight: 400,
            ..Ack::default()
        });
        // Round 2: 20 971 x ... a sample of 125 packets is 20 971 >= 20 971:
        // growth of 25 % resets the count (full_bw = 20 971).
        d.ack(Ack {
            sample: Some((125, MIN_RTT_US)),
            prior_in_flight: 400,
            ..Ack::default()
        });
        // Rounds 3, 4: below 20 971 x 1.25 = 26 214: count 1, 2.
        for _ in 0..2 {
            d.ack(Ack {
                sample: Some((125, MIN_RTT_US)),
                prior_in_flight: 400,
                ..Ack::default()
            });
            assert!(!d.b.full_bw_reached());
        }
        // An app-limited round does not count.
        d.ack(Ack {
            sample: Some((125, MIN_RTT_US)),
            prior_in_flight: 400,
            app_limited: true,
            ..Ack::default()
        });
        assert!(!d.b.full_bw_reached());
        assert_eq!(d.b.mode(), Mode::Startup);
        // Round 6: the third: full pipe, DRAIN (399 in flight > BDP).
        d.ack(Ack {
            sample: Some((125, MIN_RTT_US)),
            prior_in_flight: 400,
            ..Ack::default()
        });
        assert!(d.b.full_bw_reached());
        assert_eq!(d.b.mode(), Mode::Drain);
        assert_eq!((d.b.pacing_gain(), d.b.cwnd_gain()), (88, 739));
        // ssthresh = bbr_inflight(max_bw, 1.0): bw 20 971 x 100 000 / 2^24
        // = 124.99 -> 125, + 3 x tso goal. The pacing rate then (STARTUP's,
        // 20 971 x 1000 x 739 >> 8 = 60 537 378, x 990 000 >> 24 =
        // 3 572 225 B/s) >> 10 = 3488 bytes = 3 packets: 125 + 9 = 134, even.
        assert_eq!(d.b.ssthresh(), 134.0);
    }

    #[test]
    fn drain_until_inflight_is_down_to_one_bdp_then_probe_bw() {
        let mut d = Drive::new();
        for _ in 0..4 {
            d.ack(Ack {
                prior_in_flight: 300,
                ..Ack::default()
            });
        }
        assert_eq!(d.b.mode(), Mode::Drain);
        // inflight(bw, 1.0) = 106 (module doc); after the ACK 108 - 1 = 107 remain.
        d.ack(Ack {
            prior_in_flight: 108,
            prior_lag: 1,
            ..Ack::default()
        });
        assert_eq!(d.b.mode(), Mode::Drain);
        // 107 - 1 = 106 <= 106: drained.
        d.ack(Ack {
            prior_in_flight: 107,
            prior_lag: 1,
            ..Ack::default()
        });
        assert_eq!(d.b.mode(), Mode::ProbeBw);
        // bbr_reset_probe_bw_mode: CYCLE_LEN - 1 - rand(7), then one step:
        // never phase 1 (the 0.75 one).
        assert_ne!(d.b.cycle_idx(), 1);
        assert_eq!(d.b.cwnd_gain(), 512);
        assert_eq!(
            d.b.pacing_gain(),
            PACING_GAIN_CYCLE[d.b.cycle_idx() as usize]
        );
    }

    /// `bbr_update_min_rtt` (Linux >= 5.10, commit 1b9e2a8c99a5): samples
    /// equal to min_rtt do not restart its 10 s window, so PROBE_RTT comes
    /// 10 s (10 000 jiffies) after the sample that set it: not at jiffy
    /// 11 001 (`after` is strict), at 11 002. A strictly lower sample does
    /// restart it.
    #[test]
    fn probe_rtt_ten_seconds_after_the_minimum_even_with_equal_samples() {
        let run_to = |d: &mut Drive, until_us: u64, rtt_us: u64| {
            while d.now_us < until_us {
                d.ack(Ack {
                    rtt_us,
                    ..Ack::default()
                });
            }
        };
        let mut d = Drive::new();
        // The first ACK (at 1.001 s, jiffy 1001) set min_rtt and its stamp.
        d.reach_probe_bw();
        assert_eq!(d.b.min_rtt_us(), MIN_RTT_US as u32);
        run_to(&mut d, 11_001_000, MIN_RTT_US);
        assert_eq!(d.b.mode(), Mode::ProbeBw, "at {} us", d.now_us);
        run_to(&mut d, 11_002_000, MIN_RTT_US);
        assert_eq!(d.b.mode(), Mode::ProbeRtt, "at {} us", d.now_us);

        let mut d = Drive::new();
        d.reach_probe_bw();
        run_to(&mut d, 5_000_000, MIN_RTT_US);
        // One microsecond less at 5.001 s: the window restarts there.
        run_to(&mut d, 5_001_000, MIN_RTT_US - 1);
        assert_eq!(d.b.min_rtt_us(), MIN_RTT_US as u32 - 1);
        run_to(&mut d, 15_001_000, MIN_RTT_US);
        assert_eq!(d.b.mode(), Mode::ProbeBw, "at {} us", d.now_us);
        run_to(&mut d, 15_002_000, MIN_RTT_US);
        assert_eq!(d.b.mode(), Mode::ProbeRtt, "at {} us", d.now_us);
    }

    #[test]
    fn gain_cycle_order_and_phase_advance_rules() {
        let mut d = Drive::new();
        d.reach_probe_bw();
        d.phase(0);
        assert_eq!(d.b.pacing_gain(), 320);
        // 1.25: exactly min_rtt (100 000 µs) is not enough, however full.
        d.ack(Ack {
            dt_us: 100_000,
            prior_in_flight: 500,
            ..Ack::default()
        });
        assert_eq!(d.b.cycle_idx(), 0);
        // Past min_rtt, but inflight at EDT 131 + 2 (tso goal) = 133 < 134.
        d.ack(Ack {
            dt_us: 1,
            prior_in_flight: 131,
            ..Ack::default()
        });
        assert_eq!(d.b.cycle_idx(), 0);
        // 132 + 2 = 134 >= inflight(bw, 1.25) = 134: next phase.
        d.ack(Ack {
            dt_us: 1,
            prior_in_flight: 132,
            ..Ack::default()
        });
        assert_eq!((d.b.cycle_idx(), d.b.pacing_gain()), (1, 192));
        // 0.75: ends early once inflight <= inflight(bw, 1.0) = 106.
        d.ack(Ack {
            dt_us: 1,
            prior_in_flight: 107,
            ..Ack::default()
        });
        assert_eq!(d.b.cycle_idx(), 1);
        d.ack(Ack {
            dt_us: 1,
            prior_in_flight: 106,
            ..Ack::default()
        });
        assert_eq!((d.b.cycle_idx(), d.b.pacing_gain()), (2, 256));
        // 1.0 x 6: each lasts more than min_rtt, whatever the flight.
        for idx in 3..8 {
            d.ack(Ack {
                dt_us: 100_000,
                prior_in_flight: 1,
                ..Ack::default()
            });
            assert_eq!(d.b.cycle_idx(), idx - 1);
            d.ack(Ack {
                dt_us: 1,
                ..Ack::default()
            });
            assert_eq!((d.b.cycle_idx(), d.b.pacing_gain()), (idx, 256));
        }
        // ... and wraps to 1.25.
        d.ack(Ack {
            dt_us: 100_001,
            ..Ack::default()
        });
        assert_eq!((d.b.cycle_idx(), d.b.pacing_gain()), (0, 320));
        // 1.25 ends at a loss once min_rtt has passed, below 1.25 BDP too.
        d.ack(Ack {
            dt_us: 100_001,
            prior_in_flight: 50,
            losses: 1,
            ..Ack::default()
        });
        assert_eq!(d.b.cycle_idx(), 1);
    }

    #[test]
    fn probe_rtt_after_ten_seconds_at_four_packets_for_200_ms_and_a_round() {
        let mut d = Drive::new();
        d.reach_probe_bw();
        d.b.snd_cwnd = 150;
        // min_rtt was taken at 1.001 s (the 1st ACK, jiffy 1001; the equal
        // samples of the next three leave its stamp). A larger RTT leaves it
        // until the filter expires: at jiffy 11 001 it is not after 1001 +
        // 10 000 yet...
        assert_eq!(d.b.min_rtt_stamp, 1001);
        d.ack(Ack {
            dt_us: 9_997_000,
            rtt_us: 120_000,
            acked: 0,
            sample: None,
            ..Ack::default()
        });
        assert_eq!(d.b.mode(), Mode::ProbeBw);
        assert_eq!(d.b.min_rtt_us(), 100_000);
        // ... at 11 002 it is.
        d.ack(Ack {
            dt_us: 1_000,
            rtt_us: 120_000,
            acked: 1,
            prior_in_flight: 150,
            prior_lag: 1,
            ..Ack::default()
        });
        assert_eq!(d.b.mode(), Mode::ProbeRtt);
        // The expired filter took the sample; cwnd at 4; the 150 saved.
        assert_eq!(d.b.min_rtt_us(), 120_000);
        assert_eq!((d.b.cwnd(), d.b.prior_cwnd()), (4.0, 150));
        assert_eq!((d.b.pacing_gain(), d.b.cwnd_gain()), (256, 256));
        // Samples are app-limited from here: delivered + in flight (150 - 1).
        let delivered = d.delivered as u32;
        assert_eq!(d.b.app_limited_until(), Some(u64::from(delivered + 149)));
        // 6 - 1 = 5 in flight: above 4, the 200 ms have not begun.
        d.ack(Ack {
            dt_us: 10_000,
            prior_in_flight: 6,
            prior_lag: 10,
            ..Ack::default()
        });
        assert_eq!(d.b.probe_rtt_done_stamp, 0);
        // Flight down to 4 (5 - 1) at jiffy t0: the 200 ms start.
        d.ack(Ack {
            dt_us: 50_000,
            prior_in_flight: 5,
            prior_lag: 10,
            ..Ack::default()
        });
        let t0 = d.b.probe_rtt_done_stamp - 200;
        assert_eq!(t0, d.b.jiffies);
        // A round later but at exactly 200 ms: not after it.
        d.ack(Ack {
            dt_us: 200_000,
            prior_in_flight: 4,
            ..Ack::default()
        });
        assert_eq!(d.b.mode(), Mode::ProbeRtt);
        assert_eq!(d.b.cwnd(), 4.0);
        // 1 ms later, but the ACK's packet was sent before the round began.
        d.ack(Ack {
            dt_us: 1_000,
            prior_in_flight: 4,
            prior_lag: 3,
            ..Ack::default()
        });
        // The round was done on the previous ACK: leave now, cwnd restored
        // to 150, then + 1 delivered (below the target 2 BDP = 206).
        assert_eq!(d.b.mode(), Mode::ProbeBw);
        assert_eq!(d.b.cwnd(), 151.0);
        assert_eq!(d.b.min_rtt_stamp, d.b.jiffies);
        // Linux marks app-limited before its check: the exiting ACK still
        // marks (delivered + 4 - 1); the next does not.
        assert_eq!(d.b.app_limited_until(), Some(d.delivered + 3));
        d.ack(Ack::default());
        assert_eq!(d.b.app_limited_until(), None);
    }

    #[test]
    fn probe_rtt_waits_for_a_round_after_the_200_ms() {
        let mut d = Drive::new();
        d.reach_probe_bw();
        d.b.snd_cwnd = 150;
        d.ack(Ack {
            dt_us: 10_001_000,
            rtt_us: 120_000,
            prior_in_flight: 4,
            prior_lag: 1,
            ..Ack::default()
        });
        assert_eq!(d.b.mode(), Mode::ProbeRtt);
        let done = d.b.probe_rtt_done_stamp;
        assert_eq!(done, d.b.jiffies + 200);
        // 300 ms later, but no ACK has ended a round since: stay.
        d.ack(Ack {
            dt_us: 300_000,
            prior_in_flight: 4,
            prior_lag: 2,
            ..Ack::default()
        });
        assert_eq!((d.b.mode(), d.b.cwnd()), (Mode::ProbeRtt, 4.0));
        d.ack(Ack {
            dt_us: 1_000,
            prior_in_flight: 4,
            ..Ack::default()
        });
        assert_eq!((d.b.mode(), d.b.cwnd()), (Mode::ProbeBw, 151.0));
    }

    #[test]
    fn packet_conservation_in_the_first_round_of_recovery() {
        let mut d = Drive::new();
        d.reach_probe_bw();
        d.b.snd_cwnd = 200;
        d.b.on_congestion_event(&LossEvent::default());
        assert_eq!((d.b.cwnd(), d.b.prior_cwnd()), (200.0, 200));
        // First ACK in recovery: 1 lost, 1 delivered, 180 in flight before:
        // cwnd = 200 - 1, then in flight after (178) + acked (1) = 179.
        d.ack(Ack {
            prior_in_flight: 180,
            losses: 1,
            prior_lag: 1,
            ..Ack::default()
        });
        assert!(d.b.packet_conservation());
        assert_eq!(d.b.cwnd(), 179.0);
        // Same round: max(cwnd, in flight + acked) = max(179, 175 + 3).
        d.ack(Ack {
            acked: 3,
            prior_in_flight: 178,
            prior_lag: 2,
            ..Ack::default()
        });
        assert_eq!(d.b.cwnd(), 179.0);
        d.ack(Ack {
            acked: 3,
            prior_in_flight: 182,
            prior_lag: 2,
            ..Ack::default()
        });
        assert_eq!(d.b.cwnd(), 182.0);
        // The round ends: conservation off, + acked up to the target 206.
        d.ack(Ack {
            acked: 2,
            prior_in_flight: 180,
            ..Ack::default()
        });
        assert!(!d.b.packet_conservation());
        assert_eq!(d.b.cwnd(), 184.0);
        // Back to Open: the saved 200, + 1, at most the target 206.
        d.b.on_recovery_exit(0);
        d.ack(Ack {
            prior_in_flight: 180,
            ..Ack::default()
        });
        assert_eq!(d.b.cwnd(), 201.0);
    }

    #[test]
    fn rto_sets_cwnd_to_in_flight_plus_one_and_restores_after() {
        let mut d = Drive::new();
        d.reach_probe_bw();
        d.b.snd_cwnd = 150;
        d.b.on_rto(&RtoEvent {
            in_flight_pkts: 3,
            ..RtoEvent::first(2_000_000_000)
        });
        assert_eq!((d.b.cwnd(), d.b.prior_cwnd()), (4.0, 150));
        d.b.on_timeout_recovery_exit(0);
        d.ack(Ack {
            prior_in_flight: 3,
            ..Ack::default()
        });
        assert_eq!(d.b.cwnd(), 151.0);
    }

    /// An lt sampling interval of 4 rounds of 100 ms (one ACK each): 25
    /// packets in each of the first three, `last` in the fourth, whose ACK
    /// carries the interval's `lost` packets.
    fn policed_interval(d: &mut Drive, last: u32, lost: u32) {
        for r in 0..4 {
            d.ack(Ack {
                dt_us: 100_000,
                acked: if r == 3 { last } else { 25 },
                sample: Some((25, MIN_RTT_US)),
                losses: if r == 3 { lost } else { 0 },
                ..Ack::default()
            });
        }
    }

    #[test]
    fn lt_bw_detects_a_policer_and_expires_after_48_rounds() {
        let mut d = Drive::new();
        d.reach_probe_bw();
        // The first loss starts sampling (interval start: delivered 400).
        d.ack(Ack {
            dt_us: 100_000,
            acked: 0,
            losses: 1,
            ..Ack::default()
        });
        assert!(d.b.lt_is_sampling);
        // Interval 1: 4 rounds, 100 delivered, 20 lost: 20 x 256 = 5120 >=
        // 50 x 100: lossy. Its rate: 100 x 2^24 / 400 000 µs = 4194.
        policed_interval(&mut d, 25, 20);
        assert_eq!((d.b.lt_bw(), d.b.lt_use_bw()), (4194, false));
        // Interval 2: 120 packets, 24 lost (24 x 256 = 6144 >= 50 x 120),
        // at 120 x 2^24 / 400 000 = 5033: |5033 - 4194| = 839, 839 x 256 =
        // 214 784 > 4194 x 32 = 134 208, and 839 units are 839 x 1000 x
        // 990 000 >> 24 = 49 509 B/s > 500 (4 kbit/s): not consistent;
        // 5033 is the new reference.
        policed_interval(&mut d, 45, 24);
        assert_eq!((d.b.lt_bw(), d.b.lt_use_bw()), (5033, false));
        // Interval 3: 100 packets, 4194 again: 839 apart, not consistent.
        policed_interval(&mut d, 25, 20);
        assert_eq!((d.b.lt_bw(), d.b.lt_use_bw()), (4194, false));
        // Interval 4: 110 packets, 22 lost (5632 >= 5500), at 4613: 419
        // apart, 419 x 256 = 107 264 <= 134 208: within 1/8 (though 24 724
        // B/s apart, so only the ratio says so): policed, at
        // (4613 + 4194) >> 1 = 4403, gain 1.
        policed_interval(&mut d, 35, 22);
        assert!(d.b.lt_use_bw());
        assert_eq!(
            (d.b.lt_bw(), d.b.bw(), d.b.pacing_gain()),
            (4403, 4403, 256)
        );
        // bbr_bw is lt_bw: 4403 x 1000 x 256 >> 8 x 990 000 >> 24 = 259 814 B/s.
        assert_eq!(d.b.pacing_rate_bytes_per_sec(MSS), Some(259_814));
        // Used for 48 rounds in PROBE_BW: the 47th still, the 48th not.
        for _ in 0..47 {
            d.ack(Ack {
                dt_us: 100_000,
                ..Ack::default()
            });
        }
        assert!(d.b.lt_use_bw());
        d.ack(Ack {
            dt_us: 100_000,
            ..Ack::default()
        });
        assert!(!d.b.lt_use_bw());
        assert_eq!((d.b.lt_bw(), d.b.mode()), (0, Mode::ProbeBw));
    }

    #[test]
    fn lt_bw_needs_twenty_percent_loss() {
        let mut d = Drive::new();
        d.reach_probe_bw();
        d.ack(Ack {
            dt_us: 100_000,
            acked: 0,
            losses: 1,
            ..Ack::default()
        });
        // 19 of 100: 19 x 256 = 4864 < 5000: not lossy; the interval goes
        // on and is dropped after 16 rounds.
        policed_interval(&mut d, 25, 19);
        policed_interval(&mut d, 25, 19);
        assert_eq!((d.b.lt_bw(), d.b.lt_use_bw()), (0, false));
        let mut off = Drive::with(BbrConfig {
            lt_bw: false,
            ..BbrConfig::default()
        });
        off.reach_probe_bw();
        off.ack(Ack {
            dt_us: 100_000,
            acked: 0,
            losses: 1,
            ..Ack::default()
        });
        policed_interval(&mut off, 25, 20);
        policed_interval(&mut off, 25, 20);
        assert!(!off.b.lt_use_bw());
    }

    #[test]
    fn the_probe_bw_phase_is_drawn_from_the_seed() {
        let phases = |seed: u64| -> Vec<u32> {
            (0..200)
                .map(|i| {
                    let mut b = Bbr::new(BbrConfig::default(), InitialWindow::default());
                    b.seed(seed.wrapping_mul(1000) + i);
                    b.reset_probe_bw_mode();
                    b.cycle_idx
                })
                .collect()
        };
        let a = phases(1);
        assert_eq!(a, phases(1));
        assert_ne!(a, phases(2));
        // Every phase but 1 occurs, uniformly enough (7 x ~28).
        for idx in [0, 2, 3, 4, 5, 6, 7] {
            let n = a.iter().filter(|&&p| p == idx).count();
            assert!((10..=50).contains(&n), "phase {idx}: {n} of 200");
        }
        assert!(!a.contains(&1));
    }

    #[test]
    fn tx_start_after_idle_paces_at_the_estimate_in_probe_bw() {
        let mut d = Drive::new();
        d.reach_probe_bw();
        d.phase(0);
        d.b.set_pacing_rate(BW, 320);
        assert_eq!(d.b.pacing_rate_bytes_per_sec(MSS), Some(1_237_484));
        d.b.on_tx_start(5_000_000_000, false);
        assert_eq!(d.b.pacing_rate_bytes_per_sec(MSS), Some(1_237_484));
        d.b.on_tx_start(5_000_000_000, true);
        // 16 777 x 1000 x 256 >> 8 x 990 000 >> 24.
        assert_eq!(d.b.pacing_rate_bytes_per_sec(MSS), Some(989_987));
        assert!(d.b.idle_restart);
        // While restarting, an expired min_rtt filter does not start
        // PROBE_RTT; an ACK without delivery keeps the restart on.
        d.ack(Ack {
            dt_us: 10_001_000,
            acked: 0,
            sample: None,
            rtt_us: 120_000,
            ..Ack::default()
        });
        assert_eq!(d.b.mode(), Mode::ProbeBw);
        assert!(d.b.idle_restart);
        // A rejected sample (interval 0) that delivered packets ends it
        // (rs->delivered > 0), as a valid one would.
        d.ack(Ack {
            sample: Some((5, 0)),
            ..Ack::default()
        });
        assert!(!d.b.idle_restart);
    }

    /// Arbitrary samples, counters and events (the fuzzers' inputs): no
    /// arithmetic overflow (debug builds check) and cwnd >= 1 throughout.
    #[test]
    fn arbitrary_inputs_keep_cwnd_positive_without_overflow() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(31);
        let mut event = Xoshiro256PlusPlus::seed_from_u64(32);
        // A `bits`-wide value: 0, 1, the largest, or any, equally often.
        let mut any = |bits: u32| {
            let r = rng.next_u64();
            match r & 3 {
                0 => 0,
                1 => 1,
                2 => u64::MAX >> (64 - bits),
                _ => r >> (64 - bits),
            }
        };
        for case in 0..50 {
            let mut b = Bbr::new(
                BbrConfig::default(),
                InitialWindow {
                    cwnd_pkts: 1.0 + any(20) as f64,
                    ssthresh_pkts: f64::INFINITY,
                },
            );
            b.seed(case);
            let mut now = any(40);
            for _ in 0..2000 {
                now += any(30);
                match event.next_u32() % 8 {
                    0 => b.on_congestion_event(&LossEvent {
                        ecn: any(1) == 1,
                        ..LossEvent::default()
                    }),
                    1 => b.on_rto(&RtoEvent {
                        in_flight_pkts: any(32) as u32,
                        reduce: any(1) == 1,
                        ..RtoEvent::first(now)
                    }),
                    2 => b.on_recovery_exit(now),
                    3 => b.on_tx_start(now, any(1) == 1),
                    _ => {
                        let bits = [8, 20, 32][any(2).min(2) as usize];
                        b.on_ack(&AckEvent {
                            now_ns: now,
                            rtt: crate::RttStats {
                                smoothed_ns: any(40),
                                ..Default::default()
                            },
                            rate: RateSample {
                                valid: any(1) == 1,
                                delivered_pkts: any(bits),
                                interval_ns: any(bits + 10),
                                prior_delivered_pkts: any(bits),
                                rtt_ns: any(bits + 10),
                                is_app_limited: any(1) == 1,
                                losses_pkts: any(bits) as u32,
                                acked_sacked_pkts: any(bits) as u32,
                                prior_in_flight_pkts: any(bits) as u32,
                                delivered_total_pkts: any(bits + 8),
                                lost_total_pkts: any(bits),
                                delivered_time_ns: now,
                            },
                            mss_bytes: [0, 536, 1448, 9000][any(2) as usize],
                            ..AckEvent::default()
                        });
                    }
                }
                assert!(b.cwnd() >= 1.0, "case {case}: cwnd {}", b.cwnd());
                let _ = b.pacing_rate_bytes_per_sec(1448);
            }
        }
    }
}
