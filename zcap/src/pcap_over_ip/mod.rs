//! `--pcap-over-ip [ADDR:]PORT`: every client that connects gets a pcap file header and
//! then the packets as they are captured — the "PCAP-over-IP" convention of Arkime, Malcolm
//! and NetworkMiner (`nc HOST PORT | tcpdump -r -` reads it too) — beside whatever else
//! zcap writes; over TLS with `--pcap-over-ip-cert`/`--pcap-over-ip-key` (`openssl
//! s_client -quiet -connect HOST:PORT | tcpdump -r -`), to clients whose certificate chains
//! to `--pcap-over-ip-client-ca` only if it is given, from the networks of
//! `--pcap-over-ip-allow` only if it is given.
//!
//! The capture thread formats each packet's record once ([`TeeSink`], behind the same
//! `SaveFile` as the `-w` files: VLAN tags put back, `-i any` as LINUX_SLL2) and appends it
//! to a shared buffer; a server thread of its own accepts clients and, every few
//! milliseconds, hands each client what came, with non-blocking writes (TLS connections
//! are driven by `read_tls`/`write_tls` on the same thread). A client that reads too slowly
//! (more than [`CLIENT_BACKLOG`](shared::CLIENT_BACKLOG) bytes waiting for it) is cut off
//! and counted; it never slows the capture. Clients come and go at any time: one that
//! connects late gets the header, then the records from the next one on (records are never
//! split).
//!
//! Its bounds, whatever clients do: at most `--pcap-over-ip-max-connections` connections
//! (more are closed at accept and counted, as are those from addresses not allowed), each
//! holding at most [`CLIENT_BACKLOG`](shared::CLIENT_BACKLOG) bytes plus
//! [`client::TLS_BUFFER`]; a TLS handshake must end within
//! [`HANDSHAKE_DEADLINE`](shared::HANDSHAKE_DEADLINE); what a client sends is read and
//! dropped, a bounded amount per round. The listening socket is bound before `-Z`
//! ([`bind`]); the thread starts after it ([`Bound::serve`]).

mod client;
mod conn;
mod serve;
mod shared;

use std::io::{self, Write};
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use anyhow::{Context, Result};
use zcrx_capture::pcapfile::{Format, SaveFile};

use conn::Listener;
pub(crate) use conn::UNIX_PREFIX;
pub(crate) use shared::ServeConfig;
use shared::{Shared, PENDING_MAX, REJECTED};

/// `--pcap-over-ip`'s listening socket, bound, its thread not yet started.
pub(crate) struct Bound {
    listener: Listener,
    header: Vec<u8>,
    config: ServeConfig,
}

/// Binds `--pcap-over-ip`'s address, if asked (live captures only), for pcap of link type
/// `linktype` (LINKTYPE_*) and `snaplen`; says where on standard error (the port the system
/// chose for port 0), and what a bind beyond loopback exposes. An address in use or not
/// this host's is an error here, before the capture.
pub(crate) fn bind(
    config: Option<&ServeConfig>,
    linktype: u32,
    snaplen: u32,
) -> Result<Option<Bound>> {
    config
        .map(|c| Bound::new(c.clone(), linktype, snaplen))
        .transpose()
}

impl Bound {
    fn new(config: ServeConfig, linktype: u32, snaplen: u32) -> Result<Bound> {
        // The file header each client gets first: the one a capture file starts with.
        let mut head = SaveFile::new(Vec::new(), Format::Pcap, linktype, snaplen);
        head.flush().context("--pcap-over-ip: the pcap header")?;
        let header = std::mem::take(head.get_mut());
        let (listener, bound) = Listener::bind(&config.addr)?;
        let over = if config.tls.is_some() { " (TLS)" } else { "" };
        eprintln!(
            "zcap: serving PCAP-over-IP on {bound}{over} (at most {} MiB held for its clients)",
            memory_bound(config.max_connections) >> 20
        );
        if let Some(warning) = exposure(&config, &listener) {
            eprintln!("{warning}");
        }
        Ok(Bound {
            listener,
            header,
            config,
        })
    }

