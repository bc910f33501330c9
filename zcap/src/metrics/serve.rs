//! The endpoint a scraper reads: bound before `-Z`, served from a thread of the capture's
//! scope (started after `-Z`), rebinding a port that was taken.
//!
//! Its bounds, whatever clients do: one accepting thread, and a thread per open connection
//! up to `--metrics-max-connections` (a connection from outside `--metrics-allow`, or over
//! the limit, is closed at accept and counted — unless an older one has not yet shown what
//! the endpoint asks, which is closed in its place: [`Admission`]); each connection lives at most [`http::REQUEST_DEADLINE`] plus
//! [`http::ANSWER_DEADLINE`] plus a second of lingering, reads at most [`http::MAX_HEAD`] bytes,
//! and runs at the lowest CPU priority (its TLS handshake or bcrypt never takes a CPU from
//! the capture). So zcap's threads, descriptors and memory stay bounded.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::thread::Scope;
use std::time::{Duration, Instant, SystemTime};

use super::http::{self, per_address, Endpoint, Rejection};
use super::sample::Sample;
use super::web_config::WebConfig;
use crate::listeners::Acceptor;
use crate::system;

/// How often a taken port is tried again.
pub(crate) const REBIND_EVERY: Duration = Duration::from_secs(1);

/// A connection thread's stack: the TLS handshake, bcrypt and the encoding need far less.
const CONNECTION_STACK: usize = 256 * 1024;

/// `--metrics`, as the command line asks it.
pub(crate) struct ServeConfig {
    /// Where (a port alone on the command line is 127.0.0.1's).
    pub(crate) addr: SocketAddr,
    /// `--web-config`, or plain HTTP.
    pub(crate) web: WebConfig,
    /// `--metrics-max-connections`.
    pub(crate) max_connections: usize,
    /// `--metrics-allow` (empty: every address).
    pub(crate) allow: Vec<ipnet::IpNet>,
}

impl ServeConfig {
    /// Whether a client from `ip` may connect.
    fn allows(&self, ip: IpAddr) -> bool {
        let ip = ip.to_canonical();
        self.allow.is_empty() || self.allow.iter().any(|net| net.contains(&ip))
    }
}

/// The server: answers scrapes until dropped.
pub(crate) struct Serving {
    stop: Arc<AtomicBool>,
}

impl Drop for Serving {
    fn drop(&mut self) {
        self.stop.store(true, Relaxed);
    }
}

/// Binds `addr`, non-blocking (the accepting thread waits in poll(2), looking at its stop
/// flag in between). Says on standard error where it serves (the port the system chose for
/// port 0).
fn bind(addr: SocketAddr, tls: bool) -> std::io::Result<Acceptor> {
    let (listener, bound) = Acceptor::bind(addr)?;
    let scheme = if tls { "https" } else { "http" };
    eprintln!("zcap: serving metrics on {scheme}://{bound}/metrics");
    Ok(listener)
}

/// The metrics port, bound (or taken by something else: said once, tried again later).
/// Once the monitor splits off, it holds the listener ([`crate::listeners`]).
pub(crate) struct Listening<'c> {
    config: &'c ServeConfig,
    listener: Acceptor,
    start: SystemTime,
}

/// Binds `--metrics`' address now, before `-Z` drops root (a port below 1024 needs it), and
/// says on standard error what a bind beyond loopback exposes. A port that is taken is said
/// once on standard error, not an error: the capture goes on.
pub(crate) fn listen(config: Option<&ServeConfig>) -> Option<Listening<'_>> {
    let config = config?;
    let addr = config.addr;
    if let Some(warning) = exposure(config) {
        eprintln!("{warning}");
    }
    let listener = match bind(addr, config.web.tls.is_some()) {
        Ok(listener) => listener,
        Err(e) => {
            eprintln!(
                "zcap: --metrics {addr}: {e}; capturing without metrics, trying again every {} s",
                REBIND_EVERY.as_secs()
            );
            Acceptor::unbound(addr)
        }
    };
    Some(Listening {
        config,
        listener,
        start: SystemTime::now(),
    })
}

/// The warning a bind beyond loopback gets: without TLS, what anyone who can connect (or
/// read the path) gets; with TLS but no authentication, that anyone who connects reads the
/// counters.
fn exposure(config: &ServeConfig) -> Option<String> {
    let addr = config.addr;
    if addr.ip().to_canonical().is_loopback() {
        return None;
    }
    let web = &config.web;
    let authenticated = web.auth.is_some() || web.client_certs;
    match (web.tls.is_some(), authenticated) {
        (false, false) => Some(format!(
            "zcap: warning: --metrics {addr} is not loopback and has no TLS: anyone who can connect reads the capture's counters (packets, drops, flows, files, clients), and anyone on the path too; give --web-config with tls_server_config and basic_auth_users, or bind 127.0.0.1"
        )),
        (false, true) => Some(format!(
            "zcap: warning: --metrics {addr} is not loopback and has no TLS: anyone on the path reads the capture's counters and the basic-auth passwords; add tls_server_config to --web-config"
        )),
        (true, false) => Some(format!(
            "zcap: warning: --metrics {addr} is not loopback and authenticates no client: anyone who can connect reads the capture's counters over TLS; add basic_auth_users or client_auth_type RequireAndVerifyClientCert to --web-config"
        )),
        (true, true) => None,
    }
}

