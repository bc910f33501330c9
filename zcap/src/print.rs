//! Per-packet text (like `tcpdump -n -q`) and JSON lines.

use std::fmt::Write as _;
use std::io::Write as _;

use zcrx_flowcache::names::Names;
use zcrx_flowcache::wire::UdpPacket;
use zcrx_flowcache::{
    extract, ipproto, proto_name, EndReason, Extracted, FlowStats, Fragment, LinkType, TcpState,
};

use crate::dissect;
use crate::dissect::app;
use crate::dissect::resolve;
use crate::dissect::tcp;
use crate::dissect::tcp_seq::Seqs;

/// The ethertype after the MAC addresses and any tags, for non-IP frames.
fn ethertype(link: LinkType, data: &[u8]) -> Option<u16> {
    if link != LinkType::Ethernet {
        return None;
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

/// How a line's time stamp is written: tcpdump's `-t` count (0: time of day, 1: none,
/// 2: seconds since the epoch, 3: delta since the previous packet, 4: date and time, 5: delta
/// since the first packet) and its precision (`--micro`/`--nano`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stamp {
    /// tcpdump's `-t` count, 0..=5.
    pub format: u8,
    /// Nanoseconds instead of microseconds.
    pub nano: bool,
}

impl Stamp {
    fn frac(&self, ns: u64) -> String {
        if self.nano {
            format!("{:09}", ns % 1_000_000_000)
        } else {
            format!("{:06}", ns % 1_000_000_000 / 1000)
        }
    }

    /// " HH:MM:SS.frac" of a signed delta, as tcpdump's -ttt/-ttttt (which format it as a
    /// time of day: whole days drop out).
    fn delta(&self, from: u64, to: u64) -> String {
        let (sign, d) = if to >= from {
            (' ', to - from)
        } else {
            ('-', from - to)
        };
        let secs = d / 1_000_000_000;
        format!(
            "{sign}{:02}:{:02}:{:02}.{}",
            secs / 3600 % 24,
            secs / 60 % 60,
            secs % 60,
            self.frac(d)
        )
    }

    /// The stamp of a packet at `ts_ns` after one at `prev_ns` in a capture that began at
    /// `first_ns` (UTC), without the space that follows it; empty for `-t`.
    pub fn format(&self, ts_ns: u64, prev_ns: u64, first_ns: u64) -> String {
        let secs = ts_ns / 1_000_000_000;
        let time_of_day = |secs: u64| {
            format!(
                "{:02}:{:02}:{:02}.{}",
                secs / 3600 % 24,
                secs / 60 % 60,
                secs % 60,
                self.frac(ts_ns)
            )
        };
        match self.format {
            1 => String::new(),
            2 => format!("{secs}.{}", self.frac(ts_ns)),
            3 => self.delta(prev_ns, ts_ns),
            4 => {
                let (y, m, d) = civil_from_days((secs / 86_400) as i64);
                format!("{y:04}-{m:02}-{d:02} {}", time_of_day(secs))
            }
            5 => self.delta(first_ns, ts_ns),
            _ => time_of_day(secs),
        }
    }
}

/// (year, month, day) of a day count since 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// What the line shows beyond `tcpdump -n -q`'s: `-e`, `-v`, and the dumps `-x`/`-xx`,
/// `-X`/`-XX`, `-A`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Detail {
    /// `-e`: the link-level header.
    pub link: bool,
    /// `-v` count.
    pub verbose: u8,
    /// `-x` count (2: from the link-level header on).
    pub hex: u8,
    /// `-X` count (hex and ASCII; 2: from the link-level header on).
    pub hex_ascii: u8,
    /// `-A`.
    pub ascii: bool,
    /// `-q`: tcpdump's quick lines (`tcp N`, `UDP, length N`, no application layer).
    pub quiet: bool,
    /// `-S`: absolute TCP sequence numbers.
    pub absolute: bool,
    /// Without `-n`: ports, addresses and MAC makers named (see [`dissect::resolve`]).
    pub names: bool,
    /// `-K`: no checksum verified (none of `-v`'s checksum notes).
    pub no_checksums: bool,
    /// `-N`: host names without their domain.
    pub short_names: bool,
    /// `-f` on a live capture: the interface's IPv4 network, outside which addresses print
    /// as numbers.
    pub local_v4: Option<(u32, u32)>,
}

