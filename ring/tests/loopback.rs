//! Rings on `lo`, as an embedder uses them: what loopback delivers (each packet twice, once
//! outgoing and once incoming), `ignore_outgoing` alone and in a fanout group, packet
//! directions, and the block-level `TP_STATUS_LOSING`. They need root; under `CI=true` a
//! skip is a failure.

use std::collections::HashMap;
use std::net::UdpSocket;
use std::time::{Duration, Instant};

use zcrx_ring::{require, Direction, Fanout, RingError, RxRing, RxRingBuilder, TimestampSource};

/// A UDP receiver on 127.0.0.1 (so that the kernel does not answer with ICMP) and a sender.
struct Udp {
    rx: UdpSocket,
    tx: UdpSocket,
    port: u16,
}

impl Udp {
    fn new() -> Udp {
        let rx = UdpSocket::bind("127.0.0.1:0").expect("bind receiver");
        let port = rx.local_addr().unwrap().port();
        let tx = UdpSocket::bind("127.0.0.1:0").expect("bind sender");
        Udp { rx, tx, port }
    }
    fn send(&self, n: usize) {
        for i in 0..n {
            self.tx
                .send_to(&(i as u32).to_be_bytes(), ("127.0.0.1", self.port))
                .expect("send");
            // Keep the receiver's queue from overflowing; its copies are not counted.
            if i % 64 == 63 {
                let mut b = [0u8; 16];
                self.rx.set_nonblocking(true).unwrap();
                while self.rx.recv(&mut b).is_ok() {}
            }
        }
    }
}

/// The UDP destination port of an Ethernet/IPv4 frame (loopback frames carry a zeroed
/// Ethernet header).
fn udp_dport(frame: &[u8]) -> Option<u16> {
    if frame.len() < 14 + 20 + 8 || frame[12..14] != [0x08, 0x00] || frame[14 + 9] != 17 {
        return None;
    }
    let ihl = usize::from(frame[14] & 0x0f) * 4;
    let udp = frame.get(14 + ihl..14 + ihl + 4)?;
    Some(u16::from_be_bytes([udp[2], udp[3]]))
}

fn build(b: RxRingBuilder) -> RxRing {
    b.block_size(1 << 16)
        .block_count(16)
        .block_timeout(Duration::from_millis(5))
        .build()
        .expect("RX ring on lo")
}

/// Reads every ring until nothing of ours came for `idle`; each of our packets' direction.
fn drain(rings: &[&RxRing], port: u16, idle: Duration) -> Vec<Direction> {
    let mut got = Vec::new();
    let mut last = Instant::now();
    while last.elapsed() < idle {
        for ring in rings {
            let Some(block) = ring
                .next_block(Duration::from_millis(5))
                .expect("next_block")
            else {
                continue;
            };
            for p in block.packets() {
                let p = p.expect("kernel block validates");
                if udp_dport(p.data()) == Some(port) {
                    got.push(p.meta().direction());
                    last = Instant::now();
                }
            }
        }
    }
    got
}

fn counts(dirs: &[Direction]) -> HashMap<Direction, usize> {
    let mut m = HashMap::new();
    for d in dirs {
        *m.entry(*d).or_insert(0) += 1;
    }
    m
}

/// Loopback delivers each packet twice: as this host sent it, and as it received it.
#[test]
fn loopback_shows_each_packet_outgoing_and_incoming() {
    require!();
    let ring = build(RxRing::builder("lo"));
    let udp = Udp::new();
    udp.send(300);
    let got = counts(&drain(&[&ring], udp.port, Duration::from_millis(300)));
    assert_eq!(got.get(&Direction::Outgoing), Some(&300), "{got:?}");
    assert_eq!(got.get(&Direction::Host), Some(&300), "{got:?}");
    assert_eq!(got.len(), 2, "{got:?}");
}

#[test]
fn ignore_outgoing_keeps_the_incoming_copy_only() {
    require!();
    let ring = build(RxRing::builder("lo").ignore_outgoing(true));
    let udp = Udp::new();
    udp.send(300);
    let got = counts(&drain(&[&ring], udp.port, Duration::from_millis(300)));
    assert_eq!(got.get(&Direction::Host), Some(&300), "{got:?}");
    assert_eq!(got.len(), 1, "{got:?}");
}

/// A fanout group follows `ignore_outgoing` too (the group's hook needs
/// PACKET_FANOUT_FLAG_IGNORE_OUTGOING): each packet once per group.
#[test]
fn fanout_group_with_ignore_outgoing_sees_each_packet_once() {
    require!();
    let group = (std::process::id() as u16) ^ 0x4a5a;
    let rings: Vec<RxRing> = (0..2)
        .map(|_| {
            build(
                RxRing::builder("lo")
                    .ignore_outgoing(true)
                    .fanout(Fanout::hash(group)),
            )
        })
        .collect();
    let udp = Udp::new();
    udp.send(1600);
    let got = drain(
        &[&rings[0], &rings[1]],
        udp.port,
        Duration::from_millis(300),
    );
    assert_eq!(got.len(), 1600, "{:?}", counts(&got));
    assert!(
        got.iter().all(|d| *d == Direction::Host),
        "{:?}",
        counts(&got)
    );
}

