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

mod base;

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

pub use base::{read_be16, read_be32, Field, WireError};
