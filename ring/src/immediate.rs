//! A TPACKET_V2 receive ring for immediate delivery: each frame is handed over the moment
//! the kernel has written it, with a wake-up per packet, instead of when a TPACKET_V3 block
//! fills or its retire timer fires (1 ms at best, a jiffy or more in practice).
//!
//! This is what libpcap does in immediate mode, and for the same reason: V3 wakes the reader
//! only when a block is retired, so its latency floor is the block timeout; V2 marks every
//! frame `TP_STATUS_USER` and wakes the reader for it. The price is a fixed frame size (a
//! frame holds at most `frame_size - header` bytes of a packet) and a wake-up per packet
//! when the reader is idle.
//!
//! Ownership is per frame: a frame whose status has `TP_STATUS_USER` belongs to user space
//! until we store `TP_STATUS_KERNEL` (Release; the kernel reads the status with acquire
//! semantics before writing the frame). [`ImmediateRing::poll`] reads frames in ring order
//! and hands each to a closure that cannot keep it.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::Arc;

use crate::held::{Handle, PacketSocket, SocketHolder};
use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::block::{LinkAddr, PacketMeta};
use crate::error::{RingError, Setting};
use crate::mem::RingMemory;
use crate::stats::{RingStats, StatsAccumulator};
use crate::sys;

/// `struct tpacket2_hdr` field offsets.
mod hdr {
    pub const STATUS: usize = 0;
    pub const LEN: usize = 4;
    pub const SNAPLEN: usize = 8;
    pub const MAC: usize = 12;
    pub const SEC: usize = 16;
    pub const NSEC: usize = 20;
    pub const VLAN_TCI: usize = 24;
    pub const VLAN_TPID: usize = 26;
    /// TPACKET_ALIGN(sizeof(tpacket2_hdr)) + sizeof(sockaddr_ll): the smallest `tp_mac`.
    pub const LEN_WITH_ADDR: usize = 32 + 20;
}

/// `ETH_P_ALL` in network byte order, for bind.
const ETH_P_ALL_BE: u16 = (libc::ETH_P_ALL as u16).to_be();

/// Builder for [`ImmediateRing`].
#[derive(Debug, Clone)]
pub struct ImmediateRingBuilder {
    iface: String,
    frame_size: usize,
    ring_bytes: usize,
    snaplen: u32,
    promiscuous: bool,
    ignore_outgoing: bool,
    filter: Option<Vec<libc::sock_filter>>,
}

impl ImmediateRingBuilder {
    /// Defaults: 2048-byte frames (a 1500-byte MTU frame with a VLAN tag fits), 8 MiB of
    /// ring (4096 frames), snaplen 262144, promiscuous.
    pub fn new(iface: impl Into<String>) -> Self {
        ImmediateRingBuilder {
            iface: iface.into(),
            frame_size: 2048,
            ring_bytes: 8 << 20,
            snaplen: crate::DEFAULT_SNAPLEN,
            promiscuous: true,
            ignore_outgoing: false,
            filter: None,
        }
    }
    /// Bytes per frame, header included (a multiple of 16 from 128 to 256 KiB); a packet
    /// longer than the room left is truncated (its wire length says so).
    pub fn frame_size(mut self, bytes: usize) -> Self {
        self.frame_size = bytes;
        self
    }
    /// Total ring memory, bytes (rounded down to whole blocks, at least one).
    pub fn ring_bytes(mut self, bytes: usize) -> Self {
        self.ring_bytes = bytes;
        self
    }
    /// Bytes kept per frame (enforced by the socket filter).
    pub fn snaplen(mut self, bytes: u32) -> Self {
        self.snaplen = bytes;
        self
    }
    /// Promiscuous mode.
    pub fn promiscuous(mut self, on: bool) -> Self {
        self.promiscuous = on;
        self
    }
    /// Incoming packets only (PACKET_IGNORE_OUTGOING).
    pub fn ignore_outgoing(mut self, on: bool) -> Self {
        self.ignore_outgoing = on;
        self
    }
    /// A classic BPF socket filter.
    pub fn filter(mut self, program: Vec<libc::sock_filter>) -> Self {
        self.filter = Some(program);
        self
    }

