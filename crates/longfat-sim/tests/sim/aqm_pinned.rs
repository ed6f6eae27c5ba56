//! Exact outputs of short runs through each AQM: the bottleneck's drops
//! (AQM and overflow), CE marks, departures and sojourn totals, and one
//! hash of every sample of the link series (sojourn mean and max
//! included). The golden checksums (`golden.rs`) have no AQM link, and
//! the other AQM tests check bounds, so a change in the order of events
//! at an AQM link, or in its arithmetic, would pass them unnoticed: these
//! pins catch it. A change that moves them must say why in its commit
//! and give the old and new values.
//!
//! To see the values: `cargo test --release -p longfat-sim --test sim
//! aqm_pinned:: -- --nocapture`.

use crate::common::run_toml;
use longfat_sim::Simulation;

/// FNV-1a over the bytes of every link-series sample.
fn series_hash(sim: &Simulation) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    let mut eat = |x: u64| {
        for b in x.to_le_bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    };
    let l = &sim.metrics.links;
    for k in 0..l.time_ns.len() {
        for x in [
            l.time_ns[k],
            u64::from(l.link[k]),
            l.queue_pkts[k],
            l.queue_bytes[k],
            l.drops_overflow[k],
            l.drops_random[k],
            l.drops_aqm[k],
            l.ce_marks[k],
            l.utilization[k].to_bits(),
            l.sojourn_mean_ns[k].to_bits(),
            l.sojourn_max_ns[k].to_bits(),
        ] {
            eat(x);
        }
    }
    h
}

/// What is pinned of one run: for the bottleneck's two directions,
/// [drops_aqm, drops_overflow, ce_marks, departed_pkts, sojourn pkts,
/// sojourn sum_ns, sojourn max_ns]; and the series hash.
fn outputs(toml: &str) -> (Vec<[u64; 7]>, u64) {
    let (sim, _) = run_toml(toml);
    let dirs = sim
        .links
        .iter()
        .filter(|l| l.is_aqm())
        .map(|l| {
            let c = &l.counters;
            let s = l.sojourn_total().unwrap();
            [
                c.drops_aqm,
                c.drops_overflow,
                c.ce_marks,
                c.departed_pkts,
                s.pkts,
                s.sum_ns,
                s.max_ns,
            ]
        })
        .collect();
    (dirs, series_hash(&sim))
}

fn check(name: &str, toml: &str, expected: (&[[u64; 7]], u64)) {
    let got = outputs(toml);
    println!("{name}: {:?}, {:#018x}", got.0, got.1);
    assert_eq!(
        (got.0.as_slice(), got.1),
        expected,
        "{name}: AQM outputs changed. If that is intended (an argued change \
         of event order or arithmetic), re-pin with the reason in the commit"
    );
}

/// A dumbbell of `flows` CUBIC flows (ECN-capable: `ecn`) with RTTs
/// 20-60 ms starting within 0.5 s, behind `discipline` with `aqm` fields,
/// for 4 s: slow start's overshoot, the AQM's first drops or marks, and
/// a standing queue.
fn dumbbell(discipline: &str, aqm: &str, flows: u32, ecn: bool) -> String {
    format!(
        r#"
        [network]
        topology = "dumbbell"
        [network.bottleneck]
        rate = "50Mbps"
        delay = "9ms"
        queue = "1bdp"
        discipline = "{discipline}"
        [network.bottleneck.aqm]
        {aqm}
        [network.access]
        rate = "1Gbps"
        delay = "0.5ms"
        [[flows]]
        cc = "cubic"
        count = {flows}
        start_jitter = "500ms"
        access_delay_jitter = "10ms"
        [flows.tcp]
        ecn = {ecn}
        delayed_ack = false
        [run]
        duration = "4s"
        seed = 11
        sample_interval = "50ms"
        "#
    )
}

#[test]
fn pinned_fq_codel_one_flow() {
    check(
        "fq_codel-1",
        &dumbbell("fq_codel", "", 1, false),
        (
            &[
                [2, 504, 0, 14500, 14501, 47465206122, 22991634],
                [0, 0, 0, 14458, 14458, 0, 0],
            ],
            0x3f612602b52e40cf,
        ),
    );
}

