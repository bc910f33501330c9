//! Ring memory shared with the kernel (or a synthetic stand-in), block ownership and leases.
//!
//! A block is in one of three hands: the kernel's (`block_status == TP_STATUS_KERNEL`), the
//! ring's cursor (status USER, not yet taken), or ours (taken: `held` is set). Taking a
//! block sets `held` and a share count; every [`Lease`] is one share. When the last share is
//! dropped the block's status is set back to KERNEL and `held` is cleared, in that order.
//!
//! All of this crate's raw-pointer reads of ring memory are in this module.

use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use crossbeam_utils::CachePadded;

use crate::block::{bd, BlockView, Packet, PacketMeta};
use crate::error::BlockError;

/// Owner of the bytes behind a [`BlockMap`].
#[derive(Debug)]
pub(crate) enum Backing {
    /// The kernel's PACKET_RX_RING, mapped with `mmap(MAP_SHARED)`.
    Kernel(#[allow(dead_code)] memmap2::MmapRaw),
    /// Heap memory laid out like the kernel's ring (synthetic ring); `u64` for 8-alignment.
    Heap(#[allow(dead_code)] Box<[u64]>),
}

#[derive(Debug, Default)]
struct BlockState {
    /// Outstanding shares of a taken block.
    shares: AtomicU32,
    /// The block is ours: taken and not yet handed back.
    held: AtomicBool,
}

/// Identifies one mapping so a [`PacketDesc`] cannot be used against another ring.
static NEXT_MAP_ID: AtomicU32 = AtomicU32::new(1);

/// Blocks of `block_size` bytes at `base`, with per-block ownership state.
#[derive(Debug)]
pub struct BlockMap {
    base: NonNull<u8>,
    block_size: usize,
    block_count: usize,
    id: u32,
    states: Box<[CachePadded<BlockState>]>,
    _backing: Backing,
}

// SAFETY: the memory is only read through shared references while a block is held, and the
// only writes (block status) are atomic; the state array is atomics. No thread-affine data.
unsafe impl Send for BlockMap {}
// SAFETY: as above; every mutation goes through atomics.
unsafe impl Sync for BlockMap {}

impl BlockMap {
    /// Wraps a kernel ring mapping of `block_count` blocks.
    pub(crate) fn from_mmap(map: memmap2::MmapRaw, block_size: usize, block_count: usize) -> Self {
        assert!(
            map.len() >= block_size * block_count,
            "mapping smaller than the ring"
        );
        let base = NonNull::new(map.as_mut_ptr()).expect("mmap never returns NULL on success");
        Self::new(base, block_size, block_count, Backing::Kernel(map))
    }

    /// Wraps heap memory that already holds `block_count` blocks.
    pub(crate) fn from_heap(mut mem: Box<[u64]>, block_size: usize, block_count: usize) -> Self {
        assert!(
            mem.len() * 8 >= block_size * block_count,
            "buffer smaller than the ring"
        );
        let base = NonNull::new(mem.as_mut_ptr().cast::<u8>()).expect("Box pointer is non-null");
        Self::new(base, block_size, block_count, Backing::Heap(mem))
    }

    fn new(base: NonNull<u8>, block_size: usize, block_count: usize, backing: Backing) -> Self {
        assert!(block_size >= bd::LEN && block_size % 8 == 0 && block_size <= u32::MAX as usize);
        let states = (0..block_count)
            .map(|_| CachePadded::new(BlockState::default()))
            .collect();
        let id = NEXT_MAP_ID.fetch_add(1, Ordering::Relaxed);
        Self {
            base,
            block_size,
            block_count,
            id,
            states,
            _backing: backing,
        }
    }

    /// Bytes per block.
    pub fn block_size(&self) -> usize {
        self.block_size
    }
    /// Blocks in the ring.
    pub fn block_count(&self) -> usize {
        self.block_count
    }

    fn block_ptr(&self, index: usize) -> *mut u8 {
        assert!(index < self.block_count);
        // SAFETY: index < block_count, so the offset stays inside the mapping.
        unsafe { self.base.as_ptr().add(index * self.block_size) }
    }

    /// The block's `block_status` word, shared with the kernel.
    pub(crate) fn status(&self, index: usize) -> &AtomicU32 {
        // SAFETY: the word is inside block `index`, 4-aligned (blocks are page or 8 aligned,
        // offset 8), and lives as long as `self`. The kernel accesses it only atomically
        // with respect to us (smp_rmb/smp_wmb + WRITE_ONCE in af_packet.c).
        unsafe {
            &*self
                .block_ptr(index)
                .add(bd::BLOCK_STATUS)
                .cast::<AtomicU32>()
        }
    }

    /// Blocks currently taken by us (held by a [`Block`] or leases): at most this much of the
    /// ring is withheld from the kernel.
    pub fn blocks_held(&self) -> usize {
        (0..self.block_count).filter(|&i| self.is_held(i)).count()
    }

    /// Whether the block is taken by us (some share outstanding).
    pub(crate) fn is_held(&self, index: usize) -> bool {
        self.states[index].held.load(Ordering::Acquire)
    }

    /// Takes block `index` if it is user-owned and not already held; returns the block.
    pub(crate) fn try_take(&self, index: usize) -> Option<Block<'_>> {
        let state = &self.states[index];
        // Acquire: pairs with the Release in `hand_back`, so a cleared `held` means the
        // status store KERNEL is visible and the status we read next is the kernel's.
        if state.held.load(Ordering::Acquire) {
            return None;
        }
        // Acquire: pairs with the kernel's smp_wmb before it sets TP_STATUS_USER, so every
        // packet byte of the block is visible before we read it.
        if self.status(index).load(Ordering::Acquire) & crate::block::status::USER == 0 {
            return None;
        }
        if state
            .held
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return None;
        }
        state.shares.store(1, Ordering::Relaxed);
        Some(Block {
            map: self,
            index: index as u32,
        })
    }

