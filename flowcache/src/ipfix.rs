//! IPFIX export of flow records (RFC 7011), as biflows (RFC 5103): an encoder that turns
//! [`FlowRecord`]s into IPFIX messages, and a decoder for the messages it writes (for tests,
//! fuzzing and tools that read them back).
//!
//! No I/O: the encoder hands each finished message to the caller's closure, which sends it
//! over UDP, appends it to a file (RFC 5655: messages back to back), or keeps it. No
//! allocation after [`Encoder::new`]: the message buffer is allocated once at its maximum size.
//!
//! Records are oriented from the flow's initiator ([`FlowStats::oriented`]): source = the
//! first packet's sender; the responder's packets, octets and TCP flags go in the reverse
//! information elements (enterprise number 29305). Octets are whatever the flow table counted
//! (IP header and payload when fed [`crate::Extracted::ip_octets`], as RFC 7012 defines
//! octetDeltaCount). Eight templates cover IPv4/IPv6 x ports/ICMP type-code x untagged/VLAN:
//!
//! | IE (id, length) | |
//! |---|---|
//! | flowStartMilliseconds (152, 8), flowEndMilliseconds (153, 8) | the report period |
//! | octetDeltaCount (1, 8), packetDeltaCount (2, 8) | initiator -> responder |
//! | reverse octetDeltaCount, packetDeltaCount (29305/1, 29305/2, 8 each) | responder -> initiator |
//! | sourceIPv4Address (8, 4), destinationIPv4Address (12, 4), or sourceIPv6Address (27, 16), destinationIPv6Address (28, 16) | |
//! | sourceTransportPort (7, 2), destinationTransportPort (11, 2), or icmpTypeCodeIPv4 (32, 2) / icmpTypeCodeIPv6 (139, 2) | |
//! | protocolIdentifier (4, 1), reverse tcpControlBits (29305/6, 2), tcpControlBits (6, 2) | reverse first: nfdump 1.7 reads it as the forward element, so the forward must come last |
//! | flowEndReason (136, 1) | [`EndReason::ipfix_code`] |
//! | communityId (32473/1, 20) | the flow's [Community ID](crate::CommunityId) v1 digest, octetArray ([`Encoder::set_community_id_seed`], seed 0 unless set) |
//! | connState (32473/2, variable), history (32473/3, variable) | records given a TCP state ([`Encoder::encode_with_tcp`]): Zeek's conn_state and history strings ([`crate::tcp_state`]) |
//! | vlanId (58, 2) | tagged flows only |
//!
//! Twelve templates in all: the eight above, and the four of TCP (IPv4/IPv6 x untagged/VLAN)
//! with the two TCP state elements.
//!
//! # Names (feature `names`)
//!
//! A record given the flow's [`crate::names::Names`] ([`Encoder::encode_with_names`]) uses
//! one of eight more templates (those above that are not ICMP), which start with the names
//! elements, before the record's others. A name not found is an empty string (length 0), a
//! number not found 0: so a 0 may also mean "not found" (dnsResponseCode 0 is NOERROR, or no
//! response was read; tlsVersion 0, no ServerHello).
//!
//! | IE (id, length) | |
//! |---|---|
//! | serverName (32473/4, variable) | the TLS or QUIC ClientHello's server name (SNI) |
//! | alpn (32473/5, variable) | its ALPN protocols in the client's order, joined by `,` |
//! | ja4 (32473/6, variable) | its JA4 fingerprint |
//! | tlsClientVersion (32473/7, 2) | the highest version it offers (`supported_versions` without GREASE, else `legacy_version`; 0x0304 is TLS 1.3) |
//! | tlsVersion (32473/8, 2), tlsCipher (32473/9, 2) | the ServerHello's chosen version and cipher suite |
//! | quicVersion (32473/10, 4) | the QUIC version of the ClientHello's Initial (0: TLS over TCP) |
//! | dnsQueryName (32473/11, variable), dnsQueryType (32473/12, 2) | the DNS question (the query's, else the response's) |
//! | dnsResponseCode (32473/13, 1), dnsAnswerCount (32473/14, 2) | the DNS response's RCODE and ANCOUNT |
//! | httpRequestMethod (459, variable), httpRequestHost (460, variable), httpRequestTarget (461, variable) | the first HTTP/1.x request (IANA's elements) |
//! | httpStatusCode (457, 2) | the first HTTP/1.x response's status |
//!
//! Strings are UTF-8 (bytes that were not read as `?`), of variable length (RFC 7011 §7:
//! one length byte below 255, else 255 and two bytes). Each is at most what the flow's
//! payload budget held ([`crate::names::PAYLOAD_BUDGET`]); if a record would still not fit
//! in one message of [`EncoderConfig::max_message`] bytes, its longest strings are cut, on a
//! character boundary, to one length, the highest that fits: a record never spans messages.
//! From the first record given names on, the encoder sends its templates (all twenty) in
//! messages of their own, as many as they take, before the records; an encoder never given
//! names writes exactly the messages it wrote before names existed.
//! There is no IANA element for the Community ID, nor for the TCP state: it is an enterprise-specific element under
//! [`ZCRX_PEN`] (32473, IANA's Private Enterprise Number for documentation, RFC 5612: zcrx has
//! none of its own), numbered in [`zcrx_ie`]. communityId carries the 20-byte SHA-1 digest
//! (its string form is `"1:"` and the digest in base64); connState and history are strings
//! (ASCII) of variable length (RFC 7011 §7: one length byte). Collectors that do not know the element skip it
//! by its length (nfdump's nfcapd, pmacct's nfacctd).
//!
//! Every message that starts after a template refresh is due (the first, then every
//! [`EncoderConfig::template_every`] messages and every [`EncoderConfig::template_refresh_ms`] of
//! export time, RFC 7011 §8.4) begins with the template set. Sets are not padded (padding is
//! optional, §3.3.1); the sequence number counts the data records sent before the message
//! (§3.1).

