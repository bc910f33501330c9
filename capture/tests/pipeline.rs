//! The pipeline over a synthetic ring (no privileges) and over a live ring in a netns lab.

mod common;

use std::collections::{HashMap, HashSet};
use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use zcrx_capture::copy::Routine;
use zcrx_capture::{
    ConfigError, Consumer, Consumers, Delivered, Delivery, Hooks, Pipeline, PipelineConfig,
    PipelineError, Setting, Steering,
};
use zcrx_flowcache::{extract, Direction, FlowId, FlowKey, LinkType};
use zcrx_ring::frames::{frame_seq, UdpFlow};
use zcrx_ring::{Frame, SyntheticRing};

const MODES: [Delivery; Delivery::ALL.len()] = Delivery::ALL;

fn flow(i: usize) -> UdpFlow {
    UdpFlow {
        src_mac: [2, 0, 0, 0, 0, 1],
        dst_mac: [2, 0, 0, 0, 0, 2],
        src_ip: Ipv4Addr::new(198, 18, (i >> 8) as u8, i as u8),
        dst_ip: Ipv4Addr::new(198, 19, 0, 1),
        sport: 1024 + i as u16,
        dport: 9000,
        vlan: None,
    }
}

/// A synthetic ring of `sent`'s frames, in blocks of `block_size` bytes.
fn ring_of(sent: &[Vec<u8>], block_size: usize) -> SyntheticRing {
    SyntheticRing::builder()
        .block_size(block_size)
        .build(sent.iter().map(|f| Frame::new(f.clone())))
        .unwrap()
}

/// `packets` frames over `flows` flows (every third packet in the reverse direction), plus an
/// ARP frame every 500; seq = index.
fn traffic(flows: usize, packets: usize) -> Vec<Vec<u8>> {
    (0..packets)
        .map(|seq| {
            if seq % 500 == 499 {
                let mut arp = vec![0xff; 6];
                arp.extend_from_slice(&[2, 0, 0, 0, 0, 1, 0x08, 0x06]);
                arp.extend_from_slice(&(seq as u64).to_be_bytes());
                arp.resize(60, 0);
                return arp;
            }
            let f = flow((seq * 7919) % flows);
            let f = if seq % 3 == 2 { f.reversed() } else { f };
            f.frame(seq as u64, 60 + (seq * 53) % 1400)
        })
        .collect()
}

/// Canonical flow of one of our frames: (low sport/dport ... ) -> the flow index's port.
fn flow_port(frame: &[u8]) -> Option<u16> {
    if frame.get(12..14)? != [0x08, 0x00] {
        return None;
    }
    let (s, d) = (
        u16::from_be_bytes([frame[34], frame[35]]),
        u16::from_be_bytes([frame[36], frame[37]]),
    );
    Some(if s == 9000 { d } else { s })
}

/// (consumer, seq, bytes, the flow as delivered: key read back, id, direction).
type Seen = Vec<(usize, u64, Vec<u8>, DeliveredFlow)>;
type DeliveredFlow = (Option<FlowKey>, Option<FlowId>, Direction);

/// The sequence number of one of `traffic`'s frames (UDP payload or the ARP frame's tail).
fn seq(data: &[u8]) -> u64 {
    frame_seq(data).unwrap_or_else(|| u64::from_be_bytes(data[14..22].try_into().unwrap()))
}

/// Whether `mode`'s copy routine exists on this CPU and target.
fn runs_here(mode: Delivery) -> bool {
    match mode {
        Delivery::Copy(r) => zcrx_capture::copy::Copier::new(r).is_ok(),
        _ => true,
    }
}

/// A consumer that keeps what it saw and hands it back when the run ends.
#[derive(Default)]
struct Collect(Seen);

impl Consumer for Collect {
    type Output = Seen;
    fn packet(&mut self, d: &Delivered<'_>) {
        let flow = (d.flow_key(), d.flow().id(), d.flow().dir());
        self.0
            .push((d.consumer(), seq(d.data()), d.data().to_vec(), flow));
    }
    fn finish(self) -> Seen {
        self.0
    }
}

