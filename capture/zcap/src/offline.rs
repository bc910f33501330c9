//! Offline: a pcap or pcapng file through the same stage as live traffic. Its packets feed a
//! streaming synthetic ring (four blocks, refilled as they come back: bounded memory for a
//! file of any size), so files and live rings share one walker, one extraction and one flow
//! table path. The filter runs in user space before the ring, where the kernel runs it live.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::{anyhow, Result};
use zcrx_capture::filter::Filter;
use zcrx_capture::pcapfile::{CaptureFile, FilePacket, OfflineError};
use zcrx_capture::{Consumers, Hooks, Pipeline, PipelineConfig, Steering, StopToken};
use zcrx_flowcache::LinkType;
use zcrx_ring::{Frame, SyntheticRing};

use crate::args::Args;
use crate::export::Export;
use crate::output::{close, open_sink, text_style, Output, Writer};
use crate::print::{print_flows, FlowLine};

/// Blocks of the streaming ring.
const BLOCKS: usize = 4;

/// What the feed tells the caller afterwards.
#[derive(Default)]
struct FeedReport {
    /// Packets read from the file (before the filter).
    read: AtomicU64,
    /// Why the file ended early: a read error, or a packet of another link type.
    failure: Mutex<Option<OfflineError>>,
}

/// The file's packets, filtered, as frames for the ring.
struct Feed {
    first: Option<FilePacket>,
    file: CaptureFile,
    linktype: u32,
    filter: Option<Filter>,
    path: String,
    report: Arc<FeedReport>,
}

impl Feed {
    fn fail(&self, e: OfflineError) -> Option<Frame> {
        *self
            .report
            .failure
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = Some(e);
        None
    }
}

impl Iterator for Feed {
    type Item = Frame;

    fn next(&mut self) -> Option<Frame> {
        loop {
            let p = match self.first.take().map(Ok).or_else(|| self.file.next())? {
                Ok(p) => p,
                Err(e) => return self.fail(e),
            };
            let read = self.report.read.fetch_add(1, Ordering::Relaxed) + 1;
            if p.linktype != self.linktype {
                return self.fail(OfflineError::Malformed {
                    path: self.path.clone(),
                    packets: read - 1,
                    detail: format!(
                        "interfaces of different link types ({} and {}) are not supported",
                        self.linktype, p.linktype
                    ),
                });
            }
            if self.filter.as_ref().is_some_and(|f| !f.matches(&p.data)) {
                continue;
            }
            return Some(p.into_frame());
        }
    }
}

/// A block size that holds a whole frame of `snaplen` bytes.
fn block_size(snaplen: u32) -> usize {
    (snaplen as usize + 4096)
        .next_power_of_two()
        .clamp(zcrx_ring::DEFAULT_BLOCK_SIZE, 1 << 30)
}

pub(crate) fn offline(args: &Args, path: &Path, expr: &str, snaplen: u32) -> Result<i32> {
    let export = Export::open(args, true)?;
    let mut file = CaptureFile::open(path)?;
    let first = match file.next() {
        None => {
            let export_failed = crate::export::report(export);
            if args.count_only {
                println!("0 packets");
            }
            eprintln!("0 packets captured");
            return Ok(if export_failed { 1 } else { 0 });
        }
        Some(p) => p?,
    };
    let linktype = first.linktype;
    let (ring, link, report) = file_ring(path, file, first, expr, snaplen)?;
    let out = Output::new(
        open_sink(args, linktype, snaplen)?,
        text_style(args)?,
        args.count.unwrap_or(u64::MAX),
    );
    let mut state = out.lock().take();
    let mut flows: Vec<FlowLine> = Vec::new();
    let config = PipelineConfig {
        consumers: Consumers::Inline,
        steering: if args.flows || export.is_some() {
            Steering::Flows(crate::flow_table(args))
        } else {
            Steering::Off
        },
        link,
        // Every packet in the ring passed the filter: the count is the stage's.
        max_packets: args.count,
        ..Default::default()
    };
    let mut writer = Some(Writer {
        out: &out,
        link,
        own: state.as_mut(),
        stop: StopToken::new(),
        shard: 0,
        cooked: false,
        loopback: false,
    });
    let run = Pipeline::new(&ring, config).run(
        |_| writer.take().expect("one consumer"),
        Hooks::new().on_flow_end(|r| {
            if args.flows {
                flows.push((r.stats, Some(r.end)));
            }
            if let Some(e) = &export {
                e.lock().unwrap().record(r);
            }
        }),
    );
    *out.lock() = state;
    let (captured, failed) = close(&out);
    let stats = run?.stats;
    if let Some(e) = ring.stream_error() {
        eprintln!("zcap: {e}");
        return Ok(1);
    }
    if args.flows {
        print_flows(&mut flows, args.json, "flows");
    }
    let export_failed = crate::export::report(export);
    debug_assert!(stats.packets >= captured);
    let read_failed = final_counts(args, captured, &report, &out);
    Ok(if failed || export_failed || read_failed {
        1
    } else {
        0
    })
}

/// The file's packets, through the filter, as a streaming synthetic ring; its link type and
/// the feed's report.
fn file_ring(
    path: &Path,
    file: CaptureFile,
    first: FilePacket,
    expr: &str,
    snaplen: u32,
) -> Result<(SyntheticRing, LinkType, Arc<FeedReport>)> {
    let linktype = first.linktype;
    let link = LinkType::from_linktype(linktype).ok_or_else(|| {
        anyhow!("{}: link type {linktype} is not supported (Ethernet, Linux SLL/SLL2, raw IP, BSD loopback are)", path.display())
    })?;
    let report = Arc::new(FeedReport::default());
    let feed = Feed {
        first: Some(first),
        file,
        linktype,
        filter: Filter::compile(expr, linktype)?,
        path: path.display().to_string(),
        report: report.clone(),
    };
    let ring = SyntheticRing::builder()
        .block_size(block_size(snaplen))
        .block_count(BLOCKS)
        .snaplen(snaplen)
        .stream(feed)?;
    Ok((ring, link, report))
}

/// tcpdump's final counts for a file (and `--count`'s line); says why the file ended early,
/// if it did, and returns whether it did.
fn final_counts(args: &Args, captured: u64, report: &FeedReport, out: &Output) -> bool {
    if args.count_only {
        println!("{captured} packets");
    }
    eprintln!("{captured} packets captured");
    eprintln!("{} packets read", report.read.load(Ordering::Relaxed));
    eprintln!("{} packets truncated", out.truncated());
    let failure = report
        .failure
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take();
    match failure {
        Some(e) => {
            eprintln!("zcap: {e}");
            true
        }
        None => false,
    }
}
