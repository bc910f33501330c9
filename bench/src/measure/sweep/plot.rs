//! The sweep as SVG: CPU per packet against flow count.

use std::path::Path;

use anyhow::Result;
use plotters::prelude::*;

use super::text::median_runs;
use crate::measure::run::ModeResult;
use crate::report::chart::{err, labelled_line, legend_and_save, COLORS};
use crate::report::text::dedup;

/// The sweep: whole-machine CPU per delivered packet (per sent for baseline-tx) against flow
/// count, log x, one line per mode (the median run of each point).
pub fn write(sweep: &[ModeResult], cpu_model: &str, dir: &Path) -> Result<String> {
    let name = "sweep-cpu-per-packet.svg".to_string();
    let path = dir.join(&name);
    let root = SVGBackend::new(&path, (1000, 600)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let sweep = median_runs(sweep);
    let y = ModeResult::cpu_per_packet;
    let max = sweep
        .iter()
        .map(|r| y(r))
        .filter(|v| v.is_finite())
        .fold(1.0, f64::max)
        // Room above the lines for the legend.
        * 1.45;
    let max_flows = sweep.iter().map(|r| r.flows).max().unwrap_or(1).max(2) as f64;
    let size = sweep.first().map_or(0, |r| r.frame_bytes);
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!(
                "CPU per packet against flow count, {size} B frames — {}",
                cpu_model
            ),
            ("sans-serif", 18),
        )
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d((1.0..max_flows * 1.5).log_scale(), 0.0..max)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("flows = sockets in socket modes = source addresses (log)")
        .y_desc("ns per delivered packet (busy CPU, /proc/stat)")
        .x_label_formatter(&|v| format!("{v:.0}"))
        .draw()
        .map_err(err)?;
    let modes: Vec<String> = dedup(sweep.iter().map(|r| r.mode.clone()));
    for (i, m) in modes.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let mut pts: Vec<(f64, f64)> = sweep
            .iter()
            .filter(|r| &r.mode == m && (r.delivered > 0 || !r.receives))
            .map(|r| (r.flows as f64, y(r)))
            .collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        let label = if m == "baseline-tx" {
            "baseline-tx (generator alone, per sent)".to_string()
        } else {
            m.clone()
        };
        labelled_line(&mut chart, pts, color, label, true)?;
    }
    legend_and_save(&mut chart, &root, SeriesLabelPosition::UpperLeft)?;
    Ok(name)
}
