//! The capacity searches as SVG: the drop curve (delivered against offered, every trial of
//! every mode, one plot per frame size), each search's result beside the others (how well
//! the searches agree) and the zero-loss rate against flow count.

use std::path::Path;

use anyhow::Result;
use plotters::prelude::*;

use super::text::{main_flows, size_file, size_words, summary};
use super::CapacityPoint;
use crate::report::chart::{err, labelled_line, legend_and_save, COLORS};
use crate::report::text::dedup;

/// Writes the plots the points have data for into `dir`; returns the files written.
pub fn write(c: &[CapacityPoint], cpu: &str, dir: &Path) -> Result<Vec<String>> {
    let mut files = Vec::new();
    let flows = main_flows(c);
    let modes = dedup(c.iter().map(|p| p.mode.clone()));
    for size in dedup(c.iter().map(|p| p.frame_bytes)) {
        if c.iter().any(|p| p.frame_bytes == size && p.flows == flows) {
            files.push(drop_curve(c, &modes, size, flows, cpu, dir)?);
            if c.iter()
                .any(|p| p.frame_bytes == size && p.flows == flows && p.search > 0)
            {
                files.push(searches(c, &modes, size, flows, cpu, dir)?);
            }
        }
        let counts = dedup(
            c.iter()
                .filter(|p| p.frame_bytes == size && p.loss_allowed == 0.0)
                .map(|p| p.flows),
        );
        if counts.len() > 1 {
            files.push(by_flows(c, &modes, size, cpu, dir)?);
        }
    }
    Ok(files)
}

/// Delivered against offered, Mpps, log-log: every trial of every search at `size` and
/// `flows`, a line per mode through its trials in order of rate; the diagonal is no loss.
fn drop_curve(
    c: &[CapacityPoint],
    modes: &[String],
    size: usize,
    flows: usize,
    cpu: &str,
    dir: &Path,
) -> Result<String> {
    let name = format!("capacity-drop-curve-{}.svg", size_file(c, size));
    let path = dir.join(&name);
    let root = SVGBackend::new(&path, (1000, 640)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let trials: Vec<&crate::measure::run::Trial> = c
        .iter()
        .filter(|p| p.frame_bytes == size && p.flows == flows)
        .flat_map(|p| p.own_trials())
        .collect();
    let top = trials.iter().map(|t| t.offered_mpps).fold(0.1, f64::max) * 1.3;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!(
                "delivered against offered, {}, {flows} flows — {cpu}",
                size_words(c, size)
            ),
            ("sans-serif", 18),
        )
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d((0.01..top).log_scale(), (0.001..top).log_scale())
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("offered, Mpps (the in-kernel generator's own count; log)")
        .y_desc("delivered to the receiver, Mpps (log)")
        .draw()
        .map_err(err)?;
    chart
        .draw_series(LineSeries::new(
            [(0.01, 0.01), (top, top)],
            BLACK.mix(0.3).stroke_width(1),
        ))
        .map_err(err)?
        .label("no loss (delivered = offered)")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.mix(0.3)));
    for (i, m) in modes.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let mut pts: Vec<(f64, f64)> = trials
            .iter()
            .filter(|t| &t.mode == m && t.sent > 0)
            .map(|t| {
                // baseline-tx delivers to no one: what the veth took is its "delivered".
                let got = t.sent - t.lost;
                (t.offered_mpps, t.offered_mpps * got as f64 / t.sent as f64)
            })
            .filter(|p| p.1 > 0.0)
            .collect();
        if pts.is_empty() {
            continue;
        }
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        labelled_line(&mut chart, pts, color, m.clone(), true)?;
    }
    legend_and_save(&mut chart, &root, SeriesLabelPosition::UpperLeft)?;
    Ok(name)
}

/// Each search's result, Mpps (log), against the search's number: a solid line per mode for
/// no loss, a thin one for the highest other loss searched; lines that stay flat are
/// searches that agree.
fn searches(
    c: &[CapacityPoint],
    modes: &[String],
    size: usize,
    flows: usize,
    cpu: &str,
    dir: &Path,
) -> Result<String> {
    let name = format!("capacity-searches-{}.svg", size_file(c, size));
    let path = dir.join(&name);
    let root = SVGBackend::new(&path, (1000, 600)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let here: Vec<&CapacityPoint> = c
        .iter()
        .filter(|p| p.frame_bytes == size && p.flows == flows)
        .collect();
    let most = here.iter().map(|p| p.search).max().unwrap_or(0) as f64 + 1.0;
    let top = here.iter().map(|p| p.rate_mpps).fold(0.1, f64::max) * 2.0;
    let low = here
        .iter()
        .map(|p| p.rate_mpps)
        .filter(|&r| r > 0.0)
        .fold(top, f64::min)
        / 2.0;
    let loss = here.iter().map(|p| p.loss_allowed).fold(0.0, f64::max);
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!(
                "each search's result, {}, {flows} flows — {cpu}",
                size_words(c, size)
            ),
            ("sans-serif", 18),
        )
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0.5..most + 0.5, (low..top).log_scale())
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc(format!(
            "search (solid: no loss; thin: at most {}% lost)",
            loss * 100.0
        ))
        .y_desc("rate that passed, Mpps (log)")
        .x_label_formatter(&|v| format!("{v:.0}"))
        .draw()
        .map_err(err)?;
    for (i, m) in modes.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let line = |l: f64| -> Vec<(f64, f64)> {
            here.iter()
                .filter(|p| &p.mode == m && p.loss_allowed == l && p.rate_mpps > 0.0)
                .map(|p| (p.search as f64 + 1.0, p.rate_mpps))
                .collect()
        };
        let zero = line(0.0);
        if !zero.is_empty() {
            labelled_line(&mut chart, zero, color, m.clone(), true)?;
        }
        if loss > 0.0 {
            let other = line(loss);
            if !other.is_empty() {
                chart
                    .draw_series(LineSeries::new(other, color.mix(0.6).stroke_width(1)))
                    .map_err(err)?;
            }
        }
    }
    legend_and_save(&mut chart, &root, SeriesLabelPosition::LowerRight)?;
    Ok(name)
}

