//! Regression tests for the block life cycle, driven from safe code only: a block
//! is never handed back while a share of it lives, a descriptor never reads another take's
//! bytes, and `{:?}` never reads the ring. The interleavings between threads are proved by
//! the loom models in `src/lifecycle.rs`; these tests pin the single-threaded sequences.

mod common;

use common::frame;
use zcrx_ring::{Batch, BlockError, Frame, Packet, PacketMeta, SyntheticRing};

/// One block of 20 frames, replayed: a handed-back block is at once user-owned again, so a
/// block handed back too early is visibly taken a second time.
fn replay_ring() -> SyntheticRing {
    SyntheticRing::builder()
        .block_size(4096)
        .replay(true)
        .build((0..20).map(|i| frame(80, i)))
        .unwrap()
}

#[test]
fn into_leases_counts_the_shares_lease_already_made() {
    let ring = replay_ring();
    let block = ring.next_block().unwrap();
    let desc = block.desc(&block.packets().next().unwrap().unwrap());
    let early = block.lease();
    let leases: Vec<_> = block.into_leases(1).collect();
    drop(leases);
    assert_eq!(
        ring.map().blocks_held(),
        1,
        "the lease made before into_leases still holds the block"
    );
    assert!(
        ring.next_block().is_none(),
        "a block with a live lease was taken again"
    );
    let r = early.into_ref(desc).unwrap();
    assert_eq!(r.data(), &frame(80, 0).data[..]);
    drop(r);
    assert_eq!(ring.map().blocks_held(), 0);
    assert!(ring.next_block().is_some(), "the last share handed it back");
}

#[test]
fn into_leases_zero_does_not_hand_back_under_a_live_lease() {
    let ring = replay_ring();
    let block = ring.next_block().unwrap();
    let early = block.lease();
    assert_eq!(block.into_leases(0).count(), 0);
    assert_eq!(ring.map().blocks_held(), 1);
    assert!(ring.next_block().is_none());
    drop(early);
    assert_eq!(ring.map().blocks_held(), 0);
}

#[test]
fn leases_nobody_took_from_the_iterator_are_released_with_it() {
    let ring = replay_ring();
    let block = ring.next_block().unwrap();
    let mut leases = block.into_leases(3);
    assert_eq!(leases.size_hint(), (3, Some(3)));
    let one = leases.next().unwrap();
    drop(leases); // two leases never handed out (an early return, a panic while distributing)
    assert_eq!(
        ring.map().blocks_held(),
        1,
        "the lease taken still holds it"
    );
    drop(one);
    assert_eq!(ring.map().blocks_held(), 0, "nothing left half-held");
    assert!(ring.next_block().is_some());
}

#[test]
fn a_panic_while_distributing_leases_releases_the_rest() {
    let ring = replay_ring();
    let block = ring.next_block().unwrap();
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut leases = block.into_leases(4);
        let _kept = leases.next();
        panic!("consumer queue gone");
    }));
    assert!(r.is_err());
    assert_eq!(ring.map().blocks_held(), 0);
}

#[test]
fn debug_prints_geometry_not_the_ring() {
    let ring = SyntheticRing::builder()
        .block_size(1 << 20)
        .block_count(8)
        .build((0..10).map(|i| frame(100, i)))
        .unwrap();
    let _held = ring.next_block().unwrap();
    let s = format!("{ring:?}");
    assert!(s.len() < 400, "Debug of an 8 MiB ring is {} bytes", s.len());
    assert!(s.contains("block_size: 1048576"), "{s}");
    assert!(s.contains("block_count: 8"), "{s}");
    let s = format!("{:?}", ring.map());
    assert!(s.len() < 300 && s.contains("blocks_held: 1"), "{s}");
}

#[test]
fn descriptors_of_an_earlier_take_are_refused() {
    let ring = replay_ring();
    let block = ring.next_block().unwrap();
    let old = block.desc(&block.packets().next().unwrap().unwrap());
    drop(block);
    let block = ring.next_block().unwrap(); // the same block, taken again
    let lease = block.lease();
    assert!(lease.packet(&old).is_none(), "a stale descriptor was read");
    assert!(Batch::new(block.lease(), vec![old]).is_err());
    let (lease, _) = lease.into_ref(old).unwrap_err();
    let new = block.desc(&block.packets().next().unwrap().unwrap());
    assert_eq!(
        lease.packet(&new).unwrap().data(),
        &frame(80, 0).data[..],
        "this take's descriptor reads"
    );
}

#[test]
#[should_panic(expected = "not a packet of this block")]
fn desc_refuses_a_packet_of_another_block() {
    let ring = SyntheticRing::builder()
        .block_size(4096)
        .build((0..100).map(|i| frame(200, i)))
        .unwrap();
    assert!(ring.filled_blocks() >= 2);
    let a = ring.next_block().unwrap();
    let b = ring.next_block().unwrap();
    let p = b.packets().nth(3).unwrap().unwrap();
    let _ = a.desc(&p);
}

