//! The IPv6 fixed header (RFC 8200 §3), its extension headers (§4) and the options of
//! hop-by-hop and destination options headers (§4.2).

use std::net::Ipv6Addr;

use super::base::{be16, be32, need, view, WireError};
use crate::proto::ipproto;

/// Byte offsets of the IPv6 fixed header's fields.
pub(crate) mod field {
    use crate::wire::base::Field;
    /// Version (4 bits), traffic class (8) and flow label (20).
    pub const VER_TC_FLOW: Field = 0..4;
    /// Payload length: everything after the fixed header (0 for a jumbogram).
    pub const LENGTH: Field = 4..6;
    /// The first extension header's or the upper layer's protocol (`ipproto`).
    pub const NXT_HDR: usize = 6;
    /// Hop limit.
    pub const HOP_LIMIT: usize = 7;
    /// Source address.
    pub const SRC_ADDR: Field = 8..24;
    /// Destination address.
    pub const DST_ADDR: Field = 24..40;
    /// The fixed header's length.
    pub const HEADER_LEN: usize = 40;
}

/// Byte offsets of the fields every extension header but the fragment header shares
/// (hop-by-hop, routing, destination options, mobility, HIP, shim6; RFC 8200 §4.3, §4.4,
/// §4.6), and AH (RFC 4302 §2).
pub mod ext_field {
    /// The next header's protocol.
    pub const NXT_HDR: usize = 0;
    /// Length: in 8-octet units past the first 8 (AH: 4-octet units minus 2).
    pub const LENGTH: usize = 1;
    /// Where a hop-by-hop or destination options header's options begin.
    pub const OPTIONS: usize = 2;
}

/// Byte offsets of the fragment header's fields (RFC 8200 §4.5).
pub(crate) mod frag_field {
    use crate::wire::base::Field;
    /// The next header's protocol.
    pub const NXT_HDR: usize = 0;
    /// Fragment offset in 8-octet units (13 bits), reserved (2), More Fragments (1).
    pub const FRAG_OFF: Field = 2..4;
    /// Identification.
    pub const IDENT: Field = 4..8;
    /// The header's length.
    pub const HEADER_LEN: usize = 8;
}

/// Option types of hop-by-hop and destination options headers.
pub mod opt {
    /// One byte of padding (no length byte).
    pub const PAD1: u8 = 0;
    /// N bytes of padding.
    pub const PADN: u8 = 1;
    /// Router alert (RFC 2711).
    pub const ROUTER_ALERT: u8 = 5;
    /// Jumbo payload (RFC 2675 §2): 4 bytes, the length after the fixed header.
    pub const JUMBO: u8 = 0xc2;
    /// Home address (RFC 6275 §6.3).
    pub const HOME_ADDRESS: u8 = 0xc9;
}

/// How an extension header gives its length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ExtHeaderKind {
    /// Hop-by-hop, routing, destination options, mobility, HIP, shim6: the length field
    /// counts 8-octet units past the first 8 (RFC 8200 §4.3).
    Units8,
    /// The fragment header: 8 bytes (RFC 8200 §4.5).
    Fragment,
    /// AH: 4-octet units minus 2 (RFC 4302 §2.2).
    Ah,
}

impl ExtHeaderKind {
    /// The kind of extension header protocol `next_header` is, or `None` where a walk of
    /// extension headers ends (an upper layer, ESP, no next header).
    #[inline(always)]
    pub const fn of(next_header: u8) -> Option<Self> {
        match next_header {
            ipproto::HOPOPT
            | ipproto::ROUTING
            | ipproto::DSTOPTS
            | ipproto::MOBILITY
            | ipproto::HIP
            | ipproto::SHIM6 => Some(ExtHeaderKind::Units8),
            ipproto::FRAGMENT => Some(ExtHeaderKind::Fragment),
            ipproto::AH => Some(ExtHeaderKind::Ah),
            _ => None,
        }
    }

