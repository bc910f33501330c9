//! rxbench: what zero-copy receive saves. An mmap'd TPACKET_V3 ring (zero-copy or copy
//! delivery) against hundreds of UDP sockets read with recvmsg/recvmmsg (copy_to_user), on
//! identical traffic over hundreds of flows in a netns lab; plus copy, memcmp, remap and
//! ring-drain micro-benchmarks.
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]

mod capacity;
mod generator;
mod instructions;
mod machine;
mod micro;
mod plot;
mod report;
mod run;
mod stats;
mod sweep;
mod sys;
mod table;
mod text;

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};

use machine::Machine;
use report::Report;
use run::{Bench, Mode, RunConfig, SnifferSpec};

/// Ring versus sockets receive benchmark. With no sub-command: the main run.
#[derive(Parser, Debug)]
#[command(name = "rxbench", version, about)]
struct Cli {
    #[command(subcommand)]
    cmd: Option<Cmd>,
    #[command(flatten)]
    run: RunArgs,
    /// Write every raw figure and the machine description as JSON.
    #[arg(long, global = true, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Write SVG plots into this directory.
    #[arg(long, global = true, value_name = "DIR")]
    svg: Option<PathBuf>,
    /// Write the tables as markdown.
    #[arg(long, global = true, value_name = "FILE")]
    markdown: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
struct RunArgs {
    /// UDP flows (one socket per flow in socket modes).
    #[arg(long, default_value_t = 256)]
    flows: usize,
    /// Frame sizes in bytes, comma separated.
    #[arg(long, value_delimiter = ',', default_value = "64,512,1400")]
    sizes: Vec<usize>,
    /// Modes to run (default: all): baseline-tx, sockets-recvmsg, sockets-recvmmsg,
    /// sockets-io-uring, af-xdp, pnet-datalink, ring-zerocopy, ring-copy-libc, ring-copy-erms, ring-copy-avx2, ring-copy-avx512, ring-copy-nt, ring-copy-auto.
    #[arg(long, value_delimiter = ',')]
    modes: Vec<String>,
    /// Receiver / consumer threads.
    #[arg(long, default_value_t = 1)]
    consumers: usize,
    /// Frames sent per mode and size.
    #[arg(long, default_value_t = 1_000_000)]
    packets: u64,
    /// A short run for CI: 64-byte frames, 40 000 frames per mode, no copy sweep; then a
    /// short capacity search (0.1 s trials) for sockets-recvmmsg and ring-zerocopy.
    #[arg(long)]
    quick: bool,
    /// Skip the copy sweep that the full run adds for its plots.
    #[arg(long)]
    no_copy: bool,
    /// Ring block size in bytes (power of two, page multiple). Larger blocks mean fewer
    /// hand-offs; at low rates a block waits for its timeout, which sets the latency.
    #[arg(long, default_value_t = zcrx_ring::DEFAULT_BLOCK_SIZE)]
    block_size: usize,
    /// Ring blocks.
    #[arg(long, default_value_t = zcrx_ring::DEFAULT_BLOCK_COUNT)]
    block_count: usize,
    /// Ring block retire timeout, ms.
    #[arg(long, default_value_t = zcrx_ring::DEFAULT_BLOCK_TIMEOUT.as_millis() as u64)]
    block_timeout: u64,
    /// Send each flow from its own source address (198.19.0.0/16) as well as its own port.
    #[arg(long)]
    distinct_sources: bool,
}

/// How each capacity search runs.
#[derive(clap::Args, Debug, Clone, Copy)]
struct SearchArgs {
    /// Seconds of traffic per trial.
    #[arg(long, default_value_t = 0.5)]
    seconds: f64,
    /// Searches per mode, size and flow count (interleaved), for the spread.
    #[arg(long, default_value_t = 3)]
    searches: usize,
    /// Steps of each search after its first trial at the generator's top rate (each halves
    /// the interval's ratio: 7 steps find a rate within 5% between 0.02 and 6 Mpps).
    #[arg(long, default_value_t = 7)]
    steps: usize,
    /// Hold /dev/cpu_dma_latency at this many µs during the searches (0: idle CPUs poll
    /// instead of halting, as tuned's latency profiles set).
    #[arg(long, value_name = "US")]
    cpu_dma_latency: Option<u32>,
}

/// Where the sniffers come from and write to.
#[derive(clap::Args, Debug, Clone)]
struct SnifferArgs {
    /// The zcap binary (default: next to rxbench).
    #[arg(long)]
    zcap: Option<PathBuf>,
    /// The file the sniffers' `-w FILE` runs write (removed after each trial).
    #[arg(
        long,
        value_name = "FILE",
        default_value = "/var/tmp/zcrx-saturation.pcap"
    )]
    write_to: PathBuf,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Copy routines x sizes x hot/cold destination: GB/s, crossover, NT threshold.
    Copy {
        /// Rounds: the routines take turns at every size and destination, each point is the
        /// median of its rounds.
        #[arg(long, default_value_t = 1)]
        rounds: usize,
        /// Copy sizes (default: 64 B to 32 MiB, `zcrx_capture::copy::BENCH_SIZES`).
        #[arg(long, value_delimiter = ',')]
        sizes: Option<Vec<usize>>,
    },
    /// memcmp variants by size: byte loop, word-at-a-time, AVX2, libc.
    Memcmp,
    /// The flow table (one `track` call a packet; `track_batch` on huge pages) against
    /// hashbrown+foldhash doing the same accounting (and, to show that work's cost, one doing
    /// only counts), extract + track, taking turns slice by slice each round: M packets/s
    /// and each one's rate over hashbrown's, paired by round.
    Table {
        /// Rounds per process; each figure is the median over all processes' rounds.
        #[arg(long, default_value_t = 7)]
        rounds: usize,
        /// Processes, one after another, each with its own memory layout (address-space
        /// randomisation places the stream, the tables and the stack anew, and one layout
        /// can run a contender 1.5-2x slower than another for as long as the process lives:
        /// one process is one draw of that).
        #[arg(long, default_value_t = 5)]
        processes: usize,
        /// Print the figures as JSON to stdout and nothing else (how a process of
        /// `--processes` reports to the first).
        #[arg(long, hide = true)]
        emit_points: bool,
        /// Flow counts.
        #[arg(long, value_delimiter = ',', default_values_t = [256u32, 65_536, 1 << 20])]
        flows: Vec<u32>,
        /// The seed of every contender's hash (the tables' and hashbrown's foldhash).
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Flows every contender is sized for (the tables' capacity, hashbrown's
        /// `with_capacity`); default twice the flow count. A pipeline's table is sized for
        /// the most flows it may meet (65 536 by default), far above what a quiet link has.
        #[arg(long)]
        capacity: Option<usize>,
    },
    /// What each generator offers: the TX ring and the in-kernel xdp-live generator
    /// (BPF_PROG_TEST_RUN with live frames), each from CPU 0, frames to a foreign MAC, the
    /// receiving veth's NAPI thread on the last CPU: Mpps, CPU per frame, the ratio, and which
    /// CPU ran what.
    Generators {
        /// Frame sizes.
        #[arg(long, value_delimiter = ',', default_values_t = [64usize, 512, 1400])]
        sizes: Vec<usize>,
        /// Flows (one frame each, sent in turn).
        #[arg(long, default_value_t = 256)]
        flows: usize,
        /// Frames the TX ring sends per size and run.
        #[arg(long, default_value_t = 2_000_000)]
        packets: u64,
        /// Seconds xdp-live sends per size and run.
        #[arg(long, default_value_t = 1.0)]
        seconds: f64,
        /// Pace xdp-live at this many million frames per second (default: as fast as it goes).
        #[arg(long)]
        rate: Option<f64>,
        /// Interleaved runs of both generators.
        #[arg(long, default_value_t = 3)]
        runs: usize,
    },
    /// Zero-loss throughput of each receive mode (RFC 2544 §26.1), and at 0.1% loss: a binary
    /// search on the rate the in-kernel xdp-live generator offers (CPU 0), the receiving
    /// veth's NAPI thread and the receivers on the last CPU; baseline-tx (nothing receives,
    /// passing while the receiving veth drops nothing) is the ceiling.
    Capacity {
        #[command(flatten)]
        search: SearchArgs,
        /// Modes (default: baseline-tx, the sockets with recvmsg and recvmmsg, io_uring,
        /// AF_XDP, pnet, the ring zero-copy and with its automatic copy; "" for none, with
        /// --sniffers).
        #[arg(long, value_delimiter = ',')]
        modes: Vec<String>,
        /// Frame sizes.
        #[arg(long, value_delimiter = ',', default_values_t = [64usize, 512, 1400])]
        sizes: Vec<usize>,
        /// Flow counts (a socket per flow for the socket modes; a lab for each count).
        #[arg(long, value_delimiter = ',', default_values_t = [256usize])]
        flows: Vec<usize>,
        /// Losses to search for, percent of the frames sent.
        #[arg(long, value_delimiter = ',', default_values_t = [0.0f64, 0.1])]
        losses: Vec<f64>,
        /// Also search for the sniffers: zcap and tcpdump (same ring memory), each writing to
        /// /dev/null and to --write-to.
        #[arg(long)]
        sniffers: bool,
        /// Also search for zcap writing compressed files (needs zstd): --write-to plain, as
        /// .zst (zstd level 1) and .lz4, and through a pipe into `zstd -1`; with each file's
        /// compression ratio.
        #[arg(long)]
        compressed: bool,
        #[command(flatten)]
        sniffer: SnifferArgs,
    },
    /// The saturation study (`scripts/demo.sh saturation`): the generators compared; the
    /// capacity of every mode at 64, 512 and 1400 B with 256 flows (0 and 0.1% loss); the
    /// zero-loss rate of the sweep's modes at 1 to 4096 flows (64 B); zcap and tcpdump at
    /// 64 B. Interleaved searches throughout, /dev/cpu_dma_latency held at 0 unless
    /// --cpu-dma-latency says otherwise; write it with --json, --markdown, --svg.
    Saturation {
        #[command(flatten)]
        search: SearchArgs,
        #[command(flatten)]
        sniffer: SnifferArgs,
    },
    /// Moving pages by mremap and by mmap+munmap (TLB shootdown) versus memcpy.
    Remap {
        /// Largest page count (powers of two from 1).
        #[arg(long, default_value_t = 16_384)]
        max_pages: usize,
    },
    /// Drain a pre-filled (synthetic) ring, zero-copy versus copy: user-side ns/packet.
    Drain {
        /// Frame sizes (up to 65535: GRO-sized frames).
        #[arg(long, value_delimiter = ',', default_value = "64,512,1500,65535")]
        sizes: Vec<usize>,
        /// Packets per measurement (frames above 1500 B: as many bytes as this many
        /// 1500-byte frames).
        #[arg(long, default_value_t = 2_000_000)]
        packets: u64,
        /// Rounds: every delivery mode runs once per round, in turn; figures are medians.
        #[arg(long, default_value_t = 5)]
        rounds: usize,
    },
    /// CPU per packet of `zcap -w /dev/null`, `zcap --flows` (alone and with `-w /dev/null`) and `tcpdump -w /dev/null` on the
    /// same traffic, in the same run.
    Sniff {
        /// Frame sizes.
        #[arg(long, value_delimiter = ',', default_value = "64,1400")]
        sizes: Vec<usize>,
        /// Frames per sniffer and size.
        #[arg(long, default_value_t = 1_000_000)]
        packets: u64,
        /// UDP flows.
        #[arg(long, default_value_t = 256)]
        flows: usize,
        /// The zcap binary (default: next to rxbench).
        #[arg(long)]
        zcap: Option<PathBuf>,
        /// Runs per sniffer (interleaved); the table shows medians, the JSON every run.
        #[arg(long, default_value_t = 5)]
        repeat: usize,
        /// Latency instead of CPU: each sniffer writes pcap to a pipe (-U -w -) while paced
        /// traffic flows at each of --rates; kernel receive timestamp to the record read.
        #[arg(long)]
        latency: bool,
        /// With --latency: offered rates, packets per second.
        #[arg(long, value_delimiter = ',', default_value = "1000,100000")]
        rates: Vec<u64>,
        /// With --latency: also run every sniffer and rate (interleaved) while holding
        /// /dev/cpu_dma_latency at this many µs, which keeps idle CPUs out of deep idle states
        /// (as tuned's latency-performance profile does); 0 = poll instead of halting.
        #[arg(long, value_name = "US")]
        cpu_dma_latency: Option<u32>,
        /// Where zcap and tcpdump write their pcap: /dev/null measures the sniffer alone; a
        /// file (on tmpfs, e.g. /dev/shm/sniff.pcap) adds the kernel's copy into the page
        /// cache to each sniffer's CPU. The file is removed after each run.
        #[arg(long, value_name = "FILE", default_value = "/dev/null")]
        write_to: PathBuf,
    },
    /// Instructions per packet under callgrind (needs valgrind): extraction, the flow table
    /// against hashbrown+foldhash, the pipeline stage. Deterministic, unlike wall time.
    Instructions {
        /// Workloads (default: all): extract, extract-ipv6-ext, flowtable-256, hashbrown-256,
        /// hashbrown-counts-256, flowtable-65536, hashbrown-65536, stage, stage-threaded,
        /// stage-steering-off, zcap-writer.
        #[arg(long, value_delimiter = ',')]
        workloads: Vec<String>,
    },
    /// (Internal) one workload, run by `instructions` under callgrind.
    #[command(hide = true)]
    Workload {
        /// Workload name.
        name: String,
        /// Packets.
        packets: u64,
    },
    /// Every receive mode over a range of flow counts (one socket per flow in the socket
    /// modes), each flow from its own source address: CPU per packet, rate, drops, p99.
    Sweep {
        /// Flow counts, comma separated.
        #[arg(long, value_delimiter = ',', default_values_t = sweep::DEFAULT_FLOWS)]
        flow_counts: Vec<usize>,
        /// Modes (default: baseline-tx, the socket modes, af-xdp, pnet-datalink,
        /// ring-zerocopy, ring-copy-auto).
        #[arg(long, value_delimiter = ',')]
        modes: Vec<String>,
        /// Frame size in bytes.
        #[arg(long, default_value_t = 64)]
        size: usize,
        /// Frames per mode and flow count.
        #[arg(long, default_value_t = 300_000)]
        packets: u64,
        /// Runs of every mode at every flow count, interleaved; the table shows the median run,
        /// the JSON every run.
        #[arg(long, default_value_t = 3)]
        repeat: usize,
    },
    /// Create (`up`) or delete (`down`) a persistent lab `zcrxbencha`/`zcrxbenchb`.
    Lab {
        /// up or down.
        action: String,
    },
}