#[test]
fn several_threads_take_from_one_ring_without_sharing_a_block() {
    let ring = SyntheticRing::builder()
        .block_size(4096)
        .block_count(8)
        .replay(true)
        .build((0..60).map(|i| frame(200, i)))
        .unwrap();
    let held = std::sync::atomic::AtomicU32::new(0);
    std::thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| {
                for _ in 0..20_000 {
                    if let Some(b) = ring.next_block() {
                        let bit = 1 << b.index();
                        let before = held.fetch_or(bit, std::sync::atomic::Ordering::SeqCst);
                        assert_eq!(before & bit, 0, "block {} taken twice", b.index());
                        assert!(b.packets().all(|p| p.is_ok()));
                        held.fetch_and(!bit, std::sync::atomic::Ordering::SeqCst);
                    }
                }
            });
        }
    });
    assert_eq!(ring.map().blocks_held(), 0);
}

/// A descriptor carries no header facts of its own (24 bytes): a batch's packets and a
/// `PacketRef` read them from the ring, and they equal the walk's, for frames with distinct
/// lengths, time stamps, stripped VLAN tags and receive hashes; so do the header offsets
/// (the link address of a batch's packet is the walk's).
#[test]
fn descriptors_read_back_every_header_fact_from_the_ring() {
    assert_eq!(std::mem::size_of::<zcrx_ring::PacketDesc>(), 24);
    let frames: Vec<Frame> = (0..30u16)
        .map(|i| {
            let mut f = frame(60 + usize::from(i) * 7, i as u8)
                .at(1_700_000_000_123_456_789 + u64::from(i) * 1_001);
            f.wire_len = f.data.len() as u32 + u32::from(i);
            f.rxhash = 0x9e37_0000 | u32::from(i);
            f.vlan = (i % 3 == 0).then_some((0x2000 | i, if i % 2 == 0 { 0x8100 } else { 0x88a8 }));
            f
        })
        .collect();
    let ring = SyntheticRing::builder()
        .block_size(64 * 1024)
        .snaplen(150)
        .build(frames)
        .unwrap();
    let block = ring.next_block().unwrap();
    let walked: Vec<_> = block.packets().map(|p| p.unwrap()).collect();
    assert_eq!(walked.len(), 30);
    let descs: Vec<_> = walked.iter().map(|p| block.desc(p)).collect();
    // The walk with descriptors gives the same packets and the descriptors desc() checks.
    let described: Vec<_> = block.described().unwrap().map(|r| r.unwrap()).collect();
    assert_eq!(described.len(), walked.len());
    for ((p, d), (q, e)) in walked.iter().zip(&descs).zip(&described) {
        assert_eq!(
            (p.data(), p.meta(), p.header_offset()),
            (q.data(), q.meta(), q.header_offset())
        );
        assert_eq!(d, e);
    }
    let batch = Batch::new(block.lease(), descs.clone()).unwrap();
    for (p, q) in walked.iter().zip(batch.packets()) {
        assert_eq!(p.meta(), q.meta());
        assert_eq!(p.data(), q.data());
        assert_eq!(p.header_offset(), q.header_offset());
        assert_eq!(block.link_addr(p), block.link_addr(&q));
    }
    // Some frames were cut by the snaplen: the facts say so as the walk does.
    assert!(batch.packets().any(|q| q.meta().wire_len > q.caplen()));
    for (p, d) in walked.iter().zip(descs) {
        let r = block.lease().into_ref(d).unwrap();
        assert_eq!(&r.meta(), p.meta());
        assert_eq!(r.data(), p.data());
    }
    drop(batch);
    drop(block);
    assert_eq!(ring.map().blocks_held(), 0);
}

/// A lease walks its whole block as the block itself does, after the block is gone: the
/// same packets, facts and offsets, and the block stays taken until the lease goes.
#[test]
fn a_lease_walks_its_block_as_the_block_does() {
    /// Each packet's bytes, facts and header offset.
    fn walk<'a>(
        packets: impl Iterator<Item = Result<Packet<'a>, BlockError>>,
    ) -> Vec<(Vec<u8>, PacketMeta, u32)> {
        packets
            .map(|p| {
                let p = p.unwrap();
                (p.data().to_vec(), *p.meta(), p.header_offset())
            })
            .collect()
    }
    let ring = replay_ring();
    let block = ring.next_block().unwrap();
    let walked = walk(block.packets());
    assert_eq!(walked.len(), 20);
    let lease = block.into_leases(1).next().unwrap();
    assert!(ring.next_block().is_none(), "the lease holds the block");
    assert_eq!(walk(lease.view().unwrap().packets()), walked);
    drop(lease);
    assert_eq!(ring.map().blocks_held(), 0);
    assert!(
        ring.next_block().is_some(),
        "the lease's drop handed it back"
    );
}
