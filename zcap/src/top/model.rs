//! What the view shows: a flow as the snapshots give it ([`FlowNow`]), oriented from the
//! endpoint the view takes as its own ([`orient`]), and the rows ([`Row`]) a grouping makes
//! of them.

use std::collections::HashSet;
use std::net::IpAddr;

use zcrx_flowcache::{proto_name, Direction, FlowStats};

/// Rate windows, seconds (as iftop's).
pub(crate) const WINDOWS: [u64; 3] = [2, 10, 40];

/// Index of the "transmitted" (from the row's left endpoint) and "received" directions.
pub(crate) const TX: usize = 0;
pub(crate) const RX: usize = 1;

/// One endpoint: an address and (TCP, UDP, SCTP, ...) a port.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Endpoint {
    pub(crate) addr: IpAddr,
    pub(crate) port: u16,
}

/// Whether a protocol has ports (the key's ports are then shown).
pub(crate) fn has_ports(proto: u8) -> bool {
    matches!(proto, 6 | 17 | 33 | 132)
}

/// A live flow at the last snapshot, oriented: `left` is the capturing host's endpoint when
/// one of the two addresses is the host's, otherwise the flow's initiator.
#[derive(Debug, Clone)]
pub(crate) struct FlowNow {
    pub(crate) proto: u8,
    pub(crate) left: Endpoint,
    pub(crate) right: Endpoint,
    /// Bit/s over [`WINDOWS`], per direction ([`TX`]: left to right, [`RX`]).
    pub(crate) rates: [[f64; 3]; 2],
    /// Bytes and packets per direction ([`TX`], [`RX`]).
    pub(crate) bytes: [u64; 2],
    pub(crate) packets: [u64; 2],
    /// Seconds from the first packet to the snapshot's last (live), or to the flow's last
    /// (a file).
    pub(crate) age_s: f64,
    /// Zeek's conn_state for TCP (when the table follows states).
    pub(crate) state: Option<&'static str>,
    /// Whether `left` is the responder (the server: the end that did not send the first
    /// packet).
    pub(crate) server_left: bool,
    /// The server name the traffic gave (TLS/QUIC ClientHello), if any: the responder's.
    pub(crate) server: Option<String>,
    /// Names learnt from DNS answers for the two addresses.
    pub(crate) left_name: Option<String>,
    pub(crate) right_name: Option<String>,
    /// The local process owning `left` (`local` flows only): "name/pid".
    pub(crate) process: Option<String>,
}

/// Which canonical direction index goes left to right for `s`, and the orientation.
pub(crate) fn orient(s: &FlowStats, locals: &HashSet<IpAddr>) -> (Endpoint, Endpoint, bool, usize) {
    let k = &s.key;
    let src = Endpoint {
        addr: k.src(),
        port: k.sport(),
    };
    let dst = Endpoint {
        addr: k.dst(),
        port: k.dport(),
    };
    let (src_local, dst_local) = (locals.contains(&src.addr), locals.contains(&dst.addr));
    // Forward (index 0) goes src -> dst.
    let src_left = match (src_local, dst_local) {
        (true, false) => true,
        (false, true) => false,
        _ => s.initiator == Direction::Forward,
    };
    let local = src_local || dst_local;
    if src_left {
        (src, dst, local, 0)
    } else {
        (dst, src, local, 1)
    }
}

/// How rows group flows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum By {
    Flow,
    /// The two addresses.
    Pair,
    /// The right (remote) address.
    Host,
    /// Protocol and the responder's port (the service).
    Port,
}

impl By {
    pub(crate) const ALL: [By; 4] = [By::Flow, By::Pair, By::Host, By::Port];

    pub(crate) fn parse(s: &str) -> Option<By> {
        By::ALL.into_iter().find(|b| b.name() == s)
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            By::Flow => "flow",
            By::Pair => "pair",
            By::Host => "host",
            By::Port => "port",
        }
    }

    pub(crate) fn next(self) -> By {
        let i = By::ALL.iter().position(|b| *b == self).unwrap_or(0);
        By::ALL[(i + 1) % By::ALL.len()]
    }
}

