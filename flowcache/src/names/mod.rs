//! What a flow is, read from the first payload bytes of each direction (feature `names`): the
//! TLS ClientHello's server name, ALPN, offered versions and JA4 fingerprint and the
//! ServerHello's choice (also after a text protocol's STARTTLS, [`STARTTLS_PORTS`]), the
//! same from a QUIC Initial (versions 1 and 2, decrypted), the DNS question and answer
//! count over UDP and TCP (DNS, mDNS, LLMNR and NetBIOS name service: [`DNS_PORTS`]), and
//! the first HTTP/1.x request and response.
//!
//! The parsers ([`ClientHello`], [`ServerHello`], [`quic::client_initial_crypto`],
//! [`DnsMessage`], [`HttpRequest`], [`HttpResponse`]) work on byte slices, never panic, and
//! return an error enum for what they cannot read (`Incomplete` when more bytes may help).
//! [`FlowNames`] feeds a flow's packets to them through a per-direction [`Reassembly`].
//!
//! # Memory bound
//!
//! Per flow, [`FlowNames`] is `size_of::<FlowNames>()` inline ([`FLOW_NAMES_INLINE_BOUND`]
//! at most), plus for each direction at most one [`PAYLOAD_BUDGET`]-byte buffer, allocated
//! only when a direction's first segment does not hold what is read whole (a ClientHello in
//! several segments, a segment out of order) and freed once the direction's names are read
//! or its budget is spent, plus the names found (strings copied from inside the budget, so at most
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
mod text;
mod tls;

pub use dns::{netbios_name, DnsAnswer, DnsError, DnsMessage, DnsQuestion};
pub use http::{HttpError, HttpRequest, HttpResponse};
pub use quic::QuicError;
pub use reassembly::{Placed, Reassembly, PAYLOAD_BUDGET, SEGMENT_BUDGET};
pub use tls::{is_grease, ClientHello, HelloTransport, ServerHello, TlsError, MAX_ALPN};

use crate::Direction;

/// The most heap one [`FlowNames`] holds: two payload buffers (2 x [`PAYLOAD_BUDGET`]), and per
/// direction the names read from its budget: strings no longer than the bytes they came from
/// (at most [`PAYLOAD_BUDGET`] together) plus the lists' own overhead (at most
/// [`MAX_ALPN`] ALPN entries of 24 bytes, 1.5 KiB) — 2 x (4 + 2) KiB — 20 KiB in all.
pub const FLOW_NAMES_HEAP_BOUND: usize = 5 * PAYLOAD_BUDGET;
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

impl Names {
    fn heap_bytes(&self) -> usize {
        let s = |s: &String| s.capacity();
        let hello = self.client_hello.as_ref().map_or(0, |h| {
            let h = &h.hello;
            h.server_name.as_ref().map_or(0, s)
                + h.alpn.capacity() * std::mem::size_of::<String>()
                + h.alpn.iter().map(s).sum::<usize>()
                + h.versions.capacity() * 2
                + h.ja4.capacity()
        });
        let dns = |m: &Option<DnsMessage>| {
            m.as_ref()
                .and_then(|m| m.question.as_ref())
                .map_or(0, |q| q.name.capacity())
        };
        let http = self.http_request.as_ref().map_or(0, |r| {
            r.method.capacity() + r.path.capacity() + r.host.as_ref().map_or(0, s)
        });
        hello + dns(&self.dns_query) + dns(&self.dns_response) + http
    }
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

/// DNS's port.
pub const DNS_PORT: u16 = 53;
/// NetBIOS name service's port (RFC 1002): DNS's messages, names in NetBIOS's encoding.
pub const NBNS_PORT: u16 = 137;
/// The ports whose flows' messages are read as DNS's: DNS, multicast DNS (RFC 6762), LLMNR
/// (RFC 4795) and NetBIOS name service ([`NBNS_PORT`], its names decoded).
pub const DNS_PORTS: [u16; 4] = [DNS_PORT, 5353, 5355, NBNS_PORT];

/// The ports of text protocols whose TLS begins after a command (STARTTLS): FTP's AUTH TLS
/// (21), SMTP (25, 587), POP3 (110), IMAP (143) and XMPP (5222, 5269). On their flows the
/// TLS handshake is looked for after the text that comes first.
pub const STARTTLS_PORTS: [u16; 7] = [21, 25, 110, 143, 587, 5222, 5269];

/// Whether a flow between `ports` (source, destination) may turn to TLS after a STARTTLS
/// command: one of them is one of [`STARTTLS_PORTS`].
pub fn is_starttls(ports: (u16, u16)) -> bool {
    either(ports, &STARTTLS_PORTS)
}

/// Whether a flow between `ports` (source, destination) carries DNS messages: one of them
/// is one of [`DNS_PORTS`].
pub fn is_dns(ports: (u16, u16)) -> bool {
    either(ports, &DNS_PORTS)
}

/// Whether either of `ports` is one of `list`.
fn either(ports: (u16, u16), list: &[u16]) -> bool {
    list.contains(&ports.0) || list.contains(&ports.1)
}

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

