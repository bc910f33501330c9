//! zcap's command line: clap parses the low-level arguments ([`flags`], private to this
//! module), and [`parse`] validates them once into a [`Config`], a typed setting per
//! subsystem — the capture, the sink (with its rotation and compression), flows and their
//! export, metrics, PCAP-over-IP. No other module sees the raw arguments, and every check
//! of the command line's own (ranges, combinations, what applies to the source) comes before
//! anything is opened; then the files the command line names are read (`-F`, `--web-config`
//! and the certificates, keys and CAs: all before `-Z`, none after); names the system
//! resolves (a collector's host, the `-Z` user, a listening address) are resolved where
//! they are used.

mod flags;
mod generate;

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use ipnet::IpNet;
use zcrx_capture::pcapfile::Format;
use zcrx_capture::Delivery;
use zcrx_flowcache::ipfix::{Encoder, EncoderConfig};
use zcrx_flowcache::{FlowTableConfig, Timeouts};
use zcrx_kflows::Hook;

use crate::compress::Compression;
use crate::export::ExportConfig;
use crate::interface::Iface;
use crate::metrics::{self, WebConfig};
use crate::output::{Destination, SinkConfig, TextStyle};
use crate::pcap_over_ip;
use crate::print::{Detail, Stamp};
use crate::rotate::{parse_size, Rotation};
use crate::tls::{self, ClientAuth, Identity, Settings, Version};
use flags::Args;

pub(crate) use generate::generate;

/// What the command line asks zcap to do.
pub(crate) enum Command {
    /// `--generate KIND`: print the man page or a completion script.
    Generate(String),
    /// `-D`: list the interfaces.
    List,
    /// Capture, live or from a file.
    Capture(Box<Config>),
}

/// A capture's settings, validated.
pub(crate) struct Config {
    pub(crate) source: Source,
    pub(crate) capture: Capture,
    /// Where the packets go (`-w`, lines, JSON, nowhere) and how.
    pub(crate) sink: SinkConfig,
    pub(crate) flows: Flows,
    /// `--ipfix`, `--ipfix-file`.
    pub(crate) export: Option<ExportConfig>,
    /// `--metrics` and its `--web-config`.
    pub(crate) metrics: Option<metrics::ServeConfig>,
    /// `--pcap-over-ip` and its TLS, allow-list and bound.
    pub(crate) pcap_over_ip: Option<pcap_over_ip::ServeConfig>,
    /// `-q`: no status line.
    pub(crate) quiet: bool,
    /// `--count`: print only the number of packets captured.
    pub(crate) count_only: bool,
    /// `--top` and its settings.
    pub(crate) top: Option<crate::top::TopConfig>,
}

/// Where packets come from.
pub(crate) enum Source {
    /// `-r FILE` (`-`: standard input).
    File(PathBuf),
    /// `-i IFACE` through TPACKET_V3 rings and the flow stage.
    Live(String),
    /// `-i IFACE --immediate-mode`: a TPACKET_V2 ring, a packet at a time.
    Immediate(String),
}

/// How packets are captured.
pub(crate) struct Capture {
    /// `-s`: bytes kept per packet, 1..=[`MAX_SNAPLEN`].
    pub(crate) snaplen: u32,
    /// The filter expression (tcpdump syntax; empty: every packet), from `-F` or the
    /// command line.
    pub(crate) filter: String,
    /// `-Q`.
    pub(crate) direction: Direction,
    /// Not `-p`.
    pub(crate) promiscuous: bool,
    /// `-c`: stop after this many packets (at least 1).
    pub(crate) count: Option<u64>,
    /// `-Z`: the user to become once the rings and listeners are set up.
    pub(crate) user: Option<String>,
    /// Not `--no-sandbox`: Landlock and seccomp once set up.
    pub(crate) sandbox: bool,
    /// `--sandbox-probe FILE` (hidden, for the tests): a file to try to create once confined.
    pub(crate) sandbox_probe: Option<PathBuf>,
    /// `--shards`, 1..=64.
    pub(crate) shards: usize,
    /// `--delivery`.
    pub(crate) delivery: Delivery,
    /// `--block-timeout`, or its default for what is asked.
    pub(crate) block_timeout: Duration,
    /// `-B` for a live ring: blocks of [`zcrx_ring::DEFAULT_BLOCK_SIZE`].
    pub(crate) block_count: usize,
    /// `-B` for `--immediate-mode`'s ring, bytes.
    pub(crate) ring_bytes: Option<usize>,
    /// `--handler-latency`.
    pub(crate) handler_latency: bool,
    /// `--rt-priority`: SCHED_FIFO priority, 1..=99.
    pub(crate) rt_priority: Option<i32>,
    /// `--cpu-dma-latency`: microseconds.
    pub(crate) cpu_dma_latency: Option<u32>,
}

