//! The names oracles' lab capture, shared by flowcache's `names_oracle` test and zcap's
//! `names` test: traffic made in a netns lab —
//! openssl `s_server`/`s_client` (TLS 1.3 and 1.2, with and without SNI), curl over HTTPS and
//! HTTP (python3 -m http.server), dig over UDP and TCP against a DNS responder, and QUIC
//! Initials of versions 1 and 2 from aioquic (one with a ClientHello spanning several Initial
//! packets) — captured by tcpdump, and what tshark's dissectors and the `ja4plus` package read
//! in it. Traffic to the lab's second server address goes over a route with a 100-byte MSS,
//! offloads off, so ClientHellos, ServerHellos and HTTP headers span several TCP segments.
//! With OpenSSL 3.5 or later, s_client also offers an X25519MLKEM768 key share.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::Lab;

/// The Python modules the capture and its references need.
pub const PY_MODULES: &[&str] = &["ja4plus", "aioquic", "dnslib", "scapy"];

/// The tools the capture and its references need.
pub const TOOLS: &[&str] = &[
    "tshark", "tcpdump", "openssl", "curl", "dig", "ethtool", "ss", "python3",
];

/// An oracle script of `flowcache/tests/names`, found above this crate's directory (the
/// workspace's).
pub fn script(name: &str) -> String {
    let mut d = Path::new(env!("CARGO_MANIFEST_DIR"));
    loop {
        let s = d.join("flowcache/tests/names");
        if s.is_dir() {
            return s.join(name).display().to_string();
        }
        d = d.parent().expect("flowcache/tests/names above the crate");
    }
}

/// `ip netns exec NS ARGS...`, not yet run.
pub fn in_ns(ns: &str, args: &[&str]) -> Command {
    let mut c = Command::new("ip");
    c.args(["netns", "exec", ns]).args(args);
    c
}

