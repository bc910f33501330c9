//! `--top`: a full-screen live view of the flows, as iftop, bandwhich or flowtop give, on
//! zcap's zero-copy capture.
//!
//! The capture is not slowed by it: each shard's stage thread publishes a snapshot of its
//! flow table at its tick ([`Feed::publish`], from the pipeline's `on_tick` hook, the
//! mechanism `--flows-every` uses: built outside the lock, swapped in under it), and the
//! view, on the main thread, takes the latest at its refresh interval. Nothing is locked on
//! the path of every packet: the consumer ([`Tap`]) reads names only from the packets that
//! carry them and locks the name maps for those alone. Rates per flow and direction over 2,
//! 10 and 40 s come from successive snapshots' counters ([`rates`]); the processes that own
//! local sockets from `/proc` ([`procs`]), at most once a refresh, on the view's thread.
//!
//! With `-r FILE` the file is read through the stage as fast as it goes (written with `-w`
//! as without `--top`), and the view shows its flows at the end: totals, and for rates each
//! flow's average over its life (the file's own time, not the reading's).
//!
//! Modules: `model` (flows and rows, sort keys, groupings), `rates` (the snapshots'
//! history), `aggregate` (rows from flows), `input` (the view's state, keys), `render`
//! (drawing), `terminal` (raw mode, alternate screen, restoration), `names` (DNS answers'
//! addresses, server names), `tap` (the consumer reading them), `procs` (socket owners).

mod aggregate;
mod input;
mod model;
mod names;
mod procs;
mod rates;
mod render;
mod tap;
mod terminal;

use std::collections::HashSet;
use std::io::IsTerminal;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use anyhow::{bail, Result};
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::event::{self, Event};
use ratatui::Terminal;
use zcrx_capture::StopToken;
use zcrx_flowcache::{FlowKey, FlowStats, FlowTable, TcpState};

use crate::metrics::Sample;
use input::{Change, View};
use model::{orient, By, FlowNow, Row, SortKey};
use names::ServerNames;

use crate::names::NamesBook;
use rates::History;
use render::Header;

pub(crate) use names::Passive;
pub(crate) use procs::{reader_main, READER_FLAG};
pub(crate) use tap::Tap;
pub(crate) use terminal::Screen;

/// `--top`'s settings.
#[derive(Debug, Clone)]
pub(crate) struct TopConfig {
    pub(crate) sort: SortKey,
    pub(crate) by: By,
    pub(crate) interval: Duration,
}

/// `--top-interval`'s seconds: the command line's range, checked again here for a caller
/// that did not parse it.
pub(crate) const INTERVAL_SECS: std::ops::RangeInclusive<f64> = 0.1..=60.0;

/// `--top-sort`, `--top-by`, `--top-interval`, checked.
pub(crate) fn config(sort: &str, by: &str, interval: f64) -> Result<TopConfig> {
    let Some(sort) = SortKey::parse(sort) else {
        let names: Vec<String> = SortKey::ALL.iter().map(|k| k.name()).collect();
        bail!("--top-sort {sort:?}: one of {}", names.join(", "));
    };
    let Some(by) = By::parse(by) else {
        bail!("--top-by {by:?}: one of flow, pair, host, port");
    };
    if !INTERVAL_SECS.contains(&interval) {
        bail!("--top-interval {interval}: seconds must be 0.1..=60");
    }
    Ok(TopConfig {
        sort,
        by,
        interval: Duration::from_secs_f64(interval),
    })
}

/// Whether standard output is a terminal; if not, says why `--top` needs one.
pub(crate) fn on_a_terminal() -> bool {
    if std::io::stdout().is_terminal() {
        return true;
    }
    eprintln!(
        "zcap: --top draws a full-screen view and needs a terminal on standard output; for flows in a pipe or a file use --flows or --flows-every (text or --json)"
    );
    false
}

/// One shard's flow table at its last tick.
#[derive(Default, Clone)]
struct Published {
    /// When, ns since the feed began.
    at_ns: u64,
    flows: Arc<Vec<(FlowStats, Option<TcpState>)>>,
}

