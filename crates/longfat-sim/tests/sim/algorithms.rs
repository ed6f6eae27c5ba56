//! Short simulated runs per algorithm, asserting the behaviour each paper
//! predicts from its equations.

use crate::common;
use common::{f64_of, link, run_toml};
use longfat_sim::Simulation;

/// (time s, cwnd, ssthresh) of flow 0's samples.
fn cwnd_series(sim: &Simulation) -> Vec<(f64, f64, f64)> {
    let f = &sim.metrics.flows;
    (0..f.time_ns.len())
        .filter(|&i| f.flow[i] == 0)
        .map(|i| {
            (
                f.time_ns[i] as f64 / 1e9,
                f.cwnd_pkts[i],
                f.ssthresh_pkts[i],
            )
        })
        .collect()
}

/// Slope of cwnd (packets per second) over the samples with cwnd in [lo, hi).
fn slope_between(series: &[(f64, f64, f64)], lo: f64, hi: f64) -> f64 {
    let inside: Vec<_> = series
        .iter()
        .filter(|(_, c, _)| *c >= lo && *c < hi)
        .collect();
    assert!(
        inside.len() >= 10,
        "too few samples in [{lo}, {hi}): {}",
        inside.len()
    );
    let (t0, c0, _) = inside[0];
    let (t1, c1, _) = inside[inside.len() - 1];
    (c1 - c0) / (t1 - t0)
}

#[test]
fn ltcp_adds_k_packets_per_rtt_at_layer_k() {
    // 1 Gbit/s, 100 ms: the window stays far below the BDP (8,333 packets),
    // so the RTT stays at its base value and no packet is lost.
    let (sim, s) = run_toml(
        r#"
        [network]
        topology = "dumbbell"
        [network.bottleneck]
        rate = "1Gbps"
        delay = "49ms"
        queue = "1bdp"
        [network.access]
        rate = "10Gbps"
        delay = "0.5ms"
        [[flows]]
        cc = "ltcp"
        tcp = { initial_ssthresh = 100 }
        [run]
        duration = "30s"
        sample_interval = "100ms"
        "#,
    );
    assert_eq!(f64_of(&link(&s, "bottleneck")["drops_overflow"]), 0.0);
    let series = cwnd_series(&sim);
    let rtt_s = 0.100;
    // W_2 = 50 <= cwnd < W_3 = 200: K = 2; W_3 <= cwnd < W_4 = 500: K = 3; then K = 4 up to 1000.
    for (lo, hi, k) in [
        (110.0, 190.0, 2.0),
        (210.0, 490.0, 3.0),
        (510.0, 990.0, 4.0),
    ] {
        let per_rtt = slope_between(&series, lo, hi) * rtt_s;
        assert!(
            (per_rtt - k).abs() < 0.03 * k,
            "layer {k}: {per_rtt:.3} packets per RTT"
        );
    }
}

#[test]
fn htcp_backs_off_by_rtt_min_over_rtt_max_with_a_small_buffer() {
    // The paper's Fig. 6 setting: 10 Mbit/s, 100 ms, 25-packet queue (BDP 83).
    let (sim, s) = run_toml(
        r#"
        [network]
        topology = "dumbbell"
        [network.bottleneck]
        rate = "10Mbps"
        delay = "49ms"
        queue = "25pkt"
        [network.access]
        rate = "1Gbps"
        delay = "0.5ms"
        [[flows]]
        cc = "htcp"
        [run]
        duration = "120s"
        sample_interval = "10ms"
        "#,
    );
    let flow = &s["flows"][0];
    assert_eq!(f64_of(&flow["timeouts"]), 0.0);
    // RTTmin: propagation 100 ms plus serialization of a 1500 B packet on each
    // hop of the forward path (1.2 ms at 10 Mbit/s, 12 µs at 1 Gbit/s, x2) and
    // of the 40 B ACK. RTTmax adds a full queue: 25 packets of 1.2 ms.
    let ser = 1500.0 * 8.0 / 10e6;
    let rtt_min =
        0.100 + ser + 2.0 * 1500.0 * 8.0 / 1e9 + 3.0 * 40.0 * 8.0 / 1e9 + 40.0 * 8.0 / 10e6;
    let rtt_max = rtt_min + 25.0 * ser;
    let expected = rtt_min / rtt_max;
    assert!((0.5..0.8).contains(&expected));

    // Each new ssthresh is beta times the window at the congestion event,
    // which is the largest window since the previous event.
    let series = cwnd_series(&sim);
    let mut ratios = Vec::new();
    let mut peak: f64 = 0.0;
    let mut last_ss = f64::INFINITY;
    for &(_, cwnd, ss) in &series {
        if ss != last_ss && ss.is_finite() {
            ratios.push(ss / peak);
            peak = 0.0;
            last_ss = ss;
        }
        peak = peak.max(cwnd);
    }
    assert!(ratios.len() >= 6, "{} congestion events", ratios.len());
    assert!(
        (ratios[0] - 0.5).abs() < 0.02,
        "first backoff {:.3} (0.5 before RTTmax is known)",
        ratios[0]
    );
    for (i, r) in ratios.iter().enumerate().skip(2) {
        assert!(
            (r - expected).abs() < 0.02,
            "event {i}: backoff {r:.4}, RTTmin/RTTmax {expected:.4}"
        );
    }
    // And the link stays busy: the queue just empties after each backoff.
    assert!(f64_of(&link(&s, "bottleneck")["utilization"]) > 0.97);
}

