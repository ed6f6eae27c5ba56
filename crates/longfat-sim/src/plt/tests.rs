//! Unit tests of the packet manager, the LCM, the sender and the receiver.

use super::receiver::Reassembly;
use super::*;

fn plt_config() -> PltConfig {
    PltConfig {
        lcm: LcmConfig::default(),
        epoch_ns: 100_000_000,
        lcm_initial_window_pkts: 4.0,
        lcm_class: 1,
        lcm_ack_class: 1,
        lcm_ack_every_pkts: 1,
        lcm_ack_timeout_ns: 40_000_000,
        receive_buffer_pkts: u64::MAX,
        lcm_resend_ratio: None,
    }
}

#[test]
fn an_lcm_loss_goes_to_the_hcm_exactly_once_before_new_data() {
    let mut pm = PacketManager::new(Some(6), u64::MAX);
    let (a, b, c) = (
        pm.lcm_data().unwrap(),
        pm.lcm_data().unwrap(),
        pm.lcm_data().unwrap(),
    );
    assert_eq!((a, b, c), (0, 1, 2));
    pm.lcm_lost(b);
    pm.lcm_lost(b); // reported twice: queued once
    assert_eq!(pm.queued(), 1);
    // Limit: HCM's next number + 1 queued + 3 unsent.
    assert_eq!(pm.hcm_send_limit(0), 4);
    assert_eq!(pm.hcm_data(0), b, "the loss before new data");
    assert_eq!(pm.lcm_losses_resent, 1);
    assert_eq!(pm.hcm_data(1), 3, "then new data");
    assert_eq!(
        pm.hcm_data(0),
        b,
        "an HCM retransmission carries the same data"
    );
    pm.lcm_lost(b); // the LCM cannot lose it again: the HCM owns it
    assert_eq!(pm.queued(), 0);
    assert_eq!(pm.lcm_losses_resent, 1);
    // Acknowledgments: a (LCM), then the HCM's first two packets (b, 3).
    pm.acked(a);
    assert_eq!(pm.data_una(), 1);
    pm.hcm_acked_below(2);
    assert_eq!(pm.data_una(), 2, "c (2) is still out");
    pm.acked(c);
    assert_eq!(pm.data_una(), 4);
    assert!(!pm.is_complete());
    assert_eq!((pm.hcm_data(2), pm.hcm_data(3)), (4, 5));
    pm.hcm_acked_below(4);
    assert!(pm.is_complete());
}

#[test]
fn a_queued_loss_acknowledged_late_is_not_resent() {
    let mut pm = PacketManager::new(None, u64::MAX);
    let (a, b) = (pm.lcm_data().unwrap(), pm.lcm_data().unwrap());
    pm.lcm_lost(a);
    pm.lcm_lost(b);
    assert_eq!(pm.queued(), 2);
    pm.acked(a); // the LCM's ACK came after all
    assert_eq!(pm.queued(), 1);
    assert_eq!(pm.hcm_data(0), b, "a is skipped");
    assert_eq!(pm.lcm_losses_resent, 1);
    assert_eq!(pm.queued(), 0);
}

#[test]
fn packets_given_up_on_at_a_timeout_that_arrived_are_credited() {
    let mut s = sender(None);
    let mut out = Outbox::default();
    s.start(0, &mut out);
    let lcm: Vec<Packet> = out
        .packets
        .iter()
        .copied()
        .filter(|p| p.module == MODULE_LCM)
        .collect();
    // The LCM's timer fires before any ACK: all four are given up on.
    let t = s.lcm().timer_ns.unwrap();
    let mut out = Outbox::default();
    s.on_rto_timer(t, &mut out);
    assert_eq!(s.lcm().counters.timeouts, 1);
    assert_eq!(s.manager().queued() + s.manager().lcm_losses_resent, 4);
    // They had all arrived: the receiver was never told to skip them,
    // so its cumulative ACK of 4 proves it.
    let tcp = TcpConfig {
        packet_size_bytes: 1000,
        ..TcpConfig::default()
    };
    let mut r = PltReceiver::new(7, tcp, &plt_config());
    let mut acks = Outbox::default();
    for p in &lcm {
        r.on_data(1, p, &mut acks);
    }
    let last = *acks.packets.last().unwrap();
    assert_eq!(last.seq, 4);
    s.on_ack(t + 1, &last, &mut out);
    assert_eq!(s.lcm().counters.late_acked_pkts, 4);
    assert_eq!(s.manager().queued(), 0, "nothing left to resend");
}

