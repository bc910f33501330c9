//! Header-only 5-tuple extraction.
//!
//! Promise: [`extract`] reads only link, network and transport headers — never a byte past the
//! end of the L4 header — and for any input returns a key or an [`ExtractError`]; it never
//! panics. Every read goes through `get`, so a short frame is an error, not a fault.

use crate::key::FlowKey;
use crate::proto::ipproto;
use crate::wire::ethernet::{self, ethertype};
use crate::wire::{
    icmp, ipv4, ipv6, read_be32, sctp, tcp, udp, DccpPacket, EthernetFrame, ExtHeaderKind,
    IcmpPacket, Ipv4Packet, Ipv6ExtHeader, Ipv6Packet, SctpPacket, TcpPacket, UdpPacket, VlanTag,
    WireError,
};

mod outcome;
pub use outcome::{ExtractError, Extracted, Fragment, Layer, MAX_EXT_HEADERS, MAX_VLAN_TAGS};

/// Link-layer framing of the bytes handed to [`extract`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkType {
    /// Ethernet II, with any stack of 802.1Q / 802.1ad / QinQ tags (LINKTYPE_ETHERNET, 1).
    Ethernet,
    /// Linux cooked capture v1 (LINKTYPE_LINUX_SLL, 113).
    LinuxSll,
    /// Linux cooked capture v2 (LINKTYPE_LINUX_SLL2, 276).
    LinuxSll2,
    /// Raw IPv4 or IPv6, version from the first nibble (LINKTYPE_RAW, 101).
    RawIp,
    /// Raw IPv4 (LINKTYPE_IPV4, 228).
    Ipv4,
    /// Raw IPv6 (LINKTYPE_IPV6, 229).
    Ipv6,
    /// BSD loopback, address family in the capturing host's byte order (LINKTYPE_NULL, 0).
    Null,
    /// OpenBSD loopback, address family in network byte order (LINKTYPE_LOOP, 108).
    Loop,
}

impl LinkType {
    /// The link type for a pcap/pcapng `LINKTYPE_*` value, if supported.
    pub fn from_linktype(linktype: u32) -> Option<Self> {
        Some(match linktype {
            1 => LinkType::Ethernet,
            113 => LinkType::LinuxSll,
            276 => LinkType::LinuxSll2,
            101 | 12 | 14 => LinkType::RawIp, // 12 and 14 are DLT_RAW on some BSDs
            228 => LinkType::Ipv4,
            229 => LinkType::Ipv6,
            0 => LinkType::Null,
            108 => LinkType::Loop,
            _ => return None,
        })
    }
}

#[inline]
fn be16(b: &[u8], off: usize, layer: Layer) -> Result<u16, ExtractError> {
    match b.get(off..off + 2) {
        Some(s) => Ok(u16::from_be_bytes([s[0], s[1]])),
        None => Err(ExtractError::Truncated(layer)),
    }
}

#[inline]
fn byte(b: &[u8], off: usize, layer: Layer) -> Result<u8, ExtractError> {
    b.get(off).copied().ok_or(ExtractError::Truncated(layer))
}

/// Extracts the flow of `frame` framed as `link`. `meta_vlan` is a VLAN TCI the capture
/// stripped and reported out of band (TPACKET's `tp_vlan_tci`); it counts as the outermost tag.
#[inline]
pub fn extract(
    link: LinkType,
    frame: &[u8],
    meta_vlan: Option<u16>,
) -> Result<Extracted, ExtractError> {
    if link == LinkType::Ethernet && !cfg!(zcrx_no_fast_path) {
        if let Some(x) = fast_ethernet(frame, meta_vlan) {
            return Ok(x);
        }
    }
    extract_general(link, frame, meta_vlan)
}

