//! The pipeline: one stage thread reads each block's packet headers, tracks their flows and
//! steers every packet to the consumer thread that owns its flow; consumers get references
//! into the ring (zero-copy) or copies made with a chosen routine.
//!
//! Promises:
//! - every packet the stage takes is delivered exactly once, to its flow's owner, in ring
//!   order within the flow (one stage, one owner per flow: the owner is a function of the
//!   flow's keyed hash, so it never changes, even across eviction);
//! - queues are bounded: when a consumer falls behind, the stage blocks, stops taking blocks,
//!   and the kernel counts drops — memory does not grow;
//! - on stop (flag) the blocks already filled are still delivered (at most one ring's worth);
//!   on stop or end of input every block goes back to the ring before `run` returns.

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{bounded, unbounded, Receiver, Sender, TrySendError};
use zcrx_flowcache::{
    extract, Direction, FlowId, FlowKey, FlowRecord, FlowTable, FlowTableConfig, LinkType,
};
use zcrx_ring::{Batch, PacketDesc, PacketMeta, RingError, RingStats};

use crate::copy::{Copier, Routine, Unsupported};
use crate::source::BlockSource;

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
    /// `zerocopy`, `copy-libc`, `copy-erms`, `copy-avx2`, `copy-nt`, `copy-auto`.
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

/// Pipeline settings.
#[derive(Debug, Clone)]
pub struct PipelineConfig {
    /// Consumer threads (1..=1024).
    pub consumers: usize,
    /// Delivery mode.
    pub delivery: Delivery,
    /// The flow table.
    pub flow_table: FlowTableConfig,
    /// Link type of the frames (Ethernet for AF_PACKET on Ethernet and veth).
    pub link: LinkType,
    /// Batches queued per consumer before the stage waits (bounded memory).
    pub queue_depth: usize,
    /// Stop after this many packets.
    pub max_packets: Option<u64>,
    /// How long one wait for a block may take before the stop flag is checked again.
    pub poll_timeout: Duration,
    /// Expire idle flows every this much packet time.
    pub expire_every: Duration,
    /// Call the tick hook of [`Pipeline::run_with_tick`] this often (wall time), even when no
    /// packet arrives.
    pub tick_every: Duration,
    /// Read headers and track flows (on by default). Off, with one consumer, the stage only
    /// walks blocks and hands every packet to consumer 0 untouched: for users that need no
    /// flows (a sniffer writing a file), the stage then costs a few ns per packet.
    pub track_flows: bool,
    /// Run the (single) consumer's handler on the stage thread: no queue, no lease, no second
    /// thread. For one-consumer users such as a sniffer writing a file; needs `consumers == 1`.
    pub inline: bool,
}

impl Default for PipelineConfig {
    fn default() -> Self {
        PipelineConfig {
            consumers: 1,
            delivery: Delivery::ZeroCopy,
            flow_table: FlowTableConfig::default(),
            link: LinkType::Ethernet,
            queue_depth: 16,
            max_packets: None,
            poll_timeout: Duration::from_millis(100),
            expire_every: Duration::from_secs(1),
            tick_every: Duration::from_secs(1),
            track_flows: true,
            inline: false,
        }
    }
}

/// Which flow a delivered packet belongs to. `None` fields for frames that carry no IP flow
/// (ARP, malformed headers): those go to consumer 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowTag {
    /// The flow key as the packet travelled (directional).
    pub key: Option<FlowKey>,
    /// The flow's id in the stage's table.
    pub id: Option<FlowId>,
    /// Direction within the flow.
    pub dir: Direction,
}

/// One packet handed to a consumer's handler.
#[derive(Debug, Clone, Copy)]
pub struct Delivered<'a> {
    data: &'a [u8],
    meta: &'a PacketMeta,
    flow: &'a FlowTag,
    consumer: usize,
}

impl<'a> Delivered<'a> {
    /// The frame's captured bytes (in the ring for zero-copy, in the consumer's arena for copy).
    pub fn data(&self) -> &'a [u8] {
        self.data
    }
    /// Header facts from the ring (lengths, timestamp, VLAN, status).
    pub fn meta(&self) -> &'a PacketMeta {
        self.meta
    }
    /// Its flow.
    pub fn flow(&self) -> &'a FlowTag {
        self.flow
    }
    /// The consumer running the handler.
    pub fn consumer(&self) -> usize {
        self.consumer
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

/// The message of a panic payload (`panic!` with a literal or a format string).
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(a panic payload that is not a string)".to_string()
    }
}

