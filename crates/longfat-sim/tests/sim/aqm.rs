//! AQM links in whole runs: CoDel's standing queue, FQ-CoDel's fairness,
//! the sojourn series and the counters, against what RFC 8289 and RFC 8290
//! predict.

use crate::common::{f64_of, link, run_toml};
use longfat_sim::Simulation;

/// One long CUBIC flow on 100 Mbit/s x 70 ms (BDP 583 packets of 1500
/// bytes) with a 4-BDP buffer, behind `discipline`.
fn one_cubic(discipline: &str, aqm: &str) -> (Simulation, serde_json::Value) {
    run_toml(&format!(
        r#"
        [network]
        topology = "dumbbell"
        [network.bottleneck]
        rate = "100Mbps"
        delay = "34ms"
        queue = "4bdp"
        discipline = "{discipline}"
        {aqm}
        [network.access]
        rate = "10Gbps"
        delay = "0.5ms"
        [[flows]]
        cc = "cubic"
        [run]
        duration = "60s"
        measure_from = "20s"
        sample_interval = "100ms"
        "#
    ))
}

/// The bottleneck's forward direction's sojourn series over the window.
fn sojourn_series(sim: &Simulation, from_ns: u64) -> (Vec<f64>, Vec<f64>) {
    let ls = &sim.metrics.links;
    let fwd = sim.link_index("bottleneck").unwrap() as u32;
    let rows = (0..ls.time_ns.len()).filter(|&k| ls.link[k] == fwd && ls.time_ns[k] > from_ns);
    rows.map(|k| (ls.sojourn_mean_ns[k], ls.sojourn_max_ns[k]))
        .unzip()
}

/// RFC 8289: CoDel drops only once the sojourn has stayed at or above
/// `target` (5 ms) for an `interval` (100 ms), and a single flow answers a
/// drop one RTT (70 ms) later; CUBIC near its plateau (it spends most of
/// an epoch there, W(t) = C(t - K)^3 + W_max) adds a packet or two per RTT,
/// so the sojourn rises a little past 5 ms and no further. CUBIC's backoff
/// to 0.7 W_max then drains the queue (0.3 W_max = 175 packets > 5 ms =
/// 42 packets), so on this long path the standing queue is below target
/// most of the time (RFC 8289 §4.4 on long RTTs; the price is a link a few
/// per cent idle after each backoff). Expected, over 20-60 s: some drops;
/// the largest sojourn in [5, 10] ms (it reached target, as a drop needs,
/// and overshot by far less than another target); the mean sojourn in
/// (0, 5] ms; at least 95 % of 100 ms intervals with a mean sojourn below
/// target; utilization in [0.85, 1]. DropTail with the same 4-BDP buffer
/// keeps a standing queue of 1 to 4 BDP (583..2332 packets), over 20
/// times CoDel's.
#[test]
fn codel_keeps_the_standing_sojourn_near_its_target() {
    let (sim, s) = one_cubic("codel", "");
    let l = link(&s, "bottleneck");
    let (means, maxes) = sojourn_series(&sim, 20_000_000_000);
    assert_eq!(means.len(), 400);
    let largest = maxes
        .iter()
        .copied()
        .filter(|x| x.is_finite())
        .fold(0.0, f64::max);
    assert!(
        (5e6..=10e6).contains(&largest),
        "largest sojourn {largest} ns"
    );
    let below = means.iter().filter(|&&x| x < 5e6).count();
    assert!(below >= 380, "{below} of 400 intervals below target");
    let mean_ms = f64_of(&l["mean_sojourn_ms"]);
    assert!(mean_ms > 0.0 && mean_ms <= 5.0, "mean sojourn {mean_ms} ms");
    let drops = f64_of(&l["drops_aqm"]);
    assert!(drops >= 1.0, "{l}");
    assert_eq!(f64_of(&l["drops_overflow"]), 0.0);
    assert_eq!(f64_of(&l["ce_marks"]), 0.0); // CUBIC here is not ECN-capable
    let u = f64_of(&l["utilization"]);
    assert!((0.85..=1.0).contains(&u), "utilization {u}");
    // The series' AQM drops add up to the summary's over the window.
    let fwd = sim.link_index("bottleneck").unwrap() as u32;
    let ls = &sim.metrics.links;
    let series_drops: u64 = (0..ls.time_ns.len())
        .filter(|&k| ls.link[k] == fwd && ls.time_ns[k] > 20_000_000_000)
        .map(|k| ls.drops_aqm[k])
        .sum();
    assert_eq!(series_drops as f64, drops);

    let (_, d) = one_cubic("droptail", "");
    let dl = link(&d, "bottleneck");
    let q_droptail = f64_of(&dl["mean_queue_pkts"]);
    assert!((583.0..=2332.0).contains(&q_droptail), "{dl}");
    assert!(
        q_droptail > 20.0 * f64_of(&l["mean_queue_pkts"]),
        "{dl} vs {l}"
    );
    // A DropTail link has no AQM keys and no sojourn series.
    assert!(dl.get("drops_aqm").is_none() && dl.get("mean_sojourn_ms").is_none());
}

