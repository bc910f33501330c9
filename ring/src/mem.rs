//! Ring memory shared with the kernel (or a synthetic stand-in), block ownership and leases.
//!
//! A block is in one of three hands: the kernel's (`block_status == TP_STATUS_KERNEL`), the
//! ring's cursor (status USER, not yet taken), or ours (taken: `held` is set). Taking a
//! block sets `held` and a share count; every [`Lease`] is one share. When the last share is
//! dropped the block's status is set back to KERNEL and `held` is cleared, in that order.
//!
//! All of this crate's raw-pointer reads of ring memory are in this module.

use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};

use crossbeam_utils::CachePadded;

use crate::block::{bd, BlockView, Packet, PacketMeta};
use crate::error::BlockError;
use crate::lifecycle::{BlockState, MAX_SHARES};

/// Ring memory: the kernel's PACKET_RX_RING or PACKET_TX_RING mapping, or heap memory laid
/// out like one. The one owner of ring memory and of every raw pointer into it; the RX ring
/// (`BlockMap`) and the TX ring read and write through it. The memory is held through a raw
/// pointer (never a `Box` or slice that moves while `base` points into it), so accesses
/// through `base` stay valid under Rust's aliasing rules.
pub(crate) struct RingMemory {
    base: NonNull<u8>,
    len: usize,
    backing: Backing,
}

enum Backing {
    /// `mmap(MAP_SHARED)` of a packet socket's ring; unmapped on drop.
    Kernel(#[allow(dead_code)] memmap2::MmapRaw),
    /// From `Box::leak`, freed in `Drop`; `u64` for 8-alignment.
    Heap(NonNull<[u64]>),
}

impl Drop for Backing {
    fn drop(&mut self) {
        if let Backing::Heap(ptr) = *self {
            // SAFETY: `ptr` came from `Box::leak` in `RingMemory::from_heap` and is freed
            // only here, once; every borrow of the memory borrows its owner, so none is live.
            drop(unsafe { Box::from_raw(ptr.as_ptr()) });
        }
    }
}

// SAFETY: the memory is only accessed as its users' protocols allow (LIFECYCLE.md for RX,
// the frame status for TX): shared reads of regions nobody writes, exclusive writes, and
// atomic status words. No thread-affine data.
unsafe impl Send for RingMemory {}
// SAFETY: as above.
unsafe impl Sync for RingMemory {}

impl std::fmt::Debug for RingMemory {
    /// Kind and size only: the bytes are shared with the kernel.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RingMemory({}, {} bytes)", self.kind(), self.len)
    }
}

impl RingMemory {
    /// A packet socket's ring mapping.
    pub(crate) fn from_mmap(map: memmap2::MmapRaw) -> Self {
        let base = NonNull::new(map.as_mut_ptr()).expect("mmap never returns NULL on success");
        RingMemory {
            base,
            len: map.len(),
            backing: Backing::Kernel(map),
        }
    }

    /// Heap memory (a synthetic ring).
    pub(crate) fn from_heap(mem: Box<[u64]>) -> Self {
        let len = mem.len() * 8;
        let raw = NonNull::from(Box::leak(mem));
        RingMemory {
            base: raw.cast::<u8>(),
            len,
            backing: Backing::Heap(raw),
        }
    }

