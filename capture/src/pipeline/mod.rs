//! The pipeline: one stage thread reads each block's packet headers, tracks their flows and
//! steers every packet to the consumer that owns its flow; consumers get references into the
//! ring (zero-copy) or copies made with a chosen routine.
//!
//! The stage is three parts, each in its own module: **steering** (`steer`: extract, track,
//! choose the owner), **routing** (`route`: the inline consumer, or per-consumer batches
//! with one lease each and bounded queues) and **delivery** (`deliver`: one routine for
//! inline and threaded consumers, zero-copy or copied). `fault` turns panics into errors.
//!
//! Promises:
//! - every packet the stage takes is delivered exactly once, to its flow's owner, in ring
//!   order within the flow (one stage, one owner per flow: the owner is a function of the
//!   flow's keyed hash, so it never changes, even across eviction);
//! - queues are bounded: when a consumer falls behind, the stage blocks, stops taking blocks,
//!   and the kernel counts drops — memory does not grow;
//! - on stop (a [`StopToken`]) the blocks already filled are still delivered (at most one
//!   ring's worth); on stop, end of input or a fault every block goes back to the ring before
//!   `run` returns;
//! - a consumer or hook that panics ends the run with an error naming it.

mod deliver;
mod fault;
mod route;
mod steer;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{bounded, Receiver, Sender};
/// Which flow a delivered packet belongs to ([`FlowTag::id`] is `None` for frames that carry
/// no IP flow: ARP, malformed headers, steering off; those go to consumer 0) and its
/// direction: 8 bytes, travelling with each packet from the stage to its consumer. The flow
/// key is not in it (it was, and made the tag 64 bytes, a cache line per packet crossing
/// between cores): [`Delivered::flow_key`] reads it again from the frame's headers when a
/// consumer asks.
pub use zcrx_flowcache::FlowTag;
use zcrx_flowcache::{FlowKey, FlowRecord, FlowTable, FlowTableConfig, LinkType};
use zcrx_ring::{Block, LinkAddr, PacketMeta, RingError, RingStats};

use crate::copy::{Copier, Routine, Unsupported};
use crate::source::BlockSource;
use deliver::Deliverer;
use fault::{Faults, StageHooks};
use route::{Batcher, Handoff, OnStage, Outbox, Recycled, Route, WholeBlocks};
use steer::Steer;

/// How consumers receive packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// A reference into the ring; the block stays leased while the handler runs.
    ZeroCopy,
    /// A copy into the consumer's own arena made with this routine; the lease is released
    /// before the handler runs (the user-space analogue of `copy_to_user`).
    Copy(Routine),
}

impl Delivery {
    /// The copier a pipeline over blocks of `block_size` bytes uses for this delivery (none
    /// for zero-copy): a consumer reads its copies back right after they are made, at most a
    /// block's worth (threaded: one batch; inline: one packet) written in between, so that
    /// is the destination's reuse distance ([`Copier::for_destination`]).
    pub fn copier(&self, block_size: usize) -> Result<Option<Copier>, crate::copy::Unsupported> {
        match *self {
            Delivery::ZeroCopy => Ok(None),
            Delivery::Copy(r) => Copier::for_destination(r, block_size).map(Some),
        }
    }

    /// Every delivery mode: zero-copy, then each copy routine (the one list; tools and
    /// benches iterate it).
    pub const ALL: [Delivery; 7] = [
        Delivery::ZeroCopy,
        Delivery::Copy(Routine::Libc),
        Delivery::Copy(Routine::Erms),
        Delivery::Copy(Routine::Avx2),
        Delivery::Copy(Routine::Avx512),
        Delivery::Copy(Routine::NonTemporal),
        Delivery::Copy(Routine::Auto),
    ];

    /// The names of [`Delivery::ALL`], comma-separated (help and error messages).
    pub fn names() -> String {
        Delivery::ALL.map(|d| d.name()).join(", ")
    }

