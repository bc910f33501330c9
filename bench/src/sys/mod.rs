//! The benchmark's own system calls: UDP sockets, epoll, recvmsg/recvmmsg with kernel receive
//! timestamps, per-thread CPU time, mmap/mremap for the remap micro-benchmark.

#![allow(unsafe_code)]

pub mod tcp;
pub mod uring;
pub mod xdp;
pub mod xdp_live;

use std::io;
use std::mem::{size_of, zeroed};
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::ptr::NonNull;

fn check(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// A non-blocking receive's return: `Ok(None)` when nothing was queued (EAGAIN), the
/// length otherwise, `errno` for any other failure.
fn check_nonblocking(ret: isize) -> io::Result<Option<usize>> {
    if ret >= 0 {
        return Ok(Some(ret as usize));
    }
    let e = io::Error::last_os_error();
    if e.kind() == io::ErrorKind::WouldBlock {
        Ok(None)
    } else {
        Err(e)
    }
}

/// An `mmap`/`mremap` return: the mapping, or `errno` for MAP_FAILED.
fn check_map(p: *mut libc::c_void) -> io::Result<NonNull<u8>> {
    if p == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    Ok(NonNull::new(p.cast()).expect("a successful mmap is non-null"))
}

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

fn setsockopt_int(fd: RawFd, level: i32, name: i32, v: i32) -> io::Result<()> {
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

/// CPU time of the calling thread: (user ns, system ns).
pub fn thread_cpu() -> (u64, u64) {
    // SAFETY: all-zero is a valid rusage; getrusage fills it.
    let mut ru: libc::rusage = unsafe { zeroed() };
    // SAFETY: valid pointer.
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    let ns = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1000;
    (ns(ru.ru_utime), ns(ru.ru_stime))
}

/// `--cpu-dma-latency`: [`zcrx_ring::hold_cpu_dma_latency`], with the option in its errors.
pub fn hold_cpu_dma_latency(us: u32) -> anyhow::Result<std::fs::File> {
    zcrx_ring::hold_cpu_dma_latency(us).map_err(|e| {
        anyhow::anyhow!(
            "--cpu-dma-latency {us} (capacity's and saturation's default is 0; `off` holds \
                 nothing): /dev/cpu_dma_latency: {e}"
        )
    })
}

/// CLOCK_REALTIME in ns (the clock of kernel receive timestamps).
pub fn realtime_ns() -> u64 {
    // SAFETY: all-zero timespec is valid; clock_gettime fills it.
    let mut ts: libc::timespec = unsafe { zeroed() };
    // SAFETY: valid pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// An anonymous private mapping, unmapped on drop.
pub struct Anon {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: plain memory, no thread affinity.
unsafe impl Send for Anon {}
// SAFETY: shared access only reads through `as_slice`.
unsafe impl Sync for Anon {}

impl Anon {
    /// `mmap(len)`, populated.
    pub fn new(len: usize) -> io::Result<Self> {
        // SAFETY: anonymous mapping, no fd.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_POPULATE,
                -1,
                0,
            )
        };
        Ok(Anon {
            ptr: check_map(p)?,
            len,
        })
    }
    /// The mapping's first byte (for memory shared with the kernel, where a slice over the
    /// whole mapping would claim bytes the kernel may be writing).
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }
    /// The whole mapping, writable.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: the mapping is `len` bytes, readable and writable, owned by `self`.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
    /// The whole mapping.
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: as above, shared.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
    /// Moves the pages of `self` to a new address with `mremap(MREMAP_MAYMOVE)`: no copy, page
    /// tables are moved and the old range's TLB entries flushed.
    pub fn remap_moving(self) -> io::Result<Anon> {
        // Reserve a destination range so the kernel must move, not extend in place.
        let target = Anon::reserve(self.len)?;
        // SAFETY: `self` owns [ptr, ptr+len); `target` is a mapping of the same length that
        // MREMAP_FIXED replaces; ownership of the pages moves to the new address.
        let p = unsafe {
            libc::mremap(
                self.ptr.as_ptr().cast(),
                self.len,
                self.len,
                libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED,
                target.ptr.as_ptr().cast::<libc::c_void>(),
            )
        };
        let moved = Anon {
            ptr: check_map(p)?,
            len: self.len,
        };
        std::mem::forget(self); // its range no longer exists
        std::mem::forget(target); // replaced by `moved`
        Ok(moved)
    }
    fn reserve(len: usize) -> io::Result<Anon> {
        // SAFETY: anonymous PROT_NONE reservation.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        Ok(Anon {
            ptr: check_map(p)?,
            len,
        })
    }
    /// `munmap` now (drop does the same).
    pub fn unmap(self) {}
}

