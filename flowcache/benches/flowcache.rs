//! Extraction and extract+track, beside std HashMap (SipHash) and hashbrown+foldhash doing the
//! same accounting in the same run. Every variant's answer is checked before timing.

#![allow(missing_docs)]

use std::collections::HashMap;
use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use zcrx_flowcache::testdata::{
    account_as_the_table, assert_same_flows, bench_flows, tcp6_with_ext, udp4, with_vlan,
    xorshift_order,
};
use zcrx_flowcache::{
    extract, Direction, FlowId, FlowKey, FlowStats, FlowTable, FlowTableConfig, LinkType,
    TrackInput,
};

const BATCH: usize = 4096;

/// Packets as a ring presents them: one after another in memory (128-byte stride: a 64-byte
/// frame and its TPACKET header), flows in
/// random order (xorshift), so frame reads stream and table accesses are random.
struct Stream {
    bytes: Vec<u8>,
    len: usize,
}

const STRIDE: usize = 128;

impl Stream {
    fn new(frames: &[Vec<u8>], order: &[u32]) -> Self {
        let len = frames[0].len();
        assert!(len <= STRIDE && frames.iter().all(|f| f.len() == len));
        let mut bytes = vec![0u8; order.len() * STRIDE];
        for (i, &o) in order.iter().enumerate() {
            bytes[i * STRIDE..i * STRIDE + len].copy_from_slice(&frames[o as usize]);
        }
        Stream { bytes, len }
    }
    fn packets(&self) -> usize {
        self.bytes.len() / STRIDE
    }
    #[inline]
    fn get(&self, i: usize) -> &[u8] {
        &self.bytes[i * STRIDE..i * STRIDE + self.len]
    }
}

