//! The endpoints' listening sockets (`--metrics`, `--pcap-over-ip`), kept by the monitor
//! once it splits off ([`crate::privsep`]), as OpenSSH keeps its listener in the privileged
//! process.
//!
//! Each listener is bound during the set-up and registered here ([`Acceptor`]). At the
//! split the monitor keeps them, and the worker keeps, in each one's place, an epoll
//! instance that watches it ([`hand_over`]): the worker waits on that, and when a
//! connection waits it asks the monitor to accept it ([`ACCEPT`]); the monitor answers
//! with the connected socket (SCM_RIGHTS). `--metrics`' port, taken by something else at
//! start, is bound later by the monitor alone ([`REBIND`]), which answers with an epoll
//! instance watching the new listener.
//!
//! So the worker holds no listening socket and its filter allows no `socket` of a stream
//! family, no `bind`, `listen` or `accept`: a compromised worker can neither listen on a
//! port of its own nor reconfigure or close the endpoints' listeners; it can only take the
//! connections that come (which it serves anyway). Without the split (`--no-sandbox`) the
//! one process accepts on the listeners itself.

use std::io;
use std::net::{SocketAddr, TcpListener};
use std::os::fd::{AsFd, OwnedFd, RawFd};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};

/// A request to the monitor: accept a connection on listener `index`.
pub(crate) const ACCEPT: u32 = 5;
/// A request to the monitor: bind listener `index` (not bound yet) at its address.
pub(crate) const REBIND: u32 = 6;

/// One listener.
#[derive(Debug)]
struct Slot {
    /// The listening socket (before the split, and in the monitor), or in the worker the
    /// epoll instance that watches it; `None` while not bound.
    fd: Mutex<Option<OwnedFd>>,
    /// Where to bind it again while it is not bound (`--metrics`' address).
    rebind: Option<SocketAddr>,
}

/// The listeners registered, by index.
static SLOTS: Mutex<Vec<Arc<Slot>>> = Mutex::new(Vec::new());

/// How the worker asks the monitor (`op`, index): the descriptor it answers with.
pub(crate) type Ask = Box<dyn Fn(u32, u32) -> io::Result<OwnedFd> + Send + Sync>;

/// Set in the worker at the split: from then on it asks.
static REMOTE: OnceLock<Ask> = OnceLock::new();

/// A listener as an endpoint's thread uses it, wherever the socket is.
#[derive(Debug)]
pub(crate) struct Acceptor {
    index: u32,
    slot: Arc<Slot>,
}

fn register(fd: Option<OwnedFd>, rebind: Option<SocketAddr>) -> Acceptor {
    let mut slots = SLOTS.lock().unwrap_or_else(|p| p.into_inner());
    let slot = Arc::new(Slot {
        fd: Mutex::new(fd),
        rebind,
    });
    slots.push(Arc::clone(&slot));
    Acceptor {
        index: (slots.len() - 1) as u32,
        slot,
    }
}

/// A non-blocking TCP listener on `addr` (the standard library's: SO_REUSEADDR, close on
/// exec).
fn bind_tcp(addr: SocketAddr) -> io::Result<(OwnedFd, SocketAddr)> {
    let listener = TcpListener::bind(addr)?;
    listener.set_nonblocking(true)?;
    let bound = listener.local_addr()?;
    Ok((OwnedFd::from(listener), bound))
}

impl Acceptor {
    /// Binds `addr` (TCP, non-blocking); returns the acceptor and the address bound (the
    /// port the system chose for port 0).
    pub(crate) fn bind(addr: SocketAddr) -> io::Result<(Acceptor, SocketAddr)> {
        let (fd, bound) = bind_tcp(addr)?;
        Ok((register(Some(fd), None), bound))
    }

    /// A listener for `addr` that could not be bound now: [`Acceptor::rebind`] tries again.
    pub(crate) fn unbound(addr: SocketAddr) -> Acceptor {
        register(None, Some(addr))
    }

