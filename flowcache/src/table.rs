//! The bounded flow table.
//!
//! Scheme: set-associative open addressing with two choices. The table is `sets x 16` slots
//! allocated once; a keyed hash names two candidate sets, a 7-bit tag per slot (kept in a
//! separate byte array, 16 bytes per set) filters candidates, and the key decides. A new flow
//! goes to its first set while that has at least `SPILL_FREE` (6 of 16) free ways, and otherwise to
//! the emptier of its two sets ("power of two choices"). The choice keeps the fullest set
//! close to the mean and lets a table fill past 80% before its first eviction (checked by
//! `tests/table.rs` for several seeds), where a single set choice starts evicting near 50%;
//! the threshold keeps most flows of a lightly loaded table in their first set, so a lookup
//! rarely falls through to the second, a branch the CPU cannot predict (always choosing the
//! emptier set makes that branch a coin toss on small tables, as callgrind's branch
//! simulation shows). A lookup touches at most two tag lines and the
//! matching slot: O(32) worst case whatever the traffic, which matters because senders choose
//! 5-tuples — with a chained or linear-probing table an attacker who learns the hash can build
//! long chains; here the hash is keyed with a per-table random seed, and even a full collision
//! only fills two sets.
//!
//! When both sets are full, the least recently seen flow of the two is evicted (LRU within
//! the candidates, the rule of CPU caches) and its [`FlowRecord`] queued in the table until
//! the caller takes it ([`Tracked::evicted`] says so; [`FlowTable::drain_evicted`],
//! [`FlowTable::expire`] and [`FlowTable::flush`] hand it out): the cost per packet stays
//! bounded, and `track` returns 16 bytes.
//!
//! The queue of evicted flows' records is allocated with the table and holds
//! [`FlowTableConfig::evicted_room`] records; `track` evicts at most one flow per packet, so
//! a caller that takes the records at least every `evicted_room` packets loses none. When
//! the queue is full, the new eviction's record is dropped and counted
//! ([`TableCounters::lost`]), as a flow exporter drops and counts records when its export
//! buffer is full: the alternatives are worse for the packet path (growing the queue
//! allocates on it, and without a bound a caller that never takes the records holds them
//! all), and dropping the newest keeps the records already queued as they were, oldest
//! first, for the caller to take.
//!
//! A table built with [`FlowTableConfig::tcp_state`] holds a [`TcpState`] per slot, in an
//! array of its own allocated with the slots (so [`FlowTable::track`] and a slot's two cache
//! lines are as without it): [`FlowTable::observe_tcp`] moves a live flow's state by a segment,
//! and the state leaves the table with its flow's record on every path, as a [`FlowEnd`]:
//! an evicted flow's state waits beside its record in a queue of the same room
//! ([`FlowTable::pop_evicted_end`]), an expiring flow's and an active-timeout report's come
//! with their records ([`FlowTable::expire_ends`]), and so do a flushed flow's
//! ([`FlowTable::flush_ends`]). Taking a flow's state out at its end leaves its slot's state
//! empty for the slot's next flow, so nothing on `track`'s path resets it.

use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

use crate::key::{Direction, FlowKey};
use crate::proto::ipproto;
use crate::record::{
    tcp, EndReason, FlowId, FlowRecord, FlowStats, Timeouts, TrackInput, Tracked, MAX_CAPACITY,
};
use crate::tcp_state::{TcpSegment, TcpState};

use tags::WAYS;

/// A new flow goes to its first set while that has at least this many free ways, else to the
/// emptier of its two (module docs). 6 of 16 fills the table as far before its first eviction
/// as always choosing the emptier set does; fewer free ways evict earlier, and first fit (1)
/// evicts from about half full.
const SPILL_FREE: u32 = 6;

/// [`Slot::first_ns`] of a flow without a packet since its last report. (A packet stamped
/// `u64::MAX`, in the year 2554, would read as none.)
const NONE_SINCE: u64 = u64::MAX;

/// A flow's counters ([`FlowStats`]' fields) and its slot's generation: 96 bytes aligned to
/// 32, so a slot starts at byte 0 or 32 of a cache line and spans exactly two lines. (A
/// `FlowStats` and a generation beside it would be 104 bytes: a third of the slots would
/// span three lines.)
#[derive(Debug, Clone, Copy, Default)]
#[repr(align(32))]
struct Slot {
    key: FlowKey,
    packets: [u64; 2],
    bytes: [u64; 2],
    /// The first packet's time since the flow began or was last reported; [`NONE_SINCE`]
    /// from a report until the next packet (one compare a packet tells it, where the
    /// counters would take two loads and an OR).
    first_ns: u64,
    last_ns: u64,
    tcp_flags: [u8; 2],
    initiator: Direction,
    /// A FIN or RST was seen before the last report (since then, `tcp_flags` says it):
    /// kept up to date by `report`, not per packet.
    closed_before: bool,
    generation: u32,
}

