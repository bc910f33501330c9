//! The live TPACKET_V3 receive ring.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::error::{RingError, Setting};
use crate::held::{Handle, PacketSocket, SocketHolder};
use crate::mem::{Block, BlockMap};
use crate::stats::{RingStats, StatsAccumulator};
use crate::sys;
use crate::timestamp::TimestampSource;

/// `ETH_P_ALL` in network byte order (linux/if_ether.h).
pub(crate) const ETH_P_ALL_BE: u16 = (libc::ETH_P_ALL as u16).to_be();

/// How PACKET_FANOUT spreads packets over the sockets of a group (linux/if_packet.h).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FanoutMode {
    /// By the flow hash (`skb_get_hash`): a flow, both directions, stays on one socket.
    Hash,
    /// Round robin.
    LoadBalance,
    /// By the CPU the packet arrived on.
    Cpu,
    /// Fill one socket, then the next.
    Rollover,
    /// Random.
    Random,
    /// By the NIC receive queue (`skb_get_queue_mapping`).
    QueueMapping,
}

impl FanoutMode {
    /// Every mode, for listings.
    pub const ALL: [FanoutMode; 6] = [
        FanoutMode::Hash,
        FanoutMode::LoadBalance,
        FanoutMode::Cpu,
        FanoutMode::Rollover,
        FanoutMode::Random,
        FanoutMode::QueueMapping,
    ];

    /// The name [`FromStr`](std::str::FromStr) takes and [`Display`](std::fmt::Display)
    /// prints: `hash`, `load-balance`, `cpu`, `rollover`, `random`, `queue-mapping`.
    pub const fn name(self) -> &'static str {
        match self {
            FanoutMode::Hash => "hash",
            FanoutMode::LoadBalance => "load-balance",
            FanoutMode::Cpu => "cpu",
            FanoutMode::Rollover => "rollover",
            FanoutMode::Random => "random",
            FanoutMode::QueueMapping => "queue-mapping",
        }
    }

    fn raw(self) -> u32 {
        match self {
            FanoutMode::Hash => libc::PACKET_FANOUT_HASH,
            FanoutMode::LoadBalance => libc::PACKET_FANOUT_LB,
            FanoutMode::Cpu => libc::PACKET_FANOUT_CPU,
            FanoutMode::Rollover => libc::PACKET_FANOUT_ROLLOVER,
            FanoutMode::Random => libc::PACKET_FANOUT_RND,
            FanoutMode::QueueMapping => libc::PACKET_FANOUT_QM,
        }
    }
}

impl std::fmt::Display for FanoutMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for FanoutMode {
    type Err = crate::error::UnknownName;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| {
                crate::error::UnknownName::new("fanout mode", s, Self::ALL.map(Self::name))
            })
    }
}

/// A PACKET_FANOUT membership: `Fanout::new(group, mode)`, flags by the methods of the
/// same names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Fanout {
    /// Group id, shared by every socket of the group (per network namespace).
    pub group: u16,
    /// Spreading rule.
    pub mode: FanoutMode,
    /// `PACKET_FANOUT_FLAG_DEFRAG`: reassemble IP fragments before hashing, so that every
    /// fragment of a datagram lands on the same socket.
    pub defrag: bool,
    /// `PACKET_FANOUT_FLAG_ROLLOVER`: when the chosen socket is full, try the others.
    pub rollover: bool,
}

impl Fanout {
    /// Group `group` in `mode`, without flags.
    pub fn new(group: u16, mode: FanoutMode) -> Self {
        Fanout {
            group,
            mode,
            defrag: false,
            rollover: false,
        }
    }
    /// A hash-mode group without flags.
    pub fn hash(group: u16) -> Self {
        Fanout::new(group, FanoutMode::Hash)
    }
    /// Sets `PACKET_FANOUT_FLAG_DEFRAG` (see the field).
    pub fn defrag(mut self, on: bool) -> Self {
        self.defrag = on;
        self
    }
    /// Sets `PACKET_FANOUT_FLAG_ROLLOVER` (see the field).
    pub fn rollover(mut self, on: bool) -> Self {
        self.rollover = on;
        self
    }

