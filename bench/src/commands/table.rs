//! `rxbench table`: the flow table against hashbrown, from `--processes` processes (each
//! pins itself) or from this one, on one CPU throughout, as for `copy` (a migration would
//! hand one contender cold caches).

use anyhow::{bail, Result};

use super::Outcome;
use crate::cli::TableArgs;
use crate::report::Report;
use crate::sys::on_last_cpu;

/// The checks, then the figures; with `--emit-points` they are printed as JSON instead (how
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
    if !(1..=100).contains(&processes) {
        bail!("table: --processes must be within 1..=100");
    }
    if !(1..=1000).contains(&rounds) {
        bail!("table: --rounds must be within 1..=1000");
    }
    if capacity.is_some_and(|c| !(1..=(1 << 26)).contains(&c)) {
        bail!("table: --capacity must be within 1..=67108864");
    }
    if flows.is_empty() || flows.iter().any(|f| !(1..=(1 << 22)).contains(f)) {
        bail!("table: --flows must be within 1..=4194304");
    }
    let points = if processes > 1 {
        crate::table::in_processes(processes, &flows, rounds, seed, capacity)?
    } else {
        on_last_cpu(|| crate::table::table(&flows, rounds, seed, capacity))??
    };
    if emit_points {
        println!("{}", serde_json::to_string(&points)?);
        return Ok(Outcome::Printed);
    }
    report.table = Some(points);
    Ok(Outcome::Measured)
}
