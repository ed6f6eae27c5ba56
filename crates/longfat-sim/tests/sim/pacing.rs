//! Delivery-rate estimation (tcp_rate.c), pacing (Linux's internal EDT
//! pacing) and a `cong_control` controller's recovery window, each
//! against numbers derived by hand from the Linux code.

use std::sync::{Arc, Mutex};

use longfat_cc::{AckEvent, CongestionControl, InitialWindow, LossEvent, Reno, RtoEvent};
use longfat_sim::flow::Endpoints;
use longfat_sim::tcp::driver::{PeerAck, SenderDriver};
use longfat_sim::tcp::sender::{Recovery, TcpSender};
use longfat_sim::tcp::{Profile, TcpConfig};
use longfat_sim::{build, Scenario};

const MS: u64 = 1_000_000;

/// A test controller: a fixed window, and whichever of the three hooks
/// the test asks for; it records every ACK event it is handed.
#[derive(Clone)]
struct Probe {
    cwnd: f64,
    ssthresh: f64,
    rate: Option<u64>,
    wants_rates: bool,
    controls_recovery: bool,
    acks: Arc<Mutex<Vec<AckEvent>>>,
}

impl Probe {
    fn new(cwnd: f64) -> Self {
        Self {
            cwnd,
            ssthresh: f64::INFINITY,
            rate: None,
            wants_rates: false,
            controls_recovery: false,
            acks: Arc::default(),
        }
    }
}

impl CongestionControl for Probe {
    fn name(&self) -> &'static str {
        "probe"
    }
    fn cwnd(&self) -> f64 {
        self.cwnd
    }
    fn ssthresh(&self) -> f64 {
        self.ssthresh
    }
    fn on_ack(&mut self, ack: &AckEvent) {
        self.acks.lock().unwrap().push(*ack);
    }
    fn on_congestion_event(&mut self, _loss: &LossEvent) {}
    fn on_rto(&mut self, _rto: &RtoEvent) {}
    fn pacing_rate_bytes_per_sec(&self, _mss_bytes: u32) -> Option<u64> {
        self.rate
    }
    fn controls_recovery_window(&self) -> bool {
        self.controls_recovery
    }
    fn wants_rate_samples(&self) -> bool {
        self.wants_rates
    }
}

fn config(profile: Profile, cwnd: f64) -> TcpConfig {
    TcpConfig {
        profile,
        initial_window: InitialWindow {
            cwnd_pkts: cwnd,
            ssthresh_pkts: f64::INFINITY,
        },
        ..TcpConfig::default()
    }
}

fn driver(profile: Profile, cc: Probe) -> SenderDriver {
    let cfg = config(profile, cc.cwnd);
    SenderDriver::new(TcpSender::new(0, cfg, Box::new(cc), None))
}

fn ack(cum: u64, sacks: &[(u64, u64)]) -> PeerAck {
    PeerAck {
        cum_pkts: cum,
        sacks: sacks.to_vec(),
        window_pkts: 10_000,
        ts_val: 0,
        ece: false,
    }
}

fn rate_probe(cwnd: f64) -> (Probe, Arc<Mutex<Vec<AckEvent>>>) {
    let p = Probe {
        wants_rates: true,
        ..Probe::new(cwnd)
    };
    let acks = p.acks.clone();
    (p, acks)
}

