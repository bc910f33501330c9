//! AF_XDP receive for the `af-xdp` mode: a hand-assembled XDP program that redirects every
//! frame of an rx queue to the AF_XDP socket bound to that queue (an XSKMAP), loaded and
//! attached with the `bpf` system call (no clang, no object file), and the sockets with their
//! UMEM, fill ring and RX ring.
//!
//! A veth has no zero-copy AF_XDP driver: the sockets bind in copy mode, so the kernel copies
//! each frame once, from the veth's buffer into the UMEM; user space reads it in place.

use std::io;
use std::mem::{size_of, zeroed};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use zcrx_kflows::bpf::{self, Asm, Size, R1, R2, R3};

use super::errno::{check, check_map};
use super::Anon;

/// The helper `bpf_redirect_map(map, key, flags)`.
const HELPER_REDIRECT_MAP: i32 = 51;
/// The action when the map has no socket for the queue (the low bits of the flags).
const XDP_PASS: i32 = 2;

/// The program, for an XSKMAP whose fd is `map`: each frame to the socket of its rx queue,
/// or on to the stack when the map has none for it.
fn redirect_program(map: RawFd) -> Vec<u64> {
    let mut a = Asm::default();
    a.ldx(Size::W, R2, R1, 16); // ctx->rx_queue_index
    a.ld_map(R1, map);
    a.movi(R3, XDP_PASS); // what to do when no socket is in the map for the queue
    a.call(HELPER_REDIRECT_MAP);
    a.exit();
    a.finish().expect("a program without labels")
}

/// An attached redirect program; detached when dropped (its link closes).
pub struct XdpRedirect {
    /// Detaches the program when closed; declared first so it closes first.
    _link: OwnedFd,
    _prog: OwnedFd,
    _map: OwnedFd,
    /// "native" (the driver's XDP hook) or "generic" (the skb hook).
    pub hook: &'static str,
}

/// Loads the redirect program for `queues` rx queues and the sockets `xsks` (socket `i`
/// receives queue `i`), then attaches it to `ifindex`: at the driver's hook if the device
/// has one, else at the generic hook. Errors say what the kernel refused.
pub fn attach_redirect(ifindex: u32, xsks: &[&XskSocket]) -> io::Result<XdpRedirect> {
    let map = bpf::create_map(bpf::BPF_MAP_TYPE_XSKMAP, 4, 4, xsks.len().max(1) as u32)
        .map_err(|e| refused("creating an XSKMAP (needs CAP_BPF or root)", e))?;
    for (q, x) in xsks.iter().enumerate() {
        let fd = x.fd.as_raw_fd() as u32;
        bpf::update(&map, &(q as u32).to_ne_bytes(), &fd.to_ne_bytes())
            .map_err(|e| refused("adding a socket to the XSKMAP", e))?;
    }
    let prog = load(map.as_raw_fd())?;
    let mut last = None;
    for (flags, hook) in [
        (bpf::XDP_FLAGS_DRV_MODE, "native"),
        (bpf::XDP_FLAGS_SKB_MODE, "generic"),
    ] {
        match bpf::xdp_link(&prog, ifindex, flags) {
            Ok(link) => {
                return Ok(XdpRedirect {
                    _link: link,
                    _prog: prog,
                    _map: map,
                    hook,
                })
            }
            Err(e) => last = Some(e),
        }
    }
    Err(refused(
        "attaching the XDP program (native and generic hooks)",
        last.expect("two attempts"),
    ))
}

/// Loads the program; a verifier refusal carries the verifier's log.
fn load(map: RawFd) -> io::Result<OwnedFd> {
    let kind = bpf::ProgKind {
        prog_type: bpf::BPF_PROG_TYPE_XDP,
        expected_attach_type: bpf::BPF_XDP,
        prog_flags: 0,
    };
    bpf::load(kind, &redirect_program(map), "zcrx_xsk_q")
        .map_err(|(e, log)| refused(&format!("loading the XDP program (verifier: {log:?})"), e))
}

