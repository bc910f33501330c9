//! What a scrape reads: the capture's state at that moment ([`Sample`], made by the capture
//! on the server's thread) and the process' counts of rare events ([`EVENTS`]).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Counts of rare events, bumped where they happen. One zcap process runs one capture, so
/// one set of counters serves it.
pub(crate) struct Events {
    /// Bytes written (write(2) and writev(2)) to capture files or standard output; for a
    /// compressed file, the compressed bytes.
    pub(crate) written_bytes: AtomicU64,
    /// Capture files created (the one being written included).
    pub(crate) files: AtomicU64,
    /// `-z` commands started, and those that could not start or ended in failure.
    pub(crate) hooks_run: AtomicU64,
    pub(crate) hooks_failed: AtomicU64,
    /// Packets a compressor's writer had no room for (in no file).
    pub(crate) compressor_dropped: AtomicU64,
    /// IPFIX messages (and the flow records in them) that every destination took, and those
    /// that a destination refused (a send error, a failed file write).
    pub(crate) ipfix_messages_sent: AtomicU64,
    pub(crate) ipfix_records_sent: AtomicU64,
    pub(crate) ipfix_messages_failed: AtomicU64,
    pub(crate) ipfix_records_failed: AtomicU64,
}

/// The process' event counts.
pub(crate) static EVENTS: Events = Events {
    written_bytes: AtomicU64::new(0),
    files: AtomicU64::new(0),
    hooks_run: AtomicU64::new(0),
    hooks_failed: AtomicU64::new(0),
    compressor_dropped: AtomicU64::new(0),
    ipfix_messages_sent: AtomicU64::new(0),
    ipfix_records_sent: AtomicU64::new(0),
    ipfix_messages_failed: AtomicU64::new(0),
    ipfix_records_failed: AtomicU64::new(0),
};

/// Adds `n` to an event count.
#[inline]
pub(crate) fn add(counter: &AtomicU64, n: u64) {
    counter.fetch_add(n, Relaxed);
}

/// One shard at a scrape.
#[derive(Debug, Clone, Default)]
pub(crate) struct ShardSample {
    /// Kernel counters: packets that passed the filter, those dropped for want of room, and
    /// the times the queue froze.
    pub(crate) received: u64,
    pub(crate) kernel_dropped: u64,
    pub(crate) freezes: u64,
    /// Ring blocks zcap holds now, of `blocks`.
    pub(crate) blocks_held: u64,
    pub(crate) blocks: u64,
    /// Packets this shard handed to the output.
    pub(crate) captured: u64,
    /// Its flow table at its last tick (`None`: flows not tracked).
    pub(crate) flows: Option<FlowSample>,
}

/// A flow table's counters.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct FlowSample {
    pub(crate) active: u64,
    pub(crate) created: u64,
    pub(crate) evicted: u64,
    pub(crate) expired: u64,
    /// Evicted flows' records the table had no room to queue.
    pub(crate) lost: u64,
}

/// `--pcap-over-ip`'s server at a scrape.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ServedSample {
    pub(crate) clients: u64,
    pub(crate) cut_off: u64,
    pub(crate) dropped: u64,
    /// Connections refused, by reason (the `reason` label).
    pub(crate) rejected: [(&'static str, u64); 5],
}

/// The whole capture at a scrape.
#[derive(Debug, Clone, Default)]
pub(crate) struct Sample {
    pub(crate) shards: Vec<ShardSample>,
    /// Packets written, printed or counted (after `-c`), and their bytes on the wire.
    pub(crate) captured: u64,
    pub(crate) captured_bytes: u64,
    pub(crate) pcap_over_ip: Option<ServedSample>,
    /// The metrics endpoint's refused connections, by reason (filled in by the server).
    pub(crate) metrics_rejected: Vec<(&'static str, u64)>,
    /// IPFIX export on, files written.
    pub(crate) ipfix: bool,
    pub(crate) files: bool,
    /// `--kafka`: what became of the records.
    pub(crate) kafka: Option<crate::kafka::Counts>,
}
