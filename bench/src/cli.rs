//! rxbench's command line (clap): the top-level options, the main run's arguments, and one
//! struct of arguments per sub-command. Every range and every closed set of names is checked
//! here, at parse time (clap's usage error, exit status 2); what relates two arguments or
//! needs the run (root, the TX ring's largest frame) is checked by the sub-command's module
//! under `commands/`.

use std::ops::RangeInclusive;
use std::path::PathBuf;
use std::sync::OnceLock;

use clap::builder::{PossibleValue, PossibleValuesParser, RangedU64ValueParser, TypedValueParser};
use clap::{value_parser, Parser, Subcommand, ValueEnum};

use crate::measure::capacity::mlr::Method;
use crate::measure::instructions::WORKLOADS;
use crate::measure::run::Mode;

/// Ring versus sockets receive benchmark. With no sub-command: the main run.
#[derive(Parser, Debug)]
#[command(name = "rxbench", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub cmd: Option<Cmd>,
    #[command(flatten)]
    pub run: RunArgs,
    /// Write every raw figure and the machine description as JSON.
    #[arg(long, global = true, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write SVG plots into this directory.
    #[arg(long, global = true, value_name = "DIR")]
    pub svg: Option<PathBuf>,
    /// Write the tables as markdown.
    #[arg(long, global = true, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
}

/// The main run's arguments (no sub-command).
#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// UDP flows (one socket per flow in socket modes).
    #[arg(long, default_value_t = 256, value_parser = count(1..=20_000))]
    pub flows: usize,
    /// Frame sizes in bytes, comma separated.
    #[arg(long, value_delimiter = ',', default_value = "64,512,1400")]
    pub sizes: Vec<usize>,
    /// Modes to run (default: all).
    #[arg(long, value_delimiter = ',')]
    pub modes: Vec<Mode>,
    /// Receiver / consumer threads.
    #[arg(long, default_value_t = 1, value_parser = count(1..=64))]
    pub consumers: usize,
    /// Frames sent per mode and size.
    #[arg(long, default_value_t = 1_000_000, value_parser = value_parser!(u64).range(1..=1_000_000_000))]
    pub packets: u64,
    /// A short run for CI: 64-byte frames, 40 000 frames per mode, no copy sweep; then a
    /// short capacity search (0.1 s trials) for sockets-recvmmsg and ring-zerocopy.
    #[arg(long)]
    pub quick: bool,
    /// Skip the copy sweep that the full run adds for its plots.
    #[arg(long)]
    pub no_copy: bool,
    /// Ring block size in bytes (power of two, page multiple). Larger blocks mean fewer
    /// hand-offs; at low rates a block waits for its timeout, which sets the latency.
    #[arg(long, default_value_t = zcrx_ring::DEFAULT_BLOCK_SIZE)]
    pub block_size: usize,
    /// Ring blocks.
    #[arg(long, default_value_t = zcrx_ring::DEFAULT_BLOCK_COUNT)]
    pub block_count: usize,
    /// Ring block retire timeout, ms.
    #[arg(long, default_value_t = zcrx_ring::DEFAULT_BLOCK_TIMEOUT.as_millis() as u64)]
    pub block_timeout: u64,
    /// Send each flow from its own source address (198.19.0.0/16) as well as its own port.
    #[arg(long)]
    pub distinct_sources: bool,
    /// Print the main table with every column (the markdown and the JSON always have them).
    #[arg(long)]
    pub wide: bool,
}

