//! DHCPv6 (UDP 546/547) as tcpdump 4.99's print-dhcp6.c prints it: "dhcp6" and the message
//! type; with `-v` the transaction ID (or a relay's addresses) and the options, nested ones
//! in place.
//!
//! tcpdump stops in two ways here: a field it reads past the capture ends the whole line
//! with " [|dhcp6]" (`None` below), while an option list that runs out prints the mark and
//! lets the enclosing option close (`Some(false)`). Positions are offsets into the payload;
//! a relayed message is read with the capture cut at its option's end, as tcpdump does.

use std::fmt::Write as _;

use super::nd::{be32, ip6, printjnp, printn, u8at};
use super::Payload;
use crate::dissect::field::be16;

const MARK: &str = " [|dhcp6]";

/// Prints a DHCPv6 message.
pub fn print(out: &mut String, p: &Payload<'_>) {
    if message(out, p.data, 0, p.len, p.verbose).is_none() {
        out.push_str(MARK);
    }
}

fn msg_name(t: u8) -> String {
    let name = match t {
        1 => "solicit",
        2 => "advertise",
        3 => "request",
        4 => "confirm",
        5 => "renew",
        6 => "rebind",
        7 => "reply",
        8 => "release",
        9 => "decline",
        10 => "reconfigure",
        11 => "inf-req",
        12 => "relay-fwd",
        13 => "relay-reply",
        14 => "leasequery",
        15 => "leasequery-reply",
        _ => return format!("msgtype-{t}"),
    };
    name.to_string()
}

/// A message at `cp` of `length` bytes (`d` ends where the capture does).
fn message(out: &mut String, d: &[u8], cp: usize, length: usize, verbose: u8) -> Option<()> {
    out.push_str("dhcp6");
    let ep = d.len().min(cp + length);
    if be32(d, cp).is_none() {
        out.push_str(MARK);
        return Some(());
    }
    let t = u8at(d, cp)?;
    let name = msg_name(t);
    if verbose == 0 {
        let _ = write!(out, " {name}");
        return Some(());
    }
    let _ = write!(out, " {name} (");
    if t != 12 && t != 13 {
        let _ = write!(out, "xid={:x}", be32(d, cp)? & 0x00ff_ffff);
        options(out, d, cp + 4, ep)?;
    } else {
        let _ = write!(out, "linkaddr={}", ip6(d, cp + 2)?);
        let _ = write!(out, " peeraddr={}", ip6(d, cp + 18)?);
        options(out, d, cp + 34, ep)?;
    }
    out.push(')');
    Some(())
}

fn opt_name(t: u16) -> String {
    let name = match t {
        1 => "client-ID",
        2 => "server-ID",
        3 => "IA_NA",
        4 => "IA_TA",
        5 => "IA_ADDR",
        6 => "option-request",
        7 => "preference",
        8 => "elapsed-time",
        9 => "relay-message",
        11 => "authentication",
        12 => "server-unicast",
        13 => "status-code",
        14 => "rapid-commit",
        15 => "user-class",
        16 => "vendor-class",
        17 => "vendor-specific-info",
        18 => "interface-ID",
        19 => "reconfigure-message",
        20 => "reconfigure-accept",
        21 => "SIP-servers-domain",
        22 => "SIP-servers-address",
        23 => "DNS-server",
        24 => "DNS-search-list",
        25 => "IA_PD",
        26 => "IA_PD-prefix",
        27 => "NIS-server",
        28 => "NIS+-server",
        29 => "NIS-domain-name",
        30 => "NIS+-domain-name",
        31 => "SNTP-servers",
        32 => "lifetime",
        33 => "BCMCS-domain-name",
        34 => "BCMCS-server",
        36 => "Geoconf-Civic",
        37 => "Remote-ID",
        38 => "Subscriber-ID",
        39 => "Client-FQDN",
        40 => "PANA-agent",
        41 => "POSIX-timezone",
        42 => "POSIX-tz-database",
        43 => "Echo-request-option",
        44 => "Lease-query",
        45 => "LQ-client-data",
        46 => "Clt-time",
        47 => "LQ-relay-data",
        48 => "LQ-client-link",
        56 => "NTP-server",
        64 => "AFTR-Name",
        112 => "MUD-URL",
        _ => return format!("opt_{t}"),
    };
    name.to_string()
}

