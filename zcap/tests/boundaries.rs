//! zcap at process and privilege boundaries: `-z` hooks reaped as they go, bounded, under
//! the ordinary scheduler; `-Z` honoured with `-r` and before `--ipfix-file`; `-r -` reading
//! standard input; SIGTERM during `-r` losing nothing; `-s` clamped. Privileged parts fail
//! under CI=true instead of skipping.

use crate::common;

use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{bin, count, live_on_b, pcap_bytes, start_live, stderr};
use zcrx_ring::lab::{Lab, Need};

/// A fresh directory for one test, anyone may write in it (for `-Z nobody`).
fn dir(name: &str) -> PathBuf {
    let d = common::fresh_dir(name);
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o777)).unwrap();
    d
}

/// `n` frames of `size` bytes of one lab flow (UDP 7000 -> 7001, to b's stack).
fn lab_frames(lab: &Lab, n: u64, size: usize) -> Vec<Vec<u8>> {
    let flow = zcrx_ring::frames::UdpFlow::lab(&lab.a, &lab.b, 7000, 7001, true);
    (0..n).map(|i| flow.frame(i, size)).collect()
}

/// The packets of a pcap file (it must read whole).
fn packets_in(p: &Path) -> usize {
    let data = std::fs::read(p).unwrap();
    let mut r = pcap_file::pcap::PcapReader::new(&data[..]).unwrap();
    let mut n = 0;
    while let Some(pkt) = r.next_packet() {
        pkt.unwrap();
        n += 1;
    }
    n
}

/// A `-z` hook script at `path`: it appends what `body` prints to `log`.
fn hook(path: &Path, log: &Path, body: &str) {
    std::fs::write(
        path,
        format!("#!/bin/sh\n{{ {body}; }} >> {}\n", log.display()),
    )
    .unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// `-z` hooks are reaped at each rotation and at most 16 run at once (a hook left as a child
/// until zcap ends is a zombie a rotation): every hook, run while others may still run, sees
/// at most 16 children of zcap (itself included), zombies counted. A failing hook is reported
/// once, with its status.
#[test]
fn hooks_are_reaped_as_they_go_bounded_and_their_failures_reported_once() {
    let d = dir("hooks-bounded");
    let input = d.join("in.pcap");
    std::fs::write(&input, pcap_bytes(2_000, 4)).unwrap();
    let (script, log) = (d.join("count.sh"), d.join("children.log"));
    // zcap's children: every process whose parent is zcap ($PPID), zombies included; then a
    // pause so that hooks overlap.
    hook(
        &script,
        &log,
        r#"n=0; for s in /proc/[0-9]*/stat; do read -r _ _ _ pp _ < "$s" 2>/dev/null || continue; [ "$pp" = "$PPID" ] && n=$((n+1)); done; echo $n; sleep 0.05"#,
    );
    let o = Command::new(bin())
        .current_dir(&d)
        .args(["-r", "in.pcap", "-w", "out", "-C", "1k", "-z"])
        .arg(&script)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let seen: Vec<usize> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect();
    // One hook per closed file (all but the last, as tcpdump).
    let files = std::fs::read_dir(&d)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("out")
        })
        .count();
    assert!(files > 100, "{files} files");
    assert_eq!(seen.len(), files - 1);
    let most = *seen.iter().max().unwrap();
    assert!(
        most <= 16,
        "up to {most} children of zcap at once: {seen:?}"
    );

    // A hook that fails: one line for each, with its exit status.
    let o = Command::new(bin())
        .current_dir(&d)
        .args([
            "-r",
            "in.pcap",
            "-w",
            "again",
            "-C",
            "8k",
            "-z",
            "/bin/false",
        ])
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "a hook's failure is not zcap's: {err}");
    let failures = err
        .lines()
        .filter(|l| l.starts_with("zcap: -z /bin/false again") && l.ends_with("exit status: 1"))
        .count();
    let closed = std::fs::read_dir(&d)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("again")
        })
        .count()
        - 1;
    assert_eq!(failures, closed, "{err}");
}