impl Drop for Anon {
    fn drop(&mut self) {
        // SAFETY: we own the mapping.
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

/// Waits for child `pid` and returns (exit code or -signal, user ns, system ns) from wait4.
pub fn wait_rusage(pid: u32) -> io::Result<(i32, u64, u64)> {
    let mut status = 0;
    // SAFETY: all-zero is a valid rusage; wait4 fills it.
    let mut ru: libc::rusage = unsafe { zeroed() };
    loop {
        // SAFETY: valid pointers; `pid` is our child, reaped exactly once here.
        let r = unsafe { libc::wait4(pid as i32, &mut status, 0, &mut ru) };
        if r == pid as i32 {
            break;
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    let ns = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1000;
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -libc::WTERMSIG(status)
    };
    Ok((code, ns(ru.ru_utime), ns(ru.ru_stime)))
}

/// Sends SIGINT to `pid`.
pub fn interrupt(pid: u32) -> io::Result<()> {
    // SAFETY: plain syscall.
    check(unsafe { libc::kill(pid as i32, libc::SIGINT) })?;
    Ok(())
}

/// The name of a signal rxbench takes.
pub fn signal_name(sig: libc::c_int) -> &'static str {
    match sig {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        _ => "signal",
    }
}

/// Field `n` of a `/proc/PID/stat` line, numbered as proc(5) numbers them (3 and up): the
/// fields are counted after the command name's last ')', since the name (field 2) may hold
/// spaces and parentheses.
pub fn stat_field(stat: &str, n: usize) -> Option<&str> {
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(n.checked_sub(3)?)
}

/// The command name (field 2) of a `/proc/PID/stat` line, without its parentheses.
pub fn stat_comm(stat: &str) -> Option<&str> {
    stat.get(stat.find('(')? + 1..stat.rfind(')')?)
}

/// Kills (SIGKILL) every child process of this one (read from /proc: field 4 of each
/// process's stat is its parent).
pub fn kill_children() {
    let me = std::process::id();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return;
    };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let ppid = stat_field(&stat, 4).and_then(|p| p.parse::<u32>().ok());
        if ppid == Some(me) {
            // SAFETY: plain syscall on a pid read just now.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        }
    }
}

/// An AF_PACKET raw socket for every protocol (the `pnet-datalink` mode hands it to pnet).
pub fn packet_socket() -> io::Result<OwnedFd> {
    let proto = (libc::ETH_P_ALL as u16).to_be() as libc::c_int;
    // SAFETY: plain syscall.
    let fd = check(unsafe {
        libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, proto)
    })?;
    // SAFETY: fd was just created and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// An AF_PACKET socket's drops since the last call (PACKET_STATISTICS resets on read).
pub fn packet_drops(fd: RawFd) -> io::Result<u64> {
    // SAFETY: all-zero is a valid tpacket_stats; getsockopt fills it.
    let mut st: libc::tpacket_stats = unsafe { zeroed() };
    let mut len = size_of::<libc::tpacket_stats>() as libc::socklen_t;
    // SAFETY: `st` and `len` are valid for the call; `fd` is a packet socket the caller keeps
    // open.
    check(unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_PACKET,
            libc::PACKET_STATISTICS,
            (&mut st as *mut libc::tpacket_stats).cast(),
            &mut len,
        )
    })?;
    Ok(u64::from(st.tp_drops))
}

/// Raises the soft open-file limit to the hard limit (the sweep opens thousands of sockets).
pub fn raise_nofile() -> io::Result<u64> {
    // SAFETY: all-zero is a valid rlimit; getrlimit fills it.
    let mut r: libc::rlimit = unsafe { zeroed() };
    // SAFETY: valid pointer.
    check(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) })?;
    r.rlim_cur = r.rlim_max;
    // SAFETY: valid pointer.
    check(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &r) })?;
    Ok(r.rlim_cur)
}

/// The index of interface `name` in the calling thread's network namespace.
pub fn ifindex(name: &str) -> io::Result<u32> {
    let c =
        std::ffi::CString::new(name).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: `c` is a NUL-terminated string living across the call.
    match unsafe { libc::if_nametoindex(c.as_ptr()) } {
        0 => Err(io::Error::last_os_error()),
        i => Ok(i),
    }
}