    fn kind(&self) -> &'static str {
        match self.backing {
            Backing::Kernel(_) => "kernel mmap",
            Backing::Heap(_) => "heap",
        }
    }

    /// Bytes of memory.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// A pointer to `len` bytes at `offset`, checked to lie inside the memory.
    #[inline]
    fn ptr(&self, offset: usize, len: usize) -> *mut u8 {
        assert!(
            offset.checked_add(len).is_some_and(|end| end <= self.len),
            "ring memory access {offset}+{len} outside {} bytes",
            self.len
        );
        // SAFETY: in bounds (asserted above), so the offset stays inside the allocation.
        unsafe { self.base.as_ptr().add(offset) }
    }

    /// The 4-byte status word at `offset` (a block's `block_status`, a frame's `tp_status`),
    /// shared with the kernel, which accesses it only atomically with respect to us
    /// (smp_rmb/smp_wmb + READ_ONCE/WRITE_ONCE in af_packet.c).
    pub(crate) fn status_word(&self, offset: usize) -> &AtomicU32 {
        let p = self.ptr(offset, 4);
        assert!(
            (p as usize) % 4 == 0,
            "status word at {offset} is not 4-aligned"
        );
        // SAFETY: in bounds, 4-aligned (asserted), lives as long as `self`; every access to
        // the word, ours and the kernel's, is atomic.
        unsafe { &*p.cast::<AtomicU32>() }
    }

    /// `len` bytes at `offset`, read-only.
    ///
    /// # Safety
    /// Nobody (the kernel included) writes these bytes while the slice lives.
    #[inline]
    pub(crate) unsafe fn bytes(&self, offset: usize, len: usize) -> &[u8] {
        // SAFETY: in bounds (`ptr`); no writer while it lives (the caller's promise).
        unsafe { std::slice::from_raw_parts(self.ptr(offset, len), len) }
    }

    /// `len` bytes at `offset`, writable.
    ///
    /// # Safety
    /// Nobody (the kernel included) reads or writes these bytes while the slice lives, and no
    /// other reference to them exists.
    #[allow(clippy::mut_from_ref)] // exclusive by the caller's promise, like `UnsafeCell::get`
    pub(crate) unsafe fn bytes_mut(&self, offset: usize, len: usize) -> &mut [u8] {
        // SAFETY: in bounds (`ptr`); exclusive (the caller's promise).
        unsafe { std::slice::from_raw_parts_mut(self.ptr(offset, len), len) }
    }
}

/// Identifies one mapping so a [`PacketDesc`] cannot be used against another ring.
static NEXT_MAP_ID: AtomicU32 = AtomicU32::new(1);

/// Blocks of `block_size` bytes at `base`, with per-block ownership state.
///
/// The ownership protocol (who may read or write a block when, and which atomic orders
/// what) is described in `ring/LIFECYCLE.md` and implemented in `lifecycle.rs`.
pub struct BlockMap {
    mem: RingMemory,
    block_size: usize,
    block_count: usize,
    id: u32,
    states: Box<[CachePadded<BlockState>]>,
}

impl std::fmt::Debug for BlockMap {
    /// Geometry and ownership counters only: the ring's bytes are shared with the kernel
    /// and other threads, and megabytes long.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockMap")
            .field("backing", &self.mem.kind())
            .field("block_size", &self.block_size)
            .field("block_count", &self.block_count)
            .field("blocks_held", &self.blocks_held())
            .finish()
    }
}

impl BlockMap {
    /// Wraps a kernel ring mapping of `block_count` blocks.
    pub(crate) fn from_mmap(map: memmap2::MmapRaw, block_size: usize, block_count: usize) -> Self {
        Self::new(RingMemory::from_mmap(map), block_size, block_count)
    }

    /// Wraps heap memory that already holds `block_count` blocks.
    pub(crate) fn from_heap(mem: Box<[u64]>, block_size: usize, block_count: usize) -> Self {
        Self::new(RingMemory::from_heap(mem), block_size, block_count)
    }