impl Slot {
    /// Prefetches both cache lines of the slot through two of its fields (a test checks,
    /// for the layout the compiler chose, that they reach every line from either start).
    #[inline(always)]
    fn fetch(&self) {
        fetch::line(&self.packets);
        fetch::line(&self.last_ns);
    }

    /// The flow's counters.
    #[inline]
    fn stats(&self) -> FlowStats {
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
    fn closed(&self) -> bool {
        self.closed_before || (self.tcp_flags[0] | self.tcp_flags[1]) & (tcp::FIN | tcp::RST) != 0
    }

    /// The flow's id.
    #[inline(always)]
    fn id(&self, slot: usize) -> FlowId {
        FlowId {
            slot: slot as u32,
            generation: self.generation,
        }
    }
}

/// What `track` learnt of one packet, for its flow's slot: its direction, its key's hash
/// and what the caller passed.
#[derive(Clone, Copy)]
struct Seen {
    dir: Direction,
    hash: u64,
    len: u32,
    ts_ns: u64,
    tcp_flags: u8,
}

/// Table configuration: [`FlowTableConfig::default`] or [`FlowTableConfig::with_capacity`],
/// then the `with_*` setters (or assignments to the fields).
///
/// ```
/// use zcrx_flowcache::{FlowTable, FlowTableConfig};
/// let table = FlowTable::new(FlowTableConfig::with_capacity(1 << 16).with_symmetric(false))?;
/// assert_eq!(table.capacity(), 1 << 16);
/// # Ok::<(), zcrx_flowcache::FlowTableError>(())
/// ```
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct FlowTableConfig {
    /// Flows held at most; rounded up to a power of two, at least one set of 16, at most
    /// [`MAX_CAPACITY`].
    pub capacity: usize,
    /// Both directions of a flow share one entry (canonical key).
    pub symmetric: bool,
    /// Idle timeouts.
    pub timeouts: Timeouts,
    /// Hash seed; `None` draws a random one (the default: senders choose 5-tuples).
    pub seed: Option<u64>,
    /// Called with the address and length of each of the table's arrays after it is
    /// allocated and before it is first written: the place to ask for transparent huge pages
    /// (`madvise(MADV_HUGEPAGE)`, e.g. `zcrx_ring::advise_huge_pages`), which this crate,
    /// having no unsafe code, cannot do itself. At a million flows (97 MiB) a lookup's
    /// random accesses otherwise miss the TLB. `None` (the default): plain allocations.
    pub prepare_memory: Option<fn(usize, usize)>,
    /// Records of evicted flows the table holds until the caller takes them
    /// ([`FlowTable::drain_evicted`]), allocated with the table: a caller that takes them at
    /// least every `evicted_room` packets loses none (a packet evicts at most one flow).
    /// Beyond it an eviction's record is dropped and counted ([`TableCounters::lost`]); 0
    /// keeps none. Default [`DEFAULT_EVICTED_ROOM`] (1024 records, about 100 KiB, touched
    /// only as far as the queue fills).
    pub evicted_room: usize,
    /// The table holds a [`TcpState`] per slot, moved by [`FlowTable::observe_tcp`] and
    /// handed out with each flow's record ([`FlowEnd`]: [`FlowTable::pop_evicted_end`],
    /// [`FlowTable::expire_ends`], [`FlowTable::flush_ends`]). Off by default: the states
    /// cost [`TCP_STATE_BYTES`] a slot, allocated with the table, and [`FlowTable::track`]
    /// is the same either way.
    pub tcp_state: bool,
}

impl FlowTableConfig {
    /// The default configuration with room for `capacity` flows: rounded up to a power of
    /// two of at least 16 (one set of ways), at most [`MAX_CAPACITY`] (checked by
    /// [`FlowTable::new`] and [`FlowTableConfig::check`]).
    pub fn with_capacity(capacity: usize) -> Self {
        FlowTableConfig {
            capacity,
            ..Default::default()
        }
    }

