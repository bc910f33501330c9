//! A test lab: two network namespaces joined by a veth pair, addresses from the RFC 2544
//! benchmarking range 198.18.0.0/15. Names are unique per process and lab so tests can run in
//! parallel; everything is deleted when the [`Lab`] is dropped. Needs root (CAP_SYS_ADMIN and
//! CAP_NET_ADMIN) and iproute2's `ip`.

use std::fs::File;
use std::io;
use std::net::Ipv4Addr;
use std::os::fd::AsRawFd;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::sys;

pub mod everyday;
pub mod names;

static NEXT_LAB: AtomicU32 = AtomicU32::new(0);

/// One end of the lab.
#[derive(Debug, Clone)]
pub struct Side {
    /// Network namespace name (`ip netns`).
    pub netns: String,
    /// veth interface name inside it.
    pub iface: String,
    /// IPv4 address (/24).
    pub ip: Ipv4Addr,
    /// The interface's MAC address.
    pub mac: [u8; 6],
}

impl Side {
    /// Runs `f` on a thread that has entered this side's network namespace and returns its
    /// result. Sockets opened there stay in that namespace when used from other threads.
    pub fn run<T: Send>(&self, f: impl FnOnce() -> T + Send) -> io::Result<T> {
        let ns = File::open(format!("/run/netns/{}", self.netns))?;
        std::thread::scope(|s| {
            s.spawn(|| {
                sys::setns_net(ns.as_raw_fd())?;
                Ok(f())
            })
            .join()
            .map_err(|_| io::Error::other("lab thread panicked"))?
        })
    }

    /// Runs `ip` inside this side's namespace.
    pub fn ip(&self, args: &[&str]) -> io::Result<String> {
        let mut full = vec!["-n", self.netns.as_str()];
        full.extend_from_slice(args);
        ip(&full)
    }
}

/// Two namespaces `a` and `b` with a veth pair between them.
#[derive(Debug)]
pub struct Lab {
    /// Sender side (198.18.0.1).
    pub a: Side,
    /// Receiver side (198.18.0.2).
    pub b: Side,
}

/// Runs `ip ARGS` and returns its stdout; a failure carries `ip`'s stderr.
pub fn ip(args: &[&str]) -> io::Result<String> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| io::Error::new(e.kind(), format!("running `ip` (install iproute2): {e}")))?;
    if !out.status.success() {
        return Err(io::Error::other(format!(
            "`ip {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn parse_mac(s: &str) -> Option<[u8; 6]> {
    let mut mac = [0u8; 6];
    let mut parts = s.split(':');
    for b in &mut mac {
        *b = u8::from_str_radix(parts.next()?, 16).ok()?;
    }
    parts.next().is_none().then_some(mac)
}

impl Lab {
    /// Creates the namespaces and the veth pair, brings them up without IPv6 (no router or
    /// neighbour solicitations to disturb packet counts), and reads the MACs.
    pub fn new() -> io::Result<Lab> {
        let n = NEXT_LAB.fetch_add(1, Ordering::Relaxed);
        Lab::named(&format!("{}x{n}", std::process::id() % 1_000_000))
    }

    /// A lab whose names derive from `tag` (namespaces `zcrx{tag}a`/`b`, interfaces
    /// `zx{tag}a`/`b`; `tag` at most 11 characters so interface names fit IFNAMSIZ).
    pub fn named(tag: &str) -> io::Result<Lab> {
        if tag.len() > 11 || !tag.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("lab tag {tag:?}: at most 11 of [A-Za-z0-9-]"),
            ));
        }
        let a = Side {
            netns: format!("zcrx{tag}a"),
            iface: format!("zx{tag}a"),
            ip: Ipv4Addr::new(198, 18, 0, 1),
            mac: [0; 6],
        };
        let b = Side {
            netns: format!("zcrx{tag}b"),
            iface: format!("zx{tag}b"),
            ip: Ipv4Addr::new(198, 18, 0, 2),
            mac: [0; 6],
        };
        // Build `lab` first so a failure part-way still deletes what exists.
        let mut lab = Lab { a, b };
        for s in [&lab.a, &lab.b] {
            ip(&["netns", "add", &s.netns])?;
        }
        ip(&[
            "link",
            "add",
            &lab.a.iface,
            "netns",
            &lab.a.netns,
            "type",
            "veth",
            "peer",
            "name",
            &lab.b.iface,
            "netns",
            &lab.b.netns,
        ])?;
        for s in [&lab.a, &lab.b] {
            s.ip(&["link", "set", &s.iface, "addrgenmode", "none"])?;
            s.ip(&["addr", "add", &format!("{}/24", s.ip), "dev", &s.iface])?;
            s.ip(&["link", "set", "lo", "up"])?;
            s.ip(&["link", "set", &s.iface, "up"])?;
        }
        for s in [&mut lab.a, &mut lab.b] {
            let out = s.ip(&["-o", "link", "show", &s.iface])?;
            let mac = out
                .split_whitespace()
                .skip_while(|w| *w != "link/ether")
                .nth(1)
                .and_then(parse_mac)
                .ok_or_else(|| io::Error::other(format!("no MAC in `ip link show`: {out}")))?;
            s.mac = mac;
        }
        Ok(lab)
    }

    /// An existing lab made by [`Lab::named`] with `tag` (after [`Lab::keep`]), re-read from
    /// the system.
    pub fn open(tag: &str) -> io::Result<Lab> {
        let side = |s: &str, ip| -> io::Result<Side> {
            let mut side = Side {
                netns: format!("zcrx{tag}{s}"),
                iface: format!("zx{tag}{s}"),
                ip,
                mac: [0; 6],
            };
            let out = side.ip(&["-o", "link", "show", &side.iface])?;
            side.mac = out
                .split_whitespace()
                .skip_while(|w| *w != "link/ether")
                .nth(1)
                .and_then(parse_mac)
                .ok_or_else(|| io::Error::other(format!("no MAC in `ip link show`: {out}")))?;
            Ok(side)
        };
        Ok(Lab {
            a: side("a", Ipv4Addr::new(198, 18, 0, 1))?,
            b: side("b", Ipv4Addr::new(198, 18, 0, 2))?,
        })
    }

    /// Leaves the namespaces in place when this value is dropped (`rxbench lab up`).
    pub fn keep(self) {
        std::mem::forget(self);
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        // Deleting a namespace destroys the veth end inside it and, with it, the peer.
        for s in [&self.a, &self.b] {
            let _ = ip(&["netns", "del", &s.netns]);
        }
    }
}