/// The options from `cp` to `ep`, each " (name ...)".
fn options(out: &mut String, d: &[u8], mut cp: usize, ep: usize) -> Option<()> {
    while cp < ep {
        // (`ep` is never past the capture's end: whatever it bounds can be read.)
        let (Some(t), Some(len), true) = (be16(d, cp), be16(d, cp + 2), cp + 4 <= ep) else {
            out.push_str(MARK);
            return Some(());
        };
        let len = usize::from(len);
        if ep < cp + 4 + len {
            out.push_str(MARK);
            return Some(());
        }
        let _ = write!(out, " ({}", opt_name(t));
        if d.get(cp + 4..cp + 4 + len).is_none() {
            out.push_str(MARK);
            return Some(());
        }
        if !option(out, d, t, cp + 4, len)? {
            out.push_str(MARK);
            return Some(());
        }
        cp += 4 + len;
    }
    Some(())
}

/// Hex digits of `d[from..to]`, as far as the slice goes.
fn hex(out: &mut String, d: &[u8], from: usize, to: usize) {
    for b in d.get(from..to).unwrap_or_default() {
        let _ = write!(out, "{b:02x}");
    }
}

/// An option's value at `at`, `len` bytes (all captured) and its closing parenthesis;
/// `Some(false)` when a name in it ran out.
fn option(out: &mut String, d: &[u8], t: u16, at: usize, len: usize) -> Option<bool> {
    let end = at + len;
    let word = |i: usize| be32(d, at + i).unwrap_or_default();
    let _ = match t {
        1 | 2 => duid(out, d, at, len),
        5 if len >= 24 => {
            let _ = write!(out, " {}", ip6(d, at)?);
            let _ = write!(out, " pltime:{} vltime:{}", word(16), word(20));
            nested(out, d, at + 24, end)?;
            write!(out, ")")
        }
        6 | 43 if len % 2 == 0 => {
            for i in (at..end).step_by(2) {
                let _ = write!(out, " {}", opt_name(be16(d, i)?));
            }
            write!(out, ")")
        }
        7 if len == 1 => write!(out, " {})", u8at(d, at)?),
        8 if len == 2 => write!(out, " {})", be16(d, at)?),
        9 => {
            out.push_str(" (");
            let inner = d.get(..end).unwrap_or(d);
            message(out, inner, at, len, 1)?;
            write!(out, ")")
        }
        11 if len >= 11 => auth(out, d, at, len),
        14 | 20 => write!(out, ")"),
        18 | 38 => {
            out.push(' ');
            hex(out, d, at, at + len.min(10));
            write!(out, "...)")
        }
        19 if len == 1 => match u8at(d, at)? {
            5 => write!(out, " for renew)"),
            11 => write!(out, " for inf-req)"),
            r => write!(out, " for ???({r:02x}))"),
        },
        22 | 23 | 31 | 27 | 28 | 34 | 40 | 48 if len % 16 == 0 => {
            for i in (at..end).step_by(16) {
                let _ = write!(out, " {}", ip6(d, i)?);
            }
            write!(out, ")")
        }
        21 | 24 => {
            let mut tp = at;
            while tp < end {
                out.push(' ');
                match name(out, d, tp, end)? {
                    Some(next) => tp = next,
                    None => return Some(false),
                }
            }
            write!(out, ")")
        }
        13 if len >= 2 => match be16(d, at)? {
            c if c > 255 => write!(out, " INVALID code)"),
            c => write!(out, " {})", status(c)),
        },
        3 | 25 if len >= 12 => {
            let _ = write!(out, " IAID:{} T1:{} T2:{}", word(0), word(4), word(8));
            nested(out, d, at + 12, end)?;
            write!(out, ")")
        }
        4 if len >= 4 => {
            let _ = write!(out, " IAID:{}", word(0));
            nested(out, d, at + 4, end)?;
            write!(out, ")")
        }
        26 if len >= 25 => {
            let _ = write!(out, " {}/{}", ip6(d, at + 9)?, u8at(d, at + 8)?);
            let _ = write!(out, " pltime:{} vltime:{}", word(0), word(4));
            nested(out, d, at + 25, end)?;
            write!(out, ")")
        }
        32 | 46 if len == 4 => write!(out, " {})", word(0)),
        _ => return others(out, d, t, at, len),
    };
    Some(true)
}