    /// Opens the socket, sizes and maps the ring, then binds (nothing arrives before the
    /// ring and the filter are in place).
    pub fn build(self) -> Result<ImmediateRing, RingError> {
        let fs = self.frame_size;
        if fs % 16 != 0 || !(128..=256 << 10).contains(&fs) {
            return Err(RingError::config(
                Setting::FrameSize,
                format!("{fs} must be a multiple of 16 from 128 to 262144"),
            ));
        }
        let page = 4096;
        // Blocks of about 16 frames, a power of two (the kernel allocates them so): little
        // of a block is left over whatever the frame size.
        let block_size = (fs * 16).next_power_of_two().clamp(page, 4 << 20);
        let per_block = block_size / fs;
        let block_count = (self.ring_bytes / block_size).max(1);
        let frame_count = per_block * block_count;
        let iface = self.iface.as_str();
        let (fd, ifindex) = sys::open_packet_socket(iface, libc::tpacket_versions::TPACKET_V2)?;
        let b = fd.as_fd();
        let program = crate::bpf::with_snaplen(self.filter.as_deref(), self.snaplen);
        sys::setsockopt_fprog(b, &program)
            .map_err(|e| RingError::sys("SO_ATTACH_FILTER", iface, e))?;
        if self.ignore_outgoing {
            sys::ignore_outgoing(b, iface)?;
        }
        let req = libc::tpacket_req {
            tp_block_size: block_size as u32,
            tp_block_nr: block_count as u32,
            tp_frame_size: fs as u32,
            tp_frame_nr: frame_count as u32,
        };
        sys::setsockopt(b, libc::SOL_PACKET, libc::PACKET_RX_RING, &req)
            .map_err(|e| RingError::sys("PACKET_RX_RING (TPACKET_V2)", iface, e))?;
        let map = memmap2::MmapOptions::new()
            .len(block_size * block_count)
            .map_raw(&fd)
            .map_err(|e| RingError::sys("mmap of the RX ring", iface, e))?;
        sys::bind_link(b, ifindex, ETH_P_ALL_BE).map_err(|e| RingError::sys("bind", iface, e))?;
        if self.promiscuous {
            sys::promiscuous(b, iface, ifindex)?;
        }
        Ok(ImmediateRing {
            mem: RingMemory::from_mmap(map),
            fd: Handle::Socket(fd),
            iface: self.iface,
            frame_size: fs,
            frame_count,
            per_block,
            block_size,
            cursor: 0,
            stats: StatsAccumulator::default(),
        })
    }
}

/// A TPACKET_V2 receive ring read frame by frame (see the module documentation).
#[derive(Debug)]
pub struct ImmediateRing {
    /// Fields drop in order: the mapping before the socket.
    mem: RingMemory,
    fd: Handle,
    iface: String,
    frame_size: usize,
    frame_count: usize,
    per_block: usize,
    block_size: usize,
    cursor: usize,
    stats: StatsAccumulator,
}

impl ImmediateRing {
    /// A builder for interface `iface`.
    pub fn builder(iface: impl Into<String>) -> ImmediateRingBuilder {
        ImmediateRingBuilder::new(iface)
    }

    /// Frames in the ring.
    pub fn frame_count(&self) -> usize {
        self.frame_count
    }

    /// The name of the interface the ring is bound to.
    pub fn iface(&self) -> &str {
        &self.iface
    }

    fn frame_offset(&self, i: usize) -> usize {
        (i / self.per_block) * self.block_size + (i % self.per_block) * self.frame_size
    }

    fn u32_at(&self, off: usize) -> u32 {
        // SAFETY: the frame is user-owned (TP_STATUS_USER seen with Acquire), so the kernel
        // does not write its header while we read it; in bounds by `bytes`' check.
        let b = unsafe { self.mem.bytes(off, 4) };
        u32::from_ne_bytes(b.try_into().expect("4 bytes"))
    }

    fn u16_at(&self, off: usize) -> u16 {
        // SAFETY: as in `u32_at`.
        let b = unsafe { self.mem.bytes(off, 2) };
        u16::from_ne_bytes(b.try_into().expect("2 bytes"))
    }