use std::fmt;

use crate::tcp_state::HISTORY_MAX;
use crate::{EndReason, FlowRecord, FlowStats, TcpState};

/// IPFIX version number.
pub const VERSION: u16 = 10;
/// Enterprise number of RFC 5103's reverse information elements.
pub const REVERSE_PEN: u32 = 29305;
/// The enterprise number of zcrx's own information elements ([`zcrx_ie`]): 32473, the number
/// IANA reserves for documentation (RFC 5612), as zcrx has no registered one.
pub const ZCRX_PEN: u32 = 32473;
/// Message header length.
pub const HEADER_LEN: usize = 16;
/// Largest IPFIX message (the length field is 16 bits).
pub const MAX_MESSAGE: usize = 65_535;
/// Default maximum message size: a 1500-byte MTU less IPv6 (40) and UDP (8) headers, so a
/// message is one unfragmented datagram to an IPv4 or IPv6 collector.
pub const DEFAULT_MESSAGE: usize = 1452;

const SET_HEADER: usize = 4;
const TEMPLATE_SET_ID: u16 = 2;
const FIRST_TEMPLATE: u16 = 256;

/// Information element ids used here.
pub mod ie {
    /// octetDeltaCount.
    pub const OCTET_DELTA_COUNT: u16 = 1;
    /// packetDeltaCount.
    pub const PACKET_DELTA_COUNT: u16 = 2;
    /// protocolIdentifier.
    pub const PROTOCOL_IDENTIFIER: u16 = 4;
    /// tcpControlBits.
    pub const TCP_CONTROL_BITS: u16 = 6;
    /// sourceTransportPort.
    pub const SOURCE_TRANSPORT_PORT: u16 = 7;
    /// sourceIPv4Address.
    pub const SOURCE_IPV4_ADDRESS: u16 = 8;
    /// destinationTransportPort.
    pub const DESTINATION_TRANSPORT_PORT: u16 = 11;
    /// destinationIPv4Address.
    pub const DESTINATION_IPV4_ADDRESS: u16 = 12;
    /// sourceIPv6Address.
    pub const SOURCE_IPV6_ADDRESS: u16 = 27;
    /// destinationIPv6Address.
    pub const DESTINATION_IPV6_ADDRESS: u16 = 28;
    /// icmpTypeCodeIPv4.
    pub const ICMP_TYPE_CODE_IPV4: u16 = 32;
    /// vlanId.
    pub const VLAN_ID: u16 = 58;
    /// flowEndReason.
    pub const FLOW_END_REASON: u16 = 136;
    /// icmpTypeCodeIPv6.
    pub const ICMP_TYPE_CODE_IPV6: u16 = 139;
    /// flowStartMilliseconds.
    pub const FLOW_START_MILLISECONDS: u16 = 152;
    /// flowEndMilliseconds.
    pub const FLOW_END_MILLISECONDS: u16 = 153;
    /// httpStatusCode (unsigned16): the first HTTP/1.x response's status.
    pub const HTTP_STATUS_CODE: u16 = 457;
    /// httpRequestMethod (string): the first HTTP/1.x request's method.
    pub const HTTP_REQUEST_METHOD: u16 = 459;
    /// httpRequestHost (string): the first HTTP/1.x request's `Host` header.
    pub const HTTP_REQUEST_HOST: u16 = 460;
    /// httpRequestTarget (string): the first HTTP/1.x request's target.
    pub const HTTP_REQUEST_TARGET: u16 = 461;
}