/// How each capacity search runs.
#[derive(clap::Args, Debug, Clone, Copy)]
pub struct SearchArgs {
    /// Seconds of traffic per trial.
    #[arg(long, default_value_t = 0.5, value_parser = real(0.05..=60.0))]
    pub seconds: f64,
    /// Searches per mode, size and flow count (interleaved), for the spread.
    #[arg(long, default_value_t = 3, value_parser = count(1..=100))]
    pub searches: usize,
    /// Steps of each search after its first trial at the generator's top rate (each halves
    /// the interval on a log scale: 7 steps narrow a 300-fold interval to within 5%); with
    /// the MLRsearch method, new loads per loss goal, at most.
    #[arg(long, default_value_t = 7, value_parser = count(1..=30))]
    pub steps: usize,
    /// The search: `mlr` (IETF BMWG's MLRsearch: --trials per load, a load passes a loss
    /// when at most --exceed-ratio of its trials lost more; one search for every loss) or
    /// `binary` (a binary search per loss, a trial per rate, a second after a sporadic loss).
    #[arg(long, value_enum, default_value_t = SearchKind::Mlr)]
    pub method: SearchKind,
    /// Trials per load, at most (MLRsearch; fewer when the first ones decide; with
    /// `capacity --loads`, every one runs).
    #[arg(long, default_value_t = Method::DEFAULT.trials, value_parser = count(1..=15))]
    pub trials: usize,
    /// Trials at a search's upper bound, at most (MLRsearch): a load that failed with
    /// --trials is tried again, up to this many times in all, and judged over them before it
    /// bounds the search; no more than --trials: none.
    #[arg(long, default_value_t = Method::DEFAULT.bound_trials, value_parser = count(1..=31))]
    pub bound_trials: usize,
    /// The share of a load's trials that may lose more than allowed with the load still
    /// passing (MLRsearch; 0: every trial must pass).
    #[arg(long, default_value_t = Method::DEFAULT.exceed_ratio, value_parser = real(0.0..=0.9))]
    pub exceed_ratio: f64,
    /// A search ends when its failing load is within this many percent above its passing
    /// one (MLRsearch), or after --steps loads.
    #[arg(long, default_value_t = Method::DEFAULT.precision * 100.0, value_parser = real(0.1..=100.0))]
    pub precision: f64,
    /// Hold /dev/cpu_dma_latency at this many µs during the searches, or `off`. The default,
    /// 0, has idle CPUs poll instead of halting (as tuned's latency profiles set): a halted
    /// vCPU can take longer to wake than the receiving veth's 256-frame queue lasts, and the
    /// searches then read the host's wake-ups rather than the receivers.
    #[arg(long, value_name = "US|off", default_value = "0", value_parser = dma_latency)]
    pub cpu_dma_latency: DmaLatency,
    /// Move every other task that may run elsewhere off the receiving CPU during the
    /// searches (their CPU sets are restored after, or by the next run if this one is
    /// killed), or `off`. Where the kernel does not preempt a task inside a system call, one
    /// that holds the receiving CPU for a millisecond (a management agent, a shell)
    /// overflows the veth's queue at rates far below what the receivers sustain.
    #[arg(long, value_name = "on|off", default_value = "on", value_parser = on_off, action = clap::ArgAction::Set)]
    pub isolate_rx_cpu: bool,
    /// Every trial records a cache line's round trip between the generator's CPU and the
    /// receiving CPU before and after it. Each trial first waits up to this many seconds
    /// while the round trip is more than twice the shortest seen in the run (then runs as
    /// it is, its record saying so), and a trial in which it crossed that line is run
    /// again; `off` runs the trials as the host places the CPUs. A hypervisor that moves
    /// the two vCPUs between dies changes the receive path's cost per frame by half or
    /// more, and a search whose trials fall on both sides of a move does not hold; where
    /// the CPUs are far apart most of the time, the waits take most of the run.
    #[arg(long, value_name = "SECONDS|off", default_value = "30", value_parser = hold_seconds)]
    pub hold_cpu_link: HoldLink,
}

/// `--hold-cpu-link`: the longest wait for the near state, or `off` (`None`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HoldLink(pub Option<std::time::Duration>);

fn hold_seconds(v: &str) -> Result<HoldLink, String> {
    match v.trim() {
        "off" => Ok(HoldLink(None)),
        s => s
            .parse::<f64>()
            .ok()
            .filter(|s| (0.0..=3600.0).contains(s))
            .map(|s| HoldLink(Some(std::time::Duration::from_secs_f64(s))))
            .ok_or_else(|| format!("{v:?}: seconds (0 to 3600) or `off`")),
    }
}

/// `on` or `off`.
fn on_off(v: &str) -> Result<bool, String> {
    match v.trim() {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(format!("{v:?}: `on` or `off`")),
    }
}

/// `--cpu-dma-latency`: µs to hold /dev/cpu_dma_latency at, or `off` (`None`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DmaLatency(pub Option<u32>);

fn dma_latency(v: &str) -> Result<DmaLatency, String> {
    match v.trim() {
        "off" => Ok(DmaLatency(None)),
        us => us
            .parse::<u32>()
            .ok()
            .filter(|&us| us <= i32::MAX as u32)
            .map(|us| DmaLatency(Some(us)))
            .ok_or_else(|| format!("{v:?}: µs (0 to {}) or `off`", i32::MAX)),
    }
}

