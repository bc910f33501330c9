//! The templates: which elements each kind of record carries, in which order, and the
//! lengths that follow from them.

use super::message::{HEADER_LEN, SET_HEADER};
use super::{ie, zcrx_ie, REVERSE_PEN, ZCRX_PEN};
use crate::tcp_state::HISTORY_MAX;
use crate::FlowStats;

/// An element length that says "variable" (RFC 7011 §7).
pub(super) const VARIABLE: u16 = 0xffff;

/// One field of a template: element id, length, enterprise number (0 for IANA's).
type Field = (u16, u16, u32);

/// The fields of template `variant` (bit 0 IPv6, bit 1 ICMP, bit 2 VLAN, bit 3 TCP state,
/// bit 4 names, bit 5 one direction ([`UNI`]), bit 6 interfaces ([`IFACES`])), into `out`;
/// returns how many.
pub(super) fn template_fields(variant: u16, out: &mut [Field; MAX_FIELDS]) -> usize {
    let (v6, icmp, vlan) = (variant & 1 != 0, variant & 2 != 0, variant & 4 != 0);
    let (tcp_state, names) = (variant & 8 != 0, variant & NAMES != 0);
    let (uni, ifaces) = (variant & UNI != 0, variant & IFACES != 0);
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
    if !uni {
        push((ie::OCTET_DELTA_COUNT, 8, REVERSE_PEN));
        push((ie::PACKET_DELTA_COUNT, 8, REVERSE_PEN));
    }
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
    if ifaces {
        push((ie::INGRESS_INTERFACE, 4, 0));
        push((ie::EGRESS_INTERFACE, 4, 0));
        push((ie::FLOW_DIRECTION, 1, 0));
    }
    // Reverse before forward: nfdump 1.7.1 reads a reverse element it has no reverse mapping
    // for as the forward one, so the one that comes last wins there.
    if !uni {
        push((ie::TCP_CONTROL_BITS, 2, REVERSE_PEN));
    }
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
pub(super) const VARIANTS: [u16; 12] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13];
/// The variant bit of the names templates.
pub(super) const NAMES: u16 = 16;
/// The names templates: those of [`VARIANTS`] that are not ICMP, with the names elements
/// before their own. Sent only by an encoder that was given names.
pub(super) const NAMES_VARIANTS: [u16; 8] = [16, 17, 20, 21, 24, 25, 28, 29];
/// The variant bit of one-direction records: no reverse elements (a record per direction).
pub(super) const UNI: u16 = 32;
/// The variant bit of records with the interfaces: ingressInterface, egressInterface and
/// flowDirection.
pub(super) const IFACES: u16 = 64;
/// The most fields a template has.
pub(super) const MAX_FIELDS: usize = 37;
/// The options template that announces the sampling: its id (above every data template's).
pub(super) const SAMPLING_TEMPLATE: u16 = super::message::FIRST_TEMPLATE + 128;
/// The bytes the sampling announcement takes in a message: its options template set (set
/// header, template header with its scope count, two fields) and its data set (set header,
/// one record: the observation domain and the interval).
pub(super) const SAMPLING_LEN: usize = SET_HEADER + 6 + 2 * 4 + SET_HEADER + 8;
/// The bytes of the names' numbers in a record (tlsClientVersion to dnsAnswerCount, and
/// httpStatusCode).
pub(super) const NAMES_NUMBERS: usize = 2 + 2 + 2 + 4 + 2 + 1 + 2 + 2;
/// The names' strings in a record.
pub(super) const NAMES_TEXTS: usize = 7;

/// The most bytes the TCP state elements take: two length bytes, the longest state name
/// ("RSTOS0") and the longest history.
const TCP_STATE_MAX: usize = 2 + 6 + HISTORY_MAX;

/// Length of a data record of template `variant`, without its TCP state elements (which
/// vary).
pub(super) const fn record_len(variant: u16) -> usize {
    let (v6, icmp, vlan) = (variant & 1 != 0, variant & 2 != 0, variant & 4 != 0);
    let (uni, ifaces) = (variant & UNI != 0, variant & IFACES != 0);
    // Times, and the counters: both directions', or one.
    16 + if uni { 16 } else { 32 }
        + if v6 { 32 } else { 8 }
        + if icmp { 2 } else { 4 }
        + 1
        + if ifaces { 9 } else { 0 }
        + if uni { 2 } else { 4 }
        + 1
        + 20
        + if vlan { 2 } else { 0 }
}

/// The longest data record (IPv6 with ports, a VLAN id, the interfaces and the longest TCP
/// state).
pub const MAX_RECORD: usize = record_len(5 | IFACES) + TCP_STATE_MAX;

const _: () = {
    let mut v = 0;
    while v < VARIANTS.len() {
        let mut family = 0;
        while family <= UNI | IFACES {
            assert!(record_len(VARIANTS[v] | family) + TCP_STATE_MAX <= MAX_RECORD);
            family += UNI;
        }
        v += 1;
    }
};

/// Length of template `v` in a template set.
pub(super) fn template_len(v: u16) -> usize {
    let mut fields = [(0, 0, 0); MAX_FIELDS];
    let n = template_fields(v, &mut fields);
    4 + fields[..n]
        .iter()
        .map(|f| if f.2 != 0 { 8 } else { 4 })
        .sum::<usize>()
}

/// Length of the template set holding the twelve templates of records without names, of
/// `family` ([`UNI`], [`IFACES`] or both, or 0).
fn template_set_len(family: u16) -> usize {
    SET_HEADER
        + VARIANTS
            .iter()
            .map(|&v| template_len(v | family))
            .sum::<usize>()
}

/// The smallest message size that holds the templates and one record of any kind, for an
/// encoder of the default layout (biflows, no interfaces, no sampling).
pub fn min_message() -> usize {
    min_message_for(0, false)
}

/// The smallest message size for an encoder whose records are of `family`, with the
/// sampling announced (`sampled`) or not.
pub(super) fn min_message_for(family: u16, sampled: bool) -> usize {
    let longest = (0..=13u16)
        .map(|v| record_len(v | family))
        .max()
        .unwrap_or(0);
    HEADER_LEN
        + template_set_len(family)
        + if sampled { SAMPLING_LEN } else { 0 }
        + SET_HEADER
        + longest
        + TCP_STATE_MAX
}

/// The template a flow's record uses.
pub(super) fn variant(s: &FlowStats, tcp: bool) -> u16 {
    let key = &s.key;
    let v6 = key.is_ipv6();
    let icmp = key.proto() == if v6 { 58 } else { 1 };
    u16::from(v6)
        | u16::from(icmp) << 1
        | u16::from(key.vlan().is_some()) << 2
        | u16::from(tcp) << 3
}