/// Two CUBIC flows with 20 ms and 200 ms base RTTs on 100 Mbit/s. FQ-CoDel
/// hashes them into different buckets and DRR gives each bucket the same
/// bytes while both are backlogged (RFC 8290 §4.2), whatever their RTTs;
/// each bucket's CoDel keeps its own queue short. Expected over 30-90 s:
/// Jain's index >= 0.95 (it is 1 for equal shares; 0.95 allows a 1.6:1
/// split) and the link nearly full. DropTail with the same buffer favours
/// the short RTT (CUBIC's window growth is per real time, but its backoffs
/// are synchronised by the shared buffer): checked only to be lower.
#[test]
fn fq_codel_shares_between_a_short_and_a_long_rtt() {
    let run = |discipline: &str| {
        let (_, s) = run_toml(&format!(
            r#"
            [network]
            topology = "dumbbell"
            [network.bottleneck]
            rate = "100Mbps"
            delay = "4.5ms"
            queue = "10240pkt"
            discipline = "{discipline}"
            [network.access]
            rate = "10Gbps"
            delay = "0.5ms"
            [[flows]]
            cc = "cubic"
            access_delay = "5ms"
            [[flows]]
            cc = "cubic"
            access_delay = "95ms"
            [run]
            duration = "90s"
            measure_from = "30s"
            "#
        ));
        s
    };
    let jain = |s: &serde_json::Value| {
        let x: Vec<f64> = (0..2)
            .map(|i| f64_of(&s["flows"][i]["goodput_bps"]))
            .collect();
        (x[0] + x[1]).powi(2) / (2.0 * (x[0] * x[0] + x[1] * x[1]))
    };
    let s = run("fq_codel");
    assert_eq!(f64_of(&s["flows"][0]["base_rtt_ms"]), 20.0);
    assert_eq!(f64_of(&s["flows"][1]["base_rtt_ms"]), 200.0);
    let j = jain(&s);
    let l = link(&s, "bottleneck");
    let d = run("droptail");
    assert!((0.95..=1.0).contains(&j), "Jain {j}");
    let u = f64_of(&l["utilization"]);
    assert!((0.9..=1.0).contains(&u), "utilization {u}");
    assert!(jain(&d) < j);
}

/// A 1-second dumbbell with `bottleneck` appended to its
/// `[network.bottleneck]` table, built: the field and message of its error.
fn build_with(bottleneck: &str) -> Result<(), (String, String)> {
    let text = format!(
        r#"
        [network]
        topology = "dumbbell"
        [network.bottleneck]
        rate = "10Mbps"
        delay = "10ms"
        queue = "100pkt"
        {bottleneck}
        [[flows]]
        cc = "reno"
        [run]
        duration = "1s"
        "#
    );
    let scenario = longfat_sim::Scenario::from_toml(&text).map_err(|e| (e.field, e.message))?;
    longfat_sim::build(&scenario)
        .map(|_| ())
        .map_err(|e| (e.field, e.message))
}