/// A frame size (60..=1514) or `imix` ([`crate::measure::capacity::IMIX`]).
#[derive(Clone)]
struct SizeOrImix;

impl TypedValueParser for SizeOrImix {
    type Value = usize;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<usize, clap::Error> {
        if value == "imix" {
            return Ok(crate::measure::capacity::IMIX);
        }
        if value.to_str().is_some_and(|v| v.parse::<u64>().is_ok()) {
            return count(60..=1514).parse_ref(cmd, arg, value);
        }
        Err(clap::Error::raw(
            clap::error::ErrorKind::InvalidValue,
            format!(
                "invalid value '{}' for '--sizes': a frame size (60..=1514) or imix\n",
                value.to_string_lossy()
            ),
        )
        .with_cmd(cmd))
    }
}

/// `--method`'s values.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchKind {
    /// IETF BMWG's MLRsearch.
    Mlr,
    /// The binary search of RFC 2544.
    Binary,
}

/// Where the sniffers come from and write to.
#[derive(clap::Args, Debug, Clone)]
pub struct SnifferArgs {
    /// The zcap binary (default: next to rxbench).
    #[arg(long)]
    pub zcap: Option<PathBuf>,
    /// The file the sniffers' `-w FILE` runs write (removed after each trial).
    #[arg(
        long,
        value_name = "FILE",
        default_value = "/var/tmp/zcrx-saturation.pcap"
    )]
    pub write_to: PathBuf,
}

/// The sub-commands (none: the main run).
#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Copy routines x sizes x hot/cold destination: GB/s, crossover, NT threshold.
    Copy(CopyArgs),
    /// memcmp variants by size: byte loop, word-at-a-time, AVX2, libc.
    Memcmp,
    /// The flow table (one `track` call a packet; `track_batch` on huge pages) against
    /// hashbrown+foldhash doing the same accounting (and, to show that work's cost, one doing
    /// only counts), extract + track, taking turns slice by slice each round: M packets/s
    /// and each one's rate over hashbrown's, paired by round.
    Table(TableArgs),
    /// What each generator offers: the TX ring and the in-kernel xdp-live generator
    /// (BPF_PROG_TEST_RUN with live frames), each from CPU 0, frames to a foreign MAC, the
    /// receiving veth's NAPI thread on the last CPU: Mpps, CPU per frame, the ratio, and which
    /// CPU ran what.
    Generators(GeneratorsArgs),
    /// Zero-loss throughput of each receive mode (RFC 2544 §26.1), and at 0.1% loss: one
    /// search (IETF BMWG's MLRsearch: several trials a load, see --method) on the rate the
    /// in-kernel xdp-live generator offers (CPU 0), the receiving
    /// veth's NAPI thread and the receivers on the last CPU, every other task moved off it;
    /// baseline-tx (nothing receives, passing while the receiving veth drops nothing) is the
    /// ceiling.
    Capacity(CapacityArgs),
    /// The saturation study (`scripts/demo.sh saturation`): the generators compared; the
    /// capacity of every mode at 64, 512 and 1400 B and IMIX with 256 flows (0 and 0.1%
    /// loss); the zero-loss rate of the sweep's modes at 1 to 4096 flows (64 B); zcap and
    /// tcpdump at 64 B; `zcap --flows` on the ring against `--flows-in-kernel` (at tcx and at
    /// XDP) at 256 and 4096 flows (64 B). Interleaved searches throughout,
    /// /dev/cpu_dma_latency held at 0 and the receiving CPU kept for the receivers (as
    /// `capacity` does) unless --cpu-dma-latency or --isolate-rx-cpu say otherwise; write it
    /// with --json, --markdown, --svg.
    Saturation(SaturationArgs),
    /// Moving pages by mremap and by mmap+munmap (TLB shootdown) versus memcpy.
    Remap(RemapArgs),
    /// Drain a pre-filled (synthetic) ring, zero-copy versus copy: user-side ns/packet.
    Drain(DrainArgs),
    /// CPU per packet of `zcap -w /dev/null`, `zcap --flows` (alone and with `-w /dev/null`) and `tcpdump -w /dev/null` on the
    /// same traffic, in the same run.
    Sniff(SniffArgs),
    /// Instructions per packet under callgrind (needs valgrind): extraction, the flow table
    /// against hashbrown+foldhash, the pipeline stage. Deterministic, unlike wall time.
    Instructions(InstructionsArgs),
    /// (Internal) one workload, run by `instructions` under callgrind.
    #[command(hide = true)]
    Workload(WorkloadArgs),
    /// Every receive mode over a range of flow counts (one socket per flow in the socket
    /// modes), each flow from its own source address: CPU per packet, rate, drops, p99.
    Sweep(SweepArgs),
    /// Create (`up`) or delete (`down`) a persistent lab `zcrxbencha`/`zcrxbenchb`.
    Lab(LabArgs),
    /// TCP receive by `recv` copies against TCP_ZEROCOPY_RECEIVE (received pages mapped into
    /// the process), over loopback in the lab's namespace: per connection count and read
    /// size, the receiving thread's CPU per KiB, the receiving CPU's, the share of bytes
    /// really mapped, TLB shootdowns (/proc/interrupts).
    TcpRx(TcpRxArgs),
}

