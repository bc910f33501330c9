//! `perf-summary`: the summary table at the top of `docs/PERFORMANCE.md`, generated from the
//! recorded runs in `bench/results/<date>-<machine>/`.
//!
//! Each row answers one question from the latest file of its kind (the folders sort by
//! date, so the last folder holding the file wins): `saturation.json` (capacity, the
//! sniffers at saturation, the generators), `rxbench.json` (CPU per packet of the receive
//! paths), `sniff.json` (the sniffers' CPU per packet), `table.json` (the flow table against
//! hashbrown) and the instruction counts (the newest `instructions.json` by its run's time).
//! Medians are taken over a file's repeated runs, as rxbench's own report takes them.
//!
//! ```text
//! cargo run -p zcrx-bench --bin perf-summary                                # print the table
//! cargo run -p zcrx-bench --bin perf-summary -- --write docs/PERFORMANCE.md # replace it there
//! cargo run -p zcrx-bench --bin perf-summary -- --check docs/PERFORMANCE.md # fail if stale
//! ```
//!
//! `--write` and `--check` work on the text between `<!-- summary:begin -->` and
//! `<!-- summary:end -->`; `--check` exits with status 1 and the differing lines when
//! regenerating would change it.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::Parser;
use serde::de::DeserializeOwned;
use serde::Deserialize;

/// The marker that opens the generated table in the document.
const BEGIN: &str = "<!-- summary:begin -->";
/// The marker that closes it.
const END: &str = "<!-- summary:end -->";
/// How the document links a results file: `docs/` is one level below the repository.
const LINK_PREFIX: &str = "../bench/results";

/// The command line.
#[derive(Parser, Debug)]
#[command(
    about = "The summary table of docs/PERFORMANCE.md, from the recorded runs in bench/results"
)]
struct Args {
    /// The folder of recorded runs.
    #[arg(long, value_name = "DIR", default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/results"))]
    results: PathBuf,
    /// Replace the table between the summary markers of FILE.
    #[arg(long, value_name = "FILE", conflicts_with = "check")]
    write: Option<PathBuf>,
    /// Exit non-zero, with the differing lines, if regenerating would change FILE's table.
    #[arg(long, value_name = "FILE")]
    check: Option<PathBuf>,
}

/// The machine block every rxbench report starts with (`bench/report.schema.json`).
#[derive(Deserialize)]
struct Machine {
    cpu_model: String,
    cores: u32,
    /// `YYYY-MM-DDTHH:MM:SSZ`.
    date: String,
}

/// One search of `rxbench capacity`/`saturation`.
#[derive(Deserialize)]
struct Search {
    mode: String,
    frame_bytes: u32,
    flows: u32,
    loss_allowed: f64,
    rate_mpps: f64,
}

/// One generator run of `rxbench generators`/`saturation`.
#[derive(Deserialize)]
struct GeneratorRun {
    generator: String,
    frame_bytes: u32,
    offered_mpps: f64,
}

/// `saturation.json`.
#[derive(Deserialize)]
struct Saturation {
    machine: Machine,
    capacity: Vec<Search>,
    generators: Vec<GeneratorRun>,
}

/// One mode and frame size of the main `rxbench` run.
#[derive(Deserialize)]
struct ModeResult {
    mode: String,
    frame_bytes: u32,
    machine_ns_per_delivered: f64,
}

/// `rxbench.json`.
#[derive(Deserialize)]
struct Receive {
    machine: Machine,
    results: Vec<ModeResult>,
}

/// One sniffer run of `rxbench sniff`.
#[derive(Deserialize)]
struct SniffRun {
    tool: String,
    frame_bytes: u32,
    cpu_ns_per_pkt: f64,
}

/// `sniff.json`.
#[derive(Deserialize)]
struct Sniff {
    machine: Machine,
    sniff: Vec<SniffRun>,
}

/// One contender of `rxbench table`.
#[derive(Deserialize)]
struct TableRow {
    flows: u32,
    contender: String,
    over_hashbrown: f64,
}

/// `table.json`.
#[derive(Deserialize)]
struct Table {
    machine: Machine,
    table: Vec<TableRow>,
}

