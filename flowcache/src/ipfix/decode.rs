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

/// Decodes messages, remembering templates per observation domain.
#[derive(Debug, Default, Clone)]
pub struct Decoder {
    templates: HashMap<(u32, u16), Vec<Field>>,
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
            match id {
                2 => out.templates += self.template_set(header.domain, body)?,
                0..=255 => {} // options templates and reserved ids: not read here
                _ => match self.templates.get(&(header.domain, id)) {
                    Some(fields) => data_set(id, fields, body, &mut out, zcrx.as_deref_mut()),
                    None => out.unknown_sets += 1,
                },
            }
            at += len;
        }
        Ok(out)
    }

    fn template_set(&mut self, domain: u32, mut b: &[u8]) -> Result<usize, DecodeError> {
        let mut n = 0;
        // Padding (fewer bytes than a template header) may end the set.
        while b.len() >= 4 {
            let id = be16(b, 0)?;
            let count = usize::from(be16(b, 2)?);
            if id < 256 {
                return Err(DecodeError::Template);
            }
            b = &b[4..];
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
                b = &b[used..];
            }
            self.keep(domain, id, fields)?;
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

    /// Templates held, in all.
    pub fn templates(&self) -> usize {
        self.templates.len()
    }
}

/// Reads every record of a data set; stops at padding (a remainder shorter than a record).
/// Past [`MAX_RECORDS_PER_MESSAGE`] records in the message, counts them instead.
fn data_set(
    template: u16,
    fields: &[Field],
    mut b: &[u8],
    out: &mut Message,
    mut zcrx: Option<&mut Vec<ZcrxElements>>,
) {
    'records: while !b.is_empty() {
        let mut f = ExportedFlow {
            template,
            ..Default::default()
        };
        let mut z = ZcrxElements::default();
        for &(id, len, pen) in fields {
            let (value, used) = if len == 0xffff {
                // Variable length: one byte, or 255 and two more (RFC 7011 §7).
                let Some(&first) = b.first() else {
                    break 'records;
                };
                let (l, hdr) = if first < 255 {
                    (usize::from(first), 1)
                } else {
                    let Ok(l) = be16(b, 1) else { break 'records };
                    (usize::from(l), 3)
                };
                match b.get(hdr..hdr + l) {
                    Some(v) => (v, hdr + l),
                    None => break 'records,
                }
            } else {
                match b.get(..usize::from(len)) {
                    Some(v) => (v, usize::from(len)),
                    None => break 'records,
                }
            };
            if pen == ZCRX_PEN {
                set_zcrx(&mut z, id, value);
            } else {
                set_field(&mut f, id, pen, value);
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
}

/// One of zcrx's elements; one of another length than its own is skipped.
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
