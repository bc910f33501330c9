//! Output: aligned tables, markdown, JSON.

use std::fmt::Write as _;

use serde::Serialize;

use crate::machine::Machine;
use crate::micro::{CopyReport, DrainPoint, MemcmpPoint, RemapReport};
use crate::run::{ModeResult, RunConfig, Skipped};
use crate::stats::{median, paired};
use crate::text::{dedup, human, table};

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
    /// `table` sub-command.
    pub table: Option<Vec<crate::table::TablePoint>>,
    /// `remap` sub-command.
    pub remap: Option<RemapReport>,
    /// `drain` sub-command.
    pub drain: Option<Vec<DrainPoint>>,
    /// `sniff` sub-command.
    pub sniff: Option<Vec<crate::run::SniffResult>>,
    /// `instructions` sub-command.
    pub instructions: Option<Vec<crate::instructions::Instructions>>,
    /// `sniff --latency`.
    pub sniff_latency: Option<Vec<crate::run::SniffLatency>>,
    /// `sweep` sub-command: every mode at every flow count (distinct source addresses).
    pub sweep: Option<Vec<ModeResult>>,
    /// `generators` sub-command.
    pub generators: Option<Vec<crate::generator::GeneratorPoint>>,
    /// `capacity` sub-command.
    pub capacity: Option<Vec<crate::capacity::CapacityPoint>>,
    /// Modes that could not run on this machine, and why (never faked).
    pub skipped: Vec<Skipped>,
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
    /// The same ratio of the receive cost net of the generator (`receive_ns_per_delivered`).
    pub receive_per_delivered: Option<f64>,
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
            table: None,
            remap: None,
            drain: None,
            sniff: None,
            instructions: None,
            sniff_latency: None,
            sweep: None,
            generators: None,
            capacity: None,
            skipped: Vec::new(),
        }
    }

    /// Computes [`Report::ratios`] from the results, and every result's receive cost net of
    /// the generator (baseline-tx at the same size and flow count).
    pub fn compute_ratios(&mut self) {
        net_of_baseline(&mut self.results);
        if let Some(sweep) = &mut self.sweep {
            net_of_baseline(sweep);
        }
        self.ratios.clear();
        let sizes: Vec<usize> = self.results.iter().map(|r| r.frame_bytes).collect();
        for size in dedup(sizes) {
            let at_size = |r: &&ModeResult| r.frame_bytes == size;
            let Some(ring) = self
                .results
                .iter()
                .filter(at_size)
                .find(|r| r.mode == "ring-zerocopy")
            else {
                continue;
            };
            let others = self
                .results
                .iter()
                .filter(at_size)
                .filter(|r| r.receives && !r.mode.starts_with("ring-"));
            for s in others {
                let div = |a: f64, b: f64| if b > 0.0 { a / b } else { f64::NAN };
                self.ratios.push(Ratio {
                    frame_bytes: size,
                    versus: s.mode.clone(),
                    machine_per_delivered: div(
                        ring.machine_ns_per_delivered,
                        s.machine_ns_per_delivered,
                    ),
                    machine_per_sent: div(ring.machine_ns_per_sent, s.machine_ns_per_sent),
                    receive_per_delivered: match (
                        ring.receive_ns_per_delivered,
                        s.receive_ns_per_delivered,
                    ) {
                        (Some(a), Some(b)) => Some(div(a, b)),
                        _ => None,
                    },
                });
            }
        }
    }

    /// Everything measured, as the text rxbench prints (after `header`).
    pub fn text(&self, header: &str) -> String {
        let mut text = header.to_string();
        if !self.results.is_empty() {
            text.push_str(&self.results_table(false));
            text.push('\n');
            text.push_str(&self.ratio_lines());
        }
        if self.copy.is_some() {
            text.push('\n');
            text.push_str(&self.copy_table(false));
        }
        self.memcmp_text(&mut text);
        self.table_text(&mut text);
        self.remap_text(&mut text);
        self.drain_text(&mut text);
        self.sniff_text(&mut text);
        self.instructions_text(&mut text);
        self.sniff_latency_text(&mut text);
        self.sweep_text(&mut text, false);
        self.generators_text(&mut text, false);
        self.capacity_text(&mut text, false);
        self.skipped_text(&mut text);
        text
    }

    /// The sweep's table and verdicts.
    fn sweep_text(&self, text: &mut String, markdown: bool) {
        let Some(sweep) = &self.sweep else {
            return;
        };
        let size = sweep.first().map_or(0, |r| r.frame_bytes);
        let _ = writeln!(
            text,
            "\nflow-count sweep, {size} B frames, one source address per flow (rx-only = machine CPU minus baseline-tx's at the same flow count):\n"
        );
        text.push_str(&crate::sweep::table_text(sweep, markdown));
        text.push('\n');
        for l in crate::sweep::verdicts(sweep).lines() {
            let _ = writeln!(text, "{}{l}", if markdown { "- " } else { "" });
        }
    }

    /// `sniff --latency`: per sniffer and rate, the median run (by p99).
    fn sniff_latency_text(&self, text: &mut String) {
        let Some(all) = &self.sniff_latency else {
            return;
        };
        let keys = dedup(
            all.iter()
                .map(|r| (r.cpu_dma_latency_us, r.rate_pps, r.tool.clone())),
        );
        let rows: Vec<Vec<String>> = keys
            .iter()
            .map(|(cap, rate, tool)| {
                let mut runs: Vec<_> = all
                    .iter()
                    .filter(|r| {
                        &r.tool == tool && r.rate_pps == *rate && r.cpu_dma_latency_us == *cap
                    })
                    .collect();
                runs.sort_by_key(|r| r.latency.p99_ns);
                let r = runs[runs.len() / 2];
                let us = |ns: u64| format!("{:.1}", ns as f64 / 1000.0);
                // The handler figures: median of the runs' p50 and of their p99.
                let handler = {
                    let mut h: Vec<_> = runs.iter().filter_map(|r| r.handler.as_ref()).collect();
                    if h.is_empty() {
                        "n/a".to_string()
                    } else {
                        h.sort_by_key(|l| l.p50_ns);
                        let p50 = h[h.len() / 2].p50_ns;
                        h.sort_by_key(|l| l.p99_ns);
                        format!("{} / {}", us(p50), us(h[h.len() / 2].p99_ns))
                    }
                };
                vec![
                    tool.clone(),
                    cap.map_or("default".into(), |us| format!("≤ {us} µs")),
                    rate.to_string(),
                    format!("{}/{}", r.received, r.sent),
                    r.dropped.to_string(),
                    us(r.latency.p50_ns),
                    us(r.latency.p99_ns),
                    us(r.latency.p999_ns),
                    us(r.latency.max_ns),
                    format!("{:.0}", r.cpu_ns_per_pkt),
                    handler,
                    runs.len().to_string(),
                ]
            })
            .collect();
        text.push_str("\nsniffer latency, kernel receive timestamp to the pcap record read from its pipe (-U -w -), 64 B frames (median run by p99); handler: to zcap's own handler (--handler-latency, medians over the runs); idle exit: /dev/cpu_dma_latency during the run:\n");
        text.push_str(&table(
            &[
                "sniffer",
                "idle exit",
                "pps",
                "received",
                "dropped",
                "p50 µs",
                "p99 µs",
                "p99.9 µs",
                "max µs",
                "CPU ns/pkt",
                "handler p50 / p99 µs",
                "runs",
            ],
            &rows,
            false,
        ));
    }

    /// Modes the kernel refused.
    fn skipped_text(&self, text: &mut String) {
        for s in &self.skipped {
            let _ = writeln!(
                text,
                "skipped {} ({} B, {} flows): {}",
                s.mode, s.frame_bytes, s.flows, s.reason
            );
        }
    }

    /// Instructions per packet under callgrind.
    fn instructions_text(&self, text: &mut String) {
        let Some(ins) = &self.instructions else {
            return;
        };
        let rows: Vec<Vec<String>> = ins
            .iter()
            .map(|i| {
                vec![
                    i.workload.clone(),
                    format!("{:.1}", i.per_packet),
                    i.what.clone(),
                ]
            })
            .collect();
        text.push_str("instructions per packet (valgrind --tool=callgrind, deterministic):\n");
        text.push_str(&table(
            &["workload", "instructions/pkt", "what"],
            &rows,
            false,
        ));
    }

    /// The markdown report (`--markdown`).
    pub fn markdown(&self) -> String {
        let mut md = format!("# rxbench results\n\n{}\n\n", self.machine.line());
        if !self.results.is_empty() {
            md.push_str(&self.results_table(true));
            md.push('\n');
            for l in self.ratio_lines().lines() {
                md.push_str(&format!("- {l}\n"));
            }
        }
        if self.copy.is_some() {
            md.push_str("\n## Copy routines\n\n");
            md.push_str(&self.copy_table(true));
        }
        self.sweep_text(&mut md, true);
        self.generators_text(&mut md, true);
        self.capacity_text(&mut md, true);
        self.skipped_text(&mut md);
        md
    }

    /// `capacity`: see [`crate::capacity::text`].
    fn capacity_text(&self, text: &mut String, markdown: bool) {
        if let Some(c) = &self.capacity {
            text.push_str(&crate::capacity::text::text(c, markdown));
        }
    }

    /// `generators`: per generator and size, the median run by offered rate, and the ratio of
    /// the xdp-live generator's rate to the TX ring's (medians over the runs, same run order).
    fn generators_text(&self, text: &mut String, markdown: bool) {
        let Some(g) = &self.generators else {
            return;
        };
        let _ = writeln!(
            text,
            "\ngenerators, frames to a foreign MAC (the receiving stack drops them), medians over the runs:\n"
        );
        let mut rows = Vec::new();
        for size in dedup(g.iter().map(|p| p.frame_bytes)) {
            let rate = |name: &str| {
                let v: Vec<f64> = g
                    .iter()
                    .filter(|p| p.frame_bytes == size && p.generator == name)
                    .map(|p| p.offered_mpps)
                    .collect();
                (!v.is_empty()).then(|| (median(v.clone()), v))
            };
            for name in dedup(g.iter().map(|p| p.generator.clone())) {
                let Some((m, all)) = rate(&name) else {
                    continue;
                };
                let spread = format!(
                    "{:.2}..{:.2}",
                    all.iter().cloned().fold(f64::MAX, f64::min),
                    all.iter().cloned().fold(0.0, f64::max)
                );
                let ps: Vec<_> = g
                    .iter()
                    .filter(|p| p.frame_bytes == size && p.generator == name)
                    .collect();
                let cpu = median(ps.iter().map(|p| p.cpu_ns_per_frame).collect());
                let napi = median(ps.iter().map(|p| p.napi_ns_per_frame).collect());
                let recv: u64 = ps.iter().map(|p| p.received).sum();
                let drop: u64 = ps.iter().map(|p| p.dropped).sum();
                let sent: u64 = ps.iter().map(|p| p.frames).sum();
                let placement = format!(
                    "gen {} napi {}",
                    cpus(ps.iter().map(|p| p.generator_cpu)),
                    cpus(ps.iter().flat_map(|p| p.napi_cpus.iter().copied()))
                );
                let vs_tx = rate("tx-ring").map_or("-".into(), |(t, _)| format!("{:.2}x", m / t));
                rows.push(vec![
                    size.to_string(),
                    name,
                    format!("{m:.2}"),
                    spread,
                    vs_tx,
                    format!("{cpu:.0}"),
                    format!("{napi:.0}"),
                    format!("{sent}"),
                    format!("{recv}"),
                    format!("{drop}"),
                    placement,
                ]);
            }
        }
        text.push_str(&table(
            &[
                "size",
                "generator",
                "offered Mpps",
                "min..max",
                "vs tx-ring",
                "gen cpu ns/frame",
                "napi ns/frame",
                "sent",
                "received at b",
                "dropped at b",
                "cpus (last seen)",
            ],
            &rows,
            markdown,
        ));
    }

    /// memcmp variants by size and misalignment.
    fn memcmp_text(&self, text: &mut String) {
        let Some(m) = &self.memcmp else {
            return;
        };
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
    }

    /// The flow table against hashbrown by flow count.
    fn table_text(&self, text: &mut String) {
        let Some(t) = &self.table else {
            return;
        };
        let (rounds, processes, seed) = t
            .first()
            .map_or((0, 0, 0), |p| (p.rounds.len(), p.processes, p.seed));
        let _ = writeln!(
            text,
            "extract + track, {rounds} rounds in {processes} processes (each its own memory layout), \
             the contenders taking turns, hash seed {seed}; medians"
        );
        let rows: Vec<Vec<String>> = t
            .iter()
            .map(|p| {
                vec![
                    p.flows.to_string(),
                    p.capacity.to_string(),
                    p.contender.clone(),
                    format!("{:.1}", p.mpps),
                    format!("{:.2}", p.over_hashbrown),
                ]
            })
            .collect();
        text.push_str(&table(
            &[
                "flows",
                "sized for",
                "contender",
                "M pkt/s",
                "over hashbrown (paired)",
            ],
            &rows,
            false,
        ));
    }

    /// remap versus copy by page count, and where each wins.
    fn remap_text(&self, text: &mut String) {
        let Some(r) = &self.remap else {
            return;
        };
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
    }

    /// drain of a pre-filled ring by delivery, and `copy-auto` against the best fixed copy
    /// routine at each size.
    fn drain_text(&self, text: &mut String) {
        let Some(d) = &self.drain else {
            return;
        };
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
    }

    /// sniffers on the same traffic: CPU per packet medians and ratios.
    fn sniff_text(&self, text: &mut String) {
        let Some(sn) = &self.sniff else {
            return;
        };
        let mut rows = Vec::new();
        let mut medians: Vec<(usize, String, f64)> = Vec::new();
        for r in sn {
            if medians
                .iter()
                .any(|m| m.0 == r.frame_bytes && m.1 == r.tool)
            {
                continue;
            }
            let runs: Vec<&crate::run::SniffResult> = sn
                .iter()
                .filter(|x| x.frame_bytes == r.frame_bytes && x.tool == r.tool)
                .collect();
            let cpu = median(runs.iter().map(|x| x.cpu_ns_per_pkt).collect());
            let spread = runs
                .iter()
                .map(|x| x.cpu_ns_per_pkt)
                .fold(f64::INFINITY, f64::min)
                ..=runs.iter().map(|x| x.cpu_ns_per_pkt).fold(0.0, f64::max);
            medians.push((r.frame_bytes, r.tool.clone(), cpu));
            rows.push(vec![
                r.frame_bytes.to_string(),
                r.tool.clone(),
                runs.len().to_string(),
                runs.iter().map(|x| x.sent).sum::<u64>().to_string(),
                runs.iter().map(|x| x.captured).sum::<u64>().to_string(),
                runs.iter().map(|x| x.dropped).sum::<u64>().to_string(),
                format!("{cpu:.0}"),
                format!("{:.0}..{:.0}", spread.start(), spread.end()),
                format!(
                    "{:.0}",
                    median(runs.iter().map(|x| x.machine_ns_per_sent).collect())
                ),
            ]);
        }
        text.push_str(&table(
            &[
                "size",
                "sniffer",
                "runs",
                "sent",
                "captured",
                "dropped",
                "cpu ns/pkt (median)",
                "min..max",
                "machine ns/sent",
            ],
            &rows,
            false,
        ));
        for size in medians
            .iter()
            .map(|m| m.0)
            .collect::<std::collections::BTreeSet<_>>()
        {
            let get = |t: &str| {
                medians
                    .iter()
                    .find(|m| m.0 == size && m.1.starts_with(t))
                    .map(|m| (m.1.as_str(), m.2))
            };
            if let (Some((zn, z)), Some((_, f)), Some((tn, t))) =
                (get("zcap -w"), get("zcap --flows"), get("tcpdump"))
            {
                text.push_str(&format!(
                    "{size} B: CPU per packet, medians: {zn} {:.2}x {tn}; zcap --flows {:.2}x",
                    z / t,
                    f / t
                ));
                if let Some((fwn, fw)) = get("zcap --flows -w") {
                    text.push_str(&format!("; {fwn} {:.2}x", fw / t));
                }
                text.push('\n');
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
            "rx-only ns/deliv",
            "lat p50 µs",
            "p99 µs",
            "p99.9 µs",
            "max µs",
            "flow min..max",
            "mechanism",
            "copied by",
        ];
        let rows: Vec<Vec<String>> = self
            .results
            .iter()
            .map(|r| {
                // No receive timestamp in this mode (af-xdp, pnet): no latency, not zero.
                let lat = |ns: u64| {
                    if r.latency.samples == 0 {
                        "n/a".to_string()
                    } else {
                        format!("{:.1}", ns as f64 / 1000.0)
                    }
                };
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
                    r.receive_ns_per_delivered
                        .map_or("-".into(), |v| format!("{v:.0}")),
                    lat(r.latency.p50_ns),
                    lat(r.latency.p99_ns),
                    lat(r.latency.p999_ns),
                    lat(r.latency.max_ns),
                    format!("{}..{}", r.flow_min, r.flow_max),
                    r.mechanism.clone(),
                    r.copied.clone(),
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
                "{} B: ring-zerocopy / {}: machine CPU per delivered packet {:.2}x, per sent packet {:.2}x, receive cost without the generator's {}",
                r.frame_bytes,
                r.versus,
                r.machine_per_delivered,
                r.machine_per_sent,
                r.receive_per_delivered
                    .map_or("n/a".into(), |v| format!("{v:.2}x"))
            );
        }
        s
    }

    /// The copy tables.
    pub fn copy_table(&self, markdown: bool) -> String {
        let Some(c) = &self.copy else {
            return String::new();
        };
        let routines = dedup(c.points.iter().map(|p| p.routine.clone()));
        let mut header: Vec<String> = vec!["size".into(), "dest".into()];
        header.extend(routines.iter().map(|r| format!("{r} GB/s")));
        header.push("best".into());
        header.push("auto/best".into());
        header.push("auto/same code (noise)".into());
        let sizes = dedup(c.points.iter().map(|p| p.size));
        let mut rows = Vec::new();
        for size in sizes {
            for dest in crate::micro::COPY_DESTS {
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
        out
    }
}

/// The distinct items, in first-seen order.
/// Sets each result's `receive_ns_per_delivered` from baseline-tx at the same size and flow
/// count in the same list.
fn net_of_baseline(results: &mut [ModeResult]) {
    let baselines: Vec<(usize, usize, f64)> = results
        .iter()
        .filter(|r| !r.receives)
        .map(|r| (r.frame_bytes, r.flows, r.machine_ns_per_sent))
        .collect();
    for r in results.iter_mut().filter(|r| r.receives && r.delivered > 0) {
        r.receive_ns_per_delivered = baselines
            .iter()
            .find(|b| b.0 == r.frame_bytes && b.1 == r.flows)
            .map(|b| r.machine_ns_per_delivered - b.2);
    }
}

/// The distinct CPUs in `seen` ("?" for a task that could not be read), e.g. "0" or "0,1".
fn cpus(seen: impl Iterator<Item = Option<usize>>) -> String {
    dedup(seen.map(|c| c.map_or("?".to_string(), |c| c.to_string()))).join(",")
}