/// Runs a client to completion (bounded by `timeout`), its output discarded.
pub fn client(ns: &str, args: &[&str]) {
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

/// Child processes, killed (and waited for) when dropped.
pub struct Killed(pub Vec<Child>);
impl Drop for Killed {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// A server started in namespace `ns` from `dir`, its output discarded.
pub fn spawn(ns: &str, args: &[&str], dir: &Path) -> Child {
    in_ns(ns, args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn a server")
}

/// Waits until `ss` lists a socket on `local` (`ADDR:PORT` or `:PORT`).
pub fn wait_listening(ns: &str, proto: &str, local: &str) {
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
pub fn flow_name(proto: &str, a: (&str, u16), b: (&str, u16)) -> String {
    let (x, y) = if a <= b { (a, b) } else { (b, a) };
    format!("{proto} {}:{} {}:{}", x.0, x.1, y.0, y.1)
}

/// One flow's fields, as strings the way tshark prints them (`None`: not found).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Fields(pub BTreeMap<&'static str, String>);

/// The tshark fields the oracles compare, in [`Fields`]' order.
pub const FIELDS: &[&str] = &[
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
    /// Sets field `k` to `v` unless `v` is empty or `k` has a value already.
    pub fn set(&mut self, k: &'static str, v: String) {
        if !v.is_empty() {
            self.0.entry(k).or_insert(v);
        }
    }
}

/// What tshark's dissectors read in `pcap`, per flow (named by [`flow_name`]).
pub fn tshark_fields(pcap: &Path) -> BTreeMap<String, Fields> {
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
    let mut flows: BTreeMap<String, Fields> = BTreeMap::new();
    for line in tshark_lines(pcap, &cols) {
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
        record(f, &c);
    }
    flows
}

/// tshark's `-T fields` lines for `cols` of `pcap`, `|` between the fields.
fn tshark_lines(pcap: &Path, cols: &[&str]) -> Vec<String> {
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
        args.push(c.to_string());
    }
    let out = Command::new("tshark").args(&args).output().expect("tshark");
    assert!(
        out.status.success(),
        "tshark: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

/// The fields of one of tshark's lines (`c`, in `tshark_fields`' column order) into `f`.
fn record(f: &mut Fields, c: &[&str]) {
    let types: Vec<&str> = c[6].split(',').collect();
    if types.contains(&"1") {
        f.set("sni", c[7].into());
        f.set("alpn", c[8].into());
        let versions: Vec<String> = c[9]
            .split(',')
            .filter(|v| !v.is_empty())
            .filter(|v| {
                let n = u16::from_str_radix(v.trim_start_matches("0x"), 16).unwrap();
                !is_grease(n)
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

/// JA4 per flow from FoxIO's `ja4plus` (`ja4_ref.py`).
pub fn ja4_reference(pcap: &Path) -> BTreeMap<String, String> {
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

/// A working directory, removed when dropped (kept with `ZCRX_KEEP` set).
pub struct Capture {
    /// The directory.
    pub dir: PathBuf,
}
impl Drop for Capture {
    fn drop(&mut self) {
        if std::env::var_os("ZCRX_KEEP").is_none() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// A self-signed P-256 certificate for lab.example in `dir` (cert.pem, key.pem), for the
/// lab's `openssl s_server`.
pub fn self_signed(dir: &Path) {
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
}

/// Makes the lab's traffic and captures it (as seen from the client's side) into
/// `dir/names.pcap`, which it returns. Needs root and the tools of [`TOOLS`] and
/// [`PY_MODULES`] (the caller checks).
pub fn lab_capture(dir: &Path) -> PathBuf {
    let lab = Lab::new().expect("lab");
    let (a, b) = (lab.a.netns.clone(), lab.b.netns.clone());
    small_mss_route(&lab);
    self_signed(dir);
    let pcap = dir.join("names.pcap");
    let mut tcpdump = start_tcpdump(&a, &lab.a.iface, dir);
    let mut servers = start_servers(&b, dir);
    wait_for_file_header(&pcap);
    let pq = post_quantum();
    for server in ["198.18.0.2", "198.18.0.4"] {
        tls_clients(&a, server, pq);
        http_clients(&a, server);
        dns_clients(&a, server);
        // QUIC only to the first address: over the small-MTU route its 1200-byte datagrams
        // would be IP fragments, which names (like the flow table) does not reassemble.
        if server == "198.18.0.2" {
            quic_clients(&a, server);
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
    pcap
}

/// The second server address, 198.18.0.4, reached over a route with a 100-byte MSS both
/// ways, offloads off, so that hellos and headers span several segments.
fn small_mss_route(lab: &Lab) {
    let (a, b) = (&lab.a.netns, &lab.b.netns);
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
}

/// tcpdump on `iface` in `ns`, writing `dir/names.pcap` packet by packet.
fn start_tcpdump(ns: &str, iface: &str, dir: &Path) -> Child {
    in_ns(
        ns,
        &[
            "tcpdump",
            "-i",
            iface,
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
    .expect("tcpdump")
}

/// The servers in `ns`: TLS 1.3 and 1.2, HTTP, and a DNS responder per address, listening.
fn start_servers(ns: &str, dir: &Path) -> Killed {
    let b = ns;
    let servers = Killed(vec![
        spawn(
            b,
            &[
                "openssl", "s_server", "-accept", "4433", "-cert", "cert.pem", "-key", "key.pem",
                "-www",
            ],
            dir,
        ),
        spawn(
            b,
            &[
                "openssl", "s_server", "-accept", "4412", "-cert", "cert.pem", "-key", "key.pem",
                "-www", "-tls1_2",
            ],
            dir,
        ),
        spawn(b, &["python3", "-m", "http.server", "8080"], dir),
        // One responder per address: a wildcard UDP socket answers from the first address.
        spawn(
            b,
            &["python3", &script("dns_responder.py"), "198.18.0.2", "53"],
            dir,
        ),
        spawn(
            b,
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
        wait_listening(b, proto, local);
    }
    servers
}

/// Until tcpdump wrote the file's header: it listens from then on.
fn wait_for_file_header(pcap: &Path) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::fs::metadata(pcap).map_or(true, |m| m.len() < 24) {
        assert!(Instant::now() < deadline, "tcpdump did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
}

/// Whether this OpenSSL offers X25519MLKEM768 (3.5 and later).
fn post_quantum() -> bool {
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
    pq
}

/// TLS 1.3 (with and without SNI, post-quantum where offered) and TLS 1.2 hellos.
fn tls_clients(a: &str, server: &str, pq: bool) {
    let (tls13, tls12) = (format!("{server}:4433"), format!("{server}:4412"));
    // (server, s_client's options, whether the hello needs a post-quantum OpenSSL)
    let hellos: [(&str, &[&str], bool); 4] = [
        (
            &tls13,
            &["-servername", "one.example", "-alpn", "h2,http/1.1"],
            false,
        ),
        (&tls13, &["-noservername"], false),
        // A post-quantum key share: the ClientHello fills two segments at any MSS.
        (
            &tls13,
            &["-servername", "pq.example", "-groups", "X25519MLKEM768"],
            true,
        ),
        (
            &tls12,
            &["-servername", "tls12.example", "-alpn", "http/1.1"],
            false,
        ),
    ];
    for (at, options, _) in hellos.iter().filter(|h| pq || !h.2) {
        let mut args = vec!["openssl", "s_client", "-connect", at];
        args.extend_from_slice(options);
        client(a, &args);
    }
}

/// HTTPS and HTTP requests by name, and one for a missing page.
fn http_clients(a: &str, server: &str) {
    let resolve = format!("web.example:4433:{server}");
    client(
        a,
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
        a,
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
        a,
        &[
            "curl",
            "-s",
            &format!("http://{server}:8080/missing"),
            "-o",
            "/dev/null",
        ],
    );
}

/// DNS over UDP and TCP: answers, and a name that does not exist.
fn dns_clients(a: &str, server: &str) {
    let at = format!("@{server}");
    for (transport, name, qtype) in [
        ("+notcp", "www.lab.example", "A"),
        ("+notcp", "www.lab.example", "AAAA"),
        ("+notcp", "gone.nx.example", "A"),
        ("+tcp", "tcp.lab.example", "MX"),
        ("+tcp", "tcp.nx.example", "A"),
    ] {
        let dig = ["dig", &at, transport, "+tries=1", "+time=2", name, qtype];
        client(a, &dig);
    }
}

/// QUIC Initials of versions 1 and 2, one with a ClientHello over several packets.
fn quic_clients(a: &str, server: &str) {
    for (v, pad) in [("1", "0"), ("2", "0"), ("1", "30"), ("2", "30")] {
        let sni = format!("quic-v{v}-{pad}.example");
        client(
            a,
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

/// A GREASE value (RFC 8701: 0x?a?a, both bytes equal), which tshark lists and JA4 skips.
/// The oracle's own test, independent of the code under test.
fn is_grease(v: u16) -> bool {
    v & 0x0f0f == 0x0a0a && v >> 8 == v & 0xff
}
