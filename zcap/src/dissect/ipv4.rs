//! IPv4 under `-v`: the header's fields, its options and a bad header checksum.

use std::fmt::Write as _;

use zcrx_flowcache::wire::Ipv4Packet;

use super::field::{be16, checksum, ipproto_name, should_be, v4};
use super::layout::ipv4 as layout;
use super::num::dec;

/// `-v` for IPv4, appended to `s`: "(tos 0x0, ttl 64, id 1, offset 0, flags \[DF\], proto
/// UDP (17), length 33)" plus a bad header checksum note, then the line break and indent
/// tcpdump puts before the addresses. Nothing (and `false`) when the header is not whole.
pub fn ipv4_verbose(s: &mut String, d: &[u8], l3: usize, checksums: bool) -> bool {
    let Some(p) = d.get(l3..).and_then(|b| Ipv4Packet::new_checked(b).ok()) else {
        return false;
    };
    let (tos, ihl, total) = (p.dscp_ecn(), p.header_len(), p.total_len());
    let (id, off, ttl, proto) = (p.ident(), p.flags_frag(), p.ttl(), p.protocol());
    let _ = write!(s, "(tos 0x{tos:x}");
    match tos & 3 {
        1 => s.push_str(",ECT(1)"),
        2 => s.push_str(",ECT(0)"),
        3 => s.push_str(",CE"),
        _ => {}
    }
    if ttl >= 1 {
        s.push_str(", ttl ");
        dec(s, ttl);
    }
    s.push_str(", id ");
    dec(s, id);
    s.push_str(", offset ");
    dec(s, p.frag_offset());
    s.push_str(", flags [");
    let flags_at = s.len();
    if off & layout::MF != 0 {
        s.push('+');
    }
    if off & layout::DF != 0 {
        s.push_str("DF");
    }
    if off & layout::RESERVED != 0 {
        s.push_str("rsvd");
    }
    if s.len() == flags_at {
        s.push_str("none");
    }
    s.push_str("], proto ");
    s.push_str(ipproto_name(proto));
    s.push_str(" (");
    dec(s, proto);
    s.push_str("), length ");
    dec(s, total);
    if ihl > layout::HEADER_LEN {
        let _ = write!(
            s,
            ", options ({})",
            ipv4_options(p.as_bytes(), layout::HEADER_LEN, ihl - layout::HEADER_LEN)
        );
    }
    let sum = checksum(&[p.header()]);
    if sum != 0 && checksums {
        let field = p.checksum();
        let _ = write!(s, ", bad cksum {field:x} (->{:x})!", should_be(field, sum));
    }
    s.push_str(")\n    ");
    true
}

/// `-vv` note before an IPv4 UDP datagram's payload, as tcpdump's `udp_print` writes it:
/// "[no cksum] " for a zero field, else "[udp sum ok] " or "[bad udp cksum 0xA -> 0xB!] "
/// when the `len` bytes of the datagram (header included) were captured, else nothing.
pub fn udp4_sum_note(d: &[u8], l3: usize, l4: usize, len: usize) -> String {
    let Some(field) = be16(d, l4 + 6) else {
        return String::new();
    };
    if field == 0 {
        return "[no cksum] ".into();
    }
    let (Some(seg), Some(addrs)) = (d.get(l4..l4 + len), d.get(l3 + 12..l3 + 20)) else {
        return String::new();
    };
    let len16 = (len as u16).to_be_bytes();
    match checksum(&[addrs, &[0, 17], &len16, seg]) {
        0 => "[udp sum ok] ".into(),
        sum => format!(
            "[bad udp cksum 0x{field:04x} -> 0x{:04x}!] ",
            should_be(field, sum)
        ),
    }
}