/// [`extract`]'s fast path alone: the key of a frame of the common shapes (Ethernet with at
/// most one 802.1Q tag, IPv4 without options and not a fragment or IPv6 without extension
/// headers, TCP or UDP), `None` for anything else, for which [`extract`] takes its general
/// path. For callers that handle the two outcomes apart: a value that may come from either
/// path is returned through memory, and the fast path's fields with it.
#[inline]
pub fn extract_fast(link: LinkType, frame: &[u8], meta_vlan: Option<u16>) -> Option<Extracted> {
    if link == LinkType::Ethernet && !cfg!(zcrx_no_fast_path) {
        fast_ethernet(frame, meta_vlan)
    } else {
        None
    }
}

/// The common shapes, read with fixed-size loads and a handful of compares: Ethernet with at
/// most one 802.1Q tag, IPv4 without options and not a fragment or IPv6 without extension
/// headers, TCP or UDP with its header inside the datagram. Anything else (or anything odd
/// about these) returns `None` and takes the general path, which gives the same answer for
/// what this accepts (tested) and the exact error for the rest. The network layer is read
/// at a constant offset (14 or 18), so that each header is one bounds check and every field
/// a fixed load.
#[inline(always)]
fn fast_ethernet(frame: &[u8], meta_vlan: Option<u16>) -> Option<Extracted> {
    let eth: &[u8; 18] = frame.get(..18)?.try_into().ok()?;
    let vlan = meta_vlan.map(|t| t & 0x0fff);
    // EtherTypes as 16-bit loads and compares (not byte by byte), as loaded: against
    // constants in wire order ([`Wire`]), so no byte swap per packet.
    match Wire::at(eth, 12) {
        Wire::Q => {
            let tag = u16::from_be_bytes([eth[14], eth[15]]) & 0x0fff;
            fast_ip::<18>(frame, Wire::at(eth, 16), Some(vlan.unwrap_or(tag)))
        }
        ethertype => fast_ip::<14>(frame, ethertype, vlan),
    }
}

/// An EtherType as its two bytes load in the host's order (`u16::from_ne_bytes`), and the
/// ones the fast path knows in the same form.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Wire(u16);

impl Wire {
    const Q: Wire = Wire(ethertype::VLAN.to_be());
    const IP: Wire = Wire(ethertype::IPV4.to_be());
    const IPV6: Wire = Wire(ethertype::IPV6.to_be());

    #[inline(always)]
    fn at(eth: &[u8; 18], i: usize) -> Wire {
        Wire(u16::from_ne_bytes([eth[i], eth[i + 1]]))
    }
}

/// [`fast_ethernet`] from the network layer at `L3` on, for `ethertype`.
#[inline(always)]
fn fast_ip<const L3: usize>(frame: &[u8], ethertype: Wire, vlan: Option<u16>) -> Option<Extracted> {
    let x = match ethertype {
        Wire::IP => fast_ipv4::<L3>(frame)?,
        Wire::IPV6 => fast_ipv6::<L3>(frame)?,
        _ => return None,
    };
    Some(match vlan {
        Some(v) => Extracted {
            key: x.key.with_vlan(v),
            ..x
        },
        None => x,
    })
}

/// IPv4 without options, not a fragment, carrying TCP or UDP, with a declared length.
#[inline(always)]
fn fast_ipv4<const L3: usize>(frame: &[u8]) -> Option<Extracted> {
    // The header and the 8 bytes after it: the ports, and all of a UDP header.
    let h: &[u8; ipv4::field::HEADER_LEN + 8] = frame
        .get(L3..L3 + ipv4::field::HEADER_LEN + 8)?
        .try_into()
        .ok()?;
    // Version 4, IHL 5 (byte 0); no MF, offset 0 (bytes 6-7 but DF): one load, one compare.
    // The cheap refusals first: a packet that falls through to the general path should pay
    // little for having tried.
    let first = u64::from_be_bytes(h[..8].try_into().expect("8 bytes"));
    if first & 0xff00_0000_0000_3fff != 0x4500_0000_0000_0000 {
        return None;
    }
    // A declared length (0 is a TSO send: the general path takes it from the frame).
    let total = (first >> 32) as u16 as usize;
    if total < ipv4::field::HEADER_LEN {
        return None;
    }
    let proto = h[ipv4::field::PROTOCOL];
    let (flags, payload) = fast_transport(frame, proto, L3 + ipv4::field::HEADER_LEN, L3 + total)?;
    let (src, dst) = (
        be32_at(h, ipv4::field::SRC_ADDR.start),
        be32_at(h, ipv4::field::DST_ADDR.start),
    );
    Some(fast_result(
        (
            false,
            [src, 0],
            [dst, 0],
            proto,
            &h[ipv4::field::HEADER_LEN..],
        ),
        (flags, payload),
        (L3, L3 + ipv4::field::HEADER_LEN, total),
    ))
}

