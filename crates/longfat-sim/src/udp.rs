//! UDP sources (constant bit rate, on/off) and their sinks.

use rand_distr::{Distribution, Exp, Pareto};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::event::TimerKind;
use crate::packet::{Dir, Packet, PacketKind};
use crate::sim::Outbox;
use crate::units::Bandwidth;

/// How on and off period lengths are drawn.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PeriodDist {
    Exponential,
    /// Pareto with this shape (> 1), scaled to the configured mean.
    Pareto { shape: f64 },
}

#[derive(Clone, Debug, PartialEq)]
pub enum UdpPattern {
    Cbr,
    OnOff { on_mean_ns: u64, off_mean_ns: u64, dist: PeriodDist },
}

#[derive(Clone, Debug, PartialEq)]
pub struct UdpConfig {
    /// Sending rate while on.
    pub rate: Bandwidth,
    pub packet_size_bytes: u32,
    pub pattern: UdpPattern,
    pub class: u8,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UdpCounters {
    pub sent_pkts: u64,
    pub sent_bytes: u64,
    pub received_pkts: u64,
    pub received_bytes: u64,
}

#[derive(Debug)]
pub struct UdpFlow {
    flow: u32,
    cfg: UdpConfig,
    rng: Xoshiro256PlusPlus,
    active: bool,
    /// End of the current on period (None for CBR).
    on_until_ns: Option<u64>,
    next_send_ns: u64,
    seq: u64,
    pub counters: UdpCounters,
}

impl UdpFlow {
    pub fn new(flow: u32, cfg: UdpConfig, rng: Xoshiro256PlusPlus) -> Self {
        Self { flow, cfg, rng, active: false, on_until_ns: None, next_send_ns: 0, seq: 0, counters: UdpCounters::default() }
    }

    fn draw(&mut self, mean_ns: u64) -> u64 {
        let mean = mean_ns as f64;
        let v = match (&self.cfg.pattern, mean_ns) {
            (_, 0) => 0.0,
            (UdpPattern::OnOff { dist: PeriodDist::Exponential, .. }, _) => {
                Exp::new(1.0 / mean).expect("positive mean").sample(&mut self.rng)
            }
            (UdpPattern::OnOff { dist: PeriodDist::Pareto { shape }, .. }, _) => {
                // mean = scale * shape / (shape - 1)
                let scale = mean * (shape - 1.0) / shape;
                Pareto::new(scale, *shape).expect("validated shape").sample(&mut self.rng)
            }
            (UdpPattern::Cbr, _) => mean,
        };
        v.round().min(1e18) as u64
    }

    fn gap_ns(&self) -> u64 {
        self.cfg.rate.tx_time_ns(u64::from(self.cfg.packet_size_bytes)).max(1)
    }

    pub fn start(&mut self, now_ns: u64, out: &mut Outbox) {
        self.active = true;
        if let UdpPattern::OnOff { on_mean_ns, .. } = self.cfg.pattern {
            let on = self.draw(on_mean_ns);
            self.on_until_ns = Some(now_ns + on);
        }
        self.next_send_ns = now_ns;
        self.on_timer(now_ns, out);
    }

    pub fn stop(&mut self) {
        self.active = false;
    }

    pub fn on_timer(&mut self, now_ns: u64, out: &mut Outbox) {
        if !self.active || now_ns < self.next_send_ns {
            return;
        }
        if let (Some(until), UdpPattern::OnOff { on_mean_ns, off_mean_ns, .. }) =
            (self.on_until_ns, self.cfg.pattern.clone())
        {
            if now_ns >= until {
                // Off period, then a new on period.
                let off = self.draw(off_mean_ns);
                let on = self.draw(on_mean_ns);
                self.next_send_ns = until + off;
                self.on_until_ns = Some(self.next_send_ns + on);
                if self.next_send_ns > now_ns {
                    out.timers.push((TimerKind::UdpSend, self.next_send_ns));
                    return;
                }
            }
        }
        let mut p = Packet::new(self.flow, PacketKind::Udp, Dir::Forward, self.cfg.packet_size_bytes);
        p.seq = self.seq;
        p.class = self.cfg.class;
        self.seq += 1;
        self.counters.sent_pkts += 1;
        self.counters.sent_bytes += u64::from(self.cfg.packet_size_bytes);
        out.packets.push(p);
        self.next_send_ns = now_ns + self.gap_ns();
        out.timers.push((TimerKind::UdpSend, self.next_send_ns));
    }

    pub fn on_receive(&mut self, pkt: &Packet) {
        self.counters.received_pkts += 1;
        self.counters.received_bytes += u64::from(pkt.size_bytes);
    }
}
