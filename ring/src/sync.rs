//! The atomics of the block life cycle: std's, or loom's when built with `--cfg loom` so
//! that the same code runs in the loom models (`src/lifecycle.rs`).

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{fence, AtomicBool, AtomicU32};
pub(crate) use std::sync::atomic::Ordering;
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{fence, AtomicBool, AtomicU32};
