//! Reading IPFIX messages back: headers, template sets, and data records of any template into
//! [`ExportedFlow`]s (the elements this crate exports; others are skipped). Hostile input
//! gives an error, never a panic, and bounded memory: a message yields at most
//! [`MAX_RECORDS_PER_MESSAGE`] records (the rest are counted, not kept), and a decoder holds
//! at most [`MAX_TEMPLATES_PER_DOMAIN`] templates per observation domain,
//! [`MAX_TEMPLATES`] in all and [`MAX_FIELDS`] fields in all (8 bytes each): the template
//! that would pass a limit refuses its message ([`DecodeError::TemplateLimit`]; the message's
//! templates before it are kept), while a template redefined is replaced (RFC 7011).

use std::collections::HashMap;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::{ie, zcrx_ie, HEADER_LEN, REVERSE_PEN, VERSION, ZCRX_PEN};
use crate::{CommunityId, ConnState};

/// A message header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Total length.
    pub length: u16,
    /// Export time, s since the Unix epoch.
    pub export_time: u32,
    /// Data records sent before this message.
    pub sequence: u32,
    /// Observation domain.
    pub domain: u32,
}

/// One data record, by the elements it carries (absent ones are 0 / `None`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ExportedFlow {
    /// Template it was read with.
    pub template: u16,
    /// Source address (the initiator).
    pub src: Option<IpAddr>,
    /// Destination address.
    pub dst: Option<IpAddr>,
    /// sourceTransportPort.
    pub sport: u16,
    /// destinationTransportPort.
    pub dport: u16,
    /// icmpTypeCodeIPv4/IPv6 (type << 8 | code).
    pub icmp_type_code: Option<u16>,
    /// protocolIdentifier.
    pub proto: u8,
    /// flowStartMilliseconds.
    pub start_ms: u64,
    /// flowEndMilliseconds.
    pub end_ms: u64,
    /// packetDeltaCount, reverse packetDeltaCount.
    pub packets: [u64; 2],
    /// octetDeltaCount, reverse octetDeltaCount.
    pub octets: [u64; 2],
    /// tcpControlBits, reverse tcpControlBits.
    pub tcp_flags: [u16; 2],
    /// flowEndReason.
    pub end_reason: u8,
    /// vlanId.
    pub vlan: Option<u16>,
}

/// zcrx's enterprise-specific elements of one data record ([`super::zcrx_ie`]), as
/// [`Decoder::message_with_zcrx`] reads them (absent ones are `None`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ZcrxElements {
    /// communityId (32473/1): the flow's Community ID v1.
    pub community_id: Option<CommunityId>,
    /// connState (32473/2): the TCP connection's state, Zeek's name.
    pub conn_state: Option<ConnState>,
    /// history (32473/3): the TCP connection's history letters.
    pub history: Option<String>,
    /// The names elements (32473/4 to 32473/14, IANA's httpRequestMethod, httpRequestHost,
    /// httpRequestTarget and httpStatusCode), if the record's template has any of them.
    pub names: Option<NameElements>,
    /// IANA's ingressInterface (10), if the record's template has it
    /// ([`super::Encoder::set_interfaces`]).
    pub ingress_interface: Option<u32>,
    /// IANA's egressInterface (14), if the record's template has it.
    pub egress_interface: Option<u32>,
    /// IANA's flowDirection (61), if the record's template has it.
    pub flow_direction: Option<u8>,
}