    /// The header's length in bytes given its length field ([`ext_field::LENGTH`]; the
    /// fragment header's is reserved and ignored).
    #[inline(always)]
    pub const fn header_len(self, length_field: u8) -> usize {
        let n = length_field as usize;
        match self {
            ExtHeaderKind::Units8 => (n + 1) * 8,
            ExtHeaderKind::Fragment => frag_field::HEADER_LEN,
            ExtHeaderKind::Ah => (n + 2) * 4,
        }
    }
}

/// The length of the extension header of protocol `next_header` at the start of `buf`, read
/// from its length field; `Ok(None)` when `next_header` is not an extension header
/// ([`ExtHeaderKind::of`]). `Truncated` when `buf` lacks the length field (the fragment
/// header's length is fixed: nothing is read).
#[inline(always)]
pub fn ext_header_len(next_header: u8, buf: &[u8]) -> Result<Option<usize>, WireError> {
    let units = |buf: &[u8]| buf.get(ext_field::LENGTH).copied().map(usize::from);
    match next_header {
        ipproto::HOPOPT
        | ipproto::ROUTING
        | ipproto::DSTOPTS
        | ipproto::MOBILITY
        | ipproto::HIP
        | ipproto::SHIM6 => match units(buf) {
            Some(n) => Ok(Some((n + 1) * 8)),
            None => Err(WireError::Truncated),
        },
        ipproto::FRAGMENT => Ok(Some(frag_field::HEADER_LEN)),
        ipproto::AH => match units(buf) {
            Some(n) => Ok(Some((n + 2) * 4)),
            None => Err(WireError::Truncated),
        },
        _ => Ok(None),
    }
}

/// An IPv6 fixed header and what follows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ipv6Packet<T: AsRef<[u8]>> {
    buffer: T,
}

view!(Ipv6Packet);

impl<T: AsRef<[u8]>> Ipv6Packet<T> {
    /// Checks that the buffer holds the 40-byte fixed header. The version is not checked
    /// (see [`Self::version`]), nor the payload length.
    #[inline(always)]
    pub fn check_len(&self) -> Result<(), WireError> {
        need(self.buffer.as_ref(), field::HEADER_LEN)
    }

    /// The version nibble (6 for IPv6).
    #[inline(always)]
    pub fn version(&self) -> u8 {
        self.buffer.as_ref()[0] >> 4
    }

    /// The traffic class.
    #[inline(always)]
    pub fn traffic_class(&self) -> u8 {
        (be32(self.buffer.as_ref(), field::VER_TC_FLOW.start) >> 20) as u8
    }

    /// The flow label.
    #[inline(always)]
    pub fn flow_label(&self) -> u32 {
        be32(self.buffer.as_ref(), field::VER_TC_FLOW.start) & 0x000f_ffff
    }

    /// The payload length (0 for a jumbogram, or a GSO send captured before segmentation).
    #[inline(always)]
    pub fn payload_len(&self) -> u16 {
        be16(self.buffer.as_ref(), field::LENGTH.start)
    }

    /// The first extension header's or the upper layer's protocol.
    #[inline(always)]
    pub fn next_header(&self) -> u8 {
        self.buffer.as_ref()[field::NXT_HDR]
    }

    /// The hop limit.
    #[inline(always)]
    pub fn hop_limit(&self) -> u8 {
        self.buffer.as_ref()[field::HOP_LIMIT]
    }

    /// The source address.
    #[inline(always)]
    pub fn src_addr(&self) -> Ipv6Addr {
        let b: [u8; 16] = self.buffer.as_ref()[field::SRC_ADDR]
            .try_into()
            .expect("16 bytes");
        Ipv6Addr::from(b)
    }

    /// The destination address.
    #[inline(always)]
    pub fn dst_addr(&self) -> Ipv6Addr {
        let b: [u8; 16] = self.buffer.as_ref()[field::DST_ADDR]
            .try_into()
            .expect("16 bytes");
        Ipv6Addr::from(b)
    }

    /// What follows the fixed header in the buffer (not cut at the payload length).
    #[inline(always)]
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[field::HEADER_LEN..]
    }
}

