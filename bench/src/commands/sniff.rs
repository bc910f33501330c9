//! `rxbench sniff`: the CPU per packet of zcap and tcpdump on the same traffic, with
//! `--latency` their latency through a pipe, or with `--print` their CPU and drops while
//! printing tcpdump's lines.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use super::Outcome;
use crate::cli::{SniffArgs, Traffic};
use crate::lab::sniffers::{pinned, prefixed, zcap_binary, SnifferCmd};
use crate::measure::run::{Bench, Mode, RunConfig, SniffLatency, SniffPrint, SniffResult};
use crate::report::Report;
use crate::sys;

/// The ring memory of `sniff`'s sniffers, KiB: zcap's default 64 MiB for both (tcpdump's
/// `-B`), and zcap --immediate-mode's; both size their V2 frames for 64 KiB packets.
const RING_KIB: u32 = 65536;

/// The CPU runs, the latency runs (`--cpu-dma-latency` only with these) or the printing
/// runs.
pub fn run(args: SniffArgs, report: &mut Report) -> Result<Outcome> {
    if args.print {
        if args.latency || args.cpu_dma_latency.is_some() {
            bail!("--print and --latency are different runs: one at a time");
        }
        if args.sandbox_cost
            || args.names_cost
            || args.kafka_cost.is_some()
            || args.traffic != Traffic::Udp
        {
            bail!("--sandbox-cost, --names-cost, --kafka-cost and --traffic apply to the CPU runs, not --print");
        }
        report.sniff_print = Some(sniff_print(
            &args.rates,
            args.flows,
            args.zcap,
            args.repeat,
            (args.tz, args.ring_kib),
        )?);
        return Ok(Outcome::Measured);
    }
    let SniffArgs {
        sizes,
        packets,
        flows,
        zcap,
        repeat,
        latency,
        rates,
        cpu_dma_latency,
        write_to,
        sandbox_cost,
        names_cost,
        kafka_cost,
        traffic,
        print: _,
        tz,
        ring_kib,
    } = args;
    if tz.is_some() || ring_kib != RING_KIB {
        bail!("--tz and --ring-kib apply to --print");
    }
    if latency && (sandbox_cost || names_cost || kafka_cost.is_some() || traffic != Traffic::Udp) {
        bail!("--sandbox-cost, --names-cost, --kafka-cost and --traffic apply to the CPU runs, not --latency");
    }
    if latency {
        report.sniff_latency = Some(sniff_latency(&rates, flows, zcap, repeat, cpu_dma_latency)?);
    } else if cpu_dma_latency.is_some() {
        bail!("--cpu-dma-latency applies to --latency runs");
    } else {
        let costs = Costs {
            sandbox: sandbox_cost,
            names: names_cost,
            kafka: kafka_cost,
        };
        report.sniff = Some(sniff(
            &sizes, packets, flows, zcap, repeat, &write_to, costs, traffic,
        )?);
    }
    Ok(Outcome::Measured)
}