/// IPv6 without extension headers, carrying TCP or UDP, with a declared payload length.
#[inline(always)]
fn fast_ipv6<const L3: usize>(frame: &[u8]) -> Option<Extracted> {
    let h: &[u8; ipv6::field::HEADER_LEN + 8] = frame
        .get(L3..L3 + ipv6::field::HEADER_LEN + 8)?
        .try_into()
        .ok()?;
    let payload_len = usize::from(u16::from_be_bytes([
        h[ipv6::field::LENGTH.start],
        h[ipv6::field::LENGTH.start + 1],
    ]));
    // Version 6; a declared length (0: a jumbogram, for the general path).
    if h[0] >> 4 != 6 || payload_len == 0 {
        return None;
    }
    let proto = h[ipv6::field::NXT_HDR];
    let total = ipv6::field::HEADER_LEN + payload_len;
    let (flags, payload) = fast_transport(frame, proto, L3 + ipv6::field::HEADER_LEN, L3 + total)?;
    let src = [
        be64_at(h, ipv6::field::SRC_ADDR.start),
        be64_at(h, ipv6::field::SRC_ADDR.start + 8),
    ];
    let dst = [
        be64_at(h, ipv6::field::DST_ADDR.start),
        be64_at(h, ipv6::field::DST_ADDR.start + 8),
    ];
    Some(fast_result(
        (true, src, dst, proto, &h[ipv6::field::HEADER_LEN..]),
        (flags, payload),
        (L3, L3 + ipv6::field::HEADER_LEN, total),
    ))
}

/// What the fast path found: (IPv6?, source, destination, protocol, the transport header's
/// first bytes), (TCP flags, payload offset), (network offset, transport offset, IP length).
#[inline(always)]
fn fast_result(
    (v6, src, dst, proto, ports): (bool, [u64; 2], [u64; 2], u8, &[u8]),
    (tcp_flags, payload): (u8, usize),
    (l3, l4, ip_len): (usize, usize, usize),
) -> Extracted {
    Extracted {
        key: FlowKey::from_wire_ports(
            v6,
            src,
            dst,
            proto,
            u32::from_be_bytes([ports[0], ports[1], ports[2], ports[3]]),
        ),
        tcp_flags,
        fragment: Fragment::No,
        l3_offset: l3 as u32,
        l4_offset: l4 as u32,
        payload_offset: payload as u32,
        ip_len: ip_len as u32,
    }
}

/// TCP or UDP at `l4` (whose first 8 bytes the caller has read, so the frame holds them) in
/// a datagram ending at `ip_end`: (TCP flags, payload offset) when the header lies inside the
/// datagram and the frame; else `None`.
#[inline(always)]
fn fast_transport(frame: &[u8], proto: u8, l4: usize, ip_end: usize) -> Option<(u8, usize)> {
    match proto {
        // The 8 bytes are in the frame: only the datagram's end remains to check.
        ipproto::UDP => (l4 + 8 <= ip_end).then_some((0, l4 + 8)),
        ipproto::TCP => {
            let t: &[u8; tcp::field::HEADER_LEN] = frame
                .get(l4..l4 + tcp::field::HEADER_LEN)?
                .try_into()
                .ok()?;
            let doff = usize::from(t[tcp::field::DATA_OFFSET] >> 4) * 4;
            let payload = l4 + doff;
            (doff >= tcp::field::HEADER_LEN && payload <= ip_end.min(frame.len()))
                .then_some((t[tcp::field::FLAGS], payload))
        }
        _ => None,
    }
}

