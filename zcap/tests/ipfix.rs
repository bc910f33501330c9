//! zcap's IPFIX export against real peers: nfdump's collector (`nfcapd`) must list the same
//! flows as zcap's `--flows --json` for the same captures, tshark's IPFIX dissector must
//! decode every message without a warning, and bad collector settings give clear errors.

use crate::common;

use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{finish_live, live_on_b, send, stderr, tmp, zcap};
use etherparse::PacketBuilder;
use zcrx_flowcache::ipfix;
use zcrx_flowcache::ipfix::decode::{messages, Decoder};
use zcrx_ring::frames::{UdpFlow, OTHER_MAC};
use zcrx_ring::lab::{Lab, Need};
const MAC_A: [u8; 6] = [2, 0, 0, 0, 0, 1];
const MAC_B: [u8; 6] = [2, 0, 0, 0, 0, 2];
/// 2023-11-14T22:13:20Z: the captures' time base, in ms.
const T0_MS: u64 = 1_700_000_000_000;

/// A packet of a test capture: time (ms after `T0_MS`) and frame.
type Pkt = (u64, Vec<u8>);

/// The frame of a finished builder chain with `payload` bytes (a macro: each chain's last
/// step has its own type).
macro_rules! frame {
    ($b:expr, $payload:expr $(,)?) => {{
        let b = $b;
        let body = vec![0x5a; $payload];
        let mut out = Vec::with_capacity(b.size(body.len()));
        b.write(&mut out, &body).unwrap();
        out
    }};
}

#[derive(Clone, Copy)]
enum Tcp {
    Syn,
    SynAck,
    Ack,
    PshAck,
    FinAck,
    Rst,
}

/// The TCP header of a builder chain with the flags of `f`.
fn tcp_flags(
    b: etherparse::PacketBuilderStep<etherparse::TcpHeader>,
    f: Tcp,
) -> etherparse::PacketBuilderStep<etherparse::TcpHeader> {
    match f {
        Tcp::Syn => b.syn(),
        Tcp::SynAck => b.syn().ack(1),
        Tcp::Ack => b.ack(1),
        Tcp::PshAck => b.psh().ack(1),
        Tcp::FinAck => b.fin().ack(1),
        Tcp::Rst => b.rst(),
    }
}

fn tcp4(src: [u8; 4], dst: [u8; 4], sp: u16, dp: u16, f: Tcp, payload: usize) -> Vec<u8> {
    let b = PacketBuilder::ethernet2(MAC_A, MAC_B)
        .ipv4(src, dst, 64)
        .tcp(sp, dp, 1000, 64_000);
    frame!(tcp_flags(b, f), payload)
}

fn tcp6(src: [u8; 16], dst: [u8; 16], sp: u16, dp: u16, f: Tcp, payload: usize) -> Vec<u8> {
    let b = PacketBuilder::ethernet2(MAC_A, MAC_B)
        .ipv6(src, dst, 64)
        .tcp(sp, dp, 1000, 64_000);
    frame!(tcp_flags(b, f), payload)
}

fn udp4(src: [u8; 4], dst: [u8; 4], sp: u16, dp: u16, payload: usize) -> Vec<u8> {
    frame!(
        PacketBuilder::ethernet2(MAC_A, MAC_B)
            .ipv4(src, dst, 64)
            .udp(sp, dp),
        payload,
    )
}

fn udp4_vlan(vid: u16, src: [u8; 4], dst: [u8; 4], sp: u16, dp: u16, payload: usize) -> Vec<u8> {
    frame!(
        PacketBuilder::ethernet2(MAC_A, MAC_B)
            .single_vlan(etherparse::VlanId::try_new(vid).unwrap())
            .ipv4(src, dst, 64)
            .udp(sp, dp),
        payload,
    )
}

fn udp6(src: [u8; 16], dst: [u8; 16], sp: u16, dp: u16, payload: usize) -> Vec<u8> {
    frame!(
        PacketBuilder::ethernet2(MAC_A, MAC_B)
            .ipv6(src, dst, 64)
            .udp(sp, dp),
        payload,
    )
}

fn icmp4_echo(src: [u8; 4], dst: [u8; 4], reply: bool, seq: u16) -> Vec<u8> {
    let b = PacketBuilder::ethernet2(MAC_A, MAC_B).ipv4(src, dst, 64);
    let b = if reply {
        b.icmpv4_echo_reply(7, seq)
    } else {
        b.icmpv4_echo_request(7, seq)
    };
    frame!(b, 56)
}

fn icmp6_echo(src: [u8; 16], dst: [u8; 16], seq: u16) -> Vec<u8> {
    frame!(
        PacketBuilder::ethernet2(MAC_A, MAC_B)
            .ipv6(src, dst, 64)
            .icmpv6_echo_request(7, seq),
        56,
    )
}

/// A TCP connection from `client` to `server` at `t` ms: handshake, `n` data segments each
/// way, then FIN/FIN (or RST from the server).
fn tcp4_conn(client: [u8; 4], server: [u8; 4], cport: u16, t: u64, n: u64, rst: bool) -> Vec<Pkt> {
    let c = |f, len| tcp4(client, server, cport, 80, f, len);
    let s = |f, len| tcp4(server, client, 80, cport, f, len);
    let mut p = vec![
        (t, c(Tcp::Syn, 0)),
        (t + 1, s(Tcp::SynAck, 0)),
        (t + 2, c(Tcp::Ack, 0)),
    ];
    for i in 0..n {
        p.push((t + 10 + i * 20, c(Tcp::PshAck, 100 + i as usize)));
        p.push((t + 20 + i * 20, s(Tcp::PshAck, 1000)));
    }
    let end = t + 20 + n * 20;
    if rst {
        p.push((end, s(Tcp::Rst, 0)));
    } else {
        p.push((end, c(Tcp::FinAck, 0)));
        p.push((end + 1, s(Tcp::FinAck, 0)));
        p.push((end + 2, c(Tcp::Ack, 0)));
    }
    p
}

const A6: [u8; 16] = [0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10];
const B6: [u8; 16] = [0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];

