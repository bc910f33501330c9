//! UDP sockets as the socket modes read them: bound, non-blocking, with kernel receive
//! timestamps; epoll; `recvmsg` and `recvmmsg` batches (with UDP GRO segments); busy polling.

use std::io;
use std::mem::size_of;
use std::mem::zeroed;
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use super::errno::{check, check_nonblocking};

/// A non-blocking UDP socket bound to `ip:port`, with SO_TIMESTAMPNS on and a `rcvbuf`-byte
/// receive buffer, or the system's default (net.core.rmem_default) when `rcvbuf` is 0.
pub fn udp_socket(ip: Ipv4Addr, port: u16, rcvbuf: i32) -> io::Result<OwnedFd> {
    // SAFETY: plain syscall.
    let fd = check(unsafe {
        libc::socket(
            libc::AF_INET,
            libc::SOCK_DGRAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            0,
        )
    })?;
    // SAFETY: fd was just created and is owned by nobody else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    // SO_RCVBUF 0 would not mean "default" but the kernel's minimum (about 4.6 KB, two
    // datagrams): only set it when asked.
    if rcvbuf > 0 {
        setsockopt_int(fd.as_raw_fd(), libc::SOL_SOCKET, libc::SO_RCVBUF, rcvbuf)?;
    }
    setsockopt_int(fd.as_raw_fd(), libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, 1)?;
    // SAFETY: all-zero is a valid sockaddr_in.
    let mut sa: libc::sockaddr_in = unsafe { zeroed() };
    sa.sin_family = libc::AF_INET as u16;
    sa.sin_port = port.to_be();
    sa.sin_addr.s_addr = u32::from(ip).to_be();
    // An io_uring that held the last run's sockets releases them from a kernel worker after
    // the ring is gone (1 024 of them took longer than the next run's set-up): a port still
    // bound is tried again, for up to two seconds.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    loop {
        // SAFETY: `sa` is a valid sockaddr_in of the size passed.
        let bound = check(unsafe {
            libc::bind(
                fd.as_raw_fd(),
                (&sa as *const libc::sockaddr_in).cast(),
                size_of::<libc::sockaddr_in>() as u32,
            )
        });
        match bound {
            Err(e)
                if e.raw_os_error() == Some(libc::EADDRINUSE)
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(std::time::Duration::from_millis(10))
            }
            r => return r.map(|_| fd),
        }
    }
}

pub(super) fn setsockopt_int(fd: RawFd, level: i32, name: i32, v: i32) -> io::Result<()> {
    // SAFETY: `v` is an int living across the call.
    check(unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (&v as *const i32).cast(),
            size_of::<i32>() as u32,
        )
    })?;
    Ok(())
}

/// An epoll instance.
pub struct Epoll(OwnedFd);

impl Epoll {
    /// `epoll_create1`.
    pub fn new() -> io::Result<Self> {
        // SAFETY: plain syscall.
        let fd = check(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) })?;
        // SAFETY: fresh fd.
        Ok(Epoll(unsafe { OwnedFd::from_raw_fd(fd) }))
    }
    /// Watches `fd` for input; `token` comes back in events.
    pub fn add(&self, fd: RawFd, token: u64) -> io::Result<()> {
        let mut ev = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: token,
        };
        // SAFETY: valid epoll fd, valid event struct.
        check(unsafe { libc::epoll_ctl(self.0.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut ev) })?;
        Ok(())
    }
    /// Watches `fd` for room to write (level-triggered; errors are always reported).
    pub fn add_out(&self, fd: RawFd, token: u64) -> io::Result<()> {
        let mut ev = libc::epoll_event {
            events: libc::EPOLLOUT as u32,
            u64: token,
        };
        // SAFETY: valid epoll fd, valid event struct.
        check(unsafe { libc::epoll_ctl(self.0.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut ev) })?;
        Ok(())
    }
    /// Waits up to `timeout_ms`; returns the ready tokens in `out`.
    pub fn wait(&self, events: &mut [libc::epoll_event], timeout_ms: i32) -> io::Result<usize> {
        // SAFETY: `events` has room for `events.len()` entries.
        match check(unsafe {
            libc::epoll_wait(
                self.0.as_raw_fd(),
                events.as_mut_ptr(),
                events.len() as i32,
                timeout_ms,
            )
        }) {
            Ok(n) => Ok(n as usize),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(0),
            Err(e) => Err(e),
        }
    }
}

