//! `rxbench drain`: the user-side cost per packet of draining a pre-filled ring.

use anyhow::Result;

use super::Outcome;
use crate::cli::DrainArgs;
use crate::report::Report;

/// [`crate::measure::micro::drain`].
pub fn run(args: DrainArgs, report: &mut Report) -> Result<Outcome> {
    let DrainArgs {
        sizes,
        packets,
        rounds,
    } = args;
    report.drain = Some(crate::measure::micro::drain(&sizes, packets, rounds)?);
    Ok(Outcome::Measured)
}