/// TCP (FIN and RST endings, clients on both sides of the canonical order), UDP
/// request/response, ICMP echo, IPv6 TCP/UDP/ICMPv6, a VLAN-tagged flow, an ARP frame.
fn mixed() -> Vec<Pkt> {
    let mut p = Vec::new();
    p.extend(tcp4_conn(
        [198, 18, 1, 10],
        [198, 18, 0, 1],
        40_000,
        0,
        3,
        false,
    ));
    p.extend(tcp4_conn(
        [198, 18, 0, 5],
        [198, 18, 1, 1],
        40_001,
        50,
        2,
        true,
    ));
    for i in 0..20u8 {
        let client = [198, 18, 2, 10 + i];
        let t = 100 + u64::from(i) * 7;
        p.push((
            t,
            udp4(client, [198, 18, 0, 53], 5000 + u16::from(i), 53, 30),
        ));
        p.push((
            t + 2,
            udp4([198, 18, 0, 53], client, 53, 5000 + u16::from(i), 120),
        ));
    }
    for s in 0..4u16 {
        let t = 300 + u64::from(s) * 100;
        p.push((t, icmp4_echo([198, 18, 3, 1], [198, 18, 0, 1], false, s)));
        p.push((t + 1, icmp4_echo([198, 18, 0, 1], [198, 18, 3, 1], true, s)));
        p.push((t + 2, icmp6_echo(A6, B6, s)));
    }
    p.push((400, tcp6(A6, B6, 50_000, 443, Tcp::Syn, 0)));
    p.push((401, tcp6(B6, A6, 443, 50_000, Tcp::SynAck, 0)));
    p.push((402, tcp6(A6, B6, 50_000, 443, Tcp::PshAck, 500)));
    p.push((403, tcp6(B6, A6, 443, 50_000, Tcp::FinAck, 0)));
    for i in 0..5u64 {
        p.push((500 + i, udp6(B6, A6, 123, 123, 48)));
        p.push((
            600 + i,
            udp4_vlan(100, [198, 18, 4, 1], [198, 18, 4, 2], 7000, 7001, 200),
        ));
    }
    let mut arp = vec![0xff; 6];
    arp.extend_from_slice(&[2, 0, 0, 0, 0, 1, 0x08, 0x06]);
    arp.resize(60, 0);
    p.push((700, arp));
    p
}

/// One UDP flow at one packet per second for `secs` seconds, both directions, and a short
/// flow beside it: with a 60 s active timeout the long one is reported several times.
fn long_lived(secs: u64) -> Vec<Pkt> {
    let mut p = Vec::new();
    for s in 0..secs {
        p.push((
            s * 1000,
            udp4(
                [198, 18, 5, 1],
                [198, 18, 5, 2],
                6000,
                6001,
                100 + s as usize % 50,
            ),
        ));
        p.push((
            s * 1000 + 500,
            udp4([198, 18, 5, 2], [198, 18, 5, 1], 6001, 6000, 60),
        ));
    }
    p.push((1000, udp4([198, 18, 5, 3], [198, 18, 5, 4], 1, 2, 10)));
    p
}

/// `n` distinct UDP flows, one packet each.
fn many_flows(n: u32) -> Vec<Pkt> {
    (0..n)
        .map(|i| {
            let src = [198, 18 + (i >> 16 & 1) as u8, (i >> 8) as u8, i as u8];
            (
                u64::from(i / 100),
                udp4(src, [198, 19, 0, 1], 1024 + (i % 7) as u16, 9, 18),
            )
        })
        .collect()
}

/// `packets` as a pcap file, in time order.
fn write_capture(path: &Path, packets: &[Pkt]) {
    let mut sorted = packets.to_vec();
    sorted.sort_by_key(|p| p.0);
    let stamped = sorted
        .iter()
        .map(|(t, fr)| (Duration::from_millis(T0_MS + t), &fr[..]));
    common::write_pcap(path, stamped);
}

/// nfdump's collector on a free loopback port, writing into its own directory.
pub(crate) struct Nfcapd {
    child: Child,
    port: u16,
    dir: PathBuf,
}

impl Nfcapd {
    /// Starts nfcapd (in namespace `netns`, if given) and waits until it is listening.
    pub(crate) fn start(name: &str, netns: Option<&str>) -> Nfcapd {
        let dir = tmp(name);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let port = free_udp_port(netns);
        let mut cmd = match netns {
            Some(ns) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", ns, "nfcapd"]);
                c
            }
            None => Command::new("nfcapd"),
        };
        let mut child = cmd
            .args([
                "-b",
                "127.0.0.1",
                "-p",
                &port.to_string(),
                "-B",
                "8000000",
                "-w",
            ])
            .arg(&dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn nfcapd");
        // Listening once its UDP port is taken.
        let deadline = Instant::now() + Duration::from_secs(10);
        while udp_port_free(netns, port) {
            if let Some(status) = child.try_wait().unwrap() {
                panic!("nfcapd exited before listening on port {port}: {status}");
            }
            assert!(Instant::now() < deadline, "nfcapd did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        Nfcapd { child, port, dir }
    }

    pub(crate) fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Stops nfcapd (SIGTERM: it writes its file) and returns what `nfdump -o json` lists.
    fn flows(self) -> Vec<NfFlow> {
        self.records().iter().map(NfFlow::from_nfdump).collect()
    }

    /// Stops nfcapd (SIGTERM: it writes its file) and returns `nfdump -o json`'s records.
    pub(crate) fn records(mut self) -> Vec<serde_json::Value> {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let status = self.child.wait().unwrap();
        assert!(status.success(), "nfcapd: {status:?}");
        let out = Command::new("nfdump")
            .env("TZ", "UTC")
            .arg("-R")
            .arg(&self.dir)
            .args(["-o", "json"])
            .output()
            .unwrap();
        assert!(out.status.success(), "nfdump: {}", stderr(&out));
        let text = String::from_utf8_lossy(&out.stdout);
        let v: serde_json::Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("nfdump -o json: {e}: {text}"));
        v.as_array().unwrap().clone()
    }
}

impl Drop for Nfcapd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn udp_port_free(netns: Option<&str>, port: u16) -> bool {
    match netns {
        None => UdpSocket::bind(("127.0.0.1", port)).is_ok(),
        Some(ns) => {
            let out = Command::new("ip")
                .args([
                    "netns",
                    "exec",
                    ns,
                    "ss",
                    "-Hlun",
                    &format!("sport = :{port}"),
                ])
                .output()
                .unwrap();
            out.stdout.is_empty()
        }
    }
}

/// A UDP port nobody has bound, below the kernel's ephemeral range: `bind(0)` and `connect`
/// never hand such a port out, so the sockets of tests running in parallel (zcap's exporter,
/// our receivers) cannot take it between this check and the collector's bind.
pub(crate) fn free_udp_port(netns: Option<&str>) -> u16 {
    static NEXT: std::sync::atomic::AtomicU16 = std::sync::atomic::AtomicU16::new(0);
    let range = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").unwrap();
    let low: u16 = range.split_whitespace().next().unwrap().parse().unwrap();
    let (first, span) = (low / 2, low / 2 - 1);
    // A different start per test process, then the next candidate per call.
    let start = (std::process::id() % u32::from(span)) as u16;
    for _ in 0..span {
        let step = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let port = first + (start.wrapping_add(step) % span);
        if udp_port_free(netns, port) {
            return port;
        }
    }
    panic!("no free UDP port in {first}..{}", first + span);
}

/// One flow record as both tools can say it: (src, dst, sport, dport or ICMP type/code,
/// proto, vlan, first ms, last ms, packets and bytes both ways, initiator's TCP flags).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct NfFlow {
    src: String,
    dst: String,
    ports: (u16, u16),
    proto: u8,
    vlan: u16,
    first_ms: u64,
    last_ms: u64,
    packets: [u64; 2],
    bytes: [u64; 2],
    tcp_flags: u8,
}

