//! PACKET_TX_RING (TPACKET_V2 frames) with PACKET_QDISC_BYPASS: batch send and completion.
//!
//! V2 frames are used for transmit because V3's TX ring is frame-based anyway and V2 is what
//! the kernel has supported longest (netsniff-ng does the same).

use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use crate::error::{RingError, Setting};
use crate::mem::RingMemory;
use crate::sys;

/// Offset of the frame data in a V2 TX frame: `TPACKET2_HDRLEN - sizeof(struct sockaddr_ll)`
/// (af_packet.c `tpacket_parse_header`, without PACKET_TX_HAS_OFF).
pub const TX_DATA_OFFSET: usize = libc::TPACKET2_HDRLEN - std::mem::size_of::<libc::sockaddr_ll>();

/// `tpacket2_hdr` field offsets (linux/if_packet.h).
mod hdr2 {
    pub const STATUS: usize = 0;
    pub const LEN: usize = 4;
    pub const SNAPLEN: usize = 8;
}

/// Builder for [`TxRing`].
#[derive(Debug, Clone)]
pub struct TxRingBuilder {
    iface: String,
    frame_size: usize,
    frame_count: usize,
    qdisc_bypass: bool,
}

impl TxRingBuilder {
    /// Defaults: 2048-byte frames (room for a 1500-byte MTU frame plus VLAN tag), 4096 frames
    /// (8 MiB, enough for one large batch), qdisc bypass on (the generator wants the
    /// shortest path; it loses only the qdisc's queueing, which a veth does not need).
    pub fn new(iface: impl Into<String>) -> Self {
        TxRingBuilder {
            iface: iface.into(),
            frame_size: 2048,
            frame_count: 4096,
            qdisc_bypass: true,
        }
    }
    /// Bytes per frame (multiple of 16; power of two dividing the page keeps frames whole).
    pub fn frame_size(mut self, bytes: usize) -> Self {
        self.frame_size = bytes;
        self
    }
    /// Frames in the ring.
    pub fn frame_count(mut self, n: usize) -> Self {
        self.frame_count = n;
        self
    }
    /// PACKET_QDISC_BYPASS on or off.
    pub fn qdisc_bypass(mut self, on: bool) -> Self {
        self.qdisc_bypass = on;
        self
    }

    /// Opens the socket and maps the ring.
    pub fn build(self) -> Result<TxRing, RingError> {
        let page = crate::sys::page_size();
        let fs = self.frame_size;
        if fs < TX_DATA_OFFSET + 14
            || fs % libc::TPACKET_ALIGNMENT != 0
            || !(fs.is_power_of_two() || fs % page == 0)
        {
            return Err(RingError::config(Setting::FrameSize,
                format!("{fs} must be a multiple of 16, a power of two or of the page size, and hold a header"),
            ));
        }
        if self.frame_count == 0 || self.frame_count > u32::MAX as usize {
            return Err(RingError::config(
                Setting::FrameCount,
                format!("{} must be at least 1", self.frame_count),
            ));
        }
        // Blocks of one page (or one frame when frames are larger) hold whole frames.
        let block_size = fs.max(page);
        let per_block = block_size / fs;
        let block_count = self.frame_count.div_ceil(per_block);
        let frame_count = block_count * per_block;
        let iface = self.iface.as_str();
        let (fd, ifindex) =
            crate::sys::open_packet_socket(iface, libc::tpacket_versions::TPACKET_V2)?;
        let b = fd.as_fd();
        if self.qdisc_bypass {
            let one: libc::c_int = 1;
            sys::setsockopt(b, libc::SOL_PACKET, libc::PACKET_QDISC_BYPASS, &one)
                .map_err(|e| RingError::sys("PACKET_QDISC_BYPASS", iface, e))?;
        }
        let req = libc::tpacket_req {
            tp_block_size: block_size as u32,
            tp_block_nr: block_count as u32,
            tp_frame_size: fs as u32,
            tp_frame_nr: frame_count as u32,
        };
        sys::setsockopt(b, libc::SOL_PACKET, libc::PACKET_TX_RING, &req)
            .map_err(|e| RingError::sys("PACKET_TX_RING", iface, e))?;
        let map = memmap2::MmapOptions::new()
            .len(block_size * block_count)
            .map_raw(&fd)
            .map_err(|e| RingError::sys("mmap of the TX ring", iface, e))?;
        // Protocol 0: this socket only transmits; it never receives a copy of anything.
        sys::bind_link(b, ifindex, 0).map_err(|e| RingError::sys("bind", iface, e))?;
        Ok(TxRing {
            mem: RingMemory::from_mmap(map),
            fd,
            iface: self.iface,
            frame_size: fs,
            frame_count,
            per_block,
            block_size,
            cursor: 0,
        })
    }
}