/// zcrx's enterprise-specific information elements (enterprise number [`ZCRX_PEN`]).
pub mod zcrx_ie {
    /// communityId: the flow's Community ID v1, its 20-byte SHA-1 digest (octetArray, fixed
    /// length 20).
    pub const COMMUNITY_ID: u16 = 1;
    /// connState: a TCP connection's state in Zeek's vocabulary ("S0", "SF", "REJ", ...;
    /// [`crate::ConnState::name`]), string, variable length (2 to 6 bytes).
    pub const CONN_STATE: u16 = 2;
    /// history: a TCP connection's history letters in Zeek's vocabulary
    /// ([`crate::TcpState::history`]), string, variable length (0 to 16 bytes).
    pub const HISTORY: u16 = 3;
    /// serverName: the TLS or QUIC ClientHello's server name (SNI), string, variable length.
    pub const SERVER_NAME: u16 = 4;
    /// alpn: the ClientHello's ALPN protocols in the client's order, joined by `,`, string,
    /// variable length.
    pub const ALPN: u16 = 5;
    /// ja4: the ClientHello's JA4 fingerprint, string, variable length.
    pub const JA4: u16 = 6;
    /// tlsClientVersion: the highest version the ClientHello offers (`supported_versions`
    /// without GREASE, else its legacy version), unsigned16, the wire value (0x0304: TLS 1.3).
    pub const TLS_CLIENT_VERSION: u16 = 7;
    /// tlsVersion: the version the ServerHello chose, unsigned16.
    pub const TLS_VERSION: u16 = 8;
    /// tlsCipher: the cipher suite the ServerHello chose, unsigned16.
    pub const TLS_CIPHER: u16 = 9;
    /// quicVersion: the QUIC version the ClientHello came in, unsigned32.
    pub const QUIC_VERSION: u16 = 10;
    /// dnsQueryName: the DNS question's name (the query's, else the response's), string,
    /// variable length.
    pub const DNS_QUERY_NAME: u16 = 11;
    /// dnsQueryType: that question's QTYPE, unsigned16.
    pub const DNS_QUERY_TYPE: u16 = 12;
    /// dnsResponseCode: the DNS response's RCODE, unsigned8.
    pub const DNS_RESPONSE_CODE: u16 = 13;
    /// dnsAnswerCount: the DNS response's ANCOUNT, unsigned16.
    pub const DNS_ANSWER_COUNT: u16 = 14;
}

/// An element length that says "variable" (RFC 7011 §7).
const VARIABLE: u16 = 0xffff;

/// One field of a template: element id, length, enterprise number (0 for IANA's).
type Field = (u16, u16, u32);