/// What the shards publish for the view: each shard's snapshot, and the names the traffic
/// gave.
pub(crate) struct Feed {
    start: Instant,
    shards: Vec<Mutex<Published>>,
    pub(crate) names: Passive,
}

impl Feed {
    pub(crate) fn new(shards: usize) -> Feed {
        Feed {
            start: Instant::now(),
            shards: (0..shards).map(|_| Mutex::default()).collect(),
            names: Passive::default(),
        }
    }

    /// Shard `shard`'s table now (its stage thread, at a tick): copied outside the lock; the
    /// server names its names book (`--names`, on with `--top`) has read for these flows.
    pub(crate) fn publish(&self, shard: usize, table: &FlowTable, book: Option<&NamesBook>) {
        let flows: Vec<_> = table
            .iter()
            .filter(|(_, s)| s.total_packets() > 0)
            .map(|(id, s)| (s, table.tcp_state(id).copied()))
            .collect();
        if let Some(b) = book {
            b.server_names(flows.iter().map(|(s, _)| &s.key), |k, name| {
                self.names.learn_server(canonical_key(k), name.to_string());
            });
        }
        let p = Published {
            at_ns: self.start.elapsed().as_nanos() as u64,
            flows: Arc::new(flows),
        };
        *self.shards[shard].lock().unwrap_or_else(|e| e.into_inner()) = p;
    }