/// "2023-11-14T22:13:20.128" (UTC) as ms since the epoch.
fn utc_ms(s: &str) -> u64 {
    let n = |r: std::ops::Range<usize>| s[r].parse::<i64>().unwrap();
    let (y, m, d) = (n(0..4), n(5..7), n(8..10));
    // Days from civil (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + n(11..13) * 3600 + n(14..16) * 60 + n(17..19);
    secs as u64 * 1000 + n(20..23) as u64
}

/// nfdump's "...AP.SF" (CEUAPRSF) as bits.
fn flag_bits(s: &str) -> u8 {
    s.bytes()
        .zip([0x80u8, 0x40, 0x20, 0x10, 0x08, 0x04, 0x02, 0x01])
        .filter(|(c, _)| *c != b'.')
        .map(|(_, b)| b)
        .fold(0, |a, b| a | b)
}

impl NfFlow {
    fn from_nfdump(v: &serde_json::Value) -> NfFlow {
        let u = |k: &str| v[k].as_u64().unwrap_or(0);
        let addr = |k4: &str, k6: &str| v[k4].as_str().or(v[k6].as_str()).unwrap().to_string();
        let ports = if v.get("icmp_type").is_some() {
            (u("icmp_type") as u16, u("icmp_code") as u16)
        } else {
            (u("src_port") as u16, u("dst_port") as u16)
        };
        NfFlow {
            src: addr("src4_addr", "src6_addr"),
            dst: addr("dst4_addr", "dst6_addr"),
            ports,
            proto: u("proto") as u8,
            vlan: u("src_vlan") as u16,
            first_ms: utc_ms(v["first"].as_str().unwrap()),
            last_ms: utc_ms(v["last"].as_str().unwrap()),
            packets: [u("in_packets"), u("out_packets")],
            bytes: [u("in_bytes"), u("out_bytes")],
            tcp_flags: v["tcp_flags"].as_str().map_or(0, flag_bits),
        }
    }

    /// From a zcap `--flows --json` line (ICMP type and code are its ports).
    fn from_zcap(line: &str) -> (NfFlow, String) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let u = |k: &str| v[k].as_u64().unwrap_or(0);
        let pair = |k: &str| [v[k][0].as_u64().unwrap(), v[k][1].as_u64().unwrap()];
        let f = NfFlow {
            src: v["src"].as_str().unwrap().to_string(),
            dst: v["dst"].as_str().unwrap().to_string(),
            ports: (u("sport") as u16, u("dport") as u16),
            proto: u("proto") as u8,
            vlan: u("vlan") as u16,
            first_ms: u("first_ns") / 1_000_000,
            last_ms: u("last_ns") / 1_000_000,
            packets: pair("packets"),
            bytes: pair("bytes"),
            tcp_flags: v["tcp_flags"][0].as_u64().unwrap() as u8,
        };
        (f, v["end"].as_str().unwrap().to_string())
    }
}

/// zcap over `pcap` with `extra` flags, flows as JSON; returns the records and stderr.
fn zcap_flows(pcap: &Path, extra: &[&str]) -> (Vec<(NfFlow, String)>, String) {
    let mut args = vec!["-r", pcap.to_str().unwrap(), "--flows", "--json"];
    args.extend_from_slice(extra);
    let out = zcap(&args);
    let err = stderr(&out);
    assert!(out.status.success(), "zcap {args:?}: {err}");
    let flows = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(NfFlow::from_zcap)
        .collect();
    (flows, err)
}

/// "N flows exported in M IPFIX messages" from zcap's final counts.
fn exported(err: &str) -> (u64, u64) {
    let l = err
        .lines()
        .find(|l| l.contains("flows exported in"))
        .unwrap_or_else(|| panic!("no export count in {err}"));
    let w: Vec<&str> = l.split_whitespace().collect();
    (w[0].parse().unwrap(), w[4].parse().unwrap())
}

fn sorted(mut v: Vec<NfFlow>) -> Vec<NfFlow> {
    v.sort();
    v
}

/// Records summed per flow as zcap's `--flows` table sums them: packets and bytes added per
/// direction, the earliest first and latest last time, the initiator's flags OR-ed; sorted.
fn summed(v: Vec<NfFlow>) -> Vec<NfFlow> {
    let mut flows: std::collections::BTreeMap<_, NfFlow> = std::collections::BTreeMap::new();
    for f in v {
        let key = (f.src.clone(), f.dst.clone(), f.ports, f.proto, f.vlan);
        match flows.get_mut(&key) {
            None => {
                flows.insert(key, f);
            }
            Some(t) => {
                for d in 0..2 {
                    t.packets[d] += f.packets[d];
                    t.bytes[d] += f.bytes[d];
                }
                t.first_ms = t.first_ms.min(f.first_ms);
                t.last_ms = t.last_ms.max(f.last_ms);
                t.tcp_flags |= f.tcp_flags;
            }
        }
    }
    sorted(flows.into_values().collect())
}

