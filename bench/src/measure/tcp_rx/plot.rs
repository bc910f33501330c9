//! `tcp-rx` as SVG: the receiving thread's CPU per KiB by read size, one line per method and
//! connection count.

use std::path::Path;

use anyhow::Result;
use plotters::prelude::*;

use super::TcpRxReport;
use crate::report::chart::{err, labelled_line, legend_and_save, COLORS};
use crate::report::text::{dedup, human};

/// Writes `tcp-rx-cpu-per-kib.svg` into `dir`; returns its name.
pub fn write(r: &TcpRxReport, cpu_model: &str, dir: &Path) -> Result<String> {
    let name = "tcp-rx-cpu-per-kib.svg".to_string();
    let path = dir.join(&name);
    let root = SVGBackend::new(&path, (900, 540)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let max = r
        .points
        .iter()
        .map(|p| p.rx_thread_ns_per_kib)
        .fold(1.0, f64::max)
        * 1.1;
    let min_read = r.points.iter().map(|p| p.read_bytes).min().unwrap_or(4096) as f64;
    let max_read = (r
        .points
        .iter()
        .map(|p| p.read_bytes)
        .max()
        .unwrap_or(1 << 20) as f64)
        .max(min_read * 2.0);
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("TCP receive, receiving thread's CPU per KiB — {cpu_model}"),
            ("sans-serif", 18),
        )
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(50)
        .build_cartesian_2d((min_read..max_read).log_scale(), 0.0..max)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("bytes per read")
        .y_desc("ns per KiB (user + system)")
        .x_label_formatter(&|v| human(*v as usize))
        .draw()
        .map_err(err)?;
    let series = dedup(r.points.iter().map(|p| (p.method.clone(), p.conns)));
    for (i, (method, conns)) in series.iter().enumerate() {
        let pts: Vec<(f64, f64)> = r
            .points
            .iter()
            .filter(|p| &p.method == method && p.conns == *conns)
            .map(|p| (p.read_bytes as f64, p.rx_thread_ns_per_kib))
            .collect();
        labelled_line(
            &mut chart,
            pts,
            COLORS[i % COLORS.len()],
            format!("{method}, {conns} conns"),
            true,
        )?;
    }
    legend_and_save(&mut chart, &root, SeriesLabelPosition::UpperRight)?;
    Ok(name)
}