    /// The PACKET_FANOUT argument. `ignore_outgoing`: a group's members take packets through
    /// the group's hook, which skips outgoing packets only with
    /// `PACKET_FANOUT_FLAG_IGNORE_OUTGOING` (the socket's own PACKET_IGNORE_OUTGOING does not
    /// apply there).
    fn raw(&self, ignore_outgoing: bool) -> u32 {
        let mut type_flags = self.mode.raw();
        if ignore_outgoing {
            type_flags |= libc::PACKET_FANOUT_FLAG_IGNORE_OUTGOING;
        }
        if self.defrag {
            type_flags |= libc::PACKET_FANOUT_FLAG_DEFRAG;
        }
        if self.rollover {
            type_flags |= libc::PACKET_FANOUT_FLAG_ROLLOVER;
        }
        u32::from(self.group) | (type_flags << 16)
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn fanout_mode_names_round_trip() {
        for m in FanoutMode::ALL {
            assert_eq!(m.to_string().parse::<FanoutMode>(), Ok(m));
        }
        let err = "lb".parse::<FanoutMode>().unwrap_err();
        assert_eq!(err.kind(), "fanout mode");
        assert!(err.to_string().contains("load-balance"), "{err}");
    }

    #[test]
    fn fanout_flags_land_in_the_upper_half() {
        let f = Fanout::new(7, FanoutMode::Cpu).defrag(true).rollover(true);
        let raw = f.raw(true);
        assert_eq!(raw & 0xffff, 7);
        assert_eq!(
            raw >> 16,
            libc::PACKET_FANOUT_CPU
                | libc::PACKET_FANOUT_FLAG_DEFRAG
                | libc::PACKET_FANOUT_FLAG_ROLLOVER
                | libc::PACKET_FANOUT_FLAG_IGNORE_OUTGOING
        );
        assert_eq!(Fanout::hash(7).raw(false) >> 16, libc::PACKET_FANOUT_HASH);
    }

    #[test]
    fn timestamp_source_names_round_trip() {
        for t in TimestampSource::ALL {
            assert_eq!(t.to_string().parse::<TimestampSource>(), Ok(t));
        }
        let err = "ptp".parse::<TimestampSource>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown timestamp source \"ptp\"; one of: software, hardware-raw, hardware-sys"
        );
    }
}

/// Builder for [`RxRing`]. Every default is stated with the reason for it.
#[derive(Debug, Clone)]
pub struct RxRingBuilder {
    iface: String,
    block_size: usize,
    block_count: usize,
    frame_size: usize,
    block_timeout: Duration,
    snaplen: u32,
    promiscuous: bool,
    fanout: Option<Fanout>,
    filter: Option<Vec<libc::sock_filter>>,
    locked: bool,
    fill_rxhash: bool,
    ignore_outgoing: bool,
    cooked: bool,
    timestamp: Option<TimestampSource>,
}

/// Default block size: 1 MiB. libpcap uses 256 KiB x 8 blocks for its 2 MiB default buffer,
/// Suricata 128 KiB blocks. A larger block means fewer block hand-offs (one atomic share per
/// consumer batch per block) and fewer timer retirements under load; 1 MiB still lets a
/// stage hand out many blocks in flight. Must be a power-of-two multiple of the page size.
pub const DEFAULT_BLOCK_SIZE: usize = 1 << 20;
/// Default block count: 64 (64 MiB of ring), enough to absorb a ~50 ms consumer stall at
/// 1 Mpps of 1 KiB frames before the kernel drops.
pub const DEFAULT_BLOCK_COUNT: usize = 64;
/// Default frame size: 2048. TPACKET_V3 packs frames of any size into a block; the kernel
/// still checks `tp_frame_size` (multiple of 16, >= header) and that blocks hold whole frames.
pub const DEFAULT_FRAME_SIZE: usize = 2048;
/// Default block retire timeout: 10 ms, as Suricata. netsniff-ng uses 100 ms (fewer wake-ups,
/// worse latency); the kernel's own default derives it from link speed (8 ms at >= 1 Gbit/s).
pub const DEFAULT_BLOCK_TIMEOUT: Duration = Duration::from_millis(10);
/// Default snaplen: 262144, as tcpdump since 4.99 (`MAXIMUM_SNAPLEN`): whole frames.
pub const DEFAULT_SNAPLEN: u32 = 262_144;

