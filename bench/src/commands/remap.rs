//! `rxbench remap`.

use anyhow::Result;

use super::Outcome;
use crate::cli::RemapArgs;
use crate::report::Report;

/// mremap and mmap+munmap against memcpy, up to `--max-pages`.
pub fn run(args: RemapArgs, report: &mut Report) -> Result<Outcome> {
    report.remap = Some(crate::measure::micro::remap(args.max_pages)?);
    Ok(Outcome::Measured)
}
