//! The main benchmark: identical UDP traffic over N flows, received by each mode in turn.
//!
//! `mod.rs`: modes, settings, results and the run of one mode (receivers, generator, drop
//! counters, the wait for delivery); `tally`: receivers' counters; `sockets`: the socket
//! modes' receiver; `ring`: the ring modes' receiver (the pipeline); `sniff`: an external
//! sniffer (zcap, tcpdump) on the same traffic.

mod latency;
mod pnet;
mod ring;
mod sniff;
mod sockets;
mod tally;
mod uring;
mod xdp;

pub use latency::SniffLatency;
pub use sniff::{SniffResult, SnifferSpec};

use pnet::{pnet_receiver, PnetRx};
use ring::ring_receiver;
use sockets::socket_receiver;
use tally::{new_histogram, RunTotals};
use uring::uring_receiver;
use xdp::{xdp_receiver, XdpRx};

use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use hdrhistogram::Histogram;
use serde::Serialize;
use zcrx_capture::{Delivery, StopToken};
use zcrx_ring::frames::{UdpFlow, DPORT_BASE};
use zcrx_ring::lab::Lab;
use zcrx_ring::{RxRing, TxRing};

use crate::machine::{netdev_column, snmp, softnet_drops, ProcStat};
use crate::sys;

/// Record the latency of one packet in this many (the clock read costs ~20 ns; sampled the
/// same way in every mode).
const LATENCY_EVERY: u64 = 8;

/// A receive mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The generator alone: frames to a foreign MAC, nobody receives. What every other mode
    /// costs beyond this is the cost of receiving.
    BaselineTx,
    /// One UDP socket per flow, epoll, one `recvmsg` per datagram.
    SocketsRecvmsg,
    /// Same sockets, `recvmmsg` batches of 64.
    SocketsRecvmmsg,
    /// Same sockets, a multishot `recvmsg` each on an io_uring with provided buffers.
    SocketsIoUring,
    /// AF_XDP sockets (copy mode) fed by an XDP redirect program on the receiving veth.
    AfXdp,
    /// pnet's datalink channel (an AF_PACKET socket, `recvfrom` per frame).
    PnetDatalink,
    /// TPACKET_V3 ring, stage, consumers with this delivery.
    Ring(Delivery),
}

impl Mode {
    /// Every mode, in run order.
    pub fn all() -> Vec<Mode> {
        let mut v = vec![
            Mode::BaselineTx,
            Mode::SocketsRecvmsg,
            Mode::SocketsRecvmmsg,
            Mode::SocketsIoUring,
            Mode::AfXdp,
            Mode::PnetDatalink,
        ];
        v.extend(Delivery::ALL.into_iter().map(Mode::Ring));
        v
    }
    /// Its name.
    pub fn name(&self) -> String {
        match self {
            Mode::BaselineTx => "baseline-tx".into(),
            Mode::SocketsRecvmsg => "sockets-recvmsg".into(),
            Mode::SocketsRecvmmsg => "sockets-recvmmsg".into(),
            Mode::SocketsIoUring => "sockets-io-uring".into(),
            Mode::AfXdp => "af-xdp".into(),
            Mode::PnetDatalink => "pnet-datalink".into(),
            Mode::Ring(d) => format!("ring-{}", d.name()),
        }
    }
    /// How it receives: the mechanism, and whether a system call per packet or batch
    /// (syscall) or a shared ring carries the packets to user space.
    pub fn mechanism(&self) -> &'static str {
        match self {
            Mode::BaselineTx => "none (generator only)",
            Mode::SocketsRecvmsg => "epoll + recvmsg per datagram (syscall)",
            Mode::SocketsRecvmmsg => "epoll + recvmmsg x64 (syscall)",
            Mode::SocketsIoUring => "io_uring multishot recvmsg, provided buffers (ring)",
            Mode::AfXdp => "XDP redirect to AF_XDP, copy mode (ring)",
            Mode::PnetDatalink => "pnet datalink: AF_PACKET, poll + recvfrom per frame (syscall)",
            Mode::Ring(_) => "TPACKET_V3 mmap ring + stage (ring)",
        }
    }
    /// Where the packet's bytes are copied on the way to the handler.
    pub fn copied(&self) -> &'static str {
        match self {
            Mode::BaselineTx => "-",
            Mode::SocketsRecvmsg | Mode::SocketsRecvmmsg | Mode::PnetDatalink => {
                "kernel (copy_to_user)"
            }
            Mode::SocketsIoUring => "kernel (into provided buffers)",
            Mode::AfXdp => "kernel (into the UMEM)",
            Mode::Ring(Delivery::ZeroCopy) => "kernel (into the ring)",
            Mode::Ring(_) => "kernel (into the ring) + user space",
        }
    }
    /// Receives through one UDP socket per flow (frames go to the receiver's IP stack).
    pub fn uses_sockets(&self) -> bool {
        matches!(
            self,
            Mode::SocketsRecvmsg | Mode::SocketsRecvmmsg | Mode::SocketsIoUring
        )
    }
    /// Parses [`Mode::name`].
    pub fn from_name(s: &str) -> Option<Mode> {
        Mode::all().into_iter().find(|m| m.name() == s)
    }
}

