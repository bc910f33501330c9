//! `rxbench copy`: every routine at every size, on one CPU for the whole sweep (a migration
//! mid-measurement would cost one routine a cold L1/L2 that the others did not pay).

use anyhow::Result;

use super::Outcome;
use crate::cli::CopyArgs;
use crate::report::Report;
use crate::sys::on_last_cpu;

/// [`crate::measure::micro::copy`] on the last CPU.
pub fn run(args: CopyArgs, report: &mut Report) -> Result<Outcome> {
    let rounds = args.rounds;
    let sizes = args
        .sizes
        .unwrap_or_else(|| zcrx_capture::copy::BENCH_SIZES.to_vec());
    // With rounds, a smaller budget per measurement: the routines alternate faster than the
    // machine's load.
    let budget = if rounds > 1 { 16 << 20 } else { 64 << 20 };
    report.copy = Some(on_last_cpu(|| {
        crate::measure::micro::copy(&sizes, budget, rounds)
    })?);
    Ok(Outcome::Measured)
}
