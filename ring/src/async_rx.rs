//! Async receive on tokio (feature `tokio`): [`AsyncRxRing`] owns the ring's registration
//! with tokio's reactor (`AsyncFd`), so no caller writes `unsafe` or touches the fd.
//!
//! Two ways to read:
//! - [`AsyncRxRing::next_block`]: the next [`Block`], zero-copy, lent from the ring; it goes
//!   back to the kernel when dropped. It may be held across `.await`s (the kernel fills the
//!   other blocks meanwhile; only when it comes round to a block still held does it wait,
//!   and then it drops packets, counted in [`RxRing::stats`]).
//! - [`AsyncRxRing::batches`]: a `Stream` of [`OwnedBatch`]es, each block's packets copied
//!   out and the block handed back at once: owned data for tasks that must be `Send +
//!   'static`, at the price of a copy.
//!
//! Readiness: the kernel wakes the socket when it closes a block (full, or by the retire
//! timer), so a block is seen at most the ring's block timeout after its first packet.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use tokio::io::unix::AsyncFd;

use crate::block::PacketMeta;
use crate::error::RingError;
use crate::mem::Block;
use crate::rx::RxRing;
use crate::stats::RingStats;

/// An [`RxRing`] registered with the current tokio runtime's reactor.
///
/// The reactor watches a duplicate of the ring's socket (`dup`: the same socket, so the
/// same wake-ups), owned here and closed with it.
#[derive(Debug)]
pub struct AsyncRxRing {
    /// Deregistered and closed first.
    fd: AsyncFd<OwnedFd>,
    ring: RxRing,
}

impl AsyncRxRing {
    /// Registers `ring` with the reactor of the tokio runtime this is called in; an error
    /// outside a runtime.
    ///
    /// # Panics
    /// In a runtime built without IO (`Builder::enable_io`), as tokio's own sockets do.
    pub fn new(ring: RxRing) -> Result<Self, RingError> {
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(RingError::sys(
                "registering with tokio (call AsyncRxRing::new inside a tokio runtime)",
                ring.iface(),
                io::Error::other("no tokio runtime on this thread"),
            ));
        }
        let fd = ring
            .as_fd()
            .try_clone_to_owned()
            .and_then(crate::sys::register_readable)
            .map_err(|e| {
                RingError::sys("registering with tokio (dup, epoll_ctl)", ring.iface(), e)
            })?;
        Ok(AsyncRxRing { fd, ring })
    }

    /// The ring (statistics, geometry, the synchronous [`RxRing::next_block`]).
    pub fn get_ref(&self) -> &RxRing {
        &self.ring
    }

    /// Deregisters the ring from the reactor and returns it.
    pub fn into_inner(self) -> RxRing {
        self.ring
    }

    /// Kernel statistics accumulated since the ring was opened ([`RxRing::stats`]): the
    /// drops a held block or a slow reader caused.
    pub fn stats(&self) -> Result<RingStats, RingError> {
        self.get_ref().stats()
    }

    /// The next block in ring order, zero-copy: it borrows the ring and returns to the
    /// kernel when dropped. Several tasks may wait on one ring (each gets a different block).
    ///
    /// Cancel safe: a block is taken only in the poll that returns it, so dropping the
    /// future (in `select!`, or by a timeout) loses no block and no packet.
    pub async fn next_block(&self) -> Result<Block<'_>, RingError> {
        std::future::poll_fn(|cx| self.poll_next_block(cx)).await
    }

    /// [`AsyncRxRing::next_block`] as a poll: `Ready` with the next block, or `Pending` with
    /// `cx` woken when the kernel closes one.
    pub fn poll_next_block(&self, cx: &mut Context<'_>) -> Poll<Result<Block<'_>, RingError>> {
        loop {
            let mut guard = ready!(self.fd.poll_read_ready(cx))
                .map_err(|e| RingError::sys("poll (tokio)", self.get_ref().iface(), e))?;
            // A non-blocking try: no wait, no syscall when a block is ready.
            if let Some(block) = self.get_ref().next_block(Duration::ZERO)? {
                return Poll::Ready(Ok(block));
            }
            // Nothing ready: forget this readiness unless the kernel woke the socket since
            // it was seen (tokio keeps that event), then wait for the next wake-up.
            guard.clear_ready();
        }
    }

    /// A `Stream` of the ring's blocks as owned batches (see [`Batches`]).
    pub fn batches(self: Arc<Self>) -> Batches {
        Batches { ring: self }
    }
}

/// One packet copied out of the ring: its bytes and header facts.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct OwnedPacket {
    /// The captured bytes (`tp_snaplen` of them, from the link-layer header on).
    pub data: Vec<u8>,
    /// Header facts (length on the wire, timestamp, VLAN, direction).
    pub meta: PacketMeta,
}

/// The packets of one block, copied out; the block went back to the kernel when the batch
/// was made.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct OwnedBatch {
    /// The block's packets, in ring order.
    pub packets: Vec<OwnedPacket>,
    /// The block's sequence number (`seq_num`).
    pub seq_num: u64,
    /// The kernel had dropped packets when it closed the block ([`Block::losing`]).
    pub losing: bool,
}

/// A `Stream` (futures-core) of [`OwnedBatch`]es, one per non-empty block, from
/// [`AsyncRxRing::batches`]. `Send + 'static`: it holds the ring by `Arc`.
///
/// A malformed block (a header that does not hold together) is one `Err`
/// ([`RingError::Malformed`]), and the stream goes on with the next block. It never ends by
/// itself.
///
/// Cancel safe: a block is copied and handed back in the poll that returns its batch, so a
/// `next()` dropped before it completes loses nothing.
#[derive(Debug, Clone)]
pub struct Batches {
    ring: Arc<AsyncRxRing>,
}

impl Batches {
    /// The ring behind the stream.
    pub fn ring(&self) -> &Arc<AsyncRxRing> {
        &self.ring
    }
}

/// Copies a block's packets out.
fn own(block: &Block<'_>) -> Result<OwnedBatch, RingError> {
    let view = block.view()?;
    let packets = view
        .packets()
        .map(|p| {
            p.map(|p| OwnedPacket {
                data: p.data().to_vec(),
                meta: *p.meta(),
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(OwnedBatch {
        packets,
        seq_num: view.seq_num(),
        losing: view.losing(),
    })
}

impl futures_core::Stream for Batches {
    type Item = Result<OwnedBatch, RingError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        loop {
            let block = ready!(self.ring.poll_next_block(cx))?;
            let batch = own(&block);
            drop(block);
            match batch {
                Ok(b) if b.packets.is_empty() => continue,
                other => return Poll::Ready(Some(other)),
            }
        }
    }
}