fn delay_based(cc: &str, params: &str) -> serde_json::Value {
    // 100 Mbit/s, 50 ms (BDP 417 packets), a BDP of buffer: nothing forces a loss.
    let (_, s) = run_toml(&format!(
        r#"
        [network]
        topology = "dumbbell"
        [network.bottleneck]
        rate = "100Mbps"
        delay = "24ms"
        queue = "1bdp"
        [network.access]
        rate = "10Gbps"
        delay = "0.5ms"
        [[flows]]
        cc = "{cc}"
        params = {{ {params} }}
        [run]
        duration = "60s"
        measure_from = "20s"
        "#
    ));
    s
}

#[test]
fn vegas_keeps_alpha_to_beta_packets_queued_without_loss() {
    let s = delay_based("vegas", "");
    let l = link(&s, "bottleneck");
    assert_eq!(f64_of(&l["drops_overflow"]), 0.0);
    let q = f64_of(&l["mean_queue_pkts"]);
    assert!(
        (2.0..=4.0).contains(&q),
        "mean queue {q} packets, Vegas alpha..beta = 2..4"
    );
    assert!(f64_of(&l["utilization"]) > 0.99);
}

#[test]
fn fast_keeps_alpha_packets_queued_without_loss() {
    let s = delay_based("fast", "alpha = 30");
    let l = link(&s, "bottleneck");
    assert_eq!(f64_of(&l["drops_overflow"]), 0.0);
    let q = f64_of(&l["mean_queue_pkts"]);
    assert!(
        (q - 30.0).abs() < 3.0,
        "mean queue {q} packets, FAST alpha = 30"
    );
    assert!(f64_of(&l["utilization"]) > 0.99);
}

#[test]
fn every_algorithm_fills_a_bdp_buffered_link_alone() {
    // 100 Mbit/s, 50 ms, 1 BDP of buffer: every algorithm keeps the link
    // above 95 % busy after its start-up (Reno's sawtooth gives 100 %).
    for &cc in longfat_cc::ALGORITHMS {
        let s = delay_based(cc, "");
        let u = f64_of(&link(&s, "bottleneck")["utilization"]);
        assert!(u > 0.95, "{cc}: utilization {u}");
        assert_eq!(f64_of(&s["flows"][0]["timeouts"]), 0.0, "{cc}: timeouts");
    }
}

/// TCP-GT's paper setting (tcp-gt.md sect. IV: 1000-byte packets, 40-byte
/// ACKs, DropTail buffer of one BDP) at 100 Mbit/s, 40 ms (its Fig. 4).
fn tcpgt_path(
    flows: &str,
    duration_s: u32,
    measure_from_s: u32,
) -> (Simulation, serde_json::Value) {
    run_toml(&format!(
        r#"
        [network]
        topology = "dumbbell"
        bdp_rtt = "40ms"
        [network.bottleneck]
        rate = "100Mbps"
        delay = "18ms"
        queue = "1bdp"
        [network.access]
        rate = "1Gbps"
        delay = "1ms"
        {flows}
        [run]
        duration = "{duration_s}s"
        measure_from = "{measure_from_s}s"
        sample_interval = "100ms"
        "#
    ))
}

#[test]
fn tcpgt_alone_fills_the_link_without_loss_over_a_small_standing_queue() {
    let flow = |cc: &str| {
        format!(
            "[[flows]]\ncc = \"{cc}\"\ntcp = {{ packet_size = \"1040B\", header_size = \"40B\" }}"
        )
    };
    let (_, gt) = tcpgt_path(&flow("tcpgt"), 60, 20);
    let l = link(&gt, "bottleneck");
    assert_eq!(f64_of(&l["drops_overflow"]), 0.0);
    assert_eq!(f64_of(&gt["flows"][0]["retransmits"]), 0.0);
    let u = f64_of(&l["utilization"]);
    assert!(u > 0.99, "utilization {u}");
    // BDP: 100 Mbit/s x 40 ms / 1040 B = 481 packets. The queue stands
    // (eq. 16 lets it grow 5 % of rtt_base / f per epoch before MD) but
    // stays a small part of the buffer.
    let q = f64_of(&l["mean_queue_pkts"]);
    assert!((1.0..=0.25 * 481.0).contains(&q), "mean queue {q} packets");
    // Reno on the same path fills the buffer to overflow: TCP-GT's queue
    // is less than half of Reno's.
    let (_, reno) = tcpgt_path(&flow("reno"), 60, 20);
    let qr = f64_of(&link(&reno, "bottleneck")["mean_queue_pkts"]);
    assert!(q < 0.5 * qr, "TCP-GT {q} against Reno {qr} packets");
}

#[test]
fn two_tcpgt_flows_converge_to_a_fair_share() {
    let flows = r#"
        [[flows]]
        cc = "tcpgt"
        tcp = { packet_size = "1040B", header_size = "40B" }
        [[flows]]
        cc = "tcpgt"
        start = "10s"
        tcp = { packet_size = "1040B", header_size = "40B" }
    "#;
    let (_, s) = tcpgt_path(flows, 90, 60);
    let g: Vec<f64> = (0..2)
        .map(|i| f64_of(&s["flows"][i]["goodput_bps"]))
        .collect();
    let jain = (g[0] + g[1]).powi(2) / (2.0 * (g[0] * g[0] + g[1] * g[1]));
    assert!(jain > 0.98, "goodputs {g:?}, Jain {jain}");
    assert_eq!(f64_of(&link(&s, "bottleneck")["drops_overflow"]), 0.0);
    // Both flows see the same queue and back off in the same epoch, which
    // can empty the queue for a moment: the paper claims above 90 % (Fig. 9(a)).
    let u = f64_of(&link(&s, "bottleneck")["utilization"]);
    assert!((0.9..=1.0).contains(&u), "utilization {u}");
}
