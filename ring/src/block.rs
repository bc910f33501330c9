//! The TPACKET_V3 block walker: reads one block's `tpacket3_hdr` chain and yields packet views.
//!
//! Promise: the walker trusts nothing in the block. Every `tp_next_offset`, `tp_mac` and
//! `tp_snaplen` is checked against the block bounds before a byte of the frame is touched;
//! a bad header ends the walk with a [`BlockError`], never a panic or an out-of-bounds read.
//! It works on a plain `&[u8]`, so the kernel's ring and the synthetic ring share it.

use crate::error::BlockError;

/// Byte offsets of `struct tpacket_block_desc` / `tpacket_hdr_v1` (linux/if_packet.h).
pub(crate) mod bd {
    /// `version`.
    pub const VERSION: usize = 0;
    /// `hdr.bh1.block_status`.
    pub const BLOCK_STATUS: usize = 8;
    /// `hdr.bh1.num_pkts`.
    pub const NUM_PKTS: usize = 12;
    /// `hdr.bh1.offset_to_first_pkt`.
    pub const OFFSET_TO_FIRST_PKT: usize = 16;
    /// `hdr.bh1.blk_len`.
    pub const BLK_LEN: usize = 20;
    /// `hdr.bh1.seq_num` (u64).
    pub const SEQ_NUM: usize = 24;
    /// `hdr.bh1.ts_first_pkt`.
    pub const TS_FIRST_PKT: usize = 32;
    /// `hdr.bh1.ts_last_pkt`.
    pub const TS_LAST_PKT: usize = 40;
    /// `sizeof(struct tpacket_block_desc)`; also `BLK_HDR_LEN` in af_packet.c (8-aligned).
    pub const LEN: usize = 48;
}

/// Byte offsets of `struct tpacket3_hdr` (linux/if_packet.h).
pub(crate) mod hdr3 {
    /// `tp_next_offset`.
    pub const NEXT_OFFSET: usize = 0;
    /// `tp_sec`.
    pub const SEC: usize = 4;
    /// `tp_nsec`.
    pub const NSEC: usize = 8;
    /// `tp_snaplen`.
    pub const SNAPLEN: usize = 12;
    /// `tp_len`.
    pub const LEN: usize = 16;
    /// `tp_status`.
    pub const STATUS: usize = 20;
    /// `tp_mac` (u16).
    pub const MAC: usize = 24;
    /// `tp_net` (u16).
    pub const NET: usize = 26;
    /// `hv1.tp_rxhash`.
    pub const RXHASH: usize = 28;
    /// `hv1.tp_vlan_tci` (u32 in the struct, 16 bits used).
    pub const VLAN_TCI: usize = 32;
    /// `hv1.tp_vlan_tpid` (u16).
    pub const VLAN_TPID: usize = 36;
    /// `sizeof(struct tpacket3_hdr)`.
    pub const SIZE: usize = 48;
}

/// `TP_STATUS_*` bits (linux/if_packet.h) as they appear in a packet's status.
pub mod status {
    /// Frame belongs to user space (block status).
    pub const USER: u32 = libc::TP_STATUS_USER;
    /// Frame was copied to the socket queue because it did not fit (V1/V2 only).
    pub const COPY: u32 = libc::TP_STATUS_COPY;
    /// The kernel dropped packets since the last read of PACKET_STATISTICS.
    pub const LOSING: u32 = libc::TP_STATUS_LOSING;
    /// Outgoing packet whose checksum will be computed by the NIC: not yet valid in the ring.
    pub const CSUM_NOT_READY: u32 = libc::TP_STATUS_CSUMNOTREADY;
    /// `tp_vlan_tci` holds a tag the kernel stripped.
    pub const VLAN_VALID: u32 = libc::TP_STATUS_VLAN_VALID;
    /// The block was retired by the timer, not because it was full.
    pub const BLK_TMO: u32 = libc::TP_STATUS_BLK_TMO;
    /// `tp_vlan_tpid` is meaningful.
    pub const VLAN_TPID_VALID: u32 = libc::TP_STATUS_VLAN_TPID_VALID;
    /// The checksum was verified (by the NIC or the stack).
    pub const CSUM_VALID: u32 = libc::TP_STATUS_CSUM_VALID;
    /// The timestamp is the kernel's software stamp.
    pub const TS_SOFTWARE: u32 = libc::TP_STATUS_TS_SOFTWARE;
    /// The timestamp is the NIC's, converted to system time.
    pub const TS_SYS_HARDWARE: u32 = libc::TP_STATUS_TS_SYS_HARDWARE;
    /// The timestamp is the NIC's raw clock.
    pub const TS_RAW_HARDWARE: u32 = libc::TP_STATUS_TS_RAW_HARDWARE;
}

