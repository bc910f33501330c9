//! One PCAP-over-IP client on the server's thread: a non-blocking socket, plain or driven
//! through a rustls `ServerConnection` (`read_tls`/`write_tls`), and the bytes waiting for
//! it. What it sends is read and dropped, at most [`RECEIVE_PER_ROUND`] bytes a round.

use std::io::{self, Read, Write};
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Instant;

use rustls::{ServerConfig, ServerConnection};

use super::conn::Conn;
use crate::tls;

/// Bytes of TLS records (and of plaintext not yet sealed into them) a TLS client's
/// connection may hold beside its waiting records; the records wait in [`Client::waiting`],
/// where the backlog rule counts them.
pub(super) const TLS_BUFFER: usize = 256 << 10;

/// Bytes read (and dropped) from a client per round of the server's thread.
pub(super) const RECEIVE_PER_ROUND: usize = 64 << 10;

/// A connected client.
pub(super) struct Client {
    stream: Conn,
    /// Its TLS connection (`None`: plain TCP).
    tls: Option<ServerConnection>,
    /// Bytes for it, `sent` of them handed on (to the socket, or into the TLS connection).
    waiting: Vec<u8>,
    sent: usize,
    /// Where it connects from (none over a UNIX socket).
    pub(super) peer: Option<IpAddr>,
    /// When it connected: the TLS handshake's deadline runs from then.
    pub(super) since: Instant,
    /// Whether it gets the stream (plain: at once; TLS: once the handshake is done).
    pub(super) established: bool,
    /// Whether what it sends is still read (a plain client may end its half of the
    /// connection and still read).
    reading: bool,
}

/// What reading a client found.
pub(super) enum Received {
    /// Nothing that ends it.
    Open,
    /// It closed (a TLS client's close_notify, a TLS connection cut, an error).
    Gone,
    /// Its TLS handshake failed.
    HandshakeFailed,
}

impl Client {
    /// A plain client: it gets the stream from now on.
    pub(super) fn plain(stream: Conn, peer: Option<IpAddr>) -> Client {
        Client {
            stream,
            peer,
            tls: None,
            waiting: Vec::new(),
            sent: 0,
            since: Instant::now(),
            established: false,
            reading: true,
        }
    }

    /// A TLS client, its handshake to come.
    pub(super) fn tls(
        stream: Conn,
        peer: Option<IpAddr>,
        config: &Arc<ServerConfig>,
    ) -> Option<Client> {
        let mut conn = ServerConnection::new(config.clone()).ok()?;
        conn.set_buffer_limit(Some(TLS_BUFFER));
        Some(Client {
            tls: Some(conn),
            ..Client::plain(stream, peer)
        })
    }

    /// Whether its TLS handshake is still under way.
    pub(super) fn handshaking(&self) -> bool {
        self.tls.as_ref().is_some_and(|c| c.is_handshaking())
    }

    /// Queues `bytes` for it (whole records, or the pcap header).
    pub(super) fn queue(&mut self, bytes: &[u8]) {
        self.waiting.extend_from_slice(bytes);
    }

    /// Reads what it sent, at most [`RECEIVE_PER_ROUND`] bytes, and drops it; for a TLS
    /// client this moves the handshake on.
    pub(super) fn receive(&mut self, scratch: &mut [u8]) -> Received {
        if !self.reading {
            return Received::Open;
        }
        let mut budget = RECEIVE_PER_ROUND;
        while budget > 0 {
            let got = match &mut self.tls {
                None => self.stream.read(scratch),
                Some(conn) => conn.read_tls(&mut self.stream),
            };
            match got {
                Ok(0) if self.tls.is_none() => {
                    self.reading = false;
                    return Received::Open;
                }
                Ok(0) => return Received::Gone,
                Ok(n) => budget = budget.saturating_sub(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Received::Open,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return Received::Gone,
            }
            if let Some(conn) = &mut self.tls {
                if let Some(end) = Client::decrypt(conn, &mut self.stream, scratch) {
                    return end;
                }
            }
        }
        Received::Open
    }

    /// Processes the TLS records read, dropping their plaintext; `Some` if that ends the
    /// client.
    fn decrypt(
        conn: &mut ServerConnection,
        stream: &mut Conn,
        scratch: &mut [u8],
    ) -> Option<Received> {
        let handshaking = conn.is_handshaking();
        match conn.process_new_packets() {
            Err(e) => {
                if tls::peer_spoke_tls(&e) {
                    // The alert that says why (best effort: the socket may not take it).
                    let _ = conn.write_tls(stream);
                }
                Some(match handshaking {
                    true => Received::HandshakeFailed,
                    false => Received::Gone,
                })
            }
            Ok(state) => {
                let mut left = state.plaintext_bytes_to_read();
                while left > 0 {
                    match conn.reader().read(scratch) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => left = left.saturating_sub(n),
                    }
                }
                state.peer_has_closed().then_some(Received::Gone)
            }
        }
    }

    /// Writes what it can without blocking; false when the client is gone.
    pub(super) fn push(&mut self) -> bool {
        let alive = match &mut self.tls {
            None => write_plain(&mut self.stream, &self.waiting, &mut self.sent),
            Some(conn) => write_tls(conn, &mut self.stream, &self.waiting, &mut self.sent),
        };
        if self.sent == self.waiting.len() {
            self.waiting.clear();
            self.sent = 0;
        } else if self.sent > self.waiting.len() / 2 {
            self.waiting.drain(..self.sent);
            self.sent = 0;
        }
        alive
    }

    /// Bytes waiting for it and not yet handed on (its TLS connection holds at most
    /// [`TLS_BUFFER`] more).
    pub(super) fn backlog(&self) -> usize {
        self.waiting.len() - self.sent
    }

    /// Whether everything queued for it has reached its socket.
    pub(super) fn all_out(&self) -> bool {
        self.backlog() == 0 && !self.tls.as_ref().is_some_and(|c| c.wants_write())
    }

    /// Closes the connection (a TLS client is told first, if its socket takes it).
    pub(super) fn close(mut self) {
        if let Some(conn) = &mut self.tls {
            if !conn.is_handshaking() {
                conn.send_close_notify();
                let _ = conn.write_tls(&mut self.stream);
            }
        }
        self.stream.shutdown();
    }
}

/// A plain client's bytes to its socket, as far as it takes them.
fn write_plain(stream: &mut Conn, waiting: &[u8], sent: &mut usize) -> bool {
    while *sent < waiting.len() {
        match stream.write(&waiting[*sent..]) {
            Ok(0) => return false,
            Ok(n) => *sent += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
    true
}

/// A TLS client's bytes sealed into records (as far as its buffer takes them) and the
/// records to its socket (as far as it takes them), in turn until neither moves; its
/// handshake messages go out the same way.
fn write_tls(
    conn: &mut ServerConnection,
    stream: &mut Conn,
    waiting: &[u8],
    sent: &mut usize,
) -> bool {
    loop {
        let mut moved = false;
        if *sent < waiting.len() && !conn.is_handshaking() {
            match conn.writer().write(&waiting[*sent..]) {
                Ok(n) => {
                    *sent += n;
                    moved |= n > 0;
                }
                Err(_) => return false,
            }
        }
        while conn.wants_write() {
            match conn.write_tls(stream) {
                Ok(0) => return false,
                Ok(_) => moved = true,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
        if !moved {
            return true;
        }
    }
}