/// Whether this process can run the privileged tests: root-equivalent capabilities for
/// AF_PACKET and netns, and `ip` on the PATH. `Err` says what is missing.
pub fn privileged_ready() -> Result<(), String> {
    if !sys::has_cap_net_raw() {
        return Err("CAP_NET_RAW is missing (run the tests as root)".into());
    }
    if !std::path::Path::new("/run/netns").exists()
        && std::fs::create_dir_all("/run/netns").is_err()
    {
        return Err("cannot create /run/netns (needs root)".into());
    }
    match Command::new("ip").arg("-V").output() {
        Ok(o) if o.status.success() => Ok(()),
        _ => Err("iproute2's `ip` is not installed".into()),
    }
}

/// What a test needs from the machine before it can run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need<'a> {
    /// Root-equivalent capabilities for AF_PACKET and netns, and iproute2 ([`privileged_ready`]).
    Privileges,
    /// A program on the `PATH` (`tcpdump`, `tshark`, `nfdump`...), installed by `scripts/deps.sh`.
    Tool(&'a str),
}

/// Whether `program` is an executable file in one of the `PATH`'s directories.
pub fn on_path(program: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| {
            std::fs::metadata(dir.join(program))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    })
}

fn missing(need: Need<'_>) -> Option<String> {
    match need {
        Need::Privileges => privileged_ready().err(),
        Need::Tool(tool) => (!on_path(tool))
            .then(|| format!("`{tool}` is not installed (scripts/deps.sh installs it)")),
    }
}

