//! LLDP (IEEE 802.1AB) as tcpdump 4.99 prints it: `LLDP, length N` and the system name
//! (`: lab`); with `-v` every TLV on a line of its own, the chassis and port ids, the time
//! to live, the descriptions, the capabilities and the management address decoded, the
//! others (and, with `-vv`, all) dumped in hex. A TLV longer than what is left ends the line
//! with ` [|lldp]`.

use std::fmt::Write as _;

use super::field::{be16, v4, v6};

/// tcpdump's mark of a packet cut short.
const TRUNC: &str = " [|lldp]";
/// The indent of a TLV's own lines (and of its hex dump).
const INDENT: &str = "\n\t  ";

fn be32(d: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(d.get(at..at + 4)?.try_into().ok()?))
}

fn tlv_name(t: u16) -> &'static str {
    match t {
        0 => "End",
        1 => "Chassis ID",
        2 => "Port ID",
        3 => "Time to Live",
        4 => "Port Description",
        5 => "System Name",
        6 => "System Description",
        7 => "System Capabilities",
        8 => "Management Address",
        127 => "Organization specific",
        _ => "Unknown",
    }
}

fn chassis_subtype(s: u8) -> &'static str {
    match s {
        1 => "Chassis component",
        2 => "Interface alias",
        3 => "Port component",
        4 => "MAC address",
        5 => "Network address",
        6 => "Interface name",
        7 => "Local",
        _ => "Unknown",
    }
}

fn port_subtype(s: u8) -> &'static str {
    match s {
        1 => "Interface alias",
        2 => "Port component",
        3 => "MAC address",
        4 => "Network Address",
        5 => "Interface Name",
        6 => "Agent circuit ID",
        7 => "Local",
        _ => "Unknown",
    }
}

/// An address family's name (tcpdump's af_values, the first ones).
fn af_name(af: u8) -> &'static str {
    match af {
        0 => "Reserved",
        1 => "IPv4",
        2 => "IPv6",
        3 => "NSAP",
        4 => "HDLC",
        5 => "BBN 1822",
        6 => "802",
        7 => "E.163",
        8 => "E.164",
        9 => "F.69",
        10 => "X.121",
        11 => "IPX",
        12 => "Appletalk",
        13 => "Decnet IV",
        14 => "Banyan Vines",
        15 => "E.164 with NSAP subaddress",
        16 => "DNS",
        17 => "Distinguished Name",
        18 => "AS Number",
        19 => "XTP over IP version 4",
        20 => "XTP over IP version 6",
        21 => "XTP native mode XTP",
        22 => "Fibre Channel World-Wide Port Name",
        23 => "Fibre Channel World-Wide Node Name",
        24 => "GWID",
        _ => "Unknown",
    }
}

/// An OUI's name (tcpdump's oui_values: 00-80-c2 is found as "Ethernet bridged" first).
fn oui_name(oui: u32) -> &'static str {
    match oui {
        0x000000 => "Ethernet",
        0x00000c => "Cisco",
        0x00005e => "IANA",
        0x000081 => "Nortel Networks SONMP",
        0x0000f8 => "Cisco bridged",
        0x0080c2 => "Ethernet bridged",
        0x00a03e => "ATM Forum",
        0x00e02f => "DOCSIS Spanning Tree",
        0x080007 => "Appletalk",
        0x009069 => "Juniper",
        0x080009 => "Hewlett-Packard",
        0x00120f => "IEEE 802.3 Private",
        0x0012bb => "ANSI/TIA",
        0x001b21 => "DCBX",
        0x002320 => "Nicira Networks",
        0x5c16c7 => "Big Switch Networks",
        0xb0d2f5 => "Vello Systems",
        0x002481 => "HP",
        0x0004ea => "HP-Labs",
        0x748771 => "Infoblox Inc",
        0xa42305 => "Open Networking Lab",
        0x00049f => "Freescale",
        0x0015ad => "Netronome",
        0x001018 => "Broadcom",
        0x00e004 => "PMC-Sierra",
        0xd0f0db => "Ericsson",
        _ => "Unknown",
    }
}

/// The capabilities set in `v`, as tcpdump lists them (`none` without one).
fn capabilities(v: u16) -> String {
    let names = [
        "Other",
        "Repeater",
        "Bridge",
        "WLAN AP",
        "Router",
        "Telephone",
        "Docsis",
        "Station Only",
    ];
    let set: Vec<&str> = names
        .iter()
        .enumerate()
        .filter(|(i, _)| v & (1 << i) != 0)
        .map(|(_, &n)| n)
        .collect();
    if set.is_empty() {
        "none".to_string()
    } else {
        set.join(", ")
    }
}