/// What the stage thread was running when it unwound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Stage,
    FlowEnd,
    Tick,
    Inline,
}

impl Phase {
    fn error(self, message: String) -> PipelineError {
        match self {
            Phase::FlowEnd => PipelineError::CallbackPanicked {
                callback: "flow-end",
                message,
            },
            Phase::Tick => PipelineError::CallbackPanicked {
                callback: "tick",
                message,
            },
            Phase::Inline => PipelineError::ConsumerPanicked {
                consumer: 0,
                message,
            },
            // A bug of ours: still an error with the message, never a stuck ring.
            Phase::Stage => PipelineError::CallbackPanicked {
                callback: "stage",
                message,
            },
        }
    }
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

/// A batch on its way to a consumer: packets of one block under one lease, with their flows.
struct Work<'ring> {
    batch: Batch<'ring>,
    tags: Vec<FlowTag>,
}

type Spare = (Vec<PacketDesc>, Vec<FlowTag>);

/// The pipeline over one block source.
pub struct Pipeline<'s, S: BlockSource> {
    source: &'s S,
    config: PipelineConfig,
    stop: Arc<AtomicBool>,
}

impl<'s, S: BlockSource> Pipeline<'s, S> {
    /// A pipeline reading `source`.
    pub fn new(source: &'s S, config: PipelineConfig) -> Self {
        Pipeline {
            source,
            config,
            stop: Arc::new(AtomicBool::new(false)),
        }
    }

    /// A flag that stops the run when set (from any thread or a signal handler); the stage
    /// finishes its current block and every block is handed back.
    pub fn stop_flag(&self) -> Arc<AtomicBool> {
        self.stop.clone()
    }

