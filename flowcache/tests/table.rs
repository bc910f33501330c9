//! The flow table against a `HashMap` oracle, a 1M-key flood into a 64K table, and no
//! allocation per packet (counting allocator).

zcrx_ring::counting_allocator!();

use std::collections::HashMap;
use std::net::Ipv4Addr;

use proptest::prelude::*;
use zcrx_flowcache::{
    Direction, EndReason, FlowKey, FlowRecord, FlowTable, FlowTableConfig, FlowTableError, FlowTag,
    TcpSegment, Timeouts, TrackInput, MAX_CAPACITY,
};

/// A capacity past the table's direct-path limit for `track_batch` (4 096 slots, the private
/// `CACHED_SLOTS` of table/track.rs), so that batches take the fetching path.
const FETCHING_CAPACITY: usize = 8192;

fn key(n: u32, proto: u8) -> FlowKey {
    FlowKey::v4(
        Ipv4Addr::from(0xc612_0000 | (n & 0xffff)),
        Ipv4Addr::from(0xc613_0000 | (n >> 16)),
        proto,
        (n % 50_000) as u16,
        80,
    )
}

#[derive(Debug, Clone)]
enum Op {
    Track {
        flow: u32,
        reverse: bool,
        len: u16,
        dt: u64,
    },
    Expire {
        dt: u64,
    },
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    proptest::collection::vec(
        prop_oneof![
            20 => (0u32..200, any::<bool>(), 1u16..1500, 0u64..2_000_000_000).prop_map(|(flow, reverse, len, dt)| Op::Track { flow, reverse, len, dt }),
            1 => (0u64..90_000_000_000).prop_map(|dt| Op::Expire { dt }),
        ],
        1..600,
    )
}

/// Per canonical key: [packets fwd, packets rev, bytes fwd, bytes rev].
type Totals = HashMap<FlowKey, [u64; 4]>;