#[test]
fn every_packet_once_to_its_owner_in_order_with_identical_bytes_in_every_mode() {
    // The tag crosses to the consumer with every packet: it stays small (the key is read
    // back from the frame on demand).
    assert_eq!(std::mem::size_of::<zcrx_capture::FlowTag>(), 8);
    let sent = traffic(1000, 20_000);
    // One consumer thread is handed whole blocks, several are handed batches of descriptors.
    for (mode, threads) in MODES.into_iter().flat_map(|m| [(m, 1), (m, 4)]) {
        let ring = ring_of(&sent, 64 * 1024);
        let config = PipelineConfig::builder()
            .consumers(Consumers::threads(threads))
            .delivery(mode)
            .build()
            .unwrap();
        let run = match Pipeline::new(&ring, config).run(|_| Collect::default(), Hooks::new()) {
            Ok(run) => run,
            // A routine this CPU or target lacks (AVX2, or anything x86 elsewhere) is refused
            // up front, with nothing taken from the ring.
            Err(PipelineError::Copy(e)) if !runs_here(mode) => {
                assert_eq!(ring.map().blocks_held(), 0, "{e}");
                continue;
            }
            Err(e) => panic!("{mode:?}: {e}"),
        };
        let stats = run.stats;
        assert_eq!(run.outputs.len(), threads, "one result per consumer");
        let seen: Seen = run.outputs.into_iter().flatten().collect();
        assert_eq!(stats.packets, sent.len() as u64, "{mode:?}");
        assert_eq!(seen.len(), sent.len(), "{mode:?}: delivered count");
        assert_eq!(
            stats.consumers.iter().map(|c| c.packets).sum::<u64>(),
            sent.len() as u64
        );
        assert_eq!(stats.non_ip, (sent.len() / 500) as u64);
        let mut once = HashSet::new();
        let mut owner: HashMap<u16, usize> = HashMap::new();
        let mut last: HashMap<u16, u64> = HashMap::new();
        let mut ids: HashMap<FlowKey, FlowId> = HashMap::new();
        for (consumer, seq, bytes, (key, id, dir)) in &seen {
            // The tag and the key read back from the delivered bytes: the stage's flow,
            // one id per flow (both directions), the direction relative to the canonical key.
            match extract(LinkType::Ethernet, &sent[*seq as usize], None) {
                Ok(x) => {
                    assert_eq!(*key, Some(x.key), "{mode:?}: packet {seq}'s key");
                    let (canonical, d) = x.key.canonical();
                    assert_eq!(*dir, d, "{mode:?}: packet {seq}'s direction");
                    let id = id.expect("a flow's packet has an id");
                    assert_eq!(*ids.entry(canonical).or_insert(id), id, "{mode:?}: one id");
                }
                Err(_) => assert_eq!((*key, *id), (None, None), "{mode:?}: packet {seq}"),
            }
            assert!(once.insert(*seq), "{mode:?}: packet {seq} delivered twice");
            assert_eq!(
                bytes, &sent[*seq as usize],
                "{mode:?}: packet {seq} bytes differ"
            );
            match flow_port(bytes) {
                Some(port) => {
                    assert_eq!(
                        *owner.entry(port).or_insert(*consumer),
                        *consumer,
                        "{mode:?}: flow {port} has two owners"
                    );
                    // Per-flow order: handlers of one consumer run in delivery order.
                    if let Some(prev) = last.insert(port, *seq) {
                        assert!(
                            prev < *seq,
                            "{mode:?}: flow {port} reordered ({prev} then {seq})"
                        );
                    }
                }
                None => assert_eq!(*consumer, 0, "non-IP frames go to consumer 0"),
            }
        }
        let per_consumer: HashSet<usize> = owner.values().copied().collect();
        assert_eq!(
            per_consumer.len(),
            threads,
            "{mode:?}: 1000 flows spread over all {threads} consumers"
        );
        assert_eq!(ring.map().blocks_held(), 0, "every block handed back");
        let flows: HashSet<u16> = sent.iter().filter_map(|f| flow_port(f)).collect();
        assert_eq!(stats.flows_created, flows.len() as u64);
        assert_eq!(owner.len(), flows.len());
    }
}

