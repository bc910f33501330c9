//! zcap: a tcpdump-like zero-copy sniffer. Live capture through the zcrx pipeline (a
//! TPACKET_V3 ring, header-only stage, consumer writing straight from the ring), or offline
//! from a pcap/pcapng file; writes pcap or pcapng; kernel BPF filters compiled by libpcap.

mod print;

use std::fs::File;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use clap::Parser;
use zcrx_capture::filter::Filter;
use zcrx_capture::pcapfile::CaptureFile;
use zcrx_capture::pcapfile::{Format, SaveError, SaveFile};
use zcrx_capture::{
    Consumer, Consumers, Delivered, Delivery, Hooks, Pipeline, PipelineConfig, Steering, StopToken,
};
use zcrx_flowcache::{extract, FlowRecord, FlowStats, FlowTable, FlowTableConfig, LinkType};
use zcrx_ring::{Fanout, FanoutMode, RxRing};

/// tcpdump-compatible zero-copy sniffer.
#[derive(Parser, Debug)]
#[command(name = "zcap", version, about, disable_help_flag = true)]
struct Args {
    /// Print help.
    #[arg(long, action = clap::ArgAction::Help)]
    help: Option<bool>,
    /// Capture live on this interface.
    #[arg(short = 'i', value_name = "IFACE")]
    iface: Option<String>,
    /// Read packets from a pcap or pcapng file.
    #[arg(short = 'r', value_name = "FILE")]
    read: Option<PathBuf>,
    /// Write packets to FILE (`-` for standard output) instead of printing them.
    #[arg(short = 'w', value_name = "FILE")]
    write: Option<String>,
    /// Write pcapng instead of pcap.
    #[arg(long)]
    pcapng: bool,
    /// Stop after N packets.
    #[arg(short = 'c', value_name = "N")]
    count: Option<u64>,
    /// Bytes kept per packet (0 = 262144, as tcpdump).
    #[arg(short = 's', value_name = "SNAPLEN", default_value_t = 262_144)]
    snaplen: u32,
    /// Ring size in KiB (per shard).
    #[arg(short = 'B', value_name = "KiB")]
    buffer_kib: Option<u64>,
    /// Block retire timeout in ms.
    #[arg(long, value_name = "MS", default_value_t = 10)]
    block_timeout: u64,
    /// Do not put the interface into promiscuous mode.
    #[arg(short = 'p')]
    no_promisc: bool,
    /// Fanout shards: one ring, stage and consumer per shard (PACKET_FANOUT hash).
    #[arg(short = 't', value_name = "N", default_value_t = 1)]
    shards: usize,
    /// zerocopy | copy-libc | copy-erms | copy-avx2 | copy-nt | copy-auto
    #[arg(long, default_value = "zerocopy")]
    delivery: String,
    /// Drop privileges to USER once the rings are set up.
    #[arg(short = 'Z', value_name = "USER")]
    user: Option<String>,
    /// List interfaces and exit.
    #[arg(short = 'D')]
    list: bool,
    /// Numeric output (always on; accepted for tcpdump compatibility).
    #[arg(short = 'n')]
    numeric: bool,
    /// Less output: no status line.
    #[arg(short = 'q')]
    quiet: bool,
    /// One JSON object per packet (or per flow with --flows).
    #[arg(long)]
    json: bool,
    /// Print a flow table at the end, sorted by bytes.
    #[arg(long)]
    flows: bool,
    /// With --flows, also print the table every SECS seconds.
    #[arg(long, value_name = "SECS")]
    flows_every: Option<u64>,
    /// Filter expression (tcpdump syntax).
    #[arg(trailing_var_arg = true, allow_hyphen_values = false)]
    filter: Vec<String>,
}

fn main() {
    match run() {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("zcap: {}", report(&e));
            std::process::exit(1);
        }
    }
}

/// The error and its causes, each said once: a cause whose text the message already holds
/// (library errors often print their source themselves) is not repeated.
fn report(e: &anyhow::Error) -> String {
    let mut msg = e.to_string();
    for cause in e.chain().skip(1) {
        let c = cause.to_string();
        if !msg.contains(&c) {
            msg.push_str(": ");
            msg.push_str(&c);
        }
    }
    msg
}

