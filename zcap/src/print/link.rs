//! What tcpdump prints of the link layers between Ethernet and IP, and of the frames that
//! carry no IP: MPLS label stacks, PPPoE (discovery tags, sessions and their PPP), 802.3
//! frames with LLC/SNAP, ARP and RARP; and the marks of a network header the capture cut.

use std::fmt::Write as _;
use std::net::Ipv4Addr;

use zcrx_flowcache::LinkType;

use super::ctx::Ctx;
use crate::dissect::resolve;

/// The EtherTypes handled here.
pub(super) const ARP: u16 = 0x0806;
pub(super) const RARP: u16 = 0x8035;
pub(super) const MPLS: u16 = 0x8847;
pub(super) const MPLS_MULTICAST: u16 = 0x8848;
pub(super) const PPPOE_DISCOVERY: u16 = 0x8863;
pub(super) const PPPOE_SESSION: u16 = 0x8864;
pub(super) const LLDP: u16 = 0x88cc;
/// The largest 802.3 length field: above it, the field is an EtherType.
pub(super) const MAX_8023_LENGTH: u16 = 1500;

fn be16(d: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*d.get(at)?, *d.get(at + 1)?]))
}

/// The payload of EtherType `t` (`d` from its first byte, `len` its bytes on the wire):
/// `true` when handled here.
pub(super) fn ethertype(s: &mut String, t: u16, d: &[u8], len: usize, ctx: &mut Ctx<'_>) -> bool {
    match t {
        ARP | RARP => arp(s, d, len, ctx),
        MPLS | MPLS_MULTICAST => mpls(s, d, len, ctx),
        PPPOE_DISCOVERY | PPPOE_SESSION => pppoe(s, d, len, ctx),
        LLDP => crate::dissect::lldp::lldp(s, d, len, ctx.detail.verbose),
        t if t <= MAX_8023_LENGTH => return llc(s, d, len.min(usize::from(t)), ctx),
        _ => return false,
    }
    true
}

/// An inner packet by its first byte's IP version (MPLS carries no protocol field).
fn inner_ip(s: &mut String, d: &[u8], len: usize, v6: bool, ctx: &mut Ctx<'_>) {
    let link = if v6 { LinkType::Ipv6 } else { LinkType::Ipv4 };
    if ctx.depth >= super::tunnel::MAX_DEPTH {
        s.push_str("[tunnels nested too deep]");
        return;
    }
    ctx.depth += 1;
    (ctx.frame)(s, link, u32::try_from(len).unwrap_or(u32::MAX), d, ctx);
    ctx.depth -= 1;
}

/// tcpdump's `mpls_print`: each label stack entry, then the packet the bottom one carries
/// (IPv4 or IPv6 by its label or its first byte).
fn mpls(s: &mut String, d: &[u8], len: usize, ctx: &mut Ctx<'_>) {
    let verbose = ctx.detail.verbose > 0;
    s.push_str("MPLS");
    let mut at = 0;
    let label = loop {
        if len < at + 4 {
            s.push_str(" (invalid)");
            return;
        }
        let Some(e) = d
            .get(at..at + 4)
            .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
        else {
            s.push_str(" [|mpls]");
            ctx.jumped = true;
            return;
        };
        let label = e >> 12;
        s.push_str(if at > 0 && verbose { "\n\t(" } else { " (" });
        let _ = write!(s, "label {label}");
        if verbose && label < 16 {
            let names = [
                "IPv4 explicit NULL",
                "router alert",
                "IPv6 explicit NULL",
                "implicit NULL",
            ];
            let _ = write!(s, " ({})", names.get(label as usize).unwrap_or(&"rsvd"));
        }
        let _ = write!(s, ", tc {}", (e >> 9) & 7);
        if e & 0x100 != 0 {
            s.push_str(", [S]");
        }
        let _ = write!(s, ", ttl {})", e & 0xff);
        at += 4;
        if e & 0x100 != 0 {
            break label;
        }
    };
    let rest = d.get(at..).unwrap_or_default();
    let left = len - at;
    let v6 = match label {
        0 | 3 => false,
        2 => true,
        _ => match rest.first() {
            _ if left < 1 => return,
            None => {
                s.push_str(" [|mpls]");
                ctx.jumped = true;
                return;
            }
            Some(0x45..=0x4f) => false,
            Some(0x60..=0x6f) => true,
            // Neither IP nor anything else tcpdump recognises: it shows no more.
            Some(_) => return,
        },
    };
    s.push_str(if verbose { "\n\t" } else { " " });
    inner_ip(s, rest, left, v6, ctx);
}