#[test]
fn a_sleeping_consumer_withholds_blocks_but_loses_and_duplicates_nothing() {
    let sent = traffic(50, 3000);
    let ring = ring_of(&sent, 4096);
    let seen: Mutex<Vec<u64>> = Mutex::new(Vec::new());
    let config = PipelineConfig::builder()
        .consumers(Consumers::Threads {
            count: 2,
            queue_depth: 1,
        })
        .delivery(Delivery::ZeroCopy)
        .build()
        .unwrap();
    let stats = Pipeline::new(&ring, config)
        .run(
            |i| {
                let seen = &seen;
                move |d: &Delivered<'_>| {
                    if i == 0 {
                        std::thread::sleep(Duration::from_micros(200));
                    }
                    let seq = seq(d.data());
                    seen.lock().unwrap().push(seq);
                }
            },
            Hooks::new(),
        )
        .unwrap()
        .stats;
    let mut seen = seen.into_inner().unwrap();
    assert!(
        stats.queue_full > 0,
        "the slow consumer filled its queue: {stats:?}"
    );
    // Each consumer holds at most one batch in hand and `queue_depth` queued; the stage one more.
    assert!(
        stats.max_blocks_held <= 2 * (1 + 1) + 1,
        "blocks withheld: {}",
        stats.max_blocks_held
    );
    seen.sort_unstable();
    assert_eq!(
        seen,
        (0..sent.len() as u64).collect::<Vec<_>>(),
        "each packet exactly once"
    );
    assert_eq!(ring.map().blocks_held(), 0);
}

#[test]
fn a_stop_token_ends_an_endless_run_and_returns_every_block() {
    let sent = traffic(256, 2000);
    // One consumer thread (whole blocks) and two (descriptor batches).
    for threads in [1, 2] {
        let ring = SyntheticRing::builder()
            .block_size(16 * 1024)
            .replay(true)
            .build(sent.iter().map(|f| Frame::new(f.clone())))
            .unwrap();
        let count = AtomicU64::new(0);
        let config = PipelineConfig::builder()
            .consumers(Consumers::threads(threads))
            .delivery(Delivery::Copy(Routine::Auto))
            .build()
            .unwrap();
        let pipeline = Pipeline::new(&ring, config);
        let stop = pipeline.stop_token();
        let stats = std::thread::scope(|s| {
            s.spawn(|| {
                while count.load(Ordering::Relaxed) < 50_000 {
                    std::thread::yield_now();
                }
                stop.stop();
            });
            pipeline
                .run(|_| common::counting(&count), Hooks::new())
                .unwrap()
                .stats
        });
        assert!(stats.packets >= 50_000);
        assert_eq!(
            stats.packets,
            count.load(Ordering::Relaxed),
            "{threads} threads: what the stage took was delivered"
        );
        assert_eq!(ring.map().blocks_held(), 0, "every block handed back");
        // The run reports the copier it used: the one `Delivery::copier` makes for this ring's
        // blocks (what zcap's listening line prints), never streaming into it.
        let made = Delivery::Copy(Routine::Auto)
            .copier(16 * 1024)
            .unwrap()
            .unwrap()
            .describe();
        assert_eq!(stats.copier.as_deref(), Some(made.as_str()));
        assert!(made.starts_with("auto: "), "{made}");
        assert!(made.contains("never non-temporal"), "{made}");
    }
}