    /// The whole block as bytes.
    fn block_bytes(&self, index: usize) -> &[u8] {
        // SAFETY: only called for a held block: the kernel does not write a user-owned block,
        // and we write only its status word, after every borrow of these bytes has ended
        // (the last share is dropped before `hand_back`).
        unsafe { std::slice::from_raw_parts(self.block_ptr(index), self.block_size) }
    }

    /// Drops one share of a held block; the last one hands the block back.
    fn put(&self, index: u32) {
        // AcqRel: Release publishes this holder's reads as finished; the Acquire on the last
        // decrement orders every other holder's reads before the status store below.
        if self.states[index as usize]
            .shares
            .fetch_sub(1, Ordering::AcqRel)
            == 1
        {
            self.hand_back(index as usize);
        }
    }

    fn hand_back(&self, index: usize) {
        // Release: the kernel may overwrite the block as soon as it sees KERNEL; all our
        // reads of it must happen before (af_packet.c reads the status after smp_rmb).
        self.status(index)
            .store(libc::TP_STATUS_KERNEL, Ordering::Release);
        // Release: pairs with the Acquire in `try_take`, so a later take sees the KERNEL store.
        self.states[index].held.store(false, Ordering::Release);
    }

    /// Synthetic rings: marks a block user-owned again, as the kernel does when it fills one.
    pub(crate) fn rearm(&self, index: usize) {
        if !self.is_held(index) {
            // Release: publishes nothing new (contents are unchanged), kept for symmetry with
            // the kernel's smp_wmb before setting USER.
            self.status(index)
                .store(crate::block::status::USER, Ordering::Release);
        }
    }

