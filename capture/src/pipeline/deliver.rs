//! Delivery: one routine hands packets to a consumer, zero-copy or copied, for inline and
//! threaded consumers alike.

use zcrx_flowcache::LinkType;
use zcrx_ring::{Batch, Block, BlockView, Packet, PacketDesc, PacketMeta};

use super::steer::NO_FLOW;
use super::{Consumer, ConsumerStats, Delivered, FlowTag};
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
    #[inline]
    pub(super) fn one(&mut self, p: &Packet<'_>, flow: &FlowTag, link: Option<(&Block<'_>, u32)>) {
        let len = p.data().len();
        self.stats.packets += 1;
        self.stats.bytes += len as u64;
        match self.copier {
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

    /// A batch from the stage (threaded consumer). Zero-copy: the packets are read in the
    /// ring, then the lease goes. Copy: every packet is copied first and the lease released
    /// before the consumer runs (the user-space `copy_to_user`). Returns the emptied
    /// descriptor vector for reuse.
    pub(super) fn batch(&mut self, batch: Batch<'_>, tags: &[FlowTag]) -> Vec<PacketDesc> {
        self.stats.batches += 1;
        self.stats.packets += batch.len() as u64;
        let (index, linktype, stats) = (self.index, self.linktype, &mut self.stats);
        let Some(copier) = self.copier else {
            let mut packets = batch.packets().zip(tags).map(|(p, flow)| {
                stats.bytes += p.data().len() as u64;
                Delivered {
                    data: p.data(),
                    meta: *p.meta(),
                    flow,
                    consumer: index,
                    linktype,
                    link: None,
                }
            });
            self.consumer.packets(&mut packets);
            packets.for_each(drop);
            return batch.release();
        };
        let total: usize = batch.descs().iter().map(|d| d.caplen() as usize).sum();
        if self.arena.len() < total {
            self.arena.resize(total, 0);
        }
        self.copies.clear();
        let mut off = 0;
        for p in batch.packets() {
            let len = p.data().len();
            copier.copy(&mut self.arena[off..off + len], p.data());
            self.copies.push((off, len, *p.meta()));
            off += len;
        }
        let descs = batch.release();
        let arena = &self.arena;
        let mut packets = self
            .copies
            .iter()
            .zip(tags)
            .map(|(&(off, len, meta), flow)| {
                stats.bytes += len as u64;
                Delivered {
                    data: &arena[off..off + len],
                    meta,
                    flow,
                    consumer: index,
                    linktype,
                    link: None,
                }
            });
        self.consumer.packets(&mut packets);
        packets.for_each(drop);
        descs
    }

    /// Every packet of `view` (the walk of `block`) up to `max` packets in the run (counted
    /// in `run_packets`), in one call of the consumer's `packets`: the inline consumer with
    /// zero-copy delivery and steering off. `None` with copy delivery (the arena holds one
    /// packet at a time there), for the stage's packet-by-packet walk; else whether every
    /// packet header was good.
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
        let (index, linktype, stats) = (self.index, self.linktype, &mut self.stats);
        let mut bad = false;
        let packets = view.packets().map_while(|p| match p {
            Ok(p) if *run_packets < max => {
                *run_packets += 1;
                stats.packets += 1;
                stats.bytes += p.data().len() as u64;
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
        Some(!bad)
    }

    /// The consumer's result and counters.
    pub(super) fn finish(self) -> (C::Output, ConsumerStats) {
        (self.consumer.finish(), self.stats)
    }
}