/// Connections refused, by reason ([`Rejection::ALL`]'s order).
#[derive(Default)]
struct Rejections([AtomicU64; Rejection::ALL.len()]);

impl Rejections {
    fn count(&self, why: Rejection) {
        let i = Rejection::ALL.iter().position(|r| *r == why).unwrap_or(0);
        self.0[i].fetch_add(1, Relaxed);
    }

    fn sample(&self) -> Vec<(&'static str, u64)> {
        Rejection::ALL
            .iter()
            .zip(&self.0)
            .map(|(r, n)| (r.label(), n.load(Relaxed)))
            .collect()
    }
}

impl<'c> Listening<'c> {
    /// Serves `sample()` from a thread of `s` until the returned [`Serving`] is dropped; a
    /// port that was taken is tried again every [`REBIND_EVERY`].
    pub(crate) fn serve<'s, 'e: 's>(
        self,
        s: &'s Scope<'s, 'e>,
        sample: impl Fn() -> Sample + Send + Sync + 's,
    ) -> Serving
    where
        'c: 's,
    {
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        s.spawn(move || self.run(&stopped, sample));
        Serving { stop }
    }

    /// Accepts until stopped; each connection on a thread of its own (joined before this
    /// returns).
    fn run(mut self, stopped: &AtomicBool, sample: impl Fn() -> Sample + Sync) {
        let rejections = Rejections::default();
        let sample = || {
            let mut s = sample();
            s.metrics_rejected = rejections.sample();
            s
        };
        let endpoint = Endpoint {
            tls: self.config.web.tls.as_ref(),
            auth: self.config.web.auth.as_ref(),
            sample: &sample,
            start: self.start,
            stop: stopped,
        };
        let admission = Admission::new(self.config.max_connections);
        let mut last_try = Instant::now();
        std::thread::scope(|conns| {
            // The connections' threads not joined yet. A thread that has given its place
            // back still runs for a moment; it counts here until it is joined, so that
            // threads stay within the limit plus one however fast clients come and go.
            let mut threads = Vec::new();
            while !stopped.load(Relaxed) {
                if !self.listener.is_bound() {
                    self.rebind(&mut last_try);
                    continue;
                }
                let Some((stream, peer)) = accept(&self.listener) else {
                    continue;
                };
                if !self.config.allows(peer) {
                    rejections.count(Rejection::NotAllowed);
                    continue;
                }
                join_finished(&mut threads);
                if threads.len() > self.config.max_connections {
                    rejections.count(Rejection::ConnectionLimit);
                    continue;
                }
                // One share per IPv4 address, per IPv6 /64.
                let ip = http::share_of(peer);
                let Some(place) = admission.admit(ip, stream, &rejections) else {
                    continue;
                };
                let (endpoint, admission, rejections) = (&endpoint, &admission, &rejections);
                let left = place.clone();
                let spawned = std::thread::Builder::new()
                    .name("zcap-metrics".into())
                    .stack_size(CONNECTION_STACK)
                    .spawn_scoped(conns, move || {
                        system::background_thread();
                        let served = http::connection(&place.stream, endpoint, &place.proven);
                        // A displaced connection was counted as such.
                        let held = admission.leave(&place);
                        if let Err(why) = served {
                            if !endpoint.stop.load(Relaxed) && held {
                                rejections.count(why);
                            }
                        }
                    });
                match spawned {
                    Ok(thread) => threads.push(thread),
                    Err(_) => {
                        admission.leave(&left);
                        rejections.count(Rejection::ConnectionLimit);
                    }
                }
            }
        });
    }

    /// No listener (the port was taken): waits 100 ms and, every [`REBIND_EVERY`], tries
    /// the port again (the same address as before -Z: the one socket zcap binds after it,
    /// by the monitor once it split off).
    fn rebind(&mut self, last_try: &mut Instant) {
        let addr = self.config.addr;
        std::thread::sleep(Duration::from_millis(100));
        if last_try.elapsed() >= REBIND_EVERY {
            *last_try = Instant::now();
            if self.listener.rebind().is_ok() {
                eprintln!("zcap: --metrics {addr}: serving metrics now");
            }
        }
    }
}

/// The connections open, in all and per client address, against
/// `--metrics-max-connections`; when every place is taken, the oldest connection that has
/// not shown what the endpoint asks (its first byte, its handshake, its request, its
/// password) is closed to make room: clients that prove nothing cannot keep a scraper out.
struct Admission {
    max: usize,
    state: Mutex<Places>,
}

