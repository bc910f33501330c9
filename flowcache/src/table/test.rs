use std::time::Duration;

use super::slot::Slot;
use super::{FlowTable, FlowTableConfig};
use crate::key::{Direction, FlowKey};
use crate::record::{tcp, EndReason, Timeouts, TrackInput};
use std::net::{Ipv4Addr, Ipv6Addr};

/// Structured keys (one field counting up, the rest fixed: what a scan or a load
/// generator sends) spread over the sets, the second-choice sets and the tags as random
/// values would: no bucket gets more than twice its share plus slack, for 66 seeds. (With
/// the ports word hashed last, seed 0xdead_beef put 63 keys differing only in the source
/// port into one set, where a random spread's worst is about 30.)
#[test]
fn the_keyed_hash_spreads_structured_keys() {
    let n = 1u32 << 16;
    type Family = (&'static str, fn(u32) -> FlowKey);
    let families: [Family; 5] = [
        ("sport", |i| {
            FlowKey::v4(
                Ipv4Addr::new(198, 18, 0, 1),
                Ipv4Addr::new(198, 19, 0, 1),
                17,
                i as u16,
                53,
            )
        }),
        ("src", |i| {
            FlowKey::v4(
                Ipv4Addr::from(0xc612_0000 + i),
                Ipv4Addr::new(198, 19, 0, 1),
                6,
                40000,
                443,
            )
        }),
        ("dst", |i| {
            FlowKey::v4(
                Ipv4Addr::new(198, 18, 0, 1),
                Ipv4Addr::from(0xc613_0000 + i),
                17,
                1024,
                53,
            )
        }),
        ("v6 src", |i| {
            FlowKey::v6(
                Ipv6Addr::from(0x2001_0db8_u128 << 96 | u128::from(i)),
                Ipv6Addr::LOCALHOST,
                17,
                1000,
                2000,
            )
        }),
        ("vlan+dport", |i| {
            FlowKey::v4(
                Ipv4Addr::new(10, 0, 0, 1),
                Ipv4Addr::new(10, 0, 0, 2),
                17,
                5000,
                (i >> 12) as u16,
            )
            .with_vlan((i & 0xfff) as u16)
        }),
    ];
    let mut bad = 0;
    for seed in (0..64).chain([0xdead_beef, u64::MAX]) {
        let t = FlowTable::new(FlowTableConfig {
            seed: Some(seed),
            ..Default::default()
        })
        .expect("capacity within MAX_CAPACITY");
        for (name, key) in &families {
            // 4096 first-choice sets, 4096 second-choice sets, 128 tags.
            let mut sets = vec![0u32; 4096];
            let mut second = vec![0u32; 4096];
            let mut tags = vec![0u32; 128];
            for i in 0..n {
                let x = t.hash(&key(i));
                sets[(x & 4095) as usize] += 1;
                second[((x >> 24) & 4095) as usize] += 1;
                tags[(x >> 57) as usize] += 1;
            }
            for (what, counts) in [("set", &sets), ("second set", &second), ("tag", &tags)] {
                let share = n / counts.len() as u32;
                let max = *counts.iter().max().unwrap();
                if max > 2 * share + 16 {
                    eprintln!("{name}, seed {seed}: a {what} got {max} of {n} (share {share})");
                    bad += 1;
                }
                assert_eq!(bad, 0);
            }
        }
    }
}

/// `Slot::fetch` reaches every line of a slot wherever it starts: each 64-byte line
/// that overlaps the slot holds the start of one of the fetched fields.
#[test]
fn slot_fetch_covers_every_line() {
    let s = Slot::default();
    let base = &s as *const Slot as usize;
    let at = |f: usize| f - base;
    // The fields of Slot::fetch.
    let points = [
        at(&s.packets as *const _ as usize),
        at(&s.last_ns as *const _ as usize),
    ];
    let size = std::mem::size_of::<Slot>();
    let align = std::mem::align_of::<Slot>();
    assert_eq!((size, align), (96, 32), "a slot spans two lines");
    for start in (0..64).step_by(align) {
        // Lines overlapping [start, start + size) of a line-aligned region.
        for line in (start / 64)..(start + size).div_ceil(64) {
            let (lo, hi) = (line * 64, line * 64 + 64);
            assert!(
                points.iter().any(|p| (lo..hi).contains(&(start + p))),
                "slot at {start} (size {size}, fields at {points:?}): line {line} not fetched"
            );
        }
    }
}

#[test]
fn at_most_128_bytes_per_flow() {
    // Counters and generation, tag byte.
    let per_flow = std::mem::size_of::<Slot>() + 1;
    assert!(per_flow <= 128, "{per_flow} bytes per flow");
}

/// The counters agree with what the table did: every insertion is a creation, and every
/// removal is counted once under its reason, with or without a record (an evicted flow
/// reported by the active timeout just before yields none).
#[test]
fn counters_follow_insertions_and_removals() {
    let mut t = FlowTable::new(FlowTableConfig {
        capacity: 32,
        seed: Some(7),
        timeouts: Timeouts {
            active: Some(Duration::from_secs(1)),
            ..Default::default()
        },
        ..Default::default()
    })
    .expect("capacity within MAX_CAPACITY");
    let key = |i: u16| {
        FlowKey::v4(
            Ipv4Addr::new(198, 18, 0, 1),
            Ipv4Addr::new(198, 18, 0, 2),
            17,
            i,
            9,
        )
    };
    let (mut evicted, mut created) = (0, 0);
    for i in 0..1000u16 {
        let r = t.track(TrackInput {
            key: key(i),
            len: 64,
            ts_ns: u64::from(i) * 1000,
            tcp_flags: 0,
        });
        created += u64::from(r.created);
        evicted += u64::from(r.evicted);
    }
    let c = t.counters();
    assert_eq!(c.created, 1000);
    assert_eq!(c.created, created);
    // No flow was quiet after an active report: every eviction yielded its record.
    assert_eq!(c.evicted, evicted);
    assert_eq!(t.drain_evicted().count() as u64, evicted);
    assert_eq!(c.created - c.evicted, t.len() as u64);
    // Active reports count as nothing; an idle expiry removes every flow.
    let active: Vec<_> = t.expire(2_000_000_000).collect();
    assert!(active.iter().all(|r| r.end == EndReason::Active));
    assert_eq!(t.counters().expired, 0);
    let held = t.len() as u64;
    let idle = t.expire(120_000_000_000).count();
    assert_eq!(idle, 0, "reported flows with nothing new yield no record");
    assert_eq!(t.counters().expired, held);
    t.track(TrackInput {
        key: key(1),
        len: 64,
        ts_ns: 121_000_000_000,
        tcp_flags: 0,
    });
    assert_eq!(t.flush().count(), 1);
    let c = t.counters();
    assert_eq!((c.created, c.flushed, t.len()), (1001, 1, 0));
}

#[test]
fn stale_ids_find_nothing() {
    let mut t = one_set(Timeouts::default());
    let k = FlowKey::v4(
        Ipv4Addr::new(198, 18, 0, 1),
        Ipv4Addr::new(198, 18, 0, 2),
        17,
        1,
        2,
    );
    let id = t
        .track(TrackInput {
            key: k,
            len: 100,
            ts_ns: 0,
            tcp_flags: 0,
        })
        .id;
    assert_eq!(t.get(id).unwrap().total_packets(), 1);
    let recs: Vec<_> = t.expire(61_000_000_000).collect();
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0].end, EndReason::Idle);
    assert!(t.get(id).is_none());
    let id2 = t
        .track(TrackInput {
            key: k,
            len: 100,
            ts_ns: 62_000_000_000,
            tcp_flags: 0,
        })
        .id;
    assert_ne!(id, id2);
}