fn add(t: &mut Totals, r: &FlowRecord) {
    let e = t.entry(r.stats.key).or_default();
    e[0] += r.stats.packets[0];
    e[1] += r.stats.packets[1];
    e[2] += r.stats.bytes[0];
    e[3] += r.stats.bytes[1];
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Whatever the sequence of packets, expiries and evictions (a 32-slot table for 200
    /// flows evicts constantly), with or without an active timeout: live flows plus emitted
    /// records account for every packet and byte exactly as the oracle does (active reports
    /// are deltas that add up); no live flow is idle past its timeout after expire; every live
    /// flow is findable under its own id and knows its initiator.
    #[test]
    fn matches_hashmap_oracle(ops in ops(), seed in any::<u64>(), active_s in proptest::option::of(1u64..20)) {
        let timeouts = {
 let mut timeouts = Timeouts::default();
 timeouts.active = active_s.map(std::time::Duration::from_secs);
 timeouts
 };
        let mut t = FlowTable::new(FlowTableConfig::with_capacity(32).with_symmetric(true).with_timeouts(timeouts).with_seed(Some(seed))).expect("capacity within MAX_CAPACITY");
        let mut oracle: Totals = HashMap::new();
        let mut initiator: HashMap<FlowKey, Direction> = HashMap::new();
        let mut last_seen: HashMap<FlowKey, u64> = HashMap::new();
        let mut emitted: Totals = HashMap::new();
        let mut now = 0u64;
        for op in ops {
            match op {
                Op::Track { flow, reverse, len, dt } => {
                    now += dt;
                    let k = key(flow, 17);
                    let k = if reverse { k.reversed() } else { k };
                    let (canon, dir) = k.canonical();
                    let r = t.track(TrackInput { key: k, len: u32::from(len), ts_ns: now, tcp_flags: 0 });
                    prop_assert_eq!(r.dir, dir);
                    let evicted: Vec<_> = t.drain_evicted().collect();
                    prop_assert_eq!(evicted.len(), usize::from(r.evicted));
                    for ev in evicted {
                        prop_assert_eq!(ev.end, EndReason::Evicted);
                        prop_assert!(ev.stats.key != canon);
                        add(&mut emitted, &ev);
                        last_seen.remove(&ev.stats.key);
                    }
                    let e = oracle.entry(canon).or_default();
                    e[dir as usize] += 1;
                    e[2 + dir as usize] += u64::from(len);
                    prop_assert_eq!(r.created, !last_seen.contains_key(&canon));
                    if r.created {
                        initiator.insert(canon, dir);
                    }
                    last_seen.insert(canon, now);
                    let s = t.get(r.id).expect("id of a live flow");
                    prop_assert_eq!(s.key, canon);
                    prop_assert_eq!(s.last_ns, now);
                    prop_assert_eq!(s.initiator, initiator[&canon]);
                    let o = s.oriented();
                    prop_assert_eq!(o.key, if initiator[&canon] == dir { k } else { k.reversed() });
                }
                Op::Expire { dt } => {
                    now += dt;
                    let records: Vec<_> = t.expire(now).collect();
                    for r in records {
                        prop_assert!(r.stats.total_packets() > 0);
                        prop_assert_eq!(r.stats.initiator, initiator[&r.stats.key]);
                        add(&mut emitted, &r);
                        if r.end == EndReason::Active {
                            let a = active_s.expect("active reports only with an active timeout");
                            prop_assert!(now - r.stats.first_ns >= a * 1_000_000_000);
                            let (_, live) = t.lookup(&r.stats.key).expect("an active report keeps the flow");
                            prop_assert_eq!(live.total_packets(), 0);
                        } else {
                            prop_assert_eq!(r.end, EndReason::Idle);
                            prop_assert!(now - r.stats.last_ns > timeouts.udp.as_nanos() as u64);
                            last_seen.remove(&r.stats.key);
                        }
                    }
                    for (_, s) in t.iter() {
                        prop_assert!(now - s.last_ns <= timeouts.udp.as_nanos() as u64);
                    }
                }
            }
            if active_s.is_some() {
                // Flows that ended with nothing new since an active report leave silently.
                last_seen.retain(|k, _| t.lookup(k).is_some());
            }
            prop_assert!(t.len() <= t.capacity());
            prop_assert_eq!(t.len(), last_seen.len());
        }
        for (id, s) in t.iter() {
            prop_assert_eq!(t.get(id), Some(s));
            prop_assert_eq!(t.lookup(&s.key.reversed()).map(|x| x.0), Some(id));
        }
        for r in t.flush() {
            add(&mut emitted, &r);
        }
        prop_assert!(t.is_empty());
        prop_assert_eq!(emitted, oracle);
    }

    #[test]
    fn batch_tracking_equals_one_by_one(flows in proptest::collection::vec((0u32..300, any::<bool>(), 1u32..1500), 1..500), seed in any::<u64>(), large in any::<bool>()) {
        // Small: evictions, the direct path; large: the fetching path.
        let capacity = if large { FETCHING_CAPACITY } else { 64 };
        let cfg = FlowTableConfig::with_capacity(capacity).with_seed(Some(seed));
        let (mut one, mut many) = (FlowTable::new(cfg).expect("capacity within MAX_CAPACITY"), FlowTable::new(cfg).expect("capacity within MAX_CAPACITY"));
        let inputs: Vec<TrackInput> = flows.iter().enumerate().map(|(i, &(f, rev, len))| {
            let k = key(f, 6);
            TrackInput { key: if rev { k.reversed() } else { k }, len, ts_ns: i as u64, tcp_flags: 0x10 }
        }).collect();
        let a: Vec<_> = inputs.iter().map(|p| one.track(TrackInput { key: p.key, len: p.len, ts_ns: p.ts_ns, tcp_flags: p.tcp_flags })).collect();
        let mut b = Vec::new();
        many.track_batch(&inputs, |i, t| b.push((i, t)));
        prop_assert_eq!(b.iter().map(|x| x.0).collect::<Vec<_>>(), (0..inputs.len()).collect::<Vec<_>>());
        prop_assert_eq!(&a, &b.into_iter().map(|x| x.1).collect::<Vec<_>>());
        // An iterator of owned inputs (what an embedder's loop extracting as it goes passes):
        // the same answers, numbered in order, and the same records at the end.
        let mut iterated = FlowTable::new(cfg).expect("capacity within MAX_CAPACITY");
        let mut c = Vec::new();
        iterated.track_batch(inputs.iter().copied(), |i, t| c.push((i, t)));
        prop_assert_eq!(c.iter().map(|x| x.0).collect::<Vec<_>>(), (0..inputs.len()).collect::<Vec<_>>());
        prop_assert_eq!(&a, &c.into_iter().map(|x| x.1).collect::<Vec<_>>());
        let records = |t: &mut FlowTable| {
            let mut r: Vec<_> = t.drain_evicted().collect();
            r.extend(t.flush());
            r.sort_by_key(|r| (r.stats.key, r.stats.first_ns));
            r
        };
        let want = records(&mut one);
        prop_assert_eq!(&want, &records(&mut many));
        prop_assert_eq!(&want, &records(&mut iterated));
    }

    #[test]
    fn directional_mode_keeps_directions_apart(flows in proptest::collection::vec(0u32..50, 1..200)) {
        let mut t = FlowTable::new(FlowTableConfig::with_capacity(1024).with_symmetric(false)).expect("capacity within MAX_CAPACITY");
        for f in &flows {
            prop_assert_eq!(t.track(TrackInput { key: key(*f, 6), len: 60, ts_ns: 1, tcp_flags: 0 }).dir, Direction::Forward);
            prop_assert_eq!(t.track(TrackInput { key: key(*f, 6).reversed(), len: 60, ts_ns: 1, tcp_flags: 0 }).dir, Direction::Forward);
        }
        let distinct: std::collections::HashSet<_> = flows.iter().collect();
        prop_assert_eq!(t.len(), distinct.len() * 2);
    }
}

#[test]
fn flood_of_1m_keys_into_64k_table_keeps_memory_fixed_and_accounts_every_packet() {
    let mut t = FlowTable::new(FlowTableConfig::with_capacity(65_536).with_seed(Some(7)))
        .expect("capacity within MAX_CAPACITY");
    let mut evicted = 0u64;
    let mut packets_in_records = 0u64;
    let before = counting::thread_allocs();
    let mut x = 0x9e37_79b9u32;
    for i in 0..1_000_000u64 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5; // xorshift: 1M distinct-ish random keys
        let r = t.track(TrackInput {
            key: key(x, 17),
            len: 100,
            ts_ns: i,
            tcp_flags: 0,
        });
        if r.evicted {
            for ev in t.drain_evicted() {
                evicted += 1;
                packets_in_records += ev.stats.total_packets();
            }
        }
    }
    let during = counting::thread_allocs() - before;
    assert_eq!(during, 0, "track allocated");
    assert_eq!(t.capacity(), 65_536);
    assert!(
        t.len() <= 65_536 && t.len() > 60_000,
        "table filled: {}",
        t.len()
    );
    let live: u64 = t.iter().map(|(_, s)| s.total_packets()).sum();
    assert_eq!(
        live + packets_in_records,
        1_000_000,
        "every packet accounted"
    );
    assert!(evicted > 900_000);
}

