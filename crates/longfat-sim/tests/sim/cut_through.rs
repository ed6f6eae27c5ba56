//! Cut-through (`link::Cut`): a one-flow path's bottleneck hands each
//! packet to the receiver's link when it takes it, one event early. Nothing
//! a reader can see may change: the same run with cut-through off
//! (`BuildOptions::cut_through`) must show the same link counters and
//! queues at any time, the same summary and the same packet captures.

use longfat_sim::link::Cut;
use longfat_sim::sim::RunStatus;
use longfat_sim::{build_with, BuildOptions, Scenario, Simulation};

fn built(text: &str, cut_through: bool) -> Simulation {
    let s = Scenario::from_toml(text).unwrap_or_else(|e| panic!("scenario: {e}"));
    let opts = BuildOptions {
        cut_through,
        ..BuildOptions::default()
    };
    build_with(&s, &opts, &mut || false).unwrap_or_else(|e| panic!("build: {e}"))
}

fn dumbbell(cc: &str, bottleneck: &str, tcp: &str, run: &str) -> String {
    format!(
        "[network]\ntopology = \"dumbbell\"\n\
         [network.bottleneck]\n{bottleneck}\n\
         [network.access]\nrate = \"1Gbps\"\ndelay = \"1ms\"\nqueue = \"1000pkt\"\n\
         [[flows]]\nname = \"f\"\ncc = \"{cc}\"\n[flows.tcp]\n{tcp}\n\
         [run]\n{run}\n"
    )
}

/// Steps both runs to the same times (an odd step, so that steps land
/// between a packet's hand-over and its entry) and compares every link.
fn same_at_every_step(text: &str) -> Simulation {
    same_at_every_step_saving(text, 1, 4)
}

/// `same_at_every_step`, the cut run taking fewer than `num / den` of
/// the events plus one in `den` (an AQM link keeps its tx-done events).
fn same_at_every_step_saving(text: &str, num: u64, den: u64) -> Simulation {
    let mut cut = built(text, true);
    let mut plain = built(text, false);
    let cuts = |s: &Simulation| s.links.iter().map(|l| l.cut()).collect::<Vec<_>>();
    assert!(cuts(&cut).contains(&Cut::Feeder) && cuts(&cut).contains(&Cut::Fed));
    assert!(cuts(&plain).iter().all(|&c| c == Cut::None));
    let mut t = 0;
    while !cut.is_done() {
        t += 1_234_567;
        assert_eq!(cut.run_until(t), RunStatus::Reached);
        assert_eq!(plain.run_until(t), RunStatus::Reached);
        let now = cut.now_ns();
        for (i, (a, b)) in cut.links.iter_mut().zip(plain.links.iter_mut()).enumerate() {
            assert_eq!(
                a.queue_len(now),
                b.queue_len(now),
                "link {i} queue at {now} ns"
            );
            assert_eq!(a.counters, b.counters, "link {i} counters at {now} ns");
            assert_eq!(a.next_departure_ns(now), b.next_departure_ns(now));
        }
    }
    assert!(plain.is_done());
    assert_eq!(cut.metrics.summary(), plain.metrics.summary());
    let delivered = |s: &Simulation| s.flows[0].endpoints.counters().delivered_bytes;
    assert!(delivered(&cut) > 1_000_000, "{} bytes", delivered(&cut));
    // One event fewer per packet that crosses the pair.
    assert!(
        cut.events_processed() < plain.events_processed() * (den - num) / den,
        "{} events against {}",
        cut.events_processed(),
        plain.events_processed()
    );
    if let (Some(a), Some(b)) = (&cut.capture, &plain.capture) {
        let flows = a.flows().count();
        assert!(flows > 0);
        for slot in 0..flows {
            let bytes =
                |c: &longfat_sim::capture::Captures| c.write_pcapng(slot, Vec::new()).unwrap();
            assert!(a.packets(slot) > 1000);
            assert_eq!(bytes(a), bytes(b), "capture {slot}");
        }
    }
    cut
}

