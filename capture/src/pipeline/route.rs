//! Where a steered packet goes: straight to the inline consumer, or into the batch of the
//! consumer thread that owns its flow (one lease per batch, bounded queues).

use std::cell::Cell;
use std::time::Instant;

use crossbeam_channel::{Receiver, Sender, TrySendError};
use zcrx_ring::{Batch, Block, BlockView, Lease, Packet, PacketDesc};

use super::consumer::{Consumer, FlowTag};
use super::deliver::Deliverer;
use super::fault::Phase;
use super::stats::PipelineStats;

/// What the stage does with each packet and each walked block.
pub(super) trait Route<'s> {
    /// One packet of `block` (with its descriptor), owned by consumer `owner`.
    fn packet(
        &mut self,
        block: &Block<'s>,
        p: &Packet<'_>,
        desc: PacketDesc,
        owner: usize,
        tag: FlowTag,
    );
    /// The block is walked: hand it on. `false` when a consumer is gone (it panicked).
    fn end_block(&mut self, block: Block<'s>, stats: &mut PipelineStats) -> bool;
    /// The stage is about to steer the packets of `view` (steering on): once a block, before
    /// its first [`Route::packet`].
    fn tracked(&mut self, _view: &BlockView<'_>) {}
    /// Every packet of `view` (the walk of `block`) to consumer 0 without a flow (steering
    /// off), up to `max` in the run, in one go; `None` to be handed the packets one by one
    /// ([`Route::packet`]), else whether every packet header was good.
    fn untracked(
        &mut self,
        _block: &Block<'s>,
        _view: &BlockView<'_>,
        _stats: &mut PipelineStats,
        _max: u64,
    ) -> Option<bool> {
        None
    }
}

/// The single consumer on the stage thread: no queue, no lease, no second thread. `COPY`:
/// the delivery copies (the consumer's [`Deliverer`] has a copier); a type of its own, so
/// that the zero-copy stage's loop holds no copy code, whose presence alone (as one arm of a
/// branch never taken) costs every packet reloads of the stage's state (`rxbench
/// instructions`' `stage` workloads).
pub(super) struct OnStage<'f, C, const COPY: bool> {
    pub(super) to: Deliverer<C>,
    pub(super) phase: &'f Cell<Phase>,
}

/// [`OnStage`] for a consumer that takes each block whole once it is steered
/// ([`Consumer::wants_steered_blocks`]): a route of its own, so that every other inline
/// consumer's per-packet path carries none of it (a branch on it in `OnStage::packet` shows
/// in the `stage` workload's instruction count).
pub(super) struct WholeSteered<'f, C> {
    pub(super) on: OnStage<'f, C, false>,
    /// This block goes whole (decided before its first packet, [`Route::tracked`]): its
    /// tags are kept until [`Route::end_block`]. Else its packets go one by one.
    pub(super) whole: bool,
    pub(super) tags: Vec<FlowTag>,
}

/// A steered block goes whole to a consumer that wants it only if its packets take at least
/// this many of the block's bytes on average (frame and ring header): the second walk of the
/// block costs more than the calls it saves on small frames and much less than the copies it
/// saves on large ones (zcap `--flows -w /dev/null` under `rxbench sniff` compares both).
const WHOLE_MIN_BYTES: u32 = 512;

impl<'s, C: Consumer, const COPY: bool> Route<'s> for OnStage<'_, C, COPY> {
    // Always: with the stage's two loops (with and without TCP states) the inliner's budget
    // would leave it a call a packet.
    #[inline(always)]
    fn packet(
        &mut self,
        block: &Block<'s>,
        p: &Packet<'_>,
        _desc: PacketDesc,
        _owner: usize,
        tag: FlowTag,
    ) {
        self.phase.set(Phase::Inline);
        self.to
            .one::<COPY>(p, &tag, Some((block, p.header_offset())));
        self.phase.set(Phase::Stage);
    }
    fn end_block(&mut self, block: Block<'s>, _stats: &mut PipelineStats) -> bool {
        drop(block); // back to the kernel
        true
    }
    /// Zero-copy: the whole block in one call of the consumer's `packets` (the stage's own
    /// work per packet is only the walk and the count here).
    fn untracked(
        &mut self,
        block: &Block<'s>,
        view: &BlockView<'_>,
        stats: &mut PipelineStats,
        max: u64,
    ) -> Option<bool> {
        self.phase.set(Phase::Inline);
        let r = self.to.block(block, view, &mut stats.packets, max);
        self.phase.set(Phase::Stage);
        r
    }
}