/// Ten packets a round trip of 100 ms, ACKed one by one every 10 ms: once
/// the first two rounds have passed (the first flight left at one instant,
/// which the second round's send phase still sees), every sample is 10
/// packets over 100 ms, the rate at which the ACKs deliver.
#[test]
fn a_window_acked_at_a_constant_rate_samples_that_rate() {
    let (cc, acks) = rate_probe(10.0);
    let mut d = driver(Profile::Rfc, cc);
    d.write(0, 1_000);
    assert_eq!(d.emitted().len(), 10);
    // Packet i is ACKed at 100 ms + 10 ms x i, and its successor i + 10
    // leaves then, so each packet's ACK comes 100 ms after it left.
    for i in 0..30u64 {
        d.ack(100 * MS + 10 * MS * i, &ack(i + 1, &[]));
    }
    let acks = acks.lock().unwrap();
    assert_eq!(acks.len(), 30);
    for (i, a) in acks.iter().enumerate() {
        let i = i as u64;
        let r = a.rate;
        assert_eq!(a.mss_bytes, 1460);
        assert_eq!(r.delivered_total_pkts, i + 1);
        assert_eq!(r.delivered_time_ns, 100 * MS + 10 * MS * i);
        assert_eq!(r.acked_sacked_pkts, 1);
        assert_eq!(r.losses_pkts, 0);
        // Round 1 left at 0: packet i's RTT is 100 + 10i ms.
        let rtt_ms = if i < 10 { 100 + 10 * i } else { 100 };
        assert_eq!(r.rtt_ns, rtt_ms * MS);
        assert!(r.valid, "ACK {i}: {r:?}");
        let (delivered, interval_ms) = match i {
            // Round 1: every packet left at 0 having seen nothing
            // delivered; the ACK phase runs from 0.
            0..=9 => (i + 1, 100 + 10 * i),
            // Round 2: packet 10 + k left at 100 + 10k ms with k + 1
            // delivered, in the window opened by packet k (sent at 0): the
            // send phase, 100 + 10k ms, is the longer.
            10..=19 => (10, 100 + 10 * (i - 10)),
            // Round 3 on: both phases 100 ms.
            _ => (10, 100),
        };
        assert_eq!(
            (r.delivered_pkts, r.interval_ns),
            (delivered, interval_ms * MS),
            "ACK {i}"
        );
        assert_eq!(r.prior_delivered_pkts, i.saturating_sub(9));
        // The first write is an application-limited bubble of 1 packet
        // (`tp->app_limited = delivered + in flight ?: 1`), cleared once 2
        // are delivered: packets 0-10 (10 left on the first ACK) carry it.
        assert_eq!(r.is_app_limited, i <= 10, "ACK {i}: {r:?}");
    }
}

/// An application that writes 5 packets, then 20 more after its first
/// flight is home: the first write (as every connection's first) and the
/// second find the sender idle with room in the window, so the packets
/// they send are a bubble; samples are application-limited until a packet
/// sent after the bubble was delivered is.
#[test]
fn an_application_limited_phase_marks_samples_until_its_bubble_is_delivered() {
    let (cc, acks) = rate_probe(10.0);
    let mut d = driver(Profile::Rfc, cc);
    d.write(0, 5);
    for i in 0..5u64 {
        d.ack(100 * MS + MS * i, &ack(i + 1, &[]));
    }
    d.write(150 * MS, 20);
    assert_eq!(d.emitted().len(), 15, "5, then a window of 10");
    for i in 5..25u64 {
        d.ack(250 * MS + MS * (i - 5), &ack(i + 1, &[]));
    }
    let acks = acks.lock().unwrap();
    let limited: Vec<bool> = acks.iter().map(|a| a.rate.is_app_limited).collect();
    // Packets 0-4 (first write), 5-14 (sent while the second write's
    // bubble, delivered + in flight = 5, was not yet passed) are marked;
    // packet 15 left after the ACK of packet 5 took the count past 5.
    let expected: Vec<bool> = (0..25).map(|i| i < 15).collect();
    assert_eq!(limited, expected);
}

