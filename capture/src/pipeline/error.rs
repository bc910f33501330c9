//! Why a run failed.

use zcrx_ring::RingError;

use crate::copy::Unsupported;

/// Errors of [`Pipeline::run`](crate::Pipeline::run).
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    /// The ring failed (interface gone, ...).
    #[error(transparent)]
    Ring(#[from] RingError),
    /// The copy routine cannot run on this CPU.
    #[error(transparent)]
    Copy(#[from] Unsupported),
    /// A setting is out of range.
    #[error("invalid pipeline setting {field}: {reason}")]
    Config {
        /// The setting's name (a [`PipelineConfig`](crate::PipelineConfig) field).
        field: &'static str,
        /// What is wrong with the value (the range or rule it breaks).
        reason: String,
    },
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
        /// `flow-end` or `tick`.
        callback: &'static str,
        /// The panic message.
        message: String,
    },
}
