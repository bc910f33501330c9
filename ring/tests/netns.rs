//! Privileged tests in a netns lab: a TX ring in namespace `a` sends over a veth pair to
//! RX rings in namespace `b`. They need root; under `CI=true` a skip is a failure.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use zcrx_ring::frames::{frame_seq, UdpFlow, OTHER_MAC};
use zcrx_ring::lab::Lab;
use zcrx_ring::{bpf, require, Fanout, RxRing, RxRingBuilder, TxRing};

fn flows(lab: &Lab, n: usize, dport: impl Fn(usize) -> u16) -> Vec<UdpFlow> {
    (0..n)
        .map(|i| UdpFlow::lab(&lab.a, &lab.b, i as u16, dport(i), false))
        .collect()
}

fn rx(lab: &Lab, b: RxRingBuilder) -> RxRing {
    lab.b
        .run(move || b.build())
        .expect("enter netns b")
        .expect("build RX ring in b")
}

fn tx(lab: &Lab) -> TxRing {
    let iface = lab.a.iface.clone();
    lab.a
        .run(move || TxRing::builder(iface).build())
        .expect("enter netns a")
        .expect("build TX ring in a")
}

/// Received frame: bytes, wire length, VLAN TCI, truncated flag.
type Got = (Vec<u8>, u32, Option<u16>, bool);

/// Calls `read` (which adds our frames to the list and says whether anything arrived)
/// until `want` of our frames arrived or nothing came for `idle`.
fn collect_with(
    want: usize,
    idle: Duration,
    mut read: impl FnMut(&mut Vec<Got>) -> bool,
) -> Vec<Got> {
    let mut got = Vec::new();
    let mut last = Instant::now();
    while got.len() < want && last.elapsed() < idle {
        if read(&mut got) {
            last = Instant::now();
        }
    }
    got
}

/// Reads until `want` of our frames arrived or nothing came for `idle`.
fn collect(ring: &RxRing, want: usize, idle: Duration) -> Vec<Got> {
    collect_with(want, idle, |got| {
        let Some(block) = ring
            .next_block(Duration::from_millis(50))
            .expect("next_block")
        else {
            return false;
        };
        for p in block.packets() {
            let p = p.expect("kernel block validates");
            if frame_seq(p.data()).is_some() {
                got.push((
                    p.data().to_vec(),
                    p.wire_len(),
                    p.vlan_tci(),
                    p.is_truncated(),
                ));
            }
        }
        true
    })
}

#[test]
fn frames_over_300_flows_arrive_exactly_once_and_unchanged() {
    require!();
    let lab = Lab::new().expect("lab");
    let ring = rx(&lab, RxRing::builder(&lab.b.iface));
    let mut tx = tx(&lab);
    let flows = flows(&lab, 300, |i| 9000 + (i % 64) as u16);
    const K: usize = 30_000;
    let sent: Vec<Vec<u8>> = (0..K)
        .map(|seq| flows[seq % flows.len()].frame(seq as u64, 60 + (seq * 37) % 1455))
        .collect();
    assert_eq!(
        tx.send_batch(sent.iter().map(|f| f.as_slice()))
            .expect("send"),
        K
    );
    let got = collect(&ring, K, Duration::from_secs(2));
    let mut seen = HashSet::new();
    for (bytes, wire_len, vlan, truncated) in &got {
        let seq = frame_seq(bytes).unwrap() as usize;
        assert!(seen.insert(seq), "frame {seq} delivered twice");
        assert_eq!(bytes, &sent[seq], "frame {seq} bytes differ");
        assert_eq!(*wire_len as usize, sent[seq].len());
        assert_eq!(*vlan, None);
        assert!(!truncated);
    }
    let stats = ring.stats().expect("stats");
    assert_eq!(
        got.len(),
        K,
        "lost {} frames; kernel says {stats:?}",
        K - got.len()
    );
    assert_eq!(stats.drops, 0);
}

