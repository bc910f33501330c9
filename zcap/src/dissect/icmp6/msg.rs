//! What the ICMPv6 printers read through: the message's checked accessors, and how a
//! printer stops.

use std::fmt::Write as _;
use std::net::Ipv6Addr;

/// A read past the capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Jump;

pub(super) type R<T> = Result<T, Jump>;

/// The message's captured bytes (never past its length) and how to print it.
pub(super) struct Msg<'a> {
    pub(super) b: &'a [u8],
    pub(super) len: usize,
    pub(super) v: u8,
    pub(super) names: bool,
}

/// What follows a type's own text.
pub(super) enum Tail {
    /// `, length N` without `-v`.
    Length,
    /// Nothing more.
    Done,
    /// tcpdump's local `goto trunc`: the mark, without a jump.
    Trunc,
}

impl Msg<'_> {
    pub(super) fn bytes(&self, at: usize, n: usize) -> R<&[u8]> {
        self.b.get(at..at.checked_add(n).ok_or(Jump)?).ok_or(Jump)
    }
    pub(super) fn u8(&self, at: usize) -> R<u8> {
        self.b.get(at).copied().ok_or(Jump)
    }
    pub(super) fn u16(&self, at: usize) -> R<u16> {
        Ok(u16::from_be_bytes(
            self.bytes(at, 2)?.try_into().map_err(|_| Jump)?,
        ))
    }
    pub(super) fn u32(&self, at: usize) -> R<u32> {
        Ok(u32::from_be_bytes(
            self.bytes(at, 4)?.try_into().map_err(|_| Jump)?,
        ))
    }
    pub(super) fn addr(&self, at: usize) -> R<Ipv6Addr> {
        let b: [u8; 16] = self.bytes(at, 16)?.try_into().map_err(|_| Jump)?;
        Ok(Ipv6Addr::from(b))
    }
    /// Whether the capture holds `n` bytes at `at`.
    pub(super) fn has(&self, at: usize, n: usize) -> bool {
        at.checked_add(n).is_some_and(|end| end <= self.b.len())
    }

    /// tcpdump's `print_unknown_data`: a hex dump of what the capture holds of `n` bytes
    /// at `at`, each line opened by `ident`.
    pub(super) fn unknown(&self, s: &mut String, at: usize, ident: &str, n: usize) {
        let Some(rest) = self.b.get(at..) else {
            let _ = write!(
                s,
                "{ident}Dissector error: print_unknown_data called with pointer past end of packet"
            );
            return;
        };
        let data = &rest[..n.min(rest.len())];
        for (line, chunk) in data.chunks(16).enumerate() {
            let _ = write!(s, "{ident}0x{:04x}: ", line * 16);
            for pair in chunk.chunks(2) {
                for (i, c) in pair.iter().enumerate() {
                    let _ = write!(s, "{}{c:02x}", if i == 0 { " " } else { "" });
                }
            }
        }
    }
}