/// The calling thread's timer slack (how late the kernel may wake a sleep), ns.
pub fn timer_slack_ns(ns: u64) -> io::Result<()> {
    // SAFETY: PR_SET_TIMERSLACK takes an unsigned long and no pointers.
    check(unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, ns as libc::c_ulong, 0, 0, 0) })?;
    Ok(())
}

/// Pins the calling thread (and the threads it starts from now on) to `cpu`; returns the
/// CPUs it was allowed before, for [`set_affinity`] to restore.
pub fn pin_to_cpu(cpu: usize) -> io::Result<libc::cpu_set_t> {
    // SAFETY: cpu_set_t is plain bits; all zero is the empty set.
    let mut old: libc::cpu_set_t = unsafe { zeroed() };
    // SAFETY: pid 0 is the calling thread; `old` is a cpu_set_t of the size passed.
    check(unsafe { libc::sched_getaffinity(0, size_of::<libc::cpu_set_t>(), &mut old) })?;
    // SAFETY: as above.
    let mut set: libc::cpu_set_t = unsafe { zeroed() };
    if cpu >= 8 * size_of::<libc::cpu_set_t>() {
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    }
    // SAFETY: `cpu` is within the set's bits (checked above).
    unsafe { libc::CPU_SET(cpu, &mut set) };
    set_affinity(&set)?;
    Ok(old)
}

/// The calling thread's CPU set.
pub fn set_affinity(set: &libc::cpu_set_t) -> io::Result<()> {
    // SAFETY: pid 0 is the calling thread; `set` is a cpu_set_t of the size passed.
    check(unsafe { libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), set) })?;
    Ok(())
}

/// Pins task `pid` (a thread of any process, a kernel thread such as a NAPI poller) to `cpu`.
pub fn pin_task(pid: u32, cpu: usize) -> io::Result<()> {
    set_task_affinity(pid, &[cpu])
}

/// The CPUs task `tid` (a thread of any process, or a kernel thread) may run on.
pub fn task_affinity(tid: u32) -> io::Result<Vec<usize>> {
    // SAFETY: cpu_set_t is plain bits; all zero is the empty set.
    let mut set: libc::cpu_set_t = unsafe { zeroed() };
    // SAFETY: `set` is a cpu_set_t of the size passed; the kernel checks the tid.
    check(unsafe {
        libc::sched_getaffinity(tid as libc::pid_t, size_of::<libc::cpu_set_t>(), &mut set)
    })?;
    Ok((0..8 * size_of::<libc::cpu_set_t>())
        // SAFETY: `cpu` is within the set's bits (the range above).
        .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
        .collect())
}

/// Lets task `tid` run on `cpus` only (none of them beyond the kernel's CPU set).
pub fn set_task_affinity(tid: u32, cpus: &[usize]) -> io::Result<()> {
    // SAFETY: cpu_set_t is plain bits; all zero is the empty set.
    let mut set: libc::cpu_set_t = unsafe { zeroed() };
    for &cpu in cpus {
        if cpu >= 8 * size_of::<libc::cpu_set_t>() {
            return Err(io::Error::from(io::ErrorKind::InvalidInput));
        }
        // SAFETY: `cpu` is within the set's bits (checked above).
        unsafe { libc::CPU_SET(cpu, &mut set) };
    }
    // SAFETY: `set` is a cpu_set_t of the size passed; the kernel checks the tid.
    check(unsafe {
        libc::sched_setaffinity(tid as libc::pid_t, size_of::<libc::cpu_set_t>(), &set)
    })?;
    Ok(())
}

/// Runs task `pid` under SCHED_FIFO at `priority` (1-99).
pub fn set_fifo(pid: u32, priority: i32) -> io::Result<()> {
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: `param` is a valid sched_param for the call; the kernel checks the pid.
    check(unsafe { libc::sched_setscheduler(pid as libc::pid_t, libc::SCHED_FIFO, &param) })?;
    Ok(())
}

/// `struct ethtool_value` (linux/ethtool.h).
#[repr(C)]
struct EthtoolValue {
    cmd: u32,
    data: u32,
}