    /// Sets [`FlowTableConfig::symmetric`].
    pub fn with_symmetric(mut self, symmetric: bool) -> Self {
        self.symmetric = symmetric;
        self
    }

    /// Sets [`FlowTableConfig::timeouts`].
    pub fn with_timeouts(mut self, timeouts: Timeouts) -> Self {
        self.timeouts = timeouts;
        self
    }

    /// Sets [`FlowTableConfig::seed`].
    pub fn with_seed(mut self, seed: Option<u64>) -> Self {
        self.seed = seed;
        self
    }

    /// Sets [`FlowTableConfig::prepare_memory`].
    pub fn with_prepare_memory(mut self, prepare: Option<fn(usize, usize)>) -> Self {
        self.prepare_memory = prepare;
        self
    }

    /// Sets [`FlowTableConfig::evicted_room`].
    pub fn with_evicted_room(mut self, room: usize) -> Self {
        self.evicted_room = room;
        self
    }

    /// Sets [`FlowTableConfig::tcp_state`].
    pub fn with_tcp_state(mut self, on: bool) -> Self {
        self.tcp_state = on;
        self
    }
}

impl FlowTableConfig {
    /// Whether [`FlowTable::new`] accepts this configuration, without allocating a table:
    /// for those that build a configuration now and a table later (a pipeline's builder).
    pub fn check(&self) -> Result<(), FlowTableError> {
        if self.capacity > MAX_CAPACITY {
            return Err(FlowTableError::CapacityTooLarge {
                requested: self.capacity,
                max: MAX_CAPACITY,
            });
        }
        Ok(())
    }

    /// The bytes a table of this configuration allocates for its slots and tags, and with
    /// [`FlowTableConfig::tcp_state`] its TCP states ([`TCP_STATE_BYTES`] a slot): the
    /// capacity is rounded up to a power of two of at least one set of ways. (The queue of
    /// evicted flows' records, [`FlowTableConfig::evicted_room`], comes on top.)
    pub fn memory_bytes(&self) -> usize {
        let slots = self.capacity.max(WAYS).next_power_of_two();
        let per_slot =
            std::mem::size_of::<Slot>() + if self.tcp_state { TCP_STATE_BYTES } else { 0 };
        slots.saturating_mul(per_slot)
            + (slots / WAYS).saturating_mul(std::mem::size_of::<[u8; WAYS]>())
    }
}

/// Why [`FlowTable::new`] made no table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FlowTableError {
    /// More flows asked for than a table holds.
    #[error("a flow table of {requested} flows exceeds the maximum of {max}")]
    CapacityTooLarge {
        /// The capacity asked for.
        requested: usize,
        /// [`MAX_CAPACITY`].
        max: usize,
    },
    /// The allocator refused the table's memory ([`FlowTableConfig::memory_bytes`] says what
    /// a capacity costs).
    #[error("cannot allocate {bytes} bytes for the flow table")]
    Alloc {
        /// The bytes asked for.
        bytes: usize,
    },
}

/// [`FlowTableConfig::evicted_room`]'s default: room for the evictions of a batch of 1024
/// packets between two takes.
pub const DEFAULT_EVICTED_ROOM: usize = 1024;

impl Default for FlowTableConfig {
    fn default() -> Self {
        FlowTableConfig {
            capacity: 65_536,
            symmetric: true,
            timeouts: Timeouts::default(),
            seed: None,
            prepare_memory: None,
            evicted_room: DEFAULT_EVICTED_ROOM,
            tcp_state: false,
        }
    }
}

/// The bytes a slot's TCP state takes in a table that follows them
/// ([`FlowTableConfig::tcp_state`]).
pub const TCP_STATE_BYTES: usize = std::mem::size_of::<TcpState>();

/// A flow's record as it leaves the table, with its TCP state when the table follows them
/// ([`FlowTableConfig::tcp_state`]): [`FlowTable::pop_evicted_end`],
/// [`FlowTable::expire_ends`] and [`FlowTable::flush_ends`] hand them out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct FlowEnd {
    /// The flow's counters and why they were reported.
    pub record: FlowRecord,
    /// The connection's state and history when its record was made: `None` unless the
    /// table follows TCP states and saw a TCP segment of the flow
    /// ([`FlowTable::observe_tcp`]). An active-timeout report carries the state so far.
    pub tcp: Option<TcpState>,
}

impl FlowEnd {
    /// A record and its TCP state.
    pub fn new(record: FlowRecord, tcp: Option<TcpState>) -> Self {
        FlowEnd { record, tcp }
    }
}