impl Detail {
    /// How addresses are named.
    fn naming(&self) -> resolve::Naming {
        resolve::Naming {
            names: self.names,
            short: self.short_names,
            local_v4: self.local_v4,
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

/// What a line's parts are printed with: the options and the TCP conversations.
struct Ctx<'a> {
    detail: &'a Detail,
    seqs: &'a mut Seqs,
    /// A printer stopped as tcpdump's do by jumping out at a read past the capture: its dumps
    /// then start at the link layer.
    jumped: bool,
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
        };
        rest(out, link, wire_len, data, &mut ctx);
        let from = if ctx.jumped {
            0
        } else {
            dissect::link_header_len(link, data)
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
                let mac: Vec<String> = data[12..18].iter().map(|b| format!("{b:02x}")).collect();
                let _ = write!(s, "{} ", mac.join(":"));
            }
        }
    }
    let ether = detail.link && matches!(link, LinkType::Ethernet | LinkType::LinuxSll2);
    if ether && link == LinkType::Ethernet {
        if let Some(p) = dissect::ether_prefix(data, wire_len, detail.quiet, detail.names) {
            s.push_str(&p);
        }
    }
    let Ok(x) = extract(link, data, None) else {
        if let Some((l3, v6)) = dissect::net::network(link, data) {
            let wire = (wire_len as usize).saturating_sub(l3);
            if let Some(ip) = dissect::net::ip(data, l3, v6, wire) {
                if cut_ip(s, &ip, data, ctx, ether) {
                    return;
                }
            }
        }
        let hdr = dissect::link_header_len(link, data);
        let arp = (ethertype(link, data) == Some(0x0806))
            .then(|| {
                let len = wire_len.saturating_sub(hdr as u32);
                dissect::arp(&data[hdr..], len, detail.verbose > 0)
            })
            .flatten();
        match ethertype(link, data) {
            _ if arp.is_some() => {
                if !ether {
                    s.push_str("ARP, ");
                }
                s.push_str(&arp.unwrap_or_default());
            }
            _ if ether => {
                let _ = write!(s, "length {wire_len}");
            }
            Some(0x0806) => {
                let _ = write!(s, "ARP, length {wire_len}");
            }
            Some(t) => {
                let _ = write!(s, "ethertype 0x{t:04x}, length {wire_len}");
            }
            None => {
                let _ = write!(s, "unparsed, length {wire_len}");
            }
        }
        return;
    };
    let k = x.key;
    let v6 = k.is_ipv6();
    let l3 = x.l3_offset as usize;
    if !ether {
        s.push_str(if v6 { "IP6 " } else { "IP " });
    }
    if detail.verbose > 0 {
        let hdr = if v6 {
            dissect::ipv6_verbose(data, l3)
        } else {
            dissect::ipv4_verbose(data, l3, !detail.no_checksums)
        };
        s.push_str(&hdr.unwrap_or_default());
    }
    summary(s, &x, wire_len, data, ctx, ether);
}

