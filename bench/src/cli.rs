//! rxbench's command line (clap): the top-level options, the main run's arguments, and one
//! struct of arguments per sub-command. Types only: each sub-command checks its ranges in its
//! own module under `commands/`, with the messages rxbench has always printed.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

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
    #[arg(long, default_value_t = 256)]
    pub flows: usize,
    /// Frame sizes in bytes, comma separated.
    #[arg(long, value_delimiter = ',', default_value = "64,512,1400")]
    pub sizes: Vec<usize>,
    /// Modes to run (default: all): baseline-tx, sockets-recvmsg, sockets-recvmmsg,
    /// sockets-io-uring, af-xdp, pnet-datalink, ring-zerocopy, ring-copy-libc, ring-copy-erms, ring-copy-avx2, ring-copy-avx512, ring-copy-nt, ring-copy-auto.
    #[arg(long, value_delimiter = ',')]
    pub modes: Vec<String>,
    /// Receiver / consumer threads.
    #[arg(long, default_value_t = 1)]
    pub consumers: usize,
    /// Frames sent per mode and size.
    #[arg(long, default_value_t = 1_000_000)]
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
    #[arg(long, default_value_t = 0.5)]
    pub seconds: f64,
    /// Searches per mode, size and flow count (interleaved), for the spread.
    #[arg(long, default_value_t = 3)]
    pub searches: usize,
    /// Steps of each search after its first trial at the generator's top rate (each halves
    /// the interval's ratio: 7 steps find a rate within 5% between 0.02 and 6 Mpps).
    #[arg(long, default_value_t = 7)]
    pub steps: usize,
    /// Hold /dev/cpu_dma_latency at this many µs during the searches (0: idle CPUs poll
    /// instead of halting, as tuned's latency profiles set).
    #[arg(long, value_name = "US")]
    pub cpu_dma_latency: Option<u32>,
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
    /// Zero-loss throughput of each receive mode (RFC 2544 §26.1), and at 0.1% loss: a binary
    /// search on the rate the in-kernel xdp-live generator offers (CPU 0), the receiving
    /// veth's NAPI thread and the receivers on the last CPU; baseline-tx (nothing receives,
    /// passing while the receiving veth drops nothing) is the ceiling.
    Capacity(CapacityArgs),
    /// The saturation study (`scripts/demo.sh saturation`): the generators compared; the
    /// capacity of every mode at 64, 512 and 1400 B with 256 flows (0 and 0.1% loss); the
    /// zero-loss rate of the sweep's modes at 1 to 4096 flows (64 B); zcap and tcpdump at
    /// 64 B. Interleaved searches throughout, /dev/cpu_dma_latency held at 0 unless
    /// --cpu-dma-latency says otherwise; write it with --json, --markdown, --svg.
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
}

/// `rxbench copy`'s arguments.
#[derive(clap::Args, Debug)]
pub struct CopyArgs {
    /// Rounds: the routines take turns at every size and destination, each point is the
    /// median of its rounds.
    #[arg(long, default_value_t = 1)]
    pub rounds: usize,
    /// Copy sizes (default: 64 B to 32 MiB, `zcrx_capture::copy::BENCH_SIZES`).
    #[arg(long, value_delimiter = ',')]
    pub sizes: Option<Vec<usize>>,
}

/// `rxbench table`'s arguments.
#[derive(clap::Args, Debug)]
pub struct TableArgs {
    /// Rounds per process; each figure is the median over all processes' rounds.
    #[arg(long, default_value_t = 7)]
    pub rounds: usize,
    /// Processes, one after another, each with its own memory layout (address-space
    /// randomisation places the stream, the tables and the stack anew, and one layout
    /// can run a contender 1.5-2x slower than another for as long as the process lives:
    /// one process is one draw of that).
    #[arg(long, default_value_t = 5)]
    pub processes: usize,
    /// Print the figures as JSON to stdout and nothing else (how a process of
    /// `--processes` reports to the first).
    #[arg(long, hide = true)]
    pub emit_points: bool,
    /// Flow counts.
    #[arg(long, value_delimiter = ',', default_values_t = [256u32, 65_536, 1 << 20])]
    pub flows: Vec<u32>,
    /// The seed of every contender's hash (the tables' and hashbrown's foldhash).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Flows every contender is sized for (the tables' capacity, hashbrown's
    /// `with_capacity`); default twice the flow count. A pipeline's table is sized for
    /// the most flows it may meet (65 536 by default), far above what a quiet link has.
    #[arg(long)]
    pub capacity: Option<usize>,
}

/// `rxbench generators`'s arguments.
#[derive(clap::Args, Debug)]
pub struct GeneratorsArgs {
    /// Frame sizes.
    #[arg(long, value_delimiter = ',', default_values_t = [64usize, 512, 1400])]
    pub sizes: Vec<usize>,
    /// Flows (one frame each, sent in turn).
    #[arg(long, default_value_t = 256)]
    pub flows: usize,
    /// Frames the TX ring sends per size and run.
    #[arg(long, default_value_t = 2_000_000)]
    pub packets: u64,
    /// Seconds xdp-live sends per size and run.
    #[arg(long, default_value_t = 1.0)]
    pub seconds: f64,
    /// Pace xdp-live at this many million frames per second (default: as fast as it goes).
    #[arg(long)]
    pub rate: Option<f64>,
    /// Interleaved runs of both generators.
    #[arg(long, default_value_t = 3)]
    pub runs: usize,
}