#[test]
fn max_packets_is_exact_and_flows_are_reported() {
    let sent = traffic(100, 5000);
    // 1234 ends inside a block: one consumer thread, handed whole blocks, must stop there too.
    for threads in [1, 3] {
        let ring = ring_of(&sent, 64 * 1024);
        let count = AtomicU64::new(0);
        let mut records = 0u64;
        let mut packets_in_records = 0u64;
        let config = PipelineConfig::builder()
            .consumers(Consumers::threads(threads))
            .max_packets_opt(Some(1234))
            .build()
            .unwrap();
        let stats = Pipeline::new(&ring, config)
            .run(
                |_| common::counting(&count),
                Hooks::new().on_flow_end(|r| {
                    records += 1;
                    packets_in_records += r.stats.total_packets();
                }),
            )
            .unwrap()
            .stats;
        assert_eq!(stats.packets, 1234);
        assert_eq!(count.load(Ordering::Relaxed), 1234);
        assert_eq!(records, stats.flows_created);
        assert_eq!(
            packets_in_records,
            1234 - stats.non_ip,
            "every IP packet is in exactly one flow record"
        );
        assert_eq!(ring.map().blocks_held(), 0);
    }
}

/// A flood of new flows through a 16-flow table, thousands of packets in a block and each
/// packet evicting a flow: the stage takes evicted flows' records after each block, and its
/// table keeps room for a block's packets whatever the configuration asks (here 1), so every
/// record reaches `on_flow_end` and none is lost.
#[test]
fn a_block_of_evictions_loses_no_record() {
    let sent: Vec<Vec<u8>> = (0..20_000).map(|i| flow(i).frame(i as u64, 64)).collect();
    let ring = ring_of(&sent, 1 << 20);
    let config = inline(Delivery::ZeroCopy, true)
        .to_builder()
        .steering(Steering::Flows(
            zcrx_flowcache::FlowTableConfig::with_capacity(16).with_evicted_room(1),
        ))
        .build()
        .unwrap();
    let (mut records, mut evicted) = (0u64, 0u64);
    let run = Pipeline::new(&ring, config)
        .run(
            |_| |_: &Delivered<'_>| {},
            Hooks::new().on_flow_end(|r| {
                records += 1;
                evicted += u64::from(r.end == zcrx_flowcache::EndReason::Evicted);
            }),
        )
        .unwrap();
    assert!(
        run.stats.blocks < 10,
        "{} blocks: several thousand packets each",
        run.stats.blocks
    );
    assert_eq!(run.stats.flows_created, 20_000);
    assert_eq!(run.stats.flows_lost, 0);
    assert_eq!(records, 20_000, "one record per flow");
    assert_eq!(evicted, 20_000 - 16);
}

#[test]
fn bad_settings_are_refused_when_built() {
    let refused = |b: zcrx_capture::PipelineConfigBuilder| b.build().expect_err("accepted");
    let b = PipelineConfig::builder;
    assert_eq!(
        refused(b().consumers(Consumers::threads(0))),
        ConfigError::ConsumerCount { count: 0 }
    );
    assert_eq!(
        refused(b().consumers(Consumers::threads(1025))),
        ConfigError::ConsumerCount { count: 1025 }
    );
    let e = refused(b().consumers(Consumers::threads_with_queue(1, 0)));
    assert_eq!(e, ConfigError::ZeroQueueDepth);
    assert!(e.to_string().contains("queue depth of 0"), "{e}");
    let e = refused(b().consumers(Consumers::threads(2)).steering(Steering::Off));
    assert_eq!(e, ConfigError::UnsteeredConsumers { consumers: 2 });
    assert!(e.to_string().contains("exactly one consumer, not 2"), "{e}");
    let e = refused(b().tick_every(std::time::Duration::ZERO));
    assert_eq!(e, ConfigError::ZeroInterval(Setting::TickEvery));
    assert_eq!(e.to_string(), "tick_every must be longer than zero");
    let max = zcrx_flowcache::MAX_CAPACITY;
    let e = refused(b().steering(Steering::Flows(
        zcrx_flowcache::FlowTableConfig::with_capacity(max + 1),
    )));
    assert!(
        matches!(e, ConfigError::FlowTable(_)),
        "a table over MAX_CAPACITY: {e:?}"
    );
    assert!(e.to_string().contains("exceeds the maximum"), "{e}");
    // At the limits: accepted.
    for ok in [
        b().consumers(Consumers::threads(1024)),
        b().consumers(Consumers::Inline).steering(Steering::Off),
        b().consumers(Consumers::threads(1)).steering(Steering::Off),
        b().steering(Steering::Flows(
            zcrx_flowcache::FlowTableConfig::with_capacity(max),
        )),
    ] {
        ok.build().unwrap();
    }
}

