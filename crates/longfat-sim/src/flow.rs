//! A flow as the engine holds it: its routes, its endpoints and, for
//! transfers drawn by a traffic generator, where it came from.

use crate::plt::{PltReceiver, PltSender};
use crate::tcp::receiver::TcpReceiver;
use crate::tcp::sender::TcpSender;
use crate::udp::UdpFlow;

pub enum Endpoints {
    Tcp {
        sender: Box<TcpSender>,
        receiver: TcpReceiver,
    },
    /// A priority-layered connection (`plt.rs`).
    Plt {
        sender: Box<PltSender>,
        receiver: Box<PltReceiver>,
    },
    Udp(UdpFlow),
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
        let (a, b) = match &self.endpoints {
            Endpoints::Tcp { sender, .. } => (sender.started_at_ns, sender.completed_at_ns),
            Endpoints::Plt { sender, .. } => (sender.started_at_ns, sender.completed_at_ns),
            Endpoints::Udp(_) => return None,
        };
        Some(b? - a?)
    }

    /// A TCP connection or a PLT one (ACK-clocked, with a receiver that ACKs).
    pub fn is_tcp(&self) -> bool {
        matches!(self.endpoints, Endpoints::Tcp { .. } | Endpoints::Plt { .. })
    }
}
