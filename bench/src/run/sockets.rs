//! The socket modes' receiver: epoll over its share of the per-flow UDP sockets, then
//! `recvmsg` per datagram or `recvmmsg` batches.

use std::collections::HashMap;

use anyhow::Result;
use zcrx_capture::StopToken;

use super::tally::ReceiverTally;
use crate::sys;

pub(super) fn socket_receiver(
    socks: &[(usize, i32)],
    batch: bool,
    size: usize,
    mut local: ReceiverTally<'_>,
    stop: &StopToken,
) -> Result<()> {
    let ep = sys::Epoll::new()?;
    let by_token: HashMap<u64, (usize, i32)> = socks
        .iter()
        .map(|&(flow, fd)| (flow as u64, (flow, fd)))
        .collect();
    for &(flow, fd) in socks {
        ep.add(fd, flow as u64)?;
    }
    let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; 256];
    let mut one = sys::RecvSlot::new(size.max(2048));
    let mut many = sys::RecvBatch::new(64, size.max(2048));
    loop {
        let n = ep.wait(&mut events, 5)?;
        if n == 0 {
            if stop.is_stopped() {
                local.finish();
                return Ok(());
            }
            local.idle();
        }
        for ev in &events[..n] {
            let (flow, fd) = by_token[&{ ev.u64 }];
            if batch {
                loop {
                    let got = many.recv(fd)?;
                    for i in 0..got {
                        local.packet(flow, many.get(i).1);
                    }
                    if got < 64 {
                        break;
                    }
                }
            } else {
                while let Some((_, ts)) = sys::recvmsg(fd, &mut one)? {
                    local.packet(flow, ts);
                }
            }
        }
    }
}
