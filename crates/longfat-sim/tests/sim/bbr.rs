//! BBR (crates/longfat-cc/src/bbr.rs) end to end on the paced, rate-sampling
//! `linux` sender: the claims of issue 31 about BBR v1 (Cardwell et al.,
//! ACM Queue 2016), in short runs.

use crate::common;
use common::{f64_of, link, run_toml};
use longfat_sim::Simulation;

/// One flow of `cc` under the `linux` profile on a dumbbell of `rate`, a
/// 70 ms RTT (33 ms each way plus 1 ms access links), a 1-BDP buffer and
/// random loss `loss` on the bottleneck.
fn dumbbell(cc: &str, rate: &str, loss: f64, duration_s: u32) -> serde_json::Value {
    dumbbell_run(cc, rate, loss, duration_s).1
}

/// As `dumbbell`, with the simulation (its time series) too.
fn dumbbell_run(
    cc: &str,
    rate: &str,
    loss: f64,
    duration_s: u32,
) -> (Simulation, serde_json::Value) {
    run_toml(&format!(
        r#"
        [network]
        topology = "dumbbell"
        [network.bottleneck]
        rate = "{rate}"
        delay = "33ms"
        queue = "1bdp"
        loss = {loss}
        [network.access]
        rate = "10Gbps"
        delay = "1ms"
        [[flows]]
        cc = "{cc}"
        [flows.tcp]
        profile = "linux"
        [run]
        duration = "{duration_s}s"
        measure_from = "5s"
        sample_interval = "10ms"
        "#
    ))
}

/// 100 Mbit/s x 70 ms: BDP = 100e6 x 0.070 / 8 / 1500 = 583 packets.
const BDP_100M_PKTS: f64 = 583.3;

/// PROBE_BW holds cwnd at cwnd_gain (2) x BDP plus the TSO budget (3 x
/// `bbr_tso_segs_goal` = 3 x 8 at 12.4 MB/s: 12 375 000 >> 10 = 12 084
/// bytes = 8 segments), the ACK-aggregation allowance (the delayed-ACK
/// excess, `bbr_ack_aggregation_cwnd`) and 2 in the probing phase: within
/// 2 and 2.1 BDP; so at most about 1 BDP can queue, and BBR keeps the link
/// busy with far less. 8 s: before PROBE_RTT (10 s).
#[test]
fn probe_bw_holds_cwnd_at_two_bdp_and_queues_less_than_one_bdp() {
    let s = dumbbell("bbr", "100Mbps", 0.0, 8);
    let l = link(&s, "bottleneck");
    let (util, queue) = (f64_of(&l["utilization"]), f64_of(&l["mean_queue_pkts"]));
    let cwnd = f64_of(&s["flows"][0]["final_cwnd_pkts"]);
    assert!((0.95..=1.0).contains(&util), "utilization {util}");
    assert!(
        queue > 0.0 && queue < BDP_100M_PKTS,
        "mean queue {queue} packets"
    );
    let two_bdp = 2.0 * BDP_100M_PKTS;
    assert!(
        (two_bdp..=1.05 * two_bdp).contains(&cwnd),
        "cwnd {cwnd}, 2 BDP {two_bdp}"
    );
    assert_eq!(f64_of(&s["flows"][0]["timeouts"]), 0.0);
}

/// 1 Gbit/s x 70 ms with 0.1 % random loss: BBR does not take loss as a
/// signal and keeps the link above 90 % busy; CUBIC's window is the
/// loss rate's (Mathis et al.: 1.22 x 1448 x 8 / (0.07 s x sqrt(0.001)) =
/// 6.4 Mbit/s, 0.6 % of the link; CUBIC's Reno-friendly region gives a
/// little more), between half and five times that.
#[test]
fn bbr_keeps_a_lossy_long_fat_link_busy_where_cubic_collapses() {
    let util = |cc| {
        let s = dumbbell(cc, "1Gbps", 0.001, 15);
        let l = link(&s, "bottleneck");
        assert!(f64_of(&l["drops_random"]) > 0.0, "{cc}: no random loss");
        f64_of(&l["utilization"])
    };
    let (bbr, cubic) = (util("bbr"), util("cubic"));
    assert!((0.9..=1.0).contains(&bbr), "bbr utilization {bbr}");
    assert!(
        (0.0032..=0.032).contains(&cubic),
        "cubic utilization {cubic}"
    );
}

