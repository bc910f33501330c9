//! Flows counted in the kernel (`kernel_flows`) against the ring's flow table on the same lab
//! traffic: UDP and TCP in 198.18.0.0/15, both directions seen at the receiver's veth (tcx
//! ingress and egress there, the ring's packets in and out), and the received direction at
//! its XDP hook. Needs root; under `CI=true` a skip is a failure.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use zcrx_capture::flowcache::{ipproto, FlowKey, FlowRecord, FlowTableConfig};
use zcrx_capture::{
    Consumers, Delivered, Hooks, Pipeline, PipelineConfig, PipelineStats, Steering,
};
use zcrx_kflows::{Hook, KernelFlows, KernelFlowsConfig, KernelFlowsError};
use zcrx_ring::lab::{Lab, Need};
use zcrx_ring::RxRing;

/// A lab with the in-kernel flow counter attached to b's veth with `config`.
fn lab_counting(config: KernelFlowsConfig) -> (Lab, KernelFlows) {
    let lab = Lab::new().expect("lab");
    let iface = lab.b.iface.clone();
    let kernel = lab
        .b
        .run(|| KernelFlows::attach(&iface, config))
        .unwrap()
        .unwrap_or_else(|e| panic!("{e}"));
    (lab, kernel)
}

/// The ring's flow table on b's veth (one consumer, symmetric flows) while `traffic` runs,
/// stopped 300 ms after it: what `traffic` returned, the flows' records and the pipeline's
/// counts.
fn on_the_ring<T: Send>(
    lab: &Lab,
    traffic: impl FnOnce() -> T + Send,
) -> (T, Vec<FlowRecord>, PipelineStats) {
    let iface = lab.b.iface.clone();
    let ring = lab
        .b
        .run(|| {
            RxRing::builder(iface.clone())
                .block_size(1 << 20)
                .block_count(16)
                .build()
        })
        .unwrap()
        .unwrap();
    let config = PipelineConfig::builder()
        .consumers(Consumers::threads(1))
        .steering(Steering::Flows(
            FlowTableConfig::with_capacity(1024).with_symmetric(true),
        ))
        .build()
        .unwrap();
    let pipeline = Pipeline::new(&ring, config);
    let stop = pipeline.stop_token();
    let records: Mutex<Vec<FlowRecord>> = Mutex::new(Vec::new());
    let (out, stats) = std::thread::scope(|s| {
        let run = s.spawn(|| {
            pipeline.run(
                |_| |_: &Delivered<'_>| {},
                Hooks::new().on_flow_end(|r| records.lock().unwrap().push(*r)),
            )
        });
        let out = traffic();
        std::thread::sleep(Duration::from_millis(300));
        stop.stop();
        (out, run.join().unwrap().expect("pipeline").stats)
    });
    (out, records.into_inner().unwrap(), stats)
}

/// GRO off on b's veth (`ethtool -K IFACE gro off` in b's namespace).
fn gro_off(lab: &Lab) {
    let o = std::process::Command::new("ip")
        .args([
            "netns",
            "exec",
            &lab.b.netns,
            "ethtool",
            "-K",
            &lab.b.iface,
            "gro",
            "off",
        ])
        .output()
        .expect("running ip netns exec ethtool");
    assert!(
        o.status.success(),
        "ethtool -K {} gro off: {}",
        lab.b.iface,
        String::from_utf8_lossy(&o.stderr)
    );
}

/// `counts` with only the directions `receiver` received: a direction whose sender (the
/// canonical key's source for the first, its destination for the second) is `receiver`
/// counts 0.
fn received_by(mut counts: Counts, receiver: IpAddr) -> Counts {
    for (k, (p, b)) in counts.iter_mut() {
        for (d, sender) in [k.src(), k.dst()].into_iter().enumerate() {
            if sender == receiver {
                p[d] = 0;
                b[d] = 0;
            }
        }
    }
    counts.retain(|_, (p, _)| p[0] + p[1] > 0);
    counts
}

/// Per flow (canonical key): packets and bytes per direction.
type Counts = BTreeMap<FlowKey, ([u64; 2], [u64; 2])>;