#[test]
fn vlan_tag_comes_back_in_tp_vlan_tci() {
    require!();
    let lab = Lab::new().expect("lab");
    let ring = rx(&lab, RxRing::builder(&lab.b.iface));
    let mut tx = tx(&lab);
    let mut flow = flows(&lab, 1, |_| 9001)[0];
    let tci = (3 << 13) | 42; // PCP 3, VID 42
    flow.vlan = Some(tci);
    let sent: Vec<Vec<u8>> = (0..10).map(|s| flow.frame(s, 200)).collect();
    tx.send_batch(sent.iter().map(|f| f.as_slice()))
        .expect("send");
    let got = collect(&ring, 10, Duration::from_secs(2));
    assert_eq!(got.len(), 10);
    for (bytes, wire_len, vlan, _) in got {
        assert_eq!(vlan, Some(tci), "kernel-stripped tag is reported");
        let seq = frame_seq(&bytes).unwrap() as usize;
        // The ring holds the frame without its tag; putting it back gives the sent bytes.
        let mut restored = bytes[..12].to_vec();
        restored.extend_from_slice(&0x8100u16.to_be_bytes());
        restored.extend_from_slice(&tci.to_be_bytes());
        restored.extend_from_slice(&bytes[12..]);
        assert_eq!(restored, sent[seq]);
        assert_eq!(wire_len as usize, sent[seq].len() - 4);
    }
}

#[test]
fn frames_longer_than_snaplen_are_truncated_with_original_length() {
    require!();
    let lab = Lab::new().expect("lab");
    let ring = rx(&lab, RxRing::builder(&lab.b.iface).snaplen(96));
    let mut tx = tx(&lab);
    let flow = flows(&lab, 1, |_| 9001)[0];
    let sent: Vec<Vec<u8>> = (0..20)
        .map(|s| flow.frame(s, if s % 2 == 0 { 1000 } else { 80 }))
        .collect();
    tx.send_batch(sent.iter().map(|f| f.as_slice()))
        .expect("send");
    let got = collect(&ring, 20, Duration::from_secs(2));
    assert_eq!(got.len(), 20);
    for (bytes, wire_len, _, truncated) in got {
        let seq = frame_seq(&bytes).unwrap() as usize;
        let original = &sent[seq];
        assert_eq!(wire_len as usize, original.len());
        assert_eq!(bytes.len(), original.len().min(96));
        assert_eq!(truncated, original.len() > 96);
        assert_eq!(bytes, original[..bytes.len()]);
    }
}

