//! A flow's slot: its counters laid out to span exactly two cache lines, and what they say.

use super::fetch;
use crate::key::{Direction, FlowKey};
use crate::record::{tcp, FlowId, FlowStats};

/// [`Slot::first_ns`] of a flow without a packet since its last report. (A packet stamped
/// `u64::MAX`, in the year 2554, would read as none.)
pub(super) const NONE_SINCE: u64 = u64::MAX;

/// A flow's counters ([`FlowStats`]' fields) and its slot's generation: 96 bytes aligned to
/// 32, so a slot starts at byte 0 or 32 of a cache line and spans exactly two lines. (A
/// `FlowStats` and a generation beside it would be 104 bytes: a third of the slots would
/// span three lines.)
#[derive(Debug, Clone, Copy, Default)]
#[repr(align(32))]
pub(super) struct Slot {
    pub(super) key: FlowKey,
    pub(super) packets: [u64; 2],
    pub(super) bytes: [u64; 2],
    /// The first packet's time since the flow began or was last reported; [`NONE_SINCE`]
    /// from a report until the next packet (one compare a packet tells it, where the
    /// counters would take two loads and an OR).
    pub(super) first_ns: u64,
    pub(super) last_ns: u64,
    pub(super) tcp_flags: [u8; 2],
    pub(super) initiator: Direction,
    /// A FIN or RST was seen before the last report (since then, `tcp_flags` says it):
    /// kept up to date by `report`, not per packet.
    pub(super) closed_before: bool,
    pub(super) generation: u32,
}

impl Slot {
    /// Prefetches both cache lines of the slot through two of its fields (a test checks,
    /// for the layout the compiler chose, that they reach every line from either start).
    #[inline(always)]
    pub(super) fn fetch(&self) {
        fetch::line(&self.packets);
        fetch::line(&self.last_ns);
    }

    /// The flow's counters.
    #[inline]
    pub(super) fn stats(&self) -> FlowStats {
        FlowStats {
            key: self.key,
            packets: self.packets,
            bytes: self.bytes,
            // No packet since the last report: the counters are zero, and the period, empty,
            // is taken to start where the last one ended.
            first_ns: if self.first_ns == NONE_SINCE {
                self.last_ns
            } else {
                self.first_ns
            },
            last_ns: self.last_ns,
            tcp_flags: self.tcp_flags,
            initiator: self.initiator,
            closed: self.closed(),
        }
    }

    /// Whether the flow saw a FIN or RST in its life.
    #[inline]
    pub(super) fn closed(&self) -> bool {
        self.closed_before || (self.tcp_flags[0] | self.tcp_flags[1]) & (tcp::FIN | tcp::RST) != 0
    }

    /// The flow's id.
    #[inline(always)]
    pub(super) fn id(&self, slot: usize) -> FlowId {
        FlowId {
            slot: slot as u32,
            generation: self.generation,
        }
    }
}