/// `rxbench capacity`'s arguments.
#[derive(clap::Args, Debug)]
pub struct CapacityArgs {
    #[command(flatten)]
    pub search: SearchArgs,
    /// Modes (default: baseline-tx, the sockets with recvmsg and recvmmsg, io_uring,
    /// AF_XDP, pnet, the ring zero-copy and with its automatic copy; "" for none, with
    /// --sniffers).
    #[arg(long, value_delimiter = ',')]
    pub modes: Vec<String>,
    /// Frame sizes.
    #[arg(long, value_delimiter = ',', default_values_t = [64usize, 512, 1400])]
    pub sizes: Vec<usize>,
    /// Flow counts (a socket per flow for the socket modes; a lab for each count).
    #[arg(long, value_delimiter = ',', default_values_t = [256usize])]
    pub flows: Vec<usize>,
    /// Losses to search for, percent of the frames sent.
    #[arg(long, value_delimiter = ',', default_values_t = [0.0f64, 0.1])]
    pub losses: Vec<f64>,
    /// Also search for the sniffers: zcap and tcpdump (same ring memory), each writing to
    /// /dev/null and to --write-to.
    #[arg(long)]
    pub sniffers: bool,
    /// Also search for zcap writing compressed files (needs zstd): --write-to plain, as
    /// .zst (zstd level 1) and .lz4, and through a pipe into `zstd -1`; with each file's
    /// compression ratio.
    #[arg(long)]
    pub compressed: bool,
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
    #[arg(long, default_value_t = 16_384)]
    pub max_pages: usize,
}

/// `rxbench drain`'s arguments.
#[derive(clap::Args, Debug)]
pub struct DrainArgs {
    /// Frame sizes (up to 65535: GRO-sized frames).
    #[arg(long, value_delimiter = ',', default_value = "64,512,1500,65535")]
    pub sizes: Vec<usize>,
    /// Packets per measurement (frames above 1500 B: as many bytes as this many
    /// 1500-byte frames).
    #[arg(long, default_value_t = 2_000_000)]
    pub packets: u64,
    /// Rounds: every delivery mode runs once per round, in turn; figures are medians.
    #[arg(long, default_value_t = 5)]
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
    #[arg(long, default_value_t = 256)]
    pub flows: usize,
    /// The zcap binary (default: next to rxbench).
    #[arg(long)]
    pub zcap: Option<PathBuf>,
    /// Runs per sniffer (interleaved); the table shows medians, the JSON every run.
    #[arg(long, default_value_t = 5)]
    pub repeat: usize,
    /// Latency instead of CPU: each sniffer writes pcap to a pipe (-U -w -) while paced
    /// traffic flows at each of --rates; kernel receive timestamp to the record read.
    #[arg(long)]
    pub latency: bool,
    /// With --latency: offered rates, packets per second.
    #[arg(long, value_delimiter = ',', default_value = "1000,100000")]
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
}

/// `rxbench instructions`'s arguments.
#[derive(clap::Args, Debug)]
pub struct InstructionsArgs {
    /// Workloads (default: all): extract, extract-ipv6-ext, flowtable-256, hashbrown-256,
    /// hashbrown-counts-256, flowtable-65536, hashbrown-65536, stage, stage-threaded,
    /// stage-steering-off, zcap-writer.
    #[arg(long, value_delimiter = ',')]
    pub workloads: Vec<String>,
}

/// `rxbench workload`'s arguments.
#[derive(clap::Args, Debug)]
pub struct WorkloadArgs {
    /// Workload name.
    pub name: String,
    /// Packets.
    pub packets: u64,
}

/// `rxbench sweep`'s arguments.
#[derive(clap::Args, Debug)]
pub struct SweepArgs {
    /// Flow counts, comma separated.
    #[arg(long, value_delimiter = ',', default_values_t = crate::sweep::DEFAULT_FLOWS)]
    pub flow_counts: Vec<usize>,
    /// Modes (default: baseline-tx, the socket modes, af-xdp, pnet-datalink,
    /// ring-zerocopy, ring-copy-auto).
    #[arg(long, value_delimiter = ',')]
    pub modes: Vec<String>,
    /// Frame size in bytes.
    #[arg(long, default_value_t = 64)]
    pub size: usize,
    /// Frames per mode and flow count.
    #[arg(long, default_value_t = 300_000)]
    pub packets: u64,
    /// Runs of every mode at every flow count, interleaved; the table shows the median run,
    /// the JSON every run.
    #[arg(long, default_value_t = 3)]
    pub repeat: usize,
}

/// `rxbench lab`'s arguments.
#[derive(clap::Args, Debug)]
pub struct LabArgs {
    /// up or down.
    pub action: String,
}