/// The names elements of one data record, as the wire has them: a string not found is
/// empty, a number not found 0 (as [`super::Encoder::encode_with_names`] writes them).
/// Bytes that are not UTF-8 read as U+FFFD.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct NameElements {
    /// serverName (32473/4): the ClientHello's server name.
    pub server_name: String,
    /// alpn (32473/5): the ClientHello's ALPN protocols, joined by `,`.
    pub alpn: String,
    /// ja4 (32473/6): the ClientHello's JA4.
    pub ja4: String,
    /// tlsClientVersion (32473/7): the highest version the ClientHello offers.
    pub tls_client_version: u16,
    /// tlsVersion (32473/8): the version the ServerHello chose.
    pub tls_version: u16,
    /// tlsCipher (32473/9): the cipher suite the ServerHello chose.
    pub tls_cipher: u16,
    /// quicVersion (32473/10): the QUIC version of the ClientHello's Initial.
    pub quic_version: u32,
    /// dnsQueryName (32473/11): the DNS question's name.
    pub dns_query_name: String,
    /// dnsQueryType (32473/12): its QTYPE.
    pub dns_query_type: u16,
    /// dnsResponseCode (32473/13): the response's RCODE.
    pub dns_response_code: u8,
    /// dnsAnswerCount (32473/14): the response's ANCOUNT.
    pub dns_answer_count: u16,
    /// httpRequestMethod (459).
    pub http_method: String,
    /// httpRequestHost (460).
    pub http_host: String,
    /// httpRequestTarget (461).
    pub http_target: String,
    /// httpStatusCode (457).
    pub http_status: u16,
}

#[cfg(feature = "names")]
impl From<&crate::names::Names> for NameElements {
    /// What the encoder writes for `names` when nothing needs cutting.
    fn from(names: &crate::names::Names) -> NameElements {
        let f = super::data_record::NameFields::new(names);
        let text = |i: usize| {
            let mut b = Vec::new();
            f.texts[i].write(&mut b, f.texts[i].len());
            String::from_utf8_lossy(&b).into_owned()
        };
        NameElements {
            server_name: text(0),
            alpn: text(1),
            ja4: text(2),
            tls_client_version: f.tls_client_version,
            tls_version: f.tls_version,
            tls_cipher: f.tls_cipher,
            quic_version: f.quic_version,
            dns_query_name: text(3),
            dns_query_type: f.dns_query_type,
            dns_response_code: f.dns_response_code,
            dns_answer_count: f.dns_answer_count,
            http_method: text(4),
            http_host: text(5),
            http_target: text(6),
            http_status: f.http_status,
        }
    }
}

/// Records one message yields at most; a 65 535-byte message of one-byte records would
/// otherwise become 65 515 records of about 100 bytes each.
pub const MAX_RECORDS_PER_MESSAGE: usize = 4096;
/// Templates one observation domain may hold (collectors bound them per domain too).
pub const MAX_TEMPLATES_PER_DOMAIN: usize = 4096;
/// Templates a decoder holds in all.
pub const MAX_TEMPLATES: usize = 65_536;
/// Template fields a decoder holds in all (8 bytes each: 8 MiB).
pub const MAX_FIELDS: usize = 1 << 20;

/// What one message held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// The message header: length, export time, sequence number, observation domain.
    pub header: Header,
    /// Templates it defined.
    pub templates: usize,
    /// Its data records.
    pub flows: Vec<ExportedFlow>,
    /// Data sets skipped because their template was never seen.
    pub unknown_sets: usize,
    /// Records read past [`MAX_RECORDS_PER_MESSAGE`]: counted, not kept.
    pub records_over_limit: usize,
}

/// Why a message was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecodeError {
    /// Fewer bytes than the header or a length field says.
    Truncated,
    /// Not version 10.
    Version(u16),
    /// The header's length disagrees with the bytes given.
    Length {
        /// Header's length.
        header: u16,
        /// Bytes given.
        given: usize,
    },
    /// A set's length is below 4 or runs past the message.
    SetLength,
    /// A template is malformed (field count, or a field of length 0).
    Template,
    /// Keeping the message's templates would pass [`MAX_TEMPLATES_PER_DOMAIN`],
    /// [`MAX_TEMPLATES`] or [`MAX_FIELDS`].
    TemplateLimit,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Truncated => f.write_str("IPFIX message truncated"),
            DecodeError::Version(v) => write!(f, "IPFIX version {v}, expected 10"),
            DecodeError::Length { header, given } => {
                write!(f, "IPFIX header says {header} bytes, {given} given")
            }
            DecodeError::SetLength => f.write_str("IPFIX set length out of bounds"),
            DecodeError::Template => f.write_str("malformed IPFIX template"),
            DecodeError::TemplateLimit => write!(
                f,
                "IPFIX template limit reached ({MAX_TEMPLATES_PER_DOMAIN} per observation domain, {MAX_TEMPLATES} and {MAX_FIELDS} fields in all)"
            ),
        }
    }
}

