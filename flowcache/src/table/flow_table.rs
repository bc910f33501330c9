//! The table itself: its memory, made once, and the questions asked of it between packets.

use std::hash::BuildHasher;

use super::config::{FlowTableConfig, FlowTableError};
use super::counters::TableCounters;
use super::evicted::{Aside, Evicted, EvictedRecords, FlowEnd};
use super::slot::Slot;
use super::tags::{EMPTY, WAYS};
use crate::key::{Direction, FlowKey};
use crate::record::{FlowId, FlowRecord, FlowStats, Timeouts};
use crate::tcp_state::{TcpSegment, TcpState};

/// The flow table. Memory is allocated once at creation (the slots, the queue of evicted
/// flows' records, [`FlowTableConfig::evicted_room`], and with
/// [`FlowTableConfig::tcp_state`] the slots' TCP states); `track` never allocates.
#[derive(Debug, Clone)]
pub struct FlowTable {
    /// Each set's 16 tags (byte `i` is way `i`): one bounds check names a set's tags.
    pub(super) tags: Box<[[u8; WAYS]]>,
    pub(super) slots: Box<[Slot]>,
    pub(super) set_mask: usize,
    pub(super) hasher: foldhash::fast::FixedState,
    pub(super) symmetric: bool,
    pub(super) timeouts: Timeouts,
    pub(super) len: usize,
    pub(super) counters: TableCounters,
    /// Records of evicted flows not yet handed out ([`FlowTable::drain_evicted`]) and the TCP
    /// states. Boxed: the eviction's (cold, out-of-line) push gets a pointer to the queue on
    /// the heap, not into the table, so the compiler can keep the table's fields in registers
    /// across a caller's loop (with the queue inline, every packet would reload them).
    pub(super) aside: Box<Aside>,
}

/// `n` copies of `value`, the memory shown to `prepare` before the first is written.
/// A request the allocator refuses is an error, not an abort: a table near [`MAX_CAPACITY`]
/// is tens of GiB.
pub(super) fn allocate<T: Clone>(
    n: usize,
    value: T,
    prepare: Option<fn(usize, usize)>,
) -> Result<Box<[T]>, FlowTableError> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| FlowTableError::Alloc {
        bytes: n.saturating_mul(std::mem::size_of::<T>()),
    })?;
    if let Some(prepare) = prepare {
        let spare = v.spare_capacity_mut();
        prepare(spare.as_ptr() as usize, std::mem::size_of_val(spare));
    }
    v.resize(n, value);
    Ok(v.into_boxed_slice())
}

impl FlowTable {
    /// A table with `config`, or [`FlowTableError::CapacityTooLarge`] if `config.capacity`
    /// exceeds [`MAX_CAPACITY`], or [`FlowTableError::Alloc`] if the allocator refuses its
    /// memory ([`FlowTableConfig::memory_bytes`]).
    ///
    /// [`MAX_CAPACITY`]: crate::MAX_CAPACITY
    pub fn new(config: FlowTableConfig) -> Result<Self, FlowTableError> {
        config.check()?;
        let slots = config.capacity.max(WAYS).next_power_of_two();
        let seed = config.seed.unwrap_or_else(|| {
            std::collections::hash_map::RandomState::new().hash_one(0x7a63_7278u64)
        });
        Ok(FlowTable {
            tags: allocate(slots / WAYS, [EMPTY; WAYS], config.prepare_memory)?,
            slots: allocate(slots, Slot::default(), config.prepare_memory)?,
            set_mask: slots / WAYS - 1,
            hasher: foldhash::fast::FixedState::with_seed(seed),
            symmetric: config.symmetric,
            timeouts: config.timeouts,
            len: 0,
            counters: TableCounters::default(),
            aside: Box::new(Aside {
                evicted: Evicted::new(config.evicted_room, config.tcp_state),
                tcp: if config.tcp_state {
                    allocate(slots, TcpState::new(), config.prepare_memory)?
                } else {
                    Box::default()
                },
            }),
        })
    }

    /// A symmetric table of `capacity` flows with default timeouts and a random seed, or
    /// [`FlowTableError::CapacityTooLarge`] above [`MAX_CAPACITY`](crate::MAX_CAPACITY).
    pub fn with_capacity(capacity: usize) -> Result<Self, FlowTableError> {
        Self::new(FlowTableConfig::with_capacity(capacity))
    }