/// Run settings.
#[derive(Debug, Clone, Serialize)]
pub struct RunConfig {
    /// UDP flows.
    pub flows: usize,
    /// Frame sizes (bytes on the wire, without FCS).
    pub sizes: Vec<usize>,
    /// Modes, by name.
    #[serde(serialize_with = "mode_names")]
    pub modes: Vec<Mode>,
    /// Consumer / receiver threads.
    pub consumers: usize,
    /// Packets sent per mode and size.
    pub packets: u64,
    /// Ring block size, bytes.
    pub block_size: usize,
    /// Ring blocks.
    pub block_count: usize,
    /// Ring block retire timeout, ms.
    pub block_timeout_ms: u64,
    /// Each flow from its own source address (198.19.0.0/16) as well as its own port.
    pub distinct_sources: bool,
}

impl RunConfig {
    /// `flows` flows of `sizes` through `modes`, `packets` a mode and size, one receiver
    /// thread, the ring's default geometry, one source address for every flow.
    pub fn new(flows: usize, sizes: Vec<usize>, modes: Vec<Mode>, packets: u64) -> RunConfig {
        RunConfig {
            flows,
            sizes,
            modes,
            consumers: 1,
            packets,
            block_size: zcrx_ring::DEFAULT_BLOCK_SIZE,
            block_count: zcrx_ring::DEFAULT_BLOCK_COUNT,
            block_timeout_ms: zcrx_ring::DEFAULT_BLOCK_TIMEOUT.as_millis() as u64,
            distinct_sources: false,
        }
    }
}

fn mode_names<S: serde::Serializer>(m: &[Mode], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(m.iter().map(|m| m.name()))
}

/// Latency from the kernel's receive timestamp to the handler.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Latency {
    /// Packets measured.
    pub samples: u64,
    /// Median, ns.
    pub p50_ns: u64,
    /// 99th percentile, ns.
    pub p99_ns: u64,
    /// 99.9th percentile, ns.
    pub p999_ns: u64,
    /// Largest, ns.
    pub max_ns: u64,
    /// (ns, fraction of samples at or below) pairs for plotting.
    pub cdf: Vec<(u64, f64)>,
}

impl Latency {
    fn from(h: &Histogram<u64>) -> Latency {
        if h.is_empty() {
            return Latency::default();
        }
        let cdf = [
            0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 0.995, 0.999,
            0.9999, 1.0,
        ]
        .iter()
        .map(|q| (h.value_at_quantile(*q), *q))
        .collect();
        Latency {
            samples: h.len(),
            p50_ns: h.value_at_quantile(0.5),
            p99_ns: h.value_at_quantile(0.99),
            p999_ns: h.value_at_quantile(0.999),
            max_ns: h.max(),
            cdf,
        }
    }
}

/// Where packets were lost.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Drops {
    /// The receiving socket's own counter: ring full (PACKET_STATISTICS tp_drops of the
    /// TPACKET ring or of pnet's AF_PACKET socket; XDP_STATISTICS of the AF_XDP sockets).
    pub ring: u64,
    /// UDP InErrors (includes RcvbufErrors), in the receiving namespace.
    pub udp_in_errors: u64,
    /// UDP RcvbufErrors (socket buffer full), a part of `udp_in_errors`.
    pub udp_rcvbuf_errors: u64,
    /// Per-CPU backlog drops (/proc/net/softnet_stat).
    pub backlog: u64,
    /// Frames the sending veth dropped (tx drop in namespace a's /proc/net/dev: the receiving
    /// veth's XDP queue was full).
    pub veth: u64,
}

impl Drops {
    fn total(&self) -> u64 {
        self.ring + self.udp_in_errors + self.backlog + self.veth
    }
}