    /// `zerocopy`, `copy-libc`, `copy-erms`, `copy-avx2`, `copy-avx512`, `copy-nt`, `copy-auto`.
    pub fn name(&self) -> String {
        match self {
            Delivery::ZeroCopy => "zerocopy".into(),
            Delivery::Copy(r) => format!("copy-{}", r.name()),
        }
    }
    /// Parses [`Delivery::name`].
    pub fn from_name(s: &str) -> Option<Delivery> {
        if s == "zerocopy" {
            return Some(Delivery::ZeroCopy);
        }
        Routine::from_name(s.strip_prefix("copy-")?).map(Delivery::Copy)
    }
}

/// How many consumers, and where they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Consumers {
    /// One consumer on the stage thread: no queue, no lease, no second thread. For
    /// one-consumer users such as a sniffer writing a file.
    Inline,
    /// `count` consumer threads (1..=1024), each owning the flows whose keyed hash maps to
    /// it, each with a queue of `queue_depth` batches (bounded memory: a full queue stops the
    /// stage).
    Threads {
        /// Consumer threads.
        count: usize,
        /// Batches queued per consumer before the stage waits.
        queue_depth: usize,
    },
}

impl Consumers {
    /// `count` consumer threads with queues of 16 batches.
    pub fn threads(count: usize) -> Self {
        Consumers::Threads {
            count,
            queue_depth: 16,
        }
    }
    /// How many consumers.
    pub fn count(&self) -> usize {
        match self {
            Consumers::Inline => 1,
            Consumers::Threads { count, .. } => *count,
        }
    }
}

/// Whether the stage reads headers to steer packets by flow.
#[derive(Debug, Clone, Copy)]
pub enum Steering {
    /// Extract every packet's 5-tuple, track it in a flow table of this configuration, and
    /// deliver it to the consumer that owns the flow.
    Flows(FlowTableConfig),
    /// Read no headers: every packet goes to consumer 0 untouched (one consumer only). For
    /// users that need no flows, such as a sniffer writing a file: the stage then costs a
    /// few ns per packet.
    Off,
}

/// Pipeline settings.
#[derive(Debug, Clone)]
pub struct PipelineConfig {
    /// Consumers and where they run.
    pub consumers: Consumers,
    /// Zero-copy or copied delivery.
    pub delivery: Delivery,
    /// Flow steering.
    pub steering: Steering,
    /// Link type of the frames (Ethernet for AF_PACKET on Ethernet and veth).
    pub link: LinkType,
    /// Stop after this many packets.
    pub max_packets: Option<u64>,
    /// How long one wait for a block may take before the stop token is checked again.
    pub poll_timeout: Duration,
    /// Expire idle flows every this much packet time.
    pub expire_every: Duration,
    /// Flow time follows the system clock while no packet arrives (for live sources, whose
    /// packets carry the system clock's time; off for files, whose time is their own).
    pub clock_when_quiet: bool,
    /// Call the tick hook ([`Hooks::on_tick`]) this often (wall time), even when no packet
    /// arrives.
    pub tick_every: Duration,
}

impl Default for PipelineConfig {
    fn default() -> Self {
        PipelineConfig {
            consumers: Consumers::threads(1),
            delivery: Delivery::ZeroCopy,
            // The table's memory on transparent huge pages (if the kernel has them).
            steering: Steering::Flows(FlowTableConfig {
                prepare_memory: Some(zcrx_ring::advise_huge_pages),
                ..FlowTableConfig::default()
            }),
            link: LinkType::Ethernet,
            max_packets: None,
            poll_timeout: Duration::from_millis(100),
            expire_every: Duration::from_secs(1),
            clock_when_quiet: false,
            tick_every: Duration::from_secs(1),
        }
    }
}

/// The system clock (CLOCK_REALTIME, the kernel's packet timestamps), ns since the epoch.
fn realtime_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// One packet handed to a consumer's handler.
#[derive(Debug, Clone, Copy)]
pub struct Delivered<'a> {
    data: &'a [u8],
    meta: PacketMeta,
    flow: &'a FlowTag,
    consumer: usize,
    /// The frames' link type, for [`Delivered::flow_key`].
    linktype: LinkType,
    /// Where the packet's sockaddr_ll can be read (inline consumers): its block and header
    /// offset. Read only when asked ([`Delivered::link`]): carrying the address itself cost
    /// the stage 20-80 instructions per packet under callgrind.
    link: Option<(&'a Block<'a>, u32)>,
}

