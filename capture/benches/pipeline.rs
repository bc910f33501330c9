//! The pipeline over a replaying synthetic ring: 256 UDP flows, 64 B and 1500 B frames, an
//! inline consumer and 1 and 2 consumer threads, zero-copy versus each copy routine, in the
//! same run. Reports wall time per
//! packet (criterion) and prints the stage's own ns/packet from the pipeline's counters; for
//! zero-copy delivery also the wall time per packet net of each run's set-up (`…-net`,
//! the `NET` lines).

#![allow(missing_docs)]

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use zcrx_capture::{Consumers, Delivered, Delivery, Hooks, Pipeline, PipelineConfig};
use zcrx_ring::frames::UdpFlow;
use zcrx_ring::SyntheticRing;

const PACKETS: u64 = 200_000;

fn ring(size: usize) -> SyntheticRing {
    let flows: Vec<UdpFlow> = (0..256).map(UdpFlow::synthetic).collect();
    // 16 blocks of 1 MiB, replayed: the working set of a busy ring, not of a toy.
    zcrx_ring::frames::replay_ring(&flows, size, 1 << 20, 16).unwrap()
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("pipeline");
    g.warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(10);
    g.throughput(Throughput::Elements(PACKETS));
    let modes = Delivery::ALL;
    for size in [64usize, 1500] {
        let ring = ring(size);
        // The inline consumer runs on the stage's thread: the stage's own cost, without the
        // batching and the other core.
        for consumers in [
            Consumers::Inline,
            Consumers::threads(1),
            Consumers::threads(2),
        ] {
            for mode in modes {
                let config = |packets| {
                    PipelineConfig::builder()
                        .consumers(consumers)
                        .delivery(mode)
                        .max_packets_opt(Some(packets))
                        .build()
                        .unwrap()
                };
                // Check: every packet taken is delivered, and the bytes seen add up.
                let run_n = |packets| {
                    Pipeline::new(&ring, config(packets))
                        .run(
                            |_| {
                                let mut sum = 0u64;
                                move |d: &Delivered<'_>| {
                                    // Touch the payload as a consumer would (first and last byte).
                                    let b = d.data();
                                    sum = sum
                                        .wrapping_add(u64::from(b[0]) + u64::from(b[b.len() - 1]));
                                    std::hint::black_box(sum);
                                }
                            },
                            Hooks::new(),
                        )
                        .unwrap()
                        .stats
                };
                let run = || run_n(PACKETS);
                let stats = run();
                assert_eq!(stats.packets, PACKETS);
                assert_eq!(
                    stats.consumers.iter().map(|c| c.packets).sum::<u64>(),
                    PACKETS
                );
                let id = match consumers {
                    Consumers::Inline => format!("{size}B/inline"),
                    c => format!("{size}B/{}c", c.count()),
                };
                let mut stage = Vec::new();
                g.bench_with_input(BenchmarkId::new(mode.name(), id.clone()), &(), |b, _| {
                    b.iter(|| stage.push(run().stage_ns_per_packet()))
                });
                print_median("STAGE", mode, &id, "stage", "", stage);
                if mode != Delivery::ZeroCopy {
                    continue;
                }
                // The same without the run's set-up (a pipeline and its 64 K-slot flow table
                // made, threads started and joined, every flow flushed at the end): each
                // iteration runs PACKETS and PACKETS / 8 packets, and the difference, scaled to
                // PACKETS, is what the packets themselves took. The set-up costs the same in
                // both, so it cancels (as `rxbench instructions` does with two counts).
                let mut net = Vec::new();
                let id_net = BenchmarkId::new(format!("{}-net", mode.name()), id.clone());
                g.bench_with_input(id_net, &(), |b, _| {
                    b.iter_custom(|iters| (0..iters).map(|_| net_of_setup(&run_n, &mut net)).sum())
                });
                print_median("NET", mode, &id, "wall", " net of the run's set-up", net);
            }
        }
    }
    g.finish();
}

/// One run of PACKETS and one of PACKETS / 8 through `run_n`: the difference, scaled to
/// PACKETS (pushed to `net` as ns/packet, returned as the iteration's time).
fn net_of_setup<S>(run_n: &impl Fn(u64) -> S, net: &mut Vec<f64>) -> Duration {
    let t = Instant::now();
    run_n(PACKETS);
    let full = t.elapsed();
    let t = Instant::now();
    run_n(PACKETS / 8);
    let small = t.elapsed();
    let d = full.saturating_sub(small).mul_f64(8.0 / 7.0);
    net.push(d.as_nanos() as f64 / PACKETS as f64);
    d
}

/// The `TAG mode id: what M ns/packet… (median of N)` line scripts/pipeline-ab.sh picks up.
fn print_median(tag: &str, mode: Delivery, id: &str, what: &str, note: &str, mut v: Vec<f64>) {
    v.sort_by(|a, b| a.total_cmp(b));
    if let Some(m) = v.get(v.len() / 2) {
        eprintln!(
            "{tag} {} {id}: {what} {m:.1} ns/packet{note} (median of {})",
            mode.name(),
            v.len()
        );
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