/// `-Z` holds for `-r` and for `--ipfix-file`: the input is opened as root, then every output
/// (the -w files, the IPFIX file) is created, and every hook run, as the -Z user.
#[test]
fn dash_z_holds_for_offline_runs_and_for_the_ipfix_file() {
    zcrx_ring::require!();
    let d = dir("dash-z-offline");
    let input = d.join("in.pcap");
    std::fs::write(&input, pcap_bytes(3_000, 8)).unwrap();
    // Only root may read the input: the drop comes after it is open.
    std::fs::set_permissions(&input, std::fs::Permissions::from_mode(0o600)).unwrap();
    let (script, log) = (d.join("whoami.sh"), d.join("uids.log"));
    hook(&script, &log, "id -u");
    let o = Command::new(bin())
        .current_dir(&d)
        .args(["-r", "in.pcap", "-Z", "nobody", "-w", "out", "-C", "64k"])
        .arg("-z")
        .arg(&script)
        .args(["--ipfix-file", "flows.ipfix"])
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("dropped privileges to nobody"), "{err}");
    for e in std::fs::read_dir(&d).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with("out") || name == "flows.ipfix" {
            assert_eq!(e.metadata().unwrap().uid(), 65534, "{name} is nobody's");
        }
    }
    let uids = std::fs::read_to_string(&log).unwrap();
    assert!(!uids.is_empty());
    assert!(uids.lines().all(|u| u == "65534"), "hooks ran as {uids}");
    assert!(std::fs::metadata(d.join("flows.ipfix")).unwrap().len() > 0);

    // Live: the IPFIX file too is the -Z user's.
    let lab = Lab::new().unwrap();
    let ipfix = d.join("live.ipfix");
    let (child, rx, _) = live_on_b(
        &lab,
        &[
            "-Z",
            "nobody",
            "-q",
            "-w",
            "/dev/null",
            "--ipfix-file",
            ipfix.to_str().unwrap(),
        ],
    );
    let (ok, _, err) = common::finish_live(child, rx, true);
    assert!(ok, "{err}");
    assert_eq!(std::fs::metadata(&ipfix).unwrap().uid(), 65534, "{err}");
}

/// `-z` hooks do not inherit `--rt-priority` (an upload script under SCHED_FIFO would starve
/// the capture): they run under SCHED_OTHER while zcap's threads keep SCHED_FIFO.
#[test]
fn hooks_do_not_inherit_the_real_time_priority() {
    zcrx_ring::require!(Need::Privileges, Need::Tool("chrt"));
    let d = dir("hooks-rt");
    let (script, log) = (d.join("policy.sh"), d.join("policies.log"));
    hook(&script, &log, "chrt -p $$");
    let lab = Lab::new().unwrap();
    let out = d.join("out");
    let (child, rx, _) = live_on_b(
        &lab,
        &[
            "-q",
            "--rt-priority",
            "3",
            "-w",
            out.to_str().unwrap(),
            "-C",
            "4k",
            "-z",
            script.to_str().unwrap(),
            "udp",
        ],
    );
    let frames = lab_frames(&lab, 400, 200);
    common::send(&lab, &frames);
    let deadline = Instant::now() + Duration::from_secs(5);
    while std::fs::read_to_string(&log).map_or(0, |s| s.lines().count()) < 6
        && Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    let (ok, _, err) = common::finish_live(child, rx, true);
    assert!(ok, "{err}");
    let policies = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = policies.lines().filter(|l| l.contains("policy")).collect();
    assert!(lines.len() >= 6, "{policies}");
    assert!(
        lines.iter().all(|l| l.contains("SCHED_OTHER")),
        "hooks' policies: {policies}"
    );
}

