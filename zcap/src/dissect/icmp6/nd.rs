//! Neighbour discovery (RFC 4861) and the Mobile IPv6 discovery messages, with the options
//! tcpdump's `icmp6_opt_print` lists at `-v`.

use std::fmt::Write as _;
use std::net::Ipv6Addr;

use super::msg::{Msg, Tail, R};

/// What the options loop does after one option.
enum Step {
    Next,
    /// Stop listing, as after an unknown option at `-v`.
    End,
    /// tcpdump's local `goto trunc`.
    Trunc,
}

/// Router/neighbour solicitation and advertisement, redirect, HA discovery reply and
/// mobile prefix advertisement (`t`), the `, length N` of `-v` already written.
pub(super) fn nd(s: &mut String, m: &Msg<'_>, t: u8) -> R<Tail> {
    let opts_at = match t {
        133 => 8,
        134 => {
            if m.v > 0 {
                router_advert(s, m)?;
            }
            16
        }
        135 => {
            let _ = write!(s, ", who has {}", m.addr(8)?);
            24
        }
        136 => {
            let _ = write!(s, ", tgt is {}", m.addr(8)?);
            if m.v > 0 {
                let f = m.u32(4)?;
                let _ = write!(s, ", Flags [{}]", flags(f >> 24, NA_FLAGS));
            }
            24
        }
        137 => {
            let _ = write!(s, ", {}", m.addr(24)?);
            let _ = write!(s, " to {}", m.addr(8)?);
            40
        }
        145 => {
            if m.v > 0 {
                let _ = write!(s, ", id 0x{:04x}", m.u16(4)?);
                let mut at = 8;
                while at < m.len {
                    let _ = write!(s, ", {}", m.addr(at)?);
                    at += 16;
                }
            }
            return Ok(Tail::Length);
        }
        _ => {
            if m.v > 0 {
                let _ = write!(s, ", id 0x{:04x}", m.u16(4)?);
                let f = m.u16(6)?;
                s.push_str(if f & 0xc000 != 0 { " " } else { "" });
                s.push_str(if f & 0x8000 != 0 { "M" } else { "" });
                s.push_str(if f & 0x4000 != 0 { "O" } else { "" });
            }
            8
        }
    };
    if m.v > 0 && !options(s, m, opts_at)? {
        return Ok(Tail::Trunc);
    }
    Ok(Tail::Length)
}

const NA_FLAGS: &[(u32, &str)] = &[(0x80, "router"), (0x40, "solicited"), (0x20, "override")];
const RA_FLAGS: &[(u32, &str)] = &[
    (0x80, "managed"),
    (0x40, "other stateful"),
    (0x20, "home agent"),
    (0x02, "ipv6 only"),
];
const PI_FLAGS: &[(u32, &str)] = &[(0x80, "onlink"), (0x40, "auto"), (0x20, "router")];

/// tcpdump's `bittok2str`: the names of the bits set, or "none".
fn flags(v: u32, names: &[(u32, &str)]) -> String {
    let set: Vec<&str> = names
        .iter()
        .filter(|(bit, _)| v & bit != 0)
        .map(|(_, n)| *n)
        .collect();
    if set.is_empty() {
        "none".into()
    } else {
        set.join(", ")
    }
}

/// A route preference (RFC 4191) from the flags byte.
fn rtpref(v: u8) -> &'static str {
    ["medium", "high", "rsv", "low"][usize::from((v & 0x18) >> 3)]
}

/// A lifetime in seconds, all ones being "infinity".
fn lifetime(v: u32) -> String {
    if v == u32::MAX {
        "infinity".into()
    } else {
        format!("{v}s")
    }
}

fn router_advert(s: &mut String, m: &Msg<'_>) -> R<()> {
    let (hops, f) = (m.u8(4)?, m.u8(5)?);
    let (life, reach, retrans) = (m.u16(6)?, m.u32(8)?, m.u32(12)?);
    let _ = write!(
        s,
        "\n\thop limit {hops}, Flags [{}], pref {}, router lifetime {life}s, \
         reachable time {reach}ms, retrans timer {retrans}ms",
        flags(u32::from(f), RA_FLAGS),
        rtpref(f)
    );
    Ok(())
}