/// The test harness's one guard. Returns `true` when every need is met. Otherwise it prints
/// `SKIPPED test: why` and returns `false` (skip) — unless `CI=true`, where a skip is a
/// failure and it panics: CI runs as root with every tool installed, so a test must really
/// run there. [`require!`](crate::require) calls it with the test's own name.
pub fn require(test: &str, needs: &[Need<'_>]) -> bool {
    match needs.iter().find_map(|n| missing(*n)) {
        None => true,
        Some(why) => skip(test, &why),
    }
}

/// [`require`] for Python modules a test uses as its oracle (`communityid`, `ja4plus`...),
/// installed by `scripts/deps.sh`: each must import in `python3`.
pub fn require_python(test: &str, modules: &[&str]) -> bool {
    let missing: Vec<&str> = modules
        .iter()
        .copied()
        .filter(|m| {
            !Command::new("python3")
                .args(["-c", &format!("import {m}")])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        })
        .collect();
    if missing.is_empty() {
        return true;
    }
    let why = format!("python3 modules {missing:?} are missing (scripts/deps.sh installs them)");
    skip(test, &why)
}

/// Runs a test's reference implementation, `program args...`, with `input` on its standard
/// input and returns its standard output's lines. The input is written from a thread: a
/// reference that answers line by line would otherwise fill both pipes. A reference that
/// fails panics with its standard error.
pub fn oracle_lines(program: &str, args: &[&str], input: String) -> Vec<String> {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    let mut stdin = child.stdin.take().expect("piped");
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().expect("the reference's output");
    writer
        .join()
        .expect("the writer")
        .expect("writing the input");
    assert!(
        out.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

/// Prints `SKIPPED test: why` and returns `false`; panics under `CI=true`.
fn skip(test: &str, why: &str) -> bool {
    if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
        panic!("{test}: cannot run under CI=true: {why}");
    }
    eprintln!("SKIPPED {test}: {why}");
    false
}

/// [`require`] for a kernel feature that the running kernel refuses to root: `refused` is
/// its answer to a probe (`None`: allowed). A missing privilege, tool or module is the
/// set-up's to fix and fails under `CI=true`; a kernel that refuses a feature even to root
/// (a sandboxed or locked-down kernel) is the machine's policy, which no set-up changes: the
/// test is skipped, under `CI=true` too, and says which feature and why.
pub fn require_kernel(test: &str, feature: &str, refused: Option<String>) -> bool {
    match refused {
        None => true,
        Some(why) => {
            eprintln!(
                "SKIPPED {test}: this kernel refuses {feature} even to root ({why}): the \
                 machine's policy, not the test's set-up"
            );
            false
        }
    }
}

/// [`require`] for privileged tests alone.
pub fn require_privileges(test: &str) -> bool {
    require(test, &[Need::Privileges])
}

/// Returns from the calling test (a skip) unless every need is met; fails under `CI=true`.
/// With no argument the need is [`Need::Privileges`]:
///
/// ```no_run
/// use zcrx_ring::lab::Need;
/// # fn t() {
/// zcrx_ring::require!();                                  // root, netns, `ip`
/// zcrx_ring::require!(Need::Privileges, Need::Tool("tcpdump"));
/// # }
/// ```
#[macro_export]
macro_rules! require {
    () => {
        $crate::require!($crate::lab::Need::Privileges)
    };
    ($($need:expr),+ $(,)?) => {
        if !$crate::lab::require(
            {
                fn here() {}
                let name = ::std::any::type_name_of_val(&here);
                name.strip_suffix("::here").unwrap_or(name)
            },
            &[$($need),+],
        ) {
            return;
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tools_are_found_on_the_path_and_missing_ones_are_named() {
        assert!(on_path("sh"));
        assert!(!on_path("zcrx-no-such-tool"));
        let why = missing(Need::Tool("zcrx-no-such-tool")).expect("a missing tool");
        assert!(why.contains("zcrx-no-such-tool"), "{why}");
    }

    #[test]
    fn a_missing_need_skips_and_fails_under_ci() {
        let ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
        let met = std::panic::catch_unwind(|| require("t", &[Need::Tool("sh")]));
        assert_eq!(met.ok(), Some(true));
        let unmet = std::panic::catch_unwind(|| require("t", &[Need::Tool("zcrx-no-such-tool")]));
        if ci {
            assert!(unmet.is_err(), "under CI=true a skip must fail");
        } else {
            assert_eq!(unmet.ok(), Some(false));
        }
    }

    #[test]
    fn a_missing_python_module_skips_and_fails_under_ci() {
        let ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
        let met = std::panic::catch_unwind(|| require_python("t", &["sys"]));
        assert_eq!(met.ok(), Some(true));
        let unmet = std::panic::catch_unwind(|| require_python("t", &["sys", "zcrx_no_such"]));
        if ci {
            assert!(unmet.is_err(), "under CI=true a skip must fail");
        } else {
            assert_eq!(unmet.ok(), Some(false));
        }
    }
}
