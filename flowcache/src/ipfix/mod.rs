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
//! # Layouts for collectors that read no biflow, need interfaces, or scale sampled counts
//!
//! Three settings, each applying from the next message on (the open one goes out first,
//! and the next starts with the templates of the new layout):
//!
//! - [`Encoder::set_uniflow`]: a record per direction that has packets, without the
//!   reverse elements (RFC 5103's uniflows): the initiator's (source the initiator), then
//!   the responder's (source the responder; ICMP's type and code stay the flow's). For
//!   collectors that read forward elements only: goflow2 keeps a biflow's forward half,
//!   pmacct's nfacctd 1.7 and akvorado before 2.0.1 drop the reverse elements.
//! - [`Encoder::set_interfaces`]: ingressInterface (10, 4), egressInterface (14, 4) and
//!   flowDirection (61, 1; 0, ingress) after protocolIdentifier in every template: akvorado
//!   drops a flow whose two interfaces are 0, and names interfaces by exporter and index.
//! - [`Encoder::set_sampling_interval`]: with every template refresh, an options template
//!   (set 3) scoped by observationDomainId (149, 4) with samplingInterval (34, 4), and its
//!   one record: the domain and the interval. That exact shape is what every collector
//!   reads alike: goflow2 takes 305, 50 or 34 as 4 bytes; akvorado 34 or 50, or
//!   (305 + 306) / 305, which goflow2 reads apart; nfacctd 34 as 4 bytes; nfdump's nfcapd
//!   1.7.1 drops an options template with 35, or with 302/304 among its options. With no
//!   selector id in it or in the records, each applies it to every record of the exporter
//!   and domain. The records' counts stay those of the packets selected: the collector
//!   scales them back.
//!
//! The templates of these layouts take the ids of the ones above with bits 5 (one
//! direction) and 6 (interfaces) added; the announcement's is 384.
//!
//! Every message that starts after a template refresh is due (the first, then every
//! [`EncoderConfig::template_every`] messages and every [`EncoderConfig::template_refresh_ms`] of
//! export time, RFC 7011 §8.4) begins with the template set. Sets are not padded (padding is
//! optional, §3.3.1); the sequence number counts the data records sent before the message
//! (§3.1).
//!
//! [`FlowRecord`]: crate::FlowRecord
//! [`FlowStats::oriented`]: crate::FlowStats::oriented
//! [`EndReason::ipfix_code`]: crate::EndReason::ipfix_code

mod data_record;
pub mod decode;
mod encoder;
/// Information element ids used here.
pub mod ie;
mod message;
mod template;
/// zcrx's enterprise-specific information elements (enterprise number [`ZCRX_PEN`]).
pub mod zcrx_ie;

pub use encoder::{ConfigError, Encoder, EncoderConfig, EncoderStats};
pub use message::{DEFAULT_MESSAGE, HEADER_LEN, MAX_MESSAGE, REVERSE_PEN, VERSION, ZCRX_PEN};
pub use template::{min_message, MAX_RECORD};

#[cfg(test)]
mod layout_tests;
#[cfg(all(test, feature = "names"))]
mod names_tests;