impl<'s, C: Consumer> Route<'s> for WholeSteered<'_, C> {
    #[inline]
    fn packet(
        &mut self,
        block: &Block<'s>,
        p: &Packet<'_>,
        desc: PacketDesc,
        owner: usize,
        tag: FlowTag,
    ) {
        if self.whole {
            self.tags.push(tag);
        } else {
            self.on.packet(block, p, desc, owner, tag);
        }
    }
    fn end_block(&mut self, block: Block<'s>, stats: &mut PipelineStats) -> bool {
        if self.whole && !self.tags.is_empty() {
            self.on.phase.set(Phase::Inline);
            self.on.to.steered_block(&block, &self.tags);
            self.on.phase.set(Phase::Stage);
            self.tags.clear();
        }
        self.whole = false;
        self.on.end_block(block, stats)
    }
    fn tracked(&mut self, view: &BlockView<'_>) {
        self.whole = view.blk_len() / view.num_packets().max(1) >= WHOLE_MIN_BYTES;
    }
}

/// A consumer thread's share of a block: its packets as descriptors under one lease, or,
/// when it is the only consumer thread, the whole block (one lease, no descriptors: it walks
/// the block itself, as far as the stage went), with their flows in walk order.
pub(super) enum Work<'ring> {
    /// Some of the block's packets (several consumer threads).
    Batch(Batch<'ring>),
    /// The block's packets from the first, one for each tag (one consumer thread).
    Block(Lease<'ring>),
}

/// Work on its way to a consumer thread, with its packets' flows.
pub(super) struct Handoff<'ring> {
    pub(super) work: Work<'ring>,
    pub(super) tags: Vec<FlowTag>,
}

/// Emptied vectors coming back from consumers for reuse (no allocation per batch).
pub(super) type Recycled = (Vec<PacketDesc>, Vec<FlowTag>);

/// The consumer threads' queues, and the emptied vectors coming back.
pub(super) struct Outbox<'s> {
    queues: Vec<Sender<Handoff<'s>>>,
    recycled: Receiver<Recycled>,
}

impl<'s> Outbox<'s> {
    pub(super) fn new(queues: Vec<Sender<Handoff<'s>>>, recycled: Receiver<Recycled>) -> Self {
        Outbox { queues, recycled }
    }

    /// Emptied vectors for the next batch (new, empty ones if none came back yet).
    fn spare(&self) -> Recycled {
        self.recycled.try_recv().unwrap_or_default()
    }

    /// Sends `work` to consumer `i`, waiting while its queue is full (back-pressure: the
    /// stage stops taking blocks and the kernel counts drops). `false` if it is gone.
    fn send(&self, i: usize, work: Handoff<'s>, stats: &mut PipelineStats) -> bool {
        stats.batches += 1;
        match self.queues[i].try_send(work) {
            Ok(()) => true,
            Err(TrySendError::Full(w)) => {
                stats.queue_full += 1;
                let waited = Instant::now();
                let sent = self.queues[i].send(w).is_ok();
                // Waiting for a slow consumer is not stage work.
                stats.stage_ns = stats
                    .stage_ns
                    .saturating_sub(waited.elapsed().as_nanos() as u64);
                sent
            }
            Err(TrySendError::Disconnected(_)) => false,
        }
    }
}

