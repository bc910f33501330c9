//! A ring built in memory, laid out byte for byte as af_packet.c lays out TPACKET_V3 blocks,
//! read by the same walker and leases as the kernel ring. For unprivileged tests and
//! reproducible benchmarks.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::block::{bd, hdr3, status};
use crate::error::{RingError, Setting};
use crate::mem::{Block, BlockMap};

/// `TPACKET_ALIGN(sizeof(struct tpacket3_hdr))`: where the `sockaddr_ll` sits.
const SLL_OFFSET: usize = 48;
/// `TPACKET3_HDRLEN` = aligned header + sockaddr_ll (linux/if_packet.h).
const TPACKET3_HDRLEN: usize = libc::TPACKET3_HDRLEN;
/// V3 packets are 8-aligned in the block (af_packet.c `V3_ALIGNMENT`).
const V3_ALIGNMENT: usize = 8;

fn tpacket_align(x: usize) -> usize {
    (x + libc::TPACKET_ALIGNMENT - 1) & !(libc::TPACKET_ALIGNMENT - 1)
}

/// `tp_mac` for a link header of `maclen` bytes (af_packet.c `tpacket_rcv`:
/// `netoff = TPACKET_ALIGN(tp_hdrlen + max(maclen, 16)); macoff = netoff - maclen`).
pub fn mac_offset(maclen: usize) -> usize {
    tpacket_align(TPACKET3_HDRLEN + maclen.max(16)) - maclen
}

/// One frame to place in a synthetic ring.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Frame {
    /// Bytes from the link-layer header on (the whole frame; the snaplen cuts it).
    pub data: Vec<u8>,
    /// Wire length; at least `data.len()`.
    pub wire_len: u32,
    /// Timestamp, ns since the epoch.
    pub ts_ns: u64,
    /// A VLAN tag the "kernel" stripped: (TCI, TPID).
    pub vlan: Option<(u16, u16)>,
    /// `tp_rxhash`.
    pub rxhash: u32,
}

impl Frame {
    /// A frame with `wire_len == data.len()`, time 0, no VLAN.
    pub fn new(data: Vec<u8>) -> Self {
        let wire_len = data.len() as u32;
        Frame {
            data,
            wire_len,
            ts_ns: 0,
            vlan: None,
            rxhash: 0,
        }
    }
    /// Sets the timestamp.
    pub fn at(mut self, ts_ns: u64) -> Self {
        self.ts_ns = ts_ns;
        self
    }
    /// Sets the length on the wire (at least the data's length: the ring refuses less).
    pub fn wire_len(mut self, len: u32) -> Self {
        self.wire_len = len;
        self
    }
    /// Sets the VLAN tag the "kernel" stripped: (TCI, TPID).
    pub fn vlan(mut self, tag: Option<(u16, u16)>) -> Self {
        self.vlan = tag;
        self
    }
    /// Sets `tp_rxhash`.
    pub fn rxhash(mut self, hash: u32) -> Self {
        self.rxhash = hash;
        self
    }
}

/// Builder for [`SyntheticRing`].
#[derive(Debug, Clone)]
pub struct SyntheticRingBuilder {
    block_size: usize,
    block_count: Option<usize>,
    snaplen: u32,
    replay: bool,
    maclen: usize,
}

impl Default for SyntheticRingBuilder {
    fn default() -> Self {
        SyntheticRingBuilder {
            block_size: crate::rx::DEFAULT_BLOCK_SIZE,
            block_count: None,
            snaplen: crate::rx::DEFAULT_SNAPLEN,
            replay: false,
            maclen: 14,
        }
    }
}

impl SyntheticRingBuilder {
    /// Block size (multiple of 8, at least 4096 is sensible).
    pub fn block_size(mut self, bytes: usize) -> Self {
        self.block_size = bytes;
        self
    }
    /// Blocks in the ring; by default exactly as many as the frames need. Extra blocks stay
    /// kernel-owned (empty).
    pub fn block_count(mut self, n: usize) -> Self {
        self.block_count = Some(n);
        self
    }
    /// Bytes kept per frame.
    pub fn snaplen(mut self, bytes: u32) -> Self {
        self.snaplen = bytes;
        self
    }
    /// Replay: a handed-back block is refilled with the same packets, forever, as if the
    /// kernel received the same traffic again. For benchmarks.
    pub fn replay(mut self, on: bool) -> Self {
        self.replay = on;
        self
    }
    /// Link header length used to place `tp_mac` (14 for Ethernet, as the kernel would).
    pub fn link_header_len(mut self, maclen: usize) -> Self {
        self.maclen = maclen;
        self
    }