/// The flow table. Memory is allocated once at creation (the slots, the queue of evicted
/// flows' records, [`FlowTableConfig::evicted_room`], and with
/// [`FlowTableConfig::tcp_state`] the slots' TCP states); `track` never allocates.
#[derive(Debug, Clone)]
pub struct FlowTable {
    /// Each set's 16 tags (byte `i` is way `i`): one bounds check names a set's tags.
    tags: Box<[[u8; WAYS]]>,
    slots: Box<[Slot]>,
    set_mask: usize,
    hasher: foldhash::fast::FixedState,
    symmetric: bool,
    timeouts: Timeouts,
    len: usize,
    counters: TableCounters,
    /// Records of evicted flows not yet handed out ([`FlowTable::drain_evicted`]) and the TCP
    /// states. Boxed: the eviction's (cold, out-of-line) push gets a pointer to the queue on
    /// the heap, not into the table, so the compiler can keep the table's fields in registers
    /// across a caller's loop (with the queue inline, every packet would reload them).
    aside: Box<Aside>,
}

/// What the table keeps off the path of a packet, behind one pointer: the queue of evicted
/// flows' records and the slots' TCP states.
#[derive(Debug, Clone)]
struct Aside {
    evicted: Evicted,
    /// Each slot's TCP state ([`FlowTableConfig::tcp_state`]; the table has none when they
    /// are not followed): its flow's, or empty ([`TcpState::new`]: no segment seen), taken
    /// out when the flow ends, so that the slot's next flow starts afresh.
    tcp: Box<[TcpState]>,
}

/// The queue of evicted flows' records (and, in a table that follows TCP states, beside it
/// their states, one for one): at most `room`, in memory allocated at creation, and the count
/// of those dropped because it was full.
#[derive(Debug)]
struct Evicted {
    /// Oldest first; its capacity is at least `room` from creation on, so a push never
    /// reallocates.
    records: std::collections::VecDeque<FlowRecord>,
    /// The TCP state of each record in `records`, in the same order, when the table follows
    /// them (else empty, and allocated empty).
    states: std::collections::VecDeque<Option<TcpState>>,
    room: usize,
    /// Records dropped because the queue held `room` ([`TableCounters::lost`]).
    lost: u64,
}

impl Evicted {
    fn new(room: usize, tcp: bool) -> Self {
        Evicted {
            records: std::collections::VecDeque::with_capacity(room),
            states: std::collections::VecDeque::with_capacity(if tcp { room } else { 0 }),
            room,
            lost: 0,
        }
    }