#[test]
fn delivery_and_routine_names_parse_and_print() {
    for d in Delivery::ALL {
        assert_eq!(d.to_string().parse::<Delivery>(), Ok(d));
        assert_eq!(Delivery::from_name(&d.name()), Some(d));
    }
    assert_eq!(
        "copy-nt".parse::<Delivery>(),
        Ok(Delivery::Copy(Routine::NonTemporal))
    );
    assert_eq!(Delivery::from_name("copy-fast"), None);
    let e = "copy-fast".parse::<Delivery>().unwrap_err();
    assert_eq!(e.name(), "copy-fast");
    assert!(
        e.to_string()
            .contains("unknown delivery \"copy-fast\"; one of: zerocopy, copy-libc"),
        "{e}"
    );
    for r in Routine::ALL {
        assert_eq!(r.to_string().parse::<Routine>(), Ok(r));
    }
    let e = "avx9".parse::<Routine>().unwrap_err().to_string();
    assert!(
        e.contains("unknown copy routine \"avx9\"; one of: libc, erms"),
        "{e}"
    );
}

/// An inline consumer with `mode` delivery, with or without flows.
fn inline(mode: Delivery, track: bool) -> PipelineConfig {
    PipelineConfig::builder()
        .consumers(Consumers::Inline)
        .steering(if track {
            Steering::Flows(Default::default())
        } else {
            Steering::Off
        })
        .delivery(mode)
        .build()
        .unwrap()
}

#[test]
fn inline_consumer_sees_every_packet_once_in_ring_order() {
    let sent = traffic(300, 5000);
    for (mode, track) in [
        (Delivery::ZeroCopy, true),
        (Delivery::ZeroCopy, false),
        (Delivery::Copy(Routine::Auto), true),
    ] {
        let ring = ring_of(&sent, 16 * 1024);
        let seen: Mutex<Vec<(u64, Vec<u8>, bool)>> = Mutex::new(Vec::new());
        let config = inline(mode, track);
        let stats = Pipeline::new(&ring, config)
            .run(
                |_| {
                    let seen = &seen;
                    move |d: &Delivered<'_>| {
                        let seq = seq(d.data());
                        seen.lock().unwrap().push((
                            seq,
                            d.data().to_vec(),
                            d.flow().id().is_some(),
                        ));
                    }
                },
                Hooks::new(),
            )
            .unwrap()
            .stats;
        let seen = seen.into_inner().unwrap();
        assert_eq!(stats.packets, sent.len() as u64);
        assert_eq!(stats.consumers[0].packets, sent.len() as u64);
        assert_eq!(seen.len(), sent.len(), "{mode:?}");
        for (i, (seq, bytes, keyed)) in seen.iter().enumerate() {
            assert_eq!(*seq, i as u64, "ring order");
            assert_eq!(bytes, &sent[i]);
            assert_eq!(*keyed, track && flow_port(bytes).is_some());
        }
        assert_eq!(ring.map().blocks_held(), 0);
    }
}

/// Keeps the byte slices of each `packets` call until the call ends and checks them there:
/// calls (of `packets` or `packet`), the bytes of every packet in order, whether a call's
/// slices all still held their bytes at its end.
/// With `steered`, it asks for whole steered blocks ([`Consumer::wants_steered_blocks`]);
/// `flows` are the flow ids and directions it was handed, `linked` whether every packet
/// came with its link-layer address at hand (an inline consumer's packets do).
#[derive(Default)]
struct Held {
    calls: u64,
    seen: Vec<Vec<u8>>,
    intact: bool,
    steered: bool,
    flows: Vec<(Option<zcrx_flowcache::FlowId>, zcrx_flowcache::Direction)>,
    linked: bool,
}