/// Several captures through `zcap -r --ipfix` into nfcapd: nfdump lists the records zcap
/// exported, and summed per flow they are exactly the flows zcap's JSON lists (both
/// directions, ms times, initiator's flags); the active timeout splits the long flow into
/// reports that add up to its one line, and 5000 flows all arrive.
#[test]
fn nfcapd_lists_the_flows_zcap_lists() {
    zcrx_ring::require!(Need::Tool("nfcapd"), Need::Tool("nfdump"));
    let captures = [
        ("mixed.pcap", mixed()),
        ("long.pcap", long_lived(200)),
        ("many.pcap", many_flows(5000)),
    ];
    let collector = Nfcapd::start("nfcapd-offline", None);
    let (mut ours, mut exported_records) = (Vec::new(), 0);
    for (name, packets) in &captures {
        let path = tmp(name);
        write_capture(&path, packets);
        let (flows, err) = zcap_flows(&path, &["--ipfix", &collector.addr()]);
        exported_records += exported(&err).0;
        if *name == "long.pcap" {
            let long: Vec<_> = flows
                .iter()
                .filter(|(f, _)| f.ports == (6000, 6001))
                .collect();
            assert_eq!(long.len(), 1, "one line for the flow: {long:?}");
            assert_eq!(long[0].0.packets, [200, 200]);
            assert_eq!(long[0].1, "end_of_capture", "the last record's end");
        } else {
            assert_eq!(exported(&err).0, flows.len() as u64, "{err}");
        }
        if *name == "mixed.pcap" {
            // The client that sent the SYN is the source, whatever the address order.
            assert!(flows.iter().any(|(f, e)| f.src == "198.18.1.10"
                && f.ports == (40_000, 80)
                && f.packets == [7, 5]
                && e == "end_of_capture"));
        }
        ours.extend(flows.into_iter().map(|(f, _)| f));
    }
    let theirs = collector.flows();
    assert_eq!(theirs.len() as u64, exported_records);
    // The long flow: three active-timeout reports and the rest at the end of the capture.
    let long: Vec<_> = theirs.iter().filter(|f| f.ports == (6000, 6001)).collect();
    assert_eq!(long.len(), 4, "{long:?}");
    assert_eq!(summed(theirs), summed(ours));
}

/// Everything zcap sent to a UDP socket of ours while it exported `pcaps`, with the source
/// port (one per run: a transport session each).
fn receive_export(pcaps: &[&Path], extra: &[&str]) -> Vec<(u16, Vec<u8>)> {
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = sock.local_addr().unwrap().to_string();
    // A receive buffer for a whole export (as far as net.core.rmem_max allows), so that a
    // busy machine delaying this thread drops nothing.
    nix::sys::socket::setsockopt(&sock, nix::sys::socket::sockopt::RcvBuf, &(8 << 20)).unwrap();
    // Received while zcap sends (a socket buffer would not hold a whole export), until the
    // runs are over and nothing more comes.
    sock.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let over = done.clone();
    let receiver = std::thread::spawn(move || {
        let mut got = Vec::new();
        let mut buf = vec![0u8; 65_536];
        loop {
            match sock.recv_from(&mut buf) {
                Ok((n, from)) => got.push((from.port(), buf[..n].to_vec())),
                Err(_) if over.load(std::sync::atomic::Ordering::Acquire) => break,
                Err(_) => {}
            }
        }
        got
    });
    for pcap in pcaps {
        let mut args = vec!["-r", pcap.to_str().unwrap(), "--ipfix", &addr];
        args.extend_from_slice(extra);
        let out = zcap(&args);
        assert!(out.status.success(), "{}", stderr(&out));
    }
    done.store(true, std::sync::atomic::Ordering::Release);
    receiver.join().unwrap()
}

fn write_udp_pcap(path: &Path, port: u16, datagrams: &[(u16, Vec<u8>)]) {
    let packets: Vec<Pkt> = datagrams
        .iter()
        .enumerate()
        .map(|(i, (from, d))| {
            let mut f = Vec::new();
            PacketBuilder::ethernet2(MAC_A, MAC_B)
                .ipv4([127, 0, 0, 1], [127, 0, 0, 1], 64)
                .udp(*from, port)
                .write(&mut f, d)
                .unwrap();
            (i as u64, f)
        })
        .collect();
    write_capture(path, &packets);
}

/// tshark's IPFIX dissector reads every message zcap sends (templates resent every three
/// messages) with no expert warning or error (it checks lengths, templates and sequence
/// numbers), and finds as many records as zcap exported; our decoder agrees.
#[test]
fn tshark_decodes_every_message_without_warnings() {
    zcrx_ring::require!(Need::Tool("tshark"));
    let (mixed_path, many_path) = (tmp("tshark-mixed.pcap"), tmp("tshark-many.pcap"));
    write_capture(&mixed_path, &mixed());
    write_capture(&many_path, &many_flows(3000));
    let datagrams = receive_export(
        &[&mixed_path, &many_path],
        &["--ipfix-template-every", "3", "--ipfix-domain", "7"],
    );
    // Our decoder: one stream per zcap run (each starts at sequence 0).
    let mut records = 0u64;
    let mut expect_seq = 0u64;
    let mut dec = Decoder::new();
    for (_, d) in &datagrams {
        let m = dec.message(d).expect("decodes");
        assert_eq!(m.header.domain, 7);
        if m.header.sequence == 0 {
            expect_seq = 0;
        }
        assert_eq!(u64::from(m.header.sequence), expect_seq);
        expect_seq += m.flows.len() as u64;
        records += m.flows.len() as u64;
    }
    assert_eq!(records, 28 + 3000);
    let pcap = tmp("ipfix-messages.pcap");
    write_udp_pcap(&pcap, 4739, &datagrams);
    let tshark = |args: &[&str]| {
        let out = Command::new("tshark")
            .arg("-r")
            .arg(&pcap)
            .args(["-d", "udp.port==4739,cflow"])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "tshark: {}", stderr(&out));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let expert = tshark(&["-q", "-z", "expert"]);
    assert!(
        !expert.contains("Warns") && !expert.contains("Errors") && !expert.contains("Malformed"),
        "tshark's expert info:\n{expert}"
    );
    let fields = tshark(&[
        "-T",
        "fields",
        "-e",
        "cflow.srcaddr",
        "-e",
        "cflow.srcaddrv6",
        "-E",
        "occurrence=a",
        "-E",
        "aggregator=,",
    ]);
    let decoded: usize = fields
        .lines()
        .flat_map(|l| l.split(['\t', ',']))
        .filter(|v| !v.is_empty())
        .count();
    assert_eq!(decoded as u64, records, "records tshark decoded");
    // The timestamps and the templates: every third message carries them.
    let templates = tshark(&["-T", "fields", "-e", "cflow.template_id"]);
    let with_templates = templates.lines().filter(|l| !l.is_empty()).count();
    assert!(
        with_templates >= datagrams.len() / 3,
        "{with_templates} of {}",
        datagrams.len()
    );
}