    /// Runs until the input ends, `max_packets`, or the stop flag. `make_handler(i)` builds
    /// consumer `i`'s handler; `on_flow_end` sees every finished flow (evicted, idle, and all
    /// remaining ones at the end) on the stage thread.
    pub fn run<H, F>(
        &self,
        make_handler: F,
        on_flow_end: impl FnMut(&FlowRecord),
    ) -> Result<PipelineStats, PipelineError>
    where
        F: Fn(usize) -> H,
        H: FnMut(&Delivered<'_>) + Send,
    {
        self.run_with_tick(make_handler, on_flow_end, |_| {})
    }

    /// [`Pipeline::run`], plus `on_tick(&table)` on the stage thread every
    /// [`PipelineConfig::tick_every`]: a look at the live flow table (periodic flow reports,
    /// status lines) without stopping the stage.
    pub fn run_with_tick<H, F>(
        &self,
        make_handler: F,
        mut on_flow_end: impl FnMut(&FlowRecord),
        mut on_tick: impl FnMut(&FlowTable),
    ) -> Result<PipelineStats, PipelineError>
    where
        F: Fn(usize) -> H,
        H: FnMut(&Delivered<'_>) + Send,
    {
        let n = self.config.consumers;
        if n == 0 || n > 1024 {
            return Err(PipelineError::Config {
                field: "consumers",
                reason: format!("{n}; must be 1..=1024"),
            });
        }
        if self.config.queue_depth == 0 {
            return Err(PipelineError::Config {
                field: "queue_depth",
                reason: "0; must be at least 1".into(),
            });
        }
        let copier = match self.config.delivery {
            Delivery::ZeroCopy => None,
            Delivery::Copy(r) => Some(Copier::new(r)?),
        };
        let mut stats = PipelineStats {
            copier: copier.map(|c| c.describe()),
            ..Default::default()
        };
        if self.config.inline {
            if n != 1 {
                return Err(PipelineError::Config {
                    field: "inline",
                    reason: format!("needs exactly one consumer, not {n}"),
                });
            }
            let mut inline = Inline {
                handler: make_handler(0),
                copier,
                arena: Vec::new(),
                stats: ConsumerStats::default(),
            };
            let (_, spare_rx) = unbounded::<Spare>();
            let phase = Cell::new(Phase::Stage);
            let halt = AtomicBool::new(false);
            let r = catch_unwind(AssertUnwindSafe(|| {
                self.stage(
                    &[],
                    &spare_rx,
                    &mut stats,
                    &mut on_flow_end,
                    &mut on_tick,
                    Some(&mut inline),
                    &phase,
                    &halt,
                )
            }));
            // Unwinding dropped the block and its packets: nothing is held now.
            r.map_err(|p| phase.get().error(panic_message(&*p)))??;
            stats.consumers.push(inline.stats);
            stats.kernel = self.source.kernel_stats()?;
            return Ok(stats);
        }
        let (spare_tx, spare_rx) = unbounded::<Spare>();
        let (txs, rxs): (Vec<Sender<Work<'s>>>, Vec<Receiver<Work<'s>>>) =
            (0..n).map(|_| bounded(self.config.queue_depth)).unzip();
        let handlers: Vec<H> = (0..n).map(&make_handler).collect();

        // Set by a consumer whose handler panicked: the stage stops at the next block.
        let halt = AtomicBool::new(false);
        let phase = Cell::new(Phase::Stage);
        let stage_result = std::thread::scope(|s| {
            let consumers: Vec<_> = rxs
                .into_iter()
                .zip(handlers)
                .enumerate()
                .map(|(i, (rx, handler))| {
                    let spare_tx = spare_tx.clone();
                    let halt = &halt;
                    s.spawn(move || {
                        catch_unwind(AssertUnwindSafe(|| {
                            consume(i, rx, handler, copier, spare_tx)
                        }))
                        .map_err(|p| {
                            // Relaxed: the stage only needs to see it eventually; the
                            // error itself travels through join.
                            halt.store(true, Ordering::Relaxed);
                            PipelineError::ConsumerPanicked {
                                consumer: i,
                                message: panic_message(&*p),
                            }
                        })
                    })
                })
                .collect();
            drop(spare_tx);
            // No inline consumer: the handler type is only a placeholder.
            let r = catch_unwind(AssertUnwindSafe(|| {
                self.stage(
                    &txs,
                    &spare_rx,
                    &mut stats,
                    &mut on_flow_end,
                    &mut on_tick,
                    None::<&mut Inline<fn(&Delivered<'_>)>>,
                    &phase,
                    &halt,
                )
            }))
            .unwrap_or_else(|p| Err(phase.get().error(panic_message(&*p))));
            // Consumers drain what is queued (a panicked one's queue is dropped with the
            // channel), then see the channel closed; every lease is released by then.
            drop(txs);
            let mut first_panic = None;
            for c in consumers {
                match c.join().expect("consumer panics are caught in the thread") {
                    Ok(cs) => stats.consumers.push(cs),
                    Err(e) => {
                        stats.consumers.push(ConsumerStats::default());
                        first_panic.get_or_insert(e);
                    }
                }
            }
            // A consumer's panic explains a stage that stopped on a closed queue.
            match (first_panic, r) {
                (Some(e), _) => Err(e),
                (None, r) => r,
            }
        });
        stage_result?;
        stats.kernel = self.source.kernel_stats()?;
        Ok(stats)
    }

    #[allow(clippy::too_many_arguments)] // split up by the architecture issue (#10)
    fn stage(
        &self,
        txs: &[Sender<Work<'s>>],
        spare_rx: &Receiver<Spare>,
        stats: &mut PipelineStats,
        on_flow_end: &mut impl FnMut(&FlowRecord),
        on_tick: &mut impl FnMut(&FlowTable),
        mut inline: Option<&mut Inline<impl FnMut(&Delivered<'_>)>>,
        phase: &Cell<Phase>,
        halt: &AtomicBool,
    ) -> Result<(), PipelineError> {
        // Callbacks run with `phase` naming them, so a panic is reported as theirs.
        let mut on_flow_end = |r: &FlowRecord| {
            phase.set(Phase::FlowEnd);
            on_flow_end(r);
            phase.set(Phase::Stage);
        };
        let mut on_tick = |t: &FlowTable| {
            phase.set(Phase::Tick);
            on_tick(t);
            phase.set(Phase::Stage);
        };
        let cfg = &self.config;
        let n = txs.len().max(1) as u64;
        let mut table = FlowTable::new(cfg.flow_table);
        let mut pending: Vec<(Vec<PacketDesc>, Vec<FlowTag>)> =
            (0..txs.len()).map(|_| Default::default()).collect();
        let expire_ns = cfg.expire_every.as_nanos() as u64;
        let mut next_expire = 0u64;
        let mut last_ts = 0u64;
        let max = cfg.max_packets.unwrap_or(u64::MAX);
        // Without flow tracking there is no owner to find: that needs a single consumer.
        let track = cfg.track_flows || txs.len() > 1;
        const UNTRACKED: FlowTag = FlowTag {
            key: None,
            id: None,
            dir: Direction::Forward,
        };
        let mut next_tick = Instant::now() + cfg.tick_every;
        // After a stop, the blocks the kernel has already filled are still taken (at most one
        // ring's worth, so an endless source ends too), then the stage returns.
        let mut drain_left: Option<usize> = None;
        while stats.packets < max {
            if halt.load(Ordering::Relaxed) {
                // A consumer panicked: stop now; `run` returns its error.
                return Ok(());
            }
            if drain_left.is_none() && self.stop.load(Ordering::Relaxed) {
                drain_left = Some(self.source.block_map().block_count());
            }
            if drain_left == Some(0) {
                break;
            }
            if Instant::now() >= next_tick {
                on_tick(&table);
                next_tick = Instant::now() + cfg.tick_every;
            }
            let wait = if drain_left.is_some() {
                Duration::ZERO
            } else {
                cfg.poll_timeout.min(cfg.tick_every)
            };
            let Some(block) = self.source.next_block(wait)? else {
                if drain_left.is_some() || self.source.exhausted() {
                    break;
                }
                continue;
            };
            if let Some(left) = drain_left.as_mut() {
                *left -= 1;
            }
            let t0 = Instant::now();
            stats.blocks += 1;
            stats.max_blocks_held = stats
                .max_blocks_held
                .max(self.source.block_map().blocks_held());
            // The block's own walker (not `Block::packets`, whose error-chaining adapter costs
            // a few ns per packet in this loop).
            let Ok(view) = block.view() else {
                stats.bad_blocks += 1;
                continue; // dropping the block hands it back
            };
            for p in view.packets() {
                let Ok(p) = p else {
                    stats.bad_blocks += 1;
                    break;
                };
                if stats.packets == max {
                    break;
                }
                stats.packets += 1;
                last_ts = p.ts_ns();
                if !track {
                    match inline.as_deref_mut() {
                        Some(il) => {
                            phase.set(Phase::Inline);
                            il.deliver(&p, &UNTRACKED);
                            phase.set(Phase::Stage);
                        }
                        None => {
                            let (descs, tags) = &mut pending[0];
                            descs.push(block.desc(&p));
                            tags.push(UNTRACKED);
                        }
                    }
                    continue;
                }
                let (owner, tag) = match extract(cfg.link, p.data(), p.vlan_tci()) {
                    Ok(x) => {
                        let t = table.track(x.key, p.wire_len(), p.ts_ns(), x.tcp_flags);
                        if let Some(ev) = &t.evicted {
                            on_flow_end(ev);
                        }
                        stats.flows_created += u64::from(t.created);
                        // Multiply-shift maps the hash onto 0..n without a division.
                        let owner = (((t.hash >> 32) * n) >> 32) as usize;
                        (
                            owner,
                            FlowTag {
                                key: Some(x.key),
                                id: Some(t.id),
                                dir: t.dir,
                            },
                        )
                    }
                    Err(_) => {
                        stats.non_ip += 1;
                        (
                            0,
                            FlowTag {
                                key: None,
                                id: None,
                                dir: Direction::Forward,
                            },
                        )
                    }
                };
                if let Some(il) = inline.as_deref_mut() {
                    phase.set(Phase::Inline);
                    il.deliver(&p, &tag);
                    phase.set(Phase::Stage);
                    continue;
                }
                let (descs, tags) = &mut pending[owner];
                descs.push(block.desc(&p));
                tags.push(tag);
            }
            let busy = pending.iter().filter(|p| !p.0.is_empty()).count();
            let mut leases = block.into_leases(busy);
            for (i, slot) in pending.iter_mut().enumerate() {
                if slot.0.is_empty() {
                    continue;
                }
                let spare = spare_rx.try_recv().unwrap_or_default();
                let (descs, tags) = std::mem::replace(slot, spare);
                let lease = leases.next().expect("one lease per busy consumer");
                let batch = Batch::new(lease, descs)
                    .unwrap_or_else(|_| unreachable!("descriptors come from this block"));
                stats.batches += 1;
                match txs[i].try_send(Work { batch, tags }) {
                    Ok(()) => {}
                    Err(TrySendError::Full(w)) => {
                        stats.queue_full += 1;
                        let waited = Instant::now();
                        let sent = txs[i].send(w);
                        // Waiting for a slow consumer is not stage work.
                        stats.stage_ns = stats
                            .stage_ns
                            .saturating_sub(waited.elapsed().as_nanos() as u64);
                        if sent.is_err() {
                            // The consumer is gone (it panicked): `run` returns its error.
                            // Dropping `leases` and `pending` releases the rest.
                            return Ok(());
                        }
                    }
                    // As above.
                    Err(TrySendError::Disconnected(_)) => return Ok(()),
                }
            }
            if last_ts >= next_expire {
                for r in table.expire(last_ts) {
                    on_flow_end(&r);
                }
                next_expire = last_ts.saturating_add(expire_ns);
            }
            stats.stage_ns += t0.elapsed().as_nanos() as u64;
        }
        for r in table.flush() {
            on_flow_end(&r);
        }
        Ok(())
    }
}

/// The single consumer running on the stage thread (generic, so the handler inlines into
/// the stage loop).
struct Inline<H> {
    handler: H,
    copier: Option<Copier>,
    arena: Vec<u8>,
    stats: ConsumerStats,
}

impl<H: FnMut(&Delivered<'_>)> Inline<H> {
    #[inline]
    fn deliver(&mut self, p: &zcrx_ring::Packet<'_>, flow: &FlowTag) {
        self.stats.packets += 1;
        self.stats.bytes += p.data().len() as u64;
        match self.copier {
            None => (self.handler)(&Delivered {
                data: p.data(),
                meta: p.meta(),
                flow,
                consumer: 0,
            }),
            Some(c) => {
                let len = p.data().len();
                if self.arena.len() < len {
                    self.arena.resize(len, 0);
                }
                c.copy(&mut self.arena[..len], p.data());
                (self.handler)(&Delivered {
                    data: &self.arena[..len],
                    meta: p.meta(),
                    flow,
                    consumer: 0,
                });
            }
        }
    }
}

/// A consumer: handles batches until the stage closes its queue.
fn consume<H: FnMut(&Delivered<'_>)>(
    consumer: usize,
    rx: Receiver<Work<'_>>,
    mut handler: H,
    copier: Option<Copier>,
    spare_tx: Sender<Spare>,
) -> ConsumerStats {
    let mut stats = ConsumerStats::default();
    let mut arena: Vec<u8> = Vec::new();
    let mut copies: Vec<(usize, usize, PacketMeta)> = Vec::new();
    for Work { batch, tags } in rx {
        stats.batches += 1;
        stats.packets += batch.len() as u64;
        match copier {
            None => {
                for (p, flow) in batch.packets().zip(&tags) {
                    stats.bytes += p.data().len() as u64;
                    handler(&Delivered {
                        data: p.data(),
                        meta: p.meta(),
                        flow,
                        consumer,
                    });
                }
                let descs = batch.release();
                let _ = spare_tx.send((descs, clear(tags)));
            }
            Some(copier) => {
                let total: usize = batch.descs().iter().map(|d| d.caplen() as usize).sum();
                if arena.len() < total {
                    arena.resize(total, 0); // grows to the largest batch, then never again
                }
                copies.clear();
                let mut off = 0;
                for p in batch.packets() {
                    let len = p.data().len();
                    copier.copy(&mut arena[off..off + len], p.data());
                    copies.push((off, len, *p.meta()));
                    off += len;
                }
                // The copies are made: hand the block back before running the handler.
                let descs = batch.release();
                for ((off, len, meta), flow) in copies.iter().zip(&tags) {
                    stats.bytes += *len as u64;
                    handler(&Delivered {
                        data: &arena[*off..*off + *len],
                        meta,
                        flow,
                        consumer,
                    });
                }
                let _ = spare_tx.send((descs, clear(tags)));
            }
        }
    }
    stats
}

fn clear<T>(mut v: Vec<T>) -> Vec<T> {
    v.clear();
    v
}
