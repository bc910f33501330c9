//! BOOTP/DHCP (UDP 67/68) as tcpdump 4.99's print-bootp.c prints it: the op, the client's
//! MAC address and the length; with `-v` the header's fields that are set and the RFC 1048
//! options (or the CMU vendor area), one a line.

use std::fmt::Write as _;

use super::nd::{be32, hex_print, printn, printztn, u8at};
use super::Payload;
use crate::dissect::field::{be16, v4};

/// Where the fixed header's fields are.
const CHADDR: usize = 28;
const SNAME: usize = 44;
const FILE: usize = 108;
const VEND: usize = 236;

/// Prints a BOOTP/DHCP message.
pub fn print(out: &mut String, p: &Payload<'_>) {
    if header(out, p).is_none() {
        out.push_str(" [|bootp]");
    }
}

fn header(out: &mut String, p: &Payload<'_>) -> Option<()> {
    let d = p.data;
    let op = u8at(d, 0)?;
    match op {
        1 => out.push_str("BOOTP/DHCP, Request"),
        2 => out.push_str("BOOTP/DHCP, Reply"),
        _ => {
            let _ = write!(out, "BOOTP/DHCP, unknown (0x{op:02x})");
        }
    }
    let (htype, hlen) = (u8at(d, 1)?, u8at(d, 2)?);
    let ether = htype == 1 && hlen == 6;
    if ether && op == 1 {
        client_mac(out, " from ", d, p.names)?;
    }
    let _ = write!(out, ", length {}", p.len);
    if p.verbose == 0 {
        return Some(());
    }
    be16(d, 8)?;
    if htype != 1 {
        let _ = write!(out, ", htype {htype}");
    }
    if !ether {
        let _ = write!(out, ", hlen {hlen}");
    }
    let hops = u8at(d, 3)?;
    if hops != 0 {
        let _ = write!(out, ", hops {hops}");
    }
    let xid = be32(d, 4)?;
    if xid != 0 {
        let _ = write!(out, ", xid 0x{xid:x}");
    }
    let secs = be16(d, 8)?;
    if secs != 0 {
        let _ = write!(out, ", secs {secs}");
    }
    let flags = be16(d, 10)?;
    let bcast = if flags & 0x8000 != 0 {
        "Broadcast"
    } else {
        "none"
    };
    let _ = write!(out, ", Flags [{bcast}]");
    if p.verbose > 1 {
        let _ = write!(out, " (0x{flags:04x})");
    }
    for (at, name) in [
        (12, "Client-IP"),
        (16, "Your-IP"),
        (20, "Server-IP"),
        (24, "Gateway-IP"),
    ] {
        let a = v4(d, at)?;
        if !a.is_unspecified() {
            let _ = write!(out, "\n\t  {name} {a}");
        }
    }
    if ether {
        client_mac(out, "\n\t  Client-Ethernet-Address ", d, p.names)?;
    }
    for (at, n, name) in [(SNAME, 64, "sname"), (FILE, 128, "file")] {
        if u8at(d, at)? != 0 {
            let _ = write!(out, "\n\t  {name} \"");
            let used = printztn(out, d.get(at..).unwrap_or_default(), n);
            out.push('"');
            if used == 0 {
                return None;
            }
        }
    }
    vendor(out, d, p.verbose)
}

/// The vendor area: RFC 1048 options, the CMU layout, or its first word.
fn vendor(out: &mut String, d: &[u8], verbose: u8) -> Option<()> {
    let magic = be32(d, VEND)?;
    match magic {
        0x6382_5363 => options(out, d, VEND, verbose),
        0x434d_5500 => cmu(out, d),
        0 => Some(()),
        _ => {
            let _ = write!(out, "\n\t  Vendor-#0x{magic:x}");
            Some(())
        }
    }
}

/// The CMU vendor area's addresses that are set.
fn cmu(out: &mut String, d: &[u8]) -> Option<()> {
    out.push_str(" vend-cmu");
    be32(d, VEND + 4)?;
    let flags = u8at(d, VEND + 4)?;
    if flags & !1 != 0 {
        let _ = write!(out, " F:0x{flags:x}");
    }
    let sm = if flags & 1 != 0 { "SM" } else { "SM*" };
    for (off, name) in [
        (12, "DG"),
        (8, sm),
        (16, "NS1"),
        (20, "NS2"),
        (24, "IEN1"),
        (28, "IEN2"),
        (32, "TS1"),
        (36, "TS2"),
    ] {
        let a = v4(d, VEND + off)?;
        if !a.is_unspecified() {
            let _ = write!(out, " {name}:{a}");
        }
    }
    Some(())
}