fn main() {
    if let Err(e) = real_main() {
        eprintln!("rxbench: {e:#}");
        std::process::exit(1);
    }
}

/// `f` run on the last CPU (when the affinity can be set; else where it is), the old
/// affinity restored after it.
fn on_last_cpu<T>(f: impl FnOnce() -> T) -> Result<T> {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let pinned = sys::pin_to_cpu(cpus - 1).ok();
    let out = f();
    if let Some(old) = pinned {
        sys::set_affinity(&old)?;
    }
    Ok(out)
}

/// `rxbench table`'s checks, then its figures: from `processes` processes (each pins itself)
/// or from this one, on one CPU throughout, as for `copy` (a migration would hand one
/// contender cold caches).
fn table_command(
    rounds: usize,
    processes: usize,
    flows: &[u32],
    seed: u64,
    capacity: Option<usize>,
) -> Result<Vec<table::TablePoint>> {
    if !(1..=100).contains(&processes) {
        bail!("table: --processes must be within 1..=100");
    }
    if !(1..=1000).contains(&rounds) {
        bail!("table: --rounds must be within 1..=1000");
    }
    if capacity.is_some_and(|c| !(1..=(1 << 26)).contains(&c)) {
        bail!("table: --capacity must be within 1..=67108864");
    }
    if flows.is_empty() || flows.iter().any(|f| !(1..=(1 << 22)).contains(f)) {
        bail!("table: --flows must be within 1..=4194304");
    }
    if processes > 1 {
        table::in_processes(processes, flows, rounds, seed, capacity)
    } else {
        on_last_cpu(|| table::table(flows, rounds, seed, capacity))?
    }
}

