//! Live capture: one ring, stage and inline consumer per fanout shard, a status line, and
//! periodic flow tables.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::thread::ScopedJoinHandle;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Result};
use zcrx_capture::filter::Filter;
use zcrx_capture::{
    Consumers, Delivery, Hooks, Pipeline, PipelineConfig, PipelineError, Run, Steering, StopToken,
};
use zcrx_flowcache::{FlowTable, LinkType};
use zcrx_ring::{Fanout, FanoutMode, RxRing};

use crate::args::{Capture, Config, Direction, Flows};
use crate::export::{self, Export};
use crate::interface::Iface;
use crate::metrics::{FlowSample, Listening, Sample, ShardSample};
use crate::names::NamesBook;
use crate::output::{close, open_sink, Destination, Output, Writer};
use crate::pcap_over_ip;
use crate::print::{print_flows, FlowLine};
use crate::signals::{self, Usr1};

use super::setup::{set_up, SetUp, Wants};
use crate::top;
use crate::totals::{self, FlowTotals, KEYS_PER_SLOT};

/// What the shards' hooks leave for the watcher and the end of the run.
struct ShardFlows {
    /// Keep ended flows (`--flows`).
    keep: bool,
    /// Every flow that ended, all shards, summed per flow key.
    ended: Mutex<FlowTotals>,
    /// The IPFIX export all shards feed.
    export: Option<Mutex<Export>>,
    /// Each shard's table at its last tick (status line, `--metrics`).
    tables: Vec<TableNow>,
    /// Each shard's table at its last tick (`--flows-every`).
    snapshots: Vec<Mutex<Vec<FlowLine>>>,
    /// `--names`: each shard's names book (none without it).
    books: Vec<NamesBook>,
    /// Each shard's table at its last tick, and the names seen (`--top`).
    top: Option<top::Feed>,
}

/// A flow table's size and counters, published at each tick.
#[derive(Default)]
struct TableNow {
    active: AtomicU64,
    created: AtomicU64,
    evicted: AtomicU64,
    expired: AtomicU64,
    lost: AtomicU64,
}

impl TableNow {
    /// Stores `table`'s size and counters for the readers.
    fn publish(&self, table: &FlowTable) {
        let c = table.counters();
        self.active.store(table.len() as u64, Ordering::Relaxed);
        self.created.store(c.created, Ordering::Relaxed);
        self.evicted.store(c.evicted, Ordering::Relaxed);
        self.expired.store(c.expired, Ordering::Relaxed);
        self.lost.store(c.lost, Ordering::Relaxed);
    }

    fn sample(&self) -> FlowSample {
        FlowSample {
            active: self.active.load(Ordering::Relaxed),
            created: self.created.load(Ordering::Relaxed),
            evicted: self.evicted.load(Ordering::Relaxed),
            expired: self.expired.load(Ordering::Relaxed),
            lost: self.lost.load(Ordering::Relaxed),
        }
    }
}

impl ShardFlows {
    /// `shards` tables' flows, keeping (`keep`) at most `most` flow keys for the end.
    fn new(shards: usize, keep: bool, most: usize, export: Option<Mutex<Export>>) -> Self {
        ShardFlows {
            keep,
            ended: Mutex::new(FlowTotals::new(most)),
            export,
            tables: (0..shards).map(|_| TableNow::default()).collect(),
            snapshots: (0..shards).map(|_| Mutex::new(Vec::new())).collect(),
            books: Vec::new(),
            top: None,
        }
    }

    /// `--names`: a book per shard, for tables of `slots` slots of `link` frames.
    fn with_names(mut self, slots: usize, link: LinkType, lower_dns: bool) -> Self {
        self.books = (0..self.tables.len())
            .map(|_| NamesBook::new(slots, link).lowercase_dns(lower_dns))
            .collect();
        self
    }