impl<'a> Delivered<'a> {
    /// The frame's captured bytes (in the ring for zero-copy, in the consumer's arena for copy).
    pub fn data(&self) -> &'a [u8] {
        self.data
    }
    /// Header facts from the ring (lengths, timestamp, VLAN, status).
    pub fn meta(&self) -> &PacketMeta {
        &self.meta
    }
    /// Its flow.
    pub fn flow(&self) -> &'a FlowTag {
        self.flow
    }
    /// The flow key as the packet travelled (directional), `None` for a packet without a
    /// flow. Read from the frame's headers when asked, with the stage's own extraction (the
    /// same bytes give the same key): a few nanoseconds here instead of 48 bytes per packet
    /// carried from the stage for consumers that never look.
    pub fn flow_key(&self) -> Option<FlowKey> {
        self.flow.id()?;
        let vlan = self.meta.vlan_tci;
        zcrx_flowcache::extract(self.linktype, self.data, vlan)
            .ok()
            .map(|x| x.key)
    }
    /// The consumer running the handler.
    pub fn consumer(&self) -> usize {
        self.consumer
    }
    /// The packet's `sockaddr_ll` (interface, direction, link-layer type and address), read
    /// from the ring when asked; `None` for threaded consumers (the block may be back with
    /// the kernel by then).
    pub fn link(&self) -> Option<LinkAddr> {
        self.link.map(|(b, hdr)| b.link_addr_at(hdr))
    }
}

/// Errors of [`Pipeline::run`].
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    /// The ring failed (interface gone, ...).
    #[error(transparent)]
    Ring(#[from] RingError),
    /// The copy routine cannot run on this CPU.
    #[error(transparent)]
    Copy(#[from] Unsupported),
    /// A setting is out of range.
    #[error("invalid pipeline setting {field}: {reason}")]
    Config {
        /// The field.
        field: &'static str,
        /// Why.
        reason: String,
    },
    /// A consumer's handler panicked. The run stopped, every block went back to the ring,
    /// and the ring can be read again.
    #[error("consumer {consumer} panicked: {message}")]
    ConsumerPanicked {
        /// Which consumer.
        consumer: usize,
        /// The panic message.
        message: String,
    },
    /// A callback on the stage thread (flow end, tick) panicked; the run stopped as for a
    /// consumer panic.
    #[error("the {callback} callback panicked: {message}")]
    CallbackPanicked {
        /// `flow-end` or `tick`.
        callback: &'static str,
        /// The panic message.
        message: String,
    },
}

/// Counters of one consumer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ConsumerStats {
    /// Packets handled.
    pub packets: u64,
    /// Captured bytes handled.
    pub bytes: u64,
    /// Batches received.
    pub batches: u64,
}

/// Counters of a run.
#[derive(Debug, Clone, Default)]
pub struct PipelineStats {
    /// Per consumer.
    pub consumers: Vec<ConsumerStats>,
    /// Packets the stage took from the ring (= delivered, once `run` returned).
    pub packets: u64,
    /// Blocks taken.
    pub blocks: u64,
    /// Batches sent.
    pub batches: u64,
    /// Times a consumer's queue was full and the stage had to wait.
    pub queue_full: u64,
    /// Time the stage spent walking, extracting, tracking and batching (not waiting).
    pub stage_ns: u64,
    /// Frames without an IP flow (sent to consumer 0).
    pub non_ip: u64,
    /// Blocks whose headers failed validation (their valid prefix was delivered).
    pub bad_blocks: u64,
    /// Flows created.
    pub flows_created: u64,
    /// Most blocks held at once (withheld from the kernel).
    pub max_blocks_held: usize,
    /// Kernel counters at the end, for a live ring.
    pub kernel: Option<RingStats>,
    /// The copy routine, as chosen (`describe()`), for copy delivery.
    pub copier: Option<String>,
}