/// The sub-options after a fixed part, when there are any.
fn nested(out: &mut String, d: &[u8], from: usize, end: usize) -> Option<()> {
    if from < end {
        options(out, d, from, end)?;
    }
    Some(())
}

fn status(c: u16) -> String {
    let name = match c {
        0 => "Success",
        1 => "UnspecFail",
        2 => "NoAddrsAvail",
        3 => "NoBinding",
        4 => "NotOnLink",
        5 => "UseMulticast",
        6 => "NoPrefixAvail",
        7 => "UnknownQueryType",
        8 => "MalformedQuery",
        9 => "NotConfigured",
        10 => "NotAllowed",
        _ => return format!("code{c}"),
    };
    name.to_string()
}

/// A client or server DUID.
fn duid(out: &mut String, d: &[u8], at: usize, len: usize) -> std::fmt::Result {
    let Some(ty) = be16(d, at).filter(|_| len >= 2) else {
        return write!(out, " ?)");
    };
    match ty {
        1 if len >= 8 => {
            let (hw, time) = (be16(d, at + 2), be32(d, at + 4));
            let _ = write!(
                out,
                " hwaddr/time type {} time {} ",
                hw.unwrap_or_default(),
                time.unwrap_or_default()
            );
            hex(out, d, at + 8, at + len);
        }
        2 if len >= 10 => {
            out.push_str(" vid ");
            hex(out, d, at + 2, at + 10);
        }
        3 if len >= 4 => {
            let _ = write!(out, " hwaddr type {} ", be16(d, at + 2).unwrap_or_default());
            hex(out, d, at + 4, at + len);
        }
        1..=3 => return write!(out, " ?)"),
        _ => return write!(out, " type {ty})"),
    }
    write!(out, ")")
}

/// The authentication option (RFC 8415 section 21.11).
fn auth(out: &mut String, d: &[u8], at: usize, len: usize) -> std::fmt::Result {
    let byte = |i: usize| u8at(d, at + i).unwrap_or_default();
    let word = |i: usize| be32(d, at + i).unwrap_or_default();
    let _ = match byte(0) {
        2 => write!(out, " proto: delayed"),
        3 => write!(out, " proto: reconfigure"),
        p => write!(out, " proto: {p}"),
    };
    let _ = match byte(1) {
        1 => write!(out, ", alg: HMAC-MD5"),
        a => write!(out, ", alg: {a}"),
    };
    let _ = match byte(2) {
        0 => write!(out, ", RDM: mono"),
        r => write!(out, ", RDM: {r}"),
    };
    out.push_str(", RD:");
    for i in 0..4 {
        let _ = write!(out, " {:04x}", be16(d, at + 3 + 2 * i).unwrap_or_default());
    }
    let info = len - 11;
    match byte(0) {
        2 if info == 0 => {}
        2 if info < 20 => out.push_str(" ??"),
        2 => {
            let realm = info - 20;
            if realm > 0 {
                out.push_str(", realm: ");
            }
            hex(out, d, at + 11, at + 11 + realm);
            let _ = write!(out, ", key ID: {:08x}, HMAC-MD5:", word(11 + realm));
            for i in 0..4 {
                let _ = write!(out, " {:08x}", word(15 + realm + 4 * i));
            }
        }
        3 if info == 17 => {
            out.push_str(match byte(11) {
                1 => " reconfig-key",
                2 => " type: HMAC-MD5",
                _ => " type: ??",
            });
            out.push_str(" value:");
            for i in 0..4 {
                let _ = write!(out, " {:08x}", word(12 + 4 * i));
            }
        }
        _ => out.push_str(" ??"),
    }
    write!(out, ")")
}

