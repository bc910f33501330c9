//! A block's descriptor, checked: the view the walk over its packets starts from.

use super::layout::{bd, hdr3, status, u32_at};
use super::link::{link_addr_at, LinkAddr};
use super::packet::Packet;
use super::walk::Packets;
use crate::error::BlockError;

/// The most packets a block of `block_size` bytes yields: one per `tpacket3_hdr` it could
/// hold (the walker refuses a block that claims more). A bound for whatever a consumer
/// keeps per packet until the block is done.
pub fn max_packets(block_size: usize) -> usize {
    block_size / hdr3::SIZE
}

/// A validated block header with the walk over its packets.
#[derive(Debug, Clone, Copy)]
pub struct BlockView<'a> {
    bytes: &'a [u8],
    num_pkts: u32,
    first: u32,
    blk_len: u32,
    seq_num: u64,
}

impl<'a> BlockView<'a> {
    /// Checks the block descriptor of `bytes` (one whole block).
    pub fn parse(bytes: &'a [u8]) -> Result<Self, BlockError> {
        if bytes.len() < bd::LEN {
            return Err(BlockError::TooShort { len: bytes.len() });
        }
        let num_pkts = u32_at(bytes, bd::NUM_PKTS);
        let first = u32_at(bytes, bd::OFFSET_TO_FIRST_PKT);
        let blk_len = u32_at(bytes, bd::BLK_LEN);
        let seq_num = u64::from_ne_bytes(
            bytes[bd::SEQ_NUM..bd::SEQ_NUM + 8]
                .try_into()
                .expect("8 bytes"),
        );
        let size = bytes.len();
        if blk_len as usize > size || (blk_len as usize) < bd::LEN {
            return Err(BlockError::BadBlockLen {
                blk_len,
                block_size: size,
            });
        }
        if num_pkts > 0
            && ((first as usize) < bd::LEN || first as usize + hdr3::SIZE > blk_len as usize)
        {
            return Err(BlockError::BadFirstOffset {
                offset: first,
                blk_len,
            });
        }
        // Each packet takes at least a header, so this bounds the walk regardless of offsets.
        if num_pkts as usize > max_packets(size) {
            return Err(BlockError::TooManyPackets {
                num_pkts,
                block_size: size,
            });
        }
        Ok(Self {
            bytes,
            num_pkts,
            first,
            blk_len,
            seq_num,
        })
    }

    /// The `sockaddr_ll` the kernel wrote after packet `p`'s header (zeros where the frame
    /// leaves no room for one). Read on demand: carried in every packet's metadata it would
    /// cost the stage tens of instructions per packet that almost no consumer needs.
    pub fn link_addr(&self, p: &Packet<'_>) -> LinkAddr {
        link_addr_at(self.bytes, p.hdr_off)
    }

    /// Packets the kernel says the block holds.
    pub fn num_packets(&self) -> u32 {
        self.num_pkts
    }
    /// The whole block's bytes, as parsed.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }
    /// The block's sequence number (`seq_num`).
    pub fn seq_num(&self) -> u64 {
        self.seq_num
    }
    /// Bytes in use (`blk_len`).
    pub fn blk_len(&self) -> u32 {
        self.blk_len
    }
    /// Whether the block was closed by the retire timer (`TP_STATUS_BLK_TMO` in block status).
    pub fn timed_out(&self) -> bool {
        u32_at(self.bytes, bd::BLOCK_STATUS) & status::BLK_TMO != 0
    }
    /// Whether the kernel had dropped packets (for want of room in the ring) when it closed
    /// this block: `TP_STATUS_LOSING` in the block status, set while the drops have not
    /// been read with [`RxRing::stats`](crate::RxRing::stats), which tells how many.
    pub fn losing(&self) -> bool {
        block_losing(self.bytes)
    }
    /// Iterates the packets; the first bad header yields `Err` and ends the walk.
    pub fn packets(&self) -> Packets<'a> {
        Packets {
            // Cut to the bytes in use (`parse` checked `blk_len` against the block): one
            // length bounds every read of the walk.
            bytes: &self.bytes[..self.blk_len as usize],
            offset: self.first as usize,
            left: self.num_pkts,
        }
    }
}

/// `TP_STATUS_LOSING` in the block status of `block` (false for bytes too short to hold one).
pub(crate) fn block_losing(block: &[u8]) -> bool {
    block
        .get(bd::BLOCK_STATUS..bd::BLOCK_STATUS + 4)
        .is_some_and(|s| u32_at(s, 0) & status::LOSING != 0)
}
