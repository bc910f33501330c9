//! `zcrx_flowcache::names` against tshark's dissectors and the `ja4plus` package (FoxIO's
//! JA4 in Python), on traffic made here in a netns lab: openssl `s_server`/`s_client` (TLS 1.3
//! and 1.2, with and without SNI), curl over HTTPS and HTTP (python3 -m http.server), dig over
//! UDP and TCP against a DNS responder, and QUIC Initials of versions 1 and 2 from aioquic
//! (one with a ClientHello spanning several Initial packets). Traffic to the lab's second
//! server address goes over a route with a 100-byte MSS, offloads off, so ClientHellos,
//! ServerHellos and HTTP headers span several TCP segments and are reassembled. With OpenSSL
//! 3.5 or later, s_client also offers an X25519MLKEM768 key share (a ClientHello of two
//! segments at any MSS).
//!
//! Every field is compared on every flow: where tshark (or ja4plus) finds a value, names must
//! find the same one, and where it finds none, names must find none. Needs root and the
//! tools of `scripts/deps.sh`; under `CI=true` a missing one fails the test.
#![cfg(feature = "names")]

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use zcrx_flowcache::names::FlowNames;
use zcrx_flowcache::{extract, Direction, FlowKey, LinkType};
use zcrx_ring::lab::{Lab, Need};

const PY_MODULES: &[&str] = &["ja4plus", "aioquic", "dnslib", "scapy"];

fn script(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/names")
        .join(name)
        .display()
        .to_string()
}

fn in_ns(ns: &str, args: &[&str]) -> Command {
    let mut c = Command::new("ip");
    c.args(["netns", "exec", ns]).args(args);
    c
}

/// Runs a client to completion (bounded by `timeout`), its output discarded.
fn client(ns: &str, args: &[&str]) {
    let status = in_ns(ns, &[&["timeout", "15"], args].concat())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("run a client");
    // s_client and curl may exit non-zero (an HTTP error, an unanswered QUIC Initial): the
    // capture is what counts, checked below; the status helps read a failure.
    if !status.success() {
        eprintln!("client {args:?}: {status}");
    }
}

