//! What extraction answers: the flow key and header offsets it found ([`Extracted`]), or
//! why it found none ([`ExtractError`], naming the [`Layer`]), and the limits it walks to.

use crate::key::FlowKey;

/// Why a frame yielded no flow key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ExtractError {
    /// The frame ends inside the named header.
    #[error("frame truncated in the {0} header")]
    Truncated(Layer),
    /// The IP version nibble does not match the framing.
    #[error("IP version {0} where 4 or 6 was expected")]
    BadVersion(u8),
    /// IPv4 IHL below 5, or a TCP/DCCP data offset below the minimum.
    #[error("bad {0} header length")]
    BadHeaderLength(Layer),
    /// IPv4 total length smaller than its header, or an IPv6 payload length shorter than its
    /// extension headers.
    #[error("IP total/payload length smaller than the headers")]
    BadTotalLength,
    /// More IPv6 extension headers than [`MAX_EXT_HEADERS`].
    #[error("more than {MAX_EXT_HEADERS} IPv6 extension headers")]
    TooManyExtensionHeaders,
    /// More VLAN tags than [`MAX_VLAN_TAGS`].
    #[error("more than {MAX_VLAN_TAGS} VLAN tags")]
    TooManyVlanTags,
    /// Not IPv4 or IPv6 (ARP, LLDP, ...): the EtherType or address family found.
    #[error("not an IP packet (type 0x{0:04x})")]
    NotIp(u32),
}

/// Which header an error is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Layer {
    /// Ethernet, VLAN, SLL or loopback framing.
    Link,
    /// IPv4 header.
    Ipv4,
    /// IPv6 header or an extension header.
    Ipv6,
    /// TCP, UDP, UDP-Lite, SCTP, DCCP, ICMP or ICMPv6 header.
    Transport,
}

impl std::fmt::Display for Layer {
    /// As the messages name it: "link", "IPv4", "IPv6", "transport".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Layer::Link => "link",
            Layer::Ipv4 => "IPv4",
            Layer::Ipv6 => "IPv6",
            Layer::Transport => "transport",
        })
    }
}

/// The most VLAN tags walked (QinQ stacks deeper than this are refused).
pub const MAX_VLAN_TAGS: usize = 4;
/// The most IPv6 extension headers walked (RFC 8200 §4.1 recommends each at most once or
/// twice; eight covers every legal chain).
pub const MAX_EXT_HEADERS: usize = 8;

/// Where a packet sits in the fragment train.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fragment {
    /// Not a fragment.
    No,
    /// First fragment (offset 0, more fragments): ports were read.
    First,
    /// A later fragment: no transport header, no ports.
    Later,
}

/// What [`extract`](fn@super::extract) found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extracted {
    /// The flow key (directional: as the packet travelled).
    pub key: FlowKey,
    /// TCP flags (FIN 0x01 ... CWR 0x80), 0 for other protocols.
    pub tcp_flags: u8,
    /// Fragment position.
    pub fragment: Fragment,
    /// Offset of the IP header in the frame.
    pub l3_offset: u32,
    /// Offset of the transport header (or where it would be).
    pub l4_offset: u32,
    /// Offset of the first payload byte after the transport header.
    pub payload_offset: u32,
    /// The datagram's length as its IP header declares it (IPv4 total length, IPv6 40 +
    /// payload length or jumbo length), 0 when the header leaves it to the frame (a GSO send
    /// captured before segmentation). See [`Extracted::ip_octets`].
    pub ip_len: u32,
}

impl Extracted {
    /// The flow table's input for this packet: its key and TCP flags, `len` (what the table
    /// counts as bytes, e.g. [`Extracted::ip_octets`]) and its timestamp in ns.
    #[inline(always)]
    pub fn track_input(&self, len: u32, ts_ns: u64) -> crate::TrackInput {
        crate::TrackInput {
            key: self.key,
            len,
            ts_ns,
            tcp_flags: self.tcp_flags,
        }
    }

    /// The packet's IP octets (header and payload, not the link layer, as IPFIX's
    /// octetDeltaCount counts them, RFC 7012), given the frame's length on the wire: the
    /// declared length, or what the frame holds past the link header when nothing is
    /// declared. Ethernet padding and trailers are not counted.
    #[inline]
    pub fn ip_octets(&self, wire_len: u32) -> u32 {
        if self.ip_len != 0 {
            self.ip_len
        } else {
            wire_len.saturating_sub(self.l3_offset)
        }
    }
}
