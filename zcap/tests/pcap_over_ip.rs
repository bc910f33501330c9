//! `--pcap-over-ip`: clients that connect get a pcap stream of the capture, read here as a
//! person would (`nc ADDR PORT | tcpdump -r -`, tshark's `-i TCP@ADDR:PORT`, `openssl
//! s_client -quiet ... | tcpdump -r -` over TLS); a late client gets the header and what
//! follows; a client that never reads is cut off and counted, and the capture goes on;
//! under mutual TLS a client without a certificate of the CA gets nothing, and an address
//! outside the allow-list is closed at accept; each refusal is counted.

use crate::common;

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::{live_on_b, Pki};
use zcrx_ring::lab::{Lab, Need};

/// `nc 127.0.0.1 PORT | tcpdump -n -r -` in namespace `ns`, its lines into `out`.
fn nc_tcpdump(ns: &str, port: u16, out: &std::path::Path) -> Child {
    Command::new("ip")
        .args(["netns", "exec", ns, "bash", "-c"])
        .arg(format!(
            "nc 127.0.0.1 {port} | tcpdump -n -r - > '{}' 2>/dev/null",
            out.display()
        ))
        .stdin(Stdio::null())
        .spawn()
        .unwrap()
}

/// `tshark -n -c COUNT -i TCP@127.0.0.1:PORT` in namespace `ns`, its lines piped.
fn tshark_client(ns: &str, port: u16, count: usize) -> Child {
    Command::new("ip")
        .args([
            "netns",
            "exec",
            ns,
            "tshark",
            "-n",
            "-c",
            &count.to_string(),
            "-i",
        ])
        .arg(format!("TCP@127.0.0.1:{port}"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

fn lines(p: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .map(String::from)
        .collect()
}

/// One capture's timeline (clients joining before, between and during the batches), kept
/// in one function over a screen long: split, the steps would lose their order.
#[test]
fn clients_get_the_capture_as_pcap_and_a_slow_one_is_cut_off() {
    zcrx_ring::require!(Need::Privileges, Need::Tool("nc"), Need::Tool("tshark"));
    let d = common::fresh_dir("pcap-over-ip");
    let lab = Lab::new().unwrap();
    let all = d.join("all.pcap");
    let (child, rx, startup) = live_on_b(
        &lab,
        &[
            "-q",
            "--block-timeout",
            "10",
            "-w",
            all.to_str().unwrap(),
            "--pcap-over-ip",
            "127.0.0.1:0",
            "udp",
        ],
    );
    // The port the system chose, as zcap says it.
    let port = common::served_port(&startup, "serving PCAP-over-IP on ");
    let flow = zcrx_ring::frames::UdpFlow::lab(&lab.a, &lab.b, 7000, 7001, true);
    let frames = |first: u64, n: u64, size: usize| -> Vec<Vec<u8>> {
        (first..first + n).map(|i| flow.frame(i, size)).collect()
    };
    let early = d.join("early.txt");
    let mut early_client = nc_tcpdump(&lab.b.netns, port, &early);
    // tshark's own PCAP-over-IP capture source, for the first batch.
    let tshark = tshark_client(&lab.b.netns, port, 1000);
    std::thread::sleep(Duration::from_millis(2500));
    common::send(&lab, &frames(0, 1000, 200));
    std::thread::sleep(Duration::from_millis(300));
    let t = tshark.wait_with_output().unwrap();
    assert!(t.status.success(), "tshark -i TCP@");
    assert_eq!(String::from_utf8_lossy(&t.stdout).lines().count(), 1000);
    let late = d.join("late.txt");
    let mut late_client = nc_tcpdump(&lab.b.netns, port, &late);
    std::thread::sleep(Duration::from_millis(300));
    common::send(&lab, &frames(1000, 1000, 200));
    std::thread::sleep(Duration::from_millis(300));
    // A client that connects and never reads.
    let _slow = lab
        .b
        .run(move || std::net::TcpStream::connect(("127.0.0.1", port)))
        .unwrap()
        .unwrap();
    std::thread::sleep(Duration::from_millis(100));
    // 168 MB in 12 bursts: more than a client may fall behind (16 MiB); the others read it.
    for burst in 0..12 {
        common::send(&lab, &frames(2000 + burst * 10_000, 10_000, 1400));
        std::thread::sleep(Duration::from_millis(60));
    }
    std::thread::sleep(Duration::from_millis(300));
    let (ok, _, err) = common::finish_live(child, rx, true);
    assert!(ok, "{err}");
    assert!(
        err.contains("4 PCAP-over-IP client(s) served, 1 cut off for reading too slowly"),
        "{err}"
    );
    assert!(early_client.wait().unwrap().success());
    assert!(late_client.wait().unwrap().success());
    let want = common::tcpdump_lines(&d, "cat", "all.pcap");
    assert!(want.len() >= 2000, "{}", want.len());
    // The early client got exactly what the file holds; the late one its tail, from the
    // second batch on at the latest.
    let got = lines(&early);
    assert_eq!(got.len(), want.len());
    assert!(
        got == want,
        "the early client's lines differ from the file's"
    );
    let tail = lines(&late);
    assert!(
        tail.len() >= want.len() - 1000 && tail.len() < want.len(),
        "{} of {}",
        tail.len(),
        want.len()
    );
    assert!(
        want.ends_with(&tail),
        "the late client's lines are the file's last"
    );
}

/// An address in use, or an offline run, is refused with a clear error before anything is
/// captured.
#[test]
fn an_address_in_use_or_a_file_is_refused_at_once() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let o = common::zcap(&["-i", "lo", "-c", "1", "--pcap-over-ip", &addr]);
    let err = common::stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!("--pcap-over-ip {addr}: cannot listen")) && err.contains("in use"),
        "{err}"
    );
    let o = common::zcap(&["-r", "/dev/null", "--pcap-over-ip", &addr]);
    let err = common::stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("serves live captures"), "{err}");
}