    /// Writes `bytes` into block `index` at `offset` (synthetic rings, corruption tests).
    pub(crate) fn poke(&mut self, index: usize, offset: usize, bytes: &[u8]) {
        assert!(
            index < self.block_count && offset + bytes.len() <= self.block_size,
            "poke out of bounds"
        );
        // SAFETY: in bounds (asserted); `&mut self` means no block is taken, so no borrow of
        // the ring's bytes exists while we write.
        unsafe {
            std::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                self.block_ptr(index).add(offset),
                bytes.len(),
            )
        }
    }

    /// Frame bytes of a validated descriptor.
    fn desc_bytes(&self, desc: &PacketDesc) -> &[u8] {
        let start = desc.data_off as usize;
        &self.block_bytes(desc.block as usize)[start..start + desc.caplen as usize]
    }
}

/// A block taken from the ring. Walk it with [`Block::packets`]; dropping it (and every
/// [`Lease`] made from it) hands it back to the kernel.
#[derive(Debug)]
pub struct Block<'ring> {
    map: &'ring BlockMap,
    index: u32,
}

impl<'ring> Block<'ring> {
    /// Index of the block in its ring.
    pub fn index(&self) -> usize {
        self.index as usize
    }

    /// The validated block header.
    pub fn view(&self) -> Result<BlockView<'_>, BlockError> {
        BlockView::parse(self.map.block_bytes(self.index as usize))
    }

    /// The block's packets; a bad header yields one `Err` and ends the walk.
    pub fn packets(&self) -> impl Iterator<Item = Result<Packet<'_>, BlockError>> + '_ {
        let (view, err) = match self.view() {
            Ok(v) => (Some(v), None),
            Err(e) => (None, Some(Err(e))),
        };
        err.into_iter()
            .chain(view.into_iter().flat_map(|v| v.packets()))
    }

    /// A descriptor for `packet` (which must come from this block) that a [`Lease`] of this
    /// block can turn back into bytes on another thread.
    pub fn desc(&self, packet: &Packet<'_>) -> PacketDesc {
        PacketDesc {
            map: self.map.id,
            block: self.index,
            data_off: packet.offset_in_block(),
            caplen: packet.caplen(),
            meta: *packet.meta(),
        }
    }

    /// One more share of this block (one atomic increment), like `Arc::clone`.
    pub fn lease(&self) -> Lease<'ring> {
        // Relaxed: as in Arc::clone, the new share is derived from a live one, so the block
        // cannot be handed back concurrently.
        self.map.states[self.index as usize]
            .shares
            .fetch_add(1, Ordering::Relaxed);
        Lease {
            map: self.map,
            index: self.index,
        }
    }

    /// Turns the block into exactly `n` leases with one store; with `n == 0` the block goes
    /// back to the kernel now. This is the stage's path: one share per batch.
    pub fn into_leases(self, n: usize) -> impl Iterator<Item = Lease<'ring>> {
        let map = self.map;
        let index = self.index;
        std::mem::forget(self);
        if n == 0 {
            map.hand_back(index as usize);
        } else {
            let n = u32::try_from(n).expect("more than 2^32 leases of one block");
            // Relaxed: no other share exists yet; the leases reach other threads through
            // channels, which order this store before their decrements.
            map.states[index as usize]
                .shares
                .store(n, Ordering::Relaxed);
        }
        (0..n).map(move |_| Lease { map, index })
    }
}

impl Drop for Block<'_> {
    fn drop(&mut self) {
        self.map.put(self.index);
    }
}

/// Where a packet sits in a ring, plus its header facts; plain data (`Copy`, no lifetime).
/// Made only by [`Block::desc`], so its bounds were checked by the walker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PacketDesc {
    map: u32,
    block: u32,
    data_off: u32,
    caplen: u32,
    meta: PacketMeta,
}

impl PacketDesc {
    /// Block index.
    pub fn block(&self) -> usize {
        self.block as usize
    }
    /// Captured length.
    pub fn caplen(&self) -> u32 {
        self.caplen
    }
    /// Header facts.
    pub fn meta(&self) -> &PacketMeta {
        &self.meta
    }
}

/// One share of a taken block: while it lives the kernel cannot reuse the block.
/// `Send`, so it can travel to a consumer thread; it cannot outlive the ring.
#[derive(Debug)]
pub struct Lease<'ring> {
    map: &'ring BlockMap,
    index: u32,
}

