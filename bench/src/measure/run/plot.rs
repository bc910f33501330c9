//! The main run as SVG: whole-machine CPU per delivered packet by mode and size, and the
//! latency CDF of every mode at each size.

use std::path::Path;

use anyhow::Result;
use plotters::prelude::*;

use super::ModeResult;
use crate::report::chart::{err, labelled_line, legend_and_save, COLORS};
use crate::report::text::dedup;

/// Writes the main run's plots into `dir` (one colour per mode across them); returns the
/// files written.
pub fn write(results: &[ModeResult], cpu_model: &str, dir: &Path) -> Result<Vec<String>> {
    let modes: Vec<String> = dedup(results.iter().map(|r| r.mode.clone()));
    let sizes: Vec<usize> = dedup(results.iter().map(|r| r.frame_bytes));
    let mut files = vec![cpu_plot(results, cpu_model, &modes, &sizes, dir)?];
    for &size in &sizes {
        files.push(latency_plot(results, &modes, size, dir)?);
    }
    Ok(files)
}

/// Whole-machine CPU per delivered packet, bars by mode, grouped by frame size.
fn cpu_plot(
    results: &[ModeResult],
    cpu_model: &str,
    modes: &[String],
    sizes: &[usize],
    dir: &Path,
) -> Result<String> {
    let name = "cpu-per-packet.svg".to_string();
    let path = dir.join(&name);
    let root = SVGBackend::new(&path, (1000, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let max = results
        .iter()
        .map(|r| r.machine_ns_per_delivered.min(r.machine_ns_per_sent * 20.0))
        .filter(|v| v.is_finite())
        .fold(1.0, f64::max)
        * 1.1;
    let n = modes.len() as f64;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("whole-machine CPU per delivered packet — {}", cpu_model),
            ("sans-serif", 18),
        )
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(60)
        // Group i is centred on x = i; the room on the right holds the legend.
        .build_cartesian_2d(-0.5..sizes.len() as f64 + 0.3, 0.0..max)
        .map_err(err)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(sizes.len() + 2)
        .x_label_formatter(&|v| {
            let i = v.round();
            if (v - i).abs() > 0.01 || i < 0.0 {
                return String::new();
            }
            sizes
                .get(i as usize)
                .map(|s| format!("{s} B frames"))
                .unwrap_or_default()
        })
        .y_desc("ns per delivered packet (busy CPU, /proc/stat)")
        .draw()
        .map_err(err)?;
    for (mi, m) in modes.iter().enumerate() {
        let color = COLORS[mi % COLORS.len()];
        let bars: Vec<Rectangle<(f64, f64)>> = sizes
            .iter()
            .enumerate()
            .filter_map(|(si, s)| {
                let r = results
                    .iter()
                    .find(|r| &r.mode == m && r.frame_bytes == *s)?;
                let v = if r.delivered > 0 {
                    r.machine_ns_per_delivered
                } else {
                    r.machine_ns_per_sent
                };
                let x0 = si as f64 - 0.4 + 0.8 * mi as f64 / n;
                Some(Rectangle::new(
                    [(x0, 0.0), (x0 + 0.8 / n, v.min(max))],
                    color.filled(),
                ))
            })
            .collect();
        chart
            .draw_series(bars)
            .map_err(err)?
            .label(m.clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 15, y + 5)], color.filled()));
    }
    legend_and_save(&mut chart, &root, SeriesLabelPosition::MiddleRight)?;
    Ok(name)
}

/// Latency CDFs (kernel timestamp to handler) of every mode at one frame size.
fn latency_plot(
    results: &[ModeResult],
    modes: &[String],
    size: usize,
    dir: &Path,
) -> Result<String> {
    let name = format!("latency-cdf-{size}B.svg");
    let path = dir.join(&name);
    let root = SVGBackend::new(&path, (900, 540)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let rs: Vec<_> = results
        .iter()
        .filter(|r| r.frame_bytes == size && r.latency.samples > 0)
        .collect();
    let max_ns = rs
        .iter()
        .map(|r| r.latency.max_ns)
        .max()
        .unwrap_or(1_000_000)
        .max(1000) as f64;
    let min_ns = rs
        .iter()
        .flat_map(|r| r.latency.cdf.first().map(|c| c.0))
        .min()
        .unwrap_or(100)
        .max(10) as f64;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("latency CDF, kernel timestamp to handler, {size} B frames"),
            ("sans-serif", 18),
        )
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(50)
        .build_cartesian_2d((min_ns..max_ns * 1.2).log_scale(), 0.0..1.0)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("latency (ns, log)")
        .y_desc("fraction of packets")
        .draw()
        .map_err(err)?;
    for r in rs.iter() {
        // Same colour per mode as in the CPU plot.
        let i = modes.iter().position(|m| *m == r.mode).unwrap_or(0);
        let color = COLORS[i % COLORS.len()];
        let pts: Vec<(f64, f64)> = r
            .latency
            .cdf
            .iter()
            .map(|&(ns, q)| (ns.max(1) as f64, q))
            .collect();
        labelled_line(&mut chart, pts, color, r.mode.clone(), false)?;
    }
    legend_and_save(&mut chart, &root, SeriesLabelPosition::LowerRight)?;
    Ok(name)
}
