//! `--names`: zcap's flows against tshark's dissectors and the `ja4plus` package on the names
//! oracle's lab capture (`zcrx_ring::lab::names`: TLS 1.3 and 1.2, HTTPS and HTTP, DNS
//! over UDP and TCP, QUIC v1 and v2, hellos and headers split over segments); a live capture
//! on a namespace's loopback with a TLS handshake and a DNS query; and a flood of half-open
//! handshakes and unfinished ClientHellos whose memory stays within the documented bound.
//! Needs root and the tools of `scripts/deps.sh`; under `CI=true` a missing one fails.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{bin, finish_live, start_live, stderr};
use serde_json::Value;
use zcrx_flowcache::names::{FLOW_NAMES_HEAP_BOUND, FLOW_NAMES_INLINE_BOUND};
use zcrx_ring::lab::names as lab;
use zcrx_ring::lab::names::{flow_name, ja4_reference, tshark_fields, Capture, Fields, PY_MODULES};
use zcrx_ring::lab::{Lab, Need};

/// A TLS version as zcap's JSON writes it, from tshark's `0x0304`.
fn version_name(hex: &str) -> String {
    match hex {
        "0x0304" => "1.3".into(),
        "0x0303" => "1.2".into(),
        "0x0302" => "1.1".into(),
        "0x0301" => "1.0".into(),
        other => other.into(),
    }
}

/// tshark's fields as zcap's JSON keys and values.
fn expected(t: &Fields) -> BTreeMap<&'static str, String> {
    let mut m = BTreeMap::new();
    for (k, v) in &t.0 {
        let (key, v) = match *k {
            "sni" => ("server_name", v.clone()),
            "alpn" => ("alpn", v.clone()),
            // zcap says the highest version offered.
            "client_versions" => {
                let hi = v
                    .split(',')
                    .max_by_key(|x| u16::from_str_radix(x.trim_start_matches("0x"), 16).unwrap())
                    .unwrap();
                ("tls_client_version", version_name(hi))
            }
            "server_version" => ("tls_version", version_name(v)),
            "server_cipher" => (
                "tls_cipher",
                u16::from_str_radix(v.trim_start_matches("0x"), 16)
                    .unwrap()
                    .to_string(),
            ),
            "quic_version" => (
                "quic_version",
                u32::from_str_radix(v.trim_start_matches("0x"), 16)
                    .unwrap()
                    .to_string(),
            ),
            "dns_qry_name" => ("dns_query", v.clone()),
            "dns_qry_type" => ("dns_qtype", v.clone()),
            "dns_rcode" => ("dns_rcode", v.clone()),
            "dns_answers" => ("dns_answers", v.clone()),
            "http_host" => ("http_host", v.clone()),
            "http_method" => ("http_method", v.clone()),
            "http_uri" => ("http_path", v.clone()),
            "http_code" => ("http_status", v.clone()),
            other => panic!("unmapped tshark field {other}"),
        };
        m.insert(key, v);
    }
    m
}

/// A JSON value as the comparison's string (arrays joined by ",", as tshark joins ALPN).
fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(a) => a.iter().map(text).collect::<Vec<_>>().join(","),
        other => other.to_string(),
    }
}

/// The names' keys of `--flows --json --names` (docs/zcap.md; `ja4` compared apart).
const NAME_KEYS: &[&str] = &[
    "server_name",
    "alpn",
    "tls_client_version",
    "tls_version",
    "tls_cipher",
    "quic_version",
    "dns_query",
    "dns_qtype",
    "dns_rcode",
    "dns_answers",
    "http_method",
    "http_host",
    "http_path",
    "http_status",
];

/// zcap's flow objects by flow name.
fn zcap_flows(out: &str) -> BTreeMap<String, serde_json::Map<String, Value>> {
    let mut flows = BTreeMap::new();
    for l in out.lines() {
        let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
        let o = v.as_object().unwrap().clone();
        let proto = match o["proto"].as_u64() {
            Some(6) => "tcp",
            Some(17) => "udp",
            _ => continue,
        };
        let name = flow_name(
            proto,
            (
                o["src"].as_str().unwrap(),
                o["sport"].as_u64().unwrap() as u16,
            ),
            (
                o["dst"].as_str().unwrap(),
                o["dport"].as_u64().unwrap() as u16,
            ),
        );
        flows.insert(name, o);
    }
    flows
}