fn refused(what: &str, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("AF_XDP: {what}: {e}"))
}

/// One mmap'd AF_XDP ring (fill or RX): producer and consumer indexes and descriptors.
struct Ring {
    map: *mut u8,
    len: usize,
    producer: *const AtomicU32,
    consumer: *const AtomicU32,
    desc: *mut u8,
    mask: u32,
}

impl Ring {
    fn map(
        fd: RawFd,
        off: &libc::xdp_ring_offset,
        count: u32,
        desc: usize,
        pgoff: u64,
    ) -> io::Result<Ring> {
        let len = off.desc as usize + count as usize * desc;
        // SAFETY: maps the socket's ring at its page offset; the kernel checks the length.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_POPULATE,
                fd,
                pgoff as libc::off_t,
            )
        };
        let map = check_map(p)?.as_ptr();
        // SAFETY: the offsets come from XDP_MMAP_OFFSETS and lie inside the mapping; the
        // indexes are aligned u32s the kernel updates atomically.
        unsafe {
            Ok(Ring {
                map,
                len,
                producer: map.add(off.producer as usize).cast(),
                consumer: map.add(off.consumer as usize).cast(),
                desc: map.add(off.desc as usize),
                mask: count - 1,
            })
        }
    }
    fn producer(&self) -> &AtomicU32 {
        // SAFETY: points into the mapping, which lives as long as `self`.
        unsafe { &*self.producer }
    }
    fn consumer(&self) -> &AtomicU32 {
        // SAFETY: as above.
        unsafe { &*self.consumer }
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in `Ring::map`.
        unsafe { libc::munmap(self.map.cast(), self.len) };
    }
}

/// An AF_XDP socket bound to one rx queue in copy mode, with its own UMEM of `frames` chunks
/// of `FRAME` bytes, all of them handed to the kernel through the fill ring.
pub struct XskSocket {
    rx: Ring,
    fill: Ring,
    fd: OwnedFd,
    /// Unmapped after the socket is closed (fields drop in order).
    umem: Anon,
    frames: u32,
}

// SAFETY: the raw pointers point into mappings owned by this value; one thread uses it at a
// time.
unsafe impl Send for XskSocket {}

/// UMEM chunk size: a 1514-byte frame after XDP's 256 bytes of headroom fits.
const FRAME: usize = 4096;

impl XskSocket {
    /// A socket on `ifindex` queue `queue` with `frames` (a power of two) UMEM chunks.
    pub fn new(ifindex: u32, queue: u32, frames: u32) -> io::Result<XskSocket> {
        assert!(frames.is_power_of_two());
        // SAFETY: plain syscall.
        let fd =
            check(unsafe { libc::socket(libc::AF_XDP, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) })
                .map_err(|e| refused("socket(AF_XDP)", e))?;
        // SAFETY: a new fd that nobody else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let umem = Anon::new(FRAME * frames as usize)?;
        let reg = libc::xdp_umem_reg {
            addr: umem.as_ptr() as u64,
            len: (FRAME * frames as usize) as u64,
            chunk_size: FRAME as u32,
            headroom: 0,
            flags: 0,
            tx_metadata_len: 0,
        };
        setsockopt(&fd, libc::XDP_UMEM_REG, &reg).map_err(|e| refused("XDP_UMEM_REG", e))?;
        for opt in [
            libc::XDP_UMEM_FILL_RING,
            libc::XDP_UMEM_COMPLETION_RING,
            libc::XDP_RX_RING,
        ] {
            setsockopt(&fd, opt, &frames).map_err(|e| refused("sizing the rings", e))?;
        }
        // SAFETY: all-zero is a valid xdp_mmap_offsets; getsockopt fills it.
        let mut off: libc::xdp_mmap_offsets = unsafe { zeroed() };
        let mut len = size_of::<libc::xdp_mmap_offsets>() as libc::socklen_t;
        // SAFETY: `off` and `len` are valid for the call.
        check(unsafe {
            libc::getsockopt(
                fd.as_raw_fd(),
                libc::SOL_XDP,
                libc::XDP_MMAP_OFFSETS,
                (&mut off as *mut libc::xdp_mmap_offsets).cast(),
                &mut len,
            )
        })?;
        let rx = Ring::map(
            fd.as_raw_fd(),
            &off.rx,
            frames,
            size_of::<libc::xdp_desc>(),
            libc::XDP_PGOFF_RX_RING as u64,
        )?;
        let fill = Ring::map(
            fd.as_raw_fd(),
            &off.fr,
            frames,
            8,
            libc::XDP_UMEM_PGOFF_FILL_RING,
        )?;
        bind_copy_mode(&fd, ifindex, queue)?;
        let sock = XskSocket {
            rx,
            fill,
            fd,
            umem,
            frames,
        };
        for i in 0..frames {
            sock.fill_slot(i, u64::from(i) * FRAME as u64);
        }
        sock.fill.producer().store(frames, Ordering::Release);
        Ok(sock)
    }

