//! `zcrx_flowcache::names` against tshark's dissectors and the `ja4plus` package (FoxIO's
//! JA4 in Python), on the lab capture of `zcrx_ring::lab::names` (TLS 1.3 and 1.2 with and without
//! SNI, HTTPS and HTTP, DNS over UDP and TCP, QUIC Initials of versions 1 and 2, over a
//! small-MSS route too, so that hellos and headers span several segments).
//!
//! Every field is compared on every flow: where tshark (or ja4plus) finds a value, names must
//! find the same one, and where it finds none, names must find none. Needs root and the
//! tools of `scripts/deps.sh`; under `CI=true` a missing one fails the test.
#![cfg(feature = "names")]

use std::collections::BTreeMap;
use std::fs::File;
use std::path::Path;

use zcrx_flowcache::names::FlowNames;
use zcrx_flowcache::{extract, Direction, FlowKey, LinkType};
use zcrx_ring::lab::names as lab;
use zcrx_ring::lab::names::{
    flow_name, ja4_reference, tshark_fields, Capture, Fields, FIELDS, PY_MODULES,
};
use zcrx_ring::lab::Need;

/// The flows of the capture through `FlowNames`, fields printed as tshark prints them.
/// Also returns, per flow whose ClientHello was found, how many payload-carrying packets of
/// the flow had been fed when it was.
#[allow(clippy::type_complexity)]
fn names_fields(
    pcap: &Path,
) -> (
    BTreeMap<String, Fields>,
    BTreeMap<String, String>,
    BTreeMap<String, usize>,
) {
    let mut reader = pcap_file::pcap::PcapReader::new(File::open(pcap).unwrap()).unwrap();
    let link = LinkType::from_linktype(reader.header().datalink.into()).unwrap();
    let mut flows: BTreeMap<String, (FlowKey, FlowNames)> = BTreeMap::new();
    let mut fed: BTreeMap<String, usize> = BTreeMap::new();
    let mut hello_after: BTreeMap<String, usize> = BTreeMap::new();
    while let Some(p) = reader.next_packet() {
        let p = p.unwrap();
        let frame = &p.data[..];
        let Ok(x) = extract(link, frame, None) else {
            continue;
        };
        let proto = match x.key.proto() {
            6 => "tcp",
            17 => "udp",
            _ => continue,
        };
        let (src, dst) = (x.key.src().to_string(), x.key.dst().to_string());
        let name = flow_name(proto, (&src, x.key.sport()), (&dst, x.key.dport()));
        let (first, names) = flows
            .entry(name.clone())
            .or_insert_with(|| (x.key, FlowNames::new()));
        let dir = if x.key == *first {
            Direction::Forward
        } else {
            Direction::Reverse
        };
        // The IP datagram's end, not the frame's (Ethernet pads short frames).
        let end = (x.l3_offset + x.ip_len).min(frame.len() as u32) as usize;
        let payload = frame.get(x.payload_offset as usize..end).unwrap_or(&[]);
        let ports = (x.key.sport(), x.key.dport());
        if proto == "tcp" {
            let l4 = x.l4_offset as usize;
            let seq = u32::from_be_bytes(frame[l4 + 4..l4 + 8].try_into().unwrap());
            names.tcp(dir, seq, x.tcp_flags, payload, ports);
        } else {
            names.udp(dir, payload, ports);
        }
        let n = fed.entry(name.clone()).or_default();
        *n += usize::from(!payload.is_empty());
        if names.names().client_hello.is_some() {
            hello_after.entry(name).or_insert(*n);
        }
    }
    let mut out = BTreeMap::new();
    let mut ja4 = BTreeMap::new();
    for (name, (_, fnames)) in flows {
        let n = fnames.names();
        let mut f = Fields::default();
        if let Some(h) = &n.client_hello {
            f.set("sni", h.hello.server_name.clone().unwrap_or_default());
            f.set("alpn", h.hello.alpn.join(","));
            let v: Vec<String> = h
                .hello
                .versions
                .iter()
                .map(|v| format!("0x{v:04x}"))
                .collect();
            f.set("client_versions", v.join(","));
            if let Some(q) = h.quic_version {
                f.set("quic_version", format!("0x{q:08x}"));
            }
            ja4.insert(name.clone(), h.hello.ja4.clone());
        }
        if let Some(s) = &n.server_hello {
            f.set("server_version", format!("0x{:04x}", s.version));
            f.set("server_cipher", format!("0x{:04x}", s.cipher_suite));
        }
        if let Some(q) = n.dns_query.as_ref().and_then(|m| m.question.as_ref()) {
            f.set("dns_qry_name", q.name.clone());
            f.set("dns_qry_type", q.qtype.to_string());
        }
        if let Some(r) = &n.dns_response {
            f.set("dns_rcode", r.rcode.to_string());
            f.set("dns_answers", r.answers.to_string());
        }
        if let Some(r) = &n.http_request {
            f.set("http_host", r.host.clone().unwrap_or_default());
            f.set("http_method", r.method.clone());
            f.set("http_uri", r.path.clone());
        }
        if let Some(r) = &n.http_response {
            f.set("http_code", r.status.to_string());
        }
        out.insert(name, f);
    }
    (out, ja4, hello_after)
}