/// A MAC address as tcpdump's `-n` prints it.
fn mac(d: &[u8]) -> Option<String> {
    let m = d.get(..6)?;
    let parts: Vec<String> = m.iter().map(|b| format!("{b:02x}")).collect();
    Some(parts.join(":"))
}

/// Up to `n` bytes of text, to a NUL (tcpdump's nd_printjnp).
fn text(out: &mut String, d: &[u8]) {
    for &c in d.iter().take_while(|&&c| c != 0) {
        super::dump::print_char(out, c);
    }
}

/// tcpdump's hex_print: 16 bytes a line, each line `INDENT0xOFFS: `.
fn hex(out: &mut String, d: &[u8]) {
    for (i, pair) in d.chunks(2).enumerate() {
        if i % 8 == 0 {
            let _ = write!(out, "{INDENT}0x{:04x}: ", i * 2);
        }
        match pair {
            [a, b] => {
                let _ = write!(out, " {a:02x}{b:02x}");
            }
            [a] => {
                let _ = write!(out, " {a:02x}");
            }
            _ => {}
        }
    }
}

/// A network address (family, address) as lldp_network_addr_print gives it; `None` when
/// too short for its family.
fn network_addr(d: &[u8]) -> Option<String> {
    let (&af, rest) = d.split_first()?;
    let addr = match af {
        1 => Some(v4(rest, 0)?.to_string()),
        2 => Some(v6(rest, 0)?.to_string()),
        6 => Some(mac(rest)?),
        _ => None,
    };
    Some(match addr {
        Some(a) => format!("AFI {} ({af}): {a}", af_name(af)),
        None => format!("AFI {} ({af}), no AF printer !", af_name(af)),
    })
}

/// The LLDPDU in `data` (after the Ethernet header), `len` bytes long, printed as tcpdump's
/// lldp_print does, with `-v`'s count `verbose`.
pub fn lldp(out: &mut String, data: &[u8], len: usize, verbose: u8) {
    let _ = write!(out, "LLDP, length {len}");
    let (mut at, mut left) = (0usize, len);
    // Each turn moves on by a captured TLV (2 bytes at least) or ends the walk.
    while left >= 2 {
        let Some(tl) = be16(data, at) else {
            out.push_str(TRUNC);
            return;
        };
        let (t, n) = (tl >> 9, usize::from(tl & 0x1ff));
        at += 2;
        left -= 2;
        if verbose > 0 {
            let _ = write!(out, "\n\t{} TLV ({t}), length {n}", tlv_name(t));
        }
        if t == 0 || n == 0 {
            return;
        }
        let Some(v) = data.get(at..at + n).filter(|_| left >= n) else {
            out.push_str(TRUNC);
            return;
        };
        let Some(dump) = tlv(out, t, v, verbose) else {
            out.push_str(TRUNC);
            return;
        };
        if verbose > 1 || (verbose > 0 && dump) {
            hex(out, v);
        }
        at += n;
        left -= n;
    }
}

/// One TLV's value `v`: whether it is to be dumped in hex too, `None` when too short.
fn tlv(out: &mut String, t: u16, v: &[u8], verbose: u8) -> Option<bool> {
    let verbose = verbose > 0;
    match t {
        5 => {
            out.push_str(": ");
            text(out, v);
        }
        _ if !verbose => return Some(false),
        1 | 2 => return id(out, t, v),
        3 => {
            if v.len() < 2 {
                return None;
            }
            let _ = write!(out, ": TTL {}s", be16(v, 0)?);
        }
        4 => {
            out.push_str(": ");
            text(out, v);
        }
        6 => {
            out.push_str(INDENT);
            text(out, v);
        }
        7 => {
            if v.len() < 4 {
                return None;
            }
            let (cap, ena) = (be16(v, 0)?, be16(v, 2)?);
            let _ = write!(
                out,
                "{INDENT}System  Capabilities [{}] (0x{cap:04x})",
                capabilities(cap)
            );
            let _ = write!(
                out,
                "{INDENT}Enabled Capabilities [{}] (0x{ena:04x})",
                capabilities(ena)
            );
        }
        8 => management(out, v)?,
        127 => {
            let [a, b, c]: [u8; 3] = v.get(..3)?.try_into().ok()?;
            let oui = u32::from_be_bytes([0, a, b, c]);
            let _ = write!(out, ": OUI {} (0x{oui:06x})", oui_name(oui));
            // tcpdump decodes 802.1's, 802.3's, IANA's, TIA's and DCBX's own TLVs; they
            // are dumped here.
            return Some(true);
        }
        _ => return Some(true),
    }
    Some(false)
}