/// [`extract`]'s general path alone: every link type and header shape it knows. For callers
/// that tried [`extract_fast`] first and handle the two outcomes apart, as a per-packet loop
/// does to keep the fast path's key in registers (the pipeline's stage: calling [`extract`]
/// here instead would inline its second fast path into the loop and lengthen the stage's
/// work a packet). Same result as [`extract`] for every frame.
// One function over 80 lines on purpose: it is the per-packet path's one body, and split
// into parts its inlining, and so rxbench's instruction counts, would move.
#[inline]
pub fn extract_general(
    link: LinkType,
    frame: &[u8],
    meta_vlan: Option<u16>,
) -> Result<Extracted, ExtractError> {
    let mut vlan = meta_vlan.map(|t| t & 0x0fff);
    let (ethertype, l3) = match link {
        LinkType::Ethernet => {
            let eth = EthernetFrame::new_checked(frame)
                .map_err(|_| ExtractError::Truncated(Layer::Link))?;
            walk_tags(
                frame,
                eth.ethertype(),
                ethernet::field::HEADER_LEN,
                &mut vlan,
            )?
        }
        // SLL: packet type, ARPHRD, address length, 8 address bytes, protocol at 14.
        LinkType::LinuxSll => walk_tags(frame, be16(frame, 14, Layer::Link)?, 16, &mut vlan)?,
        // SLL2: protocol first, then reserved, ifindex, ARPHRD, type, length, address: 20 bytes.
        LinkType::LinuxSll2 => {
            if frame.len() < 20 {
                return Err(ExtractError::Truncated(Layer::Link));
            }
            walk_tags(frame, be16(frame, 0, Layer::Link)?, 20, &mut vlan)?
        }
        LinkType::RawIp => match byte(frame, 0, Layer::Ipv4)? >> 4 {
            4 => (ethertype::IPV4, 0),
            6 => (ethertype::IPV6, 0),
            v => return Err(ExtractError::BadVersion(v)),
        },
        LinkType::Ipv4 => (ethertype::IPV4, 0),
        LinkType::Ipv6 => (ethertype::IPV6, 0),
        LinkType::Null | LinkType::Loop => {
            let raw = frame
                .get(0..4)
                .ok_or(ExtractError::Truncated(Layer::Link))?;
            let raw: [u8; 4] = raw.try_into().expect("4 bytes");
            // DLT_NULL is in the capturing host's order, which need not be ours: try both,
            // as libpcap does. AF_INET is 2 everywhere; AF_INET6 is 10, 24, 28 or 30.
            let fam = match link {
                LinkType::Loop => u32::from_be_bytes(raw),
                _ => {
                    let le = u32::from_le_bytes(raw);
                    if le < 0x1_0000 {
                        le
                    } else {
                        u32::from_be_bytes(raw)
                    }
                }
            };
            match fam {
                2 => (ethertype::IPV4, 4),
                10 | 24 | 28 | 30 => (ethertype::IPV6, 4),
                other => return Err(ExtractError::NotIp(other)),
            }
        }
    };
    let net = match ethertype {
        ethertype::IPV4 => ipv4(frame, l3)?,
        ethertype::IPV6 => ipv6(frame, l3)?,
        other => return Err(ExtractError::NotIp(u32::from(other))),
    };
    let (sport, dport, tcp_flags, payload) = if net.fragment == Fragment::Later {
        (0, 0, 0, net.l4)
    } else {
        transport(&frame[..net.end], net.proto, net.l4)?
    };
    let mut key = FlowKey::from_words(net.v6, net.src, net.dst, net.proto, sport, dport);
    if net.fragment == Fragment::Later {
        key.set_later_fragment();
    }
    if let Some(v) = vlan {
        key = key.with_vlan(v);
    }
    Ok(Extracted {
        key,
        tcp_flags,
        fragment: net.fragment,
        l3_offset: net.l3 as u32,
        l4_offset: net.l4 as u32,
        payload_offset: payload as u32,
        ip_len: u32::try_from(net.ip_len).unwrap_or(u32::MAX),
    })
}