/// A flood through a table larger than 4 096 slots (the fetching path of track_batch), with
/// evictions: the same results, evicted records included, as one track call per packet.
#[test]
fn batch_tracking_with_evictions_equals_one_by_one() {
    let cfg = {
        let mut config = FlowTableConfig::default();
        config.capacity = FETCHING_CAPACITY;
        config.seed = Some(7);
        // Room for every eviction of the run = both lists are compared whole at the end.
        config.evicted_room = 40_000;
        config
    };
    let (mut one, mut many) = (
        FlowTable::new(cfg).expect("capacity within MAX_CAPACITY"),
        FlowTable::new(cfg).expect("capacity within MAX_CAPACITY"),
    );
    let mut x = 0x1234_5678u32;
    let inputs: Vec<TrackInput> = (0..40_000u64)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            TrackInput {
                key: key(x % 30_000, 17),
                len: 100,
                ts_ns: i,
                tcp_flags: 0,
            }
        })
        .collect();
    let a: Vec<_> = inputs
        .iter()
        .map(|p| {
            one.track(TrackInput {
                key: p.key,
                len: p.len,
                ts_ns: p.ts_ns,
                tcp_flags: p.tcp_flags,
            })
        })
        .collect();
    let mut b = Vec::new();
    for chunk in inputs.chunks(1000) {
        many.track_batch(chunk, |_, t| b.push(t));
    }
    assert!(a.iter().filter(|t| t.evicted).count() > 10_000);
    assert_eq!(one.counters().lost, 0);
    assert!(one.drain_evicted().eq(many.drain_evicted()));
    assert_eq!(a, b);
}

