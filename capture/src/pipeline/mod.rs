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
mod config;
mod consumer;
mod deliver;
mod error;
mod fault;
mod route;
mod spawn;
mod stats;
mod steer;

pub use config::{
    ConfigError, Consumers, Delivery, PipelineConfig, PipelineConfigBuilder, Setting, Steering,
    MAX_CONSUMERS,
};
pub use consumer::{Consumer, Delivered, FlowTag, Hooks, StopToken};
pub use error::PipelineError;
pub use spawn::RunHandle;
pub use stats::{ConsumerStats, PipelineStats, Run};

use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{bounded, Receiver, Sender};
use zcrx_ring::{Block, RingError};

use crate::copy::Copier;
use crate::source::BlockSource;
use deliver::Deliverer;
use fault::{Faults, StageHooks};
use route::{Batcher, Handoff, OnStage, Outbox, Recycled, Route, WholeBlocks, WholeSteered};
use steer::Steer;

/// The system clock (CLOCK_REALTIME, the kernel's packet timestamps), ns since the epoch.
fn realtime_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
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
    /// `stopping`: the stop token is stopped, or the run's time is up.
    fn next<'s, S: BlockSource>(
        &mut self,
        source: &'s S,
        stopping: bool,
        wait: Duration,
    ) -> Result<Next<'s>, RingError> {
        if self.drain.is_none() && stopping {
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
    /// first packets of the run (a second run builds a fresh table when it starts). The
    /// configuration's builder has checked the table's settings; a table whose memory the
    /// allocator refuses is reported by [`Pipeline::run`] ([`PipelineError::Config`]).
    pub fn new(source: &'s S, mut config: PipelineConfig) -> Self {
        if !config.link_set {
            if let Some(link) = source.link_type() {
                config.link = link;
            }
        }
        let block_size = source.block_map().block_size();
        let steer = std::sync::Mutex::new(Steer::new(&config, block_size).ok());
        if config.delivery == Delivery::Copy(crate::copy::Routine::Auto) {
            // `auto`'s calibration (once per process: some milliseconds, and buffers of a
            // few MiB) runs here, as the flow table is made here: not on a run's first packet.
            crate::copy::calibration();
        }
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

    /// Runs until the input ends, `max_packets`, the configured duration
    /// ([`PipelineConfigBuilder::run_for`]) or the stop token. `make_consumer(i)` builds
    /// consumer `i` (on the calling thread); the stage runs on the calling thread. To run
    /// on a thread of its own, see [`Pipeline::spawn`].
    pub fn run<C: Consumer>(
        &self,
        make_consumer: impl FnMut(usize) -> C,
        mut hooks: Hooks<'_>,
    ) -> Result<Run<C::Output>, PipelineError> {
        let copier = self
            .config
            .delivery
            .copier(self.source.block_map().block_size())?;
        let mut stats = PipelineStats {
            copier: copier.map(|c| c.describe()),
            ..Default::default()
        };
        let prepared = self.steer.lock().unwrap_or_else(|p| p.into_inner()).take();
        let mut steer = match prepared {
            Some(steer) => steer,
            None => {
                // A built configuration passed `FlowTableConfig::check`: what is left is an
                // allocation the allocator refuses.
                Steer::new(&self.config, self.source.block_map().block_size())
                    .map_err(|e| PipelineError::Config(e.into()))?
            }
        };
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
        stats.flows_lost = steer.table().counters().lost;
        stats.kernel = self.source.kernel_stats()?;
        Ok(Run { outputs, stats })
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
        let to = Deliverer::new(0, make_consumer(0), copier, self.config.link);
        let to = if to.copies() {
            let mut route = OnStage::<C, true> {
                to,
                phase: &faults.phase,
            };
            faults.stage(|| self.stage(&mut route, steer, stats, hooks, &faults))?;
            route.to
        } else {
            self.stage_zero_copy(to, steer, stats, hooks, &faults)?
        };
        let (output, cs) = fault::consumer(&faults.halt, 0, || to.finish())?;
        stats.consumers.push(cs);
        Ok(vec![output])
    }

    /// The stage loop for the inline consumer `to`, zero-copy: packet by packet, or whole
    /// steered blocks to a consumer that wants them. Returns the consumer.
    fn stage_zero_copy<C: Consumer>(
        &self,
        to: Deliverer<C>,
        steer: &mut Steer,
        stats: &mut PipelineStats,
        hooks: &mut Hooks<'_>,
        faults: &Faults,
    ) -> Result<Deliverer<C>, PipelineError> {
        let mut route = OnStage::<C, false> {
            to,
            phase: &faults.phase,
        };
        if steer.tracking() && route.to.wants_steered_blocks() {
            let mut whole = WholeSteered {
                on: route,
                whole: false,
                tags: Vec::new(),
            };
            faults.stage(|| self.stage(&mut whole, steer, stats, hooks, faults))?;
            route = whole.on;
        } else {
            faults.stage(|| self.stage(&mut route, steer, stats, hooks, faults))?;
        }
        Ok(route.to)
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
        let deadline = cfg.duration.map(|d| Instant::now() + d);
        while stats.packets < max {
            if faults.halted() {
                return Ok(()); // a consumer panicked: `run` returns its error
            }
            if Instant::now() >= next_tick {
                hooks.tick(steer.table());
                next_tick = Instant::now() + cfg.tick_every;
            }
            // The time limit stops this run only: the token may be shared with others.
            let (stopping, wait) = match deadline {
                None => (self.stop.is_stopped(), wait),
                Some(end) => {
                    let left = end.saturating_duration_since(Instant::now());
                    (self.stop.is_stopped() || left.is_zero(), wait.min(left))
                }
            };
            let block = match taker.next(self.source, stopping, wait)? {
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
            if steer.follows_tcp() {
                self.walk_tcp(&block, route, steer, stats, &mut hooks, max);
            } else {
                self.walk(&block, route, steer, stats, &mut hooks, max);
            }
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
        self.walk_with::<R, false>(block, route, steer, stats, hooks, max);
    }

    /// [`Pipeline::walk`] for a table that follows TCP states: a loop of its own, out of
    /// line, so that the stage without them tests no flag per packet and keeps one loop
    /// inlined (a flag tested per packet, or a second loop inlined beside the first, costs
    /// every packet reloads of the stage's state, as `rxbench instructions` shows).
    #[inline(never)]
    fn walk_tcp<R: Route<'s>>(
        &self,
        block: &Block<'s>,
        route: &mut R,
        steer: &mut Steer,
        stats: &mut PipelineStats,
        hooks: &mut StageHooks<'_, '_>,
        max: u64,
    ) {
        self.walk_with::<R, true>(block, route, steer, stats, hooks, max);
    }

    /// The walk of a block; `TCP`: the table follows TCP states (`Steer::route`).
    #[inline(always)]
    fn walk_with<R: Route<'s>, const TCP: bool>(
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
        } else {
            route.tracked(&view);
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
            let (owner, tag) = steer.route::<TCP>(&p, stats, &mut |r| hooks.flow_end(r));
            route.packet(block, &p, desc, owner, tag);
        }
    }
}