/// Every `[network.bottleneck.aqm]` field is checked against its declared
/// range, both ends pinned (the bound passes, one step past it is refused
/// naming the field and the range), and the cross-field rules give named
/// errors.
#[test]
fn aqm_fields_are_range_checked_with_named_errors() {
    use longfat_sim::scenario::fields;
    let aqm = |d: &str, kv: &str| {
        build_with(&format!(
            "discipline = \"{d}\"\n[network.bottleneck.aqm]\n{kv}"
        ))
    };
    let refused = |r: Result<(), (String, String)>, field: &str, msg: &str| {
        let (f, m) = r.expect_err(field);
        assert_eq!(f, field, "{m}");
        assert!(m.contains(msg), "{f}: {m} (wanted {msg:?})");
    };
    // Durations: target 1us..=10s, interval 1ms..=100s.
    assert!(aqm("codel", "target = \"1us\"").is_ok());
    refused(
        aqm("codel", "target = \"999ns\""),
        "network.bottleneck.aqm.target",
        "allowed 1us..=10s",
    );
    refused(
        aqm("codel", "target = \"10001ms\"\ninterval = \"100s\""),
        "network.bottleneck.aqm.target",
        "allowed 1us..=10s",
    );
    assert!(aqm("codel", "target = \"10s\"\ninterval = \"100s\"").is_ok());
    refused(
        aqm("codel", "interval = \"999us\"\ntarget = \"1us\""),
        "network.bottleneck.aqm.interval",
        "allowed 1ms..=100s",
    );
    refused(
        aqm("codel", "interval = \"100001ms\""),
        "network.bottleneck.aqm.interval",
        "allowed 1ms..=100s",
    );
    assert!(aqm("fq_codel", "interval = \"1ms\"\ntarget = \"999us\"").is_ok());
    // target must be below interval.
    refused(
        aqm("codel", "target = \"100ms\""),
        "network.bottleneck.aqm.target",
        "must be less than interval (100ms)",
    );
    // Whole numbers: each bound and one past it.
    for (decl, name) in [
        (fields::AQM_FLOWS, "flows"),
        (fields::AQM_QUANTUM, "quantum"),
        (fields::AQM_DROP_BATCH, "drop_batch"),
    ] {
        let (lo, hi) = decl.range.whole();
        for v in [lo, hi] {
            assert!(
                aqm("fq_codel", &format!("{name} = {v}")).is_ok(),
                "{name} = {v}"
            );
        }
        for v in [lo - 1, hi + 1] {
            refused(
                aqm("fq_codel", &format!("{name} = {v}")),
                &format!("network.bottleneck.aqm.{name}"),
                &format!("{v} is out of range; allowed {lo}..={hi}"),
            );
        }
        refused(
            aqm("codel", &format!("{name} = {lo}")),
            &format!("network.bottleneck.aqm.{name}"),
            "only for discipline = \"fq_codel\"",
        );
    }
    // RED's and PIE's real-valued fields: each bound (or, open, just
    // inside it) passes, one step past it is refused.
    for (d, decl) in [
        ("red", fields::AQM_MAX_P),
        ("red", fields::AQM_WEIGHT),
        ("pie", fields::AQM_ALPHA),
        ("pie", fields::AQM_BETA),
        ("pie", fields::AQM_MARK_ECN_THRESHOLD),
    ] {
        let longfat_sim::scenario::fields::Range::Real {
            lo,
            hi,
            lo_open,
            hi_open,
        } = decl.range
        else {
            panic!("{} is not real", decl.name)
        };
        let step = 1e-6;
        let (lo_in, lo_out) = if lo_open {
            (lo + step, lo)
        } else {
            (lo, lo - step)
        };
        let (hi_in, hi_out) = if hi_open {
            (hi - step, hi)
        } else {
            (hi, hi + step)
        };
        for v in [lo_in, hi_in] {
            assert!(
                aqm(d, &format!("{} = {v:?}", decl.name)).is_ok(),
                "{} = {v}",
                decl.name
            );
        }
        for v in [lo_out, hi_out] {
            refused(
                aqm(d, &format!("{} = {v:?}", decl.name)),
                &format!("network.bottleneck.aqm.{}", decl.name),
                &format!("is out of range; allowed {}", decl.range),
            );
        }
    }
    // RED's thresholds: min_th in [0, 1e6], max_th in (0, 1e6], min_th <
    // max_th (the default max_th, 15, counts).
    assert!(aqm("red", "min_th = 0.0").is_ok());
    assert!(aqm("red", "min_th = 999999.0\nmax_th = 1e6").is_ok());
    refused(
        aqm("red", "min_th = -0.5"),
        "network.bottleneck.aqm.min_th",
        "-0.5 is out of range; allowed [0, 1e6]",
    );
    refused(
        aqm("red", "max_th = 0.0\nmin_th = 0.0"),
        "network.bottleneck.aqm.max_th",
        "0 is out of range; allowed (0, 1e6]",
    );
    refused(
        aqm("red", "max_th = 1000000.5"),
        "network.bottleneck.aqm.max_th",
        "out of range",
    );
    refused(
        aqm("red", "min_th = 20.0"),
        "network.bottleneck.aqm.min_th",
        "20 must be less than max_th (15, the default)",
    );
    refused(
        aqm("red", "min_th = 10.0\nmax_th = 10.0"),
        "network.bottleneck.aqm.min_th",
        "10 must be less than max_th (10)",
    );
    // ARED: target_delay sets the thresholds and weight itself;
    // ared_interval needs adaptive.
    assert!(aqm(
        "red",
        "target_delay = \"20ms\"\nadaptive = true\nared_interval = \"1s\""
    )
    .is_ok());
    for f in ["min_th = 3.0", "max_th = 30.0", "weight = 0.01"] {
        let name = f.split(' ').next().unwrap();
        refused(
            aqm("red", &format!("target_delay = \"20ms\"\n{f}")),
            &format!("network.bottleneck.aqm.{name}"),
            "not with target_delay",
        );
    }
    for kv in [
        "ared_interval = \"1s\"",
        "ared_interval = \"1s\"\nadaptive = false",
    ] {
        refused(
            aqm("red", kv),
            "network.bottleneck.aqm.ared_interval",
            "only with adaptive = true",
        );
    }
    // Durations of RED and PIE: both bounds pass, one step past is refused.
    for (d, decl, extra) in [
        ("red", fields::AQM_TARGET_DELAY, ""),
        ("red", fields::AQM_ARED_INTERVAL, "adaptive = true"),
        ("pie", fields::AQM_TARGET, ""),
        ("pie", fields::AQM_T_UPDATE, ""),
        ("pie", fields::AQM_MAX_BURST, ""),
    ] {
        let (lo, hi) = decl.range.duration_ns();
        let kv = |ns: u64| format!("{} = \"{ns}ns\"\n{extra}", decl.name);
        for v in [lo, hi] {
            assert!(aqm(d, &kv(v)).is_ok(), "{} = {v}ns", decl.name);
        }
        let allowed = format!("allowed {}", decl.range);
        let mut out = vec![hi + 1];
        if lo > 0 {
            out.push(lo - 1);
        }
        for v in out {
            refused(
                aqm(d, &kv(v)),
                &format!("network.bottleneck.aqm.{}", decl.name),
                &allowed,
            );
        }
    }
    let (lo, hi) = fields::AQM_MEAN_PKT_SIZE.range.whole();
    for d in ["red", "pie"] {
        for v in [lo, hi] {
            assert!(aqm(d, &format!("mean_pkt_size = {v}")).is_ok(), "{d} {v}");
        }
        for v in [lo - 1, hi + 1] {
            refused(
                aqm(d, &format!("mean_pkt_size = {v}")),
                "network.bottleneck.aqm.mean_pkt_size",
                &format!("{v} is out of range; allowed {lo}..={hi}"),
            );
        }
    }
    // A field of another discipline is refused by name, for every field
    // and every discipline that does not take it.
    let valid = |name: &str| match name {
        "target" => "\"5ms\"",
        "interval" | "target_delay" | "ared_interval" | "t_update" | "max_burst" => "\"100ms\"",
        "ecn" | "gentle" | "wait" | "adaptive" => "true",
        "flows" | "quantum" | "drop_batch" => "1000",
        "mean_pkt_size" => "1000",
        _ => "0.1",
    };
    let declared: Vec<&str> = fields::Table::Aqm.fields().iter().map(|f| f.name).collect();
    let owned: Vec<&str> = fields::AQM_OWNERS.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        declared, owned,
        "AQM_OWNERS lists every aqm field, in order"
    );
    for (name, owners) in fields::AQM_OWNERS {
        for d in ["codel", "fq_codel", "red", "pie"] {
            let r = aqm(d, &format!("{name} = {}", valid(name)));
            if owners.contains(&d) {
                assert!(
                    r.is_ok() || !r.as_ref().unwrap_err().1.contains("only for"),
                    "{d} {name}: {r:?}"
                );
            } else {
                let (f, m) = r.expect_err(name);
                assert_eq!(f, format!("network.bottleneck.aqm.{name}"));
                assert!(m.starts_with("only for discipline = "), "{m}");
                for o in *owners {
                    assert!(m.contains(&format!("\"{o}\"")), "{m}");
                }
            }
        }
    }
    refused(
        aqm("codel", "max_p = 0.1"),
        "network.bottleneck.aqm.max_p",
        "only for discipline = \"red\"",
    );
    refused(
        aqm("red", "target = \"15ms\""),
        "network.bottleneck.aqm.target",
        "only for discipline = \"codel\", \"fq_codel\" or \"pie\"",
    );
    refused(
        build_with("[network.bottleneck.aqm]\ntarget = \"5ms\""),
        "network.bottleneck.aqm",
        "only with an AQM discipline",
    );
    refused(
        build_with("discipline = \"priority\"\n[network.bottleneck.aqm]"),
        "network.bottleneck.aqm",
        "only with an AQM discipline",
    );
    refused(
        build_with("discipline = \"codel\"\nclasses = 2"),
        "network.bottleneck.classes",
        "only for discipline = \"priority\"",
    );
    refused(
        build_with("discipline = \"fq_codel\"\nbuffer = \"shared\""),
        "network.bottleneck.buffer",
        "only for discipline = \"priority\"",
    );
    refused(
        build_with("discipline = \"codel\"\n[network.bottleneck.aqm]\nnope = 1"),
        "network.bottleneck.aqm.nope",
        "unknown field `nope`",
    );
    refused(
        build_with("discipline = \"sfq\""),
        "network.bottleneck.discipline",
        "\"codel\", \"fq_codel\"",
    );
    for d in ["red", "pie"] {
        assert!(build_with(&format!("discipline = \"{d}\"")).is_ok(), "{d}");
    }
    assert!(build_with("discipline = \"codel\"").is_ok());
    assert!(build_with("discipline = \"fq_codel\"\n[network.bottleneck.aqm]\necn = false").is_ok());
}

