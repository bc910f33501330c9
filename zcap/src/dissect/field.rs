//! What every layer's printer reads with: big-endian fields, addresses, IP protocol names and
//! the Internet checksum (RFC 1071). Header layouts (offsets, views) are
//! `zcrx_flowcache::wire`'s, the ones extraction reads.

use std::net::{Ipv4Addr, Ipv6Addr};

/// The big-endian 16-bit field at `at`, if the capture holds it (for what a cut-off header
/// still shows; whole headers are read through `zcrx_flowcache::wire`'s views).
pub(super) fn be16(d: &[u8], at: usize) -> Option<u16> {
    zcrx_flowcache::wire::read_be16(d, at)
}

/// The IPv4 address at `at`, if the capture holds it.
pub(super) fn v4(d: &[u8], at: usize) -> Option<Ipv4Addr> {
    let b: [u8; 4] = d.get(at..at + 4)?.try_into().ok()?;
    Some(Ipv4Addr::from(b))
}

/// The IPv6 address at `at`, if the capture holds it.
pub(super) fn v6(d: &[u8], at: usize) -> Option<Ipv6Addr> {
    let b: [u8; 16] = d.get(at..at + 16)?.try_into().ok()?;
    Some(Ipv6Addr::from(b))
}

/// The name tcpdump gives an IP protocol number in `-v` headers.
pub(super) fn ipproto_name(p: u8) -> &'static str {
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
pub(super) fn checksum(parts: &[&[u8]]) -> u16 {
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
/// with it (tcpdump's in_cksum_shouldbe: their one's complement sum, so a field that
/// should be 0xffff is not written 0x0000).
pub(super) fn should_be(field: u16, sum: u16) -> u16 {
    let mut s = u32::from(field) + u32::from(sum);
    s = (s & 0xffff) + (s >> 16);
    s = (s & 0xffff) + (s >> 16);
    s as u16
}

/// (year, month, day) of a day count since 1970-01-01 (Howard Hinnant's algorithm).
pub(crate) fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
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
        // The sum of field and sum is 0xffff: tcpdump shows 0xffff, not 0x0000.
        assert_eq!(should_be(0x9d24, 0x62db), 0xffff);
        // Odd lengths pad with a zero byte; split parts sum as one.
        assert_eq!(checksum(&[&[1, 2, 3]]), checksum(&[&[1], &[2, 3]]));
    }
}