fn bench_extract(c: &mut Criterion) {
    let mut g = c.benchmark_group("extract");
    g.throughput(Throughput::Elements(1));
    let v4 = udp4([198, 18, 0, 1], [198, 18, 0, 2], 1234, 53, 18);
    let v6 = tcp6_with_ext(
        [0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
        [0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2],
        40000,
        443,
        0x18,
    );
    let vlan = with_vlan(&v4, 100);
    for (name, f) in [
        ("ipv4_udp", &v4),
        ("ipv6_tcp_ext", &v6),
        ("vlan_ipv4_udp", &vlan),
    ] {
        assert!(extract(LinkType::Ethernet, f, None).is_ok());
        g.bench_function(name, |b| {
            b.iter(|| black_box(extract(LinkType::Ethernet, black_box(f), None)))
        });
        // The same frame through the general path only: the fast path's baseline.
        assert_eq!(
            extract(LinkType::Ethernet, f, None),
            zcrx_flowcache::extract_general(LinkType::Ethernet, f, None)
        );
        g.bench_function(format!("{name}_general_path"), |b| {
            b.iter(|| {
                black_box(zcrx_flowcache::extract_general(
                    LinkType::Ethernet,
                    black_box(f),
                    None,
                ))
            })
        });
    }
    g.finish();
}

/// Extraction over a stream of 65 536 packets of 256 flows laid out as a ring presents them:
/// the fast path against the general path in the same run (per packet).
fn bench_extract_stream(c: &mut Criterion) {
    let mut g = c.benchmark_group("extract_stream");
    // IPv4/UDP frames take the fast path; IPv6 with extension headers try it and fall
    // through to the general path (what the failed check costs).
    let v6: Vec<Vec<u8>> = (0..256u16)
        .map(|i| {
            let mut a = [0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
            a[14] = (i >> 8) as u8;
            a[15] = i as u8;
            tcp6_with_ext(
                a,
                [0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2],
                1024 + i,
                443,
                0x10,
            )
        })
        .collect();
    for (kind, frames) in [("ipv4_udp", bench_flows(256)), ("ipv6_tcp_ext", v6)] {
        let stream = Stream::new(&frames, &xorshift_order(256, 1 << 16));
        let n = stream.packets();
        g.throughput(Throughput::Elements(n as u64));
        for (name, general) in [("fast_path", false), ("general_path", true)] {
            g.bench_function(format!("{kind}/{name}"), |b| {
                b.iter(|| {
                    for i in 0..n {
                        let f = stream.get(i);
                        let x = if general {
                            zcrx_flowcache::extract_general(LinkType::Ethernet, f, None)
                        } else {
                            extract(LinkType::Ethernet, f, None)
                        };
                        black_box(&x);
                    }
                })
            });
        }
    }
    g.finish();
}

/// BATCH packets of `stream` from `pos` on for a general hash map: extract, canonical key,
/// then `account(key, direction, length, time stamp, TCP flags)` (the map's entry and
/// `account_as_the_table`: the table's own accounting).
#[inline(always)]
fn track_map(
    stream: &Stream,
    pos: &mut usize,
    mut account: impl FnMut(FlowKey, Direction, u32, u64, u8),
) {
    let n = stream.packets();
    for _ in 0..BATCH {
        let f = stream.get(*pos);
        *pos = (*pos + 1) % n;
        let x = extract(LinkType::Ethernet, f, None).unwrap();
        let (k, d) = x.key.canonical();
        account(k, d, f.len() as u32, *pos as u64, x.tcp_flags);
    }
}

/// BATCH packets of `stream` from `pos` on: extract, then one `track` call each.
#[inline(always)]
fn track_each(t: &mut FlowTable, stream: &Stream, pos: &mut usize) {
    let n = stream.packets();
    let mut ids = 0usize;
    for _ in 0..BATCH {
        let f = stream.get(*pos);
        *pos = (*pos + 1) % n;
        let x = extract(LinkType::Ethernet, f, None).unwrap();
        ids += id_value(
            t.track(TrackInput {
                key: x.key,
                len: f.len() as u32,
                ts_ns: *pos as u64,
                tcp_flags: x.tcp_flags,
            })
            .id,
        );
    }
    black_box(ids);
}

/// A flow id as a number to sum, both halves used: how the table's benches consume each
/// packet's answer without a store per packet (the maps return nothing).
#[inline(always)]
fn id_value(id: FlowId) -> usize {
    id.slot() + id.generation() as usize
}

/// The same packets extracted into `batch`, then one `track_batch` call.
#[inline(always)]
fn track_batched(t: &mut FlowTable, stream: &Stream, pos: &mut usize, batch: &mut [TrackInput]) {
    let n = stream.packets();
    for p in batch.iter_mut() {
        let f = stream.get(*pos);
        *pos = (*pos + 1) % n;
        let x = extract(LinkType::Ethernet, f, None).unwrap();
        *p = TrackInput {
            key: x.key,
            len: f.len() as u32,
            ts_ns: *pos as u64,
            tcp_flags: x.tcp_flags,
        };
    }
    let mut ids = 0usize;
    t.track_batch(batch, |_, r| {
        ids += id_value(r.id);
    });
    black_box(ids);
}

/// Check before measuring: over one pass of `stream`, the table and a HashMap doing the
/// table's accounting hold the same counters for every flow.
fn same_counts_as_a_hash_map(stream: &Stream, flows: usize) {
    let n = stream.packets();
    let mut t = FlowTable::new(FlowTableConfig::with_capacity(flows * 2).with_seed(Some(1)))
        .expect("capacity within MAX_CAPACITY");
    let mut m: HashMap<FlowKey, FlowStats> = HashMap::with_capacity(flows);
    for ts in 0..n {
        let f = stream.get(ts);
        let x = extract(LinkType::Ethernet, f, None).unwrap();
        let r = t.track(TrackInput {
            key: x.key,
            len: f.len() as u32,
            ts_ns: ts as u64,
            tcp_flags: x.tcp_flags,
        });
        assert!(!r.evicted);
        let (k, d) = x.key.canonical();
        account_as_the_table(
            m.entry(k).or_default(),
            k,
            d,
            f.len() as u32,
            ts as u64,
            x.tcp_flags,
        );
    }
    assert_same_flows(&t, m.iter());
}

fn bench_track(c: &mut Criterion) {
    let mut g = c.benchmark_group("extract_track");
    g.sample_size(30);
    for flows in [256usize, 65_536, 1 << 20] {
        let stream = {
            let frames = bench_flows(flows);
            Stream::new(&frames, &xorshift_order(flows, (flows * 2).max(1 << 16)))
        };
        g.throughput(Throughput::Elements(BATCH as u64));

        same_counts_as_a_hash_map(&stream, flows);

        let mut pos = 0usize;
        let mut batch = vec![TrackInput::default(); BATCH];
        // The table one packet at a time and in batches, each also with its memory advised
        // to transparent huge pages (what zcap and the pipeline configure; THP is "madvise"
        // on Debian, so nothing else here gets them).
        let huge: fn(usize, usize) = zcrx_ring::advise_huge_pages;
        for (prepare_memory, suffix) in [(None, ""), (Some(huge), "_thp")] {
            for batched in [false, true] {
                let mut t = FlowTable::new(
                    FlowTableConfig::with_capacity(flows * 2)
                        .with_seed(Some(1))
                        .with_prepare_memory(prepare_memory),
                )
                .expect("capacity within MAX_CAPACITY");
                let kind = if batched { "_batch" } else { "" };
                let id = BenchmarkId::new(format!("flowtable{kind}{suffix}"), flows);
                if batched {
                    g.bench_function(id, |b| {
                        b.iter(|| track_batched(&mut t, &stream, &mut pos, &mut batch))
                    });
                } else {
                    g.bench_function(id, |b| b.iter(|| track_each(&mut t, &stream, &mut pos)));
                }
            }
        }
        let mut m: HashMap<FlowKey, FlowStats> = HashMap::with_capacity(flows * 2);
        g.bench_function(BenchmarkId::new("std_hashmap_siphash", flows), |b| {
            b.iter(|| {
                track_map(&stream, &mut pos, |k, d, len, ts, flags| {
                    account_as_the_table(m.entry(k).or_default(), k, d, len, ts, flags)
                })
            })
        });
        let mut h: hashbrown::HashMap<FlowKey, FlowStats, foldhash::fast::RandomState> =
            hashbrown::HashMap::with_capacity_and_hasher(
                flows * 2,
                foldhash::fast::RandomState::default(),
            );
        g.bench_function(BenchmarkId::new("hashbrown_foldhash", flows), |b| {
            b.iter(|| {
                track_map(&stream, &mut pos, |k, d, len, ts, flags| {
                    account_as_the_table(h.entry(k).or_default(), k, d, len, ts, flags)
                })
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench_extract, bench_extract_stream, bench_track);
criterion_main!(benches);
