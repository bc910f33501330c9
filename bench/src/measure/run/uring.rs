//! The `sockets-io-uring` receiver: the same per-flow UDP sockets as the socket modes, each
//! with a multishot `recvmsg` on this thread's io_uring, buffers from a provided-buffer ring,
//! completions reaped in batches.

use std::time::Duration;

use anyhow::{Context, Result};
use zcrx_capture::StopToken;

use super::tally::ReceiverTally;
use crate::sys::uring::MultishotRx;

/// Provided buffers per receiver (a power of two; 4096 x ~2 KiB).
const BUFFERS: u16 = 4096;

pub(super) fn uring_receiver(
    socks: &[(usize, i32)],
    size: usize,
    mut local: ReceiverTally<'_>,
    stop: &StopToken,
) -> Result<()> {
    let fds: Vec<i32> = socks.iter().map(|&(_, fd)| fd).collect();
    let mut rx = MultishotRx::new(&fds, size.max(2048), BUFFERS)
        .context("sockets-io-uring: setting up the ring")?;
    loop {
        let n = rx.poll(Duration::from_millis(5), |i, _data, ts| {
            local.packet(socks[i].0, ts);
        })?;
        if n == 0 {
            if stop.is_stopped() {
                local.finish();
                return Ok(());
            }
            local.idle();
        }
    }
}
