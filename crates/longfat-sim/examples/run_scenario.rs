//! Runs a scenario file and prints its summary and speed:
//! `cargo run --release -p longfat-sim --example run_scenario -- scenarios/canonical.toml`
//! The memory budget is the engine's default, or `LONGFAT_MEMORY_BUDGET`
//! (`budget::parse_memory_budget`: e.g. `20GiB`), as for the Python front end.

use std::io::Write;
use std::time::Instant;

/// The Python extension's allocator and its option (crates/longfat-py/src/lib.rs:
/// mimalloc, with 2 MiB pages for large runs), so that the figures measured
/// here are what `longfat run` gets.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: run_scenario FILE.toml");
    let text = std::fs::read_to_string(&path).expect("readable scenario");
    let scenario = longfat_sim::Scenario::from_toml(&text).unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(2)
    });
    if scenario.wants_huge_pages() {
        // SAFETY: sets an allocator option before the simulation is built.
        unsafe {
            libmimalloc_sys::mi_option_set(libmimalloc_sys::mi_option_large_os_pages, 1);
        }
    }
    let t_build = Instant::now();
    let mut opts = longfat_sim::BuildOptions::default();
    if let Ok(text) = std::env::var("LONGFAT_MEMORY_BUDGET") {
        opts.memory_budget_bytes =
            longfat_sim::budget::parse_memory_budget(&text).unwrap_or_else(|e| {
                eprintln!("error: LONGFAT_MEMORY_BUDGET: {e}");
                std::process::exit(2)
            });
    }
    let mut sim = longfat_sim::build_with(&scenario, &opts, &mut || false).unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(2)
    });
    eprintln!(
        "build {:.3} s ({} flows, {} links); estimated memory {} (packets {}: up to {} held, flows {}, series {}, summary {}), budget {}",
        t_build.elapsed().as_secs_f64(),
        sim.flows.len(),
        sim.links.len(),
        longfat_sim::budget::human(sim.estimate.memory_bytes),
        longfat_sim::budget::human(sim.estimate.packets_bytes),
        sim.estimate.max_packets_held,
        longfat_sim::budget::human(sim.estimate.flows_bytes),
        longfat_sim::budget::human(sim.estimate.series_bytes),
        longfat_sim::budget::human(sim.estimate.summary_bytes),
        longfat_sim::budget::human(opts.memory_budget_bytes),
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
    // Straight to stdout: at 1,000,000 flows the text is about 1.5 GB.
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    serde_json::to_writer_pretty(&mut out, sim.metrics.summary_rows().unwrap()).unwrap();
    writeln!(out).unwrap();
    drop(out);
    println!(
        "wall {:.3} s, events {} ({:.2} M/s), bottleneck packets {} ({:.2} M/s)",
        wall,
        sim.events_processed(),
        sim.events_processed() as f64 / wall / 1e6,
        bottleneck_pkts,
        bottleneck_pkts as f64 / wall / 1e6
    );
    eprintln!(
        "packets held at most {} (estimated bound {})",
        sim.peak_packets_held(),
        sim.estimate.max_packets_held
    );
}