    /// Takes `listener`, a bound, non-blocking listening socket (a UNIX socket's).
    pub(crate) fn adopt(listener: OwnedFd) -> Acceptor {
        register(Some(listener), None)
    }

    /// Whether the listener is bound.
    pub(crate) fn is_bound(&self) -> bool {
        self.slot
            .fd
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_some()
    }

    /// Waits up to `timeout` for a connection (sleeps that long while not bound).
    pub(crate) fn wait(&self, timeout: Duration) {
        let fd = self.slot.fd.lock().unwrap_or_else(|p| p.into_inner());
        let Some(fd) = fd.as_ref() else {
            drop(fd);
            std::thread::sleep(timeout);
            return;
        };
        let ms = u16::try_from(timeout.as_millis()).unwrap_or(u16::MAX);
        let mut fds = [PollFd::new(fd.as_fd(), PollFlags::POLLIN)];
        let _ = poll(&mut fds, PollTimeout::from(ms));
    }

    /// The next waiting connection (close-on-exec, blocking as `accept` leaves it), or
    /// WouldBlock if none waits (or the listener is not bound).
    pub(crate) fn accept(&self) -> io::Result<OwnedFd> {
        let fd = self.slot.fd.lock().unwrap_or_else(|p| p.into_inner());
        let Some(fd) = fd.as_ref() else {
            return Err(io::ErrorKind::WouldBlock.into());
        };
        match REMOTE.get() {
            None => Ok(nix::sys::socket::accept4(
                fd.as_fd(),
                nix::sys::socket::SockFlag::SOCK_CLOEXEC,
            )?),
            Some(ask) => {
                // The monitor is asked only when its listener has a connection waiting.
                let mut fds = [PollFd::new(fd.as_fd(), PollFlags::POLLIN)];
                match poll(&mut fds, PollTimeout::ZERO)? {
                    0 => Err(io::ErrorKind::WouldBlock.into()),
                    _ => ask(ACCEPT, self.index),
                }
            }
        }
    }

    /// Binds the listener at its address if it is not bound (by the monitor, after the
    /// split); WouldBlock if it already is or has no address to bind again.
    pub(crate) fn rebind(&self) -> io::Result<()> {
        let mut fd = self.slot.fd.lock().unwrap_or_else(|p| p.into_inner());
        let (None, Some(addr)) = (fd.as_ref(), self.slot.rebind) else {
            return Err(io::ErrorKind::WouldBlock.into());
        };
        *fd = Some(match REMOTE.get() {
            None => bind_tcp(addr)?.0,
            Some(ask) => ask(REBIND, self.index)?,
        });
        Ok(())
    }
}

/// The listeners' descriptors: what the monitor keeps.
pub(crate) fn kept_fds() -> Vec<RawFd> {
    use std::os::fd::AsRawFd;
    let slots = SLOTS.lock().unwrap_or_else(|p| p.into_inner());
    slots
        .iter()
        .filter_map(|s| {
            let fd = s.fd.lock().unwrap_or_else(|p| p.into_inner());
            fd.as_ref().map(AsRawFd::as_raw_fd)
        })
        .collect()
}

/// The port the monitor may have to bind after the split (a listener not bound yet), if
/// any.
pub(crate) fn port_to_rebind() -> Option<u16> {
    let slots = SLOTS.lock().unwrap_or_else(|p| p.into_inner());
    slots
        .iter()
        .filter(|s| s.fd.lock().unwrap_or_else(|p| p.into_inner()).is_none())
        .find_map(|s| s.rebind.map(|a| a.port()))
}

