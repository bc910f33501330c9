//! Output: aligned tables, markdown, JSON.

use std::fmt::Write as _;

use serde::Serialize;

use crate::machine::Machine;
use crate::micro::{CopyReport, DrainPoint, MemcmpPoint, RemapReport};
use crate::run::{ModeResult, RunConfig};

/// Everything a run measured. Schema: `bench/report.schema.json`.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Schema version.
    pub schema: u32,
    /// Where.
    pub machine: Machine,
    /// The main run's settings, if it ran.
    pub config: Option<RunConfig>,
    /// The main run, one entry per mode and size.
    pub results: Vec<ModeResult>,
    /// Ratios of whole-machine CPU per delivered packet, ring-zerocopy over each socket mode,
    /// per frame size.
    pub ratios: Vec<Ratio>,
    /// `copy` sub-command.
    pub copy: Option<CopyReport>,
    /// `memcmp` sub-command.
    pub memcmp: Option<Vec<MemcmpPoint>>,
    /// `remap` sub-command.
    pub remap: Option<RemapReport>,
    /// `drain` sub-command.
    pub drain: Option<Vec<DrainPoint>>,
    /// `sniff` sub-command.
    pub sniff: Option<Vec<crate::run::SniffResult>>,
}

/// One goal ratio.
#[derive(Debug, Clone, Serialize)]
pub struct Ratio {
    /// Frame size.
    pub frame_bytes: usize,
    /// The socket mode compared against.
    pub versus: String,
    /// ring-zerocopy machine ns per delivered packet / socket mode's.
    pub machine_per_delivered: f64,
    /// Same, per sent packet.
    pub machine_per_sent: f64,
}

impl Report {
    /// An empty report for this machine.
    pub fn new(machine: Machine) -> Report {
        Report {
            schema: 1,
            machine,
            config: None,
            results: Vec::new(),
            ratios: Vec::new(),
            copy: None,
            memcmp: None,
            remap: None,
            drain: None,
            sniff: None,
        }
    }

    /// Computes [`Report::ratios`] from the results.
    pub fn compute_ratios(&mut self) {
        self.ratios.clear();
        let sizes: Vec<usize> = self.results.iter().map(|r| r.frame_bytes).collect();
        for size in dedup(sizes) {
            let find = |m: &str| {
                self.results
                    .iter()
                    .find(|r| r.frame_bytes == size && r.mode == m)
            };
            let Some(ring) = find("ring-zerocopy") else {
                continue;
            };
            for versus in ["sockets-recvmmsg", "sockets-recvmsg"] {
                if let Some(s) = find(versus) {
                    let div = |a: f64, b: f64| if b > 0.0 { a / b } else { f64::NAN };
                    self.ratios.push(Ratio {
                        frame_bytes: size,
                        versus: versus.into(),
                        machine_per_delivered: div(
                            ring.machine_ns_per_delivered,
                            s.machine_ns_per_delivered,
                        ),
                        machine_per_sent: div(ring.machine_ns_per_sent, s.machine_ns_per_sent),
                    });
                }
            }
        }
    }

    /// The main table (aligned text or markdown).
    pub fn results_table(&self, markdown: bool) -> String {
        let header = [
            "size",
            "mode",
            "sent",
            "delivered",
            "dropped",
            "unacc",
            "Mpps",
            "rx user ns/p",
            "rx sys ns/p",
            "machine ns/deliv",
            "machine ns/sent",
            "lat p50 µs",
            "p99 µs",
            "p99.9 µs",
            "max µs",
            "flow min..max",
        ];
        let rows: Vec<Vec<String>> = self
            .results
            .iter()
            .map(|r| {
                let us = |ns: u64| format!("{:.1}", ns as f64 / 1000.0);
                vec![
                    r.frame_bytes.to_string(),
                    r.mode.clone(),
                    r.sent.to_string(),
                    r.delivered.to_string(),
                    r.dropped.to_string(),
                    if r.receives {
                        r.unaccounted.to_string()
                    } else {
                        "-".into()
                    },
                    format!("{:.2}", r.delivered_pps / 1e6),
                    format!("{:.0}", r.receiver_user_ns_per_pkt),
                    format!("{:.0}", r.receiver_sys_ns_per_pkt),
                    format!("{:.0}", r.machine_ns_per_delivered),
                    format!("{:.0}", r.machine_ns_per_sent),
                    us(r.latency.p50_ns),
                    us(r.latency.p99_ns),
                    us(r.latency.p999_ns),
                    us(r.latency.max_ns),
                    format!("{}..{}", r.flow_min, r.flow_max),
                ]
            })
            .collect();
        table(&header, &rows, markdown)
    }