/// Walks the VLAN tags that follow an EtherType field of value `t`, whose next byte is at
/// `off`; returns (inner EtherType, L3 offset). The first tag seen becomes the key's VLAN
/// unless the capture already supplied the outermost one.
#[inline(always)]
fn walk_tags(
    frame: &[u8],
    mut t: u16,
    mut off: usize,
    vlan: &mut Option<u16>,
) -> Result<(u16, usize), ExtractError> {
    let mut tags = 0;
    while ethertype::is_vlan(t) {
        tags += 1;
        if tags > MAX_VLAN_TAGS {
            return Err(ExtractError::TooManyVlanTags);
        }
        let tag = VlanTag::new_checked(rest(frame, off))
            .map_err(|_| ExtractError::Truncated(Layer::Link))?;
        vlan.get_or_insert(tag.vlan_id());
        t = tag.ethertype();
        off += ethernet::tag_field::LEN;
    }
    Ok((t, off))
}

/// The frame from `off` on (empty past its end).
#[inline(always)]
fn rest(frame: &[u8], off: usize) -> &[u8] {
    frame.get(off..).unwrap_or_default()
}

/// What the network layer found: everything but the ports.
struct Net {
    v6: bool,
    src: [u64; 2],
    dst: [u64; 2],
    proto: u8,
    l3: usize,
    l4: usize,
    /// End of the datagram within the frame (total / payload length, capped by the frame).
    end: usize,
    /// Declared datagram length, 0 if the header declares none.
    ip_len: usize,
    fragment: Fragment,
}

#[inline(always)]
fn be32_at(b: &[u8], off: usize) -> u64 {
    u64::from(u32::from_be_bytes([
        b[off],
        b[off + 1],
        b[off + 2],
        b[off + 3],
    ]))
}

#[inline(always)]
fn be64_at(b: &[u8], off: usize) -> u64 {
    u64::from_be_bytes([
        b[off],
        b[off + 1],
        b[off + 2],
        b[off + 3],
        b[off + 4],
        b[off + 5],
        b[off + 6],
        b[off + 7],
    ])
}

/// A wire error in the header of `layer` as extraction reports it.
#[inline(always)]
fn wire_error(layer: Layer) -> impl Fn(WireError) -> ExtractError {
    move |e| match e {
        WireError::BadHeaderLength => ExtractError::BadHeaderLength(layer),
        _ => ExtractError::Truncated(layer),
    }
}

/// The fixed part (`len` bytes) of the header at `off` in `frame`, or `Truncated(layer)`: a
/// slice of known length, so that the view's accessors over it need no bounds check.
#[inline(always)]
fn fixed(frame: &[u8], off: usize, len: usize, layer: Layer) -> Result<&[u8], ExtractError> {
    frame
        .get(off..off + len)
        .ok_or(ExtractError::Truncated(layer))
}

#[inline]
fn ipv4(frame: &[u8], l3: usize) -> Result<Net, ExtractError> {
    let version = byte(frame, l3, Layer::Ipv4)? >> 4;
    if version != 4 {
        return Err(ExtractError::BadVersion(version));
    }
    // A view of the fixed header alone (its accessors read nothing past it); the options
    // IHL declares are checked against the frame, as `Ipv4Packet::check_len` does.
    let h = Ipv4Packet::new_unchecked(fixed(frame, l3, ipv4::field::HEADER_LEN, Layer::Ipv4)?);
    let ihl = h.header_len();
    if ihl < ipv4::field::HEADER_LEN {
        return Err(ExtractError::BadHeaderLength(Layer::Ipv4));
    }
    if frame.len() < l3 + ihl {
        return Err(ExtractError::Truncated(Layer::Ipv4));
    }
    let declared = usize::from(h.total_len());
    let total = match declared {
        // Total length 0: a GSO/TSO send captured before segmentation, e.g. BIG TCP above
        // 64 KiB (Linux 6.3+). The frame says how long it is, as tcpdump's `ip_print`
        // ("presumed TSO") and Wireshark take it.
        0 => frame.len() - l3,
        t if t < ihl => return Err(ExtractError::BadTotalLength),
        t => t,
    };
    let fragment = if h.frag_offset() != 0 {
        Fragment::Later
    } else if h.more_frags() {
        Fragment::First
    } else {
        Fragment::No
    };
    Ok(Net {
        v6: false,
        src: [u64::from(u32::from(h.src_addr())), 0],
        dst: [u64::from(u32::from(h.dst_addr())), 0],
        proto: h.protocol(),
        l3,
        l4: l3 + ihl,
        // The transport header must lie inside the datagram, whatever follows it in the frame
        // (Ethernet padding).
        end: (l3 + total).min(frame.len()),
        ip_len: declared,
        fragment,
    })
}