/// One mode at one frame size.
#[derive(Debug, Clone, Serialize)]
pub struct ModeResult {
    /// Mode name.
    pub mode: String,
    /// How the mode receives ([`Mode::mechanism`]).
    pub mechanism: String,
    /// Where bytes are copied ([`Mode::copied`]).
    pub copied: String,
    /// Whether anything receives in this mode (false for baseline-tx, where delivered and
    /// dropped are 0 by design and `unaccounted` equals `sent`).
    pub receives: bool,
    /// Frame size, bytes.
    pub frame_bytes: usize,
    /// Flows.
    pub flows: usize,
    /// Receiver threads.
    pub consumers: usize,
    /// Frames the generator sent.
    pub sent: u64,
    /// Frames the receiver's handler saw.
    pub delivered: u64,
    /// Frames counted as dropped by the kernel.
    pub dropped: u64,
    /// Drop counters.
    pub drops: Drops,
    /// sent - delivered - dropped (0 when every frame is accounted for).
    pub unaccounted: i64,
    /// From the first frame sent to the last delivered, s.
    pub wall_s: f64,
    /// delivered / wall.
    pub delivered_pps: f64,
    /// Receiving threads' user CPU per delivered packet, ns.
    pub receiver_user_ns_per_pkt: f64,
    /// Receiving threads' system CPU per delivered packet, ns.
    pub receiver_sys_ns_per_pkt: f64,
    /// The generator thread's CPU per sent packet (user + system; with qdisc bypass on a
    /// veth this includes the receive path the kernel runs in the sender's context), ns.
    pub generator_ns_per_pkt: f64,
    /// Whole-machine busy CPU (/proc/stat) per delivered packet, ns.
    pub machine_ns_per_delivered: f64,
    /// Whole-machine busy CPU per sent packet, ns.
    pub machine_ns_per_sent: f64,
    /// `machine_ns_per_delivered` minus baseline-tx's `machine_ns_per_sent` at the same size
    /// and flow count in the same run: the receive cost without the generator's (None without
    /// a baseline).
    pub receive_ns_per_delivered: Option<f64>,
    /// Kernel receive timestamp to handler.
    pub latency: Latency,
    /// Fewest packets delivered for one flow.
    pub flow_min: u64,
    /// Most packets delivered for one flow.
    pub flow_max: u64,
}

/// One capacity trial: a mode at one offered rate.
#[derive(Debug, Clone, Serialize)]
pub struct Trial {
    /// Mode name.
    pub mode: String,
    /// Frame size, bytes.
    pub frame_bytes: usize,
    /// The rate the generator offered (its own count over the trial's time), Mpps.
    pub offered_mpps: f64,
    /// Frames sent.
    pub sent: u64,
    /// Frames the receiver's handler saw.
    pub delivered: u64,
    /// Frames lost: sent - delivered (for the generator alone: the receiving veth's drops).
    pub lost: u64,
    /// Of those, dropped by the receiving veth (its queue of XDP frames full).
    pub veth_rx_dropped: u64,
    /// Dropped where the other runs count drops (socket, ring, UDP, backlog, sending veth).
    pub kernel_dropped: u64,
    /// Of `lost`, the frames the receiver read after the trial's window closed: what its
    /// buffers (socket queues, the ring) held beyond what it drains in the window.
    pub late: u64,
    /// The size of the file a sniffer wrote, bytes (sniffers writing a file only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub written_bytes: Option<u64>,
    /// The receiving CPU's busy time (its NAPI thread, the receivers, anything else there;
    /// /proc/stat, 10 ms ticks) per packet read (in the window or late), ns. The
    /// generator's CPU is not in it: paced, it spins for the whole trial.
    pub rx_cpu_ns_per_delivered: f64,
    /// The machine's steal time during the trial (every CPU; /proc/stat, 10 ms ticks), ms:
    /// time the hypervisor gave to someone else while this guest wanted the CPU.
    pub steal_ms: f64,
    /// The CPU the generator thread last ran on.
    pub generator_cpu: Option<usize>,
    /// The CPUs the receiving veth's NAPI threads last ran on (those that ran in the trial).
    pub napi_cpus: Vec<Option<usize>>,
    /// The CPUs the receiver's threads last ran on (sampled while they drained; for a
    /// sniffer, its process's threads).
    pub receiver_cpus: Vec<usize>,
}

/// The lab, the generator, and the flows, kept across modes.
pub struct Bench {
    lab: Lab,
    tx: TxRing,
    config: RunConfig,
}