fn counts(records: &[FlowRecord]) -> Counts {
    let mut m = Counts::new();
    for r in records {
        if !matches!(r.stats.key.proto(), ipproto::UDP | ipproto::TCP) {
            continue;
        }
        let e = m.entry(r.stats.key).or_default();
        for d in 0..2 {
            e.0[d] += r.stats.packets[d];
            e.1[d] += r.stats.bytes[d];
        }
    }
    m
}

/// UDP datagrams from `flows` source sockets in a to one socket in b (`per_flow` each, of
/// growing sizes) and one TCP connection (200 KB one way, an answer back); returns the
/// datagrams b's socket received.
fn traffic(lab: &Lab, flows: usize, per_flow: usize) -> usize {
    let to: SocketAddr = (lab.b.ip, 9000).into();
    let rx = lab
        .b
        .run(|| UdpSocket::bind(to))
        .unwrap()
        .expect("bind in b");
    rx.set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let listener = lab
        .b
        .run(|| TcpListener::bind((lab.b.ip, 9100)))
        .unwrap()
        .expect("listen in b");
    let senders: Vec<UdpSocket> = (0..flows)
        .map(|_| {
            lab.a
                .run(|| UdpSocket::bind((lab.a.ip, 0)))
                .unwrap()
                .expect("bind in a")
        })
        .collect();
    let mut received = 0;
    let mut buf = [0u8; 2048];
    for i in 0..per_flow {
        for s in &senders {
            s.send_to(&vec![i as u8; 20 + (i * 37) % 1200], to)
                .expect("send");
        }
        // Drain as we go so the socket's buffer never drops.
        while received < (i + 1) * flows {
            match rx.recv(&mut buf) {
                Ok(_) => received += 1,
                Err(_) => break,
            }
        }
    }
    std::thread::scope(|s| {
        let server = s.spawn(|| {
            let (mut c, _) = listener.accept().expect("accept");
            let mut got = Vec::new();
            c.read_to_end(&mut got).expect("read");
            c.write_all(&got[..1000]).expect("answer");
            got.len()
        });
        let mut c = lab
            .a
            .run(|| TcpStream::connect((lab.b.ip, 9100)))
            .unwrap()
            .expect("connect");
        c.write_all(&vec![7u8; 200_000]).expect("write");
        c.shutdown(std::net::Shutdown::Write).unwrap();
        let mut back = Vec::new();
        c.read_to_end(&mut back).expect("read answer");
        assert_eq!(back.len(), 1000);
        assert_eq!(server.join().unwrap(), 200_000);
    });
    received
}

/// Sockets' UDP and TCP between a and b, counted in the kernel on b's veth at `hook` (tcx:
/// ingress and egress; XDP: what b receives) and on the ring at once: the same flows, packets
/// and bytes in each direction the hook sees.
fn kernel_flows_match_the_ring(hook: Hook) {
    let config = match hook {
        Hook::Xdp => KernelFlowsConfig::new().hook(Hook::Xdp),
        _ => KernelFlowsConfig::new().egress(true),
    };
    let (lab, mut kernel) = lab_counting(config);
    if hook == Hook::Xdp {
        // XDP counts each frame as it arrives, the ring each packet after GRO, which (where
        // it is on) can merge a burst of TCP segments into one: off, the ring sees the
        // frames XDP saw.
        gro_off(&lab);
    }
    let (received, records, stats) = on_the_ring(&lab, || traffic(&lab, 8, 40));
    assert_eq!(received, 8 * 40, "every datagram reached b's socket");
    let ring_drops = stats.kernel.map_or(0, |k| k.drops);
    assert_eq!(ring_drops, 0, "the ring dropped packets: no comparison");
    let from_kernel = kernel.flush().expect("flush");
    let counters = kernel.counters().expect("counters");
    let ring_flows = match hook {
        Hook::Xdp => received_by(counts(&records), IpAddr::V4(lab.b.ip)),
        _ => counts(&records),
    };
    let kernel_flows = counts(&from_kernel);
    assert_eq!(
        kernel_flows.len(),
        9,
        "8 UDP flows and 1 TCP: {kernel_flows:#?}"
    );
    assert_eq!(kernel_flows, ring_flows);
    for (k, (p, _)) in &kernel_flows {
        if k.proto() == ipproto::UDP {
            assert_eq!(p[0] + p[1], 40, "{k}");
        }
    }
    assert_eq!(counters.overflow, 0);
    if hook == Hook::Tcx {
        assert_eq!(
            counters.packets(),
            stats.packets,
            "the program saw what the ring saw ({counters:?})"
        );
    }
    let tcp = kernel_flows
        .iter()
        .find(|(k, _)| k.proto() == ipproto::TCP)
        .unwrap();
    eprintln!(
        "{} ({hook:?}) = ring: {} flows; TCP packets {:?} bytes {:?}; {} packets seen, {} not a flow",
        kernel.attached_at(),
        kernel_flows.len(),
        tcp.1 .0,
        tcp.1 .1,
        counters.packets(),
        counters.not_a_flow
    );
}

