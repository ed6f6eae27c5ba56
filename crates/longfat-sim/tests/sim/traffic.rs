//! Generated traffic in whole runs: arrivals, sizes, completion times,
//! jitter and both directions, against hand-derived values.

use crate::common;
use common::{f64_of, run_toml};
use longfat_sim::flow::Endpoints;

/// On an idle path, every generated transfer completes and its completion
/// time is at least one RTT plus serialization; a one-packet transfer takes
/// exactly that (the same arithmetic as the single-flow test in
/// whole_runs.rs). The number of transfers is Poisson (mean rate x window).
#[test]
fn short_flows_on_an_idle_path_complete_in_hand_computed_times() {
    let (sim, s) = run_toml(
        r#"
        [network]
        topology = "dumbbell"
        bottleneck = { rate = "1Gbps", delay = "10ms", queue = "1000pkt" }
        access = { rate = "10Gbps", delay = "1ms" }
        [[short_flows]]
        name = "mice"
        cc = "reno"
        arrival_rate = 20.0
        size_mean = "3000B"
        size_shape = 1.5
        start = "1s"
        stop = "101s"
        [run]
        duration = "110s"
        "#,
    );
    let g = &s["short_flows"][0];
    let n = g["started"].as_u64().unwrap() as f64;
    // 20/s over 100 s: 2000 +- 4 sqrt(2000).
    assert!((n - 2000.0).abs() < 4.0 * 2000f64.sqrt(), "{n} transfers");
    assert_eq!(g["completed"], g["started"]);
    let one_pkt_ns = (1_200 + 12_000 + 1_200 + 12_000_000 + 32 + 320 + 32 + 12_000_000) as f64;
    let mut one_pkt_seen = 0;
    for f in &sim.flows {
        let (Some(gen), Endpoints::Tcp { sender, .. }) = (f.generated, &f.endpoints) else {
            continue;
        };
        let fct = (sender.completed_at_ns.unwrap() - sender.started_at_ns.unwrap()) as f64;
        assert!(fct >= one_pkt_ns, "{} took {fct} ns", f.name);
        if gen.size_bytes <= 1460 {
            one_pkt_seen += 1;
            assert_eq!(fct, one_pkt_ns);
        }
    }
    // P(size <= 1460) for Pareto(mean 3000, shape 1.5): x_m = 1000, 1 - (1000/1460)^1.5 = 0.433.
    let frac = one_pkt_seen as f64 / n;
    assert!(
        (frac - 0.433).abs() < 4.0 * (0.433 * 0.567 / n).sqrt(),
        "one-packet fraction {frac}"
    );
    assert!(f64_of(&g["p99_fct_s"]) >= f64_of(&g["p50_fct_s"]));
    // Generated transfers are reported by completion time, not as flows.
    assert_eq!(s["flows"].as_array().unwrap().len(), 0);
}

/// Start and RTT jitter stay inside their ranges and differ per seed; a
/// flow from router 1 to router 0 loads the reverse bottleneck.
#[test]
fn jitter_ranges_and_reverse_direction() {
    let text = |seed: u64| {
        format!(
            r#"
        [network]
        topology = "dumbbell"
        bottleneck = {{ rate = "100Mbps", delay = "10ms", queue = "100pkt" }}
        access = {{ delay = "1ms" }}
        [[flows]]
        cc = "reno"
        count = 8
        start = "1s"
        start_jitter = "2s"
        access_delay_jitter = "5ms"
        [[flows]]
        name = "back"
        cc = "reno"
        from = 1
        to = 0
        [run]
        duration = "10s"
        seed = {seed}
        "#
        )
    };
    let (sim1, s1) = run_toml(&text(1));
    let (sim2, _) = run_toml(&text(2));
    let starts = |sim: &longfat_sim::Simulation| {
        sim.flows
            .iter()
            .take(8)
            .map(|f| f.start_ns)
            .collect::<Vec<_>>()
    };
    for (f, &st) in sim1.flows.iter().take(8).zip(&starts(&sim1)) {
        assert!((1_000_000_000..3_000_000_000).contains(&st));
        // RTT = 2 x (1 ms + jitter + 10 ms + 1 ms), jitter in [0, 5 ms).
        assert!(
            (24_000_000..34_000_000).contains(&f.base_rtt_ns),
            "{}",
            f.base_rtt_ns
        );
    }
    assert_ne!(starts(&sim1), starts(&sim2));
    let rev = s1["links"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == "bottleneck.reverse")
        .unwrap();
    assert!(
        f64_of(&rev["utilization"]) > 0.5,
        "reverse link carries the back flow"
    );
}