impl Bench {
    /// Builds the lab (needs root).
    pub fn new(config: RunConfig) -> Result<Bench> {
        if !zcrx_ring::has_cap_net_raw() {
            bail!("rxbench needs root (CAP_NET_RAW for AF_PACKET, CAP_SYS_ADMIN for network namespaces); run it with sudo");
        }
        if config.flows == 0 || config.flows > 20_000 {
            bail!("--flows {}: must be 1..=20000", config.flows);
        }
        let lab = Lab::new().context("creating the netns lab (needs root and iproute2)")?;
        if config.distinct_sources {
            // b's stack answers nothing, but a route back keeps reverse-path filtering (if
            // on) from dropping the sources outside b's subnet.
            lab.b
                .ip(&["route", "add", "198.19.0.0/16", "dev", &lab.b.iface])
                .context("adding the route for the distinct sources")?;
        }
        // One socket per flow, up to 20 000: the soft open-file limit is often 1024.
        sys::raise_nofile().context("raising RLIMIT_NOFILE")?;
        let iface = lab.a.iface.clone();
        let tx = lab
            .a
            .run(move || TxRing::builder(iface).frame_count(8192).build())??;
        for s in &config.sizes {
            if *s < 60 || *s > tx.max_frame_len() {
                bail!(
                    "--sizes {s}: frames must be 60..={} bytes",
                    tx.max_frame_len()
                );
            }
        }
        Ok(Bench { lab, tx, config })
    }

    /// One frame per flow: to b's IP stack (`to_stack`) or to a foreign MAC (seen only by
    /// promiscuous receivers, which the stack then ignores).
    fn frames(&self, size: usize, to_stack: bool) -> Vec<Vec<u8>> {
        (0..self.config.flows)
            .map(|i| {
                let mut flow = UdpFlow::lab(
                    &self.lab.a,
                    &self.lab.b,
                    i as u16,
                    DPORT_BASE + i as u16,
                    to_stack,
                );
                if self.config.distinct_sources {
                    flow.src_ip = distinct_source(i);
                }
                flow.frame(i as u64, size)
            })
            .collect()
    }

    /// Runs one mode at one size.
    pub fn run(&mut self, mode: Mode, size: usize) -> Result<ModeResult> {
        let frames = self.frames(size, mode.uses_sockets());
        let shared = RunTotals::default();
        let rx = self.open_receivers(mode, size)?;
        let base = DropCounters::read(&self.lab)?;
        let stat0 = ProcStat::read();
        let start = Instant::now();
        let (generator_ns, last_delivery) =
            self.traffic(mode, size, &frames, &rx, &shared, &base)?;
        let stat1 = ProcStat::read();
        let drops = base.since(&self.lab, &rx)?;
        let wall = if mode == Mode::BaselineTx {
            start.elapsed()
        } else {
            last_delivery.duration_since(start)
        };
        let measured = Measured {
            drops,
            wall_s: wall.as_secs_f64(),
            generator_ns,
            busy_ns: stat1.busy_ns.saturating_sub(stat0.busy_ns),
            xdp_hook: rx.xdp.as_ref().map(XdpRx::hook),
        };
        Ok(self.result(mode, size, shared, measured))
    }

    /// The lab.
    pub fn lab(&self) -> &Lab {
        &self.lab
    }

