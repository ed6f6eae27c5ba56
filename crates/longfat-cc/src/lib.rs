//! Congestion controllers for long fat networks.
//!
//! One trait, [`CongestionControl`], answers the transport's events; each
//! algorithm is its own type in its own file. The transport (a simulator's
//! TCP sender, or a kernel shim) owns RTT estimation, the SACK scoreboard,
//! loss detection and timers, and tells the controller what happened.
//! Controllers never read a clock or a global: `now_ns` is passed in.
//!
//! Windows are in packets (fractional values allowed); times are integer
//! nanoseconds (`*_ns`).

pub mod bbr;
pub mod bic;
pub mod cubic;
pub mod ehstcp;
pub mod error;
pub mod fast;
pub mod helpers;
pub mod highspeed;
pub mod htcp;
pub mod ltcp;
pub mod params;
pub mod plt;
pub mod registry;
pub mod reno;
pub mod scalable;
pub mod tcpgt;
pub mod vegas;

pub use bbr::Bbr;
pub use bic::Bic;
pub use cubic::Cubic;
pub use ehstcp::Ehstcp;
pub use error::{CcError, CcParams};
pub use fast::Fast;
pub use highspeed::HighSpeed;
pub use htcp::Htcp;
pub use ltcp::Ltcp;
pub use params::{Algorithm, Param, Range, Rules};
pub use registry::{algorithm, build, ALGORITHMS, NAMES};
pub use reno::Reno;
pub use scalable::Scalable;
pub use tcpgt::Tcpgt;
pub use vegas::Vegas;

/// The catalogue: every algorithm, the window controllers first, then PLT
/// (a transport whose HCM runs one of them), in the order the CLI lists
/// them. Adding an algorithm is its file, its `pub mod` above and its
/// `ALGORITHM` here (docs/architecture.md).
pub const CATALOGUE: &[Algorithm] = &[
    reno::ALGORITHM,
    reno::NEWRENO,
    ltcp::ALGORITHM,
    htcp::ALGORITHM,
    ehstcp::ALGORITHM,
    tcpgt::ALGORITHM,
    highspeed::ALGORITHM,
    scalable::ALGORITHM,
    bic::ALGORITHM,
    cubic::ALGORITHM,
    vegas::ALGORITHM,
    fast::ALGORITHM,
    bbr::ALGORITHM,
    plt::ALGORITHM,
];

/// What the transport's RTT estimator knows when it calls the controller.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RttStats {
    /// The newest sample (0 before the first sample).
    pub latest_ns: u64,
    /// The smallest sample seen on the connection (0 before the first sample).
    pub min_ns: u64,
    /// RFC 6298 SRTT (0 before the first sample).
    pub smoothed_ns: u64,
}

/// Timestamp facts carried by one ACK (RFC 7323 timestamps plus a per-packet
/// tag the controller attached at send time and the receiver echoes).
///
/// The two clocks differ by an unknown offset: `receiver_ts_ns - echoed_sender_ts_ns`
/// is the forward one-way delay plus that offset, and
/// `now_ns - receiver_ts_ns` the backward one-way delay minus it. Algorithms
/// that use one-way delays (eHSTCP) subtract their running minimum, which
/// cancels the offset; algorithms that use epoch durations (TCP-GT) take
/// differences of the same clock, which cancels it too.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckTimestamps {
    /// TSecr: the sender's clock when it sent the data packet that triggered this ACK.
    pub echoed_sender_ts_ns: u64,
    /// TSval: the receiver's clock (with its host offset) when it sent this ACK.
    pub receiver_ts_ns: u64,
    /// The tag returned by [`CongestionControl::on_send`] for the triggering packet.
    pub echoed_tag: u32,
}

