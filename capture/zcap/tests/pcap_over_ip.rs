//! `--pcap-over-ip`: clients that connect get a pcap stream of the capture, read here as a
//! person would (`nc ADDR PORT | tcpdump -r -`, tshark's `-i TCP@ADDR:PORT`); a late client gets the header and what
//! follows; a client that never reads is cut off and counted, and the capture goes on.

mod common;

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::live_on_b;
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
    // 168 MB in 12 bursts: more than a client may fall behind (128 MiB); the others read it.
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