/// Where packets go.
enum Sink {
    File {
        save: SaveFile<File>,
        file_path: Option<PathBuf>,
    },
    Stdout(SaveFile<std::io::Stdout>),
    Text,
    Json,
    None,
}

/// The sink and its counters, behind one lock (one lock per packet, no other shared write).
struct OutState {
    sink: Sink,
    captured: u64,
    bytes: u64,
    truncated: u64,
    error: Option<SaveError>,
}

/// Where packets go and how many went.
struct Output {
    /// `None` while a single shard's handler owns it (no lock per packet); given back when
    /// that handler is dropped.
    state: Mutex<Option<OutState>>,
    limit: u64,
    /// `captured` and `bytes`, published every 256 packets for the status line.
    seen: (AtomicU64, AtomicU64),
}

impl Output {
    fn new(sink: Sink, limit: u64) -> Self {
        Output {
            state: Mutex::new(Some(OutState {
                sink,
                captured: 0,
                bytes: 0,
                truncated: 0,
                error: None,
            })),
            limit,
            seen: (AtomicU64::new(0), AtomicU64::new(0)),
        }
    }
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<OutState>> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
    fn truncated(&self) -> u64 {
        self.lock().as_ref().map_or(0, |s| s.truncated)
    }
}

/// One shard's consumer: writes each packet to the sink and stops every shard (one token)
/// when the count is reached or the sink fails. With one shard it borrows the sink for the
/// run (no lock per packet); with several, the shards share it behind the lock.
struct Writer<'a> {
    out: &'a Output,
    own: Option<&'a mut OutState>,
    stop: StopToken,
}

impl Consumer for Writer<'_> {
    type Output = ();
    #[inline]
    fn packet(&mut self, d: &Delivered<'_>) {
        let m = d.meta();
        let vlan = m.vlan_tci.map(|t| (t, m.vlan_tpid));
        let (link, data) = (LinkType::Ethernet, d.data());
        let go_on = match self.own.as_deref_mut() {
            Some(st) => deliver_into(st, self.out, link, m.ts_ns, m.wire_len, data, vlan),
            None => deliver(self.out, link, m.ts_ns, m.wire_len, data, vlan),
        };
        if !go_on {
            self.stop.stop();
        }
    }
    fn finish(self) {}
}

fn run() -> Result<i32> {
    let args = Args::parse();
    if args.list {
        list_interfaces()?;
        return Ok(0);
    }
    let delivery = Delivery::from_name(&args.delivery).ok_or_else(|| {
        anyhow!(
            "--delivery {:?}: one of zerocopy, copy-libc, copy-erms, copy-avx2, copy-nt, copy-auto",
            args.delivery
        )
    })?;
    if args.shards == 0 || args.shards > 64 {
        bail!("-t {}: shards must be 1..=64", args.shards);
    }
    if args.count == Some(0) {
        bail!("-c 0: the count must be at least 1");
    }
    if args.flows_every == Some(0) {
        bail!("--flows-every 0: give a number of seconds >= 1");
    }
    let snaplen = if args.snaplen == 0 {
        262_144
    } else {
        args.snaplen
    };
    let expr = args.filter.join(" ");
    match (&args.iface, &args.read) {
        (Some(_), Some(_)) => bail!("-i and -r exclude each other"),
        (None, None) => {
            bail!("say -i IFACE to capture live or -r FILE to read a file (-D lists interfaces)")
        }
        (None, Some(path)) => offline(&args, path, &expr, snaplen),
        (Some(iface), None) => live(&args, iface, &expr, snaplen, delivery),
    }
}