/// `openssl s_client` reading 127.0.0.1:`port` over TLS in namespace `ns`, the server
/// verified against `pki`'s CA, with the client certificate `cert` (`client`,
/// `stranger`) if any: the command, for a pipe to follow.
fn s_client(ns: &str, pki: &Pki, port: u16, cert: Option<&str>) -> String {
    let identity = cert
        .map(|c| {
            format!(
                "-cert '{}' -key '{}'",
                pki.file(&format!("{c}.pem")),
                pki.file(&format!("{c}.key"))
            )
        })
        .unwrap_or_default();
    format!(
        "ip netns exec {ns} openssl s_client -quiet -verify_return_error -connect 127.0.0.1:{port} -CAfile '{}' {identity} 2>/dev/null",
        pki.file("ca.pem"),
    )
}

/// [`s_client`] with the client certificate, `| tcpdump -n -r -`, its lines into `out`.
fn tls_tcpdump(ns: &str, pki: &Pki, port: u16, out: &std::path::Path) -> Child {
    Command::new("bash")
        .arg("-c")
        .arg(format!(
            "set -o pipefail; {} | tcpdump -n -r - > '{}' 2>/dev/null",
            s_client(ns, pki, port, Some("client")),
            out.display()
        ))
        .stdin(Stdio::null())
        .spawn()
        .unwrap()
}

/// What [`s_client`] with `cert` reads before it ends (it must end within 10 s).
fn tls_read(ns: &str, pki: &Pki, port: u16, cert: Option<&str>) -> Vec<u8> {
    let o = Command::new("bash")
        .arg("-c")
        .arg(format!("timeout 10 {}", s_client(ns, pki, port, cert)))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_ne!(o.status.code(), Some(124), "s_client did not end");
    o.stdout
}