#[derive(Default)]
struct Places {
    /// The connections open, oldest first: at most `max`.
    open: std::collections::VecDeque<Arc<Place>>,
    /// Connections open per client share (an IPv4 address, an IPv6 /64): at most `max`
    /// entries.
    by_address: HashMap<IpAddr, usize>,
    /// Displaced connections whose threads have not left yet.
    ending: usize,
}

/// One connection's place.
struct Place {
    ip: IpAddr,
    /// Set by the connection once it has shown what the endpoint asks.
    proven: AtomicBool,
    /// Its socket: the connection's thread reads and writes it, the acceptor shuts it down
    /// if it is displaced.
    stream: TcpStream,
}

impl Admission {
    fn new(max: usize) -> Admission {
        Admission {
            max,
            state: Mutex::new(Places::default()),
        }
    }

    /// Takes a place for `stream`, a connection from `ip` (its share), displacing the
    /// oldest unproven one of the share if the share is full, and the oldest unproven one of
    /// all if every place is taken; or counts in `rejections` why there is none (the places
    /// of the share, or all places, taken by proven connections).
    fn admit(&self, ip: IpAddr, stream: TcpStream, rejections: &Rejections) -> Option<Arc<Place>> {
        let mut places = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let share_full = places.by_address.get(&ip).copied().unwrap_or(0) >= per_address(self.max);
        // One displaced connection still ending at a time: its thread counts until it
        // leaves, so threads stay within the limit plus one.
        let displacing = share_full || places.open.len() >= self.max;
        if displacing && places.ending > 0 {
            rejections.count(match share_full {
                true => Rejection::AddressLimit,
                false => Rejection::ConnectionLimit,
            });
            return None;
        }
        if share_full && !places.displace(|p| p.ip == ip, rejections) {
            rejections.count(Rejection::AddressLimit);
            return None;
        }
        if places.open.len() >= self.max && !places.displace(|_| true, rejections) {
            rejections.count(Rejection::ConnectionLimit);
            return None;
        }
        let place = Arc::new(Place {
            ip,
            proven: AtomicBool::new(false),
            stream,
        });
        *places.by_address.entry(ip).or_default() += 1;
        places.open.push_back(place.clone());
        Some(place)
    }

    /// Gives back `place`; false if it was displaced (its place went then).
    fn leave(&self, place: &Arc<Place>) -> bool {
        let mut places = self.state.lock().unwrap_or_else(|p| p.into_inner());
        match places.open.iter().position(|p| Arc::ptr_eq(p, place)) {
            Some(i) => {
                places.open.remove(i);
                places.release(place.ip);
                true
            }
            None => {
                places.ending = places.ending.saturating_sub(1);
                false
            }
        }
    }
}

impl Places {
    /// Closes the oldest connection of those `which` picks that has not proven itself, and
    /// counts it; false if there is none.
    fn displace(&mut self, which: impl Fn(&Place) -> bool, rejections: &Rejections) -> bool {
        let oldest = self
            .open
            .iter()
            .position(|p| which(p) && !p.proven.load(Relaxed));
        let Some(oldest) = oldest else {
            return false;
        };
        let gone = self.open.remove(oldest).expect("in range");
        let _ = gone.stream.shutdown(std::net::Shutdown::Both);
        self.release(gone.ip);
        self.ending += 1;
        rejections.count(Rejection::Displaced);
        true
    }

    fn release(&mut self, ip: IpAddr) {
        if let Some(n) = self.by_address.get_mut(&ip) {
            *n -= 1;
            if *n == 0 {
                self.by_address.remove(&ip);
            }
        }
    }
}

/// Joins the threads whose work is done: a thread counts until it has exited.
fn join_finished(threads: &mut Vec<std::thread::ScopedJoinHandle<'_, ()>>) {
    let mut i = 0;
    while i < threads.len() {
        if threads[i].is_finished() {
            // A connection's panic stays its own: the endpoint serves on.
            let _ = threads.swap_remove(i).join();
        } else {
            i += 1;
        }
    }
}

/// The next connection and where it comes from, after waiting up to 100 ms for one; `None`
/// if none came (or the accept failed: out of descriptors, say, which the next round tries
/// again).
fn accept(listener: &Acceptor) -> Option<(TcpStream, IpAddr)> {
    match listener.accept() {
        Ok(fd) => {
            let stream = TcpStream::from(fd);
            // A connection reset before it was looked at has no peer: dropped.
            let peer = stream.peer_addr().ok()?;
            Some((stream, peer.ip().to_canonical()))
        }
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
            listener.wait(Duration::from_millis(100));
            None
        }
        Err(_) => {
            // EMFILE and the like: do not spin.
            std::thread::sleep(Duration::from_millis(50));
            None
        }
    }
}
