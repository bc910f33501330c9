//! Why a run failed.

use zcrx_ring::RingError;

use crate::copy::Unsupported;

/// Errors of [`Pipeline::run`](crate::Pipeline::run) and of a spawned run
/// ([`RunHandle::join`](crate::RunHandle::join)). Settings are checked before any run, when
/// the configuration is built ([`ConfigError`](crate::ConfigError)).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PipelineError {
    /// The ring failed (interface gone, ...).
    #[error(transparent)]
    Ring(#[from] RingError),
    /// The copy routine cannot run on this CPU.
    #[error(transparent)]
    Copy(#[from] Unsupported),
    /// A setting refused when the run starts: [`PipelineConfigBuilder::build`](crate::PipelineConfigBuilder::build)
    /// checks every setting, so what is left is a flow table whose memory the allocator
    /// refuses ([`FlowTableError::Alloc`](zcrx_flowcache::FlowTableError::Alloc)).
    #[error(transparent)]
    Config(#[from] crate::ConfigError),
    /// The thread of a spawned run could not be started.
    #[error("cannot start the pipeline's thread: {0}")]
    Spawn(#[source] std::io::Error),
    /// A consumer's handler panicked. The run stopped, every block went back to the ring,
    /// and the ring can be read again.
    #[error("consumer {consumer} panicked: {message}")]
    ConsumerPanicked {
        /// The consumer's index (0-based, as `Pipeline::run`'s `make_consumer` was called with it).
        consumer: usize,
        /// The panic message.
        message: String,
    },
    /// A callback on the stage thread (flow end, tick) panicked; the run stopped as for a
    /// consumer panic.
    #[error("the {callback} callback panicked: {message}")]
    CallbackPanicked {
        /// `flow-end` or `tick`; `setup` for a spawned run's `make_consumer` or
        /// `make_hooks` ([`Pipeline::spawn`](crate::Pipeline::spawn)).
        callback: &'static str,
        /// The panic message.
        message: String,
    },
}