/// PROBE_RTT comes every 10 s on a path whose propagation delay never
/// changes: a sample equal to the min does not refresh the min-RTT filter
/// (`bbr_update_min_rtt`, `<` since Linux 5.10), so it expires 10 s after
/// the stamp (the first minimal sample in STARTUP, then each PROBE_RTT's
/// exit), and the window dips to 4 packets (`bbr_cwnd_min_target`) for
/// 200 ms and a round: with the drain of 1 BDP at 4 packets in flight, 200
/// ms plus 1 to 2 RTTs (70 ms each). In a 25 s run: two dips, the second
/// 10 s (within a 10 ms sample) after the first one ended.
#[test]
fn probe_rtt_every_ten_seconds_for_200_ms_and_a_round() {
    let (sim, _) = dumbbell_run("bbr", "100Mbps", 0.0, 25);
    let f = &sim.metrics.flows;
    let at_min: Vec<f64> = (0..f.time_ns.len())
        .filter(|&i| f.flow[i] == 0 && f.cwnd_pkts[i] <= 4.0)
        .map(|i| f.time_ns[i] as f64 / 1e9)
        .collect();
    // Episodes: runs of samples 10 ms apart.
    let mut dips: Vec<(f64, f64)> = Vec::new();
    for &t in &at_min {
        match dips.last_mut() {
            Some((_, end)) if t - *end < 0.015 => *end = t,
            _ => dips.push((t, t)),
        }
    }
    assert_eq!(dips.len(), 2, "PROBE_RTT episodes {dips:?}");
    let (start1, end1) = dips[0];
    assert!(
        (10.0..11.0).contains(&start1),
        "first PROBE_RTT at {start1} s"
    );
    for &(start, end) in &dips {
        let length = end - start;
        assert!(
            (0.19..=0.35).contains(&length),
            "PROBE_RTT held 4 packets for {length} s"
        );
    }
    let gap = dips[1].0 - end1;
    assert!((9.98..=10.03).contains(&gap), "{gap} s between PROBE_RTTs");
}

/// One BBR flow's STARTUP, watched every millisecond: what the sender and
/// its controller (through `CongestionControl::inspect`) show.
struct StartupWatch {
    /// When the max-bandwidth filter first held a sample of at least 99 %
    /// of the bottleneck's payload rate, ns.
    plateau_ns: u64,
    /// When the controller left STARTUP (the STARTUP -> DRAIN transition).
    exit_ns: u64,
    /// Packet-timed round trips, counted from the sender's delivery-rate
    /// estimator (tcp/rate.rs), not from BBR: a round starts when a packet
    /// sent after the previous round's start, new or retransmitted, is
    /// delivered (cumulatively or by SACK); each entry is a round's start, ns.
    round_starts_ns: Vec<u64>,
    /// BBR's own round count (`bbr->rtt_cnt`) at the exit.
    rtt_cnt_at_exit: u32,
    /// When the sender entered fast recovery, ns.
    recoveries_ns: Vec<u64>,
    /// When BBR's `rtt_cnt` reached 1, 2, ... (index 0: the start).
    bbr_round_starts_ns: Vec<u64>,
    /// The largest delivery rate sampled (not app-limited) by each round
    /// start, packets per µs << 24.
    max_bw_at_round_start: Vec<u64>,
}

