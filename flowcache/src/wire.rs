//! Zero-copy views of the headers flowcache reads: Ethernet and VLAN tags, IPv4, IPv6 and its
//! extension headers, TCP, UDP, SCTP, DCCP, ICMP and ICMPv6 (and ARP, which zcap prints).
//! Extraction reads through them, and so does zcap's dissector, so each header's layout is
//! written down once.
//!
//! Each view is a `Header<T: AsRef<[u8]>>` over borrowed bytes (smoltcp's `wire` module is
//! the model). Byte offsets live in each module's `field` module, named after the RFC's
//! fields. Getters are named after the fields too.
//!
//! The no-panic contract: `new_checked` (or `check_len` after `new_unchecked`) returns
//! `Ok` only when the buffer holds the whole header (for TCP, IPv4 and DCCP: the length the
//! header declares for itself); after that, no accessor panics. Untrusted bytes always go
//! through `new_checked`. A view built with `new_unchecked` whose buffer is too short panics
//! in its accessors. Nothing here checks a checksum or a length that describes the payload
//! (IPv4 total length, IPv6 payload length, the UDP length): a capture cuts frames at its
//! snapshot length, so the caller decides what a short payload means.

pub mod arp;
pub mod dccp;
pub mod ethernet;
pub mod icmp;
pub mod ipv4;
pub mod ipv6;
pub mod sctp;
pub mod tcp;
pub mod udp;

pub use arp::ArpPacket;
pub use dccp::DccpPacket;
pub use ethernet::{EthernetFrame, VlanTag};
pub use icmp::IcmpPacket;
pub use ipv4::Ipv4Packet;
pub use ipv6::{
    ExtHeaderKind, Ipv6ExtHeader, Ipv6FragmentHeader, Ipv6Option, Ipv6Options, Ipv6Packet,
};
pub use sctp::SctpPacket;
pub use tcp::TcpPacket;
pub use udp::UdpPacket;

/// Why a buffer is not a header of the kind asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WireError {
    /// The buffer ends inside the header.
    #[error("buffer ends inside the header")]
    Truncated,
    /// The header declares a length of its own below its minimum (IPv4 IHL below 5, TCP data
    /// offset below 5, DCCP data offset below 3).
    #[error("header length field below the header's minimum")]
    BadHeaderLength,
}

/// A range of bytes within a header.
pub type Field = std::ops::Range<usize>;

/// The big-endian 16-bit value at `at` of `b` (which the caller has checked holds it).
#[inline(always)]
pub(crate) fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

/// The big-endian 32-bit value at `at` of `b` (which the caller has checked holds it).
#[inline(always)]
pub(crate) fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// The big-endian 16-bit value at `at` of `b`, or `None` past its end: for printers that
/// show what a cut-off header still holds.
#[inline]
pub fn read_be16(b: &[u8], at: usize) -> Option<u16> {
    let s = b.get(at..at.checked_add(2)?)?;
    Some(u16::from_be_bytes([s[0], s[1]]))
}

/// The big-endian 32-bit value at `at` of `b`, or `None` past its end.
#[inline]
pub fn read_be32(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at.checked_add(4)?)?;
    Some(u32::from_be_bytes([s[0], s[1], s[2], s[3]]))
}

/// Implements the constructors every view shares: `new_unchecked`, `new_checked`,
/// `into_inner` and `as_bytes`.
macro_rules! view {
    ($ty:ident) => {
        impl<T: AsRef<[u8]>> $ty<T> {
            /// A view of `buffer` without checking its length: accessors panic when the
            /// buffer is too short. See [`Self::new_checked`].
            #[inline(always)]
            pub const fn new_unchecked(buffer: T) -> Self {
                $ty { buffer }
            }

            /// A view of `buffer` after [`Self::check_len`]: no accessor panics.
            #[inline(always)]
            pub fn new_checked(buffer: T) -> Result<Self, $crate::wire::WireError> {
                let v = Self::new_unchecked(buffer);
                v.check_len()?;
                Ok(v)
            }

            /// The bytes the view was built on.
            #[inline(always)]
            pub fn into_inner(self) -> T {
                self.buffer
            }

            /// The bytes the view was built on, by reference.
            #[inline(always)]
            pub fn as_bytes(&self) -> &[u8] {
                self.buffer.as_ref()
            }
        }
    };
}
pub(crate) use view;

/// Checks that `b` holds `len` bytes.
#[inline(always)]
pub(crate) fn need(b: &[u8], len: usize) -> Result<(), WireError> {
    if b.len() < len {
        Err(WireError::Truncated)
    } else {
        Ok(())
    }
}