fn real_main() -> Result<()> {
    let mut cli = Cli::parse();
    if let Some(Cmd::Workload { name, packets }) = &cli.cmd {
        return instructions::run_workload(name, *packets);
    }
    let machine = Machine::read();
    let mut report = Report::new(machine.clone());
    let header = format!("rxbench on {}\n", machine.line());
    eprint!("{header}");
    match cli.cmd.take() {
        Some(Cmd::Lab { action }) => return lab(&action),
        Some(Cmd::Workload { .. }) => unreachable!("handled above"),
        Some(Cmd::Instructions { workloads }) => {
            report.instructions = Some(instructions::measure(&workloads)?)
        }
        Some(Cmd::Copy { rounds, sizes }) => report.copy = Some(copy_command(rounds, sizes)?),
        Some(Cmd::Generators {
            sizes,
            flows,
            packets,
            seconds,
            rate,
            runs,
        }) => {
            report.generators = Some(generators_command(
                &sizes, flows, packets, seconds, rate, runs,
            )?)
        }
        Some(Cmd::Capacity {
            search,
            modes,
            sizes,
            flows,
            losses,
            sniffers,
            compressed,
            sniffer,
        }) => {
            let modes = match modes.as_slice() {
                [] => sweep::default_modes(),
                [none] if none.is_empty() => Vec::new(),
                named => parse_modes(named)?,
            };
            let mut sniffers = if sniffers {
                capacity_sniffers(&sniffer)?
            } else {
                Vec::new()
            };
            if compressed {
                sniffers.extend(compressed_sniffers(&sniffer)?);
            }
            let config = capacity_config(search, modes, sniffers, sizes, flows, &losses)?;
            let points = report.capacity.insert(Vec::new());
            if let Err(e) = capacity::run(&config, points) {
                // What was measured before the failure is written first.
                report.compute_ratios();
                write_report(&cli, &report, &header)?;
                return Err(e);
            }
        }
        Some(Cmd::Saturation { search, sniffer }) => {
            // A phase that fails ends the study, but what it measured is written first.
            if let Err(e) = saturation(search, &sniffer, &mut report) {
                report.compute_ratios();
                write_report(&cli, &report, &header)?;
                return Err(e);
            }
        }
        Some(Cmd::Table {
            rounds,
            processes,
            emit_points,
            flows,
            seed,
            capacity,
        }) => {
            let points = table_command(rounds, processes, &flows, seed, capacity)?;
            if emit_points {
                println!("{}", serde_json::to_string(&points)?);
                return Ok(());
            }
            report.table = Some(points);
        }
        Some(Cmd::Memcmp) => {
            report.memcmp = Some(micro::memcmp(&[16, 64, 256, 1500, 4096, 64 << 10, 1 << 20]))
        }
        Some(Cmd::Remap { max_pages }) => {
            if max_pages == 0 || max_pages > 1 << 20 {
                bail!("--max-pages {max_pages}: must be 1..=1048576");
            }
            report.remap = Some(micro::remap(max_pages)?);
        }
        Some(Cmd::Drain {
            sizes,
            packets,
            rounds,
        }) => report.drain = Some(drain_command(&sizes, packets, rounds)?),
        Some(cmd @ Cmd::Sniff { .. }) => sniff_cmd(cmd, &mut report)?,
        Some(cmd @ Cmd::Sweep { .. }) => sweep_cmd(cmd, &mut report)?,
        None => main_run(&cli.run, &mut report)?,
    }
    report.compute_ratios();
    write_report(&cli, &report, &header)
}