/// Space for one datagram and its control messages.
pub struct RecvSlot {
    buf: Vec<u8>,
    cmsg: [u64; 16],
    iov: libc::iovec,
}

impl RecvSlot {
    /// A slot for datagrams up to `size` bytes.
    pub fn new(size: usize) -> Self {
        RecvSlot {
            buf: vec![0u8; size],
            cmsg: [0; 16],
            iov: libc::iovec {
                iov_base: std::ptr::null_mut(),
                iov_len: 0,
            },
        }
    }
    /// A header pointing at this slot as it is now (rebuilt before every call, so the slot
    /// may move in between).
    fn msghdr(&mut self) -> libc::msghdr {
        self.iov = libc::iovec {
            iov_base: self.buf.as_mut_ptr().cast(),
            iov_len: self.buf.len(),
        };
        // SAFETY: all-zero is a valid msghdr.
        let mut m: libc::msghdr = unsafe { zeroed() };
        m.msg_iov = &mut self.iov;
        m.msg_iovlen = 1;
        m.msg_control = self.cmsg.as_mut_ptr().cast();
        m.msg_controllen = size_of::<[u64; 16]>();
        m
    }
    /// The received bytes.
    pub fn data(&self, len: usize) -> &[u8] {
        &self.buf[..len.min(self.buf.len())]
    }
}

/// The SCM_TIMESTAMPNS control message of `m`, in ns since the epoch.
fn kernel_ts(m: &libc::msghdr) -> Option<u64> {
    // SAFETY: `m` was filled by the kernel; CMSG_* walk within msg_controllen.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(m);
        while let Some(h) = c.as_ref() {
            if h.cmsg_level == libc::SOL_SOCKET && h.cmsg_type == libc::SCM_TIMESTAMPNS {
                let ts = libc::CMSG_DATA(c).cast::<libc::timespec>().read_unaligned();
                return Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64);
            }
            c = libc::CMSG_NXTHDR(m, c);
        }
    }
    None
}

/// One `recvmsg`: `Ok(None)` when nothing is queued; else (length, kernel timestamp).
pub fn recvmsg(fd: RawFd, slot: &mut RecvSlot) -> io::Result<Option<(usize, Option<u64>)>> {
    let mut m = slot.msghdr();
    // SAFETY: `m` points into `slot`, which outlives the call.
    let n = unsafe { libc::recvmsg(fd, &mut m, libc::MSG_DONTWAIT) };
    Ok(check_nonblocking(n)?.map(|n| (n, kernel_ts(&m))))
}

/// Batch receive state for `recvmmsg`.
pub struct RecvBatch {
    slots: Vec<RecvSlot>,
    hdrs: Vec<libc::mmsghdr>,
}

// SAFETY: the raw pointers inside point into `slots`, owned by the same value and rebuilt
// before every receive.
unsafe impl Send for RecvBatch {}

