//! The parts of tcpdump 4.99's output zcap reproduces beyond the basic `-n -q` line, one
//! file per layer: the link-level header (`-e`) and ARP ([`link`]), the IP header details and
//! checksum notes of `-v` ([`ipv4`], [`ipv6`] with its extension headers), ICMP and ICMPv6
//! summaries ([`icmp`]), and the payload dumps of `-x`, `-xx`, `-X`, `-XX` and `-A`
//! ([`dump`]). Written from tcpdump's documented output formats and checked line by line
//! against tcpdump in the tests. This module holds what the layers share: reading fields,
//! protocol names, the Internet checksum.

mod dump;
mod icmp;
mod ipv4;
mod ipv6;
mod link;

pub use dump::{ascii, hex};
pub use icmp::{icmp, icmp6};
pub use ipv4::ipv4_verbose;
pub use ipv6::{ipv6_ext, ipv6_verbose, udp6_sum_note};
pub use link::{arp, ether_prefix, link_header_len};

use std::net::{Ipv4Addr, Ipv6Addr};

fn be16(d: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*d.get(at)?, *d.get(at + 1)?]))
}

fn v4(d: &[u8], at: usize) -> Option<Ipv4Addr> {
    let b: [u8; 4] = d.get(at..at + 4)?.try_into().ok()?;
    Some(Ipv4Addr::from(b))
}

fn v6(d: &[u8], at: usize) -> Option<Ipv6Addr> {
    let b: [u8; 16] = d.get(at..at + 16)?.try_into().ok()?;
    Some(Ipv6Addr::from(b))
}

/// The name tcpdump gives an IP protocol number in `-v` headers.
fn ipproto_name(p: u8) -> &'static str {
    // tcpdump 4.99's ipproto_values, entry for entry (so 60, destination options, is
    // "unknown" there too).
    match p {
        0 => "Options",
        1 => "ICMP",
        2 => "IGMP",
        4 => "IPIP",
        6 => "TCP",
        8 => "EGP",
        9 => "IGRP",
        17 => "UDP",
        33 => "DCCP",
        41 => "IPv6",
        43 => "Routing",
        44 => "Fragment",
        46 => "RSVP",
        47 => "GRE",
        50 => "ESP",
        51 => "AH",
        55 => "Mobile IP",
        58 => "ICMPv6",
        62 => "Mobile IP (old)",
        88 => "EIGRP",
        89 => "OSPF",
        103 => "PIM",
        108 => "Compressed IP",
        112 => "VRRP",
        113 => "PGM",
        132 => "SCTP",
        135 => "Mobility",
        143 => "Ethernet",
        _ => "unknown",
    }
}

/// The one's complement sum of `parts`, folded (0 when a packet with its checksum in place
/// is intact).
fn checksum(parts: &[&[u8]]) -> u16 {
    let mut sum: u32 = 0;
    let mut odd: Option<u8> = None;
    for part in parts {
        for &b in *part {
            match odd.take() {
                Some(hi) => sum += u32::from(u16::from_be_bytes([hi, b])),
                None => odd = Some(b),
            }
        }
    }
    if let Some(hi) = odd {
        sum += u32::from(hi) << 8;
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// What the checksum field should have held, given the field and the sum over the packet
/// with it (tcpdump's in_cksum_shouldbe).
fn should_be(field: u16, sum: u16) -> u16 {
    let mut s = u32::from(!field) + u32::from(!sum);
    s = (s & 0xffff) + (s >> 16);
    s = (s & 0xffff) + (s >> 16);
    !(s as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksums_and_corrections() {
        // A valid IPv4 header sums to 0.
        let hdr = [
            0x45, 0, 0, 0x2e, 0x12, 0x34, 0x40, 0, 0x40, 0x11, 0x9c, 0x63, 198, 18, 0, 1, 198, 18,
            0, 2,
        ];
        assert_eq!(checksum(&[&hdr]), 0);
        let mut bad = hdr;
        bad[10] = 0;
        bad[11] = 0;
        let sum = checksum(&[&bad]);
        assert_eq!(should_be(0, sum), 0x9c63);
        // Odd lengths pad with a zero byte; split parts sum as one.
        assert_eq!(checksum(&[&[1, 2, 3]]), checksum(&[&[1], &[2, 3]]));
    }
}