#[test]
fn fin_shortens_tcp_timeout() {
    let mut t = one_set(Timeouts::default());
    let a = FlowKey::v4(
        Ipv4Addr::new(198, 18, 0, 1),
        Ipv4Addr::new(198, 18, 0, 2),
        6,
        1000,
        80,
    );
    let b = FlowKey::v4(
        Ipv4Addr::new(198, 18, 0, 1),
        Ipv4Addr::new(198, 18, 0, 2),
        6,
        1001,
        80,
    );
    t.track(TrackInput {
        key: a,
        len: 60,
        ts_ns: 0,
        tcp_flags: tcp::SYN,
    });
    t.track(TrackInput {
        key: b,
        len: 60,
        ts_ns: 0,
        tcp_flags: tcp::SYN,
    });
    t.track(TrackInput {
        key: b.reversed(),
        len: 60,
        ts_ns: 0,
        tcp_flags: tcp::FIN | tcp::ACK,
    });
    let gone: Vec<_> = t.expire(11_000_000_000).collect();
    assert_eq!(gone.len(), 1);
    assert_eq!(gone[0].stats.key, b.canonical().0);
    assert_eq!(gone[0].end, EndReason::EndOfFlow);
    assert_eq!(gone[0].end.ipfix_code(), 3);
    assert_eq!(t.len(), 1);
}