impl PipelineStats {
    /// Stage nanoseconds per packet.
    pub fn stage_ns_per_packet(&self) -> f64 {
        if self.packets == 0 {
            0.0
        } else {
            self.stage_ns as f64 / self.packets as f64
        }
    }
}

/// A consumer: receives every packet of the flows it owns, then is finished for its
/// result, which [`Pipeline::run`] returns. Any `FnMut(&Delivered)` closure is a consumer
/// whose result is `()`.
pub trait Consumer: Send {
    /// What the consumer hands back at the end of the run.
    type Output: Send;
    /// One packet. The packet (zero-copy: the ring's bytes) lives only for this call.
    fn packet(&mut self, packet: &Delivered<'_>);
    /// Several packets whose bytes all stay readable until this call returns: a consumer
    /// thread's batch, or with zero-copy delivery to the inline consumer and steering off,
    /// the rest of a block; the other packets come one at a time through
    /// [`Consumer::packet`]. For a consumer that gains from holding several at once (zcap
    /// hands a block's large frames to one `writev` instead of copying them); the default
    /// hands each to [`Consumer::packet`]. Packets left in the iterator when this returns
    /// count as delivered and are not offered again.
    #[inline]
    fn packets<'a>(&mut self, packets: impl Iterator<Item = Delivered<'a>>)
    where
        Self: Sized,
    {
        for p in packets {
            self.packet(&p);
        }
    }
    /// The run is over (every packet delivered): the result.
    fn finish(self) -> Self::Output;
}

impl<F: FnMut(&Delivered<'_>) + Send> Consumer for F {
    type Output = ();
    #[inline]
    fn packet(&mut self, packet: &Delivered<'_>) {
        self(packet)
    }
    fn finish(self) {}
}

/// Stops a run from outside: any thread (or, through [`StopToken::flag`], a signal handler)
/// may stop it; the stage checks the token between blocks, delivers the blocks already
/// filled and the one the kernel was filling (a live ring hands it over within its block
/// timeout), and returns. One token can stop several pipelines.
#[derive(Debug, Clone, Default)]
pub struct StopToken(Arc<AtomicBool>);

impl StopToken {
    /// A token not yet stopped.
    pub fn new() -> Self {
        Self::default()
    }
    /// Asks every run holding this token to stop.
    pub fn stop(&self) {
        // Relaxed: a request checked at block boundaries; it publishes no data.
        self.0.store(true, Ordering::Relaxed);
    }
    /// Whether [`StopToken::stop`] was called (or the flag set).
    pub fn is_stopped(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
    /// The flag behind the token, for code that sets a flag (e.g.
    /// `signal_hook::flag::register(SIGINT, token.flag())`).
    pub fn flag(&self) -> Arc<AtomicBool> {
        self.0.clone()
    }
}

/// Calls on the stage thread: `on_flow_end` sees every finished flow (evicted, idle, and all
/// remaining ones at the end); `on_tick` looks at the live flow table every
/// [`PipelineConfig::tick_every`] (periodic flow reports, status lines).
pub struct Hooks<'h> {
    flow_end: Box<dyn FnMut(&FlowRecord) + 'h>,
    tick: Box<dyn FnMut(&FlowTable) + 'h>,
}

impl Default for Hooks<'_> {
    fn default() -> Self {
        Hooks {
            flow_end: Box::new(|_| {}),
            tick: Box::new(|_| {}),
        }
    }
}

impl std::fmt::Debug for Hooks<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Hooks")
    }
}

impl<'h> Hooks<'h> {
    /// No hooks.
    pub fn new() -> Self {
        Self::default()
    }
    /// Called for every flow that ends.
    pub fn on_flow_end(mut self, f: impl FnMut(&FlowRecord) + 'h) -> Self {
        self.flow_end = Box::new(f);
        self
    }
    /// Called every `tick_every` with the live flow table (empty with [`Steering::Off`]).
    pub fn on_tick(mut self, f: impl FnMut(&FlowTable) + 'h) -> Self {
        self.tick = Box::new(f);
        self
    }
}

