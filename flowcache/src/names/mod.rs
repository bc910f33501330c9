//! What a flow is, read from the first payload bytes of each direction (feature `names`): the
//! TLS ClientHello's server name, ALPN, offered versions and JA4 fingerprint and the
//! ServerHello's choice, the same from a QUIC Initial (versions 1 and 2, decrypted), the DNS
//! question and answer count over UDP and TCP, and the first HTTP/1.x request and response.
//!
//! The parsers ([`ClientHello`], [`ServerHello`], [`quic::client_initial_crypto`],
//! [`DnsMessage`], [`HttpRequest`], [`HttpResponse`]) work on byte slices, never panic, and
//! return an error enum for what they cannot read (`Incomplete` when more bytes may help).
//! [`FlowNames`] feeds a flow's packets to them through a per-direction [`Reassembly`].
//!
//! # Memory bound
//!
//! Per flow, [`FlowNames`] is `size_of::<FlowNames>()` inline ([`FLOW_NAMES_INLINE_BOUND`]
//! at most), plus for each direction at most one [`PAYLOAD_BUDGET`]-byte buffer, allocated on
//! the first payload byte and freed once the direction's names are read or its budget is
//! spent, plus the names found (strings copied from inside the budget, so at most
//! [`PAYLOAD_BUDGET`] bytes a direction). Parsing itself uses a [`PAYLOAD_BUDGET`]-byte stack
//! buffer for a handshake split across records, and QUIC decrypts one datagram into a copy
//! of at most its own length, freed before the call returns. So a flow holds at most
//! [`FLOW_NAMES_HEAP_BOUND`] bytes of heap at any time, however many segments it sends
//! ([`SEGMENT_BUDGET`] of them are looked at: a flood of tiny or out-of-order fragments stops
//! there), and a flow that sends no payload (a half-open handshake) holds none.

mod dns;
mod http;
pub mod quic;
mod reassembly;
mod tls;

pub use dns::{DnsError, DnsMessage, DnsQuestion};
pub use http::{HttpError, HttpRequest, HttpResponse};
pub use quic::QuicError;
pub use reassembly::{Placed, Reassembly, PAYLOAD_BUDGET, SEGMENT_BUDGET};
pub use tls::{is_grease, ClientHello, HelloTransport, ServerHello, TlsError};

use crate::Direction;

/// The most heap one [`FlowNames`] holds: two payload buffers and names copied from inside
/// both budgets.
pub const FLOW_NAMES_HEAP_BOUND: usize = 4 * PAYLOAD_BUDGET;
/// The most `size_of::<FlowNames>()` is (checked by a test).
pub const FLOW_NAMES_INLINE_BOUND: usize = 1024;

/// A TLS or QUIC ClientHello and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Hello {
    /// The fields and JA4.
    pub hello: ClientHello,
    /// The QUIC version it came in, or `None` for TLS over TCP.
    pub quic_version: Option<u32>,
    /// The direction that sent it (the client's).
    pub dir: Direction,
}

/// The names read from a flow so far.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Names {
    /// The client's TLS or QUIC ClientHello.
    pub client_hello: Option<Hello>,
    /// The server's TLS ServerHello (over TCP; a QUIC server's Initials are not read).
    pub server_hello: Option<ServerHello>,
    /// The first DNS query of the flow.
    pub dns_query: Option<DnsMessage>,
    /// The first DNS response of the flow.
    pub dns_response: Option<DnsMessage>,
    /// The first HTTP/1.x request.
    pub http_request: Option<HttpRequest>,
    /// The first HTTP/1.x response.
    pub http_response: Option<HttpResponse>,
}

/// One direction's progress.
#[derive(Debug, Clone, Default)]
struct Side {
    stream: Reassembly,
    /// Nothing more to read in this direction (names found, or not a protocol read here).
    done: bool,
}

/// The TCP flags [`FlowNames::tcp`] looks at.
const SYN: u8 = 0x02;

/// DNS's port (DNS is read only on flows to or from it).
pub const DNS_PORT: u16 = 53;

/// A flow's names, from its packets in arrival order. Reads at most the budget of each
/// direction (see the [module docs](self) for the memory bound), then nothing.
#[derive(Debug, Clone, Default)]
pub struct FlowNames {
    sides: [Side; 2],
    names: Names,
    /// QUIC: the Destination Connection ID of the client's first Initial.
    quic_dcid: [u8; quic::MAX_CID],
    quic_dcid_len: u8,
    quic_dir: Option<Direction>,
}

impl FlowNames {
    /// Nothing read yet (no allocation).
    pub fn new() -> FlowNames {
        FlowNames::default()
    }

    /// The names found so far.
    pub fn names(&self) -> &Names {
        &self.names
    }

    /// Heap bytes held by the reassembly buffers now.
    pub fn buffer_bytes(&self) -> usize {
        self.sides.iter().map(|s| s.stream.heap_bytes()).sum()
    }

    /// Whether both directions are finished: later packets cost a check and nothing else.
    pub fn is_done(&self) -> bool {
        self.sides.iter().all(|s| s.done)
    }

