//! A pipeline on a thread of its own (`Pipeline::spawn`) and a run bounded in time
//! (`PipelineConfigBuilder::run_for`), over streaming synthetic rings that never end.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use zcrx_capture::ring::frames::UdpFlow;
use zcrx_capture::ring::{Frame, SyntheticRing};
use zcrx_capture::{Consumers, Delivered, Hooks, Pipeline, PipelineConfig, PipelineError};

/// A ring fed forever from 64 UDP flows: only a stop or a time limit ends a run over it.
fn endless() -> SyntheticRing {
    let flows: Vec<UdpFlow> = (0..64).map(UdpFlow::synthetic).collect();
    let frames = (0u64..).map(move |i| Frame::new(flows[(i % 64) as usize].frame(i, 128)));
    SyntheticRing::builder()
        .block_size(64 * 1024)
        .block_count(4)
        .stream(frames)
        .unwrap()
}

/// A consumer counting its packets into `seen` too (for the test to watch) and returning
/// its own count.
fn counting(seen: &Arc<AtomicU64>) -> impl FnMut(usize) -> Counter + Send + 'static {
    let seen = seen.clone();
    move |_| Counter(0, seen.clone())
}

struct Counter(u64, Arc<AtomicU64>);

impl zcrx_capture::Consumer for Counter {
    type Output = u64;
    fn packet(&mut self, _: &Delivered<'_>) {
        self.0 += 1;
        self.1.fetch_add(1, Ordering::Relaxed);
    }
    fn finish(self) -> u64 {
        self.0
    }
}

#[test]
fn a_spawned_run_stops_on_request_and_hands_back_its_stats() {
    for consumers in [Consumers::Inline, Consumers::threads(2)] {
        let ring = Arc::new(endless());
        let seen = Arc::new(AtomicU64::new(0));
        let config = PipelineConfig::builder()
            .consumers(consumers)
            .build()
            .unwrap();
        let handle = Pipeline::spawn(ring.clone(), config, counting(&seen), Hooks::new).unwrap();
        let waited = Instant::now();
        while seen.load(Ordering::Relaxed) < 10_000 {
            assert!(
                waited.elapsed() < Duration::from_secs(30),
                "no packets came"
            );
            std::thread::yield_now();
        }
        assert!(
            !handle.is_finished(),
            "an endless source ends only on a stop"
        );
        let token = handle.stop_token();
        token.stop();
        let run = handle.join().unwrap();
        let delivered: u64 = run.outputs.iter().sum();
        assert!(
            run.stats.packets >= 10_000,
            "{consumers:?}: {}",
            run.stats.packets
        );
        assert_eq!(
            delivered, run.stats.packets,
            "{consumers:?}: each packet once"
        );
        assert_eq!(delivered, seen.load(Ordering::Relaxed));
        assert_eq!(run.stats.consumers.len(), consumers.count());
        assert_eq!(ring.map().blocks_held(), 0, "every block back in the ring");
    }
}

#[test]
fn a_spawned_run_ends_by_itself_with_its_input_and_reports_a_setup_panic() {
    let flows: Vec<UdpFlow> = (0..8).map(UdpFlow::synthetic).collect();
    let frames: Vec<Frame> = (0..1000)
        .map(|i| Frame::new(flows[i % 8].frame(i as u64, 100)))
        .collect();
    let ring = Arc::new(SyntheticRing::builder().build(frames).unwrap());
    let seen = Arc::new(AtomicU64::new(0));
    let handle = Pipeline::spawn(
        ring.clone(),
        PipelineConfig::default(),
        counting(&seen),
        Hooks::new,
    )
    .unwrap();
    let run = handle.join().unwrap();
    assert_eq!(run.stats.packets, 1000);
    assert_eq!(run.outputs, vec![1000]);

    let ring = Arc::new(endless());
    let handle = Pipeline::spawn(
        ring,
        PipelineConfig::default(),
        |_| -> Counter { panic!("no consumer today") },
        Hooks::new,
    )
    .unwrap();
    match handle.join() {
        Err(PipelineError::CallbackPanicked { callback, message }) => {
            assert_eq!(callback, "setup");
            assert_eq!(message, "no consumer today");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn run_for_stops_a_run_after_about_its_duration() {
    let limit = Duration::from_millis(300);
    for consumers in [Consumers::Inline, Consumers::threads(2)] {
        let ring = endless();
        let seen = Arc::new(AtomicU64::new(0));
        let config = PipelineConfig::builder()
            .consumers(consumers)
            .run_for(limit)
            .build()
            .unwrap();
        assert_eq!(config.duration(), Some(limit));
        let pipeline = Pipeline::new(&ring, config);
        let t0 = Instant::now();
        let run = pipeline.run(counting(&seen), Hooks::new()).unwrap();
        let took = t0.elapsed();
        // Loose bounds: not a timing benchmark, only that the limit ends the run.
        assert!(took >= limit, "{consumers:?}: ended after {took:?}");
        assert!(took < limit * 20, "{consumers:?}: ended after {took:?}");
        assert!(run.stats.packets > 0);
        assert_eq!(run.outputs.iter().sum::<u64>(), run.stats.packets);
        assert!(
            !pipeline.stop_token().is_stopped(),
            "the token is left alone"
        );
        assert_eq!(ring.map().blocks_held(), 0);
    }
}
