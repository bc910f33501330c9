//! Delivery: one routine hands packets to a consumer, zero-copy or copied, for inline and
//! threaded consumers alike.

use zcrx_flowcache::LinkType;
use zcrx_ring::{Batch, Block, BlockView, Lease, Packet, PacketDesc, PacketMeta};

use super::consumer::{Consumer, Delivered, FlowTag};
use super::stats::ConsumerStats;
use super::steer::NO_FLOW;
use crate::copy::Copier;

/// A consumer with its copy routine, its arena and its counters.
pub(super) struct Deliverer<C> {
    index: usize,
    consumer: C,
    copier: Option<Copier>,
    /// The frames' link type (for [`Delivered::flow_key`]).
    linktype: LinkType,
    /// Copies of the current batch (copy delivery); grows to the largest batch, then stays.
    arena: Vec<u8>,
    /// Where each copy of the current batch sits in the arena.
    copies: Vec<(usize, usize, PacketMeta)>,
    stats: ConsumerStats,
}

/// The one place a packet is handed to a consumer.
#[inline]
fn hand<C: Consumer>(
    consumer: &mut C,
    (index, linktype): (usize, LinkType),
    data: &[u8],
    meta: &PacketMeta,
    flow: &FlowTag,
    link: Option<(&Block<'_>, u32)>,
) {
    consumer.packet(&Delivered {
        data,
        meta: *meta,
        flow,
        consumer: index,
        linktype,
        link,
    });
}

/// Packets (tag, bytes, facts, where the link-layer address is: inline only) of a consumer
/// thread's batch or block, or of a steered block inline, counted, in one call of the
/// consumer's `packets`; those it leaves in the iterator count as delivered.
#[inline]
fn hand_all<'a, C: Consumer>(
    consumer: &mut C,
    (index, linktype): (usize, LinkType),
    stats: &mut ConsumerStats,
    packets: impl Iterator<
        Item = (
            &'a FlowTag,
            &'a [u8],
            PacketMeta,
            Option<(&'a Block<'a>, u32)>,
        ),
    >,
) {
    let mut packets = packets.map(|(flow, data, meta, link)| {
        stats.packets += 1;
        stats.bytes += data.len() as u64;
        Delivered {
            data,
            meta,
            flow,
            consumer: index,
            linktype,
            link,
        }
    });
    consumer.packets(&mut packets);
    packets.for_each(drop);
}

impl<C: Consumer> Deliverer<C> {
    pub(super) fn new(
        index: usize,
        consumer: C,
        copier: Option<Copier>,
        linktype: LinkType,
    ) -> Self {
        Deliverer {
            index,
            consumer,
            copier,
            linktype,
            arena: Vec::new(),
            copies: Vec::new(),
            stats: ConsumerStats::default(),
        }
    }

    /// One packet, on the stage thread (inline consumer): the block is held by the stage.
    /// `COPY`: this deliverer copies ([`Deliverer::copies`]); without it, zero-copy, and no
    /// copy code is built in.
    #[inline(always)]
    pub(super) fn one<const COPY: bool>(
        &mut self,
        p: &Packet<'_>,
        flow: &FlowTag,
        link: Option<(&Block<'_>, u32)>,
    ) {
        let len = p.data().len();
        self.stats.packets += 1;
        self.stats.bytes += len as u64;
        let copier = if COPY { self.copier } else { None };
        match copier {
            None => hand(
                &mut self.consumer,
                (self.index, self.linktype),
                p.data(),
                p.meta(),
                flow,
                link,
            ),
            Some(c) => {
                if self.arena.len() < len {
                    self.arena.resize(len, 0);
                }
                c.copy(&mut self.arena[..len], p.data());
                hand(
                    &mut self.consumer,
                    (self.index, self.linktype),
                    &self.arena[..len],
                    p.meta(),
                    flow,
                    link,
                );
            }
        }
    }

    /// A batch from the stage (one of several consumer threads). Zero-copy: the packets are
    /// read in the ring, then the lease goes. Copy: every packet is copied first and the lease
    /// released before the consumer runs (the user-space `copy_to_user`). Returns the emptied
    /// descriptor vector for reuse.
    pub(super) fn batch(&mut self, batch: Batch<'_>, tags: &[FlowTag]) -> Vec<PacketDesc> {
        self.stats.batches += 1;
        match self.copier {
            None => {
                self.zero_copy(batch.packets(), tags, None);
                batch.release()
            }
            Some(copier) => {
                self.copy_in(copier, batch.packets(), tags.len());
                let descs = batch.release();
                self.deliver_copies(tags);
                descs
            }
        }
    }

    /// The whole block of `lease` (the only consumer thread): its packets from the first, one
    /// for each tag (the stage may have stopped inside the block), zero-copy or copied as
    /// [`Deliverer::batch`] does. The stage walked the same bytes with the same checks, so the
    /// walk here finds the same packets; if it did not, it would stop at the first bad header.
    pub(super) fn whole_block(&mut self, lease: Lease<'_>, tags: &[FlowTag]) {
        self.stats.batches += 1;
        let Ok(view) = lease.view() else {
            return;
        };
        let packets = view.packets().until_error();
        match self.copier {
            None => self.zero_copy(packets, tags, None),
            Some(copier) => {
                self.copy_in(copier, packets, tags.len());
                drop(lease);
                self.deliver_copies(tags);
            }
        }
    }

    /// Zero-copy delivery of `packets`, each with its tag (tags first in the zip: no packet
    /// is read past the last tag), and with the link-layer address at hand when their
    /// `block` is (inline).
    #[inline]
    fn zero_copy<'p>(
        &mut self,
        packets: impl Iterator<Item = Packet<'p>>,
        tags: &'p [FlowTag],
        block: Option<&'p Block<'p>>,
    ) {
        let packets = tags.iter().zip(packets).map(|(flow, p)| {
            let link = block.map(|b| (b, p.header_offset()));
            (flow, p.data(), *p.meta(), link)
        });
        let (consumer, stats) = (&mut self.consumer, &mut self.stats);
        hand_all(consumer, (self.index, self.linktype), stats, packets);
    }

