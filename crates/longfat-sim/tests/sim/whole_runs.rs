//! Short whole runs checked against closed-form expectations.

use crate::common;
use common::{f64_of, link, run_toml};

/// Reno over one bottleneck with buffer B and bandwidth-delay product P
/// (packets): cwnd saws between (P+B)/2 and P+B. While cwnd < P the link is
/// underused (rate cwnd/RTT); above P it is full and the queue grows. Summing
/// packets and time over the two phases of one cycle gives the utilization.
fn reno_sawtooth_utilization(p: f64, b: f64) -> f64 {
    if b >= p {
        return 1.0;
    }
    let low_pkts = (3.0 * p + b) / 4.0 * (p - b) / 2.0;
    let low_time = (p - b) / 2.0; // in base RTTs
    let high_pkts = (2.0 * p + b) / 2.0 * b;
    let high_time = high_pkts / p; // link full: P packets per base RTT
    (low_pkts + high_pkts) / (p * (low_time + high_time))
}

fn single_reno(queue: &str) -> serde_json::Value {
    // 12 Mbit/s, 100 ms: P = 12e6 * 0.1 / 8 / 1500 = 100 packets.
    let (_, s) = run_toml(&format!(
        r#"
        [network]
        topology = "dumbbell"
        [network.bottleneck]
        rate = "12Mbps"
        delay = "50ms"
        queue = "{queue}"
        [network.access]
        rate = "1Gbps"
        [[flows]]
        cc = "reno"
        [run]
        duration = "1200s"
        measure_from = "60s"
        "#
    ));
    s
}

#[test]
fn reno_fills_the_link_with_a_bdp_buffer() {
    let s = single_reno("100pkt");
    let u = f64_of(&link(&s, "bottleneck")["utilization"]);
    assert!(u > 0.995, "utilization {u}");
}

#[test]
fn reno_utilization_with_quarter_bdp_buffer_matches_sawtooth_model() {
    let s = single_reno("25pkt");
    let u = f64_of(&link(&s, "bottleneck")["utilization"]);
    let model = reno_sawtooth_utilization(100.0, 25.0);
    assert!((model - 0.8929).abs() < 1e-3);
    assert!((u - model).abs() < 0.02, "utilization {u}, model {model}");
}

#[test]
fn reno_utilization_with_one_packet_buffer_is_three_quarters() {
    let s = single_reno("1pkt");
    let u = f64_of(&link(&s, "bottleneck")["utilization"]);
    let model = reno_sawtooth_utilization(100.0, 1.0);
    assert!((u - model).abs() < 0.025, "utilization {u}, model {model}");
}

#[test]
fn same_rtt_reno_flows_share_equally() {
    let (_, s) = run_toml(
        r#"
        [network]
        topology = "dumbbell"
        [network.bottleneck]
        rate = "10Mbps"
        delay = "20ms"
        queue = "1bdp"
        [[flows]]
        cc = "reno"
        count = 4
        start_spacing = "3s"
        [run]
        duration = "900s"
        measure_from = "150s"
        "#,
    );
    let jain = f64_of(&s["jain_fairness"]);
    assert!(jain > 0.98, "Jain index {jain}: {:#}", s["flows"]);
    let total = f64_of(&s["tcp_goodput_bps"]);
    assert!(
        total > 0.97 * 10e6 * 1460.0 / 1500.0,
        "total goodput {total}"
    );
}

#[test]
fn reno_under_random_loss_follows_the_square_root_law() {
    // No congestion (1 Gbps, huge buffer); Bernoulli loss p on data packets.
    // Mathis et al.: W = C / sqrt(p) packets per RTT, C = sqrt(3/2) = 1.22 for
    // periodic loss and about 1.31 for independent loss.
    let p: f64 = 1e-3;
    let (sim, s) = run_toml(&format!(
        r#"
        [network]
        topology = "dumbbell"
        [network.bottleneck]
        rate = "1Gbps"
        delay = "50ms"
        queue = "100000pkt"
        loss = {p}
        [[flows]]
        cc = "reno"
        [run]
        duration = "1500s"
        measure_from = "100s"
        seed = 7
        "#
    ));
    let goodput = f64_of(&s["flows"][0]["goodput_bps"]);
    let rtt = sim.flows[0].base_rtt_ns as f64 / 1e9;
    let w = goodput / 8.0 / 1460.0 * rtt; // packets per RTT
    let c = w * p.sqrt();
    assert!((1.15..=1.42).contains(&c), "C = {c} (W = {w})");
}

