//! Community ID v1 (Corelight's "Community ID Flow Hashing" specification): one string per
//! flow that Zeek, Suricata, Arkime and the other tools that implement it give the same flow,
//! so that their records join.
//!
//! The hash is SHA-1 over: the seed (2 bytes, big-endian); the two addresses (4 or 16 bytes
//! each), the smaller (address, port) endpoint first; the IP protocol number (1 byte); one
//! zero byte; and, for TCP, UDP, SCTP, ICMP and ICMPv6 only, the two ports (2 bytes each,
//! big-endian, in the same order). Every other protocol (DCCP, UDP-Lite, GRE, ...) is hashed
//! without ports, as the reference implementation does. The string is "1:" and the digest in
//! standard base64 (30 characters).
//!
//! ICMP and ICMPv6 hash the type where ports go, and in the other port's place: for a type
//! that has a counterpart (echo request and reply, router solicitation and advertisement,
//! ...), the counterpart's type, so both directions of the exchange get one ID; for any
//! other type, the code, and the endpoints are not reordered (a one-way message).

use std::fmt;
use std::net::IpAddr;

use base64::Engine;
use sha1::{Digest, Sha1};

use crate::key::FlowKey;
use crate::proto::ipproto;

/// A flow's Community ID v1: the 20-byte SHA-1 digest; `Display` gives the specification's
/// string, `"1:"` and the digest in base64 (30 characters).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CommunityId([u8; 20]);

impl CommunityId {
    /// The length of the digest, in bytes.
    pub const LEN: usize = 20;
    /// The length of the string form ("1:" and 28 base64 characters).
    pub const STR_LEN: usize = 30;

    /// The ID with this digest (as IPFIX carries it).
    pub fn from_bytes(digest: [u8; 20]) -> Self {
        CommunityId(digest)
    }
    /// The digest.
    pub fn as_bytes(&self) -> &[u8; 20] {
        &self.0
    }
}

impl fmt::Display for CommunityId {
    /// `1:` and the digest in standard base64, e.g. `1:LQU9qZlK+B5F3KDmev6m5PMibrg=`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut b = [0u8; 28];
        let n = base64::engine::general_purpose::STANDARD
            .encode_slice(self.0, &mut b)
            .map_err(|_| fmt::Error)?;
        f.write_str("1:")?;
        // Base64 is ASCII.
        f.write_str(std::str::from_utf8(&b[..n]).map_err(|_| fmt::Error)?)
    }
}

impl fmt::Debug for CommunityId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// A string that is not a Community ID v1.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a Community ID v1 (\"1:\" and 28 base64 characters): {0:?}")]
pub struct BadCommunityId(String);

impl std::str::FromStr for CommunityId {
    type Err = BadCommunityId;

