//! Walking a pre-filled synthetic ring (the kernel's block format) versus a plain loop over
//! the same frame bytes. Both compute the same checksum, verified before timing.

#![allow(missing_docs)]

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use zcrx_ring::{Frame, SyntheticRing};

const BLOCKS: usize = 8;
const BLOCK_SIZE: usize = 1 << 20;

fn frames(size: usize) -> Vec<Frame> {
    // As many frames as fill BLOCKS blocks.
    let per_block =
        (BLOCK_SIZE - 48) / (zcrx_ring::frames::mac_offset(14) + size).next_multiple_of(8);
    (0..per_block * BLOCKS)
        .map(|i| Frame::new(vec![i as u8; size]))
        .collect()
}

/// One pass over every block: sum of lengths and first bytes.
fn walk(ring: &SyntheticRing) -> u64 {
    let mut sum = 0u64;
    for _ in 0..ring.filled_blocks() {
        let block = ring.next_block().expect("replay ring always has a block");
        for p in block.packets() {
            let p = p.expect("valid block");
            sum += u64::from(p.wire_len()) + u64::from(p.data()[0]);
        }
    }
    sum
}

/// Baseline: the same frames as slices of one flat buffer, no headers to read.
fn flat(buf: &[u8], lens: &[u32]) -> u64 {
    let mut sum = 0u64;
    let mut off = 0;
    for &len in lens {
        let d = &buf[off..off + len as usize];
        sum += u64::from(len) + u64::from(d[0]);
        off += len as usize;
    }
    sum
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("ring_walk");
    for size in [64usize, 1500] {
        let frames = frames(size);
        let n = frames.len() as u64;
        let lens: Vec<u32> = frames.iter().map(|f| f.data.len() as u32).collect();
        let buf: Vec<u8> = frames.iter().flat_map(|f| f.data.iter().copied()).collect();
        let ring = SyntheticRing::builder()
            .block_size(BLOCK_SIZE)
            .replay(true)
            .build(frames)
            .unwrap();
        assert_eq!(ring.filled_blocks(), BLOCKS);
        assert_eq!(
            walk(&ring),
            flat(&buf, &lens),
            "ring walk and baseline disagree"
        );
        g.throughput(Throughput::Elements(n));
        g.bench_with_input(BenchmarkId::new("synthetic_ring", size), &ring, |b, r| {
            b.iter(|| black_box(walk(r)))
        });
        g.bench_with_input(
            BenchmarkId::new("flat_baseline", size),
            &(buf, lens),
            |b, (buf, lens)| b.iter(|| black_box(flat(buf, lens))),
        );
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
