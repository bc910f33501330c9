//! `rxbench drain`: the user-side cost per packet of draining a pre-filled ring.

use anyhow::{bail, Result};

use super::Outcome;
use crate::cli::DrainArgs;
use crate::report::Report;

/// The checks, then [`crate::micro::drain`].
pub fn run(args: DrainArgs, report: &mut Report) -> Result<Outcome> {
    let DrainArgs {
        sizes,
        packets,
        rounds,
    } = args;
    if packets == 0 || sizes.iter().any(|s| !(60..=65_535).contains(s)) {
        bail!("drain: --packets must be > 0 and --sizes within 60..=65535");
    }
    if !(1..=1000).contains(&rounds) {
        bail!("drain: --rounds must be within 1..=1000");
    }
    report.drain = Some(crate::micro::drain(&sizes, packets, rounds)?);
    Ok(Outcome::Measured)
}