/// Runs one `bbr` flow under `linux` on the dumbbell of [`dumbbell`] (no
/// random loss), one event at a time until it leaves STARTUP.
fn watch_startup(rate: &str, bottleneck_bps: f64) -> StartupWatch {
    use longfat_cc::bbr::{Bbr, Mode, BW_UNIT};
    use longfat_sim::flow::Endpoints;
    use longfat_sim::sim::RunStatus;
    use longfat_sim::tcp::sender::Recovery;
    let text = format!(
        r#"
        [network]
        topology = "dumbbell"
        [network.bottleneck]
        rate = "{rate}"
        delay = "33ms"
        queue = "1bdp"
        [network.access]
        rate = "10Gbps"
        delay = "1ms"
        [[flows]]
        cc = "bbr"
        [flows.tcp]
        profile = "linux"
        [run]
        duration = "5s"
        "#
    );
    let mut sim = longfat_sim::build(&longfat_sim::Scenario::from_toml(&text).unwrap()).unwrap();
    // 1500-byte packets: the bottleneck's rate in packets per µs << 24,
    // BBR's unit (`BW_SCALE`).
    let bottleneck_bw = bottleneck_bps / 8.0 / 1500.0 / 1e6 * BW_UNIT as f64;
    let mut plateau_ns = None;
    let mut round_starts_ns = vec![0];
    // The connection's delivered count when the current round started.
    let mut round_mark = 0;
    let (mut in_fast, mut recoveries_ns) = (false, Vec::new());
    let mut bbr_round_starts_ns = vec![0];
    let (mut max_bw, mut max_bw_at_round_start) = (0u64, vec![0]);
    // Event by event, so that every ACK's sample is seen.
    while sim.run_until_limited(5_000_000_000, 1) == RunStatus::EventLimit {
        let now = sim.now_ns();
        let Endpoints::Tcp { sender, .. } = &sim.flows[0].endpoints else {
            panic!("a TCP flow")
        };
        // The newest sample's packet was sent when the connection had
        // delivered `prior_delivered_pkts`: at least the count at the
        // round's start means it left after that start.
        let rs = sender.rate_sample().unwrap_or_default();
        if rs.valid && rs.interval_ns >= 1_000 && !rs.is_app_limited {
            // The sample in BBR's unit (`bbr_update_bw`).
            let bw = rs.delivered_pkts * BW_UNIT / (rs.interval_ns / 1_000);
            max_bw = max_bw.max(bw);
        }
        if rs.delivered_total_pkts > 0 && rs.prior_delivered_pkts >= round_mark {
            round_starts_ns.push(now);
            max_bw_at_round_start.push(max_bw);
            round_mark = rs.delivered_total_pkts;
        }
        // Entering fast recovery restarts the round in progress without
        // counting one (`bbr_set_cwnd_to_recover_or_restore`: "start round
        // now", next_rtt_delivered = tp->delivered).
        let fast = matches!(sender.recovery(), Recovery::Fast { .. });
        if fast && !in_fast {
            round_mark = rs.delivered_total_pkts;
            recoveries_ns.push(now);
        }
        in_fast = fast;
        let b: &Bbr = sender.cc().inspect().unwrap().downcast_ref().unwrap();
        if b.rtt_cnt() as usize >= bbr_round_starts_ns.len() {
            bbr_round_starts_ns.push(now);
        }
        if plateau_ns.is_none() && f64::from(b.max_bw()) >= 0.99 * bottleneck_bw {
            plateau_ns = Some(now);
        }
        if b.mode() != Mode::Startup {
            assert_eq!(b.mode(), Mode::Drain, "STARTUP leaves for DRAIN");
            return StartupWatch {
                plateau_ns: plateau_ns.expect("the plateau before the exit"),
                exit_ns: now,
                round_starts_ns,
                rtt_cnt_at_exit: b.rtt_cnt(),
                recoveries_ns,
                bbr_round_starts_ns,
                max_bw_at_round_start,
            };
        }
    }
    panic!("still in STARTUP after 5 s");
}