/// Byte offsets of `struct sockaddr_ll` (linux/if_packet.h), which the kernel writes
/// right after the `tpacket3_hdr` (at `TPACKET_ALIGN(sizeof(struct tpacket3_hdr))`).
pub(crate) mod sll {
    /// `sll_pkttype`.
    pub const PKTTYPE: usize = 10;
    /// `sizeof(struct sockaddr_ll)`.
    pub const SIZE: usize = 20;
}

/// Where a packet was going, from its `sll_pkttype` (`PACKET_*` in linux/if_packet.h).
///
/// On loopback every packet appears twice, once [`Outgoing`](Direction::Outgoing) and once
/// as received ([`Host`](Direction::Host)); libpcap and tcpdump keep the received copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Direction {
    /// To this host (`PACKET_HOST`).
    #[default]
    Host,
    /// Link-layer broadcast (`PACKET_BROADCAST`).
    Broadcast,
    /// Link-layer multicast (`PACKET_MULTICAST`).
    Multicast,
    /// To another host, seen in promiscuous mode (`PACKET_OTHERHOST`).
    OtherHost,
    /// Sent by this host (`PACKET_OUTGOING`).
    Outgoing,
    /// Another `sll_pkttype` (`PACKET_LOOPBACK`, `PACKET_USER`, `PACKET_KERNEL`, or one this
    /// crate does not name yet).
    Other(u8),
}

impl Direction {
    /// The direction `sll_pkttype` names.
    #[inline]
    pub const fn from_pkttype(pkttype: u8) -> Direction {
        match pkttype {
            0 => Direction::Host,
            1 => Direction::Broadcast,
            2 => Direction::Multicast,
            3 => Direction::OtherHost,
            4 => Direction::Outgoing,
            other => Direction::Other(other),
        }
    }
    /// The `sll_pkttype` value.
    #[inline]
    pub const fn pkttype(self) -> u8 {
        match self {
            Direction::Host => 0,
            Direction::Broadcast => 1,
            Direction::Multicast => 2,
            Direction::OtherHost => 3,
            Direction::Outgoing => 4,
            Direction::Other(v) => v,
        }
    }
    /// Sent by this host.
    #[inline]
    pub const fn is_outgoing(self) -> bool {
        matches!(self, Direction::Outgoing)
    }
}

impl std::fmt::Display for Direction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Direction::Host => f.write_str("host"),
            Direction::Broadcast => f.write_str("broadcast"),
            Direction::Multicast => f.write_str("multicast"),
            Direction::OtherHost => f.write_str("otherhost"),
            Direction::Outgoing => f.write_str("outgoing"),
            Direction::Other(v) => write!(f, "pkttype {v}"),
        }
    }
}

/// 802.1Q, the TPID the kernel means when `TP_STATUS_VLAN_TPID_VALID` is absent.
pub const ETH_P_8021Q: u16 = 0x8100;

#[inline]
fn u32_at(bytes: &[u8], off: usize) -> u32 {
    u32::from_ne_bytes([bytes[off], bytes[off + 1], bytes[off + 2], bytes[off + 3]])
}

#[inline]
fn u16_at(bytes: &[u8], off: usize) -> u16 {
    u16::from_ne_bytes([bytes[off], bytes[off + 1]])
}

