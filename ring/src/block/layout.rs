//! The kernel's structures in a block, as byte offsets (linux/if_packet.h), and the reads
//! at those offsets.

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

/// 802.1Q, the TPID the kernel means when `TP_STATUS_VLAN_TPID_VALID` is absent.
pub const ETH_P_8021Q: u16 = 0x8100;

#[inline]
pub(super) fn u32_at(bytes: &[u8], off: usize) -> u32 {
    u32::from_ne_bytes([bytes[off], bytes[off + 1], bytes[off + 2], bytes[off + 3]])
}

#[inline]
pub(super) fn u16_at(bytes: &[u8], off: usize) -> u16 {
    u16::from_ne_bytes([bytes[off], bytes[off + 1]])
}
