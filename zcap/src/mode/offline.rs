//! Offline: a pcap or pcapng file through the same stage as live traffic. Its packets feed a
//! streaming ring (zcrx-capture's `FileRing`: four blocks, refilled as they come back,
//! bounded memory for a file of any size), so files and live rings share one walker, one
//! extraction and one flow table path. The filter runs in user space before the ring, where the kernel runs it live.
//!
//! `-r -` reads standard input, streaming. SIGINT and SIGTERM end the read at the next packet
//! (or while it waits for input), and the run ends as at the end of the file: the output
//! flushed, the open flows exported, the `-z` hooks waited for, the counts printed. `-Z`
//! drops privileges once the input is open, before any output is created.

use std::io::Read;
use std::os::fd::AsFd;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::{anyhow, Context, Result};
use zcrx_capture::filter::Filter;
use zcrx_capture::pcapfile::{CaptureFile, FileRing};
use zcrx_capture::{
    Consumers, Hooks, Pipeline, PipelineConfig, PipelineError, Run, Steering, StopToken,
};
use zcrx_flowcache::LinkType;

use super::setup::{set_up, SetUp, Wants};
use crate::args::Config;
use crate::compress;
use crate::export::{self, Export};
use crate::names::NamesBook;
use crate::output::{close, open_sink, Output, Writer};
use crate::print::{print_flows, FlowLine};
use crate::signals::Usr1;
use crate::top;
use crate::totals::{self, FlowTotals, KEYS_PER_SLOT};

/// The input (a file, or standard input for `-`) read so that a stop request ends a read
/// that waits for data: it waits at most [`STOP_POLL_MS`] at a time, then looks at `stop`.
struct StoppableInput {
    input: std::fs::File,
    stop: Arc<AtomicBool>,
}

/// How long a read waits for input before it looks at the stop flag again, ms.
const STOP_POLL_MS: u16 = 100;

impl Read for StoppableInput {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
        loop {
            if self.stop.load(Ordering::Relaxed) {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::Interrupted,
                    "stopped by a signal",
                ));
            }
            let mut fds = [PollFd::new(self.input.as_fd(), PollFlags::POLLIN)];
            match poll(&mut fds, PollTimeout::from(STOP_POLL_MS)) {
                Ok(0) | Err(nix::errno::Errno::EINTR) => continue,
                Ok(_) => {}
                Err(e) => return Err(e.into()),
            }
            match self.input.read(buf) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                r => return r,
            }
        }
    }
}

/// Opens `path` (`-`: standard input): its name and the file, not yet read.
fn open_input(path: &Path) -> Result<(String, std::fs::File)> {
    if path == Path::new("-") {
        let fd = std::io::stdin()
            .as_fd()
            .try_clone_to_owned()
            .context("standard input")?;
        Ok(("standard input".to_string(), std::fs::File::from(fd)))
    } else {
        let f = std::fs::File::open(path).with_context(|| path.display().to_string())?;
        Ok((path.display().to_string(), f))
    }
}

/// The link type of `path`'s first packet (Ethernet for a file without packets): what -d
/// compiles the filter for.
pub(crate) fn file_linktype(path: &Path) -> Result<u32> {
    let (name, input) = open_input(path)?;
    let mut file = read_input(name, input, &Arc::new(AtomicBool::new(false)))?;
    Ok(match file.peek() {
        Some(Ok(p)) => p.linktype,
        _ => 1,
    })
}

/// The opened input as a capture: decompressed if it is, its header read.
fn read_input(name: String, input: std::fs::File, stop: &Arc<AtomicBool>) -> Result<CaptureFile> {
    let input = StoppableInput {
        input,
        stop: stop.clone(),
    };
    Ok(CaptureFile::from_reader(
        name.clone(),
        compress::decompressed(input).with_context(|| name)?,
    )?)
}