/// The packet's `sockaddr_ll` as the kernel filled it after the frame header: where it came
/// from or went, and its link-layer type. What `-i any` captures need (SLL2 headers,
/// directions, interfaces).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct LinkAddr {
    /// Interface index (`sll_ifindex`).
    pub ifindex: u32,
    /// Link-layer protocol (`sll_protocol`, host order: 0x0800 for IPv4).
    pub protocol: u16,
    /// ARPHRD_* type of the interface (`sll_hatype`: 1 Ethernet, 772 loopback, ...).
    pub hatype: u16,
    /// PACKET_HOST (0), BROADCAST (1), MULTICAST (2), OTHERHOST (3), OUTGOING (4).
    pub pkttype: u8,
    /// Bytes of `addr` in use (at most 6: longer addresses are cut).
    pub halen: u8,
    /// Link-layer address (the sender's for incoming packets), a MAC-48 at most: 16 bytes in
    /// all keep [`PacketMeta`] small.
    pub addr: [u8; 6],
}

impl LinkAddr {
    /// Reads the 20 bytes of a `sockaddr_ll`.
    #[inline]
    pub(crate) fn read(b: &[u8; 20]) -> LinkAddr {
        let mut addr = [0u8; 6];
        addr.copy_from_slice(&b[12..18]);
        LinkAddr {
            protocol: u16::from_be_bytes([b[2], b[3]]),
            ifindex: u32::from_ne_bytes([b[4], b[5], b[6], b[7]]),
            hatype: u16::from_ne_bytes([b[8], b[9]]),
            pkttype: b[10],
            halen: b[11].min(6),
            addr,
        }
    }
    /// The packet was sent by this host (PACKET_OUTGOING).
    pub fn outgoing(&self) -> bool {
        self.pkttype == 4
    }
    /// [`LinkAddr::pkttype`] as a [`Direction`].
    pub fn direction(&self) -> Direction {
        Direction::from_pkttype(self.pkttype)
    }
}

/// The `sockaddr_ll` after packet `p`'s header in block `bytes`.
pub(crate) fn link_addr_at(bytes: &[u8], hdr_off: u32) -> LinkAddr {
    let at = hdr_off as usize + hdr3::SIZE;
    // The frame starts after the sockaddr_ll (tp_mac, checked against the block when the
    // packet was read), so a header that leaves no room for one reads as zeros.
    let mac = match bytes.get(hdr_off as usize + hdr3::MAC..hdr_off as usize + hdr3::MAC + 2) {
        Some(m) => usize::from(u16::from_ne_bytes([m[0], m[1]])),
        None => 0,
    };
    match bytes.get(at..at + 20) {
        Some(ll) if mac >= hdr3::SIZE + 20 => LinkAddr::read(ll.try_into().expect("20 bytes")),
        _ => LinkAddr::default(),
    }
}

/// Per-packet facts from the `tpacket3_hdr`, without the bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct PacketMeta {
    /// Length on the wire (`tp_len`).
    pub wire_len: u32,
    /// Receive timestamp in ns since the Unix epoch (`tp_sec`, `tp_nsec`).
    pub ts_ns: u64,
    /// Raw `tp_status` bits; see [`status`].
    pub status: u32,
    /// `tp_rxhash` (filled when the ring was built with rxhash fill on).
    pub rxhash: u32,
    /// VLAN TCI stripped by the kernel, when `TP_STATUS_VLAN_VALID`.
    pub vlan_tci: Option<u16>,
    /// VLAN TPID for that tag (0x8100 unless the kernel said otherwise).
    pub vlan_tpid: u16,
    /// `sll_pkttype` of the packet's `sockaddr_ll` (0, host, where the frame leaves no room
    /// for one); see [`PacketMeta::direction`].
    pub pkttype: u8,
}

// The facts travel with every packet a stage hands on: the direction byte fits in padding.
const _: () = assert!(std::mem::size_of::<PacketMeta>() == 32);

