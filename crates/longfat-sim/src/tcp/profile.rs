//! Transport profiles: which TCP sender a flow runs. The window rule is
//! always the flow's congestion controller; the profile decides everything
//! around it (loss detection and recovery, the retransmission timer, how much
//! an ACK may grow the window, initial values). `docs/algorithms.md` has the
//! table of every behaviour that differs.

use std::fmt;

use longfat_cc::Rules;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Profile {
    /// The standards' sender: RFC 5681 growth (slow start min(N, SMSS) per
    /// ACK, congestion avoidance by bytes acknowledged), RFC 6675 SACK recovery driven by pipe, RFC 6298 timer (with
    /// Linux's floor on the variance term), RFC 7661 cwnd validation. The
    /// sender longfat was validated with against ns-3 and the Mathis and
    /// Padhye models.
    #[default]
    Rfc,
    /// ns-2.35 `Agent/TCP/Sack1`, as the LTCP, PLT, TCP-GT and eHSTCP papers
    /// ran it: growth once per new ACK, reductions from `min(cwnd, rwnd)`,
    /// `slowdown()`'s halving rules, ns-2's pipe counter, every hole below the
    /// highest SACK lost, go-back-N after a timeout, 10 ms timer ticks.
    Ns2,
    /// A modern Linux sender: initial window 10, PRR (RFC 6937), RACK-TLP
    /// (RFC 8985), timestamp (Eifel) undo of spurious timeouts, cwnd
    /// validation, Linux's RTO estimator, and the kernel modules' variants of
    /// the algorithms (CUBIC with HyStart and `tcp_cubic.c`'s rules, H-TCP
    /// with RTT scaling and the bandwidth switch, HighSpeed's table, BIC,
    /// Scalable and Vegas as `tcp_bic.c`, `tcp_scalable.c`, `tcp_vegas.c`).
    Linux,
}

pub const PROFILES: &[&str] = &["rfc", "ns2", "linux"];

impl Profile {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "rfc" => Some(Self::Rfc),
            "ns2" => Some(Self::Ns2),
            "linux" => Some(Self::Linux),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Rfc => "rfc",
            Self::Ns2 => "ns2",
            Self::Linux => "linux",
        }
    }

    /// Initial window: RFC 5681 §3.1 allows 2-4 (we keep 2), ns-2
    /// `windowInit_` 2, Linux `TCP_INIT_CWND` 10 (RFC 6928).
    pub fn initial_cwnd_pkts(self) -> f64 {
        match self {
            Self::Rfc | Self::Ns2 => 2.0,
            Self::Linux => 10.0,
        }
    }

    /// Slow-start threshold before the first reduction: ns-2.35 starts it at
    /// the advertised window (tcp.cc `TcpAgent::reset()`: `ssthresh_ =
    /// int(wnd_)`, `max_ssthresh_` 0 by default), so slow start ends at rwnd;
    /// RFC 5681 §3.1 and Linux start "arbitrarily high" (unlimited).
    pub fn initial_ssthresh_pkts(self, rwnd_pkts: u64) -> f64 {
        match self {
            Self::Ns2 => rwnd_pkts as f64,
            Self::Rfc | Self::Linux => f64::INFINITY,
        }
    }

    /// RTO before the first sample: RFC 6298 §2.1 and Linux 1 s, ns-2
    /// `rtxcur_init_` 3 s.
    pub fn initial_rto_ns(self) -> u64 {
        match self {
            Self::Rfc | Self::Linux => 1_000_000_000,
            Self::Ns2 => 3_000_000_000,
        }
    }

    /// The ceiling of the backed-off RTO: Linux `TCP_RTO_MAX` = 120 s
    /// (include/net/tcp.h); RFC 6298 §2.5 allows any ceiling of at least
    /// 60 s, which `rfc` and `ns2` keep.
    pub fn max_rto_ns(self) -> u64 {
        match self {
            Self::Rfc | Self::Ns2 => 60_000_000_000,
            Self::Linux => 120_000_000_000,
        }
    }

    /// The delayed-ACK timer when delayed ACKs are on: Linux's minimum `ato`
    /// 40 ms (which the RFC profile shares), ns-2 `DelAckSink interval_` 100 ms.
    pub fn delayed_ack_timeout_ns(self) -> u64 {
        match self {
            Self::Rfc | Self::Linux => 40_000_000,
            Self::Ns2 => 100_000_000,
        }
    }

    /// Whether the receiver delays ACKs unless `tcp.delayed_ack` says:
    /// Linux's does (net/ipv4/tcp_input.c `__tcp_ack_snd_check`, with its
    /// quick-ACKs; `TcpConfig::linux_acks`); ns-2's `TCPSink` and the rfc
    /// profile's receiver ACK every packet.
    pub fn delays_acks(self) -> bool {
        self == Self::Linux
    }

    /// The growth (packets) an ACK that may grow the window hands the
    /// controller, which spends it on slow start, then congestion avoidance.
    /// `rfc`: RFC 5681 §3.1 eq. (2), cwnd += min(N, SMSS) per ACK in slow
    /// start (one packet however many the ACK covers: x1.5 per round trip
    /// with delayed ACKs), and in congestion avoidance the byte counting that
    /// §3.1 recommends (cwnd += SMSS once cwnd bytes are acknowledged: the
    /// packets delivered). ns-2 grows once per new ACK (`opencwnd()`),
    /// however many packets it covers. Linux: the packets delivered
    /// (`tcp_slow_start`, `tcp_cong_avoid_ai` with `acked`).
    pub fn growth_pkts(self, delivered_pkts: u64, slow_start: bool) -> u64 {
        match self {
            Self::Ns2 => 1,
            Self::Rfc if slow_start => delivered_pkts.min(1),
            Self::Rfc | Self::Linux => delivered_pkts,
        }
    }

    /// Growth only while the window limits the sender (RFC 7661; Linux
    /// `tcp_is_cwnd_limited`). ns-2 grows regardless and reduces from
    /// `min(cwnd, rwnd)` instead.
    pub fn validates_cwnd(self) -> bool {
        self != Self::Ns2
    }

    /// The rules the controllers run under: the defaults of the parameters
    /// that differ per profile (the Linux kernel modules' variants, ns-2's
    /// HighSpeed lines), declared with each parameter in `longfat-cc`.
    pub fn cc_rules(self) -> Rules {
        match self {
            Self::Rfc => Rules::Rfc,
            Self::Ns2 => Rules::Ns2,
            Self::Linux => Rules::Linux,
        }
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
