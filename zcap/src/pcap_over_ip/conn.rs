//! The listening socket and a client's connection: TCP, or a UNIX socket whose file's
//! permissions say who may connect (`--pcap-over-ip unix:PATH`).

use std::io::{self, Read, Write};
use std::net::{IpAddr, Shutdown, TcpStream, ToSocketAddrs};
use std::os::fd::OwnedFd;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};

use crate::listeners::Acceptor;

/// The prefix of `--pcap-over-ip` that names a UNIX socket.
pub(crate) const UNIX_PREFIX: &str = "unix:";

/// Where clients connect: a TCP or UNIX listener, held by the monitor once it splits off
/// ([`crate::listeners`]).
pub(super) struct Listener {
    acceptor: Acceptor,
    /// The address bound, for TCP; `None` for a UNIX socket.
    pub(super) ip: Option<IpAddr>,
}

impl Listener {
    /// Binds `addr` (`HOST:PORT` or `unix:PATH`), non-blocking; returns it and what to say
    /// it serves on.
    pub(super) fn bind(addr: &str) -> Result<(Listener, String)> {
        if let Some(path) = addr.strip_prefix(UNIX_PREFIX) {
            let listener = bind_unix(Path::new(path))?;
            listener
                .set_nonblocking(true)
                .context("--pcap-over-ip: a non-blocking listener")?;
            let acceptor = Acceptor::adopt(OwnedFd::from(listener));
            let listener = Listener { acceptor, ip: None };
            return Ok((listener, format!("{path} (mode 0600)")));
        }
        let cannot = || format!("--pcap-over-ip {addr}: cannot listen");
        // Each address the name has, until one binds (as the standard library's bind does).
        let mut last = None;
        for wanted in addr.to_socket_addrs().with_context(cannot)? {
            match Acceptor::bind(wanted) {
                Ok((acceptor, bound)) => {
                    let ip = Some(bound.ip());
                    return Ok((Listener { acceptor, ip }, bound.to_string()));
                }
                Err(e) => last = Some(e),
            }
        }
        Err(match last {
            Some(e) => anyhow::Error::new(e).context(cannot()),
            None => anyhow!("{}: no address", cannot()),
        })
    }

    /// The next waiting connection, non-blocking, and its peer's address (none for a UNIX
    /// socket's).
    pub(super) fn accept(&self) -> io::Result<(Conn, Option<IpAddr>)> {
        let fd = self.acceptor.accept()?;
        match self.ip {
            Some(_) => {
                let s = TcpStream::from(fd);
                s.set_nonblocking(true)?;
                let _ = s.set_nodelay(true);
                let peer = s.peer_addr()?.ip().to_canonical();
                Ok((Conn::Tcp(s), Some(peer)))
            }
            None => {
                let s = UnixStream::from(fd);
                s.set_nonblocking(true)?;
                Ok((Conn::Unix(s), None))
            }
        }
    }
}

/// Binds a UNIX socket at `path`, readable and writable by its owner alone (the user zcap
/// starts as): the file is made under umask 0177, so it never exists with wider rights.
/// A socket left there by an earlier zcap is replaced; any other file is an error.
fn bind_unix(path: &Path) -> Result<UnixListener> {
    use nix::sys::stat::{umask, Mode};
    use std::os::unix::fs::FileTypeExt;
    let shown = path.display();
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_socket() => std::fs::remove_file(path)
            .with_context(|| format!("--pcap-over-ip unix:{shown}: removing the old socket"))?,
        Ok(_) => bail!("--pcap-over-ip unix:{shown}: a file that is not a socket is there"),
        Err(_) => {}
    }
    // The process has one thread here (set-up): the umask is nobody else's meanwhile.
    let old = umask(Mode::from_bits_truncate(0o177));
    let bound = UnixListener::bind(path);
    umask(old);
    bound.with_context(|| format!("--pcap-over-ip unix:{shown}: cannot listen"))
}

/// A client's connection.
pub(super) enum Conn {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Conn {
    pub(super) fn shutdown(&self) {
        let _ = match self {
            Conn::Tcp(s) => s.shutdown(Shutdown::Both),
            Conn::Unix(s) => s.shutdown(Shutdown::Both),
        };
    }
}

impl Read for Conn {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Conn::Tcp(s) => s.read(buf),
            Conn::Unix(s) => s.read(buf),
        }
    }
}

impl Write for Conn {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Conn::Tcp(s) => s.write(buf),
            Conn::Unix(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