/// A delivery-rate sample (draft-cheng-iccrg-delivery-rate-estimation;
/// Linux `struct rate_sample`, net/ipv4/tcp_rate.c), taken by the transport
/// on each ACK, with the connection's delivery counters it was taken from.
/// All zero (`valid` false) from a transport that does not estimate rates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RateSample {
    /// A sample was taken on this ACK (Linux: `rs->delivered >= 0` and
    /// `rs->interval_us > 0`, i.e. `tcp_rate_gen` did not return early).
    pub valid: bool,
    /// Packets delivered over the sample's interval (`rs->delivered`).
    pub delivered_pkts: u64,
    /// The interval: the longer of the send and the ACK phases
    /// (`rs->interval_us`), in ns.
    pub interval_ns: u64,
    /// The connection's delivered count when the newest packet this ACK
    /// delivered was sent (`rs->prior_delivered`): BBR's round counting.
    pub prior_delivered_pkts: u64,
    /// The RTT of the most recently sent packet this ACK delivered
    /// (`rs->rtt_us`; 0 when none, e.g. only retransmissions).
    pub rtt_ns: u64,
    /// The sample was taken while the connection was application-limited
    /// (`rs->is_app_limited`): it may underestimate the path's rate.
    pub is_app_limited: bool,
    /// Packets newly marked lost while processing this ACK (`rs->losses`).
    pub losses_pkts: u32,
    /// Packets newly delivered by this ACK, SACKed or cumulatively
    /// (`rs->acked_sacked`).
    pub acked_sacked_pkts: u32,
    /// Packets in flight before this ACK (`rs->prior_in_flight`).
    pub prior_in_flight_pkts: u32,
    /// The connection's totals after this ACK: packets delivered
    /// (`tp->delivered`), packets marked lost (`tp->lost`), and when the
    /// delivered count last moved (`tp->delivered_mstamp`, ns).
    pub delivered_total_pkts: u64,
    pub lost_total_pkts: u64,
    pub delivered_time_ns: u64,
}

/// One ACK arrival, as the transport saw it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AckEvent {
    pub now_ns: u64,
    /// Packets newly delivered by this ACK: newly SACKed plus newly
    /// cumulatively acknowledged ones that had not been SACKed before.
    pub delivered_pkts: u32,
    /// Packets the window may grow by on this ACK: the transport's verdict.
    /// 0 during recovery, on an ACK that does not advance the cumulative
    /// point (RFC 5681 §3.1; Linux `tcp_may_raise_cwnd`), and, under cwnd
    /// validation, while the flow is not cwnd-limited (RFC 7661; Linux
    /// `tcp_is_cwnd_limited`). Otherwise the delivered packets (Linux
    /// `acked_sacked`) or 1 per ACK (ns-2 `opencwnd()`). Algorithms grow by
    /// this; they measure rates with `delivered_pkts`.
    pub growth_pkts: u32,
    pub delivered_bytes: u64,
    /// How far the cumulative ACK point moved, in packets.
    pub cum_acked_pkts: u32,
    /// Packets in flight (RFC 6675 pipe) before this ACK was processed.
    pub in_flight_pkts: u32,
    /// True while the transport is in fast recovery: the window is then
    /// governed by the recovery algorithm, not by growth. (After a timeout
    /// the window slow-starts, so RTO recovery does not set this.)
    pub in_recovery: bool,
    pub rtt: RttStats,
    /// True when this ACK produced a new RTT sample (`rtt.latest_ns` is fresh).
    pub rtt_updated: bool,
    /// Present when the connection negotiated timestamps.
    pub ts: Option<AckTimestamps>,
    /// The delivery-rate sample this ACK produced.
    pub rate: RateSample,
    /// The sender's maximum segment size (payload bytes per packet).
    pub mss_bytes: u32,
    /// The ACK carried ECE (RFC 3168 §6.1.2): the receiver saw a CE mark.
    pub ece: bool,
}

/// A loss episode starting (fast retransmit). Called once per episode.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LossEvent {
    pub now_ns: u64,
    /// Packets in flight when the loss was detected.
    pub in_flight_pkts: u32,
    /// Packets the scoreboard marks lost at this moment.
    pub lost_pkts: u32,
    pub rtt: RttStats,
    /// The transport profile's cap on the window a reduction starts from:
    /// ns-2 reduces `window() = min(cwnd_, wnd_)` (tcp.cc `slowdown()`), so a
    /// receiver-window-limited flow's inflated cwnd is not what is halved.
    /// None: the window itself (Linux).
    pub window_cap_pkts: Option<f64>,
    /// The profile asks for a plain halving instead of the algorithm's own
    /// decrease: ns-2's `slowdown()` halves on a connection's first
    /// reduction, on a reduction in slow start and after a timeout. Only the
    /// algorithms ns-2 implements through `decrease_num_`/`decrease_param()`
    /// inside `slowdown()` (Reno, HighSpeed, eHSTCP) follow it.
    pub halve: bool,
    /// The episode is an ECN congestion response (RFC 3168 §6.1.2: an ACK
    /// with ECE, at most once per window of data), not a loss. RFC 8511
    /// (ABE) lets a controller reduce less for it.
    pub ecn: bool,
    /// With `ecn`: the connection runs RFC 8511's Alternative Backoff with
    /// ECN (`tcp.abe`), so a controller that defines a beta_ecn (Reno,
    /// CUBIC) multiplies its window by that instead of its loss factor.
    pub abe: bool,
}

