//! A message's framing: the version, header and set lengths, the template ids, and the
//! enterprise numbers of the elements that are not IANA's.

/// IPFIX version number.
pub const VERSION: u16 = 10;
/// Enterprise number of RFC 5103's reverse information elements.
pub const REVERSE_PEN: u32 = 29305;
/// The enterprise number of zcrx's own information elements
/// ([`zcrx_ie`](crate::ipfix::zcrx_ie)): 32473, the number IANA reserves for documentation
/// (RFC 5612), as zcrx has no registered one.
pub const ZCRX_PEN: u32 = 32473;
/// Message header length.
pub const HEADER_LEN: usize = 16;
/// Largest IPFIX message (the length field is 16 bits).
pub const MAX_MESSAGE: usize = 65_535;
/// Default maximum message size: a 1500-byte MTU less IPv6 (40) and UDP (8) headers, so a
/// message is one unfragmented datagram to an IPv4 or IPv6 collector.
pub const DEFAULT_MESSAGE: usize = 1452;

pub(super) const SET_HEADER: usize = 4;
pub(super) const TEMPLATE_SET_ID: u16 = 2;
pub(super) const FIRST_TEMPLATE: u16 = 256;
