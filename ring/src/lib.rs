//! zcrx-ring: the kernel interface of zcrx.
//!
//! - [`RxRing`]: an AF_PACKET TPACKET_V3 receive ring, mapped into the process, with fanout,
//!   a classic BPF filter, snaplen, promiscuous mode and accumulated kernel statistics.
//! - [`Block`], [`Packet`]: a block taken from the ring and its validated packets.
//! - [`Lease`], [`PacketRef`], [`Batch`]: shares of a block that can travel to other threads
//!   (scoped threads); the block returns to the kernel when the last share is dropped.
//! - `AsyncRxRing` (feature `tokio`): the receive ring on tokio's reactor, blocks lent
//!   zero-copy by `next_block().await` and a `Stream` of owned batches.
//! - [`TxRing`]: PACKET_TX_RING with qdisc bypass, for traffic generation.
//! - [`SyntheticRing`]: the same block format built in memory, read by the same walker.
//! - `lab` and `frames` (feature `test-support`): a network-namespace lab and test traffic;
//!   `counting_allocator!`, the no-allocation tests' counting global allocator.
//!
//! ```no_run
//! # fn main() -> Result<(), zcrx_ring::RingError> {
//! use std::time::Duration;
//! let ring = zcrx_ring::RxRing::builder("eth0").build()?;
//! while let Some(block) = ring.next_block(Duration::from_millis(100))? {
//!     for packet in block.packets() {
//!         let packet = packet?; // a malformed block is an error (RingError::Malformed)
//!         println!("{} bytes at {} ns", packet.wire_len(), packet.ts_ns());
//!     }
//! } // each block goes back to the kernel as it is dropped
//! # Ok(()) }
//! ```
//!
//! Loopback: on `lo` every packet is seen twice, once as this host sent it
//! ([`Direction::Outgoing`]) and once as it received it ([`Direction::Host`]), unless the
//! ring is built with [`RxRingBuilder::ignore_outgoing`] (which holds in fanout groups too)
//! or the consumer skips [`PacketMeta::direction`] `== Outgoing`.
//!
//! Drops: [`RxRing::stats`] counts them; a block closed while drops were unread says so with
//! [`BlockView::losing`] / [`Block::losing`].
// docs.rs (`--cfg docsrs`, nightly): mark what a feature gates.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs, clippy::undocumented_unsafe_blocks)]

// The crate README's code is compiled as a doctest, so what it shows keeps working.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

#[cfg(feature = "tokio")]
mod async_rx;
pub mod block;
pub mod bpf;
#[cfg(feature = "test-support")]
mod counting;
mod error;
#[cfg(feature = "test-support")]
pub mod frames;
mod held;
#[cfg(feature = "test-support")]
pub mod lab;
mod lifecycle;
mod rx;
mod stats;
mod sync;
mod synthetic;

// Unsafe code is denied in every module (the workspace's lints) but these four: the
// syscalls (`sys`), the mapping and the block leases over it (`mem`), and the two rings that
// read and write the frames the kernel's status protocol gives them (`immediate`, `tx`).
#[allow(unsafe_code)]
mod immediate;
#[allow(unsafe_code)]
mod mem;
#[allow(unsafe_code)]
mod sys;
mod timestamp;
#[allow(unsafe_code)]
mod tx;

#[cfg(feature = "tokio")]
pub use async_rx::{AsyncRxRing, Batches, OwnedBatch, OwnedPacket};
pub use block::{BlockView, Direction, LinkAddr, Packet, PacketMeta, Packets, UntilError};
pub use error::{BlockError, RingError, Setting, UnknownName};
pub use held::{PacketSocket, SocketHolder};
pub use immediate::{ImmediateRing, ImmediateRingBuilder};
pub use mem::{Batch, Block, BlockMap, Lease, Leases, PacketDesc, PacketRef};
pub use rx::{
    Fanout, FanoutMode, RxRing, RxRingBuilder, DEFAULT_BLOCK_COUNT, DEFAULT_BLOCK_SIZE,
    DEFAULT_BLOCK_TIMEOUT, DEFAULT_FRAME_SIZE, DEFAULT_SNAPLEN,
};
pub use stats::RingStats;
pub use synthetic::{Frame, SyntheticRing, SyntheticRingBuilder};
pub use sys::{advise_huge_pages, hold_cpu_dma_latency, page_size};
pub use timestamp::TimestampSource;
pub use tx::{TxRing, TxRingBuilder, TX_DATA_OFFSET};

/// Whether the calling thread has CAP_NET_RAW (needed by [`RxRing`] and [`TxRing`]).
pub fn has_cap_net_raw() -> bool {
    sys::has_cap_net_raw()
}