impl std::error::Error for DecodeError {}

/// (element id without the enterprise bit, length, enterprise number or 0).
type Field = (u16, u16, u32);

/// Decodes messages, remembering templates per observation domain, and the sampling
/// interval each domain announced ([`Decoder::sampling_interval`]).
#[derive(Debug, Default, Clone)]
pub struct Decoder {
    templates: HashMap<(u32, u16), Vec<Field>>,
    /// The templates of [`Decoder::templates`] that are options templates.
    options: std::collections::HashSet<(u32, u16)>,
    /// samplingInterval (34) per observation domain, from options records (at most one
    /// entry per domain that holds an options template).
    sampling: HashMap<u32, u32>,
    /// Templates held per observation domain (domains with one or more).
    per_domain: HashMap<u32, usize>,
    /// Fields held in all templates.
    fields: usize,
}

fn be(b: &[u8]) -> u64 {
    b.iter().fold(0, |a, &x| a << 8 | u64::from(x))
}

fn be16(b: &[u8], at: usize) -> Result<u16, DecodeError> {
    b.get(at..at + 2)
        .map(|s| u16::from_be_bytes([s[0], s[1]]))
        .ok_or(DecodeError::Truncated)
}

/// Splits an IPFIX file (RFC 5655: messages back to back) into its messages.
pub fn messages(file: &[u8]) -> impl Iterator<Item = Result<&[u8], DecodeError>> {
    let mut at = 0;
    std::iter::from_fn(move || {
        if at >= file.len() {
            return None;
        }
        let len = match be16(file, at + 2) {
            Ok(l) if usize::from(l) >= HEADER_LEN => usize::from(l),
            Ok(_) => {
                at = file.len();
                return Some(Err(DecodeError::SetLength));
            }
            Err(e) => {
                at = file.len();
                return Some(Err(e));
            }
        };
        match file.get(at..at + len) {
            Some(m) => {
                at += len;
                Some(Ok(m))
            }
            None => {
                at = file.len();
                Some(Err(DecodeError::Truncated))
            }
        }
    })
}

impl Decoder {
    /// A decoder that knows no templates.
    pub fn new() -> Self {
        Self::default()
    }

    /// Decodes one message (exactly its bytes).
    pub fn message(&mut self, m: &[u8]) -> Result<Message, DecodeError> {
        self.decode(m, None)
    }

    /// [`Decoder::message`], and zcrx's enterprise-specific elements of each of its records
    /// (one [`ZcrxElements`] per [`Message::flows`] entry, in the same order).
    pub fn message_with_zcrx(
        &mut self,
        m: &[u8],
    ) -> Result<(Message, Vec<ZcrxElements>), DecodeError> {
        let mut zcrx = Vec::new();
        let message = self.decode(m, Some(&mut zcrx))?;
        Ok((message, zcrx))
    }

    fn decode(
        &mut self,
        m: &[u8],
        mut zcrx: Option<&mut Vec<ZcrxElements>>,
    ) -> Result<Message, DecodeError> {
        if m.len() < HEADER_LEN {
            return Err(DecodeError::Truncated);
        }
        let version = be16(m, 0)?;
        if version != VERSION {
            return Err(DecodeError::Version(version));
        }
        let header = Header {
            length: be16(m, 2)?,
            export_time: be(&m[4..8]) as u32,
            sequence: be(&m[8..12]) as u32,
            domain: be(&m[12..16]) as u32,
        };
        if usize::from(header.length) != m.len() {
            return Err(DecodeError::Length {
                header: header.length,
                given: m.len(),
            });
        }
        let mut out = Message {
            header,
            templates: 0,
            flows: Vec::new(),
            unknown_sets: 0,
            records_over_limit: 0,
        };
        let mut at = HEADER_LEN;
        while at < m.len() {
            let id = be16(m, at)?;
            let len = usize::from(be16(m, at + 2)?);
            if len < 4 || at + len > m.len() {
                return Err(DecodeError::SetLength);
            }
            let body = &m[at + 4..at + len];
            let key = (header.domain, id);
            match id {
                2 => out.templates += self.template_set(header.domain, body, false)?,
                3 => out.templates += self.template_set(header.domain, body, true)?,
                0..=255 => {} // reserved ids
                _ if self.options.contains(&key) => {
                    let fields = self.templates.get(&key).cloned().unwrap_or_default();
                    if let Some(n) = sampling_of(&fields, body)? {
                        self.sampling.insert(header.domain, n);
                    }
                }
                _ => match self.templates.get(&key) {
                    Some(fields) => data_set(id, fields, body, &mut out, zcrx.as_deref_mut())?,
                    None => out.unknown_sets += 1,
                },
            }
            at += len;
        }
        Ok(out)
    }

