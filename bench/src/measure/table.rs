//! The flow table against hashbrown+foldhash, interleaved: each round, every contender
//! extracts and tracks the same slices of the same packet stream, taking turns slice by
//! slice in a new order, so that the machine's load (which moves these figures 10-30 % from
//! one criterion benchmark to the next here) falls on all of them alike; the report gives
//! each contender's median rate and, per round, its rate over hashbrown's (median of the
//! paired ratios). Criterion's `extract_track` measures the same work one benchmark after
//! another.

use std::fmt::Write as _;
use std::hint::black_box;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use zcrx_flowcache::{
    extract, Extracted, FlowKey, FlowStats, FlowTable, FlowTableConfig, LinkType, TrackInput,
};

use crate::measure::instructions::{hashbrown_account, hashbrown_count, id_value};
use crate::report::stats::{median, paired, shuffled};

/// The contenders, in report order; the last is the baseline. `flowtable-vec-thp` and
/// `flowtable-batch-thp` extract a chunk of packets into an array of inputs first, then call
/// `track` on each and `track_batch` once over it: the pair says what `track_batch` costs or
/// saves over `track` in the same loop. `hashbrown-foldhash` does exactly the table's
/// accounting (`account_as_the_table`); `hashbrown-foldhash-counts` a lighter one (no TCP
/// flags, the last time stored, not compared), to show what that extra work costs.
pub const CONTENDERS: [&str; 5] = [
    "flowtable",
    "flowtable-vec-thp",
    "flowtable-batch-thp",
    "hashbrown-foldhash-counts",
    "hashbrown-foldhash",
];

/// One contender at one flow count.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TablePoint {
    /// Flows in the stream.
    pub flows: u32,
    /// Flows every contender was sized for (the tables' capacity before rounding up to a
    /// power of two, hashbrown's `with_capacity`).
    pub capacity: usize,
    /// One of [`CONTENDERS`].
    pub contender: String,
    /// Median over rounds, million packets per second (extract + track).
    pub mpps: f64,
    /// Median over rounds of this contender's rate over hashbrown's in the same round.
    pub over_hashbrown: f64,
    /// The seed of every contender's hash.
    pub seed: u64,
    /// Processes the rounds came from (each its own memory layout).
    pub processes: usize,
    /// Each round's rate, M packets/s (process by process).
    pub rounds: Vec<f64>,
}

/// Packets per slice: a contender's turn.
const SLICE: usize = 16_384;
/// Timed slices per contender and round (plus one untimed first).
const SLICES: usize = 8;

/// A hashbrown map doing the accounting the criterion bench's baseline does, its foldhash
/// keyed with a given seed rather than a random one, so that a run can be repeated exactly.
/// Its speed still depends on the process's memory layout, whatever the seed: hence
/// `--processes`.
type Baseline = hashbrown::HashMap<FlowKey, FlowStats, foldhash::fast::FixedState>;

/// The contenders' state: a table each, one stream, one position in it each.
struct Contenders<'a> {
    frames: &'a [u8],
    len: usize,
    count: usize,
    each: FlowTable,
    listed: FlowTable,
    batched: FlowTable,
    batch: Vec<TrackInput>,
    counts: Baseline,
    map: Baseline,
    pos: [usize; CONTENDERS.len()],
}

/// Packet `i` of the stream (which repeats) and what extraction makes of it.
#[inline(always)]
fn packet(frames: &[u8], count: usize, len: usize, i: usize) -> (&[u8], Extracted) {
    let f = &frames[(i % count) * 64..][..len];
    (f, extract(LinkType::Ethernet, f, None).expect("our frames"))
}