    /// Hands up to `max` ready frames to `f` (captured bytes, header facts, the kernel's
    /// `sockaddr_ll`) in arrival order,
    /// each given back to the kernel right after `f` returns; waits up to `timeout` when none
    /// is ready. Returns how many were handled.
    pub fn poll(
        &mut self,
        timeout: Duration,
        max: usize,
        mut f: impl FnMut(&[u8], PacketMeta, LinkAddr),
    ) -> Result<usize, RingError> {
        let mut n = 0;
        while n < max {
            let off = self.frame_offset(self.cursor);
            let status = self.mem.status_word(off + hdr::STATUS);
            // Acquire: pairs with the kernel's release of the frame (smp_wmb before it sets
            // TP_STATUS_USER), so the bytes below are complete.
            let st = status.load(Ordering::Acquire);
            if st & libc::TP_STATUS_USER == 0 {
                if n > 0 {
                    break;
                }
                let ev = self
                    .fd
                    .wait_in(timeout)
                    .map_err(|e| RingError::sys("poll", &self.iface, e))?;
                if ev.error {
                    if let Some(e) = self
                        .fd
                        .take_error()
                        .map_err(|e| RingError::sys("SO_ERROR", &self.iface, e))?
                    {
                        return Err(RingError::sys("poll", &self.iface, e));
                    }
                }
                if self.mem.status_word(off).load(Ordering::Acquire) & libc::TP_STATUS_USER == 0 {
                    break;
                }
                continue;
            }
            let len = self.u32_at(off + hdr::LEN);
            let snap = self.u32_at(off + hdr::SNAPLEN) as usize;
            let mac = usize::from(self.u16_at(off + hdr::MAC));
            let tci = self.u16_at(off + hdr::VLAN_TCI);
            let tpid = self.u16_at(off + hdr::VLAN_TPID);
            // SAFETY: user-owned frame; the sockaddr_ll follows the 32-byte header.
            let ll: &[u8; 20] = unsafe { self.mem.bytes(off + 32, 20) }
                .try_into()
                .expect("20 bytes");
            let meta = PacketMeta {
                wire_len: len,
                ts_ns: u64::from(self.u32_at(off + hdr::SEC)) * 1_000_000_000
                    + u64::from(self.u32_at(off + hdr::NSEC)),
                status: st,
                rxhash: 0,
                vlan_tci: (st & libc::TP_STATUS_VLAN_VALID != 0).then_some(tci),
                vlan_tpid: if st & libc::TP_STATUS_VLAN_TPID_VALID != 0 {
                    tpid
                } else {
                    0x8100
                },
                pkttype: ll[10],
            };
            let link = LinkAddr::read(ll);
            // The kernel never writes past its frame; a bad offset is refused, not read.
            if mac >= hdr::LEN_WITH_ADDR && mac + snap <= self.frame_size {
                // SAFETY: user-owned frame (see above), range inside it.
                let data = unsafe { self.mem.bytes(off + mac, snap) };
                f(data, meta, link);
            }
            // Release: our reads of the frame happen before the kernel may write it again.
            status.store(libc::TP_STATUS_KERNEL, Ordering::Release);
            self.cursor = (self.cursor + 1) % self.frame_count;
            n += 1;
        }
        Ok(n)
    }

    /// Kernel statistics since the ring was opened.
    pub fn stats(&mut self) -> Result<RingStats, RingError> {
        let [packets, drops, _] = self
            .fd
            .statistics(false)
            .map_err(|e| RingError::sys("PACKET_STATISTICS", &self.iface, e))?;
        // As for V3, the kernel has already added the drops into tp_packets.
        self.stats.add(packets, drops, 0);
        Ok(self.stats.total())
    }

    /// The ring's packet socket, for its holder; `None` once given up.
    pub fn packet_socket(&self) -> Option<PacketSocket<'_>> {
        self.fd.packet_socket(false)
    }

    /// Closes this process' packet socket, as [`crate::RxRing::give_up_socket`] does.
    pub fn give_up_socket(&mut self, epoll: OwnedFd, holder: Arc<dyn SocketHolder>) {
        self.fd = Handle::Held { epoll, holder };
    }
}

impl AsFd for ImmediateRing {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.fd()
    }
}