    /// A TCP segment of direction `dir`: its sequence number, flags and payload;
    /// `ports` are (source, destination) of the segment.
    pub fn tcp(&mut self, dir: Direction, seq: u32, flags: u8, payload: &[u8], ports: (u16, u16)) {
        let side = &mut self.sides[dir as usize];
        if side.done {
            return;
        }
        if flags & SYN != 0 {
            side.stream.syn(seq);
        }
        if payload.is_empty() {
            return;
        }
        if matches!(side.stream.insert_tcp(seq, payload), Placed::OverBudget) {
            side.stream.release();
            side.done = true;
            return;
        }
        let bytes = side.stream.contiguous();
        if bytes.is_empty() {
            return;
        }
        let dns = ports.0 == DNS_PORT || ports.1 == DNS_PORT;
        let finished = read_stream(&mut self.names, dir, bytes, dns);
        let spent = side.stream.is_spent();
        if finished || spent {
            side.stream.release();
            side.done = true;
        }
    }

    /// A UDP datagram of direction `dir`; `ports` are (source, destination).
    pub fn udp(&mut self, dir: Direction, payload: &[u8], ports: (u16, u16)) {
        let d = dir as usize;
        if self.sides[d].done || payload.is_empty() {
            return;
        }
        if ports.0 == DNS_PORT || ports.1 == DNS_PORT {
            if let Ok(m) = DnsMessage::parse(payload) {
                let slot = if m.response {
                    &mut self.names.dns_response
                } else {
                    &mut self.names.dns_query
                };
                slot.get_or_insert(m);
            }
            self.sides[d].done = true;
            return;
        }
        self.quic(dir, payload);
    }

    fn quic(&mut self, dir: Direction, payload: &[u8]) {
        let d = dir as usize;
        let Ok((_, dcid)) = quic::long_header(payload) else {
            // Not QUIC: a datagram protocol not read here.
            self.sides[d].done = self.quic_dir != Some(dir) || self.sides[d].stream.is_spent();
            return;
        };
        match self.quic_dir {
            None => {
                self.quic_dcid[..dcid.len()].copy_from_slice(dcid);
                self.quic_dcid_len = dcid.len() as u8;
                self.quic_dir = Some(dir);
            }
            Some(q) if q != dir => {
                // The server's packets are under the server's keys: not read here.
                self.sides[d].done = true;
                return;
            }
            Some(_) => {}
        }
        let odcid = &self.quic_dcid[..usize::from(self.quic_dcid_len)];
        let stream = &mut self.sides[d].stream;
        let mut over = false;
        let version = quic::client_initial_crypto(payload, odcid, |offset, data| {
            over |= matches!(stream.insert_at(offset, data), Placed::OverBudget);
        });
        let Ok(version) = version else {
            if self.sides[d].stream.segments() == 0 {
                // The first long-header datagram did not decrypt: not a client Initial.
                self.sides[d].done = true;
            }
            return;
        };
        let side = &mut self.sides[d];
        let finished = match ClientHello::parse(side.stream.contiguous(), HelloTransport::Quic) {
            Ok(hello) => {
                self.names.client_hello = Some(Hello {
                    hello,
                    quic_version: Some(version),
                    dir,
                });
                true
            }
            Err(TlsError::Incomplete) => false,
            Err(_) => true,
        };
        if finished || over || side.stream.is_spent() {
            side.stream.release();
            side.done = true;
        }
    }
}

/// Reads a TCP direction's contiguous first bytes; returns whether the direction is finished
/// (names read, or not a protocol read here).
fn read_stream(names: &mut Names, dir: Direction, bytes: &[u8], dns: bool) -> bool {
    if dns {
        return match DnsMessage::parse_tcp(bytes) {
            Ok(m) => {
                let slot = if m.response {
                    &mut names.dns_response
                } else {
                    &mut names.dns_query
                };
                slot.get_or_insert(m);
                true
            }
            Err(DnsError::Incomplete) => false,
            Err(_) => true,
        };
    }
    if bytes[0] == 22 {
        // A handshake record: a ClientHello from the client, a ServerHello from the server.
        return match ClientHello::parse_records(bytes) {
            Ok(hello) => {
                names.client_hello.get_or_insert(Hello {
                    hello,
                    quic_version: None,
                    dir,
                });
                true
            }
            Err(TlsError::UnexpectedMessage(2)) => match ServerHello::parse_records(bytes) {
                Ok(s) => {
                    names.server_hello.get_or_insert(s);
                    true
                }
                Err(e) => e != TlsError::Incomplete,
            },
            Err(e) => e != TlsError::Incomplete,
        };
    }
    if bytes.starts_with(b"HTTP/") || b"HTTP/".starts_with(bytes) {
        return match HttpResponse::parse(bytes) {
            Ok(r) => {
                names.http_response.get_or_insert(r);
                true
            }
            Err(e) => e != HttpError::Incomplete,
        };
    }
    match HttpRequest::parse(bytes) {
        Ok(r) => {
            names.http_request.get_or_insert(r);
            true
        }
        Err(e) => e != HttpError::Incomplete,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_size_is_within_the_written_bound() {
        assert!(
            std::mem::size_of::<FlowNames>() <= FLOW_NAMES_INLINE_BOUND,
            "{}",
            std::mem::size_of::<FlowNames>()
        );
    }
}
