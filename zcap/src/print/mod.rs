//! Packets as tcpdump prints them (its lines at every verbosity, `-q`'s among them), in
//! `stamp` their time stamps, in `json` packets and flows as JSON, and in `tunnel` the
//! encapsulations whose inner packet is printed after the outer one.

mod ctx;
mod cut;
mod json;
mod link;
mod stamp;
mod tunnel;

use std::fmt::Write as _;

use zcrx_flowcache::wire::UdpPacket;
use zcrx_flowcache::{extract, ipproto, Extracted, Fragment, LinkType};

pub(crate) use json::set_sampling;
pub(crate) use json::write_flow_json;
pub use json::{end_name, flow_json, json, print_flows, FlowLine};

/// What the printer decodes, and at which verbosity (the end of `--help` and of the man
/// page; docs/zcap.md says the same at length).
pub const DECODES: &str = "What zcap prints: tcpdump 4.99's lines, packet for packet, at every \
verbosity and output flag (-q: its quick lines). Decoded: Ethernet (-e), 802.1Q/QinQ, Linux \
SLL/SLL2, MPLS, PPPoE and PPP, LLC/SNAP, ARP/RARP; IPv4 and IPv6 (-v: header fields, options, \
extension headers); GRE, IP in IP, 6in4, VXLAN, Geneve and their inner packets; TCP (flags, \
relative or -S absolute numbers, window, every option; -v: checksum), UDP, ICMP, ICMPv6; DNS \
and mDNS, DHCP, DHCPv6, NTP, syslog, TFTP (-v, -vv: their fields and options); the first lines \
of HTTP, RTSP, FTP, SMTP, SIP (-v: every line) and SSH's version. Without -n, ports are named \
from /etc/services and hosts from /etc/hosts (never DNS).";
pub use ctx::Detail;
pub use stamp::Stamp;

use ctx::Ctx;

use crate::dissect;
use crate::dissect::app;
use crate::dissect::resolve;
use crate::dissect::tcp;
use crate::dissect::tcp_seq::Seqs;

/// The EtherType of a frame: after the MAC addresses and any tags, or a cooked header's
/// protocol.
fn ethertype(link: LinkType, data: &[u8]) -> Option<u16> {
    let be16 = |at: usize| Some(u16::from_be_bytes([*data.get(at)?, *data.get(at + 1)?]));
    match link {
        LinkType::Ethernet => {}
        // Linux cooked: the protocol field (an EtherType above 1500).
        LinkType::LinuxSll => return be16(14).filter(|&t| t > 1500),
        LinkType::LinuxSll2 => return be16(0).filter(|&t| t > 1500),
        _ => return None,
    }
    let mut off = 12;
    loop {
        let t = u16::from_be_bytes([*data.get(off)?, *data.get(off + 1)?]);
        if matches!(t, 0x8100 | 0x88a8 | 0x9100) {
            off += 4;
        } else {
            return Some(t);
        }
    }
}

/// Prints packets as tcpdump does, into one buffer reused from packet to packet, keeping
/// what relative TCP numbers need between them.
#[derive(Debug, Default)]
pub struct LinePrinter {
    detail: Detail,
    seqs: Seqs,
    line: String,
    /// A frame with a stripped VLAN tag put back.
    tagged: Vec<u8>,
}

impl LinePrinter {
    /// A printer with these options.
    pub fn new(detail: Detail) -> LinePrinter {
        LinePrinter {
            detail,
            ..LinePrinter::default()
        }
    }

    /// TCP conversations held for relative sequence numbers.
    pub fn conversations(&self) -> usize {
        self.seqs.len()
    }