    /// Shard `i`'s hooks: collect and export ended flows (with their TCP states, which the
    /// stage's table follows for `--flows` and `--ipfix`); at each tick, send what the export
    /// holds, count and (if asked) snapshot.
    fn hooks(&self, i: usize, snapshot: bool) -> Hooks<'_> {
        Hooks::new()
            .on_flow_ended(move |e| {
                let names = self.books.get(i).and_then(|b| b.ended(&e.record));
                if let Some(x) = &self.export {
                    x.lock()
                        .unwrap()
                        .record(&e.record, e.tcp.as_ref(), names.as_deref());
                }
                if self.keep {
                    self.ended.lock().unwrap().add(&e.record, e.tcp, names);
                }
            })
            .on_tick(move |table: &FlowTable| {
                if let Some(e) = &self.export {
                    e.lock().unwrap().flush();
                }
                self.tables[i].publish(table);
                if let Some(t) = &self.top {
                    t.publish(i, table, self.books.get(i));
                }
                if snapshot {
                    *self.snapshots[i].lock().unwrap() = table
                        .iter()
                        .filter(|(_, s)| s.total_packets() > 0)
                        .map(|(id, s)| {
                            let names = self.books.get(i).and_then(|b| b.live(&s.key));
                            (s, None, table.tcp_state(id).copied(), names)
                        })
                        .collect();
                }
            })
    }
}

/// `-i IFACE`: the rings opened, the listeners bound and privileges dropped, in that order;
/// the capture until a signal, `-c`, `-W` or an error; then the flows, the export's report
/// and tcpdump's counts. Returns the exit code (1 if writing, the export or the capture
/// failed).
pub(crate) fn live(config: &Config, iface: &Iface) -> Result<i32> {
    let cap = &config.capture;
    crate::print::set_sampling(cap.sample);
    let mut rings = open_rings(cap, iface)?;
    let linktype = iface.linktype();
    let sockets: Vec<_> = rings.iter().filter_map(RxRing::packet_socket).collect();
    let SetUp {
        stop,
        usr1,
        server,
        metrics,
        export,
        mut screen,
        held,
    } = set_up(config, Wants::rings(linktype, cap.snaplen), &sockets)?;
    for (ring, (epoll, holder)) in rings.iter_mut().zip(held) {
        ring.give_up_socket(epoll, holder);
    }
    let usr1 = usr1.ok_or_else(|| anyhow!("SIGUSR1 was not caught"))?;
    let out = live_output(config, iface, rings.len())?;
    if let Some(s) = &server {
        out.tee(s.writer(linktype, cap.snaplen));
    }
    let status = !config.quiet && std::io::stderr().is_terminal();
    let export_flows = export.is_some();
    let most = KEYS_PER_SLOT * config.flows.table.capacity;
    let mut flows = ShardFlows::new(rings.len(), config.flows.print, most, export);
    // --top shows the names too.
    if config.flows.names || config.top.is_some() {
        let lower = config.flows.names_lower;
        flows = flows.with_names(config.flows.table.capacity, iface.link(), lower);
    }
    flows.top = config.top.as_ref().map(|_| top::Feed::new(rings.len()));
    let shared = Shared {
        rings: &rings,
        out: &out,
        flows: &flows,
        server: server.as_ref(),
        tracked: config.flows.print || status || export_flows || flows.top.is_some(),
        ipfix: export_flows,
        files: matches!(config.sink.to, Destination::File(_) | Destination::Stdout),
    };
    let watcher = match screen.as_mut() {
        Some(screen) => Watcher::Top(screen),
        None => Watcher::Lines { status },
    };
    let result = run(config, iface, shared, watcher, &stop, usr1, metrics);
    drop(screen);
    let (captured, failed) = close(&out);
    pcap_over_ip::report(server);
    // A capture that failed (its interface went away, say) still ends as any other: the file
    // flushed above, the flows, the counts; then exit 1.
    if let Err(e) = &result {
        eprintln!("zcap: {e:#}");
    }
    let lost = result.as_ref().map_or(0, |lost| *lost);
    let export_failed = end_of_flows(&config.flows, flows, lost);
    if config.count_only {
        println!("{captured} packets");
    }
    final_counts(&rings, captured, &out)?;
    Ok(if failed || export_failed || result.is_err() {
        1
    } else {
        0
    })
}

/// What the main thread does while the shards run.
enum Watcher<'a> {
    /// The status line (if `status`), `--flows-every`, `-G`: [`watch`].
    Lines { status: bool },
    /// `--top`'s view (which does `-G`'s and the merge's ticks too).
    Top(&'a mut top::Screen),
}