#[test]
fn reno_with_losses_at_the_bottleneck_queue() {
    let _ = same_at_every_step(&dumbbell(
        "reno",
        "rate = \"100Mbps\"\ndelay = \"20ms\"\nqueue = \"100pkt\"",
        "",
        "duration = \"3s\"\nseed = 7\nmeasure_from = \"1s\"\nsample_interval = \"10ms\"",
    ));
}

/// The feeder corrupts packets: they are freed when it takes them, but
/// still counted as corrupted when they would have reached its far end.
#[test]
fn cubic_with_random_loss_on_the_bottleneck() {
    let sim = same_at_every_step(&dumbbell(
        "cubic",
        "rate = \"200Mbps\"\ndelay = \"10ms\"\nqueue = \"400pkt\"\nloss = 0.005",
        "",
        "duration = \"2s\"\nseed = 3\nsample_interval = \"7ms\"",
    ));
    let corrupted = sim.links[sim.link_index("bottleneck").unwrap()]
        .counters
        .drops_random;
    assert!(corrupted >= 5, "{corrupted} corrupted");
}

/// The `linux` profile (delayed ACKs, timestamps, pacing off) with a
/// capture at the bottleneck, whose data records are taken at the fed
/// link's entry: the file is the same, in time order.
#[test]
fn linux_cubic_captured_at_the_bottleneck() {
    let _ = same_at_every_step(&dumbbell(
        "cubic",
        "rate = \"100Mbps\"\ndelay = \"35ms\"\nqueue = \"300pkt\"",
        "profile = \"linux\"\npacket_size = \"1502B\"\nheader_size = \"54B\"\nack_size = \"54B\"\ntimestamps = true",
        "duration = \"2s\"\nseed = 1\nmeasure_from = \"500ms\"\nsample_interval = \"10ms\"\n\
         pcap = [\"f\"]\npcap_tap = \"bottleneck\"",
    ));
}

/// Which links cut through: only links in series. Two flows share the
/// bottleneck, so it feeds two links and hands nothing ahead; an access
/// link slower than the bottleneck can queue, so it is not fed.
#[test]
fn only_a_link_in_series_that_never_queues_is_fed() {
    let one = built(
        &dumbbell(
            "reno",
            "rate = \"100Mbps\"\ndelay = \"20ms\"\nqueue = \"100pkt\"",
            "",
            "duration = \"1s\"",
        ),
        true,
    );
    let role = |s: &Simulation, name: &str| s.links[s.link_index(name).unwrap()].cut();
    assert_eq!(role(&one, "bottleneck"), Cut::Feeder);
    assert_eq!(role(&one, "bottleneck.reverse"), Cut::Feeder);
    assert_eq!(one.links.iter().filter(|l| l.cut() == Cut::Fed).count(), 2);
    assert_eq!(one.links.iter().filter(|l| l.cut() == Cut::None).count(), 2);

    let two = "[network]\ntopology = \"dumbbell\"\n[network.bottleneck]\nrate = \"100Mbps\"\n\
               delay = \"20ms\"\nqueue = \"100pkt\"\n[[flows]]\ncc = \"reno\"\ncount = 2\n\
               [run]\nduration = \"1s\"\n";
    let two = built(two, true);
    assert!(two.links.iter().all(|l| l.cut() == Cut::None));

    let slow_access = built(
        &dumbbell(
            "reno",
            "rate = \"100Mbps\"\ndelay = \"20ms\"\nqueue = \"100pkt\"",
            "",
            "duration = \"1s\"",
        )
        .replace("rate = \"1Gbps\"", "rate = \"50Mbps\""),
        true,
    );
    // Slower than the bottleneck, the receiver's link can queue: not fed.
    // But then the bottleneck, fed by the sender's slower link alone (and
    // the reverse one by the receiver's), never queues: the senders' own
    // links hand packets to the bottlenecks.
    assert_eq!(role(&slow_access, "bottleneck"), Cut::Fed);
    assert_eq!(role(&slow_access, "bottleneck.reverse"), Cut::Fed);
    let feeders: Vec<usize> = (0..slow_access.links.len())
        .filter(|&i| slow_access.links[i].cut() == Cut::Feeder)
        .collect();
    let f = &slow_access.flows[0];
    assert_eq!(feeders, [f.fwd[0] as usize, f.bwd[0] as usize]);
}

