//! The copy sweep as SVG: GB/s by size, one line per routine, per destination.

use std::path::Path;

use anyhow::Result;
use plotters::prelude::*;

use super::CopyReport;
use crate::report::chart::{err, labelled_line, legend_and_save, COLORS};
use crate::report::text::{dedup, human};

/// Writes the copy plots (hot and cold destination) into `dir`; returns the files written.
pub fn write(c: &CopyReport, cpu_model: &str, dir: &Path) -> Result<Vec<String>> {
    ["hot", "cold"]
        .into_iter()
        .map(|dest| copy_plot(c, cpu_model, dest, dir))
        .collect()
}

/// Copy throughput by size, one line per routine, for a `hot` or `cold` destination.
fn copy_plot(c: &CopyReport, cpu_model: &str, dest: &str, dir: &Path) -> Result<String> {
    let name = format!("copy-{dest}.svg");
    let path = dir.join(&name);
    let root = SVGBackend::new(&path, (900, 540)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let max = c
        .points
        .iter()
        .filter(|p| p.dest == dest)
        .map(|p| p.gbps)
        .fold(1.0, f64::max)
        * 1.1;
    let min_size = c.points.iter().map(|p| p.size).min().unwrap_or(64) as f64;
    let max_size = c.points.iter().map(|p| p.size).max().unwrap_or(1 << 20) as f64;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("copy throughput, {dest} destination — {}", cpu_model),
            ("sans-serif", 18),
        )
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(50)
        .build_cartesian_2d((min_size..max_size).log_scale(), 0.0..max)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("bytes per copy")
        .y_desc("GB/s")
        .x_label_formatter(&|v| human(*v as usize))
        .draw()
        .map_err(err)?;
    let routines: Vec<String> = dedup(c.points.iter().map(|p| p.routine.clone()));
    for (i, r) in routines.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let pts: Vec<(f64, f64)> = c
            .points
            .iter()
            .filter(|p| p.dest == dest && &p.routine == r)
            .map(|p| (p.size as f64, p.gbps))
            .collect();
        labelled_line(&mut chart, pts, color, r.clone(), false)?;
    }
    legend_and_save(&mut chart, &root, SeriesLabelPosition::MiddleRight)?;
    Ok(name)
}