impl Consumer for Held {
    type Output = Held;
    fn packet(&mut self, d: &Delivered<'_>) {
        self.calls += 1;
        self.seen.push(d.data().to_vec());
        self.flows.push((d.flow().id(), d.flow().dir()));
        self.linked &= d.link().is_some();
    }
    fn packets<'a>(&mut self, packets: impl Iterator<Item = Delivered<'a>>) {
        self.calls += 1;
        let mut flows = Vec::new();
        let mut linked = true;
        let held: Vec<(&'a [u8], Vec<u8>)> = packets
            .map(|d| {
                flows.push((d.flow().id(), d.flow().dir()));
                linked &= d.link().is_some();
                (d.data(), d.data().to_vec())
            })
            .collect();
        self.intact &= held.iter().all(|(now, then)| now == then);
        self.seen.extend(held.into_iter().map(|(_, copy)| copy));
        self.flows.extend(flows);
        self.linked &= linked;
    }
    fn wants_steered_blocks(&self) -> bool {
        self.steered
    }
    fn finish(self) -> Held {
        self
    }
}

#[test]
fn packets_hands_over_whole_blocks_inline_and_whole_batches_on_threads() {
    let sent = traffic(300, 5000);
    let build = || ring_of(&sent, 16 * 1024);
    let held = |steered| Held {
        intact: true,
        steered,
        linked: true,
        ..Default::default()
    };
    // The flows of the one-by-one inline run with flows, to compare the steered runs with.
    let mut one_by_one = None;
    for (mode, track, max, steered) in [
        (Delivery::ZeroCopy, false, None, false),
        (Delivery::ZeroCopy, false, Some(1234), false),
        (Delivery::ZeroCopy, true, None, false),
        (Delivery::ZeroCopy, true, None, true),
        (Delivery::ZeroCopy, true, Some(1234), true),
        (Delivery::Copy(Routine::Auto), false, None, false),
        (Delivery::Copy(Routine::Auto), true, None, true),
    ] {
        let ring = build();
        let mut config = inline(mode, track).to_builder().max_packets_opt(max);
        if track {
            // One seed for every run: the same flows get the same slots, so their ids compare.
            config = config.steering(Steering::Flows(
                zcrx_flowcache::FlowTableConfig::default().with_seed(Some(7)),
            ));
        }
        let config = config.build().unwrap();
        let run = Pipeline::new(&ring, config)
            .run(|_| held(steered), Hooks::new())
            .unwrap();
        let h = &run.outputs[0];
        let n = max.unwrap_or(sent.len() as u64);
        let case = format!("{mode:?} track {track} max {max:?} steered {steered}");
        assert_eq!(h.seen, sent[..n as usize], "{case}: every packet in order");
        assert!(
            h.intact,
            "{case}: a call's bytes stay readable until it returns"
        );
        assert!(h.linked, "{case}: the link-layer address at hand");
        // Steered blocks: the packets' flows are those the one-by-one run handed over.
        if track && max.is_none() && mode == Delivery::ZeroCopy {
            if steered {
                assert!(
                    Some(&h.flows) == one_by_one.as_ref(),
                    "{case}: the same flows as one by one"
                );
            } else {
                assert!(h.flows.iter().any(|f| f.0.is_some()));
                one_by_one = Some(h.flows.clone());
            }
        }
        let whole_blocks = mode == Delivery::ZeroCopy && (!track || steered);
        let calls = if whole_blocks { run.stats.blocks } else { n };
        assert_eq!(h.calls, calls, "{case}: one call per block, or per packet");
        assert_eq!(run.stats.packets, n);
        assert_eq!(run.stats.consumers[0].packets, n);
        assert_eq!(ring.map().blocks_held(), 0);
    }
    for mode in [Delivery::ZeroCopy, Delivery::Copy(Routine::Auto)] {
        let ring = build();
        let config = PipelineConfig::builder()
            .consumers(Consumers::threads(2))
            .delivery(mode)
            .build()
            .unwrap();
        let run = Pipeline::new(&ring, config)
            .run(|_| held(false), Hooks::new())
            .unwrap();
        let batches: u64 = run.stats.consumers.iter().map(|c| c.batches).sum();
        let calls: u64 = run.outputs.iter().map(|h| h.calls).sum();
        assert_eq!(calls, batches, "{mode:?}: one call per batch");
        assert!(run.outputs.iter().all(|h| h.intact));
        let seen: usize = run.outputs.iter().map(|h| h.seen.len()).sum();
        assert_eq!(seen, sent.len());
        assert_eq!(ring.map().blocks_held(), 0);
    }
}

