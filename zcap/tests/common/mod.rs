//! Helpers shared by zcap's integration tests: temporary paths, running zcap (offline, or
//! live in a lab namespace), sending lab traffic, writing capture files and reading them
//! with tcpdump, the ports zcap serves on, scraping them, certificates for their TLS, and the
//! Community ID reference.
#![allow(dead_code)] // each test file uses its own subset

use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use zcrx_ring::lab::{Lab, Side};
use zcrx_ring::TxRing;

pub const ZCAP: &str = env!("CARGO_BIN_EXE_zcap");

/// The zcap under test: `ZCAP_UNDER_TEST` (another build, to show that a test fails on it)
/// or this build's.
pub fn bin() -> String {
    std::env::var("ZCAP_UNDER_TEST").unwrap_or_else(|_| ZCAP.to_string())
}

pub fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("zcap-test-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

pub fn zcap(args: &[&str]) -> Output {
    Command::new(ZCAP).args(args).output().expect("run zcap")
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// zcap (`bin()`) run in directory `dir` with `args`.
pub fn zcap_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(bin())
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run zcap")
}

/// A pcap file (microsecond time stamps, snapshot length 262144) of `packets`: time stamp
/// (since the epoch) and frame.
pub fn write_pcap<'a>(path: &Path, packets: impl IntoIterator<Item = (Duration, &'a [u8])>) {
    let f = std::fs::File::create(path).unwrap();
    let header = pcap_file::pcap::PcapHeader {
        snaplen: 262_144,
        ..Default::default()
    };
    let mut w = pcap_file::pcap::PcapWriter::with_header(BufWriter::new(f), header).unwrap();
    for (ts, frame) in packets {
        w.write_packet(&pcap_file::pcap::PcapPacket::new(
            ts,
            frame.len() as u32,
            frame,
        ))
        .unwrap();
    }
}

/// A pcap file like [`write_pcap`]'s whose packets each say their length on the wire (more
/// than the frame where a snapshot length cut it).
pub fn write_pcap_cut<'a>(
    path: &Path,
    packets: impl IntoIterator<Item = (Duration, &'a [u8], u32)>,
) {
    let f = std::fs::File::create(path).unwrap();
    let header = pcap_file::pcap::PcapHeader {
        snaplen: 262_144,
        ..Default::default()
    };
    let mut w = pcap_file::pcap::PcapWriter::with_header(BufWriter::new(f), header).unwrap();
    for (ts, frame, wire) in packets {
        w.write_packet(&pcap_file::pcap::PcapPacket::new(ts, wire, frame))
            .unwrap();
    }
}

