//! `--json`: zcap's packet and flow objects against the schema documented in docs/zcap.md
//! (the tables are read from the document itself): exactly the documented fields, each of
//! its documented type, and the values the frames carry.

use crate::common;

use std::collections::BTreeMap;

use common::{bin, stderr};
use serde_json::Value;

/// The rows of the table whose header starts with `| {first_column} |` in docs/zcap.md:
/// field name to its type.
fn documented(first_column: &str) -> BTreeMap<String, String> {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/zcap.md")).unwrap();
    let mut lines = doc
        .lines()
        .map(str::trim)
        .skip_while(|l| !l.starts_with(&format!("| {first_column} |")))
        .skip(2);
    let mut fields = BTreeMap::new();
    while let Some(l) = lines.next().filter(|l| l.starts_with('|')) {
        let cells: Vec<&str> = l.split('|').map(str::trim).collect();
        fields.insert(cells[1].trim_matches('`').to_string(), cells[2].to_string());
    }
    assert!(
        !fields.is_empty(),
        "no \"{first_column}\" table in docs/zcap.md"
    );
    fields
}

/// Whether `v` is of the documented type `ty`.
fn of_type(v: &Value, ty: &str) -> bool {
    ty.split(" or ").any(|t| match t {
        "integer" => v.is_u64(),
        "string" => v.is_string(),
        "array" => v.is_array(),
        "null" => v.is_null(),
        other => panic!("undocumented type {other}"),
    })
}

/// Checks one object against the documented fields; returns it as a map.
fn conforms(line: &str, fields: &BTreeMap<String, String>) -> serde_json::Map<String, Value> {
    let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
    let obj = v.as_object().unwrap().clone();
    let keys: Vec<&String> = obj.keys().collect();
    assert_eq!(keys, fields.keys().collect::<Vec<_>>(), "{line}");
    for (k, ty) in fields {
        assert!(of_type(&obj[k], ty), "{k} should be {ty}: {line}");
    }
    obj
}