/// The options `option` leaves: those with a lower bound tcpdump checks, and the rest.
fn others(out: &mut String, d: &[u8], t: u16, at: usize, len: usize) -> Option<bool> {
    let end = at + len;
    let _ = match t {
        37 if len >= 4 => {
            let _ = write!(out, " {} ", be32(d, at)?);
            hex(out, d, at + 4, at + len.min(14));
            write!(out, "...)")
        }
        44 if len >= 17 => {
            let _ = match u8at(d, at)? {
                1 => write!(out, " by-address"),
                2 => write!(out, " by-clientID"),
                q => write!(out, " type_{q}"),
            };
            let _ = write!(out, " {}", ip6(d, at + 1)?);
            nested(out, d, at + 17, end)?;
            write!(out, ")")
        }
        45 => {
            nested(out, d, at, end)?;
            write!(out, ")")
        }
        47 if len >= 16 => {
            let _ = write!(out, " {} ", ip6(d, at)?);
            hex(out, d, at + 16, at + len.min(26));
            write!(out, "...)")
        }
        56 if len >= 4 => return ntp_server(out, d, at, end),
        64 if len >= 3 => {
            aftr(out, d, at, len)?;
            write!(out, ")")
        }
        41 | 42 | 112 if len >= 5 => {
            out.push(' ');
            printjnp(out, d.get(at..).unwrap_or_default(), len)?;
            write!(out, ")")
        }
        3..=8 | 11 | 13 | 19 | 22 | 23 | 25..=28 | 31 | 32 | 34 | 37 | 40 | 41 | 42 => {
            write!(out, " ?)")
        }
        43 | 44 | 46..=48 | 56 | 64 | 112 => write!(out, " ?)"),
        _ => write!(out, ")"),
    };
    Some(true)
}

/// The NTP server option's suboptions (RFC 5908).
fn ntp_server(out: &mut String, d: &[u8], at: usize, end: usize) -> Option<bool> {
    let mut tp = at;
    while tp + 4 < end {
        let (code, sl) = (be16(d, tp)?, usize::from(be16(d, tp + 2)?));
        tp += 4;
        if tp + sl > end {
            return Some(false);
        }
        let _ = write!(out, " subopt:{code}");
        match code {
            1 | 2 if sl == 16 => {
                let _ = write!(out, " {}", ip6(d, tp)?);
            }
            3 => {
                out.push(' ');
                if name(out, d, tp, tp + sl)?.is_none() {
                    return Some(false);
                }
            }
            _ => out.push_str(" ?"),
        }
        tp += sl;
    }
    out.push(')');
    Some(true)
}

/// The AFTR name (RFC 6334): labels joined by dots, " ?" for one too long.
fn aftr(out: &mut String, d: &[u8], at: usize, len: usize) -> Option<()> {
    out.push(' ');
    let (mut tp, mut remain) = (at, len);
    while remain > 0 && u8at(d, tp)? != 0 {
        let l = usize::from(u8at(d, tp)?);
        tp += 1;
        if l + 1 < remain {
            printjnp(out, d.get(tp..).unwrap_or_default(), l)?;
            tp += l;
            remain -= l + 1;
            if u8at(d, tp)? != 0 {
                out.push('.');
            }
        } else {
            out.push_str(" ?");
            break;
        }
    }
    Some(())
}

/// A label's length by its first byte (tcpdump's labellen): `None` for one it cannot read,
/// with a note for a bad type.
fn label_len(out: &mut String, d: &[u8], cp: usize) -> Option<usize> {
    let i = u8at(d, cp)?;
    match i & 0xc0 {
        0x40 if i & 0x3f != 1 => {
            let _ = write!(out, "<ELT {}>", i & 0x3f);
            None
        }
        0x40 => {
            let bits = match u8at(d, cp + 1)? {
                0 => 256,
                b => usize::from(b),
            };
            Some(bits.div_ceil(8) + 1)
        }
        0x80 => {
            out.push_str("<BAD LABEL TYPE>");
            None
        }
        _ => Some(usize::from(i)),
    }
}

