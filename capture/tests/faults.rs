//! Faults never stall the ring: a consumer, flow-end or tick callback that panics
//! stops the run with an error naming it and carrying the panic message; every block goes
//! back, and the same ring can be read again.

mod common;

use std::sync::atomic::{AtomicU64, Ordering};

use zcrx_capture::copy::Routine;
use zcrx_capture::{
    Consumer, Consumers, Delivered, Delivery, Hooks, Pipeline, PipelineConfig, PipelineError,
    Steering,
};
use zcrx_flowcache::FlowTableConfig;
use zcrx_ring::frames::UdpFlow;
use zcrx_ring::{Frame, SyntheticRing};

/// An endless ring (replay) of 400 flows: without the fault the run would not end (the
/// `max_packets` bound only keeps a broken build from hanging).
fn endless_ring() -> SyntheticRing {
    SyntheticRing::builder()
        .block_size(16 * 1024)
        .replay(true)
        .build((0..4000u64).map(|i| {
            let f = UdpFlow::synthetic((i % 400) as u16);
            Frame::new(f.frame(i, 60 + (i as usize * 37) % 900))
        }))
        .unwrap()
}

fn config(consumers: usize, delivery: Delivery) -> PipelineConfig {
    PipelineConfig::builder()
        .consumers(Consumers::threads(consumers))
        .delivery(delivery)
        .max_packets_opt(Some(50_000_000))
        .build()
        .unwrap()
}

/// The ring is whole again: nothing held, and a new run reads it.
fn assert_ring_reusable(ring: &SyntheticRing) {
    assert_eq!(ring.map().blocks_held(), 0, "a block is still held");
    let got = AtomicU64::new(0);
    let stats = Pipeline::new(
        ring,
        config(2, Delivery::ZeroCopy)
            .to_builder()
            .max_packets_opt(Some(10_000))
            .build()
            .unwrap(),
    )
    .run(|_| common::counting(&got), Hooks::new())
    .expect("the ring works after the fault")
    .stats;
    assert_eq!(stats.packets, 10_000);
    assert_eq!(got.load(Ordering::Relaxed), 10_000);
    assert_eq!(ring.map().blocks_held(), 0);
}

#[test]
fn a_panicking_consumer_stops_the_run_and_hands_every_block_back() {
    // One consumer thread (handed whole blocks) and three (handed descriptor batches).
    let cases = [Delivery::ZeroCopy, Delivery::Copy(Routine::Auto)]
        .into_iter()
        .flat_map(|d| [(d, 1, 0), (d, 3, 1)]);
    for (delivery, threads, victim) in cases {
        let ring = endless_ring();
        let seen = AtomicU64::new(0);
        let err = Pipeline::new(&ring, config(threads, delivery))
            .run(
                |i| {
                    let seen = &seen;
                    move |_: &Delivered<'_>| {
                        if i == victim {
                            let n = seen.fetch_add(1, Ordering::Relaxed);
                            if n == 20_000 {
                                panic!("consumer {victim} gives up at packet {n}");
                            }
                        }
                    }
                },
                Hooks::new(),
            )
            .unwrap_err();
        match &err {
            PipelineError::ConsumerPanicked { consumer, message } => {
                assert_eq!(*consumer, victim, "{err}");
                assert_eq!(
                    message,
                    &format!("consumer {victim} gives up at packet 20000")
                );
            }
            other => panic!("{delivery:?}, {threads} threads: wrong error {other}"),
        }
        assert!(err.to_string().contains(&format!(
            "consumer {victim} panicked: consumer {victim} gives up"
        )));
        assert_ring_reusable(&ring);
    }
}

#[test]
fn a_panicking_inline_consumer_is_reported_as_consumer_0() {
    let ring = endless_ring();
    let mut n = 0u64;
    let err = Pipeline::new(
        &ring,
        config(1, Delivery::ZeroCopy)
            .to_builder()
            .consumers(Consumers::Inline)
            .build()
            .unwrap(),
    )
    .run(
        |_| {
            move |_: &Delivered<'_>| {
                n += 1;
                assert!(n < 5000, "inline handler fails");
            }
        },
        Hooks::new(),
    )
    .unwrap_err();
    assert!(
        matches!(&err, PipelineError::ConsumerPanicked { consumer: 0, message } if message == "inline handler fails"),
        "{err}"
    );
    assert_ring_reusable(&ring);
}

#[test]
fn a_panicking_flow_end_callback_stops_the_run() {
    let ring = endless_ring();
    // 400 flows in a 16-flow table: evictions (flow ends) while a block is being walked.
    let mut ends = 0;
    let err = Pipeline::new(
        &ring,
        config(2, Delivery::ZeroCopy)
            .to_builder()
            .steering(Steering::Flows(FlowTableConfig::with_capacity(16)))
            .build()
            .unwrap(),
    )
    .run(
        |_| |_: &Delivered<'_>| {},
        Hooks::new().on_flow_end(|_| {
            ends += 1;
            if ends == 1000 {
                panic!("exporter lost its socket");
            }
        }),
    )
    .unwrap_err();
    assert!(
        matches!(&err, PipelineError::CallbackPanicked { callback: "flow-end", message } if message == "exporter lost its socket"),
        "{err}"
    );
    assert_ring_reusable(&ring);
}

#[test]
fn a_panicking_tick_callback_stops_the_run() {
    let ring = endless_ring();
    let err = Pipeline::new(
        &ring,
        config(2, Delivery::Copy(Routine::Libc))
            .to_builder()
            .tick_every(std::time::Duration::from_millis(5))
            .build()
            .unwrap(),
    )
    .run(
        |_| |_: &Delivered<'_>| {},
        Hooks::new().on_tick(|table| panic!("status line failed with {} flows", table.len())),
    )
    .unwrap_err();
    assert!(
        matches!(&err, PipelineError::CallbackPanicked { callback: "tick", message } if message.starts_with("status line failed")),
        "{err}"
    );
    assert_ring_reusable(&ring);
}

/// A consumer whose `finish` fails (say, a flush to a full disk).
struct FailsAtFinish;

impl Consumer for FailsAtFinish {
    type Output = ();
    fn packet(&mut self, _: &Delivered<'_>) {}
    fn finish(self) {
        panic!("cannot flush the last batch");
    }
}

#[test]
fn a_consumer_that_panics_in_finish_is_reported() {
    for consumers in [Consumers::threads(2), Consumers::Inline] {
        let ring = SyntheticRing::builder()
            .block_size(16 * 1024)
            .build((0..500u64).map(|i| Frame::new(UdpFlow::synthetic(i as u16).frame(i, 100))))
            .unwrap();
        let err = Pipeline::new(
            &ring,
            PipelineConfig::builder()
                .consumers(consumers)
                .build()
                .unwrap(),
        )
        .run(|_| FailsAtFinish, Hooks::new())
        .unwrap_err();
        assert!(
            matches!(&err, PipelineError::ConsumerPanicked { message, .. } if message == "cannot flush the last batch"),
            "{consumers:?}: {err}"
        );
        assert_eq!(ring.map().blocks_held(), 0);
    }
}
