//! The parts of tcpdump 4.99's output zcap reproduces beyond the basic `-n -q` line: ICMP and
//! ICMPv6 summaries, the link-level header (`-e`), the IP header details and checksum notes
//! of `-v`, and the payload dumps of `-x`, `-xx`, `-X`, `-XX` and `-A`. Written from
//! tcpdump's documented output formats and checked line by line against tcpdump in the tests.

use std::fmt::Write as _;
use std::net::{Ipv4Addr, Ipv6Addr};

use zcrx_flowcache::LinkType;

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

/// The name of interface `index` in the calling thread's network namespace (as tcpdump
/// shows the interface of a LINUX_SLL2 record), "?" when there is none.
pub(crate) fn interface_name(index: u32) -> String {
    nix::net::if_::if_indextoname(index)
        .map_or_else(|_| "?".into(), |name| name.to_string_lossy().into_owned())
}

/// Bytes of link-layer header before the network layer, as tcpdump's link printers count
/// them (Ethernet: 14 and 4 per VLAN tag).
pub fn link_header_len(link: LinkType, data: &[u8]) -> usize {
    match link {
        LinkType::Ethernet => {
            let mut off = 12;
            while let Some(t) = be16(data, off) {
                if matches!(t, 0x8100 | 0x88a8 | 0x9100) {
                    off += 4;
                } else {
                    break;
                }
            }
            (off + 2).min(data.len())
        }
        LinkType::LinuxSll => 16,
        LinkType::LinuxSll2 => 20,
        LinkType::Null | LinkType::Loop => 4,
        _ => 0,
    }
    .min(data.len())
}

/// `-x`/`-X` (and, with the link header, `-xx`/`-XX`): 16 bytes per line, in 2-byte groups,
/// each line "\n\t0xOFFS: " — with `ascii`, the group column padded to 40 characters, two
/// spaces and the bytes as text ('.' for anything but a visible ASCII character).
pub fn hex(out: &mut String, data: &[u8], ascii: bool) {
    for (line, chunk) in data.chunks(16).enumerate() {
        let mut groups = String::with_capacity(40);
        for pair in chunk.chunks(2) {
            match pair {
                [a, b] => {
                    let _ = write!(groups, " {a:02x}{b:02x}");
                }
                [a] => {
                    let _ = write!(groups, " {a:02x}");
                }
                _ => {}
            }
        }
        let _ = write!(out, "\n\t0x{:04x}: ", line * 16);
        if ascii {
            let text: String = chunk
                .iter()
                .map(|&c| if c.is_ascii_graphic() { c as char } else { '.' })
                .collect();
            let _ = write!(out, "{groups:<40}  {text}");
        } else {
            out.push_str(&groups);
        }
    }
}

/// `-A`: a newline, then the bytes as text: visible characters, spaces, tabs and newlines
/// as they are, '.' for the rest; a carriage return only in the middle of a line.
pub fn ascii(out: &mut String, data: &[u8]) {
    out.push('\n');
    for (i, &c) in data.iter().enumerate() {
        if c == b'\r' {
            let left = data.len() - i - 1;
            if left > 1 && data[i + 1] != b'\n' {
                out.push('.');
            }
        } else if c.is_ascii_graphic() || matches!(c, b'\t' | b' ' | b'\n') {
            out.push(c as char);
        } else {
            out.push('.');
        }
    }
}

/// `-e` for Ethernet: "SRC > DST, " then each tag ("802.1Q, length N: vlan V, p P, ") and
/// the ethertype's name; returns the prefix and whether the network layer follows with a
/// comma (after tags) rather than with "length N: ".
pub fn ether_prefix(data: &[u8], wire_len: u32) -> Option<String> {
    let mac = |at: usize| -> Option<String> {
        let m = data.get(at..at + 6)?;
        Some(
            m.iter()
                .map(|b| format!("{b:02x}"))
                .collect::<Vec<_>>()
                .join(":"),
        )
    };
    let mut s = format!("{} > {}, ", mac(6)?, mac(0)?);
    let mut off = 12;
    let mut first = true;
    loop {
        let t = be16(data, off)?;
        let name = ethertype_name(t);
        if first {
            let _ = write!(s, "{name}, length {wire_len}: ");
            first = false;
        } else {
            let _ = write!(s, "{name}, ");
        }
        if matches!(t, 0x8100 | 0x88a8 | 0x9100) {
            let tci = be16(data, off + 2)?;
            let _ = write!(s, "vlan {}, p {}, ", tci & 0xfff, tci >> 13);
            if tci & 0x1000 != 0 {
                s.truncate(s.len() - 2);
                s.push_str(", DEI, ");
            }
            off += 4;
        } else {
            return Some(s);
        }
    }
}