#[test]
fn kernel_flows_match_the_ring_and_every_packet_passes() {
    zcrx_ring::require!();
    kernel_flows_match_the_ring(Hook::Tcx);
}

/// At XDP the program sees the frames a's sockets send (veth runs XDP in its NAPI once a
/// program is attached), before b's stack: the received direction as the ring counts it.
#[test]
fn xdp_counts_what_the_ring_receives_and_every_frame_passes() {
    zcrx_ring::require!(Need::Privileges, Need::Tool("ethtool"));
    kernel_flows_match_the_ring(Hook::Xdp);
}

/// An interface takes one XDP program: a second counter at XDP on it is refused with an
/// error that says so, and the first goes on counting; tcx beside XDP is fine.
#[test]
fn a_second_xdp_program_is_refused() {
    zcrx_ring::require!();
    let (lab, mut first) = lab_counting(KernelFlowsConfig::new().hook(Hook::Xdp));
    assert_eq!(first.attached_at(), "XDP (native)", "a veth has native XDP");
    let iface = lab.b.iface.clone();
    let e = lab
        .b
        .run(|| KernelFlows::attach(&iface, KernelFlowsConfig::new().hook(Hook::Xdp)))
        .unwrap()
        .unwrap_err();
    assert!(matches!(e, KernelFlowsError::XdpInUse { .. }), "{e}");
    assert!(e.to_string().contains("has an XDP program already"), "{e}");
    let mut tcx = lab
        .b
        .run(|| KernelFlows::attach(&iface, KernelFlowsConfig::new()))
        .unwrap()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(traffic(&lab, 2, 5), 10);
    let udp = |r: Vec<FlowRecord>| -> u64 {
        r.iter()
            .filter(|r| r.stats.key.proto() == ipproto::UDP)
            .map(|r| r.stats.total_packets())
            .sum()
    };
    assert_eq!(udp(first.flush().unwrap()), 10);
    assert_eq!(udp(tcx.flush().unwrap()), 10);
}

#[test]
fn a_full_map_counts_overflow_and_packets_still_pass() {
    zcrx_ring::require!();
    let (lab, mut kernel) = lab_counting(KernelFlowsConfig::new().max_entries(2));
    let received = traffic(&lab, 6, 10);
    assert_eq!(received, 60, "every datagram reached b's socket");
    let c = kernel.counters().unwrap();
    let flows = kernel.flush().unwrap();
    let counted: u64 = flows.iter().map(|r| r.stats.total_packets()).sum();
    assert!(flows.len() <= 2, "{flows:?}");
    assert_eq!(counted, c.counted);
    assert!(c.overflow >= 40, "{c:?}: 4 of 6 UDP flows had no room");
    assert_eq!(c.packets(), c.counted + c.not_a_flow + c.overflow);
    eprintln!("full map: {c:?}");
}

#[test]
fn attaching_to_a_missing_interface_is_an_error() {
    zcrx_ring::require!();
    let e = KernelFlows::attach("zcrx-none0", KernelFlowsConfig::new()).unwrap_err();
    assert!(e.to_string().contains("zcrx-none0"), "{e}");
}