    /// One capacity trial of `mode` at `size`: the mode's receivers start on `rx_cpu` (the
    /// threads they start inherit it), `offer` sends (given flow 0's frame: the in-kernel
    /// generator cycles the flows itself), then the receivers get `window` more: what they
    /// delivered by then counts, the rest is lost (`late` counts what they read after it,
    /// until nothing moved for 100 ms). `lost` counts the frames the receiving veth dropped
    /// (its rx drop counter) for the generator alone, which has no receiver, and `sent -
    /// delivered` for every mode that receives.
    ///
    /// The window bounds what buffering can hide: a receiver that reads C frames a second
    /// and is offered R for T seconds ends with (R - C) T frames queued, and reads them within
    /// the window W only if R <= C (1 + W / T). A rate that passes is therefore at most W / T
    /// above what the receiver sustains, however much its socket queues or ring hold (RFC
    /// 2544 waits 2 s after a 60 s trial: 3.3%).
    pub fn trial(
        &mut self,
        mode: Mode,
        size: usize,
        rx_cpu: usize,
        window: Duration,
        offer: impl FnOnce(&Lab, &[u8]) -> Result<crate::generator::Offered>,
    ) -> Result<Trial> {
        let frames = self.frames(size, mode.uses_sockets());
        let shared = RunTotals::default();
        let rx = self.open_receivers(mode, size)?;
        let base = DropCounters::read(&self.lab)?;
        let b_rx0 = crate::generator::received_at(&self.lab.b)?;
        let stat0 = ProcStat::read_cpu(rx_cpu);
        let steal0 = ProcStat::read().steal_ns;
        let (flows, consumers) = (self.config.flows, self.config.consumers);
        let mut receiver_cpus = Vec::new();
        let mut in_window = 0;
        let stop = StopToken::new();
        let old = sys::pin_to_cpu(rx_cpu).context("pinning the receivers")?;
        let lab = &self.lab;
        let offered = std::thread::scope(|s| -> Result<crate::generator::Offered> {
            let spec = ReceiverSpec {
                mode,
                size,
                flows,
                consumers,
            };
            let receivers = spec.spawn(s, &rx, &shared, &stop);
            let offered = offer(lab, &frames[0]);
            in_window = after_sending(&shared.delivered, window);
            // The receivers still live (and this thread, pinned with them).
            receiver_cpus = crate::generator::task_cpus("self");
            stop.stop();
            for r in receivers {
                r.join()
                    .map_err(|_| anyhow::anyhow!("receiver panicked"))??;
            }
            offered
        });
        sys::set_affinity(&old).context("restoring the CPU set")?;
        let offered = offered?;
        let stat1 = ProcStat::read_cpu(rx_cpu);
        let steal1 = ProcStat::read().steal_ns;
        let b_rx1 = crate::generator::received_at(&self.lab.b)?;
        let drops = base.since(&self.lab, &rx)?;
        let all = shared.delivered.load(Ordering::Relaxed);
        let delivered = if mode == Mode::BaselineTx {
            all
        } else {
            in_window
        };
        let veth_rx_dropped = b_rx1.1.saturating_sub(b_rx0.1);
        let sent = offered.frames;
        Ok(Trial {
            mode: mode.name(),
            frame_bytes: size,
            offered_mpps: offered.pps() / 1e6,
            sent,
            delivered,
            lost: if mode == Mode::BaselineTx {
                veth_rx_dropped
            } else {
                sent.saturating_sub(delivered)
            },
            late: all - delivered,
            written_bytes: None,
            veth_rx_dropped,
            kernel_dropped: drops.total(),
            // Every frame read (late ones too) cost the CPU time measured.
            rx_cpu_ns_per_delivered: if all == 0 {
                0.0
            } else {
                stat1.busy_ns.saturating_sub(stat0.busy_ns) as f64 / all as f64
            },
            steal_ms: steal1.saturating_sub(steal0) as f64 / 1e6,
            generator_cpu: offered.ran_on,
            napi_cpus: Vec::new(),
            receiver_cpus,
        })
    }

    /// The sockets (one per flow) or the ring the mode receives with, in namespace b.
    fn open_receivers(&self, mode: Mode, size: usize) -> Result<Receivers> {
        let flows = self.config.flows;
        let sockets = match mode {
            m if m.uses_sockets() => {
                let ip = self.lab.b.ip;
                self.lab.b.run(move || {
                    (0..flows)
                        .map(|i| sys::udp_socket(ip, DPORT_BASE + i as u16, 0))
                        .collect::<Result<Vec<_>, _>>()
                })??
            }
            _ => Vec::new(),
        };
        let ring = match mode {
            Mode::Ring(_) => {
                let iface = self.lab.b.iface.clone();
                let (bs, bc, tmo) = (
                    self.config.block_size,
                    self.config.block_count,
                    self.config.block_timeout_ms,
                );
                Some(self.lab.b.run(move || {
                    RxRing::builder(iface)
                        .block_size(bs)
                        .block_count(bc)
                        .block_timeout(Duration::from_millis(tmo))
                        .build()
                })??)
            }
            _ => None,
        };
        let xdp = match mode {
            Mode::AfXdp => Some(XdpRx::open(&self.lab.b)?),
            _ => None,
        };
        let pnet = match mode {
            Mode::PnetDatalink => {
                let iface = self.lab.b.iface.clone();
                Some(self.lab.b.run(move || PnetRx::open(&iface, size))??)
            }
            _ => None,
        };
        Ok(Receivers {
            sockets,
            ring,
            xdp,
            pnet,
        })
    }