fn open_sink(args: &Args, linktype: u32, snaplen: u32) -> Result<Sink> {
    let format = if args.pcapng {
        Format::PcapNg
    } else {
        Format::Pcap
    };
    Ok(match args.write.as_deref() {
        Some("-") => Sink::Stdout(SaveFile::new(std::io::stdout(), format, linktype, snaplen)),
        Some(path) => {
            let f = File::create(path).with_context(|| format!("cannot create {path}"))?;
            Sink::File {
                save: SaveFile::new(f, format, linktype, snaplen),
                file_path: Some(PathBuf::from(path)),
            }
        }
        None if args.flows && args.json => Sink::None,
        None if args.json => Sink::Json,
        None if args.flows => Sink::None,
        None => Sink::Text,
    })
}

/// Handles one packet: counts it and sends it to the sink. Returns false when the capture
/// must stop (count reached or a write error).
fn deliver(
    out: &Output,
    link: LinkType,
    ts_ns: u64,
    wire_len: u32,
    data: &[u8],
    vlan: Option<(u16, u16)>,
) -> bool {
    match out.lock().as_mut() {
        Some(st) => deliver_into(st, out, link, ts_ns, wire_len, data, vlan),
        None => false,
    }
}

/// [`deliver`] on state the caller holds.
#[allow(clippy::too_many_arguments)]
fn deliver_into(
    st: &mut OutState,
    out: &Output,
    link: LinkType,
    ts_ns: u64,
    wire_len: u32,
    data: &[u8],
    vlan: Option<(u16, u16)>,
) -> bool {
    if st.captured >= out.limit || st.error.is_some() {
        return false;
    }
    let r = match &mut st.sink {
        Sink::File { save, .. } => save.write(ts_ns, wire_len, data, vlan),
        Sink::Stdout(save) => save.write(ts_ns, wire_len, data, vlan),
        Sink::Text => {
            let line = print::line(link, ts_ns, wire_len, data, vlan.map(|v| v.0));
            let _ = writeln!(std::io::stdout().lock(), "{line}");
            Ok(())
        }
        Sink::Json => {
            let line = print::json(link, ts_ns, wire_len, data, vlan.map(|v| v.0));
            let _ = writeln!(std::io::stdout().lock(), "{line}");
            Ok(())
        }
        Sink::None => Ok(()),
    };
    if let Err(e) = r {
        st.error = Some(e);
        return false;
    }
    st.captured += 1;
    st.bytes += u64::from(wire_len);
    st.truncated += u64::from(wire_len as usize > data.len());
    if st.captured % 256 == 0 {
        out.seen.0.store(st.captured, Ordering::Relaxed);
        out.seen.1.store(st.bytes, Ordering::Relaxed);
    }
    st.captured < out.limit
}

/// Flushes the sink; on a write error cuts the file back to its last whole record and says
/// so. Returns (packets the output really holds or that were printed, whether it failed).
fn finish(out: &Output) -> (u64, bool) {
    let mut guard = out.lock();
    let Some(st) = guard.as_mut() else {
        return (0, true);
    };
    let mut err = st.error.take();
    let captured = st.captured;
    let (committed, what) = match &mut st.sink {
        Sink::File { save, file_path } => {
            if err.is_none() {
                err = save.flush().err();
            }
            let c = err
                .as_ref()
                .map(|e| e.committed)
                .unwrap_or(save.committed());
            if err.is_some() {
                // Keep the file valid: cut the partial record a failed write may have left.
                let _ = save.get_mut().set_len(c.bytes);
            }
            (
                c.records,
                file_path
                    .as_ref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default(),
            )
        }
        Sink::Stdout(save) => {
            if err.is_none() {
                err = save.flush().err();
            }
            (
                err.as_ref()
                    .map(|e| e.committed)
                    .unwrap_or(save.committed())
                    .records,
                "standard output".into(),
            )
        }
        _ => (captured, String::new()),
    };
    if let Some(e) = &err {
        let full = e.source.raw_os_error() == Some(libc::ENOSPC);
        eprintln!(
            "zcap: writing {what} failed{}: {}; it holds the first {} packets, whole and readable",
            if full { " (disk full)" } else { "" },
            e.source,
            e.committed.records
        );
    }
    (committed, err.is_some())
}

