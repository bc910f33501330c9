//! IPv6 under `-v` and its extension headers (hop-by-hop, destination options,
//! fragment), and the UDP checksum over its pseudo-header.

use std::fmt::Write as _;

use zcrx_flowcache::ipproto;
use zcrx_flowcache::wire::ipv6::{self, opt};
use zcrx_flowcache::wire::{Ipv6ExtHeader, Ipv6FragmentHeader, Ipv6Packet, UdpPacket};

use super::field::{be16, checksum, ipproto_name, should_be};
use super::layout;

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

/// See `Ipv6Ext`. `None` when the packet has no extension header or one this does not
/// print (routing, mobility, AH, ...): the caller prints the line without them.
pub fn ipv6_ext(d: &[u8], l3: usize, verbose: bool) -> Option<Ipv6Ext> {
    let p = Ipv6Packet::new_checked(d.get(l3..)?).ok()?;
    let plen = usize::from(p.payload_len());
    let mut nh = p.next_header();

    // A zero payload length means a jumbogram (or garbage): tcpdump's own story.
    if !printed(nh) || plen == 0 {
        return None;
    }
    let first = l3 + layout::ipv6::HEADER_LEN;
    let mut at = first;
    let mut ext = Ipv6Ext {
        text: String::new(),
        fragmented: false,
        stop: false,
    };
    if !walks(d, nh, first)? {
        return None;
    }
    while printed(nh) {
        if nh == ipproto::FRAGMENT {
            let f = Ipv6FragmentHeader::new_checked(&d[at..]).ok()?;
            let off = f.frag_offset();
            let len = (layout::ipv6::HEADER_LEN + plen)
                .saturating_sub(at - l3 + layout::ipv6::FRAG_HEADER_LEN);
            if verbose {
                let _ = write!(ext.text, "frag (0x{:08x}:{off}|{len})", f.ident());
            } else {
                let _ = write!(ext.text, "frag ({off}|{len})");
            }
            ext.fragmented = true;
            if off != 0 {
                ext.stop = true;
                return Some(ext);
            }
            ext.text.push(' ');
            nh = f.next_header();
            at += layout::ipv6::FRAG_HEADER_LEN;
        } else if nh == ipproto::ROUTING {
            let h = Ipv6ExtHeader::new_checked(&d[at..]).ok()?;
            if !rt6(&mut ext.text, h.as_bytes(), verbose) {
                ext.stop = true;
                return Some(ext);
            }
            nh = h.next_header();
            at += h.header_len();
        } else {
            // The probe saw the whole header.
            let h = Ipv6ExtHeader::new_checked(&d[at..]).ok()?;
            let hbh = nh == ipproto::HOPOPT;
            ext.text.push_str(if hbh { "HBH " } else { "DSTOPT " });
            if (hbh || verbose) && ipv6_options(&mut ext.text, h.data(), verbose).is_none() {
                // tcpdump's truncation mark, and nothing after it.
                ext.text
                    .push_str(if hbh { " [|hbhopt]" } else { " [|dstopt]" });
                ext.stop = true;
                return Some(ext);
            }
            nh = h.next_header();
            at += h.header_len();
        }
    }
    Some(ext)
}

