//! The server's thread: each round it accepts (refusing addresses not allowed and
//! connections over the limit), reads and drops what clients sent (moving TLS handshakes
//! on), hands out what the capture left, and writes, until told to stop.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::client::{Client, Received};
use super::conn::Listener;
use super::shared::{
    per_address, ServeConfig, Shared, ADDRESS, ADDRESS_LIMIT, CLIENT_BACKLOG, CONNECTION_LIMIT,
    DISPLACED, HANDSHAKE_DEADLINE, TLS_HANDSHAKE,
};

/// The pause between rounds.
const ROUND: Duration = Duration::from_millis(5);

/// Serves until `shared.stop`; returns whether it served over TLS.
pub(super) fn run(
    listener: &Listener,
    header: &[u8],
    config: &ServeConfig,
    shared: &Shared,
) -> bool {
    let mut clients: Vec<Client> = Vec::new();
    let mut stopping: Option<Instant> = None;
    // What the capture left, swapped out each round (its memory kept: no allocation).
    let mut new: Vec<u8> = Vec::new();
    let mut scratch = vec![0u8; 16 << 10];
    loop {
        accept(listener, config, shared, &mut clients);
        new.clear();
        std::mem::swap(
            &mut new,
            &mut *shared.pending.lock().unwrap_or_else(|p| p.into_inner()),
        );
        let mut kept = Vec::with_capacity(clients.len());
        for mut c in clients.drain(..) {
            if round(&mut c, header, &new, &mut scratch, shared) {
                kept.push(c);
            } else {
                c.close();
            }
        }
        clients = kept;
        let streaming = clients.iter().filter(|c| c.established).count();
        shared.clients.store(streaming, Ordering::Relaxed);
        if shared.stop.load(Ordering::Relaxed) {
            let since = *stopping.get_or_insert_with(Instant::now);
            let all_out = clients.iter().all(Client::all_out);
            if all_out || since.elapsed() > Duration::from_secs(1) {
                clients.into_iter().for_each(Client::close);
                return config.tls.is_some();
            }
        }
        std::thread::sleep(ROUND);
    }
}

/// Takes every connection waiting: from an address not allowed, from an address that holds
/// its share already ([`per_address`]), or over the limit, it is closed at once and counted
/// — unless a TLS handshake is still under way, whose oldest is closed instead (displaced):
/// a client that has proved nothing gives way to the newest, so that connections that never
/// finish a handshake cannot keep a certified client out.
fn accept(listener: &Listener, config: &ServeConfig, shared: &Shared, clients: &mut Vec<Client>) {
    while let Ok((stream, peer)) = listener.accept() {
        // A UNIX socket's clients passed its file's permissions: no address to check.
        if let Some(ip) = peer {
            if !config.allows(ip) {
                shared.count(&shared.rejected[ADDRESS]);
                continue;
            }
            // One share per IPv4 address, per IPv6 /64.
            let share = Some(crate::metrics::share_of(ip));
            let from_there = clients
                .iter()
                .filter(|c| c.peer.map(crate::metrics::share_of) == share)
                .count();
            if from_there >= per_address(config.max_connections) {
                shared.count(&shared.rejected[ADDRESS_LIMIT]);
                continue;
            }
        }
        if clients.len() >= config.max_connections {
            // Clients are kept in the order they came: the first handshaking is the oldest.
            match clients.iter().position(Client::handshaking) {
                Some(oldest) => {
                    clients.remove(oldest).close();
                    shared.count(&shared.rejected[DISPLACED]);
                }
                None => {
                    shared.count(&shared.rejected[CONNECTION_LIMIT]);
                    continue;
                }
            }
        }
        let client = match &config.tls {
            None => Some(Client::plain(stream, peer)),
            Some(tls) => Client::tls(stream, peer, tls),
        };
        clients.extend(client);
    }
}

/// One client's round: what it sent read, its handshake's deadline, the stream started
/// once it is established, the new records queued (or the client cut off), its socket
/// written. False when it is to be closed.
fn round(c: &mut Client, header: &[u8], new: &[u8], scratch: &mut [u8], shared: &Shared) -> bool {
    match c.receive(scratch) {
        Received::Open => {}
        Received::Gone => return false,
        Received::HandshakeFailed => {
            shared.count(&shared.rejected[TLS_HANDSHAKE]);
            return false;
        }
    }
    if c.handshaking() {
        if c.since.elapsed() > HANDSHAKE_DEADLINE {
            shared.count(&shared.rejected[TLS_HANDSHAKE]);
            return false;
        }
        // The handshake's own messages.
        return c.push();
    }
    if !c.established {
        c.established = true;
        shared.count(&shared.served);
        c.queue(header);
    } else if c.backlog() + new.len() > CLIENT_BACKLOG {
        // Too slow: cut off, never waited for.
        shared.count(&shared.cut_off);
        return false;
    }
    c.queue(new);
    c.push()
}
