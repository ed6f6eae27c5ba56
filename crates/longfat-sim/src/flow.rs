//! A flow as the engine holds it: its routes, its endpoints and, for
//! transfers drawn by a traffic generator, where it came from. The engine
//! (`sim.rs`) and the reports (`metrics.rs`, `budget.rs`) see every kind of
//! endpoints through the methods of [`Endpoints`]; only those methods
//! tell a TCP connection, a PLT connection and a UDP source apart.

use crate::event::TimerKind;
use crate::outbox::Outbox;
use crate::packet::{Packet, PacketKind};
use crate::plt::{ModuleCounters, PltReceiver, PltSender};
use crate::tcp::receiver::TcpReceiver;
use crate::tcp::sender::TcpSender;
use crate::tcp::TcpConfig;
use crate::udp::UdpFlow;

// The TCP variant is the large one on purpose: see its comment.
#[allow(clippy::large_enum_variant)]
pub enum Endpoints {
    /// The sender is held in place, next to the receiver, not boxed: with
    /// very many flows each ACK then costs one cache miss fewer (the flow's
    /// record no longer has to be read before the sender's address is
    /// known).
    Tcp {
        sender: TcpSender,
        receiver: TcpReceiver,
    },
    /// A priority-layered connection (`plt/`).
    Plt {
        sender: Box<PltSender>,
        receiver: Box<PltReceiver>,
    },
    Udp(UdpFlow),
}

/// What the reports count of a flow, totals since the start.
#[derive(Clone, Copy, Debug, Default)]
pub struct FlowCounters {
    /// Payload delivered in order at the receiver.
    pub delivered_bytes: u64,
    /// Bytes and packets put on the wire (retransmissions included).
    pub sent_bytes: u64,
    pub sent_pkts: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub fast_recoveries: u64,
    /// ECN (`tcp.ecn` on): ACKs with ECE the sender received, its ECN
    /// reductions, CE-marked data packets the receiver got.
    pub ecn: Option<EcnCounters>,
    /// A PLT connection's per-module counters (zero for other flows).
    pub modules: ModuleCounters,
}

/// A TCP flow's ECN counters, totals since the start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EcnCounters {
    pub ece_acks: u64,
    pub ecn_reductions: u64,
    pub ce_marks: u64,
}

/// A window-controlled sender's state at one moment.
#[derive(Clone, Copy, Debug)]
pub struct WindowState {
    /// The controller's window: TCP's, or a PLT connection's HCM's.
    pub cwnd_pkts: f64,
    pub ssthresh_pkts: f64,
    pub srtt_ns: u64,
    pub rtt_ns: u64,
    /// A PLT connection's LCM window (None: no LCM).
    pub lcm_cwnd_pkts: Option<f64>,
}

impl WindowState {
    fn of(sender: &TcpSender, lcm_cwnd_pkts: Option<f64>) -> Self {
        let r = sender.rtt().stats();
        Self {
            cwnd_pkts: sender.cc().cwnd(),
            ssthresh_pkts: sender.cc().ssthresh(),
            srtt_ns: r.smoothed_ns,
            rtt_ns: r.latest_ns,
            lcm_cwnd_pkts,
        }
    }

    /// Every window the connection sends under (a PLT connection: both modules').
    pub fn total_cwnd_pkts(&self) -> f64 {
        match self.lcm_cwnd_pkts {
            Some(lcm) => self.cwnd_pkts + lcm,
            None => self.cwnd_pkts,
        }
    }
}

