//! SVG plots (plotters): copy GB/s by size per routine, CPU ns/packet per mode, latency CDF
//! per mode.

use std::path::Path;

use anyhow::{Context, Result};
use plotters::prelude::*;

use crate::micro::CopyReport;
use crate::report::Report;
use crate::run::ModeResult;
use crate::text::{dedup, human};

pub(crate) const COLORS: [RGBColor; 12] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
    RGBColor(0, 0, 0),
    RGBColor(255, 187, 120),
];

pub(crate) fn err<E: std::fmt::Debug>(e: E) -> anyhow::Error {
    anyhow::anyhow!("plotting: {e:?}")
}

/// Writes every plot the report has data for into `dir`; returns the files written.
pub fn write_all(report: &Report, dir: &Path) -> Result<Vec<String>> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut files = Vec::new();
    if let Some(c) = &report.copy {
        for dest in ["hot", "cold"] {
            files.push(copy_plot(report, c, dest, dir)?);
        }
    }
    if !report.results.is_empty() {
        // One colour per mode across the plots.
        let modes: Vec<String> = dedup(report.results.iter().map(|r| r.mode.clone()));
        let sizes: Vec<usize> = dedup(report.results.iter().map(|r| r.frame_bytes));
        files.push(cpu_plot(report, &modes, &sizes, dir)?);
        for &size in &sizes {
            files.push(latency_plot(report, &modes, size, dir)?);
        }
    }
    if let Some(sweep) = report.sweep.as_ref().filter(|s| !s.is_empty()) {
        files.push(sweep_plot(report, sweep, dir)?);
    }
    if let Some(c) = report.capacity.as_ref().filter(|c| !c.is_empty()) {
        files.extend(crate::capacity::plot::write(
            c,
            &report.machine.cpu_model,
            dir,
        )?);
    }
    Ok(files)
}

/// Copy throughput by size, one line per routine, for a `hot` or `cold` destination.
fn copy_plot(report: &Report, c: &CopyReport, dest: &str, dir: &Path) -> Result<String> {
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
            format!(
                "copy throughput, {dest} destination — {}",
                report.machine.cpu_model
            ),
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

/// One labelled line in `color` through `pts` (and, with `dots`, a dot on each point).
pub(crate) fn labelled_line<'a, DB, X, Y>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
    pts: Vec<(f64, f64)>,
    color: RGBColor,
    label: String,
    dots: bool,
) -> Result<()>
where
    DB: DrawingBackend + 'a,
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    chart
        .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
        .map_err(err)?
        .label(label)
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
    if dots {
        chart
            .draw_series(pts.into_iter().map(|p| Circle::new(p, 3, color.filled())))
            .map_err(err)?;
    }
    Ok(())
}

/// Every plot's end: the legend in a framed box at `position`, then the file written.
pub(crate) fn legend_and_save<'a, DB, CT>(
    chart: &mut ChartContext<'a, DB, CT>,
    root: &DrawingArea<DB, plotters::coord::Shift>,
    position: SeriesLabelPosition,
) -> Result<()>
where
    DB: DrawingBackend + 'a,
    CT: CoordTranslate,
{
    chart
        .configure_series_labels()
        .position(position)
        .border_style(BLACK)
        .background_style(WHITE.mix(0.8))
        .draw()
        .map_err(err)?;
    root.present().map_err(err)
}

/// Whole-machine CPU per delivered packet, bars by mode, grouped by frame size.
fn cpu_plot(report: &Report, modes: &[String], sizes: &[usize], dir: &Path) -> Result<String> {
    let name = "cpu-per-packet.svg".to_string();
    let path = dir.join(&name);
    let root = SVGBackend::new(&path, (1000, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let max = report
        .results
        .iter()
        .map(|r| r.machine_ns_per_delivered.min(r.machine_ns_per_sent * 20.0))
        .filter(|v| v.is_finite())
        .fold(1.0, f64::max)
        * 1.1;
    let n = modes.len() as f64;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!(
                "whole-machine CPU per delivered packet — {}",
                report.machine.cpu_model
            ),
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
                let r = report
                    .results
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
fn latency_plot(report: &Report, modes: &[String], size: usize, dir: &Path) -> Result<String> {
    let name = format!("latency-cdf-{size}B.svg");
    let path = dir.join(&name);
    let root = SVGBackend::new(&path, (900, 540)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let rs: Vec<_> = report
        .results
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

/// The sweep: whole-machine CPU per delivered packet (per sent for baseline-tx) against flow
/// count, log x, one line per mode (the median run of each point).
fn sweep_plot(report: &Report, sweep: &[ModeResult], dir: &Path) -> Result<String> {
    let name = "sweep-cpu-per-packet.svg".to_string();
    let path = dir.join(&name);
    let root = SVGBackend::new(&path, (1000, 600)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let sweep = crate::sweep::median_runs(sweep);
    let y = crate::sweep::cpu;
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
                report.machine.cpu_model
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