fn live(args: &Args, iface: &str, expr: &str, snaplen: u32, delivery: Delivery) -> Result<i32> {
    let program = Filter::compile(expr, 1)?
        .map(|f| f.socket_filter())
        .transpose()?;
    let block_size = zcrx_ring::DEFAULT_BLOCK_SIZE;
    let block_count = match args.buffer_kib {
        Some(kib) => {
            let bytes = kib
                .checked_mul(1024)
                .filter(|b| *b >= block_size as u64)
                .ok_or_else(|| anyhow!("-B {kib}: at least {} KiB", block_size / 1024))?;
            usize::try_from(bytes / block_size as u64).context("-B too large")?
        }
        None => zcrx_ring::DEFAULT_BLOCK_COUNT,
    };
    let group = (std::process::id() & 0xffff) as u16;
    let rings: Vec<RxRing> = (0..args.shards)
        .map(|_| {
            let mut b = RxRing::builder(iface)
                .block_size(block_size)
                .block_count(block_count)
                .block_timeout(Duration::from_millis(args.block_timeout))
                .snaplen(snaplen)
                .promiscuous(!args.no_promisc);
            if let Some(p) = &program {
                b = b.filter(p.clone());
            }
            if args.shards > 1 {
                b = b.fanout(Fanout {
                    group,
                    mode: FanoutMode::Hash,
                    defrag: true,
                    rollover: false,
                });
            }
            b.build()
        })
        .collect::<Result<_, _>>()?;
    // Signals first: from the "listening" line on, SIGINT/SIGTERM stop the capture cleanly.
    let stop = StopToken::new();
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, stop.flag()).context("installing signal handlers")?;
    }
    if let Some(user) = &args.user {
        drop_privileges(user)?;
    }
    let out = Output::new(open_sink(args, 1, snaplen)?, args.count.unwrap_or(u64::MAX));
    eprintln!(
        "zcap: listening on {iface}, link-type EN10MB (Ethernet), snapshot length {snaplen} bytes, {} shard(s), {} delivery{}",
        args.shards,
        delivery.name(),
        match delivery {
            // Say which routine the CPU dispatch chose.
            Delivery::Copy(r) => zcrx_capture::copy::Copier::new(r).map(|c| format!(" ({})", c.describe())).unwrap_or_default(),
            Delivery::ZeroCopy => String::new(),
        }
    );
    let records: Mutex<Vec<FlowRecord>> = Mutex::new(Vec::new());
    let live_flows: Vec<AtomicU64> = (0..rings.len()).map(|_| AtomicU64::new(0)).collect();
    let snapshots: Vec<Mutex<Vec<FlowStats>>> =
        (0..rings.len()).map(|_| Mutex::new(Vec::new())).collect();
    let status = !args.quiet && std::io::stderr().is_terminal();
    let pipelines: Vec<Pipeline<'_, RxRing>> = rings
        .iter()
        .map(|r| {
            let config = PipelineConfig {
                // One consumer per shard, run on the shard's stage thread: no hand-off.
                consumers: Consumers::Inline,
                delivery,
                // Flows cost header parsing and a table lookup per packet: only when shown.
                steering: if args.flows || status {
                    Steering::Flows(FlowTableConfig::default())
                } else {
                    Steering::Off
                },
                poll_timeout: Duration::from_millis(50),
                ..Default::default()
            };
            Pipeline::new(r, config).with_stop(stop.clone())
        })
        .collect();
    // One shard: it owns the sink for the run (taken out of the lock, put back after).
    let mut owned = (pipelines.len() == 1).then(|| out.lock().take()).flatten();
    let mut lend = owned.as_mut();
    let started = Instant::now();
    let result = std::thread::scope(|s| -> Result<()> {
        let mut runs = Vec::new();
        for (i, p) in pipelines.iter().enumerate() {
            let (out, records, live_flows, snapshots) = (&out, &records, &live_flows, &snapshots);
            let mut writer = Some(Writer {
                out,
                own: lend.take(),
                stop: stop.clone(),
            });
            let flows_every = args.flows_every.is_some();
            runs.push(s.spawn(move || {
                let hooks = Hooks::new()
                    .on_flow_end(|r| records.lock().unwrap().push(*r))
                    .on_tick(|table: &FlowTable| {
                        live_flows[i].store(table.len() as u64, Ordering::Relaxed);
                        if flows_every {
                            *snapshots[i].lock().unwrap() = table.iter().map(|(_, s)| *s).collect();
                        }
                    });
                p.run(|_| writer.take().expect("one consumer per shard"), hooks)
            }));
        }
        // Watcher: prints the status line and periodic flows until every shard ended.
        let mut last = (Instant::now(), 0u64, 0u64);
        let mut next_flows = args
            .flows_every
            .map(|s| Instant::now() + Duration::from_secs(s));
        while !runs.iter().all(|r| r.is_finished()) {
            std::thread::sleep(Duration::from_millis(50));
            if status && last.0.elapsed() >= Duration::from_secs(1) {
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
                let flows: u64 = live_flows.iter().map(|f| f.load(Ordering::Relaxed)).sum();
                eprint!(
                    "\r{:>10.0} pps {:>9.1} Mbit/s {:>7} flows {:>8} drops {:>10} captured   ",
                    (pk - last.1) as f64 / dt,
                    (by - last.2) as f64 * 8.0 / dt / 1e6,
                    flows,
                    drops,
                    pk
                );
                last = (Instant::now(), pk, by);
            }
            if let Some(t) = next_flows {
                if Instant::now() >= t {
                    let mut all: Vec<FlowStats> = snapshots
                        .iter()
                        .flat_map(|m| m.lock().unwrap().clone())
                        .collect();
                    print_flows(
                        &mut all,
                        args.json,
                        &format!("flows after {:.0} s", started.elapsed().as_secs_f64()),
                    );
                    next_flows = Some(t + Duration::from_secs(args.flows_every.unwrap_or(1)));
                }
            }
        }
        if status {
            eprintln!();
        }
        for r in runs {
            r.join()
                .map_err(|_| anyhow!("a capture thread panicked"))??;
        }
        Ok(())
    });
    if let Some(st) = owned {
        *out.lock() = Some(st);
    }
    let (captured, failed) = finish(&out);
    result?;
    if args.flows {
        let mut all: Vec<FlowStats> = records
            .into_inner()
            .unwrap()
            .into_iter()
            .map(|r| r.stats)
            .collect();
        print_flows(&mut all, args.json, "flows");
    }
    let (mut received, mut dropped) = (0, 0);
    for r in &rings {
        let s = r.stats()?;
        received += s.packets;
        dropped += s.drops;
    }
    eprintln!("{captured} packets captured");
    eprintln!("{received} packets received by filter");
    eprintln!("{dropped} packets dropped by kernel");
    eprintln!("{} packets truncated", out.truncated());
    Ok(if failed { 1 } else { 0 })
}