    /// Lays `frames` out in blocks.
    pub fn build(
        self,
        frames: impl IntoIterator<Item = Frame>,
    ) -> Result<SyntheticRing, RingError> {
        let layout = Layout::new(&self)?;
        let bs = self.block_size;
        let mut frames = frames.into_iter().peekable();
        let mut blocks: Vec<Vec<u8>> = Vec::new();
        let mut total = 0usize;
        while frames.peek().is_some() {
            let mut bytes = vec![0u8; bs];
            total += layout.fill(&mut bytes, blocks.len() as u64, &mut frames)? as usize;
            put_u32(&mut bytes, bd::BLOCK_STATUS, status::USER);
            blocks.push(bytes);
        }
        let filled = blocks.len();
        let count = self.block_count.unwrap_or(filled.max(1));
        if count < filled {
            return Err(RingError::config(
                Setting::BlockCount,
                format!("{count} blocks cannot hold the {filled} the frames need"),
            ));
        }
        let mut mem = ring_memory(count, bs)?;
        for (i, b) in blocks.iter().enumerate() {
            for (w, chunk) in mem[i * bs / 8..(i + 1) * bs / 8]
                .iter_mut()
                .zip(b.chunks_exact(8))
            {
                *w = u64::from_ne_bytes(chunk.try_into().expect("8 bytes"));
            }
        }
        Ok(SyntheticRing {
            map: BlockMap::from_heap(mem, bs, count),
            filled,
            packets: total,
            replay: self.replay,
            feed: None,
            cursor: AtomicUsize::new(0),
            taken: AtomicUsize::new(0),
        })
    }

    /// A ring fed from `frames` as it is read: `block_count` blocks (default 4) are filled
    /// from the iterator whenever they come back, as the kernel refills its ring. Memory stays
    /// bounded however long the input is (a capture file of any size); the ring is exhausted
    /// when the iterator ends and every block was taken.
    pub fn stream(
        self,
        frames: impl Iterator<Item = Frame> + Send + 'static,
    ) -> Result<SyntheticRing, RingError> {
        let layout = Layout::new(&self)?;
        let count = self.block_count.unwrap_or(4);
        let mem = ring_memory(count, self.block_size)?;
        let frames: Box<dyn Iterator<Item = Frame> + Send> = Box::new(frames);
        Ok(SyntheticRing {
            // Zeroed memory: every block starts kernel-owned (status 0), waiting to be filled.
            map: BlockMap::from_heap(mem, self.block_size, count),
            filled: 0,
            packets: 0,
            replay: false,
            feed: Some(Mutex::new(Feed {
                frames: frames.peekable(),
                layout,
                blocks: 0,
                seq: 0,
                packets: 0,
                error: None,
            })),
            cursor: AtomicUsize::new(0),
            taken: AtomicUsize::new(0),
        })
    }
}

/// Zeroed ring memory of `count` blocks of `bs` bytes, or an error naming the geometry.
fn ring_memory(count: usize, bs: usize) -> Result<Box<[u64]>, RingError> {
    if count == 0 || count > u32::MAX as usize {
        return Err(RingError::config(
            Setting::BlockCount,
            format!("{count} must be in 1..=2^32-1"),
        ));
    }
    let words = count
        .checked_mul(bs)
        .map(|bytes| bytes / 8)
        .ok_or_else(|| {
            RingError::config(
                Setting::BlockCount,
                format!("{count} blocks of {bs} bytes overflow the address space"),
            )
        })?;
    let mut mem: Vec<u64> = Vec::new();
    mem.try_reserve_exact(words).map_err(|e| {
        RingError::config(
            Setting::BlockCount,
            format!("{count} blocks of {bs} bytes: {e}"),
        )
    })?;
    mem.resize(words, 0);
    Ok(mem.into_boxed_slice())
}

/// How frames are laid into a block: af_packet.c's layout for TPACKET_V3.
#[derive(Debug, Clone, Copy)]
struct Layout {
    block_size: usize,
    snaplen: u32,
    maclen: usize,
    macoff: usize,
    max_cap: usize,
}

impl Layout {
    fn new(b: &SyntheticRingBuilder) -> Result<Layout, RingError> {
        let bs = b.block_size;
        if bs % 8 != 0 || bs < 4096 || bs > u32::MAX as usize / 2 {
            return Err(RingError::config(
                Setting::BlockSize,
                format!("{bs} must be a multiple of 8 in 4096..2^31"),
            ));
        }
        if b.snaplen == 0 {
            return Err(RingError::config(Setting::Snaplen, "0 must be at least 1"));
        }
        let macoff = mac_offset(b.maclen);
        Ok(Layout {
            block_size: bs,
            snaplen: b.snaplen,
            maclen: b.maclen,
            macoff,
            max_cap: bs - bd::LEN - macoff,
        })
    }