/// The placement rule (first set while it has SPILL_FREE free ways, else the emptier of two)
/// lets a table fill past 80% before anything is evicted, with any seed: a single set choice
/// (first fit) evicts from about half full, which would lose live flows in a half-full table.
#[test]
fn first_eviction_comes_after_80_percent_fill() {
    for seed in 0..5u64 {
        let mut t = FlowTable::new(FlowTableConfig::with_capacity(65_536).with_seed(Some(seed)))
            .expect("capacity within MAX_CAPACITY");
        let mut x = 0x9e37_79b9u32 ^ seed as u32;
        let fill = loop {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            let k = FlowKey::v4(
                Ipv4Addr::from(x),
                Ipv4Addr::new(198, 18, 0, 1),
                17,
                1000,
                53,
            );
            if t.track(TrackInput {
                key: k,
                len: 1,
                ts_ns: 0,
                tcp_flags: 0,
            })
            .evicted
            {
                break (t.len() - 1) as f64 / t.capacity() as f64;
            }
        };
        assert!(fill > 0.8, "seed {seed}: first eviction at {fill:.3} full");
    }
}

/// The queue of evicted flows' records is bounded and allocated with the table: a caller
/// that never takes them tracks a flood of new flows through a full table (each packet
/// evicts one) without a single allocation, the queue holds the first `evicted_room`
/// records, oldest first, and every later one is counted as lost; once taken, the queue
/// has room again. A cloned table keeps the room allocated.
#[test]
fn a_caller_that_never_drains_loses_counted_records_and_never_allocates() {
    const ROOM: usize = 100;
    const FLOWS: u32 = 100_000;
    let mut t = FlowTable::new(
        FlowTableConfig::with_capacity(64)
            .with_seed(Some(3))
            .with_evicted_room(ROOM),
    )
    .expect("capacity within MAX_CAPACITY");
    assert_eq!(t.evicted_room(), ROOM);
    let mut evictions = 0u64;
    let before = counting::thread_allocs();
    for n in 0..FLOWS {
        let r = t.track(TrackInput {
            key: key(n, 17),
            len: 60,
            ts_ns: u64::from(n),
            tcp_flags: 0,
        });
        assert!(r.created);
        evictions += u64::from(r.evicted);
    }
    assert_eq!(counting::thread_allocs() - before, 0, "track allocated");
    let c = t.counters();
    assert_eq!(c.created, u64::from(FLOWS));
    assert_eq!(c.evicted, evictions);
    assert_eq!(c.evicted, u64::from(FLOWS) - t.len() as u64);
    assert!(
        evictions > 1000 * ROOM as u64 - 10_000,
        "{evictions} evictions"
    );
    assert_eq!(c.lost, evictions - ROOM as u64);
    // The queue holds the first evictions' records, oldest first (the newest were dropped):
    // those a twin table, drained after every packet, hands out first.
    let mut twin = FlowTable::new(
        FlowTableConfig::with_capacity(64)
            .with_seed(Some(3))
            .with_evicted_room(1),
    )
    .expect("capacity within MAX_CAPACITY");
    let mut first = Vec::new();
    for n in 0..FLOWS {
        twin.track(TrackInput {
            key: key(n, 17),
            len: 60,
            ts_ns: u64::from(n),
            tcp_flags: 0,
        });
        first.extend(twin.drain_evicted());
    }
    assert_eq!(twin.counters().lost, 0);
    let queued: Vec<FlowRecord> = t.drain_evicted().collect();
    assert_eq!(queued.len(), ROOM);
    assert!(queued.iter().all(|r| r.end == EndReason::Evicted));
    assert_eq!(queued, first[..ROOM]);
    // Room again after the take: the next eviction is queued, not lost.
    let r = t.track(TrackInput {
        key: key(FLOWS, 17),
        len: 60,
        ts_ns: u64::from(FLOWS),
        tcp_flags: 0,
    });
    assert!(r.evicted);
    assert_eq!(t.counters().lost, c.lost);
    assert_eq!(t.drain_evicted().count(), 1);
    // A clone's queue has the same room allocated: filling it allocates nothing.
    let mut copy = t.clone();
    let before = counting::thread_allocs();
    for n in 2 * FLOWS..2 * FLOWS + ROOM as u32 {
        assert!(
            copy.track(TrackInput {
                key: key(n, 17),
                len: 60,
                ts_ns: u64::from(n),
                tcp_flags: 0
            })
            .evicted
        );
    }
    assert_eq!(
        counting::thread_allocs() - before,
        0,
        "the clone's queue allocated"
    );
    assert_eq!(copy.counters().lost, c.lost);
    assert_eq!(copy.drain_evicted().count(), ROOM);
}