#[inline]
fn ipv6(frame: &[u8], l3: usize) -> Result<Net, ExtractError> {
    let version = byte(frame, l3, Layer::Ipv6)? >> 4;
    if version != 6 {
        return Err(ExtractError::BadVersion(version));
    }
    let fixed_len = ipv6::field::HEADER_LEN;
    let h = Ipv6Packet::new_unchecked(fixed(frame, l3, fixed_len, Layer::Ipv6)?);
    let payload_len = usize::from(h.payload_len());
    // Payload length 0 means a jumbogram (RFC 2675) whose length is in the hop-by-hop Jumbo
    // Payload option; without one (a GSO send captured before segmentation) the frame says.
    let (end, limit, ip_len) = if payload_len == 0 {
        match jumbo_payload(frame, l3, h.next_header())? {
            Some(jumbo) => {
                let end = l3 + fixed_len + jumbo;
                (end.min(frame.len()), end, fixed_len + jumbo)
            }
            None => (frame.len(), usize::MAX, 0),
        }
    } else {
        let end = l3 + fixed_len + payload_len;
        (end.min(frame.len()), end, fixed_len + payload_len)
    };
    let (next, off, fragment) = extension_headers(frame, h.next_header(), l3 + fixed_len, limit)?;
    // The addresses as the key's words, loaded as such (not through `Ipv6Addr`).
    let b = h.as_bytes();
    let (src, dst) = (ipv6::field::SRC_ADDR.start, ipv6::field::DST_ADDR.start);
    Ok(Net {
        v6: true,
        src: [be64_at(b, src), be64_at(b, src + 8)],
        dst: [be64_at(b, dst), be64_at(b, dst + 8)],
        proto: next,
        l3,
        l4: off,
        end,
        ip_len,
        fragment,
    })
}

/// Walks the IPv6 extension headers from `next` at `off` (the datagram ends at `limit`);
/// returns the upper-layer protocol, its offset, and where the packet sits in its fragment
/// train.
#[inline]
fn extension_headers(
    frame: &[u8],
    mut next: u8,
    mut off: usize,
    limit: usize,
) -> Result<(u8, usize, Fragment), ExtractError> {
    let mut fragment = Fragment::No;
    let mut walked = 0;
    loop {
        // The length rules are the wire layer's (`ExtHeaderKind::header_len`); the dispatch
        // is one match here, so that the fragment header's arm needs no second test.
        let length = |off: usize| byte(frame, off + ipv6::ext_field::LENGTH, Layer::Ipv6);
        let len = match next {
            ipproto::HOPOPT
            | ipproto::ROUTING
            | ipproto::DSTOPTS
            | ipproto::MOBILITY
            | ipproto::HIP
            | ipproto::SHIM6 => ExtHeaderKind::Units8.header_len(length(off)?),
            ipproto::FRAGMENT => {
                let fo = be16(frame, off + ipv6::frag_field::FRAG_OFF.start, Layer::Ipv6)?;
                if fo >> 3 != 0 {
                    fragment = Fragment::Later;
                } else if fo & 1 != 0 {
                    fragment = Fragment::First;
                }
                ipv6::frag_field::HEADER_LEN
            }
            ipproto::AH => ExtHeaderKind::Ah.header_len(length(off)?),
            // ESP (50), no next header (59), or an upper layer: the walk ends.
            _ => break,
        };
        walked += 1;
        if walked > MAX_EXT_HEADERS {
            return Err(ExtractError::TooManyExtensionHeaders);
        }
        next = byte(frame, off + ipv6::ext_field::NXT_HDR, Layer::Ipv6)?;
        if off + len > limit {
            return Err(ExtractError::BadTotalLength);
        }
        if frame.len() < off + len {
            return Err(ExtractError::Truncated(Layer::Ipv6));
        }
        off += len;
        if fragment == Fragment::Later {
            break;
        }
    }
    Ok((next, off, fragment))
}

