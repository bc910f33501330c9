//! `zcap --top` used as a person uses it: in a terminal (tmux), on known lab traffic — 16
//! UDP flows whose rates differ by powers of two, a TLS connection, a DNS answer naming the
//! sender — read off the screen (`tmux capture-pane`), driven by its keys, resized, quit
//! with `q` and with SIGTERM; and refused when standard output is not a terminal.

use crate::common;

use std::net::UdpSocket;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use zcrx_ring::lab::{Lab, Need};

/// UDP flows sent.
const FLOWS: usize = 16;
/// Packets a second of flow `i`: 5 for the six smallest (their packets double in size
/// instead), then doubling.
fn pps(i: usize) -> u64 {
    if i < 6 {
        5
    } else {
        5 << (i - 5)
    }
}
/// IP bytes of flow `i`'s packets: 32 doubling to 1024. Flow `i` sends 160 x 2^i bytes/s.
fn ip_size(i: usize) -> usize {
    32 << i.min(5)
}
/// Source port of flow `i` (to 198.18.0.2:9000).
fn port(i: usize) -> u16 {
    41_000 + i as u16
}

/// A tmux server of the test's own, a shell in its one window.
struct Tmux {
    socket: String,
}

impl Tmux {
    /// A server named by `tag` and the test process (tests run side by side).
    fn start(tag: &str, width: u16, height: u16) -> Tmux {
        let t = Tmux {
            socket: format!("zcap-top-{tag}-{}", std::process::id()),
        };
        t.run(&[
            "new-session",
            "-d",
            "-s",
            "top",
            "-x",
            &width.to_string(),
            "-y",
            &height.to_string(),
            "env PS1='top$ ' TERM=xterm-256color bash --norc --noprofile",
        ]);
        t
    }