/// The zero-loss rate (median of the searches) against flow count, log-log, a line per mode.
fn by_flows(
    c: &[CapacityPoint],
    modes: &[String],
    size: usize,
    cpu: &str,
    dir: &Path,
) -> Result<String> {
    let name = format!("capacity-by-flows-{}.svg", size_file(c, size));
    let path = dir.join(&name);
    let root = SVGBackend::new(&path, (1000, 600)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let mut counts = dedup(
        c.iter()
            .filter(|p| p.frame_bytes == size && p.loss_allowed == 0.0)
            .map(|p| p.flows),
    );
    counts.sort_unstable();
    let lines: Vec<(usize, Vec<(f64, f64)>)> = modes
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let pts = counts
                .iter()
                .filter_map(|&f| {
                    let s = summary(c, m, size, f, 0.0)?;
                    (s.median > 0.0).then_some((f as f64, s.median))
                })
                .collect();
            (i, pts)
        })
        .collect();
    let top = lines
        .iter()
        .flat_map(|(_, p)| p.iter().map(|p| p.1))
        .fold(0.1, f64::max)
        * 3.0;
    let most = *counts.last().unwrap_or(&1) as f64;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!(
                "zero-loss rate against flow count, {} — {cpu}",
                size_words(c, size)
            ),
            ("sans-serif", 18),
        )
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d((0.8..most * 1.5).log_scale(), (0.01..top).log_scale())
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("flows = sockets in socket modes (log)")
        .y_desc("zero-loss rate, Mpps, median of the searches (log)")
        .x_label_formatter(&|v| format!("{v:.0}"))
        .draw()
        .map_err(err)?;
    for (i, pts) in lines {
        if pts.len() < 2 {
            continue;
        }
        let color = COLORS[i % COLORS.len()];
        labelled_line(&mut chart, pts, color, modes[i].clone(), true)?;
    }
    legend_and_save(&mut chart, &root, SeriesLabelPosition::UpperRight)?;
    Ok(name)
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::measure::run::Trial;

    fn point(mode: &str, search: usize, loss: f64, rate: f64) -> CapacityPoint {
        let trial = Trial {
            mode: mode.into(),
            frame_bytes: 64,
            offered_mpps: rate,
            sent: 1000,
            delivered: 1000,
            lost: 0,
            late: 0,
            written_bytes: None,
            veth_rx_dropped: 0,
            kernel_dropped: 0,
            rx_cpu_ns_per_delivered: 900.0,
            steal_ms: 0.0,
            generator_cpu: Some(0),
            napi_cpus: vec![Some(1)],
            receiver_cpus: vec![1],
            path: None,
            napi_ns_per_frame: None,
            cpu_link: None,
        };
        CapacityPoint {
            mode: mode.into(),
            frame_bytes: 64,
            flows: 256,
            search,
            loss_allowed: loss,
            rate_mpps: rate,
            top_mpps: 6.0,
            at_top: false,
            rx_cpu_ns_per_delivered: 900.0,
            trials: vec![trial],
            method: "mlr".into(),
            trials_per_load: 3,
            bound_trials: 7,
            exceed_ratio: 0.5,
            loads: Vec::new(),
            trials_shared: loss > 0.0,
            cpu_dma_latency_us: Some(0),
            rx_cpu_tasks_moved: Some(40),
            imix: false,
        }
    }

    /// Three searches of two modes: the drop curve and the searches' plot, whose lines pass
    /// through every search's result.
    #[test]
    fn the_searches_plot_shows_every_search() {
        let dir = std::env::temp_dir().join(format!("zcrx-capacity-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut c = Vec::new();
        for search in 0..3 {
            for (mode, rate) in [("ring-zerocopy", 1.0), ("sockets-recvmmsg", 0.5)] {
                let r = rate * (1.0 + 0.02 * search as f64);
                c.push(point(mode, search, 0.0, r));
                c.push(point(mode, search, 0.001, r * 1.1));
            }
        }
        let files = write(&c, "test CPU", &dir).unwrap();
        assert_eq!(
            files,
            ["capacity-drop-curve-64B.svg", "capacity-searches-64B.svg"]
        );
        let svg = std::fs::read_to_string(dir.join(&files[1])).unwrap();
        assert!(svg.contains("each search&apos;s result") || svg.contains("each search's result"));
        assert!(svg.contains("ring-zerocopy") && svg.contains("sockets-recvmmsg"));
        // A dot per search and mode on the zero-loss lines.
        assert_eq!(svg.matches("<circle").count(), 6, "{svg}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