/// Packet 10 of the second flight is lost; 11-19 are SACKed one by one,
/// the third SACK starts recovery and the retransmission of 10 leaves at
/// 202 ms; its cumulative ACK at 302 ms delivers it alone: SACKed packets
/// count once, and the sample is the retransmission's.
#[test]
fn sacked_packets_after_a_hole_and_a_retransmission() {
    let (cc, acks) = rate_probe(10.0);
    let mut d = driver(Profile::Rfc, cc);
    d.write(0, 1_000);
    d.ack(100 * MS, &ack(10, &[])); // flight 1: 10 packets over 100 ms
                                    // Flight 2 left at 100 ms with nothing out: its window opens then.
    assert_eq!(d.emitted().len(), 20);
    for k in 0..9u64 {
        d.ack(200 * MS + k * MS, &ack(10, &[(11, 12 + k)]));
    }
    let rtx = d.emitted().iter().find(|s| s.retransmit).copied();
    assert_eq!(rtx.map(|s| (s.seq, s.at_ns)), Some((10, 202 * MS)));
    assert!(matches!(d.sender().recovery(), Recovery::Fast { .. }));
    d.ack(302 * MS, &ack(20, &[]));
    let acks = acks.lock().unwrap();
    let s: Vec<_> = acks.iter().map(|a| a.rate).collect();
    assert_eq!((s[0].delivered_pkts, s[0].interval_ns), (10, 100 * MS));
    for k in 0..9usize {
        // Each SACK delivers packet 11 + k, sent at 100 ms after 10 were
        // delivered: k + 1 packets over 100 + k ms.
        let r = s[1 + k];
        assert_eq!(
            (r.delivered_pkts, r.interval_ns, r.prior_delivered_pkts),
            (k as u64 + 1, (100 + k as u64) * MS, 10),
            "SACK {k}"
        );
        assert_eq!(r.delivered_total_pkts, 11 + k as u64);
    }
    // The third SACK (k = 2) marked packet 10 lost.
    assert_eq!(s[3].losses_pkts, 1);
    assert_eq!(s[3].lost_total_pkts, 1);
    let last = s[10];
    // The retransmission left at 202 ms with 13 delivered, in the window
    // opened by packet 13 (sent at 100 ms): 20 - 13 = 7 packets over
    // max(202 - 100, 302 - 202) = 102 ms.
    assert_eq!(last.delivered_total_pkts, 20);
    assert_eq!(last.acked_sacked_pkts, 1);
    assert_eq!(
        (
            last.delivered_pkts,
            last.interval_ns,
            last.prior_delivered_pkts
        ),
        (7, 102 * MS, 13)
    );
    // Its RTT: no send-time sample from retransmitted data (Karn); the
    // timestamp echo of the ACK's trigger, the retransmission: 100 ms.
    assert_eq!(last.rtt_ns, 100 * MS);
}

/// A controller that reads no samples gets none, and its sender keeps no
/// rate state; every controller gets the MSS.
#[test]
fn no_samples_for_a_controller_that_does_not_ask() {
    let p = Probe::new(10.0);
    let acks = p.acks.clone();
    let mut d = driver(Profile::Linux, p);
    assert_eq!(d.sender().rate_sample(), None);
    d.write(0, 100);
    d.ack(100 * MS, &ack(2, &[]));
    let a = acks.lock().unwrap()[0];
    assert_eq!(a.rate, Default::default());
    assert_eq!(a.mss_bytes, 1460);
    let (cc, _) = rate_probe(10.0);
    assert!(driver(Profile::Linux, cc).sender().rate_sample().is_some());
}

/// A controller's rate paces every packet under `rfc`, `tcp.pacing` off:
/// departures 1460 bytes / 1,460,000 B/s = 1 ms apart, to the nanosecond;
/// at 1,000,000 B/s, 1.46 ms.
#[test]
fn a_controller_rate_paces_packet_by_packet() {
    for (rate, gap_ns) in [(1_460_000, MS), (1_000_000, 1_460_000)] {
        let p = Probe {
            rate: Some(rate),
            ..Probe::new(100.0)
        };
        let mut d = driver(Profile::Rfc, p);
        d.write(0, 50);
        assert_eq!(d.emitted().len(), 1, "the first leaves, the rest wait");
        d.run_timers(500 * MS, false);
        let times: Vec<u64> = d.emitted().iter().map(|s| s.at_ns).collect();
        let expected: Vec<u64> = (0..50).map(|i| i * gap_ns).collect();
        assert_eq!(times, expected);
        assert_eq!(d.sender().pacing_rate_bytes_per_sec(), Some(rate));
    }
}

/// Under `linux`, `tcp_tso_autosize` bursts: at 6,000,000 B/s an skb is
/// (6e6 >> 10) / 1460 = 4 segments; the skbs that end before the 10th
/// segment leave unpaced (0-3, 4-7), the one that reaches it (8-11) moves
/// the clock by 4 x 1460 bytes / 6e6 B/s = 973,333 ns, and so on.
#[test]
fn linux_paces_tso_sized_bursts() {
    let p = Probe {
        rate: Some(6_000_000),
        ..Probe::new(100.0)
    };
    let mut d = driver(Profile::Linux, p);
    d.write(0, 40);
    d.run_timers(500 * MS, false);
    let times: Vec<u64> = d.emitted().iter().map(|s| s.at_ns).collect();
    let expected: Vec<u64> = (0..40u64)
        .map(|i| if i < 12 { 0 } else { (i / 4 - 2) * 973_333 })
        .collect();
    assert_eq!(times, expected);
}

