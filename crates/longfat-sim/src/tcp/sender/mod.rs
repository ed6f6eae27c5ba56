//! The TCP sender: ACK clocking, SACK loss recovery, the retransmission
//! timer with exponential backoff, receiver window, and a
//! [`CongestionControl`] that owns cwnd and ssthresh. The transport profile
//! ([`Profile`]) chooses the recovery machinery around the controller, one
//! type per profile behind one interface (`shared::LossRecovery`): RFC 6675
//! (`rfc6675.rs`), ns-2.35 Sack1 (`ns2.rs`), or Linux's PRR, RACK-TLP,
//! F-RTO and undo (`linux.rs`). The sequences all profiles share (the ACK,
//! the timeout, the send loop) are in `shared.rs`, generic over that
//! interface: a sender dispatches on its profile once per event, not per
//! step, and holds only its own profile's state.

mod linux;
mod ns2;
mod rfc6675;
mod shared;

use std::ops::Deref;
use std::sync::Arc;

use longfat_cc::CongestionControl;

use crate::outbox::Outbox;
use crate::packet::Packet;
use crate::tcp::profile::Profile;
use crate::tcp::rtt::{RtoRule, RttEstimator};
use crate::tcp::scoreboard::Scoreboard;
use crate::tcp::TcpConfig;

pub use shared::{Recovery, SenderCore, SenderCounters};

/// The profile's loss recovery and its state. Linux's (192 bytes) is
/// boxed: held in place it made every sender that large, whatever its
/// profile (an `rfc` or `ns2` sender holds 80 bytes here, not 192).
enum Rules {
    Rfc(rfc6675::Rfc6675),
    Ns2(ns2::Ns2Sack1),
    Linux(Box<linux::Linux>),
}

/// Runs `$e` with `$r` bound to the sender's profile type (static dispatch).
macro_rules! with_rules {
    ($self:ident, $r:ident => $e:expr) => {
        match &mut $self.rules {
            Rules::Rfc($r) => $e,
            Rules::Ns2($r) => $e,
            Rules::Linux($r) => {
                let $r = &mut **$r;
                $e
            }
        }
    };
}

pub struct TcpSender {
    core: SenderCore,
    rules: Rules,
}

impl std::fmt::Debug for TcpSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TcpSender")
            .field("flow", &self.core.flow)
            .field("cc", &self.core.cc.name())
            .finish()
    }
}

/// The shared part's public fields (`counters`, `started_at_ns`,
/// `completed_at_ns`) read as the sender's own, as before the profiles had
/// types of their own; nothing outside this module can write them.
impl Deref for TcpSender {
    type Target = SenderCore;
    fn deref(&self) -> &SenderCore {
        &self.core
    }
}

impl TcpSender {
    /// Hints the cache to load what an ACK reads outside the sender's own
    /// record: its controller and its scoreboard's oldest flags.
    #[inline(always)]
    pub fn prefetch_heap(&self) {
        let cc: &dyn CongestionControl = &*self.core.cc;
        crate::prefetch::prefetch_bytes(cc, 128);
        self.core.sb.prefetch();
    }

    pub fn new(
        flow: u32,
        cfg: impl Into<Arc<TcpConfig>>,
        cc: Box<dyn CongestionControl>,
        total_pkts: Option<u64>,
    ) -> Self {
        let cfg = cfg.into();
        let (rules, rule, sb) = match cfg.profile {
            Profile::Rfc => (
                Rules::Rfc(rfc6675::Rfc6675),
                RtoRule::Rfc6298,
                Scoreboard::new(),
            ),
            Profile::Ns2 => (
                Rules::Ns2(ns2::Ns2Sack1::default()),
                RtoRule::Ns2 {
                    tick_ns: ns2::NS2_TICK_NS,
                    timestamps: cfg.timestamps,
                },
                Scoreboard::new(),
            ),
            Profile::Linux => (
                Rules::Linux(Box::default()),
                RtoRule::Linux,
                Scoreboard::with_send_times(),
            ),
        };
        let rtt = RttEstimator::with_rule(rule, cfg.initial_rto_ns, cfg.min_rto_ns, cfg.max_rto_ns);
        Self {
            core: SenderCore::new(flow, cfg, cc, total_pkts, sb, rtt),
            rules,
        }
    }

    /// The congestion window as the profile's own stack reports it: the
    /// controller's, except under `linux` in fast recovery, where
    /// `tcp_cwnd_reduction` writes PRR's in-flight + sndcnt into snd_cwnd.
    /// (ns-2's limited-transmit allowance is not its cwnd.)
    /// A controller that controls the recovery window
    /// (`controls_recovery_window`) reports its own cwnd throughout.
    pub fn window_pkts(&self) -> u64 {
        match &self.rules {
            Rules::Linux(r) => self.core.window(&**r),
            Rules::Rfc(_) | Rules::Ns2(_) => self.core.cwnd_pkts(),
        }
    }