/// A UDP/IPv4 frame from 198.18.0.1:`sport` to 198.18.0.2:9000 with `payload` bytes,
/// optionally with two VLAN tags (802.1ad outer `outer`, 802.1Q inner 20).
fn udp4(sport: u16, payload: usize, qinq: Option<u16>) -> Vec<u8> {
    use etherparse::{PacketBuilder, VlanId};
    let eth = PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], zcrx_ring::frames::OTHER_MAC);
    let body = vec![0x5au8; payload];
    let mut out = Vec::new();
    match qinq {
        Some(outer) => {
            let b = eth
                .double_vlan(
                    VlanId::try_new(outer).unwrap(),
                    VlanId::try_new(20).unwrap(),
                )
                .ipv4([198, 18, 0, 1], [198, 18, 0, 2], 64)
                .udp(sport, 9000);
            b.write(&mut out, &body).unwrap();
        }
        None => {
            let b = eth
                .ipv4([198, 18, 0, 1], [198, 18, 0, 2], 64)
                .udp(sport, 9000);
            b.write(&mut out, &body).unwrap();
        }
    }
    out
}

/// `frame` (UDP/IPv4 after a 14-byte Ethernet header) with 8 bytes of IPv4 options (NOPs
/// and an end of list) after its fixed header.
fn with_ip_options(mut frame: Vec<u8>) -> Vec<u8> {
    frame.splice(34..34, [1u8, 1, 1, 1, 1, 1, 1, 0]);
    frame[14] = 0x47; // IHL 7
    let total = u16::from_be_bytes([frame[16], frame[17]]) + 8;
    frame[16..18].copy_from_slice(&total.to_be_bytes());
    frame
}

/// `frame` (UDP/IPv4) as a fragment: `offset` in 8-byte units, more fragments or not.
fn fragment(mut frame: Vec<u8>, offset: u16, more: bool) -> Vec<u8> {
    let field = offset | if more { 0x2000 } else { 0 };
    frame[20..22].copy_from_slice(&field.to_be_bytes());
    frame
}

/// IPv6 extension headers for [`udp6`]: hop-by-hop, destination options and routing (8
/// bytes each), AH (12 bytes), a first fragment (more follow) and a later one (offset 80
/// bytes: what follows is not a UDP header).
const HOP_BY_HOP: u8 = 0;
const DST_OPTS: u8 = 60;
const ROUTING: u8 = 43;
const AH: u8 = 51;
const FIRST_FRAGMENT: u8 = 44;
const LATER_FRAGMENT: u8 = 144; // a fragment header, with an offset (not a protocol number)

/// A UDP/IPv6 frame with the extension headers `exts` (in order) before UDP.
fn udp6_ext(sport: u16, exts: &[u8]) -> Vec<u8> {
    let mut out = udp6(sport, false);
    let mut headers = Vec::new();
    for (i, &e) in exts.iter().enumerate() {
        let next = match exts.get(i + 1) {
            Some(&LATER_FRAGMENT) => 44,
            Some(&n) => n,
            None => 17,
        };
        let h: Vec<u8> = match e {
            // A PadN option of 4 bytes of padding.
            HOP_BY_HOP | DST_OPTS => vec![next, 0, 1, 4, 0, 0, 0, 0],
            // Type 0, no segment left, reserved.
            ROUTING => vec![next, 0, 0, 0, 0, 0, 0, 0],
            // Length 1 ((1 + 2) x 4 = 12 bytes): SPI, sequence number, 0 bytes of ICV.
            AH => vec![next, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1],
            FIRST_FRAGMENT => vec![next, 0, 0, 1, 0, 0, 0, 9],
            LATER_FRAGMENT => vec![next, 0, 0, 80, 0, 0, 0, 9],
            _ => unreachable!("not an extension header of this test"),
        };
        headers.extend(h);
    }
    out[20] = match exts.first() {
        Some(&LATER_FRAGMENT) => 44,
        Some(&e) => e,
        None => 17,
    };
    let len = u16::from_be_bytes([out[18], out[19]]) + headers.len() as u16;
    out[18..20].copy_from_slice(&len.to_be_bytes());
    out.splice(54..54, headers);
    out
}