/// Linux's own rate (`tcp.pacing`): MSS x cwnd / SRTT x 200 % while cwnd <
/// ssthresh / 2, else x 120 %: with 1460-byte payloads, cwnd 10 and an
/// SRTT of 100 ms, 292,000 or 175,200 B/s; ssthresh 21 is the boundary
/// (integer halving: 10 < 21 / 2 = 10 is false). No rate before the first
/// RTT sample.
#[test]
fn linux_rate_formula_in_slow_start_and_avoidance() {
    for (ssthresh, ss_pct, ca_pct, rate) in [
        (f64::INFINITY, 200, 120, 292_000),
        (22.0, 200, 120, 292_000),
        (21.0, 200, 120, 175_200),
        (15.0, 200, 120, 175_200),
        (f64::INFINITY, 300, 120, 438_000),
        (15.0, 200, 100, 146_000),
    ] {
        let mut cfg = config(Profile::Linux, 10.0);
        cfg.pacing = true;
        cfg.pacing_ss_ratio_pct = ss_pct;
        cfg.pacing_ca_ratio_pct = ca_pct;
        cfg.initial_window.ssthresh_pkts = ssthresh;
        let cc = Reno::new(cfg.initial_window);
        let mut d = SenderDriver::new(TcpSender::new(0, cfg, Box::new(cc), None));
        d.handshake(100 * MS);
        d.write(0, 1);
        assert_eq!(
            d.sender().pacing_rate_bytes_per_sec(),
            Some(rate),
            "ssthresh {ssthresh}, ratios {ss_pct}/{ca_pct}"
        );
    }
    let mut cfg = config(Profile::Linux, 10.0);
    cfg.pacing = true;
    let cc = Reno::new(cfg.initial_window);
    let mut d = SenderDriver::new(TcpSender::new(0, cfg, Box::new(cc), None));
    d.write(0, 30);
    assert_eq!(d.sender().pacing_rate_bytes_per_sec(), Some(u64::MAX));
    assert_eq!(d.emitted().len(), 10, "IW10 unpaced");
}

/// Pacing off (the default) and no controller rate: no pacer at all.
#[test]
fn unpaced_by_default() {
    let cfg = config(Profile::Linux, 10.0);
    let cc = Reno::new(cfg.initial_window);
    let d = SenderDriver::new(TcpSender::new(0, cfg, Box::new(cc), None));
    assert_eq!(d.sender().pacing_rate_bytes_per_sec(), None);
}

/// A `cong_control` controller keeps its window in fast recovery under
/// `linux`: no PRR. Packets 0-9 leave at 0; ACKs SACK 1, 1-2, ..., 1-6.
/// The first two (Open, window 10) each let one new packet go (10, 11);
/// the third SACK makes RACK mark packet 0 lost (three SACKed: no
/// reordering window) and recovery starts with pipe 12 - 3 - 1 = 8.
/// The controller's window, 10: the retransmission and packet 12 on that
/// ACK, then one new packet per SACK (13, 14, 15): 17 sent, window 10.
/// PRR (RFC 6937, the controller's ssthresh 4, prior cwnd 10): sndcnt =
/// ceil(4 x prr_delivered / 10) - prr_out = 1, 0, 1, 0 on the four ACKs in
/// recovery: the retransmission and packet 12, 14 sent, and its window
/// after the last ACK is pipe 7 + 0 = 7. Every ACK reaches `on_ack`, the
/// four in recovery with `in_recovery` set.
#[test]
fn a_controller_that_controls_recovery_keeps_its_window() {
    let run = |controls: bool| {
        let p = Probe {
            controls_recovery: controls,
            ssthresh: 4.0,
            ..Probe::new(10.0)
        };
        let acks = p.acks.clone();
        let mut d = driver(Profile::Linux, p);
        d.handshake(100 * MS);
        d.write(0, 1_000);
        for k in 1..=6u64 {
            d.ack(100 * MS + k * 10_000, &ack(0, &[(1, 1 + k)]));
        }
        let state = d.state();
        let acks = acks.lock().unwrap();
        let in_recovery: Vec<bool> = acks.iter().map(|a| a.in_recovery).collect();
        (
            state.ca_state,
            state.cwnd_pkts,
            in_recovery,
            d.emitted().len(),
        )
    };
    let in_recovery = vec![false, false, true, true, true, true];
    assert_eq!(run(true), (3, 10, in_recovery.clone(), 17));
    assert_eq!(run(false), (3, 7, in_recovery, 14));
}