/// The sniffers `sniff --latency` compares on `iface`, each with its name: zcap's default
/// mode, a 1 ms block timeout, immediate mode (also under SCHED_FIFO), and tcpdump
/// --immediate-mode (also under `chrt -f 1`), all writing packet-buffered pcap to stdout.
fn latency_tools(zcap: &str, iface: &str) -> Vec<(&'static str, Vec<String>)> {
    let z = |flags: &[&str]| -> Vec<String> {
        let flags: Vec<&str> = flags.iter().copied().chain(["-U"]).collect();
        SnifferCmd::zcap(zcap, iface)
            .flags(&flags)
            .write("-")
            .udp()
            .build()
    };
    let tcpdump = SnifferCmd::tcpdump(iface)
        .ring_kib(RING_KIB)
        .flags(&["--immediate-mode", "-U", "--time-stamp-precision", "nano"])
        .write("-")
        .udp()
        .build();
    vec![
        ("zcap (default: V3, 10 ms blocks)", z(&[])),
        ("zcap --block-timeout 1 (V3)", z(&["--block-timeout", "1"])),
        (
            "zcap --immediate-mode (V2)",
            z(&["--immediate-mode", "--handler-latency"]),
        ),
        ("tcpdump --immediate-mode -B 65536", tcpdump.clone()),
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
) -> Result<Vec<SniffLatency>> {
    let z = zcap_binary(zcap)?;
    let mut bench = Bench::new(RunConfig::new(flows, vec![64], vec![Mode::BaselineTx], 1))?;
    let iface = bench.rx_iface().to_string();
    let tools = latency_tools(&z, &iface);
    // Fixed places, the same for every sniffer: the generator (this thread, whose sends run
    // the receive softirq) on the last CPU, the sniffer and its pipe's reader on CPU 0, so
    // that every wake-up crosses CPUs as it does for a sniffer beside a NIC's interrupt CPU.
    // Left to the scheduler, where a sniffer happened to start would decide its p50.
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (tools, restore) = if cpus >= 2 {
        let pinned: Vec<(&str, Vec<String>)> = tools
            .into_iter()
            .map(|(name, cmd)| (name, pinned(0, &cmd)))
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
) -> Result<Vec<SniffLatency>> {
    let mut out = Vec::new();
    for &rate in rates {
        // Thousands of samples at low rates, seconds of traffic at high ones.
        let seconds = (3000.0 / rate as f64).clamp(2.0, 5.0);
        for run in 0..repeat {
            for cap in std::iter::once(None).chain(dma_cap.map(Some)) {
                // Dropped (the request withdrawn) at the end of each pass.
                let _held = cap
                    .map(crate::lab::isolate::hold_cpu_dma_latency)
                    .transpose()?;
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

/// `sniff --print`: `zcap -i IF -n -B KIB` and `tcpdump -i IF -n -B KIB` (the same ring
/// memory) printing their lines to /dev/null on CPU 0, the mixed traffic paced from the last
/// CPU, at each rate, `repeat` runs, the two in an order that changes from run to run; TZ set
/// to `tz` in their environment if given.
fn sniff_print(
    rates: &[u64],
    flows: usize,
    zcap: Option<PathBuf>,
    repeat: usize,
    (tz, kib): (Option<String>, u32),
) -> Result<Vec<SniffPrint>> {
    let z = zcap_binary(zcap)?;
    let mut bench = Bench::new(RunConfig::new(flows, vec![64], vec![Mode::BaselineTx], 1))?;
    let iface = bench.rx_iface().to_string();
    let name = |tool: &str| format!("{tool} -n -B {kib}");
    let tools = [
        (
            name("zcap"),
            SnifferCmd::zcap(&z, &iface)
                .ring_kib(kib)
                .printing()
                .build(),
        ),
        (
            name("tcpdump"),
            SnifferCmd::tcpdump(&iface).ring_kib(kib).printing().build(),
        ),
    ];
    // The same places for both: the generator (whose sends run the receive softirq) on the
    // last CPU, the sniffer on CPU 0.
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (tools, restore) = if cpus >= 2 {
        let pinned: Vec<(String, Vec<String>)> =
            tools.into_iter().map(|(n, c)| (n, pinned(0, &c))).collect();
        (pinned, Some(sys::pin_to_cpu(cpus - 1)?))
    } else {
        (tools.to_vec(), None)
    };
    // env(1) execs the sniffer: the pid, and so the CPU measured, is the sniffer's.
    let tools: Vec<(String, Vec<String>)> = match &tz {
        Some(tz) => {
            let set = format!("TZ={tz}");
            tools
                .into_iter()
                .map(|(n, c)| (n, prefixed(&["env", &set], &c)))
                .collect()
        }
        None => tools,
    };
    let frames = crate::lab::mixed::frames(flows);
    let mut out = Vec::new();
    let result = (|| {
        for &rate in rates {
            let seconds = (200_000.0 / rate as f64).clamp(2.0, 5.0);
            for run in 0..repeat {
                for i in crate::report::stats::shuffled(tools.len(), run) {
                    let (name, cmd) = &tools[i];
                    eprintln!("sniff --print: {name} at {rate} pps, run {}", run + 1);
                    let mut r = bench.sniff_print(name, cmd, &frames, (rate, seconds))?;
                    r.tz = tz.clone();
                    out.push(r);
                }
            }
        }
        Ok::<(), anyhow::Error>(())
    })();
    if let Some(old) = restore {
        sys::set_affinity(&old)?;
    }
    result.map(|()| out)
}

/// The sniffers `sniff` compares on `iface`, each with its name, writing to `file`: zcap
/// writing it (and, for `--sandbox-cost`, zcap writing it with `--no-sandbox`), zcap's flow
/// table alone and while writing it, and tcpdump writing it.
fn cpu_tools(
    zcap: &str,
    iface: &str,
    file: &str,
    costs: &Costs,
    kafka: Option<&str>,
) -> Vec<(String, Vec<String>)> {
    let mut tools = vec![
        (
            format!("zcap -w {file}"),
            SnifferCmd::zcap(zcap, iface).write(file).build(),
        ),
        (
            "zcap --flows".into(),
            SnifferCmd::zcap(zcap, iface).flags(&["--flows"]).build(),
        ),
        (
            format!("zcap --flows -w {file}"),
            SnifferCmd::zcap(zcap, iface)
                .flags(&["--flows"])
                .write(file)
                .build(),
        ),
        (
            format!("tcpdump -w {file}"),
            SnifferCmd::tcpdump(iface)
                .ring_kib(RING_KIB)
                .write(file)
                .build(),
        ),
    ];
    if costs.names {
        tools.insert(
            2,
            (
                "zcap --flows --names".into(),
                SnifferCmd::zcap(zcap, iface)
                    .flags(&["--flows", "--names"])
                    .build(),
            ),
        );
        tools.insert(
            4,
            (
                format!("zcap --flows --names -w {file}"),
                SnifferCmd::zcap(zcap, iface)
                    .flags(&["--flows", "--names"])
                    .write(file)
                    .build(),
            ),
        );
    }
    if let Some(brokers) = kafka {
        let reports = ["--flows", "--active-timeout", "1"];
        let with = |extra: &[&str]| {
            let flags: Vec<&str> = reports.iter().chain(extra).copied().collect();
            SnifferCmd::zcap(zcap, iface).flags(&flags).build()
        };
        tools.push(("zcap --flows --active-timeout 1".into(), with(&[])));
        tools.push((
            "zcap --flows --active-timeout 1 --kafka".into(),
            with(&["--kafka", brokers]),
        ));
        tools.push((
            "zcap --flows --active-timeout 1 --kafka --kafka-format goflow2".into(),
            with(&["--kafka", brokers, "--kafka-format", "goflow2"]),
        ));
    }
    if costs.sandbox {
        tools.insert(
            1,
            (
                format!("zcap --no-sandbox -w {file}"),
                SnifferCmd::zcap(zcap, iface)
                    .flags(&["--no-sandbox"])
                    .write(file)
                    .build(),
            ),
        );
    }
    tools
}

/// The extra sniffers `sniff` runs beside the usual ones.
#[derive(Debug, Clone)]
struct Costs {
    /// `zcap --no-sandbox -w FILE` (`--sandbox-cost`).
    sandbox: bool,
    /// `zcap --flows --names`, alone and with `-w FILE` (`--names-cost`).
    names: bool,
    /// The broker `--kafka-cost` starts, for `zcap --flows --active-timeout 1` with and
    /// without `--kafka`.
    kafka: Option<PathBuf>,
}

/// `sniff`: every sniffer of [`cpu_tools`] at every size (UDP) or on the handshakes,
/// `repeat` interleaved runs; a file written is removed after each run.
#[allow(clippy::too_many_arguments)]
fn sniff(
    sizes: &[usize],
    packets: u64,
    flows: usize,
    zcap: Option<PathBuf>,
    repeat: usize,
    write_to: &Path,
    costs: Costs,
    traffic: Traffic,
) -> Result<Vec<SniffResult>> {
    let z = zcap_binary(zcap)?;
    let file = write_to.to_str().context("--write-to: not UTF-8")?;
    let device = write_to.starts_with("/dev/") && !write_to.starts_with("/dev/shm");
    let config = RunConfig::new(flows, sizes.to_vec(), vec![Mode::BaselineTx], packets);
    let mut bench = Bench::new(config)?;
    // The broker, on the receiving namespace's loopback where the sniffers run.
    let broker = match &costs.kafka {
        Some(bin) => Some(crate::lab::broker::Broker::start(bin, bench.rx_netns())?),
        None => None,
    };
    let brokers = broker.as_ref().map(|b| b.addr());
    let tools = cpu_tools(&z, bench.rx_iface(), file, &costs, brokers.as_deref());
    // Each size's frames (UDP), or the one set of handshakes.
    let sets: Vec<(String, Vec<Vec<u8>>)> = match traffic {
        Traffic::Udp => sizes
            .iter()
            .map(|&size| (format!("{size} B"), bench.udp_frames(size)))
            .collect(),
        Traffic::TlsHandshakes => {
            vec![(
                format!("{flows} TLS connections"),
                crate::lab::handshakes::frames(flows),
            )]
        }
    };
    let mut out = Vec::new();
    for (what, frames) in &sets {
        for run in 0..repeat {
            for (name, cmd) in &tools {
                eprintln!("sniff: {name} on {what}, run {}", run + 1);
                let mut r = bench.sniff(name, cmd, frames)?;
                r.traffic = match traffic {
                    Traffic::Udp => None,
                    Traffic::TlsHandshakes => Some(what.clone()),
                };
                out.push(r);
                if !device {
                    let _ = std::fs::remove_file(write_to);
                }
            }
        }
    }
    Ok(out)
}