/// A hop-by-hop, routing, destination options, mobility, HIP or shim6 header: the ones whose
/// length counts 8-octet units past the first 8.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ipv6ExtHeader<T: AsRef<[u8]>> {
    buffer: T,
}

view!(Ipv6ExtHeader);

impl<T: AsRef<[u8]>> Ipv6ExtHeader<T> {
    /// Checks that the buffer holds the length field and the whole header it declares.
    #[inline(always)]
    pub fn check_len(&self) -> Result<(), WireError> {
        let b = self.buffer.as_ref();
        need(b, ext_field::LENGTH + 1)?;
        need(b, self.header_len())
    }

    /// The next header's protocol.
    #[inline(always)]
    pub fn next_header(&self) -> u8 {
        self.buffer.as_ref()[ext_field::NXT_HDR]
    }

    /// The header's length in bytes.
    #[inline(always)]
    pub fn header_len(&self) -> usize {
        (usize::from(self.buffer.as_ref()[ext_field::LENGTH]) + 1) * 8
    }

    /// The header's bytes after its first two (a hop-by-hop or destination options header's
    /// options; see [`Ipv6Options`]).
    #[inline(always)]
    pub fn data(&self) -> &[u8] {
        &self.buffer.as_ref()[ext_field::OPTIONS..self.header_len()]
    }

    /// The options of a hop-by-hop or destination options header.
    #[inline(always)]
    pub fn options(&self) -> Ipv6Options<'_> {
        Ipv6Options::new(self.data())
    }
}

/// A fragment header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ipv6FragmentHeader<T: AsRef<[u8]>> {
    buffer: T,
}

view!(Ipv6FragmentHeader);

impl<T: AsRef<[u8]>> Ipv6FragmentHeader<T> {
    /// Checks that the buffer holds the 8-byte header.
    #[inline(always)]
    pub fn check_len(&self) -> Result<(), WireError> {
        need(self.buffer.as_ref(), frag_field::HEADER_LEN)
    }

    /// The next header's protocol.
    #[inline(always)]
    pub fn next_header(&self) -> u8 {
        self.buffer.as_ref()[frag_field::NXT_HDR]
    }

    /// The fragment offset in bytes.
    #[inline(always)]
    pub fn frag_offset(&self) -> u16 {
        be16(self.buffer.as_ref(), frag_field::FRAG_OFF.start) & 0xfff8
    }

    /// The More Fragments flag.
    #[inline(always)]
    pub fn more_frags(&self) -> bool {
        be16(self.buffer.as_ref(), frag_field::FRAG_OFF.start) & 1 != 0
    }

    /// The identification.
    #[inline(always)]
    pub fn ident(&self) -> u32 {
        be32(self.buffer.as_ref(), frag_field::IDENT.start)
    }
}

/// One option of a hop-by-hop or destination options header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ipv6Option<'a> {
    /// The option type ([`opt`]).
    pub kind: u8,
    /// The option's data (empty for Pad1).
    pub data: &'a [u8],
}

/// The options of a hop-by-hop or destination options header, in order (RFC 8200 §4.2).
/// An option whose length byte or data the header does not hold yields
/// `Err(WireError::Truncated)` and ends the walk.
#[derive(Debug, Clone)]
pub struct Ipv6Options<'a> {
    rest: &'a [u8],
}

impl<'a> Ipv6Options<'a> {
    /// The options in `data` (the header past its next header and length bytes).
    #[inline]
    pub fn new(data: &'a [u8]) -> Self {
        Ipv6Options { rest: data }
    }
}