/// Mutual TLS and an allow-list on a wildcard bind: the client with a certificate of the
/// CA reads every packet the lab sent (tcpdump reads its stream whole), clients without one
/// or with another CA's get nothing, a connection from the lab's other side (outside
/// 127.0.0.1/32) is closed at accept; the final line and the metrics count each. With TLS and client
/// certificates a wider bind draws no warning.
#[test]
fn mutual_tls_serves_only_certified_clients_from_allowed_addresses() {
    zcrx_ring::require!(
        Need::Privileges,
        Need::Tool("openssl"),
        Need::Tool("tcpdump")
    );
    let d = common::fresh_dir("pcap-over-tls");
    let pki = Pki::new(&d.join("pki"));
    let lab = Lab::new().unwrap();
    let all = d.join("all.pcap");
    let (child, rx, startup) = live_on_b(
        &lab,
        &[
            "-q",
            "--block-timeout",
            "10",
            "-w",
            all.to_str().unwrap(),
            "--pcap-over-ip",
            "0.0.0.0:0",
            "--pcap-over-ip-cert",
            &pki.file("server.pem"),
            "--pcap-over-ip-key",
            &pki.file("server.key"),
            "--pcap-over-ip-client-ca",
            &pki.file("ca.pem"),
            "--pcap-over-ip-allow",
            "127.0.0.1/32,::1",
            "--metrics",
            "127.0.0.1:0",
            "udp",
        ],
    );
    assert!(!startup.contains("warning"), "{startup}");
    assert!(startup.contains(" (TLS)"), "{startup}");
    let port = common::served_port(&startup, "serving PCAP-over-IP on ");
    let metrics = common::served_port(&startup, "serving metrics on http://");
    let certified = d.join("certified.txt");
    let mut reader = tls_tcpdump(&lab.b.netns, &pki, port, &certified);
    // Without a certificate, and with another CA's: the handshake fails, nothing comes.
    for cert in [None, Some("stranger")] {
        let got = tls_read(&lab.b.netns, &pki, port, cert);
        assert!(got.is_empty(), "{cert:?} read {} bytes", got.len());
    }
    // From the lab's other side (198.18.0.1, outside 127.0.0.1/32): closed before a byte
    // (a TCP connection; the capture's filter keeps UDP only).
    let b_ip = lab.b.ip;
    let closed = lab
        .a
        .run(move || {
            let mut s = std::net::TcpStream::connect((b_ip, port))?;
            s.set_read_timeout(Some(Duration::from_secs(5)))?;
            std::io::Read::read(&mut s, &mut [0u8; 64])
        })
        .unwrap();
    let reset = |e: &std::io::Error| e.kind() == std::io::ErrorKind::ConnectionReset;
    assert!(
        matches!(closed, Ok(0)) || closed.as_ref().is_err_and(reset),
        "{closed:?}"
    );
    std::thread::sleep(Duration::from_millis(1000));
    let flow = zcrx_ring::frames::UdpFlow::lab(&lab.a, &lab.b, 7000, 7001, true);
    let frames: Vec<Vec<u8>> = (0..1000).map(|i| flow.frame(i, 300)).collect();
    common::send(&lab, &frames);
    std::thread::sleep(Duration::from_millis(500));
    let (_, text) = common::http_get(&lab.b, metrics, "/metrics", "*/*").unwrap();
    let (ok, _, err) = common::finish_live(child, rx, true);
    assert!(ok, "{err}");
    assert!(reader.wait().unwrap().success());
    assert!(
        err.contains("1 PCAP-over-IP client(s) served, 0 cut off for reading too slowly, 1 refused by --pcap-over-ip-allow, 0 over --pcap-over-ip-max-connections, 0 over one address' share, 0 handshakes displaced, 2 failed the TLS handshake"),
        "{err}"
    );
    let rejected = |reason: &str| {
        common::metric(
            &text,
            &format!("zcap_pcap_over_ip_rejected_connections_total{{reason=\"{reason}\"}}"),
        )
    };
    assert_eq!(rejected("address"), Some(1.0), "{text}");
    assert_eq!(rejected("tls_handshake"), Some(2.0), "{text}");
    assert_eq!(
        common::metric(&text, "zcap_pcap_over_ip_clients"),
        Some(1.0),
        "{text}"
    );
    let want = common::tcpdump_lines(&d, "cat", "all.pcap");
    assert_eq!(want.len(), 1000);
    assert!(
        lines(&certified) == want,
        "the certified client's lines differ from the file's"
    );
}