impl Contenders<'_> {
    /// Before timing: every contender holds the same flows, and the table's counters equal
    /// the map's doing the same accounting field by field (`closed`, which the table derives
    /// from the flags, aside); the lighter map's packets and bytes too.
    fn check_same_counters(&self) -> Result<()> {
        let live = self.map.len();
        if self.each.len() != live
            || self.listed.len() != live
            || self.batched.len() != live
            || self.counts.len() != live
        {
            bail!(
                "table: {}, {} and {} flows tracked, hashbrown {live} and {}",
                self.each.len(),
                self.listed.len(),
                self.batched.len(),
                self.counts.len()
            );
        }
        for (key, s) in self.map.iter().take(1000) {
            let stats = |t: &FlowTable| {
                t.lookup(key).map(|(_, st)| {
                    let mut stats = st;
                    stats.closed = false;
                    stats
                })
            };
            let light = self.counts.get(key).map(|l| (l.packets, l.bytes));
            if stats(&self.each) != Some(*s)
                || stats(&self.listed) != Some(*s)
                || stats(&self.batched) != Some(*s)
                || light != Some((s.packets, s.bytes))
            {
                bail!("table: the contenders' counters of {key:?} differ");
            }
        }
        Ok(())
    }

    /// Contender `c` extracts and tracks the next `n` packets of its position.
    fn run(&mut self, c: usize, n: usize) {
        let start = self.pos[c];
        self.pos[c] += n;
        let (frames, count, len) = (self.frames, self.count, self.len);
        match c {
            // The tables' answer, each packet's flow id, is used (summed) as a caller would,
            // not stored through `black_box` packet by packet: that store (and the compiler's
            // keeping the extraction's result in memory for it) would be a cost only the
            // tables pay, the maps returning nothing.
            0 => {
                let mut ids = 0usize;
                for i in start..start + n {
                    let (f, x) = packet(frames, count, len, i);
                    ids += id_value(
                        self.each
                            .track(TrackInput {
                                key: x.key,
                                len: f.len() as u32,
                                ts_ns: i as u64,
                                tcp_flags: x.tcp_flags,
                            })
                            .id,
                    );
                }
                black_box(ids);
            }
            1 | 2 => {
                for chunk_start in (start..start + n).step_by(self.batch.len()) {
                    let m = self.batch.len().min(start + n - chunk_start);
                    for (k, p) in self.batch[..m].iter_mut().enumerate() {
                        let i = chunk_start + k;
                        let (f, x) = packet(frames, count, len, i);
                        *p = TrackInput {
                            key: x.key,
                            len: f.len() as u32,
                            ts_ns: i as u64,
                            tcp_flags: x.tcp_flags,
                        };
                    }
                    let mut ids = 0usize;
                    if c == 1 {
                        for p in &self.batch[..m] {
                            ids += id_value(self.listed.track(*p).id);
                        }
                    } else {
                        self.batched.track_batch(&self.batch[..m], |_, t| {
                            ids += id_value(t.id);
                        });
                    }
                    black_box(ids);
                }
            }
            3 => {
                for i in start..start + n {
                    let (f, x) = packet(frames, count, len, i);
                    hashbrown_count(&mut self.counts, x.key, f.len() as u32, i as u64);
                }
            }
            _ => {
                for i in start..start + n {
                    let (f, x) = packet(frames, count, len, i);
                    hashbrown_account(&mut self.map, x.key, f.len() as u32, i as u64, x.tcp_flags);
                }
            }
        }
    }
}

/// Runs `rounds` rounds at each flow count, the tables' and hashbrown's hashes keyed with
/// `seed`, every contender sized for `capacity` flows (twice the flow count if `None`).
pub fn table(
    flows: &[u32],
    rounds: usize,
    seed: u64,
    capacity: Option<usize>,
) -> Result<Vec<TablePoint>> {
    let mut out = Vec::new();
    for &f in flows {
        let capacity = capacity.unwrap_or(f as usize * 2);
        let (frames, len) = crate::measure::instructions::stream(f);
        let count = frames.len() / 64;
        let config = |prepare_memory| {
            FlowTableConfig::with_capacity(capacity)
                .with_seed(Some(seed))
                .with_prepare_memory(prepare_memory)
        };
        let baseline = || {
            Baseline::with_capacity_and_hasher(
                capacity,
                foldhash::fast::FixedState::with_seed(seed),
            )
        };
        let mut c = Contenders {
            frames: &frames,
            len,
            count,
            each: FlowTable::new(config(None)).expect("capacity within MAX_CAPACITY"),
            listed: FlowTable::new(config(Some(zcrx_ring::advise_huge_pages)))
                .expect("capacity within MAX_CAPACITY"),
            batched: FlowTable::new(config(Some(zcrx_ring::advise_huge_pages)))
                .expect("capacity within MAX_CAPACITY"),
            batch: vec![TrackInput::default(); 4096],
            counts: baseline(),
            map: baseline(),
            pos: [0; CONTENDERS.len()],
        };
        // One whole pass each first (untimed): every flow exists, the tables are warm; then
        // the same flows and packets counted by all.
        for k in 0..CONTENDERS.len() {
            c.run(k, count);
        }
        c.check_same_counters()?;
        let mut rates: Vec<Vec<f64>> = vec![Vec::new(); CONTENDERS.len()];
        for round in 0..rounds {
            let mut secs = [0.0f64; CONTENDERS.len()];
            for slice in 0..=SLICES {
                for k in shuffled(CONTENDERS.len(), round * (SLICES + 1) + slice) {
                    let t = Instant::now();
                    c.run(k, SLICE);
                    if slice > 0 {
                        secs[k] += t.elapsed().as_secs_f64();
                    }
                }
            }
            for (r, s) in rates.iter_mut().zip(secs) {
                r.push((SLICE * SLICES) as f64 / s / 1e6);
            }
        }
        let base = &rates[CONTENDERS.len() - 1];
        for (name, r) in CONTENDERS.iter().zip(&rates) {
            out.push(TablePoint {
                flows: f,
                capacity,
                contender: name.to_string(),
                mpps: median(r.clone()),
                over_hashbrown: paired(r, base),
                seed,
                processes: 1,
                rounds: r.clone(),
            });
        }
        eprintln!("table: {f} flows done");
    }
    Ok(out)
}

