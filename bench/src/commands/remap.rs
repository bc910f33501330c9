//! `rxbench remap`.

use anyhow::{bail, Result};

use super::Outcome;
use crate::cli::RemapArgs;
use crate::report::Report;

/// mremap and mmap+munmap against memcpy, up to `--max-pages`.
pub fn run(args: RemapArgs, report: &mut Report) -> Result<Outcome> {
    let max_pages = args.max_pages;
    if max_pages == 0 || max_pages > 1 << 20 {
        bail!("--max-pages {max_pages}: must be 1..=1048576");
    }
    report.remap = Some(crate::micro::remap(max_pages)?);
    Ok(Outcome::Measured)
}
