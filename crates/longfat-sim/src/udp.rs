//! UDP sources (constant bit rate, on/off) and their sinks.

use rand_xoshiro::Xoshiro256PlusPlus;

use crate::event::TimerKind;
use crate::outbox::Outbox;
use crate::packet::{Dir, Packet, PacketKind};
use crate::traffic::{exponential_with_mean, pareto_with_mean};
use crate::units::Bandwidth;

/// How on and off period lengths are drawn.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PeriodDist {
    Exponential,
    /// Pareto with this shape (> 1), scaled to the configured mean.
    Pareto {
        shape: f64,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub enum UdpPattern {
    Cbr,
    OnOff {
        on_mean_ns: u64,
        off_mean_ns: u64,
        dist: PeriodDist,
    },
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
        Self {
            flow,
            cfg,
            rng,
            active: false,
            on_until_ns: None,
            next_send_ns: 0,
            seq: 0,
            counters: UdpCounters::default(),
        }
    }

    pub fn config(&self) -> &UdpConfig {
        &self.cfg
    }

    fn draw(&mut self, mean_ns: u64) -> u64 {
        let mean = mean_ns as f64;
        let v = match (&self.cfg.pattern, mean_ns) {
            (_, 0) => 0.0,
            (
                UdpPattern::OnOff {
                    dist: PeriodDist::Exponential,
                    ..
                },
                _,
            ) => exponential_with_mean(&mut self.rng, mean),
            (
                UdpPattern::OnOff {
                    dist: PeriodDist::Pareto { shape },
                    ..
                },
                _,
            ) => pareto_with_mean(&mut self.rng, mean, *shape),
            (UdpPattern::Cbr, _) => mean,
        };
        v.round().min(1e18) as u64
    }

    fn gap_ns(&self) -> u64 {
        self.cfg
            .rate
            .tx_time_ns(u64::from(self.cfg.packet_size_bytes))
            .max(1)
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
        if let (
            Some(until),
            UdpPattern::OnOff {
                on_mean_ns,
                off_mean_ns,
                ..
            },
        ) = (self.on_until_ns, self.cfg.pattern.clone())
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
        let mut p = Packet::new(
            self.flow,
            PacketKind::Udp,
            Dir::Forward,
            self.cfg.packet_size_bytes,
        );
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::component_rng;

    /// Drives a source by its own timers for `secs` and returns packets sent.
    fn packets_sent(cfg: UdpConfig, secs: u64) -> u64 {
        let mut u = UdpFlow::new(0, cfg, component_rng(3, 4, 5));
        let mut out = Outbox::default();
        u.start(0, &mut out);
        let end = secs * 1_000_000_000;
        loop {
            let next = out
                .timers
                .drain(..)
                .map(|(_, t)| t)
                .min()
                .expect("a source always re-arms");
            if next >= end {
                return u.counters.sent_pkts;
            }
            u.on_timer(next, &mut out);
        }
    }

    /// On/off duty cycle: a source sends at its rate for a fraction
    /// on/(on+off) of the time. An on period of length L sends ceil(L/gap)
    /// packets, on average L/gap + 1/2, which the expectation includes.
    #[test]
    fn on_off_duty_cycle() {
        let gap_s = 1500.0 * 8.0 / 120e6; // 100 us between packets at 120 Mbit/s
        for dist in [PeriodDist::Exponential, PeriodDist::Pareto { shape: 2.5 }] {
            let cfg = UdpConfig {
                rate: Bandwidth::from_bps(120_000_000),
                packet_size_bytes: 1500,
                pattern: UdpPattern::OnOff {
                    on_mean_ns: 10_000_000,
                    off_mean_ns: 30_000_000,
                    dist,
                },
                class: 0,
            };
            let secs = 2000;
            let sent = packets_sent(cfg, secs) as f64;
            let cycles = secs as f64 / 0.040;
            let expect = cycles * (0.010 / gap_s + 0.5);
            let duty = sent * gap_s / secs as f64;
            assert!(
                (sent / expect - 1.0).abs() < 0.025,
                "{dist:?}: sent {sent}, expected {expect} (duty {duty:.4})"
            );
            assert!((duty - 0.25).abs() < 0.01, "{dist:?}: duty {duty}");
        }
    }

    #[test]
    fn cbr_sends_at_its_rate() {
        let cfg = UdpConfig {
            rate: Bandwidth::from_bps(12_000_000),
            packet_size_bytes: 1500,
            pattern: UdpPattern::Cbr,
            class: 0,
        };
        // 1000 packets per second, the first at t = 0.
        assert_eq!(packets_sent(cfg, 10), 10_000);
    }
}
