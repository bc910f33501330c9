//! The socket modes' receiver: epoll over its share of the per-flow UDP sockets, then
//! `recvmsg` per datagram, `recvmmsg` batches, or `recvmmsg` batches of `UDP_GRO` buffers
//! split into their datagrams.

use std::collections::HashMap;

use anyhow::Result;
use zcrx_capture::StopToken;
use zcrx_ring::frames::UDP_HEADERS;

use super::tally::{split_gro, ReceiverTally};
use crate::sys;

/// How a socket receiver reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SocketRead {
    /// `recvmsg`, one datagram a call.
    One,
    /// `recvmmsg`, up to 64 datagrams a call.
    Batch,
    /// `recvmmsg` of up to 64 `UDP_GRO` buffers a call, each one datagram or several of one
    /// flow coalesced by the kernel and split here by the control message's segment size.
    Gro,
}

/// The largest buffer `UDP_GRO` hands over (an IPv4 datagram's length limit).
const GRO_BUFFER: usize = 65_536;

pub(super) fn socket_receiver(
    socks: &[(usize, i32)],
    read: SocketRead,
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
    let slot = if read == SocketRead::Gro {
        GRO_BUFFER
    } else {
        size.max(2048)
    };
    let mut many = sys::RecvBatch::new(64, slot);
    // The UDP payload of every lab datagram at this frame size (frames pad to 60 bytes).
    let payload = size.max(60) - UDP_HEADERS;
    loop {
        let n = ep.wait(&mut events, 5)?;
        if n == 0 {
            if stop.is_stopped() {
                for &(_, fd) in socks {
                    local.napi_id(sys::incoming_napi_id(fd)?);
                }
                local.finish();
                return Ok(());
            }
            local.idle();
        }
        for ev in &events[..n] {
            let (flow, fd) = by_token[&{ ev.u64 }];
            match read {
                SocketRead::One => {
                    while let Some((_, ts)) = sys::recvmsg(fd, &mut one)? {
                        local.packet(flow, ts);
                    }
                }
                SocketRead::Batch => loop {
                    let got = many.recv(fd)?;
                    for i in 0..got {
                        local.packet(flow, many.get(i).1);
                    }
                    if got < 64 {
                        break;
                    }
                },
                SocketRead::Gro => loop {
                    let got = many.recv(fd)?;
                    for i in 0..got {
                        let (bytes, ts) = many.get(i);
                        let split = split_gro(bytes, many.gro_segment(i), payload);
                        for _ in 0..split.datagrams {
                            local.packet(flow, ts);
                        }
                        local.gro_buffer(split);
                    }
                    if got < 64 {
                        break;
                    }
                },
            }
        }
    }
}
