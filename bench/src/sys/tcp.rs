//! TCP for `rxbench tcp-rx`: `TCP_MAXSEG`, `MSG_ZEROCOPY` sends and their completions, the
//! socket's receive mapping and `TCP_ZEROCOPY_RECEIVE`, plain `recv`.

use std::io;
use std::mem::size_of;
use std::os::fd::RawFd;
use std::ptr::NonNull;

use super::errno::{check, check_map, check_nonblocking};
use super::udp::setsockopt_int;

/// `TCP_MAXSEG` on `fd`: on a listener, the MSS it advertises to the connections it accepts.
pub fn set_maxseg(fd: RawFd, mss: i32) -> io::Result<()> {
    setsockopt_int(fd, libc::IPPROTO_TCP, libc::TCP_MAXSEG, mss)
}

/// `TCP_MAXSEG` of a connected `fd`: the MSS it sends and receives with.
pub fn maxseg(fd: RawFd) -> io::Result<i32> {
    let mut v: i32 = 0;
    let mut len = size_of::<i32>() as libc::socklen_t;
    // SAFETY: `v` and `len` are valid for the call.
    check(unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_MAXSEG,
            (&mut v as *mut i32).cast(),
            &mut len,
        )
    })?;
    Ok(v)
}

/// `SO_ZEROCOPY` on `fd`: sends may pass `MSG_ZEROCOPY`.
pub fn set_zerocopy(fd: RawFd) -> io::Result<()> {
    setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_ZEROCOPY, 1)
}

/// What a non-blocking send did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sent {
    /// This many bytes were queued.
    Bytes(usize),
    /// The send buffer is full (EAGAIN).
    Full,
    /// Too many zero-copy sends await their completion (ENOBUFS): read the error queue.
    Completions,
}

/// One non-blocking `send` of `buf`, with `MSG_ZEROCOPY` when `zerocopy` (the pages of `buf`
/// are then the kernel's until their completion arrives; looped to a local socket, the kernel
/// copies them into pages of its own).
pub fn send(fd: RawFd, buf: &[u8], zerocopy: bool) -> io::Result<Sent> {
    let flags =
        libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL | if zerocopy { libc::MSG_ZEROCOPY } else { 0 };
    // SAFETY: `buf` is valid for `buf.len()` bytes across the call.
    let n = unsafe { libc::send(fd, buf.as_ptr().cast(), buf.len(), flags) };
    if n >= 0 {
        return Ok(Sent::Bytes(n as usize));
    }
    let e = io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EAGAIN) => Ok(Sent::Full),
        Some(libc::ENOBUFS) => Ok(Sent::Completions),
        _ => Err(e),
    }
}

/// Reads every queued `MSG_ZEROCOPY` completion of `fd` (its error queue); returns how many
/// notifications were read.
pub fn drain_completions(fd: RawFd) -> io::Result<u64> {
    let mut n = 0;
    loop {
        let mut control = [0u64; 16];
        // SAFETY: all-zero is a valid msghdr.
        let mut m: libc::msghdr = unsafe { std::mem::zeroed() };
        m.msg_control = control.as_mut_ptr().cast();
        m.msg_controllen = size_of::<[u64; 16]>();
        // SAFETY: `m` points at `control`, which outlives the call; no data buffer.
        let r = unsafe { libc::recvmsg(fd, &mut m, libc::MSG_ERRQUEUE | libc::MSG_DONTWAIT) };
        match check_nonblocking(r)? {
            Some(_) => n += 1,
            None => return Ok(n),
        }
    }
}

/// One non-blocking `recv` into `buf`: `Ok(None)` when nothing is queued, `Some(0)` at the
/// end of the stream.
pub fn recv(fd: RawFd, buf: &mut [u8]) -> io::Result<Option<usize>> {
    // SAFETY: `buf` is valid for writes of `buf.len()` bytes across the call.
    let n = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), libc::MSG_DONTWAIT) };
    check_nonblocking(n)
}