/// The defaults: CoDel 5 ms / 100 ms without ECN (Linux sch_codel), FQ-CoDel
/// 1024 buckets, quantum 1514, drop batch 64, with ECN (sch_fq_codel); RED
/// and PIE as ns-3 3.44 and RFC 8033, without ECN (ns-3 `UseEcn`); all
/// directions of the bottleneck get the discipline, the access links stay
/// DropTail.
#[test]
fn aqm_defaults_and_where_they_apply() {
    use longfat_sim::aqm::codel::CodelParams;
    use longfat_sim::aqm::fq_codel::FqCodelParams;
    use longfat_sim::aqm::pie::PieParams;
    use longfat_sim::aqm::red::RedParams;
    use longfat_sim::link::{Aqm, QueueDiscipline, QueueLimit};
    let built = |d: &str| {
        let text = format!(
            "[network]\ntopology = \"dumbbell\"\n[network.bottleneck]\nrate = \"10Mbps\"\ndelay = \"10ms\"\nqueue = \"100pkt\"\ndiscipline = \"{d}\"\n[[flows]]\ncc = \"reno\"\n[run]\nduration = \"1s\"\n"
        );
        longfat_sim::build(&longfat_sim::Scenario::from_toml(&text).unwrap()).unwrap()
    };
    let codel = CodelParams {
        target_ns: 5_000_000,
        interval_ns: 100_000_000,
    };
    assert_eq!(CodelParams::default(), codel);
    let fq = FqCodelParams {
        flows: 1024,
        quantum_bytes: 1514,
        drop_batch_pkts: 64,
        codel,
    };
    assert_eq!(FqCodelParams::default(), fq);
    // RED: ns-3 3.44 RedQueueDisc (MinTh 5, MaxTh 15, LInterm 50, QW
    // 0.002, Gentle, Wait, UseHardDrop, no ARED, MeanPktSize 500); PIE:
    // RFC 8033 §4.2, §4.4, §5.1 (15 ms, 15 ms, 0.125, 1.25, 150 ms, 10 %).
    let red = RedParams::default();
    assert_eq!(
        (red.min_th_pkts, red.max_th_pkts, red.max_p, red.weight),
        (5.0, 15.0, 0.02, 0.002)
    );
    assert!(red.gentle && red.wait && red.hard_drop && !red.adaptive && !red.auto_params);
    assert_eq!(
        (red.target_delay_ns, red.ared_interval_ns),
        (5_000_000, 500_000_000)
    );
    let pie = PieParams::default();
    assert_eq!(
        (
            pie.target_ns,
            pie.t_update_ns,
            pie.alpha,
            pie.beta,
            pie.max_burst_ns
        ),
        (15_000_000, 15_000_000, 0.125, 1.25, 150_000_000)
    );
    assert_eq!((pie.mark_ecn_threshold, pie.mean_pkt_bytes), (0.1, 1500));
    for (d, aqm, ecn) in [
        ("codel", Aqm::Codel(codel), false),
        ("fq_codel", Aqm::FqCodel(fq), true),
        (
            "red",
            Aqm::Red {
                params: red,
                mean_pkt_bytes: 500,
            },
            false,
        ),
        ("pie", Aqm::Pie(pie), false),
    ] {
        let sim = built(d);
        let want = QueueDiscipline::Aqm {
            aqm: Box::new(aqm),
            limit: QueueLimit::Packets(100),
            ecn,
        };
        for (l, spec) in sim.links.iter().zip(&sim.link_specs) {
            if spec.name.starts_with("bottleneck") {
                assert_eq!(spec.queue, want, "{}", spec.name);
                assert!(l.is_aqm());
            } else {
                assert!(!l.is_aqm(), "{}", spec.name);
            }
        }
        assert_eq!(sim.links.iter().filter(|l| l.is_aqm()).count(), 2);
    }
}

