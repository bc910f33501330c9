//! Encapsulations whose inner packet tcpdump prints after the outer one, on the same line
//! (GRE and IP in IP) or on the next (VXLAN): the outer header's own text, then the inner
//! frame through the frame walk (`Ctx::frame`), at most [`MAX_DEPTH`] tunnels deep.

use std::fmt::Write as _;

use zcrx_flowcache::LinkType;

use super::ctx::Ctx;

/// GRE (RFC 2784, and PPTP's enhanced GRE, RFC 2637).
pub(super) const GRE: u8 = 47;
/// IPv4 in IP (RFC 2003).
pub(super) const IPIP: u8 = 4;
/// IPv6 in IP (6in4, RFC 4213).
pub(super) const IPV6: u8 = 41;
/// VXLAN's UDP port (RFC 7348).
pub(super) const VXLAN_PORT: u16 = 4789;
/// Geneve's UDP port (RFC 8926).
pub(super) const GENEVE_PORT: u16 = 6081;
/// Tunnels inside tunnels printed at most: hostile packets nest them without end.
pub(super) const MAX_DEPTH: u8 = 8;

/// GRE's flags, in tcpdump's words.
const GRE_FLAGS: [(u16, &str); 6] = [
    (0x8000, "checksum present"),
    (0x4000, "routing present"),
    (0x2000, "key present"),
    (0x1000, "sequence# present"),
    (0x0800, "source routing present"),
    (0x0080, "ack present"),
];

/// The payload of IP protocol `proto` (GRE, IPv4 or IPv6 in IP), `len` bytes by the IP
/// header, `data` what the capture holds of them.
pub(super) fn ip(s: &mut String, proto: u8, data: &[u8], len: usize, ctx: &mut Ctx<'_>) {
    match proto {
        GRE => gre(s, data, len, ctx),
        IPIP => inner(s, LinkType::Ipv4, data, len, ctx),
        _ => inner(s, LinkType::Ipv6, data, len, ctx),
    }
}

/// The inner frame, unless the tunnels are already [`MAX_DEPTH`] deep.
fn inner(s: &mut String, link: LinkType, data: &[u8], len: usize, ctx: &mut Ctx<'_>) {
    if ctx.depth >= MAX_DEPTH {
        s.push_str("[tunnels nested too deep]");
        return;
    }
    ctx.depth += 1;
    (ctx.frame)(s, link, u32::try_from(len).unwrap_or(u32::MAX), data, ctx);
    ctx.depth -= 1;
}

fn be16(d: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*d.get(at)?, *d.get(at + 1)?]))
}

fn be32(d: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(d.get(at..at + 4)?.try_into().ok()?))
}

/// GRE as tcpdump's `gre_print`: version 0 with its key and sequence number, then the inner
/// packet by protocol; version 1 (PPTP) with its call, sequence and ack.
fn gre(s: &mut String, d: &[u8], len: usize, ctx: &mut Ctx<'_>) {
    let (Some(flags), true) = (be16(d, 0), len >= 2) else {
        s.push_str(" [|gre]");
        return;
    };
    let version = flags & 7;
    let _ = write!(s, "GREv{version}");
    if version > 1 {
        s.push_str(" ERROR: unknown-version");
        return;
    }
    if ctx.detail.verbose > 0 {
        let names: Vec<&str> = GRE_FLAGS
            .iter()
            .filter(|(bit, _)| flags & bit != 0)
            .map(|(_, n)| *n)
            .collect();
        let names = if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        };
        let _ = write!(s, ", Flags [{names}]");
    }
    match gre_header(s, d, len, flags, version, ctx.detail.verbose > 0) {
        Some((proto, at)) => {
            let link = ctx.detail.link;
            if link {
                let _ = write!(s, ", proto {} (0x{proto:04x})", ethertype_name(proto));
            }
            let _ = write!(s, ", length {len}");
            if version == 1 && flags & 0x1000 == 0 {
                return;
            }
            s.push_str(if ctx.detail.verbose > 0 { "\n\t" } else { ": " });
            let rest = d.get(at..).unwrap_or_default();
            let left = len.saturating_sub(at);
            match (version, proto) {
                (0, 0x0800) => inner(s, LinkType::Ipv4, rest, left, ctx),
                (0, 0x86dd) => inner(s, LinkType::Ipv6, rest, left, ctx),
                (0, 0x6558) => inner(s, LinkType::Ethernet, rest, left, ctx),
                _ => {
                    let _ = write!(s, "gre-proto-0x{proto:x}");
                }
            }
        }
        None => s.push_str(" [|gre]"),
    }
}