/// [`table`] in `processes` processes of rxbench, one after another, each with `rounds`
/// rounds: every figure is then the median over all their rounds (each round's ratio paired
/// within its process), so that no one memory layout decides it.
pub fn in_processes(
    processes: usize,
    flows: &[u32],
    rounds: usize,
    seed: u64,
    capacity: Option<usize>,
) -> Result<Vec<TablePoint>> {
    let exe = std::env::current_exe().context("finding rxbench itself")?;
    let flows_arg = flows
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",");
    let mut runs = Vec::new();
    for p in 0..processes {
        let mut cmd = std::process::Command::new(&exe);
        cmd.args(["table", "--processes", "1", "--emit-points"])
            .args(["--rounds", &rounds.to_string(), "--seed", &seed.to_string()])
            .args(["--flows", &flows_arg]);
        if let Some(c) = capacity {
            cmd.args(["--capacity", &c.to_string()]);
        }
        let out = cmd
            .stderr(std::process::Stdio::inherit())
            .output()
            .with_context(|| format!("running {}", exe.display()))?;
        if !out.status.success() {
            bail!(
                "table: process {} of {processes} failed ({})",
                p + 1,
                out.status
            );
        }
        let points: Vec<TablePoint> = serde_json::from_slice(&out.stdout)
            .with_context(|| format!("table: reading process {}'s figures", p + 1))?;
        runs.push(points);
    }
    merge(runs)
}

/// One point per flow count and contender from several processes' points: their rounds
/// concatenated in process order (so that round `i` of every contender is the same
/// process's same round), the medians taken again.
fn merge(runs: Vec<Vec<TablePoint>>) -> Result<Vec<TablePoint>> {
    let processes = runs.len();
    let mut runs = runs.into_iter();
    let mut out = runs.next().context("table: no process")?;
    for run in runs {
        if run.len() != out.len() {
            bail!("table: the processes measured different points");
        }
        for (o, p) in out.iter_mut().zip(run) {
            if (o.flows, &o.contender) != (p.flows, &p.contender) {
                bail!("table: the processes measured different points");
            }
            o.rounds.extend(p.rounds);
        }
    }
    for f in out
        .iter()
        .map(|p| p.flows)
        .collect::<std::collections::BTreeSet<_>>()
    {
        let base = out
            .iter()
            .find(|p| p.flows == f && p.contender == CONTENDERS[CONTENDERS.len() - 1])
            .context("table: no baseline")?
            .rounds
            .clone();
        for p in out.iter_mut().filter(|p| p.flows == f) {
            p.mpps = median(p.rounds.clone());
            p.over_hashbrown = paired(&p.rounds, &base);
            p.processes = processes;
        }
    }
    Ok(out)
}

/// The flow table against hashbrown by flow count.
pub fn text(t: &[TablePoint]) -> String {
    let mut text = String::new();
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
    text.push_str(&crate::report::text::table(
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
    text
}

#[cfg(test)]
mod test {
    use super::*;

    fn point(flows: u32, contender: &str, rounds: &[f64]) -> TablePoint {
        TablePoint {
            flows,
            capacity: 2 * flows as usize,
            contender: contender.into(),
            mpps: 0.0,
            over_hashbrown: 0.0,
            seed: 1,
            processes: 1,
            rounds: rounds.to_vec(),
        }
    }

    #[test]
    fn merging_pairs_each_round_with_its_own_processs_baseline() {
        let base_name = CONTENDERS[CONTENDERS.len() - 1];
        let run = |ours: &[f64], batch: &[f64], base: &[f64]| {
            vec![
                point(256, CONTENDERS[0], ours),
                point(256, CONTENDERS[1], batch),
                point(256, CONTENDERS[2], batch),
                point(256, CONTENDERS[3], batch),
                point(256, base_name, base),
            ]
        };
        // Process 1 runs the baseline slow, process 2 fast: paired, ours is 2x, 1x, 1x,
        // 0.5x, 0.5x of it -> median 1.0; unpaired medians would say 40 over 30.
        let merged = merge(vec![
            run(&[60.0, 30.0, 30.0], &[1.0, 1.0, 1.0], &[30.0, 30.0, 30.0]),
            run(&[40.0, 40.0], &[1.0, 1.0], &[80.0, 80.0]),
        ])
        .unwrap();
        assert_eq!(merged.len(), CONTENDERS.len());
        let ours = &merged[0];
        assert_eq!(ours.rounds, [60.0, 30.0, 30.0, 40.0, 40.0]);
        assert_eq!(ours.mpps, 40.0);
        assert_eq!(ours.over_hashbrown, 1.0);
        assert_eq!(ours.processes, 2);
        let base = &merged[CONTENDERS.len() - 1];
        assert_eq!(base.over_hashbrown, 1.0);
        assert_eq!(base.mpps, 30.0);
        // Processes that measured different things are refused, not mixed.
        let other: Vec<_> = CONTENDERS.iter().map(|c| point(512, c, &[1.0])).collect();
        assert!(merge(vec![run(&[1.0], &[1.0], &[1.0]), other]).is_err());
    }
}