    /// A template set, or with `options` an options template set (whose template headers
    /// carry a scope field count: at least one, at most the field count).
    fn template_set(
        &mut self,
        domain: u32,
        mut b: &[u8],
        options: bool,
    ) -> Result<usize, DecodeError> {
        let mut n = 0;
        let head = if options { 6 } else { 4 };
        // Padding (fewer bytes than a template header) may end the set.
        while b.len() >= head {
            let id = be16(b, 0)?;
            let count = usize::from(be16(b, 2)?);
            if id < 256 {
                return Err(DecodeError::Template);
            }
            if options && count == 0 {
                // A withdrawal (RFC 7011 §8.1): the id and a field count of 0, no scope count.
                self.withdraw(domain, id);
                b = &b[4..];
                continue;
            }
            if options {
                let scope = usize::from(be16(b, 4)?);
                if scope == 0 || scope > count {
                    return Err(DecodeError::Template);
                }
            }
            b = &b[head..];
            let mut fields = Vec::with_capacity(count.min(b.len() / 4));
            for _ in 0..count {
                let raw = be16(b, 0)?;
                let len = be16(b, 2)?;
                if len == 0 {
                    return Err(DecodeError::Template);
                }
                let (pen, used) = if raw & 0x8000 != 0 {
                    (be(b.get(4..8).ok_or(DecodeError::Truncated)?) as u32, 8)
                } else {
                    (0, 4)
                };
                fields.push((raw & 0x7fff, len, pen));
                b = b.get(used..).ok_or(DecodeError::Truncated)?;
            }
            self.keep(domain, id, fields)?;
            if options {
                self.options.insert((domain, id));
            } else {
                self.options.remove(&(domain, id));
            }
            n += 1;
        }
        Ok(n)
    }

    /// Keeps template `id` of `domain`, replacing one of the same id, within the limits.
    fn keep(&mut self, domain: u32, id: u16, fields: Vec<Field>) -> Result<(), DecodeError> {
        let old = self.templates.get(&(domain, id)).map(Vec::len);
        let in_domain = self.per_domain.get(&domain).copied().unwrap_or(0);
        let fields_after = self.fields - old.unwrap_or(0) + fields.len();
        let new_one = old.is_none();
        if fields_after > MAX_FIELDS
            || (new_one
                && (in_domain >= MAX_TEMPLATES_PER_DOMAIN || self.templates.len() >= MAX_TEMPLATES))
        {
            return Err(DecodeError::TemplateLimit);
        }
        self.fields = fields_after;
        if new_one {
            *self.per_domain.entry(domain).or_insert(0) += 1;
        }
        self.templates.insert((domain, id), fields);
        Ok(())
    }

    /// Forgets template `id` of `domain` (withdrawn), if held.
    fn withdraw(&mut self, domain: u32, id: u16) {
        if let Some(fields) = self.templates.remove(&(domain, id)) {
            self.fields -= fields.len();
            if let Some(n) = self.per_domain.get_mut(&domain) {
                *n -= 1;
                if *n == 0 {
                    self.per_domain.remove(&domain);
                }
            }
        }
        self.options.remove(&(domain, id));
    }

    /// Templates held, in all.
    pub fn templates(&self) -> usize {
        self.templates.len()
    }

    /// The sampling interval (one packet in this many selected) observation domain
    /// `domain` announced last, in an options record with samplingInterval (34); `None` if
    /// it announced none.
    pub fn sampling_interval(&self, domain: u32) -> Option<u32> {
        self.sampling.get(&domain).copied()
    }
}

