//! The link layer: its header's length, `-e`'s Ethernet prefix, and ARP.

use std::fmt::Write as _;

use zcrx_flowcache::wire::ethernet::ethertype;
use zcrx_flowcache::wire::VlanTag;
use zcrx_flowcache::LinkType;

use super::field::be16;
use super::layout::ethernet as field;

/// Bytes of link-layer header before the network layer, as tcpdump's link printers count
/// them (Ethernet: 14 and 4 per VLAN tag).
pub fn link_header_len(link: LinkType, data: &[u8]) -> usize {
    match link {
        LinkType::Ethernet => {
            // The EtherType (or a tag's TPID) at `off`, then the next byte.
            let mut off = field::ETHERTYPE.start;
            while let Some(t) = be16(data, off) {
                if ethertype::is_vlan(t) {
                    off += field::TAG_LEN;
                } else {
                    break;
                }
            }
            (off + field::ETHERTYPE.len()).min(data.len())
        }
        LinkType::LinuxSll => 16,
        LinkType::LinuxSll2 => 20,
        LinkType::Null | LinkType::Loop => 4,
        _ => 0,
    }
    .min(data.len())
}

/// Where tcpdump's `-x`/`-X`/`-A` dumps start: after the link header, an 802.3 frame's LLC
/// header (and SNAP's) counted in it.
pub fn dump_offset(link: LinkType, data: &[u8]) -> usize {
    let end = link_header_len(link, data);
    let llc = link == LinkType::Ethernet
        && end >= 2
        && be16(data, end - 2).is_some_and(|len| len <= 1500);
    match data.get(end) {
        Some(0xaa) if llc => end + 8,
        Some(_) if llc => end + 3,
        _ => end,
    }
    .min(data.len())
}

/// `-e` for Ethernet: "SRC > DST, " then each tag ("802.1Q, length N: vlan V, p P, ") and
/// the ethertype's name; returns the prefix and whether the network layer follows with a
/// comma (after tags) rather than with "length N: ".
pub fn ether_prefix(out: &mut String, data: &[u8], wire_len: u32, quiet: bool, names: bool) {
    let start = out.len();
    if prefix(out, data, wire_len, quiet, names).is_none() {
        // A frame cut inside: no prefix at all.
        out.truncate(start);
    }
}

fn prefix(s: &mut String, data: &[u8], wire_len: u32, quiet: bool, names: bool) -> Option<()> {
    super::resolve::mac(s, data.get(field::SOURCE)?, names);
    s.push_str(" > ");
    super::resolve::mac(s, data.get(field::DESTINATION)?, names);
    s.push_str(", ");
    // The EtherType (or a tag's TPID) at `off`.
    let mut off = field::ETHERTYPE.start;
    let mut first = true;
    loop {
        let t = be16(data, off)?;
        ethertype_name(s, t, quiet);
        if first {
            // An 802.3 frame shows the length after its header (its length field's, when
            // less).
            let shown = match u32::from(t) {
                l if t <= 1500 => l.min(wire_len.saturating_sub(14)),
                _ => wire_len,
            };
            s.push_str(", length ");
            super::num::dec(s, shown);
            s.push_str(": ");
            first = false;
        } else {
            s.push_str(", ");
        }
        if ethertype::is_vlan(t) {
            // The tag's TCI follows its TPID; its own EtherType is read on the next turn.
            let tag = VlanTag::new_unchecked(data.get(off + 2..off + 4)?);
            let _ = write!(s, "vlan {}, p {}, ", tag.vlan_id(), tag.priority());
            if tag.drop_eligible() {
                s.truncate(s.len() - 2);
                s.push_str(", DEI, ");
            }
            off += field::TAG_LEN;
        } else {
            return Some(());
        }
    }
}

/// An EtherType in tcpdump's words without `-q`: `ethertype IPv4 (0x0800)`.
pub fn ethertype_words(t: u16) -> String {
    let mut s = String::new();
    ethertype_name(&mut s, t, false);
    s
}

/// An EtherType as tcpdump's `-e` shows it: `ethertype NAME (0xXXXX)`, or with `-q` the
/// name alone.
fn ethertype_name(out: &mut String, t: u16, quiet: bool) {
    let name = match t {
        ..=1500 => {
            out.push_str("802.3");
            return;
        }
        ethertype::IPV4 => "IPv4",
        ethertype::IPV6 => "IPv6",
        ethertype::ARP => "ARP",
        ethertype::VLAN => "802.1Q",
        ethertype::QINQ => "802.1Q-QinQ",
        ethertype::QINQ_9100 => "802.1Q-9100",
        ethertype::RARP => "Reverse ARP",
        ethertype::LLDP => "LLDP",
        ethertype::MPLS_UNICAST => "MPLS unicast",
        ethertype::MPLS_MULTICAST => "MPLS multicast",
        0x8863 => "PPPoE D",
        0x8864 => "PPPoE S",
        0x8809 => "Slow Protocols",
        0x888e => "EAPOL",
        0x88e5 => "802.1AE MACsec",
        0x9000 => "Loopback",
        _ if quiet => {
            let _ = write!(out, "Unknown Ethertype (0x{t:04x})");
            return;
        }
        _ => "Unknown",
    };
    if quiet {
        out.push_str(name);
    } else {
        out.push_str("ethertype ");
        out.push_str(name);
        out.push_str(" (0x");
        super::num::hex2(out, (t >> 8) as u8);
        super::num::hex2(out, t as u8);
        out.push(')');
    }
}
