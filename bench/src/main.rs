//! rxbench: what zero-copy receive saves. An mmap'd TPACKET_V3 ring (zero-copy or copy
//! delivery) against hundreds of UDP sockets read with recvmsg/recvmmsg (copy_to_user), on
//! identical traffic over hundreds of flows in a netns lab; plus copy, memcmp, remap and
//! ring-drain micro-benchmarks.
//!
//! The rooms, each importing only those listed before it:
//! - `sys`: the benchmark's own system calls, one file a concern;
//! - `report`'s leaves (`text`, `chart`, `stats`), then `lab`: the traffic's generators, the
//!   CPUs' placement and isolation, signals, the sniffers' command lines, the machine;
//! - `measure`: each measurement with its own text and plots (`run`, `micro`,
//!   `instructions`, `table`, then `sweep`, `capacity` and `tcp_rx`);
//! - `report`'s results and plots: what a run measured, as JSON, text and markdown;
//! - the program: `cli` (clap types), `commands` (one module per sub-command), `main`.
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]

mod cli;
mod commands;
mod lab;
mod measure;
mod report;
mod sys;

use anyhow::{Context, Result};
use clap::Parser;

use cli::{Cli, Cmd};
use commands::{Failed, Outcome};
use lab::machine::Machine;
use lab::{interrupt, isolate};
use measure::instructions;
use report::{plot, Report};

fn main() {
    if let Err(e) = real_main() {
        if let Some(sig) = interrupt::stopped() {
            // A failure after the signal (a sniffer that got the terminal's Ctrl-C, say) is
            // said, then the signal's stop.
            if e.downcast_ref::<interrupt::Interrupted>().is_none() {
                eprintln!("rxbench: after the signal: {e:#}");
            }
            eprintln!("rxbench: {}", interrupt::Interrupted);
            interrupt::die(sig);
        }
        eprintln!("rxbench: {e:#}");
        std::process::exit(1);
    }
}

/// Parses, runs the sub-command, and writes what it measured: also, where it measured
/// something before it failed, before its error is returned.
fn real_main() -> Result<()> {
    let mut cli = Cli::parse();
    if let Some(Cmd::Workload(w)) = &cli.cmd {
        // The child side of `instructions`, under callgrind: nothing else runs.
        return instructions::run_workload(&w.name, w.packets);
    }
    interrupt::install()?;
    if zcrx_ring::has_cap_net_raw() {
        isolate::undo_left_over()?;
    }
    let machine = Machine::read();
    let mut report = Report::new(machine.clone());
    let header = format!("rxbench on {}\n", machine.line());
    eprint!("{header}");
    match commands::run(cli.cmd.take(), &cli.run, &mut report) {
        Ok(Outcome::Printed) => Ok(()),
        Ok(Outcome::Measured) => write_report(&cli, &mut report, &header),
        Err(Failed { error, measured }) => {
            if measured {
                write_report(&cli, &mut report, &header)?;
            }
            Err(error)
        }
    }
}

/// The report as text on standard output, and as JSON, markdown and SVG plots where asked.
fn write_report(cli: &Cli, report: &mut Report, header: &str) -> Result<()> {
    report.compute_ratios();
    print!("{}", report.text(header, cli.run.wide));
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
