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

mod config;
mod counters;
mod evicted;
mod expiry;
/// Bringing a line into the cache ahead of its use, without waiting for it.
mod fetch;
mod flow_table;
mod probe;
mod slot;
/// Which slots of a set hold `tag` (`matching`) or are free (`free`), as a 16-bit mask, bit
/// `i` for way `i`: [`tags::way`] is the lowest way in a mask, `mask & (mask - 1)` drops it.
/// On x86-64: one SSE2 compare and `movemask` (through `safe_arch`'s safe wrappers; SSE2 is
/// baseline there). Elsewhere: SWAR on the 16 bytes as one `u128` (bit 7 of each way's byte),
/// gathered into 16 bits with one multiply per half.
mod tags;
mod track;

pub use config::{FlowTableConfig, FlowTableError, DEFAULT_EVICTED_ROOM, TCP_STATE_BYTES};
pub use counters::TableCounters;
pub use evicted::{EvictedRecords, FlowEnd};
pub use flow_table::FlowTable;

#[cfg(test)]
mod test;