/// Two long-lived CUBIC flows with `tcp.ecn` on 20 Mbit/s x 20 ms (BDP 33
/// packets of 1500 bytes, 1667 packets/s) behind RED with ns-3's defaults
/// (min_th 5, max_th 15, max_p 0.02, w_q 0.002, gentle, wait), `ecn` as
/// given, a 1000-packet buffer; measured over 5-10 s, after slow start's
/// overshoot (RED's slow average lets the first window outgrow 2 max_th,
/// where even ECN-capable packets are dropped).
fn red_two_cubic(ecn: bool) -> serde_json::Value {
    run_toml(&format!(
        r#"
        [network]
        topology = "dumbbell"
        [network.bottleneck]
        rate = "20Mbps"
        delay = "9.5ms"
        queue = "1000pkt"
        discipline = "red"
        [network.bottleneck.aqm]
        ecn = {ecn}
        [network.access]
        rate = "1Gbps"
        delay = "0.25ms"
        [[flows]]
        cc = "cubic"
        count = 2
        start_spacing = "100ms"
        [flows.tcp]
        ecn = true
        [run]
        duration = "10s"
        measure_from = "5s"
        sample_interval = "100ms"
        "#
    ))
    .1
}

/// RED's operating point. At equilibrium the flows need some congestion
/// signal rate m (signals per arrival) and RED gives it at the average
/// queue where its law does: with ns-3's `wait` rule the gap between two
/// early marks is uniform in [1/p_b, 2/p_b] arrivals (aqm/red.rs `p_a`), so
/// m = p_b / 1.5, and p_b = max_p (avg - min_th) / (max_th - min_th)
/// (Floyd & Jacobson §4). So avg = min_th + (max_th - min_th) 1.5 m /
/// max_p, which must lie in (min_th, max_th) for any m below max_p / 1.5:
/// CUBIC's window here (BDP + queue, ~20 packets per flow) needs m of a
/// few per thousand (a signal every ~10 of its 0.3 W backoffs' worth of
/// growth), so avg sits a few packets above min_th. With ECN every signal
/// is a CE mark: no packet is dropped (the hard threshold 2 max_th = 30
/// is far above; only retransmissions, which are not ECN-capable, could
/// be, and nothing is lost to retransmit); each mark reaches its flow's
/// receiver and costs one reduction (one per RTT at most: marks are ~100
/// RTTs apart). With `ecn = false` the same signals are drops: no marks,
/// about the same count of drops, the same operating point.
#[test]
fn red_marks_ecn_capable_cubic_between_its_thresholds() {
    let (min_th, max_th, max_p) = (5.0, 15.0, 0.02);
    let check_operating_point = |l: &serde_json::Value, signals: f64| {
        let offered = f64_of(&l["offered_pkts"]);
        // 5 s at 20 Mbit/s: 8333 packets of 1500 bytes.
        assert!((8200.0..=8500.0).contains(&offered), "{l}");
        let m = signals / offered;
        let predicted = min_th + (max_th - min_th) * 1.5 * m / max_p;
        let q = f64_of(&l["mean_queue_pkts"]);
        assert!(q > min_th && q < max_th, "mean queue {q}: {l}");
        assert!(
            (q - predicted).abs() <= 1.5,
            "mean queue {q} against {predicted} from {signals} signals: {l}"
        );
        let u = f64_of(&l["utilization"]);
        assert!((0.98..=1.0).contains(&u), "utilization {u}");
    };
    let s = red_two_cubic(true);
    let l = link(&s, "bottleneck");
    let marks = f64_of(&l["ce_marks"]);
    assert!(marks >= 10.0, "{l}");
    assert_eq!(f64_of(&l["drops_aqm"]), 0.0, "{l}");
    assert_eq!(f64_of(&l["drops_overflow"]), 0.0, "{l}");
    check_operating_point(l, marks);
    let flows = s["flows"].as_array().unwrap();
    let seen: f64 = flows.iter().map(|f| f64_of(&f["ce_marks"])).sum();
    let reductions: f64 = flows.iter().map(|f| f64_of(&f["ecn_reductions"])).sum();
    // A mark in flight at either end of the window may be counted on one
    // side only.
    assert!((seen - marks).abs() <= 2.0, "flows saw {seen} of {marks}");
    assert!((reductions - marks).abs() <= 2.0, "{reductions} reductions");
    for f in flows {
        assert!(f64_of(&f["ce_marks"]) >= 1.0, "{f}");
        assert_eq!(f64_of(&f["retransmits"]), 0.0, "{f}");
    }

    let off = red_two_cubic(false);
    let lo = link(&off, "bottleneck");
    let drops = f64_of(&lo["drops_aqm"]);
    assert_eq!(f64_of(&lo["ce_marks"]), 0.0, "{lo}");
    assert!(
        drops >= 0.5 * marks && drops <= 2.0 * marks,
        "{drops} drops against {marks} marks"
    );
    check_operating_point(lo, drops);
}
/// One long-lived CUBIC flow on 20 Mbit/s x 10 ms (BDP 17 packets) behind
/// PIE with its RFC 8033 defaults and `target`, a 1000-packet buffer,
/// measured over 5-20 s (after slow start and the burst allowance).
fn pie_one_cubic(target: &str) -> serde_json::Value {
    run_toml(&format!(
        r#"
        [network]
        topology = "dumbbell"
        [network.bottleneck]
        rate = "20Mbps"
        delay = "4.5ms"
        queue = "1000pkt"
        discipline = "pie"
        [network.bottleneck.aqm]
        target = "{target}"
        [network.access]
        rate = "1Gbps"
        delay = "0.25ms"
        [[flows]]
        cc = "cubic"
        [run]
        duration = "20s"
        measure_from = "5s"
        sample_interval = "100ms"
        "#
    ))
    .1
}

