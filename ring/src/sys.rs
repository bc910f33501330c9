//! Every system call of zcrx-ring, each behind one checked helper per call shape.
//!
//! Nothing outside this module calls `libc` functions directly; the rest of the crate
//! sees `io::Result`s.

use std::ffi::CString;
use std::io;
use std::mem::{size_of, MaybeUninit};
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

/// Turns a `-1` return into the thread's `errno`.
fn check(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// Same as [`check`] for calls returning `ssize_t`.
fn check_size(ret: libc::ssize_t) -> io::Result<usize> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret as usize)
    }
}

/// `socket(AF_PACKET, kind, protocol)` (protocol 0 receives nothing until `bind`): SOCK_RAW (frames with their link-layer header) or
/// SOCK_DGRAM (cooked: from the network layer on, the link layer in the sockaddr_ll).
pub fn packet_socket_of(protocol_be: u16, kind: libc::c_int) -> io::Result<OwnedFd> {
    // SAFETY: plain syscall with integer arguments; no memory is passed.
    let fd = check(unsafe {
        libc::socket(
            libc::AF_PACKET,
            kind | libc::SOCK_CLOEXEC,
            libc::c_int::from(protocol_be),
        )
    })?;
    // SAFETY: `fd` was just returned by socket(2) and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// `PACKET_IGNORE_OUTGOING` (linux/if_packet.h; not in the libc crate).
pub const PACKET_IGNORE_OUTGOING: i32 = 23;

/// Incoming packets only (PACKET_IGNORE_OUTGOING), for every receive ring; set before bind,
/// so that no outgoing packet is queued in between.
pub(crate) fn ignore_outgoing(
    b: BorrowedFd<'_>,
    iface: &str,
) -> Result<(), crate::error::RingError> {
    setsockopt(b, libc::SOL_PACKET, PACKET_IGNORE_OUTGOING, &1i32)
        .map_err(|e| crate::error::RingError::sys("PACKET_IGNORE_OUTGOING", iface, e))
}

/// Promiscuous membership on `ifindex` (after bind), for every receive ring; interface 0
/// ("any") has none of its own, so it is skipped there.
pub(crate) fn promiscuous(
    b: BorrowedFd<'_>,
    iface: &str,
    ifindex: u32,
) -> Result<(), crate::error::RingError> {
    use crate::error::RingError;
    if ifindex != 0 {
        let mreq = libc::packet_mreq {
            mr_ifindex: ifindex as i32,
            mr_type: libc::PACKET_MR_PROMISC as u16,
            mr_alen: 0,
            mr_address: [0; 8],
        };
        setsockopt(b, libc::SOL_PACKET, libc::PACKET_ADD_MEMBERSHIP, &mreq)
            .map_err(|e| RingError::sys("PACKET_ADD_MEMBERSHIP (promiscuous)", iface, e))?;
    }
    Ok(())
}

/// `setsockopt(fd, level, name, &value, sizeof value)`.
///
/// `T` must be a plain C struct or integer (no padding read by the kernel matters).
pub fn setsockopt<T: Copy>(fd: BorrowedFd<'_>, level: i32, name: i32, value: &T) -> io::Result<()> {
    // SAFETY: `value` points to `size_of::<T>()` initialised bytes that live across the call.
    check(unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            level,
            name,
            (value as *const T).cast(),
            size_of::<T>() as libc::socklen_t,
        )
    })?;
    Ok(())
}

/// `setsockopt` with a byte slice (used for arrays such as BPF programs wrapped in a struct).
pub fn setsockopt_fprog(fd: BorrowedFd<'_>, program: &[libc::sock_filter]) -> io::Result<()> {
    let len = u16::try_from(program.len()).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "BPF program longer than 65535 instructions",
        )
    })?;
    let prog = libc::sock_fprog {
        len,
        filter: program.as_ptr().cast_mut(),
    };
    // The kernel copies the instructions during the call; `program` outlives it.
    setsockopt(fd, libc::SOL_SOCKET, libc::SO_ATTACH_FILTER, &prog)
}