#[test]
fn steady_state_tracking_does_not_allocate() {
    let mut t = FlowTable::with_capacity(4096).expect("capacity within MAX_CAPACITY");
    for f in 0..1000 {
        t.track(TrackInput {
            key: key(f, 17),
            len: 64,
            ts_ns: 0,
            tcp_flags: 0,
        });
    }
    let before = counting::thread_allocs();
    for i in 0..100_000u32 {
        let r = t.track(TrackInput {
            key: key(i % 1000, 17).reversed(),
            len: 64,
            ts_ns: u64::from(i),
            tcp_flags: 0,
        });
        assert!(!r.created);
    }
    let expired = t.expire(u64::MAX).count();
    assert_eq!(counting::thread_allocs() - before, 0);
    assert_eq!(expired, 1000);
}

/// A table that follows TCP states allocates them with itself: tracking a flood of TCP
/// flows through a full table, each segment observed, and taking every flow's end with its
/// state (evicted, expired, flushed), allocates nothing.
#[test]
fn tcp_states_allocate_nothing_after_the_table() {
    let mut t = FlowTable::new(
        FlowTableConfig::with_capacity(1024)
            .with_seed(Some(11))
            .with_tcp_state(true),
    )
    .expect("capacity within MAX_CAPACITY");
    let before = counting::thread_allocs();
    let (mut ends, mut with_state) = (0u64, 0u64);
    for n in 0..50_000u32 {
        for (i, flags) in [0x02u8, 0x12, 0x10].into_iter().enumerate() {
            let k = key(n, 6);
            let r = t.track(TrackInput {
                key: if i == 1 { k.reversed() } else { k },
                len: 60,
                ts_ns: u64::from(n) * 3 + i as u64,
                tcp_flags: flags,
            });
            let seg = TcpSegment::new(flags, 1000 + i as u32, 0, 0, 512);
            t.observe_tcp(r.id, r.dir, &seg);
            while let Some(e) = t.pop_evicted_end() {
                ends += 1;
                with_state += u64::from(e.tcp.is_some_and(|s| s.history() == "ShA"));
            }
        }
    }
    // An hour later every flow has expired.
    for e in t.expire_ends(3_600_000_000_000) {
        ends += 1;
        with_state += u64::from(e.tcp.is_some_and(|s| s.history() == "ShA"));
    }
    assert_eq!(
        counting::thread_allocs() - before,
        0,
        "TCP states allocated"
    );
    assert!(t.is_empty());
    assert_eq!(t.counters().lost, 0);
    assert_eq!(ends, 50_000);
    assert_eq!(with_state, 50_000, "every flow's end with its own state");
}