fn ethertype_name(t: u16) -> String {
    match t {
        0x0800 => "IPv4".into(),
        0x86dd => "IPv6".into(),
        0x0806 => "ARP".into(),
        0x8100 => "802.1Q".into(),
        0x88a8 => "802.1Q-QinQ".into(),
        0x9100 => "802.1Q-9100".into(),
        0x8035 => "Reverse ARP".into(),
        0x88cc => "LLDP".into(),
        0x8847 => "MPLS unicast".into(),
        0x8848 => "MPLS multicast".into(),
        t => format!("ethertype Unknown (0x{t:04x})"),
    }
}

/// An Ethernet/IPv4 ARP summary as `tcpdump -n` prints it ("ARP, Request who-has B tell A,
/// length 28"), `len` being the bytes after the link header on the wire (padding
/// included; with `verbose` the address types first); `None` for other hardware or
/// protocol types.
pub fn arp(d: &[u8], len: u32, verbose: bool) -> Option<String> {
    if be16(d, 0)? != 1 || be16(d, 2)? != 0x0800 || d.get(4..6)? != [6, 4] {
        return None;
    }
    let op = be16(d, 6)?;
    let sha = d.get(8..14)?;
    let spa = v4(d, 14)?;
    let tpa = v4(d, 24)?;
    let mac = sha
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":");
    let v = if verbose {
        "Ethernet (len 6), IPv4 (len 4), "
    } else {
        ""
    };
    Some(
        v.to_string()
            + &match op {
                1 => format!("Request who-has {tpa} tell {spa}, length {len}"),
                2 => format!("Reply {spa} is-at {mac}, length {len}"),
                o => format!("arp-#{o} for proto type 0x0800, length {len}"),
            },
    )
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

/// IPv6 extension headers as tcpdump 4.99 prints them between the addresses and the
/// transport ("HBH ", "DSTOPT ", "frag (0|13) "; with `verbose` the options and the
/// fragment id), for chains of hop-by-hop, destination options and fragment headers only.
pub struct Ipv6Ext {
    /// What tcpdump prints for the headers.
    pub text: String,
    /// A fragment header was seen (tcpdump then checks no transport checksum).
    pub fragmented: bool,
    /// A later fragment (non-zero offset): tcpdump prints nothing after the header.
    pub stop: bool,
}

