//! The processes that own the capturing host's sockets, as bandwhich finds them: the socket
//! tables of `/proc/net/{tcp,tcp6,udp,udp6}` give each local address and port its socket
//! inode, the links in `/proc/PID/fd` give each inode its process. Bounded
//! ([`MAX_SOCKETS`], [`MAX_FDS`]); whatever cannot be read (another user's process without
//! privileges, a process that ends while it is read) is left out and shown as "-".
//!
//! The capture cannot read them itself: once confined it holds no capability, and Landlock
//! forbids it the `/proc/PID` of any process outside its domain (a ptrace-like access). So
//! the view asks a reader of its own ([`Reader`]): zcap started again before the sandbox
//! (`/proc/self/exe` [`READER_FLAG`]), in the same network namespace, keeping of its
//! capabilities only CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH (what reading other users'
//! descriptor links takes; none once zcap runs as the capture's user), starting nothing, in
//! a seccomp filter of the calls reading `/proc` takes (`crate::confine::confine_reader`;
//! no Landlock: a process in a domain may not read the links of one outside it). It reads the tables when asked (a line on
//! its input), at most once a refresh, and answers a line per socket; it ends when its
//! input closes. Without it (it could not start), the view reads what it may itself.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

use std::collections::{HashMap, HashSet};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Sockets read from the tables.
const MAX_SOCKETS: usize = 65_536;
/// Descriptor links read in one refresh.
const MAX_FDS: usize = 262_144;

/// (protocol, address, port) to "name/pid".
#[derive(Default)]
pub(crate) struct Procs {
    owners: HashMap<(u8, IpAddr, u16), String>,
}

impl Procs {
    /// The owners now.
    pub(crate) fn read() -> Procs {
        let mut inodes: HashMap<u64, (u8, IpAddr, u16)> = HashMap::new();
        for (file, proto, v6) in [
            ("/proc/net/tcp", 6, false),
            ("/proc/net/tcp6", 6, true),
            ("/proc/net/udp", 17, false),
            ("/proc/net/udp6", 17, true),
        ] {
            let Ok(text) = std::fs::read_to_string(file) else {
                continue;
            };
            for line in text.lines().skip(1) {
                if inodes.len() >= MAX_SOCKETS {
                    break;
                }
                if let Some((inode, addr, port)) = socket_line(line, v6) {
                    inodes.entry(inode).or_insert((proto, addr, port));
                }
            }
        }
        let mut owners = HashMap::new();
        if inodes.is_empty() {
            return Procs { owners };
        }
        let mut fds = 0usize;
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return Procs { owners };
        };
        for entry in dir.flatten() {
            let name = entry.file_name();
            let Some(pid) = name
                .to_str()
                .filter(|p| p.bytes().all(|b| b.is_ascii_digit()))
            else {
                continue;
            };
            let Ok(links) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
                continue;
            };
            let mut comm: Option<String> = None;
            for l in links.flatten() {
                fds += 1;
                if fds > MAX_FDS {
                    return Procs { owners };
                }
                let Ok(target) = std::fs::read_link(l.path()) else {
                    continue;
                };
                let Some(inode) = target
                    .to_str()
                    .and_then(|t| t.strip_prefix("socket:["))
                    .and_then(|t| t.strip_suffix(']'))
                    .and_then(|t| t.parse::<u64>().ok())
                else {
                    continue;
                };
                if let Some(sock) = inodes.get(&inode) {
                    let c = comm.get_or_insert_with(|| {
                        std::fs::read_to_string(format!("/proc/{pid}/comm"))
                            .map(|c| c.trim().to_string())
                            .unwrap_or_default()
                    });
                    owners.entry(*sock).or_insert_with(|| format!("{c}/{pid}"));
                }
            }
        }
        Procs { owners }
    }

    /// The owner of local endpoint (`addr`, `port`) of protocol `proto`: a socket bound to
    /// that address, or to any address of its family.
    pub(crate) fn owner(&self, proto: u8, addr: IpAddr, port: u16) -> Option<&str> {
        let any = match addr {
            IpAddr::V4(_) => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            IpAddr::V6(_) => IpAddr::V6(Ipv6Addr::UNSPECIFIED),
        };
        let mapped = match addr {
            IpAddr::V4(a) => Some(IpAddr::V6(a.to_ipv6_mapped())),
            IpAddr::V6(_) => None,
        };
        [
            Some(addr),
            mapped,
            Some(any),
            Some(IpAddr::V6(Ipv6Addr::UNSPECIFIED)),
        ]
        .into_iter()
        .flatten()
        .find_map(|a| self.owners.get(&(proto, a, port)))
        .map(String::as_str)
    }
}

