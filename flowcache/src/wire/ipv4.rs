//! The IPv4 header (RFC 791 §3.1).

use std::net::Ipv4Addr;

use super::base::{be16, be32, need, view, WireError};

/// Byte offsets of the IPv4 header's fields.
pub(crate) mod field {
    use crate::wire::base::Field;
    /// Version (high nibble) and IHL, the header's length in 32-bit words (low nibble).
    pub const VER_IHL: usize = 0;
    /// DSCP and ECN (the former type of service).
    pub const DSCP_ECN: usize = 1;
    /// Total length: header and payload.
    pub const LENGTH: Field = 2..4;
    /// Identification.
    pub const IDENT: Field = 4..6;
    /// Flags (reserved, DF, MF) and fragment offset in 8-byte units.
    pub const FLG_OFF: Field = 6..8;
    /// Time to live.
    pub const TTL: usize = 8;
    /// The protocol of the payload (`ipproto`).
    pub const PROTOCOL: usize = 9;
    /// Header checksum.
    pub const CHECKSUM: Field = 10..12;
    /// Source address.
    pub const SRC_ADDR: Field = 12..16;
    /// Destination address.
    pub const DST_ADDR: Field = 16..20;
    /// The header's length without options.
    pub const HEADER_LEN: usize = 20;
    /// More Fragments, in `FLG_OFF`.
    pub const MF: u16 = 0x2000;
    /// Don't Fragment, in `FLG_OFF`.
    pub const DF: u16 = 0x4000;
    /// The fragment offset, in `FLG_OFF`.
    pub const OFFSET_MASK: u16 = 0x1fff;
}

/// An IPv4 header (with its options) and what follows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ipv4Packet<T: AsRef<[u8]>> {
    buffer: T,
}

view!(Ipv4Packet);

impl<T: AsRef<[u8]>> Ipv4Packet<T> {
    /// Checks that the buffer holds the fixed header, that IHL is at least 5 and that the
    /// buffer holds the options IHL declares. The version is not checked (see
    /// [`Self::version`]), nor the total length (a capture may cut the payload).
    #[inline(always)]
    pub fn check_len(&self) -> Result<(), WireError> {
        let b = self.buffer.as_ref();
        need(b, field::HEADER_LEN)?;
        let ihl = self.header_len();
        if ihl < field::HEADER_LEN {
            return Err(WireError::BadHeaderLength);
        }
        need(b, ihl)
    }

    /// The version nibble (4 for IPv4).
    #[inline(always)]
    pub fn version(&self) -> u8 {
        self.buffer.as_ref()[field::VER_IHL] >> 4
    }

    /// The header's length in bytes, options included (IHL × 4).
    #[inline(always)]
    pub fn header_len(&self) -> usize {
        usize::from(self.buffer.as_ref()[field::VER_IHL] & 0x0f) * 4
    }

    /// DSCP and ECN (the former type of service byte).
    #[inline(always)]
    pub fn dscp_ecn(&self) -> u8 {
        self.buffer.as_ref()[field::DSCP_ECN]
    }

    /// The total length field (0 in a GSO/TSO send captured before segmentation).
    #[inline(always)]
    pub fn total_len(&self) -> u16 {
        be16(self.buffer.as_ref(), field::LENGTH.start)
    }

    /// The identification.
    #[inline(always)]
    pub fn ident(&self) -> u16 {
        be16(self.buffer.as_ref(), field::IDENT.start)
    }

    /// The flags and fragment offset word as sent.
    #[inline(always)]
    pub fn flags_frag(&self) -> u16 {
        be16(self.buffer.as_ref(), field::FLG_OFF.start)
    }

    /// The More Fragments flag.
    #[inline(always)]
    pub fn more_frags(&self) -> bool {
        self.flags_frag() & field::MF != 0
    }

    /// The Don't Fragment flag.
    #[inline(always)]
    pub fn dont_frag(&self) -> bool {
        self.flags_frag() & field::DF != 0
    }

