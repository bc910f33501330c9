//! Everything a run measured ([`Report`], written as JSON), and its text and markdown: each
//! measurement formats its own section; this module puts them in order.

use std::fmt::Write as _;

use serde::Serialize;

use crate::lab::generator::{self, GeneratorPoint};
use crate::lab::machine::Machine;
use crate::measure::capacity::CapacityPoint;
use crate::measure::instructions::{self, Instructions};
use crate::measure::micro::{self, CopyReport, DrainPoint, MemcmpPoint, RemapReport};
use crate::measure::print_file::{self, PrintFileReport};
use crate::measure::run::{
    self, ModeResult, Ratio, RunConfig, Skipped, SniffLatency, SniffPrint, SniffResult,
};
use crate::measure::table::TablePoint;
use crate::report::text::dedup;

/// Everything a run measured. Schema: `bench/report.schema.json`.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The version of `bench/report.schema.json` this report follows.
    pub schema: u32,
    /// The machine it ran on.
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
    pub table: Option<Vec<TablePoint>>,
    /// `remap` sub-command.
    pub remap: Option<RemapReport>,
    /// `drain` sub-command.
    pub drain: Option<Vec<DrainPoint>>,
    /// `sniff` sub-command.
    pub sniff: Option<Vec<SniffResult>>,
    /// `instructions` sub-command.
    pub instructions: Option<Vec<Instructions>>,
    /// `sniff --latency`.
    pub sniff_latency: Option<Vec<SniffLatency>>,
    /// `sniff --print`.
    pub sniff_print: Option<Vec<SniffPrint>>,
    /// `print-file` sub-command.
    pub print_file: Option<PrintFileReport>,
    /// `sweep` sub-command: every mode at every flow count (distinct source addresses).
    pub sweep: Option<Vec<ModeResult>>,
    /// `generators` sub-command.
    pub generators: Option<Vec<GeneratorPoint>>,
    /// `capacity` sub-command.
    pub capacity: Option<Vec<CapacityPoint>>,
    /// `tcp-rx` sub-command.
    pub tcp_rx: Option<crate::measure::tcp_rx::TcpRxReport>,
    /// Modes that could not run on this machine, and why (never faked).
    pub skipped: Vec<Skipped>,
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
            sniff_print: None,
            print_file: None,
            sweep: None,
            generators: None,
            capacity: None,
            tcp_rx: None,
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

    /// Everything measured, as the text rxbench prints (after `header`); the main table with
    /// every column if `wide`.
    pub fn text(&self, header: &str, wide: bool) -> String {
        let mut text = header.to_string();
        if !self.results.is_empty() {
            text.push_str(&run::text::table_text(&self.results, false, wide));
            text.push('\n');
            text.push_str(&run::text::ratio_lines(&self.ratios));
            text.push_str(&run::text::path_lines(&self.results));
        }
        if let Some(c) = &self.copy {
            text.push('\n');
            text.push_str(&micro::text::copy_table(c, false));
        }
        let sections = [
            self.memcmp.as_deref().map(micro::text::memcmp_text),
            self.table.as_deref().map(crate::measure::table::text),
            self.remap.as_ref().map(micro::text::remap_text),
            self.drain.as_deref().map(micro::text::drain_text),
            self.sniff.as_deref().map(run::sniff_text),
            self.instructions.as_deref().map(instructions::text::text),
            self.sniff_latency.as_deref().map(run::sniff_latency_text),
            self.sniff_print.as_deref().map(run::sniff_print_text),
            self.print_file.as_ref().map(print_file::text),
        ];
        text.extend(sections.into_iter().flatten());
        self.shared_sections(&mut text, false);
        text
    }

    /// The markdown report (`--markdown`): every table with every column.
    pub fn markdown(&self) -> String {
        let mut md = format!("# rxbench results\n\n{}\n\n", self.machine.line());
        if !self.results.is_empty() {
            md.push_str(&run::text::table_text(&self.results, true, true));
            md.push('\n');
            for l in run::text::ratio_lines(&self.ratios).lines() {
                md.push_str(&format!("- {l}\n"));
            }
            for l in run::text::path_lines(&self.results).lines() {
                md.push_str(&format!("- {l}\n"));
            }
        }
        if let Some(c) = &self.copy {
            md.push_str("\n## Copy routines\n\n");
            md.push_str(&micro::text::copy_table(c, true));
        }
        self.shared_sections(&mut md, true);
        md
    }

    /// The sections the text and the markdown share: the sweep, the generators, the capacity
    /// searches, then the modes the kernel refused.
    fn shared_sections(&self, text: &mut String, markdown: bool) {
        if let Some(s) = &self.sweep {
            text.push_str(&crate::measure::sweep::text::text(s, markdown));
        }
        if let Some(g) = &self.generators {
            text.push_str(&generator::text(g, markdown));
        }
        if let Some(c) = &self.capacity {
            text.push_str(&crate::measure::capacity::text::text(c, markdown));
        }
        if let Some(t) = &self.tcp_rx {
            text.push_str(&crate::measure::tcp_rx::text::text(t, markdown));
        }
        for s in &self.skipped {
            let _ = writeln!(
                text,
                "skipped {} ({} B, {} flows): {}",
                s.mode, s.frame_bytes, s.flows, s.reason
            );
        }
    }
}

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