/// Flows: their table (`--flows`, `--flows-every`) and how they are tracked.
pub(crate) struct Flows {
    /// `--flows`: print the table of every flow at the end.
    pub(crate) print: bool,
    /// `--json`: flows as JSON objects.
    pub(crate) json: bool,
    /// `--flows-every`: the table of live flows this often.
    pub(crate) every: Option<Duration>,
    /// The table: `--max-flows` slots, `--active-timeout`.
    pub(crate) table: FlowTableConfig,
    /// `--community-id-seed`.
    pub(crate) community_id_seed: u16,
    /// `--names`: read what each flow is from its first bytes (with `--flows`, `--ipfix`).
    pub(crate) names: bool,
    /// `--names-stats` (hidden): the names book's peaks on standard error at the end.
    pub(crate) names_stats: bool,
    /// `--flows-in-kernel`: flows counted by an eBPF program at tcx or XDP, no ring.
    pub(crate) in_kernel: bool,
    /// `--flows-in-kernel-hook`: where that program runs.
    pub(crate) kernel_hook: Hook,
}

/// `-Q`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    In,
    Out,
    InOut,
}

impl Direction {
    /// The filter a live capture compiles: for `out`, libpcap's `outbound` (the kernel's
    /// packet type, SKF_AD_PKTTYPE) and the expression; `in` is the socket option instead.
    pub(crate) fn filter(self, expr: &str) -> String {
        match (self, expr.trim().is_empty()) {
            (Direction::Out, true) => "outbound".to_string(),
            (Direction::Out, false) => format!("outbound and ({expr})"),
            _ => expr.to_string(),
        }
    }
}

/// The largest snapshot length (libpcap's MAXIMUM_SNAPLEN); `-s 0` means it.
pub(crate) const MAX_SNAPLEN: u32 = 262_144;

/// Longest IPFIX template refresh interval accepted (a day), in seconds and messages.
const MAX_REFRESH_S: u64 = 86_400;
const MAX_REFRESH_MESSAGES: u32 = 1_000_000;

/// The command line, validated (clap's own errors and `--help` exit here).
pub(crate) fn parse() -> Result<Command> {
    let args = flags::parse();
    if let Some(kind) = &args.generate {
        return Ok(Command::Generate(kind.clone()));
    }
    if args.list {
        return Ok(Command::List);
    }
    if let Some(why) = kernel_flows_refusal(&args) {
        // A combination that makes no sense is a usage error, as clap's own (exit 2).
        eprintln!("zcap: --flows-in-kernel: {why}");
        std::process::exit(2);
    }
    validate(&args).map(|c| Command::Capture(Box::new(c)))
}

/// What `--flows-in-kernel` cannot go with: anything that needs packets in user space (a
/// file to write, lines to print, names read from payloads, a filter, a full-screen view,
/// PCAP-over-IP), a source that is not one interface, or nothing to show.
fn kernel_flows_refusal(args: &Args) -> Option<&'static str> {
    if !args.flows_in_kernel {
        return None;
    }
    let exports = args.ipfix.is_some() || args.ipfix_file.is_some();
    Some(if args.read.is_some() {
        "counts a live interface's flows: not with -r"
    } else if args.iface.as_deref().is_none_or(|i| Iface::new(i).cooked()) {
        "give one interface with -i (not any)"
    } else if args.immediate_mode {
        "no ring to read: not with --immediate-mode"
    } else if args.write.is_some() || args.print || args.pcap_over_ip.is_some() {
        "no packet reaches zcap: nothing to write (-w), print (--print) or serve (--pcap-over-ip)"
    } else if args.names {
        "no packet reaches zcap: --names reads payloads"
    } else if args.top {
        "--top reads the ring's flow table: use --flows-every"
    } else if args.filter_file.is_some() || !args.filter.is_empty() {
        "the program counts every packet: no filter expression"
    } else if args.shards != 1 {
        "one program counts on every CPU: --shards must be 1"
    } else if args.metrics.is_some() {
        "--metrics reads the ring's counters: not with --flows-in-kernel"
    } else if kernel_hook(args) == Hook::Xdp && args.direction.as_deref().is_some_and(|d| d != "in")
    {
        "--flows-in-kernel-hook xdp counts received frames only: -Q in (or no -Q)"
    } else if !(args.flows || exports || args.flows_every.is_some()) {
        "give --flows, --flows-every or --ipfix/--ipfix-file: the flows are all it shows"
    } else {
        return None;
    })
}