/// The report as text on standard output, and as JSON, markdown and SVG plots where asked.
fn write_report(cli: &Cli, report: &Report, header: &str) -> Result<()> {
    print!("{}", report.text(header));
    if let Some(path) = &cli.json {
        let json = serde_json::to_string_pretty(report)?;
        std::fs::write(path, json).with_context(|| format!("writing {}", path.display()))?;
    }
    if let Some(path) = &cli.markdown {
        std::fs::write(path, report.markdown())
            .with_context(|| format!("writing {}", path.display()))?;
    }
    if let Some(dir) = &cli.svg {
        let files = plot::write_all(report, dir)?;
        eprintln!("plots: {}", files.join(", "));
    }
    Ok(())
}

/// `rxbench copy`: every routine at every size, on one CPU for the whole sweep (a migration
/// mid-measurement would cost one routine a cold L1/L2 that the others did not pay).
fn copy_command(rounds: usize, sizes: Option<Vec<usize>>) -> Result<micro::CopyReport> {
    if !(1..=1000).contains(&rounds) {
        bail!("copy: --rounds must be within 1..=1000");
    }
    let sizes = sizes.unwrap_or_else(|| zcrx_capture::copy::BENCH_SIZES.to_vec());
    if sizes.is_empty() || sizes.iter().any(|s| !(1..=(256 << 20)).contains(s)) {
        bail!("copy: --sizes must be within 1..=268435456 bytes");
    }
    // With rounds, a smaller budget per measurement: the routines alternate faster than the
    // machine's load.
    let budget = if rounds > 1 { 16 << 20 } else { 64 << 20 };
    on_last_cpu(|| micro::copy(&sizes, budget, rounds))
}

/// `rxbench generators`: the checks, then [`generator::compare`].
fn generators_command(
    sizes: &[usize],
    flows: usize,
    packets: u64,
    seconds: f64,
    rate: Option<f64>,
    runs: usize,
) -> Result<Vec<generator::GeneratorPoint>> {
    if sizes.is_empty() || sizes.iter().any(|s| !(60..=1514).contains(s)) {
        bail!("generators: --sizes must be within 60..=1514");
    }
    if !(1..=4096).contains(&flows) || packets == 0 || !(1..=100).contains(&runs) {
        bail!("generators: --flows 1..=4096, --packets > 0, --runs 1..=100");
    }
    if !(0.01..=600.0).contains(&seconds) {
        bail!("generators: --seconds {seconds}: must be 0.01..=600");
    }
    if rate.is_some_and(|r| !(0.001..=100.0).contains(&r)) {
        bail!("generators: --rate is in million frames per second: 0.001..=100");
    }
    if !zcrx_ring::has_cap_net_raw() {
        bail!("generators needs root (network namespaces, AF_PACKET, bpf)");
    }
    generator::compare(
        sizes,
        flows,
        packets,
        std::time::Duration::from_secs_f64(seconds),
        rate.map(|r| r * 1e6),
        runs,
    )
}

