//! Helpers shared by the ring's integration tests.
#![allow(dead_code)] // each test file uses its own subset

use zcrx_ring::Frame;

/// A frame of `len` bytes whose contents depend on every byte's position and on `seed`, so
/// that frames of different seeds differ and a frame read back misplaced or zeroed shows
/// (no seed makes an all-zero frame).
pub fn frame(len: usize, seed: u8) -> Frame {
    Frame::new((0..len).map(|i| (i as u8) ^ seed).collect())
}
