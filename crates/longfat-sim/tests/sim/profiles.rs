//! Whole runs of the transport profiles (`tcp.profile` = "rfc" | "ns2" |
//! "linux") checked against closed-form models and hand-derived timelines:
//! the regression tests of the issue "A faithful TCP". Each expectation is
//! derived in its comment, never read off the code.

use longfat_sim::flow::Endpoints;
use longfat_sim::tcp::sender::TcpSender;
use longfat_sim::{build, Scenario, Simulation};

const MS: u64 = 1_000_000;
const SEC: u64 = 1_000_000_000;

fn sim_of(text: &str) -> Simulation {
    let scenario = Scenario::from_toml(text).unwrap_or_else(|e| panic!("scenario: {e}"));
    build(&scenario).unwrap_or_else(|e| panic!("build: {e}"))
}

fn sender(sim: &Simulation, i: usize) -> &TcpSender {
    match &sim.flows[i].endpoints {
        Endpoints::Tcp { sender, .. } => sender,
        _ => panic!("flow {i} is not a TCP flow"),
    }
}

fn link_drops(sim: &Simulation, name: &str) -> (u64, u64) {
    let l = &sim.links[sim.link_index(name).unwrap()];
    (l.counters.drops_overflow, l.counters.drops_random)
}

/// Runs event by event until `done` holds (or the run ends); true if it held.
fn run_until_true(sim: &mut Simulation, mut done: impl FnMut(&Simulation) -> bool) -> bool {
    while !sim.is_done() {
        if done(sim) {
            return true;
        }
        let before = sim.events_processed();
        sim.run_until_limited(sim.end_ns, 1);
        if sim.events_processed() == before {
            break;
        }
    }
    done(sim)
}

/// Initial windows: RFC 5681 §3.1 allows 2..4 (the rfc profile keeps 2),
/// ns-2 `windowInit_` = 2, Linux `TCP_INIT_CWND` = 10 (RFC 6928). The first
/// flight leaves at once; the first ACK is an RTT (20 ms) away, so at 1 ms
/// the sender has sent exactly its initial window.
#[test]
fn initial_window_per_profile() {
    for (profile, iw) in [("rfc", 2), ("ns2", 2), ("linux", 10)] {
        let mut sim = sim_of(&format!(
            r#"
            [network]
            topology = "dumbbell"
            [network.bottleneck]
            rate = "100Mbps"
            delay = "10ms"
            queue = "1bdp"
            [[flows]]
            cc = "reno"
            tcp = {{ profile = "{profile}" }}
            [run]
            duration = "1s"
            "#
        ));
        sim.run_until(MS);
        let s = sender(&sim, 0);
        assert_eq!(s.counters.sent_pkts, iw, "{profile}");
        assert_eq!(s.cc().cwnd(), iw as f64, "{profile}");
    }
}

