//! A ring built in memory, laid out byte for byte as af_packet.c lays out TPACKET_V3 blocks,
//! read by the same walker and leases as the kernel ring. For unprivileged tests and
//! reproducible benchmarks.

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::block::{bd, hdr3, status};
use crate::error::RingError;
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
        let bs = self.block_size;
        if bs % 8 != 0 || bs < 4096 || bs > u32::MAX as usize / 2 {
            return Err(RingError::config(
                "block_size",
                format!("{bs} must be a multiple of 8 in 4096..2^31"),
            ));
        }
        if self.snaplen == 0 {
            return Err(RingError::config("snaplen", "0 must be at least 1"));
        }
        let macoff = mac_offset(self.maclen);
        let first = bd::LEN; // BLK_PLUS_PRIV(0)
        let max_cap = bs - first - macoff;
        let mut blocks: Vec<Vec<u8>> = Vec::new();
        let mut cur: Option<(Vec<u8>, usize, u32, usize)> = None; // (bytes, nxt_offset, pkts, last_hdr)
        let mut seq = 0u64;
        let mut total = 0usize;
        let close = |blocks: &mut Vec<Vec<u8>>, b: (Vec<u8>, usize, u32, usize)| {
            let (mut bytes, nxt, pkts, last) = b;
            put_u32(&mut bytes, bd::NUM_PKTS, pkts);
            put_u32(&mut bytes, bd::BLK_LEN, nxt as u32);
            // The kernel leaves tp_next_offset of the last packet at 0.
            put_u32(&mut bytes, last + hdr3::NEXT_OFFSET, 0);
            let ts_last = (
                u32_of(&bytes, last + hdr3::SEC),
                u32_of(&bytes, last + hdr3::NSEC),
            );
            put_u32(&mut bytes, bd::TS_LAST_PKT, ts_last.0);
            put_u32(&mut bytes, bd::TS_LAST_PKT + 4, ts_last.1);
            blocks.push(bytes);
        };
        for f in frames {
            if (f.wire_len as usize) < f.data.len() {
                return Err(RingError::config(
                    "frame",
                    format!("wire_len {} < data length {}", f.wire_len, f.data.len()),
                ));
            }
            let caplen = f.data.len().min(self.snaplen as usize).min(max_cap);
            let need = (macoff + caplen).next_multiple_of(V3_ALIGNMENT);
            if let Some(b) = cur.take() {
                if b.1 + need > bs {
                    close(&mut blocks, b);
                } else {
                    cur = Some(b);
                }
            }
            let b = cur.get_or_insert_with(|| {
                let mut bytes = vec![0u8; bs];
                put_u32(&mut bytes, bd::VERSION, 2);
                put_u32(&mut bytes, 4, bd::LEN as u32); // offset_to_priv = BLK_HDR_LEN
                put_u32(&mut bytes, bd::BLOCK_STATUS, status::USER);
                put_u32(&mut bytes, bd::OFFSET_TO_FIRST_PKT, first as u32);
                bytes[bd::SEQ_NUM..bd::SEQ_NUM + 8].copy_from_slice(&seq.to_ne_bytes());
                let (s, ns) = split_ts(f.ts_ns);
                put_u32(&mut bytes, bd::TS_FIRST_PKT, s);
                put_u32(&mut bytes, bd::TS_FIRST_PKT + 4, ns);
                seq += 1;
                (bytes, first, 0, first)
            });
            let off = b.1;
            let bytes = &mut b.0;
            let (s, ns) = split_ts(f.ts_ns);
            let mut st = status::USER;
            put_u32(bytes, off + hdr3::NEXT_OFFSET, need as u32);
            put_u32(bytes, off + hdr3::SEC, s);
            put_u32(bytes, off + hdr3::NSEC, ns);
            put_u32(bytes, off + hdr3::SNAPLEN, caplen as u32);
            put_u32(bytes, off + hdr3::LEN, f.wire_len);
            put_u16(bytes, off + hdr3::MAC, macoff as u16);
            put_u16(bytes, off + hdr3::NET, (macoff + self.maclen) as u16);
            put_u32(bytes, off + hdr3::RXHASH, f.rxhash);
            if let Some((tci, tpid)) = f.vlan {
                st |= status::VLAN_VALID | status::VLAN_TPID_VALID;
                put_u32(bytes, off + hdr3::VLAN_TCI, u32::from(tci));
                put_u16(bytes, off + hdr3::VLAN_TPID, tpid);
            }
            put_u32(bytes, off + hdr3::STATUS, st);
            // sockaddr_ll after the header: family, protocol, ifindex 0, ARPHRD_ETHER, host.
            put_u16(bytes, off + SLL_OFFSET, libc::AF_PACKET as u16);
            if f.data.len() >= 14 {
                bytes[off + SLL_OFFSET + 2..off + SLL_OFFSET + 4].copy_from_slice(&f.data[12..14]);
                put_u16(bytes, off + SLL_OFFSET + 8, libc::ARPHRD_ETHER);
                bytes[off + SLL_OFFSET + 11] = 6;
                bytes[off + SLL_OFFSET + 12..off + SLL_OFFSET + 18].copy_from_slice(&f.data[6..12]);
            }
            bytes[off + macoff..off + macoff + caplen].copy_from_slice(&f.data[..caplen]);
            b.1 = off + need;
            b.2 += 1;
            b.3 = off;
            total += 1;
        }
        if let Some(b) = cur.take() {
            close(&mut blocks, b);
        }
        let filled = blocks.len();
        let count = self.block_count.unwrap_or(filled.max(1));
        if count == 0 || count > u32::MAX as usize {
            return Err(RingError::config(
                "block_count",
                format!("{count} must be in 1..=2^32-1"),
            ));
        }
        if count < filled {
            return Err(RingError::config(
                "block_count",
                format!("{count} blocks cannot hold the {filled} the frames need"),
            ));
        }
        let words = count
            .checked_mul(bs)
            .map(|bytes| bytes / 8)
            .ok_or_else(|| {
                RingError::config(
                    "block_count",
                    format!("{count} blocks of {bs} bytes overflow the address space"),
                )
            })?;
        let mut mem: Vec<u64> = Vec::new();
        mem.try_reserve_exact(words).map_err(|e| {
            RingError::config("block_count", format!("{count} blocks of {bs} bytes: {e}"))
        })?;
        mem.resize(words, 0);
        let mut mem = mem.into_boxed_slice();
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
            cursor: AtomicUsize::new(0),
            taken: AtomicUsize::new(0),
        })
    }
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
    /// Blocks holding packets.
    pub fn filled_blocks(&self) -> usize {
        self.filled
    }
    /// Packets laid out (one pass).
    pub fn packets(&self) -> usize {
        self.packets
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
        !self.replay && self.taken.load(Ordering::Relaxed) >= self.filled
    }

    /// Whether the ring replays its blocks forever.
    pub fn is_replay(&self) -> bool {
        self.replay
    }
}
