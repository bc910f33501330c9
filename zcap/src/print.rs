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
pub(crate) fn civil_from_days(z: i64) -> (i64, u32, u32) {
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
}

/// One line like `tcpdump -n -q` prints, with `stamp` (the stamp's own text first) and what
/// `detail` adds. A VLAN tag the kernel stripped (`vlan`) is put back first, as libpcap does
/// for tcpdump, so `-e` and the dumps show the frame as it was on the wire.
pub fn line_stamped(
    stamp: &str,
    link: LinkType,
    wire_len: u32,
    data: &[u8],
    vlan: Option<u16>,
    detail: &Detail,
) -> String {
    let tagged;
    let (data, wire_len) = match vlan {
        Some(tci) if link == LinkType::Ethernet && data.len() >= 12 => {
            let mut f = Vec::with_capacity(data.len() + 4);
            f.extend_from_slice(&data[..12]);
            f.extend_from_slice(&0x8100u16.to_be_bytes());
            f.extend_from_slice(&tci.to_be_bytes());
            f.extend_from_slice(&data[12..]);
            tagged = f;
            (&tagged[..], wire_len + 4)
        }
        _ => (data, wire_len),
    };
    let mut rest = rest(link, wire_len, data, detail);
    dumps(&mut rest, link, data, detail);
    if stamp.is_empty() {
        rest.trim_start_matches(' ').to_string()
    } else {
        format!("{stamp}{rest}")
    }
}

/// The payload dumps: `-X` before `-x` before `-A`, as tcpdump chooses.
fn dumps(out: &mut String, link: LinkType, data: &[u8], d: &Detail) {
    let net = &data[dissect::link_header_len(link, data)..];
    if d.hex_ascii > 0 {
        dissect::hex(out, if d.hex_ascii > 1 { data } else { net }, true);
    } else if d.hex > 0 {
        dissect::hex(out, if d.hex > 1 { data } else { net }, false);
    } else if d.ascii {
        dissect::ascii(out, net);
    }
}

/// A line after its time stamp, starting with a space.
fn rest(link: LinkType, wire_len: u32, data: &[u8], detail: &Detail) -> String {
    let mut s = String::from(" ");
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
        if let Some(p) = dissect::ether_prefix(data, wire_len) {
            s.push_str(&p);
        }
    }
    let Ok(x) = extract(link, data, None) else {
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
        return s;
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
            dissect::ipv4_verbose(data, l3)
        };
        s.push_str(&hdr.unwrap_or_default());
    }
    summary(&mut s, &x, wire_len, data, detail, ether);
    s
}

/// Addresses and the transport summary.
/// (`ether`: with -e, where a quoted datagram has no "IP " before it either.)
fn summary(
    s: &mut String,
    x: &Extracted,
    wire_len: u32,
    data: &[u8],
    detail: &Detail,
    ether: bool,
) {
    let k = x.key;
    let verbose = detail.verbose > 0;
    // Where the datagram ends by its own header (Ethernet padding is not payload).
    let end = x.l3_offset as usize + x.ip_octets(wire_len) as usize;
    let (l3, l4) = (x.l3_offset as usize, x.l4_offset as usize);
    let Some(sum_note) = endpoints(s, x, data, verbose) else {
        return;
    };
    let payload = end.saturating_sub(x.payload_offset as usize);
    match (k.proto(), x.fragment) {
        (_, Fragment::Later) => {
            let _ = write!(s, "ip-proto-{} (fragment)", k.proto());
        }
        (ipproto::UDP, _) => {
            // tcpdump's length: the UDP header's, unless the IP header's is shorter.
            let ulen = UdpPacket::new_checked(data.get(l4..).unwrap_or_default())
                .ok()
                .map(|u| usize::from(u.length()));
            let len = ulen.map_or(payload, |u| u.saturating_sub(8).min(payload));
            let p = app::Payload {
                data: data
                    .get(x.payload_offset as usize..end.min(data.len()))
                    .unwrap_or_default(),
                len,
                sport: k.sport(),
                dport: k.dport(),
                verbose: detail.verbose,
            };
            let v4_note = !k.is_ipv6() && detail.verbose > 1 && x.fragment == Fragment::No;
            if v4_note {
                s.push_str(&dissect::udp4_sum_note(data, l3, l4, len + 8));
            }
            match app::printer(app::UDP, &p).filter(|_| !detail.quiet) {
                Some(print) => {
                    if sum_note {
                        s.push_str(&dissect::udp6_sum_note(data, l3, l4, len + 8));
                    }
                    print(s, &p)
                }
                None => udp_summary(s, data, l3, l4, end, payload, sum_note),
            }
        }
        (ipproto::TCP, _) => {
            let _ = write!(s, "tcp {payload}");
        }
        (ipproto::ICMP, _) => icmp_summary(s, data, l4, end, detail, ether),
        (ipproto::ICMPV6, _) => {
            s.push_str(&dissect::icmp6(
                data,
                l3,
                l4,
                end.saturating_sub(l4),
                verbose,
            ));
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
fn endpoints(s: &mut String, x: &Extracted, data: &[u8], verbose: bool) -> Option<bool> {
    let k = x.key;
    let v6 = k.is_ipv6();
    let (src, dst) = (k.src(), k.dst());
    let l3 = x.l3_offset as usize;
    let ports = matches!(
        k.proto(),
        ipproto::TCP | ipproto::UDP | ipproto::SCTP | ipproto::DCCP | ipproto::UDPLITE
    ) && x.fragment != Fragment::Later;
    // IPv6 extension headers: tcpdump prints the addresses, the headers, then the transport
    // with its ports alone (and checks no checksum of a fragment).
    let ext = v6.then(|| dissect::ipv6_ext(data, l3, verbose)).flatten();
    let mut sum_note = verbose && v6;
    if let Some(e) = &ext {
        let _ = write!(s, "{src} > {dst}: {}", e.text);
        if e.stop {
            return None;
        }
        sum_note &= !e.fragmented;
        if ports {
            let _ = write!(s, "{} > {}: ", k.sport(), k.dport());
        }
    } else if ports {
        let _ = write!(s, "{src}.{} > {dst}.{}: ", k.sport(), k.dport());
    } else {
        let _ = write!(s, "{src} > {dst}: ");
    }
    Some(sum_note)
}

/// A UDP datagram's summary: `-v`'s IPv6 checksum note (`sum_note`), then the length its
/// header gives (`payload`, the frame's, if the header is cut).
fn udp_summary(
    s: &mut String,
    data: &[u8],
    l3: usize,
    l4: usize,
    end: usize,
    payload: usize,
    sum_note: bool,
) {
    // The UDP length field, not the frame, says how long the payload is.
    let ulen = UdpPacket::new_checked(data.get(l4..).unwrap_or_default())
        .ok()
        .map(|u| usize::from(u.length()));
    if sum_note {
        let len = ulen.unwrap_or(end.saturating_sub(l4));
        s.push_str(&dissect::udp6_sum_note(data, l3, l4, len));
    }
    let _ = write!(
        s,
        "UDP, length {}",
        ulen.map_or(payload, |u| u.saturating_sub(8))
    );
}

/// An ICMP message's summary; with `-v`, an error's quoted datagram follows on its own
/// lines (its IP header, then its summary).
fn icmp_summary(s: &mut String, data: &[u8], l4: usize, end: usize, detail: &Detail, ether: bool) {
    let verbose = detail.verbose > 0;
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
        s.push_str(&dissect::ipv4_verbose(inner, 0).unwrap_or_default());
        summary(s, &ix, inner.len() as u32, inner, detail, ether);
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
