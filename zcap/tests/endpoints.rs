//! zcap's two listening endpoints (`--metrics`, `--pcap-over-ip`) under hostile clients,
//! their safe defaults and their warnings, and the flags and web configurations refused
//! before anything is captured.

use crate::common;

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{live_on_b, metric, Pki, Usage};
use zcrx_ring::frames::UdpFlow;
use zcrx_ring::lab::{Lab, Need, Side};
use zcrx_ring::TxRing;

/// Idle connections opened to each endpoint.
const IDLE: usize = 3000;

/// Clients of each other kind (slow senders, oversized heads, garbage).
const EACH: usize = 6;

/// `n` TCP connections to 127.0.0.1:`port` from `side`'s namespace (those that connect
/// within a second each).
fn connect_many(side: &Side, port: u16, n: usize) -> Vec<TcpStream> {
    side.run(move || {
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
        (0..n)
            .filter_map(|_| TcpStream::connect_timeout(&addr, Duration::from_secs(1)).ok())
            .collect()
    })
    .unwrap()
}

/// Whether the server closed `s` (a read ends, or is reset) within `within`.
fn closed_by_server(s: &mut TcpStream, within: Duration) -> bool {
    let end = Instant::now() + within;
    let mut buf = [0u8; 4096];
    while Instant::now() < end {
        s.set_read_timeout(Some(Duration::from_millis(100)))
            .unwrap();
        match s.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => return true,
        }
    }
    false
}

/// Everything the server sends on `s` until it closes (at most `within`).
fn read_to_close(s: &mut TcpStream, within: Duration) -> Vec<u8> {
    let end = Instant::now() + within;
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    while Instant::now() < end {
        s.set_read_timeout(Some(Duration::from_millis(100)))
            .unwrap();
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => break,
        }
    }
    out
}

/// Sends `batches` of `per_batch` frames of `flow`, one batch every `every`, on a thread
/// of lab side a; the thread returns the frames sent.
fn traffic(
    lab: &Lab,
    flow: UdpFlow,
    per_batch: u64,
    batches: u64,
    every: Duration,
) -> std::thread::JoinHandle<u64> {
    let (a, iface) = (lab.a.clone(), lab.a.iface.clone());
    std::thread::spawn(move || {
        a.run(move || {
            let mut tx = TxRing::builder(iface).build().unwrap();
            let start = Instant::now();
            let mut sent = 0;
            for b in 0..batches {
                let due = start + every * b as u32;
                if let Some(wait) = due.checked_duration_since(Instant::now()) {
                    std::thread::sleep(wait);
                }
                let frames: Vec<Vec<u8>> = (0..per_batch)
                    .map(|i| flow.frame(b * per_batch + i, 200))
                    .collect();
                sent += tx.send_batch(frames.iter().map(|f| f.as_slice())).unwrap() as u64;
            }
            sent
        })
        .unwrap()
    })
}