/// The IPv4 options of `length` bytes at `at` as tcpdump 4.99's `-v` lists them
/// (print-ip.c ip_optprint): names joined by commas, with the addresses of a recorded or
/// source route, the entries of a timestamp option, a router alert's value, and tcpdump's
/// notes for bad lengths and pointers. Bytes the capture cut off end the list with
/// " [truncated-option]".
fn ipv4_options(d: &[u8], mut at: usize, mut left: usize) -> String {
    const TRUNCATED: &str = " [truncated-option]";
    let mut s = String::new();
    while left > 0 {
        if !s.is_empty() {
            s.push(',');
        }
        let Some(&code) = d.get(at) else {
            s.push_str(TRUNCATED);
            break;
        };
        match code {
            0 => s.push_str("EOL"),
            1 => s.push_str("NOP"),
            7 => s.push_str("RR"),
            68 => s.push_str("timestamp"),
            82 => s.push_str("traceroute"),
            130 => s.push_str("security"),
            131 => s.push_str("LSRR"),
            137 => s.push_str("SSRR"),
            148 => s.push_str("RA"),
            c => {
                let _ = write!(s, "unknown {c}");
            }
        }
        let len = match code {
            0 | 1 => 1,
            _ => match d.get(at + 1) {
                None => {
                    s.push_str(TRUNCATED);
                    break;
                }
                Some(&l) if l < 2 => {
                    let _ = write!(s, " [bad length {l}]");
                    break;
                }
                Some(&l) => usize::from(l),
            },
        };
        if len > left {
            let _ = write!(s, " [bad length {len}]");
            break;
        }
        if d.len() < at + len {
            s.push_str(TRUNCATED);
            break;
        }
        let ok = match code {
            0 => break,
            7 | 131 | 137 => ipv4_route(&mut s, d, at, len),
            68 => ipv4_timestamps(&mut s, d, at, len),
            148 if len < 4 => {
                let _ = write!(s, " [bad length {len}]");
                true
            }
            148 => {
                let v = be16(d, at + 2).unwrap_or(0);
                if v != 0 {
                    let _ = write!(s, " value {v}");
                }
                true
            }
            _ => true,
        };
        if !ok {
            s.push_str(TRUNCATED);
            break;
        }
        at += len;
        left -= len;
    }
    s
}

/// A recorded or source route (RR, LSRR, SSRR) of `len` bytes at `at`: its addresses, a
/// comma after each one the pointer has passed. False when the capture ends inside it.
fn ipv4_route(s: &mut String, d: &[u8], at: usize, len: usize) -> bool {
    if len < 3 {
        let _ = write!(s, " [bad length {len}]");
        return true;
    }
    if (len + 1) & 3 != 0 {
        let _ = write!(s, " [bad length {len}]");
    }
    let raw = d[at + 2];
    // As tcpdump's unsigned arithmetic: a pointer of 0 wraps to a huge value.
    let ptr = usize::from(raw).wrapping_sub(1);
    if ptr < 3 || (ptr.wrapping_add(1)) & 3 != 0 || ptr > len + 1 {
        let _ = write!(s, " [bad ptr {raw}]");
    }
    let mut i = 3;
    while i < len {
        let Some(a) = v4(d, at + i) else {
            return false;
        };
        let _ = write!(s, " {a}");
        if ptr > i {
            s.push(',');
        }
        i += 4;
    }
    true
}

/// A timestamp option of `len` bytes at `at`: " TS{TSONLY 1@ 2@ ^ }" and the like, as
/// tcpdump's ip_printts. False when the capture ends inside it.
fn ipv4_timestamps(s: &mut String, d: &[u8], at: usize, len: usize) -> bool {
    if len < 4 {
        let _ = write!(s, "[bad length {len}]");
        return true;
    }
    s.push_str(" TS{");
    let (raw, flags) = (d[at + 2], d[at + 3]);
    let hop = if flags & 0xf != 0 { 8 } else { 4 };
    if (len - 4) & (hop - 1) != 0 {
        let _ = write!(s, "[bad length {len}]");
    }
    let ptr = usize::from(raw).wrapping_sub(1);
    if ptr < 4 || ptr.wrapping_sub(4) & (hop - 1) != 0 || ptr > len + 1 {
        let _ = write!(s, "[bad ptr {raw}]");
    }
    let mut i = 0;
    match flags & 0xf {
        0 => s.push_str("TSONLY"),
        1 => s.push_str("TS+ADDR"),
        3 => s.push_str("PRESPEC"),
        t => {
            let _ = write!(s, "[bad ts type {t}]");
        }
    }
    if matches!(flags & 0xf, 0 | 1 | 3) {
        i = 4;
        while i < len {
            let mark = if ptr == i { " ^ " } else { " " };
            let (Some(stamp), addr) = (
                d.get(at + i + hop - 4..at + i + hop),
                (hop == 8).then(|| v4(d, at + i)),
            ) else {
                return false;
            };
            let stamp = u32::from_be_bytes(stamp.try_into().expect("4 bytes"));
            let addr = match addr {
                Some(Some(a)) => a.to_string(),
                Some(None) => return false,
                None => String::new(),
            };
            let _ = write!(s, "{mark}{stamp}@{addr}");
            i += hop;
        }
    }
    if ptr == i {
        s.push_str(" ^ ");
    }
    if flags >> 4 != 0 {
        let _ = write!(s, " [{} hops not recorded]}} ", flags >> 4);
    } else {
        s.push('}');
    }
    true
}
