//! Memory per flow and per packet, measured by counting every allocation,
//! and checked against the figures the pre-run budget (`budget.rs`) assumes:
//! a scenario the budget admits must not take more than it said.
//!
//! The counter is global, so the checks run one after another in a single
//! test: nothing else in this process allocates while one measures.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use longfat_sim::budget::{FLOW_BYTES, PACKET_BYTES, PLT_FLOW_BYTES};
use longfat_sim::metrics::summary_window_bytes;
use longfat_sim::{build, Scenario, Simulation};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = LIVE.fetch_add(layout.size(), Relaxed) + layout.size();
            PEAK.fetch_max(now, Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        unsafe { System.dealloc(p, layout) };
        LIVE.fetch_sub(layout.size(), Relaxed);
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

fn scenario(rate: &str, flows: u32, duration: &str, queue: &str) -> Scenario {
    scenario_cc("cubic", rate, flows, duration, queue)
}

fn scenario_cc(cc: &str, rate: &str, flows: u32, duration: &str, queue: &str) -> Scenario {
    scenario_tcp(cc, "", rate, flows, duration, queue)
}

fn scenario_tcp(
    cc: &str,
    tcp: &str,
    rate: &str,
    flows: u32,
    duration: &str,
    queue: &str,
) -> Scenario {
    // PLT needs a strict-priority bottleneck; the others keep the FIFO.
    let discipline = if cc == "plt" { "priority" } else { "droptail" };
    // Its reassembly buffer bounds what a PLT connection may hold; the
    // default (the largest TCP window) would make 11,000 of them exceed
    // the memory budget before they start.
    let plt = if cc == "plt" {
        "plt = { receive_buffer = \"1000pkt\" }"
    } else {
        ""
    };
    Scenario::from_toml(&format!(
        r#"
        [network]
        topology = "dumbbell"
        [network.bottleneck]
        rate = "{rate}"
        delay = "10ms"
        queue = "{queue}"
        discipline = "{discipline}"
        [[flows]]
        cc = "{cc}"
        {plt}
        tcp = {{ {tcp} }}
        count = {flows}
        start_jitter = "100ms"
        access_delay_jitter = "40ms"
        [run]
        duration = "{duration}"
        sample_interval = "1s"
        "#
    ))
    .unwrap()
}

/// Bytes a fully built simulation of `flows` flows holds, before any event.
fn built_bytes(flows: u32) -> (usize, Simulation) {
    built_bytes_cc("cubic", flows)
}

fn built_bytes_cc(cc: &str, flows: u32) -> (usize, Simulation) {
    built_bytes_tcp(cc, "", flows)
}

fn built_bytes_tcp(cc: &str, tcp: &str, flows: u32) -> (usize, Simulation) {
    let s = scenario_tcp(cc, tcp, "10Gbps", flows, "10s", "1bdp");
    let before = LIVE.load(Relaxed);
    let sim = build(&s).unwrap();
    (LIVE.load(Relaxed) - before, sim)
}

#[test]
fn memory_per_flow_and_per_packet_is_within_the_budget_and_flat_in_time() {
    an_idle_flow_takes_less_than_the_budget_assumes();
    a_packet_in_flight_takes_less_than_the_budget_assumes();
    memory_stays_flat_in_simulated_duration_with_many_flows();
    the_summary_takes_less_than_the_budget_assumes();
}

fn an_idle_flow_takes_less_than_the_budget_assumes() {
    let (small, sim_small) = built_bytes(1_000);
    drop(sim_small);
    let (large, sim_large) = built_bytes(11_000);
    let per_flow = (large - small) as f64 / 10_000.0;
    println!("bytes per idle flow: {per_flow:.0} (budget assumes {FLOW_BYTES})");
    assert!(
        per_flow <= FLOW_BYTES as f64,
        "an idle flow takes {per_flow:.0} bytes, the budget assumes {FLOW_BYTES}"
    );
    // And it is not absurdly below: a sender, receiver, controller, routes
    // and four link directions cannot fit in less than 1 KiB.
    assert!(
        per_flow > 1024.0,
        "{per_flow:.0} bytes per flow is implausibly small"
    );
    drop(sim_large);
    // A paced flow: its pacer (one per flow, constant size) on top.
    let paced = "profile = \"linux\", pacing = true";
    let (small, sim_small) = built_bytes_tcp("cubic", paced, 1_000);
    drop(sim_small);
    let (large, sim_large) = built_bytes_tcp("cubic", paced, 11_000);
    let per_paced = (large - small) as f64 / 10_000.0;
    println!("bytes per idle paced flow: {per_paced:.0} (budget assumes {FLOW_BYTES})");
    assert!(
        per_paced <= FLOW_BYTES as f64,
        "an idle paced flow takes {per_paced:.0} bytes, the budget assumes {FLOW_BYTES}"
    );
    drop(sim_large);
    // A PLT connection: a TCP sender (the HCM), the LCM and packet manager,
    // and a receiver per module.
    let (small, sim_small) = built_bytes_cc("plt", 1_000);
    drop(sim_small);
    let (large, sim_large) = built_bytes_cc("plt", 11_000);
    let plt = (large - small) as f64 / 10_000.0;
    println!("bytes per idle PLT flow: {plt:.0} (budget assumes {PLT_FLOW_BYTES})");
    assert!(
        plt <= PLT_FLOW_BYTES as f64,
        "an idle PLT flow takes {plt:.0} bytes, the budget assumes {PLT_FLOW_BYTES}"
    );
    assert!(
        plt > per_flow,
        "{plt:.0} bytes: PLT holds more than one TCP connection"
    );
    drop(sim_large);
}

fn a_packet_in_flight_takes_less_than_the_budget_assumes() {
    // Ten flows filling a 1 Gbit/s x 20-100 ms path and its 1 BDP queue:
    // thousands of packets in flight at the peak.
    let mut sim = build(&scenario("1Gbps", 10, "3s", "1bdp")).unwrap();
    let base = LIVE.load(Relaxed);
    PEAK.store(base, Relaxed);
    sim.run();
    let grown = PEAK.load(Relaxed) - base;
    let held = sim.peak_packets_held();
    assert!(held > 5_000, "only {held} packets held at the peak");
    // Growth also pays for the time series (3 samples here) and for each
    // flow's scoreboard: both are bounded by what a packet is budgeted.
    let per_packet = grown as f64 / held as f64;
    println!(
        "peak packets held {held}, heap growth {grown} bytes: {per_packet:.0} per packet (budget assumes {PACKET_BYTES})"
    );
    assert!(
        per_packet <= PACKET_BYTES as f64,
        "{per_packet:.0} bytes per packet in flight, the budget assumes {PACKET_BYTES}"
    );
    assert!(
        per_packet >= 64.0,
        "{per_packet:.0} bytes per packet is less than a packet"
    );
}

fn memory_stays_flat_in_simulated_duration_with_many_flows() {
    // 300 flows on 1 Gbit/s, 2 s and then 8 s more. Whatever the heap grows
    // by in the long second part must be paid for by more packets held at
    // once (at most the budget's bytes per packet, checked above) and the
    // series rows added: a leak per event or per simulated second (about
    // 4 million events here) would show.
    let mut sim = build(&scenario("1Gbps", 300, "10s", "0.5bdp")).unwrap();
    let base = LIVE.load(Relaxed);
    PEAK.store(base, Relaxed);
    sim.run_until(2_000_000_000);
    let first = PEAK.load(Relaxed) - base;
    let held_first = sim.peak_packets_held();
    // Stop 1 ns short of the end: the summary built at the end is not part
    // of the engine's footprint.
    sim.run_until(9_999_999_999);
    let whole = PEAK.load(Relaxed) - base;
    let held_whole = sim.peak_packets_held();
    // Eight more samples of 300 flows and two links, at most 128 bytes a
    // row, twice over for vector doubling.
    let series = 2 * 8 * 302 * 128;
    let packets = (held_whole - held_first) as usize * PACKET_BYTES as usize;
    println!(
        "peak heap growth: {first} bytes after 2 s ({held_first} packets held), {whole} after 10 s ({held_whole})"
    );
    assert!(
        whole <= first + series + packets,
        "the heap grew from {first} to {whole} bytes; more packets held explain {packets}, series {series}"
    );
}

/// The heap `Metrics::finish` adds at its peak (the summary's rows and
/// name copies and what it holds for a moment; the measurement window it
/// reads was taken at the start and is already held), for `flows`
/// dumbbell flows that start 1 ns before the end (so their state is
/// built and nothing else allocates at the end), the estimate's summary
/// part for the same run without the window, and the window's heap as
/// taken at 0 and as the estimate assumes it (checked here).
fn summary_peak(flows: u32) -> (usize, u64, (usize, u64)) {
    let s = Scenario::from_toml(&format!(
        r#"
        [network]
        topology = "dumbbell"
        bottleneck = {{ rate = "10Gbps", delay = "10ms", queue = "1000pkt" }}
        [[flows]]
        cc = "cubic"
        count = {flows}
        start = "99999999ns"
        [run]
        duration = "100ms"
        sample_interval = "30ms"
        "#
    ))
    .unwrap();
    let mut sim = build(&s).unwrap();
    // The window opens at 0 (`Event::MeasureStart`), long before anything
    // else happens.
    let before_window = LIVE.load(Relaxed);
    sim.run_until(1);
    let window_taken = LIVE.load(Relaxed) - before_window;
    // The flows' first packets are sent and serialize for far longer than
    // the last nanosecond; no sample falls on the end.
    sim.run_until(99_999_999);
    let base = LIVE.load(Relaxed);
    PEAK.store(base, Relaxed);
    sim.run();
    assert!(sim.metrics.summary_rows().is_some(), "the run finished");
    let window = summary_window_bytes(&sim.flows, &sim.link_specs);
    assert!(
        window_taken as u64 <= window,
        "the window took {window_taken} bytes, the estimate assumes {window}"
    );
    (
        PEAK.load(Relaxed) - base,
        sim.estimate.summary_bytes - window,
        (window_taken, window),
    )
}

fn the_summary_takes_less_than_the_budget_assumes() {
    // Per dumbbell flow: its row, its two hosts' four link rows, six name
    // copies: the difference of 11,000 and 1,000 flows.
    let (small, est_small, window_small) = summary_peak(1_000);
    let (large, est_large, window_large) = summary_peak(11_000);
    let measured = (large - small) as f64 / 10_000.0;
    let assumed = (est_large - est_small) as f64 / 10_000.0;
    let window_measured = (window_large.0 - window_small.0) as f64 / 10_000.0;
    let window = (window_large.1 - window_small.1) as f64 / 10_000.0;
    println!("summary bytes per dumbbell flow: {measured:.0} at the peak of finish (budget assumes {assumed:.0}), and {window_measured:.0} for the window (budget assumes {window:.0})");
    assert!(
        measured <= assumed,
        "the summary takes {measured:.0} bytes per flow, the budget assumes {assumed:.0}"
    );
    // The budget counts each allocation as malloc takes it (a header,
    // 16-byte granules), the counter what was asked for: a little over.
    // Twice over would be a wrong model, not rounding.
    assert!(
        measured * 2.0 > assumed,
        "{measured:.0} bytes per flow: the budget's {assumed:.0} is more than twice that"
    );
    // The whole: the estimate bounds the peak of the larger run too.
    assert!(large as u64 <= est_large, "{large} > {est_large}");
}
