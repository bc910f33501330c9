//! zcrx-capture: the pipeline (a header-only stage steering packets per flow to consumer
//! threads, zero-copy or copied delivery) and the copy routines.
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs, clippy::undocumented_unsafe_blocks)]

pub mod copy;