/// Frames of every shape the table names: UDP/IPv4, TCP/IPv6, ICMP echo, a VLAN-tagged UDP,
/// a later IPv4 fragment, an ARP request, GRE (a protocol without a name).
fn frames() -> Vec<Vec<u8>> {
    use etherparse::PacketBuilder;
    let (a, b) = ([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2]);
    let build = |p: etherparse::PacketBuilderStep<etherparse::UdpHeader>| {
        let mut v = Vec::new();
        p.write(&mut v, b"hello").unwrap();
        v
    };
    let udp4 = build(
        PacketBuilder::ethernet2(a, b)
            .ipv4([198, 18, 0, 1], [198, 18, 0, 2], 64)
            .udp(5000, 53),
    );
    let mut tcp6 = Vec::new();
    PacketBuilder::ethernet2(a, b)
        .ipv6(
            [0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
            [0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2],
            64,
        )
        .tcp(40000, 443, 1, 1000)
        .syn()
        .write(&mut tcp6, &[])
        .unwrap();
    let mut icmp = Vec::new();
    PacketBuilder::ethernet2(a, b)
        .ipv4([198, 18, 0, 1], [198, 18, 0, 2], 64)
        .icmpv4_echo_request(7, 1)
        .write(&mut icmp, b"ping")
        .unwrap();
    let vlan = build(
        PacketBuilder::ethernet2(a, b)
            .single_vlan(etherparse::VlanId::try_new(42).unwrap())
            .ipv4([198, 18, 0, 3], [198, 18, 0, 4], 64)
            .udp(6000, 6001),
    );
    // The UDP frame as a later fragment: offset 13 x 8 bytes, no more fragments.
    let mut later = udp4.clone();
    later[20] = 0;
    later[21] = 13;
    let mut arp = vec![0xff; 6];
    arp.extend_from_slice(&a);
    arp.extend_from_slice(&[0x08, 0x06, 0, 1, 8, 0, 6, 4, 0, 1]);
    arp.extend_from_slice(&a);
    arp.extend_from_slice(&[198, 18, 0, 1, 0, 0, 0, 0, 0, 0, 198, 18, 0, 2]);
    arp.resize(60, 0);
    // GRE (47) over IPv4: the UDP frame with its protocol byte changed.
    let mut gre = udp4.clone();
    gre[23] = 47;
    vec![udp4, tcp6, icmp, vlan, later, arp, gre]
}

fn pcap(frames: &[Vec<u8>]) -> Vec<u8> {
    let mut w = pcap_file::pcap::PcapWriter::new(Vec::new()).unwrap();
    for (i, f) in frames.iter().enumerate() {
        w.write_packet(&pcap_file::pcap::PcapPacket::new(
            std::time::Duration::new(1_700_000_000, i as u32 * 1000),
            f.len() as u32,
            f,
        ))
        .unwrap();
    }
    w.into_writer()
}

#[test]
fn packet_and_flow_json_follow_the_documented_schema() {
    let d = common::tmp("json-schema");
    std::fs::create_dir_all(&d).unwrap();
    let input = d.join("in.pcap");
    std::fs::write(&input, pcap(&frames())).unwrap();
    let o = std::process::Command::new(bin())
        .args(["-r", input.to_str().unwrap(), "--json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8(o.stdout).unwrap();
    let fields = documented("packet field");
    let p: Vec<_> = out.lines().map(|l| conforms(l, &fields)).collect();
    assert_eq!(p.len(), 7, "{out}");
    let get = |i: usize, k: &str| p[i][k].clone();
    // UDP/IPv4.
    assert_eq!(get(0, "ts_ns"), 1_700_000_000_000_000_000u64);
    assert_eq!(get(0, "proto"), "udp");
    assert_eq!(
        (get(0, "src"), get(0, "sport")),
        ("198.18.0.1".into(), 5000.into())
    );
    assert_eq!(
        (get(0, "dst"), get(0, "dport")),
        ("198.18.0.2".into(), 53.into())
    );
    assert_eq!(get(0, "len"), get(0, "caplen"));
    assert_eq!(
        (get(0, "vlan"), get(0, "fragment")),
        (Value::Null, "no".into())
    );
    // TCP/IPv6, RFC 5952 addresses.
    assert_eq!(
        (get(1, "proto"), get(1, "src")),
        ("tcp".into(), "2001:db8::1".into())
    );
    assert_eq!(get(1, "dport"), 443);
    // ICMP: type and code in the ports.
    assert_eq!(
        (get(2, "proto"), get(2, "sport"), get(2, "dport")),
        ("icmp".into(), 8.into(), 0.into())
    );
    assert_eq!(
        (get(2, "icmp_type"), get(2, "icmp_code")),
        (8.into(), 0.into())
    );
    assert_eq!(
        (get(0, "icmp_type"), get(0, "icmp_code")),
        (Value::Null, Value::Null)
    );
    // The tag's VLAN id.
    assert_eq!((get(3, "vlan"), get(3, "sport")), (42.into(), 6000.into()));
    // A later fragment: no ports.
    assert_eq!(
        (get(4, "fragment"), get(4, "sport"), get(4, "dport")),
        ("later".into(), Value::Null, Value::Null)
    );
    // ARP: not IP.
    for k in ["proto", "src", "sport", "dst", "dport", "fragment"] {
        assert_eq!(get(5, k), Value::Null, "{k}");
    }
    // GRE: its number, as a string.
    assert_eq!(get(6, "proto"), "47");

    let o = std::process::Command::new(bin())
        .args(["-r", input.to_str().unwrap(), "--flows", "--json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8(o.stdout).unwrap();
    let fields = documented("flow field (`--flows --json`)");
    let flows: Vec<_> = out.lines().map(|l| conforms(l, &fields)).collect();
    assert!(flows.len() >= 5, "{out}");
    for f in &flows {
        for pair in ["packets", "bytes", "tcp_flags"] {
            assert_eq!(f[pair].as_array().unwrap().len(), 2, "{pair}: {f:?}");
        }
        assert_eq!(f["end"], "end_of_capture");
    }
    let ping = flows.iter().find(|f| f["proto"] == 1).unwrap();
    assert_eq!(
        (&ping["icmp_type"], &ping["icmp_code"]),
        (&8.into(), &0.into())
    );
    let udp = flows.iter().find(|f| f["proto"] == 17).unwrap();
    assert_eq!(
        (&udp["icmp_type"], &udp["icmp_code"]),
        (&Value::Null, &Value::Null)
    );
    let tcp = flows.iter().find(|f| f["proto"] == 6).unwrap();
    assert_eq!(tcp["tcp_flags"][0], 0x02, "SYN from the initiator");
}

/// One TCP segment: from the first sender's side, flags, sequence, acknowledgement, payload
/// length.
type Seg = (bool, u8, u32, u32, usize);

/// A TCP/IPv4 frame from 198.18.0.1:`port` (the first sender's side, `fwd`) or to it.
fn tcp_frame(port: u16, fwd: bool, flags: u8, seq: u32, ack: u32, len: usize, win: u16) -> Vec<u8> {
    let (a, b) = ([198, 18, 0, 1], [198, 18, 0, 2]);
    let (src, dst, sp, dp) = if fwd {
        (a, b, port, 80)
    } else {
        (b, a, 80, port)
    };
    let mut tcp = etherparse::TcpHeader::new(sp, dp, seq, win);
    tcp.acknowledgment_number = ack;
    tcp.fin = flags & 0x01 != 0;
    tcp.syn = flags & 0x02 != 0;
    tcp.rst = flags & 0x04 != 0;
    tcp.psh = flags & 0x08 != 0;
    tcp.ack = flags & 0x10 != 0;
    let mut v = Vec::new();
    etherparse::PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
        .ipv4(src, dst, 64)
        .tcp_header(tcp)
        .write(&mut v, &vec![0x61; len])
        .unwrap();
    v
}

/// `--flows --json`'s `conn_state` and `history`: a connection for every state Zeek's
/// documentation defines (crafted as `zcrx_flowcache`'s tcp_state test crafts them, each on
/// its own port), in one capture; null for a flow that is not TCP. The IPFIX file of the same
/// run carries the same two strings in zcrx's elements.
#[test]
fn tcp_flows_say_their_state_and_history() {
    const F: u8 = 0x01;
    const S: u8 = 0x02;
    const R: u8 = 0x04;
    const P: u8 = 0x08;
    const A: u8 = 0x10;
    let (o, r) = (1000u32, 5000u32);
    let hs = [
        (true, S, o, 0, 0),
        (false, S | A, r, o + 1, 0),
        (true, A, o + 1, r + 1, 0),
    ];
    let data = [
        (true, P | A, o + 1, r + 1, 100),
        (false, A, r + 1, o + 101, 0),
        (false, P | A, r + 1, o + 101, 300),
        (true, A, o + 101, r + 301, 0),
    ];
    let cat = |parts: &[&[Seg]]| parts.concat();
    let cases: Vec<(&str, &str, Vec<Seg>)> = vec![
        ("S0", "S", vec![(true, S, o, 0, 0)]),
        ("S1", "ShADad", cat(&[&hs, &data])),
        (
            "SF",
            "ShADadFf",
            cat(&[
                &hs,
                &data,
                &[
                    (true, F | A, o + 101, r + 301, 0),
                    (false, F | A, r + 301, o + 102, 0),
                    (true, A, o + 102, r + 302, 0),
                ],
            ]),
        ),
        (
            "REJ",
            "Sr",
            vec![(true, S, o, 0, 0), (false, R | A, 0, o + 1, 0)],
        ),
        ("S2", "ShAF", cat(&[&hs, &[(true, F | A, o + 1, r + 1, 0)]])),
        (
            "S3",
            "ShAf",
            cat(&[&hs, &[(false, F | A, r + 1, o + 1, 0)]]),
        ),
        (
            "RSTO",
            "ShADadR",
            cat(&[&hs, &data, &[(true, R | A, o + 101, r + 301, 0)]]),
        ),
        (
            "RSTR",
            "ShADadr",
            cat(&[&hs, &data, &[(false, R, r + 301, 0, 0)]]),
        ),
        (
            "RSTOS0",
            "SR",
            vec![(true, S, o, 0, 0), (true, R, o + 1, 0, 0)],
        ),
        (
            "RSTRH",
            "hr",
            vec![(true, S | A, r, o + 1, 0), (true, R, r + 1, 0, 0)],
        ),
        ("SH", "SF", vec![(true, S, o, 0, 0), (true, F, o + 1, 0, 0)]),
        (
            "SHR",
            "hf",
            vec![(true, S | A, r, o + 1, 0), (true, F | A, r + 1, o + 1, 0)],
        ),
        (
            "OTH",
            "Da",
            vec![(true, P | A, o, r, 100), (false, A, r, o + 100, 0)],
        ),
    ];
    let mut frames = Vec::new();
    for (i, (_, _, segs)) in cases.iter().enumerate() {
        let port = 40000 + i as u16;
        for &(fwd, flags, seq, ack, len) in segs {
            frames.push(tcp_frame(port, fwd, flags, seq, ack, len, 1000));
        }
    }
    frames.extend(self::frames().into_iter().take(1)); // a UDP flow
    let d = common::tmp("json-tcp-state");
    std::fs::create_dir_all(&d).unwrap();
    let input = d.join("in.pcap");
    std::fs::write(&input, pcap(&frames)).unwrap();
    let ipfix = d.join("out.ipfix");
    let o = std::process::Command::new(bin())
        .args(["-r", input.to_str().unwrap(), "--flows", "--json"])
        .args(["--ipfix-file", ipfix.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8(o.stdout).unwrap();
    let fields = documented("flow field (`--flows --json`)");
    let flows: Vec<_> = out.lines().map(|l| conforms(l, &fields)).collect();
    assert_eq!(flows.len(), cases.len() + 1, "{out}");
    // The IPFIX records' strings, by the initiator's port.
    let mut dec = zcrx_flowcache::ipfix::decode::Decoder::new();
    let mut exported = BTreeMap::new();
    for m in zcrx_flowcache::ipfix::decode::messages(&std::fs::read(&ipfix).unwrap()) {
        let (m, z) = dec.message_with_zcrx(m.unwrap()).unwrap();
        for (f, z) in m.flows.iter().zip(z) {
            exported.insert(f.sport, (z.conn_state.map(|c| c.to_string()), z.history));
        }
    }
    for (i, (state, history, _)) in cases.iter().enumerate() {
        let port = 40000 + i as u16;
        let f = flows
            .iter()
            .find(|f| f["sport"] == port || f["dport"] == port)
            .unwrap_or_else(|| panic!("{state}: no flow in {out}"));
        assert_eq!(
            (f["conn_state"].as_str(), f["history"].as_str()),
            (Some(*state), Some(*history)),
            "{state}: {f:?}"
        );
        let sport = f["sport"].as_u64().unwrap() as u16;
        assert_eq!(
            exported[&sport],
            (Some(state.to_string()), Some(history.to_string())),
            "{state} in IPFIX"
        );
    }
    let udp = flows.iter().find(|f| f["proto"] == 17).unwrap();
    assert_eq!(
        (&udp["conn_state"], &udp["history"]),
        (&Value::Null, &Value::Null)
    );
    let udp_sport = udp["sport"].as_u64().unwrap() as u16;
    assert_eq!(exported[&udp_sport], (None, None));
}

fn unhex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// An Ethernet/IPv4 frame from 198.18.0.1:`port` to 198.18.0.2:`server` (or back, `!fwd`):
/// TCP with `flags` and `seq`, or UDP (`tcp` false).
fn frame(port: u16, server: u16, fwd: bool, tcp: Option<(u8, u32)>, payload: &[u8]) -> Vec<u8> {
    let (a, b) = ([198, 18, 0, 1], [198, 18, 0, 2]);
    let (src, dst, sp, dp) = if fwd {
        (a, b, port, server)
    } else {
        (b, a, server, port)
    };
    let ip = etherparse::PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
        .ipv4(src, dst, 64);
    let mut v = Vec::new();
    match tcp {
        Some((flags, seq)) => {
            let mut h = etherparse::TcpHeader::new(sp, dp, seq, 1000);
            h.syn = flags & 0x02 != 0;
            h.ack = flags & 0x10 != 0;
            h.psh = flags & 0x08 != 0;
            ip.tcp_header(h).write(&mut v, payload).unwrap();
        }
        None => ip.udp(sp, dp).write(&mut v, payload).unwrap(),
    }
    v
}

/// `--flows --json --names`: the flow fields as without `--names`, and of the names table
/// only the keys found, each of its documented type; every key of that table is found on
/// one of the flows here (TLS over TCP with a ServerHello, a QUIC v1 Initial — RFC 9001's
/// A.2 example —, DNS over UDP, HTTP over TCP), with the values the packets carry.
#[test]
fn flow_names_follow_the_documented_schema() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../flowcache/src/names/testdata/"
    );
    let read = |f: &str| unhex(&std::fs::read_to_string(format!("{dir}{f}")).unwrap());
    let hello = read("rfc9001-a2-crypto.hex");
    let mut client_record = vec![0x16, 3, 1];
    client_record.extend((hello.len() as u16).to_be_bytes());
    client_record.extend(&hello);
    // A TLS 1.3 ServerHello: TLS_AES_128_GCM_SHA256, supported_versions 1.3.
    let mut sh = vec![3, 3];
    sh.extend([0x11; 32]);
    sh.extend([0, 0x13, 0x01, 0, 0, 6, 0, 43, 0, 2, 3, 4]);
    let mut server_record = vec![0x16, 3, 3];
    server_record.extend((sh.len() as u16 + 4).to_be_bytes());
    server_record.extend([2, 0, 0, sh.len() as u8]);
    server_record.extend(&sh);
    let dns_q = [
        0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 3, b'w', b'w', b'w', 2, b'n', b'l', 0, 0, 28, 0,
        1,
    ];
    let mut dns_r = dns_q;
    dns_r[2] = 0x81;
    dns_r[3] = 0x80;
    let req = b"POST /submit?x=1 HTTP/1.1\r\nHost: forms.example\r\nContent-Length: 0\r\n\r\n";
    let frames = vec![
        frame(40000, 443, true, Some((0x02, 100)), &[]),
        frame(40000, 443, false, Some((0x12, 900)), &[]),
        frame(40000, 443, true, Some((0x18, 101)), &client_record),
        frame(40000, 443, false, Some((0x18, 901)), &server_record),
        frame(
            40001,
            443,
            true,
            None,
            &read("rfc9001-a2-client-initial.hex"),
        ),
        frame(40002, 53, true, None, &dns_q),
        frame(40002, 53, false, None, &dns_r),
        frame(40003, 80, true, Some((0x02, 7)), &[]),
        frame(40003, 80, false, Some((0x12, 70)), &[]),
        frame(40003, 80, true, Some((0x18, 8)), req),
        frame(
            40003,
            80,
            false,
            Some((0x18, 71)),
            b"HTTP/1.1 201 Created\r\n\r\n",
        ),
    ];
    let d = common::tmp("json-names");
    std::fs::create_dir_all(&d).unwrap();
    let input = d.join("in.pcap");
    std::fs::write(&input, pcap(&frames)).unwrap();
    let o = std::process::Command::new(bin())
        .args([
            "-r",
            input.to_str().unwrap(),
            "--flows",
            "--json",
            "--names",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8(o.stdout).unwrap();
    let base = documented("flow field (`--flows --json`)");
    let names = documented("names field (`--flows --json --names`)");
    let mut found = BTreeMap::new();
    let mut by_port = BTreeMap::new();
    for l in out.lines() {
        let v: Value = serde_json::from_str(l).unwrap();
        let obj = v.as_object().unwrap();
        for (k, ty) in &base {
            assert!(of_type(&obj[k], ty), "{k} should be {ty}: {l}");
        }
        for (k, v) in obj.iter().filter(|(k, _)| !base.contains_key(*k)) {
            let ty = names
                .get(k)
                .unwrap_or_else(|| panic!("undocumented key {k}: {l}"));
            assert!(of_type(v, ty), "{k} should be {ty}: {l}");
            assert!(!v.is_null(), "{k}: present only when found: {l}");
            found.insert(k.clone(), ());
        }
        by_port.insert(obj["sport"].as_u64().unwrap(), obj.clone());
    }
    assert_eq!(
        found.keys().collect::<Vec<_>>(),
        names.keys().collect::<Vec<_>>(),
        "every documented key found once: {out}"
    );
    let names_of = |port: u64| -> BTreeMap<String, Value> {
        by_port[&port]
            .iter()
            .filter(|(k, _)| !base.contains_key(*k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    };
    let expect = |port: u64, want: Value| {
        let mut got = names_of(port);
        let ja4 = got.remove("ja4");
        assert_eq!(serde_json::to_value(&got).unwrap(), want, "port {port}");
        ja4.map(|j| j.as_str().unwrap().to_string())
    };
    let tls = expect(
        40000,
        serde_json::json!({"server_name": "example.com", "alpn": ["alpn"],
            "tls_client_version": "1.3", "tls_version": "1.3", "tls_cipher": 0x1301}),
    );
    assert!(tls.unwrap().starts_with("t13d"));
    let quic = expect(
        40001,
        serde_json::json!({"server_name": "example.com", "alpn": ["alpn"],
            "tls_client_version": "1.3", "quic_version": 1}),
    );
    assert!(quic.unwrap().starts_with("q13d"));
    let dns = serde_json::json!({"dns_query": "www.nl", "dns_qtype": 28, "dns_rcode": 0,
        "dns_answers": 0});
    assert_eq!(expect(40002, dns), None);
    let http = serde_json::json!({"http_method": "POST", "http_host": "forms.example",
        "http_path": "/submit?x=1", "http_status": 201});
    assert_eq!(expect(40003, http), None);
}
