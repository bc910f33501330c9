//! The TCP header (RFC 9293 §3.1).

use super::base::{be16, be32, need, view, WireError};

/// Byte offsets of the TCP header's fields.
pub(crate) mod field {
    use crate::wire::base::Field;
    /// Source port.
    pub const SRC_PORT: Field = 0..2;
    /// Destination port.
    pub const DST_PORT: Field = 2..4;
    /// Sequence number.
    pub const SEQ_NUM: Field = 4..8;
    /// Acknowledgment number.
    pub const ACK_NUM: Field = 8..12;
    /// Data offset, the header's length in 32-bit words (high nibble).
    pub const DATA_OFFSET: usize = 12;
    /// Flags, CWR (0x80) to FIN (0x01).
    pub const FLAGS: usize = 13;
    /// Window.
    pub const WINDOW: Field = 14..16;
    /// Checksum.
    pub const CHECKSUM: Field = 16..18;
    /// Urgent pointer.
    pub const URGENT: Field = 18..20;
    /// The header's length without options.
    pub const HEADER_LEN: usize = 20;
}

/// A TCP header (with its options) and what follows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpPacket<T: AsRef<[u8]>> {
    buffer: T,
}

view!(TcpPacket);

impl<T: AsRef<[u8]>> TcpPacket<T> {
    /// Checks that the data offset is at least 5 and that the buffer holds the header it
    /// declares. The data offset is judged as soon as the buffer holds it (`BadHeaderLength`
    /// before `Truncated`).
    #[inline(always)]
    pub fn check_len(&self) -> Result<(), WireError> {
        let b = self.buffer.as_ref();
        need(b, field::DATA_OFFSET + 1)?;
        let len = self.header_len();
        if len < field::HEADER_LEN {
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

    /// The sequence number.
    #[inline(always)]
    pub fn seq_number(&self) -> u32 {
        be32(self.buffer.as_ref(), field::SEQ_NUM.start)
    }

    /// The acknowledgment number.
    #[inline(always)]
    pub fn ack_number(&self) -> u32 {
        be32(self.buffer.as_ref(), field::ACK_NUM.start)
    }

    /// The header's length in bytes, options included (data offset × 4).
    #[inline(always)]
    pub fn header_len(&self) -> usize {
        usize::from(self.buffer.as_ref()[field::DATA_OFFSET] >> 4) * 4
    }

    /// The flags byte (FIN 0x01, SYN 0x02, RST 0x04, PSH 0x08, ACK 0x10, URG 0x20, ECE 0x40,
    /// CWR 0x80).
    #[inline(always)]
    pub fn flags(&self) -> u8 {
        self.buffer.as_ref()[field::FLAGS]
    }

    /// The window.
    #[inline(always)]
    pub fn window_len(&self) -> u16 {
        be16(self.buffer.as_ref(), field::WINDOW.start)
    }

    /// The checksum field.
    #[inline(always)]
    pub fn checksum(&self) -> u16 {
        be16(self.buffer.as_ref(), field::CHECKSUM.start)
    }

    /// The urgent pointer.
    #[inline(always)]
    pub fn urgent_at(&self) -> u16 {
        be16(self.buffer.as_ref(), field::URGENT.start)
    }

    /// The options (the header past its first 20 bytes).
    #[inline(always)]
    pub fn options(&self) -> &[u8] {
        &self.buffer.as_ref()[field::HEADER_LEN..self.header_len()]
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

    static SEGMENT: [u8; 26] = [
        0x04, 0xd2, 0x00, 0x50, 0, 0, 0, 1, 0, 0, 0, 2, 0x60, 0x12, 0xff, 0xff, 0xab, 0xcd, 0, 0,
        2, 4, 5, 0xb4, 0xaa, 0xbb,
    ];

    #[test]
    fn deconstruct() {
        let t = TcpPacket::new_checked(&SEGMENT[..]).unwrap();
        assert_eq!((t.src_port(), t.dst_port()), (1234, 80));
        assert_eq!((t.seq_number(), t.ack_number()), (1, 2));
        assert_eq!(t.header_len(), 24);
        assert_eq!(t.flags(), 0x12);
        assert_eq!(t.window_len(), 0xffff);
        assert_eq!(t.checksum(), 0xabcd);
        assert_eq!(t.urgent_at(), 0);
        assert_eq!(t.options(), &[2, 4, 5, 0xb4]);
        assert_eq!(t.payload(), &[0xaa, 0xbb]);
    }

    #[test]
    fn truncated() {
        assert_eq!(
            TcpPacket::new_checked(&SEGMENT[..12]),
            Err(WireError::Truncated)
        );
        assert_eq!(
            TcpPacket::new_checked(&SEGMENT[..23]),
            Err(WireError::Truncated)
        );
        let mut bad = SEGMENT;
        bad[12] = 0x40;
        assert_eq!(
            TcpPacket::new_checked(&bad[..13]),
            Err(WireError::BadHeaderLength)
        );
    }

    #[test]
    fn overlong() {
        let t = TcpPacket::new_checked(&SEGMENT[..]).unwrap();
        assert_eq!(t.payload().len(), 2);
    }
}