    /// Starts the receivers, sends the traffic, waits until every frame is delivered or
    /// counted as dropped, stops the receivers. Returns the generator's CPU ns and when the
    /// last frame was delivered.
    fn traffic(
        &mut self,
        mode: Mode,
        size: usize,
        frames: &[Vec<u8>],
        rx: &Receivers,
        shared: &RunTotals,
        base: &DropCounters,
    ) -> Result<(u64, Instant)> {
        let (flows, consumers, sent) = (
            self.config.flows,
            self.config.consumers,
            self.config.packets,
        );
        let stop = StopToken::new();
        let watched = Watched::default();
        let lab = &self.lab;
        let tx = &mut self.tx;
        std::thread::scope(|s| -> Result<(u64, Instant)> {
            watch_drops(s, lab, &watched, &stop);
            let spec = ReceiverSpec {
                mode,
                size,
                flows,
                consumers,
            };
            let receivers = spec.spawn(s, rx, shared, &stop);
            // Generator.
            let (u0, s0) = sys::thread_cpu();
            let n = sent as usize;
            let sent_now = tx.send_batch((0..n).map(|i| frames[i % frames.len()].as_slice()))?;
            let (u1, s1) = sys::thread_cpu();
            if sent_now as u64 != sent {
                bail!("generator sent {sent_now} of {sent}");
            }
            let wait = DeliveryWait { sent, consumers };
            let last_delivery = if mode == Mode::BaselineTx {
                Instant::now()
            } else {
                wait.until_accounted(shared, rx, &watched, base)?
            };
            stop.stop();
            for r in receivers {
                r.join()
                    .map_err(|_| anyhow::anyhow!("receiver panicked"))??;
            }
            Ok(((u1 - u0) + (s1 - s0), last_delivery))
        })
    }

    /// The mode's figures from the counters.
    fn result(&self, mode: Mode, size: usize, shared: RunTotals, m: Measured) -> ModeResult {
        let Measured {
            drops,
            wall_s: wall,
            generator_ns,
            busy_ns: busy,
            xdp_hook,
        } = m;
        let (flows, consumers, sent) = (
            self.config.flows,
            self.config.consumers,
            self.config.packets,
        );
        let delivered = shared.delivered.load(Ordering::Relaxed);
        let dropped = drops.total();
        let per = |ns: u64, n: u64| if n == 0 { 0.0 } else { ns as f64 / n as f64 };
        let receiver_user = shared.rx_user_ns.load(Ordering::Relaxed);
        let receiver_sys = shared.rx_sys_ns.load(Ordering::Relaxed);
        let hist = shared
            .histogram
            .into_inner()
            .unwrap()
            .unwrap_or_else(new_histogram);
        let per_flow = shared.per_flow.into_inner().unwrap();
        ModeResult {
            mode: mode.name(),
            mechanism: match xdp_hook {
                Some(hook) => format!("{} at the {hook} hook", mode.mechanism()),
                None => mode.mechanism().into(),
            },
            copied: mode.copied().into(),
            receives: mode != Mode::BaselineTx,
            frame_bytes: size,
            flows,
            consumers,
            sent,
            delivered,
            dropped,
            unaccounted: sent as i64 - delivered as i64 - dropped as i64,
            drops,
            wall_s: wall,
            delivered_pps: if wall > 0.0 {
                delivered as f64 / wall
            } else {
                0.0
            },
            receiver_user_ns_per_pkt: per(receiver_user, delivered),
            receiver_sys_ns_per_pkt: per(receiver_sys, delivered),
            generator_ns_per_pkt: per(generator_ns, sent),
            machine_ns_per_delivered: per(busy, delivered),
            machine_ns_per_sent: per(busy, sent),
            receive_ns_per_delivered: None,
            latency: Latency::from(&hist),
            flow_min: if delivered == 0 {
                0
            } else {
                per_flow.iter().copied().min().unwrap_or(0)
            },
            flow_max: per_flow.iter().copied().max().unwrap_or(0),
        }
    }
}

/// What was measured around a mode, besides the receivers' own counters.
struct Measured {
    drops: Drops,
    /// First frame sent to last delivered.
    wall_s: f64,
    /// The generator thread's CPU.
    generator_ns: u64,
    /// Whole-machine busy CPU.
    busy_ns: u64,
    /// af-xdp: where the program ran ("native" or "generic").
    xdp_hook: Option<&'static str>,
}

/// What a mode receives with.
struct Receivers {
    /// One UDP socket per flow (socket modes).
    sockets: Vec<OwnedFd>,
    /// The RX ring (ring modes).
    ring: Option<RxRing>,
    /// The AF_XDP sockets and their program (af-xdp).
    xdp: Option<XdpRx>,
    /// pnet's channel (pnet-datalink).
    pnet: Option<PnetRx>,
}

impl Receivers {
    /// The receiving socket's own drop counter since it was opened.
    fn socket_drops(&self) -> Result<u64> {
        let mut d = 0;
        if let Some(r) = &self.ring {
            d += r.stats()?.drops;
        }
        if let Some(x) = &self.xdp {
            d += x.drops()?;
        }
        if let Some(p) = &self.pnet {
            d += p.drops()?;
        }
        Ok(d)
    }
}

