//! The cache hints of very many flows (`Simulation::takes_cache_hints`)
//! load state ahead of events and change nothing else: a run with them
//! must give the same summary and the same event count as without
//! (`BuildOptions::cache_hints`). 20,000 flows is the smallest dumbbell
//! whose pending events reach the radix heap, the only place hints come
//! from; this test runs the hinting event loop in debug builds too, where
//! every index it computes is bounds-checked.

use longfat_sim::sim::RunStatus;
use longfat_sim::{build_with, BuildOptions, Scenario, Simulation};

const SCENARIO: &str = r#"
    [network]
    topology = "dumbbell"
    [network.bottleneck]
    rate = "10Gbps"
    delay = "2ms"
    queue = "1bdp"
    [[flows]]
    cc = "reno"
    count = 20000
    start_jitter = "4ms"
    access_delay_jitter = "3ms"
    [[flows]]
    cc = "cubic"
    count = 10
    tcp = { profile = "linux" }
    [run]
    duration = "25ms"
    seed = 3
    sample_interval = "5ms"
"#;

fn run(cache_hints: bool) -> Simulation {
    let s = Scenario::from_toml(SCENARIO).unwrap_or_else(|e| panic!("scenario: {e}"));
    let opts = BuildOptions {
        cache_hints,
        ..BuildOptions::default()
    };
    let mut sim = build_with(&s, &opts, &mut || false).unwrap_or_else(|e| panic!("build: {e}"));
    assert_eq!(sim.takes_cache_hints(), cache_hints);
    assert_eq!(sim.run(), RunStatus::Reached);
    sim
}

#[test]
fn hints_change_no_result() {
    let (with, without) = (run(true), run(false));
    assert!(
        with.events_processed() > 100_000,
        "{} events",
        with.events_processed()
    );
    assert_eq!(with.events_processed(), without.events_processed());
    let summary = |s: &Simulation| s.metrics.summary().expect("finished").to_string();
    assert_eq!(summary(&with), summary(&without));
}
