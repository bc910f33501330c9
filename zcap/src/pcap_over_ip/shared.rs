//! What the caller, the capture side and the server's thread share: the configuration,
//! the bounds, the buffer of records and the counts.

use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ipnet::IpNet;
use rustls::ServerConfig;

/// Bytes that may wait for one client before it is cut off (about 11 000 full-size frames,
/// a tenth of a second of 1 Gbit/s, beside what its socket's kernel buffer holds): with
/// the default 8 clients and [`PENDING_MAX`], the server holds at most about 160 MiB.
pub(super) const CLIENT_BACKLOG: usize = 16 << 20;

/// Bytes the capture may leave for the server thread before it drops records (the thread
/// takes them every few milliseconds; reached only if it is starved of CPU).
pub(super) const PENDING_MAX: usize = 32 << 20;

/// A TLS client that has not finished its handshake this long after it connected is closed
/// and counted.
pub(super) const HANDSHAKE_DEADLINE: Duration = Duration::from_secs(5);

/// `--pcap-over-ip`, as the command line asks it.
#[derive(Clone)]
pub(crate) struct ServeConfig {
    /// Where: `HOST:PORT` (a port alone on the command line is 127.0.0.1's), resolved when
    /// bound.
    pub(crate) addr: String,
    /// TLS (`--pcap-over-ip-cert`, `--pcap-over-ip-key`, `--pcap-over-ip-client-ca`).
    pub(crate) tls: Option<Arc<ServerConfig>>,
    /// Whether clients must show a certificate of `--pcap-over-ip-client-ca`.
    pub(crate) client_certs: bool,
    /// `--pcap-over-ip-allow` (empty: every address).
    pub(crate) allow: Vec<IpNet>,
    /// `--pcap-over-ip-max-connections`.
    pub(crate) max_connections: usize,
}

impl ServeConfig {
    /// Whether a client from `ip` may connect.
    pub(super) fn allows(&self, ip: IpAddr) -> bool {
        // A v4 client of a dual-stack socket comes as ::ffff:a.b.c.d.
        let ip = ip.to_canonical();
        self.allow.is_empty() || self.allow.iter().any(|net| net.contains(&ip))
    }
}

/// Why connections were closed unserved, in the order of [`Shared::rejected`] (the
/// `reason` label of `zcap_pcap_over_ip_rejected_connections_total`).
pub(super) const REJECTED: [&str; 5] = [
    "address",
    "connection_limit",
    "tls_handshake",
    "address_limit",
    "displaced",
];
pub(super) const ADDRESS: usize = 0;
pub(super) const CONNECTION_LIMIT: usize = 1;
pub(super) const TLS_HANDSHAKE: usize = 2;
/// More connections from one address than [`per_address`] allows.
pub(super) const ADDRESS_LIMIT: usize = 3;
/// A TLS handshake under way closed to make room for a newer connection when all were
/// taken: a client that has proved nothing gives way.
pub(super) const DISPLACED: usize = 4;

pub(super) use crate::metrics::per_address;

/// The server's state, shared by the capture side ([`super::TeeSink`]), the server's
/// thread and the caller.
#[derive(Default)]
pub(super) struct Shared {
    /// Whole records not yet handed to the clients.
    pub(super) pending: Mutex<Vec<u8>>,
    pub(super) stop: AtomicBool,
    /// Records dropped because `pending` was full.
    pub(super) dropped: AtomicU64,
    /// Clients that get the stream now: with none, the capture formats no records.
    pub(super) clients: AtomicUsize,
    /// Clients that got the stream, and those cut off, so far.
    pub(super) served: AtomicU64,
    pub(super) cut_off: AtomicU64,
    /// Connections closed unserved, by reason ([`REJECTED`]).
    pub(super) rejected: [AtomicU64; REJECTED.len()],
}

impl Shared {
    pub(super) fn count(&self, counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }
}