/// A TCP or UDP packet the flow extractor refused (its transport header cut by the
/// snapshot length, or with a wrong length), as tcpdump prints it; `false` for others.
fn cut_ip(
    s: &mut String,
    ip: &dissect::net::Ip,
    data: &[u8],
    ctx: &mut Ctx<'_>,
    ether: bool,
) -> bool {
    let detail = ctx.detail;
    if ip.later || !matches!(ip.proto, ipproto::TCP | ipproto::UDP) {
        return false;
    }
    if !ether {
        s.push_str(if ip.v6 { "IP6 " } else { "IP " });
    }
    if detail.verbose > 0 {
        let hdr = if ip.v6 {
            dissect::ipv6_verbose(data, ip.l3)
        } else {
            dissect::ipv4_verbose(data, ip.l3, !detail.no_checksums)
        };
        s.push_str(&hdr.unwrap_or_default());
    }
    if ip.missing > 0 && !ip.v6 {
        let _ = write!(s, "truncated-ip - {} bytes missing! ", ip.missing);
    }
    let tcp = ip.proto == ipproto::TCP;
    let host = |s: &mut String, a| resolve::host(s, a, detail.naming());
    let ports = (
        zcrx_flowcache::wire::read_be16(data, ip.l4),
        zcrx_flowcache::wire::read_be16(data, ip.l4 + 2),
    );
    host(s, ip.src);
    match ports {
        (Some(sp), Some(dp)) => {
            s.push('.');
            resolve::port(s, sp, tcp, detail.names);
            s.push_str(" > ");
            host(s, ip.dst);
            s.push('.');
            resolve::port(s, dp, tcp, detail.names);
            s.push_str(": ");
        }
        _ => {
            s.push_str(" > ");
            host(s, ip.dst);
            s.push_str(if tcp { ":" } else { ": " });
        }
    }
    if tcp && ports.1.is_some() && !detail.quiet {
        let seg = tcp::Segment {
            data,
            l3: ip.l3,
            l4: ip.l4,
            len: ip.len,
            v6: ip.v6,
            fragmented: ip.fragmented,
        };
        let style = tcp::Style {
            verbose: detail.verbose,
            absolute: detail.absolute,
            checksums: !detail.no_checksums,
        };
        ctx.jumped |= tcp::tcp(s, &seg, style, ctx.seqs);
    } else {
        s.push_str(if tcp { " [|tcp]" } else { " [|udp]" });
    }
    true
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
    let Some(sum_note) = endpoints(s, x, data, detail) else {
        return;
    };
    let payload = end.saturating_sub(x.payload_offset as usize);
    match (k.proto(), x.fragment) {
        (_, Fragment::Later) => {
            let _ = write!(s, "ip-proto-{} (fragment)", k.proto());
        }
        (ipproto::UDP, _) => {
            let jumped = std::cell::Cell::new(false);
            let p = app::Payload {
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
            let v4_note = detail.verbose > 1 && !k.is_ipv6() && x.fragment == Fragment::No;
            udp_sum_note(s, data, (l3, l4, end), sum_note, v4_note);
            match app::printer(app::UDP, &p).filter(|_| !detail.quiet) {
                Some(print) => print(s, &p),
                None => udp_summary(s, data, l4, payload),
            }
            ctx.jumped |= jumped.get();
        }
        (ipproto::TCP, _) if detail.quiet => {
            let _ = write!(s, "tcp {payload}");
        }
        (ipproto::TCP, fragment) => {
            let seg = tcp::Segment {
                data,
                l3,
                l4,
                len: end.saturating_sub(l4),
                v6: k.is_ipv6(),
                fragmented: fragment != Fragment::No,
            };
            let style = tcp::Style {
                verbose: detail.verbose,
                absolute: detail.absolute,
                checksums: !detail.no_checksums,
            };
            ctx.jumped |= tcp::tcp(s, &seg, style, ctx.seqs);
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
        (ipproto::SCTP, _) => {
            let _ = write!(s, "sctp, length {payload}");
        }
        (p, _) => {
            let _ = write!(s, "ip-proto-{p} {payload}");
        }
    }
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
        s.push_str(&dissect::ipv4_verbose(inner, 0, !ctx.detail.no_checksums).unwrap_or_default());
        summary(s, &ix, inner.len() as u32, inner, ctx, ether);
    }
}

/// One JSON object: ts_ns, len, caplen, vlan, proto, src, sport, dst, dport, icmp_type,
/// icmp_code, fragment.
pub fn json(link: LinkType, ts_ns: u64, wire_len: u32, data: &[u8], vlan: Option<u16>) -> String {
    let x = extract(link, data, vlan).ok();
    let k = x.map(|x| x.key);
    let proto =
        k.map(|k| proto_name(k.proto()).map_or_else(|| k.proto().to_string(), str::to_string));
    let later = x.is_some_and(|x| x.fragment == Fragment::Later);
    let port = |p: Option<u16>| if later { None } else { p };
    serde_json::json!({
        "ts_ns": ts_ns,
        "len": wire_len,
        "caplen": data.len(),
        "vlan": k.and_then(|k| k.vlan()).or(vlan.map(|v| v & 0xfff)),
        "proto": proto,
        "src": k.map(|k| k.src().to_string()),
        "sport": port(k.map(|k| k.sport())),
        "dst": k.map(|k| k.dst().to_string()),
        "dport": port(k.map(|k| k.dport())),
        "icmp_type": k.and_then(|k| k.icmp_type_code()).map(|(t, _)| t),
        "icmp_code": k.and_then(|k| k.icmp_type_code()).map(|(_, c)| c),
        "fragment": x.map(|x| match x.fragment { Fragment::No => "no", Fragment::First => "first", Fragment::Later => "later" }),
    })
    .to_string()
}

/// A flow for `--flows`: its counters and why it was reported (`None`: still live, in a
/// `--flows-every` table).
/// A TCP flow's state when its state was followed.
/// And with `--names`, its names when any were found.
pub type FlowLine = (
    FlowStats,
    Option<EndReason>,
    Option<TcpState>,
    Option<Box<Names>>,
);

/// The name of an end reason in JSON and tables.
pub fn end_name(end: Option<EndReason>) -> &'static str {
    match end {
        None => "live",
        Some(EndReason::Idle) => "idle",
        Some(EndReason::Active) => "active",
        Some(EndReason::EndOfFlow) => "end_of_flow",
        Some(EndReason::Evicted) => "evicted",
        Some(EndReason::Flush) => "end_of_capture",
    }
}