/// Samples `pid`'s threads, descriptors and memory every 50 ms until `done`; the most of
/// each.
fn watch_usage(pid: u32, done: Arc<AtomicBool>) -> std::thread::JoinHandle<Usage> {
    std::thread::spawn(move || {
        let mut most = Usage::default();
        while !done.load(Ordering::Relaxed) {
            if let Some(u) = Usage::of(pid) {
                most = most.max(u);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        most
    })
}

/// Raises this process' descriptor limit (the idle connections are thousands).
fn raise_nofile(n: u64) {
    use nix::sys::resource::{setrlimit, Resource};
    setrlimit(Resource::RLIMIT_NOFILE, n, n).expect("raise RLIMIT_NOFILE (needs root)");
}

/// While lab traffic of a known count is captured with -w: thousands of idle connections
/// to both endpoints, slow senders (a byte every 300 ms, to the HTTP head and to the TLS
/// handshake), heads over 8 KiB, garbage bytes. The file holds every packet sent, the
/// kernel drops none; zcap's threads stay within its baseline plus
/// --metrics-max-connections (8), its descriptors within the baseline plus both
/// endpoints' connection bounds (8 + 8) and two being accepted, its resident memory within
/// 16 MiB of its baseline; each attack is refused and counted by reason; afterwards a
/// scrape and a certified TLS client are served.
#[test]
fn hostile_clients_change_nothing() {
    zcrx_ring::require!(Need::Privileges, Need::Tool("openssl"));
    raise_nofile(4 * IDLE as u64 + 1024);
    let d = common::fresh_dir("hostile");
    let pki = Pki::new(&d.join("pki"));
    let lab = Lab::new().unwrap();
    let file = d.join("all.pcap");
    let (child, rx, startup) = live_on_b(
        &lab,
        &[
            "-q",
            "--block-timeout",
            "10",
            "-w",
            file.to_str().unwrap(),
            "--metrics",
            "127.0.0.1:0",
            "--pcap-over-ip",
            "127.0.0.1:0",
            "--pcap-over-ip-cert",
            &pki.file("server.pem"),
            "--pcap-over-ip-key",
            &pki.file("server.key"),
            "--pcap-over-ip-client-ca",
            &pki.file("ca.pem"),
            "udp port 7001",
        ],
    );
    let metrics = common::served_port(&startup, "serving metrics on http://");
    let pcap = common::served_port(&startup, "serving PCAP-over-IP on ");
    // The worker serves the endpoints and holds the memory the attack aims at.
    let pid = common::worker(child.id());
    std::thread::sleep(Duration::from_millis(500));
    let base = Usage::of(pid).unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let watcher = watch_usage(pid, done.clone());
    let flow = UdpFlow::lab(&lab.a, &lab.b, 7000, 7001, true);
    // 150 000 packets over 15 s, across every phase of the attack.
    let sender = traffic(&lab, flow, 1_000, 150, Duration::from_millis(100));

    // Thousands of idle connections to each, from one address: as many as one address may
    // hold (half the endpoint's 8) held until their deadline, the rest closed at accept.
    // (A connection whose SYN met a full accept queue may not make it within its second.)
    let idle_metrics = connect_many(&lab.b, metrics, IDLE);
    let idle_pcap = connect_many(&lab.b, pcap, IDLE);
    let (n_metrics, n_pcap) = (idle_metrics.len(), idle_pcap.len());
    assert!(
        n_metrics.min(n_pcap) >= IDLE * 9 / 10,
        "connections made: {n_metrics}, {n_pcap}"
    );
    // Meanwhile a scraper from another address is served: one address cannot take every
    // connection.
    let scrape = std::process::Command::new("ip")
        .args(["netns", "exec", &lab.b.netns, "curl", "-s", "-m", "3"])
        .args([
            "--interface",
            "127.0.0.2",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
        ])
        .arg(format!("http://127.0.0.1:{metrics}/metrics"))
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&scrape.stdout),
        "200",
        "a scrape during the flood"
    );
    let idle = (idle_metrics, idle_pcap);
    std::thread::sleep(Duration::from_secs(6));
    drop(idle);
    std::thread::sleep(Duration::from_millis(300));

    // Slow senders: a byte every 300 ms of an HTTP head, of a TLS record; closed by zcap
    // at the 5 s deadline.
    let mut slow = connect_many(&lab.b, metrics, EACH);
    slow.extend(connect_many(&lab.b, pcap, EACH));
    let head = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    let hello = b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    let started = Instant::now();
    for i in 0..head.len().min(hello.len()) {
        for (k, s) in slow.iter_mut().enumerate() {
            let byte = if k < EACH { head[i] } else { hello[i] };
            let _ = s.write(&[byte]);
        }
        std::thread::sleep(Duration::from_millis(300));
        if started.elapsed() > Duration::from_secs(7) {
            break;
        }
    }
    for s in &mut slow {
        assert!(
            closed_by_server(s, Duration::from_secs(2)),
            "a slow sender still open after {:?}",
            started.elapsed()
        );
    }
    drop(slow);

    // Heads over 8 KiB get 431; garbage gets 400 from the HTTP endpoint and a closed
    // connection, without a byte, from the TLS one.
    let garbage: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8 | 0x80)
        .collect();
    for _ in 0..EACH {
        let mut big = connect_many(&lab.b, metrics, 1).pop().unwrap();
        let _ = big.write_all(
            format!(
                "GET /metrics HTTP/1.1\r\nX: {}\r\n\r\n",
                "a".repeat(64 << 10)
            )
            .as_bytes(),
        );
        let answer =
            String::from_utf8_lossy(&read_to_close(&mut big, Duration::from_secs(3))).into_owned();
        assert!(answer.starts_with("HTTP/1.1 431 "), "{answer}");
        let mut junk = connect_many(&lab.b, metrics, 1).pop().unwrap();
        let _ = junk.write_all(&garbage);
        let answer =
            String::from_utf8_lossy(&read_to_close(&mut junk, Duration::from_secs(3))).into_owned();
        assert!(answer.starts_with("HTTP/1.1 400 "), "{answer}");
        let mut junk = connect_many(&lab.b, pcap, 1).pop().unwrap();
        let _ = junk.write_all(&garbage);
        let _ = junk.shutdown(Shutdown::Write);
        assert!(
            read_to_close(&mut junk, Duration::from_secs(3)).is_empty(),
            "an answer to garbage"
        );
    }

    let sent = sender.join().unwrap();
    std::thread::sleep(Duration::from_millis(500));
    done.store(true, Ordering::Relaxed);
    let most = watcher.join().unwrap();

    // Afterwards: a scrape, and a certified TLS client gets the pcap header.
    let (head, text) = common::http_get(&lab.b, metrics, "/metrics", "*/*").unwrap();
    assert!(head.starts_with("HTTP/1.1 200 "), "{head}");
    let certified = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "ip netns exec {} timeout 3 openssl s_client -quiet -connect 127.0.0.1:{pcap} -CAfile '{}' -cert '{}' -key '{}' 2>/dev/null | head -c 4",
            lab.b.netns,
            pki.file("ca.pem"),
            pki.file("client.pem"),
            pki.file("client.key")
        ))
        .output()
        .unwrap();
    // A pcap file's magic, little-endian: microsecond or nanosecond time stamps.
    let magic = certified.stdout.as_slice();
    assert!(
        magic == [0xd4, 0xc3, 0xb2, 0xa1] || magic == [0x4d, 0x3c, 0xb2, 0xa1],
        "no pcap magic over TLS: {magic:x?}"
    );

    let (ok, _, err) = common::finish_live(child, rx, true);
    assert!(ok, "{err}");
    eprintln!("zcap at start {base:?}, at most under attack {most:?}");
    assert_eq!(sent, 150_000);
    assert_eq!(common::count(&err, " packets captured"), sent, "{err}");
    assert_eq!(
        common::count(&err, " packets dropped by kernel"),
        0,
        "{err}"
    );
    let mut reader = pcap_file::pcap::PcapReader::new(std::fs::File::open(&file).unwrap()).unwrap();
    let mut in_file = 0u64;
    while let Some(p) = reader.next_packet() {
        p.unwrap();
        in_file += 1;
    }
    assert_eq!(in_file, sent, "packets in the file");
    // A metrics thread a connection, and one displaced connection's still ending.
    assert!(
        most.threads <= base.threads + 8 + 1,
        "threads: {base:?} then {most:?}"
    );
    assert!(
        most.fds <= base.fds + 8 + 8 + 2,
        "descriptors: {base:?} then {most:?}"
    );
    assert!(
        most.rss_kib <= base.rss_kib + 16 * 1024,
        "memory: {base:?} then {most:?}"
    );
    let rejected = |endpoint: &str, reason: &str| {
        metric(
            &text,
            &format!("zcap_{endpoint}_rejected_connections_total{{reason=\"{reason}\"}}"),
        )
        .unwrap_or(0.0)
    };
    // Each idle connection was closed at accept (over the endpoint's limit or its address'
    // share), displaced by a newer one, or (held, or one whose handshake the kernel finished late, when a slot was
    // free again) at its deadline; so was each slow sender.
    let (limit, late) = (
        rejected("metrics", "connection_limit")
            + rejected("metrics", "address_limit")
            + rejected("metrics", "displaced"),
        rejected("metrics", "deadline"),
    );
    assert!(limit >= (n_metrics / 2) as f64, "{text}");
    assert!(
        limit + late >= (n_metrics + EACH) as f64 && late >= 4.0,
        "{text}"
    );
    let (limit, late) = (
        rejected("pcap_over_ip", "connection_limit")
            + rejected("pcap_over_ip", "address_limit")
            + rejected("pcap_over_ip", "displaced"),
        rejected("pcap_over_ip", "tls_handshake"),
    );
    assert!(limit >= (n_pcap / 2) as f64, "{text}");
    assert!(
        limit + late >= (n_pcap + 2 * EACH) as f64 && late >= 4.0,
        "{text}"
    );
    assert_eq!(
        rejected("metrics", "header_too_large"),
        EACH as f64,
        "{text}"
    );
    assert_eq!(rejected("metrics", "bad_request"), EACH as f64, "{text}");
}