/// A transmit ring: fill frames, then one `send` hands them all to the driver.
#[derive(Debug)]
pub struct TxRing {
    /// Fields drop in order: the mapping before the socket.
    mem: RingMemory,
    fd: OwnedFd,
    iface: String,
    frame_size: usize,
    frame_count: usize,
    per_block: usize,
    block_size: usize,
    cursor: usize,
}

impl TxRing {
    /// A builder for interface `iface`.
    pub fn builder(iface: impl Into<String>) -> TxRingBuilder {
        TxRingBuilder::new(iface)
    }

    /// Largest frame this ring can carry.
    pub fn max_frame_len(&self) -> usize {
        self.frame_size - TX_DATA_OFFSET
    }

    /// Frames in the ring.
    pub fn frame_count(&self) -> usize {
        self.frame_count
    }

    /// Where frame `i` starts in the mapping.
    fn frame_offset(&self, i: usize) -> usize {
        assert!(i < self.frame_count);
        (i / self.per_block) * self.block_size + (i % self.per_block) * self.frame_size
    }

    fn status(&self, i: usize) -> &AtomicU32 {
        self.mem.status_word(self.frame_offset(i) + hdr2::STATUS)
    }

    /// Writes `frame` and its lengths into frame slot `i`.
    fn fill(&mut self, i: usize, frame: &[u8]) {
        let off = self.frame_offset(i);
        let len = (frame.len() as u32).to_ne_bytes();
        for (at, bytes) in [
            (off + TX_DATA_OFFSET, frame),
            (off + hdr2::LEN, &len[..]),
            (off + hdr2::SNAPLEN, &len[..]),
        ] {
            // SAFETY: frame `i` is AVAILABLE (the caller waited for it), so the kernel does not
            // touch it until we store SEND_REQUEST; `&mut self`: no other reference into the
            // slot exists; the ranges are inside the slot (`frame.len() <= max_frame_len`).
            unsafe { self.mem.bytes_mut(at, bytes.len()) }.copy_from_slice(bytes);
        }
    }

    fn kick(&self, wait: bool) -> Result<(), RingError> {
        match sys::send_kick(self.fd.as_fd(), !wait) {
            Ok(_) => Ok(()),
            // Nothing queued or the device queue is full for a moment: the frames stay marked
            // and are taken by the next kick.
            Err(e) if matches!(e.raw_os_error(), Some(libc::EAGAIN) | Some(libc::ENOBUFS)) => {
                Ok(())
            }
            Err(e) => Err(RingError::sys("send on the TX ring", &self.iface, e)),
        }
    }

    /// Waits until frame `i` is free, kicking the kernel meanwhile.
    fn wait_free(&self, i: usize, deadline: Instant) -> Result<(), RingError> {
        loop {
            // Acquire: pairs with the kernel's release of the frame (TP_STATUS_AVAILABLE after
            // the skb destructor), so our writes cannot race its reads.
            let st = self.status(i).load(Ordering::Acquire);
            if st == libc::TP_STATUS_AVAILABLE {
                return Ok(());
            }
            if st & libc::TP_STATUS_WRONG_FORMAT != 0 {
                return Err(RingError::config(
                    Setting::Frame,
                    format!("kernel rejected TX frame {i} (TP_STATUS_WRONG_FORMAT)"),
                ));
            }
            if Instant::now() >= deadline {
                return Err(RingError::sys(
                    "waiting for TX completion",
                    &self.iface,
                    std::io::Error::from(std::io::ErrorKind::TimedOut),
                ));
            }
            self.kick(false)?;
            std::thread::yield_now();
        }
    }