/// What a run returns: each consumer's result, in consumer order, and the counters.
#[derive(Debug)]
pub struct Run<O> {
    /// `Consumer::finish` of consumer 0, 1, ...
    pub outputs: Vec<O>,
    /// Counters of the run.
    pub stats: PipelineStats,
}

/// One block from the source, or why there is none.
enum Next<'s> {
    Block(Block<'s>),
    /// Nothing came within the wait: tick, check the stop token, wait again.
    Idle,
    /// The input ended, or the stop drained the ring.
    End,
}

/// Takes blocks; after a stop, takes what the kernel filled, waiting up to the source's
/// [`BlockSource::retire_wait`] for the block it was filling (at most one ring's worth, so an
/// endless source ends too).
struct Taker {
    /// After a stop: blocks still to take, and until when to wait for the kernel to hand
    /// over the block it was filling.
    drain: Option<(usize, Instant)>,
}

impl Taker {
    fn next<'s, S: BlockSource>(
        &mut self,
        source: &'s S,
        stop: &StopToken,
        wait: Duration,
    ) -> Result<Next<'s>, RingError> {
        if self.drain.is_none() && stop.is_stopped() {
            let count = source.block_map().block_count();
            self.drain = Some((count, Instant::now() + source.retire_wait()));
        }
        let wait = match self.drain {
            Some((0, _)) => return Ok(Next::End),
            Some((_, until)) => until.saturating_duration_since(Instant::now()),
            None => wait,
        };
        Ok(match source.next_block(wait)? {
            Some(block) => {
                if let Some((left, _)) = self.drain.as_mut() {
                    *left -= 1;
                }
                Next::Block(block)
            }
            None if self.drain.is_some() || source.exhausted() => Next::End,
            None => Next::Idle,
        })
    }
}

/// The pipeline over one block source.
pub struct Pipeline<'s, S: BlockSource> {
    source: &'s S,
    config: PipelineConfig,
    stop: StopToken,
    /// The flow table for the next run, built with the pipeline (see [`Pipeline::new`]).
    steer: std::sync::Mutex<Option<Steer>>,
}

impl<'s, S: BlockSource> Pipeline<'s, S> {
    /// A pipeline reading `source`, with a stop token of its own. Its flow table is
    /// allocated and written here, before any packet: a table of 65 536 flows is 6.8 MB of
    /// page faults (and, with huge pages, compaction), which would otherwise fall on the
    /// first packets of the run (a second run builds a fresh table when it starts).
    pub fn new(source: &'s S, config: PipelineConfig) -> Self {
        let steer = std::sync::Mutex::new(Some(Steer::new(&config)));
        Pipeline {
            source,
            config,
            stop: StopToken::new(),
            steer,
        }
    }

    /// Stops when `stop` is stopped (share one token between pipelines to stop them all).
    pub fn with_stop(mut self, stop: StopToken) -> Self {
        self.stop = stop;
        self
    }

    /// The token that stops this pipeline.
    pub fn stop_token(&self) -> StopToken {
        self.stop.clone()
    }

    /// Runs until the input ends, `max_packets`, or the stop token. `make_consumer(i)`
    /// builds consumer `i` (on the calling thread); the stage runs on the calling thread.
    pub fn run<C: Consumer>(
        &self,
        make_consumer: impl FnMut(usize) -> C,
        mut hooks: Hooks<'_>,
    ) -> Result<Run<C::Output>, PipelineError> {
        self.check()?;
        let copier = self
            .config
            .delivery
            .copier(self.source.block_map().block_size())?;
        let mut stats = PipelineStats {
            copier: copier.map(|c| c.describe()),
            ..Default::default()
        };
        let prepared = self.steer.lock().unwrap_or_else(|p| p.into_inner()).take();
        let mut steer = prepared.unwrap_or_else(|| Steer::new(&self.config));
        let outputs = match self.config.consumers {
            Consumers::Inline => {
                self.run_inline(make_consumer, copier, &mut steer, &mut stats, &mut hooks)?
            }
            Consumers::Threads { count, queue_depth } => self.run_threads(
                (count, queue_depth),
                make_consumer,
                copier,
                &mut steer,
                &mut stats,
                &mut hooks,
            )?,
        };
        stats.kernel = self.source.kernel_stats()?;
        Ok(Run { outputs, stats })
    }

