//! io_uring multishot `recvmsg` over many UDP sockets with a provided-buffer ring: the
//! `sockets-io-uring` mode's system interface.
//!
//! One ring per receiver thread. Every socket gets one multishot `recvmsg` (Linux 6.0) that
//! picks its buffer from one provided-buffer ring (`IORING_REGISTER_PBUF_RING`, 5.19); a
//! completion names the socket (user data) and the buffer, which holds the kernel's
//! `io_uring_recvmsg_out` header, the control messages (the receive timestamp) and the
//! datagram. Buffers go back to the ring after the handler has seen them. The kernel copies
//! each datagram once, into the provided buffer; nothing is copied in user space.

use std::io;
use std::mem::{size_of, zeroed};
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU16, Ordering};
use std::time::Duration;

use io_uring::{cqueue, opcode, types, IoUring};

use super::Anon;

/// Buffer group id of the provided buffers.
const GROUP: u16 = 0;
/// Control space per datagram (an SCM_TIMESTAMPNS message needs 32 bytes).
const CONTROL: usize = 64;

/// What the kernel lacks, said once, for the mode's refusal.
fn needs(what: &str, e: io::Error) -> io::Error {
    io::Error::new(
        e.kind(),
        format!("io_uring: {what} (needs Linux 6.0 or later with io_uring enabled): {e}"),
    )
}

/// A ring receiving from many sockets through multishot `recvmsg`.
pub struct MultishotRx {
    ring: IoUring,
    /// The provided-buffer ring: `count` 16-byte entries, page aligned.
    entries: Anon,
    /// The buffers the entries point at.
    buffers: Anon,
    buf_size: usize,
    count: u16,
    /// Our copy of the buffer ring's tail.
    tail: u16,
    /// The header every multishot `recvmsg` shares (the kernel reads only its name and
    /// control lengths).
    msghdr: Box<libc::msghdr>,
    fds: Vec<RawFd>,
    /// Completions of the last wait and sockets to re-arm (kept to reuse their capacity).
    done: Vec<(u64, i32, u32)>,
    rearm: Vec<usize>,
}

// SAFETY: the raw pointers (the msghdr's and the mappings') point into memory owned by this
// value; the ring is used by one thread at a time.
unsafe impl Send for MultishotRx {}

impl MultishotRx {
    /// A ring over `fds` (socket `i` completes with user data `i`) with `count` buffers
    /// (a power of two up to 32768) of room for `max_datagram` bytes each.
    pub fn new(fds: &[RawFd], max_datagram: usize, count: u16) -> io::Result<MultishotRx> {
        assert!(count.is_power_of_two() && count <= 32768);
        let sq = (fds.len() as u32).clamp(64, 4096).next_power_of_two();
        // Completions are posted when this thread asks for them (DEFER_TASKRUN, 6.1), not by
        // interrupting it: the setup liburing recommends for networking. Plain setup when
        // the kernel refuses it.
        let ring = IoUring::builder()
            .setup_cqsize(8 * u32::from(count))
            .setup_single_issuer()
            .setup_defer_taskrun()
            .build(sq)
            .or_else(|_| {
                IoUring::builder()
                    .setup_cqsize(8 * u32::from(count))
                    .build(sq)
            })
            .map_err(|e| needs("io_uring_setup failed", e))?;
        if !ring.params().is_feature_ext_arg() || !ring.params().is_feature_nodrop() {
            return Err(needs(
                "the kernel lacks IORING_FEAT_EXT_ARG or IORING_FEAT_NODROP",
                io::Error::from(io::ErrorKind::Unsupported),
            ));
        }
        let buf_size = (16 /* io_uring_recvmsg_out */ + CONTROL + max_datagram + 63) & !63;
        let entries = Anon::new(usize::from(count) * 16)?;
        let buffers = Anon::new(buf_size * usize::from(count))?;
        // SAFETY: `entries` is a page-aligned mapping of `count` ring entries that lives as
        // long as the ring (fields are dropped in declaration order: the ring first).
        unsafe {
            ring.submitter()
                .register_buf_ring_with_flags(entries.as_ptr() as u64, count, GROUP, 0)
        }
        .map_err(|e| needs("registering a provided-buffer ring failed", e))?;
        // SAFETY: all-zero is a valid msghdr.
        let mut msghdr: Box<libc::msghdr> = Box::new(unsafe { zeroed() });
        msghdr.msg_controllen = CONTROL;
        let mut rx = MultishotRx {
            ring,
            entries,
            buffers,
            buf_size,
            count,
            tail: 0,
            msghdr,
            fds: fds.to_vec(),
            done: Vec::with_capacity(8 * usize::from(count)),
            rearm: Vec::new(),
        };
        for bid in 0..count {
            rx.give_back(bid);
        }
        rx.publish_tail();
        for i in 0..fds.len() {
            rx.arm(i)?;
        }
        rx.ring.submit()?;
        Ok(rx)
    }