/// See [`Ipv6Ext`]. `None` when the packet has no extension header or one this does not
/// print (routing, mobility, AH, ...): the caller prints the line without them.
pub fn ipv6_ext(d: &[u8], l3: usize, verbose: bool) -> Option<Ipv6Ext> {
    let plen = usize::from(be16(d, l3 + 4)?);
    let mut nh = *d.get(l3 + 6)?;
    // A zero payload length means a jumbogram (or garbage): tcpdump's own story.
    if !matches!(nh, 0 | 44 | 60) || plen == 0 {
        return None;
    }
    let mut at = l3 + 40;
    let mut ext = Ipv6Ext {
        text: String::new(),
        fragmented: false,
        stop: false,
    };
    // Refuse first the chains tcpdump would print differently (a header it does not
    // walk here, or one the capture cut off).
    let mut probe = (nh, at);
    while matches!(probe.0, 0 | 44 | 60) {
        let len = match probe.0 {
            44 => 8,
            _ => (usize::from(*d.get(probe.1 + 1)?) + 1) * 8,
        };
        let h = d.get(probe.1..probe.1 + len)?;
        if probe.0 == 0 && probe.1 != l3 + 40 {
            return None;
        }
        // Jumbo payload and home address options: printed their own way, not here.
        if probe.0 != 44 && has_option(&h[2..], &[0xc2, 0xc9]) {
            return None;
        }
        probe = (d[probe.1], probe.1 + len);
    }
    if matches!(probe.0, 43 | 51 | 135 | 62 | 50) {
        return None;
    }
    while matches!(nh, 0 | 44 | 60) {
        match nh {
            44 => {
                let off = be16(d, at + 2)? & 0xfff8;
                let len = (40 + plen).saturating_sub(at - l3 + 8);
                if verbose {
                    let id = u32::from_be_bytes(d.get(at + 4..at + 8)?.try_into().ok()?);
                    let _ = write!(ext.text, "frag (0x{id:08x}:{off}|{len})");
                } else {
                    let _ = write!(ext.text, "frag ({off}|{len})");
                }
                ext.fragmented = true;
                if off != 0 {
                    ext.stop = true;
                    return Some(ext);
                }
                ext.text.push(' ');
                nh = d[at];
                at += 8;
            }
            _ => {
                let len = (usize::from(d[at + 1]) + 1) * 8;
                ext.text.push_str(if nh == 0 { "HBH " } else { "DSTOPT " });
                if (nh == 0 || verbose)
                    && ipv6_options(&mut ext.text, &d[at + 2..at + len], verbose).is_none()
                {
                    // tcpdump's truncation mark, and nothing after it.
                    ext.text
                        .push_str(if nh == 0 { " [|hbhopt]" } else { " [|dstopt]" });
                    ext.stop = true;
                    return Some(ext);
                }
                nh = d[at];
                at += len;
            }
        }
    }
    Some(ext)
}

/// Whether the options `o` of a hop-by-hop or destination options header hold a type of
/// `types` (walked as far as their lengths allow).
fn has_option(o: &[u8], types: &[u8]) -> bool {
    let mut i = 0;
    while let Some(&t) = o.get(i) {
        if types.contains(&t) {
            return true;
        }
        i += if t == 0 {
            1
        } else {
            o.get(i + 1).map_or(o.len(), |&l| usize::from(l) + 2)
        };
    }
    false
}