/// `-r -` reads standard input, and SIGTERM during `-r` ends the run as an end of file would:
/// 100 packets written to zcap's standard input (left open), then SIGTERM: the pcap holds all
/// 100, the IPFIX file the flows still open, the counts are printed, exit 0.
#[test]
fn sigterm_while_reading_standard_input_loses_nothing() {
    let d = dir("sigterm-stdin");
    let mut child = Command::new(bin())
        .current_dir(&d)
        .args(["-r", "-", "-w", "out.pcap", "--ipfix-file", "flows.ipfix"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&pcap_bytes(100, 4)).unwrap();
    stdin.flush().unwrap();
    // zcap reads them and then waits for more; the input stays open.
    std::thread::sleep(Duration::from_millis(500));
    let pid = child.id().to_string();
    assert!(Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap()
        .success());
    let deadline = Instant::now() + Duration::from_secs(5);
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "zcap did not stop on SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(stdin);
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert_eq!(count(&err, " packets captured"), 100, "{err}");
    assert_eq!(packets_in(&d.join("out.pcap")), 100);
    let ipfix = std::fs::read(d.join("flows.ipfix")).unwrap();
    let mut dec = zcrx_flowcache::ipfix::decode::Decoder::new();
    let flows: usize = zcrx_flowcache::ipfix::decode::messages(&ipfix)
        .map(|m| dec.message(m.unwrap()).unwrap().flows.len())
        .sum();
    assert_eq!(flows, 4, "the four open flows were exported");

    // And `-r -` to the end of a pipe: every packet, as from the file.
    let bytes = pcap_bytes(5_000, 16);
    let mut child = Command::new(bin())
        .current_dir(&d)
        .args(["-r", "-", "-w", "piped.pcap"])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(&bytes).unwrap());
    let o = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(packets_in(&d.join("piped.pcap")), 5_000);
}

/// A huge `-s` (1 000 000 000) offline is clamped to 262 144 with a message (it would reserve
/// gigabytes for a small file): the file's header says 262 144, and zcap stays small.
#[test]
fn a_huge_snapshot_length_is_clamped_and_said() {
    let d = dir("snaplen-clamp");
    std::fs::write(d.join("in.pcap"), pcap_bytes(20_000, 8)).unwrap();
    // GNU time's %M: the maximum resident set size, KiB.
    let o = Command::new("/usr/bin/time")
        .current_dir(&d)
        .args([
            "-f",
            "maxrss %M",
            &bin(),
            "-r",
            "in.pcap",
            "-s",
            "1000000000",
        ])
        .args(["-w", "out.pcap"])
        .output();
    let Ok(o) = o else {
        panic!("/usr/bin/time is needed (scripts/deps.sh installs it)");
    };
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("zcap: -s 1000000000: clamped to 262144"),
        "{err}"
    );
    let header = std::fs::read(d.join("out.pcap")).unwrap();
    assert_eq!(
        u32::from_le_bytes(header[16..20].try_into().unwrap()),
        262_144
    );
    let rss: u64 = err
        .lines()
        .find_map(|l| l.strip_prefix("maxrss "))
        .and_then(|v| v.trim().parse().ok())
        .expect("maxrss");
    assert!(rss < 256 * 1024, "max RSS {rss} KiB");
}

/// Waits up to `secs` for `child` to exit; its status.
fn exits_within(child: &mut std::process::Child, secs: f64) -> Option<std::process::ExitStatus> {
    let deadline = Instant::now() + Duration::from_secs_f64(secs);
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return Some(s);
        }
        if Instant::now() > deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The interface goes away mid-capture, by `ip link del` of the capturing veth and by the