impl RxRingBuilder {
    /// A builder for interface `iface` with the defaults above, promiscuous on (as tcpdump).
    pub fn new(iface: impl Into<String>) -> Self {
        RxRingBuilder {
            iface: iface.into(),
            block_size: DEFAULT_BLOCK_SIZE,
            block_count: DEFAULT_BLOCK_COUNT,
            frame_size: DEFAULT_FRAME_SIZE,
            block_timeout: DEFAULT_BLOCK_TIMEOUT,
            snaplen: DEFAULT_SNAPLEN,
            promiscuous: true,
            fanout: None,
            filter: None,
            locked: false,
            fill_rxhash: false,
            ignore_outgoing: false,
            cooked: false,
            timestamp: None,
        }
    }
    /// Which clock stamps the packets (PACKET_TIMESTAMP); unset, the kernel's software
    /// stamp. `build` fails if the kernel refuses the setting.
    pub fn timestamp_source(mut self, source: TimestampSource) -> Self {
        self.timestamp = Some(source);
        self
    }
    /// Block size in bytes (power of two, multiple of the page size).
    pub fn block_size(mut self, bytes: usize) -> Self {
        self.block_size = bytes;
        self
    }
    /// Number of blocks.
    pub fn block_count(mut self, n: usize) -> Self {
        self.block_count = n;
        self
    }
    /// `tp_frame_size` (multiple of 16, divides the block size).
    pub fn frame_size(mut self, bytes: usize) -> Self {
        self.frame_size = bytes;
        self
    }
    /// Block retire timeout (`tp_retire_blk_tov`), 1 ms to 65535 ms.
    pub fn block_timeout(mut self, t: Duration) -> Self {
        self.block_timeout = t;
        self
    }
    /// Bytes kept per frame. Enforced by the socket filter (V3 has no snaplen of its own):
    /// the filter's accept value is capped at it, as libpcap does.
    pub fn snaplen(mut self, bytes: u32) -> Self {
        self.snaplen = bytes;
        self
    }
    /// Promiscuous mode on or off (PACKET_MR_PROMISC, dropped by the kernel on close).
    pub fn promiscuous(mut self, on: bool) -> Self {
        self.promiscuous = on;
        self
    }
    /// Incoming packets only: the kernel does not even queue the packets this host sends to
    /// the ring (PACKET_IGNORE_OUTGOING, Linux 4.20; tcpdump's `-Q in`). In a
    /// [fanout](Self::fanout) group the group's flag `PACKET_FANOUT_FLAG_IGNORE_OUTGOING` is
    /// set as well (Linux 5.1), since the group's hook, not the socket's, decides there; every
    /// member of a group must then ask the same (the kernel refuses a member whose flags
    /// differ).
    ///
    /// On loopback (`lo`) every packet is seen twice without it: once as this host sent it
    /// ([`Direction::Outgoing`](crate::Direction::Outgoing)) and once as it received it
    /// ([`Direction::Host`](crate::Direction::Host)). Set this, or skip
    /// [`PacketMeta::direction`](crate::PacketMeta::direction)` == Outgoing`, to count each once.
    pub fn ignore_outgoing(mut self, on: bool) -> Self {
        self.ignore_outgoing = on;
        self
    }
    /// Cooked frames (SOCK_DGRAM): each packet from its network-layer header on, the link
    /// layer described by each packet's [`LinkAddr`](crate::LinkAddr) — what libpcap does for `-i any`, where the
    /// interfaces' link layers differ. The interface `"any"` captures on every interface of
    /// the namespace (no promiscuous mode there).
    pub fn cooked(mut self, on: bool) -> Self {
        self.cooked = on;
        self
    }
    /// Join a PACKET_FANOUT group.
    pub fn fanout(mut self, fanout: Fanout) -> Self {
        self.fanout = Some(fanout);
        self
    }
    /// A classic BPF program, raw instructions (compile expressions elsewhere).
    pub fn filter(mut self, program: Vec<libc::sock_filter>) -> Self {
        self.filter = Some(program);
        self
    }
    /// Lock the ring in memory (mlock, like MAP_LOCKED) so it is never paged out.
    pub fn locked(mut self, on: bool) -> Self {
        self.locked = on;
        self
    }
    /// Ask the kernel to fill `tp_rxhash` (TP_FT_REQ_FILL_RXHASH).
    pub fn fill_rxhash(mut self, on: bool) -> Self {
        self.fill_rxhash = on;
        self
    }