/// A UDP/IPv6 frame, with a hop-by-hop options header before UDP if `hop_by_hop`.
fn udp6(sport: u16, hop_by_hop: bool) -> Vec<u8> {
    let a = [0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
    let b = [0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];
    let mut out = Vec::new();
    etherparse::PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], zcrx_ring::frames::OTHER_MAC)
        .ipv6(a, b, 64)
        .udp(sport, 9000)
        .write(&mut out, &[7u8; 100])
        .unwrap();
    if hop_by_hop {
        // Next header UDP, length 0 (8 bytes), a PadN option of 4 bytes of padding.
        out.splice(54..54, [17u8, 0, 1, 4, 0, 0, 0, 0]);
        out[20] = 0; // the fixed header's next header: hop-by-hop
        let len = u16::from_be_bytes([out[18], out[19]]) + 8;
        out[18..20].copy_from_slice(&len.to_be_bytes());
    }
    out
}

/// Frames sent raw (a TX ring, to a MAC that is not b's): two VLAN tags, IPv4 options,
/// first and later fragments, IPv6 with and without extension headers (hop-by-hop; five of
/// them with AH and a first fragment; a later fragment after routing; nine, one more than
/// the flow cache walks) — the same flows, packets and bytes at `hook` as the ring's.
fn crafted_headers_count_as_on_the_ring(hook: Hook) {
    let (lab, mut kernel) = lab_counting(KernelFlowsConfig::new().hook(hook));
    let mut frames = Vec::new();
    for i in 0..10 {
        frames.push(udp4(5000, 40 + i, Some(100)));
        frames.push(with_ip_options(udp4(5001, 60 + i, None)));
        frames.push(fragment(udp4(5002, 300, None), 0, true));
        frames.push(fragment(udp4(5002, 200, None), 37, false));
        frames.push(udp6(5003, false));
        frames.push(udp6(5004, true));
        frames.push(udp6_ext(
            5005,
            &[HOP_BY_HOP, DST_OPTS, ROUTING, AH, FIRST_FRAGMENT],
        ));
        frames.push(udp6_ext(5006, &[ROUTING, LATER_FRAGMENT]));
        // More extension headers than the flow cache walks: not a flow, on either side.
        frames.push(udp6_ext(5007, &[DST_OPTS; 9]));
    }
    let a = lab.a.iface.clone();
    let mut tx = lab
        .a
        .run(move || zcrx_ring::TxRing::builder(a).build())
        .unwrap()
        .unwrap();
    let ((), records, stats) = on_the_ring(&lab, || {
        assert_eq!(
            tx.send_batch(frames.iter().map(|f| f.as_slice())).unwrap(),
            frames.len()
        );
    });
    let all = |r: &[FlowRecord]| -> BTreeMap<FlowKey, ([u64; 2], [u64; 2])> {
        r.iter()
            .map(|r| (r.stats.key, (r.stats.packets, r.stats.bytes)))
            .collect()
    };
    let ring_flows = all(&records);
    let kernel_flows = all(&kernel.flush().unwrap());
    let c = kernel.counters().unwrap();
    assert_eq!(stats.packets, 90, "{stats:?}");
    assert_eq!(c.packets(), 90, "{c:?}");
    assert_eq!(c.not_a_flow, 10, "nine extension headers: {c:?}");
    // 5000-5005 and their later fragments (IPv4's, IPv6's).
    assert_eq!(ring_flows.len(), 8, "{ring_flows:#?}");
    assert_eq!(kernel_flows, ring_flows);
    assert!(kernel_flows.keys().any(|k| k.vlan() == Some(100)));
    assert!(kernel_flows
        .keys()
        .any(|k| k.is_later_fragment() && k.src().is_ipv6()));
    assert!(kernel_flows.keys().any(|k| k.sport() == 5005));
    eprintln!(
        "crafted headers at {}: {} flows as on the ring, {c:?}",
        kernel.attached_at(),
        kernel_flows.len()
    );
}

#[test]
fn crafted_headers_count_as_on_the_ring_at_tcx() {
    zcrx_ring::require!();
    crafted_headers_count_as_on_the_ring(Hook::Tcx);
}