/// peer's namespace deleted (which destroys the pair): zcap stops by itself (a capture whose
/// interface is gone would otherwise wait on forever; 30 s is a safety net, how soon it
/// stops is the host's) with a message naming it and exit status 1, its file whole (tcpdump
/// reads every packet zcap counted), the counts printed.
#[test]
fn a_vanished_interface_stops_the_capture_cleanly() {
    zcrx_ring::require!(Need::Privileges, Need::Tool("tcpdump"));
    let d = dir("vanish");
    for how in ["link del", "netns del"] {
        let lab = Lab::new().unwrap();
        let out = d.join(format!("{}.pcap", how.replace(' ', "-")));
        let (mut child, rx, _) = live_on_b(&lab, &["-q", "-w", out.to_str().unwrap(), "udp"]);
        let frames = lab_frames(&lab, 300, 200);
        common::send(&lab, &frames);
        std::thread::sleep(Duration::from_millis(300));
        match how {
            "link del" => {
                lab.b.ip(&["link", "del", &lab.b.iface]).unwrap();
            }
            _ => {
                zcrx_ring::lab::ip(&["netns", "del", &lab.a.netns]).unwrap();
            }
        }
        let status = exits_within(&mut child, 30.0).unwrap_or_else(|| {
            let _ = child.kill();
            panic!("{how}: zcap still runs 30 s after its interface went away")
        });
        std::thread::sleep(Duration::from_millis(50));
        let err: Vec<String> = rx.try_iter().collect();
        let err = err.join("\n");
        assert_eq!(status.code(), Some(1), "{how}: {err}");
        assert!(
            err.contains(&lab.b.iface) && err.contains("gone"),
            "{how}: the message names the interface: {err}"
        );
        let captured = count(&err, " packets captured");
        assert_eq!(captured, 300, "{how}: {err}");
        let t = Command::new("tcpdump")
            .args(["-n", "-r"])
            .arg(&out)
            .output()
            .unwrap();
        assert!(t.status.success(), "{how}: tcpdump -r: {}", stderr(&t));
        let read = String::from_utf8_lossy(&t.stdout).lines().count() as u64;
        assert_eq!(read, captured, "{how}: the file holds what zcap counted");
    }
}

/// `-i any`: one interface going away is not an error: the capture goes on (and sees the
/// next packets on the others) until SIGINT, exit 0.
#[test]
fn with_any_one_interface_going_away_is_not_an_error() {
    zcrx_ring::require!();
    let lab = Lab::new().unwrap();
    let (mut child, rx, _) =
        start_live(&lab.b.netns, &["-i", "any", "-q", "-w", "/dev/null", "udp"]);
    lab.b.ip(&["link", "del", &lab.b.iface]).unwrap();
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        child.try_wait().unwrap().is_none(),
        "zcap -i any stopped when one interface went away"
    );
    // Loopback in the namespace is still captured.
    let ok = Command::new("ip")
        .args(["netns", "exec", &lab.b.netns, "bash", "-c"])
        .arg("for i in 1 2 3; do echo x > /dev/udp/127.0.0.1/9999; done")
        .status()
        .unwrap();
    assert!(ok.success());
    std::thread::sleep(Duration::from_millis(300));
    let (ok, _, err) = common::finish_live(child, rx, true);
    assert!(ok, "{err}");
    // Each datagram is seen leaving and arriving on lo.
    assert!(count(&err, " packets captured") >= 3, "{err}");
}

/// SIGKILL mid-write: every file zcap had finished reads whole, and the one it was writing
/// reads up to its last whole record (zcap hands records to the file whole, so tcpdump and
/// tshark read it without even the truncation warning they would allow).
#[test]
fn sigkill_mid_write_leaves_every_file_readable() {
    zcrx_ring::require!(
        Need::Privileges,
        Need::Tool("tcpdump"),
        Need::Tool("tshark")
    );
    let d = dir("sigkill");
    let lab = Lab::new().unwrap();
    let out = d.join("out");
    let (mut child, _rx, _) =
        live_on_b(&lab, &["-q", "-w", out.to_str().unwrap(), "-C", "1", "udp"]);
    let frames = lab_frames(&lab, 2_000, 1000);
    for _ in 0..3 {
        common::send(&lab, &frames);
    }
    std::thread::sleep(Duration::from_millis(300));
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let mut names: Vec<PathBuf> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("out"))
        .collect();
    names.sort();
    assert!(names.len() >= 3, "6 MB in 1 MB files: {names:?}");
    let mut total = 0;
    for f in &names {
        let t = Command::new("tcpdump")
            .arg("-r")
            .arg(f)
            .arg("-n")
            .output()
            .unwrap();
        let err = stderr(&t);
        assert!(
            t.status.success() && !err.contains("truncated"),
            "{}: {err}",
            f.display()
        );
        let n = String::from_utf8_lossy(&t.stdout).lines().count();
        let s = Command::new("tshark").arg("-r").arg(f).output().unwrap();
        assert!(
            s.status.success(),
            "{}: tshark: {}",
            f.display(),
            stderr(&s)
        );
        assert_eq!(String::from_utf8_lossy(&s.stdout).lines().count(), n);
        total += n;
    }
    assert!(total > 2_000, "{total} packets in the files");
}

