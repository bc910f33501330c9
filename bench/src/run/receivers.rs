//! What each mode receives with, opened in namespace b, and the threads that read it.

use std::os::fd::{AsRawFd, OwnedFd};
use std::time::Duration;

use anyhow::Result;
use zcrx_capture::StopToken;
use zcrx_ring::frames::DPORT_BASE;
use zcrx_ring::RxRing;

use super::pnet::{pnet_receiver, PnetRx};
use super::ring::ring_receiver;
use super::sockets::socket_receiver;
use super::tally::{ReceiverTally, RunTotals};
use super::uring::uring_receiver;
use super::xdp::{xdp_receiver, XdpRx};
use super::{Bench, Mode};
use crate::sys;

/// What a mode receives with.
pub(super) struct Receivers {
    /// One UDP socket per flow (socket modes).
    pub(super) sockets: Vec<OwnedFd>,
    /// The RX ring (ring modes).
    pub(super) ring: Option<RxRing>,
    /// The AF_XDP sockets and their program (af-xdp).
    pub(super) xdp: Option<XdpRx>,
    /// pnet's channel (pnet-datalink).
    pub(super) pnet: Option<PnetRx>,
}

impl Receivers {
    /// The receiving socket's own drop counter since it was opened.
    pub(super) fn socket_drops(&self) -> Result<u64> {
        let mut d = 0;
        if let Some(r) = &self.ring {
            d += r.stats()?.drops;
        }
        if let Some(x) = &self.xdp {
            d += x.drops()?;
        }
        if let Some(p) = &self.pnet {
            d += p.drops()?;
        }
        Ok(d)
    }
}

impl Bench {
    /// The sockets (one per flow) or the ring the mode receives with, in namespace b.
    pub(super) fn open_receivers(&self, mode: Mode, size: usize) -> Result<Receivers> {
        let flows = self.config.flows;
        let sockets = match mode {
            m if m.uses_sockets() => {
                let ip = self.lab.b.ip;
                self.lab.b.run(move || {
                    (0..flows)
                        .map(|i| sys::udp_socket(ip, DPORT_BASE + i as u16, 0))
                        .collect::<Result<Vec<_>, _>>()
                })??
            }
            _ => Vec::new(),
        };
        let ring = match mode {
            Mode::Ring(_) => {
                let iface = self.lab.b.iface.clone();
                let (bs, bc, tmo) = (
                    self.config.block_size,
                    self.config.block_count,
                    self.config.block_timeout_ms,
                );
                Some(self.lab.b.run(move || {
                    RxRing::builder(iface)
                        .block_size(bs)
                        .block_count(bc)
                        .block_timeout(Duration::from_millis(tmo))
                        .build()
                })??)
            }
            _ => None,
        };
        let xdp = match mode {
            Mode::AfXdp => Some(XdpRx::open(&self.lab.b)?),
            _ => None,
        };
        let pnet = match mode {
            Mode::PnetDatalink => {
                let iface = self.lab.b.iface.clone();
                Some(self.lab.b.run(move || PnetRx::open(&iface, size))??)
            }
            _ => None,
        };
        Ok(Receivers {
            sockets,
            ring,
            xdp,
            pnet,
        })
    }
}

/// What a mode's receiver threads are started with.
#[derive(Clone, Copy)]
pub(super) struct ReceiverSpec {
    pub(super) mode: Mode,
    pub(super) size: usize,
    pub(super) flows: usize,
    pub(super) consumers: usize,
}

impl ReceiverSpec {
    /// Starts the mode's receiver threads in `s` (none for the generator alone): the socket
    /// modes one thread per consumer, each with every `consumers`-th socket; AF_XDP, pnet
    /// and the ring one thread (the ring's pipeline starts its consumers itself).
    pub(super) fn spawn<'s>(
        self,
        s: &'s std::thread::Scope<'s, '_>,
        rx: &'s Receivers,
        shared: &'s RunTotals,
        stop: &StopToken,
    ) -> Vec<std::thread::ScopedJoinHandle<'s, Result<()>>> {
        let ReceiverSpec {
            mode,
            size,
            flows,
            consumers,
        } = self;
        let stop = stop.clone();
        match mode {
            Mode::SocketsRecvmsg | Mode::SocketsRecvmmsg | Mode::SocketsIoUring => (0..consumers)
                .map(|c| {
                    let mine: Vec<(usize, i32)> = rx
                        .sockets
                        .iter()
                        .enumerate()
                        .skip(c)
                        .step_by(consumers)
                        .map(|(i, fd)| (i, fd.as_raw_fd()))
                        .collect();
                    let stop = stop.clone();
                    let batch = mode == Mode::SocketsRecvmmsg;
                    s.spawn(move || {
                        let local = ReceiverTally::started(shared, flows);
                        if mode == Mode::SocketsIoUring {
                            uring_receiver(&mine, size, local, &stop)
                        } else {
                            socket_receiver(&mine, batch, size, local, &stop)
                        }
                    })
                })
                .collect(),
            Mode::AfXdp => {
                let xdp = rx.xdp.as_ref().expect("af-xdp mode has sockets");
                vec![s
                    .spawn(move || xdp_receiver(xdp, ReceiverTally::started(shared, flows), &stop))]
            }
            Mode::PnetDatalink => {
                let pnet = rx.pnet.as_ref().expect("pnet mode has a channel");
                vec![s.spawn(move || {
                    pnet_receiver(pnet, ReceiverTally::started(shared, flows), &stop)
                })]
            }
            Mode::Ring(delivery) => {
                let ring = rx.ring.as_ref().expect("ring mode has a ring");
                vec![s.spawn(move || ring_receiver(ring, delivery, consumers, shared, flows, &stop))]
            }
            Mode::BaselineTx => Vec::new(),
        }
    }
}
