//! The live pipeline in a netns lab: TX-ring traffic through an RX ring, stage and consumers.
//! Needs root; under `CI=true` a skip is a failure.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use zcrx_capture::copy::Routine;
use zcrx_capture::{Consumers, Delivered, Delivery, Hooks, Pipeline, PipelineConfig};
use zcrx_ring::frames::{frame_seq, UdpFlow};
use zcrx_ring::lab::Lab;
use zcrx_ring::{RxRing, TxRing};

fn live_run(delivery: Delivery) {
    let lab = Lab::new().expect("lab");
    let iface = lab.b.iface.clone();
    let ring = lab
        .b
        .run(move || {
            RxRing::builder(iface)
                .block_size(256 << 10)
                .block_count(16)
                .build()
        })
        .unwrap()
        .unwrap();
    let iface = lab.a.iface.clone();
    let mut tx = lab
        .a
        .run(move || TxRing::builder(iface).build())
        .unwrap()
        .unwrap();
    let flows: Vec<UdpFlow> = (0..300)
        // Not to b's MAC: dropped by b's stack, seen by the ring.
        .map(|i| UdpFlow::lab(&lab.a, &lab.b, i, 9001, false))
        .collect();
    const K: u64 = 20_000;
    let frames: Vec<Vec<u8>> = (0..K)
        .map(|s| flows[s as usize % flows.len()].frame(s, 64 + (s as usize % 8) * 128))
        .collect();
    let delivered = AtomicU64::new(0);
    let seqs: Mutex<Vec<u64>> = Mutex::new(Vec::new());
    let pipeline = Pipeline::new(
        &ring,
        PipelineConfig::builder()
            .consumers(Consumers::threads(2))
            .delivery(delivery)
            .build()
            .unwrap(),
    );
    let stop = pipeline.stop_token();
    let stats = std::thread::scope(|s| {
        let run = s.spawn(|| {
            pipeline.run(
                |_| {
                    let (delivered, seqs) = (&delivered, &seqs);
                    move |d: &Delivered<'_>| {
                        if let Some(seq) = frame_seq(d.data()) {
                            seqs.lock().unwrap().push(seq);
                            delivered.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                },
                Hooks::new(),
            )
        });
        let sent = tx
            .send_batch(frames.iter().map(|f| f.as_slice()))
            .expect("send");
        assert_eq!(sent as u64, K);
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let drops = ring.stats().unwrap().drops;
            if delivered.load(Ordering::Relaxed) + drops >= K || Instant::now() > deadline {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        stop.stop();
        run.join().unwrap().expect("pipeline").stats
    });
    let kernel = stats.kernel.expect("live ring has kernel stats");
    let got = delivered.load(Ordering::Relaxed);
    let unique: HashSet<u64> = seqs.into_inner().unwrap().into_iter().collect();
    assert_eq!(unique.len() as u64, got, "no packet delivered twice");
    assert_eq!(
        got + kernel.drops,
        K,
        "delivered {got} + kernel drops {} = sent ({stats:?})",
        kernel.drops
    );
    assert!(got > 0);
    assert_eq!(ring.map().blocks_held(), 0);
}

#[test]
fn live_zero_copy_delivered_plus_drops_equals_sent() {
    zcrx_ring::require!();
    live_run(Delivery::ZeroCopy);
}

#[test]
fn live_copy_delivered_plus_drops_equals_sent() {
    zcrx_ring::require!();
    live_run(Delivery::Copy(Routine::Auto));
}