/// `--flows-in-kernel-hook` (clap took tcx or xdp only).
fn kernel_hook(args: &Args) -> Hook {
    match args.flows_in_kernel_hook.as_deref() {
        Some("xdp") => Hook::Xdp,
        _ => Hook::Tcx,
    }
}

/// The checks, in the order the refusals are said; see [`Config`].
fn validate(args: &Args) -> Result<Config> {
    let delivery = Delivery::from_name(&args.delivery).ok_or_else(|| {
        anyhow!(
            "--delivery {:?}: one of {}",
            args.delivery,
            Delivery::names()
        )
    })?;
    if args.shards == 0 || args.shards > 64 {
        bail!("--shards {}: must be 1..=64", args.shards);
    }
    let stamp = stamp(args)?;
    if args.count == Some(0) {
        bail!("-c 0: the count must be at least 1");
    }
    if args.flows_every == Some(0) {
        bail!("--flows-every 0: give a number of seconds >= 1");
    }
    let community_id_seed = u16::try_from(args.community_id_seed).map_err(|_| {
        anyhow!(
            "--community-id-seed {}: the seed is 16 bits, 0..=65535",
            args.community_id_seed
        )
    })?;
    if args.active_timeout > 86_400 {
        bail!(
            "--active-timeout {}: seconds must be 0 (off) ..= 86400",
            args.active_timeout
        );
    }
    let snaplen = snaplen(args.snaplen);
    let direction = match direction(args)? {
        // XDP sees received frames only: that is the direction without -Q.
        _ if args.direction.is_none() && kernel_hook(args) == Hook::Xdp => Direction::In,
        d => d,
    };
    if direction != Direction::InOut && args.read.is_some() {
        // As tcpdump, which ignores -Q with -r: a file has no direction to go by.
        eprintln!("zcap: -Q applies to live captures; ignored with -r");
    }
    let source = source(args)?;
    let sink = sink(args, stamp)?;
    let export = export(args, community_id_seed)?;
    let metrics_addr = metrics_address(args)?;
    let allow = endpoint_flags(args)?;
    if matches!(source, Source::Immediate(_)) {
        if args.flows || export.is_some() || args.flows_every.is_some() {
            bail!("--immediate-mode has no flow stage: --flows and --ipfix need the default mode");
        }
        if args.shards != 1 {
            bail!("--immediate-mode reads one ring: --shards must be 1");
        }
    }
    let top = top(args, &source)?;
    if args.names && !(args.flows || export.is_some() || top.is_some()) {
        bail!(
            "--names reads names into flows: give --flows, --ipfix (or --ipfix-file) or --top too"
        );
    }
    let (block_count, ring_bytes) = ring_memory(args, &source)?;
    // The command line's own checks are done: now the files it names.
    let filter = filter_expression(args)?;
    let metrics = metrics_config(args, metrics_addr)?;
    let pcap_over_ip = pcap_over_ip_config(args, allow)?;
    Ok(Config {
        capture: Capture {
            snaplen,
            filter,
            direction,
            promiscuous: !args.no_promisc,
            count: args.count,
            user: args.user.clone(),
            sandbox: !args.no_sandbox,
            sandbox_probe: args.sandbox_probe.clone(),
            shards: args.shards,
            delivery,
            block_timeout: Duration::from_millis(block_timeout_ms(args)),
            block_count,
            ring_bytes,
            handler_latency: args.handler_latency,
            rt_priority: args.rt_priority,
            cpu_dma_latency: args.cpu_dma_latency,
        },
        source,
        sink,
        flows: Flows {
            print: args.flows,
            json: args.json,
            every: args.flows_every.map(Duration::from_secs),
            table: flow_table(args),
            community_id_seed,
            names: args.names,
            names_stats: args.names && args.names_stats,
            in_kernel: args.flows_in_kernel,
            kernel_hook: kernel_hook(args),
        },
        export,
        metrics,
        pcap_over_ip,
        quiet: args.quiet,
        count_only: args.count_only,
        top,
    })
}