    /// Writes chunk address `addr` into fill ring entry `index`.
    fn fill_slot(&self, index: u32, addr: u64) {
        // SAFETY: `index & mask` < frames entries of 8 bytes inside the fill mapping; the
        // entry is ours until the producer index passes it.
        unsafe {
            self.fill
                .desc
                .add((index & self.fill.mask) as usize * 8)
                .cast::<u64>()
                .write(addr)
        };
    }

    /// The socket's fd (for poll and the XSKMAP).
    pub fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Hands every frame in the RX ring to `f`, then returns their chunks to the fill ring.
    pub fn drain(&mut self, mut f: impl FnMut(&[u8])) -> usize {
        let prod = self.rx.producer().load(Ordering::Acquire);
        let cons = self.rx.consumer().load(Ordering::Relaxed);
        let n = prod.wrapping_sub(cons);
        if n == 0 {
            return 0;
        }
        let fill_prod = self.fill.producer().load(Ordering::Relaxed);
        for k in 0..n {
            let i = cons.wrapping_add(k);
            // SAFETY: entries between the consumer and the producer index are written by the
            // kernel and ours to read until the consumer index passes them.
            let d = unsafe {
                self.rx
                    .desc
                    .add((i & self.rx.mask) as usize * size_of::<libc::xdp_desc>())
                    .cast::<libc::xdp_desc>()
                    .read()
            };
            let (addr, len) = (d.addr as usize, d.len as usize);
            if addr + len <= FRAME * self.frames as usize {
                // SAFETY: the chunk holding [addr, addr + len) was handed to us by the RX
                // descriptor; the kernel does not write it until it is back in the fill ring.
                f(unsafe { std::slice::from_raw_parts(self.umem.as_ptr().add(addr), len) });
            }
            self.fill_slot(fill_prod.wrapping_add(k), (addr & !(FRAME - 1)) as u64);
        }
        self.rx.consumer().store(prod, Ordering::Release);
        // Every chunk is either in the fill ring, in the RX ring or with us, so the fill
        // ring (as large as the UMEM) always has room for the ones returned.
        self.fill
            .producer()
            .store(fill_prod.wrapping_add(n), Ordering::Release);
        n as usize
    }
}

/// An AF_XDP socket's drops: no free chunk, RX ring full, invalid descriptors.
pub fn drops(fd: RawFd) -> io::Result<u64> {
    // SAFETY: all-zero is a valid xdp_statistics; getsockopt fills it.
    let mut st: libc::xdp_statistics = unsafe { zeroed() };
    let mut len = size_of::<libc::xdp_statistics>() as libc::socklen_t;
    // SAFETY: `st` and `len` are valid for the call.
    check(unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_XDP,
            libc::XDP_STATISTICS,
            (&mut st as *mut libc::xdp_statistics).cast(),
            &mut len,
        )
    })?;
    Ok(st.rx_dropped + st.rx_ring_full + st.rx_invalid_descs)
}