fn offline(args: &Args, path: &PathBuf, expr: &str, snaplen: u32) -> Result<i32> {
    let mut file = CaptureFile::open(path)?;
    let first = match file.next() {
        None => {
            eprintln!("0 packets captured");
            return Ok(0);
        }
        Some(p) => p?,
    };
    let linktype = first.linktype;
    let link = LinkType::from_linktype(linktype).ok_or_else(|| {
        anyhow!("{}: link type {linktype} is not supported (Ethernet, Linux SLL/SLL2, raw IP, BSD loopback are)", path.display())
    })?;
    let filter = Filter::compile(expr, linktype)?;
    let out = Output::new(
        open_sink(args, linktype, snaplen)?,
        args.count.unwrap_or(u64::MAX),
    );
    let mut table = FlowTable::new(FlowTableConfig::default());
    let mut records: Vec<FlowRecord> = Vec::new();
    let mut read = 0u64;
    let mut failure = None;
    for p in std::iter::once(Ok(first)).chain(file) {
        let p = match p {
            Ok(p) => p,
            Err(e) => {
                failure = Some(e);
                break;
            }
        };
        read += 1;
        if p.linktype != linktype {
            failure = Some(zcrx_capture::pcapfile::OfflineError::Malformed {
                path: path.display().to_string(),
                packets: read - 1,
                detail: format!(
                    "interfaces of different link types ({linktype} and {}) are not supported",
                    p.linktype
                ),
            });
            break;
        }
        if let Some(f) = &filter {
            if !f.matches(&p.data) {
                continue;
            }
        }
        let data = &p.data[..p.data.len().min(snaplen as usize)];
        if args.flows {
            if let Ok(x) = extract(link, data, None) {
                records.extend(table.track(x.key, p.orig_len, p.ts_ns, x.tcp_flags).evicted);
            }
        }
        if !deliver(&out, link, p.ts_ns, p.orig_len, data, None) {
            break;
        }
    }
    let (captured, failed) = finish(&out);
    if args.flows {
        records.extend(table.flush());
        let mut all: Vec<FlowStats> = records.into_iter().map(|r| r.stats).collect();
        print_flows(&mut all, args.json, "flows");
    }
    eprintln!("{captured} packets captured");
    eprintln!("{read} packets read");
    eprintln!("{} packets truncated", out.truncated());
    if let Some(e) = failure {
        eprintln!("zcap: {e}");
        return Ok(1);
    }
    Ok(if failed { 1 } else { 0 })
}