/// `rxbench tcp-rx`'s arguments.
#[derive(clap::Args, Debug)]
pub struct TcpRxArgs {
    /// TCP connections (all read by one thread), comma separated.
    #[arg(long, value_delimiter = ',', default_value = "1,10,100,1000", value_parser = count(1..=10_000))]
    pub conns: Vec<usize>,
    /// Bytes a read asks for: page multiples, with k (KiB) or m (MiB), comma separated.
    #[arg(long, value_delimiter = ',', default_value = "4k,64k,1m", value_parser = read_size)]
    pub reads: Vec<usize>,
    /// Seconds each point is measured.
    #[arg(long, default_value_t = 2.0, value_parser = real(0.1..=600.0))]
    pub secs: f64,
    /// Check every byte received against what was sent (else the first of each 4 KiB).
    #[arg(long)]
    pub verify: bool,
}

/// A read size: a page multiple from 4 KiB to 64 MiB, bytes or with k (KiB) or m (MiB).
fn read_size(s: &str) -> Result<usize, String> {
    let t = s.trim().to_ascii_lowercase();
    let (digits, unit) = match t.strip_suffix('k') {
        Some(d) => (d, 1 << 10),
        None => match t.strip_suffix('m') {
            Some(d) => (d, 1 << 20),
            None => (t.as_str(), 1),
        },
    };
    let n: usize = digits
        .parse()
        .map_err(|_| format!("{s:?} is not a size (bytes, or with k or m)"))?;
    let v = n
        .checked_mul(unit)
        .ok_or_else(|| format!("{s:?} is too large"))?;
    if !(4096..=64 << 20).contains(&v) || v % 4096 != 0 {
        return Err(format!(
            "{s:?} is not a multiple of 4096 from 4k to 64m (the zero-copy mapping is whole pages)"
        ));
    }
    Ok(v)
}

/// `rxbench copy`'s arguments.
#[derive(clap::Args, Debug)]
pub struct CopyArgs {
    /// Rounds: the routines take turns at every size and destination, each point is the
    /// median of its rounds.
    #[arg(long, default_value_t = 1, value_parser = count(1..=1000))]
    pub rounds: usize,
    /// Copy sizes (default: 64 B to 32 MiB, `zcrx_capture::copy::BENCH_SIZES`).
    #[arg(long, value_delimiter = ',', value_parser = count(1..=(256 << 20)))]
    pub sizes: Option<Vec<usize>>,
}

/// `rxbench table`'s arguments.
#[derive(clap::Args, Debug)]
pub struct TableArgs {
    /// Rounds per process; each figure is the median over all processes' rounds.
    #[arg(long, default_value_t = 7, value_parser = count(1..=1000))]
    pub rounds: usize,
    /// Processes, one after another, each with its own memory layout (address-space
    /// randomisation places the stream, the tables and the stack anew, and one layout can
    /// slow a contender against another for as long as the process lives: one process is
    /// one draw of that).
    #[arg(long, default_value_t = 5, value_parser = count(1..=100))]
    pub processes: usize,
    /// Print the figures as JSON to stdout and nothing else (how a process of
    /// `--processes` reports to the first).
    #[arg(long, hide = true)]
    pub emit_points: bool,
    /// Flow counts.
    #[arg(
        long,
        value_delimiter = ',',
        default_values_t = [256u32, 65_536, 1 << 20],
        value_parser = value_parser!(u32).range(1..=(1 << 22))
    )]
    pub flows: Vec<u32>,
    /// The seed of every contender's hash (the tables' and hashbrown's foldhash).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Flows every contender is sized for (the tables' capacity, hashbrown's
    /// `with_capacity`); default twice the flow count. A pipeline's table is sized for
    /// the most flows it may meet (65 536 by default), far above what a quiet link has.
    #[arg(long, value_parser = count(1..=(1 << 26)))]
    pub capacity: Option<usize>,
}