impl PacketMeta {
    /// `tp_len > tp_snaplen`: the frame was cut by the snaplen.
    #[inline]
    pub fn is_truncated(&self, caplen: u32) -> bool {
        self.wire_len > caplen
    }
    /// Where the packet was going ([`PacketMeta::pkttype`]): on loopback each packet is seen
    /// once [`Direction::Outgoing`] and once [`Direction::Host`].
    #[inline]
    pub fn direction(&self) -> Direction {
        Direction::from_pkttype(self.pkttype)
    }
    /// `TP_STATUS_LOSING` in the packet's status: never set on TPACKET_V3, where the kernel
    /// marks the block instead; use [`BlockView::losing`] (or [`RingStats`](crate::RingStats)).
    #[deprecated(
        since = "0.1.0",
        note = "TPACKET_V3 marks drops in the block status: use BlockView::losing"
    )]
    #[inline]
    pub fn losing(&self) -> bool {
        self.status & status::LOSING != 0
    }
    /// Which clock stamped the packet (`TP_STATUS_TS_*`); `None` when the kernel had no
    /// stamp for it and took the time of the copy into the ring.
    #[inline]
    pub fn timestamp_source(&self) -> Option<crate::timestamp::TimestampSource> {
        if self.status & status::TS_RAW_HARDWARE != 0 {
            Some(crate::timestamp::TimestampSource::RawHardware)
        } else if self.status & status::TS_SYS_HARDWARE != 0 {
            Some(crate::timestamp::TimestampSource::SysHardware)
        } else if self.status & status::TS_SOFTWARE != 0 {
            Some(crate::timestamp::TimestampSource::Software)
        } else {
            None
        }
    }
    /// Checksum verified (`TP_STATUS_CSUM_VALID`).
    #[inline]
    pub fn csum_valid(&self) -> bool {
        self.status & status::CSUM_VALID != 0
    }
    /// Checksum not computed yet (`TP_STATUS_CSUMNOTREADY`, outgoing offload).
    #[inline]
    pub fn csum_not_ready(&self) -> bool {
        self.status & status::CSUM_NOT_READY != 0
    }
}

/// A packet seen through a block: its captured bytes and header facts.
#[derive(Debug, Clone, Copy)]
pub struct Packet<'a> {
    data: &'a [u8],
    data_off: u32,
    /// Where its `tpacket3_hdr` starts in the block (the `sockaddr_ll` follows it).
    hdr_off: u32,
    meta: PacketMeta,
}

impl<'a> Packet<'a> {
    /// Where the packet's `tpacket3_hdr` starts in its block, for
    /// [`Block::link_addr_at`](crate::Block::link_addr_at).
    #[inline]
    pub fn header_offset(&self) -> u32 {
        self.hdr_off
    }
    /// The captured bytes starting at the link-layer header (`tp_mac`), `tp_snaplen` long.
    #[inline]
    pub fn data(&self) -> &'a [u8] {
        self.data
    }
    /// Captured length (`tp_snaplen`).
    #[inline]
    pub fn caplen(&self) -> u32 {
        self.data.len() as u32
    }
    /// Length on the wire (`tp_len`).
    #[inline]
    pub fn wire_len(&self) -> u32 {
        self.meta.wire_len
    }
    /// Receive timestamp, ns since the Unix epoch.
    #[inline]
    pub fn ts_ns(&self) -> u64 {
        self.meta.ts_ns
    }
    /// VLAN TCI the kernel stripped, if any.
    #[inline]
    pub fn vlan_tci(&self) -> Option<u16> {
        self.meta.vlan_tci
    }
    /// TPID of the stripped tag (meaningful when [`Packet::vlan_tci`] is `Some`).
    #[inline]
    pub fn vlan_tpid(&self) -> u16 {
        self.meta.vlan_tpid
    }
    /// `tp_rxhash`.
    #[inline]
    pub fn rxhash(&self) -> u32 {
        self.meta.rxhash
    }
    /// `tp_len > tp_snaplen`.
    #[inline]
    pub fn is_truncated(&self) -> bool {
        self.meta.is_truncated(self.caplen())
    }
    /// All header facts.
    #[inline]
    pub fn meta(&self) -> &PacketMeta {
        &self.meta
    }
    /// Offset of the frame's first byte within its block.
    #[inline]
    pub fn offset_in_block(&self) -> u32 {
        self.data_off
    }
}

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

