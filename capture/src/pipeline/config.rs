//! The pipeline's settings: how consumers receive packets ([`Delivery`]), how many there are
//! and where they run ([`Consumers`]), whether the stage steers by flow ([`Steering`]), and
//! the rest of a run's configuration ([`PipelineConfig`], built and checked by
//! [`PipelineConfigBuilder`]: a configuration that exists is one a pipeline can run).

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use zcrx_flowcache::{FlowTableConfig, LinkType};

use crate::copy::{Copier, Routine, UnknownName};

/// How consumers receive packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
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
    /// Parses [`Delivery::name`] (what [`str::parse`] does, without the error).
    pub fn from_name(s: &str) -> Option<Delivery> {
        if s == "zerocopy" {
            return Some(Delivery::ZeroCopy);
        }
        Routine::from_name(s.strip_prefix("copy-")?).map(Delivery::Copy)
    }
}

impl fmt::Display for Delivery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

impl FromStr for Delivery {
    type Err = UnknownName;
    /// Parses [`Delivery::name`]; the error lists the names there are.
    fn from_str(s: &str) -> Result<Self, UnknownName> {
        Delivery::from_name(s)
            .ok_or_else(|| UnknownName::new("delivery", s, Delivery::ALL.map(|d| d.name())))
    }
}

/// How many consumers, and where they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
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
    /// `count` consumer threads with queues of `queue_depth` batches (checked when the
    /// configuration is built: [`PipelineConfigBuilder::build`]).
    pub fn threads_with_queue(count: usize, queue_depth: usize) -> Self {
        Consumers::Threads { count, queue_depth }
    }
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
#[non_exhaustive]
pub enum Steering {
    /// Extract every packet's 5-tuple, track it in a flow table of this configuration, and
    /// deliver it to the consumer that owns the flow.
    Flows(FlowTableConfig),
    /// Read no headers: every packet goes to consumer 0 untouched (one consumer only). For
    /// users that need no flows, such as a sniffer writing a file: the stage then costs a
    /// few ns per packet.
    Off,
}

/// The most consumer threads a pipeline runs.
pub const MAX_CONSUMERS: usize = 1024;

/// Pipeline settings, made by [`PipelineConfig::builder`] (or [`PipelineConfig::default`]):
/// every value of this type passed the builder's checks, so a pipeline refuses none of its
/// settings when it runs (only a flow table whose memory the allocator refuses).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct PipelineConfig {
    pub(crate) consumers: Consumers,
    pub(crate) delivery: Delivery,
    pub(crate) steering: Steering,
    pub(crate) link: LinkType,
    /// `link` named by the caller: it wins over the source's ([`BlockSource::link_type`]).
    pub(crate) link_set: bool,
    pub(crate) max_packets: Option<u64>,
    pub(crate) duration: Option<Duration>,
    pub(crate) poll_timeout: Duration,
    pub(crate) expire_every: Duration,
    pub(crate) clock_when_quiet: bool,
    pub(crate) tick_every: Duration,
}

impl Default for PipelineConfig {
    /// One consumer thread, zero-copy, flows steered by a default table (its memory on
    /// transparent huge pages, if the kernel has them), Ethernet frames, no packet or time
    /// limit, a 100 ms poll, flows expired and the tick hook called every second.
    fn default() -> Self {
        PipelineConfig {
            consumers: Consumers::threads(1),
            delivery: Delivery::ZeroCopy,
            // The table's memory on transparent huge pages (if the kernel has them).
            steering: Steering::Flows(
                FlowTableConfig::default().with_prepare_memory(Some(zcrx_ring::advise_huge_pages)),
            ),
            link: LinkType::Ethernet,
            link_set: false,
            max_packets: None,
            duration: None,
            poll_timeout: Duration::from_millis(100),
            expire_every: Duration::from_secs(1),
            clock_when_quiet: false,
            tick_every: Duration::from_secs(1),
        }
    }
}

impl PipelineConfig {
    /// A builder starting from [`PipelineConfig::default`].
    pub fn builder() -> PipelineConfigBuilder {
        PipelineConfigBuilder(PipelineConfig::default())
    }
    /// A builder starting from this configuration (to change a setting or two).
    pub fn to_builder(&self) -> PipelineConfigBuilder {
        PipelineConfigBuilder(self.clone())
    }
    /// Consumers and where they run.
    pub fn consumers(&self) -> Consumers {
        self.consumers
    }
    /// Zero-copy or copied delivery.
    pub fn delivery(&self) -> Delivery {
        self.delivery
    }
    /// Flow steering.
    pub fn steering(&self) -> &Steering {
        &self.steering
    }
    /// Link type of the frames.
    pub fn link(&self) -> LinkType {
        self.link
    }
    /// The run stops after this many packets.
    pub fn max_packets(&self) -> Option<u64> {
        self.max_packets
    }
    /// The run stops this long after it started (as a stop token would stop it).
    pub fn duration(&self) -> Option<Duration> {
        self.duration
    }
    /// How long one wait for a block may take before the stop token is checked again.
    pub fn poll_timeout(&self) -> Duration {
        self.poll_timeout
    }
    /// Idle flows are expired every this much packet time.
    pub fn expire_every(&self) -> Duration {
        self.expire_every
    }
    /// Flow time follows the system clock while no packet arrives.
    pub fn clock_when_quiet(&self) -> bool {
        self.clock_when_quiet
    }
    /// The tick hook is called this often (wall time).
    pub fn tick_every(&self) -> Duration {
        self.tick_every
    }
}