    fn new(mem: RingMemory, block_size: usize, block_count: usize) -> Self {
        assert!(block_size >= bd::LEN && block_size % 8 == 0 && block_size <= u32::MAX as usize);
        assert!(
            block_count <= u32::MAX as usize,
            "block index must fit a u32"
        );
        assert!(
            block_size * block_count <= mem.len(),
            "memory smaller than the ring"
        );
        let states = (0..block_count)
            .map(|_| CachePadded::new(BlockState::default()))
            .collect();
        let id = NEXT_MAP_ID.fetch_add(1, Ordering::Relaxed);
        Self {
            mem,
            block_size,
            block_count,
            id,
            states,
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

    #[inline]
    fn block_offset(&self, index: usize) -> usize {
        assert!(index < self.block_count);
        index * self.block_size
    }

    /// The block's `block_status` word, shared with the kernel.
    pub(crate) fn status(&self, index: usize) -> &AtomicU32 {
        self.mem
            .status_word(self.block_offset(index) + bd::BLOCK_STATUS)
    }

    /// Blocks currently taken by us (held by a [`Block`] or leases): at most this much of the
    /// ring is withheld from the kernel.
    pub fn blocks_held(&self) -> usize {
        self.states.iter().filter(|s| s.is_held()).count()
    }

    /// Whether the block is taken by us (some share outstanding).
    pub(crate) fn is_held(&self, index: usize) -> bool {
        self.states[index].is_held()
    }

    /// Takes block `index` if it is user-owned and not already held; returns the block.
    /// Safe to call from several threads: exactly one wins a user-owned block.
    pub(crate) fn try_take(&self, index: usize) -> Option<Block<'_>> {
        let generation = self.states[index].try_take(self.status(index))?;
        Some(Block {
            map: self,
            index: index as u32,
            generation,
        })
    }

    /// The whole block as bytes.
    #[inline]
    fn block_bytes(&self, index: usize) -> &[u8] {
        // SAFETY: only called for a held block (through a `Block`, `Lease` or `PacketRef`,
        // each owning a share): the kernel does not write a user-owned block, and we write
        // only its status word, after every borrow of these bytes has ended (the last share
        // is dropped before the hand-back) — see LIFECYCLE.md.
        unsafe { self.mem.bytes(self.block_offset(index), self.block_size) }
    }

    /// Drops `k` shares of a held block; the last one hands the block back.
    #[inline]
    fn put(&self, index: u32, k: u32) {
        let i = index as usize;
        self.states[i].put(k, self.status(i));
    }

    /// Synthetic rings: marks a block user-owned again, as the kernel does when it fills one
    /// (the bytes are unchanged: the same packets come again).
    pub(crate) fn rearm(&self, index: usize) {
        self.states[index].rearm(self.status(index), || true);
    }

    /// Synthetic rings fed as they go: if block `index` is kernel-owned and nobody holds it,
    /// `fill` rewrites its bytes and, if it returns true (it laid packets), the block becomes
    /// user-owned.
    pub(crate) fn rearm_with(&self, index: usize, fill: impl FnOnce(&mut [u8]) -> bool) {
        let state = &self.states[index];
        if !state.claim_kernel_owned(self.status(index)) {
            return;
        }
        // SAFETY: we hold the block's claim and the block is kernel-owned and unheld: no
        // `Block`, `Lease` or `PacketRef` of it exists, no other taker or re-arm can claim it
        // until we release it, nobody reads its status word without the claim, and the
        // memory is ours (heap), not the kernel's. No reference to the status word is alive
        // either (each `status()` call above and below makes a new one). So this is the only
        // reference to these bytes while it lives.
        let bytes = unsafe {
            self.mem
                .bytes_mut(self.block_offset(index), self.block_size)
        };
        let filled = fill(bytes);
        state.end_refill(self.status(index), filled);
    }

    /// Writes `bytes` into block `index` at `offset` (synthetic rings, corruption tests).
    pub(crate) fn poke(&mut self, index: usize, offset: usize, bytes: &[u8]) {
        assert!(
            index < self.block_count && offset + bytes.len() <= self.block_size,
            "poke out of bounds"
        );
        // SAFETY: `&mut self`: no block is taken, so no borrow of the ring's bytes exists
        // while we write; heap memory (synthetic rings) is not the kernel's.
        unsafe {
            self.mem
                .bytes_mut(self.block_offset(index) + offset, bytes.len())
        }
        .copy_from_slice(bytes);
    }

    /// Frame bytes of a validated descriptor.
    #[inline]
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
    generation: u32,
}

impl<'ring> Block<'ring> {
    /// Index of the block in its ring.
    pub fn index(&self) -> usize {
        self.index as usize
    }

    /// The `sockaddr_ll` the kernel wrote after packet `p`'s header in this block (zeros for
    /// a packet rebuilt from a descriptor); see [`BlockView::link_addr`].
    pub fn link_addr(&self, p: &Packet<'_>) -> crate::LinkAddr {
        self.link_addr_at(p.header_offset())
    }

    /// [`Block::link_addr`] of the packet whose header is at `hdr_off`
    /// ([`Packet::header_offset`]).
    pub fn link_addr_at(&self, hdr_off: u32) -> crate::LinkAddr {
        crate::block::link_addr_at(self.map.block_bytes(self.index as usize), hdr_off)
    }