#[cfg(feature = "serde")]
#[test]
fn flow_record_serializes_with_serde() {
    let mut t = FlowTable::with_capacity(16).expect("capacity within MAX_CAPACITY");
    let k = FlowKey::v4(
        Ipv4Addr::new(198, 18, 0, 1),
        Ipv4Addr::new(198, 18, 0, 2),
        17,
        1234,
        53,
    )
    .with_vlan(7);
    t.track(TrackInput {
        key: k,
        len: 100,
        ts_ns: 5,
        tcp_flags: 0,
    });
    t.track(TrackInput {
        key: k.reversed(),
        len: 60,
        ts_ns: 9,
        tcp_flags: 0,
    });
    let r = t.flush().next().unwrap();
    let v: serde_json::Value = serde_json::to_value(r).unwrap();
    assert_eq!(v["key"]["src"], "198.18.0.1");
    assert_eq!(v["key"]["dport"], 53);
    assert_eq!(v["key"]["vlan"], 7);
    assert_eq!(v["packets"], serde_json::json!([1, 1]));
    assert_eq!(v["bytes"], serde_json::json!([100, 60]));
    assert_eq!(v["end"], "flush");
    assert_eq!(v["last_ns"], 9);
}

/// A tag is 8 bytes and gives back the id and direction it was made of, for ids of a real
/// table (slot 0 and the last slot among them, generations above 0 after reuse) and for no
/// flow in either direction.
#[test]
fn a_flow_tag_is_eight_bytes_and_round_trips() {
    assert_eq!(std::mem::size_of::<FlowTag>(), 8);
    let mut t = FlowTable::new({
        let mut config = FlowTableConfig::default();
        config.capacity = 64;
        config.timeouts = {
            let mut timeouts = Timeouts::default();
            timeouts.udp = std::time::Duration::from_nanos(10);
            timeouts
        };
        config
    })
    .expect("capacity within MAX_CAPACITY");
    let mut ids = Vec::new();
    for round in 0..3u64 {
        for n in 0..40 {
            ids.push(
                t.track(TrackInput {
                    key: key(n, 17),
                    len: 60,
                    ts_ns: round * 1_000,
                    tcp_flags: 0,
                })
                .id,
            );
        }
        assert_eq!(t.expire(round * 1_000 + 500).count(), 40); // every slot moves on
    }
    assert!(ids.iter().any(|i| i.generation() > 1), "slots were reused");
    for id in ids {
        for dir in [Direction::Forward, Direction::Reverse] {
            let tag = FlowTag::new(Some(id), dir);
            assert_eq!((tag.id(), tag.dir()), (Some(id), dir));
        }
    }
    for dir in [Direction::Forward, Direction::Reverse] {
        let tag = FlowTag::new(None, dir);
        assert_eq!((tag.id(), tag.dir()), (None, dir));
    }
    assert_eq!(FlowTag::default(), FlowTag::NONE);
    assert_eq!(FlowTag::NONE.id(), None);
}

