//! `--metrics`: a real Prometheus server (Debian's, started here, 1 s scrapes) stores what
//! zcap captured in the netns lab, a counter that rose while the traffic ran and never went
//! back; `promtool check metrics` accepts the text; a port that is taken, and a client that
//! never reads, leave the capture whole.

use crate::common;

use std::io::Write;
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use common::{http_get as get, live_on_b, metric as value};
use zcrx_ring::frames::UdpFlow;
use zcrx_ring::lab::{Lab, Need, Side};
use zcrx_ring::TxRing;

/// Sends `batches` batches of `per_batch` frames of `flow`, one every `every` (by absolute
/// deadlines, so the rate holds over any stretch); returns when the first and the last
/// batch went.
fn send_paced(
    lab: &Lab,
    flow: &UdpFlow,
    per_batch: u64,
    batches: u64,
    every: Duration,
) -> (SystemTime, SystemTime) {
    let iface = lab.a.iface.clone();
    lab.a
        .run(move || {
            let mut tx = TxRing::builder(iface).build().unwrap();
            let start = Instant::now();
            let (mut first, mut last) = (SystemTime::now(), SystemTime::now());
            for b in 0..batches {
                let due = start + every * b as u32;
                if let Some(wait) = due.checked_duration_since(Instant::now()) {
                    std::thread::sleep(wait);
                }
                let frames: Vec<Vec<u8>> = (0..per_batch)
                    .map(|i| flow.frame(b * per_batch + i, 128))
                    .collect();
                let sent = tx.send_batch(frames.iter().map(|f| f.as_slice())).unwrap();
                assert_eq!(sent as u64, per_batch);
                if b == 0 {
                    first = SystemTime::now();
                }
                last = SystemTime::now();
            }
            (first, last)
        })
        .unwrap()
}

/// Debian's Prometheus in `side`'s namespace, scraping 127.0.0.1:`target` every second,
/// its API on 127.0.0.1:`port`; killed when dropped.
struct Prometheus(Child);

impl Prometheus {
    fn start(side: &Side, dir: &std::path::Path, target: u16, port: u16) -> Prometheus {
        Prometheus::start_with(side, dir, target, port, "")
    }