impl<'a> Iterator for Ipv6Options<'a> {
    type Item = Result<Ipv6Option<'a>, WireError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let (&kind, after) = self.rest.split_first()?;
        if kind == opt::PAD1 {
            self.rest = after;
            return Some(Ok(Ipv6Option { kind, data: &[] }));
        }
        let item = after.split_first().and_then(|(&len, data)| {
            let len = usize::from(len);
            (data.len() >= len).then(|| {
                (
                    Ipv6Option {
                        kind,
                        data: &data[..len],
                    },
                    &data[len..],
                )
            })
        });
        match item {
            Some((o, rest)) => {
                self.rest = rest;
                Some(Ok(o))
            }
            None => {
                self.rest = &[];
                Some(Err(WireError::Truncated))
            }
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;

    // 2001:db8::1 > 2001:db8::2, hop-by-hop (router alert, PadN) then a first fragment.
    static PACKET: [u8; 56] = [
        0x60, 0x12, 0x34, 0x56, 0x00, 0x10, 0x00, 0x40, // ver, tc, flow, plen, HBH, hlim
        0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, //
        0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, //
        44, 0, 5, 2, 0, 0, 1, 0, // HBH: next fragment, router alert 0, PadN 0
        17, 0, 0x00, 0x01, 0xde, 0xad, 0xbe, 0xef, // fragment: next UDP, offset 0, M
    ];

    #[test]
    fn deconstruct() {
        let p = Ipv6Packet::new_checked(&PACKET[..]).unwrap();
        assert_eq!(p.version(), 6);
        assert_eq!(p.traffic_class(), 0x01);
        assert_eq!(p.flow_label(), 0x23456);
        assert_eq!(p.payload_len(), 16);
        assert_eq!(p.next_header(), ipproto::HOPOPT);
        assert_eq!(p.hop_limit(), 64);
        assert_eq!(p.src_addr(), "2001:db8::1".parse::<Ipv6Addr>().unwrap());
        assert_eq!(p.dst_addr(), "2001:db8::2".parse::<Ipv6Addr>().unwrap());
        let hbh = Ipv6ExtHeader::new_checked(p.payload()).unwrap();
        assert_eq!(hbh.header_len(), 8);
        assert_eq!(hbh.next_header(), ipproto::FRAGMENT);
        let opts: Vec<_> = hbh.options().collect();
        assert_eq!(
            opts,
            [
                Ok(Ipv6Option {
                    kind: opt::ROUTER_ALERT,
                    data: &[0, 0]
                }),
                Ok(Ipv6Option {
                    kind: opt::PADN,
                    data: &[]
                })
            ]
        );
        let f = Ipv6FragmentHeader::new_checked(&p.payload()[8..]).unwrap();
        assert_eq!(f.next_header(), ipproto::UDP);
        assert_eq!(f.frag_offset(), 0);
        assert!(f.more_frags());
        assert_eq!(f.ident(), 0xdead_beef);
        assert_eq!(ext_header_len(ipproto::HOPOPT, p.payload()), Ok(Some(8)));
        assert_eq!(ext_header_len(ipproto::UDP, p.payload()), Ok(None));
        assert_eq!(ext_header_len(ipproto::AH, &[0, 4]), Ok(Some(24)));
    }

    #[test]
    fn truncated() {
        assert_eq!(
            Ipv6Packet::new_checked(&PACKET[..39]),
            Err(WireError::Truncated)
        );
        assert_eq!(
            Ipv6ExtHeader::new_checked(&PACKET[40..47]),
            Err(WireError::Truncated)
        );
        assert_eq!(
            Ipv6FragmentHeader::new_checked(&PACKET[48..55]),
            Err(WireError::Truncated)
        );
        assert_eq!(
            ext_header_len(ipproto::ROUTING, &[0]),
            Err(WireError::Truncated)
        );
        // An option longer than the header ends the walk with an error.
        let mut o = Ipv6Options::new(&[1, 4, 0, 0]);
        assert_eq!(o.next(), Some(Err(WireError::Truncated)));
        assert_eq!(o.next(), None);
    }

    #[test]
    fn overlong() {
        let mut long = PACKET.to_vec();
        long.extend_from_slice(&[0; 8]);
        let p = Ipv6Packet::new_checked(&long[..]).unwrap();
        assert_eq!(p.payload().len(), 24);
    }
}
