//! The capture's settings from the command line: the source (`-i`, `-r`) and the flags only
//! a live capture takes, the snapshot length, the ring's memory (`-B`) and block timeout,
//! the direction (`-Q`) and the filter expression (`-F` or the command line).

use anyhow::{anyhow, bail, Context, Result};

use super::config::{Direction, Source, MAX_SNAPLEN};
use super::flags::Args;

/// `-s`: 0 is the largest; a larger one is clamped to it, as libpcap and tcpdump do (a
/// larger value would only reserve memory: a block of the offline ring, a frame of the live
/// one, holds a whole snapshot).
pub(super) fn snaplen(asked: u32) -> u32 {
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
pub(super) fn source(args: &Args) -> Result<Source> {
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
    if args.sample.is_some_and(|n| n > 1) && !live {
        bail!("--sample: the kernel chooses among a live capture's packets (-i); a file's are all read");
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
pub(super) fn ring_memory(args: &Args, source: &Source) -> Result<(usize, Option<usize>)> {
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
pub(super) fn block_timeout_ms(args: &Args) -> u64 {
    let exports = args.exports();
    let lines = args.write.is_none() && !(args.flows || exports || args.count_only || args.top);
    let waited_for = lines || args.packet_buffered || args.print;
    args.block_timeout
        .unwrap_or(if waited_for { 10 } else { 100 })
}

/// The filter expression: from `-F FILE` (comments removed, lines joined) or the command
/// line.
pub(super) fn filter_expression(args: &Args) -> Result<String> {
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
pub(super) fn direction(args: &Args) -> Result<Direction> {
    match args.direction.as_deref() {
        None | Some("inout") => Ok(Direction::InOut),
        Some("in") => Ok(Direction::In),
        Some("out") => Ok(Direction::Out),
        Some(d) => bail!("-Q {d:?}: in, out or inout"),
    }
}

/// What `--immediate-mode` (one TPACKET_V2 ring, no flow stage) cannot go with; `exports`:
/// an IPFIX export was asked for.
pub(super) fn immediate_mode(args: &Args, source: &Source, exports: bool) -> Result<()> {
    if matches!(source, Source::Immediate(_)) {
        if args.flows || exports || args.flows_every.is_some() {
            bail!("--immediate-mode has no flow stage: --flows and --ipfix need the default mode");
        }
        if args.shards != 1 {
            bail!("--immediate-mode reads one ring: --shards must be 1");
        }
    }
    Ok(())
}