/// A routing header as tcpdump's `rt6_print` shows it (`RT6 (len=2, type=0 [Deprecated],
/// segleft=1, [0]ADDR) `); `false` where tcpdump calls it invalid and stops.
fn rt6(out: &mut String, h: &[u8], verbose: bool) -> bool {
    let (Some(&len), Some(&kind), Some(&left)) = (h.get(1), h.get(2), h.get(3)) else {
        return false;
    };
    let _ = write!(out, "RT6 (len={len}, type={kind}");
    if kind == 0 {
        out.push_str(" [Deprecated]");
    }
    let _ = write!(out, ", segleft={left}");
    let first = match kind {
        0 | 2 => {
            let rsv = h
                .get(4..8)
                .map_or(0, |b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
            if rsv != 0 || verbose {
                let _ = write!(out, ", rsv=0x{rsv:x}");
            }
            8
        }
        4 => {
            let (last, flags) = (
                h.get(4).copied().unwrap_or(0),
                h.get(5).copied().unwrap_or(0),
            );
            let _ = write!(out, ", last-entry={last}");
            if flags != 0 || verbose {
                let _ = write!(out, ", flags=0x{flags:x}");
            }
            let _ = write!(out, ", tag={:x}", be16(h, 6).unwrap_or(0));
            8
        }
        _ => {
            out.push_str(" (unknown type) (invalid)");
            return false;
        }
    };
    if len % 2 == 1 {
        let _ = write!(out, " (invalid length {len}) (invalid)");
        return false;
    }
    for i in 0..usize::from(len / 2) {
        let at = first + 16 * i;
        let Some(a) = h
            .get(at..at + 16)
            .and_then(|b| <[u8; 16]>::try_from(b).ok())
        else {
            return false;
        };
        let _ = write!(out, ", [{i}]{}", std::net::Ipv6Addr::from(a));
    }
    out.push_str(") ");
    true
}

/// The extension headers printed here.
fn printed(nh: u8) -> bool {
    matches!(
        nh,
        ipproto::HOPOPT | ipproto::FRAGMENT | ipproto::DSTOPTS | ipproto::ROUTING
    )
}

/// Whether tcpdump's walk of the chain from `nh` at `first` is the one printed here: no
/// header it prints its own way (jumbo payload, home address, AH, mobility, ESP), none the
/// capture cut off (`None`).
fn walks(d: &[u8], nh: u8, first: usize) -> Option<bool> {
    let mut probe = (nh, first);
    while printed(probe.0) {
        let len = ipv6::ext_header_len(probe.0, d.get(probe.1..)?).ok()??;
        let h = d.get(probe.1..probe.1 + len)?;
        if probe.0 == ipproto::HOPOPT && probe.1 != first {
            return Some(false);
        }
        // Jumbo payload and home address options: printed their own way, not here.
        let h = Ipv6ExtHeader::new_unchecked(h);
        let options = !matches!(probe.0, ipproto::FRAGMENT | ipproto::ROUTING);
        if options && has_option(h.data(), &[opt::JUMBO, opt::HOME_ADDRESS]) {
            return Some(false);
        }
        probe = (h.next_header(), probe.1 + len);
    }
    Some(!matches!(
        probe.0,
        ipproto::AH | ipproto::MOBILITY | 62 | 50 // old mobility, ESP
    ))
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
    let p = Ipv6Packet::new_checked(d.get(l3..)?).ok()?;
    let (class, label) = (p.traffic_class(), p.flow_label());
    let (plen, nh, hlim) = (p.payload_len(), p.next_header(), p.hop_limit());
    let mut s = String::from("(");
    if class != 0 {
        let _ = write!(s, "class 0x{class:02x}, ");
    }
    if label != 0 {
        let _ = write!(s, "flowlabel 0x{label:05x}, ");
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
    let p = Ipv6Packet::new_checked(d.get(l3..)?).ok()?;
    let src = &p.as_bytes()[layout::ipv6::SRC_ADDR];
    let dst = final_destination(d, l3).unwrap_or(&p.as_bytes()[layout::ipv6::DST_ADDR]);
    let len32 = (len as u32).to_be_bytes();
    Some(checksum(&[src, dst, &len32, &[0, 0, 0, proto], seg]))
}

/// The destination a transport checksum covers (RFC 8200 §8.1): a routing header's last
/// address while segments are left, else the IP header's (`None`), as tcpdump finds it
/// walking hop-by-hop, destination options and routing headers (at most 8).
pub(super) fn final_destination(d: &[u8], l3: usize) -> Option<&[u8]> {
    let mut nh = *d.get(l3 + 6)?;
    let mut at = l3 + layout::ipv6::HEADER_LEN;
    for _ in 0..8 {
        match nh {
            ipproto::HOPOPT | ipproto::DSTOPTS => {}
            ipproto::ROUTING => {
                let (len, kind, left) = (*d.get(at + 1)?, *d.get(at + 2)?, *d.get(at + 3)?);
                if matches!(kind, 0 | 2) && left > 0 && len >= 2 {
                    let last = at + 8 + 16 * (usize::from(len / 2) - 1);
                    return d.get(last..last + 16);
                }
            }
            _ => return None,
        }
        nh = *d.get(at)?;
        at += (usize::from(*d.get(at + 1)?) + 1) * 8;
    }
    None
}

/// `-v` note before an IPv6 UDP summary: "[udp sum ok] " or "[bad udp cksum 0xA -> 0xB!] ".
pub fn udp6_sum_note(d: &[u8], l3: usize, l4: usize, len: usize) -> String {
    let field = UdpPacket::new_checked(d.get(l4..).unwrap_or_default())
        .ok()
        .map(|u| u.checksum());
    match (v6_sum(d, l3, l4, len, ipproto::UDP), field) {
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