    /// Copies up to `n` of `packets` into the arena, one after another (it grows to the
    /// largest batch, then stays), noting where each sits.
    #[inline]
    fn copy_in<'p>(&mut self, copier: Copier, packets: impl Iterator<Item = Packet<'p>>, n: usize) {
        self.copies.clear();
        let mut off = 0;
        for p in packets.take(n) {
            let len = p.data().len();
            if self.arena.len() < off + len {
                self.arena.resize(off + len, 0);
            }
            copier.copy(&mut self.arena[off..off + len], p.data());
            self.copies.push((off, len, *p.meta()));
            off += len;
        }
    }

    /// Hands the copies [`Deliverer::copy_in`] made to the consumer, each with its tag.
    #[inline]
    fn deliver_copies(&mut self, tags: &[FlowTag]) {
        let arena = &self.arena;
        let packets = tags
            .iter()
            .zip(&self.copies)
            .map(|(flow, &(off, len, meta))| (flow, &arena[off..off + len], meta, None));
        let (consumer, stats) = (&mut self.consumer, &mut self.stats);
        hand_all(consumer, (self.index, self.linktype), stats, packets);
    }

    /// The packets of `block` the stage steered, one for each of `tags` (the stage may have
    /// stopped inside the block), in one call of the consumer's `packets`, zero-copy, each
    /// with its link-layer address at hand: the inline consumer that wants steered blocks
    /// ([`Consumer::wants_steered_blocks`]). The stage walked the same bytes with the same
    /// checks, so this walk finds the same packets.
    pub(super) fn steered_block(&mut self, block: &Block<'_>, tags: &[FlowTag]) {
        let Ok(view) = block.view() else {
            return;
        };
        self.zero_copy(view.packets().until_error(), tags, Some(block));
    }

    /// Whether delivery copies (a copier was given).
    pub(super) fn copies(&self) -> bool {
        self.copier.is_some()
    }

    /// Whether the consumer takes steered blocks whole (zero-copy delivery only: a copy
    /// needs the packet's room in the arena while it is read).
    pub(super) fn wants_steered_blocks(&self) -> bool {
        self.copier.is_none() && self.consumer.wants_steered_blocks()
    }

    /// Every packet of `view` (the walk of `block`) up to `max` packets in the run (counted
    /// in `run_packets`), in one call of the consumer's `packets`: the inline consumer with
    /// zero-copy delivery and steering off. `None` with copy delivery (the arena holds one
    /// packet at a time there), for the stage's packet-by-packet walk; else whether every
    /// packet header was good. Never inlined: called once a block, so the call costs nothing,
    /// and `rxbench instructions` counts zcap's per-packet work inside it by its name
    /// (callgrind's `--toggle-collect`); inlined, it counted nothing.
    #[inline(never)]
    pub(super) fn block(
        &mut self,
        block: &Block<'_>,
        view: &BlockView<'_>,
        run_packets: &mut u64,
        max: u64,
    ) -> Option<bool> {
        if self.copier.is_some() {
            return None;
        }
        let (index, linktype) = (self.index, self.linktype);
        // Counted in locals and added up after the walk: counters behind `&mut` would be
        // read and written in memory for every packet (the consumer's stores may alias them).
        let left = max.saturating_sub(*run_packets);
        let (mut n, mut bytes, mut bad) = (0u64, 0u64, false);
        let packets = view.packets().map_while(|p| match p {
            Ok(p) if n < left => {
                n += 1;
                bytes += p.data().len() as u64;
                Some(Delivered {
                    data: p.data(),
                    meta: *p.meta(),
                    flow: &NO_FLOW,
                    consumer: index,
                    linktype,
                    link: Some((block, p.header_offset())),
                })
            }
            Ok(_) => None,
            Err(_) => {
                bad = true;
                None
            }
        });
        // Fused: after the run's last packet (or a bad header) the rest of the block is not
        // walked, by the consumer or by the drain below.
        let mut packets = packets.fuse();
        self.consumer.packets(&mut packets);
        packets.for_each(drop);
        *run_packets += n;
        self.stats.packets += n;
        self.stats.bytes += bytes;
        Some(!bad)
    }

    /// The consumer's result and counters.
    pub(super) fn finish(self) -> (C::Output, ConsumerStats) {
        (self.consumer.finish(), self.stats)
    }
}
