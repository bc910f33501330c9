//! The pipeline's settings: how consumers receive packets ([`Delivery`]), how many there are
//! and where they run ([`Consumers`]), whether the stage steers by flow ([`Steering`]), and
//! the rest of a run's configuration ([`PipelineConfig`]).

use std::time::Duration;

use zcrx_flowcache::{FlowTableConfig, LinkType};

use crate::copy::{Copier, Routine};

/// How consumers receive packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// A reference into the ring; the block stays leased while the handler runs.
    ZeroCopy,
    /// A copy into the consumer's own arena made with this routine; the lease is released
    /// before the handler runs (the user-space analogue of `copy_to_user`).
    Copy(Routine),
}

impl Delivery {
    /// The copier a pipeline over blocks of `block_size` bytes uses for this delivery (none
    /// for zero-copy): a consumer reads its copies back right after they are made, at most a
    /// block's worth (threaded: one batch; inline: one packet) written in between, so that
    /// is the destination's reuse distance ([`Copier::for_destination`]).
    pub fn copier(&self, block_size: usize) -> Result<Option<Copier>, crate::copy::Unsupported> {
        match *self {
            Delivery::ZeroCopy => Ok(None),
            Delivery::Copy(r) => Copier::for_destination(r, block_size).map(Some),
        }
    }

    /// Every delivery mode: zero-copy, then each copy routine (the one list; tools and
    /// benches iterate it).
    pub const ALL: [Delivery; 7] = [
        Delivery::ZeroCopy,
        Delivery::Copy(Routine::Libc),
        Delivery::Copy(Routine::Erms),
        Delivery::Copy(Routine::Avx2),
        Delivery::Copy(Routine::Avx512),
        Delivery::Copy(Routine::NonTemporal),
        Delivery::Copy(Routine::Auto),
    ];

    /// The names of [`Delivery::ALL`], comma-separated (help and error messages).
    pub fn names() -> String {
        Delivery::ALL.map(|d| d.name()).join(", ")
    }

    /// `zerocopy`, `copy-libc`, `copy-erms`, `copy-avx2`, `copy-avx512`, `copy-nt`, `copy-auto`.
    pub fn name(&self) -> String {
        match self {
            Delivery::ZeroCopy => "zerocopy".into(),
            Delivery::Copy(r) => format!("copy-{}", r.name()),
        }
    }
    /// Parses [`Delivery::name`].
    pub fn from_name(s: &str) -> Option<Delivery> {
        if s == "zerocopy" {
            return Some(Delivery::ZeroCopy);
        }
        Routine::from_name(s.strip_prefix("copy-")?).map(Delivery::Copy)
    }
}

/// How many consumers, and where they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Consumers {
    /// One consumer on the stage thread: no queue, no lease, no second thread. For
    /// one-consumer users such as a sniffer writing a file.
    Inline,
    /// `count` consumer threads (1..=1024), each owning the flows whose keyed hash maps to
    /// it, each with a queue of `queue_depth` batches (bounded memory: a full queue stops the
    /// stage).
    Threads {
        /// Consumer threads.
        count: usize,
        /// Batches queued per consumer before the stage waits.
        queue_depth: usize,
    },
}

impl Consumers {
    /// `count` consumer threads with queues of 16 batches.
    pub fn threads(count: usize) -> Self {
        Consumers::Threads {
            count,
            queue_depth: 16,
        }
    }
    /// How many consumers.
    pub fn count(&self) -> usize {
        match self {
            Consumers::Inline => 1,
            Consumers::Threads { count, .. } => *count,
        }
    }
}

/// Whether the stage reads headers to steer packets by flow.
#[derive(Debug, Clone, Copy)]
pub enum Steering {
    /// Extract every packet's 5-tuple, track it in a flow table of this configuration, and
    /// deliver it to the consumer that owns the flow.
    Flows(FlowTableConfig),
    /// Read no headers: every packet goes to consumer 0 untouched (one consumer only). For
    /// users that need no flows, such as a sniffer writing a file: the stage then costs a
    /// few ns per packet.
    Off,
}

/// Pipeline settings.
#[derive(Debug, Clone)]
pub struct PipelineConfig {
    /// Consumers and where they run.
    pub consumers: Consumers,
    /// Zero-copy or copied delivery.
    pub delivery: Delivery,
    /// Flow steering.
    pub steering: Steering,
    /// Link type of the frames (Ethernet for AF_PACKET on Ethernet and veth).
    pub link: LinkType,
    /// Stop after this many packets.
    pub max_packets: Option<u64>,
    /// How long one wait for a block may take before the stop token is checked again.
    pub poll_timeout: Duration,
    /// Expire idle flows every this much packet time.
    pub expire_every: Duration,
    /// Flow time follows the system clock while no packet arrives (for live sources, whose
    /// packets carry the system clock's time; off for files, whose time is their own).
    pub clock_when_quiet: bool,
    /// Call the tick hook ([`Hooks::on_tick`](crate::Hooks::on_tick)) this often (wall time), even when no packet
    /// arrives.
    pub tick_every: Duration,
}

impl Default for PipelineConfig {
    fn default() -> Self {
        PipelineConfig {
            consumers: Consumers::threads(1),
            delivery: Delivery::ZeroCopy,
            // The table's memory on transparent huge pages (if the kernel has them).
            steering: Steering::Flows(
                FlowTableConfig::default().with_prepare_memory(Some(zcrx_ring::advise_huge_pages)),
            ),
            link: LinkType::Ethernet,
            max_packets: None,
            poll_timeout: Duration::from_millis(100),
            expire_every: Duration::from_secs(1),
            clock_when_quiet: false,
            tick_every: Duration::from_secs(1),
        }
    }
}