    /// How far out of order a delivery may be before it means loss, in
    /// packets: Linux's adaptive `tp->reordering` under `linux`, RFC 6675's
    /// and ns-2's fixed DupThresh of 3 otherwise.
    pub fn reordering_pkts(&self) -> u64 {
        match &self.rules {
            Rules::Linux(r) => r.reordering_pkts(),
            Rules::Rfc(_) | Rules::Ns2(_) => 3,
        }
    }

    pub fn cc(&self) -> &dyn CongestionControl {
        self.core.cc.as_ref()
    }
    pub fn rtt(&self) -> &RttEstimator {
        &self.core.rtt
    }
    pub fn scoreboard(&self) -> &Scoreboard {
        &self.core.sb
    }
    pub fn recovery(&self) -> Recovery {
        self.core.recovery
    }
    /// An ECN reduction is in force (Linux TCP_CA_CWR under `linux`).
    pub fn ecn_reducing(&self) -> bool {
        self.core.ecn_reducing()
    }
    pub fn profile(&self) -> Profile {
        self.core.cfg.profile
    }
    /// Packets of a fixed-size transfer (None: bulk).
    pub fn total_pkts(&self) -> Option<u64> {
        self.core.total_pkts
    }
    pub fn config(&self) -> &TcpConfig {
        &self.core.cfg
    }
    /// Retransmission timeouts since the cumulative ACK last moved (Linux
    /// `icsk_backoff`); the timer runs `rtt().backed_off_rto_ns(this)`.
    pub fn rto_backoff(&self) -> u32 {
        self.core.rto_backoff
    }
    /// The round trip of the connection's handshake (the SYN-ACK and the
    /// ACK that answered it), which Linux feeds to its RTT estimator
    /// (`tcp_synack_rtt_meas`, `tcp_ack_update_rtt`) before any data. The
    /// simulator starts its connections established and never calls this;
    /// the conformance driver does (`tcp::driver`).
    pub fn on_handshake_rtt(&mut self, rtt_ns: u64) {
        self.core.rtt.on_sample_at(rtt_ns, 0, 0);
    }
    pub fn packet_size_bytes(&self) -> u32 {
        self.core.cfg.packet_size_bytes
    }

    pub fn start(&mut self, now_ns: u64, out: &mut Outbox) {
        with_rules!(self, r => self.core.start(r, now_ns, out))
    }

    /// The application stops producing data; what is outstanding still completes.
    pub fn stop(&mut self) {
        self.core.stop();
    }

    /// New packets may be sent below packet number `limit` (see
    /// `SenderCore::send_limit`; never past `total_pkts`).
    pub fn set_send_limit(&mut self, limit: u64) {
        self.core.set_send_limit(limit);
    }

    /// The window the receiver advertised on the ACK being processed
    /// (`receiver::TcpReceiver::window_pkts`).
    pub fn set_peer_window(&mut self, pkts: u64) {
        self.core.peer_window_pkts = pkts;
    }

    /// The host queue has room again.
    pub fn on_host_ready(&mut self, now_ns: u64, out: &mut Outbox) {
        with_rules!(self, r => self.core.send_allowed(r, now_ns, out))
    }

    pub fn on_ack(&mut self, now_ns: u64, ack: &Packet, out: &mut Outbox) {
        with_rules!(self, r => self.core.on_ack(r, now_ns, ack, out))
    }

    pub fn on_rto_timer(&mut self, now_ns: u64, out: &mut Outbox) {
        with_rules!(self, r => self.core.on_rto_timer(r, now_ns, out))
    }

    /// The pacing timer (`TimerKind::Pace`) fired.
    pub fn on_pace_timer(&mut self, now_ns: u64, out: &mut Outbox) {
        with_rules!(self, r => self.core.on_pace_timer(r, now_ns, out))
    }

    /// The pacing rate in force, payload bytes per second (None: not a
    /// paced flow; u64::MAX: paced flow without a rate yet).
    pub fn pacing_rate_bytes_per_sec(&self) -> Option<u64> {
        self.core.pacer.as_deref().map(|p| p.rate_bytes_per_sec())
    }

    /// The delivery-rate estimator's last sample (None: the controller
    /// reads none, so none is taken).
    pub fn rate_sample(&self) -> Option<longfat_cc::RateSample> {
        self.core.rate.as_deref().map(|r| r.sample())
    }
}