/// `rxbench capacity`'s checks: the search's settings.
fn capacity_config(
    search: SearchArgs,
    modes: Vec<Mode>,
    sniffers: Vec<SnifferSpec>,
    sizes: Vec<usize>,
    flows: Vec<usize>,
    losses_percent: &[f64],
) -> Result<capacity::CapacityConfig> {
    let SearchArgs {
        seconds,
        searches,
        steps,
        cpu_dma_latency,
    } = search;
    if sizes.is_empty() || sizes.iter().any(|s| !(60..=1514).contains(s)) {
        bail!("capacity: --sizes must be within 60..=1514");
    }
    if flows.is_empty() || flows.iter().any(|f| !(1..=4096).contains(f)) {
        bail!("capacity: --flows must be within 1..=4096");
    }
    if !(1..=100).contains(&searches) || !(1..=30).contains(&steps) {
        bail!("capacity: --searches 1..=100, --steps 1..=30");
    }
    if !(0.05..=60.0).contains(&seconds) {
        bail!("capacity: --seconds {seconds}: must be 0.05..=60");
    }
    if losses_percent.is_empty() || losses_percent.iter().any(|l| !(0.0..=50.0).contains(l)) {
        bail!("capacity: --losses are percentages within 0..=50");
    }
    if !zcrx_ring::has_cap_net_raw() {
        bail!("capacity needs root (network namespaces, AF_PACKET, bpf)");
    }
    Ok(capacity::CapacityConfig {
        modes,
        sniffers,
        sizes,
        flows,
        trial: std::time::Duration::from_secs_f64(seconds),
        window: capacity::window(std::time::Duration::from_secs_f64(seconds)),
        searches,
        steps,
        losses: losses_percent.iter().map(|l| l / 100.0).collect(),
        cpu_dma_latency,
    })
}

/// The sniffers a capacity search compares, each placed on the receiving (last) CPU: zcap
/// and tcpdump with the same ring memory, each to /dev/null and to a file.
///
/// A sniffer is judged by the counts it prints when stopped, after its ring had time to hand
/// over everything (tcpdump's libpcap retires a block after 1 s), so its ring can hide a
/// backlog: the rings are small (4 MiB, about 29 000 64-byte frames: 6% of a 0.5 s trial
/// at 1 Mpps), where a large one would let a sniffer that keeps up with half the rate pass.
/// tcpdump's `--immediate-mode` would shorten its wait, but it moves libpcap to a ring of
/// one slot per frame sized by the snapshot length: with it (and the default buffer) tcpdump
/// kept 23 of 2 000 loopback packets sent in a burst, 1 954 dropped by the kernel.
fn capacity_sniffers(args: &SnifferArgs) -> Result<Vec<SnifferSpec>> {
    let z = sniffers(args.zcap.clone())?;
    let file = write_to(args)?;
    let cpu = receiving_cpu();
    // The lab's receiving interface is always the `b` side's; its name is known once the lab
    // exists, so the commands use a placeholder the trial fills in.
    let mut out = Vec::new();
    for to in ["/dev/null", file.as_str()] {
        let zcap = [z.as_str(), "-i", IFACE, "-q", "-B", SNIFFER_RING_KIB].map(String::from);
        let tcpdump =
            ["tcpdump", "-i", IFACE, "-n", "-q", "-B", SNIFFER_RING_KIB].map(String::from);
        for (name, mut cmd) in [("zcap", zcap.to_vec()), ("tcpdump", tcpdump.to_vec())] {
            cmd.extend(["-w".to_string(), to.to_string(), "udp".to_string()]);
            out.push(SnifferSpec::new(
                format!("{name} -w {to}"),
                prefixed(&["taskset", "-c", &cpu], &cmd),
            ));
        }
    }
    Ok(out)
}

/// zcap writing compressed files, for `capacity --compressed`: plain `-w FILE` beside
/// `-w FILE.zst` (zstd level 1), `-w FILE.lz4`, and `-w FIFO` read by `zstd -1` (the pipe a
/// person would otherwise use: `zcap -w - | zstd -1 > FILE.zst`), all on the receiving CPU
/// with the same 4 MiB ring as the other sniffers; each file's size is measured (the
/// compression ratio).
fn compressed_sniffers(args: &SnifferArgs) -> Result<Vec<SnifferSpec>> {
    let z = sniffers(args.zcap.clone())?;
    let file = write_to(args)?;
    let cpu = receiving_cpu();
    let zcap = |to: &str, extra: &[&str]| {
        let mut cmd = [z.as_str(), "-i", IFACE, "-q", "-B", SNIFFER_RING_KIB]
            .map(String::from)
            .to_vec();
        cmd.extend(extra.iter().map(|s| s.to_string()));
        cmd.extend(["-w".to_string(), to.to_string(), "udp".to_string()]);
        prefixed(&["taskset", "-c", &cpu], &cmd)
    };
    let (zst, lz4) = (format!("{file}.zst"), format!("{file}.lz4"));
    let fifo = format!("{file}.fifo");
    let piped = format!("{file}.piped.zst");
    let mut through_zstd = SnifferSpec::new("zcap -w - | zstd -1", zcap(&fifo, &[]));
    through_zstd.output = Some(PathBuf::from(&piped));
    through_zstd.fifo = Some(PathBuf::from(&fifo));
    through_zstd.reader = Some(prefixed(
        &["taskset", "-c", &cpu],
        &[
            "sh".to_string(),
            "-c".to_string(),
            format!("exec zstd -1 -q -c < '{fifo}' > '{piped}'"),
        ],
    ));
    Ok(vec![
        SnifferSpec::new("zcap -w FILE", zcap(&file, &[])),
        SnifferSpec::new(
            "zcap -w FILE.zst (zstd:1)",
            zcap(&zst, &["--compress", "zstd:1"]),
        ),
        SnifferSpec::new("zcap -w FILE.lz4", zcap(&lz4, &[])),
        through_zstd,
    ])
}

