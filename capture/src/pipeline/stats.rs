//! What a run counts and returns.

use zcrx_ring::RingStats;

/// Counters of one consumer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConsumerStats {
    /// Packets handled.
    pub packets: u64,
    /// Captured bytes handled.
    pub bytes: u64,
    /// Batches received.
    pub batches: u64,
}

/// Counters of a run.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct PipelineStats {
    /// Each consumer's counters, by consumer index.
    pub consumers: Vec<ConsumerStats>,
    /// Packets the stage took from the ring (= delivered, once `run` returned).
    pub packets: u64,
    /// Blocks taken.
    pub blocks: u64,
    /// Batches sent.
    pub batches: u64,
    /// Times a consumer's queue was full and the stage had to wait.
    pub queue_full: u64,
    /// Time the stage spent walking, extracting, tracking and batching (not waiting).
    pub stage_ns: u64,
    /// Frames without an IP flow (sent to consumer 0).
    pub non_ip: u64,
    /// Blocks whose headers failed validation (their valid prefix was delivered).
    pub bad_blocks: u64,
    /// Flows created.
    pub flows_created: u64,
    /// Evicted flows' records the table dropped because its queue of records was full
    /// ([`TableCounters::lost`](zcrx_flowcache::TableCounters::lost)): none while the table
    /// has room for a block's packets, as the pipeline gives it.
    pub flows_lost: u64,
    /// Most blocks held at once (withheld from the kernel).
    pub max_blocks_held: usize,
    /// Kernel counters at the end, for a live ring.
    pub kernel: Option<RingStats>,
    /// The copy routine, as chosen (`describe()`), for copy delivery.
    pub copier: Option<String>,
}

impl PipelineStats {
    /// Stage nanoseconds per packet.
    pub fn stage_ns_per_packet(&self) -> f64 {
        if self.packets == 0 {
            0.0
        } else {
            self.stage_ns as f64 / self.packets as f64
        }
    }
}

/// What a run returns: each consumer's result, in consumer order, and the counters.
#[derive(Debug)]
#[non_exhaustive]
pub struct Run<O> {
    /// `Consumer::finish` of consumer 0, 1, ...
    pub outputs: Vec<O>,
    /// Counters of the run.
    pub stats: PipelineStats,
}