/// The capture itself: a pipeline per shard, each on a thread of its own with its consumer,
/// the watcher (status line, `--flows-every`, `-G`), SIGUSR1's answers and the metrics
/// server, until every shard ended. Returns the flow records the shards' tables lost.
fn run(
    config: &Config,
    iface: &Iface,
    shared: Shared<'_>,
    watcher: Watcher<'_>,
    stop: &StopToken,
    usr1: Usr1,
    metrics: Option<Listening<'_>>,
) -> Result<u64> {
    let (cap, out) = (&config.capture, shared.out);
    // The pipelines (and their flow tables) are built before zcap says it is listening.
    let shard = shard_config(config, shared.tracked, iface)?;
    let pipelines: Vec<Pipeline<'_, RxRing>> = shared
        .rings
        .iter()
        .map(|r| Pipeline::new(r, shard.clone()).with_stop(stop.clone()))
        .collect();
    eprintln!(
        "{}",
        listening(iface, cap.snaplen, cap.shards, cap.delivery, cap.sample)
    );
    // One shard: it owns the sink for the run (taken out of the lock, put back after) —
    // unless -G must rotate files from this thread when no packet comes.
    let borrow = pipelines.len() == 1 && config.sink.rotation.seconds.is_none();
    let mut owned = borrow.then(|| out.lock().take()).flatten();
    let mut lend = owned.as_mut();
    let result = std::thread::scope(|s| -> Result<u64> {
        let _answering = usr1.answer(s, || counts_so_far(shared.rings, out));
        let _serving = metrics.map(|m| m.serve(s, move || shared.sample()));
        let mut runs = Vec::new();
        for (i, p) in pipelines.iter().enumerate() {
            let writer = Writer {
                out,
                link: LinkType::Ethernet,
                own: lend.take(),
                stop: stop.clone(),
                shard: i,
                cooked: iface.cooked(),
                loopback: iface.loopback(),
                names: shared.flows.books.get(i),
            };
            let (flows, snapshot) = (shared.flows, config.flows.every.is_some());
            let link = iface.link();
            runs.push(s.spawn(move || run_shard(p, i, writer, flows, snapshot, link)));
        }
        let viewed = watch_shards(config, iface, &shared, watcher, &runs, stop);
        let lost = join_shards(runs)?;
        viewed?;
        Ok(lost)
    });
    if let Some(st) = owned {
        *out.lock() = Some(st);
    }
    result
}

/// One shard's capture, on a thread of its own: pipeline `p` into the shard's writer
/// (through `--top`'s tap when `--top` watches), with the shard's hooks.
fn run_shard(
    p: &Pipeline<'_, RxRing>,
    i: usize,
    writer: Writer<'_>,
    flows: &ShardFlows,
    snapshot: bool,
    link: LinkType,
) -> Result<Run<()>, PipelineError> {
    let mut writer = Some(writer);
    let hooks = flows.hooks(i, snapshot);
    let mut writer = || writer.take().expect("one consumer per shard");
    match &flows.top {
        Some(feed) => p.run(
            |_| top::Tap {
                inner: writer(),
                names: &feed.names,
                link,
            },
            hooks,
        ),
        None => p.run(|_| writer(), hooks),
    }
}

/// The main thread while the shards run: `--top`'s view, or the status line and
/// `--flows-every`'s tables ([`watch`]).
fn watch_shards<'a>(
    config: &'a Config,
    iface: &Iface,
    shared: &'a Shared<'a>,
    watcher: Watcher<'_>,
    runs: &'a [ShardRun<'a>],
    stop: &'a StopToken,
) -> Result<()> {
    match (watcher, config.top.as_ref(), shared.flows.top.as_ref()) {
        (Watcher::Top(screen), Some(cfg), Some(feed)) => top::run_live(
            cfg,
            screen,
            view_source(config, iface, shared, runs, feed, stop),
            stop,
        ),
        (watcher, ..) => {
            let status = matches!(watcher, Watcher::Lines { status: true });
            watch(config, shared, runs, status, stop);
            Ok(())
        }
    }
}