    fn run(&self, args: &[&str]) -> String {
        let o = Command::new("tmux")
            .args(["-L", &self.socket])
            .args(args)
            .output()
            .expect("run tmux");
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    /// Keys as tmux names them ("q", "Enter", "C-c"), or text (`literal`).
    fn keys(&self, keys: &str, literal: bool) {
        let mut args = vec!["send-keys", "-t", "top"];
        if literal {
            args.push("-l");
        }
        args.push(keys);
        self.run(&args);
    }

    /// Types a command line and Enter.
    fn type_line(&self, line: &str) {
        self.keys(line, true);
        self.keys("Enter", false);
    }

    fn pane(&self) -> String {
        self.run(&["capture-pane", "-p", "-t", "top"])
    }

    /// The pane with its escape sequences (attributes, colours).
    fn pane_escaped(&self) -> String {
        self.run(&["capture-pane", "-p", "-e", "-t", "top"])
    }

    /// The pane once `what` holds of it and it is drawn whole (the same on two looks
    /// 150 ms apart), or after `secs`, as it is then.
    fn wait_for(&self, what: impl Fn(&str) -> bool, secs: u64) -> String {
        let deadline = Instant::now() + Duration::from_secs(secs);
        let mut last = String::new();
        loop {
            let p = self.pane();
            if (what(&p) && p == last) || Instant::now() > deadline {
                return p;
            }
            last = p;
            std::thread::sleep(Duration::from_millis(150));
        }
    }

    /// The pane drawn whole (see [`Tmux::wait_for`]).
    fn settled(&self) -> String {
        self.wait_for(|_| true, 3)
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .status();
    }
}

/// A child process killed when the test ends.
struct Kill(Child);

impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The table's rows: the lines that start with a protocol, split in words.
fn rows(pane: &str) -> Vec<Vec<String>> {
    pane.lines()
        .filter(|l| ["UDP ", "TCP ", "ICMP"].iter().any(|p| l.starts_with(p)))
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .collect()
}

/// A rate as shown ("3.27M", "41.9k", "512").
fn rate(s: &str) -> f64 {
    let (num, mult) = match s.chars().last() {
        Some('k') => (&s[..s.len() - 1], 1e3),
        Some('M') => (&s[..s.len() - 1], 1e6),
        Some('G') => (&s[..s.len() - 1], 1e9),
        _ => (s, 1.0),
    };
    num.parse::<f64>()
        .unwrap_or_else(|_| panic!("not a rate: {s:?}"))
        * mult
}

/// The row of UDP flow `i` (its remote end shown as "NAME:PORT").
fn flow_row(rows: &[Vec<String>], i: usize) -> Option<&Vec<String>> {
    let end = format!(":{}", port(i));
    rows.iter().find(|r| r[0] == "UDP" && r[2].ends_with(&end))
}

/// Whether `stty -a`'s output (in the pane) is a sane, cooked terminal.
fn sane(pane: &str) -> bool {
    let words: Vec<&str> = pane.split_whitespace().collect();
    ["icanon", "echo", "isig", "icrnl", "opost"]
        .iter()
        .all(|w| words.contains(w))
        && !["-icanon", "-echo", "-isig"]
            .iter()
            .any(|w| words.contains(w))
}

/// Every SGR parameter (`ESC [ ... m`) in `text`.
fn sgr_parameters(text: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for part in text.split("\x1b[").skip(1) {
        let Some(end) = part.find(|c: char| !(c.is_ascii_digit() || c == ';')) else {
            continue;
        };
        if part[end..].starts_with('m') {
            out.extend(part[..end].split(';').filter_map(|p| p.parse::<u32>().ok()));
        }
    }
    out
}

/// A DNS response naming 198.18.0.1 "lab-a.example" (A record, TTL 60).
fn dns_answer() -> Vec<u8> {
    let mut m = vec![0x12, 0x34, 0x81, 0x80, 0, 1, 0, 1, 0, 0, 0, 0];
    for l in ["lab-a", "example"] {
        m.push(l.len() as u8);
        m.extend_from_slice(l.as_bytes());
    }
    m.extend([0, 0, 1, 0, 1]);
    m.extend([0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 198, 18, 0, 1]);
    m
}

/// The paced sender: every flow at its rate until `stop`, counting what it sent.
fn send(socks: Vec<UdpSocket>, sent: Arc<Vec<AtomicU64>>, stop: Arc<AtomicBool>) {
    let start = Instant::now();
    let payloads: Vec<Vec<u8>> = (0..FLOWS).map(|i| vec![0x5a; ip_size(i) - 28]).collect();
    while !stop.load(Ordering::Relaxed) {
        let t = start.elapsed().as_secs_f64();
        for (i, s) in socks.iter().enumerate() {
            let due = (t * pps(i) as f64) as u64 + 1;
            while sent[i].load(Ordering::Relaxed) < due {
                s.send(&payloads[i]).expect("send");
                sent[i].fetch_add(1, Ordering::Relaxed);
            }
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Packets of `file` (pcap) to UDP port 9000.
fn to_port_9000(file: &Path) -> u64 {
    let mut r = pcap_file::pcap::PcapReader::new(std::fs::File::open(file).unwrap()).unwrap();
    let mut n = 0;
    while let Some(p) = r.next_packet() {
        let p = p.unwrap();
        let d = &p.data;
        // Ethernet, IPv4 without options, UDP to 9000.
        if d.len() > 38 && d[12..14] == [8, 0] && d[23] == 17 && d[36..38] == [0x23, 0x28] {
            n += 1;
        }
    }
    n
}

#[test]
fn top_refuses_without_a_terminal() {
    let o = Command::new(common::ZCAP)
        .args(["--top", "-i", "lo"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--top") && err.contains("needs a terminal"),
        "{err}"
    );
    assert!(o.stdout.is_empty());
    // What does not go with it is refused before anything is opened.
    for (args, says) in [
        (&["--top", "-w", "-"][..], "-w - cannot go there"),
        (&["--top", "--flows-every", "5"][..], "--flows-every"),
        (&["--top", "--top-sort", "fast"][..], "one of 2s, 10s, 40s"),
        (&["--top", "--top-by", "all"][..], "flow, pair, host, port"),
        (&["--top-by", "host"][..], "go with --top"),
        (&["--top", "--immediate-mode"][..], "--immediate-mode"),
    ] {
        let o = Command::new(common::ZCAP)
            .args(["-i", "lo"])
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    // A number out of its range is a usage error, refused as clap parses (exit 2).
    let o = Command::new(common::ZCAP)
        .args(["-i", "lo", "--top", "--top-interval", "0"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("0.1..=60"), "{err}");
}

#[test]
fn top_in_a_terminal_on_known_traffic() {
    zcrx_ring::require!(Need::Privileges, Need::Tool("tmux"), Need::Tool("openssl"));
    let lab = Lab::new().unwrap();
    let dir = common::fresh_dir("top");
    let pki = common::Pki::new(&dir.join("pki"));
    // Receivers in b (so that no ICMP port unreachable comes back), senders in a.
    let (_rx, _rx_dns) = lab
        .b
        .run(|| {
            (
                UdpSocket::bind("198.18.0.2:9000").unwrap(),
                UdpSocket::bind("198.18.0.2:5353").unwrap(),
            )
        })
        .unwrap();
    let (socks, dns) = lab
        .a
        .run(|| {
            let socks: Vec<UdpSocket> = (0..FLOWS)
                .map(|i| {
                    let s = UdpSocket::bind(("198.18.0.1", port(i))).unwrap();
                    s.connect("198.18.0.2:9000").unwrap();
                    s
                })
                .collect();
            (socks, UdpSocket::bind("198.18.0.1:53").unwrap())
        })
        .unwrap();
    let _server = Kill(
        Command::new("ip")
            .args([
                "netns",
                "exec",
                &lab.b.netns,
                "openssl",
                "s_server",
                "-quiet",
            ])
            .args(["-accept", "4433", "-cert", &pki.file("server.pem")])
            .args(["-key", &pki.file("server.key")])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );

    let tmux = Tmux::start("live", 200, 60);
    tmux.wait_for(|p| p.contains("top$"), 5);
    let file = dir.join("top.pcap");
    tmux.type_line(&format!(
        "ip netns exec {} {} --top -i {} -w {}",
        lab.b.netns,
        common::bin(),
        lab.b.iface,
        file.display()
    ));
    let p = tmux.wait_for(|p| p.contains("PROTO") && p.contains("every 1.0s"), 10);
    assert!(p.contains("zcap --top on"), "the view did not start:\n{p}");

    // The DNS answer first: the sender's address is then shown by its name.
    dns.send_to(&dns_answer(), "198.18.0.2:5353").unwrap();
    let mut client = Kill(
        Command::new("ip")
            .args([
                "netns",
                "exec",
                &lab.a.netns,
                "openssl",
                "s_client",
                "-quiet",
            ])
            .args([
                "-connect",
                "198.18.0.2:4433",
                "-servername",
                "top.example.net",
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let sent: Arc<Vec<AtomicU64>> = Arc::new((0..FLOWS).map(|_| AtomicU64::new(0)).collect());
    let stop = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    let sender = {
        let (sent, stop) = (sent.clone(), stop.clone());
        std::thread::spawn(move || send(socks, sent, stop))
    };

    // After 12 s the 10 s window holds traffic only. Each flow is listed with a positive
    // rx 10 s rate, and the flows are listed in the order of what they send (sort: 10s,
    // the fastest first): each sends twice the bytes of the one before it, all from one
    // thread, so whatever a shared host does to that thread's pace it does to every flow
    // alike. How near each rate shown comes to the rate asked is the host's, not the
    // test's. The screen is read once a second until that holds (or 20 s have gone).
    std::thread::sleep(Duration::from_secs(12));
    let (mut pane, mut problems);
    loop {
        pane = tmux.settled();
        let elapsed = started.elapsed().as_secs_f64();
        let r = rows(&pane);
        problems = Vec::new();
        let mut shown = Vec::new();
        for i in 0..FLOWS {
            match flow_row(&r, i) {
                None => problems.push(format!("flow {i} (port {}) is not listed", port(i))),
                Some(row) => {
                    let rx = rate(&row[4]);
                    if !(rx.is_finite() && rx > 0.0) {
                        problems.push(format!("flow {i}: rx 10s {:?}", row[4]));
                    }
                    let at = r.iter().position(|other| other == row).unwrap();
                    shown.push((i, at, row[4].clone()));
                }
            }
        }
        for pair in shown.windows(2) {
            let ((i, at, _), (j, at_j, _)) = (&pair[0], &pair[1]);
            if *j == i + 1 && at_j > at {
                problems.push(format!(
                    "flow {j} (row {at_j}) listed below flow {i} (row {at})"
                ));
            }
        }
        println!(
            "rx 10s shown (flow: row, rate) at {elapsed:.1} s: {}",
            shown
                .iter()
                .map(|(i, at, rx)| format!("{i}: {at}, {rx}"))
                .collect::<Vec<_>>()
                .join("; ")
        );
        if problems.is_empty() || started.elapsed() > Duration::from_secs(20) {
            break;
        }
        std::thread::sleep(Duration::from_secs(1));
    }
    assert!(problems.is_empty(), "{problems:#?}\n{pane}");
    let r = rows(&pane);
    // The fastest flow first; every flow named by the DNS answer; the TLS flow by its
    // server name, the local end (its server) on the left.
    assert!(
        r[0][2].ends_with(&format!(":{}", port(FLOWS - 1))),
        "{pane}"
    );
    assert!(
        flow_row(&r, 0).is_some_and(|row| row[2].starts_with("lab-a.example:")),
        "{pane}"
    );
    assert!(
        r.iter()
            .any(|row| row[0] == "TCP" && row[1] == "top.example.net:4433"),
        "the TLS flow by its server name:\n{pane}"
    );
    // The processes that own the local ends: this test's receiving socket, s_server's.
    let me = format!("/{}", std::process::id());
    assert!(
        flow_row(&r, 0).is_some_and(|row| row.last().is_some_and(|p| p.ends_with(&me))),
        "the receiving socket's owner ({me}):\n{pane}"
    );
    assert!(
        r.iter()
            .any(|row| row[0] == "TCP" && row.last().is_some_and(|p| p.starts_with("openssl/"))),
        "s_server's socket:\n{pane}"
    );
    println!(
        "the screen after {:.0} s:\n{pane}",
        started.elapsed().as_secs_f64()
    );

    // Another sort key: by name (S twice from 10s: 2s, then name), the slowest UDP flow
    // (lowest port) comes before the fastest.
    tmux.keys("S", false);
    tmux.keys("S", false);
    let p = tmux.wait_for(|p| p.contains("sort: name"), 5);
    let r = rows(&p);
    let at = |i: usize| {
        r.iter()
            .position(|row| row[2].ends_with(&format!(":{}", port(i))))
    };
    assert!(at(0) < at(FLOWS - 1) && at(0).is_some(), "{p}");
    assert!(!r[0][2].ends_with(&format!(":{}", port(FLOWS - 1))), "{p}");
    tmux.keys("2", false);
    tmux.wait_for(|p| p.contains("sort: 10s"), 5);

    // Aggregation: by host pair, the 16 UDP flows and the TLS one are one row; by port,
    // the UDP flows are one row for port 9000.
    tmux.keys("g", false);
    let p = tmux.wait_for(|p| p.contains("rows: pair"), 5);
    let r = rows(&p);
    assert!(flow_row(&r, 0).is_none(), "no flow rows by pair:\n{p}");
    assert!(
        r.iter()
            .any(|row| row[2] == "lab-a.example" && row[1] == "198.18.0.2"),
        "{p}"
    );
    tmux.keys("g", false);
    tmux.keys("g", false);
    let p = tmux.wait_for(|p| p.contains("rows: port"), 5);
    let r = rows(&p);
    let udp: Vec<&Vec<String>> = r.iter().filter(|row| row[0] == "UDP").collect();
    assert!(udp.iter().any(|row| row[2] == "*:9000"), "{p}");
    assert!(
        r.iter().any(|row| row[0] == "TCP" && row[2] == "*:4433"),
        "{p}"
    );
    tmux.keys("g", false);
    tmux.wait_for(|p| p.contains("rows: flow"), 5);

    // The text filter: one flow's port leaves its row alone.
    tmux.keys("/", false);
    tmux.keys(&port(3).to_string(), true);
    tmux.keys("Enter", false);
    let p = tmux.wait_for(|p| p.contains("text: 41003"), 5);
    let r = rows(&p);
    assert_eq!(r.len(), 1, "{p}");
    assert!(r[0][2].ends_with(":41003"), "{p}");
    tmux.keys("/", false);
    tmux.keys("Escape", false);
    tmux.wait_for(|p| !p.contains("text: 41003") && rows(p).len() > FLOWS, 5);

    // Pause: the numbers stay while the traffic goes on; after it, they move again.
    tmux.keys("p", false);
    let p1 = tmux.wait_for(|p| p.contains("PAUSED"), 5);
    std::thread::sleep(Duration::from_millis(2500));
    let p2 = tmux.settled();
    assert!(p2.contains("PAUSED"), "{p2}");
    assert_eq!(rows(&p1), rows(&p2), "paused numbers moved");
    tmux.keys("p", false);
    std::thread::sleep(Duration::from_millis(2500));
    let p3 = tmux.settled();
    assert!(!p3.contains("PAUSED"), "{p3}");
    assert_ne!(
        rows(&p2),
        rows(&p3),
        "the numbers did not move after the pause"
    );

    // The help, then 80x24: still the table, no line wider than the screen.
    tmux.keys("?", false);
    let p = tmux.wait_for(|p| p.contains("keys") && p.contains("quit"), 5);
    assert!(p.contains("pause the display"), "{p}");
    tmux.keys("x", false);
    tmux.run(&["resize-window", "-t", "top", "-x", "80", "-y", "24"]);
    std::thread::sleep(Duration::from_millis(1500));
    let p = tmux.wait_for(|p| rows(p).len() >= 15 && p.contains("rx 10s"), 5);
    assert!(p.lines().all(|l| l.chars().count() <= 80), "{p}");
    assert!(
        p.contains("PROTO") && p.contains("rx 10s") && p.contains("TOTAL"),
        "{p}"
    );
    assert!(rows(&p).len() >= 15, "{p}");
    assert!(p.lines().count() <= 24, "{p}");
    println!("at 80x24:\n{p}");

    // Stop the traffic; quit: the shell's prompt back, a sane terminal, every packet sent
    // in the file.
    stop.store(true, Ordering::Relaxed);
    sender.join().unwrap();
    let total: u64 = sent.iter().map(|s| s.load(Ordering::Relaxed)).sum();
    std::thread::sleep(Duration::from_millis(500));
    drop(client.0.stdin.take());
    tmux.keys("q", false);
    let p = tmux.wait_for(
        |p| p.contains("packets captured") && p.trim_end().ends_with("top$"),
        10,
    );
    assert!(p.trim_end().ends_with("top$"), "no prompt after q:\n{p}");
    tmux.type_line("clear; stty -a");
    let p = tmux.wait_for(|p| p.contains("icanon"), 5);
    assert!(sane(&p), "the terminal after q:\n{p}");
    assert_eq!(
        to_port_9000(&file),
        total,
        "packets of the 16 flows in the file"
    );

    // SIGTERM, with NO_COLOR: no colour on the screen; then the prompt and a sane terminal.
    let pidfile = dir.join("pid");
    tmux.type_line(&format!(
        "clear; NO_COLOR=1 sh -c 'echo $$ > {}; exec ip netns exec {} {} --top -i {}'",
        pidfile.display(),
        lab.b.netns,
        common::bin(),
        lab.b.iface
    ));
    tmux.wait_for(|p| p.contains("PROTO"), 10);
    let escaped = tmux.pane_escaped();
    let sgr = sgr_parameters(&escaped);
    assert!(
        sgr.contains(&7),
        "reverse video for the heading: {escaped:?}"
    );
    assert!(
        !sgr.iter()
            .any(|p| matches!(p, 30..=38 | 40..=48 | 90..=97 | 100..=107)),
        "colour despite NO_COLOR: {escaped:?}"
    );
    let pid = std::fs::read_to_string(&pidfile).unwrap();
    let ok = Command::new("kill")
        .args(["-TERM", pid.trim()])
        .status()
        .unwrap();
    assert!(ok.success());
    let p = tmux.wait_for(
        |p| p.contains("packets captured") && p.trim_end().ends_with("top$"),
        10,
    );
    assert!(
        p.trim_end().ends_with("top$"),
        "no prompt after SIGTERM:\n{p}"
    );
    tmux.type_line("clear; stty -a");
    let p = tmux.wait_for(|p| p.contains("icanon"), 5);
    assert!(sane(&p), "the terminal after SIGTERM:\n{p}");
}

#[test]
fn top_shows_a_files_flows_at_its_end() {
    zcrx_ring::require!(Need::Tool("tmux"));
    let dir = common::fresh_dir("top-file");
    let file = dir.join("three.pcap");
    // 300 UDP packets over three flows (100 each, 32 IP bytes), a flow's first and last
    // 2 s apart in the file's time.
    std::fs::write(&file, common::pcap_bytes(300, 3)).unwrap();
    let tmux = Tmux::start("file", 160, 30);
    tmux.wait_for(|p| p.contains("top$"), 5);
    tmux.type_line(&format!("{} --top -r {}", common::bin(), file.display()));
    let p = tmux.wait_for(|p| p.contains("PROTO") && rows(p).len() == 3, 10);
    assert!(p.contains("end of") && p.contains("300 packets"), "{p}");
    assert!(p.contains("rx avg") && !p.contains("rx 10s"), "{p}");
    let r = rows(&p);
    assert_eq!(r.len(), 3, "{p}");
    for row in &r {
        // 100 packets of 32 bytes from the first sender (on the left, a file having no
        // local end): 3200 bytes over 2 s.
        assert_eq!(row[0], "UDP", "{p}");
        assert!(row[1].starts_with("198.18.0.1:500"), "{p}");
        assert_eq!((row[3].as_str(), row[4].as_str()), ("0", "12.8k"), "{p}");
        assert_eq!(row[5], "3.20kB", "{p}");
    }
    tmux.keys("q", false);
    let p = tmux.wait_for(
        |p| p.contains("packets read") && p.trim_end().ends_with("top$"),
        10,
    );
    assert!(p.contains("300 packets captured"), "{p}");
}