/// The capturing host's addresses (before the sandbox: it takes a netlink socket), which
/// decide a flow's local end.
pub(crate) fn local_addresses() -> HashSet<IpAddr> {
    let Ok(addrs) = nix::ifaddrs::getifaddrs() else {
        return HashSet::new();
    };
    addrs
        .filter_map(|a| a.address)
        .filter_map(|s| {
            if let Some(v4) = s.as_sockaddr_in() {
                Some(IpAddr::V4(v4.ip()))
            } else {
                s.as_sockaddr_in6().map(|v6| IpAddr::V6(v6.ip()))
            }
        })
        .collect()
}

/// The hidden first argument that makes zcap the socket owners' reader.
pub(crate) const READER_FLAG: &str = "--top-socket-owners";

/// The view's side of the reader.
pub(crate) struct Reader {
    child: Child,
    ask: Option<ChildStdin>,
    answers: BufReader<ChildStdout>,
    /// Answers asked for and not read yet (late ones, skipped when they come).
    behind: usize,
}

/// How long the view waits for an answer before it keeps the last one.
const ANSWER_WITHIN: Duration = Duration::from_millis(500);

impl Reader {
    /// Starts the reader (before the sandbox); `None` if it cannot start.
    pub(crate) fn start() -> Option<Reader> {
        let mut command = Command::new("/proc/self/exe");
        command
            .arg(READER_FLAG)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        crate::system::ordinary_scheduler_in_child(&mut command);
        let mut child = command.spawn().ok()?;
        let ask = child.stdin.take();
        let answers = BufReader::new(child.stdout.take()?);
        Some(Reader {
            child,
            ask,
            answers,
            behind: 0,
        })
    }

    /// The owners now, or `None` if the reader does not answer in time (or is gone).
    pub(crate) fn read(&mut self) -> Option<Procs> {
        use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
        use std::os::fd::AsFd;
        let ask = self.ask.as_mut()?;
        if ask.write_all(b"?\n").and_then(|_| ask.flush()).is_err() {
            self.ask = None;
            return None;
        }
        let deadline = std::time::Instant::now() + ANSWER_WITHIN;
        let mut owners = HashMap::new();
        let mut line = String::new();
        loop {
            if self.answers.buffer().is_empty() {
                let left = deadline.saturating_duration_since(std::time::Instant::now());
                let t = PollTimeout::try_from(left).unwrap_or(PollTimeout::ZERO);
                let mut fds = [PollFd::new(
                    self.answers.get_ref().as_fd(),
                    PollFlags::POLLIN,
                )];
                if !matches!(poll(&mut fds, t), Ok(n) if n > 0) {
                    // Late: the rest of this answer is read (and dropped) next time.
                    self.behind += 1;
                    return None;
                }
            }
            line.clear();
            match self.answers.read_line(&mut line) {
                Ok(0) | Err(_) => {
                    self.ask = None;
                    return None;
                }
                Ok(_) => {}
            }
            let l = line.trim_end();
            if l == "." {
                if self.behind == 0 {
                    return Some(Procs { owners });
                }
                self.behind -= 1;
                owners.clear();
                continue;
            }
            if let Some((k, v)) = owner_line(l) {
                if owners.len() < MAX_SOCKETS {
                    owners.insert(k, v);
                }
            }
        }
    }
}