/// Builds a [`PipelineConfig`]; [`build`](PipelineConfigBuilder::build) checks the settings
/// together and says which one is wrong ([`ConfigError`]).
///
/// ```
/// use zcrx_capture::{Consumers, Delivery, PipelineConfig};
/// let config = PipelineConfig::builder()
///     .consumers(Consumers::threads(2))
///     .delivery("copy-libc".parse()?)
///     .max_packets(1000)
///     .build()?;
/// assert_eq!(config.consumers().count(), 2);
/// assert!(PipelineConfig::builder().consumers(Consumers::threads(0)).build().is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct PipelineConfigBuilder(PipelineConfig);

impl Default for PipelineConfigBuilder {
    fn default() -> Self {
        PipelineConfig::builder()
    }
}

impl PipelineConfigBuilder {
    /// Consumers and where they run (default: one thread).
    pub fn consumers(mut self, consumers: Consumers) -> Self {
        self.0.consumers = consumers;
        self
    }
    /// Zero-copy or copied delivery (default: zero-copy).
    pub fn delivery(mut self, delivery: Delivery) -> Self {
        self.0.delivery = delivery;
        self
    }
    /// Flow steering (default: flows, in a default table).
    pub fn steering(mut self, steering: Steering) -> Self {
        self.0.steering = steering;
        self
    }
    /// Link type of the frames. Without it, the source's where the source knows it (a
    /// [`FileRing`](crate::pcapfile::FileRing): the file's), else Ethernet (as AF_PACKET
    /// reads Ethernet and veth; a cooked ring's frames need [`LinkType::LinuxSll`] here).
    pub fn link(mut self, link: LinkType) -> Self {
        self.0.link = link;
        self.0.link_set = true;
        self
    }
    /// Stop after this many packets.
    pub fn max_packets(mut self, packets: u64) -> Self {
        self.0.max_packets = Some(packets);
        self
    }
    /// Stop after this many packets, or not (`None`, the default).
    pub fn max_packets_opt(mut self, packets: Option<u64>) -> Self {
        self.0.max_packets = packets;
        self
    }
    /// Stop this long after the run starts, as a stop token would: the blocks the kernel
    /// already filled are still delivered. Checked between blocks, so the run ends within
    /// about one poll timeout of it.
    pub fn run_for(mut self, duration: Duration) -> Self {
        self.0.duration = Some(duration);
        self
    }
    /// How long one wait for a block may take before the stop token is checked again
    /// (default: 100 ms; must not be zero).
    pub fn poll_timeout(mut self, timeout: Duration) -> Self {
        self.0.poll_timeout = timeout;
        self
    }
    /// Expire idle flows every this much packet time (default: 1 s; must not be zero).
    pub fn expire_every(mut self, every: Duration) -> Self {
        self.0.expire_every = every;
        self
    }
    /// Flow time follows the system clock while no packet arrives: on for live sources,
    /// whose packets carry the system clock's time; off (the default) for files, whose
    /// time is their own.
    pub fn clock_when_quiet(mut self, on: bool) -> Self {
        self.0.clock_when_quiet = on;
        self
    }
    /// Call the tick hook ([`Hooks::on_tick`](crate::Hooks::on_tick)) this often (wall
    /// time), even when no packet arrives (default: 1 s; must not be zero).
    pub fn tick_every(mut self, every: Duration) -> Self {
        self.0.tick_every = every;
        self
    }

    /// Checks the settings: the configuration, or the first setting that is wrong.
    pub fn build(self) -> Result<PipelineConfig, ConfigError> {
        let c = self.0;
        if let Consumers::Threads { count, queue_depth } = c.consumers {
            if count == 0 || count > MAX_CONSUMERS {
                return Err(ConfigError::ConsumerCount { count });
            }
            if queue_depth == 0 {
                return Err(ConfigError::ZeroQueueDepth);
            }
        }
        if let Steering::Flows(table) = &c.steering {
            table.check()?;
        }
        if matches!(c.steering, Steering::Off) && c.consumers.count() > 1 {
            return Err(ConfigError::UnsteeredConsumers {
                consumers: c.consumers.count(),
            });
        }
        for (value, setting) in [
            (c.poll_timeout, Setting::PollTimeout),
            (c.expire_every, Setting::ExpireEvery),
            (c.tick_every, Setting::TickEvery),
        ] {
            if value.is_zero() {
                return Err(ConfigError::ZeroInterval(setting));
            }
        }
        Ok(c)
    }
}

/// A pipeline setting that is an interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Setting {
    /// [`PipelineConfigBuilder::poll_timeout`].
    PollTimeout,
    /// [`PipelineConfigBuilder::expire_every`].
    ExpireEvery,
    /// [`PipelineConfigBuilder::tick_every`].
    TickEvery,
}

impl fmt::Display for Setting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Setting::PollTimeout => "poll_timeout",
            Setting::ExpireEvery => "expire_every",
            Setting::TickEvery => "tick_every",
        })
    }
}

/// Why [`PipelineConfigBuilder::build`] refused the settings.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// Consumer threads out of range.
    #[error("{count} consumer threads: there must be 1 to {MAX_CONSUMERS}")]
    ConsumerCount {
        /// The count asked for.
        count: usize,
    },
    /// Consumer queues of no batch.
    #[error("a consumer queue depth of 0: each queue must hold at least one batch")]
    ZeroQueueDepth,
    /// [`Steering::Off`] with more than one consumer.
    #[error(
        "steering off sends every packet to consumer 0, so it needs exactly one consumer, \
         not {consumers}"
    )]
    UnsteeredConsumers {
        /// The consumers asked for.
        consumers: usize,
    },
    /// An interval of zero (a busy loop, or a division by zero).
    #[error("{0} must be longer than zero")]
    ZeroInterval(Setting),
    /// A flow table configuration the table refuses ([`Steering::Flows`]).
    #[error(transparent)]
    FlowTable(#[from] zcrx_flowcache::FlowTableError),
}