/// `--top` and its flags; what does not go with a full-screen view on standard output.
fn top(args: &Args, source: &Source) -> Result<Option<crate::top::TopConfig>> {
    if !args.top {
        if args.top_sort.is_some() || args.top_by.is_some() || args.top_interval.is_some() {
            bail!("--top-sort, --top-by and --top-interval go with --top");
        }
        return Ok(None);
    }
    if matches!(source, Source::Immediate(_)) {
        bail!("--top reads the flow stage's table: not with --immediate-mode");
    }
    if args.write.as_deref() == Some("-") {
        bail!("--top draws on standard output: -w - cannot go there too (-w FILE can)");
    }
    if args.print || args.flows_every.is_some() || args.count_only {
        bail!("--top draws on standard output: --print, --flows-every and --count print there");
    }
    crate::top::config(
        args.top_sort.as_deref().unwrap_or("10s"),
        args.top_by.as_deref().unwrap_or("flow"),
        args.top_interval.unwrap_or(1.0),
    )
    .map(Some)
}

/// `-s`: 0 is the largest; a larger one is clamped to it, as libpcap and tcpdump do (a
/// larger value would only reserve memory: a block of the offline ring, a frame of the live
/// one, holds a whole snapshot).
fn snaplen(asked: u32) -> u32 {
    match asked {
        0 => MAX_SNAPLEN,
        n if n > MAX_SNAPLEN => {
            eprintln!("zcap: -s {n}: clamped to {MAX_SNAPLEN}, the largest snapshot length");
            MAX_SNAPLEN
        }
        n => n,
    }
}

/// `-i` or `-r`, and the flags that only a live capture (or only one mode) takes.
fn source(args: &Args) -> Result<Source> {
    let live = args.iface.is_some();
    if args.pcap_over_ip.is_some() && !live {
        bail!("--pcap-over-ip serves live captures (-i); for a file, serve it with nc");
    }
    if args.metrics.is_some() && (!live || args.immediate_mode) {
        bail!("--metrics serves live captures (-i) in the default mode (not -r, not --immediate-mode)");
    }
    if args.handler_latency && !(args.immediate_mode && live) {
        bail!("--handler-latency measures live --immediate-mode captures only");
    }
    if args.rt_priority.is_some() && !live {
        bail!("--rt-priority applies to live captures (-i)");
    }
    if args.cpu_dma_latency.is_some() && !live {
        bail!("--cpu-dma-latency applies to live captures (-i)");
    }
    match (&args.iface, &args.read) {
        (Some(_), Some(_)) => bail!("-i and -r exclude each other"),
        (None, None) => {
            bail!("say -i IFACE to capture live or -r FILE to read a file (-D lists interfaces)")
        }
        (None, Some(path)) => Ok(Source::File(path.clone())),
        (Some(iface), None) if args.immediate_mode => Ok(Source::Immediate(iface.clone())),
        (Some(iface), None) => Ok(Source::Live(iface.clone())),
    }
}

/// `-B` as the live ring takes it: (blocks of the default mode's ring, bytes of
/// `--immediate-mode`'s). A file's ring is sized by the snapshot length alone.
fn ring_memory(args: &Args, source: &Source) -> Result<(usize, Option<usize>)> {
    let block_size = zcrx_ring::DEFAULT_BLOCK_SIZE as u64;
    match (args.buffer_kib, source) {
        (Some(kib), Source::Live(_)) => {
            let bytes = kib
                .checked_mul(1024)
                .filter(|b| *b >= block_size)
                .ok_or_else(|| anyhow!("-B {kib}: at least {} KiB", block_size / 1024))?;
            let blocks = usize::try_from(bytes / block_size).context("-B too large")?;
            Ok((blocks, None))
        }
        (Some(kib), Source::Immediate(_)) => {
            let bytes = kib.checked_mul(1024).context("-B too large")?;
            let bytes = usize::try_from(bytes).context("-B too large")?;
            Ok((zcrx_ring::DEFAULT_BLOCK_COUNT, Some(bytes)))
        }
        _ => Ok((zcrx_ring::DEFAULT_BLOCK_COUNT, None)),
    }
}

