//! TCP endpoints with the behaviour of ns-2's TCP/Sack1 and Linux that the
//! papers relied on. Sequence numbers count packets, as in ns-2.

pub mod driver;
pub mod pacing;
pub mod profile;
pub mod rack;
pub mod ranges;
pub mod rate;
pub mod receiver;
pub mod rtt;
pub mod scoreboard;
pub mod sender;

use longfat_cc::InitialWindow;

pub use profile::Profile;

/// Transport settings of one TCP connection.
#[derive(Clone, Debug, PartialEq)]
pub struct TcpConfig {
    /// Size of a data packet on the wire, headers included.
    pub packet_size_bytes: u32,
    /// Header bytes within a data packet; goodput counts the rest.
    pub header_bytes: u32,
    pub ack_size_bytes: u32,
    /// Delayed ACKs (RFC 1122/5681: every second packet or this timeout).
    pub delayed_ack_timeout_ns: Option<u64>,
    /// With delayed ACKs, an ACK for every this many in-order packets
    /// (RFC 1122: 2; a PLT receiver's LCM may use more, sect. 3.2.2).
    pub delayed_ack_every_pkts: u32,
    /// With delayed ACKs, Linux's receiver instead of RFC 1122's (the
    /// `linux` profile): quick-ACKs, an ACK once more than one full segment
    /// is unacknowledged, and the adaptive delayed-ACK timeout `ato` between
    /// `delayed_ack_timeout_ns` (TCP_ATO_MIN) and 200 ms (TCP_DELACK_MAX).
    /// See `receiver::LinuxAcks`.
    pub linux_acks: bool,
    /// An untuned Linux host (`tcp.host = "default"`): the default
    /// tcp_rmem with receive-buffer autotuning bounds the window the
    /// receiver advertises, the default tcp_wmem[2] the data in flight
    /// (`receiver::HostBuffers`). false: unlimited buffers (a tuned host).
    pub default_host: bool,
    /// GRO at the receiver (`tcp.gro_segments`, `linux` only): in-order
    /// segments arriving within one NAPI poll merge into one skb of up to
    /// this many, which TCP then sees (and ACKs) as one; 1 = off. The poll's
    /// length is set where the path is known (`TcpReceiver::with_gro`).
    pub gro_segments: u32,
    /// Receiver window in packets: at most this many outstanding.
    pub rwnd_pkts: u64,
    pub initial_rto_ns: u64,
    pub min_rto_ns: u64,
    pub max_rto_ns: u64,
    pub initial_window: InitialWindow,
    /// Offsets of the sender's and receiver's clocks from true time (their
    /// timestamps read `now + offset`).
    pub sender_clock_offset_ns: u64,
    pub receiver_clock_offset_ns: u64,
    /// Strict-priority class of this connection's packets.
    pub class: u8,
    /// The sender's recovery machinery and defaults (`tcp.profile`).
    pub profile: Profile,
    /// At most this many packets leave back to back on one event (ns-2
    /// `maxburst_`; None: no limit, ns-2's default 0).
    pub max_burst_pkts: Option<u32>,
    /// `tcp.timestamps`: the retransmission timer samples every ACK's
    /// timestamp echo (true) or, `ns2` only, ns-2's one timed segment per
    /// round trip with Karn's rule (`timestamps_ false`, tcp.cc `output()`,
    /// `newack()`). Controllers get their RTT samples either way.
    pub timestamps: bool,
    /// `tcp.pacing`: the sender paces its data at Linux's internal rate
    /// (`tcp::pacing`). A controller that sets a rate of its own
    /// (`pacing_rate_bytes_per_sec`) is paced at it whatever this says.
    pub pacing: bool,
    /// `tcp.pacing_ss_ratio` and `tcp.pacing_ca_ratio`: Linux's
    /// `net.ipv4.tcp_pacing_ss_ratio` (while cwnd < ssthresh / 2) and
    /// `tcp_pacing_ca_ratio`, in percent of MSS x cwnd / SRTT.
    pub pacing_ss_ratio_pct: u32,
    pub pacing_ca_ratio_pct: u32,
    /// `tcp.ecn`: ECN (RFC 3168) negotiated by both ends: ECT(0) on new
    /// data, ECE/CWR (docs/algorithms.md, "ECN").
    pub ecn: bool,
    /// `tcp.abe`: RFC 8511 Alternative Backoff with ECN (only with `ecn`):
    /// the controller's ECN reductions carry `LossEvent::abe`.
    pub abe: bool,
}

impl Default for TcpConfig {
    fn default() -> Self {
        Self {
            packet_size_bytes: 1500,
            header_bytes: 40,
            ack_size_bytes: 40,
            delayed_ack_timeout_ns: None,
            delayed_ack_every_pkts: 2,
            linux_acks: false,
            default_host: false,
            gro_segments: 1,
            rwnd_pkts: u64::MAX,
            initial_rto_ns: 1_000_000_000,
            min_rto_ns: 200_000_000,
            max_rto_ns: Profile::Rfc.max_rto_ns(),
            initial_window: InitialWindow::default(),
            sender_clock_offset_ns: 0,
            receiver_clock_offset_ns: 0,
            class: 0,
            profile: Profile::Rfc,
            max_burst_pkts: None,
            timestamps: true,
            pacing: false,
            pacing_ss_ratio_pct: 200,
            pacing_ca_ratio_pct: 120,
            ecn: false,
            abe: false,
        }
    }
}

impl TcpConfig {
    pub fn payload_bytes(&self) -> u64 {
        u64::from(self.packet_size_bytes - self.header_bytes)
    }
}