/// `getsockopt(fd, level, name)` into a `T`; errors if the kernel wrote a different size.
pub fn getsockopt<T: Copy>(fd: BorrowedFd<'_>, level: i32, name: i32) -> io::Result<T> {
    let mut value = MaybeUninit::<T>::zeroed();
    let mut len = size_of::<T>() as libc::socklen_t;
    // SAFETY: `value` has room for `len` bytes; the kernel writes at most `len` and updates it.
    check(unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            level,
            name,
            value.as_mut_ptr().cast(),
            &mut len,
        )
    })?;
    if len as usize != size_of::<T>() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "getsockopt({level}, {name}) returned {len} bytes, expected {}",
                size_of::<T>()
            ),
        ));
    }
    // SAFETY: zero-initialised and then filled by the kernel; `T` is a plain C type for which
    // every bit pattern is valid (callers use integers and libc structs only).
    Ok(unsafe { value.assume_init() })
}

/// `bind(fd, sockaddr_ll { ifindex, protocol })`.
pub fn bind_link(fd: BorrowedFd<'_>, ifindex: u32, protocol_be: u16) -> io::Result<()> {
    // SAFETY: sockaddr_ll is a plain C struct; all-zero is a valid value.
    let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    sll.sll_family = libc::AF_PACKET as u16;
    sll.sll_protocol = protocol_be;
    sll.sll_ifindex = ifindex as i32;
    // SAFETY: `sll` is a valid sockaddr_ll and its size is passed with it.
    check(unsafe {
        libc::bind(
            fd.as_raw_fd(),
            (&sll as *const libc::sockaddr_ll).cast(),
            size_of::<libc::sockaddr_ll>() as libc::socklen_t,
        )
    })?;
    Ok(())
}

/// A name the kernel could give an interface (`dev_valid_name`): 1 to 15 bytes, not `.`
/// or `..`, without `/`, `:`, whitespace or NUL. Anything else is a mistake in the name,
/// not an interface that is missing.
fn check_iface_name(iface: &str) -> Result<(), crate::error::RingError> {
    let bad = iface.is_empty()
        || iface.len() >= libc::IFNAMSIZ
        || iface == "."
        || iface == ".."
        || iface
            .bytes()
            .any(|b| b == b'/' || b == b':' || b == 0 || b.is_ascii_whitespace());
    if bad {
        return Err(crate::error::RingError::config(
            crate::error::Setting::Interface,
            format!(
                "{iface:?} is not an interface name (1 to {} bytes, without '/', ':', \
                 whitespace or NUL)",
                libc::IFNAMSIZ - 1
            ),
        ));
    }
    Ok(())
}

/// `if_nametoindex(name)`; `Ok(None)` when no interface has that name.
pub fn if_nametoindex(name: &str) -> io::Result<Option<u32>> {
    let Ok(c) = CString::new(name) else {
        return Ok(None);
    };
    // SAFETY: `c` is a NUL-terminated string that outlives the call.
    let index = unsafe { libc::if_nametoindex(c.as_ptr()) };
    if index == 0 {
        let err = io::Error::last_os_error();
        return match err.raw_os_error() {
            Some(libc::ENODEV) | Some(libc::ENXIO) => Ok(None),
            _ => Err(err),
        };
    }
    Ok(Some(index))
}

/// Result of [`poll_in`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PollEvents {
    /// POLLIN or POLLRDNORM was reported.
    pub readable: bool,
    /// POLLERR, POLLHUP or POLLNVAL was reported.
    pub error: bool,
}

/// `poll` one fd for input with a timeout; EINTR counts as "nothing happened".
pub fn poll_in(fd: BorrowedFd<'_>, timeout: Duration) -> io::Result<PollEvents> {
    let mut pfd = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN | libc::POLLRDNORM,
        revents: 0,
    };
    // Round up: a sub-millisecond remainder must not become poll(0), which would spin.
    let ms = libc::c_int::try_from(timeout.as_micros().div_ceil(1000)).unwrap_or(libc::c_int::MAX);
    // SAFETY: one valid pollfd, count 1.
    match check(unsafe { libc::poll(&mut pfd, 1, ms) }) {
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::Interrupted => {
            return Ok(PollEvents {
                readable: false,
                error: false,
            })
        }
        Err(e) => return Err(e),
    }
    let r = pfd.revents;
    Ok(PollEvents {
        readable: r & (libc::POLLIN | libc::POLLRDNORM) != 0,
        error: r & (libc::POLLERR | libc::POLLHUP | libc::POLLNVAL) != 0,
    })
}