/// In the worker, at the split: each listener closed, an epoll instance watching it in
/// its place, and `ask` the way to the monitor from then on.
pub(crate) fn hand_over(ask: Ask) -> io::Result<()> {
    let slots = SLOTS.lock().unwrap_or_else(|p| p.into_inner());
    for slot in slots.iter() {
        let mut fd = slot.fd.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(listener) = fd.take() {
            *fd = Some(watching(listener.as_fd())?);
        }
    }
    REMOTE
        .set(ask)
        .map_err(|_| io::Error::other("the listeners were handed over twice"))
}

/// An epoll instance (close-on-exec) that is readable while `fd` is.
fn watching(fd: std::os::fd::BorrowedFd<'_>) -> io::Result<OwnedFd> {
    use nix::sys::epoll::{Epoll, EpollCreateFlags, EpollEvent, EpollFlags};
    let epoll = Epoll::new(EpollCreateFlags::EPOLL_CLOEXEC)?;
    epoll.add(fd, EpollEvent::new(EpollFlags::EPOLLIN, 0))?;
    Ok(epoll.0)
}

/// The monitor's answer to the worker's `op` on listener `index`: a connection accepted
/// (EAGAIN if none waits), or an epoll instance watching the listener just bound. `None`
/// (EINVAL) for an unknown listener, a listener that is not bound, or a rebind of one that
/// is or has no address.
pub(crate) fn answer(op: u32, index: u32) -> Option<io::Result<OwnedFd>> {
    let slot = Arc::clone(SLOTS.lock().ok()?.get(index as usize)?);
    let mut fd = slot.fd.lock().ok()?;
    match op {
        ACCEPT => {
            let listener = fd.as_ref()?;
            let flags = nix::sys::socket::SockFlag::SOCK_CLOEXEC;
            Some(nix::sys::socket::accept4(listener.as_fd(), flags).map_err(io::Error::from))
        }
        REBIND => {
            let addr = slot.rebind.filter(|_| fd.is_none())?;
            Some(bind_tcp(addr).and_then(|(listener, _)| {
                let epoll = watching(listener.as_fd())?;
                *fd = Some(listener);
                Ok(epoll)
            }))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    #[test]
    fn the_monitor_accepts_on_a_listener_and_binds_only_one_that_is_not_bound() {
        let (acceptor, bound) = Acceptor::bind("127.0.0.1:0".parse().unwrap()).unwrap();
        assert!(!kept_fds().is_empty());
        // Nothing waits: EAGAIN, not a descriptor.
        let none = answer(ACCEPT, acceptor.index).unwrap().unwrap_err();
        assert_eq!(none.kind(), io::ErrorKind::WouldBlock);
        let mut client = std::net::TcpStream::connect(bound).unwrap();
        client.write_all(b"hello").unwrap();
        let fd = answer(ACCEPT, acceptor.index).unwrap().unwrap();
        let mut served = std::net::TcpStream::from(fd);
        let mut got = [0u8; 5];
        served.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"hello");
        // A bound listener is not bound again; one without an address never is.
        assert!(answer(REBIND, acceptor.index).is_none());
        assert!(answer(u32::MAX, acceptor.index).is_none());
        assert!(answer(ACCEPT, u32::MAX).is_none());
        // A port taken: the slot waits unbound, and its rebind binds once it is free.
        let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = taken.local_addr().unwrap();
        let later = Acceptor::unbound(addr);
        assert!(!later.is_bound());
        assert!(answer(ACCEPT, later.index).is_none());
        assert!(answer(REBIND, later.index).unwrap().is_err());
        drop(taken);
        let epoll = answer(REBIND, later.index).unwrap().unwrap();
        assert!(later.is_bound());
        let _client = std::net::TcpStream::connect(addr).unwrap();
        // The epoll instance the worker would wait on is readable: a connection waits.
        let mut fds = [PollFd::new(epoll.as_fd(), PollFlags::POLLIN)];
        assert_eq!(poll(&mut fds, PollTimeout::from(5000u16)).unwrap(), 1);
        assert!(answer(ACCEPT, later.index).unwrap().is_ok());
    }
}
