//! rxbench: what zero-copy receive saves. An mmap'd TPACKET_V3 ring (zero-copy or copy
//! delivery) against hundreds of UDP sockets read with recvmsg/recvmmsg (copy_to_user), on
//! identical traffic over hundreds of flows in a netns lab; plus copy, memcmp, remap and
//! ring-drain micro-benchmarks.
//!
//! The modules, each importing only those listed before it:
//! - leaves: `text` (tables), `chart` (plot vocabulary), `stats`, `sys` (system calls),
//!   `machine` (/proc), `sniffers` (zcap and tcpdump command lines);
//! - measurements, each with its own text and plots: `generator`, `run` (the modes, the
//!   receivers, a trial), `micro`, `instructions`, `table`, then `sweep` and `capacity`
//!   (built on `run` and `generator`);
//! - output: `report` (the results and their text), `plot` (which plots to write);
//! - the program: `cli` (clap types), `commands` (one module per sub-command), `main`.
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]

mod capacity;
mod chart;
mod cli;
mod commands;
mod cpulink;
mod generator;
mod handshakes;
mod instructions;
mod interrupt;
mod isolate;
mod machine;
mod micro;
mod plot;
mod report;
mod run;
mod sniffers;
mod stats;
mod sweep;
mod sys;
mod table;
mod tcp_rx;
mod text;

use anyhow::{Context, Result};
use clap::Parser;

use cli::{Cli, Cmd};
use commands::{Failed, Outcome};
use machine::Machine;
use report::Report;

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
