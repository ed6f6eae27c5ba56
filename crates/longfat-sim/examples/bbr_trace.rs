//! A time series of each BBR flow's model and of the bottleneck queue, for
//! the ns-3 side by side (docs/validation/ns3-bbr-aqm.md, "BBR with two
//! flows"): prints CSV, one row per `interval_ms`, with per flow its cwnd and
//! packets in flight, pacing rate, bandwidth estimate (`bbr_max_bw`),
//! min_rtt, smoothed RTT, mode, gain-cycle phase and pacing gain.
//!
//! `cargo run --release -p longfat-sim --example bbr_trace -- FILE.toml [interval_ms] [until_s]`
//!
//! scripts/validation/ns3_dumbbell.py's `trace_interval_s` writes the same
//! columns from ns-3's `TcpBbr`.

use longfat_cc::bbr::{Mode, BW_SCALE};
use longfat_cc::Bbr;
use longfat_sim::flow::Endpoints;

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .expect("usage: bbr_trace FILE.toml [interval_ms] [until_s]");
    let interval_ms: f64 = args
        .next()
        .map_or(10.0, |a| a.parse().expect("interval_ms"));
    let text = std::fs::read_to_string(&path).expect("readable scenario");
    let scenario = longfat_sim::Scenario::from_toml(&text).unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(2)
    });
    let mut sim = longfat_sim::build(&scenario).unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(2)
    });
    let until_ns = args.next().map_or(sim.end_ns, |a| {
        (a.parse::<f64>().expect("until_s") * 1e9) as u64
    });
    let step_ns = (interval_ms * 1e6) as u64;
    let bottleneck = sim.metrics.monitored_links[0];
    let n = sim.flows.len();
    let mut head = vec!["t_s".to_string(), "queue_pkts".to_string()];
    for i in 0..n {
        for c in [
            "cwnd_pkts",
            "inflight_pkts",
            "pacing_bps",
            "bw_bps",
            "min_rtt_s",
            "srtt_s",
            "state",
            "cycle_index",
            "pacing_gain",
        ] {
            head.push(format!("{c}{i}"));
        }
    }
    println!("{}", head.join(","));
    let mut t = step_ns;
    while t <= until_ns {
        sim.run_until(t);
        let (q, _) = sim.links[bottleneck].queue_len(t);
        let mut row = vec![format!("{:.3}", t as f64 / 1e9), q.to_string()];
        for f in &sim.flows {
            let Endpoints::Tcp { sender, .. } = &f.endpoints else {
                panic!("a TCP flow")
            };
            let cc = sender.cc();
            let mss = sender.config().payload_bytes();
            let pacing = sender.pacing_rate_bytes_per_sec().unwrap_or(0) * 8;
            row.push(cc.cwnd().to_string());
            row.push(sender.scoreboard().pipe().to_string());
            row.push(pacing.to_string());
            match cc.inspect().and_then(|a| a.downcast_ref::<Bbr>()) {
                Some(b) => {
                    let bw_bps =
                        (b.max_bw() as f64) * (mss * 8) as f64 * 1e6 / (1u64 << BW_SCALE) as f64;
                    let state = match b.mode() {
                        Mode::Startup => 0,
                        Mode::Drain => 1,
                        Mode::ProbeBw => 2,
                        Mode::ProbeRtt => 3,
                    };
                    row.push(format!("{bw_bps:.0}"));
                    row.push(format!("{:.6}", f64::from(b.min_rtt_us()) / 1e6));
                    row.push(format!(
                        "{:.6}",
                        sender.rtt().stats().smoothed_ns as f64 / 1e9
                    ));
                    row.push(state.to_string());
                    row.push(b.cycle_idx().to_string());
                    row.push(format!("{:.4}", f64::from(b.pacing_gain()) / 256.0));
                }
                None => row.extend(std::iter::repeat_n("".to_string(), 6)),
            }
        }
        println!("{}", row.join(","));
        t += step_ns;
    }
}
