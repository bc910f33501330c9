//! Privilege separation, tested as a compromised parser would try it: the worker makes,
//! from inside a running capture, the system calls a security review of zcap made
//! (`--sandbox-attacks`), on a real terminal (a pty, as `script` gives one) in the netns
//! lab; the same calls with `--no-sandbox` show that each one is real (it succeeds there).
//! The monitor's surface is what the design says: it holds the packet sockets, its
//! channel to the worker, a signalfd and standard error, nothing else; the worker holds
//! no packet socket and has no controlling terminal. Fail under CI=true instead of
//! skipping.

use crate::common;

use std::collections::BTreeMap;
use std::process::Command;

use common::{finish_live, fresh_dir, start_live};
use zcrx_ring::lab::{Lab, Need};

/// The attacks `--sandbox-attacks` makes, in its order.
const ATTACKS: [&str; 15] = [
    "tiocsti",
    "packet-socket-write",
    "packet-socket-option",
    "packet-socket-new",
    "netlink-socket",
    "udp-socket",
    "tcp-listen",
    "unix-datagram-to",
    "descriptor-passing",
    "exec-memory",
    "prctl-dumpable",
    "signal-monitor",
    "ptrace-monitor",
    "file-in-etc",
    "execve",
];

/// Runs a capture on the lab's interface b under a pty for about two seconds with
/// `--sandbox-attacks` and `extra`; returns each attack's outcome ("SUCCEEDED" or
/// "refused (...)") and everything the terminal showed.
fn attacks(lab: &Lab, extra: &str) -> (BTreeMap<String, String>, String) {
    let dir = fresh_dir("privsep-attacks");
    let file = dir.join("cap.pcap");
    // timeout sends SIGINT to zcap (the monitor, which passes it on) after 2 s.
    let inner = format!(
        "timeout -s INT 2 {} -i {} -w {} --sandbox-attacks {extra}",
        common::bin(),
        lab.b.iface,
        file.display()
    );
    let o = Command::new("ip")
        .args([
            "netns",
            "exec",
            &lab.b.netns,
            "script",
            "-qec",
            &inner,
            "/dev/null",
        ])
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&o.stdout).replace('\r', "");
    let mut outcome = BTreeMap::new();
    for line in shown.lines() {
        if let Some(rest) = line.split("zcap: sandbox attack ").nth(1) {
            let (name, how) = rest.split_once(": ").unwrap();
            outcome.insert(name.to_string(), how.to_string());
        }
    }
    (outcome, shown)
}

#[test]
fn a_compromised_parser_reaches_neither_the_terminal_nor_the_link_nor_the_system() {
    zcrx_ring::require!(Need::Privileges, Need::Tool("script"));
    let lab = Lab::new().unwrap();
    let legacy_tiocsti = std::fs::read_to_string("/proc/sys/dev/tty/legacy_tiocsti")
        .map_or(true, |v| v.trim() == "1");

    // Without the sandbox: the review's findings, reproduced.
    let (open, shown) = attacks(&lab, "--no-sandbox");
    // The last, execve, succeeded: zcap became /bin/true and reported nothing more.
    assert_eq!(open.len(), ATTACKS.len() - 1, "{shown}");
    assert!(!open.contains_key("execve"), "{shown}");
    let mut reproduced = vec![
        "packet-socket-write",
        "netlink-socket",
        "udp-socket",
        "tcp-listen",
        "exec-memory",
        "prctl-dumpable",
        "signal-monitor",
        "file-in-etc",
    ];
    if legacy_tiocsti {
        reproduced.push("tiocsti");
    }
    for attack in reproduced {
        assert_eq!(
            open[attack], "SUCCEEDED",
            "{attack} without the sandbox: {shown}"
        );
    }
    assert!(!std::path::Path::new("/etc/zcap-sandbox-attack").exists());

    // With it (the default): every one refused, and the capture ends cleanly.
    let (closed, shown) = attacks(&lab, "");
    for attack in ATTACKS {
        let how = closed
            .get(attack)
            .unwrap_or_else(|| panic!("{attack}: {shown}"));
        assert!(how.starts_with("refused"), "{attack}: {how}\n{shown}");
    }
    assert_eq!(
        closed["packet-socket-write"], "refused (no packet socket among the descriptors)",
        "{shown}"
    );
    assert!(shown.contains("packets captured"), "{shown}");
}

