//! The arguments of the lab's load measurements: `generators`, `capacity` (with its search and
//! sniffer settings), `saturation` and `sniff`.

use std::path::PathBuf;

use clap::value_parser;

use super::values::{
    count, dma_latency, hold_seconds, on_off, real, DmaLatency, FrameSizes, HoldLink, ModeOrNone,
    SearchKind, SizeOrImix,
};
use crate::measure::capacity::mlr::Method;
use crate::measure::run::Mode;

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
    /// Printing instead of writing: `zcap -i IF -n` and `tcpdump -i IF -n` print their lines
    /// to /dev/null while paced mixed traffic (TCP with options carrying HTTP, DNS on port
    /// 53, plain UDP; --flows exchanges) flows at each of --rates: packets seen, kernel
    /// drops and CPU per packet, --repeat runs.
    #[arg(long)]
    pub print: bool,
    /// With --print: set TZ to this in both sniffers' environment (through env(1), which
    /// execs them). With TZ unset, glibc's localtime() checks /etc/localtime with a stat(2)
    /// for every time stamp tcpdump prints; `:/etc/localtime` prints the same times without.
    #[arg(long, value_name = "TZ")]
    pub tz: Option<String>,
    /// With --print: both sniffers' ring memory, KiB (-B); a smaller ring than the default
    /// 64 MiB shows the drops of a printer that falls behind sooner.
    #[arg(long, value_name = "KIB", default_value_t = 65536, value_parser = value_parser!(u32).range(1024..=4_194_304))]
    pub ring_kib: u32,
    /// With --latency or --print: offered rates, packets per second.
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
    /// Also run `zcap --flows --active-timeout 1` alone and with `--kafka` (JSON records,
    /// and `--kafka-format goflow2`) to a broker on the receiving namespace's loopback: what
    /// publishing the flows costs per packet, as their difference. BROKER is a Kafka-compatible
    /// broker's binary with nisshi's (tansu's) command line (`scripts/broker.sh` prints
    /// one), started with its memory storage for the run.
    #[arg(long, value_name = "BROKER")]
    pub kafka_cost: Option<PathBuf>,
    /// The traffic: `udp` (--flows long UDP flows of each --sizes), or `tls-handshakes`
    /// (--flows short TLS connections one after another, replayed until --packets frames
    /// are sent: each connection a new flow with a ClientHello to read; --sizes unused).
    #[arg(long, value_enum, default_value_t = Traffic::Udp)]
    pub traffic: Traffic,
}

/// `rxbench sniff --traffic` (and capacity's): the traffic offered.
pub use crate::lab::handshakes::Traffic;
