//! The async receive path (feature `tokio`) in the netns lab: a TX ring in namespace `a`
//! sends over a veth pair to an `AsyncRxRing` in namespace `b`. They need root; under
//! `CI=true` a skip is a failure.
#![cfg(feature = "tokio")]

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use zcrx_ring::frames::{frame_seq, UdpFlow};
use zcrx_ring::lab::Lab;
use zcrx_ring::{require, AsyncRxRing, Block, RxRing, RxRingBuilder, TxRing};

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

/// `k` frames over 64 flows, numbered from `from`.
fn frames(lab: &Lab, from: usize, k: usize) -> Vec<Vec<u8>> {
    let flows: Vec<UdpFlow> = (0..64)
        .map(|i| UdpFlow::lab(&lab.a, &lab.b, i, 9001, false))
        .collect();
    (from..from + k)
        .map(|s| flows[s % flows.len()].frame(s as u64, 60 + (s * 37) % 900))
        .collect()
}

fn send(tx: &mut TxRing, frames: &[Vec<u8>]) {
    let sent = tx
        .send_batch(frames.iter().map(|f| f.as_slice()))
        .expect("send");
    assert_eq!(sent, frames.len());
}

/// Our frames' sequence numbers in a block.
fn seqs(block: &Block<'_>) -> Vec<u64> {
    block
        .packets()
        .map(|p| p.expect("kernel block validates"))
        .filter_map(|p| frame_seq(p.data()))
        .collect()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn every_frame_sent_arrives_once_through_the_stream_of_batches() {
    require!();
    let lab = Lab::new().expect("lab");
    let ring = rx(
        &lab,
        RxRing::builder(&lab.b.iface)
            .block_size(256 << 10)
            .block_count(64),
    );
    let mut tx = tx(&lab);
    const K: usize = 20_000;
    let sent = frames(&lab, 0, K);
    let (got, stats) = runtime().block_on(async move {
        let ring = Arc::new(AsyncRxRing::new(ring).expect("register"));
        let reader = tokio::spawn({
            let batches = ring.clone().batches();
            async move {
                let mut got = Vec::new();
                let mut batches = std::pin::pin!(batches);
                while got.len() < K {
                    let next = tokio::time::timeout(Duration::from_secs(2), batches.next());
                    let Ok(Some(batch)) = next.await else { break };
                    for p in batch.expect("a good block").packets {
                        if let Some(seq) = frame_seq(&p.data) {
                            assert_eq!(p.data.len(), p.meta.wire_len as usize);
                            got.push((seq, p.data));
                        }
                    }
                }
                got
            }
        });
        tokio::task::spawn_blocking(move || send(&mut tx, &sent))
            .await
            .unwrap();
        let got = reader.await.unwrap();
        (got, ring.stats().unwrap())
    });
    let expect = frames(&lab, 0, K);
    let mut seen = HashSet::new();
    for (seq, data) in &got {
        assert!(seen.insert(*seq), "frame {seq} delivered twice");
        assert_eq!(data, &expect[*seq as usize], "frame {seq} bytes differ");
    }
    assert_eq!(got.len(), K, "kernel says {stats:?}");
    assert_eq!(stats.drops, 0);
}

/// A block lent by `next_block().await` and held across awaits does not stall the ring:
/// another task keeps taking the blocks filled meanwhile, every other frame read while it is
/// held, and nothing is lost. (The holder lets go once the rest is read, or after 30 s: a
/// ring stalled by the lent block never gets there.)
#[test]
fn a_block_held_across_an_await_does_not_stall_the_ring() {
    require!();
    let lab = Lab::new().expect("lab");
    let ring = rx(
        &lab,
        RxRing::builder(&lab.b.iface)
            .block_size(64 << 10)
            .block_count(64)
            .block_timeout(Duration::from_millis(5)),
    );
    let mut tx = tx(&lab);
    const FIRST: usize = 10;
    const K: usize = 5_000;
    let all = frames(&lab, 0, K);
    let (first, rest) = (all[..FIRST].to_vec(), all[FIRST..].to_vec());
    let (held, while_held, others, stats) = runtime().block_on(async move {
        let ring = AsyncRxRing::new(ring).expect("register");
        send(&mut tx, &first);
        let others = AtomicUsize::new(0);
        let (held_tx, held_rx) = tokio::sync::oneshot::channel::<usize>();
        let holder = async {
            let block = ring.next_block().await.expect("first block");
            let held = seqs(&block).len();
            held_tx.send(held).unwrap();
            // Hold the block across awaits while the rest is sent and read.
            let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
            while others.load(Ordering::Relaxed) < K - held
                && tokio::time::Instant::now() < deadline
            {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            let while_held = others.load(Ordering::Relaxed);
            drop(block);
            (held, while_held)
        };
        let reader = async {
            let held = held_rx.await.unwrap();
            while others.load(Ordering::Relaxed) < K - held {
                let next = tokio::time::timeout(Duration::from_secs(30), ring.next_block());
                let Ok(block) = next.await else { break };
                let n = seqs(&block.expect("next block")).len();
                others.fetch_add(n, Ordering::Relaxed);
            }
        };
        let sender = async {
            // Once the first block is held, in ten bursts.
            tokio::time::sleep(Duration::from_millis(20)).await;
            for chunk in rest.chunks(rest.len().div_ceil(10)) {
                let chunk = chunk.to_vec();
                tx = tokio::task::spawn_blocking(move || {
                    send(&mut tx, &chunk);
                    tx
                })
                .await
                .unwrap();
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
        };
        let ((held, while_held), (), ()) = tokio::join!(holder, reader, sender);
        (
            held,
            while_held,
            others.load(Ordering::Relaxed),
            ring.stats().unwrap(),
        )
    });
    assert!(held > 0, "the held block had none of our frames");
    assert_eq!(
        while_held,
        K - held,
        "only {while_held} frames read while a block was held; kernel says {stats:?}"
    );
    assert_eq!(held + others, K, "kernel says {stats:?}");
    assert_eq!(stats.drops, 0, "{stats:?}");
}

/// A reader that falls behind: the kernel drops, the stats say how many, and the block it
/// closes after the drops says `losing`.
#[test]
fn drops_are_reported_through_the_async_path() {
    require!();
    let lab = Lab::new().expect("lab");
    let ring = rx(
        &lab,
        RxRing::builder(&lab.b.iface)
            .block_size(4096)
            .block_count(2)
            .block_timeout(Duration::from_millis(2)),
    );
    let mut tx = tx(&lab);
    const K: usize = 2_000;
    let flood = frames(&lab, 0, K);
    let after = frames(&lab, K, 5);
    let (delivered, losing, stats) = runtime().block_on(async move {
        let ring = Arc::new(AsyncRxRing::new(ring).expect("register"));
        // Nobody reads while the flood goes out.
        send(&mut tx, &flood);
        let mut batches = ring.clone().batches();
        let mut delivered = 0;
        let mut losing = 0;
        let mut after = Some(after);
        loop {
            let next = tokio::time::timeout(Duration::from_millis(300), batches.next());
            match next.await {
                Ok(Some(batch)) => {
                    let batch = batch.expect("a good block");
                    losing += usize::from(batch.losing);
                    delivered += batch
                        .packets
                        .iter()
                        .filter(|p| frame_seq(&p.data).is_some())
                        .count();
                }
                // The full blocks are read: a few more frames make the kernel close a
                // block after its drops.
                _ => match after.take() {
                    Some(a) => send(&mut tx, &a),
                    None => break,
                },
            }
        }
        (delivered, losing, ring.stats().unwrap())
    });
    assert!(stats.drops > 0, "no drops: {stats:?}");
    assert!(delivered < K, "all {delivered} delivered: {stats:?}");
    assert!(
        delivered as u64 + stats.drops >= (K + 5) as u64,
        "delivered {delivered} + drops {} < sent {}",
        stats.drops,
        K + 5
    );
    assert!(losing > 0, "no batch said losing: {stats:?}");
}

#[test]
fn registering_outside_a_runtime_is_an_error_that_says_so() {
    require!();
    let ring = RxRing::builder("lo")
        .block_size(1 << 16)
        .block_count(2)
        .build()
        .expect("RX ring on lo");
    let err = AsyncRxRing::new(ring).unwrap_err();
    assert!(err.to_string().contains("inside a tokio runtime"), "{err}");
}