/// The frame sizes of lab traffic a generator sends: Ethernet frames without their FCS,
/// from the 60-byte minimum to a 1500-byte MTU's 1514.
#[derive(clap::Args, Debug)]
pub struct FrameSizes {
    /// Frame sizes.
    #[arg(
        long,
        value_delimiter = ',',
        default_values_t = [64usize, 512, 1400],
        value_parser = count(60..=1514)
    )]
    pub sizes: Vec<usize>,
}

/// `rxbench generators`'s arguments.
#[derive(clap::Args, Debug)]
pub struct GeneratorsArgs {
    #[command(flatten)]
    pub frames: FrameSizes,
    /// Flows (one frame each, sent in turn).
    #[arg(long, default_value_t = 256, value_parser = count(1..=4096))]
    pub flows: usize,
    /// Frames the TX ring sends per size and run.
    #[arg(long, default_value_t = 2_000_000, value_parser = value_parser!(u64).range(1..))]
    pub packets: u64,
    /// Seconds xdp-live sends per size and run.
    #[arg(long, default_value_t = 1.0, value_parser = real(0.01..=600.0))]
    pub seconds: f64,
    /// Pace xdp-live at this many million frames per second (default: as fast as it goes).
    #[arg(long, value_parser = real(0.001..=100.0))]
    pub rate: Option<f64>,
    /// Interleaved runs of both generators.
    #[arg(long, default_value_t = 3, value_parser = count(1..=100))]
    pub runs: usize,
    /// Move every other task that may run elsewhere off the receiving CPU during the runs,
    /// as `capacity --isolate-rx-cpu` does, or `off` (`scripts/rx-stalls.sh` compares both).
    #[arg(long, value_name = "on|off", default_value = "off", value_parser = on_off, action = clap::ArgAction::Set)]
    pub isolate_rx_cpu: bool,
}

/// `rxbench capacity`'s arguments.
#[derive(clap::Args, Debug)]
pub struct CapacityArgs {
    #[command(flatten)]
    pub search: SearchArgs,
    /// Modes (default: baseline-tx, the sockets with recvmsg and recvmmsg, io_uring,
    /// AF_XDP, pnet, the ring zero-copy and with its automatic copy; "" for none, with
    /// --sniffers).
    #[arg(long, value_delimiter = ',', value_parser = ModeOrNone)]
    pub modes: Vec<Option<Mode>>,
    /// Frame sizes, bytes, and `imix` (7:4:1 of 64, 576 and 1500 B, interleaved by the
    /// generator).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "64,512,1400",
        value_parser = SizeOrImix
    )]
    pub sizes: Vec<usize>,
    /// Flow counts (a socket per flow for the socket modes; a lab for each count).
    #[arg(
        long,
        value_delimiter = ',',
        default_values_t = [256usize],
        value_parser = count(1..=4096)
    )]
    pub flows: Vec<usize>,
    /// Losses to search for, percent of the frames sent.
    #[arg(
        long,
        value_delimiter = ',',
        default_values_t = [0.0f64, 0.1],
        value_parser = real(0.0..=50.0)
    )]
    pub losses: Vec<f64>,
    /// Instead of searching, run --trials trials at each of these loads, Mpps (every mode
    /// the same time at the same rates: for profiles and for comparing modes at one load),
    /// judged for each --losses as a search judges its loads. MLRsearch only.
    #[arg(long, value_delimiter = ',', value_parser = real(0.001..=100.0))]
    pub loads: Vec<f64>,
    /// Also search for the sniffers: zcap and tcpdump (same ring memory), each writing to
    /// /dev/null and to --write-to.
    #[arg(long)]
    pub sniffers: bool,
    /// Also search for zcap writing compressed files (needs zstd): --write-to plain, as
    /// .zst (zstd level 1) and .lz4, and through a pipe into `zstd -1`; with each file's
    /// compression ratio.
    #[arg(long)]
    pub compressed: bool,
    /// Also search for `zcap --flows` and `zcap --flows --names` (writing nothing): what
    /// reading the flows' names costs in zero-loss rate.
    #[arg(long)]
    pub names: bool,
    /// Also search for `zcap --flows --flows-in-kernel` (flows counted by an eBPF program at
    /// the receiving interface's tcx ingress, no ring), the same with
    /// `--flows-in-kernel-hook xdp` (at its XDP hook, before the skb exists) and `zcap
    /// --flows` on the ring, all writing nothing.
    #[arg(long)]
    pub kernel_flows: bool,
    /// The sniffers' traffic: `udp` (the xdp-live generator's --flows UDP flows of each
    /// --sizes) or `tls-handshakes` (--flows short TLS connections one after another, as
    /// `rxbench sniff --traffic tls-handshakes` sends them, offered by a TX ring paced in
    /// batches; --sizes unused, sniffers only).
    #[arg(long, value_enum, default_value_t = Traffic::Udp)]
    pub traffic: Traffic,
    #[command(flatten)]
    pub sniffer: SnifferArgs,
}