/// Issue 31: "BBR's STARTUP exits within 3 round trips of the bandwidth
/// plateau", on 1 Gbit/s and 100 Mbit/s x 70 ms (BDP 5833 and 583
/// packets, a 1-BDP buffer).
///
/// The plateau is the first delivery-rate sample at the bottleneck's rate
/// (99 % of it; 1500-byte packets): from then on no round can see the 25 %
/// growth that `bbr_check_full_bw_reached` (tcp_bbr.c) waits for, so its
/// full_bw_cnt counts the round starts after it: the first takes the
/// plateau sample into full_bw (growth over the round before), the next
/// three find none, and the third sets full_bw_reached; `bbr_check_drain`
/// enters DRAIN on that same ACK. So the exit comes at the start of the
/// 4th round after the one the plateau sample arrived in: 3 round trips
/// after the first round start after the plateau, plus the slack from the
/// sample to that round start (less than one round: the check runs only
/// at round starts). The window reaching 1 BDP is not the plateau: the
/// delivery rate a window produces is sampled a round trip later.
///
/// A round trip is one RTT of delivered data, not wall time: it ends when
/// a packet sent after its start is delivered (`bbr_update_bw`'s
/// packet-timed rounds by `prior_delivered`), counted here from the
/// sender's rate estimator, and must match BBR's own `rtt_cnt` round for
/// round. Its wall length grows with the queue STARTUP builds (70 to 140
/// ms), and the round in progress when STARTUP's overshoot overflows the
/// buffer and recovery starts restarts there (Linux
/// `bbr_set_cwnd_to_recover_or_restore`: next_rtt_delivered =
/// tp->delivered), which the count here follows. At 1 Gbit/s: plateau at
/// 845 ms in round 11, slack 35 ms, then rounds of 210 (restarted at the
/// 950 ms recovery), 140 and 140 ms: DRAIN at 1370 ms.
#[test]
fn startup_exits_three_round_trips_after_the_bandwidth_plateau() {
    for (rate, bps) in [("1Gbps", 1e9), ("100Mbps", 1e8)] {
        let w = watch_startup(rate, bps);
        // BBR counted the rounds the transport's samples delimit.
        assert_eq!(w.round_starts_ns, w.bbr_round_starts_ns, "{rate}");
        let round_of = |t: u64| w.round_starts_ns.iter().rposition(|&s| s <= t).unwrap();
        let plateau_round = round_of(w.plateau_ns);
        let round_ns = |k: usize| w.round_starts_ns[k + 1] - w.round_starts_ns[k];
        let slack_ns = w.round_starts_ns[plateau_round + 1] - w.plateau_ns;
        println!(
            "{rate}: plateau {} us in round {plateau_round}, exit {} us (round {}); slack {} us; rounds {:?} us; recoveries {:?} ns",
            w.plateau_ns / 1_000,
            w.exit_ns / 1_000,
            w.rtt_cnt_at_exit,
            slack_ns / 1_000,
            (plateau_round..w.round_starts_ns.len() - 1)
                .map(|k| round_ns(k) / 1_000)
                .collect::<Vec<_>>(),
            w.recoveries_ns
        );
        // The round start after the plateau either grows 25 % over the
        // last round that did (then 3 more round starts end STARTUP) or
        // not (it is the first of the 3): exit - plateau = slack + 3 or 2
        // round trips.
        let m = &w.max_bw_at_round_start;
        let last_growth = (1..=plateau_round)
            .rev()
            .find(|&k| m[k] * 256 >= m[k - 1] * 320 || k == 1)
            .unwrap();
        let grows = m[plateau_round + 1] * 256 >= m[last_growth] * 320;
        let trips = if grows { 3 } else { 2 };
        assert_eq!(w.round_starts_ns.len(), plateau_round + 2 + trips, "{rate}");
        assert_eq!(
            w.exit_ns,
            w.round_starts_ns[plateau_round + 1 + trips],
            "{rate}"
        );
        assert!(
            slack_ns < round_ns(plateau_round),
            "{rate}: slack {slack_ns} ns"
        );
    }
}

/// The conformance driver's sender (`scenario::tcp_sender`, which
/// `longfat conformance` and the Python `SenderDriver` build) seeds its
/// controller as the simulator seeds flow 0 of a run with the same
/// `run.seed` (`rng::cc_seed`), so BBR draws the same PROBE_BW phase in
/// both: the two controllers are equal, state and random stream; another
/// seed gives another stream.
#[test]
fn the_driver_seeds_bbr_as_the_simulator_does() {
    use longfat_cc::bbr::Bbr;
    use longfat_sim::flow::Endpoints;
    use longfat_sim::scenario::{tcp_sender, FlowSpec};
    let debug = |cc: &dyn longfat_cc::CongestionControl| {
        let b: &Bbr = cc.inspect().unwrap().downcast_ref().unwrap();
        format!("{b:?}")
    };
    let flow = r#"{"cc": "bbr", "tcp": {"profile": "linux"}}"#;
    let driver = |seed| {
        let spec = FlowSpec::from_json(flow).unwrap();
        debug(tcp_sender("flow", spec.transport(), seed).unwrap().cc())
    };
    let sim = longfat_sim::build(
        &longfat_sim::Scenario::from_toml(
            r#"
            [network]
            topology = "dumbbell"
            [network.bottleneck]
            rate = "100Mbps"
            delay = "33ms"
            queue = "1bdp"
            [[flows]]
            cc = "bbr"
            [flows.tcp]
            profile = "linux"
            [run]
            duration = "1s"
            seed = 7
            "#,
        )
        .unwrap(),
    )
    .unwrap();
    let Endpoints::Tcp { sender, .. } = &sim.flows[0].endpoints else {
        panic!("a TCP flow")
    };
    assert_eq!(driver(7), debug(sender.cc()));
    assert_ne!(driver(8), debug(sender.cc()));
}