/// One workload of `rxbench instructions`.
#[derive(Deserialize)]
struct Workload {
    workload: String,
    per_packet: f64,
}

/// `instructions.json`.
#[derive(Deserialize)]
struct Instructions {
    machine: Machine,
    instructions: Vec<Workload>,
}

/// A results file found: its folder's name and its path.
struct Found {
    folder: String,
    path: PathBuf,
}

impl Found {
    /// The markdown link to the file, relative to `docs/`.
    fn link(&self) -> String {
        let name = self.path.file_name().unwrap_or_default().to_string_lossy();
        format!(
            "[`{}/{name}`]({LINK_PREFIX}/{}/{name})",
            self.folder, self.folder
        )
    }
}

/// One line of the table.
struct Row {
    question: &'static str,
    figure: String,
    baseline: String,
    command: &'static str,
    run: String,
    raw: String,
}

/// The recorded runs: every folder under `bench/results`, in date order.
struct Results {
    folders: Vec<(String, PathBuf)>,
}

impl Results {
    fn open(dir: &Path) -> Result<Self> {
        let mut folders = Vec::new();
        for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
            let entry = entry?;
            if entry.file_type()?.is_dir() {
                folders.push((
                    entry.file_name().to_string_lossy().into_owned(),
                    entry.path(),
                ));
            }
        }
        // Folder names start with the date (`<YYYY-MM-DD>-<machine>`), so they sort by it.
        folders.sort();
        Ok(Results { folders })
    }

    /// The latest file named `name`.
    fn latest(&self, name: &str) -> Result<Found> {
        self.folders
            .iter()
            .rev()
            .map(|(folder, path)| Found {
                folder: folder.clone(),
                path: path.join(name),
            })
            .find(|f| f.path.is_file())
            .with_context(|| format!("no {name} under bench/results"))
    }
}

fn read_json<T: DeserializeOwned>(found: &Found) -> Result<T> {
    let text = std::fs::read_to_string(&found.path)
        .with_context(|| format!("reading {}", found.path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("parsing {}", found.path.display()))
}

/// The median of repeated runs (the lower middle of an even count, as rxbench's report).
fn median(mut values: Vec<f64>) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    Some(values[(values.len() - 1) / 2])
}

/// `"cpu_model, N CPUs, YYYY-MM-DD HH:MM"` of a report.
fn run_of(machine: &Machine) -> String {
    let when = machine
        .date
        .get(..16)
        .unwrap_or(&machine.date)
        .replace('T', " ");
    format!("{}, {} CPUs, {when}", machine.cpu_model, machine.cores)
}

/// Group-and-median lookups over a saturation run's zero-loss searches.
struct ZeroLoss<'a>(&'a [Search]);

impl ZeroLoss<'_> {
    fn rate(&self, mode: &str, bytes: u32, flows: u32) -> Result<f64> {
        let rates = self
            .0
            .iter()
            .filter(|s| s.mode == mode && s.frame_bytes == bytes && s.flows == flows)
            .filter(|s| s.loss_allowed == 0.0)
            .map(|s| s.rate_mpps)
            .collect();
        median(rates)
            .with_context(|| format!("no zero-loss search of {mode} at {bytes} B, {flows} flows"))
    }

    /// The flow counts searched for `mode` at `bytes`, with their median rates.
    fn by_flows(&self, mode: &str, bytes: u32) -> Result<BTreeMap<u32, f64>> {
        let mut flows: Vec<u32> = self
            .0
            .iter()
            .filter(|s| s.mode == mode && s.frame_bytes == bytes)
            .map(|s| s.flows)
            .collect();
        flows.sort_unstable();
        flows.dedup();
        flows
            .into_iter()
            .map(|f| Ok((f, self.rate(mode, bytes, f)?)))
            .collect()
    }
}

