//! DNS messages (RFC 1035) over UDP and over TCP (a 2-byte length before each message): the
//! question's name and type, the response code and the number of answers; and a response's
//! address records ([`DnsMessage::answer_addresses`], A and AAAA), for a passive map of
//! addresses to the names that were asked for.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why a DNS message could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DnsError {
    /// The bytes end before the message does (over TCP, more may come).
    #[error("the DNS message is incomplete")]
    Incomplete,
    /// A compression pointer does not point strictly backwards (a loop or a forward jump).
    #[error("a compression pointer that does not point back")]
    BadPointer,
    /// A name longer than 255 octets, or a label type other than 0 and 0b11.
    #[error("malformed name")]
    BadName,
}

/// The question of a DNS message.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DnsQuestion {
    /// The name, labels joined by `.` (no trailing dot; the root is the empty string). Bytes
    /// that are not UTF-8 read as `?`.
    pub name: String,
    /// QTYPE (1 A, 28 AAAA, ...).
    pub qtype: u16,
    /// QCLASS (1 IN).
    pub qclass: u16,
}

/// One DNS message's header and first question.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DnsMessage {
    /// The message ID.
    pub id: u16,
    /// QR: a response.
    pub response: bool,
    /// OPCODE.
    pub opcode: u8,
    /// RCODE (the header's 4 bits).
    pub rcode: u8,
    /// ANCOUNT: the number of answers.
    pub answers: u16,
    /// The first question, if QDCOUNT is not 0.
    pub question: Option<DnsQuestion>,
}

/// The longest name (RFC 1035 2.3.4).
const MAX_NAME: usize = 255;

/// Reads the name at `pos`; returns it and the position after it (in the uncompressed part).
/// Pointers must point strictly before the label that holds them, so a name is read in at
/// most `msg.len()` steps and cannot loop.
fn read_name(msg: &[u8], mut pos: usize) -> Result<(String, usize), DnsError> {
    let mut name: Vec<u8> = Vec::new();
    let mut end = None;
    let mut wire_len = 0usize;
    loop {
        let &len = msg.get(pos).ok_or(DnsError::Incomplete)?;
        match len >> 6 {
            0 if len == 0 => {
                let after = end.unwrap_or(pos + 1);
                return Ok((super::text::host(&name), after));
            }
            0 => {
                let label = msg
                    .get(pos + 1..pos + 1 + usize::from(len))
                    .ok_or(DnsError::Incomplete)?;
                wire_len += 1 + label.len();
                if wire_len + 1 > MAX_NAME {
                    return Err(DnsError::BadName);
                }
                if !name.is_empty() {
                    name.push(b'.');
                }
                name.extend_from_slice(label);
                pos += 1 + label.len();
            }
            3 => {
                let &lo = msg.get(pos + 1).ok_or(DnsError::Incomplete)?;
                let target = usize::from(len & 0x3f) << 8 | usize::from(lo);
                if target >= pos {
                    return Err(DnsError::BadPointer);
                }
                end.get_or_insert(pos + 2);
                pos = target;
            }
            _ => return Err(DnsError::BadName),
        }
    }
}

impl DnsMessage {
    /// A message as a UDP datagram carries it.
    pub fn parse(msg: &[u8]) -> Result<DnsMessage, DnsError> {
        let h = msg.get(..12).ok_or(DnsError::Incomplete)?;
        let be = |i: usize| u16::from_be_bytes([h[i], h[i + 1]]);
        let flags = be(2);
        let qdcount = be(4);
        let question = if qdcount > 0 {
            let (name, after) = read_name(msg, 12)?;
            let t = msg.get(after..after + 4).ok_or(DnsError::Incomplete)?;
            Some(DnsQuestion {
                name,
                qtype: u16::from_be_bytes([t[0], t[1]]),
                qclass: u16::from_be_bytes([t[2], t[3]]),
            })
        } else {
            None
        };
        Ok(DnsMessage {
            id: be(0),
            response: flags & 0x8000 != 0,
            opcode: ((flags >> 11) & 0xf) as u8,
            rcode: (flags & 0xf) as u8,
            answers: be(6),
            question,
        })
    }

    /// The first message of a DNS-over-TCP stream (2-byte length, then the message).
    pub fn parse_tcp(stream: &[u8]) -> Result<DnsMessage, DnsError> {
        let len = stream.get(..2).ok_or(DnsError::Incomplete)?;
        let len = usize::from(u16::from_be_bytes([len[0], len[1]]));
        DnsMessage::parse(stream.get(2..2 + len).ok_or(DnsError::Incomplete)?)
    }
}

