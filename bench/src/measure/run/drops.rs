//! The kernel's drop counters around a mode: UDP errors of the receiving namespace, the
//! frames that never reached the receiving veth and, for information, the backlog's drops,
//! read before and after, and mirrored by a watcher thread while the mode runs (a
//! namespace's /proc is read from inside it).
//!
//! The veth's losses are the frames sent less the frames the receiving veth counted, not the
//! sending veth's tx drop column: with `PACKET_QDISC_BYPASS` that column also counts every
//! transmit the veth refused while its peer's queue was full, and the TX ring sends each
//! refused frame again, so it arrives after all. The backlog's drops are not losses either:
//! a veth without NAPI hands each frame to the backlog within its transmit, so a frame the
//! backlog refuses is a refused transmit, sent again; a veth with NAPI does not use the
//! backlog; and the count is the machine's, whatever traffic caused it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use anyhow::Result;
use zcrx_capture::StopToken;
use zcrx_ring::lab::Lab;

use super::receivers::Receivers;
use super::Drops;
use crate::lab::generator::received_at;
use crate::lab::machine::{snmp, softnet_drops};

/// Mirrors UDP InErrors of namespace b and the packets its veth received into `watched`
/// while the mode runs (one thread, in the namespace once), until `stop`.
pub(super) fn watch_drops<'s>(
    s: &'s std::thread::Scope<'s, '_>,
    lab: &Lab,
    watched: &'s Watched,
    stop: &StopToken,
) {
    let b = lab.b.clone();
    let watch_stop = stop.clone();
    s.spawn(move || {
        b.run(|| {
            while !watch_stop.is_stopped() {
                watched
                    .udp_in_errors
                    .store(snmp("Udp", "InErrors"), Ordering::Relaxed);
                if let Some((rx, _)) = crate::lab::generator::rx_counters(&b.iface) {
                    watched.veth_rx.store(rx, Ordering::Relaxed);
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        })
    });
}

/// Counters mirrored by a watcher thread inside namespace b while a mode runs.
pub(super) struct Watched {
    /// UDP InErrors of namespace b.
    pub(super) udp_in_errors: AtomicU64,
    /// Packets b's veth received ([`Watched::UNREAD`] until the watcher first reads it).
    pub(super) veth_rx: AtomicU64,
}

impl Watched {
    /// A counter the watcher has not read yet.
    pub(super) const UNREAD: u64 = u64::MAX;
}

impl Default for Watched {
    fn default() -> Watched {
        Watched {
            udp_in_errors: AtomicU64::new(0),
            veth_rx: AtomicU64::new(Watched::UNREAD),
        }
    }
}

/// The kernel's drop counters of namespace b when a mode starts.
pub(super) struct DropCounters {
    pub(super) udp_in_errors: u64,
    udp_rcvbuf_errors: u64,
    pub(super) backlog: u64,
    /// Packets b's veth received.
    pub(super) veth_rx: u64,
}

impl DropCounters {
    pub(super) fn read(lab: &Lab) -> Result<DropCounters> {
        let (udp_in_errors, udp_rcvbuf_errors) = lab
            .b
            .run(|| (snmp("Udp", "InErrors"), snmp("Udp", "RcvbufErrors")))?;
        Ok(DropCounters {
            udp_in_errors,
            udp_rcvbuf_errors,
            backlog: softnet_drops(),
            veth_rx: received_at(&lab.b)?.0,
        })
    }

    /// Drops counted since `self` was read, `sent` frames having been sent since.
    pub(super) fn since(&self, lab: &Lab, rx: &Receivers, sent: u64) -> Result<Drops> {
        let now = DropCounters::read(lab)?;
        Ok(Drops {
            ring: rx.socket_drops()?,
            udp_in_errors: now.udp_in_errors.saturating_sub(self.udp_in_errors),
            udp_rcvbuf_errors: now.udp_rcvbuf_errors.saturating_sub(self.udp_rcvbuf_errors),
            backlog: now.backlog.saturating_sub(self.backlog),
            veth: veth_lost(sent, now.veth_rx.saturating_sub(self.veth_rx)),
        })
    }
}

/// The frames lost between the two veths: of `sent`, those the receiving veth never counted
/// (`received` of them it did). Nothing else uses the veth, so more received than sent
/// (none is expected: the lab has no IPv6) counts as none lost.
pub(super) fn veth_lost(sent: u64, received: u64) -> u64 {
    sent.saturating_sub(received)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn veth_losses_are_the_frames_never_received() {
        // Every frame arrived (refused transmits that were sent again included).
        assert_eq!(veth_lost(40_000, 40_000), 0);
        // 975 never reached the receiving veth.
        assert_eq!(veth_lost(40_000, 39_025), 975);
        assert_eq!(veth_lost(10, 12), 0);
    }
}