/// `--block-timeout`, or its default for what is asked: 10 ms where a person or a pipe
/// waits for each packet (lines, -U), 100 ms (as netsniff-ng) where output is buffered
/// anyway (a capture file) or is flows: fewer wake-ups, less CPU per packet.
fn block_timeout_ms(args: &Args) -> u64 {
    let exports = args.ipfix.is_some() || args.ipfix_file.is_some();
    let lines = args.write.is_none() && !(args.flows || exports || args.count_only || args.top);
    let waited_for = lines || args.packet_buffered || args.print;
    args.block_timeout
        .unwrap_or(if waited_for { 10 } else { 100 })
}

/// The time stamp style (-t count and precision), or what is wrong with it.
fn stamp(args: &Args) -> Result<Stamp> {
    if args.ts_format > 5 {
        bail!(
            "-{}: at most five t (-ttttt)",
            "t".repeat(args.ts_format.into())
        );
    }
    let nano = match (args.time_stamp_precision.as_deref(), args.micro, args.nano) {
        (Some("nano"), false, _) | (None, false, true) => true,
        (Some("micro"), _, false) | (None, _, false) => false,
        (Some(p), _, _) if p != "micro" && p != "nano" => {
            bail!("--time-stamp-precision {p:?}: micro or nano")
        }
        _ => bail!("--micro and --nano (or a different --time-stamp-precision) exclude each other"),
    };
    Ok(Stamp {
        format: args.ts_format,
        nano,
    })
}

/// The filter expression: from `-F FILE` (comments removed, lines joined) or the command
/// line.
fn filter_expression(args: &Args) -> Result<String> {
    let Some(path) = &args.filter_file else {
        return Ok(args.filter.join(" "));
    };
    let text = std::fs::read_to_string(path).map_err(|e| anyhow!("-F {}: {e}", path.display()))?;
    if !args.filter.is_empty() {
        eprintln!(
            "zcap: -F {}: the expression on the command line is ignored",
            path.display()
        );
    }
    Ok(text
        .lines()
        .map(|l| l.split('#').next().unwrap_or_default().trim())
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" "))
}

/// `-Q`: which packets a live capture keeps.
fn direction(args: &Args) -> Result<Direction> {
    match args.direction.as_deref() {
        None | Some("inout") => Ok(Direction::InOut),
        Some("in") => Ok(Direction::In),
        Some("out") => Ok(Direction::Out),
        Some(d) => bail!("-Q {d:?}: in, out or inout"),
    }
}

/// Where packets go: `-w` (with its rotation and compression), lines or JSON, or nowhere
/// when flows are the output.
fn sink(args: &Args, stamp: Stamp) -> Result<SinkConfig> {
    let exports = args.ipfix.is_some() || args.ipfix_file.is_some();
    let to = match args.write.as_deref() {
        Some("-") => Destination::Stdout,
        Some(path) => Destination::File(path.to_string()),
        // The flows are the output: the flow table, the export, or the view.
        None if args.flows || exports || args.count_only || args.top => Destination::Discard,
        None if args.json => Destination::Json,
        None => Destination::Text,
    };
    Ok(SinkConfig {
        rotation: rotation(args)?,
        to,
        format: if args.pcapng {
            Format::PcapNg
        } else {
            Format::Pcap
        },
        packet_buffered: args.packet_buffered,
        style: TextStyle {
            stamp,
            number: args.number,
            print_too: args.print,
            detail: Detail {
                link: args.link_header,
                verbose: args.verbose,
                hex: args.hex,
                hex_ascii: args.hex_ascii,
                ascii: args.ascii,
            },
        },
    })
}