/// The value of a field of template length `len` at the start of `b`, and the bytes it
/// takes: `len` bytes, or for a variable length (0xffff) one length byte, or 255 and two
/// more (RFC 7011 §7), then the value.
fn field(b: &[u8], len: u16) -> Result<(&[u8], usize), DecodeError> {
    if len != 0xffff {
        let l = usize::from(len);
        return Ok((b.get(..l).ok_or(DecodeError::Truncated)?, l));
    }
    let first = *b.first().ok_or(DecodeError::Truncated)?;
    let (l, hdr) = if first < 255 {
        (usize::from(first), 1)
    } else {
        (usize::from(be16(b, 1)?), 3)
    };
    Ok((b.get(hdr..hdr + l).ok_or(DecodeError::Truncated)?, hdr + l))
}

/// The samplingInterval of the first record of an options data set of template `fields`,
/// if it has one (a value of any length up to 4 bytes).
fn sampling_of(fields: &[Field], mut b: &[u8]) -> Result<Option<u32>, DecodeError> {
    for &(id, len, pen) in fields {
        let (value, used) = field(b, len)?;
        if (id, pen) == (ie::SAMPLING_INTERVAL, 0) && value.len() <= 4 {
            return Ok(Some(be(value) as u32));
        }
        b = &b[used..];
    }
    Ok(None)
}

/// Reads every record of a data set; stops at padding (a remainder shorter than the shortest
/// record the template allows: its fixed lengths and one byte per variable-length field).
/// A longer remainder that is not a whole record (a variable-length field running past the
/// set) refuses the message. Past [`MAX_RECORDS_PER_MESSAGE`] records in the message, counts
/// them instead.
fn data_set(
    template: u16,
    fields: &[Field],
    mut b: &[u8],
    out: &mut Message,
    mut zcrx: Option<&mut Vec<ZcrxElements>>,
) -> Result<(), DecodeError> {
    let shortest: usize = fields
        .iter()
        .map(|&(_, len, _)| if len == 0xffff { 1 } else { usize::from(len) })
        .sum();
    while !b.is_empty() && b.len() >= shortest {
        let mut f = ExportedFlow {
            template,
            ..Default::default()
        };
        let mut z = ZcrxElements::default();
        for &(id, len, pen) in fields {
            let (value, used) = field(b, len)?;
            match (pen, id) {
                (0, ie::INGRESS_INTERFACE) => z.ingress_interface = Some(number(value) as u32),
                (0, ie::EGRESS_INTERFACE) => z.egress_interface = Some(number(value) as u32),
                (0, ie::FLOW_DIRECTION) => z.flow_direction = Some(number(value) as u8),
                (ZCRX_PEN, _) => set_zcrx(&mut z, id, value),
                (0, _) if is_http(id) => {
                    set_http(z.names.get_or_insert_with(Default::default), id, value)
                }
                _ => set_field(&mut f, id, pen, value),
            }
            b = &b[used..];
        }
        if out.flows.len() < MAX_RECORDS_PER_MESSAGE {
            out.flows.push(f);
            if let Some(zcrx) = zcrx.as_deref_mut() {
                zcrx.push(z);
            }
        } else {
            out.records_over_limit += 1;
        }
        if fields.is_empty() {
            break;
        }
    }
    Ok(())
}

fn is_http(id: u16) -> bool {
    matches!(
        id,
        ie::HTTP_STATUS_CODE
            | ie::HTTP_REQUEST_METHOD
            | ie::HTTP_REQUEST_HOST
            | ie::HTTP_REQUEST_TARGET
    )
}

/// An unsigned number of up to 8 bytes (reduced-size encoding, RFC 7011 §6.2); 0 if longer.
fn number(v: &[u8]) -> u64 {
    if v.len() <= 8 {
        be(v)
    } else {
        0
    }
}

fn string(v: &[u8]) -> String {
    String::from_utf8_lossy(v).into_owned()
}

/// One of IANA's HTTP elements.
fn set_http(n: &mut NameElements, id: u16, v: &[u8]) {
    match id {
        ie::HTTP_STATUS_CODE => n.http_status = number(v) as u16,
        ie::HTTP_REQUEST_METHOD => n.http_method = string(v),
        ie::HTTP_REQUEST_HOST => n.http_host = string(v),
        ie::HTTP_REQUEST_TARGET => n.http_target = string(v),
        _ => {}
    }
}