/// The options tcpdump names (its tag2str): code, then the format letter and the name.
const TAGS: &[(u8, &str)] = &[
    (0, " PAD"),
    (1, "iSubnet-Mask"),
    (2, "LTime-Zone"),
    (3, "iDefault-Gateway"),
    (4, "iTime-Server"),
    (5, "iIEN-Name-Server"),
    (6, "iDomain-Name-Server"),
    (7, "iLOG"),
    (8, "iCS"),
    (9, "iLPR-Server"),
    (10, "iIM"),
    (11, "iRL"),
    (12, "aHostname"),
    (13, "sBS"),
    (255, " END"),
    (14, "aDP"),
    (15, "aDomain-Name"),
    (16, "iSS"),
    (17, "aRP"),
    (18, "aEP"),
    (19, "BIPF"),
    (20, "BSRT"),
    (21, "pPF"),
    (22, "sRSZ"),
    (23, "bTTL"),
    (24, "lMTU-Timeout"),
    (25, "sMTU-Table"),
    (26, "sMTU"),
    (27, "BLSN"),
    (28, "iBR"),
    (29, "BMD"),
    (30, "BMS"),
    (31, "BRouter-Discovery"),
    (32, "iRSA"),
    (33, "pStatic-Route"),
    (34, "BUT"),
    (35, "lAT"),
    (36, "BIE"),
    (37, "bTT"),
    (38, "lKI"),
    (39, "BKG"),
    (40, "aYD"),
    (41, "iYS"),
    (42, "iNTP"),
    (43, "bVendor-Option"),
    (44, "iNetbios-Name-Server"),
    (45, "iWDD"),
    (46, "$Netbios-Node"),
    (47, "aNetbios-Scope"),
    (48, "iXFS"),
    (49, "iXDM"),
    (64, "sN+D"),
    (65, "iN+S"),
    (68, "iMH"),
    (69, "iSMTP"),
    (70, "iPOP3"),
    (71, "iNNTP"),
    (72, "iWWW"),
    (73, "iFG"),
    (74, "iIRC"),
    (75, "iSTS"),
    (76, "iSTDA"),
    (50, "iRequested-IP"),
    (51, "lLease-Time"),
    (52, "$OO"),
    (66, "aTFTP"),
    (67, "aBF"),
    (53, " DHCP-Message"),
    (54, "iServer-ID"),
    (55, "bParameter-Request"),
    (56, "aMSG"),
    (57, "sMSZ"),
    (58, "lRN"),
    (59, "lRB"),
    (60, "aVendor-Class"),
    (61, "$Client-ID"),
    (98, "aUAP"),
    (116, "BNOAUTO"),
    (78, "bSLP-DA"),
    (79, "bSLP-SCOPE"),
    (117, "sNSSEARCH"),
    (77, "$User-Class"),
    (118, "iSUBNET"),
    (121, "$Classless-Static-Route"),
    (249, "$Classless-Static-Route-Microsoft"),
    (150, "iTFTP-Server-Address"),
    (80, "aSLP-NA"),
    (81, "$FQDN"),
    (82, "$Agent-Information"),
    (83, "bARMT"),
    (88, "aTZSTR"),
    (89, "bFQDNS"),
    (90, "bAUTH"),
    (91, "LLast-Transaction-Time"),
    (92, "iAssociated-IP"),
    (93, "sARCH"),
    (94, "bNDI"),
    (97, "bGUID"),
    (95, "aLDAP"),
    (100, "aPOSIX-TZ"),
    (101, "aTZ-Name"),
    (112, "iNI"),
    (113, "aNITAG"),
    (114, "aURL"),
    (161, "aMUD-URL"),
];

/// An option's format letter and name ('?' and "Unknown" for one tcpdump does not know).
fn tag(t: u8) -> (char, &'static str) {
    let s = TAGS
        .iter()
        .find(|(code, _)| *code == t)
        .map_or("?Unknown", |(_, s)| *s);
    let mut c = s.chars();
    (c.next().unwrap_or('?'), c.as_str())
}

