//! One data record's bytes: the flow's elements in its template's order, and the names'
//! strings with their lengths.

use super::template::{variant, IFACES, MAX_RECORD, NAMES_NUMBERS, NAMES_TEXTS, UNI};
use crate::{EndReason, FlowStats, TcpState};

/// How a record is laid out beyond what its flow decides: the template family
/// ([`UNI`], [`IFACES`]), the interfaces it names, and which direction a one-direction
/// record reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Shape {
    /// [`UNI`] and [`IFACES`] bits, or 0.
    pub(super) family: u16,
    /// ingressInterface and egressInterface, with [`IFACES`].
    pub(super) interfaces: (u32, u32),
    /// With [`UNI`]: 0 the initiator's packets (source the initiator), 1 the responder's
    /// (source the responder).
    pub(super) half: usize,
}

/// Appends the data record of `s` (oriented) in the field order of its template: `s`'s
/// variant with `shape`'s family.
#[inline]
pub(super) fn write_record(
    buf: &mut Vec<u8>,
    s: &FlowStats,
    end: EndReason,
    seed: u16,
    tcp: Option<&TcpState>,
    shape: Shape,
) {
    let v = variant(s, tcp.is_some());
    let (uni, ifaces) = (shape.family & UNI != 0, shape.family & IFACES != 0);
    // The direction this record reports first (a biflow's forward, then its reverse).
    let (a, b) = if uni && shape.half == 1 {
        (1, 0)
    } else {
        (0, 1)
    };
    let mut r = [0u8; MAX_RECORD];
    let mut at = 0;
    let mut put = |bytes: &[u8]| {
        r[at..at + bytes.len()].copy_from_slice(bytes);
        at += bytes.len();
    };
    put(&(s.first_ns / 1_000_000).to_be_bytes());
    put(&(s.last_ns / 1_000_000).to_be_bytes());
    put(&s.bytes[a].to_be_bytes());
    put(&s.packets[a].to_be_bytes());
    if !uni {
        put(&s.bytes[1].to_be_bytes());
        put(&s.packets[1].to_be_bytes());
    }
    let k = &s.key;
    let (src, dst) = if a == 0 {
        (k.src(), k.dst())
    } else {
        (k.dst(), k.src())
    };
    match (src, dst) {
        (std::net::IpAddr::V4(x), std::net::IpAddr::V4(y)) => {
            put(&x.octets());
            put(&y.octets());
        }
        (x, y) => {
            put(&ipv6_octets(x));
            put(&ipv6_octets(y));
        }
    }
    if v & 2 != 0 {
        // ICMP's type and code: the flow's, whichever direction reports.
        put(&[k.sport() as u8, k.dport() as u8]);
    } else if a == 0 {
        put(&k.sport().to_be_bytes());
        put(&k.dport().to_be_bytes());
    } else {
        put(&k.dport().to_be_bytes());
        put(&k.sport().to_be_bytes());
    }
    put(&[k.proto()]);
    if ifaces {
        put(&shape.interfaces.0.to_be_bytes());
        put(&shape.interfaces.1.to_be_bytes());
        // Ingress: the packets as they reached the observation point.
        put(&[0]);
    }
    if !uni {
        put(&u16::from(s.tcp_flags[b]).to_be_bytes());
    }
    put(&u16::from(s.tcp_flags[a]).to_be_bytes());
    put(&[end.ipfix_code()]);
    put(s.key.community_id(seed).as_bytes());
    if let Some(t) = tcp {
        // Variable-length strings, each under 255 bytes: one length byte.
        for text in [t.conn_state().name(), t.history()] {
            put(&[text.len() as u8]);
            put(text.as_bytes());
        }
    }
    if let Some(vid) = k.vlan() {
        put(&vid.to_be_bytes());
    }
    buf.extend_from_slice(&r[..at]);
}