/// One flow as a JSON object (`--flows --json`), as IPFIX exports it: seen from its
/// initiator (`src` sent the first packet), index 0 of the pairs the initiator's direction,
/// bytes counting IP header and payload, counts since the flow's last report; its Community
/// ID with `seed`; a TCP flow's state and history (Zeek's) when followed, else null; with
/// `--names`, the names found (each key only when found).
pub fn flow_json(
    s: &FlowStats,
    end: Option<EndReason>,
    seed: u16,
    tcp: Option<&TcpState>,
    names: Option<&Names>,
) -> String {
    let s = s.oriented();
    let k = s.key;
    let mut v = serde_json::json!({
        "src": k.src().to_string(), "sport": k.sport(), "dst": k.dst().to_string(), "dport": k.dport(),
        "proto": k.proto(), "vlan": k.vlan(), "packets": s.packets, "bytes": s.bytes,
        "icmp_type": k.icmp_type_code().map(|(t, _)| t),
        "icmp_code": k.icmp_type_code().map(|(_, c)| c),
        "first_ns": s.first_ns, "last_ns": s.last_ns, "tcp_flags": s.tcp_flags,
        "end": end_name(end),
        "community_id": k.community_id(seed).to_string(),
        "conn_state": tcp.map(|t| t.conn_state().name()),
        "history": tcp.map(|t| t.history()),
    });
    if let (Some(n), Some(o)) = (names, v.as_object_mut()) {
        crate::names::json_fields(n, o);
    }
    v.to_string()
}

/// The flow table, sorted by bytes: text with a title (and with `names`, a NAME column), or
/// one JSON object per flow (Community IDs with `seed`).
pub fn print_flows(flows: &mut [FlowLine], json: bool, seed: u16, title: &str, names: bool) {
    flows.sort_by_key(|(s, _, _, _)| std::cmp::Reverse(s.total_bytes()));
    let mut out = std::io::stdout().lock();
    if json {
        for (s, end, tcp, n) in flows.iter() {
            let _ = writeln!(
                out,
                "{}",
                flow_json(s, *end, seed, tcp.as_ref(), n.as_deref())
            );
        }
    } else {
        let _ = writeln!(out, "{title}: {}", flows.len());
        let name_head = if names { "  name" } else { "" };
        let _ = writeln!(
            out,
            "{:<56} {:>10} {:>12} {:>10} {:>12} {:>14}{name_head}",
            "flow (initiator > responder)", "pkts ->", "bytes ->", "pkts <-", "bytes <-", "end"
        );
        for (s, end, _, n) in flows.iter() {
            let o = s.oriented();
            let name = match n.as_deref().and_then(crate::names::short_name) {
                Some(name) if names => format!("  {name}"),
                _ => String::new(),
            };
            let _ = writeln!(
                out,
                "{:<56} {:>10} {:>12} {:>10} {:>12} {:>14}{name}",
                o.key.to_string(),
                o.packets[0],
                o.bytes[0],
                o.packets[1],
                o.bytes[1],
                end_name(*end)
            );
        }
    }
}
