//! One module per sub-command (`main_run` for none): each checks what relates its arguments
//! or needs the run (clap has checked every range and name), runs, and puts what it measured
//! into the [`Report`] that `main` writes.

mod capacity;
mod copy;
mod drain;
mod generators;
mod instructions;
mod lab;
mod main_run;
mod memcmp;
mod outcome;
mod print_file;
mod remap;
mod saturation;
mod sniff;
mod sweep;
mod table;
mod tcp_rx;

pub use outcome::{Failed, Outcome};

use crate::cli::{Cmd, RunArgs};
use crate::report::Report;

/// Runs `cmd` (the main run with `run` if none) into `report`. The hidden `workload` is the
/// child side of `instructions` and runs before any report exists (see `main`).
pub fn run(cmd: Option<Cmd>, run: &RunArgs, report: &mut Report) -> Result<Outcome, Failed> {
    let measured = match cmd {
        None => main_run::run(run, report)?,
        Some(Cmd::Copy(a)) => copy::run(a, report)?,
        Some(Cmd::Memcmp) => memcmp::run(report),
        Some(Cmd::Table(a)) => table::run(a, report)?,
        Some(Cmd::Generators(a)) => generators::run(a, report)?,
        Some(Cmd::Capacity(a)) => return capacity::run(a, report),
        Some(Cmd::Saturation(a)) => return saturation::run(a, report),
        Some(Cmd::Remap(a)) => remap::run(a, report)?,
        Some(Cmd::Drain(a)) => drain::run(a, report)?,
        Some(Cmd::Sniff(a)) => sniff::run(a, report)?,
        Some(Cmd::PrintFile(a)) => print_file::run(a, report)?,
        Some(Cmd::Instructions(a)) => instructions::run(a, report)?,
        Some(Cmd::Workload(_)) => unreachable!("main runs the workload before any report"),
        Some(Cmd::Sweep(a)) => sweep::run(a, report)?,
        Some(Cmd::Lab(a)) => lab::run(a)?,
        Some(Cmd::TcpRx(a)) => tcp_rx::run(a, report)?,
    };
    Ok(measured)
}
