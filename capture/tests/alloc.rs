//! No allocation per packet on the live path: the stage (extraction, flow table, steering),
//! batching and hand-off to consumer threads, zero-copy and copied delivery, and the pcap /
//! pcapng writer zcap uses. A counting global allocator (this file is its own test binary,
//! one test, so nothing else allocates meanwhile) compares a run of N packets with a run of
//! 8N: what a run allocates must not grow with the packets. (Threaded runs allocate the
//! batch vectors as they are first needed: how many depends on how far the consumers lag,
//! which is timing, but it is bounded by the batches in flight, not by the packets.)

use zcrx_capture::copy::Routine;
use zcrx_capture::pcapfile::{Format, SaveFile};
use zcrx_capture::{Consumers, Delivered, Delivery, Hooks, Pipeline, PipelineConfig};
use zcrx_ring::frames::UdpFlow;
use zcrx_ring::{Frame, SyntheticRing};

// Counted for the whole process: the consumer threads allocate on threads of their own.
zcrx_ring::counting_allocator!(one_test);
use counting::{allocs, bytes};

fn frames(packets: usize, flows: usize) -> Vec<Vec<u8>> {
    (0..packets)
        .map(|seq| {
            let f = UdpFlow::synthetic(((seq * 7919) % flows) as u16);
            let f = if seq % 3 == 2 { f.reversed() } else { f };
            f.frame(seq as u64, 60 + (seq * 53) % 1400)
        })
        .collect()
}

/// `packets` TCP frames (every third from the server, a 1000-byte payload) of `flows`
/// connections, their sequence numbers going forward.
fn tcp_frames(packets: usize, flows: usize) -> Vec<Vec<u8>> {
    (0..packets)
        .map(|seq| {
            let c = (seq * 7919) % flows;
            let (a, b) = ([198, 18, (c >> 8) as u8, c as u8], [198, 19, 0, 1]);
            let fwd = seq % 3 != 2;
            let (src, dst, sp, dp) = if fwd {
                (a, b, 1024 + c as u16, 80)
            } else {
                (b, a, 80, 1024 + c as u16)
            };
            let mut tcp = etherparse::TcpHeader::new(sp, dp, (seq * 1000) as u32, 1000);
            tcp.ack = true;
            tcp.syn = seq < flows;
            let mut v = Vec::new();
            etherparse::PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
                .ipv4(src, dst, 64)
                .tcp_header(tcp)
                .write(&mut v, &[0; 1000])
                .unwrap();
            v
        })
        .collect()
}

/// Allocations made by one pipeline run over `packets` packets (the pipeline built before:
/// `Pipeline::new` allocates the flow table), and the bytes they asked for; with
/// `tcp_states`, TCP traffic through a table that follows its states.
fn run_allocs(packets: usize, consumers: Consumers, delivery: Delivery) -> (u64, u64) {
    run_allocs_of(packets, consumers, delivery, false)
}

fn run_allocs_of(
    packets: usize,
    consumers: Consumers,
    delivery: Delivery,
    tcp_states: bool,
) -> (u64, u64) {
    let sent = if tcp_states {
        tcp_frames(packets, 256)
    } else {
        frames(packets, 256)
    };
    let ring = SyntheticRing::builder()
        .block_size(256 * 1024)
        .build(sent.into_iter().map(Frame::new))
        .unwrap();
    let mut config = PipelineConfig::builder()
        .consumers(consumers)
        .delivery(delivery);
    if tcp_states {
        // The default table's configuration, following TCP states.
        let table = zcrx_flowcache::FlowTableConfig::default()
            .with_prepare_memory(Some(zcrx_ring::advise_huge_pages))
            .with_tcp_state(true);
        config = config.steering(zcrx_capture::Steering::Flows(table));
    }
    let config = config.build().unwrap();
    let pipeline = Pipeline::new(&ring, config);
    let (before, bytes_before) = (allocs(), bytes());
    let run = pipeline
        .run(
            |_| {
                |p: &Delivered<'_>| {
                    std::hint::black_box(p.data());
                }
            },
            Hooks::new().on_flow_ended(|e| {
                assert!(e.record.stats.total_packets() > 0);
                assert_eq!(e.tcp.is_some(), tcp_states);
            }),
        )
        .unwrap();
    let during = allocs() - before;
    let bytes = bytes() - bytes_before;
    assert_eq!(run.stats.packets, packets as u64);
    drop(run);
    (during, bytes)
}

