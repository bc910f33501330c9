//! ICMPv6 as tcpdump 4.99's `icmp6_print` shows it: errors with what they quote (the
//! quoted packet's extension headers walked to its ports), echoes, MLD v1 and v2, and
//! neighbour discovery with its options at `-v`.
//!
//! Reads go through [`Msg`]'s checked accessors: a read past the capture is tcpdump's jump
//! out (`Err(Jump)`), while its own length checks end the text with the mark and no jump.

use std::fmt::Write as _;

use zcrx_flowcache::ipproto;

use super::field::should_be;
use super::ipv6::v6_sum;
use super::{layout, resolve};

mod msg;
mod nd;

/// How the message is printed.
#[derive(Debug, Clone, Copy, Default)]
pub struct Style {
    /// The `-v` count.
    pub verbose: u8,
    /// Ports by name (no `-n`).
    pub names: bool,
    /// The message is in an IP fragment (no checksum then).
    pub fragmented: bool,
}

use msg::{Jump, Msg, Tail, R};

/// The ICMPv6 message at `l4` (of `len` bytes by the IPv6 header) in frame `d` whose IPv6
/// header is at `l3`. Returns the text and whether tcpdump would have jumped out.
pub fn icmp6(d: &[u8], l3: usize, l4: usize, len: usize, style: Style) -> (String, bool) {
    let mut s = String::new();
    if len == 0 {
        s.push_str("ICMP6, length 0 (invalid)");
        return (s, false);
    }
    let b = d.get(l4..).unwrap_or_default();
    let m = Msg {
        b: &b[..b.len().min(len)],
        len,
        v: style.verbose,
        names: style.names,
    };
    if style.verbose > 0 && !style.fragmented {
        match (v6_sum(d, l3, l4, len, ipproto::ICMPV6), m.u16(2)) {
            (Some(0), _) => s.push_str("[icmp6 sum ok] "),
            (Some(sum), Ok(field)) => {
                let _ = write!(
                    s,
                    "[bad icmp6 cksum 0x{field:04x} -> 0x{:04x}!] ",
                    should_be(field, sum)
                );
            }
            _ => {}
        }
    }
    match body(&mut s, &m) {
        Ok(Tail::Length) if m.v == 0 => {
            let _ = write!(s, ", length {len}");
        }
        Ok(Tail::Length | Tail::Done) => {}
        Ok(Tail::Trunc) => s.push_str(" [|icmp6]"),
        Err(Jump) => {
            s.push_str(" [|icmp6]");
            return (s, true);
        }
    }
    (s, false)
}

/// tcpdump's name of an ICMPv6 type.
fn type_name(t: u8) -> Option<&'static str> {
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
        138 => "router renumbering",
        139 => "who-are-you request",
        140 => "who-are-you reply",
        141 => "inverse neighbor solicitation",
        142 => "inverse neighbor advertisement",
        143 => "multicast listener report v2",
        144 => "ha discovery request",
        145 => "ha discovery reply",
        146 => "mobile router solicitation",
        147 => "mobile router advertisement",
        155 => "RPL",
        200 => "mtrace response",
        201 => "mtrace message",
        _ => return None,
    })
}

