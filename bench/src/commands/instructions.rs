//! `rxbench instructions`.

use anyhow::Result;

use super::Outcome;
use crate::cli::InstructionsArgs;
use crate::report::Report;

/// Every workload named (all by default) under callgrind.
pub fn run(args: InstructionsArgs, report: &mut Report) -> Result<Outcome> {
    report.instructions = Some(crate::measure::instructions::measure(&args.workloads)?);
    Ok(Outcome::Measured)
}
