//! The `af-xdp` receiver: one AF_XDP socket per rx queue of the receiving veth (copy mode),
//! the redirect program attached by us, frames read in place from the UMEM.

use std::os::fd::RawFd;
use std::sync::Mutex;
use std::time::Duration;

use anyhow::{anyhow, Context, Result};
use zcrx_capture::StopToken;
use zcrx_ring::lab::Side;

use super::mode::{BUSY_POLL_BUDGET, BUSY_POLL_USEC};
use super::tally::{flow_of_frame, ReceiverTally};
use crate::sys;
use crate::sys::xdp::{attach_redirect, wait_any, XdpRedirect, XskSocket};

/// UMEM chunks per socket (4 KiB each).
const FRAMES: u32 = 4096;

/// The sockets and the program that feeds them.
pub(super) struct XdpRx {
    socks: Mutex<Vec<XskSocket>>,
    /// The sockets' fds, for their drop counters while a receiver holds `socks`.
    fds: Vec<RawFd>,
    /// Detaches the program when dropped; declared after the sockets' fds are taken.
    program: XdpRedirect,
    /// Busy polling on the sockets (af-xdp-busy): an empty ring is polled by `recvfrom`
    /// rather than waited for.
    busy: bool,
}

impl XdpRx {
    /// Opens a socket per rx queue of `side`'s interface and attaches the program; `busy`:
    /// with busy polling on each socket.
    pub(super) fn open(side: &Side, busy: bool) -> Result<XdpRx> {
        let queues = rx_queues(side)?;
        let iface = side.iface.clone();
        side.run(move || -> Result<XdpRx> {
            let ifindex = sys::ifindex(&iface).with_context(|| format!("no interface {iface}"))?;
            // `numrxqueues` counts the queues allocated; a socket can bind only to the ones in
            // use (real_num_rx_queues), which the kernel refuses past with EINVAL.
            let mut socks = vec![XskSocket::new(ifindex, 0, FRAMES)?];
            for q in 1..queues {
                match XskSocket::new(ifindex, q, FRAMES) {
                    Ok(s) => socks.push(s),
                    Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => break,
                    Err(e) => return Err(e.into()),
                }
            }
            let program = attach_redirect(ifindex, &socks.iter().collect::<Vec<_>>())?;
            if busy {
                for s in &socks {
                    sys::set_busy_poll(s.raw_fd(), BUSY_POLL_USEC, BUSY_POLL_BUDGET)
                        .context("AF_XDP: SO_BUSY_POLL")?;
                }
            }
            Ok(XdpRx {
                fds: socks.iter().map(XskSocket::raw_fd).collect(),
                socks: Mutex::new(socks),
                program,
                busy,
            })
        })?
    }

    /// Where the program runs: "native" or "generic".
    pub(super) fn hook(&self) -> &'static str {
        self.program.hook
    }

    /// Frames the sockets dropped (no free chunk, RX ring full, bad descriptor).
    pub(super) fn drops(&self) -> Result<u64> {
        let mut total = 0;
        for &fd in &self.fds {
            total += sys::xdp::drops(fd)?;
        }
        Ok(total)
    }
}

/// The interface's rx queue count (`ip -d link`: numrxqueues).
fn rx_queues(side: &Side) -> Result<u32> {
    let out = side.ip(&["-d", "link", "show", &side.iface])?;
    let mut words = out.split_whitespace();
    while let Some(w) = words.next() {
        if w == "numrxqueues" {
            return words
                .next()
                .and_then(|n| n.parse().ok())
                .filter(|&n| n > 0)
                .context("numrxqueues is not a count");
        }
    }
    Ok(1)
}

pub(super) fn xdp_receiver(
    rx: &XdpRx,
    mut local: ReceiverTally<'_>,
    stop: &StopToken,
) -> Result<()> {
    let mut socks = rx
        .socks
        .lock()
        .map_err(|_| anyhow!("af-xdp receiver poisoned"))?;
    loop {
        let mut got = 0;
        for s in socks.iter_mut() {
            got += s.drain(|frame| local.packet(flow_of_frame(frame), None));
        }
        if got == 0 {
            if stop.is_stopped() {
                if rx.busy {
                    for &fd in &rx.fds {
                        local.napi_id(sys::incoming_napi_id(fd)?);
                    }
                }
                local.finish();
                return Ok(());
            }
            local.idle();
            if rx.busy {
                for &fd in &rx.fds {
                    sys::kick_recv(fd)?;
                }
            } else {
                wait_any(&socks, Duration::from_millis(5))?;
            }
        }
    }
}
