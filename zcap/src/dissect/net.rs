//! The network layer read leniently, for the packets the flow extractor refuses (a transport
//! header cut by the snapshot length, a header length that is wrong): where the IP header
//! starts, its addresses, protocol and lengths, so that the printers can say what tcpdump
//! says of such a packet.

use std::net::IpAddr;

use zcrx_flowcache::LinkType;

use super::field::{be16, v4, v6};
use super::link::link_header_len;

/// An IP header as far as the capture holds it.
#[derive(Debug, Clone, Copy)]
pub struct Ip {
    /// IPv6, else IPv4.
    pub v6: bool,
    /// Source address.
    pub src: IpAddr,
    /// Destination address.
    pub dst: IpAddr,
    /// The protocol after the header (IPv6: the first next header).
    pub proto: u8,
    /// Where the IP header starts.
    pub l3: usize,
    /// Where the header after it starts.
    pub l4: usize,
    /// The transport's length by the IP header.
    pub len: usize,
    /// Bytes the IP header says the datagram has beyond what was on the wire, if any
    /// (tcpdump's `truncated-ip - N bytes missing!`).
    pub missing: usize,
    /// Part of a fragmented datagram.
    pub fragmented: bool,
    /// A fragment after the first (no transport header).
    pub later: bool,
}

/// Where the network layer starts in a frame of `link`, and whether it is IPv6 (`None`: not
/// IP).
pub fn network(link: LinkType, data: &[u8]) -> Option<(usize, bool)> {
    let l3 = link_header_len(link, data);
    let v6 = match link {
        LinkType::Ethernet | LinkType::LinuxSll => match be16(data, l3.checked_sub(2)?)? {
            0x0800 => false,
            0x86dd => true,
            _ => return None,
        },
        LinkType::LinuxSll2 => match be16(data, 0)? {
            0x0800 => false,
            0x86dd => true,
            _ => return None,
        },
        _ => match data.get(l3)? >> 4 {
            4 => false,
            6 => true,
            _ => return None,
        },
    };
    Some((l3, v6))
}

/// The IP header at `l3` of a frame whose network layer had `wire` bytes on the wire;
/// `None` where the capture cuts the fixed header or it is not one.
pub fn ip(data: &[u8], l3: usize, v6_hdr: bool, wire: usize) -> Option<Ip> {
    if v6_hdr {
        let plen = usize::from(be16(data, l3 + 4)?);
        let (src, dst) = (v6(data, l3 + 8)?, v6(data, l3 + 24)?);
        return Some(Ip {
            v6: true,
            src: src.into(),
            dst: dst.into(),
            proto: *data.get(l3 + 6)?,
            l3,
            l4: l3 + 40,
            len: plen,
            missing: (40 + plen).saturating_sub(wire),
            fragmented: false,
            later: false,
        });
    }
    let hlen = usize::from(data.get(l3)? & 0x0f) * 4;
    let total = usize::from(be16(data, l3 + 2)?);
    let off = be16(data, l3 + 6)?;
    let (src, dst) = (v4(data, l3 + 12)?, v4(data, l3 + 16)?);
    if hlen < 20 || total < hlen {
        return None;
    }
    Some(Ip {
        v6: false,
        src: src.into(),
        dst: dst.into(),
        proto: *data.get(l3 + 9)?,
        l3,
        l4: l3 + hlen,
        len: total - hlen,
        missing: total.saturating_sub(wire),
        fragmented: off & 0x3fff != 0,
        later: off & 0x1fff != 0,
    })
}