/// A consumer that wants steered blocks is handed blocks of small frames one by one all the
/// same (the second walk would cost more than it saves), with the flows of a consumer that
/// does not.
#[test]
fn steered_blocks_of_small_frames_go_one_by_one() {
    let sent: Vec<Vec<u8>> = (0..3000)
        .map(|i| flow(i % 64).frame(i as u64, 64))
        .collect();
    let mut flows = Vec::new();
    for steered in [false, true] {
        let ring = ring_of(&sent, 16 * 1024);
        let config = inline(Delivery::ZeroCopy, true)
            .to_builder()
            .steering(Steering::Flows(
                zcrx_flowcache::FlowTableConfig::default().with_seed(Some(7)),
            ))
            .build()
            .unwrap();
        let run = Pipeline::new(&ring, config)
            .run(
                |_| Held {
                    intact: true,
                    steered,
                    linked: true,
                    ..Default::default()
                },
                Hooks::new(),
            )
            .unwrap();
        let h = &run.outputs[0];
        assert_eq!(h.seen, sent, "steered {steered}");
        assert_eq!(h.calls, sent.len() as u64, "steered {steered}: one by one");
        flows.push(h.flows.clone());
    }
    assert!(flows[0] == flows[1], "the same flows");
    assert!(flows[0].iter().all(|f| f.0.is_some()));
}

/// A packet header that fails the walk's checks in the middle of a block: the packets before
/// it are delivered (once, with their bytes), the rest of that block is not, the block is
/// counted bad, the next blocks go on, and every block goes back — for one consumer thread
/// (handed whole blocks, which it walks again) and for several (handed descriptors), zero-copy
/// and copied.
#[test]
fn a_bad_header_inside_a_block_ends_that_block_for_every_route() {
    let sent = traffic(50, 3000);
    let frames = || sent.iter().map(|f| Frame::new(f.clone()));
    let build = || {
        SyntheticRing::builder()
            .block_size(64 * 1024)
            .build(frames())
            .unwrap()
    };
    // Where block 1's packets sit, from a twin ring: its 6th packet gets tp_mac = 0.
    let twin = build();
    let block0 = twin.next_block().unwrap().packets().count();
    let block1 = twin.next_block().unwrap();
    let offsets: Vec<u32> = block1
        .packets()
        .map(|p| p.unwrap().header_offset())
        .collect();
    assert!(
        offsets.len() > 10,
        "block 1 holds {} packets",
        offsets.len()
    );
    let bad = offsets[5] as usize + 24; // tpacket3_hdr.tp_mac
                                        // Sequence numbers delivered: all but block 1's from its 6th packet on.
    let lost: HashSet<u64> = (block0 + 5..block0 + offsets.len())
        .map(|s| s as u64)
        .collect();
    for (mode, threads) in [Delivery::ZeroCopy, Delivery::Copy(Routine::Libc)]
        .into_iter()
        .flat_map(|m| [(m, 1), (m, 2)])
    {
        let mut ring = build();
        ring.poke(1, bad, &0u16.to_ne_bytes());
        let config = PipelineConfig::builder()
            .consumers(Consumers::threads(threads))
            .delivery(mode)
            .build()
            .unwrap();
        let run = Pipeline::new(&ring, config)
            .run(|_| Collect::default(), Hooks::new())
            .unwrap();
        let what = format!("{mode:?}, {threads} consumer threads");
        assert_eq!(run.stats.bad_blocks, 1, "{what}");
        assert_eq!(
            run.stats.packets,
            (sent.len() - lost.len()) as u64,
            "{what}"
        );
        let seen: Seen = run.outputs.into_iter().flatten().collect();
        let mut got = HashSet::new();
        for (_, s, bytes, _) in &seen {
            assert!(got.insert(*s), "{what}: packet {s} twice");
            assert_eq!(bytes, &sent[*s as usize], "{what}: packet {s}'s bytes");
        }
        let want: HashSet<u64> = (0..sent.len() as u64)
            .filter(|s| !lost.contains(s))
            .collect();
        assert_eq!(got, want, "{what}");
        assert_eq!(ring.map().blocks_held(), 0, "{what}");
    }
}