/// The type's name and its own text.
fn body(s: &mut String, m: &Msg<'_>) -> R<Tail> {
    let t = m.u8(0)?;
    match type_name(t) {
        Some(name) => {
            let _ = write!(s, "ICMP6, {name}");
        }
        None => {
            let _ = write!(s, "ICMP6, unknown icmp6 type ({t})");
        }
    }
    if m.v > 0 && matches!(t, 133..=137 | 145 | 147) {
        let _ = write!(s, ", length {}", m.len);
    }
    let code = m.u8(1)?;
    match t {
        1 => return unreachable(s, m, code),
        2 => {
            let _ = write!(s, ", mtu {}", m.u32(4)?);
        }
        3 => match code {
            0 => {
                let _ = write!(s, " for {}", m.addr(8 + 24)?);
            }
            1 => s.push_str(" (reassembly)"),
            c => {
                let _ = write!(s, ", unknown code ({c})");
            }
        },
        4 => return param_problem(s, m, code),
        128 | 129 => {
            let (id, seq) = (m.u16(4)?, m.u16(6)?);
            let _ = write!(s, ", id {id}, seq {seq}");
        }
        130 if m.len == 24 => mld(s, m)?,
        130 if m.len >= 28 => {
            s.push_str(" v2");
            mldv2_query(s, m)?;
        }
        130 => {
            let _ = write!(s, " unknown-version (len {}) ", m.len);
        }
        131 | 132 => mld(s, m)?,
        133..=137 | 145 | 147 => return nd::nd(s, m, t),
        143 => mldv2_report(s, m)?,
        144 | 146 => {
            let _ = write!(s, ", id 0x{:04x}", m.u16(4)?);
        }
        138..=142 | 155 => {}
        _ => {
            let _ = write!(s, ", length {}", m.len);
            if m.v <= 1 {
                m.unknown(s, 0, "\n\t", m.len);
            }
            return Ok(Tail::Done);
        }
    }
    Ok(Tail::Length)
}

/// A destination unreachable: the code and what the quoted packet says.
fn unreachable(s: &mut String, m: &Msg<'_>, code: u8) -> R<Tail> {
    // The quoted packet's IPv6 header follows the 8 bytes of ICMPv6 header.
    const IP: usize = 8;
    let name = match code {
        0 => "unreachable route".to_string(),
        1 => " unreachable prohibited".into(),
        2 => "beyond scope".into(),
        3 => "unreachable address".into(),
        4 => "unreachable port".into(),
        c => format!("unknown unreach code ({c})"),
    };
    let _ = write!(s, ", {name}");
    match code {
        0 | 1 | 3 => {
            let _ = write!(s, " {}", m.addr(IP + 24)?);
        }
        2 => {
            let (dst, src) = (m.addr(IP + 24)?, m.addr(IP + 8)?);
            let _ = write!(s, " {dst}, source address {src}");
        }
        4 => {
            let Some((proto, at)) = upper_layer(m, IP) else {
                return Ok(Tail::Trunc);
            };
            let dport = m.u16(at + 2)?;
            let dst = m.addr(IP + 24)?;
            let tcp = proto == ipproto::TCP;
            let _ = write!(s, ", {dst} {} port ", if tcp { "tcp" } else { "udp" });
            resolve::port(s, dport, tcp, m.names);
        }
        _ if m.v <= 1 => {
            m.unknown(s, 0, "\n\t", m.len);
            return Ok(Tail::Done);
        }
        _ => {}
    }
    Ok(Tail::Length)
}

/// tcpdump's `get_upperlayer`: past the quoted IPv6 header at `ip` and its extension
/// headers to a TCP or UDP header whose destination port the capture holds (its protocol and
/// offset), or `None`.
fn upper_layer(m: &Msg<'_>, ip: usize) -> Option<(u8, usize)> {
    let mut nh = m.u8(ip + layout::ipv6::NXT_HDR).ok()?;
    let (mut at, mut hlen) = (ip, 40usize);
    while at < m.b.len() {
        at += hlen;
        match nh {
            ipproto::TCP | ipproto::UDP => return m.has(at + 2, 2).then_some((nh, at)),
            0 | 60 | 43 => {
                let n = m.u8(at + 1).ok()?;
                nh = m.u8(at).ok()?;
                hlen = (usize::from(n) + 1) << 3;
            }
            44 => {
                if m.u16(at + 2).ok()? & 0xfff8 != 0 {
                    return None;
                }
                nh = m.u8(at).ok()?;
                hlen = 8;
            }
            51 => {
                let n = m.u8(at + 1).ok()?;
                nh = m.u8(at).ok()?;
                hlen = (usize::from(n) + 2) << 2;
            }
            _ => return None,
        }
    }
    None
}

