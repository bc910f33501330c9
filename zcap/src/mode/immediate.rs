//! `--immediate-mode`: live capture from a TPACKET_V2 ring (`zcrx_ring::ImmediateRing`), each
//! packet written or printed as soon as the kernel hands it over, without the flow stage.
//!
//! Why V2 and not a V3 ring with small blocks and a short timeout: a V3 reader is woken only
//! when a block is retired, and the retire timer's floor is one millisecond (a jiffy on
//! kernels with HZ below 1000), so its latency can never get near tens of microseconds;
//! `rxbench sniff --latency` measures both (docs/PERFORMANCE.md). This is libpcap's choice too.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use hdrhistogram::Histogram;

use anyhow::{Context, Result};
use zcrx_capture::filter::Filter;
use zcrx_capture::StopToken;
use zcrx_flowcache::LinkType;
use zcrx_ring::ImmediateRing;

use crate::interface::{Iface, LINKTYPE_ETHERNET};

use super::setup::{set_up, SetUp, Wants};
use crate::args::{Config, Direction};
use crate::output::{close, open_sink, Output};
use crate::pcap_over_ip;
use crate::record::Record;
use crate::signals;

/// Frame room for `iface`, as libpcap sizes its V2 frames when the device may aggregate
/// (GRO, TSO: packets up to 64 KiB, which an MTU-sized frame would truncate): the larger of
/// the MTU and 65535, plus an Ethernet header and a tag, at most the snaplen; plus the V2
/// header, a multiple of 16.
fn frame_size(iface: &str, snaplen: u32) -> usize {
    let mtu: usize = std::fs::read_to_string(format!("/sys/class/net/{iface}/mtu"))
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(1500);
    let room = (mtu.max(65_535) + 18).min(snaplen as usize).max(64);
    (52 + room).div_ceil(16) * 16
}

/// Ring memory without -B: 64 MiB, as the default mode's ring (about 1 000 frames of 64 KiB).
const DEFAULT_RING_BYTES: usize = 64 << 20;

/// `-i IFACE --immediate-mode`: the ring opened (before `-Z`), each packet handed to the
/// sink as it comes until a signal, `-c` or a write error; then tcpdump's counts. Returns
/// the exit code.
pub(crate) fn live_immediate(config: &Config, iface: &Iface) -> Result<i32> {
    let cap = &config.capture;
    let snaplen = cap.snaplen;
    let mut builder = ImmediateRing::builder(iface.name())
        .frame_size(frame_size(iface.name(), snaplen))
        .ring_bytes(cap.ring_bytes.unwrap_or(DEFAULT_RING_BYTES))
        .snaplen(snaplen)
        .promiscuous(cap.promiscuous)
        .ignore_outgoing(cap.direction == Direction::In);
    let f = Filter::compile_with(
        &cap.direction.filter(&cap.filter),
        LINKTYPE_ETHERNET,
        cap.optimize,
    )?;
    if let Some(program) = super::live::socket_program(&f, None, cap.sample)? {
        builder = builder.filter(program);
    }
    let mut ring = builder.build()?;
    let sockets: Vec<_> = ring.packet_socket().into_iter().collect();
    let SetUp {
        stop, server, held, ..
    } = set_up(config, Wants::immediate(snaplen), &sockets)?;
    for (epoll, holder) in held {
        ring.give_up_socket(epoll, holder);
    }
    // SIGUSR1: the counts so far, answered by the capture loop (it owns the ring).
    let usr1 = Arc::new(AtomicBool::new(false));
    signal_hook::flag::register(signal_hook::consts::SIGUSR1, usr1.clone())
        .context("installing the SIGUSR1 handler")?;
    let out = Output::new(
        open_sink(&config.sink, LINKTYPE_ETHERNET, snaplen)?,
        config.sink.style,
        cap.count.unwrap_or(u64::MAX),
    );
    if let Some(s) = &server {
        out.tee(s.writer(LINKTYPE_ETHERNET, snaplen));
    }
    let sampled = cap.sample.map_or(String::new(), |n| {
        format!(", keeping 1 packet in {n} (--sample: counts and files are of those)")
    });
    eprintln!(
        "zcap: listening on {iface}, link-type EN10MB (Ethernet), snapshot length {snaplen} bytes, immediate mode (TPACKET_V2, {} frames){sampled}",
        ring.frame_count()
    );
    let result = run(config, &mut ring, &out, &stop, &usr1);
    let (captured, failed) = close(&out);
    pcap_over_ip::report(server);
    result?;
    if config.count_only {
        println!("{captured} packets");
    }
    let stats = ring.stats()?;
    eprint!(
        "{}",
        signals::tcpdump_counts(captured, stats.packets, stats.drops)
    );
    eprintln!("{} packets truncated", out.truncated());
    Ok(if failed { 1 } else { 0 })
}