    /// Queues a multishot `recvmsg` on socket `i`.
    fn arm(&mut self, i: usize) -> io::Result<()> {
        let sqe = opcode::RecvMsgMulti::new(types::Fd(self.fds[i]), &*self.msghdr, GROUP)
            .build()
            .user_data(i as u64);
        loop {
            // SAFETY: the msghdr lives in a Box owned by `self`, as long as the ring.
            if unsafe { self.ring.submission().push(&sqe) }.is_ok() {
                return Ok(());
            }
            self.ring.submit()?;
        }
    }

    /// Puts buffer `bid` at the ring's tail (published by [`Self::publish_tail`]).
    fn give_back(&mut self, bid: u16) {
        let slot = usize::from(self.tail & (self.count - 1));
        let addr = self.buffers.as_ptr() as u64 + (usize::from(bid) * self.buf_size) as u64;
        // SAFETY: `slot` < count entries of 16 bytes, inside `entries`; BufRingEntry is the
        // kernel's io_uring_buf layout. Entry 0's last two bytes are the ring's tail, which
        // only `publish_tail` writes, so only addr, len and bid are set here.
        let e = unsafe { &mut *(self.entries.as_ptr().cast::<types::BufRingEntry>()).add(slot) };
        e.set_addr(addr);
        e.set_len(self.buf_size as u32);
        e.set_bid(bid);
        self.tail = self.tail.wrapping_add(1);
    }

    /// Makes the entries written since the last call visible to the kernel.
    fn publish_tail(&mut self) {
        // SAFETY: the tail is an aligned u16 inside the mapping (at offset 14 of entry 0),
        // shared with the kernel, which reads it atomically.
        let tail = unsafe {
            &*types::BufRingEntry::tail(self.entries.as_ptr().cast()).cast::<AtomicU16>()
        };
        tail.store(self.tail, Ordering::Release);
    }