/// At XDP the outer tag is still in the frame (nothing stripped it): the key's VLAN is the
/// same as at tcx. The frames come from a packet socket on the peer.
#[test]
fn crafted_headers_count_as_on_the_ring_at_xdp() {
    zcrx_ring::require!();
    crafted_headers_count_as_on_the_ring(Hook::Xdp);
}

/// A flow idle past its timeout ends at the next `poll` (its map entries deleted: a packet
/// after it starts a new flow), not before; `flush` ends the rest.
#[test]
fn idle_flows_end_and_leave_the_map() {
    zcrx_ring::require!();
    let mut timeouts = zcrx_capture::flowcache::Timeouts::default();
    timeouts.udp = Duration::from_millis(300);
    let (lab, mut kernel) = lab_counting(KernelFlowsConfig::new().timeouts(timeouts));
    let a = lab.a.iface.clone();
    let mut tx = lab
        .a
        .run(move || zcrx_ring::TxRing::builder(a).build())
        .unwrap()
        .unwrap();
    let mut send = |n: usize| {
        let frames: Vec<Vec<u8>> = (0..n).map(|i| udp4(6000, 50 + i, None)).collect();
        tx.send_batch(frames.iter().map(|f| f.as_slice())).unwrap();
        std::thread::sleep(Duration::from_millis(50));
    };
    let sent = Instant::now();
    send(5);
    let mut ended = kernel.poll().unwrap();
    // Not idle yet when less than the timeout has passed since the packets left; a loaded
    // host can take longer than that between the send and the poll, and then the flow may
    // end at this poll already (as it should).
    if sent.elapsed() < timeouts.udp {
        assert!(ended.is_empty(), "not idle yet");
    }
    if ended.is_empty() {
        assert_eq!(kernel.active().unwrap()[0].total_packets(), 5);
    }
    std::thread::sleep(Duration::from_millis(500));
    ended.extend(kernel.poll().unwrap());
    assert_eq!(ended.len(), 1);
    assert_eq!(ended[0].end, zcrx_capture::flowcache::EndReason::Idle);
    assert_eq!(ended[0].stats.total_packets(), 5);
    assert!(kernel.active().unwrap().is_empty(), "the entry was deleted");
    send(3);
    let rest = kernel.flush().unwrap();
    assert_eq!(rest.len(), 1);
    assert_eq!(
        rest[0].stats.total_packets(),
        3,
        "a new flow after the delete"
    );
}

/// The active timeout: a flow sending across two timeouts is reported at the polls after
/// each (`EndReason::Active`, the packets and bytes since the last report), its last packets
/// at `flush`; the records add up to what was sent.
#[test]
fn long_flows_are_reported_every_active_timeout() {
    use zcrx_capture::flowcache::EndReason;
    zcrx_ring::require!();
    let mut timeouts = zcrx_capture::flowcache::Timeouts::default();
    timeouts.active = Some(Duration::from_millis(300));
    let (lab, mut kernel) = lab_counting(KernelFlowsConfig::new().timeouts(timeouts));
    let a = lab.a.iface.clone();
    let mut tx = lab
        .a
        .run(move || zcrx_ring::TxRing::builder(a).build())
        .unwrap()
        .unwrap();
    // IP octets of udp4(_, payload, None): 20 + 8 + payload.
    let mut sent = (0u64, 0u64);
    let mut send = |n: usize, from: usize| {
        let frames: Vec<Vec<u8>> = (from..from + n).map(|i| udp4(6100, 50 + i, None)).collect();
        assert_eq!(
            tx.send_batch(frames.iter().map(|f| f.as_slice())).unwrap(),
            n
        );
        sent.0 += n as u64;
        sent.1 += frames.iter().map(|f| f.len() as u64 - 14).sum::<u64>();
        std::thread::sleep(Duration::from_millis(50));
    };
    let started = Instant::now();
    send(5, 0);
    let mut first = kernel.poll().unwrap();
    // Younger than the timeout, when less than it has passed since the first packet left (a
    // loaded host can take longer than that before this poll: then it may report here).
    if started.elapsed() < Duration::from_millis(300) {
        assert!(first.is_empty(), "younger than the timeout: {first:?}");
    }
    std::thread::sleep(Duration::from_millis(350));
    first.extend(kernel.poll().unwrap());
    assert_eq!(first.len(), 1, "{first:?}");
    assert_eq!(first[0].end, EndReason::Active);
    assert_eq!(first[0].stats.total_packets(), 5);
    assert!(
        kernel.poll().unwrap().is_empty(),
        "nothing new since the report"
    );
    send(4, 5);
    std::thread::sleep(Duration::from_millis(350));
    let second = kernel.poll().unwrap();
    assert_eq!(second.len(), 1, "{second:?}");
    assert_eq!(second[0].end, EndReason::Active);
    assert_eq!(second[0].stats.total_packets(), 4);
    assert!(second[0].stats.first_ns > first[0].stats.last_ns);
    send(3, 9);
    let last = kernel.flush().unwrap();
    assert_eq!(last.len(), 1, "{last:?}");
    assert_eq!(last[0].end, EndReason::Flush);
    assert_eq!(last[0].stats.total_packets(), 3);
    let all: Vec<&FlowRecord> = first.iter().chain(&second).chain(&last).collect();
    let packets: u64 = all.iter().map(|r| r.stats.total_packets()).sum();
    let bytes: u64 = all.iter().map(|r| r.stats.total_bytes()).sum();
    assert_eq!(
        (packets, bytes),
        sent,
        "the reports add up to what was sent"
    );
    for r in &all {
        assert!(r.stats.first_ns <= r.stats.last_ns, "{r:?}");
    }
    eprintln!("active timeout: 5 + 4 + 3 packets, {bytes} bytes, as sent");
}