/// RFC 8033 §4.2: every T_UPDATE, drop_prob grows by s (alpha (qdelay -
/// target) plus beta (qdelay - qdelay_old)), s the step's scale for
/// drop_prob's magnitude. Over a window where drop_prob ends about where it started,
/// the beta terms telescope and the alpha terms must sum to about 0: the
/// delay averages to the target, whatever the flow needs (here a drop
/// every few hundred ms: CUBIC's window of BDP + 25 or 50 packets). The
/// decay of drop_prob below target / 2, its clamp at 0 and the changing
/// scale s bias that a little; allowed: 15 % of the target. The delay
/// moves with the target (15 and 30 ms give means 15 ms apart), and the
/// buffer (1000 packets, 600 ms) plays no part: no overflow drops, the
/// link stays busy.
#[test]
fn pie_keeps_the_mean_sojourn_at_its_target() {
    for (target, target_ms) in [("15ms", 15.0), ("30ms", 30.0)] {
        let s = pie_one_cubic(target);
        let l = link(&s, "bottleneck");
        let mean_ms = f64_of(&l["mean_sojourn_ms"]);
        assert!(
            (mean_ms - target_ms).abs() <= 0.15 * target_ms,
            "target {target}: mean sojourn {mean_ms} ms"
        );
        assert!(f64_of(&l["drops_aqm"]) >= 5.0, "{l}");
        assert_eq!(f64_of(&l["drops_overflow"]), 0.0, "{l}");
        assert_eq!(f64_of(&l["ce_marks"]), 0.0, "{l}");
        let u = f64_of(&l["utilization"]);
        assert!((0.99..=1.0).contains(&u), "utilization {u}");
    }
}