struct Killed(Vec<Child>);
impl Drop for Killed {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn spawn(ns: &str, args: &[&str], dir: &Path) -> Child {
    in_ns(ns, args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn a server")
}

/// Waits until `ss` lists a socket on `local` (`ADDR:PORT` or `:PORT`).
fn wait_listening(ns: &str, proto: &str, local: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    let flag = if proto == "udp" { "-uln" } else { "-tln" };
    while Instant::now() < deadline {
        let out = in_ns(ns, &["ss", flag]).output().expect("ss");
        if String::from_utf8_lossy(&out.stdout).contains(&format!("{local} ")) {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("nothing listens on {proto} {local} in {ns}");
}

/// A flow's name: its endpoints in a fixed order, whichever direction is seen.
fn flow_name(proto: &str, a: (&str, u16), b: (&str, u16)) -> String {
    let (x, y) = if a <= b { (a, b) } else { (b, a) };
    format!("{proto} {}:{} {}:{}", x.0, x.1, y.0, y.1)
}

/// One flow's fields, as strings the way tshark prints them (`None`: not found).
#[derive(Debug, Default, Clone, PartialEq)]
struct Fields(BTreeMap<&'static str, String>);

const FIELDS: &[&str] = &[
    "sni",
    "alpn",
    "client_versions",
    "server_version",
    "server_cipher",
    "dns_qry_name",
    "dns_qry_type",
    "dns_rcode",
    "dns_answers",
    "http_host",
    "http_method",
    "http_uri",
    "http_code",
    "quic_version",
];

impl Fields {
    fn set(&mut self, k: &'static str, v: String) {
        if !v.is_empty() {
            self.0.entry(k).or_insert(v);
        }
    }
}

fn tshark_fields(pcap: &Path) -> BTreeMap<String, Fields> {
    let cols = [
        "ip.src",
        "ip.dst",
        "tcp.srcport",
        "tcp.dstport",
        "udp.srcport",
        "udp.dstport",
        "tls.handshake.type",
        "tls.handshake.extensions_server_name",
        "tls.handshake.extensions_alpn_str",
        "tls.handshake.extensions.supported_version",
        "tls.handshake.version",
        "tls.handshake.ciphersuite",
        "dns.flags.response",
        "dns.qry.name",
        "dns.qry.type",
        "dns.flags.rcode",
        "dns.count.answers",
        "http.host",
        "http.request.method",
        "http.request.uri",
        "http.response.code",
        "quic.version",
    ];
    let mut args = vec![
        "-r".to_string(),
        pcap.display().to_string(),
        "-Y".into(),
        "not icmp".into(),
        "-T".into(),
        "fields".into(),
        "-E".into(),
        "separator=|".into(),
    ];
    for c in cols {
        args.push("-e".into());
        args.push(c.into());
    }
    let out = Command::new("tshark").args(&args).output().expect("tshark");
    assert!(
        out.status.success(),
        "tshark: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut flows: BTreeMap<String, Fields> = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let c: Vec<&str> = line.split('|').collect();
        assert_eq!(c.len(), cols.len(), "{line}");
        let (proto, sp, dp) = if !c[2].is_empty() {
            ("tcp", c[2], c[3])
        } else {
            ("udp", c[4], c[5])
        };
        let (Ok(sp), Ok(dp)) = (sp.parse::<u16>(), dp.parse::<u16>()) else {
            continue;
        };
        let f = flows
            .entry(flow_name(proto, (c[0], sp), (c[1], dp)))
            .or_default();
        let types: Vec<&str> = c[6].split(',').collect();
        if types.contains(&"1") {
            f.set("sni", c[7].into());
            f.set("alpn", c[8].into());
            let versions: Vec<String> = c[9]
                .split(',')
                .filter(|v| !v.is_empty())
                .filter(|v| {
                    let n = u16::from_str_radix(v.trim_start_matches("0x"), 16).unwrap();
                    !zcrx_flowcache::names::is_grease(n)
                })
                .map(str::to_string)
                .collect();
            let versions = if versions.is_empty() {
                c[10].split(',').next().unwrap_or("").to_string()
            } else {
                versions.join(",")
            };
            f.set("client_versions", versions);
            f.set("quic_version", c[21].split(',').next().unwrap_or("").into());
        }
        if types.first() == Some(&"2") {
            let v = if c[9].is_empty() { c[10] } else { c[9] };
            f.set("server_version", v.split(',').next().unwrap_or("").into());
            f.set(
                "server_cipher",
                c[11].split(',').next().unwrap_or("").into(),
            );
        }
        if !c[13].is_empty() {
            let resp = c[12] == "1" || c[12] == "True";
            let name = c[13].split(',').next().unwrap_or("");
            let name = if name == "<Root>" { "" } else { name };
            if !resp {
                f.set("dns_qry_name", name.into());
                f.set("dns_qry_type", c[14].split(',').next().unwrap_or("").into());
            } else {
                f.set("dns_rcode", c[15].into());
                f.set("dns_answers", c[16].into());
            }
        }
        f.set("http_host", c[17].into());
        f.set("http_method", c[18].into());
        f.set("http_uri", c[19].into());
        f.set("http_code", c[20].into());
    }
    flows
}

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

fn ja4_reference(pcap: &Path) -> BTreeMap<String, String> {
    let out = Command::new("python3")
        .args([&script("ja4_ref.py"), &pcap.display().to_string()])
        .output()
        .expect("python3 ja4_ref.py");
    assert!(
        out.status.success(),
        "ja4plus: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut m = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(w.len(), 5, "{line}");
        // ja4plus names no transport: a flow with TLS over TCP or QUIC over UDP, by port.
        for proto in ["tcp", "udp"] {
            let name = flow_name(
                proto,
                (w[0], w[1].parse().unwrap()),
                (w[2], w[3].parse().unwrap()),
            );
            if (proto == "udp") == w[4].starts_with('q') {
                m.insert(name, w[4].to_string());
            }
        }
    }
    m
}

struct Capture {
    dir: PathBuf,
}
impl Drop for Capture {
    fn drop(&mut self) {
        if std::env::var_os("ZCRX_KEEP").is_none() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
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
    let lab = Lab::new().expect("lab");
    let (a, b) = (lab.a.netns.clone(), lab.b.netns.clone());
    // The second server address, reached over a route with a 100-byte MSS both ways.
    lab.b
        .ip(&["addr", "add", "198.18.0.4/24", "dev", &lab.b.iface])
        .unwrap();
    lab.a
        .ip(&[
            "route",
            "add",
            "198.18.0.4/32",
            "dev",
            &lab.a.iface,
            "mtu",
            "lock",
            "140",
            "advmss",
            "100",
        ])
        .unwrap();
    for (ns, iface) in [(&a, &lab.a.iface), (&b, &lab.b.iface)] {
        // Without offloads the capture sees the segments the MSS makes, not one large send.
        let ok = in_ns(ns, &["ethtool", "-K", iface, "tso", "off", "gso", "off"])
            .status()
            .unwrap();
        assert!(ok.success(), "ethtool -K {iface}");
    }
    let ok = Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-keyout",
            "key.pem",
            "-out",
            "cert.pem",
            "-days",
            "2",
            "-subj",
            "/CN=lab.example",
        ])
        .current_dir(dir)
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(ok.success(), "openssl req");

    let pcap = dir.join("names.pcap");
    let mut tcpdump = in_ns(
        &a,
        &[
            "tcpdump",
            "-i",
            &lab.a.iface,
            // Each packet to the file as it comes: a packet still in the ring's open block when
            // tcpdump is interrupted would be lost otherwise.
            "--immediate-mode",
            "-U",
            "-w",
            "names.pcap",
            "ip",
        ],
    )
    .current_dir(dir)
    .stdout(Stdio::null())
    .stderr(File::create(dir.join("tcpdump.log")).unwrap())
    .spawn()
    .expect("tcpdump");
    let mut servers = Killed(vec![
        spawn(
            &b,
            &[
                "openssl", "s_server", "-accept", "4433", "-cert", "cert.pem", "-key", "key.pem",
                "-www",
            ],
            dir,
        ),
        spawn(
            &b,
            &[
                "openssl", "s_server", "-accept", "4412", "-cert", "cert.pem", "-key", "key.pem",
                "-www", "-tls1_2",
            ],
            dir,
        ),
        spawn(&b, &["python3", "-m", "http.server", "8080"], dir),
        // One responder per address: a wildcard UDP socket answers from the first address.
        spawn(
            &b,
            &["python3", &script("dns_responder.py"), "198.18.0.2", "53"],
            dir,
        ),
        spawn(
            &b,
            &["python3", &script("dns_responder.py"), "198.18.0.4", "53"],
            dir,
        ),
    ]);
    for (proto, local) in [
        ("tcp", ":4433"),
        ("tcp", ":4412"),
        ("tcp", ":8080"),
        ("udp", "198.18.0.2:53"),
        ("tcp", "198.18.0.2:53"),
        ("udp", "198.18.0.4:53"),
        ("tcp", "198.18.0.4:53"),
    ] {
        wait_listening(&b, proto, local);
    }
    // tcpdump writes the file header once it listens.
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::fs::metadata(&pcap).map_or(true, |m| m.len() < 24) {
        assert!(Instant::now() < deadline, "tcpdump did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));

    // OpenSSL 3.5 and later offer X25519MLKEM768.
    let version = Command::new("openssl").arg("version").output().unwrap();
    let version = String::from_utf8_lossy(&version.stdout).to_string();
    let pq = version
        .split_whitespace()
        .nth(1)
        .and_then(|v| {
            let mut n = v.split('.').map(|x| x.parse::<u32>().unwrap_or(0));
            Some((n.next()?, n.next()?))
        })
        .is_some_and(|v| v >= (3, 5));
    eprintln!(
        "{}: post-quantum ClientHellos {}",
        version.trim(),
        if pq { "on" } else { "off (OpenSSL before 3.5)" }
    );
    for server in ["198.18.0.2", "198.18.0.4"] {
        let s4433 = format!("{server}:4433");
        client(
            &a,
            &[
                "openssl",
                "s_client",
                "-connect",
                &s4433,
                "-servername",
                "one.example",
                "-alpn",
                "h2,http/1.1",
            ],
        );
        client(
            &a,
            &["openssl", "s_client", "-connect", &s4433, "-noservername"],
        );
        if pq {
            // A post-quantum key share: the ClientHello fills two segments at any MSS.
            client(
                &a,
                &[
                    "openssl",
                    "s_client",
                    "-connect",
                    &s4433,
                    "-servername",
                    "pq.example",
                    "-groups",
                    "X25519MLKEM768",
                ],
            );
        }
        client(
            &a,
            &[
                "openssl",
                "s_client",
                "-connect",
                &format!("{server}:4412"),
                "-servername",
                "tls12.example",
                "-alpn",
                "http/1.1",
            ],
        );
        let resolve = format!("web.example:4433:{server}");
        client(
            &a,
            &[
                "curl",
                "-sk",
                "--http1.1",
                "--resolve",
                &resolve,
                "https://web.example:4433/",
                "-o",
                "/dev/null",
            ],
        );
        let resolve = format!("files.example:8080:{server}");
        client(
            &a,
            &[
                "curl",
                "-s",
                "--resolve",
                &resolve,
                "http://files.example:8080/?q=1",
                "-o",
                "/dev/null",
            ],
        );
        client(
            &a,
            &[
                "curl",
                "-s",
                &format!("http://{server}:8080/missing"),
                "-o",
                "/dev/null",
            ],
        );
        let at = format!("@{server}");
        client(
            &a,
            &["dig", &at, "+tries=1", "+time=2", "www.lab.example", "A"],
        );
        client(
            &a,
            &["dig", &at, "+tries=1", "+time=2", "www.lab.example", "AAAA"],
        );
        client(
            &a,
            &["dig", &at, "+tries=1", "+time=2", "gone.nx.example", "A"],
        );
        client(
            &a,
            &[
                "dig",
                &at,
                "+tcp",
                "+tries=1",
                "+time=2",
                "tcp.lab.example",
                "MX",
            ],
        );
        client(
            &a,
            &[
                "dig",
                &at,
                "+tcp",
                "+tries=1",
                "+time=2",
                "tcp.nx.example",
                "A",
            ],
        );
        // QUIC only to the first address: over the small-MTU route its 1200-byte datagrams
        // would be IP fragments, which names (like the flow table) does not reassemble.
        for (v, pad) in [("1", "0"), ("2", "0"), ("1", "30"), ("2", "30")] {
            if server != "198.18.0.2" {
                break;
            }
            let sni = format!("quic-v{v}-{pad}.example");
            client(
                &a,
                &[
                    "python3",
                    &script("quic_initials.py"),
                    server,
                    "4433",
                    v,
                    &sni,
                    "h3,hq-interop",
                    pad,
                ],
            );
        }
    }
    std::thread::sleep(Duration::from_millis(1500));
    let _ = Command::new("kill")
        .args(["-INT", &tcpdump.id().to_string()])
        .status();
    let _ = tcpdump.wait();
    servers.0.iter_mut().for_each(|c| {
        let _ = c.kill();
    });

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