/// `rxbench saturation`'s arguments.
#[derive(clap::Args, Debug)]
pub struct SaturationArgs {
    #[command(flatten)]
    pub search: SearchArgs,
    #[command(flatten)]
    pub sniffer: SnifferArgs,
}

/// `rxbench remap`'s arguments.
#[derive(clap::Args, Debug)]
pub struct RemapArgs {
    /// Largest page count (powers of two from 1).
    #[arg(long, default_value_t = 16_384, value_parser = count(1..=(1 << 20)))]
    pub max_pages: usize,
}

/// `rxbench drain`'s arguments.
#[derive(clap::Args, Debug)]
pub struct DrainArgs {
    /// Frame sizes (up to 65535: GRO-sized frames).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "64,512,1500,65535",
        value_parser = count(60..=65_535)
    )]
    pub sizes: Vec<usize>,
    /// Packets per measurement (frames above 1500 B: as many bytes as this many
    /// 1500-byte frames).
    #[arg(long, default_value_t = 2_000_000, value_parser = value_parser!(u64).range(1..))]
    pub packets: u64,
    /// Rounds: every delivery mode runs once per round, in turn; figures are medians.
    #[arg(long, default_value_t = 5, value_parser = count(1..=1000))]
    pub rounds: usize,
}

/// `rxbench sniff`'s arguments.
#[derive(clap::Args, Debug)]
pub struct SniffArgs {
    /// Frame sizes.
    #[arg(long, value_delimiter = ',', default_value = "64,1400")]
    pub sizes: Vec<usize>,
    /// Frames per sniffer and size.
    #[arg(long, default_value_t = 1_000_000)]
    pub packets: u64,
    /// UDP flows.
    #[arg(long, default_value_t = 256, value_parser = count(1..=20_000))]
    pub flows: usize,
    /// The zcap binary (default: next to rxbench).
    #[arg(long)]
    pub zcap: Option<PathBuf>,
    /// Runs per sniffer (interleaved); the table shows medians, the JSON every run.
    #[arg(long, default_value_t = 5, value_parser = count(1..=100))]
    pub repeat: usize,
    /// Latency instead of CPU: each sniffer writes pcap to a pipe (-U -w -) while paced
    /// traffic flows at each of --rates; kernel receive timestamp to the record read.
    #[arg(long)]
    pub latency: bool,
    /// With --latency: offered rates, packets per second.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "1000,100000",
        value_parser = value_parser!(u64).range(1..=1_000_000)
    )]
    pub rates: Vec<u64>,
    /// With --latency: also run every sniffer and rate (interleaved) while holding
    /// /dev/cpu_dma_latency at this many µs, which keeps idle CPUs out of deep idle states
    /// (as tuned's latency-performance profile does); 0 = poll instead of halting.
    #[arg(long, value_name = "US")]
    pub cpu_dma_latency: Option<u32>,
    /// Where zcap and tcpdump write their pcap: /dev/null measures the sniffer alone; a
    /// file (on tmpfs, e.g. /dev/shm/sniff.pcap) adds the kernel's copy into the page
    /// cache to each sniffer's CPU. The file is removed after each run.
    #[arg(long, value_name = "FILE", default_value = "/dev/null")]
    pub write_to: PathBuf,
    /// Also run `zcap --no-sandbox -w FILE` beside `zcap -w FILE`: the sandbox's cost (the
    /// seccomp filter on every system call, Landlock on the opens) as their difference.
    #[arg(long)]
    pub sandbox_cost: bool,
    /// Also run `zcap --flows --names` (alone and with -w FILE) beside `zcap --flows`: what
    /// reading the flows' names costs, as their difference.
    #[arg(long)]
    pub names_cost: bool,
    /// The traffic: `udp` (--flows long UDP flows of each --sizes), or `tls-handshakes`
    /// (--flows short TLS connections one after another, replayed until --packets frames
    /// are sent: each connection a new flow with a ClientHello to read; --sizes unused).
    #[arg(long, value_enum, default_value_t = Traffic::Udp)]
    pub traffic: Traffic,
}