/// Mirrors UDP InErrors of namespace b and the tx drops of a's veth into `watched` while
/// the mode runs (one thread per namespace, entered once), until `stop`.
fn watch_drops<'s>(
    s: &'s std::thread::Scope<'s, '_>,
    lab: &Lab,
    watched: &'s Watched,
    stop: &StopToken,
) {
    let (a, b) = (lab.a.clone(), lab.b.clone());
    let watch_stop = stop.clone();
    s.spawn(move || {
        b.run(|| {
            while !watch_stop.is_stopped() {
                watched
                    .udp_in_errors
                    .store(snmp("Udp", "InErrors"), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(10));
            }
        })
    });
    let watch_stop = stop.clone();
    s.spawn(move || {
        a.run(|| {
            while !watch_stop.is_stopped() {
                watched
                    .veth_drops
                    .store(netdev_tx_drops(&a.iface), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(10));
            }
        })
    });
}

/// What a mode's receiver threads are started with.
#[derive(Clone, Copy)]
struct ReceiverSpec {
    mode: Mode,
    size: usize,
    flows: usize,
    consumers: usize,
}

impl ReceiverSpec {
    /// Starts the mode's receiver threads in `s` (none for the generator alone): the socket
    /// modes one thread per consumer, each with every `consumers`-th socket; AF_XDP, pnet
    /// and the ring one thread (the ring's pipeline starts its consumers itself).
    fn spawn<'s>(
        self,
        s: &'s std::thread::Scope<'s, '_>,
        rx: &'s Receivers,
        shared: &'s RunTotals,
        stop: &StopToken,
    ) -> Vec<std::thread::ScopedJoinHandle<'s, Result<()>>> {
        let ReceiverSpec {
            mode,
            size,
            flows,
            consumers,
        } = self;
        let stop = stop.clone();
        match mode {
            Mode::SocketsRecvmsg | Mode::SocketsRecvmmsg | Mode::SocketsIoUring => (0..consumers)
                .map(|c| {
                    let mine: Vec<(usize, i32)> = rx
                        .sockets
                        .iter()
                        .enumerate()
                        .skip(c)
                        .step_by(consumers)
                        .map(|(i, fd)| (i, fd.as_raw_fd()))
                        .collect();
                    let stop = stop.clone();
                    let batch = mode == Mode::SocketsRecvmmsg;
                    s.spawn(move || {
                        if mode == Mode::SocketsIoUring {
                            uring_receiver(&mine, size, shared, flows, &stop)
                        } else {
                            socket_receiver(&mine, batch, size, shared, flows, &stop)
                        }
                    })
                })
                .collect(),
            Mode::AfXdp => {
                let xdp = rx.xdp.as_ref().expect("af-xdp mode has sockets");
                vec![s.spawn(move || xdp_receiver(xdp, shared, flows, &stop))]
            }
            Mode::PnetDatalink => {
                let pnet = rx.pnet.as_ref().expect("pnet mode has a channel");
                vec![s.spawn(move || pnet_receiver(pnet, shared, flows, &stop))]
            }
            Mode::Ring(delivery) => {
                let ring = rx.ring.as_ref().expect("ring mode has a ring");
                vec![s.spawn(move || ring_receiver(ring, delivery, consumers, shared, flows, &stop))]
            }
            Mode::BaselineTx => Vec::new(),
        }
    }
}

/// Counters mirrored by watcher threads inside the namespaces while a mode runs.
#[derive(Default)]
struct Watched {
    /// UDP InErrors of namespace b.
    udp_in_errors: AtomicU64,
    /// tx drops of a's veth.
    veth_drops: AtomicU64,
}

/// The tx drop count of `iface` in the calling thread's namespace (/proc/net/dev).
fn netdev_tx_drops(iface: &str) -> u64 {
    let s = std::fs::read_to_string("/proc/thread-self/net/dev").unwrap_or_default();
    tx_drops_in(&s, iface)
}

/// The tx drop column (the 12th after the colon) of `iface` in /proc/net/dev's text.
fn tx_drops_in(dev: &str, iface: &str) -> u64 {
    netdev_column(dev, iface, 11).unwrap_or(0)
}

/// Source address of flow `i` with distinct sources: 198.19.0.0/16 from .0.1 on (the
/// benchmarking range's upper half; the lab's own addresses are in 198.18.0.0/24).
fn distinct_source(i: usize) -> std::net::Ipv4Addr {
    std::net::Ipv4Addr::from(u32::from(std::net::Ipv4Addr::new(198, 19, 0, 1)) + i as u32)
}

/// The kernel's drop counters of namespace b (and a's veth) when a mode starts.
struct DropCounters {
    udp_in_errors: u64,
    udp_rcvbuf_errors: u64,
    backlog: u64,
    veth: u64,
}