/// Descriptor `fd`'s target of process `pid`, as `/proc` shows it.
fn fds(pid: u32) -> Vec<String> {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let target = std::fs::read_link(e.path()).unwrap();
            format!(
                "{} -> {}",
                e.file_name().to_string_lossy(),
                target.display()
            )
        })
        .collect()
}

/// The packet sockets' inodes in process `pid`'s network namespace.
fn packet_inodes(pid: u32) -> Vec<String> {
    std::fs::read_to_string(format!("/proc/{pid}/net/packet"))
        .unwrap()
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().last().map(|i| format!("socket:[{i}]")))
        .collect()
}

/// Field `name` of `/proc/PID/status`.
fn status(pid: u32, name: &str) -> String {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{name}:")))
        .unwrap_or_else(|| panic!("{name} in {text}"))
        .trim()
        .to_string()
}

#[test]
fn the_monitor_holds_the_packet_sockets_and_the_worker_parses_without_them() {
    zcrx_ring::require!(Need::Privileges);
    let lab = Lab::new().unwrap();
    let dir = fresh_dir("privsep-fds");
    let file = dir.join("cap.pcap").display().to_string();
    let poi = format!("unix:{}", dir.join("poi.sock").display());
    let args = [
        "-i",
        &lab.b.iface,
        "--shards",
        "2",
        "-w",
        &file,
        "--metrics",
        "127.0.0.1:0",
        "--pcap-over-ip",
        &poi,
    ];
    let (child, rx, startup) = start_live(&lab.b.netns, &args);
    let monitor = child.id();
    let worker = common::worker(monitor);
    assert_ne!(worker, monitor, "no worker process: {startup}");
    // The listeners are the monitor's: the worker holds none.
    let listening = Command::new("ip")
        .args(["netns", "exec", &lab.b.netns, "ss", "-Hlnpxt"])
        .output()
        .unwrap();
    let listening = String::from_utf8_lossy(&listening.stdout);
    let zcap: Vec<&str> = listening.lines().filter(|l| l.contains("zcap")).collect();
    assert_eq!(zcap.len(), 2, "metrics and PCAP-over-IP: {listening}");
    for line in &zcap {
        assert!(line.contains(&format!("pid={monitor},")), "{line}");
        assert!(!line.contains(&format!("pid={worker},")), "{line}");
    }
    let packet = packet_inodes(monitor);
    assert_eq!(
        packet.len(),
        2,
        "two shards, two packet sockets: {packet:?}"
    );

    // The monitor: standard error, the two packet sockets, the two listeners, its channel
    // and a signalfd.
    let held = fds(monitor);
    assert_eq!(held.len(), 7, "{held:?}");
    assert!(held.iter().any(|f| f.starts_with("2 -> ")), "{held:?}");
    for socket in &packet {
        assert!(
            held.iter().any(|f| f.ends_with(socket.as_str())),
            "{held:?}"
        );
    }
    assert_eq!(held.iter().filter(|f| f.contains("signalfd")).count(), 1);
    for (field, want) in [
        ("CapEff", "0000000000000000"),
        ("CapPrm", "0000000000000000"),
        ("NoNewPrivs", "1"),
        ("Seccomp", "2"),
    ] {
        assert_eq!(status(monitor, field), want, "monitor {field}");
    }
    // Not dumpable: its /proc entries belong to root whatever its user.
    let meta = std::fs::metadata(format!("/proc/{monitor}/mem")).unwrap();
    assert_eq!(std::os::unix::fs::MetadataExt::uid(&meta), 0);

    // The worker: no packet socket; a session of its own, so no controlling terminal.
    let parsing = fds(worker);
    for socket in &packet {
        assert!(
            !parsing.iter().any(|f| f.ends_with(socket.as_str())),
            "{parsing:?}"
        );
    }
    assert_eq!(
        parsing.iter().filter(|f| f.contains("eventpoll")).count(),
        4,
        "an epoll instance per ring and per listener: {parsing:?}"
    );
    let stat = common::stat_fields(worker);
    assert_eq!(stat[3], worker.to_string(), "session: {stat:?}");
    assert_eq!(stat[4], "0", "controlling terminal: {stat:?}");
    assert_eq!(status(worker, "Seccomp"), "2");
    assert_eq!(status(worker, "CapEff"), "0000000000000000");

    // Statistics come through the monitor: tcpdump's counts at the end.
    common::send(
        &lab,
        &(0..100)
            .map(|i| common::udp_frame(1, i))
            .collect::<Vec<_>>(),
    );
    std::thread::sleep(std::time::Duration::from_millis(300));
    let (ok, _, err) = finish_live(child, rx, true);
    assert!(ok, "{err}");
    assert_eq!(common::count(&err, " packets captured"), 100, "{err}");
    assert_eq!(
        common::count(&err, " packets received by filter"),
        100,
        "{err}"
    );
}