/// A one-set table (16 slots, seed 1) with `timeouts`.
fn one_set(timeouts: Timeouts) -> FlowTable {
    FlowTable::new(FlowTableConfig {
        capacity: 16,
        seed: Some(1),
        timeouts,
        ..Default::default()
    })
    .expect("capacity within MAX_CAPACITY")
}

/// A one-set table (seed 1) reporting its flows every `active`.
fn with_active_timeout(active: Duration) -> FlowTable {
    one_set(Timeouts {
        active: Some(active),
        ..Default::default()
    })
}

/// A FIN seen before an active report still closes the flow after it: the report starts
/// the flags again, not the flow's life (`closed` is the flags' FIN/RST or, from before
/// the last report, `closed_before`).
#[test]
fn a_fin_before_an_active_report_still_shortens_the_timeout_after_it() {
    let mut t = with_active_timeout(Duration::from_secs(5));
    let k = FlowKey::v4(
        Ipv4Addr::new(198, 18, 0, 1),
        Ipv4Addr::new(198, 18, 0, 2),
        6,
        1000,
        80,
    );
    let s = 1_000_000_000u64;
    t.track(TrackInput {
        key: k,
        len: 60,
        ts_ns: 0,
        tcp_flags: tcp::SYN,
    });
    t.track(TrackInput {
        key: k.reversed(),
        len: 60,
        ts_ns: s,
        tcp_flags: tcp::FIN | tcp::ACK,
    });
    let r: Vec<_> = t.expire(6 * s).collect();
    assert_eq!(
        (r.len(), r[0].end, r[0].stats.closed),
        (1, EndReason::Active, true)
    );
    // Nothing since the report: no packets, and a period that starts where the last ended.
    let (_, quiet) = t.lookup(&k).unwrap();
    assert_eq!(
        (quiet.packets, quiet.first_ns, quiet.last_ns),
        ([0, 0], s, s)
    );
    t.track(TrackInput {
        key: k,
        len: 60,
        ts_ns: 7 * s,
        tcp_flags: tcp::ACK,
    });
    let (_, live) = t.lookup(&k).unwrap();
    assert_eq!((live.tcp_flags, live.closed), ([tcp::ACK, 0], true));
    // The next packet starts the period.
    assert_eq!((live.first_ns, live.last_ns), (7 * s, 7 * s));
    // 10 s after the last packet (tcp_closed), not the 2 h of an open connection.
    let gone: Vec<_> = t.expire(18 * s).collect();
    assert_eq!(gone.len(), 1);
    assert_eq!(
        (gone[0].end, gone[0].stats.closed),
        (EndReason::EndOfFlow, true)
    );
}

#[test]
fn the_initiator_is_the_first_sender_and_active_reports_add_up() {
    let mut t = with_active_timeout(Duration::from_secs(10));
    // The server end (198.18.0.1:53) is the canonical source; the client speaks first.
    let client = FlowKey::v4(
        Ipv4Addr::new(198, 18, 0, 9),
        Ipv4Addr::new(198, 18, 0, 1),
        17,
        4000,
        53,
    );
    assert_eq!(client.canonical().1, Direction::Reverse);
    let s = 1_000_000_000u64;
    let mut records = Vec::new();
    for i in 0..25u64 {
        t.track(TrackInput {
            key: client,
            len: 100,
            ts_ns: i * s,
            tcp_flags: 0,
        });
        t.track(TrackInput {
            key: client.reversed(),
            len: 300,
            ts_ns: i * s + 1,
            tcp_flags: 0,
        });
        records.extend(t.expire(i * s + 2));
    }
    records.extend(t.flush());
    let ends: Vec<_> = records.iter().map(|r| r.end).collect();
    assert_eq!(
        ends,
        [EndReason::Active, EndReason::Active, EndReason::Flush]
    );
    let oriented: Vec<_> = records.iter().map(|r| r.stats.oriented()).collect();
    for o in &oriented {
        assert_eq!(o.key, client);
        assert_eq!(o.initiator, Direction::Forward);
    }
    // Report periods: [0, 10 s], [11 s, 21 s], [22 s, 24 s].
    assert_eq!(oriented[0].first_ns, 0);
    assert_eq!(oriented[1].first_ns, 11 * s);
    assert_eq!(oriented[2].first_ns, 22 * s);
    assert_eq!(oriented.iter().map(|o| o.packets[0]).sum::<u64>(), 25);
    assert_eq!(oriented.iter().map(|o| o.bytes[1]).sum::<u64>(), 25 * 300);
}