/// `--write-to`, as a string for command lines.
fn write_to(args: &SnifferArgs) -> Result<String> {
    Ok(args
        .write_to
        .to_str()
        .context("--write-to: not UTF-8")?
        .to_string())
}

/// The receiving CPU (the last), as `taskset` takes it.
fn receiving_cpu() -> String {
    (std::thread::available_parallelism().map_or(1, |n| n.get()) - 1).to_string()
}

/// The sniffers' ring, KiB (see [`capacity_sniffers`]).
const SNIFFER_RING_KIB: &str = "4096";

/// Stands for the receiving interface in a sniffer's command line (see [`capacity_sniffers`]).
pub const IFACE: &str = "{iface}";

/// `rxbench saturation`: see its help.
fn saturation(search: SearchArgs, sniffer: &SnifferArgs, report: &mut Report) -> Result<()> {
    let sizes = vec![64, 512, 1400];
    // Idle CPUs poll rather than halt unless told otherwise: a halted vCPU takes long enough
    // to wake that the veth's 256-frame queue overflows at rates the receiver keeps up with.
    let search = SearchArgs {
        cpu_dma_latency: search.cpu_dma_latency.or(Some(0)),
        ..search
    };
    // Every setting checked before the first trial.
    let all = capacity_config(
        search,
        Mode::all(),
        Vec::new(),
        sizes.clone(),
        vec![256],
        &[0.0, 0.1],
    )?;
    let flows: Vec<usize> = sweep::DEFAULT_FLOWS
        .iter()
        .copied()
        .filter(|&f| f != 256)
        .collect();
    let sweep = capacity_config(
        search,
        sweep::default_modes(),
        Vec::new(),
        vec![64],
        flows,
        &[0.0],
    )?;
    let sniffers = capacity_sniffers(sniffer)?;
    let sniff = capacity_config(
        search,
        Vec::new(),
        sniffers,
        vec![64],
        vec![256],
        &[0.0, 0.1],
    )?;
    eprintln!("saturation: the generators");
    report.generators = Some(generator::compare(
        &sizes,
        256,
        2_000_000,
        std::time::Duration::from_secs(1),
        None,
        3,
    )?);
    let phases = [
        ("every mode at every size, 256 flows", &all),
        (
            "the sweep's modes over flow counts, 64 B, no loss (256 flows: above)",
            &sweep,
        ),
        ("the sniffers, 64 B, 256 flows", &sniff),
    ];
    report.capacity = Some(Vec::new());
    for (what, config) in phases {
        eprintln!("saturation: {what}");
        let points = report.capacity.get_or_insert_with(Vec::new);
        capacity::run(config, points).with_context(|| format!("saturation: {what}"))?;
    }
    Ok(())
}

/// `rxbench drain`: the user-side cost per packet of draining a pre-filled ring.
fn drain_command(sizes: &[usize], packets: u64, rounds: usize) -> Result<Vec<micro::DrainPoint>> {
    if packets == 0 || sizes.iter().any(|s| !(60..=65_535).contains(s)) {
        bail!("drain: --packets must be > 0 and --sizes within 60..=65535");
    }
    if !(1..=1000).contains(&rounds) {
        bail!("drain: --rounds must be within 1..=1000");
    }
    micro::drain(sizes, packets, rounds)
}