    fn check(&self) -> Result<(), PipelineError> {
        let bad = |field, reason: String| Err(PipelineError::Config { field, reason });
        if let Consumers::Threads { count, queue_depth } = self.config.consumers {
            if count == 0 || count > 1024 {
                return bad("consumers", format!("{count} threads; must be 1..=1024"));
            }
            if queue_depth == 0 {
                return bad("queue_depth", "0; must be at least 1".into());
            }
        }
        if matches!(self.config.steering, Steering::Off) && self.config.consumers.count() > 1 {
            return bad(
                "steering",
                "Off sends every packet to consumer 0: it needs exactly one consumer".into(),
            );
        }
        Ok(())
    }

    fn run_inline<C: Consumer>(
        &self,
        mut make_consumer: impl FnMut(usize) -> C,
        copier: Option<Copier>,
        steer: &mut Steer,
        stats: &mut PipelineStats,
        hooks: &mut Hooks<'_>,
    ) -> Result<Vec<C::Output>, PipelineError> {
        let faults = Faults::new();
        let mut route = OnStage {
            to: Deliverer::new(0, make_consumer(0), copier, self.config.link),
            phase: &faults.phase,
        };
        faults.stage(|| self.stage(&mut route, steer, stats, hooks, &faults))?;
        let to = route.to;
        let (output, cs) = fault::consumer(&faults.halt, 0, || to.finish())?;
        stats.consumers.push(cs);
        Ok(vec![output])
    }

    fn run_threads<C: Consumer>(
        &self,
        (count, queue_depth): (usize, usize),
        make_consumer: impl FnMut(usize) -> C,
        copier: Option<Copier>,
        steer: &mut Steer,
        stats: &mut PipelineStats,
        hooks: &mut Hooks<'_>,
    ) -> Result<Vec<C::Output>, PipelineError> {
        // Room for every batch's vectors in flight (queued, in a consumer's hands, pending at
        // the stage): an array channel, so returning them allocates nothing.
        let (recycle, recycled) = bounded::<Recycled>(count * (queue_depth + 3));
        let (queues, rxs): (Vec<Sender<Handoff<'s>>>, Vec<Receiver<Handoff<'s>>>) =
            (0..count).map(|_| bounded(queue_depth)).unzip();
        let consumers: Vec<C> = (0..count).map(make_consumer).collect();
        let faults = Faults::new();
        let link = self.config.link;
        std::thread::scope(|s| {
            let threads: Vec<_> = rxs
                .into_iter()
                .zip(consumers)
                .enumerate()
                .map(|(i, (rx, c))| {
                    let (recycle, halt) = (recycle.clone(), &faults.halt);
                    let to = Deliverer::new(i, c, copier, link);
                    s.spawn(move || fault::consumer(halt, i, || route::consume(to, rx, recycle)))
                })
                .collect();
            drop(recycle);
            let out = Outbox::new(queues, recycled);
            // One consumer thread is handed whole blocks, several get descriptor batches.
            let staged = if count == 1 {
                self.stage_and_close(WholeBlocks::new(out), steer, stats, hooks, &faults)
            } else {
                self.stage_and_close(Batcher::new(out), steer, stats, hooks, &faults)
            };
            let mut outputs = Vec::with_capacity(count);
            let mut first_panic = None;
            for t in threads {
                match t
                    .join()
                    .expect("consumer panics are caught on their thread")
                {
                    Ok((output, cs)) => {
                        outputs.push(output);
                        stats.consumers.push(cs);
                    }
                    Err(e) => {
                        stats.consumers.push(ConsumerStats::default());
                        first_panic.get_or_insert(e);
                    }
                }
            }
            // A consumer's panic explains a stage that stopped on a closed queue.
            match first_panic {
                Some(e) => Err(e),
                None => staged.map(|()| outputs),
            }
        })
    }

