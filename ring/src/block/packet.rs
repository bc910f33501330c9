//! A packet seen through a block: its bytes and the facts of its `tpacket3_hdr`.

use super::layout::{hdr3, sll, status, u16_at, u32_at, ETH_P_8021Q};
use super::link::Direction;

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
    ///
    /// [`BlockView::losing`]: crate::BlockView::losing
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
    pub(super) data: &'a [u8],
    pub(super) data_off: u32,
    /// Where its `tpacket3_hdr` starts in the block (the `sockaddr_ll` follows it).
    pub(super) hdr_off: u32,
    pub(super) meta: PacketMeta,
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

/// The header facts of a `tpacket3_hdr` (any bytes make some facts: nothing here can fail).
#[inline(always)]
pub(super) fn meta_of(h: &[u8; hdr3::SIZE], pkttype: u8) -> PacketMeta {
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
pub(super) fn pkttype_at(block: &[u8], hdr_off: usize, mac: usize) -> u8 {
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
