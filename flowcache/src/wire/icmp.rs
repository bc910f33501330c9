//! The ICMP (RFC 792) and ICMPv6 (RFC 4443 §2.1) header: type, code, checksum and the four
//! bytes whose meaning the type gives (an echo's identifier and sequence number, a
//! packet-too-big's MTU, ...), then the message body (an error's quoted datagram).

use super::base::{be16, be32, need, view, WireError};

/// Byte offsets of the ICMP and ICMPv6 header's fields.
pub(crate) mod field {
    use crate::wire::base::Field;
    /// Type.
    pub const TYPE: usize = 0;
    /// Code.
    pub const CODE: usize = 1;
    /// Checksum.
    pub const CHECKSUM: Field = 2..4;
    /// The type's own four bytes.
    pub const REST: Field = 4..8;
    /// Echo identifier (echo request and reply).
    pub const ECHO_IDENT: Field = 4..6;
    /// Echo sequence number (echo request and reply).
    pub const ECHO_SEQNO: Field = 6..8;
    /// The header's length; an error's quoted datagram begins here.
    pub const HEADER_LEN: usize = 8;
}

/// An ICMP or ICMPv6 header and its body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IcmpPacket<T: AsRef<[u8]>> {
    buffer: T,
}

view!(IcmpPacket);

impl<T: AsRef<[u8]>> IcmpPacket<T> {
    /// Checks that the buffer holds the 8-byte header.
    #[inline(always)]
    pub fn check_len(&self) -> Result<(), WireError> {
        need(self.buffer.as_ref(), field::HEADER_LEN)
    }

    /// The message type.
    #[inline(always)]
    pub fn msg_type(&self) -> u8 {
        self.buffer.as_ref()[field::TYPE]
    }

    /// The message code.
    #[inline(always)]
    pub fn msg_code(&self) -> u8 {
        self.buffer.as_ref()[field::CODE]
    }

    /// The checksum field.
    #[inline(always)]
    pub fn checksum(&self) -> u16 {
        be16(self.buffer.as_ref(), field::CHECKSUM.start)
    }

    /// The type's own four bytes as one word.
    #[inline(always)]
    pub fn rest_of_header(&self) -> u32 {
        be32(self.buffer.as_ref(), field::REST.start)
    }

    /// An echo's identifier.
    #[inline(always)]
    pub fn echo_ident(&self) -> u16 {
        be16(self.buffer.as_ref(), field::ECHO_IDENT.start)
    }

    /// An echo's sequence number.
    #[inline(always)]
    pub fn echo_seq_no(&self) -> u16 {
        be16(self.buffer.as_ref(), field::ECHO_SEQNO.start)
    }

    /// The body after the header (an error's quoted datagram).
    #[inline(always)]
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[field::HEADER_LEN..]
    }
}

#[cfg(test)]
mod test {
    use super::*;

    static ECHO: [u8; 10] = [8, 0, 0xf7, 0xfd, 0, 9, 0, 1, 0xaa, 0xbb];

    #[test]
    fn deconstruct() {
        let i = IcmpPacket::new_checked(&ECHO[..]).unwrap();
        assert_eq!((i.msg_type(), i.msg_code()), (8, 0));
        assert_eq!(i.checksum(), 0xf7fd);
        assert_eq!((i.echo_ident(), i.echo_seq_no()), (9, 1));
        assert_eq!(i.rest_of_header(), 0x0009_0001);
        assert_eq!(i.payload(), &[0xaa, 0xbb]);
    }

    #[test]
    fn truncated() {
        assert_eq!(
            IcmpPacket::new_checked(&ECHO[..7]),
            Err(WireError::Truncated)
        );
    }
}