impl DropCounters {
    fn read(lab: &Lab) -> Result<DropCounters> {
        let (udp_in_errors, udp_rcvbuf_errors) = lab
            .b
            .run(|| (snmp("Udp", "InErrors"), snmp("Udp", "RcvbufErrors")))?;
        let iface = lab.a.iface.clone();
        let veth = lab.a.run(move || netdev_tx_drops(&iface))?;
        Ok(DropCounters {
            udp_in_errors,
            udp_rcvbuf_errors,
            backlog: softnet_drops(),
            veth,
        })
    }

    /// Drops counted since `self` was read.
    fn since(&self, lab: &Lab, rx: &Receivers) -> Result<Drops> {
        let now = DropCounters::read(lab)?;
        Ok(Drops {
            ring: rx.socket_drops()?,
            udp_in_errors: now.udp_in_errors - self.udp_in_errors,
            udp_rcvbuf_errors: now.udp_rcvbuf_errors - self.udp_rcvbuf_errors,
            backlog: now.backlog - self.backlog,
            veth: now.veth.saturating_sub(self.veth),
        })
    }
}

/// Waiting for the receivers after the generator is done.
struct DeliveryWait {
    sent: u64,
    consumers: usize,
}

impl DeliveryWait {
    /// Waits until every frame is delivered or counted as dropped, or nothing moves; returns
    /// when the last delivery was seen.
    fn until_accounted(
        &self,
        shared: &RunTotals,
        rx: &Receivers,
        watched: &Watched,
        base: &DropCounters,
    ) -> Result<Instant> {
        let mut last = shared.delivered.load(Ordering::Relaxed);
        let mut last_change = Instant::now();
        loop {
            std::thread::sleep(Duration::from_millis(10));
            let d = shared.delivered.load(Ordering::Relaxed);
            if d != last {
                last = d;
                last_change = Instant::now();
            }
            let in_err = watched
                .udp_in_errors
                .load(Ordering::Relaxed)
                .max(base.udp_in_errors);
            let veth = watched.veth_drops.load(Ordering::Relaxed).max(base.veth);
            let dropped = rx.socket_drops()?
                + (in_err - base.udp_in_errors)
                + (softnet_drops() - base.backlog)
                + (veth - base.veth);
            // Receivers publish their count every 256 packets, so up to 256 per receiver
            // are only counted when they stop: near the end, 50 ms of quiet is enough.
            // Otherwise be generous: on a loaded machine a receiver can stall, and an early
            // stop would leave frames unaccounted for.
            let near = d + dropped + 256 * self.consumers as u64 >= self.sent;
            let quiet = Duration::from_millis(if near { 50 } else { 1000 });
            if d + dropped >= self.sent || last_change.elapsed() > quiet {
                return Ok(last_change);
            }
        }
    }
}

/// A trial's end: waits `window`, takes what was `delivered` by then (returned), then waits
/// until nothing has moved for 100 ms (what comes after is the trial's `late`).
fn after_sending(delivered: &std::sync::atomic::AtomicU64, window: Duration) -> u64 {
    std::thread::sleep(window);
    let in_window = delivered.load(Ordering::Relaxed);
    let (mut last, mut since) = (in_window, Instant::now());
    while since.elapsed() < Duration::from_millis(100) {
        std::thread::sleep(Duration::from_millis(10));
        let d = delivered.load(Ordering::Relaxed);
        if d != last {
            (last, since) = (d, Instant::now());
        }
    }
    in_window
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tx_drops_are_read_from_their_column_of_the_right_interface() {
        let dev = "Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo:       0       0    0    0    0     0          0         0        0       0    0    0    0     0       0          0
zcrxa1: 9000 100 1 2 0 0 0 0 64000000 1000000 0 4321 0 0 0 0
";
        assert_eq!(tx_drops_in(dev, "zcrxa1"), 4321);
        assert_eq!(tx_drops_in(dev, "lo"), 0);
        assert_eq!(
            tx_drops_in(dev, "zcrxa"),
            0,
            "a prefix is another interface"
        );
        assert_eq!(distinct_source(0), std::net::Ipv4Addr::new(198, 19, 0, 1));
        assert_eq!(
            distinct_source(4095),
            std::net::Ipv4Addr::new(198, 19, 16, 0)
        );
        assert_eq!(
            distinct_source(19_999),
            std::net::Ipv4Addr::new(198, 19, 78, 32)
        );
    }
}

/// A mode the kernel refused.
#[derive(Debug, Clone, Serialize)]
pub struct Skipped {
    /// Mode name.
    pub mode: String,
    /// Frame size.
    pub frame_bytes: usize,
    /// Flows.
    pub flows: usize,
    /// The refusal.
    pub reason: String,
}