#[test]
fn reassembly_delivers_exactly_in_order() {
    let mut r = Reassembly::default();
    assert_eq!(r.receive(2), (true, 0));
    assert_eq!(r.receive(0), (true, 1));
    assert_eq!(r.receive(2), (false, 0), "a duplicate");
    assert_eq!(r.receive(1), (true, 2));
    assert_eq!(r.receive(0), (false, 0));
    assert_eq!(r.nxt, 3);
    assert!(r.held.is_empty());
}

fn sender(total: Option<u64>) -> PltSender {
    let tcp = TcpConfig {
        packet_size_bytes: 1000,
        ..TcpConfig::default()
    };
    let cc = longfat_cc::build(
        "reno",
        &Default::default(),
        tcp.profile.cc_rules(),
        tcp.initial_window,
    )
    .unwrap();
    PltSender::new(7, tcp, &plt_config(), cc, total)
}

#[test]
fn modules_mark_their_packets_and_share_one_sequence_space() {
    let mut s = sender(None);
    let mut out = Outbox::default();
    s.start(0, &mut out);
    let hcm: Vec<&Packet> = out
        .packets
        .iter()
        .filter(|p| p.module == MODULE_HCM)
        .collect();
    let lcm: Vec<&Packet> = out
        .packets
        .iter()
        .filter(|p| p.module == MODULE_LCM)
        .collect();
    let iw = TcpConfig::default().initial_window.cwnd_pkts as usize;
    assert_eq!(hcm.len(), iw);
    assert_eq!(lcm.len(), 4, "the LCM's initial window");
    assert!(hcm
        .iter()
        .all(|p| p.class == 0 && p.kind == PacketKind::Data));
    assert!(lcm.iter().all(|p| p.class == 1 && p.settled_below() == 0));
    let mut data: Vec<u64> = out.packets.iter().map(|p| p.data_seq()).collect();
    data.sort_unstable();
    assert_eq!(
        data,
        (0..(iw + 4) as u64).collect::<Vec<_>>(),
        "every data packet once"
    );
    // Each module numbers its own packets from 0.
    assert_eq!(
        hcm.iter().map(|p| p.seq).collect::<Vec<_>>(),
        (0..iw as u64).collect::<Vec<_>>()
    );
    assert_eq!(
        lcm.iter().map(|p| p.seq).collect::<Vec<_>>(),
        vec![0, 1, 2, 3]
    );
}

#[test]
fn receiver_acks_each_module_in_its_class_and_skips_settled_lcm_losses() {
    let tcp = TcpConfig {
        packet_size_bytes: 1000,
        ..TcpConfig::default()
    };
    let mut r = PltReceiver::new(7, tcp.clone(), &plt_config());
    let mut s = sender(None);
    let mut out = Outbox::default();
    s.start(0, &mut out);
    let pkts = std::mem::take(&mut out.packets);
    let lcm: Vec<Packet> = pkts
        .iter()
        .copied()
        .filter(|p| p.module == MODULE_LCM)
        .collect();
    let hcm: Vec<Packet> = pkts
        .iter()
        .copied()
        .filter(|p| p.module == MODULE_HCM)
        .collect();
    let mut acks = Outbox::default();
    r.on_data(1, &hcm[0], &mut acks);
    r.on_data(1, &lcm[1], &mut acks); // LCM packet 0 is lost
    assert_eq!(acks.packets.len(), 2);
    let (ha, la) = (acks.packets[0], acks.packets[1]);
    assert_eq!((ha.module, ha.class, ha.seq), (MODULE_HCM, 0, 1));
    assert_eq!((la.module, la.class, la.seq), (MODULE_LCM, 1, 0));
    assert_eq!(la.sack_blocks().collect::<Vec<_>>(), vec![(1, 2)]);
    // The sender gives up on LCM 0; a later LCM packet says so and the
    // receiver's LCM cumulative ACK moves past it.
    let mut late = lcm[3];
    late.set_settled_below(1);
    r.on_data(2, &late, &mut acks);
    assert_eq!(
        acks.packets[2].seq, 2,
        "0 skipped, 1 held; 2 is the next expected"
    );
    // With lcm_ack_class = high, LCM ACKs go out in the HCM's class.
    let cfg = PltConfig {
        lcm_ack_class: 0,
        ..plt_config()
    };
    let mut r = PltReceiver::new(7, tcp, &cfg);
    let mut acks = Outbox::default();
    r.on_data(1, &lcm[0], &mut acks);
    assert_eq!(
        (acks.packets[0].module, acks.packets[0].class),
        (MODULE_LCM, 0)
    );
}