/// Waits for every shard; returns the flow records their tables lost, or the first
/// shard's error in shard order.
fn join_shards(runs: Vec<ShardRun<'_>>) -> Result<u64> {
    let mut lost = 0;
    for r in runs {
        lost += r
            .join()
            .map_err(|_| anyhow!("a capture thread panicked"))??
            .stats
            .flows_lost;
    }
    Ok(lost)
}

/// The sink and its counters: `-i any`'s cooked packets written as LINUX_SLL2, as libpcap
/// does; several shards merged in time order.
fn live_output(config: &Config, iface: &Iface, shards: usize) -> Result<Output> {
    let out = Output::new(
        open_sink(&config.sink, iface.linktype(), config.capture.snaplen)?,
        config.sink.style,
        config.capture.count.unwrap_or(u64::MAX),
    )
    .with_shards(shards);
    if shards > 1 {
        // A shard's packets reach its consumer up to a block timeout after they arrived
        // (plus scheduling): hold each packet that long and more before writing.
        let delay = 4 * config.capture.block_timeout + Duration::from_millis(50);
        out.merge(shards, delay.as_nanos() as u64, LinkType::Ethernet);
    }
    Ok(out)
}

/// The capture's end for its flows: the table of every flow with `--flows` (and what it
/// could not hold), the records the flow tables lost (`lost`, none but in a defect), the
/// export's report. Returns whether the export failed.
fn end_of_flows(config: &Flows, flows: ShardFlows, lost: u64) -> bool {
    if config.print {
        let ended = flows.ended.into_inner().unwrap();
        let note = ended.note();
        print_flows(
            &mut ended.into_lines(),
            config.json,
            config.community_id_seed,
            "flows",
            config.names,
        );
        if let Some(note) = note {
            eprintln!("{note}");
        }
    }
    if config.names {
        crate::names::report(
            flows.books.iter().map(NamesBook::counts),
            config.table.capacity,
            config.names_stats,
        );
    }
    totals::report_lost(lost);
    export::report(flows.export)
}

/// A shard's pipeline: one inline consumer on the stage thread (no hand-off); flows only
/// when shown or exported (they cost header parsing and a table lookup per packet).
fn shard_config(config: &Config, tracked: bool, iface: &Iface) -> Result<PipelineConfig> {
    Ok(PipelineConfig::builder()
        .link(iface.link())
        .consumers(Consumers::Inline)
        .delivery(config.capture.delivery)
        .steering(if tracked {
            Steering::Flows(config.flows.table)
        } else {
            Steering::Off
        })
        .poll_timeout(Duration::from_millis(50))
        // Timeouts fire on a quiet link too.
        .clock_when_quiet(true)
        .build()?)
}

/// The program a ring's socket runs: `--sample`'s prefix (one packet in `sample` kept, at
/// random, before anything else), then the prefix that drops loopback's outgoing copies
/// (`lo`: loopback's index), then `filter`; `None` when every packet is kept (no program
/// costs less than one that accepts all).
pub(super) fn socket_program(
    filter: &Filter,
    lo: Option<u32>,
    sample: Option<u32>,
) -> Result<Option<Vec<libc::sock_filter>>> {
    let program = match lo {
        Some(lo) => Some(filter.socket_filter_without_loopback_copies(lo)?),
        None => (!filter.accepts_all())
            .then(|| filter.socket_filter())
            .transpose()?,
    };
    let Some(n) = sample else {
        return Ok(program);
    };
    let mut sampled = zcrx_capture::filter::sampling_prefix(n);
    sampled.extend(match program {
        Some(p) => p,
        None => filter.socket_filter()?,
    });
    Ok(Some(sampled))
}