/// The endpoints' start-up lines in `ns`'s zcap run with `args` (after `-i IFACE -q -w
/// /dev/null`); zcap is stopped at once.
fn startup_lines(lab: &Lab, args: &[&str]) -> String {
    let mut all = vec!["-q", "-w", "/dev/null"];
    all.extend_from_slice(args);
    let (child, rx, startup) = live_on_b(lab, &all);
    let (ok, _, err) = common::finish_live(child, rx, true);
    assert!(ok, "{startup}{err}");
    startup
}

/// A port alone binds loopback (unreachable at the lab's address) without a warning; a
/// wildcard bind without TLS warns of what anyone who connects gets; with TLS and
/// authentication the metrics warning is gone, and PCAP-over-IP with TLS but no client CA
/// warns that anyone who connects still gets every packet.
#[test]
fn a_port_alone_binds_loopback_and_wider_binds_say_what_they_expose() {
    zcrx_ring::require!(Need::Privileges, Need::Tool("openssl"));
    let d = common::fresh_dir("endpoint-defaults");
    let pki = Pki::new(&d.join("pki"));
    let lab = Lab::new().unwrap();
    let (m, p) = (common::free_port(&lab.b), common::free_port(&lab.b));
    let p = if p == m { m.wrapping_add(1) } else { p };
    let (child, rx, startup) = live_on_b(
        &lab,
        &[
            "-q",
            "-w",
            "/dev/null",
            "--metrics",
            &m.to_string(),
            "--pcap-over-ip",
            &p.to_string(),
        ],
    );
    let b_ip = lab.b.ip;
    let reach = |port: u16| {
        lab.b
            .run(move || TcpStream::connect((b_ip, port)).is_ok())
            .unwrap()
    };
    let (metrics_wide, pcap_wide) = (reach(m), reach(p));
    let (ok, _, err) = common::finish_live(child, rx, true);
    assert!(ok, "{err}");
    assert!(
        startup.contains(&format!("serving metrics on http://127.0.0.1:{m}/metrics")),
        "{startup}"
    );
    assert!(
        startup.contains(&format!("serving PCAP-over-IP on 127.0.0.1:{p}")),
        "{startup}"
    );
    // Only PCAP-over-IP's loopback warning: every local user could read the packets.
    let warnings: Vec<&str> = startup.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(warnings.len(), 1, "{startup}");
    assert!(
        warnings[0].contains("is on loopback without client certificates"),
        "{startup}"
    );
    assert!(!metrics_wide && !pcap_wide, "reachable beyond loopback");

    let open = startup_lines(
        &lab,
        &["--metrics", "0.0.0.0:0", "--pcap-over-ip", "0.0.0.0:0"],
    );
    for said in [
        "zcap: warning: --metrics 0.0.0.0:0 is not loopback and has no TLS: anyone who can connect reads the capture's counters",
        "zcap: warning: --pcap-over-ip 0.0.0.0:0 is not loopback and has no TLS: anyone who can connect gets every captured packet",
    ] {
        assert!(open.contains(said), "{said:?} not in:\n{open}");
    }

    let hash = bcrypt::hash("pw", 4).unwrap();
    let web = pki.dir.join("web.yml");
    std::fs::write(&web, format!("tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\nbasic_auth_users:\n  u: '{hash}'\n")).unwrap();
    let tls = startup_lines(
        &lab,
        &[
            "--metrics",
            "0.0.0.0:0",
            "--web-config",
            web.to_str().unwrap(),
            "--pcap-over-ip",
            "[::]:0",
            "--pcap-over-ip-cert",
            &pki.file("server.pem"),
            "--pcap-over-ip-key",
            &pki.file("server.key"),
        ],
    );
    assert!(
        !tls.contains("--metrics 0.0.0.0:0 is not loopback"),
        "{tls}"
    );
    assert!(!tls.contains("has no TLS"), "{tls}");
    assert!(
        tls.contains("zcap: warning: --pcap-over-ip [::]:0 is not loopback and asks no client certificate: anyone who can connect gets every captured packet (over TLS)"),
        "{tls}"
    );
}

