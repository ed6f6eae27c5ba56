//! PLT end to end: the transport loses track of nothing, and a PLT flow
//! beats Reno under random loss by the margin the paper reports (Fig. 3).

use crate::common;
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
    for profile in ["rfc", "ns2", "linux"] {
        transfer_arrives_whole(profile);
    }
}

fn transfer_arrives_whole(profile: &str) {
    let total = 30_000u64;
    let text = scenario("plt", 0.005, &format!("size = \"{total}pkt\""), "60s").replace(
        "tcp = { packet_size = \"1000B\" }",
        &format!("tcp = {{ packet_size = \"1000B\", profile = \"{profile}\" }}"),
    );
    let (sim, summary) = run_toml(&text);
    let Endpoints::Plt { sender, receiver } = &sim.flows[0].endpoints else {
        panic!("a PLT flow")
    };
    assert!(sender.completed_at_ns.is_some(), "the transfer completed");
    assert!(sender.manager().is_complete());
    assert_eq!(
        receiver.data_nxt(),
        total,
        "every packet delivered in order"
    );
    assert_eq!(receiver.counters.delivered_pkts, total);
    assert_eq!(receiver.counters.delivered_bytes, total * 960);
    let (h, l) = (receiver.plt.hcm_new_pkts, receiver.plt.lcm_new_pkts);
    assert_eq!(
        h + l,
        total,
        "each packet arrived first through exactly one module"
    );
    assert!(l > 0 && h > 0);
    // One class is first-in first-out, so nothing the LCM gives up on
    // arrives later, and each of its losses is sent by the HCM once.
    let lcm = sender.lcm().counters;
    assert!(
        lcm.lost_pkts > 50,
        "the run exercises LCM losses: {}",
        lcm.lost_pkts
    );
    // What the LCM gave up on and did not arrive late went out again by the
    // HCM, once; duplicates at the receiver are the late arrivals at most.
    assert_eq!(
        sender.manager().lcm_losses_resent + lcm.late_acked_pkts,
        lcm.lost_pkts,
        "{profile}"
    );
    assert!(
        receiver.counters.duplicate_pkts <= lcm.late_acked_pkts + sender.hcm().counters.retransmits,
        "{profile}"
    );
    let row = &summary["flows"][0];
    // The summary counts the measurement window (from `measure_from`).
    let resent = row["lcm_losses_resent"].as_u64().unwrap();
    assert!(resent > 0 && resent <= sender.manager().lcm_losses_resent);
    assert!(row["completion_time_s"].as_f64().unwrap() > 0.0);
}

#[test]
fn under_a_tenth_of_a_percent_loss_plt_keeps_the_pipe_full_and_reno_collapses() {
    // 100 Mbit/s x 80 ms, 1000-byte packets, loss 1e-3 forward.
    let run = |cc: &str| {
        let text =
            scenario(cc, 0.001, "", "40s").replace("reverse_loss = 0.001", "reverse_loss = 0.0");
        let (_, s) = run_toml(&text);
        f64_of(&s["flows"][0]["goodput_bps"])
    };
    let (plt, reno) = (run("plt"), run("reno"));
    // Payload capacity: 100 Mbit/s x 960 / 1000.
    let capacity = 96e6;
    assert!(plt > 0.9 * capacity && plt <= capacity, "PLT {plt}");
    // Reno follows Mathis et al.: 1.22 MSS / (RTT sqrt(p)) = 3.70 Mbit/s.
    let mathis = 1.22 * 960.0 * 8.0 / (0.08 * 0.001f64.sqrt());
    assert!(
        reno > 0.5 * mathis && reno < 2.0 * mathis,
        "Reno {reno} vs Mathis {mathis}"
    );
    assert!(plt > 10.0 * reno, "PLT {plt} vs Reno {reno}");
}