/// Waits up to `timeout` until one of `socks` has frames.
pub fn wait_any(socks: &[XskSocket], timeout: Duration) -> io::Result<()> {
    let mut fds: Vec<libc::pollfd> = socks
        .iter()
        .map(|s| libc::pollfd {
            fd: s.raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    // SAFETY: `fds` is a valid array of its length.
    let r = unsafe {
        libc::poll(
            fds.as_mut_ptr(),
            fds.len() as libc::nfds_t,
            timeout.as_millis() as i32,
        )
    };
    match check(r) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(()),
        Err(e) => Err(e),
    }
}

fn setsockopt<T>(fd: &OwnedFd, name: libc::c_int, v: &T) -> io::Result<()> {
    // SAFETY: `v` is a value of the size passed, living across the call.
    check(unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_XDP,
            name,
            (v as *const T).cast(),
            size_of::<T>() as libc::socklen_t,
        )
    })?;
    Ok(())
}

/// Binds the AF_XDP socket `fd` to `queue` of `ifindex` in copy mode. A socket just closed on
/// that queue leaves it busy until the kernel has released its buffer pool (after an RCU
/// grace period): back-to-back runs (capacity trials) wait for that, up to a second.
fn bind_copy_mode(fd: &OwnedFd, ifindex: u32, queue: u32) -> io::Result<()> {
    // SAFETY: all-zero is a valid sockaddr_xdp.
    let mut sa: libc::sockaddr_xdp = unsafe { zeroed() };
    sa.sxdp_family = libc::AF_XDP as u16;
    sa.sxdp_flags = libc::XDP_COPY;
    sa.sxdp_ifindex = ifindex;
    sa.sxdp_queue_id = queue;
    let mut tries = 0;
    loop {
        // SAFETY: `sa` is a valid sockaddr_xdp of the size passed.
        let r = check(unsafe {
            libc::bind(
                fd.as_raw_fd(),
                (&sa as *const libc::sockaddr_xdp).cast(),
                size_of::<libc::sockaddr_xdp>() as u32,
            )
        });
        match r {
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) && tries < 100 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(10));
            }
            r => {
                return r
                    .map(drop)
                    .map_err(|e| refused(&format!("binding to queue {queue} in copy mode"), e))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zcrx_kflows::bpf::insn;

    #[test]
    fn instructions_encode_as_the_kernel_reads_them() {
        // `ldxw r2, [r1 + 16]` is 61 12 10 00 00 00 00 00 (llvm-objdump's bytes).
        assert_eq!(
            insn(0x61, 2, 1, 16, 0).to_le_bytes(),
            [0x61, 0x12, 0x10, 0, 0, 0, 0, 0]
        );
        // `call 51`, `exit`, `r3 = 2`, and the map load with src = 1 (pseudo map fd).
        assert_eq!(
            insn(0x85, 0, 0, 0, 51).to_le_bytes(),
            [0x85, 0, 0, 0, 51, 0, 0, 0]
        );
        assert_eq!(
            insn(0x95, 0, 0, 0, 0).to_le_bytes(),
            [0x95, 0, 0, 0, 0, 0, 0, 0]
        );
        assert_eq!(
            insn(0xb7, 3, 0, 0, 2).to_le_bytes(),
            [0xb7, 3, 0, 0, 2, 0, 0, 0]
        );
        assert_eq!(
            insn(0x18, 1, 1, 0, 7).to_le_bytes(),
            [0x18, 0x11, 0, 0, 7, 0, 0, 0]
        );
        // A negative offset and immediate keep their two's-complement bits in their fields.
        assert_eq!(
            insn(0x61, 0, 0, -2, -1).to_le_bytes(),
            [0x61, 0, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff]
        );
        let p = redirect_program(9);
        assert_eq!(p.len(), 6);
        assert_eq!((p[1] >> 32) as i32, 9, "the map fd is the load's immediate");
    }
}