/// The fields of template `variant` (bit 0 IPv6, bit 1 ICMP, bit 2 VLAN, bit 3 TCP state,
/// bit 4 names), into `out`;
/// returns how many.
fn template_fields(variant: u16, out: &mut [Field; MAX_FIELDS]) -> usize {
    let (v6, icmp, vlan) = (variant & 1 != 0, variant & 2 != 0, variant & 4 != 0);
    let (tcp_state, names) = (variant & 8 != 0, variant & NAMES != 0);
    let addr = if v6 { 16 } else { 4 };
    let mut n = 0;
    let mut push = |f: Field| {
        out[n] = f;
        n += 1;
    };
    // The names first: pmacct 1.7.7 tells repeated element ids apart by counting earlier
    // ones of the same id whatever their enterprise (its `ext_db_get_next_ie`), so ja4
    // (32473/6) after the reverse tcpControlBits (29305/6) would be its second "6" and a
    // custom primitive `field_type=32473:6` would never find it.
    if names {
        push((zcrx_ie::SERVER_NAME, VARIABLE, ZCRX_PEN));
        push((zcrx_ie::ALPN, VARIABLE, ZCRX_PEN));
        push((zcrx_ie::JA4, VARIABLE, ZCRX_PEN));
        push((zcrx_ie::TLS_CLIENT_VERSION, 2, ZCRX_PEN));
        push((zcrx_ie::TLS_VERSION, 2, ZCRX_PEN));
        push((zcrx_ie::TLS_CIPHER, 2, ZCRX_PEN));
        push((zcrx_ie::QUIC_VERSION, 4, ZCRX_PEN));
        push((zcrx_ie::DNS_QUERY_NAME, VARIABLE, ZCRX_PEN));
        push((zcrx_ie::DNS_QUERY_TYPE, 2, ZCRX_PEN));
        push((zcrx_ie::DNS_RESPONSE_CODE, 1, ZCRX_PEN));
        push((zcrx_ie::DNS_ANSWER_COUNT, 2, ZCRX_PEN));
        push((ie::HTTP_REQUEST_METHOD, VARIABLE, 0));
        push((ie::HTTP_REQUEST_HOST, VARIABLE, 0));
        push((ie::HTTP_REQUEST_TARGET, VARIABLE, 0));
        push((ie::HTTP_STATUS_CODE, 2, 0));
    }
    push((ie::FLOW_START_MILLISECONDS, 8, 0));
    push((ie::FLOW_END_MILLISECONDS, 8, 0));
    push((ie::OCTET_DELTA_COUNT, 8, 0));
    push((ie::PACKET_DELTA_COUNT, 8, 0));
    push((ie::OCTET_DELTA_COUNT, 8, REVERSE_PEN));
    push((ie::PACKET_DELTA_COUNT, 8, REVERSE_PEN));
    if v6 {
        push((ie::SOURCE_IPV6_ADDRESS, addr, 0));
        push((ie::DESTINATION_IPV6_ADDRESS, addr, 0));
    } else {
        push((ie::SOURCE_IPV4_ADDRESS, addr, 0));
        push((ie::DESTINATION_IPV4_ADDRESS, addr, 0));
    }
    match (icmp, v6) {
        (false, _) => {
            push((ie::SOURCE_TRANSPORT_PORT, 2, 0));
            push((ie::DESTINATION_TRANSPORT_PORT, 2, 0));
        }
        (true, false) => push((ie::ICMP_TYPE_CODE_IPV4, 2, 0)),
        (true, true) => push((ie::ICMP_TYPE_CODE_IPV6, 2, 0)),
    }
    push((ie::PROTOCOL_IDENTIFIER, 1, 0));
    // Reverse before forward: nfdump 1.7.1 reads a reverse element it has no reverse mapping
    // for as the forward one, so the one that comes last wins there.
    push((ie::TCP_CONTROL_BITS, 2, REVERSE_PEN));
    push((ie::TCP_CONTROL_BITS, 2, 0));
    push((ie::FLOW_END_REASON, 1, 0));
    push((zcrx_ie::COMMUNITY_ID, 20, ZCRX_PEN));
    if tcp_state {
        push((zcrx_ie::CONN_STATE, VARIABLE, ZCRX_PEN));
        push((zcrx_ie::HISTORY, VARIABLE, ZCRX_PEN));
    }
    if vlan {
        push((ie::VLAN_ID, 2, 0));
    }
    n
}

/// The templates: every combination of IPv6, ICMP and VLAN, and those of TCP (not ICMP) with
/// the TCP state; twelve, so that they fit one message in a 1500-byte MTU.
const VARIANTS: [u16; 12] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13];
/// The variant bit of the names templates.
const NAMES: u16 = 16;
/// The names templates: those of [`VARIANTS`] that are not ICMP, with the names elements
/// before their own. Sent only by an encoder that was given names.
const NAMES_VARIANTS: [u16; 8] = [16, 17, 20, 21, 24, 25, 28, 29];
/// The most fields a template has.
const MAX_FIELDS: usize = 34;
/// The bytes of the names' numbers in a record (tlsClientVersion to dnsAnswerCount, and
/// httpStatusCode).
const NAMES_NUMBERS: usize = 2 + 2 + 2 + 4 + 2 + 1 + 2 + 2;
/// The names' strings in a record.
const NAMES_TEXTS: usize = 7;

/// The most bytes the TCP state elements take: two length bytes, the longest state name
/// ("RSTOS0") and the longest history.
const TCP_STATE_MAX: usize = 2 + 6 + HISTORY_MAX;

/// Length of a data record of template `variant`, without its TCP state elements (which
/// vary).
const fn record_len(variant: u16) -> usize {
    let (v6, icmp, vlan) = (variant & 1 != 0, variant & 2 != 0, variant & 4 != 0);
    48 + if v6 { 32 } else { 8 }
        + if icmp { 2 } else { 4 }
        + 1
        + 2
        + 2
        + 1
        + 20
        + if vlan { 2 } else { 0 }
}