/// A NetBIOS name (RFC 1001 14.1: each of its 16 bytes as two letters `A`..=`P`, the
/// first label of the name) as Zeek's `decode_netbios_name` gives it: the first 15 bytes
/// (the 16th is the name's type), trailing spaces and NULs dropped; a scope after it kept
/// (`.` and its labels). `None` where the first label is no such encoding, or decodes to
/// nothing but spaces and NULs.
pub fn netbios_name(encoded: &str) -> Option<String> {
    let (first, scope) = match encoded.split_once('.') {
        Some((first, scope)) => (first, Some(scope)),
        None => (encoded, None),
    };
    let letters = first.as_bytes();
    if letters.len() != 32 || !letters.iter().all(|c| (b'A'..=b'P').contains(c)) {
        return None;
    }
    let bytes: Vec<u8> = letters
        .chunks_exact(2)
        .take(15)
        .map(|p| (p[0] - b'A') << 4 | (p[1] - b'A'))
        .collect();
    let end = bytes
        .iter()
        .rposition(|&b| b != b' ' && b != 0)
        .map_or(0, |i| i + 1);
    if end == 0 {
        return None;
    }
    let mut name = super::text::host(&bytes[..end]);
    if let Some(scope) = scope {
        name.push('.');
        name.push_str(scope);
    }
    Some(name)
}

impl DnsMessage {
    /// The question's name decoded from NetBIOS's encoding ([`netbios_name`]), where it is
    /// one: NetBIOS name service's messages.
    pub fn decode_netbios_name(&mut self) {
        if let Some(q) = self.question.as_mut() {
            if let Some(name) = netbios_name(&q.name) {
                q.name = name;
            }
        }
    }
}

/// One address record (A or AAAA) of a DNS response's answer section.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DnsAnswer {
    /// The record's owner name (a CNAME chain's last name, not necessarily the question's).
    pub name: String,
    /// The address.
    pub addr: IpAddr,
    /// TTL, seconds.
    pub ttl: u32,
}

/// RR types read by [`DnsMessage::answer_addresses`].
const TYPE_A: u16 = 1;
const TYPE_AAAA: u16 = 28;