/// PPPoE (RFC 2516): the discovery stage's code and tags, or a session's PPP.
fn pppoe(s: &mut String, d: &[u8], len: usize, ctx: &mut Ctx<'_>) {
    if len < 6 {
        let _ = write!(s, " (length {len} < 6) (invalid)");
        return;
    }
    let (Some(&vt), Some(&code), Some(ses), Some(plen)) =
        (d.first(), d.get(1), be16(d, 2), be16(d, 4))
    else {
        s.push_str(" [|pppoe]");
        ctx.jumped = true;
        return;
    };
    if vt >> 4 != 1 {
        let _ = write!(s, " [ver {}]", vt >> 4);
    }
    if vt & 0xf != 1 {
        let _ = write!(s, " [type {}]", vt & 0xf);
    }
    let name = match code {
        0x09 => "PADI",
        0x07 => "PADO",
        0x19 => "PADR",
        0x65 => "PADS",
        0xa7 => "PADT",
        0 => "",
        _ => "",
    };
    if code != 0 && name.is_empty() {
        let _ = write!(s, "PPPoE PAD-{code:x}");
    } else {
        let _ = write!(s, "PPPoE {name}");
    }
    let mut plen = usize::from(plen);
    if code == 0x09 && plen > 1484 - 6 {
        let _ = write!(s, " [len {plen}!]");
    }
    if plen > len - 6 {
        let _ = write!(s, " [len {plen} > {}!]", len - 6);
        plen = len - 6;
    }
    if ses != 0 {
        let _ = write!(s, " [ses 0x{ses:x}]");
    }
    let payload = d.get(6..).unwrap_or_default();
    if code != 0 {
        ctx.jumped |= pppoe_tags(s, payload, plen);
    } else {
        s.push(' ');
        ppp(s, payload, plen, ctx);
    }
}

/// PPPoE discovery's tags: name, and the value as text or hex. Returns whether the capture
/// ended inside them (a read past it: tcpdump jumps out).
fn pppoe_tags(s: &mut String, d: &[u8], plen: usize) -> bool {
    let mut at = 0;
    let mut tag = 0xffff;
    while tag != 0 && at < plen {
        let (Some(t), Some(tlen)) = (be16(d, at), be16(d, at + 2)) else {
            s.push_str(" [|pppoe]");
            return true;
        };
        tag = t;
        at += 4;
        let name = match t {
            0 => "EOL".to_string(),
            0x0101 => "Service-Name".into(),
            0x0102 => "AC-Name".into(),
            0x0103 => "Host-Uniq".into(),
            0x0104 => "AC-Cookie".into(),
            0x0105 => "Vendor-Specific".into(),
            0x0110 => "Relay-Session-ID".into(),
            0x0120 => "PPP-Max-Payload".into(),
            0x0201 => "Service-Name-Error".into(),
            0x0202 => "AC-System-Error".into(),
            0x0203 => "Generic-Error".into(),
            t => format!("TAG-0x{t:x}"),
        };
        let tlen = usize::from(tlen);
        if tlen == 0 {
            let _ = write!(s, " [{name}]");
            continue;
        }
        let Some(v) = d.get(at..at + tlen) else {
            s.push_str(" [|pppoe]");
            return true;
        };
        let shown = &v[..v.len().min(79)];
        let text = shown
            .iter()
            .filter(|c| c.is_ascii_graphic() || **c == b' ')
            .count();
        if text > shown.len() - text {
            let t: String = shown
                .iter()
                .map(|&c| {
                    if c.is_ascii_graphic() || c == b' ' {
                        c as char
                    } else {
                        '.'
                    }
                })
                .collect();
            let _ = write!(s, " [{name} \"{t}\"]");
        } else {
            let _ = write!(s, " [{name} 0x");
            for b in v {
                let _ = write!(s, "{b:02X}");
            }
            s.push(']');
        }
        at += tlen;
    }
    false
}

