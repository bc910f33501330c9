//! The results a run writes (the JSON schema `bench/report.schema.json` describes them): the
//! run's settings, one mode's figures, one capacity trial, a refused mode.

use hdrhistogram::Histogram;
use serde::Serialize;

use super::mode::{mode_names, Mode};

/// The main run's settings (`--flows`, `--sizes`, `--modes`, the ring's geometry, ...).
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
    pub(super) fn from(h: &Histogram<u64>) -> Latency {
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
    /// Per-CPU backlog drops (/proc/net/softnet_stat), the machine's: for information, not
    /// in the mode's `dropped`. A frame the backlog refuses within the sending veth's
    /// transmit is a refused transmit, which the TX ring sends again.
    pub backlog: u64,
    /// Frames sent that the receiving veth never counted as received. Not the sending veth's
    /// tx drops: those include transmits refused for a moment that the TX ring sends again.
    pub veth: u64,
}

impl Drops {
    pub(super) fn total(&self) -> u64 {
        self.ring + self.udp_in_errors + self.veth
    }
}

/// One mode at one frame size.
#[derive(Debug, Clone, Serialize)]
pub struct ModeResult {
    /// The mode's name ([`Mode::name`]).
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
    /// Where the dropped frames were counted.
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
    /// What the GRO and busy-polling modes did (absent for the other modes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<ReceivePath>,
}

/// What a GRO or busy-polling mode did: whether the kernel coalesced, whether busy polling
/// engaged.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ReceivePath {
    /// sockets-gro: buffers read (each one datagram, or several coalesced).
    pub gro_buffers: u64,
    /// sockets-gro: datagrams split out of them.
    pub gro_datagrams: u64,
    /// sockets-gro: of those, datagrams whose length or start was not the lab's (a wrong
    /// split; 0 when every buffer split right).
    pub gro_misfits: u64,
    /// The NAPI id the receiving sockets recorded from the packets they got
    /// (`SO_INCOMING_NAPI_ID`, the largest): what busy polling polls; 0 when the packets
    /// came with none (busy polling cannot engage).
    pub napi_id: u64,
    /// The receiving namespace's `BusyPollRxPackets` (/proc/net/netstat) during the run:
    /// packets read by busy polling (0: busy polling did not engage).
    pub busy_poll_rx_packets: u64,
}

impl ModeResult {
    /// A result for tests: `mode` at `size` with `flows`, every frame of ten delivered, `ns`
    /// of machine CPU per packet, no latency samples.
    #[cfg(test)]
    pub fn example(mode: &str, size: usize, flows: usize, ns: f64) -> ModeResult {
        ModeResult {
            mode: mode.into(),
            mechanism: "m".into(),
            copied: "kernel".into(),
            receives: mode != "baseline-tx",
            frame_bytes: size,
            flows,
            consumers: 1,
            sent: 10,
            delivered: 10,
            dropped: 0,
            drops: Drops::default(),
            unaccounted: 0,
            wall_s: 1.0,
            delivered_pps: 10.0,
            receiver_user_ns_per_pkt: 0.0,
            receiver_sys_ns_per_pkt: 0.0,
            generator_ns_per_pkt: 0.0,
            machine_ns_per_delivered: ns,
            machine_ns_per_sent: ns,
            receive_ns_per_delivered: None,
            latency: Latency::default(),
            flow_min: 1,
            flow_max: 1,
            path: None,
        }
    }

    /// CPU per packet as the tables and plots compare it: whole-machine busy CPU per
    /// delivered packet, per sent for the generator alone (which delivers nothing).
    pub fn cpu_per_packet(&self) -> f64 {
        if self.receives {
            self.machine_ns_per_delivered
        } else {
            self.machine_ns_per_sent
        }
    }
}

/// A goal ratio: ring-zerocopy's CPU per packet over a socket mode's at one frame size.
#[derive(Debug, Clone, Serialize)]
pub struct Ratio {
    /// Frame size.
    pub frame_bytes: usize,
    /// The socket mode compared against.
    pub versus: String,
    /// ring-zerocopy machine ns per delivered packet / socket mode's.
    pub machine_per_delivered: f64,
    /// Same, per sent packet.
    pub machine_per_sent: f64,
    /// The same ratio of the receive cost net of the generator (`receive_ns_per_delivered`).
    pub receive_per_delivered: Option<f64>,
}

/// One capacity trial: a mode at one offered rate.
#[derive(Debug, Clone, Serialize)]
pub struct Trial {
    /// The mode's name ([`Mode::name`]; a sniffer's for its trials).
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
    /// Dropped where the other runs count drops (socket, ring, UDP, between the veths).
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
    /// What a GRO or busy-polling mode did in the trial (absent for the other modes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<ReceivePath>,
    /// The receiving veth's NAPI threads' time on a CPU (/proc/PID/schedstat, ns) per frame
    /// sent: the kernel's share of the receiving CPU (capacity trials only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub napi_ns_per_frame: Option<f64>,
    /// A cache line's round trip between the generator's CPU and the receiving CPU before
    /// and after the trial ([`crate::lab::cpulink`]; capacity trials only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_link: Option<crate::lab::cpulink::Link>,
}

/// A mode the kernel refused.
#[derive(Debug, Clone, Serialize)]
pub struct Skipped {
    /// The mode's name ([`Mode::name`]).
    pub mode: String,
    /// Frame size.
    pub frame_bytes: usize,
    /// Flows.
    pub flows: usize,
    /// The refusal, as the kernel or the library said it.
    pub reason: String,
}
