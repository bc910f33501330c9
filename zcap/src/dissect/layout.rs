//! Where the printers read header fields themselves: in a header the snapshot may have cut,
//! or inside an ICMP error's quoted packet, where no checked view applies and each field is
//! printed as far as the bytes go (tcpdump's rule). Offsets in bytes from the header's start,
//! as the RFCs lay the headers out.

use std::ops::Range;

/// Ethernet II (IEEE 802.3) and its 802.1Q tag.
pub(crate) mod ethernet {
    use super::Range;
    pub(crate) const DESTINATION: Range<usize> = 0..6;
    pub(crate) const SOURCE: Range<usize> = 6..12;
    pub(crate) const ETHERTYPE: Range<usize> = 12..14;
    /// An 802.1Q tag: TCI, then the next EtherType.
    pub(crate) const TAG_LEN: usize = 4;
}

/// IPv4 (RFC 791 §3.1).
pub(crate) mod ipv4 {
    use super::Range;
    pub(crate) const VER_IHL: usize = 0;
    pub(crate) const PROTOCOL: usize = 9;
    pub(crate) const DST_ADDR: Range<usize> = 16..20;
    /// Without options.
    pub(crate) const HEADER_LEN: usize = 20;
    /// The flags in the flags-and-fragment-offset word: reserved, don't fragment, more.
    pub(crate) const RESERVED: u16 = 0x8000;
    pub(crate) const DF: u16 = 0x4000;
    pub(crate) const MF: u16 = 0x2000;
}

/// IPv6 (RFC 8200 §3, §4.5).
pub(crate) mod ipv6 {
    use super::Range;
    pub(crate) const NXT_HDR: usize = 6;
    pub(crate) const SRC_ADDR: Range<usize> = 8..24;
    pub(crate) const DST_ADDR: Range<usize> = 24..40;
    pub(crate) const HEADER_LEN: usize = 40;
    /// The fragment header.
    pub(crate) const FRAG_HEADER_LEN: usize = 8;
}

/// TCP (RFC 9293 §3.1) and UDP (RFC 768) begin alike: the ports.
pub(crate) mod ports {
    use super::Range;
    pub(crate) const DST_PORT: Range<usize> = 2..4;
}

/// ICMP (RFC 792) and ICMPv6 (RFC 4443).
pub(crate) mod icmp {
    use super::Range;
    pub(crate) const TYPE: usize = 0;
    /// RFC 1191: the next hop's MTU in "fragmentation needed".
    pub(crate) const NEXT_HOP_MTU: Range<usize> = 6..8;
    pub(crate) const HEADER_LEN: usize = 8;
}

#[cfg(test)]
mod test {
    use super::*;
    use zcrx_flowcache::wire::{EthernetFrame, Ipv4Packet, Ipv6Packet, TcpPacket};

    /// Distinct bytes everywhere, so that a wrong offset reads a wrong value.
    fn counting(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i * 7 + 3) as u8).collect()
    }

    fn be16(b: &[u8], r: Range<usize>) -> u16 {
        u16::from_be_bytes([b[r.start], b[r.start + 1]])
    }

    /// The offsets read the fields the wire layer's checked views read.
    #[test]
    fn the_layout_reads_what_the_views_read() {
        let b = counting(64);
        let eth = EthernetFrame::new_checked(&b[..]).unwrap();
        assert_eq!(b[ethernet::SOURCE], eth.src_addr());
        assert_eq!(b[ethernet::DESTINATION], eth.dst_addr());
        assert_eq!(be16(&b, ethernet::ETHERTYPE), eth.ethertype());
        let mut v4 = counting(64);
        v4[ipv4::VER_IHL] = 0x45;
        let p = Ipv4Packet::new_checked(&v4[..]).unwrap();
        assert_eq!(v4[ipv4::PROTOCOL], p.protocol());
        assert_eq!(v4[ipv4::DST_ADDR], p.dst_addr().octets());
        assert_eq!(p.header_len(), ipv4::HEADER_LEN);
        let flags = p.flags_frag();
        assert_eq!(flags & ipv4::DF != 0, p.dont_frag());
        assert_eq!(flags & ipv4::MF != 0, p.more_frags());
        let mut v6 = counting(64);
        v6[0] = 0x60;
        let p = Ipv6Packet::new_checked(&v6[..]).unwrap();
        assert_eq!(v6[ipv6::NXT_HDR], p.next_header());
        assert_eq!(v6[ipv6::SRC_ADDR], p.src_addr().octets());
        assert_eq!(v6[ipv6::DST_ADDR], p.dst_addr().octets());
        assert_eq!(p.payload().as_ptr(), v6[ipv6::HEADER_LEN..].as_ptr());
        let mut t = counting(40);
        t[12] = 0x50;
        let p = TcpPacket::new_checked(&t[..]).unwrap();
        assert_eq!(be16(&t, ports::DST_PORT), p.dst_port());
    }
}