/// The sender's own (slower) link feeds the bottleneck: packets are handed
/// on from the sender's flush, and the fed link is the monitored one.
#[test]
fn a_slow_host_link_feeds_the_bottleneck() {
    let _ = same_at_every_step(
        &dumbbell(
            "reno",
            "rate = \"100Mbps\"\ndelay = \"15ms\"\nqueue = \"50pkt\"",
            "",
            "duration = \"2s\"\nseed = 5\nsample_interval = \"3ms\"",
        )
        .replace(
            "rate = \"1Gbps\"\ndelay = \"1ms\"\nqueue = \"1000pkt\"",
            "rate = \"40Mbps\"\ndelay = \"1ms\"\nqueue = \"60pkt\"",
        ),
    );
}

/// An FQ-CoDel bottleneck hands a packet to the receiver's link when it
/// enters service (`link::HandOver`), the reverse one each ACK to the
/// sender's: with ECN marks, CoDel drops, lazy services and their held-back
/// tx-dones (`EventQueue::defer`), and a capture at the bottleneck.
#[test]
fn fq_codel_bottleneck_hands_over_at_service() {
    let sim = same_at_every_step_saving(
        &dumbbell(
            "cubic",
            "rate = \"100Mbps\"\ndelay = \"10ms\"\nqueue = \"1bdp\"\ndiscipline = \"fq_codel\"\n[network.bottleneck.aqm]\necn = true",
            "profile = \"linux\"\npacket_size = \"1502B\"\necn = true\ndelayed_ack = false",
            "duration = \"3s\"\nseed = 2\nmeasure_from = \"1s\"\nsample_interval = \"7ms\"\n\
             pcap = [\"f\"]\npcap_tap = \"bottleneck\"",
        ),
        1,
        5,
    );
    let role = |name: &str| sim.links[sim.link_index(name).unwrap()].cut();
    assert_eq!(role("bottleneck"), Cut::Feeder);
    assert_eq!(role("bottleneck.reverse"), Cut::Feeder);
    let b = &sim.links[sim.link_index("bottleneck").unwrap()].counters;
    assert!(b.ce_marks > 0, "{} marks", b.ce_marks);
}

/// FQ-CoDel without ECN (CoDel drops), a short buffer (overflow drops) and
/// a zero-delay bottleneck, so that the fed link's entry is the end of the
/// service itself; then CoDel, RED and PIE bottlenecks, which hand over
/// from the same `begin_service`.
#[test]
fn aqm_bottlenecks_hand_over_at_service() {
    for (bottleneck, saving) in [
        ("rate = \"50Mbps\"\ndelay = \"0ms\"\nqueue = \"30pkt\"\ndiscipline = \"fq_codel\"", 5),
        ("rate = \"100Mbps\"\ndelay = \"10ms\"\nqueue = \"1bdp\"\ndiscipline = \"codel\"", 5),
        ("rate = \"100Mbps\"\ndelay = \"10ms\"\nqueue = \"1bdp\"\ndiscipline = \"red\"\n[network.bottleneck.aqm]\necn = true", 5),
        ("rate = \"100Mbps\"\ndelay = \"10ms\"\nqueue = \"1bdp\"\ndiscipline = \"pie\"", 5),
    ] {
        let _ = same_at_every_step_saving(
            &dumbbell(
                "reno",
                bottleneck,
                "ecn = true",
                "duration = \"2s\"\nseed = 4\nsample_interval = \"3ms\"",
            ),
            1,
            saving,
        );
    }
}

/// A bottleneck that corrupts packets would have to count them at its
/// far end: an AQM link with random loss hands nothing over.
#[test]
fn a_lossy_aqm_link_is_no_feeder() {
    let sim = built(
        &dumbbell(
            "reno",
            "rate = \"100Mbps\"\ndelay = \"10ms\"\nqueue = \"1bdp\"\ndiscipline = \"fq_codel\"\nloss = 0.001",
            "",
            "duration = \"1s\"",
        ),
        true,
    );
    let role = |name: &str| sim.links[sim.link_index(name).unwrap()].cut();
    assert_eq!(role("bottleneck"), Cut::None);
}