impl DnsMessage {
    /// The A and AAAA records of a response's answer section (a UDP datagram's message), at
    /// most `max` of them, in order; other records (CNAME, ...) are skipped. A message that is
    /// not a response has none. Reads at most ANCOUNT records and stops at the first that
    /// does not fit in `msg` (the error then, with the records read before it lost: a
    /// truncated answer is not half-used).
    pub fn answer_addresses(msg: &[u8], max: usize) -> Result<Vec<DnsAnswer>, DnsError> {
        let h = msg.get(..12).ok_or(DnsError::Incomplete)?;
        let be = |b: &[u8], i: usize| u16::from_be_bytes([b[i], b[i + 1]]);
        if be(h, 2) & 0x8000 == 0 {
            return Ok(Vec::new());
        }
        let (qdcount, ancount) = (be(h, 4), be(h, 6));
        let mut pos = 12;
        for _ in 0..qdcount {
            let (_, after) = read_name(msg, pos)?;
            pos = after + 4;
        }
        let mut out = Vec::new();
        for _ in 0..ancount {
            if out.len() >= max {
                break;
            }
            let (name, after) = read_name(msg, pos)?;
            let f = msg.get(after..after + 10).ok_or(DnsError::Incomplete)?;
            let (rtype, rdlen) = (be(f, 0), usize::from(be(f, 8)));
            let ttl = u32::from_be_bytes([f[4], f[5], f[6], f[7]]);
            let rdata = msg
                .get(after + 10..after + 10 + rdlen)
                .ok_or(DnsError::Incomplete)?;
            let addr = match (rtype, rdata.len()) {
                (TYPE_A, 4) => Some(IpAddr::V4(Ipv4Addr::new(
                    rdata[0], rdata[1], rdata[2], rdata[3],
                ))),
                (TYPE_AAAA, 16) => {
                    let mut a = [0u8; 16];
                    a.copy_from_slice(rdata);
                    Some(IpAddr::V6(Ipv6Addr::from(a)))
                }
                _ => None,
            };
            if let Some(addr) = addr {
                out.push(DnsAnswer { name, addr, ttl });
            }
            pos = after + 10 + rdlen;
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(name: &str, qtype: u16) -> Vec<u8> {
        let mut m = vec![0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0];
        for l in name.split('.') {
            m.push(l.len() as u8);
            m.extend_from_slice(l.as_bytes());
        }
        m.push(0);
        m.extend(qtype.to_be_bytes());
        m.extend([0, 1]);
        m
    }

    /// Zeek's documented example, padding and scopes; what is no NetBIOS encoding is not
    /// decoded.
    #[test]
    fn netbios_names_decode_as_zeek_decodes_them() {
        assert_eq!(
            netbios_name("FEEIEFCAEOEFFEECEJEPFDCAEOEBENEF").as_deref(),
            Some("THE NETBIOS NAM")
        );
        // "FS01" and spaces, type 0x20, in the scope "corp.example".
        let mut e = String::new();
        for b in b"FS01           \x20" {
            e.push(char::from(b'A' + (b >> 4)));
            e.push(char::from(b'A' + (b & 0xf)));
        }
        assert_eq!(netbios_name(&e).as_deref(), Some("FS01"));
        let scoped = format!("{e}.corp.example");
        assert_eq!(netbios_name(&scoped).as_deref(), Some("FS01.corp.example"));
        // All spaces; all NULs; too short; a letter past P; lower case.
        assert_eq!(netbios_name(&"CA".repeat(16)), None);
        assert_eq!(netbios_name(&"AA".repeat(16)), None);
        assert_eq!(netbios_name("FEEIEF"), None);
        assert_eq!(netbios_name(&"FQ".repeat(16)), None);
        assert_eq!(netbios_name(&"fe".repeat(16)), None);
        // A quote decodes to the stand-in every name gets.
        let quote: String = std::iter::repeat_n("CC", 15).chain(["AA"]).collect();
        assert_eq!(netbios_name(&quote).as_deref(), Some("???????????????"));
    }

    #[test]
    fn question_over_udp_and_tcp() {
        let q = query("www.example.net", 28);
        let m = DnsMessage::parse(&q).unwrap();
        assert!(!m.response);
        assert_eq!(m.question.as_ref().unwrap().name, "www.example.net");
        assert_eq!(m.question.as_ref().unwrap().qtype, 28);
        let mut t = (q.len() as u16).to_be_bytes().to_vec();
        t.extend(&q);
        assert_eq!(DnsMessage::parse_tcp(&t).unwrap(), m);
        assert_eq!(
            DnsMessage::parse_tcp(&t[..t.len() - 1]),
            Err(DnsError::Incomplete)
        );
    }

    #[test]
    fn pointers_must_point_back() {
        let mut r = query("a.example", 1);
        r[2] = 0x81;
        r[3] = 0x83; // response, NXDOMAIN
        r[7] = 1;
        let m = DnsMessage::parse(&r).unwrap();
        assert_eq!((m.response, m.rcode, m.answers), (true, 3, 1));
        // A question name that is a pointer to itself, and one that points forward.
        let mut l = vec![0u8; 12];
        l[5] = 1;
        l.extend([0xc0, 12, 0, 1, 0, 1]);
        assert_eq!(DnsMessage::parse(&l), Err(DnsError::BadPointer));
        l[13] = 14;
        assert_eq!(DnsMessage::parse(&l), Err(DnsError::BadPointer));
        // A name of 300 octets.
        let long = vec!["abcdefghij"; 30].join(".");
        assert_eq!(DnsMessage::parse(&query(&long, 1)), Err(DnsError::BadName));
    }

    #[test]
    fn answer_addresses_of_a_response() {
        let mut r = query("www.example.net", 1);
        r[2] = 0x81;
        r[3] = 0x80;
        r[7] = 3; // three answers: a CNAME, an A, an AAAA
        let rr = |r: &mut Vec<u8>, name: &[u8], rtype: u16, data: &[u8]| {
            r.extend_from_slice(name);
            r.extend(rtype.to_be_bytes());
            r.extend([0, 1, 0, 0, 0x0e, 0x10]);
            r.extend((data.len() as u16).to_be_bytes());
            r.extend_from_slice(data);
        };
        let cname_at = r.len();
        rr(&mut r, &[0xc0, 12], 5, &[3, b'c', b'd', b'n', 0xc0, 16]);
        rr(&mut r, &[0xc0, cname_at as u8 + 12], 1, &[198, 18, 0, 7]);
        let v6: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9];
        rr(&mut r, &[0xc0, 12], 28, &v6);
        let a = DnsMessage::answer_addresses(&r, 8).unwrap();
        assert_eq!(a.len(), 2);
        assert_eq!(a[0].addr, IpAddr::V4(Ipv4Addr::new(198, 18, 0, 7)));
        assert_eq!(a[0].name, "cdn.example.net");
        assert_eq!(a[0].ttl, 3600);
        assert_eq!(a[1].addr, IpAddr::V6(Ipv6Addr::from(v6)));
        assert_eq!(a[1].name, "www.example.net");
        // At most `max`; a query has none; a record cut short is an error.
        assert_eq!(DnsMessage::answer_addresses(&r, 1).unwrap().len(), 1);
        assert!(DnsMessage::answer_addresses(&query("x.example", 1), 8)
            .unwrap()
            .is_empty());
        assert_eq!(
            DnsMessage::answer_addresses(&r[..r.len() - 1], 8),
            Err(DnsError::Incomplete)
        );
    }
}
