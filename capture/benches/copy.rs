//! Copy routines by size, hot and cold destination, each beside libc in the same run.
//! Hot: one destination buffer, reused (in cache up to its size). Cold: a rotation of
//! destination buffers totalling 4x the last-level cache, so every copy lands in memory that
//! is not cached. Every routine's output is checked before timing.

#![allow(missing_docs)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use zcrx_capture::copy::{cpu, Copier, Routine, BENCH_SIZES};

/// The shared sweep, up to 8 MiB (larger copies take seconds per sample).
fn sizes() -> impl Iterator<Item = usize> {
    BENCH_SIZES.into_iter().filter(|&s| s <= 8 << 20)
}

fn bench(c: &mut Criterion) {
    let llc = cpu().llc_bytes.max(8 << 20);
    eprintln!(
        "copy bench: {:?}; auto = {}",
        cpu(),
        Copier::new(Routine::Auto).unwrap().describe()
    );
    for temp in ["hot", "cold"] {
        let mut g = c.benchmark_group(format!("copy_{temp}"));
        g.warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(1))
            .sample_size(20);
        for size in sizes() {
            let src: Vec<u8> = (0..size).map(|i| (i * 7 + 1) as u8).collect();
            let bufs = if temp == "hot" {
                1
            } else {
                (4 * llc / size).max(2)
            };
            let mut dsts: Vec<Vec<u8>> = (0..bufs).map(|_| vec![0u8; size]).collect();
            g.throughput(Throughput::Bytes(size as u64));
            for routine in Routine::ALL {
                let Ok(copier) = Copier::new(routine) else {
                    continue;
                };
                copier.copy(&mut dsts[0], &src);
                assert!(dsts[0] == src, "{routine} copies wrong bytes");
                dsts[0].fill(0);
                let mut next = 0;
                g.bench_with_input(BenchmarkId::new(routine.name(), size), &size, |b, _| {
                    b.iter(|| {
                        let d = &mut dsts[next];
                        next = (next + 1) % bufs;
                        copier.copy(black_box(d), black_box(&src));
                    })
                });
            }
        }
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
