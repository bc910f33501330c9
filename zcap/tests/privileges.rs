//! Least privilege and the sandbox, in the netns lab: a capture started as root ends its
//! set-up with no capability, no new privileges and a seccomp filter, and cannot write
//! outside its `-w` directory; `--no-sandbox` lifts the sandbox but not the capability drop;
//! an ordinary user captures holding only CAP_NET_RAW, through file capabilities and
//! through ambient capabilities, and without it is told what is missing; `-z` commands run
//! outside the sandbox. Fail under CI=true instead of skipping.

use crate::common;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::{count, finish_live, fresh_dir, send, start_live_as};
use zcrx_ring::lab::{Lab, Need};

/// The user the unprivileged captures run as.
const NOBODY: &str = "65534";

/// The fields of `/proc/PID/status` that say what a process may do.
struct Status {
    cap: [u64; 5],
    no_new_privs: u32,
    seccomp: u32,
    uid: String,
}

fn status(pid: u32) -> Status {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{name}:")))
            .unwrap_or_else(|| panic!("{name} in {text}"))
            .trim()
            .to_string()
    };
    let hex = |name: &str| u64::from_str_radix(&field(name), 16).unwrap();
    Status {
        cap: ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"].map(hex),
        no_new_privs: field("NoNewPrivs").parse().unwrap(),
        seccomp: field("Seccomp").parse().unwrap(),
        uid: field("Uid").split_whitespace().next().unwrap().to_string(),
    }
}

/// A directory anyone may write (for captures as nobody).
fn open_dir(name: &str) -> PathBuf {
    let d = fresh_dir(name);
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o777)).unwrap();
    let mut p = d.parent();
    while let Some(dir) = p {
        // Every parent must let nobody through (the test's temporary root is 0755).
        let mode = std::fs::metadata(dir).unwrap().mode();
        assert!(
            mode & 0o001 != 0,
            "{} is not searchable by others",
            dir.display()
        );
        p = dir.parent();
    }
    d
}

/// A copy of zcap that nobody may run (the build's own lies under root's home).
fn zcap_copy(dir: &Path) -> String {
    let to = dir.join("zcap");
    std::fs::copy(common::bin(), &to).unwrap();
    std::fs::set_permissions(&to, std::fs::Permissions::from_mode(0o755)).unwrap();
    to.display().to_string()
}

/// Captures `frames` UDP frames on the lab's interface b with zcap `bin` run through
/// `wrapper`, `-w DIR/cap.pcap` and `extra`; returns zcap's status while capturing, whether
/// it exited 0, and its standard error.
fn capture(
    lab: &Lab,
    wrapper: &[&str],
    bin: &str,
    dir: &Path,
    extra: &[&str],
    frames: u32,
) -> (Status, bool, String) {
    let file = dir.join("cap.pcap").display().to_string();
    let mut args = vec!["-i", lab.b.iface.as_str(), "-w", &file];
    args.extend_from_slice(extra);
    let (child, rx, startup) = start_live_as(&lab.b.netns, wrapper, bin, &args);
    // The "listening" line comes after the set-up: the process is confined by now.
    let st = status(child.id());
    let sent: Vec<Vec<u8>> = (0..frames).map(frame).collect();
    send(lab, &sent);
    std::thread::sleep(Duration::from_millis(300));
    let (ok, _, err) = finish_live(child, rx, true);
    (st, ok, format!("{startup}{err}"))
}

/// Frame `i` of a capture: UDP over 8 flows, about 1 KB (a 1 MB `-C` file every thousand).
fn frame(i: u32) -> Vec<u8> {
    let builder = etherparse::PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
        .ipv4([198, 18, 0, 1], [198, 18, 0, 2], 64)
        .udp(5000 + (i % 8) as u16, 9000);
    let mut payload = vec![0u8; 960];
    payload[..4].copy_from_slice(&i.to_be_bytes());
    let mut out = Vec::with_capacity(builder.size(payload.len()));
    builder.write(&mut out, &payload).unwrap();
    out
}

/// Packets in `file`, as tcpdump reads it.
fn tcpdump_count(file: &Path) -> usize {
    let o = Command::new("tcpdump")
        .args(["-n", "-r"])
        .arg(file)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).lines().count()
}

#[test]
fn a_root_capture_ends_set_up_with_no_capability_in_the_sandbox() {
    zcrx_ring::require!(Need::Privileges, Need::Tool("tcpdump"));
    let lab = Lab::new().unwrap();
    let dir = fresh_dir("priv-root");
    let outside = fresh_dir("priv-root-outside").join("probe");
    let probe = outside.display().to_string();
    let (st, ok, err) = capture(
        &lab,
        &[],
        &common::bin(),
        &dir,
        &["--sandbox-probe", &probe],
        200,
    );
    assert!(ok, "{err}");
    assert_eq!(st.uid, "0");
    assert_eq!(st.cap, [0; 5], "CapInh/Prm/Eff/Bnd/Amb: {err}");
    assert_eq!(st.no_new_privs, 1);
    assert_eq!(st.seccomp, 2);
    assert!(!outside.exists(), "{err}");
    assert!(
        err.contains(&format!("sandbox probe: {probe}: Permission denied")),
        "{err}"
    );
    assert_eq!(count(&err, " packets captured"), 200, "{err}");
    assert_eq!(tcpdump_count(&dir.join("cap.pcap")), 200);
}