/// The RFC 1048 options after the magic cookie at `at`, as far as the capture goes (with
/// `-vvv`, the PAD and END options too).
fn options(out: &mut String, d: &[u8], at: usize, verbose: u8) -> Option<()> {
    out.push_str("\n\t  Vendor-rfc1048 Extensions");
    let _ = write!(out, "\n\t    Magic Cookie 0x{:08x}", be32(d, at)?);
    let mut bp = at + 4;
    while let Some(&t) = d.get(bp) {
        bp += 1;
        let edge = t == 0 || t == 255;
        if edge && verbose < 3 {
            if t == 255 {
                return Some(());
            }
            continue;
        }
        let (c, name) = tag(t);
        let len = if edge {
            0
        } else {
            bp += 1;
            usize::from(u8at(d, bp - 1)?)
        };
        let colon = if len > 0 { ": " } else { "" };
        let _ = write!(out, "\n\t    {name} ({t}), length {len}{colon}");
        if t == 0 {
            let pads = d.get(bp..).unwrap_or_default();
            let more = pads.iter().take_while(|&&b| b == 0).count();
            bp += more;
            if more > 0 {
                let _ = write!(out, ", occurs {}", more + 1);
            }
        }
        let v = d.get(bp..bp + len)?;
        bp += len;
        let left = match (t, v) {
            (53, [m]) => {
                out.push_str(dhcp_message(*m).as_str());
                0
            }
            (55, _) => {
                for (i, &inner) in v.iter().enumerate() {
                    out.push_str(if i % 4 == 0 { "\n\t      " } else { ", " });
                    let _ = write!(out, "{} ({inner})", tag(inner).1);
                }
                0
            }
            _ if c == '$' => special(out, t, v),
            _ if c == '?' && len & 1 == 1 => plain(out, 'b', v),
            _ if c == '?' && len & 2 == 2 => plain(out, 's', v),
            _ if c == '?' => plain(out, 'l', v),
            _ => plain(out, c, v),
        };
        if left > 0 {
            let _ = write!(out, "\n\t  trailing data length {left}");
        }
    }
    Some(())
}

fn dhcp_message(m: u8) -> String {
    let name = match m {
        1 => "Discover",
        2 => "Offer",
        3 => "Request",
        4 => "Decline",
        5 => "ACK",
        6 => "NACK",
        7 => "Release",
        8 => "Inform",
        10 => "LeaseQuery",
        11 => "LeaseUnassigned",
        12 => "LeaseUnknown",
        13 => "LeaseActive",
        _ => return format!("Unknown ({m})"),
    };
    name.to_string()
}

/// An option's value in one of the table's formats; returns the bytes left over.
fn plain(out: &mut String, c: char, v: &[u8]) -> usize {
    let width = match c {
        'a' => {
            out.push('"');
            printn(out, v, v.len());
            out.push('"');
            return 0;
        }
        'i' | 'l' | 'L' => 4,
        'p' => 8,
        's' => 2,
        _ => 1,
    };
    let chunks = v.chunks_exact(width);
    let left = chunks.remainder().len();
    for (i, w) in chunks.enumerate() {
        if i > 0 {
            out.push(match c {
                'b' | ' ' | '?' => '.',
                _ => ',',
            });
        }
        let word = be32(w, 0).unwrap_or_default();
        let _ = match (c, w) {
            ('i', _) => write!(out, "{}", std::net::Ipv4Addr::from(word)),
            ('L', _) => write!(out, "{}", word as i32),
            ('l', _) => write!(out, "{word}"),
            ('p', _) => write!(
                out,
                "({}:{})",
                v4(w, 0).unwrap_or(std::net::Ipv4Addr::UNSPECIFIED),
                v4(w, 4).unwrap_or(std::net::Ipv4Addr::UNSPECIFIED)
            ),
            ('s', _) => write!(out, "{}", be16(w, 0).unwrap_or_default()),
            ('B', [0]) => write!(out, "N"),
            ('B', [1]) => write!(out, "Y"),
            ('B', [b]) => write!(out, "{b}?"),
            (_, [b, ..]) => write!(out, "{b}"),
            _ => Ok(()),
        };
    }
    left
}