    /// Lays frames from `frames` into `block` (one whole block; zeroed, or a block handed
    /// back, whose every byte the walker reads is rewritten) while they fit, and returns how
    /// many. The block status word is left to the caller.
    fn fill<I: Iterator<Item = Frame>>(
        &self,
        block: &mut [u8],
        seq: u64,
        frames: &mut std::iter::Peekable<I>,
    ) -> Result<u32, RingError> {
        let first = bd::LEN; // BLK_PLUS_PRIV(0)
        let (mut next, mut pkts, mut last) = (first, 0u32, first);
        let mut ts_first = None;
        while let Some(f) = frames.peek() {
            if (f.wire_len as usize) < f.data.len() {
                return Err(RingError::config(
                    Setting::Frame,
                    format!("wire_len {} < data length {}", f.wire_len, f.data.len()),
                ));
            }
            let caplen = f.data.len().min(self.snaplen as usize).min(self.max_cap);
            let need = (self.macoff + caplen).next_multiple_of(V3_ALIGNMENT);
            if pkts > 0 && next + need > self.block_size {
                break; // the block is full: the frame opens the next one
            }
            let f = frames.next().expect("peeked");
            ts_first.get_or_insert(f.ts_ns);
            self.put_packet(block, next, need, caplen, &f);
            last = next;
            next += need;
            pkts += 1;
        }
        let (s, ns) = split_ts(ts_first.unwrap_or(0));
        put_u32(block, bd::VERSION, 2);
        put_u32(block, 4, bd::LEN as u32); // offset_to_priv = BLK_HDR_LEN
        put_u32(block, bd::OFFSET_TO_FIRST_PKT, first as u32);
        block[bd::SEQ_NUM..bd::SEQ_NUM + 8].copy_from_slice(&seq.to_ne_bytes());
        put_u32(block, bd::TS_FIRST_PKT, s);
        put_u32(block, bd::TS_FIRST_PKT + 4, ns);
        put_u32(block, bd::NUM_PKTS, pkts);
        put_u32(block, bd::BLK_LEN, next as u32);
        // The kernel leaves tp_next_offset of the last packet at 0.
        put_u32(block, last + hdr3::NEXT_OFFSET, 0);
        let ts_last = (
            u32_of(block, last + hdr3::SEC),
            u32_of(block, last + hdr3::NSEC),
        );
        put_u32(block, bd::TS_LAST_PKT, ts_last.0);
        put_u32(block, bd::TS_LAST_PKT + 4, ts_last.1);
        Ok(pkts)
    }

    /// One `tpacket3_hdr` + `sockaddr_ll` + frame at `off`.
    fn put_packet(&self, block: &mut [u8], off: usize, need: usize, caplen: usize, f: &Frame) {
        let macoff = self.macoff;
        // Headers of a reused block: nothing stale survives (VLAN fields are optional).
        block[off..off + macoff].fill(0);
        let (s, ns) = split_ts(f.ts_ns);
        let mut st = status::USER;
        put_u32(block, off + hdr3::NEXT_OFFSET, need as u32);
        put_u32(block, off + hdr3::SEC, s);
        put_u32(block, off + hdr3::NSEC, ns);
        put_u32(block, off + hdr3::SNAPLEN, caplen as u32);
        put_u32(block, off + hdr3::LEN, f.wire_len);
        put_u16(block, off + hdr3::MAC, macoff as u16);
        put_u16(block, off + hdr3::NET, (macoff + self.maclen) as u16);
        put_u32(block, off + hdr3::RXHASH, f.rxhash);
        if let Some((tci, tpid)) = f.vlan {
            st |= status::VLAN_VALID | status::VLAN_TPID_VALID;
            put_u32(block, off + hdr3::VLAN_TCI, u32::from(tci));
            put_u16(block, off + hdr3::VLAN_TPID, tpid);
        }
        put_u32(block, off + hdr3::STATUS, st);
        // sockaddr_ll after the header: family, protocol, ifindex 0, ARPHRD_ETHER, host.
        put_u16(block, off + SLL_OFFSET, libc::AF_PACKET as u16);
        if f.data.len() >= 14 {
            block[off + SLL_OFFSET + 2..off + SLL_OFFSET + 4].copy_from_slice(&f.data[12..14]);
            put_u16(block, off + SLL_OFFSET + 8, libc::ARPHRD_ETHER);
            block[off + SLL_OFFSET + 11] = 6;
            block[off + SLL_OFFSET + 12..off + SLL_OFFSET + 18].copy_from_slice(&f.data[6..12]);
        }
        block[off + macoff..off + macoff + caplen].copy_from_slice(&f.data[..caplen]);
    }
}

/// The input of a streaming ring.
struct Feed {
    /// Blocks filled so far.
    blocks: usize,
    frames: std::iter::Peekable<Box<dyn Iterator<Item = Frame> + Send>>,
    layout: Layout,
    seq: u64,
    packets: usize,
    /// A frame the layout refused: reported by `next_block`.
    error: Option<String>,
}