fn print_flows(flows: &mut [FlowStats], json: bool, title: &str) {
    flows.sort_by_key(|s| std::cmp::Reverse(s.total_bytes()));
    let mut out = std::io::stdout().lock();
    if json {
        for s in flows.iter() {
            let _ = writeln!(out, "{}", print::flow_json(s));
        }
    } else {
        let _ = writeln!(out, "{title}: {}", flows.len());
        let _ = writeln!(
            out,
            "{:<56} {:>10} {:>12} {:>10} {:>12}",
            "flow", "pkts ->", "bytes ->", "pkts <-", "bytes <-"
        );
        for s in flows.iter() {
            let _ = writeln!(
                out,
                "{:<56} {:>10} {:>12} {:>10} {:>12}",
                s.key.to_string(),
                s.packets[0],
                s.bytes[0],
                s.packets[1],
                s.bytes[1]
            );
        }
    }
}

fn drop_privileges(user: &str) -> Result<()> {
    use nix::unistd::{setgroups, setresgid, setresuid, User};
    let u = User::from_name(user)
        .context("looking up the user")?
        .ok_or_else(|| anyhow!("-Z {user}: no such user"))?;
    setgroups(&[u.gid]).context("setgroups (needs root)")?;
    setresgid(u.gid, u.gid, u.gid).context("setresgid")?;
    setresuid(u.uid, u.uid, u.uid).context("setresuid")?;
    if nix::unistd::getuid() != u.uid
        || nix::unistd::geteuid() != u.uid
        || nix::unistd::setuid(nix::unistd::Uid::from_raw(0)).is_ok()
    {
        bail!("-Z {user}: privileges were not dropped");
    }
    eprintln!(
        "zcap: dropped privileges to {user} (uid {}, gid {})",
        u.uid, u.gid
    );
    Ok(())
}

fn list_interfaces() -> Result<()> {
    let mut ifs: Vec<(u32, String, u32)> = Vec::new();
    for e in std::fs::read_dir("/sys/class/net").context("reading /sys/class/net")? {
        let name = e?.file_name().to_string_lossy().into_owned();
        let read = |f: &str| {
            std::fs::read_to_string(format!("/sys/class/net/{name}/{f}")).unwrap_or_default()
        };
        let index = read("ifindex").trim().parse().unwrap_or(0);
        let flags =
            u32::from_str_radix(read("flags").trim().trim_start_matches("0x"), 16).unwrap_or(0);
        ifs.push((index, name, flags));
    }
    ifs.sort();
    for (i, (_, name, flags)) in ifs.iter().enumerate() {
        let mut f = Vec::new();
        if flags & 0x1 != 0 {
            f.push("Up");
        }
        if flags & 0x40 != 0 {
            f.push("Running");
        }
        if flags & 0x8 != 0 {
            f.push("Loopback");
        }
        println!("{}.{name} [{}]", i + 1, f.join(", "));
    }
    Ok(())
}