#[test]
fn with_large_buffers_and_no_loss_the_hcm_fills_the_queue_and_the_lcm_starves() {
    // Sect. 4.2: at zero loss the HCM (Reno) fills the bottleneck queue, so
    // LCM packets cannot get through and the LCM cuts back till its window
    // is below one packet: it stops.
    let (sim, s) = run_toml(&scenario("plt", 0.0, "", "60s"));
    let row = &s["flows"][0];
    assert_eq!(f64_of(&row["final_lcm_cwnd_pkts"]), 0.0, "the LCM stopped");
    let lcm_share = f64_of(&row["lcm_goodput_bps"]) / f64_of(&row["goodput_bps"]);
    assert!(lcm_share < 0.05, "LCM share {lcm_share}");
    assert!(f64_of(&link(&s, "bottleneck")["utilization"]) > 0.95);
    let Endpoints::Plt { sender, .. } = &sim.flows[0].endpoints else {
        panic!()
    };
    assert!(sender.lcm().rule().is_stopped());
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
    let e = refused(scenario(
        "plt",
        0.0,
        "plt = { lcm_initial_window = \"0pkt\" }",
        "1s",
    ));
    assert_eq!(e.field, "flows[0].plt.lcm_initial_window");
    let e = refused(scenario("plt", 0.0, "plt = { epoch = \"0ms\" }", "1s"));
    assert_eq!(e.field, "flows[0].plt.epoch");
    let e = refused(scenario(
        "plt",
        0.0,
        "plt = { lcm_ack_class = \"middle\" }",
        "1s",
    ));
    assert_eq!(e.field, "flows[0].plt.lcm_ack_class");
    let e = refused(scenario("plt", 0.0, "plt = { lcm_restart = \"zero\" }", "1s"));
    assert_eq!(e.field, "flows[0].plt.lcm_restart");
    assert!(e.message.contains("\"freed\", \"one\""), "{}", e.message);
    let e = refused(scenario("plt", 0.0, "plt = { lcm_ack_every = 0 }", "1s"));
    assert_eq!(e.field, "flows[0].plt.lcm_ack_every");
    let e = refused(scenario("plt", 0.0, "", "1s").replace(
        "tcp = { packet_size = \"1000B\" }",
        "tcp = { packet_size = \"1000B\", priority_class = 1 }",
    ));
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

#[test]
fn with_small_buffers_the_lcm_fills_what_reno_leaves_and_restarts_after_each_cutback() {
    // Sect. 4.2, Fig. 6: with a buffer of 10 % of the BDP Reno leaves the
    // link idle after each halving; the LCM, stopped while the HCM fills
    // the queue, restarts at each HCM cutback and fills the gap.
    let run = |cc: &str| {
        let text = scenario(cc, 0.0, "", "120s")
            .replace("queue = \"1bdp\"", "queue = \"0.1bdp\"")
            .replace("class_queues = [\"1bdp\", \"1bdp\"]", "buffer = \"shared\"")
            .replace("[run]", "[run]\nmeasure_from = \"20s\"");
        run_toml(&text)
    };
    let (sim, plt) = run("plt");
    let (_, reno) = run("reno");
    let capacity = 96e6;
    let (g_plt, g_reno) = (
        f64_of(&plt["flows"][0]["goodput_bps"]),
        f64_of(&reno["flows"][0]["goodput_bps"]),
    );
    // Reno with B = 0.1 BDP: the sawtooth from (1 + 0.1) BDP / 2 to
    // (1 + 0.1) BDP idles the link for part of each cycle.
    assert!(g_reno < 0.8 * capacity, "Reno {g_reno}");
    assert!(g_plt > 0.9 * capacity && g_plt <= capacity, "PLT {g_plt}");
    let Endpoints::Plt { sender, .. } = &sim.flows[0].endpoints else {
        panic!()
    };
    let fr = sender.hcm().counters.fast_recoveries;
    let restarts = sender.lcm().counters.restarts;
    assert!(
        restarts >= 1 && restarts <= fr,
        "restarts {restarts}, HCM cutbacks {fr}"
    );
}

#[test]
fn an_lcm_restarting_at_one_packet_fills_less_of_what_reno_leaves() {
    // The same path as above; sect. 4.2 leaves the restart window open.
    // Restarting at one packet, the LCM needs epochs of 10 % growth to
    // reach the room the HCM's cutback freed, which the default reading
    // (the freed packets at once) fills at the restart.
    let run = |restart: &str| {
        let text = scenario("plt", 0.0, &format!("plt = {{ lcm_restart = \"{restart}\" }}"), "120s")
            .replace("queue = \"1bdp\"", "queue = \"0.1bdp\"")
            .replace("class_queues = [\"1bdp\", \"1bdp\"]", "buffer = \"shared\"")
            .replace("[run]", "[run]\nmeasure_from = \"20s\"");
        let (sim, summary) = run_toml(&text);
        let Endpoints::Plt { sender, .. } = &sim.flows[0].endpoints else {
            panic!()
        };
        (f64_of(&summary["flows"][0]["goodput_bps"]), sender.lcm().counters.restarts)
    };
    let (freed, r_freed) = run("freed");
    let (one, r_one) = run("one");
    assert!(r_freed >= 1 && r_one >= 1, "restarts {r_freed}, {r_one}");
    assert!(one < freed && one > 0.5 * 96e6, "one {one}, freed {freed}");
}

#[test]
fn a_receiver_window_below_the_lcm_window_does_not_stall_it() {
    // rwnd 500 packets per module at 80 ms: at most 48 Mbit/s of payload
    // each. The LCM's window (one BDP, 1000 packets) is above it; its
    // losses must not leave it waiting for room that only a new packet can
    // make.
    let text = scenario("plt", 0.001, "", "30s")
        .replace(
            "tcp = { packet_size = \"1000B\" }",
            "tcp = { packet_size = \"1000B\", rwnd = \"500pkt\" }",
        )
        .replace("[run]", "[run]\nmeasure_from = \"10s\"");
    let (sim, s) = run_toml(&text);
    let g = f64_of(&s["flows"][0]["lcm_goodput_bps"]);
    assert!(g > 0.6 * 48e6 && g <= 48e6, "LCM goodput {g}");
    // The LCM window does not grow past what it could use.
    let Endpoints::Plt { sender, .. } = &sim.flows[0].endpoints else {
        panic!()
    };
    assert!(
        sender.lcm().cwnd() < 4.0 * 500.0,
        "LCM window {}",
        sender.lcm().cwnd()
    );
}

#[test]
fn a_stopped_connection_delivers_everything_it_sent() {
    let text = scenario("plt", 0.004, "stop = \"5s\"", "20s");
    let (sim, _) = run_toml(&text);
    let Endpoints::Plt { sender, receiver } = &sim.flows[0].endpoints else {
        panic!()
    };
    let pm = sender.manager();
    assert!(pm.sent() > 10_000, "it sent {}", pm.sent());
    assert_eq!(pm.queued(), 0, "no LCM loss left unsent");
    assert_eq!(pm.outstanding(), 0);
    assert_eq!(
        receiver.data_nxt(),
        pm.sent(),
        "everything sent arrived in order"
    );
}

#[test]
fn delayed_lcm_acks_do_not_time_the_lcm_out() {
    // One ACK per 8 LCM packets with a window of 400: after a CBR source in
    // class 0 leaves, the LCM carries up to its receiver window (40 Mbit/s
    // of 1000-byte packets at 80 ms, 38.4 of payload).
    let text = scenario("plt", 0.0, "plt = { lcm_ack_every = 8 }", "40s")
        .replace("tcp = { packet_size = \"1000B\" }", "tcp = { packet_size = \"1000B\", rwnd = \"400pkt\" }")
        .replace("[run]", "[[udp]]\npattern = \"cbr\"\nrate = \"99Mbps\"\nstop = \"15s\"\n[run]\nmeasure_from = \"25s\"");
    let (_, s) = run_toml(&text);
    let g = f64_of(&s["flows"][0]["lcm_goodput_bps"]);
    assert!(g > 0.9 * 38.4e6 && g <= 38.4e6, "LCM goodput {g}");
    // Starved while the CBR source ran, it timed out then; not once the
    // link was free (the measurement window).
    assert_eq!(s["flows"][0]["lcm_timeouts"], 0);
}

#[test]
fn short_plt_transfers_complete() {
    // Poisson arrivals of PLT transfers (the paper's Fig. 9 workload, scaled
    // down): every transfer that starts early enough completes, each within
    // a few RTTs since its LCM's first window holds the whole transfer.
    let (sim, s) = run_toml(
        r#"
        [network]
        topology = "dumbbell"
        bdp_rtt = "80ms"
        [network.bottleneck]
        rate = "100Mbps"
        delay = "40ms"
        queue = "1bdp"
        discipline = "priority"
        buffer = "shared"
        [[short_flows]]
        cc = "plt"
        arrival_rate = 200.0
        size_mean = "25pkt"
        stop = "8s"
        tcp = { packet_size = "1000B" }
        [run]
        duration = "10s"
        "#,
    );
    let g = &s["short_flows"][0];
    assert_eq!(g["started"], g["completed"], "{g}");
    assert!(g["started"].as_u64().unwrap() > 1000);
    let p50 = f64_of(&g["p50_fct_s"]);
    assert!(p50 < 0.25, "median completion {p50} s at 80 ms RTT");
    assert!(sim.flows.iter().all(|f| f.completion_time_ns().is_some()));
}

#[test]
fn the_receive_buffer_bounds_what_the_connection_holds() {
    // 0.45 % loss at 1 Gbit/s x 80 ms: the LCM loses packets faster than
    // the HCM (Reno under the same loss) can resend them. A receive buffer
    // of 20,000 packets caps the data between the oldest hole and the
    // newest packet sent.
    let text = scenario(
        "plt",
        0.0045,
        "plt = { receive_buffer = \"20000pkt\" }",
        "20s",
    )
    .replace("100Mbps", "1Gbps");
    let (sim, _) = run_toml(&text);
    let Endpoints::Plt { sender, receiver } = &sim.flows[0].endpoints else {
        panic!()
    };
    let pm = sender.manager();
    assert!(pm.outstanding() <= 20_000);
    assert!(
        pm.sent() - receiver.data_nxt() <= 20_000,
        "held {}",
        pm.sent() - receiver.data_nxt()
    );
    assert!(
        pm.outstanding() > 15_000,
        "the cap binds here: {} outstanding",
        pm.outstanding()
    );
}

#[test]
fn the_footnote_2_exception_lets_the_lcm_resend_when_the_hcm_falls_behind() {
    // 0.45 % loss at 1 Gbit/s x 80 ms: the LCM loses packets faster than
    // the HCM (Reno under the same loss) resends them, so holes wait and
    // hold up in-order delivery. With `lcm_resend = 1` the LCM
    // resends its own losses once the retransmit buffer exceeds the HCM's
    // window, and in-order goodput keeps up.
    let run = |extra: &str| {
        let text = scenario("plt", 0.0045, extra, "30s")
            .replace("100Mbps", "1Gbps")
            .replace("[run]", "[run]\nmeasure_from = \"10s\"");
        let (sim, s) = run_toml(&text);
        let row = &s["flows"][0];
        let in_order = f64_of(&row["goodput_bps"]);
        let first = f64_of(&row["hcm_goodput_bps"]) + f64_of(&row["lcm_goodput_bps"]);
        let Endpoints::Plt { sender, .. } = &sim.flows[0].endpoints else {
            panic!()
        };
        (in_order, first, sender.manager().lcm_losses_resent_by_lcm)
    };
    let (off_in, off_first, off_resent) = run("");
    let (on_in, on_first, on_resent) = run("plt = { lcm_resend = 1.0 }");
    assert_eq!(off_resent, 0);
    assert!(on_resent > 1000, "{on_resent}");
    // Without: the oldest hole holds the connection's window (the largest
    // TCP window, 1.1 M packets, filled in about 14 s at this rate) and the
    // LCM starves. With: near the link's payload capacity, 960 Mbit/s.
    assert!(
        on_in > 0.9 * 960e6 && on_in > 0.95 * on_first,
        "with: {on_in} in order of {on_first}"
    );
    assert!(
        off_in < 0.5 * on_in,
        "without {off_in} (first delivered {off_first}), with {on_in}"
    );
}

/// `transport = "plt"` runs `cc` as the HCM's controller; `cc = "plt"` is
/// its alias with the controller in `plt.hcm`. Both build the same
/// connection: the same run to the byte, the same name and label.
#[test]
fn transport_plt_and_its_alias_cc_plt_run_alike() {
    let (sim, by_transport) = run_toml(&scenario("cubic", 0.001, "transport = \"plt\"", "3s"));
    let (_, by_alias) = run_toml(&scenario("plt", 0.001, "plt = { hcm = \"cubic\" }", "3s"));
    assert!(matches!(sim.flows[0].endpoints, Endpoints::Plt { .. }));
    assert_eq!(by_transport["flows"][0]["algorithm"], "plt-cubic");
    assert_eq!(by_transport["flows"][0]["name"], "plt0");
    assert!(f64_of(&by_transport["flows"][0]["lcm_goodput_bps"]) > 0.0);
    assert_eq!(by_transport, by_alias);
    // `transport = "tcp"` is the default.
    let (_, tcp) = run_toml(&scenario("cubic", 0.001, "transport = \"tcp\"", "1s"));
    let (_, default) = run_toml(&scenario("cubic", 0.001, "", "1s"));
    assert_eq!(tcp, default);
}

fn refused(text: &str) -> longfat_sim::ScenarioError {
    build(&Scenario::from_toml(text).unwrap())
        .err()
        .expect("refused")
}

#[test]
fn transport_is_checked_with_its_field_in_every_entry_kind() {
    let e = refused(&scenario("reno", 0.0, "transport = \"quic\"", "1s"));
    assert_eq!(e.field, "flows[0].transport");
    assert!(
        e.message.contains("allowed: \"tcp\", \"plt\""),
        "{}",
        e.message
    );
    let e = refused(&scenario("plt", 0.0, "transport = \"tcp\"", "1s"));
    assert_eq!(e.field, "flows[0].cc");
    assert!(
        e.message.contains("alias of transport = \"plt\""),
        "{}",
        e.message
    );
    let e = refused(&scenario(
        "reno",
        0.0,
        "transport = \"plt\"\nplt = { hcm = \"cubic\" }",
        "1s",
    ));
    assert_eq!(e.field, "flows[0].plt.hcm");
    let e = refused(&scenario(
        "reno",
        0.0,
        "transport = \"tcp\"\nplt = { mu = 0.01 }",
        "1s",
    ));
    assert_eq!(e.field, "flows[0].plt");
    let fifo = scenario("reno", 0.0, "transport = \"plt\"", "1s")
        .replace("discipline = \"priority\"", "")
        .replace("class_queues = [\"1bdp\", \"1bdp\"]", "");
    let e = refused(&fifo);
    assert_eq!(e.field, "flows[0].transport", "the field that chose PLT");
    assert!(e.message.contains("priority"), "{}", e.message);
    let base = scenario("reno", 0.0, "", "1s");
    let short = format!("{base}\n[[short_flows]]\ncc = \"reno\"\ntransport = \"quic\"\narrival_rate = 1.0\nsize_mean = \"1pkt\"\n");
    assert_eq!(refused(&short).field, "short_flows[0].transport");
    let web = format!("{base}\n[[web]]\ncc = \"reno\"\ntransport = \"quic\"\nsessions = 1\npages_per_session = 1\ninter_page = \"1s\"\nobject_size_mean = \"1pkt\"\n");
    assert_eq!(refused(&web).field, "web[0].transport");
}