#[test]
fn slow_start_overshoot_of_a_large_window_recovers_without_timeout() {
    // 2.4 Gbps x 200 ms: BDP 40,000 packets. Slow start overshoots by a
    // window, losing tens of thousands of packets in one window; SACK
    // recovery must repair them all without an RTO.
    let (sim, s) = run_toml(
        r#"
        [network]
        topology = "dumbbell"
        [network.bottleneck]
        rate = "2.4Gbps"
        delay = "100ms"
        queue = "10000pkt"
        [[flows]]
        cc = "reno"
        [run]
        duration = "20s"
        "#,
    );
    let f = &s["flows"][0];
    assert_eq!(f["timeouts"], 0, "{f:#}");
    let rtx = f["retransmits"].as_u64().unwrap();
    assert!(rtx >= 5_000, "retransmits {rtx}");
    assert_eq!(
        rtx,
        link(&s, "bottleneck")["drops_overflow"].as_u64().unwrap(),
        "each drop repaired once"
    );
    let peak = sim
        .metrics
        .flows
        .cwnd_pkts
        .iter()
        .cloned()
        .fold(0.0, f64::max);
    assert!(peak > 50_000.0, "peak cwnd {peak}");
}

#[test]
fn one_packet_transfer_takes_exactly_the_hand_computed_time() {
    let (_, s) = run_toml(
        r#"
        [network]
        topology = "dumbbell"
        [network.bottleneck]
        rate = "1Gbps"
        delay = "10ms"
        queue = "10pkt"
        [network.access]
        rate = "10Gbps"
        delay = "1ms"
        [[flows]]
        cc = "reno"
        size = "1pkt"
        start = "1s"
        [run]
        duration = "2s"
        "#,
    );
    // Data 1500 B: 1.2 us + 1 ms, 12 us + 10 ms, 1.2 us + 1 ms.
    // ACK 40 B: 32 ns + 1 ms, 320 ns + 10 ms, 32 ns + 1 ms.
    let data_ns = 1_200 + 12_000 + 1_200 + 12_000_000;
    let ack_ns = 32 + 320 + 32 + 12_000_000;
    let t = f64_of(&s["flows"][0]["completion_time_s"]);
    assert_eq!((t * 1e9).round() as u64, data_ns + ack_ns);
}

#[test]
fn strict_priority_gives_class_zero_the_link() {
    // TCP in class 1 gets only what a class-0 CBR source leaves.
    let scenario = |tcp_class: u32, udp_class: u32, udp_rate: &str| {
        format!(
            r#"
            [network]
            topology = "dumbbell"
            [network.bottleneck]
            rate = "100Mbps"
            delay = "10ms"
            queue = "200pkt"
            discipline = "priority"
            classes = 2
            [[flows]]
            cc = "reno"
            tcp = {{ priority_class = {tcp_class} }}
            [[udp]]
            pattern = "cbr"
            rate = "{udp_rate}"
            priority_class = {udp_class}
            [run]
            duration = "60s"
            measure_from = "10s"
            "#
        )
    };
    let (_, s) = run_toml(&scenario(1, 0, "60Mbps"));
    let tcp = f64_of(&s["flows"][0]["goodput_bps"]);
    let udp = f64_of(&s["flows"][1]["goodput_bps"]);
    assert!((udp - 60e6).abs() < 0.6e6, "class-0 UDP {udp}");
    assert!(
        tcp > 0.95 * 40e6 * 1460.0 / 1500.0 && tcp < 40e6,
        "class-1 TCP {tcp}"
    );
    // Reversed: a class-1 flood cannot hurt class-0 TCP.
    let (_, s) = run_toml(&scenario(0, 1, "100Mbps"));
    let tcp = f64_of(&s["flows"][0]["goodput_bps"]);
    assert!(tcp > 0.95 * 100e6 * 1460.0 / 1500.0, "class-0 TCP {tcp}");
}

#[test]
fn onoff_source_averages_rate_times_duty_cycle() {
    let (_, s) = run_toml(
        r#"
        [network]
        topology = "dumbbell"
        [network.bottleneck]
        rate = "1Gbps"
        delay = "1ms"
        queue = "1000pkt"
        [[udp]]
        pattern = "onoff"
        rate = "10Mbps"
        on_mean = "100ms"
        off_mean = "300ms"
        distribution = "exponential"
        [[udp]]
        pattern = "onoff"
        rate = "10Mbps"
        on_mean = "100ms"
        off_mean = "300ms"
        distribution = "pareto"
        shape = 2.5
        [run]
        duration = "2000s"
        seed = 3
        "#,
    );
    for f in s["flows"].as_array().unwrap() {
        let g = f64_of(&f["goodput_bps"]);
        // 2.5 Mbit/s expected; ~5000 on/off cycles keep the error near 2 %.
        assert!((g - 2.5e6).abs() < 0.2e6, "{}: {g}", f["name"]);
    }
}