    /// One line as tcpdump prints it, with `stamp` (the stamp's own text first). A VLAN tag
    /// the kernel stripped (`vlan`) is put back first, as libpcap does for tcpdump, so `-e`
    /// and the dumps show the frame as it was on the wire.
    pub fn line(
        &mut self,
        stamp: &str,
        link: LinkType,
        wire_len: u32,
        data: &[u8],
        vlan: Option<u16>,
    ) -> &str {
        let (data, wire_len) = match vlan {
            Some(tci) if link == LinkType::Ethernet && data.len() >= 12 => {
                self.tagged.clear();
                self.tagged.extend_from_slice(&data[..12]);
                self.tagged.extend_from_slice(&0x8100u16.to_be_bytes());
                self.tagged.extend_from_slice(&tci.to_be_bytes());
                self.tagged.extend_from_slice(&data[12..]);
                (&self.tagged[..], wire_len + 4)
            }
            _ => (data, wire_len),
        };
        let out = &mut self.line;
        out.clear();
        out.push_str(stamp);
        let mut ctx = Ctx {
            detail: &self.detail,
            seqs: &mut self.seqs,
            jumped: false,
            depth: 0,
            frame,
        };
        rest(out, link, wire_len, data, &mut ctx);
        let from = if ctx.jumped {
            0
        } else {
            dissect::dump_offset(link, data)
        };
        dumps(out, data, from, &self.detail);
        if stamp.is_empty() {
            out.trim_start_matches(' ')
        } else {
            out
        }
    }
}

/// One line of a packet alone (no TCP conversation before it): [`LinePrinter::line`] of a
/// new printer.
pub fn line_stamped(
    stamp: &str,
    link: LinkType,
    wire_len: u32,
    data: &[u8],
    vlan: Option<u16>,
    detail: &Detail,
) -> String {
    LinePrinter::new(*detail)
        .line(stamp, link, wire_len, data, vlan)
        .to_string()
}

/// The payload dumps: `-X` before `-x` before `-A`, as tcpdump chooses.
fn dumps(out: &mut String, data: &[u8], from: usize, d: &Detail) {
    let net = data.get(from..).unwrap_or_default();
    if d.hex_ascii > 0 {
        dissect::hex(out, if d.hex_ascii > 1 { data } else { net }, true);
    } else if d.hex > 0 {
        dissect::hex(out, if d.hex > 1 { data } else { net }, false);
    } else if d.ascii {
        dissect::ascii(out, net);
    }
}

/// A line after its time stamp, starting with a space, appended to `s`.
fn rest(s: &mut String, link: LinkType, wire_len: u32, data: &[u8], ctx: &mut Ctx<'_>) {
    let detail = ctx.detail;
    s.push(' ');
    // LINUX_SLL2 (`-i any`): the interface and the direction first, as tcpdump; with -e the
    // interface index and the link-layer address, and then no "IP " (as for Ethernet).
    if link == LinkType::LinuxSll2 && data.len() >= 20 {
        let index = u32::from_be_bytes([data[4], data[5], data[6], data[7]]);
        let dir = match data[10] {
            0 => "In",
            1 => "B",
            2 => "M",
            3 => "P",
            4 => "Out",
            _ => "?",
        };
        let _ = write!(
            s,
            "{:<5} {dir:<3} ",
            crate::interface::interface_name(index)
        );
        if detail.link {
            let _ = write!(s, "ifindex {index} ");
            if data[11] == 6 {
                resolve::mac(s, &data[12..18], detail.names);
                s.push(' ');
            }
            if !detail.quiet {
                let t = u16::from_be_bytes([data[0], data[1]]);
                match t {
                    0x0001 => s.push_str("802.3"),
                    0x0004 => s.push_str("802.2"),
                    ..=1500 => {
                        let _ = write!(s, "ethertype Unknown (0x{t:04x})");
                    }
                    _ => s.push_str(&dissect::ethertype_words(t)),
                }
                let _ = write!(s, ", length {wire_len}: ");
            }
        }
    }
    frame(s, link, wire_len, data, ctx);
}