/// The lines `tcpdump -n -r -` prints of `file` (in `dir`) as `cat` hands it over (`cat`
/// itself, or a decompressor); tcpdump must read it whole, without error.
pub fn tcpdump_lines(dir: &Path, cat: &str, file: &str) -> Vec<String> {
    let o = Command::new("bash")
        .current_dir(dir)
        .arg("-c")
        .arg(format!("set -o pipefail; {cat} '{file}' | tcpdump -n -r -"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{cat} {file} | tcpdump: {}", stderr(&o));
    let err = stderr(&o);
    assert!(!err.contains("truncated"), "{cat} {file}: {err}");
    String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(String::from)
        .collect()
}

/// The port zcap said it serves on: the line of its standard error `err` that holds `what`
/// (`"serving PCAP-over-IP on "`, `"serving metrics on http://"`) goes on with ADDR:PORT.
pub fn served_port(err: &str, what: &str) -> u16 {
    err.lines()
        .find_map(|l| l.split_once(what))
        .and_then(|(_, rest)| {
            let addr = rest.split(['/', ' ']).next()?;
            addr.parse::<std::net::SocketAddr>().ok()
        })
        .map(|a| a.port())
        .unwrap_or_else(|| panic!("zcap did not say {what:?}: {err}"))
}

/// A TCP port of 127.0.0.1 that is free now in `side`'s namespace (bound by the system's
/// choice, then let go: no other test runs in that namespace).
pub fn free_port(side: &Side) -> u16 {
    side.run(|| std::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap()
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts zcap in namespace `ns` and waits for its "listening" line; returns zcap, the rest
/// of its standard error line by line, and the lines before "listening". `ZCAP_UNDER_TEST`
/// names another zcap binary (to show that a test fails on an older build).
pub fn start_live(ns: &str, args: &[&str]) -> (Child, std::sync::mpsc::Receiver<String>, String) {
    start_live_as(ns, &[], &bin(), args)
}

/// [`start_live`] of zcap binary `bin` started through `wrapper` (a command that ends by
/// running its arguments, e.g. `setpriv --reuid=...`).
pub fn start_live_as(
    ns: &str,
    wrapper: &[&str],
    bin: &str,
    args: &[&str],
) -> (Child, std::sync::mpsc::Receiver<String>, String) {
    let mut child = Command::new("ip")
        .args(["netns", "exec", ns])
        .args(wrapper)
        .arg(bin)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn zcap");
    let err = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut startup = String::new();
    loop {
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(l) if l.contains("listening on") => break,
            Ok(l) => {
                startup.push_str(&l);
                startup.push('\n');
            }
            Err(_) if Instant::now() > deadline => panic!("zcap did not start: {startup}"),
            Err(_) => {}
        }
    }
    (child, rx, startup)
}

/// The fields of `/proc/PID/stat` after the command's name, from the state on (state,
/// ppid, pgrp, session, tty_nr, ...); none once the process is gone.
pub fn stat_fields(pid: u32) -> Vec<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = stat.rsplit_once(')').map_or("", |(_, a)| a);
    after.split_whitespace().map(String::from).collect()
}

/// The worker of the zcap whose monitor is `pid` (privilege separation: the child that
/// started a session of its own), once it is there; `pid` itself for a zcap without one
/// (`--no-sandbox`), after a bounded wait.
pub fn worker(pid: u32) -> u32 {
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let children =
            std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
        let own_session = children
            .split_whitespace()
            .filter_map(|c| c.parse::<u32>().ok())
            .find(|c| stat_fields(*c).get(3) == Some(&c.to_string()));
        match own_session {
            Some(c) => return c,
            None if Instant::now() > deadline => return pid,
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

/// [`start_live`] in the lab's namespace b, capturing on its interface (`-i IFACE`, then
/// `args`).
pub fn live_on_b(lab: &Lab, args: &[&str]) -> (Child, std::sync::mpsc::Receiver<String>, String) {
    let mut all = vec!["-i", lab.b.iface.as_str()];
    all.extend_from_slice(args);
    start_live(&lab.b.netns, &all)
}

pub fn finish_live(
    mut child: Child,
    rx: std::sync::mpsc::Receiver<String>,
    interrupt: bool,
) -> (bool, String, String) {
    // Read stdout while zcap runs: a flow table can be larger than the pipe's buffer.
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut out = String::new();
        use std::io::Read;
        stdout.read_to_string(&mut out).unwrap();
        out
    });
    if interrupt {
        // SIGINT to the zcap process (ip netns exec execs it, so the pid is zcap's).
        let _ = Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status();
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("zcap did not exit");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = reader.join().unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let err: Vec<String> = rx.try_iter().collect();
    (
        status.success(),
        out,
        format!("{status:?}\n{}", err.join("\n")),
    )
}

pub fn send(lab: &Lab, frames: &[Vec<u8>]) {
    let iface = lab.a.iface.clone();
    let mut tx = lab
        .a
        .run(move || TxRing::builder(iface).build())
        .unwrap()
        .unwrap();
    assert_eq!(
        tx.send_batch(frames.iter().map(|f| f.as_slice())).unwrap(),
        frames.len()
    );
}

/// A UDP/IPv4 frame of flow `flow` (source port 5000 + flow), carrying `i` in its payload.
pub fn udp_frame(flow: u16, i: u32) -> Vec<u8> {
    let builder = etherparse::PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
        .ipv4([198, 18, 0, 1], [198, 18, 0, 2], 64)
        .udp(5000 + flow, 9000);
    let payload = i.to_be_bytes();
    let mut out = Vec::with_capacity(builder.size(payload.len()));
    builder.write(&mut out, &payload).unwrap();
    out
}

/// The bytes of a pcap of `n` UDP frames over `flows` flows (microsecond time stamps).
pub fn pcap_bytes(n: u32, flows: u16) -> Vec<u8> {
    let mut w = pcap_file::pcap::PcapWriter::new(Vec::new()).unwrap();
    for i in 0..n {
        let frame = udp_frame(i as u16 % flows, i);
        w.write_packet(&pcap_file::pcap::PcapPacket::new(
            Duration::new(1_700_000_000 + u64::from(i / 100), (i % 100) * 1000),
            frame.len() as u32,
            &frame,
        ))
        .unwrap();
    }
    w.into_writer()
}

/// A fresh, empty directory for one test.
pub fn fresh_dir(name: &str) -> PathBuf {
    let d = tmp(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Asserts that zcap refuses `args` and says `says` on standard error.
pub fn refused(args: &[&str], says: &str) {
    let o = Command::new(bin()).args(args).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{args:?}");
    assert!(err.contains(says), "{args:?}: {err}");
}

/// The number on zcap's line (of standard error `err`) ending in `what`
/// (" packets captured", ...).
pub fn count(err: &str, what: &str) -> u64 {
    err.lines()
        .find_map(|l| l.strip_suffix(what))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {what:?} line: {err}"))
}

/// A tmpfs mounted at a directory, unmounted when dropped (however the test ends).
pub struct Tmpfs(pub PathBuf);

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// Mounts a tmpfs of `size` (as mount's `size=` takes it: "64k", "900k") at `dir`, created
/// if need be (needs root).
pub fn small_tmpfs(dir: &std::path::Path, size: &str) -> Tmpfs {
    std::fs::create_dir_all(dir).unwrap();
    let m = Command::new("mount")
        .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
        .arg(dir)
        .status()
        .unwrap();
    assert!(m.success(), "mount a {size} tmpfs at {}", dir.display());
    Tmpfs(dir.to_path_buf())
}

/// tshark's `-T fields` of `input` (`|` between fields), one row a packet, with `options`
/// (`-o` preferences) before the fields `-e`; fails the test if tshark fails.
pub fn tshark_fields(input: &Path, options: &[&str], fields: &[&str]) -> Vec<Vec<String>> {
    let mut cmd = Command::new("tshark");
    cmd.arg("-r").arg(input).args(options);
    cmd.args(["-T", "fields", "-E", "separator=|"]);
    for f in fields {
        cmd.args(["-e", f]);
    }
    let out = cmd.output().expect("run tshark");
    assert!(
        out.status.success(),
        "tshark: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.split('|').map(str::to_string).collect())
        .collect()
}

/// `zcap -r input --json`'s objects, one a packet; fails the test if zcap fails.
pub fn zcap_json(input: &Path) -> Vec<serde_json::Value> {
    let o = zcap(&["-r", input.to_str().unwrap(), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// `GET path` at 127.0.0.1:`port` in `side`'s namespace (HTTP/1.0: the server closes);
/// the status line and headers, and the body.
pub fn http_get(
    side: &Side,
    port: u16,
    path: &str,
    accept: &str,
) -> std::io::Result<(String, String)> {
    let mut s = side.run(move || std::net::TcpStream::connect(("127.0.0.1", port)))??;
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    write!(
        s,
        "GET {path} HTTP/1.0\r\nHost: x\r\nAccept: {accept}\r\n\r\n"
    )?;
    let mut all = String::new();
    s.read_to_string(&mut all)?;
    let (head, body) = all.split_once("\r\n\r\n").unwrap_or((&all, ""));
    Ok((head.to_string(), body.to_string()))
}

/// The value of sample `name` (with its labels, if any: `name{reason="x"}`) in a scrape,
/// if there is one.
pub fn metric(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
}

/// A throwaway PKI made with the `openssl` command in a directory: a CA (`ca.pem`), a
/// server certificate of it for 127.0.0.1 and localhost (`server.pem`, `server.key`), a
/// client certificate of it (`client.pem`, `client.key`), and a client certificate of
/// another CA (`stranger.pem`, `stranger.key`). EC P-256 keys in PKCS#8, a day's validity.
pub struct Pki {
    pub dir: PathBuf,
}

impl Pki {
    pub fn new(dir: &Path) -> Pki {
        std::fs::create_dir_all(dir).unwrap();
        let pki = Pki {
            dir: dir.to_path_buf(),
        };
        pki.ca("ca");
        pki.ca("other-ca");
        pki.leaf(
            "server",
            "ca",
            "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth",
        );
        pki.leaf("client", "ca", "extendedKeyUsage=clientAuth");
        pki.leaf("stranger", "other-ca", "extendedKeyUsage=clientAuth");
        pki
    }

    /// The path of one of its files.
    pub fn file(&self, name: &str) -> String {
        self.dir.join(name).to_str().unwrap().to_string()
    }

    fn openssl(&self, args: &[&str]) {
        let o = Command::new("openssl")
            .current_dir(&self.dir)
            .args(args)
            .output()
            .expect("run openssl");
        assert!(o.status.success(), "openssl {args:?}: {}", stderr(&o));
    }

    fn ca(&self, name: &str) {
        let (key, pem, subject) = (
            format!("{name}.key"),
            format!("{name}.pem"),
            format!("/CN=zcap test {name}"),
        );
        self.openssl(&[
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-keyout",
            &key,
            "-out",
            &pem,
            "-days",
            "1",
            "-subj",
            &subject,
        ]);
    }

    fn leaf(&self, name: &str, ca: &str, extensions: &str) {
        let (key, csr, pem, ext) = (
            format!("{name}.key"),
            format!("{name}.csr"),
            format!("{name}.pem"),
            format!("{name}.ext"),
        );
        std::fs::write(
            self.dir.join(&ext),
            format!("basicConstraints=CA:FALSE\n{extensions}\n"),
        )
        .unwrap();
        self.openssl(&[
            "req",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-keyout",
            &key,
            "-out",
            &csr,
            "-subj",
            &format!("/CN=zcap test {name}"),
        ]);
        // Serials unique among the certificates a test process makes.
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let serial = (u64::from(std::process::id()) << 16 | n).to_string();
        self.openssl(&[
            "x509",
            "-req",
            "-in",
            &csr,
            "-CA",
            &format!("{ca}.pem"),
            "-CAkey",
            &format!("{ca}.key"),
            "-set_serial",
            &serial,
            "-days",
            "1",
            "-extfile",
            &ext,
            "-out",
            &pem,
        ]);
    }
}

/// What a process holds: threads, open descriptors, resident memory (KiB), from /proc.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub threads: u64,
    pub fds: u64,
    pub rss_kib: u64,
}

impl Usage {
    /// Process `pid`'s now (`None` once it is gone).
    pub fn of(pid: u32) -> Option<Usage> {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        let field = |name: &str| -> Option<u64> {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))?
                .split_whitespace()
                .next()?
                .parse()
                .ok()
        };
        let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?.count() as u64;
        Some(Usage {
            threads: field("Threads:")?,
            fds,
            rss_kib: field("VmRSS:")?,
        })
    }

    /// The larger of each.
    pub fn max(self, other: Usage) -> Usage {
        Usage {
            threads: self.threads.max(other.threads),
            fds: self.fds.max(other.fds),
            rss_kib: self.rss_kib.max(other.rss_kib),
        }
    }
}

/// The Community ID reference's (the `communityid` Python package, through
/// flowcache/tests/community_id.py) ID of each (seed, `--flows --json` flow object), in
/// order; `None` when python3 or the package is missing and CI is not set (under CI=true a
/// missing oracle fails `test`).
pub fn reference_community_ids(
    test: &str,
    flows: &[(u16, &serde_json::Value)],
) -> Option<Vec<String>> {
    if !zcrx_ring::lab::require_python(test, &["communityid"]) {
        return None;
    }
    let lines: String = flows
        .iter()
        .map(|(seed, f)| {
            format!(
                "{seed} {} {} {} {} {}\n",
                f["proto"],
                f["src"].as_str().unwrap(),
                f["dst"].as_str().unwrap(),
                f["sport"],
                f["dport"]
            )
        })
        .collect();
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../flowcache/tests/community_id.py"
    );
    let ids = zcrx_ring::lab::oracle_lines("python3", &[script], lines);
    assert_eq!(ids.len(), flows.len());
    Some(ids)
}

/// What `tool -# FLAGS -r path` prints (TZ=UTC), a string a packet: each numbered line with
/// the lines after it (`-v`'s sections, the dumps). Without `-n`, tcpdump runs in a network
/// namespace of its own (`unshare -n`): its name lookups then fail at once and send nothing.
pub fn numbered_packets(tool: &str, path: &Path, flags: &[&str]) -> Vec<String> {
    let mut cmd = if tool == "tcpdump" && !flags.contains(&"-n") {
        let mut c = Command::new("unshare");
        c.args(["-n", "tcpdump"]);
        c
    } else {
        Command::new(tool)
    };
    let out = cmd
        .env("TZ", "UTC")
        .arg("-#")
        .args(flags)
        .arg("-r")
        .arg(path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{tool} {flags:?}: {}", stderr(&out));
    let mut v: Vec<String> = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let numbered = line.get(5..7) == Some("  ")
            && line
                .get(..5)
                .is_some_and(|n| n.trim().parse::<u32>().is_ok());
        match v.last_mut() {
            Some(last) if !numbered => {
                last.push('\n');
                last.push_str(line);
            }
            _ => v.push(line.to_string()),
        }
    }
    v
}
