//! [`TcpSegment`]: the header facts of one segment that the state machine reads.

/// The header facts of one TCP segment that [`TcpState::observe`](crate::TcpState::observe) reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct TcpSegment {
    /// The flags byte (FIN 0x01, SYN 0x02, RST 0x04, PSH 0x08, ACK 0x10, ...).
    pub flags: u8,
    /// Sequence number.
    pub seq: u32,
    /// Acknowledgement number.
    pub ack: u32,
    /// Payload length (the datagram's, not what the capture kept).
    pub payload_len: u32,
    /// Window field, unscaled.
    pub window: u16,
}

impl TcpSegment {
    /// A segment with these header fields.
    pub fn new(flags: u8, seq: u32, ack: u32, payload_len: u32, window: u16) -> Self {
        TcpSegment {
            flags,
            seq,
            ack,
            payload_len,
            window,
        }
    }

    /// The segment of `frame`, from what [`crate::extract`] found in it; `None` when it is
    /// not TCP, a later fragment, or its header is cut short. Reads the 20 bytes of the TCP
    /// header and nothing else; the payload length comes from the IP length (the frame's end
    /// when the IP header declares none).
    #[inline]
    pub fn read(frame: &[u8], x: &crate::Extracted) -> Option<TcpSegment> {
        if x.key.proto() != crate::ipproto::TCP || x.key.is_later_fragment() {
            return None;
        }
        let l4 = x.l4_offset as usize;
        let h: &[u8; 20] = frame.get(l4..l4 + 20)?.try_into().ok()?;
        let be32 = |i: usize| u32::from_be_bytes([h[i], h[i + 1], h[i + 2], h[i + 3]]);
        let end = match x.ip_len {
            0 => frame.len(),
            n => x.l3_offset as usize + n as usize,
        };
        Some(TcpSegment {
            flags: h[13],
            seq: be32(4),
            ack: be32(8),
            payload_len: end.saturating_sub(x.payload_offset as usize) as u32,
            window: u16::from_be_bytes([h[14], h[15]]),
        })
    }

    pub(super) fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }
}