    /// The stage loop over consumer threads' `route`, which is dropped when it ends: that
    /// closes the queues, so consumers deliver what is queued, then finish (a panicked
    /// consumer's queue is dropped with its channel), and every lease is released.
    fn stage_and_close<R: Route<'s>>(
        &self,
        mut route: R,
        steer: &mut Steer,
        stats: &mut PipelineStats,
        hooks: &mut Hooks<'_>,
        faults: &Faults,
    ) -> Result<(), PipelineError> {
        faults.stage(|| self.stage(&mut route, steer, stats, hooks, faults))
    }

    /// The stage loop: take a block, walk it (steer and route each packet), hand it on,
    /// expire flows; tick and stop checks between blocks.
    fn stage<R: Route<'s>>(
        &self,
        route: &mut R,
        steer: &mut Steer,
        stats: &mut PipelineStats,
        hooks: &mut Hooks<'_>,
        faults: &Faults,
    ) -> Result<(), PipelineError> {
        let cfg = &self.config;
        let mut hooks = StageHooks {
            hooks,
            phase: &faults.phase,
        };
        let max = cfg.max_packets.unwrap_or(u64::MAX);
        let mut taker = Taker { drain: None };
        let mut next_tick = Instant::now() + cfg.tick_every;
        let wait = cfg.poll_timeout.min(cfg.tick_every);
        while stats.packets < max {
            if faults.halted() {
                return Ok(()); // a consumer panicked: `run` returns its error
            }
            if Instant::now() >= next_tick {
                hooks.tick(steer.table());
                next_tick = Instant::now() + cfg.tick_every;
            }
            let block = match taker.next(self.source, &self.stop, wait)? {
                Next::Block(b) => b,
                Next::Idle => {
                    if cfg.clock_when_quiet {
                        steer.quiet(realtime_ns(), &mut |r| hooks.flow_end(r));
                    }
                    continue;
                }
                Next::End => break,
            };
            let t0 = Instant::now();
            stats.blocks += 1;
            let held = self.source.block_map().blocks_held();
            stats.max_blocks_held = stats.max_blocks_held.max(held);
            self.walk(&block, route, steer, stats, &mut hooks, max);
            if !route.end_block(block, stats) {
                return Ok(()); // a consumer is gone (it panicked): `run` returns its error
            }
            steer.after_block(&mut |r| hooks.flow_end(r));
            stats.stage_ns += t0.elapsed().as_nanos() as u64;
        }
        steer.finish(&mut |r| hooks.flow_end(r));
        Ok(())
    }

    /// Steers and routes every packet of `block` (up to `max` in the run).
    #[inline]
    fn walk<R: Route<'s>>(
        &self,
        block: &Block<'s>,
        route: &mut R,
        steer: &mut Steer,
        stats: &mut PipelineStats,
        hooks: &mut StageHooks<'_, '_>,
        max: u64,
    ) {
        // The block's own walker (not `Block::packets`, whose error-chaining adapter costs a
        // few ns per packet in this loop).
        let Ok(view) = block.view() else {
            stats.bad_blocks += 1;
            return; // dropping the block hands it back
        };
        if !steer.tracking() {
            if let Some(good) = route.untracked(block, &view, stats, max) {
                stats.bad_blocks += u64::from(!good);
                return;
            }
        }
        // Each packet with its descriptor, made from the walk's own checked offsets.
        let Ok(walk) = block.described() else {
            stats.bad_blocks += 1;
            return;
        };
        for p in walk {
            let Ok((p, desc)) = p else {
                stats.bad_blocks += 1;
                break;
            };
            if stats.packets == max {
                break;
            }
            stats.packets += 1;
            let (owner, tag) = steer.route(&p, stats, &mut |r| hooks.flow_end(r));
            route.packet(block, &p, desc, owner, tag);
        }
    }
}
