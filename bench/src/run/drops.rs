//! The kernel's drop counters around a mode: UDP errors and the receiving namespace's
//! backlog, the sending veth's tx drops, read before and after, and mirrored by watcher
//! threads while the mode runs (a namespace's /proc is read from inside it).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use anyhow::Result;
use zcrx_capture::StopToken;
use zcrx_ring::lab::Lab;

use super::receivers::Receivers;
use super::Drops;
use crate::machine::{netdev_column, snmp, softnet_drops};

/// Mirrors UDP InErrors of namespace b and the tx drops of a's veth into `watched` while
/// the mode runs (one thread per namespace, entered once), until `stop`.
pub(super) fn watch_drops<'s>(
    s: &'s std::thread::Scope<'s, '_>,
    lab: &Lab,
    watched: &'s Watched,
    stop: &StopToken,
) {
    let (a, b) = (lab.a.clone(), lab.b.clone());
    let watch_stop = stop.clone();
    s.spawn(move || {
        b.run(|| {
            while !watch_stop.is_stopped() {
                watched
                    .udp_in_errors
                    .store(snmp("Udp", "InErrors"), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(10));
            }
        })
    });
    let watch_stop = stop.clone();
    s.spawn(move || {
        a.run(|| {
            while !watch_stop.is_stopped() {
                watched
                    .veth_drops
                    .store(netdev_tx_drops(&a.iface), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(10));
            }
        })
    });
}

/// Counters mirrored by watcher threads inside the namespaces while a mode runs.
#[derive(Default)]
pub(super) struct Watched {
    /// UDP InErrors of namespace b.
    pub(super) udp_in_errors: AtomicU64,
    /// tx drops of a's veth.
    pub(super) veth_drops: AtomicU64,
}

/// The tx drop count of `iface` in the calling thread's namespace (/proc/net/dev).
fn netdev_tx_drops(iface: &str) -> u64 {
    let s = std::fs::read_to_string("/proc/thread-self/net/dev").unwrap_or_default();
    tx_drops_in(&s, iface)
}

/// The tx drop column (the 12th after the colon) of `iface` in /proc/net/dev's text.
fn tx_drops_in(dev: &str, iface: &str) -> u64 {
    netdev_column(dev, iface, 11).unwrap_or(0)
}

/// The kernel's drop counters of namespace b (and a's veth) when a mode starts.
pub(super) struct DropCounters {
    pub(super) udp_in_errors: u64,
    udp_rcvbuf_errors: u64,
    pub(super) backlog: u64,
    pub(super) veth: u64,
}

impl DropCounters {
    pub(super) fn read(lab: &Lab) -> Result<DropCounters> {
        let (udp_in_errors, udp_rcvbuf_errors) = lab
            .b
            .run(|| (snmp("Udp", "InErrors"), snmp("Udp", "RcvbufErrors")))?;
        let iface = lab.a.iface.clone();
        let veth = lab.a.run(move || netdev_tx_drops(&iface))?;
        Ok(DropCounters {
            udp_in_errors,
            udp_rcvbuf_errors,
            backlog: softnet_drops(),
            veth,
        })
    }

    /// Drops counted since `self` was read.
    pub(super) fn since(&self, lab: &Lab, rx: &Receivers) -> Result<Drops> {
        let now = DropCounters::read(lab)?;
        Ok(Drops {
            ring: rx.socket_drops()?,
            udp_in_errors: now.udp_in_errors - self.udp_in_errors,
            udp_rcvbuf_errors: now.udp_rcvbuf_errors - self.udp_rcvbuf_errors,
            backlog: now.backlog - self.backlog,
            veth: now.veth.saturating_sub(self.veth),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tx_drops_are_read_from_their_column_of_the_right_interface() {
        let dev = "Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo:       0       0    0    0    0     0          0         0        0       0    0    0    0     0       0          0
zcrxa1: 9000 100 1 2 0 0 0 0 64000000 1000000 0 4321 0 0 0 0
";
        assert_eq!(tx_drops_in(dev, "zcrxa1"), 4321);
        assert_eq!(tx_drops_in(dev, "lo"), 0);
        assert_eq!(
            tx_drops_in(dev, "zcrxa"),
            0,
            "a prefix is another interface"
        );
    }
}