#[test]
fn no_sandbox_leaves_the_filter_off_and_still_drops_every_capability() {
    zcrx_ring::require!();
    let lab = Lab::new().unwrap();
    let dir = fresh_dir("priv-nosandbox");
    let outside = fresh_dir("priv-nosandbox-outside").join("probe");
    let probe = outside.display().to_string();
    let (st, ok, err) = capture(
        &lab,
        &[],
        &common::bin(),
        &dir,
        &["--no-sandbox", "--sandbox-probe", &probe],
        50,
    );
    assert!(ok, "{err}");
    assert_eq!(st.cap[..3], [0; 3], "CapInh/Prm/Eff: {err}");
    assert_eq!((st.no_new_privs, st.seccomp), (0, 0));
    assert!(outside.exists(), "{err}");
    assert_eq!(count(&err, " packets captured"), 50, "{err}");
}

/// nobody, through `setpriv`: its own user and group, no supplementary groups.
const AS_NOBODY: [&str; 4] = [
    "setpriv",
    "--reuid=65534",
    "--regid=65534",
    "--clear-groups",
];

#[test]
fn an_ordinary_user_captures_with_file_capabilities() {
    zcrx_ring::require!(
        Need::Privileges,
        Need::Tool("setcap"),
        Need::Tool("setpriv"),
        Need::Tool("tcpdump")
    );
    let lab = Lab::new().unwrap();
    let dir = open_dir("priv-filecaps");
    let bin = zcap_copy(&dir);
    let o = Command::new("setcap")
        .args(["cap_net_raw=ep", &bin])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Two fanout shards, promiscuous (the default): CAP_NET_RAW is all they need.
    let (st, ok, err) = capture(&lab, &AS_NOBODY, &bin, &dir, &["--shards", "2"], 300);
    assert!(ok, "{err}");
    assert_eq!(st.uid, NOBODY);
    assert_eq!(st.cap[..3], [0; 3], "CapInh/Prm/Eff after set-up: {err}");
    assert_eq!(st.seccomp, 2);
    assert_eq!(count(&err, " packets captured"), 300, "{err}");
    let file = dir.join("cap.pcap");
    assert_eq!(std::fs::metadata(&file).unwrap().uid(), 65534);
    assert_eq!(tcpdump_count(&file), 300);
}

#[test]
fn an_ordinary_user_captures_with_ambient_capabilities() {
    zcrx_ring::require!(
        Need::Privileges,
        Need::Tool("setpriv"),
        Need::Tool("tcpdump")
    );
    let lab = Lab::new().unwrap();
    let dir = open_dir("priv-ambient");
    let bin = zcap_copy(&dir);
    // As systemd's AmbientCapabilities=CAP_NET_RAW hands it over.
    let mut wrapper = AS_NOBODY.to_vec();
    wrapper.extend(["--inh-caps=+net_raw", "--ambient-caps=+net_raw"]);
    let (st, ok, err) = capture(&lab, &wrapper, &bin, &dir, &[], 300);
    assert!(ok, "{err}");
    assert_eq!(st.uid, NOBODY);
    assert_eq!(st.cap, {
        let mut c = [0; 5];
        c[3] = st.cap[3]; // the bounding set is not nobody's to clear
        c
    });
    assert_eq!(count(&err, " packets captured"), 300, "{err}");
    assert_eq!(tcpdump_count(&dir.join("cap.pcap")), 300);
}

#[test]
fn an_ordinary_user_without_the_capability_is_told_what_is_missing() {
    zcrx_ring::require!(Need::Privileges, Need::Tool("setpriv"));
    let lab = Lab::new().unwrap();
    let dir = open_dir("priv-none");
    let bin = zcap_copy(&dir);
    let o = Command::new("ip")
        .args(["netns", "exec", &lab.b.netns])
        .args(AS_NOBODY)
        .args([&bin, "-i", &lab.b.iface, "-w"])
        .arg(dir.join("cap.pcap"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("CAP_NET_RAW"), "{err}");
}

#[test]
fn hooks_run_outside_the_sandbox_that_holds_the_capture() {
    zcrx_ring::require!(Need::Privileges, Need::Tool("tcpdump"));
    let lab = Lab::new().unwrap();
    let dir = fresh_dir("priv-hook");
    let elsewhere = fresh_dir("priv-hook-elsewhere");
    // The hook copies each closed file out of the -w directory: a write the capture itself
    // may not make.
    let hook = dir.join("hook.sh");
    std::fs::write(
        &hook,
        format!("#!/bin/sh\ncp \"$1\" {}/\n", elsewhere.display()),
    )
    .unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    let hook = hook.display().to_string();
    let (st, ok, err) = capture(
        &lab,
        &[],
        &common::bin(),
        &dir,
        &["-C", "1", "-z", &hook],
        3000,
    );
    assert!(ok, "{err}");
    assert_eq!(st.seccomp, 2);
    let copied = std::fs::read_dir(&elsewhere).unwrap().count();
    let files = std::fs::read_dir(&dir)
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            name.to_string_lossy().starts_with("cap.pcap")
        })
        .count();
    assert!(copied >= 2, "{files} files, {copied} copied: {err}");
    // Every file but the last (still open at the end) was closed by a rotation.
    assert_eq!(copied, files - 1, "one copy per rotated file: {err}");
}
