//! Flows counted in the kernel (`kernel_flows`) against the ring's flow table on the same lab
//! traffic: UDP and TCP in 198.18.0.0/15, both directions seen at the receiver's veth (tcx
//! ingress and egress there, the ring's packets in and out). Needs root; under `CI=true` a
//! skip is a failure.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::Mutex;
use std::time::Duration;

use zcrx_capture::flowcache::{ipproto, FlowKey, FlowRecord, FlowTableConfig};
use zcrx_capture::kernel_flows::{KernelFlows, KernelFlowsConfig};
use zcrx_capture::{Consumers, Delivered, Hooks, Pipeline, PipelineConfig, Steering};
use zcrx_ring::lab::Lab;
use zcrx_ring::RxRing;

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

#[test]
fn kernel_flows_match_the_ring_and_every_packet_passes() {
    zcrx_ring::require!();
    let lab = Lab::new().expect("lab");
    let iface = lab.b.iface.clone();
    let mut kernel = lab
        .b
        .run(|| KernelFlows::attach(&iface, KernelFlowsConfig::new().egress(true)))
        .unwrap()
        .unwrap_or_else(|e| panic!("{e}"));
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
    let (received, stats) = std::thread::scope(|s| {
        let run = s.spawn(|| {
            pipeline.run(
                |_| |_: &Delivered<'_>| {},
                Hooks::new().on_flow_end(|r| records.lock().unwrap().push(*r)),
            )
        });
        let received = traffic(&lab, 8, 40);
        std::thread::sleep(Duration::from_millis(300));
        stop.stop();
        (received, run.join().unwrap().expect("pipeline").stats)
    });
    assert_eq!(received, 8 * 40, "every datagram reached b's socket");
    let ring_drops = stats.kernel.map_or(0, |k| k.drops);
    assert_eq!(ring_drops, 0, "the ring dropped packets: no comparison");
    let from_kernel = kernel.flush().expect("flush");
    let counters = kernel.counters().expect("counters");
    let ring_flows = counts(&records.into_inner().unwrap());
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
    assert_eq!(
        counters.packets(),
        stats.packets,
        "the program saw what the ring saw ({counters:?})"
    );
    let tcp = kernel_flows
        .iter()
        .find(|(k, _)| k.proto() == ipproto::TCP)
        .unwrap();
    eprintln!(
        "kernel = ring: {} flows; TCP packets {:?} bytes {:?}; {} packets seen, {} not a flow",
        kernel_flows.len(),
        tcp.1 .0,
        tcp.1 .1,
        counters.packets(),
        counters.not_a_flow
    );
}

#[test]
fn a_full_map_counts_overflow_and_packets_still_pass() {
    zcrx_ring::require!();
    let lab = Lab::new().expect("lab");
    let iface = lab.b.iface.clone();
    let mut kernel = lab
        .b
        .run(|| KernelFlows::attach(&iface, KernelFlowsConfig::new().max_entries(2)))
        .unwrap()
        .unwrap_or_else(|e| panic!("{e}"));
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
