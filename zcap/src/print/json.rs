//! Packets and flows as JSON lines, and the flow table's text.

use std::io::Write as _;

use zcrx_flowcache::names::Names;
use zcrx_flowcache::{extract, proto_name, EndReason, FlowStats, Fragment, LinkType, TcpState};

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

/// `--sample`'s interval (0: not sampled): every flow object says it.
static SAMPLING: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// Says, in every flow object from now on, that one packet in `interval` was kept (`None`:
/// nothing said, as without `--sample`).
pub(crate) fn set_sampling(interval: Option<u32>) {
    SAMPLING.store(interval.unwrap_or(0), std::sync::atomic::Ordering::Relaxed);
}

/// One flow as a JSON object (`--flows --json`), as IPFIX exports it: seen from its
/// initiator (`src` sent the first packet), index 0 of the pairs the initiator's direction,
/// bytes counting IP header and payload, counts since the flow's last report; its Community
/// ID with `seed`; a TCP flow's state and history (Zeek's) when followed, else null; with
/// `--names`, the names found (each key only when found); with `--sample N`, `sampling`: N
/// (the counts are of the packets kept: scale them by N).
pub fn flow_json(
    s: &FlowStats,
    end: Option<EndReason>,
    seed: u16,
    tcp: Option<&TcpState>,
    names: Option<&Names>,
) -> String {
    let id = s.community_id(seed).to_string();
    let mut out = Vec::with_capacity(320);
    write_flow_json(&mut out, s, end, &id, tcp, names);
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// [`flow_json`] appended to `out`, with the flow's Community ID already made (`id`: the
/// oriented key's), as Kafka's records are keyed by it too.
pub(crate) fn write_flow_json(
    out: &mut Vec<u8>,
    s: &FlowStats,
    end: Option<EndReason>,
    id: &str,
    tcp: Option<&TcpState>,
    names: Option<&Names>,
) {
    let s = s.oriented();
    let k = s.key;
    let sampling = SAMPLING.load(std::sync::atomic::Ordering::Relaxed);
    let object = FlowObject {
        bytes: s.bytes,
        community_id: id,
        conn_state: tcp.map(|t| t.conn_state().name()),
        dport: k.dport(),
        dst: k.dst(),
        end: end_name(end),
        first_ns: s.first_ns,
        history: tcp.map(|t| t.history()),
        icmp_code: k.icmp_type_code().map(|(_, c)| c),
        icmp_type: k.icmp_type_code().map(|(t, _)| t),
        last_ns: s.last_ns,
        packets: s.packets,
        proto: k.proto(),
        sampling: (sampling > 0).then_some(sampling),
        sport: k.sport(),
        src: k.src(),
        tcp_flags: s.tcp_flags,
        vlan: k.vlan(),
    };
    // Writing to a Vec fails only where memory does.
    match names {
        // The names' keys among the others, in the same order.
        Some(n) => {
            let mut v = serde_json::to_value(&object).expect("a flow object is JSON");
            if let Some(o) = v.as_object_mut() {
                crate::names::json_fields(n, o);
            }
            serde_json::to_writer(out, &v).expect("a flow object is JSON");
        }
        None => serde_json::to_writer(out, &object).expect("a flow object is JSON"),
    }
}

/// A flow object's fields, in the order of their names (as a JSON map keeps them): written
/// straight from this struct, no map built, where no names are added.
#[derive(serde::Serialize)]
struct FlowObject<'a> {
    bytes: [u64; 2],
    community_id: &'a str,
    conn_state: Option<&'a str>,
    dport: u16,
    dst: std::net::IpAddr,
    end: &'static str,
    first_ns: u64,
    history: Option<&'a str>,
    icmp_code: Option<u8>,
    icmp_type: Option<u8>,
    last_ns: u64,
    packets: [u64; 2],
    proto: u8,
    /// Only with --sample.
    #[serde(skip_serializing_if = "Option::is_none")]
    sampling: Option<u32>,
    sport: u16,
    src: std::net::IpAddr,
    tcp_flags: [u8; 2],
    vlan: Option<u16>,
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