/// The only consumer thread's route: every packet of a block is its, so it is handed the
/// whole block (one lease, [`Work::Block`]) with the packets' tags, and the stage makes no
/// descriptors (pushing a 24-byte descriptor a packet and checking each into its batch is a
/// visible share of the stage's time a packet). Its own type, so the stage's loop for it
/// has neither the owner's arithmetic nor a branch on the consumer count.
pub(super) struct WholeBlocks<'s> {
    tags: Vec<FlowTag>,
    out: Outbox<'s>,
}

impl<'s> WholeBlocks<'s> {
    pub(super) fn new(out: Outbox<'s>) -> Self {
        debug_assert_eq!(out.queues.len(), 1);
        WholeBlocks {
            tags: Vec::new(),
            out,
        }
    }
}

impl<'s> Route<'s> for WholeBlocks<'s> {
    #[inline(always)]
    fn packet(&mut self, _: &Block<'s>, _: &Packet<'_>, _: PacketDesc, _: usize, tag: FlowTag) {
        self.tags.push(tag);
    }

    fn end_block(&mut self, block: Block<'s>, stats: &mut PipelineStats) -> bool {
        if self.tags.is_empty() {
            return true; // dropping the block hands it back
        }
        let (_, spare) = self.out.spare();
        let tags = std::mem::replace(&mut self.tags, spare);
        let lease = block.into_leases(1).next().expect("one lease");
        self.out.send(
            0,
            Handoff {
                work: Work::Block(lease),
                tags,
            },
            stats,
        )
    }
}

/// Several consumer threads' route: per-consumer batches of descriptors of the block being
/// walked, each under its own lease of the block.
pub(super) struct Batcher<'s> {
    pending: Vec<Recycled>,
    out: Outbox<'s>,
}

impl<'s> Batcher<'s> {
    pub(super) fn new(out: Outbox<'s>) -> Self {
        Batcher {
            pending: (0..out.queues.len()).map(|_| Default::default()).collect(),
            out,
        }
    }
}

impl<'s> Route<'s> for Batcher<'s> {
    #[inline(always)]
    fn packet(
        &mut self,
        _block: &Block<'s>,
        _p: &Packet<'_>,
        desc: PacketDesc,
        owner: usize,
        tag: FlowTag,
    ) {
        let (descs, tags) = &mut self.pending[owner];
        descs.push(desc);
        tags.push(tag);
    }

    fn end_block(&mut self, block: Block<'s>, stats: &mut PipelineStats) -> bool {
        let busy = self.pending.iter().filter(|p| !p.0.is_empty()).count();
        // One share per busy consumer; shares not handed out are released with `leases`.
        let mut leases = block.into_leases(busy);
        for i in 0..self.pending.len() {
            if self.pending[i].0.is_empty() {
                continue;
            }
            let spare = self.out.spare();
            let (descs, tags) = std::mem::replace(&mut self.pending[i], spare);
            let lease = leases.next().expect("one lease per busy consumer");
            let batch = Batch::new(lease, descs)
                .unwrap_or_else(|_| unreachable!("descriptors come from this take of this block"));
            let work = Work::Batch(batch);
            if !self.out.send(i, Handoff { work, tags }, stats) {
                return false;
            }
        }
        true
    }
}

/// A consumer thread: delivers batches until the stage closes its queue.
pub(super) fn consume<C: Consumer>(
    mut to: Deliverer<C>,
    queue: Receiver<Handoff<'_>>,
    recycle: Sender<Recycled>,
) -> (C::Output, super::stats::ConsumerStats) {
    for Handoff { work, tags } in queue {
        let descs = match work {
            Work::Batch(batch) => to.batch(batch, &tags),
            Work::Block(lease) => {
                to.whole_block(lease, &tags);
                Vec::new()
            }
        };
        let mut tags = tags;
        tags.clear();
        // Full only if more vectors are in flight than batches can be: then they are dropped.
        let _ = recycle.try_send((descs, tags));
    }
    to.finish()
}
