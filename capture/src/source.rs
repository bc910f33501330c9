//! Where the pipeline's blocks come from: a live ring or a synthetic one, through one trait.

use std::time::{Duration, Instant};

use zcrx_ring::{Block, BlockMap, RingError, RingStats, RxRing, SyntheticRing};

/// A ring the stage can read blocks from: [`RxRing`] (live), [`SyntheticRing`] (frames in
/// memory, or streamed from a file: [`pcapfile::FileRing`](crate::pcapfile::FileRing)).
///
/// The trait is sealed: the stage's promises (every block handed back to the ring on every
/// exit, at most one ring's worth taken after a stop, leases counted by the
/// [`BlockMap`]) rest on how zcrx-ring makes and releases its [`Block`]s, and only
/// zcrx-ring can make a `Block`, so a source from outside could not keep them. Frames from
/// anywhere reach a pipeline through a [`SyntheticRing`] (its feeder, or
/// [`pcapfile::FileRing`](crate::pcapfile::FileRing) for files).
pub trait BlockSource: Sync + sealed::Sealed {
    /// The next block in ring order, waiting up to `timeout`; `Ok(None)` if none came.
    fn next_block(&self, timeout: Duration) -> Result<Option<Block<'_>>, RingError>;
    /// No block will ever come again (a synthetic ring read to its end).
    fn exhausted(&self) -> bool {
        false
    }
    /// How long the kernel may still take to hand over packets it already received (a live
    /// ring's block retire timeout, with a margin for the timer): what a stop waits for before
    /// it ends the run, so that the last packets are not left in a half-filled block.
    fn retire_wait(&self) -> Duration {
        Duration::ZERO
    }
    /// Kernel counters, where there is a kernel.
    fn kernel_stats(&self) -> Result<Option<RingStats>, RingError> {
        Ok(None)
    }
    /// The ring memory.
    fn block_map(&self) -> &BlockMap;
    /// The frames' link type where the source knows it (a file's); a pipeline whose
    /// configuration names none takes it.
    fn link_type(&self) -> Option<zcrx_flowcache::LinkType> {
        None
    }
}

pub(crate) mod sealed {
    /// Implemented by the sources of this crate only (see [`BlockSource`](super::BlockSource)).
    pub trait Sealed {}
    impl Sealed for zcrx_ring::RxRing {}
    impl Sealed for zcrx_ring::SyntheticRing {}
}

impl BlockSource for RxRing {
    fn next_block(&self, timeout: Duration) -> Result<Option<Block<'_>>, RingError> {
        RxRing::next_block(self, timeout)
    }
    fn retire_wait(&self) -> Duration {
        // The retire timer runs in jiffies (up to 10 ms each at HZ=100).
        self.block_timeout() + Duration::from_millis(20)
    }
    fn kernel_stats(&self) -> Result<Option<RingStats>, RingError> {
        self.stats().map(Some)
    }
    fn block_map(&self) -> &BlockMap {
        self.map()
    }
}

impl BlockSource for SyntheticRing {
    fn next_block(&self, timeout: Duration) -> Result<Option<Block<'_>>, RingError> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(b) = SyntheticRing::next_block(self) {
                return Ok(Some(b));
            }
            // The next block is still leased by a consumer (or the ring is read out).
            if self.is_exhausted() || Instant::now() >= deadline {
                return Ok(None);
            }
            std::thread::yield_now();
        }
    }
    fn exhausted(&self) -> bool {
        self.is_exhausted()
    }
    fn block_map(&self) -> &BlockMap {
        self.map()
    }
}