    /// The fragment offset in bytes.
    #[inline(always)]
    pub fn frag_offset(&self) -> u16 {
        (self.flags_frag() & field::OFFSET_MASK) << 3
    }

    /// The time to live.
    #[inline(always)]
    pub fn ttl(&self) -> u8 {
        self.buffer.as_ref()[field::TTL]
    }

    /// The payload's protocol (`ipproto`).
    #[inline(always)]
    pub fn protocol(&self) -> u8 {
        self.buffer.as_ref()[field::PROTOCOL]
    }

    /// The header checksum field.
    #[inline(always)]
    pub fn checksum(&self) -> u16 {
        be16(self.buffer.as_ref(), field::CHECKSUM.start)
    }

    /// The source address.
    #[inline(always)]
    pub fn src_addr(&self) -> Ipv4Addr {
        Ipv4Addr::from(be32(self.buffer.as_ref(), field::SRC_ADDR.start))
    }

    /// The destination address.
    #[inline(always)]
    pub fn dst_addr(&self) -> Ipv4Addr {
        Ipv4Addr::from(be32(self.buffer.as_ref(), field::DST_ADDR.start))
    }

    /// The header, options included.
    #[inline(always)]
    pub fn header(&self) -> &[u8] {
        &self.buffer.as_ref()[..self.header_len()]
    }

    /// The options (the header past its first 20 bytes).
    #[inline(always)]
    pub fn options(&self) -> &[u8] {
        &self.buffer.as_ref()[field::HEADER_LEN..self.header_len()]
    }

    /// What follows the header in the buffer (not cut at the total length).
    #[inline(always)]
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[self.header_len()..]
    }
}

#[cfg(test)]
mod test {
    use super::*;

    // 198.18.0.1 > 198.18.0.2 UDP, DF, ttl 64, one NOP/EOL option word.
    static PACKET: [u8; 28] = [
        0x46, 0x02, 0x00, 0x1c, 0x12, 0x34, 0x40, 0x00, 0x40, 0x11, 0xab, 0xcd, 198, 18, 0, 1, 198,
        18, 0, 2, 0x01, 0x01, 0x01, 0x00, 0xaa, 0xbb, 0xcc, 0xdd,
    ];

    #[test]
    fn deconstruct() {
        let p = Ipv4Packet::new_checked(&PACKET[..]).unwrap();
        assert_eq!(p.version(), 4);
        assert_eq!(p.header_len(), 24);
        assert_eq!(p.dscp_ecn(), 2);
        assert_eq!(p.total_len(), 28);
        assert_eq!(p.ident(), 0x1234);
        assert!(p.dont_frag() && !p.more_frags());
        assert_eq!(p.frag_offset(), 0);
        assert_eq!(p.ttl(), 64);
        assert_eq!(p.protocol(), 17);
        assert_eq!(p.checksum(), 0xabcd);
        assert_eq!(p.src_addr(), Ipv4Addr::new(198, 18, 0, 1));
        assert_eq!(p.dst_addr(), Ipv4Addr::new(198, 18, 0, 2));
        assert_eq!(p.options(), &[1, 1, 1, 0]);
        assert_eq!(p.payload(), &[0xaa, 0xbb, 0xcc, 0xdd]);
    }

    #[test]
    fn truncated() {
        assert_eq!(
            Ipv4Packet::new_checked(&PACKET[..19]),
            Err(WireError::Truncated)
        );
        // The fixed header is there, the option IHL declares is not.
        assert_eq!(
            Ipv4Packet::new_checked(&PACKET[..22]),
            Err(WireError::Truncated)
        );
    }

    #[test]
    fn bad_header_length() {
        let mut p = PACKET;
        p[0] = 0x44;
        assert_eq!(
            Ipv4Packet::new_checked(&p[..]),
            Err(WireError::BadHeaderLength)
        );
    }

    #[test]
    fn overlong() {
        let mut long = PACKET.to_vec();
        long.extend_from_slice(&[0; 10]);
        let p = Ipv4Packet::new_checked(&long[..]).unwrap();
        assert_eq!(p.payload().len(), 14);
    }
}
