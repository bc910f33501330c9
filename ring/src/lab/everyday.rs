//! The everyday lab capture, zcap's `tcpdump_lines` yardstick: real programs' traffic in a
//! netns lab, captured by tcpdump on side a's veth (whole frames, every protocol) — curl to
//! nginx (GETs, a POST, a 404), dig to dnsmasq (A, AAAA, MX, TXT, NXDOMAIN over UDP, TCP and
//! IPv6), ssh to sshd (key auth, `true`), curl to vsftpd (anonymous login, LIST, RETR, passive),
//! to postfix (one mail) and to dovecot (POP3 LIST and RETR), a DHCP exchange (dhclient and
//! dnsmasq), chronyd as NTP client of chronyd, redis-cli to redis-server, a QUIC connection
//! (aioquic), ICMP echo, IPv6 neighbour discovery and a router solicitation, IPv6 with
//! hop-by-hop and destination options (scapy), a VXLAN tunnel with pings and a UDP datagram
//! through it, and a UDP probe to a closed port (ICMP port unreachable). Where the kernel has no
//! GRE or 802.1Q devices, their frames are made by scapy instead. A part whose program is not
//! installed is skipped, with its reason printed.
//!
//! The servers run in side b with the configuration files of `everyday/` (`@DIR@` the
//! capture's directory), each listening before its client runs.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::names::{in_ns, wait_listening};
use super::{on_path, Lab};

/// The programs the whole capture uses (`scripts/deps.sh` installs them).
pub const TOOLS: &[&str] = &[
    "tcpdump",
    "python3",
    "ss",
    "openssl",
    "curl",
    "nginx",
    "dig",
    "dnsmasq",
    "ssh",
    "sshd",
    "ssh-keygen",
    "vsftpd",
    "postfix",
    "dovecot",
    "dhclient",
    "chronyd",
    "redis-server",
    "redis-cli",
    "ping",
];

/// The Python modules the capture uses: aioquic (QUIC) and scapy (hand-made packets).
pub const PY_MODULES: &[&str] = &["aioquic", "scapy"];

/// The lab's IPv6 addresses (a ULA prefix) of sides a and b.
const A6: &str = "fd00:5a::1";
const B6: &str = "fd00:5a::2";

/// Configuration files and scripts, written into the capture's directory.
const FILES: &[(&str, &str)] = &[
    ("nginx.conf", include_str!("everyday/nginx.conf")),
    ("sshd_config", include_str!("everyday/sshd_config")),
    ("vsftpd.conf", include_str!("everyday/vsftpd.conf")),
    ("postfix/main.cf", include_str!("everyday/postfix-main.cf")),
    (
        "dovecot/dovecot.conf",
        include_str!("everyday/dovecot.conf"),
    ),
    ("dnsmasq.conf", include_str!("everyday/dnsmasq.conf")),
    (
        "chrony-server.conf",
        include_str!("everyday/chrony-server.conf"),
    ),
    (
        "chrony-client.conf",
        include_str!("everyday/chrony-client.conf"),
    ),
    ("quic_echo.py", include_str!("everyday/quic_echo.py")),
    ("crafted.py", include_str!("everyday/crafted.py")),
    ("redis.conf", include_str!("everyday/redis.conf")),
];

/// The mail the SMTP client sends and the POP3 server holds.
const MAIL: &str = "From: a@lab.example\r\nTo: b@lab.example\r\nSubject: everyday lab\r\n\r\n\
                    Hello from the lab.\r\n";

/// The servers' processes, stopped and killed when dropped.
struct Running {
    ns: String,
    children: Vec<(Child, Option<Vec<String>>)>,
}