/// The kernel marks the blocks it closes after dropping packets with TP_STATUS_LOSING in
/// the block's status (until PACKET_STATISTICS is read), never in a packet's.
#[test]
fn a_block_closed_after_drops_says_losing() {
    require!();
    // Two one-page blocks, not read while the flood runs: the kernel drops.
    let ring = RxRing::builder("lo")
        .block_size(4096)
        .block_count(2)
        .block_timeout(Duration::from_millis(2))
        .build()
        .expect("RX ring on lo");
    let udp = Udp::new();
    udp.send(400);
    let mut seen = 0;
    let mut losing = 0;
    let until = Instant::now() + Duration::from_secs(2);
    // Hand the full blocks back, then let more packets open (and the timer close) new ones.
    while Instant::now() < until && losing == 0 {
        while let Some(block) = ring
            .next_block(Duration::from_millis(20))
            .expect("next_block")
        {
            seen += 1;
            losing += usize::from(block.view().expect("view").losing());
        }
        udp.send(4);
    }
    let stats = ring.stats().expect("stats");
    assert!(stats.drops > 0, "the ring dropped nothing: {stats:?}");
    assert!(losing > 0, "no block of {seen} said losing; {stats:?}");
}

/// `?` takes a packet's `BlockError` into a `RingError`, and a malformed block is an error
/// the caller sees (not a packet silently left out).
#[test]
fn question_mark_turns_a_packet_error_into_a_ring_error() {
    fn walk(block: &[u8]) -> Result<usize, RingError> {
        let mut n = 0;
        for p in zcrx_ring::BlockView::parse(block)?.packets() {
            n += p?.data().len();
        }
        Ok(n)
    }
    let ring = zcrx_ring::SyntheticRing::builder()
        .build(vec![zcrx_ring::Frame::new(vec![7u8; 60]); 3])
        .unwrap();
    let block = ring.next_block().expect("a block");
    assert_eq!(walk(block.view().unwrap().bytes()).unwrap(), 180);
    // One packet whose tp_mac (8) points into its own header.
    let mut bad = vec![0u8; 4096];
    bad[12..16].copy_from_slice(&1u32.to_ne_bytes()); // num_pkts
    bad[16..20].copy_from_slice(&48u32.to_ne_bytes()); // offset_to_first_pkt
    bad[20..24].copy_from_slice(&256u32.to_ne_bytes()); // blk_len
    bad[48 + 24..48 + 26].copy_from_slice(&8u16.to_ne_bytes()); // tp_mac
    let err = walk(&bad).unwrap_err();
    assert!(
        matches!(
            &err,
            RingError::Malformed(zcrx_ring::BlockError::BadMac { mac: 8, .. })
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("tp_mac 8"), "{err}");
}

/// Every timestamp source is accepted by the kernel; loopback has no hardware clock, so no
/// packet says it has a hardware stamp, and every stamp is the time it was sent: after the
/// sending began, before it was read (however long a loaded host took in between).
#[test]
fn each_timestamp_source_is_set_and_loopback_falls_back_to_software() {
    require!();
    for source in TimestampSource::ALL {
        let ring = build(RxRing::builder("lo").timestamp_source(source));
        let udp = Udp::new();
        let now = || {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        };
        let before = now();
        udp.send(3);
        let mut seen = 0;
        let until = Instant::now() + Duration::from_secs(2);
        while seen < 6 && Instant::now() < until {
            let Some(block) = ring.next_block(Duration::from_millis(20)).unwrap() else {
                continue;
            };
            let read = now();
            for p in block.packets() {
                let p = p.unwrap();
                if udp_dport(p.data()) != Some(udp.port) {
                    continue;
                }
                seen += 1;
                let m = p.meta();
                // No hardware clock on loopback: a software stamp, or none (the kernel then
                // takes the time of the copy into the ring).
                assert!(
                    matches!(m.timestamp_source(), None | Some(TimestampSource::Software)),
                    "{source}: status {:#x}",
                    m.status
                );
                // (A second's slack either way: the wall clock may be adjusted meanwhile.)
                assert!(
                    m.ts_ns >= before - 1_000_000_000 && m.ts_ns <= read + 1_000_000_000,
                    "{source}: stamp {} vs sent from {before}, read at {read}",
                    m.ts_ns
                );
            }
        }
        assert_eq!(seen, 6, "{source}");
    }
}
