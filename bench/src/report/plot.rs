//! SVG plots of a report: each measurement draws its own (`run::plot`, `micro::plot`,
//! `sweep::plot`, `capacity::plot`); this module says which the report has data for.

use std::path::Path;

use anyhow::{Context, Result};

use crate::report::Report;

/// Writes every plot the report has data for into `dir`; returns the files written.
pub fn write_all(report: &Report, dir: &Path) -> Result<Vec<String>> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let cpu = report.machine.cpu_model.as_str();
    let mut files = Vec::new();
    if let Some(c) = &report.copy {
        files.extend(crate::measure::micro::plot::write(c, cpu, dir)?);
    }
    if !report.results.is_empty() {
        files.extend(crate::measure::run::plot::write(&report.results, cpu, dir)?);
    }
    if let Some(sweep) = report.sweep.as_ref().filter(|s| !s.is_empty()) {
        files.push(crate::measure::sweep::plot::write(sweep, cpu, dir)?);
    }
    if let Some(c) = report.capacity.as_ref().filter(|c| !c.is_empty()) {
        files.extend(crate::measure::capacity::plot::write(c, cpu, dir)?);
    }
    if let Some(t) = report.tcp_rx.as_ref().filter(|t| !t.points.is_empty()) {
        files.push(crate::measure::tcp_rx::plot::write(t, cpu, dir)?);
    }
    Ok(files)
}