/// A controller with a fixed window of 10 that records every
/// `on_tx_start` (time, app-limited) and asks for rate samples, so that
/// the sender keeps `tp->app_limited`.
#[derive(Clone)]
struct TxStartLog(std::sync::Arc<std::sync::Mutex<Vec<(u64, bool)>>>);

impl longfat_cc::CongestionControl for TxStartLog {
    fn name(&self) -> &'static str {
        "tx_start_log"
    }
    fn cwnd(&self) -> f64 {
        10.0
    }
    fn ssthresh(&self) -> f64 {
        f64::INFINITY
    }
    fn on_ack(&mut self, _: &longfat_cc::AckEvent) {}
    fn on_congestion_event(&mut self, _: &longfat_cc::LossEvent) {}
    fn on_rto(&mut self, _: &longfat_cc::RtoEvent) {}
    fn wants_rate_samples(&self) -> bool {
        true
    }
    fn on_tx_start(&mut self, now_ns: u64, app_limited: bool) {
        self.0.lock().unwrap().push((now_ns, app_limited));
    }
    /// Logged as (u64::MAX, paced).
    fn set_paced(&mut self, paced: bool) {
        self.0.lock().unwrap().push((u64::MAX, paced));
    }
}

/// The sender tells the controller it paces (`set_paced`, once, when the
/// connection is built; Linux's `sk_pacing_status`), so that CUBIC's
/// HyStart keeps its ACK-train threshold whole; an unpaced flow's
/// controller is never told anything.
#[test]
fn a_paced_sender_tells_its_controller() {
    use longfat_sim::tcp::sender::TcpSender;
    use longfat_sim::tcp::{Profile, TcpConfig};
    for (pacing, told) in [(true, vec![(u64::MAX, true)]), (false, vec![])] {
        let log = TxStartLog(Default::default());
        let cfg = TcpConfig {
            profile: Profile::Linux,
            pacing,
            ..TcpConfig::default()
        };
        let _s = TcpSender::new(0, cfg, Box::new(log.clone()), None);
        assert_eq!(*log.0.lock().unwrap(), told, "pacing {pacing}");
    }
}

/// CA_EVENT_TX_START (Linux `tcp_event_data_sent`: a data packet leaves
/// with `tcp_packets_in_flight` 0, which BBR's `bbr_cwnd_event` answers
/// when `tp->app_limited`): under rfc, ns2 and linux alike the sender
/// calls `on_tx_start` for the connection's first packet and for the first
/// packet after an idle period (everything delivered, then the application
/// writes again), both application-limited, and for no packet sent while
/// others are in flight.
#[test]
fn every_profile_signals_the_restart_from_idle() {
    use longfat_sim::tcp::driver::{PeerAck, SenderDriver};
    use longfat_sim::tcp::sender::TcpSender;
    use longfat_sim::tcp::{Profile, TcpConfig};
    const MS: u64 = 1_000_000;
    for profile in [Profile::Rfc, Profile::Ns2, Profile::Linux] {
        let log = TxStartLog(Default::default());
        let cfg = TcpConfig {
            profile,
            ..TcpConfig::default()
        };
        let mut d = SenderDriver::new(TcpSender::new(0, cfg, Box::new(log.clone()), None));
        d.handshake(100 * MS);
        let ack = |cum| PeerAck {
            cum_pkts: cum,
            window_pkts: 1000,
            ..PeerAck::default()
        };
        d.write(0, 4);
        d.ack(100 * MS, &ack(2));
        d.write(150 * MS, 2); // 2 still in flight: no event
        d.ack(200 * MS, &ack(6));
        d.write(700 * MS, 3); // idle since 200 ms
        assert_eq!(d.emitted().len(), 9, "{profile:?}");
        assert_eq!(
            *log.0.lock().unwrap(),
            [(0, true), (700 * MS, true)],
            "{profile:?}"
        );
    }
}