/// `rxbench sniff --traffic` (and capacity's): the traffic offered.
pub use crate::lab::handshakes::Traffic;

/// `rxbench instructions`'s arguments.
#[derive(clap::Args, Debug)]
pub struct InstructionsArgs {
    /// Workloads (default: all).
    #[arg(long, value_delimiter = ',', value_parser = workloads(true))]
    pub workloads: Vec<String>,
}

/// `rxbench workload`'s arguments.
#[derive(clap::Args, Debug)]
pub struct WorkloadArgs {
    /// Workload name.
    #[arg(value_parser = workloads(false))]
    pub name: String,
    /// Packets.
    pub packets: u64,
}

/// `rxbench sweep`'s arguments.
#[derive(clap::Args, Debug)]
pub struct SweepArgs {
    /// Flow counts, comma separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_values_t = crate::measure::sweep::DEFAULT_FLOWS,
        value_parser = count(1..=20_000)
    )]
    pub flow_counts: Vec<usize>,
    /// Modes (default: baseline-tx, the socket modes, af-xdp, pnet-datalink,
    /// ring-zerocopy, ring-copy-auto).
    #[arg(long, value_delimiter = ',')]
    pub modes: Vec<Mode>,
    /// Frame size in bytes.
    #[arg(long, default_value_t = 64)]
    pub size: usize,
    /// Frames per mode and flow count.
    #[arg(long, default_value_t = 300_000, value_parser = value_parser!(u64).range(1..=1_000_000_000))]
    pub packets: u64,
    /// Runs of every mode at every flow count, interleaved; the table shows the median run,
    /// the JSON every run.
    #[arg(long, default_value_t = 3, value_parser = count(1..=100))]
    pub repeat: usize,
}

/// `rxbench lab`'s arguments.
#[derive(clap::Args, Debug)]
pub struct LabArgs {
    /// What to do with the lab.
    pub action: LabAction,
}

/// `rxbench lab`'s actions.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum LabAction {
    /// Create the lab and leave it up.
    Up,
    /// Delete the lab.
    Down,
}

/// A count within `range`: clap's integer parser, for a `usize` argument.
fn count(range: RangeInclusive<u64>) -> RangedU64ValueParser<usize> {
    RangedU64ValueParser::new().range(range)
}

/// A real number within `range` (seconds, rates, percentages); the message names the range
/// as clap's integer parser does.
fn real(range: RangeInclusive<f64>) -> impl TypedValueParser<Value = f64> {
    move |s: &str| -> Result<f64, String> {
        let v: f64 = s.parse().map_err(|e| format!("{e}"))?;
        if range.contains(&v) {
            Ok(v)
        } else {
            Err(format!("{v} is not in {}..={}", range.start(), range.end()))
        }
    }
}

/// The workloads' names, each with what it measures; without the ones that run another
/// program (`zcap-writer` counts zcap itself) for `rxbench workload`.
fn workloads(all: bool) -> PossibleValuesParser {
    PossibleValuesParser::new(
        WORKLOADS
            .iter()
            .filter(|(name, _)| all || *name != "zcap-writer")
            .map(|&(name, what)| PossibleValue::new(name).help(what)),
    )
}