/// Bad collector settings stop zcap at start with the reason (and the valid range); nothing
/// is read or exported.
#[test]
fn bad_export_settings_are_clear_errors() {
    let pcap = tmp("bad-settings.pcap");
    write_capture(&pcap, &mixed());
    let r = pcap.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["--ipfix", "collector"], "give HOST:PORT"),
        (&["--ipfix", ":4739"], "the host is missing"),
        (
            &["--ipfix", "127.0.0.1:port"],
            "is not a number in 1..=65535",
        ),
        (&["--ipfix", "127.0.0.1:0"], "port 0"),
        (
            &["--ipfix", "127.0.0.1:70000"],
            "is not a number in 1..=65535",
        ),
        (&["--ipfix", "no-such-host.invalid:4739"], "cannot resolve"),
        (
            &["--ipfix", "127.0.0.1:4739", "--ipfix-message-size", "100"],
            "..=65535 bytes (the templates and one record must fit",
        ),
        (
            &["--ipfix", "127.0.0.1:4739", "--ipfix-message-size", "65536"],
            "..=65535 bytes (the templates and one record must fit",
        ),
        (
            &["--ipfix-file", "/nonexistent-dir/x.ipfix"],
            "--ipfix-file /nonexistent-dir/x.ipfix",
        ),
    ];
    // Numbers out of their range are usage errors, refused as clap parses (exit 2).
    let out_of_range: &[(&[&str], &str)] = &[
        (
            &["--ipfix", "127.0.0.1:4739", "--ipfix-template-refresh", "0"],
            "seconds must be 1..=86400",
        ),
        (
            &["--ipfix", "127.0.0.1:4739", "--ipfix-template-every", "0"],
            "messages must be 1..=1000000",
        ),
        (
            &["--ipfix", "127.0.0.1:4739", "--active-timeout", "100000"],
            "0 (off) ..= 86400",
        ),
    ];
    let codes = cases.iter().map(|c| (c, 1));
    for ((args, want), code) in codes.chain(out_of_range.iter().map(|c| (c, 2))) {
        let mut a = vec!["-r", r];
        a.extend_from_slice(args);
        let out = zcap(&a);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(code), "{a:?}: {err}");
        assert!(err.contains(want), "{a:?}: {err:?} lacks {want:?}");
        assert!(!err.contains("packets captured"), "{a:?} ran: {err}");
        if a.contains(&"--ipfix-message-size") {
            let range = format!("must be {}..=65535 bytes", ipfix::min_message());
            assert!(err.contains(&range), "{a:?}: {err:?} lacks {range:?}");
        }
    }
}

/// A collector that is not there: zcap captures and writes everything, counts the messages
/// it could not send, and exits 0.
#[test]
fn a_collector_that_is_down_does_not_stop_the_capture() {
    let pcap = tmp("down.pcap");
    write_capture(&pcap, &many_flows(2000));
    let out_pcap = tmp("down-out.pcap");
    // A port nobody listens on: the kernel answers ICMP port unreachable.
    let port = free_udp_port(None);
    let out = zcap(&[
        "-r",
        pcap.to_str().unwrap(),
        "-w",
        out_pcap.to_str().unwrap(),
        "--ipfix",
        &format!("127.0.0.1:{port}"),
    ]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("2000 packets captured"), "{err}");
    assert_eq!(exported(&err).0, 2000, "{err}");
    let not_sent = err
        .lines()
        .find_map(|l| {
            l.strip_suffix(")")
                .and_then(|l| l.split_once(" IPFIX messages not sent"))
        })
        .map(|(n, why)| (n.parse::<u64>().unwrap(), why.to_string()))
        .unwrap_or_else(|| panic!("no send errors reported: {err}"));
    assert!(
        not_sent.0 > 0 && not_sent.1.contains("Connection refused"),
        "{err}"
    );
    let written = std::fs::metadata(&out_pcap).unwrap().len();
    assert!(written > 2000 * 60, "{written} bytes written");
}