impl Endpoints {
    /// Timer `kind` of this flow fired.
    #[inline(always)]
    pub fn on_timer(&mut self, kind: TimerKind, now_ns: u64, out: &mut Outbox) {
        match (self, kind) {
            (Self::Tcp { sender, .. }, TimerKind::Start) => sender.start(now_ns, out),
            (Self::Tcp { sender, .. }, TimerKind::Stop) => sender.stop(),
            (Self::Tcp { sender, .. }, TimerKind::Rto) => sender.on_rto_timer(now_ns, out),
            (Self::Tcp { sender, .. }, TimerKind::HostReady) => sender.on_host_ready(now_ns, out),
            (Self::Tcp { sender, .. }, TimerKind::Pace) => sender.on_pace_timer(now_ns, out),
            (Self::Tcp { receiver, .. }, TimerKind::DelayedAck) => {
                receiver.on_delack_timer(now_ns, out)
            }
            (Self::Tcp { receiver, .. }, TimerKind::GroFlush) => receiver.on_gro_timer(now_ns, out),
            (Self::Plt { sender, .. }, TimerKind::Start) => sender.start(now_ns, out),
            (Self::Plt { sender, .. }, TimerKind::Stop) => sender.stop(),
            (Self::Plt { sender, .. }, TimerKind::Rto) => sender.on_rto_timer(now_ns, out),
            (Self::Plt { sender, .. }, TimerKind::HostReady) => sender.on_host_ready(now_ns, out),
            (Self::Plt { sender, .. }, TimerKind::Pace) => sender.on_pace_timer(now_ns, out),
            (Self::Plt { receiver, .. }, TimerKind::DelayedAck) => {
                receiver.on_delack_timer(now_ns, out)
            }
            (Self::Udp(u), TimerKind::Start) => u.start(now_ns, out),
            (Self::Udp(u), TimerKind::Stop) => u.stop(),
            (Self::Udp(u), TimerKind::UdpSend) => u.on_timer(now_ns, out),
            _ => {}
        }
    }

    /// Starts loading a TCP receiver's state (a hint; no effect on results).
    #[inline(always)]
    pub fn prefetch_receiver(&self) {
        if let Self::Tcp { receiver, .. } = self {
            crate::prefetch::prefetch_bytes(receiver, std::mem::size_of::<TcpReceiver>());
        }
    }

    /// Starts loading what a TCP sender's ACK reads outside its record
    /// (read from the record, which `prefetch` loaded an event before).
    #[inline(always)]
    pub fn prefetch_sender_heap(&self) {
        if let Self::Tcp { sender, .. } = self {
            sender.prefetch_heap();
        }
    }

    /// Starts loading a TCP sender's state (`sender`) or its receiver's.
    #[inline(always)]
    pub fn prefetch(&self, sender: bool) {
        match self {
            Self::Tcp { sender: s, .. } if sender => {
                crate::prefetch::prefetch_bytes(s, std::mem::size_of::<TcpSender>())
            }
            _ => self.prefetch_receiver(),
        }
    }

    /// Packet `p` reached this flow's end of its route: data at the
    /// receiver, an ACK at the sender.
    #[inline(always)]
    pub fn on_packet(&mut self, now_ns: u64, p: &Packet, out: &mut Outbox) {
        match (self, p.kind) {
            (Self::Tcp { receiver, .. }, PacketKind::Data) => receiver.on_data(now_ns, p, out),
            (Self::Tcp { sender, receiver }, PacketKind::Ack) => {
                // The window the receiver advertises now: with autotuning
                // it only grows, once per RTT at most, so the ACK carries it
                // up to one ACK path delay late (docs/scenarios.md, host).
                if sender.default_host() {
                    sender.set_peer_window(receiver.window_pkts());
                }
                sender.on_ack(now_ns, p, out)
            }
            (Self::Plt { receiver, .. }, PacketKind::Data) => receiver.on_data(now_ns, p, out),
            (Self::Plt { sender, .. }, PacketKind::Ack) => sender.on_ack(now_ns, p, out),
            (Self::Udp(u), PacketKind::Udp) => u.on_receive(p),
            _ => unreachable!("packet kind does not match its flow"),
        }
    }

    /// The transport settings of an ACK-clocked connection (TCP or PLT;
    /// None: a UDP source).
    #[inline(always)]
    pub fn tcp_config(&self) -> Option<&TcpConfig> {
        match self {
            Self::Tcp { sender, .. } => Some(sender.config()),
            Self::Plt { sender, .. } => Some(sender.config()),
            Self::Udp(_) => None,
        }
    }

    /// The size of every packet the flow sends forward and back: data and
    /// ACKs of a connection; a UDP source's datagrams (it sends nothing
    /// back, counted as datagrams all the same).
    pub fn packet_sizes_bytes(&self) -> (u32, u32) {
        match self.tcp_config() {
            Some(c) => (c.packet_size_bytes, c.ack_size_bytes),
            None => {
                let Self::Udp(u) = self else {
                    unreachable!("a flow without a TCP configuration is UDP")
                };
                let s = u.config().packet_size_bytes;
                (s, s)
            }
        }
    }