fn capacity_rows(results: &Results, rows: &mut Vec<Row>) -> Result<()> {
    let found = results.latest("saturation.json")?;
    let sat: Saturation = read_json(&found)?;
    let zero = ZeroLoss(&sat.capacity);
    let run = run_of(&sat.machine);
    let row = |question, figure, baseline| Row {
        question,
        figure,
        baseline,
        command: "`./scripts/demo.sh saturation`",
        run: run.clone(),
        raw: found.link(),
    };
    for (question, bytes) in [
        ("capacity, 64 B, 256 flows (zero loss)", 64),
        ("capacity, 512 B, 256 flows (zero loss)", 512),
        ("capacity, 1400 B, 256 flows (zero loss)", 1400),
    ] {
        let (figure, baseline) = zero_loss_at(&zero, bytes)?;
        rows.push(row(question, figure, baseline));
    }
    rows.push(row(
        "capacity over flow counts, 64 B (zero loss)",
        over_flow_counts(&zero)?,
        "each mode's own best flow count".into(),
    ));
    let zcap = zero.rate("zcap -w /dev/null", 64, 256)?;
    let tcpdump = zero.rate("tcpdump -w /dev/null", 64, 256)?;
    rows.push(row(
        "sniffers at saturation, 64 B, 256 flows (zero loss)",
        format!(
            "zcap -w /dev/null **{zcap:.3} Mpps**, **{:.2}x** tcpdump",
            zcap / tcpdump
        ),
        format!("tcpdump -w /dev/null {tcpdump:.3}, the same ring memory"),
    ));
    let offered = |generator: &str| {
        let rates = sat
            .generators
            .iter()
            .filter(|g| g.generator == generator && g.frame_bytes == 64)
            .map(|g| g.offered_mpps)
            .collect();
        median(rates).with_context(|| format!("no {generator} run at 64 B"))
    };
    let (xdp_live, tx_ring) = (offered("xdp-live")?, offered("tx-ring")?);
    rows.push(row(
        "generators, 64 B",
        format!(
            "xdp-live **{xdp_live:.2} Mpps**, **{:.2}x** the TX ring",
            xdp_live / tx_ring
        ),
        format!("the TX ring {tx_ring:.2}"),
    ));
    Ok(())
}

/// The ring's zero-loss rate at 256 flows against recvmmsg and the ceiling: figure, baseline.
fn zero_loss_at(zero: &ZeroLoss<'_>, bytes: u32) -> Result<(String, String)> {
    let ring = zero.rate("ring-zerocopy", bytes, 256)?;
    let mmsg = zero.rate("sockets-recvmmsg", bytes, 256)?;
    let ceiling = zero.rate("baseline-tx", bytes, 256)?;
    let xdp = zero.rate("af-xdp", bytes, 256)?;
    Ok((
        format!(
            "ring-zerocopy **{ring:.3} Mpps**: **{:.2}x** recvmmsg, **{:.2}x** the ceiling; af-xdp {xdp:.3}",
            ring / mmsg,
            ring / ceiling
        ),
        format!("sockets-recvmmsg {mmsg:.3}; baseline-tx (the ceiling) {ceiling:.3}"),
    ))
}

/// Each mode's zero-loss rate at its most flows against its best flow count, at 64 B.
fn over_flow_counts(zero: &ZeroLoss<'_>) -> Result<String> {
    let mut figure = String::new();
    for mode in ["sockets-recvmmsg", "ring-zerocopy", "af-xdp"] {
        let rates = zero.by_flows(mode, 64)?;
        let (best_flows, best) = rates
            .iter()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .map(|(f, r)| (*f, *r))
            .with_context(|| format!("no flow counts for {mode}"))?;
        let (most_flows, at_most) = rates
            .iter()
            .next_back()
            .map(|(f, r)| (*f, *r))
            .unwrap_or_default();
        if !figure.is_empty() {
            figure.push_str("; ");
        }
        let _ = write!(
            figure,
            "{mode} {at_most:.3} at {most_flows}, **{:.2}x** its best ({best:.3} at {best_flows})",
            at_most / best
        );
    }
    Ok(figure)
}

