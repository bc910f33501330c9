//! Every consumer, inline or threaded, zero-copy or copied, sees each packet's direction:
//! on `lo` each UDP datagram is delivered once outgoing and once as received. Needs root;
//! under `CI=true` a skip is a failure.

use std::collections::HashMap;
use std::net::UdpSocket;
use std::sync::Mutex;
use std::time::Duration;

use zcrx_capture::copy::Routine;
use zcrx_capture::{Consumers, Delivered, Delivery, Hooks, Pipeline, PipelineConfig};
use zcrx_ring::{Direction, RxRing};

/// The UDP destination port of an Ethernet/IPv4 frame (loopback's Ethernet header is zeros).
fn udp_dport(frame: &[u8]) -> Option<u16> {
    if frame.len() < 14 + 20 + 8 || frame[12..14] != [0x08, 0x00] || frame[14 + 9] != 17 {
        return None;
    }
    let ihl = usize::from(frame[14] & 0x0f) * 4;
    let udp = frame.get(14 + ihl..14 + ihl + 4)?;
    Some(u16::from_be_bytes([udp[2], udp[3]]))
}

fn directions_on_lo(consumers: Consumers, delivery: Delivery) -> HashMap<Direction, usize> {
    const N: usize = 200;
    let ring = RxRing::builder("lo")
        .block_size(1 << 16)
        .block_count(32)
        .block_timeout(Duration::from_millis(5))
        .build()
        .expect("RX ring on lo");
    let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = rx.local_addr().unwrap().port();
    rx.set_nonblocking(true).unwrap();
    let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
    let seen: Mutex<HashMap<Direction, usize>> = Mutex::new(HashMap::new());
    let pipeline = Pipeline::new(
        &ring,
        PipelineConfig::builder()
            .consumers(consumers)
            .delivery(delivery)
            .build()
            .expect("a valid configuration"),
    );
    let stop = pipeline.stop_token();
    std::thread::scope(|s| {
        let run = s.spawn(|| {
            pipeline.run(
                |_| {
                    let seen = &seen;
                    move |d: &Delivered<'_>| {
                        if udp_dport(d.data()) == Some(port) {
                            *seen.lock().unwrap().entry(d.direction()).or_insert(0) += 1;
                        }
                    }
                },
                Hooks::new(),
            )
        });
        for i in 0..N {
            tx.send_to(&(i as u32).to_be_bytes(), ("127.0.0.1", port))
                .unwrap();
            let mut b = [0u8; 8];
            while rx.recv(&mut b).is_ok() {}
        }
        std::thread::sleep(Duration::from_millis(200));
        stop.stop();
        let stats = run.join().unwrap().expect("pipeline").stats;
        assert_eq!(stats.kernel.expect("live ring").drops, 0, "{stats:?}");
    });
    let got = seen.into_inner().unwrap();
    assert_eq!(got.get(&Direction::Outgoing), Some(&N), "{got:?}");
    assert_eq!(got.get(&Direction::Host), Some(&N), "{got:?}");
    assert_eq!(got.len(), 2, "{got:?}");
    got
}

#[test]
fn inline_zero_copy_consumer_sees_directions() {
    zcrx_ring::require!();
    directions_on_lo(Consumers::Inline, Delivery::ZeroCopy);
}

#[test]
fn threaded_zero_copy_consumers_see_directions() {
    zcrx_ring::require!();
    directions_on_lo(Consumers::threads(2), Delivery::ZeroCopy);
}

#[test]
fn threaded_copy_consumers_see_directions() {
    zcrx_ring::require!();
    directions_on_lo(Consumers::threads(2), Delivery::Copy(Routine::Auto));
}
