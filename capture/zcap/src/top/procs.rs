//! The processes that own the capturing host's sockets, as bandwhich finds them: the socket
//! tables of `/proc/net/{tcp,tcp6,udp,udp6}` give each local address and port its socket
//! inode, the links in `/proc/PID/fd` give each inode its process. Read on the view's
//! thread at most once a refresh, bounded ([`MAX_SOCKETS`], [`MAX_FDS`]); whatever cannot
//! be read (another user's process without privileges, a process that ends while it is
//! read) is left out and shown as "-".
//!
//! The tables are those of the network namespace zcap runs in, as the capture's.

use std::collections::HashMap;
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