/// A domain name at `cp` as tcpdump's fqdn_print reads it, compression pointers counted
/// from `bp` (for DHCPv6, the option's end, as tcpdump passes it): `Some(Some(next))` after
/// the name, `Some(None)` when it ran out or was bad, `None` when a bit label was cut.
fn name(out: &mut String, d: &[u8], cp: usize, bp: usize) -> Option<Option<usize>> {
    const MAXCDNAME: usize = 255;
    let Some(mut l) = label_len(out, d, cp) else {
        return Some(None);
    };
    let mut max_offset = (cp as u32).wrapping_sub(bp as u32) as usize;
    let mut i = usize::from(u8at(d, cp)?);
    let mut cp = cp + 1;
    let mut compress = false;
    let mut rp = cp + l;
    if i == 0 {
        out.push('.');
        return Some(Some(rp));
    }
    let mut chars = 0usize;
    while i != 0 && cp < d.len() {
        match i & 0xc0 {
            0xc0 => {
                if !compress {
                    rp = cp + 1;
                    compress = true;
                }
                let Some(low) = u8at(d, cp) else {
                    return Some(None);
                };
                let offset = ((i << 8) | usize::from(low)) & 0x3fff;
                if offset >= max_offset {
                    out.push_str("<BAD PTR>");
                    return Some(None);
                }
                max_offset = offset;
                cp = bp + offset;
                let (Some(next), Some(len)) = (u8at(d, cp), label_len(out, d, cp)) else {
                    return Some(None);
                };
                (i, l) = (usize::from(next), len);
                cp += 1;
                continue;
            }
            0x40 => bit_label(out, d, cp)?,
            _ => {
                let show = l.min(MAXCDNAME.saturating_sub(chars));
                if show > 0 && printn(out, d.get(cp..).unwrap_or_default(), show) {
                    return Some(None);
                }
                chars += l;
            }
        }
        cp += l;
        if chars <= MAXCDNAME {
            out.push('.');
        }
        chars += 1;
        let (Some(next), Some(len)) = (u8at(d, cp), label_len(out, d, cp)) else {
            return Some(None);
        };
        (i, l) = (usize::from(next), len);
        cp += 1;
        if !compress {
            rp += l + 1;
        }
    }
    if chars > MAXCDNAME {
        out.push_str("<DOMAIN NAME TOO LONG>");
    }
    Some(Some(rp))
}

/// An EDNS0 bit-string label as "\[xHEX/BITS]"; `None` when the capture cuts it.
fn bit_label(out: &mut String, d: &[u8], cp: usize) -> Option<()> {
    let bits = match u8at(d, cp)? {
        0 => 256,
        b => usize::from(b),
    };
    let lim = cp + 1 + bits.div_ceil(4);
    out.push_str("\\[x");
    let (mut p, mut b) = (cp + 1, bits);
    while p < lim && b > 7 {
        let _ = write!(out, "{:02x}", u8at(d, p)?);
        b -= 8;
        p += 1;
    }
    if b > 4 {
        let _ = write!(out, "{:02x}", u32::from(u8at(d, p)?) & (0xff << (8 - b)));
    } else if b > 0 {
        let _ = write!(out, "{:x}", u32::from(u8at(d, p)? >> 4) & (0x0f << (4 - b)));
    }
    let _ = write!(out, "/{bits}]");
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(data: &[u8], verbose: u8) -> String {
        super::super::payload::printed(print, data, (546, 547), verbose)
    }

    #[test]
    fn a_solicit_and_its_options() {
        let m = [
            1, 0xab, 0xcd, 0xef, 0, 8, 0, 2, 0, 5, 0, 6, 0, 2, 0, 23, 0, 24, 0, 3, 1, b'a', 0,
        ];
        assert_eq!(text(&m, 0), "dhcp6 solicit");
        assert_eq!(
            text(&m, 1),
            "dhcp6 solicit (xid=abcdef (elapsed-time 5) (option-request DNS-server) \
             (DNS-search-list a.))"
        );
        assert_eq!(
            text(&m[..20], 1),
            "dhcp6 solicit (xid=abcdef (elapsed-time 5) (option-request DNS-server) [|dhcp6])"
        );
        assert_eq!(text(&m[..3], 1), "dhcp6 [|dhcp6]");
    }

    #[test]
    fn names_follow_labels_and_stop_at_bad_ones() {
        let d = b"\x03www\x07example\x00\x01";
        let mut s = String::new();
        assert_eq!(name(&mut s, d, 0, d.len()), Some(Some(13)));
        assert_eq!(s, "www.example.");
        let mut s = String::new();
        assert_eq!(name(&mut s, b"\x80", 0, 1), Some(None));
        assert_eq!(s, "<BAD LABEL TYPE>");
    }
}
