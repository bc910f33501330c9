//! ICMP and ICMPv6 summaries, as `tcpdump -q` prints them after the addresses.

use std::fmt::Write as _;

use zcrx_flowcache::ipproto;
use zcrx_flowcache::wire::IcmpPacket;

use super::field::{be16, checksum, should_be, v4, v6};
use super::ipv6::v6_sum;
use super::layout;

/// An ICMP summary as `tcpdump -q` prints it after the addresses ("ICMP echo request, id 9,
/// seq 1, length 16"), `len` being the ICMP message's length; with `verbose`, a wrong
/// checksum is noted.
pub fn icmp(d: &[u8], l4: usize, len: usize, verbose: bool) -> String {
    let Ok(p) = IcmpPacket::new_checked(d.get(l4..).unwrap_or_default()) else {
        return format!("ICMP, length {len}");
    };
    let (t, code) = (p.msg_type(), p.msg_code());
    // An error's quoted datagram: its IPv4 header, and the ports after it, as far as the
    // capture holds them.
    let inner = p.payload();
    let inner_dst =
        || v4(inner, layout::ipv4::DST_ADDR.start).map_or_else(String::new, |a| a.to_string());
    let inner_proto = || inner.get(layout::ipv4::PROTOCOL).copied().unwrap_or(0);
    let what = match t {
        0 | 8 => format!(
            "echo {}, id {}, seq {}",
            if t == 8 { "request" } else { "reply" },
            p.echo_ident(),
            p.echo_seq_no()
        ),
        3 => match code {
            0 => format!("net {} unreachable", inner_dst()),
            1 => format!("host {} unreachable", inner_dst()),
            2 => format!("{} protocol {} unreachable", inner_dst(), inner_proto()),
            3 => {
                let first = inner.get(layout::ipv4::VER_IHL).copied().unwrap_or(0x45);
                let ihl = usize::from(first & 0x0f) * 4;
                // TCP's and UDP's destination port share their place.
                let dport = be16(inner, ihl + layout::ports::DST_PORT.start).unwrap_or(0);
                match inner_proto() {
                    ipproto::TCP => format!("{} tcp port {dport} unreachable", inner_dst()),
                    ipproto::UDP => format!("{} udp port {dport} unreachable", inner_dst()),
                    p => format!("{} protocol {p} port {dport} unreachable", inner_dst()),
                }
            }
            4 => match be16(p.as_bytes(), layout::icmp::NEXT_HOP_MTU.start).unwrap_or(0) {
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
        if let Some(msg) = p.as_bytes().get(..len) {
            let sum = checksum(&[msg]);
            if sum != 0 {
                let field = p.checksum();
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
    let Ok(p) = IcmpPacket::new_checked(d.get(l4..).unwrap_or_default()) else {
        return format!("ICMP6, length {len}");
    };
    let (t, code) = (p.msg_type(), p.msg_code());
    let mut s = String::new();
    if verbose {
        match v6_sum(d, l3, l4, len, ipproto::ICMPV6) {
            Some(0) => s.push_str("[icmp6 sum ok] "),
            Some(sum) => {
                let field = p.checksum();
                let _ = write!(
                    s,
                    "[bad icmp6 cksum 0x{field:04x} -> 0x{:04x}!] ",
                    should_be(field, sum)
                );
            }
            None => {}
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
    // Neighbour discovery's target address follows the header (RFC 4861 §4.3, §4.4).
    let target = v6(p.payload(), 0);
    match t {
        1 => icmp6_unreachable(&mut s, p.payload(), code),
        128 | 129 => {
            let _ = write!(s, ", id {}, seq {}", p.echo_ident(), p.echo_seq_no());
        }
        135 => {
            if let Some(a) = target {
                let _ = write!(s, ", who has {a}");
            }
        }
        136 => {
            if let Some(a) = target {
                let _ = write!(s, ", tgt is {a}");
            }
            if verbose {
                // The flags: the first of the header's own four bytes (RFC 4861 §4.4).
                let flags = p.as_bytes()[layout::icmp::REST.start];
                let _ = write!(s, ", Flags [{}]", na_flags(flags));
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

/// A destination unreachable's code and what the quoted datagram `inner` says (its IPv6
/// header and the ports after it, as far as the capture holds them).
fn icmp6_unreachable(s: &mut String, inner: &[u8], code: u8) {
    let addr = |at: usize| v6(inner, at).map_or_else(String::new, |a| a.to_string());
    let dst = addr(layout::ipv6::DST_ADDR.start);
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
            let src = addr(layout::ipv6::SRC_ADDR.start);
            let _ = write!(s, " {dst}, source address {src}");
        }
        4 => {
            let proto = inner.get(layout::ipv6::NXT_HDR).copied().unwrap_or(0);
            let dport = be16(
                inner,
                layout::ipv6::HEADER_LEN + layout::ports::DST_PORT.start,
            )
            .unwrap_or(0);
            let _ = match proto {
                ipproto::TCP => write!(s, ", {dst} tcp port {dport}"),
                ipproto::UDP => write!(s, ", {dst} udp port {dport}"),
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