/// The longest data record (IPv6 with ports, a VLAN id and the longest TCP state).
pub const MAX_RECORD: usize = record_len(5) + TCP_STATE_MAX;

const _: () = {
    let mut v = 0;
    while v < VARIANTS.len() {
        assert!(record_len(VARIANTS[v]) + TCP_STATE_MAX <= MAX_RECORD);
        v += 1;
    }
};

/// Length of template `v` in a template set.
fn template_len(v: u16) -> usize {
    let mut fields = [(0, 0, 0); MAX_FIELDS];
    let n = template_fields(v, &mut fields);
    4 + fields[..n]
        .iter()
        .map(|f| if f.2 != 0 { 8 } else { 4 })
        .sum::<usize>()
}

/// Length of the template set holding the twelve templates of records without names.
fn template_set_len() -> usize {
    SET_HEADER + VARIANTS.iter().map(|&v| template_len(v)).sum::<usize>()
}

/// The smallest message size that holds the templates and one record of any kind.
pub fn min_message() -> usize {
    HEADER_LEN + template_set_len() + SET_HEADER + MAX_RECORD
}

/// The template a flow's record uses.
fn variant(s: &FlowStats, tcp: bool) -> u16 {
    let key = &s.key;
    let v6 = key.is_ipv6();
    let icmp = key.proto() == if v6 { 58 } else { 1 };
    u16::from(v6)
        | u16::from(icmp) << 1
        | u16::from(key.vlan().is_some()) << 2
        | u16::from(tcp) << 3
}

/// Encoder settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EncoderConfig {
    /// Observation domain id in every message header.
    pub observation_domain: u32,
    /// Largest message in bytes, header included: [`min_message()`]..=[`MAX_MESSAGE`].
    pub max_message: usize,
    /// Resend the templates when this many ms of export time passed since they were last
    /// sent (`None`: on the message count only).
    pub template_refresh_ms: Option<u64>,
    /// Resend the templates every this many messages (`None`: on time only).
    pub template_every: Option<u32>,
}

impl Default for EncoderConfig {
    fn default() -> Self {
        EncoderConfig {
            observation_domain: 0,
            max_message: DEFAULT_MESSAGE,
            template_refresh_ms: Some(60_000),
            template_every: Some(100),
        }
    }
}

/// A setting the encoder refuses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigError {
    /// `max_message` outside the valid range.
    MessageSize {
        /// What was asked.
        asked: usize,
        /// Smallest valid size.
        min: usize,
        /// Largest valid size.
        max: usize,
    },
    /// A template refresh of 0 ms or 0 messages.
    ZeroRefresh,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::MessageSize { asked, min, max } => write!(
                f,
                "IPFIX message size {asked}: must be {min}..={max} bytes (the templates and one record must fit, and the length field is 16 bits)"
            ),
            ConfigError::ZeroRefresh => {
                f.write_str("IPFIX template refresh of 0: give at least 1 s or 1 message")
            }
        }
    }
}

impl std::error::Error for ConfigError {}

/// Counters of an encoder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EncoderStats {
    /// Messages handed out.
    pub messages: u64,
    /// Data records in them.
    pub records: u64,
    /// Messages that carried the templates.
    pub template_messages: u64,
}

/// Builds IPFIX messages from flow records. See the [module docs](self).
#[derive(Debug, Clone)]
pub struct Encoder {
    config: EncoderConfig,
    buf: Vec<u8>,
    /// Open data set: (template id, offset of its header).
    set: Option<(u16, usize)>,
    /// Data records before the open message (the header's sequence number, mod 2^32).
    sequence: u32,
    records_in_message: u32,
    last_templates_ms: Option<u64>,
    messages_since_templates: u32,
    stats: EncoderStats,
    community_id_seed: u16,
    /// Names were given: the templates go in messages of their own, the names templates
    /// with them.
    names_on: bool,
}