/// Allocations made writing `records` packets with SaveFile into a sink.
fn save_allocs(records: usize, format: Format) -> u64 {
    let frames = frames(64, 16);
    let mut w = SaveFile::new(std::io::sink(), format, 1, 262_144);
    let before = allocs();
    for i in 0..records {
        let f = &frames[i % frames.len()];
        let vlan = (i % 5 == 0).then_some((100, 0x8100));
        w.write(i as u64 * 1000, f.len() as u32, f, vlan).unwrap();
    }
    w.flush().unwrap();
    allocs() - before
}

#[test]
fn nothing_on_the_live_path_allocates_per_packet() {
    counting::assert_installed();
    const N: usize = 20_000;
    let copy_auto = Delivery::Copy(Routine::Auto);
    // Inline: the same few allocations (threads, arenas) whatever the packet count; with TCP
    // states too (the table's, allocated with it by Pipeline::new).
    for (name, delivery, tcp) in [
        ("inline zero-copy", Delivery::ZeroCopy, false),
        ("inline copy-auto", copy_auto, false),
        ("inline zero-copy, TCP states", Delivery::ZeroCopy, true),
    ] {
        let (small, bytes) = run_allocs_of(N, Consumers::Inline, delivery, tcp);
        let (large, _) = run_allocs_of(8 * N, Consumers::Inline, delivery, tcp);
        // The default flow table (65 536 flows, 6.8 MB) was made by Pipeline::new, before
        // the first packet: a run's page faults would fall on its first packets.
        assert!(
            bytes < 1 << 20,
            "{name}: a run allocated {bytes} bytes (the flow table?)"
        );
        eprintln!(
            "{name}: {small} allocations for {N} packets, {large} for {}",
            8 * N
        );
        assert!(
            large <= small.max(100),
            "{name}: {small} allocations for {N} packets but {large} for {}",
            8 * N
        );
    }
    // Threads: batch vectors (descriptors and tags) are made as batches are first in flight
    // and grow to the largest batch: at most 2 consumers x (16 queued + 2) x 2 vectors, each
    // doubling up to a block's packets (~15 times), plus threads and channels. A per-packet
    // (or per-batch) allocation would be far above that at 32N packets. One thread (whole
    // blocks: tag vectors only) and two (descriptor batches) take different routes.
    const BOUND: u64 = 2 * 18 * 2 * 16 + 200;
    for (name, threads, delivery) in [
        ("1 thread zero-copy", 1, Delivery::ZeroCopy),
        ("1 thread copy-auto", 1, copy_auto),
        ("2 threads zero-copy", 2, Delivery::ZeroCopy),
        ("2 threads copy-auto", 2, copy_auto),
    ] {
        for packets in [N, 8 * N, 32 * N] {
            let (a, _) = run_allocs(packets, Consumers::threads(threads), delivery);
            eprintln!("{name}: {a} allocations for {packets} packets");
            assert!(
                a <= BOUND,
                "{name}: {a} allocations for {packets} packets (bound {BOUND})"
            );
        }
    }
    for format in [Format::Pcap, Format::PcapNg] {
        let (small, large) = (save_allocs(N, format), save_allocs(8 * N, format));
        eprintln!(
            "SaveFile {format:?}: {small} allocations for {N} records, {large} for {}",
            8 * N
        );
        assert!(large <= small, "SaveFile {format:?}: {small} vs {large}");
    }
}