    /// Waits up to `timeout` for completions and hands each datagram to `f` as (socket index,
    /// datagram, kernel receive timestamp). Returns how many datagrams were handled.
    pub fn poll(
        &mut self,
        timeout: Duration,
        mut f: impl FnMut(usize, &[u8], Option<u64>),
    ) -> io::Result<usize> {
        let ts = types::Timespec::from(timeout);
        let args = types::SubmitArgs::new().timespec(&ts);
        match self.ring.submitter().submit_with_args(1, &args) {
            Ok(_) => {}
            Err(e) if matches!(e.raw_os_error(), Some(libc::ETIME | libc::EINTR)) => {}
            Err(e) => return Err(e),
        }
        let mut handled = 0;
        let (mut done, mut rearm) = (
            std::mem::take(&mut self.done),
            std::mem::take(&mut self.rearm),
        );
        done.extend(
            self.ring
                .completion()
                .map(|c| (c.user_data(), c.result(), c.flags())),
        );
        for &(user, result, flags) in &done {
            let i = user as usize;
            if !cqueue::more(flags) {
                rearm.push(i);
            }
            if result < 0 {
                let e = io::Error::from_raw_os_error(-result);
                match -result {
                    // Out of buffers for a moment: the multishot ended; it is re-armed below.
                    libc::ENOBUFS => continue,
                    libc::EINVAL => return Err(needs("multishot recvmsg refused", e)),
                    _ => return Err(e),
                }
            }
            let Some(bid) = cqueue::buffer_select(flags) else {
                continue;
            };
            let start = usize::from(bid) * self.buf_size;
            let len = (result as usize).min(self.buf_size);
            // SAFETY: the completion hands buffer `bid` ([start, start + buf_size) of the
            // mapping) to us until `give_back`; the kernel wrote `len` <= buf_size bytes.
            let buf = unsafe { std::slice::from_raw_parts(self.buffers.as_ptr().add(start), len) };
            if let Ok(out) = types::RecvMsgOut::parse(buf, &self.msghdr) {
                f(i, out.payload_data(), timestamp(out.control_data()));
                handled += 1;
            }
            self.give_back(bid);
        }
        self.publish_tail();
        done.clear();
        self.done = done;
        for &i in &rearm {
            self.arm(i)?;
        }
        rearm.clear();
        self.rearm = rearm;
        Ok(handled)
    }
}

/// The SCM_TIMESTAMPNS message in a control buffer the kernel filled (cmsghdr: length as
/// usize, level and type as i32, data aligned to 8).
fn timestamp(mut control: &[u8]) -> Option<u64> {
    const HDR: usize = size_of::<libc::cmsghdr>();
    while control.len() >= HDR {
        let len = usize::from_ne_bytes(control[..8].try_into().ok()?);
        let level = i32::from_ne_bytes(control[8..12].try_into().ok()?);
        let kind = i32::from_ne_bytes(control[12..16].try_into().ok()?);
        if len < HDR || len > control.len() {
            return None;
        }
        if level == libc::SOL_SOCKET && kind == libc::SCM_TIMESTAMPNS && len >= HDR + 16 {
            let sec = i64::from_ne_bytes(control[HDR..HDR + 8].try_into().ok()?);
            let nsec = i64::from_ne_bytes(control[HDR + 8..HDR + 16].try_into().ok()?);
            return Some(sec as u64 * 1_000_000_000 + nsec as u64);
        }
        control = control.get((len + 7) & !7..)?;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmsg(level: i32, kind: i32, data: &[u8]) -> Vec<u8> {
        let mut v = Vec::new();
        v.extend_from_slice(&(16 + data.len()).to_ne_bytes());
        v.extend_from_slice(&level.to_ne_bytes());
        v.extend_from_slice(&kind.to_ne_bytes());
        v.extend_from_slice(data);
        while v.len() % 8 != 0 {
            v.push(0);
        }
        v
    }

    #[test]
    fn the_timestamp_is_found_after_other_messages_and_bad_lengths_stop_the_walk() {
        let mut ts = Vec::new();
        ts.extend_from_slice(&5i64.to_ne_bytes());
        ts.extend_from_slice(&7i64.to_ne_bytes());
        let mut control = cmsg(libc::SOL_IP, libc::IP_TTL, &64i32.to_ne_bytes());
        control.extend(cmsg(libc::SOL_SOCKET, libc::SCM_TIMESTAMPNS, &ts));
        assert_eq!(timestamp(&control), Some(5_000_000_007));
        assert_eq!(
            timestamp(&control[..20]),
            None,
            "cut inside the second message"
        );
        assert_eq!(timestamp(&[]), None);
        let mut bad = control.clone();
        bad[..8].copy_from_slice(&3usize.to_ne_bytes());
        assert_eq!(timestamp(&bad), None, "a length shorter than the header");
        bad[..8].copy_from_slice(&usize::MAX.to_ne_bytes());
        assert_eq!(timestamp(&bad), None, "a length past the end");
    }
}
