//! `rxbench sweep`.

use anyhow::Result;

use super::Outcome;
use crate::cli::SweepArgs;
use crate::measure::sweep::{default_modes, SweepConfig};
use crate::report::Report;

/// Every mode named (the sweep's default modes if none) at every flow count.
pub fn run(args: SweepArgs, report: &mut Report) -> Result<Outcome> {
    let modes = if args.modes.is_empty() {
        default_modes()
    } else {
        args.modes
    };
    let config = SweepConfig {
        flows: args.flow_counts,
        modes,
        size: args.size,
        packets: args.packets,
        repeat: args.repeat,
    };
    report.sweep = Some(crate::measure::sweep::run(&config, &mut report.skipped)?);
    Ok(Outcome::Measured)
}
