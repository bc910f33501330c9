//! What each mode receives with, opened in namespace b, and the threads that read it.

use std::os::fd::{AsRawFd, OwnedFd};
use std::time::Duration;

use anyhow::Result;
use zcrx_capture::StopToken;
use zcrx_ring::frames::DPORT_BASE;
use zcrx_ring::RxRing;

use super::mode::{BUSY_POLL_BUDGET, BUSY_POLL_USEC};
use super::pnet::{pnet_receiver, PnetRx};
use super::ring::ring_receiver;
use super::sockets::{socket_receiver, SocketRead};
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
    /// GRO turned on for the receiving veth by this mode, turned off again when dropped.
    pub(super) _napi: Option<NapiOn>,
}

/// The receiving veth given NAPI for a mode that needs it: GRO on for b's veth (a veth has
/// NAPI only then, or with an XDP program) and TSO off for a's (a veth hands a frame to its
/// peer's NAPI only when the sender has TSO off or the frame is a socket's and the peer
/// forwards UDP GRO; the generator's frames are its TX ring's, so TSO must be off). Each
/// setting changed is changed back on drop, so the modes after this one see the veths as
/// before.
pub(super) struct NapiOn {
    a: Option<zcrx_ring::lab::Side>,
    b: Option<zcrx_ring::lab::Side>,
    threaded: Option<zcrx_ring::lab::Side>,
    /// b's sysfs settings changed, with their values before, to restore.
    sysfs: Vec<(zcrx_ring::lab::Side, &'static str, u64)>,
}

/// `gro_flush_timeout` for sockets-gro, ns: the veth's NAPI keeps what GRO holds across
/// polls for this long instead of flushing it at the end of each poll, which at a few frames
/// a poll would leave nothing to coalesce.
const GRO_FLUSH_TIMEOUT_NS: u64 = 20_000;
/// `napi_defer_hard_irqs` and `gro_flush_timeout` (ns) for the busy-polling modes (the
/// kernel's recipe for `SO_PREFER_BUSY_POLL`): when a busy poll ends, the NAPI stays
/// scheduled under a timer of this length instead of being handed back, so the veth's
/// transmit finds it taken and does not run it in the sender's softirq; the next receive
/// call polls it. Without them the sender's softirq runs the NAPI after every frame and the
/// busy poll finds nothing left.
const BUSY_DEFER_HARD_IRQS: u64 = 2;
const BUSY_FLUSH_TIMEOUT_NS: u64 = 200_000;

/// `side`'s veth's NAPI threaded (`/sys/class/net/IFACE/threaded`) or not; `value` None
/// reads it. sysfs shows the namespace of whoever mounted it: `ip netns exec` mounts the
/// side's.
fn napi_threaded(side: &zcrx_ring::lab::Side, value: Option<bool>) -> Result<bool> {
    Ok(net_sysfs(side, "threaded", value.map(u64::from))? != 0)
}

/// `side`'s veth's `/sys/class/net/IFACE/NAME`, written first when `value` is given.
fn net_sysfs(side: &zcrx_ring::lab::Side, name: &str, value: Option<u64>) -> Result<u64> {
    let path = format!("/sys/class/net/{}/{name}", side.iface);
    let script = match value {
        Some(v) => format!("echo {v} > {path} && cat {path}"),
        None => format!("cat {path}"),
    };
    let out = std::process::Command::new("ip")
        .args(["netns", "exec", &side.netns, "sh", "-c", &script])
        .output()
        .map_err(|e| anyhow::anyhow!("running ip netns exec: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        anyhow::bail!(
            "threaded NAPI for {}: {}",
            side.iface,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    text.trim()
        .parse()
        .map_err(|_| anyhow::anyhow!("{path}: {text:?} is not a number"))
}

impl NapiOn {
    /// `threaded`: the NAPI in a kernel thread of its own as well, with `gro_flush_timeout`
    /// (what GRO needs to see more than a frame a poll; busy polling does better without: a
    /// NAPI thread scheduled on every frame holds the NAPI the receive call would poll).
    fn turn_on(lab: &zcrx_ring::lab::Lab, threaded: bool) -> Result<NapiOn> {
        let mut on = NapiOn {
            a: None,
            b: None,
            threaded: None,
            sysfs: Vec::new(),
        };
        let iface = lab.b.iface.clone();
        let gro_was = lab.b.run(move || -> std::io::Result<bool> {
            let was = sys::gro(&iface)?;
            if !was {
                sys::set_gro(&iface, true)?;
            }
            Ok(was)
        })?;
        let gro_was = gro_was.map_err(|e| {
            anyhow::anyhow!(
                "turning GRO on for {} (ethtool -K gro on): {e}",
                lab.b.iface
            )
        })?;
        if !gro_was {
            on.b = Some(lab.b.clone());
        }
        let iface = lab.a.iface.clone();
        let tso_was = lab.a.run(move || -> std::io::Result<bool> {
            let was = sys::tso(&iface)?;
            if was {
                sys::set_tso(&iface, false)?;
            }
            Ok(was)
        })?;
        let tso_was = tso_was.map_err(|e| {
            anyhow::anyhow!(
                "turning TSO off for {} (ethtool -K tso off): {e}",
                lab.a.iface
            )
        })?;
        if tso_was {
            on.a = Some(lab.a.clone());
        }
        let mut set = |name: &'static str, v: u64| -> Result<()> {
            let was = net_sysfs(&lab.b, name, None)?;
            net_sysfs(&lab.b, name, Some(v))?;
            on.sysfs.push((lab.b.clone(), name, was));
            Ok(())
        };
        if !threaded {
            set("napi_defer_hard_irqs", BUSY_DEFER_HARD_IRQS)?;
            set("gro_flush_timeout", BUSY_FLUSH_TIMEOUT_NS)?;
            return Ok(on);
        }
        set("gro_flush_timeout", GRO_FLUSH_TIMEOUT_NS)?;
        // Without its own thread the veth's NAPI runs in the sender's softirq after each
        // frame, one frame a poll: nothing for GRO to coalesce.
        if !napi_threaded(&lab.b, None)? {
            napi_threaded(&lab.b, Some(true))?;
            on.threaded = Some(lab.b.clone());
        }
        Ok(on)
    }
}

impl Drop for NapiOn {
    fn drop(&mut self) {
        for (side, name, was) in self.sysfs.iter().rev() {
            let _ = net_sysfs(side, name, Some(*was));
        }
        if let Some(b) = &self.threaded {
            let _ = napi_threaded(b, Some(false));
        }
        if let Some(b) = &self.b {
            let iface = b.iface.clone();
            let _ = b.run(move || sys::set_gro(&iface, false));
        }
        if let Some(a) = &self.a {
            let iface = a.iface.clone();
            let _ = a.run(move || sys::set_tso(&iface, true));
        }
    }
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
        let napi = if mode.needs_napi() {
            Some(NapiOn::turn_on(&self.lab, mode == Mode::SocketsGro)?)
        } else {
            None
        };
        let sockets = match mode {
            m if m.uses_sockets() => {
                let ip = self.lab.b.ip;
                self.lab.b.run(move || {
                    (0..flows)
                        .map(|i| {
                            let s = sys::udp_socket(ip, DPORT_BASE + i as u16, 0)?;
                            if mode == Mode::SocketsGro {
                                sys::set_udp_gro(s.as_raw_fd())?;
                            }
                            if mode.busy_polls() {
                                sys::set_busy_poll(
                                    s.as_raw_fd(),
                                    BUSY_POLL_USEC,
                                    BUSY_POLL_BUDGET,
                                )?;
                            }
                            Ok(s)
                        })
                        .collect::<Result<Vec<_>, std::io::Error>>()
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
            Mode::AfXdp => Some(XdpRx::open(&self.lab.b, false)?),
            Mode::AfXdpBusy => Some(XdpRx::open(&self.lab.b, true)?),
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
            _napi: napi,
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
            Mode::SocketsRecvmsg
            | Mode::SocketsRecvmmsg
            | Mode::SocketsIoUring
            | Mode::SocketsGro
            | Mode::SocketsRecvmmsgBusy => (0..consumers)
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
                    let read = match mode {
                        Mode::SocketsRecvmsg => SocketRead::One,
                        Mode::SocketsGro => SocketRead::Gro,
                        _ => SocketRead::Batch,
                    };
                    s.spawn(move || {
                        let local = ReceiverTally::started(shared, flows);
                        if mode == Mode::SocketsIoUring {
                            uring_receiver(&mine, size, local, &stop)
                        } else {
                            socket_receiver(&mine, read, size, local, &stop)
                        }
                    })
                })
                .collect(),
            Mode::AfXdp | Mode::AfXdpBusy => {
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