    /// Heap bytes held now: the reassembly buffers and the names' strings and lists (their
    /// capacities). At most [`FLOW_NAMES_HEAP_BOUND`].
    pub fn heap_bytes(&self) -> usize {
        let buffers: usize = self.sides.iter().map(|s| s.stream.heap_bytes()).sum();
        buffers + self.names.heap_bytes()
    }

    /// Whether both directions are finished: later packets cost a check and nothing else.
    pub fn is_done(&self) -> bool {
        self.sides.iter().all(|s| s.done)
    }

    /// Whether direction `dir` is finished: its later packets change nothing (a caller may
    /// skip them; the other direction may still be read).
    pub fn is_done_in(&self, dir: Direction) -> bool {
        self.sides[dir as usize].done
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
        let kind = match (is_dns(ports), is_starttls(ports)) {
            (true, _) => Stream::Dns,
            (_, true) => Stream::StartTls,
            _ => Stream::Other,
        };
        // The common case: the first segment holds what is read whole, and no buffer is
        // allocated at all.
        if side.stream.starts_stream(seq) && read_stream(&mut self.names, dir, payload, kind) {
            side.stream.release();
            side.done = true;
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
        let finished = read_stream(&mut self.names, dir, bytes, kind);
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
        if is_dns(ports) {
            if let Ok(mut m) = DnsMessage::parse(payload) {
                if either(ports, &[NBNS_PORT]) {
                    m.decode_netbios_name();
                }
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

/// What a TCP flow's ports say its streams are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stream {
    /// DNS messages, each after its length.
    Dns,
    /// A text protocol that may turn to TLS ([`STARTTLS_PORTS`]).
    StartTls,
    /// Whatever the first bytes say: TLS, HTTP.
    Other,
}

/// TLS's handshake record header: content type 22, major version 3.
const HANDSHAKE_RECORD: [u8; 2] = [22, 3];

/// Reads a TCP direction's contiguous first bytes; returns whether the direction is finished
/// (names read, or not a protocol read here).
fn read_stream(names: &mut Names, dir: Direction, bytes: &[u8], kind: Stream) -> bool {
    if kind == Stream::StartTls && bytes[0] != HANDSHAKE_RECORD[0] {
        // Text first (a greeting, commands, replies; none holds byte 22): the handshake, if
        // any, starts at the first record header after it. Until then, more is read, within
        // the direction's budget.
        return match bytes.windows(2).position(|w| w == HANDSHAKE_RECORD) {
            Some(at) => read_stream(names, dir, &bytes[at..], Stream::Other),
            None => false,
        };
    }
    if kind == Stream::Dns {
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
    use super::text::text;
    use super::*;

    use crate::testdata::names::{client_hello as hello, protect_initial as protect, records};

    const F: Direction = Direction::Forward;
    const R: Direction = Direction::Reverse;

    fn chrome_like() -> Vec<u8> {
        // A ClientHello of about 1.9 KB (an X25519MLKEM768 key share is 1216 bytes).
        let share = {
            let mut d = vec![0x04, 0xc4]; // client_shares length 1220
            d.extend(0x11ecu16.to_be_bytes());
            d.extend(1216u16.to_be_bytes());
            d.extend(std::iter::repeat_n(0x5a, 1216));
            d
        };
        hello(
            Some("pq.example.net"),
            &[&b"h2"[..], &b"http/1.1"[..]],
            &[0x1a1a, 0x1301, 0x1302, 0x1303, 0xc02b, 0xc02f],
            &[(43, vec![4, 0x3a, 0x3a, 3, 4]), (51, share)],
        )
    }

    #[test]
    fn a_client_hello_in_segments_out_of_order_with_retransmissions() {
        let msg = chrome_like();
        let stream = records(&msg, 1000); // a record layer split too
        let want = ClientHello::parse_records(&stream).unwrap();
        let isn = 4_000_000_000u32;
        let seg = |o: usize, n: usize| {
            (
                isn.wrapping_add(1 + o as u32),
                &stream[o..(o + n).min(stream.len())],
            )
        };
        let mut f = FlowNames::new();
        f.tcp(F, isn, SYN, &[], (50000, 443));
        f.tcp(R, 77, SYN | 0x10, &[], (443, 50000));
        for (seq, p) in [seg(900, 500), seg(300, 700), seg(300, 200), seg(0, 400)] {
            assert!(f.names().client_hello.is_none());
            f.tcp(F, seq, 0x18, p, (50000, 443));
        }
        let got = &f.names().client_hello.as_ref().unwrap();
        assert_eq!(got.hello, want);
        assert_eq!((got.dir, got.quic_version), (F, None));
        // The direction is finished: its buffer is freed and later segments cost nothing.
        assert_eq!(f.sides[0].stream.heap_bytes(), 0);
        f.tcp(F, isn + 5000, 0x18, &[1; 1000], (50000, 443));
        assert_eq!(f.sides[0].stream.heap_bytes(), 0);
    }

    #[test]
    fn a_flood_of_tiny_out_of_order_fragments_stays_within_the_bound() {
        let stream = records(&chrome_like(), 16_000);
        let mut f = FlowNames::new();
        f.tcp(F, 0, SYN, &[], (50001, 443));
        let mut peak = 0;
        // Backwards, one byte at a time, each sent three times.
        for i in (0..stream.len()).rev() {
            for _ in 0..3 {
                f.tcp(F, 1 + i as u32, 0x10, &stream[i..i + 1], (50001, 443));
                peak = peak.max(f.heap_bytes());
            }
        }
        assert!(peak <= PAYLOAD_BUDGET, "{peak}");
        assert!(peak <= FLOW_NAMES_HEAP_BOUND);
        assert!(f.sides[0].done, "eight segments spend the budget");
        assert!(f.names().client_hello.is_none());
        assert_eq!(f.heap_bytes(), 0);
        // A half-open handshake (SYN only) holds nothing.
        let mut h = FlowNames::new();
        h.tcp(F, 9, SYN, &[], (50002, 443));
        assert_eq!(h.heap_bytes(), 0);
    }

    #[test]
    fn the_heap_bound_holds_with_every_name_found() {
        let mut f = FlowNames::new();
        let hello = ClientHello::parse_records(&records(&chrome_like(), 4000)).unwrap();
        assert!(hello.server_name.is_some());
        f.tcp(F, 0, SYN, &[], (50003, 80));
        let req = b"GET /index.html HTTP/1.1\r\nHost: www.example.net\r\n\r\n";
        f.tcp(F, 1, 0x18, req, (50003, 80));
        f.tcp(R, 0, SYN, &[], (80, 50003));
        f.tcp(R, 1, 0x18, b"HTTP/1.1 301 Moved\r\n", (80, 50003));
        let n = f.names();
        assert_eq!(
            n.http_request.as_ref().unwrap().host.as_deref(),
            Some("www.example.net")
        );
        assert_eq!(n.http_response.unwrap().status, 301);
        assert!(f.is_done());
        assert!(f.heap_bytes() <= FLOW_NAMES_HEAP_BOUND);
    }

    #[test]
    fn dns_over_udp_and_tcp() {
        let q = [
            0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, b'a', 2, b'n', b'l', 0, 0, 1, 0, 1,
        ];
        let mut r = q;
        r[2] = 0x81;
        r[3] = 0x80;
        let mut f = FlowNames::new();
        f.udp(F, &q, (40000, 53));
        assert!(f.is_done_in(F) && !f.is_done_in(R) && !f.is_done());
        f.udp(R, &r, (53, 40000));
        assert!(f.is_done_in(R) && f.is_done());
        let n = f.names();
        assert_eq!(
            n.dns_query
                .as_ref()
                .unwrap()
                .question
                .as_ref()
                .unwrap()
                .name,
            "a.nl"
        );
        assert!(n.dns_response.as_ref().unwrap().response);
        let mut t = FlowNames::new();
        let mut framed = vec![0, q.len() as u8];
        framed.extend(q);
        t.tcp(F, 0, SYN, &[], (40001, 53));
        t.tcp(F, 1, 0x18, &framed[..5], (40001, 53));
        assert!(t.names().dns_query.is_none());
        t.tcp(F, 6, 0x18, &framed[5..], (40001, 53));
        assert_eq!(
            t.names()
                .dns_query
                .as_ref()
                .unwrap()
                .question
                .as_ref()
                .unwrap()
                .qtype,
            1
        );
    }

    /// SMTP's STARTTLS: the greeting, EHLO and its reply, STARTTLS and "220", each in a
    /// segment of its own, then the handshake: the hellos are read after the text. A plain
    /// session (no STARTTLS) is read only within the budget, then given up.
    #[test]
    fn tls_after_starttls_is_read_and_plain_text_is_given_up() {
        use crate::testdata::names::{modern_client_hello, server_hello};
        let client: [Vec<u8>; 3] = [
            b"EHLO client.example\r\n".to_vec(),
            b"STARTTLS\r\n".to_vec(),
            records(&modern_client_hello("mail.example.net", &[], 32), 4096),
        ];
        let server: [Vec<u8>; 4] = [
            b"220 mx.example.net ESMTP\r\n".to_vec(),
            b"250-mx.example.net\r\n250 STARTTLS\r\n".to_vec(),
            b"220 2.0.0 Ready to start TLS\r\n".to_vec(),
            records(&server_hello(), 4096),
        ];
        let mut f = FlowNames::new();
        f.tcp(F, 0, SYN, &[], (40000, 25));
        f.tcp(R, 0, SYN, &[], (25, 40000));
        let (mut cseq, mut sseq) = (1u32, 1u32);
        let send = |f: &mut FlowNames, d: Direction, seq: &mut u32, b: &[u8]| {
            let ports = if d == F { (40000, 25) } else { (25, 40000) };
            f.tcp(d, *seq, 0x18, b, ports);
            *seq += b.len() as u32;
        };
        send(&mut f, R, &mut sseq, &server[0]);
        send(&mut f, F, &mut cseq, &client[0]);
        send(&mut f, R, &mut sseq, &server[1]);
        send(&mut f, F, &mut cseq, &client[1]);
        send(&mut f, R, &mut sseq, &server[2]);
        assert!(!f.is_done_in(F) && !f.is_done_in(R));
        send(&mut f, F, &mut cseq, &client[2]);
        send(&mut f, R, &mut sseq, &server[3]);
        let n = f.names();
        let sni = n.client_hello.as_ref().map(|h| h.hello.server_name.clone());
        assert_eq!(sni, Some(Some("mail.example.net".into())));
        assert!(n.server_hello.is_some());
        assert!(f.is_done());
        // The same words on port 80 are HTTP's to read: not a request, given up at once.
        let mut h = FlowNames::new();
        h.tcp(F, 1, 0x18, &client[0], (40001, 80));
        assert!(h.is_done_in(F));
        // Plain SMTP: read until the budget is spent, never past the bound.
        let mut p = FlowNames::new();
        let mut seq = 1u32;
        for i in 0..SEGMENT_BUDGET {
            assert!(!p.is_done_in(F), "segment {i}");
            let line = format!("RCPT TO:<user{i}@example.net>\r\n");
            p.tcp(F, seq, 0x18, line.as_bytes(), (40002, 25));
            seq += line.len() as u32;
            assert!(p.heap_bytes() <= FLOW_NAMES_HEAP_BOUND);
        }
        assert!(p.is_done_in(F) && p.names().client_hello.is_none());
        assert_eq!(p.heap_bytes(), 0);
    }

    /// A query for `labels` (each a label), type `qtype`, class `qclass`.
    fn dns_query(labels: &[&[u8]], qtype: u16, qclass: u16) -> Vec<u8> {
        crate::testdata::names::dns_message(labels, qtype, qclass, false)
    }

    fn question(f: &FlowNames) -> (String, u16) {
        let q = f.names.dns_query.as_ref().and_then(|m| m.question.as_ref());
        q.map(|q| (q.name.clone(), q.qtype)).unwrap_or_default()
    }

    /// mDNS (a QU question: the class's top bit set) and LLMNR are read as DNS on their
    /// ports; NetBIOS name service's names are decoded; other ports are not DNS.
    #[test]
    fn dns_names_on_mdns_llmnr_and_netbios_ports() {
        let mdns = dns_query(&[b"printer", b"local"], 1, 0x8001);
        let mut f = FlowNames::new();
        f.udp(F, &mdns, (5353, 5353));
        assert_eq!(question(&f), ("printer.local".into(), 1));
        let llmnr = dns_query(&[b"fileserver"], 28, 1);
        let mut f = FlowNames::new();
        f.udp(F, &llmnr, (51000, 5355));
        assert_eq!(question(&f), ("fileserver".into(), 28));
        // "WORKGROUP", padded with spaces, type 0x1d.
        let mut encoded = Vec::new();
        for b in b"WORKGROUP      \x1d" {
            encoded.extend([b'A' + (b >> 4), b'A' + (b & 0xf)]);
        }
        let nbns = dns_query(&[&encoded], 32, 1);
        let mut f = FlowNames::new();
        f.udp(F, &nbns, (137, 137));
        assert_eq!(question(&f), ("WORKGROUP".into(), 32));
        // The same bytes between other ports: DNS only where a DNS port is.
        let mut f = FlowNames::new();
        f.udp(F, &nbns, (40000, 53));
        assert_eq!(question(&f).0, String::from_utf8(encoded).unwrap());
        let mut f = FlowNames::new();
        f.udp(F, &mdns, (40000, 5354));
        assert!(f.names.dns_query.is_none());
    }

    #[test]
    fn a_quic_client_hello_across_initials_sent_out_of_order() {
        let msg = chrome_like();
        let dcid = [7u8; 8];
        let (a, b) = msg.split_at(1000);
        let crypto = |off: usize, d: &[u8]| {
            let mut fr = vec![
                0x06,
                0x40 | (off >> 8) as u8,
                off as u8,
                0x40 | (d.len() >> 8) as u8,
                d.len() as u8,
            ];
            fr.extend(d);
            fr.resize(1150, 0);
            fr
        };
        for version in [quic::VERSION_1, quic::VERSION_2] {
            let first = protect(version, &dcid, 0, &crypto(0, a));
            let second = protect(version, &dcid, 1, &crypto(1000, b));
            let mut f = FlowNames::new();
            f.udp(F, &second, (50000, 443));
            assert!(f.names().client_hello.is_none());
            f.udp(F, &first, (50000, 443));
            let h = f.names().client_hello.as_ref().expect("the hello");
            assert_eq!(h.quic_version, Some(version));
            assert_eq!(h.hello.server_name.as_deref(), Some("pq.example.net"));
            assert!(h.hello.ja4.starts_with("q13d0504h2_"), "{}", h.hello.ja4);
            assert_eq!(f.heap_bytes() - h_heap(&f), 0, "buffer freed");
        }
    }

    fn h_heap(f: &FlowNames) -> usize {
        f.names.heap_bytes()
    }

    #[test]
    fn text_is_never_longer_than_its_bytes() {
        assert_eq!(text(b"h2"), "h2");
        assert_eq!(text("é.example".as_bytes()), "é.example");
        assert_eq!(text(b"a\xff\xfeb\xe2\x82"), "a??b??");
        for b in [
            &b"\xff\xff\xff"[..],
            &b"\xc3"[..],
            &b"x\xe2\x82\xacy\xe2"[..],
        ] {
            assert!(text(b).len() <= b.len(), "{b:?}");
        }
    }

    #[test]
    fn names_from_the_wire_carry_no_control_characters_and_hosts_no_quotes() {
        // A terminal escape, DEL and a C1 control character become '?'.
        assert_eq!(text(b"a\x1b[31mb\x7f\xc2\x9bc"), "a?[31mb??c");
        assert_eq!(super::text::host(b"o'brien\\\".x`"), "o?brien??.x?");
        // Through the readers: a server name, a DNS name and an HTTP Host with quotes.
        let msg = hello(Some("o'brien.example\x1b"), &[], &[0x1301], &[]);
        let h = ClientHello::parse_records(&records(&msg, 4000)).unwrap();
        assert_eq!(h.server_name.as_deref(), Some("o?brien.example?"));
        let mut q = vec![0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 6];
        q.extend(b"it's'a\x03com\x00\x00\x01\x00\x01");
        let m = DnsMessage::parse(&q).unwrap();
        assert_eq!(m.question.unwrap().name, "it?s?a.com");
        let r = HttpRequest::parse(b"GET /o'k HTTP/1.1\r\nHost: a'b\r\n\r\n").unwrap();
        assert_eq!((r.path.as_str(), r.host.as_deref()), ("/o'k", Some("a?b")));
    }

    #[test]
    fn inline_size_is_within_the_written_bound() {
        eprintln!(
            "size_of FlowNames {}, Reassembly {}",
            std::mem::size_of::<FlowNames>(),
            std::mem::size_of::<Reassembly>()
        );
        assert!(
            std::mem::size_of::<FlowNames>() <= FLOW_NAMES_INLINE_BOUND,
            "{}",
            std::mem::size_of::<FlowNames>()
        );
    }
}
