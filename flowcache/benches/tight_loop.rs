//! The flow table in an embedder's own tight loop: one 64-byte frame
//! per flow in a `Vec`, a fixed pseudo-random order of flows (xorshift); for each packet
//! `extract`, then `track(key, len, index, flags)`, keeping only the returned id (summed)
//! and any evicted record (collected). Against `hashbrown::HashMap` with foldhash doing the
//! table's accounting (`account_as_the_table`: per-direction packets, bytes and TCP flags,
//! initiator, first time, latest time by comparison). Both created with capacity 2x the
//! flows. Unlike `flowcache`'s `extract_track` group, the frames are not a ring-like stream
//! of every packet: a frame is read where its flow keeps it, as an embedder holding its own
//! buffers would. Checked before timing: the table and the map hold the same counters.

#![allow(missing_docs)]

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use zcrx_flowcache::testdata::{
    account_as_the_table, assert_same_flows, bench_flows, xorshift_order,
};
use zcrx_flowcache::{
    extract, FlowKey, FlowRecord, FlowStats, FlowTable, FlowTableConfig, LinkType, TrackInput,
};

/// Packets per timed call.
const BATCH: usize = 4096;

/// Flow indices in a fixed xorshift order: twice the flows, at least 65 536.
fn order(flows: usize) -> Vec<u32> {
    xorshift_order(flows, (flows * 2).max(1 << 16))
}

/// The loop's state: where in the order it is, and what it kept.
struct Loop<'a> {
    frames: &'a [Vec<u8>],
    order: &'a [u32],
    pos: usize,
    evicted: Vec<FlowRecord>,
}

impl Loop<'_> {
    #[inline(always)]
    fn next(&mut self) -> (&[u8], u64) {
        let f = &self.frames[self.order[self.pos] as usize];
        self.pos += 1;
        if self.pos == self.order.len() {
            self.pos = 0;
        }
        (f, self.pos as u64)
    }

    /// BATCH packets through `track`.
    fn table(&mut self, t: &mut FlowTable) {
        let mut ids = 0usize;
        for _ in 0..BATCH {
            let (f, ts) = self.next();
            let x = extract(LinkType::Ethernet, f, None).unwrap();
            let r = t.track(TrackInput {
                key: x.key,
                len: f.len() as u32,
                ts_ns: ts,
                tcp_flags: x.tcp_flags,
            });
            ids += r.id.slot();
            if r.evicted {
                self.evicted.extend(t.drain_evicted());
            }
        }
        black_box(ids);
    }

    /// BATCH packets through one `track_batch`, extracted as it asks for them.
    fn table_batch(&mut self, t: &mut FlowTable) {
        let mut ids = 0usize;
        let inputs = (0..BATCH).map(|_| {
            let (f, ts) = self.next();
            let x = extract(LinkType::Ethernet, f, None).unwrap();
            TrackInput {
                key: x.key,
                len: f.len() as u32,
                ts_ns: ts,
                tcp_flags: x.tcp_flags,
            }
        });
        t.track_batch(inputs, |_, r| ids += r.id.slot());
        self.evicted.extend(t.drain_evicted());
        black_box(ids);
    }

    /// BATCH packets through the map.
    fn map(&mut self, m: &mut Map) {
        for _ in 0..BATCH {
            let (f, ts) = self.next();
            let x = extract(LinkType::Ethernet, f, None).unwrap();
            let (k, d) = x.key.canonical();
            account_as_the_table(
                m.entry(k).or_default(),
                k,
                d,
                f.len() as u32,
                ts,
                x.tcp_flags,
            );
        }
    }
}

type Map = hashbrown::HashMap<FlowKey, FlowStats, foldhash::fast::RandomState>;

fn table(flows: usize, huge: bool) -> FlowTable {
    FlowTable::new(
        FlowTableConfig::with_capacity(flows * 2)
            .with_prepare_memory(huge.then_some(zcrx_ring::advise_huge_pages as fn(usize, usize))),
    )
    .expect("capacity within MAX_CAPACITY")
}

fn map(flows: usize) -> Map {
    Map::with_capacity_and_hasher(flows * 2, foldhash::fast::RandomState::default())
}

/// One pass over the order: the table and the map agree on every flow.
fn check(frames: &[Vec<u8>], order: &[u32]) {
    let (mut t, mut m) = (table(frames.len(), false), map(frames.len()));
    let mut l = Loop {
        frames,
        order,
        pos: 0,
        evicted: Vec::new(),
    };
    for _ in 0..order.len().div_ceil(BATCH) {
        l.table(&mut t);
    }
    l.pos = 0;
    for _ in 0..order.len().div_ceil(BATCH) {
        l.map(&mut m);
    }
    assert!(l.evicted.is_empty());
    assert_same_flows(&t, m.iter());
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("tight_loop");
    g.sample_size(30);
    g.throughput(Throughput::Elements(BATCH as u64));
    for flows in [256usize, 65_536, 1 << 20] {
        let (frames, order) = (bench_flows(flows), order(flows));
        check(&frames, &order);
        let mut l = Loop {
            frames: &frames,
            order: &order,
            pos: 0,
            evicted: Vec::new(),
        };
        let mut t = table(flows, false);
        g.bench_function(BenchmarkId::new("track", flows), |b| {
            b.iter(|| l.table(&mut t))
        });
        let mut t = table(flows, true);
        g.bench_function(BenchmarkId::new("track_thp", flows), |b| {
            b.iter(|| l.table(&mut t))
        });
        let mut t = table(flows, true);
        g.bench_function(BenchmarkId::new("track_batch_thp", flows), |b| {
            b.iter(|| l.table_batch(&mut t))
        });
        let mut m = map(flows);
        g.bench_function(BenchmarkId::new("hashbrown_foldhash", flows), |b| {
            b.iter(|| l.map(&mut m))
        });
        black_box(l.evicted.len());
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