/// An epoll instance (close-on-exec) watching `fd` for input (level-triggered; errors and
/// hang-ups are always reported).
pub fn epoll_watching(fd: BorrowedFd<'_>) -> io::Result<OwnedFd> {
    // SAFETY: plain syscall with an integer flag.
    let ep = check(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) })?;
    // SAFETY: `ep` is a descriptor the call above just created and nothing else owns.
    let ep = unsafe { OwnedFd::from_raw_fd(ep) };
    let mut ev = libc::epoll_event {
        events: (libc::EPOLLIN | libc::EPOLLRDNORM) as u32,
        u64: 0,
    };
    // SAFETY: `ev` is a valid epoll_event for the call; both descriptors are open.
    check(unsafe {
        libc::epoll_ctl(ep.as_raw_fd(), libc::EPOLL_CTL_ADD, fd.as_raw_fd(), &mut ev)
    })?;
    Ok(ep)
}

/// `epoll_wait` on an instance made by [`epoll_watching`], for up to `timeout`: the watched
/// descriptor's events, as [`poll_in`] reports them; EINTR counts as "nothing happened".
pub fn epoll_wait_in(epoll: BorrowedFd<'_>, timeout: Duration) -> io::Result<PollEvents> {
    let mut ev = libc::epoll_event { events: 0, u64: 0 };
    let ms = libc::c_int::try_from(timeout.as_micros().div_ceil(1000)).unwrap_or(libc::c_int::MAX);
    // SAFETY: room for one event, count 1.
    match check(unsafe { libc::epoll_wait(epoll.as_raw_fd(), &mut ev, 1, ms) }) {
        Ok(0) => ev.events = 0,
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::Interrupted => ev.events = 0,
        Err(e) => return Err(e),
    }
    let r = ev.events;
    Ok(PollEvents {
        readable: r & (libc::EPOLLIN | libc::EPOLLRDNORM) as u32 != 0,
        error: r & (libc::EPOLLERR | libc::EPOLLHUP) as u32 != 0,
    })
}

/// Reads and clears the socket's pending error (`SO_ERROR`).
pub fn take_socket_error(fd: BorrowedFd<'_>) -> io::Result<Option<io::Error>> {
    let code: libc::c_int = getsockopt(fd, libc::SOL_SOCKET, libc::SO_ERROR)?;
    Ok((code != 0).then(|| io::Error::from_raw_os_error(code)))
}

/// `send(fd, NULL, 0, flags)`: asks the kernel to transmit every TX-ring frame marked
/// `TP_STATUS_SEND_REQUEST`. Returns the bytes queued.
pub fn send_kick(fd: BorrowedFd<'_>, dontwait: bool) -> io::Result<usize> {
    let flags = if dontwait { libc::MSG_DONTWAIT } else { 0 };
    // SAFETY: a NULL buffer of length 0 is what the TX ring protocol expects.
    check_size(unsafe { libc::send(fd.as_raw_fd(), std::ptr::null(), 0, flags) })
}

/// `setns(fd, CLONE_NEWNET)` for the calling thread.
#[cfg_attr(not(feature = "test-support"), allow(dead_code))] // the netns lab
pub fn setns_net(fd: RawFd) -> io::Result<()> {
    // SAFETY: plain syscall on an fd the caller keeps open across the call.
    check(unsafe { libc::setns(fd, libc::CLONE_NEWNET) })?;
    Ok(())
}

/// Whether the calling thread has `CAP_NET_RAW` in its effective set (capget).
pub fn has_cap_net_raw() -> bool {
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Clone, Copy, Default)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522; // linux/capability.h
    const CAP_NET_RAW: u32 = 13; // linux/capability.h
    let mut header = Header {
        version: LINUX_CAPABILITY_VERSION_3,
        pid: 0,
    };
    let mut data = [Data::default(); 2];
    // SAFETY: header and a two-element data array as the v3 ABI requires; both outlive the call.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_capget,
            &mut header as *mut Header,
            data.as_mut_ptr(),
        )
    };
    ret == 0 && data[0].effective & (1 << CAP_NET_RAW) != 0
}

