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
