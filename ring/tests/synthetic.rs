//! The synthetic ring: kernel block layout round trip, corrupted headers, leases across
//! threads. No privileges needed.

use proptest::prelude::*;
mod common;

use common::frame;
use zcrx_ring::{Batch, BlockError, Frame, RingError, SyntheticRing};

fn arb_frame() -> impl Strategy<Value = Frame> {
    (
        proptest::collection::vec(any::<u8>(), 14..2100),
        0u32..3000,
        any::<u64>(),
        proptest::option::of((any::<u16>(), prop_oneof![Just(0x8100u16), Just(0x88a8u16)])),
        any::<u32>(),
    )
        .prop_map(|(data, extra, ts, vlan, rxhash)| {
            let wire_len = data.len() as u32 + extra;
            Frame::new(data)
                .wire_len(wire_len)
                .at(ts % (u64::from(u32::MAX) * 1_000_000_000))
                .vlan(vlan)
                .rxhash(rxhash)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn round_trip(frames in proptest::collection::vec(arb_frame(), 0..200),
                  block_size in (1usize..=16).prop_map(|k| k * 4096),
                  snaplen in prop_oneof![Just(262_144u32), 1u32..2000]) {
        let ring = SyntheticRing::builder().block_size(block_size).snaplen(snaplen).build(frames.clone()).unwrap();
        prop_assert_eq!(ring.packets(), frames.len());
        let mut got = Vec::new();
        let mut seq = 0;
        while let Some(block) = ring.next_block() {
            let view = block.view().unwrap();
            prop_assert_eq!(view.seq_num(), seq);
            seq += 1;
            for p in block.packets() {
                let p = p.unwrap();
                prop_assert_eq!(p.offset_in_block() % 2, 0);
                got.push((p.data().to_vec(), p.wire_len(), p.ts_ns(), p.vlan_tci(), p.vlan_tpid(), p.rxhash(), p.is_truncated()));
            }
        }
        prop_assert_eq!(got.len(), frames.len());
        let max_cap = block_size - 48 - zcrx_ring::frames::mac_offset(14);
        for (f, g) in frames.iter().zip(&got) {
            let cap = f.data.len().min(snaplen as usize).min(max_cap);
            prop_assert_eq!(&g.0[..], &f.data[..cap]);
            prop_assert_eq!(g.1, f.wire_len);
            prop_assert_eq!(g.2, f.ts_ns);
            prop_assert_eq!(g.3, f.vlan.map(|v| v.0));
            if let Some((_, tpid)) = f.vlan { prop_assert_eq!(g.4, tpid); }
            prop_assert_eq!(g.5, f.rxhash);
            prop_assert_eq!(g.6, (f.wire_len as usize) > cap);
        }
    }

    /// Any bytes written anywhere in the headers: the walker returns packets inside the block
    /// or an error; it never panics or reads outside.
    #[test]
    fn corrupted_headers_never_panic(pokes in proptest::collection::vec((0usize..4096, any::<u32>()), 1..8)) {
        let frames: Vec<Frame> = (0..30).map(|i| frame(60 + i * 7, i as u8)).collect();
        let mut ring = SyntheticRing::builder().block_size(4096).build(frames).unwrap();
        for (off, v) in pokes {
            let off = off.min(4092);
            ring.poke(0, off, &v.to_ne_bytes());
        }
        // Keep the block user-owned (block_status at offset 8): a corrupted status only means
        // the block is not ours to read, which is not what this test is about.
        ring.poke(0, 8, &1u32.to_ne_bytes());
        let block = ring.next_block().expect("block is user-owned");
        for p in block.packets() {
            match p {
                Ok(p) => prop_assert!(p.offset_in_block() as usize + p.data().len() <= 4096),
                Err(_) => break,
            }
        }
        // The walk with descriptors (no second check): every descriptor is one `desc` would
        // make (it asserts the packet is the block's and its header lies before its data),
        // and a batch of them reads back the walk's packets.
        let mut walked = Vec::new();
        if let Ok(walk) = block.described() {
            for r in walk {
                let Ok((p, d)) = r else { break };
                prop_assert_eq!(block.desc(&p), d);
                walked.push((p, d));
            }
        }
        let batch = zcrx_ring::Batch::new(block.lease(), walked.iter().map(|w| w.1).collect()).unwrap();
        for (q, (p, _)) in batch.packets().zip(&walked) {
            prop_assert_eq!((q.data(), q.meta(), q.header_offset()), (p.data(), p.meta(), p.header_offset()));
        }
    }
}

fn ring_of(n: usize) -> SyntheticRing {
    SyntheticRing::builder()
        .block_size(4096)
        .build((0..n).map(|i| frame(100, i as u8)))
        .unwrap()
}

fn first_error(ring: &SyntheticRing) -> Option<BlockError> {
    let block = ring.next_block()?;
    let e = block.packets().find_map(|p| p.err());
    e
}

/// The first packet error of a block of five packets with `bytes` written over block 0 at
/// `offset`.
fn poked(offset: usize, bytes: &[u8]) -> Option<BlockError> {
    let mut r = ring_of(5);
    r.poke(0, offset, bytes);
    first_error(&r)
}

#[test]
fn corrupted_offsets_give_errors() {
    // tp_next_offset of the first packet set to 0 while more packets follow.
    assert!(matches!(
        poked(48, &0u32.to_ne_bytes()),
        Some(BlockError::BadNextOffset { .. })
    ));
    // tp_next_offset pointing past the block.
    assert!(matches!(
        poked(48, &100_000u32.to_ne_bytes()),
        Some(BlockError::BadNextOffset { .. })
    ));
    // tp_snaplen running past blk_len.
    assert!(matches!(
        poked(48 + 12, &5000u32.to_ne_bytes()),
        Some(BlockError::BadSnaplen { .. }) | Some(BlockError::SnaplenOverLen { .. })
    ));
    // tp_mac pointing into the header.
    assert!(matches!(
        poked(48 + 24, &10u16.to_ne_bytes()),
        Some(BlockError::BadMac { mac: 10, .. })
    ));
    // blk_len beyond the block, num_pkts absurd, first offset outside.
    assert!(matches!(
        poked(20, &8192u32.to_ne_bytes()),
        Some(BlockError::BadBlockLen { blk_len: 8192, .. })
    ));
    assert!(matches!(
        poked(12, &u32::MAX.to_ne_bytes()),
        Some(BlockError::TooManyPackets { .. })
    ));
    assert!(matches!(
        poked(16, &4090u32.to_ne_bytes()),
        Some(BlockError::BadFirstOffset { offset: 4090, .. })
    ));
    // snaplen larger than the wire length.
    assert!(matches!(
        poked(48 + 16, &10u32.to_ne_bytes()),
        Some(BlockError::SnaplenOverLen { len: 10, .. })
    ));
}

#[test]
fn invalid_geometry_names_the_field() {
    let e = SyntheticRing::builder()
        .block_size(1000)
        .build(Vec::new())
        .unwrap_err();
    assert!(
        matches!(
            e,
            RingError::InvalidConfig {
                setting: zcrx_ring::Setting::BlockSize,
                ..
            }
        ),
        "{e}"
    );
    let e = SyntheticRing::builder()
        .snaplen(0)
        .build(Vec::new())
        .unwrap_err();
    assert!(e.to_string().contains("snaplen"), "{e}");
    let e = SyntheticRing::builder()
        .block_size(4096)
        .block_count(1)
        .build((0..100).map(|i| frame(1000, i)))
        .unwrap_err();
    assert!(e.to_string().contains("block_count"), "{e}");
}

#[test]
fn synthetic_geometry_overflow_and_zero_blocks_are_errors() {
    let e = SyntheticRing::builder()
        .block_count(0)
        .build(std::iter::empty())
        .unwrap_err();
    assert!(e.to_string().contains("block_count"), "{e}");
    let e = SyntheticRing::builder()
        .block_count(usize::MAX / 4)
        .build(std::iter::empty())
        .unwrap_err();
    assert!(e.to_string().contains("block_count"), "{e}");
    // Fits the address space but not this machine: an error, not an abort.
    let e = SyntheticRing::builder()
        .block_size(1 << 30)
        .block_count(1 << 24)
        .build(std::iter::empty())
        .unwrap_err();
    assert!(e.to_string().contains("block_count"), "{e}");
}

#[test]
fn leases_hold_the_block_until_the_last_one_drops() {
    let ring = SyntheticRing::builder()
        .block_size(4096)
        .replay(true)
        .build((0..20).map(|i| frame(80, i)))
        .unwrap();
    assert_eq!(ring.filled_blocks(), 1);
    let block = ring.next_block().unwrap();
    let descs: Vec<_> = block.packets().map(|p| block.desc(&p.unwrap())).collect();
    let mut leases = block.into_leases(3);
    let batches: Vec<Batch<'_>> = (0..3)
        .map(|c| {
            let mine = descs
                .iter()
                .copied()
                .enumerate()
                .filter(|(i, _)| i % 3 == c)
                .map(|(_, d)| d)
                .collect();
            Batch::new(leases.next().unwrap(), mine).unwrap()
        })
        .collect();
    // The one block is ours: the ring has nothing to give, even in replay mode.
    assert!(ring.next_block().is_none());
    std::thread::scope(|s| {
        let mut handles = Vec::new();
        for (c, batch) in batches.into_iter().enumerate() {
            handles.push(s.spawn(move || {
                let seqs: Vec<u8> = batch.packets().map(|p| p.data()[0]).collect();
                (c, seqs, batch.release())
            }));
        }
        for h in handles {
            let (c, firsts, _vec) = h.join().unwrap();
            let want: Vec<u8> = (0..20u8)
                .filter(|i| usize::from(*i) % 3 == c)
                .map(|i| frame(80, i).data[0])
                .collect();
            assert_eq!(firsts, want);
        }
    });
    // All shares dropped: the block went back and replay refills it.
    assert!(ring.next_block().is_some());
}

#[test]
fn packet_refs_travel_and_foreign_descriptors_are_refused() {
    let a = ring_of(3);
    let b = ring_of(3);
    let block_a = a.next_block().unwrap();
    let block_b = b.next_block().unwrap();
    let desc_a = block_a
        .packets()
        .next()
        .unwrap()
        .map(|p| block_a.desc(&p))
        .unwrap();
    // A descriptor from ring a cannot be read through a lease on ring b.
    assert!(block_b.lease().packet(&desc_a).is_none());
    assert!(block_b.lease().into_ref(desc_a).is_err());
    assert!(Batch::new(block_b.lease(), vec![desc_a]).is_err());
    let r = block_a.lease().into_ref(desc_a).unwrap();
    drop(block_a);
    let copy = std::thread::scope(|s| s.spawn(move || r.data().to_vec()).join().unwrap());
    assert_eq!(copy, frame(100, 0).data);
    // The ref was the last share: block 0 of ring a is free again (non-replay: not refilled).
    assert!(a.next_block().is_none());
}

#[test]
fn a_streaming_ring_refills_handed_back_blocks_in_order_with_bounded_memory() {
    let frames: Vec<Frame> = (0..5000u32)
        .map(|i| frame(60 + (i as usize * 13) % 900, i as u8).at(u64::from(i) * 1000))
        .collect();
    let want: Vec<Vec<u8>> = frames.iter().map(|f| f.data.clone()).collect();
    let ring = SyntheticRing::builder()
        .block_size(8192)
        .block_count(3)
        .stream(frames.into_iter())
        .unwrap();
    assert_eq!(ring.map().block_count(), 3, "memory stays at three blocks");
    let mut got = Vec::new();
    let mut held = std::collections::VecDeque::new();
    while !ring.is_exhausted() {
        let Some(block) = ring.next_block() else {
            // The next block in order is still held: let the oldest go.
            held.pop_front().expect("a held block explains the wait");
            continue;
        };
        for p in block.packets() {
            got.push(p.unwrap().data().to_vec());
        }
        held.push_back(block); // keep up to three blocks, as slow consumers would
        if held.len() == 3 {
            held.pop_front();
        }
    }
    drop(held);
    assert_eq!(got.len(), want.len());
    assert!(got == want, "every frame once, in order");
    assert_eq!(ring.packets(), 5000);
    assert!(ring.filled_blocks() > 3, "blocks were refilled");
    assert!(ring.stream_error().is_none());
    assert_eq!(ring.map().blocks_held(), 0);
}

#[test]
fn an_empty_stream_is_exhausted_at_once() {
    let ring = SyntheticRing::builder().stream(std::iter::empty()).unwrap();
    assert!(ring.next_block().is_none());
    assert!(ring.is_exhausted());
}
