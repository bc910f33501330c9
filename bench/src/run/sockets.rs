//! The socket modes' receiver: epoll over its share of the per-flow UDP sockets, then
//! `recvmsg` per datagram, `recvmmsg` batches, or `recvmmsg` batches of `UDP_GRO` buffers
//! split into their datagrams.

use std::collections::HashMap;

use anyhow::Result;
use zcrx_capture::StopToken;
use zcrx_ring::frames::{PAYLOAD_MAGIC, UDP_HEADERS};

use super::tally::ReceiverTally;
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

/// One `UDP_GRO` buffer split into its datagrams.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct GroSplit {
    /// Datagrams in the buffer.
    pub(super) datagrams: u64,
    /// Of them, those whose length is not the lab's payload length or that do not start
    /// with the lab's payload magic (a wrong split shows here).
    pub(super) misfits: u64,
}

/// Splits `buf` by `segment` (its datagrams are `segment` bytes each, the last one possibly
/// shorter; no segment: one datagram) and checks each against the lab's `payload` length and
/// magic.
pub(super) fn split_gro(buf: &[u8], segment: Option<usize>, payload: usize) -> GroSplit {
    let seg = segment.unwrap_or(buf.len()).max(1);
    let mut split = GroSplit::default();
    for d in buf.chunks(seg) {
        split.datagrams += 1;
        if d.len() != payload || d.get(..4) != Some(&PAYLOAD_MAGIC.to_be_bytes()[..]) {
            split.misfits += 1;
        }
    }
    if buf.is_empty() {
        split.datagrams = 1;
        split.misfits = 1;
    }
    split
}

#[cfg(test)]
mod tests {
    use super::*;

    fn datagram(len: usize) -> Vec<u8> {
        let mut d = PAYLOAD_MAGIC.to_be_bytes().to_vec();
        d.resize(len, 7);
        d
    }

    #[test]
    fn a_coalesced_buffer_splits_into_its_datagrams() {
        let buf: Vec<u8> = (0..5).flat_map(|_| datagram(1358)).collect();
        let s = split_gro(&buf, Some(1358), 1358);
        assert_eq!(
            s,
            GroSplit {
                datagrams: 5,
                misfits: 0
            }
        );
        // Without the control message the buffer is one datagram.
        let s = split_gro(&datagram(22), None, 22);
        assert_eq!(
            s,
            GroSplit {
                datagrams: 1,
                misfits: 0
            }
        );
        // A wrong segment size shows as misfits.
        let s = split_gro(&buf, Some(1000), 1358);
        assert_eq!(s.datagrams, 7);
        assert_eq!(s.misfits, 7);
    }
}