fn scenario(tcp: &str, cc: &str) -> String {
    format!(
        r#"
        [network]
        topology = "dumbbell"
        [network.bottleneck]
        rate = "100Mbps"
        delay = "10ms"
        queue = "1bdp"
        discipline = "priority"
        [[flows]]
        cc = "{cc}"
        tcp = {{ {tcp} }}
        [run]
        duration = "2s"
        "#
    )
}

/// `tcp.pacing`, `tcp.pacing_ss_ratio`, `tcp.pacing_ca_ratio`: checked
/// with their field named, in Linux's sysctl range 0..=1000 percent; not
/// with PLT.
#[test]
fn pacing_fields_are_checked_with_their_names() {
    let check =
        |tcp: &str, cc: &str| build(&Scenario::from_toml(&scenario(tcp, cc)).unwrap()).err();
    for (tcp, cc, field) in [
        ("pacing = true", "reno", None),
        ("pacing = true, profile = \"ns2\"", "reno", None),
        ("pacing_ss_ratio = 0, pacing_ca_ratio = 1000", "reno", None),
        ("pacing_ss_ratio = 1001", "reno", Some("pacing_ss_ratio")),
        ("pacing_ca_ratio = 1001", "cubic", Some("pacing_ca_ratio")),
        ("pacing = true", "plt", Some("pacing")),
        ("pacing = false", "plt", None),
    ] {
        let e = check(tcp, cc);
        assert_eq!(
            e.as_ref().map(|e| e.field.clone()),
            field.map(|f| format!("flows[0].tcp.{f}")),
            "{tcp} {cc}: {e:?}"
        );
        if let Some(e) = e {
            assert!(!e.to_string().contains('\n'), "one line: {e}");
        }
    }
    let e = check("pacing_ss_ratio = 1001", "reno").unwrap();
    assert!(
        e.message.contains("allowed 0..=1000 percent"),
        "{}",
        e.message
    );
    let e = Scenario::from_toml(&scenario("pacing = 1", "reno")).err();
    assert!(e.is_some(), "pacing is a boolean");
}

/// In the engine: a paced `linux` CUBIC flow runs on its pacing timer
/// (it keeps sending: at least one packet for every ms of the run), and
/// the rate in force at the end is Linux's formula of the sender's state
/// then; the same flow unpaced has no pacer.
#[test]
fn a_paced_flow_runs_in_the_engine() {
    for pacing in [true, false] {
        let text = scenario(&format!("profile = \"linux\", pacing = {pacing}"), "cubic");
        let mut sim = build(&Scenario::from_toml(&text).unwrap()).unwrap();
        sim.run();
        let Endpoints::Tcp { sender, .. } = &sim.flows[0].endpoints else {
            panic!("a TCP flow")
        };
        assert!(
            sender.counters.sent_pkts > 2_000,
            "{}",
            sender.counters.sent_pkts
        );
        if !pacing {
            assert_eq!(sender.pacing_rate_bytes_per_sec(), None);
            continue;
        }
        let cc = sender.cc();
        let (cwnd, ssthresh) = (sender.window_pkts(), cc.ssthresh());
        let ratio = if ssthresh.is_finite() && cwnd >= ssthresh as u64 / 2 {
            120
        } else {
            200
        };
        let expected = u128::from(1460 * ratio * cwnd.max(sender.scoreboard().outstanding()))
            * 1_000_000_000
            / (100 * u128::from(sender.rtt().stats().smoothed_ns));
        assert_eq!(sender.pacing_rate_bytes_per_sec(), Some(expected as u64));
    }
}