/// The options tcpdump decodes by hand; returns the bytes left over.
fn special(out: &mut String, t: u8, v: &[u8]) -> usize {
    let len = v.len();
    let short = |out: &mut String, min: usize| {
        let _ = write!(out, "[ERROR: length < {min} bytes]");
    };
    match t {
        46 | 52 => {
            let Some(&b) = v.first() else {
                short(out, 1);
                return 0;
            };
            let name = match (t, b) {
                (46, 1) => "b-node",
                (46, 2) => "p-node",
                (46, 4) => "m-node",
                (46, 8) => "h-node",
                (52, 1) => "file",
                (52, 2) => "sname",
                (52, 3) => "file+sname",
                _ => "",
            };
            if name.is_empty() {
                let _ = write!(out, "#{b}");
            } else {
                out.push_str(name);
            }
            len - 1
        }
        81 => {
            fqdn(out, v);
            0
        }
        61 => {
            client_id(out, v);
            0
        }
        82 => agent(out, v),
        121 | 249 => {
            routes(out, v);
            0
        }
        77 => {
            user_class(out, v);
            0
        }
        _ => {
            let _ = write!(out, "[unknown special tag {t}, size {len}]");
            0
        }
    }
}

/// The client FQDN option (RFC 4702): flags, the RCODEs, the name.
fn fqdn(out: &mut String, v: &[u8]) {
    let [f, r1, r2, name @ ..] = v else {
        out.push_str("[ERROR: length < 3 bytes]");
        return;
    };
    if f & 0xf0 != 0 {
        let _ = write!(out, "[ERROR: MBZ nibble 0x{:x} != 0] ", (f & 0xf0) >> 4);
    }
    if f & 0x0f != 0 {
        out.push('[');
        for (bit, c) in [(1, 'S'), (2, 'O'), (4, 'E'), (8, 'N')] {
            if f & bit != 0 {
                out.push(c);
            }
        }
        out.push_str("] ");
    }
    if *r1 != 0 || *r2 != 0 {
        let _ = write!(out, "{r1}/{r2} ");
    }
    out.push('"');
    printn(out, name, name.len());
    out.push('"');
}

/// The client identifier: text for type 0, else the hardware type and the bytes in hex.
fn client_id(out: &mut String, v: &[u8]) {
    let Some((&ty, rest)) = v.split_first() else {
        out.push_str("[ERROR: length < 1 bytes]");
        return;
    };
    if ty == 0 {
        out.push('"');
        printn(out, rest, rest.len());
        out.push('"');
        return;
    }
    let _ = match ty {
        1 => write!(out, "ether "),
        6 => write!(out, "ieee802 "),
        7 => write!(out, "arcnet "),
        0xf => write!(out, "frelay "),
        0x17 => write!(out, "strip "),
        0x18 => write!(out, "ieee1394 "),
        _ => write!(out, "hardware-type {ty}, "),
    };
    let hex: Vec<String> = rest.iter().map(|b| format!("{b:02x}")).collect();
    out.push_str(&hex.join(":"));
}

/// The relay agent information's suboptions (RFC 3046); returns the byte left over.
fn agent(out: &mut String, v: &[u8]) -> usize {
    let mut rest = v;
    while let [sub, sublen, tail @ ..] = rest {
        let n = usize::from(*sublen);
        let name = match sub {
            1 => "Circuit-ID",
            2 => "Remote-ID",
            6 => "Subscriber-ID",
            _ => "Unknown",
        };
        let _ = write!(out, "\n\t      {name} SubOption {sub}, length {n}: ");
        let Some(body) = tail.get(..n) else {
            out.truncate(out.len() - 2);
            out.push_str(": length goes past end of option");
            return 0;
        };
        if matches!(sub, 1 | 2 | 6) {
            printn(out, body, n);
        } else {
            let _ = hex_print(out, "\n\t\t", body, n);
        }
        rest = tail.get(n..).unwrap_or_default();
    }
    rest.len()
}

