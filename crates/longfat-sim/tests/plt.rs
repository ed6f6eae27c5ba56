//! PLT end to end: the transport loses track of nothing, and a PLT flow
//! beats Reno under random loss by the margin the paper reports (Fig. 3).

mod common;
use common::{f64_of, link, run_toml};
use longfat_sim::flow::Endpoints;
use longfat_sim::{build, Scenario};

fn scenario(cc: &str, loss: f64, extra: &str, duration: &str) -> String {
    format!(
        r#"
        [network]
        topology = "dumbbell"
        [network.bottleneck]
        rate = "100Mbps"
        delay = "40ms"
        queue = "1bdp"
        discipline = "priority"
        class_queues = ["1bdp", "1bdp"]
        loss = {loss}
        reverse_loss = {loss}
        [[flows]]
        cc = "{cc}"
        {extra}
        tcp = {{ packet_size = "1000B" }}
        [run]
        duration = "{duration}"
        "#
    )
}

#[test]
fn a_finite_transfer_under_loss_arrives_whole_and_every_lcm_loss_is_resent_once() {
    let total = 30_000u64;
    let (sim, summary) = run_toml(&scenario("plt", 0.005, &format!("size = \"{total}pkt\""), "60s"));
    let Endpoints::Plt { sender, receiver } = &sim.flows[0].endpoints else { panic!("a PLT flow") };
    assert!(sender.completed_at_ns.is_some(), "the transfer completed");
    assert!(sender.manager().is_complete());
    assert_eq!(receiver.data_nxt(), total, "every packet delivered in order");
    assert_eq!(receiver.counters.delivered_pkts, total);
    assert_eq!(receiver.counters.delivered_bytes, total * 960);
    let (h, l) = (receiver.plt.hcm_new_pkts, receiver.plt.lcm_new_pkts);
    assert_eq!(h + l, total, "each packet arrived first through exactly one module");
    assert!(l > 0 && h > 0);
    // One class is first-in first-out, so nothing the LCM gives up on
    // arrives later, and each of its losses is sent by the HCM once.
    let lcm = sender.lcm().counters;
    assert!(lcm.lost_pkts > 50, "the run exercises LCM losses: {}", lcm.lost_pkts);
    assert_eq!(lcm.late_acked_pkts, 0);
    assert_eq!(sender.manager().lcm_losses_resent, lcm.lost_pkts);
    let row = &summary["flows"][0];
    assert_eq!(row["lcm_losses_resent"], lcm.lost_pkts);
    assert!(row["completion_time_s"].as_f64().unwrap() > 0.0);
}

#[test]
fn under_a_tenth_of_a_percent_loss_plt_keeps_the_pipe_full_and_reno_collapses() {
    // 100 Mbit/s x 80 ms, 1000-byte packets, loss 1e-3 forward.
    let run = |cc: &str| {
        let text = scenario(cc, 0.001, "", "40s").replace("reverse_loss = 0.001", "reverse_loss = 0.0");
        let (_, s) = run_toml(&text);
        f64_of(&s["flows"][0]["goodput_bps"])
    };
    let (plt, reno) = (run("plt"), run("reno"));
    // Payload capacity: 100 Mbit/s x 960 / 1000.
    let capacity = 96e6;
    assert!(plt > 0.9 * capacity && plt <= capacity, "PLT {plt}");
    // Reno follows Mathis et al.: 1.22 MSS / (RTT sqrt(p)) = 3.70 Mbit/s.
    let mathis = 1.22 * 960.0 * 8.0 / (0.08 * 0.001f64.sqrt());
    assert!(reno > 0.5 * mathis && reno < 2.0 * mathis, "Reno {reno} vs Mathis {mathis}");
    assert!(plt > 10.0 * reno, "PLT {plt} vs Reno {reno}");
}

#[test]
fn with_large_buffers_and_no_loss_the_hcm_fills_the_queue_and_the_lcm_starves() {
    // Sect. 4.2: at zero loss the HCM (Reno) fills the bottleneck queue, so
    // LCM packets cannot get through and the LCM cuts back to one packet.
    let (sim, s) = run_toml(&scenario("plt", 0.0, "", "60s"));
    let row = &s["flows"][0];
    assert_eq!(f64_of(&row["final_lcm_cwnd_pkts"]), 1.0);
    let lcm_share = f64_of(&row["lcm_goodput_bps"]) / f64_of(&row["goodput_bps"]);
    assert!(lcm_share < 0.05, "LCM share {lcm_share}");
    assert!(f64_of(&link(&s, "bottleneck")["utilization"]) > 0.95);
    let _ = sim;
}

#[test]
fn plt_needs_a_priority_bottleneck_and_checks_its_fields() {
    let refused = |text: String| {
        let sc = Scenario::from_toml(&text).unwrap();
        build(&sc).err().expect("refused")
    };
    let fifo = scenario("plt", 0.0, "", "1s")
        .replace("discipline = \"priority\"", "")
        .replace("class_queues = [\"1bdp\", \"1bdp\"]", "");
    let e = refused(fifo);
    assert_eq!(e.field, "flows[0].cc");
    assert!(e.message.contains("priority"), "{}", e.message);
    let e = refused(scenario("plt", 0.0, "plt = { alpha = 0 }", "1s"));
    assert_eq!(e.field, "flows[0].plt.alpha");
    assert!(e.message.contains("allowed"), "{}", e.message);
    let e = refused(scenario("plt", 0.0, "plt = { hcm = \"renoo\" }", "1s"));
    assert_eq!(e.field, "flows[0].plt.hcm");
    let e = refused(scenario("reno", 0.0, "plt = { mu = 0.01 }", "1s"));
    assert_eq!(e.field, "flows[0].plt");
    let e = refused(scenario("plt", 0.0, "plt = { lcm_initial_window = \"0pkt\" }", "1s"));
    assert_eq!(e.field, "flows[0].plt.lcm_initial_window");
    let e = refused(scenario("plt", 0.0, "plt = { epoch = \"0ms\" }", "1s"));
    assert_eq!(e.field, "flows[0].plt.epoch");
    let e = refused(scenario("plt", 0.0, "plt = { lcm_ack_class = \"middle\" }", "1s"));
    assert_eq!(e.field, "flows[0].plt.lcm_ack_class");
    let e = refused(scenario("plt", 0.0, "plt = { lcm_ack_every = 0 }", "1s"));
    assert_eq!(e.field, "flows[0].plt.lcm_ack_every");
    let e = refused(scenario("plt", 0.0, "", "1s").replace("tcp = { packet_size = \"1000B\" }", "tcp = { packet_size = \"1000B\", priority_class = 1 }"));
    assert_eq!(e.field, "flows[0].tcp.priority_class");
}

#[test]
fn without_random_loss_plt_delivers_what_reno_does_on_a_shared_buffer() {
    // One shared BDP buffer with push-out: the HCM (Reno) fills it, the
    // LCM's packets are pushed out and time out, and their data goes out
    // through the HCM within one RTO, so in-order goodput matches Reno's.
    // (A backed-off LCM timer held in-order delivery for seconds here.)
    let run = |cc: &str| {
        let text = scenario(cc, 0.0, "", "60s")
            .replace("class_queues = [\"1bdp\", \"1bdp\"]", "buffer = \"shared\"")
            .replace("[run]", "[run]\nmeasure_from = \"10s\"");
        let (_, s) = run_toml(&text);
        f64_of(&s["flows"][0]["goodput_bps"])
    };
    let (plt, reno) = (run("plt"), run("reno"));
    assert!((plt / reno - 1.0).abs() < 0.01, "PLT {plt} vs Reno {reno}");
}