#[test]
fn a_unix_socket_serves_its_owner_alone_and_loopback_tcp_is_warned_of() {
    zcrx_ring::require!(
        Need::Privileges,
        Need::Tool("tcpdump"),
        Need::Tool("nc"),
        Need::Tool("setpriv")
    );
    let lab = Lab::new().unwrap();
    // Over TCP on loopback: every local user could read the packets, and zcap says so.
    let (tcp, tcp_rx, startup) = live_on_b(&lab, &["-q", "-w", "/dev/null", "--pcap-over-ip", "0"]);
    let (ok, _, err) = common::finish_live(tcp, tcp_rx, true);
    assert!(ok, "{err}");
    assert!(
        startup.contains("is on loopback without client certificates: every user of this host"),
        "{startup}"
    );

    let dir = common::fresh_dir("poi-unix");
    let sock = dir.join("pcap.sock");
    let addr = format!("unix:{}", sock.display());
    let (child, rx, startup) = live_on_b(&lab, &["-q", "-w", "/dev/null", "--pcap-over-ip", &addr]);
    assert!(!startup.contains("warning"), "{startup}");
    assert!(
        startup.contains("at most 162 MiB held for its clients"),
        "{startup}"
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&sock).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    // Another user is refused by the file's permissions; its owner reads the capture.
    let nobody = Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "nc",
            "-U",
            "-N",
        ])
        .arg(&sock)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!nobody.status.success());
    assert!(
        String::from_utf8_lossy(&nobody.stderr).contains("Permission denied"),
        "{}",
        String::from_utf8_lossy(&nobody.stderr)
    );
    let out = dir.join("lines");
    let reader = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "timeout 3 nc -U '{}' | tcpdump -n -r - > '{}' 2>/dev/null",
            sock.display(),
            out.display()
        ))
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let frames: Vec<Vec<u8>> = (0..50).map(|i| common::udp_frame(3, i)).collect();
    common::send(&lab, &frames);
    let done = reader.wait_with_output().unwrap();
    assert!(done.status.code().is_some());
    let (ok, _, err) = common::finish_live(child, rx, true);
    assert!(ok, "{err}");
    assert_eq!(lines(&out).len(), 50, "{err}");
    assert!(err.contains("1 PCAP-over-IP client(s) served"), "{err}");
}

#[test]
fn stalled_clients_hold_no_more_than_the_stated_bound() {
    zcrx_ring::require!(Need::Privileges);
    let lab = Lab::new().unwrap();
    let (child, rx, startup) = live_on_b(
        &lab,
        &[
            "-q",
            "-w",
            "/dev/null",
            "--pcap-over-ip",
            "127.0.0.1:0",
            "--pcap-over-ip-max-connections",
            "12",
            "udp",
        ],
    );
    let port = common::served_port(&startup, "serving PCAP-over-IP on ");
    let worker = common::worker(child.id());
    std::thread::sleep(Duration::from_millis(300));
    let before = common::Usage::of(worker).unwrap();
    // Six clients that connect and never read, then 168 MB of records for them.
    let stalled: Vec<std::net::TcpStream> = (0..6)
        .map(|_| {
            lab.b
                .run(move || std::net::TcpStream::connect(("127.0.0.1", port)))
                .unwrap()
                .unwrap()
        })
        .collect();
    std::thread::sleep(Duration::from_millis(100));
    let flow = zcrx_ring::frames::UdpFlow::lab(&lab.a, &lab.b, 7000, 7001, true);
    let mut most = before.rss_kib;
    for burst in 0..12u64 {
        let frames: Vec<Vec<u8>> = (0..10_000)
            .map(|i| flow.frame(burst * 10_000 + i, 1400))
            .collect();
        common::send(&lab, &frames);
        std::thread::sleep(Duration::from_millis(60));
        most = most.max(common::Usage::of(worker).unwrap().rss_kib);
    }
    std::thread::sleep(Duration::from_millis(300));
    most = most.max(common::Usage::of(worker).unwrap().rss_kib);
    drop(stalled);
    let (ok, _, err) = common::finish_live(child, rx, true);
    assert!(ok, "{err}");
    assert!(err.contains("6 cut off for reading too slowly"), "{err}");
    // What zcap holds at most for 6 clients: 16 MiB and 256 KiB each, 32 MiB hand-over.
    let grew = (most - before.rss_kib) / 1024;
    assert!(
        grew <= 6 * 16 + 2 + 32,
        "resident memory grew {grew} MiB: {before:?}, at most {most} KiB"
    );
}
