//! Sect. 3.2's packet manager: one sequence space for the connection's
//! data, shared by the two modules.

use std::collections::VecDeque;

/// Where a connection-level packet is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum DataState {
    /// Last sent by the HCM (which retransmits it until acknowledged).
    Hcm,
    /// Sent by the LCM, not yet acknowledged or lost.
    Lcm,
    /// Lost by the LCM, waiting in the retransmit buffer for the HCM.
    Queued,
    Acked,
}

/// Sect. 3.2's packet manager: the connection's data, the retransmit
/// buffer of LCM losses, and which data each HCM packet carries.
#[derive(Debug)]
pub struct PacketManager {
    pub(super) total_pkts: Option<u64>,
    /// The connection's window: at most this many packets between the
    /// oldest unacknowledged and the next unsent (the receiver's buffer for
    /// reassembly; each module's own window is `tcp.rwnd`).
    window_pkts: u64,
    /// The application stopped: no new data.
    stopped: bool,
    /// Every packet below `una` is acknowledged; `state[i]` is packet `una + i`.
    una: u64,
    /// The next packet never sent.
    nxt: u64,
    state: VecDeque<DataState>,
    /// LCM losses for the HCM, oldest first. Entries acknowledged meanwhile
    /// (a late LCM ACK) are skipped when reached.
    rtx: VecDeque<u64>,
    /// Entries of `rtx` still `Queued`.
    rtx_live: u64,
    /// `hcm_map[i]`: the data of HCM packet `hcm_base + i`.
    hcm_map: VecDeque<u64>,
    hcm_base: u64,
    /// LCM losses the HCM has sent.
    pub lcm_losses_resent: u64,
    /// LCM losses the LCM sent again itself (footnote 2).
    pub lcm_losses_resent_by_lcm: u64,
}

impl PacketManager {
    pub fn new(total_pkts: Option<u64>, window_pkts: u64) -> Self {
        Self {
            total_pkts,
            window_pkts,
            stopped: false,
            una: 0,
            nxt: 0,
            state: VecDeque::new(),
            rtx: VecDeque::new(),
            rtx_live: 0,
            hcm_map: VecDeque::new(),
            hcm_base: 0,
            lcm_losses_resent: 0,
            lcm_losses_resent_by_lcm: 0,
        }
    }

    /// Every packet below this one is acknowledged.
    pub fn data_una(&self) -> u64 {
        self.una
    }
    /// New packets the modules may take now: what the application has
    /// left, within the connection's window.
    pub fn unsent(&self) -> u64 {
        if self.stopped {
            return 0;
        }
        let left = self.total_pkts.map_or(u64::MAX, |t| t - self.nxt);
        left.min(self.window_pkts.saturating_sub(self.nxt - self.una))
    }

    /// The application stops producing data; what was sent still completes.
    pub fn stop(&mut self) {
        self.stopped = true;
    }

    /// The connection's window (`PltConfig::receive_buffer_pkts`).
    pub fn window_pkts(&self) -> u64 {
        self.window_pkts
    }

    /// The next packet never sent (packets below it were all sent).
    pub fn sent(&self) -> u64 {
        self.nxt
    }

    /// Packets sent and not yet acknowledged, in the connection's window.
    pub fn outstanding(&self) -> u64 {
        self.nxt - self.una
    }
    /// LCM losses waiting for the HCM.
    pub fn queued(&self) -> u64 {
        self.rtx_live
    }
    /// The whole transfer is acknowledged.
    pub fn is_complete(&self) -> bool {
        self.total_pkts.is_some_and(|t| self.una >= t)
    }

    fn state_mut(&mut self, d: u64) -> Option<&mut DataState> {
        if d < self.una {
            None
        } else {
            self.state.get_mut((d - self.una) as usize)
        }
    }

    fn take_unsent(&mut self, as_state: DataState) -> Option<u64> {
        if self.unsent() == 0 {
            return None;
        }
        let d = self.nxt;
        self.nxt += 1;
        self.state.push_back(as_state);
        Some(d)
    }

    /// The highest HCM packet number the HCM may send new, given its next
    /// one: one per queued loss and unsent packet.
    pub fn hcm_send_limit(&self, hcm_snd_nxt: u64) -> u64 {
        hcm_snd_nxt
            .saturating_add(self.rtx_live)
            .saturating_add(self.unsent())
    }

    /// The data HCM packet `seq` carries: the same as before for a
    /// retransmission; for a new packet the oldest queued LCM loss, else
    /// the next unsent packet (sect. 3.2.1: losses before new data).
    pub fn hcm_data(&mut self, seq: u64) -> u64 {
        let end = self.hcm_base + self.hcm_map.len() as u64;
        if seq < end {
            return self.hcm_map[(seq - self.hcm_base) as usize];
        }
        debug_assert_eq!(seq, end, "the HCM sends its packets in order");
        let mut d = None;
        while let Some(q) = self.rtx.pop_front() {
            if let Some(s) = self.state_mut(q) {
                if *s == DataState::Queued {
                    *s = DataState::Hcm;
                    self.rtx_live -= 1;
                    self.lcm_losses_resent += 1;
                    d = Some(q);
                    break;
                }
            }
        }
        let d = d
            .or_else(|| self.take_unsent(DataState::Hcm))
            .expect("the HCM sends within its limit");
        self.hcm_map.push_back(d);
        d
    }

    /// The HCM's cumulative ACK reached `hcm_una`: the data of every HCM
    /// packet below it is acknowledged.
    pub fn hcm_acked_below(&mut self, hcm_una: u64) {
        while self.hcm_base < hcm_una {
            let Some(d) = self.hcm_map.pop_front() else {
                break;
            };
            self.hcm_base += 1;
            self.acked(d);
        }
    }

    /// The next packet for the LCM: unsent data only (sect. 3.2.1).
    pub fn lcm_data(&mut self) -> Option<u64> {
        self.take_unsent(DataState::Lcm)
    }

    /// The oldest queued LCM loss, taken back by the LCM (footnote 2).
    pub fn lcm_resend(&mut self) -> Option<u64> {
        while let Some(q) = self.rtx.pop_front() {
            if let Some(s) = self.state_mut(q) {
                if *s == DataState::Queued {
                    *s = DataState::Lcm;
                    self.rtx_live -= 1;
                    self.lcm_losses_resent_by_lcm += 1;
                    return Some(q);
                }
            }
        }
        None
    }

    /// The LCM lost packet `d`: into the retransmit buffer, unless it was
    /// acknowledged meanwhile.
    pub fn lcm_lost(&mut self, d: u64) {
        if let Some(s) = self.state_mut(d) {
            if *s == DataState::Lcm {
                *s = DataState::Queued;
                self.rtx.push_back(d);
                self.rtx_live += 1;
            }
        }
    }

    /// Packet `d` is acknowledged (by either module).
    pub fn acked(&mut self, d: u64) {
        if let Some(s) = self.state_mut(d) {
            let was_queued = *s == DataState::Queued;
            *s = DataState::Acked;
            if was_queued {
                self.rtx_live -= 1;
            }
        }
        while self.state.front() == Some(&DataState::Acked) {
            self.state.pop_front();
            self.una += 1;
        }
    }
}