/// What rows sort by (largest first, unless reversed; `Name` alphabetical).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SortKey {
    /// Both directions over window `i`.
    Both(usize),
    /// One direction ([`TX`], [`RX`]) over window `i`.
    Dir(usize, usize),
    Total,
    Packets,
    Age,
    Name,
}

impl SortKey {
    pub(crate) const ALL: [SortKey; 13] = [
        SortKey::Both(0),
        SortKey::Both(1),
        SortKey::Both(2),
        SortKey::Dir(RX, 0),
        SortKey::Dir(RX, 1),
        SortKey::Dir(RX, 2),
        SortKey::Dir(TX, 0),
        SortKey::Dir(TX, 1),
        SortKey::Dir(TX, 2),
        SortKey::Total,
        SortKey::Packets,
        SortKey::Age,
        SortKey::Name,
    ];

    pub(crate) fn name(self) -> String {
        match self {
            SortKey::Both(w) => format!("{}s", WINDOWS[w]),
            SortKey::Dir(d, w) => format!("{}{}s", if d == TX { "tx" } else { "rx" }, WINDOWS[w]),
            SortKey::Total => "total".into(),
            SortKey::Packets => "packets".into(),
            SortKey::Age => "age".into(),
            SortKey::Name => "name".into(),
        }
    }

    pub(crate) fn parse(s: &str) -> Option<SortKey> {
        SortKey::ALL.into_iter().find(|k| k.name() == s)
    }

    pub(crate) fn step(self, forward: bool) -> SortKey {
        let n = SortKey::ALL.len();
        let i = SortKey::ALL.iter().position(|k| *k == self).unwrap_or(0);
        SortKey::ALL[if forward {
            (i + 1) % n
        } else {
            (i + n - 1) % n
        }]
    }
}

/// One line of the table: a flow, or flows grouped.
#[derive(Debug, Clone, Default)]
pub(crate) struct Row {
    pub(crate) proto: String,
    pub(crate) left: String,
    pub(crate) right: String,
    pub(crate) rates: [[f64; 3]; 2],
    pub(crate) bytes: [u64; 2],
    pub(crate) packets: [u64; 2],
    /// Seconds since the oldest flow's first packet.
    pub(crate) age_s: f64,
    pub(crate) state: String,
    pub(crate) process: String,
    /// Flows in the row.
    pub(crate) flows: usize,
}

impl Row {
    /// The value `key` sorts by (larger first).
    pub(crate) fn sort_value(&self, key: SortKey) -> f64 {
        match key {
            SortKey::Both(w) => self.rates[TX][w] + self.rates[RX][w],
            SortKey::Dir(d, w) => self.rates[d][w],
            SortKey::Total => (self.bytes[0] + self.bytes[1]) as f64,
            SortKey::Packets => (self.packets[0] + self.packets[1]) as f64,
            SortKey::Age => self.age_s,
            SortKey::Name => 0.0,
        }
    }

    /// Whether the row's text holds `needle` (lower case), for the filter.
    pub(crate) fn matches(&self, needle: &str) -> bool {
        needle.is_empty()
            || [
                &self.proto,
                &self.left,
                &self.right,
                &self.state,
                &self.process,
            ]
            .iter()
            .any(|f| f.to_lowercase().contains(needle))
    }
}

/// An endpoint as shown: the name if one is known (and names are on), else the address; the
/// port after a colon (IPv6 in brackets) where the protocol has ports.
pub(crate) fn endpoint_text(e: &Endpoint, name: Option<&str>, ports: bool) -> String {
    let host = match (name, e.addr) {
        (Some(n), _) => n.to_string(),
        (None, IpAddr::V6(a)) if ports => format!("[{a}]"),
        (None, a) => a.to_string(),
    };
    if ports {
        format!("{host}:{}", e.port)
    } else {
        host
    }
}

/// The protocol's name ("TCP", "UDP", or the number).
pub(crate) fn proto_text(proto: u8) -> String {
    proto_name(proto)
        .map(str::to_uppercase)
        .unwrap_or_else(|| proto.to_string())
}
