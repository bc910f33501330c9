//! The walk over a block's packets: each `tpacket3_hdr` checked against the block's bounds
//! before a byte of its frame is read.

use super::layout::{hdr3, u16_at, u32_at};
use super::packet::{meta_of, pkttype_at, Packet};
use crate::error::BlockError;

/// Iterator over a block's packets.
#[derive(Debug, Clone)]
pub struct Packets<'a> {
    /// The block's bytes in use (`blk_len` of them).
    pub(super) bytes: &'a [u8],
    pub(super) offset: usize,
    pub(super) left: u32,
}

/// How many packets ahead of the one it reads the walker asks for a packet's first lines, and
/// how many bytes ahead at most. A block's lines were written by the kernel on the CPU that
/// received the packets, and the walk reads a packet faster than such a line arrives: a line
/// asked for one packet ahead would still be on its way. Chosen with `rxbench sniff` (zcap
/// `-w /dev/null`) over several distances: small frames gain up to many packets ahead, while
/// on large frames a distance in bytes much beyond this fetches lines that are evicted again
/// before the walk reaches them.
const FETCH_PACKETS: usize = 24;

const FETCH_BYTES: usize = 16 << 10;

/// Brings the line holding `x` into the cache without waiting for it: PREFETCHT0 through
/// `safe_arch`'s safe wrapper (SSE is baseline on x86-64). Elsewhere nothing: a plain load
/// would wait for the line it means to fetch early.
#[inline(always)]
fn fetch_line(x: &u8) {
    #[cfg(all(target_arch = "x86_64", not(zcrx_portable)))]
    safe_arch::prefetch_t0(x);
    #[cfg(not(all(target_arch = "x86_64", not(zcrx_portable))))]
    let _ = x;
}

impl<'a> Packets<'a> {
    #[inline(always)]
    fn read_one(&mut self) -> Result<Packet<'a>, BlockError> {
        let off = self.offset;
        let b = self.bytes;
        let blk_len = b.len() as u32;
        // One bounds check for the whole header; the field reads below index a fixed array.
        let Some(h) = b.get(off..).and_then(<[u8]>::first_chunk::<{ hdr3::SIZE }>) else {
            return Err(BlockError::BadNextOffset {
                offset: off as u32,
                blk_len,
                left: self.left,
            });
        };
        let next = u32_at(h, hdr3::NEXT_OFFSET) as usize;
        // Where the packet FETCH_PACKETS on (at most FETCH_BYTES on) probably starts (the
        // packets of a block tend to be alike; any value is harmless: the address is only
        // fetched, and only inside the block): its header's line and the two after it, which
        // hold the frame's first bytes, asked for now so that they have come from the
        // kernel's CPU by the time the walk reaches them.
        let ahead = off + next.min(FETCH_BYTES / FETCH_PACKETS) * FETCH_PACKETS;
        if let Some(lines) = b.get(ahead..).and_then(<[u8]>::first_chunk::<192>) {
            fetch_line(&lines[0]);
            fetch_line(&lines[64]);
            fetch_line(&lines[128]);
        }
        let snaplen = u32_at(h, hdr3::SNAPLEN) as usize;
        let wire_len = u32_at(h, hdr3::LEN);
        let mac = u16_at(h, hdr3::MAC) as usize;
        if mac < hdr3::SIZE {
            return Err(BlockError::BadMac {
                offset: off as u32,
                mac: mac as u16,
            });
        }
        let start = off + mac;
        let Some(data) = b.get(start..).and_then(|rest| rest.get(..snaplen)) else {
            return Err(BlockError::BadSnaplen {
                offset: off as u32,
                snaplen: snaplen as u32,
                blk_len,
            });
        };
        if (wire_len as usize) < snaplen {
            return Err(BlockError::SnaplenOverLen {
                offset: off as u32,
                snaplen: snaplen as u32,
                len: wire_len,
            });
        }
        self.left -= 1;
        if self.left > 0 {
            // Packets are laid out forward; a zero or backward offset would loop or alias.
            if next < hdr3::SIZE || next > b.len() - off - hdr3::SIZE {
                return Err(BlockError::BadNextOffset {
                    offset: off as u32,
                    blk_len,
                    left: self.left,
                });
            }
            self.offset = off + next;
        }
        Ok(Packet {
            data,
            data_off: start as u32,
            hdr_off: off as u32,
            // In the block: `mac >= 68` puts the byte before `start`, which lies in it.
            meta: meta_of(h, pkttype_at(b, off, mac)),
        })
    }
}

impl<'a> Packets<'a> {
    /// The packets up to the first bad header, which ends the walk (what
    /// `packets().map_while(Result::ok)` yields, but never left out of line by the compiler:
    /// a consumer thread's walk of a block it was handed, whose headers the stage has
    /// already checked).
    #[inline(always)]
    pub fn until_error(self) -> UntilError<'a> {
        UntilError(self)
    }
}

/// [`Packets::until_error`].
#[derive(Debug)]
pub struct UntilError<'a>(Packets<'a>);

impl<'a> Iterator for UntilError<'a> {
    type Item = Packet<'a>;

    #[inline(always)]
    fn next(&mut self) -> Option<Packet<'a>> {
        if self.0.left == 0 {
            return None;
        }
        match self.0.read_one() {
            Ok(p) => Some(p),
            Err(_) => {
                self.0.left = 0;
                None
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.0.left as usize))
    }
}

impl<'a> Iterator for Packets<'a> {
    type Item = Result<Packet<'a>, BlockError>;

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        let r = self.read_one();
        if r.is_err() {
            self.left = 0;
        }
        Some(r)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.left as usize))
    }
}
