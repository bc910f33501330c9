//! The SCTP common header (RFC 9260 §3.1).

use super::base::{be16, be32, need, view, WireError};

/// Byte offsets of the SCTP common header's fields.
pub(crate) mod field {
    use crate::wire::base::Field;
    /// Source port.
    pub const SRC_PORT: Field = 0..2;
    /// Destination port.
    pub const DST_PORT: Field = 2..4;
    /// Verification tag.
    pub const VERIFICATION_TAG: Field = 4..8;
    /// CRC32c checksum.
    pub const CHECKSUM: Field = 8..12;
    /// The common header's length.
    pub const HEADER_LEN: usize = 12;
}

/// An SCTP common header and the chunks after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SctpPacket<T: AsRef<[u8]>> {
    buffer: T,
}

view!(SctpPacket);

impl<T: AsRef<[u8]>> SctpPacket<T> {
    /// Checks that the buffer holds the 12-byte common header.
    #[inline(always)]
    pub fn check_len(&self) -> Result<(), WireError> {
        need(self.buffer.as_ref(), field::HEADER_LEN)
    }

    /// The source port.
    #[inline(always)]
    pub fn src_port(&self) -> u16 {
        be16(self.buffer.as_ref(), field::SRC_PORT.start)
    }

    /// The destination port.
    #[inline(always)]
    pub fn dst_port(&self) -> u16 {
        be16(self.buffer.as_ref(), field::DST_PORT.start)
    }

    /// The verification tag.
    #[inline(always)]
    pub fn verification_tag(&self) -> u32 {
        be32(self.buffer.as_ref(), field::VERIFICATION_TAG.start)
    }

    /// The checksum field.
    #[inline(always)]
    pub fn checksum(&self) -> u32 {
        be32(self.buffer.as_ref(), field::CHECKSUM.start)
    }

    /// The chunks after the common header.
    #[inline(always)]
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[field::HEADER_LEN..]
    }
}

#[cfg(test)]
mod test {
    use super::*;

    static PACKET: [u8; 13] = [
        0x0b, 0x59, 0x0b, 0x59, 0, 0, 0, 7, 0xde, 0xad, 0xbe, 0xef, 1,
    ];

    #[test]
    fn deconstruct() {
        let s = SctpPacket::new_checked(&PACKET[..]).unwrap();
        assert_eq!((s.src_port(), s.dst_port()), (2905, 2905));
        assert_eq!(s.verification_tag(), 7);
        assert_eq!(s.checksum(), 0xdead_beef);
        assert_eq!(s.payload(), &[1]);
    }

    #[test]
    fn truncated() {
        assert_eq!(
            SctpPacket::new_checked(&PACKET[..11]),
            Err(WireError::Truncated)
        );
    }
}
