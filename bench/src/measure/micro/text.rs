//! The micro-benchmarks as text: the copy routines' table and thresholds, memcmp, remap and
//! the drain of a pre-filled ring.

use std::fmt::Write as _;

use super::{CopyReport, DrainPoint, MemcmpPoint, RemapReport, COPY_DESTS};
use crate::report::stats::paired;
use crate::report::text::{dedup, human, table};

/// The copy tables.
pub fn copy_table(c: &CopyReport, markdown: bool) -> String {
    let routines = dedup(c.points.iter().map(|p| p.routine.clone()));
    let mut header: Vec<String> = vec!["size".into(), "dest".into()];
    header.extend(routines.iter().map(|r| format!("{r} GB/s")));
    header.push("best".into());
    header.push("auto/best".into());
    header.push("auto/same code (noise)".into());
    let sizes = dedup(c.points.iter().map(|p| p.size));
    let mut rows = Vec::new();
    for size in sizes {
        for dest in COPY_DESTS {
            if !c.points.iter().any(|p| p.size == size && p.dest == dest) {
                continue;
            }
            let mut row = vec![human(size), dest.to_string()];
            for r in &routines {
                let v = c
                    .points
                    .iter()
                    .find(|p| p.size == size && p.dest == dest && &p.routine == r)
                    .map(|p| format!("{:.1}", p.gbps));
                row.push(v.unwrap_or_else(|| "-".into()));
            }
            row.push(
                c.best
                    .iter()
                    .find(|b| b.0 == size && b.1 == dest)
                    .map(|b| b.2.clone())
                    .unwrap_or_default(),
            );
            row.push(
                c.auto_vs_best
                    .iter()
                    .find(|b| b.0 == size && b.1 == dest)
                    .map(|b| format!("{:.2}", b.2))
                    .unwrap_or_default(),
            );
            row.push(
                c.auto_vs_same
                    .iter()
                    .find(|b| b.0 == size && b.1 == dest)
                    .map(|b| format!("{:.2} ({})", b.3, b.2))
                    .unwrap_or_default(),
            );
            rows.push(row);
        }
    }
    let h: Vec<&str> = header.iter().map(|s| s.as_str()).collect();
    let mut out = table(&h, &rows, markdown);
    let _ = writeln!(
        out,
        "\nrecommended non-temporal threshold on this CPU: {} (auto by size alone: {}, a quarter of the last-level cache; for a cold destination: {})",
        c.recommended_nt_threshold.map(human).unwrap_or_else(|| "none (NT never won every larger cold copy)".into()),
        human(c.auto_nt_threshold),
        human(zcrx_capture::copy::COLD_NT_FROM)
    );
    let _ = writeln!(
        out,
        "auto by size alone: {}\nauto, cold (reuse distance 4x the LLC): {}\nauto, hot and arena (reuse distance within the caches): {}",
        c.auto, c.auto_cold, c.auto_arena
    );
    let _ = writeln!(out, "auto's choice by size: {}", c.auto_calibration);
    for (layout, timings) in [
        ("hot", &c.auto_calibration_timings),
        ("arena", &c.auto_calibration_arena_timings),
        ("cold", &c.auto_calibration_cold_timings),
    ] {
        for (top, t) in timings {
            let size = if *top == usize::MAX {
                "above 1 MiB (at 2 MiB)".to_string()
            } else {
                format!("up to {}", human(*top))
            };
            let times: Vec<String> = t.iter().map(|(r, ns)| format!("{r} {ns:.1} ns")).collect();
            let _ = writeln!(out, "  {layout}, {size}: {}", times.join(", "));
        }
    }
    out
}

/// memcmp variants by size and misalignment.
pub fn memcmp_text(m: &[MemcmpPoint]) -> String {
    let mut text = String::new();
    let rows: Vec<Vec<String>> = m
        .iter()
        .map(|p| {
            vec![
                human(p.size),
                p.misalign.to_string(),
                p.variant.clone(),
                format!("{:.1}", p.gbps),
            ]
        })
        .collect();
    text.push_str(&table(
        &["size", "misalign", "variant", "GB/s"],
        &rows,
        false,
    ));
    text
}

/// remap versus copy by page count, and where each wins.
pub fn remap_text(r: &RemapReport) -> String {
    let mut text = String::new();
    let rows: Vec<Vec<String>> = r
        .points
        .iter()
        .map(|p| {
            vec![
                p.pages.to_string(),
                format!("{:.2}", p.mremap_us),
                format!("{:.2}", p.mmap_munmap_us),
                format!("{:.2}", p.memcpy_us),
            ]
        })
        .collect();
    text.push_str(&table(
        &["pages", "mremap µs", "mmap+munmap µs", "memcpy µs"],
        &rows,
        false,
    ));
    text.push_str(&format!(
        "mremap beats memcpy from {} pages; mmap+munmap (with TLB shootdown) from {} pages\n",
        r.mremap_wins_from_pages
            .map(|p| p.to_string())
            .unwrap_or_else(|| "no measured".into()),
        r.mmap_munmap_wins_from_pages
            .map(|p| p.to_string())
            .unwrap_or_else(|| "no measured".into())
    ));
    text
}

/// drain of a pre-filled ring by delivery, and `copy-auto` against the best fixed copy
/// routine at each size.
pub fn drain_text(d: &[DrainPoint]) -> String {
    let mut text = String::new();
    let rows: Vec<Vec<String>> = d
        .iter()
        .map(|p| {
            let lo = p
                .rounds_wall_ns
                .iter()
                .copied()
                .fold(f64::INFINITY, f64::min);
            let hi = p.rounds_wall_ns.iter().copied().fold(0.0, f64::max);
            vec![
                p.frame_bytes.to_string(),
                p.delivery.clone(),
                format!("{:.1}", p.wall_ns_per_pkt),
                format!("{lo:.1}..{hi:.1}"),
                format!("{:.1}", p.stage_ns_per_pkt),
                format!("{:.2}", p.pps / 1e6),
            ]
        })
        .collect();
    text.push_str(&table(
        &[
            "size",
            "delivery",
            "wall ns/pkt",
            "rounds",
            "stage ns/pkt",
            "Mpps",
        ],
        &rows,
        false,
    ));
    for size in dedup(d.iter().map(|p| p.frame_bytes)) {
        let at = |f: &dyn Fn(&str) -> bool| {
            d.iter()
                .filter(|p| p.frame_bytes == size && f(&p.delivery))
                .min_by(|a, b| a.wall_ns_per_pkt.total_cmp(&b.wall_ns_per_pkt))
        };
        let best = at(&|n| n.starts_with("copy-") && n != "copy-auto");
        let auto = at(&|n| n == "copy-auto");
        if let (Some(b), Some(a)) = (best, auto) {
            let _ = writeln!(
                text,
                "{size} B: copy-auto {:.1} ns/pkt, best fixed {} {:.1}: auto/best time {:.3} (median of the rounds' paired ratios; {})",
                a.wall_ns_per_pkt,
                b.delivery,
                b.wall_ns_per_pkt,
                paired(&a.rounds_wall_ns, &b.rounds_wall_ns),
                a.copier
            );
        }
    }
    text
}