#[test]
fn delayed_acks_halve_the_ack_count() {
    let text = |delack: bool| {
        format!(
            r#"
            [network]
            topology = "dumbbell"
            [network.bottleneck]
            rate = "100Mbps"
            delay = "10ms"
            queue = "1bdp"
            [[flows]]
            cc = "reno"
            tcp = {{ delayed_ack = {delack} }}
            [run]
            duration = "20s"
            "#
        )
    };
    let (sim_d, _) = run_toml(&text(true));
    let (sim_n, _) = run_toml(&text(false));
    let ratio = |sim: &longfat_sim::Simulation| {
        let rev = &sim.links[sim.link_index("bottleneck.reverse").unwrap()];
        let fwd = &sim.links[sim.link_index("bottleneck").unwrap()];
        rev.counters.departed_pkts as f64 / fwd.counters.departed_pkts as f64
    };
    assert!((ratio(&sim_n) - 1.0).abs() < 0.01, "{}", ratio(&sim_n));
    assert!((ratio(&sim_d) - 0.5).abs() < 0.03, "{}", ratio(&sim_d));
}

#[test]
fn same_seed_same_results_different_seed_different_losses() {
    let text = |seed: u64| {
        format!(
            r#"
            [network]
            topology = "parking_lot"
            hops = 2
            [network.bottleneck]
            rate = "50Mbps"
            delay = "10ms"
            queue = "0.5bdp"
            loss = 1e-4
            [[flows]]
            cc = "reno"
            count = 2
            [[flows]]
            cc = "reno"
            from = 1
            to = 2
            [[flows]]
            cc = "reno"
            from = 2
            to = 0
            [[udp]]
            pattern = "onoff"
            rate = "20Mbps"
            from = 0
            to = 1
            [run]
            duration = "30s"
            seed = {seed}
            "#
        )
    };
    let (a, sa) = run_toml(&text(5));
    let (b, sb) = run_toml(&text(5));
    let (_, sc) = run_toml(&text(6));
    assert_eq!(sa, sb);
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(
        bits(&a.metrics.flows.cwnd_pkts),
        bits(&b.metrics.flows.cwnd_pkts)
    );
    assert_eq!(a.events_processed(), b.events_processed());
    assert_ne!(sa, sc);
}

/// ECN-capable flows behind a link that never marks (DropTail) run as
/// without ECN: ECT changes no decision of the `rfc` or `ns2` sender or
/// receiver, so the summary is the same but for the ECN counters, which
/// such a flow reports (all 0) and a flow without ECN does not. (Linux's
/// receiver is left out: `__tcp_ecn_check_ce` quick-ACKs a Not-ECT
/// retransmission once it has seen ECT, which moves its ACKs.) The
/// counters' marks come from AQM links (issue 31's `aqm` part).
#[test]
fn ecn_without_marks_changes_nothing_but_reports_its_counters() {
    for profile in ["rfc", "ns2"] {
        let text = |ecn: bool| {
            format!(
                r#"
                [network]
                topology = "dumbbell"
                [network.bottleneck]
                rate = "20Mbps"
                delay = "20ms"
                queue = "0.5bdp"
                loss = 0.001
                [[flows]]
                cc = "cubic"
                count = 2
                tcp = {{ profile = "{profile}", ecn = {ecn} }}
                [run]
                duration = "20s"
                "#
            )
        };
        let (_, off) = run_toml(&text(false));
        let (sim, mut on) = run_toml(&text(true));
        for row in on["flows"].as_array_mut().unwrap() {
            let row = row.as_object_mut().unwrap();
            for key in ["ece_acks", "ecn_reductions", "ce_marks"] {
                assert_eq!(
                    row.remove(key),
                    Some(serde_json::json!(0)),
                    "{profile} {key}"
                );
            }
        }
        assert_eq!(on["flows"], off["flows"], "{profile}");
        assert!(off["flows"][0].get("ece_acks").is_none());
        assert!(
            f64_of(&off["flows"][0]["retransmits"]) > 0.0,
            "{profile}: losses happen"
        );
        let e = &sim.metrics.ecn;
        assert_eq!(
            e.row.len(),
            sim.metrics.flows.time_ns.len(),
            "both flows every sample"
        );
        assert!(e.ce_marks.iter().all(|&c| c == 0));
    }
}