/// A TCP/IPv4 frame of connection `c` (198.18.0.c:2000+c to 198.19.0.1:80).
fn tcp_frame(c: u16, fwd: bool, flags: u8, seq: u32, ack: u32) -> Vec<u8> {
    let (a, b) = ([198, 18, 0, c as u8], [198, 19, 0, 1]);
    let (src, dst, sp, dp) = if fwd {
        (a, b, 2000 + c, 80)
    } else {
        (b, a, 80, 2000 + c)
    };
    let mut tcp = etherparse::TcpHeader::new(sp, dp, seq, 1000);
    tcp.acknowledgment_number = ack;
    tcp.fin = flags & 0x01 != 0;
    tcp.syn = flags & 0x02 != 0;
    tcp.ack = flags & 0x10 != 0;
    let mut v = Vec::new();
    etherparse::PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
        .ipv4(src, dst, 64)
        .tcp_header(tcp)
        .write(&mut v, &[])
        .unwrap();
    v
}

/// A stage whose table follows TCP states (40 connections, one after another, through a
/// 16-flow table, so most leave by eviction and the rest at the end of the run): every
/// finished flow reaches `on_flow_ended` with the state its segments give a `TcpState`, and
/// `on_flow_end` with the same record; a table without states hands the same records, none
/// with a state.
#[test]
fn flows_end_with_the_tcp_state_the_stage_followed() {
    use zcrx_flowcache::{FlowTableConfig, TcpSegment, TcpState};
    // A connection opened, closed by both sides: SF, "ShAFf" (the last ACK adds no letter).
    let segs: [(bool, u8, u32, u32); 6] = [
        (true, 0x02, 100, 0),
        (false, 0x12, 500, 101),
        (true, 0x10, 101, 501),
        (true, 0x11, 101, 501),
        (false, 0x11, 501, 102),
        (true, 0x10, 102, 502),
    ];
    let sent: Vec<Vec<u8>> = (0..40u16)
        .flat_map(|c| segs.map(|(fwd, fl, s, a)| tcp_frame(c, fwd, fl, s, a)))
        .collect();
    let mut expected = TcpState::new();
    for (fwd, fl, s, a) in segs {
        let dir = if fwd {
            Direction::Forward
        } else {
            Direction::Reverse
        };
        expected.observe(dir, &TcpSegment::new(fl, s, a, 0, 1000));
    }
    assert_eq!(expected.history(), "ShAFf");
    for states in [true, false] {
        let ring = ring_of(&sent, 1 << 16);
        let config = inline(Delivery::ZeroCopy, true)
            .to_builder()
            .steering(Steering::Flows(
                FlowTableConfig::with_capacity(16).with_tcp_state(states),
            ))
            .build()
            .unwrap();
        let (mut ends, mut records) = (Vec::new(), Vec::new());
        Pipeline::new(&ring, config)
            .run(
                |_| |_: &Delivered<'_>| {},
                Hooks::new()
                    .on_flow_end(|r| records.push(*r))
                    .on_flow_ended(|e| ends.push(*e)),
            )
            .unwrap();
        assert_eq!(ends.len(), 40, "one end a connection");
        let evicted = ends
            .iter()
            .filter(|e| e.record.end == zcrx_flowcache::EndReason::Evicted)
            .count();
        assert_eq!(evicted, 40 - 16);
        assert!(ends.iter().zip(&records).all(|(e, r)| e.record == *r));
        for e in &ends {
            assert_eq!(e.record.stats.total_packets(), 6);
            let conn = e.tcp.map(|t| (t.conn_state(), t.history().to_string()));
            let want = states.then(|| (expected.conn_state(), expected.history().to_string()));
            assert_eq!(conn, want, "{:?}", e.record.end);
        }
    }
}
