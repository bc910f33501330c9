//! zcap's command line: clap parses the low-level arguments ([`flags`], private to this
//! module), and [`parse`] validates them once into a [`Config`], a typed setting per
//! subsystem — the capture, the sink (with its rotation and compression), flows and their
//! export, metrics, PCAP-over-IP. No other module sees the raw arguments, and every check
//! of the command line's own (ranges, combinations, what applies to the source) comes before
//! anything is opened; then the files the command line names are read (`-F`, `--web-config`
//! and the certificates, keys and CAs: all before `-Z`, none after); names the system
//! resolves (a collector's host, the `-Z` user, a listening address) are resolved where
//! they are used.

mod capture;
mod config;
mod endpoints;
mod flags;
mod flows;
mod generate;
mod sink;
mod tcpdump;

use std::time::Duration;

use anyhow::{anyhow, bail, Result};
use zcrx_capture::Delivery;
use zcrx_kflows::Hook;

use capture::{
    block_timeout_ms, direction, filter_expression, immediate_mode, ring_memory, snaplen, source,
};
use endpoints::{endpoint_flags, metrics_address, metrics_config, pcap_over_ip_config};
use flags::Args;
use flows::{export, flows, kernel_flows_refusal, kernel_hook, top};
use sink::{sink, stamp};

pub(crate) use config::{Capture, Config, Direction, Flows, Source};
pub(crate) use generate::generate;
pub(crate) use tcpdump::link_types;

/// `-d`'s listing: its level (`-d` 1, `-dd` 2, `-ddd` 3), the expression, and what it is
/// compiled for: the source's link type (Ethernet without `-i` or `-r`), libpcap's optimiser
/// (not `-O`) and the snapshot length.
pub(crate) struct FilterDump {
    pub(crate) level: u8,
    pub(crate) expr: String,
    pub(crate) source: Option<Source>,
    pub(crate) optimize: bool,
    pub(crate) snaplen: u32,
}

/// What the command line asks zcap to do.
pub(crate) enum Command {
    /// `--generate KIND`: print the man page or a completion script.
    Generate(String),
    /// `-D`: list the interfaces.
    List,
    /// `-L`: list the link types of an interface.
    ListLinkTypes(String),
    /// `-J`: list the time stamp types of an interface.
    ListStampTypes(String),
    /// `-d`, `-dd`, `-ddd`: print the compiled filter (see [`FilterDump`]).
    DumpFilter(FilterDump),
    /// Capture, live or from a file.
    Capture(Box<Config>),
}

/// The command line, validated (clap's own errors and `--help` exit here).
pub(crate) fn parse() -> Result<Command> {
    let args = flags::parse();
    if let Some(kind) = &args.generate {
        return Ok(Command::Generate(kind.clone()));
    }
    if args.list {
        return Ok(Command::List);
    }
    let compat = &args.compat;
    if compat.list_link_types || compat.list_stamp_types {
        let Some(iface) = args.iface.clone() else {
            bail!("-L and -J list what an interface (-i) offers");
        };
        return Ok(if compat.list_link_types {
            Command::ListLinkTypes(iface)
        } else {
            Command::ListStampTypes(iface)
        });
    }
    if let Some(why) = kernel_flows_refusal(&args) {
        // A combination that makes no sense is a usage error, as clap's own (exit 2).
        eprintln!("zcap: --flows-in-kernel: {why}");
        std::process::exit(2);
    }
    if args.compat.dump_filter > 0 {
        // As tcpdump -d: the listing, nothing captured; a source only for its link type.
        let source = match (&args.iface, &args.read) {
            (None, None) => None,
            _ => Some(source(&args)?),
        };
        return Ok(Command::DumpFilter(FilterDump {
            level: args.compat.dump_filter,
            expr: filter_expression(&args)?,
            source,
            optimize: !args.compat.no_optimize,
            snaplen: snaplen(args.snaplen),
        }));
    }
    Ok(Command::Capture(Box::new(validate(&args)?)))
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
    let stamp = stamp(args)?;
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
    tcpdump::check(&args.compat, args.iface.as_deref())?;
    let sink = sink(args, stamp)?;
    let export = export(args)?;
    let metrics_addr = metrics_address(args)?;
    let allow = endpoint_flags(args)?;
    immediate_mode(args, &source, export.is_some())?;
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
            sample: args.sample.filter(|&n| n > 1),
            user: args.user.clone(),
            sandbox: !args.no_sandbox,
            sandbox_probe: args.sandbox_probe.clone(),
            sandbox_attacks: args.sandbox_attacks,
            shards: args.shards,
            delivery,
            block_timeout: Duration::from_millis(block_timeout_ms(args)),
            block_count,
            ring_bytes,
            handler_latency: args.handler_latency,
            rt_priority: args.rt_priority,
            cpu_dma_latency: args.cpu_dma_latency,
            optimize: !args.compat.no_optimize,
        },
        source,
        sink,
        flows: flows(args),
        export,
        metrics,
        pcap_over_ip,
        quiet: args.quiet,
        count_only: args.count_only,
        top,
    })
}