impl<'ring> Lease<'ring> {
    /// Block index.
    pub fn block(&self) -> usize {
        self.index as usize
    }

    /// The packet behind `desc`, if `desc` belongs to this lease's block.
    pub fn packet(&self, desc: &PacketDesc) -> Option<Packet<'_>> {
        self.owns(desc).then(|| self.packet_unchecked(desc))
    }

    fn owns(&self, desc: &PacketDesc) -> bool {
        desc.map == self.map.id && desc.block == self.index
    }

    fn packet_unchecked(&self, desc: &PacketDesc) -> Packet<'_> {
        Packet::from_parts(self.map.desc_bytes(desc), desc.data_off, desc.meta)
    }

    /// Pairs the lease with one packet of its block: a self-contained [`PacketRef`].
    pub fn into_ref(self, desc: PacketDesc) -> Result<PacketRef<'ring>, (Self, PacketDesc)> {
        if self.owns(&desc) {
            Ok(PacketRef { lease: self, desc })
        } else {
            Err((self, desc))
        }
    }
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        self.map.put(self.index);
    }
}

/// A packet in the ring that owns a share of its block: send it to another thread, read it
/// there, drop it; the block goes back to the kernel when its last share is dropped.
///
/// It borrows the ring, so it cannot outlive it:
///
/// ```compile_fail
/// use zcrx_ring::{SyntheticRing, Frame};
/// let escaped;
/// {
///     let ring = SyntheticRing::builder().build(vec![Frame::new(vec![0u8; 60])]).unwrap();
///     let block = ring.next_block().unwrap().unwrap();
///     let desc = block.packets().next().unwrap().map(|p| block.desc(&p)).unwrap();
///     escaped = block.lease().into_ref(desc).unwrap();
/// } // `ring` dropped here while `escaped` still borrows it
/// println!("{:?}", escaped.data());
/// ```
#[derive(Debug)]
pub struct PacketRef<'ring> {
    lease: Lease<'ring>,
    desc: PacketDesc,
}

impl PacketRef<'_> {
    /// The packet.
    pub fn packet(&self) -> Packet<'_> {
        self.lease.packet_unchecked(&self.desc)
    }
    /// The captured bytes.
    pub fn data(&self) -> &[u8] {
        self.lease.map.desc_bytes(&self.desc)
    }
    /// Header facts.
    pub fn meta(&self) -> &PacketMeta {
        &self.desc.meta
    }
}

/// Many packets of one block under one share: one atomic when dropped, however many
/// packets it holds. The descriptor vector can be taken back for reuse.
#[derive(Debug)]
pub struct Batch<'ring> {
    lease: Lease<'ring>,
    descs: Vec<PacketDesc>,
}

impl<'ring> Batch<'ring> {
    /// Builds a batch; gives everything back if a descriptor is from another block or ring.
    pub fn new(
        lease: Lease<'ring>,
        descs: Vec<PacketDesc>,
    ) -> Result<Self, (Lease<'ring>, Vec<PacketDesc>)> {
        if descs.iter().all(|d| lease.owns(d)) {
            Ok(Self { lease, descs })
        } else {
            Err((lease, descs))
        }
    }
    /// Packets in the batch.
    pub fn len(&self) -> usize {
        self.descs.len()
    }
    /// Whether the batch is empty.
    pub fn is_empty(&self) -> bool {
        self.descs.is_empty()
    }
    /// The packets, in the order they were pushed.
    pub fn packets(&self) -> impl ExactSizeIterator<Item = Packet<'_>> + '_ {
        self.descs.iter().map(|d| self.lease.packet_unchecked(d))
    }
    /// The descriptors.
    pub fn descs(&self) -> &[PacketDesc] {
        &self.descs
    }
    /// Releases the share and returns the (cleared) descriptor vector for reuse.
    pub fn release(mut self) -> Vec<PacketDesc> {
        let mut v = std::mem::take(&mut self.descs);
        v.clear();
        v
    }
}