/// PPP (RFC 1661) after PPPoE: IPv4 and IPv6 as their packets; LCP, IPCP and IPV6CP by
/// their code (their options, which tcpdump lists with -v, are not decoded).
fn ppp(s: &mut String, d: &[u8], len: usize, ctx: &mut Ctx<'_>) {
    let mut d = d;
    let mut len = len;
    if be16(d, 0) == Some(0xff03) {
        d = d.get(2..).unwrap_or_default();
        len = len.saturating_sub(2);
    }
    let Some(proto) = be16(d, 0).filter(|_| len >= 2) else {
        s.push_str(" [|ppp]");
        ctx.jumped = true;
        return;
    };
    let (d, len) = (d.get(2..).unwrap_or_default(), len - 2);
    let name = match proto {
        0xc021 => "LCP",
        0x8021 => "IPCP",
        0x8057 => "IP6CP",
        0x0021 => "IP",
        0x0057 => "IPv6",
        _ => "unknown",
    };
    if ctx.detail.link {
        let _ = write!(s, "{name} (0x{proto:04x}), length {}: ", len + 2);
    }
    match proto {
        0x0021 => inner_ip(s, d, len, false, ctx),
        0x0057 => inner_ip(s, d, len, true, ctx),
        0xc021 | 0x8021 | 0x8057 => {
            let _ = write!(s, "{name}, ");
            if len < 4 {
                s.push_str(" [|ppp]");
                ctx.jumped = true;
                return;
            }
            let (Some(&code), Some(&id)) = (d.first(), d.get(1)) else {
                let _ = write!(s, "[|{name}]");
                return;
            };
            let codes = [
                "Vend-Ext",
                "Conf-Request",
                "Conf-Ack",
                "Conf-Nack",
                "Conf-Reject",
                "Term-Request",
                "Term-Ack",
                "Code-Reject",
                "Prot-Reject",
                "Echo-Request",
                "Echo-Reply",
                "Discard-Request",
                "Ident",
                "Time-Remain",
            ];
            let cname = codes.get(usize::from(code)).unwrap_or(&"Unknown Opcode");
            let _ = write!(s, "{cname} (0x{code:02x}), id {id}, length {}", len + 2);
            // With -v tcpdump lists the options; their encoded length is what zcap shows.
            if ctx.detail.verbose > 0 {
                if let Some(encoded) = be16(d, 2) {
                    let opts = usize::from(encoded).saturating_sub(4);
                    let _ = write!(s, "\n\tencoded length {encoded} (=Option(s) length {opts})");
                }
            }
        }
        _ => {
            let _ = write!(s, "unknown ppp protocol (0x{proto:04x})");
        }
    }
}

/// An 802.3 frame's LLC: SNAP with an EtherType goes on to that protocol; `false` for
/// others (STP and the rest are not decoded here).
fn llc(s: &mut String, d: &[u8], len: usize, ctx: &mut Ctx<'_>) -> bool {
    let (Some(&dsap), Some(&ssap), Some(&ctl)) = (d.first(), d.get(1), d.get(2)) else {
        return false;
    };
    if dsap == 0x42 && ssap == 0x42 && ctl == 3 {
        if ctx.detail.link {
            s.push_str("LLC, dsap STP (0x42) Individual, ssap STP (0x42) Command, ctrl 0x03: ");
        }
        let bpdu = d.get(3..).unwrap_or_default();
        ctx.jumped |= crate::dissect::stp::stp(s, bpdu, len.saturating_sub(3), ctx.detail.verbose);
        return true;
    }
    if !(dsap == 0xaa && ssap == 0xaa && ctl == 3) {
        return false;
    }
    let (Some(oui), Some(t)) = (d.get(3..6), be16(d, 6)) else {
        if ctx.detail.link {
            s.push_str("LLC, dsap SNAP (0xaa) Individual, ssap SNAP (0xaa) Command, ctrl 0x03: ");
        }
        s.push_str(" [|snap]");
        return true;
    };
    if oui != [0, 0, 0] || len < 8 {
        return false;
    }
    if ctx.detail.link {
        let _ = write!(
            s,
            "LLC, dsap SNAP (0xaa) Individual, ssap SNAP (0xaa) Command, ctrl 0x03: oui Ethernet (0x000000), ethertype {} (0x{t:04x}), length {}: ",
            if t == 0x0800 { "IPv4" } else if t == 0x86dd { "IPv6" } else { "Unknown" },
            len - 8
        );
    }
    let rest = d.get(8..).unwrap_or_default();
    match t {
        0x0800 => inner_ip(s, rest, len - 8, false, ctx),
        0x86dd => inner_ip(s, rest, len - 8, true, ctx),
        t => return ethertype(s, t, rest, len - 8, ctx),
    }
    true
}

/// A MAC address (or another link address) as tcpdump prints it.
fn link_addr(s: &mut String, a: &[u8], names: bool) {
    if a.len() == 6 {
        resolve::mac(s, a, names);
    } else {
        for (i, b) in a.iter().enumerate() {
            if i > 0 {
                s.push(':');
            }
            let _ = write!(s, "{b:02x}");
        }
    }
}