/// Frames read before their records are handed over with -U (the poll stops earlier when
/// the ring has no more ready; a 256 KiB buffer is handed over at once).
const BATCH: usize = 64;

/// Until a signal, the count or a write error: each packet to the sink as it comes; the -G
/// rotation and the status line once in a while.
fn run(
    config: &Config,
    ring: &mut ImmediateRing,
    out: &Output,
    stop: &StopToken,
    usr1: &AtomicBool,
) -> Result<()> {
    let status = !config.quiet && std::io::stderr().is_terminal();
    let packet_buffered = config.sink.packet_buffered;
    let mut guard = out.lock();
    let st = guard.as_mut().context("the output is in use")?;
    if packet_buffered {
        st.flush_by_batch();
    }
    // 1 ns to an hour, 3 significant figures; longer waits count as an hour.
    let mut hist = config
        .capture
        .handler_latency
        .then(|| Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).expect("valid bounds"));
    let mut last = (Instant::now(), 0u64);
    let mut go_on = true;
    while go_on && !stop.is_stopped() {
        let n = ring.poll(Duration::from_millis(50), BATCH, |data, meta, link| {
            // The loopback's outgoing copy, as in the default mode.
            if !go_on || (link.outgoing() && link.hatype == 772) {
                return;
            }
            if let Some(h) = hist.as_mut() {
                let now = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos() as u64);
                h.saturating_record(now.saturating_sub(meta.ts_ns).max(1));
            }
            let rec = Record {
                ts_ns: meta.ts_ns,
                wire_len: meta.wire_len,
                data,
                vlan: meta.vlan_tci.map(|t| (t, meta.vlan_tpid)),
                ll: None,
            };
            go_on = st.write(out, LinkType::Ethernet, &rec);
        })?;
        if n > 0 && packet_buffered && !st.end_batch() {
            break;
        }
        if usr1.swap(false, Ordering::Relaxed) {
            eprint!("{}", counts_so_far(ring, st.captured())?);
        }
        if last.0.elapsed() >= Duration::from_millis(500) {
            if config.sink.rotation.seconds.is_some() && !st.tick() {
                break;
            }
            if status {
                let now = st.captured();
                eprint!(
                    "\r{:>10.0} pps {:>10} captured   ",
                    (now - last.1) as f64 / last.0.elapsed().as_secs_f64(),
                    now
                );
                last = (Instant::now(), now);
            } else {
                last.0 = Instant::now();
            }
        }
    }
    if status {
        eprintln!();
    }
    if let Some(h) = hist {
        print_latency(&h);
    }
    Ok(())
}

/// `--handler-latency`'s line: percentiles of the time from the kernel's time stamp to
/// zcap's handling of each packet.
fn print_latency(h: &Histogram<u64>) {
    let us = |q: f64| h.value_at_quantile(q) as f64 / 1000.0;
    eprintln!(
        "handler latency: p50 {:.1} us, p99 {:.1} us, p99.9 {:.1} us, max {:.1} us ({} packets)",
        us(0.5),
        us(0.99),
        us(0.999),
        h.max() as f64 / 1000.0,
        h.len()
    );
}

/// What SIGUSR1 prints: tcpdump's counts so far.
fn counts_so_far(ring: &mut ImmediateRing, captured: u64) -> Result<String> {
    let k = ring.stats()?;
    Ok(signals::tcpdump_counts(captured, k.packets, k.drops))
}