fn receive_row(results: &Results, rows: &mut Vec<Row>) -> Result<()> {
    let found = results.latest("rxbench.json")?;
    let rx: Receive = read_json(&found)?;
    let ns = |mode: &str, bytes: u32| {
        rx.results
            .iter()
            .find(|r| r.mode == mode && r.frame_bytes == bytes)
            .map(|r| r.machine_ns_per_delivered)
            .with_context(|| format!("no {mode} at {bytes} B in {}", found.path.display()))
    };
    let mut figure = String::new();
    let mut baseline = String::new();
    for bytes in [64, 512, 1400] {
        let (ring, msg) = (ns("ring-zerocopy", bytes)?, ns("sockets-recvmsg", bytes)?);
        let mmsg = ns("sockets-recvmmsg", bytes)?;
        let sep = if figure.is_empty() { "" } else { "; " };
        let _ = write!(
            figure,
            "{sep}{bytes} B: ring-zerocopy {ring:.0} ns, **{:.2}x** recvmsg, {:.2}x recvmmsg",
            ring / msg,
            ring / mmsg
        );
        let _ = write!(
            baseline,
            "{sep}{bytes} B: recvmsg {msg:.0}, recvmmsg {mmsg:.0}"
        );
    }
    rows.push(Row {
        question: "CPU per packet, receive paths, 256 flows (machine CPU a delivered packet, below capacity)",
        figure,
        baseline,
        command: "`sudo ./scripts/demo.sh`",
        run: run_of(&rx.machine),
        raw: found.link(),
    });
    Ok(())
}

fn sniff_row(results: &Results, rows: &mut Vec<Row>) -> Result<()> {
    let found = results.latest("sniff.json")?;
    let sniff: Sniff = read_json(&found)?;
    let cpu = |tool: &str, bytes: u32| {
        let runs = sniff
            .sniff
            .iter()
            .filter(|s| s.tool == tool && s.frame_bytes == bytes)
            .map(|s| s.cpu_ns_per_pkt)
            .collect();
        median(runs)
            .with_context(|| format!("no {tool} run at {bytes} B in {}", found.path.display()))
    };
    let mut figure = String::new();
    let mut baseline = String::new();
    for bytes in [64, 1400] {
        let (zcap, tcpdump) = (
            cpu("zcap -w /dev/null", bytes)?,
            cpu("tcpdump -w /dev/null", bytes)?,
        );
        let sep = if figure.is_empty() { "" } else { "; " };
        let _ = write!(
            figure,
            "{sep}{bytes} B: zcap -w /dev/null {zcap:.1} ns, **{:.2}x** tcpdump",
            zcap / tcpdump
        );
        let _ = write!(
            baseline,
            "{sep}{bytes} B: tcpdump -w /dev/null {tcpdump:.1}"
        );
    }
    rows.push(Row {
        question: "sniffer CPU per packet, 256 flows",
        figure,
        baseline,
        command: "`rxbench sniff`",
        run: run_of(&sniff.machine),
        raw: found.link(),
    });
    Ok(())
}

fn table_row(results: &Results, rows: &mut Vec<Row>) -> Result<()> {
    let found = results.latest("table.json")?;
    let table: Table = read_json(&found)?;
    let ratio = |contender: &str, flows: u32| {
        table
            .table
            .iter()
            .find(|t| t.contender == contender && t.flows == flows)
            .map(|t| t.over_hashbrown)
            .with_context(|| {
                format!(
                    "no {contender} at {flows} flows in {}",
                    found.path.display()
                )
            })
    };
    rows.push(Row {
        question: "flow table, extract + track, 64 B",
        figure: format!(
            "`track` **{:.2}x** hashbrown at 256 flows; `track_batch` (THP) **{:.2}x** at 64 Ki, **{:.2}x** at 1 Mi flows",
            ratio("flowtable", 256)?,
            ratio("flowtable-batch-thp", 65_536)?,
            ratio("flowtable-batch-thp", 1_048_576)?
        ),
        baseline: "hashbrown + foldhash doing the table's accounting".into(),
        command: "`rxbench table`",
        run: run_of(&table.machine),
        raw: found.link(),
    });
    Ok(())
}