#[test]
fn fanout_hash_splits_flows_and_keeps_both_directions_together() {
    require!();
    let lab = Lab::new().expect("lab");
    let group = (std::process::id() & 0xffff) as u16;
    let r1 = rx(
        &lab,
        RxRing::builder(&lab.b.iface).fanout(Fanout::hash(group)),
    );
    let r2 = rx(
        &lab,
        RxRing::builder(&lab.b.iface).fanout(Fanout::hash(group)),
    );
    let mut tx_a = tx(&lab);
    // The reverse direction leaves b through the qdisc, where packet taps see outgoing frames
    // (qdisc bypass skips the taps).
    let iface_b = lab.b.iface.clone();
    let mut tx_b = lab
        .b
        .run(move || TxRing::builder(iface_b).qdisc_bypass(false).build())
        .unwrap()
        .unwrap();
    let fwd = flows(&lab, 200, |_| 9001);
    let rev: Vec<UdpFlow> = fwd
        .iter()
        .map(|f| UdpFlow {
            src_mac: lab.b.mac,
            dst_mac: OTHER_MAC,
            src_ip: f.dst_ip,
            dst_ip: f.src_ip,
            sport: f.dport,
            dport: f.sport,
            vlan: None,
        })
        .collect();
    const PER: usize = 5;
    let a: Vec<Vec<u8>> = (0..fwd.len() * PER)
        .map(|s| fwd[s % fwd.len()].frame(s as u64, 100))
        .collect();
    let b: Vec<Vec<u8>> = (0..rev.len() * PER)
        .map(|s| rev[s % rev.len()].frame((1 << 32) + s as u64, 100))
        .collect();
    tx_a.send_batch(a.iter().map(|f| f.as_slice())).unwrap();
    tx_b.send_batch(b.iter().map(|f| f.as_slice())).unwrap();
    let total = a.len() + b.len();
    let g1 = collect(&r1, total, Duration::from_millis(500));
    let g2 = collect(&r2, total - g1.len(), Duration::from_millis(500));
    assert_eq!(
        g1.len() + g2.len(),
        total,
        "every frame reaches exactly one member"
    );
    // Canonical flow id: the forward sport (= reverse dport) identifies the flow.
    let flow_of = |bytes: &[u8]| {
        let (s, d) = (
            u16::from_be_bytes([bytes[34], bytes[35]]),
            u16::from_be_bytes([bytes[36], bytes[37]]),
        );
        if s >= 10_000 {
            s
        } else {
            d
        }
    };
    let mut owner: HashMap<u16, usize> = HashMap::new();
    let mut dirs: HashMap<u16, HashSet<bool>> = HashMap::new();
    for (member, got) in [(1, &g1), (2, &g2)] {
        for (bytes, ..) in got.iter() {
            let f = flow_of(bytes);
            assert_eq!(
                *owner.entry(f).or_insert(member),
                member,
                "flow {f} split across members"
            );
            dirs.entry(f).or_default().insert(
                bytes[23] == 17 && flow_of(bytes) == u16::from_be_bytes([bytes[34], bytes[35]]),
            );
        }
    }
    assert_eq!(owner.len(), 200);
    assert!(
        dirs.values().all(|d| d.len() == 2),
        "both directions of every flow were seen"
    );
    let on1 = owner.values().filter(|m| **m == 1).count();
    assert!(
        on1 > 0 && on1 < 200,
        "hash spread flows over both members ({on1} on the first)"
    );
}

#[test]
fn a_ring_that_is_not_read_reports_drops() {
    require!();
    let lab = Lab::new().expect("lab");
    let page = zcrx_ring::page_size();
    let ring = rx(
        &lab,
        RxRing::builder(&lab.b.iface)
            .block_size(page)
            .block_count(4),
    );
    let mut tx = tx(&lab);
    let flow = flows(&lab, 1, |_| 9001)[0];
    let sent: Vec<Vec<u8>> = (0..500).map(|s| flow.frame(s, 1000)).collect();
    tx.send_batch(sent.iter().map(|f| f.as_slice())).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let before = ring.stats().unwrap();
    let got = collect(&ring, 500, Duration::from_millis(300));
    let after = ring.stats().unwrap();
    assert!(before.drops > 0, "a full ring drops: {before:?}");
    assert_eq!(
        before.packets, 500,
        "the kernel counted every frame that passed the filter"
    );
    assert_eq!(
        got.len() as u64 + after.drops,
        500,
        "delivered + dropped = sent ({after:?})"
    );
    assert_eq!(after.drops, before.drops, "stats accumulate across reads");
}

/// A packet alone does not fill a block: the kernel's retire timer closes the block it opened
/// (`TP_STATUS_BLK_TMO`) and hands it over, the packet in it, instead of holding it until more
/// come. (How soon after its timeout the reader gets it is the host's scheduling, a latency
/// for a benchmark, not asserted here.)
#[test]
fn a_single_packet_arrives_in_a_block_its_timer_retired() {
    require!();
    let lab = Lab::new().expect("lab");
    let timeout = Duration::from_millis(20);
    let ring = rx(&lab, RxRing::builder(&lab.b.iface).block_timeout(timeout));
    assert_eq!(ring.block_timeout(), timeout);
    let mut tx = tx(&lab);
    let flow = flows(&lab, 1, |_| 9001)[0];
    let frame = flow.frame(7, 100);
    tx.send_batch([frame.as_slice()]).unwrap();
    // A safety net only: the block comes one timeout after it opened.
    let deadline = Instant::now() + Duration::from_secs(10);
    let (mut ours, mut timed_out) = (Vec::new(), false);
    while ours.is_empty() && Instant::now() < deadline {
        let Some(block) = ring
            .next_block(Duration::from_millis(50))
            .expect("next_block")
        else {
            continue;
        };
        let view = block.view().expect("kernel block validates");
        ours = view
            .packets()
            .filter_map(|p| frame_seq(p.expect("kernel block validates").data()))
            .collect();
        timed_out = view.timed_out();
    }
    assert_eq!(ours, [7], "the one packet sent, alone");
    assert!(timed_out, "its block was not closed by the retire timer");
}