/// The Jumbo Payload length (RFC 2675 §2: option type 0xC2, 4 bytes, the length after the
/// IPv6 header) if the extension header after the IPv6 header at `l3` is a hop-by-hop
/// header carrying one. Reads only that header's options.
#[inline]
fn jumbo_payload(frame: &[u8], l3: usize, next: u8) -> Result<Option<usize>, ExtractError> {
    if next != ipproto::HOPOPT {
        return Ok(None);
    }
    let hbh = Ipv6ExtHeader::new_checked(rest(frame, l3 + ipv6::field::HEADER_LEN))
        .map_err(|_| ExtractError::Truncated(Layer::Ipv6))?;
    for o in hbh.options() {
        let Ok(o) = o else { break };
        if o.kind == ipv6::opt::JUMBO && o.data.len() == 4 {
            return Ok(Some(read_be32(o.data, 0).expect("4 bytes") as usize));
        }
    }
    Ok(None)
}

/// Reads ports (ICMP: type and code), TCP flags and the payload offset from the transport
/// header at `l4` within `frame` (already cut at the datagram's end).
#[inline]
fn transport(frame: &[u8], proto: u8, l4: usize) -> Result<(u16, u16, u8, usize), ExtractError> {
    let t = Layer::Transport;
    // Views of the fixed part of each header, of known length (no bounds check in their
    // accessors); each protocol's errors come in the order its view's `check_len` gives them.
    let (sport, dport, flags, payload) = match proto {
        ipproto::TCP => {
            // Through the data offset: judged before the rest of the header is looked for.
            let p = TcpPacket::new_unchecked(fixed(frame, l4, tcp::field::FLAGS, t)?);
            let doff = p.header_len();
            if doff < tcp::field::HEADER_LEN {
                return Err(ExtractError::BadHeaderLength(t));
            }
            let flags = byte(frame, l4 + tcp::field::FLAGS, t)?;
            (p.src_port(), p.dst_port(), flags, l4 + doff)
        }
        ipproto::UDP | ipproto::UDPLITE => {
            let p = UdpPacket::new_unchecked(fixed(frame, l4, udp::field::HEADER_LEN, t)?);
            (p.src_port(), p.dst_port(), 0, l4 + udp::field::HEADER_LEN)
        }
        ipproto::SCTP => {
            let p = SctpPacket::new_unchecked(fixed(frame, l4, sctp::field::HEADER_LEN, t)?);
            (p.src_port(), p.dst_port(), 0, l4 + sctp::field::HEADER_LEN)
        }
        ipproto::DCCP => {
            let p = DccpPacket::new_checked(rest(frame, l4)).map_err(wire_error(t))?;
            (p.src_port(), p.dst_port(), 0, l4 + p.header_len())
        }
        ipproto::ICMP | ipproto::ICMPV6 => {
            let p = IcmpPacket::new_unchecked(fixed(frame, l4, icmp::field::HEADER_LEN, t)?);
            let (ty, code) = (p.msg_type(), p.msg_code());
            (
                u16::from(ty),
                u16::from(code),
                0,
                l4 + icmp::field::HEADER_LEN,
            )
        }
        _ => (0, 0, 0, l4),
    };
    if frame.len() < payload {
        return Err(ExtractError::Truncated(t));
    }
    Ok((sport, dport, flags, payload))
}

#[cfg(test)]
mod fast_path_test;
#[cfg(test)]
mod legacy_test;