    /// The window a TCP receiver advertises now, in packets (others:
    /// unlimited). Read only by packet captures.
    pub fn advertised_window_pkts(&self) -> u64 {
        match self {
            Self::Tcp { receiver, .. } => receiver.window_pkts(),
            _ => u64::MAX,
        }
    }

    /// Packets of a fixed-size transfer (None: bulk, or UDP).
    pub fn total_pkts(&self) -> Option<u64> {
        match self {
            Self::Tcp { sender, .. } => sender.total_pkts(),
            Self::Plt { sender, .. } => sender.total_pkts(),
            Self::Udp(_) => None,
        }
    }

    /// When the transfer started and when its last packet was acknowledged.
    pub fn transfer_times_ns(&self) -> (Option<u64>, Option<u64>) {
        match self {
            Self::Tcp { sender, .. } => (sender.started_at_ns, sender.completed_at_ns),
            Self::Plt { sender, .. } => (sender.started_at_ns, sender.completed_at_ns),
            Self::Udp(_) => (None, None),
        }
    }

    pub fn counters(&self) -> FlowCounters {
        match self {
            Self::Tcp { sender, receiver } => FlowCounters {
                delivered_bytes: receiver.counters.delivered_bytes,
                sent_bytes: sender.counters.sent_bytes,
                sent_pkts: sender.counters.sent_pkts,
                retransmits: sender.counters.retransmits,
                timeouts: sender.counters.timeouts,
                fast_recoveries: sender.counters.fast_recoveries,
                ecn: sender.config().ecn.then_some(EcnCounters {
                    ece_acks: sender.counters.ece_acks,
                    ecn_reductions: sender.counters.ecn_reductions,
                    ce_marks: receiver.counters.ce_marks,
                }),
                modules: ModuleCounters::default(),
            },
            Self::Plt { sender, receiver } => {
                let c = sender.counters(receiver);
                FlowCounters {
                    delivered_bytes: receiver.counters.delivered_bytes,
                    sent_bytes: c.sent_bytes,
                    sent_pkts: c.sent_pkts,
                    retransmits: c.retransmits,
                    timeouts: c.timeouts,
                    fast_recoveries: c.fast_recoveries,
                    ecn: None,
                    modules: c.modules,
                }
            }
            Self::Udp(u) => FlowCounters {
                delivered_bytes: u.counters.received_bytes,
                sent_bytes: u.counters.sent_bytes,
                sent_pkts: u.counters.sent_pkts,
                ..FlowCounters::default()
            },
        }
    }

    /// The sender's window and RTT (None: a UDP source has none).
    pub fn window_state(&self) -> Option<WindowState> {
        match self {
            Self::Tcp { sender, .. } => Some(WindowState::of(sender, None)),
            Self::Plt { sender, .. } => {
                Some(WindowState::of(sender.hcm(), Some(sender.lcm_cwnd_pkts())))
            }
            Self::Udp(_) => None,
        }
    }

    /// A PLT connection's packet manager window, in packets (None: not PLT).
    pub fn plt_window_pkts(&self) -> Option<u64> {
        match self {
            Self::Plt { sender, .. } => Some(sender.manager().window_pkts()),
            _ => None,
        }
    }
}

pub struct Flow {
    pub name: String,
    /// The congestion controller's name, or "udp".
    pub algorithm: String,
    pub start_ns: u64,
    pub stop_ns: Option<u64>,
    pub fwd: Box<[u32]>,
    pub bwd: Box<[u32]>,
    /// Propagation-only round-trip time of the flow's path.
    pub base_rtt_ns: u64,
    pub endpoints: Endpoints,
    /// Set for finite transfers drawn by a traffic generator (short flows,
    /// web objects): they are reported by completion time, not as series.
    pub generated: Option<Generated>,
}

/// Which generator drew a transfer, and its size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Generated {
    pub generator: u32,
    pub size_bytes: u64,
}

impl Flow {
    /// A transfer's completion time (start to last packet acknowledged).
    pub fn completion_time_ns(&self) -> Option<u64> {
        let (a, b) = self.endpoints.transfer_times_ns();
        Some(b? - a?)
    }

    /// A TCP connection or a PLT one (ACK-clocked, with a receiver that ACKs).
    pub fn is_tcp(&self) -> bool {
        self.endpoints.tcp_config().is_some()
    }
}