#[test]
fn bpf_program_lets_only_one_udp_port_through() {
    require!();
    let lab = Lab::new().expect("lab");
    let ring = rx(
        &lab,
        RxRing::builder(&lab.b.iface).filter(bpf::udp_dst_port(9001, 262_144)),
    );
    let mut tx = tx(&lab);
    let flows = flows(&lab, 4, |i| 9000 + i as u16); // ports 9000..=9003
    let sent: Vec<Vec<u8>> = (0..400)
        .map(|s| flows[s % 4].frame(s as u64, 120))
        .collect();
    tx.send_batch(sent.iter().map(|f| f.as_slice())).unwrap();
    let got = collect(&ring, 100, Duration::from_millis(500));
    assert_eq!(got.len(), 100);
    assert!(got
        .iter()
        .all(|(b, ..)| u16::from_be_bytes([b[36], b[37]]) == 9001));
    // Nothing else trickles in afterwards.
    assert!(collect(&ring, 1, Duration::from_millis(200)).is_empty());
    assert_eq!(
        ring.stats().unwrap().packets,
        100,
        "the kernel filter rejected the rest"
    );
}

/// A port range needs no raw opcodes: `udp_dst_port_range` (JGE/JGT) runs in the kernel.
#[test]
fn a_port_range_filter_keeps_the_ports_in_range_only() {
    require!();
    let lab = Lab::new().expect("lab");
    let ring = rx(
        &lab,
        RxRing::builder(&lab.b.iface).filter(bpf::udp_dst_port_range(9000..=9009, 262_144)),
    );
    let mut tx = tx(&lab);
    let flows = flows(&lab, 20, |i| 8995 + i as u16); // ports 8995..=9014
    let sent: Vec<Vec<u8>> = (0..400)
        .map(|s| flows[s % 20].frame(s as u64, 120))
        .collect();
    tx.send_batch(sent.iter().map(|f| f.as_slice())).unwrap();
    let got = collect(&ring, 200, Duration::from_millis(500));
    assert_eq!(got.len(), 200);
    let ports: HashSet<u16> = got
        .iter()
        .map(|(b, ..)| u16::from_be_bytes([b[36], b[37]]))
        .collect();
    assert_eq!(ports, (9000..=9009).collect::<HashSet<u16>>());
    assert!(collect(&ring, 1, Duration::from_millis(200)).is_empty());
    assert_eq!(
        ring.stats().unwrap().packets,
        200,
        "the kernel filter rejected the rest"
    );
}

#[test]
fn tx_and_rx_rings_report_unknown_interfaces_by_name() {
    require!();
    let lab = Lab::new().expect("lab");
    let err = lab
        .b
        .run(|| RxRing::builder("zx-nope0").build().unwrap_err())
        .unwrap();
    assert!(err.to_string().contains("zx-nope0"), "{err}");
    let err = lab
        .b
        .run(|| TxRing::builder("zx-nope1").build().unwrap_err())
        .unwrap();
    assert!(err.to_string().contains("zx-nope1"), "{err}");
}