/// A parameter problem: the code and the pointer.
fn param_problem(s: &mut String, m: &Msg<'_>, code: u8) -> R<Tail> {
    if !m.has(8 + 24, 16) {
        return Ok(Tail::Trunc);
    }
    let what = match code {
        0 => "erroneous",
        1 => "next header",
        2 => "option",
        3 => "incomplete header chain",
        c => {
            let _ = write!(s, ", code-#{c}");
            return Ok(Tail::Length);
        }
    };
    let _ = write!(s, ", {what} - octet {}", m.u32(4)?);
    Ok(Tail::Length)
}

/// MLDv1 (`mld6_print`): nothing unless the capture holds its 24 bytes.
fn mld(s: &mut String, m: &Msg<'_>) -> R<()> {
    if !m.has(0, 24) {
        return Ok(());
    }
    let _ = write!(s, "max resp delay: {} ", m.u16(4)?);
    let _ = write!(s, "addr: {}", m.addr(8)?);
    Ok(())
}

/// An MLDv2 query (`mldv2_query_print`).
fn mldv2_query(s: &mut String, m: &Msg<'_>) -> R<()> {
    let mrc = u32::from(m.u16(4)?);
    let mrt = if mrc < 32768 {
        mrc
    } else {
        ((mrc & 0x0fff) | 0x1000) << (((mrc & 0x7000) >> 12) + 3)
    };
    if m.v > 0 {
        let _ = write!(s, " [max resp delay={mrt}]");
    }
    let _ = write!(s, " [gaddr {}", m.addr(8)?);
    if m.v > 0 {
        let flags = m.u8(24)?;
        if flags & 0x08 != 0 {
            s.push_str(" sflag");
        }
        if flags & 0x07 != 0 {
            let _ = write!(s, " robustness={}", flags & 0x07);
        }
        let q = u32::from(m.u8(25)?);
        let qqi = if q < 128 {
            q
        } else {
            ((q & 0x0f) | 0x10) << (((q & 0x70) >> 4) + 3)
        };
        let _ = write!(s, " qqi={qqi}");
    }
    let nsrcs = usize::from(m.u16(26)?);
    if nsrcs > 0 {
        if m.len < 28 + nsrcs * 16 {
            s.push_str(" [invalid number of sources]");
        } else if m.v > 1 {
            s.push_str(" {");
            for i in 0..nsrcs {
                let _ = write!(s, " {}", m.addr(28 + i * 16)?);
            }
            s.push_str(" }");
        } else {
            let _ = write!(s, ", {nsrcs} source(s)");
        }
    }
    s.push(']');
    Ok(())
}

/// An MLDv2 report (`mldv2_report_print`): the count of group records, and with `-v` the
/// records (with `-vv` their sources).
fn mldv2_report(s: &mut String, m: &Msg<'_>) -> R<()> {
    if m.len < 8 {
        let _ = write!(s, " [invalid len {}]", m.len);
        return Ok(());
    }
    let ngroups = m.u16(6)?;
    let _ = write!(s, ", {ngroups} group record(s)");
    if m.v == 0 {
        return Ok(());
    }
    let mut group = 8usize;
    for _ in 0..ngroups {
        if m.len < group + 20 {
            s.push_str(" [invalid number of groups]");
            return Ok(());
        }
        let _ = write!(s, " [gaddr {}", m.addr(group + 4)?);
        let _ = match m.u8(group)? {
            t @ 1..=6 => write!(
                s,
                " {}",
                ["is_in", "is_ex", "to_in", "to_ex", "allow", "block"][usize::from(t) - 1]
            ),
            t => write!(s, "  [v2-report-#{t}]"),
        };
        let nsrcs = usize::from(m.u16(group + 2)?);
        if m.len < group + 20 + nsrcs * 16 {
            let _ = write!(s, " [invalid number of sources {nsrcs}]");
            return Ok(());
        }
        if m.v == 1 {
            let _ = write!(s, ", {nsrcs} source(s)");
        } else {
            s.push_str(" {");
            for j in 0..nsrcs {
                let _ = write!(s, " {}", m.addr(group + 20 + j * 16)?);
            }
            s.push_str(" }");
        }
        group += 20 + nsrcs * 16;
        s.push(']');
    }
    Ok(())
}

#[cfg(test)]
mod tests;
