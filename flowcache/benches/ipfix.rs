//! IPFIX encoding: records per second per core into a message buffer (messages handed to a
//! closure that only counts them), beside a plain copy of the same record bytes (a
//! `memcpy`-sized floor) in the same run. Mixed IPv4/IPv6 records, initiator on either side.

#![allow(missing_docs)]

use std::hint::black_box;
use std::net::{Ipv4Addr, Ipv6Addr};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use zcrx_flowcache::ipfix::decode::{messages, Decoder};
use zcrx_flowcache::ipfix::{Encoder, EncoderConfig};
use zcrx_flowcache::{Direction, EndReason, FlowKey, FlowRecord, FlowStats};

const RECORDS: usize = 4096;

fn records() -> Vec<FlowRecord> {
    (0..RECORDS as u32)
        .map(|i| {
            let key = if i % 4 == 3 {
                let a = Ipv6Addr::from(0x2001_0db8_u128 << 96 | u128::from(i));
                FlowKey::v6(a, Ipv6Addr::LOCALHOST, 6, 1024 + i as u16, 443)
            } else {
                FlowKey::v4(
                    Ipv4Addr::from(0xc612_0000 | i),
                    Ipv4Addr::new(198, 19, 0, 1),
                    17,
                    1024 + i as u16,
                    53,
                )
            };
            FlowRecord {
                stats: {
                    let mut stats = FlowStats::default();
                    stats.key = key;
                    stats.packets = [u64::from(i), 3];
                    stats.bytes = [u64::from(i) * 100, 300];
                    stats.first_ns = 1_700_000_000_000_000_000 + u64::from(i) * 1000;
                    stats.last_ns = 1_700_000_000_500_000_000 + u64::from(i) * 1000;
                    stats.tcp_flags = [0x1b, 0x1b];
                    stats.initiator = if i % 2 == 0 {
                        Direction::Forward
                    } else {
                        Direction::Reverse
                    };
                    stats.closed = false;
                    stats
                },
                end: EndReason::Idle,
            }
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let recs = records();
    let mut enc = Encoder::new(EncoderConfig::default()).unwrap();
    // What the encoder writes for these records, checked once: every record decodes back.
    let mut wire = Vec::new();
    for r in &recs {
        enc.encode(r, 0, &mut |m| wire.extend_from_slice(m));
    }
    enc.flush(0, &mut |m| wire.extend_from_slice(m));
    let mut dec = Decoder::new();
    let n: usize = messages(&wire)
        .map(|m| dec.message(m.unwrap()).unwrap().flows.len())
        .sum();
    assert_eq!(n, RECORDS);
    let record_bytes = wire.len();

    let mut g = c.benchmark_group("ipfix");
    g.throughput(Throughput::Elements(RECORDS as u64));
    g.bench_function("encode", |b| {
        b.iter(|| {
            let mut sent = 0usize;
            for r in &recs {
                enc.encode(black_box(r), 1, &mut |m| sent += m.len());
            }
            enc.flush(1, &mut |m| sent += m.len());
            black_box(sent)
        })
    });
    // The floor: copying the same number of bytes (the encoded messages) into a buffer,
    // one record-sized piece at a time.
    let piece = record_bytes / RECORDS;
    let mut dst = vec![0u8; record_bytes];
    g.bench_function("memcpy_same_bytes", |b| {
        b.iter(|| {
            for (d, s) in dst
                .chunks_exact_mut(piece)
                .zip(black_box(&wire).chunks_exact(piece))
            {
                d.copy_from_slice(s);
            }
            black_box(&dst);
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
