//! The TPACKET_V3 block walker: reads one block's `tpacket3_hdr` chain and yields packet views.
//!
//! Promise: the walker trusts nothing in the block. Every `tp_next_offset`, `tp_mac` and
//! `tp_snaplen` is checked against the block bounds before a byte of the frame is touched;
//! a bad header ends the walk with a [`BlockError`], never a panic or an out-of-bounds read.
//! It works on a plain `&[u8]`, so the kernel's ring and the synthetic ring share it.
//!
//! [`BlockError`]: crate::BlockError

mod layout;
mod link;
mod packet;
mod view;
mod walk;

pub(crate) use layout::{bd, hdr3};
pub use layout::{status, ETH_P_8021Q};
pub(crate) use link::link_addr_at;
pub use link::{Direction, LinkAddr};
pub(crate) use packet::meta_at;
pub use packet::{Packet, PacketMeta};
pub(crate) use view::block_losing;
pub use view::{max_packets, BlockView};
pub use walk::{Packets, UntilError};

#[cfg(test)]
mod test;