/// A frame of `link` after its line's prefix: `-e`'s link header, then the network layer
/// and what it carries (a tunnel's inner frame is printed by this too).
fn frame(s: &mut String, link: LinkType, wire_len: u32, data: &[u8], ctx: &mut Ctx<'_>) {
    let detail = ctx.detail;
    // With -e, no "IP " before the network layer: after a link header, as inside a tunnel.
    let ether =
        detail.link && (matches!(link, LinkType::Ethernet | LinkType::LinuxSll2) || ctx.depth > 0);
    if detail.link && link == LinkType::Ethernet {
        dissect::ether_prefix(s, data, wire_len, detail.quiet, detail.names);
    }
    // What is not IP (or not yet): the link layers tcpdump decodes before or instead of it.
    if let Some(t) = ethertype(link, data) {
        let hdr = dissect::link_header_len(link, data);
        let len = (wire_len as usize).saturating_sub(hdr);
        if hdr <= data.len() && link::ethertype(s, t, &data[hdr..], len, ctx) {
            return;
        }
    }
    if link == LinkType::Ethernet && data.len() < 14 {
        s.push_str(" [|ether]");
        return;
    }
    let Ok(x) = extract(link, data, None) else {
        unextracted(s, link, wire_len, data, ctx, ether);
        return;
    };
    let k = x.key;
    let v6 = k.is_ipv6();
    let l3 = x.l3_offset as usize;
    if !ether {
        s.push_str(if v6 { "IP6 " } else { "IP " });
    }
    if detail.verbose > 0 {
        if v6 {
            s.push_str(&dissect::ipv6_verbose(data, l3).unwrap_or_default());
        } else {
            dissect::ipv4_verbose(s, data, l3, !detail.no_checksums);
        }
    }
    summary(s, &x, wire_len, data, ctx, ether);
}

/// A frame the flow extractor refuses: an IP packet whose transport or own header is cut or
/// wrong (see `cut`), else what tcpdump says of an unknown link type.
fn unextracted(
    s: &mut String,
    link: LinkType,
    wire_len: u32,
    data: &[u8],
    ctx: &mut Ctx<'_>,
    ether: bool,
) {
    if let Some((l3, v6)) = dissect::net::network(link, data) {
        let wire = (wire_len as usize).saturating_sub(l3);
        match dissect::net::ip(data, l3, v6, wire) {
            Some(ip) if cut::cut_ip(s, &ip, data, ctx, ether) => return,
            Some(_) => {}
            // The IP header itself is cut: tcpdump's mark.
            None if data.len() < l3 + if v6 { 40 } else { 20 } => {
                s.push_str(match (v6, ether) {
                    (false, false) => "IP  [|ip]",
                    (false, true) => " [|ip]",
                    (true, _) => " [|ip6]",
                });
                return;
            }
            None => {}
        }
    }
    match ethertype(link, data) {
        _ if ether => {
            let _ = write!(s, "length {wire_len}");
        }
        Some(t) => {
            let _ = write!(s, "ethertype 0x{t:04x}, length {wire_len}");
        }
        None => {
            let _ = write!(s, "unparsed, length {wire_len}");
        }
    }
}

/// Addresses and the transport summary.
/// (`ether`: with -e, where a quoted datagram has no "IP " before it either.)
fn summary(
    s: &mut String,
    x: &Extracted,
    wire_len: u32,
    data: &[u8],
    ctx: &mut Ctx<'_>,
    ether: bool,
) {
    let k = x.key;
    let detail = ctx.detail;
    // Where the datagram ends by its own header (Ethernet padding is not payload).
    let end = x.l3_offset as usize + x.ip_octets(wire_len) as usize;
    let (l3, l4) = (x.l3_offset as usize, x.l4_offset as usize);
    let start = s.len();
    let Some(sum_note) = endpoints(s, x, data, detail) else {
        return;
    };
    let payload = end.saturating_sub(x.payload_offset as usize);
    match (k.proto(), x.fragment) {
        (_, Fragment::Later) => {
            let _ = write!(s, "ip-proto-{} (fragment)", k.proto());
        }
        (ipproto::UDP, _) => udp(s, x, data, (l3, l4, end), sum_note, ctx),
        (ipproto::TCP, fragment) => {
            let seg = tcp::Segment {
                data,
                l3,
                l4,
                len: end.saturating_sub(l4),
                v6: k.is_ipv6(),
                fragmented: fragment != Fragment::No,
            };
            ctx.jumped |= tcp::tcp(s, &seg, detail.tcp_style(), ctx.seqs);
        }
        (ipproto::ICMP, _) => icmp_summary(s, data, l4, end, ctx, ether),
        (ipproto::ICMPV6, fragment) => {
            let style = dissect::Icmp6Style {
                verbose: detail.verbose,
                names: detail.names,
                fragmented: fragment != Fragment::No,
            };
            let (text, jumped) = dissect::icmp6(data, l3, l4, end.saturating_sub(l4), style);
            s.push_str(&text);
            ctx.jumped |= jumped;
        }
        (ipproto::SCTP, _) => sctp_summary(s, data, (start, l4, end), detail),
        (p @ (tunnel::GRE | tunnel::IPIP | tunnel::IPV6), _) => {
            let inner = data.get(l4..end.min(data.len())).unwrap_or_default();
            tunnel::ip(s, p, inner, end.saturating_sub(l4), ctx);
        }
        (p, _) => {
            let _ = write!(s, "ip-proto-{p} {payload}");
        }
    }
}