#[test]
fn locked_ring_with_rxhash_fill_reports_one_hash_per_flow() {
    require!();
    let lab = Lab::new().expect("lab");
    let ring = rx(
        &lab,
        RxRing::builder(&lab.b.iface).locked(true).fill_rxhash(true),
    );
    let mut tx = tx(&lab);
    let flows = flows(&lab, 5, |_| 9001);
    let sent: Vec<Vec<u8>> = (0..50).map(|s| flows[s % 5].frame(s as u64, 100)).collect();
    tx.send_batch(sent.iter().map(|f| f.as_slice())).unwrap();
    let mut hashes: HashMap<u16, HashSet<u32>> = HashMap::new();
    let mut n = 0;
    let deadline = Instant::now() + Duration::from_secs(2);
    while n < 50 && Instant::now() < deadline {
        let Some(block) = ring.next_block(Duration::from_millis(50)).unwrap() else {
            continue;
        };
        for p in block.packets() {
            let p = p.unwrap();
            if frame_seq(p.data()).is_some() {
                n += 1;
                let sport = u16::from_be_bytes([p.data()[34], p.data()[35]]);
                hashes.entry(sport).or_default().insert(p.rxhash());
            }
        }
    }
    assert_eq!(n, 50);
    assert_eq!(hashes.len(), 5);
    for (sport, h) in &hashes {
        assert_eq!(h.len(), 1, "flow {sport} has one hash");
        assert_ne!(*h.iter().next().unwrap(), 0, "kernel filled tp_rxhash");
    }
}

