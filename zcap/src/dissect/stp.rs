//! Spanning tree BPDUs (IEEE 802.1D, 802.1w's RSTP, 802.1s's MSTP, 802.1aq's SPB) as
//! tcpdump 4.99 prints them: `STP 802.1d, Config, Flags [...], bridge-id ..., length N`,
//! with `-v` the timers, the root and (MSTP) the CIST and every MSTI on lines of their own.
//! A field past the capture ends the line with ` [|stp]` where tcpdump's reads stop, after
//! what was printed before it; lengths too short for the BPDU type end it with
//! ` (invalid)`.

use std::fmt::Write as _;

use super::field::be16;

/// The fixed BPDU's length (up to and with the version 1 length).
const BPDU: usize = 36;
/// The shortest MSTP BPDU tcpdump reads.
const MSTP_MIN: usize = 102;
/// The MST configuration's length in the version 3 length.
const MST_CONFIG: u16 = 64;
/// One MSTI's length.
const MSTI: u16 = 16;
/// The shortest SPB part.
const SPB_MIN: usize = 87;

fn u8_at(d: &[u8], at: usize) -> Option<u8> {
    d.get(at).copied()
}

fn be32(d: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(d.get(at..at + 4)?.try_into().ok()?))
}

/// A bridge id: priority, then MAC address (`8000.02:00:00:00:00:01`).
fn bridge_id(d: &[u8], at: usize) -> Option<String> {
    let b: [u8; 8] = d.get(at..at + 8)?.try_into().ok()?;
    Some(format!(
        "{:02x}{:02x}.{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
        b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]
    ))
}

/// The BPDU flags as tcpdump lists them (`none` without one).
fn flags(v: u8) -> String {
    let names = [
        (0x01, "Topology change"),
        (0x02, "Proposal"),
        (0x10, "Learn"),
        (0x20, "Forward"),
        (0x40, "Agreement"),
        (0x80, "Topology change ACK"),
    ];
    let set: Vec<&str> = names
        .iter()
        .filter(|(bit, _)| v & bit != 0)
        .map(|&(_, name)| name)
        .collect();
    if set.is_empty() {
        "none".to_string()
    } else {
        set.join(", ")
    }
}

/// The port role in the flags.
fn role(flags: u8) -> &'static str {
    match (flags & 0x0c) >> 2 {
        1 => "Alternate",
        2 => "Root",
        3 => "Designated",
        _ => "Unknown",
    }
}

/// A timer in 1/256 s as `%.2f` prints the float (exact, ties to even).
fn seconds(t: u16) -> String {
    let x = u32::from(t) * 25;
    let (mut q, r) = (x / 64, x % 64);
    if r > 32 || (r == 32 && q % 2 == 1) {
        q += 1;
    }
    format!("{}.{:02}", q / 100, q % 100)
}

/// The BPDU in `data` (after the LLC header), `len` bytes long, printed as tcpdump's
/// stp_print does, with `-v`'s count `verbose`. Returns whether the printer stopped at a
/// read past the capture (then tcpdump's `-x` dumps start at the link layer).
pub fn stp(out: &mut String, data: &[u8], len: usize, verbose: u8) -> bool {
    if body(out, data, len, verbose > 0).is_some() {
        false
    } else {
        out.push_str(" [|stp]");
        true
    }
}

/// What stp_print prints; `None` at a read past the capture.
fn body(out: &mut String, d: &[u8], len: usize, verbose: bool) -> Option<()> {
    if len < 4 {
        out.push_str(" (invalid)");
        return Some(());
    }
    if be16(d, 0)? != 0 {
        let _ = write!(out, "unknown STP version, length {len}");
        return Some(());
    }
    let version = u8_at(d, 2)?;
    match version {
        0 => out.push_str("STP 802.1d"),
        2 => out.push_str("STP 802.1w"),
        3 => out.push_str("STP 802.1s"),
        4 => out.push_str("STP 802.1aq"),
        v => {
            let _ = write!(out, "STP Unknown STP protocol (0x{v:02x})");
            return Some(());
        }
    }
    let kind = u8_at(d, 3)?;
    match kind {
        0x00 => out.push_str(", Config"),
        0x02 => out.push_str(", Rapid STP"),
        0x80 => out.push_str(", Topology Change"),
        k => {
            let _ = write!(out, ", Unknown BPDU Type (0x{k:02x})");
        }
    }
    let invalid = |out: &mut String| {
        out.push_str(" (invalid)");
        Some(())
    };
    match (kind, version) {
        (0x00, _) if len < BPDU - 1 => invalid(out),
        (0x00, _) => config(out, d, len, verbose),
        (0x02, 2) if len < BPDU => invalid(out),
        (0x02, 2) => config(out, d, len, verbose),
        (0x02, 3 | 4) => {
            if len < MSTP_MIN || u8_at(d, BPDU - 1)? != 0 {
                return invalid(out);
            }
            let mstp_len = usize::from(be16(d, BPDU)?) + 2;
            if len < BPDU + mstp_len {
                return invalid(out);
            }
            mstp(out, d, len, verbose)?;
            if version == 4 {
                let spb_len = usize::from(be16(d, BPDU + mstp_len)?) + 2;
                if len < BPDU + mstp_len + spb_len || spb_len < SPB_MIN {
                    return invalid(out);
                }
                if verbose {
                    spb(out, d, BPDU + mstp_len)?;
                }
            }
            Some(())
        }
        _ => Some(()),
    }
}