    /// Ratio lines.
    pub fn ratio_lines(&self) -> String {
        let mut s = String::new();
        for r in &self.ratios {
            let _ = writeln!(
                s,
                "{} B: ring-zerocopy / {}: machine CPU per delivered packet {:.2}x, per sent packet {:.2}x",
                r.frame_bytes, r.versus, r.machine_per_delivered, r.machine_per_sent
            );
        }
        s
    }

    /// The copy tables.
    pub fn copy_table(&self, markdown: bool) -> String {
        let Some(c) = &self.copy else {
            return String::new();
        };
        let routines = dedup(c.points.iter().map(|p| p.routine.clone()).collect());
        let mut header: Vec<String> = vec!["size".into(), "dest".into()];
        header.extend(routines.iter().map(|r| format!("{r} GB/s")));
        header.push("best".into());
        let sizes = dedup(c.points.iter().map(|p| p.size).collect());
        let mut rows = Vec::new();
        for size in sizes {
            for dest in ["hot", "cold"] {
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
                rows.push(row);
            }
        }
        let h: Vec<&str> = header.iter().map(|s| s.as_str()).collect();
        let mut out = table(&h, &rows, markdown);
        let _ = writeln!(
            out,
            "\nrecommended non-temporal threshold on this CPU: {} (auto uses {}, a quarter of the last-level cache)",
            c.recommended_nt_threshold.map(human).unwrap_or_else(|| "none (NT never won every larger cold copy)".into()),
            human(c.auto_nt_threshold)
        );
        out
    }
}

fn dedup<T: PartialEq + Clone>(v: Vec<T>) -> Vec<T> {
    let mut out: Vec<T> = Vec::new();
    for x in v {
        if !out.contains(&x) {
            out.push(x);
        }
    }
    out
}

/// 64, 1500, 4 KiB, 1 MiB ...
pub fn human(n: usize) -> String {
    if n >= 1 << 20 && n % (1 << 20) == 0 {
        format!("{} MiB", n >> 20)
    } else if n >= 1 << 10 && n % (1 << 10) == 0 {
        format!("{} KiB", n >> 10)
    } else {
        format!("{n} B")
    }
}

/// An aligned text table, or a markdown one.
pub fn table(header: &[&str], rows: &[Vec<String>], markdown: bool) -> String {
    let mut w: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let mut s = String::new();
    let line = |s: &mut String, cells: &[String]| {
        if markdown {
            let _ = writeln!(s, "| {} |", cells.join(" | "));
        } else {
            let padded: Vec<String> = cells
                .iter()
                .enumerate()
                .map(|(i, c)| format!("{c:>width$}", width = w[i]))
                .collect();
            let _ = writeln!(s, "{}", padded.join("  "));
        }
    };
    line(
        &mut s,
        &header.iter().map(|h| h.to_string()).collect::<Vec<_>>(),
    );
    if markdown {
        let _ = writeln!(
            s,
            "|{}|",
            header.iter().map(|_| "---").collect::<Vec<_>>().join("|")
        );
    }
    for r in rows {
        line(&mut s, r);
    }
    s
}