#[test]
fn zcap_names_equal_tshark_and_ja4plus_on_lab_traffic() {
    let mut needs = vec![Need::Privileges];
    needs.extend(lab::TOOLS.iter().map(|t| Need::Tool(t)));
    if !zcrx_ring::lab::require("zcap_names_equal_tshark_and_ja4plus_on_lab_traffic", &needs) {
        return;
    }
    if !zcrx_ring::lab::require_python(
        "zcap_names_equal_tshark_and_ja4plus_on_lab_traffic",
        PY_MODULES,
    ) {
        return;
    }
    let work = Capture {
        dir: std::env::temp_dir().join(format!("zcap-names-{}", std::process::id())),
    };
    std::fs::create_dir_all(&work.dir).unwrap();
    let pcap = lab::lab_capture(&work.dir);
    let input = pcap.to_str().unwrap();
    let o = Command::new(bin())
        .args(["-r", input, "--flows", "--json", "--names"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let ours = zcap_flows(&String::from_utf8(o.stdout).unwrap());
    let oracle = tshark_fields(&pcap);
    let reference = ja4_reference(&pcap);

    let mut mismatches = Vec::new();
    let mut compared: BTreeMap<&str, usize> = BTreeMap::new();
    let mut flows_compared = 0;
    let empty = serde_json::Map::new();
    let all: BTreeSet<&String> = oracle.keys().chain(ours.keys()).collect();
    for flow in all {
        let want = oracle.get(flow).map(expected).unwrap_or_default();
        let got = ours.get(flow).unwrap_or(&empty);
        if !want.is_empty() {
            flows_compared += 1;
        }
        for &key in NAME_KEYS {
            let (w, g) = (want.get(key), got.get(key).map(text));
            if w.is_some() {
                *compared.entry(key).or_default() += 1;
            }
            // The DNS question of a flow whose query tshark did not see comes from its
            // response (the flows here all carry their query).
            if w != g.as_ref() {
                mismatches.push(format!("{flow} {key}: tshark {w:?}, zcap {g:?}"));
            }
        }
        match (reference.get(flow), got.get("ja4").map(text)) {
            (Some(r), g) => {
                *compared.entry("ja4").or_default() += 1;
                if g.as_ref() != Some(r) {
                    mismatches.push(format!("{flow} ja4: ja4plus {r}, zcap {g:?}"));
                }
            }
            (None, Some(g))
                if !got.contains_key("quic_version") || text(&got["quic_version"]) == "1" =>
            {
                mismatches.push(format!("{flow} ja4: no ja4plus reference, zcap {g}"));
            }
            _ => {}
        }
    }
    eprintln!(
        "zcap names oracle: {} flows from zcap, {} from tshark, {flows_compared} flows with names compared, fields {compared:?}",
        ours.len(),
        oracle.len()
    );
    assert!(
        mismatches.is_empty(),
        "{} mismatches:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
    for (field, least) in [
        ("server_name", 10),
        ("alpn", 10),
        ("tls_client_version", 12),
        ("tls_cipher", 8),
        ("dns_query", 10),
        ("dns_rcode", 10),
        ("http_host", 4),
        ("http_status", 4),
        ("quic_version", 4),
        ("ja4", 10),
    ] {
        assert!(
            compared.get(field).copied().unwrap_or(0) >= least,
            "only {:?} flows with {field} (at least {least} expected)",
            compared.get(field)
        );
    }

    // Without --names the table is the one of before (no name column, no key); with it,
    // the same lines, some with a name after them.
    let table = |names: bool| {
        let mut args = vec!["-r", input, "--flows"];
        if names {
            args.push("--names");
        }
        let o = Command::new(bin()).args(&args).output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        String::from_utf8(o.stdout).unwrap()
    };
    let (plain, named) = (table(false), table(true));
    let plain_lines: Vec<&str> = plain.lines().collect();
    let named_lines: Vec<&str> = named.lines().collect();
    assert_eq!(plain_lines.len(), named_lines.len());
    assert!(!plain_lines[1].contains("name"), "{}", plain_lines[1]);
    assert!(named_lines[1].ends_with("  name"), "{}", named_lines[1]);
    let mut with_names = 0;
    for (p, n) in plain_lines.iter().zip(&named_lines).skip(2) {
        assert!(n.starts_with(p), "{p}\n{n}");
        with_names += usize::from(n.len() > p.len());
    }
    assert!(named.contains("  one.example"), "{named}");
    assert!(with_names >= 20, "{with_names} lines with a name:\n{named}");

    // With -w the names are the same and the file holds every packet: the writer takes
    // the packets through the book when --names is on, and straight to the file when not.
    let written = work.dir.join("names-w.pcap");
    let o = Command::new(bin())
        .args(["-r", input, "--flows", "--json", "--names", "-w"])
        .arg(&written)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(zcap_flows(&String::from_utf8(o.stdout).unwrap()), ours);
    let captured = |file: &str| {
        let o = Command::new(bin())
            .args(["-r", file, "--count"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        common::count(&stderr(&o), " packets captured")
    };
    let (read, back) = (captured(input), captured(written.to_str().unwrap()));
    eprintln!("zcap --names -w: {back} packets written of {read}");
    assert_eq!(back, read);
    let o = Command::new(bin())
        .args(["-r", input, "--flows", "--json"])
        .output()
        .unwrap();
    let keys: BTreeSet<String> = zcap_flows(&String::from_utf8(o.stdout).unwrap())
        .values()
        .flat_map(|f| f.keys().cloned())
        .collect();
    for k in NAME_KEYS.iter().chain(&["ja4"]) {
        assert!(!keys.contains(*k), "{k} without --names");
    }
}

fn in_ns(ns: &str, args: &[&str]) -> Command {
    let mut c = Command::new("ip");
    c.args(["netns", "exec", ns]).args(args);
    c
}

/// `zcap -i lo --flows --json --names` in a namespace: an openssl handshake with a server
/// name and a dig query appear with their names, the handshake's also in a `--flows-every`
/// table while it is live; each packet counted once (the loopback's outgoing copies are left
/// out of the names, or the ClientHello would be read twice: no harm, but no second copy
/// either).
#[test]
fn live_loopback_flows_carry_their_names() {
    live_loopback(1);
}

/// [`live_loopback_flows_carry_their_names`] on two shards: the final table holds each flow
/// once, with its names, whichever shard read which direction.
#[test]
fn live_loopback_flows_carry_their_names_on_two_shards() {
    live_loopback(2);
}

fn live_loopback(shards: usize) {
    zcrx_ring::require!(
        Need::Privileges,
        Need::Tool("openssl"),
        Need::Tool("dig"),
        Need::Tool("python3"),
        Need::Tool("ss"),
    );
    if !zcrx_ring::lab::require_python("live_loopback", &["dnslib"]) {
        return;
    }
    let lab = Lab::new().expect("lab");
    let ns = lab.a.netns.clone();
    let dir = common::fresh_dir(&format!("names-live-{shards}"));
    assert!(in_ns(&ns, &["ip", "link", "set", "lo", "up"])
        .status()
        .unwrap()
        .success());
    lab::self_signed(&dir);
    let mut servers = lab::Killed(vec![
        lab::spawn(
            &ns,
            &[
                "openssl", "s_server", "-accept", "4433", "-cert", "cert.pem", "-key", "key.pem",
                "-www",
            ],
            &dir,
        ),
        lab::spawn(
            &ns,
            &[
                "python3",
                &lab::script("dns_responder.py"),
                "127.0.0.1",
                "53",
            ],
            &dir,
        ),
    ]);
    lab::wait_listening(&ns, "tcp", ":4433");
    lab::wait_listening(&ns, "udp", "127.0.0.1:53");
    let (zcap, rx, _) = start_live(
        &ns,
        &[
            "-i",
            "lo",
            "--flows",
            "--json",
            "--names",
            "--flows-every",
            "1",
            "--shards",
            &shards.to_string(),
            "port 4433 or port 53",
        ],
    );
    // The handshake, then the connection held open for the --flows-every table.
    let client = in_ns(
        &ns,
        &[
            "sh",
            "-c",
            "sleep 2.5 | openssl s_client -connect 127.0.0.1:4433 -servername live.example -alpn h2",
        ],
    )
    .stdin(Stdio::null())
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .status()
    .unwrap();
    eprintln!("s_client: {client}");
    let dig = in_ns(
        &ns,
        &[
            "dig",
            "@127.0.0.1",
            "+tries=1",
            "+time=2",
            "www.lab.example",
            "A",
        ],
    )
    .stdout(Stdio::null())
    .status()
    .unwrap();
    assert!(dig.success(), "dig");
    std::thread::sleep(Duration::from_millis(500));
    let (ok, out, err) = finish_live(zcap, rx, true);
    servers.0.iter_mut().for_each(|c| {
        let _ = c.kill();
    });
    assert!(ok, "{err}");
    let objects: Vec<serde_json::Map<String, Value>> = out
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .map(|v| v.as_object().unwrap().clone())
        .collect();
    let tls: Vec<_> = objects
        .iter()
        .filter(|o| o["dport"] == 4433 && o["end"] != "live")
        .collect();
    assert_eq!(tls.len(), 1, "{out}");
    assert_eq!(tls[0]["server_name"], "live.example", "{out}");
    assert_eq!(tls[0]["alpn"], serde_json::json!(["h2"]), "{out}");
    assert!(tls[0]["ja4"].as_str().unwrap().starts_with("t13"), "{out}");
    assert!(tls[0].contains_key("tls_cipher"), "{out}");
    assert!(
        objects
            .iter()
            .any(|o| o["end"] == "live" && o["server_name"] == "live.example"),
        "no live flow with its name in a --flows-every table:\n{out}"
    );
    let dns = objects
        .iter()
        .find(|o| o["dport"] == 53 && o["end"] != "live")
        .unwrap_or_else(|| panic!("no DNS flow: {out}"));
    assert_eq!(dns["dns_query"], "www.lab.example", "{out}");
    assert_eq!(
        (&dns["dns_qtype"], &dns["dns_rcode"]),
        (&1.into(), &0.into())
    );
}

/// A pcap of half-open handshakes and unfinished ClientHellos (a record that announces 3000
/// bytes, two 1000-byte segments of it, the second first, so each flow holds a reassembly
/// buffer): the book holds at most one entry per slot, each within the documented bound,
/// and zcap's peak resident memory grows by less than that bound over the same run without
/// --names.
#[test]
fn a_flood_of_unfinished_hellos_stays_within_the_bound() {
    zcrx_ring::require!(Need::Tool("python3"));
    let dir = common::fresh_dir("names-flood");
    let flows: u32 = 6000;
    let slots: usize = 4096;
    let mut frames: Vec<Vec<u8>> = Vec::new();
    let mut record = vec![
        0x16, 0x03, 0x01, 0x0b, 0xb8, 0x01, 0x00, 0x0b, 0xb4, 0x03, 0x03,
    ];
    record.resize(2000, 0x5a);
    for i in 0..flows {
        let client = [198, 18, (i >> 8) as u8 | 0x40, i as u8];
        let port = 10_000 + (i % 50_000) as u16;
        let seg = |flags: u8, seq: u32, payload: &[u8]| {
            let mut h = etherparse::TcpHeader::new(port, 443, seq, 1000);
            h.syn = flags & 0x02 != 0;
            h.ack = flags & 0x10 != 0;
            let mut v = Vec::new();
            etherparse::PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
                .ipv4(client, [198, 18, 0, 2], 64)
                .tcp_header(h)
                .write(&mut v, payload)
                .unwrap();
            v
        };
        frames.push(seg(0x02, 1000, &[]));
        if i % 2 == 0 {
            frames.push(seg(0x10, 2001, &record[1000..]));
            frames.push(seg(0x10, 1001, &record[..1000]));
        }
    }
    let input = dir.join("flood.pcap");
    common::write_pcap(
        &input,
        frames.iter().enumerate().map(|(i, f)| {
            (
                Duration::from_micros(1_700_000_000_000_000 + i as u64),
                &f[..],
            )
        }),
    );
    // The peak resident set of one zcap run, KiB, from its parent's rusage.
    let peak_kib = |names: bool| -> (u64, String) {
        let mut args = vec![
            bin(),
            "-r".into(),
            input.display().to_string(),
            "--flows".into(),
            "--max-flows".into(),
            slots.to_string(),
        ];
        if names {
            args.extend(["--names".into(), "--names-stats".into()]);
        }
        let o = Command::new("python3")
            .args([
                "-c",
                "import resource, subprocess, sys\n\
                 r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)\n\
                 sys.stderr.write(r.stderr.decode())\n\
                 print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n\
                 sys.exit(r.returncode)",
            ])
            .args(&args)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let kib = String::from_utf8_lossy(&o.stdout).trim().parse().unwrap();
        (kib, stderr(&o))
    };
    let (plain, _) = peak_kib(false);
    let (named, err) = peak_kib(true);
    let stats = err
        .lines()
        .find(|l| l.starts_with("zcap: names book:"))
        .unwrap_or_else(|| panic!("no stats line: {err}"));
    let number = |what: &str| -> usize {
        stats
            .split(", ")
            .find_map(|p| {
                p.trim_start_matches("zcap: names book: ")
                    .strip_prefix(what)
            })
            .unwrap_or_else(|| panic!("{what} in {stats}"))
            .trim()
            .parse()
            .unwrap()
    };
    let (entries, heap) = (number("peak entries "), number("peak heap bytes "));
    let per_flow = FLOW_NAMES_INLINE_BOUND + FLOW_NAMES_HEAP_BOUND;
    eprintln!(
        "flood of {flows} flows ({slots} slots): {stats}; peak RSS {plain} KiB without --names, {named} KiB with (bound {} KiB)",
        slots * per_flow / 1024
    );
    assert!(entries <= slots, "{stats}");
    assert!(heap <= entries * FLOW_NAMES_HEAP_BOUND, "{stats}");
    // Half the flows hold a buffer: the flood does cost memory, and the book sees it.
    assert!(heap >= entries / 2 * 2000, "{stats}");
    // The resident memory added by --names: the entries (inline and heap) and the map's
    // own slots, within flows x the bound.
    let added = named.saturating_sub(plain) as usize * 1024;
    assert!(
        added <= slots * per_flow,
        "{added} bytes added over {slots} x {per_flow}"
    );
}

/// `--names` reads into flows: alone it is refused with the reason; with `--ipfix-file` alone
/// (no `--flows`) it runs, and without `--names` nothing of it shows.
#[test]
fn names_needs_flows_or_an_export() {
    let dir = common::fresh_dir("names-flags");
    let input = dir.join("in.pcap");
    let frame = zcrx_flowcache::testdata::udp4([198, 18, 0, 1], [198, 18, 0, 2], 5000, 53, 20);
    common::write_pcap(&input, [(Duration::from_secs(1_700_000_000), &frame[..])]);
    let input = input.to_str().unwrap();
    let o = Command::new(bin())
        .args(["-r", input, "--names"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--names reads names into flows: give --flows, --ipfix"),
        "{}",
        stderr(&o)
    );
    let ipfix = dir.join("out.ipfix");
    let o = Command::new(bin())
        .args(["-r", input, "--names", "--names-stats", "--ipfix-file"])
        .arg(&ipfix)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("zcap: names book: peak entries 1,"),
        "{}",
        stderr(&o)
    );
    assert!(std::fs::metadata(&ipfix).unwrap().len() > 0);
    let o = Command::new(bin())
        .args(["-r", input, "--flows", "--names-stats"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("names"), "{}", stderr(&o));
}

/// A UDP/IPv4 frame from `src`:`sport` to `dst`:`dport` carrying `payload`.
fn udp4(src: [u8; 4], dst: [u8; 4], ports: (u16, u16), payload: &[u8]) -> Vec<u8> {
    let b = etherparse::PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
        .ipv4(src, dst, 64)
        .udp(ports.0, ports.1);
    let mut out = Vec::with_capacity(b.size(payload.len()));
    b.write(&mut out, payload).unwrap();
    out
}

/// `frames` as a pcap at `path`, a millisecond apart.
fn write_frames(path: &std::path::Path, frames: &[Vec<u8>]) {
    let at = |i: usize| Duration::from_millis(1_700_000_000_000 + i as u64);
    common::write_pcap(
        path,
        frames
            .iter()
            .enumerate()
            .map(|(i, f)| (at(i), f.as_slice())),
    );
}

/// An mDNS QU query, an LLMNR query and a response (a name with capitals), and an NBNS
/// query for WORKGROUP (type 0x1d).
fn name_service_frames() -> Vec<Vec<u8>> {
    let mut nbns_name = Vec::new();
    for b in b"WORKGROUP      \x1d" {
        nbns_name.extend([b'A' + (b >> 4), b'A' + (b & 0xf)]);
    }
    vec![
        udp4(
            [198, 18, 0, 1],
            [224, 0, 0, 251],
            (5353, 5353),
            &zcrx_flowcache::testdata::names::dns_message(
                &[b"printer", b"local"],
                1,
                0x8001,
                false,
            ),
        ),
        udp4(
            [198, 18, 0, 2],
            [224, 0, 0, 252],
            (51000, 5355),
            &zcrx_flowcache::testdata::names::dns_message(&[b"fileserver"], 28, 1, false),
        ),
        udp4(
            [198, 18, 0, 3],
            [198, 18, 0, 2],
            (5355, 51001),
            &zcrx_flowcache::testdata::names::dns_message(&[b"Laptop-7"], 1, 1, true),
        ),
        udp4(
            [198, 18, 0, 2],
            [198, 18, 255, 255],
            (137, 137),
            &zcrx_flowcache::testdata::names::dns_message(&[&nbns_name], 32, 1, false),
        ),
    ]
}

/// The name services beside DNS: multicast DNS (a QU question), LLMNR (query and response)
/// and NetBIOS name service, in a crafted capture: zcap's flows name what tshark's
/// dissectors read (`dns.qry.name`; `nbns.name` as Zeek decodes it: no type, no padding),
/// in the wire's case, and lower-cased with `--names-case lower`.
#[test]
fn mdns_llmnr_and_netbios_names_equal_tshark() {
    zcrx_ring::require!(Need::Tool("tshark"));
    let dir = common::fresh_dir("names-beside-dns");
    let frames = name_service_frames();
    let pcap = dir.join("names.pcap");
    write_frames(&pcap, &frames);
    let flows = |case: &str| {
        let o = Command::new(bin())
            .arg("-r")
            .arg(&pcap)
            .args(["--flows", "--json", "--names", "--names-case", case])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        zcap_flows(&String::from_utf8(o.stdout).unwrap())
    };
    let (ours, lower) = (flows("wire"), flows("lower"));
    let t = Command::new("tshark")
        .arg("-r")
        .arg(&pcap)
        .args(["-T", "fields", "-E", "separator=|"])
        .args([
            "-e",
            "ip.src",
            "-e",
            "ip.dst",
            "-e",
            "udp.srcport",
            "-e",
            "udp.dstport",
        ])
        .args(["-e", "dns.qry.name", "-e", "nbns.name"])
        .output()
        .unwrap();
    assert!(t.status.success(), "{}", stderr(&t));
    let mut compared = 0;
    for line in String::from_utf8(t.stdout).unwrap().lines() {
        let c: Vec<&str> = line.split('|').collect();
        let (sp, dp) = (c[2].parse().unwrap(), c[3].parse().unwrap());
        let flow = flow_name("udp", (c[0], sp), (c[1], dp));
        // tshark's NetBIOS name: "WORKGROUP<1d>", the padding dropped already or not.
        let want = match c[5].split_once('<') {
            Some((name, _)) => name.trim_end(),
            None => c[4],
        };
        assert!(!want.is_empty(), "tshark read no name: {line}");
        let got = ours.get(&flow).and_then(|o| o.get("dns_query")).map(text);
        assert_eq!(got.as_deref(), Some(want), "{flow}: {line}");
        // `--names-case lower`: as Zeek's dns.log writes them.
        let got = lower.get(&flow).and_then(|o| o.get("dns_query")).map(text);
        assert_eq!(got, Some(want.to_ascii_lowercase()), "{flow}: {line}");
        compared += 1;
    }
    assert_eq!(compared, frames.len());
    // Names with capitals were compared: the LLMNR response's and NetBIOS's.
    assert!(ours
        .values()
        .any(|o| o.get("dns_query").map(text) == Some("Laptop-7".into())));
}

/// A TCP/IPv4 frame from `src` to `dst` (address, port), sequence `seq`, acknowledging
/// `ack`, with `flags` and `payload`.
fn tcp4(
    src: ([u8; 4], u16),
    dst: ([u8; 4], u16),
    (seq, ack): (u32, u32),
    syn: bool,
    payload: &[u8],
) -> Vec<u8> {
    let b = etherparse::PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
        .ipv4(src.0, dst.0, 64)
        .tcp(src.1, dst.1, seq, 64240);
    let b = match (syn, ack) {
        (true, 0) => b.syn(),
        (true, a) => b.syn().ack(a),
        (false, a) => b.ack(a).psh(),
    };
    let mut out = Vec::with_capacity(b.size(payload.len()));
    b.write(&mut out, payload).unwrap();
    out
}

/// Lines said in turn before TLS (`true`: the client's).
type Dialogue = [(bool, &'static str)];

/// One conversation on `port`: the handshake, then `lines` in turn (`true`: the client's),
/// then the client's ClientHello naming `sni` and the server's ServerHello.
fn starttls_frames(client: [u8; 4], port: u16, lines: &Dialogue, sni: &str) -> Vec<Vec<u8>> {
    use zcrx_flowcache::testdata::names::{modern_client_hello, records, server_hello};
    let (c, s) = ((client, 40000), ([198, 18, 1, 1], port));
    let (mut cs, mut ss) = (1000u32, 5000u32);
    let mut frames = vec![
        tcp4(c, s, (cs, 0), true, &[]),
        tcp4(s, c, (ss, cs + 1), true, &[]),
    ];
    cs += 1;
    ss += 1;
    let hello = records(&modern_client_hello(sni, &[], 32), 4096);
    let server = records(&server_hello(), 4096);
    let mut turns: Vec<(bool, Vec<u8>)> = lines
        .iter()
        .map(|(k, l)| (*k, l.as_bytes().to_vec()))
        .collect();
    turns.push((true, hello));
    turns.push((false, server));
    for (from_client, bytes) in turns {
        if from_client {
            frames.push(tcp4(c, s, (cs, ss), false, &bytes));
            cs += bytes.len() as u32;
        } else {
            frames.push(tcp4(s, c, (ss, cs), false, &bytes));
            ss += bytes.len() as u32;
        }
    }
    frames
}

/// The dialogues before TLS of SMTP, IMAP, POP3 and FTP (AUTH TLS): port, lines, server
/// name.
fn starttls_sessions() -> [(u16, &'static Dialogue, &'static str); 4] {
    [
        (
            25,
            &[
                (false, "220 mx.example.net ESMTP\r\n"),
                (true, "EHLO client.example\r\n"),
                (false, "250-mx.example.net\r\n250 STARTTLS\r\n"),
                (true, "STARTTLS\r\n"),
                (false, "220 2.0.0 Ready to start TLS\r\n"),
            ],
            "smtp.example.net",
        ),
        (
            143,
            &[
                (false, "* OK [CAPABILITY IMAP4rev1 STARTTLS] ready\r\n"),
                (true, "a1 STARTTLS\r\n"),
                (false, "a1 OK Begin TLS negotiation now\r\n"),
            ],
            "imap.example.net",
        ),
        (
            110,
            &[
                (false, "+OK POP3 ready\r\n"),
                (true, "STLS\r\n"),
                (false, "+OK Begin TLS negotiation\r\n"),
            ],
            "pop.example.net",
        ),
        (
            21,
            &[
                (false, "220 FTP ready\r\n"),
                (true, "AUTH TLS\r\n"),
                (false, "234 AUTH TLS successful\r\n"),
            ],
            "ftp.example.net",
        ),
    ]
}

/// TLS after STARTTLS on SMTP, IMAP, POP3 and FTP (AUTH TLS), in a crafted capture: zcap
/// names each flow's server as tshark's dissectors do, after the text that comes first.
#[test]
fn tls_after_starttls_names_equal_tshark() {
    zcrx_ring::require!(Need::Tool("tshark"));
    let dir = common::fresh_dir("names-starttls");
    let sessions = starttls_sessions();
    let mut frames = Vec::new();
    for (i, (port, lines, sni)) in sessions.iter().enumerate() {
        frames.extend(starttls_frames(
            [198, 18, 0, 10 + i as u8],
            *port,
            lines,
            sni,
        ));
    }
    let pcap = dir.join("starttls.pcap");
    write_frames(&pcap, &frames);
    let o = Command::new(bin())
        .arg("-r")
        .arg(&pcap)
        .args(["--flows", "--json", "--names"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let ours = zcap_flows(&String::from_utf8(o.stdout).unwrap());
    let oracle = tshark_fields(&pcap);
    for (i, (port, _, sni)) in sessions.iter().enumerate() {
        let client = format!("198.18.0.{}", 10 + i);
        let flow = flow_name("tcp", (&client, 40000), ("198.18.1.1", *port));
        let want = oracle.get(&flow).map(expected).unwrap_or_default();
        assert_eq!(
            want.get("server_name").map(String::as_str),
            Some(*sni),
            "tshark, {flow}: {oracle:?}"
        );
        let got = ours.get(&flow).and_then(|o| o.get("server_name")).map(text);
        assert_eq!(got.as_deref(), Some(*sni), "zcap, {flow}");
    }
}
