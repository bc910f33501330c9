//! The UDP header (RFC 768), also UDP-Lite's (RFC 3828 §3, whose length field is the
//! checksum coverage).

use super::base::{be16, need, view, WireError};

/// Byte offsets of the UDP header's fields.
pub(crate) mod field {
    use crate::wire::base::Field;
    /// Source port.
    pub const SRC_PORT: Field = 0..2;
    /// Destination port.
    pub const DST_PORT: Field = 2..4;
    /// Length of header and data (UDP-Lite: checksum coverage).
    pub const LENGTH: Field = 4..6;
    /// Checksum.
    pub const CHECKSUM: Field = 6..8;
    /// The header's length.
    pub const HEADER_LEN: usize = 8;
}

/// A UDP header and what follows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UdpPacket<T: AsRef<[u8]>> {
    buffer: T,
}

view!(UdpPacket);

impl<T: AsRef<[u8]>> UdpPacket<T> {
    /// Checks that the buffer holds the 8-byte header (not the length it declares).
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

    /// The length field: header and data.
    #[inline(always)]
    pub fn length(&self) -> u16 {
        be16(self.buffer.as_ref(), field::LENGTH.start)
    }

    /// The checksum field.
    #[inline(always)]
    pub fn checksum(&self) -> u16 {
        be16(self.buffer.as_ref(), field::CHECKSUM.start)
    }

    /// What follows the header in the buffer.
    #[inline(always)]
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[field::HEADER_LEN..]
    }
}

#[cfg(test)]
mod test {
    use super::*;

    static DATAGRAM: [u8; 10] = [0x04, 0xd2, 0x00, 0x35, 0x00, 0x0a, 0xab, 0xcd, 1, 2];

    #[test]
    fn deconstruct() {
        let u = UdpPacket::new_checked(&DATAGRAM[..]).unwrap();
        assert_eq!((u.src_port(), u.dst_port()), (1234, 53));
        assert_eq!(u.length(), 10);
        assert_eq!(u.checksum(), 0xabcd);
        assert_eq!(u.payload(), &[1, 2]);
    }

    #[test]
    fn truncated() {
        assert_eq!(
            UdpPacket::new_checked(&DATAGRAM[..7]),
            Err(WireError::Truncated)
        );
    }

    #[test]
    fn overlong() {
        let mut long = DATAGRAM.to_vec();
        long.push(3);
        assert_eq!(
            UdpPacket::new_checked(&long[..]).unwrap().payload().len(),
            3
        );
    }
}