fn instructions_row(results: &Results, rows: &mut Vec<Row>) -> Result<()> {
    // The newest run by its own time stamp: several machines may record runs on one date.
    let mut newest: Option<(Found, Instructions)> = None;
    for (folder, path) in &results.folders {
        let found = Found {
            folder: folder.clone(),
            path: path.join("instructions.json"),
        };
        if !found.path.is_file() {
            continue;
        }
        let report: Instructions = read_json(&found)?;
        if newest
            .as_ref()
            .is_none_or(|(_, n)| n.machine.date < report.machine.date)
        {
            newest = Some((found, report));
        }
    }
    let (found, report) = newest.context("no instructions.json under bench/results")?;
    let run = run_of(&report.machine);
    let counts: BTreeMap<String, f64> = report
        .instructions
        .into_iter()
        .map(|w| (w.workload, w.per_packet))
        .collect();
    let count = |workload: &str| {
        counts
            .get(workload)
            .copied()
            .with_context(|| format!("no {workload} in {}", found.path.display()))
    };
    rows.push(Row {
        question: "instructions a packet (callgrind), 256 flows, 64 B",
        figure: format!(
            "stage **{:.1}** (inline consumer), {:.1} with a consumer thread, {:.1} without flows; zcap -w's walk and writer {:.1}; extract + track {:.1}",
            count("stage")?,
            count("stage-threaded")?,
            count("stage-steering-off")?,
            count("zcap-writer")?,
            count("flowtable-256")?
        ),
        baseline: format!("hashbrown + foldhash, the table's accounting, {:.1}", count("hashbrown-256")?),
        command: "`rxbench instructions`",
        run,
        raw: found.link(),
    });
    Ok(())
}

/// The markdown table, without the markers.
fn summary(results: &Results) -> Result<String> {
    let mut rows = Vec::new();
    capacity_rows(results, &mut rows)?;
    receive_row(results, &mut rows)?;
    sniff_row(results, &mut rows)?;
    table_row(results, &mut rows)?;
    instructions_row(results, &mut rows)?;
    let mut out = String::from(
        "| question | latest figure | baseline (same run) | command | machine, run (UTC) | raw results |\n\
         |---|---|---|---|---|---|\n",
    );
    for r in rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            r.question, r.figure, r.baseline, r.command, r.run, r.raw
        );
    }
    Ok(out)
}

/// The document's text between the markers, and the text before and after it.
fn split(doc: &str) -> Result<(&str, &str, &str)> {
    let Some(begin) = doc.find(BEGIN) else {
        bail!("no {BEGIN} marker")
    };
    let inner_start = begin + BEGIN.len();
    let Some(end) = doc[inner_start..].find(END).map(|e| inner_start + e) else {
        bail!("no {END} marker after {BEGIN}")
    };
    Ok((&doc[..inner_start], &doc[inner_start..end], &doc[end..]))
}

/// The block between the markers as `--write` puts it.
fn block(table: &str) -> String {
    format!("\n{table}")
}

/// A line-by-line account of what regenerating would change.
fn differences(old: &str, new: &str) -> String {
    let (old, new): (Vec<&str>, Vec<&str>) = (old.lines().collect(), new.lines().collect());
    let mut out = String::new();
    for i in 0..old.len().max(new.len()) {
        let (o, n) = (old.get(i), new.get(i));
        if o != n {
            let _ = writeln!(out, "@@ line {} of the summary", i + 1);
            if let Some(o) = o {
                let _ = writeln!(out, "- {o}");
            }
            if let Some(n) = n {
                let _ = writeln!(out, "+ {n}");
            }
        }
    }
    out
}

fn run(args: &Args) -> Result<ExitCode> {
    let table = summary(&Results::open(&args.results)?)?;
    let Some(file) = args.write.as_ref().or(args.check.as_ref()) else {
        print!("{table}");
        return Ok(ExitCode::SUCCESS);
    };
    let doc =
        std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    let (before, inner, after) = split(&doc).with_context(|| file.display().to_string())?;
    let fresh = block(&table);
    if args.write.is_some() {
        if inner != fresh {
            std::fs::write(file, format!("{before}{fresh}{after}"))
                .with_context(|| format!("writing {}", file.display()))?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    if inner == fresh {
        return Ok(ExitCode::SUCCESS);
    }
    eprintln!(
        "{}: the summary is not what bench/results gives; \
         run `cargo run -p zcrx-bench --bin perf-summary -- --write {}`\n{}",
        file.display(),
        file.display(),
        differences(inner, &fresh)
    );
    Ok(ExitCode::FAILURE)
}

fn main() -> ExitCode {
    match run(&Args::parse()) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("perf-summary: {e:#}");
            ExitCode::from(2)
        }
    }
}