/// A string of the names: one, or a list joined by `,` (ALPN), borrowed.
/// (Built only from [`crate::names::Names`]: without the feature, never.)
#[derive(Debug, Clone, Copy)]
#[cfg_attr(not(feature = "names"), allow(dead_code))]
pub(super) enum Text<'a> {
    One(&'a str),
    Joined(&'a [String]),
}

impl Text<'_> {
    pub(super) fn len(&self) -> usize {
        match self {
            Text::One(s) => s.len(),
            Text::Joined(v) => v.iter().map(String::len).sum::<usize>() + v.len().saturating_sub(1),
        }
    }

    /// How many of its bytes to write for at most `cap`: all of them, or the most that end on
    /// a character boundary (and not on a list's separator).
    pub(super) fn cut(&self, cap: usize) -> usize {
        if self.len() <= cap {
            return self.len();
        }
        match self {
            Text::One(s) => floor_boundary(s, cap),
            Text::Joined(v) => {
                let mut at = 0;
                for (i, p) in v.iter().enumerate() {
                    let sep = usize::from(i > 0);
                    if at + sep + p.len() <= cap {
                        at += sep + p.len();
                        continue;
                    }
                    if at + sep >= cap {
                        return at;
                    }
                    let k = floor_boundary(p, cap - at - sep);
                    return if k == 0 { at } else { at + sep + k };
                }
                at
            }
        }
    }

    /// Appends its first `n` bytes (a [`Text::cut`]).
    pub(super) fn write(&self, buf: &mut Vec<u8>, n: usize) {
        match self {
            Text::One(s) => buf.extend_from_slice(&s.as_bytes()[..n]),
            Text::Joined(v) => {
                let mut left = n;
                for (i, p) in v.iter().enumerate() {
                    if i > 0 {
                        if left == 0 {
                            break;
                        }
                        buf.push(b',');
                        left -= 1;
                    }
                    let k = left.min(p.len());
                    buf.extend_from_slice(&p.as_bytes()[..k]);
                    left -= k;
                }
            }
        }
    }
}

/// The longest prefix of `s` of at most `n` bytes that ends on a character boundary.
fn floor_boundary(s: &str, n: usize) -> usize {
    if n >= s.len() {
        return s.len();
    }
    let mut k = n;
    while !s.is_char_boundary(k) {
        k -= 1;
    }
    k
}

/// A variable-length element's length: one byte below 255, else 255 and two bytes (RFC
/// 7011 §7).
fn length_prefix(n: usize) -> usize {
    if n < 255 {
        1
    } else {
        3
    }
}

fn put_length(buf: &mut Vec<u8>, n: usize) {
    if n < 255 {
        buf.push(n as u8);
    } else {
        buf.push(255);
        buf.extend_from_slice(&(n as u16).to_be_bytes());
    }
}

/// The names elements of one record, borrowed from [`crate::names::Names`]: the strings in
/// the order serverName, alpn, ja4, dnsQueryName, httpRequestMethod, httpRequestHost,
/// httpRequestTarget; absent ones empty, absent numbers 0.
#[derive(Debug, Clone, Copy)]
pub(super) struct NameFields<'a> {
    pub(super) texts: [Text<'a>; NAMES_TEXTS],
    pub(super) tls_client_version: u16,
    pub(super) tls_version: u16,
    pub(super) tls_cipher: u16,
    pub(super) quic_version: u32,
    pub(super) dns_query_type: u16,
    pub(super) dns_response_code: u8,
    pub(super) dns_answer_count: u16,
    pub(super) http_status: u16,
}

