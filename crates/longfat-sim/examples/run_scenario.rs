//! Runs a scenario file and prints its summary and speed:
//! `cargo run --release -p longfat-sim --example run_scenario -- scenarios/canonical.toml`

use std::time::Instant;

fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: run_scenario FILE.toml");
    let text = std::fs::read_to_string(&path).expect("readable scenario");
    let scenario = longfat_sim::Scenario::from_toml(&text).unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(2)
    });
    let t_build = Instant::now();
    let mut sim = longfat_sim::build(&scenario).unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(2)
    });
    eprintln!(
        "build {:.3} s ({} flows, {} links)",
        t_build.elapsed().as_secs_f64(),
        sim.flows.len(),
        sim.links.len()
    );
    let t0 = Instant::now();
    sim.run();
    let wall = t0.elapsed().as_secs_f64();
    let bottleneck_pkts: u64 = sim
        .metrics
        .monitored_links
        .iter()
        .map(|&l| sim.links[l].counters.departed_pkts)
        .sum();
    println!(
        "{}",
        serde_json::to_string_pretty(sim.metrics.summary().unwrap()).unwrap()
    );
    println!(
        "wall {:.3} s, events {} ({:.2} M/s), bottleneck packets {} ({:.2} M/s)",
        wall,
        sim.events_processed(),
        sim.events_processed() as f64 / wall / 1e6,
        bottleneck_pkts,
        bottleneck_pkts as f64 / wall / 1e6
    );
}