impl Encoder {
    /// An encoder with `config`, or why the config is refused.
    pub fn new(config: EncoderConfig) -> Result<Encoder, ConfigError> {
        let min = min_message();
        if !(min..=MAX_MESSAGE).contains(&config.max_message) {
            return Err(ConfigError::MessageSize {
                asked: config.max_message,
                min,
                max: MAX_MESSAGE,
            });
        }
        if config.template_refresh_ms == Some(0) || config.template_every == Some(0) {
            return Err(ConfigError::ZeroRefresh);
        }
        Ok(Encoder {
            config,
            buf: Vec::with_capacity(config.max_message),
            set: None,
            sequence: 0,
            records_in_message: 0,
            last_templates_ms: None,
            messages_since_templates: 0,
            stats: EncoderStats::default(),
            community_id_seed: 0,
            names_on: false,
        })
    }

    /// The settings the encoder was created with.
    pub fn config(&self) -> &EncoderConfig {
        &self.config
    }

    /// Hashes the records' Community IDs with `seed` from now on (0 until set: the
    /// specification's default).
    pub fn set_community_id_seed(&mut self, seed: u16) {
        self.community_id_seed = seed;
    }

    /// The Community ID seed of the records.
    pub fn community_id_seed(&self) -> u16 {
        self.community_id_seed
    }

    /// Counters so far.
    pub fn stats(&self) -> EncoderStats {
        self.stats
    }

    /// Data records in the open message (not yet handed out): what the next message handed
    /// out by [`Encoder::flush`], or by an [`Encoder::encode`] that finds it full, holds.
    pub fn records_pending(&self) -> u32 {
        self.records_in_message
    }

    /// Adds `record` (exported at `now_ms`, ms since the Unix epoch) to the open message;
    /// when it does not fit, the open message is finished and handed to `out` first.
    pub fn encode(&mut self, record: &FlowRecord, now_ms: u64, out: &mut impl FnMut(&[u8])) {
        self.encode_with_tcp(record, None, now_ms, out);
    }

    /// [`Encoder::encode`], with the connection's TCP state (`None`: as `encode`, for a flow
    /// whose state was not followed): Zeek's conn_state and history in zcrx's connState and
    /// history elements. A state given for a flow that is not TCP is not exported.
    pub fn encode_with_tcp(
        &mut self,
        record: &FlowRecord,
        tcp: Option<&TcpState>,
        now_ms: u64,
        out: &mut impl FnMut(&[u8]),
    ) {
        self.encode_inner(record, tcp, None, now_ms, out);
    }

    /// [`Encoder::encode_with_tcp`], with the flow's names (`None`: as `encode_with_tcp`):
    /// the record uses a names template, the names elements first, then the others (see the
    /// [module docs](self)): a name not found is an empty string, a number not found 0. Names
    /// given for an ICMP flow are not exported.
    ///
    /// From the first names given on, the encoder sends its templates (the names templates
    /// too) in messages of their own, before the records; until then its messages are byte
    /// for byte those of an encoder never given names. A record's strings are cut (on a
    /// character boundary, the longest first) only if the record would not fit in a message
    /// of [`EncoderConfig::max_message`] bytes: so a record never spans messages.
    #[cfg(feature = "names")]
    pub fn encode_with_names(
        &mut self,
        record: &FlowRecord,
        tcp: Option<&TcpState>,
        names: Option<&crate::names::Names>,
        now_ms: u64,
        out: &mut impl FnMut(&[u8]),
    ) {
        let names = names.map(NameFields::new);
        self.encode_inner(record, tcp, names.as_ref(), now_ms, out);
    }

    fn encode_inner(
        &mut self,
        record: &FlowRecord,
        tcp: Option<&TcpState>,
        names: Option<&NameFields<'_>>,
        now_ms: u64,
        out: &mut impl FnMut(&[u8]),
    ) {
        let s = record.stats.oriented();
        let tcp = tcp.filter(|_| s.key.proto() == crate::ipproto::TCP);
        let base = variant(&s, tcp.is_some());
        let names = names.filter(|_| base & 2 == 0);
        if names.is_some() && !self.names_on {
            // The open message carries the templates without the names ones: send it, and
            // the templates, names ones included, before the next record.
            self.names_on = true;
            self.flush(now_ms, out);
            self.last_templates_ms = None;
        }
        let v = base | if names.is_some() { NAMES } else { 0 };
        let id = FIRST_TEMPLATE + v;
        let len =
            record_len(v) + tcp.map_or(0, |t| 2 + t.conn_state().name().len() + t.history().len());
        // The names' strings, cut to what a message without templates holds (the names
        // templates are sent in messages of their own).
        let room = self.config.max_message - HEADER_LEN - SET_HEADER;
        let cuts = names.map(|n| n.cuts(room - len));
        let len = len + cuts.map_or(0, |c| NameFields::part_len(&c));
        if !self.buf.is_empty() {
            let need = len
                + if self.open_set() == Some(id) {
                    0
                } else {
                    SET_HEADER
                };
            if self.buf.len() + need > self.config.max_message {
                self.finish(now_ms, out);
            }
        }
        if self.buf.is_empty() {
            self.start(now_ms, out);
        }
        if self.open_set() != Some(id) {
            self.close_set();
            self.set = Some((id, self.buf.len()));
            self.buf.extend_from_slice(&id.to_be_bytes());
            self.buf.extend_from_slice(&[0, 0]);
        }
        if let (Some(n), Some(cuts)) = (names, cuts) {
            n.write(&mut self.buf, &cuts);
        }
        write_record(&mut self.buf, &s, record.end, self.community_id_seed, tcp);
        debug_assert!(self.buf.len() <= self.config.max_message);
        self.records_in_message += 1;
    }

