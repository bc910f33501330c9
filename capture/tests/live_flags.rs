//! Live flags against tcpdump on the same traffic in a netns lab: -Q in|out|inout keeps the
//! same packets as tcpdump -Q; --immediate-mode delivers every packet, one at a time, while
//! the link stays otherwise idle (no block to fill or time out), and refuses what needs the
//! flow stage; -U -w - hands each packet to the pipe as it is captured. Root needed; under
//! CI=true a skip is a failure.

mod common;

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{start_live, stderr, tool_available, zcap};
use zcrx_ring::lab::{require_privileges, Lab};

/// Packets in a pcap file, as tcpdump reads them: its `-n -q` lines without time stamps.
fn lines(path: &std::path::Path) -> Vec<String> {
    let out = Command::new("tcpdump")
        .args(["-n", "-q", "-t", "-r"])
        .arg(path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(String::from)
        .collect()
}

/// Sends `n` UDP datagrams from namespace `from` to `to` with bash's /dev/udp.
fn udp_from(ns: &str, to: &str, port: u16, n: u32) {
    let script = format!("for i in $(seq {n}); do echo x > /dev/udp/{to}/{port}; done");
    let ok = Command::new("ip")
        .args(["netns", "exec", ns, "bash", "-c", &script])
        .status()
        .unwrap();
    assert!(ok.success());
}

/// Starts tcpdump in `ns` and waits for its "listening on" line.
fn start_tcpdump(ns: &str, args: &[&str]) -> std::process::Child {
    let mut child = Command::new("ip")
        .args(["netns", "exec", ns, "tcpdump", "-Z", "root"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = child.stderr.take().unwrap();
    let mut seen = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut byte = [0u8; 1];
    while !String::from_utf8_lossy(&seen).contains("listening on") {
        assert!(Instant::now() < deadline, "tcpdump did not start");
        if err.read(&mut byte).unwrap() == 0 {
            panic!("tcpdump exited: {}", String::from_utf8_lossy(&seen));
        }
        seen.push(byte[0]);
    }
    std::thread::spawn(move || {
        let mut rest = Vec::new();
        let _ = err.read_to_end(&mut rest);
    });
    child
}

fn interrupt_and_wait(child: &mut std::process::Child) {
    let _ = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    let deadline = Instant::now() + Duration::from_secs(10);
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "did not exit");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn direction_keeps_the_same_packets_as_tcpdump() {
    if !require_privileges("zcap -Q") || !tool_available("tcpdump") {
        return;
    }
    let lab = Lab::new().unwrap();
    let dir = common::tmp("direction");
    std::fs::create_dir_all(&dir).unwrap();
    let mut running = Vec::new();
    for d in ["in", "out", "inout"] {
        for (tool, mode) in [("zcap", "default"), ("zcap", "immediate"), ("tcpdump", "")] {
            let path = dir.join(format!("{tool}-{mode}-{d}.pcap"));
            let p = path.to_str().unwrap().to_string();
            let child = if tool == "zcap" {
                let mut args = vec!["-i", &lab.b.iface, "-q", "-Q", d, "-w", &p];
                if mode == "immediate" {
                    args.push("--immediate-mode");
                }
                start_live(&lab.b.netns, &args).0
            } else {
                start_tcpdump(&lab.b.netns, &["-i", &lab.b.iface, "-Q", d, "-w", &p])
            };
            running.push((child, path, d));
        }
    }
    // Outgoing from b (and b's ARP), incoming from a.
    udp_from(&lab.b.netns, &lab.a.ip.to_string(), 9999, 30);
    udp_from(&lab.a.netns, &lab.b.ip.to_string(), 9998, 20);
    // tcpdump's ring hands a block over on its 1 s timeout; zcap takes what is pending on
    // SIGINT, tcpdump does not.
    std::thread::sleep(Duration::from_millis(2500));
    for (child, _, _) in &mut running {
        interrupt_and_wait(child);
    }
    for d in ["in", "out", "inout"] {
        let of = |tool: &str, mode: &str| lines(&dir.join(format!("{tool}-{mode}-{d}.pcap")));
        let t = of("tcpdump", "");
        assert_eq!(of("zcap", "default"), t, "-Q {d}");
        assert_eq!(of("zcap", "immediate"), t, "-Q {d} --immediate-mode");
        let from_b = |l: &String| l.contains(&format!("IP {}.", lab.b.ip));
        let from_a = |l: &String| l.contains(&format!("IP {}.", lab.a.ip));
        match d {
            "in" => assert!(t.len() >= 20 && !t.iter().any(from_b), "{t:#?}"),
            "out" => assert!(t.len() >= 30 && !t.iter().any(from_a), "{t:#?}"),
            _ => assert!(
                t.iter().filter(|l| from_a(l)).count() >= 20
                    && t.iter().filter(|l| from_b(l)).count() >= 30
            ),
        }
    }
}

#[test]
fn immediate_mode_prints_each_packet_before_the_next_arrives() {
    if !require_privileges("zcap --immediate-mode") {
        return;
    }
    let lab = Lab::new().unwrap();
    // A 60 s block timeout: in the default mode nothing would show for a minute.
    let (mut child, rx, _) = start_live(
        &lab.b.netns,
        &[
            "-i",
            &lab.b.iface,
            "-n",
            "-q",
            "--immediate-mode",
            "--block-timeout",
            "60000",
            "udp",
        ],
    );
    let mut stdout = child.stdout.take().unwrap();
    let (tx, lines_rx) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for l in std::io::BufReader::new(&mut stdout)
            .lines()
            .map_while(Result::ok)
        {
            let _ = tx.send(l);
        }
    });
    for i in 0..5 {
        udp_from(&lab.a.netns, &lab.b.ip.to_string(), 7000 + i, 1);
        let line = lines_rx
            .recv_timeout(Duration::from_secs(5))
            .unwrap_or_else(|_| panic!("packet {i} was not printed while the link stayed idle"));
        assert!(
            line.contains(&format!("{}.{}: UDP", lab.b.ip, 7000 + i)),
            "{line}"
        );
    }
    interrupt_and_wait(&mut child);
    let err: Vec<String> = rx.try_iter().collect();
    assert!(err.iter().any(|l| l == "5 packets captured"), "{err:?}");
}

#[test]
fn immediate_mode_refuses_what_needs_the_flow_stage() {
    for (extra, msg) in [
        (&["--flows"][..], "--immediate-mode has no flow stage"),
        (
            &["--ipfix", "127.0.0.1:4739"],
            "--immediate-mode has no flow stage",
        ),
        (&["--shards", "2"], "--shards must be 1"),
    ] {
        let mut args = vec!["-i", "lo", "--immediate-mode"];
        args.extend(extra);
        let o = zcap(&args);
        assert_eq!(o.status.code(), Some(1), "{extra:?}");
        assert!(stderr(&o).contains(msg), "{extra:?}: {}", stderr(&o));
    }
    let o = zcap(&["-i", "lo", "-Q", "sideways"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("-Q \"sideways\": in, out or inout"),
        "{}",
        stderr(&o)
    );
}