/// Issue 28 item 9(d): the backed-off RTO saturates at Linux's
/// `TCP_RTO_MAX` = 120 s (include/net/tcp.h: `120*HZ`) under `linux`, at
/// 60 s under `rfc` (RFC 6298 §2.5: a ceiling of at least 60 s) and `ns2`;
/// `tcp.max_rto` still overrides it. Before any sample the RTO is the
/// initial one (1 s, ns-2 3 s), so 12 expiries ask for 2^12 s or more.
#[test]
fn maximum_rto_per_profile() {
    for (profile, extra, max_rto_ns) in [
        ("rfc", "", 60 * SEC),
        ("ns2", "", 60 * SEC),
        ("linux", "", 120 * SEC),
        ("linux", r#", max_rto = "90s""#, 90 * SEC),
    ] {
        let sim = sim_of(&format!(
            r#"
            [network]
            topology = "dumbbell"
            [network.bottleneck]
            rate = "100Mbps"
            delay = "10ms"
            queue = "1bdp"
            [[flows]]
            cc = "reno"
            tcp = {{ profile = "{profile}"{extra} }}
            [run]
            duration = "1s"
            "#
        ));
        let s = sender(&sim, 0);
        assert_eq!(s.config().max_rto_ns, max_rto_ns, "{profile}{extra}");
        assert_eq!(
            s.rtt().backed_off_rto_ns(12),
            max_rto_ns,
            "{profile}{extra}"
        );
    }
}

/// A receiver-window-limited flow: rwnd = 64 packets on a 1 Gbit/s,
/// 50 ms path (BDP 4,167 packets), Reno, 10 s, no loss. At most 64 packets
/// are ever out; the sender is rwnd-limited, never cwnd-limited, after the
/// first rounds.
fn rwnd_limited(profile: &str) -> Simulation {
    let mut sim = sim_of(&format!(
        r#"
        [network]
        topology = "dumbbell"
        [network.bottleneck]
        rate = "1Gbps"
        delay = "25ms"
        queue = "1bdp"
        [[flows]]
        cc = "reno"
        tcp = {{ profile = "{profile}", rwnd = "64pkt" }}
        [run]
        duration = "10s"
        "#
    ));
    sim.run();
    sim
}

/// Defect 2 ("no cwnd validation"). RFC 7661 and Linux
/// (`tcp_is_cwnd_limited`: cwnd-limited this round, or in slow start below
/// twice the most packets out) stop the growth of a window the flow does
/// not use. Here slow start adds one packet per ACK while cwnd <
/// 2 x max_packets_out = 2 x 64 = 128, so cwnd ends at exactly 128 (it was
/// ~12,500 before cwnd validation: one packet per ACK for 10 s).
#[test]
fn rwnd_limited_flow_does_not_inflate_cwnd() {
    for profile in ["rfc", "linux"] {
        let sim = rwnd_limited(profile);
        let s = sender(&sim, 0);
        assert!(s.counters.sent_pkts > 10_000, "{profile}: the flow ran");
        assert_eq!(s.counters.retransmits, 0, "{profile}");
        assert_eq!(s.cc().cwnd(), 128.0, "{profile}");
        let peak = sim
            .metrics
            .flows
            .cwnd_pkts
            .iter()
            .cloned()
            .fold(0.0, f64::max);
        assert!(peak <= 128.0, "{profile}: peak cwnd {peak}");
    }
}

/// Issue 28 item 11. ns-2.35 starts ssthresh at the advertised window
/// (tcp.cc `TcpAgent::reset()`: `ssthresh_ = int(wnd_)`), so slow start
/// ends at rwnd = 64; ns-2 has no cwnd validation, so `opencwnd()` then
/// goes on adding 1/cwnd per new ACK (`windowOption_` 1,
/// `increase_num_` 1) while rwnd limits the sender. Every ACK advances the cumulative point
/// (no loss, no delayed ACKs): cwnd = 2 (`windowInit_`) + 1 per ACK up to 64
/// (62 ACKs), then cwnd += 1/cwnd for each of the rest, i.e. close to
/// sqrt(64^2 + 2 (ACKs - 62)) (cwnd^2 grows by 2 + 1/cwnd^2 per ACK).
/// Until this fix ssthresh was unlimited and cwnd = 2 + ACKs (~12,800).
#[test]
fn ns2_slow_start_ends_at_rwnd() {
    let sim = sim_of(
        r#"
        [network]
        topology = "dumbbell"
        [network.bottleneck]
        rate = "1Gbps"
        delay = "25ms"
        queue = "1bdp"
        [[flows]]
        cc = "reno"
        tcp = { profile = "ns2", rwnd = "64pkt" }
        [run]
        duration = "10s"
        "#,
    );
    assert_eq!(
        sender(&sim, 0).cc().ssthresh(),
        64.0,
        "before the first packet"
    );
    let mut sim = sim;
    sim.run();
    let s = sender(&sim, 0);
    assert_eq!(s.counters.retransmits, 0);
    assert_eq!(s.cc().ssthresh(), 64.0);
    let acks = s.counters.acks_received;
    // 10 s of 64 packets per 50 ms round trip: about 12,800 ACKs.
    assert!((12_000..13_000).contains(&acks), "{acks} ACKs");
    let mut cwnd = 2.0f64;
    for _ in 0..acks {
        if cwnd < 64.0 {
            cwnd += 1.0;
        } else {
            cwnd += 1.0 / cwnd;
        }
    }
    assert!(
        (s.cc().cwnd() - cwnd).abs() < 1e-9,
        "cwnd {} vs ns-2 {cwnd}",
        s.cc().cwnd()
    );
    let closed_form = (64.0f64 * 64.0 + 2.0 * (acks - 62) as f64).sqrt();
    assert!((cwnd - closed_form).abs() < 0.05, "{cwnd} vs {closed_form}");
}

/// ns-2 `slowdown()` halves `windowd() = min(cwnd_, wnd_)`, not cwnd: the
/// rwnd-limited flow above, whose cwnd has grown past rwnd = 64 (slow start
/// ends at 64, then 1/cwnd per ACK: `ns2_slow_start_ends_at_rwnd`), gets
/// ssthresh = 64 / 2 = 32 at its first loss. The rfc and linux senders halve
/// their (validated) cwnd of 128: 64. Bernoulli loss 2e-4 puts the first
/// loss ~5,000 packets (~4 s) in, in expectation; the test checks that cwnd
/// had passed 128 (rfc, linux) or rwnd (ns2, so that halving cwnd would
/// give more than 32) when it came.
#[test]
fn ns2_reduction_starts_from_min_cwnd_rwnd() {
    for (profile, ssthresh, cwnd_past) in [
        ("ns2", 32.0, 64.0),
        ("rfc", 64.0, 127.0),
        ("linux", 64.0, 127.0),
    ] {
        let mut sim = sim_of(&format!(
            r#"
            [network]
            topology = "dumbbell"
            [network.bottleneck]
            rate = "1Gbps"
            delay = "25ms"
            queue = "1bdp"
            loss = 2e-4
            [[flows]]
            cc = "reno"
            tcp = {{ profile = "{profile}", rwnd = "64pkt" }}
            [run]
            duration = "30s"
            seed = 2
            "#
        ));
        let mut before = 0.0;
        let reduced = run_until_true(&mut sim, |sim| {
            let s = sender(sim, 0);
            let n = s.counters.fast_recoveries + s.counters.timeouts;
            if n == 0 {
                before = s.cc().cwnd();
            }
            n > 0
        });
        assert!(reduced, "{profile}: no loss in 30 s");
        let s = sender(&sim, 0);
        assert_eq!(s.counters.fast_recoveries, 1, "{profile}");
        assert!(
            before > cwnd_past,
            "{profile}: cwnd {before} before the loss"
        );
        assert_eq!(s.cc().ssthresh(), ssthresh, "{profile}");
    }
}

/// A 3-packet web object whose last packet is lost. Path: 10 Mbit/s,
/// 20 ms bottleneck with room for one waiting packet; 100 Mbit/s access
/// links (zero delay). The three packets leave back to back (IW 10 under
/// linux; `initial_cwnd = 3` for the others): 0 is serialized at once, 1
/// waits, 2 finds the queue full and is dropped. Exact times (ns):
///   data: 120,000 (access) + 1,200,000 + 20,000,000 (bottleneck) + 120,000
///         = 21,440,000 on an idle path; 1 waits 1,200,000 more behind 0.
///   ACK (40 B): 3,200 + 32,000 + 20,000,000 + 3,200 = 20,038,400.
///   ACK for 0 at m1 = 41,478,400; ACK for 1 at m2 = 42,678,400.
///
/// Linux (RACK-TLP): after the second ACK one packet is out, so the probe
/// timeout is 2 SRTT + 200 ms (`tcp_schedule_loss_probe`, TCP_RTO_MIN)
/// capped at the RTO. SRTT = m1 + (m2 - m1)/8 = 41,628,400; `rttvar` =
/// max(2 m1, 200 ms) = 200 ms (the second sample lowers mdev, not rttvar),
/// so RTO = 241,628,400 < PTO = 283,256,800: the probe (packet 2 again)
/// leaves at m2 + RTO = 284,306,800 and its ACK arrives 41,478,400 later:
/// 325,785,200 ns. That is 3 RTTs + 200 ms, not the "about 2 RTTs" of the
/// issue: with a single packet out Linux waits for a possible delayed ACK.
///
/// ns-2 (10 ms ticks, `rtt_update` with timestamps): the samples round to
/// 4 ticks; t_srtt_ = 32, t_rttvar_ = 8 after the first, 6 after the
/// second; t_rtxcur_ = ((6 << 3) + 32) >> 3 = 10 ticks = 100 ms, below
/// minrto_: RTO = 200 ms from the last new ACK. The timeout at
/// 242,678,400 retransmits 2 (cwnd 1), acknowledged at 284,156,800 ns.
///
/// rfc (RFC 6298 with Linux's floor): RTO = SRTT + max(4 RTTVAR, 200 ms) =
/// 241,628,400 (4 RTTVAR = 63.4 ms): a timeout at the probe's moment,
/// done at 325,785,200 ns.
#[test]
fn three_packet_object_with_its_last_packet_lost() {
    for (profile, iw, done_ns, probes, timeouts) in [
        ("linux", 10, 325_785_200u64, 1, 0),
        ("ns2", 3, 284_156_800, 0, 1),
        ("rfc", 3, 325_785_200, 0, 1),
    ] {
        let mut sim = sim_of(&format!(
            r#"
            [network]
            topology = "dumbbell"
            [network.bottleneck]
            rate = "10Mbps"
            delay = "20ms"
            queue = "1pkt"
            [[flows]]
            cc = "reno"
            size = "3pkt"
            tcp = {{ profile = "{profile}", initial_cwnd = {iw} }}
            [run]
            duration = "2s"
            "#
        ));
        sim.run();
        assert_eq!(link_drops(&sim, "bottleneck"), (1, 0), "{profile}");
        let s = sender(&sim, 0);
        let t = s.completed_at_ns.expect("completed") - s.started_at_ns.unwrap();
        assert!(
            t.abs_diff(done_ns) <= 100_000,
            "{profile}: {t} ns vs {done_ns} ns"
        );
        assert_eq!(
            (s.counters.loss_probes, s.counters.timeouts),
            (probes, timeouts),
            "{profile}"
        );
        assert_eq!(s.counters.sent_pkts, 4, "{profile}");
    }
}

/// Padhye, Firoiu, Towsley, Kurose (1998), "Modeling TCP throughput: a
/// simple model and its empirical validation", eq. (31): the send rate of
/// a Reno flow in packets/s,
///   B(p) = min(Wmax/RTT, 1 / (RTT sqrt(2bp/3)
///                              + T0 min(1, 3 sqrt(3bp/8)) p (1 + 32 p^2))),
/// with b packets per ACK and T0 the retransmission timeout.
fn padhye(p: f64, rtt_s: f64, t0_s: f64, b: f64, w_max: f64) -> f64 {
    let denom = rtt_s * (2.0 * b * p / 3.0).sqrt()
        + t0_s * (3.0 * (3.0 * b * p / 8.0).sqrt()).min(1.0) * p * (1.0 + 32.0 * p * p);
    (w_max / rtt_s).min(1.0 / denom)
}

/// Reno under Bernoulli loss p on the data path, for one profile.
///
/// Path: 10 Gbit/s everywhere, 20 ms RTT, a 100,000-packet buffer: the
/// window (at most a few thousand packets) never fills the link, so every
/// loss is a random one (checked: no overflow drops) and the RTT is the
/// propagation RTT. One ACK per packet (b = 1), rwnd unlimited (the Wmax
/// term never binds). T0 = the profile's RTO at this RTT: RTT + 200 ms for
/// rfc (SRTT + max(4 RTTVAR, 200 ms)) and linux (SRTT + max(mdev, 200 ms)),
/// 200 ms for ns-2 (`minrto_`; floor(srtt + 4 rttvar) is a few 10 ms ticks).
///
/// PFTK's p is the rate of loss indications, not of lost packets: losses
/// within a round count once (their §2.1; in their validation, §3, p is
/// indications / packets sent). A SACK sender repairs all the losses of a
/// window in one recovery, so p is measured here the same way: (fast
/// recoveries + timeouts) / packets sent over the measurement window. The
/// band: the full model is within 15 % of the send rate (PFTK's own
/// validation, and the random-loss correction below is 7 %). The run sizes
/// give >= 50 loss indications per point (~5 M packets at p = 1e-5).
///
/// For small p the model reduces to Mathis et al. (1997): B = C / (RTT
/// sqrt(p)) with C = sqrt(3/2) = 1.22 for periodic loss; Mathis et al.
/// found C = 1.31 under random loss. C measured must lie between 1.22 - 5 %
/// and 1.31 + 7 %: [1.16, 1.40].
fn reno_under_random_loss_follows_padhye(profile: &str) {
    let rtt_s = 0.020;
    let t0_s = if profile == "ns2" { 0.2 } else { rtt_s + 0.2 };
    for (p, pkts) in [
        (1e-2, 200_000.0),
        (1e-3, 1_000_000.0),
        (1e-4, 3_000_000.0),
        (1e-5, 5_000_000.0),
    ] {
        let expect = padhye(p, rtt_s, t0_s, 1.0, f64::INFINITY);
        let duration_s = (pkts / expect).ceil();
        let mut sim = sim_of(&format!(
            r#"
            [network]
            topology = "dumbbell"
            [network.bottleneck]
            rate = "10Gbps"
            delay = "10ms"
            queue = "100000pkt"
            loss = {p}
            [network.access]
            rate = "10Gbps"
            [[flows]]
            cc = "reno"
            tcp = {{ profile = "{profile}" }}
            [run]
            duration = "{duration_s}s"
            seed = 1
            "#
        ));
        assert_eq!(sim.flows[0].base_rtt_ns, 20 * MS);
        // The first 5 % (slow start and the first cycles) is left out.
        sim.run_until((duration_s * 0.05 * 1e9) as u64);
        let (a, ta) = (sender(&sim, 0).counters, sim.now_ns());
        sim.run();
        let (b, tb) = (sender(&sim, 0).counters, sim.now_ns());
        let (overflow, random) = link_drops(&sim, "bottleneck");
        assert_eq!(overflow, 0, "{profile} p {p}: congestion losses");
        let all_indications = b.fast_recoveries + b.timeouts;
        assert!(
            all_indications <= random,
            "{profile} p {p}: {all_indications} reductions, {random} losses"
        );
        let sent = (b.sent_pkts - a.sent_pkts) as f64;
        let rate = sent / ((tb - ta) as f64 / 1e9);
        let indications = (b.fast_recoveries - a.fast_recoveries + b.timeouts - a.timeouts) as f64;
        assert!(
            indications >= 50.0,
            "{profile} p {p}: {indications} loss indications"
        );
        let p_ind = indications / sent;
        let model = padhye(p_ind, rtt_s, t0_s, 1.0, f64::INFINITY);
        let ratio = rate / model;
        eprintln!("{profile} p {p}: {rate:.1} pkt/s, model {model:.1} (p_ind {p_ind:.3e}), ratio {ratio:.3}");
        assert!(
            (0.85..=1.15).contains(&ratio),
            "{profile} p {p}: {rate:.1} pkt/s vs model {model:.1} (p_ind {p_ind:.3e})"
        );
        if p <= 1e-4 {
            let c = rate * rtt_s * p_ind.sqrt();
            assert!((1.16..=1.40).contains(&c), "{profile} p {p}: C = {c:.3}");
        }
    }
}

#[test]
fn rfc_reno_under_random_loss_follows_padhye() {
    reno_under_random_loss_follows_padhye("rfc");
}

#[test]
fn ns2_reno_under_random_loss_follows_padhye() {
    reno_under_random_loss_follows_padhye("ns2");
}

#[test]
fn linux_reno_under_random_loss_follows_padhye() {
    reno_under_random_loss_follows_padhye("linux");
}

/// HyStart's exit point (linux profile, CUBIC; Linux `tcp_cubic.c`
/// `hystart_update`, ACK-train rule), with an ACK per packet
/// (`delayed_ack = false`) and with Linux's receiver (the `linux` default).
///
/// Within a round. In slow start every ACK covering b packets grows cwnd by
/// b (`tcp_slow_start`) and so releases 2b packets: each round's packets
/// reach the bottleneck twice as fast as it drains them and leave it one
/// serialization time t apart, so the round's ACKs come back b t apart
/// (b = 1: every packet; b = 2: Linux's receiver, an ACK once two segments
/// are unacknowledged). The first ACK of a round starts the train
/// (`bictcp_hystart_reset`: round_start = last_ack = now); b t is below
/// `hystart_ack_delta_us` (2 ms), so every ACK extends it, and the k-th
/// ACK, (k - 1) b t after the first, ends slow start once (k - 1) b t >
/// (delay_min + ack_delay) / 2 (not paced). It finds the exit before its
/// own growth, so ssthresh = W + b (k - 1), W the window before the
/// round's first ACK. The train lasts the same time for both b: the
/// window gains the same ~BDP/2 in it.
///
/// delay_min: 2 x the one-way delay, plus a 1500-byte packet's
/// serialization at the bottleneck (t) and at the two access links (10 x
/// the rate: t / 10 each), plus the 40-byte ACK's at the three links.
/// ack_delay (`hystart_ack_delay`) = min(1 ms, 4 x 65,536 B / pacing rate)
/// is 1 ms: the pacing rate, 2 cwnd x 1500 B / SRTT, stays below 262 MB/s
/// (at the 1 Gbit/s exit cwnd <= 4,269 with SRTT above 49 ms, the round's
/// queue; at 100 Mbit/s cwnd <= 575 with SRTT above 60 ms).
///
/// Across rounds (W, the window before the exit round's first ACK): the
/// rounds are separated by idle time (the windows stay below the BDP until
/// the exit round). With an ACK per packet W doubles from IW 10: 10 x 2^n.
/// Linux's receiver quick-ACKs the first 5 segments (`tcp_incr_quickack`:
/// first window 10 / 2), then pairs: segments 6+7, 8+9; segment 10 waits
/// for a pair or for the delayed-ACK timer, ato = 40 ms after it arrives
/// (`tcp_send_delayed_ack`; ato stays at TCP_ATO_MIN: within a burst m =
/// t <= 20 ms pulls it back to 40 ms).
/// - 1 Gbit/s x 40 ms: the next round's first segment arrives one RTT
///   (40.015 ms) after the round's first, before that timer (40 ms after
///   the round's last): it pairs with the leftover. The first round thus
///   ACKs 9 of its 10 packets, W = 19, and every later round holds an odd
///   number (W - 1 new packets and the one left over) and ACKs all but one:
///   W' = 2 W - 1, so W = 9 x 2^n + 1: 19, 37, ..., 2,305.
/// - 100 Mbit/s x 60 ms: the timer fires first (40 ms + the burst < 60 ms
///   until the exit round), so the leftover's ACK comes back alone, 40 ms
///   behind its round, and releases a second, small flight that doubles
///   with the main one (1, 2, 4, 8, 16 packets, ACKed the same way). Every
///   packet of a round is ACKed within the RTT, and W doubles as with an
///   ACK per packet: W = 320, of which 288 come in the main burst (144
///   ACKs, enough for the train). The small flight's ACKs come more than
///   2 ms away from the main ones and echo the previous round's tag, so
///   they neither extend the train nor start a round.
///
/// The exit comes in the first round whose train holds k ACKs:
///   100 Mbit/s, 60 ms (t = 120 us, delay_min 60.148 ms, threshold
///     30.574 ms): b = 1: k - 1 = 255, W = 320 -> 575;
///                 b = 2: k - 1 = 128, W = 320 -> 576.
///   1 Gbit/s, 40 ms (t = 12 us, delay_min 40.0148 ms, threshold
///     20.5074 ms): b = 1: k - 1 = 1,709, W = 2,560 -> 4,269;
///                  b = 2: k - 1 = 855, W = 2,305 -> 4,015.
/// At 1 Gbit/s the delayed-ACK exit is lower only because the round
/// starts from a window 255 packets smaller (2,305 = 9 x 2^8 + 1 instead of
/// 10 x 2^8), one packet each round leaves to the next. (The 3,973
/// measured before `hystart_ack_delay` entered the threshold is 2,305 +
/// 2 x 834: threshold delay_min / 2 = 20.0074 ms.) The delay rule stays
/// silent either way: the round's first samples find the queue empty
/// (W < BDP), and it looks at the round's minimum.
///
/// Tolerance: one ACK's growth, b packets. The timings are whole
/// nanoseconds and the model exact, so the only freedom is which ACK is the
/// first past the threshold. At 1 Gbit/s the two receivers' predictions
/// are 254 packets apart; at 100 Mbit/s they meet (575, 576). The buffer (one BDP) holds the round's queue (one
/// packet per b t, BDP/2 at the exit): no loss before the exit.
#[test]
fn hystart_leaves_slow_start_near_the_bdp() {
    /// ssthresh at the exit, from the derivation above: W + b (k - 1).
    fn predicted_exit(rate_bps: f64, one_way_ns: f64, ack_every: u64, w_pkts: u64) -> f64 {
        let t_ns = 1500.0 * 8.0 / rate_bps * 1e9;
        let ack_t_ns = 40.0 / 1500.0 * t_ns;
        let delay_min_ns = 2.0 * one_way_ns + 1.2 * t_ns + 1.2 * ack_t_ns;
        let threshold_ns = (delay_min_ns + 1e6) / 2.0;
        // The first k with (k - 1) b t > threshold.
        let k_minus_1 = (threshold_ns / (ack_every as f64 * t_ns)).floor() as u64 + 1;
        (w_pkts + ack_every * k_minus_1) as f64
    }
    for (rate, delay, rate_bps, one_way_ns, bdp, receiver, ack_every, w_pkts) in [
        (
            "100Mbps",
            "30ms",
            1e8,
            30e6,
            500.0,
            ", delayed_ack = false",
            1,
            10 << 5,
        ),
        ("100Mbps", "30ms", 1e8, 30e6, 500.0, "", 2, 10 << 5),
        (
            "1Gbps",
            "20ms",
            1e9,
            20e6,
            3_333.3,
            ", delayed_ack = false",
            1,
            10 << 8,
        ),
        ("1Gbps", "20ms", 1e9, 20e6, 3_333.3, "", 2, (9 << 8) + 1),
    ] {
        let exit = predicted_exit(rate_bps, one_way_ns, ack_every, w_pkts);
        let mut sim = sim_of(&format!(
            r#"
            [network]
            topology = "dumbbell"
            [network.bottleneck]
            rate = "{rate}"
            delay = "{delay}"
            queue = "1bdp"
            [[flows]]
            cc = "cubic"
            tcp = {{ profile = "linux"{receiver} }}
            [run]
            duration = "5s"
            "#
        ));
        assert!(
            run_until_true(&mut sim, |sim| sender(sim, 0).cc().ssthresh().is_finite()),
            "{rate}{receiver}: no exit"
        );
        let s = sender(&sim, 0);
        assert_eq!(
            (
                s.counters.retransmits,
                s.counters.fast_recoveries,
                s.counters.timeouts
            ),
            (0, 0, 0),
            "{rate}{receiver}"
        );
        let (overflow, random) = link_drops(&sim, "bottleneck");
        assert_eq!(
            overflow + random,
            0,
            "{rate}{receiver}: loss before the exit"
        );
        let found = s.cc().ssthresh();
        eprintln!("{rate}{receiver}: exit at {found} (BDP {bdp}, predicted {exit})");
        assert!(
            found > bdp && found <= 1.5 * bdp,
            "{rate}{receiver}: exit {found}, BDP {bdp}"
        );
        assert!(
            (found - exit).abs() <= ack_every as f64,
            "{rate}{receiver}: exit {found}, predicted {exit}"
        );
    }
}

/// CUBIC after a retransmission timeout (RFC 9438 §4.8): "During the first
/// congestion avoidance stage after a timeout, CUBIC increases its
/// congestion window size using Figure 1 [W_cubic(t) = C (t - K)^3 +
/// W_max], where t is the elapsed time since the beginning of the current
/// congestion avoidance stage, K is set to 0, and W_max is set to the
/// congestion window size at the beginning of the current congestion
/// avoidance stage", i.e. W(t) = C t^3 + W0 with W0 = ssthresh (slow start
/// stops exactly there). The Reno-friendly estimate starts at W0 too and
/// grows alpha = 3 (1 - beta)/(1 + beta) = 0.53 packets per RTT (W_est is
/// below cwnd_prior, the window at the timeout): 0.4 t^3 passes
/// 0.53 t / 0.1 s after t = 3.6 s, so from t = 5 s on the cubic governs.
/// cwnd chases W_cubic(t + RTT) (§4.4), closing the gap at ~1/RTT, which
/// cancels the one-RTT lag to first order: cwnd(t) lies between W(t - RTT)
/// and W(t + RTT).
///
/// The timeout is made deterministically: the flow (rfc profile, plain RFC
/// 9438 CUBIC, C = 0.4, beta = 0.7, 100 Mbit/s, RTT 100 ms: BDP 833
/// packets) runs in priority class 1; from 5 s to 5.6 s a class-0 CBR
/// source at twice the link rate takes the whole bottleneck. No ACK comes
/// back for 600 ms, more than the RTO (SRTT + 200 ms), so the timer fires.
/// Afterwards the window stays below the BDP (W(10) = 400 + W0 < 833): no
/// queue, RTT = 100 ms.
#[test]
fn cubic_window_after_a_timeout_follows_the_rfc_9438_curve() {
    let mut sim = sim_of(
        r#"
        [network]
        topology = "dumbbell"
        [network.bottleneck]
        rate = "100Mbps"
        delay = "50ms"
        queue = "1000pkt"
        discipline = "priority"
        classes = 2
        class_queues = ["10pkt", "200pkt"]
        [[flows]]
        cc = "cubic"
        tcp = { profile = "rfc", priority_class = 1, initial_ssthresh = 300 }
        [[udp]]
        pattern = "cbr"
        rate = "200Mbps"
        start = "5s"
        stop = "5.6s"
        priority_class = 0
        [run]
        duration = "17s"
        "#,
    );
    sim.run_until(5 * SEC);
    let before = sender(&sim, 0).cc().cwnd();
    assert_eq!(sender(&sim, 0).counters.retransmits, 0);
    assert!(run_until_true(&mut sim, |sim| sender(sim, 0)
        .counters
        .timeouts
        > 0));
    let s = sender(&sim, 0);
    assert_eq!(
        s.counters.fast_recoveries, 0,
        "the outage ends in a timeout, not a fast recovery"
    );
    // RFC 9438 §4.6/§4.8: ssthresh = beta * cwnd at the timeout.
    let w0 = s.cc().ssthresh();
    assert!(
        (w0 - 0.7 * before).abs() < 0.7 * 5.0,
        "ssthresh {w0}, cwnd before {before}"
    );
    // The congestion-avoidance stage begins when slow start reaches ssthresh.
    assert!(run_until_true(&mut sim, |sim| sender(sim, 0).cc().cwnd() >= w0));
    let t_ca = sim.now_ns();
    assert!(t_ca < 7 * SEC);
    let w = |t: f64| 0.4 * t.powi(3) + w0;
    let rtt = 0.1;
    for t in [5.0, 6.0, 7.0, 8.0, 9.0, 10.0] {
        sim.run_until(t_ca + (t * 1e9) as u64);
        let cwnd = sender(&sim, 0).cc().cwnd();
        eprintln!(
            "t = {t}: cwnd {cwnd:.1}, W(t) {:.1} [{:.1}, {:.1}]",
            w(t),
            w(t - rtt),
            w(t + rtt)
        );
        assert!(
            cwnd >= w(t - rtt) - 1.0 && cwnd <= w(t + rtt) + 1.0,
            "t = {t} s: cwnd {cwnd}, W(t) = {}",
            w(t)
        );
    }
    assert_eq!(sender(&sim, 0).counters.timeouts, 1);
    assert_eq!(
        sender(&sim, 0).counters.fast_recoveries,
        0,
        "no loss after the timeout's recovery"
    );
}

/// A spurious timeout from a delay spike, undone by Eifel (RFC 3522; Linux
/// `tcp_try_undo_loss` with `tcp_packet_delayed`). The flow (Reno, class 1,
/// 100 Mbit/s, RTT 100 ms) is in slow start when a class-0 CBR source at
/// twice the link rate holds the bottleneck from 0.5 s to 1.1 s. Nothing is
/// lost (the class-1 queue holds the whole window), but no ACK comes back
/// for 600 ms, so the RTO (SRTT + 200 ms) fires. The first ACK after the
/// spike acknowledges the original head, sent before the timeout: its
/// TSecr is older than the retransmission's TSval, so Linux restores the
/// window (cwnd = max(cwnd, prior_cwnd), ssthresh = prior_ssthresh =
/// unlimited in slow start) and goes back to Open. The rfc sender keeps
/// the reduction: ssthresh = cwnd / 2.
#[test]
fn eifel_undoes_a_timeout_caused_by_a_delay_spike() {
    for profile in ["linux", "rfc"] {
        let mut sim = sim_of(&format!(
            r#"
            [network]
            topology = "dumbbell"
            [network.bottleneck]
            rate = "100Mbps"
            delay = "50ms"
            queue = "5000pkt"
            discipline = "priority"
            classes = 2
            class_queues = ["10pkt", "5000pkt"]
            [[flows]]
            cc = "reno"
            tcp = {{ profile = "{profile}", priority_class = 1 }}
            [[udp]]
            pattern = "cbr"
            rate = "200Mbps"
            start = "0.5s"
            stop = "1.1s"
            priority_class = 0
            [run]
            duration = "1.3s"
            "#
        ));
        let mut before = 0.0;
        assert!(run_until_true(&mut sim, |sim| {
            let s = sender(sim, 0);
            if s.counters.timeouts == 0 {
                before = s.cc().cwnd();
            }
            s.counters.timeouts > 0
        }));
        assert!(
            sim.now_ns() > 500 * MS && sim.now_ns() < 1_100 * MS,
            "{profile}: RTO at {}",
            sim.now_ns()
        );
        assert!(before > 20.0, "{profile}: cwnd {before}");
        assert_eq!(sender(&sim, 0).cc().ssthresh(), before / 2.0, "{profile}");
        // The first ACK after the spike.
        let acks = sender(&sim, 0).counters.acks_received;
        assert!(run_until_true(&mut sim, |sim| sender(sim, 0)
            .counters
            .acks_received
            > acks));
        let s = sender(&sim, 0);
        assert_eq!(s.counters.timeouts, 1, "{profile}");
        if profile == "linux" {
            assert_eq!(s.counters.undos, 1);
            assert_eq!(s.recovery(), longfat_sim::tcp::sender::Recovery::Open);
            assert_eq!(s.cc().ssthresh(), f64::INFINITY);
            assert!(s.cc().cwnd() >= before, "cwnd {} < {before}", s.cc().cwnd());
            // RACK must not take the spurious retransmission's send time as
            // evidence (`tcp_skb_spurious_retrans`): no packet is marked lost,
            // no recovery follows, nothing else is sent again.
            assert_eq!(s.scoreboard().lost_count(), 0);
        } else {
            assert_eq!(s.counters.undos, 0);
            assert_eq!(s.cc().ssthresh(), before / 2.0);
            assert!(s.cc().cwnd() <= 2.0);
        }
        if profile == "linux" {
            sim.run();
            let s = sender(&sim, 0);
            assert_eq!((s.counters.retransmits, s.counters.fast_recoveries), (1, 0));
        }
    }
}

/// Issue 28 item 8: under `linux` the profile's parameters make BIC,
/// Scalable, Vegas and CUBIC the Linux 6.x modules; `rfc` and `ns2` keep the
/// papers'. Each check is hand-derived from the module's source (the
/// controllers' own tests cover the rules in detail).
#[test]
fn linux_profile_runs_the_kernel_modules_rules() {
    use longfat_cc::{AckEvent, AckTimestamps, InitialWindow, LossEvent, RttStats};
    use longfat_sim::tcp::profile::Profile;
    let build = |profile: Profile, cc: &str, cwnd: f64, ssthresh: f64| {
        let init = InitialWindow {
            cwnd_pkts: cwnd,
            ssthresh_pkts: ssthresh,
        };
        longfat_cc::build(cc, &Default::default(), profile.cc_rules(), init).unwrap()
    };
    let ack = |now_ns: u64, pkts: u32, tag: u32| AckEvent {
        now_ns,
        delivered_pkts: pkts,
        growth_pkts: pkts,
        cum_acked_pkts: pkts,
        rtt: RttStats {
            latest_ns: 100_000_000,
            min_ns: 100_000_000,
            smoothed_ns: 150_000_000,
        },
        rtt_updated: true,
        ts: Some(AckTimestamps {
            echoed_tag: tag,
            ..Default::default()
        }),
        ..Default::default()
    };
    for profile in [Profile::Rfc, Profile::Ns2, Profile::Linux] {
        let linux = profile == Profile::Linux;
        // tcp_bic.c bictcp_recalc_ssthresh: 1000 * 819/1024; the paper 875.
        let mut bic = build(profile, "bic", 1000.0, 1.0);
        bic.on_congestion_event(&LossEvent::default());
        assert_eq!(
            bic.cwnd(),
            if linux { 819_000.0 / 1024.0 } else { 875.0 },
            "{profile}"
        );
        // tcp_scalable.c: one packet per min(50, 100) at cwnd 50; the paper a = 0.01.
        let mut scalable = build(profile, "scalable", 50.0, 1.0);
        scalable.on_ack(&ack(0, 1, u32::MAX));
        let inc = if linux { 1.0 / 50.0 } else { 0.01 };
        assert!(
            (scalable.cwnd() - (50.0 + inc)).abs() < 1e-12,
            "{profile}: {}",
            scalable.cwnd()
        );
        // tcp_vegas.c: slow start on every ACK; the paper every other round.
        let mut vegas = build(profile, "vegas", 4.0, f64::INFINITY);
        let round0 = vegas.on_send(0, 0, 1500, false);
        vegas.on_ack(&ack(0, 4, u32::MAX));
        vegas.on_ack(&ack(1, 0, round0)); // round 0 ends (one sample: Reno, 0 packets)
        vegas.on_send(1, 0, 1500, false);
        vegas.on_ack(&ack(2, 8, u32::MAX)); // round 1
        assert_eq!(vegas.cwnd(), if linux { 16.0 } else { 8.0 }, "{profile}");
    }
    // tcp_cubic.c bictcp_update + tcp_cong_avoid_ai in Linux's integers:
    // after a loss at 1000 ssthresh = 1000 * 717 / 1024 = 700, W_max 1000,
    // K = cubic_root(2^40 / 410 * 300) = 9294 (2^-10 s). The ACK at t = 0
    // aims at W(0 + delay_min 100 ms) = 711: cnt = 700 / 11 = 63; at 2 s
    // (t = 2150) at 865: cnt = 700 / 165 = 4 (with SRTT's 150 ms it would
    // be 43 and 4). The ACKs at 2.001 and 2.002 s come within HZ/32 with cwnd
    // unchanged, so cnt stays 4 and the 4th credit makes 701. (longfat-cc's
    // cubic tests derive each step.)
    let mut cubic = build(Profile::Linux, "cubic", 1000.0, 1.0);
    cubic.on_congestion_event(&LossEvent::default());
    assert_eq!((cubic.cwnd(), cubic.ssthresh()), (700.0, 700.0));
    for now_ns in [0, 2_000_000_000, 2_001_000_000] {
        cubic.on_ack(&ack(now_ns, 1, u32::MAX));
        assert_eq!(cubic.cwnd(), 700.0);
    }
    cubic.on_ack(&ack(2_002_000_000, 1, u32::MAX));
    assert_eq!(cubic.cwnd(), 701.0);
}

/// Linux-table HighSpeed under `linux` with Linux's receiver (issue 28,
/// item 6). tcp_highspeed.c `hstcp_cong_avoid` adds ai + 1 to snd_cwnd_cnt
/// per ACK, whatever it covers, and one packet to cwnd when the count
/// reaches cwnd: a(w) / w per ACK, with the row ai = 1 for 38 < w <= 118
/// and ai = 2 for 118 < w <= 221 (`hstcp_aimd_vals`: {38, 128}, {118, 112},
/// {221, 104}). A receiver that ACKs every second segment sends half the
/// ACKs: about 1 packet per RTT in the first row where ACKing every
/// segment gives 2. The model below counts the ACKs round by round: the
/// packets of round r - 1 (the window at its end) come back as ACKs in
/// round r, one per `b` segments (Linux: the first 5 one each, the
/// quick-ACKs of a first window of 10 segments); each adds a(w) / w. On an
/// empty 100 ms path (118 packets per RTT is 14 Mbit/s of 1 Gbit/s) the
/// flow starts in congestion avoidance at 40; 50 rounds give about 89
/// (Linux's receiver) and 148 (`delayed_ack = false`).
#[test]
fn linux_highspeed_grows_by_the_rows_increase_per_ack_pair() {
    fn model(acks_per_seg: f64, quick_acks: f64, rounds: u32) -> f64 {
        let a = |w: f64| if w <= 118.0 { 2.0 } else { 3.0 };
        let (mut w, mut sent) = (40.0_f64, 40.0_f64);
        for r in 0..rounds {
            let quick = if r == 0 { quick_acks } else { 0.0 };
            let mut acks = quick + (sent - quick) * acks_per_seg;
            while acks > 0.0 {
                w += a(w) / w * acks.min(1.0);
                acks -= 1.0;
            }
            sent = w;
        }
        w
    }
    for (delayed, expected) in [
        ("", model(0.5, 5.0, 50)),
        (", delayed_ack = false", model(1.0, 0.0, 50)),
    ] {
        let mut sim = sim_of(&format!(
            r#"
            [network]
            topology = "dumbbell"
            [network.bottleneck]
            rate = "1Gbps"
            delay = "50ms"
            queue = "1bdp"
            [[flows]]
            cc = "highspeed"
            tcp = {{ profile = "linux", initial_cwnd = 40, initial_ssthresh = 40{delayed} }}
            [run]
            duration = "10s"
            "#
        ));
        // Round r's ACKs arrive r RTTs (100 ms) after the start, within
        // 2 ms (the window at 1 Gbit/s): half an RTT later 50 are in.
        sim.run_until_limited(50 * 100 * MS + 50 * MS, u64::MAX);
        let s = sender(&sim, 0);
        assert_eq!(s.counters.retransmits, 0);
        let cwnd = s.cc().cwnd();
        eprintln!("delayed {delayed:?}: cwnd {cwnd} after 50 RTTs (model {expected})");
        assert!(
            (cwnd - expected).abs() <= 1.0,
            "{delayed}: cwnd {cwnd}, model {expected}"
        );
    }
}

/// An untuned Linux host (`tcp.host = "default"`, issue 28 item 10) on a
/// 1 Gbit/s x 100 ms path (BDP 8,333 packets): autotuning grows the
/// receive buffer to tcp_rmem[2] = 6,291,456 bytes within a second, and
/// the advertised window is half of it (tcp_adv_win_scale = 1): 3,145,728
/// bytes = 2,154 packets of 1,460 bytes, below tcp_wmem[2]'s 4,194,304 /
/// 1,460 = 2,872 and the BDP, so no queue builds: goodput = 2,154 x 1,460 x
/// 8 bits per RTT of 100.03 ms (two 1500-byte serializations at 1 Gbit/s
/// and two at the 10 Gbit/s access links, and the ACK's) = 251.5 Mbit/s.
/// A tuned host (unlimited buffers) fills the path: 1 Gbit/s x 1460 / 1500
/// = 973 Mbit/s of goodput at most, and CUBIC with a BDP of buffer keeps
/// the link busy through its reductions (beta 0.7 > 0.5).
#[test]
fn untuned_host_is_receive_window_limited() {
    let run = |host: &str| {
        let text = format!(
            r#"
            [network]
            topology = "dumbbell"
            [network.bottleneck]
            rate = "1Gbps"
            delay = "50ms"
            queue = "1bdp"
            [[flows]]
            cc = "cubic"
            tcp = {{ profile = "linux", host = "{host}" }}
            [run]
            duration = "12s"
            measure_from = "4s"
            "#
        );
        let mut sim = sim_of(&text);
        sim.run();
        sim.metrics.summary().expect("finished")["flows"][0]["goodput_bps"]
            .as_f64()
            .unwrap()
    };
    let window_pkts = (6_291_456 / 2 / 1460) as f64;
    let expected_bps = window_pkts * 1460.0 * 8.0 / 0.10003;
    let untuned = run("default");
    let tuned = run("tuned");
    eprintln!("untuned {untuned:.0} b/s (expected {expected_bps:.0}), tuned {tuned:.0} b/s");
    assert!(
        (untuned - expected_bps).abs() <= 0.01 * expected_bps,
        "untuned {untuned}, expected {expected_bps}"
    );
    let line_bps = 1e9 * 1460.0 / 1500.0;
    // At most one packet more than the line carries in the 8 s measured
    // (a packet in flight at the window's edge).
    let edge_bps = 1460.0 * 8.0 / 8.0;
    assert!(
        tuned >= 0.9 * line_bps && tuned <= line_bps + edge_bps,
        "tuned {tuned}"
    );
}

/// Issue 28 item 12: under `ns2`, HighSpeed's increase is ns-2.35's
/// (tcp.cc `increase_param()`: p(w) on the log-log line from (38, 1.5 /
/// 38^2) to (83000, `high_p_` = 1e-7)), not RFC 3649's p(w) = 0.078 /
/// w^1.2. A window of 1,000 packets above ssthresh grows on the first ACK by
/// a(1000) / 1000, where by hand from ns-2's lines b(1000) = 0.5 - 0.4
/// ln(1000/38) / ln(83000/38) = 0.329878, p(1000) = 1.03878e-3 (1000/38)^(ln(1e-7 /
/// 1.03878e-3) / ln(83000/38)) = 2.03366e-5 and a(1000) = 1000^2 p / (1/b -
/// 0.5) = 8.03368 (RFC 3649's approximation: 7.73981). The rfc profile keeps
/// RFC 3649's.
#[test]
fn ns2_highspeed_grows_by_ns2s_increase() {
    for (profile, a) in [("ns2", 8.03368), ("rfc", 7.73981)] {
        let mut sim = sim_of(&format!(
            r#"
            [network]
            topology = "dumbbell"
            [network.bottleneck]
            rate = "10Gbps"
            delay = "10ms"
            queue = "1bdp"
            [[flows]]
            cc = "highspeed"
            tcp = {{ profile = "{profile}", initial_cwnd = 1000, initial_ssthresh = 2 }}
            [run]
            duration = "1s"
            "#
        ));
        assert!(run_until_true(&mut sim, |sim| sender(sim, 0)
            .counters
            .acks_received
            == 1));
        let cwnd = sender(&sim, 0).cc().cwnd();
        assert!(
            ((cwnd - 1000.0) * 1000.0 / a - 1.0).abs() < 1e-5,
            "{profile}: cwnd {cwnd}, a(1000) {a}"
        );
    }
}

/// `tcp.timestamps` (issue 28 item 13): `ns2` defaults to ns-2.35's
/// `timestamps_ false` (one timed segment per round trip); `rfc` and
/// `linux` always sample timestamps and refuse false; eHSTCP and TCP-GT
/// measure delay with the timestamp option and refuse false, each with
/// one line naming the field.
#[test]
fn timestamps_option_defaults_and_refusals() {
    let text = |cc: &str, tcp: &str| {
        format!(
            r#"
            [network]
            topology = "dumbbell"
            [network.bottleneck]
            rate = "10Mbps"
            delay = "10ms"
            queue = "1bdp"
            [[flows]]
            cc = "{cc}"
            tcp = {{ {tcp} }}
            [run]
            duration = "1s"
            "#
        )
    };
    let cfg = |cc: &str, tcp: &str| sender(&sim_of(&text(cc, tcp)), 0).config().timestamps;
    assert!(!cfg("reno", r#"profile = "ns2""#));
    assert!(cfg("reno", r#"profile = "ns2", timestamps = true"#));
    assert!(cfg("reno", r#"profile = "rfc""#));
    assert!(cfg("reno", r#"profile = "linux""#));
    let refused = |cc: &str, tcp: &str| {
        let s = Scenario::from_toml(&text(cc, tcp)).expect("parses");
        match build(&s) {
            Ok(_) => panic!("{cc} {tcp}: accepted"),
            Err(e) => e.to_string(),
        }
    };
    let e = refused("reno", r#"profile = "rfc", timestamps = false"#);
    assert!(
        e.contains("flows[0].tcp.timestamps") && e.contains("needs profile = \"ns2\""),
        "{e}"
    );
    // Linux with tcp_timestamps = 0, but not with the autotuned host,
    // whose receiver measures its RTT with timestamps.
    assert!(!cfg("reno", r#"profile = "linux", timestamps = false"#));
    let e = refused(
        "reno",
        r#"profile = "linux", timestamps = false, host = "default""#,
    );
    assert!(
        e.contains("flows[0].tcp.timestamps") && e.contains("host = \"default\" is not modelled"),
        "{e}"
    );
    for cc in ["ehstcp", "tcpgt"] {
        let e = refused(cc, r#"profile = "ns2""#);
        assert!(
            e.contains("flows[0].tcp.timestamps") && e.contains("timestamp option"),
            "{e}"
        );
        assert!(cfg(cc, r#"profile = "ns2", timestamps = true"#));
    }
}

/// `tcp.host = "default"` with cc = "plt" (issue 28 item 10): PLT's
/// receiver buffers the connection in `plt.receive_buffer`, and an untuned
/// host's autotuned buffers are not modelled for it, so the scenario is
/// refused with one line naming the field, not run as if tuned. The same
/// flow with `host = "tuned"` builds, and so does a TCP flow with
/// `host = "default"`.
#[test]
fn plt_refuses_the_untuned_host() {
    let text = |cc: &str, host: &str| {
        format!(
            r#"
            [network]
            topology = "dumbbell"
            [network.bottleneck]
            rate = "100Mbps"
            delay = "20ms"
            queue = "1bdp"
            discipline = "priority"
            [[flows]]
            cc = "{cc}"
            tcp = {{ profile = "linux", host = "{host}" }}
            [run]
            duration = "1s"
            "#
        )
    };
    let build_of = |t: String| build(&Scenario::from_toml(&t).unwrap());
    let e = build_of(text("plt", "default")).err().expect("refused");
    assert_eq!(e.field, "flows[0].tcp.host");
    assert!(
        e.message.contains("cc = \"plt\"") && e.message.contains("allowed: \"tuned\""),
        "{}",
        e.message
    );
    assert!(!e.to_string().contains('\n'), "one line: {e}");
    assert!(build_of(text("plt", "tuned")).is_ok());
    assert!(build_of(text("reno", "default")).is_ok());
}

/// GRO-style stretch ACKs (`tcp.gro_segments`, issue 28 item 6) on a
/// 1 Gbit/s x 100 ms path with a one-BDP buffer, 16 segments per skb.
///
/// CUBIC: while the queue stands the bottleneck sends the flow's packets
/// back to back, so every GRO poll (16 packet times) holds 16 and the
/// receiver ACKs once per 16 segments. Extra ACKs come only where a train
/// is cut: the tail of each slow-start round (about 20 rounds, at most two
/// partial batches each) and the recovery, where each retransmission
/// reaches TCP alone and cuts the train around it (at most 3 ACKs per
/// retransmission). So ACKs lie in [D/16, D/16 + 3 R + 40] for D segments
/// received and R retransmissions. The window is what matters for
/// throughput: CUBIC grows by the packets an ACK covers, so it fills the
/// path as with Linux's default receiver (973 Mbit/s of goodput, 1 Gbit/s
/// x 1460 / 1500, within the 0.5 % a packet more or less in 8 s makes).
///
/// Linux-table HighSpeed adds a(w)/w per ACK however many packets it
/// covers (tcp_highspeed.c `hstcp_cong_avoid`: snd_cwnd_cnt += ai + 1 per
/// call), so with a = 2 (38 < w <= 118) w^2 grows by 2a + (a/w)^2 per ACK:
/// after A ACKs from 40, w = sqrt(40^2 + 4 A) (the square term adds
/// under 0.01 packet over 200 ACKs). On the empty path each round's flight (40..50 packets) arrives
/// as one train: full batches of 16 and one partial batch at its tail, so
/// A is about D/16 + one ACK per round, within [D/16, D/16 + 2 x 51] over
/// 51 rounds. Fewer ACKs than Linux's default receiver's pairs: HighSpeed
/// grows more slowly with GRO, as Linux's does.
#[test]
fn linux_gro_stretch_acks_keep_cubic_and_highspeed_sane() {
    let run = |cc: &str, gro: u32, extra: &str, duration: &str| {
        let mut sim = sim_of(&format!(
            r#"
            [network]
            topology = "dumbbell"
            [network.bottleneck]
            rate = "1Gbps"
            delay = "50ms"
            queue = "1bdp"
            [[flows]]
            cc = "{cc}"
            tcp = {{ profile = "linux", gro_segments = {gro}{extra} }}
            [run]
            duration = "{duration}"
            measure_from = "4s"
            "#
        ));
        sim.run();
        let goodput_bps = sim.metrics.summary().expect("finished")["flows"][0]["goodput_bps"]
            .as_f64()
            .unwrap();
        let (received, acks) = match &sim.flows[0].endpoints {
            Endpoints::Tcp { receiver, .. } => {
                (receiver.counters.received_pkts, receiver.counters.acks_sent)
            }
            _ => unreachable!(),
        };
        let s = sender(&sim, 0);
        (
            goodput_bps,
            received as f64,
            acks as f64,
            s.counters.retransmits as f64,
            s.cc().cwnd(),
        )
    };
    let line_bps = 1e9 * 1460.0 / 1500.0;
    let (gro_bps, d, a, r, _) = run("cubic", 16, "", "12s");
    let (pairs_bps, ..) = run("cubic", 1, "", "12s");
    eprintln!("cubic: gro {gro_bps:.0} b/s, pairs {pairs_bps:.0} b/s; {a} ACKs for {d} segments, {r} retransmissions");
    assert!(
        a >= d / 16.0 && a <= d / 16.0 + 3.0 * r + 40.0,
        "cubic: {a} ACKs for {d} segments"
    );
    for bps in [gro_bps, pairs_bps] {
        assert!(
            (bps - line_bps).abs() <= 0.005 * line_bps,
            "cubic: goodput {bps}"
        );
    }
    let (_, d, a, r, cwnd) = run(
        "highspeed",
        16,
        ", initial_cwnd = 40, initial_ssthresh = 40",
        "5.05s",
    );
    let expected = (40.0_f64.powi(2) + 4.0 * a).sqrt();
    eprintln!("highspeed: cwnd {cwnd} (sqrt(40^2 + 4 x {a} ACKs) = {expected}); {d} segments");
    assert_eq!(r, 0.0);
    assert!(
        a >= d / 16.0 && a <= d / 16.0 + 2.0 * 51.0,
        "highspeed: {a} ACKs for {d} segments"
    );
    assert!(
        (cwnd - expected).abs() <= 0.1,
        "highspeed: cwnd {cwnd}, expected {expected}"
    );
}

/// `tcp.gro_segments` is checked once, in the scenario: Linux's receiver
/// only (one line naming the field), 1..=44 with 1460-byte payloads
/// (40 + 45 x 1460 = 65,740 bytes would reach GRO's 64 KB, `skb_gro_receive`),
/// and not with PLT. 1 (off) is allowed everywhere.
#[test]
fn gro_segments_is_checked_with_its_field() {
    let build_with = |profile: &str, cc: &str, gro: u64| {
        let text = format!(
            r#"
            [network]
            topology = "dumbbell"
            [network.bottleneck]
            rate = "100Mbps"
            delay = "20ms"
            queue = "1bdp"
            discipline = "priority"
            [[flows]]
            cc = "{cc}"
            tcp = {{ profile = "{profile}", gro_segments = {gro} }}
            [run]
            duration = "1s"
            "#
        );
        build(&Scenario::from_toml(&text).unwrap()).err()
    };
    for (profile, cc, gro, refused) in [
        ("linux", "reno", 44, false),
        ("linux", "reno", 45, true),
        ("linux", "reno", 0, true),
        ("rfc", "reno", 2, true),
        ("ns2", "reno", 2, true),
        ("ns2", "reno", 1, false),
        ("linux", "plt", 2, true),
    ] {
        let e = build_with(profile, cc, gro);
        assert_eq!(e.is_some(), refused, "{profile} {cc} {gro}: {e:?}");
        if let Some(e) = e {
            assert_eq!(e.field, "flows[0].tcp.gro_segments", "{e}");
            assert!(!e.to_string().contains('\n'), "one line: {e}");
        }
    }
    let e = build_with("linux", "reno", 45).unwrap();
    assert!(e.message.contains("allowed 1..=44"), "{}", e.message);
}

/// `tcp.ecn` and `tcp.abe` (issue 31): both off by default; ABE only with
/// ECN, ECN not with PLT (whose receiver echoes no marks), each refusal
/// naming the field.
#[test]
fn ecn_and_abe_options_defaults_and_refusals() {
    let text = |cc: &str, tcp: &str| {
        format!(
            r#"
            [network]
            topology = "dumbbell"
            [network.bottleneck]
            rate = "10Mbps"
            delay = "10ms"
            queue = "1bdp"
            [[flows]]
            cc = "{cc}"
            tcp = {{ {tcp} }}
            [run]
            duration = "1s"
            "#
        )
    };
    let cfg = |tcp: &str| {
        let c = sender(&sim_of(&text("cubic", tcp)), 0).config().clone();
        (c.ecn, c.abe)
    };
    assert_eq!(cfg(r#"profile = "linux""#), (false, false));
    assert_eq!(cfg(r#"ecn = true"#), (true, false));
    assert_eq!(cfg(r#"ecn = true, abe = true"#), (true, true));
    let refused = |cc: &str, tcp: &str| {
        let s = Scenario::from_toml(&text(cc, tcp)).expect("parses");
        match build(&s) {
            Ok(_) => panic!("{cc} {tcp}: accepted"),
            Err(e) => e.to_string(),
        }
    };
    let e = refused("cubic", r#"abe = true"#);
    assert!(
        e.contains("flows[0].tcp.abe") && e.contains("needs ecn = true"),
        "{e}"
    );
    let e = refused("cubic", r#"ecn = false, abe = true"#);
    assert!(e.contains("flows[0].tcp.abe"), "{e}");
    let plt = text("plt", "ecn = true").replace(
        "queue = \"1bdp\"",
        "queue = \"1bdp\"\n            discipline = \"priority\"\n            class_queues = [\"1bdp\", \"1bdp\"]",
    );
    let e = match build(&Scenario::from_toml(&plt).expect("parses")) {
        Ok(_) => panic!("plt with ecn: accepted"),
        Err(e) => e.to_string(),
    };
    assert!(e.contains("flows[0].tcp.ecn") && e.contains("PLT"), "{e}");
}
