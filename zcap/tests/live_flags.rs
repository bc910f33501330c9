//! Live flags against tcpdump on the same traffic in a netns lab: -Q in|out|inout keeps the
//! same packets as tcpdump -Q; --immediate-mode delivers every packet, one at a time, while
//! the link stays otherwise idle (no block to fill or time out), and refuses what needs the
//! flow stage; -U -w - hands each packet to the pipe as it is captured. Root needed; under
//! CI=true a skip is a failure.

use crate::common;

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{live_on_b, start_live, stderr, zcap};
use zcrx_ring::lab::{Lab, Need};

/// Lines tcpdump prints for a capture file, read in namespace `ns` (so that it names the
/// interfaces of that namespace), without time stamps.
fn lines_in(ns: &str, path: &std::path::Path, flags: &[&str]) -> Vec<String> {
    let out = Command::new("ip")
        .args(["netns", "exec", ns, "tcpdump", "-n", "-q", "-t"])
        .args(flags)
        .arg("-r")
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
    zcrx_ring::require!(Need::Privileges, Need::Tool("tcpdump"));
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
        let of = |tool: &str, mode: &str| {
            lines_in(
                &lab.b.netns,
                &dir.join(format!("{tool}-{mode}-{d}.pcap")),
                &[],
            )
        };
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
    zcrx_ring::require!();
    let lab = Lab::new().unwrap();
    // A 60 s block timeout: in the default mode nothing would show for a minute.
    let (mut child, rx, _) = live_on_b(
        &lab,
        &[
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

/// `--immediate-mode -U -w -`: each pcap record reaches the pipe before the next packet is
/// sent (the records of one ring batch leave in one write), and `--handler-latency` reports
/// every packet.
#[test]
fn immediate_mode_packet_buffered_pcap_leaves_before_the_next_packet() {
    zcrx_ring::require!();
    let lab = Lab::new().unwrap();
    let (mut child, rx, _) = live_on_b(
        &lab,
        &[
            "--immediate-mode",
            "--handler-latency",
            "-U",
            "-w",
            "-",
            "udp",
        ],
    );
    let mut stdout = child.stdout.take().unwrap();
    let (tx, recs) = std::sync::mpsc::channel::<Vec<u8>>();
    std::thread::spawn(move || {
        use std::io::Read;
        let mut header = [0u8; 24];
        if stdout.read_exact(&mut header).is_err() {
            return;
        }
        let mut rec = [0u8; 16];
        while stdout.read_exact(&mut rec).is_ok() {
            let caplen = u32::from_le_bytes(rec[8..12].try_into().unwrap()) as usize;
            let mut data = vec![0u8; caplen];
            if stdout.read_exact(&mut data).is_err() {
                return;
            }
            let _ = tx.send(data);
        }
    });
    for i in 0..5u16 {
        udp_from(&lab.a.netns, &lab.b.ip.to_string(), 7100 + i, 1);
        let data = recs
            .recv_timeout(Duration::from_secs(5))
            .unwrap_or_else(|_| panic!("record {i} did not reach the pipe while the link idled"));
        // Ethernet + IPv4 (no options) + UDP: the destination port at 36..38.
        assert_eq!(u16::from_be_bytes([data[36], data[37]]), 7100 + i);
    }
    interrupt_and_wait(&mut child);
    let err: Vec<String> = rx.try_iter().collect();
    let line = err
        .iter()
        .find(|l| l.starts_with("handler latency: p50 "))
        .unwrap_or_else(|| panic!("no handler latency line: {err:?}"));
    assert!(line.ends_with("(5 packets)"), "{line}");
    // A wake-up takes time: a median of 0.0 would be a histogram that clamps its samples.
    let p50: f64 = line["handler latency: p50 ".len()..]
        .split(' ')
        .next()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    assert!(p50 > 0.0, "{line}");
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
    let o = zcap(&["-i", "lo", "--handler-latency"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("--handler-latency measures live --immediate-mode captures only"),
        "{}",
        stderr(&o)
    );
    let o = zcap(&["-i", "lo", "-Q", "sideways"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("-Q \"sideways\": in, out or inout"),
        "{}",
        stderr(&o)
    );
}

/// (scheduling policy, real-time priority) of every thread of `pid`, from /proc.
/// zcap with `args` fails and says `msg`.
fn refused(args: &[&str], msg: &str) {
    let o = zcap(args);
    assert!(!o.status.success(), "{args:?}");
    assert!(stderr(&o).contains(msg), "{args:?}: {}", stderr(&o));
}

/// zcap with `args`, run as nobody (no capabilities), exits 1 and says `msg`.
fn refused_as_nobody(args: &[&str], msg: &str) {
    let o = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(common::ZCAP)
        .args(args)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains(msg), "{}", stderr(&o));
}

fn thread_policies(pid: u32) -> Vec<(u32, u32)> {
    let mut v = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).unwrap() {
        // A thread that ended between the listing and the read is skipped.
        let Ok(stat) = std::fs::read_to_string(task.unwrap().path().join("stat")) else {
            continue;
        };
        // Fields after the command's closing parenthesis, from field 3 (state) on:
        // rt_priority is field 40, policy field 41 (proc(5)).
        let f: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
        v.push((f[41 - 3].parse().unwrap(), f[40 - 3].parse().unwrap()));
    }
    v
}

/// `--rt-priority PRIO`: every zcap thread (the default mode's per-shard threads too) runs
/// under SCHED_FIFO (policy 1) at PRIO and captures as before; refused offline, out of
/// range, and without the privilege, with the reason.
#[test]
fn rt_priority_puts_every_thread_under_sched_fifo() {
    for (args, msg) in [
        (
            &["-r", "/dev/null", "--rt-priority", "1"][..],
            "applies to live captures",
        ),
        (&["-i", "lo", "--rt-priority", "0"][..], "not in 1..=99"),
        (&["-i", "lo", "--rt-priority", "100"][..], "not in 1..=99"),
    ] {
        refused(args, msg);
    }
    zcrx_ring::require!();
    // Without CAP_SYS_NICE (nobody, RLIMIT_RTPRIO 0): the reason, exit 1, before capturing.
    refused_as_nobody(
        &["-i", "lo", "--rt-priority", "5"],
        "--rt-priority 5: sched_setscheduler(SCHED_FIFO): Operation not permitted",
    );
    let lab = Lab::new().unwrap();
    // Immediate mode runs on the main thread; two shards start a thread each.
    for (mode, prio, least) in [
        (&["--immediate-mode"][..], 7, 1),
        (&["--shards", "2"][..], 3, 3),
    ] {
        let prio_arg = prio.to_string();
        let mut args = vec!["-i", &lab.b.iface, "-q", "--rt-priority", &prio_arg];
        args.extend_from_slice(mode);
        args.extend(["-w", "/dev/null", "udp"]);
        let (mut child, rx, _) = start_live(&lab.b.netns, &args);
        // zcap says "listening" once its rings are open, before the shard threads start:
        // wait (a bounded while) for them to appear.
        let deadline = Instant::now() + Duration::from_secs(5);
        let worker = common::worker(child.id());
        let mut threads = thread_policies(worker);
        while threads.len() < least && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
            threads = thread_policies(worker);
        }
        assert!(threads.len() >= least, "{mode:?}: {threads:?}");
        assert!(
            threads.iter().all(|&t| t == (1, prio)),
            "{mode:?}: {threads:?}"
        );
        udp_from(&lab.a.netns, &lab.b.ip.to_string(), 7100, 3);
        std::thread::sleep(Duration::from_millis(300));
        interrupt_and_wait(&mut child);
        let err: Vec<String> = rx.try_iter().collect();
        assert!(
            err.iter().any(|l| l == "3 packets captured"),
            "{mode:?}: {err:?}"
        );
    }
}

/// The machine's PM QoS CPU latency target, µs (reading /dev/cpu_dma_latency gives it).
fn cpu_latency_target() -> i32 {
    let b = std::fs::read("/dev/cpu_dma_latency").unwrap();
    i32::from_ne_bytes(b[..4].try_into().unwrap())
}

/// `--cpu-dma-latency US`: while zcap captures, the machine's CPU latency target is US; once
/// zcap exits, the request is gone. Refused offline, out of range, and without root, with
/// the reason.
#[test]
fn cpu_dma_latency_holds_the_request_while_zcap_runs() {
    for (args, msg) in [
        (
            &["-r", "/dev/null", "--cpu-dma-latency", "0"][..],
            "applies to live captures",
        ),
        (
            &["-i", "lo", "--cpu-dma-latency", "2000000001"][..],
            "not in 0..=2000000000",
        ),
    ] {
        refused(args, msg);
    }
    zcrx_ring::require!();
    refused_as_nobody(
        &["-i", "lo", "--cpu-dma-latency", "0"],
        "--cpu-dma-latency 0: /dev/cpu_dma_latency: Permission denied",
    );
    let before = cpu_latency_target();
    assert!(
        before > 0,
        "another process holds a CPU latency request of {before} µs"
    );
    let lab = Lab::new().unwrap();
    let args = [
        "-i",
        &lab.b.iface,
        "-q",
        "--immediate-mode",
        "--cpu-dma-latency",
        "0",
        "-w",
        "/dev/null",
        "udp",
    ];
    let (mut child, rx, _) = start_live(&lab.b.netns, &args);
    assert_eq!(cpu_latency_target(), 0);
    udp_from(&lab.a.netns, &lab.b.ip.to_string(), 7200, 3);
    std::thread::sleep(Duration::from_millis(300));
    interrupt_and_wait(&mut child);
    let err: Vec<String> = rx.try_iter().collect();
    assert!(err.iter().any(|l| l == "3 packets captured"), "{err:?}");
    assert_eq!(cpu_latency_target(), before);
}

/// Eight frames from a to b over four UDP flows (destination ports `port`..`port + 3`),
/// the odd flows VLAN-tagged with TCI `tci + flow`; frame `s` is `size.0 + s * size.1`
/// bytes.
fn half_tagged(lab: &Lab, port: u16, tci: u16, size: (usize, usize)) -> Vec<Vec<u8>> {
    let flows: Vec<zcrx_ring::frames::UdpFlow> = (0..4u16)
        .map(|i| {
            let mut f = zcrx_ring::frames::UdpFlow::lab(&lab.a, &lab.b, i, port + i, false);
            if i % 2 == 1 {
                f.vlan = Some(tci + i);
            }
            f
        })
        .collect();
    (0..8u64)
        .map(|s| flows[s as usize % 4].frame(s, size.0 + s as usize * size.1))
        .collect()
}

#[test]
fn live_lines_with_link_header_and_dumps_match_tcpdump_with_vlan_tags_put_back() {
    zcrx_ring::require!(Need::Privileges, Need::Tool("tcpdump"));
    let lab = Lab::new().unwrap();
    let frames = half_tagged(&lab, 9000, (5 << 13) | 200, (90, 10));
    let flags = ["-n", "-q", "-t", "-e", "-v", "-XX", "-c", "8", "udp"];
    let (zc, zrx, _) = start_live(&lab.b.netns, &[&["-i", &lab.b.iface][..], &flags].concat());
    let mut tcpdump = Command::new("ip")
        .args(["netns", "exec", &lab.b.netns, "tcpdump", "-i", &lab.b.iface])
        .args(flags)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for tcpdump's "listening on".
    let mut err = tcpdump.stderr.take().unwrap();
    let mut seen = Vec::new();
    let mut byte = [0u8; 1];
    while !String::from_utf8_lossy(&seen).contains("listening on") {
        assert_ne!(err.read(&mut byte).unwrap(), 0, "tcpdump exited");
        seen.push(byte[0]);
    }
    common::send(&lab, &frames);
    let (ok, zout, zerr) = common::finish_live(zc, zrx, false);
    assert!(ok, "{zerr}");
    let mut tout = String::new();
    tcpdump
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut tout)
        .unwrap();
    let _ = tcpdump.wait();
    assert_eq!(
        zout.lines().count(),
        tout.lines().count(),
        "{zout}\n---\n{tout}"
    );
    assert_eq!(zout, tout);
    assert!(zout.contains("802.1Q, length"), "tags are shown: {zout}");
}

/// Runs `tmux ARGS` and returns its stdout.
fn tmux(args: &[&str]) -> String {
    let o = Command::new("tmux").args(args).output().unwrap();
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn the_status_line_and_the_final_counts_in_a_real_terminal() {
    zcrx_ring::require!(Need::Privileges, Need::Tool("tmux"));
    let lab = Lab::new().unwrap();
    let session = format!("zcap-status-{}", std::process::id());
    let cmd = format!(
        "ip netns exec {} {} -i {} -w /dev/null; sleep 30",
        lab.b.netns,
        common::ZCAP,
        lab.b.iface
    );
    tmux(&[
        "new-session",
        "-d",
        "-s",
        &session,
        "-x",
        "160",
        "-y",
        "24",
        &cmd,
    ]);
    struct Kill(String);
    impl Drop for Kill {
        fn drop(&mut self) {
            let _ = Command::new("tmux")
                .args(["kill-session", "-t", &self.0])
                .status();
        }
    }
    let _kill = Kill(session.clone());
    let pane = || tmux(&["capture-pane", "-p", "-t", &session]);
    let wait_for = |what: &dyn Fn(&str) -> bool, secs: u64| -> String {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            let p = pane();
            if what(&p) || Instant::now() > deadline {
                return p;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    let p = wait_for(&|p| p.contains("listening on"), 10);
    assert!(p.contains("listening on"), "{p}");
    // Traffic for about three seconds: the status line refreshes every second.
    let flow = zcrx_ring::frames::UdpFlow::lab(&lab.a, &lab.b, 1, 9000, false);
    let frames: Vec<Vec<u8>> = (0..500).map(|s| flow.frame(s, 100)).collect();
    let mut sent = 0;
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(3) {
        common::send(&lab, &frames);
        sent += frames.len();
        std::thread::sleep(Duration::from_millis(200));
    }
    let p = wait_for(&|p| p.contains("captured") && p.contains("pps"), 5);
    let status = p
        .lines()
        .find(|l| l.contains("pps") && l.contains("Mbit/s"))
        .unwrap_or_else(|| panic!("no status line in the pane:\n{p}"));
    for word in ["flows", "drops", "captured"] {
        assert!(status.contains(word), "{status}");
    }
    // Ctrl-C as a person would type it.
    tmux(&["send-keys", "-t", &session, "C-c"]);
    let p = wait_for(&|p| p.contains("packets dropped by kernel"), 10);
    let count = |what: &str| -> u64 {
        p.lines()
            .find_map(|l| {
                l.trim()
                    .strip_suffix(what)
                    .and_then(|n| n.trim().parse().ok())
            })
            .unwrap_or_else(|| panic!("no \"{what}\" in the pane:\n{p}"))
    };
    assert_eq!(count(" packets captured"), sent as u64, "{p}");
    assert_eq!(count(" packets received by filter"), sent as u64, "{p}");
    assert_eq!(count(" packets dropped by kernel"), 0, "{p}");
}

#[test]
fn two_shards_write_one_file_in_time_stamp_order() {
    zcrx_ring::require!();
    let lab = Lab::new().unwrap();
    let path = common::tmp("shards-ordered.pcap");
    let p = path.to_str().unwrap();
    let (child, rx, _) = live_on_b(&lab, &["-q", "--shards", "2", "-w", p]);
    // 256 flows, so the fanout hash spreads them over both shards; 200 000 frames in bursts.
    let frames: Vec<Vec<u8>> = (0..200_000u64)
        .map(|s| {
            zcrx_ring::frames::UdpFlow::lab(&lab.a, &lab.b, (s % 256) as u16, 9000, false)
                .frame(s, 80)
        })
        .collect();
    // Paced: both shards' blocks fill and retire while the other's do (a single burst can
    // land in two blocks that are simply written one after the other).
    let iface = lab.a.iface.clone();
    let mut tx = lab
        .a
        .run(move || zcrx_ring::TxRing::builder(iface).build())
        .unwrap()
        .unwrap();
    for chunk in frames.chunks(500) {
        tx.send_batch(chunk.iter().map(|f| f.as_slice())).unwrap();
        std::thread::sleep(Duration::from_millis(1));
    }
    std::thread::sleep(Duration::from_millis(500));
    let (ok, _, err) = common::finish_live(child, rx, true);
    assert!(ok, "{err}");
    assert!(!err.contains("out of time-stamp order"), "{err}");
    let data = std::fs::read(&path).unwrap();
    let mut r = pcap_file::pcap::PcapReader::new(&data[..]).unwrap();
    let (mut n, mut back, mut last) = (0u64, 0u64, Duration::ZERO);
    while let Some(pkt) = r.next_packet() {
        let pkt = pkt.unwrap();
        if pkt.timestamp < last {
            back += 1;
        }
        last = last.max(pkt.timestamp);
        n += 1;
    }
    let dropped: u64 = err
        .lines()
        .find_map(|l| l.trim().strip_suffix(" packets dropped by kernel"))
        .and_then(|v| v.parse().ok())
        .unwrap();
    assert_eq!(n + dropped, 200_000, "{err}");
    assert_eq!(back, 0, "{back} of {n} records go back in time");
}

#[test]
fn any_captures_every_interface_with_direction_as_tcpdump_and_tshark_show_it() {
    zcrx_ring::require!(
        Need::Privileges,
        Need::Tool("tcpdump"),
        Need::Tool("tshark")
    );
    let lab = Lab::new().unwrap();
    let dir = common::tmp("any");
    std::fs::create_dir_all(&dir).unwrap();
    let (zp, zn, tp) = (dir.join("z.pcap"), dir.join("z.pcapng"), dir.join("t.pcap"));
    let (z1, rx1, _) = start_live(
        &lab.b.netns,
        &["-i", "any", "-q", "-w", zp.to_str().unwrap()],
    );
    let (z2, rx2, _) = start_live(
        &lab.b.netns,
        &["-i", "any", "-q", "--pcapng", "-w", zn.to_str().unwrap()],
    );
    let mut t = start_tcpdump(&lab.b.netns, &["-i", "any", "-w", tp.to_str().unwrap()]);
    // In over the veth (and the ICMP errors out), and both ways over loopback.
    udp_from(&lab.a.netns, &lab.b.ip.to_string(), 9998, 5);
    udp_from(&lab.b.netns, "127.0.0.1", 7777, 3);
    std::thread::sleep(Duration::from_millis(2500));
    for (c, rx) in [(z1, rx1), (z2, rx2)] {
        let (ok, _, err) = common::finish_live(c, rx, true);
        assert!(ok, "{err}");
    }
    interrupt_and_wait(&mut t);
    let tl = lines_in(&lab.b.netns, &tp, &["-e"]);
    assert!(tl.len() >= 16, "{tl:#?}");
    assert_eq!(
        lines_in(&lab.b.netns, &zp, &["-e"]),
        tl,
        "pcap (LINUX_SLL2)"
    );
    assert_eq!(lines_in(&lab.b.netns, &zn, &["-e"]), tl, "pcapng");
    let veth = &lab.b.iface;
    assert!(tl.iter().any(|l| l.starts_with(&format!("{veth} In "))));
    assert!(tl.iter().any(|l| l.starts_with(&format!("{veth} Out "))));
    assert!(tl.iter().any(|l| l.starts_with("lo    In ")));
    // pcapng: one interface description block per interface, each packet on its interface
    // with its direction in the flags, as tshark reads them.
    let out = Command::new("tshark")
        .arg("-r")
        .arg(&zn)
        .args([
            "-T",
            "fields",
            "-e",
            "frame.interface_name",
            "-e",
            "frame.packet_flags_direction",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let rows: Vec<Vec<String>> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.split('\t').map(String::from).collect())
        .collect();
    assert_eq!(rows.len(), tl.len());
    for (row, line) in rows.iter().zip(&tl) {
        let name = line.split_whitespace().next().unwrap();
        assert_eq!(row[0], name, "{row:?} / {line}");
        let want = if line.contains(" Out ") {
            "0x00000002"
        } else {
            "0x00000001"
        };
        assert_eq!(row[1], want, "{row:?} / {line}");
    }
}

/// `-i any` with VLAN-tagged frames: libpcap inserts a stripped tag back only for Ethernet
/// and LINUX_SLL, not for LINUX_SLL2 (pcap-linux.c, set_vlan_offset), so tcpdump's `-i any`
/// files carry no tag; zcap's carry the same bytes (tcpdump reads both as the same lines,
/// with -e and -xx).
#[test]
fn any_with_vlan_tags_writes_what_tcpdump_writes() {
    zcrx_ring::require!(Need::Privileges, Need::Tool("tcpdump"));
    let lab = Lab::new().unwrap();
    let frames = half_tagged(&lab, 9100, (3 << 13) | 300, (80, 8));
    let dir = common::tmp("any-vlan");
    std::fs::create_dir_all(&dir).unwrap();
    let (zp, tp) = (dir.join("z.pcap"), dir.join("t.pcap"));
    let (z, rx, _) = start_live(
        &lab.b.netns,
        &["-i", "any", "-q", "-w", zp.to_str().unwrap(), "udp"],
    );
    let mut t = start_tcpdump(
        &lab.b.netns,
        &["-i", "any", "-w", tp.to_str().unwrap(), "udp"],
    );
    common::send(&lab, &frames);
    std::thread::sleep(Duration::from_millis(1500));
    let (ok, _, err) = common::finish_live(z, rx, true);
    assert!(ok, "{err}");
    interrupt_and_wait(&mut t);
    let tl = lines_in(&lab.b.netns, &tp, &["-e", "-xx"]);
    assert_eq!(
        tl.iter().filter(|l| l.contains(": UDP, length")).count(),
        8,
        "{tl:#?}"
    );
    assert_eq!(lines_in(&lab.b.netns, &zp, &["-e", "-xx"]), tl);
}

/// The packets of the block the kernel was still filling reach the file when zcap is
/// stopped right after them: the stop waits for the block's retire timeout (here 1 s, so
/// the block cannot have retired by itself before the stop) instead of ending without it,
/// and then ends (within `interrupt_and_wait`'s 10 s: how soon is the host's).
#[test]
fn a_stop_right_after_the_last_packets_still_writes_them() {
    zcrx_ring::require!();
    let lab = Lab::new().unwrap();
    let file = std::env::temp_dir().join(format!("zcap-stop-{}.pcap", std::process::id()));
    let path = file.to_str().unwrap();
    for timeout in ["1000", "10"] {
        let args = [
            "-i",
            &lab.b.iface,
            "-q",
            "--block-timeout",
            timeout,
            "-w",
            path,
            "udp",
        ];
        let (mut child, rx, _) = start_live(&lab.b.netns, &args);
        udp_from(&lab.a.netns, &lab.b.ip.to_string(), 7300, 5);
        interrupt_and_wait(&mut child);
        let err: Vec<String> = rx.try_iter().collect();
        assert!(
            err.iter().any(|l| l == "5 packets captured"),
            "{timeout} ms: {err:?}"
        );
        assert_eq!(lines_in(&lab.b.netns, &file, &[]).len(), 5, "{timeout} ms");
    }
    let _ = std::fs::remove_file(&file);
}