    fn take(&self, shard: usize) -> Published {
        self.shards[shard]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

/// What the live view reads besides the feed.
pub(crate) struct LiveSource<'a> {
    pub(crate) feed: &'a Feed,
    /// The interface(s) shown in the header.
    pub(crate) source: String,
    pub(crate) filter: String,
    /// The capture's counters now.
    pub(crate) sample: Box<dyn Fn() -> Sample + 'a>,
    /// Whether every shard ended.
    pub(crate) ended: Box<dyn Fn() -> bool + 'a>,
    /// What the capture's watcher does every 50 ms or so (`-z` answers, `-G`, the merge).
    pub(crate) tick: Box<dyn Fn() + 'a>,
}

/// Whether colours may be used (`NO_COLOR` unset or empty).
fn color() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// The live view, until `q`, a signal (`stop`) or the capture's end; stops the capture when
/// it returns.
pub(crate) fn run_live(
    cfg: &TopConfig,
    screen: &mut Screen,
    src: LiveSource<'_>,
    stop: &StopToken,
) -> Result<()> {
    let locals = screen.locals.clone();
    let result = live_loop(cfg, screen, &locals, &src, stop);
    stop.stop();
    result
}

fn live_loop(
    cfg: &TopConfig,
    screen: &mut Screen,
    locals: &HashSet<IpAddr>,
    src: &LiveSource<'_>,
    stop: &StopToken,
) -> Result<()> {
    let mut term = screen.enter()?;
    let color = color();
    let shards = src.feed.shards.len();
    let mut histories: Vec<History> = (0..shards).map(|_| History::default()).collect();
    let mut view = View::new(cfg.sort, cfg.by);
    let started = Instant::now();
    let mut header = Header {
        source: src.source.clone(),
        filter: src.filter.clone(),
        refresh: cfg.interval,
        ..Header::default()
    };
    let mut last_sample: Option<(Instant, Sample)> = None;
    let mut procs = procs::Procs::default();
    let mut flows: Vec<FlowNow> = Vec::new();
    let mut rows: Vec<Row> = Vec::new();
    let mut next = Instant::now();
    let mut dirty = true;
    while !stop.is_stopped() && !(src.ended)() && !view.quit {
        if Instant::now() >= next {
            next += cfg.interval;
            if next < Instant::now() {
                next = Instant::now() + cfg.interval;
            }
            // The history goes on while paused, so that the rates are right after it.
            let mut snaps = Vec::with_capacity(shards);
            for (i, h) in histories.iter_mut().enumerate() {
                let p = src.feed.take(i);
                if !h.has(p.at_ns) && p.at_ns > 0 {
                    h.push(p.at_ns, p.flows.iter().map(|(s, _)| (s.key, s.bytes)));
                }
                snaps.push(p);
            }
            if !view.paused {
                // A late answer keeps the last one.
                if let Some(p) = match screen.owners.as_mut() {
                    Some(reader) => reader.read(),
                    None => Some(procs::Procs::read()),
                } {
                    procs = p;
                }
                flows = flows_now(&snaps, &histories, locals, &src.feed.names, &procs);
                header_now(&mut header, src, &mut last_sample, started, flows.len());
                rows = aggregate::rows(&flows, &view);
                view.scroll = view.scroll.min(rows.len().saturating_sub(1));
                dirty = true;
            }
        }
        if let Some(m) = screen.messages().pop() {
            header.message = Some(m);
            dirty = true;
        }
        if dirty {
            term.draw(|f| render::draw(f, &header, &rows, &view, color))?;
            dirty = false;
        }
        (src.tick)();
        let wait = next
            .saturating_duration_since(Instant::now())
            .min(Duration::from_millis(50));
        dirty |= input(&mut term, wait, &mut view, &mut rows, &flows)?;
    }
    Ok(())
}

/// A key or a resize, waited for at most `wait`: the view's answer to it (`rows` regrouped from
/// `flows` when the key changes them). Returns whether the screen needs drawing again.
fn input(
    term: &mut Terminal<CrosstermBackend<std::io::Stdout>>,
    wait: Duration,
    view: &mut View,
    rows: &mut Vec<Row>,
    flows: &[FlowNow],
) -> Result<bool> {
    if !event::poll(wait)? {
        return Ok(false);
    }
    let page = term.size()?.height.saturating_sub(5) as usize;
    Ok(match event::read()? {
        Event::Key(k) => match view.key(k, rows.len(), page) {
            Change::None => false,
            Change::Redraw => true,
            Change::Rows => {
                *rows = aggregate::rows(flows, view);
                true
            }
        },
        Event::Resize(..) => {
            term.autoresize()?;
            true
        }
        _ => false,
    })
}

/// The flows of the shards' latest snapshots, with their rates, names and processes.
fn flows_now(
    snaps: &[Published],
    histories: &[History],
    locals: &HashSet<IpAddr>,
    names: &Passive,
    procs: &procs::Procs,
) -> Vec<FlowNow> {
    let now_ns = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut out = Vec::new();
    for (p, h) in snaps.iter().zip(histories) {
        for (s, tcp) in p.flows.iter() {
            let canonical = h.rates(&s.key, s.bytes);
            let age = now_ns.saturating_sub(s.first_ns) as f64 / 1e9;
            out.push(flow_now(
                s,
                tcp.as_ref(),
                canonical,
                age,
                locals,
                names,
                procs,
            ));
        }
    }
    let addrs: Vec<IpAddr> = out
        .iter()
        .flat_map(|f| [f.left.addr, f.right.addr])
        .collect();
    let hosts = names.hosts(addrs.iter());
    for f in &mut out {
        f.left_name = hosts.get(&f.left.addr).cloned();
        f.right_name = hosts.get(&f.right.addr).cloned();
    }
    out
}

/// One flow, oriented, its canonical-direction rates mapped to tx/rx.
fn flow_now(
    s: &FlowStats,
    tcp: Option<&TcpState>,
    canonical: [[f64; 3]; 2],
    age_s: f64,
    locals: &HashSet<IpAddr>,
    names: &dyn ServerNames,
    procs: &procs::Procs,
) -> FlowNow {
    let (left, right, local, tx) = orient(s, locals);
    let rx = 1 - tx;
    // Index 0 is the canonical source; the initiator sent the first packet.
    let server_left = (tx == 0) != (s.initiator == zcrx_flowcache::Direction::Forward);
    let proto = s.key.proto();
    FlowNow {
        proto,
        left,
        right,
        rates: [canonical[tx], canonical[rx]],
        bytes: [s.bytes[tx], s.bytes[rx]],
        packets: [s.packets[tx], s.packets[rx]],
        age_s,
        state: tcp.map(|t| t.conn_state().name()),
        server_left,
        server: names.server_name(&canonical_key(&s.key)),
        left_name: None,
        right_name: None,
        // A local end whose owner cannot be seen (another user's, a race): "-".
        process: local.then(|| {
            procs
                .owner(proto, left.addr, left.port)
                .unwrap_or("-")
                .to_string()
        }),
    }
}

/// The key the name maps use (the table's keys are canonical already).
fn canonical_key(k: &FlowKey) -> FlowKey {
    k.canonical().0
}

/// The header's counters now: rates since the last refresh.
fn header_now(
    h: &mut Header,
    src: &LiveSource<'_>,
    last: &mut Option<(Instant, Sample)>,
    started: Instant,
    flows: usize,
) {
    let s = (src.sample)();
    let now = Instant::now();
    if let Some((t, prev)) = last.as_ref() {
        let dt = now.duration_since(*t).as_secs_f64().max(1e-3);
        h.pps = s.captured.saturating_sub(prev.captured) as f64 / dt;
        h.bps = s.captured_bytes.saturating_sub(prev.captured_bytes) as f64 * 8.0 / dt;
    }
    h.packets = s.captured;
    h.kernel_drops = s.shards.iter().map(|x| x.kernel_dropped).sum();
    h.freezes = s.shards.iter().map(|x| x.freezes).sum();
    h.zcap_drops = crate::metrics::EVENTS
        .compressor_dropped
        .load(std::sync::atomic::Ordering::Relaxed)
        + s.pcap_over_ip.map_or(0, |p| p.dropped);
    h.flows = flows as u64;
    h.elapsed = started.elapsed();
    *last = Some((now, s));
}

/// The view of a file's flows at its end (`flows`: every flow of the file, summed per key),
/// until `q` or a signal.
pub(crate) fn run_file(
    cfg: &TopConfig,
    screen: &mut Screen,
    file: String,
    filter: String,
    flows: &[(FlowStats, Option<TcpState>)],
    names: &Passive,
    stop: &StopToken,
) -> Result<()> {
    let mut term = screen.enter()?;
    let color = color();
    let none = HashSet::new();
    let procs = procs::Procs::default();
    let (first, last) = flows.iter().fold((u64::MAX, 0), |(a, b), (s, _)| {
        (a.min(s.first_ns), b.max(s.last_ns))
    });
    let span = Duration::from_nanos(last.saturating_sub(first.min(last)));
    let mut all: Vec<FlowNow> = flows
        .iter()
        .map(|(s, tcp)| {
            let secs = s.last_ns.saturating_sub(s.first_ns) as f64 / 1e9;
            let avg = |b: u64| {
                if secs > 0.0 {
                    b as f64 * 8.0 / secs
                } else {
                    0.0
                }
            };
            let canonical = [[avg(s.bytes[0]); 3], [avg(s.bytes[1]); 3]];
            flow_now(s, tcp.as_ref(), canonical, secs, &none, names, &procs)
        })
        .collect();
    let addrs: Vec<IpAddr> = all
        .iter()
        .flat_map(|f| [f.left.addr, f.right.addr])
        .collect();
    let hosts = names.hosts(addrs.iter());
    for f in &mut all {
        f.left_name = hosts.get(&f.left.addr).cloned();
        f.right_name = hosts.get(&f.right.addr).cloned();
    }
    let header = Header {
        source: file,
        filter,
        packets: flows.iter().map(|(s, _)| s.total_packets()).sum(),
        flows: flows.len() as u64,
        elapsed: span,
        refresh: cfg.interval,
        file: true,
        ..Header::default()
    };
    let mut view = View::new(cfg.sort, cfg.by);
    let mut rows = aggregate::rows(&all, &view);
    let mut dirty = true;
    while !stop.is_stopped() && !view.quit {
        if dirty {
            term.draw(|f| render::draw(f, &header, &rows, &view, color))?;
            dirty = false;
        }
        dirty |= input(
            &mut term,
            Duration::from_millis(100),
            &mut view,
            &mut rows,
            &all,
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_are_checked() {
        assert!(config("10s", "flow", 1.0).is_ok());
        assert_eq!(config("rx40s", "port", 0.5).unwrap().by, By::Port);
        assert!(config("fast", "flow", 1.0).is_err());
        assert!(config("10s", "everything", 1.0).is_err());
        assert!(config("10s", "flow", 0.0).is_err());
    }
}