/// `struct tcp_zerocopy_receive` (linux/tcp.h).
#[repr(C)]
#[derive(Default)]
struct TcpZerocopyReceive {
    address: u64,
    length: u32,
    recv_skip_hint: u32,
    inq: u32,
    err: i32,
    copybuf_address: u64,
    copybuf_len: i32,
    flags: u32,
    msg_control: u64,
    msg_controllen: u64,
    msg_flags: u32,
    reserved: u32,
}

/// What one `TCP_ZEROCOPY_RECEIVE` did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ZcRead {
    /// Bytes mapped into the receive mapping, from its start (whole pages).
    pub mapped: usize,
    /// Bytes after those copied into the copy buffer (the part no whole page held).
    pub copied: usize,
    /// Bytes after those that neither could take: to be read with `recv` before the next
    /// mapping can go on (`recv_skip_hint`).
    pub skip: usize,
    /// Bytes still queued on the socket after this call (`inq`).
    pub inq: usize,
}

/// A TCP socket's receive mapping: `len` bytes of address space the kernel maps received
/// pages into (`mmap` of the socket), unmapped on drop.
pub struct ZcMap {
    ptr: NonNull<u8>,
    len: usize,
    fd: RawFd,
}

// SAFETY: an address range of this process; the kernel fills it only inside the receive
// call made through `&mut self`.
unsafe impl Send for ZcMap {}

impl ZcMap {
    /// Maps `len` bytes (a page multiple) of `fd`'s receive queue's address space.
    pub fn new(fd: RawFd, len: usize) -> io::Result<ZcMap> {
        // SAFETY: a new shared read-only mapping of the socket; the kernel checks `fd`.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_SHARED,
                fd,
                0,
            )
        };
        Ok(ZcMap {
            ptr: check_map(p)?,
            len,
            fd,
        })
    }

    /// One `TCP_ZEROCOPY_RECEIVE` of up to the mapping's length: the pages it maps replace
    /// the last call's (whose pages the kernel unmaps first, a TLB flush), what precedes
    /// the next whole page is copied into `copybuf`. Returns the counts and, through `f`,
    /// the mapped bytes then the copied ones, in stream order.
    pub fn receive(&mut self, copybuf: &mut [u8], mut f: impl FnMut(&[u8])) -> io::Result<ZcRead> {
        let mut zc = TcpZerocopyReceive {
            address: self.ptr.as_ptr() as u64,
            length: self.len as u32,
            copybuf_address: copybuf.as_mut_ptr() as u64,
            copybuf_len: copybuf.len() as i32,
            ..TcpZerocopyReceive::default()
        };
        let mut len = size_of::<TcpZerocopyReceive>() as libc::socklen_t;
        // SAFETY: `zc` and `len` are valid for the call; the kernel maps pages only into
        // [address, address + length), which this mapping owns, and copies at most
        // `copybuf_len` bytes into `copybuf`, borrowed mutably across the call.
        check(unsafe {
            libc::getsockopt(
                self.fd,
                libc::IPPROTO_TCP,
                libc::TCP_ZEROCOPY_RECEIVE,
                (&mut zc as *mut TcpZerocopyReceive).cast(),
                &mut len,
            )
        })?;
        if zc.err != 0 {
            return Err(io::Error::from_raw_os_error(zc.err.abs()));
        }
        if zc.copybuf_len < 0 {
            return Err(io::Error::from_raw_os_error(-zc.copybuf_len));
        }
        let read = ZcRead {
            mapped: (zc.length as usize).min(self.len),
            copied: (zc.copybuf_len as usize).min(copybuf.len()),
            skip: zc.recv_skip_hint as usize,
            inq: zc.inq as usize,
        };
        if read.mapped > 0 {
            // SAFETY: the kernel mapped `mapped` bytes of received data at the mapping's
            // start; they stay mapped until the next call through `&mut self`.
            f(unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), read.mapped) });
        }
        if read.copied > 0 {
            f(&copybuf[..read.copied]);
        }
        Ok(read)
    }
}

impl Drop for ZcMap {
    fn drop(&mut self) {
        // SAFETY: we own the mapping.
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}
