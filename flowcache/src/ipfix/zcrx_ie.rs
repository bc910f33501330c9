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
