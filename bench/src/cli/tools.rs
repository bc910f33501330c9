//! The arguments of the other sub-commands: `tcp-rx`, `copy`, `table`, `remap`, `drain`,
//! `instructions`, `workload`, `sweep`, `print-file` and `lab`.

use clap::{value_parser, ValueEnum};

use super::values::{count, read_size, real, workloads};
use crate::measure::run::Mode;

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

/// `rxbench print-file`'s arguments.
#[derive(clap::Args, Debug)]
pub struct PrintFileArgs {
    /// The capture both tools print (pcap); written first if --from is given.
    #[arg(
        long,
        value_name = "FILE",
        default_value = "/dev/shm/rxbench-print.pcap"
    )]
    pub pcap: std::path::PathBuf,
    /// Write --pcap first: this capture's packets (pcap) over and over, to --packets
    /// packets, each copy's time stamps after the last's.
    #[arg(long, value_name = "FILE")]
    pub from: Option<std::path::PathBuf>,
    /// With --from: packets to write.
    #[arg(long, default_value_t = 1_000_000, value_parser = value_parser!(u64).range(1..=100_000_000))]
    pub packets: u64,
    /// Runs of each tool and flags, interleaved; the table shows medians, the JSON every run.
    #[arg(long, default_value_t = 5, value_parser = count(1..=100))]
    pub repeat: usize,
    /// The zcap binary (default: next to rxbench).
    #[arg(long)]
    pub zcap: Option<std::path::PathBuf>,
    /// Set TZ to this in both tools' environment (default: rxbench's own). With TZ unset,
    /// glibc's localtime() checks /etc/localtime with a stat(2) for every time stamp
    /// tcpdump prints; `--tz :/etc/localtime` prints the same times without it.
    #[arg(long, value_name = "TZ")]
    pub tz: Option<String>,
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