    /// Whether the kernel had dropped packets when it closed this block
    /// ([`BlockView::losing`]: `TP_STATUS_LOSING` in the block status).
    pub fn losing(&self) -> bool {
        crate::block::block_losing(self.map.block_bytes(self.index as usize))
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

    /// The walk of [`Block::view`] with each packet's descriptor, made from the offsets the
    /// walk itself checked: what [`Block::desc`] makes, without checking a second time that
    /// the packet is this block's (a stage that walks a block and hands its packets on pays
    /// that check per packet). A bad header yields one `Err` and ends the walk.
    #[inline]
    pub fn described(
        &self,
    ) -> Result<impl Iterator<Item = Result<(Packet<'_>, PacketDesc), BlockError>> + '_, BlockError>
    {
        let view = self.view()?;
        let (map, block, generation) = (self.map.id, self.index, self.generation);
        Ok(view.packets().map(move |r| {
            r.map(|p| {
                let desc = PacketDesc {
                    map,
                    block,
                    generation,
                    hdr_off: p.header_offset(),
                    data_off: p.offset_in_block(),
                    caplen: p.caplen(),
                };
                (p, desc)
            })
        }))
    }

    /// A descriptor for `packet`, which a [`Lease`] of this take of this block can turn back
    /// into bytes on another thread.
    ///
    /// # Panics
    /// If `packet` was not walked from this block (it comes from another block or ring, or
    /// from a [`BlockView`] over other bytes): a descriptor never reads the wrong bytes.
    #[inline]
    pub fn desc(&self, packet: &Packet<'_>) -> PacketDesc {
        let data_off = packet.offset_in_block();
        let hdr_off = packet.header_offset();
        let block = self.map.block_bytes(self.index as usize);
        let here = block
            .get(data_off as usize..)
            .is_some_and(|rest| std::ptr::eq(rest.as_ptr(), packet.data().as_ptr()));
        // The header (read again for the packet's facts) lies before the data, in the block.
        let header = u64::from(hdr_off) + crate::block::hdr3::SIZE as u64 <= u64::from(data_off);
        assert!(
            here && header && data_off as usize + packet.data().len() <= block.len(),
            "Block::desc: not a packet of this block (block {} of ring {})",
            self.index,
            self.map.id
        );
        PacketDesc {
            map: self.map.id,
            block: self.index,
            generation: self.generation,
            hdr_off,
            data_off,
            caplen: packet.caplen(),
        }
    }

    /// One more share of this block (one atomic increment), like `Arc::clone`.
    ///
    /// Aborts the process if more than 2^31 shares of one block exist (leaked with
    /// `mem::forget`), as `Arc::clone` does.
    pub fn lease(&self) -> Lease<'ring> {
        self.map.states[self.index as usize].share(1);
        Lease {
            map: self.map,
            index: self.index,
            generation: self.generation,
        }
    }

    /// Turns the block into `n` leases: the block's own share becomes the first one, and
    /// `n - 1` are added with one atomic (leases already made by [`Block::lease`] stay
    /// valid). With `n == 0` this is `drop(block)`. This is the stage's path: one share per
    /// batch. Leases the iterator has not yielded when it is dropped are released then.
    ///
    /// # Panics
    /// If `n` exceeds 2^31 (before anything changes; the block is then dropped normally).
    pub fn into_leases(self, n: usize) -> Leases<'ring> {
        let extra = n.saturating_sub(1);
        let extra = u32::try_from(extra)
            .ok()
            .filter(|&e| e <= MAX_SHARES)
            .unwrap_or_else(|| panic!("Block::into_leases: {n} leases of one block"));
        let (map, index, generation) = (self.map, self.index, self.generation);
        if n == 0 {
            drop(self);
        } else {
            if extra > 0 {
                map.states[index as usize].share(extra);
            }
            // The block's share now belongs to the iterator.
            std::mem::forget(self);
        }
        Leases {
            map,
            index,
            generation,
            left: n as u32,
        }
    }
}

impl Drop for Block<'_> {
    fn drop(&mut self) {
        self.map.put(self.index, 1);
    }
}

/// The leases made by [`Block::into_leases`]; unconsumed ones are released on drop.
#[derive(Debug)]
pub struct Leases<'ring> {
    map: &'ring BlockMap,
    index: u32,
    generation: u32,
    left: u32,
}