/// What an ARP operation says of its addresses (`who-has B tell A`, `A is-at MAC`, ...);
/// the packet holds them all (checked by the caller).
fn arp_addresses(
    s: &mut String,
    d: &[u8],
    op: u16,
    (hln, pro, pln): (usize, u16, usize),
    detail: &super::ctx::Detail,
) {
    let (sha, spa) = (8, 8 + hln);
    let (tha, tpa) = (8 + hln + pln, 8 + 2 * hln + pln);
    let ip = |s: &mut String, at: usize| {
        if pro != 0x0800 {
            s.push_str("<wrong proto type>");
        } else if pln != 4 {
            s.push_str("<wrong len>");
        } else {
            let a: [u8; 4] = d[at..at + 4].try_into().unwrap_or([0; 4]);
            resolve::host(s, Ipv4Addr::from(a).into(), detail.naming());
        }
    };
    let hw = |s: &mut String, at: usize| link_addr(s, &d[at..at + hln], detail.names);
    // The two addresses each operation names (IP: a protocol address; MAC: a hardware one).
    enum A {
        Ip(usize),
        Mac(usize),
    }
    let (first, word, second) = match op {
        1 => (A::Ip(tpa), " tell ", A::Ip(spa)),
        2 => (A::Ip(spa), " is-at ", A::Mac(sha)),
        3 | 8 => (A::Mac(tha), " tell ", A::Mac(sha)),
        4 => (A::Mac(tha), " at ", A::Ip(tpa)),
        9 => (A::Mac(sha), " at ", A::Ip(spa)),
        _ => return,
    };
    let show = |s: &mut String, a: A| match a {
        A::Ip(at) => ip(s, at),
        A::Mac(at) => hw(s, at),
    };
    if op == 1 {
        s.push_str("who-has ");
    } else if matches!(op, 3 | 8) {
        s.push_str("who-is ");
    }
    show(s, first);
    if op == 1 && d[tha..tha + hln].iter().any(|&b| b != 0) {
        s.push_str(" (");
        hw(s, tha);
        s.push(')');
    }
    s.push_str(word);
    show(s, second);
}

/// ARP's hardware and protocol types with their address lengths, in tcpdump's words.
fn arp_types(s: &mut String, (hrd, hln): (u16, usize), (pro, pln): (u16, usize)) {
    let hw = match hrd {
        1 => "Ethernet".to_string(),
        6 => "TokenRing".into(),
        7 => "ArcNet".into(),
        15 => "Frame Relay".into(),
        h => format!("Unknown Hardware ({h})"),
    };
    let p = match pro {
        0x0800 => "IPv4".to_string(),
        0x86dd => "IPv6".into(),
        p => format!("Unknown Protocol (0x{p:04x})"),
    };
    let _ = write!(s, "{hw} (len {hln}), {p} (len {pln})");
}

/// ARP and RARP (RFC 826, RFC 903) as tcpdump's `arp_print`.
fn arp(s: &mut String, d: &[u8], len: usize, ctx: &mut Ctx<'_>) {
    let detail = ctx.detail;
    let (Some(hrd), Some(pro), Some(&hln), Some(&pln), Some(op)) =
        (be16(d, 0), be16(d, 2), d.get(4), d.get(5), be16(d, 6))
    else {
        s.push_str(" [|arp]");
        ctx.jumped = true;
        return;
    };
    let (hln, pln) = (usize::from(hln), usize::from(pln));
    if d.len() < 8 + 2 * (hln + pln) {
        s.push_str(" [|arp]");
        ctx.jumped = true;
        return;
    }
    if !detail.link {
        s.push_str("ARP, ");
    }
    let verbose = detail.verbose > 0;
    if pro != 0x0800 || pln != 4 || hln == 0 || verbose {
        arp_types(s, (hrd, hln), (pro, pln));
        if !verbose {
            let _ = write!(s, ", length {len}");
            return;
        }
    }
    let name = match op {
        1 => Some("Request"),
        2 => Some("Reply"),
        3 => Some("Reverse Request"),
        4 => Some("Reverse Reply"),
        8 => Some("Inverse Request"),
        9 => Some("Inverse Reply"),
        10 => Some("NACK Reply"),
        _ => None,
    };
    match name {
        Some(n) => {
            let _ = write!(s, "{}{n} ", if verbose { ", " } else { "" });
        }
        None => {
            let _ = write!(s, "{}Unknown ({op}) ", if verbose { ", " } else { "" });
        }
    }
    arp_addresses(s, d, op, (hln, pro, pln), detail);
    let _ = write!(s, ", length {len}");
}