impl LossEvent {
    /// RFC 8511 §3 applies: an ECN episode on a connection running ABE.
    pub fn alternative_backoff(&self) -> bool {
        self.ecn && self.abe
    }

    /// Lowers `cwnd` to the profile's cap before a reduction ([`Self::window_cap_pkts`]).
    pub fn cap(&self, cwnd: &mut f64) {
        if let Some(cap) = self.window_cap_pkts {
            *cwnd = cwnd.min(cap.max(1.0));
        }
    }
}

/// The retransmission timer fired.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RtoEvent {
    pub now_ns: u64,
    /// Consecutive expiries without progress, 1 for the first.
    pub backoff: u32,
    /// The profile's verdict on whether this expiry sets a new ssthresh.
    /// Linux (`tcp_enter_loss`) does only when the connection was not already
    /// in fast recovery or in a timeout recovery with no progress since, so an
    /// RTO during recovery keeps the recovery's ssthresh; ns-2 (`timeout()`)
    /// cuts on every expiry, also during fast recovery.
    pub reduce: bool,
    /// As [`LossEvent::window_cap_pkts`].
    pub window_cap_pkts: Option<f64>,
    /// As [`LossEvent::halve`] (ns-2 halves after every timeout).
    pub halve: bool,
    pub rtt: RttStats,
    /// Packets still in flight once the timeout has marked its losses; the
    /// window restarts at this plus one. Linux spares packets sent less than
    /// RACK's RTT ago (`tcp_timeout_mark_lost`) and sets snd_cwnd =
    /// `tcp_packets_in_flight` + 1 (`tcp_enter_loss`); RFC 5681 §3.1 (LW =
    /// 1 packet) and ns-2 (`timeout()`) mark everything lost: 0.
    pub in_flight_pkts: u32,
}

impl RtoEvent {
    /// An expiry that reduces (the first of a series, outside recovery).
    pub fn first(now_ns: u64) -> Self {
        Self {
            now_ns,
            backoff: 1,
            reduce: true,
            ..Default::default()
        }
    }
    /// A backed-off expiry (`backoff` > 1) that keeps ssthresh.
    pub fn repeat(now_ns: u64, backoff: u32) -> Self {
        Self {
            now_ns,
            backoff,
            reduce: false,
            ..Default::default()
        }
    }
    /// Lowers `cwnd` to the profile's cap before a reduction.
    pub fn cap(&self, cwnd: &mut f64) {
        if let Some(cap) = self.window_cap_pkts {
            *cwnd = cwnd.min(cap.max(1.0));
        }
    }
}

/// The interface every congestion-control algorithm implements.
///
/// Call order for one ACK: `on_ack` (after the scoreboard is updated); if the
/// ACK revealed a new loss episode, `on_congestion_event` before it; if it ended
/// a fast recovery, `on_recovery_exit` after it, and if it ended a timeout
/// recovery, `on_timeout_recovery_exit` after it.
pub trait CongestionControl: Send + CcClone {
    /// The algorithm's registry name (`"reno"`).
    fn name(&self) -> &'static str;

    /// Congestion window in packets. The transport sends while
    /// `pipe < floor(cwnd)` (at least one packet).
    fn cwnd(&self) -> f64;

    /// Slow-start threshold in packets (`f64::INFINITY` before the first loss).
    fn ssthresh(&self) -> f64;

    /// A data packet is leaving. The returned tag travels in the packet and
    /// comes back in [`AckTimestamps::echoed_tag`] (TCP-GT's epoch number).
    fn on_send(&mut self, _now_ns: u64, _seq: u64, _bytes: u32, _retransmit: bool) -> u32 {
        0
    }

    /// An ACK arrived.
    fn on_ack(&mut self, ack: &AckEvent);

    /// Loss detected by fast retransmit: set ssthresh and cwnd for recovery.
    fn on_congestion_event(&mut self, loss: &LossEvent);

    /// The cumulative ACK passed the recovery point of a fast recovery.
    fn on_recovery_exit(&mut self, _now_ns: u64) {}

    /// The cumulative ACK passed everything outstanding at the last
    /// retransmission timeout: Linux leaves TCP_CA_Loss for Open
    /// (`tcp_process_loss` -> `tcp_try_undo_recovery` ->
    /// `tcp_set_ca_state(sk, TCP_CA_Open)` once `snd_una` reaches
    /// `high_seq`). Unlike the end of a fast recovery
    /// (`tcp_end_cwnd_reduction`, cwnd = ssthresh) Linux leaves the window
    /// alone here, so by default nothing happens; a controller that acts on
    /// the return to Open (H-TCP's `htcp_state`) overrides it. Only the
    /// `linux` profile reports it (docs/algorithms.md, transport profiles).
    fn on_timeout_recovery_exit(&mut self, _now_ns: u64) {}

