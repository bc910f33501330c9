//! IPv6 under `-v` and its extension headers (hop-by-hop, destination options,
//! fragment), and the UDP checksum over its pseudo-header.

use std::fmt::Write as _;

use super::field::{be16, checksum, ipproto_name, should_be};

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
pub(super) fn v6_sum(d: &[u8], l3: usize, l4: usize, len: usize, proto: u8) -> Option<u16> {
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
