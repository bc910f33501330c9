//! What a table did since it was made.

/// What a table did since it was made ([`FlowTable::counters`]): for metrics and reports.
/// Kept off the path of a packet of a known flow (only insertions and removals count).
///
/// [`FlowTable::counters`]: crate::FlowTable::counters
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TableCounters {
    /// Flows inserted.
    pub created: u64,
    /// Flows removed to make room for a new one ([`EndReason::Evicted`]).
    ///
    /// [`EndReason::Evicted`]: crate::EndReason::Evicted
    pub evicted: u64,
    /// Flows removed by their idle timeout, or after FIN/RST and a quiet spell
    /// ([`EndReason::Idle`], [`EndReason::EndOfFlow`]).
    ///
    /// [`EndReason::Idle`]: crate::EndReason::Idle
    /// [`EndReason::EndOfFlow`]: crate::EndReason::EndOfFlow
    pub expired: u64,
    /// Flows removed by [`FlowTable::flush`](crate::FlowTable::flush).
    pub flushed: u64,
    /// Evicted flows' records dropped because the queue of records not yet taken was full
    /// ([`FlowTableConfig::evicted_room`]; the evictions are counted in `evicted` too).
    ///
    /// [`FlowTableConfig::evicted_room`]: crate::FlowTableConfig::evicted_room
    pub lost: u64,
}