/// One of zcrx's elements; one that is not of its element's form (length, a known state
/// name, ASCII letters) is skipped.
fn set_zcrx(z: &mut ZcrxElements, id: u16, v: &[u8]) {
    match id {
        zcrx_ie::COMMUNITY_ID => {
            if let Ok(digest) = <[u8; 20]>::try_from(v) {
                z.community_id = Some(CommunityId::from_bytes(digest));
            }
        }
        zcrx_ie::CONN_STATE => {
            z.conn_state = std::str::from_utf8(v).ok().and_then(|s| s.parse().ok());
        }
        zcrx_ie::HISTORY if v.iter().all(u8::is_ascii_alphabetic) => {
            z.history = Some(v.iter().map(|&b| char::from(b)).collect());
        }
        zcrx_ie::SERVER_NAME..=zcrx_ie::DNS_ANSWER_COUNT => {
            let n = z.names.get_or_insert_with(Default::default);
            match id {
                zcrx_ie::SERVER_NAME => n.server_name = string(v),
                zcrx_ie::ALPN => n.alpn = string(v),
                zcrx_ie::JA4 => n.ja4 = string(v),
                zcrx_ie::TLS_CLIENT_VERSION => n.tls_client_version = number(v) as u16,
                zcrx_ie::TLS_VERSION => n.tls_version = number(v) as u16,
                zcrx_ie::TLS_CIPHER => n.tls_cipher = number(v) as u16,
                zcrx_ie::QUIC_VERSION => n.quic_version = number(v) as u32,
                zcrx_ie::DNS_QUERY_NAME => n.dns_query_name = string(v),
                zcrx_ie::DNS_QUERY_TYPE => n.dns_query_type = number(v) as u16,
                zcrx_ie::DNS_RESPONSE_CODE => n.dns_response_code = number(v) as u8,
                _ => n.dns_answer_count = number(v) as u16,
            }
        }
        _ => {}
    }
}

fn set_field(f: &mut ExportedFlow, id: u16, pen: u32, v: &[u8]) {
    let rev = usize::from(pen == REVERSE_PEN);
    if pen != 0 && pen != REVERSE_PEN {
        return;
    }
    let addr = |v: &[u8]| match v.len() {
        4 => Some(IpAddr::V4(Ipv4Addr::from(be(v) as u32))),
        16 => {
            let a: [u8; 16] = v.try_into().ok()?;
            Some(IpAddr::V6(Ipv6Addr::from(a)))
        }
        _ => None,
    };
    let n = || if v.len() <= 8 { be(v) } else { 0 };
    match (id, rev) {
        (ie::OCTET_DELTA_COUNT, r) => f.octets[r] = n(),
        (ie::PACKET_DELTA_COUNT, r) => f.packets[r] = n(),
        (ie::TCP_CONTROL_BITS, r) => f.tcp_flags[r] = n() as u16,
        (_, 1) => {}
        (ie::PROTOCOL_IDENTIFIER, _) => f.proto = n() as u8,
        (ie::SOURCE_TRANSPORT_PORT, _) => f.sport = n() as u16,
        (ie::DESTINATION_TRANSPORT_PORT, _) => f.dport = n() as u16,
        (ie::SOURCE_IPV4_ADDRESS | ie::SOURCE_IPV6_ADDRESS, _) => f.src = addr(v),
        (ie::DESTINATION_IPV4_ADDRESS | ie::DESTINATION_IPV6_ADDRESS, _) => f.dst = addr(v),
        (ie::ICMP_TYPE_CODE_IPV4 | ie::ICMP_TYPE_CODE_IPV6, _) => {
            f.icmp_type_code = Some(n() as u16)
        }
        (ie::FLOW_START_MILLISECONDS, _) => f.start_ms = n(),
        (ie::FLOW_END_MILLISECONDS, _) => f.end_ms = n(),
        (ie::FLOW_END_REASON, _) => f.end_reason = n() as u8,
        (ie::VLAN_ID, _) => f.vlan = Some(n() as u16),
        _ => {}
    }
}