impl Drop for Running {
    fn drop(&mut self) {
        for (child, stop) in &mut self.children {
            if let Some(stop) = stop {
                let args: Vec<&str> = stop.iter().map(String::as_str).collect();
                let _ = in_ns(&self.ns, &args).output();
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Makes the lab's traffic and captures it on side a into `dir/everyday.pcap`, which it
/// returns. Needs root; a part whose program is missing is skipped (printed).
pub fn everyday_capture(dir: &Path) -> PathBuf {
    let started = Instant::now();
    let lab = Lab::new().expect("lab");
    let (a, b) = (lab.a.netns.clone(), lab.b.netns.clone());
    prepare(&lab, dir);
    let pcap = dir.join("everyday.pcap");
    let mut tcpdump = in_ns(
        &a,
        &[
            "tcpdump",
            "-i",
            &lab.a.iface,
            "--immediate-mode",
            "-U",
            "-w",
            "everyday.pcap",
        ],
    )
    .current_dir(dir)
    .stdout(Stdio::null())
    .stderr(File::create(dir.join("tcpdump.log")).unwrap())
    .spawn()
    .expect("tcpdump");
    wait_for_header(&pcap);
    ipv6_addresses(&lab);
    let servers = start_servers(&b, &lab.b.iface, dir);
    let parts: [(&str, &dyn Fn()); 14] = [
        ("ICMP echo", &|| {
            run(&a, &["ping", "-c", "2", "-i", "0.2", "198.18.0.2"])
        }),
        ("HTTP", &|| http(&a)),
        ("DNS", &|| dns(&a)),
        ("SSH", &|| ssh(&a, dir)),
        ("FTP", &|| ftp(&a)),
        ("SMTP", &|| smtp(&a, dir)),
        ("POP3", &|| pop3(&a)),
        ("RESP", &|| redis(&a)),
        ("QUIC", &|| quic(&a, dir)),
        ("NTP", &|| ntp(&a, dir)),
        ("DHCP", &|| dhcp(&a, &lab.a.iface, dir)),
        ("IPv6", &|| ipv6(&lab, dir)),
        ("tunnels", &|| tunnels(&lab, dir)),
        ("UDP to a closed port", &|| closed_port(&a)),
    ];
    for (name, part) in parts {
        let t = Instant::now();
        part();
        eprintln!(
            "everyday: {name} done in {:.1} s",
            t.elapsed().as_secs_f64()
        );
    }
    std::thread::sleep(Duration::from_millis(1000));
    let _ = Command::new("kill")
        .args(["-INT", &tcpdump.id().to_string()])
        .status();
    let _ = tcpdump.wait();
    drop(servers);
    eprintln!(
        "everyday: capture made in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    pcap
}

/// Whether `tool` is installed; prints why its part is skipped when not.
fn have(part: &str, tool: &str) -> bool {
    let ok = on_path(tool);
    if !ok {
        eprintln!("everyday: skipping {part}: `{tool}` is not installed (scripts/deps.sh)");
    }
    ok
}

/// Runs a client in `ns` to completion (at most 15 s); its output goes to nowhere, a failure
/// is printed (the capture is what counts).
fn run(ns: &str, args: &[&str]) {
    if !have(args[0], args[0]) {
        return;
    }
    let out = in_ns(ns, &[&["timeout", "15"], args].concat())
        .stdin(Stdio::null())
        .output()
        .expect("run a client");
    if !out.status.success() {
        eprintln!(
            "everyday: {args:?}: {}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
}

/// The directory's files: configurations, web and FTP content, keys, a certificate, a
/// mailbox.
fn prepare(lab: &Lab, dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    // The FTP and POP3 servers read their files as unprivileged users.
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let d = dir.display().to_string();
    for sub in [
        "www",
        "ftp",
        "empty",
        "nginx-tmp",
        "postfix/data",
        "postfix/queue",
        "dovecot/mail/new",
        "dovecot/mail/cur",
        "dovecot/mail/tmp",
    ] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
    }
    for (name, text) in FILES {
        let text = text.replace("@DIR@", &d).replace("@IFACE@", &lab.b.iface);
        std::fs::write(dir.join(name), text).unwrap();
    }
    let _ = std::fs::copy("/etc/postfix/master.cf", dir.join("postfix/master.cf"));
    std::fs::write(dir.join("www/index.html"), "<p>everyday lab</p>\n").unwrap();
    std::fs::write(dir.join("www/notes.txt"), "one\ntwo\nthree\n".repeat(200)).unwrap();
    std::fs::write(dir.join("ftp/readme.txt"), "a file over FTP\n".repeat(40)).unwrap();
    std::fs::write(dir.join("mail.txt"), MAIL).unwrap();
    std::fs::write(dir.join("dovecot/mail/new/1.lab"), MAIL).unwrap();
    // Debian's nobody and nogroup (65534) own the mailbox; postfix its data directory.
    let passwd = format!("lab:{{PLAIN}}labpass:65534:65534::{d}/dovecot::\n");
    std::fs::write(dir.join("dovecot/passwd"), passwd).unwrap();
    let _ = Command::new("chown")
        .args(["-R", "65534:65534", &format!("{d}/dovecot/mail")])
        .status();
    let _ = Command::new("chown")
        .args(["postfix", &format!("{d}/postfix/data")])
        .status();
    for key in ["hostkey", "userkey"] {
        let _ = Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-f", &format!("{d}/{key}")])
            .stdin(Stdio::null())
            .status();
    }
    let _ = std::fs::copy(dir.join("userkey.pub"), dir.join("authorized_keys"));
    super::names::self_signed(dir);
    // sshd's privilege separation directory, made by its service otherwise.
    let _ = std::fs::create_dir_all("/run/sshd");
}

/// IPv6 addresses on both sides (ULA and link-local, no DAD), added once tcpdump listens so
/// that every multicast listener report they cause is in the capture.
fn ipv6_addresses(lab: &Lab) {
    for (side, v6) in [(&lab.a, A6), (&lab.b, B6)] {
        let ll = if v6 == A6 { "fe80::1/64" } else { "fe80::2/64" };
        for addr in [format!("{v6}/64"), ll.to_string()] {
            side.ip(&["addr", "add", &addr, "dev", &side.iface, "nodad"])
                .unwrap();
        }
    }
}

/// The servers of side b: command line, what each listens on (`PROTO LOCAL`, comma
/// separated), and a command that stops it before its process is killed (`@DIR@` the
/// capture's directory, `@IFACE@` side b's veth).
const SERVERS: &[(&str, &str, &str)] = &[
    (
        "nginx -e @DIR@/nginx.err -c @DIR@/nginx.conf",
        "tcp 198.18.0.2:80",
        "",
    ),
    (
        "dnsmasq -C @DIR@/dnsmasq.conf --user=root",
        "udp 198.18.0.2:53, tcp 198.18.0.2:53, udp %@IFACE@:67",
        "",
    ),
    // sshd re-executes itself, which needs its absolute path.
    (
        "/usr/sbin/sshd -D -e -f @DIR@/sshd_config",
        "tcp 198.18.0.2:22",
        "",
    ),
    ("vsftpd @DIR@/vsftpd.conf", "tcp 198.18.0.2:21", ""),
    // postfix's master outlives the script that starts it.
    (
        "postfix -c @DIR@/postfix start-fg",
        "tcp 198.18.0.2:25",
        "postfix -c @DIR@/postfix stop",
    ),
    (
        "dovecot -F -c @DIR@/dovecot/dovecot.conf",
        "tcp 198.18.0.2:110",
        "",
    ),
    // -x: the server's clock is never set.
    (
        "chronyd -d -x -u root -f @DIR@/chrony-server.conf",
        "udp 198.18.0.2:123",
        "",
    ),
    ("redis-server @DIR@/redis.conf", "tcp 198.18.0.2:6379", ""),
    (
        "python3 @DIR@/quic_echo.py server 198.18.0.2 443 @DIR@/cert.pem @DIR@/key.pem",
        "udp 198.18.0.2:443",
        "",
    ),
];

/// Starts each server of [`SERVERS`] whose program is installed in `ns`, then waits until
/// each listens.
fn start_servers(ns: &str, iface: &str, dir: &Path) -> Running {
    let d = dir.display().to_string();
    let fill = |t: &str| t.replace("@DIR@", &d).replace("@IFACE@", iface);
    let mut running = Running {
        ns: ns.to_string(),
        children: Vec::new(),
    };
    let mut waits = Vec::new();
    for (command, listens, stop) in SERVERS {
        let command = fill(command);
        let args: Vec<&str> = command.split_whitespace().collect();
        let name = args[0].rsplit('/').next().unwrap();
        if !have(&format!("the {name} server"), name) {
            continue;
        }
        let log = File::create(dir.join(format!("{name}.log"))).unwrap();
        let child = in_ns(ns, &args)
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("spawn a server");
        let stop = (!stop.is_empty()).then(|| fill(stop).split(' ').map(String::from).collect());
        running.children.push((child, stop));
        waits.extend(listens.split(", ").map(fill));
    }
    for wait in waits {
        let (proto, local) = wait.split_once(' ').unwrap();
        wait_listening(ns, proto, local);
    }
    running
}

/// Until tcpdump has written the file's header (it listens from then on).
fn wait_for_header(pcap: &Path) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::fs::metadata(pcap).map_or(true, |m| m.len() < 24) {
        assert!(Instant::now() < deadline, "tcpdump did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
}

/// curl to nginx: two GETs on one connection, a POST, a 404.
fn http(a: &str) {
    let o = ["-s", "-o", "/dev/null"];
    run(
        a,
        &[
            &["curl"],
            &o[..],
            &["http://198.18.0.2/", "http://198.18.0.2/notes.txt"],
        ]
        .concat(),
    );
    run(
        a,
        &[
            &["curl"],
            &o[..],
            &["-d", "name=lab&x=1", "http://198.18.0.2/form"],
        ]
        .concat(),
    );
    run(
        a,
        &[&["curl"], &o[..], &["http://198.18.0.2/missing"]].concat(),
    );
}

/// dig to dnsmasq: A, AAAA, MX, TXT and a missing name over UDP (EDNS, dig's default), two
/// over TCP, one without EDNS, one over IPv6.
fn dns(a: &str) {
    for q in [
        &["@198.18.0.2", "www.lab.example", "A"][..],
        &["@198.18.0.2", "www.lab.example", "AAAA"],
        &["@198.18.0.2", "lab.example", "MX"],
        &["@198.18.0.2", "lab.example", "TXT"],
        &["@198.18.0.2", "gone.lab.example", "A"],
        &["@198.18.0.2", "+noedns", "mail.lab.example", "A"],
        &["@198.18.0.2", "+tcp", "lab.example", "MX"],
        &["@198.18.0.2", "+tcp", "gone.lab.example", "TXT"],
        &["@fd00:5a::2", "www.lab.example", "AAAA"],
    ] {
        run(a, &[&["dig", "+tries=1", "+time=2"], q].concat());
    }
}

/// ssh to sshd with the throwaway key: `true`.
fn ssh(a: &str, dir: &Path) {
    let key = dir.join("userkey").display().to_string();
    let opts = [
        "-o",
        "StrictHostKeyChecking=no",
        "-o",
        "UserKnownHostsFile=/dev/null",
        "-o",
        "BatchMode=yes",
        "-o",
        "IdentitiesOnly=yes",
        "-o",
        "LogLevel=ERROR",
    ];
    run(
        a,
        &[
            &["ssh", "-i", &key],
            &opts[..],
            &["root@198.18.0.2", "true"],
        ]
        .concat(),
    );
}

/// curl to vsftpd, passive mode, anonymous login: LIST, then RETR.
fn ftp(a: &str) {
    let login = [
        "--user",
        "anonymous:lab@lab.example",
        "--ftp-pasv",
        "-s",
        "-o",
        "/dev/null",
    ];
    for url in ["ftp://198.18.0.2/", "ftp://198.18.0.2/readme.txt"] {
        run(a, &[&["curl"], &login[..], &[url]].concat());
    }
}

/// curl to postfix: one mail.
fn smtp(a: &str, dir: &Path) {
    let mail = dir.join("mail.txt").display().to_string();
    run(
        a,
        &[
            "curl",
            "-s",
            "smtp://198.18.0.2/lab.example",
            "--mail-from",
            "a@lab.example",
            "--mail-rcpt",
            "b@lab.example",
            "-T",
            &mail,
        ],
    );
}

/// curl to dovecot: LIST, then RETR of message 1.
fn pop3(a: &str) {
    for url in ["pop3://198.18.0.2/", "pop3://198.18.0.2/1"] {
        run(
            a,
            &[
                "curl",
                "-s",
                "-o",
                "/dev/null",
                "--user",
                "lab:labpass",
                url,
            ],
        );
    }
}

/// redis-cli: PING, SET, GET.
fn redis(a: &str) {
    for cmd in [&["PING"][..], &["SET", "lab", "everyday"], &["GET", "lab"]] {
        run(a, &[&["redis-cli", "-h", "198.18.0.2"], cmd].concat());
    }
}

/// aioquic: a handshake, one stream echoed, a ping, a close; on port 443, where tcpdump
/// reads QUIC.
fn quic(a: &str, dir: &Path) {
    let script = dir.join("quic_echo.py").display().to_string();
    run(a, &["python3", &script, "client", "198.18.0.2", "443"]);
}

/// chronyd as a one-shot NTP client (-Q: measure, never set the clock).
fn ntp(a: &str, dir: &Path) {
    let conf = dir.join("chrony-client.conf").display().to_string();
    run(a, &["chronyd", "-Q", "-u", "root", "-t", "10", "-f", &conf]);
}

/// dhclient: DISCOVER, OFFER, REQUEST, ACK, then a RELEASE; the lease is not applied.
fn dhcp(a: &str, iface: &str, dir: &Path) {
    let d = dir.display().to_string();
    let (lf, pf) = (format!("{d}/dhclient.leases"), format!("{d}/dhclient.pid"));
    let common = ["-4", "-sf", "/bin/true", "-lf", &lf, "-pf", &pf];
    // -1: one try, then into the background once bound; -r releases and stops it.
    run(a, &[&["dhclient", "-1"], &common[..], &[iface]].concat());
    run(a, &[&["dhclient", "-r"], &common[..], &[iface]].concat());
    if let Ok(pid) = std::fs::read_to_string(&pf) {
        let _ = Command::new("kill")
            .arg(pid.trim())
            .stderr(Stdio::null())
            .status();
    }
}

/// ICMPv6 echo over the ULA addresses (with neighbour discovery), a router solicitation, and
/// UDP behind hop-by-hop and destination options headers.
fn ipv6(lab: &Lab, dir: &Path) {
    run(&lab.a.netns, &["ping", "-6", "-c", "2", "-i", "0.2", B6]);
    crafted(lab, dir, &["rs", "ext6"]);
}

/// Frames made by scapy on side a's veth (kinds of `crafted.py`).
fn crafted(lab: &Lab, dir: &Path, kinds: &[&str]) {
    let script = dir.join("crafted.py").display().to_string();
    let mac = lab.b.mac.map(|b| format!("{b:02x}")).join(":");
    run(
        &lab.a.netns,
        &[&["python3", &script, &lab.a.iface, &mac], kinds].concat(),
    );
}

/// A datagram from side a to `to` (`ADDR:PORT`), with IP TTL `ttl`.
fn datagram(ns: &str, to: &str, ttl: u8, text: &str) {
    let (addr, port) = to.rsplit_once(':').unwrap();
    let py = format!(
        "import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); \
         s.setsockopt(socket.IPPROTO_IP, socket.IP_TTL, {ttl}); \
         s.sendto(b'{text}', ('{addr}', {port}))"
    );
    run(ns, &["python3", "-c", &py]);
}

/// A VXLAN tunnel (198.19.2.0/24 inside) with pings and a UDP datagram; GRE and 802.1Q
/// through `ip link` where the kernel has them, else their frames from scapy.
fn tunnels(lab: &Lab, dir: &Path) {
    let mut made = true;
    for (side, peer, inner) in [
        (&lab.a, &lab.b, "198.19.2.1/24"),
        (&lab.b, &lab.a, "198.19.2.2/24"),
    ] {
        let (local, remote) = (side.ip.to_string(), peer.ip.to_string());
        let add = [
            "link",
            "add",
            "vxlab",
            "type",
            "vxlan",
            "id",
            "42",
            "local",
            &local,
            "remote",
            &remote,
            "dstport",
            "4789",
            "dev",
            &side.iface,
        ];
        made &= side.ip(&add).is_ok()
            && side
                .ip(&["link", "set", "vxlab", "addrgenmode", "none"])
                .is_ok()
            && side.ip(&["addr", "add", inner, "dev", "vxlab"]).is_ok()
            && side.ip(&["link", "set", "vxlab", "up"]).is_ok();
    }
    if made {
        run(
            &lab.a.netns,
            &["ping", "-c", "2", "-i", "0.2", "198.19.2.2"],
        );
        datagram(&lab.a.netns, "198.19.2.2:9999", 64, "inside VXLAN");
    } else {
        eprintln!("everyday: skipping VXLAN: this kernel cannot make a vxlan device");
    }
    // GRE and 802.1Q frames come from scapy on every kernel, so the capture does not depend
    // on which tunnel devices the kernel can make.
    for (kind, args) in [
        ("gre", "type gre local 198.18.0.1 remote 198.18.0.2"),
        ("vlan", "link IFACE type vlan id 10"),
    ] {
        let args = args.replace("IFACE", &lab.a.iface);
        let probe = [
            &["link", "add", "zxprobe"][..],
            &args.split(' ').collect::<Vec<_>>(),
        ]
        .concat();
        if lab.a.ip(&probe).is_ok() {
            let _ = lab.a.ip(&["link", "del", "zxprobe"]);
        } else {
            eprintln!("everyday: this kernel makes no {kind} devices; scapy makes the frames");
        }
    }
    crafted(lab, dir, &["gre", "vlan"]);
}

/// UDP probes to a closed port (traceroute's first probes), answered by ICMP port
/// unreachable.
fn closed_port(a: &str) {
    for (port, ttl) in [(33434, 1), (33435, 2), (33436, 3)] {
        datagram(a, &format!("198.18.0.2:{port}"), ttl, "probe");
    }
}