impl Drop for Reader {
    fn drop(&mut self) {
        // Its input closed, the reader ends.
        self.ask = None;
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An answer's line: "PROTO ADDR PORT OWNER".
fn owner_line(l: &str) -> Option<((u8, IpAddr, u16), String)> {
    let mut w = l.splitn(4, ' ');
    let proto = w.next()?.parse().ok()?;
    let addr = w.next()?.parse().ok()?;
    let port = w.next()?.parse().ok()?;
    Some(((proto, addr, port), w.next()?.to_string()))
}

/// The reader's life (`zcap --top-socket-owners`): returns its exit code.
pub(crate) fn reader_main() -> i32 {
    use caps::{CapSet, Capability, CapsHashSet};
    let keep: CapsHashSet = [Capability::CAP_SYS_PTRACE, Capability::CAP_DAC_READ_SEARCH]
        .into_iter()
        .collect();
    // What it may not keep (it runs as a user without them): nothing to drop.
    let _ = caps::clear(None, CapSet::Ambient);
    let _ = caps::clear(None, CapSet::Inheritable);
    let held = caps::read(None, CapSet::Permitted).unwrap_or_default();
    let kept: CapsHashSet = held.intersection(&keep).copied().collect();
    if caps::set(None, CapSet::Effective, &kept).is_err()
        || caps::set(None, CapSet::Permitted, &kept).is_err()
    {
        return 1;
    }
    if let Err(e) = crate::confine::confine_reader() {
        eprintln!("zcap: --top: the reader of socket owners: {e:#}");
        return 1;
    }
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for line in std::io::stdin().lock().lines() {
        if line.is_err() {
            break;
        }
        let p = Procs::read();
        for ((proto, addr, port), owner) in &p.owners {
            let _ = writeln!(out, "{proto} {addr} {port} {owner}");
        }
        if writeln!(out, ".").and_then(|_| out.flush()).is_err() {
            break;
        }
    }
    0
}

/// A line of a `/proc/net` socket table: (inode, local address, local port).
fn socket_line(line: &str, v6: bool) -> Option<(u64, IpAddr, u16)> {
    let f: Vec<&str> = line.split_whitespace().collect();
    let (addr, port) = f.get(1)?.split_once(':')?;
    let inode = f.get(9)?.parse::<u64>().ok()?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let addr = if v6 {
        // Four 32-bit words, each in host (little-endian) order.
        if addr.len() != 32 {
            return None;
        }
        let mut b = [0u8; 16];
        for w in 0..4 {
            let word = u32::from_str_radix(&addr[w * 8..w * 8 + 8], 16).ok()?;
            b[w * 4..w * 4 + 4].copy_from_slice(&word.to_le_bytes());
        }
        IpAddr::V6(Ipv6Addr::from(b))
    } else {
        let word = u32::from_str_radix(addr, 16).ok()?;
        IpAddr::V4(Ipv4Addr::from(word.to_le_bytes()))
    };
    (inode != 0).then_some((inode, addr, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn socket_table_lines() {
        let l = "   0: 020012C6:01BB 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 31337 1 0000000000000000 100 0 0 10 0";
        assert_eq!(
            socket_line(l, false),
            Some((31337, IpAddr::V4(Ipv4Addr::new(198, 18, 0, 2)), 443))
        );
        let l6 = "   0: 00000000000000000000000001000000:0035 00000000000000000000000000000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 4242 2 0000000000000000 0";
        assert_eq!(
            socket_line(l6, true),
            Some((4242, IpAddr::V6(Ipv6Addr::LOCALHOST), 53))
        );
        assert_eq!(socket_line("garbage", false), None);
    }

    #[test]
    fn this_process_owns_its_socket() {
        let s = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let port = s.local_addr().unwrap().port();
        let p = Procs::read();
        let owner = p.owner(17, IpAddr::V4(Ipv4Addr::LOCALHOST), port);
        let me = format!("/{}", std::process::id());
        assert!(owner.is_some_and(|o| o.ends_with(&me)), "{owner:?}");
    }
}
