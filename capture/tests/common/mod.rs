//! Helpers shared by the library's integration tests: a pipeline consumer that only counts.
#![allow(dead_code)] // each test file uses its own subset

use std::sync::atomic::{AtomicU64, Ordering};

use zcrx_capture::Delivered;

/// A pipeline consumer that counts every packet it is handed into `count` (any thread's).
pub fn counting(count: &AtomicU64) -> impl FnMut(&Delivered<'_>) + Send + '_ {
    move |_| {
        count.fetch_add(1, Ordering::Relaxed);
    }
}