    fn check_geometry(&self) -> Result<(), RingError> {
        let page = sys::page_size();
        let bs = self.block_size;
        if bs == 0 || !bs.is_power_of_two() || bs % page != 0 {
            return Err(RingError::config(
                Setting::BlockSize,
                format!("{bs} must be a power of two and a multiple of the page size ({page})"),
            ));
        }
        if bs > u32::MAX as usize / 2 {
            return Err(RingError::config(
                Setting::BlockSize,
                format!("{bs} is larger than the kernel accepts"),
            ));
        }
        if self.block_count == 0 || self.block_count > u32::MAX as usize {
            return Err(RingError::config(
                Setting::BlockCount,
                format!("{} must be at least 1", self.block_count),
            ));
        }
        let fs = self.frame_size;
        if fs < crate::block::hdr3::SIZE + 20 || fs % libc::TPACKET_ALIGNMENT != 0 || fs > bs {
            return Err(RingError::config(
                Setting::FrameSize,
                format!("{fs} must be a multiple of 16, at least 68, at most the block size"),
            ));
        }
        let ms = self.block_timeout.as_millis();
        if ms == 0 || ms > u128::from(u16::MAX) {
            return Err(RingError::config(
                Setting::BlockTimeout,
                format!("{ms} ms must be 1..=65535 ms"),
            ));
        }
        if self.snaplen == 0 {
            return Err(RingError::config(Setting::Snaplen, "0 must be at least 1"));
        }
        if bs
            .checked_mul(self.block_count)
            .is_none_or(|total| total > isize::MAX as usize)
        {
            return Err(RingError::config(
                Setting::BlockCount,
                "ring size overflows the address space",
            ));
        }
        if let Some(f) = &self.filter {
            if f.is_empty() || f.len() > 4096 {
                return Err(RingError::config(
                    Setting::Filter,
                    format!("{} instructions; must be 1..=4096", f.len()),
                ));
            }
        }
        Ok(())
    }

    /// Opens the socket, maps the ring and binds, in the order that has no drop window.
    pub fn build(self) -> Result<RxRing, RingError> {
        self.check_geometry()?;
        let iface = self.iface.as_str();
        // 1. Protocol 0: the socket receives nothing until bind, so no packet can arrive
        //    before the version, filter and ring are in place (libpcap issue 843).
        // 2. Version.
        let kind = if self.cooked {
            libc::SOCK_DGRAM
        } else {
            libc::SOCK_RAW
        };
        let (fd, ifindex) =
            sys::open_packet_socket_of(iface, libc::tpacket_versions::TPACKET_V3, kind)?;
        let b = fd.as_fd();
        // 3. Filter, with the snaplen folded into its accept values.
        let program = crate::bpf::with_snaplen(self.filter.as_deref(), self.snaplen);
        sys::setsockopt_fprog(b, &program)
            .map_err(|e| RingError::sys("SO_ATTACH_FILTER", iface, e))?;
        if self.ignore_outgoing {
            sys::ignore_outgoing(b, iface)?;
        }
        if let Some(t) = self.timestamp {
            sys::setsockopt(b, libc::SOL_PACKET, libc::PACKET_TIMESTAMP, &t.raw())
                .map_err(|e| RingError::sys("PACKET_TIMESTAMP", iface, e))?;
        }
        // 4. Ring.
        self.request_ring(b)?;
        // 5. Map.
        let map = self.map_ring(&fd)?;
        // 6. Bind: packets start arriving into the ring now.
        sys::bind_link(b, ifindex, ETH_P_ALL_BE).map_err(|e| RingError::sys("bind", iface, e))?;
        // 7. Promiscuous membership, then fanout (joining needs a bound socket).
        self.join(b, ifindex)?;
        Ok(RxRing {
            map: BlockMap::from_mmap(map, self.block_size, self.block_count),
            fd: Handle::Socket(fd),
            iface: self.iface,
            ifindex,
            cursor: AtomicUsize::new(0),
            stats: Mutex::new(StatsAccumulator::default()),
            block_timeout: self.block_timeout,
        })
    }