/// `--ipfix-file`: the messages back to back (RFC 5655), the same records as the JSON; a
/// full disk is exit 1 with the reason, the capture itself unharmed.
#[test]
fn ipfix_file_holds_the_records_and_a_full_disk_is_an_error() {
    let pcap = tmp("file.pcap");
    write_capture(&pcap, &mixed());
    let file = tmp("flows.ipfix");
    let (flows, err) = zcap_flows(&pcap, &["--ipfix-file", file.to_str().unwrap()]);
    let bytes = std::fs::read(&file).unwrap();
    let mut dec = Decoder::new();
    let mut from_file = Vec::new();
    for m in messages(&bytes) {
        from_file.extend(dec.message(m.unwrap()).unwrap().flows);
    }
    assert_eq!(from_file.len(), flows.len(), "{err}");
    let mut a: Vec<_> = from_file
        .iter()
        .map(|f| (f.src.unwrap().to_string(), f.packets, f.octets))
        .collect();
    let mut b: Vec<_> = flows
        .iter()
        .map(|(z, _)| (z.src.clone(), z.packets, z.bytes))
        .collect();
    a.sort();
    b.sort();
    assert_eq!(a, b);
    // zcrx's communityId element: each record's is its flow's `community_id` in the JSON,
    // with the seed given.
    let out = zcap(&[
        "-r",
        pcap.to_str().unwrap(),
        "--flows",
        "--json",
        "--community-id-seed",
        "9",
        "--ipfix-file",
        file.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let json: std::collections::BTreeSet<(String, String)> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                v["src"].as_str().unwrap().to_string(),
                v["community_id"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let mut dec = Decoder::new();
    let mut from_file = std::collections::BTreeSet::new();
    for m in messages(&std::fs::read(&file).unwrap()) {
        let (m, zcrx) = dec.message_with_zcrx(m.unwrap()).unwrap();
        for (f, z) in m.flows.iter().zip(zcrx) {
            let id = z.community_id.expect("every record has its Community ID");
            from_file.insert((f.src.unwrap().to_string(), id.to_string()));
        }
    }
    assert_eq!(from_file, json);
    let out = zcap(&["-r", pcap.to_str().unwrap(), "--ipfix-file", "/dev/full"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("--ipfix-file /dev/full") && err.contains("No space left"),
        "{err}"
    );
    assert!(err.contains("87 packets captured"), "{err}");
}

/// Live, in the netns lab: 300 UDP flows, five TCP connections and one flow that lasts
/// longer than the active timeout, exported to nfcapd in the capturing namespace. nfdump lists
/// the records zcap exported, which summed per flow are the flows zcap lists; every packet
/// sent is in exactly one record; the long flow arrives as several records (active timeout)
/// whose deltas add up to what was sent, and zcap's table has it on one line.
#[test]
fn live_flows_reach_nfcapd_with_active_timeout_reports() {
    zcrx_ring::require!(Need::Privileges, Need::Tool("nfcapd"));
    let lab = Lab::new().unwrap();
    let collector = Nfcapd::start("nfcapd-live", Some(&lab.b.netns));
    let addr = collector.addr();
    let (child, rx, _) = live_on_b(
        &lab,
        &[
            "--ipfix",
            &addr,
            "--active-timeout",
            "2",
            "--flows",
            "--json",
            "-q",
            "ip and (udp or tcp)",
        ],
    );
    let (a, b) = (lab.a.ip.octets(), lab.b.ip.octets());
    // 300 UDP flows x 3 packets, one way.
    let udp: Vec<Vec<u8>> = (0..900)
        .map(|s| UdpFlow::lab(&lab.a, &lab.b, (s % 300) as u16, 9000, false).frame(s as u64, 100))
        .collect();
    send(&lab, &udp);
    // Five TCP connections, both directions (the responder's frames are sent from side a
    // too: the capture sees them arrive all the same).
    let mut tcp = Vec::new();
    for c in 0..5u16 {
        let seg = |from_client: bool, f: Tcp, len: usize| {
            let (src, dst, sp, dp) = if from_client {
                (a, b, 41_000 + c, 80)
            } else {
                (b, a, 80, 41_000 + c)
            };
            let mut fr = tcp4(src, dst, sp, dp, f, len);
            fr[..6].copy_from_slice(&OTHER_MAC);
            fr
        };
        tcp.extend([
            seg(true, Tcp::Syn, 0),
            seg(false, Tcp::SynAck, 0),
            seg(true, Tcp::PshAck, 300),
            seg(false, Tcp::PshAck, 1200),
            seg(true, Tcp::FinAck, 0),
            seg(false, Tcp::FinAck, 0),
        ]);
    }
    send(&lab, &tcp);
    // One flow for 5 s, a packet every 250 ms: longer than the 2 s active timeout.
    let long = UdpFlow::lab(&lab.a, &lab.b, 999, 9999, false);
    for s in 0..20u64 {
        send(&lab, &[long.frame(s, 200)]);
        std::thread::sleep(Duration::from_millis(250));
    }
    std::thread::sleep(Duration::from_millis(1500));
    let (ok, out, err) = finish_live(child, rx, true);
    assert!(ok, "{err}");
    std::thread::sleep(Duration::from_millis(500)); // nfcapd reads what is queued
    let ours: Vec<(NfFlow, String)> = out.lines().map(NfFlow::from_zcap).collect();
    let theirs = collector.flows();
    assert_eq!(exported(&err).0, theirs.len() as u64, "{err}");
    let long: Vec<_> = theirs.iter().filter(|f| f.ports.1 == 9999).collect();
    assert!(long.len() >= 2, "{long:?}");
    assert_eq!(long.iter().map(|f| f.packets[0]).sum::<u64>(), 20);
    assert_eq!(
        summed(theirs),
        sorted(ours.iter().map(|(f, _)| f.clone()).collect())
    );
    let sent = 900 + 30 + 20;
    let total: u64 = ours.iter().map(|(f, _)| f.packets[0] + f.packets[1]).sum();
    assert_eq!(total, sent, "{err}");
    let long: Vec<_> = ours.iter().filter(|(f, _)| f.ports.1 == 9999).collect();
    assert_eq!(long.len(), 1, "one line for the flow: {long:?}");
    assert_eq!(long.iter().map(|(f, _)| f.packets[0]).sum::<u64>(), 20);
    let tcp_flows: Vec<_> = ours.iter().filter(|(f, _)| f.proto == 6).collect();
    assert_eq!(tcp_flows.len(), 5, "{tcp_flows:?}");
    for (f, _) in tcp_flows {
        assert_eq!(f.src, lab.a.ip.to_string(), "the client is the initiator");
        assert_eq!(f.packets, [3, 3]);
        assert_eq!(f.tcp_flags, 0x02 | 0x08 | 0x10 | 0x01);
    }
}

/// `--max-flows` bounds the table: 2 000 flows through a 64-flow table are each exported
/// once, most of them ended for lack of resources (flowEndReason 5), with every packet in a
/// record; the default table ends none that way. `--flows` lists 4 x `--max-flows` flows at
/// most and says how many records it left out. Values outside 16..=2^26 are refused.
#[test]
fn max_flows_bounds_the_table_and_evicted_flows_are_exported_once() {
    let pcap = tmp("maxflows.pcap");
    write_capture(&pcap, &many_flows(2000));
    for (max, evicts) in [(Some("64"), true), (None, false)] {
        let file = tmp("maxflows.ipfix");
        let mut args = vec!["--ipfix-file", file.to_str().unwrap()];
        args.extend(max.map(|m| ["--max-flows", m]).into_iter().flatten());
        let (lines, err) = zcap_flows(&pcap, &args);
        if evicts {
            assert_eq!(lines.len(), 4 * 64);
            assert!(
                err.contains(
                    "--flows: 1744 flow records of flows beyond the table's 256 are not in it"
                ),
                "{err}"
            );
        } else {
            assert_eq!(lines.len(), 2000);
            assert!(!err.contains("--flows:"), "{err}");
        }
        let bytes = std::fs::read(&file).unwrap();
        let mut dec = Decoder::new();
        let mut flows = Vec::new();
        for m in messages(&bytes) {
            flows.extend(dec.message(m.unwrap()).unwrap().flows);
        }
        assert_eq!(flows.len(), 2000, "{max:?}: {err}");
        assert_eq!(
            flows
                .iter()
                .map(|f| f.packets[0] + f.packets[1])
                .sum::<u64>(),
            2000
        );
        let lacking = flows.iter().filter(|f| f.end_reason == 5).count();
        if evicts {
            assert!(
                lacking >= 2000 - 64,
                "{lacking} ended for lack of resources"
            );
        } else {
            assert_eq!(lacking, 0);
        }
    }
    for bad in ["15", "0", "67108865", "many"] {
        let out = zcap(&["-r", pcap.to_str().unwrap(), "--flows", "--max-flows", bad]);
        assert_eq!(out.status.code(), Some(2), "--max-flows {bad}");
        assert!(stderr(&out).contains("--max-flows"), "{}", stderr(&out));
    }
}

/// The encoder's messages of 30 records from 198.18.0.1 to 198.18.0.2, four kinds in turn:
/// names of an HTTP request and response, of a DNS query, an HTTP request with a 300-byte
/// Host (a three-byte length), and no names. Each record: 2 packets and 120 bytes, 1 and 60
/// back, source port its kind's plus 10 x its index.
fn names_messages() -> Vec<Vec<u8>> {
    use zcrx_flowcache::names::FlowNames;
    use zcrx_flowcache::{Direction, EndReason, FlowKey, FlowRecord, FlowStats};
    let fwd = Direction::Forward;
    let rev = Direction::Reverse;
    let mut http = FlowNames::new();
    http.tcp(fwd, 0, 0x02, &[], (50001, 80));
    let request = b"GET /index.html HTTP/1.1\r\nHost: www.example.com\r\n\r\n";
    http.tcp(fwd, 1, 0x18, request, (50001, 80));
    http.tcp(rev, 0, 0x12, &[], (80, 50001));
    http.tcp(rev, 1, 0x18, b"HTTP/1.1 404 Not Found\r\n\r\n", (80, 50001));
    let mut dns = FlowNames::new();
    let query = [
        0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, b'a', 2, b'n', b'l', 0, 0, 1, 0, 1,
    ];
    dns.udp(fwd, &query, (40000, 53));
    let mut long = FlowNames::new();
    let mut long_request = b"GET / HTTP/1.1\r\nHost: ".to_vec();
    long_request.extend(std::iter::repeat_n(b'h', 300));
    long_request.extend(b"\r\n\r\n");
    long.tcp(fwd, 0, 0x02, &[], (50002, 80));
    long.tcp(fwd, 1, 0x18, &long_request, (50002, 80));
    let a = std::net::Ipv4Addr::new(198, 18, 0, 1);
    let b = std::net::Ipv4Addr::new(198, 18, 0, 2);
    let mut enc = ipfix::Encoder::new(ipfix::EncoderConfig::default()).unwrap();
    let mut datagrams = Vec::new();
    let flows = [
        (6, 50001, 80, Some(&http)),
        (17, 40000, 53, Some(&dns)),
        (6, 50002, 80, Some(&long)),
        (17, 7000, 7001, None),
    ];
    for i in 0..30u16 {
        let (proto, sport, dport, names) = flows[usize::from(i) % flows.len()];
        let mut stats = FlowStats::default();
        stats.key = FlowKey::v4(a, b, proto, sport + 10 * i, dport);
        stats.packets = [2, 1];
        stats.bytes = [120, 60];
        stats.first_ns = 1_700_000_000_000_000_000;
        stats.last_ns = stats.first_ns + 1_000_000;
        let r = FlowRecord {
            stats,
            end: EndReason::Idle,
        };
        let names = names.map(FlowNames::names);
        let now = 1_700_000_000_000 + u64::from(i);
        enc.encode_with_names(&r, None, names, now, &mut |m| datagrams.push(m.to_vec()));
    }
    enc.flush(1_700_000_001_000, &mut |m| datagrams.push(m.to_vec()));
    datagrams
}

/// tshark's IPFIX dissector reads the names templates too ([`names_messages`]): no expert
/// warning or error, every record found, and IANA's HTTP elements read as encoded.
#[test]
fn tshark_decodes_the_names_templates_without_warnings() {
    zcrx_ring::require!(Need::Tool("tshark"));
    let datagrams: Vec<(u16, Vec<u8>)> = names_messages().into_iter().map(|m| (4000, m)).collect();
    let pcap = tmp("tshark-names.pcap");
    write_udp_pcap(&pcap, 4739, &datagrams);
    let tshark = |args: &[&str]| {
        let out = Command::new("tshark")
            .arg("-r")
            .arg(&pcap)
            .args(["-d", "udp.port==4739,cflow"])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "tshark: {}", stderr(&out));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let expert = tshark(&["-q", "-z", "expert"]);
    assert!(
        !expert.contains("Warns") && !expert.contains("Errors") && !expert.contains("Malformed"),
        "tshark's expert info:\n{expert}"
    );
    let fields = |field: &str| -> Vec<String> {
        tshark(&[
            "-T",
            "fields",
            "-e",
            field,
            "-E",
            "occurrence=a",
            "-E",
            "aggregator=|",
        ])
        .lines()
        .flat_map(|l| l.split('|').map(String::from).collect::<Vec<_>>())
        .filter(|v| !v.is_empty())
        .collect()
    };
    assert_eq!(fields("cflow.srcaddr").len(), 30, "records tshark decoded");
    let hosts = fields("cflow.http_request_host");
    let long_host = "h".repeat(300);
    // The four kinds in turn: 8 of the 30 are HTTP flows, 7 the long Host.
    assert_eq!(
        hosts.iter().filter(|h| *h == "www.example.com").count(),
        8,
        "{hosts:?}"
    );
    assert_eq!(hosts.iter().filter(|h| **h == long_host).count(), 7);
    let status = fields("cflow.http_statuscode");
    assert_eq!(
        status.iter().filter(|s| *s == "404").count(),
        8,
        "{status:?}"
    );
}

/// nfdump's nfcapd skips the names elements it does not know (and IANA's HTTP ones) by
/// their lengths, variable ones included: it lists the 30 records of [`names_messages`]
/// with their ports, packets and bytes both ways.
#[test]
fn nfcapd_reads_the_records_of_the_names_templates() {
    zcrx_ring::require!(Need::Tool("nfcapd"), Need::Tool("nfdump"));
    let collector = Nfcapd::start("nfcapd-names", None);
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    for m in names_messages() {
        sock.send_to(&m, collector.addr()).unwrap();
        std::thread::sleep(Duration::from_millis(2));
    }
    let flows = sorted(collector.flows());
    assert_eq!(flows.len(), 30, "{flows:?}");
    for f in &flows {
        assert_eq!(
            (f.src.as_str(), f.dst.as_str()),
            ("198.18.0.1", "198.18.0.2")
        );
        assert_eq!((f.packets, f.bytes), ([2, 1], [120, 60]), "{f:?}");
    }
    let ports: std::collections::BTreeSet<u16> = flows.iter().map(|f| f.ports.0).collect();
    assert_eq!(ports.len(), 30);
    assert!(flows
        .iter()
        .any(|f| f.ports == (40_010, 53) && f.proto == 17));
}

/// `--flows-in-kernel --ipfix`: the flows an eBPF program counted reach nfcapd as the ring's
/// do. Two collectors in b's namespace, `zcap --flows` on the ring and `zcap --flows
/// --flows-in-kernel` on b's veth at once, the same frames (TCP with FIN and RST endings,
/// UDP, ICMP, IPv6, a VLAN-tagged flow, ARP): nfdump lists the same flows from both with the
/// same packets, bytes and flags both ways (times differ: the ring's stamps and the
/// program's clock read apart), and each zcap's JSON lists what its collector got.
#[test]
fn kernel_flows_reach_nfcapd_as_the_rings_flows_do() {
    zcrx_ring::require!(Need::Privileges, Need::Tool("nfcapd"), Need::Tool("nfdump"));
    let lab = Lab::new().unwrap();
    let (ring_c, kernel_c) = (
        Nfcapd::start("nfcapd-kring", Some(&lab.b.netns)),
        Nfcapd::start("nfcapd-kkernel", Some(&lab.b.netns)),
    );
    let (ring_addr, kernel_addr) = (ring_c.addr(), kernel_c.addr());
    let (ring, ring_rx, _) = live_on_b(&lab, &["--ipfix", &ring_addr, "--flows", "--json", "-q"]);
    let (kernel, kernel_rx, _) = live_on_b(
        &lab,
        &[
            "--ipfix",
            &kernel_addr,
            "--flows-in-kernel",
            "--flows",
            "--json",
            "-q",
        ],
    );
    let frames: Vec<Vec<u8>> = mixed().into_iter().map(|(_, f)| f).collect();
    send(&lab, &frames);
    std::thread::sleep(Duration::from_millis(500));
    let (ok, ring_out, ring_err) = finish_live(ring, ring_rx, true);
    assert!(ok, "{ring_err}");
    let (ok, kernel_out, kernel_err) = finish_live(kernel, kernel_rx, true);
    assert!(ok, "{kernel_err}");
    std::thread::sleep(Duration::from_millis(500)); // nfcapd reads what is queued
    let timeless = |v: Vec<NfFlow>| -> Vec<NfFlow> {
        summed(
            v.into_iter()
                .map(|f| NfFlow {
                    first_ms: 0,
                    last_ms: 0,
                    ..f
                })
                .collect(),
        )
    };
    let from_json = |out: &str| timeless(out.lines().map(|l| NfFlow::from_zcap(l).0).collect());
    let (ring_nf, kernel_nf) = (timeless(ring_c.flows()), timeless(kernel_c.flows()));
    assert!(ring_nf.len() >= 8, "{ring_nf:?}");
    assert!(
        ring_nf.iter().any(|f| f.vlan != 0),
        "a VLAN flow: {ring_nf:?}"
    );
    assert!(
        ring_nf.iter().any(|f| f.src.contains(':')),
        "IPv6: {ring_nf:?}"
    );
    assert_eq!(kernel_nf, ring_nf, "{kernel_err}");
    assert_eq!(from_json(&kernel_out), kernel_nf);
    assert_eq!(from_json(&ring_out), ring_nf);
    assert_eq!(
        exported(&kernel_err).0,
        kernel_nf.len() as u64,
        "{kernel_err}"
    );
    eprintln!("nfcapd: {} flows, the same from both", kernel_nf.len());
}

/// `--flows-in-kernel --active-timeout`: a flow of 3 s (a packet every 150 ms) with a 1 s
/// active timeout reaches nfcapd as several records (flowEndReason active timeout, then the
/// end of the capture) whose packets and bytes add up to what was sent, and zcap's table has
/// it on one line with the same sums.
#[test]
fn kernel_flows_report_long_flows_every_active_timeout() {
    zcrx_ring::require!(Need::Privileges, Need::Tool("nfcapd"), Need::Tool("nfdump"));
    let lab = Lab::new().unwrap();
    let collector = Nfcapd::start("nfcapd-kactive", Some(&lab.b.netns));
    let addr = collector.addr();
    let (child, rx, _) = live_on_b(
        &lab,
        &[
            "--ipfix",
            &addr,
            "--flows-in-kernel",
            "--active-timeout",
            "1",
            "--flows",
            "--json",
            "-q",
        ],
    );
    let long = UdpFlow::lab(&lab.a, &lab.b, 998, 9998, false);
    let frames: Vec<Vec<u8>> = (0..20u64)
        .map(|s| long.frame(s, 100 + s as usize))
        .collect();
    // IP octets: the frame less its 14-byte Ethernet header.
    let bytes: u64 = frames.iter().map(|f| f.len() as u64 - 14).sum();
    for f in &frames {
        send(&lab, std::slice::from_ref(f));
        std::thread::sleep(Duration::from_millis(150));
    }
    let (ok, out, err) = finish_live(child, rx, true);
    assert!(ok, "{err}");
    std::thread::sleep(Duration::from_millis(500)); // nfcapd reads what is queued
    let theirs: Vec<NfFlow> = collector
        .flows()
        .into_iter()
        .filter(|f| f.ports.1 == 9998)
        .collect();
    assert!(
        theirs.len() >= 3,
        "2 reports and the rest at the end: {theirs:?}"
    );
    let sum = |v: &[NfFlow]| -> (u64, u64) {
        (
            v.iter().map(|f| f.packets[0] + f.packets[1]).sum(),
            v.iter().map(|f| f.bytes[0] + f.bytes[1]).sum(),
        )
    };
    assert_eq!(sum(&theirs), (20, bytes), "{theirs:?}");
    let ours: Vec<NfFlow> = out
        .lines()
        .map(|l| NfFlow::from_zcap(l).0)
        .filter(|f| f.ports.1 == 9998)
        .collect();
    assert_eq!(ours.len(), 1, "one line for the flow: {ours:?}");
    assert_eq!(sum(&ours), (20, bytes));
    eprintln!(
        "nfcapd: the long flow in {} records, {} packets and {bytes} bytes as sent",
        theirs.len(),
        sum(&theirs).0
    );
}