/// Flags of the endpoints that do not go together, networks that are not networks, and
/// web configurations zcap does not implement are refused, with what is wrong, before
/// anything is captured (no privileges needed).
#[test]
fn endpoint_flags_and_web_configs_are_refused_before_capturing() {
    let d = common::fresh_dir("endpoint-refusals");
    let conf = |name: &str, text: &str| {
        let p = d.join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    let tls10 = conf(
        "tls10.yml",
        "tls_server_config:\n  cert_file: c.pem\n  key_file: k.pem\n  min_version: TLS10\n",
    );
    let unknown = conf(
        "unknown.yml",
        "tls_server_config:\n  cert_file: c.pem\n  key_file: k.pem\n  ocsp: true\n",
    );
    let missing = conf(
        "missing.yml",
        "tls_server_config:\n  cert_file: no-such.pem\n  key_file: k.pem\n",
    );
    let sans = conf(
        "sans.yml",
        "tls_server_config:\n  client_allowed_sans: [a]\n",
    );
    let hash = conf("hash.yml", "basic_auth_users:\n  alice: secret\n");
    let missing_path = d.join("no-such.pem");
    let cases: Vec<(Vec<&str>, String)> = vec![
        (vec!["--web-config", &tls10], "--web-config and --metrics-allow configure --metrics".into()),
        (vec!["--metrics", "0", "--web-config", &tls10], "tls_server_config.min_version TLS10: zcap's TLS (rustls) implements TLS12 and TLS13 only".into()),
        (vec!["--metrics", "0", "--web-config", &unknown], "unknown field `ocsp`".into()),
        (vec!["--metrics", "0", "--web-config", &missing], format!("tls_server_config.cert_file {}", missing_path.display())),
        (vec!["--metrics", "0", "--web-config", &sans], "client_allowed_sans: zcap does not implement it".into()),
        (vec!["--metrics", "0", "--web-config", &hash], "basic_auth_users.alice: not a bcrypt hash".into()),
        (vec!["--pcap-over-ip", "0", "--pcap-over-ip-cert", "c.pem"], "--pcap-over-ip-cert and --pcap-over-ip-key go together".into()),
        (vec!["--pcap-over-ip", "0", "--pcap-over-ip-client-ca", "ca.pem"], "--pcap-over-ip-client-ca asks clients for certificates over TLS".into()),
        (vec!["--pcap-over-ip-allow", "127.0.0.1"], "go with --pcap-over-ip".into()),
        (vec!["--pcap-over-ip", "0", "--pcap-over-ip-allow", "127.0.0.1/33"], "--pcap-over-ip-allow \"127.0.0.1/33\": give networks as ADDR/LEN".into()),
        (vec!["--pcap-over-ip", "0", "--pcap-over-ip-allow", "10.1.2.3/8"], "host bits set past /8 (the network is 10.0.0.0/8)".into()),
    ];
    for (args, want) in cases {
        let mut all = vec!["-i", "lo", "-c", "1"];
        all.extend_from_slice(&args);
        let o = common::zcap(&all);
        let err = common::stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains(&want), "{args:?}: {want:?} not in {err}");
        assert!(!err.contains("listening on"), "{args:?}: {err}");
    }
    let o = common::zcap(&[
        "-i",
        "lo",
        "--pcap-over-ip",
        "0",
        "--pcap-over-ip-max-connections",
        "0",
    ]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "clap's range: {}",
        common::stderr(&o)
    );
}