#[test]
fn a_vanished_interface_is_an_error_naming_it() {
    require!();
    let lab = Lab::new().expect("lab");
    let ring = rx(&lab, RxRing::builder(&lab.b.iface));
    lab.b
        .ip(&["link", "del", &lab.b.iface])
        .expect("delete the veth");
    let deadline = Instant::now() + Duration::from_secs(2);
    let err = loop {
        match ring.next_block(Duration::from_millis(100)) {
            Err(e) => break e,
            Ok(_) if Instant::now() < deadline => continue,
            Ok(_) => panic!("no error after the interface vanished"),
        }
    };
    assert!(
        matches!(err, zcrx_ring::RingError::InterfaceGone { .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains(&lab.b.iface), "{err}");
}

#[test]
fn a_refused_tx_frame_is_reported_and_reset_and_the_ring_sends_again() {
    require!();
    let lab = Lab::new().expect("lab");
    let ring = rx(&lab, RxRing::builder(&lab.b.iface).promiscuous(true));
    let mut tx = tx(&lab);
    let flow = &flows(&lab, 1, |_| 9000)[0];
    // The veth's MTU is 1500: a 1800-byte frame fits the TX frame (2048) but the kernel
    // refuses it (tpacket_snd: EMSGSIZE, TP_STATUS_WRONG_FORMAT).
    assert!(tx.max_frame_len() >= 1800);
    let batch: Vec<Vec<u8>> = vec![
        flow.frame(0, 100),
        flow.frame(1, 100),
        flow.frame(2, 1800),
        flow.frame(3, 100),
    ];
    let err = tx
        .send_batch(batch.iter().map(|f| f.as_slice()))
        .unwrap_err();
    assert!(
        matches!(&err, zcrx_ring::RingError::TxFrameRefused { index: 2, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("WRONG_FORMAT"), "{err}");
    // Later sends work, from where the kernel stopped.
    let next: Vec<Vec<u8>> = (10..15).map(|s| flow.frame(s, 200)).collect();
    assert_eq!(tx.send_batch(next.iter().map(|f| f.as_slice())).unwrap(), 5);
    // Our own length check: frames before the short one go out, it and the rest do not.
    let short = [flow.frame(20, 100), vec![0u8; 10], flow.frame(21, 100)];
    let err = tx
        .send_batch(short.iter().map(|f| f.as_slice()))
        .unwrap_err();
    assert!(
        matches!(&err, zcrx_ring::RingError::TxFrameRefused { index: 1, .. }),
        "{err:?}"
    );
    let mut seqs: Vec<u64> = collect(&ring, 8, Duration::from_millis(500))
        .iter()
        .filter_map(|g| frame_seq(&g.0))
        .collect();
    seqs.sort_unstable();
    assert_eq!(
        seqs,
        vec![0, 1, 10, 11, 12, 13, 14, 20],
        "exactly the frames reported sent"
    );
}

fn immediate(lab: &Lab, b: zcrx_ring::ImmediateRingBuilder) -> zcrx_ring::ImmediateRing {
    lab.b
        .run(move || b.build())
        .expect("enter netns b")
        .expect("build TPACKET_V2 ring in b")
}

/// Reads the immediate ring until `want` of our frames arrived or nothing came for `idle`.
fn collect_immediate(ring: &mut zcrx_ring::ImmediateRing, want: usize, idle: Duration) -> Vec<Got> {
    collect_with(want, idle, |got| {
        let n = ring
            .poll(Duration::from_millis(50), 64, |data, meta, _link| {
                if frame_seq(data).is_some() {
                    got.push((
                        data.to_vec(),
                        meta.wire_len,
                        meta.vlan_tci,
                        meta.is_truncated(data.len() as u32),
                    ));
                }
            })
            .expect("poll");
        n > 0
    })
}

#[test]
fn immediate_ring_hands_over_every_frame_unchanged_across_wraparounds() {
    require!();
    let lab = Lab::new().expect("lab");
    // 64 frames of ring for 3 000 frames sent in batches of 50: the ring wraps many times.
    let mut ring = immediate(
        &lab,
        zcrx_ring::ImmediateRing::builder(&lab.b.iface).ring_bytes(64 * 2048),
    );
    assert_eq!(ring.frame_count(), 64);
    let mut tx = tx(&lab);
    let fl = flows(&lab, 10, |i| 9000 + i as u16);
    let sent: Vec<Vec<u8>> = (0..3000u64)
        .map(|s| fl[s as usize % 10].frame(s, 60 + (s as usize % 1400)))
        .collect();
    let mut got = Vec::new();
    for chunk in sent.chunks(50) {
        tx.send_batch(chunk.iter().map(|f| f.as_slice()))
            .expect("send");
        got.extend(collect_immediate(&mut ring, 50, Duration::from_secs(2)));
    }
    assert_eq!(got.len(), sent.len(), "every frame, none twice");
    for (bytes, wire_len, vlan, truncated) in &got {
        let seq = frame_seq(bytes).unwrap() as usize;
        assert_eq!(bytes, &sent[seq]);
        assert_eq!(*wire_len as usize, sent[seq].len());
        assert_eq!((*vlan, *truncated), (None, false));
    }
    let seqs: Vec<u64> = got.iter().map(|g| frame_seq(&g.0).unwrap()).collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "in arrival order");
    let stats = ring.stats().expect("stats");
    assert_eq!(stats.drops, 0);
    assert!(stats.packets >= 3000, "{stats:?}");
}

#[test]
fn immediate_ring_truncates_to_its_frame_and_counts_drops_when_full() {
    require!();
    let lab = Lab::new().expect("lab");
    // 256-byte frames: 256 - 52 header bytes of room; 16 frames in all.
    let mut ring = immediate(
        &lab,
        zcrx_ring::ImmediateRing::builder(&lab.b.iface)
            .frame_size(256)
            .ring_bytes(4096),
    );
    assert_eq!(ring.frame_count(), 16);
    let mut tx = tx(&lab);
    let flow = flows(&lab, 1, |_| 9100)[0];
    let sent: Vec<Vec<u8>> = (0..100).map(|s| flow.frame(s, 1000)).collect();
    // Nobody reads while 100 frames arrive: 16 fit, the rest are dropped and counted.
    tx.send_batch(sent.iter().map(|f| f.as_slice()))
        .expect("send");
    std::thread::sleep(Duration::from_millis(200));
    let got = collect_immediate(&mut ring, 100, Duration::from_millis(300));
    assert_eq!(got.len(), 16);
    for (bytes, wire_len, _, truncated) in &got {
        assert!(
            *truncated && *wire_len == 1000 && bytes.len() < 256,
            "{}",
            bytes.len()
        );
        let seq = frame_seq(bytes).unwrap() as usize;
        assert_eq!(bytes[..], sent[seq][..bytes.len()]);
    }
    let stats = ring.stats().expect("stats");
    assert_eq!(stats.drops, 84, "{stats:?}");
    assert!(
        zcrx_ring::ImmediateRing::builder("lo")
            .frame_size(100)
            .build()
            .is_err(),
        "a frame size below 128 is refused"
    );
}