#[test]
fn lcm_acks_every_n_packets_when_asked() {
    let tcp = TcpConfig {
        packet_size_bytes: 1000,
        ..TcpConfig::default()
    };
    let cfg = PltConfig {
        lcm_ack_every_pkts: 3,
        lcm_initial_window_pkts: 6.0,
        ..plt_config()
    };
    let mut r = PltReceiver::new(7, tcp.clone(), &cfg);
    let cc = longfat_cc::build(
        "reno",
        &Default::default(),
        tcp.profile.cc_rules(),
        tcp.initial_window,
    )
    .unwrap();
    let mut s = PltSender::new(7, tcp, &cfg, cc, None);
    let mut out = Outbox::default();
    s.start(0, &mut out);
    let mut acks = Outbox::default();
    for p in out.packets.iter().filter(|p| p.module == MODULE_LCM) {
        r.on_data(1, p, &mut acks);
    }
    let lcm_acks: Vec<u64> = acks
        .packets
        .iter()
        .filter(|a| a.module == MODULE_LCM)
        .map(|a| a.seq)
        .collect();
    assert_eq!(lcm_acks, vec![3, 6]);
}

#[test]
fn lcm_finds_losses_three_packets_back_and_hands_them_to_the_hcm() {
    let mut s = sender(None);
    let mut out = Outbox::default();
    s.start(0, &mut out);
    let sent = std::mem::take(&mut out.packets);
    let lcm: Vec<Packet> = sent
        .iter()
        .copied()
        .filter(|p| p.module == MODULE_LCM)
        .collect();
    let hcm: Vec<Packet> = sent
        .iter()
        .copied()
        .filter(|p| p.module == MODULE_HCM)
        .collect();
    let tcp = TcpConfig {
        packet_size_bytes: 1000,
        ..TcpConfig::default()
    };
    let mut r = PltReceiver::new(7, tcp, &plt_config());
    let mut acks = Outbox::default();
    for p in &lcm[1..3] {
        r.on_data(10_000_000, p, &mut acks); // LCM packet 0 lost
    }
    for a in std::mem::take(&mut acks.packets) {
        s.on_ack(20_000_000, &a, &mut out);
    }
    assert_eq!(
        s.lcm().counters.lost_pkts,
        0,
        "two later packets are not enough"
    );
    r.on_data(10_000_000, &lcm[3], &mut acks);
    for a in std::mem::take(&mut acks.packets) {
        s.on_ack(20_000_000, &a, &mut out);
    }
    assert_eq!(
        s.lcm().counters.lost_pkts,
        1,
        "three later packets acknowledged"
    );
    assert_eq!(s.manager().queued(), 1);
    // The HCM's window is full; its first ACK lets it send the loss
    // before any new data.
    assert!(out.packets.iter().all(|p| p.module == MODULE_LCM));
    r.on_data(10_000_000, &hcm[0], &mut acks);
    out.packets.clear();
    for a in std::mem::take(&mut acks.packets) {
        s.on_ack(20_000_000, &a, &mut out);
    }
    let first_hcm = out
        .packets
        .iter()
        .find(|p| p.module == MODULE_HCM)
        .expect("the HCM sent");
    assert_eq!(first_hcm.data_seq(), lcm[0].data_seq());
    assert_eq!(s.manager().lcm_losses_resent, 1);
    assert_eq!(s.manager().queued(), 0);
}