impl<S: BlockSource + Send + 'static> Pipeline<'static, S> {
    /// Starts a run on a thread of its own over a shared `source`, and returns its handle:
    /// stop it ([`RunHandle::stop`], or its [`StopToken`]), then [`join`](RunHandle::join) it
    /// for what [`Pipeline::run`] would have returned.
    ///
    /// `make_consumer` and `make_hooks` are called on the new thread (so the hooks need not
    /// be `Send`; pass `Hooks::new` for none). The flow table is built there too.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use zcrx_capture::{Delivered, Hooks, Pipeline, PipelineConfig};
    /// use zcrx_capture::ring::{Frame, SyntheticRing};
    /// let ring = SyntheticRing::builder().build(vec![Frame::new(vec![0u8; 60]); 100])?;
    /// let handle = Pipeline::spawn(
    ///     Arc::new(ring),
    ///     PipelineConfig::default(),
    ///     |_| |_: &Delivered<'_>| {},
    ///     Hooks::new,
    /// )?;
    /// let run = handle.join()?; // a synthetic ring ends by itself; a live one needs `stop()`
    /// assert_eq!(run.stats.packets, 100);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn spawn<C, M, H>(
        source: Arc<S>,
        config: PipelineConfig,
        make_consumer: M,
        make_hooks: H,
    ) -> Result<RunHandle<C::Output>, PipelineError>
    where
        C: Consumer,
        C::Output: Send + 'static,
        M: FnMut(usize) -> C + Send + 'static,
        H: FnOnce() -> Hooks<'static> + Send + 'static,
    {
        let stop = StopToken::new();
        let token = stop.clone();
        let thread = std::thread::Builder::new()
            .name("zcrx-pipeline".into())
            .spawn(move || {
                let pipeline = Pipeline::new(&*source, config).with_stop(token);
                pipeline.run(make_consumer, make_hooks())
            })
            .map_err(PipelineError::Spawn)?;
        Ok(RunHandle::new(thread, stop))
    }
}