    /// Slots (the most flows held at once).
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }
    /// Flows created, evicted, expired and flushed since the table was made (a flow that
    /// is evicted or expires counts whether or not it yields a record), and evicted flows'
    /// records lost to a full queue.
    pub fn counters(&self) -> TableCounters {
        TableCounters {
            lost: self.aside.evicted.lost,
            ..self.counters
        }
    }
    /// Records of evicted flows the table holds until they are taken
    /// ([`FlowTableConfig::evicted_room`]).
    pub fn evicted_room(&self) -> usize {
        self.aside.evicted.room
    }
    /// Flows held now.
    pub fn len(&self) -> usize {
        self.len
    }
    /// No flows held.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The live flow with this id: its counters (a copy).
    pub fn get(&self, id: FlowId) -> Option<FlowStats> {
        let slot = id.slot as usize;
        (slot < self.slots.len()
            && self.tag(slot) != EMPTY
            && self.slots[slot].generation == id.generation)
            .then(|| self.slots[slot].stats())
    }

    /// The live flow of `key` (either direction in symmetric mode): its id and counters (a
    /// copy).
    pub fn lookup(&self, key: &FlowKey) -> Option<(FlowId, FlowStats)> {
        let key = if self.symmetric {
            key.canonical().0
        } else {
            *key
        };
        self.find(self.hash(&key), &key)
            .map(|i| (self.slots[i].id(i), self.slots[i].stats()))
    }

    /// Live flows: ids and counters (copies).
    pub fn iter(&self) -> impl Iterator<Item = (FlowId, FlowStats)> + '_ {
        self.tags
            .iter()
            .flatten()
            .enumerate()
            .filter(|(_, &t)| t != EMPTY)
            .map(|(i, _)| (self.slots[i].id(i), self.slots[i].stats()))
    }

    /// The records of flows evicted to make room ([`Tracked::evicted`]) since they were last
    /// taken, oldest first. They wait in the table until taken here or by [`FlowTable::expire`]
    /// or [`FlowTable::flush`] (which yield them first), up to
    /// [`FlowTableConfig::evicted_room`] of them: a caller that takes them at least every
    /// that many packets loses none; beyond it, records are dropped and counted
    /// ([`TableCounters::lost`]). Their TCP states, if the table follows them, go with them
    /// unread ([`FlowTable::pop_evicted_end`] hands out both).
    ///
    /// [`Tracked::evicted`]: crate::Tracked::evicted
    pub fn drain_evicted(&mut self) -> EvictedRecords<'_> {
        self.aside.evicted.states.clear();
        EvictedRecords(self.aside.evicted.records.drain(..))
    }

    /// The oldest evicted flow's record not yet taken ([`FlowTable::drain_evicted`] one at a
    /// time; inlined, for a caller's per-packet loop).
    #[inline]
    pub fn pop_evicted(&mut self) -> Option<FlowRecord> {
        self.aside.evicted.pop().map(|e| e.record)
    }

    /// [`FlowTable::pop_evicted`] with the flow's TCP state at its eviction.
    #[inline]
    pub fn pop_evicted_end(&mut self) -> Option<FlowEnd> {
        self.aside.evicted.pop()
    }

    /// Whether the table follows TCP states ([`FlowTableConfig::tcp_state`]).
    #[inline]
    pub fn follows_tcp_state(&self) -> bool {
        !self.aside.tcp.is_empty()
    }

    /// Moves the TCP state of the live flow `id` by one segment sent `dir` relative to the
    /// flow's key (a [`Tracked`]'s id and direction, from [`FlowTable::track`] on the same
    /// packet; [`TcpSegment::read`] reads the segment). Nothing happens if the table does
    /// not follow TCP states or `id` is not a live flow's.
    ///
    /// [`Tracked`]: crate::Tracked
    #[inline(always)]
    pub fn observe_tcp(&mut self, id: FlowId, dir: Direction, seg: &TcpSegment) {
        let i = id.slot as usize;
        // Every end of a flow moves its slot's generation on (`remove`, `evict`), and an id
        // is handed out only for a live flow: an id whose generation is its slot's is live,
        // with no look at the slot's tag.
        let (Some(t), Some(s)) = (self.aside.tcp.get_mut(i), self.slots.get(i)) else {
            return;
        };
        if s.generation == id.generation {
            t.observe(dir, seg);
        }
    }

    /// The TCP state of the live flow `id` so far: `None` if the table does not follow TCP
    /// states, `id` is not a live flow's, or no TCP segment of it was observed.
    pub fn tcp_state(&self, id: FlowId) -> Option<&TcpState> {
        let i = id.slot as usize;
        let t = self.aside.tcp.get(i)?;
        (self.tag(i) != EMPTY
            && self.slots[i].generation == id.generation
            && t.originator().is_some())
        .then_some(t)
    }
}