impl RecvBatch {
    /// `n` slots of `size` bytes.
    pub fn new(n: usize, size: usize) -> Self {
        let mut slots: Vec<RecvSlot> = (0..n).map(|_| RecvSlot::new(size)).collect();
        let hdrs = slots
            .iter_mut()
            .map(|s| libc::mmsghdr {
                msg_hdr: s.msghdr(),
                msg_len: 0,
            })
            .collect();
        RecvBatch { slots, hdrs }
    }
    /// One `recvmmsg`; returns how many datagrams arrived (0 when none was queued).
    pub fn recv(&mut self, fd: RawFd) -> io::Result<usize> {
        for (h, s) in self.hdrs.iter_mut().zip(self.slots.iter_mut()) {
            h.msg_hdr = s.msghdr();
        }
        // SAFETY: `hdrs` point into `slots`; both outlive the call; vlen = hdrs.len().
        let n = unsafe {
            libc::recvmmsg(
                fd,
                self.hdrs.as_mut_ptr(),
                self.hdrs.len() as u32,
                libc::MSG_DONTWAIT,
                std::ptr::null_mut(),
            )
        };
        Ok(check_nonblocking(n as isize)?.unwrap_or(0))
    }
    /// The segment size of buffer `i` of the last batch when the kernel coalesced datagrams
    /// into it (`UDP_GRO` control message), else `None`.
    pub fn gro_segment(&self, i: usize) -> Option<usize> {
        let m = &self.hdrs[i].msg_hdr;
        // SAFETY: `m` was filled by the kernel; CMSG_* walk within msg_controllen.
        unsafe {
            let mut c = libc::CMSG_FIRSTHDR(m);
            while let Some(h) = c.as_ref() {
                if h.cmsg_level == libc::SOL_UDP && h.cmsg_type == UDP_GRO {
                    let seg = libc::CMSG_DATA(c).cast::<i32>().read_unaligned();
                    return usize::try_from(seg).ok().filter(|&s| s > 0);
                }
                c = libc::CMSG_NXTHDR(m, c);
            }
        }
        None
    }
    /// Datagram `i` of the last batch: (bytes, kernel timestamp).
    pub fn get(&self, i: usize) -> (&[u8], Option<u64>) {
        (
            self.slots[i].data(self.hdrs[i].msg_len as usize),
            kernel_ts(&self.hdrs[i].msg_hdr),
        )
    }
}

/// `UDP_GRO` (linux/udp.h): the socket takes coalesced datagrams, each read with a
/// `UDP_GRO` control message giving the segment size.
const UDP_GRO: i32 = 104;

/// Turns `UDP_GRO` on for `fd`: the kernel may hand several datagrams of one flow as one
/// buffer, split by the segment size of the control message (see [`RecvBatch::gro_segment`]).
pub fn set_udp_gro(fd: RawFd) -> io::Result<()> {
    setsockopt_int(fd, libc::SOL_UDP, UDP_GRO, 1)
}

/// Busy polling on `fd`: `SO_BUSY_POLL` (`usec` of polling the device's NAPI from the
/// receive call), `SO_PREFER_BUSY_POLL` and `SO_BUSY_POLL_BUDGET` (`budget` packets a poll).
pub fn set_busy_poll(fd: RawFd, usec: i32, budget: i32) -> io::Result<()> {
    setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_BUSY_POLL, usec)?;
    setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_PREFER_BUSY_POLL, 1)?;
    setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_BUSY_POLL_BUDGET, budget)
}

/// A zero-length non-blocking `recvfrom` on `fd`: on an AF_XDP socket with busy polling this
/// is what polls the device (its rx ring is read in place, not by the call).
pub fn kick_recv(fd: RawFd) -> io::Result<()> {
    // SAFETY: a null buffer of length 0 and no address; the kernel writes nothing.
    let r = unsafe {
        libc::recvfrom(
            fd,
            std::ptr::null_mut(),
            0,
            libc::MSG_DONTWAIT,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    };
    check_nonblocking(r).map(|_| ())
}

/// The NAPI id the kernel recorded on `fd` from the last packet it queued there
/// (`SO_INCOMING_NAPI_ID`; 0: none, so busy polling has no NAPI to poll).
pub fn incoming_napi_id(fd: RawFd) -> io::Result<u32> {
    let mut v: u32 = 0;
    let mut len = size_of::<u32>() as libc::socklen_t;
    // SAFETY: `v` and `len` are valid for the call.
    check(unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_INCOMING_NAPI_ID,
            (&mut v as *mut u32).cast(),
            &mut len,
        )
    })?;
    Ok(v)
}
