//! Live capture: one ring, stage and inline consumer per fanout shard, a status line, and
//! periodic flow tables.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context, Result};
use zcrx_capture::filter::Filter;
use zcrx_capture::{Consumers, Delivery, Hooks, Pipeline, PipelineConfig, Steering, StopToken};
use zcrx_flowcache::{FlowRecord, FlowStats, FlowTable, FlowTableConfig};
use zcrx_ring::{Fanout, FanoutMode, RxRing};

use crate::args::Args;
use crate::output::{close, open_sink, Output, Writer};
use crate::print::print_flows;
use crate::system::drop_privileges;

pub(crate) fn live(
    args: &Args,
    iface: &str,
    expr: &str,
    snaplen: u32,
    delivery: Delivery,
) -> Result<i32> {
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
                link: zcrx_flowcache::LinkType::Ethernet,
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
    let (captured, failed) = close(&out);
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