/// The fields after GRE's flags (printed as tcpdump prints them): the protocol and where
/// the payload starts; `None` where the header is cut.
fn gre_header(
    s: &mut String,
    d: &[u8],
    len: usize,
    flags: u16,
    version: u16,
    verbose: bool,
) -> Option<(u16, usize)> {
    let need = |at: usize, n: usize| (len >= at + n && d.len() >= at + n).then_some(());
    need(2, 2)?;
    let proto = be16(d, 2)?;
    let mut at = 4;
    if version == 0 {
        if flags & 0xc000 != 0 {
            need(at, 2)?;
            if verbose {
                let _ = write!(s, ", sum 0x{:x}", be16(d, at)?);
            }
            need(at + 2, 2)?;
            let _ = write!(s, ", off 0x{:x}", be16(d, at + 2)?);
            at += 4;
        }
        if flags & 0x2000 != 0 {
            need(at, 4)?;
            let _ = write!(s, ", key=0x{:x}", be32(d, at)?);
            at += 4;
        }
        if flags & 0x1000 != 0 {
            need(at, 4)?;
            let _ = write!(s, ", seq {}", be32(d, at)?);
            at += 4;
        }
        // Source routes (flag R): the list ends with a null entry; tcpdump prints the
        // entries before it, which zcap does not decode (it stops at the first).
        if flags & 0x4000 != 0 {
            need(at, 4)?;
            let (af, srelen) = (be16(d, at)?, d.get(at + 3).copied()?);
            if af != 0 || srelen != 0 {
                return None;
            }
            at += 4;
        }
    } else {
        if flags & 0x2000 != 0 {
            need(at, 4)?;
            let _ = write!(s, ", call {}", be32(d, at)? & 0xffff);
            at += 4;
        }
        if flags & 0x1000 != 0 {
            need(at, 4)?;
            let _ = write!(s, ", seq {}", be32(d, at)?);
            at += 4;
        }
        if flags & 0x0080 != 0 {
            need(at, 4)?;
            let _ = write!(s, ", ack {}", be32(d, at)?);
            at += 4;
        }
        if flags & 0x1000 == 0 {
            s.push_str(", no-payload");
        }
    }
    Some((proto, at))
}

/// tcpdump's name of an EtherType in GRE's and Geneve's `-e` text.
fn ethertype_name(t: u16) -> &'static str {
    match t {
        0x0800 => "IPv4",
        0x86dd => "IPv6",
        0x0806 => "ARP",
        0x6558 => "TEB",
        0x880b => "PPP",
        0x8847 => "MPLS unicast",
        0x8848 => "MPLS multicast",
        _ => "unknown",
    }
}

/// VXLAN (UDP 4789): its flags and VNI, then on the next line the inner Ethernet frame.
pub(super) fn vxlan(s: &mut String, d: &[u8], len: usize, ctx: &mut Ctx<'_>) {
    s.push_str("VXLAN");
    if len < 8 {
        s.push_str(" (invalid)");
        return;
    }
    let (Some(&flags), Some(vni)) = (d.first(), be32(d, 4)) else {
        s.push_str(" [|vxlan]");
        return;
    };
    let names = if flags & 0x08 != 0 { "I" } else { "invalid" };
    let _ = writeln!(s, ", flags [{names}] (0x{flags:02x}), vni {}", vni >> 8);
    inner(
        s,
        LinkType::Ethernet,
        d.get(8..).unwrap_or_default(),
        len - 8,
        ctx,
    );
}

/// Geneve (UDP 6081): flags, VNI, options, then the inner frame by its protocol.
pub(super) fn geneve(s: &mut String, d: &[u8], len: usize, ctx: &mut Ctx<'_>) {
    s.push_str("Geneve");
    if len < 8 {
        let _ = write!(s, " [length {len} < 8] (invalid)");
        return;
    }
    let (Some(&ver_opt), Some(&flags), Some(proto), Some(vni)) =
        (d.first(), d.get(1), be16(d, 2), be32(d, 4))
    else {
        s.push_str(" [|geneve]");
        return;
    };
    if ver_opt >> 6 != 0 {
        let _ = write!(s, " ERROR: unknown-version {}", ver_opt >> 6);
        return;
    }
    let names = [
        (0x80, "O"),
        (0x40, "C"),
        (0x20, "R1"),
        (0x10, "R2"),
        (0x08, "R3"),
        (0x04, "R4"),
        (0x02, "R5"),
        (0x01, "R6"),
    ];
    let mut f: String = names
        .iter()
        .filter(|(b, _)| flags & b != 0)
        .map(|(_, n)| *n)
        .collect();
    if f.is_empty() {
        f.push_str("none");
    }
    let _ = write!(s, ", Flags [{f}], vni 0x{:x}", vni >> 8);
    if vni & 0xff != 0 {
        let _ = write!(s, ", rsvd 0x{:x}", vni & 0xff);
    }
    if ctx.detail.link {
        let _ = write!(s, ", proto {} (0x{proto:04x})", ethertype_name(proto));
    }
    let opts = usize::from(ver_opt & 0x3f) * 4;
    if len - 8 < opts {
        let _ = write!(s, " truncated-geneve - {} bytes missing", opts - (len - 8));
        return;
    }
    if d.len() < 8 + opts {
        s.push_str(" [|geneve]");
        return;
    }
    if opts > 0 {
        // The options' own listing (-v) is not decoded: their size is shown at every level.
        let _ = write!(s, ", options [{opts} bytes]");
    }
    s.push_str(if ctx.detail.verbose > 0 { "\n\t" } else { ": " });
    let rest = d.get(8 + opts..).unwrap_or_default();
    let left = len - 8 - opts;
    match proto {
        0x0800 => inner(s, LinkType::Ipv4, rest, left, ctx),
        0x86dd => inner(s, LinkType::Ipv6, rest, left, ctx),
        0x6558 => inner(s, LinkType::Ethernet, rest, left, ctx),
        p => {
            let _ = write!(s, "geneve-proto-0x{p:x}");
        }
    }
}