    /// Finishes the open message, if any, and hands it to `out` (e.g. on a timer, so that
    /// records do not wait for a full message, and at the end).
    pub fn flush(&mut self, now_ms: u64, out: &mut impl FnMut(&[u8])) {
        if !self.buf.is_empty() {
            self.finish(now_ms, out);
        }
    }

    /// Makes the next message start with the templates (e.g. for a new file or after the
    /// collector restarted).
    pub fn resend_templates(&mut self) {
        self.last_templates_ms = None;
    }

    fn open_set(&self) -> Option<u16> {
        self.set.map(|(id, _)| id)
    }

    fn templates_due(&self, now_ms: u64) -> bool {
        let Some(last) = self.last_templates_ms else {
            return true;
        };
        let by_time = self
            .config
            .template_refresh_ms
            .is_some_and(|r| now_ms.saturating_sub(last) >= r);
        let by_count = self
            .config
            .template_every
            .is_some_and(|n| self.messages_since_templates >= n);
        by_time || by_count
    }

    /// Opens a message: header (length, time and sequence filled in by `finish`), then the
    /// templates if due. Once names were given, due templates go first in messages of their
    /// own, as many as they need.
    fn start(&mut self, now_ms: u64, out: &mut impl FnMut(&[u8])) {
        let due = self.templates_due(now_ms);
        if due && self.names_on {
            let mut sent = 0;
            for v in VARIANTS.into_iter().chain(NAMES_VARIANTS) {
                let open = !self.buf.is_empty();
                if open && self.buf.len() + template_len(v) > self.config.max_message {
                    self.close_set();
                    self.finish(now_ms, out);
                    sent += 1;
                }
                if self.buf.is_empty() {
                    self.write_header();
                    self.set = Some((TEMPLATE_SET_ID, self.buf.len()));
                    self.buf.extend_from_slice(&TEMPLATE_SET_ID.to_be_bytes());
                    self.buf.extend_from_slice(&[0, 0]);
                }
                self.write_template(v);
            }
            self.finish(now_ms, out);
            sent += 1;
            self.last_templates_ms = Some(now_ms);
            self.messages_since_templates = 0;
            self.stats.template_messages += sent;
        }
        self.write_header();
        if due && !self.names_on {
            self.write_templates();
            self.last_templates_ms = Some(now_ms);
            self.messages_since_templates = 0;
            self.stats.template_messages += 1;
        }
    }

    fn write_header(&mut self) {
        self.buf.extend_from_slice(&VERSION.to_be_bytes());
        self.buf.extend_from_slice(&[0; HEADER_LEN - 2]);
    }

    fn write_templates(&mut self) {
        let start = self.buf.len();
        self.buf.extend_from_slice(&TEMPLATE_SET_ID.to_be_bytes());
        self.buf.extend_from_slice(&[0, 0]);
        for v in VARIANTS {
            self.write_template(v);
        }
        let len = (self.buf.len() - start) as u16;
        self.buf[start + 2..start + 4].copy_from_slice(&len.to_be_bytes());
    }

    /// Appends template `v` to the open template set.
    fn write_template(&mut self, v: u16) {
        let mut fields = [(0, 0, 0); MAX_FIELDS];
        let n = template_fields(v, &mut fields);
        self.buf
            .extend_from_slice(&(FIRST_TEMPLATE + v).to_be_bytes());
        self.buf.extend_from_slice(&(n as u16).to_be_bytes());
        for &(id, len, pen) in &fields[..n] {
            let id = if pen != 0 { id | 0x8000 } else { id };
            self.buf.extend_from_slice(&id.to_be_bytes());
            self.buf.extend_from_slice(&len.to_be_bytes());
            if pen != 0 {
                self.buf.extend_from_slice(&pen.to_be_bytes());
            }
        }
    }