/// A capacity whose slot indexes would not fit a tag is refused with a typed error, not
/// truncated; the most is accepted as a configuration.
#[test]
fn a_capacity_over_the_most_is_refused() {
    let err = FlowTable::new(FlowTableConfig::with_capacity(MAX_CAPACITY + 1)).unwrap_err();
    assert_eq!(
        err,
        FlowTableError::CapacityTooLarge {
            requested: MAX_CAPACITY + 1,
            max: MAX_CAPACITY
        }
    );
    assert!(err.to_string().contains("exceeds the maximum"), "{err}");
    assert!(FlowTable::with_capacity(MAX_CAPACITY + 1).is_err());
}

/// End reasons and directions print as their names and parse back; other names are refused
/// with the list of known ones.
#[test]
fn names_round_trip() {
    for r in EndReason::ALL {
        assert_eq!(r.to_string().parse::<EndReason>(), Ok(r));
    }
    assert_eq!(EndReason::EndOfFlow.to_string(), "end_of_flow");
    let err = "timeout".parse::<EndReason>().unwrap_err().to_string();
    assert!(
        err.contains("\"timeout\"") && err.contains("end_of_flow"),
        "{err}"
    );
    for d in [Direction::Forward, Direction::Reverse] {
        assert_eq!(d.to_string().parse::<Direction>(), Ok(d));
    }
    assert!("sideways".parse::<Direction>().is_err());
}

/// `drain_evicted` hands out exactly the records waiting, of flows no longer in the table,
/// and knows how many.
#[test]
fn drained_records_count_themselves() {
    let config = FlowTableConfig::with_capacity(16).with_seed(Some(3));
    let mut t = FlowTable::new(config).expect("16 flows is within MAX_CAPACITY");
    let mut evicted = 0;
    for n in 0..200 {
        let input = TrackInput {
            key: key(n, 17),
            len: 60,
            ts_ns: u64::from(n),
            tcp_flags: 0,
        };
        evicted += usize::from(t.track(input).evicted);
    }
    assert!(evicted > 0);
    let drained = t.drain_evicted();
    assert_eq!(drained.len(), evicted);
    let records: Vec<_> = drained.collect();
    assert!(records
        .windows(2)
        .all(|w| w[0].stats.last_ns <= w[1].stats.last_ns));
    assert_eq!(t.drain_evicted().len(), 0);
}

/// MemTotal + SwapTotal, bytes.
fn memory_and_swap() -> usize {
    let info = std::fs::read_to_string("/proc/meminfo").expect("/proc/meminfo");
    info.lines()
        .filter(|l| l.starts_with("MemTotal:") || l.starts_with("SwapTotal:"))
        .filter_map(|l| l.split_whitespace().nth(1)?.parse::<usize>().ok())
        .sum::<usize>()
        * 1024
}

#[test]
fn a_table_the_allocator_refuses_is_an_error_not_an_abort() {
    let config = FlowTableConfig::with_capacity(MAX_CAPACITY);
    let bytes = config.memory_bytes();
    assert!(
        bytes > MAX_CAPACITY * 64,
        "{bytes} bytes for {MAX_CAPACITY} flows"
    );
    // The kernel's default heuristic (overcommit_memory 0) and strict accounting (2) refuse
    // an allocation larger than memory and swap together; "always" (1) grants it.
    let mode = std::fs::read_to_string("/proc/sys/vm/overcommit_memory").unwrap_or_default();
    if mode.trim() == "1" || bytes <= memory_and_swap() {
        eprintln!("not run: this machine would grant {bytes} bytes (overcommit_memory {mode})");
        return;
    }
    match FlowTable::new(config) {
        Err(e @ FlowTableError::Alloc { .. }) => {
            assert!(e.to_string().contains("cannot allocate"), "{e}");
        }
        Err(e) => panic!("another error: {e}"),
        Ok(_) => panic!("{bytes} bytes granted beyond memory and swap"),
    }
    assert_eq!(
        FlowTable::new(FlowTableConfig::with_capacity(MAX_CAPACITY + 1)).err(),
        Some(FlowTableError::CapacityTooLarge {
            requested: MAX_CAPACITY + 1,
            max: MAX_CAPACITY
        })
    );
}
