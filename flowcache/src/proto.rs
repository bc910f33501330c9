//! Protocol numbers: the one table the extractor, the flow table and the printers use (IANA
//! "Assigned Internet Protocol Numbers"). Header layouts are in [`crate::wire`].

/// IP protocol numbers (IPv4 `protocol`, IPv6 `next header`).
pub mod ipproto {
    /// IPv6 hop-by-hop options (RFC 8200 §4.3).
    pub const HOPOPT: u8 = 0;
    /// ICMP.
    pub const ICMP: u8 = 1;
    /// TCP.
    pub const TCP: u8 = 6;
    /// UDP.
    pub const UDP: u8 = 17;
    /// DCCP (RFC 4340).
    pub const DCCP: u8 = 33;
    /// IPv6 routing header.
    pub const ROUTING: u8 = 43;
    /// IPv6 fragment header.
    pub const FRAGMENT: u8 = 44;
    /// Authentication header (RFC 4302).
    pub const AH: u8 = 51;
    /// ICMPv6.
    pub const ICMPV6: u8 = 58;
    /// IPv6 destination options.
    pub const DSTOPTS: u8 = 60;
    /// Mobility header (RFC 6275).
    pub const MOBILITY: u8 = 135;
    /// UDP-Lite (RFC 3828).
    pub const UDPLITE: u8 = 136;
    /// SCTP (RFC 9260).
    pub const SCTP: u8 = 132;
    /// Host Identity Protocol (RFC 7401).
    pub const HIP: u8 = 139;
    /// Shim6 (RFC 5533).
    pub const SHIM6: u8 = 140;
}

/// The protocols whose ports (ICMP: type and code) the extractor reads, with their usual
/// names.
pub const NAMES: [(u8, &str); 7] = [
    (ipproto::ICMP, "icmp"),
    (ipproto::TCP, "tcp"),
    (ipproto::UDP, "udp"),
    (ipproto::DCCP, "dccp"),
    (ipproto::ICMPV6, "icmp6"),
    (ipproto::SCTP, "sctp"),
    (ipproto::UDPLITE, "udplite"),
];