    /// Starts the server's thread (after `-Z`: it opens nothing).
    pub(crate) fn serve(self) -> Result<Server> {
        let shared = Arc::new(Shared::default());
        let s = shared.clone();
        let thread = std::thread::Builder::new()
            .name("zcap-pcap-over-ip".into())
            .spawn(move || serve::run(&self.listener, &self.header, &self.config, &s))
            .context("--pcap-over-ip: starting its thread")?;
        Ok(Server {
            shared,
            thread: Some(thread),
        })
    }
}

/// The most memory the server holds for its clients: each client's backlog and TLS
/// buffers, and the records the capture left for the server's thread.
pub(crate) fn memory_bound(max_connections: usize) -> usize {
    max_connections * (shared::CLIENT_BACKLOG + client::TLS_BUFFER) + PENDING_MAX
}

/// The warning a listener gets unless only who must can connect: on a UNIX socket, none
/// (its file's permissions decide); on loopback, that every local user gets every packet
/// unless clients show certificates; beyond it, without TLS, that anyone who can connect
/// gets every packet (and anyone on the path reads them), and with TLS but no client
/// certificates, that anyone who can connect still gets them.
fn exposure(config: &ServeConfig, listener: &Listener) -> Option<String> {
    exposure_of(config, listener.ip?)
}

fn exposure_of(config: &ServeConfig, bound: IpAddr) -> Option<String> {
    let addr = &config.addr;
    if bound.to_canonical().is_loopback() {
        return (!config.client_certs).then(|| format!(
            "zcap: warning: --pcap-over-ip {addr} is on loopback without client certificates: every user of this host can connect and read every captured packet (passwords in them included); serve it on a UNIX socket (--pcap-over-ip unix:PATH: only its owner may connect) or ask certificates (--pcap-over-ip-client-ca)"
        ));
    }
    let who = match config.allow.is_empty() {
        true => "anyone who can connect",
        false => "anyone who can connect from the --pcap-over-ip-allow networks",
    };
    match (config.tls.is_some(), config.client_certs) {
        (false, _) => Some(format!(
            "zcap: warning: --pcap-over-ip {addr} is not loopback and has no TLS: {who} gets every captured packet, and anyone on the path reads them too; give --pcap-over-ip-cert and --pcap-over-ip-key (and --pcap-over-ip-client-ca), or bind 127.0.0.1"
        )),
        (true, false) => Some(format!(
            "zcap: warning: --pcap-over-ip {addr} is not loopback and asks no client certificate: {who} gets every captured packet (over TLS); give --pcap-over-ip-client-ca"
        )),
        (true, true) => None,
    }
}

/// What the server did, for the final report.
pub(crate) struct Served {
    pub(crate) clients: u64,
    pub(crate) cut_off: u64,
    pub(crate) dropped: u64,
    /// Connections closed unserved, by reason ([`REJECTED`]).
    pub(crate) rejected: [u64; REJECTED.len()],
    pub(crate) tls: bool,
}

/// Stops the server (its clients get what is left) and says what it did.
pub(crate) fn report(server: Option<Server>) {
    if let Some(s) = server {
        let r = s.finish();
        let [address, limit, handshake, per_address, displaced] = r.rejected;
        let handshakes = match r.tls {
            true => format!(", {handshake} failed the TLS handshake"),
            false => String::new(),
        };
        eprintln!(
            "{} PCAP-over-IP client(s) served, {} cut off for reading too slowly, {address} refused by --pcap-over-ip-allow, {limit} over --pcap-over-ip-max-connections, {per_address} over one address' share, {displaced} handshakes displaced{handshakes}",
            r.clients, r.cut_off
        );
        if r.dropped > 0 {
            eprintln!(
                "{} packets not served: the server thread fell behind",
                r.dropped
            );
        }
    }
}

/// The serving server.
pub(crate) struct Server {
    shared: Arc<Shared>,
    /// Its thread; it returns whether it served over TLS.
    thread: Option<JoinHandle<bool>>,
}

impl Server {
    /// Where the capture writes the records: a pcap writer whose own file header is left
    /// out (each client gets one when it connects).
    pub(crate) fn writer(&self, linktype: u32, snaplen: u32) -> SaveFile<TeeSink> {
        let sink = TeeSink {
            shared: self.shared.clone(),
            skip: PCAP_HEADER,
        };
        SaveFile::new(sink, Format::Pcap, linktype, snaplen).flush_every(1)
    }