/// `-r FILE`: the file through the stage to the sink, then the flows, the export's report
/// and the counts. Returns the exit code (1 if the file, writing or the export failed).
pub(crate) fn offline(config: &Config, path: &Path) -> Result<i32> {
    // The input is opened first: every output is then created as the -Z user, and the
    // file's bytes are read (and parsed) only in the sandbox.
    let (name, input) = open_input(path)?;
    let SetUp {
        stop,
        usr1,
        export,
        mut screen,
        ..
    } = set_up(config, Wants::file(), &[])?;
    let usr1 = usr1.ok_or_else(|| anyhow!("SIGUSR1 was not caught"))?;
    let opened = read_input(name, input, &stop.flag());
    // A signal before the first bytes came: nothing was read.
    let file = match opened {
        Err(_) if stop.is_stopped() => {
            eprintln!("0 packets captured");
            return Ok(0);
        }
        r => r?,
    };
    let (ring, link) = file_ring(path, file, &config.capture, &stop)?;
    let Some((linktype, link)) = link else {
        return Ok(no_packets(config, export));
    };
    let out = file_output(config, linktype)?;
    // --top shows the names too.
    let book = (config.flows.names || config.top.is_some()).then(|| {
        NamesBook::new(config.flows.table.capacity, link).lowercase_dns(config.flows.names_lower)
    });
    let passive = top::Passive::default();
    let feed = FileRun {
        ring: &ring,
        link,
        out: &out,
        export: export.as_ref(),
        names: book.as_ref(),
        top: config.top.as_ref().map(|_| &passive),
    };
    let (run, flows) = feed.run(config, &stop, usr1);
    let (captured, failed) = close(&out);
    let stats = run?.stats;
    // A file that breaks off: what was read before is still reported, exported and
    // counted (the flows of its packets are real), and the exit code says the file failed.
    let stream_failed = match ring.ring().stream_error() {
        Some(e) => {
            eprintln!("zcap: {e}");
            true
        }
        None => false,
    };
    let note = flows.note();
    let mut lines = flows.into_lines();
    if let (Some(cfg), Some(screen)) = (&config.top, screen.as_mut()) {
        let filter = config.capture.filter.clone();
        show_top(cfg, screen, path, filter, &lines, &passive, &stop)?;
    }
    drop(screen);
    report_flows(config, &mut lines, note, book.as_ref());
    totals::report_lost(stats.flows_lost);
    let export_failed = export::report(export);
    debug_assert!(stats.packets >= captured);
    let read_failed = final_counts(config, captured, &ring, &out);
    Ok(if failed || export_failed || read_failed || stream_failed {
        1
    } else {
        0
    })
}

/// A file without packets: the export's report and the counts, all zero. Returns the exit
/// code (1 if the export failed).
fn no_packets(config: &Config, export: Option<Mutex<Export>>) -> i32 {
    let export_failed = export::report(export);
    if config.count_only {
        println!("0 packets");
    }
    eprintln!("0 packets captured");
    if export_failed {
        1
    } else {
        0
    }
}

/// `--top` over the file's end state: the server names the flows' TLS hellos gave, then the
/// screen until the user quits.
fn show_top(
    cfg: &top::TopConfig,
    screen: &mut top::Screen,
    path: &Path,
    filter: String,
    lines: &[FlowLine],
    passive: &top::Passive,
    stop: &StopToken,
) -> Result<()> {
    let flows: Vec<_> = lines.iter().map(|(s, _, tcp, _)| (*s, *tcp)).collect();
    for (s, _, _, names) in lines {
        let hello = names.as_ref().and_then(|n| n.client_hello.as_ref());
        if let Some(name) = hello.and_then(|h| h.hello.server_name.clone()) {
            passive.learn_server(s.key.canonical().0, name);
        }
    }
    let file = path.display().to_string();
    top::run_file(cfg, screen, file, filter, &flows, passive, stop)
}

/// The sink and its counters, for packets of the file's link type.
fn file_output(config: &Config, linktype: u32) -> Result<Output> {
    Ok(Output::new(
        open_sink(&config.sink, linktype, config.capture.snaplen)?,
        config.sink.style,
        config.capture.count.unwrap_or(u64::MAX),
    ))
}

/// The file's flows at the end: `--flows`' table (and the note on the flows it had no
/// room for), then the `--names` book's counts.
fn report_flows(
    config: &Config,
    lines: &mut [FlowLine],
    note: Option<String>,
    book: Option<&NamesBook>,
) {
    if config.flows.print {
        print_flows(
            lines,
            config.flows.json,
            config.flows.community_id_seed,
            "flows",
            config.flows.names,
        );
        if let Some(note) = note {
            eprintln!("{note}");
        }
    }
    if let Some(b) = book {
        crate::names::report(
            [b.counts()],
            config.flows.table.capacity,
            config.flows.names_stats,
        );
    }
}

/// The file's ring and where its packets go, for [`FileRun::run`].
struct FileRun<'a> {
    ring: &'a FileRing,
    link: LinkType,
    out: &'a Output,
    export: Option<&'a Mutex<Export>>,
    /// `--names`: the run's names book.
    names: Option<&'a NamesBook>,
    /// `--top`: the names read from the packets.
    top: Option<&'a top::Passive>,
}

