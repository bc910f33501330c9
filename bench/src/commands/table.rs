//! `rxbench table`: the flow table against hashbrown, from `--processes` processes (each
//! pins itself) or from this one, on one CPU throughout, as for `copy` (a migration would
//! hand one contender cold caches).

use anyhow::Result;

use super::Outcome;
use crate::cli::TableArgs;
use crate::report::Report;
use crate::sys::on_last_cpu;

/// The figures; with `--emit-points` they are printed as JSON instead (how
/// a process of `--processes` reports to the first).
pub fn run(args: TableArgs, report: &mut Report) -> Result<Outcome> {
    let TableArgs {
        rounds,
        processes,
        emit_points,
        flows,
        seed,
        capacity,
    } = args;
    let points = if processes > 1 {
        crate::measure::table::in_processes(processes, &flows, rounds, seed, capacity)?
    } else {
        on_last_cpu(|| crate::measure::table::table(&flows, rounds, seed, capacity))??
    };
    if emit_points {
        println!("{}", serde_json::to_string(&points)?);
        return Ok(Outcome::Printed);
    }
    report.table = Some(points);
    Ok(Outcome::Measured)
}