impl<'a> NameFields<'a> {
    #[cfg(feature = "names")]
    pub(super) fn new(n: &'a crate::names::Names) -> NameFields<'a> {
        let hello = n.client_hello.as_ref().map(|h| &h.hello);
        let question = n
            .dns_query
            .as_ref()
            .and_then(|m| m.question.as_ref())
            .or_else(|| n.dns_response.as_ref().and_then(|m| m.question.as_ref()));
        let request = n.http_request.as_ref();
        let one = |s: Option<&'a str>| Text::One(s.unwrap_or(""));
        NameFields {
            texts: [
                one(hello.and_then(|h| h.server_name.as_deref())),
                Text::Joined(hello.map_or(&[][..], |h| &h.alpn[..])),
                one(hello.map(|h| h.ja4.as_str())),
                one(question.map(|q| q.name.as_str())),
                one(request.map(|r| r.method.as_str())),
                one(request.and_then(|r| r.host.as_deref())),
                one(request.map(|r| r.path.as_str())),
            ],
            tls_client_version: hello.map_or(0, |h| {
                h.versions
                    .iter()
                    .copied()
                    .filter(|&v| !crate::names::is_grease(v))
                    .max()
                    .unwrap_or(h.legacy_version)
            }),
            tls_version: n.server_hello.map_or(0, |s| s.version),
            tls_cipher: n.server_hello.map_or(0, |s| s.cipher_suite),
            quic_version: n
                .client_hello
                .as_ref()
                .and_then(|h| h.quic_version)
                .unwrap_or(0),
            dns_query_type: question.map_or(0, |q| q.qtype),
            dns_response_code: n.dns_response.as_ref().map_or(0, |m| m.rcode),
            dns_answer_count: n.dns_response.as_ref().map_or(0, |m| m.answers),
            http_status: n.http_response.map_or(0, |r| r.status),
        }
    }

    /// The bytes of each string to write so that the names part fits in `room` bytes: all
    /// of them if they fit, else each cut to one level, the highest that fits (the longest
    /// strings are cut, the short ones kept whole), counting three length bytes a string.
    pub(super) fn cuts(&self, room: usize) -> [usize; NAMES_TEXTS] {
        let lens = self.texts.map(|t| t.len());
        let whole: usize = lens.iter().map(|&l| l + length_prefix(l)).sum();
        if NAMES_NUMBERS + whole <= room {
            return lens;
        }
        let budget = room.saturating_sub(NAMES_NUMBERS + 3 * NAMES_TEXTS);
        let mut sorted = lens;
        sorted.sort_unstable();
        let mut left = budget;
        let mut level = usize::MAX;
        for (i, &l) in sorted.iter().enumerate() {
            let share = left / (NAMES_TEXTS - i);
            if l > share {
                level = share;
                break;
            }
            left -= l;
        }
        let mut cuts = [0; NAMES_TEXTS];
        for (c, t) in cuts.iter_mut().zip(&self.texts) {
            *c = t.cut(level);
        }
        cuts
    }

    /// The bytes of the names part with the strings cut to `cuts`.
    pub(super) fn part_len(cuts: &[usize; NAMES_TEXTS]) -> usize {
        NAMES_NUMBERS + cuts.iter().map(|&c| c + length_prefix(c)).sum::<usize>()
    }

    /// Appends the names part in the names templates' field order.
    pub(super) fn write(&self, buf: &mut Vec<u8>, cuts: &[usize; NAMES_TEXTS]) {
        let text = |buf: &mut Vec<u8>, i: usize| {
            put_length(buf, cuts[i]);
            self.texts[i].write(buf, cuts[i]);
        };
        for i in 0..3 {
            text(buf, i);
        }
        buf.extend_from_slice(&self.tls_client_version.to_be_bytes());
        buf.extend_from_slice(&self.tls_version.to_be_bytes());
        buf.extend_from_slice(&self.tls_cipher.to_be_bytes());
        buf.extend_from_slice(&self.quic_version.to_be_bytes());
        text(buf, 3);
        buf.extend_from_slice(&self.dns_query_type.to_be_bytes());
        buf.push(self.dns_response_code);
        buf.extend_from_slice(&self.dns_answer_count.to_be_bytes());
        for i in 4..7 {
            text(buf, i);
        }
        buf.extend_from_slice(&self.http_status.to_be_bytes());
    }
}

/// A names record fits a message of [`min_message()`] bytes without templates with room to
/// spare for its strings.
const _: () = assert!(MAX_RECORD + NAMES_NUMBERS + 3 * NAMES_TEXTS < 1024);

fn ipv6_octets(a: std::net::IpAddr) -> [u8; 16] {
    match a {
        std::net::IpAddr::V6(a) => a.octets(),
        std::net::IpAddr::V4(a) => a.to_ipv6_mapped().octets(),
    }
}