/// Classless static routes (RFC 3442): "(dest/width:router)" each.
fn routes(out: &mut String, v: &[u8]) {
    if v.len() < 5 {
        out.push_str("[ERROR: length < 5 bytes]");
        return;
    }
    let mut rest = v;
    let mut first = true;
    while let Some((&width, tail)) = rest.split_first() {
        if !first {
            out.push(',');
        }
        first = false;
        if width > 32 {
            let _ = write!(out, "[ERROR: Mask width ({width}) > 32]");
            return;
        }
        let sig = usize::from(width).div_ceil(8);
        let (Some(octets), Some(router)) = (tail.get(..sig), v4(tail, sig)) else {
            let _ = write!(
                out,
                "[ERROR: Remaining length ({}) < {} bytes]",
                tail.len(),
                sig + 4
            );
            return;
        };
        out.push('(');
        if width == 0 {
            out.push_str("default");
        } else {
            let dest: Vec<String> = octets.iter().map(u8::to_string).collect();
            out.push_str(&dest.join("."));
            for _ in sig..4 {
                out.push_str(".0");
            }
            let _ = write!(out, "/{width}");
        }
        let _ = write!(out, ":{router})");
        rest = tail.get(sig + 4..).unwrap_or_default();
    }
}

/// The user class option's instances (RFC 3004).
fn user_class(out: &mut String, v: &[u8]) {
    if v.len() < 2 {
        out.push_str("[ERROR: length < 2 bytes]");
        return;
    }
    let mut rest = v;
    let mut n = 1;
    while let Some((&sublen, tail)) = rest.split_first() {
        let _ = write!(out, "\n\t      instance#{n}: ");
        let len = usize::from(sublen);
        if len == 0 {
            out.push_str("[ERROR: suboption length must be non-zero]");
            return;
        }
        let Some(body) = tail.get(..len) else {
            out.push_str("[ERROR: invalid option]");
            return;
        };
        out.push('"');
        printn(out, body, len);
        let _ = write!(out, "\", length {len}");
        n += 1;
        rest = tail.get(len..).unwrap_or_default();
    }
}

/// The client's MAC address; without `-n` with its maker, as tcpdump names a MAC address
/// `/etc/ethers` does not know.
/// (After `before`, when the capture holds it.)
fn client_mac(out: &mut String, before: &str, d: &[u8], names: bool) -> Option<()> {
    let m = d.get(CHADDR..CHADDR + 6)?;
    out.push_str(before);
    crate::dissect::resolve::mac(out, m, names);
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(data: &[u8], verbose: u8) -> String {
        super::super::payload::printed(print, data, (68, 67), verbose)
    }

    fn discover() -> Vec<u8> {
        let mut m = vec![1, 1, 6, 0, 0xde, 0xad, 0xbe, 0xef, 0, 0, 0x80, 0];
        m.extend_from_slice(&[0; 16]);
        m.extend_from_slice(&[2, 0, 0, 0, 0, 1]);
        m.resize(VEND, 0);
        m.extend_from_slice(&[
            99, 130, 83, 99, 53, 1, 1, 0, 0, 55, 3, 1, 3, 200, 1, 5, 255, 255,
        ]);
        m.extend_from_slice(&[0, 0, 7, 255]);
        m
    }

    #[test]
    fn a_discover_prints_its_client_and_options() {
        let m = discover();
        assert_eq!(
            text(&m, 0),
            "BOOTP/DHCP, Request from 02:00:00:00:00:01, length 258"
        );
        assert_eq!(
            text(&m, 2),
            "BOOTP/DHCP, Request from 02:00:00:00:00:01, length 258, xid 0xdeadbeef, \
             Flags [Broadcast] (0x8000)\n\t  Client-Ethernet-Address 02:00:00:00:00:01\
             \n\t  Vendor-rfc1048 Extensions\n\t    Magic Cookie 0x63825363\
             \n\t    DHCP-Message (53), length 1: Discover\
             \n\t    Parameter-Request (55), length 3: \
             \n\t      Subnet-Mask (1), Default-Gateway (3), Unknown (200)\
             \n\t    Subnet-Mask (1), length 5: 255.255.0.0\n\t  trailing data length 1"
        );
        // -vvv shows the PADs (counted) and the END.
        let vvv = text(&m, 3);
        assert!(
            vvv.contains("\n\t    PAD (0), length 0, occurs 2\n"),
            "{vvv}"
        );
        assert!(vvv.ends_with("\n\t    END (255), length 0"), "{vvv}");
    }

    #[test]
    fn a_cut_message_ends_with_the_mark() {
        let m = discover();
        for cut in 0..VEND + 4 {
            let s = text(&m[..cut], 1);
            assert!(s.ends_with(" [|bootp]"), "{cut}: {s}");
        }
        assert_eq!(text(&m[..2], 0), "BOOTP/DHCP, Request [|bootp]");
    }
}