    /// PACKET_RX_RING with this geometry; the kernel's refusals name the field.
    fn request_ring(&self, b: BorrowedFd<'_>) -> Result<(), RingError> {
        let req = libc::tpacket_req3 {
            tp_block_size: self.block_size as u32,
            tp_block_nr: self.block_count as u32,
            tp_frame_size: self.frame_size as u32,
            tp_frame_nr: ((self.block_size / self.frame_size) * self.block_count) as u32,
            tp_retire_blk_tov: self.block_timeout.as_millis() as u32,
            tp_sizeof_priv: 0,
            tp_feature_req_word: if self.fill_rxhash {
                libc::TP_FT_REQ_FILL_RXHASH
            } else {
                0
            },
        };
        sys::setsockopt(b, libc::SOL_PACKET, libc::PACKET_RX_RING, &req).map_err(|e| {
            match e.raw_os_error() {
                Some(libc::EINVAL) => RingError::config(
                    Setting::BlockSize,
                    format!(
                        "kernel refused the ring ({} x {} B, frame {} B): {e}",
                        self.block_count, self.block_size, self.frame_size
                    ),
                ),
                Some(libc::ENOMEM) => RingError::config(
                    Setting::BlockCount,
                    format!(
                        "kernel could not allocate {} x {} B: {e}",
                        self.block_count, self.block_size
                    ),
                ),
                _ => RingError::sys("PACKET_RX_RING", &self.iface, e),
            }
        })
    }

    /// Maps the ring (populated and locked when asked).
    fn map_ring(&self, fd: &OwnedFd) -> Result<memmap2::MmapRaw, RingError> {
        let iface = self.iface.as_str();
        let mut opts = memmap2::MmapOptions::new();
        opts.len(self.block_size * self.block_count);
        if self.locked {
            opts.populate();
        }
        let map = opts
            .map_raw(fd)
            .map_err(|e| RingError::sys("mmap of the RX ring", iface, e))?;
        if self.locked {
            map.lock().map_err(|e| {
                RingError::sys(
                    "mlock of the RX ring (needs CAP_IPC_LOCK or RLIMIT_MEMLOCK)",
                    iface,
                    e,
                )
            })?;
        }
        Ok(map)
    }

    /// Promiscuous membership and the fanout group, as asked.
    fn join(&self, b: BorrowedFd<'_>, ifindex: u32) -> Result<(), RingError> {
        let iface = self.iface.as_str();
        if self.promiscuous {
            sys::promiscuous(b, iface, ifindex)?;
        }
        if let Some(f) = &self.fanout {
            let arg: libc::c_int = f.raw(self.ignore_outgoing) as libc::c_int;
            sys::setsockopt(b, libc::SOL_PACKET, libc::PACKET_FANOUT, &arg)
                .map_err(|e| RingError::sys("PACKET_FANOUT", iface, e))?;
        }
        Ok(())
    }
}

/// An AF_PACKET TPACKET_V3 receive ring bound to one interface.
///
/// Fields drop in declaration order: the mapping goes before the socket, as io-uring does.
#[derive(Debug)]
pub struct RxRing {
    map: BlockMap,
    fd: Handle,
    iface: String,
    ifindex: u32,
    cursor: AtomicUsize,
    stats: Mutex<StatsAccumulator>,
    block_timeout: Duration,
}

impl RxRing {
    /// A builder for interface `iface`.
    pub fn builder(iface: impl Into<String>) -> RxRingBuilder {
        RxRingBuilder::new(iface)
    }

    /// The block retire timeout the ring was built with: a block the kernel has begun to
    /// fill is handed over at most this long after it was opened.
    pub fn block_timeout(&self) -> Duration {
        self.block_timeout
    }