/// One ring per shard, with the kernel filter, the buffer size and (several shards) fanout.
fn open_rings(cap: &Capture, iface: &Iface) -> Result<Vec<RxRing>> {
    // Cooked packets start at the network layer: the filter is compiled for raw IP.
    let filter = Filter::compile_with(
        &cap.direction.filter(&cap.filter),
        iface.filter_linktype(),
        cap.optimize,
    )?;
    // On `lo` and `any` the kernel hands over each loopback packet twice (out and in):
    // keep the incoming copy only, as libpcap does, unless -Q chose one direction (`in`
    // ignores outgoing packets on the socket, `out` wants those). Otherwise, accepting
    // everything needs no program in the kernel.
    let lo = match cap.direction {
        Direction::InOut if iface.sees_loopback() => nix::net::if_::if_nametoindex("lo").ok(),
        _ => None,
    };
    let program = socket_program(&filter, lo, cap.sample)?;
    let group = (std::process::id() & 0xffff) as u16;
    let rings = (0..cap.shards)
        .map(|_| {
            let mut b = RxRing::builder(iface.name())
                .block_size(zcrx_ring::DEFAULT_BLOCK_SIZE)
                .block_count(cap.block_count)
                .block_timeout(cap.block_timeout)
                .snaplen(cap.snaplen)
                .promiscuous(cap.promiscuous && !iface.cooked())
                .cooked(iface.cooked())
                .ignore_outgoing(cap.direction == Direction::In);
            if let Some(p) = &program {
                b = b.filter(p.clone());
            }
            if cap.shards > 1 {
                b = b.fanout(Fanout::new(group, FanoutMode::Hash).defrag(true));
            }
            b.build()
        })
        .collect::<Result<_, _>>()?;
    Ok(rings)
}

/// tcpdump's "listening on" line, plus the shards and the delivery (and which copy routine
/// the CPU dispatch chose).
fn listening(
    iface: &Iface,
    snaplen: u32,
    shards: usize,
    delivery: Delivery,
    sample: Option<u32>,
) -> String {
    // The copier the pipeline will make (zcap's rings have blocks of the default size).
    let routine = match delivery.copier(zcrx_ring::DEFAULT_BLOCK_SIZE) {
        Ok(Some(c)) => format!(" ({})", c.describe()),
        _ => String::new(),
    };
    let link = iface.link_name();
    let sampled = sample.map_or(String::new(), |n| {
        format!(", keeping 1 packet in {n} (--sample: counts, flows and files are of those)")
    });
    format!(
        "zcap: listening on {iface}, link-type {link}, snapshot length {snaplen} bytes, {shards} shard(s), {} delivery{routine}{sampled}",
        delivery.name(),
    )
}

type ShardRun<'s> = ScopedJoinHandle<'s, Result<Run<()>, PipelineError>>;

/// Until every shard ended: the status line every second (on a terminal) and the flow
/// table every `--flows-every` seconds.
fn watch(
    config: &Config,
    shared: &Shared<'_>,
    runs: &[ShardRun<'_>],
    status: bool,
    stop: &StopToken,
) {
    let (rings, out, flows) = (shared.rings, shared.out, shared.flows);
    let started = Instant::now();
    let mut last = (Instant::now(), 0u64, 0u64);
    let every = config.flows.every;
    let mut next_flows = every.map(|e| started + e);
    while !runs.iter().all(|r| r.is_finished()) {
        std::thread::sleep(Duration::from_millis(50));
        crate::hooks::poll();
        if (config.sink.rotation.seconds.is_some() || rings.len() > 1) && !out.tick() {
            stop.stop();
        }
        if status && last.0.elapsed() >= Duration::from_secs(1) {
            last = status_line(rings, out, flows, last);
        }
        if let (Some(t), Some(e)) = (next_flows, every) {
            if Instant::now() >= t {
                let mut all: Vec<FlowLine> = flows
                    .snapshots
                    .iter()
                    .flat_map(|m| m.lock().unwrap().clone())
                    .collect();
                let title = format!("flows after {:.0} s", started.elapsed().as_secs_f64());
                print_flows(
                    &mut all,
                    config.flows.json,
                    config.flows.community_id_seed,
                    &title,
                    config.flows.names,
                );
                next_flows = Some(t + e);
            }
        }
    }
    if status {
        eprintln!();
    }
}

/// What `--top`'s view reads of the capture: its feed, counters, whether it ended; and the
/// watcher's duties it does meanwhile (`-z` answers, `-G` and the merge's ticks).
fn view_source<'a>(
    config: &'a Config,
    iface: &Iface,
    shared: &'a Shared<'a>,
    runs: &'a [ShardRun<'a>],
    feed: &'a top::Feed,
    stop: &'a StopToken,
) -> top::LiveSource<'a> {
    let ticks = config.sink.rotation.seconds.is_some() || shared.rings.len() > 1;
    top::LiveSource {
        feed,
        source: format!("{iface} ({} shard(s))", shared.rings.len()),
        filter: config.capture.filter.clone(),
        sample: Box::new(move || shared.sample()),
        ended: Box::new(move || runs.iter().all(|r| r.is_finished())),
        tick: Box::new(move || {
            crate::hooks::poll();
            if ticks && !shared.out.tick() {
                stop.stop();
            }
        }),
    }
}