/// The timers line of `-v`.
fn timers(out: &mut String, d: &[u8]) -> Option<()> {
    let (age, max, hello, delay) = (be16(d, 27)?, be16(d, 29)?, be16(d, 31)?, be16(d, 33)?);
    let _ = write!(
        out,
        "\n\tmessage-age {}s, max-age {}s, hello-time {}s, forwarding-delay {}s",
        seconds(age),
        seconds(max),
        seconds(hello),
        seconds(delay)
    );
    Some(())
}

/// A configuration (or RSTP) BPDU.
fn config(out: &mut String, d: &[u8], len: usize, verbose: bool) -> Option<()> {
    let f = u8_at(d, 4)?;
    let _ = write!(out, ", Flags [{}]", flags(f));
    let (bridge, port) = (bridge_id(d, 17)?, be16(d, 25)?);
    let _ = write!(out, ", bridge-id {bridge}.{port:04x}, length {len}");
    if !verbose {
        return Some(());
    }
    timers(out, d)?;
    let (root, cost) = (bridge_id(d, 5)?, be32(d, 13)?);
    let _ = write!(out, "\n\troot-id {root}, root-pathcost {cost}");
    if u8_at(d, 2)? == 2 {
        let _ = write!(out, ", port-role {}", role(f));
    }
    Some(())
}

/// Up to `n` bytes of text, to a NUL (tcpdump's nd_printjnp).
fn text(out: &mut String, d: &[u8], at: usize, n: usize) -> Option<()> {
    for i in 0..n {
        let c = u8_at(d, at + i)?;
        if c == 0 {
            break;
        }
        super::dump::print_char(out, c);
    }
    Some(())
}

/// An MSTP BPDU: the CIST, and with `-v` the MST configuration and every MSTI.
fn mstp(out: &mut String, d: &[u8], len: usize, verbose: bool) -> Option<()> {
    let f = u8_at(d, 4)?;
    let _ = write!(out, ", CIST Flags [{}], length {len}", flags(f));
    if !verbose {
        return Some(());
    }
    let _ = write!(out, "\n\tport-role {}, ", role(f));
    let (root, cost) = (bridge_id(d, 5)?, be32(d, 13)?);
    let _ = write!(out, "CIST root-id {root}, CIST ext-pathcost {cost}");
    let _ = write!(out, "\n\tCIST regional-root-id {}, ", bridge_id(d, 17)?);
    let _ = write!(out, "CIST port-id {:04x},", be16(d, 25)?);
    timers(out, d)?;
    let v3len = be16(d, 36)?;
    let _ = write!(out, "\n\tv3len {v3len}, MCID Name ");
    text(out, d, 39, 32)?;
    let (rev, a, b, c, e) = (
        be16(d, 71)?,
        be32(d, 73)?,
        be32(d, 77)?,
        be32(d, 81)?,
        be32(d, 85)?,
    );
    let _ = write!(
        out,
        ", rev {rev},\n\t\tdigest {a:08x}{b:08x}{c:08x}{e:08x}, "
    );
    let _ = write!(out, "CIST int-root-pathcost {},", be32(d, 89)?);
    let _ = write!(out, "\n\tCIST bridge-id {}, ", bridge_id(d, 93)?);
    let _ = write!(out, "CIST remaining-hops {}", u8_at(d, 101)?);
    if v3len > MST_CONFIG {
        let mut left = v3len - MST_CONFIG;
        let mut at = MSTP_MIN;
        // At most 4092 turns, each reading 16 more bytes.
        while left >= MSTI {
            let (id, mf) = (be16(d, at + 1)? & 0x0fff, u8_at(d, at)?);
            let _ = write!(
                out,
                "\n\tMSTI {id}, Flags [{}], port-role {}",
                flags(mf),
                role(mf)
            );
            let (root, cost) = (bridge_id(d, at + 1)?, be32(d, at + 9)?);
            let _ = write!(out, "\n\t\tMSTI regional-root-id {root}, pathcost {cost}");
            let (bp, pp, hops) = (u8_at(d, at + 13)?, u8_at(d, at + 14)?, u8_at(d, at + 15)?);
            let _ = write!(
                out,
                "\n\t\tMSTI bridge-prio {}, port-prio {}, hops {hops}",
                bp >> 4,
                pp >> 4
            );
            left -= MSTI;
            at += usize::from(MSTI);
        }
    }
    Some(())
}