#[test]
fn pinned_fq_codel_ten_flows_with_ecn() {
    check(
        "fq_codel-10-ecn",
        &dumbbell("fq_codel", "ecn = true", 10, true),
        (
            &[
                [5, 792, 124, 15867, 15868, 159896634817, 115926762],
                [0, 0, 0, 15825, 15826, 0, 0],
            ],
            0x73fe9d5a04c7de4e,
        ),
    );
}

#[test]
fn pinned_fq_codel_ten_flows_small_buffer() {
    // A buffer of 40 packets: overflow drops from the fattest bucket.
    let toml = dumbbell("fq_codel", "", 10, false).replace("queue = \"1bdp\"", "queue = \"40pkt\"");
    check(
        "fq_codel-10-small",
        &toml,
        (
            &[
                [98, 524, 0, 15765, 15766, 77227439566, 33173028],
                [0, 0, 0, 15723, 15724, 0, 0],
            ],
            0xae84560979b07cee,
        ),
    );
}

#[test]
fn pinned_codel_four_flows() {
    check(
        "codel-4",
        &dumbbell("codel", "", 4, false),
        (
            &[
                [52, 801, 0, 13882, 13883, 220766783343, 35279856],
                [0, 0, 0, 13840, 13840, 0, 0],
            ],
            0x64f14fc7df5baa4a,
        ),
    );
}

#[test]
fn pinned_red_four_flows_with_ecn() {
    check(
        "red-4-ecn",
        &dumbbell("red", "ecn = true", 4, true),
        (
            &[
                [382, 0, 281, 14319, 14320, 33314091840, 29483634],
                [0, 0, 0, 14277, 14277, 0, 0],
            ],
            0xa76e140e8c0b1f90,
        ),
    );
}

#[test]
fn pinned_pie_four_flows() {
    check(
        "pie-4",
        &dumbbell("pie", "", 4, false),
        (
            &[
                [9, 857, 0, 14211, 14212, 255277370459, 35279856],
                [0, 0, 0, 14169, 14169, 0, 0],
            ],
            0xe10d54dc84096bf4,
        ),
    );
}

/// Ties at the end of a lazy FQ-CoDel service (docs/performance.md,
/// "FQ-CoDel per packet, round four"): a bottleneck delay of one data
/// packet's serialization (120,160 ns), access links twice as fast, a
/// reverse UDP stream of data-sized packets, and samples every 4,320 ns
/// (one ACK's serialization), so arrivals and samples land on the very
/// nanosecond a lazy service ends, some scheduled before it began and some
/// during it. Pinned on 77bf91d (no lazy dequeue); aqm43's tie rules
/// changed the series here.
#[test]
fn pinned_fq_codel_ties_at_lazy_ends() {
    let toml = r#"
        [network]
        topology = "dumbbell"
        [network.bottleneck]
        rate = "100Mbps"
        delay = "120160ns"
        queue = "50pkt"
        discipline = "fq_codel"
        [network.bottleneck.aqm]
        ecn = true
        target = "1ms"
        [network.access]
        rate = "200Mbps"
        delay = "0s"
        [[flows]]
        cc = "cubic"
        count = 2
        tcp = { profile = "linux", packet_size = "1502B", ecn = true }
        [[flows]]
        cc = "reno"
        count = 2
        tcp = { packet_size = "1502B", delayed_ack = false }
        [[udp]]
        pattern = "cbr"
        rate = "12016000bps"
        packet_size = "1502B"
        from = 1
        to = 0
        [run]
        duration = "1s"
        seed = 5
        measure_from = "0.120160s"
        sample_interval = "4320ns"
    "#;
    check(
        "fq_codel-ties",
        toml,
        (
            &[
                [50, 106, 31, 8321, 8322, 34285788682, 9606400],
                [0, 0, 0, 7328, 7328, 44809520, 120080],
            ],
            0x6ec9c202ee8d0ead,
        ),
    );
}