impl FileRun<'_> {
    /// The file through the stage into the sink (which the consumer owns for the run), the
    /// flows that ended summed for `--flows` and exported; SIGUSR1 answered meanwhile.
    fn run(
        &self,
        config: &Config,
        stop: &StopToken,
        usr1: Usr1,
    ) -> (Result<Run<()>, PipelineError>, FlowTotals) {
        let (out, ring, export, book) = (self.out, self.ring, self.export, self.names);
        let keep = config.flows.print || self.top.is_some();
        let mut state = out.lock().take();
        let mut flows = FlowTotals::new(KEYS_PER_SLOT * config.flows.table.capacity);
        let pipeline = PipelineConfig::builder()
            .consumers(Consumers::Inline)
            .steering(if keep || export.is_some() {
                Steering::Flows(config.flows.table)
            } else {
                Steering::Off
            })
            .link(self.link)
            // Every packet in the ring passed the filter: the count is the stage's.
            .max_packets_opt(config.capture.count)
            .build()
            .expect("inline, with a default interval: a valid configuration");
        let mut writer = Some(Writer {
            out,
            link: self.link,
            own: state.as_mut(),
            // The writer's stop (-c reached, a failed write) ends the read too.
            stop: stop.clone(),
            shard: 0,
            cooked: false,
            loopback: false,
            names: book,
        });
        let run = std::thread::scope(|s| {
            let _answering = usr1.answer(s, || {
                format!(
                    "{} packets captured\n{} packets read\n",
                    out.seen.0.load(Ordering::Relaxed),
                    ring.packets_read()
                )
            });
            // Each flow with its TCP state, followed by the stage's table.
            let hooks = Hooks::new().on_flow_ended(|e| {
                let names = book.and_then(|b| b.ended(&e.record));
                if let Some(x) = export {
                    x.lock()
                        .unwrap()
                        .record(&e.record, e.tcp.as_ref(), names.as_deref());
                }
                if keep {
                    flows.add(&e.record, e.tcp, names);
                }
            });
            let pipeline = Pipeline::new(self.ring, pipeline);
            let mut writer = || writer.take().expect("one consumer");
            match self.top {
                Some(names) => pipeline.run(
                    |_| top::Tap {
                        inner: writer(),
                        names,
                        link: self.link,
                    },
                    hooks,
                ),
                None => pipeline.run(|_| writer(), hooks),
            }
        });
        *out.lock() = state;
        (run, flows)
    }
}

/// The file's packets, through the filter, as a streaming ring, with the file's link type
/// (`None`: no packets).
fn file_ring(
    path: &Path,
    mut file: CaptureFile,
    cap: &crate::args::Capture,
    stop: &StopToken,
) -> Result<(FileRing, Option<(u32, LinkType)>)> {
    // The filter is compiled for the file's link type, which its first packet tells.
    let first = match file.peek() {
        Some(Ok(p)) => Some(p.linktype),
        _ => None,
    };
    let mut builder = FileRing::builder()
        .snaplen(cap.snaplen)
        .block_count(BLOCKS)
        .stop_on(stop);
    if let Some(linktype) = first {
        let filter = Filter::compile_with(&cap.filter, linktype, cap.optimize)?;
        if !filter.accepts_all() {
            builder = builder.keep(move |p| filter.matches(&p.data));
        }
    }
    let ring = builder.build(file)?;
    let Some(linktype) = ring.linktype() else {
        return Ok((ring, None));
    };
    let link = LinkType::from_linktype(linktype).ok_or_else(|| {
        anyhow!("{}: link type {linktype} is not supported (Ethernet, Linux SLL/SLL2, raw IP, BSD loopback are)", path.display())
    })?;
    Ok((ring, Some((linktype, link))))
}

/// Blocks of the streaming ring.
const BLOCKS: usize = 4;

/// tcpdump's final counts for a file (and `--count`'s line); says why the file ended early,
/// if it did, and returns whether it did.
fn final_counts(config: &Config, captured: u64, ring: &FileRing, out: &Output) -> bool {
    if config.count_only {
        println!("{captured} packets");
    }
    eprintln!("{captured} packets captured");
    eprintln!("{} packets read", ring.packets_read());
    eprintln!("{} packets truncated", out.truncated());
    match ring.take_error() {
        Some(e) => {
            eprintln!("zcap: {e}");
            true
        }
        None => false,
    }
}