fn split_ts(ns: u64) -> (u32, u32) {
    ((ns / 1_000_000_000) as u32, (ns % 1_000_000_000) as u32)
}
fn put_u32(b: &mut [u8], off: usize, v: u32) {
    b[off..off + 4].copy_from_slice(&v.to_ne_bytes());
}
fn put_u16(b: &mut [u8], off: usize, v: u16) {
    b[off..off + 2].copy_from_slice(&v.to_ne_bytes());
}
fn u32_of(b: &[u8], off: usize) -> u32 {
    u32::from_ne_bytes(b[off..off + 4].try_into().expect("4 bytes"))
}

/// A ring in memory, in the kernel's block format.
#[derive(Debug)]
pub struct SyntheticRing {
    map: BlockMap,
    filled: usize,
    packets: usize,
    replay: bool,
    /// Streaming ([`SyntheticRingBuilder::stream`]): where blocks are filled from.
    feed: Option<Mutex<Feed>>,
    cursor: AtomicUsize,
    taken: AtomicUsize,
}

impl SyntheticRing {
    /// A builder with the live ring's defaults.
    pub fn builder() -> SyntheticRingBuilder {
        SyntheticRingBuilder::default()
    }
    /// The ring memory.
    pub fn map(&self) -> &BlockMap {
        &self.map
    }
    /// Blocks holding packets (streaming: filled so far).
    pub fn filled_blocks(&self) -> usize {
        match &self.feed {
            Some(f) => lock(f).blocks,
            None => self.filled,
        }
    }
    /// Packets laid out (one pass; streaming: so far).
    pub fn packets(&self) -> usize {
        match &self.feed {
            Some(f) => lock(f).packets,
            None => self.packets,
        }
    }
    /// Streaming: a frame the ring could not lay out (its wire length below its captured
    /// length); the stream ends there.
    pub fn stream_error(&self) -> Option<String> {
        self.feed.as_ref().and_then(|f| lock(f).error.clone())
    }

    /// Raw access for corruption tests: writes `bytes` at `offset` of block `index`.
    /// Only possible while no block is taken (`&mut self`).
    pub fn poke(&mut self, index: usize, offset: usize, bytes: &[u8]) {
        self.map.poke(index, offset, bytes);
    }

    /// The next user-owned block in ring order, or `None` when none is ready (all consumed,
    /// or the next one is still leased). In replay mode a handed-back block is refilled.
    pub fn next_block(&self) -> Option<Block<'_>> {
        let index = self.cursor.load(Ordering::Relaxed);
        if self.replay && index < self.filled {
            self.map.rearm(index);
        }
        if let Some(feed) = &self.feed {
            let mut feed = lock(feed);
            self.map.rearm_with(index, |bytes| feed.fill(bytes));
        }
        let block = self.map.try_take(index)?;
        let next = if self.replay {
            (index + 1) % self.filled.max(1)
        } else {
            (index + 1) % self.map.block_count()
        };
        // Only the taker that read the cursor advances it (several threads may take).
        let _ = self
            .cursor
            .compare_exchange(index, next, Ordering::Relaxed, Ordering::Relaxed);
        self.taken.fetch_add(1, Ordering::Relaxed);
        Some(block)
    }

    /// Without replay: every filled block has been taken once, so no block will come again.
    pub fn is_exhausted(&self) -> bool {
        let taken = self.taken.load(Ordering::Relaxed);
        match &self.feed {
            Some(feed) => {
                let mut feed = lock(feed);
                let done = feed.error.is_some() || feed.frames.peek().is_none();
                done && taken >= feed.blocks
            }
            None => !self.replay && taken >= self.filled,
        }
    }

    /// Whether the ring replays its blocks forever.
    pub fn is_replay(&self) -> bool {
        self.replay
    }
}

fn lock(feed: &Mutex<Feed>) -> std::sync::MutexGuard<'_, Feed> {
    // A panic while filling leaves the feed consistent (the block stays kernel-owned).
    feed.lock().unwrap_or_else(|p| p.into_inner())
}

impl Feed {
    /// Fills a handed-back block with the next frames; false when there are none (or the
    /// layout refused one: the stream ends with `error`).
    fn fill(&mut self, block: &mut [u8]) -> bool {
        if self.error.is_some() || self.frames.peek().is_none() {
            return false;
        }
        match self.layout.fill(block, self.seq, &mut self.frames) {
            Ok(n) => {
                self.seq += 1;
                self.blocks += 1;
                self.packets += n as usize;
                true
            }
            Err(e) => {
                self.error = Some(e.to_string());
                false
            }
        }
    }
}

impl std::fmt::Debug for Feed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Feed")
            .field("blocks", &self.blocks)
            .field("packets", &self.packets)
            .field("error", &self.error)
            .finish()
    }
}