/// A chassis (`t` 1) or port (2) id: its subtype and the id.
fn id(out: &mut String, t: u16, v: &[u8]) -> Option<bool> {
    if v.len() < 2 {
        return None;
    }
    let (&sub, rest) = v.split_first()?;
    let (name, mac_sub, addr_sub) = if t == 1 {
        (chassis_subtype(sub), 4, 5)
    } else {
        (port_subtype(sub), 3, 4)
    };
    let _ = write!(out, "{INDENT}Subtype {name} ({sub}): ");
    match sub {
        _ if sub == mac_sub => out.push_str(&mac(rest)?),
        _ if sub == addr_sub => out.push_str(&network_addr(rest)?),
        1..=7 => text(out, rest),
        _ => return Some(true),
    }
    Some(false)
}

/// The management address TLV; `None` when a part is missing.
fn management(out: &mut String, v: &[u8]) -> Option<()> {
    let (&alen, rest) = v.split_first()?;
    let alen = usize::from(alen);
    let addr = network_addr(rest.get(..alen)?)?;
    let _ = write!(out, "{INDENT}Management Address length {alen}, {addr}");
    let rest = rest.get(alen..)?;
    if rest.len() < 5 {
        return None;
    }
    let &sub = rest.first()?;
    let name = match sub {
        2 => "Interface Index",
        3 => "System Port Number",
        _ => "Unknown",
    };
    let _ = write!(
        out,
        "{INDENT}{name} Interface Numbering ({sub}): {}",
        be32(rest, 1)?
    );
    let rest = rest.get(5..)?;
    if let Some((&olen, oid)) = rest.split_first() {
        let olen = usize::from(olen);
        let oid = oid.get(..olen)?;
        if olen > 0 {
            let _ = write!(out, "{INDENT}OID length {olen}");
            text(out, oid);
        }
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tlv_bytes(t: u16, v: &[u8]) -> Vec<u8> {
        let mut b = ((t << 9) | v.len() as u16).to_be_bytes().to_vec();
        b.extend_from_slice(v);
        b
    }

    fn lab() -> Vec<u8> {
        [
            tlv_bytes(1, &[4, 2, 0, 0, 0, 0, 1]),
            tlv_bytes(2, b"\x05eth0"),
            tlv_bytes(3, &[0, 120]),
            tlv_bytes(5, b"lab"),
            tlv_bytes(7, &[0, 0x14, 0, 0x04]),
            tlv_bytes(8, &[5, 1, 10, 0, 0, 1, 2, 0, 0, 0, 3, 0]),
            tlv_bytes(0, &[]),
        ]
        .concat()
    }

    fn text_of(d: &[u8], len: usize, verbose: u8) -> String {
        let mut s = String::new();
        lldp(&mut s, d, len, verbose);
        s
    }

    #[test]
    fn default_and_verbose() {
        let d = lab();
        assert_eq!(
            text_of(&d, d.len(), 0),
            format!("LLDP, length {}: lab", d.len())
        );
        let v = text_of(&d, d.len(), 1);
        assert!(v.contains(
            "\n\tChassis ID TLV (1), length 7\n\t  Subtype MAC address (4): 02:00:00:00:00:01"
        ));
        assert!(v.contains("\n\t  Subtype Interface Name (5): eth0"));
        assert!(v.contains(": TTL 120s"));
        assert!(v.contains("System  Capabilities [Bridge, Router] (0x0014)"));
        assert!(v.contains("Management Address length 5, AFI IPv4 (1): 10.0.0.1\n\t  Interface Index Interface Numbering (2): 3"));
        assert!(v.ends_with("\n\tEnd TLV (0), length 0"));
        let vv = text_of(&d, d.len(), 2);
        assert!(vv.contains("\n\t  0x0000:  0402 0000 0000 01"));
        assert_eq!(
            text_of(&d[..10], d.len(), 0),
            format!("LLDP, length {} [|lldp]", d.len())
        );
    }

    #[test]
    fn hex_lines() {
        let mut s = String::new();
        hex(&mut s, &(0u8..19).collect::<Vec<_>>());
        assert_eq!(
            s,
            "\n\t  0x0000:  0001 0203 0405 0607 0809 0a0b 0c0d 0e0f\n\t  0x0010:  1011 12"
        );
    }

    #[test]
    fn hostile_bytes_never_panic() {
        let mut seed: u32 = 5;
        for n in 0..500usize {
            let mut d = Vec::new();
            for _ in 0..(n % 120) {
                seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
                d.push((seed >> 16) as u8 & if n % 2 == 0 { 0x11 } else { 0xff });
            }
            for v in 0..3 {
                let _ = text_of(&d, d.len(), v);
                let _ = text_of(&d, d.len() + 7, v);
            }
        }
    }
}