fn main_run(args: &RunArgs, report: &mut Report) -> Result<()> {
    let modes = if args.modes.is_empty() {
        Mode::all()
    } else {
        parse_modes(&args.modes)?
    };
    if args.consumers == 0 || args.consumers > 64 {
        bail!("--consumers {}: must be 1..=64", args.consumers);
    }
    let (sizes, packets) = if args.quick {
        (vec![64], 40_000)
    } else {
        (args.sizes.clone(), args.packets)
    };
    if packets == 0 || packets > 1_000_000_000 {
        bail!("--packets {packets}: must be 1..=1e9");
    }
    let config = RunConfig {
        flows: args.flows,
        sizes: sizes.clone(),
        modes: modes.clone(),
        consumers: args.consumers,
        packets,
        block_size: args.block_size,
        block_count: args.block_count,
        block_timeout_ms: args.block_timeout,
        distinct_sources: args.distinct_sources,
    };
    let mut bench = Bench::new(config.clone())?;
    let total = (sizes.len() * modes.len()) as u64;
    let bar = if std::io::stderr().is_terminal() {
        let b = indicatif::ProgressBar::new(total);
        b.set_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} {msg}")
                .expect("valid template"),
        );
        Some(b)
    } else {
        None
    };
    for &size in &sizes {
        for &mode in &modes {
            if let Some(b) = &bar {
                b.set_message(format!("{} {size} B", mode.name()));
            } else {
                eprintln!("running {} at {size} B", mode.name());
            }
            if let Some(r) =
                sweep::run_or_skip(&mut bench, mode, size, args.flows, &mut report.skipped)?
            {
                report.results.push(r);
            }
            if let Some(b) = &bar {
                b.inc(1);
            }
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    report.config = Some(config);
    drop(bench);
    if args.quick {
        // A short search for two modes: the machinery proven, nothing measured.
        eprintln!("capacity: a short search (sockets-recvmmsg, ring-zerocopy)");
        let search = SearchArgs {
            seconds: 0.1,
            searches: 1,
            steps: 2,
            cpu_dma_latency: None,
        };
        let modes = parse_modes(&["sockets-recvmmsg".into(), "ring-zerocopy".into()])?;
        let c = capacity_config(
            search,
            modes,
            Vec::new(),
            vec![64],
            vec![args.flows],
            &[0.0],
        )?;
        let mut points = Vec::new();
        match capacity::run(&c, &mut points) {
            Ok(()) => report.capacity = Some(points),
            // A kernel without BPF_PROG_TEST_RUN's live frames (before 5.18), or no CAP_BPF:
            // said, not fatal, except in CI (root, a kernel that has them).
            Err(e) if std::env::var("CI").map_or(true, |v| v != "true") => {
                eprintln!("capacity: skipped: {e:#}")
            }
            Err(e) => return Err(e),
        }
    }
    if !args.quick && !args.no_copy {
        eprintln!("copy sweep (for the copy plot; --no-copy skips it)");
        report.copy = Some(micro::copy(&zcrx_capture::copy::BENCH_SIZES, 16 << 20, 1));
    }
    Ok(())
}

/// `rxbench sniff`: sniffer CPU, or with `--latency` sniffer latency.
fn sniff_cmd(cmd: Cmd, report: &mut Report) -> Result<()> {
    let Cmd::Sniff {
        sizes,
        packets,
        flows,
        zcap,
        repeat,
        latency,
        rates,
        cpu_dma_latency,
        write_to,
    } = cmd
    else {
        unreachable!("called for sniff");
    };
    if repeat == 0 || repeat > 100 {
        bail!("--repeat {repeat}: must be 1..=100");
    }
    if latency {
        if rates.iter().any(|r| !(1..=1_000_000).contains(r)) {
            bail!("--rates: each must be 1..=1000000 packets per second");
        }
        report.sniff_latency = Some(sniff_latency(&rates, flows, zcap, repeat, cpu_dma_latency)?);
    } else if cpu_dma_latency.is_some() {
        bail!("--cpu-dma-latency applies to --latency runs");
    } else {
        report.sniff = Some(sniff(&sizes, packets, flows, zcap, repeat, &write_to)?);
    }
    Ok(())
}

/// `rxbench sweep`.
fn sweep_cmd(cmd: Cmd, report: &mut Report) -> Result<()> {
    let Cmd::Sweep {
        flow_counts,
        modes,
        size,
        packets,
        repeat,
    } = cmd
    else {
        unreachable!("called for sweep");
    };
    let modes = if modes.is_empty() {
        sweep::default_modes()
    } else {
        parse_modes(&modes)?
    };
    let config = sweep::SweepConfig {
        flows: flow_counts,
        modes,
        size,
        packets,
        repeat,
    };
    report.sweep = Some(sweep::run(&config, &mut report.skipped)?);
    Ok(())
}

fn parse_modes(names: &[String]) -> Result<Vec<Mode>> {
    names
        .iter()
        .map(|m| Mode::from_name(m).with_context(|| format!("unknown mode {m:?}")))
        .collect()
}

/// The zcap binary: given, or beside rxbench; and tcpdump must be installed.
fn sniffers(zcap: Option<PathBuf>) -> Result<String> {
    let zcap = match zcap {
        Some(p) => p,
        None => std::env::current_exe()?.with_file_name("zcap"),
    };
    if !zcap.exists() {
        bail!(
            "{} not found: build it (cargo build --release -p zcap) or pass --zcap",
            zcap.display()
        );
    }
    if std::process::Command::new("tcpdump")
        .arg("--version")
        .output()
        .is_err()
    {
        bail!("tcpdump is not installed (scripts/deps.sh installs it)");
    }
    Ok(zcap.display().to_string())
}

/// `cmd` run through `prefix` (a command that execs the rest, such as `taskset` or `chrt`).
fn prefixed(prefix: &[&str], cmd: &[String]) -> Vec<String> {
    prefix
        .iter()
        .map(|s| s.to_string())
        .chain(cmd.iter().cloned())
        .collect()
}

/// The sniffers `sniff --latency` compares on `iface`, each with its name: zcap's default
/// mode, a 1 ms block timeout, immediate mode (also under SCHED_FIFO), and tcpdump
/// --immediate-mode (also under `chrt -f 1`), all writing packet-buffered pcap to stdout.
fn latency_tools(zcap: &str, iface: &str) -> Vec<(&'static str, Vec<String>)> {
    let z = |extra: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = vec![
            zcap.to_string(),
            "-i".into(),
            iface.to_string(),
            "-q".into(),
        ];
        v.extend(extra.iter().map(|s| s.to_string()));
        v.extend(["-U", "-w", "-", "udp"].map(String::from));
        v
    };
    let tcpdump = [
        "tcpdump",
        "-i",
        iface,
        "-n",
        "-q",
        "--immediate-mode",
        "-U",
        // The same ring memory as zcap --immediate-mode's 64 MiB (-B is in KiB); both size
        // their V2 frames for 64 KiB packets.
        "-B",
        "65536",
        "--time-stamp-precision",
        "nano",
        "-w",
        "-",
        "udp",
    ]
    .map(String::from);
    vec![
        ("zcap (default: V3, 10 ms blocks)", z(&[])),
        ("zcap --block-timeout 1 (V3)", z(&["--block-timeout", "1"])),
        (
            "zcap --immediate-mode (V2)",
            z(&["--immediate-mode", "--handler-latency"]),
        ),
        ("tcpdump --immediate-mode -B 65536", tcpdump.to_vec()),
        (
            "zcap --immediate-mode --rt-priority 1",
            z(&[
                "--immediate-mode",
                "--handler-latency",
                "--rt-priority",
                "1",
            ]),
        ),
        // The same real-time class for tcpdump as zcap's --rt-priority 1 (chrt execs it:
        // the pid, and so the CPU time measured, is tcpdump's).
        (
            "chrt -f 1 tcpdump --immediate-mode -B 65536",
            prefixed(&["chrt", "-f", "1"], &tcpdump),
        ),
    ]
}