    /// The retransmission timer fired (called on every expiry, including
    /// backed-off ones). Every expiry restarts the window at
    /// `rto.in_flight_pkts + 1` packets (one when everything was marked
    /// lost); ssthresh is recomputed only when `rto.reduce` says so.
    fn on_rto(&mut self, rto: &RtoEvent);

    /// The rate the transport paces this flow's data at, in bytes per
    /// second of payload (Linux `sk_pacing_rate`, which a module such as
    /// BBR sets), given the sender's MSS. None: the controller sets no rate,
    /// and the transport paces by its own rule if its profile paces at all.
    fn pacing_rate_bytes_per_sec(&self, _mss_bytes: u32) -> Option<u64> {
        None
    }

    /// The controller sets the window itself in fast recovery and after a
    /// timeout, from every ACK (Linux: a module with `cong_control`, such
    /// as BBR, in place of `cong_avoid`; `tcp_cong_control` then runs no
    /// PRR). False: the transport's recovery governs the window there.
    fn controls_recovery_window(&self) -> bool {
        false
    }

    /// The controller reads `AckEvent.rate`: the transport then keeps the
    /// per-packet delivery state of tcp_rate.c (`tcp_rate_skb_sent`) and
    /// takes a sample on every ACK. False (the default): `rate` stays all
    /// zero and the transport keeps none of that state, so a controller
    /// that does not read it pays nothing for it. Asked once, when the
    /// connection is built.
    fn wants_rate_samples(&self) -> bool {
        false
    }

    /// The connection's seed for the controller's own randomness (BBR's
    /// random PROBE_BW phase, Linux `get_random_u32_below`), called once by
    /// the transport when the connection is built, from the run's seed, so
    /// that a run stays a function of its scenario. Controllers never read
    /// a global source.
    fn seed(&mut self, _seed: u64) {}

    /// The transport paces this flow (`tcp.pacing`, or a rate the
    /// controller sets): Linux's `sk->sk_pacing_status` is not
    /// `SK_PACING_NONE`. Called once, when the connection is built, and
    /// only for a paced flow. CUBIC's HyStart then keeps its ACK-train
    /// threshold whole (tcp_cubic.c `hystart_update` halves it only
    /// unpaced); the default ignores it.
    fn set_paced(&mut self, _paced: bool) {}

    /// New data is sent with nothing in flight (Linux `tcp_event_data_sent`
    /// -> `tcp_ca_event(CA_EVENT_TX_START)`); `app_limited`: the
    /// connection's rate samples are app-limited then (`tp->app_limited`).
    fn on_tx_start(&mut self, _now_ns: u64, _app_limited: bool) {}

    /// Asked after `on_ack`: mark the connection application-limited until
    /// its delivered count passes the returned value (Linux: BBR writes
    /// `tp->app_limited` in PROBE_RTT so that its low-rate samples are
    /// app-limited). None: no mark.
    fn app_limited_until(&self) -> Option<u64> {
        None
    }

    /// The concrete controller, read-only, for a test or a diagnostic that
    /// knows its type and downcasts it (the whole-run BBR tests read its
    /// mode and round count; the `bbr_trace` example, which the ns-3
    /// validation script runs, its bandwidth filter and min_rtt). None (the
    /// default): the controller offers nothing; nothing in a run calls this.
    fn inspect(&self) -> Option<&dyn std::any::Any> {
        None
    }
}

/// A copy of a controller's whole state, which the transport keeps at a
/// reduction so that it can undo the reduction if it proves spurious (Linux
/// `tcp_undo_cwnd_reduction` restores `prior_cwnd`/`prior_ssthresh` and the
/// module's own state, e.g. H-TCP's `undo_last_cong`).
pub trait CcClone {
    fn snapshot(&self) -> Box<dyn CongestionControl>;
}

impl<T: CongestionControl + Clone + 'static> CcClone for T {
    fn snapshot(&self) -> Box<dyn CongestionControl> {
        Box::new(self.clone())
    }
}

/// Initial window settings the transport hands to every controller.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct InitialWindow {
    pub cwnd_pkts: f64,
    pub ssthresh_pkts: f64,
}

impl Default for InitialWindow {
    fn default() -> Self {
        Self {
            cwnd_pkts: 2.0,
            ssthresh_pkts: f64::INFINITY,
        }
    }
}