/// Waits up to 5 s for the line ending in `what` among `lines` (a zcap's standard error);
/// its number.
fn next_count(lines: &std::sync::mpsc::Receiver<String>, what: &str) -> u64 {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = lines
            .recv_timeout(left)
            .unwrap_or_else(|_| panic!("no \"{what}\" line within 5 s"));
        if let Some(n) = line.strip_suffix(what) {
            return n.trim().parse().unwrap();
        }
    }
}

fn usr1(pid: u32) {
    assert!(Command::new("kill")
        .args(["-USR1", &pid.to_string()])
        .status()
        .unwrap()
        .success());
}

/// SIGUSR1 prints the counts so far and the capture goes on, as tcpdump does: live (the
/// count is the packets sent so far, the kernel's beside it) and offline from a pipe (the
/// packets of the blocks handed over so far, at most those read).
#[test]
fn sigusr1_prints_the_counts_so_far_and_the_capture_goes_on() {
    zcrx_ring::require!();
    let d = dir("sigusr1");
    let lab = Lab::new().unwrap();
    let out = d.join("live.pcap");
    let (child, rx, _) = live_on_b(&lab, &["-q", "-w", out.to_str().unwrap(), "udp"]);
    let frames = lab_frames(&lab, 500, 100);
    common::send(&lab, &frames[..300]);
    // The last block retires within zcap's block timeout (100 ms with -w).
    std::thread::sleep(Duration::from_millis(400));
    usr1(child.id());
    assert_eq!(next_count(&rx, " packets captured"), 300);
    assert_eq!(next_count(&rx, " packets received by filter"), 300);
    assert_eq!(next_count(&rx, " packets dropped by kernel"), 0);
    common::send(&lab, &frames[300..]);
    std::thread::sleep(Duration::from_millis(400));
    usr1(child.id());
    assert_eq!(next_count(&rx, " packets captured"), 500);
    let (ok, _, err) = common::finish_live(child, rx, true);
    assert!(ok, "zcap went on after SIGUSR1 and ended on SIGINT: {err}");
    assert_eq!(count(&err, " packets captured"), 500, "{err}");
    assert_eq!(packets_in(&out), 500);

    // Offline, from a pipe that stays open: the packets read so far.
    let mut child = Command::new(bin())
        .current_dir(&d)
        .args(["-r", "-", "-w", "offline.pcap"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let err = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for l in std::io::BufReader::new(err).lines().map_while(Result::ok) {
            let _ = tx.send(l);
        }
    });
    let mut stdin = child.stdin.take().unwrap();
    // 30 000 packets: several of the streaming ring's 1 MiB blocks. From a pipe that stays
    // open, packets go on a block at a time (the last, partly filled block waits for more
    // input or its end), so the count so far is that of the blocks handed over.
    stdin.write_all(&pcap_bytes(30_000, 4)).unwrap();
    stdin.flush().unwrap();
    std::thread::sleep(Duration::from_millis(500));
    usr1(child.id());
    let captured = next_count(&rx, " packets captured");
    let read = next_count(&rx, " packets read");
    assert!(
        captured > 0 && captured <= read && read <= 30_000,
        "{captured} of {read}"
    );
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(status.success());
    assert_eq!(next_count(&rx, " packets captured"), 30_000);
    assert_eq!(packets_in(&d.join("offline.pcap")), 30_000);
}