    /// The form `Display` writes.
    fn from_str(s: &str) -> Result<Self, BadCommunityId> {
        let bad = || BadCommunityId(s.to_string());
        let b64 = s.strip_prefix("1:").ok_or_else(bad)?;
        let mut out = [0u8; 21];
        let n = base64::engine::general_purpose::STANDARD
            .decode_slice(b64, &mut out)
            .map_err(|_| bad())?;
        let digest: [u8; 20] = out[..n].try_into().map_err(|_| bad())?;
        Ok(CommunityId(digest))
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for CommunityId {
    /// As the string `Display` writes.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// ICMP types with a counterpart (RFC 792, 950): echo, router advertisement and
/// solicitation, timestamp, information, address mask; request and reply each way.
const ICMP_PAIRS: [(u8, u8); 10] = [
    (8, 0),
    (0, 8),
    (13, 14),
    (14, 13),
    (15, 16),
    (16, 15),
    (10, 9),
    (9, 10),
    (17, 18),
    (18, 17),
];

/// ICMPv6 types with a counterpart (RFC 4443, 2710, 4861, 4620, 6275): echo, multicast
/// listener query and report, router and neighbour solicitation and advertisement, node
/// information (who-are-you) query and reply, home agent address discovery.
const ICMPV6_PAIRS: [(u8, u8); 12] = [
    (128, 129),
    (129, 128),
    (130, 131),
    (131, 130),
    (133, 134),
    (134, 133),
    (135, 136),
    (136, 135),
    (139, 140),
    (140, 139),
    (144, 145),
    (145, 144),
];

/// The port-like pair an ICMP message hashes as, and whether it is one-way.
fn icmp_ports(pairs: &[(u8, u8)], ty: u16, code: u16) -> ((u16, u16), bool) {
    match pairs.iter().find(|(t, _)| u16::from(*t) == ty) {
        Some((_, counterpart)) => ((ty, u16::from(*counterpart)), false),
        None => ((ty, code), true),
    }
}

fn octets(a: IpAddr) -> ([u8; 16], usize) {
    let mut b = [0u8; 16];
    match a {
        IpAddr::V4(a) => {
            b[..4].copy_from_slice(&a.octets());
            (b, 4)
        }
        IpAddr::V6(a) => (a.octets(), 16),
    }
}

impl FlowKey {
    /// The flow's Community ID v1 with `seed` (0 unless the tools that must agree chose
    /// another).
    ///
    /// For TCP, UDP, SCTP and the other port-less or two-way protocols either direction's
    /// key gives the same ID. An ICMP or ICMPv6 key must hold the type and code of the packet
    /// whose sender is its source: an extracted key, or a flow's [`FlowStats::oriented`]
    /// key (as [`FlowStats::community_id`] takes), not a canonical key whose ends were
    /// swapped. A later fragment's key (ports 0, [`FlowKey::is_later_fragment`]) is hashed
    /// as it is, with ports 0; the reference has no answer for a fragment without its
    /// transport header (Zeek and Suricata reassemble first). The VLAN id is not hashed.
    ///
    /// [`FlowStats::oriented`]: crate::FlowStats::oriented
    /// [`FlowStats::community_id`]: crate::FlowStats::community_id
    pub fn community_id(&self, seed: u16) -> CommunityId {
        let proto = self.proto();
        let (ports, one_way) = match proto {
            ipproto::TCP | ipproto::UDP | ipproto::SCTP => {
                (Some((self.sport(), self.dport())), false)
            }
            ipproto::ICMP => {
                let (p, one_way) = icmp_ports(&ICMP_PAIRS, self.sport(), self.dport());
                (Some(p), one_way)
            }
            ipproto::ICMPV6 => {
                let (p, one_way) = icmp_ports(&ICMPV6_PAIRS, self.sport(), self.dport());
                (Some(p), one_way)
            }
            _ => (None, false),
        };
        let (s, len) = octets(self.src());
        let (d, _) = octets(self.dst());
        let (s, d) = (&s[..len], &d[..len]);
        // The reference's order: ordered when one-way, or the source address is the smaller,
        // or the addresses are equal and the source port is the smaller.
        let ordered =
            one_way || s < d || (s == d && ports.is_some_and(|(sport, dport)| sport < dport));
        let (a, b, ports) = if ordered {
            (s, d, ports)
        } else {
            (d, s, ports.map(|(p, q)| (q, p)))
        };
        let mut h = Sha1::new();
        h.update(seed.to_be_bytes());
        h.update(a);
        h.update(b);
        h.update([proto, 0]);
        if let Some((p, q)) = ports {
            h.update(p.to_be_bytes());
            h.update(q.to_be_bytes());
        }
        CommunityId(h.finalize().into())
    }
}

#[cfg(test)]
mod test {
    use std::net::{Ipv4Addr, Ipv6Addr};

    use super::*;

    /// The specification's baselines (community-id-spec, baseline/baseline_deflt.json and
    /// baseline_seed1.json: what its reference script gives for every packet of its test
    /// captures, pcaps/combined.pcap.gz): seed, protocol, source, destination, the ports as
    /// the baseline lists them (ICMP: type and, for a type with a counterpart, the
    /// counterpart; (0, 0) where the protocol has none), the ID.
    type Vector = (
        u16,
        u8,
        &'static str,
        &'static str,
        (u16, u16),
        &'static str,
    );
    const BASELINE: [Vector; 46] = [
        (
            0,
            58,
            "fe80::200:86ff:fe05:80da",
            "fe80::260:97ff:fe07:69ea",
            (135, 136),
            "1:dGHyGvjMfljg6Bppwm3bg0LO8TY=",
        ),
        (
            0,
            58,
            "fe80::260:97ff:fe07:69ea",
            "fe80::200:86ff:fe05:80da",
            (136, 135),
            "1:dGHyGvjMfljg6Bppwm3bg0LO8TY=",
        ),
        (
            0,
            58,
            "fe80::260:97ff:fe07:69ea",
            "fe80::200:86ff:fe05:80da",
            (135, 136),
            "1:zavyT/cezQr1fmImYCwYnMXbgck=",
        ),
        (
            0,
            58,
            "fe80::200:86ff:fe05:80da",
            "fe80::260:97ff:fe07:69ea",
            (136, 135),
            "1:zavyT/cezQr1fmImYCwYnMXbgck=",
        ),
        (
            0,
            58,
            "3ffe:501:1800:2345::2",
            "3ffe:507:0:1:200:86ff:fe05:80da",
            (3, 0),
            "1:2ObVBgIn28oZvibYZhZMBgh7WdQ=",
        ),
        (
            0,
            58,
            "3ffe:501:410:0:2c0:dfff:fe47:33e",
            "3ffe:507:0:1:200:86ff:fe05:80da",
            (1, 4),
            "1:hLZd0XGWojozrvxqE0dWB1iM6R0=",
        ),
        (
            0,
            58,
            "3ffe:507:0:1:200:86ff:fe05:80da",
            "3ffe:501:0:1001::2",
            (128, 129),
            "1:+TW+HtLHvV1xnGhV1lv7XoJrqQg=",
        ),
        (
            0,
            58,
            "3ffe:501:0:1001::2",
            "3ffe:507:0:1:200:86ff:fe05:80da",
            (129, 128),
            "1:+TW+HtLHvV1xnGhV1lv7XoJrqQg=",
        ),
        (
            0,
            58,
            "fe80::200:86ff:fe05:80da",
            "ff02::2",
            (133, 134),
            "1:hO+sN4H+MG5MY/8hIrXPqc4ZQz0=",
        ),
        (
            0,
            58,
            "fe80::260:97ff:fe07:69ea",
            "ff02::1",
            (134, 133),
            "1:pkvHqCL88/tg1k4cPigmZXUtL00=",
        ),
        (
            0,
            1,
            "192.168.0.89",
            "192.168.0.1",
            (8, 0),
            "1:X0snYXpgwiv9TZtqg64sgzUn6Dk=",
        ),
        (
            0,
            1,
            "192.168.0.1",
            "192.168.0.89",
            (0, 8),
            "1:X0snYXpgwiv9TZtqg64sgzUn6Dk=",
        ),
        (
            0,
            1,
            "10.0.0.1",
            "10.0.0.2",
            (11, 0),
            "1:YHxtAirCG//0OzkcVAukqKQN9xM=",
        ),
        (
            0,
            6,
            "2001:470:e5bf:dead:4957:2174:e82c:4887",
            "2607:f8b0:400c:c03::1a",
            (63943, 25),
            "1:/qFaeAR+gFe1KYjMzVDsMv+wgU4=",
        ),
        (
            0,
            6,
            "2607:f8b0:400c:c03::1a",
            "2001:470:e5bf:dead:4957:2174:e82c:4887",
            (25, 63943),
            "1:/qFaeAR+gFe1KYjMzVDsMv+wgU4=",
        ),
        (
            0,
            132,
            "192.168.170.8",
            "192.168.170.56",
            (7, 7),
            "1:MP2EtRCAUIZvTw6MxJHLV7N7JDs=",
        ),
        (
            0,
            132,
            "192.168.170.56",
            "192.168.170.8",
            (7, 7),
            "1:MP2EtRCAUIZvTw6MxJHLV7N7JDs=",
        ),
        (
            0,
            6,
            "128.232.110.120",
            "66.35.250.204",
            (34855, 80),
            "1:LQU9qZlK+B5F3KDmev6m5PMibrg=",
        ),
        (
            0,
            6,
            "66.35.250.204",
            "128.232.110.120",
            (80, 34855),
            "1:LQU9qZlK+B5F3KDmev6m5PMibrg=",
        ),
        (
            0,
            17,
            "192.168.1.52",
            "8.8.8.8",
            (54585, 53),
            "1:d/FP5EW3wiY1vCndhwleRRKHowQ=",
        ),
        (
            0,
            17,
            "8.8.8.8",
            "192.168.1.52",
            (53, 54585),
            "1:d/FP5EW3wiY1vCndhwleRRKHowQ=",
        ),
        (
            0,
            46,
            "10.1.12.1",
            "10.1.12.2",
            (0, 0),
            "1:KHlLkgoJW7ifUTyTSgyVfkFHzKw=",
        ),
        (
            0,
            46,
            "10.1.12.2",
            "10.1.12.1",
            (0, 0),
            "1:KHlLkgoJW7ifUTyTSgyVfkFHzKw=",
        ),
        (
            1,
            58,
            "fe80::200:86ff:fe05:80da",
            "fe80::260:97ff:fe07:69ea",
            (135, 136),
            "1:kHa1FhMYIT6Ym2Vm2AOtoOARDzY=",
        ),
        (
            1,
            58,
            "fe80::260:97ff:fe07:69ea",
            "fe80::200:86ff:fe05:80da",
            (136, 135),
            "1:kHa1FhMYIT6Ym2Vm2AOtoOARDzY=",
        ),
        (
            1,
            58,
            "fe80::260:97ff:fe07:69ea",
            "fe80::200:86ff:fe05:80da",
            (135, 136),
            "1:2hSqmsDZ2kdcY9kbiUzOEBic0iM=",
        ),
        (
            1,
            58,
            "fe80::200:86ff:fe05:80da",
            "fe80::260:97ff:fe07:69ea",
            (136, 135),
            "1:2hSqmsDZ2kdcY9kbiUzOEBic0iM=",
        ),
        (
            1,
            58,
            "3ffe:501:1800:2345::2",
            "3ffe:507:0:1:200:86ff:fe05:80da",
            (3, 0),
            "1:lVEtCZpYu84Xqaa++3lXFyuu2n4=",
        ),
        (
            1,
            58,
            "3ffe:501:410:0:2c0:dfff:fe47:33e",
            "3ffe:507:0:1:200:86ff:fe05:80da",
            (1, 4),
            "1:W8MHwXpWzpoSTD+cGcaJr4u0ys8=",
        ),
        (
            1,
            58,
            "3ffe:507:0:1:200:86ff:fe05:80da",
            "3ffe:501:0:1001::2",
            (128, 129),
            "1:GfZxjAkDk2MkegpBYHV6tadtFXQ=",
        ),
        (
            1,
            58,
            "3ffe:501:0:1001::2",
            "3ffe:507:0:1:200:86ff:fe05:80da",
            (129, 128),
            "1:GfZxjAkDk2MkegpBYHV6tadtFXQ=",
        ),
        (
            1,
            58,
            "fe80::200:86ff:fe05:80da",
            "ff02::2",
            (133, 134),
            "1:L7Ka0ZMYu+J3bL4ulW2PrqyXNo8=",
        ),
        (
            1,
            58,
            "fe80::260:97ff:fe07:69ea",
            "ff02::1",
            (134, 133),
            "1:K/ee5UCqAMAQXDorP5nSa2CGLjc=",
        ),
        (
            1,
            1,
            "192.168.0.89",
            "192.168.0.1",
            (8, 0),
            "1:03g6IloqVBdcZlPyX8r0hgoE7kA=",
        ),
        (
            1,
            1,
            "192.168.0.1",
            "192.168.0.89",
            (0, 8),
            "1:03g6IloqVBdcZlPyX8r0hgoE7kA=",
        ),
        (
            1,
            1,
            "10.0.0.1",
            "10.0.0.2",
            (11, 0),
            "1:XjUibYHaafLQ3pxQeiMI8g25q20=",
        ),
        (
            1,
            6,
            "2001:470:e5bf:dead:4957:2174:e82c:4887",
            "2607:f8b0:400c:c03::1a",
            (63943, 25),
            "1:eJYTW6AOzFLlSUoESovMjnu7rMw=",
        ),
        (
            1,
            6,
            "2607:f8b0:400c:c03::1a",
            "2001:470:e5bf:dead:4957:2174:e82c:4887",
            (25, 63943),
            "1:eJYTW6AOzFLlSUoESovMjnu7rMw=",
        ),
        (
            1,
            132,
            "192.168.170.8",
            "192.168.170.56",
            (7, 7),
            "1:5w3ZRjeKBzqT3zsaEECDGjUbYeg=",
        ),
        (
            1,
            132,
            "192.168.170.56",
            "192.168.170.8",
            (7, 7),
            "1:5w3ZRjeKBzqT3zsaEECDGjUbYeg=",
        ),
        (
            1,
            6,
            "128.232.110.120",
            "66.35.250.204",
            (34855, 80),
            "1:3V71V58M3Ksw/yuFALMcW0LAHvc=",
        ),
        (
            1,
            6,
            "66.35.250.204",
            "128.232.110.120",
            (80, 34855),
            "1:3V71V58M3Ksw/yuFALMcW0LAHvc=",
        ),
        (
            1,
            17,
            "192.168.1.52",
            "8.8.8.8",
            (54585, 53),
            "1:Q9We8WO3piVF8yEQBNJF4uiSVrI=",
        ),
        (
            1,
            17,
            "8.8.8.8",
            "192.168.1.52",
            (53, 54585),
            "1:Q9We8WO3piVF8yEQBNJF4uiSVrI=",
        ),
        (
            1,
            46,
            "10.1.12.1",
            "10.1.12.2",
            (0, 0),
            "1:rYir8gphR31noO9iDRQmF/BteEI=",
        ),
        (
            1,
            46,
            "10.1.12.2",
            "10.1.12.1",
            (0, 0),
            "1:rYir8gphR31noO9iDRQmF/BteEI=",
        ),
    ];

    #[test]
    fn specification_baselines() {
        for (seed, proto, s, d, (sport, dport), want) in BASELINE {
            let key = match (s.parse::<IpAddr>().unwrap(), d.parse::<IpAddr>().unwrap()) {
                (IpAddr::V4(s), IpAddr::V4(d)) => FlowKey::v4(s, d, proto, sport, dport),
                (IpAddr::V6(s), IpAddr::V6(d)) => FlowKey::v6(s, d, proto, sport, dport),
                _ => unreachable!("one family a tuple"),
            };
            assert_eq!(
                key.community_id(seed).to_string(),
                want,
                "{key} seed {seed}"
            );
        }
    }

    #[test]
    fn string_round_trip_and_both_directions() {
        let k = FlowKey::v4(
            Ipv4Addr::new(198, 18, 0, 1),
            Ipv4Addr::new(198, 18, 0, 2),
            6,
            1,
            2,
        );
        let id = k.community_id(0);
        assert_eq!(k.reversed().community_id(0), id);
        assert_eq!(id.to_string().len(), CommunityId::STR_LEN);
        assert_eq!(id.to_string().parse::<CommunityId>(), Ok(id));
        assert_eq!(CommunityId::from_bytes(*id.as_bytes()), id);
        assert!("2:abc".parse::<CommunityId>().is_err());
        assert!("1:AAAA".parse::<CommunityId>().is_err());
        assert_ne!(k.community_id(1), id);
        // A one-way ICMP message keeps its direction.
        let unreach = FlowKey::v6(Ipv6Addr::LOCALHOST, Ipv6Addr::UNSPECIFIED, 58, 1, 4);
        assert_ne!(unreach.community_id(0), unreach.reversed().community_id(0));
    }
}