    /// The interface name.
    pub fn iface(&self) -> &str {
        &self.iface
    }
    /// The interface index.
    pub fn ifindex(&self) -> u32 {
        self.ifindex
    }
    /// The ring memory (block size, count).
    pub fn map(&self) -> &BlockMap {
        &self.map
    }

    /// The next block in ring order, waiting up to `timeout` (poll). `Ok(None)` on timeout.
    /// `Duration::ZERO` is a non-blocking try: a ready block or `Ok(None)` at once, without
    /// a system call when a block is ready (what an event loop calls when the socket is
    /// readable; the `tokio` feature's `AsyncRxRing` does that).
    ///
    /// Blocks come in the order the kernel fills them. If the next block in order is still
    /// held by leases, this waits for them (the kernel waits too: it freezes the queue).
    pub fn next_block(&self, timeout: Duration) -> Result<Option<Block<'_>>, RingError> {
        let deadline = Instant::now() + timeout;
        loop {
            let index = self.cursor.load(Ordering::Relaxed);
            if let Some(block) = self.map.try_take(index) {
                // Another thread may have moved the cursor meanwhile (several takers): only
                // the taker that read it advances it, so it never goes backwards.
                let _ = self.cursor.compare_exchange(
                    index,
                    (index + 1) % self.map.block_count(),
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                );
                return Ok(Some(block));
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            let left = deadline - now;
            let prev = (index + self.map.block_count() - 1) % self.map.block_count();
            if self.map.is_held(index) || self.map.is_held(prev) {
                // Our own consumers hold a block poll looks at: poll would not tell us when
                // they let go (the block at the cursor), or would report "readable" at once
                // and forever (TPACKET_V3 poll is readable while the block before the kernel's
                // current one is user-owned). Sleep instead of spinning in poll: 1 ms adds at
                // most 1 ms to a block the kernel retires meanwhile (blocks already ready are
                // taken without sleeping), and costs ~1000 wake-ups/s; a shorter sleep costs
                // enough system time in wake-ups to show per packet.
                std::thread::sleep(left.min(Duration::from_millis(1)));
                continue;
            }
            let ev = self
                .fd
                .wait_in(left)
                .map_err(|e| RingError::sys("poll", &self.iface, e))?;
            if ev.error {
                let err = self
                    .fd
                    .take_error()
                    .map_err(|e| RingError::sys("SO_ERROR", &self.iface, e))?;
                if let Some(e) = err {
                    return Err(RingError::sys("poll", &self.iface, e));
                }
            }
        }
    }

    /// Kernel statistics accumulated since the ring was opened (each read resets the
    /// kernel's counters; this adds them up).
    pub fn stats(&self) -> Result<RingStats, RingError> {
        let [packets, drops, freezes] = self
            .fd
            .statistics(true)
            .map_err(|e| RingError::sys("PACKET_STATISTICS", &self.iface, e))?;
        let mut acc = self.stats.lock().unwrap_or_else(|p| p.into_inner());
        acc.add(packets, drops, freezes);
        Ok(acc.total())
    }

    /// The ring's packet socket, for its holder (see [`RxRing::give_up_socket`]); `None`
    /// once given up.
    pub fn packet_socket(&self) -> Option<PacketSocket<'_>> {
        self.fd.packet_socket(true)
    }

    /// Closes this process' packet socket (privilege separation: another process holds it,
    /// see the `held` module): from now on the ring waits on `epoll`, made by
    /// [`PacketSocket::watch`] on that socket, and asks `holder` for the statistics and the
    /// socket's errors. [`AsFd`] then gives the epoll instance.
    pub fn give_up_socket(&mut self, epoll: OwnedFd, holder: Arc<dyn SocketHolder>) {
        self.fd = Handle::Held { epoll, holder };
    }
}

/// The ring's socket (readable when a block is ready), or the epoll instance that watches
/// it once the socket is given up.
impl AsFd for RxRing {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.fd()
    }
}

/// For event loops that register raw fds (tokio's `AsyncFd`, mio): what [`AsFd`] gives,
/// open as long as the ring.
impl AsRawFd for RxRing {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.fd().as_raw_fd()
    }
}