impl<'ring> Iterator for Leases<'ring> {
    type Item = Lease<'ring>;

    #[inline]
    fn next(&mut self) -> Option<Lease<'ring>> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        Some(Lease {
            map: self.map,
            index: self.index,
            generation: self.generation,
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left as usize, Some(self.left as usize))
    }
}

impl ExactSizeIterator for Leases<'_> {}

impl Drop for Leases<'_> {
    fn drop(&mut self) {
        if self.left > 0 {
            self.map.put(self.index, self.left);
        }
    }
}

/// Where a packet sits in a ring; plain data (`Copy`, no lifetime), 24 bytes. Made only by
/// [`Block::desc`] or [`Block::described`], so its bounds were checked by the walker. It names its ring, block and
/// take: a lease of any other take refuses it. The header facts ([`PacketMeta`]) are not in
/// it: whoever holds the block's share reads them from the packet's `tpacket3_hdr` in the
/// ring ([`PacketRef::meta`], [`Batch::packets`]), next to the bytes it is about to read
/// anyway; carried here they made a descriptor 56 bytes, most of a cache line per packet
/// crossing from the stage's core to a consumer's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PacketDesc {
    map: u32,
    block: u32,
    generation: u32,
    hdr_off: u32,
    data_off: u32,
    caplen: u32,
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
}

/// One share of a taken block: while it lives the kernel cannot reuse the block.
/// `Send`, so it can travel to a consumer thread; it cannot outlive the ring.
#[derive(Debug)]
pub struct Lease<'ring> {
    map: &'ring BlockMap,
    index: u32,
    generation: u32,
}

impl<'ring> Lease<'ring> {
    /// Block index.
    pub fn block(&self) -> usize {
        self.index as usize
    }

    /// The lease's whole block, its header checked as [`Block::view`] does: for a thread
    /// that is handed every packet of a block (one share and no descriptors) and walks it
    /// itself. The bytes stay put while the lease lives.
    pub fn view(&self) -> Result<BlockView<'_>, BlockError> {
        BlockView::parse(self.map.block_bytes(self.index as usize))
    }

    /// The packet behind `desc`, if `desc` belongs to this take of this lease's block.
    pub fn packet(&self, desc: &PacketDesc) -> Option<Packet<'_>> {
        self.owns(desc).then(|| self.packet_unchecked(desc))
    }

    #[inline]
    fn owns(&self, desc: &PacketDesc) -> bool {
        desc.map == self.map.id && desc.block == self.index && desc.generation == self.generation
    }

    #[inline(always)]
    fn packet_unchecked(&self, desc: &PacketDesc) -> Packet<'_> {
        // The block's bytes once, for the facts and the data: a second lookup would be paid
        // by the consumer on every packet.
        let block = self.map.block_bytes(desc.block as usize);
        let data = &block[desc.data_off as usize..][..desc.caplen as usize];
        Packet::from_parts(data, (desc.hdr_off, desc.data_off), facts(block, desc))
    }

    /// The header facts of an owned descriptor, read from its header in the ring.
    #[inline]
    fn meta_unchecked(&self, desc: &PacketDesc) -> PacketMeta {
        facts(self.map.block_bytes(desc.block as usize), desc)
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
        self.map.put(self.index, 1);
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
    /// The packet this reference keeps alive: its header facts and its bytes in the ring.
    pub fn packet(&self) -> Packet<'_> {
        self.lease.packet_unchecked(&self.desc)
    }
    /// The captured bytes.
    pub fn data(&self) -> &[u8] {
        self.lease.map.desc_bytes(&self.desc)
    }
    /// Header facts, read from the packet's header in the ring.
    pub fn meta(&self) -> PacketMeta {
        self.lease.meta_unchecked(&self.desc)
    }
}

/// The header facts of `desc` from its block's bytes.
#[inline(always)]
fn facts(block: &[u8], desc: &PacketDesc) -> PacketMeta {
    crate::block::meta_at(block, desc.hdr_off)
        .expect("a descriptor's header lies in its block (checked by Block::desc)")
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
    #[inline]
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
    /// Where each packet lies in the leased block, in the order they were pushed.
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

#[cfg(all(test, not(loom)))]
mod tests;
