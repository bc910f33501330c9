//! The command line itself: the top-level options, the main run's arguments and the
//! sub-commands.

use std::path::PathBuf;

use clap::{value_parser, Parser, Subcommand};

use super::capacity::{CapacityArgs, GeneratorsArgs, SaturationArgs, SniffArgs};
use super::tools::{
    CopyArgs, DrainArgs, InstructionsArgs, LabArgs, PrintFileArgs, RemapArgs, SweepArgs, TableArgs,
    TcpRxArgs, WorkloadArgs,
};
use super::values::count;
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
    /// same traffic, in the same run; `--latency`: their latency; `--print`: printing their
    /// lines, CPU per packet and drops.
    Sniff(SniffArgs),
    /// Printing a capture file: `zcap -n -r F` and `tcpdump -n -r F` (also with -v and -e),
    /// lines to /dev/null, interleaved runs: CPU (user+sys) per packet and zcap's over
    /// tcpdump's. `--from` first writes F by repeating a capture to --packets packets.
    PrintFile(PrintFileArgs),
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