/// Turns generic receive offload on or off for `iface` in the calling thread's network
/// namespace (what `ethtool -K IFACE gro on|off` does). A veth takes XDP frames redirected
/// to it only with GRO on or an XDP program of its own.
pub fn set_gro(iface: &str, on: bool) -> io::Result<()> {
    const ETHTOOL_SGRO: u32 = 0x2c; // linux/ethtool.h
    let name = iface.as_bytes();
    if name.len() >= libc::IFNAMSIZ {
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    }
    // SAFETY: plain syscall.
    let fd =
        check(unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) })?;
    // SAFETY: fd was just created and is owned by nobody else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut value = EthtoolValue {
        cmd: ETHTOOL_SGRO,
        data: on as u32,
    };
    // SAFETY: ifreq is plain data; all zero is valid.
    let mut req: libc::ifreq = unsafe { zeroed() };
    for (d, s) in req.ifr_name.iter_mut().zip(name) {
        *d = *s as libc::c_char;
    }
    req.ifr_ifru.ifru_data = (&mut value as *mut EthtoolValue).cast();
    // SAFETY: SIOCETHTOOL reads the interface name and the ethtool_value `req` points at, both
    // alive across the call.
    check(unsafe { libc::ioctl(fd.as_raw_fd(), libc::SIOCETHTOOL as _, &mut req) })?;
    Ok(())
}

/// `f` run on the last CPU (when the affinity can be set; else where it is), the old
/// affinity restored after it.
pub fn on_last_cpu<T>(f: impl FnOnce() -> T) -> io::Result<T> {
    let pinned = pin_to_cpu(last_cpu()).ok();
    let out = f();
    if let Some(old) = pinned {
        set_affinity(&old)?;
    }
    Ok(out)
}

/// The last CPU: where the receivers run, apart from the generator on CPU 0.
pub fn last_cpu() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get()) - 1
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

/// Whether generic receive offload is on for `iface` in the calling thread's network
/// namespace (`ethtool -k IFACE`).
pub fn gro(iface: &str) -> io::Result<bool> {
    const ETHTOOL_GGRO: u32 = 0x2b; // linux/ethtool.h
    ethtool_value(iface, ETHTOOL_GGRO, 0).map(|v| v != 0)
}

fn ethtool_value(iface: &str, cmd: u32, data: u32) -> io::Result<u32> {
    let name = iface.as_bytes();
    if name.len() >= libc::IFNAMSIZ {
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    }
    // SAFETY: plain syscall.
    let fd =
        check(unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) })?;
    // SAFETY: fd was just created and is owned by nobody else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut value = EthtoolValue { cmd, data };
    // SAFETY: ifreq is plain data; all zero is valid.
    let mut req: libc::ifreq = unsafe { zeroed() };
    for (d, s) in req.ifr_name.iter_mut().zip(name) {
        *d = *s as libc::c_char;
    }
    req.ifr_ifru.ifru_data = (&mut value as *mut EthtoolValue).cast();
    // SAFETY: SIOCETHTOOL reads the interface name and the ethtool_value `req` points at, both
    // alive across the call.
    check(unsafe { libc::ioctl(fd.as_raw_fd(), libc::SIOCETHTOOL as _, &mut req) })?;
    Ok(value.data)
}

/// The calling thread's network namespace's `BusyPollRxPackets` (/proc/net/netstat,
/// TcpExt): packets received by busy polling rather than by the device's NAPI.
pub fn busy_poll_rx_packets() -> io::Result<u64> {
    // /proc/net is the process's namespace; thread-self is this thread's.
    let text = std::fs::read_to_string("/proc/thread-self/net/netstat")?;
    let mut lines = text.lines();
    while let (Some(names), Some(values)) = (lines.next(), lines.next()) {
        if !names.starts_with("TcpExt:") {
            continue;
        }
        for (n, v) in names.split_whitespace().zip(values.split_whitespace()) {
            if n == "BusyPollRxPackets" {
                return v
                    .parse()
                    .map_err(|_| io::Error::from(io::ErrorKind::InvalidData));
            }
        }
    }
    Err(io::Error::new(
        io::ErrorKind::NotFound,
        "no TcpExt BusyPollRxPackets in /proc/net/netstat",
    ))
}

/// Whether TCP segmentation offload is on for `iface` in the calling thread's network
/// namespace (`ethtool -k IFACE`: tcp-segmentation-offload).
pub fn tso(iface: &str) -> io::Result<bool> {
    const ETHTOOL_GTSO: u32 = 0x1e; // linux/ethtool.h
    ethtool_value(iface, ETHTOOL_GTSO, 0).map(|v| v != 0)
}

/// Turns TCP segmentation offload on or off for `iface` (`ethtool -K IFACE tso on|off`). A
/// veth hands a frame to its peer's NAPI (where GRO and busy polling happen) only when the
/// sending veth has TSO off, or for socket-owned frames when the peer forwards UDP GRO.
pub fn set_tso(iface: &str, on: bool) -> io::Result<()> {
    const ETHTOOL_STSO: u32 = 0x1f; // linux/ethtool.h
    ethtool_value(iface, ETHTOOL_STSO, on as u32).map(|_| ())
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