/// The options of a hop-by-hop or destination options header (tcpdump's ip6_opt_process):
/// with `verbose` each is named; `None` where tcpdump stops the line (an option longer than
/// the header, a bad router alert).
fn ipv6_options(s: &mut String, o: &[u8], verbose: bool) -> Option<()> {
    let mut i = 0;
    while i < o.len() {
        let t = o[i];
        let len = if t == 0 {
            1
        } else {
            usize::from(*o.get(i + 1)?) + 2
        };
        if i + len > o.len() {
            return None;
        }
        match t {
            0 if verbose => s.push_str("(pad1)"),
            0 => {}
            1 if verbose => s.push_str("(padn)"),
            1 => {}
            5 => {
                if o.len() - i < 4 {
                    s.push_str("(rtalert: trunc)");
                    return None;
                }
                if o[i + 1] != 2 {
                    let _ = write!(s, "(rtalert: invalid len {})", o[i + 1]);
                    return None;
                }
                if verbose {
                    let _ = write!(s, "(rtalert: 0x{:04x}) ", be16(o, i + 2)?);
                }
            }
            _ if verbose => {
                let _ = write!(s, "(opt_type 0x{t:02x}: len={})", o[i + 1]);
            }
            _ => {}
        }
        i += len;
    }
    if verbose {
        s.push(' ');
    }
    Some(())
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

/// `-v` for IPv4: "(tos 0x0, ttl 64, id 1, offset 0, flags \[DF\], proto UDP (17), length 33)"
/// plus a bad header checksum note, then the line break and indent tcpdump puts before the
/// addresses.
pub fn ipv4_verbose(d: &[u8], l3: usize) -> Option<String> {
    let tos = *d.get(l3 + 1)?;
    let ihl = usize::from(d.get(l3)? & 0x0f) * 4;
    let total = be16(d, l3 + 2)?;
    let id = be16(d, l3 + 4)?;
    let off = be16(d, l3 + 6)?;
    let ttl = *d.get(l3 + 8)?;
    let proto = *d.get(l3 + 9)?;
    let mut s = format!("(tos 0x{tos:x}");
    match tos & 3 {
        1 => s.push_str(",ECT(1)"),
        2 => s.push_str(",ECT(0)"),
        3 => s.push_str(",CE"),
        _ => {}
    }
    if ttl >= 1 {
        let _ = write!(s, ", ttl {ttl}");
    }
    let mut flags = String::new();
    if off & 0x2000 != 0 {
        flags.push('+');
    }
    if off & 0x4000 != 0 {
        flags.push_str("DF");
    }
    if off & 0x8000 != 0 {
        flags.push_str("rsvd");
    }
    if flags.is_empty() {
        flags.push_str("none");
    }
    let _ = write!(
        s,
        ", id {id}, offset {}, flags [{flags}], proto {} ({proto}), length {total}",
        (off & 0x1fff) * 8,
        ipproto_name(proto)
    );
    if ihl > 20 {
        let _ = write!(s, ", options ({})", ipv4_options(d, l3 + 20, ihl - 20));
    }
    if let Some(hdr) = d.get(l3..l3 + ihl) {
        let sum = checksum(&[hdr]);
        if sum != 0 {
            let field = be16(d, l3 + 10)?;
            let _ = write!(s, ", bad cksum {field:x} (->{:x})!", should_be(field, sum));
        }
    }
    s.push_str(")\n    ");
    Some(s)
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

/// `-v` for IPv6: "(hlim 64, next-header UDP (17) payload length: 11) " (with class and
/// flow label first when set).
pub fn ipv6_verbose(d: &[u8], l3: usize) -> Option<String> {
    let flow = u32::from_be_bytes(d.get(l3..l3 + 4)?.try_into().ok()?);
    let plen = be16(d, l3 + 4)?;
    let nh = *d.get(l3 + 6)?;
    let hlim = *d.get(l3 + 7)?;
    let mut s = String::from("(");
    if flow & 0x0ff0_0000 != 0 {
        let _ = write!(s, "class 0x{:02x}, ", (flow & 0x0ff0_0000) >> 20);
    }
    if flow & 0x000f_ffff != 0 {
        let _ = write!(s, "flowlabel 0x{:05x}, ", flow & 0x000f_ffff);
    }
    let _ = write!(
        s,
        "hlim {hlim}, next-header {} ({nh}) payload length: {plen}) ",
        ipproto_name(nh)
    );
    Some(s)
}

/// The transport checksum over the IPv6 pseudo-header: 0 when intact.
fn v6_sum(d: &[u8], l3: usize, l4: usize, len: usize, proto: u8) -> Option<u16> {
    let seg = d.get(l4..l4 + len)?;
    let len32 = (len as u32).to_be_bytes();
    Some(checksum(&[
        d.get(l3 + 8..l3 + 40)?,
        &len32,
        &[0, 0, 0, proto],
        seg,
    ]))
}

/// `-v` note before an IPv6 UDP summary: "[udp sum ok] " or "[bad udp cksum 0xA -> 0xB!] ".
pub fn udp6_sum_note(d: &[u8], l3: usize, l4: usize, len: usize) -> String {
    match (v6_sum(d, l3, l4, len, 17), be16(d, l4 + 6)) {
        (Some(0), _) => "[udp sum ok] ".into(),
        (Some(sum), Some(field)) => {
            format!(
                "[bad udp cksum 0x{field:04x} -> 0x{:04x}!] ",
                should_be(field, sum)
            )
        }
        _ => String::new(),
    }
}

/// An ICMP summary as `tcpdump -q` prints it after the addresses ("ICMP echo request, id 9,
/// seq 1, length 16"), `len` being the ICMP message's length; with `verbose`, a wrong
/// checksum is noted.
pub fn icmp(d: &[u8], l4: usize, len: usize, verbose: bool) -> String {
    let (Some(&t), Some(&code)) = (d.get(l4), d.get(l4 + 1)) else {
        return format!("ICMP, length {len}");
    };
    let inner_dst = || v4(d, l4 + 8 + 16).map_or_else(String::new, |a| a.to_string());
    let what = match t {
        0 | 8 => format!(
            "echo {}, id {}, seq {}",
            if t == 8 { "request" } else { "reply" },
            be16(d, l4 + 4).unwrap_or(0),
            be16(d, l4 + 6).unwrap_or(0)
        ),
        3 => match code {
            0 => format!("net {} unreachable", inner_dst()),
            1 => format!("host {} unreachable", inner_dst()),
            2 => format!(
                "{} protocol {} unreachable",
                inner_dst(),
                d.get(l4 + 8 + 9).copied().unwrap_or(0)
            ),
            3 => {
                let ihl = usize::from(d.get(l4 + 8).copied().unwrap_or(0x45) & 0x0f) * 4;
                let proto = d.get(l4 + 8 + 9).copied().unwrap_or(0);
                let dport = be16(d, l4 + 8 + ihl + 2).unwrap_or(0);
                match proto {
                    6 => format!("{} tcp port {dport} unreachable", inner_dst()),
                    17 => format!("{} udp port {dport} unreachable", inner_dst()),
                    p => format!("{} protocol {p} port {dport} unreachable", inner_dst()),
                }
            }
            4 => match be16(d, l4 + 6).unwrap_or(0) {
                0 => format!("{} unreachable - need to frag", inner_dst()),
                mtu => format!("{} unreachable - need to frag (mtu {mtu})", inner_dst()),
            },
            c => format!("{} unreachable - code {c}", inner_dst()),
        },
        11 => match code {
            0 => "time exceeded in-transit".into(),
            1 => "ip reassembly time exceeded".into(),
            c => format!("time exceeded-#{c}"),
        },
        4 => "source quench".into(),
        10 => "router solicitation".into(),
        13 => "time stamp request".into(),
        14 => "time stamp reply".into(),
        15 => "information request".into(),
        16 => "information reply".into(),
        17 => "address mask request".into(),
        t => format!("type-#{t}"),
    };
    let mut s = format!("ICMP {what}, length {len}");
    if verbose {
        if let Some(msg) = d.get(l4..l4 + len) {
            let sum = checksum(&[msg]);
            if sum != 0 {
                let field = be16(d, l4 + 2).unwrap_or(0);
                let _ = write!(
                    s,
                    " (wrong icmp cksum {field:x} (->{:x})!)",
                    should_be(field, sum)
                );
            }
        }
    }
    s
}

/// An ICMPv6 summary as `tcpdump -q` prints it ("ICMP6, echo request, id 7, seq 1, length
/// 12"); with `verbose`, the checksum note comes first and the length only where tcpdump
/// then still prints it.
pub fn icmp6(d: &[u8], l3: usize, l4: usize, len: usize, verbose: bool) -> String {
    let (Some(&t), Some(&code)) = (d.get(l4), d.get(l4 + 1)) else {
        return format!("ICMP6, length {len}");
    };
    let mut s = String::new();
    if verbose {
        match (v6_sum(d, l3, l4, len, 58), be16(d, l4 + 2)) {
            (Some(0), _) => s.push_str("[icmp6 sum ok] "),
            (Some(sum), Some(field)) => {
                let _ = write!(
                    s,
                    "[bad icmp6 cksum 0x{field:04x} -> 0x{:04x}!] ",
                    should_be(field, sum)
                );
            }
            _ => {}
        }
    }
    let Some(name) = icmp6_type_name(t) else {
        let _ = write!(s, "ICMP6, unknown icmp6 type ({t}), length {len}");
        return s;
    };
    let _ = write!(s, "ICMP6, {name}");
    let nd = matches!(t, 133..=137);
    if verbose && nd {
        let _ = write!(s, ", length {len}");
    }
    match t {
        1 => icmp6_unreachable(&mut s, d, l4 + 8, code),
        128 | 129 => {
            let id = be16(d, l4 + 4).unwrap_or(0);
            let seq = be16(d, l4 + 6).unwrap_or(0);
            let _ = write!(s, ", id {id}, seq {seq}");
        }
        135 => {
            if let Some(a) = v6(d, l4 + 8) {
                let _ = write!(s, ", who has {a}");
            }
        }
        136 => {
            if let Some(a) = v6(d, l4 + 8) {
                let _ = write!(s, ", tgt is {a}");
            }
            if verbose {
                let _ = write!(
                    s,
                    ", Flags [{}]",
                    na_flags(d.get(l4 + 4).copied().unwrap_or(0))
                );
            }
        }
        _ => {}
    }
    if !verbose || (!nd && !matches!(t, 1 | 128 | 129)) {
        let _ = write!(s, ", length {len}");
    }
    s
}

/// tcpdump's name of an ICMPv6 type.
fn icmp6_type_name(t: u8) -> Option<&'static str> {
    Some(match t {
        1 => "destination unreachable",
        2 => "packet too big",
        3 => "time exceeded in-transit",
        4 => "parameter problem",
        128 => "echo request",
        129 => "echo reply",
        130 => "multicast listener query",
        131 => "multicast listener report",
        132 => "multicast listener done",
        133 => "router solicitation",
        134 => "router advertisement",
        135 => "neighbor solicitation",
        136 => "neighbor advertisement",
        137 => "redirect",
        143 => "multicast listener report v2",
        _ => return None,
    })
}

/// A destination unreachable's code and what the quoted datagram (at `inner`) says.
fn icmp6_unreachable(s: &mut String, d: &[u8], inner: usize, code: u8) {
    let dst = v6(d, inner + 24).map_or_else(String::new, |a| a.to_string());
    let code_name = match code {
        0 => "unreachable route".to_string(),
        1 => "unreachable prohibited".into(),
        2 => "unreachable beyond scope".into(),
        3 => "unreachable address".into(),
        4 => "unreachable port".into(),
        c => format!("unknown unreach code ({c})"),
    };
    let _ = write!(s, ", {code_name}");
    match code {
        0 | 1 | 3 => {
            let _ = write!(s, " {dst}");
        }
        2 => {
            let src = v6(d, inner + 8).map_or_else(String::new, |a| a.to_string());
            let _ = write!(s, " {dst}, source address {src}");
        }
        4 => {
            let proto = d.get(inner + 6).copied().unwrap_or(0);
            let dport = be16(d, inner + 40 + 2).unwrap_or(0);
            let _ = match proto {
                6 => write!(s, ", {dst} tcp port {dport}"),
                17 => write!(s, ", {dst} udp port {dport}"),
                p => write!(s, ", {dst} protocol {p} port {dport} unreachable"),
            };
        }
        _ => {}
    }
}

/// A neighbour advertisement's flags as tcpdump names them.
fn na_flags(f: u8) -> String {
    let names: Vec<&str> = [(0x80, "router"), (0x40, "solicited"), (0x20, "override")]
        .iter()
        .filter(|(bit, _)| f & bit != 0)
        .map(|(_, n)| *n)
        .collect();
    if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_and_ascii_layouts() {
        let data: Vec<u8> = b"E\x00\x00\x2eHello, world!\r\nline\r".to_vec();
        let mut s = String::new();
        hex(&mut s, &data, false);
        assert_eq!(
            s,
            "\n\t0x0000:  4500 002e 4865 6c6c 6f2c 2077 6f72 6c64\n\t0x0010:  210d 0a6c 696e 650d"
        );
        let mut s = String::new();
        hex(&mut s, &data[..19], true);
        assert_eq!(
            s,
            "\n\t0x0000:  4500 002e 4865 6c6c 6f2c 2077 6f72 6c64  E...Hello,.world\n\t0x0010:  210d 0a                                  !.."
        );
        let mut s = String::new();
        ascii(&mut s, &data);
        assert_eq!(s, "\nE...Hello, world!\nline");
    }

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
