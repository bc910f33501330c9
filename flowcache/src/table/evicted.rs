//! How flows leave the table: the queue of evicted flows' records, kept off the path of a
//! packet with the slots' TCP states, and the records and states handed out.

use super::slot::Slot;
use crate::record::{EndReason, FlowRecord};
use crate::tcp_state::TcpState;

/// A flow's record as it leaves the table, with its TCP state when the table follows them
/// ([`FlowTableConfig::tcp_state`]): [`FlowTable::pop_evicted_end`],
/// [`FlowTable::expire_ends`] and [`FlowTable::flush_ends`] hand them out.
///
/// [`FlowTableConfig::tcp_state`]: crate::FlowTableConfig::tcp_state
/// [`FlowTable::pop_evicted_end`]: crate::FlowTable::pop_evicted_end
/// [`FlowTable::expire_ends`]: crate::FlowTable::expire_ends
/// [`FlowTable::flush_ends`]: crate::FlowTable::flush_ends
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct FlowEnd {
    /// The flow's counters and why they were reported.
    pub record: FlowRecord,
    /// The connection's state and history when its record was made: `None` unless the
    /// table follows TCP states and saw a TCP segment of the flow
    /// ([`FlowTable::observe_tcp`]). An active-timeout report carries the state so far.
    ///
    /// [`FlowTable::observe_tcp`]: crate::FlowTable::observe_tcp
    pub tcp: Option<TcpState>,
}

impl FlowEnd {
    /// A record and its TCP state.
    pub fn new(record: FlowRecord, tcp: Option<TcpState>) -> Self {
        FlowEnd { record, tcp }
    }
}

/// What the table keeps off the path of a packet, behind one pointer: the queue of evicted
/// flows' records and the slots' TCP states.
#[derive(Debug, Clone)]
pub(super) struct Aside {
    pub(super) evicted: Evicted,
    /// Each slot's TCP state ([`FlowTableConfig::tcp_state`]; the table has none when they
    /// are not followed): its flow's, or empty ([`TcpState::new`]: no segment seen), taken
    /// out when the flow ends, so that the slot's next flow starts afresh.
    pub(super) tcp: Box<[TcpState]>,
}

/// The queue of evicted flows' records (and, in a table that follows TCP states, beside it
/// their states, one for one): at most `room`, in memory allocated at creation, and the count
/// of those dropped because it was full.
#[derive(Debug)]
pub(super) struct Evicted {
    /// Oldest first; its capacity is at least `room` from creation on, so a push never
    /// reallocates.
    pub(super) records: std::collections::VecDeque<FlowRecord>,
    /// The TCP state of each record in `records`, in the same order, when the table follows
    /// them (else empty, and allocated empty).
    pub(super) states: std::collections::VecDeque<Option<TcpState>>,
    pub(super) room: usize,
    /// Records dropped because the queue held `room` ([`TableCounters::lost`]).
    pub(super) lost: u64,
}

impl Evicted {
    pub(super) fn new(room: usize, tcp: bool) -> Self {
        Evicted {
            records: std::collections::VecDeque::with_capacity(room),
            states: std::collections::VecDeque::with_capacity(if tcp { room } else { 0 }),
            room,
            lost: 0,
        }
    }

    /// The oldest record and its TCP state.
    #[inline]
    pub(super) fn pop(&mut self) -> Option<FlowEnd> {
        let record = self.records.pop_front()?;
        Some(FlowEnd {
            record,
            tcp: self.states.pop_front().flatten(),
        })
    }
}

impl Clone for Evicted {
    /// A queue with the same room allocated (a derived clone would allocate only for the
    /// records held, and a later push would reallocate).
    fn clone(&self) -> Self {
        let mut c = Evicted::new(self.room, self.states.capacity() > 0);
        c.records.extend(self.records.iter().copied());
        c.states.extend(self.states.iter().copied());
        c.lost = self.lost;
        c
    }
}

/// Ends the flow in `s`, slot number `slot`, evicted to make room: its generation moves on,
/// and its record (unless it has had no packet since its last report) is queued for the
/// caller with, in a table that follows TCP states, its state, taken out of its slot; or the
/// record is counted as lost if the queue is full. Whether there was a record. Out of line,
/// so that the queue's code stays off the path of every other packet, which passes it the
/// slot and its number and keeps nothing else.
#[cold]
#[inline(never)]
pub(super) fn evict(aside: &mut Aside, s: &mut Slot, slot: usize) -> bool {
    s.generation = s.generation.wrapping_add(1);
    let state = take_state(&mut aside.tcp, slot);
    if s.packets[0] + s.packets[1] == 0 {
        return false;
    }
    let r = FlowRecord {
        stats: s.stats(),
        end: EndReason::Evicted,
    };
    let evicted = &mut aside.evicted;
    if evicted.records.len() >= evicted.room {
        evicted.lost += 1;
        return true;
    }
    if evicted.records.is_empty() {
        // Back to the buffer's start (taking one record at a time leaves the deque's head
        // where the last one was): the queue's memory is touched only as far as it fills.
        evicted.records.clear();
        evicted.states.clear();
    }
    evicted.records.push_back(r);
    if !aside.tcp.is_empty() {
        evicted.states.push_back(state);
    }
    true
}

/// The TCP state of the flow in `slot`, taken out (the slot's state is left empty), if the
/// table follows them and the flow had a segment.
#[inline]
pub(super) fn take_state(tcp: &mut [TcpState], slot: usize) -> Option<TcpState> {
    tcp.get_mut(slot)
        .map(std::mem::take)
        .filter(|t| t.originator().is_some())
}

/// The TCP state of the flow in `slot` (a copy; the flow goes on), if the table follows
/// them and the flow had a segment.
#[inline]
pub(super) fn copy_state(tcp: &[TcpState], slot: usize) -> Option<TcpState> {
    tcp.get(slot).copied().filter(|t| t.originator().is_some())
}

/// The records [`FlowTable::drain_evicted`] hands out, oldest first. Dropping it before the
/// end removes the rest from the table all the same.
///
/// [`FlowTable::drain_evicted`]: crate::FlowTable::drain_evicted
#[derive(Debug)]
pub struct EvictedRecords<'a>(pub(super) std::collections::vec_deque::Drain<'a, FlowRecord>);

impl Iterator for EvictedRecords<'_> {
    type Item = FlowRecord;

    #[inline]
    fn next(&mut self) -> Option<FlowRecord> {
        self.0.next()
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl ExactSizeIterator for EvictedRecords<'_> {}

impl std::iter::FusedIterator for EvictedRecords<'_> {}
