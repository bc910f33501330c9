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
/// ingressInterface (unsigned32): the interface the packets were observed on.
pub const INGRESS_INTERFACE: u16 = 10;
/// sourceIPv4Address.
pub const SOURCE_IPV4_ADDRESS: u16 = 8;
/// destinationTransportPort.
pub const DESTINATION_TRANSPORT_PORT: u16 = 11;
/// egressInterface (unsigned32).
pub const EGRESS_INTERFACE: u16 = 14;
/// destinationIPv4Address.
pub const DESTINATION_IPV4_ADDRESS: u16 = 12;
/// sourceIPv6Address.
pub const SOURCE_IPV6_ADDRESS: u16 = 27;
/// destinationIPv6Address.
pub const DESTINATION_IPV6_ADDRESS: u16 = 28;
/// icmpTypeCodeIPv4.
pub const ICMP_TYPE_CODE_IPV4: u16 = 32;
/// samplingInterval (unsigned32): one packet in this many was selected (RFC 7012 §5.16.2,
/// deprecated there for the selector elements, but what collectors read: see the module
/// docs).
pub const SAMPLING_INTERVAL: u16 = 34;
/// vlanId.
pub const VLAN_ID: u16 = 58;
/// flowDirection (unsigned8): 0 ingress, 1 egress.
pub const FLOW_DIRECTION: u16 = 61;
/// flowEndReason.
pub const FLOW_END_REASON: u16 = 136;
/// icmpTypeCodeIPv6.
pub const ICMP_TYPE_CODE_IPV6: u16 = 139;
/// observationDomainId (unsigned32): the sampling announcement's scope.
pub const OBSERVATION_DOMAIN_ID: u16 = 149;
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
