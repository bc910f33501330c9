//! The one set-up every mode goes through once its source is open (rings, a file, the
//! kernel's program): the order below is what keeps a capture safe, so it lives here once.
//!
//! 1. SIGINT/SIGTERM (and SIGUSR1, where the mode answers it) caught: from here a signal
//!    stops the capture cleanly;
//! 2. the listening sockets bound (`--pcap-over-ip`, `--metrics`): a port below 1024
//!    needs root;
//! 3. privileges dropped to the `-Z` user (or, as root without `-Z`, to the user `zcap`
//!    where there is one);
//! 4. the exports opened as that user (`--ipfix-file` belongs to it, as `-w` files do);
//! 5. `--top`'s terminal prepared (restored when the screen is dropped);
//! 6. the monitor split off, keeping the packet sockets and the listeners
//!    (`crate::privsep`), and the sandbox settled: no capability, Landlock, seccomp —
//!    before any thread starts;
//! 7. the bound `--pcap-over-ip` served (its thread starts inside the sandbox).
//!
//! The mode then hands its rings' sockets over ([`SetUp::held`]) before it reads a packet.

use std::sync::Mutex;

use anyhow::Result;
use zcrx_capture::StopToken;
use zcrx_ring::PacketSocket;

use crate::args::Config;
use crate::export::Export;
use crate::interface::LINKTYPE_ETHERNET;
use crate::metrics::{self, Listening};
use crate::pcap_over_ip::{self, Server};
use crate::signals::{self, Usr1};
use crate::system::become_user;
use crate::top;

/// What a mode takes of the set-up.
#[derive(Clone, Copy, Default)]
pub(super) struct Wants {
    /// SIGUSR1 answered with the counts so far through [`Usr1`].
    pub(super) usr1: bool,
    /// `--pcap-over-ip` bound for this link type (LINKTYPE_*) and snaplen.
    pub(super) pcap_over_ip: Option<(u32, u32)>,
    /// `--metrics` bound.
    pub(super) metrics: bool,
    /// The export opened; `true`: records are stamped with the packets' times (a file).
    pub(super) export: Option<bool>,
    /// `--top`'s terminal prepared; `true`: a live capture.
    pub(super) screen: Option<bool>,
}

impl Wants {
    /// A live capture over rings: every part.
    pub(super) fn rings(linktype: u32, snaplen: u32) -> Wants {
        Wants {
            usr1: true,
            pcap_over_ip: Some((linktype, snaplen)),
            metrics: true,
            export: Some(false),
            screen: Some(true),
        }
    }

    /// `--immediate-mode`: `--pcap-over-ip` (Ethernet); SIGUSR1 is the capture loop's.
    pub(super) fn immediate(snaplen: u32) -> Wants {
        Wants {
            pcap_over_ip: Some((LINKTYPE_ETHERNET, snaplen)),
            ..Wants::default()
        }
    }

    /// `--flows-in-kernel`: SIGUSR1 and the export.
    pub(super) fn kernel() -> Wants {
        Wants {
            usr1: true,
            export: Some(false),
            ..Wants::default()
        }
    }

    /// `-r FILE`: SIGUSR1, the export (stamped with the packets' times) and `--top`.
    pub(super) fn file() -> Wants {
        Wants {
            usr1: true,
            export: Some(true),
            screen: Some(false),
            ..Wants::default()
        }
    }
}

/// What the set-up hands the mode: each part it asked for, `None` otherwise (or when the
/// command line did not ask for it).
pub(super) struct SetUp<'c> {
    pub(super) stop: StopToken,
    pub(super) usr1: Option<Usr1>,
    pub(super) server: Option<Server>,
    pub(super) metrics: Option<Listening<'c>>,
    pub(super) export: Option<Mutex<Export>>,
    pub(super) screen: Option<top::Screen>,
    /// What replaces each packet socket given to [`set_up`] (empty without the sandbox):
    /// the ring gives its socket up for it (`give_up_socket`).
    pub(super) held: Vec<crate::privsep::Held>,
}

/// Performs the set-up in its order (see the module's doc) for `config`, as `wants` says;
/// `sockets` are the mode's packet sockets, kept by the monitor.
pub(super) fn set_up<'c>(
    config: &'c Config,
    wants: Wants,
    sockets: &[PacketSocket<'_>],
) -> Result<SetUp<'c>> {
    let stop = signals::stop_on_signals()?;
    let usr1 = wants.usr1.then(Usr1::catch).transpose()?;
    let bound = match wants.pcap_over_ip {
        Some((linktype, snaplen)) => {
            pcap_over_ip::bind(config.pcap_over_ip.as_ref(), linktype, snaplen)?
        }
        None => None,
    };
    // Bound before -Z; its thread starts inside the capture's scope.
    let metrics = if wants.metrics {
        metrics::listen(config.metrics.as_ref())
    } else {
        None
    };
    become_user(config.capture.user.as_deref())?;
    let export = match wants.export {
        Some(packet_time) => Export::open(config.export.as_ref(), packet_time)?,
        None => None,
    };
    let screen = match (wants.screen, &config.top) {
        (Some(live), Some(_)) => Some(top::Screen::prepare(live)?),
        _ => None,
    };
    // The names of `-n`'s absence are read while the files are still in reach.
    if config.sink.style.detail.names {
        crate::dissect::resolve::preload();
    }
    let held = crate::sandbox::settle(config, sockets)?;
    let server = bound.map(pcap_over_ip::Bound::serve).transpose()?;
    Ok(SetUp {
        stop,
        usr1,
        server,
        metrics,
        export,
        screen,
        held,
    })
}