    fn close_set(&mut self) {
        if let Some((_, at)) = self.set.take() {
            let len = (self.buf.len() - at) as u16;
            self.buf[at + 2..at + 4].copy_from_slice(&len.to_be_bytes());
        }
    }

    fn finish(&mut self, now_ms: u64, out: &mut impl FnMut(&[u8])) {
        self.close_set();
        let len = self.buf.len() as u16;
        self.buf[2..4].copy_from_slice(&len.to_be_bytes());
        self.buf[4..8].copy_from_slice(&((now_ms / 1000) as u32).to_be_bytes());
        self.buf[8..12].copy_from_slice(&self.sequence.to_be_bytes());
        self.buf[12..16].copy_from_slice(&self.config.observation_domain.to_be_bytes());
        out(&self.buf);
        self.sequence = self.sequence.wrapping_add(self.records_in_message);
        self.stats.messages += 1;
        self.stats.records += u64::from(self.records_in_message);
        self.records_in_message = 0;
        self.messages_since_templates += 1;
        self.buf.clear();
    }
}

/// Appends the data record of `s` (oriented) in the field order of template `v`.
#[inline]
fn write_record(
    buf: &mut Vec<u8>,
    s: &FlowStats,
    end: EndReason,
    seed: u16,
    tcp: Option<&TcpState>,
) {
    let v = variant(s, tcp.is_some());
    let mut r = [0u8; MAX_RECORD];
    let mut at = 0;
    let mut put = |bytes: &[u8]| {
        r[at..at + bytes.len()].copy_from_slice(bytes);
        at += bytes.len();
    };
    put(&(s.first_ns / 1_000_000).to_be_bytes());
    put(&(s.last_ns / 1_000_000).to_be_bytes());
    put(&s.bytes[0].to_be_bytes());
    put(&s.packets[0].to_be_bytes());
    put(&s.bytes[1].to_be_bytes());
    put(&s.packets[1].to_be_bytes());
    let k = &s.key;
    match (k.src(), k.dst()) {
        (std::net::IpAddr::V4(a), std::net::IpAddr::V4(b)) => {
            put(&a.octets());
            put(&b.octets());
        }
        (a, b) => {
            put(&ipv6_octets(a));
            put(&ipv6_octets(b));
        }
    }
    if v & 2 != 0 {
        put(&[k.sport() as u8, k.dport() as u8]);
    } else {
        put(&k.sport().to_be_bytes());
        put(&k.dport().to_be_bytes());
    }
    put(&[k.proto()]);
    put(&u16::from(s.tcp_flags[1]).to_be_bytes());
    put(&u16::from(s.tcp_flags[0]).to_be_bytes());
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
enum Text<'a> {
    One(&'a str),
    Joined(&'a [String]),
}

impl Text<'_> {
    fn len(&self) -> usize {
        match self {
            Text::One(s) => s.len(),
            Text::Joined(v) => v.iter().map(String::len).sum::<usize>() + v.len().saturating_sub(1),
        }
    }

    /// How many of its bytes to write for at most `cap`: all of them, or the most that end on
    /// a character boundary (and not on a list's separator).
    fn cut(&self, cap: usize) -> usize {
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
    fn write(&self, buf: &mut Vec<u8>, n: usize) {
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
struct NameFields<'a> {
    texts: [Text<'a>; NAMES_TEXTS],
    tls_client_version: u16,
    tls_version: u16,
    tls_cipher: u16,
    quic_version: u32,
    dns_query_type: u16,
    dns_response_code: u8,
    dns_answer_count: u16,
    http_status: u16,
}

impl<'a> NameFields<'a> {
    #[cfg(feature = "names")]
    fn new(n: &'a crate::names::Names) -> NameFields<'a> {
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
    fn cuts(&self, room: usize) -> [usize; NAMES_TEXTS] {
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
    fn part_len(cuts: &[usize; NAMES_TEXTS]) -> usize {
        NAMES_NUMBERS + cuts.iter().map(|&c| c + length_prefix(c)).sum::<usize>()
    }

    /// Appends the names part in the names templates' field order.
    fn write(&self, buf: &mut Vec<u8>, cuts: &[usize; NAMES_TEXTS]) {
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

pub mod decode;

#[cfg(all(test, feature = "names"))]
mod names_tests;