    /// The oldest record and its TCP state.
    #[inline]
    fn pop(&mut self) -> Option<FlowEnd> {
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

/// What a table did since it was made ([`FlowTable::counters`]): for metrics and reports.
/// Kept off the path of a packet of a known flow (only insertions and removals count).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TableCounters {
    /// Flows inserted.
    pub created: u64,
    /// Flows removed to make room for a new one ([`EndReason::Evicted`]).
    pub evicted: u64,
    /// Flows removed by their idle timeout, or after FIN/RST and a quiet spell
    /// ([`EndReason::Idle`], [`EndReason::EndOfFlow`]).
    pub expired: u64,
    /// Flows removed by [`FlowTable::flush`].
    pub flushed: u64,
    /// Evicted flows' records dropped because the queue of records not yet taken was full
    /// ([`FlowTableConfig::evicted_room`]; the evictions are counted in `evicted` too).
    pub lost: u64,
}

const EMPTY: u8 = 0;

/// Ends the flow in `s`, slot number `slot`, evicted to make room: its generation moves on,
/// and its record (unless it has had no packet since its last report) is queued for the
/// caller with, in a table that follows TCP states, its state, taken out of its slot; or the
/// record is counted as lost if the queue is full. Whether there was a record. Out of line,
/// so that the queue's code stays off the path of every other packet, which passes it the
/// slot and its number and keeps nothing else.
#[cold]
#[inline(never)]
fn evict(aside: &mut Aside, s: &mut Slot, slot: usize) -> bool {
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
fn take_state(tcp: &mut [TcpState], slot: usize) -> Option<TcpState> {
    tcp.get_mut(slot)
        .map(std::mem::take)
        .filter(|t| t.originator().is_some())
}

/// The TCP state of the flow in `slot` (a copy; the flow goes on), if the table follows
/// them and the flow had a segment.
#[inline]
fn copy_state(tcp: &[TcpState], slot: usize) -> Option<TcpState> {
    tcp.get(slot).copied().filter(|t| t.originator().is_some())
}

/// Which slots of a set hold `tag` (`matching`) or are free (`free`), as a 16-bit mask, bit
/// `i` for way `i`: [`tags::way`] is the lowest way in a mask, `mask & (mask - 1)` drops it.
/// On x86-64: one SSE2 compare and `movemask` (through `safe_arch`'s safe wrappers; SSE2 is
/// baseline there). Elsewhere: SWAR on the 16 bytes as one `u128` (bit 7 of each way's byte),
/// gathered into 16 bits with one multiply per half.
mod tags;

/// Tables up to this many slots (384 KiB) take [`FlowTable::track_batch`]'s direct path: such
/// a table stays in the caches, so the fetching passes only add work, while on larger tables
/// they overlap the cache misses (`flowcache/benches` compares both on both sizes).
const CACHED_SLOTS: usize = 4096;

/// Bringing a line into the cache ahead of its use, without waiting for it.
mod fetch;

/// Packets [`FlowTable::track_batch`] fetches ahead together on a table beyond the caches.
const GROUP: usize = 16;

/// `n` copies of `value`, the memory shown to `prepare` before the first is written.
/// A request the allocator refuses is an error, not an abort: a table near [`MAX_CAPACITY`]
/// is tens of GiB.
fn allocate<T: Clone>(
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
    /// [`FlowTableError::CapacityTooLarge`] above [`MAX_CAPACITY`].
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

    #[inline]
    fn hash(&self, key: &FlowKey) -> u64 {
        // The ports/protocol/VLAN word first: foldhash folds words in pairs and finishes
        // an odd last word with one multiply by a constant, which leaves keys that differ
        // only in that word clustered in the low bits (the set index); first, it is folded
        // with an address and mixed by every multiply after.
        let [s0, s1, d0, d1, tail] = key.words();
        let mut h = self.hasher.build_hasher();
        if key.is_ipv6() {
            for w in [tail, s0, s1, d0, d1] {
                h.write_u64(w);
            }
        } else {
            // An IPv4 key's addresses are 32 bits each (the low half of their first words,
            // the second words zero): both in one word, the key is two words and a third,
            // zero, for foldhash to finish with a second multiply (one alone spreads
            // addresses counting up badly: a set got 70 of 65 536 keys, share 16): two
            // folded multiplies instead of three. The branch follows the extraction's own
            // on the EtherType, which predicts it.
            for w in [tail, s0 << 32 | d0, 0] {
                h.write_u64(w);
            }
        }
        h.finish()
    }

    /// The two candidate sets and the tag of a hash.
    #[inline]
    fn place(&self, h: u64) -> (usize, usize, u8) {
        let a = (h as usize) & self.set_mask;
        let b = ((h >> 24) as usize) & self.set_mask;
        (a, b, 0x80 | (h >> 57) as u8)
    }

    /// Slot `i`'s tag.
    #[inline]
    fn tag(&self, i: usize) -> u8 {
        self.tags[i / WAYS][i % WAYS]
    }

    #[inline(always)]
    fn find_in(&self, set: usize, tag: u8, key: &FlowKey) -> Option<usize> {
        let mut m = tags::matching(&self.tags[set], tag);
        while m != 0 {
            let i = set * WAYS + tags::way(m);
            if self.slots[i].key == *key {
                return Some(i);
            }
            m &= m - 1;
        }
        None
    }

    /// The slot holding `key`: its first set, then its second (if a == b, the second search
    /// repeats the first and finds nothing either).
    #[inline(always)]
    fn find(&self, h: u64, key: &FlowKey) -> Option<usize> {
        let (a, b, tag) = self.place(h);
        self.find_in(a, tag, key)
            .or_else(|| self.find_in(b, tag, key))
    }

    /// Accounts one packet (`input.len` bytes at `input.ts_ns` with `input.tcp_flags`) to its
    /// flow, creating the flow (and evicting the least recently seen of its candidates if
    /// both sets are full). [`Extracted::track_input`](crate::Extracted::track_input) makes
    /// the input from what extraction found.
    #[inline(always)]
    pub fn track(&mut self, input: TrackInput) -> Tracked {
        let TrackInput {
            key,
            len,
            ts_ns,
            tcp_flags,
        } = input;
        let (key, dir) = if self.symmetric {
            key.canonical()
        } else {
            (key, Direction::Forward)
        };
        let h = self.hash(&key);
        self.track_hashed(
            key,
            Seen {
                dir,
                hash: h,
                len,
                ts_ns,
                tcp_flags,
            },
        )
    }

    /// [`FlowTable::track`] for many packets, in order, calling `each(index, tracked)` for every
    /// one. Same results as calling `track` in a loop; faster on tables larger than the caches:
    /// for each group of 16 packets it first hashes them all and prefetches their first sets'
    /// tags, then matches the tags and prefetches the slots they point at, and only then
    /// tracks them, so the group's cache misses overlap instead of following one another.
    /// A table of at most 4096 slots (under half a MiB) is tracked packet by
    /// packet: it stays in the caches, and the passes would only cost.
    ///
    /// `packets` may be a slice (`&[TrackInput]`) or any iterator of inputs: an iterator that
    /// extracts each packet as it goes (`frames.iter().map(|f| ...)`) keeps the inputs in
    /// 16-packet groups on the stack, so the batch costs no array of inputs to write and read
    /// back, and is never slower than `track` called in the same loop.
    #[inline(always)]
    pub fn track_batch<I>(&mut self, packets: I, mut each: impl FnMut(usize, Tracked))
    where
        I: IntoIterator,
        I::Item: std::borrow::Borrow<TrackInput>,
    {
        use std::borrow::Borrow;
        // One loop, and in it the only call of the iterator's `next`: an iterator that
        // extracts each packet (a large function) is then inlined into the caller's loop
        // as in a loop of `track` calls, where two calls (one for each path) would leave it
        // out of line, a call a packet with the caller's values spilled around it. Its one
        // counter serves both paths (the packet's number, and the group's fill below it),
        // so that the small table's path holds no more than a loop of `track` and one
        // flag: every value more held across the loop costs the caller's loop a register.
        let direct = self.slots.len() <= CACHED_SLOTS;
        let mut group = [TrackInput::default(); GROUP];
        let mut k = 0;
        for p in packets {
            // Each path takes the input where it needs it: a copy of the whole input before
            // the branch would be made and kept around `track` even where it reads a few
            // fields of the caller's slice.
            if direct {
                // The whole table stays in the core's caches: nothing to fetch ahead.
                each(k, self.track(*p.borrow()));
            } else {
                group[k % GROUP] = *p.borrow();
                if k % GROUP == GROUP - 1 {
                    self.track_group(&group, k + 1 - GROUP, &mut each);
                }
            }
            k += 1;
        }
        let rest = k % GROUP;
        if !direct && rest > 0 {
            self.track_group(&group[..rest], k - rest, &mut each);
        }
    }

    /// [`FlowTable::track_batch`] on a table larger than the caches, for one group of up to
    /// [`GROUP`] packets, the first numbered `done`: their tags and slots fetched ahead,
    /// then tracked.
    fn track_group(
        &mut self,
        group: &[TrackInput],
        mut done: usize,
        each: &mut impl FnMut(usize, Tracked),
    ) {
        let mut prepared = [(FlowKey::default(), Direction::Forward, 0u64); GROUP];
        let prepared = &mut prepared[..group.len()];
        for (p, slot) in group.iter().zip(prepared.iter_mut()) {
            let (key, dir) = if self.symmetric {
                p.key.canonical()
            } else {
                (p.key, Direction::Forward)
            };
            let h = self.hash(&key);
            fetch::line(&self.tags[self.place(h).0]);
            *slot = (key, dir, h);
        }
        // Most flows live in their first set: fetch the slot its matching tag names.
        for &(_, _, h) in prepared.iter() {
            let (a, _, tag) = self.place(h);
            let m = tags::matching(&self.tags[a], tag);
            if m != 0 {
                self.slots[a * WAYS + tags::way(m)].fetch();
            }
        }
        for (p, &(key, dir, h)) in group.iter().zip(prepared.iter()) {
            let seen = Seen {
                dir,
                hash: h,
                len: p.len,
                ts_ns: p.ts_ns,
                tcp_flags: p.tcp_flags,
            };
            let t = self.track_hashed(key, seen);
            each(done, t);
            done += 1;
        }
    }

    #[inline(always)]
    fn track_hashed(&mut self, key: FlowKey, seen: Seen) -> Tracked {
        // The hit is accounted where it was found, once per set, so that each copy keeps the
        // slot's address it compared the key at (one copy after the two searches had to
        // compute it again, with a second bounds check).
        let (a, b, tag) = self.place(seen.hash);
        if let Some(slot) = self.find_in(a, tag, &key) {
            return self.account(slot, seen);
        }
        if let Some(slot) = self.find_in(b, tag, &key) {
            return self.account(slot, seen);
        }
        self.insert(key, seen)
    }

    /// One more packet of the live flow in `slot`.
    #[inline(always)]
    fn account(&mut self, slot: usize, seen: Seen) -> Tracked {
        let (s, d) = (&mut self.slots[slot], seen.dir as usize);
        if s.first_ns == NONE_SINCE {
            s.first_ns = seen.ts_ns; // the first packet since an active-timeout report
        }
        s.packets[d] += 1;
        s.bytes[d] += u64::from(seen.len);
        s.tcp_flags[d] |= seen.tcp_flags;
        s.last_ns = s.last_ns.max(seen.ts_ns);
        Tracked {
            id: s.id(slot),
            hash: (seen.hash >> 32) as u32,
            dir: seen.dir,
            created: false,
            evicted: false,
        }
    }

    /// A new flow for `key`, in the emptier candidate set or in place of the least recently
    /// seen flow of the two.
    #[inline(always)]
    fn insert(&mut self, key: FlowKey, seen: Seen) -> Tracked {
        let (a, b, tag) = self.place(seen.hash);
        // Occupied tags have the high bit set, so the empty slots are the bytes without it.
        let free = |set: usize| tags::free(&self.tags[set]);
        let fa = free(a);
        let (set, fm) = if fa.count_ones() >= SPILL_FREE {
            (a, fa)
        } else {
            let fb = free(b);
            if fb.count_ones() > fa.count_ones() {
                (b, fb)
            } else {
                (a, fa)
            }
        };
        let mut evicted = false;
        let slot = match fm {
            m if m != 0 => set * WAYS + tags::way(m),
            _ => {
                let victim = (a * WAYS..(a + 1) * WAYS)
                    .chain(b * WAYS..(b + 1) * WAYS)
                    .min_by_key(|&i| self.slots[i].last_ns)
                    .expect("WAYS > 0");
                // The victim's tag is overwritten below, and the table holds as many flows.
                self.len -= 1;
                self.counters.evicted += 1;
                evicted = evict(&mut self.aside, &mut self.slots[victim], victim);
                victim
            }
        };
        self.tags[slot / WAYS][slot % WAYS] = tag;
        self.len += 1;
        self.counters.created += 1;
        let s = &mut self.slots[slot];
        *s = Slot {
            key,
            first_ns: seen.ts_ns,
            last_ns: seen.ts_ns,
            initiator: seen.dir,
            generation: s.generation,
            ..Default::default()
        };
        let d = seen.dir as usize;
        s.packets[d] = 1;
        s.bytes[d] = u64::from(seen.len);
        s.tcp_flags[d] = seen.tcp_flags;
        Tracked {
            id: s.id(slot),
            hash: (seen.hash >> 32) as u32,
            dir: seen.dir,
            created: true,
            evicted,
        }
    }

    /// Frees `slot`; its record, unless the flow has had no packet since its last report.
    fn remove(&mut self, slot: usize, end: EndReason) -> Option<FlowRecord> {
        self.tags[slot / WAYS][slot % WAYS] = EMPTY;
        self.len -= 1;
        match end {
            EndReason::Evicted => self.counters.evicted += 1,
            EndReason::Idle | EndReason::EndOfFlow => self.counters.expired += 1,
            EndReason::Flush => self.counters.flushed += 1,
            EndReason::Active => {}
        }
        let s = &mut self.slots[slot];
        s.generation = s.generation.wrapping_add(1);
        (s.packets[0] + s.packets[1] > 0).then(|| FlowRecord {
            stats: s.stats(),
            end,
        })
    }

    /// The flow's counters since its last report, which start again from zero (the flow
    /// stays, with its initiator and generation).
    fn report(&mut self, slot: usize) -> FlowRecord {
        let s = &mut self.slots[slot];
        let record = FlowRecord {
            stats: s.stats(),
            end: EndReason::Active,
        };
        s.closed_before = record.stats.closed;
        s.first_ns = NONE_SINCE;
        s.packets = [0; 2];
        s.bytes = [0; 2];
        s.tcp_flags = [0; 2];
        record
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

    fn timeout(&self, s: &Slot) -> Duration {
        let t = &self.timeouts;
        match s.key.proto() {
            ipproto::TCP if s.closed() => t.tcp_closed,
            ipproto::TCP => t.tcp,
            ipproto::UDP | ipproto::UDPLITE => t.udp,
            ipproto::ICMP | ipproto::ICMPV6 => t.icmp,
            _ => t.other,
        }
    }

    /// Removes and yields every flow idle at `now_ns` for longer than its timeout
    /// ([`EndReason::EndOfFlow`] for TCP after FIN or RST, else [`EndReason::Idle`]), and
    /// yields a report of every flow whose current report period is older than the active
    /// timeout ([`EndReason::Active`]; the flow stays). A flow that ends with nothing new
    /// since its last report yields nothing more. Flows not yet consumed from the iterator
    /// when it is dropped stay as they are. Any evicted flow's record not yet taken
    /// ([`FlowTable::drain_evicted`]) comes first. ([`FlowTable::expire_ends`] yields the
    /// flows' TCP states with them.)
    pub fn expire(&mut self, now_ns: u64) -> impl Iterator<Item = FlowRecord> + '_ {
        self.expire_ends(now_ns).map(|e| e.record)
    }

    /// [`FlowTable::expire`], each record with its flow's TCP state ([`FlowEnd`]): the state
    /// at its end for a flow that ends, the state so far for an active-timeout report.
    pub fn expire_ends(&mut self, now_ns: u64) -> impl Iterator<Item = FlowEnd> + '_ {
        let active = self.timeouts.active.map(|a| a.as_nanos() as u64);
        let mut slot = 0;
        std::iter::from_fn(move || {
            if let Some(e) = self.aside.evicted.pop() {
                return Some(e);
            }
            while slot < self.slots.len() {
                let i = slot;
                slot += 1;
                if self.tag(i) == EMPTY {
                    continue;
                }
                let s = &self.slots[i];
                if now_ns.saturating_sub(s.last_ns) > self.timeout(s).as_nanos() as u64 {
                    let end = if s.key.proto() == ipproto::TCP && s.closed() {
                        EndReason::EndOfFlow
                    } else {
                        EndReason::Idle
                    };
                    let tcp = take_state(&mut self.aside.tcp, i);
                    match self.remove(i, end) {
                        Some(record) => return Some(FlowEnd { record, tcp }),
                        None => continue,
                    }
                }
                if active.is_some_and(|a| {
                    s.packets[0] + s.packets[1] > 0 && now_ns.saturating_sub(s.first_ns) >= a
                }) {
                    let tcp = copy_state(&self.aside.tcp, i);
                    let record = self.report(i);
                    return Some(FlowEnd { record, tcp });
                }
            }
            None
        })
    }

    /// The records of flows evicted to make room ([`Tracked::evicted`]) since they were last
    /// taken, oldest first. They wait in the table until taken here or by [`FlowTable::expire`]
    /// or [`FlowTable::flush`] (which yield them first), up to
    /// [`FlowTableConfig::evicted_room`] of them: a caller that takes them at least every
    /// that many packets loses none; beyond it, records are dropped and counted
    /// ([`TableCounters::lost`]). Their TCP states, if the table follows them, go with them
    /// unread ([`FlowTable::pop_evicted_end`] hands out both).
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

    /// Removes and yields every flow (end of capture), after any evicted flow's record not
    /// yet taken. ([`FlowTable::flush_ends`] yields the flows' TCP states with them.)
    pub fn flush(&mut self) -> impl Iterator<Item = FlowRecord> + '_ {
        self.flush_ends().map(|e| e.record)
    }

    /// [`FlowTable::flush`], each record with its flow's TCP state ([`FlowEnd`]).
    pub fn flush_ends(&mut self) -> impl Iterator<Item = FlowEnd> + '_ {
        let mut slot = 0;
        std::iter::from_fn(move || {
            if let Some(e) = self.aside.evicted.pop() {
                return Some(e);
            }
            while slot < self.slots.len() {
                let i = slot;
                slot += 1;
                if self.tag(i) != EMPTY {
                    let tcp = take_state(&mut self.aside.tcp, i);
                    if let Some(record) = self.remove(i, EndReason::Flush) {
                        return Some(FlowEnd { record, tcp });
                    }
                }
            }
            None
        })
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

/// The records [`FlowTable::drain_evicted`] hands out, oldest first. Dropping it before the
/// end removes the rest from the table all the same.
#[derive(Debug)]
pub struct EvictedRecords<'a>(std::collections::vec_deque::Drain<'a, FlowRecord>);

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

#[cfg(test)]
mod test;