/// A UDP datagram after its endpoints (`at`: where its IP header, its UDP header and the
/// datagram by its IP header start and end): `-v`'s checksum notes, then its protocol by
/// port, its tunnel's inner packet, or its length.
fn udp(
    s: &mut String,
    x: &Extracted,
    data: &[u8],
    (l3, l4, end): (usize, usize, usize),
    sum_note: bool,
    ctx: &mut Ctx<'_>,
) {
    let (k, detail) = (x.key, ctx.detail);
    let payload = end.saturating_sub(x.payload_offset as usize);
    let jumped = std::cell::Cell::new(false);
    let p = app::Payload {
        names: detail.names,
        data: data
            .get(x.payload_offset as usize..end.min(data.len()))
            .unwrap_or_default(),
        // tcpdump's length: the UDP header's, if less than what the IP length leaves.
        len: udp_len(data, l4).map_or(payload, |u| u.saturating_sub(8).min(payload)),
        sport: k.sport(),
        dport: k.dport(),
        verbose: detail.verbose,
        jumped: &jumped,
    };
    // The checksum note comes first, before a protocol's text as before the length.
    let v4_note =
        detail.verbose > 1 && !detail.no_checksums && !k.is_ipv6() && x.fragment == Fragment::No;
    udp_sum_note(s, data, (l3, l4, end), sum_note, v4_note);
    match app::printer(app::UDP, &p).filter(|_| !detail.quiet) {
        Some(print) => print(s, &p),
        None if !detail.quiet && p.either(tunnel::VXLAN_PORT) => {
            tunnel::vxlan(s, p.data, p.len, ctx)
        }
        None if !detail.quiet && p.either(tunnel::GENEVE_PORT) => {
            tunnel::geneve(s, p.data, p.len, ctx)
        }
        None => udp_summary(s, data, l4, payload),
    }
    ctx.jumped |= jumped.get();
}

/// An SCTP packet after its endpoints (printed from `at.0` on, replaced by what tcpdump
/// prints instead when the common header is missing); `at.1` and `at.2` are where it
/// starts and ends.
fn sctp_summary(s: &mut String, data: &[u8], at: (usize, usize, usize), detail: &Detail) {
    let (start, l4, end) = at;
    let bytes = data.get(l4..end.min(data.len())).unwrap_or_default();
    let len = end.saturating_sub(l4);
    if let Some(fault) = dissect::sctp::header_fault(bytes, len) {
        s.truncate(start);
        s.push_str(&fault);
        return;
    }
    let style = dissect::sctp::Style {
        verbose: detail.verbose,
        suppress: detail.quiet || detail.hex > 0 || detail.hex_ascii > 0,
    };
    dissect::sctp::sctp(s, bytes, len, style);
}