/// `-C`, `-G`, `-W`, `-z` and `--compress`, with tcpdump's checks and messages.
fn rotation(args: &Args) -> Result<Rotation> {
    let to_file = matches!(args.write.as_deref(), Some(w) if w != "-");
    let size = args.file_size.as_deref().map(parse_size).transpose()?;
    if size.is_some() && !to_file {
        bail!("-C cannot be used without -w FILE");
    }
    if args.rotate_seconds.is_some() && !to_file {
        bail!("-G cannot be used without -w FILE");
    }
    if args.rotate_seconds == Some(0) {
        bail!("-G 0: the number of seconds must be at least 1");
    }
    if args.file_count == Some(0) {
        bail!("-W 0: the number of output files must be at least 1");
    }
    if args.file_count.is_some() && size.is_none() && args.rotate_seconds.is_none() {
        bail!("-W needs -C or -G");
    }
    if args.post_rotate.is_some() && (size.is_none() && args.rotate_seconds.is_none()) {
        bail!("-z cannot be used without -w and (-C or -G)");
    }
    let compress = match (&args.compress, args.write.as_deref()) {
        (Some(_), Some("-")) => bail!(
            "--compress writes files; compress standard output with the compressor (zcap -w - | zstd > FILE.zst)"
        ),
        (Some(_), None) => bail!("--compress cannot be used without -w FILE"),
        (Some(c), _) => Some(Compression::parse(c)?),
        (None, Some(w)) if w != "-" => Compression::from_name(w),
        _ => None,
    };
    Ok(Rotation {
        size,
        count: args.file_count,
        seconds: args.rotate_seconds,
        post: args.post_rotate.clone(),
        packet_buffered: args.packet_buffered,
        compress,
        lossless: args.read.is_some(),
    })
}

/// The IPFIX export asked for (`None` without `--ipfix`/`--ipfix-file`), its encoder's
/// settings in range.
fn export(args: &Args, community_id_seed: u16) -> Result<Option<ExportConfig>> {
    if args.ipfix.is_none() && args.ipfix_file.is_none() {
        return Ok(None);
    }
    let refresh = args.ipfix_template_refresh;
    if !(1..=MAX_REFRESH_S).contains(&refresh) {
        bail!("--ipfix-template-refresh {refresh}: seconds must be 1..={MAX_REFRESH_S}");
    }
    let every = args.ipfix_template_every;
    if !(1..=MAX_REFRESH_MESSAGES).contains(&every) {
        bail!("--ipfix-template-every {every}: messages must be 1..={MAX_REFRESH_MESSAGES}");
    }
    let encoder = EncoderConfig {
        observation_domain: args.ipfix_domain,
        max_message: args.ipfix_message_size,
        template_refresh_ms: Some(refresh * 1000),
        template_every: Some(every),
    };
    Encoder::new(encoder).map_err(|e| anyhow!("--ipfix-message-size: {e}"))?;
    Ok(Some(ExportConfig {
        encoder,
        collector: args.ipfix.clone(),
        file: args.ipfix_file.clone(),
        community_id_seed,
    }))
}

/// `--metrics [ADDR:]PORT`, parsed (a port alone is 127.0.0.1's).
fn metrics_address(args: &Args) -> Result<Option<SocketAddr>> {
    args.metrics
        .as_deref()
        .map(|a| {
            if let Ok(port) = a.parse::<u16>() {
                return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
            }
            a.parse::<SocketAddr>().map_err(|_| {
                anyhow!(
                    "--metrics {a:?}: give [ADDR:]PORT, e.g. 9128, 127.0.0.1:9128 or [::1]:9128"
                )
            })
        })
        .transpose()
}

/// The endpoints' flags that go with `--pcap-over-ip` or `--metrics`, and the allow-list
/// parsed.
fn endpoint_flags(args: &Args) -> Result<Vec<IpNet>> {
    let (cert, key) = (&args.pcap_over_ip_cert, &args.pcap_over_ip_key);
    let tls_flags = cert.is_some() || key.is_some() || args.pcap_over_ip_client_ca.is_some();
    if (tls_flags || !args.pcap_over_ip_allow.is_empty()) && args.pcap_over_ip.is_none() {
        bail!("--pcap-over-ip-cert, --pcap-over-ip-key, --pcap-over-ip-client-ca and --pcap-over-ip-allow go with --pcap-over-ip");
    }
    if cert.is_some() != key.is_some() {
        bail!("--pcap-over-ip-cert and --pcap-over-ip-key go together (the certificate and its private key)");
    }
    if args.pcap_over_ip_client_ca.is_some() && cert.is_none() {
        bail!("--pcap-over-ip-client-ca asks clients for certificates over TLS: give --pcap-over-ip-cert and --pcap-over-ip-key too");
    }
    if args.web_config.is_some() && args.metrics.is_none() {
        bail!("--web-config configures --metrics: give --metrics [ADDR:]PORT too");
    }
    args.pcap_over_ip_allow
        .iter()
        .map(|a| allowed_network(a.trim()))
        .collect()
}

