//! What extraction answers: the flow key and header offsets it found ([`Extracted`]), or
//! why it found none ([`ExtractError`], naming the [`Layer`]), and the limits it walks to.

use crate::key::FlowKey;

/// Why a frame yielded no flow key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExtractError {
    /// The frame ends inside the named header.
    Truncated(Layer),
    /// The IP version nibble does not match the framing.
    BadVersion(u8),
    /// IPv4 IHL below 5, or a TCP/DCCP data offset below the minimum.
    BadHeaderLength(Layer),
    /// IPv4 total length smaller than its header, or an IPv6 payload length shorter than its
    /// extension headers.
    BadTotalLength,
    /// More IPv6 extension headers than [`MAX_EXT_HEADERS`].
    TooManyExtensionHeaders,
    /// More VLAN tags than [`MAX_VLAN_TAGS`].
    TooManyVlanTags,
    /// Not IPv4 or IPv6 (ARP, LLDP, ...): the EtherType or address family found.
    NotIp(u32),
}

impl std::fmt::Display for ExtractError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExtractError::Truncated(l) => write!(f, "frame truncated in the {l:?} header"),
            ExtractError::BadVersion(v) => write!(f, "IP version {v} where 4 or 6 was expected"),
            ExtractError::BadHeaderLength(l) => write!(f, "bad {l:?} header length"),
            ExtractError::BadTotalLength => {
                write!(f, "IP total/payload length smaller than the headers")
            }
            ExtractError::TooManyExtensionHeaders => {
                write!(f, "more than {MAX_EXT_HEADERS} IPv6 extension headers")
            }
            ExtractError::TooManyVlanTags => write!(f, "more than {MAX_VLAN_TAGS} VLAN tags"),
            ExtractError::NotIp(t) => write!(f, "not an IP packet (type 0x{t:04x})"),
        }
    }
}

impl std::error::Error for ExtractError {}

/// Which header an error is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
