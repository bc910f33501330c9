//! What a table is made with: its configuration, and why a table could not be made.

use super::slot::Slot;
use super::tags::WAYS;
use crate::record::{Timeouts, MAX_CAPACITY};
use crate::tcp_state::TcpState;

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
    ///
    /// [`FlowTable::drain_evicted`]: crate::FlowTable::drain_evicted
    /// [`TableCounters::lost`]: crate::TableCounters::lost
    pub evicted_room: usize,
    /// The table holds a [`TcpState`] per slot, moved by [`FlowTable::observe_tcp`] and
    /// handed out with each flow's record ([`FlowEnd`]: [`FlowTable::pop_evicted_end`],
    /// [`FlowTable::expire_ends`], [`FlowTable::flush_ends`]). Off by default: the states
    /// cost [`TCP_STATE_BYTES`] a slot, allocated with the table, and [`FlowTable::track`]
    /// is the same either way.
    ///
    /// [`FlowTable::observe_tcp`]: crate::FlowTable::observe_tcp
    /// [`FlowEnd`]: crate::FlowEnd
    /// [`FlowTable::pop_evicted_end`]: crate::FlowTable::pop_evicted_end
    /// [`FlowTable::expire_ends`]: crate::FlowTable::expire_ends
    /// [`FlowTable::flush_ends`]: crate::FlowTable::flush_ends
    /// [`FlowTable::track`]: crate::FlowTable::track
    pub tcp_state: bool,
}

impl FlowTableConfig {
    /// The default configuration with room for `capacity` flows: rounded up to a power of
    /// two of at least 16 (one set of ways), at most [`MAX_CAPACITY`] (checked by
    /// [`FlowTable::new`](crate::FlowTable::new) and [`FlowTableConfig::check`]).
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
    ///
    /// [`FlowTable::new`]: crate::FlowTable::new
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

/// Why [`FlowTable::new`](crate::FlowTable::new) made no table.
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
