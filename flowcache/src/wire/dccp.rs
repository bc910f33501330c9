//! The DCCP generic header (RFC 4340 §5.1).

use super::base::{be16, need, view, WireError};

/// Byte offsets of the DCCP generic header's fields.
pub(crate) mod field {
    use crate::wire::base::Field;
    /// Source port.
    pub const SRC_PORT: Field = 0..2;
    /// Destination port.
    pub const DST_PORT: Field = 2..4;
    /// Data offset: the header's length in 32-bit words, options included.
    pub const DATA_OFFSET: usize = 4;
    /// Checksum.
    pub const CHECKSUM: Field = 6..8;
    /// The generic header's least length (short sequence numbers).
    pub const MIN_HEADER_LEN: usize = 12;
}

/// A DCCP header and what follows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DccpPacket<T: AsRef<[u8]>> {
    buffer: T,
}

view!(DccpPacket);

impl<T: AsRef<[u8]>> DccpPacket<T> {
    /// Checks that the data offset is at least 3 and that the buffer holds the header it
    /// declares. The data offset is judged as soon as the buffer holds it.
    #[inline(always)]
    pub fn check_len(&self) -> Result<(), WireError> {
        let b = self.buffer.as_ref();
        need(b, field::DATA_OFFSET + 1)?;
        let len = self.header_len();
        if len < field::MIN_HEADER_LEN {
            return Err(WireError::BadHeaderLength);
        }
        need(b, len)
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

    /// The header's length in bytes (data offset × 4).
    #[inline(always)]
    pub fn header_len(&self) -> usize {
        usize::from(self.buffer.as_ref()[field::DATA_OFFSET]) * 4
    }

    /// The checksum field.
    #[inline(always)]
    pub fn checksum(&self) -> u16 {
        be16(self.buffer.as_ref(), field::CHECKSUM.start)
    }

    /// What follows the header in the buffer.
    #[inline(always)]
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[self.header_len()..]
    }
}

#[cfg(test)]
mod test {
    use super::*;

    static PACKET: [u8; 13] = [0x13, 0x88, 0x00, 0x50, 3, 0, 0xab, 0xcd, 0, 0, 0, 1, 9];

    #[test]
    fn deconstruct() {
        let d = DccpPacket::new_checked(&PACKET[..]).unwrap();
        assert_eq!((d.src_port(), d.dst_port()), (5000, 80));
        assert_eq!(d.header_len(), 12);
        assert_eq!(d.checksum(), 0xabcd);
        assert_eq!(d.payload(), &[9]);
    }

    #[test]
    fn truncated_and_bad() {
        assert_eq!(
            DccpPacket::new_checked(&PACKET[..11]),
            Err(WireError::Truncated)
        );
        let mut bad = PACKET;
        bad[4] = 2;
        assert_eq!(
            DccpPacket::new_checked(&bad[..5]),
            Err(WireError::BadHeaderLength)
        );
    }
}