    /// Queues `frames` and sends them, kicking whenever the ring is full, then waits until the
    /// kernel has taken every frame. Returns the number sent.
    ///
    /// A frame that is refused (outside 14..=[`TxRing::max_frame_len`] bytes, or marked
    /// `TP_STATUS_WRONG_FORMAT` by the kernel, e.g. longer than the interface's MTU) ends the
    /// batch with [`RingError::TxFrameRefused`]: the frames before it were sent, it and the
    /// frames after it were not. A failure (interface gone, timeout) ends it with
    /// [`RingError::TxStopped`] saying how many went out. Either way no frame is left marked
    /// for sending, and the next batch starts where the kernel stopped.
    pub fn send_batch<'f>(
        &mut self,
        frames: impl IntoIterator<Item = &'f [u8]>,
    ) -> Result<usize, RingError> {
        let deadline = Instant::now() + Duration::from_secs(10);
        let start = self.cursor;
        let mut queued = 0;
        let mut refused = None;
        for frame in frames {
            if frame.len() < 14 || frame.len() > self.max_frame_len() {
                refused = Some(format!(
                    "{} bytes; a TX frame must be 14..={} bytes",
                    frame.len(),
                    self.max_frame_len()
                ));
                break;
            }
            let i = self.cursor;
            if let Err(e) = self.wait_free(i, deadline) {
                return Err(self.stop(start, queued, e));
            }
            self.fill(i, frame);
            // Release: the frame bytes and lengths must be visible before the kernel sees
            // SEND_REQUEST (it reads the status, then smp_rmb, then the frame).
            self.status(i)
                .store(libc::TP_STATUS_SEND_REQUEST, Ordering::Release);
            self.cursor = (i + 1) % self.frame_count;
            queued += 1;
            if self.cursor == 0 || queued % 256 == 0 {
                if let Err(e) = self.kick(false) {
                    return Err(self.stop(start, queued, e));
                }
            }
        }
        if let Err(e) = self.flush(deadline) {
            return Err(self.stop(start, queued, e));
        }
        match refused {
            None => Ok(queued),
            Some(reason) => Err(RingError::TxFrameRefused {
                iface: self.iface.clone(),
                index: queued,
                reason,
            }),
        }
    }

    /// After a failure in a batch that began at slot `start` and marked `queued` frames:
    /// finds where the kernel stopped (its head: the first of our frames still marked
    /// SEND_REQUEST or WRONG_FORMAT; the ones before it went out), un-marks that frame and
    /// every later one of the batch, and moves our cursor back to it, so ring and kernel
    /// agree again. Returns the error to report.
    fn stop(&mut self, start: usize, queued: usize, cause: RingError) -> RingError {
        let slot = |k: usize| (start + k) % self.frame_count;
        let mut sent = queued;
        let mut wrong_format = false;
        // A batch longer than the ring reused its first slots, which it did only once the
        // kernel had sent them: only the last `frame_count` frames can still be pending.
        for k in queued.saturating_sub(self.frame_count)..queued {
            // Acquire: as in `wait_free`.
            let st = self.status(slot(k)).load(Ordering::Acquire);
            if st & (libc::TP_STATUS_SEND_REQUEST | libc::TP_STATUS_WRONG_FORMAT) != 0 {
                sent = k;
                wrong_format = st & libc::TP_STATUS_WRONG_FORMAT != 0;
                break;
            }
        }
        for k in sent..queued {
            // The kernel looks only at its head frame, and only inside send(), which nobody
            // calls meanwhile (`&mut self`): these frames are ours to reset. Release: orders
            // nothing new; it pairs with the kernel's read of the status like every store.
            self.status(slot(k))
                .store(libc::TP_STATUS_AVAILABLE, Ordering::Release);
        }
        self.cursor = slot(sent);
        if wrong_format {
            RingError::TxFrameRefused {
                iface: self.iface.clone(),
                index: sent,
                reason: format!(
                    "the kernel marked it TP_STATUS_WRONG_FORMAT: shorter than the link header \
                     or longer than the MTU of {} plus the link header ({cause})",
                    self.iface
                ),
            }
        } else {
            RingError::TxStopped {
                iface: self.iface.clone(),
                sent,
                cause: Box::new(cause),
            }
        }
    }

    /// Sends whatever is queued and waits until every frame is back to AVAILABLE.
    fn flush(&self, deadline: Instant) -> Result<(), RingError> {
        self.kick(true)?;
        for i in 0..self.frame_count {
            self.wait_free(i, deadline)?;
        }
        Ok(())
    }
}
