//! Golden whole-run checksums: every output of a few whole runs (the summary
//! and every sample of the flow and link series), hashed. The engine's
//! speed work (event queue, link layout, packet size) must leave results
//! identical to the last bit for the same seed, so these checksums only
//! change with a written reason in the commit that changes them.
//!
//! The runs cover: one long Reno flow with random loss; many flows of every
//! controller with jittered RTTs and starts on a strict-priority
//! bottleneck; a parking lot with UDP cross traffic, short flows and web
//! traffic; and the `ns2` and `linux` transport profiles.
//!
//! To see the new values after an intended change:
//! `cargo test --release -p longfat-sim --test sim golden:: -- --nocapture`.

use crate::common;
use common::run_toml;
use longfat_sim::Simulation;

/// FNV-1a, 64 bit: stable across platforms and Rust versions (std's
/// `DefaultHasher` is not promised to be).
struct Fnv(u64);

impl Fnv {
    fn new() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }
    fn bytes(&mut self, b: &[u8]) {
        for &x in b {
            self.0 ^= u64::from(x);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
    fn u64s(&mut self, v: &[u64]) {
        for x in v {
            self.bytes(&x.to_le_bytes());
        }
    }
    fn f64s(&mut self, v: &[f64]) {
        for x in v {
            self.bytes(&x.to_bits().to_le_bytes());
        }
    }
}

/// Hash of everything a run reports.
fn checksum(sim: &Simulation, summary: &serde_json::Value) -> u64 {
    let mut h = Fnv::new();
    h.bytes(serde_json::to_string(summary).unwrap().as_bytes());
    let f = &sim.metrics.flows;
    h.u64s(&f.time_ns);
    h.u64s(&f.flow.iter().map(|&x| u64::from(x)).collect::<Vec<_>>());
    for v in [
        &f.goodput_bps,
        &f.throughput_bps,
        &f.cwnd_pkts,
        &f.ssthresh_pkts,
    ] {
        h.f64s(v);
    }
    for v in [&f.srtt_ns, &f.rtt_ns, &f.retransmits, &f.timeouts] {
        h.u64s(v);
    }
    let l = &sim.metrics.links;
    h.u64s(&l.time_ns);
    h.u64s(&l.link.iter().map(|&x| u64::from(x)).collect::<Vec<_>>());
    for v in [
        &l.queue_pkts,
        &l.queue_bytes,
        &l.drops_overflow,
        &l.drops_random,
    ] {
        h.u64s(v);
    }
    h.f64s(&l.utilization);
    h.0
}

fn check(name: &str, toml: &str, expected: u64) {
    let (sim, summary) = run_toml(toml);
    let got = checksum(&sim, &summary);
    println!("{name}: {got:#018x}");
    assert_eq!(
        got, expected,
        "{name}: whole-run checksum {got:#018x}, pinned {expected:#018x}. Results changed: \
         if that is intended, update the pin with the reason in the commit message"
    );
}

#[test]
fn golden_reno_with_random_loss() {
    check(
        "reno",
        r#"
        [network]
        topology = "dumbbell"
        [network.bottleneck]
        rate = "100Mbps"
        delay = "35ms"
        queue = "500pkt"
        loss = 1e-5
        reverse_loss = 1e-6
        [[flows]]
        cc = "reno"
        [run]
        duration = "20s"
        seed = 7
        sample_interval = "50ms"
        "#,
        0xcfcb02adeca34d0f,
    );
}

#[test]
fn golden_every_controller_on_a_priority_bottleneck() {
    let ccs = [
        "reno",
        "cubic",
        "htcp",
        "ltcp",
        "ehstcp",
        "highspeed",
        "scalable",
        "bic",
        "vegas",
        "fast",
    ];
    let mut toml = String::from(
        r#"
        [network]
        topology = "dumbbell"
        [network.bottleneck]
        rate = "200Mbps"
        delay = "20ms"
        queue = "0.5bdp"
        discipline = "priority"
        [network.access]
        rate = "1Gbps"
        "#,
    );
    for (i, cc) in ccs.iter().enumerate() {
        toml.push_str(&format!(
            r#"
            [[flows]]
            cc = "{cc}"
            count = 2
            start_jitter = "2s"
            access_delay_jitter = "10ms"
            tcp.priority_class = {}
            "#,
            i % 2
        ));
    }
    toml.push_str(
        r#"
        [run]
        duration = "15s"
        seed = 3
        "#,
    );
    check("every-controller", &toml, 0x913a72f95ed94f30);
}

#[test]
fn golden_parking_lot_with_cross_traffic() {
    check(
        "parking-lot",
        r#"
        [network]
        topology = "parking_lot"
        hops = 3
        [network.bottleneck]
        rate = "50Mbps"
        delay = "5ms"
        queue = "200pkt"
        [network.access]
        delay = "2ms"
        [[flows]]
        cc = "cubic"
        from = 0
        to = 3
        count = 3
        start_spacing = "1s"
        [[flows]]
        cc = "htcp"
        from = 1
        to = 2
        [[udp]]
        pattern = "onoff"
        rate = "20Mbps"
        from = 2
        to = 3
        on_mean = "500ms"
        off_mean = "500ms"
        [[short_flows]]
        cc = "reno"
        from = 0
        to = 2
        arrival_rate = 20
        size_mean = "30KB"
        hosts = 4
        access_delay_jitter = "5ms"
        [[web]]
        cc = "cubic"
        from = 1
        to = 3
        sessions = 5
        pages_per_session = 20
        inter_page = "500ms"
        objects_per_page = 3
        object_size_mean = "20KB"
        [run]
        duration = "12s"
        seed = 11
        measure_from = "2s"
        "#,
        0xb3fafdcda438a7c1,
    );
}

#[test]
fn golden_transport_profiles() {
    for (profile, cc, expected) in [
        ("ns2", "highspeed", 0xdd23161e17df6369_u64),
        ("linux", "cubic", 0x659445473bb0b63f),
    ] {
        check(
            profile,
            &format!(
                r#"
                [network]
                topology = "dumbbell"
                [network.bottleneck]
                rate = "300Mbps"
                delay = "30ms"
                queue = "300pkt"
                [[flows]]
                cc = "{cc}"
                count = 3
                start_spacing = "2s"
                access_delay_jitter = "8ms"
                tcp.profile = "{profile}"
                [run]
                duration = "15s"
                seed = 5
                "#
            ),
            expected,
        );
    }
}