#[test]
fn hooks_read_nothing_of_the_runner_and_write_nothing_into_it() {
    let dir = fresh_dir("privsep-hooks");
    let input = dir.join("in.pcap");
    std::fs::write(&input, common::pcap_bytes(2000, 8)).unwrap();
    let out = dir.join("out");
    std::fs::create_dir(&out).unwrap();
    // A hook that reads its standard input to the end (as ssh without -n does) and prints
    // digits (what the runner's answers are made of).
    let log = dir.join("hooks.log");
    let hook = dir.join("hook.sh");
    std::fs::write(
        &hook,
        format!(
            "#!/bin/sh\ncat >/dev/null\necho 1111\necho \"$1\" >> {}\n",
            log.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    let o = Command::new(common::bin())
        .current_dir(&out)
        .args(["-r"])
        .arg(&input)
        .args(["-w", "cap.pcap", "-C", "20k", "-z"])
        .arg(&hook)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let files = std::fs::read_dir(&out).unwrap().count();
    assert!(files >= 5, "{files} files: {err}");
    let ran = std::fs::read_to_string(&log).unwrap().lines().count();
    // Every file but the last (open at the end) was closed by a rotation: one hook each.
    assert_eq!(ran, files - 1, "{err}");
    // Their output went to standard error, and none counts as a failure.
    assert_eq!(err.matches("1111").count(), files - 1, "{err}");
    assert!(!err.contains("-z "), "{err}");
}

#[test]
fn the_write_directory_is_never_the_root_or_a_system_directory() {
    let dir = fresh_dir("privsep-root");
    let input = dir.join("in.pcap");
    std::fs::write(&input, common::pcap_bytes(10, 1)).unwrap();
    for (cwd, name) in [
        ("/", "zcap-privsep-test.pcap"),
        ("/", "%Y/zcap-privsep-test.pcap"),
        ("/tmp", "/etc/zcap-privsep-test.pcap"),
        ("/tmp", "/zcap-privsep-test.pcap"),
    ] {
        let o = Command::new(common::bin())
            .current_dir(cwd)
            .arg("-r")
            .arg(&input)
            .args(["-w", name])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{cwd} {name}: {err}");
        assert!(err.contains("a system directory"), "{cwd} {name}: {err}");
    }
    assert!(!std::path::Path::new("/zcap-privsep-test.pcap").exists());
    assert!(!std::path::Path::new("/etc/zcap-privsep-test.pcap").exists());
}

#[test]
fn root_becomes_the_zcap_user_unless_told_otherwise() {
    zcrx_ring::require!(Need::Privileges, Need::Tool("unshare"));
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = fresh_dir("privsep-user");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let input = dir.join("in.pcap");
    std::fs::write(&input, common::pcap_bytes(20, 2)).unwrap();
    // A user zcap, in a mount namespace of the test's own: the system's files untouched.
    let passwd = dir.join("passwd");
    let group = dir.join("group");
    let with = |file: &str, line: &str| {
        let mut text = std::fs::read_to_string(file).unwrap();
        text.push_str(line);
        text
    };
    std::fs::write(
        &passwd,
        with(
            "/etc/passwd",
            "zcap:x:64999:64999::/nonexistent:/usr/sbin/nologin\n",
        ),
    )
    .unwrap();
    std::fs::write(&group, with("/etc/group", "zcap:x:64999:\n")).unwrap();
    let run = |extra: &str, out: &str| {
        let script = format!(
            "mount --bind {} /etc/passwd && mount --bind {} /etc/group && exec {} -r {} -w {} {extra}",
            passwd.display(),
            group.display(),
            common::bin(),
            input.display(),
            dir.join(out).display()
        );
        let o = Command::new("unshare")
            .args(["--mount", "--propagation", "private", "sh", "-c", &script])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(o.status.success(), "{err}");
        let owner = std::fs::metadata(dir.join(out)).unwrap().uid();
        (owner, err)
    };
    let (owner, err) = run("", "default.pcap");
    assert!(
        err.contains("dropped privileges to zcap (uid 64999"),
        "{err}"
    );
    assert_eq!(owner, 64999, "{err}");
    let (owner, err) = run("-Z root", "root.pcap");
    assert!(err.contains("-Z root: running as root, as asked"), "{err}");
    assert_eq!(owner, 0, "{err}");

    // Where the system has no such user, zcap says it stays root.
    let has_zcap = std::fs::read_to_string("/etc/passwd")
        .unwrap()
        .lines()
        .any(|l| l.starts_with("zcap:"));
    if !has_zcap {
        let o = Command::new(common::bin())
            .arg("-r")
            .arg(&input)
            .arg("-w")
            .arg(dir.join("plain.pcap"))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{err}");
        assert!(
            err.contains("running as root: there is no user zcap to drop to"),
            "{err}"
        );
    }
}

/// The system calls the monitor may make once confined, as the design lists them: its
/// sockets' messages, the packet sockets' statistics, its signals and passing them on,
/// waiting for the worker, standard error, memory and its end.
const MONITOR_CALLS: [&str; 27] = [
    "read",
    "write",
    "close",
    // F_GETFD alone (the standard library's check, in debug builds, on closing).
    "fcntl",
    "recvfrom",
    "sendto",
    // A connection accepted on a listener, handed to the worker.
    "accept4",
    "sendmsg",
    "getsockopt",
    "ppoll",
    "poll",
    "wait4",
    "kill",
    "rt_sigprocmask",
    "rt_sigreturn",
    "sigaltstack",
    "brk",
    "mmap",
    "munmap",
    "mremap",
    "madvise",
    "futex",
    "clock_gettime",
    "restart_syscall",
    "exit",
    "exit_group",
    // Unfinished calls strace resumes.
    "<...",
];

#[test]
fn the_monitor_makes_only_the_calls_the_design_lists() {
    zcrx_ring::require!(Need::Privileges, Need::Tool("strace"));
    let lab = Lab::new().unwrap();
    let dir = fresh_dir("privsep-calls");
    let file = dir.join("cap.pcap").display().to_string();
    let (child, rx, startup) = start_live(
        &lab.b.netns,
        &["-i", &lab.b.iface, "-w", &file, "--metrics", "127.0.0.1:0"],
    );
    let monitor = child.id();
    assert_ne!(common::worker(monitor), monitor, "{startup}");
    let port: u16 = startup
        .split("http://127.0.0.1:")
        .nth(1)
        .and_then(|r| r.split('/').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no metrics port: {startup}"));
    // Traced from here (it is confined by now: "listening" came after the split).
    let trace = dir.join("monitor.trace");
    let mut strace = Command::new("strace")
        .args(["-qq", "-p", &monitor.to_string(), "-o"])
        .arg(&trace)
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    common::send(
        &lab,
        &(0..50).map(|i| common::udp_frame(1, i)).collect::<Vec<_>>(),
    );
    // A scrape: the monitor accepts the connection and hands it to the worker.
    let scraped = lab
        .b
        .run(move || -> std::io::Result<String> {
            use std::io::{Read, Write};
            let mut s = std::net::TcpStream::connect(("127.0.0.1", port))?;
            s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")?;
            let mut answer = String::new();
            s.read_to_string(&mut answer)?;
            Ok(answer)
        })
        .unwrap()
        .unwrap();
    assert!(scraped.contains("zcap_captured_packets_total"), "{scraped}");
    // SIGUSR1: passed on to the worker, which asks the monitor for the statistics.
    assert!(Command::new("kill")
        .args(["-USR1", &monitor.to_string()])
        .status()
        .unwrap()
        .success());
    std::thread::sleep(std::time::Duration::from_millis(500));
    let (ok, _, err) = finish_live(child, rx, true);
    assert!(ok, "{err}");
    let _ = strace.wait();
    let text = std::fs::read_to_string(&trace).unwrap();
    let calls: std::collections::BTreeSet<&str> = text
        .lines()
        .filter(|l| !l.starts_with("---") && !l.starts_with("+++"))
        .filter_map(|l| l.split('(').next())
        .map(str::trim)
        .collect();
    for call in &calls {
        assert!(
            MONITOR_CALLS.contains(call),
            "the monitor made {call}:\n{text}"
        );
    }
    // It did its work: statistics read, a connection accepted and handed over, a signal
    // passed on, the worker waited for.
    for call in ["getsockopt", "accept4", "sendmsg", "kill", "wait4"] {
        assert!(calls.contains(call), "no {call}:\n{text}");
    }
    assert!(
        !text.contains("EPERM"),
        "a call the filter refused:\n{text}"
    );
    // The last count is the final one (SIGUSR1's came before, with a block still open).
    let last = err.lines().rev().find(|l| l.ends_with(" packets captured"));
    assert_eq!(last, Some("50 packets captured"), "{err}");
}

/// The 32 bytes of the P-256 private key in PEM file `key` (PKCS#8: the ECPrivateKey's
/// version 1, then its OCTET STRING of 32: what any copy of the key's DER holds), and a
/// run of its PEM text.
fn key_bytes(key: &std::path::Path) -> (Vec<u8>, Vec<u8>) {
    use base64::Engine;
    let pem = std::fs::read_to_string(key).unwrap();
    let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    let der = base64::engine::general_purpose::STANDARD
        .decode(&body)
        .unwrap();
    let at = der
        .windows(5)
        .position(|w| w == [2, 1, 1, 4, 32])
        .expect("an ECPrivateKey");
    let line = pem.lines().nth(2).unwrap().as_bytes()[..40].to_vec();
    (der[at + 5..at + 37].to_vec(), line)
}

/// Whether `needle` is anywhere in process `pid`'s readable memory.
fn in_memory(pid: u32, needle: &[u8]) -> bool {
    use std::os::unix::fs::FileExt;
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap();
    let mem = std::fs::File::open(format!("/proc/{pid}/mem")).unwrap();
    for line in maps.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if !f[1].starts_with('r') || line.contains("[vvar") || line.contains("[vsyscall]") {
            continue;
        }
        let (start, end) = f[0].split_once('-').unwrap();
        let (start, end) = (
            u64::from_str_radix(start, 16).unwrap(),
            u64::from_str_radix(end, 16).unwrap(),
        );
        let mut buf = vec![0u8; (end - start) as usize];
        // A region the kernel will not read (a device's) is skipped.
        if mem.read_exact_at(&mut buf, start).is_ok()
            && buf.windows(needle.len()).any(|w| w == needle)
        {
            return true;
        }
    }
    false
}

#[test]
fn the_private_key_and_the_password_hashes_never_reach_the_worker() {
    zcrx_ring::require!(Need::Privileges, Need::Tool("openssl"));
    let lab = Lab::new().unwrap();
    let dir = fresh_dir("privsep-key");
    let pki = common::Pki::new(&dir);
    // A metrics user: its bcrypt hash is a secret of the monitor's too; and the metrics'
    // TLS key given inline in the web configuration.
    let hash = bcrypt::hash("s3cret", 4).unwrap();
    let web = dir.join("web.yml");
    let inline: String = std::fs::read_to_string(pki.file("server.key"))
        .unwrap()
        .lines()
        .map(|l| format!("    {l}\n"))
        .collect();
    std::fs::write(
        &web,
        format!(
            "tls_server_config:\n  cert_file: {}\n  key: |\n{inline}basic_auth_users:\n  prom: '{hash}'\n",
            pki.file("server.pem")
        ),
    )
    .unwrap();
    let args = [
        "-i",
        &lab.b.iface,
        "-q",
        "-w",
        "/dev/null",
        "--pcap-over-ip",
        "127.0.0.1:0",
        "--pcap-over-ip-cert",
        &pki.file("server.pem"),
        "--pcap-over-ip-key",
        &pki.file("server.key"),
        "--metrics",
        "127.0.0.1:0",
        "--web-config",
        &web.display().to_string(),
    ];
    let (child, rx, startup) = start_live(&lab.b.netns, &args);
    let port = common::served_port(&startup, "serving PCAP-over-IP on ");
    // A handshake: the worker's TLS has the monitor sign it.
    let o = Command::new("ip")
        .args([
            "netns",
            "exec",
            &lab.b.netns,
            "openssl",
            "s_client",
            "-connect",
        ])
        .arg(format!("127.0.0.1:{port}"))
        .args(["-CAfile", &pki.file("ca.pem"), "-verify_return_error"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(said.contains("Verify return code: 0 (ok)"), "{said}");
    // A scrape with the password, over TLS: signed and checked by the monitor.
    let metrics = common::served_port(&startup, "serving metrics on https://");
    let scrape = |password: &str| {
        let o = Command::new("ip")
            .args(["netns", "exec", &lab.b.netns, "curl", "-s", "-m", "5"])
            .args(["-o", "/dev/null", "-w", "%{http_code}", "--cacert"])
            .arg(pki.file("ca.pem"))
            .arg("-u")
            .arg(format!("prom:{password}"))
            .arg(format!("https://127.0.0.1:{metrics}/metrics"))
            .output()
            .unwrap();
        format!(" {} ", String::from_utf8_lossy(&o.stdout))
    };
    let right = scrape("s3cret");
    assert!(
        right.contains(" 200 "),
        "the right password: {right} {startup}"
    );
    assert!(scrape("wrong").contains(" 401 "), "a wrong one");
    let worker = common::worker(child.id());
    // The hash's salt and digest: nowhere in the worker.
    assert!(
        !in_memory(worker, &hash.as_bytes()[7..]),
        "the bcrypt hash in the worker"
    );
    let (scalar, pem_line) = key_bytes(std::path::Path::new(&pki.file("server.key")));
    // The scan reads the worker's heap: the certificate (public) is found there.
    let cert = std::fs::read_to_string(pki.file("server.pem")).unwrap();
    let cert_der = {
        use base64::Engine;
        let body: String = cert.lines().filter(|l| !l.starts_with("-----")).collect();
        base64::engine::general_purpose::STANDARD
            .decode(&body)
            .unwrap()
    };
    assert!(
        in_memory(worker, &cert_der[40..80]),
        "the certificate, a control"
    );
    assert!(!in_memory(worker, &scalar), "the private key in the worker");
    assert!(
        !in_memory(worker, &pem_line),
        "the key's PEM text in the worker"
    );
    let (ok, _, err) = finish_live(child, rx, true);
    assert!(ok, "{err}");
}

/// The state letter of process `pid` (`/proc/PID/stat`'s third field: `T` when stopped).
fn state(pid: u32) -> String {
    common::stat_fields(pid).swap_remove(0)
}

#[test]
fn ctrl_z_stops_the_worker_with_the_monitor_and_fg_goes_on() {
    zcrx_ring::require!(Need::Privileges);
    let lab = Lab::new().unwrap();
    let dir = fresh_dir("privsep-tstp");
    let file = dir.join("cap.pcap").display().to_string();
    let (child, rx, _) = start_live(&lab.b.netns, &["-i", &lab.b.iface, "-w", &file]);
    let (monitor, worker) = (child.id(), common::worker(child.id()));
    let signal = |name: &str| {
        assert!(Command::new("kill")
            .args([name, &monitor.to_string()])
            .status()
            .unwrap()
            .success());
    };
    let settled = |want: &dyn Fn(&str) -> bool| {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while !(want(&state(monitor)) && want(&state(worker))) {
            assert!(
                std::time::Instant::now() < deadline,
                "{} {}",
                state(monitor),
                state(worker)
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    };
    // The terminal's SIGTSTP reaches the monitor alone (the worker has a session of its
    // own): both stop; SIGCONT makes both go on.
    signal("-TSTP");
    settled(&|s| s == "T");
    signal("-CONT");
    settled(&|s| s != "T");
    common::send(
        &lab,
        &(0..20).map(|i| common::udp_frame(2, i)).collect::<Vec<_>>(),
    );
    std::thread::sleep(std::time::Duration::from_millis(300));
    let (ok, _, err) = finish_live(child, rx, true);
    assert!(ok, "{err}");
    assert_eq!(common::count(&err, " packets captured"), 20, "{err}");
}
