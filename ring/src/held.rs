//! A ring whose packet socket another process holds: privilege separation.
//!
//! A process that parses the ring's packets (hostile bytes) need not hold the packet
//! socket: with it, a compromised parser could write frames to the link, detach the
//! socket filter, join multicast groups or hand the socket to another process. The ring's
//! memory is all it reads. [`PacketSocket::watch`] makes an epoll instance that watches the
//! socket (made by the holder, before it starts the parser's process); the parser's ring
//! then waits on that instance in place of the socket ([`crate::RxRing::give_up_socket`]),
//! and asks the holder, through a [`SocketHolder`], for what only the socket answers: its
//! statistics and its pending error. An epoll instance gives no way back to the socket it
//! watches.
//!
//! The memory stays mapped read-write: the kernel hands a TPACKET ring's block or frame
//! back when user space writes its status word, so a receive ring cannot be read-only.
//! What a writer of that memory can do is confined to the capture itself (its own packets,
//! and blocks handed back early).

use std::fmt;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::Arc;
use std::time::Duration;

use crate::sys::{self, PollEvents};

/// What a packet socket's holder answers for the process that reads its ring. (Unwind
/// safe, as the rings that hold one have always been.)
pub trait SocketHolder:
    Send + Sync + fmt::Debug + std::panic::RefUnwindSafe + std::panic::UnwindSafe
{
    /// Reads (and resets, as the kernel does) the socket's `PACKET_STATISTICS`: packets,
    /// drops, queue freezes (0 for TPACKET_V2).
    fn statistics(&self) -> io::Result<[u32; 3]>;
    /// Reads and clears the socket's pending error (`SO_ERROR`).
    fn take_error(&self) -> io::Result<Option<io::Error>>;
}

/// The holder's side: a packet socket it keeps and serves (borrowed from the ring it
/// built, or from the descriptors it kept after the parser's process started).
#[derive(Debug, Clone, Copy)]
pub struct PacketSocket<'a> {
    fd: BorrowedFd<'a>,
    v3: bool,
}

impl<'a> PacketSocket<'a> {
    /// The TPACKET_V3 (`v3`) or TPACKET_V2 socket `fd`.
    pub fn new(fd: BorrowedFd<'a>, v3: bool) -> Self {
        PacketSocket { fd, v3 }
    }

    /// An epoll instance (close-on-exec) that is readable when the socket is: what the
    /// parser's ring waits on once it gave the socket up.
    pub fn watch(&self) -> io::Result<OwnedFd> {
        sys::epoll_watching(self.fd)
    }

    /// `PACKET_STATISTICS`, as [`SocketHolder::statistics`] returns it.
    pub fn statistics(&self) -> io::Result<[u32; 3]> {
        if self.v3 {
            let s: libc::tpacket_stats_v3 =
                sys::getsockopt(self.fd, libc::SOL_PACKET, libc::PACKET_STATISTICS)?;
            Ok([s.tp_packets, s.tp_drops, s.tp_freeze_q_cnt])
        } else {
            let s: libc::tpacket_stats =
                sys::getsockopt(self.fd, libc::SOL_PACKET, libc::PACKET_STATISTICS)?;
            Ok([s.tp_packets, s.tp_drops, 0])
        }
    }

    /// `SO_ERROR`, as [`SocketHolder::take_error`] returns it.
    pub fn take_error(&self) -> io::Result<Option<io::Error>> {
        sys::take_socket_error(self.fd)
    }
}

impl AsFd for PacketSocket<'_> {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd
    }
}

/// What a ring waits on and asks its statistics of.
#[derive(Debug)]
pub(crate) enum Handle {
    /// The packet socket itself.
    Socket(OwnedFd),
    /// An epoll instance watching the socket another process holds.
    Held {
        epoll: OwnedFd,
        holder: Arc<dyn SocketHolder>,
    },
}

impl Handle {
    /// The packet socket (TPACKET_V3 with `v3`), while this process holds it.
    pub(crate) fn packet_socket(&self, v3: bool) -> Option<PacketSocket<'_>> {
        match self {
            Handle::Socket(fd) => Some(PacketSocket::new(fd.as_fd(), v3)),
            Handle::Held { .. } => None,
        }
    }

    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        match self {
            Handle::Socket(fd) => fd.as_fd(),
            Handle::Held { epoll, .. } => epoll.as_fd(),
        }
    }

    /// Waits up to `timeout` for the socket to be readable (or in error).
    pub(crate) fn wait_in(&self, timeout: Duration) -> io::Result<PollEvents> {
        match self {
            Handle::Socket(fd) => sys::poll_in(fd.as_fd(), timeout),
            Handle::Held { epoll, .. } => sys::epoll_wait_in(epoll.as_fd(), timeout),
        }
    }

    pub(crate) fn take_error(&self) -> io::Result<Option<io::Error>> {
        match self {
            Handle::Socket(fd) => sys::take_socket_error(fd.as_fd()),
            Handle::Held { holder, .. } => holder.take_error(),
        }
    }

    pub(crate) fn statistics(&self, v3: bool) -> io::Result<[u32; 3]> {
        match self {
            Handle::Socket(fd) => PacketSocket::new(fd.as_fd(), v3).statistics(),
            Handle::Held { holder, .. } => holder.statistics(),
        }
    }
}