/// One `--pcap-over-ip-allow` network: CIDR, or an address alone (one host).
fn allowed_network(a: &str) -> Result<IpNet> {
    if let Ok(ip) = a.parse::<IpAddr>() {
        return Ok(IpNet::from(ip));
    }
    let net = a.parse::<IpNet>().map_err(|_| {
        anyhow!("--pcap-over-ip-allow {a:?}: give networks as ADDR/LEN (127.0.0.1/32, 198.18.0.0/15, fd00::/8) or addresses, separated by commas")
    })?;
    if net.trunc() != net {
        bail!(
            "--pcap-over-ip-allow {a}: host bits set past /{} (the network is {})",
            net.prefix_len(),
            net.trunc()
        );
    }
    Ok(net)
}

/// `--metrics` with its `--web-config` read (and every file it names).
fn metrics_config(args: &Args, addr: Option<SocketAddr>) -> Result<Option<metrics::ServeConfig>> {
    let Some(addr) = addr else {
        return Ok(None);
    };
    let web = match &args.web_config {
        Some(path) => WebConfig::load(path)?,
        None => WebConfig::plain(),
    };
    Ok(Some(metrics::ServeConfig {
        addr,
        web,
        max_connections: args.metrics_max_connections as usize,
    }))
}

/// `--pcap-over-ip` with its certificate, key and client CAs read (a port alone is
/// 127.0.0.1's).
fn pcap_over_ip_config(
    args: &Args,
    allow: Vec<IpNet>,
) -> Result<Option<pcap_over_ip::ServeConfig>> {
    let Some(addr) = &args.pcap_over_ip else {
        return Ok(None);
    };
    let addr = match addr.parse::<u16>() {
        Ok(port) => format!("127.0.0.1:{port}"),
        Err(_) => addr.clone(),
    };
    let tls = match (&args.pcap_over_ip_cert, &args.pcap_over_ip_key) {
        (Some(cert), Some(key)) => {
            let identity = Identity::from_pem(
                &tls::read(cert, "--pcap-over-ip-cert")?,
                &format!("--pcap-over-ip-cert {}", cert.display()),
                &tls::read(key, "--pcap-over-ip-key")?,
                &format!("--pcap-over-ip-key {}", key.display()),
            )?;
            let client_auth = match &args.pcap_over_ip_client_ca {
                Some(ca) => ClientAuth::RequireAndVerifyClientCert(tls::trust_anchors(
                    &tls::read(ca, "--pcap-over-ip-client-ca")?,
                    &format!("--pcap-over-ip-client-ca {}", ca.display()),
                )?),
                None => ClientAuth::NoClientCert,
            };
            let settings = Settings {
                identity,
                client_auth,
                min_version: Version::Tls12,
                max_version: Version::Tls13,
                prefer_server_order: true,
            };
            Some(tls::server_config(settings).context("--pcap-over-ip TLS")?)
        }
        _ => None,
    };
    Ok(Some(pcap_over_ip::ServeConfig {
        addr,
        tls,
        client_certs: args.pcap_over_ip_client_ca.is_some(),
        allow,
        max_connections: args.pcap_over_ip_max_connections as usize,
    }))
}

/// The flow table for `--flows` and flow export: `--max-flows` slots, default idle timeouts,
/// the active timeout asked for, its memory on transparent huge pages.
fn flow_table(args: &Args) -> FlowTableConfig {
    let mut timeouts = Timeouts::default();
    let exports = args.ipfix.is_some() || args.ipfix_file.is_some();
    // --top's rates come from a flow's counters, which an active timeout's report resets:
    // it applies only to what is reported (--flows, the export).
    let reported = !args.top || args.flows || exports;
    timeouts.active =
        (args.active_timeout > 0 && reported).then(|| Duration::from_secs(args.active_timeout));
    // The flows shown (--flows, --top) or exported (--ipfix) carry their TCP state: the
    // stage's table follows it.
    let states = args.flows || exports || args.top;
    FlowTableConfig::with_capacity(args.max_flows as usize)
        .with_timeouts(timeouts)
        .with_prepare_memory(Some(zcrx_ring::advise_huge_pages))
        .with_tcp_state(states)
}
