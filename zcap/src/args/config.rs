//! The settings the command line is validated into: a [`Config`], a typed setting per
//! subsystem, and the vocabulary the checks share ([`Source`], [`Direction`],
//! [`MAX_SNAPLEN`]).

use std::path::PathBuf;
use std::time::Duration;

use zcrx_capture::Delivery;
use zcrx_flowcache::FlowTableConfig;
use zcrx_kflows::Hook;

use crate::export::ExportConfig;
use crate::metrics;
use crate::output::SinkConfig;
use crate::pcap_over_ip;

/// A capture's settings, validated.
pub(crate) struct Config {
    pub(crate) source: Source,
    pub(crate) capture: Capture,
    /// Where the packets go (`-w`, lines, JSON, nowhere) and how.
    pub(crate) sink: SinkConfig,
    pub(crate) flows: Flows,
    /// `--ipfix`, `--ipfix-file`.
    pub(crate) export: Option<ExportConfig>,
    /// `--metrics` and its `--web-config`.
    pub(crate) metrics: Option<metrics::ServeConfig>,
    /// `--pcap-over-ip` and its TLS, allow-list and bound.
    pub(crate) pcap_over_ip: Option<pcap_over_ip::ServeConfig>,
    /// `-q`: no status line.
    pub(crate) quiet: bool,
    /// `--count`: print only the number of packets captured.
    pub(crate) count_only: bool,
    /// `--top` and its settings.
    pub(crate) top: Option<crate::top::TopConfig>,
}

/// Where packets come from.
pub(crate) enum Source {
    /// `-r FILE` (`-`: standard input).
    File(PathBuf),
    /// `-i IFACE` through TPACKET_V3 rings and the flow stage.
    Live(String),
    /// `-i IFACE --immediate-mode`: a TPACKET_V2 ring, a packet at a time.
    Immediate(String),
}

/// How packets are captured.
pub(crate) struct Capture {
    /// Not `-O`: the filter is compiled with libpcap's optimiser.
    pub(crate) optimize: bool,
    /// `-s`: bytes kept per packet, 1..=[`MAX_SNAPLEN`].
    pub(crate) snaplen: u32,
    /// The filter expression (tcpdump syntax; empty: every packet), from `-F` or the
    /// command line.
    pub(crate) filter: String,
    /// `-Q`.
    pub(crate) direction: Direction,
    /// Not `-p`.
    pub(crate) promiscuous: bool,
    /// `-c`: stop after this many packets (at least 1).
    pub(crate) count: Option<u64>,
    /// `--sample`: one packet in this many kept, at random, by the kernel (2 or more).
    pub(crate) sample: Option<u32>,
    /// `-Z`: the user to become once the rings and listeners are set up.
    pub(crate) user: Option<String>,
    /// Not `--no-sandbox`: Landlock and seccomp once set up.
    pub(crate) sandbox: bool,
    /// `--sandbox-probe FILE` (hidden, for the tests): a file to try to create once confined.
    pub(crate) sandbox_probe: Option<PathBuf>,
    /// `--sandbox-attacks` (hidden, for the tests): a compromised parser's calls, made once
    /// confined.
    pub(crate) sandbox_attacks: bool,
    /// `--shards`, 1..=64.
    pub(crate) shards: usize,
    /// `--delivery`.
    pub(crate) delivery: Delivery,
    /// `--block-timeout`, or its default for what is asked.
    pub(crate) block_timeout: Duration,
    /// `-B` for a live ring: blocks of [`zcrx_ring::DEFAULT_BLOCK_SIZE`].
    pub(crate) block_count: usize,
    /// `-B` for `--immediate-mode`'s ring, bytes.
    pub(crate) ring_bytes: Option<usize>,
    /// `--handler-latency`.
    pub(crate) handler_latency: bool,
    /// `--rt-priority`: SCHED_FIFO priority, 1..=99.
    pub(crate) rt_priority: Option<i32>,
    /// `--cpu-dma-latency`: microseconds.
    pub(crate) cpu_dma_latency: Option<u32>,
}

/// Flows: their table (`--flows`, `--flows-every`) and how they are tracked.
pub(crate) struct Flows {
    /// `--flows`: print the table of every flow at the end.
    pub(crate) print: bool,
    /// `--json`: flows as JSON objects.
    pub(crate) json: bool,
    /// `--flows-every`: the table of live flows this often.
    pub(crate) every: Option<Duration>,
    /// The table: `--max-flows` slots, `--active-timeout`.
    pub(crate) table: FlowTableConfig,
    /// `--community-id-seed`.
    pub(crate) community_id_seed: u16,
    /// `--names`: read what each flow is from its first bytes (with `--flows`, `--ipfix`).
    pub(crate) names: bool,
    /// `--names-stats` (hidden): the names book's peaks on standard error at the end.
    pub(crate) names_stats: bool,
    /// `--names-case lower`: DNS names lower-cased, as Zeek's dns.log writes them.
    pub(crate) names_lower: bool,
    /// `--flows-in-kernel`: flows counted by an eBPF program at tcx or XDP, no ring.
    pub(crate) in_kernel: bool,
    /// `--flows-in-kernel-hook`: where that program runs.
    pub(crate) kernel_hook: Hook,
}

/// `-Q`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    In,
    Out,
    InOut,
}

impl Direction {
    /// The filter a live capture compiles: for `out`, libpcap's `outbound` (the kernel's
    /// packet type, SKF_AD_PKTTYPE) and the expression; `in` is the socket option instead.
    pub(crate) fn filter(self, expr: &str) -> String {
        match (self, expr.trim().is_empty()) {
            (Direction::Out, true) => "outbound".to_string(),
            (Direction::Out, false) => format!("outbound and ({expr})"),
            _ => expr.to_string(),
        }
    }
}

/// The largest snapshot length (libpcap's MAXIMUM_SNAPLEN); `-s 0` means it.
pub(crate) const MAX_SNAPLEN: u32 = 262_144;