/// The header facts of a `tpacket3_hdr` (any bytes make some facts: nothing here can fail).
#[inline(always)]
fn meta_of(h: &[u8; hdr3::SIZE], pkttype: u8) -> PacketMeta {
    let st = u32_at(h, hdr3::STATUS);
    let sec = u32_at(h, hdr3::SEC);
    let nsec = u32_at(h, hdr3::NSEC);
    let vlan_tci = (st & status::VLAN_VALID != 0).then(|| u32_at(h, hdr3::VLAN_TCI) as u16);
    let vlan_tpid = if st & status::VLAN_TPID_VALID != 0 {
        u16_at(h, hdr3::VLAN_TPID)
    } else {
        ETH_P_8021Q
    };
    PacketMeta {
        wire_len: u32_at(h, hdr3::LEN),
        ts_ns: u64::from(sec) * 1_000_000_000 + u64::from(nsec),
        status: st,
        rxhash: u32_at(h, hdr3::RXHASH),
        vlan_tci,
        vlan_tpid,
        pkttype,
    }
}

/// `sll_pkttype` of the packet whose header is at `hdr_off` and whose frame starts `mac`
/// bytes after it: one byte, read only when the frame leaves room for the `sockaddr_ll`
/// (the kernel's always do), else 0 (host).
#[inline(always)]
fn pkttype_at(block: &[u8], hdr_off: usize, mac: usize) -> u8 {
    if mac >= hdr3::SIZE + sll::SIZE {
        block
            .get(hdr_off + hdr3::SIZE + sll::PKTTYPE)
            .copied()
            .unwrap_or(0)
    } else {
        0
    }
}

/// The header facts of the `tpacket3_hdr` at `hdr_off` in `block`; `None` if the header
/// does not lie inside it.
#[inline]
pub(crate) fn meta_at(block: &[u8], hdr_off: u32) -> Option<PacketMeta> {
    let at = hdr_off as usize;
    let h: &[u8; hdr3::SIZE] = block
        .get(at..at.checked_add(hdr3::SIZE)?)?
        .try_into()
        .ok()?;
    let mac = usize::from(u16_at(h, hdr3::MAC));
    Some(meta_of(h, pkttype_at(block, at, mac)))
}

/// Iterator over a block's packets.
#[derive(Debug, Clone)]
pub struct Packets<'a> {
    /// The block's bytes in use (`blk_len` of them).
    bytes: &'a [u8],
    offset: usize,
    left: u32,
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