/// The system page size (`sysconf(_SC_PAGESIZE)`, asked once).
pub fn page_size() -> usize {
    static PAGE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *PAGE.get_or_init(|| {
        // SAFETY: sysconf has no memory arguments.
        let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if n > 0 {
            n as usize
        } else {
            4096
        }
    })
}

/// Looks up `iface`, opens an AF_PACKET socket with protocol 0 (it receives nothing until
/// bound) and sets the TPACKET `version`: the first steps of every ring. `"any"` (as libpcap)
/// is interface index 0: every interface of the namespace once bound.
pub(crate) fn open_packet_socket(
    iface: &str,
    version: libc::tpacket_versions,
) -> Result<(OwnedFd, u32), crate::error::RingError> {
    open_packet_socket_of(iface, version, libc::SOCK_RAW)
}

/// [`open_packet_socket`] with the socket type (SOCK_RAW or SOCK_DGRAM).
pub(crate) fn open_packet_socket_of(
    iface: &str,
    version: libc::tpacket_versions,
    kind: libc::c_int,
) -> Result<(OwnedFd, u32), crate::error::RingError> {
    let ifindex = if iface == "any" {
        0
    } else {
        check_iface_name(iface)?;
        if_nametoindex(iface)
            .map_err(|e| crate::error::RingError::sys("if_nametoindex", iface, e))?
            .ok_or_else(|| crate::error::RingError::NoSuchInterface {
                iface: iface.to_owned(),
            })?
    };
    let fd = packet_socket_of(0, kind)
        .map_err(|e| crate::error::RingError::sys("opening an AF_PACKET socket", iface, e))?;
    let v = version as libc::c_int;
    setsockopt(
        std::os::fd::AsFd::as_fd(&fd),
        libc::SOL_PACKET,
        libc::PACKET_VERSION,
        &v,
    )
    .map_err(|e| crate::error::RingError::sys("PACKET_VERSION", iface, e))?;
    Ok((fd, ifindex))
}

/// Asks for transparent huge pages over the whole pages inside `len` bytes at `addr`
/// (`madvise(MADV_HUGEPAGE)`; with THP set to `madvise`, as Debian has it, memory gets huge
/// pages only when asked). Advice only: errors (no THP in the kernel, a range not mapped)
/// are ignored. The signature fits `FlowTableConfig::prepare_memory`.
pub fn advise_huge_pages(addr: usize, len: usize) {
    let page = page_size();
    let start = addr.next_multiple_of(page);
    let end = (addr + len) / page * page;
    if end <= start {
        return;
    }
    // SAFETY: MADV_HUGEPAGE changes how the range is backed, never its contents; a range
    // that is not (wholly) mapped makes madvise fail with ENOMEM, and nothing else happens.
    let _ = unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
}

/// A PM QoS request: while the returned file stays open, no CPU enters an idle state whose
/// exit takes longer than `us` microseconds (the kernel's `/dev/cpu_dma_latency`, what
/// cyclictest and tuned's latency-performance profile hold). With 0 idle CPUs poll instead
/// of halting, so a wake-up does not wait for a halted CPU to come back, at the price of
/// power on every CPU while the request stands. Opening the file needs root.
pub fn hold_cpu_dma_latency(us: u32) -> std::io::Result<std::fs::File> {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/cpu_dma_latency")?;
    let value =
        i32::try_from(us).map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    f.write_all(&value.to_ne_bytes())?;
    Ok(f)
}

/// Registers a socket with the current tokio runtime's reactor, for readiness to read.
///
/// # Panics
/// Outside a tokio runtime, or in one without IO (tokio's own rule).
#[cfg(feature = "tokio")]
pub(crate) fn register_readable(fd: OwnedFd) -> io::Result<tokio::io::unix::AsyncFd<OwnedFd>> {
    // SAFETY: `register_with_interest` needs a fd that stays open, refers to the same file,
    // and is what every `as_raw_fd` call returns while the AsyncFd owns the value: an
    // `OwnedFd` is one fd, closed only when it drops, which the AsyncFd owns until it is
    // dropped (deregistering first) or gives it back with `into_inner`.
    unsafe { tokio::io::unix::AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE) }
        .map_err(|e| e.into_parts().1)
}