    /// [`Prometheus::start`] with more of the job's scrape configuration (`scheme`,
    /// `tls_config`, `basic_auth`: YAML lines indented for the job).
    fn start_with(
        side: &Side,
        dir: &std::path::Path,
        target: u16,
        port: u16,
        job: &str,
    ) -> Prometheus {
        let config = dir.join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n\
                 scrape_configs:\n  - job_name: zcap\n{job}    static_configs:\n      - targets: ['127.0.0.1:{target}']\n"
            ),
        )
        .unwrap();
        let log = std::fs::File::create(dir.join("prometheus.log")).unwrap();
        let child = Command::new("ip")
            .args(["netns", "exec", &side.netns, "prometheus"])
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("prometheus");
        let p = Prometheus(child);
        let deadline = Instant::now() + Duration::from_secs(30);
        while !get(side, port, "/-/ready", "*/*").is_ok_and(|(h, _)| h.contains(" 200 ")) {
            assert!(
                Instant::now() < deadline,
                "prometheus did not get ready: {}",
                std::fs::read_to_string(dir.join("prometheus.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        p
    }

    /// Waits until Prometheus has scraped its target `n` times (it takes its targets some
    /// 5 s after it starts), so that a series starts at zero and `rate()` has samples over
    /// a whole window.
    fn wait_for_scrapes(side: &Side, port: u16, n: u32) {
        let deadline = Instant::now() + Duration::from_secs(30);
        let q = "count_over_time(up{job=\"zcap\"}[1m])";
        while Prometheus::query(side, port, q, None).is_none_or(|k| k < f64::from(n)) {
            assert!(
                Instant::now() < deadline,
                "prometheus never scraped zcap {n} times"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// An instant query at `at` (now if `None`): the value of its single result, if any.
    fn query(side: &Side, port: u16, q: &str, at: Option<SystemTime>) -> Option<f64> {
        let mut path = format!("/api/v1/query?query={}", encode(q));
        if let Some(t) = at {
            let s = t.duration_since(UNIX_EPOCH).unwrap().as_secs_f64();
            path.push_str(&format!("&time={s:.3}"));
        }
        let (_, body) = get(side, port, &path, "application/json").ok()?;
        let v: serde_json::Value = serde_json::from_str(&body).ok()?;
        let result = v["data"]["result"].as_array()?;
        result.first()?["value"][1].as_str()?.parse().ok()
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Percent-encodes a query string's value.
fn encode(q: &str) -> String {
    q.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'-' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// An IPFIX collector on a free port of 127.0.0.1 in lab side b: its address, and the number
/// of messages it got.
fn counting_collector(lab: &Lab) -> (String, Arc<AtomicU64>) {
    let collector = lab
        .b
        .run(|| std::net::UdpSocket::bind("127.0.0.1:0"))
        .unwrap()
        .unwrap();
    let addr = collector.local_addr().unwrap().to_string();
    collector
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let messages = Arc::new(AtomicU64::new(0));
    let counting = messages.clone();
    std::thread::spawn(move || {
        let mut buf = [0u8; 65536];
        loop {
            match collector.recv(&mut buf) {
                Ok(_) => {
                    counting.fetch_add(1, Ordering::Relaxed);
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(_) => return,
            }
        }
    });
    (addr, messages)
}

/// `promtool check metrics` accepts `text`.
fn promtool_accepts(text: &str) {
    let mut promtool = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    promtool
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let checked = promtool.wait_with_output().unwrap();
    assert!(
        checked.status.success(),
        "promtool check metrics: {}{}\n{text}",
        String::from_utf8_lossy(&checked.stdout),
        String::from_utf8_lossy(&checked.stderr)
    );
}

/// The events in scrape `text`, against what they did: the files in `files` (their bytes
/// all came through write(2); what a buffer holds is neither on disk nor counted), the hooks
/// (`-z /bin/true` on each closed file), the IPFIX `messages` the collector got.
fn events_match(text: &str, files: &Path, messages: f64) {
    let (mut n_files, mut on_disk) = (0.0, 0.0);
    for f in std::fs::read_dir(files).unwrap() {
        n_files += 1.0;
        on_disk += f.unwrap().metadata().unwrap().len() as f64;
    }
    assert!(n_files >= 20.0, "{n_files} files of 1 MB");
    assert_eq!(value(text, "zcap_files_written_total"), Some(n_files));
    assert_eq!(value(text, "zcap_written_bytes_total"), Some(on_disk));
    assert_eq!(value(text, "zcap_hooks_run_total"), Some(n_files - 1.0));
    assert_eq!(value(text, "zcap_hooks_failed_total"), Some(0.0));
    assert!(
        messages >= 5.0,
        "{messages} IPFIX messages in 8 s of 1 s reports"
    );
    assert_eq!(
        value(text, "zcap_ipfix_messages_sent_total"),
        Some(messages)
    );
    assert_eq!(value(text, "zcap_ipfix_messages_failed_total"), Some(0.0));
    let records = value(text, "zcap_ipfix_records_sent_total").unwrap();
    assert!(
        records >= messages,
        "{records} records in {messages} messages"
    );
}

/// Prometheus scrapes zcap every second while 8 s of traffic at 20 000 packets/s pass:
/// the captured counter it stored equals the packets sent (and what the file holds), it
/// rose while the traffic ran (`rate()` over 4 s in the middle of it is a positive number:
/// zcap publishes as it captures, not at the end) and never went back (`resets()`).
/// `promtool check metrics` accepts a scrape with every family present. (How near that
/// rate comes to the one sent depends on how well a shared host kept the sender's pace and
/// the scrapes' times: not asserted.)
#[test]
fn prometheus_stores_what_zcap_captured() {
    zcrx_ring::require!(
        Need::Privileges,
        Need::Tool("prometheus"),
        Need::Tool("promtool")
    );
    let d = common::fresh_dir("metrics-prometheus");
    let lab = Lab::new().unwrap();
    let (collector, ipfix_messages) = counting_collector(&lab);
    let files = d.join("rot");
    std::fs::create_dir_all(&files).unwrap();
    let (child, rx, startup) = live_on_b(
        &lab,
        &[
            "-q",
            "--block-timeout",
            "10",
            "--flows",
            "--active-timeout",
            "1",
            "--ipfix",
            &collector,
            "--pcap-over-ip",
            "127.0.0.1:0",
            "-C",
            "1",
            "-z",
            "/bin/true",
            "-w",
            files.join("rot.pcap").to_str().unwrap(),
            "--metrics",
            "127.0.0.1:0",
            "udp port 7001",
        ],
    );
    // Ports the system chose: zcap's (it says which), Prometheus' (free in the namespace).
    let metrics = common::served_port(&startup, "serving metrics on http://");
    let api = common::free_port(&lab.b);
    let prom = Prometheus::start(&lab.b, &d, metrics, api);
    let flow = UdpFlow::lab(&lab.a, &lab.b, 7000, 7001, true);
    // Two scrapes before the traffic (Prometheus takes its targets some 5 s after it
    // starts): the series starts at zero, and rate() has samples over the whole window.
    Prometheus::wait_for_scrapes(&lab.b, api, 2);
    let (per_batch, batches, every) = (2_000, 80, Duration::from_millis(100));
    let (first, last) = send_paced(&lab, &flow, per_batch, batches, every);
    let sent = per_batch * batches;
    // Two scrapes after it, and time for the flow's last active-timeout report.
    std::thread::sleep(Duration::from_millis(3500));

    // A scrape as promtool reads it, every family present (files, flows, IPFIX, PCAP-over-IP).
    let (head, text) = match get(&lab.b, metrics, "/metrics", "*/*") {
        Ok(got) => got,
        Err(e) => panic!(
            "scraping zcap: {e}; {}",
            common::finish_live(child, rx, true).2
        ),
    };
    assert!(head.contains("text/plain; version=0.0.4"), "{head}");
    for family in [
        "zcap_start_time_seconds",
        "zcap_shard_ring_blocks_held{shard=\"0\"}",
        "zcap_flows_created_total",
        "zcap_ipfix_messages_failed_total",
        "zcap_written_bytes_total",
        "zcap_pcap_over_ip_clients",
    ] {
        assert!(text.contains(family), "{family} missing:\n{text}");
    }
    promtool_accepts(&text);
    // Prometheus itself asked for OpenMetrics and stored the series.
    let stored = Prometheus::query(&lab.b, api, "zcap_captured_packets_total", None);
    let shard = Prometheus::query(
        &lab.b,
        api,
        "zcap_shard_captured_packets_total{shard=\"0\"}",
        None,
    );
    let received = Prometheus::query(&lab.b, api, "zcap_received_packets_total", None);
    let flows = Prometheus::query(&lab.b, api, "zcap_flows_created_total", None);
    let window = 4.0;
    let mid = first + (last.duration_since(first).unwrap() / 2);
    let at = mid + Duration::from_secs_f64(window / 2.0);
    let rate = Prometheus::query(
        &lab.b,
        api,
        &format!("rate(zcap_captured_packets_total[{window}s])"),
        Some(at),
    );
    // Every sample Prometheus stored, from before the traffic to now.
    let resets = Prometheus::query(
        &lab.b,
        api,
        "resets(zcap_captured_packets_total[10m])",
        None,
    );
    let up = Prometheus::query(&lab.b, api, "up{job=\"zcap\"}", None);
    events_match(&text, &files, ipfix_messages.load(Ordering::Relaxed) as f64);
    drop(prom);
    let (ok, _, err) = common::finish_live(child, rx, true);
    assert!(ok, "{err}");
    let captured = common::count(&err, " packets captured");
    assert_eq!(captured, sent, "{err}");
    assert_eq!(up, Some(1.0));
    assert_eq!(stored, Some(sent as f64), "the stored captured counter");
    assert_eq!(shard, Some(sent as f64), "shard 0's captured counter");
    assert_eq!(received, Some(sent as f64), "the kernel's count");
    assert_eq!(flows, Some(1.0), "one flow");
    let rate = rate.expect("a rate over the traffic");
    eprintln!(
        "rate() {rate:.0}/s in the middle of {sent} packets sent at {:.0}/s",
        per_batch as f64 / every.as_secs_f64()
    );
    assert!(rate.is_finite() && rate > 0.0, "rate() {rate}");
    assert_eq!(resets, Some(0.0), "the captured counter went back");
}

/// A metrics port that is taken does not stop the capture (zcap says so and serves once it
/// is free); a client that sends scrapes and never reads the answers neither slows the
/// capture nor stops the next scraper.
#[test]
fn a_taken_port_or_a_client_that_never_reads_leaves_the_capture_whole() {
    zcrx_ring::require!();
    let lab = Lab::new().unwrap();
    // A port the system chose, held by this test until zcap has found it taken.
    let taken = lab
        .b
        .run(|| std::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap()
        .unwrap();
    let port = taken.local_addr().unwrap().port();
    let (child, rx, startup) = live_on_b(
        &lab,
        &[
            "-q",
            "--block-timeout",
            "10",
            "-w",
            "/dev/null",
            "--metrics",
            &format!("127.0.0.1:{port}"),
            "udp port 7001",
        ],
    );
    assert!(
        startup.contains("capturing without metrics, trying again every 1 s"),
        "{startup}"
    );
    let flow = UdpFlow::lab(&lab.a, &lab.b, 7000, 7001, true);
    send_paced(&lab, &flow, 1_000, 5, Duration::from_millis(20));
    drop(taken);
    let deadline = Instant::now() + Duration::from_secs(5);
    let text = loop {
        if let Ok((h, body)) = get(&lab.b, port, "/metrics", "*/*") {
            if h.contains(" 200 ") {
                break body;
            }
        }
        assert!(
            Instant::now() < deadline,
            "zcap never served the freed port"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(value(&text, "zcap_captured_packets_total"), Some(5_000.0));
    // A client that pipelines a thousand scrapes and reads none of the answers.
    let mut hog = lab
        .b
        .run(move || TcpStream::connect(("127.0.0.1", port)))
        .unwrap()
        .unwrap();
    hog.set_write_timeout(Some(Duration::from_secs(5))).unwrap();
    let request = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n".repeat(1000);
    let _ = hog.write_all(request.as_bytes());
    send_paced(&lab, &flow, 1_000, 20, Duration::from_millis(20));
    std::thread::sleep(Duration::from_millis(300));
    // The next scraper is answered, within the hog's time-out at worst.
    let asked = Instant::now();
    let (head, text) = get(&lab.b, port, "/metrics", "application/openmetrics-text").unwrap();
    assert!(head.contains("application/openmetrics-text"), "{head}");
    assert!(
        asked.elapsed() < Duration::from_secs(5),
        "{:?}",
        asked.elapsed()
    );
    assert!(text.ends_with("# EOF\n"), "{text}");
    assert_eq!(value(&text, "zcap_captured_packets_total"), Some(25_000.0));
    let (ok, _, err) = common::finish_live(child, rx, true);
    drop(hog);
    assert!(ok, "{err}");
    assert_eq!(common::count(&err, " packets captured"), 25_000, "{err}");
    assert_eq!(
        common::count(&err, " packets dropped by kernel"),
        0,
        "{err}"
    );
}

/// `--metrics` with a file, or with a bad address, is refused before anything is read.
#[test]
fn metrics_need_a_live_capture_and_an_address() {
    let o = common::zcap(&["-r", "/dev/null", "--metrics", "127.0.0.1:9128"]);
    let err = common::stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("--metrics serves live captures"), "{err}");
    let o = common::zcap(&["-i", "lo", "-c", "1", "--metrics", "localhost"]);
    let err = common::stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("--metrics \"localhost\": give [ADDR:]PORT"),
        "{err}"
    );
}

/// A web configuration in `pki`'s directory that names its files relatively (the toolkit
/// takes them from the file's directory, whatever zcap's): TLS with the server
/// certificate, client certificates of the CA required, and `user` with a bcrypt hash of
/// `password`.
fn web_config(pki: &common::Pki, user: &str, password: &str) -> std::path::PathBuf {
    let hash = bcrypt::hash(password, 6).unwrap();
    let path = pki.dir.join("web.yml");
    std::fs::write(
        &path,
        format!(
            "tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n  \
             client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.pem\n  \
             min_version: TLS12\n  max_version: TLS13\nbasic_auth_users:\n  {user}: '{hash}'\n"
        ),
    )
    .unwrap();
    let checked = Command::new("promtool")
        .args(["check", "web-config"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        checked.status.success(),
        "promtool check web-config: {}{}",
        String::from_utf8_lossy(&checked.stdout),
        String::from_utf8_lossy(&checked.stderr)
    );
    path
}

/// Prometheus scrapes zcap over TLS, with its client certificate and a password, every
/// second: the target is up and the captured counter it stored is the packets sent. The
/// web configuration promtool accepts is the one zcap runs with.
#[test]
fn prometheus_scrapes_over_tls_with_a_client_certificate_and_a_password() {
    zcrx_ring::require!(
        Need::Privileges,
        Need::Tool("prometheus"),
        Need::Tool("promtool"),
        Need::Tool("openssl")
    );
    let d = common::fresh_dir("metrics-tls");
    let pki = common::Pki::new(&d.join("pki"));
    let web = web_config(&pki, "prometheus", "scrape-s3cret");
    let lab = Lab::new().unwrap();
    let (child, rx, startup) = live_on_b(
        &lab,
        &[
            "-q",
            "--block-timeout",
            "10",
            "-w",
            "/dev/null",
            "--metrics",
            "127.0.0.1:0",
            "--web-config",
            web.to_str().unwrap(),
            "udp port 7001",
        ],
    );
    assert!(!startup.contains("warning"), "{startup}");
    let metrics = common::served_port(&startup, "serving metrics on https://");
    let api = common::free_port(&lab.b);
    let job = format!(
        "    scheme: https\n    tls_config:\n      ca_file: {}\n      cert_file: {}\n      key_file: {}\n    \
         basic_auth:\n      username: prometheus\n      password: scrape-s3cret\n",
        pki.file("ca.pem"),
        pki.file("client.pem"),
        pki.file("client.key")
    );
    let prom = Prometheus::start_with(&lab.b, &d, metrics, api, &job);
    Prometheus::wait_for_scrapes(&lab.b, api, 2);
    let flow = UdpFlow::lab(&lab.a, &lab.b, 7000, 7001, true);
    send_paced(&lab, &flow, 1_000, 5, Duration::from_millis(100));
    std::thread::sleep(Duration::from_millis(2500));
    let up = Prometheus::query(&lab.b, api, "up{job=\"zcap\"}", None);
    let stored = Prometheus::query(&lab.b, api, "zcap_captured_packets_total", None);
    let log = std::fs::read_to_string(d.join("prometheus.log")).unwrap_or_default();
    drop(prom);
    let (ok, _, err) = common::finish_live(child, rx, true);
    assert!(ok, "{err}");
    assert_eq!(common::count(&err, " packets captured"), 5_000, "{err}");
    assert_eq!(up, Some(1.0), "the target is down: {log}");
    assert_eq!(stored, Some(5_000.0), "the stored captured counter");
}

/// curl in `side`'s namespace with `args`: whether it succeeded, the HTTP status it got
/// ("000": none), and what it was sent (head and body).
fn curl(side: &Side, args: &[&str]) -> (bool, String, String) {
    let o = Command::new("ip")
        .args([
            "netns",
            "exec",
            &side.netns,
            "curl",
            "-s",
            "-i",
            "--max-time",
            "10",
        ])
        .args(args)
        .args(["-w", "\n%{http_code}"])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let (response, status) = out.rsplit_once('\n').unwrap_or(("", &out));
    (o.status.success(), status.to_string(), response.to_string())
}

/// Over TLS with a client certificate, no credentials and wrong ones get 401 with a
/// Basic challenge and no counters, the right ones 200 and the counters; plain HTTP to the
/// TLS port, and TLS without a client certificate, get no answer at all; a head over 8 KiB
/// gets 431. Each refusal is counted by reason.
#[test]
fn curl_needs_the_password_the_certificate_and_tls() {
    zcrx_ring::require!(
        Need::Privileges,
        Need::Tool("curl"),
        Need::Tool("openssl"),
        Need::Tool("promtool")
    );
    let d = common::fresh_dir("metrics-curl");
    let pki = common::Pki::new(&d.join("pki"));
    let web = web_config(&pki, "alice", "s3cret");
    let lab = Lab::new().unwrap();
    let (child, rx, startup) = live_on_b(
        &lab,
        &[
            "-q",
            "-w",
            "/dev/null",
            "--metrics",
            "127.0.0.1:0",
            "--web-config",
            web.to_str().unwrap(),
        ],
    );
    let port = common::served_port(&startup, "serving metrics on https://");
    let url = format!("https://127.0.0.1:{port}/metrics");
    let (ca, cert, key) = (
        pki.file("ca.pem"),
        pki.file("client.pem"),
        pki.file("client.key"),
    );
    let tls = ["--cacert", &ca, "--cert", &cert, "--key", &key];
    let with = |more: &[&str]| {
        let mut a: Vec<&str> = tls.to_vec();
        a.extend_from_slice(more);
        a.push(&url);
        curl(&lab.b, &a)
    };
    for creds in [&[][..], &["-u", "alice:wrong"], &["-u", "mallory:s3cret"]] {
        let (_, status, response) = with(creds);
        assert_eq!(status, "401", "{creds:?}: {response}");
        assert!(
            response.contains("\r\nWWW-Authenticate: Basic "),
            "{response}"
        );
        assert!(!response.contains("zcap_"), "{response}");
    }
    let (ok, status, response) = with(&["-u", "alice:s3cret"]);
    assert!(ok && status == "200", "{status}: {response}");
    assert!(
        response.contains("zcap_captured_packets_total "),
        "{response}"
    );
    // Plain HTTP to the TLS port: no answer, the connection closed.
    let (ok, status, response) = curl(
        &lab.b,
        &["-u", "alice:s3cret", &url.replace("https", "http")],
    );
    assert!(
        !ok && status == "000" && response.is_empty(),
        "{status}: {response}"
    );
    // TLS without a client certificate: the handshake fails.
    let (ok, status, response) = curl(&lab.b, &["--cacert", &ca, "-u", "alice:s3cret", &url]);
    assert!(
        !ok && status == "000" && response.is_empty(),
        "{status}: {response}"
    );
    let big = format!("X-Big: {}", "a".repeat(9000));
    let (_, status, response) = with(&["-u", "alice:s3cret", "-H", &big]);
    assert_eq!(status, "431", "{response}");
    let (_, _, text) = with(&["-u", "alice:s3cret"]);
    let (ok, _, err) = common::finish_live(child, rx, true);
    assert!(ok, "{err}");
    let rejected = |reason: &str| {
        value(
            &text,
            &format!("zcap_metrics_rejected_connections_total{{reason=\"{reason}\"}}"),
        )
    };
    assert_eq!(rejected("unauthorized"), Some(3.0), "{text}");
    assert_eq!(rejected("tls_handshake"), Some(2.0), "{text}");
    assert_eq!(rejected("header_too_large"), Some(1.0), "{text}");
    assert_eq!(rejected("connection_limit"), Some(0.0), "{text}");
}