impl<'a> Packet<'a> {
    /// A packet rebuilt from a descriptor.
    #[inline]
    pub(crate) fn from_parts(
        data: &'a [u8],
        (hdr_off, data_off): (u32, u32),
        meta: PacketMeta,
    ) -> Self {
        Packet {
            data,
            data_off,
            hdr_off,
            meta,
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[test]
    fn offsets_match_the_kernel_structs() {
        use libc::{
            tpacket3_hdr as H, tpacket_block_desc as D, tpacket_hdr_v1 as V1,
            tpacket_hdr_variant1 as HV,
        };
        assert_eq!(size_of::<D>(), bd::LEN);
        assert_eq!(offset_of!(D, version), bd::VERSION);
        let h = offset_of!(D, hdr);
        assert_eq!(h + offset_of!(V1, block_status), bd::BLOCK_STATUS);
        assert_eq!(h + offset_of!(V1, num_pkts), bd::NUM_PKTS);
        assert_eq!(
            h + offset_of!(V1, offset_to_first_pkt),
            bd::OFFSET_TO_FIRST_PKT
        );
        assert_eq!(h + offset_of!(V1, blk_len), bd::BLK_LEN);
        assert_eq!(h + offset_of!(V1, seq_num), bd::SEQ_NUM);
        assert_eq!(h + offset_of!(V1, ts_first_pkt), bd::TS_FIRST_PKT);
        assert_eq!(h + offset_of!(V1, ts_last_pkt), bd::TS_LAST_PKT);
        assert_eq!(size_of::<H>(), hdr3::SIZE);
        assert_eq!(offset_of!(H, tp_next_offset), hdr3::NEXT_OFFSET);
        assert_eq!(offset_of!(H, tp_sec), hdr3::SEC);
        assert_eq!(offset_of!(H, tp_nsec), hdr3::NSEC);
        assert_eq!(offset_of!(H, tp_snaplen), hdr3::SNAPLEN);
        assert_eq!(offset_of!(H, tp_len), hdr3::LEN);
        assert_eq!(offset_of!(H, tp_status), hdr3::STATUS);
        assert_eq!(offset_of!(H, tp_mac), hdr3::MAC);
        assert_eq!(offset_of!(H, tp_net), hdr3::NET);
        assert_eq!(offset_of!(H, hv1) + offset_of!(HV, tp_rxhash), hdr3::RXHASH);
        assert_eq!(
            offset_of!(H, hv1) + offset_of!(HV, tp_vlan_tci),
            hdr3::VLAN_TCI
        );
        assert_eq!(
            offset_of!(H, hv1) + offset_of!(HV, tp_vlan_tpid),
            hdr3::VLAN_TPID
        );
        // The kernel ABI itself (linux/if_packet.h), independent of libc.
        assert_eq!(libc::TPACKET3_HDRLEN, 68);
        assert_eq!(libc::TPACKET_ALIGNMENT, 16);
        assert_eq!(size_of::<libc::tpacket_req3>(), 28);
        assert_eq!(size_of::<libc::tpacket_stats_v3>(), 12);
        assert_eq!(size_of::<libc::tpacket2_hdr>(), 32);
        assert_eq!(size_of::<libc::sockaddr_ll>(), 20);
    }

    /// A block of `n` 60-byte packets 144 bytes apart; packet `bad` (if any) with a tp_mac
    /// inside its own header.
    fn block_of(n: u32, bad: Option<usize>) -> Vec<u8> {
        let mut b = vec![0u8; 4096];
        let put = |b: &mut [u8], at: usize, v: u32| b[at..at + 4].copy_from_slice(&v.to_ne_bytes());
        let first = 48;
        put(&mut b, bd::NUM_PKTS, n);
        put(&mut b, bd::OFFSET_TO_FIRST_PKT, first as u32);
        put(&mut b, bd::BLK_LEN, (first + 144 * n as usize) as u32);
        for i in 0..n as usize {
            let h = first + 144 * i;
            put(
                &mut b,
                h + hdr3::NEXT_OFFSET,
                if i + 1 < n as usize { 144 } else { 0 },
            );
            put(&mut b, h + hdr3::SNAPLEN, 60);
            put(&mut b, h + hdr3::LEN, 60);
            let mac: u16 = if bad == Some(i) { 8 } else { 80 };
            b[h + hdr3::MAC..h + hdr3::MAC + 2].copy_from_slice(&mac.to_ne_bytes());
            b[h + 80] = i as u8;
        }
        b
    }

    /// `until_error` yields what `map_while(Result::ok)` yields: every packet of a good
    /// block, and those before the first bad header of a bad one.
    #[test]
    fn until_error_stops_at_the_first_bad_header() {
        for (n, bad, good) in [
            (20, None, 20),
            (20, Some(0), 0),
            (20, Some(7), 7),
            (1, None, 1),
        ] {
            let b = block_of(n, bad);
            let v = BlockView::parse(&b).unwrap();
            let got: Vec<u8> = v.packets().until_error().map(|p| p.data()[0]).collect();
            let want: Vec<u8> = v
                .packets()
                .map_while(Result::ok)
                .map(|p| p.data()[0])
                .collect();
            assert_eq!(got, want);
            assert_eq!(
                got,
                (0..good as u8).collect::<Vec<_>>(),
                "{n} packets, bad {bad:?}"
            );
        }
    }

    #[test]
    fn short_and_empty_blocks() {
        assert_eq!(
            BlockView::parse(&[0u8; 47]).unwrap_err(),
            BlockError::TooShort { len: 47 }
        );
        let mut b = vec![0u8; 4096];
        b[bd::BLK_LEN..bd::BLK_LEN + 4].copy_from_slice(&48u32.to_ne_bytes());
        let v = BlockView::parse(&b).unwrap();
        assert_eq!(v.packets().count(), 0);
    }
}