/// Modes by [`Mode::name`], as `--modes` takes them.
impl ValueEnum for Mode {
    fn value_variants<'a>() -> &'a [Self] {
        static ALL: OnceLock<Vec<Mode>> = OnceLock::new();
        ALL.get_or_init(Mode::all)
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        // clap's names are `&'static str`: each mode's name is made once, and kept.
        static NAMES: OnceLock<Vec<(Mode, &'static str)>> = OnceLock::new();
        let names = NAMES.get_or_init(|| {
            Mode::all()
                .into_iter()
                .map(|m| (m, &*Box::leak(m.name().into_boxed_str())))
                .collect()
        });
        let &(_, name) = names.iter().find(|(m, _)| m == self)?;
        Some(PossibleValue::new(name))
    }
}

/// `capacity --modes`: a mode by name, or `""` for none (with `--sniffers`).
#[derive(Clone)]
struct ModeOrNone;

impl TypedValueParser for ModeOrNone {
    type Value = Option<Mode>;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Option<Mode>, clap::Error> {
        if value.is_empty() {
            return Ok(None);
        }
        clap::builder::EnumValueParser::<Mode>::new()
            .parse_ref(cmd, arg, value)
            .map(Some)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(
            Mode::value_variants()
                .iter()
                .filter_map(ValueEnum::to_possible_value),
        ))
    }
}

#[cfg(test)]
mod test {
    use clap::{CommandFactory, Parser, ValueEnum};

    use super::{Cli, Cmd};
    use crate::measure::run::Mode;

    #[test]
    fn the_definitions_hold_and_every_default_is_within_its_range() {
        Cli::command().debug_assert();
        // clap checks default values as it parses: each sub-command's defaults pass.
        Cli::try_parse_from(["rxbench"]).expect("the main run's defaults");
        for sub in Cli::command().get_subcommands() {
            let name = sub.get_name();
            let args: &[&str] = match name {
                "lab" => &["up"],
                "workload" => &["stage", "1"],
                _ => &[],
            };
            let cli = Cli::try_parse_from(["rxbench", name].iter().chain(args))
                .unwrap_or_else(|e| panic!("rxbench {name}: {e}"));
            assert!(cli.cmd.is_some(), "{name}");
        }
    }

    #[test]
    fn the_receiving_cpu_is_isolated_unless_told_off() {
        let isolate =
            |args: &[&str]| match Cli::try_parse_from(["rxbench", "capacity"].iter().chain(args))
                .map(|c| c.cmd)
            {
                Ok(Some(Cmd::Capacity(a))) => Ok(a.search.isolate_rx_cpu),
                Ok(other) => panic!("{other:?}"),
                Err(e) => Err(e.to_string()),
            };
        assert_eq!(isolate(&[]), Ok(true));
        assert_eq!(isolate(&["--isolate-rx-cpu", "on"]), Ok(true));
        assert_eq!(isolate(&["--isolate-rx-cpu", "off"]), Ok(false));
        let refused = isolate(&["--isolate-rx-cpu", "true"]).unwrap_err();
        assert!(refused.contains("`on` or `off`"), "{refused}");
    }

    #[test]
    fn the_cpu_link_is_held_for_half_a_minute_unless_told_otherwise() {
        let hold =
            |args: &[&str]| match Cli::try_parse_from(["rxbench", "capacity"].iter().chain(args))
                .map(|c| c.cmd)
            {
                Ok(Some(Cmd::Capacity(a))) => Ok(a.search.hold_cpu_link.0),
                Ok(other) => panic!("{other:?}"),
                Err(e) => Err(e.to_string()),
            };
        let secs = |s: f64| Ok(Some(std::time::Duration::from_secs_f64(s)));
        assert_eq!(hold(&[]), secs(30.0));
        assert_eq!(hold(&["--hold-cpu-link", "60"]), secs(60.0));
        assert_eq!(hold(&["--hold-cpu-link", "2.5"]), secs(2.5));
        assert_eq!(hold(&["--hold-cpu-link", "off"]), Ok(None));
        for bad in ["-1", "nan", "forever", "3601"] {
            let refused = hold(&[&format!("--hold-cpu-link={bad}")]).unwrap_err();
            assert!(
                refused.contains("seconds (0 to 3600) or `off`"),
                "{refused}"
            );
        }
    }

    #[test]
    fn every_mode_is_taken_by_its_name() {
        for mode in Mode::all() {
            assert_eq!(Mode::from_str(&mode.name(), false), Ok(mode));
        }
        let cli = Cli::try_parse_from(["rxbench", "capacity", "--modes", ""]).unwrap();
        match cli.cmd {
            Some(Cmd::Capacity(a)) => assert_eq!(a.modes, [None]),
            other => panic!("{other:?}"),
        }
    }
}
