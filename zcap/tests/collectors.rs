//! IPFIX that every collector takes as it is: one-direction records for collectors that
//! read no reverse elements, the capture interface's index in every record, and packet
//! sampling chosen in the kernel (`--sample`) with its interval announced, which pmacct's
//! `nfacctd` (`nfacctd_renormalize`) and nfdump's `nfcapd` scale back. Real collectors
//! (Debian's), live traffic in the netns lab. Fail under CI=true instead of skipping.

use crate::common;
use crate::ipfix::{free_udp_port, udp_port_free, Nfcapd};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{finish_live, fresh_dir, start_live};
use zcrx_ring::lab::{Lab, Need};

/// pmacct's nfacctd in namespace `netns`, its print plugin writing CSV.
struct Nfacctd {
    child: Child,
    port: u16,
    csv: PathBuf,
    log: PathBuf,
}

impl Nfacctd {
    /// Starts nfacctd, aggregating per flow and direction (with the interfaces and the
    /// sampling rate it applied), renormalising sampled counts; waits until it listens.
    fn start(dir: &Path, netns: &str) -> Nfacctd {
        let port = free_udp_port(Some(netns));
        let csv = dir.join("flows.csv");
        let log = dir.join("nfacctd.log");
        let conf = dir.join("nfacctd.conf");
        std::fs::write(
            &conf,
            format!(
                "daemonize: false
nfacctd_ip: 127.0.0.1
nfacctd_port: {port}
nfacctd_renormalize: true
logfile: {log}
plugins: print[p]
aggregate[p]: peer_src_ip, src_host, dst_host, src_port, dst_port, proto, in_iface, out_iface, sampling_rate
print_output[p]: csv
print_output_file[p]: {csv}
print_output_file_append[p]: true
print_refresh_time[p]: 1
print_num_protos[p]: true
",
                log = log.display(),
                csv = csv.display()
            ),
        )
        .unwrap();
        let mut child = Command::new("ip")
            .args(["netns", "exec", netns, "nfacctd", "-f"])
            .arg(&conf)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn nfacctd");
        let deadline = Instant::now() + Duration::from_secs(10);
        while udp_port_free(Some(netns), port) {
            if let Some(status) = child.try_wait().unwrap() {
                let said = std::fs::read_to_string(&log).unwrap_or_default();
                panic!("nfacctd exited before listening: {status}: {said}");
            }
            assert!(Instant::now() < deadline, "nfacctd did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        Nfacctd {
            child,
            port,
            csv,
            log,
        }
    }

    fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Stops nfacctd (SIGINT to its core: the plugin writes what it holds) and returns its
    /// rows, summed by everything but the counters: (src, dst, sport, dport, proto,
    /// in_iface, out_iface, sampling_rate, exporter) -> (packets, bytes).
    fn rows(mut self) -> BTreeMap<Vec<String>, (u64, u64)> {
        let _ = Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
        let text = std::fs::read_to_string(&self.csv).unwrap_or_else(|e| {
            let said = std::fs::read_to_string(&self.log).unwrap_or_default();
            panic!("{}: {e}: {said}", self.csv.display())
        });
        let mut header: Vec<String> = Vec::new();
        let mut rows = BTreeMap::new();
        for line in text.lines() {
            let cells: Vec<String> = line.split(',').map(|c| c.trim().to_string()).collect();
            if cells.iter().any(|c| c == "PACKETS") {
                header = cells;
                continue;
            }
            let at = |name: &str| header.iter().position(|h| h == name);
            let (Some(p), Some(b)) = (at("PACKETS"), at("BYTES")) else {
                continue;
            };
            let key = [
                "SRC_IP",
                "DST_IP",
                "SRC_PORT",
                "DST_PORT",
                "PROTOCOL",
                "IN_IFACE",
                "OUT_IFACE",
                "SAMPLING_RATE",
                "PEER_SRC_IP",
            ]
            .iter()
            .map(|n| at(n).map_or_else(String::new, |i| cells[i].clone()))
            .collect();
            let e = rows.entry(key).or_insert((0, 0));
            e.0 += cells[p].parse::<u64>().unwrap();
            e.1 += cells[b].parse::<u64>().unwrap();
        }
        rows
    }
}

impl Drop for Nfacctd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A UDP frame from 198.18.0.`from` port `sport` to 198.18.0.`to` port `dport`, with a
/// 4-byte payload.
fn frame(from: u8, to: u8, sport: u16, dport: u16) -> Vec<u8> {
    let builder = etherparse::PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
        .ipv4([198, 18, 0, from], [198, 18, 0, to], 64)
        .udp(sport, dport);
    let mut out = Vec::with_capacity(builder.size(4));
    builder.write(&mut out, &[0; 4]).unwrap();
    out
}

/// Sends `frames` into the lab in bursts the capture keeps up with.
fn send_paced(lab: &Lab, frames: &[Vec<u8>]) {
    for burst in frames.chunks(2000) {
        common::send(lab, burst);
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The index of the lab's capture interface, as seen in its namespace.
fn ifindex(lab: &Lab) -> String {
    let iface = lab.b.iface.clone();
    let index = lab
        .b
        .run(move || nix::net::if_::if_nametoindex(iface.as_str()))
        .unwrap()
        .unwrap();
    index.to_string()
}

/// A conversation both ways, unsampled, as one-direction records: nfacctd (which reads no
/// reverse element) counts each direction's packets and bytes exactly, each with the
/// capture interface as its ingress interface, from the exporter address given.
#[test]
fn nfacctd_counts_both_directions_of_one_direction_records() {
    zcrx_ring::require!(Need::Privileges, Need::Tool("nfacctd"));
    let lab = Lab::new().unwrap();
    let dir = fresh_dir("collectors-uniflow");
    let nfacctd = Nfacctd::start(&dir, &lab.b.netns);
    let collector = nfacctd.addr();
    // The sensor's own address, on loopback in its namespace.
    let exporter = "198.18.0.200";
    let added = Command::new("ip")
        .args(["netns", "exec", &lab.b.netns, "ip", "addr", "add"])
        .args([&format!("{exporter}/32"), "dev", "lo"])
        .status()
        .unwrap();
    assert!(added.success());
    let args = [
        "-i",
        &lab.b.iface,
        "-q",
        "-w",
        "/dev/null",
        "--ipfix",
        &collector,
        "--ipfix-uniflow",
        "--ipfix-source",
        exporter,
        "udp",
    ];
    let (child, rx, startup) = start_live(&lab.b.netns, &args);
    let mut frames = Vec::new();
    for _ in 0..300 {
        frames.push(frame(1, 2, 40000, 53));
    }
    for _ in 0..200 {
        frames.push(frame(2, 1, 53, 40000));
    }
    send_paced(&lab, &frames);
    std::thread::sleep(Duration::from_millis(300));
    let (ok, _, err) = finish_live(child, rx, true);
    assert!(ok, "{startup}{err}");
    assert!(
        err.contains("1 flows exported in 1 IPFIX messages (2 records, one a direction)"),
        "{err}"
    );
    // nfacctd writes every second.
    std::thread::sleep(Duration::from_millis(1500));
    let rows = nfacctd.rows();
    let index = ifindex(&lab);
    let row = |src: &str, dst: &str, sport: &str, dport: &str| {
        let key: Vec<String> = [src, dst, sport, dport, "17", &index, "0", "0", exporter]
            .iter()
            .map(|s| s.to_string())
            .collect();
        rows.get(&key).copied()
    };
    // IP and UDP headers and 4 bytes: 32 bytes a packet.
    assert_eq!(
        row("198.18.0.1", "198.18.0.2", "40000", "53"),
        Some((300, 300 * 32)),
        "{rows:?}"
    );
    assert_eq!(
        row("198.18.0.2", "198.18.0.1", "53", "40000"),
        Some((200, 200 * 32)),
        "{rows:?}"
    );
    assert_eq!(rows.len(), 2, "{rows:?}");
}

/// One flow of M packets, one kept in N by the kernel: zcap counts about M/N, announces N,
/// and both collectors scale back to N times what zcap counted, within the sampling error
/// of M: the count kept is binomial (M, 1/N), so the scaled count's standard deviation is
/// sqrt(M (N - 1)); the test allows five of them (a false failure once in about
/// 1.7 million runs).
#[test]
fn sampled_counts_are_scaled_back_by_nfacctd_and_nfcapd_within_the_sampling_error() {
    zcrx_ring::require!(
        Need::Privileges,
        Need::Tool("nfacctd"),
        Need::Tool("nfcapd")
    );
    const M: u64 = 50_000;
    const N: u64 = 10;
    let lab = Lab::new().unwrap();
    let dir = fresh_dir("collectors-sampled");
    let nfacctd = Nfacctd::start(&dir, &lab.b.netns);
    let collector = nfacctd.addr();
    let file = dir.join("export.ipfix").display().to_string();
    let args = [
        "-i",
        &lab.b.iface,
        "-q",
        "-w",
        "/dev/null",
        "--ipfix",
        &collector,
        "--ipfix-file",
        &file,
        "--ipfix-uniflow",
        "--sample",
        "10",
        "--flows",
        "--json",
        "udp",
    ];
    let (child, rx, startup) = start_live(&lab.b.netns, &args);
    let frames: Vec<Vec<u8>> = (0..M).map(|_| frame(1, 2, 40001, 9000)).collect();
    send_paced(&lab, &frames);
    std::thread::sleep(Duration::from_millis(300));
    let (ok, out, err) = finish_live(child, rx, true);
    assert!(ok, "{startup}{err}");
    assert_eq!(
        common::count(&err, " packets dropped by kernel"),
        0,
        "{err}"
    );
    let kept = common::count(&err, " packets captured");
    // The JSON flow says it was sampled, and counts what was kept.
    let flow: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(flow["sampling"], 10, "{out}");
    assert_eq!(flow["packets"][0], kept, "{out}");
    let sigma = ((M * (N - 1)) as f64).sqrt();
    let off = |scaled: u64| (scaled as f64 - M as f64).abs();
    assert!(
        off(kept * N) < 5.0 * sigma,
        "kept {kept} of {M}: not near 1 in {N}"
    );
    std::thread::sleep(Duration::from_millis(1500));
    // nfacctd: renormalised (its sampling_rate 1 says it scaled the record).
    let rows = nfacctd.rows();
    let flow: Vec<_> = rows.iter().filter(|(k, _)| k[2] == "40001").collect();
    assert_eq!(flow.len(), 1, "{rows:?}");
    let (key, (packets, bytes)) = flow[0];
    assert_eq!(key[7], "1", "scaled: {key:?}");
    assert_eq!(*packets, kept * N, "{rows:?}");
    assert_eq!(*bytes, kept * N * 32);
    // nfcapd: the same messages (the file holds what was sent), scaled at collection.
    let nfcapd = Nfcapd::start("collectors-sampled-nfcapd", Some(&lab.b.netns));
    let messages = std::fs::read(&file).unwrap();
    let to = nfcapd.addr();
    let sent = lab
        .b
        .run(move || {
            let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
            let mut n = 0;
            for m in zcrx_flowcache::ipfix::decode::messages(&messages) {
                socket.send_to(m.unwrap(), &to).unwrap();
                n += 1;
            }
            n
        })
        .unwrap();
    assert!(sent > 0);
    std::thread::sleep(Duration::from_millis(500));
    let records = nfcapd.records();
    let scaled: u64 = records
        .iter()
        .filter(|r| r["src_port"].as_u64() == Some(40001))
        .map(|r| r["in_packets"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(scaled, kept * N, "{records:?}");
    assert!(off(scaled) < 5.0 * sigma);
    println!("sampled 1 in {N}: kept {kept} of {M}, scaled back to {scaled} (sigma {sigma:.0})");
}

/// `--sample` applies to live captures in the rings' modes; bad values are clear errors.
#[test]
fn sampling_and_the_collector_flags_refuse_what_they_cannot_do() {
    let refused = common::refused;
    refused(&["-r", "x.pcap", "--sample", "10"], "live capture");
    refused(&["-i", "lo", "--sample", "0"], "--sample");
    refused(&["-i", "lo", "--ipfix-uniflow"], "give --ipfix");
    refused(
        &[
            "-i",
            "lo",
            "--ipfix-file",
            "/dev/null",
            "--ipfix-source",
            "127.0.0.1",
        ],
        "give --ipfix",
    );
    refused(
        &[
            "-i",
            "lo",
            "--ipfix",
            "127.0.0.1:4739",
            "--ipfix-ifindex",
            "x",
        ],
        "IN[:OUT]",
    );
    refused(
        &["-i", "lo", "--flows-in-kernel", "--flows", "--sample", "4"],
        "--sample",
    );
    refused(
        &[
            "-i",
            "lo",
            "--ipfix",
            "127.0.0.1:4739",
            "--ipfix-ifindex",
            "3",
            "--sample",
            "4",
            "--ipfix-message-size",
            "1200",
        ],
        "--ipfix-message-size",
    );
}