/// Rates since `last` (time, packets, bytes), live flows, kernel drops; returns the new
/// `last`.
fn status_line(
    rings: &[RxRing],
    out: &Output,
    flows: &ShardFlows,
    last: (Instant, u64, u64),
) -> (Instant, u64, u64) {
    let (pk, by) = (
        out.seen.0.load(Ordering::Relaxed),
        out.seen.1.load(Ordering::Relaxed),
    );
    let dt = last.0.elapsed().as_secs_f64();
    let drops: u64 = rings
        .iter()
        .filter_map(|r| r.stats().ok())
        .map(|s| s.drops)
        .sum();
    let live: u64 = flows
        .tables
        .iter()
        .map(|f| f.active.load(Ordering::Relaxed))
        .sum();
    eprint!(
        "\r{:>10.0} pps {:>9.1} Mbit/s {:>7} flows {:>8} drops {:>10} captured   ",
        (pk - last.1) as f64 / dt,
        (by - last.2) as f64 * 8.0 / dt / 1e6,
        live,
        drops,
        pk
    );
    (Instant::now(), pk, by)
}

/// What the shards share and `--metrics` reads.
#[derive(Clone, Copy)]
struct Shared<'a> {
    rings: &'a [RxRing],
    out: &'a Output,
    flows: &'a ShardFlows,
    server: Option<&'a pcap_over_ip::Server>,
    tracked: bool,
    ipfix: bool,
    files: bool,
}

impl Shared<'_> {
    /// The capture now, for a scrape.
    fn sample(&self) -> Sample {
        let shards = self.rings.iter().enumerate().map(|(i, r)| {
            let k = r.stats().unwrap_or_default();
            ShardSample {
                received: k.packets,
                kernel_dropped: k.drops,
                freezes: k.freezes,
                blocks_held: r.map().blocks_held() as u64,
                blocks: r.map().block_count() as u64,
                captured: self.out.captured_by(i),
                flows: self.tracked.then(|| self.flows.tables[i].sample()),
            }
        });
        Sample {
            shards: shards.collect(),
            captured: self.out.seen.0.load(Ordering::Relaxed),
            captured_bytes: self.out.seen.1.load(Ordering::Relaxed),
            pcap_over_ip: self.server.map(|s| s.sample()),
            metrics_rejected: Vec::new(),
            ipfix: self.ipfix,
            files: self.files,
            kafka: crate::kafka::counts(),
        }
    }
}

/// What SIGUSR1 prints: the counts so far, as tcpdump's closing lines.
fn counts_so_far(rings: &[RxRing], out: &Output) -> String {
    let (mut received, mut dropped) = (0, 0);
    for s in rings.iter().filter_map(|r| r.stats().ok()) {
        received += s.packets;
        dropped += s.drops;
    }
    signals::tcpdump_counts(out.seen.0.load(Ordering::Relaxed), received, dropped)
}

/// tcpdump's closing counts.
fn final_counts(rings: &[RxRing], captured: u64, out: &Output) -> Result<()> {
    let (mut received, mut dropped) = (0, 0);
    for r in rings {
        let s = r.stats()?;
        received += s.packets;
        dropped += s.drops;
    }
    eprint!("{}", signals::tcpdump_counts(captured, received, dropped));
    eprintln!("{} packets truncated", out.truncated());
    let late = out.late();
    if late > 0 {
        eprintln!("{late} packets written out of time-stamp order (their shard delivered them after the merge delay)");
    }
    Ok(())
}