/// SPB's part after the MSTIs (`-v` only), at `at`.
fn spb(out: &mut String, d: &[u8], at: usize) -> Option<()> {
    let _ = write!(out, "\n\tv4len {}, AUXMCID Name ", be16(d, at)?);
    text(out, d, at + 3, 32)?;
    let dg = at + 37;
    let (rev, a, b, c, e) = (
        be16(d, at + 35)?,
        be32(d, dg)?,
        be32(d, dg + 4)?,
        be32(d, dg + 8)?,
        be32(d, dg + 12)?,
    );
    let _ = write!(out, ", Rev {rev},\n\t\tdigest {a:08x}{b:08x}{c:08x}{e:08x}");
    let ag = at + 53;
    let (agree, format, conv, edge) = (
        u8_at(d, ag)?,
        u8_at(d, ag + 2)?,
        u8_at(d, ag + 3)?,
        be16(d, ag + 4)?,
    );
    let digest: Vec<u32> = (0..5)
        .map(|i| be32(d, ag + 14 + 4 * i))
        .collect::<Option<_>>()?;
    let _ = write!(
        out,
        "\n\tAgreement num {}, Discarded Agreement num {}, Agreement valid-flag {},\
         \n\tRestricted role-flag: {}, Format id {} cap {}, Convention id {} cap {},\
         \n\tEdge count {edge}, Agreement digest ",
        agree >> 6,
        (agree >> 4) & 3,
        (agree >> 3) & 1,
        (agree >> 2) & 1,
        format >> 4,
        format,
        conv >> 4,
        conv
    );
    for w in digest {
        let _ = write!(out, "{w:08x}");
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config_bpdu(version: u8, kind: u8, f: u8) -> Vec<u8> {
        let mut b = vec![0, 0, version, kind, f];
        b.extend_from_slice(&[0x80, 0, 2, 0, 0, 0, 0, 1]);
        b.extend_from_slice(&4u32.to_be_bytes());
        b.extend_from_slice(&[0x80, 0, 2, 0, 0, 0, 0, 2]);
        b.extend_from_slice(&[0x80, 1, 0, 0x80, 20, 0, 2, 0, 15, 0]);
        b.push(0);
        b
    }

    fn text_of(d: &[u8], len: usize, verbose: u8) -> String {
        let mut s = String::new();
        stp(&mut s, d, len, verbose);
        s
    }

    #[test]
    fn timers_round_as_printf() {
        assert_eq!(seconds(256 * 2), "2.00");
        assert_eq!(seconds(32), "0.12");
        assert_eq!(seconds(96), "0.38");
        assert_eq!(seconds(1), "0.00");
        assert_eq!(seconds(65535), "256.00");
    }

    #[test]
    fn config_rstp_and_cuts() {
        let b = config_bpdu(0, 0, 0x81);
        assert_eq!(
            text_of(&b[..35], 35, 0),
            "STP 802.1d, Config, Flags [Topology change, Topology change ACK], bridge-id 8000.02:00:00:00:00:02.8001, length 35"
        );
        let v = text_of(&b, 36, 1);
        assert!(v.contains("\n\troot-id 8000.02:00:00:00:00:01, root-pathcost 4"));
        let r = text_of(&config_bpdu(2, 2, 0x3c), 36, 1);
        assert!(r.starts_with("STP 802.1w, Rapid STP, Flags [Learn, Forward]"));
        assert!(r.ends_with(", port-role Designated"));
        assert_eq!(
            text_of(&b[..10], 35, 0),
            "STP 802.1d, Config, Flags [Topology change, Topology change ACK] [|stp]"
        );
        assert_eq!(text_of(&b[..3], 35, 0), "STP 802.1d [|stp]");
        assert_eq!(text_of(&b, 20, 0), "STP 802.1d, Config (invalid)");
        assert_eq!(
            text_of(&[0, 1, 0, 0], 4, 0),
            "unknown STP version, length 4"
        );
        assert_eq!(
            text_of(&[0, 0, 9, 0], 4, 0),
            "STP Unknown STP protocol (0x09)"
        );
        assert_eq!(
            text_of(&[0, 0, 0, 0x80], 4, 1),
            "STP 802.1d, Topology Change"
        );
    }

    #[test]
    fn hostile_bytes_never_panic() {
        let mut seed: u32 = 99;
        for n in 0..400usize {
            let mut d = vec![0, 0, (n % 5) as u8, if n % 2 == 0 { 2 } else { 0 }];
            for _ in 0..(n % 200) {
                seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
                d.push((seed >> 16) as u8);
            }
            for v in 0..2 {
                let _ = text_of(&d, d.len(), v);
                let _ = text_of(&d, d.len() + 300, v);
            }
        }
    }
}