/// Reports while a flow sends without pause lose no packet: a sender in a, polls every
/// 20 ms with a 100 ms active timeout; the records' packets add up to the datagrams b's
/// socket received.
#[test]
fn active_reports_lose_no_packet_of_a_busy_flow() {
    use zcrx_capture::flowcache::EndReason;
    zcrx_ring::require!();
    let mut timeouts = zcrx_capture::flowcache::Timeouts::default();
    timeouts.active = Some(Duration::from_millis(100));
    let (lab, mut kernel) = lab_counting(KernelFlowsConfig::new().timeouts(timeouts));
    let to: SocketAddr = (lab.b.ip, 9200).into();
    let rx = lab.b.run(|| UdpSocket::bind(to)).unwrap().unwrap();
    rx.set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let tx = lab
        .a
        .run(|| UdpSocket::bind((lab.a.ip, 0)))
        .unwrap()
        .unwrap();
    const N: usize = 3000;
    let mut records = Vec::new();
    let received = std::thread::scope(|s| {
        let receiver = s.spawn(|| {
            let mut buf = [0u8; 2048];
            let mut n = 0;
            while rx.recv(&mut buf).is_ok() {
                n += 1;
            }
            n
        });
        let sender = s.spawn(|| {
            for i in 0..N {
                tx.send_to(&[i as u8; 64], to).expect("send");
                if i % 10 == 0 {
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
        });
        while !sender.is_finished() {
            records.extend(kernel.poll().unwrap());
            std::thread::sleep(Duration::from_millis(20));
        }
        sender.join().unwrap();
        receiver.join().unwrap()
    });
    records.extend(kernel.flush().unwrap());
    let udp: Vec<&FlowRecord> = records
        .iter()
        .filter(|r| r.stats.key.proto() == ipproto::UDP)
        .collect();
    let active = udp.iter().filter(|r| r.end == EndReason::Active).count();
    let packets: u64 = udp.iter().map(|r| r.stats.total_packets()).sum();
    let bytes: u64 = udp.iter().map(|r| r.stats.total_bytes()).sum();
    assert_eq!(received, N, "every datagram reached b's socket");
    assert!(active >= 2, "{active} active reports");
    assert_eq!(packets, N as u64, "{} records", udp.len());
    assert_eq!(bytes, N as u64 * (20 + 8 + 64));
    eprintln!(
        "busy flow: {} records ({active} active), {packets} packets = {N} sent",
        udp.len()
    );
}