/// The options from `start` to the message's end (`icmp6_opt_print`); `Ok(false)` where
/// tcpdump gives up with its mark.
fn options(s: &mut String, m: &Msg<'_>, start: usize) -> R<bool> {
    let mut resid = m.len as i64 - start as i64;
    let mut cp = start;
    while cp < m.b.len() {
        if !m.has(cp + 1, 1) {
            return Ok(false);
        }
        if resid <= 0 {
            return Ok(true);
        }
        let (ty, ol) = (m.u8(cp)?, usize::from(m.u8(cp + 1)?));
        let size = ol << 3;
        if ol == 0 || cp + size > m.b.len() {
            return Ok(false);
        }
        let _ = write!(
            s,
            "\n\t  {} option ({ty}), length {size} ({ol}): ",
            option_name(ty)
        );
        match option(s, m, start, cp, ty, ol)? {
            Step::Next => {}
            Step::End => return Ok(true),
            Step::Trunc => return Ok(false),
        }
        if m.v > 1 {
            m.unknown(s, cp + 2, "\n\t    ", size - 2);
        }
        cp += size;
        resid -= size as i64;
    }
    Ok(true)
}

fn option_name(ty: u8) -> &'static str {
    match ty {
        1 => "source link-address",
        2 => "destination link-address",
        3 => "prefix info",
        4 => "redirected header",
        5 => "mtu",
        25 => "rdnss",
        31 => "dnssl",
        7 => "advertisement interval",
        8 => "homeagent information",
        24 => "route info",
        _ => "unknown",
    }
}

/// One option's body at `cp` (type `ty`, `ol` units of 8 bytes); `first` is where the
/// options start.
fn option(s: &mut String, m: &Msg<'_>, first: usize, cp: usize, ty: u8, ol: usize) -> R<Step> {
    let size = ol << 3;
    match ty {
        1 | 2 => {
            let mac = m.bytes(cp + 2, size - 2)?;
            let hex: Vec<String> = mac.iter().map(|b| format!("{b:02x}")).collect();
            s.push_str(&hex.join(":"));
        }
        3 => {
            let (prefix, plen, f) = (m.addr(cp + 16)?, m.u8(cp + 2)?, m.u8(cp + 3)?);
            let (valid, pref) = (m.u32(cp + 4)?, m.u32(cp + 8)?);
            let _ = write!(
                s,
                "{prefix}/{plen}{}, Flags [{}], valid time {}",
                if ol != 4 { "badlen" } else { "" },
                flags(u32::from(f), PI_FLAGS),
                lifetime(valid)
            );
            let _ = write!(s, ", pref. time {}", lifetime(pref));
        }
        // tcpdump dumps from the first option, not this one.
        4 => m.unknown(s, first, "\n\t    ", size),
        5 => {
            let mtu = m.u32(cp + 4)?;
            let bad = if ol != 1 { "bad option length" } else { "" };
            let _ = write!(s, " {mtu}{bad}");
        }
        25 => {
            let _ = write!(s, " lifetime {}s,", m.u32(cp + 4)?);
            for i in 0..ol.saturating_sub(1) / 2 {
                let _ = write!(s, " addr: {}", m.addr(cp + 8 + i * 16)?);
            }
        }
        31 => {
            // The domain names themselves are not shown (see the module's tests).
            let _ = write!(s, " lifetime {}s, domain(s):", m.u32(cp + 4)?);
        }
        7 => {
            let _ = write!(s, " {}ms", m.u32(cp + 4)?);
        }
        8 => {
            let (pref, life) = (m.u16(cp + 4)?, m.u16(cp + 6)?);
            let _ = write!(s, " preference {pref}, lifetime {life}");
        }
        24 => return route_info(s, m, cp, ol),
        _ if m.v <= 1 => {
            m.unknown(s, cp + 2, "\n\t  ", size - 2);
            return Ok(Step::End);
        }
        _ => {}
    }
    Ok(Step::Next)
}

/// A route information option (RFC 4191): the prefix, zero-filled to 16 bytes.
fn route_info(s: &mut String, m: &Msg<'_>, cp: usize, ol: usize) -> R<Step> {
    if !m.has(cp + 4, 4) {
        return Ok(Step::Trunc);
    }
    let mut prefix = [0u8; 16];
    match ol {
        1 => {}
        2 => prefix[..8].copy_from_slice(m.bytes(cp + 8, 8)?),
        3 => prefix.copy_from_slice(m.bytes(cp + 8, 16)?),
        _ => return Ok(Step::Trunc),
    }
    let _ = write!(s, " {}/{}", Ipv6Addr::from(prefix), m.u8(cp + 2)?);
    let _ = write!(s, ", pref={}", rtpref(m.u8(cp + 3)?));
    let _ = write!(s, ", lifetime={}", lifetime(m.u32(cp + 4)?));
    Ok(Step::Next)
}