/// One CUBIC flow with `tcp.ecn` behind CoDel with `ecn = true` on 20
/// Mbit/s x 20 ms, over 5-10 s. CoDel's congestion signals become CE marks
/// (RFC 8289 §5.2, RFC 3168): no AQM drop, no retransmission. The receiver
/// echoes ECE on every ACK until the sender's CWR arrives, about one
/// round trip of ACKs per mark; the sender reduces once for all of them
/// (RFC 3168 §6.1.2: at most once per window of data), so its reductions
/// are at most the marks, at most the round trips in the window (5 s /
/// 20 ms = 250), and far fewer than its ECE ACKs. Goodput stays that of a
/// busy link: at least 95 % of the rate's payload share (1460 / 1500).
#[test]
fn codel_ecn_marks_cubic_which_reduces_once_per_round_trip() {
    let (_, s) = run_toml(
        r#"
        [network]
        topology = "dumbbell"
        [network.bottleneck]
        rate = "20Mbps"
        delay = "9.5ms"
        queue = "1000pkt"
        discipline = "codel"
        [network.bottleneck.aqm]
        ecn = true
        [network.access]
        rate = "1Gbps"
        delay = "0.25ms"
        [[flows]]
        cc = "cubic"
        [flows.tcp]
        ecn = true
        [run]
        duration = "10s"
        measure_from = "5s"
        "#,
    );
    let l = link(&s, "bottleneck");
    let f = &s["flows"][0];
    let marks = f64_of(&l["ce_marks"]);
    assert!(marks >= 3.0, "{l}");
    assert_eq!(f64_of(&l["drops_aqm"]), 0.0, "{l}");
    assert_eq!(f64_of(&l["drops_overflow"]), 0.0, "{l}");
    assert_eq!(f64_of(&f["retransmits"]), 0.0, "{f}");
    let seen = f64_of(&f["ce_marks"]);
    assert!((seen - marks).abs() <= 1.0, "{f}");
    let reductions = f64_of(&f["ecn_reductions"]);
    let round_trips = 5.0 / 0.020;
    assert!(
        reductions >= 1.0 && reductions <= seen.min(round_trips),
        "{f}"
    );
    assert!(f64_of(&f["ece_acks"]) >= 5.0 * reductions, "{f}");
    let goodput = f64_of(&f["goodput_bps"]);
    assert!(goodput >= 0.95 * 20e6 * 1460.0 / 1500.0, "{f}");
}