/// A TCP connection to 127.0.0.1:`port` from `from` (an address of loopback's 127/8), in
/// `side`'s namespace.
fn connect_from(side: &Side, from: [u8; 4], port: u16) -> TcpStream {
    use nix::sys::socket::{bind, connect, socket, AddressFamily, SockFlag, SockType, SockaddrIn};
    side.run(move || {
        let fd = socket(
            AddressFamily::Inet,
            SockType::Stream,
            SockFlag::SOCK_CLOEXEC,
            None,
        )
        .unwrap();
        let [a, b, c, d] = from;
        bind(
            std::os::fd::AsRawFd::as_raw_fd(&fd),
            &SockaddrIn::new(a, b, c, d, 0),
        )
        .unwrap();
        connect(
            std::os::fd::AsRawFd::as_raw_fd(&fd),
            &SockaddrIn::new(127, 0, 0, 1, port),
        )
        .unwrap();
        TcpStream::from(fd)
    })
    .unwrap()
}

#[test]
fn slow_clients_that_prove_nothing_give_way_to_scrapers_and_outsiders_are_refused() {
    zcrx_ring::require!();
    let lab = Lab::new().unwrap();
    let port = common::free_port(&lab.b);
    let addr = format!("127.0.0.1:{port}");
    let (child, rx, _) = live_on_b(
        &lab,
        &[
            "-q",
            "-w",
            "/dev/null",
            "--metrics",
            &addr,
            "--metrics-allow",
            "127.0.0.0/8",
        ],
    );
    // Eight connections from two addresses (four each: one address' share), each sending
    // a byte of a request head every 300 ms: in time for every deadline but the head's.
    let stop = Arc::new(AtomicBool::new(false));
    let mut slow = Vec::new();
    for i in 0..8u8 {
        let mut s = connect_from(&lab.b, [127, 0, 0, 1 + i % 2], port);
        let stop = stop.clone();
        slow.push(std::thread::spawn(move || {
            for b in b"GET /metrics HTTP/1.1\r\nX: ".iter().cycle() {
                if stop.load(Ordering::Relaxed) || s.write_all(&[*b]).is_err() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(300));
            }
        }));
    }
    std::thread::sleep(Duration::from_millis(500));
    // Ten scrapes meanwhile: each gets its metrics.
    let mut answered = 0;
    for _ in 0..10 {
        if let Ok((head, body)) = common::http_get(&lab.b, port, "/metrics", "text/plain") {
            answered += usize::from(head.starts_with("HTTP/1.1 200") && body.contains("zcap_"));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let (_, body) = common::http_get(&lab.b, port, "/metrics", "text/plain").unwrap();
    stop.store(true, Ordering::Relaxed);
    slow.into_iter().for_each(|t| t.join().unwrap());
    let (ok, _, err) = common::finish_live(child, rx, true);
    assert!(ok, "{err}");
    assert_eq!(answered, 10, "{body}");
    let displaced = metric(
        &body,
        "zcap_metrics_rejected_connections_total{reason=\"displaced\"}",
    );
    assert!(displaced.unwrap_or(0.0) >= 1.0, "{body}");

    // Outside the allow-list: closed at accept, before a byte is read, and counted.
    let (child, rx, _) = live_on_b(
        &lab,
        &[
            "-q",
            "-w",
            "/dev/null",
            "--metrics",
            &addr,
            "--metrics-allow",
            "127.0.0.1",
        ],
    );
    let mut outsider = connect_from(&lab.b, [127, 0, 0, 2], port);
    assert!(closed_by_server(&mut outsider, Duration::from_secs(2)));
    let (_, body) = common::http_get(&lab.b, port, "/metrics", "text/plain").unwrap();
    let (ok, _, err) = common::finish_live(child, rx, true);
    assert!(ok, "{err}");
    let refused = metric(
        &body,
        "zcap_metrics_rejected_connections_total{reason=\"address\"}",
    );
    assert_eq!(refused, Some(1.0), "{body}");
}
