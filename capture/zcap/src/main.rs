//! zcap: a tcpdump-like zero-copy sniffer. Live capture through the zcrx pipeline (a
//! TPACKET_V3 ring, header-only stage, consumer writing straight from the ring), or offline
//! from a pcap/pcapng file; writes pcap or pcapng; kernel BPF filters compiled by libpcap.
//!
//! Modules: `args` (the command line), `export` (IPFIX to a collector or file), `output` (sinks, counts, the writing consumer),
//! `live`, `offline`, `print` (text, JSON and flow tables), `system` (privileges,
//! interfaces).

mod args;
mod compress;
mod dissect;
mod export;
mod immediate;
mod live;
mod merge;
mod metrics;
mod offline;
mod output;
mod pcap_over_ip;
mod print;
mod record;
mod rotate;
#[allow(unsafe_code)]
mod system;
mod usr1;

use anyhow::{anyhow, bail, Result};
use std::time::Duration;

use zcrx_capture::Delivery;
use zcrx_flowcache::{FlowTableConfig, Timeouts};

use args::Args;

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

/// The flow table for `--flows` and flow export: `--max-flows` slots, default idle timeouts,
/// the active timeout asked for, its memory on transparent huge pages.
pub(crate) fn flow_table(args: &Args) -> FlowTableConfig {
    FlowTableConfig {
        prepare_memory: Some(zcrx_ring::advise_huge_pages),
        timeouts: Timeouts {
            active: (args.active_timeout > 0).then(|| Duration::from_secs(args.active_timeout)),
            ..Timeouts::default()
        },
        capacity: args.max_flows as usize,
        ..FlowTableConfig::default()
    }
}

/// The largest snapshot length (libpcap's MAXIMUM_SNAPLEN); `-s 0` means it.
const MAX_SNAPLEN: u32 = 262_144;

fn run() -> Result<i32> {
    let args = args::parse();
    if let Some(kind) = &args.generate {
        return match args::generate(kind, &mut std::io::stdout().lock()) {
            // `zcap --generate man | head` is not an error.
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                Err(anyhow!("--generate {kind}: {e}"))
            }
            _ => Ok(0),
        };
    }
    if args.list {
        system::list_interfaces()?;
        return Ok(0);
    }
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
    args.stamp()?; // a bad -t count or precision is refused before anything opens
    if args.count == Some(0) {
        bail!("-c 0: the count must be at least 1");
    }
    if args.flows_every == Some(0) {
        bail!("--flows-every 0: give a number of seconds >= 1");
    }
    if args.active_timeout > 86_400 {
        bail!(
            "--active-timeout {}: seconds must be 0 (off) ..= 86400",
            args.active_timeout
        );
    }
    let snaplen = match args.snaplen {
        0 => MAX_SNAPLEN,
        n if n > MAX_SNAPLEN => {
            // As libpcap and tcpdump: a larger value would only reserve memory (a block of
            // the offline ring, a frame of the live one, holds a whole snapshot).
            eprintln!("zcap: -s {n}: clamped to {MAX_SNAPLEN}, the largest snapshot length");
            MAX_SNAPLEN
        }
        n => n,
    };
    let expr = args.filter_expression()?;
    if args.direction()? != args::Direction::InOut && args.read.is_some() {
        // As tcpdump, which ignores -Q with -r: a file has no direction to go by.
        eprintln!("zcap: -Q applies to live captures; ignored with -r");
    }
    if args.pcap_over_ip.is_some() && args.iface.is_none() {
        bail!("--pcap-over-ip serves live captures (-i); for a file, serve it with nc");
    }
    if args.metrics.is_some() && (args.iface.is_none() || args.immediate_mode) {
        bail!("--metrics serves live captures (-i) in the default mode (not -r, not --immediate-mode)");
    }
    if args.handler_latency && !(args.immediate_mode && args.iface.is_some()) {
        bail!("--handler-latency measures live --immediate-mode captures only");
    }
    if let Some(prio) = args.rt_priority {
        if args.iface.is_none() {
            bail!("--rt-priority applies to live captures (-i)");
        }
        // Before any thread starts (they inherit it) and before -Z drops the capability.
        system::realtime(prio)?;
    }
    // Opened before -Z drops root; the request stands until zcap exits.
    let _cpu_latency = match args.cpu_dma_latency {
        Some(_) if args.iface.is_none() => bail!("--cpu-dma-latency applies to live captures (-i)"),
        Some(us) => Some(zcrx_ring::hold_cpu_dma_latency(us).map_err(|e| {
            anyhow::anyhow!("--cpu-dma-latency {us}: /dev/cpu_dma_latency: {e} (needs root)")
        })?),
        None => None,
    };
    match (&args.iface, &args.read) {
        (Some(_), Some(_)) => bail!("-i and -r exclude each other"),
        (None, None) => {
            bail!("say -i IFACE to capture live or -r FILE to read a file (-D lists interfaces)")
        }
        (None, Some(path)) => offline::offline(&args, path.as_path(), &expr, snaplen),
        (Some(iface), None) if args.immediate_mode => {
            immediate::live_immediate(&args, iface, &expr, snaplen)
        }
        (Some(iface), None) => live::live(&args, iface, &expr, snaplen, delivery),
    }
}