    /// What the server has done so far (`--metrics`).
    pub(crate) fn sample(&self) -> crate::metrics::ServedSample {
        let s = &self.shared;
        let n = |c: &AtomicU64| c.load(Ordering::Relaxed);
        crate::metrics::ServedSample {
            clients: s.clients.load(Ordering::Relaxed) as u64,
            cut_off: n(&s.cut_off),
            dropped: n(&s.dropped),
            rejected: std::array::from_fn(|i| (REJECTED[i], n(&s.rejected[i]))),
        }
    }

    /// Stops: the clients get what is left (for up to a second), then their connections
    /// close.
    pub(crate) fn finish(mut self) -> Served {
        let s = &self.shared;
        s.stop.store(true, Ordering::Relaxed);
        let tls = self
            .thread
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or(false);
        let n = |c: &AtomicU64| c.load(Ordering::Relaxed);
        Served {
            clients: n(&s.served),
            cut_off: n(&s.cut_off),
            dropped: n(&s.dropped),
            rejected: std::array::from_fn(|i| n(&s.rejected[i])),
            tls,
        }
    }
}

/// A pcap file header's length.
const PCAP_HEADER: usize = 24;

/// The capture side: takes whole records (its `SaveFile` hands over after each one), the
/// first `skip` bytes (the writer's own file header) left out.
pub(crate) struct TeeSink {
    shared: Arc<Shared>,
    skip: usize,
}

impl TeeSink {
    /// Whether any client gets the stream (if none, records need not be made: one that
    /// comes later starts at the next record).
    #[inline]
    pub(crate) fn wanted(&self) -> bool {
        self.shared.clients.load(Ordering::Relaxed) > 0
    }
}

impl Write for TeeSink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let skip = self.skip.min(buf.len());
        self.skip -= skip;
        let record = &buf[skip..];
        let mut p = self
            .shared
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if p.len() + record.len() > PENDING_MAX {
            self.shared.dropped.fetch_add(1, Ordering::Relaxed);
        } else {
            p.extend_from_slice(record);
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(allow: &[&str]) -> ServeConfig {
        ServeConfig {
            addr: "0.0.0.0:0".into(),
            tls: None,
            client_certs: false,
            allow: allow.iter().map(|a| a.parse().unwrap()).collect(),
            max_connections: 8,
        }
    }

    #[test]
    fn the_allow_list_takes_v4_v6_and_mapped_v4() {
        let c = config(&["127.0.0.1/32", "198.18.0.0/15", "fd00::/8"]);
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        assert!(c.allows(ip("127.0.0.1")));
        assert!(c.allows(ip("::ffff:127.0.0.1")));
        assert!(c.allows(ip("198.19.255.1")));
        assert!(c.allows(ip("fd12::1")));
        assert!(!c.allows(ip("127.0.0.2")));
        assert!(!c.allows(ip("::1")));
        assert!(!c.allows(ip("198.20.0.1")));
        assert!(config(&[]).allows(ip("203.0.113.9")));
    }

    #[test]
    fn a_wider_bind_is_warned_of_unless_tls_and_client_certificates() {
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        let mut c = config(&[]);
        for local in ["127.0.0.1", "::1"] {
            let w = exposure_of(&c, ip(local)).unwrap();
            assert!(
                w.contains("every user of this host") && w.contains("unix:PATH"),
                "{w}"
            );
        }
        let w = exposure_of(&c, ip("0.0.0.0")).unwrap();
        assert!(
            w.contains("has no TLS") && w.contains("every captured packet"),
            "{w}"
        );
        c.allow = vec!["10.0.0.0/8".parse().unwrap()];
        let w = exposure_of(&c, ip("::")).unwrap();
        assert!(w.contains("from the --pcap-over-ip-allow networks"), "{w}");
        c.client_certs = true;
        assert!(exposure_of(&c, ip("0.0.0.0"))
            .unwrap()
            .contains("has no TLS"));
        assert!(exposure_of(&c, ip("127.0.0.1")).is_none());
    }
}