/// `sniff --latency`: the sniffers of [`latency_tools`], each writing packet-buffered pcap
/// to a pipe, in fixed places on the CPUs, at each rate, `repeat` interleaved runs.
fn sniff_latency(
    rates: &[u64],
    flows: usize,
    zcap: Option<PathBuf>,
    repeat: usize,
    dma_cap: Option<u32>,
) -> Result<Vec<run::SniffLatency>> {
    let z = sniffers(zcap)?;
    let mut bench = Bench::new(RunConfig::new(flows, vec![64], vec![Mode::BaselineTx], 1))?;
    let iface = bench.rx_iface().to_string();
    let tools = latency_tools(&z, &iface);
    // Fixed places, the same for every sniffer: the generator (this thread, whose sends run
    // the receive softirq) on the last CPU, the sniffer and its pipe's reader on CPU 0, so
    // that every wake-up crosses CPUs as it does for a sniffer beside a NIC's interrupt CPU.
    // Left to the scheduler, where a sniffer happened to start decided its p50 by 2-5x.
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (tools, restore) = if cpus >= 2 {
        let pinned: Vec<(&str, Vec<String>)> = tools
            .into_iter()
            .map(|(name, cmd)| (name, prefixed(&["taskset", "-c", "0"], &cmd)))
            .collect();
        (pinned, Some(sys::pin_to_cpu(cpus - 1)?))
    } else {
        (tools, None)
    };
    // The pipe's reader beside the sniffer, as a `zcap -w - | consumer` would run.
    let reader_cpu = restore.map(|_| 0);
    let out = latency_runs(&mut bench, &tools, rates, repeat, dma_cap, reader_cpu);
    if let Some(old) = restore {
        sys::set_affinity(&old)?;
    }
    out
}

/// `repeat` interleaved runs of every tool at every rate, with and without `dma_cap`.
fn latency_runs(
    bench: &mut Bench,
    tools: &[(&str, Vec<String>)],
    rates: &[u64],
    repeat: usize,
    dma_cap: Option<u32>,
    reader_cpu: Option<usize>,
) -> Result<Vec<run::SniffLatency>> {
    let mut out = Vec::new();
    for &rate in rates {
        // About 3 000 samples at low rates, 2 s of traffic at high ones.
        let seconds = (3000.0 / rate as f64).clamp(2.0, 5.0);
        for run in 0..repeat {
            for cap in std::iter::once(None).chain(dma_cap.map(Some)) {
                // Dropped (the request withdrawn) at the end of each pass.
                let _held = cap.map(sys::hold_cpu_dma_latency).transpose()?;
                for (name, cmd) in tools {
                    eprintln!(
                        "sniff --latency: {name} at {rate} pps, run {}{}",
                        run + 1,
                        cap.map_or(String::new(), |us| format!(", cpu_dma_latency {us} µs"))
                    );
                    let mut r = bench.sniff_latency(name, cmd, (rate, seconds, 64), reader_cpu)?;
                    r.cpu_dma_latency_us = cap;
                    out.push(r);
                }
            }
        }
    }
    Ok(out)
}

fn sniff(
    sizes: &[usize],
    packets: u64,
    flows: usize,
    zcap: Option<PathBuf>,
    repeat: usize,
    write_to: &std::path::Path,
) -> Result<Vec<run::SniffResult>> {
    let z = sniffers(zcap)?;
    let file = write_to
        .to_str()
        .context("--write-to: not UTF-8")?
        .to_string();
    let device = write_to.starts_with("/dev/") && !write_to.starts_with("/dev/shm");
    let config = RunConfig::new(flows, sizes.to_vec(), vec![Mode::BaselineTx], packets);
    let mut bench = Bench::new(config)?;
    let iface = bench.rx_iface().to_string();
    // Same ring size for both: zcap's default 64 MiB; tcpdump's -B is in KiB.
    let tools: Vec<(String, Vec<String>)> = vec![
        (
            format!("zcap -w {file}"),
            vec![
                z.clone(),
                "-i".into(),
                iface.clone(),
                "-q".into(),
                "-w".into(),
                file.clone(),
            ],
        ),
        (
            "zcap --flows".into(),
            vec![
                z.clone(),
                "-i".into(),
                iface.clone(),
                "-q".into(),
                "--flows".into(),
            ],
        ),
        (
            format!("zcap --flows -w {file}"),
            vec![
                z,
                "-i".into(),
                iface.clone(),
                "-q".into(),
                "--flows".into(),
                "-w".into(),
                file.clone(),
            ],
        ),
        (
            format!("tcpdump -w {file}"),
            vec![
                "tcpdump".into(),
                "-i".into(),
                iface,
                "-n".into(),
                "-q".into(),
                "-B".into(),
                "65536".into(),
                "-w".into(),
                file.clone(),
            ],
        ),
    ];
    let mut out = Vec::new();
    for &size in sizes {
        for run in 0..repeat {
            for (name, cmd) in &tools {
                eprintln!("sniff: {name} at {size} B, run {}", run + 1);
                out.push(bench.sniff(name, cmd, size)?);
                if !device {
                    let _ = std::fs::remove_file(write_to);
                }
            }
        }
    }
    Ok(out)
}

fn lab(action: &str) -> Result<()> {
    const TAG: &str = "bench";
    match action {
        "up" => {
            let lab = zcrx_ring::lab::Lab::named(TAG)
                .context("creating the lab (needs root and iproute2)")?;
            println!(
                "lab up: {} in netns {} ({}) <-> {} in netns {} ({})",
                lab.a.iface, lab.a.netns, lab.a.ip, lab.b.iface, lab.b.netns, lab.b.ip
            );
            lab.keep();
            Ok(())
        }
        "down" => {
            let lab = zcrx_ring::lab::Lab::open(TAG).context("no lab is up")?;
            drop(lab);
            println!("lab down");
            Ok(())
        }
        other => bail!("lab {other:?}: say `up` or `down`"),
    }
}