#[test]
fn names_equal_tshark_and_ja4plus_on_lab_traffic() {
    zcrx_ring::require!(
        Need::Privileges,
        Need::Tool("tshark"),
        Need::Tool("tcpdump"),
        Need::Tool("openssl"),
        Need::Tool("curl"),
        Need::Tool("dig"),
        Need::Tool("ethtool"),
        Need::Tool("ss"),
        Need::Tool("python3"),
    );
    if !zcrx_ring::lab::require_python("names_equal_tshark_and_ja4plus_on_lab_traffic", PY_MODULES)
    {
        return;
    }
    let work = Capture {
        dir: std::env::temp_dir().join(format!("zcrx-names-{}", std::process::id())),
    };
    std::fs::create_dir_all(&work.dir).unwrap();
    let dir = work.dir.as_path();
    let pcap = lab::lab_capture(dir);
    let oracle = tshark_fields(&pcap);
    let (ours, ja4, hello_after) = names_fields(&pcap);
    let reference = ja4_reference(&pcap);

    let mut compared: BTreeMap<&str, usize> = BTreeMap::new();
    let mut mismatches = Vec::new();
    let empty = Fields::default();
    let all: std::collections::BTreeSet<&String> = oracle.keys().chain(ours.keys()).collect();
    for flow in all {
        let o = oracle.get(flow).unwrap_or(&empty);
        let n = ours.get(flow).unwrap_or(&empty);
        for &field in FIELDS {
            let (ov, nv) = (o.0.get(field), n.0.get(field));
            if ov.is_some() {
                *compared.entry(field).or_default() += 1;
            }
            if ov != nv {
                mismatches.push(format!("{flow} {field}: tshark {ov:?}, names {nv:?}"));
            }
        }
    }
    for (flow, r) in &reference {
        *compared.entry("ja4").or_default() += 1;
        if ja4.get(flow) != Some(r) {
            mismatches.push(format!(
                "{flow} ja4: ja4plus {r}, names {:?}",
                ja4.get(flow)
            ));
        }
    }
    for (flow, j) in &ja4 {
        if !reference.contains_key(flow) {
            eprintln!("no reference JA4 for {flow} (names: {j})");
        }
    }
    let quic_v2_ja4 = ja4
        .iter()
        .filter(|(f, _)| {
            oracle
                .get(*f)
                .and_then(|o| o.0.get("quic_version"))
                .map(String::as_str)
                == Some("0x6b3343cf")
        })
        .count();
    eprintln!(
        "names oracle: {} flows (tshark {}), fields compared {compared:?}; {} JA4 of QUIC v2 hellos without a reference (ja4plus reads v1 only)",
        ours.len(),
        oracle.len(),
        quic_v2_ja4
    );
    // Over the small-MSS route each TCP ClientHello spans several segments, and the padded
    // QUIC ClientHellos span several Initial datagrams.
    let spanning = |proto: &str| {
        hello_after
            .iter()
            .filter(|(f, &n)| f.starts_with(proto) && n >= 3)
            .count()
    };
    eprintln!(
        "ClientHellos read from 3 or more packets: {} over TCP, {} over QUIC",
        spanning("tcp"),
        spanning("udp")
    );
    assert!(
        spanning("tcp") >= 4 && spanning("udp") >= 2,
        "{hello_after:?}"
    );
    assert!(
        mismatches.is_empty(),
        "{} mismatches:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
    // The traffic above must have produced every kind of name, split and whole.
    for (field, least) in [
        ("sni", 10),
        ("alpn", 10),
        ("client_versions", 12),
        ("server_cipher", 8),
        ("dns_qry_name", 10),
        ("dns_answers", 10),
        ("http_method", 4),
        ("dns_rcode", 10),
        ("http_host", 4),
        ("http_code", 4),
        ("quic_version", 4),
        ("ja4", 10),
    ] {
        assert!(
            compared.get(field).copied().unwrap_or(0) >= least,
            "only {:?} flows with {field} (at least {least} expected)",
            compared.get(field)
        );
    }
}