/// The line's endpoints: the addresses with their ports (`a.p > b.q: `), or, after IPv6
/// extension headers, the addresses, the headers, then the ports alone. Returns whether
/// `-v`'s IPv6 UDP checksum note is due, or `None` when an extension header ended the line.
fn endpoints(s: &mut String, x: &Extracted, data: &[u8], detail: &Detail) -> Option<bool> {
    let (verbose, names) = (detail.verbose > 0, detail.names);
    let k = x.key;
    let v6 = k.is_ipv6();
    let l3 = x.l3_offset as usize;
    let ports = matches!(
        k.proto(),
        ipproto::TCP | ipproto::UDP | ipproto::SCTP | ipproto::DCCP | ipproto::UDPLITE
    ) && x.fragment != Fragment::Later;
    // Ports are named (without -n) for TCP and UDP, as tcpdump names them.
    let tcp = k.proto() == ipproto::TCP;
    let named = names && matches!(k.proto(), ipproto::TCP | ipproto::UDP);
    let port = |s: &mut String, p: u16| resolve::port(s, p, tcp, named);
    // IPv6 extension headers: tcpdump prints the addresses, the headers, then the transport
    // with its ports alone (and checks no checksum of a fragment).
    let ext = v6.then(|| dissect::ipv6_ext(data, l3, verbose)).flatten();
    let mut sum_note = verbose && v6 && !detail.no_checksums;
    let host = |s: &mut String, a| resolve::host(s, a, detail.naming());
    host(s, k.src());
    if ports && ext.is_none() {
        s.push('.');
        port(s, k.sport());
    }
    s.push_str(" > ");
    host(s, k.dst());
    if ports && ext.is_none() {
        s.push('.');
        port(s, k.dport());
    }
    s.push_str(": ");
    if let Some(e) = &ext {
        s.push_str(&e.text);
        if e.stop {
            return None;
        }
        sum_note &= !e.fragmented;
        if ports {
            port(s, k.sport());
            s.push_str(" > ");
            port(s, k.dport());
            s.push_str(": ");
        }
    }
    Some(sum_note)
}

/// The UDP length field, if the header was captured.
fn udp_len(data: &[u8], l4: usize) -> Option<usize> {
    UdpPacket::new_checked(data.get(l4..).unwrap_or_default())
        .ok()
        .map(|u| usize::from(u.length()))
}

/// `-v`'s IPv6 UDP checksum note (`v6_note`), `-vv`'s IPv4 one (`v4_note`); `at` is the
/// datagram's IP and UDP header offsets and where it ends.
fn udp_sum_note(
    s: &mut String,
    data: &[u8],
    at: (usize, usize, usize),
    v6_note: bool,
    v4_note: bool,
) {
    let (l3, l4, end) = at;
    let ulen = udp_len(data, l4);
    if v6_note {
        let len = ulen.unwrap_or(end.saturating_sub(l4));
        s.push_str(&dissect::udp6_sum_note(data, l3, l4, len));
    } else if v4_note {
        // tcpdump sums what both the UDP and the IP lengths hold.
        let len = ulen.map_or(end.saturating_sub(l4), |u| u.min(end.saturating_sub(l4)));
        s.push_str(&dissect::udp4_sum_note(data, l3, l4, len));
    }
}

/// A UDP datagram's summary: the length its header gives (`payload`, the frame's, if the
/// header is cut).
fn udp_summary(s: &mut String, data: &[u8], l4: usize, payload: usize) {
    let _ = write!(
        s,
        "UDP, length {}",
        udp_len(data, l4).map_or(payload, |u| u.saturating_sub(8))
    );
}

/// An ICMP message's summary; with `-v`, an error's quoted datagram follows on its own
/// lines (its IP header, then its summary).
fn icmp_summary(
    s: &mut String,
    data: &[u8],
    l4: usize,
    end: usize,
    ctx: &mut Ctx<'_>,
    ether: bool,
) {
    let verbose = ctx.detail.verbose > 0;
    s.push_str(&dissect::icmp(data, l4, end.saturating_sub(l4), verbose));
    // With -v, an error's quoted datagram is printed too, on its own lines.
    let error = matches!(
        data.get(l4 + dissect::layout::icmp::TYPE),
        Some(3 | 4 | 5 | 11 | 12)
    );
    let inner = data
        .get(l4 + dissect::layout::icmp::HEADER_LEN..end.min(data.len()))
        .unwrap_or_default();
    if let (true, true, Ok(ix)) = (verbose, error, extract(LinkType::Ipv4, inner, None)) {
        s.push_str(if ether { "\n\t" } else { "\n\tIP " });
        dissect::ipv4_verbose(s, inner, 0, !ctx.detail.no_checksums);
        summary(s, &ix, inner.len() as u32, inner, ctx, ether);
    }
}
