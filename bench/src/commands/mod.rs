//! One module per sub-command (`main_run` for none): each checks its arguments, runs, and
//! puts what it measured into the [`Report`] that `main` writes.

mod capacity;
mod copy;
mod drain;
mod generators;
mod instructions;
mod lab;
mod main_run;
mod memcmp;
mod remap;
mod saturation;
mod sniff;
mod sweep;
mod table;

use anyhow::{Context, Result};

use crate::cli::{Cmd, RunArgs};
use crate::report::Report;
use crate::run::Mode;
use crate::sys;

/// What a sub-command left to write.
pub enum Outcome {
    /// Its figures are in the report.
    Measured,
    /// It printed its own output (the lab's state, a child process's figures): nothing to
    /// write.
    Printed,
}

/// A sub-command's failure.
pub struct Failed {
    /// The error, with its context.
    pub error: anyhow::Error,
    /// Whether the report holds what was measured before the failure, to be written first.
    pub measured: bool,
}

impl Failed {
    /// A failure after figures went into the report.
    fn after_measuring(error: anyhow::Error) -> Failed {
        Failed {
            error,
            measured: true,
        }
    }
}

impl From<anyhow::Error> for Failed {
    fn from(error: anyhow::Error) -> Failed {
        Failed {
            error,
            measured: false,
        }
    }
}

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
        Some(Cmd::Instructions(a)) => instructions::run(a, report)?,
        Some(Cmd::Workload(_)) => unreachable!("main runs the workload before any report"),
        Some(Cmd::Sweep(a)) => sweep::run(a, report)?,
        Some(Cmd::Lab(a)) => lab::run(a)?,
    };
    Ok(measured)
}

/// Modes by name.
fn parse_modes(names: &[String]) -> Result<Vec<Mode>> {
    names
        .iter()
        .map(|m| Mode::from_name(m).with_context(|| format!("unknown mode {m:?}")))
        .collect()
}

/// `f` run on the last CPU (when the affinity can be set; else where it is), the old
/// affinity restored after it.
fn on_last_cpu<T>(f: impl FnOnce() -> T) -> Result<T> {
    let pinned = sys::pin_to_cpu(last_cpu()).ok();
    let out = f();
    if let Some(old) = pinned {
        sys::set_affinity(&old)?;
    }
    Ok(out)
}

/// The last CPU: where the receivers run, apart from the generator on CPU 0.
fn last_cpu() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get()) - 1
}
